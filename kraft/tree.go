package kraft

import (
	"cmp"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
)

// The image as a tree of paths, as kafka-metadata-shell shows it
// (metadata/.../image/node/*Node.java), one level flatter: the shell's
// /image/topics/byName/orders/0 is /topics/orders/0 here.
//
//	/provenance                      what the image holds (offset, epoch, snapshot)
//	/features/metadataVersion        e.g. 4.1-IV1 (level 27)
//	/features/zkMigrationState
//	/features/finalized_<feature>    a finalized feature level
//	/brokers/<id>                    a broker registration
//	/controllers/<id>                a controller registration
//	/quorum/{kraftVersion,leader,voters/<id>}
//	/topics/<name>/{name,id,<partition>}
//	/topicIds/<id>                   the topic's name
//	/configs/<TYPE>[:<name>]/<key>   TOPIC:orders, BROKER:1, BROKER (the default)
//	/clientQuotas/<entity>/<key>     user(alice)_clientId(app)
//	/producerIds/nextProducerId, /producerIds/blocks/<broker id>
//	/acls/<id>
//	/delegationTokens/<token id>
//	/scram/<mechanism>/<user>        iterations only, never the salt or keys

// Node is one path of the tree: a directory (Children, sorted) or a leaf
// (Value: a string, a number, a bool or one of the image's structs).
type Node struct {
	Name     string
	Children []*Node
	Value    any
	leaf     bool
}

// IsDir reports whether n is a directory.
func (n *Node) IsDir() bool { return !n.leaf }

// Child returns the child of that name, or nil.
func (n *Node) Child(name string) *Node {
	for _, c := range n.Children {
		if c.Name == name {
			return c
		}
	}
	return nil
}

func dir(name string, children ...*Node) *Node {
	// Natural order: partitions and broker ids by number, the rest by name.
	slices.SortFunc(children, func(a, b *Node) int {
		x, errA := strconv.ParseInt(a.Name, 10, 64)
		y, errB := strconv.ParseInt(b.Name, 10, 64)
		if errA == nil && errB == nil {
			return cmp.Compare(x, y)
		}
		return strings.Compare(a.Name, b.Name)
	})
	if children == nil {
		children = []*Node{}
	}
	return &Node{Name: name, Children: children}
}

func leaf(name string, v any) *Node { return &Node{Name: name, Value: v, leaf: true} }

func itoa(v int32) string { return strconv.Itoa(int(v)) }

