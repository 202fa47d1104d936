package serve

import "time"

// Clock is the server's time. Record timestamps (LogAppendTime), commit
// timestamps and the group coordinator's timers (rebalance, session and
// sync timeouts) all read the one clock, so that a test can drive them
// together.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f, in its own goroutine, once d has passed
	// (time.AfterFunc).
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a timer Clock.AfterFunc started.
type Timer interface {
	// Stop prevents the call if it has not happened (time.Timer.Stop).
	Stop() bool
}

// systemClock is the wall clock.
type systemClock struct{}

func (systemClock) Now() time.Time                            { return time.Now() }
func (systemClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }
