package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/kraft"
	"github.com/klog-dev/klog/partition"
)

// Configs as DescribeConfigs and IncrementalAlterConfigs see them. A
// topic's value is, first found: an alteration made through this server
// (kept with Config.Writable in ConfigsFile under the state directory), a
// dynamic topic config of the log dir's KRaft metadata log
// (__cluster_metadata-0 replayed by package kraft), else Kafka 4.3's
// default (source DEFAULT_CONFIG). Broker configs are the server's own
// settings.

// ConfigsFile holds the configs altered through a writable server (JSON:
// resource type, then resource name, then config name to value), in the
// state directory.
const ConfigsFile = "klog-serve-configs.json"

// Config sources (DescribeConfigsResponse ConfigSource).
const (
	sourceDynamicTopic         int8 = 1
	sourceDynamicBroker        int8 = 2
	sourceDynamicDefaultBroker int8 = 3
	sourceStaticBroker         int8 = 4
	sourceDefault              int8 = 5
)

// Config types (ConfigDef.Type as DescribeConfigs v3 reports it).
const (
	typeBoolean int8 = 1
	typeString  int8 = 2
	typeInt     int8 = 3
	typeLong    int8 = 5
	typeDouble  int8 = 6
	typeList    int8 = 7
)

// Config resource types (ConfigResource.Type).
const (
	resourceTopic  int8 = 2
	resourceBroker int8 = 4
)

// configDef is one config: its default as Kafka prints it, its type, and
// for enumerations the values it takes.
type configDef struct {
	name, def string
	typ       int8
	enum      []string
	min       float64 // the smallest value of a number (math.Inf(-1): none)
}

const maxLong = "9223372036854775807"

var noMin = math.Inf(-1)

// topicConfigs are Kafka 4.3.1's topic configs (LogConfig) and defaults.
var topicConfigs = []configDef{
	{"cleanup.policy", "delete", typeList, []string{"delete", "compact"}, noMin},
	{"compression.gzip.level", "-1", typeInt, nil, -1},
	{"compression.lz4.level", "9", typeInt, nil, 1},
	{"compression.type", "producer", typeString, []string{"uncompressed", "zstd", "lz4", "snappy", "gzip", "producer"}, noMin},
	{"compression.zstd.level", "3", typeInt, nil, -131072},
	{"delete.retention.ms", "86400000", typeLong, nil, 0},
	{"file.delete.delay.ms", "60000", typeLong, nil, 0},
	{"flush.messages", maxLong, typeLong, nil, 1},
	{"flush.ms", maxLong, typeLong, nil, 0},
	{"follower.replication.throttled.replicas", "", typeList, nil, noMin},
	{"index.interval.bytes", "4096", typeInt, nil, 0},
	{"leader.replication.throttled.replicas", "", typeList, nil, noMin},
	{"local.retention.bytes", "-2", typeLong, nil, -2},
	{"local.retention.ms", "-2", typeLong, nil, -2},
	{"max.compaction.lag.ms", maxLong, typeLong, nil, 1},
	{"max.message.bytes", "1048588", typeInt, nil, 0},
	{"message.timestamp.after.max.ms", "3600000", typeLong, nil, 0},
	{"message.timestamp.before.max.ms", maxLong, typeLong, nil, 0},
	{"message.timestamp.type", "CreateTime", typeString, []string{"CreateTime", "LogAppendTime"}, noMin},
	{"min.cleanable.dirty.ratio", "0.5", typeDouble, nil, 0},
	{"min.compaction.lag.ms", "0", typeLong, nil, 0},
	{"min.insync.replicas", "1", typeInt, nil, 1},
	{"preallocate", "false", typeBoolean, nil, noMin},
	{"remote.log.copy.disable", "false", typeBoolean, nil, noMin},
	{"remote.log.delete.on.disable", "false", typeBoolean, nil, noMin},
	{"remote.storage.enable", "false", typeBoolean, nil, noMin},
	{"retention.bytes", "-1", typeLong, nil, noMin},
	{"retention.ms", "604800000", typeLong, nil, -1},
	{"segment.bytes", "1073741824", typeInt, nil, 1024 * 1024},
	{"segment.index.bytes", "10485760", typeInt, nil, 4},
	{"segment.jitter.ms", "0", typeLong, nil, 0},
	{"segment.ms", "604800000", typeLong, nil, 1},
	{"unclean.leader.election.enable", "false", typeBoolean, nil, noMin},
}

