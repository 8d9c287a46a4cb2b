# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Normalisation rules: what a replay does not compare, or compares loosely, and why.

An answer is compared with the recorded one field by field: ``code``, ``flag``, ``language``,
``serializeType``, ``remark``, every ext field, and the body, decoded by its kind (JSON, Java
properties text, stored messages, or bytes). Before that, the target's addresses are written back
as the recorded ones (the replay maps recorded server ports to target addresses, and answers
name the target's own). What varies on its own — timestamps, offsets in a store, message ids,
data versions, statistics — is listed in a rules file (YAML), each rule with the reason::

    version: 1
    header: [version]                      # header fields not compared, for every answer
    rules:
      - name: send answers
        codes: [10, 310, 320]              # the request codes whose answers the rule covers
        ext: [msgId, queueOffset]          # ext fields whose values are not compared (presence is)
        why: the message's place in the target's store
      - name: runtime info
        codes: [28]
        body: json                         # json | properties | messages | bytes | ignore
        values: ["table.*"]                # body paths whose values are not compared (fnmatch)
        paths: ["table.commitLogDiskRatio_*"]   # body paths not compared at all (not even present)
        why: statistics of the moment
      - name: pulled messages
        codes: [11]
        body: messages
        values: ["[*].physicalOffset", "[*].storeTimestamp"]
        why: where and when the target stored them
      - name: sync state members
        codes: [1006]
        unordered: ["inSyncStateTable.*.inSyncMembers"]   # lists compared as sets
        why: a HashSet of addresses
      - name: refusal with disk figures
        codes: [10]
        remark: ['\\[[^\\]]*\\]']          # regexes replaced before the remarks are compared
        why: …

Paths name JSON members with dots and list items with ``[n]``; in a rule, ``*`` matches any key
and ``[*]`` any index, and a path covers everything below it. Under ``values`` (and for ``ext``)
members and list lengths are still compared, so a missing or extra field is a difference; under
``paths`` nothing is. The shipped
defaults are ``conformance/replay/rules.yaml``; ``--rules FILE`` adds a file's rules to them.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from wire import RemotingCommand, WireError

__all__ = ["BODY_KINDS", "DEFAULT_RULES", "Diff", "Rule", "RuleError", "Rules", "body_kind", "compare",
           "covered", "decode_body", "load_rules", "substitute", "volatile_rules"]

DEFAULT_RULES = Path(__file__).with_name("rules.yaml")
BODY_KINDS = ("json", "properties", "messages", "bytes", "ignore")
HEADER_FIELDS = ("code", "flag", "language", "version", "serializeType", "remark")


class RuleError(ValueError):
    """A rules file that cannot be used (the message names the file and the rule)."""


@dataclass(frozen=True)
class Rule:
    name: str
    why: str
    codes: frozenset[int] | None = None
    ext: tuple[str, ...] = ()
    body: str | None = None
    paths: tuple[str, ...] = ()
    values: tuple[str, ...] = ()
    unordered: tuple[str, ...] = ()
    remark: tuple[re.Pattern[str], ...] = ()

    def applies(self, code: int) -> bool:
        return self.codes is None or code in self.codes


@dataclass(frozen=True)
class Rules:
    rules: tuple[Rule, ...] = ()
    header: frozenset[str] = frozenset()
    sources: tuple[str, ...] = ()

    def for_code(self, code: int) -> list[Rule]:
        return [r for r in self.rules if r.applies(code)]

    def merged(self, other: Rules) -> Rules:
        return Rules(self.rules + other.rules, self.header | other.header, self.sources + other.sources)


@dataclass(frozen=True)
class Diff:
    """One field that differs: its path (``code``, ``ext.queueId``, ``body.queueDatas[0].perm``),
    and the recorded and replayed values."""

    path: str
    recorded: Any
    got: Any

    def __str__(self) -> str:
        return f"{self.path}: recorded {_short(self.recorded)}, got {_short(self.got)}"


def _short(v: Any, limit: int = 80) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[:limit - 1] + "…"


# ---------------------------------------------------------------------------- loading


def _rule(item: Any, where: str) -> Rule:
    if not isinstance(item, dict):
        raise RuleError(f"{where}: a rule is a mapping")
    unknown = set(item) - {"name", "why", "codes", "ext", "body", "paths", "values", "unordered", "remark"}
    if unknown:
        raise RuleError(f"{where}: unknown keys {sorted(map(str, unknown))}")
    why = item.get("why")
    if not isinstance(why, str) or not why.strip():
        raise RuleError(f"{where}: every rule says why (the 'why' key)")
    codes = item.get("codes")
    if codes is not None and (not isinstance(codes, list) or not all(isinstance(c, int) for c in codes)):
        raise RuleError(f"{where}: 'codes' is a list of request codes")
    body = item.get("body")
    if body is not None and body not in BODY_KINDS:
        raise RuleError(f"{where}: 'body' must be one of {', '.join(BODY_KINDS)}")
    lists = {}
    for key in ("ext", "paths", "values", "unordered", "remark"):
        value = item.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise RuleError(f"{where}: '{key}' is a list of strings")
        lists[key] = value
    try:
        remark = tuple(re.compile(p) for p in lists["remark"])
    except re.error as exc:
        raise RuleError(f"{where}: bad remark pattern: {exc}") from None
    return Rule(str(item.get("name") or where), " ".join(why.split()),
                None if codes is None else frozenset(codes), tuple(lists["ext"]), body, tuple(lists["paths"]),
                tuple(lists["values"]), tuple(lists["unordered"]), remark)


def load_rules(path: str | Path | None = None) -> Rules:
    """Read a rules file (default: the shipped ``rules.yaml``)."""
    import yaml

    p = Path(path) if path is not None else DEFAULT_RULES
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise RuleError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except yaml.YAMLError as exc:
        raise RuleError(f"{p}: not YAML: {exc}") from None
    if not isinstance(doc, dict) or doc.get("version") != 1:
        raise RuleError(f"{p}: not a rules file (version: 1 and a 'rules' list)")
    header = doc.get("header", [])
    if not isinstance(header, list) or set(header) - set(HEADER_FIELDS):
        raise RuleError(f"{p}: 'header' lists header fields among {', '.join(HEADER_FIELDS)}")
    items = doc.get("rules") or []
    if not isinstance(items, list):
        raise RuleError(f"{p}: 'rules' is a list")
    return Rules(tuple(_rule(item, f"{p}: rule {n}") for n, item in enumerate(items, 1)), frozenset(header),
                 (str(p),))


# ---------------------------------------------------------------------------- bodies


def body_kind(code: int, rules: Iterable[Rule], data: bytes | None) -> str:
    for r in rules:
        if r.body is not None:
            return r.body
    if not data:
        return "bytes"
    try:
        _json(data)
    except (WireError, ValueError):
        return "bytes"
    return "json"


def _json(data: bytes) -> Any:
    from wire import fastjson

    return _plain(fastjson.loads(data, what="body"))


def _plain(v: Any) -> Any:
    if isinstance(v, Mapping):
        return {(k if isinstance(k, str) else json.dumps(_plain(k), sort_keys=True, default=str)): _plain(x)
                for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_plain(x) for x in v]
    if type(v).__name__ == "Decimal":
        return int(v) if v == v.to_integral_value() else float(v)
    return v


def decode_body(kind: str, data: bytes | None) -> Any:
    """The body as plain data for comparison; raises :class:`wire.WireError` or ``ValueError``."""
    if kind == "json":
        return _json(data or b"")
    if kind == "properties":
        from wire.bodies import decode_properties

        return dict(decode_properties(data or b""))
    if kind == "messages":
        from wire.message import decode_messages

        return [_message(m) for m in decode_messages(data or b"")]
    return (data or b"").hex()


def _message(m: Any) -> dict[str, Any]:
    return {"topic": m.topic, "body": bytes(m.body).decode("utf-8", "replace"), "queueId": m.queue_id,
            "queueOffset": m.queue_offset, "flag": m.flag, "sysFlag": m.sys_flag,
            "reconsumeTimes": m.reconsume_times, "properties": dict(m.properties),
            "physicalOffset": m.physical_offset, "bornTimestamp": m.born_timestamp,
            "storeTimestamp": m.store_timestamp, "bornHost": f"{m.born_host[0]}:{m.born_host[1]}",
            "storeHost": f"{m.store_host[0]}:{m.store_host[1]}", "bodyCRC": m.body_crc,
            "preparedTransactionOffset": m.prepared_transaction_offset}


# ---------------------------------------------------------------------------- comparing


@functools.lru_cache(maxsize=1024)
def _glob(pattern: str) -> re.Pattern[str]:
    """A rule's path glob as a regex: ``[*]`` any list index, ``*`` any run of characters, and
    everything below the path too."""
    parts = []
    for piece in re.split(r"(\[\*\]|\*)", pattern):
        if piece == "[*]":
            parts.append(r"\[\d+\]")
        elif piece == "*":
            parts.append(r".*?")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts) + r"(?:[.\[].*)?")


