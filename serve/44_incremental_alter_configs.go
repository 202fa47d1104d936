package serve

// IncrementalAlterConfigs, key 44: v0-v1.
//
// Version notes (IncrementalAlterConfigsRequest.json):
//   - v0: SET, DELETE, APPEND and SUBTRACT of single configs (KIP-339),
//     ValidateOnly.
//   - v1: flexible.

import (
	"slices"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(44, 0, 1, (*conn).handleIncrementalAlterConfigs) }

// handleIncrementalAlterConfigs alters topic configs and this broker's
// dynamic ones (message.max.bytes and the timestamp bounds), validated as
// Kafka validates them; they are kept with Config.Writable (in the state
// directory's ConfigsFile). A read-only server refuses, as a broker
// refuses a principal without ALTER_CONFIGS.
func (cn *conn) handleIncrementalAlterConfigs(r *kmsg.IncrementalAlterConfigsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.IncrementalAlterConfigsResponse)
	seen := map[[2]string]int{}
	for _, res := range r.Resources {
		seen[[2]string{strconv.Itoa(int(res.ResourceType)), res.ResourceName}]++
	}
	for _, res := range r.Resources {
		rr := kmsg.NewIncrementalAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		if seen[[2]string{strconv.Itoa(int(res.ResourceType)), res.ResourceName}] > 1 {
			rr.ErrorCode = kerr.InvalidRequest.Code
			msg := "Error due to duplicate config keys"
			rr.ErrorMessage = &msg
		} else {
			rr.ErrorCode, rr.ErrorMessage = s.alterConfigs(res, r.ValidateOnly)
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// alterConfigs validates one resource's alterations and applies them
// unless validateOnly.
func (s *Server) alterConfigs(res kmsg.IncrementalAlterConfigsRequestResource, validateOnly bool) (int16, *string) {
	fail := func(code int16, msg string) (int16, *string) { return code, &msg }
	typ := int8(res.ResourceType)
	var defs func(name string) (configDef, bool)
	switch typ {
	case resourceTopic:
		if !s.cfg.Writable {
			return fail(kerr.TopicAuthorizationFailed.Code, "klog serve is read-only (start it with --writable to alter configs)")
		}
		if s.topic(res.ResourceName) == nil {
			return fail(kerr.UnknownTopicOrPartition.Code, "The topic '"+res.ResourceName+"' does not exist.")
		}
		defs = func(name string) (configDef, bool) {
			if d := topicConfigDef(name); d != nil {
				return *d, true
			}
			return configDef{}, false
		}
	case resourceBroker:
		if !s.cfg.Writable {
			return fail(kerr.ClusterAuthorizationFailed.Code, "klog serve is read-only (start it with --writable to alter configs)")
		}
		if self := strconv.Itoa(int(s.cfg.NodeID)); res.ResourceName != "" && res.ResourceName != self {
			return fail(kerr.InvalidRequest.Code, "Unexpected broker id, expected "+self+" or empty string, but received "+res.ResourceName)
		}
		defs = func(name string) (configDef, bool) {
			d, ok := dynamicBrokerConfigs[name]
			return d, ok
		}
	default:
		return fail(kerr.InvalidRequest.Code, "klog serve does not alter configs of resource type "+strconv.Itoa(int(res.ResourceType)))
	}
	names := map[string]bool{}
	values := map[string]*string{}
	for _, c := range res.Configs {
		if names[c.Name] {
			return fail(kerr.InvalidRequest.Code, "Error due to duplicate config keys")
		}
		names[c.Name] = true
		d, ok := defs(c.Name)
		if !ok {
			if typ == resourceBroker {
				return fail(kerr.InvalidRequest.Code, "Cannot update these configs dynamically: Set("+c.Name+")")
			}
			return fail(kerr.InvalidConfig.Code, "Unknown topic config name: "+c.Name)
		}
		current := d.def
		if typ == resourceTopic {
			current, _ = s.topicConfig(res.ResourceName, c.Name)
		} else if v, _, ok := s.configs.lookup(typ, res.ResourceName, c.Name); ok {
			current = v
		}
		switch c.Op {
		case kmsg.IncrementalAlterConfigOpSet:
			if c.Value == nil {
				return fail(kerr.InvalidRequest.Code, "Null value not supported for : "+c.Name)
			}
			v := *c.Value
			values[c.Name] = &v
		case kmsg.IncrementalAlterConfigOpDelete:
			values[c.Name] = nil
		case kmsg.IncrementalAlterConfigOpAppend, kmsg.IncrementalAlterConfigOpSubtract:
			if d.typ != typeList {
				return fail(kerr.InvalidConfig.Code, "Config value "+strings.ToLower(c.Op.String())+" is not allowed for config key: "+c.Name)
			}
			items := splitList(current)
			var add []string
			if c.Value != nil {
				add = splitList(*c.Value)
			}
			for _, it := range add {
				i := slices.Index(items, it)
				switch {
				case c.Op == kmsg.IncrementalAlterConfigOpAppend && i < 0:
					items = append(items, it)
				case c.Op == kmsg.IncrementalAlterConfigOpSubtract && i >= 0:
					items = slices.Delete(items, i, i+1)
				}
			}
			v := strings.Join(items, ",")
			values[c.Name] = &v
		default:
			return fail(kerr.InvalidRequest.Code, "Unknown alter config operation "+strconv.Itoa(int(c.Op)))
		}
		if v := values[c.Name]; v != nil {
			if err := validateConfigValue(d, *v); err != nil {
				return fail(kerr.InvalidConfig.Code, err.Error())
			}
		}
	}
	if validateOnly || len(values) == 0 {
		return 0, nil
	}
	if err := s.configs.set(typ, res.ResourceName, values); err != nil {
		return fail(kerr.KafkaStorageError.Code, "the configs were not kept: "+err.Error())
	}
	return 0, nil
}
