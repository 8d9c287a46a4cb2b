# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The SparkSession: one per process, quiet, with modest memory, on any master.

Defaults suit a laptop (``local[*]``): the driver JVM gets 1 GiB, shuffles use few partitions,
the web UI and Spark's own console progress bar are off (:mod:`analysis.progress` shows the
stages), Spark logs only errors (a log4j2 file shipped beside this module), a local JVM compiles
with C1 only (see :func:`default_conf`), and the executors' Python starts from
:mod:`analysis._daemon`. Executors run
the Python that runs the driver unless ``PYSPARK_PYTHON`` says otherwise, so a cluster's workers
need this project installed in the same path (a shared venv), as PySpark always requires.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

from pyspark import SparkConf
from pyspark.sql import SparkSession

__all__ = ["LOG4J2", "build_session", "default_conf"]

LOG4J2 = Path(__file__).with_name("log4j2.properties")


def default_conf(
    master: str = "local[*]",
    *,
    driver_memory: str = "1g",
    shuffle_partitions: int = 8,
    app_name: str = "mqctl analyze",
    extra: dict[str, str] | None = None,
) -> SparkConf:
    quiet = f"-Dlog4j2.configurationFile=file:{LOG4J2}"
    driver_java = quiet
    if master.startswith("local"):
        # The JVM only schedules, shuffles a few bytes per record and runs the metrics' SQL: its
        # optimising compiler (C2) cost more CPU than it saved (measured on 500 MB: the job 20.7
        # -> 19.7 CPU-s, the metrics 33.6 -> 24.0), so a local session stops at the quick one.
        driver_java += " -XX:TieredStopAtLevel=1"
    conf = (
        SparkConf()
        .setMaster(master)
        .setAppName(app_name)
        .set("spark.driver.memory", driver_memory)
        .set("spark.executor.memory", driver_memory)
        .set("spark.sql.shuffle.partitions", str(shuffle_partitions))
        .set("spark.default.parallelism", str(shuffle_partitions))
        .set("spark.ui.enabled", "false")
        .set("spark.ui.showConsoleProgress", "false")
        .set("spark.driver.extraJavaOptions", driver_java)
        .set("spark.executor.extraJavaOptions", quiet)
        .set("spark.sql.session.timeZone", "UTC")
        .set("spark.python.worker.reuse", "true")
        .set("spark.python.daemon.module", "analysis._daemon")
        .set("spark.sql.adaptive.enabled", "true")
    )
    if master.startswith(("local", "spark://")) or "127.0.0.1" in master:
        conf.set("spark.driver.host", "127.0.0.1").set("spark.driver.bindAddress", "127.0.0.1")
    for k, v in (extra or {}).items():
        conf.set(k, v)
    return conf


def build_session(conf: SparkConf) -> SparkSession:
    """The process's SparkSession (created once; later calls reuse it whatever ``conf`` says)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    spark: Any = SparkSession.builder.config(conf=conf).getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    return spark  # type: ignore[no-any-return]
