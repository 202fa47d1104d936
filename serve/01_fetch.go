package serve

// Fetch, key 1: v4-v12.
//
// Version notes (FetchRequest.json):
//   - v0-v3 (message formats 0 and 1; v3 adds the response MaxBytes) are
//     not served: librdkafka needs ∋4 for the v2 record format.
//   - v4: IsolationLevel, the last stable offset and aborted transactions.
//   - v5: LogStartOffset in the response; v6: as v5.
//   - v7: fetch sessions (KIP-227), none offered here: a full fetch
//     (SessionEpoch 0 or -1, whatever its SessionID) is answered without a
//     session (SessionID 0), an incremental one (epoch above 0) is
//     FETCH_SESSION_ID_NOT_FOUND.
//   - v8: as v7; v9: CurrentLeaderEpoch (KIP-320); v10: zstd (KIP-110).
//   - v11: RackID and PreferredReadReplica (KIP-392; always -1 here).
//   - v12: flexible, LastFetchedEpoch (KIP-595).
//   - v13+ (topics by id only, KIP-516) are not served.
//
// The response is written by fetchResponse.writeFrame, not encoded by kmsg:
// the record bytes go from the segment files to the socket.

import (
	"encoding/binary"
	"errors"
	"io"
	"net"
	"os"
	"slices"
	"time"

	"github.com/klog-dev/klog/fetch"
	"github.com/klog-dev/klog/partition"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(1, 4, 12, (*conn).handleFetch) }

// fetchPart is one partition's answer: offsets, error, aborted
// transactions and the file range of its records.
type fetchPart struct {
	topic   int // index into the request's topics
	index   int32
	code    int16
	hw, lso int64
	start   int64
	aborted []fetch.AbortedTransaction
	// committed is set for read_committed: aborted is sent, possibly
	// empty, instead of null.
	committed bool
	file      string
	pos, size int64
	// data holds the records instead of a file range (a remote read).
	data []byte
	// log is the partition's model, which may hold the bytes of the
	// range (the last batch produced: Log.CopyAppended).
	log *partition.Log
}

// handleFetch serves a Fetch with package fetch's read path, long-polling
// (MinBytes, MaxWaitMillis) on appends. It answers with a fetchResponse,
// which writes the encoded fields and then each partition's record bytes
// straight from the segment file.
func (cn *conn) handleFetch(r *kmsg.FetchRequest) (kmsg.Response, error) {
	s := cn.s
	if r.Version >= 7 && r.SessionEpoch != 0 && r.SessionEpoch != -1 {
		// Fetch sessions (KIP-227) are not offered: every SessionID we
		// hand out is 0, so an incremental fetch names an unknown
		// session. A full fetch (FetchMetadata.isFull: the initial epoch
		// 0 or the final -1) closes the session it names, if any, and
		// is answered whole, as FetchManager.newContext answers it
		// (kafka-go sends SessionID -1 with epoch -1).
		resp := r.ResponseKind().(*kmsg.FetchResponse)
		resp.ErrorCode = kerr.FetchSessionIDNotFound.Code
		return resp, nil
	}
	iso := fetch.ReadUncommitted
	if r.IsolationLevel == 1 {
		iso = fetch.ReadCommitted
	}
	var deadline *time.Timer
	var w *partition.Waiter
	var parts []fetchPart
	for {
		parts = cn.readAll(r, iso, parts[:0])
		var total int64
		failed := false
		for i := range parts {
			total += parts[i].size
			failed = failed || parts[i].code != 0
		}
		if r.MaxWaitMillis <= 0 || total >= int64(r.MinBytes) || failed {
			break
		}
		if w == nil {
			// Park on the partitions read, and only those (kfake's
			// watchFetch, the broker's delayed fetch keys): armed
			// before reading again, so that an append in between is
			// not missed.
			w = cn.s.waiter(r)
			defer w.Stop()
			continue
		}
		if deadline == nil {
			deadline = time.NewTimer(time.Duration(r.MaxWaitMillis) * time.Millisecond)
			defer deadline.Stop()
		}
		if f := s.cfg.hooks.fetchParked; f != nil {
			f()
		}
		select {
		case <-w.C():
			if f := s.cfg.hooks.fetchWoken; f != nil {
				f()
			}
			continue
		case <-deadline.C:
		case <-s.done:
		}
		// Timed out or shutting down: answer with what there is now.
		parts = cn.readAll(r, iso, parts[:0])
		break
	}
	return &fetchResponse{FetchResponse: r.ResponseKind().(*kmsg.FetchResponse), req: r, parts: parts}, nil
}

