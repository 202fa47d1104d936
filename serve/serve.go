// Package serve speaks Kafka's wire protocol over a log directory of real
// partition directories, so unmodified Kafka clients (kcat, librdkafka,
// franz-go, kafka-go, sarama, kafkajs, the Python clients) can consume an
// archived or forensic copy of a broker's disk, and with Config.Writable
// produce into it.
//
// Requests and responses are decoded and encoded with franz-go's kmsg;
// the handlers are klog's own, one file per API key (00_produce.go,
// 01_fetch.go, ...), each starting with its version notes and registering
// its key, version range and handler in an init function (api.go): the
// registrations are the ApiVersions table and the dispatch, so a new key
// is one new file. Every handler has one type, func(*conn, *kmsg.XRequest)
// (kmsg.Response, error). Fetch is package fetch's read path (the same code as
// `klog fetch`), and its record bytes go from the segment file to the socket
// with sendfile where the platform allows. Produce goes through package
// produce's Appender.
//
// Each connection is served by one goroutine, one request at a time, in
// order, as a broker does (it mutes a channel while a request is in
// flight). A malformed frame closes that connection only.
package serve

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/internal/safeio"
	"github.com/klog-dev/klog/offsetstore"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/tiered"
)

// Defaults (KafkaConfig / SocketServerConfigs).
const (
	// DefaultMaxRequestBytes is socket.request.max.bytes.
	DefaultMaxRequestBytes = 104857600
	// DefaultMaxConnections bounds open client connections.
	DefaultMaxConnections = 4096
	// DefaultIdleTimeout is connections.max.idle.ms.
	DefaultIdleTimeout = 10 * time.Minute
	// OffsetsTopic is the internal topic holding committed offsets.
	OffsetsTopic = offsetstore.Topic
)

// ErrServerClosed is what Serve returns after Shutdown or Close, as
// net/http's Server does.
var ErrServerClosed = errors.New("serve: server closed")

