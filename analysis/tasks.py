# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What runs on the executors: split scans, the map from records to flows, and per-flow decoding.

Nothing here imports pyspark at module level, and nothing here decodes on its own: records come
from :mod:`wire.capture.splits` (the same readers as ``mqctl pcap``), packets are parsed by
:func:`wire.capture.parse_packet`, and each reduce partition feeds its records, in capture order,
to one :class:`wire.capture.CaptureDecoder` per capture file: the same reassembly, the same gap
verdicts, the same opaque pairing as ``mqctl pcap decode``. Rows leave as flat tuples (STYLE A1);
a body that does not decode becomes a row with an error (A3), never a failed task.

Ordering. ``mqctl pcap decode`` prints rows in the order their last byte was captured. Here each
row carries ``emit_record`` (the record whose feeding produced it) and ``emit_index`` (its place
among the rows of that record); rows that only the end of the capture produces (a stream cut short,
a hole never filled) get ``emit_record`` = :data:`FINISHED` and ``emit_index`` ordered by their
connection's first record, which is how the sequential decoder flushes connections. Sorting by the
two columns gives ``mqctl pcap decode``'s order.

Stream numbers. ``tcp.stream`` counts connections in the order of their first record over the
whole file, which a partition cannot see; the partition emits a local connection id and the
connection's first record, and the driver ranks connections by first record (:mod:`analysis.job`).
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Iterable, Iterator
from typing import Any

from wire.capture import CaptureDecoder, CommandRow, HaRow, PacketError, PortRoles, ProblemRow, parse_packet
from wire.capture.fields import code_name, command_type, plain, row_fields
from wire.capture.splits import FileLayout, Split, SplitScan, scan_split, split_records
from wire.codes import version_name
from wire.errors import DecodeError
from wire.remoting import FLAG_RESPONSE

__all__ = [
    "CONNECTIONS",
    "COMMANDS",
    "EXCHANGES",
    "FINISHED",
    "HA",
    "MESSAGES",
    "PROBLEMS",
    "TABLES",
    "decode_partition",
    "key_records",
    "scan_task",
]

# table numbers of the rows the reduce side emits: (table, row tuple)
COMMANDS, EXCHANGES, MESSAGES, HA, PROBLEMS, CONNECTIONS, VERSIONS, DECISIONS = range(8)
TABLES = ("commands", "exchanges", "messages", "ha", "problems", "connections")

_ETH_IP4_PORTS = struct.Struct(">4s4sHH")
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
#: ``emit_record`` of the rows the end of the capture produces (after every record)
FINISHED = 1 << 62


def scan_task(item: tuple[FileLayout, int, int, int]) -> SplitScan:
    layout, index, start, end = item
    return scan_split(layout, index, start, end)


def _ip4_ports(linktype: int, data: bytes) -> tuple[bytes, int, bytes, int] | None:
    """(src, sport, dst, dport) of an Ethernet/IPv4/TCP packet without options or fragments, the
    shape :meth:`CaptureDecoder.feed` takes its own short way for; else None (parse_packet decides)."""
    if (
        linktype == 1
        and len(data) >= 54
        and data[12] == 8
        and data[13] == 0
        and data[14] == 0x45
        and data[23] == 6
        and not data[20] & 0x3F
        and not data[21]
    ):
        src, dst, sport, dport = _ETH_IP4_PORTS.unpack_from(data, 26)
        return src, sport, dst, dport
    return None


def key_records(
    splits: Iterable[tuple[int, Split, FileLayout]], partitions: int
) -> Iterator[tuple[int, tuple[int, int, float, int, bytes]]]:
    """Map side: each record of the splits as ``(reduce partition, (file, record, ts, linktype, data))``.

    The partition is a hash of the file and the connection's two endpoints (in a fixed order), so
    both directions of a connection meet in one partition. A record that is not TCP is left out (the
    decoder only counts it); one whose headers do not parse goes to any partition, whose decoder
    reports it as ``mqctl pcap`` does.
    """
    for file_id, split, layout in splits:
        for number, ts, linktype, data in split_records(split, layout):
            ends = _ip4_ports(linktype, data)
            if ends is None:
                try:
                    seg = parse_packet(linktype, data)
                except PacketError:
                    yield number % partitions, (file_id, number, ts, linktype, data)
                    continue
                if seg is None:
                    continue
                ends = seg[0], seg[1], seg[2], seg[3]
            a = ends[0] + ends[1].to_bytes(2, "big")
            b = ends[2] + ends[3].to_bytes(2, "big")
            # a hash that is the same in every Python process (str/bytes hash() is salted per process)
            key = zlib.crc32(a + b if a <= b else b + a, file_id)
            yield key % partitions, (file_id, number, ts, linktype, data)


