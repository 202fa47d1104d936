package tiered

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// RSMConfig is what klog reads of the Aiven plugin's settings, from a
// broker's server.properties (the rsm.config.* keys) or a file of the bare
// plugin keys (RemoteStorageManagerConfig, S3StorageConfig,
// FileSystemStorageConfig).
type RSMConfig struct {
	// KeyPrefix is key.prefix.
	KeyPrefix string
	// PrivateKeys are encryption.key.pairs.ID.private.key.file by id,
	// relative paths resolved against the file's directory.
	PrivateKeys map[string]string
	// Bucket, Endpoint, Region and PathStyle are the S3 backend's
	// storage.s3.bucket.name, storage.s3.endpoint.url, storage.s3.region
	// and storage.s3.path.style.access.enabled ("" when unset).
	Bucket, Endpoint, Region, PathStyle string
	// Root is the file-system backend's storage.root.
	Root string
}

// ParseRSMConfig reads Java properties lines (key=value or key: value; #
// and ! start comments), keeping the plugin's keys with or without the
// broker's rsm.config. prefix; dir resolves relative key files.
func ParseRSMConfig(data []byte, dir string) (*RSMConfig, error) {
	cfg := &RSMConfig{PrivateKeys: map[string]string{}}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	line, settings := 0, 0
	for sc.Scan() {
		line++
		t := strings.TrimSpace(sc.Text())
		if t == "" || t[0] == '#' || t[0] == '!' {
			continue
		}
		i := strings.IndexAny(t, "=:")
		if i < 0 {
			continue
		}
		k, v := strings.TrimSpace(t[:i]), strings.TrimSpace(t[i+1:])
		plugin := strings.HasPrefix(k, "rsm.config.")
		k = strings.TrimPrefix(k, "rsm.config.")
		switch {
		case k == "key.prefix":
			cfg.KeyPrefix = v
		case strings.HasPrefix(k, "encryption.key.pairs.") && strings.HasSuffix(k, ".private.key.file"):
			id := strings.TrimSuffix(strings.TrimPrefix(k, "encryption.key.pairs."), ".private.key.file")
			if id == "" {
				return nil, errors.New("line " + strconv.Itoa(line) + ": a private key file without a key pair id")
			}
			if !filepath.IsAbs(v) && dir != "" {
				v = filepath.Join(dir, v)
			}
			cfg.PrivateKeys[id] = v
		case k == "storage.s3.bucket.name":
			cfg.Bucket = v
		case k == "storage.s3.endpoint.url":
			cfg.Endpoint = v
		case k == "storage.s3.region":
			cfg.Region = v
		case k == "storage.s3.path.style.access.enabled":
			cfg.PathStyle = v
		case k == "storage.root":
			if !filepath.IsAbs(v) && dir != "" {
				v = filepath.Join(dir, v)
			}
			cfg.Root = v
		default:
			if !plugin {
				continue
			}
		}
		settings++
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if settings == 0 {
		// Not the plugin's file (a mistyped path, /etc/passwd): read as no
		// keys and no location, it left the store to the other flags
		// without a word.
		return nil, errors.New("holds none of the plugin's settings (rsm.config.* keys of server.properties, or its own: key.prefix, encryption.key.pairs.ID.private.key.file, storage.*)")
	}
	return cfg, nil
}

// Location is where the settings put the objects: s3://bucket/key.prefix
// or the file-system root joined with key.prefix's directory ("" when the
// settings name neither).
func (c *RSMConfig) Location() string {
	switch {
	case c.Bucket != "":
		return "s3://" + c.Bucket + "/"
	case c.Root != "":
		return c.Root
	}
	return ""
}

// Keys reads the private keys the settings name.
func (c *RSMConfig) Keys() (KeyRing, error) {
	kr := KeyRing{}
	for id, p := range c.PrivateKeys {
		k, err := ReadPrivateKey(p)
		if err != nil {
			return nil, fmt.Errorf("key pair %s: %w", id, err)
		}
		kr[id] = k
	}
	return kr, nil
}
