# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Rows as flat field dictionaries with tshark-style names, and the filters that select rows.

Field names follow tshark's dotted style: ``frame.*`` for where the row is in the capture,
``tcp.stream``/``ip.*``/``tcp.*port`` for the connection, ``rocketmq.*`` for the command
(``rocketmq.code``, ``rocketmq.ext.topic``), ``rocketmq.ha.*`` for HA frames and
``rocketmq.problem*`` for verdicts. :data:`FIELDS` lists them with a one-line description;
ext fields appear as ``rocketmq.ext.<key>`` with the key as sent.

Bodies (``bodies=``): ``none`` (only ``rocketmq.body_length``), ``text`` (UTF-8, undecodable
bytes escaped), ``hex``, or ``decoded`` — the typed body of :mod:`wire.bodies` for the request
code, the stored messages of a PULL/QUERY/VIEW answer, the (inflated) message body and
properties of a send, and otherwise text; a body that does not decode gets
``rocketmq.body_error`` and its hex.

Filters (:func:`parse_filter`) are ``NAME=VALUE`` (also ``!=`` and ``~`` for "contains"), and
``VALUE`` may list alternatives with commas. ``NAME`` is a field name or a short name: ``code``,
``opaque``, ``flag``, ``type`` (request/response/oneway), ``kind`` (command/ha/problem), ``dir``
(c2s/s2c), ``stream``, ``src``, ``dst``, ``port``, ``topic`` (``ext.topic``, or ``ext.b`` of
SEND_MESSAGE_V2), ``group``, any other name tried as ``rocketmq.NAME``, ``rocketmq.ext.NAME`` and
``rocketmq.ha.NAME``. A code matches by number or name. A term on the code or on ext fields
matches a row when it matches the row's own fields or, for a response, those of its request, so
``code=105`` selects GET_ROUTEINFO_BY_TOPIC requests and their answers, and ``topic=T`` the
requests naming T and their answers; terms on anything else (``dir``, ``type``, ``stream``) look at
the row itself. All terms must match.
"""

from __future__ import annotations

import dataclasses
import enum
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from json.encoder import encode_basestring as _encode_basestring
from typing import Any

from ..codes import RequestCode, ResponseCode, SerializeType, version_name
from ..errors import DecodeError
from ..remoting import FLAG_ONEWAY, FLAG_RESPONSE
from .rows import DIRECTIONS, CommandRow, Conversation, HaRow, Row

__all__ = [
    "BODY_MODES",
    "DEFAULT_TABLE_FIELDS",
    "FIELDS",
    "Filter",
    "JsonLines",
    "body_value",
    "code_name",
    "command_type",
    "compile_filters",
    "display_name",
    "headline",
    "resolve_name",
    "parse_filter",
    "plain",
    "row_fields",
    "select",
    "summary",
]

BODY_MODES = ("none", "text", "hex", "decoded")

#: name → description, in display order (``rocketmq.ext.*`` stands for every ext key)
FIELDS: dict[str, str] = {
    "frame.number": "capture record (from 1) holding the first byte of the frame",
    "frame.time_epoch": "capture time of that record, seconds since the epoch",
    "frame.file": "capture file (when several are decoded)",
    "tcp.stream": "TCP connection index in the capture, from 0",
    "ip.src": "source address", "tcp.srcport": "source port",
    "ip.dst": "destination address", "tcp.dstport": "destination port",
    "rocketmq.row": "row number in the capture, from 1",
    "rocketmq.kind": "command, ha or problem",
    "rocketmq.direction": "c2s (client to server) or s2c",
    "rocketmq.role": "role of the server port (namesrv, broker, vip, controller, ha)",
    "rocketmq.offset": "stream offset of the frame in its direction",
    "rocketmq.length": "frame length on the wire, length field included",
    "rocketmq.serialize_type": "JSON or ROCKETMQ",
    "rocketmq.header_length": "header length",
    "rocketmq.type": "request, response or oneway",
    "rocketmq.code": "request or response code",
    "rocketmq.code_name": "name of the code",
    "rocketmq.flag": "flag word (bit 0 response, bit 1 oneway)",
    "rocketmq.opaque": "request id, copied by the response",
    "rocketmq.language": "sender's language",
    "rocketmq.version": "sender's version ordinal",
    "rocketmq.version_name": "the version's name (V4_9_8)",
    "rocketmq.remark": "remark",
    "rocketmq.command": "(table view) code name and number, 'oneway', HA frame type or [problem]",
    "rocketmq.summary": "(table view) the main ext fields, HA values or the problem message",
    "rocketmq.ext.*": "ext (custom header) fields, by key",
    "rocketmq.body_length": "body length",
    "rocketmq.body": "body, as --bodies asks",
    "rocketmq.body_error": "why the body did not decode",
    "rocketmq.request_code": "for a response: its request's code",
    "rocketmq.request_code_name": "for a response: its request's code name",
    "rocketmq.request_row": "for a response: its request's row",
    "rocketmq.latency": "for a response: seconds from the request's last byte to its first",
    "rocketmq.ha.variant": "HA protocol variant (v4, autoswitch-5.0.0, ...)",
    "rocketmq.ha.type": "report, transfer, handshake, handshake_reply, transfer_ack",
    "rocketmq.ha.offset": "physical offset (transfer start, or the slave's max offset)",
    "rocketmq.ha.data_length": "commit-log bytes carried",
    "rocketmq.ha.heartbeat": "true for a transfer without data",
    "rocketmq.ha.epoch": "epoch of the data (AutoSwitch)",
    "rocketmq.ha.epoch_start_offset": "start offset of that epoch (AutoSwitch)",
    "rocketmq.ha.confirm_offset": "master's confirm offset (AutoSwitch)",
    "rocketmq.ha.max_phy_offset": "master's max offset (AutoSwitch handshake reply)",
    "rocketmq.ha.last_epoch": "master's last epoch (AutoSwitch handshake reply)",
    "rocketmq.ha.entries": "epoch entries [epoch, start offset] (AutoSwitch handshake reply)",
    "rocketmq.ha.address": "slave address (AutoSwitch 5.0.0/5.1.0 handshake)",
    "rocketmq.ha.broker_id": "slave broker id (AutoSwitch 5.1.1+ handshake)",
    "rocketmq.ha.sync_from_last_file": "slave starts at the last CommitLog file (AutoSwitch handshake)",
    "rocketmq.ha.async_learner": "slave is an async learner (AutoSwitch handshake)",
    "rocketmq.problem": "gap, decode, skipped, truncated, packet or late",
    "rocketmq.problem.message": "what the problem is, in one line",
    "rocketmq.problem.length": "bytes concerned",
    "rocketmq.problem.field": "field that did not decode",
    "rocketmq.problem.expected": "what was expected there",
    "rocketmq.problem.found": "what was found",
}

#: columns of ``mqctl pcap decode`` in table form
DEFAULT_TABLE_FIELDS = ("rocketmq.row", "frame.time_epoch", "tcp.stream", "rocketmq.direction",
                        "rocketmq.command", "rocketmq.opaque", "rocketmq.serialize_type",
                        "rocketmq.body_length", "rocketmq.latency", "rocketmq.summary")

#: flag & 3 → type: bit 0 marks a response, bit 1 a oneway request (RemotingCommand.isResponseType,
#: isOnewayRPC); a response never counts as oneway
_TYPES = ("request", "response", "oneway", "response")
_REQ_NAMES = {int(c): c.name for c in RequestCode}
_RESP_NAMES = {int(c): c.name for c in ResponseCode}
_HA_TYPES = {"SlaveReport": "report", "Transfer": "transfer", "SlaveHandshake": "handshake",
             "HandshakeReply": "handshake_reply", "TransferAck": "transfer_ack", "EpochTransfer": "transfer"}
_SEND_CODES = frozenset((10, 310, 320, 36))  # SEND_MESSAGE, _V2, SEND_BATCH_MESSAGE, CONSUMER_SEND_MSG_BACK
_STORED_RESPONSES = frozenset((11, 12, 33))  # PULL_MESSAGE, QUERY_MESSAGE, VIEW_MESSAGE_BY_ID


def command_type(flag: int) -> str:
    """``request``, ``response`` or ``oneway``, from a command's flag word."""
    return _TYPES[flag & (FLAG_RESPONSE | FLAG_ONEWAY)]


