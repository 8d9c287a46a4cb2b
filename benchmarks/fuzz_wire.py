# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Mutation fuzzing of every decoder in :mod:`wire`: arbitrary bytes give a value or a DecodeError.

Usage::

    .venv/bin/python benchmarks/fuzz_wire.py [--count 200000] [--seed 1] [--save DIR] [--slowest 5]

The invariant (STYLE T4, ``wire/errors.py``): whatever bytes a decoder is given, it returns a
value or raises :class:`wire.DecodeError`. Anything else that leaves it -- a ``ValueError`` from
``int()``, a ``decimal.InvalidOperation``, a ``MemoryError``, a ``KeyError`` -- is a *foreign*
exception, and a bug.

Seeds are real bytes: the frames, headers, bodies, typed headers and HA streams of the captures in
``../shared/captures`` (Java 4.9.8 and 5.0.0, deepflow) and ``fixtures/peers`` (the C++ client,
ali-ons, mqctl), and the captures themselves as files (the first records of each, as classic
pcap, gzip-compressed pcap and pcapng, read by :func:`wire.capture.decode_capture` as
``mqctl pcap`` reads them); the golden vectors in ``fixtures/vectors``; records, batches, store
files and epoch files encoded here; and, since the captures carry fewer than half of the request
codes, a header with every field for every typed request and response header class, and a body
with every property for every registered body class; and SQL92 subscriptions, compiled as the
broker compiles a consumer's and matched against properties with hostile numbers in them (a
``SelectorError`` counts as the refusal); and the 4.x HA sessions of :mod:`wire.ha.session`
(the master's reading a slave's reports, the slave's reading transfers into its bounded buffer)
and the 5.x AutoSwitch sessions of :mod:`wire.ha.autoswitch`, both ends (the master's reading a
slave's HANDSHAKE and TRANSFER acks and cutting transfers from its epochs, the slave's reading
the handshake reply, truncating to the consistent point and taking transfers into its log, from
an empty log and from the log of the 5.0.0 failover capture), fed in reads of varying size and
seeded from the AutoSwitch streams of the 5.0.0 captures and ``fixtures/controller`` and frames
encoded here in each protocol version. The smallest seed of each request code is always kept.
Each input is one seed put through one to three mutations:

* ``bitflip`` / ``bytes``: flipped bits, bytes set to 0x00, 0x7F, 0x80, 0xFF;
* ``truncate``: the input cut short;
* ``length``: a 1-, 2-, 4- or 8-byte big-endian integer overwritten with a boundary value (the
  lengths of frames, headers, ext entries, records and HA frames are all such integers);
* ``structure``: a range deleted, duplicated, moved, or repeated many times (up to 64 KiB);
* ``number``: a number in the text replaced by a hostile one (``1e999999``, 5,000 digits,
  Arabic-Indic digits, ``NaN``, ``-0``, ``+7``, ``1.5e999999999999999999`` ...);
* ``text``: a quote, brace or escape inserted, removed or changed;
* ``splice``: the start of one seed joined to the end of another of the same decoder.

Frame inputs then get their length words fixed most of the time, so that mutations reach the
header and body decoders instead of stopping at the framing checks.

Every decoder gets inputs in turn. The run prints, per decoder, how many inputs decoded, how
many gave DecodeError and how many gave anything else, and the slowest inputs with their time.
Inputs that raise a foreign exception are written to ``--save`` (one file each, with the decoder,
its context and the exception) for replay. The exit code is 1 when any foreign exception was
seen. :func:`run` is the same loop for the test suite (``tests/wire/test_fuzz.py``).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import random
import signal
import struct
import sys
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from wire import (  # noqa: E402
    DecodeError,
    FrameBuffer,
    RemotingCommand,
    SerializeType,
    decode_frame,
    encode_command,
    encode_header,
    fastjson,
)
from wire.bodies import REQUEST_BODIES, RESPONSE_BODIES, PropertiesBody, decode_body  # noqa: E402
from wire.bodies import _base as body_base  # noqa: E402
from wire.bodies import decode_properties as decode_java_properties  # noqa: E402
from wire.ha import (  # noqa: E402
    HADirection,
    HAProtocol,
    decode_epoch_file,
    decode_ha_stream,
    encode_ha_message,
)
from wire.ha import frames as ha_frames  # noqa: E402
from wire.ha.frames import EpochEntry, HandshakeReply, SlaveHandshake  # noqa: E402
from wire.headers import (  # noqa: E402
    REQUEST_HEADERS,
    RESPONSE_HEADERS,
    JavaType,
    decode_request_header,
    decode_response_header,
    header_fields,
)
from wire.message import (  # noqa: E402
    BatchEntry,
    StoredMessage,
    decode_batch,
    decode_messages,
    decode_offset_msg_id,
    decode_properties,
    decode_stored_message,
    decode_stored_message_construct,
    decode_uniq_id,
    encode_batch,
    encode_messages,
    encode_stored_message,
)
from wire.remoting import decode_binary_header, decode_binary_header_construct, decode_json_header  # noqa: E402
from wire.store import (  # noqa: E402
    ConsumeQueueEntry,
    IndexEntry,
    IndexHeader,
    Problem,
    StoreCheckpoint,
    decode_checkpoint,
    decode_cq_entry,
    decode_index_entry,
    decode_index_header,
    encode_blank,
    encode_checkpoint,
    encode_cq_entry,
    encode_index_entry,
    encode_index_header,
    iter_cq_entries,
    scan_commitlog,
)

SHARED = Path(os.environ.get("MQCTL_SHARED", ROOT.parent / "shared"))
CAPTURE_DIRS = (SHARED / "captures", ROOT / "fixtures" / "peers", ROOT / "fixtures" / "controller")
VECTORS = ROOT / "fixtures" / "vectors"
#: seeds kept per decoder (the smallest first: they mutate fastest and reach the same code)
SEEDS_PER_TARGET = 400
#: inputs that take longer than this are stopped and counted as stalls
STALL_SECONDS = 10.0


class Stall(BaseException):
    """Raised by the alarm when one input runs past :data:`STALL_SECONDS`."""


# ============================================================================ decoders

Decoder = Callable[[Any, bytes], object]


def _frames(_ctx: Any, data: bytes) -> object:
    fb = FrameBuffer()
    fb.feed(data)
    return [decode_frame(f) for f in fb]


def _typed_header(ctx: Any, data: bytes) -> object:
    kind, code, is_response = ctx  # code: the request's (a request's own code is in its bytes)
    cmd = decode_json_header(data) if kind == "json" else decode_binary_header(data)
    if not is_response:
        return decode_request_header(cmd)
    return decode_response_header(code, cmd, any_code=True)


def _body(ctx: Any, data: bytes) -> object:
    code, is_response, ext = ctx
    return decode_body(code, is_response, data, ext_fields=ext)


def _ha_stream(ctx: Any, data: bytes) -> object:
    protocol, direction = ctx
    return decode_ha_stream(data, protocol, direction, complete=True)


def _ha_frame(ctx: Any, data: bytes) -> object:
    name, protocol = ctx
    fn = getattr(ha_frames, name)
    return fn(data, protocol) if protocol is not None else fn(data)


def _text(fn: Callable[[str], object]) -> Decoder:
    def decode(_ctx: Any, data: bytes) -> object:
        return fn(data.decode("utf-8", "surrogateescape"))
    return decode


_scratch: list[Path] = []


def _scratch_file(suffix: str) -> Path:
    """One file per suffix in a private directory (in memory where /dev/shm exists), removed at
    exit: the capture readers take a path, as ``mqctl pcap`` gives them."""
    if not _scratch:
        import atexit
        import shutil
        import tempfile

        shm = Path("/dev/shm")
        d = Path(tempfile.mkdtemp(prefix="fuzz_wire-", dir=shm if shm.is_dir() else None))
        atexit.register(shutil.rmtree, d, True)
        _scratch.append(d)
    return _scratch[0] / f"input{suffix}"


def _capture(suffix: str) -> Decoder:
    def decode(_ctx: Any, data: bytes) -> object:
        from wire.capture import decode_capture

        path = _scratch_file(suffix)
        path.write_bytes(data)
        return sum(1 for _row in decode_capture(path))
    return decode


#: the properties every fuzzed selector is evaluated on (numbers, text, hostile numbers)
_SELECTOR_PROPS = {"a": "7", "b": "x", "c": "2.5", "d": "9" * 5000, "e": "-0", "f": "1e999", "g": "true",
                   "h": "\u0661\u0662", "TAGS": "TagA"}


def _sql92(_ctx: Any, data: bytes) -> object:
    """A consumer's SQL92 subscription: compiled (a SelectorError is the refusal) and matched."""
    from wire.sql92 import SelectorError, compile_selector

    try:
        selector = compile_selector(data.decode("utf-8", "surrogateescape"))
    except SelectorError as exc:
        raise DecodeError(exc.java_message[:200]) from None
    return selector.matches(_SELECTOR_PROPS)


def _pieces(data: bytes) -> Iterator[bytes]:
    """``data`` in reads of 1 to 4,099 bytes, sized by the data itself (reproducible): frames
    arrive whole, split, and several to a read, as from a socket."""
    pos = 0
    while pos < len(data):
        size = 1 + (data[pos] * 16 + len(data) - pos) % 4099
        yield data[pos:pos + size]
        pos += size


def _ha_master_session(_ctx: Any, data: bytes) -> object:
    """A 4.x master's session reading a slave's bytes (the broker's HA port, open to any client)."""
    from wire.ha.session import V4MasterSession

    session = V4MasterSession(now_ms=0)
    master_max = 1 << 40
    for now, piece in enumerate(_pieces(data)):
        session.receive_data(piece, now_ms=now, master_max_offset=master_max)
        if session.requested and not session.started:
            session.start(master_max)
        if session.started and session.next_transfer < master_max:
            session.next_header(min(4096, master_max - session.next_transfer))
    return session.reports


def _ha_slave_session(_ctx: Any, data: bytes) -> object:
    """A 4.x slave's session reading what its master sends, into its bounded buffer."""
    from wire.ha.session import V4SlaveSession

    session = V4SlaveSession(buffer_size=64 * 1024, now_ms=0)
    session.connected(0, 0)
    local = 0
    for now, piece in enumerate(_pieces(data)):
        while piece:
            view = session.recv_buffer()
            n = min(len(view), len(piece))
            if n == 0:
                raise DecodeError("the slave's buffer is full of one unfinished frame")
            view[:n] = piece[:n]
            piece = piece[n:]
            for offset, body in session.received(n, now):
                session.check(offset, local)
                if body:
                    local = offset + len(body)
                session.report(local, now)
    return session.transfers


#: the AutoSwitch logs the sessions run on: (epoch entries, min offset, max offset); the second is
#: the new master's of 13-failover (epochs 1 and 2) and the old master's log as it rejoined
_AS_LOGS = (((), 0, 0), (((1, 0),), 0, 32830), (((1, 0), (2, 48130)), 0, 127690), (((1, 0),), 0, 48130))
_AS_PROTOCOLS = (HAProtocol.AUTOSWITCH_5_0, HAProtocol.AUTOSWITCH_5_1_0, HAProtocol.AUTOSWITCH_5_1_1)


def _autoswitch_master_session(ctx: Any, data: bytes) -> object:
    """A 5.x master's AutoSwitch session reading a slave's bytes (the HA port, open to any
    client): the handshake is answered, the first ack starts the transfer, and each read lets the
    master cut up to four frames from its log and heartbeat, as its writer does."""
    from wire.ha.autoswitch import AutoSwitchMasterSession, EpochCache

    protocol, (entries, master_min, master_max) = ctx
    cache = EpochCache(EpochEntry(e, o) for e, o in entries)
    session = AutoSwitchMasterSession(protocol, transfer_batch_size=4096, now_ms=0)
    sent: list[bytes] = []
    for i, piece in enumerate(_pieces(data)):
        now = i * 1000
        for msg in session.receive_data(piece, now_ms=now, master_max_offset=master_max):
            if isinstance(msg, SlaveHandshake):
                sent.append(session.handshake_reply(cache, master_max))
        if session.requested and not session.started:
            session.start(cache, master_min_offset=master_min, master_max_offset=master_max)
        for _ in range(4):
            if not session.started or session.next_transfer >= master_max:
                break
            cut = session.next_header(master_max - session.next_transfer, cache, master_max)
            if cut is None:
                break
            sent.append(cut[0])
        if session.requested and session.heartbeat_due(now):
            sent.append(session.heartbeat(cache, master_max))
        session.wrote(now)
    return len(sent)


def _autoswitch_slave_session(ctx: Any, data: bytes) -> object:
    """A 5.x slave's AutoSwitch session reading what its master sends: the handshake reply cuts
    the log to the consistent point (none: the slave closes, a refusal), each transfer is checked
    and appended, and the slave acks and heartbeats, as ``reference_broker.ha.autoswitch`` does."""
    from wire.ha.autoswitch import AutoSwitchSlaveSession, EpochCache, TruncateTo
    from wire.ha.session import HAProtocolError

    protocol, (entries, _min, local_max) = ctx
    cache = EpochCache(EpochEntry(e, o) for e, o in entries)
    if protocol is HAProtocol.AUTOSWITCH_5_1_1:
        session = AutoSwitchSlaveSession(protocol, broker_id=1, now_ms=0)
    else:
        session = AutoSwitchSlaveSession(protocol, address="127.0.0.1:31911", now_ms=0)
    session.connected(local_max, 0)
    acks = 0
    for i, piece in enumerate(_pieces(data)):
        now = i * 1000
        items = session.receive_data(piece, cache, local_max, now)
        while items:
            after: list[Any] = []
            for item in items:
                if isinstance(item, TruncateTo):
                    if item.offset < 0:
                        raise HAProtocolError("no consistent point with the master's epochs", field="entries")
                    if not item.fresh:
                        local_max = min(local_max, item.offset)
                    session.truncated(cache, item.offset, item.fresh)
                    after = session.receive_data(b"", cache, local_max, now)
                    continue
                session.accept(item, cache, local_max)
                if item.data:
                    local_max = item.header.phy_offset + len(item.data)
                session.appended(item, local_max)
            items = after
        if session.report(local_max, now) is not None:
            acks += 1
        if session.heartbeat_due(now):
            session.heartbeat(now)
    return acks, cache.entries()


def _commitlog(_ctx: Any, data: bytes) -> object:
    items = list(scan_commitlog(data, verify_crc=True))
    last = items[-1][1] if items else None
    if isinstance(last, Problem):  # the scan reports damage as its last item, not as an exception
        raise last.error or DecodeError(last.reason)
    return items


DECODERS: dict[str, Decoder] = {
    "frames": _frames,
    "header.json": lambda _c, d: decode_json_header(d),
    "header.rocketmq": lambda _c, d: decode_binary_header(d),
    "header.rocketmq.construct": lambda _c, d: decode_binary_header_construct(d),
    "header.typed": _typed_header,
    "body": _body,
    "fastjson": lambda _c, d: fastjson.loads(d),
    "message.records": lambda _c, d: decode_messages(d, verify=True),
    "message.record": lambda _c, d: decode_stored_message(d),
    "message.record.construct": lambda _c, d: decode_stored_message_construct(d),
    "message.batch": lambda _c, d: decode_batch(d),
    "message.properties": lambda _c, d: decode_properties(d),
    "message.msgid": _text(decode_offset_msg_id),
    "message.uniqid": _text(decode_uniq_id),
    "properties": lambda _c, d: decode_java_properties(d),
    "store.cq": lambda _c, d: list(iter_cq_entries(d)) if len(d) % 20 == 0 else decode_cq_entry(d),
    "store.checkpoint": lambda _c, d: decode_checkpoint(d),
    "store.index": lambda _c, d: (decode_index_header(d),
                                  decode_index_entry(d, 40) if len(d) >= 60 else None),
    "store.commitlog": _commitlog,
    "ha.stream": _ha_stream,
    "ha.frame": _ha_frame,
    "ha.epoch": lambda _c, d: decode_epoch_file(d),
    "ha.session.master": _ha_master_session,
    "ha.session.slave": _ha_slave_session,
    "ha.session.autoswitch.master": _autoswitch_master_session,
    "ha.session.autoswitch.slave": _autoswitch_slave_session,
    "capture.pcap": _capture(".pcap"),
    "capture.pcapng": _capture(".pcapng"),
    "sql92": _sql92,
}


# ============================================================================ seeds

@dataclass
class Seeds:
    """Seeds per decoder: (context, bytes) pairs."""

    by_target: dict[str, list[tuple[Any, bytes]]] = field(default_factory=dict)
    sources: Counter[str] = field(default_factory=Counter)

    def add(self, target: str, ctx: Any, data: bytes, source: str) -> None:
        self.by_target.setdefault(target, []).append((ctx, bytes(data)))
        self.sources[source] += 1

    def finish(self, limit: int = SEEDS_PER_TARGET) -> None:
        for target, items in self.by_target.items():
            unique: dict[tuple[str, bytes], tuple[Any, bytes]] = {}
            for ctx, data in items:
                unique.setdefault((repr(ctx), data), (ctx, data))
            ordered = sorted(unique.values(), key=lambda cd: len(cd[1]))
            # the smallest seed of every context (every request code of the typed headers and
            # bodies) is kept, so that a code the captures carry once is fuzzed as often as the
            # others; the rest of the room is an even sample of the other seeds
            first: dict[object, int] = {}
            for i, (ctx, _data) in enumerate(ordered):
                first.setdefault(_context_group(target, ctx), i)
            kept = set(first.values())
            rest = [i for i in range(len(ordered)) if i not in kept]
            room = max(0, limit - len(kept))
            if len(rest) > room:
                step = len(rest) / room if room else 0
                rest = [rest[int(i * step)] for i in range(room)]
            self.by_target[target] = [ordered[i] for i in sorted(kept | set(rest))]


def _context_group(target: str, ctx: Any) -> object:
    """What makes seeds of one decoder reach different code: the request code and direction of
    a body (not the request's ext fields), the whole context otherwise."""
    if target == "body":
        return ctx[0], ctx[1]
    return repr(ctx)


def _command_seeds(seeds: Seeds, cmd: RemotingCommand, request: RemotingCommand | None, source: str) -> None:
    frame = encode_command(cmd)
    seeds.add("frames", None, frame, source)
    header = encode_header(cmd)
    kind = "json" if cmd.serialize_type is SerializeType.JSON else "rocketmq"
    seeds.add(f"header.{kind}", None, header, source)
    if kind == "rocketmq":
        seeds.add("header.rocketmq.construct", None, header, source)
    if cmd.is_response:
        if request is not None and request.code in RESPONSE_HEADERS:
            seeds.add("header.typed", (kind, request.code, True), header, source)
    elif cmd.code in REQUEST_HEADERS:
        seeds.add("header.typed", (kind, cmd.code, False), header, source)
    if cmd.body:
        if cmd.is_response and request is not None and request.code in RESPONSE_BODIES:
            seeds.add("body", (request.code, True, dict(request.ext_fields)), cmd.body, source)
            if request.code == 11:  # PULL_MESSAGE: stored records
                seeds.add("message.records", None, cmd.body, source)
                seeds.add("message.record", None, cmd.body, source)
        elif not cmd.is_response and cmd.code in REQUEST_BODIES:
            seeds.add("body", (cmd.code, False, dict(cmd.ext_fields)), cmd.body, source)
        if cmd.body[:1] in (b"{", b"["):
            seeds.add("fastjson", None, cmd.body, source)
        if not cmd.is_response and cmd.code == 320:  # SEND_BATCH_MESSAGE
            seeds.add("message.batch", None, cmd.body, source)
    props = cmd.ext_fields.get("properties") or cmd.ext_fields.get("i")
    if props:
        seeds.add("message.properties", None, props.encode(), source)


#: records of each capture kept as a capture-file seed (the file decoders reach all their code on
#: a few dozen records; a larger seed only makes each input slower)
CAPTURE_SEED_RECORDS = 40


def _capture_file_seeds(seeds: Seeds, path: Path, source: str) -> None:
    """The capture itself cut to its first records, as classic pcap (plain and gzip) and pcapng."""
    import gzip

    from wire.capture import read_records

    records = []
    try:
        for record in read_records(path):
            records.append(record)
            if len(records) == CAPTURE_SEED_RECORDS:
                break
    except DecodeError:
        pass
    if not records:
        return
    classic = _classic_pcap(records)
    seeds.add("capture.pcap", None, classic, source)
    seeds.add("capture.pcap", None, gzip.compress(classic, mtime=0), source)
    seeds.add("capture.pcapng", None, _pcapng(records), source)


def _classic_pcap(records: Sequence[tuple[int, float, int, bytes]]) -> bytes:
    out = [struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 262144, records[0][2])]
    for _no, ts, _link, data in records:
        sec = int(ts)
        out.append(struct.pack("<IIII", sec, int((ts - sec) * 1e6), len(data), len(data)) + data)
    return b"".join(out)


