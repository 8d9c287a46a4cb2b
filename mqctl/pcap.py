# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl pcap``: decode captures of RocketMQ traffic, summarise them, record new ones.

Commands stay import-light: :mod:`wire.capture` (and scapy, for pcapng and live capture) is
imported inside the command that needs it.

Output: ``pcap decode`` has its own ``-o/--output`` (``table``, ``jsonl``, ``json``, ``yaml``). When
it is not given, the global ``mqctl -o`` applies (``table`` by default; ``json`` gives one JSON
array, ``yaml`` a YAML list). ``jsonl`` — one JSON object per row, tshark-style field names — exists
only on the command, since it is a streaming form that the other commands have no use for.
``pcap stats`` follows the global ``-o`` (tables, or one JSON/YAML document).

Exit codes: 0; 1 when a file is damaged or not a capture (one line naming the file, the record
and the byte offset), or, with ``--strict``, when the capture has any problem (a gap, bytes that do
not decode, a cut frame); 2 for bad arguments.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import EXIT_FAILURE, CliError, UsageError

if TYPE_CHECKING:
    from wire.capture import PortRoles, Row
    from wire.capture.fields import JsonLines

    from .output import Output
    from .settings import Settings

app = typer.Typer(no_args_is_help=True)

DECODE_FORMATS = ("table", "jsonl", "json", "yaml")
_BATCH = 512


def _settings(ctx: typer.Context) -> Settings:
    from .runner import settings

    return settings(ctx)


def _roles(ports: list[str] | None) -> PortRoles:
    from wire.capture import PortRoles, parse_port_overrides

    try:
        return PortRoles(parse_port_overrides(ports or []))
    except ValueError as exc:
        raise UsageError(str(exc)) from None


@contextmanager
def _progress(out: Output, files: list[Path], *,
              rows_to_stdout: bool = False) -> Iterator[Callable[[int, int], None]]:
    """A bytes-read progress bar on stderr for long runs on a terminal (:mod:`mqctl.progress`);
    ``update(file_index, pos)``."""
    from wire.capture import capture_size

    from .progress import progress

    sizes = [capture_size(f) or 0 for f in files]
    before = [sum(sizes[:i]) for i in range(len(sizes))]
    with progress(out, sum(sizes) or None, "reading", rows_to_stdout=rows_to_stdout) as done:
        yield lambda i, pos: done(before[i] + pos)


def _batches(files: list[Path], roles: PortRoles, update: Callable[[int, int], None],
             decoders: list[Any], damage: list[str]) -> Iterator[tuple[str, list[Row]]]:
    """The rows of every file in the decoder's lists (handed on as they complete when reading a
    pipe). A damaged or cut file gives its rows up to the damage, and its error is added to
    ``damage``; the next files are still read."""
    from wire.capture import CaptureDecoder, CaptureFileError
    from wire.capture.decoder import decode_batches

    for i, f in enumerate(files):
        dec = CaptureDecoder(roles=roles, capture=str(f))
        decoders.append(dec)
        try:
            for rows in decode_batches(f, decoder=dec, on_progress=functools.partial(update, i),
                                       batch=_BATCH):
                yield str(f), rows
        except CaptureFileError as err:
            damage.append(str(err))


def _damaged(damage: list[str]) -> None:
    """End the command with the damage found (exit 1), after its rows have been printed."""
    if damage:
        raise CliError(damage[0] if len(damage) == 1 else f"{damage[0]} (and {len(damage) - 1} more file(s) "
                       "damaged)")


