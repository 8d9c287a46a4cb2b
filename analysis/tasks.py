# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What runs on the executors: split scans, record indexes, per-flow decoding, table files.

Nothing here imports pyspark, and nothing here decodes on its own: records come from the readers
of ``mqctl pcap`` (:mod:`wire.capture.splits`, :func:`wire.capture.read_records`), and each
decoding unit feeds its records, in capture order, to one :class:`wire.capture.CaptureDecoder` per
capture file: the same reassembly, the same gap verdicts, the same opaque pairing as
``mqctl pcap decode``. Rows are flat tuples (STYLE A1) that leave the unit as Arrow record
batches in files, never as Python objects through the JVM; a body that does not decode becomes a
row with an error (A3), never a failed task.

Two kinds of decoding unit (:func:`decode_unit`):

* **a bin of whole files** (files no bigger than a split, gzip files, files read through Spark's
  file systems): the unit reads each file itself, start to end, through the decoder's hot loop
  as ``mqctl pcap decode`` does (:func:`decode_whole`);
* **a flow partition** of the files cut into splits: the map side (:func:`index_split`) walks each
  split's records and sends, per flow partition, only an index of them, ``(record, time, link
  type, data offset, length)`` (the partition is a hash of the file and the connection's two
  endpoints, so both directions of a connection meet); the unit reads the record bytes from the
  file by offset (:func:`read_indexed`), in record order. Capture bytes never cross the shuffle.

Ordering. ``mqctl pcap decode`` prints rows in the order their last byte was captured. Each row
carries ``emit_record`` (the record whose feeding produced it) and ``emit_index`` (its place among
the rows of that record); rows that only the end of the capture produces (a stream cut short, a
hole never filled) get ``emit_record`` = :data:`FINISHED` and ``emit_index`` ordered by their
connection's first record, which is how the sequential decoder flushes connections. Sorting by the
two columns gives ``mqctl pcap decode``'s order.

