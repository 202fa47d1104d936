package internaltopic

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"github.com/klog-dev/klog/internal/klogtest"
	"math"
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

// renamed maps "Type.Field" of a typed value to its JSON name where the Go
// name is not the JSON one ("-": not in the JSON, or printed another way
// and checked by its own test).
var renamed = map[string]string{
	"TransactionLogValue.Partitions":                         "transactionPartitions",
	"TransactionLogValue.LastUpdateTimestampMs":              "transactionLastUpdateTimestampMs",
	"TransactionLogValue.StartTimestampMs":                   "transactionStartTimestampMs",
	"GroupMember.Subscription":                               "-",
	"GroupMember.Assignment":                                 "-",
	"ConsumerGroupMemberMetadataValue.ClassicMemberMetadata": "-",
	"StreamsGroupMemberMetadataValue.UserEndpoint":           "-",
	"CurrentMemberAssignmentValue.AssignedPartitions":        "assignedPartitions",
}

// partialTypes are typed values that keep only some of their JSON's fields.
var partialTypes = map[string]bool{"StreamsGroupTopologyValue": true, "Subtopology": true, "TopicIDPartitions": true,
	"ConsumerGroupMemberMetadataValue": true, "StreamsGroupMemberMetadataValue": true, "ConsumerGroupMetadataValue": true, "GroupMember": true,
	"TopicMetadata": true, "OtherGroupValue": true, "StreamsGroupMetadataValue": true, "StreamsGroupAssignmentValue": true}

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
		tn := typed.Type().Name()
		for i := 0; i < typed.NumField(); i++ {
			name := jsonName(typed.Type().Field(i).Name)
			if r, ok := renamed[tn+"."+typed.Type().Field(i).Name]; ok {
				name = r
			}
			v, ok := obj[name]
			if !ok {
				continue
			}
			seen++
			sameAsJSON(t, where+"."+name, typed.Field(i), v)
		}
		if seen != len(obj) && !partialTypes[tn] {
			t.Errorf("%s: the typed value has %d of the JSON's %d fields (%v)", where, seen, len(obj), obj)
		}
	case reflect.Slice:
		if typed.Type().Elem().Kind() == reflect.Uint8 { // bytes
			if typed.IsNil() && js == nil {
				return
			}
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
	var files []string
	for _, d := range klogtest.ReferencePartitions("__cluster_metadata-0") {
		ps, _ := filepath.Glob(filepath.Join(d, "*"))
		for _, p := range ps {
			if filepath.Ext(p) == ".log" || filepath.Ext(p) == ".checkpoint" {
				files = append(files, p)
			}
		}
	}
	return files
}

// checkTypedCoordinator decodes a coordinator record both ways and
// compares key, value and (classic consumer groups) each member's
// subscription and assignment.
func checkTypedCoordinator(t *testing.T, where string, kind Kind, key, value []byte) CoordinatorRecord {
	t.Helper()
	rd := New(kind)
	d := rd.Decode(&format.Record{Key: key, Value: value})
	if !d.KeyJSON {
		t.Fatalf("%s: %s", where, d.Key)
	}
	dec := DecodeGroupRecord
	if kind == TransactionLog {
		dec = DecodeTransactionRecord
	}
	r, err := dec(key, value)
	if err != nil {
		t.Fatalf("%s: %v", where, err)
	}
	kj := parseJSON(t, d.Key)
	if kj["type"] != fmt.Sprint(r.Type) {
		t.Errorf("%s: type %d, JSON %v", where, r.Type, kj["type"])
	}
	sameAsJSON(t, where+" key", reflect.ValueOf(r.Key), kj["data"])
	if value == nil {
		if r.Value != nil {
			t.Errorf("%s: a tombstone with a value %+v", where, r.Value)
		}
		return r
	}
	vj := parseJSON(t, d.Value)
	sameAsJSON(t, where+" value", reflect.ValueOf(r.Value), vj["data"])
	if g, ok := r.Value.(*GroupMetadataValue); ok && g.ProtocolType == "consumer" {
		members, _ := vj["data"].(map[string]any)["members"].([]any)
		for i, m := range g.Members {
			mj := members[i].(map[string]any)
			sub, err := DecodeConsumerSubscription(m.Subscription)
			if err != nil {
				t.Fatalf("%s: member %d subscription: %v", where, i, err)
			}
			sameAsJSON(t, where+" subscription", reflect.ValueOf(sub), mj["subscription"])
			as, err := DecodeConsumerAssignment(m.Assignment)
			if err != nil {
				t.Fatalf("%s: member %d assignment: %v", where, i, err)
			}
			sameAsJSON(t, where+" assignment", reflect.ValueOf(as), mj["assignment"])
		}
	}
	return r
}