@app.command()
def decode(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(help="pcap or pcapng files (gzip allowed); '-' reads stdin.",
                                                 show_default=False)],
    output: Annotated[str | None, typer.Option(
        "--output", "-o", help="table, jsonl (one JSON object per row), json or yaml. "
        "Default: the global -o (table).")] = None,
    follow: Annotated[int | None, typer.Option(
        "--follow", help="Only the rows of this TCP stream (tcp.stream).")] = None,
    filter_: Annotated[list[str] | None, typer.Option(
        "--filter", "-f", help="NAME=VALUE (or != or ~), all must match; e.g. -f code=105 -f topic=T "
        "or -f 'code=105 topic=T'. Repeatable; values may be comma lists.")] = None,
    fields: Annotated[str | None, typer.Option(
        "--fields", help="Comma-separated field names to show (tshark style, e.g. "
        "rocketmq.code,rocketmq.ext.topic; 'rocketmq.ext.*' for all ext fields). 'list' prints them.")
    ] = None,
    bodies: Annotated[str, typer.Option(
        help="Bodies: none, text, hex or decoded (typed bodies, messages).")] = "none",
    port: Annotated[list[str] | None, typer.Option(
        "--port", help="ROLE=PORT[,PORT]: treat PORT as namesrv, broker, vip, controller, ha, remoting "
        "or other (ignored). Repeatable; adds to the defaults.")] = None,
    strict: Annotated[bool, typer.Option(
        help="Exit 1 when the capture has any problem (gap, undecodable bytes, cut frame).")] = False,
) -> None:
    """One row per remoting command, HA frame or problem, in capture order."""
    settings = _settings(ctx)
    out = settings.output
    if fields == "list":
        _list_fields(out)
        return
    fmt = output or out.format
    if fmt not in DECODE_FORMATS:
        raise UsageError(f"--output must be one of {', '.join(DECODE_FORMATS)}, not {fmt!r}")
    from wire.capture.fields import BODY_MODES

    if bodies not in BODY_MODES:
        raise UsageError(f"--bodies must be one of {', '.join(BODY_MODES)}, not {bodies!r}")
    damage: list[str] = []
    problems = _decode(out, files, fmt=fmt, follow=follow, filters=filter_ or [], fields=fields,
                       bodies=bodies, roles=_roles(port), damage=damage)
    _damaged(damage)
    if problems:
        counts = ", ".join(f"{n} {kind}" for kind, n in sorted(problems.items()))
        if strict:
            raise CliError(f"the capture has problems: {counts}")
        out.warn(f"the capture has problems: {counts} (--strict makes this an error)")


def _list_fields(out: Output) -> None:
    from wire.capture.fields import FIELDS

    out.table(["field", "meaning"], sorted(FIELDS.items()))


def _decode(out: Output, files: list[Path], *, fmt: str, follow: int | None, filters: list[str],
            fields: str | None, bodies: str, roles: PortRoles, damage: list[str]) -> dict[str, int]:
    import shlex

    from wire.capture import ProblemRow
    from wire.capture.fields import DEFAULT_TABLE_FIELDS, compile_filters, display_name, row_fields

    try:
        # one --filter may hold several terms: --filter "code=105 topic=T"
        terms = [t for f in filters for t in shlex.split(f)]
        predicate = compile_filters(terms) if terms else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    names = [display_name(x.strip()) for x in fields.split(",") if x.strip()] if fields else None
    many = len(files) > 1
    problems: dict[str, int] = {}
    decoders: list[Any] = []
    if names is None and fmt == "table":
        # the bodies asked for get a last column of their own (the table's other columns stay aligned)
        names = list(DEFAULT_TABLE_FIELDS) + (["rocketmq.body"] if bodies != "none" else [])
    writer = _writer(out, fmt, names, bodies)
    # jsonl of whole rows is written straight from the row (wire.capture.fields.JsonLines)
    need_fields = predicate is not None or fmt != "jsonl" or names is not None
    if not need_fields and follow is None:
        return _decode_jsonl(out, files, bodies=bodies, roles=roles, many=many, damage=damage)
    try:
        with _progress(out, files, rows_to_stdout=True) as update:
            for capture, rows in _batches(files, roles, update, decoders, damage):
                for row in rows:
                    if isinstance(row, ProblemRow):
                        problems[row.verdict] = problems.get(row.verdict, 0) + 1
                    if follow is not None and (row.conv is None or row.conv.index != follow):
                        continue
                    cap = capture if many else None
                    f = row_fields(row, bodies=bodies, capture=cap) if need_fields else None
                    if predicate is not None and f is not None and not predicate(
                            row, f, functools.partial(row_fields, capture=cap)):
                        continue
                    writer.row(row, f, cap)
                writer.flush()  # what the decoder handed on goes out now (a pipe: as frames complete)
    finally:
        writer.close()
    return problems


