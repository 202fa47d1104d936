# confluent-kafka-python (librdkafka) transactional producer for serve's
# tests: confluent_txn.py ADDR TOPIC TXNID SPEC, where SPEC is a
# comma-separated list of transactions, each "commit:" or "abort:" and its
# values joined by "+" (commit:a+b,abort:c). Prints one line per
# transaction ended.
import sys

from confluent_kafka import Producer

addr, topic, txn_id, spec = sys.argv[1:5]
p = Producer({"bootstrap.servers": addr, "transactional.id": txn_id,
              "transaction.timeout.ms": 60000, "linger.ms": 0})
p.init_transactions(30)
for txn in spec.split(","):
    end, values = txn.split(":", 1)
    p.begin_transaction()
    for v in values.split("+"):
        p.produce(topic, value=v.encode(), partition=0)
    p.flush(30)
    if end == "commit":
        p.commit_transaction(30)
    else:
        p.abort_transaction(30)
    print(end, values)
