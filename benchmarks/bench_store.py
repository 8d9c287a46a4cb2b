# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Message store throughput: puts/s and pulled messages/s, as ratios to plain file I/O of the same bytes.

Usage::

    .venv/bin/python benchmarks/bench_store.py [--messages 20000] [--body 1024] [--repeat 3] [--dir /tmp]

Each case starts a :class:`reference_broker.store.MessageStore` in a fresh directory and puts
``--body``-byte messages to 8 queues from ``C`` concurrent producers. Every message is handed over
as the broker's send handler hands it over: the properties string to store (UNIQ_KEY, KEYS, TAGS
and CLUSTER; WAIT dropped), the producer's properties already parsed (WAIT=true still among
them) and ``isWaitStoreMsgOK``, so each put is indexed under two keys and, in SYNC_FLUSH, waits
for its group commit. Cases: ASYNC_FLUSH with 1 and 64 producers, the
first also without the index (``messageIndexEnable=false``) to show its share, and SYNC_FLUSH
(group commit) with 1, 16 and 64 producers. After the ASYNC_FLUSH cases the same store serves
pulls: every queue read from offset 0 by ``get_messages`` of 32 messages, each answer joined into
one PULL body as the careful path of the broker does; then again by ``get_message_views``, the
records as views of the mapped CommitLog, as the broker's pulls without a filter take them (the
view path: nothing joined, the views are what the connection writes).

