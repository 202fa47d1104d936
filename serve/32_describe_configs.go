package serve

// DescribeConfigs, key 32: v0-v4.
//
// Version notes (DescribeConfigsRequest.json):
//   - v0: each config's value, read-only and is-default flags.
//   - v1: IncludeSynonyms, and each config's source instead of
//     is-default (KIP-226); v2: as v1.
//   - v3: IncludeDocumentation, and each config's type (KIP-569).
//   - v4: flexible.

import (
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(32, 0, 4, (*conn).handleDescribeConfigs) }

// handleDescribeConfigs describes topics (their dynamic configs from the
// metadata log or this server's alterations, else Kafka's defaults) and
// this broker (its settings; the cluster-wide default resource "" lists
// only what was altered there).
func (cn *conn) handleDescribeConfigs(r *kmsg.DescribeConfigsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.DescribeConfigsResponse)
	for _, res := range r.Resources {
		rr := kmsg.NewDescribeConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		wanted := func(name string) bool {
			if res.ConfigNames == nil {
				return true
			}
			for _, n := range res.ConfigNames {
				if n == name {
					return true
				}
			}
			return false
		}
		add := func(name, value string, source int8, readOnly bool, typ int8) {
			c := kmsg.NewDescribeConfigsResponseResourceConfig()
			v := value
			c.Name, c.Value, c.ReadOnly = name, &v, readOnly
			c.IsDefault = source == sourceDefault
			c.Source = kmsg.ConfigSource(source)
			c.ConfigType = kmsg.ConfigType(typ)
			if r.Version == 0 {
				c.Source = kmsg.ConfigSource(-1)
			}
			if r.IncludeSynonyms && r.Version >= 1 {
				syn := kmsg.NewDescribeConfigsResponseResourceConfigConfigSynonym()
				sv := value
				syn.Name, syn.Value, syn.Source = name, &sv, c.Source
				c.ConfigSynonyms = append(c.ConfigSynonyms, syn)
			}
			rr.Configs = append(rr.Configs, c)
		}
		switch int8(res.ResourceType) {
		case resourceTopic:
			if s.topic(res.ResourceName) == nil {
				rr.ErrorCode = kerr.UnknownTopicOrPartition.Code
				msg := "The topic '" + res.ResourceName + "' does not exist."
				rr.ErrorMessage = &msg
				break
			}
			for _, d := range topicConfigs {
				if wanted(d.name) {
					v, src := s.topicConfig(res.ResourceName, d.name)
					add(d.name, v, src, false, d.typ)
				}
			}
		case resourceBroker:
			self := strconv.Itoa(int(s.cfg.NodeID))
			switch res.ResourceName {
			case "":
				for _, b := range s.brokerConfigs() {
					if v, src, ok := s.configs.lookup(resourceBroker, "", b.name); ok && wanted(b.name) {
						add(b.name, v, src, false, b.typ)
					}
				}
			case self:
				for _, b := range s.brokerConfigs() {
					if wanted(b.name) {
						v, src, ro := s.brokerConfig(b)
						add(b.name, v, src, ro, b.typ)
					}
				}
			default:
				rr.ErrorCode = kerr.InvalidRequest.Code
				msg := "Unexpected broker id, expected " + self + " or empty string, but received " + res.ResourceName
				rr.ErrorMessage = &msg
			}
		default:
			rr.ErrorCode = kerr.InvalidRequest.Code
			msg := "klog serve does not describe configs of resource type " + strconv.Itoa(int(res.ResourceType))
			rr.ErrorMessage = &msg
		}
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// brokerConfig is a broker config's value and source: altered for this
// node, then cluster-wide, then the server's setting (STATIC_BROKER_CONFIG
// where it differs from Kafka's default).
func (s *Server) brokerConfig(b brokerConfig) (string, int8, bool) {
	if v, src, ok := s.configs.lookup(resourceBroker, strconv.Itoa(int(s.cfg.NodeID)), b.name); ok {
		return v, src, b.readOnly
	}
	if v, src, ok := s.configs.lookup(resourceBroker, "", b.name); ok {
		return v, src, b.readOnly
	}
	if b.value == b.def {
		return b.value, sourceDefault, b.readOnly
	}
	return b.value, sourceStaticBroker, b.readOnly
}
