package serve

// DeleteTopics, key 20: v0-v6.
//
// Version notes (DeleteTopicsRequest.json):
//   - v0: topics by name; v1: throttle time; v2, v3: as v1.
//   - v4: flexible; v5: each topic's error message.
//   - v6: topics by name or by id (KIP-516).

import (
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func init() { register(20, 0, 6, (*conn).handleDeleteTopics) }

// handleDeleteTopics deletes topics on a writable server as a broker's
// LogManager does (deleteTopic), and the offsets groups committed for
// them, as the group coordinator does when a topic goes.
func (cn *conn) handleDeleteTopics(r *kmsg.DeleteTopicsRequest) (kmsg.Response, error) {
	s := cn.s
	resp := r.ResponseKind().(*kmsg.DeleteTopicsResponse)
	reqs := r.Topics
	if r.Version < 6 {
		reqs = reqs[:0:0]
		for _, name := range r.TopicNames {
			reqs = append(reqs, kmsg.DeleteTopicsRequestTopic{Topic: kmsg.StringPtr(name)})
		}
	}
	var deleted []string
	for _, q := range reqs {
		rt := kmsg.NewDeleteTopicsResponseTopic()
		rt.Topic, rt.TopicID = q.Topic, q.TopicID
		fail := func(code int16, msg string) { rt.ErrorCode, rt.ErrorMessage = code, &msg }
		name := ""
		switch {
		case q.Topic != nil && q.TopicID != ([16]byte{}):
			fail(kerr.InvalidRequest.Code, "You may not specify both topic name and topic id.")
		case q.Topic != nil:
			if t := s.topic(*q.Topic); t != nil {
				name, rt.TopicID = *q.Topic, t.id
			} else {
				fail(kerr.UnknownTopicOrPartition.Code, "This server does not host this topic-partition.")
			}
		default:
			for _, n := range s.topicNames() {
				if t := s.topic(n); t != nil && t.id == q.TopicID {
					name = n
				}
			}
			if name == "" {
				fail(kerr.UnknownTopicID.Code, "This server does not host this topic ID.")
			} else {
				rt.Topic = kmsg.StringPtr(name)
			}
		}
		if name != "" && !s.cfg.Writable {
			fail(kerr.TopicAuthorizationFailed.Code, "klog serve is read-only (start it with --writable to delete topics)")
			name = ""
		}
		if name != "" {
			if err := s.deleteTopic(name); err != nil {
				fail(kerr.KafkaStorageError.Code, err.Error())
			}
			deleted = append(deleted, name)
		}
		resp.Topics = append(resp.Topics, rt)
	}
	if len(deleted) > 0 {
		c := s.groups
		c.call(cn, r.Key(), nil, func(w *waiter) { c.deleteTopicOffsets(deleted, w) })
	}
	return resp, nil
}
