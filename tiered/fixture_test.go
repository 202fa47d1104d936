package tiered

// Fixtures built at test time from the Kafka-written ones: the Aiven
// variants the shared fixtures keep back (zstd alone, encryption alone),
// written the way the plugin's upload path writes them
// (KafkaRemoteStorageManager.uploadSegmentLog, transformation,
// uploadIndexes/transformIndex, uploadManifest; CompressionChunkEnumeration,
// EncryptionChunkEnumeration, TransformFinisher, ChunkSizesBinaryCodec,
// TransformedChunksSerializer), checked by writing the plain variant again
// and comparing it byte for byte with the plugin's; and a corrupted copy for
// every finding.

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha3"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// copyTree copies src to a new temporary directory and returns it.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// aivenConfig is the plugin's settings the generator follows.
type aivenConfig struct {
	chunkSize int
	compress  bool
	encrypt   bool
	keyID     string
	pub       *rsa.PublicKey
	rand      io.Reader
}

// aivenUpload writes one segment's three objects under base (a path
// without suffix) from its LocalTieredStorage files at src (a path without
// suffix), with md as the manifest's remoteLogSegmentMetadata.
func aivenUpload(t testing.TB, src, base string, md json.RawMessage, cfg aivenConfig) {
	t.Helper()
	read := func(sfx string) []byte {
		b, err := os.ReadFile(src + sfx)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return b
	}
	var aead cipher.AEAD
	var enc string
	var aad []byte
	if cfg.encrypt {
		key := make([]byte, 32)
		aad = make([]byte, 32)
		io.ReadFull(cfg.rand, key)
		io.ReadFull(cfg.rand, aad)
		blk, _ := aes.NewCipher(key)
		aead, _ = cipher.NewGCM(blk)
		wrapped, err := rsa.EncryptOAEP(sha3.New512(), cfg.rand, cfg.pub, key, nil)
		if err != nil {
			t.Fatal(err)
		}
		enc = `,"encryption":{"dataKey":"` + cfg.keyID + ":" + base64.StdEncoding.EncodeToString(wrapped) + `","aad":"` + base64.StdEncoding.EncodeToString(aad) + `"}`
	}
	seal := func(p []byte) []byte {
		if aead == nil {
			return p
		}
		iv := make([]byte, ivSize)
		io.ReadFull(cfg.rand, iv)
		return aead.Seal(iv, iv, p, aad)
	}
	zenc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1), zstd.WithSingleSegment(true)) // the frame content size, as setContentSize(true) writes
	log := read(SuffixLog)
	var out []byte
	var sizes []int
	for pos := 0; pos < len(log) || pos == 0 && len(log) == 0; pos += cfg.chunkSize {
		chunk := log[pos:min(pos+cfg.chunkSize, len(log))]
		if cfg.compress {
			chunk = zenc.EncodeAll(chunk, nil)
		}
		chunk = seal(chunk)
		out = append(out, chunk...)
		sizes = append(sizes, len(chunk))
		if len(log) == 0 {
			break
		}
	}
	write := func(sfx string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(base), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(base+sfx, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(SuffixLog, out)
	var ci string
	if cfg.compress {
		raw := encodeChunkSizes(sizes)
		ci = `{"type":"variable","originalChunkSize":` + strconv.Itoa(cfg.chunkSize) + `,"originalFileSize":` + strconv.Itoa(len(log)) +
			`,"transformedChunks":"` + base64.StdEncoding.EncodeToString(zenc.EncodeAll(raw, nil)) + `"}`
	} else {
		ci = `{"type":"fixed","originalChunkSize":` + strconv.Itoa(cfg.chunkSize) + `,"originalFileSize":` + strconv.Itoa(len(log)) +
			`,"transformedChunkSize":` + strconv.Itoa(fixedSize(cfg)) + `,"finalTransformedChunkSize":` + strconv.Itoa(sizes[len(sizes)-1]) + `}`
	}
	// The indexes, each one encrypted chunk (never compressed), in
	// OFFSET, TIMESTAMP, PRODUCER_SNAPSHOT, LEADER_EPOCH, TRANSACTION order.
	var idx []byte
	var ranges []string
	for _, x := range []struct{ name, sfx string }{{"offset", SuffixIndex}, {"timestamp", SuffixTimeIndex}, {"producerSnapshot", SuffixSnapshot},
		{"leaderEpoch", SuffixEpochCheckpoint}, {"transaction", SuffixTxnIndex}} {
		b, err := os.ReadFile(src + x.sfx)
		if os.IsNotExist(err) && x.name == "transaction" {
			ranges = append(ranges, `"transaction":null`)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 {
			b = seal(b)
		}
		ranges = append(ranges, `"`+x.name+`":{"position":`+strconv.Itoa(len(idx))+`,"size":`+strconv.Itoa(len(b))+`}`)
		idx = append(idx, b...)
	}
	write(SuffixIndexes, idx)
	m := `{"version":"1","chunkIndex":` + ci + `,"segmentIndexes":{` + strings.Join(ranges, ",") + `},"compression":` + strconv.FormatBool(cfg.compress) + enc +
		`,"remoteLogSegmentMetadata":` + string(md) + `}`
	write(SuffixManifest, []byte(m))
}

// fixedSize is EncryptionChunkEnumeration's transformed size of a whole
// chunk: IV + ciphertext + tag (or the chunk itself).
func fixedSize(cfg aivenConfig) int {
	if cfg.encrypt {
		return ivSize + cfg.chunkSize + tagSize
	}
	return cfg.chunkSize
}

// encodeChunkSizes is ChunkSizesBinaryCodec.encode.
func encodeChunkSizes(v []int) []byte {
	b := binary.BigEndian.AppendUint32(nil, uint32(len(v)))
	if len(v) == 0 {
		return b
	}
	if len(v) == 1 {
		return binary.BigEndian.AppendUint32(b, uint32(v[0]))
	}
	base := v[0]
	for _, x := range v[:len(v)-1] {
		base = min(base, x)
	}
	per := 1
	for _, x := range v[:len(v)-1] {
		switch d := x - base; {
		case d > 0xFFFFFF:
			per = max(per, 4)
		case d > 0xFFFF:
			per = max(per, 3)
		case d > 0xFF:
			per = max(per, 2)
		}
	}
	b = binary.BigEndian.AppendUint32(b, uint32(base))
	b = append(b, byte(per))
	for _, x := range v[:len(v)-1] {
		var w [4]byte
		binary.BigEndian.PutUint32(w[:], uint32(x-base))
		b = append(b, w[4-per:]...)
	}
	return binary.BigEndian.AppendUint32(b, uint32(v[len(v)-1]))
}

// manifestMetadata is each segment's remoteLogSegmentMetadata from the
// plugin's plain fixture, by base name.
func manifestMetadata(t testing.TB) map[string]json.RawMessage {
	t.Helper()
	out := map[string]json.RawMessage{}
	dir := fixtures + "/aiven/plain/storage/tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0"
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		if !strings.HasSuffix(de.Name(), SuffixManifest) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, de.Name()))
		if err != nil {
			t.Fatal(err)
		}
		var m struct {
			MD json.RawMessage `json:"remoteLogSegmentMetadata"`
		}
		if err := json.Unmarshal(data, &m); err != nil {
			t.Fatal(err)
		}
		out[strings.TrimSuffix(de.Name(), SuffixManifest)] = m.MD
	}
	return out
}