// waiter waits on the partitions r reads that the server holds.
func (s *Server) waiter(r *kmsg.FetchRequest) *partition.Waiter {
	w := partition.NewWaiter()
	for _, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			if sp := s.lookup(rt.Topic, rp.Partition); sp != nil {
				w.Add(sp.log)
			}
		}
	}
	return w
}

// fetchResponse is a Fetch answer as file ranges: it writes its own frame
// (frameWriter). The embedded kmsg response only carries the version.
type fetchResponse struct {
	*kmsg.FetchResponse
	req   *kmsg.FetchRequest
	parts []fetchPart
}

func (f *fetchResponse) writeFrame(cn *conn, correlation int32) (int, int16, error) {
	return cn.writeFetch(correlation, f.req, f.parts)
}

// readAll reads every requested partition, as ReplicaManager.readFromLog
// does: the response limit shrinks with each partition's bytes, and only
// the first partition with data may exceed it (KIP-74).
func (cn *conn) readAll(r *kmsg.FetchRequest, iso fetch.Isolation, parts []fetchPart) []fetchPart {
	limit := int64(r.MaxBytes)
	if r.Version < 3 || limit <= 0 {
		limit = fetch.BrokerFetchMaxBytes
	}
	limit = min(limit, fetch.BrokerFetchMaxBytes)
	minOne := true
	for ti, rt := range r.Topics {
		for _, rp := range rt.Partitions {
			fp := fetchPart{topic: ti, index: rp.Partition, hw: -1, lso: -1, start: -1}
			sp := cn.s.lookup(rt.Topic, rp.Partition)
			// A follower's fetch, and a consumer's before KIP-392 (v11),
			// go to the leader.
			if code := cn.s.placement(rt.Topic, rp.Partition, sp, r.ReplicaID >= 0 || r.Version < 11); code != 0 {
				fp.code = code
				parts = append(parts, fp)
				continue
			}
			req := fetch.Request{FetchOffset: rp.FetchOffset, MaxBytes: int32(max(limit, 1)), PartitionMaxBytes: rp.PartitionMaxBytes,
				Isolation: iso, Replica: r.ReplicaID >= 0, NoMinOneMessage: !minOne, Locate: true}
			if rp.PartitionMaxBytes <= 0 {
				// A zero partition limit reads nothing (only KIP-74's
				// first batch could), never the consumer default.
				req.PartitionMaxBytes = 1
			}
			if rf, ok := sp.readRemote(req, minOne); ok {
				rf.topic, rf.index = ti, rp.Partition
				if rf.size > 0 && (rp.PartitionMaxBytes > 0 || minOne) {
					limit -= rf.size
					minOne = false
				} else {
					rf.data, rf.size = nil, 0
				}
				parts = append(parts, rf)
				continue
			}
			f, err := sp.read(req)
			var oor *fetch.OutOfRangeError
			switch {
			case errors.As(err, &oor):
				fp.code = kerr.OffsetOutOfRange.Code
			case err != nil:
				fp.code = kerr.KafkaStorageError.Code
			default:
				fp.hw, fp.lso, fp.start = f.HighWatermark, f.LastStableOffset, f.LogStartOffset
				fp.committed = iso == fetch.ReadCommitted && !req.Replica
				fp.aborted = f.AbortedTransactions
				if limit > 0 && f.Size > 0 && (rp.PartitionMaxBytes > 0 || minOne) {
					fp.file, fp.pos, fp.size, fp.log = f.Segment, f.Position, f.Size, sp.log
					limit -= f.Size
					minOne = false
				}
			}
			parts = append(parts, fp)
		}
	}
	return parts
}

