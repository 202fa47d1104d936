package serve

// ApiVersions, key 18: v0-v4 (any version is answered, KIP-511).
//
// Version notes (ApiVersionsRequest.json):
//   - v0-v2: the same request; v1 adds ThrottleMillis to the response.
//   - v3: flexible; ClientSoftwareName and ClientSoftwareVersion (KIP-511),
//     kept for the request log; the response header stays v0 whatever the
//     version, so that a client can always read the answer.
//   - v4: KAFKA-17011 (SupportedFeatures may have MinVersion 0).
//   - v5 (KIP-1242) is not served: franz-go opens with it and, answered
//     with the v0 body, UNSUPPORTED_VERSION and only ApiVersions' own
//     range, retries with v4 (given every key, franz-go takes the v0 table
//     and so no finalized features: no transactions v2).
//
// What is advertised was measured against the clients installable here:
//   - Produce starts at 0 although v0-v2 are refused: librdkafka 2.0.2
//     compresses with gzip, snappy and lz4 only when the range includes 0
//     (Kafka 4.0 advertises 0 for the same reason, KAFKA-18659), and
//     librdkafka enables the v2 record format only when Produce (∋3) and
//     Fetch (∋4) are advertised, so a read-only server advertises Produce
//     too and answers it with an error.
//   - The group keys are served from v0 whatever a client negotiated:
//     kafka-go hard-codes FindCoordinator v0, JoinGroup v2,
//     SyncGroup/Heartbeat/LeaveGroup v0, OffsetCommit v2, OffsetFetch v1.

import "github.com/twmb/franz-go/pkg/kmsg"

func init() { register(apiVersionsKey, 0, 4, (*conn).handleApiVersions) }

// Error codes used directly (Errors.java).
const (
	errUnsupportedVersion = 35
)

const apiVersionsKey = 18

func apiVersionsResponse(version int16) *kmsg.ApiVersionsResponse {
	resp := kmsg.NewPtrApiVersionsResponse()
	resp.Version = version
	for _, a := range served() {
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		resp.ApiKeys = append(resp.ApiKeys, k)
	}
	if version >= 3 {
		// transaction.version 2 (KIP-890's transactions v2), finalized
		// as a Kafka 4 cluster finalizes it: clients (kgo) take the
		// epoch-bumping EndTxn and the implicit partition adds from it.
		sf := kmsg.NewApiVersionsResponseSupportedFeature()
		sf.Name, sf.MinVersion, sf.MaxVersion = "transaction.version", 0, serverTransactionVersion
		ff := kmsg.NewApiVersionsResponseFinalizedFeature()
		ff.Name, ff.MinVersionLevel, ff.MaxVersionLevel = "transaction.version", serverTransactionVersion, serverTransactionVersion
		resp.SupportedFeatures = append(resp.SupportedFeatures, sf)
		resp.FinalizedFeatures = append(resp.FinalizedFeatures, ff)
		resp.FinalizedFeaturesEpoch = 1
	}
	return resp
}

// handleApiVersions answers with the table; v3+ carries the client's
// software name and version, kept for the request log. A version outside
// the table's (parseRequest leaves it undecoded) gets the v0 body with
// UNSUPPORTED_VERSION and ApiVersions' own range only, so the client
// retries with a version served (KIP-511; ApiVersionsRequest's
// getErrorResponse).
func (cn *conn) handleApiVersions(r *kmsg.ApiVersionsRequest) (kmsg.Response, error) {
	if a, ok := supported(apiVersionsKey, r.Version); !ok {
		resp := kmsg.NewPtrApiVersionsResponse()
		resp.ErrorCode = errUnsupportedVersion
		k := kmsg.NewApiVersionsResponseApiKey()
		k.ApiKey, k.MinVersion, k.MaxVersion = a.key, a.min, a.max
		resp.ApiKeys = append(resp.ApiKeys, k)
		return resp, nil
	}
	if r.Version >= 3 {
		cn.client = clientInfo{software: r.ClientSoftwareName, version: r.ClientSoftwareVersion}
	}
	return apiVersionsResponse(r.Version), nil
}