// Config configures a Server.
type Config struct {
	// LogDir holds the partition directories to serve.
	LogDir string
	// Writable accepts Produce and keeps committed offsets in LogDir, as a
	// broker does. Without it LogDir is never changed.
	Writable bool
	// StateDir holds __consumer_offsets-N when not Writable. Required
	// then. A writable server keeps the configs altered through it there
	// (ConfigsFile; in memory only when StateDir is empty).
	StateDir string
	// StateMaxBytes bounds the bytes a read-only server keeps in
	// StateDir (0: DefaultStateMaxBytes; negative: no bound), and
	// StateMaxGroups the groups it knows (0: DefaultStateMaxGroups;
	// negative: no bound): statecap.go.
	StateMaxBytes  int64
	StateMaxGroups int
	// MaxRequestBytes bounds a request frame (default 100 MiB).
	MaxRequestBytes int32
	// MaxMessageBytes is message.max.bytes: the largest record batch a
	// producer may append (default 1048588; MESSAGE_TOO_LARGE beyond).
	MaxMessageBytes int32
	// TimestampBeforeMax and TimestampAfterMax are
	// message.timestamp.before/after.max.ms: how far a CreateTime record's
	// timestamp may be before or after the server's time
	// (INVALID_TIMESTAMP beyond). Before: zero or negative is no limit
	// (Kafka's default). After: zero is one hour (Kafka's default since
	// 4.0), negative no limit.
	TimestampBeforeMax, TimestampAfterMax time.Duration
	// MaxQueuedRequestBytes bounds the bytes of requests in flight across
	// all connections (queued.max.request.bytes; default 128 MiB, at
	// least MaxRequestBytes + 16 MiB); a connection waits for room before
	// it reads a request's body.
	MaxQueuedRequestBytes int64
	// MaxDecompressedBytes bounds what one produced batch decompresses to
	// (default 32 MiB; MESSAGE_TOO_LARGE beyond); two batches decompress
	// at a time.
	MaxDecompressedBytes int
	// MaxConnections bounds open connections (default 4096); more are
	// closed on accept.
	MaxConnections int
	// MaxConnectionsPerIP bounds one remote address's connections
	// (max.connections.per.ip, default 512); more are closed on accept.
	MaxConnectionsPerIP int
	// IdleTimeout closes a connection that sends no byte for this long
	// (connections.max.idle.ms, default 10 minutes).
	IdleTimeout time.Duration
	// RequestLog receives one JSON line per request when set.
	RequestLog io.Writer
	// TLS serves TLS when set.
	TLS *tls.Config
	// Users, when set, requires SASL authentication (PLAIN,
	// SCRAM-SHA-256, SCRAM-SHA-512; sasl.go) before any request but
	// ApiVersions, and gives each user read or write access.
	Users *Users
	// NodeID is the broker id clients see. Left 0, a log dir's
	// meta.properties node.id (broker.id before KRaft) is used, as the
	// broker that wrote the log dir had it, else 0.
	NodeID int32
	// AdvertisedHost/Port override the listener's address in Metadata and
	// FindCoordinator answers.
	AdvertisedHost string
	AdvertisedPort int32
	// Produce configures appenders (segment size, sync); its clock is
	// Clock's.
	Produce produce.Options
	// Clock is the server's time: LogAppendTime, commit timestamps and
	// the group coordinator's timers (default the wall clock).
	Clock Clock
	// GroupInitialDelay is group.initial.rebalance.delay.ms (default 0 here:
	// a lone member need not wait; a broker waits 3 s).
	GroupInitialDelay time.Duration
	// ConsumerSessionTimeout is group.consumer.session.timeout.ms: a
	// consumer group member (KIP-848) that does not heartbeat for this
	// long is fenced (default 45 s).
	ConsumerSessionTimeout time.Duration
	// ConsumerHeartbeatInterval is group.consumer.heartbeat.interval.ms,
	// the interval members are told to heartbeat at (default 5 s).
	ConsumerHeartbeatInterval time.Duration
	// ConsumerGroupMaxSize is group.consumer.max.size (default 1024).
	ConsumerGroupMaxSize int
	// Remote, when set, is the remote tier of tiered storage: offsets
	// below a partition's local log start are served from its segments
	// (serve/remote.go), folded with LogDir's __remote_log_metadata-N.
	Remote *tiered.Remote
	// RemotePrefix narrows the listing of Remote's store.
	RemotePrefix string

	// hooks let tests wait for the coordinator.
	hooks hooks
	// replay places this server in a replayed cluster (NewReplay).
	replay *replayBroker
}

// Server serves one log directory.
type Server struct {
	cfg       Config
	topics    map[string]*topic
	topicList []string
	clusterID string

	mu       sync.Mutex
	conns    map[net.Conn]struct{}
	lns      []net.Listener
	closing  bool
	done     chan struct{}
	wg       sync.WaitGroup
	logMu    sync.Mutex
	follower *partition.Follower // a read-only server's (follow)
	groups   *coordinator
	pidMu    sync.Mutex
	nextPID  int64
	addrHost string
	addrPort int32
	dirLock  *safeio.BrokerLock // the log dir's .lock, held while writable
	lim      limiter            // what clients hold (limits.go)
	configs  *configStore       // DescribeConfigs, IncrementalAlterConfigs (configs.go)
	warnings []string           // what New found a user should hear of (Warnings)
}

// topic is a served topic: partitions 0..n-1.
type topic struct {
	name  string
	id    [16]byte
	parts []*part
}

// part is one served partition directory: the partition model and, when
// writable, its appender. The model is the only state: the log end offset,
// the high watermark, the producer state with its duplicate-batch cache and
// the waiters of long polls are log's. A writable partition's model is its
// Appender's, kept current by each append; a read-only one is kept current
// by the server's Follower (another process's appends, rolls, retention and
// checkpoints).
type part struct {
	topic string
	index int32
	dir   string
	log   *partition.Log

	// mu serializes appends (an Appender is not safe for concurrent use)
	// and guards app; readers do not take it.
	mu  sync.Mutex
	app *produce.Appender
	// remote is the partition's remote tier (Config.Remote), or nil.
	remote *tiered.Tiers
}

