# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The report: one self-contained HTML file (inline SVG plots, no executable script, no external
resource; the metrics ride along as JSON data).

Plots: latency percentiles over time, requests and errors over time, throughput per topic over
time, HA replication (master offset against slave ack, per stream) and error codes; then the
tables of the metrics. Everything is drawn here from the metrics' plain lists: no plotting
library, so the report costs nothing to import and looks the same everywhere.
"""

from __future__ import annotations

import html
import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = ["bar_chart", "line_chart", "render", "write_report"]

_W, _H, _PAD = 900, 240, 56
#: the plot area ends here; the legend is to its right
_RIGHT = 700
_COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf")


def _fmt(v: float) -> str:
    a = abs(v)
    if a >= 1e9:
        return f"{v / 1e9:.3g}G"
    if a >= 1e6:
        return f"{v / 1e6:.3g}M"
    if a >= 1e3:
        return f"{v / 1e3:.3g}k"
    return f"{v:.3g}"


def _clock(t: float, span: float = 0.0) -> str:
    """A UTC time, as precise as the span of the axis it labels needs."""
    if span >= 86400:
        return time.strftime("%Y-%m-%d %H:%M", time.gmtime(t))
    if span >= 60:
        return time.strftime("%m-%d %H:%M:%S", time.gmtime(t))
    return time.strftime("%H:%M:%S", time.gmtime(t)) + f".{int(t * 1000) % 1000:03d}"


def _duration(seconds: float) -> str:
    if seconds >= 86400:
        return f"{seconds / 86400:.1f} days"
    if seconds >= 3600:
        return f"{seconds / 3600:.1f} h"
    if seconds >= 60:
        return f"{seconds / 60:.1f} min"
    return f"{seconds:.3g} s"


def line_chart(title: str, series: Mapping[str, Sequence[tuple[float, float]]], *, unit: str = "",
               step: float | None = None) -> str:
    """An SVG line chart of ``{name: [(t, value), ...]}`` with time on the x axis. With ``step`` (the
    time bucket), a line is broken where points are more than a bucket and a half apart, so that no
    line is drawn across a time nothing was seen in; sparse series get a dot on every point."""
    pts = [p for s in series.values() for p in s if p[1] is not None]
    if not pts:
        return f"<h3>{html.escape(title)}</h3><p class=empty>nothing to plot</p>"
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y1 = max(p[1] for p in pts) or 1.0
    x1 = x1 if x1 > x0 else x0 + 1
    left, right, top, bottom = _PAD, _RIGHT, 12, _H - 40

    def x(t: float) -> float:
        return left + (t - x0) / (x1 - x0) * (right - left)

    def y(v: float) -> float:
        return bottom - v / y1 * (bottom - top)

    out = [
        f'<h3>{html.escape(title)}</h3><svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{html.escape(title)}">',
        f'<line x1="{left}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#888"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{bottom}" stroke="#888"/>',
    ]
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        yy = y(y1 * frac)
        out.append(f'<line x1="{left}" y1="{yy:.1f}" x2="{right}" y2="{yy:.1f}" stroke="#eee"/>'
                   f'<text x="{left - 4}" y="{yy + 4:.1f}" text-anchor="end" font-size="10">'
                   f"{_fmt(y1 * frac)}{html.escape(unit)}</text>")
    span = x1 - x0
    for frac in (0.0, 0.25, 0.5, 0.75, 1.0):
        t = x0 + frac * span
        anchor = "start" if frac == 0 else "end" if frac == 1 else "middle"
        out.append(f'<line x1="{x(t):.1f}" y1="{bottom}" x2="{x(t):.1f}" y2="{bottom + 4}" stroke="#888"/>'
                   f'<text x="{x(t):.1f}" y="{bottom + 16}" text-anchor="{anchor}" font-size="10">'
                   f"{_clock(t, span)}</text>")
    out.append(f'<text x="{(left + right) / 2:.0f}" y="{bottom + 32}" text-anchor="middle" font-size="10" '
               f'fill="#666">UTC</text>')
    for i, (name, s) in enumerate(series.items()):
        colour = _COLOURS[i % len(_COLOURS)]
        clean = sorted(p for p in s if p[1] is not None)
        runs: list[list[tuple[float, float]]] = []
        for p in clean:
            if runs and (step is None or p[0] - runs[-1][-1][0] <= 1.5 * step):
                runs[-1].append(p)
            else:
                runs.append([p])
        for run in runs:
            if len(run) > 1:
                out.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                           f'points="{" ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in run)}"/>')
        if len(clean) <= 40 or any(len(r) == 1 for r in runs):
            dots = clean if len(clean) <= 40 else [r[0] for r in runs if len(r) == 1]
            out.extend(f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="2.5" fill="{colour}"/>' for t, v in dots)
        out.append(f'<rect x="{right + 16}" y="{top + 16 * i}" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{right + 30}" y="{top + 9 + 16 * i}" font-size="11">'
                   f'{html.escape(name[:26])}</text>')
    out.append("</svg>")
    return "".join(out)


def bar_chart(title: str, bars: Sequence[tuple[str, float]]) -> str:
    """A horizontal SVG bar chart of ``[(label, value), ...]``."""
    if not bars:
        return f"<h3>{html.escape(title)}</h3><p class=empty>nothing to plot</p>"
    top = max(v for _l, v in bars) or 1.0
    h = 18 * len(bars) + 8
    out = [
        f'<h3>{html.escape(title)}</h3><svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{h}" '
        f'viewBox="0 0 {_W} {h}" role="img" aria-label="{html.escape(title)}">'
    ]
    for i, (label, v) in enumerate(bars):
        w = v / top * (_W - 320)
        y = 4 + 18 * i
        out.append(
            f'<text x="216" y="{y + 12}" text-anchor="end" font-size="11">{html.escape(label[:34])}</text>'
            f'<rect x="220" y="{y}" width="{max(w, 1):.1f}" height="14" fill="{_COLOURS[i % 8]}"/>'
            f'<text x="{224 + w:.1f}" y="{y + 12}" font-size="11">{_fmt(v)}</text>'
        )
    out.append("</svg>")
    return "".join(out)


#: columns that hold capture times (seconds since the epoch), shown as UTC clock times
_TIMES = frozenset(("at", "t", "first_ts", "last_ts", "ts"))


def _cell(column: str, v: Any) -> str:
    if v is None:
        return "<td></td>"
    if column == "capture":
        return f"<td title=\"{html.escape(str(v))}\">{html.escape(Path(str(v)).name)}</td>"
    if column in _TIMES and isinstance(v, (int, float)):
        return f"<td class=n title=\"{v}\">{_clock(float(v), 86400)}</td>"
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return f"<td>{html.escape(str(v))}</td>"
    return f"<td class=n>{html.escape(f'{v:,}' if isinstance(v, int) else f'{v:,.6g}')}</td>"


def _table(title: str, rows: list[dict[str, Any]], limit: int = 50) -> str:
    if not rows:
        return f"<h3>{html.escape(title)}</h3><p class=empty>none</p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join("<tr>" + "".join(_cell(c, r[c]) for c in cols) + "</tr>" for r in rows[:limit])
    more = f"<p>{len(rows) - limit} more rows in the JSON output</p>" if len(rows) > limit else ""
    return f"<h3>{html.escape(title)}</h3><table><tr>{head}</tr>{body}</table>{more}"


def _series(
    rows: list[dict[str, Any]], key: str, value: str, limit: int = 8
) -> dict[str, list[tuple[float, float]]]:
    totals: dict[str, float] = {}
    for r in rows:
        totals[str(r[key])] = totals.get(str(r[key]), 0) + (r[value] or 0)
    keep = sorted(totals, key=lambda k: -totals[k])[:limit]
    out: dict[str, list[tuple[float, float]]] = {k: [] for k in keep}
    for r in rows:
        k = str(r[key])
        if k in out:
            out[k].append((float(r["t"]), float(r[value] or 0)))
    return out


def render(
    metrics: dict[str, Any], *, title: str = "RocketMQ capture analysis", captures: Sequence[str] = ()
) -> str:
    """The report as one HTML document."""
    s = metrics["summary"]
    step = float(metrics["bucket_seconds"])
    parts = [
        f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(title)}</title><style>"
        "body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;"
        "margin-bottom:1em}td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;text-align:left}"
        "td.n{text-align:right;font-variant-numeric:tabular-nums}th{background:#f0f0f0}.empty{color:#888}"
        ".summary span{margin-right:1.5em}h3{margin:1.6em 0 .3em}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    span = (s["last_ts"] or 0) - (s["first_ts"] or 0)
    figures = [(_fmt(float(s[k] or 0)), k.replace("_", " ")) for k in
               ("captures", "connections", "commands", "exchanges", "messages", "ha_frames", "problems")]
    parts.append("<p class=summary>" + "".join(f"<span><b>{v}</b> {k}</span>" for v, k in figures)
                 + (f"<span><b>{_duration(span)}</b> span</span>" if s["first_ts"] is not None else "")
                 + "</p>")
    if s["first_ts"] is not None:
        parts.append(f"<p>from {_clock(s['first_ts'], 86400)} to {_clock(s['last_ts'], 86400)} UTC; time "
                     f"buckets of {_duration(step)}</p>")
    lat = metrics["latency_over_time"]
    parts.append(line_chart(
        "Latency percentiles over time (ms; PULL_MESSAGE left out: long polling holds a pull open)",
        {p: [(float(r["t"]), r[f"{p}_ms"]) for r in lat] for p in ("p50", "p95", "p99")}, step=step))
    cot = metrics["codes_over_time"]
    parts.append(line_chart(
        "Requests and error responses per bucket",
        {"requests": [(float(r["t"]), float(r["requests"])) for r in cot],
         "errors": [(float(r["t"]), float(r["errors"])) for r in cot]}, step=step))
    tp = [dict(r, key=f"{r['topic']} ({r['source']})") for r in metrics["throughput_over_time"]]
    parts.append(line_chart(
        "Throughput per topic (messages per bucket; send = produced, pull = consumed)",
        _series(tp, "key", "messages"), step=step))
    streams: dict[str, list[dict[str, Any]]] = {}
    for r in metrics["ha_lag"]:
        if r["master_offset"] is not None or r["slave_offset"] is not None:
            streams.setdefault(f"{Path(str(r['capture'])).name}, stream {r['stream']}", []).append(r)
    for name, rows in list(streams.items())[:8]:
        parts.append(line_chart(
            f"HA replication, {name} ({rows[0]['master']} to {rows[0]['slave']}): master's offset sent and "
            "slave's acked offset",
            {"master sent": [(float(r["t"]), r["master_offset"]) for r in rows],
             "slave acked": [(float(r["t"]), r["slave_offset"]) for r in rows]},
            step=float(rows[0]["bucket"])))
    if len(streams) > 8:
        parts.append(f"<p>{len(streams) - 8} more HA streams in the JSON output</p>")
    parts.append(bar_chart(
        "Responses by code",
        [(f"{r['name']} ({r['code']})", float(r["responses"])) for r in metrics["responses"][:20]]))
    parts.append(bar_chart(
        "Error responses (code ≠ 0) by request code",
        [(r["code_name"], float(r["errors"])) for r in metrics["codes"] if r["errors"]][:20]))
    for name, what in (
        ("codes", "Requests by code"),
        ("latency_by_server", "Latency by server and code"),
        ("throughput", "Throughput per topic"),
        ("consumer_lag", "Consumer lag seen on the wire"),
        ("ha_streams", "HA streams"),
        ("route_churn", "Route churn"),
        ("clients", "Clients by language and version"),
        ("problems", "Problems"),
    ):
        parts.append(_table(what, metrics[name]))
    if captures:
        parts.append(f"<details><summary><b>{len(captures)} capture(s)</b></summary><ul>"
                     + "".join(f"<li>{html.escape(c)}</li>" for c in captures) + "</ul></details>")
    parts.append(
        "<script type=application/json id=metrics>"
        + html.escape(json.dumps(metrics, default=str), quote=False)
        + "</script></body></html>"
    )
    return "\n".join(parts)


def write_report(path: Path, metrics: dict[str, Any], captures: Sequence[str] = ()) -> Path:
    path.write_text(render(metrics, captures=captures), encoding="utf-8")
    return path
