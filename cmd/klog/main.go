// Command klog reads and checks Apache Kafka partition logs on disk, with no
// broker and no JVM. See the README for the commands, the JSON schema and the
// exit codes.
package main

import (
	"os"
	"os/signal"
	"syscall"
	"time"
)

// signalGrace is how long a command has, after SIGINT or SIGTERM, to stop
// at a record boundary and flush before the process exits regardless.
// Commands see the signal through their context, reads of stdin included
// (safeio.Interruptible); the forced exit remains for what a context cannot
// wake: a read of stdin where select(2) is not used (not Linux or macOS),
// the open of a named pipe no one writes to, a read from a file system that
// does not answer.
const signalGrace = 800 * time.Millisecond

// grace is signalGrace, or KLOG_SIGNAL_GRACE (a Go duration): the tests of
// the commands' own stop set it long, so that a loaded machine is never
// mistaken for a command that does not stop.
func grace() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("KLOG_SIGNAL_GRACE")); err == nil && d > 0 {
		return d
	}
	return signalGrace
}

// signalAck, when KLOG_SIGNAL_ACK is set, is a line on stderr the moment a
// signal has cancelled the command's context: the tests of the commands'
// own stop wait for it before they let the command go on, so that the
// command cannot finish in the time the runtime takes to hand it the
// signal (a loaded machine delays that by tens of milliseconds).
func signalAck() {
	if os.Getenv("KLOG_SIGNAL_ACK") != "" {
		os.Stderr.WriteString("klog: signal received\n")
	}
}

func signalNotify(ch chan os.Signal) { signal.Notify(ch, os.Interrupt, syscall.SIGTERM) }
func signalStop(ch chan os.Signal)   { signal.Stop(ch) }

func main() {
	ctx, stop := signalContext(func(code int) {
		signalAck()
		time.AfterFunc(grace(), func() {
			if signalStopsServer.Load() {
				return // serve shuts down in its own time
			}
			os.Stderr.WriteString("klog: did not stop within a second of the signal; exiting\n")
			os.Exit(code)
		})
		// A second signal exits at once.
		ch := make(chan os.Signal, 1)
		signalNotify(ch)
		go func() { <-ch; os.Exit(code) }()
	})
	code := run(ctx, os.Args, os.Stdin, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