// Tree is the image as a tree rooted at "/".
func (im *Image) Tree() *Node {
	feats := []*Node{
		leaf("metadataVersion", metadataVersionText(im.Features.MetadataVersion)),
		leaf("zkMigrationState", im.Features.ZkMigrationState),
	}
	for name, level := range im.Features.Finalized {
		feats = append(feats, leaf("finalized_"+name, level))
	}
	var brokers, controllers, topics, topicIDs, configs, quotas, acls, tokens, blocks []*Node
	for _, b := range im.Brokers {
		brokers = append(brokers, leaf(itoa(b.ID), b))
	}
	for _, c := range im.Controllers {
		controllers = append(controllers, leaf(itoa(c.ID), c))
	}
	for _, t := range im.Topics {
		kids := []*Node{leaf("name", t.Name), leaf("id", t.ID.String())}
		for _, p := range t.Partitions {
			kids = append(kids, leaf(itoa(p.Partition), p))
		}
		topics = append(topics, dir(t.Name, kids...))
		topicIDs = append(topicIDs, leaf(t.ID.String(), t.Name))
	}
	for _, c := range im.Configs {
		var kids []*Node
		for k, v := range c.Configs {
			kids = append(kids, leaf(k, v))
		}
		name := c.ResourceType
		if c.ResourceName != "" {
			name += ":" + c.ResourceName
		}
		configs = append(configs, dir(name, kids...))
	}
	for _, q := range im.ClientQuotas {
		var kids []*Node
		for k, v := range q.Quotas {
			kids = append(kids, leaf(k, v))
		}
		quotas = append(quotas, dir(q.Name, kids...))
	}
	for _, a := range im.ACLs {
		acls = append(acls, leaf(a.ID.String(), a))
	}
	for _, t := range im.Tokens {
		tokens = append(tokens, leaf(t.TokenID, t))
	}
	for _, b := range im.ProducerIDs.Blocks {
		blocks = append(blocks, leaf(itoa(b.BrokerID), b))
	}
	mechs := map[string][]*Node{}
	for _, s := range im.Scram {
		mechs[s.Mechanism] = append(mechs[s.Mechanism], leaf(s.Name, s))
	}
	var scram []*Node
	for m, users := range mechs {
		scram = append(scram, dir(m, users...))
	}
	var voters []*Node
	for _, v := range im.Quorum.Voters {
		voters = append(voters, leaf(itoa(v.ID), v))
	}
	return dir("/",
		leaf("provenance", im.Provenance),
		dir("features", feats...),
		dir("brokers", brokers...),
		dir("controllers", controllers...),
		dir("quorum", leaf("kraftVersion", im.Quorum.KRaftVersion), leaf("leader", im.Quorum.Leader),
			leaf("leaderEpoch", im.Quorum.LeaderEpoch), dir("voters", voters...)),
		dir("topics", topics...),
		dir("topicIds", topicIDs...),
		dir("configs", configs...),
		dir("clientQuotas", quotas...),
		dir("producerIds", leaf("nextProducerId", im.ProducerIDs.NextProducerID), dir("blocks", blocks...)),
		dir("acls", acls...),
		dir("delegationTokens", tokens...),
		dir("scram", scram...),
	)
}

// metadataVersionText is how the shell prints metadata.version: its
// name, and here its level too.
func metadataVersionText(level int16) string {
	if level == 0 {
		return "none"
	}
	name := MetadataVersionName(level)
	if strings.HasPrefix(name, "level ") {
		return name
	}
	return name + " (level " + strconv.Itoa(int(level)) + ")"
}

// Match is a node found by a path, with its absolute path.
type Match struct {
	Path string
	Node *Node
}

// ErrNoNode is returned by Find for a path that names nothing.
var ErrNoNode = errors.New("no such file or directory")

// Find resolves p against the tree rooted at n: an absolute path of
// names, "." and "..", where a name may be a glob (path.Match: *, ?, [a-z])
// matching any number of children, as the shell's GlobVisitor does. The
// matches are in tree order; none is ErrNoNode.
func (n *Node) Find(p string) ([]Match, error) {
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	var parts []string
	for _, s := range strings.Split(path.Clean(p), "/") {
		if s != "" {
			parts = append(parts, s)
		}
	}
	cur := []Match{{Path: "/", Node: n}}
	for _, part := range parts {
		var next []Match
		for _, m := range cur {
			for _, c := range m.Node.Children {
				ok, err := path.Match(part, c.Name)
				if err != nil {
					return nil, fmt.Errorf("%s: %w", p, err)
				}
				if ok {
					next = append(next, Match{Path: strings.TrimSuffix(m.Path, "/") + "/" + c.Name, Node: c})
				}
			}
		}
		cur = next
	}
	if len(cur) == 0 {
		return nil, ErrNoNode
	}
	return cur, nil
}

// Walk calls fn for n and every node below it, in tree order, with its
// path (base is n's own).
func (n *Node) Walk(base string, fn func(path string, n *Node)) {
	fn(base, n)
	for _, c := range n.Children {
		c.Walk(strings.TrimSuffix(base, "/")+"/"+c.Name, fn)
	}
}

// JSON is the node as plain data for encoding/json: a leaf's value, or a
// directory as an object of its children by name.
func (n *Node) JSON() any {
	if n.leaf {
		return n.Value
	}
	m := make(map[string]any, len(n.Children))
	for _, c := range n.Children {
		m[c.Name] = c.JSON()
	}
	return m
}