def _pcapng(records: Sequence[tuple[int, float, int, bytes]]) -> bytes:
    """A section header, one interface per link type and an enhanced packet block per record."""
    def block(kind: int, body: bytes) -> bytes:
        body += b"\0" * (-len(body) % 4)
        return struct.pack("<II", kind, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    out = [block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))]
    interfaces: dict[int, int] = {}
    for _no, ts, link, data in records:
        if link not in interfaces:
            interfaces[link] = len(interfaces)
            out.append(block(1, struct.pack("<HHI", link, 0, 262144)))
        micros = int(ts * 1e6)
        out.append(block(6, struct.pack("<IIIII", interfaces[link], micros >> 32, micros & 0xFFFFFFFF,
                                        len(data), len(data)) + data))
    return b"".join(out)


def _capture_seeds(seeds: Seeds) -> None:
    from wire.capture import CommandRow, HaRow, decode_capture

    for base in CAPTURE_DIRS:
        if not base.is_dir():
            continue
        for path in sorted(base.rglob("*.pcap")):
            source = f"{path.parent.name}/{path.name}"
            _capture_file_seeds(seeds, path, source)
            streams: dict[tuple[Any, int, str], bytearray] = {}
            try:
                rows = list(decode_capture(path))
            except Exception:  # a capture the reader refuses is no seed
                continue
            for row in rows:
                if isinstance(row, CommandRow):
                    req = row.request.command if row.request is not None else None
                    _command_seeds(seeds, row.command, req, source)
                elif isinstance(row, HaRow):
                    protocol = HAProtocol(row.variant)
                    data = encode_ha_message(row.message, protocol)
                    key = (row.conv, row.direction, row.variant)
                    buf = streams.setdefault(key, bytearray())
                    if len(buf) < 4096:
                        buf += data
                    name = _HA_FRAME_DECODERS.get(type(row.message).__name__)
                    if name is not None:
                        seeds.add("ha.frame", (name, protocol if name in _HA_WITH_PROTOCOL else None),
                                  data, source)
            for (_conv, direction, variant), buf in streams.items():
                d = HADirection.SLAVE_TO_MASTER if direction == 0 else HADirection.MASTER_TO_SLAVE
                seeds.add("ha.stream", (HAProtocol(variant), d), bytes(buf), source)
                if HAProtocol(variant) is HAProtocol.V4:
                    seeds.add("ha.session.master" if direction == 0 else "ha.session.slave", None,
                              bytes(buf), source)
                else:
                    _autoswitch_session_seeds(seeds, HAProtocol(variant), direction == 0, bytes(buf), source)


