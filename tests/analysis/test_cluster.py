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


def test_the_job_runs_on_a_standalone_cluster(standalone: str, tmp_path: Path) -> None:
    capture = FIXTURES / "peers" / "peers-cpp-produce-consume.pcap"
    out = tmp_path / "out"
    code = f"""
import json, sys
from pathlib import Path
from analysis import analyze
from analysis.session import build_session, default_conf
spark = build_session(default_conf({standalone!r}, driver_memory="512m", shuffle_partitions=2,
                                   extra={{"spark.cores.max": "2", "spark.executor.cores": "2"}}))
try:
    r = analyze([{str(capture)!r}], Path({str(out)!r}), spark=spark, split_bytes=4096, partitions=2)
    execs = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
    print(json.dumps({{"master": r["master"], "rows": r["rows"], "splits": r["splits"], "executors": execs}}))
finally:
    spark.stop()
"""
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, cwd=ROOT,
                         env=dict(os.environ, PYSPARK_PYTHON=sys.executable))
    if res.returncode != 0:
        stderr = "\n".join(f.read_text()[-1500:] for f in (tmp_path.parent).rglob("stderr"))
        stderr += "\n".join(f.read_text()[-2500:] for f in (tmp_path.parent).rglob("worker.log"))
        raise AssertionError(res.stderr[:2500] + "\n--- executors:\n" + stderr)
    import json

    got = json.loads(res.stdout.strip().splitlines()[-1])
    assert got["master"] == standalone
    assert got["executors"] >= 2  # the driver and the worker's executor
    assert got["splits"] > 1 and got["rows"]["commands"] > 0 and got["rows"]["exchanges"] > 0
    assert (out / "report.html").is_file()
