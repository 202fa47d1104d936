// Package inspect holds klog's forensic views of partition directories,
// answers no Kafka tool gives: where replicas of a partition diverge and
// what a follower would truncate (Diff), when the broker's retention will
// delete each segment (Retention), and what other codecs would store
// (WhatIf). It only reads.
package inspect