def _autoswitch_session_seeds(seeds: Seeds, protocol: HAProtocol, to_master: bool, data: bytes,
                              source: str) -> None:
    """An AutoSwitch stream as a seed of the session that reads it, on each log."""
    target = "ha.session.autoswitch.master" if to_master else "ha.session.autoswitch.slave"
    for log in _AS_LOGS:
        seeds.add(target, (protocol, log), data, source)


_HA_FRAME_DECODERS = {
    "SlaveReport": "decode_slave_report",
    "Transfer": "decode_transfer",
    "SlaveHandshake": "decode_slave_handshake",
    "TransferAck": "decode_transfer_ack",
    "HandshakeReply": "decode_handshake_reply",
    "EpochTransfer": "decode_epoch_transfer",
}
_HA_WITH_PROTOCOL = {"decode_slave_handshake", "decode_handshake_reply"}


def _vector_seeds(seeds: Seeds) -> None:
    """Byte strings of the golden vectors, given to every decoder of their folder."""
    targets = {
        "headers": ("header.json", "header.rocketmq", "fastjson"),
        "bodies": ("fastjson",),
        "messages": ("message.record", "message.records", "message.batch", "message.properties"),
        "ha": ("ha.epoch",),
    }
    if not VECTORS.is_dir():
        return
    for path in sorted(VECTORS.rglob("*")):
        if not path.is_file():
            continue
        folder = path.relative_to(VECTORS).parts[0]
        for blob in _blobs(path):
            for target in targets.get(folder, ()):
                seeds.add(target, None, blob, f"vectors/{folder}")