def covered(path: str, globs: Iterable[str]) -> bool:
    """Whether a rule path glob covers ``path`` (see :func:`_glob`)."""
    return any(_glob(g).fullmatch(path) for g in globs)


def _walk(a: Any, b: Any, path: str, ignored: tuple[str, ...], values: tuple[str, ...],
          out: list[Diff]) -> None:
    """Append to ``out`` where ``b`` differs from ``a``: paths in ``ignored`` are skipped whole;
    under paths in ``values`` members must be present on both sides but their values may differ."""
    if path and covered(path, ignored):
        return
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            sub = f"{path}.{k}" if path else str(k)
            if k not in a or k not in b:
                if not covered(sub, ignored):
                    out.append(Diff(sub, a.get(k, "<absent>"), b.get(k, "<absent>")))
            else:
                _walk(a[k], b[k], sub, ignored, values, out)
        return
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            out.append(Diff(f"{path}.length" if path else "length", len(a), len(b)))
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            _walk(x, y, f"{path}[{i}]", ignored, values, out)
        return
    if a != b and not covered(path, values):
        out.append(Diff(path, a, b))


def substitute(text: str, addresses: Mapping[str, str]) -> str:
    """``text`` with each whole ``host:port`` of ``addresses`` replaced by its value (a port is
    never matched as a prefix of a longer one)."""
    if not addresses or ":" not in text:
        return text
    rx = re.compile("|".join(rf"(?<![\w.]){re.escape(a)}(?!\d)" for a in sorted(addresses, key=len,
                                                                                reverse=True)))
    return rx.sub(lambda m: addresses[m.group(0)], text)


