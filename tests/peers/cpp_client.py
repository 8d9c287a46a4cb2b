# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Drive the official C++ RocketMQ client (PyPI ``rocketmq`` 0.4.4, a ctypes binding) from the tests.

Run as its own process (``python cpp_client.py produce|consume ...``): the C++ library starts
threads of its own, logs to ``$HOME/logs/rocketmq-cpp/`` and can block in its destructors, so
every test gives each process its own ``HOME`` and this script leaves with ``os._exit``.

Every result is one JSON line on stdout (see :mod:`tests.peers.bodies` for the body scheme both
drivers share, and ``js_client.js`` for the same commands over ali-ons):

* ``produce`` prints ``{"event":"sent","i":…,"status":"SEND_OK","msgId":…,"queueOffset":…,
  "sha256":…,"size":…}`` per send, or ``{"event":"send_error","i":…,"error":…}``; then
  ``{"event":"done","sent":…,"errors":…}``.
* ``consume`` prints ``{"event":"started"}`` once subscribed, then per delivery ``{"event":"msg",
  "topic","tags","keys","mark","sha256","size","msgId","reconsumeTimes","queue","queueOffset","result"}``
  and finally ``{"event":"done","received":…}`` (exit 0) or ``{"event":"timeout",…}`` (exit 3).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from bodies import make_body, mark_of
from rocketmq.client import Message, Producer, PushConsumer
from rocketmq.exceptions import RocketMQException, ffi_check
from rocketmq.ffi import dll

CONSUME_SUCCESS = 0
RECONSUME_LATER = 1
STATUS_NAMES = {0: "SEND_OK", 1: "FLUSH_DISK_TIMEOUT", 2: "FLUSH_SLAVE_TIMEOUT", 3: "SLAVE_NOT_AVAILABLE"}

_out = threading.Lock()


def emit(**record: Any) -> None:
    with _out:
        sys.stdout.write(json.dumps(record, sort_keys=True) + "\n")
        sys.stdout.flush()


def text(value: bytes | str | None) -> str | None:
    if value is None:
        return None
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


def leave(code: int, close: Any, grace: float) -> None:
    """Shut the client down, but never wait on the library for more than ``grace`` seconds."""
    done = threading.Event()

    def shutdown() -> None:
        try:
            close()
        except RocketMQException as exc:
            print(f"shutdown: {exc}", file=sys.stderr)
        done.set()

    threading.Thread(target=shutdown, daemon=True).start()
    done.wait(grace)
    sys.stdout.flush()
    os._exit(code)


def produce(args: argparse.Namespace) -> None:
    producer = Producer(args.group, timeout=args.send_timeout_ms)
    producer.set_namesrv_addr(args.namesrv)
    if args.access_key:
        producer.set_session_credentials(args.access_key, args.secret_key or "", "ALIYUN")
    producer.start()
    sizes = [int(s) for s in args.size.split(",")]
    totals = {"sent": 0, "errors": 0}

    def message(i: int) -> tuple[Message, str, int]:
        body = make_body(args.run_id, i, sizes[i % len(sizes)])
        msg = Message(args.topic)
        if args.tag:
            msg.set_tags(args.tag.format(i=i, run=args.run_id))
        if args.keys:
            msg.set_keys(args.keys.format(i=i, run=args.run_id))
        if args.delay_level:
            msg.set_delay_time_level(args.delay_level)
        msg.set_body(body)
        return msg, hashlib.sha256(body.encode()).hexdigest(), len(body)

    def send(first: int, n: int) -> None:
        made = [message(i) for i in range(first, first + n)]
        try:
            if args.batch:
                result = producer.send_batch([m for m, _, _ in made])
            elif args.queue is not None:
                result = producer.send_orderly(made[0][0], args.queue)  # queue = arg % queue count
            else:
                result = producer.send_sync(made[0][0])
        except RocketMQException as exc:
            totals["errors"] += n
            for k, (_, digest, _) in enumerate(made):
                emit(event="send_error", i=first + k, sha256=digest, t=time.time(),
                     error=str(exc).splitlines()[0] if str(exc) else type(exc).__name__)
            return
        totals["sent"] += n
        for k, (_, digest, size) in enumerate(made):
            emit(event="sent", i=first + k, status=STATUS_NAMES.get(int(result.status), str(result.status)),
                 msgId=result.msg_id, queueOffset=result.offset, sha256=digest, size=size, t=time.time())

    step = args.batch or 1
    for first in range(0, args.count, step):
        if args.stop_file and os.path.exists(args.stop_file):
            break
        send(first, min(step, args.count - first))
        if args.interval_ms:
            time.sleep(args.interval_ms / 1000)
    emit(event="done", **totals)
    leave(0, producer.shutdown, args.grace)