def _decode_jsonl(out: Output, files: list[Path], *, bodies: str, roles: PortRoles,
                  many: bool, damage: list[str]) -> dict[str, int]:
    """Every row as a JSON line: the bulk path. Rows come from the decoder in lists, are turned
    into text a list at a time and written as UTF-8 in one call per list."""
    from wire.capture import ProblemRow
    from wire.capture.fields import JsonLines

    problems: dict[str, int] = {}
    write = _utf8_writer()
    lines: dict[str, Any] = {}
    with _progress(out, files, rows_to_stdout=True) as update:
        for capture, rows in _batches(files, roles, update, [], damage):
            if capture not in lines:
                lines[capture] = JsonLines(bodies=bodies, capture=capture if many else None).lines
            for row in rows:
                if type(row) is ProblemRow:
                    problems[row.verdict] = problems.get(row.verdict, 0) + 1
            write(lines[capture](rows))
            _flush_stdout()
    return problems


def _flush_stdout() -> None:
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    if raw is not None:
        raw.flush()


def _utf8_writer() -> Callable[[str], Any]:
    """A function writing text to standard output as UTF-8, straight to its byte stream when it has
    one. A lone surrogate (a JSON header may escape one) is written as its JSON escape (``\\ud800``),
    which is what ``backslashreplace`` gives for the only characters UTF-8 cannot encode."""
    sys.stdout.flush()
    raw = getattr(sys.stdout, "buffer", None)
    if raw is None:
        return sys.stdout.write
    write = raw.write

    def write_utf8(text: str) -> None:
        write(text.encode("utf-8", "backslashreplace"))

    return write_utf8


class _Writer:
    def row(self, row: Row, fields: dict[str, Any] | None, capture: str | None) -> None:
        raise NotImplementedError

    def flush(self) -> None:
        """Write out what is held back (called after each list of rows from the decoder)."""
        _flush_stdout()

    def close(self) -> None:
        self.flush()


def _writer(out: Output, fmt: str, names: list[str] | None, bodies: str) -> _Writer:
    if fmt == "jsonl":
        return _JsonLines(names, bodies)
    if fmt == "json":
        return _JsonArray(names, bodies)
    if fmt == "yaml":
        return _Yaml(names)
    return _Table(out, names or [], bodies)


def _pick(fields: dict[str, Any], names: list[str] | None) -> dict[str, Any]:
    if names is None:
        return fields
    from wire.capture.fields import select

    return select(fields, names)


class _JsonLines(_Writer):
    def __init__(self, names: list[str] | None, bodies: str) -> None:
        import json

        from wire.capture.fields import JsonLines

        self.names = names
        self.encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
        self.lines: dict[str | None, JsonLines] = {}
        self.make = functools.partial(JsonLines, bodies=bodies)
        self.buf: list[str] = []
        self.write = _utf8_writer()

    def line(self, row: Row, fields: dict[str, Any] | None, capture: str | None) -> str:
        if fields is None:
            lines = self.lines.get(capture)
            if lines is None:
                lines = self.lines[capture] = self.make(capture=capture)
            return lines(row)
        return self.encode(_pick(fields, self.names))

    def row(self, row: Row, fields: dict[str, Any] | None, capture: str | None) -> None:
        self.buf.append(self.line(row, fields, capture))
        if len(self.buf) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.buf.append("")
            self.write("\n".join(self.buf))
            self.buf = []
        _flush_stdout()

    def close(self) -> None:
        self.flush()


class _JsonArray(_JsonLines):
    def __init__(self, names: list[str] | None, bodies: str) -> None:
        super().__init__(names, bodies)
        self.first = True
        self.write("[")

    def row(self, row: Row, fields: dict[str, Any] | None, capture: str | None) -> None:
        self.buf.append(("\n" if self.first else ",\n") + self.line(row, fields, capture))
        self.first = False
        if len(self.buf) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if self.buf:
            self.write("".join(self.buf))
            self.buf = []
        _flush_stdout()

    def close(self) -> None:
        self.flush()
        self.write("\n]\n")
        _flush_stdout()


class _Yaml(_Writer):
    def __init__(self, names: list[str] | None) -> None:
        self.names = names
        self.empty = True
        self.write = _utf8_writer()

    def row(self, row: Row, fields: dict[str, Any] | None, capture: str | None) -> None:
        import yaml

        assert fields is not None
        self.write(yaml.safe_dump([_pick(fields, self.names)], sort_keys=False, allow_unicode=True))
        self.empty = False

    def close(self) -> None:
        if self.empty:
            self.write("[]\n")
        _flush_stdout()


_HEADINGS = {"rocketmq.row": "#", "frame.time_epoch": "time", "tcp.stream": "stream",
             "rocketmq.direction": "dir", "rocketmq.command": "command", "rocketmq.opaque": "opaque",
             "rocketmq.serialize_type": "ser",
             "rocketmq.body_length": "body", "rocketmq.latency": "ms", "rocketmq.summary": "details"}
