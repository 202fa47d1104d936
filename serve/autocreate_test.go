//go:build linux

package serve

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// withoutDescriptors runs f while the process may open no descriptor
// (RLIMIT_NOFILE's soft limit at 1: EMFILE for every open, socket and
// accept), then restores the limit. Not parallel: it is the whole
// process's limit.
func withoutDescriptors(t *testing.T, f func()) {
	t.Helper()
	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Skip(err)
	}
	low := old
	low.Cur = 1
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
		t.Skip(err)
	}
	defer func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
			t.Fatal(err)
		}
	}()
	f()
}

// TestAutoCreateFailureLeavesNoDirectory: a topic auto-creation that
// fails after its partition directory was made (here the process is out
// of descriptors, EMFILE, which the clients reach by
// auto-creating topics) removes that directory, and answers
// KAFKA_STORAGE_ERROR (the creation failed on disk, the name is valid);
// the next creation of the topic succeeds. A directory the server did not
// make (one already there, empty) is never removed.
func TestAutoCreateFailureLeavesNoDirectory(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "t-0"), 0o755)
	_, addr := startServer(t, Config{LogDir: dir, Writable: true})
	w := dial(t, addr)
	// The dial is complete once the kernel has the connection, before the
	// server's accept: a request answered first makes sure the server
	// holds its descriptor, or the accept itself meets EMFILE and waits
	// out the whole test (the handler never runs; failed so in CI).
	w.do(kmsg.NewPtrApiVersionsRequest())
	md := func(name string) kmsg.MetadataResponseTopic {
		req := kmsg.NewPtrMetadataRequest()
		req.Version, req.AllowAutoTopicCreation = 12, true
		req.Topics = []kmsg.MetadataRequestTopic{{Topic: kmsg.StringPtr(name)}}
		return w.do(req).(*kmsg.MetadataResponse).Topics[0]
	}
	var failed kmsg.MetadataResponseTopic
	withoutDescriptors(t, func() { failed = md("auto") })
	if failed.ErrorCode != kerr.KafkaStorageError.Code {
		t.Errorf("auto-creation without descriptors: error %d, want KAFKA_STORAGE_ERROR", failed.ErrorCode)
	}
	if _, err := os.Lstat(filepath.Join(dir, "auto-0")); !os.IsNotExist(err) {
		des, _ := os.ReadDir(filepath.Join(dir, "auto-0"))
		t.Errorf("auto-0 left behind by the failed creation (%v, %d entries)", err, len(des))
	}
	// Once descriptors are back: the Metadata that creates it answers as
	// a KRaft broker does while the controller creates it, the next has
	// it.
	if got := md("auto"); got.ErrorCode != kerr.UnknownTopicOrPartition.Code && got.ErrorCode != 0 {
		t.Errorf("auto-creation once descriptors are back: error %d", got.ErrorCode)
	}
	if got := md("auto"); got.ErrorCode != 0 || len(got.Partitions) != 1 {
		t.Errorf("the created topic: error %d, %d partitions", got.ErrorCode, len(got.Partitions))
	}
	if _, err := os.Stat(filepath.Join(dir, "auto-0", "00000000000000000000.log")); err != nil {
		t.Errorf("the second creation: %v", err)
	}
	// CreateTopics and CreatePartitions make their directories the same
	// way: a failure removes each one it made, and only those.
	ct := &kmsg.CreateTopicsRequest{Version: 7, TimeoutMillis: 1000, Topics: []kmsg.CreateTopicsRequestTopic{{Topic: "made", NumPartitions: 3, ReplicationFactor: 1}}}
	var code int16
	withoutDescriptors(t, func() { code = w.do(ct).(*kmsg.CreateTopicsResponse).Topics[0].ErrorCode })
	cp := &kmsg.CreatePartitionsRequest{Version: 3, TimeoutMillis: 1000, Topics: []kmsg.CreatePartitionsRequestTopic{{Topic: "auto", Count: 3}}}
	var grow int16
	withoutDescriptors(t, func() { grow = w.do(cp).(*kmsg.CreatePartitionsResponse).Topics[0].ErrorCode })
	if code != kerr.KafkaStorageError.Code || grow != kerr.KafkaStorageError.Code {
		t.Errorf("CreateTopics and CreatePartitions without descriptors: %d, %d, want KAFKA_STORAGE_ERROR", code, grow)
	}
	des, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, de := range des {
		if de.IsDir() {
			names = append(names, de.Name())
		}
	}
	if got := strings.Join(names, " "); got != "auto-0 t-0" {
		t.Errorf("the log dir holds %s, want auto-0 t-0 (the failed creations' directories gone, the others kept)", got)
	}
}
