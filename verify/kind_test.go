package verify

import (
	"errors"
	"testing"

	"github.com/klog-dev/klog/format"
)

func TestClassify(t *testing.T) {
	pe := func(kind error, field string) error {
		return &format.PosError{Kind: kind, Pos: 7, Offset: 3, Field: field, Msg: "x"}
	}
	d := format.Decompressor{}
	_, codecErr := d.Decompress(format.Compression(5), format.MagicV2, []byte{1}, nil)
	cases := []struct {
		name  string
		err   error
		stage Stage
		want  Kind
	}{
		{"entry too large", pe(format.ErrTooLarge, "batchLength"), StageEntry, KindTooLarge},
		{"entry magic", pe(format.ErrUnsupported, "magic"), StageEntry, KindBadMagic},
		{"entry truncated", pe(format.ErrTruncated, "size"), StageEntry, KindTruncated},
		{"entry size", pe(format.ErrCorrupt, "size"), StageEntry, KindBadLength},
		{"entry not positioned", errors.New("x"), StageEntry, KindBadLength},
		{"records count", pe(format.ErrCorrupt, "recordCount"), StageRecords, KindRecordCount},
		{"records cut", pe(format.ErrTruncated, "headers"), StageRecords, KindRecordCount},
		{"records codec", pe(format.ErrUnsupported, "attributes"), StageRecords, KindUnsupportedCodec},
		{"records decompress", pe(format.ErrCorrupt, "records"), StageRecords, KindDecompress},
		{"records varint", pe(format.ErrCorrupt, "keyLength"), StageRecords, KindRecordDecode},
		{"records not positioned", errors.New("x"), StageRecords, KindRecordDecode},
		{"decompress codec 5", codecErr, StageDecompress, KindUnsupportedCodec},
		{"decompress", errors.New("gzip: invalid header"), StageDecompress, KindDecompress},
	}
	for _, c := range cases {
		if got := Classify(c.err, c.stage); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
	if p := ProblemAt(pe(format.ErrCorrupt, "size"), StageEntry, 0, -1); p.Position != 7 || p.Offset != 3 {
		t.Errorf("ProblemAt took %d/%d, want the error's 7/3", p.Position, p.Offset)
	}
	if codecErr == nil || codecErr.Error() != "Unknown compression type id: 5" {
		t.Errorf("codec 5: %v (Kafka's text)", codecErr)
	}
}
