package internaltopic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
)

// jsonName is the Kafka JSON name of a typed field: the Go name with its
// first letter lowered and the Go initialism ID spelt Id (BrokerID is
// brokerId, ID is id).
func jsonName(goName string) string {
	n := strings.ReplaceAll(goName, "ID", "Id")
	if n == "Id" || n == "Ids" {
		return strings.ToLower(n)
	}
	return strings.ToLower(n[:1]) + n[1:]
}

// sameAsJSON compares a typed value with the JSON the text decoder printed
// for the same bytes, field by field; keys absent from the JSON (tagged
// fields at their default, fields not in the version) are not compared.
func sameAsJSON(t *testing.T, where string, typed reflect.Value, js any) {
	t.Helper()
	for typed.Kind() == reflect.Pointer {
		if typed.IsNil() {
			if js != nil {
				t.Errorf("%s: typed nil, JSON %v", where, js)
			}
			return
		}
		typed = typed.Elem()
	}
	switch typed.Kind() {
	case reflect.Struct:
		obj, ok := js.(map[string]any)
		if !ok {
			t.Errorf("%s: JSON %v is not an object", where, js)
			return
		}
		seen := 0
		for i := 0; i < typed.NumField(); i++ {
			name := jsonName(typed.Type().Field(i).Name)
			v, ok := obj[name]
			if !ok {
				continue
			}
			seen++
			sameAsJSON(t, where+"."+name, typed.Field(i), v)
		}
		if seen != len(obj) {
			t.Errorf("%s: the typed value has %d of the JSON's %d fields (%v)", where, seen, len(obj), obj)
		}
	case reflect.Slice:
		if typed.Type().Elem().Kind() == reflect.Uint8 { // bytes
			if got := base64.StdEncoding.EncodeToString(typed.Bytes()); got != js {
				t.Errorf("%s: typed %s, JSON %v", where, got, js)
			}
			return
		}
		arr, ok := js.([]any)
		if typed.IsNil() {
			if js != nil {
				t.Errorf("%s: typed nil, JSON %v", where, js)
			}
			return
		}
		if !ok || len(arr) != typed.Len() {
			t.Errorf("%s: typed %v, JSON %v", where, typed.Interface(), js)
			return
		}
		for i := range arr {
			sameAsJSON(t, fmt.Sprintf("%s[%d]", where, i), typed.Index(i), arr[i])
		}
	case reflect.Array: // a uuid
		u := typed.Interface().([16]byte)
		if got := format.FormatTopicID(u); got != js {
			t.Errorf("%s: typed %s, JSON %v", where, got, js)
		}
	case reflect.String:
		if typed.String() != js {
			t.Errorf("%s: typed %q, JSON %v", where, typed.String(), js)
		}
	case reflect.Bool:
		if typed.Bool() != js {
			t.Errorf("%s: typed %v, JSON %v", where, typed.Bool(), js)
		}
	case reflect.Float64:
		n, _ := js.(json.Number)
		f, err := n.Float64()
		if err != nil || (f != typed.Float() && !(math.IsNaN(f) && math.IsNaN(typed.Float()))) {
			t.Errorf("%s: typed %v, JSON %v", where, typed.Float(), js)
		}
	default:
		var got string
		if typed.CanInt() {
			got = fmt.Sprint(typed.Int())
		} else {
			got = fmt.Sprint(typed.Uint())
		}
		if n, _ := js.(json.Number); n.String() != got {
			t.Errorf("%s: typed %s, JSON %v", where, got, js)
		}
	}
}

func parseJSON(t *testing.T, b []byte) map[string]any {
	t.Helper()
	var m map[string]any
	if err := unmarshalNumbers(b, &m); err != nil {
		t.Fatalf("%v: %s", err, b)
	}
	return m
}

// checkTypedMetadata decodes value both ways and compares.
func checkTypedMetadata(t *testing.T, where string, rd *Decoder, value []byte) MetadataType {
	t.Helper()
	d := rd.Decode(&format.Record{Value: value})
	if !d.ValueJSON {
		t.Fatalf("%s: %s", where, d.Value)
	}
	js := parseJSON(t, d.Value)
	m, err := DecodeMetadata(value)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	if m.Type.String() != js["type"] {
		t.Errorf("%s: type %v, JSON %v", where, m.Type, js["type"])
	}
	sameAsJSON(t, where+" "+m.Type.String(), reflect.ValueOf(m.Body), js["data"])
	return m.Type
}

