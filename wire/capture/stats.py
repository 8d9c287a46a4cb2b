# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Statistics over decoded rows: counts per request and response code, conversations, latency
percentiles per request code, HA traffic and decode problems.

:class:`CaptureStats` takes rows one at a time (``add``) and each finished
:class:`~wire.capture.CaptureDecoder` (``add_capture``); :meth:`CaptureStats.report` returns plain
data (dicts, lists, numbers) ready for JSON or for tables. Latencies are kept in compact arrays
and summarised with the nearest-rank percentile.
"""

from __future__ import annotations

import math
from array import array
from collections import Counter
from collections.abc import Iterable
from typing import Any

from ..remoting import FLAG_ONEWAY, FLAG_RESPONSE
from .decoder import CaptureDecoder
from .fields import code_name
from .rows import CommandRow, HaRow, ProblemRow, Row

__all__ = ["CaptureStats", "percentile"]

#: problems listed one by one in the report (all are counted)
MAX_LISTED_PROBLEMS = 200


def percentile(sorted_values: array[float] | list[float], p: float) -> float | None:
    """Nearest-rank percentile of an ascending sequence (``None`` when it is empty)."""
    n = len(sorted_values)
    if not n:
        return None
    rank = max(1, math.ceil(p / 100.0 * n))
    return sorted_values[min(rank, n) - 1]


class _CodeStats:
    __slots__ = ("requests", "oneway", "answered", "bytes", "latencies", "responses")

    def __init__(self) -> None:
        self.requests = 0
        self.oneway = 0
        self.answered = 0
        self.bytes = 0
        self.latencies: array[float] = array("d")
        self.responses: Counter[int] = Counter()


class CaptureStats:
    """Accumulates rows from one or more captures (see the module docstring)."""

    def __init__(self) -> None:
        self.files: list[dict[str, Any]] = []
        self.codes: dict[int, _CodeStats] = {}
        self.response_codes: Counter[int] = Counter()
        self.unpaired_responses: Counter[int] = Counter()
        self.commands = 0
        self.requests = 0
        self.responses = 0
        self.ha_frames = 0
        self.ha_types: Counter[str] = Counter()
        self.ha_data = 0
        self.problems: Counter[str] = Counter()
        self.problem_list: list[dict[str, Any]] = []
        self.conversations: list[dict[str, Any]] = []

    def _code(self, code: int) -> _CodeStats:
        s = self.codes.get(code)
        if s is None:
            s = self.codes[code] = _CodeStats()
        return s

    def add_rows(self, rows: Iterable[Row]) -> None:
        """Every row of ``rows``, as :meth:`add` takes them; command rows are counted here directly."""
        add = self.add
        codes = self.codes
        response_codes = self.response_codes
        commands = requests = responses = 0
        try:
            for row in rows:
                if type(row) is not CommandRow:
                    add(row)
                    continue
                ts, _ts_end, _conv, _d, _offset, _frame_no, size, _record, _hl, cmd, req, _number = row
                commands += 1
                flag = cmd.flag
                if flag & FLAG_RESPONSE:
                    responses += 1
                    response_codes[cmd.code] += 1
                    if req is None:
                        self.unpaired_responses[cmd.code] += 1
                        continue
                    s = codes.get(req.command.code)
                    if s is None:
                        s = codes[req.command.code] = _CodeStats()
                    s.answered += 1
                    s.responses[cmd.code] += 1
                    s.latencies.append(ts - req.ts_end)
                    s.bytes += size
                else:
                    requests += 1
                    s = codes.get(cmd.code)
                    if s is None:
                        s = codes[cmd.code] = _CodeStats()
                    s.requests += 1
                    s.bytes += size
                    if flag & FLAG_ONEWAY:
                        s.oneway += 1
        finally:
            self.commands += commands
            self.requests += requests
            self.responses += responses

    def add(self, row: Row) -> None:
        if isinstance(row, CommandRow):
            cmd = row.command
            self.commands += 1
            flag = cmd.flag
            if flag & FLAG_RESPONSE:
                self.responses += 1
                self.response_codes[cmd.code] += 1
                req = row.request
                if req is None:
                    self.unpaired_responses[cmd.code] += 1
                    return
                s = self._code(req.command.code)
                s.answered += 1
                s.responses[cmd.code] += 1
                s.latencies.append(row.ts - req.ts_end)
                s.bytes += row.size
            else:
                self.requests += 1
                s = self._code(cmd.code)
                s.requests += 1
                s.bytes += row.size
                if flag & FLAG_ONEWAY:
                    s.oneway += 1
        elif isinstance(row, HaRow):
            self.ha_frames += 1
            name = type(row.message).__name__
            self.ha_types[name] += 1
            data = getattr(row.message, "data", None)
            if data:
                self.ha_data += len(data)
        elif isinstance(row, ProblemRow):
            self.problems[row.verdict] += 1
            if len(self.problem_list) < MAX_LISTED_PROBLEMS:
                conv = row.conv
                self.problem_list.append({
                    "file": conv.capture if conv is not None else None,
                    "stream": conv.index if conv is not None else None,
                    "record": row.record, "problem": row.verdict, "offset": row.offset, "length": row.length,
                    "message": row.message,
                })

    def add_capture(self, decoder: CaptureDecoder, path: str, size: int | None) -> None:
        """Record a finished capture's totals and conversations."""
        self.files.append({"file": path, "bytes": size, "records": decoder.records,
                           "not_tcp": decoder.not_tcp, "first_ts": decoder.first_ts,
                           "last_ts": decoder.last_ts,
                           "connections": len(decoder.conversations)})
        for c in decoder.conversations:
            self.conversations.append({
                "file": path, "stream": c.index, "client": f"{c.client}:{c.client_port}",
                "server": f"{c.server}:{c.server_port}", "role": c.role, "protocol": c.protocol,
                "ha_variant": c.ha_variant, "frames_c2s": c.frames[0], "frames_s2c": c.frames[1],
                "bytes_c2s": c.bytes[0], "bytes_s2c": c.bytes[1], "first_ts": c.first_ts,
                "last_ts": c.last_ts, "duration": c.last_ts - c.first_ts, "syn": c.syn,
                "problems": c.problems, "missing": c.missing, "unanswered": c.unanswered,
            })

    def report(self) -> dict[str, Any]:
        """Everything as plain data."""
        per_code = []
        for code in sorted(self.codes):
            s = self.codes[code]
            lat = sorted(s.latencies)
            per_code.append({
                "code": code, "name": code_name(code, False), "requests": s.requests, "oneway": s.oneway,
                "answered": s.answered, "unanswered": max(0, s.requests - s.oneway - s.answered),
                "bytes": s.bytes,
                "responses": {code_name(rc, True): n for rc, n in sorted(s.responses.items())},
                "latency_ms": {
                    "p50": _ms(percentile(lat, 50)), "p95": _ms(percentile(lat, 95)),
                    "p99": _ms(percentile(lat, 99)), "max": _ms(lat[-1] if lat else None),
                },
            })
        per_response = [{"code": rc, "name": code_name(rc, True), "responses": n,
                         "unpaired": self.unpaired_responses.get(rc, 0)}
                        for rc, n in sorted(self.response_codes.items())]
        protocols = Counter(c["protocol"] for c in self.conversations)
        return {
            "files": self.files,
            "totals": {
                "records": sum(f["records"] for f in self.files),
                "bytes": sum(f["bytes"] or 0 for f in self.files),
                "connections": len(self.conversations),
                "remoting_connections": protocols.get("remoting", 0),
                "ha_connections": protocols.get("ha", 0),
                "other_connections": protocols.get("other", 0) + protocols.get("unknown", 0),
                "commands": self.commands, "requests": self.requests, "responses": self.responses,
                "ha_frames": self.ha_frames, "ha_data_bytes": self.ha_data,
                "problems": sum(self.problems.values()),
            },
            "requests": per_code,
            "responses": per_response,
            "ha": dict(sorted(self.ha_types.items())),
            "conversations": self.conversations,
            "problems": {"counts": dict(sorted(self.problems.items())), "listed": self.problem_list},
        }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000.0, 3)
