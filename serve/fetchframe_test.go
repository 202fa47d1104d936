package serve

import (
	"bytes"
	"errors"
	"io"
	"net"
	"os"
	"path/filepath"
	"testing"
)

// TestFillSmall: a small Fetch frame gets each cut's bytes, from a segment
// range or from memory, at its place between the encoded fields; a segment
// shorter than the range read is errShortFile.
func TestFillSmall(t *testing.T) {
	seg := filepath.Join(t.TempDir(), "00000000000000000000.log")
	if err := os.WriteFile(seg, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		fields  string
		cuts    []fetchCut
		want    string
		wantErr error
	}{
		{"no records", "hdr", nil, "hdr", nil},
		{"one file range", "AB", []fetchCut{{at: 1, file: seg, pos: 2, size: 3}}, "A234B", nil},
		{"at the end", "AB", []fetchCut{{at: 2, file: seg, pos: 0, size: 2}}, "AB01", nil},
		{"file and memory", "A|B|C", []fetchCut{{at: 2, file: seg, pos: 7, size: 3}, {at: 4, data: []byte("xy"), size: 2}}, "A|789B|xyC", nil},
		{"segment shrank", "AB", []fetchCut{{at: 1, file: seg, pos: 8, size: 4}}, "", errShortFile},
		{"segment gone", "AB", []fetchCut{{at: 1, file: seg + ".gone", pos: 0, size: 1}}, "", os.ErrNotExist},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var total int64
			for _, c := range tc.cuts {
				total += c.size
			}
			got, err := fillSmall([]byte(tc.fields), tc.cuts, total)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(got, []byte(tc.want)) {
				t.Fatalf("got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// TestSendFile: a segment range reaches the client byte for byte from a
// mapping (plain TCP) and from the file (any other connection, as TLS),
// at a position that is not page-aligned, over more than one mapping
// window; a segment shorter than the range
// (truncated under the send) is errShortFile and no fault of this process,
// and a range past the end likewise.
func TestSendFile(t *testing.T) {
	seg, data := writeSegment(t, 2*sendWindow+3<<20+123)
	for _, tc := range []struct {
		name     string
		plain    bool
		pos, n   int64
		truncate int64 // the segment's size just before the send, 0 to keep it
		wantErr  error
	}{
		{"mapped", true, 4097, 2<<20 + 5, 0, nil},
		{"mapped whole file, window by window", true, 0, int64(len(data)), 0, nil},
		{"mapped across windows", true, sendWindow - 10, sendWindow + 20, 0, nil},
		{"mapped, truncated inside a later window", true, 4097, 2 * sendWindow, sendWindow + 1<<20, errShortFile},
		{"copied", false, 4097, 2<<20 + 5, 0, nil},
		{"mapped, truncated", true, 4097, 2<<20 + 5, 1 << 20, errShortFile},
		{"copied, truncated", false, 4097, 2<<20 + 5, 1 << 20, errShortFile},
		{"mapped, past the end", true, int64(len(data)) - 10, 20, 0, errShortFile},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(seg, data, 0o644); err != nil {
				t.Fatal(err)
			}
			if tc.truncate > 0 {
				if err := os.Truncate(seg, tc.truncate); err != nil {
					t.Fatal(err)
				}
			}
			client, server := loopbackPair(t)
			got := make(chan []byte, 1)
			go func() {
				b, _ := io.ReadAll(client)
				got <- b
			}()
			cn := &conn{c: server}
			if !tc.plain {
				cn.c = struct{ net.Conn }{server} // not a *net.TCPConn, as a TLS connection is not
			}
			err := cn.sendFile(seg, tc.pos, tc.n)
			server.Close()
			b := <-got
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err %v, want %v", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(b, data[tc.pos:tc.pos+tc.n]) {
				t.Fatalf("received %d bytes, not the range's %d", len(b), tc.n)
			}
		})
	}
}

// writeSegment writes a segment file of n patterned bytes and returns its
// path and bytes.
func writeSegment(tb testing.TB, n int) (string, []byte) {
	tb.Helper()
	seg := filepath.Join(tb.TempDir(), "00000000000000000000.log")
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i * 7)
	}
	if err := os.WriteFile(seg, data, 0o644); err != nil {
		tb.Fatal(err)
	}
	return seg, data
}

// loopbackPair is a connected pair of loopback TCP connections, closed
// when tb ends.
func loopbackPair(tb testing.TB) (client, server net.Conn) {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer ln.Close()
	client, err = net.Dial("tcp", ln.Addr().String())
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { client.Close() })
	server, err = ln.Accept()
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { server.Close() })
	return client, server
}
