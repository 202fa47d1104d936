package main

import (
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/klog-dev/klog/serve"
	"github.com/urfave/cli/v2"
)

var (
	serveLogDirFlag   = &cli.StringSliceFlag{Name: "log-dir", Usage: "log directory whose partition directories become topic partitions; repeated (or a folder of broker folders): a cluster replayed, one broker per node.id", Required: true}
	serveListenFlag   = &cli.StringFlag{Name: "listen", Value: "127.0.0.1:9092", Usage: "address to listen on"}
	serveWritableFlag = &cli.BoolFlag{Name: "writable", Usage: "accept produce and keep committed offsets in the log dir, as a broker does"}
	serveStateFlag    = &cli.StringFlag{Name: "state", Usage: "read-only: directory for committed offsets (default: a per-log-dir folder under the user's state directory)"}
	serveStateMaxFlag = &cli.StringFlag{Name: "state-max-bytes", Value: "64MiB", Usage: "read-only: the most `BYTES` kept in --state (compacted as Kafka's log cleaner compacts __consumer_offsets; past it commits are COORDINATOR_NOT_AVAILABLE, and new groups past half of it); 0 for no bound"}
	serveStateGrpFlag = &cli.IntFlag{Name: "state-max-groups", Value: serve.DefaultStateMaxGroups, Usage: "read-only: the most groups kept; a new group beyond is COORDINATOR_NOT_AVAILABLE; 0 for no bound"}
	serveReqLogFlag   = &cli.StringFlag{Name: "request-log", Usage: "append one JSON line per request to this file (- for stderr)"}
	serveCertFlag     = &cli.StringFlag{Name: "tls-cert", Usage: "serve TLS with this PEM certificate (with --tls-key)"}
	serveKeyFlag      = &cli.StringFlag{Name: "tls-key", Usage: "PEM private key for --tls-cert"}
	serveMaxReqFlag   = &cli.IntFlag{Name: "max-request-bytes", Value: serve.DefaultMaxRequestBytes, Usage: "largest request frame accepted (socket.request.max.bytes)"}
	serveMaxConnFlag  = &cli.IntFlag{Name: "max-connections", Value: serve.DefaultMaxConnections, Usage: "open connections beyond this are closed on accept"}
	serveQueuedFlag   = &cli.Int64Flag{Name: "max-queued-request-bytes", Usage: "bytes of requests in flight across all connections (queued.max.request.bytes; default 128 MiB, at least --max-request-bytes plus 16 MiB)"}
	serveInflateFlag  = &cli.IntFlag{Name: "max-decompressed-bytes", Value: serve.DefaultMaxDecompressedBytes, Usage: "most a produced batch may decompress to (MESSAGE_TOO_LARGE beyond; two batches decompress at a time)"}
	serveUsersFlag    = &cli.StringFlag{Name: "sasl-users", Usage: "require SASL (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512) with the users of `FILE`: one a line, NAME read|write PASSWORD (mode 600)"}
	serveAnonFlag     = &cli.BoolFlag{Name: "allow-unauthenticated", Usage: "serve an address other than loopback without --sasl-users (anyone who reaches it reads every topic, and writes with --writable)"}
	servePerIPFlag    = &cli.IntFlag{Name: "max-connections-per-ip", Value: serve.DefaultMaxConnectionsPerIP, Usage: "connections of one client address beyond this are closed on accept (max.connections.per.ip)"}
	serveAdvertFlag   = &cli.StringFlag{Name: "advertise", Usage: "host:port clients are told to connect to (default: the listen address)"}
	serveMaxMsgFlag   = &cli.IntFlag{Name: "max-message-bytes", Value: serve.DefaultMaxMessageBytes, Usage: "largest record batch a producer may append, and largest group record (message.max.bytes)"}
	serveTSBeforeFlag = &cli.DurationFlag{Name: "message-timestamp-before-max", Usage: "refuse CreateTime records older than this against the server's clock (message.timestamp.before.max.ms; default no limit)"}
	serveTSAfterFlag  = &cli.DurationFlag{Name: "message-timestamp-after-max", Value: serve.DefaultTimestampAfterMax, Usage: "refuse CreateTime records further than this in the future (message.timestamp.after.max.ms)"}
	serveIdleFlag     = &cli.DurationFlag{Name: "idle-timeout", Value: serve.DefaultIdleTimeout, Usage: "close a connection that sends no byte for this long (connections.max.idle.ms)"}
)

