package serve

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internaltopic"
	"github.com/klog-dev/klog/produce"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
	"github.com/twmb/franz-go/pkg/kversion"
)

// topicConfigMap is a described topic's configs by name.
func topicConfigMap(t *testing.T, adm *kadm.Client, topic string) map[string]kadm.Config {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	rcs, err := adm.DescribeTopicConfigs(ctx, topic)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := rcs.On(topic, nil)
	if err != nil || rc.Err != nil {
		t.Fatalf("describe %s: %v %v", topic, err, rc.Err)
	}
	out := map[string]kadm.Config{}
	for _, c := range rc.Configs {
		out[c.Key] = c
	}
	return out
}

// TestConfigsDefaultsAndAlterations: without a metadata log a topic's
// configs are Kafka's defaults (DEFAULT_CONFIG); alterations through kadm
// (SET, APPEND, DELETE) are validated as Kafka validates them, honour
// ValidateOnly, and are kept across a restart in the state directory.
func TestConfigsDefaultsAndAlterations(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	state := t.TempDir()
	s, addr := startServer(t, Config{LogDir: dir, Writable: true, StateDir: state})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()

	cs := topicConfigMap(t, adm, "none")
	if len(cs) != len(topicConfigs) {
		t.Errorf("%d configs, want %d", len(cs), len(topicConfigs))
	}
	for name, want := range map[string]string{"retention.ms": "604800000", "cleanup.policy": "delete",
		"max.message.bytes": "1048588", "message.timestamp.after.max.ms": "3600000", "segment.bytes": "1073741824"} {
		if c := cs[name]; c.Value == nil || *c.Value != want || c.Source != kmsg.ConfigSourceDefaultConfig {
			t.Errorf("%s: %+v, want %s from DEFAULT_CONFIG", name, c, want)
		}
	}

	set := func(op kadm.IncrementalOp, name string, v *string) kadm.AlterConfig {
		return kadm.AlterConfig{Op: op, Name: name, Value: v}
	}
	// Refusals, one resource each: unknown name, bad number, bad enum,
	// APPEND on a non-list.
	for _, c := range []kadm.AlterConfig{
		set(kadm.SetConfig, "no.such.config", kmsg.StringPtr("1")),
		set(kadm.SetConfig, "retention.ms", kmsg.StringPtr("soon")),
		set(kadm.SetConfig, "cleanup.policy", kmsg.StringPtr("delete,shred")),
		set(kadm.AppendConfig, "retention.ms", kmsg.StringPtr("1")),
		set(kadm.SetConfig, "segment.bytes", kmsg.StringPtr("1000")),
	} {
		res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{c}, "none")
		if err != nil {
			t.Fatal(err)
		}
		if r, _ := res.On("none", nil); !errors.Is(r.Err, kerr.InvalidConfig) {
			t.Errorf("%s=%v: %v %q, want INVALID_CONFIG", c.Name, *c.Value, r.Err, r.ErrMessage)
		}
	}
	// ValidateOnly changes nothing.
	res, err := adm.ValidateAlterTopicConfigs(ctx, []kadm.AlterConfig{set(kadm.SetConfig, "retention.ms", kmsg.StringPtr("1000"))}, "none")
	if r, _ := res.On("none", nil); err != nil || r.Err != nil {
		t.Fatalf("validate: %v %v", err, r.Err)
	}
	if c := topicConfigMap(t, adm, "none")["retention.ms"]; *c.Value != "604800000" {
		t.Errorf("validate-only changed retention.ms to %s", *c.Value)
	}
	res, err = adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{
		set(kadm.SetConfig, "retention.ms", kmsg.StringPtr("1000")),
		set(kadm.AppendConfig, "cleanup.policy", kmsg.StringPtr("compact")),
	}, "none")
	if r, _ := res.On("none", nil); err != nil || r.Err != nil {
		t.Fatalf("alter: %v %v %q", err, r.Err, r.ErrMessage)
	}
	cs = topicConfigMap(t, adm, "none")
	if c := cs["retention.ms"]; *c.Value != "1000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("retention.ms after SET: %+v", c)
	}
	if c := cs["cleanup.policy"]; *c.Value != "delete,compact" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("cleanup.policy after APPEND: %+v", c)
	}
	// The broker: its settings, and the read-only ones refused.
	brs, err := adm.DescribeBrokerConfigs(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	bc := map[string]kadm.Config{}
	for _, c := range brs[0].Configs {
		bc[c.Key] = c
	}
	if c := bc["message.max.bytes"]; c.Value == nil || *c.Value != "1048588" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("message.max.bytes: %+v", c)
	}
	if c := bc["log.dirs"]; c.Value == nil || *c.Value != dir || c.Source != kmsg.ConfigSourceStaticBrokerConfig {
		t.Errorf("log.dirs: %+v", c)
	}
	bres, err := adm.AlterBrokerConfigs(ctx, []kadm.AlterConfig{set(kadm.SetConfig, "num.partitions", kmsg.StringPtr("3"))}, 0)
	if err != nil || len(bres) != 1 || !errors.Is(bres[0].Err, kerr.InvalidRequest) {
		t.Errorf("altering a static broker config: %+v %v", bres, err)
	}
	adm.Close()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	// Kept across a restart; DELETE goes back to the default.
	_, addr2 := startServer(t, Config{LogDir: dir, Writable: true, StateDir: state})
	adm2 := kadm.NewClient(mustKgo(t, addr2))
	defer adm2.Close()
	if c := topicConfigMap(t, adm2, "none")["retention.ms"]; *c.Value != "1000" {
		t.Errorf("retention.ms after restart: %s", *c.Value)
	}
	res, err = adm2.AlterTopicConfigs(ctx, []kadm.AlterConfig{set(kadm.DeleteConfig, "retention.ms", nil)}, "none")
	if r, _ := res.On("none", nil); err != nil || r.Err != nil {
		t.Fatalf("delete: %v %v", err, r.Err)
	}
	if c := topicConfigMap(t, adm2, "none")["retention.ms"]; *c.Value != "604800000" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("retention.ms after DELETE: %+v", c)
	}
	if _, err := os.Stat(filepath.Join(state, ConfigsFile)); err != nil {
		t.Error(err)
	}
}