// everyMetadataRecord is one record of every type klog knows, every field
// set away from its default, in Kafka's JSON.
var everyMetadataRecord = []string{
	`{"type":"REGISTER_BROKER_RECORD","version":4,"data":{"brokerId":1,"isMigratingZkBroker":true,"incarnationId":"rRet3rr1S5G6-IfoHo2Eow","brokerEpoch":2,"endPoints":[{"name":"PLAINTEXT","host":"h","port":9092,"securityProtocol":0}],"features":[{"name":"metadata.version","minSupportedVersion":1,"maxSupportedVersion":8}],"rack":"r1","fenced":false,"inControlledShutdown":true,"logDirs":["pcgBguOASiq3ujkTrGu_Qw"],"cordonedLogDirs":["DuF3GEJ3RHuB62-zMzajeA"]}}`,
	`{"type":"UNREGISTER_BROKER_RECORD","version":0,"data":{"brokerId":3,"brokerEpoch":9}}`,
	`{"type":"TOPIC_RECORD","version":0,"data":{"name":"orders","topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`,
	`{"type":"PARTITION_RECORD","version":2,"data":{"partitionId":4,"topicId":"pcgBguOASiq3ujkTrGu_Qw","replicas":[1,2,3],"isr":[1,2],"removingReplicas":[3],"addingReplicas":[],"leader":1,"leaderRecoveryState":1,"leaderEpoch":5,"partitionEpoch":7,"directories":["pcgBguOASiq3ujkTrGu_Qw","DuF3GEJ3RHuB62-zMzajeA","AAAAAAAAAAAAAAAAAAAAAQ"],"eligibleLeaderReplicas":[3],"lastKnownElr":[2]}}`,
	`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"orders","name":"retention.ms","value":null}}`,
	`{"type":"PARTITION_CHANGE_RECORD","version":2,"data":{"partitionId":4,"topicId":"pcgBguOASiq3ujkTrGu_Qw","isr":[],"leader":-1,"replicas":[1],"removingReplicas":[],"addingReplicas":[2],"leaderRecoveryState":0,"directories":["pcgBguOASiq3ujkTrGu_Qw"],"eligibleLeaderReplicas":[1],"lastKnownElr":[]}}`,
	`{"type":"FENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":2}}`,
	`{"type":"UNFENCE_BROKER_RECORD","version":0,"data":{"id":1,"epoch":2}}`,
	`{"type":"REMOVE_TOPIC_RECORD","version":0,"data":{"topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`,
	`{"type":"DELEGATION_TOKEN_RECORD","version":0,"data":{"owner":"User:a","requester":"User:b","renewers":["User:c"],"issueTimestamp":1,"maxTimestamp":3,"expirationTimestamp":2,"tokenId":"tok"}}`,
	`{"type":"USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1,"salt":"c2FsdA==","storedKey":"a2V5","serverKey":"c2tleQ==","iterations":4096}}`,
	`{"type":"FEATURE_LEVEL_RECORD","version":0,"data":{"name":"kraft.version","featureLevel":1}}`,
	`{"type":"CLIENT_QUOTA_RECORD","version":0,"data":{"entity":[{"entityType":"user","entityName":"alice"},{"entityType":"client-id","entityName":null}],"key":"producer_byte_rate","value":1024.5,"remove":false}}`,
	`{"type":"PRODUCER_IDS_RECORD","version":0,"data":{"brokerId":1,"brokerEpoch":2,"nextProducerId":3000}}`,
	`{"type":"BROKER_REGISTRATION_CHANGE_RECORD","version":3,"data":{"brokerId":1,"brokerEpoch":2,"fenced":-1,"inControlledShutdown":1,"logDirs":["pcgBguOASiq3ujkTrGu_Qw"],"cordonedLogDirs":[]}}`,
	`{"type":"ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"pcgBguOASiq3ujkTrGu_Qw","resourceType":2,"resourceName":"orders","patternType":3,"principal":"User:alice","host":"*","operation":3,"permissionType":3}}`,
	`{"type":"REMOVE_ACCESS_CONTROL_ENTRY_RECORD","version":0,"data":{"id":"pcgBguOASiq3ujkTrGu_Qw"}}`,
	`{"type":"NO_OP_RECORD","version":0,"data":{}}`,
	`{"type":"ZK_MIGRATION_STATE_RECORD","version":0,"data":{"zkMigrationState":2}}`,
	`{"type":"REMOVE_USER_SCRAM_CREDENTIAL_RECORD","version":0,"data":{"name":"alice","mechanism":1}}`,
	`{"type":"BEGIN_TRANSACTION_RECORD","version":0,"data":{"name":"create topics"}}`,
	`{"type":"END_TRANSACTION_RECORD","version":0,"data":{}}`,
	`{"type":"ABORT_TRANSACTION_RECORD","version":0,"data":{"reason":"failed"}}`,
	`{"type":"REMOVE_DELEGATION_TOKEN_RECORD","version":0,"data":{"tokenId":"tok"}}`,
	`{"type":"REGISTER_CONTROLLER_RECORD","version":0,"data":{"controllerId":3000,"incarnationId":"rRet3rr1S5G6-IfoHo2Eow","zkMigrationReady":true,"endPoints":[{"name":"CONTROLLER","host":"c","port":9093,"securityProtocol":0}],"features":[{"name":"kraft.version","minSupportedVersion":0,"maxSupportedVersion":1}]}}`,
	`{"type":"CLEAR_ELR_RECORD","version":0,"data":{"topicName":"orders"}}`,
}