var serveCommand = &cli.Command{
	Name:  "serve",
	Usage: "speak the Kafka protocol over a log dir, for unmodified Kafka clients",
	Description: `Every partition directory under --log-dir becomes a topic partition (a
log dir holding some of a topic's partitions serves those; Metadata reports
the others without a leader). Clients consume with Fetch, ListOffsets
and consumer groups; committed offsets go to __consumer_offsets-N partitions
in Kafka's record format (in --state unless --writable). Read-only by
default: the log dir is never changed. --writable accepts Produce (acks 0, 1,
all; idempotent producers) through klog's appender. With --remote (and the
flags of klog tiered: --rsm-config, --key-pair, --s3-*), the remote tier of
tiered storage is served too: a fetch below a partition's local log start
reads the remote segment that holds the offset (the log dir's
__remote_log_metadata-N say which), and ListOffsets answers -2 (the remote
start), -4 (earliest-local) and -5 (latest-tiered) as a broker with tiered
storage does. Stops cleanly on SIGINT/SIGTERM.

Several --log-dir (or one folder of broker folders) replay a cluster: each
broker (meta.properties' node.id; its log dirs together, JBOD) is served on
its own listener (--listen's port, then the next ones, or --broker-ports),
with the leaders, replicas and ISR of the KRaft metadata image when the
disks hold __cluster_metadata, else each partition led by its most complete
replica (said on stderr). Followers' fetches are answered by the leader;
-future, -delete and -stray directories are not served. A replay is
read-only.`,
	Flags: []cli.Flag{serveLogDirFlag, serveBrokerPortsFlag, serveListenFlag, serveWritableFlag, serveStateFlag, serveStateMaxFlag, serveStateGrpFlag, serveReqLogFlag,
		serveCertFlag, serveKeyFlag, serveMaxReqFlag, serveMaxConnFlag, serveAdvertFlag, serveIdleFlag,
		serveMaxMsgFlag, serveTSBeforeFlag, serveTSAfterFlag, servePerIPFlag, serveQueuedFlag, serveInflateFlag,
		serveUsersFlag, serveAnonFlag,
		tieredRemoteFlag, tieredPrefixFlag, tieredKeyPairFlag, tieredRSMFlag, s3EndpointFlag, s3RegionFlag, s3ProfileFlag, s3AddressingFlag, s3AnonymousFlag, tieredParallelFlag},
	Action: runServe,
}

// defaultStateDir is $XDG_STATE_HOME (or ~/.local/state)/klog/serve/<name>-<hash
// of the absolute log dir>.
func defaultStateDir(logDir string) (string, error) {
	abs, err := filepath.Abs(logDir)
	if err != nil {
		return "", err
	}
	base := os.Getenv("XDG_STATE_HOME")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", err
		}
		base = filepath.Join(home, ".local", "state")
	}
	sum := sha256.Sum256([]byte(abs))
	return filepath.Join(base, "klog", "serve", filepath.Base(abs)+"-"+hex.EncodeToString(sum[:6])), nil
}

