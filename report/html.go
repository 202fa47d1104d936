package report

import (
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/base64"
	"encoding/json"
	"html/template"
	"io"
	"math"
	"strconv"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/inspect"
)

// The HTML is html/template's (every value escaped for where it lands: text,
// attribute, the JSON island). What is the same for every partition (the
// overview, the topics, the hours, verify's findings, the replicas, the
// groups, the what-if codecs) is rendered here; each partition's detail is
// a compact JSON island that the page's script turns into its charts when
// the partition is opened, which keeps 10,000 partitions under 5 MB.

//go:embed report.html.tmpl
var pageText string

//go:embed report.css
var pageCSS string

//go:embed report.js
var pageJS string

var page = template.Must(template.New("report").Funcs(template.FuncMap{
	"bytes": dump.ViewBytes,
	"iso":   isoMs,
	"itoa":  func(n int64) string { return strconv.FormatInt(n, 10) },
	"ptr": func(p *int64) string {
		if p == nil {
			return "-"
		}
		return strconv.FormatInt(*p, 10)
	},
	"pct": func(f float64) string { return strconv.FormatFloat(100*f, 'f', 1, 64) + "%" },
	"f1":  func(f float64) string { return strconv.FormatFloat(f, 'f', 1, 64) },
	"css": func() template.CSS { return template.CSS(pageCSS) },
	"dict": func(kv ...any) map[string]any {
		m := map[string]any{}
		for i := 0; i+1 < len(kv); i += 2 {
			m[kv[i].(string)] = kv[i+1]
		}
		return m
	},
	"js": func() template.JS { return template.JS(pageJS) },
}).Parse(pageText))

// view is what the template reads: the report and the charts drawn from
// it.
type view struct {
	*Report
	HourChart   *barChart
	LagChart    *barChart
	WhatIfChart *barChart
	// Detail is the compact JSON of the partitions, gzipped and in
	// base64: the page's script inflates it (DecompressionStream).
	Detail      string
	Lags        []lagRow
	FindingsCut bool
}

// WriteHTML writes the report as one self-contained HTML page.
func WriteHTML(w io.Writer, rep *Report) error {
	detail, err := packed(compactOf(rep))
	if err != nil {
		return err
	}
	v := &view{Report: rep, Detail: detail, FindingsCut: rep.FindingCount > len(rep.Findings)}
	v.HourChart = hourChart(rep.Hours)
	v.Lags = lagRows(rep)
	v.LagChart = lagChart(v.Lags)
	v.WhatIfChart = whatIfChart(rep.WhatIf)
	return page.Execute(w, v)
}

// Chart geometry (SVG user units).
const (
	chartW     = 960
	chartH     = 200
	chartLeft  = 70
	chartBase  = 170
	chartTop   = 10
	maxBars    = 1500 // more hours are drawn in buckets of several hours
	maxLagBars = 200
)

// barChart is a bar chart: one bar per point, each carrying its data in
// attributes (the browser test reads them back).
type barChart struct {
	Bars   []bar
	Ticks  []tick
	Label  string
	Max    int64
	Bucket int64 // hours per bar (hour chart)
	Width  int
}

type bar struct {
	X, Y, W, H float64
	// Key is the bar's x value (an hour's epoch ms, a group/partition),
	// Value its height's value, Value2 a second series (records).
	Key    string
	Value  int64
	Value2 int64
	Title  string
	Dot    float64 // y of the second series' dot
}

type tick struct {
	X, Y  float64
	Label string
}

