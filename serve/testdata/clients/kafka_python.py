# kafka-python (Debian's python3-kafka) driven by klog's serve tests.
# consume BROKER TOPIC GROUP N: prints "offset keyLen valueLen" per record.
# produce BROKER TOPIC N: sends N records (acks=all).
import sys
from kafka import KafkaConsumer, KafkaProducer

def length(b):
    return -1 if b is None else len(b)

mode, broker, topic = sys.argv[1], sys.argv[2], sys.argv[3]
if mode == "produce":
    p = KafkaProducer(bootstrap_servers=broker, acks="all", api_version_auto_timeout_ms=10000)
    for i in range(int(sys.argv[4])):
        p.send(topic, key=b"k%d" % i, value=b"v%d" % i, timestamp_ms=1700000000000 + i)
    p.flush()
    p.close()
    sys.exit(0)
group, want = sys.argv[4], int(sys.argv[5])
c = KafkaConsumer(topic, bootstrap_servers=broker, group_id=group, auto_offset_reset="earliest",
                  consumer_timeout_ms=15000, fetch_max_wait_ms=200)
n = 0
for m in c:
    print(m.offset, length(m.key), length(m.value), flush=True)
    n += 1
    if n >= want:
        break
c.commit()
c.close()
