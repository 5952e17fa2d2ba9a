// write_then_ack.js -- each entry's writes, then its XACK, each awaited: two round trips.
// A crash after the writes took effect and before the XACK did leaves the entry pending;
// the next run reads it again and writes again -- doubled (examples/write_then_ack.wsim).
'use strict';
const { run } = require('./stream_consumer');

run(async ({ redis, stream, group }, id, { outcome, writes }) => {
  if (outcome === 'ack') for (const w of writes) await redis.call(...w);
  await redis.xack(stream, group, id);
}).catch((e) => { console.error(e); process.exit(1); });
