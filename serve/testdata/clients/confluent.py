# confluent-kafka (Debian's python3-confluent-kafka, librdkafka 2.0.2)
# driven by klog's serve tests. consume BROKER TOPIC GROUP N [ISOLATION]:
# prints "offset keyLen valueLen" per record. produce BROKER TOPIC N CODEC:
# sends N records (value v<i> repeated 20 times) with an idempotent
# producer and the codec.
import sys
from confluent_kafka import Consumer, Producer

def length(b):
    return -1 if b is None else len(b)

mode, broker, topic = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "produce":
    p = Producer({"bootstrap.servers": broker, "enable.idempotence": True, "compression.type": sys.argv[5],
                  "linger.ms": 5})
    errors = []
    for i in range(int(sys.argv[4])):
        # Values long enough that compressing pays: librdkafka stores a
        # batch uncompressed when compression would not shrink it.
        p.produce(topic, key=b"k%d" % i, value=(b"v%d" % i) * 20, timestamp=1700000000000 + i,
                  on_delivery=lambda err, msg: err and errors.append(err))
    left = p.flush(15)
    if left or errors:
        print("undelivered", left, errors, file=sys.stderr)
        sys.exit(1)
    sys.exit(0)
group, want = sys.argv[4], int(sys.argv[5])
iso = sys.argv[6] if len(sys.argv) > 6 else "read_committed"
c = Consumer({"bootstrap.servers": broker, "group.id": group, "auto.offset.reset": "earliest",
              "isolation.level": iso, "fetch.wait.max.ms": 200})
c.subscribe([topic])
n, idle = 0, 0
while n < want and idle < 150:
    m = c.poll(0.1)
    if m is None:
        idle += 1
        continue
    if m.error():
        continue
    print(m.offset(), length(m.key()), length(m.value()), flush=True)
    n += 1
c.commit(asynchronous=False)
c.close()