def _blobs(path: Path) -> Iterator[bytes]:
    """Hex strings in a vector file (JSON values or an annotated hex file), as bytes."""
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError):
        return
    if path.suffix == ".hex":
        digits = "".join(line.split("#")[0] for line in text.splitlines())
        try:
            yield bytes.fromhex("".join(digits.split()))
        except ValueError:
            pass
        return
    if path.suffix != ".json":
        yield text.encode()
        return
    try:
        value = json.loads(text)
    except ValueError:
        return
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
        elif isinstance(v, str) and len(v) >= 8 and len(v) % 2 == 0:
            try:
                yield bytes.fromhex(v)
            except ValueError:
                if len(v) < 4096:
                    yield v.encode()


def _made_seeds(seeds: Seeds) -> None:
    """Store files, records, batches and ids encoded here (no capture carries them)."""
    src = "encoded"
    msgs = [StoredMessage(topic=f"T{i}", body=b"x" * i, queue_id=i, queue_offset=i * 3,
                          physical_offset=i * 200,
                          born_timestamp=1_700_000_000_000 + i, store_timestamp=1_700_000_000_001 + i,
                          born_host=("10.0.0.7", 52311) if i % 2 else ("::1", 4000),
                          store_host=("10.0.0.1", 10911),
                          properties={"UNIQ_KEY": f"0A00000700002A9F{i:016X}", "KEYS": f"k{i}", "TAGS": "A"})
            for i in range(4)]
    for m in msgs:
        rec = encode_stored_message(m)
        seeds.add("message.record", None, rec, src)
        seeds.add("message.record.construct", None, rec, src)
        seeds.add("store.commitlog", None, rec + encode_blank(64), src)
    seeds.add("message.records", None, encode_messages(msgs), src)
    seeds.add("store.commitlog", None, encode_messages(msgs), src)
    batch = encode_batch([BatchEntry(body=b"hello", properties={"KEYS": "a", "TAGS": "t"}),
                          BatchEntry(body=b"", properties={}),
                          BatchEntry(body=b"x" * 40, properties={"A": "B"})])
    seeds.add("message.batch", None, batch, src)
    seeds.add("message.properties", None,
              b"KEYS\x01a b\x02TAGS\x01t\x02UNIQ_KEY\x017F00000100002A9F0000000000000001\x02", src)
    seeds.add("message.msgid", None, b"0A00000100002A9F0000000000001234", src)
    seeds.add("message.msgid", None, b"00000000000000000000000000000001000027100000000000001234", src)
    seeds.add("message.uniqid", None, b"7F00000100002A9F0000000000000001", src)
    seeds.add("properties", None,
              b"brokerName=broker-a\nlistenPort=10911\n# c\nkey\\ with=va\\u00e9lue\\\n  more\n", src)
    cq = b"".join(encode_cq_entry(ConsumeQueueEntry(i * 100, 100, i)) for i in range(3))
    seeds.add("store.cq", None, cq, src)
    checkpoint = StoreCheckpoint(1_700_000_000_000, 1_700_000_000_001, 1_700_000_000_002, 0)
    seeds.add("store.checkpoint", None, encode_checkpoint(checkpoint), src)
    seeds.add("store.index", None, encode_index_header(IndexHeader(1, 2, 3, 4, 5, 6))
              + encode_index_entry(IndexEntry(7, 8, 9, 10)), src)
    seeds.add("ha.epoch", None, b"1/0\n2/1024\n3/4096\n", src)
    from wire.ha.session import pack_report, pack_transfer_header

    seeds.add("ha.session.master", None, b"".join(pack_report(o) for o in (0, 0, 4096, 8192, 8192)), src)
    seeds.add("ha.session.slave", None, pack_transfer_header(0, 0) + pack_transfer_header(0, 40) + b"r" * 40
              + pack_transfer_header(40, 0) + pack_transfer_header(40, 8) + b"s" * 8, src)
    seeds.add("fastjson", None, b"{0:\"127.0.0.1:10911\",1:'x',{\"a\":1}:[1.5,2E7,-0.0,true,null]}", src)
    _autoswitch_made_seeds(seeds, src)
    for selector in _SELECTORS:
        seeds.add("sql92", None, selector.encode(), src)


