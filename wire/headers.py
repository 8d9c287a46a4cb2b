# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Typed custom headers: the ``extFields`` of a request or response as frozen dataclasses.

Theory of operation
-------------------
Java never puts a header class on the wire. ``RemotingCommand.makeCustomHeaderToNet`` walks every
non-static field of the header object and of its superclasses, skips nulls and writes
``field name -> value.toString()`` into the ``extFields`` map; the receiver builds the class back
with ``decodeCommandCustomHeader``, parsing each field by its declared type. So a header is a set of
string pairs whose keys are Java field names, and :class:`RemotingCommand.ext_fields` already holds
exactly that. The classes here are typed views of those pairs:

* Each header is a frozen dataclass. Attributes are snake_case views of the Java field names
  (``queueOffset`` -> ``queue_offset``); each field's metadata carries its Java key, its Java type
  (String, Integer, Long, Boolean, or the primitives int, long, boolean) and the ``@CFNotNull``
  flag (:func:`header_fields` lists them). The one exception is
  :class:`SendMessageRequestHeaderV2`, whose Java fields are the letters ``a``..``n``: its
  attributes carry the V1 names (``producer_group`` for ``a``) so both versions read alike.
* ``to_ext()`` writes the pairs Java would write: ``None`` is skipped, booleans become
  ``"true"``/``"false"``, numbers are decimal. A Java primitive or a field Java initialises
  (``boolean unitMode = false``, ``Integer bodyCrc32 = 0``) defaults to that value here too, so a
  header built in Python sends it as Java always does.
* ``from_ext()`` parses as ``decodeCommandCustomHeader`` does (see "Parsing" below). A key that is
  absent decodes as ``None``, even for a primitive, so that ``from_ext(x).to_ext() == x``: ``None``
  on a decoded header means "not on the wire", which Java reads as the field's default.
* Keys a class does not declare are never dropped. They stay in ``extra`` (the ACL hook's
  ``AccessKey``/``Signature``, the C++ client's ``OnsChannel``, the broker's ``MSG_REGION`` and
  ``TRACE_ON``, ``_UNIQUE_KEY_QUERY``, ``ReqT``...) and ``to_ext()`` writes them after the known
  keys, in the order they came.

Key order
---------
Java's reflective path gives no order: ``getClazzFields`` collects fields in a ``HashSet`` and
``extFields`` is a ``HashMap``, so JSON headers list keys in hash order. Order matters only in the
ROCKETMQ binary header of a ``FastCodesHeader`` class (the send V2 header, the pull request, the
send and pull responses; :attr:`CustomHeader.fast_codes`): ``RocketMQSerializable``'s fast encoder
first lets the header write its own fields in its ``encode(ByteBuf)`` order, then appends the
remaining ``extFields`` entries. ``to_ext()`` follows that rule for every class: the class's own
fields in declaration order, then the inherited request fields in the order 5.x ``encode`` writes
them (``lo, ns, nsd, bname, oway``), then ``extra``.

Parsing, and where we are stricter than Java
--------------------------------------------
Integer and Long values are parsed like ``Integer.parseInt`` / ``Long.parseLong`` (optional sign,
decimal digits, range-checked to int32 / int64). Booleans follow ``Boolean.parseBoolean``: only
``"true"`` in any letter case is true, anything else is false. A missing ``@CFNotNull`` field is a
:class:`wire.DecodeError` naming it, as in the reflective decoder.

A number that does not parse is also a :class:`wire.DecodeError` (``field="extFields.<key>"``,
with the Java type expected and the text found). Java is inconsistent here: the reflective decoder
logs the failure and leaves the field null, while the ``FastCodesHeader.decode`` methods let the
``NumberFormatException`` escape, which fails the request. We take the strict path for every
class because a silently-null field would break the typing (a ``@CFNotNull`` attribute is never
``None``) and hide malformed traffic from the conformance tools. We are also stricter than the
two places where Java skips the ``@CFNotNull`` check (``FastCodesHeader.getAndCheckNotNull`` only
logs; a command with no ``extFields`` at all is not checked).

Spellings Java reads but does not write (``"+5"``, ``"007"``, ``"TRUE"``, and ``"0"`` or ``"yes"``
for false: the C++ client sends ``unitMode`` and ``batch`` as ``"0"``) parse to the value Java
sees. A decoded header remembers such text and ``to_ext()`` writes it back, so
``from_ext(x).to_ext() == x`` for every ``x`` that decodes; the text does not take part in
equality, and a header built or changed (``replace``) in Python writes canonical text.

Versions
--------
One class covers a header in every version from 4.9.0 to 5.x develop: it has the union of the
fields, fields that only some versions have are optional, and a field is required (``@CFNotNull``)
only when every version of the class has it and requires it. Each class's docstring, and each
field's ``since``/``until`` metadata, say which version has what. Inherited request fields:
4.9.5-4.9.8 ``RpcRequestHeader`` has ``bname``; 5.x ``RpcRequestHeader`` has ``ns``, ``nsd``,
``bname``, ``oway`` and ``TopicRequestHeader`` adds ``lo``.

