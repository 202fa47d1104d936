package inspect

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"math"
	"math/bits"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/verify"
)

// This file is `klog stats`: distributions and mixes over the batches of
// many segments, computed in one streaming pass with bounded memory.
//
// Percentiles come from exact counts in a log-linear histogram (values 0..31
// have a bucket each; above that every power of two is split into 16
// buckets, 960 counters in all). A percentile is the upper bound of the
// bucket holding the nearest-rank value, clamped to the observed min and
// max: exact below 32 and never more than 1/16 (6.25%) above the true
// value. Min, max and mean are exact. Producers and hours are kept in maps
// capped by StatsOptions; what does not fit is counted apart.

// Defaults for StatsOptions.
const (
	DefaultStatsMaxProducers = 100_000
	DefaultStatsMaxHours     = 100_000 // about 11 years of hourly buckets
	maxStatsProblems         = 100
	maxProducerEpochs        = 32
	msPerHour                = 3_600_000
)

// StatsOptions configures CollectStats.
type StatsOptions struct {
	// MaxBatchBytes and MaxDecompressedBytes bound memory per batch
	// (0: the format defaults).
	MaxBatchBytes        int
	MaxDecompressedBytes int
	// MaxProducers caps the distinct producer ids tracked (0:
	// DefaultStatsMaxProducers); batches of further producers are counted
	// in ProducerStats.OtherBatches.
	MaxProducers int
	// OnBytes, if set, is told how many bytes of the segments have been
	// read, as they are read (for progress); the calls add up to the
	// segments' sizes.
	OnBytes func(n int64)
	// MaxHours caps the distinct hour buckets (0: DefaultStatsMaxHours);
	// further bytes go to StatsReport.OtherHoursBytes.
	MaxHours int
}

// StatsReport is the result of CollectStats, and the JSON object
// `klog stats --json` writes (its tags are the schema).
type StatsReport struct {
	Type  string `json:"type"` // "stats"
	Files int    `json:"files"`
	// Unreadable lists the partition directories that could not be read
	// (reported, the rest counted; the command then exits 2).
	Unreadable []string `json:"unreadable,omitempty"`
	Batches    int64    `json:"batches"`
	Records    int64    `json:"records"`
	// Bytes is the size of all batches on disk.
	Bytes int64 `json:"sizeBytes"`
	// MinTimestamp and MaxTimestamp are the smallest and largest batch max
	// timestamps (epoch ms, -1 when none), MinTime/MaxTime in ISO-8601 UTC.
	MinTimestamp int64  `json:"minTimestamp"`
	MaxTimestamp int64  `json:"maxTimestamp"`
	MinTime      string `json:"minTime"`
	MaxTime      string `json:"maxTime"`
	// BatchBytes is the distribution of batch sizes on disk (LogOverhead +
	// batchLength), RecordsPerBatch that of records per batch.
	BatchBytes      Distribution `json:"batchBytes"`
	RecordsPerBatch Distribution `json:"recordsPerBatch"`
	// Codecs has one entry per codec seen, in codec id order.
	Codecs []CodecStats `json:"codecs"`
	// Producers describes the idempotent and transactional producers.
	Producers ProducerStats `json:"producers"`
	// Control and transactional batches and records, and their share of
	// all batches and records (0..1). Transaction markers are control
	// batches that are also transactional.
	ControlBatches           int64   `json:"controlBatches"`
	ControlRecords           int64   `json:"controlRecords"`
	ControlBatchShare        float64 `json:"controlBatchShare"`
	ControlRecordShare       float64 `json:"controlRecordShare"`
	TransactionalBatches     int64   `json:"transactionalBatches"`
	TransactionalRecords     int64   `json:"transactionalRecords"`
	TransactionalBatchShare  float64 `json:"transactionalBatchShare"`
	TransactionalRecordShare float64 `json:"transactionalRecordShare"`
	// Hours are the bytes of batches per UTC hour of their max timestamp,
	// in time order. Batches without a timestamp (v0) are counted in
	// NoTimestampBatches/Bytes, and those past MaxHours buckets in
	// OtherHoursBatches/Bytes.
	Hours              []HourStats `json:"hours"`
	NoTimestampBatches int64       `json:"noTimestampBatches"`
	NoTimestampBytes   int64       `json:"noTimestampBytes"`
	OtherHoursBatches  int64       `json:"otherHoursBatches"`
	OtherHoursBytes    int64       `json:"otherHoursBytes"`
	// Problems lists the first data problems met (CRC mismatches, a magic
	// other than 0 to 2, unreadable batches,
	// undecompressable records, bytes after the last batch); ProblemCount
	// counts them all. Any problem makes `klog stats` exit 1.
	Problems     []verify.Problem `json:"problems"`
	ProblemCount int              `json:"problemCount"`
}

