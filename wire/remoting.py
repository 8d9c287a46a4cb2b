# Licensed under the Apache License, Version 2.0. See LICENSE.
"""RemotingCommand and its two header serializations.

Theory of operation
-------------------
A frame (:mod:`wire.framing`) carries a header and a body. The header is one of:

* **JSON** (serialize type 0), written by fastjson from the Java ``RemotingCommand`` getters:
  ``{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":1,
  "serializeTypeCurrentRPC":"JSON","version":409}``. Properties are sorted, nulls left out,
  no whitespace, the language by enum name. We write exactly that. We read leniently, as
  fastjson does and as the peers need: any key order, unknown keys ignored, ext values that are
  JSON numbers or booleans (the C++ client and ali-ons send those) turned into the strings Java
  would see, single quotes and bare keys through :mod:`wire.fastjson`.
* **ROCKETMQ** (serialize type 1), ``RocketMQSerializable``: int16 code, byte language, int16
  version, int32 opaque, int32 flag, int32-prefixed remark, then an int32-prefixed block of
  ext entries (u16 key length + key, int32 value length + value). A zero length is Java's null:
  an empty remark decodes as ``None``; an empty key or value stays an empty string so that
  re-encoding reproduces the bytes. Codes and versions outside int16 cannot be carried.

:data:`REMOTING_HEADER` declares the binary layout in construct (the authority, used by the
differential tests and for diagnostics); :func:`decode_binary_header` is the hand-written
``struct`` fast path that the broker and capture scanner use.

Flag bit 0 marks a response, bit 1 a oneway request (``RemotingCommand.markResponseType`` /
``markOnewayRPC``). A response copies its request's ``opaque``.
"""

from __future__ import annotations

import dataclasses
import json
import json.scanner
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any, cast

from construct import (
    ConstructError,
    FocusedSeq,
    GreedyRange,
    Int8ub,
    Int16sb,
    Int16ub,
    Int32sb,
    PascalString,
    Prefixed,
    Struct,
    Terminated,
)

from . import fastjson
from .codes import (
    LanguageCode,
    MQVersion,
    RequestCode,
    ResponseCode,
    SerializeType,
    language_code,
)
from .errors import DecodeError, EncodeError, TrailingBytes, Truncated, clipped, decode_utf8, excerpt
from .framing import MAX_TOTAL_LENGTH, PREFIX, Frame, split_frame

__all__ = [
    "DEFAULT_VERSION",
    "EXT_FIELD",
    "FLAG_ONEWAY",
    "FLAG_RESPONSE",
    "REMOTING_HEADER",
    "RemotingCommand",
    "decode_binary_header",
    "decode_command",
    "decode_frame",
    "decode_frame_off_loop",
    "decode_header",
    "decode_json_header",
    "encode_binary_header",
    "encode_command",
    "encode_command_head",
    "encode_header",
    "encode_json_header",
    "encode_json_header_dumps",
]

#: flag bit 0 (RPC_TYPE): the command is a response
FLAG_RESPONSE = 1
#: flag bit 1 (RPC_ONEWAY): the request expects no response
FLAG_ONEWAY = 2
#: the version this toolkit announces unless told otherwise (V4_9_8)
DEFAULT_VERSION = int(MQVersion.V4_9_8)

_INT32 = (-(2**31), 2**31 - 1)
_INT16 = (-(2**15), 2**15 - 1)


def _in(rng: tuple[int, int], v: int) -> bool:
    return rng[0] <= v <= rng[1]


