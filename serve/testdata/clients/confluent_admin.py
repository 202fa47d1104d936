# confluent-kafka-python 1.7.0 on librdkafka 2.0.2 (Debian's
# python3-confluent-kafka): every admin call its AdminClient offers,
# against `klog serve --writable`.
# admin_python_test.go runs it: confluent_admin.py BROKER
# It prints one JSON object a line and exits nonzero on any error.
#
# 1.7.0's AdminClient has create_topics, create_partitions, delete_topics,
# list_topics, describe_configs, alter_configs and list_groups (ListGroups
# then DescribeGroups). It has no list/describe/delete consumer groups of
# KIP-518's form, no list/alter/delete consumer group offsets, no
# incremental_alter_configs, no delete_records and no describe_cluster
# (they came with 1.9-2.x): the lag below is the Consumer's committed()
# (OffsetFetch) against get_watermark_offsets() (ListOffsets).
import json
import sys

from confluent_kafka import Consumer, KafkaException, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, ConfigResource, NewPartitions, NewTopic

broker = sys.argv[1]


def out(**kw):
    print(json.dumps(kw, sort_keys=True), flush=True)


def fail(msg):
    sys.exit("confluent_admin: " + msg)


def wait(what, futures):
    # f.result() raises KafkaException on the resource's error.
    return {k: f.result() for k, f in futures.items()}


def refused(what, futures, code):
    for k, f in futures.items():
        try:
            f.result()
        except KafkaException as e:
            if e.args[0].code() != code:
                fail("%s %s: %s, want error %d" % (what, k, e, code))
            continue
        fail("%s %s: no error, want %d" % (what, k, code))


def error_cb(err):
    fail("client error: %s" % err)


adm = AdminClient({"bootstrap.servers": broker, "client.id": "cf-admin", "error_cb": error_cb})

# CreateTopics: validate_only creates nothing; a second create is refused.
wait("create_topics validate_only", adm.create_topics([NewTopic("cft", 2, 1)], validate_only=True))
if "cft" in adm.list_topics(timeout=10).topics:
    fail("validate_only created cft")
wait("create_topics", adm.create_topics([NewTopic("cft", 2, 1), NewTopic("cfdel", 1, 1)]))
refused("create_topics again", adm.create_topics([NewTopic("cft", 2, 1)]), 36)  # TOPIC_ALREADY_EXISTS
out(call="create_topics", ok=True)

# CreatePartitions: validate_only, then 2 -> 3.
wait("create_partitions validate_only", adm.create_partitions([NewPartitions("cft", 3)], validate_only=True))
if len(adm.list_topics(topic="cft", timeout=10).topics["cft"].partitions) != 2:
    fail("validate_only added partitions")
wait("create_partitions", adm.create_partitions([NewPartitions("cft", 3)]))

# Metadata: topics and the cluster.
md = adm.list_topics(timeout=10)
t = md.topics.get("cft")
out(call="list_topics", has_cft=t is not None, has_cfdel="cfdel" in md.topics,
    partitions=len(t.partitions) if t else 0, brokers=len(md.brokers), controller=md.controller_id,
    cluster_id=md.cluster_id)

# DescribeConfigs and AlterConfigs.
res = wait("describe_configs", adm.describe_configs([ConfigResource("topic", "cft"), ConfigResource("broker", "0")]))
for r, conf in res.items():
    rt = conf.get("retention.ms")
    out(call="describe_configs", type=str(r.restype), name=r.name, configs=len(conf),
        retention_ms=rt.value if rt else None, retention_default=rt.is_default if rt else None,
        cleanup_policy=conf["cleanup.policy"].value if "cleanup.policy" in conf else None)
wait("alter_configs", adm.alter_configs([ConfigResource("topic", "cft", set_config={"retention.ms": "3600000"})]))
res = wait("describe_configs", adm.describe_configs([ConfigResource("topic", "cft")]))
for r, conf in res.items():
    out(call="alter_configs", name=r.name, retention_ms=conf["retention.ms"].value,
        retention_default=conf["retention.ms"].is_default)

# Records to consume: 5 per partition of cft.
p = Producer({"bootstrap.servers": broker, "acks": "all", "error_cb": error_cb})
for part in range(3):
    for i in range(5):
        p.produce("cft", value=b"v%d" % i, partition=part)
if p.flush(20) != 0:
    fail("produce: records left unsent")

# Group cflag consumes part of cft: partition 0 whole, partition 1 two
# records committed, partition 2 nothing; it stays a member while listed.
c = Consumer({"bootstrap.servers": broker, "group.id": "cflag", "client.id": "cf-member",
              "enable.auto.commit": False, "auto.offset.reset": "earliest", "error_cb": error_cb})
c.subscribe(["cft"])
seen = {}
for _ in range(200):
    m = c.poll(0.2)
    if m is None:
        if seen.get(0) == 5:
            break
        continue
    if m.error():
        fail("consume: %s" % m.error())
    seen[m.partition()] = m.offset() + 1
if seen.get(0) != 5:
    fail("consumed %s" % seen)
c.commit(offsets=[TopicPartition("cft", 0, 5), TopicPartition("cft", 1, 2)], asynchronous=False)

gs = adm.list_groups(timeout=10)
out(call="list_groups", groups=sorted([g.id, g.protocol_type] for g in gs))
for g in gs:
    if g.id != "cflag":
        continue
    if g.error is not None and g.error.code() != 0:
        fail("list_groups cflag: %s" % g.error)
    out(call="describe_group", group=g.id, state=g.state, protocol_type=g.protocol_type, protocol=g.protocol,
        members=len(g.members), client_id=g.members[0].client_id if g.members else "")

# Lag per partition: the committed offset against the end offset listed.
tps = [TopicPartition("cft", n) for n in range(3)]
for tp in c.committed(tps, timeout=10):
    if tp.error is not None:
        fail("committed %d: %s" % (tp.partition, tp.error))
    low, high = c.get_watermark_offsets(tp, timeout=10, cached=False)
    at = tp.offset if tp.offset >= 0 else None
    out(call="lag", group="cflag", topic=tp.topic, partition=tp.partition, committed=at, end=high,
        lag=None if at is None else high - at)
c.close()

# DeleteTopics.
wait("delete_topics", adm.delete_topics(["cfdel"]))
if "cfdel" in adm.list_topics(timeout=10).topics:
    fail("cfdel listed after its deletion")
out(call="delete_topics", ok=True)