_RIGHT = frozenset(("rocketmq.row", "tcp.stream", "rocketmq.opaque", "rocketmq.body_length",
                    "rocketmq.latency", "rocketmq.code", "rocketmq.length", "rocketmq.offset"))


class _Table(_Writer):
    """Rows printed as aligned plain-text columns, in batches (a capture may hold millions of rows).

    Plain text rather than a rich table: every value is shown whole (nothing is cropped to the
    terminal), and server text such as ``[REJECTREQUEST]`` is never taken for markup.
    """

    def __init__(self, out: Output, names: list[str], bodies: str = "none") -> None:
        self.out = out
        self.names = names
        self.rows: list[list[str]] = []
        self.headings = [f"{bodies} body" if n == "rocketmq.body" else _HEADINGS.get(n, n) for n in names]
        self.widths = [len(h) for h in self.headings]
        self.header = True
        self.write = _utf8_writer()

    def row(self, row: Row, fields: dict[str, Any] | None, capture: str | None) -> None:
        from wire.capture.fields import headline, summary

        assert fields is not None
        cells = []
        for n in self.names:
            if n == "rocketmq.summary":
                cells.append(summary(row))
            elif n == "rocketmq.command":
                cells.append(headline(row))
            elif n.endswith("*"):
                prefix = n[:-1]
                cells.append(" ".join(f"{k[len(prefix):]}={v}" for k, v in fields.items()
                                      if k.startswith(prefix)))
            elif n == "rocketmq.body" and "rocketmq.body_error" in fields:
                cells.append(f"[{fields['rocketmq.body_error']}] {_cell(n, fields.get(n), fields)}".rstrip())
            else:
                cells.append(_cell(n, fields.get(n), fields))
        self.rows.append(cells)
        if len(self.rows) >= _BATCH:
            self.flush()

    def flush(self) -> None:
        if not self.rows:
            return
        widths = self.widths
        for r in self.rows:
            for i, c in enumerate(r):
                if len(c) > widths[i]:
                    widths[i] = len(c)
        lines = []
        if self.header:
            lines.append(self._line(self.headings))
            self.header = False
        lines.extend(self._line(r) for r in self.rows)
        self.rows = []
        self.write("\n".join(lines) + "\n")
        _flush_stdout()

    def _line(self, cells: list[str]) -> str:
        last = len(cells) - 1
        parts = []
        for i, (c, n) in enumerate(zip(cells, self.names, strict=True)):
            c = c.replace("\n", "\\n")
            if i == last:
                parts.append(c)
            elif n in _RIGHT:
                parts.append(c.rjust(self.widths[i]))
            else:
                parts.append(c.ljust(self.widths[i]))
        return "  ".join(parts).rstrip()

    def close(self) -> None:
        if self.header and not self.rows:
            self.out.info("no rows")
        self.flush()


def _cell(name: str, value: Any, fields: dict[str, Any]) -> str:
    if value is None:
        if name == "rocketmq.code_name" and fields.get("rocketmq.kind") == "ha":
            return f"HA {fields.get('rocketmq.ha.type', '')}"
        if name == "rocketmq.code_name" and fields.get("rocketmq.kind") == "problem":
            return f"[{fields.get('rocketmq.problem', '')}]"
        return ""
    if name == "frame.time_epoch":
        from datetime import datetime

        return datetime.fromtimestamp(value).strftime("%H:%M:%S.%f")
    if name == "rocketmq.latency":
        return f"{value * 1000:.3f}"
    if name == "rocketmq.direction":
        return "→" if value == "c2s" else "←"
    if isinstance(value, (dict, list)):
        import json

        return json.dumps(value, ensure_ascii=False)
    return str(value)


# ---------------------------------------------------------------------------------------------- stats

@app.command()
def stats(
    ctx: typer.Context,
    files: Annotated[list[Path], typer.Argument(help="pcap or pcapng files (gzip allowed); '-' reads stdin.",
                                                 show_default=False)],
    port: Annotated[list[str] | None, typer.Option(
        "--port", help="ROLE=PORT[,PORT] (see 'pcap decode --help'). Repeatable.")] = None,
    strict: Annotated[bool, typer.Option(help="Exit 1 when the capture has any problem.")] = False,
) -> None:
    """Counts per request and response code, conversations, latency percentiles, problems."""
    settings = _settings(ctx)
    out = settings.output
    damage: list[str] = []
    report = _stats(out, files, _roles(port), damage)
    if out.format == "table":
        _render_stats(out, report)
    else:
        out.data(report)
    _damaged(damage)
    n = report["totals"]["problems"]
    if n and strict:
        raise CliError(f"the capture has {n} problem(s)", exit_code=EXIT_FAILURE)