// TestDecodeMetadataEveryType: every type, every field, against the text
// decoder's JSON of the same bytes.
func TestDecodeMetadataEveryType(t *testing.T) {
	t.Parallel()
	rd := New(ClusterMetadata)
	seen := map[MetadataType]bool{}
	for _, js := range everyMetadataRecord {
		v, err := EncodeMetadataJSON([]byte(js))
		if err != nil {
			t.Fatalf("%v: %s", err, js)
		}
		seen[checkTypedMetadata(t, js[:40], rd, v)] = true
	}
	for k := range schemas().metadata {
		if !seen[MetadataType(k)] {
			t.Errorf("no test record of type %v", MetadataType(k))
		}
	}
}

// TestDecodeMetadataDefaults: fields a record does not carry read as the
// defaults Kafka's generated getters return.
func TestDecodeMetadataDefaults(t *testing.T) {
	t.Parallel()
	v, err := EncodeMetadataJSON([]byte(`{"type":"PARTITION_CHANGE_RECORD","version":0,"data":{"partitionId":0,"topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`))
	if err != nil {
		t.Fatal(err)
	}
	m, err := DecodeMetadata(v)
	if err != nil {
		t.Fatal(err)
	}
	pc := m.Body.(*PartitionChangeRecord)
	if pc.Leader != NoLeaderChange || pc.LeaderRecoveryState != NoLeaderRecoveryStateChange || pc.Isr != nil || pc.Replicas != nil || pc.Directories != nil || pc.EligibleLeaderReplicas != nil {
		t.Errorf("PartitionChangeRecord without tags: %+v", pc)
	}
	v, _ = EncodeMetadataJSON([]byte(`{"type":"PARTITION_RECORD","version":0,"data":{"partitionId":0,"topicId":"pcgBguOASiq3ujkTrGu_Qw","replicas":[1],"isr":[1],"removingReplicas":[],"addingReplicas":[],"leader":1,"leaderEpoch":0,"partitionEpoch":0}}`))
	m, _ = DecodeMetadata(v)
	p := m.Body.(*PartitionRecord)
	if p.Directories == nil || len(p.Directories) != 0 || p.EligibleLeaderReplicas != nil || p.LeaderRecoveryState != 0 {
		t.Errorf("PartitionRecord v0: %+v", p)
	}
	v, _ = EncodeMetadataJSON([]byte(`{"type":"REGISTER_BROKER_RECORD","version":0,"data":{"brokerId":1,"incarnationId":"rRet3rr1S5G6-IfoHo2Eow","brokerEpoch":2,"endPoints":[],"features":[],"rack":null}}`))
	m, _ = DecodeMetadata(v)
	if b := m.Body.(*RegisterBrokerRecord); !b.Fenced || b.Rack != nil {
		t.Errorf("RegisterBrokerRecord v0 without fenced: %+v", b)
	}
	if _, err := DecodeMetadata([]byte{1, 99, 0}); err == nil {
		t.Error("an unknown type decoded")
	}
	if _, err := DecodeMetadata(append(v, 0)); err == nil {
		t.Error("trailing garbage decoded")
	}
}

// TestDecodeMetadataReference: every record of the real __cluster_metadata
// logs and snapshots on this machine (read in place), typed and as text.
func TestDecodeMetadataReference(t *testing.T) {
	t.Parallel()
	files := referenceMetadataFiles()
	if len(files) == 0 {
		t.Skip("no reference __cluster_metadata files on this machine")
	}
	rd := New(ClusterMetadata)
	for _, p := range files {
		eachRecord(t, p, func(r *format.Record) {
			checkTypedMetadata(t, fmt.Sprintf("%s@%d", filepath.Base(p), r.Offset), rd, bytes.Clone(r.Value))
		})
	}
}

func referenceMetadataFiles() []string {
	ref := os.Getenv("KLOG_REFERENCE_FIXTURES")
	if ref == "" {
		ref = "/work/shared/fixtures/reference-only"
	}
	var files []string
	for _, pat := range []string{"*/__cluster_metadata-0/*", "*/*/__cluster_metadata-0/*", "*/*/*/__cluster_metadata-0/*"} {
		ps, _ := filepath.Glob(filepath.Join(ref, pat))
		for _, p := range ps {
			if filepath.Ext(p) == ".log" || filepath.Ext(p) == ".checkpoint" {
				files = append(files, p)
			}
		}
	}
	return files
}
