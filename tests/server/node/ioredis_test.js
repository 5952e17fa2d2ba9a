// ioredis_test.js -- a Node.js client from npm (ioredis) against fakeredis-server: streams
// with a consumer group, MULTI/EXEC, Pub/Sub, a truly blocking pop, and the FAKE.TIME
// control command.  Prints one line per check and "N passed, M failed"; exits non-zero on
// any failure.  Usage: node ioredis_test.js PORT
'use strict';
const assert = require('assert');
const Redis = require('ioredis');

const port = parseInt(process.argv[2], 10);
const opts = { host: '127.0.0.1', port, maxRetriesPerRequest: 1, enableOfflineQueue: true };
let passed = 0, failed = 0;

async function check(name, fn) {
  try {
    await fn();
    passed++;
    console.log(`ok   ${name}`);
  } catch (err) {
    failed++;
    console.log(`FAIL ${name}: ${err && err.message}`);
  }
}

async function main() {
  const r = new Redis(opts);
  await r.flushall();

  await check('a consumer group reads, acks and leaves nothing pending', async () => {
    assert.strictEqual(await r.xgroup('CREATE', 'orders', 'fulfilment', '$', 'MKSTREAM'), 'OK');
    const id1 = await r.xadd('orders', '*', '_payload', 'order 1');
    const id2 = await r.xadd('orders', '*', '_payload', 'order 2', 'h:x-ruststream-retry-count', '1');
    const got = await r.xreadgroup('GROUP', 'fulfilment', 'c1', 'COUNT', 10, 'STREAMS', 'orders', '>');
    assert.deepStrictEqual(got, [['orders', [[id1, ['_payload', 'order 1']],
      [id2, ['_payload', 'order 2', 'h:x-ruststream-retry-count', '1']]]]]);
    const summary = await r.xpending('orders', 'fulfilment');
    assert.strictEqual(summary[0], 2);
    assert.strictEqual(await r.xack('orders', 'fulfilment', id1, id2), 2);
    assert.strictEqual((await r.xpending('orders', 'fulfilment'))[0], 0);
  });

  await check('XAUTOCLAIM hands a dead consumer\'s entry to another', async () => {
    const id = await r.xadd('orders', '*', '_payload', 'order 3');
    await r.xreadgroup('GROUP', 'fulfilment', 'dead', 'STREAMS', 'orders', '>');
    const [cursor, claimed, deleted] = await r.xautoclaim('orders', 'fulfilment', 'c2', 0, '0-0');
    assert.strictEqual(cursor, '0-0');
    assert.deepStrictEqual(claimed, [[id, ['_payload', 'order 3']]]);
    assert.deepStrictEqual(deleted, []);
  });

  await check('MULTI/EXEC runs the queue; a queue-time error aborts it', async () => {
    const res = await r.multi().lpush('{payments}:ledger', 'p1:100').hincrby('{payments}:balances', 'alice', 100).exec();
    assert.deepStrictEqual(res, [[null, 1], [null, 100]]);
    await assert.rejects(r.multi().set('k', 'v').call('NOSUCH').exec(), /EXECABORT/);
    assert.strictEqual(await r.exists('k'), 0);
  });

  await check('a run-time error inside EXEC fails alone', async () => {
    await r.set('str', 'x');
    const res = await r.multi().hincrby('str', 'f', 1).incr('after').exec();
    assert.match(String(res[0][0]), /WRONGTYPE/);
    assert.deepStrictEqual(res[1], [null, 1]);
  });

  await check('Pub/Sub: a subscriber receives what is published', async () => {
    const sub = new Redis(opts);
    await sub.subscribe('news');
    const got = new Promise((resolve) => sub.on('message', (ch, msg) => resolve([ch, msg])));
    assert.strictEqual(await r.publish('news', 'hello'), 1);
    assert.deepStrictEqual(await got, ['news', 'hello']);
    sub.disconnect();
  });

  await check('BLPOP blocks until another client pushes', async () => {
    const b = new Redis(opts);
    const pending = b.blpop('jobs', 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    assert.strictEqual(await r.rpush('jobs', 'j1'), 1);
    assert.deepStrictEqual(await pending, ['jobs', 'j1']);
    b.disconnect();
  });

  await check('FAKE.TIME moves the virtual clock: a TTL runs out', async () => {
    await r.set('session', 's', 'PX', 1000);
    await r.call('FAKE.TIME', 'ADVANCE', '1001');
    assert.strictEqual(await r.get('session'), null);
  });

  r.disconnect();
  console.log(`${passed} passed, ${failed} failed`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  console.log(`FAIL ${err && err.stack}`);
  console.log(`${passed} passed, ${failed + 1} failed`);
  process.exit(1);
});