def _stats(out: Output, files: list[Path], roles: PortRoles, damage: list[str]) -> dict[str, Any]:
    from wire.capture import capture_size
    from wire.capture.stats import CaptureStats

    acc = CaptureStats()
    decoders: list[Any] = []
    with _progress(out, files) as update:
        for _capture, rows in _batches(files, roles, update, decoders, damage):
            acc.add_rows(rows)
    for f, dec in zip(files, decoders, strict=True):
        acc.add_capture(dec, str(f), capture_size(f))
    return acc.report()


def _print_table(title: str, columns: list[str], rows: list[list[Any]],
                 right: set[str] | None = None) -> None:
    """An aligned plain-text table on stdout (values never cropped)."""
    cells = [["-" if v is None else str(v) for v in r] for r in rows]
    widths = [max([len(c)] + [len(r[i]) for r in cells]) for i, c in enumerate(columns)]
    right = right or set()

    def line(values: list[str]) -> str:
        return "  ".join(v.rjust(w) if c in right else v.ljust(w)
                         for v, w, c in zip(values, widths, columns, strict=True)).rstrip()

    sys.stdout.write("\n".join([title, line(columns), *(line(r) for r in cells)]) + "\n\n")


def _ms(value: float | None) -> str | None:
    """A latency in milliseconds with three decimals, so that the column's points line up."""
    return None if value is None else f"{value:.3f}"


def _render_stats(out: Output, r: dict[str, Any]) -> None:
    t = r["totals"]
    sys.stdout.write(
        f"{len(r['files'])} file(s), {t['records']:,} records, {t['bytes']:,} bytes; "
        f"{t['connections']} TCP connections ({t['remoting_connections']} remoting, "
        f"{t['ha_connections']} HA, {t['other_connections']} other); {t['commands']:,} commands "
        f"({t['requests']:,} requests, "
        f"{t['responses']:,} responses), {t['ha_frames']:,} HA frames; {t['problems']} problem(s)\n\n")
    numeric = {"count", "oneway", "answered", "unanswered", "p50 ms", "p95 ms", "p99 ms", "max ms",
               "unpaired", "frames →", "frames ←", "bytes →", "bytes ←", "seconds", "problems",
               "stream", "code",
               "record", "offset", "bytes"}
    _print_table("Requests by code",
                 ["code", "request", "count", "oneway", "answered", "unanswered", "p50 ms", "p95 ms",
                  "p99 ms", "max ms", "responses"],
                 [[c["code"], c["name"], c["requests"], c["oneway"], c["answered"], c["unanswered"],
                   *(_ms(c["latency_ms"][k]) for k in ("p50", "p95", "p99", "max")),
                   " ".join(f"{k}×{v}" for k, v in c["responses"].items())]
                   for c in r["requests"]], numeric)
    _print_table("Responses by code", ["code", "response", "count", "unpaired"],
                 [[c["code"], c["name"], c["responses"], c["unpaired"]] for c in r["responses"]], numeric)
    _print_table("Conversations",
                 ["stream", "client", "server", "role", "protocol", "frames →", "frames ←", "bytes →",
                  "bytes ←", "seconds", "unanswered", "problems"],
                 [[c["stream"], c["client"], c["server"], c["role"],
                   c["protocol"] + (f" ({c['ha_variant']})" if c["ha_variant"] else ""), c["frames_c2s"],
                   c["frames_s2c"], c["bytes_c2s"], c["bytes_s2c"], f"{c['duration']:.3f}", c["unanswered"],
                   c["problems"]] for c in r["conversations"]], numeric)
    if r["ha"]:
        _print_table("HA frames", ["HA frame", "count"], [[k, v] for k, v in sorted(r["ha"].items())],
                     numeric)
    listed = r["problems"]["listed"]
    if listed:
        counts = ", ".join(f"{n} {k}" for k, n in r["problems"]["counts"].items())
        more = t["problems"] - len(listed)
        _print_table(f"Problems ({counts}{f'; the first {len(listed)} listed' if more > 0 else ''})",
                     ["stream", "record", "problem", "offset", "bytes", "message"],
                     [[p["stream"], p["record"], p["problem"], p["offset"], p["length"], p["message"]]
                      for p in listed], numeric)
    sys.stdout.flush()


