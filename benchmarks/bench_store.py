# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Message store throughput: puts/s in ASYNC_FLUSH and SYNC_FLUSH, as ratios to plain ``os.write``.

Usage::

    .venv/bin/python benchmarks/bench_store.py [--messages 20000] [--body 1024] [--dir /tmp]

For each case it starts a :class:`reference_broker.store.MessageStore` in a fresh directory and
puts 1 KiB messages (TAGS, KEYS and a UNIQ_KEY, as a producer sends them) to 8 queues from
``C`` concurrent producers (1 and 64), then, in the same run, writes the very same record bytes
(read back from the store's CommitLog) to a file with ``os.write``: without syncs for ASYNC_FLUSH,
and with one ``fdatasync`` per ``C`` records for SYNC_FLUSH (the group commit the store does). It
also runs the ASYNC case without the index (``messageIndexEnable=false``) to show its share. It
prints puts/s, the syncs the store made and the ratio. No assertions: figures are for reading.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from reference_broker.store import MessageStore, MessageToStore, StoreConfig  # noqa: E402


async def _store_run(root: Path, mode: str, n: int, body: bytes, conc: int,
                     index: bool) -> tuple[float, int, Path]:
    cfg = StoreConfig.for_directory(root, mapped_file_size_commitlog=256 << 20, flush_disk_type=mode,
                                    max_hash_slot_num=500_000, max_index_num=2_000_000,
                                    message_index_enable=index)
    async with MessageStore(cfg) as s:
        async def producer(w: int) -> None:
            for i in range(n // conc):
                props = {"UNIQ_KEY": f"C0A80001{w:08X}{i:016X}", "KEYS": f"order-{w}-{i}", "TAGS": "TagA",
                         "WAIT": "true"}
                r = await s.put_message(MessageToStore("BenchTopic", w % 8, body, 1_795_000_000_000,
                                                       ("127.0.0.1", 50000 + w), properties=props))
                assert r.ok, r
        t = time.perf_counter()
        await asyncio.gather(*(producer(w) for w in range(conc)))
        elapsed = time.perf_counter() - t
        return (n // conc * conc) / elapsed, s.flush_count, cfg.commitlog_dir


def _records(commitlog_dir: Path) -> list[bytes]:
    from wire.message import StoredMessage
    from wire.store import scan_commitlog
    out = []
    for p in sorted(commitlog_dir.iterdir()):
        data = p.read_bytes()
        for off, item in scan_commitlog(data, int(p.name)):
            if isinstance(item, StoredMessage):
                pos = off - int(p.name)
                out.append(data[pos:pos + item.total_size])
    return out


def _plain_write(path: Path, records: list[bytes], sync_every: int | None) -> float:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        t = time.perf_counter()
        for i, rec in enumerate(records, 1):
            os.write(fd, rec)
            if sync_every and i % sync_every == 0:
                os.fdatasync(fd)
        if sync_every:
            os.fdatasync(fd)
        return len(records) / (time.perf_counter() - t)
    finally:
        os.close(fd)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--messages", type=int, default=20000)
    ap.add_argument("--body", type=int, default=1024)
    ap.add_argument("--dir", default=None, help="where to put the stores (default: a temp dir)")
    args = ap.parse_args()
    body = bytes(i % 251 for i in range(args.body))
    base = Path(tempfile.mkdtemp(prefix="bench-store-", dir=args.dir))
    print(f"{args.messages} puts of {args.body}-byte bodies in {base}")
    print(f"{'case':<28}{'puts/s':>10}{'syncs':>8}{'os.write/s':>12}{'ratio':>8}")
    try:
        cases = [("ASYNC_FLUSH", 1, True), ("ASYNC_FLUSH", 1, False), ("ASYNC_FLUSH", 64, True),
                 ("SYNC_FLUSH", 1, True), ("SYNC_FLUSH", 64, True)]
        for k, (mode, conc, index) in enumerate(cases):
            n = args.messages if mode == "ASYNC_FLUSH" or conc > 1 else max(1, args.messages // 10)
            root = base / f"case{k}"
            rate, syncs, cl_dir = asyncio.run(_store_run(root, mode, n, body, conc, index))
            records = _records(cl_dir)
            plain = _plain_write(base / f"plain{k}", records, conc if mode == "SYNC_FLUSH" else None)
            name = f"{mode} x{conc}{'' if index else ' no index'}"
            print(f"{name:<28}{rate:>10.0f}{syncs:>8}{plain:>12.0f}{rate / plain:>8.3f}")
            shutil.rmtree(root, ignore_errors=True)
    finally:
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
