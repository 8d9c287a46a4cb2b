# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Byte-range splits of one capture file, so that many workers can read one file at once.

Theory of operation
-------------------
A capture file is cut into byte ranges ``[start, end)``; a split holds the records whose header
starts inside its range. Only the first range is known to start on a record: every other worker
has to find the first record boundary at or after ``start`` by itself.

1. **Candidates** (RAPCAP's idea). For classic pcap, each offset from ``start`` on is tried as a
   16-byte record header: the captured length must be at most the original length and
   :data:`~wire.capture.records.MAX_RECORD_LENGTH`, the fraction of a second below one second in
   the file's unit, the time within a week of the file's first record; and the next
   :data:`CHAIN` records that the lengths lead to must pass the same checks, each within an hour of
   the one before (or the chain must end exactly at the end of the file). pcapng blocks are tried at
   offsets that are multiples of four: a known block type, a length that is a multiple of four,
   the same length repeated at the block's end, and again a chain of blocks after it. A worker
   cannot know how many interfaces the blocks before its range described, so it assumes
   enough (:data:`UNKNOWN`) and notes how many its packet blocks need (the highest interface
   number used, less the interface descriptions met before it in the range).
2. **Walk.** From its candidate the worker follows the lengths to the first record that starts at
   or after ``end`` (``next``), counting records and, for pcapng, noting the section header and
   interface description blocks it passes (the state a later split needs) and whether a simple
   packet block, which has no time of its own, comes before any timed block.
3. **Verification** (:func:`resolve`). Heuristics can be fooled: a packet whose payload is itself a
   capture file holds headers that chain perfectly. So nothing is taken on trust. The first split
   starts at the first record for certain; if split ``i`` started on a true boundary, its walk
   found the true ``next``, and split ``i + 1`` is right exactly when its candidate equals that
   ``next`` (and, for pcapng, the byte order matches and the interfaces described before it are
   at least as many as its packet blocks need: then it counted the records a walk from the file's
   start counts, and its own interface descriptions add to the count). Any split that
   disagrees is walked again from its predecessor's ``next``, which is then known to be right; by
   induction every split of the resolved plan starts on a true record boundary. On a well-formed
   file a wrong boundary is therefore impossible; the candidates only decide how often the
   re-walk is needed (never, on ordinary captures).

The walks read record headers only. :func:`split_records` then yields a resolved split's records
through the same readers as :func:`~wire.capture.read_records` (the classic pcap window of
:class:`~wire.capture.records.ClassicPcap`; scapy's pcapng reader, given the state blocks before
the split), numbered as in the whole file.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import struct
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from typing import BinaryIO

from .records import (
    _PCAP_MAGICS,
    MAX_RECORD_LENGTH,
    PCAPNG_MAGIC,
    CaptureFileError,
    ClassicPcap,
    CountingReader,
    Record,
)

__all__ = [
    "CHAIN",
    "UNKNOWN",
    "FileLayout",
    "Split",
    "SplitScan",
    "ByteRange",
    "file_layout",
    "layout_of",
    "plan_ranges",
    "resolve",
    "scan_split",
    "split_records",
    "walk",
]

#: Records (or blocks) after a candidate that must check out too.
CHAIN = 8
#: How far a record's time may be from the file's first record's time (seconds), for a candidate.
TIME_WINDOW = 7 * 86400
#: How far a record's time may be from the previous record's, for a candidate.
STEP_WINDOW = 3600
_WINDOW = 1 << 22
_GZIP_MAGIC = b"\x1f\x8b"

_SHB = 0x0A0D0D0A
_IDB = 1
_PKT = 2
_SPB = 3
_EPB = 6
#: block types scapy's reader knows, plus the name resolution, statistics, decryption secrets,
#: process information and custom blocks: what a candidate block may be
_BLOCK_TYPES = frozenset((_SHB, _IDB, _PKT, _SPB, 4, 5, _EPB, 0x0A, 0x80000001, 0x00000BAD, 0x40000BAD))
#: pcapng: the interface count a worker assumes at a candidate (as many as its blocks use)
UNKNOWN = -1
#: pcapng: the most interfaces a candidate's packet blocks may need
_MAX_INTERFACES = 1 << 16
_BYTE_ORDER = {b"\x1a\x2b\x3c\x4d": ">", b"\x4d\x3c\x2b\x1a": "<"}


@dataclass(frozen=True, slots=True)
class FileLayout:
    """What a split needs to know about its file, read from the file's first bytes."""

    path: str
    #: ``pcap``, ``pcapng`` or ``gzip`` (not splittable: read whole)
    kind: str
    size: int
    #: offset of the first record (pcap) or of the first block after the section header (pcapng)
    data_start: int
    #: ``<`` or ``>`` (pcapng: of the first section)
    endian: str = "<"
    #: classic pcap: seconds per unit of the fraction field (1e-6 or 1e-9), link type, first time
    scale: float = 1e-6
    linktype: int = 0
    first_sec: int | None = None


@dataclass(frozen=True, slots=True)
class SplitScan:
    """What one worker learnt about its range (see the module docstring)."""

    index: int
    start: int
    end: int
    #: offset of the first record (block) found at or after ``start``, or None when no candidate
    first: int | None
    #: offset of the first record (block) at or after ``end`` that the walk from ``first`` reached
    next: int
    #: records (packet blocks that give a record) from ``first`` up to ``next``
    records: int = 0
    #: pcapng: (byte order, interfaces) assumed at ``first`` and reached at ``next``; with
    #: :data:`UNKNOWN` interfaces at ``first``, those reached are the ones described in the walk
    state_start: tuple[str, int] = ("<", 0)
    state_end: tuple[str, int] = ("<", 0)
    #: pcapng: offsets of the section header and interface description blocks in the range
    state_blocks: tuple[int, ...] = ()
    #: pcapng: a simple packet block (which takes the time of the record before it) comes first
    untimed_first: bool = False
    #: pcapng, :data:`UNKNOWN` interfaces at ``first``: how many interfaces the blocks before
    #: ``first`` must have described for every packet block of the walk to give a record
    needs: int = 0


@dataclass(frozen=True, slots=True)
class Split:
    """A resolved split: records whose header starts in ``[first, stop)``, numbered after ``number``."""

    path: str
    index: int
    first: int
    stop: int
    number: int
    records: int
    #: pcapng: offsets of the state blocks before ``first`` (after the file's first section header)
    replay: tuple[int, ...] = field(default=())


def file_layout(path: str) -> FileLayout:
    """The layout of a capture file (raises :class:`CaptureFileError` for anything else)."""
    try:
        with open(path, "rb") as f:
            head = f.read(64)
            f.seek(0, 2)
            size = f.tell()
    except OSError as exc:
        raise CaptureFileError(f"cannot open: {exc.strerror or exc}", path=path) from None
    return layout_of(path, head, size)


def layout_of(path: str, head: bytes, size: int) -> FileLayout:
    """The layout of a capture file of ``size`` bytes from its first 64 (``head``)."""
    magic = head[:4]
    if head[:2] == _GZIP_MAGIC:
        return FileLayout(path, "gzip", size, 0)
    if magic in _PCAP_MAGICS:
        endian, scale = _PCAP_MAGICS[magic]
        if len(head) < 24:
            raise CaptureFileError(
                f"pcap file header cut short: {len(head)} of 24 bytes",
                path=path,
                offset=0,
                field="file header",
                expected=24,
                found=len(head),
            )
        linktype = struct.unpack_from(endian + "I", head, 20)[0] & 0x0FFFFFFF
        first_sec = struct.unpack_from(endian + "I", head, 24)[0] if len(head) >= 40 else None
        return FileLayout(path, "pcap", size, 24, endian, scale, linktype, first_sec)
    if magic == PCAPNG_MAGIC:
        order = _BYTE_ORDER.get(head[8:12])
        if order is None or len(head) < 12:
            raise CaptureFileError(
                "damaged pcapng section header: bad byte-order magic",
                path=path,
                offset=8,
                field="section header block",
            )
        length: int = struct.unpack_from(order + "I", head, 4)[0]
        return FileLayout(path, "pcapng", size, length, order)
    raise CaptureFileError(
        f"not a pcap or pcapng file (magic {magic.hex()})",
        path=path,
        offset=0,
        field="magic",
        expected="a1b2c3d4, a1b23c4d or 0a0d0d0a",
        found=magic.hex(),
    )


def plan_ranges(layout: FileLayout, target: int) -> list[tuple[int, int]]:
    """Byte ranges of about ``target`` bytes covering the file's records (one for gzip)."""
    if layout.kind == "gzip" or layout.size <= layout.data_start:
        return [(layout.data_start, max(layout.size, layout.data_start))]
    span = layout.size - layout.data_start
    n = max(1, -(-span // max(target, 1)))
    step = -(-span // n)
    if layout.kind == "pcapng":
        step = -(-step // 4) * 4
    cuts = [layout.data_start + i * step for i in range(n)] + [layout.size]
    return [(a, min(b, layout.size)) for a, b in itertools.pairwise(cuts) if a < layout.size]


class ByteRange(io.RawIOBase):
    """Bytes of a file from offset ``start`` on, held in memory, read as the file itself is read:
    seek to a file offset, read; a read past what is held returns fewer bytes (as at the end of
    a file). For byte ranges a worker got from a file system it cannot open itself."""

    def __init__(self, start: int, data: bytes) -> None:
        super().__init__()
        self.start = start
        self.data = data
        self.pos = start

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        if whence == 1:
            offset += self.pos
        elif whence == 2:
            offset += self.start + len(self.data)
        self.pos = offset
        return offset

    def tell(self) -> int:
        return self.pos

    def read(self, n: int = -1) -> bytes:
        o = self.pos - self.start
        if o < 0:
            raise OSError(f"offset {self.pos} is before the bytes held (from {self.start})")
        out = self.data[o:] if n is None or n < 0 else self.data[o:o + n]
        self.pos += len(out)
        return out


class _Window:
    """Reads bytes of a file at any offset through a window of a few MiB."""

    def __init__(self, f: BinaryIO, size: int) -> None:
        self.f = f
        self.size = size
        self.base = 0
        self.buf = b""

    def get(self, offset: int, n: int) -> bytes:
        if offset < self.base or offset + n > self.base + len(self.buf):
            self.f.seek(offset)
            self.buf = self.f.read(max(_WINDOW, n))
            self.base = offset
        return self.buf[offset - self.base : offset - self.base + n]


# ---------------------------------------------------------------------------------------------- classic pcap


def _pcap_header_ok(layout: FileLayout, h: bytes, prev_sec: int | None) -> int | None:
    """The record length (header included) when ``h`` looks like a record header, else None."""
    if len(h) < 16:
        return None
    sec: int
    incl: int
    sec, frac, incl, orig = struct.unpack(layout.endian + "IIII", h)
    if (
        incl > orig
        or incl > MAX_RECORD_LENGTH
        or frac >= (1_000_000 if layout.scale > 1e-7 else 1_000_000_000)
    ):
        return None
    if layout.first_sec is not None and abs(sec - layout.first_sec) > TIME_WINDOW:
        return None
    if prev_sec is not None and abs(sec - prev_sec) > STEP_WINDOW:
        return None
    return 16 + incl


def _pcap_candidate(layout: FileLayout, w: _Window, at: int) -> bool:
    prev: int | None = None
    pos = at
    for _ in range(CHAIN + 1):
        if pos == layout.size:
            return True
        h = w.get(pos, 16)
        n = _pcap_header_ok(layout, h, prev)
        if n is None or pos + n > layout.size:
            return False
        prev = struct.unpack_from(layout.endian + "I", h)[0]
        pos += n
    return True


# ---------------------------------------------------------------------------------------------- pcapng


def _block(w: _Window, at: int, endian: str, size: int) -> tuple[int, int, str] | None:
    """(type, length, byte order after it) of a well-framed block at ``at``, else None."""
    h = w.get(at, 12)
    if len(h) < 12:
        return None
    btype = struct.unpack_from(endian + "I", h)[0]
    if btype == _SHB:
        order = _BYTE_ORDER.get(h[8:12])
        if order is None:
            return None
        endian = order
    length = struct.unpack_from(endian + "I", h, 4)[0]
    if btype not in _BLOCK_TYPES or length < 12 or length % 4 or at + length > size:
        return None
    if length > MAX_RECORD_LENGTH + 4096:
        return None
    tail = w.get(at + length - 4, 4)
    if len(tail) < 4 or struct.unpack(endian + "I", tail)[0] != length:
        return None
    return btype, length, endian


def _interface(w: _Window, at: int, btype: int, endian: str) -> int:
    """The interface number of a packet block (a simple packet block's is 0)."""
    if btype == _EPB:
        return int(struct.unpack(endian + "I", w.get(at + 8, 4))[0])
    if btype == _PKT:
        return int(struct.unpack(endian + "H", w.get(at + 8, 2))[0])
    return 0


def _gives_record(w: _Window, at: int, btype: int, endian: str, interfaces: int) -> bool:
    """Whether scapy's reader turns this block into a record (a packet block of a known interface)."""
    if btype not in (_EPB, _PKT, _SPB):
        return False
    return _interface(w, at, btype, endian) < interfaces


def _pcapng_candidate(layout: FileLayout, w: _Window, at: int, state: tuple[str, int]) -> bool:
    endian, interfaces = state
    unknown = interfaces == UNKNOWN
    if unknown:
        interfaces = 0
    pos = at
    for _ in range(CHAIN + 1):
        if pos == layout.size:
            return True
        b = _block(w, pos, endian, layout.size)
        if b is None:
            return False
        btype, length, endian = b
        if btype == _IDB:
            interfaces += 1
        elif btype in (_EPB, _PKT):
            if unknown:
                if _interface(w, pos, btype, endian) - interfaces >= _MAX_INTERFACES:
                    return False
            elif not _gives_record(w, pos, btype, endian, interfaces):
                return False
        pos += length
    return True


# ---------------------------------------------------------------------------------------------- walking


def walk(
    layout: FileLayout,
    f: BinaryIO,
    index: int,
    start: int,
    end: int,
    first: int | None,
    state: tuple[str, int],
) -> SplitScan:
    """Follow the records from ``first`` (a record boundary, or a candidate) to the first one at or
    after ``end``. Raises :class:`CaptureFileError` when the lengths lead past the end of the file
    from a boundary known to be true (``first`` given by the caller)."""
    w = _Window(f, layout.size)
    if first is None:
        return SplitScan(index, start, end, None, end, state_start=state, state_end=state)
    pos = first
    records = 0
    endian, interfaces = state
    unknown = interfaces == UNKNOWN
    if unknown:
        interfaces = 0  # counted from here; the blocks before must describe ``needs`` more
    needs = 0
    blocks: list[int] = []
    untimed_first = False
    timed = False
    if layout.kind == "pcap":
        pos, records = _walk_pcap(layout, w, pos, min(end, layout.size))
    while pos < end and pos < layout.size:
        if layout.kind == "pcap":
            h = w.get(pos, 16)
            if len(h) < 16:
                raise CaptureFileError(
                    f"record header cut short: {len(h)} of 16 bytes before the end of the file",
                    path=layout.path,
                    record=None,
                    offset=pos,
                    field="record header",
                )
            incl = struct.unpack_from(layout.endian + "I", h, 8)[0]
            if incl > MAX_RECORD_LENGTH:
                raise CaptureFileError(
                    f"record length {incl} exceeds {MAX_RECORD_LENGTH}: the file is damaged",
                    path=layout.path,
                    offset=pos,
                    field="incl_len",
                )
            pos += 16 + incl
            records += 1
            continue
        b = _block(w, pos, endian, layout.size)
        if b is None:
            raise CaptureFileError(
                "damaged pcapng block: bad block framing", path=layout.path, offset=pos, field="block"
            )
        btype, length, endian = b
        if btype in (_SHB, _IDB):
            blocks.append(pos)
            if btype == _IDB:
                interfaces += 1
        elif unknown and btype in (_EPB, _PKT, _SPB):
            needs = max(needs, _interface(w, pos, btype, endian) + 1 - interfaces)
            records += 1
            if btype == _SPB and not timed:
                untimed_first = True
            timed = True
        elif _gives_record(w, pos, btype, endian, interfaces):
            records += 1
            if btype == _SPB and not timed:
                untimed_first = True
            timed = True
        pos += length
    return SplitScan(
        index, start, end, first, pos, records, state, (endian, interfaces), tuple(blocks), untimed_first,
        needs,
    )


def _walk_pcap(layout: FileLayout, w: _Window, pos: int, stop: int) -> tuple[int, int]:
    """The record headers from ``pos`` up to the first record at or after ``stop``, read straight from
    the window while they lie in it: (where that walk stopped, records). The careful loop of
    :func:`walk` takes over where a header is not wholly in the window (or is damaged)."""
    length = struct.Struct(layout.endian + "I").unpack_from
    records = 0
    while pos < stop:
        o = pos - w.base
        buf = w.buf
        if o < 0 or o + 16 > len(buf):
            w.get(pos, 16)
            o = pos - w.base
            buf = w.buf
            if o + 16 > len(buf):
                break
        limit = len(buf) - 16
        while pos < stop and o <= limit:
            incl = length(buf, o + 8)[0]
            if incl > MAX_RECORD_LENGTH:
                return pos, records
            pos += 16 + incl
            o += 16 + incl
            records += 1
    return pos, records


def scan_split(
    layout: FileLayout, index: int, start: int, end: int, state: tuple[str, int] | None = None,
    source: BinaryIO | None = None,
) -> SplitScan:
    """A worker's look at ``[start, end)``: the first candidate boundary and the walk from it.

    ``state`` (pcapng) is the byte order and interface count assumed at the candidate; by default
    the byte order of the file's first section and :data:`UNKNOWN` interfaces (split 0 starts at
    the layout's data start with none, which is exact). ``source`` reads the file instead of
    opening ``layout.path`` (bytes read through another file system: :class:`ByteRange`).
    """
    if state is None:
        state = (layout.endian, 0 if start <= layout.data_start else UNKNOWN)
    with open(layout.path, "rb") if source is None else contextlib.nullcontext(source) as f:
        w = _Window(f, layout.size)
        first: int | None = None
        if start <= layout.data_start:
            first = layout.data_start
        else:
            step = 4 if layout.kind == "pcapng" else 1
            at = -(-start // step) * step
            while at < end:
                ok = (
                    _pcap_candidate(layout, w, at)
                    if layout.kind == "pcap"
                    else _pcapng_candidate(layout, w, at, state)
                )
                if ok:
                    first = at
                    break
                at += step
        try:
            return walk(layout, f, index, start, end, first, state)
        except CaptureFileError:
            if first == layout.data_start:
                raise
            # a candidate that leads nowhere is simply not a boundary: verification re-walks the split
            return SplitScan(index, start, end, None, end, state_start=state, state_end=state)


def resolve(
    layout: FileLayout,
    scans: list[SplitScan],
    rewalk: Callable[[int, int, int, tuple[str, int]], SplitScan] | None = None,
) -> tuple[list[Split], int]:
    """The exact split plan from the workers' scans (see the module docstring): each split's first
    record is its predecessor's ``next``, whatever the candidates said. Returns the splits and the
    number of splits that had to be walked again."""
    if rewalk is None:

        def rewalk(index: int, first: int, end: int, state: tuple[str, int]) -> SplitScan:
            with open(layout.path, "rb") as f:
                return walk(layout, f, index, first, end, first, state)

    scans = sorted(scans, key=lambda s: s.index)
    out: list[Split] = []
    rewalked = 0
    number = 0
    blocks: list[int] = []
    expect = layout.data_start
    state = (layout.endian, 0)
    for s in scans:
        if expect >= s.end:
            continue  # no record starts in this range: the previous split reaches past it
        if s.first != expect or not _state_fits(s, state):
            rewalked += 1
            s = rewalk(s.index, expect, s.end, state)
        if s.untimed_first and out:
            # a simple packet block takes the time of the record before it: read it with that record
            prev = out.pop()
            out.append(replace(prev, stop=s.next, records=prev.records + s.records))
        else:
            out.append(
                Split(
                    layout.path,
                    s.index,
                    expect,
                    s.next,
                    number,
                    s.records,
                    tuple(b for b in blocks if b != 0),
                )
            )
        number += s.records
        blocks.extend(s.state_blocks)
        expect = s.next
        state = (s.state_end[0], state[1] + s.state_end[1]) if s.state_start[1] == UNKNOWN else s.state_end
    return out, rewalked


def _state_fits(s: SplitScan, state: tuple[str, int]) -> bool:
    """Whether the pcapng state a scan assumed at its candidate holds at the true boundary."""
    if s.state_start[1] == UNKNOWN:
        return s.state_start[0] == state[0] and state[1] >= s.needs
    return s.state_start == state


def split_records(split: Split, layout: FileLayout) -> Iterator[Record]:
    """The records of a resolved split, numbered as in the whole file."""
    if layout.kind == "gzip":
        from .records import read_records

        yield from read_records(layout.path)
        return
    raw = open(layout.path, "rb")  # closed below
    try:
        reader = CountingReader(raw)
        if layout.kind == "pcap":
            reader.seek(split.first)
            pcap = ClassicPcap(
                reader, layout.path, layout.endian, layout.scale, None, resume=(layout.linktype, split.first)
            )
            yield from pcap.records(number=split.number, stop=split.stop)
            return
        from ._scapy_io import pcapng_records

        magic = reader.read(4)
        yield from pcapng_records(
            reader,
            layout.path,
            magic,
            number=split.number,
            replay=split.replay,
            start=split.first,
            stop=split.stop,
        )
    finally:
        raw.close()