def _autoswitch_made_seeds(seeds: Seeds, src: str) -> None:
    """Both directions of an AutoSwitch session in every protocol version (the captures are
    5.0.0 only): a handshake and acks; a handshake reply and transfers across an epoch end."""
    from wire.ha.autoswitch import pack_epoch_transfer_header, pack_transfer_ack

    for protocol in _AS_PROTOCOLS:
        if protocol is HAProtocol.AUTOSWITCH_5_1_1:
            handshake = SlaveHandshake(True, False, broker_id=2)
        else:
            handshake = SlaveHandshake(False, True, address="127.0.0.1:31911")
        to_master = encode_ha_message(handshake, protocol) + b"".join(
            pack_transfer_ack(o) for o in (48130, 48130, 52226, 56322, 56322))
        reply = HandshakeReply(127690, 2, (EpochEntry(1, 0), EpochEntry(2, 48130)))
        to_slave = (encode_ha_message(reply, protocol)
                    + pack_epoch_transfer_header(48130, 0, 2, 48130, 47110)
                    + pack_epoch_transfer_header(48130, 40, 2, 48130, 48130) + b"d" * 40
                    + pack_epoch_transfer_header(48170, 8, 2, 48130, 48170) + b"e" * 8)
        for_fresh = (encode_ha_message(HandshakeReply(48200, 2, reply.entries), protocol)
                     + pack_epoch_transfer_header(0, 24, 1, 0, 0) + b"f" * 24
                     + pack_epoch_transfer_header(24, 16, 2, 24, 24) + b"g" * 16)
        for log in _AS_LOGS:
            seeds.add("ha.session.autoswitch.master", (protocol, log), to_master, src)
            seeds.add("ha.session.autoswitch.slave", (protocol, log), to_slave, src)
            seeds.add("ha.session.autoswitch.slave", (protocol, log), for_fresh, src)


