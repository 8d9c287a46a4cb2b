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

_W, _H, _PAD = 720, 240, 48
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


def _clock(t: float) -> str:
    return time.strftime("%m-%d %H:%M:%S", time.gmtime(t))


def line_chart(title: str, series: Mapping[str, Sequence[tuple[float, float]]], *, unit: str = "") -> str:
    """An SVG line chart of ``{name: [(t, value), ...]}`` with time on the x axis."""
    pts = [p for s in series.values() for p in s if p[1] is not None]
    if not pts:
        return f"<h3>{html.escape(title)}</h3><p class=empty>nothing to plot</p>"
    x0, x1 = min(p[0] for p in pts), max(p[0] for p in pts)
    y1 = max(p[1] for p in pts) or 1.0
    x1 = x1 if x1 > x0 else x0 + 1

    def xy(t: float, v: float) -> str:
        x = _PAD + (t - x0) / (x1 - x0) * (_W - 2 * _PAD)
        y = _H - _PAD + 8 - v / y1 * (_H - _PAD - 16)
        return f"{x:.1f},{y:.1f}"

    out = [
        f'<h3>{html.escape(title)}</h3><svg xmlns="http://www.w3.org/2000/svg" width="{_W}" height="{_H}" '
        f'viewBox="0 0 {_W} {_H}" role="img" aria-label="{html.escape(title)}">',
        f'<line x1="{_PAD}" y1="{_H - _PAD + 8}" x2="{_W - _PAD}" y2="{_H - _PAD + 8}" stroke="#888"/>',
        f'<line x1="{_PAD}" y1="8" x2="{_PAD}" y2="{_H - _PAD + 8}" stroke="#888"/>',
    ]
    for frac in (0.0, 0.5, 1.0):
        y = _H - _PAD + 8 - frac * (_H - _PAD - 16)
        out.append(
            f'<text x="{_PAD - 4}" y="{y + 4:.1f}" text-anchor="end" font-size="10">'
            f"{_fmt(y1 * frac)}{html.escape(unit)}</text>"
        )
    for t, anchor in ((x0, "start"), (x1, "end")):
        out.append(
            f'<text x="{_PAD if anchor == "start" else _W - _PAD}" y="{_H - _PAD + 22}" '
            f'text-anchor="{anchor}" font-size="10">{_clock(t)}</text>'
        )
    for i, (name, s) in enumerate(series.items()):
        colour = _COLOURS[i % len(_COLOURS)]
        clean = [p for p in s if p[1] is not None]
        if len(clean) == 1:
            out.append(
                f'<circle cx="{xy(*clean[0]).split(",")[0]}" cy="{xy(*clean[0]).split(",")[1]}" r="3" '
                f'fill="{colour}"/>'
            )
        elif clean:
            out.append(
                f'<polyline fill="none" stroke="{colour}" stroke-width="1.5" '
                f'points="{" ".join(xy(t, v) for t, v in clean)}"/>'
            )
        out.append(
            f'<text x="{_W - _PAD + 4 - 160}" y="{14 + 12 * i}" font-size="10" fill="{colour}">'
            f"{html.escape(name[:28])}</text>"
        )
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


def _table(title: str, rows: list[dict[str, Any]], limit: int = 50) -> str:
    if not rows:
        return f"<h3>{html.escape(title)}</h3><p class=empty>none</p>"
    cols = list(rows[0])
    head = "".join(f"<th>{html.escape(c)}</th>" for c in cols)
    body = "".join(
        "<tr>" + "".join(f"<td>{html.escape('' if r[c] is None else str(r[c]))}</td>" for c in cols) + "</tr>"
        for r in rows[:limit]
    )
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
    parts = [
        f"<!doctype html><html><head><meta charset=utf-8><title>{html.escape(title)}</title><style>"
        "body{font:14px system-ui,sans-serif;margin:2em;max-width:1100px}table{border-collapse:collapse;"
        "margin-bottom:1em}td,th{border:1px solid #ccc;padding:2px 6px;font-size:12px;text-align:left}"
        "th{background:#f0f0f0}.empty{color:#888}.summary span{margin-right:1.5em}</style></head><body>",
        f"<h1>{html.escape(title)}</h1>",
    ]
    span = (s["last_ts"] or 0) - (s["first_ts"] or 0)
    parts.append(
        "<p class=summary>"
        + "".join(
            f"<span><b>{_fmt(float(s[k] or 0)) if k != 'span' else f'{span:.1f} s'}</b> "
            f"{k.replace('_', ' ')}</span>"
            for k in (
                "captures",
                "connections",
                "commands",
                "exchanges",
                "messages",
                "ha_frames",
                "problems",
                "span",
            )
        )
        + "</p>"
    )
    if s["first_ts"] is not None:
        parts.append(
            f"<p>from {_clock(s['first_ts'])} to {_clock(s['last_ts'])} UTC; "
            f"time buckets of {metrics['bucket_seconds']:g} s</p>"
        )
    lat = metrics["latency_over_time"]
    parts.append(
        line_chart(
            "Latency percentiles over time (ms)",
            {p: [(float(r["t"]), r[f"{p}_ms"]) for r in lat] for p in ("p50", "p95", "p99")},
            unit="",
        )
    )
    cot = metrics["codes_over_time"]
    parts.append(
        line_chart(
            "Requests and error responses per bucket",
            {
                "requests": [(float(r["t"]), float(r["requests"])) for r in cot],
                "errors": [(float(r["t"]), float(r["errors"])) for r in cot],
            },
        )
    )
    tp = [dict(r, key=f"{r['topic']} ({r['source']})") for r in metrics["throughput_over_time"]]
    parts.append(
        line_chart(
            "Throughput per topic (messages per bucket; send = produced, pull = consumed)",
            _series(tp, "key", "messages"),
        )
    )
    streams: dict[str, list[dict[str, Any]]] = {}
    for r in metrics["ha_lag"]:
        streams.setdefault(f"{Path(str(r['capture'])).name} #{r['stream']}", []).append(r)
    for name, rows in list(streams.items())[:6]:
        parts.append(
            line_chart(
                f"HA replication, {name}: master offset sent against slave's acked offset",
                {
                    "master": [(float(r["t"]), r["master_offset"]) for r in rows],
                    "slave ack": [(float(r["t"]), r["slave_offset"]) for r in rows],
                },
            )
        )
    parts.append(
        bar_chart(
            "Responses by code",
            [(f"{r['name']} ({r['code']})", float(r["responses"])) for r in metrics["responses"][:20]],
        )
    )
    parts.append(
        bar_chart(
            "Error responses (code ≠ 0) by request code",
            [(r["code_name"], float(r["errors"])) for r in metrics["codes"] if r["errors"]][:20],
        )
    )
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
        parts.append(
            "<h3>Captures</h3><ul>" + "".join(f"<li>{html.escape(c)}</li>" for c in captures) + "</ul>"
        )
    parts.append(
        "<script type=application/json id=metrics>"
        + html.escape(json.dumps(metrics, default=str), quote=False)
        + "</script></body></html>"
    )
    return "\n".join(parts)


def write_report(path: Path, metrics: dict[str, Any], captures: Sequence[str] = ()) -> Path:
    path.write_text(render(metrics, captures=captures), encoding="utf-8")
    return path
