// kafkajs driven by klog's serve tests: `node client.js BROKER consume TOPIC GROUP N`
// prints one line per record ("offset keyLen valueLen"); `node client.js
// BROKER produce TOPIC N` sends N records with an idempotent producer.
const { Kafka, logLevel } = require('kafkajs');

async function main() {
  const [broker, mode, topic, a, b] = process.argv.slice(2);
  const kafka = new Kafka({ clientId: 'klog-test', brokers: [broker], logLevel: logLevel.ERROR });
  if (mode === 'produce') {
    const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const messages = [];
    for (let i = 0; i < Number(a); i++) messages.push({ key: 'k' + i, value: 'v' + i, timestamp: String(1700000000000 + i) });
    await producer.send({ topic, acks: -1, messages });
    await producer.disconnect();
    return;
  }
  const want = Number(b);
  const consumer = kafka.consumer({ groupId: a, maxWaitTimeInMs: 200 });
  await consumer.connect();
  consumer.on(consumer.events.CRASH, (e) => { console.error(e.payload.error); process.exit(1); });
  await consumer.subscribe({ topic, fromBeginning: true });
  let n = 0;
  await new Promise((resolve) => {
    consumer.run({
      eachMessage: async ({ message }) => {
        const k = message.key === null ? -1 : message.key.length;
        const v = message.value === null ? -1 : message.value.length;
        process.stdout.write(`${message.offset} ${k} ${v}\n`);
        if (++n >= want) resolve();
      },
    });
  });
  await consumer.disconnect();
}

main().then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });
