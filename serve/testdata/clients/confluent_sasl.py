# confluent-kafka (Debian's python3-confluent-kafka, librdkafka 2.0.2)
# against a klog serve with SASL users, driven by klog's serve tests.
# BROKER MECHANISM USER PASSWORD TOPIC N: consumes N records of TOPIC with a
# group and prints "offset keyLen valueLen" per record, then produces one
# record to TOPIC and prints "produced" or "produce error: NAME".
import sys
from confluent_kafka import Consumer, Producer

broker, mech, user, password, topic, want = sys.argv[1:7]
sasl = {"bootstrap.servers": broker, "security.protocol": "SASL_PLAINTEXT", "sasl.mechanisms": mech,
        "sasl.username": user, "sasl.password": password}

def length(b):
    return -1 if b is None else len(b)

c = Consumer(dict(sasl, **{"group.id": "sasl-" + user, "auto.offset.reset": "earliest", "fetch.wait.max.ms": 200}))
c.subscribe([topic])
n, idle = 0, 0
while n < int(want) and idle < 150:
    m = c.poll(0.1)
    if m is None:
        idle += 1
        continue
    if m.error():
        print("consume error:", m.error().name(), file=sys.stderr)
        sys.exit(1)
    print(m.offset(), length(m.key()), length(m.value()), flush=True)
    n += 1
c.close()
p = Producer(dict(sasl, **{"enable.idempotence": False, "message.send.max.retries": 0}))
result = []
p.produce(topic, value=b"from " + user.encode(), on_delivery=lambda err, msg: result.append(err))
p.flush(15)
if not result:
    print("produce error: none delivered")
elif result[0] is None:
    print("produced")
else:
    print("produce error:", result[0].name())
