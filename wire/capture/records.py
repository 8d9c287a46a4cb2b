# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Capture files as a stream of records: ``(record_no, ts, linktype, data)`` tuples.

Classic pcap (both byte orders, micro- and nanosecond timestamps) is read here with
:mod:`struct`, in 1 MiB chunks, so a capture of any size streams with bounded memory and every
record comes back whole, however long it is (loopback captures hold 65,549-byte segments that
scapy's readers would cut to 65,535 bytes by default). pcapng is read through scapy's
``RawPcapNgReader`` (:mod:`wire.capture._scapy_io`, the one module that imports scapy). A gzip
file of either format is unpacked on the fly, and ``-`` reads standard input.

Why not scapy's ``RawPcapReader`` for classic pcap too: on this project's benchmark capture
(``benchmarks/bench_pcap.py``; the run ``docs/pcap.md`` reports) this reader yields the records
in 0.12 s where scapy's takes 0.45 s, about 3.7 times as fast, and it can say where a file is
damaged. scapy's reader turns a record cut short by the end of the file into a silent end of
iteration (with a log line), where this one raises :class:`CaptureFileError` naming the file, the
record number and the byte offset of the record header.

Record numbers count from 1, as Wireshark's frame numbers do. Timestamps are float seconds.
"""

from __future__ import annotations

import gzip
import struct
import sys
import zlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from ..errors import DecodeError

__all__ = [
    "MAX_RECORD_LENGTH",
    "CaptureFileError",
    "CaptureSource",
    "ClassicPcap",
    "CountingReader",
    "Record",
    "capture_size",
    "read_records",
]

#: one record: (record number from 1, timestamp in seconds, link-layer type, captured bytes)
Record = tuple[int, float, int, bytes]

#: Longest record accepted. libpcap caps snapshot lengths at 256 KiB for most link types; a record
#: header announcing more than this is taken as damage, not as data.
MAX_RECORD_LENGTH = 64 * 1024 * 1024

_PCAP_MAGICS: dict[bytes, tuple[str, float]] = {
    b"\xd4\xc3\xb2\xa1": ("<", 1e-6),
    b"\xa1\xb2\xc3\xd4": (">", 1e-6),
    b"\x4d\x3c\xb2\xa1": ("<", 1e-9),
    b"\xa1\xb2\x3c\x4d": (">", 1e-9),
}
PCAPNG_MAGIC = b"\x0a\x0d\x0d\x0a"
_GZIP_MAGIC = b"\x1f\x8b"
_CHUNK = 1 << 20


class CaptureFileError(DecodeError):
    """The capture file itself is damaged or is not a capture: names the file, record and byte offset.

    ``offset`` is the byte offset in the file (after gzip decompression, for a gzip file) of the
    record or block where the damage was found; ``record`` is the number of the record that
    could not be read (``None`` for the file header).
    """

    def __init__(self, message: str, *, path: str, record: int | None = None, offset: int | None = None,
                 field: str | None = None, expected: object = None, found: object = None) -> None:
        super().__init__(message, offset=offset, field=field, expected=expected, found=found)
        self.path = path
        self.record = record

    def __str__(self) -> str:
        where = [self.path]
        if self.record is not None:
            where.append(f"record {self.record}")
        if self.offset is not None:
            where.append(f"byte offset {self.offset}")
        return f"{', '.join(where)}: {self.reason}"


class CountingReader:
    """A read-only file wrapper that counts the bytes handed out (pipes cannot ``tell()``)."""

    __slots__ = ("_f", "pos", "_raw", "live")

    def __init__(self, f: BinaryIO, raw: BinaryIO | None = None, *, live: bool = False) -> None:
        self._f = f
        self._raw = raw or f
        self.pos = 0
        #: reading a pipe or terminal (standard input, a FIFO), where more bytes may come later:
        #: :meth:`read_available` then returns what has arrived instead of waiting for a full chunk
        self.live = live

    def read(self, n: int = -1) -> bytes:
        data = self._f.read(n)
        if 0 <= n and data and len(data) < n:
            # a pipe may hand out less than asked for: only an empty read is the end
            parts = [data]
            got = len(data)
            while got < n:
                more = self._f.read(n - got)
                if not more:
                    break
                parts.append(more)
                got += len(more)
            data = b"".join(parts)
        self.pos += len(data)
        return data

    def read_available(self, n: int) -> bytes:
        """Up to ``n`` bytes: as :meth:`read` for a file; for a live source, what one read of the
        source gives (at least one byte, unless the source has ended), so that what has arrived
        is decoded before the next bytes are waited for (``tcpdump -w - | mqctl pcap decode -``)."""
        if not self.live:
            return self.read(n)
        read1 = getattr(self._f, "read1", None)
        data: bytes = read1(n) if read1 is not None else self._f.read(n)
        self.pos += len(data)
        return data

    def tell(self) -> int:
        return self.pos

    def seek(self, offset: int) -> None:
        """Move to a file offset (a plain file only: not standard input, not gzip)."""
        self._f.seek(offset)
        self.pos = offset

    def raw_position(self) -> int:
        """Bytes consumed from the underlying file (differs from :meth:`tell` for gzip)."""
        try:
            return self._raw.tell()
        except (OSError, ValueError):
            return self.pos

    def close(self) -> None:
        self._f.close()
        if self._raw is not self._f:
            self._raw.close()


def capture_size(path: str | Path) -> int | None:
    """The size of the file on disk, for progress reporting (``None`` for standard input)."""
    if str(path) == "-":
        return None
    try:
        return Path(path).stat().st_size
    except OSError:
        return None


def _open(path: str | Path) -> tuple[CountingReader, bytes]:
    name = str(path)
    raw: BinaryIO
    if name == "-":
        raw = sys.stdin.buffer
    else:
        try:
            raw = open(name, "rb")  # closed by read_records
        except OSError as exc:
            raise CaptureFileError(f"cannot open: {exc.strerror or exc}", path=name) from None
    f: BinaryIO = raw
    magic = CountingReader(raw).read(4)
    if magic[:2] == _GZIP_MAGIC:
        f = gzip.GzipFile(fileobj=_Prepend(magic, raw), mode="rb")  # type: ignore[call-overload]  # _Prepend reads only
        try:
            magic = f.read(4)
        except (OSError, EOFError, zlib.error) as exc:
            raw.close()
            raise CaptureFileError(f"damaged gzip data: {exc}", path=name, offset=0) from None
    reader = CountingReader(f, raw, live=_is_live(raw))
    reader.pos = len(magic)
    return reader, magic


def _is_live(f: BinaryIO) -> bool:
    """Whether ``f`` is a pipe, socket or terminal rather than a file of a known size."""
    import os
    import stat

    try:
        return not stat.S_ISREG(os.fstat(f.fileno()).st_mode)
    except (OSError, ValueError, AttributeError):
        return False


class _Prepend:
    """A file whose first bytes were already read: hands them out again before the rest."""

    def __init__(self, head: bytes, f: BinaryIO) -> None:
        self._head = head
        self._f = f

    def read(self, n: int = -1) -> bytes:
        if not self._head:
            return self._f.read(n)
        if n < 0:
            data, self._head = self._head + self._f.read(), b""
            return data
        data, self._head = self._head[:n], self._head[n:]
        if len(data) < n:
            data += self._f.read(n - len(data))
        return data

    def tell(self) -> int:
        return self._f.tell() - len(self._head)

    def close(self) -> None:
        self._f.close()


class ClassicPcap:
    """A classic pcap file as a window of whole records, for loops that walk records in place.

    ``buf[pos:]`` holds the bytes not yet consumed; ``record_header`` unpacks a 16-byte record
    header (seconds, fraction, captured length, original length) in the file's byte order, and a
    record's time is ``sec + frac * scale``. A walker reads records from ``buf`` until one is not
    whole, then calls :meth:`refill`, which keeps the unconsumed tail, reads more and reports damage.
    :func:`read_records` walks it record by record; the capture decoder's hot loop
    (:mod:`wire.capture.hotpath`) walks it without cutting a record out of the window.
    """

    __slots__ = ("reader", "path", "linktype", "scale", "record_header", "buf", "base", "on_progress")

    def __init__(self, reader: CountingReader, path: str, endian: str, scale: float,
                 on_progress: Callable[[int], None] | None, *, resume: tuple[int, int] | None = None) -> None:
        self.reader = reader
        self.path = path
        self.scale = scale
        self.on_progress = on_progress
        self.record_header = struct.Struct(endian + "IIII")
        self.buf = b""
        if resume is not None:
            # a window that starts at a record boundary found elsewhere (wire.capture.splits): the
            # reader stands at file offset ``resume[1]``, and the link type came from the file header
            self.linktype, self.base = resume
            return
        try:
            header = reader.read(20)
        except (OSError, EOFError, zlib.error) as exc:  # a damaged or cut gzip stream
            raise CaptureFileError(f"read error: {exc}", path=path, offset=4, field="file header") from None
        if len(header) < 20:
            raise CaptureFileError(f"pcap file header cut short: {4 + len(header)} of 24 bytes", path=path,
                                   offset=0, field="file header", expected=24, found=4 + len(header))
        _major, _minor, _zone, _sigfigs, _snaplen, linktype = struct.unpack(endian + "HHiIII", header)
        # the top bits of the link-type word may carry an FCS length (pcap-savefile(5)); the type is below
        self.linktype = linktype & 0x0FFFFFFF
        #: file offset of ``buf[0]``
        self.base = 24

    def too_long(self, pos: int, number: int, incl: int) -> CaptureFileError:
        """The error for a record header at ``buf[pos]`` (record ``number``) announcing ``incl`` bytes."""
        return CaptureFileError(f"record length {incl} exceeds {MAX_RECORD_LENGTH}: the file is damaged",
                                path=self.path, record=number, offset=self.base + pos, field="incl_len",
                                expected=f"<= {MAX_RECORD_LENGTH}", found=incl)

    def refill(self, pos: int, number: int) -> bool:
        """The record at ``buf[pos]`` (record ``number``) is not whole in the window: drop the bytes
        before it and read more, so that it starts at ``buf[0]``. False at a clean end of the file;
        :class:`CaptureFileError` when the file ends inside the record or cannot be read."""
        buf = self.buf
        have = len(buf) - pos
        want = _CHUNK
        if have >= 16:
            incl = self.record_header.unpack_from(buf, pos)[2]
            want = max(_CHUNK, 16 + incl - have)
        try:
            more = self.reader.read_available(want)
        except (OSError, EOFError, zlib.error) as exc:
            raise CaptureFileError(f"read error: {exc}", path=self.path, record=number,
                                   offset=self.base + pos) from None
        if self.on_progress is not None:
            self.on_progress(self.reader.raw_position())
        if not more:
            if not have:
                return False
            if have < 16:
                raise CaptureFileError(
                    f"record header cut short: {have} of 16 bytes before the end of the file",
                    path=self.path, record=number, offset=self.base + pos, field="record header",
                    expected=16, found=have)
            raise CaptureFileError(
                f"record data cut short: {have - 16} of {incl} bytes before the end of the file",
                path=self.path, record=number, offset=self.base + pos, field="record data",
                expected=incl, found=have - 16)
        self.buf = buf[pos:] + more if have else more
        self.base += pos
        return True

    def records(self, *, number: int = 0, stop: int | None = None) -> Iterator[Record]:
        """Every record, in order; numbered from ``number + 1``. With ``stop``, only the records whose
        header starts before that file offset (a byte-range split of the file)."""
        unpack_from = self.record_header.unpack_from
        linktype = self.linktype
        scale = self.scale
        buf = self.buf
        pos = 0
        n = len(buf)
        while True:
            if stop is not None and self.base + pos >= stop:
                return
            if n - pos >= 16:
                sec, frac, incl, _orig = unpack_from(buf, pos)
                if incl > MAX_RECORD_LENGTH:
                    raise self.too_long(pos, number + 1, incl)
                end = pos + 16 + incl
                if end <= n:
                    number += 1
                    yield (number, sec + frac * scale, linktype, buf[pos + 16:end])
                    pos = end
                    continue
            if not self.refill(pos, number + 1):
                return
            buf = self.buf
            pos = 0
            n = len(buf)


class CaptureSource:
    """An open capture file: ``classic`` is set for classic pcap (walked in place by the decoder's hot
    loop); :meth:`records` gives the records of either format. Close it (or use ``with``)."""

    def __init__(self, path: str | Path, *, on_progress: Callable[[int], None] | None = None) -> None:
        self.path = str(path)
        self.on_progress = on_progress
        self._reader, self._magic = _open(path)
        self.classic: ClassicPcap | None = None
        try:
            magic = self._magic
            if magic in _PCAP_MAGICS:
                endian, scale = _PCAP_MAGICS[magic]
                self.classic = ClassicPcap(self._reader, self.path, endian, scale, on_progress)
            elif magic != PCAPNG_MAGIC:
                if len(magic) < 4:
                    raise CaptureFileError(f"not a capture file: only {len(magic)} bytes", path=self.path,
                                           offset=0, field="magic", expected="pcap or pcapng magic",
                                           found=magic.hex())
                raise CaptureFileError(f"not a pcap or pcapng file (magic {magic.hex()})", path=self.path,
                                       offset=0, field="magic", expected="a1b2c3d4, a1b23c4d or 0a0d0d0a",
                                       found=magic.hex())
        except BaseException:
            self._reader.close()
            raise

    @property
    def live(self) -> bool:
        """Read from a pipe or terminal: more may come, so what has arrived is handed on first."""
        return self._reader.live

    def records(self) -> Iterator[Record]:
        if self.classic is not None:
            return self.classic.records()
        from ._scapy_io import pcapng_records

        return pcapng_records(self._reader, self.path, self._magic, self.on_progress)

    def close(self) -> None:
        self._reader.close()

    def __enter__(self) -> CaptureSource:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def read_records(path: str | Path, *, on_progress: Callable[[int], None] | None = None) -> Iterator[Record]:
    """Every record of a pcap or pcapng file (``-`` for standard input), streamed.

    ``on_progress`` is called now and then with the number of bytes read from the file so far.
    Raises :class:`CaptureFileError` for a file that is not a capture or is damaged.
    """
    with CaptureSource(path, on_progress=on_progress) as source:
        yield from source.records()