// buildAiven writes an Aiven variant of the clean fixture into a new
// directory laid out as the shared ones (storage/, broker-logdir/).
func buildAiven(t testing.TB, cfg aivenConfig) string {
	t.Helper()
	root := t.TempDir()
	mds := manifestMetadata(t)
	var bases []string
	for b := range mds {
		bases = append(bases, b)
	}
	sort.Strings(bases)
	for _, b := range bases {
		aivenUpload(t, filepath.Join(ltsDir, b), filepath.Join(root, "storage/tiered/orders-b3JkZXJzAAAAAAAAAAAAAg/0", b), mds[b], cfg)
	}
	if err := os.Rename(copyTree(t, fixtures+"/local-tiered/broker-logdir"), filepath.Join(root, "broker-logdir")); err != nil {
		t.Fatal(err)
	}
	return root
}

// TestAivenGeneratorIsThePlugin: the generator writes the plain variant
// byte for byte as the plugin did, so the variants it writes with zstd and
// encryption follow the same code.
func TestAivenGeneratorIsThePlugin(t *testing.T) {
	t.Parallel()
	root := buildAiven(t, aivenConfig{chunkSize: 128})
	got := filepath.Join(root, "storage")
	want := fixtures + "/aiven/plain/storage"
	n := 0
	filepath.WalkDir(want, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(want, p)
		a, _ := os.ReadFile(p)
		b, err := os.ReadFile(filepath.Join(got, rel))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the plugin's (%v)", rel, err)
		}
		n++
		return nil
	})
	if n != 9 {
		t.Errorf("compared %d objects, want 9", n)
	}
}

// fixtureKeyPair is the shared fixtures' key pair (public half from the
// private key).
func fixtureKeyPair(t testing.TB) aivenConfig {
	k := fixtureKeys(t)["key1"]
	return aivenConfig{chunkSize: 128, keyID: "key1", pub: &k.PublicKey, rand: rand.Reader}
}

// TestAivenVariants: zstd alone (variable chunk index) and encryption
// alone (fixed chunk index of 156-byte chunks) read back to the original
// files, and check clean.
func TestAivenVariants(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name           string
		compress, encr bool
		chunkType      string
	}{
		{"zstd", true, false, "variable"},
		{"encrypted", false, true, "fixed"},
		{"zstd-encrypted-1k-chunks", true, true, "variable"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := fixtureKeyPair(t)
			cfg.compress, cfg.encrypt = c.compress, c.encr
			if strings.HasSuffix(c.name, "1k-chunks") {
				cfg.chunkSize = 1024 // one chunk per segment
			}
			root := buildAiven(t, cfg)
			st := dirStore(t, root+"/storage")
			parts := listAll(t, st)
			r := &Remote{Store: st, Keys: fixtureKeys(t), BlockSize: 300}
			for _, seg := range parts[0].Segments {
				m, err := r.ReadManifest(context.Background(), seg.Key(SuffixManifest))
				if err != nil {
					t.Fatal(err)
				}
				if m.ChunkIndex.Type != c.chunkType || m.Compressed != c.compress || (m.Encryption != nil) != c.encr {
					t.Errorf("%s: manifest %+v", seg.Base, m.ChunkIndex)
				}
				if c.chunkType == "fixed" && m.ChunkIndex.TransformedChunkSize != 156 {
					t.Errorf("fixed chunks of %d bytes, want 156 (128 + IV + tag)", m.ChunkIndex.TransformedChunkSize)
				}
				lr, err := r.OpenLog(context.Background(), seg, m)
				if err != nil {
					t.Fatal(err)
				}
				got, err := io.ReadAll(io.NewSectionReader(lr, 0, lr.Size()))
				lr.Close()
				want, _ := os.ReadFile(filepath.Join(ltsDir, filepath.Base(seg.Base)+SuffixLog))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s: read back %d bytes (%v), want the original %d", seg.Base, len(got), err, len(want))
				}
			}
			reps, sum := runFixture(t, root, true)
			if got := kinds(reps, sum); len(got) != 0 {
				t.Errorf("findings on a clean variant: %v", got)
			}
		})
	}
}