func init() {
	renamed["ConsumerSubscription.Version"] = "-"
	renamed["ConsumerAssignment.Version"] = "-"
	renamed["ConsumerAssignment.Partitions"] = "assignedPartitions"
}

// TestDecodeCoordinatorFixtures: every record of the Kafka-written and
// real coordinator partitions, typed and as text.
func TestDecodeCoordinatorFixtures(t *testing.T) {
	t.Parallel()
	paths := map[string]Kind{
		"../testdata/segments/kafka-written/coordinator/__consumer_offsets-0/00000000000000000000.log":                 Offsets,
		"../testdata/segments/kafka-written/coordinator/__transaction_state-0/00000000000000000000.log":                TransactionLog,
		"../testdata/segments/licensed/DonaldY__kafka-2.7.1/kafka-logs/__consumer_offsets-39/00000000000000000000.log": Offsets,
	}
	for _, pat := range []string{"*/__consumer_offsets-*/*.log", "*/*/__consumer_offsets-*/*.log", "*/*/*/__consumer_offsets-*/*.log"} {
		ps, _ := filepath.Glob(filepath.Join(klogtest.ReferenceFixtures(), pat))
		for _, p := range ps {
			paths[p] = Offsets
		}
	}
	n := 0
	for p, kind := range paths {
		eachRecord(t, p, func(r *format.Record) {
			n++
			checkTypedCoordinator(t, fmt.Sprintf("%s@%d", filepath.Base(filepath.Dir(p)), r.Offset), kind, bytes.Clone(r.Key), bytes.Clone(r.Value))
		})
	}
	if n < 10 {
		t.Errorf("only %d records", n)
	}
}

