# Licensed under the Apache License, Version 2.0. See LICENSE.
"""One real local SparkSession for the whole test session (``local[2]``, 4 shuffle partitions,
1 GiB, quiet), and the analysis of every capture of fixtures/ and ../shared, run once and shared by
the tests that check its tables. Skips with a reason where pyspark or java is missing."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import CAPTURES, FIXTURES


def _need_spark() -> None:
    pytest.importorskip("pyspark", reason="pyspark is not installed (scripts/bootstrap installs it)")
    if shutil.which("java") is None:
        pytest.skip("java is missing (scripts/bootstrap installs a JDK as root)")


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    _need_spark()
    from analysis.session import build_session, default_conf

    session = build_session(default_conf("local[2]", shuffle_partitions=4, app_name="mqctl tests"))
    yield session
    session.stop()


def all_captures() -> list[Path]:
    """Every capture the equality test covers: fixtures/ and, where present, ../shared/captures."""
    found = sorted(FIXTURES.rglob("*.pcap"))
    if CAPTURES.is_dir():
        found += sorted(CAPTURES.rglob("*.pcap")) + sorted(CAPTURES.rglob("*.pcapng"))
    return found


#: small byte ranges, so that every capture bigger than this is read as several splits
SPLIT_BYTES = 64 * 1024


@pytest.fixture(scope="session")
def analysed(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any, list[Path]]:
    """(output directory, job result, captures) of one job over every capture."""
    from analysis.job import run_job

    captures = all_captures()
    out = tmp_path_factory.mktemp("analysis") / "out"
    result = run_job(spark, [str(p) for p in captures], out, split_bytes=SPLIT_BYTES, partitions=4)
    return out, result, captures
