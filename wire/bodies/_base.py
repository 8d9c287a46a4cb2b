# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The machinery every JSON body shares: property kinds, the :class:`JsonBody` base, errors.

Theory of operation
-------------------
RocketMQ's bodies are Java beans written by fastjson (``RemotingSerializable.encode``). A bean's
JSON object holds one property per getter, **sorted by name**, nulls left out; enums by name;
maps in the map's iteration order (HashMap order: we keep the order we decoded, or the caller's);
``Long``/``Integer`` map keys bare; object map keys inline (:mod:`wire.fastjson`).

Each body here is a frozen dataclass whose fields are declared with :func:`prop`: the Java/JSON
property name and a *kind* that says how to read and write the value. Reading is as lenient as
fastjson's ``JavaBeanDeserializer``: any key order; a key that matches no property exactly is
matched ignoring case, ``_`` and ``-`` (fastjson's ``smartMatch``, also an ``is`` prefix for
booleans); numbers given as strings, strings given as numbers, enums given by name or by
ordinal (the C++ client sends ordinals) are coerced as Java would. Unknown properties are kept
in ``extra`` and written back, so a body from a newer version survives a decode/encode round
trip. Anything that cannot be read raises :class:`wire.DecodeError` whose ``field`` is the JSON
path, e.g. ``brokerDatas[0].brokerAddrs[0]``.

A field whose Java type is primitive has a non-``None`` default (Java's initial value) and is
always written. Properties that only newer versions have (``stateVersion``,
``enableActingMaster``, ``onlyThisBroker``, …) default to ``None``, meaning "not carried": the
4.9.x shape then encodes byte for byte as 4.9.x does.
"""

from __future__ import annotations

import dataclasses
import enum
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from decimal import Decimal, InvalidOperation
from typing import Any, Self

from .. import fastjson
from ..errors import EXCERPT_CHARS, DecodeError, EncodeError, clipped, excerpt
from ..fastjson import FrozenObject, java_string_order

__all__ = [
    "BOOL",
    "DOUBLE",
    "INT",
    "INT_KEY",
    "LONG",
    "LONG_KEY",
    "RAW",
    "STR",
    "STR_KEY",
    "STR_LIST",
    "STR_MAP",
    "Bool",
    "Double",
    "EnumName",
    "IntKey",
    "Integer",
    "JsonBody",
    "Kind",
    "Map",
    "Obj",
    "Raw",
    "Seq",
    "Str",
    "StrKey",
    "body_props",
    "join",
    "prop",
    "type_error",
    "utf8",
]

_INT_TEXT = re.compile(r"[+-]?[0-9]+")
_NUMBER_TEXT = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")


def join(path: str, key: object) -> str:
    """``path`` extended by an object property or map key (JSON-path style)."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    if isinstance(key, str) and len(key) > EXCERPT_CHARS:
        return f"{path}[{excerpt(key)}]"  # a peer's key is quoted, never echoed whole
    if isinstance(key, str) and (key.isidentifier() or not path):
        return f"{path}.{key}" if path else key
    return f"{path}[{fastjson.dumps(key) if isinstance(key, str) else excerpt(key)}]"


def _describe(value: object) -> str:
    if isinstance(value, Mapping):
        return "an object"
    if isinstance(value, (list, tuple)):
        return "an array"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, Decimal, float)):
        return f"the number {excerpt(value)}"
    if isinstance(value, str):
        return f"the string {value[:40]!r}"
    return "null" if value is None else type(value).__name__


def type_error(path: str, expected: str, value: object) -> DecodeError:
    found = _describe(value)
    return DecodeError(f"{path or 'body'}: expected {expected}, found {found}", field=path or None,
                       expected=expected, found=found)


# =================================================================== kinds


class Kind:
    """How one property is read from a decoded JSON value and written back."""

    __slots__ = ()
    #: a short description for error messages
    expected = "a value"

    def load(self, value: Any, path: str) -> Any:
        raise NotImplementedError

    def dump(self, value: Any, std: bool) -> Any:
        return value

    def sort_key(self, value: Any) -> Any:
        """Java's natural order of a map key of this kind (MapSortField), or None if unordered."""
        return None


