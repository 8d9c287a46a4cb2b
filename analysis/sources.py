# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Where the captures come from: local paths, and any path Spark's Hadoop file systems read.

A local path (or ``file://`` URL) is read by the executors themselves, by byte ranges, so that
one big file is decoded by many tasks at once; on a cluster it must be a path every worker
mounts. Any other URL (``hdfs://``, ``s3a://``, ``viewfs://``, ``abfs://``, ... whatever file
systems the Spark installation has) is listed on the driver through Hadoop's ``FileSystem`` (the
JVM gateway) and read by Spark itself, since a Python worker cannot open it: a classic pcap or
pcapng file bigger than a split by byte ranges, many tasks per file, whatever its size
(:func:`analysis.job._remote_splits`); gzip'd files (no random access) and small ones whole
(``binaryFiles``; below 2 GiB, a Java array: a bigger gzip'd file is refused before any work).
The driver reads the few bytes it needs itself (:class:`RemoteFile`).
"""

from __future__ import annotations

import glob
import io
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
    "read_range",
    "RemoteFile",
]

CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz")
#: the largest file Spark's binaryFiles hands to Python (one Java byte array): the limit of remote
#: files read whole
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


def read_range(spark: Any, url: str, offset: int, n: int) -> bytes:
    """``n`` bytes of a remote file from ``offset`` (fewer at its end), read on the driver through
    Hadoop's FileSystem."""
    return RemoteFile(spark, url).pread(offset, n)


class RemoteFile(io.RawIOBase):
    """A remote file opened on the driver through Hadoop's FileSystem, read as a local file is
    (seek, read): for the few bytes the driver itself needs (file headers, the bytes where byte
    ranges meet, a split walked again)."""

    def __init__(self, spark: Any, url: str) -> None:
        super().__init__()
        sc = spark.sparkContext
        self._jvm = sc._jvm
        path = self._jvm.org.apache.hadoop.fs.Path(url)
        self._stream = path.getFileSystem(sc._jsc.hadoopConfiguration()).open(path)
        self.url = url
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence != 0:
            raise OSError("RemoteFile seeks from the start only")
        self.pos = offset
        return offset

    def tell(self) -> int:
        return self.pos

    def read(self, n: int = -1) -> bytes:
        out = self.pread(self.pos, n if n is not None and n >= 0 else 1 << 30)
        self.pos += len(out)
        return out

    def pread(self, offset: int, n: int) -> bytes:
        self._stream.seek(offset)
        io_ = self._jvm.org.apache.commons.io
        out = bytearray()
        while n > 0:
            # commons-io (in every Spark installation) hands back a byte[] of what the bounded stream
            # gives, fewer bytes at the end of the file; py4j copies it into Python in one transfer
            want = min(n, 8 << 20)
            chunk = bytes(io_.IOUtils.toByteArray(io_.input.BoundedInputStream(self._stream, want)))
            if not chunk:
                break
            out += chunk
            n -= len(chunk)
        return bytes(out)

    def close(self) -> None:
        if not self.closed:
            self._stream.close()
        super().close()