Stream numbers. ``tcp.stream`` counts connections in the order of their first record over the
whole file, which a flow partition cannot see: a unit numbers its connections itself (``conn`` =
unit << 32 | its number in the unit) and reports each connection's first record; the driver ranks
them per file, and :func:`finish_unit` writes the tables with the ``stream`` column from that
ranking (:mod:`analysis.job`).
"""

from __future__ import annotations

import contextlib
import io
import os
import shutil
import struct
import tempfile
import zlib
from array import array
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, BinaryIO, cast

from wire.capture import CaptureDecoder, CommandRow, HaRow, PacketError, PortRoles, ProblemRow, parse_packet
from wire.capture.fields import code_name, command_type, plain, row_fields
from wire.capture.hotpath import decode_classic, fixed_link_header
from wire.capture.records import MAX_RECORD_LENGTH, CaptureFileError, CaptureSource, CountingReader
from wire.capture.splits import UNKNOWN, ByteRange, FileLayout, Split, SplitScan, scan_split, split_records
from wire.codes import SerializeType, version_name
from wire.errors import DecodeError
from wire.message import decode_batch, decode_messages, decode_properties
from wire.remoting import FLAG_RESPONSE

from .columnar import TableFiles, finish_tables

__all__ = [
    "COMMANDS",
    "CONNECTIONS",
    "EXCHANGES",
    "FINISHED",
    "HA",
    "MESSAGES",
    "PROBLEMS",
    "TABLES",
    "Entry",
    "Index",
    "UnitReport",
    "WholeFile",
    "decode_unit",
    "finish_unit",
    "BAD",
    "deal",
    "flow_key",
    "flow_volumes",
    "index_split",
    "read_indexed",
    "scan_task",
]

# table numbers of the rows a unit emits
COMMANDS, EXCHANGES, MESSAGES, HA, PROBLEMS, CONNECTIONS = range(6)
TABLES = ("commands", "exchanges", "messages", "ha", "problems", "connections")

#: one record of an index: (record number, time, link type, file offset of its data, data length)
Entry = tuple[int, float, int, int, int]


class Index:
    """The records of one split that one flow partition decodes: five columns of numbers (arrays, so
    that the shuffle moves a few bytes per record and never pickles a tuple per record)."""

    __slots__ = ("numbers", "times", "links", "offsets", "lengths")

    def __init__(self) -> None:
        self.numbers = array("q")
        self.times = array("d")
        self.links = array("l")
        self.offsets = array("q")
        self.lengths = array("q")

    def add(self, number: int, ts: float, linktype: int, offset: int, length: int) -> None:
        self.numbers.append(number)
        self.times.append(ts)
        self.links.append(linktype)
        self.offsets.append(offset)
        self.lengths.append(length)

    def __len__(self) -> int:
        return len(self.numbers)

    def entries(self) -> list[Entry]:
        return list(zip(self.numbers, self.times, self.links, self.offsets, self.lengths, strict=True))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_index, (self.numbers, self.times, self.links, self.offsets, self.lengths))


def _index(*columns: array[Any]) -> Index:
    ix = Index.__new__(Index)
    ix.numbers, ix.times, ix.links, ix.offsets, ix.lengths = columns
    return ix

_SEND_CODES = frozenset((10, 310, 320))  # SEND_MESSAGE, SEND_MESSAGE_V2, SEND_BATCH_MESSAGE
_STORED = {11: "pull", 12: "query", 33: "view"}  # PULL_MESSAGE, QUERY_MESSAGE, VIEW_MESSAGE_BY_ID
#: V2 send headers (SendMessageRequestHeaderV2) use one-letter names for the V1 fields
_V2 = {
    "producerGroup": "a",
    "topic": "b",
    "queueId": "e",
    "sysFlag": "f",
    "bornTimestamp": "g",
    "flag": "h",
    "properties": "i",
    "reconsumeTimes": "j",
    "batch": "m",
}
_FINISH_SHIFT = 20
_SERIALIZE = {t: t.name for t in SerializeType}
#: ``emit_record`` of the rows the end of the capture produces (after every record)
FINISHED = 1 << 62
#: reads of indexed records: records closer than this share one read
_GAP = 64 * 1024
_RUN = 8 * 1024 * 1024
_WINDOW = 4 * 1024 * 1024
_SPB = frozenset((b"\x03\x00\x00\x00", b"\x00\x00\x00\x03"))  # a simple packet block, either byte order


def scan_task(item: tuple[FileLayout, int, int, int]) -> SplitScan:
    layout, index, start, end = item
    return scan_split(layout, index, start, end)


# ---------------------------------------------------------------------------------------------- map side

#: bytes of each byte range whose flows are counted for the deal
SAMPLE = 4 * 1024 * 1024
#: the flow key of a record whose headers do not parse (any partition takes it; its decoder reports it)
BAD = -1


def flow_key(linktype: int, data: bytes | memoryview, at: int, length: int, file_id: int) -> int | None:
    """The flow of the record whose data is ``data[at:at + length]``: a hash of the file and the
    connection's two endpoints in a fixed order (so both directions meet), the same in every Python
    process; None for a record that is not TCP (the decoder only counts those), :data:`BAD` for one
    whose headers do not parse. Flows whose hashes collide simply travel together."""
    link = fixed_link_header(linktype)
    if link is not None:
        ip = at + link[0]
        et = link[1]
        if (length >= link[0] + 40 and data[ip] == 0x45 and data[ip + 9] == 6
                and not data[ip + 6] & 0x3F and not data[ip + 7]
                and (et < 0 or (data[at + et] == 8 and data[at + et + 1] == 0))):
            # IPv4 without options or fragments (what parse_packet reads the same way): the
            # addresses at 12..20, the ports right after the 20-byte header
            a = bytes(data[ip + 12:ip + 16]) + bytes(data[ip + 20:ip + 22])
            b = bytes(data[ip + 16:ip + 20]) + bytes(data[ip + 22:ip + 24])
            return zlib.crc32(a + b if a <= b else b + a, file_id)
    try:
        seg = parse_packet(linktype, bytes(data[at:at + length]))
    except PacketError:
        return BAD
    if seg is None:
        return None
    a = seg[0] + seg[1].to_bytes(2, "big")
    b = seg[2] + seg[3].to_bytes(2, "big")
    return zlib.crc32(a + b if a <= b else b + a, file_id)


def _pcap_keyed(layout: FileLayout, first: int, stop: int, number: int, file_id: int,
                held: tuple[int, bytes] | None = None) -> Iterator[tuple[int, float, int | None, int, int]]:
    """The records of a classic pcap byte range from a record boundary, walked in a read window (as
    ClassicPcap does): (number, ts, flow key, data offset, data length). The common record (IPv4
    without options or fragments, TCP, on a fixed-size link header) is keyed inline, exactly as
    :func:`flow_key` keys it; any other goes through that function. ``held``: (file offset,
    bytes) that hold the whole range, read instead of the file (a remote file's range)."""
    header = struct.Struct(layout.endian + "IIII").unpack_from
    scale = layout.scale
    linktype = layout.linktype
    link = fixed_link_header(linktype)
    ip_off, et_off = link if link is not None else (-1, -1)
    min_len = ip_off + 40
    crc = zlib.crc32
    with open(layout.path, "rb", buffering=0) if held is None else contextlib.nullcontext(None) as f:
        pos = first
        if f is None:
            assert held is not None
            base, buf = held
        else:
            buf = os.pread(f.fileno(), _WINDOW, pos)
            base = pos
        while pos < stop:
            o = pos - base
            if o + 16 <= len(buf):
                sec, frac, incl, _orig = header(buf, o)
                if incl > MAX_RECORD_LENGTH:
                    raise CaptureFileError(f"record length {incl} exceeds {MAX_RECORD_LENGTH}: the file is "
                                           "damaged", path=layout.path, record=number + 1, offset=pos,
                                           field="incl_len")
                d = o + 16
                if d + incl <= len(buf):
                    number += 1
                    ip = d + ip_off
                    if (ip_off >= 0 and incl >= min_len and buf[ip] == 0x45 and buf[ip + 9] == 6
                            and not buf[ip + 6] & 0x3F and not buf[ip + 7]
                            and (et_off < 0 or (buf[d + et_off] == 8 and buf[d + et_off + 1] == 0))):
                        a = buf[ip + 12:ip + 16] + buf[ip + 20:ip + 22]
                        b = buf[ip + 16:ip + 20] + buf[ip + 22:ip + 24]
                        key: int | None = crc(a + b if a <= b else b + a, file_id)
                    else:
                        key = flow_key(linktype, buf, d, incl, file_id)
                    yield number, sec + frac * scale, key, pos + 16, incl
                    pos = pos + 16 + incl
                    continue
            want = max(_WINDOW, 16 + (incl if o + 16 <= len(buf) else 0))
            more = buf[o:o + want] if f is None else os.pread(f.fileno(), want, pos)
            if len(more) < 16 or (o + 16 <= len(buf) and len(more) < 16 + incl):
                what = "header" if len(more) < 16 else "data"
                raise CaptureFileError(f"record {what} cut short before the end of the file",
                                       path=layout.path, record=number + 1, offset=pos,
                                       field=f"record {what}")
            buf = more
            base = pos


def flow_volumes(layout: FileLayout, scan: SplitScan, file_id: int) -> dict[int, int]:
    """Bytes per flow key in the first :data:`SAMPLE` bytes of a scanned byte range (from its
    candidate boundary): a sample from every range of the file, so that the driver can deal flows
    out to partitions evenly without reading everything twice. A flow no sample saw is dealt by
    hash. Classic pcap only (pcapng flows are dealt by hash)."""
    volumes: dict[int, int] = {}
    if layout.kind != "pcap" or scan.first is None:
        return volumes
    stop = min(scan.next, scan.first + SAMPLE)
    for _number, _ts, key, _at, length in _pcap_keyed(layout, scan.first, stop, 0, file_id):
        if key is not None:
            volumes[key] = volumes.get(key, 0) + length
    return volumes


def _partition(key: int, number: int, assign: dict[int, int], partitions: int) -> int:
    if key == BAD:
        return number % partitions
    p = assign.get(key)
    return p if p is not None else key % partitions


def index_split(file_id: int, split: Split, layout: FileLayout, partitions: int,
                assign: dict[int, int]) -> Iterator[tuple[int, tuple[int, int, Index]]]:
    """Map side: the records of a resolved split as one index per flow partition,
    ``(partition, (file, split, index))``, records in record order. ``assign`` deals flow keys to
    partitions (the driver's even deal); a key it does not know goes by hash."""
    per = [Index() for _ in range(partitions)]
    if layout.kind == "pcap":
        records: Iterable[tuple[int, float, int | None, int, int]] = _pcap_keyed(
            layout, split.first, split.stop, split.number, file_id)
        link = layout.linktype
        for number, ts, key, at, length in records:
            if key is not None:
                per[_partition(key, number, assign, partitions)].add(number, ts, link, at, length)
    else:
        blocks: list[int] = []
        with open(layout.path, "rb", buffering=0) as raw:
            for number, ts, linktype, data in _pcapng_split(split, layout, blocks):
                key = flow_key(linktype, data, 0, len(data), file_id)
                if key is None:
                    continue
                start = blocks[-1]
                # a record's data starts 12 bytes into a simple packet block, 28 into the others
                at = start + (12 if os.pread(raw.fileno(), 4, start) in _SPB else 28)
                per[_partition(key, number, assign, partitions)].add(number, ts, linktype, at, len(data))
    for p, entries in enumerate(per):
        if entries:
            yield p, (file_id, split.index, entries)


def deal(volumes: dict[tuple[int, int], int], partitions: int) -> dict[int, dict[int, int]]:
    """Flows ``(file, key)`` to partitions, biggest first, each to the partition with the fewest bytes
    so far; per file, key → partition."""
    import heapq

    heap = [(0, p) for p in range(partitions)]
    out: dict[int, dict[int, int]] = {}
    for (file_id, key), size in sorted(volumes.items(), key=lambda kv: (-kv[1], kv[0])):
        load, p = heapq.heappop(heap)
        out.setdefault(file_id, {})[key] = p
        heapq.heappush(heap, (load + size, p))
    return out


def _pcapng_split(split: Split, layout: FileLayout,
                  blocks: list[int]) -> Iterator[tuple[int, float, int, bytes]]:
    from wire.capture._scapy_io import pcapng_records
    from wire.capture.records import CountingReader

    with open(layout.path, "rb") as raw:
        reader = CountingReader(raw)
        magic = reader.read(4)
        yield from pcapng_records(reader, layout.path, magic, number=split.number, replay=split.replay,
                                  start=split.first, stop=split.stop, block_offsets=blocks)


def read_indexed(path: str, index: Index) -> Iterator[tuple[int, float, int, bytes]]:
    """The records of an index (in its order), read from the file by offset: neighbours closer than
    64 KiB share one read, so a partition holding most of a file's records reads it sequentially
    and one holding few reads only those."""
    offsets = index.offsets
    lengths = index.lengths
    numbers = index.numbers
    times = index.times
    links = index.links
    fd = os.open(path, os.O_RDONLY)
    try:
        i = 0
        n = len(offsets)
        while i < n:
            start = offsets[i]
            end = start + lengths[i]
            j = i + 1
            while j < n:
                at = offsets[j]
                stop = at + lengths[j]
                if at < start or at - end > _GAP or stop - start > _RUN:
                    break
                if stop > end:
                    end = stop
                j += 1
            buf = os.pread(fd, end - start, start)
            if len(buf) < end - start:
                raise CaptureFileError("the file is shorter than when it was indexed (changed while read?)",
                                       path=path, record=numbers[i], offset=start)
            for k in range(i, j):
                at = offsets[k] - start
                yield numbers[k], times[k], links[k], buf[at:at + lengths[k]]
            i = j
    finally:
        os.close(fd)


# ---------------------------------------------------------------------------------------------- rows


class _Emitter:
    """Turns one file's decoder rows into table rows (tuples in the order of analysis.schema.RAW).

    What repeats is computed once: per connection its id, endpoints and ``host:port`` strings,
    per (code, direction) and per version their names."""

    def __init__(self, capture: str, unit: int, base: int) -> None:
        self.capture = capture
        self.prefix = (unit << 32) + base
        self._convs: dict[int, tuple[Any, ...]] = {}
        self._names: dict[tuple[int, int], tuple[str, str]] = {}
        self._versions: dict[int, str] = {}
        self._langs: dict[Any, str] = {}

    def conn_id(self, index: int) -> int:
        return self.prefix + index

    def _conv(self, conv: Any) -> tuple[Any, ...]:
        """(conn id, role, server, client, (src, sport, dst, dport) per direction)."""
        c = self._convs.get(conv.index)
        if c is None:
            c = self._convs[conv.index] = (
                self.prefix + conv.index, conv.role, f"{conv.server}:{conv.server_port}",
                f"{conv.client}:{conv.client_port}", conv.endpoints(0), conv.endpoints(1))
        return c

    def _code_names(self, code: int, flag: int) -> tuple[str, str]:
        key = (code, flag & 3)
        n = self._names.get(key)
        if n is None:
            n = self._names[key] = (code_name(code, bool(flag & FLAG_RESPONSE)), command_type(flag))
        return n

    def _language(self, lang: Any) -> str:
        language = self._langs.get(lang)
        if language is None:
            language = self._langs[lang] = getattr(lang, "name", str(lang))
        return language

    def rows(self, dec: CaptureDecoder, rows: list[Any], emit_record: int, finishing: bool,
             out: list[list[tuple[Any, ...]]]) -> None:
        firsts = dec.reassembler.connections
        commands = out[COMMANDS]
        for k, row in enumerate(rows):
            if finishing:
                conv = row.conv
                first = firsts[conv.index].first_record if conv is not None else 0
                index = (first << _FINISH_SHIFT) + k
            else:
                index = k
            t = type(row)
            if t is CommandRow:
                commands.append(self.command(row, emit_record, index))
                cmd = row.command
                if cmd.flag & FLAG_RESPONSE and row.request is not None:
                    out[EXCHANGES].append(self.exchange(row.request, row))
                if cmd.body:
                    self.messages(row, out[MESSAGES])
            elif t is HaRow:
                out[HA].append(self.ha(row, emit_record, index))
            else:
                out[PROBLEMS].append(self.problem(row, emit_record, index))

    def command(self, row: CommandRow, emit_record: int, emit_index: int) -> tuple[Any, ...]:
        cmd = row.command
        conn, role, server, _client, c2s, s2c = self._conv(row.conv)
        flag = cmd.flag
        ext = cmd.ext_fields
        req = row.request
        request: tuple[int | None, int | None, int | None, float | None]
        if req is not None:
            rc = req.command
            topic, group, queue = _subject(rc.ext_fields if flag & FLAG_RESPONSE else ext)
            request = (rc.code, req.record, req.offset, row.ts - req.ts_end)
        else:
            topic, group, queue = _subject(ext)
            request = (None, None, None, None)
        code = cmd.code
        name, kind = self._code_names(code, flag)
        language = self._language(cmd.language)
        version = cmd.version
        vname = self._versions.get(version)
        if vname is None:
            vname = self._versions[version] = version_name(version)
        body = cmd.body
        return (
            self.capture,
            conn,
            role,
            row.record,
            row.ts,
            row.ts_end,
            "c2s" if row.direction == 0 else "s2c",
            *(c2s if row.direction == 0 else s2c),
            server,
            row.offset,
            row.frame_no,
            row.size,
            row.header_length,
            _SERIALIZE[cmd.serialize_type],
            kind,
            code,
            name,
            flag,
            cmd.opaque,
            language,
            version,
            vname,
            cmd.remark,
            ext,
            len(body) if body else 0,
            topic,
            group,
            queue,
            *request,
            emit_record,
            emit_index,
        )

    def exchange(self, req: CommandRow, resp: CommandRow | None) -> tuple[Any, ...]:
        cmd = req.command
        conn, role, server, client, _c2s, _s2c = self._conv(req.conv)
        topic, group, queue = _subject(cmd.ext_fields)
        answer: tuple[Any, ...]
        if resp is not None:
            r = resp.command
            answer = (resp.record, resp.offset, resp.ts, resp.size, r.code, code_name(r.code, True), r.remark,
                      resp.ts - req.ts_end)
        else:
            answer = (None, None, None, None, None, None, None, None)
        return (
            self.capture,
            conn,
            role,
            client,
            server,
            "c2s" if req.direction == 0 else "s2c",
            cmd.code,
            self._code_names(cmd.code, 0)[0],
            cmd.opaque,
            self._language(cmd.language),
            cmd.version,
            topic,
            group,
            queue,
            req.record,
            req.offset,
            req.ts,
            req.ts_end,
            req.size,
            *answer,
        )

    def messages(self, row: CommandRow, out: list[tuple[Any, ...]]) -> None:
        cmd = row.command
        body = cmd.body or b""
        if not cmd.flag & FLAG_RESPONSE:
            if cmd.code in _SEND_CODES:
                self._sent(row, out)
            return
        req = row.request
        if cmd.code != 0 or req is None or req.command.code not in _STORED:
            return
        source = _STORED[req.command.code]
        try:
            stored = decode_messages(body)
        except DecodeError as err:
            out.append(self._message(row, source, None, None, None, None, {}, len(body), None, None, None,
                                     None, str(err)))
            return
        for m in stored:
            props = m.properties
            try:
                offset_id: str | None = m.offset_msg_id
            except DecodeError:
                offset_id = None
            out.append(self._message(row, source, m.topic, m.queue_id, m.queue_offset,
                                     props.get("UNIQ_KEY") or offset_id, props, len(m.body), m.born_timestamp,
                                     m.store_timestamp, m.reconsume_times,
                                     f"{m.store_host.host}:{m.store_host.port}", None))

    def _sent(self, row: CommandRow, out: list[tuple[Any, ...]]) -> None:
        cmd = row.command
        body = cmd.body or b""
        ext = cmd.ext_fields
        v2 = "b" in ext and "topic" not in ext

        def get(name: str) -> str | None:
            return ext.get(_V2[name] if v2 else name)

        topic = get("topic")
        queue = _int(get("queueId"))
        born = _int(get("bornTimestamp"))
        reconsume = _int(get("reconsumeTimes"))
        try:
            props = decode_properties(get("properties") or "")
        except DecodeError as err:
            out.append(self._message(row, "send", topic, queue, None, None, {}, len(body), born, None,
                                     reconsume, None, str(err)))
            return
        if cmd.code == 320 or get("batch") == "true":
            try:
                entries = decode_batch(body)
            except DecodeError as err:
                out.append(self._message(row, "send", topic, queue, None, None, props, len(body), born, None,
                                         reconsume, None, str(err)))
                return
            for e in entries:
                p = {**props, **e.properties}
                out.append(self._message(row, "send", topic, queue, None, p.get("UNIQ_KEY"), p, len(e.body),
                                         born, None, reconsume, None, None))
            return
        out.append(self._message(row, "send", topic, queue, None, props.get("UNIQ_KEY"), props, len(body),
                                 born, None, reconsume, None, None))

    def _message(self, row: CommandRow, source: str, topic: str | None, queue: int | None,
                 queue_offset: int | None, msg_id: str | None, props: Any, size: int, born: int | None,
                 stored: int | None, reconsume: int | None, store_host: str | None,
                 error: str | None) -> tuple[Any, ...]:
        conn, _role, server, client, _c2s, _s2c = self._conv(row.conv)
        req = row.request
        if req is not None:
            group = req.command.ext_fields.get("consumerGroup")
        else:
            ext = row.command.ext_fields
            group = ext.get("a" if "b" in ext else "producerGroup")
        return (
            self.capture,
            conn,
            source,
            row.record,
            row.ts,
            client,
            server,
            group,
            topic,
            queue,
            queue_offset,
            msg_id,
            props.get("KEYS"),
            props.get("TAGS"),
            size,
            born,
            stored,
            reconsume,
            store_host,
            error,
        )

    def ha(self, row: HaRow, emit_record: int, emit_index: int) -> tuple[Any, ...]:
        f = row_fields(row)
        conv = row.conv
        return (
            self.capture,
            self.prefix + conv.index,
            row.record,
            row.ts,
            row.ts_end,
            "c2s" if row.direction == 0 else "s2c",
            f"{conv.server}:{conv.server_port}",
            f"{conv.client}:{conv.client_port}",
            row.offset,
            row.size,
            row.variant,
            f["rocketmq.ha.type"],
            f.get("rocketmq.ha.offset"),
            f.get("rocketmq.ha.data_length"),
            f.get("rocketmq.ha.heartbeat"),
            f.get("rocketmq.ha.epoch"),
            f.get("rocketmq.ha.epoch_start_offset"),
            f.get("rocketmq.ha.confirm_offset"),
            f.get("rocketmq.ha.max_phy_offset"),
            f.get("rocketmq.ha.last_epoch"),
            emit_record,
            emit_index,
        )

    def problem(self, row: ProblemRow, emit_record: int, emit_index: int) -> tuple[Any, ...]:
        f = row_fields(row)
        conv = row.conv
        d = row.direction
        return (
            self.capture,
            self.prefix + conv.index if conv is not None else None,
            conv.index if conv is not None else None,
            row.record,
            row.ts,
            None if d is None else ("c2s" if d == 0 else "s2c"),
            row.offset,
            row.verdict,
            row.message,
            row.length,
            _text(f.get("rocketmq.problem.field")),
            _text(f.get("rocketmq.problem.expected")),
            _text(f.get("rocketmq.problem.found")),
            emit_record,
            emit_index,
        )

    def connections(self, dec: CaptureDecoder, out: list[list[tuple[Any, ...]]]) -> None:
        for tcp, conv in zip(dec.reassembler.connections, dec.conversations, strict=True):
            handler: Any = tcp.handler
            for pending in getattr(handler, "pending", ()):
                for req in sorted(pending.values(), key=lambda r: (r.record, r.offset)):
                    out[EXCHANGES].append(self.exchange(req, None))
            out[CONNECTIONS].append((
                self.capture,
                self.prefix + conv.index,
                conv.index,
                tcp.first_record,
                conv.client,
                conv.client_port,
                conv.server,
                conv.server_port,
                conv.role,
                conv.protocol,
                conv.ha_variant,
                conv.first_ts,
                conv.last_ts,
                conv.syn,
                conv.frames[0],
                conv.frames[1],
                conv.bytes[0],
                conv.bytes[1],
                conv.problems,
                conv.missing,
                conv.unanswered,
            ))


def _text(v: Any) -> str | None:
    if v is None:
        return None
    v = plain(v)
    return v if isinstance(v, str) else str(v)


def _int(v: str | None) -> int | None:
    if v is None or not v.lstrip("-").isdigit():
        return None
    return int(v)


def _subject(ext: Any) -> tuple[str | None, str | None, int | None]:
    """(topic, group, queue id) named by a request header, where it has them."""
    topic = ext.get("topic") or (ext.get("b") if "a" in ext else None)
    group = (
        ext.get("consumerGroup")
        or ext.get("producerGroup")
        or ext.get("group")
        or (ext.get("a") if "b" in ext else None)
    )
    queue = _int(ext.get("queueId") if "queueId" in ext else ext.get("e") if "b" in ext else None)
    return topic, group, queue


# ---------------------------------------------------------------------------------------------- decoding


class _TimelineDecoder(CaptureDecoder):
    """A decoder that also knows the Java versions other partitions saw before each record.

    ``CaptureDecoder.java_version`` (the newest Java ``version`` seen so far in the capture) names
    the AutoSwitch variant of an HA stream joined after its handshake; a partition sees only its
    own connections, so the driver hands it the whole file's timeline when that matters.
    """

    def __init__(self, timeline: list[tuple[int, int]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.timeline = timeline
        self.at = 0

    def catch_up(self, record: int) -> None:
        """Take in the versions seen before ``record``."""
        tl = self.timeline
        while self.at < len(tl) and tl[self.at][0] < record:
            if tl[self.at][1] > self.java_version:
                self.java_version = tl[self.at][1]
            self.at += 1

    def feed(self, record: int, ts: float, linktype: int, data: bytes) -> None:
        self.catch_up(record)
        super().feed(record, ts, linktype, data)

    def finish(self) -> None:
        self.catch_up(FINISHED)
        super().finish()


@dataclass
class UnitReport:
    """What a decoding unit tells the driver (plain data; small)."""

    unit: int
    #: rows written per table
    rows: list[int] = field(default_factory=lambda: [0] * len(TABLES))
    #: (file, conn, first record) of every connection
    connections: list[tuple[int, int, int]] = field(default_factory=list)
    #: (file, record, version) where the newest Java version seen by the unit rose
    versions: list[tuple[int, int, int]] = field(default_factory=list)
    #: (file, conn, record, version): a connection found to be HA, and the version the decision saw
    decisions: list[tuple[int, int, int, int]] = field(default_factory=list)
    #: records read
    records: int = 0
    #: the unit wrote the Parquet files itself (whole files: its connection numbers are streams)
    final: bool = False


@dataclass(frozen=True)
class WholeFile:
    """A file a unit reads whole: a local path, or the bytes Spark read from its file system."""

    file_id: int
    path: str
    content: bytes | None = None


def decode_unit(unit: int, records: Iterable[tuple[int, int, float, int, bytes]], captures: list[str],
                roles: PortRoles, raw_dir: str,
                timelines: dict[int, list[tuple[int, int]]] | None = None) -> UnitReport:
    """A flow partition: feed records ``(file, number, ts, linktype, data)``, in (file, number) order,
    through one decoder per file, and write the unit's table rows as Arrow files under
    ``raw_dir/u<unit>`` (units of whole files: :func:`decode_whole`).

    Besides the rows it reports where the newest Java version seen rises and where a connection is
    found to be HA, with the version the decision saw; the driver checks those against the whole
    file and decodes the unit again with ``timelines`` where they differ.
    """
    report = UnitReport(unit)
    out: list[list[tuple[Any, ...]]] = [[] for _ in TABLES]
    files = TableFiles(os.path.join(raw_dir, f"u{unit:06d}"), part=unit)
    dec: CaptureDecoder | None = None
    emitter: _Emitter | None = None
    current = -1
    undecided: list[Any] = []
    seen = 0
    base = 0
    try:
        for file_id, number, ts, linktype, data in records:
            if file_id != current:
                if dec is not None and emitter is not None:
                    _finish(dec, emitter, current, undecided, report, out)
                    files.write(out, report.rows, emitter.prefix)
                    base += len(dec.conversations)
                current = file_id
                tl = (timelines or {}).get(file_id)
                if tl is not None:
                    dec = _TimelineDecoder(tl, roles=roles, capture=captures[file_id])
                else:
                    dec = CaptureDecoder(roles=roles, capture=captures[file_id])
                emitter = _Emitter(captures[file_id], unit, base)
                undecided = []
                seen = 0
            assert dec is not None and emitter is not None
            before = dec.java_version
            dec.feed(number, ts, linktype, data)
            if dec.java_version > before:
                report.versions.append((file_id, number, dec.java_version))
            if len(dec.conversations) > seen:
                undecided.extend(dec.conversations[seen:])
                seen = len(dec.conversations)
            if undecided:
                _decisions(emitter, file_id, undecided, number, before, report)
            if dec.rows:
                emitter.rows(dec, dec.take(), number, False, out)
                if len(out[COMMANDS]) >= 8192 or len(out[MESSAGES]) >= 8192:
                    files.write(out, report.rows, emitter.prefix)
        if dec is not None and emitter is not None:
            _finish(dec, emitter, current, undecided, report, out)
            files.write(out, report.rows, emitter.prefix)
        files.close()
    except BaseException:
        files.discard()
        raise
    return report


def _decisions(emitter: _Emitter, file_id: int, undecided: list[Any], number: int, version: int,
               report: UnitReport) -> None:
    for conv in list(undecided):
        if conv.ha_variant is not None:
            undecided.remove(conv)
            report.decisions.append((file_id, emitter.conn_id(conv.index), number, version))
        elif conv.protocol in ("remoting", "other"):
            undecided.remove(conv)


def _finish(dec: CaptureDecoder, emitter: _Emitter, file_id: int, undecided: list[Any], report: UnitReport,
            out: list[list[tuple[Any, ...]]]) -> None:
    before = dec.java_version
    dec.finish()
    _decisions(emitter, file_id, undecided, FINISHED, before, report)
    emitter.rows(dec, dec.take(), FINISHED, True, out)
    emitter.connections(dec, out)
    report.records += dec.records
    for tcp in dec.reassembler.connections:
        report.connections.append((file_id, emitter.conn_id(tcp.index), tcp.first_record))


def indexed_records(items: Iterable[tuple[int, tuple[int, int, Index | Carried]]],
                    paths: list[str]) -> Iterator[tuple[int, int, float, int, bytes]]:
    """A flow partition's records in (file, record) order, read by offset from its indexes (or, for
    byte ranges of remote files, from the bytes that came with them)."""
    chunks = sorted((v for _k, v in items), key=lambda v: (v[0], v[1]))
    for file_id, _split, index in chunks:
        got = index.records() if isinstance(index, Carried) else read_indexed(paths[file_id], index)
        for number, ts, linktype, data in got:
            yield file_id, number, ts, linktype, data


# ---------------------------------------------------------------------------------------------- remote files


@dataclass(frozen=True)
class Chunk:
    """One byte range of a remote file as Spark's text source cuts it (at line ends): the bytes
    ``[start, end)`` of file ``file_id``, the ``index``-th range of the file."""

    file_id: int
    index: int
    start: int
    end: int


class Carried:
    """The records of a remote byte range that one flow partition decodes, with their bytes (an
    executor cannot read a remote file by offset, so the bytes travel with the index)."""

    __slots__ = ("index", "data")

    def __init__(self, index: Index, data: bytes) -> None:
        self.index = index
        self.data = data

    def records(self) -> Iterator[tuple[int, float, int, bytes]]:
        ix, data = self.index, self.data
        for number, ts, link, at, length in zip(ix.numbers, ix.times, ix.links, ix.offsets, ix.lengths,
                                                strict=True):
            yield number, ts, link, data[at:at + length]

    def __reduce__(self) -> tuple[Any, ...]:
        return (Carried, (self.index, self.data))


def line_batches(messages: Iterable[bytes]) -> Iterator[Any]:
    """Arrow record batches of Spark's text-source rows ``(f: file name, s: range start, v: a line)``
    from the bytes of their IPC messages (Spark's ``toArrowBatchRdd``)."""
    import pyarrow as pa

    schema = pa.schema([("f", pa.string()), ("s", pa.int64()), ("v", pa.binary())])
    for message in messages:
        yield pa.ipc.read_record_batch(pa.py_buffer(message), schema)


def joined_lines(batches: Iterable[Any]) -> Iterator[tuple[str, int, bytes]]:
    """Arrow batches of Spark's text-source rows ``(f: file name, s: range start, v: a line)``, lines
    cut at ``\\n`` (which they lose) → per batch, ``(file name, range start, piece)`` for each byte
    range in it, its lines joined with ``\\n`` again (Arrow's own join: no Python object per
    line); :func:`range_bytes` puts the pieces of a range together."""
    import pyarrow as pa
    import pyarrow.compute as pc

    newline = pa.scalar(b"\n", pa.binary())
    for batch in batches:
        n = batch.num_rows
        if not n:
            continue
        names, starts, lines = batch.column(0), batch.column(1), batch.column(2)
        cuts = [0]
        if names[0].as_py() != names[n - 1].as_py() or starts[0].as_py() != starts[n - 1].as_py():
            f, b = names.to_pylist(), starts.to_pylist()
            cuts += [i for i in range(1, n) if b[i] != b[i - 1] or f[i] != f[i - 1]]
        firsts = pa.array(cuts, pa.int32())
        cuts.append(n)
        joined = pc.binary_join(pa.ListArray.from_arrays(pa.array(cuts, pa.int32()), lines), newline)
        yield from zip(names.take(firsts).to_pylist(), starts.take(firsts).to_pylist(), joined.to_pylist(),
                       strict=True)


def range_bytes(rows: Iterable[tuple[str, int, bytes]]) -> Iterator[tuple[str, int, bytes]]:
    """Pieces ``(file name, range start, lines)`` of :func:`joined_lines`, in the order of one partition
    → ``(file name, range start, bytes)`` of each byte range, exactly as in the file: its pieces
    joined with the ``\\n`` that ended each (a file that does not end in ``\\n`` gets one byte
    too many at its end; the range's length, :class:`Chunk`, drops it)."""
    current: tuple[str, int] | None = None
    pieces: list[bytes] = []
    for name, start, piece in rows:
        key = (name, start)
        if key != current:
            if current is not None:
                yield current[0], current[1], b"\n".join(pieces) + b"\n"
            current = key
            pieces = []
        pieces.append(piece)
    if current is not None:
        yield current[0], current[1], b"\n".join(pieces) + b"\n"


class Pieces(io.RawIOBase):
    """Bytes of a file at a few offsets, held in memory and read as the file is (seek, read): a read
    where nothing is held returns nothing, as at the end of a file. For a pcapng byte range read
    with the blocks before it that its reader needs (the section header, interface descriptions)."""

    def __init__(self, pieces: dict[int, bytes]) -> None:
        super().__init__()
        self.pieces = sorted(pieces.items())
        self.pos = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def seek(self, offset: int, whence: int = 0) -> int:
        self.pos = offset + (self.pos if whence == 1 else 0)
        return self.pos

    def tell(self) -> int:
        return self.pos

    def read(self, n: int = -1) -> bytes:
        for at, data in self.pieces:
            if at <= self.pos < at + len(data):
                o = self.pos - at
                out = data[o:] if n is None or n < 0 else data[o:o + n]
                self.pos += len(out)
                return out
        return b""


def scan_chunk(chunk: Chunk, data: bytes, seam: bytes, layout: FileLayout) -> SplitScan:
    """The scan of a remote byte range (:func:`wire.capture.splits.scan_split`) from its bytes and
    the first bytes after it (``seam``: the last record header may straddle the end; a pcapng
    block longer than the seam leaves the range without a candidate, and the driver walks it)."""
    source = cast(BinaryIO, ByteRange(chunk.start, data[:chunk.end - chunk.start] + seam))
    try:
        return scan_split(layout, chunk.index, chunk.start, chunk.end, source=source)
    except CaptureFileError:
        # bytes this task does not hold (or damage, which the driver's walk reports with its place)
        state = (layout.endian, 0 if chunk.start <= layout.data_start else UNKNOWN)
        return SplitScan(chunk.index, chunk.start, chunk.end, None, chunk.end, state_start=state,
                         state_end=state)


def carry_split(chunk: Chunk, data: bytes, seam: bytes, split: Split, layout: FileLayout, partitions: int,
                state: dict[int, bytes] | None = None) -> Iterator[tuple[int, tuple[int, int, Carried]]]:
    """Map side for a remote byte range: its resolved split's records (``seam``: the bytes after the
    range up to the split's end) per flow partition, with their bytes, as :func:`index_split`
    gives the index of a local one. pcapng: ``state`` holds the file's bytes before its first
    block and the state blocks the split replays, by offset."""
    data = data[:chunk.end - chunk.start]
    if layout.kind == "pcapng":
        yield from _carry_pcapng(chunk, data + seam, split, layout, partitions, state or {})
        return
    buf = data + seam
    base = chunk.start
    link = layout.linktype
    file_id = chunk.file_id
    index = [Index() for _ in range(partitions)]
    parts: list[list[bytes]] = [[] for _ in range(partitions)]
    sizes = [0] * partitions
    for number, ts, key, at, length in _pcap_keyed(layout, split.first, split.stop, split.number, file_id,
                                                   (base, buf)):
        if key is not None:
            p = _partition(key, number, {}, partitions)
            index[p].add(number, ts, link, sizes[p], length)
            parts[p].append(buf[at - base:at - base + length])
            sizes[p] += length
    for p in range(partitions):
        if index[p]:
            yield p, (file_id, chunk.index, Carried(index[p], b"".join(parts[p])))


def _carry_pcapng(chunk: Chunk, buf: bytes, split: Split, layout: FileLayout, partitions: int,
                  state: dict[int, bytes]) -> Iterator[tuple[int, tuple[int, int, Carried]]]:
    from wire.capture._scapy_io import pcapng_records

    index = [Index() for _ in range(partitions)]
    parts: list[list[bytes]] = [[] for _ in range(partitions)]
    sizes = [0] * partitions
    reader = CountingReader(cast(BinaryIO, Pieces({**state, chunk.start: buf})))
    magic = reader.read(4)
    for number, ts, linktype, data in pcapng_records(reader, layout.path, magic, number=split.number,
                                                     replay=split.replay, start=split.first, stop=split.stop):
        key = flow_key(linktype, data, 0, len(data), chunk.file_id)
        if key is not None:
            p = _partition(key, number, {}, partitions)
            index[p].add(number, ts, linktype, sizes[p], len(data))
            parts[p].append(data)
            sizes[p] += len(data)
    for p in range(partitions):
        if index[p]:
            yield p, (chunk.file_id, chunk.index, Carried(index[p], b"".join(parts[p])))


def decode_whole(unit: int, files: Iterable[WholeFile], captures: list[str], roles: PortRoles, raw_dir: str,
                 out_dir: str) -> UnitReport:
    """A unit of whole files: each decoded start to end as ``mqctl pcap decode`` decodes it (classic
    pcap through the decoder's hot loop, :func:`wire.capture.hotpath.decode_classic`), its rows
    written as the tables' Parquet files under ``out_dir`` (its connection numbers are the streams).

    The hot loop hands the rows on after each record that produced any, and the decoder's record
    count is then that record's number: the ``emit_record`` :func:`decode_unit` gives them. A
    whole file needs no Java version timeline (its decoder sees every record), so the report
    carries none."""
    report = UnitReport(unit, final=True)
    out: list[list[tuple[Any, ...]]] = [[] for _ in TABLES]
    tables = TableFiles(os.path.join(raw_dir, f"u{unit:06d}"), out=out_dir, part=unit)
    base = 0
    try:
        for wf in sorted(files, key=lambda w: w.file_id):
            dec = CaptureDecoder(roles=roles, capture=captures[wf.file_id])
            emitter = _Emitter(captures[wf.file_id], unit, base)
            for emit_record, rows in _whole_rows(dec, wf):
                emitter.rows(dec, rows, emit_record, False, out)
                if len(out[COMMANDS]) >= 8192 or len(out[MESSAGES]) >= 8192:
                    tables.write(out, report.rows, emitter.prefix)
            _finish(dec, emitter, wf.file_id, [], report, out)
            tables.write(out, report.rows, emitter.prefix)
            base += len(dec.conversations)
        tables.close()
    except BaseException:
        tables.discard()
        raise
    return report


def _whole_rows(dec: CaptureDecoder, wf: WholeFile) -> Iterator[tuple[int, list[Any]]]:
    """(record, the rows feeding it produced) over a whole file, for each record that produced any
    (bytes Spark read go through a local temporary file, so that every reader, gzip and pcapng
    included, works as on a local path)."""
    if wf.content is None:
        yield from _source_rows(dec, wf.path)
        return
    fd, tmp = tempfile.mkstemp(prefix="mqctl-capture-", suffix=".pcap")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(wf.content)
        try:
            yield from _source_rows(dec, tmp)
        except CaptureFileError as err:
            err.path = wf.path  # name the file the user gave, not the local copy
            raise
    finally:
        os.unlink(tmp)


def _source_rows(dec: CaptureDecoder, path: str) -> Iterator[tuple[int, list[Any]]]:
    with CaptureSource(path) as source:
        if source.classic is not None:
            # batch=1: the rows go out before the next record is read, and dec.records is then up to date
            for rows in decode_classic(dec, source.classic, batch=1):
                yield dec.records, rows
            if dec.rows:
                yield dec.records, dec.take()
            return
        feed = dec.feed
        for number, ts, linktype, data in source.records():
            feed(number, ts, linktype, data)
            if dec.rows:
                yield number, dec.take()


def finish_unit(unit: int, raw_dir: str, out: str, streams: dict[int, int],
                part: int) -> list[int]:
    """Second pass of a unit: its Arrow files become the Parquet files of the tables, with the
    ``stream`` column from the driver's ranking (``streams``: conn → stream number); returns the
    rows written per table. The Arrow files are deleted."""
    src = os.path.join(raw_dir, f"u{unit:06d}")
    counts = finish_tables(src, out, streams, part)
    shutil.rmtree(src, ignore_errors=True)
    return counts


__all__ += ["Carried", "Chunk", "Pieces", "carry_split", "decode_whole", "indexed_records", "joined_lines",
            "line_batches", "range_bytes", "scan_chunk",
            "split_records"]