Sources: ``remoting/.../protocol/RemotingCommand.java`` (``makeCustomHeaderToNet``,
``decodeCommandCustomHeader``), ``RocketMQSerializable.java``, ``FastCodesHeader.java``; the
header classes under ``common/.../common/protocol/header/`` (4.9.x, 5.0.0) and
``remoting/.../remoting/protocol/header/`` (5.1+).
"""

from __future__ import annotations

import dataclasses
import enum
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple, Self

from .codes import LanguageCode, RequestCode, ResponseCode, SerializeType
from .errors import DecodeError, EncodeError
from .remoting import DEFAULT_VERSION, RemotingCommand

__all__ = [
    "REQUEST_HEADERS",
    "RESPONSE_HEADERS",
    "RESPONSE_HEADER_CODES",
    "AddBrokerRequestHeader",
    "AddWritePermOfBrokerRequestHeader",
    "AddWritePermOfBrokerResponseHeader",
    "AlterSyncStateSetRequestHeader",
    "AlterSyncStateSetResponseHeader",
    "ApplyBrokerIdRequestHeader",
    "ApplyBrokerIdResponseHeader",
    "BrokerHeartbeatRequestHeader",
    "CleanControllerBrokerDataRequestHeader",
    "ConsumerSendMsgBackRequestHeader",
    "CreateTopicRequestHeader",
    "CustomHeader",
    "DeleteKVConfigRequestHeader",
    "DeleteSubscriptionGroupRequestHeader",
    "DeleteTopicFromNamesrvRequestHeader",
    "DeleteTopicRequestHeader",
    "ElectMasterRequestHeader",
    "ElectMasterResponseHeader",
    "ExchangeHAInfoRequestHeader",
    "ExchangeHAInfoResponseHeader",
    "GetAllTopicConfigResponseHeader",
    "GetBrokerConfigResponseHeader",
    "GetBrokerMemberGroupRequestHeader",
    "GetConsumeStatsRequestHeader",
    "GetConsumerConnectionListRequestHeader",
    "GetConsumerListByGroupRequestHeader",
    "GetConsumerListByGroupResponseHeader",
    "GetEarliestMsgStoretimeRequestHeader",
    "GetEarliestMsgStoretimeResponseHeader",
    "GetKVConfigRequestHeader",
    "GetKVConfigResponseHeader",
    "GetKVListByNamespaceRequestHeader",
    "GetMaxOffsetRequestHeader",
    "GetMaxOffsetResponseHeader",
    "GetMetaDataResponseHeader",
    "GetMinOffsetRequestHeader",
    "GetMinOffsetResponseHeader",
    "GetNextBrokerIdRequestHeader",
    "GetNextBrokerIdResponseHeader",
    "GetProducerConnectionListRequestHeader",
    "GetReplicaInfoRequestHeader",
    "GetReplicaInfoResponseHeader",
    "GetRouteInfoRequestHeader",
    "GetSyncStateDataRequest",
    "GetTopicStatsInfoRequestHeader",
    "GetTopicsByClusterRequestHeader",
    "HeaderField",
    "HeartbeatRequestHeader",
    "JavaType",
    "LockBatchMqRequestHeader",
    "NotifyBrokerRoleChangedRequestHeader",
    "NotifyConsumerIdsChangedRequestHeader",
    "NotifyMinBrokerIdChangeRequestHeader",
    "PullMessageRequestHeader",
    "PullMessageResponseHeader",
    "PutKVConfigRequestHeader",
    "QueryConsumerOffsetRequestHeader",
    "QueryConsumerOffsetResponseHeader",
    "QueryMessageRequestHeader",
    "QueryMessageResponseHeader",
    "QueryTopicConsumeByWhoRequestHeader",
    "RegisterBrokerRequestHeader",
    "RegisterBrokerResponseHeader",
    "RegisterBrokerToControllerRequestHeader",
    "RegisterBrokerToControllerResponseHeader",
    "RemoveBrokerRequestHeader",
    "ResetMasterFlushOffsetHeader",
    "RpcRequestHeader",
    "SearchOffsetRequestHeader",
    "SearchOffsetResponseHeader",
    "SendMessageRequestHeader",
    "SendMessageRequestHeaderV2",
    "SendMessageResponseHeader",
    "TopicQueueRequestHeader",
    "TopicRequestHeader",
    "QueryDataVersionRequestHeader",
    "QueryDataVersionResponseHeader",
    "UnRegisterBrokerRequestHeader",
    "UnlockBatchMqRequestHeader",
    "UnregisterClientRequestHeader",
    "UnregisterClientResponseHeader",
    "UpdateConsumerOffsetRequestHeader",
    "UpdateConsumerOffsetResponseHeader",
    "ViewMessageRequestHeader",
    "ViewMessageResponseHeader",
    "WipeWritePermOfBrokerRequestHeader",
    "WipeWritePermOfBrokerResponseHeader",
    "decode_request_header",
    "decode_response_header",
    "header_fields",
    "request",
    "response",
]


class JavaType(enum.StrEnum):
    """The declared Java type of a header field (``RemotingCommand``'s supported types)."""

    STRING = "String"
    INTEGER = "Integer"
    LONG = "Long"
    BOOLEAN = "Boolean"
    PRIMITIVE_INT = "int"
    PRIMITIVE_LONG = "long"
    PRIMITIVE_BOOLEAN = "boolean"
    #: 5.x ``org.apache.rocketmq.common.BoundaryType``: sent as its enum name, read by
    #: ``BoundaryType.getType`` ("upper" in any case is UPPER, anything else LOWER)
    BOUNDARY_TYPE = "BoundaryType"

    @property
    def primitive(self) -> bool:
        return self.value[0].islower()


_S = JavaType.STRING
_I = JavaType.INTEGER
_L = JavaType.LONG
_B = JavaType.BOOLEAN
_PI = JavaType.PRIMITIVE_INT
_PL = JavaType.PRIMITIVE_LONG
_PB = JavaType.PRIMITIVE_BOOLEAN
_BT = JavaType.BOUNDARY_TYPE

_INT32 = (-(2**31), 2**31 - 1)
_INT64 = (-(2**63), 2**63 - 1)
_RANGES = {_I: _INT32, _PI: _INT32, _L: _INT64, _PL: _INT64}
_EXPECTED = {
    _S: "String",
    _I: "Integer (decimal int32)",
    _PI: "int (decimal int32)",
    _L: "Long (decimal int64)",
    _PL: "long (decimal int64)",
    _B: "Boolean",
    _PB: "boolean",
    _BT: "BoundaryType (LOWER or UPPER)",
}
_BOUNDARY_VALUES = ("LOWER", "UPPER")
#: the 5.x FastCodes ``encode`` order of the inherited request fields (``PullMessageRequestHeader``)
_INHERITED_ORDER = ("lo", "ns", "nsd", "bname", "oway")


class _Java(NamedTuple):
    key: str
    java_type: JavaType
    not_null: bool
    since: str
    until: str | None
    inherited: bool


def _nn(key: str, java_type: JavaType = _S, *, since: str = "4.x",
        until: str | None = None) -> dict[str, Any]:
    """Metadata for a ``@CFNotNull`` field (use as ``field(metadata=_nn("topic"))``)."""
    return {"java": _Java(key, java_type, True, since, until, False)}


def _opt(key: str, java_type: JavaType = _S, *, default: Any = None, not_null: bool = False,
        since: str = "4.x", until: str | None = None, inherited: bool = False) -> Any:
    """A field with a default: ``None`` (absent), or the value Java initialises it to."""
    return field(default=default, metadata={"java": _Java(key, java_type, not_null, since, until, inherited)})


@dataclass(frozen=True, slots=True)
class HeaderField:
    """One declared field of a header class."""

    #: the Python attribute
    name: str
    #: the extFields key (the Java field name)
    key: str
    java_type: JavaType
    #: ``@CFNotNull`` in every version that has the field
    not_null: bool
    #: first version with the field ("4.x" = already in 4.9.0)
    since: str
    #: last version with the field, or None if it is still there
    until: str | None


_SPECS: dict[type, tuple[HeaderField, ...]] = {}
_KEYS: dict[type, frozenset[str]] = {}


def header_fields(cls: type[CustomHeader]) -> tuple[HeaderField, ...]:
    """The declared fields of ``cls`` in ``to_ext()`` order (own fields, then inherited ones)."""
    specs = _SPECS.get(cls)
    if specs is None:
        own: list[HeaderField] = []
        inherited: dict[str, HeaderField] = {}
        for f in dataclasses.fields(cls):
            java: _Java | None = f.metadata.get("java")
            if java is None:
                continue
            spec = HeaderField(f.name, java.key, java.java_type, java.not_null, java.since, java.until)
            if java.inherited:
                inherited[java.key] = spec
            else:
                own.append(spec)
        specs = (*own, *(inherited[k] for k in _INHERITED_ORDER if k in inherited))
        _SPECS[cls] = specs
        _KEYS[cls] = frozenset(s.key for s in specs)
    return specs


def _known_keys(cls: type[CustomHeader]) -> frozenset[str]:
    keys = _KEYS.get(cls)
    if keys is None:
        header_fields(cls)
        keys = _KEYS[cls]
    return keys


# ---------------------------------------------------------------------------------------- parsing

_ASCII_DECIMAL = re.compile(r"[+-]?[0-9]+")


def _java_decimal(raw: str) -> int | None:
    """``Integer.parseInt``/``Long.parseLong`` without the range check; None if Java would throw."""
    if _ASCII_DECIMAL.fullmatch(raw):
        return int(raw)
    if raw.isascii():
        return None
    # mirrors Character.digit(ch, 10): any single-UTF-16-unit Unicode decimal digit counts
    sign = raw[:1]
    body = raw[1:] if sign in ("+", "-") else raw
    if not body:
        return None
    digits = []
    for ch in body:
        d = unicodedata.decimal(ch, None) if ord(ch) <= 0xFFFF else None
        if d is None:
            return None
        digits.append(d)
    value = 0
    for d in digits:
        value = value * 10 + d
    return -value if sign == "-" else value


def _parse(cls: type[CustomHeader], spec: HeaderField, raw: str) -> Any:
    jt = spec.java_type
    if jt is _S:
        return raw
    if jt is _B or jt is _PB:
        # mirrors Boolean.parseBoolean: "true".equalsIgnoreCase(value)
        return len(raw) == 4 and raw.lower() == "true"
    if jt is _BT:
        # mirrors BoundaryType.getType
        return "UPPER" if raw.lower() == "upper" else "LOWER"
    value = _java_decimal(raw)
    lo, hi = _RANGES[jt]
    if value is None or not lo <= value <= hi:
        what = "is not a decimal number" if value is None else f"is outside the {jt.value} range"
        raise DecodeError(f"{cls.__name__}.{spec.key}: {raw!r} {what}", field=f"extFields.{spec.key}",
                          expected=_EXPECTED[jt], found=raw)
    return value


def _format(value: Any) -> str:
    if value is True:
        return "true"
    if value is False:
        return "false"
    return value if isinstance(value, str) else str(value)


def _check(cls: type[CustomHeader], spec: HeaderField, value: Any) -> None:
    jt = spec.java_type
    if jt is _S:
        ok = isinstance(value, str)
    elif jt is _B or jt is _PB:
        ok = isinstance(value, bool)
    elif jt is _BT:
        ok = value in _BOUNDARY_VALUES
    else:
        lo, hi = _RANGES[jt]
        ok = isinstance(value, int) and not isinstance(value, bool) and lo <= value <= hi
    if not ok:
        raise EncodeError(f"{cls.__name__}.{spec.name} ({spec.key}) must be a Java {jt.value}, "
                          f"got {value!r}", field=f"extFields.{spec.key}")


# ---------------------------------------------------------------------------------------- base


@dataclass(frozen=True, slots=True, kw_only=True)
class CustomHeader:
    """A typed view of a command's ``extFields`` (Java's ``CommandCustomHeader``)."""

    #: ``True`` for classes that implement Java's ``FastCodesHeader`` (their keys lead the
    #: ROCKETMQ binary header in ``to_ext()`` order)
    fast_codes: ClassVar[bool] = False

    #: ext keys this class does not declare, kept as they came
    extra: Mapping[str, str] = field(default_factory=dict, hash=False)
    #: for a decoded header: the wire text of values that Java reads as the parsed value but that
    #: are not in canonical form (the C++ client's "0" for a false boolean); to_ext() writes it back
    _text: Mapping[str, str] = field(default_factory=dict, init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        cls = type(self)
        for spec in header_fields(cls):
            value = getattr(self, spec.name)
            if value is None:
                if spec.not_null:
                    raise EncodeError(f"{cls.__name__}.{spec.name} ({spec.key}) is @CFNotNull in Java "
                                      "and cannot be None", field=f"extFields.{spec.key}")
                continue
            _check(cls, spec, value)
        known = _known_keys(cls)
        extra = dict(self.extra)
        for k, v in extra.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise EncodeError(f"{cls.__name__}.extra must map str to str, got {k!r}: {v!r}",
                                  field="extFields")
            if k in known:
                raise EncodeError(f"{cls.__name__}.extra holds {k!r}, which is a declared field",
                                  field=f"extFields.{k}")
        object.__setattr__(self, "extra", extra)

    @classmethod
    def from_ext(cls, ext: Mapping[str, str]) -> Self:
        """Parse ``extFields`` as Java's ``decodeCommandCustomHeader`` would (stricter on bad
        numbers, see the module notes). Raises only :class:`wire.DecodeError`."""
        specs = header_fields(cls)
        obj = object.__new__(cls)
        text: dict[str, str] = {}
        for spec in specs:
            raw = ext.get(spec.key)
            if raw is None:
                if spec.not_null:
                    # mirrors decodeCommandCustomHeader: "the custom field <x> is null"
                    raise DecodeError(f"{cls.__name__}: the @CFNotNull field {spec.key} is missing",
                                      field=f"extFields.{spec.key}", expected="a value", found=None)
                object.__setattr__(obj, spec.name, None)
                continue
            if not isinstance(raw, str):
                raise DecodeError(f"{cls.__name__}.{spec.key}: ext value {raw!r} is not a string",
                                  field=f"extFields.{spec.key}", expected="str", found=raw)
            value = _parse(cls, spec, raw)
            if spec.java_type is not _S and _format(value) != raw:
                text[spec.key] = raw
            object.__setattr__(obj, spec.name, value)
        known = _known_keys(cls)
        extra: dict[str, str] = {}
        for k, v in ext.items():
            if k in known:
                continue
            if not isinstance(k, str) or not isinstance(v, str):
                raise DecodeError(f"{cls.__name__}: ext entry {k!r}: {v!r} is not a string pair",
                                  field=f"extFields.{k}", expected="str", found=v)
            extra[k] = v
        object.__setattr__(obj, "extra", extra)
        object.__setattr__(obj, "_text", text)
        return obj

    def to_ext(self) -> dict[str, str]:
        """The ``extFields`` Java would send for this header, declared keys first."""
        out: dict[str, str] = {}
        text = self._text
        for spec in header_fields(type(self)):
            value = getattr(self, spec.name)
            if value is not None:
                raw = text.get(spec.key)
                out[spec.key] = _format(value) if raw is None else raw
        out.update(self.extra)
        return out

    def replace(self, **changes: Any) -> Self:
        return dataclasses.replace(self, **changes)


@dataclass(frozen=True, slots=True, kw_only=True)
class RpcRequestHeader(CustomHeader):
    """Fields Java request headers inherit from ``RpcRequestHeader``.

    4.9.5-4.9.8 (``common/.../common/rpc/RpcRequestHeader.java``): ``bname`` only. 5.x
    (``remoting/.../remoting/rpc/RpcRequestHeader.java``, ``common/.../rpc`` in 5.0.0): ``ns``
    (namespace), ``nsd`` (namespaced), ``bname`` (broker name), ``oway`` (oneway). All are nullable
    and sent only when set; the 5.x client sets ``bname`` on send and pull headers.
    """

    ns: str | None = _opt("ns", since="5.0.0", inherited=True)
    nsd: bool | None = _opt("nsd", _B, since="5.0.0", inherited=True)
    bname: str | None = _opt("bname", since="4.9.5", inherited=True)
    oway: bool | None = _opt("oway", _B, since="5.0.0", inherited=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicRequestHeader(RpcRequestHeader):
    """5.x ``TopicRequestHeader``: adds ``lo`` (logical, for static topics)."""

    lo: bool | None = _opt("lo", _B, since="5.0.0", inherited=True)


@dataclass(frozen=True, slots=True, kw_only=True)
class TopicQueueRequestHeader(TopicRequestHeader):
    """5.x ``TopicQueueRequestHeader``: no fields of its own."""


# ---------------------------------------------------------------------------------------- send


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageRequestHeader(TopicQueueRequestHeader):
    """SEND_MESSAGE (10) and SEND_REPLY_MESSAGE (324): the long-key send header (V1).

    ``unitMode`` and ``batch`` are Java primitives (always sent) up to 5.2.x and ``Boolean`` from
    5.3.0. Superclass: none before 4.9.5, ``RpcRequestHeader`` in 4.9.5-4.9.8,
    ``TopicQueueRequestHeader`` in 5.x. The broker sends the message as a batch when ``batch`` is
    true (``SendMessageProcessor.asyncProcessRequest``).
    """

    producer_group: str = field(metadata=_nn("producerGroup"))
    topic: str = field(metadata=_nn("topic"))
    default_topic: str = field(metadata=_nn("defaultTopic"))
    default_topic_queue_nums: int = field(metadata=_nn("defaultTopicQueueNums", _I))
    queue_id: int = field(metadata=_nn("queueId", _I))
    sys_flag: int = field(metadata=_nn("sysFlag", _I))
    born_timestamp: int = field(metadata=_nn("bornTimestamp", _L))
    flag: int = field(metadata=_nn("flag", _I))
    properties: str | None = _opt("properties")
    reconsume_times: int | None = _opt("reconsumeTimes", _I)
    unit_mode: bool | None = _opt("unitMode", _PB, default=False)
    batch: bool | None = _opt("batch", _PB, default=False)
    max_reconsume_times: int | None = _opt("maxReconsumeTimes", _I)


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageRequestHeaderV2(TopicQueueRequestHeader):
    """SEND_MESSAGE_V2 (310), SEND_BATCH_MESSAGE (320, with ``batch``/``m`` true) and
    SEND_REPLY_MESSAGE_V2 (325): the short-key send header, a ``FastCodesHeader``.

    Java names its fields ``a``..``n`` (the keys); the attributes here carry the V1 names.
    ``k`` and ``m`` are primitives up to 5.2.x and ``Boolean`` from 5.3.0. ``n`` (broker name) is
    in 4.9.5-4.9.8 and 5.1.0+, not in 5.0.0. Superclass: ``RpcRequestHeader`` in 4.9.5-4.9.8, none
    in 5.0.0-5.1.x, ``TopicQueueRequestHeader`` from 5.2.0; the client leaves that ``bname`` unset
    and puts the broker name in ``n``. The 4.9.x ``encode`` writes ``a``..``n`` only.
    """

    fast_codes: ClassVar[bool] = True

    producer_group: str = field(metadata=_nn("a"))
    topic: str = field(metadata=_nn("b"))
    default_topic: str = field(metadata=_nn("c"))
    default_topic_queue_nums: int = field(metadata=_nn("d", _I))
    queue_id: int = field(metadata=_nn("e", _I))
    sys_flag: int = field(metadata=_nn("f", _I))
    born_timestamp: int = field(metadata=_nn("g", _L))
    flag: int = field(metadata=_nn("h", _I))
    properties: str | None = _opt("i")
    reconsume_times: int | None = _opt("j", _I)
    unit_mode: bool | None = _opt("k", _PB, default=False)
    #: the V2 source calls it consumeRetryTimes; V1's maxReconsumeTimes
    max_reconsume_times: int | None = _opt("l", _I)
    batch: bool | None = _opt("m", _PB, default=False)
    broker_name: str | None = _opt("n", since="4.9.5")

    @classmethod
    def from_v1(cls, v1: SendMessageRequestHeader) -> SendMessageRequestHeaderV2:
        """``createSendMessageRequestHeaderV2``: V1's ``bname`` becomes ``n``. Java copies only the
        a..n values; the other inherited fields and ``extra`` are carried over too."""
        return cls(
            producer_group=v1.producer_group, topic=v1.topic, default_topic=v1.default_topic,
            default_topic_queue_nums=v1.default_topic_queue_nums, queue_id=v1.queue_id,
            sys_flag=v1.sys_flag, born_timestamp=v1.born_timestamp, flag=v1.flag,
            properties=v1.properties, reconsume_times=v1.reconsume_times, unit_mode=v1.unit_mode,
            max_reconsume_times=v1.max_reconsume_times, batch=v1.batch, broker_name=v1.bname,
            ns=v1.ns, nsd=v1.nsd, oway=v1.oway, lo=v1.lo, extra=v1.extra)

    def to_v1(self) -> SendMessageRequestHeader:
        """``createSendMessageRequestHeaderV1``: ``n`` becomes V1's ``bname`` (V2's own ``bname``
        is used only when ``n`` is absent)."""
        return SendMessageRequestHeader(
            producer_group=self.producer_group, topic=self.topic, default_topic=self.default_topic,
            default_topic_queue_nums=self.default_topic_queue_nums, queue_id=self.queue_id,
            sys_flag=self.sys_flag, born_timestamp=self.born_timestamp, flag=self.flag,
            properties=self.properties, reconsume_times=self.reconsume_times, unit_mode=self.unit_mode,
            max_reconsume_times=self.max_reconsume_times, batch=self.batch,
            bname=self.broker_name if self.broker_name is not None else self.bname,
            ns=self.ns, nsd=self.nsd, oway=self.oway, lo=self.lo, extra=self.extra)


@dataclass(frozen=True, slots=True, kw_only=True)
class SendMessageResponseHeader(CustomHeader):
    """The answer to every send (10, 310, 320, 324, 325), a ``FastCodesHeader``.

    ``msgId`` is the offset message id (for a batch, the ids joined with ","). The broker also puts
    ``MSG_REGION`` and ``TRACE_ON`` in ``extFields`` of every send response
    (``SendMessageProcessor``); they land in ``extra`` (see :attr:`region`, :attr:`trace_on`).
    ``batchUniqId`` is 5.0.0+, ``recallHandle`` 5.3.2+.
    """

    fast_codes: ClassVar[bool] = True

    msg_id: str = field(metadata=_nn("msgId"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    queue_offset: int = field(metadata=_nn("queueOffset", _L))
    transaction_id: str | None = _opt("transactionId")
    batch_uniq_id: str | None = _opt("batchUniqId", since="5.0.0")
    recall_handle: str | None = _opt("recallHandle", since="5.3.2")

    @property
    def region(self) -> str:
        """``MSG_REGION``; the client reads a missing or empty one as ``DefaultRegion``
        (``MQClientAPIImpl.processSendResponse``)."""
        return self.extra.get("MSG_REGION") or "DefaultRegion"

    @property
    def trace_on(self) -> bool:
        """``TRACE_ON``: only the exact text ``"false"`` turns tracing off (same method)."""
        return self.extra.get("TRACE_ON") != "false"


# ---------------------------------------------------------------------------------------- pull


@dataclass(frozen=True, slots=True, kw_only=True)
class PullMessageRequestHeader(TopicQueueRequestHeader):
    """PULL_MESSAGE (11), a ``FastCodesHeader``.

    ``sysFlag`` is PullSysFlag (bit 0 COMMIT_OFFSET, 1 SUSPEND, 2 SUBSCRIPTION, 3 CLASS_FILTER,
    4 LITE_PULL). ``maxMsgBytes`` is 5.0.0+, ``requestSource`` and ``proxyFrowardClientId`` (sic)
    5.1.0+. 4.9.5-4.9.8 encode ``bname`` last; 5.x encodes ``lo, ns, nsd, bname, oway`` last.
    """

    fast_codes: ClassVar[bool] = True

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    queue_offset: int = field(metadata=_nn("queueOffset", _L))
    max_msg_nums: int = field(metadata=_nn("maxMsgNums", _I))
    sys_flag: int = field(metadata=_nn("sysFlag", _I))
    commit_offset: int = field(metadata=_nn("commitOffset", _L))
    suspend_timeout_millis: int = field(metadata=_nn("suspendTimeoutMillis", _L))
    subscription: str | None = _opt("subscription")
    sub_version: int = field(metadata=_nn("subVersion", _L))
    expression_type: str | None = _opt("expressionType")
    max_msg_bytes: int | None = _opt("maxMsgBytes", _I, since="5.0.0")
    request_source: int | None = _opt("requestSource", _I, since="5.1.0")
    proxy_froward_client_id: str | None = _opt("proxyFrowardClientId", since="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class PullMessageResponseHeader(CustomHeader):
    """The answer to PULL_MESSAGE, a ``FastCodesHeader``; sent with SUCCESS, PULL_NOT_FOUND,
    PULL_RETRY_IMMEDIATELY and PULL_OFFSET_MOVED. The four offset fields after ``maxOffset`` are
    5.0.0+."""

    fast_codes: ClassVar[bool] = True

    suggest_which_broker_id: int = field(metadata=_nn("suggestWhichBrokerId", _L))
    next_begin_offset: int = field(metadata=_nn("nextBeginOffset", _L))
    min_offset: int = field(metadata=_nn("minOffset", _L))
    max_offset: int = field(metadata=_nn("maxOffset", _L))
    offset_delta: int | None = _opt("offsetDelta", _L, since="5.0.0")
    topic_sys_flag: int | None = _opt("topicSysFlag", _I, since="5.0.0")
    group_sys_flag: int | None = _opt("groupSysFlag", _I, since="5.0.0")
    forbidden_type: int | None = _opt("forbiddenType", _I, since="5.0.0")


# ---------------------------------------------------------------------------------------- offsets


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumerOffsetRequestHeader(TopicQueueRequestHeader):
    """QUERY_CONSUMER_OFFSET (14). ``setZeroIfNotFound`` is 5.0.0+."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    set_zero_if_not_found: bool | None = _opt("setZeroIfNotFound", _B, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryConsumerOffsetResponseHeader(CustomHeader):
    """The answer to QUERY_CONSUMER_OFFSET."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateConsumerOffsetRequestHeader(TopicQueueRequestHeader):
    """UPDATE_CONSUMER_OFFSET (15); clients usually send it oneway."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    commit_offset: int = field(metadata=_nn("commitOffset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class UpdateConsumerOffsetResponseHeader(CustomHeader):
    """The answer to UPDATE_CONSUMER_OFFSET: no fields."""


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMaxOffsetRequestHeader(TopicQueueRequestHeader):
    """GET_MAX_OFFSET (30). ``committed`` is 5.0.0+, a primitive initialised to true, so a 5.x
    client always sends it; ``None`` here means "not sent", which 5.x reads as true."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    committed: bool | None = _opt("committed", _PB, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMaxOffsetResponseHeader(CustomHeader):
    """The answer to GET_MAX_OFFSET."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMinOffsetRequestHeader(TopicQueueRequestHeader):
    """GET_MIN_OFFSET (31)."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMinOffsetResponseHeader(CustomHeader):
    """The answer to GET_MIN_OFFSET."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOffsetRequestHeader(TopicQueueRequestHeader):
    """SEARCH_OFFSET_BY_TIMESTAMP (29). ``boundaryType`` ("LOWER"/"UPPER") is 5.1.4+."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))
    timestamp: int = field(metadata=_nn("timestamp", _L))
    boundary_type: str | None = _opt("boundaryType", _BT, since="5.1.4")


@dataclass(frozen=True, slots=True, kw_only=True)
class SearchOffsetResponseHeader(CustomHeader):
    """The answer to SEARCH_OFFSET_BY_TIMESTAMP."""

    offset: int = field(metadata=_nn("offset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetEarliestMsgStoretimeRequestHeader(TopicQueueRequestHeader):
    """GET_EARLIEST_MSG_STORETIME (32)."""

    topic: str = field(metadata=_nn("topic"))
    queue_id: int = field(metadata=_nn("queueId", _I))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetEarliestMsgStoretimeResponseHeader(CustomHeader):
    """The answer to GET_EARLIEST_MSG_STORETIME."""

    timestamp: int = field(metadata=_nn("timestamp", _L))


# ---------------------------------------------------------------------------------------- query


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewMessageRequestHeader(CustomHeader):
    """VIEW_MESSAGE_BY_ID (33): ``offset`` is the commit-log offset from an offset message id.
    ``topic`` is 5.3.0+ (declared before ``offset`` there; JSON order carries no meaning)."""

    offset: int = field(metadata=_nn("offset", _L))
    topic: str | None = _opt("topic", since="5.3.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ViewMessageResponseHeader(CustomHeader):
    """The answer to VIEW_MESSAGE_BY_ID: no fields (the stored message is the body)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMessageRequestHeader(TopicRequestHeader):
    """QUERY_MESSAGE (12), by key or by unique key. Superclass ``TopicRequestHeader`` from 5.2.0.

    A query by unique key is flagged by the free ext field ``_UNIQUE_KEY_QUERY`` (kept in
    ``extra``; see :attr:`unique_key_query`).
    """

    topic: str = field(metadata=_nn("topic"))
    key: str = field(metadata=_nn("key"))
    max_num: int = field(metadata=_nn("maxNum", _I))
    begin_timestamp: int = field(metadata=_nn("beginTimestamp", _L))
    end_timestamp: int = field(metadata=_nn("endTimestamp", _L))

    @property
    def unique_key_query(self) -> bool:
        """True when ``_UNIQUE_KEY_QUERY`` is exactly ``"true"`` (``QueryMessageProcessor``)."""
        return self.extra.get("_UNIQUE_KEY_QUERY") == "true"


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryMessageResponseHeader(CustomHeader):
    """The answer to QUERY_MESSAGE."""

    index_last_update_timestamp: int = field(metadata=_nn("indexLastUpdateTimestamp", _L))
    index_last_update_phyoffset: int = field(metadata=_nn("indexLastUpdatePhyoffset", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryTopicConsumeByWhoRequestHeader(TopicRequestHeader):
    """QUERY_TOPIC_CONSUME_BY_WHO (300). Superclass ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))


# ---------------------------------------------------------------------------------------- name server


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerRequestHeader(CustomHeader):
    """REGISTER_BROKER (103).

    ``compressed`` is a primitive (always sent); ``bodyCrc32`` is initialised to 0 and is the
    CRC32 of the body ``& 0x7FFFFFFF`` (checked by the name server only when non-zero).
    ``heartbeatTimeoutMillis`` and ``enableActingMaster`` are 5.0.0+. A 5.x broker may add the
    free ext field ``__ZONE_NAME`` (:attr:`zone_name`).
    """

    broker_name: str = field(metadata=_nn("brokerName"))
    broker_addr: str = field(metadata=_nn("brokerAddr"))
    cluster_name: str = field(metadata=_nn("clusterName"))
    ha_server_addr: str = field(metadata=_nn("haServerAddr"))
    broker_id: int = field(metadata=_nn("brokerId", _L))
    heartbeat_timeout_millis: int | None = _opt("heartbeatTimeoutMillis", _L, since="5.0.0")
    enable_acting_master: bool | None = _opt("enableActingMaster", _B, since="5.0.0")
    compressed: bool | None = _opt("compressed", _PB, default=False)
    body_crc32: int | None = _opt("bodyCrc32", _I, default=0)

    @property
    def zone_name(self) -> str | None:
        return self.extra.get("__ZONE_NAME")


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerResponseHeader(CustomHeader):
    """The answer to REGISTER_BROKER; filled for a slave from its master's entry."""

    ha_server_addr: str | None = _opt("haServerAddr")
    master_addr: str | None = _opt("masterAddr")


@dataclass(frozen=True, slots=True, kw_only=True)
class UnRegisterBrokerRequestHeader(CustomHeader):
    """UNREGISTER_BROKER (104)."""

    broker_name: str = field(metadata=_nn("brokerName"))
    broker_addr: str = field(metadata=_nn("brokerAddr"))
    cluster_name: str = field(metadata=_nn("clusterName"))
    broker_id: int = field(metadata=_nn("brokerId", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryDataVersionRequestHeader(CustomHeader):
    """QUERY_DATA_VERSION (322): a broker asks whether its registration is current."""

    broker_name: str = field(metadata=_nn("brokerName"))
    broker_addr: str = field(metadata=_nn("brokerAddr"))
    cluster_name: str = field(metadata=_nn("clusterName"))
    broker_id: int = field(metadata=_nn("brokerId", _L))


@dataclass(frozen=True, slots=True, kw_only=True)
class QueryDataVersionResponseHeader(CustomHeader):
    """QUERY_DATA_VERSION (322) answer: ``changed`` when the name server's data version differs."""

    changed: bool = field(metadata=_nn("changed", _B))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetRouteInfoRequestHeader(TopicRequestHeader):
    """GET_ROUTEINFO_BY_TOPIC (105). ``acceptStandardJsonOnly`` is 4.9.4+; superclass
    ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))
    accept_standard_json_only: bool | None = _opt("acceptStandardJsonOnly", _B, since="4.9.4")


@dataclass(frozen=True, slots=True, kw_only=True)
class PutKVConfigRequestHeader(CustomHeader):
    """PUT_KV_CONFIG (100)."""

    namespace: str = field(metadata=_nn("namespace"))
    key: str = field(metadata=_nn("key"))
    value: str = field(metadata=_nn("value"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigRequestHeader(CustomHeader):
    """GET_KV_CONFIG (101)."""

    namespace: str = field(metadata=_nn("namespace"))
    key: str = field(metadata=_nn("key"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVConfigResponseHeader(CustomHeader):
    """The answer to GET_KV_CONFIG."""

    value: str | None = _opt("value")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteKVConfigRequestHeader(CustomHeader):
    """DELETE_KV_CONFIG (102)."""

    namespace: str = field(metadata=_nn("namespace"))
    key: str = field(metadata=_nn("key"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetKVListByNamespaceRequestHeader(CustomHeader):
    """GET_KVLIST_BY_NAMESPACE (219)."""

    namespace: str = field(metadata=_nn("namespace"))


@dataclass(frozen=True, slots=True, kw_only=True)
class WipeWritePermOfBrokerRequestHeader(CustomHeader):
    """WIPE_WRITE_PERM_OF_BROKER (205)."""

    broker_name: str = field(metadata=_nn("brokerName"))


@dataclass(frozen=True, slots=True, kw_only=True)
class WipeWritePermOfBrokerResponseHeader(CustomHeader):
    """The answer to WIPE_WRITE_PERM_OF_BROKER."""

    wipe_topic_count: int = field(metadata=_nn("wipeTopicCount", _I))


@dataclass(frozen=True, slots=True, kw_only=True)
class AddWritePermOfBrokerRequestHeader(CustomHeader):
    """ADD_WRITE_PERM_OF_BROKER (327, 4.9.2+)."""

    broker_name: str = field(metadata=_nn("brokerName", since="4.9.2"))


@dataclass(frozen=True, slots=True, kw_only=True)
class AddWritePermOfBrokerResponseHeader(CustomHeader):
    """The answer to ADD_WRITE_PERM_OF_BROKER (4.9.2+)."""

    add_topic_count: int = field(metadata=_nn("addTopicCount", _I, since="4.9.2"))


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicFromNamesrvRequestHeader(TopicRequestHeader):
    """DELETE_TOPIC_IN_NAMESRV (216); the Java class was ``DeleteTopicInNamesrvRequestHeader``
    before 4.9.3 (same ``topic`` field). ``clusterName`` is 4.9.4+; superclass
    ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))
    cluster_name: str | None = _opt("clusterName", since="4.9.4")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetTopicsByClusterRequestHeader(CustomHeader):
    """GET_TOPICS_BY_CLUSTER (224)."""

    cluster: str = field(metadata=_nn("cluster"))


# ---------------------------------------------------------------------------------------- clients


@dataclass(frozen=True, slots=True, kw_only=True)
class HeartbeatRequestHeader(RpcRequestHeader):
    """HEART_BEAT (34): no header before 5.2.0, then this empty ``RpcRequestHeader``. The body
    is HeartbeatData."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterClientRequestHeader(RpcRequestHeader):
    """UNREGISTER_CLIENT (35). Superclass ``RpcRequestHeader`` from 5.2.0."""

    client_id: str = field(metadata=_nn("clientID"))
    producer_group: str | None = _opt("producerGroup")
    consumer_group: str | None = _opt("consumerGroup")


@dataclass(frozen=True, slots=True, kw_only=True)
class UnregisterClientResponseHeader(CustomHeader):
    """The answer to UNREGISTER_CLIENT: no fields."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ConsumerSendMsgBackRequestHeader(RpcRequestHeader):
    """CONSUMER_SEND_MSG_BACK (36). ``offset`` is the commit-log offset of the message;
    ``unitMode`` is a primitive. Superclass ``RpcRequestHeader`` in 4.9.5-4.9.8 and 5.1.0+
    (none in 5.0.0)."""

    offset: int = field(metadata=_nn("offset", _L))
    group: str = field(metadata=_nn("group"))
    delay_level: int = field(metadata=_nn("delayLevel", _I))
    origin_msg_id: str | None = _opt("originMsgId")
    origin_topic: str | None = _opt("originTopic")
    unit_mode: bool | None = _opt("unitMode", _PB, default=False)
    max_reconsume_times: int | None = _opt("maxReconsumeTimes", _I)


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupRequestHeader(RpcRequestHeader):
    """GET_CONSUMER_LIST_BY_GROUP (38). Superclass ``RpcRequestHeader`` from 5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerListByGroupResponseHeader(CustomHeader):
    """The answer to GET_CONSUMER_LIST_BY_GROUP: no fields (the body lists the client ids)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyConsumerIdsChangedRequestHeader(RpcRequestHeader):
    """NOTIFY_CONSUMER_IDS_CHANGED (40), broker to client, oneway. Superclass
    ``RpcRequestHeader`` from 5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class LockBatchMqRequestHeader(RpcRequestHeader):
    """LOCK_BATCH_MQ (41): no header before 5.2.0, then this empty one. The body is
    LockBatchRequestBody."""


@dataclass(frozen=True, slots=True, kw_only=True)
class UnlockBatchMqRequestHeader(RpcRequestHeader):
    """UNLOCK_BATCH_MQ (42): as LOCK_BATCH_MQ."""


# ---------------------------------------------------------------------------------------- admin


@dataclass(frozen=True, slots=True, kw_only=True)
class CreateTopicRequestHeader(TopicRequestHeader):
    """UPDATE_AND_CREATE_TOPIC (17).

    ``perm`` is PermName bits (2 WRITE, 4 READ, 6 RW); ``topicFilterType`` is ``SINGLE_TAG`` or
    ``MULTI_TAG``. ``order`` is a ``@CFNotNull`` Boolean initialised to false, so Java always sends
    it. ``attributes`` and ``force`` (initialised to false) are 5.0.0+. Superclass
    ``TopicRequestHeader`` from 5.2.0.
    """

    topic: str = field(metadata=_nn("topic"))
    default_topic: str = field(metadata=_nn("defaultTopic"))
    read_queue_nums: int = field(metadata=_nn("readQueueNums", _I))
    write_queue_nums: int = field(metadata=_nn("writeQueueNums", _I))
    perm: int = field(metadata=_nn("perm", _I))
    topic_filter_type: str = field(metadata=_nn("topicFilterType"))
    topic_sys_flag: int | None = _opt("topicSysFlag", _I)
    order: bool = _opt("order", _B, default=False, not_null=True)
    attributes: str | None = _opt("attributes", since="5.0.0")
    force: bool | None = _opt("force", _B, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteTopicRequestHeader(TopicRequestHeader):
    """DELETE_TOPIC_IN_BROKER (215). Superclass ``TopicRequestHeader`` from 5.2.0."""

    topic: str = field(metadata=_nn("topic"))


@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteSubscriptionGroupRequestHeader(RpcRequestHeader):
    """DELETE_SUBSCRIPTIONGROUP (207).

    The flag that also drops the group's offsets changed its key: 4.9.x ``removeOffset``
    (primitive, always sent), 5.0.0+ ``cleanOffset`` (primitive initialised to false). Superclass
    ``RpcRequestHeader`` from 5.2.0.
    """

    group_name: str = field(metadata=_nn("groupName"))
    remove_offset: bool | None = _opt("removeOffset", _PB, default=False, until="4.9.8")
    clean_offset: bool | None = _opt("cleanOffset", _PB, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetTopicStatsInfoRequestHeader(TopicRequestHeader):
    """GET_TOPIC_STATS_INFO (202). Superclass ``TopicRequestHeader`` from 5.0.0."""

    topic: str = field(metadata=_nn("topic"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumeStatsRequestHeader(TopicRequestHeader):
    """GET_CONSUME_STATS (208). ``topicList`` is 5.3.2+; superclass ``TopicRequestHeader`` from
    5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))
    topic: str | None = _opt("topic")
    topic_list: str | None = _opt("topicList", since="5.3.2")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetConsumerConnectionListRequestHeader(RpcRequestHeader):
    """GET_CONSUMER_CONNECTION_LIST (203). Superclass ``RpcRequestHeader`` from 5.2.0."""

    consumer_group: str = field(metadata=_nn("consumerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetProducerConnectionListRequestHeader(RpcRequestHeader):
    """GET_PRODUCER_CONNECTION_LIST (204). Superclass ``RpcRequestHeader`` from 5.2.0."""

    producer_group: str = field(metadata=_nn("producerGroup"))


@dataclass(frozen=True, slots=True, kw_only=True)
class GetAllTopicConfigResponseHeader(CustomHeader):
    """The answer to GET_ALL_TOPIC_CONFIG (21; the request has no header in any release).
    Empty in every release; develop after 5.3.3 adds a ``@CFNotNull totalTopicNum`` for paged
    reads, optional here so released brokers' answers decode."""

    total_topic_num: int | None = _opt("totalTopicNum", _I, since="develop")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetBrokerConfigResponseHeader(CustomHeader):
    """The answer to GET_BROKER_CONFIG (26; no request header): the broker's DataVersion JSON."""

    version: str = field(metadata=_nn("version"))


# ------------------------------------------------------------------------------ 5.x broker group / HA


@dataclass(frozen=True, slots=True, kw_only=True)
class GetBrokerMemberGroupRequestHeader(CustomHeader):
    """GET_BROKER_MEMBER_GROUP (901, 5.0.0+)."""

    cluster_name: str = field(metadata=_nn("clusterName", since="5.0.0"))
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))


@dataclass(frozen=True, slots=True, kw_only=True)
class AddBrokerRequestHeader(CustomHeader):
    """ADD_BROKER (902, 5.0.0+)."""

    config_path: str | None = _opt("configPath", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class RemoveBrokerRequestHeader(CustomHeader):
    """REMOVE_BROKER (903, 5.0.0+)."""

    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_cluster_name: str = field(metadata=_nn("brokerClusterName", since="5.0.0"))
    broker_id: int = field(metadata=_nn("brokerId", _L, since="5.0.0"))


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerHeartbeatRequestHeader(CustomHeader):
    """BROKER_HEARTBEAT (904, 5.0.0+), broker to controller (and name server), oneway.
    ``brokerId``, ``heartbeatTimeoutMills`` (sic) and ``electionPriority`` are 5.1.0+."""

    cluster_name: str = field(metadata=_nn("clusterName", since="5.0.0"))
    broker_addr: str = field(metadata=_nn("brokerAddr", since="5.0.0"))
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_id: int | None = _opt("brokerId", _L, since="5.1.0")
    epoch: int | None = _opt("epoch", _I, since="5.0.0")
    max_offset: int | None = _opt("maxOffset", _L, since="5.0.0")
    confirm_offset: int | None = _opt("confirmOffset", _L, since="5.0.0")
    heartbeat_timeout_mills: int | None = _opt("heartbeatTimeoutMills", _L, since="5.1.0")
    election_priority: int | None = _opt("electionPriority", _I, since="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyMinBrokerIdChangeRequestHeader(CustomHeader):
    """NOTIFY_MIN_BROKER_ID_CHANGE (905, 5.0.0+)."""

    min_broker_id: int | None = _opt("minBrokerId", _L, since="5.0.0")
    broker_name: str | None = _opt("brokerName", since="5.0.0")
    min_broker_addr: str | None = _opt("minBrokerAddr", since="5.0.0")
    offline_broker_addr: str | None = _opt("offlineBrokerAddr", since="5.0.0")
    ha_broker_addr: str | None = _opt("haBrokerAddr", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExchangeHAInfoRequestHeader(CustomHeader):
    """EXCHANGE_BROKER_HA_INFO (906, 5.0.0+)."""

    master_ha_address: str | None = _opt("masterHaAddress", since="5.0.0")
    master_flush_offset: int | None = _opt("masterFlushOffset", _L, since="5.0.0")
    master_address: str | None = _opt("masterAddress", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ExchangeHAInfoResponseHeader(CustomHeader):
    """The answer to EXCHANGE_BROKER_HA_INFO (same fields as the request)."""

    master_ha_address: str | None = _opt("masterHaAddress", since="5.0.0")
    master_flush_offset: int | None = _opt("masterFlushOffset", _L, since="5.0.0")
    master_address: str | None = _opt("masterAddress", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ResetMasterFlushOffsetHeader(CustomHeader):
    """RESET_MASTER_FLUSH_OFFSET (908, 5.0.0+)."""

    master_flush_offset: int = field(metadata=_nn("masterFlushOffset", _L, since="5.0.0"))


# ---------------------------------------------------------------------------------------- 5.x controller
# The controller protocol changed twice: 5.1.1 replaced broker addresses by broker ids, 5.2.0 added
# invokeTime. 5.0.0's primitive int/long fields (always sent) became Integer/Long in 5.1.1.


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterSyncStateSetRequestHeader(CustomHeader):
    """CONTROLLER_ALTER_SYNC_STATE_SET (1001); the body is the new SyncStateSet.
    ``masterAddress`` is 5.0.0-5.1.0, ``masterBrokerId`` 5.1.1+, ``invokeTime`` 5.2.0+."""

    broker_name: str | None = _opt("brokerName", since="5.0.0")
    master_address: str | None = _opt("masterAddress", since="5.0.0", until="5.1.0")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    invoke_time: int | None = _opt("invokeTime", _PL, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class AlterSyncStateSetResponseHeader(CustomHeader):
    """The answer to CONTROLLER_ALTER_SYNC_STATE_SET."""

    new_sync_state_set_epoch: int | None = _opt("newSyncStateSetEpoch", _PI, default=0, since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ElectMasterRequestHeader(CustomHeader):
    """CONTROLLER_ELECT_MASTER (1002). 5.0.0-5.1.0 name the broker by ``brokerAddress``
    (@CFNotNull there); 5.1.1+ by ``brokerId`` (@CFNotNull) with ``designateElect``; 5.2.0+ adds
    ``invokeTime``."""

    cluster_name: str = field(metadata=_nn("clusterName", since="5.0.0"))
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_address: str | None = _opt("brokerAddress", since="5.0.0", until="5.1.0")
    broker_id: int | None = _opt("brokerId", _L, since="5.1.1")
    designate_elect: bool | None = _opt("designateElect", _B, since="5.1.1")
    invoke_time: int | None = _opt("invokeTime", _L, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class ElectMasterResponseHeader(CustomHeader):
    """The answer to CONTROLLER_ELECT_MASTER (also sent with CONTROLLER_MASTER_STILL_EXIST).
    5.0.0-5.1.0: ``newMasterAddress`` and ``brokerMemberGroup`` (the ``toString()`` of a
    BrokerMemberGroup object); 5.1.1+: ``masterBrokerId`` and ``masterAddress``."""

    new_master_address: str | None = _opt("newMasterAddress", since="5.0.0", until="5.1.0")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_address: str | None = _opt("masterAddress", since="5.1.1")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    sync_state_set_epoch: int | None = _opt("syncStateSetEpoch", _PI, default=0, since="5.0.0")
    broker_member_group: str | None = _opt("brokerMemberGroup", since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerToControllerRequestHeader(CustomHeader):
    """CONTROLLER_REGISTER_BROKER (1003).

    5.0.0: ``clusterName, brokerName, brokerAddress, epoch, maxOffset, heartbeatTimeoutMillis``;
    5.1.0 adds ``confirmOffset`` and ``electionPriority``; 5.1.1 keeps only the names,
    ``brokerId`` and ``brokerAddress``; 5.2.0 adds ``invokeTime``.
    """

    cluster_name: str | None = _opt("clusterName", since="5.0.0")
    broker_name: str | None = _opt("brokerName", since="5.0.0")
    broker_id: int | None = _opt("brokerId", _L, since="5.1.1")
    broker_address: str | None = _opt("brokerAddress", since="5.0.0")
    epoch: int | None = _opt("epoch", _I, since="5.0.0", until="5.1.0")
    max_offset: int | None = _opt("maxOffset", _L, since="5.0.0", until="5.1.0")
    confirm_offset: int | None = _opt("confirmOffset", _L, since="5.1.0", until="5.1.0")
    heartbeat_timeout_millis: int | None = _opt("heartbeatTimeoutMillis", _L, since="5.0.0", until="5.1.0")
    election_priority: int | None = _opt("electionPriority", _I, since="5.1.0", until="5.1.0")
    invoke_time: int | None = _opt("invokeTime", _PL, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class RegisterBrokerToControllerResponseHeader(CustomHeader):
    """The answer to CONTROLLER_REGISTER_BROKER. 5.0.0-5.1.0 carry the assigned ``brokerId``
    (a primitive); 5.1.1+ carry ``clusterName``, ``brokerName`` and ``masterBrokerId``."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_address: str | None = _opt("masterAddress", since="5.0.0")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    sync_state_set_epoch: int | None = _opt("syncStateSetEpoch", _PI, default=0, since="5.0.0")
    broker_id: int | None = _opt("brokerId", _PL, default=0, since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetReplicaInfoRequestHeader(CustomHeader):
    """CONTROLLER_GET_REPLICA_INFO (1004). ``brokerAddress`` is 5.0.0-5.1.0."""

    broker_name: str | None = _opt("brokerName", since="5.0.0")
    broker_address: str | None = _opt("brokerAddress", since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetReplicaInfoResponseHeader(CustomHeader):
    """The answer to CONTROLLER_GET_REPLICA_INFO; the body is the SyncStateSet. 5.0.0-5.1.0
    carry the asker's ``brokerId`` (a primitive initialised to -1); 5.1.1+ carry
    ``masterBrokerId``."""

    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")
    master_address: str | None = _opt("masterAddress", since="5.0.0")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    broker_id: int | None = _opt("brokerId", _PL, default=-1, since="5.0.0", until="5.1.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetMetaDataResponseHeader(CustomHeader):
    """The answer to CONTROLLER_GET_METADATA_INFO (1005; no request header). ``isLeader`` is a
    primitive; ``peers`` is ``id:addr;`` repeated."""

    group: str | None = _opt("group", since="5.0.0")
    controller_leader_id: str | None = _opt("controllerLeaderId", since="5.0.0")
    controller_leader_address: str | None = _opt("controllerLeaderAddress", since="5.0.0")
    is_leader: bool | None = _opt("isLeader", _PB, default=False, since="5.0.0")
    peers: str | None = _opt("peers", since="5.0.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetSyncStateDataRequest(CustomHeader):
    """CONTROLLER_GET_SYNC_STATE_DATA (1006). Clients and mqadmin send no header (the body lists
    the broker names); the 5.2.0+ JRaft controller sends this class (``controller/.../task``)
    to itself, carrying ``invokeTime``."""

    invoke_time: int | None = _opt("invokeTime", _L, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class NotifyBrokerRoleChangedRequestHeader(CustomHeader):
    """NOTIFY_BROKER_ROLE_CHANGED (1008), controller to broker, oneway. 5.0.0-5.1.0 send the
    receiver's ``brokerId`` (primitive); 5.1.1+ send ``masterBrokerId``."""

    master_address: str | None = _opt("masterAddress", since="5.0.0")
    master_epoch: int | None = _opt("masterEpoch", _PI, default=0, since="5.0.0")
    sync_state_set_epoch: int | None = _opt("syncStateSetEpoch", _PI, default=0, since="5.0.0")
    broker_id: int | None = _opt("brokerId", _PL, default=0, since="5.0.0", until="5.1.0")
    master_broker_id: int | None = _opt("masterBrokerId", _L, since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class CleanControllerBrokerDataRequestHeader(CustomHeader):
    """CLEAN_BROKER_DATA (1011). ``brokerAddress`` is 5.0.0-5.1.0,
    ``brokerControllerIdsToClean`` 5.1.1+, ``invokeTime`` 5.2.0+."""

    cluster_name: str | None = _opt("clusterName", since="5.0.0")
    broker_name: str = field(metadata=_nn("brokerName", since="5.0.0"))
    broker_address: str | None = _opt("brokerAddress", since="5.0.0", until="5.1.0")
    broker_controller_ids_to_clean: str | None = _opt("brokerControllerIdsToClean", since="5.1.1")
    is_clean_living_broker: bool | None = _opt("isCleanLivingBroker", _PB, default=False, since="5.0.0")
    invoke_time: int | None = _opt("invokeTime", _PL, since="5.2.0")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetNextBrokerIdRequestHeader(CustomHeader):
    """CONTROLLER_GET_NEXT_BROKER_ID (1012, 5.1.1+)."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class GetNextBrokerIdResponseHeader(CustomHeader):
    """The answer to CONTROLLER_GET_NEXT_BROKER_ID."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")
    next_broker_id: int | None = _opt("nextBrokerId", _L, since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyBrokerIdRequestHeader(CustomHeader):
    """CONTROLLER_APPLY_BROKER_ID (1013, 5.1.1+)."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")
    applied_broker_id: int | None = _opt("appliedBrokerId", _L, since="5.1.1")
    register_check_code: str | None = _opt("registerCheckCode", since="5.1.1")


@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyBrokerIdResponseHeader(CustomHeader):
    """The answer to CONTROLLER_APPLY_BROKER_ID."""

    cluster_name: str | None = _opt("clusterName", since="5.1.1")
    broker_name: str | None = _opt("brokerName", since="5.1.1")


# ---------------------------------------------------------------------------------------- registries

_RC = RequestCode

#: request code -> the header class of the request. Codes absent here carry no header in any
#: release (e.g. GET_BROKER_CLUSTER_INFO, GET_BROKER_RUNTIME_INFO, GET_ALL_TOPIC_CONFIG,
#: GET_BROKER_CONFIG, GET_BROKER_HA_STATUS, GET_BROKER_EPOCH_CACHE, the controller config codes).
REQUEST_HEADERS: dict[int, type[CustomHeader]] = {
    _RC.SEND_MESSAGE: SendMessageRequestHeader,
    _RC.PULL_MESSAGE: PullMessageRequestHeader,
    _RC.QUERY_MESSAGE: QueryMessageRequestHeader,
    _RC.QUERY_CONSUMER_OFFSET: QueryConsumerOffsetRequestHeader,
    _RC.UPDATE_CONSUMER_OFFSET: UpdateConsumerOffsetRequestHeader,
    _RC.UPDATE_AND_CREATE_TOPIC: CreateTopicRequestHeader,
    _RC.SEARCH_OFFSET_BY_TIMESTAMP: SearchOffsetRequestHeader,
    _RC.GET_MAX_OFFSET: GetMaxOffsetRequestHeader,
    _RC.GET_MIN_OFFSET: GetMinOffsetRequestHeader,
    _RC.GET_EARLIEST_MSG_STORETIME: GetEarliestMsgStoretimeRequestHeader,
    _RC.VIEW_MESSAGE_BY_ID: ViewMessageRequestHeader,
    _RC.HEART_BEAT: HeartbeatRequestHeader,
    _RC.UNREGISTER_CLIENT: UnregisterClientRequestHeader,
    _RC.CONSUMER_SEND_MSG_BACK: ConsumerSendMsgBackRequestHeader,
    _RC.GET_CONSUMER_LIST_BY_GROUP: GetConsumerListByGroupRequestHeader,
    _RC.NOTIFY_CONSUMER_IDS_CHANGED: NotifyConsumerIdsChangedRequestHeader,
    _RC.LOCK_BATCH_MQ: LockBatchMqRequestHeader,
    _RC.UNLOCK_BATCH_MQ: UnlockBatchMqRequestHeader,
    _RC.PUT_KV_CONFIG: PutKVConfigRequestHeader,
    _RC.GET_KV_CONFIG: GetKVConfigRequestHeader,
    _RC.DELETE_KV_CONFIG: DeleteKVConfigRequestHeader,
    _RC.REGISTER_BROKER: RegisterBrokerRequestHeader,
    _RC.UNREGISTER_BROKER: UnRegisterBrokerRequestHeader,
    _RC.QUERY_DATA_VERSION: QueryDataVersionRequestHeader,
    _RC.GET_ROUTEINFO_BY_TOPIC: GetRouteInfoRequestHeader,
    _RC.GET_TOPIC_STATS_INFO: GetTopicStatsInfoRequestHeader,
    _RC.GET_CONSUMER_CONNECTION_LIST: GetConsumerConnectionListRequestHeader,
    _RC.GET_PRODUCER_CONNECTION_LIST: GetProducerConnectionListRequestHeader,
    _RC.WIPE_WRITE_PERM_OF_BROKER: WipeWritePermOfBrokerRequestHeader,
    _RC.DELETE_SUBSCRIPTIONGROUP: DeleteSubscriptionGroupRequestHeader,
    _RC.GET_CONSUME_STATS: GetConsumeStatsRequestHeader,
    _RC.DELETE_TOPIC_IN_BROKER: DeleteTopicRequestHeader,
    _RC.DELETE_TOPIC_IN_NAMESRV: DeleteTopicFromNamesrvRequestHeader,
    _RC.GET_KVLIST_BY_NAMESPACE: GetKVListByNamespaceRequestHeader,
    _RC.GET_TOPICS_BY_CLUSTER: GetTopicsByClusterRequestHeader,
    _RC.QUERY_TOPIC_CONSUME_BY_WHO: QueryTopicConsumeByWhoRequestHeader,
    _RC.SEND_MESSAGE_V2: SendMessageRequestHeaderV2,
    _RC.SEND_BATCH_MESSAGE: SendMessageRequestHeaderV2,
    _RC.SEND_REPLY_MESSAGE: SendMessageRequestHeader,
    _RC.SEND_REPLY_MESSAGE_V2: SendMessageRequestHeaderV2,
    _RC.ADD_WRITE_PERM_OF_BROKER: AddWritePermOfBrokerRequestHeader,
    _RC.GET_BROKER_MEMBER_GROUP: GetBrokerMemberGroupRequestHeader,
    _RC.ADD_BROKER: AddBrokerRequestHeader,
    _RC.REMOVE_BROKER: RemoveBrokerRequestHeader,
    _RC.BROKER_HEARTBEAT: BrokerHeartbeatRequestHeader,
    _RC.NOTIFY_MIN_BROKER_ID_CHANGE: NotifyMinBrokerIdChangeRequestHeader,
    _RC.EXCHANGE_BROKER_HA_INFO: ExchangeHAInfoRequestHeader,
    _RC.RESET_MASTER_FLUSH_OFFSET: ResetMasterFlushOffsetHeader,
    _RC.CONTROLLER_ALTER_SYNC_STATE_SET: AlterSyncStateSetRequestHeader,
    _RC.CONTROLLER_ELECT_MASTER: ElectMasterRequestHeader,
    _RC.CONTROLLER_REGISTER_BROKER: RegisterBrokerToControllerRequestHeader,
    _RC.CONTROLLER_GET_REPLICA_INFO: GetReplicaInfoRequestHeader,
    _RC.CONTROLLER_GET_SYNC_STATE_DATA: GetSyncStateDataRequest,
    _RC.NOTIFY_BROKER_ROLE_CHANGED: NotifyBrokerRoleChangedRequestHeader,
    _RC.CLEAN_BROKER_DATA: CleanControllerBrokerDataRequestHeader,
    _RC.CONTROLLER_GET_NEXT_BROKER_ID: GetNextBrokerIdRequestHeader,
    _RC.CONTROLLER_APPLY_BROKER_ID: ApplyBrokerIdRequestHeader,
}

#: request code -> the header class of its response
RESPONSE_HEADERS: dict[int, type[CustomHeader]] = {
    _RC.QUERY_DATA_VERSION: QueryDataVersionResponseHeader,
    _RC.SEND_MESSAGE: SendMessageResponseHeader,
    _RC.PULL_MESSAGE: PullMessageResponseHeader,
    _RC.QUERY_MESSAGE: QueryMessageResponseHeader,
    _RC.QUERY_CONSUMER_OFFSET: QueryConsumerOffsetResponseHeader,
    _RC.UPDATE_CONSUMER_OFFSET: UpdateConsumerOffsetResponseHeader,
    _RC.GET_ALL_TOPIC_CONFIG: GetAllTopicConfigResponseHeader,
    _RC.GET_BROKER_CONFIG: GetBrokerConfigResponseHeader,
    _RC.SEARCH_OFFSET_BY_TIMESTAMP: SearchOffsetResponseHeader,
    _RC.GET_MAX_OFFSET: GetMaxOffsetResponseHeader,
    _RC.GET_MIN_OFFSET: GetMinOffsetResponseHeader,
    _RC.GET_EARLIEST_MSG_STORETIME: GetEarliestMsgStoretimeResponseHeader,
    _RC.VIEW_MESSAGE_BY_ID: ViewMessageResponseHeader,
    _RC.UNREGISTER_CLIENT: UnregisterClientResponseHeader,
    _RC.GET_CONSUMER_LIST_BY_GROUP: GetConsumerListByGroupResponseHeader,
    _RC.GET_KV_CONFIG: GetKVConfigResponseHeader,
    _RC.REGISTER_BROKER: RegisterBrokerResponseHeader,
    _RC.WIPE_WRITE_PERM_OF_BROKER: WipeWritePermOfBrokerResponseHeader,
    _RC.SEND_MESSAGE_V2: SendMessageResponseHeader,
    _RC.SEND_BATCH_MESSAGE: SendMessageResponseHeader,
    _RC.SEND_REPLY_MESSAGE: SendMessageResponseHeader,
    _RC.SEND_REPLY_MESSAGE_V2: SendMessageResponseHeader,
    _RC.ADD_WRITE_PERM_OF_BROKER: AddWritePermOfBrokerResponseHeader,
    _RC.EXCHANGE_BROKER_HA_INFO: ExchangeHAInfoResponseHeader,
    _RC.CONTROLLER_ALTER_SYNC_STATE_SET: AlterSyncStateSetResponseHeader,
    _RC.CONTROLLER_ELECT_MASTER: ElectMasterResponseHeader,
    _RC.CONTROLLER_REGISTER_BROKER: RegisterBrokerToControllerResponseHeader,
    _RC.CONTROLLER_GET_REPLICA_INFO: GetReplicaInfoResponseHeader,
    _RC.CONTROLLER_GET_METADATA_INFO: GetMetaDataResponseHeader,
    _RC.CONTROLLER_GET_NEXT_BROKER_ID: GetNextBrokerIdResponseHeader,
    _RC.CONTROLLER_APPLY_BROKER_ID: ApplyBrokerIdResponseHeader,
}

_SUCCESS_ONLY = frozenset({int(ResponseCode.SUCCESS)})
_SEND_CODES = frozenset({int(ResponseCode.SUCCESS), int(ResponseCode.FLUSH_DISK_TIMEOUT),
                         int(ResponseCode.FLUSH_SLAVE_TIMEOUT), int(ResponseCode.SLAVE_NOT_AVAILABLE)})

#: request code -> the response codes whose responses carry the typed header, as the Java side
#: reads it (``MQClientAPIImpl.processSendResponse``: the four "send OK" codes;
#: ``processPullResponse``: SUCCESS and the three not-found/retry/moved codes;
#: ``BrokerOuterAPI.brokerElect``: SUCCESS and CONTROLLER_MASTER_STILL_EXIST). Any other code
#: answers with a remark only. Codes not listed here: SUCCESS only.
RESPONSE_HEADER_CODES: dict[int, frozenset[int]] = {
    _RC.SEND_MESSAGE: _SEND_CODES,
    _RC.SEND_MESSAGE_V2: _SEND_CODES,
    _RC.SEND_BATCH_MESSAGE: _SEND_CODES,
    _RC.SEND_REPLY_MESSAGE: _SEND_CODES,
    _RC.SEND_REPLY_MESSAGE_V2: _SEND_CODES,
    _RC.PULL_MESSAGE: frozenset({int(ResponseCode.SUCCESS), int(ResponseCode.PULL_NOT_FOUND),
                                 int(ResponseCode.PULL_RETRY_IMMEDIATELY),
                                 int(ResponseCode.PULL_OFFSET_MOVED)}),
    _RC.CONTROLLER_ELECT_MASTER: frozenset({int(ResponseCode.SUCCESS),
                                            int(ResponseCode.CONTROLLER_MASTER_STILL_EXIST)}),
}


def decode_request_header(cmd: RemotingCommand) -> CustomHeader | None:
    """The typed header of request ``cmd``, or None when its code has no header class."""
    cls = REQUEST_HEADERS.get(cmd.code)
    return None if cls is None else cls.from_ext(cmd.ext_fields)


def decode_response_header(request_code: int, cmd: RemotingCommand, *,
                           any_code: bool = False) -> CustomHeader | None:
    """The typed header of ``cmd``, the response to a ``request_code`` request.

    None when that request's response has no header class, or when ``cmd.code`` is one Java
    answers with a remark only (see :data:`RESPONSE_HEADER_CODES`); ``any_code=True`` decodes
    whatever the code.
    """
    cls = RESPONSE_HEADERS.get(request_code)
    if cls is None:
        return None
    if not any_code and cmd.code not in RESPONSE_HEADER_CODES.get(request_code, _SUCCESS_ONLY):
        return None
    return cls.from_ext(cmd.ext_fields)


def request(
    code: int,
    header: CustomHeader | None = None,
    body: bytes | None = None,
    *,
    opaque: int = 0,
    oneway: bool = False,
    language: LanguageCode | int | str = LanguageCode.JAVA,
    version: int = DEFAULT_VERSION,
    serialize_type: SerializeType = SerializeType.JSON,
) -> RemotingCommand:
    """A request command carrying ``header`` (``RemotingCommand.createRequestCommand``).

    The header must be of the class registered for ``code`` (if any). SEND_BATCH_MESSAGE needs
    ``batch=True``: the broker picks the batch path from that flag, not from the code
    (``SendMessageProcessor.asyncProcessRequest``), and would store the batch body as one message.
    """
    if header is not None:
        expected = REQUEST_HEADERS.get(int(code))
        if expected is not None and not isinstance(header, expected):
            raise EncodeError(f"request code {int(code)} takes a {expected.__name__}, "
                              f"not a {type(header).__name__}", field="extFields")
        if (int(code) == RequestCode.SEND_BATCH_MESSAGE and isinstance(header, SendMessageRequestHeaderV2)
                and header.batch is not True):
            raise EncodeError("SEND_BATCH_MESSAGE needs batch (m) = true", field="extFields.m")
    return RemotingCommand.request(code, header.to_ext() if header is not None else None, body,
                                   opaque=opaque, oneway=oneway, language=language, version=version,
                                   serialize_type=serialize_type)


def response(
    req: RemotingCommand,
    header: CustomHeader | None = None,
    code: int = ResponseCode.SUCCESS,
    remark: str | None = None,
    body: bytes | None = None,
    *,
    language: LanguageCode | int | str = LanguageCode.JAVA,
    version: int | None = None,
    serialize_type: SerializeType | None = None,
) -> RemotingCommand:
    """The response to ``req`` carrying ``header`` (same opaque, flag bit 0 set). The header must
    be of the class registered for ``req.code``'s response (if any)."""
    if header is not None:
        expected = RESPONSE_HEADERS.get(req.code)
        if expected is not None and not isinstance(header, expected):
            raise EncodeError(f"the response to request code {req.code} takes a "
                              f"{expected.__name__}, not a {type(header).__name__}", field="extFields")
    return req.response(code, remark, header.to_ext() if header is not None else None, body,
                        language=language, version=version, serialize_type=serialize_type)
