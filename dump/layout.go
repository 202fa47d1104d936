package dump

import (
	"regexp"
	"strings"
	"unicode"

	"github.com/mattn/go-runewidth"
)

// Tables that fit: Layout fits a table into a terminal's width in the
// order that keeps the answers. First the headers abbreviate, then the
// columns of least value drop, and only then are cells cut, each to the
// part that carries its answer: a byte count keeps its exact number and
// loses its human form ("1121 (1.1 KiB)" → "1121"), a time keeps its date
// and loses its clock ("2023-11-14T22:30:00.004Z" → "2023-11-14T22:30" →
// "2023-11-14"), a list keeps its first items; anything else is cut with
// "…". Whatever happens, a table is never wider than the width asked for,
// so a terminal never wraps it.

// Column says how one column gives way; columns are known by their
// header, so that every view's tables follow the same rules.
type Column struct {
	// Short is the header when the table does not fit ("": the header).
	Short string
	// Drop ranks the columns that may go: higher goes first; 0 never goes
	// (only its cells are cut).
	Drop int
	// Wrap: the column is prose (a moment, a verdict, a step's result):
	// it gives way last, and by wrapping its words onto more lines of the
	// cell instead of being cut.
	Wrap bool
}

// Columns are the views' columns by header. A header that is not listed
// keeps its name and never drops.
var Columns = map[string]Column{
	// segments
	"base offset":       {Short: "base"},
	"last offset":       {Short: "last"},
	"min timestamp":     {Short: "min ts", Drop: 3},
	"max timestamp":     {Short: "max ts"},
	"index entries":     {Short: "idx", Drop: 6},
	"timeindex entries": {Short: "tidx", Drop: 7},
	"index health":      {Short: "health"},
	"vs previous":       {Short: "vs prev", Drop: 5},
	"batches":           {Short: "batch", Drop: 2},
	// stats
	"batch bytes":           {Short: "batch B", Drop: 2},
	"stored bytes":          {Short: "stored"},
	"record bytes":          {Short: "rec B"},
	"undecodable":           {Short: "undec", Drop: 1},
	"records per batch":     {Short: "recs per batch"},
	"producer id":           {Short: "pid"},
	"compress ms per mib":   {Short: "comp ms", Drop: 2},
	"decompress ms per mib": {Short: "decomp ms", Drop: 3},
	"saved bytes":           {Short: "saved"},
	"vs today":              {Short: "vs now"},
	// retention, tiered
	"next offset":               {Short: "next"},
	"largest timestamp":         {Short: "largest ts", Drop: 2},
	"time retention deletes at": {Short: "deletes at"},
	"segment id":                {Short: "seg id", Drop: 4},
	"leader epochs":             {Short: "epochs", Drop: 3},
	"objects":                   {Drop: 5},
	"object":                    {Drop: 3},
	// diff
	"extra batches":  {Short: "x batch", Drop: 3},
	"extra records":  {Short: "x recs"},
	"extra bytes":    {Short: "x bytes", Drop: 2},
	"truncates to":   {Short: "trunc to"},
	"epochs":         {Drop: 4},
	"log start":      {Short: "start"},
	"log end":        {Short: "end"},
	"high watermark": {Short: "HW"},
	// replicate
	"moment":                {Wrap: true},
	"leader log end offset": {Short: "LEO"},
	"a reader can see":      {Short: "visible", Wrap: true},
	"verdict now":           {Short: "verdict", Wrap: true},
	"result":                {Wrap: true},
	"step":                  {Wrap: true},
	"value":                 {Wrap: true},
	// ls
	"topic id":      {Short: "id", Drop: 6},
	"leader epoch":  {Short: "epoch", Drop: 4},
	"offset lag":    {Short: "lag"},
	"size":          {},
	"log dir":       {Short: "dir", Drop: 4},
	"most complete": {Short: "best"},
	"leo minus hw":  {Short: "LEO minus HW", Drop: 2},
	"behind":        {Drop: 1},
	"future":        {Drop: 5},
	"partition":     {Short: "part"},
	"broker":        {Short: "brk"},
	"segments":      {Short: "segs", Drop: 1},
	"last stable":   {Short: "LSO", Drop: 3},
	"uncommitted":   {Short: "uncomm", Drop: 2},
	"copy":          {Wrap: true},
	// tail --table
	"last batch utc":  {Short: "last batch"},
	"batches per sec": {Short: "rate"},
	"lag trend":       {Short: "trend", Drop: 2},
	"records":         {Short: "recs"},
	"first offset":    {Short: "first"},
	"producer epoch":  {Short: "p epoch", Drop: 2},
	// groups: kafka-consumer-groups --describe's headers (a short form
	// takes the header's case: PART for PARTITION). The consumer id
	// never drops (its start is the client id), nor the commit time
	// --verbose asks for (it is cut to its date); the host and the client
	// id go first.
	"current-offset":          {Short: "OFFSET"},
	"log-end-offset":          {Short: "END"},
	"consumer-id":             {Short: "CONSUMER"},
	"client-id":               {Short: "CLIENT", Drop: 2},
	"host":                    {Drop: 3},
	"leader-epoch":            {Short: "EPOCH", Drop: 4},
	"commit-time":             {Short: "COMMITTED"},
	"metadata":                {Drop: 5},
	"group-instance-id":       {Short: "INSTANCE", Drop: 3},
	"#partitions":             {Short: "#PARTS"},
	"assignment":              {Wrap: true},
	"coordinator (partition)": {Short: "COORDINATOR"},
	"assignment-strategy":     {Short: "STRATEGY", Drop: 1},
	"last-offset":             {Short: "LAST"},
	"status":                  {Wrap: true},
	// transactions: kafka-transactions describe's and find-hanging's
	"coordinatorpartition":          {Short: "Coordinator", Drop: 3},
	"transactionalid":               {Short: "TxnId"},
	"producerid":                    {Short: "Pid"},
	"producerepoch":                 {Short: "Epoch", Drop: 2},
	"transactionstate":              {Short: "State"},
	"transactiontimeoutms":          {Short: "TimeoutMs", Drop: 4},
	"currenttransactionstarttimems": {Short: "StartMs", Drop: 5},
	"transactiondurationms":         {Short: "DurationMs"},
	"topicpartitions":               {Short: "Partitions"},
	"lastupdatetimems":              {Short: "UpdatedMs", Drop: 6},
	"coordinatorepoch":              {Short: "CoordEpoch", Drop: 4},
	"startoffset":                   {Short: "Start"},
	"lasttimestamp":                 {Short: "LastTs", Drop: 3},
	"duration(min)":                 {Short: "Min"},
	"coordinatorstate":              {Short: "CoordState", Drop: 1},
	"pinslso":                       {Short: "Pins", Drop: 2},
}