// everyGroupRecord is one record of every __consumer_offsets type, in the
// decoders' JSON: key, value ("" for a tombstone).
var everyGroupRecord = [][2]string{
	{`{"type":"0","data":{"group":"g","topic":"t","partition":1}}`, `{"version":"0","data":{"offset":5,"metadata":"m","commitTimestamp":9}}`},
	{`{"type":"1","data":{"group":"g","topic":"t","partition":1}}`, `{"version":"1","data":{"offset":5,"metadata":"m","commitTimestamp":9,"expireTimestamp":10}}`},
	{`{"type":"1","data":{"group":"g","topic":"t","partition":1}}`, `{"version":"4","data":{"offset":5,"leaderEpoch":3,"metadata":"m","commitTimestamp":9}}`},
	{`{"type":"1","data":{"group":"g","topic":"t","partition":1}}`, ""},
	{`{"type":"2","data":{"group":"g"}}`, `{"version":"3","data":{"protocolType":"consumer","generation":2,"protocol":"range","leader":"m1","currentStateTimestamp":7,"members":[{"memberId":"m1","groupInstanceId":"i1","clientId":"c","clientHost":"/h","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":["t"],"userData":null,"ownedPartitions":[{"topic":"t","partitions":[0]}],"generationId":1,"rackId":null},"assignment":{"assignedPartitions":[{"topic":"t","partitions":[0,1]}],"userData":null}}]}}`},
	{`{"type":"3","data":{"groupId":"cg"}}`, `{"version":"0","data":{"epoch":4,"metadataHash":77}}`},
	{`{"type":"4","data":{"groupId":"cg"}}`, `{"version":"0","data":{"topics":[{"topicId":"pcgBguOASiq3ujkTrGu_Qw","topicName":"t","numPartitions":2,"partitionMetadata":[]}]}}`},
	{`{"type":"5","data":{"groupId":"cg","memberId":"m"}}`, `{"version":"0","data":{"instanceId":null,"rackId":"r","clientId":"c","clientHost":"/h","subscribedTopicNames":["t"],"subscribedTopicRegex":null,"rebalanceTimeoutMs":5000,"serverAssignor":"uniform","classicMemberMetadata":{"sessionTimeoutMs":45000,"supportedProtocols":[{"name":"range","metadata":""}]}}}`},
	{`{"type":"6","data":{"groupId":"cg"}}`, `{"version":"0","data":{"assignmentEpoch":4}}`},
	{`{"type":"7","data":{"groupId":"cg","memberId":"m"}}`, `{"version":"0","data":{"topicPartitions":[{"topicId":"pcgBguOASiq3ujkTrGu_Qw","partitions":[0,1]}]}}`},
	{`{"type":"8","data":{"groupId":"cg","memberId":"m"}}`, `{"version":"0","data":{"memberEpoch":4,"previousMemberEpoch":3,"state":0,"assignedPartitions":[{"topicId":"pcgBguOASiq3ujkTrGu_Qw","partitions":[0]}],"partitionsPendingRevocation":[]}}`},
	{`{"type":"10","data":{"groupId":"sg","memberId":"m"}}`, `{"version":"0","data":{"rackId":null,"clientId":"c","clientHost":"/h","subscribedTopicNames":["t"]}}`},
	{`{"type":"11","data":{"groupId":"sg"}}`, `{"version":"0","data":{"epoch":2,"metadataHash":0}}`},
	{`{"type":"12","data":{"groupId":"sg"}}`, `{"version":"0","data":{"assignmentEpoch":2}}`},
	{`{"type":"13","data":{"groupId":"sg","memberId":"m"}}`, `{"version":"0","data":{"topicPartitions":[{"topicId":"pcgBguOASiq3ujkTrGu_Qw","partitions":[0]}]}}`},
	{`{"type":"14","data":{"groupId":"sg","memberId":"m"}}`, `{"version":"0","data":{"memberEpoch":2,"previousMemberEpoch":1,"state":0,"assignedPartitions":[{"topicId":"pcgBguOASiq3ujkTrGu_Qw","partitions":[0]}]}}`},
	{`{"type":"15","data":{"groupId":"sg"}}`, `{"version":"0","data":{"initializingTopics":[],"initializedTopics":[],"deletingTopics":[]}}`},
	{`{"type":"16","data":{"groupId":"cg","regularExpression":"t.*"}}`, `{"version":"0","data":{"topics":["t1"],"version":3,"timestamp":9}}`},
	{`{"type":"17","data":{"groupId":"st"}}`, `{"version":"0","data":{"epoch":3,"metadataHash":1,"validatedTopologyEpoch":2,"assignmentConfigs":[]}}`},
	{`{"type":"19","data":{"groupId":"st","memberId":"m"}}`, `{"version":"0","data":{"instanceId":null,"rackId":null,"clientId":"c","clientHost":"/h","rebalanceTimeoutMs":1,"topologyEpoch":2,"processId":"p","userEndpoint":{"host":"a","port":1},"clientTags":[]}}`},
	{`{"type":"20","data":{"groupId":"st"}}`, `{"version":"0","data":{"assignmentEpoch":3}}`},
	{`{"type":"21","data":{"groupId":"st","memberId":"m"}}`, `{"version":"0","data":{"activeTasks":[{"subtopologyId":"0","partitions":[0]}],"standbyTasks":[],"warmupTasks":[]}}`},
	{`{"type":"22","data":{"groupId":"st","memberId":"m"}}`, `{"version":"0","data":{"memberEpoch":3,"previousMemberEpoch":2,"state":0,"activeTasks":[{"subtopologyId":"0","partitions":[0]}],"standbyTasks":[],"warmupTasks":[],"activeTasksPendingRevocation":[],"standbyTasksPendingRevocation":[],"warmupTasksPendingRevocation":[]}}`},
	{`{"type":"23","data":{"groupId":"st"}}`, `{"version":"0","data":{"epoch":2,"subtopologies":[{"subtopologyId":"0","sourceTopics":["t"],"sourceTopicRegex":[],"stateChangelogTopics":[],"repartitionSinkTopics":[],"repartitionSourceTopics":[],"copartitionGroups":[]}]}}`},
}

// TestDecodeGroupEveryType: every __consumer_offsets record type, typed
// and as text, and the coordinator partition of ids as Java hashes them.
func TestDecodeGroupEveryType(t *testing.T) {
	t.Parallel()
	seen := map[int16]bool{}
	for _, kv := range everyGroupRecord {
		var val []byte
		if kv[1] != "" {
			val = []byte(kv[1])
		}
		k, v, err := EncodeCoordinatorJSON(Offsets, []byte(kv[0]), val)
		if err != nil {
			t.Fatalf("%v: %s", err, kv)
		}
		r := checkTypedCoordinator(t, kv[0], Offsets, k, v)
		seen[r.Type] = true
	}
	for k := range schemas().group {
		if !seen[k] {
			t.Errorf("no test record of type %d", k)
		}
	}
	// Java's "".hashCode() is 0; "polygenelubricants".hashCode() is
	// Integer.MIN_VALUE, which Utils.abs maps to 0; "Aa" and "BB" collide
	// (2112); a non-BMP character hashes as its two UTF-16 surrogates.
	for id, want := range map[string]int32{"": 0, "polygenelubricants": 0, "Aa": 2112 % 50, "BB": 2112 % 50,
		"group-1": 293427299 % 50, "\U0001F600": int32((31*0xD83D + 0xDE00) % 50)} {
		if got := CoordinatorPartition(id, 50); got != want {
			t.Errorf("CoordinatorPartition(%q, 50) = %d, want %d", id, got, want)
		}
	}
}