_HEADER_TEXT = {
    JavaType.STRING: "TopicTest", JavaType.INTEGER: "7", JavaType.PRIMITIVE_INT: "3",
    JavaType.LONG: "1700000000123", JavaType.PRIMITIVE_LONG: "42", JavaType.BOOLEAN: "true",
    JavaType.PRIMITIVE_BOOLEAN: "false", JavaType.BOUNDARY_TYPE: "UPPER",
}


def _example_header_seeds(seeds: Seeds) -> None:
    """A header with every field of its class, for every typed request and response header,
    in both serializations (the captures carry fewer than half of the codes)."""
    src = "typed headers"
    tables = ((REQUEST_HEADERS, False), (RESPONSE_HEADERS, True))
    for table, is_response in tables:
        for code, cls in table.items():
            ext = {f.key: _HEADER_TEXT[f.java_type] for f in header_fields(cls)}
            for st in (SerializeType.JSON, SerializeType.ROCKETMQ):
                cmd = RemotingCommand.request(code, None if is_response else ext, opaque=9, serialize_type=st)
                if is_response:
                    cmd = cmd.response(0, None, ext)
                kind = "json" if st is SerializeType.JSON else "rocketmq"
                seeds.add("header.typed", (kind, int(code), is_response), encode_header(cmd), src)


def _example_value(kind: Any, depth: int) -> Any:
    """A value of every property kind of :mod:`wire.bodies` (two items in a list, one entry in
    a map, nested beans four deep)."""
    if isinstance(kind, (body_base.Str, body_base.StrKey)):
        return "TopicTest"
    if isinstance(kind, (body_base.Integer, body_base.IntKey)):
        return 7 if kind.bits == 32 else 1_700_000_000_123
    if isinstance(kind, body_base.Double):
        return 1.5
    if isinstance(kind, body_base.Bool):
        return True
    if isinstance(kind, body_base.EnumName):
        return kind.members[-1]
    if isinstance(kind, body_base.Seq):
        return tuple(_example_value(kind.item, depth) for _ in range(2))
    if isinstance(kind, body_base.Map):
        return {_example_value(kind.key, depth): _example_value(kind.value, depth)}
    if isinstance(kind, body_base.Obj):
        return _example_body(kind.cls, depth + 1)
    if isinstance(kind, body_base.Raw):
        return {"a": [1, "b"]}
    # a kind of one body (a MessageQueue map key, an address or a broker id): the first
    # candidate it reads
    for candidate in ("127.0.0.1:10911", 7, {"brokerName": "broker-a", "queueId": 1, "topic": "TopicTest"}):
        try:
            return kind.load(candidate, "")
        except DecodeError:
            continue
    raise TypeError(f"no example value for {kind!r}")


def _example_body(cls: type[Any], depth: int = 0) -> Any:
    if issubclass(cls, body_base.JsonBody):
        props = body_base.body_props(cls) if depth < 4 else ()
        return cls(**{p.attr: _example_value(p.kind, depth) for p in props})
    if cls is PropertiesBody:
        return cls({"brokerName": "broker-a", "listenPort": "10911", "key with=sign": "a\\b"})
    # the other bodies (a JSON array, a binary struct): their numbers and lists set
    values = {f.name: 7 if isinstance(f.default, int) else ("broker-a", "broker-b")
              for f in dataclasses.fields(cls) if isinstance(f.default, (int, tuple))}
    return cls(**values)


def _example_body_seeds(seeds: Seeds) -> None:
    """A body with every property set for every registered body class (most response bodies
    are absent from the captures)."""
    src = "bodies"
    for table, is_response in ((REQUEST_BODIES, False), (RESPONSE_BODIES, True)):
        for code, cls in table.items():
            data = _example_body(cls).encode()
            seeds.add("body", (int(code), is_response, {}), data, src)
            if data[:1] in (b"{", b"["):
                seeds.add("fastjson", None, data, src)


#: SQL92 subscriptions covering the grammar (the captures carry none)
_SELECTORS = (
    "a > 5 AND b = 'x'", "NOT (a > 5) OR b <> 'y'", "a IS NULL", "a IS NOT NULL AND c >= 2.5",
    "a BETWEEN 1 AND 10", "a NOT BETWEEN -3 AND 3000000000", "b IN ('x', 'y')", "b NOT IN ('it''s')",
    "a = TRUE OR g = FALSE", "d > 5", "f < 1.5E3 AND e = 0", "TAGS = 'TagA' -- comment\n",
    "/* c */ a <= 7L", "+a > -b", "a > b", "(a = 1 OR (b = 'x' AND (c > 1)))",
)


