// stream_consumer.js -- what the three example consumers share: a consumer group on a
// Redis stream, read as most Node services read one, and the handler convention wsim's
// generated scenarios use.  Each example (atomic.js, write_then_ack.js, ack_then_write.js)
// only says how it applies an entry: the order of its writes and its XACK.
//
// Where Redis is: REDIS_URL (wsim sets it; redis://127.0.0.1:6379 otherwise).  What to
// read: STREAM (orders), GROUP (billing), CONSUMER (worker-1).
//
// The loop: first the entries this consumer left pending (XREADGROUP ... 0: what a crashed
// run of it had read and not acknowledged), then new ones (XREADGROUP ... BLOCK 5000 ... >),
// each handled in turn.  SIGTERM stops it between two entries.
//
// The handler convention (docs/consumer.md, "The handler convention"): an entry's
// _payload is JSON, {"outcome": "ack" | "drop", "writes": [["INCRBY", "total", "100"], ...]}:
// on "ack" the handler sends the writes, in order, and acknowledges the entry; on "drop"
// it acknowledges it and writes nothing.
'use strict';
const Redis = require('ioredis');

const url = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
const stream = process.env.STREAM || 'orders';
const group = process.env.GROUP || 'billing';
const consumer = process.env.CONSUMER || 'worker-1';

// What an entry asks for: its outcome and its writes (a payload that is not the
// convention's is dropped, with a line on stderr).
function task(id, fields) {
  const at = fields ? fields.indexOf('_payload') : -1;
  try {
    const t = JSON.parse(at >= 0 ? fields[at + 1] : '');
    if ((t.outcome === 'ack' || t.outcome === 'drop') && Array.isArray(t.writes || [])) {
      return { outcome: t.outcome, writes: t.writes || [] };
    }
  } catch (e) { /* said below */ }
  console.error(`${id}: not a {"outcome", "writes"} payload: dropped`);
  return { outcome: 'drop', writes: [] };
}

// Runs the consumer: apply(ctx, id, task) applies one entry, where ctx = {redis, stream,
// group} (redis: the connection for writes and acknowledgements).
async function run(apply) {
  // Two connections, as a blocking read holds its connection: one reads, one writes.
  // Without ioredis's CLIENT SETINFO and INFO at connect: two connections sending them at
  // once reach the server in either order, and wsim explore would say so in every report.
  const opts = { disableClientInfo: true, enableReadyCheck: false };
  const reader = new Redis(url, { ...opts, maxRetriesPerRequest: null });
  const redis = new Redis(url, opts);
  let stopping = false;
  process.on('SIGTERM', () => {
    stopping = true;
    reader.disconnect(); // a blocked read ends at once
  });
  try {
    await redis.xgroup('CREATE', stream, group, '$', 'MKSTREAM');
  } catch (e) {
    if (!String(e.message).startsWith('BUSYGROUP')) throw e;
  }
  const ctx = { redis, stream, group };
  let from = '0'; // our own pending entries first, then new ones
  while (!stopping) {
    let reply;
    try {
      reply = from === '0'
        ? await reader.xreadgroup('GROUP', group, consumer, 'COUNT', 100, 'STREAMS', stream, '0')
        : await reader.xreadgroup('GROUP', group, consumer, 'COUNT', 100, 'BLOCK', 5000,
                                  'STREAMS', stream, '>');
    } catch (e) {
      if (stopping) break;
      throw e;
    }
    const entries = reply ? reply[0][1] : [];
    if (from === '0' && entries.length === 0) {
      from = '>';
      continue;
    }
    for (const [id, fields] of entries) {
      if (stopping) break;
      await apply(ctx, id, task(id, fields));
    }
  }
  await redis.quit();
}

module.exports = { run };
