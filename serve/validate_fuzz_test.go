package serve

import (
	"strings"
	"testing"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/hostile"
)

// FuzzValidateProduce: any partition bytes are refused or are exactly one
// v2 batch with base offset 0, a valid CRC, a count that matches its last
// offset delta and records that all decode: what the log may be given.
func FuzzValidateProduce(f *testing.F) {
	for _, b := range hostile.Produce() {
		f.Add(int16(9), b)
	}
	f.Add(int16(9), rawBatch(f, 0))
	f.Add(int16(6), rawBatch(f, 0))
	srv := &Server{cfg: Config{MaxMessageBytes: 1 << 20, Clock: systemClock{}, MaxDecompressedBytes: 4 << 20}}
	srv.initLimits()
	if err := srv.initMemory(); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, version int16, raw []byte) {
		first, r := checkStructure(version, raw)
		if r != nil {
			if r.code == 0 || r.msg == "" {
				t.Fatalf("a refusal without a code or message: %+v", r)
			}
			return
		}
		b, r := srv.checkBatch("t-0", first, srv.cfg.Clock.Now().UnixMilli())
		if r != nil {
			if r.code == 0 || r.msg == "" {
				t.Fatalf("a refusal without a code or message: %+v", r)
			}
			return
		}
		if !strings.HasPrefix(string(raw), string(first)) || b.Size() != int64(len(first)) || b.BaseOffset != 0 ||
			b.Magic != format.MagicV2 || !b.Valid() || int64(b.LastOffsetDelta)+1 != int64(b.RecordCount) {
			t.Fatalf("accepted a batch the log must not get: %+v", b)
		}
	})
}