func topicConfigDef(name string) *configDef {
	i := sort.Search(len(topicConfigs), func(i int) bool { return topicConfigs[i].name >= name })
	if i < len(topicConfigs) && topicConfigs[i].name == name {
		return &topicConfigs[i]
	}
	return nil
}

// brokerConfig is one broker config as this server runs it.
type brokerConfig struct {
	configDef
	value    string
	readOnly bool
}

// dynamicBrokerConfigs are the broker configs IncrementalAlterConfigs may
// change on this server (cluster-wide or for its node id), as a broker
// updates them dynamically; they apply to Produce's validation.
var dynamicBrokerConfigs = map[string]configDef{
	"message.max.bytes":                   {"message.max.bytes", "1048588", typeInt, nil, 0},
	"log.message.timestamp.after.max.ms":  {"log.message.timestamp.after.max.ms", "3600000", typeLong, nil, 0},
	"log.message.timestamp.before.max.ms": {"log.message.timestamp.before.max.ms", maxLong, typeLong, nil, 0},
}

// brokerConfigs lists this server's broker configs with their values.
func (s *Server) brokerConfigs() []brokerConfig {
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	before := maxLong
	if s.cfg.TimestampBeforeMax > 0 {
		before = ms(s.cfg.TimestampBeforeMax)
	}
	after := maxLong
	if s.cfg.TimestampAfterMax > 0 {
		after = ms(s.cfg.TimestampAfterMax)
	}
	segment := s.cfg.Produce.SegmentBytes
	if segment <= 0 {
		segment = 1 << 30
	}
	auto := strconv.FormatBool(s.cfg.Writable)
	id := strconv.Itoa(int(s.cfg.NodeID))
	list := []brokerConfig{
		{configDef{"auto.create.topics.enable", "true", typeBoolean, nil, noMin}, auto, true},
		{configDef{"broker.id", "-1", typeInt, nil, noMin}, id, true},
		{configDef{"connections.max.idle.ms", "600000", typeLong, nil, noMin}, ms(s.cfg.IdleTimeout), true},
		{configDef{"default.replication.factor", "1", typeInt, nil, noMin}, "1", true},
		{configDef{"group.initial.rebalance.delay.ms", "3000", typeInt, nil, noMin}, ms(s.cfg.GroupInitialDelay), true},
		{configDef{"group.max.session.timeout.ms", "1800000", typeInt, nil, noMin}, ms(GroupMaxSessionTimeout), true},
		{configDef{"group.min.session.timeout.ms", "6000", typeInt, nil, noMin}, ms(GroupMinSessionTimeout), true},
		{configDef{"log.dirs", "", typeString, nil, noMin}, s.cfg.LogDir, true},
		{configDef{"log.index.interval.bytes", "4096", typeInt, nil, noMin}, "4096", true},
		{configDef{"log.message.timestamp.after.max.ms", "3600000", typeLong, nil, noMin}, after, false},
		{configDef{"log.message.timestamp.before.max.ms", maxLong, typeLong, nil, noMin}, before, false},
		{configDef{"log.retention.hours", "168", typeInt, nil, noMin}, "168", true},
		{configDef{"log.segment.bytes", "1073741824", typeInt, nil, noMin}, strconv.FormatInt(segment, 10), true},
		{configDef{"max.connections", "2147483647", typeInt, nil, noMin}, strconv.Itoa(s.cfg.MaxConnections), true},
		{configDef{"message.max.bytes", "1048588", typeInt, nil, noMin}, strconv.Itoa(int(s.cfg.MaxMessageBytes)), false},
		{configDef{"min.insync.replicas", "1", typeInt, nil, noMin}, "1", true},
		{configDef{"node.id", "-1", typeInt, nil, noMin}, id, true},
		{configDef{"num.partitions", "1", typeInt, nil, noMin}, "1", true},
		{configDef{"offsets.topic.num.partitions", "50", typeInt, nil, noMin}, "50", true},
		{configDef{"offsets.topic.replication.factor", "3", typeInt, nil, noMin}, "1", true},
		{configDef{"process.roles", "", typeList, nil, noMin}, "broker", true},
		{configDef{"socket.request.max.bytes", "104857600", typeInt, nil, noMin}, strconv.Itoa(int(s.cfg.MaxRequestBytes)), true},
		{configDef{"transaction.state.log.num.partitions", "50", typeInt, nil, noMin}, "50", true},
	}
	return list
}

