# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Inputs Spark reads through its Hadoop file systems, not the executors' own file I/O.

``viewfs://`` stands in for ``hdfs://`` and ``s3a://``: a Hadoop file system in the jars every
Spark installation has, whose URLs Python cannot open, mounted here on a temporary directory. The
job lists it with Hadoop's FileSystem on the driver and reads it with ``binaryFiles``, through
the same code as any other scheme; what it decodes equals ``mqctl pcap decode`` of the same files.
"""

from __future__ import annotations

import gzip
import os
import shutil
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.analysis.test_equality import _command_view, _pick, pcap_decode
from tests.conftest import FIXTURES

pytestmark = pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")


def _mount(spark: Any, directory: Path) -> str:
    """A viewfs mount table whose /caps is ``directory``; returns the URL of /caps."""
    name = f"mq{uuid.uuid4().hex[:8]}"
    spark.sparkContext._jsc.hadoopConfiguration().set(f"fs.viewfs.mounttable.{name}.link./caps",
                                                      directory.resolve().as_uri())
    return f"viewfs://{name}/caps"


def test_captures_read_through_a_hadoop_file_system(spark: Any, tmp_path: Path) -> None:
    from analysis.job import run_job

    src = tmp_path / "src"
    src.mkdir()
    plain = src / "peers-cpp-produce-consume.pcap"
    shutil.copy(FIXTURES / "peers" / plain.name, plain)
    zipped = src / "mqctl-admin-commands.pcap.gz"
    zipped.write_bytes(gzip.compress((FIXTURES / "peers" / "mqctl-admin-commands.pcap").read_bytes()))
    (src / "notes.txt").write_text("not a capture")
    url = _mount(spark, src)

    out = tmp_path / "out"
    result = run_job(spark, [url], out, partitions=2)
    names = {c["path"]: c for c in result.captures}
    assert set(names) == {f"{url}/{plain.name}", f"{url}/{zipped.name}"}
    assert {c["format"] for c in result.captures} == {"remote"}

    rows = spark.read.parquet(str(out / "commands")).orderBy("capture", "emit_record", "emit_index").collect()
    for local, remote in ((plain, f"{url}/{plain.name}"),
                          (FIXTURES / "peers" / "mqctl-admin-commands.pcap", f"{url}/{zipped.name}")):
        decoded = pcap_decode(local)
        by_number = {r["rocketmq.row"]: r for r in decoded}
        want = [_command_view(r, by_number) for r in decoded if r["rocketmq.kind"] == "command"]
        got = [r.asDict(recursive=True) for r in rows if r["capture"] == remote]
        assert want and len(got) == len(want), remote
        assert [_pick(g, w) for g, w in zip(got, want, strict=True)] == want, remote


def test_a_remote_file_too_big_to_read_whole_is_refused(spark: Any, tmp_path: Path) -> None:
    from analysis.job import AnalysisError, run_job

    src = tmp_path / "src"
    src.mkdir()
    big = src / "big.pcap"
    with open(big, "wb") as f:
        f.truncate(2 * 1024**3 + 1)  # sparse: no disk used
    url = _mount(spark, src)
    with pytest.raises(AnalysisError, match="below 2 GiB"):
        run_job(spark, [f"{url}/big.pcap"], tmp_path / "out")
    assert not (tmp_path / "out" / "commands").exists()


def test_a_scheme_spark_cannot_read_says_what_is_missing(spark: Any, tmp_path: Path) -> None:
    from analysis.job import AnalysisError, run_job

    with pytest.raises(AnalysisError, match=r"no file system for this scheme.*hadoop-aws"):
        run_job(spark, ["s3a://some-bucket/captures/"], tmp_path / "out")


def test_missing_remote_paths_are_one_line(spark: Any, tmp_path: Path) -> None:
    from analysis.job import AnalysisError, run_job

    url = _mount(spark, tmp_path)
    with pytest.raises(AnalysisError, match="no such file or directory"):
        run_job(spark, [f"{url}/nope.pcap"], tmp_path / "out")
    with pytest.raises(AnalysisError, match="matches no file"):
        run_job(spark, [f"{url}/*.pcapng"], tmp_path / "out")
    os.makedirs(tmp_path / "empty")
    with pytest.raises(AnalysisError, match="no capture files"):
        run_job(spark, [f"{url}/empty"], tmp_path / "out2")
