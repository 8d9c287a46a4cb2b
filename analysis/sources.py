# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Where the captures come from: local paths, and any path Spark's Hadoop file systems read.

A local path (or ``file://`` URL) is read by the executors themselves, by byte ranges, so that
one big file is decoded by many tasks at once; on a cluster it must be a path every worker
mounts. Any other URL (``hdfs://``, ``s3a://``, ``viewfs://``, ``abfs://``, ... whatever file
systems the Spark installation has) is listed on the driver through Hadoop's ``FileSystem`` (the
JVM gateway) and read by Spark itself (``binaryFiles``): each such file is read whole by one
task, so the parallelism is across files, and a file must be smaller than 2 GiB (a Java array).
"""

from __future__ import annotations

import glob
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = [
    "CAPTURE_SUFFIXES",
    "MAX_REMOTE_BYTES",
    "SourceError",
    "expand_local",
    "expand_remote",
    "is_remote",
]

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz")
#: the largest file Spark's binaryFiles hands to Python (one Java byte array)
MAX_REMOTE_BYTES = (1 << 31) - 1 - 64
_KINDS = "(*.pcap, *.pcapng, *.cap, gzip'd)"


class SourceError(Exception):
    """An input that cannot be read, in one line."""


def is_remote(item: str) -> bool:
    """A URL of a file system other than the local one."""
    scheme, sep, _rest = item.partition("://")
    return bool(sep) and scheme.lower() != "file" and scheme.isidentifier()


def _capture_name(name: str) -> bool:
    return name.endswith(CAPTURE_SUFFIXES) and not name.startswith((".", "_"))


def expand_local(inputs: Iterable[str]) -> list[str]:
    """Files, directories (their capture files, recursively) and globs → capture paths, sorted per
    input, each once. ``file://`` URLs are local paths; remote URLs are kept as given."""
    out: list[str] = []
    for item in inputs:
        if is_remote(item):
            out.append(item)
            continue
        if item.lower().startswith("file://"):
            item = item[len("file://"):]
        p = Path(item)
        if p.is_dir():
            found = sorted(str(f) for f in p.rglob("*") if f.is_file() and _capture_name(f.name))
            if not found:
                raise SourceError(f"{item}: no capture files {_KINDS} in the directory")
            out.extend(found)
        elif p.is_file():
            out.append(str(p))
        elif any(c in item for c in "*?["):
            found = sorted(f for f in glob.glob(item, recursive=True) if os.path.isfile(f))
            if not found:
                raise SourceError(f"{item}: the pattern matches no file")
            out.extend(found)
        else:
            raise SourceError(f"{item}: no such file or directory")
    seen: set[str] = set()
    unique = []
    for f in out:
        key = f if is_remote(f) else os.path.realpath(f)
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique


def expand_remote(spark: Any, item: str) -> list[tuple[str, int]]:
    """(URL, size) of the capture files a remote file, directory or glob names, listed with Hadoop's
    FileSystem on the driver."""
    jvm = spark.sparkContext._jvm
    conf = spark.sparkContext._jsc.hadoopConfiguration()
    try:
        path = jvm.org.apache.hadoop.fs.Path(item)
        fs = path.getFileSystem(conf)
        statuses = fs.globStatus(path)
    except Exception as err:  # py4j's Py4JJavaError: the Java exception's message says why
        raise SourceError(f"{item}: {_java_reason(err)}") from None
    if statuses is None or len(statuses) == 0:
        glob_chars = any(c in item.partition("://")[2] for c in "*?[{")
        raise SourceError(f"{item}: the pattern matches no file" if glob_chars
                          else f"{item}: no such file or directory")
    found: list[tuple[str, int]] = []
    for st in statuses:
        if st.isDirectory():
            files = fs.listFiles(st.getPath(), True)
            inside = []
            while files.hasNext():
                f = files.next()
                if _capture_name(f.getPath().getName()):
                    inside.append((f.getPath().toString(), int(f.getLen())))
            if not inside:
                raise SourceError(f"{item}: no capture files {_KINDS} in the directory")
            found.extend(sorted(inside))
        else:
            found.append((st.getPath().toString(), int(st.getLen())))
    for url, size in found:
        if size > MAX_REMOTE_BYTES:
            raise SourceError(
                f"{url}: {size:,} bytes; a file read through Spark's file systems is read whole and must be "
                "below 2 GiB (rotate captures smaller, or put them on a path every worker mounts, which is "
                "read by byte ranges)")
    return found


def _java_reason(err: Exception) -> str:
    java = getattr(err, "java_exception", None)
    if java is not None:
        name = java.getClass().getSimpleName()
        message = java.getMessage() or ""
        missing_class = "ClassNotFoundException" in message and "FileSystem" in message
        if name == "UnsupportedFileSystemException" or "No FileSystem for scheme" in message or missing_class:
            return (f"Spark has no file system for this scheme ({message}); add its connector to the Spark "
                    "installation (for s3a://: --conf spark.jars.packages=org.apache.hadoop:hadoop-aws:<the "
                    "Hadoop version of Spark>)")
        return f"{name}: {message}"
    return str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
