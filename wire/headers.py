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
logs; a command with no ``extFields`` at all is not checked), and numeric text longer than 64
characters is not a number (:mod:`wire._javanum`: the peer chooses the length, so parsing is
linear and bounded; Java would read such text only if it were mostly leading zeros). Errors
quote at most a short excerpt of the text (:func:`wire.errors.excerpt`).

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

Layout
------
This module holds the rules (field metadata, parsing, formatting, :class:`CustomHeader` and the
inherited request fields) and the registries' functions. The classes themselves live in one
private module per area (``wire/_headers/``: ``client``, ``namesrv``, ``admin``, ``acl``, ``controller``)
and are imported from here (``from wire.headers import PullMessageRequestHeader``): an area's
classes are created when one of them is first asked for, and the code tables
(:data:`REQUEST_HEADERS`, ...) load them all. A command that sends one header pays for its area
only.

Sources: ``remoting/.../protocol/RemotingCommand.java`` (``makeCustomHeaderToNet``,
``decodeCommandCustomHeader``), ``RocketMQSerializable.java``, ``FastCodesHeader.java``; the
header classes under ``common/.../common/protocol/header/`` (4.9.x, 5.0.0) and
``remoting/.../remoting/protocol/header/`` (5.1+).
"""

from __future__ import annotations

import dataclasses
import enum
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Self

from ._javanum import MAX_NUMBER_TEXT, java_decimal
from .codes import LanguageCode, RequestCode, ResponseCode, SerializeType
from .errors import DecodeError, EncodeError, clipped, excerpt
from .remoting import DEFAULT_VERSION, RemotingCommand

if TYPE_CHECKING:
    from ._headers.acl import (
        CreateAccessConfigRequestHeader,
        DeleteAccessConfigRequestHeader,
        GetBrokerAclConfigResponseHeader,
        UpdateGlobalWhiteAddrsConfigRequestHeader,
    )
    from ._headers.admin import (
        CreateTopicRequestHeader,
        DeleteSubscriptionGroupRequestHeader,
        DeleteTopicRequestHeader,
        GetAllProducerInfoRequestHeader,
        GetAllTopicConfigResponseHeader,
        GetBrokerConfigResponseHeader,
        GetConsumerConnectionListRequestHeader,
        GetConsumeStatsRequestHeader,
        GetProducerConnectionListRequestHeader,
        GetTopicStatsInfoRequestHeader,
        QueryConsumeQueueRequestHeader,
        QueryConsumeTimeSpanRequestHeader,
        QueryCorrectionOffsetHeader,
    )
    from ._headers.client import (
        CheckTransactionStateRequestHeader,
        ConsumeMessageDirectlyResultRequestHeader,
        ConsumerSendMsgBackRequestHeader,
        EndTransactionRequestHeader,
        GetConsumerListByGroupRequestHeader,
        GetConsumerListByGroupResponseHeader,
        GetConsumerRunningInfoRequestHeader,
        GetConsumerStatusRequestHeader,
        GetEarliestMsgStoretimeRequestHeader,
        GetEarliestMsgStoretimeResponseHeader,
        GetMaxOffsetRequestHeader,
        GetMaxOffsetResponseHeader,
        GetMinOffsetRequestHeader,
        GetMinOffsetResponseHeader,
        HeartbeatRequestHeader,
        LockBatchMqRequestHeader,
        NotifyConsumerIdsChangedRequestHeader,
        PullMessageRequestHeader,
        PullMessageResponseHeader,
        QueryConsumerOffsetRequestHeader,
        QueryConsumerOffsetResponseHeader,
        QueryMessageRequestHeader,
        QueryMessageResponseHeader,
        QueryTopicConsumeByWhoRequestHeader,
        ReplyMessageRequestHeader,
        ResetOffsetRequestHeader,
        ResumeCheckHalfMessageRequestHeader,
        SearchOffsetRequestHeader,
        SearchOffsetResponseHeader,
        SendMessageRequestHeader,
        SendMessageRequestHeaderV2,
        SendMessageResponseHeader,
        UnlockBatchMqRequestHeader,
        UnregisterClientRequestHeader,
        UnregisterClientResponseHeader,
        UpdateConsumerOffsetRequestHeader,
        UpdateConsumerOffsetResponseHeader,
        ViewMessageRequestHeader,
        ViewMessageResponseHeader,
    )
    from ._headers.controller import (
        AddBrokerRequestHeader,
        AlterSyncStateSetRequestHeader,
        AlterSyncStateSetResponseHeader,
        ApplyBrokerIdRequestHeader,
        ApplyBrokerIdResponseHeader,
        BrokerHeartbeatRequestHeader,
        CleanControllerBrokerDataRequestHeader,
        ElectMasterRequestHeader,
        ElectMasterResponseHeader,
        ExchangeHAInfoRequestHeader,
        ExchangeHAInfoResponseHeader,
        GetBrokerMemberGroupRequestHeader,
        GetMetaDataResponseHeader,
        GetNextBrokerIdRequestHeader,
        GetNextBrokerIdResponseHeader,
        GetReplicaInfoRequestHeader,
        GetReplicaInfoResponseHeader,
        GetSyncStateDataRequest,
        NotifyBrokerRoleChangedRequestHeader,
        NotifyMinBrokerIdChangeRequestHeader,
        RegisterBrokerToControllerRequestHeader,
        RegisterBrokerToControllerResponseHeader,
        RemoveBrokerRequestHeader,
        ResetMasterFlushOffsetHeader,
    )
    from ._headers.namesrv import (
        AddWritePermOfBrokerRequestHeader,
        AddWritePermOfBrokerResponseHeader,
        DeleteKVConfigRequestHeader,
        DeleteTopicFromNamesrvRequestHeader,
        GetKVConfigRequestHeader,
        GetKVConfigResponseHeader,
        GetKVListByNamespaceRequestHeader,
        GetRouteInfoRequestHeader,
        GetTopicsByClusterRequestHeader,
        PutKVConfigRequestHeader,
        QueryDataVersionRequestHeader,
        QueryDataVersionResponseHeader,
        RegisterBrokerRequestHeader,
        RegisterBrokerResponseHeader,
        UnRegisterBrokerRequestHeader,
        WipeWritePermOfBrokerRequestHeader,
        WipeWritePermOfBrokerResponseHeader,
    )
    from ._headers.registry import REQUEST_HEADERS, RESPONSE_HEADER_CODES, RESPONSE_HEADERS

__all__ = [
    "REQUEST_HEADERS",
    "RESPONSE_HEADERS",
    "RESPONSE_HEADER_CODES",
    "AddBrokerRequestHeader",
    "AddWritePermOfBrokerRequestHeader",
    "AddWritePermOfBrokerResponseHeader",
    "CreateAccessConfigRequestHeader",
    "DeleteAccessConfigRequestHeader",
    "GetBrokerAclConfigResponseHeader",
    "UpdateGlobalWhiteAddrsConfigRequestHeader",
    "AlterSyncStateSetRequestHeader",
    "AlterSyncStateSetResponseHeader",
    "ApplyBrokerIdRequestHeader",
    "ApplyBrokerIdResponseHeader",
    "BrokerHeartbeatRequestHeader",
    "CheckTransactionStateRequestHeader",
    "CleanControllerBrokerDataRequestHeader",
    "ConsumeMessageDirectlyResultRequestHeader",
    "ConsumerSendMsgBackRequestHeader",
    "CreateTopicRequestHeader",
    "CustomHeader",
    "DeleteKVConfigRequestHeader",
    "DeleteSubscriptionGroupRequestHeader",
    "DeleteTopicFromNamesrvRequestHeader",
    "DeleteTopicRequestHeader",
    "EndTransactionRequestHeader",
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
    "GetConsumerRunningInfoRequestHeader",
    "GetConsumerStatusRequestHeader",
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
    "QueryConsumeQueueRequestHeader",
    "QueryConsumeTimeSpanRequestHeader",
    "QueryCorrectionOffsetHeader",
    "GetAllProducerInfoRequestHeader",
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
    "ReplyMessageRequestHeader",
    "ResetMasterFlushOffsetHeader",
    "ResetOffsetRequestHeader",
    "ResumeCheckHalfMessageRequestHeader",
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

_STR_TYPE = frozenset({str})


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
    value = java_decimal(raw)
    lo, hi = _RANGES[jt]
    if value is None or not lo <= value <= hi:
        what = ("is not a decimal number" if value is None or len(raw) > MAX_NUMBER_TEXT
                else f"is outside the {jt.value} range")
        raise DecodeError(f"{cls.__name__}.{spec.key}: {excerpt(raw)} {what}", field=f"extFields.{spec.key}",
                          expected=_EXPECTED[jt], found=clipped(raw))
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
                raise DecodeError(f"{cls.__name__}.{spec.key}: ext value {excerpt(raw)} is not a string",
                                  field=f"extFields.{spec.key}", expected="str", found=clipped(raw))
            value = _parse(cls, spec, raw)
            if spec.java_type is not _S and _format(value) != raw:
                text[spec.key] = raw
            object.__setattr__(obj, spec.name, value)
        # the rest, in their order: copied and checked at C speed (a peer may send a million keys),
        # entry by entry only to name one that is not a string pair
        extra = dict(ext)
        for key in _known_keys(cls):
            extra.pop(key, None)
        if set(map(type, extra)) - _STR_TYPE or set(map(type, extra.values())) - _STR_TYPE:
            for k, v in extra.items():
                if not isinstance(k, str) or not isinstance(v, str):
                    raise DecodeError(f"{cls.__name__}: ext entry {excerpt(k)}: {excerpt(v)} "
                                      "is not a string pair",
                                      field=f"extFields.{excerpt(k)}", expected="str", found=clipped(v))
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


def decode_request_header(cmd: RemotingCommand) -> CustomHeader | None:
    """The typed header of request ``cmd``, or None when its code has no header class."""
    from ._headers.registry import REQUEST_HEADERS

    cls = REQUEST_HEADERS.get(cmd.code)
    return None if cls is None else cls.from_ext(cmd.ext_fields)


def decode_response_header(request_code: int, cmd: RemotingCommand, *,
                           any_code: bool = False) -> CustomHeader | None:
    """The typed header of ``cmd``, the response to a ``request_code`` request.

    None when that request's response has no header class, or when ``cmd.code`` is one Java
    answers with a remark only (see :data:`RESPONSE_HEADER_CODES`); ``any_code=True`` decodes
    whatever the code.
    """
    from ._headers.registry import RESPONSE_HEADER_CODES, RESPONSE_HEADERS, SUCCESS_ONLY

    cls = RESPONSE_HEADERS.get(request_code)
    if cls is None:
        return None
    if not any_code and cmd.code not in RESPONSE_HEADER_CODES.get(request_code, SUCCESS_ONLY):
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
        from ._headers.client import SendMessageRequestHeaderV2
        from ._headers.registry import REQUEST_HEADERS

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
        from ._headers.registry import RESPONSE_HEADERS

        expected = RESPONSE_HEADERS.get(req.code)
        if expected is not None and not isinstance(header, expected):
            raise EncodeError(f"the response to request code {req.code} takes a "
                              f"{expected.__name__}, not a {type(header).__name__}", field="extFields")
    return req.response(code, remark, header.to_ext() if header is not None else None, body,
                        language=language, version=version, serialize_type=serialize_type)

# ---------------------------------------------------------------------------------------- lazy names

#: where each header class is defined: the classes of an area are created when one of them is
#: first used, so that a short-lived command pays only for the headers it sends
_HOMES: dict[str, str] = {
    "CreateAccessConfigRequestHeader": "acl",
    "DeleteAccessConfigRequestHeader": "acl",
    "GetBrokerAclConfigResponseHeader": "acl",
    "UpdateGlobalWhiteAddrsConfigRequestHeader": "acl",
    "SendMessageRequestHeader": "client",
    "SendMessageRequestHeaderV2": "client",
    "SendMessageResponseHeader": "client",
    "PullMessageRequestHeader": "client",
    "PullMessageResponseHeader": "client",
    "QueryConsumerOffsetRequestHeader": "client",
    "QueryConsumerOffsetResponseHeader": "client",
    "UpdateConsumerOffsetRequestHeader": "client",
    "UpdateConsumerOffsetResponseHeader": "client",
    "GetMaxOffsetRequestHeader": "client",
    "GetMaxOffsetResponseHeader": "client",
    "GetMinOffsetRequestHeader": "client",
    "GetMinOffsetResponseHeader": "client",
    "SearchOffsetRequestHeader": "client",
    "SearchOffsetResponseHeader": "client",
    "GetEarliestMsgStoretimeRequestHeader": "client",
    "GetEarliestMsgStoretimeResponseHeader": "client",
    "ViewMessageRequestHeader": "client",
    "ViewMessageResponseHeader": "client",
    "QueryMessageRequestHeader": "client",
    "QueryMessageResponseHeader": "client",
    "QueryTopicConsumeByWhoRequestHeader": "client",
    "HeartbeatRequestHeader": "client",
    "UnregisterClientRequestHeader": "client",
    "UnregisterClientResponseHeader": "client",
    "ConsumerSendMsgBackRequestHeader": "client",
    "EndTransactionRequestHeader": "client",
    "CheckTransactionStateRequestHeader": "client",
    "ReplyMessageRequestHeader": "client",
    "ResumeCheckHalfMessageRequestHeader": "client",
    "ResetOffsetRequestHeader": "client",
    "GetConsumerRunningInfoRequestHeader": "client",
    "GetConsumerStatusRequestHeader": "client",
    "ConsumeMessageDirectlyResultRequestHeader": "client",
    "GetConsumerListByGroupRequestHeader": "client",
    "GetConsumerListByGroupResponseHeader": "client",
    "NotifyConsumerIdsChangedRequestHeader": "client",
    "LockBatchMqRequestHeader": "client",
    "UnlockBatchMqRequestHeader": "client",
    "RegisterBrokerRequestHeader": "namesrv",
    "RegisterBrokerResponseHeader": "namesrv",
    "UnRegisterBrokerRequestHeader": "namesrv",
    "QueryDataVersionRequestHeader": "namesrv",
    "QueryDataVersionResponseHeader": "namesrv",
    "GetRouteInfoRequestHeader": "namesrv",
    "PutKVConfigRequestHeader": "namesrv",
    "GetKVConfigRequestHeader": "namesrv",
    "GetKVConfigResponseHeader": "namesrv",
    "DeleteKVConfigRequestHeader": "namesrv",
    "GetKVListByNamespaceRequestHeader": "namesrv",
    "WipeWritePermOfBrokerRequestHeader": "namesrv",
    "WipeWritePermOfBrokerResponseHeader": "namesrv",
    "AddWritePermOfBrokerRequestHeader": "namesrv",
    "AddWritePermOfBrokerResponseHeader": "namesrv",
    "DeleteTopicFromNamesrvRequestHeader": "namesrv",
    "GetTopicsByClusterRequestHeader": "namesrv",
    "CreateTopicRequestHeader": "admin",
    "DeleteTopicRequestHeader": "admin",
    "DeleteSubscriptionGroupRequestHeader": "admin",
    "GetTopicStatsInfoRequestHeader": "admin",
    "GetConsumeStatsRequestHeader": "admin",
    "GetConsumerConnectionListRequestHeader": "admin",
    "GetProducerConnectionListRequestHeader": "admin",
    "GetAllTopicConfigResponseHeader": "admin",
    "GetBrokerConfigResponseHeader": "admin",
    "QueryConsumeTimeSpanRequestHeader": "admin",
    "QueryCorrectionOffsetHeader": "admin",
    "QueryConsumeQueueRequestHeader": "admin",
    "GetAllProducerInfoRequestHeader": "admin",
    "GetBrokerMemberGroupRequestHeader": "controller",
    "AddBrokerRequestHeader": "controller",
    "RemoveBrokerRequestHeader": "controller",
    "BrokerHeartbeatRequestHeader": "controller",
    "NotifyMinBrokerIdChangeRequestHeader": "controller",
    "ExchangeHAInfoRequestHeader": "controller",
    "ExchangeHAInfoResponseHeader": "controller",
    "ResetMasterFlushOffsetHeader": "controller",
    "AlterSyncStateSetRequestHeader": "controller",
    "AlterSyncStateSetResponseHeader": "controller",
    "ElectMasterRequestHeader": "controller",
    "ElectMasterResponseHeader": "controller",
    "RegisterBrokerToControllerRequestHeader": "controller",
    "RegisterBrokerToControllerResponseHeader": "controller",
    "GetReplicaInfoRequestHeader": "controller",
    "GetReplicaInfoResponseHeader": "controller",
    "GetMetaDataResponseHeader": "controller",
    "GetSyncStateDataRequest": "controller",
    "NotifyBrokerRoleChangedRequestHeader": "controller",
    "CleanControllerBrokerDataRequestHeader": "controller",
    "GetNextBrokerIdRequestHeader": "controller",
    "GetNextBrokerIdResponseHeader": "controller",
    "ApplyBrokerIdRequestHeader": "controller",
    "ApplyBrokerIdResponseHeader": "controller",
    "REQUEST_HEADERS": "registry",
    "RESPONSE_HEADERS": "registry",
    "RESPONSE_HEADER_CODES": "registry",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"._headers.{home}", __package__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_HOMES})
