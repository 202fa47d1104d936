package schema

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/bufbuild/protocompile"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/dynamicpb"
)

// Protobuf schemas are .proto sources (the registry keeps them as text).
// They are compiled with protocompile, their imports resolved from the
// schema's references (each reference's name is its import path), the
// google/protobuf well-known files from protocompile's copies. Values are
// decoded into dynamicpb messages, the message chosen by the payload's
// message-index path, and rendered with protojson as Confluent's
// kafka-protobuf-console-consumer prints them (JSON names, unset fields
// left out).

type protoCodec struct {
	file protoreflect.FileDescriptor
}

// protoMainFile is the import path the compiled schema gets; its
// references keep their own names.
const protoMainFile = "klog-registered-schema.proto"

func compileProtobuf(sc *Schema, refs map[string]*Schema) (*protoCodec, error) {
	srcs := map[string]string{protoMainFile: sc.Text}
	for name, r := range refs {
		srcs[name] = r.Text
	}
	c := protocompile.Compiler{
		Resolver: protocompile.WithStandardImports(&protocompile.SourceResolver{
			Accessor: func(path string) (io.ReadCloser, error) {
				if s, ok := srcs[path]; ok {
					return io.NopCloser(strings.NewReader(s)), nil
				}
				return nil, fmt.Errorf("%s: not among the schema's references", path)
			},
		}),
	}
	files, err := c.Compile(context.Background(), protoMainFile)
	if err != nil {
		return nil, fmt.Errorf("protobuf schema: %w", err)
	}
	return &protoCodec{file: files[0]}, nil
}

// message finds the message a message-index path names: the first index
// among the file's top-level messages, each next one among the previous
// message's nested messages.
func (c *protoCodec) message(path []int) (protoreflect.MessageDescriptor, error) {
	msgs := c.file.Messages()
	var md protoreflect.MessageDescriptor
	for i, idx := range path {
		if idx >= msgs.Len() {
			return nil, fmt.Errorf("protobuf message index %d (at depth %d) past the %d messages there", idx, i, msgs.Len())
		}
		md = msgs.Get(idx)
		msgs = md.Messages()
	}
	if md == nil {
		return nil, errors.New("protobuf message indexes: empty path")
	}
	return md, nil
}

// messageByName finds a message by its full name (or, without a package,
// its name in the file's package), for encoding.
func (c *protoCodec) messageByName(name string) (protoreflect.MessageDescriptor, []int, error) {
	if name == "" {
		md, err := c.message([]int{0})
		return md, []int{0}, err
	}
	full := protoreflect.FullName(name)
	if !strings.Contains(name, ".") && c.file.Package() != "" {
		full = c.file.Package().Append(protoreflect.Name(name))
	}
	var walk func(msgs protoreflect.MessageDescriptors, path []int) (protoreflect.MessageDescriptor, []int)
	walk = func(msgs protoreflect.MessageDescriptors, path []int) (protoreflect.MessageDescriptor, []int) {
		for i := 0; i < msgs.Len(); i++ {
			md := msgs.Get(i)
			p := append(path[:len(path):len(path)], i)
			if md.FullName() == full {
				return md, p
			}
			if m, mp := walk(md.Messages(), p); m != nil {
				return m, mp
			}
		}
		return nil, nil
	}
	if md, p := walk(c.file.Messages(), nil); md != nil {
		return md, p, nil
	}
	return nil, nil, fmt.Errorf("protobuf schema has no message %s", full)
}

var protoJSON = protojson.MarshalOptions{}

// decode reads the message-index path and the message after it. It returns
// the message's full name too.
func (c *protoCodec) decode(b []byte) (json.RawMessage, any, string, error) {
	path, n, err := ParseIndexes(b)
	if err != nil {
		return nil, nil, "", err
	}
	md, err := c.message(path)
	if err != nil {
		return nil, nil, "", err
	}
	m := dynamicpb.NewMessage(md)
	if err := proto.Unmarshal(b[n:], m); err != nil {
		return nil, nil, string(md.FullName()), fmt.Errorf("protobuf %s: %w", md.FullName(), err)
	}
	out, err := protoJSON.Marshal(m)
	if err != nil {
		return nil, nil, string(md.FullName()), fmt.Errorf("protobuf %s to JSON: %w", md.FullName(), err)
	}
	// protojson varies its whitespace on purpose; parseJSON compacts it
	// so that output is the same from run to run.
	js, native, err := parseJSON(out)
	if err != nil {
		return nil, nil, "", err
	}
	return js, native, string(md.FullName()), nil
}

// encode writes the message-index path and the message built from its
// protojson form.
func (c *protoCodec) encode(dst []byte, name string, js []byte) ([]byte, error) {
	md, path, err := c.messageByName(name)
	if err != nil {
		return nil, err
	}
	m := dynamicpb.NewMessage(md)
	if err := protojson.Unmarshal(js, m); err != nil {
		return nil, fmt.Errorf("protobuf %s from JSON: %w", md.FullName(), err)
	}
	dst = AppendIndexes(dst, path)
	return proto.MarshalOptions{Deterministic: true}.MarshalAppend(dst, m)
}
