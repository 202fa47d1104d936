package fetch

import (
	"path/filepath"

	"github.com/klog-dev/klog/partition"
)

// watcher reports changes to a partition directory and its log directory,
// coalesced: one pending notification at most.
type watcher struct {
	w      *partition.Watcher
	events chan struct{}
	errs   chan error
	done   chan struct{}
}

func newWatcher(dir string) (*watcher, error) {
	fw, err := partition.NewWatcher(0)
	if err != nil {
		return nil, err
	}
	for _, d := range []string{dir, filepath.Dir(filepath.Clean(dir))} {
		if err := fw.Add(d); err != nil {
			fw.Close()
			return nil, err
		}
	}
	w := &watcher{w: fw, events: make(chan struct{}, 1), errs: make(chan error, 1), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			select {
			case _, ok := <-fw.Events():
				if !ok {
					return
				}
				select {
				case w.events <- struct{}{}:
				default:
				}
			case err, ok := <-fw.Errors():
				if !ok {
					return
				}
				select {
				case w.errs <- err:
				default:
				}
			}
		}
	}()
	return w, nil
}

// drain forgets events seen before a wait starts.
func (w *watcher) drain() {
	select {
	case <-w.events:
	default:
	}
}

func (w *watcher) close() error {
	err := w.w.Close()
	<-w.done
	return err
}