def _sorted_lists(value: Any, path: str, globs: tuple[str, ...]) -> Any:
    """``value`` with the lists at ``globs`` sorted (Java sets whose iteration order follows hash
    codes of values that differ from one installation to the next, such as addresses)."""
    if isinstance(value, dict):
        return {k: _sorted_lists(v, f"{path}.{k}", globs) for k, v in value.items()}
    if isinstance(value, list):
        items = [_sorted_lists(v, f"{path}[{i}]", globs) for i, v in enumerate(value)]
        if any(_glob(g).fullmatch(path) for g in globs):
            items.sort(key=lambda v: json.dumps(v, sort_keys=True, default=str))
        return items
    return value


def _readdress(value: Any, addresses: Mapping[str, str]) -> Any:
    """``value`` with every target address replaced by the recorded one it stands for."""
    if not addresses:
        return value
    if isinstance(value, str):
        return substitute(value, addresses)
    if isinstance(value, dict):
        return {_readdress(k, addresses): _readdress(v, addresses) for k, v in value.items()}
    if isinstance(value, list):
        return [_readdress(v, addresses) for v in value]
    return value


def compare(code: int, recorded: RemotingCommand, got: RemotingCommand, rules: Rules, *,
            addresses: Mapping[str, str] | None = None) -> list[Diff]:
    """How ``got`` differs from ``recorded`` (the answers to a request of ``code``) under
    ``rules``; ``addresses`` maps target addresses to the recorded ones they replace."""
    addresses = addresses or {}
    applied = rules.for_code(code)
    out: list[Diff] = []
    header = {
        "code": (recorded.code, got.code), "flag": (recorded.flag, got.flag),
        "language": (recorded.language_name, got.language_name), "version": (recorded.version, got.version),
        "serializeType": (recorded.serialize_type.name, got.serialize_type.name),
    }
    for name, (a, b) in header.items():
        if name not in rules.header and a != b:
            out.append(Diff(name, a, b))
    if "remark" not in rules.header:
        ra, rb = recorded.remark or "", _readdress(got.remark or "", addresses)
        for r in applied:
            for pattern in r.remark:
                ra, rb = pattern.sub("…", ra), pattern.sub("…", rb)
        if ra != rb:
            out.append(Diff("remark", recorded.remark, got.remark))
    ext_values = tuple(f"ext.{e}" for r in applied for e in r.ext)
    _walk({f"ext.{k}": v for k, v in recorded.ext_fields.items()},
          {f"ext.{k}": _readdress(v, addresses) for k, v in got.ext_fields.items()}, "", (), ext_values, out)
    kind = body_kind(code, applied, recorded.body if recorded.body is not None else got.body)
    if kind == "ignore":
        return out
    if (recorded.body is None) != (got.body is None):
        out.append(Diff("body", "<none>" if recorded.body is None else f"{len(recorded.body)} bytes",
                        "<none>" if got.body is None else f"{len(got.body)} bytes"))
        return out
    if recorded.body is None:
        return out
    def under_body(p: str) -> str:
        return f"body{p}" if p.startswith("[") else f"body.{p}"

    paths = tuple(under_body(p) for r in applied for p in r.paths)
    values = tuple(under_body(p) for r in applied for p in r.values)
    unordered = tuple(under_body(p) for r in applied for p in r.unordered)
    try:
        a = decode_body(kind, recorded.body)
    except (WireError, ValueError) as exc:
        a = f"<undecodable recorded body: {exc}>"
    try:
        b = _readdress(decode_body(kind, got.body), addresses)
    except (WireError, ValueError) as exc:
        out.append(Diff("body", f"a {kind} body", f"<undecodable: {exc}>"))
        return out
    if unordered:
        a, b = _sorted_lists(a, "body", unordered), _sorted_lists(b, "body", unordered)
    before = len(out)
    _walk({"body": a}, {"body": b}, "", paths, values, out)
    if kind == "bytes" and len(out) > before:
        out[before:] = [Diff("body", f"{len(recorded.body)} bytes", f"{len(got.body or b'')} bytes")]
    return out