// New opens every partition directory under cfg.LogDir. A topic whose
// partitions are not exactly 0..n-1 is refused with an error, as are
// directories the fetch path cannot open.
func New(cfg Config) (*Server, error) {
	if cfg.MaxRequestBytes <= 0 {
		cfg.MaxRequestBytes = DefaultMaxRequestBytes
	}
	if cfg.MaxMessageBytes <= 0 {
		cfg.MaxMessageBytes = DefaultMaxMessageBytes
	}
	if cfg.TimestampAfterMax == 0 {
		cfg.TimestampAfterMax = DefaultTimestampAfterMax
	}
	if cfg.MaxConnections <= 0 {
		cfg.MaxConnections = DefaultMaxConnections
	}
	if cfg.IdleTimeout <= 0 {
		cfg.IdleTimeout = DefaultIdleTimeout
	}
	if cfg.Clock == nil {
		cfg.Clock = systemClock{}
	}
	if cfg.ConsumerSessionTimeout <= 0 {
		cfg.ConsumerSessionTimeout = DefaultConsumerSessionTimeout
	}
	if cfg.ConsumerHeartbeatInterval <= 0 {
		cfg.ConsumerHeartbeatInterval = DefaultConsumerHeartbeatInterval
	}
	if cfg.ConsumerGroupMaxSize <= 0 {
		cfg.ConsumerGroupMaxSize = DefaultConsumerGroupMaxSize
	}
	cfg.Produce.Now = cfg.Clock.Now
	if !cfg.Writable && cfg.StateDir == "" {
		return nil, errors.New("serve: a read-only server needs a state directory for committed offsets")
	}
	s := &Server{cfg: cfg, topics: map[string]*topic{}, conns: map[net.Conn]struct{}{},
		done: make(chan struct{}), nextPID: cfg.Clock.Now().UnixMilli() * 1000, clusterID: "klog"}
	s.initLimits()
	if err := s.initMemory(); err != nil {
		return nil, err
	}
	if cfg.Writable {
		// The broker's rule: one writer per log dir, by its .lock file.
		l, err := safeio.LockBroker(cfg.LogDir)
		if err != nil {
			return nil, fmt.Errorf("serve: %w", err)
		}
		s.dirLock = l
	}
	fail := func(err error) (*Server, error) {
		s.closeAppenders()
		if s.groups != nil {
			s.groups.close()
		}
		if s.dirLock != nil {
			s.dirLock.Release()
		}
		return nil, err
	}
	load := s.loadTopics
	if cfg.replay != nil {
		load = s.loadReplay
	}
	if err := load(); err != nil {
		return fail(err)
	}
	if err := s.loadRemote(); err != nil {
		return fail(err)
	}
	var nodeID int32
	s.clusterID, nodeID = readMetaProperties(cfg.LogDir)
	if cfg.replay == nil && cfg.NodeID == 0 {
		s.cfg.NodeID = nodeID
	}
	cs, err := openConfigs(cfg)
	if err != nil {
		return fail(err)
	}
	s.configs = cs
	g, err := newCoordinator(s)
	if err != nil {
		return fail(err)
	}
	s.groups = g
	if err := s.follow(); err != nil {
		return fail(err)
	}
	return s, nil
}

// internalTopic reports topics a server keeps for itself.
func internalTopic(name string) bool {
	return name == OffsetsTopic || name == "__transaction_state" || name == "__cluster_metadata" || name == tiered.MetadataTopic ||
		name == "__share_group_state"
}