@dataclass(frozen=True, slots=True)
class RemotingCommand:
    """One remoting request or response.

    ``ext_fields`` holds the custom-header fields as strings, in wire order; :mod:`wire.headers`
    gives typed views of them. ``body`` is ``None`` when the frame has no body.
    A command that could not be encoded in its ``serialize_type`` cannot be built.
    """

    code: int
    language: LanguageCode | int | str = LanguageCode.JAVA
    version: int = DEFAULT_VERSION
    opaque: int = 0
    flag: int = 0
    remark: str | None = None
    ext_fields: Mapping[str, str] = field(default_factory=dict, hash=False)
    body: bytes | None = None
    serialize_type: SerializeType = SerializeType.JSON
    #: The ext entries exactly as a ROCKETMQ header carried them, kept only when they repeat a key.
    #: The Java client's ACL hook makes ``rocketMQProtocolEncode`` write a FastCodes header's fields
    #: and then the ext map that already holds them, so every key comes twice; Java reads the block
    #: into a HashMap (the last value wins), as ``ext_fields`` does. Re-encoding uses these entries
    #: while ``ext_fields`` still agrees with them, so captured frames re-encode byte for byte.
    #: Building or replacing a command drops them.
    wire_ext: tuple[tuple[str, str], ...] | None = field(default=None, init=False, compare=False,
                                                         hash=False, repr=False)

    def __post_init__(self) -> None:
        for name in ("code", "version", "opaque", "flag"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or not _in(_INT32, v):
                raise EncodeError(f"{name} must be a 32-bit int, got {v!r}", field=name)
        st = SerializeType(self.serialize_type)
        object.__setattr__(self, "serialize_type", st)
        lang = self.language
        if isinstance(lang, str) and not isinstance(lang, LanguageCode):
            object.__setattr__(self, "language", _LANG_BY_NAME.get(lang, lang))
        elif isinstance(lang, int) and not isinstance(lang, LanguageCode):
            object.__setattr__(self, "language", language_code(lang))
        if st is SerializeType.ROCKETMQ:
            # mirrors RocketMQSerializable.rocketMQProtocolEncode: putShort((short) code)
            for name in ("code", "version"):
                v = getattr(self, name)
                if not _in(_INT16, v):
                    raise EncodeError(
                        f"{name} {v} does not fit the ROCKETMQ header's int16; use JSON", field=name)
            if not (isinstance(self.language, int) and 0 <= self.language <= 255):
                raise EncodeError(f"language {self.language!r} has no ROCKETMQ byte value",
                                  field="language")
        if self.remark is not None and not isinstance(self.remark, str):
            raise EncodeError(f"remark must be a str, got {type(self.remark).__name__}", field="remark")
        object.__setattr__(self, "ext_fields", _ext_strings(self.ext_fields))
        if self.body is not None:
            if not isinstance(self.body, (bytes, bytearray, memoryview)):
                raise EncodeError(f"body must be bytes, got {type(self.body).__name__}", field="body")
            object.__setattr__(self, "body", bytes(self.body) if len(self.body) else None)

    # ------------------------------------------------------------------ views

    @property
    def is_response(self) -> bool:
        return bool(self.flag & FLAG_RESPONSE)

    @property
    def is_oneway(self) -> bool:
        return bool(self.flag & FLAG_ONEWAY)

    @property
    def code_name(self) -> str:
        """``"SEND_MESSAGE"``, ``"SUCCESS"``, or the number for an unknown code."""
        table: type[RequestCode] | type[ResponseCode] = ResponseCode if self.is_response else RequestCode
        try:
            return table(self.code).name
        except ValueError:
            return str(self.code)

    @property
    def language_name(self) -> str:
        lang = self.language
        return lang.name if isinstance(lang, LanguageCode) else str(lang)

    # ------------------------------------------------------------------ building

    @classmethod
    def request(
        cls,
        code: int,
        ext_fields: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        *,
        opaque: int = 0,
        oneway: bool = False,
        language: LanguageCode | int | str = LanguageCode.JAVA,
        version: int = DEFAULT_VERSION,
        serialize_type: SerializeType = SerializeType.JSON,
    ) -> RemotingCommand:
        """A request; ext values may be str, int or bool (written as Java would)."""
        return cls(int(code), language, version, opaque, FLAG_ONEWAY if oneway else 0, None,
                   dict(ext_fields or {}), body, serialize_type)

    def response(
        self,
        code: int = ResponseCode.SUCCESS,
        remark: str | None = None,
        ext_fields: Mapping[str, Any] | None = None,
        body: bytes | None = None,
        *,
        language: LanguageCode | int | str = LanguageCode.JAVA,
        version: int | None = None,
        serialize_type: SerializeType | None = None,
    ) -> RemotingCommand:
        """The response to this request: same opaque, flag bit 0 set, same serialize type
        (the 4.9.4–4.9.8 rule) unless another is given."""
        code = int(code)
        if (serialize_type is None and version is None and language is LanguageCode.JAVA
                and -0x8000 <= code <= 0x7FFF and (remark is None or type(remark) is str)
                and (body is None or type(body) is bytes)):
            # every field is valid for both serialize types as it stands: the checks of
            # __post_init__ would change nothing, so the answer is built without them
            ext: dict[str, str] = {}
            if ext_fields:
                for k, v in ext_fields.items():
                    if type(k) is not str or type(v) is not str:
                        break
                    ext[k] = v
                else:
                    return _build(code, LanguageCode.JAVA, DEFAULT_VERSION, self.opaque, FLAG_RESPONSE,
                                  remark, ext, body or None, self.serialize_type)
            else:
                return _build(code, LanguageCode.JAVA, DEFAULT_VERSION, self.opaque, FLAG_RESPONSE,
                              remark, ext, body or None, self.serialize_type)
        st = self.serialize_type if serialize_type is None else serialize_type
        return RemotingCommand(code, language, DEFAULT_VERSION if version is None else version,
                               self.opaque, FLAG_RESPONSE, remark, dict(ext_fields or {}), body, st)

    def replace(self, **changes: Any) -> RemotingCommand:
        return dataclasses.replace(self, **changes)

    def __repr__(self) -> str:
        kind = "response" if self.is_response else ("oneway" if self.is_oneway else "request")
        body = f", body={len(self.body)}B" if self.body else ""
        remark = f", remark={self.remark!r}" if self.remark is not None else ""
        return (f"<RemotingCommand {kind} {self.code_name}({self.code}) opaque={self.opaque} "
                f"{self.serialize_type.name} ext={dict(self.ext_fields)!r}{remark}{body}>")


def _ext_strings(ext: Mapping[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for k, v in ext.items():
        if not isinstance(k, str):
            raise EncodeError(f"ext field name {k!r} is not a str", field="extFields")
        if isinstance(v, str):
            out[k] = v
        elif v is None:
            continue  # Java skips null values (makeCustomHeaderToNet, mapSerialize)
        elif isinstance(v, bool):
            out[k] = "true" if v else "false"
        elif isinstance(v, (int, Decimal)):
            out[k] = str(v)
        else:
            raise EncodeError(f"ext field {k}: {type(v).__name__} is not a header value",
                              field=f"extFields.{k}")
    return out


_new = object.__new__
(_set_code, _set_language, _set_version, _set_opaque, _set_flag, _set_remark, _set_ext, _set_body,
 _set_st, _set_wire_ext) = (getattr(RemotingCommand, name).__set__ for name in (
    "code", "language", "version", "opaque", "flag", "remark", "ext_fields", "body", "serialize_type",
    "wire_ext"))


def _build(code: int, language: LanguageCode | int | str, version: int, opaque: int, flag: int,
           remark: str | None, ext: dict[str, str], body: bytes | None, st: SerializeType) -> RemotingCommand:
    """Build without re-validating, for values that are valid by construction (decoders, and
    :meth:`RemotingCommand.response` once it has checked them). The frozen dataclass's slots are
    written through their descriptors, the cheapest way past ``__setattr__``."""
    cmd = _new(RemotingCommand)
    _set_code(cmd, code)
    _set_language(cmd, language)
    _set_version(cmd, version)
    _set_opaque(cmd, opaque)
    _set_flag(cmd, flag)
    _set_remark(cmd, remark)
    _set_ext(cmd, ext)
    _set_body(cmd, body)
    _set_st(cmd, st)
    _set_wire_ext(cmd, None)
    return cmd


def trusted_command(code: int, language: LanguageCode | int | str, version: int, opaque: int, flag: int,
                    remark: str | None, ext: dict[str, str], st: SerializeType) -> RemotingCommand:
    """A decoded header, without a body yet."""
    return _build(code, language, version, opaque, flag, remark, ext, None, st)


# ====================================================================== ROCKETMQ binary header

#: One ext entry: ``RocketMQSerializable.mapSerialize`` (short key length, int value length).
EXT_FIELD = Struct(
    "key" / PascalString(Int16ub, "utf8"),
    "value" / PascalString(Int32sb, "utf8"),
)

#: The ROCKETMQ binary header (``RocketMQSerializable.rocketMQProtocolEncode``).
REMOTING_HEADER = Struct(
    "code" / Int16sb,
    "language" / Int8ub,
    "version" / Int16sb,
    "opaque" / Int32sb,
    "flag" / Int32sb,
    "remark" / PascalString(Int32sb, "utf8"),
    "ext_fields" / Prefixed(Int32sb, FocusedSeq("items", "items" / GreedyRange(EXT_FIELD), Terminated)),
    Terminated,
)

_BIN_FIXED = struct.Struct(">hBhiii")  # code, language, version, opaque, flag, remark length
_I32 = struct.Struct(">i")
_U16 = struct.Struct(">H")




def decode_binary_header(data: bytes) -> RemotingCommand:
    """Decode a ROCKETMQ header (offsets in errors are relative to the header's first byte)."""
    n = len(data)
    if n < 21:
        raise Truncated(f"ROCKETMQ header needs at least 21 bytes, has {n}", offset=n,
                        field="header", expected=21, found=n)
    code, lang, version, opaque, flag, rlen = _BIN_FIXED.unpack_from(data, 0)
    pos = 17
    # mirrors RocketMQSerializable.readStr: a length must be >= 0 and fit in the header
    if rlen < 0 or pos + rlen + 4 > n:
        raise DecodeError(f"remark length {rlen} does not fit in the {n}-byte header", offset=13,
                          field="remark", expected=f"0..{n - 21}", found=rlen)
    remark = decode_utf8(data[pos:pos + rlen], pos, "remark") if rlen else None
    pos += rlen
    (elen,) = _I32.unpack_from(data, pos)
    if elen < 0 or pos + 4 + elen != n:
        raise (TrailingBytes if elen >= 0 and pos + 4 + elen < n else DecodeError)(
            f"ext fields length {elen} does not match the {n - pos - 4} bytes left in the header",
            offset=pos, field="extFields", expected=n - pos - 4, found=elen)
    ext = _binary_ext_fast(data, pos + 4, n)
    wire_ext = None
    if ext is None:
        ext, wire_ext = _binary_ext(data, pos + 4, n)
    cmd = trusted_command(code, language_code(lang), version, opaque, flag, remark, ext,
                          SerializeType.ROCKETMQ)
    if wire_ext is not None:
        _set_wire_ext(cmd, wire_ext)
    return cmd


def _binary_ext_fast(data: bytes, pos: int, n: int) -> dict[str, str] | None:
    """The ext block of a well-formed header, or None when anything is off (a length that
    overruns, bad UTF-8, a repeated key): :func:`_binary_ext` then decodes it, or says what is
    wrong and where."""
    u16, i32 = _U16.unpack_from, _I32.unpack_from
    ext: dict[str, str] = {}
    count = 0
    try:
        while pos < n:
            kend = pos + 2 + u16(data, pos)[0]
            vlen = i32(data, kend)[0]
            vend = kend + 4 + vlen
            if vlen < 0 or vend > n:
                return None
            ext[data[pos + 2:kend].decode()] = data[kend + 4:vend].decode()
            count += 1
            pos = vend
    except (struct.error, UnicodeDecodeError):
        return None
    return ext if count == len(ext) else None


def _binary_ext(data: bytes, pos: int, n: int) -> tuple[dict[str, str], tuple[tuple[str, str], ...] | None]:
    """The ext block entry by entry with every check: the fields, and the entries in wire order
    when a key repeats (else None)."""
    ext: dict[str, str] = {}
    entries: list[tuple[str, str]] = []
    while pos < n:
        if pos + 2 > n:
            raise Truncated("ext key length cut short", offset=pos, field="extFields.key",
                            expected=2, found=n - pos)
        (klen,) = _U16.unpack_from(data, pos)
        kstart = pos + 2
        if kstart + klen + 4 > n:
            raise Truncated(f"ext key of {klen} bytes overruns the header", offset=pos,
                            field="extFields.key", expected=klen, found=n - kstart)
        key = decode_utf8(data[kstart:kstart + klen], kstart, "extFields.key")
        vpos = kstart + klen
        (vlen,) = _I32.unpack_from(data, vpos)
        if vlen < 0 or vpos + 4 + vlen > n:
            raise DecodeError(f"ext value length {vlen} for {excerpt(key)} overruns the header", offset=vpos,
                              field=f"extFields.{excerpt(key)}", expected=f"0..{n - vpos - 4}", found=vlen)
        value = decode_utf8(data[vpos + 4:vpos + 4 + vlen], vpos + 4, f"extFields.{key}")
        ext[key] = value
        entries.append((key, value))
        pos = vpos + 4 + vlen
    return ext, (tuple(entries) if len(entries) != len(ext) else None)


def _wire_entries(cmd: RemotingCommand) -> Iterable[tuple[str, str]]:
    raw = cmd.wire_ext
    if raw is not None and dict(raw) == cmd.ext_fields:
        return raw
    return cmd.ext_fields.items()


def encode_binary_header(cmd: RemotingCommand) -> bytes:
    """Encode ``cmd``'s header in the ROCKETMQ format."""
    lang = cmd.language
    if not isinstance(lang, int) or not 0 <= lang <= 255:
        raise EncodeError(f"language {lang!r} has no ROCKETMQ byte value", field="language")
    if not (_in(_INT16, cmd.code) and _in(_INT16, cmd.version)):
        raise EncodeError(f"code {cmd.code} / version {cmd.version} do not fit the ROCKETMQ int16",
                          field="code")
    # an unpaired surrogate becomes '?', as Java's String.getBytes(UTF_8) writes it
    remark = cmd.remark.encode("utf-8", "replace") if cmd.remark else b""
    parts = []
    for k, v in _wire_entries(cmd):
        kb = k.encode("utf-8", "replace")
        vb = v.encode("utf-8", "replace")
        if len(kb) > 0xFFFF:
            raise EncodeError(f"ext key of {len(kb)} bytes exceeds the u16 length", field="extFields")
        parts.append(_U16.pack(len(kb)) + kb + _I32.pack(len(vb)) + vb)
    block = b"".join(parts)
    return (_BIN_FIXED.pack(cmd.code, lang, cmd.version, cmd.opaque, cmd.flag, len(remark)) + remark
            + _I32.pack(len(block)) + block)


def decode_binary_header_construct(data: bytes) -> RemotingCommand:
    """The same as :func:`decode_binary_header`, through the construct declaration."""
    try:
        c = REMOTING_HEADER.parse(data)
    except (ConstructError, IndexError, KeyError, UnicodeDecodeError, ValueError, OverflowError) as exc:
        path = getattr(exc, "path", None) or ""
        raise DecodeError(f"ROCKETMQ header: {exc}", offset=None, field=str(path) or "header") from None
    entries = tuple((e.key, e.value) for e in c.ext_fields)
    ext = dict(entries)
    cmd = trusted_command(c.code, language_code(c.language), c.version, c.opaque, c.flag,
                          c.remark or None, ext, SerializeType.ROCKETMQ)
    if len(entries) != len(ext):
        object.__setattr__(cmd, "wire_ext", entries)
    return cmd


# ====================================================================== JSON header

_JSON_INT_FIELDS = ("code", "flag", "opaque", "version")


def _json_int(obj: Mapping[str, Any], key: str) -> int:
    v = obj.get(key, 0)
    if v is None:
        return 0
    if type(v) is int:
        iv = v
    elif isinstance(v, Decimal):
        # fastjson reads a fraction into an int field by truncating it; the size is checked first
        # (json_decimal bounds the exponent, so int() here is cheap)
        if not v.is_finite() or v.adjusted() > 10:
            raise DecodeError(f"JSON header field {key}={excerpt(str(v))} exceeds int32", offset=0, field=key,
                              expected="int32", found=clipped(str(v)))
        iv = int(v)
    elif isinstance(v, str) and len(v.strip()) <= 16:
        try:
            iv = int(v)
        except ValueError:
            raise DecodeError(f"JSON header field {key} is not a number: {excerpt(v)}", offset=0, field=key,
                              expected="int", found=clipped(v)) from None
    else:
        raise DecodeError(f"JSON header field {key} is not a number: {excerpt(v)}", offset=0, field=key,
                          expected="int32", found=clipped(v))
    if not _in(_INT32, iv):
        raise DecodeError(f"JSON header field {key}={excerpt(iv)} exceeds int32", offset=0, field=key,
                          expected="int32", found=clipped(iv))
    return iv


def _ext_value(v: Any) -> str | None:
    if isinstance(v, str):
        return v
    if v is None:
        return None
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, Decimal)):
        return str(v)
    return fastjson.dumps(v)  # an object or array where a string belongs: keep its JSON text


_JSON_DECODER = json.JSONDecoder(parse_float=fastjson.json_decimal, parse_constant=fastjson.no_constant)
# one JSON value from an index, without the two whitespace scans of JSONDecoder.decode
_JSON_SCAN = json.scanner.make_scanner(cast(Any, _JSON_DECODER))
_I32_MIN, _I32_MAX = _INT32
_LANG_BY_NAME: dict[str, LanguageCode] = dict(LanguageCode.__members__)


def fast_json_header(data: bytes) -> RemotingCommand | None:
    """The common case, for the broker and the capture scanner: strict UTF-8 JSON whose numbers are
    ints in range and whose ext values are all strings. Anything else returns None, and
    :func:`decode_json_header` takes its general path, which yields the same command or error."""
    try:
        text = data.decode("utf-8")
        obj, end = _JSON_SCAN(text, 0)
    except (ValueError, RecursionError, StopIteration, fastjson.NumberRefused):
        return None
    if end != len(text) or type(obj) is not dict:
        return None  # whitespace around it, or more after it: the general path decides
    try:  # every Java and C++ peer writes these five
        code, flag, opaque, version, lang_raw = (
            obj["code"], obj["flag"], obj["opaque"], obj["version"], obj["language"])
    except KeyError:
        get = obj.get
        code, flag, opaque, version = get("code", 0), get("flag", 0), get("opaque", 0), get("version", 0)
        lang_raw = get("language", "JAVA")
    remark = obj.get("remark")
    if not (type(code) is int and type(flag) is int and type(opaque) is int and type(version) is int
            and _I32_MIN <= code <= _I32_MAX and _I32_MIN <= flag <= _I32_MAX
            and _I32_MIN <= opaque <= _I32_MAX and _I32_MIN <= version <= _I32_MAX
            and type(lang_raw) is str and (remark is None or type(remark) is str)):
        return None
    ext = obj.get("extFields")
    if ext is None:
        ext = {}
    elif type(ext) is not dict:
        return None
    else:
        for v in ext.values():
            if type(v) is not str:
                return None
    # _build, inline: this runs for nearly every frame a broker reads or a capture holds
    cmd = _new(RemotingCommand)
    _set_code(cmd, code)
    _set_language(cmd, _LANG_BY_NAME.get(lang_raw, lang_raw))
    _set_version(cmd, version)
    _set_opaque(cmd, opaque)
    _set_flag(cmd, flag)
    _set_remark(cmd, remark)
    _set_ext(cmd, ext)
    _set_body(cmd, None)
    _set_st(cmd, SerializeType.JSON)
    _set_wire_ext(cmd, None)
    return cmd


def decode_json_header(data: bytes) -> RemotingCommand:
    """Decode a JSON header (offsets in errors are relative to the header's first byte)."""
    if type(data) is bytes:
        fast = fast_json_header(data)
        if fast is not None:
            return fast
    return _json_header_general(data)


def _json_header_general(data: bytes) -> RemotingCommand:
    obj = fastjson.loads(data, what="JSON header")
    if not isinstance(obj, dict):
        raise DecodeError("JSON header is not an object", offset=0, field="header",
                          expected="object", found=type(obj).__name__)
    code, flag, opaque, version = (_json_int(obj, k) for k in _JSON_INT_FIELDS)
    lang_raw = obj.get("language", "JAVA")
    language: LanguageCode | int | str
    if isinstance(lang_raw, str):
        language = _LANG_BY_NAME.get(lang_raw, lang_raw)
    elif isinstance(lang_raw, int) and not isinstance(lang_raw, bool):
        language = language_code(lang_raw)
    elif lang_raw is None:
        language = LanguageCode.JAVA
    else:
        raise DecodeError(f"JSON header language is {excerpt(lang_raw)}", offset=0, field="language",
                          expected="a LanguageCode name", found=clipped(lang_raw))
    remark = obj.get("remark")
    if remark is not None and not isinstance(remark, str):
        remark = _ext_value(remark)
    raw_ext = obj.get("extFields")
    ext: dict[str, str] = {}
    if raw_ext is not None:
        if not isinstance(raw_ext, dict):
            raise DecodeError("JSON header extFields is not an object", offset=0, field="extFields",
                              expected="object", found=type(raw_ext).__name__)
        for k, v in raw_ext.items():
            sv = _ext_value(v)
            if sv is not None:
                ext[str(k)] = sv
    return trusted_command(code, language, version, opaque, flag, remark, ext, SerializeType.JSON)


#: ``json.dumps``' own string writer for ``ensure_ascii=False`` (its C version when there is one)
_json_str = json.encoder.encode_basestring
_LANG_JSON = {lang: _json_str(lang.name) for lang in LanguageCode}


def encode_json_header(cmd: RemotingCommand) -> bytes:
    """Encode ``cmd``'s header as fastjson would: sorted properties, nulls left out.

    The text is put together directly, with the string writer ``json.dumps`` uses, for the
    header fields as they always are (ints, a known or named language, str ext entries);
    :func:`encode_json_header_dumps` is the reference it must equal byte for byte (a
    differential test holds them together) and takes any other case."""
    lang = cmd.language
    if type(lang) is LanguageCode:
        lang_json = _LANG_JSON[lang]
    elif type(lang) is str:
        lang_json = _json_str(lang)
    else:
        return encode_json_header_dumps(cmd)
    ext = cmd.ext_fields
    if ext:
        try:
            entries = ",".join([_json_str(k) + ":" + _json_str(v) for k, v in ext.items()])
        except TypeError:
            return encode_json_header_dumps(cmd)
        text = (f'{{"code":{cmd.code:d},"extFields":{{{entries}}},"flag":{cmd.flag:d},"language":{lang_json},'
                f'"opaque":{cmd.opaque:d}')
    else:
        text = f'{{"code":{cmd.code:d},"flag":{cmd.flag:d},"language":{lang_json},"opaque":{cmd.opaque:d}'
    remark = cmd.remark
    if remark is not None:
        if type(remark) is not str:
            return encode_json_header_dumps(cmd)
        text += ',"remark":' + _json_str(remark)
    text += f',"serializeTypeCurrentRPC":"JSON","version":{cmd.version:d}}}'
    # an unpaired surrogate becomes '?', as Java's String.getBytes(UTF_8) writes it
    return text.encode("utf-8", "replace")


def encode_json_header_dumps(cmd: RemotingCommand) -> bytes:
    """:func:`encode_json_header` through ``json.dumps`` (the reference for its fast path)."""
    lang = cmd.language
    lang_json = lang.name if isinstance(lang, LanguageCode) else lang
    obj: dict[str, Any] = {"code": cmd.code}
    if cmd.ext_fields:
        obj["extFields"] = cmd.ext_fields
    obj["flag"] = cmd.flag
    obj["language"] = lang_json
    obj["opaque"] = cmd.opaque
    if cmd.remark is not None:
        obj["remark"] = cmd.remark
    obj["serializeTypeCurrentRPC"] = "JSON"
    obj["version"] = cmd.version
    # an unpaired surrogate becomes '?', as Java's String.getBytes(UTF_8) writes it
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8", "replace")


# ====================================================================== whole commands

_HEADER_DECODERS = {
    SerializeType.JSON: decode_json_header,
    SerializeType.ROCKETMQ: decode_binary_header,
}
_HEADER_ENCODERS = {
    SerializeType.JSON: encode_json_header,
    SerializeType.ROCKETMQ: encode_binary_header,
}


def decode_header(serialize_type: SerializeType, data: bytes) -> RemotingCommand:
    """Decode a header of the given serialize type (no body)."""
    return _HEADER_DECODERS[serialize_type](data)


def encode_header(cmd: RemotingCommand) -> bytes:
    return _HEADER_ENCODERS[cmd.serialize_type](cmd)


def decode_frame(frame: Frame) -> RemotingCommand:
    """Decode a frame cut by :class:`wire.FrameBuffer` into a command."""
    try:
        cmd = _HEADER_DECODERS[frame.serialize_type](frame.header)
    except DecodeError as err:
        raise err.shifted(frame.offset + 8, frame.index) from None
    # nothing else is caught: the header decoders raise DecodeError for every bad input, so any
    # other exception is a bug of ours and must not close a peer's connection as its fault
    if frame.body:
        _set_body(cmd, frame.body)
    return cmd


def decode_frame_off_loop(frame: Frame) -> RemotingCommand:
    """:func:`decode_frame` for a worker thread (:mod:`wire.aio`'s large frames): a JSON header is
    read by the pure-Python parser (in a thread that asked for it,
    :func:`wire.fastjson.prefer_python_parser`), never by json's C parser, which would hold the
    GIL until it is done. The same command or error as :func:`decode_frame`."""
    if frame.serialize_type is not SerializeType.JSON:
        return decode_frame(frame)
    try:
        cmd = _json_header_general(frame.header)
    except DecodeError as err:
        raise err.shifted(frame.offset + 8, frame.index) from None
    if frame.body:
        _set_body(cmd, frame.body)
    return cmd


def decode_command(data: bytes) -> RemotingCommand:
    """Decode exactly one whole frame (length prefix included)."""
    return decode_frame(split_frame(bytes(data)))


def encode_command_head(cmd: RemotingCommand, body_size: int | None = None) -> bytes:
    """The frame of ``cmd`` up to its body: the length prefix and the header. Writers that send a
    large body as its own buffer (``writelines``) use it to skip copying the body into the frame;
    ``encode_command_head(cmd) + (cmd.body or b"")`` is :func:`encode_command`'s frame. With
    ``body_size``, the head of ``cmd`` with a body of that many bytes that the caller holds
    apart (``cmd.body`` is then not looked at)."""
    header = _HEADER_ENCODERS[cmd.serialize_type](cmd)
    hlen = len(header)
    if hlen > 0xFFFFFF:
        raise EncodeError(f"header of {hlen} bytes exceeds the 24-bit header length", field="header")
    if body_size is None:
        body = cmd.body
        body_size = len(body) if body else 0
    total = 4 + hlen + body_size
    if total > MAX_TOTAL_LENGTH:
        raise EncodeError(f"frame length {total} exceeds the maximum {MAX_TOTAL_LENGTH}",
                          field="totalLength")
    return PREFIX.pack(total, (int(cmd.serialize_type) << 24) | hlen) + header


def encode_command(cmd: RemotingCommand) -> bytes:
    """Encode ``cmd`` as one frame in its serialize type."""
    head = encode_command_head(cmd)
    body = cmd.body
    return head + body if body else head
