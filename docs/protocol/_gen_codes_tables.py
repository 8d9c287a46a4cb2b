# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Regenerate the big tables of ``docs/protocol/codes.md``.

Usage: ``python docs/protocol/_gen_codes_tables.py [--tsv CODES_TSV] [--check]``

Request and response codes come from ``codes.tsv`` (default ``../shared/protocol/codes.tsv``,
columns ``kind, code, name, since``). Language codes and version ordinals come from
``wire.codes``, which is itself generated from the same table. Each table replaces the text
between ``<!-- generated:NAME begin -->`` and ``<!-- generated:NAME end -->`` in ``codes.md``;
the prose around the markers is left alone. ``--check`` exits 1 when ``codes.md`` is stale.
"""

from __future__ import annotations

import argparse
import csv
import re
import sys
from collections.abc import Callable
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
DEFAULT_TSV = ROOT.parent / "shared" / "protocol" / "codes.tsv"
TARGET = HERE / "codes.md"

# Request-code areas by value range: (low, high, label). First match wins.
AREAS = [
    (10, 16, "broker: messages and offsets"),
    (17, 28, "broker: admin"),
    (29, 46, "broker: messages, offsets, clients"),
    (47, 47, "broker: client config"),
    (50, 54, "broker: ACL (old)"),
    (60, 61, "broker: timer"),
    (100, 106, "name server"),
    (200, 225, "admin (broker and name server)"),
    (300, 329, "admin (broker and name server)"),
    (343, 370, "broker: 5.x admin and messages"),
    (400, 402, "broker: assignment / request mode"),
    (513, 513, "static topics"),
    (901, 908, "broker group and HA"),
    (1001, 1013, "controller"),
    (2001, 2004, "cold data"),
    (3001, 3010, "auth (5.3 ACL 2.0)"),
    (200050, 200151, "POP consumption"),
]

# Facts a single "since" column cannot hold (see the prose of codes.md for sources).
REQUEST_NOTES = {
    50: "removed in 5.3.3",
    51: "removed in 5.3.3",
    52: "removed in 5.3.3",
    53: "removed in 5.3.3",
    54: "absent in 4.9.8; present 5.0.0 – 5.3.2; removed in 5.3.3",
    15: "usually sent oneway",
    40: "broker → client, oneway",
    904: "broker → controller, oneway",
    1008: "controller → broker, oneway",
}
RESPONSE_NOTES = {
    209: "two names for one value in 5.0.0 – 5.3.2; the ACL name is gone in 5.3.3",
    210: "two names for one value in 5.0.0 – 5.3.2; the ACL name is gone in 5.3.3",
    211: "two names for one value in 5.0.0 – 5.3.2; the ACL name is gone in 5.3.3",
    1500: "sent only to requests whose version is above 475 (V5_3_1)",
    2010: "5.0.0 – 5.1.0: CONTROLLER_ALTER_SYNC_STATE_SET_FAILED",
    2011: "5.0.0 – 5.1.0: CONTROLLER_ELECT_MASTER_FAILED",
    2012: "5.0.0 – 5.1.0: CONTROLLER_REGISTER_BROKER_FAILED; from 5.1.1: CONTROLLER_ELECT_MASTER_FAILED",
    2013: "was 2010 in 5.0.0 – 5.1.0",
}
INT16 = range(-(2**15), 2**15)

# Releases whose ordinals are worth a row: every 4.x/5.x release tag upstream, plus the 3.x
# versions that peers in our captures announce.
RELEASES = [
    "V3_0_11", "V3_1_8", "V3_4_9",
    "V4_0_0", "V4_1_0", "V4_2_0", "V4_3_0", "V4_3_1", "V4_3_2", "V4_4_0", "V4_5_0", "V4_5_1",
    "V4_5_2", "V4_6_0", "V4_6_1", "V4_7_0", "V4_7_1", "V4_8_0",
    "V4_9_0", "V4_9_1", "V4_9_2", "V4_9_3", "V4_9_4", "V4_9_5", "V4_9_6", "V4_9_7", "V4_9_8",
    "V5_0_0", "V5_1_0", "V5_1_1", "V5_1_2", "V5_1_3", "V5_1_4", "V5_2_0", "V5_3_0", "V5_3_1",
    "V5_3_2", "V5_3_3",
]
VERSION_NOTES = {
    "V3_0_11": "REGISTER_BROKER uses RegisterBrokerBody from here on",
    "V3_1_8": "sent by the C++ client (rocketmq-client-cpp)",
    "V3_4_9": "sent by ali-ons 3.12",
    "V4_4_0": "the Java clients of the deepflow captures",
    "V4_9_4": "route answers switch to standard JSON from here on",
    "V4_9_8": "our 4.9.8 captures; mqctl's default",
    "V5_0_0": "our 5.0.0 captures; compressed register body gains its mapping section",
    "V5_3_1": "GO_AWAY goes only to versions above this",
}


def area(code: int) -> str:
    for low, high, label in AREAS:
        if low <= code <= high:
            return label
    return ""


def read_tsv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh, delimiter="\t"))


def request_table(rows: list[dict[str, str]]) -> str:
    out = ["| code | name | since | area | notes |", "| ---: | --- | --- | --- | --- |"]
    for r in sorted((r for r in rows if r["kind"] == "request"), key=lambda r: int(r["code"])):
        code = int(r["code"])
        notes = [REQUEST_NOTES[code]] if code in REQUEST_NOTES else []
        if code not in INT16:
            notes.append("outside int16: JSON headers only")
        out.append(f"| {code} | {r['name']} | {r['since']} | {area(code)} | {'; '.join(notes)} |")
    return "\n".join(out)


def response_table(rows: list[dict[str, str]]) -> str:
    out = ["| code | name | since | notes |", "| ---: | --- | --- | --- |"]
    resp = sorted((r for r in rows if r["kind"] == "response"), key=lambda r: (int(r["code"]), r["name"]))
    for r in resp:
        code = int(r["code"])
        out.append(f"| {code} | {r['name']} | {r['since']} | {RESPONSE_NOTES.get(code, '')} |")
    return "\n".join(out)


def language_table() -> str:
    from wire.codes import LANGUAGE_SINCE, LanguageCode

    out = ["| byte | name (JSON) | since |", "| ---: | --- | --- |"]
    for lang in LanguageCode:
        out.append(f"| {lang.value} | `{lang.name}` | {LANGUAGE_SINCE[lang.value]} |")
    return "\n".join(out)


def version_table() -> str:
    from wire.codes import MQVersion

    out = ["| version | ordinal | notes |", "| --- | ---: | --- |"]
    for name in RELEASES:
        out.append(f"| {name} | {MQVersion[name].value} | {VERSION_NOTES.get(name, '')} |")
    return "\n".join(out)


def render(text: str, tables: dict[str, Callable[[], str]]) -> str:
    for name, build in tables.items():
        pattern = re.compile(
            rf"(<!-- generated:{name} begin -->\n).*?(<!-- generated:{name} end -->)", re.DOTALL)
        if not pattern.search(text):
            raise SystemExit(f"{TARGET}: markers for {name!r} not found")
        body = build()
        text = pattern.sub(lambda m, b=body: m.group(1) + b + "\n" + m.group(2), text)
    return text


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tsv", type=Path, default=DEFAULT_TSV)
    ap.add_argument("--check", action="store_true", help="exit 1 if codes.md is out of date")
    args = ap.parse_args(argv)
    sys.path.insert(0, str(ROOT))
    rows = read_tsv(args.tsv)
    old = TARGET.read_text(encoding="utf-8")
    new = render(old, {
        "request": lambda: request_table(rows),
        "response": lambda: response_table(rows),
        "language": language_table,
        "version": version_table,
    })
    if args.check:
        if new != old:
            print(f"{TARGET} is out of date; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    TARGET.write_text(new, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