# ---------------------------------------------------------------------------------------------- record

@app.command()
def record(
    ctx: typer.Context,
    write: Annotated[Path, typer.Option("--write", "-w", help="pcap file to write.", show_default=False)],
    port: Annotated[list[str] | None, typer.Option(
        "--port", help="Port to capture (N or ROLE=N); repeatable. Default: every known RocketMQ port.")
    ] = None,
    iface: Annotated[str, typer.Option("--iface", "-i", help="Interface to capture on.")] = "lo",
    duration: Annotated[float | None, typer.Option(
        help="Stop after this many seconds (default: Ctrl-C).")] = None,
    count: Annotated[int | None, typer.Option(help="Stop after this many packets.")] = None,
    rotate_seconds: Annotated[float | None, typer.Option(
        help="Rotate: --write is a directory that receives a new file every this many seconds "
             "(each renamed into view once complete; what 'mqctl analyze --follow' reads).")] = None,
    rotate_mb: Annotated[float | None, typer.Option(
        help="Rotate (as --rotate-seconds) after this many megabytes.")] = None,
) -> None:
    """Capture live TCP traffic of the given ports (loopback by default) into a pcap file."""
    settings = _settings(ctx)
    out = settings.output
    ports = _record_ports(port)
    if duration is not None and duration <= 0:
        raise UsageError("--duration must be positive")
    if count is not None and count <= 0:
        raise UsageError("--count must be positive")
    rotating = rotate_seconds is not None or rotate_mb is not None
    if (rotate_seconds is not None and rotate_seconds <= 0) or (rotate_mb is not None and rotate_mb <= 0):
        raise UsageError("--rotate-seconds and --rotate-mb must be positive")
    parent = write.parent
    if rotating:
        if not write.is_dir() or not os.access(write, os.W_OK):
            raise UsageError(f"--write {write}: with rotation, a writable directory that exists")
        parent = write
    elif write.is_dir():
        raise UsageError(f"--write {write}: is a directory")
    if not parent.is_dir():
        raise UsageError(f"--write {write}: the directory {parent} does not exist")
    if not rotating and (not os.access(parent, os.W_OK)
                         or (write.exists() and not os.access(write, os.W_OK))):
        raise UsageError(f"--write {write}: not writable")
    from wire.capture import record_live

    def started() -> None:  # the socket is open: nothing sent from now on is missed
        out.info(f"capturing TCP ports {', '.join(map(str, ports))} on {iface} into {write} "
                 f"({'for ' + str(duration) + ' s' if duration else 'until Ctrl-C or SIGTERM'})")

    import signal

    terminated: list[int] = []  # SIGTERM: a clean stop, as Ctrl-C (the file is closed whole)
    previous = signal.signal(signal.SIGTERM, lambda signum, _frame: terminated.append(signum))
    try:
        packets, size = record_live(write, ports, iface=iface, duration=duration, count=count,
                                    rotate_seconds=rotate_seconds,
                                    rotate_bytes=int(rotate_mb * 1e6) if rotate_mb is not None else None,
                                    on_start=started, stop=lambda: bool(terminated))
    except PermissionError:
        raise CliError("live capture needs root or CAP_NET_RAW") from None
    except OSError as exc:
        raise CliError(f"cannot capture on {iface}: {exc.strerror or exc}") from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    out.info(f"{packets:,} packets ({size:,} bytes) written to {write}")


def _record_ports(specs: list[str] | None) -> list[int]:
    from wire.capture import DEFAULT_PORTS, parse_port_overrides

    if not specs:
        return sorted(DEFAULT_PORTS)
    ports: set[int] = set()
    for s in specs:
        if "=" in s:
            try:
                ports.update(parse_port_overrides([s]))
            except ValueError as exc:
                raise UsageError(str(exc)) from None
            continue
        for p in s.split(","):
            p = p.strip()
            if not p.isdigit() or not 0 < int(p) < 65536:
                raise UsageError(f"--port {s!r}: {p!r} is not a port number (1-65535)")
            ports.add(int(p))
    return sorted(ports)