func runServe(c *cli.Context) error {
	signalIsStop(c) // SIGINT/SIGTERM is how a server stops: exit 0
	if c.Args().Len() > 0 {
		return usageError("serve: unexpected arguments %q", c.Args().Slice())
	}
	if err := int32Flags(c, serveMaxReqFlag.Name, serveMaxMsgFlag.Name); err != nil {
		return err
	}
	dirs := c.StringSlice(serveLogDirFlag.Name)
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return troubleError("serve: --log-dir %s is not a directory", dir)
		}
	}
	if expanded, replay, err := replayDirs(dirs); err != nil {
		return troubleError("serve: %w", err)
	} else if replay {
		return runReplay(c, expanded)
	} else if c.IsSet(serveBrokerPortsFlag.Name) {
		return usageError("serve: --broker-ports is for several brokers' log dirs")
	} else {
		dirs = expanded // a folder holding one broker's log dir
	}
	dir := dirs[0]
	cfg := serve.Config{LogDir: dir, Writable: c.Bool(serveWritableFlag.Name),
		MaxRequestBytes: int32(c.Int(serveMaxReqFlag.Name)), MaxConnections: c.Int(serveMaxConnFlag.Name),
		MaxConnectionsPerIP: c.Int(servePerIPFlag.Name), MaxQueuedRequestBytes: c.Int64(serveQueuedFlag.Name),
		MaxDecompressedBytes: c.Int(serveInflateFlag.Name),
		IdleTimeout:          c.Duration(serveIdleFlag.Name), MaxMessageBytes: int32(c.Int(serveMaxMsgFlag.Name)),
		TimestampBeforeMax: c.Duration(serveTSBeforeFlag.Name), TimestampAfterMax: c.Duration(serveTSAfterFlag.Name)}
	if cfg.TimestampAfterMax == 0 {
		cfg.TimestampAfterMax = -1 // 0 on the command line: no limit
	}
	if err := serveRemote(c, &cfg); err != nil {
		return err
	}
	if !cfg.Writable {
		if err := serveStateDir(c, &cfg, dir); err != nil {
			return err
		}
	} else if c.IsSet(serveStateFlag.Name) {
		return usageError("serve: --state is for read-only serving; --writable keeps offsets in the log dir")
	} else if d, err := defaultStateDir(dir); err == nil {
		// Where a writable server keeps the configs altered through
		// it (serve.ConfigsFile); its offsets stay in the log dir.
		cfg.StateDir = d
	}
	closeLog, err := serveLogAndTLS(c, &cfg)
	if err != nil {
		return err
	}
	defer closeLog()
	if err := serveIdentity(c, &cfg); err != nil {
		return err
	}
	listen := c.String(serveListenFlag.Name)
	loopback, err := loopbackAddress(listen)
	if err != nil {
		return usageError("serve: --listen: %v", err)
	}
	switch {
	case !loopback && cfg.Users == nil && !c.Bool(serveAnonFlag.Name):
		return usageError("serve: %s is not a loopback address: serve it with --sasl-users, or without authentication with --allow-unauthenticated", listen)
	case !loopback && cfg.Users == nil:
		fmt.Fprintf(c.App.ErrWriter, "klog: serve: WARNING: %s without authentication: anyone who can reach it reads every topic%s\n", listen,
			map[bool]string{true: " and writes to the log dir", false: ""}[cfg.Writable])
	case !loopback && cfg.TLS == nil:
		fmt.Fprintf(c.App.ErrWriter, "klog: serve: WARNING: %s without TLS: SASL/PLAIN passwords and all records cross the network in clear (add --tls-cert and --tls-key)\n", listen)
	}
	srv, err := serve.New(cfg)
	if err != nil {
		return troubleError("%w", err)
	}
	ln, err := net.Listen("tcp", listen)
	if err != nil {
		srv.Close()
		return troubleError("serve: %w", err)
	}
	return serveUntilDone(c.Context, srv, ln, cfg, c.App.ErrWriter)
}

// serveIdentity reads how the server advertises itself (--advertise) and
// whom it lets in (--sasl-users).
func serveIdentity(c *cli.Context, cfg *serve.Config) error {
	if a := c.String(serveAdvertFlag.Name); a != "" {
		h, p, err := net.SplitHostPort(a)
		if err != nil {
			return usageError("serve: --advertise: %v", err)
		}
		port, err := strconv.Atoi(p)
		if err != nil || port <= 0 || port > 65535 {
			return usageError("serve: --advertise: bad port %q", p)
		}
		cfg.AdvertisedHost, cfg.AdvertisedPort = h, int32(port)
	}
	if p := c.String(serveUsersFlag.Name); p != "" {
		users, err := serve.LoadUsers(p)
		if err != nil {
			return troubleError("serve: --sasl-users: %w", err)
		}
		cfg.Users = users
	}
	return nil
}

