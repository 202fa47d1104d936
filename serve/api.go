package serve

import (
	"fmt"
	"reflect"
	"sort"
	"sync"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// handler answers one decoded request. It returns the response to write,
// built with the request's ResponseKind so that it carries the request's
// version; nil writes nothing (Produce with acks=0); an error closes the
// connection. A response that is a frameWriter (Fetch) writes its own
// frame.
type handler func(cn *conn, req kmsg.Request) (kmsg.Response, error)

// frameWriter is a response that writes its own frame after the
// connection's checks: Fetch sends its record bytes from the segment
// files. It returns the frame's size and its first error code (for the
// request log).
type frameWriter interface {
	kmsg.Response
	writeFrame(cn *conn, correlation int32) (n int, code int16, err error)
}

// api is one served API key: the versions ApiVersions advertises, every
// one of which is decoded and answered, and the handler.
type api struct {
	key, min, max int16
	name          string
	handle        handler
}

// apis holds the served keys by key. Each handler file registers its key
// in an init function beside the handler (register), so adding a key is
// one file.
var apis [kmsg.MaxKey + 1]*api

// register serves key at versions [min, max] with h, whose request type
// must be the one kmsg decodes for key. A key registered twice, or a
// handler of the wrong request type, is a bug found at start.
func register[R kmsg.Request](key, min, max int16, h func(cn *conn, r R) (kmsg.Response, error)) {
	if key < 0 || int(key) >= len(apis) || apis[key] != nil || min < 0 || min > max {
		panic(fmt.Sprintf("serve: bad registration of key %d (%d-%d)", key, min, max))
	}
	req := kmsg.RequestForKey(key)
	if _, ok := req.(R); !ok || max > req.MaxVersion() {
		panic(fmt.Sprintf("serve: key %d registered with %T at max %d; kmsg decodes %T up to %d", key, *new(R), max, req, req.MaxVersion()))
	}
	apis[key] = &api{key: key, min: min, max: max, name: kmsg.NameForKey(key),
		handle: func(cn *conn, r kmsg.Request) (kmsg.Response, error) { return h(cn, r.(R)) }}
}

// served is the registered keys in key order (what ApiVersions lists).
var served = sync.OnceValue(func() []*api {
	var out []*api
	for _, a := range apis {
		if a != nil {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	return out
})

// supported returns the key's registration and whether version is one it
// answers.
func supported(key, version int16) (*api, bool) {
	if key < 0 || int(key) >= len(apis) || apis[key] == nil {
		return nil, false
	}
	a := apis[key]
	return a, version >= a.min && version <= a.max
}

// firstErrorCode is a response's first non-zero ErrorCode field, the
// top-level one first, then depth first through its topics, partitions and
// members (for the request log; any response shape, so no handler lists
// its own).
func firstErrorCode(resp kmsg.Response) int16 {
	return errorCodeIn(reflect.ValueOf(resp))
}

var int16Type = reflect.TypeFor[int16]()

func errorCodeIn(v reflect.Value) int16 {
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return 0
		}
		v = v.Elem()
	}
	switch v.Kind() {
	case reflect.Struct:
		if f := v.FieldByName("ErrorCode"); f.IsValid() && f.Type() == int16Type && f.Int() != 0 {
			return int16(f.Int())
		}
		for i := 0; i < v.NumField(); i++ {
			if k := v.Field(i).Kind(); k == reflect.Slice || k == reflect.Struct || k == reflect.Pointer {
				if c := errorCodeIn(v.Field(i)); c != 0 {
					return c
				}
			}
		}
	case reflect.Slice:
		if v.Type().Elem().Kind() == reflect.Uint8 {
			return 0
		}
		for i := 0; i < v.Len(); i++ {
			if c := errorCodeIn(v.Index(i)); c != 0 {
				return c
			}
		}
	}
	return 0
}