// Distribution summarises a set of non-negative integers; see the file
// comment for how the percentiles are computed.
type Distribution struct {
	Count int64   `json:"count"`
	Min   int64   `json:"min"`
	P50   int64   `json:"p50"`
	P90   int64   `json:"p90"`
	P99   int64   `json:"p99"`
	Max   int64   `json:"max"`
	Mean  float64 `json:"mean"`
}

// CodecStats is the mix of one codec. StoredBytes is the records region as
// stored (v2: the batch after its 61-byte header; legacy compressed: the
// wrapper's value; legacy plain: the whole message) and RecordBytes the
// same once decompressed; Ratio is RecordBytes/StoredBytes (1 for none).
// Batches whose records could not be decompressed are counted in
// Undecodable and left out of the byte counts.
type CodecStats struct {
	Codec       string  `json:"codec"`
	Batches     int64   `json:"batches"`
	Records     int64   `json:"records"`
	BatchBytes  int64   `json:"batchBytes"`
	StoredBytes int64   `json:"storedBytes"`
	RecordBytes int64   `json:"recordBytes"`
	Ratio       float64 `json:"ratio"`
	Undecodable int64   `json:"undecodable"`
}

// ProducerStats: Distinct producer ids and (id, epoch) pairs among v2
// batches with a producer id; NoProducerBatches have none (producerId -1,
// or legacy). List is sorted by producer id; when more than MaxProducers
// ids appear, Truncated is set and the rest are OtherBatches.
type ProducerStats struct {
	Distinct          int            `json:"distinct"`
	DistinctEpochs    int            `json:"distinctEpochs"`
	NoProducerBatches int64          `json:"noProducerBatches"`
	OtherBatches      int64          `json:"otherBatches"`
	Truncated         bool           `json:"truncated"`
	List              []ProducerStat `json:"list"`
}

// ProducerStat is one producer id: its epochs (sorted; at most 32 kept,
// EpochsTruncated beyond), batches and records.
type ProducerStat struct {
	ProducerID      int64   `json:"producerId"`
	Epochs          []int16 `json:"epochs"`
	EpochsTruncated bool    `json:"epochsTruncated,omitempty"`
	Batches         int64   `json:"batches"`
	Records         int64   `json:"records"`
}

// HourStats is one UTC hour: Hour is its start in ISO-8601, HourMs in epoch
// ms; the batches whose max timestamp falls in it, their records and bytes.
type HourStats struct {
	Hour    string `json:"hourTime"`
	HourMs  int64  `json:"hourTimestamp"`
	Batches int64  `json:"batches"`
	Records int64  `json:"records"`
	Bytes   int64  `json:"sizeBytes"`
}

// StatsFiles expands paths into the segments to read: a file is read as a
// log whatever its name; a partition directory gives its .log files in
// offset order, a log directory those of every partition.
func StatsFiles(paths []string) ([]string, error) {
	files, _, err := statsFiles(paths)
	return files, err
}

// statsFiles is StatsFiles that goes on past unreadable partition
// directories, returning their errors.
func statsFiles(paths []string) ([]string, []error, error) {
	var out []string
	var skipped []error
	for _, p := range paths {
		args, err := partition.Expand([]string{p})
		if err != nil {
			// Unreadable or missing: report it, go on with the rest (exit 2
			// at the end, README "Exit codes").
			skipped = append(skipped, &dump.IOError{Path: p, Err: err})
			continue
		}
		dirs := []string{p}
		switch args[0].Kind {
		case partition.ArgFile:
			if !statsSegmentFile(p) {
				// An index, a snapshot, /etc/passwd: not something stats
				// can read as a log; an error (exit 2), never garbage
				// findings (README, "What a file is").
				skipped = append(skipped, &dump.IOError{Path: p, Err: errors.New("not a log segment (stats reads .log segments, partition directories and log directories)")})
				continue
			}
			out = append(out, p)
			continue
		case partition.ArgStdin:
			return nil, nil, &dump.IOError{Path: p, Err: errors.New("stats reads files and directories, not a stream")}
		case partition.ArgLogDir:
			dirs = args[0].LogDir.Partitions
		}
		for _, dp := range dirs {
			d, err := partition.Open(dp)
			if err != nil {
				skipped = append(skipped, &dump.IOError{Path: dp, Err: err})
				continue
			}
			for _, s := range d.Segments {
				if s.Log != "" {
					out = append(out, s.Log)
				}
			}
			// A KRaft snapshot is batches too, as stats of the file reads
			// it: a __cluster_metadata copy holding only its snapshot
			// was "no segment found".
			for _, o := range d.Other {
				if _, _, ok := partition.ParseKRaftSnapshotName(filepath.Base(o)); ok {
					out = append(out, o)
				}
			}
		}
	}
	return out, skipped, nil
}

