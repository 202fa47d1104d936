package main

import (
	"fmt"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/klog-dev/klog/filter"
	"github.com/klog-dev/klog/format"
	"github.com/klog-dev/klog/partition"
	"github.com/klog-dev/klog/payload"
	"github.com/klog-dev/klog/produce"
	"github.com/klog-dev/klog/recordfmt"
	"github.com/klog-dev/klog/schema"
	"github.com/klog-dev/klog/verify"
	"github.com/urfave/cli/v2"
)

// Payload flags: schema-aware decoding, format strings and filters (README
// "Decoding payloads offline", "Format strings", "Filters").
var (
	keyFormatFlag   = &cli.StringFlag{Name: "key-format", Value: "bytes", Usage: "read keys as bytes, auto, json, avro, protobuf or json-schema (Confluent's wire format)"}
	valueFormatFlag = &cli.StringFlag{Name: "value-format", Value: "bytes", Usage: "read values as bytes, auto, json, avro, protobuf or json-schema (Confluent's wire format)"}
	schemasFlag     = &cli.StringSliceFlag{Name: "schemas", Aliases: []string{"r"}, Usage: "where schemas come from: a `_schemas` partition directory, schema files or a directory of them, or a registry URL (http://...); repeatable; default: the log dir's _schemas-0"}
	whereFlag       = &cli.StringFlag{Name: "where", Usage: "only records for which this CEL `EXPR` is true (offset, timestamp, key, value, headers, ...; README \"Filters\")"}
	kcatFormatFlag  = &cli.StringFlag{Name: "kcat-format", Aliases: []string{"f"}, Usage: "print each record through a kcat -f format `FMT` (%t %p %o %T %k %K %s %S %h ...)"}
	countFlag       = &cli.IntFlag{Name: "count", Aliases: []string{"c"}, Usage: "stop after `N` records (kcat's -c; 0: no limit)"}
	nullStringFlag  = &cli.BoolFlag{Name: "null-as-null", Aliases: []string{"Z"}, Usage: "with -f, print NULL for null and empty keys and values (kcat's -Z)"}
)

// payloadFlags are the flags every record-printing command shares.
var payloadFlags = []cli.Flag{keyFormatFlag, valueFormatFlag, schemasFlag, whereFlag, kcatFormatFlag, nullStringFlag, countFlag}

// rpkFormatFlag is rpk's --format for the commands whose own output has no
// --format (dump, fetch, tail); find's --format takes it beside its table
// forms.
var rpkFormatFlag = &cli.StringFlag{Name: "format", Usage: "print each record through rpk's --format `FMT` (%t %p %o %k %v %h{...} %d{...} ...; README \"Format strings\")"}

// recordPayloadFlags are the payload flags of dump, fetch and tail.
var recordPayloadFlags = append(append([]cli.Flag(nil), payloadFlags...), rpkFormatFlag)

// groupFlag names the group whose commit an offset of "stored" reads
// (dump, tail; fetch has its own --group).
var groupFlag = &cli.StringFlag{Name: "group", Aliases: []string{"G"}, Usage: "the consumer group whose committed offset an offset of `stored` is (kcat's -G; __consumer_offsets in the log dir)"}

// payloadView reads the payload flags of dump, fetch and tail into a View
// (nil when none is given); json says the command prints JSON, which a
// format string replaces, so both may not be given.
func payloadView(c *cli.Context, dirs []string, json bool) (*payload.View, error) {
	name := commandPath(c)
	if f := c.String(rpkFormatFlag.Name); c.IsSet(rpkFormatFlag.Name) && !strings.Contains(f, "%") {
		return nil, usageError("%s: --format takes rpk's format string (with a %%, such as '%%k %%v\\n'), got %q", name, f)
	}
	po, err := readPayloadOptions(c, dirs)
	if err != nil {
		return nil, err
	}
	v := &payload.View{Decoder: po.decoder, KeyFormat: po.keyFormat, ValueFormat: po.valueFormat,
		Format: po.format, Limit: int64(c.Int(countFlag.Name))}
	if c.IsSet(whereFlag.Name) {
		if v.Where, err = parseWhere(c); err != nil {
			return nil, err
		}
	}
	if !v.Active() {
		return nil, nil
	}
	if v.Format != nil && json {
		return nil, usageError("%s: a format string (-f, --format) and --json exclude each other", name)
	}
	return v, nil
}

