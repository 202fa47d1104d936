package serve

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// TestAlterConfigsStateKadm: the legacy AlterConfigs (kadm's
// AlterTopicConfigsState) replaces a topic's dynamic configs as a whole:
// what it names is set, every dynamic config it leaves out goes back to
// Kafka's default; ValidateOnly changes nothing; a bad value refuses the
// whole resource; a read-only server refuses.
func TestAlterConfigsStateKadm(t *testing.T) {
	_, addr := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0"), Writable: true, StateDir: t.TempDir()})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	adm := kadm.NewClient(mustKgo(t, addr))
	defer adm.Close()
	alter := func(validate bool, cs ...kadm.AlterConfig) error {
		t.Helper()
		f := adm.AlterTopicConfigsState
		if validate {
			f = adm.ValidateAlterTopicConfigsState
		}
		res, err := f(ctx, cs, "none")
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != 1 {
			t.Fatalf("%d responses", len(res))
		}
		return res[0].Err
	}
	check := func(what string, want map[string]string) {
		t.Helper()
		got := topicConfigMap(t, adm, "none")
		for name, v := range want {
			c := got[name]
			src := kmsg.ConfigSourceDynamicTopicConfig
			if v == topicConfigDef(name).def {
				src = kmsg.ConfigSourceDefaultConfig
			}
			if c.Value == nil || *c.Value != v || c.Source != src {
				t.Errorf("%s: %s = %v from %v, want %s from %v", what, name, c.Value, c.Source, v, src)
			}
		}
	}
	cfg := func(name, v string) kadm.AlterConfig { return kadm.AlterConfig{Name: name, Value: kmsg.StringPtr(v)} }

	if err := alter(false, cfg("retention.ms", "1000"), cfg("cleanup.policy", "compact")); err != nil {
		t.Fatal(err)
	}
	check("first", map[string]string{"retention.ms": "1000", "cleanup.policy": "compact"})
	// retention.ms is left out: back to the default.
	if err := alter(false, cfg("cleanup.policy", "delete,compact"), cfg("max.message.bytes", "2000")); err != nil {
		t.Fatal(err)
	}
	check("replaced", map[string]string{"retention.ms": "604800000", "cleanup.policy": "delete,compact", "max.message.bytes": "2000"})
	if err := alter(true, cfg("retention.ms", "5")); err != nil {
		t.Fatal(err)
	}
	check("validate only", map[string]string{"retention.ms": "604800000", "cleanup.policy": "delete,compact", "max.message.bytes": "2000"})
	if err := alter(false, cfg("retention.ms", "5"), cfg("segment.bytes", "200")); !errors.Is(err, kerr.InvalidConfig) {
		t.Errorf("segment.bytes=200: %v, want INVALID_CONFIG", err)
	}
	check("refused", map[string]string{"retention.ms": "604800000", "cleanup.policy": "delete,compact", "max.message.bytes": "2000"})
	// Nothing given: every dynamic config goes.
	if err := alter(false); err != nil {
		t.Fatal(err)
	}
	check("emptied", map[string]string{"cleanup.policy": "delete", "max.message.bytes": "1048588"})

	_, ro := startServer(t, Config{LogDir: fixtureLogDir(t, "none-0")})
	radm := kadm.NewClient(mustKgo(t, ro))
	defer radm.Close()
	res, err := radm.AlterTopicConfigsState(ctx, []kadm.AlterConfig{cfg("retention.ms", "1")}, "none")
	if err != nil || len(res) != 1 || !errors.Is(res[0].Err, kerr.TopicAuthorizationFailed) {
		t.Errorf("read-only: %v %v, want TOPIC_AUTHORIZATION_FAILED", res, err)
	}
}