// statsSegmentFile reports whether a file named on the command line is
// read as a segment: a .log (also Kafka's .log.deleted, .log.cleaned and
// .log.swap), or a file whose name says nothing but whose first bytes are a
// plausible entry header, as verify takes one.
func statsSegmentFile(p string) bool {
	name := filepath.Base(p)
	for _, m := range []string{".deleted", ".cleaned", ".swap"} {
		name = strings.TrimSuffix(name, m)
	}
	if strings.HasSuffix(name, partition.LogSuffix) {
		return true
	}
	f, err := os.Open(p)
	if err != nil {
		return true // the read reports the error
	}
	defer f.Close()
	var h [format.HeaderSizeUpToMagic]byte
	if _, err := io.ReadFull(f, h[:]); err != nil {
		return false
	}
	return format.LooksLikeSegment(h[:])
}

// CollectStats reads the batches of paths (see StatsFiles) once. The error
// is for I/O trouble; data problems are in StatsReport.Problems.
func CollectStats(ctx context.Context, paths []string, opts StatsOptions) (*StatsReport, error) {
	files, skipped, err := statsFiles(paths)
	if err != nil {
		return nil, err
	}
	c := newStatsCollector(opts)
	for _, e := range skipped {
		c.rep.Unreadable = append(c.rep.Unreadable, e.Error())
	}
	for _, p := range files {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := c.addFile(p); err != nil {
			return nil, err
		}
	}
	return c.report(), nil
}

type codecAcc struct {
	CodecStats
	seen bool
}

type producerAcc struct {
	epochs          []int16
	epochsTruncated bool
	batches         int64
	records         int64
}

type hourAcc struct{ batches, records, bytes int64 }

type statsCollector struct {
	opts      StatsOptions
	rep       StatsReport
	sizes     statsHist
	perBatch  statsHist
	codecs    [8]codecAcc
	producers map[int64]*producerAcc
	hours     map[int64]*hourAcc
	sc        *format.Scanner
	ps        []verify.Problem
	rr        format.RecordReader
	rec       format.Record
}

func newStatsCollector(opts StatsOptions) *statsCollector {
	if opts.MaxProducers <= 0 {
		opts.MaxProducers = DefaultStatsMaxProducers
	}
	if opts.MaxHours <= 0 {
		opts.MaxHours = DefaultStatsMaxHours
	}
	c := &statsCollector{opts: opts, producers: map[int64]*producerAcc{}, hours: map[int64]*hourAcc{}}
	c.rep = StatsReport{Type: "stats", MinTimestamp: -1, MaxTimestamp: -1}
	c.rr.Decompressor.MaxBytes = opts.MaxDecompressedBytes
	return c
}

func (c *statsCollector) problem(p verify.Problem) {
	c.rep.ProblemCount++
	if len(c.rep.Problems) < maxStatsProblems {
		c.rep.Problems = append(c.rep.Problems, p)
	}
}

func (c *statsCollector) addFile(path string) error {
	f, size, err := safeio.OpenSized(path)
	if err != nil {
		return &dump.IOError{Path: path, Err: err}
	}
	defer f.Close()
	if c.opts.OnBytes != nil {
		pr := safeio.NewProgressReaderAt(f, c.opts.OnBytes)
		defer pr.Done(size)
		return c.add(path, pr, size)
	}
	return c.add(path, f, size)
}