func hourChart(hours []inspect.HourStats) *barChart {
	if len(hours) == 0 {
		return nil
	}
	first, last := hours[0].HourMs, hours[len(hours)-1].HourMs
	const hour = 3_600_000
	span := (last-first)/hour + 1
	bucket := int64(1)
	for span/bucket > maxBars {
		bucket *= 2
	}
	type acc struct{ bytes, records int64 }
	var keys []int64
	sums := map[int64]*acc{}
	for _, h := range hours {
		k := first + (h.HourMs-first)/(bucket*hour)*(bucket*hour)
		a := sums[k]
		if a == nil {
			a = &acc{}
			sums[k] = a
			keys = append(keys, k)
		}
		a.bytes += h.Bytes
		a.records += h.Records
	}
	var maxB, maxR int64
	for _, a := range sums {
		maxB, maxR = max(maxB, a.bytes), max(maxR, a.records)
	}
	n := span/bucket + 1
	slot := float64(chartW-chartLeft-10) / float64(n)
	c := &barChart{Label: "bytes per hour (bars) and records (dots), UTC", Max: maxB, Bucket: bucket, Width: chartW}
	for _, k := range keys {
		a := sums[k]
		i := (k - first) / (bucket * hour)
		h := scale(a.bytes, maxB)
		x := chartLeft + float64(i)*slot
		c.Bars = append(c.Bars, bar{X: x, Y: chartBase - h, W: math.Max(slot*0.8, 1), H: h,
			Key: strconv.FormatInt(k, 10), Value: a.bytes, Value2: a.records,
			Title: isoMs(k) + ": " + dump.ViewBytes(a.bytes) + " bytes, " + strconv.FormatInt(a.records, 10) + " records",
			Dot:   chartBase - scale(a.records, maxR)})
	}
	c.Ticks = []tick{{X: chartLeft, Y: chartBase + 18, Label: isoMs(first)[:13] + "h"},
		{X: chartLeft + float64(n-1)*slot, Y: chartBase + 18, Label: isoMs(last)[:13] + "h"}}
	return c
}

// scale maps v in [0, top] onto the chart's height.
func scale(v, top int64) float64 {
	if top <= 0 {
		return 0
	}
	return float64(chartBase-chartTop) * float64(v) / float64(top)
}

// lagRow is one committed partition of a group.
type lagRow struct {
	Group, Topic string
	Partition    int32
	Committed    int64
	LogEnd       *int64
	Lag          *int64
	State        string
}

func lagRows(rep *Report) []lagRow {
	if rep.Groups == nil {
		return nil
	}
	var out []lagRow
	for _, g := range rep.Groups.Groups {
		for _, o := range g.Offsets {
			out = append(out, lagRow{Group: g.GroupID, Topic: o.Topic, Partition: o.Partition, Committed: o.Offset,
				LogEnd: o.LogEndOffset, Lag: o.Lag, State: g.State})
		}
	}
	return out
}

func lagChart(rows []lagRow) *barChart {
	var top int64
	n := 0
	for _, r := range rows {
		if r.Lag != nil && n < maxLagBars {
			top = max(top, *r.Lag)
			n++
		}
	}
	if n == 0 {
		return nil
	}
	slot := float64(chartW-chartLeft-10) / float64(n)
	c := &barChart{Label: "lag (committed offset to high watermark) per group and partition", Max: top, Width: chartW}
	i := 0
	for _, r := range rows {
		if r.Lag == nil || i >= maxLagBars {
			continue
		}
		h := scale(*r.Lag, top)
		key := r.Group + " " + r.Topic + "-" + strconv.Itoa(int(r.Partition))
		c.Bars = append(c.Bars, bar{X: chartLeft + float64(i)*slot, Y: chartBase - h, W: math.Max(slot*0.8, 1), H: h,
			Key: key, Value: *r.Lag, Title: key + ": lag " + strconv.FormatInt(*r.Lag, 10)})
		i++
	}
	return c
}

func whatIfChart(w *inspect.WhatIfReport) *barChart {
	if w == nil || w.TodayBytes == 0 {
		return nil
	}
	top := w.TodayBytes
	for _, c := range w.Codecs {
		top = max(top, c.StoredBytes)
	}
	n := len(w.Codecs) + 1
	slot := float64(chartW-chartLeft-10) / float64(n)
	c := &barChart{Label: "stored bytes of the sampled batches: today and per codec", Max: top, Width: chartW}
	add := func(i int, key string, v int64) {
		h := scale(v, top)
		c.Bars = append(c.Bars, bar{X: chartLeft + float64(i)*slot, Y: chartBase - h, W: slot * 0.6, H: h, Key: key, Value: v,
			Title: key + ": " + dump.ViewBytes(v) + " bytes"})
		c.Ticks = append(c.Ticks, tick{X: chartLeft + float64(i)*slot, Y: chartBase + 18, Label: key})
	}
	add(0, "today", w.TodayBytes)
	for i, cd := range w.Codecs {
		add(i+1, cd.Codec, cd.StoredBytes)
	}
	return c
}

