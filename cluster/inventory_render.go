package cluster

import (
	"bufio"
	"fmt"
	"io"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/dump"
	"github.com/klog-dev/klog/verify"
)

// The inventory for people, in the shape of kcat -L: brokers and their log
// dirs, then each topic's partitions with one row per replica (a table,
// fitted to the terminal or as TSV through the views' table writer).

func bytesText(n int64) string { return dump.ViewBytes(n) }

// bytesUnitText is bytesText with its unit: "657 bytes", "1288295 bytes
// (1.2 MiB)".
func bytesUnitText(n int64) string {
	s := bytesText(n)
	if i := strings.IndexByte(s, ' '); i >= 0 {
		return s[:i] + " bytes" + s[i:]
	}
	return s + " bytes"
}

func brokerName(id int32) string {
	if id < 0 {
		return "broker ?"
	}
	return "broker " + strconv.Itoa(int(id))
}

// WriteInventory writes the inventory as text.
func WriteInventory(w io.Writer, inv *Inventory) error {
	bw := bufio.NewWriter(w)
	logDirs := 0
	for _, b := range inv.Brokers {
		logDirs += len(b.LogDirs)
	}
	fmt.Fprintf(bw, "%s, %s", verify.Plural(int64(len(inv.Brokers)), "broker", "brokers"), verify.Plural(int64(logDirs), "log dir", "log dirs"))
	if inv.Image != nil {
		fmt.Fprintf(bw, "; metadata image at offset %d", inv.Image.LastContainedOffset)
	}
	bw.WriteString(":\n")
	for _, b := range inv.Brokers {
		for _, ld := range b.LogDirs {
			var extra []string
			if ld.DirectoryID != "" {
				extra = append(extra, "directory.id "+ld.DirectoryID)
			}
			if ld.ClusterID != "" {
				extra = append(extra, "cluster "+ld.ClusterID)
			}
			for _, x := range []struct {
				n    int
				what string
			}{{len(ld.Future), "-future"}, {len(ld.Deleting), "-delete"}, {len(ld.Stray), "-stray"}, {len(ld.Unknown), "unknown"}} {
				if x.n > 0 {
					extra = append(extra, fmt.Sprintf("%d %s", x.n, x.what))
				}
			}
			fmt.Fprintf(bw, "  %s at %s: %s, %s", brokerName(b.Broker), ld.Path, verify.Plural(int64(len(ld.Partitions)), "partition", "partitions"), bytesUnitText(ld.SizeBytes))
			if len(extra) > 0 {
				bw.WriteString(" (" + strings.Join(extra, ", ") + ")")
			}
			bw.WriteString("\n")
			for _, lists := range [][]string{ld.Future, ld.Deleting, ld.Stray, ld.Unknown} {
				for _, p := range lists {
					bw.WriteString("    " + filepath.Base(p) + "\n")
				}
			}
		}
	}
	fmt.Fprintf(bw, "%s:\n", verify.Plural(int64(len(inv.Topics)), "topic", "topics"))
	if err := bw.Flush(); err != nil {
		return err
	}
	header := []string{"topic", "partition", "broker", "segments", "bytes", "log start", "log end", "high watermark", "last stable", "uncommitted", "leader epoch", "copy"}
	var rows [][]string
	replicas := map[string]*Replica{}
	for _, b := range inv.Brokers {
		for _, ld := range b.LogDirs {
			for _, r := range ld.Partitions {
				if !r.IsFuture {
					replicas[r.Path] = r
				}
			}
		}
	}
	for _, t := range inv.Topics {
		name := t.Name
		if len(t.TopicIDs) > 1 {
			name += " (" + strconv.Itoa(len(t.TopicIDs)) + " topic ids)"
		}
		for _, p := range t.Partitions {
			for _, rv := range p.Replicas {
				r := replicas[rv.LogDir]
				copyNote := ""
				switch {
				case len(p.Replicas) > 1 && rv.LogDir == p.MostCompleteLogDir:
					copyNote = "most complete"
				case rv.Behind > 0:
					copyNote = "behind " + strconv.FormatInt(rv.Behind, 10)
				}
				rows = append(rows, []string{name, strconv.Itoa(int(p.Partition)), brokerCell(rv.Broker), strconv.Itoa(r.Segments),
					bytesText(r.Size), offText(r.LogStartOffset), offText(r.LogEndOffset), offText(r.HighWatermark), offText(r.LastStableOffset),
					strconv.FormatInt(r.LEOMinusHW, 10), offText(int64(r.LeaderEpoch)), copyNote})
			}
		}
	}
	if err := dump.WriteTable(w, header, rows); err != nil {
		return err
	}
	if len(inv.ImageFindings) == 0 {
		return nil
	}
	bw = bufio.NewWriter(w)
	fmt.Fprintf(bw, "Against the metadata image (%d):\n", len(inv.ImageFindings))
	for _, f := range inv.ImageFindings {
		fmt.Fprintf(bw, "  %s: %s: %s\n", f.Kind, f.Path, f.Message)
	}
	return bw.Flush()
}

func brokerCell(id int32) string {
	if id < 0 {
		return "?"
	}
	return strconv.Itoa(int(id))
}

func offText(n int64) string {
	if n < 0 {
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

// WriteInventoryJSON writes the inventory as one JSON object.
func WriteInventoryJSON(w io.Writer, inv *Inventory) error {
	return writeTyped(w, "inventory", inv)
}