// add reads one segment.
func (c *statsCollector) add(path string, r io.ReaderAt, size int64) error {
	c.rep.Files++
	if c.sc == nil {
		c.sc = format.NewScanner(r, size, format.ScanOptions{MaxBatchBytes: c.opts.MaxBatchBytes})
	} else {
		c.sc.Reset(r, size)
	}
	for {
		b, err := c.sc.Next()
		if err != nil {
			if errors.Is(err, io.EOF) {
				break
			}
			var pe *format.PosError
			if !errors.As(err, &pe) {
				return &dump.IOError{Path: path, Err: err}
			}
			// A zero tail is a preallocated segment, not damage.
			if !c.sc.Done() || c.sc.Tail().Kind != format.TailZeros {
				c.problem(verify.Problem{Path: path, Kind: viewScanProblemKind(pe), Position: pe.Pos, Offset: pe.Offset, Message: pe.Error()})
			}
			if c.sc.Done() {
				break
			}
			continue
		}
		c.batch(path, b)
	}
	if t := c.sc.Tail(); t.Kind != format.TailNone && t.Kind != format.TailZeros && t.Kind != format.TailCorrupt {
		// A corrupt tail was reported with its error above; a zero tail
		// is a preallocated segment.
		p := verify.TailProblem(r, t)
		p.Path = path
		c.problem(p)
	}
	return nil
}

// recordWalk is what walkRecords saw of a batch's records.
type recordWalk struct {
	first, n, bytes int64 // first offset (the batch's base when none), records, their encoded bytes
	problem         *verify.Problem
}

// walkRecords decodes a batch's records as Kafka's iterator does (a
// compressed batch is decompressed and decoded whole first): a batch
// whose records do not decode (an unknown codec, a stream that does not
// decompress, a count its records do not fill, a varint that runs on) is
// a finding with verify's kind, not a number. The views that count
// records (segments, stats) both go through it.
func walkRecords(rr *format.RecordReader, rec *format.Record, path string, b *format.Batch) recordWalk {
	w := recordWalk{first: b.BaseOffset}
	err := rr.Reset(b)
	for err == nil {
		if err = rr.Next(rec); err != nil {
			break
		}
		if w.n == 0 {
			w.first = rec.Offset
		}
		w.n++
		w.bytes += int64(rec.SizeInBytes)
	}
	if err != nil && !errors.Is(err, io.EOF) {
		p := verify.ProblemAt(err, verify.StageRecords, b.Pos, b.BaseOffset)
		p.Path = path
		w.problem = &p
	}
	return w
}

func (c *statsCollector) batch(path string, b *format.Batch) {
	c.ps = verify.BatchProblems(c.ps[:0], b)
	for _, p := range c.ps {
		p.Path = path
		c.problem(p)
	}
	size := b.Size()
	codec := b.Compression()
	acc := &c.codecs[uint8(codec)&7]
	acc.seen = true
	var n, stored, decoded int64
	ok := true
	switch {
	case b.IsV2():
		n = max(0, int64(b.RecordCount))
		stored = size - format.BatchHeaderSize
		w := walkRecords(&c.rr, &c.rec, path, b)
		decoded, ok = w.bytes, w.problem == nil
		if !ok {
			c.problem(*w.problem)
		}
	case codec == format.CompressionNone:
		n, stored, decoded = 1, size, size
	default:
		stored = statsLegacyValueLen(b)
		w := walkRecords(&c.rr, &c.rec, path, b)
		n, decoded, ok = w.n, w.bytes, w.problem == nil
		if !ok {
			c.problem(*w.problem)
		}
	}
	acc.Batches++
	acc.Records += n
	acc.BatchBytes += size
	if ok {
		acc.StoredBytes += stored
		acc.RecordBytes += decoded
	} else {
		acc.Undecodable++
	}

	r := &c.rep
	r.Batches++
	r.Records += n
	r.Bytes += size
	c.sizes.add(size)
	c.perBatch.add(n)
	if b.IsControl() {
		r.ControlBatches++
		r.ControlRecords += n
	}
	if b.IsTransactional() {
		r.TransactionalBatches++
		r.TransactionalRecords += n
	}
	c.producer(b, n)
	ts := b.MaxTimestamp
	if ts < 0 {
		r.NoTimestampBatches++
		r.NoTimestampBytes += size
		return
	}
	if r.MinTimestamp < 0 || ts < r.MinTimestamp {
		r.MinTimestamp = ts
	}
	r.MaxTimestamp = max(r.MaxTimestamp, ts)
	h := ts / msPerHour
	ha := c.hours[h]
	if ha == nil {
		if len(c.hours) >= c.opts.MaxHours {
			r.OtherHoursBatches++
			r.OtherHoursBytes += size
			return
		}
		ha = &hourAcc{}
		c.hours[h] = ha
	}
	ha.batches++
	ha.records += n
	ha.bytes += size
}