// read runs fetch's read rules over the partition model, which is safe
// for concurrent use: the offsets are captured first, so an append while
// it reads is not seen (Partition.readRecords).
func (p *part) read(req fetch.Request) (*fetch.Fetched, error) {
	return fetch.Read(p.log, req, nil)
}

// writeFetch encodes a Fetch response v4-v12 around the partitions' file
// ranges (FetchResponse.json): the frame size is known up front because
// each range's size is.
// fetchCut is where a partition's records go in a Fetch frame: at offset at
// of the encoded fields, size bytes of file from pos, or data.
type fetchCut struct {
	at        int
	file      string
	pos, size int64
	data      []byte
	log       *partition.Log
}

func (cn *conn) writeFetch(correlation int32, r *kmsg.FetchRequest, parts []fetchPart) (int, int16, error) {
	flex := r.Version >= 12
	b := append(cn.out[:0], 0, 0, 0, 0)
	b = binary.BigEndian.AppendUint32(b, uint32(correlation))
	if flex {
		b = append(b, 0) // response header v1 tags
	}
	b = binary.BigEndian.AppendUint32(b, 0) // throttle_time_ms
	if r.Version >= 7 {
		b = binary.BigEndian.AppendUint16(b, 0) // error_code
		b = binary.BigEndian.AppendUint32(b, 0) // session_id
	}
	var cuts []fetchCut
	var total int64
	first := int16(0)
	// Group partitions by request topic, in request order.
	b = appendArrayLen(b, len(r.Topics), flex)
	pi := 0
	for ti, rt := range r.Topics {
		b = appendString(b, rt.Topic, flex)
		n := 0
		for j := pi; j < len(parts) && parts[j].topic == ti; j++ {
			n++
		}
		b = appendArrayLen(b, n, flex)
		for ; pi < len(parts) && parts[pi].topic == ti; pi++ {
			p := &parts[pi]
			if first == 0 {
				first = p.code
			}
			b = binary.BigEndian.AppendUint32(b, uint32(p.index))
			b = binary.BigEndian.AppendUint16(b, uint16(p.code))
			b = binary.BigEndian.AppendUint64(b, uint64(p.hw))
			b = binary.BigEndian.AppendUint64(b, uint64(p.lso))
			if r.Version >= 5 {
				b = binary.BigEndian.AppendUint64(b, uint64(p.start))
			}
			if !p.committed || p.code != 0 {
				b = appendNullArray(b, flex)
			} else {
				b = appendArrayLen(b, len(p.aborted), flex)
				for _, a := range p.aborted {
					b = binary.BigEndian.AppendUint64(b, uint64(a.ProducerID))
					b = binary.BigEndian.AppendUint64(b, uint64(a.FirstOffset))
					if flex {
						b = append(b, 0)
					}
				}
			}
			if r.Version >= 11 {
				b = binary.BigEndian.AppendUint32(b, 0xffffffff) // preferred_read_replica -1
			}
			if flex {
				b = binary.AppendUvarint(b, uint64(p.size)+1)
			} else {
				b = binary.BigEndian.AppendUint32(b, uint32(p.size))
			}
			if p.size > 0 {
				cuts = append(cuts, fetchCut{at: len(b), file: p.file, pos: p.pos, size: p.size, data: p.data, log: p.log})
				total += p.size
			}
			if flex {
				b = append(b, 0) // partition tags
			}
		}
		if flex {
			b = append(b, 0) // topic tags
		}
	}
	if flex {
		b = append(b, 0) // response tags
	}
	size := int64(len(b)) - 4 + total
	binary.BigEndian.PutUint32(b, uint32(size))
	cn.out = b
	if cap(cn.out) > 1<<20 {
		defer func() { cn.out = nil }()
	}
	if total <= smallFetch {
		// A small response (a long poll woken by one produce) goes out
		// in one write with its records read into the frame: sendfile's
		// open, seek and extra system calls around a few hundred bytes
		// cost more than the copy (BenchmarkProduceToConsume). Kafka's
		// FileRecords.writeTo sends by transferTo at every size; the
		// bytes on the wire are the same.
		frame, err := fillSmall(b, cuts, total)
		cn.out = frame
		if err != nil {
			return int(size) + 4, first, err
		}
		_, err = cn.c.Write(frame)
		return int(size) + 4, first, err
	}
	prev := 0
	for _, c := range cuts {
		if _, err := cn.c.Write(b[prev:c.at]); err != nil {
			return int(size) + 4, first, err
		}
		if c.data != nil {
			if _, err := cn.c.Write(c.data); err != nil {
				return int(size) + 4, first, err
			}
		} else if err := cn.sendFile(c.file, c.pos, c.size); err != nil {
			return int(size) + 4, first, err
		}
		prev = c.at
	}
	_, err := cn.c.Write(b[prev:])
	return int(size) + 4, first, err
}