class Str(Kind):
    """``String``. Numbers and booleans are taken as their text (fastjson ``castToString``)."""

    __slots__ = ()
    expected = "a string"

    def load(self, value: Any, path: str) -> Any:
        if value is None or isinstance(value, str):
            return value
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, (int, Decimal)):
            return str(value)
        raise type_error(path, self.expected, value)

    def sort_key(self, value: Any) -> Any:
        return java_string_order(value)


class Integer(Kind):
    """``int`` (32 bits) or ``long`` (64 bits). Strings of digits and fractions are coerced."""

    __slots__ = ("bits", "expected")

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.expected = f"a {bits}-bit integer"

    def load(self, value: Any, path: str) -> Any:
        if value is None:
            return None
        if isinstance(value, bool):  # fastjson castToInt: true -> 1, false -> 0
            number = int(value)
        elif isinstance(value, int):
            number = value
        elif isinstance(value, Decimal):
            number = self._truncate(value, path)
        elif isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
            try:
                number = self._truncate(Decimal(value.strip()), path)
            except InvalidOperation:
                raise type_error(path, self.expected, value) from None
        else:
            raise type_error(path, self.expected, value)
        limit = 1 << (self.bits - 1)
        if not -limit <= number < limit:
            raise DecodeError(f"{path}: {excerpt(number)} does not fit in {self.bits} bits", field=path,
                              expected=self.expected, found=clipped(number))
        return number

    def _truncate(self, value: Decimal, path: str) -> int:
        # BigDecimal.intValue/longValue truncates; huge exponents are out of range before int()
        if not value.is_finite() or value.adjusted() > 40:
            raise DecodeError(f"{path}: {excerpt(str(value))} does not fit in {self.bits} bits", field=path,
                              expected=self.expected, found=clipped(str(value)))
        return int(value)

    def sort_key(self, value: Any) -> Any:
        return value


class Double(Kind):
    """``double``: written in Java's ``Double.toString`` layout (see :func:`wire.fastjson.java_double`)."""

    __slots__ = ()
    expected = "a number"

    def load(self, value: Any, path: str) -> Any:
        if value is None:
            return None
        try:
            if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
                number = float(value)
            elif isinstance(value, str) and _NUMBER_TEXT.fullmatch(value.strip()):
                number = float(value.strip())
            else:
                raise type_error(path, self.expected, value)
        except OverflowError:
            raise type_error(path, "a finite double", value) from None
        if number in (float("inf"), float("-inf")):
            raise type_error(path, "a finite double", value)
        return number

    def dump(self, value: Any, std: bool) -> Any:
        return float(value)


class Bool(Kind):
    """``boolean``. Also 0/1 and the strings "true"/"false"/"1"/"0" (fastjson ``castToBoolean``)."""

    __slots__ = ()
    expected = "a boolean"

    def load(self, value: Any, path: str) -> Any:
        if value is None or isinstance(value, bool):
            return value
        if isinstance(value, (int, Decimal)) and value in (0, 1):
            return value == 1
        if isinstance(value, str) and value.lower() in ("true", "false", "1", "0"):
            return value.lower() in ("true", "1")
        raise type_error(path, self.expected, value)


class EnumName(Kind):
    """A Java enum, written by name. Read from the name or the ordinal; unknown values are kept."""

    __slots__ = ("cls", "members", "expected")

    def __init__(self, cls: type[enum.IntEnum]) -> None:
        self.cls = cls
        self.members = list(cls)
        self.expected = f"a {cls.__name__} name or ordinal"

    def load(self, value: Any, path: str) -> Any:
        if value is None:
            return None
        if isinstance(value, str):
            return self.cls.__members__.get(value, value)
        if isinstance(value, int) and not isinstance(value, bool):
            # fastjson's EnumDeserializer takes a number as the ordinal
            return self.members[value] if 0 <= value < len(self.members) else value
        raise type_error(path, self.expected, value)

    def dump(self, value: Any, std: bool) -> Any:
        return value.name if isinstance(value, self.cls) else value


class Seq(Kind):
    """``List``/``Set``: a JSON array, kept as a tuple in the order received."""

    __slots__ = ("item", "expected")

    def __init__(self, item: Kind) -> None:
        self.item = item
        self.expected = "an array"

    def load(self, value: Any, path: str) -> Any:
        if value is None:
            return None
        if not isinstance(value, list):
            raise type_error(path, self.expected, value)
        return tuple(self.item.load(v, f"{path}[{i}]") for i, v in enumerate(value))

    def dump(self, value: Any, std: bool) -> Any:
        return [None if v is None else self.item.dump(v, std) for v in value]


