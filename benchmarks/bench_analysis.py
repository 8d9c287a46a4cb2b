# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl analyze`` throughput: Spark at local[2] against local[1] and against ``mqctl pcap stats``.

Usage::

    .venv/bin/python benchmarks/bench_analysis.py                       # 500 MB, 8 files, 2 runs, growth
    .venv/bin/python benchmarks/bench_analysis.py --size-mb 100 --runs 1 --growth ""   # a short run
    .venv/bin/python benchmarks/bench_analysis.py --executor 30 --runs 3   # executor CPU per stage, no Spark
    .venv/bin/python benchmarks/bench_analysis.py --remote 34 --runs 3     # local path against viewfs://

It synthesises captures with ``bench_pcap``'s generator (the same traffic: SEND_MESSAGE_V2 with
1 KiB bodies, pulls of 40 KB, route queries and heartbeats over 64 connections) in two layouts of
the same total size: (a) ``--files`` files and (b) one file. Then, in the same run, it times

* the job (``analysis.job.run_job``: splits, index shuffle by flow, decoding, Parquet tables) at
  ``local[2]`` and at ``local[1]``, on both layouts, each in a fresh process (one SparkContext per
  process), after the session has started (start-up is printed apart);
* ``mqctl pcap stats`` on the one file, in one process: the sequential baseline;

``--runs`` times each, local[1] and local[2] taking turns, and prints the medians. Besides wall
time it reads the CPU time of the job's whole process tree (the driver, its JVM, the Python
workers) from /proc: on a machine that others load, wall time and the local[2]/local[1] ratio
move with their load, while CPU time per MB does not; the load average is printed beside every
figure. With ``--growth``, the one-file job at local[2] on captures of each size (MB) and the
time per MB (flat when the time grows linearly). With ``--remote MB``, one session at local[2]
runs the job on a capture of MB (classic pcap, and the same records as pcapng) in 8 MiB ranges
as a local path and through ``viewfs://`` (a Hadoop file system that Python cannot open, as
``hdfs://`` and ``s3a://``), taking turns, and prints the CPU per MB of each. No assertions:
figures are for reading.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_pcap import synthesise  # noqa: E402

_JOB = """
import json, os, sys, time
from pathlib import Path
from analysis.session import build_session, default_conf
from analysis.job import run_job

def tree_cpu():
    parent = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            try:
                st = open(f"/proc/{p}/stat").read()
            except OSError:
                continue
            f = st[st.rindex(")") + 2:].split()
            parent[int(p)] = (int(f[1]), sum(int(x) for x in f[11:15]))
    total, todo = 0, [os.getpid()]
    while todo:
        me = todo.pop()
        total += parent.get(me, (0, 0))[1]
        todo.extend(p for p, (pp, _c) in parent.items() if pp == me)
    return total / os.sysconf("SC_CLK_TCK")

t0 = time.monotonic()
spark = build_session(default_conf(sys.argv[1], driver_memory="2g", shuffle_partitions=int(sys.argv[2])))
spark.sparkContext.parallelize([1], 1).count()
started = time.monotonic() - t0
cpu = tree_cpu()
t = time.monotonic()
r = run_job(spark, sys.argv[4:], Path(sys.argv[3]), partitions=int(sys.argv[2]))
seconds = time.monotonic() - t
print(json.dumps({"seconds": seconds, "cpu": tree_cpu() - cpu, "startup": started, "rows": r.counts,
                  "splits": r.splits, "units": r.units, "stages": r.stages}))
spark.stop()
"""


_REMOTE = _JOB.split("t0 = time.monotonic()")[0] + """
import uuid
spark = build_session(default_conf("local[2]", driver_memory="2g", shuffle_partitions=4))
spark.sparkContext.parallelize([1], 1).count()
runs, out = int(sys.argv[1]), Path(sys.argv[2])
for path in sys.argv[3:]:
    name = f"mq{uuid.uuid4().hex[:8]}"
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{name}.link./caps",
                                                      Path(path).parent.resolve().as_uri())
    for _ in range(runs):
        for label, item in (("local", path), ("viewfs", f"viewfs://{name}/caps/{Path(path).name}")):
            load = os.getloadavg()[0]
            cpu, t = tree_cpu(), time.monotonic()
            r = run_job(spark, [item], out, split_bytes=8 << 20, partitions=4)
            print(json.dumps({"file": Path(path).name, "how": label, "seconds": time.monotonic() - t,
                              "cpu": tree_cpu() - cpu, "load": (load + os.getloadavg()[0]) / 2,
                              "splits": r.splits, "rows": r.counts["commands"]}), flush=True)
spark.stop()
"""