// sayDecodeFailures makes v say on stderr, as it meets them, the records
// it keeps whose key or value does not decode as its format asks (a
// finding, as dump's record-decode: "klog: fetch: orders-0 offset 4:
// record-decode: value does not decode: why"); the record is printed with
// its bytes and the run goes on. decodeFindings then makes the exit 1.
func sayDecodeFailures(c *cli.Context, v *payload.View) {
	if v == nil || !v.Decodes() {
		return
	}
	name, w := commandPath(c), c.App.ErrWriter
	v.OnDecodeFailure = func(r *payload.Rec, field string, err error) {
		fmt.Fprintf(w, "klog: %s: %s-%d offset %d: %s: %s does not decode: %v\n",
			name, r.Topic, r.Partition, r.Record.Offset, verify.KindRecordDecode, field, err)
	}
}

// decodeFindings is err, or exit 1 when err is nil and v kept records that
// did not decode.
func decodeFindings(v *payload.View, err error) error {
	if err == nil && v.DecodeFailures() > 0 {
		return findingsError("")
	}
	return err
}

// whereFailed says, once, that --where failed on some records.
func whereFailed(c *cli.Context, v *payload.View) {
	if v == nil || v.Where == nil {
		return
	}
	if err := v.Where.Err(); err != nil {
		fmt.Fprintf(c.App.ErrWriter, "klog: %s: %v (such records did not match)\n", commandPath(c), err)
	}
}

// payloadOptions is what the payload flags ask for.
type payloadOptions struct {
	keyFormat, valueFormat schema.Format
	decoder                *schema.Decoder
	format                 recordfmt.Formatter
}

// readPayloadOptions reads the formats, the schemas (searched in dirs' log
// dirs when --schemas is not given) and the format string: -f, or --format
// when its value holds a % (rpk's syntax).
func readPayloadOptions(c *cli.Context, dirs []string) (payloadOptions, error) {
	var o payloadOptions
	var err error
	name := commandPath(c)
	if o.keyFormat, err = parseFormatFlag(c, keyFormatFlag.Name); err != nil {
		return o, err
	}
	if o.valueFormat, err = parseFormatFlag(c, valueFormatFlag.Name); err != nil {
		return o, err
	}
	if o.keyFormat != schema.FormatBytes || o.valueFormat != schema.FormatBytes {
		src, err := schemaSources(c, dirs)
		if err != nil {
			return o, err
		}
		o.decoder = schema.NewDecoder(src)
	}
	switch f := c.String(formatFlag.Name); {
	case c.IsSet(kcatFormatFlag.Name) && strings.Contains(f, "%"):
		return o, usageError("%s: give -f (kcat's format) or --format with %% (rpk's), not both", name)
	case c.IsSet(kcatFormatFlag.Name):
		k, err := recordfmt.ParseKcat(c.String(kcatFormatFlag.Name))
		if err != nil {
			return o, usageError("%s: -f: %v", name, err)
		}
		if c.Bool(nullStringFlag.Name) {
			k.Null = "NULL"
		}
		o.format = k
	case strings.Contains(f, "%"):
		if o.format, err = recordfmt.ParseRPK(f); err != nil {
			return o, usageError("%s: --format: %v", name, err)
		}
	}
	if c.Int(countFlag.Name) < 0 {
		return o, usageError("%s: -c/--count must not be negative", name)
	}
	return o, nil
}

func parseFormatFlag(c *cli.Context, flag string) (schema.Format, error) {
	f, err := schema.ParseFormat(c.String(flag))
	if err != nil {
		msg := err.Error()
		if s := suggest(c.String(flag), schema.FormatNames()); s != "" {
			msg += " (did you mean " + s + "?)"
		}
		return f, usageError("%s: --%s: %s", commandPath(c), flag, msg)
	}
	return f, nil
}

// schemaSources reads --schemas, or finds the `_schemas` partition of the
// log dir holding the first of dirs. A `_schemas` record that cannot be
// read is said on stderr and left out; the rest is used.
func schemaSources(c *cli.Context, dirs []string) (schema.Source, error) {
	paths := c.StringSlice(schemasFlag.Name)
	if len(paths) == 0 && len(dirs) > 0 {
		if p := schema.FindTopic(dirs[0]); p != "" {
			paths = []string{p}
		}
	}
	var src schema.Sources
	for _, p := range paths {
		s, err := openSchemaSource(c, p)
		if err != nil {
			return nil, err
		}
		src = append(src, s)
	}
	return src, nil
}