func (c *statsCollector) producer(b *format.Batch, n int64) {
	ps := &c.rep.Producers
	if !b.IsV2() || b.ProducerID < 0 {
		ps.NoProducerBatches++
		return
	}
	p := c.producers[b.ProducerID]
	if p == nil {
		if len(c.producers) >= c.opts.MaxProducers {
			ps.Truncated = true
			ps.OtherBatches++
			return
		}
		p = &producerAcc{}
		c.producers[b.ProducerID] = p
	}
	p.batches++
	p.records += n
	i := sort.Search(len(p.epochs), func(i int) bool { return p.epochs[i] >= b.ProducerEpoch })
	if i < len(p.epochs) && p.epochs[i] == b.ProducerEpoch {
		return
	}
	if len(p.epochs) >= maxProducerEpochs {
		p.epochsTruncated = true
		return
	}
	p.epochs = append(p.epochs, 0)
	copy(p.epochs[i+1:], p.epochs[i:])
	p.epochs[i] = b.ProducerEpoch
}

// statsLegacyValueLen is the value length of a v0/v1 message (a compressed
// wrapper's compressed inner message set), or 0 if the message is too short
// to hold one. Layout after the 12-byte overhead: crc(4) magic(1)
// attributes(1) [timestamp(8), v1] keyLength(4) key valueLength(4).
func statsLegacyValueLen(b *format.Batch) int64 {
	raw := b.Raw
	p := format.LogOverhead + 6
	if b.Magic >= format.MagicV1 {
		p += 8
	}
	if len(raw) < p+4 {
		return 0
	}
	if k := int32(binary.BigEndian.Uint32(raw[p:])); k > 0 {
		p += int(k)
	}
	p += 4
	if p < 0 || len(raw) < p+4 {
		return 0
	}
	return max(0, int64(int32(binary.BigEndian.Uint32(raw[p:]))))
}