In the same run the very same record bytes (read back from the store's CommitLog) go through
plain file I/O, the baseline of each row:

* puts, ASYNC_FLUSH: one ``os.write`` per record to a fresh file;
* puts, SYNC_FLUSH: one ``os.write`` per record and one ``fdatasync`` per ``C`` records (the
  grouping a perfect group commit would get from ``C`` producers);
* pulls: the records read back queue by queue with one ``os.pread`` each, joined 32 at a time.

Each figure is the median of ``--repeat`` runs (the store and its baseline alternate), so a busy
machine hurts both sides alike. The table shows the store's rate, the baseline's and their ratio;
the store's syncs are the fdatasyncs it made. No assertions: the figures are for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_broker.store import GetStatus, MessageStore, MessageToStore, StoreConfig  # noqa: E402
from wire.message import StoredMessage  # noqa: E402
from wire.store import scan_commitlog  # noqa: E402

TOPIC = "BenchTopic"
QUEUES = 8
PULL_BATCH = 32


@dataclass
class Run:
    """One store run: its rates and the records it wrote, in CommitLog order."""

    puts: float
    syncs: int
    pulls: float | None
    #: the same pulls through get_message_views (the view path)
    views: float | None
    records: list[tuple[int, int, bytes]]  # (queue id, queue offset, record bytes)


def _message(w: int, i: int, body: bytes) -> MessageToStore:
    parsed = {"UNIQ_KEY": f"C0A80001{w:08X}{i:016X}", "KEYS": f"order-{w}-{i}", "TAGS": "TagA",
              "WAIT": "true", "CLUSTER": "DefaultCluster"}
    text = "\x02".join(f"{k}\x01{v}" for k, v in parsed.items() if k != "WAIT")
    return MessageToStore(TOPIC, w % QUEUES, body, 1_795_000_000_000, ("127.0.0.1", 50000 + w),
                          properties=text, parsed_properties=parsed, wait_store_msg_ok=True)


async def _store_run(root: Path, mode: str, n: int, body: bytes, conc: int, index: bool,
                     pull: bool) -> Run:
    cfg = StoreConfig.for_directory(root, mapped_file_size_commitlog=256 << 20, flush_disk_type=mode,
                                    max_hash_slot_num=500_000, max_index_num=2_000_000,
                                    message_index_enable=index)
    async with MessageStore(cfg) as s:
        async def producer(w: int) -> None:
            for i in range(n // conc):
                r = await s.put_message(_message(w, i, body))
                assert r.ok, r
        t = time.perf_counter()
        await asyncio.gather(*(producer(w) for w in range(conc)))
        puts = (n // conc * conc) / (time.perf_counter() - t)
        syncs = s.flush_count
        pulls = views = None
        if pull:
            count = 0
            t = time.perf_counter()
            for q in range(QUEUES):
                offset = 0
                while True:
                    got = s.get_messages("bench", TOPIC, q, offset, PULL_BATCH)
                    if got.status is not GetStatus.FOUND:
                        break
                    _ = got.body
                    count += got.message_count
                    offset = got.next_begin_offset
            pulls = count / (time.perf_counter() - t)
            count = 0
            t = time.perf_counter()
            for q in range(QUEUES):
                offset = 0
                while (found := s.get_message_views(TOPIC, q, offset, PULL_BATCH)) is not None:
                    count += found.count
                    offset = found.next_begin_offset
            views = count / (time.perf_counter() - t)
    return Run(puts, syncs, pulls, views, _records(cfg.commitlog_dir))


def _records(commitlog_dir: Path) -> list[tuple[int, int, bytes]]:
    out = []
    for p in sorted(commitlog_dir.iterdir()):
        data = p.read_bytes()
        start = int(p.name)
        for off, item in scan_commitlog(data, start):
            if isinstance(item, StoredMessage):
                at = off - start
                out.append((item.queue_id, item.queue_offset, data[at:at + item.total_size]))
    return out


def _plain_puts(path: Path, records: list[tuple[int, int, bytes]], sync_every: int | None) -> float:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t = time.perf_counter()
        for i, (_, _, rec) in enumerate(records, 1):
            os.write(fd, rec)
            if sync_every and i % sync_every == 0:
                os.fdatasync(fd)
        if sync_every:
            os.fdatasync(fd)
        return len(records) / (time.perf_counter() - t)
    finally:
        os.close(fd)


def _plain_pulls(path: Path, records: list[tuple[int, int, bytes]]) -> float:
    """Read the records of ``path`` (written by :func:`_plain_puts`) queue by queue, 32 a time."""
    by_queue: dict[int, list[tuple[int, int]]] = {}
    pos = 0
    for q, _, rec in records:
        by_queue.setdefault(q, []).append((pos, len(rec)))
        pos += len(rec)
    fd = os.open(path, os.O_RDONLY)
    try:
        t = time.perf_counter()
        for units in by_queue.values():
            for k in range(0, len(units), PULL_BATCH):
                _ = b"".join([os.pread(fd, size, at) for at, size in units[k:k + PULL_BATCH]])
        return len(records) / (time.perf_counter() - t)
    finally:
        os.close(fd)


def _row(name: str, unit: str, rate: float, base: float, syncs: str = "") -> str:
    return f"{name:<30}{rate:>12,.0f} {unit:<7}{syncs:>7}{base:>14,.0f}{rate / base:>8.3f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=20000, help="puts per case (SYNC_FLUSH x1: a tenth)")
    ap.add_argument("--body", type=int, default=1024)
    ap.add_argument("--repeat", type=int, default=3, help="runs per case; the median is shown")
    ap.add_argument("--dir", default=None, help="where to put the stores (default: a temp dir)")
    args = ap.parse_args()
    body = bytes(i % 251 for i in range(args.body))
    base = Path(tempfile.mkdtemp(prefix="bench-store-", dir=args.dir))
    print(f"{args.messages} puts of {args.body}-byte bodies per case, median of {args.repeat} runs, "
          f"in {base}")
    print(f"{'case':<30}{'store':>12} {'':<7}{'syncs':>7}{'baseline':>14}{'ratio':>8}")
    cases = [("ASYNC_FLUSH", 1, True), ("ASYNC_FLUSH", 1, False), ("ASYNC_FLUSH", 64, True),
             ("SYNC_FLUSH", 1, True), ("SYNC_FLUSH", 16, True), ("SYNC_FLUSH", 64, True)]
    try:
        for k, (mode, conc, index) in enumerate(cases):
            n = args.messages if mode == "ASYNC_FLUSH" or conc > 1 else max(1, args.messages // 10)
            sync_every = conc if mode == "SYNC_FLUSH" else None
            pull = mode == "ASYNC_FLUSH"
            puts, plain_puts, pulls, views, plain_pulls, syncs = [], [], [], [], [], []
            for rep in range(args.repeat):
                root = base / f"case{k}.{rep}"
                run = asyncio.run(_store_run(root, mode, n, body, conc, index, pull))
                plain = base / f"plain{k}.{rep}"
                plain_puts.append(_plain_puts(plain, run.records, sync_every))
                puts.append(run.puts)
                syncs.append(run.syncs)
                if run.pulls is not None and run.views is not None:
                    pulls.append(run.pulls)
                    views.append(run.views)
                    plain_pulls.append(_plain_pulls(plain, run.records))
                shutil.rmtree(root, ignore_errors=True)
                plain.unlink()
            name = f"{mode} x{conc}{'' if index else ' no index'}"
            print(_row(f"put  {name}", "puts/s", statistics.median(puts), statistics.median(plain_puts),
                       str(int(statistics.median(syncs)))), flush=True)
            if pulls:
                print(_row(f"pull {name}", "msgs/s", statistics.median(pulls),
                           statistics.median(plain_pulls)), flush=True)
                print(_row(f"pull {name} views", "msgs/s", statistics.median(views),
                           statistics.median(plain_pulls)), flush=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
