// Produces schema-encoded records with kafkajs and
// @kafkajs/confluent-schema-registry, and decodes payloads with them:
// the independent implementation systest checks partfs against.
//
//   node srclient.js produce BROKER REGISTRY USER PASS   -> JSON of what it produced
//   node srclient.js decode REGISTRY USER PASS < hex lines -> one JSON per line
'use strict';
const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');
const readline = require('readline');

const person = {
  type: 'record', name: 'Person', namespace: 'people',
  fields: [
    { name: 'name', type: 'string' },
    { name: 'age', type: ['null', 'int'], default: null },
    { name: 'tags', type: { type: 'array', items: 'string' } },
    { name: 'kind', type: { type: 'enum', name: 'Kind', symbols: ['STAFF', 'GUEST'] } },
    { name: 'score', type: 'double' },
    { name: 'when', type: { type: 'long', logicalType: 'timestamp-millis' } },
    { name: 'attrs', type: { type: 'map', values: 'long' } },
    { name: 'home', type: ['null', { type: 'record', name: 'Home', fields: [{ name: 'city', type: 'string' }] }], default: null },
  ],
};
const personKey = { type: 'record', name: 'PersonKey', namespace: 'people', fields: [{ name: 'name', type: 'string' }] };
const proto = `syntax = "proto3";
package ev;
message Event { string id = 1; int32 n = 2; repeated string tags = 3; Inner inner = 4; }
message Inner { bool ok = 1; }
`;
const jsonSchema = {
  type: 'object',
  properties: { id: { type: 'integer' }, what: { type: 'string' }, ok: { type: 'boolean' } },
  required: ['id'],
};

function registry(url, user, pass, opts) {
  return new SchemaRegistry({ host: url, auth: user ? { username: user, password: pass } : undefined }, opts);
}

// insert puts Protobuf message indexes after the 5-byte header (the
// library writes none).
function insert(buf, idx) {
  return Buffer.concat([buf.subarray(0, 5), Buffer.from(idx), buf.subarray(5)]);
}

async function produce(broker, url, user, pass) {
  const reg = registry(url, user, pass);
  const { id: personId } = await reg.register({ type: SchemaType.AVRO, schema: JSON.stringify(person) }, { subject: 'people-value' });
  const { id: keyId } = await reg.register({ type: SchemaType.AVRO, schema: JSON.stringify(personKey) }, { subject: 'people-key' });
  await reg.register({ type: SchemaType.AVRO, schema: JSON.stringify(person) }, { subject: 'written-value' });
  const { id: protoId } = await reg.register({ type: SchemaType.PROTOBUF, schema: proto }, { subject: 'events-value' });
  const { id: jsonId } = await reg.register({ type: SchemaType.JSON, schema: JSON.stringify(jsonSchema) }, { subject: 'jsonev-value' });

  const people = [
    { name: 'Ann', age: 31, tags: ['a', 'b'], kind: 'STAFF', score: 1.5, when: 1764410400000, attrs: { x: 1 }, home: { city: 'Oslo' } },
    { name: 'Bo "B" ü', age: null, tags: [], kind: 'GUEST', score: -0.25, when: 0, attrs: {}, home: null },
  ];
  const events = [
    { id: 'e1', n: 5, tags: ['t'], inner: { ok: true } },
  ];
  const inners = [{ ok: true }];
  const jsons = [{ id: 7, what: 'x', ok: false }];

  const out = [];
  const msgs = { people: [], events: [], jsonev: [] };
  for (const p of people) {
    msgs.people.push({ key: await reg.encode(keyId, { name: p.name }), value: await reg.encode(personId, p) });
    out.push({ topic: 'people', key: { name: p.name }, value: p });
  }
  for (const e of events) {
    msgs.events.push({ value: insert(await reg.encode(protoId, e), [0]) });
    out.push({ topic: 'events', value: e });
  }
  const innerReg = registry(url, user, pass, { [SchemaType.PROTOBUF]: { messageName: 'Inner' } });
  for (const e of inners) {
    const enc = await innerReg.encode(protoId, e);
    msgs.events.push({ value: insert(enc, [2, 2]) }); // indexes [1]: the second message
    out.push({ topic: 'events', value: e });
  }
  for (const j of jsons) {
    msgs.jsonev.push({ value: await reg.encode(jsonId, j) });
    out.push({ topic: 'jsonev', value: j });
  }
  const kafka = new Kafka({ brokers: [broker], clientId: 'partfs-systest', logLevel: logLevel.ERROR });
  const producer = kafka.producer();
  await producer.connect();
  for (const [topic, messages] of Object.entries(msgs)) {
    await producer.send({ topic, messages, acks: -1 });
  }
  await producer.disconnect();
  process.stdout.write(JSON.stringify(out) + '\n');
}

async function decode(url, user, pass) {
  const reg = registry(url, user, pass);
  const rl = readline.createInterface({ input: process.stdin });
  for await (const line of rl) {
    if (!line) continue;
    const v = await reg.decode(Buffer.from(line, 'hex'));
    process.stdout.write(JSON.stringify(v) + '\n');
  }
}

const [cmd, ...args] = process.argv.slice(2);
(cmd === 'produce' ? produce(...args) : decode(...args)).catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
