package tiered

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestParseRSMConfig: the plugin's keys are read from server.properties
// (rsm.config.*) or from the plugin's own file, relative key files from the
// file's directory; a file with none of them (a mistyped path, /etc/passwd)
// is an error instead of an empty configuration.
func TestParseRSMConfig(t *testing.T) {
	t.Parallel()
	cfg, err := ParseRSMConfig([]byte("broker.id=1\nrsm.config.key.prefix=tiered/\nrsm.config.encryption.key.pairs.k1.private.key.file=keys/private.pem\n"), "/etc/kafka")
	if err != nil || cfg.KeyPrefix != "tiered/" || cfg.PrivateKeys["k1"] != filepath.Join("/etc/kafka", "keys/private.pem") {
		t.Fatalf("server.properties: %+v, %v", cfg, err)
	}
	if cfg, err := ParseRSMConfig([]byte("storage.root=data\n"), "/x"); err != nil || cfg.Root != "/x/data" {
		t.Errorf("the plugin's own file: %+v, %v", cfg, err)
	}
	if _, err := ParseRSMConfig([]byte("rsm.config.chunk.size=4194304\n"), ""); err != nil {
		t.Errorf("a plugin setting klog does not use: %v", err)
	}
	for _, data := range []string{"root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n", "", "broker.id=1\nlog.dirs=/var/lib/kafka\n"} {
		if _, err := ParseRSMConfig([]byte(data), ""); err == nil || !strings.Contains(err.Error(), "none of the plugin's settings") {
			t.Errorf("%q: %v, want none of the plugin's settings", data, err)
		}
	}
}
