package serve

import (
	"bytes"
	"testing"
)

// TestTailCopy: the copy of the last batch produced answers only a read of
// exactly its range of its segment, with its bytes; a batch too large to
// copy leaves nothing to answer from.
func TestTailCopy(t *testing.T) {
	var tc tailCopy
	raw := []byte("0123456789")
	tc.set("a.log", 100, raw)
	raw[0] = 'x' // the request buffer, reused: the copy is the batch's
	dst := make([]byte, 10)
	if !tc.copyTo("a.log", 100, dst) || !bytes.Equal(dst, []byte("0123456789")) {
		t.Fatalf("copyTo of the batch's range: %q", dst)
	}
	for _, c := range []struct {
		file string
		pos  int64
		n    int
	}{{"b.log", 100, 10}, {"a.log", 99, 10}, {"a.log", 100, 9}, {"a.log", 100, 11}} {
		if tc.copyTo(c.file, c.pos, make([]byte, c.n)) {
			t.Errorf("copyTo(%s, %d, %d bytes) answered from the copy of a.log 100+10", c.file, c.pos, c.n)
		}
	}
	big := make([]byte, tailCopyMax+1)
	tc.set("a.log", 110, big)
	if tc.copyTo("a.log", 110, make([]byte, len(big))) || tc.copyTo("a.log", 100, dst) {
		t.Error("a batch over tailCopyMax is answered from a copy")
	}
}