def build_seeds(*, captures: bool = True) -> Seeds:
    seeds = Seeds()
    if captures:
        _capture_seeds(seeds)
    _vector_seeds(seeds)
    _made_seeds(seeds)
    _example_header_seeds(seeds)
    _example_body_seeds(seeds)
    seeds.finish()
    return seeds


# ============================================================================ mutations

_INTERESTING_BYTES = (0x00, 0x01, 0x7F, 0x80, 0xFF, 0x22, 0x27, 0x5C, 0x7B, 0x7D)
_HOSTILE_NUMBERS = (
    "1e999999", "1E+999999", "-1e999999", "1e99999999999999999999", "1.5e999999999999999999",
    "1e5000", "1e-999999", "9" * 5000, "0" * 5000 + "7", "1" * 4301, "-" + "9" * 4400,
    "\u0661" * 3000, "\u0663\u0665", "\uff11\uff12", "NaN", "Infinity", "-Infinity", "-0", "+7",
    "0x10", "1.0", "2147483648", "-2147483649", "9223372036854775808", "1e3", "00", "",
)
_TEXT_EDITS = ('"', "'", "{", "}", "[", "]", ":", ",", "\\", "\\u", "\\ud800", "\x00", "\x01", "\x02",
               "null", "true", '{"a":', "[" * 200, "\u00e9", "\udcff")


def _number_spans(data: bytes) -> list[tuple[int, int]]:
    spans = []
    i, n = 0, len(data)
    while i < n and len(spans) < 64:
        if 0x30 <= data[i] <= 0x39:
            j = i
            while j < n and (0x30 <= data[j] <= 0x39 or data[j] in b".eE+-"):
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def _int_at(rng: random.Random, data: bytearray) -> bytearray:
    if not data:
        return data
    width = rng.choice((1, 2, 4, 4, 4, 8))
    pos = rng.randrange(max(1, len(data) - width + 1))
    top = 1 << (8 * width)
    value = rng.choice((0, 1, top - 1, top // 2, top // 2 - 1, len(data), len(data) - pos, len(data) + 1,
                        rng.randrange(top), 0xFFFFFF, 0x1000000, 16 * 1024 * 1024))
    data[pos:pos + width] = (value % top).to_bytes(width, "big")
    return data