func (c *statsCollector) report() *StatsReport {
	r := c.rep
	r.MinTime, r.MaxTime = viewISO(r.MinTimestamp), viewISO(r.MaxTimestamp)
	r.BatchBytes = c.sizes.distribution()
	r.RecordsPerBatch = c.perBatch.distribution()
	r.ControlBatchShare = statsShare(r.ControlBatches, r.Batches)
	r.ControlRecordShare = statsShare(r.ControlRecords, r.Records)
	r.TransactionalBatchShare = statsShare(r.TransactionalBatches, r.Batches)
	r.TransactionalRecordShare = statsShare(r.TransactionalRecords, r.Records)
	r.Codecs = []CodecStats{}
	for i := range c.codecs {
		a := c.codecs[i]
		if !a.seen {
			continue
		}
		a.Codec = format.Compression(i).String()
		a.Ratio = 1
		if a.StoredBytes > 0 {
			a.Ratio = math.Round(float64(a.RecordBytes)/float64(a.StoredBytes)*1000) / 1000
		}
		r.Codecs = append(r.Codecs, a.CodecStats)
	}
	ids := make([]int64, 0, len(c.producers))
	for id := range c.producers {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	r.Producers.List = make([]ProducerStat, 0, len(ids))
	for _, id := range ids {
		p := c.producers[id]
		r.Producers.List = append(r.Producers.List, ProducerStat{ProducerID: id, Epochs: p.epochs, EpochsTruncated: p.epochsTruncated, Batches: p.batches, Records: p.records})
		r.Producers.DistinctEpochs += len(p.epochs)
	}
	r.Producers.Distinct = len(ids)
	hs := make([]int64, 0, len(c.hours))
	for h := range c.hours {
		hs = append(hs, h)
	}
	sort.Slice(hs, func(i, j int) bool { return hs[i] < hs[j] })
	r.Hours = make([]HourStats, 0, len(hs))
	for _, h := range hs {
		a := c.hours[h]
		r.Hours = append(r.Hours, HourStats{Hour: statsISOHour(h * msPerHour), HourMs: h * msPerHour, Batches: a.batches, Records: a.records, Bytes: a.bytes})
	}
	if r.Problems == nil {
		r.Problems = []verify.Problem{}
	}
	return &r
}

func statsISOHour(ms int64) string {
	s := viewISO(ms)
	if len(s) == len("2006-01-02T15:04:05.000Z") {
		return s[:len("2006-01-02T15")] + ":00:00Z"
	}
	return s
}

func statsShare(part, whole int64) float64 {
	if whole == 0 {
		return 0
	}
	return math.Round(float64(part)/float64(whole)*10000) / 10000
}

// statsHist is the log-linear histogram described in the file comment.
type statsHist struct {
	counts   [histBuckets]uint64
	n        int64
	sum      float64
	min, max int64
}

const (
	histLinear  = 32 // values below have a bucket each
	histSubBits = 4  // 16 buckets per power of two above
	histBuckets = histLinear + (63-5)*(1<<histSubBits)
)

func histBucket(v uint64) int {
	if v < histLinear {
		return int(v)
	}
	e := bits.Len64(v) - 1 // >= 5
	sub := int(v>>(e-histSubBits)) & (1<<histSubBits - 1)
	return histLinear + (e-5)<<histSubBits + sub
}

// histUpper is the largest value bucket i holds.
func histUpper(i int) uint64 {
	if i < histLinear {
		return uint64(i)
	}
	e := (i-histLinear)>>histSubBits + 5
	sub := uint64((i - histLinear) & (1<<histSubBits - 1))
	lower := uint64(1)<<e | sub<<(e-histSubBits)
	return lower + uint64(1)<<(e-histSubBits) - 1
}

func (h *statsHist) add(v int64) {
	v = max(v, 0)
	if h.n == 0 || v < h.min {
		h.min = v
	}
	h.max = max(h.max, v)
	h.n++
	h.sum += float64(v)
	h.counts[histBucket(uint64(v))]++
}

// quantile is the nearest-rank q-quantile (0 < q <= 1), as the upper bound
// of its bucket clamped to [min, max].
func (h *statsHist) quantile(q float64) int64 {
	if h.n == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.n)))
	rank = max(rank, 1)
	var cum uint64
	for i, c := range h.counts {
		cum += c
		if cum >= rank {
			return min(max(int64(histUpper(i)), h.min), h.max)
		}
	}
	return h.max
}

func (h *statsHist) distribution() Distribution {
	d := Distribution{Count: h.n, Min: h.min, Max: h.max,
		P50: h.quantile(0.50), P90: h.quantile(0.90), P99: h.quantile(0.99)}
	if h.n > 0 {
		d.Mean = math.Round(h.sum/float64(h.n)*100) / 100
	}
	return d
}

// WriteStatsJSON writes the report as one JSON object on one line.
func WriteStatsJSON(w io.Writer, r *StatsReport) error {
	return json.NewEncoder(w).Encode(r)
}

