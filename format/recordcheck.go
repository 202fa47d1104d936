package format

// CleanRecords reports whether the records of b, an uncompressed v2 batch
// that is not a control batch, are free of every fault a RecordReader and
// klog verify's record rules would find: each of the RecordCount records
// decodes (DefaultRecord.readFrom: the length, attributes, timestamp and
// offset deltas, key, value and headers, the body exactly as long as its
// length says), no bytes follow the last one, offset deltas increase
// strictly from at least 0 to at most LastOffsetDelta, and under
// CreateTime no record's timestamp is above MaxTimestamp.
//
// It is the fast path of a checker: it walks the framing without filling
// a Record and without building an error. True means a RecordReader over
// b yields RecordCount records and no error, and those records break
// none of the rules above. False means nothing more than "not proven
// clean" (another kind of batch, or a fault): decode the batch with a
// RecordReader to learn what is wrong. A record count of 0 is false too.
func CleanRecords(b *Batch) bool {
	if !b.IsV2() || b.Compression() != CompressionNone || b.IsControl() ||
		b.RecordCount <= 0 || len(b.Raw) < BatchHeaderSize {
		return false
	}
	d := b.Raw[BatchHeaderSize:]
	createTime := b.TimestampType() == CreateTime
	maxTs, baseTs, lastDelta := b.MaxTimestamp, b.BaseTimestamp, b.LastOffsetDelta
	prevDelta := int32(-1)
	p := 0
	for range b.RecordCount {
		bodyLen, n := varint2(d, p)
		if n <= 0 || bodyLen < 1 || int64(bodyLen) > int64(len(d)-p-n) {
			return false
		}
		p += n
		end := p + int(bodyLen)
		r := d[p:end:end] // attributes onward; every read below stays in the body
		q := 1            // the attributes byte, which no rule reads
		var tsDelta int64
		if q < len(r) && r[q] < 0x80 {
			tsDelta, q = int64(zigzag(uint32(r[q]))), q+1
		} else {
			if tsDelta, n = Varlong(r[q:]); n <= 0 {
				return false
			}
			q += n
		}
		offDelta, n := varint2(r, q)
		if n <= 0 || offDelta <= prevDelta || offDelta > lastDelta {
			return false
		}
		q += n
		prevDelta = offDelta
		if createTime && baseTs+tsDelta > maxTs {
			return false
		}
		for range 2 { // key, value: a negative length is null
			l, n := varint2(r, q)
			if n <= 0 {
				return false
			}
			q += n
			if l > 0 {
				if int64(l) > int64(len(r)-q) {
					return false
				}
				q += int(l)
			}
		}
		nh, n := varint2(r, q)
		if n <= 0 || nh < 0 || int64(nh) > int64(len(r)-q-n) {
			return false
		}
		q += n
		for range nh {
			kl, n := varint2(r, q)
			if n <= 0 || kl < 0 || int64(kl) > int64(len(r)-q-n) {
				return false // header key: Kafka rejects a null one
			}
			q += n + int(kl)
			vl, n := varint2(r, q)
			if n <= 0 {
				return false
			}
			q += n
			if vl > 0 {
				if int64(vl) > int64(len(r)-q) {
					return false
				}
				q += int(vl)
			}
		}
		if q != len(r) {
			return false
		}
		p = end
	}
	return p == len(d)
}

// varint2 is Varint at p in d with the varints of one and two bytes (the
// lengths up to 8191) decoded inline: the value and its length, n <= 0
// when d ends first or the varint is too long.
func varint2(d []byte, p int) (v int32, n int) {
	if p+1 < len(d) {
		c0, c1 := d[p], d[p+1]
		if c0 < 0x80 {
			return zigzag(uint32(c0)), 1
		}
		if c1 < 0x80 {
			return zigzag(uint32(c0&0x7f) | uint32(c1)<<7), 2
		}
	}
	return varintAt(d, p)
}

// varintAt is Varint at p in d, p <= len(d).
func varintAt(d []byte, p int) (int32, int) { return Varint(d[p:]) }

func zigzag(u uint32) int32 { return int32(u>>1) ^ -int32(u&1) }