func openSchemaSource(c *cli.Context, p string) (schema.Source, error) {
	name := commandPath(c)
	if strings.HasPrefix(p, "http://") || strings.HasPrefix(p, "https://") {
		r, err := schema.NewRegistry(p, nil)
		if err != nil {
			return nil, usageError("%s: --schemas: %v", name, err)
		}
		return r, nil
	}
	st, err := os.Stat(p)
	if err != nil {
		return nil, fail(name, err)
	}
	// A partition directory is the registry's store topic (by whatever
	// name kafkastore.topic gave it); any other directory holds files.
	if st.IsDir() && partition.IsPartitionDir(p) {
		store, findings, err := schema.ReadTopic(p)
		if err != nil {
			return nil, fail(name, err)
		}
		for _, f := range findings {
			fmt.Fprintf(c.App.ErrWriter, "klog: %s: %v (record left out)\n", name, f)
		}
		return store, nil
	}
	files, err := schema.LoadFiles(p)
	if err != nil {
		return nil, fail(name, err)
	}
	return files, nil
}

func parseWhere(c *cli.Context) (*filter.Filter, error) {
	f, err := filter.Parse(c.String(whereFlag.Name))
	if err != nil {
		return nil, usageError("%s: --where: %v", commandPath(c), err)
	}
	return f, nil
}

// produce: headers on every record (kcat's -H) and schema encoding of
// --input json keys and values.
var (
	prodHeaderFlag      = &cli.StringSliceFlag{Name: "header", Aliases: []string{"H"}, Usage: "add header `KEY=VALUE` to every record (kcat's -H; repeatable)"}
	prodKeySchemaFlag   = &cli.StringFlag{Name: "key-schema", Usage: "with --input json, encode each key (any JSON value) with `SUBJECT`'s latest schema, SUBJECT:VERSION or id:N, in Confluent's wire format"}
	prodValueSchemaFlag = &cli.StringFlag{Name: "value-schema", Usage: "with --input json, encode each value (any JSON value: Avro's JSON encoding, Protobuf's JSON, JSON) with `SUBJECT`'s latest schema, SUBJECT:VERSION or id:N"}
	prodMessageFlag     = &cli.StringFlag{Name: "protobuf-message", Usage: "the Protobuf message `NAME` values are (default: the schema's first)"}
)

// produceHeaders reads -H KEY=VALUE flags.
func produceHeaders(c *cli.Context) ([]format.Header, error) {
	var hs []format.Header
	for _, kv := range c.StringSlice(prodHeaderFlag.Name) {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, usageError("produce: -H/--header wants KEY=VALUE, got %q", kv)
		}
		hs = append(hs, format.Header{Key: []byte(k), Value: []byte(v)})
	}
	return hs, nil
}

// produceEncoders sets feed's encoders from --key-schema/--value-schema.
func produceEncoders(c *cli.Context, dir string, feed *produce.Feed) error {
	if !c.IsSet(prodKeySchemaFlag.Name) && !c.IsSet(prodValueSchemaFlag.Name) {
		return nil
	}
	if feed.Format != produce.InputJSON {
		return usageError("produce: --key-schema and --value-schema need --input json")
	}
	src, err := schemaSources(c, []string{dir})
	if err != nil {
		return err
	}
	dec := schema.NewDecoder(src)
	msg := c.String(prodMessageFlag.Name)
	for _, e := range []struct {
		flag string
		set  *func([]byte) ([]byte, error)
	}{{prodKeySchemaFlag.Name, &feed.EncodeKey}, {prodValueSchemaFlag.Name, &feed.EncodeValue}} {
		if !c.IsSet(e.flag) {
			continue
		}
		id, err := schemaID(dec, c.String(e.flag))
		if err != nil {
			return usageError("produce: --%s: %v", e.flag, err)
		}
		*e.set = func(js []byte) ([]byte, error) { return dec.Encode(id, msg, js) }
	}
	return nil
}

// schemaID reads SUBJECT, SUBJECT:VERSION or id:N.
func schemaID(dec *schema.Decoder, s string) (int32, error) {
	if n, ok := strings.CutPrefix(s, "id:"); ok {
		v, err := strconv.ParseInt(n, 10, 32)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("want id:N, got %q", s)
		}
		return int32(v), nil
	}
	subject, version := s, -1
	if i := strings.LastIndexByte(s, ':'); i > 0 {
		if v, err := strconv.Atoi(s[i+1:]); err == nil && v > 0 {
			subject, version = s[:i], v
		}
	}
	sc, err := dec.Lookup(subject, version)
	if err != nil {
		return 0, err
	}
	if sc.ID < 0 {
		// A schema file named without its id: the wire format carries
		// one, and no id written here could be read back.
		return 0, fmt.Errorf("%s has no schema id, which Confluent's wire format carries: name the file with its id first (42-%s) or save the registry's answer, which holds its \"id\"", subject, path.Base(subject))
	}
	return sc.ID, nil
}