// WriteStatsTable writes the report for people: a summary, the
// distributions, the codec mix, the top producers by batches (at most top;
// 0: all) and the bytes per hour, each under a title line.
func WriteStatsTable(w io.Writer, r *StatsReport, top int) error {
	pct := func(v float64) string { return strconv.FormatFloat(v*100, 'f', 2, 64) + "%" }
	summary := [][]string{
		{"files", strconv.Itoa(r.Files)},
		{"batches", viewItoa(r.Batches)},
		{"records", viewItoa(r.Records)},
		{"bytes", dump.ViewBytes(r.Bytes)},
		{"first batch time", viewTimeText(r.MinTimestamp)},
		{"last batch time", viewTimeText(r.MaxTimestamp)},
		{"control", viewItoa(r.ControlBatches) + " batches (" + pct(r.ControlBatchShare) + "), " + viewItoa(r.ControlRecords) + " records (" + pct(r.ControlRecordShare) + ")"},
		{"transactional", viewItoa(r.TransactionalBatches) + " batches (" + pct(r.TransactionalBatchShare) + "), " + viewItoa(r.TransactionalRecords) + " records (" + pct(r.TransactionalRecordShare) + ")"},
		{"producers", strconv.Itoa(r.Producers.Distinct) + " ids, " + strconv.Itoa(r.Producers.DistinctEpochs) + " (id, epoch) pairs; " +
			viewItoa(r.Producers.NoProducerBatches) + " batches without a producer id"},
		{"problems", strconv.Itoa(r.ProblemCount)},
	}
	if r.Producers.Truncated {
		summary[8][1] += "; more ids than tracked: " + viewItoa(r.Producers.OtherBatches) + " batches uncounted by id"
	}
	if err := statsSection(w, "Summary", []string{"", "value"}, summary); err != nil {
		return err
	}
	// One row per statistic: tablewriter would split a "p50" header.
	bb, rb := r.BatchBytes, r.RecordsPerBatch
	dist := [][]string{
		{"min", bytesCell(bb.Min), viewItoa(rb.Min)},
		{"p50", bytesCell(bb.P50), viewItoa(rb.P50)},
		{"p90", bytesCell(bb.P90), viewItoa(rb.P90)},
		{"p99", bytesCell(bb.P99), viewItoa(rb.P99)},
		{"max", bytesCell(bb.Max), viewItoa(rb.Max)},
		{"mean", strconv.FormatFloat(bb.Mean, 'f', 2, 64), strconv.FormatFloat(rb.Mean, 'f', 2, 64)},
	}
	if err := statsSection(w, "Distributions (percentiles within 6.25%, from a log-linear histogram)",
		[]string{"", "batch bytes", "records per batch"}, dist); err != nil {
		return err
	}
	var codecs [][]string
	for _, c := range r.Codecs {
		codecs = append(codecs, []string{c.Codec, viewItoa(c.Batches), viewItoa(c.Records), bytesCell(c.BatchBytes), bytesCell(c.StoredBytes),
			bytesCell(c.RecordBytes), strconv.FormatFloat(c.Ratio, 'f', 3, 64), viewItoa(c.Undecodable)})
	}
	if err := statsSection(w, "Codecs (ratio = record bytes / stored bytes)",
		[]string{"codec", "batches", "records", "batch bytes", "stored bytes", "record bytes", "ratio", "undecodable"}, codecs); err != nil {
		return err
	}
	if len(r.Producers.List) > 0 {
		list := append([]ProducerStat(nil), r.Producers.List...)
		sort.SliceStable(list, func(i, j int) bool { return list[i].Batches > list[j].Batches })
		title := "Producers"
		if top > 0 && len(list) > top {
			title += " (top " + strconv.Itoa(top) + " of " + strconv.Itoa(len(list)) + " by batches)"
			list = list[:top]
		}
		var rows [][]string
		for _, p := range list {
			ep := make([]string, len(p.Epochs))
			for i, e := range p.Epochs {
				ep[i] = strconv.Itoa(int(e))
			}
			es := strings.Join(ep, ",")
			if p.EpochsTruncated {
				es += ",…"
			}
			rows = append(rows, []string{viewItoa(p.ProducerID), es, viewItoa(p.Batches), viewItoa(p.Records)})
		}
		if err := statsSection(w, title, []string{"producer id", "epochs", "batches", "records"}, rows); err != nil {
			return err
		}
	}
	var hours [][]string
	for _, h := range r.Hours {
		hours = append(hours, []string{h.Hour, viewItoa(h.Batches), bytesCell(h.Bytes)})
	}
	if r.NoTimestampBatches > 0 {
		hours = append(hours, []string{"no timestamp", viewItoa(r.NoTimestampBatches), bytesCell(r.NoTimestampBytes)})
	}
	if r.OtherHoursBatches > 0 {
		hours = append(hours, []string{"other hours (over the bucket cap)", viewItoa(r.OtherHoursBatches), bytesCell(r.OtherHoursBytes)})
	}
	if err := statsSection(w, "Bytes per hour (UTC, by batch max timestamp)", []string{"hour", "batches", "bytes"}, hours); err != nil {
		return err
	}
	for _, p := range r.Problems {
		if _, err := io.WriteString(w, "  "+string(p.Kind)+": "+p.Path+" at position "+viewItoa(p.Position)+": "+p.Message+"\n"); err != nil {
			return err
		}
	}
	if r.ProblemCount > len(r.Problems) {
		_, err := io.WriteString(w, "  … and "+strconv.Itoa(r.ProblemCount-len(r.Problems))+" more problems\n")
		return err
	}
	return nil
}

func statsSection(w io.Writer, title string, header []string, rows [][]string) error {
	if _, err := io.WriteString(w, title+"\n"); err != nil {
		return err
	}
	return dump.WriteTable(w, header, rows)
}