def volatile_rules(diffs: Mapping[int, Iterable[Diff]], why: str) -> dict[str, Any]:
    """A rules document (for YAML) that would have ignored ``diffs`` (request code → differences
    seen between two replays of the same capture against one target): ``--learn-volatile``."""
    rules: list[dict[str, Any]] = []
    for code in sorted(diffs):
        ext: set[str] = set()
        paths: set[str] = set()
        header: set[str] = set()
        for d in diffs[code]:
            if d.path.startswith("ext."):
                ext.add(d.path[4:])
            elif d.path.startswith("body"):
                rest = re.sub(r"\[\d+\]", "[*]", d.path[4:]).lstrip(".")
                rest = re.sub(r"\.length$", "", rest)
                paths.add(rest or "*")
            else:
                header.add(d.path)
        rule: dict[str, Any] = {"name": f"learnt for request code {code}", "codes": [code]}
        if ext:
            rule["ext"] = sorted(ext)
        if paths:
            rule["values"] = sorted(paths)
        if header - {"remark"}:
            fields = ", ".join(sorted(header))
            rule["name"] += f" (header fields {fields} varied too: not ignorable by a rule)"
        if "remark" in header:
            rule["remark"] = [".*"]
        rule["why"] = why
        rules.append(rule)
    return {"version": 1, "rules": rules}

