// atomic.js -- each entry's writes and its XACK in one MULTI/EXEC: Redis applies the
// transaction whole or not at all, so a crash anywhere leaves the entry either done and
// acknowledged or untouched and pending.  wsim explore finds no point that loses or
// doubles anything (examples/atomic.wsim).
'use strict';
const { run } = require('./stream_consumer');

run(async ({ redis, stream, group }, id, { outcome, writes }) => {
  const tx = redis.multi();
  if (outcome === 'ack') for (const w of writes) tx.call(...w);
  tx.xack(stream, group, id);
  await tx.exec();
}).catch((e) => { console.error(e); process.exit(1); });