// matchCase gives a short form the case of the header it stands for:
// all capitals for an all-capital header (Kafka's tools'), a capital
// first letter for a capitalised one.
func matchCase(header, short string) string {
	switch {
	case header == strings.ToUpper(header) && header != strings.ToLower(header):
		return strings.ToUpper(short)
	case header != "" && unicode.IsUpper([]rune(header)[0]):
		r := []rune(short)
		r[0] = unicode.ToUpper(r[0])
		return string(r)
	}
	return short
}

var followerFetch = regexp.MustCompile(`^follower (\S+) next fetch$`)

// column is the rules of the column headed h.
func column(h string) Column {
	h = strings.ToLower(h)
	if c, ok := Columns[h]; ok {
		return c
	}
	if m := followerFetch.FindStringSubmatch(h); m != nil {
		return Column{Short: strings.ToUpper(m[1]) + " fetch"}
	}
	return Column{}
}

// minCut is the narrowest a cut cell gets while another column may still
// be cut.
const minCut = 6

// Layout fits header and rows into width display columns of a
// tablewriter table ("│ a │ b │": three columns of border per cell and one
// more) as the comment above says, and returns the header and rows to
// draw. Rows are not changed in place.
func Layout(header []string, rows [][]string, width int) ([]string, [][]string) {
	t := newLayout(header, rows)
	if t.fits(width) {
		return header, rows
	}
	// 1. Headers abbreviate.
	for i := range t.head {
		if c := column(t.head[i]); c.Short != "" {
			t.head[i] = matchCase(t.head[i], c.Short)
		}
	}
	t.measure()
	// 2. Low-value columns drop, least value first.
	for !t.fits(width) {
		worst, rank := -1, 0
		for i, h := range header {
			if t.gone[i] {
				continue
			}
			if c := column(h); c.Drop > rank {
				worst, rank = i, c.Drop
			}
		}
		if worst < 0 {
			break
		}
		t.gone[worst] = true
	}
	// 3. Cells are cut to the part that carries the answer, widest column
	// first; 4. then harder, down to one column; 5. then columns go from
	// the right, so that a table never wraps.
	for _, phase := range []struct {
		floor int
		prose bool
		heads bool // cut no column below its header
	}{{minCut, false, true}, {minCut, true, true}, {1, true, false}} {
		for !t.fits(width) {
			i := t.widest(phase.floor, phase.prose, phase.heads)
			if i < 0 {
				break
			}
			// One column narrower at a time, widest first, so that the cut
			// is shared out.
			t.cut(i, t.width[i]-1)
		}
	}
	for !t.fits(width) && t.live() > 1 {
		for i := len(t.gone) - 1; i >= 0; i-- {
			if !t.gone[i] {
				t.gone[i] = true
				break
			}
		}
	}
	return t.result()
}

