package partition

import "sync"

// Waiter is a long poll's wait on one or more partitions (kfake's
// watchFetch): it is woken when any Log it waits on changes (a batch
// appended, the high watermark or the log start offset moved, a refresh
// failed), and by nothing else. Arm it with Add before reading the
// partitions, so that a change between the read and the wait is not
// missed; then wait on C; Stop when done. A Waiter is safe for concurrent
// use.
type Waiter struct {
	c    chan struct{}
	mu   sync.Mutex
	logs []*Log
	// woken, when not nil (NewTrackingWaiter), holds the Logs whose
	// changes woke w since the last Woken.
	woken map[*Log]struct{}
}

// NewWaiter returns a Waiter that waits on nothing yet.
func NewWaiter() *Waiter { return &Waiter{c: make(chan struct{}, 1)} }

// NewTrackingWaiter returns a Waiter that also remembers which of its Logs
// changed (Woken): one wait on many partitions that reads again only the
// ones that changed, as klog tail does.
func NewTrackingWaiter() *Waiter {
	return &Waiter{c: make(chan struct{}, 1), woken: map[*Log]struct{}{}}
}

// Woken appends to dst the Logs whose changes woke w since the last call,
// and forgets them (nil for a Waiter from NewWaiter). Call it after a
// receive on C: a change after the call sends on C again.
func (w *Waiter) Woken(dst []*Log) []*Log {
	w.mu.Lock()
	defer w.mu.Unlock()
	for l := range w.woken {
		dst = append(dst, l)
		delete(w.woken, l)
	}
	return dst
}

// Remove ends the wait on l alone.
func (w *Waiter) Remove(l *Log) {
	w.mu.Lock()
	for i, x := range w.logs {
		if x == l {
			w.logs = append(w.logs[:i], w.logs[i+1:]...)
			break
		}
	}
	if w.woken != nil {
		delete(w.woken, l)
	}
	w.mu.Unlock()
	l.mu.Lock()
	delete(l.waiters, w)
	l.mu.Unlock()
}

// Add makes w wait on l as well.
func (w *Waiter) Add(l *Log) {
	w.mu.Lock()
	w.logs = append(w.logs, l)
	w.mu.Unlock()
	l.mu.Lock()
	if l.waiters == nil {
		l.waiters = map[*Waiter]struct{}{}
	}
	l.waiters[w] = struct{}{}
	l.mu.Unlock()
}

// C receives a value when a partition w waits on changed since the last
// receive (changes in between are coalesced into one).
func (w *Waiter) C() <-chan struct{} { return w.c }

// Stop ends the wait on every partition.
func (w *Waiter) Stop() {
	w.mu.Lock()
	logs := w.logs
	w.logs = nil
	w.mu.Unlock()
	for _, l := range logs {
		l.mu.Lock()
		delete(l.waiters, w)
		l.mu.Unlock()
	}
}

func (w *Waiter) wake(l *Log) {
	if w.woken != nil {
		w.mu.Lock()
		w.woken[l] = struct{}{}
		w.mu.Unlock()
	}
	select {
	case w.c <- struct{}{}:
	default:
	}
}

// notify wakes l's waiters; the caller does not hold l.mu.
func (l *Log) notify() {
	l.mu.Lock()
	if len(l.waiters) == 0 {
		l.mu.Unlock()
		return
	}
	ws := make([]*Waiter, 0, len(l.waiters))
	for w := range l.waiters {
		ws = append(ws, w)
	}
	l.mu.Unlock()
	for _, w := range ws {
		w.wake(l)
	}
}
