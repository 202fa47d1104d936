package main

import (
	"io"
	"os"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/urfave/cli/v2"
	"golang.org/x/term"

	"github.com/klog-dev/klog/partition"
)

// Progress for people: a bar in bytes with rate and ETA on stderr, only
// when stderr is a terminal, never when --json goes to that same terminal,
// never with --no-progress; colour only without NO_COLOR
// (https://no-color.org). The bar is schollz/progressbar's.

var noProgressFlag = &cli.BoolFlag{Name: "no-progress", Usage: "never show progress on stderr (it is shown only when stderr is a terminal)"}

// progress is a bar, or nil (every method is a no-op on nil). The bar
// appears only once a run has lasted progressDelay, so quick commands
// leave no trace; it is cleared when the run ends.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	what     string
	color    bool
	total    int64
	done     int64
	start    time.Time
	delay    time.Duration
	clearOut bool // results go to the same terminal: clear before them
	bar      *progressbar.ProgressBar
}

// progressDelay is how long a run goes before its bar appears;
// KLOG_PROGRESS_DELAY (a Go duration) overrides it.
const progressDelay = 500 * time.Millisecond

// newProgress returns a bar for total() bytes if one should be shown for
// this command, else nil (total is then not called). jsonOut says that
// stdout carries JSON (or other data a bar must not mix with).
func newProgress(c *cli.Context, what string, jsonOut bool, total func() int64) *progress {
	if !progressWanted(c, jsonOut) {
		return nil
	}
	delay := progressDelay
	if d, err := time.ParseDuration(os.Getenv("KLOG_PROGRESS_DELAY")); err == nil && d >= 0 {
		delay = d
	}
	return &progress{w: c.App.ErrWriter, what: what, color: os.Getenv("NO_COLOR") == "", total: total(),
		start: time.Now(), delay: delay, clearOut: isTerminal(c.App.Writer)}
}

// progressWanted says whether a bar may be shown, so that commands skip
// the counting altogether when none will be.
func progressWanted(c *cli.Context, jsonOut bool) bool {
	return !c.Bool(noProgressFlag.Name) && isTerminal(c.App.ErrWriter) && !(jsonOut && isTerminal(c.App.Writer))
}

func (p *progress) add(n int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	p.done += n
	if p.bar == nil && time.Since(p.start) >= p.delay {
		p.bar = p.newBar()
		p.bar.Add64(p.done)
		p.mu.Unlock()
		return
	}
	bar := p.bar
	p.mu.Unlock()
	if bar != nil {
		bar.Add64(n)
	}
}

func (p *progress) newBar() *progressbar.ProgressBar {
	desc := p.what
	if p.color {
		desc = "[cyan]" + p.what + "[reset]"
	}
	return progressbar.NewOptions64(p.total,
		progressbar.OptionSetWriter(p.w),
		progressbar.OptionSetDescription(desc),
		progressbar.OptionEnableColorCodes(p.color),
		progressbar.OptionShowBytes(true),
		progressbar.OptionShowTotalBytes(true),
		progressbar.OptionShowCount(),
		progressbar.OptionUseIECUnits(true),
		progressbar.OptionSetPredictTime(true),
		progressbar.OptionSetWidth(30),
		progressbar.OptionThrottle(100*time.Millisecond),
		progressbar.OptionClearOnFinish(),
	)
}

// setTotal changes the bar's total (a run that learns its size as it goes).
func (p *progress) setTotal(total int64) {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if total == p.total {
		return
	}
	p.total = total
	if p.bar != nil {
		p.bar.ChangeMax64(total)
	}
}

// addFunc is add as an OnBytes hook, nil when there is no bar (so that
// the domain package skips counting altogether).
func (p *progress) addFunc() func(int64) {
	if p == nil {
		return nil
	}
	return p.add
}

// sizeOf adds up the sizes of files (those that can be stat'ed).
func sizeOf(files []string) int64 {
	var n int64
	for _, f := range files {
		if st, err := os.Stat(f); err == nil && st.Mode().IsRegular() {
			n += st.Size()
		}
	}
	return n
}

// logBytes adds up the sizes of the segments of partition directories.
func logBytes(dirs []string) int64 {
	var files []string
	for _, d := range dirs {
		pd, err := partition.Open(d)
		if err != nil {
			continue
		}
		for _, s := range pd.Segments {
			if s.Log != "" {
				files = append(files, s.Log)
			}
		}
	}
	return sizeOf(files)
}

// clear removes the bar from the terminal before a line of results goes
// to the same terminal; the next add draws it again.
func (p *progress) clear() {
	if p == nil || !p.clearOut {
		return
	}
	p.mu.Lock()
	bar := p.bar
	p.mu.Unlock()
	if bar != nil {
		bar.Clear()
	}
}

// finish completes the bar and clears it.
func (p *progress) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	bar := p.bar
	p.mu.Unlock()
	if bar != nil {
		bar.Finish()
	}
}

// isTerminal reports whether w is a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := osFile(w)
	return ok && term.IsTerminal(int(f.Fd()))
}