def code_name(code: int, response: bool) -> str:
    name = (_RESP_NAMES if response else _REQ_NAMES).get(code)
    return name if name is not None else str(code)


def plain(value: Any) -> Any:
    """A JSON-ready form of decoded values: dataclasses and mappings as dicts, enums by name,
    bytes as UTF-8 text when they are, else hex."""
    if value is None or (isinstance(value, (str, int, float, bool)) and not isinstance(value, enum.Enum)):
        return value
    if isinstance(value, enum.Enum):
        return value.name
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        raw = bytes(value)
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            return raw.hex()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, Mapping):
        return {str(k) if not isinstance(k, (str, int)) else k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return plain(value._asdict())
    return str(value)


def _text(data: bytes) -> str:
    return data.decode("utf-8", "backslashreplace")


def body_value(row: CommandRow, mode: str) -> tuple[Any, str | None]:
    """(the body as ``mode`` asks, or None; an error message when ``decoded`` failed)."""
    body = row.command.body
    if not body or mode == "none":
        return None, None
    if mode == "text":
        return _text(body), None
    if mode == "hex":
        return body.hex(), None
    try:
        return _decoded_body(row, body), None
    except DecodeError as err:
        return body.hex(), str(err)


def _decoded_body(row: CommandRow, body: bytes) -> Any:
    from .. import fastjson
    from ..bodies import REQUEST_BODIES, RESPONSE_BODIES, decode_body

    cmd = row.command
    response = bool(cmd.flag & FLAG_RESPONSE)
    req = row.request.command if row.request is not None else None
    if not response and cmd.code in REQUEST_BODIES:
        return _wire_json(decode_body(cmd.code, False, body, ext_fields=cmd.ext_fields))
    if response and req is not None and cmd.code == 0 and req.code in RESPONSE_BODIES:
        return _wire_json(decode_body(req.code, True, body, ext_fields=req.ext_fields))
    if response and req is not None and cmd.code == 0 and req.code in _STORED_RESPONSES:
        from ..message import decode_messages

        return [_message(m) for m in decode_messages(body)]
    if not response and cmd.code in _SEND_CODES:
        return _send_body(cmd.code, cmd.ext_fields, body)
    if body[:1] in (b"{", b"["):
        try:
            return plain(fastjson.loads(body))
        except DecodeError:
            pass
    return _text(body)


def _wire_json(value: Any) -> Any:
    """A typed body as the JSON it stands for, under the names the wire uses
    (``topicConfigTable``, ``brokerAddrs``, unknown keys included) in the standard form, where
    an object used as a map key is written as its JSON text; anything else as :func:`plain`."""
    from ..bodies import JsonBody

    if isinstance(value, JsonBody):
        return plain(value.to_json(standard=True))
    return plain(value)


def _message(m: Any) -> dict[str, Any]:
    out: dict[str, Any] = plain(m)
    try:
        out["body"] = plain(m.decompressed_body())
    except DecodeError as err:
        out["body_error"] = str(err)
    return out


def _send_body(code: int, ext: Mapping[str, str], body: bytes) -> Any:
    from .._javanum import java_decimal
    from ..errors import excerpt
    from ..message import decode_batch, decode_properties
    from ..message.sysflag import decompress_body

    v2 = "b" in ext and "topic" not in ext
    key = "f" if v2 else "sysFlag"
    text = ext.get(key) or "0"
    sys_flag = java_decimal(text)
    if sys_flag is None or not -(2**31) <= sys_flag < 2**31:  # Integer.parseInt, as the broker reads it
        raise DecodeError(f"{key}: {excerpt(text)} is not an int", field=f"extFields.{key}",
                          expected="a decimal int32", found=excerpt(text))
    props = ext.get("i" if v2 else "properties")
    batch = code == 320 or (ext.get("m" if v2 else "batch") == "true")
    out: dict[str, Any] = {}
    if props:
        out["properties"] = decode_properties(props)
    if batch:
        out["messages"] = [plain(e) for e in decode_batch(body)]
    else:
        out["body"] = plain(decompress_body(body, sys_flag))
    return out


def _ha_fields(out: dict[str, Any], row: HaRow) -> None:
    m = row.message
    name = type(m).__name__
    out["rocketmq.ha.variant"] = row.variant
    out["rocketmq.ha.type"] = _HA_TYPES.get(name, name)
    get = getattr
    if hasattr(m, "phy_offset"):
        out["rocketmq.ha.offset"] = m.phy_offset
        out["rocketmq.ha.data_length"] = len(m.data)
        out["rocketmq.ha.heartbeat"] = not m.data
    if hasattr(m, "max_offset"):
        out["rocketmq.ha.offset"] = m.max_offset
    for attr in ("epoch", "epoch_start_offset", "confirm_offset", "max_phy_offset", "last_epoch", "address",
                 "broker_id"):
        v = get(m, attr, None)
        if v is not None:
            out[f"rocketmq.ha.{attr}"] = v
    if hasattr(m, "entries"):
        out["rocketmq.ha.entries"] = [[e.epoch, e.start_offset] for e in m.entries]
    if hasattr(m, "sync_from_last_file"):
        out["rocketmq.ha.sync_from_last_file"] = m.sync_from_last_file
        out["rocketmq.ha.async_learner"] = m.async_learner


def row_fields(row: Row, *, bodies: str = "none", capture: str | None = None) -> dict[str, Any]:
    """The row as a flat ``{field name: value}`` dict (values JSON-ready)."""
    conv = row.conv
    d = row.direction
    out: dict[str, Any] = {"frame.number": row.record, "frame.time_epoch": row.ts}
    if capture is not None:
        out["frame.file"] = capture
    out["rocketmq.row"] = row.number
    if conv is not None:
        out["tcp.stream"] = conv.index
        if d is not None:
            src, sport, dst, dport = conv.endpoints(d)
            out["ip.src"] = src
            out["tcp.srcport"] = sport
            out["ip.dst"] = dst
            out["tcp.dstport"] = dport
    if isinstance(row, CommandRow):
        cmd = row.command
        flag = cmd.flag
        response = bool(flag & FLAG_RESPONSE)
        out["rocketmq.kind"] = "command"
        out["rocketmq.direction"] = DIRECTIONS[row.direction]
        out["rocketmq.role"] = row.conv.role
        out["rocketmq.offset"] = row.offset
        out["rocketmq.length"] = row.size
        out["rocketmq.serialize_type"] = cmd.serialize_type.name
        out["rocketmq.header_length"] = row.header_length
        out["rocketmq.type"] = _TYPES[flag & (FLAG_RESPONSE | FLAG_ONEWAY)]
        out["rocketmq.code"] = cmd.code
        out["rocketmq.code_name"] = code_name(cmd.code, response)
        out["rocketmq.flag"] = flag
        out["rocketmq.opaque"] = cmd.opaque
        lang = cmd.language
        out["rocketmq.language"] = lang.name if isinstance(lang, enum.Enum) else lang
        out["rocketmq.version"] = cmd.version
        out["rocketmq.version_name"] = version_name(cmd.version)
        if cmd.remark is not None:
            out["rocketmq.remark"] = cmd.remark
        for k, v in cmd.ext_fields.items():
            out["rocketmq.ext." + k] = v
        out["rocketmq.body_length"] = len(cmd.body) if cmd.body else 0
        if bodies != "none" and cmd.body:
            value, error = body_value(row, bodies)
            out["rocketmq.body"] = value
            if error is not None:
                out["rocketmq.body_error"] = error
        req = row.request
        if req is not None:
            rc = req.command.code
            out["rocketmq.request_code"] = rc
            out["rocketmq.request_code_name"] = code_name(rc, False)
            out["rocketmq.request_row"] = req.number
            out["rocketmq.latency"] = row.ts - req.ts_end
    elif isinstance(row, HaRow):
        out["rocketmq.kind"] = "ha"
        out["rocketmq.direction"] = DIRECTIONS[row.direction]
        out["rocketmq.role"] = row.conv.role
        out["rocketmq.offset"] = row.offset
        out["rocketmq.length"] = row.size
        _ha_fields(out, row)
    else:
        out["rocketmq.kind"] = "problem"
        if d is not None:
            out["rocketmq.direction"] = DIRECTIONS[d]
        if row.offset is not None:
            out["rocketmq.offset"] = row.offset
        out["rocketmq.problem"] = row.verdict
        out["rocketmq.problem.message"] = row.message
        out["rocketmq.problem.length"] = row.length
        err = row.error
        if err is not None:
            if err.field is not None:
                out["rocketmq.problem.field"] = err.field
            if err.expected is not None:
                out["rocketmq.problem.expected"] = plain(err.expected)
            if err.found is not None:
                out["rocketmq.problem.found"] = plain(err.found)
    return out


def headline(row: Row) -> str:
    """``GET_ROUTEINFO_BY_TOPIC(105)``, ``SUCCESS(0)``, ``UPDATE_CONSUMER_OFFSET(15) oneway``,
    ``HA transfer``, ``[gap]``: the table view's command column."""
    if isinstance(row, CommandRow):
        cmd = row.command
        response = bool(cmd.flag & FLAG_RESPONSE)
        text = f"{code_name(cmd.code, response)}({cmd.code})"
        return text + " oneway" if cmd.flag & FLAG_ONEWAY and not response else text
    if isinstance(row, HaRow):
        name = type(row.message).__name__
        return f"HA {_HA_TYPES.get(name, name)}"
    return f"[{row.verdict}]"


class JsonLines:
    """Rows as JSON lines: each line is the object of ``row_fields`` (same keys, same order), built
    directly for command rows without decoded bodies, which is what bulk ``-o jsonl`` spends its
    time on. A differential test holds it to ``json.dumps(row_fields(row))``.

    The parts of a line that repeat from row to row are kept as ready text: the connection part
    (stream, addresses, ports, role) per conversation and direction, the type/code/flag and
    language/version parts per combination seen, the ext field names, and a response's request
    code. The caches are emptied when they grow large, so a capture of random codes cannot make
    them grow without bound.
    """

    #: entries a text cache may hold before it is emptied
    CACHE_LIMIT = 4096

    def __init__(self, *, bodies: str = "none", capture: str | None = None) -> None:
        self.bodies = bodies
        self.capture = capture
        self._encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
        self._conv: dict[Conversation, tuple[str, str]] = {}
        self._mid: dict[tuple[Any, ...], tuple[str, str, str]] = {}
        self._keys: dict[str, str] = {}
        self._requests: dict[int, str] = {}
        self._head = (f',"frame.file":{_jstr(capture)},"rocketmq.row":' if capture is not None
                      else ',"rocketmq.row":')

    def __call__(self, row: Row) -> str:
        """One row's line (without the newline)."""
        return self.lines((row,))[:-1]

    def lines(self, rows: Iterable[Row]) -> str:
        """Every row's line, each ending with a newline, as one string."""
        enc = _encode_basestring
        head = self._head
        convs = self._conv
        mids = self._mid
        keys = self._keys
        requests = self._requests
        bodies = self.bodies
        fast = bodies != "decoded"
        out: list[str] = []
        append = out.append
        last_ts: float | None = None
        when = ""
        for row in rows:
            if type(row) is not CommandRow or not fast:
                append(self._encode(row_fields(row, bodies=bodies, capture=self.capture)))
                append("\n")
                continue
            ts, _ts_end, conv, d, offset, _frame_no, size, record, header_length, cmd, req, number = row
            try:
                where = convs[conv]
            except KeyError:
                if len(convs) >= self.CACHE_LIMIT:
                    convs.clear()
                where = convs[conv] = (self._where(conv, 0), self._where(conv, 1))
            key = (cmd.flag, cmd.code, cmd.serialize_type, cmd.language, cmd.version)
            try:
                mid = mids[key]
            except KeyError:
                if len(mids) >= self.CACHE_LIMIT:
                    mids.clear()
                mid = mids[key] = self._middle(*key)
            if ts is not last_ts:
                # frames of one segment share the segment's time: its text is made once
                last_ts = ts
                when = repr(ts)
            append(f'{{"frame.number":{record},"frame.time_epoch":{when}{head}{number}{where[d]}'
                   f'"rocketmq.offset":{offset},"rocketmq.length":{size}{mid[0]}{header_length}{mid[1]}'
                   f'{cmd.opaque}{mid[2]}')
            if cmd.remark is not None:
                append(',"rocketmq.remark":' + enc(cmd.remark))
            for k, v in cmd.ext_fields.items():
                try:
                    append(keys[k])
                except KeyError:
                    if len(keys) >= self.CACHE_LIMIT:
                        keys.clear()
                    kk = keys[k] = "," + enc("rocketmq.ext." + k) + ":"
                    append(kk)
                append(enc(v))
            body = cmd.body
            if body:
                append(f',"rocketmq.body_length":{len(body)}')
                if bodies != "none":
                    append(',"rocketmq.body":' + enc(_text(body) if bodies == "text" else body.hex()))
            else:
                append(',"rocketmq.body_length":0')
            if req is not None:
                rc = req.command.code
                asked = requests.get(rc)
                if asked is None:
                    if len(requests) >= self.CACHE_LIMIT:
                        requests.clear()
                    asked = requests[rc] = (f',"rocketmq.request_code":{rc},"rocketmq.request_code_name":'
                                            f'{enc(code_name(rc, False))},"rocketmq.request_row":')
                append(f'{asked}{req.number},"rocketmq.latency":{ts - req.ts_end!r}}}\n')
            else:
                append("}\n")
        return "".join(out)

    @staticmethod
    def _where(conv: Conversation, d: int) -> str:
        src, sport, dst, dport = conv.endpoints(d)
        enc = _encode_basestring
        return (f',"tcp.stream":{conv.index},"ip.src":{enc(src)},"tcp.srcport":{sport},'
                f'"ip.dst":{enc(dst)},"tcp.dstport":{dport},"rocketmq.kind":"command",'
                f'"rocketmq.direction":"{DIRECTIONS[d]}","rocketmq.role":{_jval(conv.role)},')

    @staticmethod
    def _middle(flag: int, code: int, serialize_type: SerializeType, language: Any,
                version: int) -> tuple[str, str, str]:
        enc = _encode_basestring
        response = bool(flag & FLAG_RESPONSE)
        lang = enc(language.name) if isinstance(language, enum.Enum) else _jval(language)
        return (f',"rocketmq.serialize_type":"{serialize_type.name}","rocketmq.header_length":',
                f',"rocketmq.type":"{_TYPES[flag & (FLAG_RESPONSE | FLAG_ONEWAY)]}","rocketmq.code":{code},'
                f'"rocketmq.code_name":{enc(code_name(code, response))},'
                f'"rocketmq.flag":{flag},"rocketmq.opaque":',
                f',"rocketmq.language":{lang},"rocketmq.version":{version},'
                f'"rocketmq.version_name":{enc(version_name(version))}')


def _jstr(s: str) -> str:
    return _encode_basestring(s)


def _jval(v: Any) -> str:
    return "null" if v is None else _encode_basestring(v) if isinstance(v, str) else json.dumps(v)


def summary(row: Row) -> str:
    """A short human description for the table view: the main ext fields, the HA message, the problem."""
    if isinstance(row, CommandRow):
        cmd = row.command
        ext = cmd.ext_fields
        parts = []
        for key in ("topic", "b", "consumerGroup", "group", "queueId", "queueOffset", "brokerName", "msgId",
                    "clientID"):
            v = ext.get(key)
            if v:
                parts.append(f"{'topic' if key == 'b' else key}={v}")
        if cmd.remark:
            parts.append(repr(cmd.remark if len(cmd.remark) < 60 else cmd.remark[:57] + "..."))
        return " ".join(parts[:4])
    if isinstance(row, HaRow):
        f: dict[str, Any] = {}
        _ha_fields(f, row)
        keep = [f"{k.rsplit('.', 1)[1]}={v}" for k, v in f.items()
                if k not in ("rocketmq.ha.variant", "rocketmq.ha.heartbeat", "rocketmq.ha.type")]
        return " ".join(keep)
    return row.message


# ---------------------------------------------------------------------------------------------- filters

_SHORT: dict[str, tuple[str, ...]] = {
    "code": ("rocketmq.code", "rocketmq.code_name"),
    "stream": ("tcp.stream",),
    "src": ("ip.src",),
    "dst": ("ip.dst",),
    "port": ("tcp.srcport", "tcp.dstport"),
    "dir": ("rocketmq.direction",),
    "direction": ("rocketmq.direction",),
    "topic": ("rocketmq.ext.topic", "rocketmq.ext.b"),
    "group": ("rocketmq.ext.consumerGroup", "rocketmq.ext.producerGroup", "rocketmq.ext.group"),
    "problem": ("rocketmq.problem",),
    "file": ("frame.file",),
    "record": ("frame.number",),
}


_REQUEST_NAMES = frozenset(("rocketmq.code", "rocketmq.code_name"))


class Filter:
    """One ``NAME op VALUE`` term (see the module docstring)."""

    __slots__ = ("text", "names", "op", "values", "via_request")

    def __init__(self, text: str, names: tuple[str, ...], op: str, values: tuple[str, ...]) -> None:
        self.text = text
        self.names = names
        self.op = op
        self.values = values
        #: whether a response may match through its request: for what names the request (its code
        #: and ext fields), not for where the row is (direction, type, stream, ...)
        self.via_request = op != "!=" and any(n in _REQUEST_NAMES or n.startswith("rocketmq.ext.")
                                              for n in names)

    def _test(self, fields: Mapping[str, Any]) -> bool:
        found = [fields[n] for n in self.names if n in fields]
        if self.op == "~":
            return any(v in _str(f) for f in found for v in self.values)
        hit = any(_str(f) == v or (isinstance(f, str) and f.lower() == v.lower() and n.endswith("_name"))
                  for n, f in ((n, fields[n]) for n in self.names if n in fields) for v in self.values)
        return hit

    def matches(self, fields: Mapping[str, Any], request_fields: Mapping[str, Any] | None = None) -> bool:
        hit = self._test(fields) or (request_fields is not None and self._test(request_fields))
        return not hit if self.op == "!=" else hit

    def __repr__(self) -> str:
        return f"Filter({self.text!r})"


def _str(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)


def parse_filter(text: str) -> Filter:
    """``"code=105"``, ``"topic!=T"``, ``"rocketmq.remark~overflow"``, ``"code=10,310"``.

    Raises :class:`ValueError` with a one-line reason when the term is malformed.
    """
    for op in ("!=", "=", "~"):
        name, sep, value = text.partition(op)
        if sep:
            break
    else:
        raise ValueError(f"filter {text!r}: expected NAME=VALUE, NAME!=VALUE or NAME~TEXT")
    name = name.strip()
    if not name or not value.strip():
        raise ValueError(f"filter {text!r}: expected NAME=VALUE, NAME!=VALUE or NAME~TEXT")
    names = resolve_name(name)
    values = tuple(v.strip() for v in value.split(",") if v.strip())
    if op != "~" and set(names) & {"rocketmq.code", "rocketmq.code_name"}:
        from ..codes import RequestCode, ResponseCode

        known = RequestCode.__members__.keys() | ResponseCode.__members__.keys()
        for v in values:
            if not v.lstrip("-").isdigit() and v.upper() not in known:
                raise ValueError(f"filter {text!r}: {v!r} is neither a code number nor the name of a "
                                 "request or response code")
    return Filter(text, names, op, values)


def resolve_name(name: str) -> tuple[str, ...]:
    """A field name or short name → the field names it stands for."""
    if name in _SHORT:
        return _SHORT[name]
    if "." in name:
        return (name,)
    return (f"rocketmq.{name}", f"rocketmq.ext.{name}", f"rocketmq.ha.{name}")


def display_name(name: str) -> str:
    """A ``--fields`` entry → one field name: known names as they are, short names to the first
    field they stand for (``code`` → ``rocketmq.code``, ``topic`` → ``rocketmq.ext.topic``), and
    anything else to ``rocketmq.ext.NAME``."""
    if "." in name or name.endswith("*"):
        return name
    if name in _SHORT:
        return _SHORT[name][0]
    for candidate in (f"rocketmq.{name}", f"rocketmq.ha.{name}"):
        if candidate in FIELDS:
            return candidate
    return f"rocketmq.ext.{name}"


Predicate = Callable[[Row, Mapping[str, Any], Callable[[Row], Mapping[str, Any]]], bool]


def compile_filters(terms: Iterable[str]) -> Predicate:
    """All ``terms`` as one predicate ``(row, fields, fields_of) -> bool`` (every term must match)."""
    filters = [parse_filter(t) for t in terms]

    def predicate(row: Row, fields: Mapping[str, Any], fields_of: Callable[[Row], Mapping[str, Any]]) -> bool:
        req_fields: Mapping[str, Any] | None = None
        for f in filters:
            if f.matches(fields):
                continue
            if f.via_request and isinstance(row, CommandRow) and row.request is not None:
                if req_fields is None:
                    req_fields = fields_of(row.request)
                if f.matches(req_fields):
                    continue
            return False
        return True

    return predicate


def select(fields: Mapping[str, Any], names: Sequence[str]) -> dict[str, Any]:
    """Only the named fields (``rocketmq.ext.*`` patterns with a trailing ``*`` allowed)."""
    out: dict[str, Any] = {}
    for n in names:
        if n.endswith("*"):
            prefix = n[:-1]
            out.update((k, v) for k, v in fields.items() if k.startswith(prefix))
        elif n in fields:
            out[n] = fields[n]
    return out
