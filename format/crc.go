package format

import "github.com/klauspost/crc32"

// crc.go is the only file that imports the CRC implementation: the package
// has the same API as hash/crc32, so swapping it is a one-line change.

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// ChecksumC returns the CRC-32C (Castagnoli) of b: the checksum of v2 record
// batches and producer snapshots (Kafka's Crc32C).
func ChecksumC(b []byte) uint32 { return crc32.Checksum(b, castagnoli) }

// UpdateC continues a CRC-32C over more bytes.
func UpdateC(crc uint32, b []byte) uint32 { return crc32.Update(crc, castagnoli, b) }

// ChecksumIEEE returns the CRC-32 (IEEE) of b: the checksum of v0/v1
// messages (java.util.zip.CRC32).
func ChecksumIEEE(b []byte) uint32 { return crc32.ChecksumIEEE(b) }

// UpdateIEEE continues a CRC-32 (IEEE) over more bytes.
func UpdateIEEE(crc uint32, b []byte) uint32 { return crc32.Update(crc, crc32.IEEETable, b) }
