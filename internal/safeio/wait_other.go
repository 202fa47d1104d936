//go:build !(linux || darwin)

package safeio

import (
	"context"
	"io"
	"os"
)

// waitable has no way to wake a blocked read here: the caller checks ctx
// between reads only (klog's one-second exit after a signal covers a read
// that never returns).
func waitable(context.Context, *os.File) (io.Reader, func(), bool) { return nil, nil, false }
