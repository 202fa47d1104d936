// Package benchref holds the reference programs klog's benchmarks run in
// the same run as klog, written as a user of the libraries would write
// them: KmsgProduce (a console producer's batches with franz-go's kmsg),
// and the command benchref runs them as whole processes, for timing
// against the klog binary. Nothing in klog imports it.
package benchref
