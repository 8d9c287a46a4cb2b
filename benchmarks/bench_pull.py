# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Where a pull's CPU goes on our broker, phase by phase.

Usage::

    .venv/bin/python benchmarks/bench_pull.py [--pulls 20000] [--window 8] [--careful]

An in-process broker stores ``--messages`` 1 KiB messages (the sends of ``bench_broker.py``, 8
queues), then one connection is fed PULL_MESSAGE frames of 32 messages each, ``--window`` frames
a read (as a pipelining consumer sends them). Its transport writes to /dev/null: the broker's own
CPU, with the gather write's system call but without the kernel's copy into a socket. A plain run
gives the CPU per pull; a cProfile run gives the shares of the phases:

* **read**: framing the bytes of each read; **decode**: header decoding;
* **header**: the PULL_MESSAGE header's fields (``parse_pull_header``);
* **checks**: the processor's checks, statistics and answer fields (``process_pull`` without
  the store and the encoding);
* **store**: the store's get: ConsumeQueue units, limits, and the records (views of the mapped
  CommitLog; with ``--careful``, bytes copied out per record by ``Reads.get_messages``, whose
  join the processor makes, under checks);
* **encode**: the answer's head encoded; **write**: the gather write (``_flush``);
* **other**: the loop, the dispatch and everything else.

No assertions: the figures are for reading (see ``bench_broker.py --java`` for rates against Java).
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
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_broker import PULL_BATCH, QUEUES, _Sink, pull_frames, send_frames  # noqa: E402

from reference_broker.runtime import run_async  # noqa: E402


class _NullSocket:
    """What a transport's ``get_extra_info("socket")`` gives: a descriptor, here of /dev/null
    (gather writes cost their system call, not the kernel's copy into a socket)."""

    def __init__(self) -> None:
        self.fd = os.open(os.devnull, os.O_WRONLY)

    def fileno(self) -> int:
        return self.fd

    def close(self) -> None:
        os.close(self.fd)


class _PullSink(_Sink):
    """:class:`bench_broker._Sink` with a descriptor for the connection's gather writes."""

    def __init__(self) -> None:
        super().__init__()
        self.sock = _NullSocket()

    def get_extra_info(self, name: str, default: object = None) -> object:
        if name == "socket":
            return self.sock
        return super().get_extra_info(name, default)

    def get_write_buffer_size(self) -> int:
        return 0


#: phase -> (file suffix, function) whose cumulative time it is
PHASES: dict[str, tuple[tuple[str, str], ...]] = {
    "read": (("wire/_buffer.py", "feed"), ("wire/framing.py", "next_frame")),
    "decode": (("wire/remoting.py", "decode_frame"),),
    "header": (("reference_broker/broker/processors/pull.py", "parse_pull_header"),),
    "checks": (("reference_broker/broker/processors/pull.py", "process_pull"),),
    "store": (("reference_broker/store/read_door.py", "get_messages"),
              ("reference_broker/store/read_door.py", "get_message_views")),
    "encode": (("wire/remoting.py", "encode_command_head"), ("wire/remoting.py", "encode_command"),
               ("reference_broker/broker/processors/pull.py", "found_head")),
    "write": (("wire/aio.py", "_flush"),),
}
#: what each phase contains of the others (their time is taken out of it)
_NESTED = {"checks": ("store", "encode")}


async def _run(root: str, pulls: int, window: int, batch: int, messages: int, profile: bool,
               careful: bool) -> tuple[float, float, dict[str, float]]:
    import cProfile
    import pstats

    from reference_broker.broker import Broker
    from reference_broker.config import BrokerConfig

    cfg = BrokerConfig(overrides={
        "storePathRootDir": root, "brokerName": "bench-a", "namesrvAddr": "",
        "mappedFileSizeCommitLog": str(1 << 30), "autoCreateTopicEnable": "true"})
    sends = send_frames(1024, messages)
    async with Broker(cfg, host="127.0.0.1", port=0) as b:
        if careful:  # every pull through Reads.get_messages (bytes per record, joined)
            b.store.get_message_views = lambda *a, **k: None  # type: ignore[method-assign]
        server = b._server
        assert server is not None
        conn = server._factory()
        sink = _PullSink()
        conn.connection_made(sink)  # type: ignore[arg-type]
        for i in range(0, len(sends), 64):
            conn.data_received(b"".join(sends[i:i + 64]))
            while conn.pending_handlers:
                await asyncio.sleep(0)
        await asyncio.sleep(0.2)  # the dispatcher catches up
        frames = pull_frames(messages // QUEUES)
        chunks = [b"".join(frames[i:i + window]) for i in range(0, len(frames), window)]
        for chunk in chunks[:8]:
            conn.data_received(chunk)
        sink.bytes = 0
        prof = cProfile.Profile() if profile else None
        start = time.process_time()
        if prof is not None:
            prof.enable()
        done = 0
        while done < pulls:
            for chunk in chunks:
                conn.data_received(chunk)
                done += window
                if done >= pulls:
                    break
        if prof is not None:
            prof.disable()
        cpu = time.process_time() - start
        per_pull_bytes = sink.bytes / done
        conn.connection_lost(None)
    if prof is not None and _DUMP:
        pstats.Stats(prof).sort_stats("tottime").print_stats(25)
    phases: dict[str, float] = {}
    if prof is not None:
        stats = pstats.Stats(prof).stats  # type: ignore[attr-defined]
        for name, funcs in PHASES.items():
            phases[name] = sum(v[3] for (file, _, fn), v in stats.items()
                               if any(file.endswith(f) and fn == want for f, want in funcs))
        phases["total"] = sum(v[2] for v in stats.values())
    return cpu * 1e6 / done, per_pull_bytes, phases


def main() -> int:
    from rich.console import Console
    from rich.table import Table

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pulls", type=int, default=20_000)
    ap.add_argument("--window", type=int, default=8, help="pull frames per read")
    ap.add_argument("--messages", type=int, default=16_384, help="messages stored first")
    ap.add_argument("--careful", action="store_true",
                    help="every pull through the careful path (records copied out as bytes and joined)")
    ap.add_argument("--profile-only", action="store_true", help="print the raw cProfile top 25 too")
    ap.add_argument("--dir", default=None)
    args = ap.parse_args()
    global _DUMP
    _DUMP = args.profile_only
    console = Console(width=max(120, Console().width))
    base = Path(tempfile.mkdtemp(prefix="bench-pull-", dir=args.dir))
    try:
        per_pull, _, _ = run_async(_run(str(base / "plain"), args.pulls, args.window, PULL_BATCH,
                                           args.messages, False, args.careful))
        _, _, prof = run_async(_run(str(base / "prof"), args.pulls, args.window, PULL_BATCH,
                                    args.messages, True, args.careful))
    finally:
        shutil.rmtree(base, ignore_errors=True)
    total = prof.pop("total") or 1.0
    own = dict(prof)
    for outer, inner in _NESTED.items():
        own[outer] = prof[outer] - sum(prof[i] for i in inner)
    own["other"] = total - sum(own.values())
    path = "careful path" if args.careful else "views"
    table = Table(title=f"our broker ({path}): CPU per pull of {PULL_BATCH} 1 KiB messages, by phase (us; "
                        f"{args.pulls:,} pulls fed {args.window} frames a read; answers written to "
                        f"{os.devnull})")
    for col in (*PHASES, "other", "total", "per message"):
        table.add_column(col, justify="right")
    table.add_row(*[f"{per_pull * own[name] / total:.1f}" for name in (*PHASES, "other")],
                  f"{per_pull:.1f}", f"{per_pull / PULL_BATCH:.2f}")
    console.print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
