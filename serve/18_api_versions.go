package serve

import "github.com/twmb/franz-go/pkg/kmsg"

// Error codes used directly (Errors.java).
const (
	errUnsupportedVersion = 35
)

const apiVersionsKey = 18

// apiRange is one advertised API.
type apiRange struct {
	key, min, max int16
	// acceptFrom is the lowest version accepted: below min for keys whose
	// clients send lower versions whatever is advertised (kafka-go
	// hard-codes FindCoordinator v0, JoinGroup v2, SyncGroup/Heartbeat/
	// LeaveGroup v0, OffsetCommit v2, OffsetFetch v1 and ignores the
	// advertised minimum).
	acceptFrom int16
}

// apis is exactly what ApiVersions advertises; the survey of the clients
// installable here measured why each range is what it is:
//   - Produce starts at 0 although v0-v2 are refused: librdkafka 2.0.2
//     compresses with gzip, snappy and lz4 only when the range includes 0
//     (Kafka 4.0 advertises 0 for the same reason, KAFKA-18659), and
//     librdkafka enables the v2 record format only when Produce (∋3) and
//     Fetch (∋4) are advertised, so a read-only server advertises Produce
//     too and answers it with an error.
//   - Fetch stops at 12: v13+ address topics by id only.
//   - ApiVersions stops at 4; franz-go's v5 gets the KIP-511 fallback.
var apis = []apiRange{
	{key: 0, min: 0, max: 12, acceptFrom: 3}, // Produce
	{key: 1, min: 4, max: 12, acceptFrom: 4}, // Fetch
	{key: 2, min: 0, max: 10, acceptFrom: 0}, // ListOffsets
	{key: 3, min: 0, max: 12, acceptFrom: 0}, // Metadata
	{key: 8, min: 0, max: 9, acceptFrom: 0},  // OffsetCommit
	{key: 9, min: 0, max: 9, acceptFrom: 0},  // OffsetFetch
	{key: 10, min: 0, max: 6, acceptFrom: 0}, // FindCoordinator
	{key: 11, min: 0, max: 9, acceptFrom: 0}, // JoinGroup
	{key: 12, min: 0, max: 4, acceptFrom: 0}, // Heartbeat
	{key: 13, min: 0, max: 5, acceptFrom: 0}, // LeaveGroup
	{key: 14, min: 0, max: 5, acceptFrom: 0}, // SyncGroup
	{key: 18, min: 0, max: 4, acceptFrom: 0}, // ApiVersions
	{key: 22, min: 0, max: 5, acceptFrom: 0}, // InitProducerId
}

// supported reports whether a request at this version is decoded and
// answered. Produce v0-v2 are decoded only to be refused (see 00_produce.go).
func supported(key, version int16) (apiRange, bool) {
	for _, a := range apis {
		if a.key == key {
			lo := a.acceptFrom
			if key == 0 {
				lo = 0
			}
			return a, version >= lo && version <= a.max
		}
	}
	return apiRange{}, false
}

func apiVersionsResponse(version int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = version
	for _, a := range apis {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	return resp
}

// handleApiVersions answers with the table; v3+ carries the client's
// software name and version, kept for the request log.
func (cn *conn) handleApiVersions(r *kmsg.ApiVersionsRequest) kmsg.Response {
	if r.Version >= 3 {
		cn.client = clientInfo{software: r.ClientSoftwareName, version: r.ClientSoftwareVersion}
	}
	return apiVersionsResponse(r.Version)
}
