# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Remote-address patterns of ``plain_acl.yml`` (``RemoteAddressStrategyFactory``, 4.9.8).

A pattern is one of:

* blank: matches nothing (the account must sign);
* ``*``, ``*.*.*.*`` or ``*:*:*:*:*:*:*:*``: matches every address;
* a list, ``192.168.0.{1,2}`` or ``10.0.0.1,10.0.0.2``: matches those exact addresses;
* a range, ``192.168.1.*``, ``192.168.*.*`` or ``192.168.1.10-20`` (the first octet after the
  fixed ones that is ``*`` or ``a-b`` is the one compared; what follows it is not looked at), and
  the same with hexadecimal groups for IPv6 (``2001:db8::*``);
* one address, compared exactly (IPv6 in its expanded form).

A pattern that is none of these is a :class:`PatternError` (Java's ``AclException`` at load).
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass

__all__ = ["AddressPattern", "PatternError", "parse_pattern"]


class PatternError(ValueError):
    """A remote-address pattern that does not parse."""


def _ipv4(text: str) -> bool:
    try:
        ipaddress.IPv4Address(text)
    except ValueError:
        return False
    return True


def _ipv6(text: str) -> bool:
    try:
        ipaddress.IPv6Address(text)
    except ValueError:
        return False
    return True


def _expand6(text: str) -> str:
    return ipaddress.IPv6Address(text).exploded.upper()


@dataclass(frozen=True)
class AddressPattern:
    """A parsed pattern; :meth:`matches` takes the peer's address without its port."""

    text: str
    kind: str  # "none", "any", "set", "range4", "range6", "one"
    addresses: frozenset[str] = frozenset()
    head: str = ""
    index: int = 0
    start: int = 0
    end: int = 0

    def matches(self, address: str) -> bool:
        if self.kind == "none":
            return False
        if self.kind == "any":
            return True
        if self.kind == "set":
            return (_expand6(address) if _ipv6(address) else address) in self.addresses
        if self.kind == "one":
            if _ipv4(address):
                return address == self.text
            return _ipv6(address) and _expand6(address) == next(iter(self.addresses))
        if self.kind == "range4" and _ipv4(address) and address.startswith(self.head):
            octet = int(address.split(".")[self.index])
            return self.start <= octet <= self.end
        if self.kind == "range6" and _ipv6(address):
            expanded = _expand6(address)
            if expanded.startswith(self.head):
                group = int(expanded.split(":")[self.index], 16)
                return self.start <= group <= self.end
        return False


def _range(part: str, limit: int, base: int, pattern: str) -> tuple[int, int] | None:
    """``*`` or ``a-b`` as a range, None for a fixed part."""
    part = part.strip()
    if part == "*":
        return 0, limit
    if "-" in part:
        low, _, high = part.partition("-")
        try:
            start, end = int(low, base), int(high, base)
        except ValueError:
            raise PatternError(f"{pattern!r}: {part!r} is not a range") from None
        if part.startswith("-") or not (0 <= start <= end <= limit):
            top = f"{limit:x}" if base == 16 else str(limit)
            raise PatternError(f"{pattern!r}: the range {part!r} is out of 0..{top}")
        return start, end
    return None


def parse_pattern(pattern: str | None) -> AddressPattern:
    """Parse a ``whiteRemoteAddress`` or ``globalWhiteRemoteAddresses`` entry."""
    text = (pattern or "").strip()
    if not text:
        return AddressPattern(text, "none")
    if text in ("*", "*.*.*.*", "*:*:*:*:*:*:*:*"):
        return AddressPattern(text, "any")
    if text.endswith("}"):
        sep = ":" if ":" in text else "."
        head, brace, inner = text.partition("{")
        if not brace or not head.endswith(sep):
            raise PatternError(f"{text!r}: a {{a,b}} list must end the address")
        return _set(text, [head + item.strip() for item in inner[:-1].split(",") if item.strip()])
    if "," in text:
        return _set(text, [item.strip() for item in text.split(",") if item.strip()])
    if "*" in text or "-" in text:
        return _range6(text) if ":" in text else _range4(text)
    if _ipv4(text):
        return AddressPattern(text, "one", frozenset({text}))
    if _ipv6(text):
        return AddressPattern(text, "one", frozenset({_expand6(text)}))
    raise PatternError(f"{text!r} is not an address, list or range")


def _set(text: str, items: list[str]) -> AddressPattern:
    out = set()
    for item in items:
        if _ipv4(item):
            out.add(item)
        elif _ipv6(item):
            out.add(_expand6(item))
        else:
            raise PatternError(f"{text!r}: {item!r} is not an address")
    return AddressPattern(text, "set", frozenset(out))


def _range4(text: str) -> AddressPattern:
    parts = text.split(".")
    if len(parts) != 4:
        raise PatternError(f"{text!r}: an IPv4 range has four parts")
    for i in (1, 2, 3):
        span = _range(parts[i], 255, 10, text)
        if span is not None:
            for fixed in parts[:i]:
                if not fixed.strip().isdigit() or int(fixed) > 255:
                    raise PatternError(f"{text!r}: {fixed!r} is not an octet")
            head = "".join(p.strip() + "." for p in parts[:i])
            return AddressPattern(text, "range4", head=head, index=i, start=span[0], end=span[1])
    raise PatternError(f"{text!r}: the first octet cannot be a range")


def _range6(text: str) -> AddressPattern:
    # as AclUtils.IPv6AddressCheck/v6ipProcess: the range is the last group, or the one before a
    # final '*' ("2::ac5:78:1-200:*"); '::' may stand for the groups in between
    body, trailing = text, 0
    if body.endswith(":*") and "-" in body:
        body, trailing = body[:-2], 1
    fixed, _, last = body.rpartition(":")
    if "*" in fixed:
        raise PatternError(f"{text!r}: '*' must end an IPv6 range")
    span = _range(last, 0xFFFF, 16, text)
    if span is None:
        raise PatternError(f"{text!r} is not an IPv6 range")
    index = 7 - trailing
    try:
        expanded = _expand6(fixed + ":0" * (1 + trailing))
    except ValueError:
        raise PatternError(f"{text!r}: the fixed groups are not an IPv6 prefix") from None
    head = ":".join(expanded.split(":")[:index]) + ":"
    return AddressPattern(text, "range6", head=head, index=index, start=span[0], end=span[1])