func (s *Server) loadTopics() error {
	ld, err := partition.OpenLogDir(s.cfg.LogDir)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	byTopic := map[string][]string{}
	for _, p := range ld.Partitions {
		t, _, _ := partition.ParseDirName(filepath.Base(p))
		if internalTopic(t) {
			continue
		}
		byTopic[t] = append(byTopic[t], p)
	}
	for name, dirs := range byTopic {
		t := &topic{name: name}
		// A topic refused half-way closes its appenders here; New
		// closes those of the topics already loaded.
		fail := func(err error) error {
			for _, p := range t.parts {
				if p != nil && p.app != nil {
					p.app.Close()
				}
			}
			return err
		}
		// A broker's log dir may hold some of a topic's partitions (the
		// others are other brokers'): the topic has partitions 0..max,
		// and those not here have no leader (Metadata says so).
		for _, d := range dirs {
			_, n, _ := partition.ParseDirName(filepath.Base(d))
			if n >= maxTopicPartitions {
				return fail(errors.New("serve: " + d + ": partition " + strconv.Itoa(int(n)) + " is over the " +
					strconv.Itoa(maxTopicPartitions) + " partitions a served topic may have"))
			}
			for int32(len(t.parts)) <= n {
				t.parts = append(t.parts, nil)
			}
			p, err := s.openPart(name, n, d)
			if err != nil {
				return fail(err)
			}
			t.parts[n] = p
			if t.id == ([16]byte{}) {
				t.id = readTopicID(d)
			}
		}
		s.topics[name] = t
		s.topicList = append(s.topicList, name)
	}
	sort.Strings(s.topicList)
	return nil
}

// maxTopicPartitions bounds a served topic's partition numbers: a
// directory name must not size the partition table.
const maxTopicPartitions = 1 << 16

func (s *Server) openPart(name string, n int32, dir string) (*part, error) {
	p := &part{topic: name, index: n, dir: dir}
	if s.cfg.Writable {
		if err := p.openAppender(s.cfg.Produce); err != nil {
			return nil, err
		}
		return p, nil
	}
	l, err := partition.OpenLog(dir, partition.LogOptions{})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	p.log = l
	return p, nil
}

// openAppender opens the partition for writing: its model is the
// Appender's, and its high watermark is its log end from now on (the
// partition is its only replica).
func (p *part) openAppender(opts produce.Options) error {
	a, err := produce.Open(p.dir, opts)
	if err != nil {
		return fmt.Errorf("serve: %s: %w", p.dir, err)
	}
	p.app, p.log = a, a.Log()
	p.log.SetHighWatermarkToEnd()
	return nil
}

// openNewAppender is openAppender for a partition directory the server
// is making. When the open fails (out of descriptors, a full disk) after
// it made the directory, what it made is removed, so that a failed
// creation leaves no empty topic behind: only a directory that was not
// there before this call, and only if it is a directory still, not a
// link (os.RemoveAll removes a link inside it, never what that points
// to). Nothing else writes under the log dir meanwhile: the server holds
// its broker lock, and s.mu.
func (p *part) openNewAppender(opts produce.Options) error {
	_, err := os.Lstat(p.dir)
	made := errors.Is(err, fs.ErrNotExist)
	if err := p.openAppender(opts); err != nil {
		if made {
			if st, lerr := os.Lstat(p.dir); lerr == nil && st.IsDir() {
				os.RemoveAll(p.dir)
			}
		}
		return err
	}
	return nil
}

// errInvalidTopic marks a name Kafka refuses (INVALID_TOPIC_EXCEPTION);
// any other failure of a creation is the disk's (KAFKA_STORAGE_ERROR).
var errInvalidTopic = errors.New("invalid topic")

// createTopic makes topic-0 for a Metadata auto-creation (writable
// servers only).
func (s *Server) createTopic(name string) (*topic, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if t := s.topics[name]; t != nil {
		return t, nil
	}
	if err := s.checkNewTopic(name); err != nil {
		return nil, fmt.Errorf("%w: %v", errInvalidTopic, err)
	}
	if err := s.checkTopicBudget(); err != nil {
		return nil, err
	}
	dir := filepath.Join(s.cfg.LogDir, name+"-0")
	p := &part{topic: name, index: 0, dir: dir}
	if err := p.openNewAppender(s.cfg.Produce); err != nil {
		return nil, err
	}
	// produce.Open gave the new partition its partition.metadata, as a
	// broker's topic creation does; Metadata reports that id.
	t := &topic{name: name, parts: []*part{p}, id: p.app.TopicID()}
	topics := make(map[string]*topic, len(s.topics)+1)
	for k, v := range s.topics {
		topics[k] = v
	}
	topics[name] = t
	list := append(append([]string(nil), s.topicList...), name)
	sort.Strings(list)
	s.topics, s.topicList = topics, list
	return t, nil
}

