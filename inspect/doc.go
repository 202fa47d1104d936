// Package inspect holds klog's views for people over partition
// directories: the segment table (Segments), the batch and record
// statistics (CollectStats) and the broker's way to an offset or a
// timestamp (Find); and the forensic views no Kafka tool gives: where
// replicas of a partition diverge and what a follower would truncate
// (Diff), when the broker's retention will delete each segment
// (Retention), and what other codecs would store (WhatIf). Each returns
// data (its JSON tags are the schema of the command's --json) and has a
// table writer; findings use verify's Problem. It only reads.
package inspect