// TestConfigsFromMetadataLog: a log dir holding __cluster_metadata-0
// reports its topics' dynamic configs (CONFIG_RECORDs) as
// DYNAMIC_TOPIC_CONFIG; a read-only server refuses alterations.
func TestConfigsFromMetadataLog(t *testing.T) {
	dir := fixtureLogDir(t, "none-0")
	md := filepath.Join(dir, "__cluster_metadata-0")
	a, err := produce.Open(md, produce.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var recs []format.Record
	for i, js := range []string{
		`{"type":"TOPIC_RECORD","version":0,"data":{"name":"none","topicId":"pcgBguOASiq3ujkTrGu_Qw"}}`,
		`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"none","name":"retention.ms","value":"3600000"}}`,
		`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"none","name":"cleanup.policy","value":"compact"}}`,
		`{"type":"CONFIG_RECORD","version":0,"data":{"resourceType":2,"resourceName":"none","name":"cleanup.policy","value":null}}`,
	} {
		v, err := internaltopic.EncodeMetadataJSON([]byte(js))
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, format.Record{Value: v, Timestamp: 1700000000000 + int64(i)})
	}
	if _, err := a.Append(&produce.Batch{Records: recs}); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	_, addr := startServer(t, Config{LogDir: dir})
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	cs := topicConfigMap(t, adm, "none")
	if c := cs["retention.ms"]; *c.Value != "3600000" || c.Source != kmsg.ConfigSourceDynamicTopicConfig {
		t.Errorf("retention.ms: %+v", c)
	}
	if c := cs["cleanup.policy"]; *c.Value != "delete" || c.Source != kmsg.ConfigSourceDefaultConfig {
		t.Errorf("cleanup.policy (deleted in the log): %+v", c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	res, err := adm.AlterTopicConfigs(ctx, []kadm.AlterConfig{{Op: kadm.SetConfig, Name: "retention.ms", Value: kmsg.StringPtr("1")}}, "none")
	if r, _ := res.On("none", nil); err != nil || !errors.Is(r.Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("read-only alter: %v %v", err, r.Err)
	}
	// v0's is-default flag.
	req := kmsg.NewPtrDescribeConfigsRequest()
	req.Version = 0
	rr := kmsg.NewDescribeConfigsRequestResource()
	rr.ResourceType, rr.ResourceName, rr.ConfigNames = kmsg.ConfigResourceTypeTopic, "none", []string{"retention.ms", "segment.ms"}
	req.Resources = append(req.Resources, rr)
	resp, err := req.RequestWith(ctx, mustKgo(t, addr, kgoMaxVersion(32, 0)))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, c := range resp.Resources[0].Configs {
		got[c.Name] = c.IsDefault
	}
	if len(got) != 2 || got["retention.ms"] || !got["segment.ms"] {
		t.Errorf("v0 is-default: %v", got)
	}
}

// kgoMaxVersion caps one key's version a kgo client sends.
func kgoMaxVersion(key, v int16) kgo.Opt {
	vs := kversion.Stable()
	vs.SetMaxKeyVersion(key, v)
	return kgo.MaxVersions(vs)
}