// validTopicName is Kafka's Topic.validate: 1-249 of [a-zA-Z0-9._-], not
// "." or "..".
func validTopicName(n string) bool {
	if n == "" || n == "." || n == ".." || len(n) > 249 {
		return false
	}
	for i := 0; i < len(n); i++ {
		c := n[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// lookup finds a topic partition.
func (s *Server) lookup(name string, n int32) *part {
	s.mu.Lock()
	t := s.topics[name]
	s.mu.Unlock()
	if t == nil || n < 0 || int(n) >= len(t.parts) {
		return nil
	}
	return t.parts[n]
}

func (s *Server) topic(name string) *topic {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.topics[name]
}

func (s *Server) topicNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.topicList
}

// readTopicID reads partition.metadata's topic id (zero when absent).
func readTopicID(dir string) [16]byte {
	var id [16]byte
	data, err := safeio.ReadFile(filepath.Join(dir, partition.PartitionMetadata), safeio.MaxCheckpointBytes)
	if err != nil {
		return id
	}
	m, err := format.ParsePartitionMetadata(data)
	if err != nil {
		return id
	}
	if b, err := decodeUUID(m.TopicID); err == nil {
		id = b
	}
	return id
}

// readMetaProperties reads cluster.id ("klog" when there is none) and
// node.id (or broker.id; 0 when there is none) from the log dir's
// meta.properties.
func readMetaProperties(dir string) (clusterID string, nodeID int32) {
	clusterID = "klog"
	data, err := safeio.ReadFile(filepath.Join(dir, "meta.properties"), safeio.MaxCheckpointBytes)
	if err != nil {
		return clusterID, 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case !ok || v == "":
		case k == "cluster.id":
			clusterID = v
		case k == "node.id" || k == "broker.id":
			if n, err := strconv.ParseInt(v, 10, 32); err == nil && n >= 0 {
				nodeID = int32(n)
			}
		}
	}
	return clusterID, nodeID
}

// follow keeps a read-only server's partitions current while another
// process (a broker, klog produce) changes the log dir: partition's one
// Follower, which reads again only what its events say changed and wakes
// only the long polls of the partitions that moved. A partition it cannot
// read again stays stale, so its next read answers KAFKA_STORAGE_ERROR. A
// writable server needs none: its .lock keeps other writers out and its
// appenders keep their models current.
func (s *Server) follow() error {
	if s.cfg.Writable {
		return nil
	}
	f, err := partition.NewFollower()
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	for _, name := range s.topicList {
		for _, p := range s.topics[name].parts {
			if p == nil {
				continue
			}
			if err := f.Add(p.log); err != nil {
				f.Close()
				return fmt.Errorf("serve: %w", err)
			}
		}
	}
	s.follower = f
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// Errors are the stale partitions' own to report, at their
		// next read; the watcher's lost events were read again.
		for range f.Errors() {
		}
	}()
	return nil
}

// Serve accepts connections on ln until Shutdown or Close, and then
// returns ErrServerClosed (any other error is the listener's).
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns = append(s.lns, ln)
	if s.addrHost == "" {
		if a, ok := ln.Addr().(*net.TCPAddr); ok {
			s.addrHost, s.addrPort = a.IP.String(), int32(a.Port)
		}
	}
	s.mu.Unlock()
	var delay time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closing := s.closing
			s.mu.Unlock()
			if closing {
				return ErrServerClosed
			}
			if s.acceptRetry(err, &delay) {
				continue
			}
			return err
		}
		delay = 0
		s.mu.Lock()
		if s.closing || len(s.conns) >= s.cfg.MaxConnections || !s.admitIP(c) {
			s.mu.Unlock()
			c.Close()
			continue
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.serveConn(c)
	}
}

// advertised is the host and port clients are told to connect to.
func (s *Server) advertised() (string, int32) {
	h, p := s.cfg.AdvertisedHost, s.cfg.AdvertisedPort
	s.mu.Lock()
	defer s.mu.Unlock()
	if h == "" {
		h = s.addrHost
	}
	if p == 0 {
		p = s.addrPort
	}
	return h, p
}

