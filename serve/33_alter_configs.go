package serve

// AlterConfigs, key 33: v0-v2.
//
// Version notes (AlterConfigsRequest.json):
//   - v0: each resource's configs replaced as a whole, ValidateOnly.
//   - v1: as v0; v2: flexible.

import (
	"sort"
	"strconv"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(33, 0, 2, (*conn).handleAlterConfigs) }

// handleAlterConfigs is the legacy, non-incremental form of
// IncrementalAlterConfigs: the configs given become the resource's whole
// set of dynamic configs, as the KRaft controller's legacyAlterConfigs
// replaces them (apache/kafka 1eb7644): each one given is set (a null
// value deletes it), each dynamic config not given is deleted (back to
// Kafka's default). It goes through the same checks and store as
// IncrementalAlterConfigs (alterConfigs), so what a resource may have, a
// read-only server's refusal and ValidateOnly are the same.
func (cn *conn) handleAlterConfigs(r *kmsg.AlterConfigsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.AlterConfigsResponse)
	seen := map[[2]string]int{}
	for _, res := range r.Resources {
		seen[[2]string{strconv.Itoa(int(res.ResourceType)), res.ResourceName}]++
	}
	for _, res := range r.Resources {
		rr := kmsg.NewAlterConfigsResponseResource()
		rr.ResourceType, rr.ResourceName = res.ResourceType, res.ResourceName
		if seen[[2]string{strconv.Itoa(int(res.ResourceType)), res.ResourceName}] > 1 {
			rr.ErrorCode = kerr.InvalidRequest.Code
			msg := "Error due to duplicate config keys"
			rr.ErrorMessage = &msg
			resp.Resources = append(resp.Resources, rr)
			continue
		}
		inc := kmsg.NewIncrementalAlterConfigsRequestResource()
		inc.ResourceType, inc.ResourceName = res.ResourceType, res.ResourceName
		given := map[string]bool{}
		for _, c := range res.Configs {
			ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
			ic.Name, ic.Value, ic.Op = c.Name, c.Value, kmsg.IncrementalAlterConfigOpSet
			if c.Value == nil {
				ic.Op = kmsg.IncrementalAlterConfigOpDelete
			}
			inc.Configs = append(inc.Configs, ic)
			given[c.Name] = true
		}
		for _, name := range s.configs.dynamicNames(int8(res.ResourceType), res.ResourceName) {
			if !given[name] {
				ic := kmsg.NewIncrementalAlterConfigsRequestResourceConfig()
				ic.Name, ic.Op = name, kmsg.IncrementalAlterConfigOpDelete
				inc.Configs = append(inc.Configs, ic)
			}
		}
		rr.ErrorCode, rr.ErrorMessage = s.alterConfigs(inc, r.ValidateOnly)
		resp.Resources = append(resp.Resources, rr)
	}
	return resp, nil
}

// dynamicNames is the names of a resource's dynamic configs (the image's
// and those altered here, less those deleted here), sorted.
func (cs *configStore) dynamicNames(typ int8, resource string) []string {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	set := map[string]bool{}
	for name := range cs.image[typ][resource] {
		set[name] = true
	}
	for name := range cs.altered[typ][resource] {
		set[name] = true
	}
	var out []string
	for name := range set {
		if _, _, ok := cs.lookupLocked(typ, resource, name); ok {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}