type layout struct {
	head  []string
	rows  [][]string
	width []int
	limit []int // the width cells are cut to (0: whole)
	gone  []bool
	wrap  []bool
}

func newLayout(header []string, rows [][]string) *layout {
	n := len(header)
	t := &layout{head: append([]string(nil), header...), rows: rows, width: make([]int, n), limit: make([]int, n), gone: make([]bool, n), wrap: make([]bool, n)}
	for i, h := range header {
		t.wrap[i] = column(h).Wrap
	}
	t.measure()
	return t
}

func (t *layout) measure() {
	for i := range t.width {
		t.measureColumn(i)
	}
}

func (t *layout) measureColumn(i int) {
	t.width[i] = headWidth(t.head[i])
	for _, r := range t.rows {
		if i < len(r) {
			c := r[i]
			if t.limit[i] > 0 {
				c = t.fit(i, c)
			}
			t.width[i] = max(t.width[i], lineWidth(c))
		}
	}
}

func (t *layout) total() int {
	w := 1
	for i, x := range t.width {
		if !t.gone[i] {
			w += x + 3
		}
	}
	return w
}

func (t *layout) fits(width int) bool { return t.total() <= width }

func (t *layout) live() int {
	n := 0
	for _, g := range t.gone {
		if !g {
			n++
		}
	}
	return n
}

// widest is the widest column that can still be cut above floor (-1:
// none); prose columns only when prose is set.
func (t *layout) widest(floor int, prose, heads bool) int {
	best := -1
	for i := range t.width {
		if t.wrap[i] && !prose {
			continue
		}
		f := floor
		if heads {
			f = max(f, headWidth(t.head[i]))
		}
		if !t.gone[i] && t.width[i] > f && (best < 0 || t.width[i] > t.width[best]) {
			best = i
		}
	}
	return best
}

// cut limits column i to w columns (its header too).
func (t *layout) cut(i, w int) {
	t.limit[i] = w
	if headWidth(t.head[i]) > w {
		t.head[i] = runewidth.Truncate(t.head[i], w, "") // tablewriter spaces out a "…" in a header
	}
	t.measureColumn(i)
}

func (t *layout) result() ([]string, [][]string) {
	var head []string
	for i, h := range t.head {
		if !t.gone[i] {
			head = append(head, h)
		}
	}
	out := make([][]string, len(t.rows))
	for j, r := range t.rows {
		for i, c := range r {
			if i < len(t.gone) && t.gone[i] {
				continue
			}
			if i < len(t.limit) && t.limit[i] > 0 {
				c = t.fit(i, c)
			}
			out[j] = append(out[j], c)
		}
	}
	return head, out
}

// fit is cell c of column i at the column's limit: wrapped for prose,
// else cut.
func (t *layout) fit(i int, c string) string {
	if t.wrap[i] {
		return wrapWords(c, t.limit[i])
	}
	return cutTo(c, t.limit[i])
}

// wrapWords breaks each line of c at spaces into lines of at most w
// display columns; a word longer than w is cut with "…".
func wrapWords(c string, w int) string {
	var out []string
	for _, l := range strings.Split(c, "\n") {
		cur := ""
		for _, word := range strings.Fields(l) {
			if runewidth.StringWidth(word) > w {
				word = cutLine(word, w)
			}
			switch {
			case cur == "":
				cur = word
			case runewidth.StringWidth(cur)+1+runewidth.StringWidth(word) <= w:
				cur += " " + word
			default:
				out = append(out, cur)
				cur = word
			}
		}
		out = append(out, cur)
	}
	return strings.Join(out, "\n")
}

// headWidth is a header's width as tablewriter draws it: it spaces out a
// minus sign ("LEO − HW").
func headWidth(h string) int { return lineWidth(strings.ReplaceAll(h, "−", " − ")) }

// lineWidth is the display width of a cell's widest line.
func lineWidth(c string) int {
	w := 0
	for _, l := range strings.Split(c, "\n") {
		w = max(w, runewidth.StringWidth(l))
	}
	return w
}

