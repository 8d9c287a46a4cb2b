# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl analyze`` throughput: Spark at local[2] against local[1] and against ``mqctl pcap stats``.

Usage::

    .venv/bin/python benchmarks/bench_analysis.py [--size-mb 500] [--files 8] [--growth 100,1000]
    .venv/bin/python benchmarks/bench_analysis.py --size-mb 100 --growth ""     # a short run

It synthesises captures with ``bench_pcap``'s generator (the same traffic: SEND_MESSAGE_V2 with
1 KiB bodies, pulls of 40 KB, route queries and heartbeats over many connections) in two layouts
of the same total size: (a) ``--files`` files and (b) one file. Then, in the same run, it times

* the job (``analysis.job.run_job``: splits, shuffle by flow, decoding, Parquet tables) at
  ``local[2]`` and at ``local[1]``, on both layouts, each in a fresh process (one SparkContext per
  process), after the session has started (start-up is printed apart);
* ``mqctl pcap stats`` on the one file, in one process: the sequential baseline;

and prints MB/s, MB/s per core and the ratios; with ``--growth``, the one-file job at local[2] on
captures of each size (MB), and the time per MB, which is flat when the time grows linearly.
No assertions: figures are for reading, and they move with the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

from bench_pcap import synthesise  # noqa: E402

_JOB = """
import json, sys, time
from pathlib import Path
from analysis.session import build_session, default_conf
from analysis.job import run_job
t0 = time.monotonic()
spark = build_session(default_conf(sys.argv[1], driver_memory="2g", shuffle_partitions=int(sys.argv[2])))
spark.sparkContext.parallelize([1], 1).count()
started = time.monotonic() - t0
t = time.monotonic()
r = run_job(spark, sys.argv[4:], Path(sys.argv[3]), partitions=int(sys.argv[2]))
print(json.dumps({"seconds": time.monotonic() - t, "startup": started, "rows": r.counts, "splits": r.splits}))
spark.stop()
"""


def _job(master: str, files: list[Path], out: Path, partitions: int) -> dict[str, float]:
    res = subprocess.run([sys.executable, "-c", _JOB, master, str(partitions), str(out), *map(str, files)],
                         capture_output=True, text=True, cwd=ROOT, check=False)
    if res.returncode != 0:
        raise SystemExit(f"the job failed at {master}:\n{res.stderr[-3000:]}")
    got: dict[str, float] = json.loads(res.stdout.strip().splitlines()[-1])
    return got


def _stats(path: Path) -> float:
    t = time.monotonic()
    subprocess.run([str(ROOT / ".venv" / "bin" / "mqctl"), "-o", "json", "pcap", "stats", str(path)],
                   stdout=subprocess.DEVNULL, check=True)
    return time.monotonic() - t


def _make(dirpath: Path, size_mb: float, files: int) -> tuple[list[Path], Path]:
    many = []
    for i in range(files):
        p = dirpath / f"part-{i:02d}.pcap"
        synthesise(p, size_mb / files, 64, seed=10 + i)
        many.append(p)
    one = dirpath / "one.pcap"
    synthesise(one, size_mb, 64, seed=1)
    return many, one


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--size-mb", type=float, default=500.0, help="capture size per layout (default 500)")
    ap.add_argument("--files", type=int, default=8, help="files of the many-files layout (default 8)")
    ap.add_argument("--growth", default="100,1000", help="sizes (MB) for the growth series; '' skips it")
    ap.add_argument("--partitions", type=int, default=8, help="shuffle partitions (default 8)")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-analysis-") as tmp:
        d = Path(tmp)
        many, one = _make(d, args.size_mb, args.files)
        mb_many = sum(p.stat().st_size for p in many) / 1e6
        mb_one = one.stat().st_size / 1e6
        print(f"captures: {len(many)} files, {mb_many:.0f} MB; one file, {mb_one:.0f} MB "
              f"(cores: {os.cpu_count()})")
        base = _stats(one)
        print(f"mqctl pcap stats (one process), one file: {base:.1f} s = {mb_one / base:.1f} MB/s")
        for name, files, mb in (("many files", many, mb_many), ("one file", [one], mb_one)):
            r1 = _job("local[1]", files, d / "out1", args.partitions)
            r2 = _job("local[2]", files, d / "out2", args.partitions)
            print(f"{name}: local[1] {r1['seconds']:.1f} s = {mb / r1['seconds']:.1f} MB/s per core; "
                  f"local[2] {r2['seconds']:.1f} s = {mb / r2['seconds']:.1f} MB/s "
                  f"({mb / r2['seconds'] / 2:.1f} MB/s per core); local[2]/local[1] "
                  f"{r1['seconds'] / r2['seconds']:.2f}x; local[2] vs pcap stats "
                  f"{base * mb / mb_one / r2['seconds']:.2f}x; {r2['splits']} splits; session start "
                  f"{r2['startup']:.1f} s; rows {r2['rows']}")
        for size in [float(s) for s in args.growth.split(",") if s.strip()]:
            p = d / f"growth-{int(size)}.pcap"
            synthesise(p, size, 64, seed=3)
            mb = p.stat().st_size / 1e6
            r = _job("local[2]", [p], d / "outg", args.partitions)
            print(f"growth: {mb:.0f} MB in {r['seconds']:.1f} s = {r['seconds'] / mb * 1000:.1f} ms per MB")
            p.unlink()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