// smallFetch is the most record bytes a Fetch response copies into its
// frame instead of sending them from the segment files.
const smallFetch = 64 << 10

// fillSmall makes the frame b (every field, with each cut's bytes still to
// insert at cut.at) whole: it grows b by total, moves the fields after
// each cut up and reads the cut's bytes into the gap.
func fillSmall(b []byte, cuts []fetchCut, total int64) ([]byte, error) {
	n := len(b)
	b = slices.Grow(b, int(total))[:n+int(total)]
	end, src := len(b), n
	for i := len(cuts) - 1; i >= 0; i-- {
		c := cuts[i]
		end -= copy(b[end-(src-c.at):end], b[c.at:src])
		dst := b[end-int(c.size) : end]
		end -= int(c.size)
		src = c.at
		if c.data != nil {
			copy(dst, c.data)
			continue
		}
		if c.log != nil && c.log.CopyAppended(c.file, c.pos, dst) {
			continue
		}
		if err := readRange(c.file, c.pos, dst); err != nil {
			return b, err
		}
	}
	return b, nil
}

// readRange reads len(dst) bytes of a segment at pos.
func readRange(path string, pos int64, dst []byte) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	if _, err := f.ReadAt(dst, pos); err != nil {
		if errors.Is(err, io.EOF) {
			return errShortFile
		}
		return err
	}
	return nil
}

// errShortFile: a segment shrank between the read and the send; the frame
// promised bytes that are gone, so the connection must close.
var errShortFile = errors.New("segment shorter than the fetch read")

// sendFile copies [pos, pos+n) of a segment to the connection: on a plain
// TCP connection where the system maps files, by one write(2) from a
// mapping of the range (sendMapped); otherwise from the file, by
// sendfile(2) where (*net.TCPConn).ReadFrom can use it (it unwraps the
// io.LimitedReader and sends from the file's current offset, which is why
// every send opens its own handle and seeks, net/sendfile.go) and by copies
// through a buffer on TLS.
func (cn *conn) sendFile(path string, pos, n int64) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	tc, plain := cn.c.(*net.TCPConn)
	if plain {
		if sent, err := sendMapped(tc, f, pos, n); sent {
			return err
		}
	}
	if _, err := f.Seek(pos, io.SeekStart); err != nil {
		return err
	}
	lr := &io.LimitedReader{R: f, N: n}
	var w int64
	if plain {
		w, err = tc.ReadFrom(lr)
	} else {
		w, err = io.Copy(cn.c, lr)
	}
	if err != nil {
		return err
	}
	if w != n {
		return errShortFile
	}
	return nil
}

func appendArrayLen(b []byte, n int, flex bool) []byte {
	if flex {
		return binary.AppendUvarint(b, uint64(n)+1)
	}
	return binary.BigEndian.AppendUint32(b, uint32(n))
}

func appendNullArray(b []byte, flex bool) []byte {
	if flex {
		return append(b, 0)
	}
	return binary.BigEndian.AppendUint32(b, 0xffffffff)
}

func appendString(b []byte, s string, flex bool) []byte {
	if flex {
		b = binary.AppendUvarint(b, uint64(len(s))+1)
	} else {
		b = binary.BigEndian.AppendUint16(b, uint16(len(s)))
	}
	return append(b, s...)
}
