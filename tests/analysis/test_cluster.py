# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The cluster path: the job on a real standalone Spark master and worker, started from the pyspark
installation's jars on 127.0.0.1 with free ports, and stopped afterwards. Runs in its own process
(one SparkContext per process), so it does not disturb the test session's local SparkSession."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait_port(port: int, proc: subprocess.Popen[bytes], log: Path, timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"exited with {proc.returncode}: {log.read_text()[-2000:]}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.5)
    raise AssertionError(f"port {port} not listening after {timeout} s: {log.read_text()[-2000:]}")


@pytest.fixture
def standalone(tmp_path: Path) -> Iterator[str]:
    pyspark = pytest.importorskip("pyspark", reason="pyspark is not installed (scripts/bootstrap installs it)")
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is missing (scripts/bootstrap installs a JDK as root)")
    jars = Path(pyspark.__file__).parent / "jars"
    cp = f"{jars}/*"
    env = dict(os.environ, SPARK_HOME=str(Path(pyspark.__file__).parent), SPARK_LOCAL_IP="127.0.0.1",
               SPARK_WORKER_DIR=str(tmp_path / "work"), PYSPARK_PYTHON=sys.executable,
               # the launcher of a pip-installed Spark cannot guess its Scala version from build dirs
               SPARK_SCALA_VERSION="2.13")
    mport, mweb, wport, wweb = _free_port(), _free_port(), _free_port(), _free_port()
    procs: list[subprocess.Popen[bytes]] = []
    logs = [tmp_path / "master.log", tmp_path / "worker.log"]
    try:
        with open(logs[0], "wb") as out:
            procs.append(subprocess.Popen(
                [java, "-Xmx256m", "-cp", cp, "org.apache.spark.deploy.master.Master", "--host", "127.0.0.1",
                 "--port", str(mport), "--webui-port", str(mweb)], stdout=out, stderr=subprocess.STDOUT, env=env))
        _wait_port(mport, procs[0], logs[0])
        master = f"spark://127.0.0.1:{mport}"
        with open(logs[1], "wb") as out:
            procs.append(subprocess.Popen(
                [java, "-Xmx256m", "-cp", cp, "org.apache.spark.deploy.worker.Worker", "--host", "127.0.0.1",
                 "--port", str(wport), "--webui-port", str(wweb), "--cores", "2", "--memory", "1g", master],
                stdout=out, stderr=subprocess.STDOUT, env=env))
        _wait_port(wport, procs[1], logs[1])
        deadline = time.monotonic() + 60
        while b"Registering worker" not in logs[0].read_bytes():
            assert time.monotonic() < deadline, logs[0].read_text()[-2000:]
            time.sleep(0.5)
        yield master
    finally:
        for p in reversed(procs):
            p.terminate()
        for p in procs:
            try:
                p.wait(timeout=30)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()


def test_the_job_runs_on_a_standalone_cluster(standalone: str, tmp_path: Path, soak: int) -> None:
    """The job through the master and the worker's executor: a real capture and a synthesised one of
    ``2 * soak`` MB (cut into many splits, so the index shuffle crosses JVMs), ``soak`` times over
    (``pytest --soak N``; CI runs it once); every run finds every frame the generator wrote."""
    import json

    sys.path.insert(0, str(ROOT / "benchmarks"))
    from bench_pcap import synthesise

    real = FIXTURES / "peers" / "peers-cpp-produce-consume.pcap"
    synth = tmp_path / "synth.pcap"
    _records, frames = synthesise(synth, 2.0 * soak, 16, seed=soak)
    out = tmp_path / "out"
    code = f"""
import json, sys
from pathlib import Path
from analysis import analyze
from analysis.session import build_session, default_conf
spark = build_session(default_conf({standalone!r}, driver_memory="512m", shuffle_partitions=2,
                                   extra={{"spark.cores.max": "2", "spark.executor.cores": "2"}}))
try:
    for run in range({soak}):
        r = analyze([{str(real)!r}, {str(synth)!r}], Path({str(out)!r}), spark=spark, split_bytes=256 * 1024,
                    partitions=3)
        execs = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
        per = {{c: n for c, n in spark.read.parquet(r["out"] + "/commands").groupBy("capture").count().collect()}}
        print(json.dumps({{"master": r["master"], "rows": r["rows"], "splits": r["splits"], "executors": execs,
                          "per_capture": per, "report": r["report"]}}), flush=True)
finally:
    spark.stop()
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600 * soak,
                         cwd=ROOT, env=dict(os.environ, PYSPARK_PYTHON=sys.executable))
    if res.returncode != 0:
        stderr = "\n".join(f.read_text()[-1500:] for f in (tmp_path.parent).rglob("stderr"))
        stderr += "\n".join(f.read_text()[-2500:] for f in (tmp_path.parent).rglob("worker.log"))
        raise AssertionError(res.stderr[:2500] + "\n--- executors:\n" + stderr)
    runs = [json.loads(line) for line in res.stdout.splitlines() if line.startswith("{")]
    assert len(runs) == soak
    for got in runs:
        assert got["master"] == standalone
        assert got["executors"] >= 2  # the driver and the worker's executor
        assert got["splits"] > 4 and got["rows"]["exchanges"] > 0
        assert got["per_capture"][str(synth)] == frames
        assert got["per_capture"][str(real)] > 0
        assert Path(got["report"]).is_file()