// serveStateDir sets a read-only server's state directory: --state, or a
// per-log-dir folder under the user's state directory.
func serveStateDir(c *cli.Context, cfg *serve.Config, dir string) error {
	cfg.StateDir = c.String(serveStateFlag.Name)
	if cfg.StateDir == "" {
		d, err := defaultStateDir(dir)
		if err != nil {
			return troubleError("serve: %w (set --state)", err)
		}
		cfg.StateDir = d
	}
	abs1, _ := filepath.Abs(cfg.StateDir)
	abs2, _ := filepath.Abs(dir)
	if abs1 == abs2 {
		return usageError("serve: --state must not be the log dir (use --writable to keep offsets there)")
	}
	n, err := parseBytes(c.String(serveStateMaxFlag.Name))
	if err != nil || n < 0 {
		return usageError("serve: --state-max-bytes: %q is not a byte count", c.String(serveStateMaxFlag.Name))
	}
	g := c.Int(serveStateGrpFlag.Name)
	if g < 0 {
		return usageError("serve: --state-max-groups must be 0 or more, got %d", g)
	}
	// 0 is no bound here, which serve.Config spells negative.
	cfg.StateMaxBytes, cfg.StateMaxGroups = n, g
	if n == 0 {
		cfg.StateMaxBytes = -1
	}
	if g == 0 {
		cfg.StateMaxGroups = -1
	}
	return nil
}

// serveLogAndTLS sets the request log and TLS of cfg from the flags; the
// returned function closes the request log file.
func serveLogAndTLS(c *cli.Context, cfg *serve.Config) (func(), error) {
	closeLog := func() {}
	if p := c.String(serveReqLogFlag.Name); p != "" {
		if p == "-" {
			cfg.RequestLog = c.App.ErrWriter
		} else {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			if err != nil {
				return nil, troubleError("serve: %w", err)
			}
			closeLog = func() { f.Close() }
			cfg.RequestLog = f
		}
	}
	cert, key := c.String(serveCertFlag.Name), c.String(serveKeyFlag.Name)
	if (cert == "") != (key == "") {
		closeLog()
		return nil, usageError("serve: --tls-cert and --tls-key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			closeLog()
			return nil, troubleError("serve: %w", err)
		}
		cfg.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	}
	return closeLog, nil
}

// serveUntilDone serves until ctx ends (SIGINT/SIGTERM), then shuts down,
// giving in-flight requests 10 seconds.
func serveUntilDone(ctx context.Context, srv *serve.Server, ln net.Listener, cfg serve.Config, stderr io.Writer) error {
	for _, w := range srv.Warnings() {
		fmt.Fprintf(stderr, "klog: serve: WARNING: %s\n", w)
	}
	mode := "read-only"
	if cfg.Writable {
		mode = "writable"
	} else {
		mode += ", offsets in " + cfg.StateDir
	}
	if cfg.Users != nil {
		mode += ", SASL users " + strings.Join(cfg.Users.Names(), " ")
	}
	fmt.Fprintf(stderr, "klog: serve: %s on %s (%s)\n", cfg.LogDir, ln.Addr(), mode)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		srv.Close()
		if err != nil && !errors.Is(err, serve.ErrServerClosed) {
			return troubleError("serve: %w", err)
		}
		return nil
	case <-ctx.Done():
	}
	// A signal is serve's normal end: connections get a second to
	// finish (a response being written ShutdownWriteGrace), then they
	// are closed; either way the exit code is 0.
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := srv.Shutdown(sctx)
	<-errc
	fmt.Fprintln(stderr, "klog: serve: stopped")
	if errors.Is(err, context.DeadlineExceeded) {
		fmt.Fprintln(stderr, "klog: serve: closed the connections that did not finish within a second")
		err = nil
	}
	if err != nil {
		return troubleError("serve: shutdown: %w", err)
	}
	return nil
}

// loopbackAddress reports whether a listen address binds loopback only:
// localhost or a loopback IP. An empty host (":9092") is every interface.
func loopbackAddress(addr string) (bool, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return false, err
	}
	if host == "localhost" {
		return true, nil
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback(), nil
}
