# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The AutoSwitch epoch file, the consistent-point rule, and where a master starts sending.

Epoch file (``EpochFileCache`` through ``CheckpointFile``), text, one item per line::

    2               <- number of entries
    773307083       <- CRC32 of the entry lines (each with its line separator) & 0x7FFFFFFF
    7-7000          <- "<epoch>-<startOffset>"
    8-8000

This example is the one in ``CheckpointFile``'s own documentation. A CRC of 0 is not checked.
``CheckpointFile.read`` skips entry lines that do not split into exactly two parts at ``-``, yet
counts them in the CRC; the count must equal the entries it kept. Numbers that do not parse make the
Java reader throw. ``CheckpointFile.write`` writes nothing at all for an empty list (the old file
stays); Java also keeps the previous file as ``<path>.bak`` and reads that when the main file is
unreadable or empty.

End offsets are not stored: an entry ends where the next one starts, and the last one at
``Long.MAX_VALUE`` unless a caller sets it (``EpochFileCache.initEntries`` and
``setLastEpochEntryEndOffset``).
"""

from __future__ import annotations

import re
import zlib
from collections.abc import Iterable, Sequence

from .._javanum import MAX_NUMBER_TEXT
from ..errors import DecodeError, EncodeError, clipped, excerpt
from .frames import EpochEntry

__all__ = [
    "DEFAULT_COMMITLOG_FILE_SIZE",
    "LONG_MAX",
    "autoswitch_transfer_start_offset",
    "decode_epoch_file",
    "encode_epoch_file",
    "epoch_file_crc",
    "epoch_for_offset",
    "epoch_ranges",
    "find_consistent_point",
    "slave_resume_offset",
    "v4_transfer_start_offset",
]

#: Java's Long.MAX_VALUE: the end offset of the last epoch until one is set
LONG_MAX = 2**63 - 1
#: MessageStoreConfig.mappedFileSizeCommitLog default (1 GiB)
DEFAULT_COMMITLOG_FILE_SIZE = 1024 * 1024 * 1024

_INT_RE = re.compile(r"[+-]?[0-9]+\Z")
_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), LONG_MAX)


def epoch_file_crc(entries: Iterable[EpochEntry], line_separator: str = "\n") -> int:
    """UtilAll.crc32 of the entry lines as CheckpointFile.write joins them."""
    text = "".join(f"{e.epoch}-{e.start_offset}{line_separator}" for e in entries)
    return zlib.crc32(text.encode("utf-8")) & 0x7FFFFFFF


def encode_epoch_file(entries: Sequence[EpochEntry], *, line_separator: str = "\n") -> bytes:
    """The file CheckpointFile.write produces (``line_separator`` is Java's ``System.lineSeparator()``).

    An empty list gives ``0``/``0``, which the Java reader accepts as empty, though Java itself never
    writes a file for an empty list.
    """
    for e in entries:
        if not isinstance(e, EpochEntry):
            raise EncodeError(f"not an EpochEntry: {e!r}", field="entries")
        # "<epoch>-<startOffset>" with a minus sign in it no longer splits into two parts, so the
        # Java reader would skip the line and then reject the file for its count
        if e.epoch < 0 or e.start_offset < 0:
            raise EncodeError(f"{e} cannot be written: the file format has no negative numbers",
                              field="entries")
    body = "".join(f"{e.epoch}-{e.start_offset}{line_separator}" for e in entries)
    head = f"{len(entries)}{line_separator}{epoch_file_crc(entries, line_separator)}{line_separator}"
    return (head + body).encode("utf-8")


def _java_int(text: str, rng: tuple[int, int], offset: int, field: str) -> int:
    # mirrors Integer.parseInt / Long.parseLong: optional sign, ASCII digits, no spaces, in range
    # (longer text is refused before int() sees it: int() refuses more than 4,300 digits)
    if len(text) > MAX_NUMBER_TEXT or not _INT_RE.match(text) or not rng[0] <= int(text) <= rng[1]:
        bits = "32" if rng == _INT32 else "64"
        raise DecodeError(f"epoch file: {field} {excerpt(text)} is not a {bits}-bit decimal", offset=offset,
                          field=field, expected="a decimal integer", found=clipped(text))
    return int(text)


def _lines(text: str) -> list[tuple[int, str]]:
    """(offset, line) as BufferedReader.readLine splits: at \\n, \\r or \\r\\n."""
    out = []
    pos = 0
    for m in re.finditer(r"\r\n|\r|\n", text):
        out.append((pos, text[pos:m.start()]))
        pos = m.end()
    if pos < len(text):
        out.append((pos, text[pos:]))
    return out


def decode_epoch_file(data: bytes | str, *, line_separator: str = "\n") -> tuple[EpochEntry, ...]:
    """The entries of an epoch file, checked as CheckpointFile.read checks them.

    The CRC is recomputed over the entry lines joined with ``line_separator``, as the reading JVM
    does; offsets in errors count characters from the start of the text.
    """
    if isinstance(data, (bytes, bytearray, memoryview)):
        try:
            text = bytes(data).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DecodeError(f"epoch file: not UTF-8 ({exc.reason})", offset=exc.start, field="file",
                              expected="UTF-8 text", found=bytes(data)[exc.start:exc.start + 4]) from None
    else:
        text = data
    lines = _lines(text)
    if len(lines) < 2:
        where = lines[0][0] + len(lines[0][1]) if lines else 0
        raise DecodeError("epoch file: the count and CRC lines are missing", offset=where,
                          field="count" if not lines else "crc32", expected="two header lines",
                          found=len(lines))
    count = _java_int(lines[0][1], _INT32, lines[0][0], "count")
    crc = _java_int(lines[1][1], _INT32, lines[1][0], "crc32")
    entries: list[EpochEntry] = []
    joined = []
    for offset, line in lines[2:]:
        joined.append(line + line_separator)
        # mirrors EpochEntrySerializer.fromLine: String.split("-") drops trailing empty parts, and a
        # line that does not give exactly two parts is skipped
        parts = line.split("-")
        while parts and parts[-1] == "":
            parts.pop()
        if len(parts) != 2:
            continue
        epoch = _java_int(parts[0], _INT32, offset, "epoch")
        start = _java_int(parts[1], _INT64, offset + len(parts[0]) + 1, "start_offset")
        entries.append(EpochEntry(epoch, start))
    if len(entries) != count:
        raise DecodeError(f"epoch file: the count line says {count} entries, found {len(entries)}",
                          offset=lines[0][0], field="count", expected=count, found=len(entries))
    actual = zlib.crc32("".join(joined).encode("utf-8")) & 0x7FFFFFFF
    if crc != 0 and crc != actual:
        raise DecodeError(f"epoch file: CRC {crc} does not match the entries' {actual}",
                          offset=lines[1][0], field="crc32", expected=actual, found=crc)
    return tuple(entries)


def epoch_ranges(entries: Sequence[EpochEntry], last_end: int | None = None) -> dict[int, tuple[int, int]]:
    """epoch -> (start, end), as EpochFileCache holds them.

    Mirrors ``initEntries``: entries are keyed by epoch (a repeated epoch keeps the later entry) and
    each entry in list order ends where the next begins; the highest epoch ends at ``LONG_MAX``, or
    at ``last_end`` when it is given and not below its start (``setLastEpochEntryEndOffset``).
    """
    entries = list(entries)
    ends = [e.start_offset for e in entries[1:]] + [LONG_MAX] if entries else []
    by_epoch: dict[int, list[int]] = {}
    for e, end in zip(entries, ends, strict=True):
        by_epoch[e.epoch] = [e.start_offset, end]
    if by_epoch and last_end is not None:
        last = by_epoch[max(by_epoch)]
        if last[0] <= last_end:
            last[1] = last_end
    return {k: (v[0], v[1]) for k, v in sorted(by_epoch.items())}


def find_consistent_point(local: Sequence[EpochEntry], remote: Sequence[EpochEntry], *,
                          local_end: int | None = None, remote_end: int | None = None) -> int:
    """EpochFileCache.findConsistentPoint: the offset up to which ``local`` agrees with ``remote``.

    From the highest local epoch down, the first epoch that ``remote`` has with the same start
    offset gives ``min(local end, remote end)`` of that epoch; -1 when there is none. ``local_end``
    and ``remote_end`` set the end of each side's last epoch (its max offset); otherwise it is
    ``LONG_MAX``.
    """
    mine = epoch_ranges(local, local_end)
    theirs = epoch_ranges(remote, remote_end)
    for epoch in sorted(mine, reverse=True):
        other = theirs.get(epoch)
        if other is not None and other[0] == mine[epoch][0]:
            return min(mine[epoch][1], other[1])
    return -1


def slave_resume_offset(local: Sequence[EpochEntry], local_max_offset: int,
                        master: Sequence[EpochEntry], master_max_offset: int) -> int:
    """What an AutoSwitch slave does with the master's handshake reply (AutoSwitchHAClient.doTruncate).

    An empty local epoch cache means a new replica: nothing is truncated and the slave reports 0.
    Otherwise the slave truncates its CommitLog and epoch file to the consistent point between its
    entries (last one ending at its max offset) and the master's (last one ending at the master's
    max offset) and reports that offset. -1 means there is none: the slave drops the connection.
    """
    if not local:
        return 0
    return find_consistent_point(local, master, local_end=local_max_offset, remote_end=master_max_offset)


def epoch_for_offset(entries: Sequence[EpochEntry], offset: int,
                     last_end: int | None = None) -> EpochEntry | None:
    """EpochFileCache.findEpochEntryByOffset: the epoch whose [start, end) holds ``offset``."""
    for epoch, (start, end) in epoch_ranges(entries, last_end).items():
        if start <= offset < end:
            return EpochEntry(epoch, start)
    return None


def v4_transfer_start_offset(slave_request_offset: int, master_max_offset: int, *,
                             mapped_file_size: int = DEFAULT_COMMITLOG_FILE_SIZE) -> int:
    """Where a 4.x (or 5.x DefaultHA) master starts sending, from the slave's first report.

    Mirrors HAConnection.WriteSocketService: a report of 0 (an empty slave) starts at the beginning
    of the master's last CommitLog file; any other report starts exactly there.
    """
    if slave_request_offset != 0:
        return slave_request_offset
    return max(0, master_max_offset - master_max_offset % mapped_file_size)


def autoswitch_transfer_start_offset(slave_request_offset: int, *, master_min_offset: int,
                                     master_max_offset: int, sync_from_last_file: bool = False,
                                     mapped_file_size: int = DEFAULT_COMMITLOG_FILE_SIZE) -> int:
    """Where an AutoSwitch master starts sending, from the slave's first TRANSFER ack.

    Mirrors AutoSwitchHAConnection.WriteSocketService: an ack of 0 starts at the start of the last
    CommitLog file when the slave's handshake asked for ``isSyncFromLastFile``, else at the
    CommitLog's min offset (which is -1 for an empty store: the master then only sends heartbeats
    with offset -1); any other ack starts exactly there.
    """
    if slave_request_offset != 0:
        return slave_request_offset
    if sync_from_last_file:
        return max(0, master_max_offset - master_max_offset % mapped_file_size)
    return master_min_offset
