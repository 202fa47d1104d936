package tail

import (
	"context"
	"iter"
)

// Events is Run as an iterator: it yields each event as Run sends it, and
// at most one error, last, when Run stops with one (nil when ctx ends).
// Breaking out of the loop stops the tail.
func Events(ctx context.Context, paths []string, opts Options) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		events := make(chan Event, 64)
		done := make(chan error, 1)
		go func() { done <- Run(ctx, paths, opts, events) }()
		for ev := range events {
			if !yield(ev, nil) {
				cancel()
				for range events { // let Run finish
				}
				<-done
				return
			}
		}
		if err := <-done; err != nil {
			yield(Event{}, err)
		}
	}
}