// Shutdown stops accepting, lets in-flight requests finish (long polls are
// woken and answered), closes idle connections, and releases the
// partitions. ctx bounds the wait; at its end connections are closed.
func (s *Server) Shutdown(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	close(s.done)
	for _, ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		// Unblock reads of idle connections; a connection in a request
		// sees the deadline only after writing its response, which a
		// client that does not read has ShutdownWriteGrace to take.
		c.SetReadDeadline(time.Now())
		c.SetWriteDeadline(time.Now().Add(ShutdownWriteGrace))
	}
	s.mu.Unlock()
	// Parked long polls wake on done.
	// Parked group requests are answered now (COORDINATOR_NOT_AVAILABLE),
	// so their connections finish.
	s.groups.shutdown()
	if s.follower != nil {
		s.follower.Close()
	}
	waited := make(chan struct{})
	go func() { s.wg.Wait(); close(waited) }()
	var err error
	select {
	case <-waited:
	case <-ctx.Done():
		s.mu.Lock()
		for c := range s.conns {
			c.Close()
		}
		s.mu.Unlock()
		<-waited
		err = ctx.Err()
	}
	if cerr := s.release(); err == nil {
		err = cerr
	}
	return err
}

// ShutdownWriteGrace is how long Shutdown lets a response being written
// take: a client that stops reading cannot hold the server past it.
const ShutdownWriteGrace = 500 * time.Millisecond

// Close shuts down at once.
func (s *Server) Close() error {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := s.Shutdown(ctx)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// release closes appenders (syncing them) and the offsets store, then
// lets the log dir's .lock go.
func (s *Server) release() error {
	first := s.checkpointHW()
	if err := s.closeAppenders(); err != nil && first == nil {
		first = err
	}
	if err := s.groups.close(); err != nil && first == nil {
		first = err
	}
	if s.dirLock != nil {
		s.dirLock.Release()
		s.dirLock = nil
	}
	return first
}

// checkpointHW records the high watermarks of the partitions whose model
// has moved past the log dir's replication-offset-checkpoint (those this
// server appended to) in that file, as a broker's checkpoint thread does,
// when the log dir has one: a later read-only serve (or klog fetch) would
// otherwise stop at the old high watermark. A partition the file does not
// list is added, as a broker lists every partition it holds. The file is
// replaced through partition's one checkpoint writer, and only when an
// entry changed.
func (s *Server) checkpointHW() error {
	if !s.cfg.Writable {
		return nil
	}
	if _, err := os.Stat(filepath.Join(s.cfg.LogDir, partition.ReplicationCheckpoint)); err != nil {
		return nil // none to keep current
	}
	var set []format.OffsetEntry
	s.mu.Lock()
	topics, names := s.topics, s.topicList
	s.mu.Unlock()
	for _, name := range names {
		for _, p := range topics[name].parts {
			if p == nil {
				continue
			}
			hw := p.log.HighWatermark()
			if ck, ok := p.log.CheckpointHighWatermark(); hw >= 0 && (!ok || ck != hw) {
				set = append(set, format.OffsetEntry{Topic: p.topic, Partition: p.index, Offset: hw})
			}
		}
	}
	if len(set) == 0 {
		return nil
	}
	if err := partition.UpdateCheckpointOffsets(s.cfg.LogDir, partition.ReplicationCheckpoint, set, partition.WriteOptions{}); err != nil {
		return fmt.Errorf("serve: high watermarks not checkpointed: %w", err)
	}
	return nil
}

// closeAppenders closes (and syncs) every partition's appender.
func (s *Server) closeAppenders() error {
	var first error
	s.mu.Lock()
	topics := s.topics
	s.mu.Unlock()
	for _, t := range topics {
		for _, p := range t.parts {
			if p == nil {
				continue
			}
			p.mu.Lock()
			if p.app != nil {
				if err := p.app.Close(); err != nil && first == nil {
					first = err
				}
				p.app = nil
			}
			p.mu.Unlock()
		}
	}
	return first
}

// allocPID hands out producer ids: the server's start time in ms × 1000
// plus a counter, so a restarted server does not reuse ids it gave before.
func (s *Server) allocPID() int64 {
	s.pidMu.Lock()
	defer s.pidMu.Unlock()
	s.nextPID++
	return s.nextPID
}