// compact is the partitions' detail as the page's script reads it: arrays
// instead of objects and strings by index, so that a partition costs about
// a hundred bytes plus its segments and hours. Every number is the
// Report's (the same values --json writes).
type compact struct {
	// Topics, Codecs, Words (retention reasons) and LogDirs are the
	// strings the partitions point into.
	Topics  []string `json:"t"`
	Codecs  []string `json:"c"`
	Words   []string `json:"w"`
	LogDirs []string `json:"l"`
	Now     int64    `json:"now"`
	// Hour0 is the first hour of the report (epoch ms); hours count from
	// it.
	Hour0 int64 `json:"h0"`
	// Parts: [topic, partition, broker, logDir, sizeBytes, records,
	// logStartOffset, logEndOffset, findings, segments, hours, retention,
	// error word].
	// A segment: [baseOffset, lastOffset, sizeBytes, records, minTimestamp,
	// maxTimestamp, codec bit mask, batches].
	// An hour: [hours since Hour0, sizeBytes, records].
	// A retention verdict: [baseOffset, deletable 0/1, deletableAt (-1:
	// never), why word (the reason when deletable now, else heldBy), active
	// 0/1, sizeBytes].
	Parts [][]any `json:"p"`
}

func compactOf(rep *Report) compact {
	c := compact{Topics: []string{}, Codecs: []string{}, Words: []string{""}, LogDirs: []string{}, Now: rep.Now, Parts: [][]any{}}
	idx := func(list *[]string, seen map[string]int, s string) int {
		if i, ok := seen[s]; ok {
			return i
		}
		seen[s] = len(*list)
		*list = append(*list, s)
		return seen[s]
	}
	topics, codecs, words := map[string]int{}, map[string]int{}, map[string]int{"": 0}
	if len(rep.Hours) > 0 {
		c.Hour0 = rep.Hours[0].HourMs
	}
	for _, ld := range rep.LogDirs {
		c.LogDirs = append(c.LogDirs, ld.Path)
	}
	for _, p := range rep.Partitions {
		segs := make([][]int64, 0, len(p.Segments))
		for _, s := range p.Segments {
			var mask int64
			for _, cd := range s.Codecs {
				mask |= 1 << idx(&c.Codecs, codecs, cd)
			}
			segs = append(segs, []int64{s.BaseOffset, s.LastOffset, s.SizeBytes, s.Records, s.MinTimestamp, s.MaxTimestamp, mask, s.Batches})
		}
		hours := make([][]int64, 0, len(p.Hours))
		for _, h := range p.Hours {
			hours = append(hours, []int64{(h.HourMs - c.Hour0) / 3_600_000, h.Bytes, h.Records})
		}
		ret := make([][]int64, 0, len(p.Retention))
		for _, r := range p.Retention {
			why, del, at, act := r.HeldBy, int64(0), int64(-1), int64(0)
			if r.Deletable {
				del = 1
				if r.Reason != nil {
					why = *r.Reason
				}
			}
			if r.DeletableAt != nil {
				at = *r.DeletableAt
			}
			if r.Active {
				act = 1
			}
			ret = append(ret, []int64{r.BaseOffset, del, at, int64(idx(&c.Words, words, why)), act, r.SizeBytes})
		}
		errText := p.Error
		if errText == "" {
			errText = p.RetentionError
		}
		c.Parts = append(c.Parts, []any{idx(&c.Topics, topics, p.Topic), p.Partition, p.Broker, p.LogDir, p.SizeBytes, p.Records,
			p.LogStartOffset, p.LogEndOffset, p.Findings, segs, hours, ret, idx(&c.Words, words, errText)})
	}
	return c
}

// packed is c as JSON, gzipped, in base64.
func packed(c compact) (string, error) {
	var b bytes.Buffer
	zw, err := gzip.NewWriterLevel(&b, gzip.BestCompression)
	if err != nil {
		return "", err
	}
	if err := json.NewEncoder(zw).Encode(c); err != nil {
		return "", err
	}
	if err := zw.Close(); err != nil {
		return "", err
	}
	return base64.StdEncoding.EncodeToString(b.Bytes()), nil
}