class Map(Kind):
    """``Map<K, V>``: a JSON object kept as a dict in the order received; null values dropped."""

    __slots__ = ("key", "value", "expected")

    def __init__(self, key: Kind, value: Kind) -> None:
        self.key = key
        self.value = value
        self.expected = "an object"

    def load(self, value: Any, path: str) -> Any:
        if value is None:
            return None
        if not isinstance(value, Mapping):
            raise type_error(path, self.expected, value)
        out: dict[Any, Any] = {}
        for k, v in value.items():
            here = join(path, k) if isinstance(k, (str, int)) else f"{path}[{fastjson.dumps(k)}]"
            key = self.key.load(k, here)
            item = self.value.load(v, here)
            if key is not None and item is not None:
                out[key] = item
        return out

    def dump(self, value: Any, std: bool) -> Any:
        items = [(self.key.dump(k, std), self.value.dump(v, std)) for k, v in value.items()]
        if std:
            # MapSortField: a HashMap/ConcurrentHashMap is copied into a TreeMap (natural key order)
            order = [self.key.sort_key(k) for k in value]
            if None not in order:
                items = [item for _, item in sorted(zip(order, items, strict=True), key=lambda p: p[0])]
        return dict(items)


class Obj(Kind):
    """A nested bean."""

    __slots__ = ("cls", "expected")

    def __init__(self, cls: type[JsonBody]) -> None:
        self.cls = cls
        self.expected = "an object"

    def load(self, value: Any, path: str) -> Any:
        if value is None:
            return None
        return self.cls.from_json(value, path)

    def dump(self, value: Any, std: bool) -> Any:
        return value.to_json(standard=std)


class Raw(Kind):
    """Any JSON value, kept as decoded (dicts, lists, str, int, Decimal, bool)."""

    __slots__ = ()
    expected = "a JSON value"

    def load(self, value: Any, path: str) -> Any:
        return value


class StrKey(Kind):
    """A ``String`` map key. A bare numeric key becomes its text, as fastjson does."""

    __slots__ = ()
    expected = "a string key"

    def load(self, value: Any, path: str) -> Any:
        if isinstance(value, str):
            return value
        if isinstance(value, (int, Decimal)) and not isinstance(value, bool):
            return str(value)
        raise type_error(path, self.expected, value)

    def sort_key(self, value: Any) -> Any:
        return java_string_order(value)


class IntKey(Kind):
    """A ``Long``/``Integer`` map key: bare in the default form, quoted in the standard form."""

    __slots__ = ("bits", "expected")

    def __init__(self, bits: int) -> None:
        self.bits = bits
        self.expected = f"a {bits}-bit integer key"

    def load(self, value: Any, path: str) -> Any:
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise type_error(path, self.expected, value)
        if isinstance(value, str):
            text = value.strip()
            if not _INT_TEXT.fullmatch(text) or len(text) > 40:
                raise type_error(path, self.expected, value)
            value = int(text)
        limit = 1 << (self.bits - 1)
        if not -limit <= value < limit:
            raise DecodeError(f"{path}: key {excerpt(value)} does not fit in {self.bits} bits", field=path,
                              expected=self.expected, found=clipped(value))
        return value

    def sort_key(self, value: Any) -> Any:
        return value


# =================================================================== beans

_PROPS: dict[type, tuple[_Prop, ...]] = {}


@dataclass(frozen=True, slots=True)
class _Prop:
    name: str
    attr: str
    kind: Kind
    smart: str
    is_bool: bool


def _smart(name: str) -> str:
    # fastjson TypeUtils.fnv1a_64_extract: lower case, '_' and '-' removed
    return name.lower().replace("_", "").replace("-", "")


def prop(name: str, kind: Kind, default: Any = None, *,
         factory: Callable[[], Any] | None = None) -> Any:
    """Declare a body field: its JSON property ``name``, its :class:`Kind` and its default."""
    meta = {"json": name, "kind": kind}
    if factory is not None:
        return field(default_factory=factory, metadata=meta)
    return field(default=default, metadata=meta)


