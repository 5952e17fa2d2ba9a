// ack_then_write.js -- each entry acknowledged first, then its writes.  A crash after the
// XACK took effect and before the writes did leaves nothing pending and nothing written:
// the entry is lost (examples/ack_then_write.wsim).
'use strict';
const { run } = require('./stream_consumer');

run(async ({ redis, stream, group }, id, { outcome, writes }) => {
  await redis.xack(stream, group, id);
  if (outcome === 'ack') for (const w of writes) await redis.call(...w);
}).catch((e) => { console.error(e); process.exit(1); });
