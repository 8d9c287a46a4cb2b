// Licensed under the Apache License, Version 2.0. See LICENSE.
//
// Drive ali-ons 3.12.0 (a pure JavaScript RocketMQ client) from the tests: the same commands, output
// lines and message bodies as cpp_client.py (see bodies.py for the body scheme).
//
//   node js_client.js produce --namesrv A --topic T --count N --size S --run-id R
//        [--tag T] [--keys K] [--group G] [--interval-ms M] [--send-timeout-ms M] [--delay-level L]
//        [--stop-file F]
//   node js_client.js consume --namesrv A --topic T --group G --timeout S [--expect N]
//        [--fail-first K] [--expression E] [--linger S] [--from first|last] [--rebalance-ms M]
//
// ali-ons needs an `httpclient` even when it is given name servers directly (it only uses it to
// look name servers up over HTTP): the object passed here throws if it is ever called.
'use strict';

const crypto = require('crypto');
const fs = require('fs');
const path = require('path');

const ALIONS = process.env.ALIONS_PATH || path.join(__dirname, 'js', 'node_modules', 'ali-ons');
const { Producer, Consumer, Message } = require(ALIONS);

const noHttp = {
  request() { throw new Error('no HTTP name server lookup in the tests'); },
  requestThunk() { throw new Error('no HTTP name server lookup in the tests'); },
  curl() { throw new Error('no HTTP name server lookup in the tests'); },
};

function parseArgs(argv) {
  const args = { command: argv[0] };
  for (let k = 1; k < argv.length; k += 2) {
    if (!argv[k].startsWith('--') || k + 1 >= argv.length) {
      throw new Error(`bad argument ${argv[k]}`);
    }
    args[argv[k].slice(2)] = argv[k + 1];
  }
  for (const need of [ 'namesrv', 'topic' ]) {
    if (!args[need]) throw new Error(`--${need} is required`);
  }
  return args;
}

function emit(record) {
  const sorted = {};
  for (const key of Object.keys(record).sort()) sorted[key] = record[key];
  process.stdout.write(JSON.stringify(sorted) + '\n');
}

function sha256(data) {
  return crypto.createHash('sha256').update(data).digest('hex');
}

// The same text as bodies.make_body.
function makeBody(runId, i, size) {
  const head = `${runId}:${i}:`;
  let out = head;
  for (let k = 0; out.length < size; k++) {
    out += sha256(`${runId}:${i}:${k}`);
  }
  return out.slice(0, Math.max(size, head.length));
}

function markOf(body) {
  const parts = body.slice(0, 200).toString('utf8').split(':');
  return parts.length >= 3 ? `${parts[0]}:${parts[1]}` : '';
}

function fill(template, runId, i) {
  return template.replace(/\{i\}/g, String(i)).replace(/\{run\}/g, runId);
}

function sleep(ms) {
  return new Promise(resolve => setTimeout(resolve, ms));
}

// Leave even when the library's close() hangs on a dead broker.
async function leave(code, close, graceMs) {
  await Promise.race([ close().catch(err => console.error('close:', err && err.message)), sleep(graceMs) ]);
  process.exit(code);
}

// ACL credentials: ali-ons signs every request with them (lib/channel.js beforeRequest)
function credentials(args) {
  return args['access-key'] ? { accessKey: args['access-key'], secretKey: args['secret-key'] || '' } : {};
}

