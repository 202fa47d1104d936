package format

import (
	"bufio"
	"bytes"
	"encoding/hex"
	"os"
	"strings"
	"testing"
	"unicode/utf16"
	"unicode/utf8"
)

// TestAppendJavaUTF8Vectors checks every vector recorded from JDK 17's
// new String(bytes, UTF_8).
func TestAppendJavaUTF8Vectors(t *testing.T) {
	f, err := os.Open("testdata/java-utf8-vectors.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()

	const maxReported = 10
	var total, failed, refFailed int
	sc := bufio.NewScanner(f)
	line := 0
	for sc.Scan() {
		line++
		text := strings.TrimSpace(sc.Text())
		if text == "" || strings.HasPrefix(text, "#") {
			continue
		}
		in, want, ok := strings.Cut(text, "\t")
		if !ok {
			t.Fatalf("line %d: no tab: %q", line, text)
		}
		inBytes, err1 := hex.DecodeString(in)
		wantBytes, err2 := hex.DecodeString(strings.TrimSpace(want))
		if err1 != nil || err2 != nil {
			if line == 1 { // header line
				continue
			}
			t.Fatalf("line %d: bad hex: %q", line, text)
		}
		total++
		got := AppendJavaUTF8(nil, inBytes)
		if !bytes.Equal(got, wantBytes) {
			failed++
			if failed <= maxReported {
				t.Errorf("line %d: AppendJavaUTF8(%s) = %x, want %x", line, in, got, wantBytes)
			}
		}
		// The fuzz target's reference port must match the JDK too.
		if ref := javaDecodeRef(inBytes); !bytes.Equal(ref, wantBytes) {
			refFailed++
			if refFailed <= maxReported {
				t.Errorf("line %d: javaDecodeRef(%s) = %x, want %x", line, in, ref, wantBytes)
			}
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if failed > 0 {
		t.Errorf("%d of %d vectors failed", failed, total)
	}
	if total != 19936 {
		t.Errorf("read %d vectors, want 19936", total)
	}
}

func TestAppendJavaUTF8Table(t *testing.T) {
	const r = "\uFFFD"
	tests := []struct {
		name string
		in   string
		want string
	}{
		{"empty", "", ""},
		{"ascii", "hello, world\n", "hello, world\n"},
		{"valid multibyte", "héllo €𝄞", "héllo €𝄞"},
		{"truncated 3-byte then ascii", "\xE2\x82A", r + "A"},
		{"truncated E0 A0 at end", "\xE0\xA0", r},
		{"E0 overlong second byte", "\xE0\x80\x80", r + r + r},
		{"encoded surrogate", "\xED\xA0\x80", r},
		{"truncated surrogate", "\xED\xA0", r},
		{"surrogate prefix then ascii", "\xED\xBFA", r + "A"},
		{"stray continuation", "a\x80b", "a" + r + "b"},
		{"C0 C1 leads", "\xC0\xAF\xC1\xBF", r + r + r + r},
		{"F5..FF leads", "\xF5\xF8\xFF", r + r + r},
		{"above U+10FFFF", "\xF4\x90\x80\x80", r + r + r + r},
		{"F0 overlong", "\xF0\x80\x80\x80", r + r + r + r},
		{"truncated 4-byte", "\xF0\x9F\x98", r},
		{"truncated 4-byte then ascii", "\xF0\x9F\x98A", r + "A"},
		{"4-byte bad third byte", "\xF1\x80Ax", r + "Ax"},
		{"lone 2-byte lead at end", "x\xC3", "x" + r},
		{"2-byte lead then ascii", "\xC3A", r + "A"},
		{"valid around invalid", "€\xFF€", "€" + r + "€"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendJavaUTF8(nil, []byte(tt.in))
			if string(got) != tt.want {
				t.Errorf("AppendJavaUTF8(%x) = %x, want %x", tt.in, got, tt.want)
			}
			if ref := javaDecodeRef([]byte(tt.in)); string(ref) != tt.want {
				t.Errorf("reference(%x) = %x, want %x", tt.in, ref, tt.want)
			}
		})
	}
}

func TestAppendJavaUTF8AppendsToDst(t *testing.T) {
	dst := append(make([]byte, 0, 64), "k="...)
	got := AppendJavaUTF8(dst, []byte("a\xFFb"))
	if string(got) != "k=a\uFFFDb" {
		t.Errorf("got %q", got)
	}
	if &got[0] != &dst[:1][0] {
		t.Error("reallocated although dst had capacity")
	}
}

func TestAppendJavaUTF8Allocs(t *testing.T) {
	dst := make([]byte, 0, 256)
	for _, in := range []string{"plain ascii key", "héllo €𝄞", "bad \xE2\x82A \xED\xA0\x80 \xF4\x90\x80\x80"} {
		allocs := testing.AllocsPerRun(100, func() {
			dst = AppendJavaUTF8(dst[:0], []byte(in))
		})
		if allocs != 0 {
			t.Errorf("%q: %v allocs, want 0", in, allocs)
		}
	}
}

// javaDecodeRef is a literal port of JDK 17's String.decodeUTF8_UTF16 with
// doReplace=true (and its malformed3/malformed4 helpers), kept as an
// independent reference for the fuzz target. Bytes are signed as in Java.
func javaDecodeRef(src []byte) []byte {
	const repl = 0xFFFD
	isNotCont := func(b int) bool { return b&0xc0 != 0x80 }
	at := func(i int) int { return int(int8(src[i])) }
	isMalformed3 := func(b1, b2, b3 int) bool {
		return (b1 == -0x20 && b2&0xe0 == 0x80) || b2&0xc0 != 0x80 || b3&0xc0 != 0x80
	}
	isMalformed3_2 := func(b1, b2 int) bool {
		return (b1 == -0x20 && b2&0xe0 == 0x80) || b2&0xc0 != 0x80
	}
	isMalformed4 := func(b2, b3, b4 int) bool {
		return b2&0xc0 != 0x80 || b3&0xc0 != 0x80 || b4&0xc0 != 0x80
	}
	isMalformed4_2 := func(b1, b2 int) bool { // unsigned b1, b2
		return (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) ||
			(b1 == 0xf4 && b2&0xf0 != 0x80) || b2&0xc0 != 0x80
	}
	malformed3 := func(sp int) int {
		b1, b2 := at(sp), at(sp+1)
		if (b1 == -0x20 && b2&0xe0 == 0x80) || isNotCont(b2) {
			return 1
		}
		return 2
	}
	malformed4 := func(sp int) int {
		b1, b2 := int(src[sp]), int(src[sp+1])
		if b1 > 0xf4 || (b1 == 0xf0 && (b2 < 0x90 || b2 > 0xbf)) ||
			(b1 == 0xf4 && b2&0xf0 != 0x80) || isNotCont(b2) {
			return 1
		}
		if isNotCont(at(sp + 2)) {
			return 2
		}
		return 3
	}

	var out []uint16
	sp, sl := 0, len(src)
	for sp < sl {
		b1 := at(sp)
		sp++
		switch {
		case b1 >= 0:
			out = append(out, uint16(b1))
		case b1>>5 == -2 && b1&0x1e != 0:
			if sp < sl {
				b2 := at(sp)
				sp++
				if isNotCont(b2) {
					out = append(out, repl)
					sp--
				} else {
					out = append(out, uint16((b1<<6)^b2^((-0x40<<6)^(-0x80))))
				}
				continue
			}
			out = append(out, repl)
			sp = sl // break
		case b1>>4 == -2:
			if sp+1 < sl {
				b2, b3 := at(sp), at(sp+1)
				sp += 2
				if isMalformed3(b1, b2, b3) {
					out = append(out, repl)
					sp -= 3
					sp += malformed3(sp)
				} else {
					c := uint16((b1 << 12) ^ (b2 << 6) ^ (b3 ^ ((-0x20 << 12) ^ (-0x80 << 6) ^ (-0x80))))
					if utf16.IsSurrogate(rune(c)) {
						out = append(out, repl)
					} else {
						out = append(out, c)
					}
				}
				continue
			}
			if sp < sl && isMalformed3_2(b1, at(sp)) {
				out = append(out, repl)
				continue
			}
			out = append(out, repl)
			sp = sl // break
		case b1>>3 == -2:
			if sp+2 < sl {
				b2, b3, b4 := at(sp), at(sp+1), at(sp+2)
				sp += 3
				uc := (b1 << 18) ^ (b2 << 12) ^ (b3 << 6) ^
					(b4 ^ ((-0x10 << 18) ^ (-0x80 << 12) ^ (-0x80 << 6) ^ (-0x80)))
				if isMalformed4(b2, b3, b4) || uc < 0x10000 || uc > 0x10FFFF {
					out = append(out, repl)
					sp -= 4
					sp += malformed4(sp)
				} else {
					h, l := utf16.EncodeRune(rune(uc))
					out = append(out, uint16(h), uint16(l))
				}
				continue
			}
			ub1 := b1 & 0xff
			if ub1 > 0xf4 || sp < sl && isMalformed4_2(ub1, int(src[sp])) {
				out = append(out, repl)
				continue
			}
			sp++
			out = append(out, repl)
			if sp < sl && isNotCont(at(sp)) {
				continue
			}
			sp = sl // break
		default:
			out = append(out, repl)
		}
	}
	var res []byte
	for _, r := range utf16.Decode(out) {
		res = utf8.AppendRune(res, r)
	}
	return res
}

func FuzzJavaUTF8(f *testing.F) {
	for _, s := range []string{
		"", "hello", "héllo €𝄞", "\xE2\x82A", "\xE0\xA0", "\xED\xA0\x80", "\x80",
		"\xC0\xAF", "\xF4\x90\x80\x80", "\xF0\x9F\x98A", "\xF1\x80\x80", "\xFF\xFE",
	} {
		f.Add([]byte(s))
	}
	// Every input of the JDK vectors, run together into 4 KiB seeds.
	if data, err := os.ReadFile("testdata/java-utf8-vectors.tsv"); err == nil {
		var seed []byte
		for line := range strings.Lines(string(data)) {
			in, _, _ := strings.Cut(line, "\t")
			if b, err := hex.DecodeString(in); err == nil {
				seed = append(seed, b...)
			}
			if len(seed) >= 4<<10 {
				f.Add(seed)
				seed = nil
			}
		}
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got := AppendJavaUTF8(nil, in)
		if !utf8.Valid(got) {
			t.Fatalf("AppendJavaUTF8(%x) = %x: not valid UTF-8", in, got)
		}
		if utf8.Valid(in) && !bytes.Equal(got, in) {
			t.Fatalf("AppendJavaUTF8(%x) = %x: valid input changed", in, got)
		}
		if ref := javaDecodeRef(in); !bytes.Equal(got, ref) {
			t.Fatalf("AppendJavaUTF8(%x) = %x, JDK port gives %x", in, got, ref)
		}
		pre := []byte("prefix")
		if got2 := AppendJavaUTF8(pre, in); string(got2[:6]) != "prefix" || !bytes.Equal(got2[6:], got) {
			t.Fatalf("AppendJavaUTF8 with non-empty dst = %x", got2)
		}
	})
}

func BenchmarkJavaUTF8(b *testing.B) {
	inputs := []struct {
		name string
		in   []byte
	}{
		{"ascii-16", []byte("user-1234567890a")},
		{"ascii-1k", bytes.Repeat([]byte(`{"id":42,"name":"klog"} `), 43)},
		{"mixed-1k", bytes.Repeat([]byte("héllo wörld €𝄞 ascii text "), 32)},
		{"invalid-1k", bytes.Repeat([]byte("abc\xE2\x82A\xFF déf \xED\xA0\x80 ghi\xF0\x9F\x98 "), 32)},
	}
	for _, in := range inputs {
		b.Run(in.name, func(b *testing.B) {
			dst := make([]byte, 0, 4*len(in.in))
			b.SetBytes(int64(len(in.in)))
			b.ReportAllocs()
			for b.Loop() {
				dst = AppendJavaUTF8(dst[:0], in.in)
			}
		})
	}
}
