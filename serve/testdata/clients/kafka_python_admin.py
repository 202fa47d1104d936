# kafka-python 2.0.2 (Debian's python3-kafka): every admin call its
# KafkaAdminClient offers, against `klog serve --writable`.
# admin_python_test.go runs it: kafka_python_admin.py BROKER
# It prints one JSON object a line and exits nonzero on any error (an
# exception, or an error code in a response the library does not check).
#
# Not in 2.0.2's KafkaAdminClient (so not run): delete_records,
# incremental_alter_configs, alter/delete consumer group offsets,
# describe_log_dirs. The ACL calls are out of this test's scope.
import json
import sys

from kafka import KafkaConsumer, KafkaProducer, TopicPartition
from kafka.structs import OffsetAndMetadata
from kafka.admin import ConfigResource, ConfigResourceType, KafkaAdminClient, NewPartitions, NewTopic
from kafka.errors import TopicAlreadyExistsError, for_code

broker = sys.argv[1]


def out(**kw):
    print(json.dumps(kw, sort_keys=True), flush=True)


def fail(msg):
    sys.exit("kafka_python_admin: " + msg)


def check_codes(what, pairs, want=0):
    for name, code in pairs:
        if code != want:
            fail("%s %s: error %d (%s), want %d" % (what, name, code, for_code(code).__name__, want))


adm = KafkaAdminClient(bootstrap_servers=broker, client_id="py-admin", request_timeout_ms=15000)

# CreateTopics: validate_only creates nothing; a second create is refused.
r = adm.create_topics([NewTopic("pyt", 2, 1)], validate_only=True)
check_codes("create_topics validate_only", [(t[0], t[1]) for t in r.topic_errors])
if "pyt" in adm.list_topics():
    fail("validate_only created pyt")
r = adm.create_topics([NewTopic("pyt", 2, 1), NewTopic("pydel", 1, 1)])
check_codes("create_topics", [(t[0], t[1]) for t in r.topic_errors])
# 2.0.2 raises the controller's errors for CreateTopics and DeleteTopics
# (_send_request_to_controller) and returns the other responses unchecked.
try:
    adm.create_topics([NewTopic("pyt", 2, 1)])
    fail("create_topics again: no error")
except TopicAlreadyExistsError:
    pass
out(call="create_topics", ok=True)

# CreatePartitions: validate_only, then 2 -> 3.
r = adm.create_partitions({"pyt": NewPartitions(3)}, validate_only=True)
check_codes("create_partitions validate_only", [(t[0], t[1]) for t in r.topic_errors])
r = adm.create_partitions({"pyt": NewPartitions(3)})
check_codes("create_partitions", [(t[0], t[1]) for t in r.topic_errors])
desc = adm.describe_topics(["pyt"])
out(call="describe_topics", topic="pyt", partitions=len(desc[0]["partitions"]), error=desc[0]["error_code"])

# Metadata: topics and the cluster.
topics = adm.list_topics()
out(call="list_topics", has_pyt="pyt" in topics, has_pydel="pydel" in topics)
cl = adm.describe_cluster()
out(call="describe_cluster", brokers=len(cl["brokers"]), controller=cl["controller_id"],
    cluster_id=cl.get("cluster_id"))

# DescribeConfigs, AlterConfigs (the legacy form 2.0.2 has).
r = adm.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "pyt"), ConfigResource(ConfigResourceType.BROKER, "0")])
for resp in r:
    for code, msg, rtype, rname, entries in resp.resources:
        if code != 0:
            fail("describe_configs %s: error %d %s" % (rname, code, msg))
        conf = {e[0]: e[1] for e in entries}
        out(call="describe_configs", type=rtype, name=rname, configs=len(conf),
            retention_ms=conf.get("retention.ms"), cleanup_policy=conf.get("cleanup.policy"))
r = adm.alter_configs([ConfigResource(ConfigResourceType.TOPIC, "pyt", configs={"retention.ms": "3600000"})])
check_codes("alter_configs", [(x[3], x[0]) for x in r.resources])
r = adm.describe_configs([ConfigResource(ConfigResourceType.TOPIC, "pyt")])
for code, msg, rtype, rname, entries in r[0].resources:
    conf = {e[0]: e[1] for e in entries}
    out(call="alter_configs", name=rname, retention_ms=conf.get("retention.ms"))

# Records to consume: 5 per partition of pyt.
p = KafkaProducer(bootstrap_servers=broker, acks="all")
for part in range(3):
    for i in range(5):
        p.send("pyt", value=b"v%d" % i, partition=part)
p.flush()
p.close()

# Group pylag consumes part of pyt: partition 0 whole, partition 1 two
# records, partition 2 nothing; it stays a member while it is described.
c = KafkaConsumer(bootstrap_servers=broker, group_id="pylag", client_id="py-member", enable_auto_commit=False,
                  auto_offset_reset="earliest", fetch_max_wait_ms=200, consumer_timeout_ms=20000)
c.subscribe(["pyt"])
seen = {}
for m in c:
    seen[m.partition] = m.offset + 1
    if seen.get(0) == 5 and seen.get(1, 0) >= 2 and seen.get(2, 0) >= 1:
        break
if seen.get(0) != 5:
    fail("consumed %s" % seen)
c.commit({TopicPartition("pyt", 0): OffsetAndMetadata(5, ""), TopicPartition("pyt", 1): OffsetAndMetadata(2, "two")})

groups = adm.list_consumer_groups()
out(call="list_consumer_groups", groups=sorted([list(g) for g in groups]))
d = adm.describe_consumer_groups(["pylag"])[0]
assigned = sorted(p for m in d.members for t in m.member_assignment.assignment for p in t[1])
out(call="describe_consumer_groups", group=d.group, state=d.state, protocol_type=d.protocol_type,
    members=len(d.members), client_id=d.members[0].client_id if d.members else "", assigned=assigned)

# Lag per partition: the committed offset against the end offset listed.
committed = adm.list_consumer_group_offsets("pylag")
tps = [TopicPartition("pyt", n) for n in range(3)]
ends = c.end_offsets(tps)
for tp in tps:
    om = committed.get(tp)
    at = om.offset if om is not None and om.offset >= 0 else None
    out(call="lag", group="pylag", topic=tp.topic, partition=tp.partition, committed=at, end=ends[tp],
        lag=None if at is None else ends[tp] - at)
c.close()

# DeleteGroups: a group with offsets only is deleted; an unknown one is not found.
c2 = KafkaConsumer(bootstrap_servers=broker, group_id="pydoomed", enable_auto_commit=False)
c2.commit({TopicPartition("pyt", 0): OffsetAndMetadata(1, "")})
c2.close()
res = adm.delete_consumer_groups(["pydoomed", "pynever"])
got = {g: e.errno for g, e in res}
if got.get("pydoomed") != 0 or got.get("pynever") != 69:  # GROUP_ID_NOT_FOUND
    fail("delete_consumer_groups: %s" % got)
if "pydoomed" in [g[0] for g in adm.list_consumer_groups()]:
    fail("pydoomed listed after its deletion")
out(call="delete_consumer_groups", results=got)

# DeleteTopics.
r = adm.delete_topics(["pydel"])
check_codes("delete_topics", r.topic_error_codes)
if "pydel" in adm.list_topics():
    fail("pydel listed after its deletion")
out(call="delete_topics", ok=True)
adm.close()