def body_props(cls: type[JsonBody]) -> tuple[_Prop, ...]:
    """The JSON properties of a body class, sorted as fastjson writes them."""
    props = _PROPS.get(cls)
    if props is None:
        found = [
            _Prop(f.metadata["json"], f.name, f.metadata["kind"], _smart(f.metadata["json"]),
                  isinstance(f.metadata["kind"], Bool))
            for f in dataclasses.fields(cls) if "json" in f.metadata
        ]
        props = _PROPS[cls] = tuple(sorted(found, key=lambda p: java_string_order(p.name)))
    return props


def utf8(text: str, what: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (which Java would turn into '?') is an EncodeError."""
    try:
        return text.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise EncodeError(f"{what}: a string holds a lone surrogate ({text[exc.start:exc.end]!r})") from None


_EMPTY = FrozenObject({})


def _empty() -> FrozenObject:
    # immutable, so one instance serves every body without extra properties (building one per
    # body cost more than the rest of a small body's construction)
    return _EMPTY


def _extra_key(k: Any) -> tuple[int, Any]:
    return (0, java_string_order(k)) if isinstance(k, str) else (1, 0)


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonBody:
    """Base of the fastjson bodies: ``decode(data)`` / ``encode(standard=False)``.

    ``extra`` holds properties this class does not know, as decoded; they are written back.
    """

    extra: Mapping[Any, Any] = field(default_factory=_empty, repr=False)

    @classmethod
    def decode(cls, data: bytes | bytearray | memoryview | str) -> Self:
        """Read the body from fastjson text (standard or fastjson's own form)."""
        return cls.from_json_checked(fastjson.loads(data, what=cls.__name__))

    @classmethod
    def from_json_checked(cls, value: Any) -> Self:
        """:meth:`from_json` for untrusted values: very deep ``extra`` values give DecodeError too."""
        try:
            return cls.from_json(value, "")
        except RecursionError:
            raise DecodeError(f"{cls.__name__}: nesting too deep", field=cls.__name__) from None

    def encode(self, *, standard: bool = False) -> bytes:
        """Write the body as fastjson does; ``standard`` selects RocketMQ's standard-JSON features."""
        return utf8(fastjson.dumps(self.to_json(standard=standard), standard=standard), type(self).__name__)

    @classmethod
    def from_json(cls, value: Any, path: str = "") -> Self:
        """Build from an already decoded JSON value (``path`` names it in errors)."""
        if not isinstance(value, Mapping):
            raise type_error(path, f"a JSON object ({cls.__name__})", value)
        props = body_props(cls)
        exact = {p.name: p for p in props}
        kwargs: dict[str, Any] = {}
        extra: dict[Any, Any] = {}
        for k, v in value.items():
            p = exact.get(k) if isinstance(k, str) else None
            if p is None and isinstance(k, str):
                p = _smart_match(props, k, kwargs)
            if p is None:
                extra[k] = v
                continue
            loaded = p.kind.load(v, join(path, k))
            if loaded is not None:
                kwargs[p.attr] = loaded
        if extra:
            kwargs["extra"] = FrozenObject(extra)
        return cls(**kwargs)

    def to_json(self, *, standard: bool = False) -> dict[Any, Any]:
        """The JSON object fastjson would write (property order included), as plain values."""
        out: list[tuple[Any, Any]] = []
        for p in body_props(type(self)):
            value = getattr(self, p.attr)
            if value is not None:
                out.append((p.name, p.kind.dump(value, standard)))
        if self.extra:
            out.extend(self.extra.items())
            out.sort(key=lambda kv: _extra_key(kv[0]))
        return dict(out)


def _smart_match(props: Iterable[_Prop], key: str, taken: Mapping[str, Any]) -> _Prop | None:
    smart = _smart(key)
    for p in props:
        if p.smart == smart and p.attr not in taken:
            return p
    if key.startswith("is"):
        smart = _smart(key[2:])
        for p in props:
            if p.is_bool and p.smart == smart and p.attr not in taken:
                return p
    return None


# Shared kind instances.
STR = Str()
INT = Integer(32)
LONG = Integer(64)
DOUBLE = Double()
BOOL = Bool()
RAW = Raw()
STR_KEY = StrKey()
INT_KEY = IntKey(32)
LONG_KEY = IntKey(64)
STR_LIST = Seq(STR)
STR_MAP = Map(STR_KEY, STR)