// configStore holds the metadata log's dynamic configs and the
// alterations made through this server.
type configStore struct {
	mu sync.Mutex
	// image is the metadata log's dynamic configs: resource type, then
	// name, then config.
	image map[int8]map[string]map[string]string
	// altered is what IncrementalAlterConfigs and CreateTopics set
	// (a nil value: deleted, back to the image's or the default).
	altered map[int8]map[string]map[string]*string
	// path is the file alterations persist in ("" keeps them in memory).
	path string
}

// persisted is ConfigsFile's content.
type persisted struct {
	Topic  map[string]map[string]*string `json:"topic,omitempty"`
	Broker map[string]map[string]*string `json:"broker,omitempty"`
}

// openConfigs reads the log dir's metadata log, when it has one, and the
// alterations a writable server kept in the state directory.
func openConfigs(cfg Config) (*configStore, error) {
	cs := &configStore{image: map[int8]map[string]map[string]string{}, altered: map[int8]map[string]map[string]*string{}}
	md := filepath.Join(cfg.LogDir, kraft.MetadataTopic+"-0")
	if st, err := os.Lstat(md); err == nil && st.IsDir() {
		im, err := kraft.Load(context.Background(), md, kraft.Options{UpTo: -1})
		if err != nil {
			return nil, fmt.Errorf("serve: the metadata log %s: %w", md, err)
		}
		for _, c := range im.Configs {
			typ := resourceTopic
			switch c.ResourceType {
			case "TOPIC":
			case "BROKER":
				typ = resourceBroker
			default:
				continue
			}
			if cs.image[typ] == nil {
				cs.image[typ] = map[string]map[string]string{}
			}
			cs.image[typ][c.ResourceName] = c.Configs
		}
	}
	if !cfg.Writable || cfg.StateDir == "" {
		return cs, nil
	}
	cs.path = filepath.Join(cfg.StateDir, ConfigsFile)
	data, err := safeio.ReadFile(cs.path, safeio.MaxCheckpointBytes)
	if errors.Is(err, os.ErrNotExist) {
		return cs, nil
	}
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	var p persisted
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, fmt.Errorf("serve: %s: %w", cs.path, err)
	}
	if p.Topic != nil {
		cs.altered[resourceTopic] = p.Topic
	}
	if p.Broker != nil {
		cs.altered[resourceBroker] = p.Broker
	}
	return cs, nil
}

// lookup is a resource's config: the altered value, else the image's;
// ok false when neither sets it. source is where it came from.
func (cs *configStore) lookup(typ int8, resource, name string) (value string, source int8, ok bool) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.lookupLocked(typ, resource, name)
}