async function produce(args) {
  const producer = new Producer({
    httpclient: noHttp,
    nameSrv: args.namesrv,
    producerGroup: args.group || 'JsProducerGroup',
    sendMsgTimeout: Number(args['send-timeout-ms'] || 3000),
    ...credentials(args),
  });
  producer.on('error', err => console.error('producer error:', err && err.message));
  await producer.ready();
  const runId = args['run-id'];
  const count = Number(args.count);
  const sizes = String(args.size || 100).split(',').map(Number);
  const interval = Number(args['interval-ms'] || 0);
  let sent = 0;
  let errors = 0;
  for (let i = 0; i < count; i++) {
    if (args['stop-file'] && fs.existsSync(args['stop-file'])) break;
    const body = makeBody(runId, i, sizes[i % sizes.length]);
    const msg = args.tag ? new Message(args.topic, fill(args.tag, runId, i), body) : new Message(args.topic, body);
    if (args.keys) msg.keys = [ fill(args.keys, runId, i) ];
    if (args['delay-level']) msg.delayTimeLevel = Number(args['delay-level']);
    const digest = sha256(Buffer.from(body));
    try {
      const result = await producer.send(msg);
      sent++;
      emit({ event: 'sent', i, status: result.sendStatus, msgId: result.msgId,
        queue: result.messageQueue ? Number(result.messageQueue.queueId) : null,
        queueOffset: result.queueOffset, sha256: digest, size: body.length, t: Date.now() / 1000 });
    } catch (err) {
      errors++;
      emit({ event: 'send_error', i, error: String(err && err.message).split('\n')[0], sha256: digest,
        t: Date.now() / 1000 });
    }
    if (interval) await sleep(interval);
  }
  emit({ event: 'done', sent, errors });
  await leave(0, () => producer.close(), Number(args.grace || 8) * 1000);
}

async function consume(args) {
  const expect = Number(args.expect || 0);
  const failFirst = Number(args['fail-first'] || 0);
  const options = {
    httpclient: noHttp,
    nameSrv: args.namesrv,
    consumerGroup: args.group,
    consumeFromWhere: args.from === 'last' ? 'CONSUME_FROM_LAST_OFFSET' : 'CONSUME_FROM_FIRST_OFFSET',
    ...credentials(args),
  };
  if (args['rebalance-ms']) options.rebalanceInterval = Number(args['rebalance-ms']);
  const consumer = new Consumer(options);
  consumer.on('error', err => console.error('consumer error:', err && err.message));
  let deliveries = 0;
  let ok = 0;
  let reachedAt = null;
  let signal;
  const enough = new Promise(resolve => { signal = resolve; });
  consumer.subscribe(args.topic, args.expression || '*', async msg => {
    deliveries++;
    const failing = deliveries <= failFirst;
    if (!failing) ok++;
    const body = msg.body || Buffer.alloc(0);
    emit({ event: 'msg', topic: msg.topic, tags: msg.tags === undefined ? null : msg.tags,
      keys: msg.keys === undefined ? null : msg.keys, mark: markOf(body), sha256: sha256(body),
      size: body.length, msgId: msg.msgId, reconsumeTimes: msg.reconsumeTimes, queue: msg.queueId,
      queueOffset: msg.queueOffset, result: failing ? 'RECONSUME_LATER' : 'CONSUME_SUCCESS',
      t: Date.now() / 1000 });
    if (expect && ok >= expect && reachedAt === null) {
      reachedAt = Date.now();
      // ali-ons moves its offset once this handler has returned: give it that moment, or close()
      // would commit the offset before the last message.
      setTimeout(() => signal(true), 200);
    }
    return failing ? Consumer.ACTION_RETRY : undefined;
  });
  // ali-ons signals each change of the queues it reads; report them so that a test can tell when
  // a rebalance has settled.
  consumer.on(`topic_${args.topic}_queue_changed`, () => {
    const queues = [];
    for (const { messageQueue } of consumer.processQueueTable.values()) {
      if (messageQueue.topic === args.topic) queues.push(Number(messageQueue.queueId));
    }
    emit({ event: 'allocated', queues: queues.sort((x, y) => x - y), t: Date.now() / 1000 });
  });
  await consumer.ready();
  emit({ event: 'started', t: Date.now() / 1000 });
  const timeoutMs = Number(args.timeout) * 1000;
  const reached = await Promise.race([ expect ? enough : sleep(timeoutMs).then(() => true),
    sleep(timeoutMs).then(() => false) ]);
  if (reached && args.linger) await sleep(Number(args.linger) * 1000);
  emit({ event: reached ? 'done' : 'timeout', received: ok, deliveries });
  await leave(reached ? 0 : 3, () => consumer.close(), Number(args.grace || 8) * 1000);
}

const args = parseArgs(process.argv.slice(2));
const run = args.command === 'produce' ? produce : args.command === 'consume' ? consume : null;
if (!run) {
  console.error(`unknown command ${args.command}`);
  process.exit(2);
}
run(args).catch(err => {
  console.error(err);
  process.exit(1);
});