class _Emitter:
    """Turns one file's decoder rows into table rows."""

    def __init__(self, capture: str, part: int) -> None:
        self.capture = capture
        self.part = part

    def conn_id(self, index: int) -> int:
        return (self.part << 32) | index

    def rows(
        self, dec: CaptureDecoder, rows: list[Any], emit_record: int, finishing: bool
    ) -> Iterator[tuple[int, tuple[Any, ...]]]:
        firsts = dec.reassembler.connections
        for k, row in enumerate(rows):
            if finishing:
                conv = row.conv
                first = firsts[conv.index].first_record if conv is not None else 0
                index = (first << _FINISH_SHIFT) + k
            else:
                index = k
            t = type(row)
            if t is CommandRow:
                yield COMMANDS, self.command(row, emit_record, index)
                cmd = row.command
                if cmd.flag & FLAG_RESPONSE and row.request is not None:
                    yield EXCHANGES, self.exchange(row.request, row)
                yield from self.messages(row)
            elif t is HaRow:
                yield HA, self.ha(row, emit_record, index)
            else:
                yield PROBLEMS, self.problem(row, emit_record, index)

    def command(self, row: CommandRow, emit_record: int, emit_index: int) -> tuple[Any, ...]:
        cmd = row.command
        conv = row.conv
        flag = cmd.flag
        response = bool(flag & FLAG_RESPONSE)
        src, sport, dst, dport = conv.endpoints(row.direction)
        ext = cmd.ext_fields
        lang = cmd.language
        req = row.request
        topic, group, queue = _subject(req.command.ext_fields if response and req is not None else ext)
        return (
            self.capture,
            self.conn_id(conv.index),
            conv.role,
            row.record,
            row.ts,
            row.ts_end,
            "c2s" if row.direction == 0 else "s2c",
            src,
            sport,
            dst,
            dport,
            f"{conv.server}:{conv.server_port}",
            row.offset,
            row.frame_no,
            row.size,
            row.header_length,
            cmd.serialize_type.name,
            command_type(flag),
            cmd.code,
            code_name(cmd.code, response),
            flag,
            cmd.opaque,
            getattr(lang, "name", str(lang)),
            cmd.version,
            version_name(cmd.version),
            cmd.remark,
            dict(ext),
            len(cmd.body) if cmd.body else 0,
            topic,
            group,
            queue,
            req.command.code if req is not None else None,
            req.record if req is not None else None,
            req.offset if req is not None else None,
            row.ts - req.ts_end if req is not None else None,
            emit_record,
            emit_index,
        )

    def exchange(self, req: CommandRow, resp: CommandRow | None) -> tuple[Any, ...]:
        cmd = req.command
        conv = req.conv
        topic, group, queue = _subject(cmd.ext_fields)
        r = resp.command if resp is not None else None
        return (
            self.capture,
            self.conn_id(conv.index),
            conv.role,
            f"{conv.client}:{conv.client_port}",
            f"{conv.server}:{conv.server_port}",
            "c2s" if req.direction == 0 else "s2c",
            cmd.code,
            code_name(cmd.code, False),
            cmd.opaque,
            getattr(cmd.language, "name", str(cmd.language)),
            cmd.version,
            topic,
            group,
            queue,
            req.record,
            req.offset,
            req.ts,
            req.ts_end,
            req.size,
            resp.record if resp is not None else None,
            resp.offset if resp is not None else None,
            resp.ts if resp is not None else None,
            resp.size if resp is not None else None,
            r.code if r is not None else None,
            code_name(r.code, True) if r is not None else None,
            r.remark if r is not None else None,
            resp.ts - req.ts_end if resp is not None else None,
        )

    def messages(self, row: CommandRow) -> Iterator[tuple[int, tuple[Any, ...]]]:
        cmd = row.command
        body = cmd.body
        if not body:
            return
        if not cmd.flag & FLAG_RESPONSE:
            if cmd.code in _SEND_CODES:
                yield from self._sent(row)
            return
        req = row.request
        if cmd.code != 0 or req is None or req.command.code not in _STORED:
            return
        from wire.message import decode_messages

        source = _STORED[req.command.code]
        try:
            stored = decode_messages(body)
        except DecodeError as err:
            yield (
                MESSAGES,
                self._message(
                    row, source, None, None, None, None, {}, len(body), None, None, None, None, str(err)
                ),
            )
            return
        for m in stored:
            props = m.properties
            try:
                offset_id: str | None = m.offset_msg_id
            except DecodeError:
                offset_id = None
            yield (
                MESSAGES,
                self._message(
                    row,
                    source,
                    m.topic,
                    m.queue_id,
                    m.queue_offset,
                    props.get("UNIQ_KEY") or offset_id,
                    props,
                    len(m.body),
                    m.born_timestamp,
                    m.store_timestamp,
                    m.reconsume_times,
                    f"{m.store_host.host}:{m.store_host.port}",
                    None,
                ),
            )

    def _sent(self, row: CommandRow) -> Iterator[tuple[int, tuple[Any, ...]]]:
        from wire.message import decode_batch, decode_properties

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
            yield (
                MESSAGES,
                self._message(
                    row,
                    "send",
                    topic,
                    queue,
                    None,
                    None,
                    {},
                    len(body),
                    born,
                    None,
                    reconsume,
                    None,
                    str(err),
                ),
            )
            return
        if cmd.code == 320 or get("batch") == "true":
            try:
                entries = decode_batch(body)
            except DecodeError as err:
                yield (
                    MESSAGES,
                    self._message(
                        row,
                        "send",
                        topic,
                        queue,
                        None,
                        None,
                        props,
                        len(body),
                        born,
                        None,
                        reconsume,
                        None,
                        str(err),
                    ),
                )
                return
            for e in entries:
                p = {**props, **e.properties}
                yield (
                    MESSAGES,
                    self._message(
                        row,
                        "send",
                        topic,
                        queue,
                        None,
                        p.get("UNIQ_KEY"),
                        p,
                        len(e.body),
                        born,
                        None,
                        reconsume,
                        None,
                        None,
                    ),
                )
            return
        yield (
            MESSAGES,
            self._message(
                row,
                "send",
                topic,
                queue,
                None,
                props.get("UNIQ_KEY"),
                props,
                len(body),
                born,
                None,
                reconsume,
                None,
                None,
            ),
        )

    def _message(
        self,
        row: CommandRow,
        source: str,
        topic: str | None,
        queue: int | None,
        queue_offset: int | None,
        msg_id: str | None,
        props: Any,
        size: int,
        born: int | None,
        stored: int | None,
        reconsume: int | None,
        store_host: str | None,
        error: str | None,
    ) -> tuple[Any, ...]:
        conv = row.conv
        req = row.request
        group = None
        if req is not None:
            group = req.command.ext_fields.get("consumerGroup")
        else:
            group = row.command.ext_fields.get("a" if "b" in row.command.ext_fields else "producerGroup")
        return (
            self.capture,
            self.conn_id(conv.index),
            source,
            row.record,
            row.ts,
            f"{conv.client}:{conv.client_port}",
            f"{conv.server}:{conv.server_port}",
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
            self.conn_id(conv.index),
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
            self.conn_id(conv.index) if conv is not None else None,
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

    def connections(self, dec: CaptureDecoder) -> Iterator[tuple[int, tuple[Any, ...]]]:
        for tcp, conv in zip(dec.reassembler.connections, dec.conversations, strict=True):
            handler: Any = tcp.handler
            for pending in getattr(handler, "pending", ()):
                for req in sorted(pending.values(), key=lambda r: (r.record, r.offset)):
                    yield EXCHANGES, self.exchange(req, None)
            yield (
                CONNECTIONS,
                (
                    self.capture,
                    self.conn_id(conv.index),
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
                ),
            )


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


def decode_partition(
    part: int,
    records: Iterable[tuple[int, int, float, int, bytes]],
    captures: list[str],
    roles: PortRoles,
    timelines: dict[int, list[tuple[int, int]]] | None = None,
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    """Reduce side: one partition's records, sorted by (file, record), through one decoder per file.

    Besides the table rows it emits ``VERSIONS`` rows (file, record, version) where the newest Java
    version seen rises, and ``DECISIONS`` rows (file, conn, record, version) where a connection is
    found to be HA, with the version the decision saw; the driver checks those against the whole
    file and runs the partition again with ``timelines`` where they differ.
    """
    dec: CaptureDecoder | None = None
    emitter: _Emitter | None = None
    current = -1
    undecided: list[Any] = []
    seen = 0
    for file_id, number, ts, linktype, data in records:
        if file_id != current:
            if dec is not None and emitter is not None:
                yield from _finish(dec, emitter, current, undecided)
            current = file_id
            tl = (timelines or {}).get(file_id)
            if tl is not None:
                dec = _TimelineDecoder(tl, roles=roles, capture=captures[file_id])
            else:
                dec = CaptureDecoder(roles=roles, capture=captures[file_id])
            emitter = _Emitter(captures[file_id], part)
            undecided = []
            seen = 0
        assert dec is not None and emitter is not None
        before = dec.java_version
        dec.feed(number, ts, linktype, data)
        if dec.java_version > before:
            yield VERSIONS, (file_id, number, dec.java_version)
        if len(dec.conversations) > seen:
            undecided.extend(dec.conversations[seen:])
            seen = len(dec.conversations)
        if undecided:
            yield from _decisions(emitter, file_id, undecided, number, before)
        if dec.rows:
            yield from emitter.rows(dec, dec.take(), number, False)
    if dec is not None and emitter is not None:
        yield from _finish(dec, emitter, current, undecided)


def _decisions(
    emitter: _Emitter, file_id: int, undecided: list[Any], number: int, version: int
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    for conv in list(undecided):
        if conv.ha_variant is not None:
            undecided.remove(conv)
            yield DECISIONS, (file_id, emitter.conn_id(conv.index), number, version)
        elif conv.protocol in ("remoting", "other"):
            undecided.remove(conv)


def _finish(
    dec: CaptureDecoder, emitter: _Emitter, file_id: int, undecided: list[Any]
) -> Iterator[tuple[int, tuple[Any, ...]]]:
    before = dec.java_version
    dec.finish()
    yield from _decisions(emitter, file_id, undecided, FINISHED, before)
    yield from emitter.rows(dec, dec.take(), FINISHED, True)
    yield from emitter.connections(dec)