def mutate(rng: random.Random, data: bytes, other: bytes) -> tuple[bytes, str]:
    """One mutation of ``data`` (``other`` is another seed of the same decoder, for splices)."""
    buf = bytearray(data)
    kind = rng.choice(("bitflip", "bytes", "truncate", "length", "length", "structure", "number", "number",
                       "text", "splice"))
    n = len(buf)
    if kind == "bitflip" and n:
        for _ in range(rng.randint(1, 8)):
            p = rng.randrange(n)
            buf[p] ^= 1 << rng.randrange(8)
    elif kind == "bytes" and n:
        for _ in range(rng.randint(1, 4)):
            buf[rng.randrange(n)] = rng.choice(_INTERESTING_BYTES)
    elif kind == "truncate" and n:
        del buf[rng.randrange(n):]
    elif kind == "length":
        buf = _int_at(rng, buf)
    elif kind == "structure" and n:
        a = rng.randrange(n)
        b = min(n, a + rng.randint(1, 64))
        op = rng.choice(("delete", "duplicate", "move", "repeat"))
        piece = bytes(buf[a:b])
        if op == "delete":
            del buf[a:b]
        elif op == "duplicate":
            buf[b:b] = piece
        elif op == "move":
            del buf[a:b]
            p = rng.randrange(len(buf) + 1)
            buf[p:p] = piece
        else:
            times = rng.randint(2, max(2, 65536 // max(1, len(piece))))
            buf[b:b] = piece * times
    elif kind == "number":
        spans = _number_spans(buf)
        new = rng.choice(_HOSTILE_NUMBERS).encode("utf-8", "surrogatepass")
        if spans:
            a, b = rng.choice(spans)
            buf[a:b] = new
        else:
            p = rng.randrange(n + 1)
            buf[p:p] = new
    elif kind == "text":
        edit = rng.choice(_TEXT_EDITS).encode("utf-8", "surrogatepass")
        p = rng.randrange(n + 1)
        if rng.random() < 0.5 and n:
            buf[p:p + 1] = edit
        else:
            buf[p:p] = edit
    elif kind == "splice" and other:
        buf = bytearray(data[:rng.randrange(n + 1)] + other[rng.randrange(len(other) + 1):])
    return bytes(buf), kind


def _fix_frame_lengths(data: bytes, hlen_hint: int) -> bytes:
    """Rewrite the prefix of a (mutated) single frame so that its lengths fit its bytes."""
    if len(data) < 8:
        return data
    word = int.from_bytes(data[4:8], "big")
    hlen = min(hlen_hint, len(data) - 8)
    return (len(data) - 4).to_bytes(4, "big") + ((word & 0xFF000000) | hlen).to_bytes(4, "big") + data[8:]


# ============================================================================ the loop

@dataclass
class Foreign:
    target: str
    context: str
    mutations: str
    exception: str
    data: bytes
    trace: str


@dataclass
class Report:
    inputs: int = 0
    seconds: float = 0.0
    outcomes: dict[str, Counter[str]] = field(default_factory=dict)
    foreign: list[Foreign] = field(default_factory=list)
    foreign_kinds: Counter[str] = field(default_factory=Counter)
    #: (seconds, target, mutations, input size), slowest first
    slowest: list[tuple[float, str, str, int]] = field(default_factory=list)
    stalls: int = 0


def _inputs(seeds: Seeds, rng: random.Random, count: int) -> Iterator[tuple[str, Any, bytes, str]]:
    targets = sorted(t for t in seeds.by_target if seeds.by_target[t])
    for i in range(count):
        target = targets[i % len(targets)]
        pool = seeds.by_target[target]
        ctx, data = rng.choice(pool)
        _, other = rng.choice(pool)
        names = []
        for _ in range(rng.choice((1, 1, 1, 2, 3))):
            data, kind = mutate(rng, data, other)
            names.append(kind)
        if target == "frames" and rng.random() < 0.7 and len(data) >= 8:
            data = _fix_frame_lengths(data, int.from_bytes(data[5:8], "big"))
            names.append("fixed")
        yield target, ctx, data, "+".join(names)


def _alarm(_sig: int, _frame: Any) -> None:
    raise Stall()


def run(count: int, *, seed: int = 1, seeds: Seeds | None = None, keep: int = 20, slowest: int = 5,
        on_progress: Callable[[int], None] | None = None) -> Report:
    """Fuzz ``count`` inputs; keeps at most ``keep`` foreign exceptions with their inputs."""
    seeds = seeds or build_seeds()
    rng = random.Random(seed)
    report = Report()
    use_alarm = hasattr(signal, "setitimer") and sys.platform != "win32"
    old = signal.signal(signal.SIGALRM, _alarm) if use_alarm else None
    start = time.perf_counter()
    try:
        for n, (target, ctx, data, names) in enumerate(_inputs(seeds, rng, count), 1):
            fn = DECODERS[target]
            outcome = "ok"
            t0 = time.perf_counter()
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, STALL_SECONDS)
            try:
                fn(ctx, data)
            except DecodeError:
                outcome = "DecodeError"
            except Stall:
                outcome = "stall"
                report.stalls += 1
            except BaseException as exc:  # anything else is what we look for
                if isinstance(exc, KeyboardInterrupt):
                    raise
                outcome = "foreign"
                kind = f"{type(exc).__module__}.{type(exc).__qualname__}"
                report.foreign_kinds[kind] += 1
                if len(report.foreign) < keep:
                    report.foreign.append(Foreign(target, repr(ctx), names, f"{kind}: {str(exc)[:300]}", data,
                                                  traceback.format_exc(limit=-6)))
            finally:
                if use_alarm:
                    signal.setitimer(signal.ITIMER_REAL, 0)
            dt = time.perf_counter() - t0
            report.outcomes.setdefault(target, Counter())[outcome] += 1
            if len(report.slowest) < slowest or dt > report.slowest[-1][0]:
                report.slowest.append((dt, target, names, len(data)))
                report.slowest.sort(reverse=True)
                del report.slowest[slowest:]
            if on_progress is not None and n % 1000 == 0:
                on_progress(1000)
            report.inputs = n
    finally:
        if use_alarm:
            signal.signal(signal.SIGALRM, old)
    report.seconds = time.perf_counter() - start
    return report


def save(report: Report, directory: Path) -> list[Path]:
    directory.mkdir(parents=True, exist_ok=True)
    paths = []
    for i, f in enumerate(report.foreign):
        p = directory / f"foreign-{i:03d}-{f.target}.json"
        p.write_text(json.dumps({"target": f.target, "context": f.context, "mutations": f.mutations,
                                 "exception": f.exception, "trace": f.trace, "input_hex": f.data.hex()},
                                indent=1))
        paths.append(p)
    return paths


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--count", type=int, default=200_000, help="inputs to try")
    ap.add_argument("--seed", type=int, default=1, help="random seed (a run is reproducible)")
    ap.add_argument("--save", type=Path, default=None, help="write inputs with foreign exceptions here")
    ap.add_argument("--slowest", type=int, default=5, help="how many of the slowest inputs to list")
    ap.add_argument("--no-captures", action="store_true", help="seed from fixtures and encoded values only")
    args = ap.parse_args(argv)

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
    from rich.table import Table

    console = Console(stderr=True)
    t0 = time.perf_counter()
    seeds = build_seeds(captures=not args.no_captures)
    total = sum(len(v) for v in seeds.by_target.values())
    console.print(f"seeds: {total} over {len(seeds.by_target)} decoders "
                  f"(from {sum(seeds.sources.values())} values, {time.perf_counter() - t0:.1f} s)")
    with Progress(TextColumn("fuzzing"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
                  console=console) as progress:
        task = progress.add_task("fuzz", total=args.count)
        report = run(args.count, seed=args.seed, seeds=seeds, keep=200, slowest=args.slowest,
                     on_progress=lambda k: progress.advance(task, k))
    out = Console()
    table = Table(title=f"{report.inputs:,} inputs in {report.seconds:.1f} s (seed {args.seed})")
    for col in ("decoder", "inputs", "decoded", "DecodeError", "foreign", "stalls"):
        table.add_column(col, justify="left" if col == "decoder" else "right")
    for target in sorted(report.outcomes):
        c = report.outcomes[target]
        table.add_row(target, f"{sum(c.values()):,}", f"{c['ok']:,}", f"{c['DecodeError']:,}",
                      f"{c['foreign']:,}", f"{c['stall']:,}")
    out.print(table)
    slow = Table(title="slowest inputs")
    for col in ("seconds", "decoder", "mutations", "bytes"):
        slow.add_column(col)
    for dt, target, names, size in report.slowest:
        slow.add_row(f"{dt:.4f}", target, names, f"{size:,}")
    out.print(slow)
    foreign = sum(report.foreign_kinds.values())
    out.print(f"foreign exceptions: {foreign}" + (f" {dict(report.foreign_kinds)}" if foreign else ""))
    out.print(f"stalls (> {STALL_SECONDS:g} s): {report.stalls}")
    if report.foreign and args.save:
        paths = save(report, args.save)
        out.print(f"{len(paths)} inputs written to {args.save}")
    elif report.foreign:
        f = report.foreign[0]
        out.print(f"first: {f.target} {f.context} [{f.mutations}] {f.exception}")
    return 1 if foreign or report.stalls else 0


if __name__ == "__main__":
    sys.exit(main())