// cutTo cuts each line of c to w display columns, to the longest of its
// shorter forms that fits, else with "…". The first line of a cell of
// several is its answer: a later line that does not fit goes.
func cutTo(c string, w int) string {
	if !strings.Contains(c, "\n") {
		return cutLine(c, w)
	}
	lines := strings.Split(c, "\n")
	out := lines[:1:1]
	out[0] = cutLine(lines[0], w)
	for _, l := range lines[1:] {
		if runewidth.StringWidth(l) <= w {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

var (
	humanSize = regexp.MustCompile(`^(-?\d+) \(\d+(\.\d+)? [KMGTPE]iB\)(.*)$`)
	aside     = regexp.MustCompile(`^(\S+) \([^()]*\)$`)
	isoTime   = regexp.MustCompile(`^(\d{4}-\d\d-\d\d)(T\d\d:\d\d)(:\d\d(\.\d+)?)?(Z|[+-]\d\d:?\d\d)?(.*)$`)
)

func cutLine(l string, w int) string {
	if runewidth.StringWidth(l) <= w {
		return l
	}
	for _, f := range shorterForms(l) {
		if runewidth.StringWidth(f) <= w {
			return f
		}
	}
	if isPath(l) && w > 1 {
		// Too narrow for a whole file name: its end still tells it.
		r := []rune(l)
		for len(r) > 0 && runewidth.StringWidth(string(r)) > w-1 {
			r = r[1:]
		}
		return "…" + string(r)
	}
	return runewidth.Truncate(l, w, "…")
}

// shorterForms are the forms of a cell line that keep its answer, longest
// first.
func shorterForms(l string) []string {
	if m := humanSize.FindStringSubmatch(l); m != nil {
		return []string{m[1] + m[3], m[1]}
	}
	if m := isoTime.FindStringSubmatch(l); m != nil {
		return []string{m[1] + m[2] + m[5] + m[6], m[1] + m[2], m[1]}
	}
	if m := aside.FindStringSubmatch(l); m != nil {
		// "2 (writing it)", "32 (active)": the value before its aside.
		return []string{m[1]}
	}
	if isPath(l) {
		// A path: its end names the file.
		parts := strings.Split(l, "/")
		var out []string
		for k := 1; k < len(parts); k++ {
			out = append(out, "…/"+strings.Join(parts[k:], "/"))
		}
		return out
	}
	if strings.Contains(l, ",") && !strings.Contains(l, " ") {
		// A list: its first items and how many more.
		parts := strings.Split(l, ",")
		var out []string
		for k := len(parts) - 1; k >= 1; k-- {
			out = append(out, strings.Join(parts[:k], ",")+",+"+itoa(len(parts)-k))
		}
		return out
	}
	return nil
}

// isPath: a line with a slash and no space is a path (or an object key).
func isPath(l string) bool { return strings.Contains(l, "/") && !strings.Contains(l, " ") }

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

// PlainLines draws a table without borders, its columns padded to their
// widest cell and separated by one space (as the Kafka tools print
// theirs), fitted into width display columns by Layout's rules (0: no
// limit). Layout reserves three columns of border a cell and one more;
// a plain table draws one, so that much is given back, as far as the
// result still fits. A cell of several lines (a wrapped prose column)
// takes as many lines; trailing spaces are trimmed.
func PlainLines(header []string, rows [][]string, width int) []string {
	if width <= 0 {
		return plainLines(header, rows)
	}
	for bonus := 2*len(header) + 2; ; bonus -= 2 {
		h, r := Layout(header, rows, width+bonus)
		lines := plainLines(h, r)
		if bonus <= 0 || linesWidth(lines) <= width {
			return lines
		}
	}
}

func plainLines(header []string, rows [][]string) []string {
	widths := make([]int, len(header))
	for i, h := range header {
		widths[i] = lineWidth(h)
	}
	for _, r := range rows {
		for i := 0; i < len(r) && i < len(widths); i++ {
			widths[i] = max(widths[i], lineWidth(r[i]))
		}
	}
	var out []string
	row := func(cells []string) {
		split := make([][]string, len(widths))
		height := 1
		for i := range widths {
			if i < len(cells) {
				split[i] = strings.Split(cells[i], "\n")
			}
			height = max(height, len(split[i]))
		}
		for k := 0; k < height; k++ {
			var b strings.Builder
			for i, w := range widths {
				c := ""
				if k < len(split[i]) {
					c = split[i][k]
				}
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(c)
				b.WriteString(strings.Repeat(" ", max(0, w-runewidth.StringWidth(c))))
			}
			out = append(out, strings.TrimRight(b.String(), " "))
		}
	}
	row(header)
	for _, r := range rows {
		row(r)
	}
	return out
}

// LineWidth is the display width of a line as a terminal shows it: tabs
// advance to the next multiple of 8.
func LineWidth(l string) int {
	w := 0
	for _, r := range l {
		if r == '\t' {
			w = (w/8 + 1) * 8
			continue
		}
		w += runewidth.RuneWidth(r)
	}
	return w
}

func linesWidth(lines []string) int {
	w := 0
	for _, l := range lines {
		w = max(w, LineWidth(l))
	}
	return w
}