def _pcapng_of(src: Path, dst: Path) -> None:
    """The records of a classic pcap as a pcapng file (one interface, enhanced packet blocks)."""
    import struct

    from wire.capture import read_records

    with open(dst, "wb") as out:
        out.write(struct.pack("<IIIHHqI", 0x0A0D0D0A, 28, 0x1A2B3C4D, 1, 0, -1, 28))
        out.write(struct.pack("<IIHHII", 1, 20, 1, 0, 262144, 20))
        for _number, ts, _link, data in read_records(src):
            us = round(ts * 1e6)
            pad = -len(data) % 4
            n = 32 + len(data) + pad
            out.write(struct.pack("<IIIIIII", 6, n, 0, us >> 32, us & 0xFFFFFFFF, len(data), len(data))
                      + data + b"\0" * pad + struct.pack("<I", n))


def remote_cpu(d: Path, size_mb: float, runs: int) -> None:
    """``--remote``: CPU per MB of the job on one file as a local path and through viewfs://."""
    one = d / "one.pcap"
    synthesise(one, size_mb, 64, seed=1)
    ng = d / "one.pcapng"
    _pcapng_of(one, ng)
    res = subprocess.run([sys.executable, "-c", _REMOTE, str(runs), str(d / "out"), str(one), str(ng)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    if res.returncode != 0:
        raise SystemExit(f"the job failed:\n{res.stderr[-3000:]}")
    got = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    for r in got:
        mb = (d / r["file"]).stat().st_size / 1e6
        r["ms"] = r["cpu"] / mb * 1000
        print(f"  {r['file']} ({mb:.0f} MB) {r['how']}: {r['seconds']:.1f} s, {r['ms']:.1f} CPU-ms/MB, "
              f"{r['splits']} splits, {r['rows']} commands (load {r['load']:.1f})", flush=True)
    for f in (one.name, ng.name):
        least = {how: min(r["ms"] for r in got if r["file"] == f and r["how"] == how)
                 for how in ("local", "viewfs")}
        print(f"{f}: CPU per MB, least of {runs}: local path {least['local']:.1f} ms, viewfs "
              f"{least['viewfs']:.1f} ms (viewfs / local {least['viewfs'] / least['local']:.2f}x; load "
              f"{_load():.1f})", flush=True)


def _cpu() -> float:
    t = os.times()
    return t.user + t.system


def executor_cpu(path: Path, split_bytes: int, partitions: int) -> dict[str, float]:
    """CPU seconds per MB of the work the executors do, run here in one process without Spark (so
    without its JVM and scheduling): for the file cut into splits, the scan of the record
    boundaries, the index of each split by flow, the decoding of each flow partition and the
    Parquet tables; and the same file decoded whole (the path of a file no bigger than a split).
    Each stage is timed by this process's own CPU clock, which others' load moves much less than
    wall time."""
    from analysis import tasks
    from wire.capture import PortRoles
    from wire.capture.splits import file_layout, plan_ranges, resolve

    mb = path.stat().st_size / 1e6
    lay = file_layout(str(path))
    out: dict[str, float] = {}
    with tempfile.TemporaryDirectory(prefix="bench-executor-") as tmp:
        raw, target = os.path.join(tmp, "raw"), os.path.join(tmp, "out")
        c = _cpu()
        scans = []
        volumes: dict[tuple[int, int], int] = {}
        for i, (a, b) in enumerate(plan_ranges(lay, split_bytes)):
            scans.append(tasks.scan_task((lay, i, a, b)))
            for key, n in tasks.flow_volumes(lay, scans[-1], 0).items():
                volumes[0, key] = volumes.get((0, key), 0) + n
        splits, _ = resolve(lay, scans)
        out["scan"] = _cpu() - c
        c = _cpu()
        assign = tasks.deal(volumes, partitions).get(0, {})
        per: dict[int, list[Any]] = {}
        for sp in splits:
            for p, item in tasks.index_split(0, sp, lay, partitions, assign):
                per.setdefault(p, []).append((p, item))
        out["index"] = _cpu() - c
        c = _cpu()
        names = [str(path)]
        reports = [tasks.decode_unit(p, tasks.indexed_records(per[p], names), names, PortRoles(), raw)
                   for p in sorted(per)]
        out["decode"] = _cpu() - c
        c = _cpu()
        for r in reports:
            tasks.finish_unit(r.unit, raw, target, {}, r.unit)
        out["tables"] = _cpu() - c
        shutil.rmtree(target)
        c = _cpu()
        tasks.decode_whole(0, [tasks.WholeFile(0, str(path))], [str(path)], PortRoles(), raw, target)
        out["whole file"] = _cpu() - c
    return {k: v / mb for k, v in out.items()}


def _load() -> float:
    return os.getloadavg()[0]


def _job(master: str, files: list[Path], out: Path, partitions: int) -> dict[str, Any]:
    shutil.rmtree(out, ignore_errors=True)
    load = _load()
    res = subprocess.run([sys.executable, "-c", _JOB, master, str(partitions), str(out), *map(str, files)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    if res.returncode != 0:
        raise SystemExit(f"the job failed at {master}:\n{res.stderr[-3000:]}")
    got: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    got["load"] = (load + _load()) / 2
    shutil.rmtree(out, ignore_errors=True)
    return got


def _stats(path: Path) -> dict[str, float]:
    load = _load()
    before = os.times()
    t = time.monotonic()
    subprocess.run([str(ROOT / ".venv" / "bin" / "mqctl"), "-o", "json", "pcap", "stats", str(path)],
                   stdout=subprocess.DEVNULL, check=True)
    seconds = time.monotonic() - t
    after = os.times()
    cpu = (after.children_user - before.children_user) + (after.children_system - before.children_system)
    return {"seconds": seconds, "cpu": cpu, "load": (load + _load()) / 2}


def _make(dirpath: Path, size_mb: float, files: int) -> tuple[list[Path], Path]:
    many = []
    for i in range(files):
        p = dirpath / f"part-{i:02d}.pcap"
        synthesise(p, size_mb / files, 64, seed=10 + i)
        many.append(p)
    one = dirpath / "one.pcap"
    synthesise(one, size_mb, 64, seed=1)
    return many, one


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return float(statistics.median(r[key] for r in runs))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=500.0, help="capture size per layout (default 500)")
    ap.add_argument("--files", type=int, default=8, help="files of the many-files layout (default 8)")
    ap.add_argument("--runs", type=int, default=2, help="timings per configuration; medians (default 2)")
    ap.add_argument("--growth", default="100,250,500,1000",
                    help="sizes (MB) for the growth series at local[2]; '' skips it")
    ap.add_argument("--partitions", type=int, default=8, help="flow partitions (default 8)")
    ap.add_argument("--dir", type=Path, help="where to write the captures (default: a temporary directory)")
    ap.add_argument("--executor", type=float, metavar="MB", default=0.0,
                    help="only the executors' CPU per MB, per stage, in this process on a capture of MB "
                    "(no Spark)")
    ap.add_argument("--remote", type=float, metavar="MB", default=0.0,
                    help="only the CPU per MB of a capture of MB read as a local path and through viewfs://")
    args = ap.parse_args()
    if args.remote:
        with tempfile.TemporaryDirectory(prefix="bench-analysis-", dir=args.dir) as tmp:
            remote_cpu(Path(tmp), args.remote, max(1, args.runs))
        return 0
    if args.executor:
        with tempfile.TemporaryDirectory(prefix="bench-analysis-", dir=args.dir) as tmp:
            p = Path(tmp) / "one.pcap"
            synthesise(p, args.executor, 64, seed=1)
            runs = [executor_cpu(p, 8 << 20, 4) for _ in range(max(1, args.runs))]
            best = {k: min(r[k] for r in runs) for k in runs[0]}
            split = sum(v for k, v in best.items() if k != "whole file")
            whole = best["whole file"]
            print(f"executor CPU per MB (least of {len(runs)} runs; {p.stat().st_size / 1e6:.0f} MB, 8 MiB "
                  f"splits, 4 flow partitions; load {_load():.1f}): "
                  + ", ".join(f"{k} {v * 1000:.1f} ms" for k, v in best.items())
                  + f"; cut into splits {split * 1000:.1f} ms = {1 / split:.1f} MB per CPU-second, whole "
                  f"{whole * 1000:.1f} ms = {1 / whole:.1f} MB per CPU-second", flush=True)
        return 0
    with tempfile.TemporaryDirectory(prefix="bench-analysis-", dir=args.dir) as tmp:
        d = Path(tmp)
        many, one = _make(d, args.size_mb, args.files)
        mb_many = sum(p.stat().st_size for p in many) / 1e6
        mb_one = one.stat().st_size / 1e6
        print(f"captures: {len(many)} files, {mb_many:.0f} MB; one file, {mb_one:.0f} MB "
              f"(cores: {os.cpu_count()}; load average now {_load():.1f})", flush=True)
        base = [_stats(one) for _ in range(args.runs)]
        bs, bc = _median(base, "seconds"), _median(base, "cpu")
        print(f"mqctl pcap stats (one process), one file: {bs:.1f} s = {mb_one / bs:.1f} MB/s; "
              f"{bc / mb_one * 1000:.1f} CPU-ms/MB = {mb_one / bc:.1f} MB per CPU-second "
              f"(load {_median(base, 'load'):.1f})", flush=True)
        for name, files, mb in (("many files", many, mb_many), ("one file", [one], mb_one)):
            r1: list[dict[str, Any]] = []
            r2: list[dict[str, Any]] = []
            for _ in range(args.runs):
                r1.append(_job("local[1]", files, d / "out", args.partitions))
                r2.append(_job("local[2]", files, d / "out", args.partitions))
                print(f"  {name} run: local[1] {r1[-1]['seconds']:.1f} s, "
                      f"{r1[-1]['cpu'] / mb * 1000:.1f} CPU-ms/MB (load {r1[-1]['load']:.1f}); "
                      f"local[2] {r2[-1]['seconds']:.1f} s, "
                      f"{r2[-1]['cpu'] / mb * 1000:.1f} CPU-ms/MB (load {r2[-1]['load']:.1f}); "
                      f"ratio {r1[-1]['seconds'] / r2[-1]['seconds']:.2f}x; stages {r2[-1]['stages']}",
                      flush=True)
            s1, s2 = _median(r1, "seconds"), _median(r2, "seconds")
            c1, c2 = _median(r1, "cpu"), _median(r2, "cpu")
            print(f"{name}: local[1] {s1:.1f} s = {mb / s1:.1f} MB/s per core; "
                  f"local[2] {s2:.1f} s = {mb / s2:.1f} MB/s ({mb / s2 / 2:.1f} MB/s per core); "
                  f"local[2]/local[1] {s1 / s2:.2f}x; local[2] vs pcap stats {bs * mb / mb_one / s2:.2f}x; "
                  f"CPU {c1 / mb * 1000:.1f} / {c2 / mb * 1000:.1f} ms per MB at local[1] / local[2] "
                  f"= {mb / c1:.1f} / {mb / c2:.1f} MB per CPU-second; load {_median(r1, 'load'):.1f} / "
                  f"{_median(r2, 'load'):.1f}; {r2[-1]['splits']} splits, {r2[-1]['units']} units; "
                  f"session start {r2[-1]['startup']:.1f} s; rows {r2[-1]['rows']}", flush=True)
        for size in [float(s) for s in args.growth.split(",") if s.strip()]:
            p = d / f"growth-{int(size)}.pcap"
            synthesise(p, size, 64, seed=3)
            mb = p.stat().st_size / 1e6
            r = _job("local[2]", [p], d / "outg", args.partitions)
            print(f"growth: {mb:.0f} MB in {r['seconds']:.1f} s = {r['seconds'] / mb * 1000:.1f} ms per MB; "
                  f"CPU {r['cpu'] / mb * 1000:.1f} ms per MB (load {r['load']:.1f})", flush=True)
            p.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