def consume(args: argparse.Namespace) -> None:
    consumer = PushConsumer(args.group, orderly=args.orderly)
    consumer.set_namesrv_addr(args.namesrv)
    if args.access_key:
        consumer.set_session_credentials(args.access_key, args.secret_key or "", "ALIYUN")
    consumer.set_thread_count(1)
    lock = threading.Lock()
    enough = threading.Event()
    counts = {"deliveries": 0, "ok": 0}

    # The binding's own ``subscribe`` turns a Python exception into RECONSUME_LATER but then
    # re-raises it inside the ctypes callback, which loses the status; register a callback that
    # returns the status itself instead.
    def on_message(_consumer: int, handle: int) -> int:
        from rocketmq.client import RecvMessage

        m = RecvMessage(handle)
        body = m.body or b""
        with lock:
            counts["deliveries"] += 1
            failing = counts["deliveries"] <= args.fail_first
            if not failing:
                counts["ok"] += 1
            reached = args.expect and counts["ok"] >= args.expect
        emit(event="msg", topic=m.topic, tags=text(m.tags), keys=text(m.keys), mark=mark_of(body),
             sha256=hashlib.sha256(body).hexdigest(), size=len(body), msgId=m.id,
             reconsumeTimes=m.reconsume_times, queue=m.queue_id, queueOffset=m.queue_offset,
             result="RECONSUME_LATER" if failing else "CONSUME_SUCCESS", t=time.time())
        if reached:
            enough.set()
        return RECONSUME_LATER if failing else CONSUME_SUCCESS

    ffi_check(dll.Subscribe(consumer._handle, args.topic.encode(), args.expression.encode()))
    consumer._register_callback(on_message)
    consumer.start()
    emit(event="started", t=time.time())
    reached = enough.wait(args.timeout) if args.expect else (time.sleep(args.timeout) or True)
    # The client moves its offset after the callback has returned; shutting down at once could
    # commit the offset before the last message.
    time.sleep(0.2 + (args.linger if reached else 0))
    with lock:
        received = counts["ok"]
    emit(event="done" if reached else "timeout", received=received, deliveries=counts["deliveries"])
    leave(0 if reached else 3, consumer.shutdown, args.grace)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    for name in ("produce", "consume"):
        p = sub.add_parser(name)
        p.add_argument("--namesrv", required=True)
        p.add_argument("--topic", required=True)
        p.add_argument("--grace", type=float, default=8.0, help="seconds allowed for the library's shutdown")
        p.add_argument("--access-key", help="ACL credentials (set_session_credentials, channel ALIYUN)")
        p.add_argument("--secret-key")
    p = sub.choices["produce"]
    p.add_argument("--count", type=int, required=True)
    p.add_argument("--size", default="100", help="body size, or sizes used in turn (\"200,5000\")")
    p.add_argument("--run-id", required=True)
    p.add_argument("--tag", help="tag of every message ({i} and {run} are replaced)")
    p.add_argument("--keys", help="keys of every message ({i} and {run} are replaced)")
    p.add_argument("--group", default="CppProducerGroup")
    p.add_argument("--send-timeout-ms", type=int, default=3000)
    p.add_argument("--interval-ms", type=int, default=0)
    p.add_argument("--batch", type=int, default=0, help="send N messages per SEND_BATCH_MESSAGE")
    p.add_argument("--queue", type=int, help="send every message to this queue (send_orderly)")
    p.add_argument("--delay-level", type=int, default=0)
    p.add_argument("--stop-file", help="stop sending (before --count) once this file exists")
    p = sub.choices["consume"]
    p.add_argument("--group", required=True)
    p.add_argument("--expect", type=int, default=0, help="stop after this many successful deliveries")
    p.add_argument("--timeout", type=float, required=True)
    p.add_argument("--fail-first", type=int, default=0, help="answer RECONSUME_LATER to the first K deliveries")
    p.add_argument("--expression", default="*", help="tag expression")
    p.add_argument("--linger", type=float, default=0.0, help="keep consuming this long after --expect")
    p.add_argument("--orderly", action="store_true", help="an orderly consumer (locks its queues)")
    args = parser.parse_args()
    produce(args) if args.command == "produce" else consume(args)


if __name__ == "__main__":
    main()