func (cs *configStore) lookupLocked(typ int8, resource, name string) (string, int8, bool) {
	dynamic := sourceDynamicTopic
	if typ == resourceBroker {
		dynamic = sourceDynamicBroker
		if resource == "" {
			dynamic = sourceDynamicDefaultBroker
		}
	}
	if v, ok := cs.altered[typ][resource][name]; ok {
		if v == nil {
			// Deleted here: back to the default, as a ConfigRecord
			// with a null value removes the dynamic config.
			return "", 0, false
		}
		return *v, dynamic, true
	}
	if v, ok := cs.image[typ][resource][name]; ok {
		return v, dynamic, true
	}
	return "", 0, false
}

// set applies alterations to one resource and persists them; values nil
// delete.
func (cs *configStore) set(typ int8, resource string, values map[string]*string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if cs.altered[typ] == nil {
		cs.altered[typ] = map[string]map[string]*string{}
	}
	m := cs.altered[typ][resource]
	if m == nil {
		m = map[string]*string{}
		cs.altered[typ][resource] = m
	}
	for k, v := range values {
		if v == nil {
			if _, inImage := cs.image[typ][resource][k]; !inImage {
				delete(m, k)
				continue
			}
		}
		m[k] = v
	}
	return cs.persistLocked()
}

// drop forgets a deleted topic's alterations.
func (cs *configStore) drop(typ int8, resource string) error {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	if _, ok := cs.altered[typ][resource]; !ok {
		return nil
	}
	delete(cs.altered[typ], resource)
	return cs.persistLocked()
}

func (cs *configStore) persistLocked() error {
	if cs.path == "" {
		return nil
	}
	data, err := json.MarshalIndent(persisted{Topic: cs.altered[resourceTopic], Broker: cs.altered[resourceBroker]}, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(cs.path), 0o755); err != nil {
		return err
	}
	return partition.WriteFileAtomic(cs.path, append(data, '\n'), partition.WriteOptions{})
}

// topicConfig is a topic's value of a topic config and its source.
func (s *Server) topicConfig(topic, name string) (string, int8) {
	if v, src, ok := s.configs.lookup(resourceTopic, topic, name); ok {
		return v, src
	}
	if d := topicConfigDef(name); d != nil {
		return d.def, sourceDefault
	}
	return "", sourceDefault
}

// validateConfigValue checks a value as ConfigDef parses it.
func validateConfigValue(d configDef, v string) error {
	bad := func(why string) error {
		return fmt.Errorf("Invalid value %s for configuration %s: %s", v, d.name, why)
	}
	switch d.typ {
	case typeBoolean:
		if !strings.EqualFold(v, "true") && !strings.EqualFold(v, "false") {
			return bad("Expected value to be either true or false")
		}
	case typeInt, typeLong:
		bits := 64
		if d.typ == typeInt {
			bits = 32
		}
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, bits)
		if err != nil {
			if d.typ == typeInt {
				return bad("Not a number of type INT")
			}
			return bad("Not a number of type LONG")
		}
		if float64(n) < d.min {
			return bad("Value must be at least " + strconv.FormatFloat(d.min, 'f', -1, 64))
		}
	case typeDouble:
		f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
		if err != nil {
			return bad("Not a number of type DOUBLE")
		}
		if f < d.min {
			return bad("Value must be at least " + strconv.FormatFloat(d.min, 'f', -1, 64))
		}
	}
	if len(d.enum) > 0 {
		items := []string{v}
		if d.typ == typeList {
			items = splitList(v)
		}
		for _, it := range items {
			found := false
			for _, e := range d.enum {
				if strings.EqualFold(it, e) {
					found = true
				}
			}
			if !found {
				return bad("String must be one of: " + strings.Join(d.enum, ", "))
			}
		}
	}
	return nil
}

// splitList is ConfigDef's LIST parsing: comma-separated, trimmed.
func splitList(v string) []string {
	if strings.TrimSpace(v) == "" {
		return nil
	}
	var out []string
	for _, it := range strings.Split(v, ",") {
		out = append(out, strings.TrimSpace(it))
	}
	return out
}
