package safeio

import "errors"

// ErrFault is what GuardFault reports for a fault in mapped memory.
var ErrFault = errors.New("the file changed size while it was read")

// IsFault reports whether a recovered panic value is a memory fault (with
// debug.SetPanicOnFault, as Map sets it).
func IsFault(r any) bool {
	_, ok := r.(interface{ Addr() uintptr })
	return ok
}
