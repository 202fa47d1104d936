// Package inspect holds klog's views for people over partition
// directories: the segment table (Segments), the batch and record
// statistics (CollectStats) and the broker's way to an offset or a
// timestamp (Find). Each returns data (its JSON tags are the schema of the
// command's --json) and has a table writer; findings use verify's Problem.
package inspect
