# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Reports: the JSON a run writes, JUnit XML for CI, and one HTML page with several targets side
by side (a row per case, a column per target).

The JSON document (:meth:`conformance.runner.Report.to_json`) is the source of the other two, so a
report can be rendered again later, or together with the runs of other targets::

    {"suite": "mqctl-conformance", "suite_version": "0.1.0", "run_id": "…", "started": "…",
     "duration": 61.2, "target": {"name": …, "namesrv": …, "profile": "4.9", "server_version": 409, …},
     "options": {…}, "passed": true, "counts": {"pass": 120, …},
     "results": [{"id": "NS-ROUTE-003", "family": "namesrv", "level": "MUST", "requirement": …,
                  "source": …, "outcome": "pass", "detail": "", "observations": […], "duration": 0.02}, …]}
"""

from __future__ import annotations

import html
import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from xml.etree import ElementTree as ET

from .model import FAMILIES, Outcome

__all__ = ["ReportError", "html_replay_report", "html_report", "junit_xml", "load_replay_report",
           "load_report", "report_kind", "summary_by_family", "write_json"]

#: outcome → (colour, short label) in the HTML page
STYLE = {
    "pass": ("#2e7d32", "pass"),
    "non-strict": ("#b7950b", "non-strict"),
    "informational": ("#5d6d7e", "info"),
    "unimplemented": ("#7d3c98", "unimpl."),
    "fail": ("#c0392b", "FAIL"),
    "deviation": ("#d35400", "deviation"),
    "not-run": ("#aab7b8", "not run"),
}


#: replay verdict → (colour, short label) in the HTML page of replays
REPLAY_STYLE = {
    "match": ("#2e7d32", "match"),
    "explained": ("#5d6d7e", "explained"),
    "closed-as-recorded": ("#1f618d", "closed"),
    "skipped": ("#aab7b8", "skipped"),
    "differ": ("#c0392b", "DIFFER"),
    "missing": ("#922b21", "MISSING"),
    "extra": ("#d35400", "EXTRA"),
}
#: replay verdicts that are no finding
REPLAY_OK = frozenset({"match", "explained", "closed-as-recorded", "skipped"})
#: the ``suite`` of each kind of JSON report
SUITES = {"mqctl-conformance": "run", "mqctl-conformance-replay": "replay"}


class ReportError(ValueError):
    """A report file that cannot be read (the message names the file)."""


def write_json(doc: Mapping[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def _read_json(p: Path) -> Any:
    try:
        return json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReportError(f"{p}: not JSON: {exc}") from None


def report_kind(path: str | Path) -> str:
    """``run`` (a conformance run's report) or ``replay`` (a replay's verdicts)."""
    p = Path(path)
    doc = _read_json(p)
    kind = SUITES.get(str(doc.get("suite"))) if isinstance(doc, dict) else None
    if kind is None:
        raise ReportError(f"{p}: neither a conformance run's report nor a replay's (suite "
                          f"{doc.get('suite') if isinstance(doc, dict) else None!r})")
    return kind


def load_report(path: str | Path) -> dict[str, Any]:
    """A run's JSON report, checked for the keys the renderers need."""
    p = Path(path)
    doc = _read_json(p)
    if not isinstance(doc, dict) or doc.get("suite") != "mqctl-conformance" \
            or not isinstance(doc.get("results"), list):
        raise ReportError(f"{p}: not a conformance report (no suite/results)")
    for n, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or not {"id", "outcome", "level", "family"} <= set(r):
            raise ReportError(f"{p}: result {n} lacks id/outcome/level/family")
    return doc


def load_replay_report(path: str | Path) -> dict[str, Any]:
    """A replay's JSON report (``mqctl conformance replay --json``), checked for the keys the
    renderers need."""
    p = Path(path)
    doc = _read_json(p)
    if not isinstance(doc, dict) or doc.get("suite") != "mqctl-conformance-replay" \
            or not isinstance(doc.get("verdicts"), list):
        raise ReportError(f"{p}: not a replay report (no suite/verdicts)")
    for n, v in enumerate(doc["verdicts"]):
        if not isinstance(v, dict) or not {"capture", "connection", "row", "verdict"} <= set(v):
            raise ReportError(f"{p}: verdict {n} lacks capture/connection/row/verdict")
    return doc


def summary_by_family(doc: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Per family: counts of each outcome, MUST and SHOULD cases."""
    rows: dict[str, dict[str, Any]] = {}
    for prefix, (family, _what) in FAMILIES.items():
        rows[family] = {"family": family, "prefix": prefix, "cases": 0, "MUST": 0, "SHOULD": 0, "INFO": 0,
                        **{str(o): 0 for o in Outcome}}
    for r in doc["results"]:
        row = rows.setdefault(r["family"], {"family": r["family"], "prefix": "", "cases": 0, "MUST": 0,
                                            "SHOULD": 0,
                                            "INFO": 0, **{str(o): 0 for o in Outcome}})
        row["cases"] += 1
        row[r["level"]] = row.get(r["level"], 0) + 1
        row[r["outcome"]] = row.get(r["outcome"], 0) + 1
    return [r for r in rows.values() if r["cases"]]


# ---------------------------------------------------------------------------- JUnit


def junit_xml(doc: Mapping[str, Any], *, strict: bool | None = None) -> str:
    """JUnit XML: a ``testsuite`` per family, a ``testcase`` per case. ``fail`` (and, for a MUST,
    ``unimplemented``; with ``strict``, ``non-strict``) is a ``failure``; ``not-run`` and
    ``deviation`` are ``skipped`` with their reason; the rest pass, with what was seen in
    ``system-out``."""
    strict = bool(doc.get("options", {}).get("strict")) if strict is None else strict
    target = doc.get("target", {}).get("name", "target")
    root = ET.Element("testsuites", name=f"mqctl conformance: {target}")
    by_family: dict[str, list[Mapping[str, Any]]] = {}
    for r in doc["results"]:
        by_family.setdefault(r["family"], []).append(r)
    totals = {"tests": 0, "failures": 0, "skipped": 0}
    for family, results in by_family.items():
        suite = ET.SubElement(root, "testsuite", name=f"{target}.{family}")
        counts = {"tests": 0, "failures": 0, "skipped": 0}
        time_sum = 0.0
        for r in results:
            counts["tests"] += 1
            time_sum += float(r.get("duration") or 0)
            tc = ET.SubElement(suite, "testcase", classname=f"conformance.{family}", name=r["id"],
                               time=f"{float(r.get('duration') or 0):.3f}")
            outcome = r["outcome"]
            text = f"{r['level']}: {r.get('requirement', '')} [{r.get('source', '')}]"
            detail = r.get("detail") or ""
            failed = (outcome == "fail" or (outcome == "unimplemented" and r["level"] == "MUST")
                      or (strict and outcome == "non-strict"))
            if failed:
                counts["failures"] += 1
                el = ET.SubElement(tc, "failure", message=f"{outcome}: {detail}"[:500], type=outcome)
                el.text = f"{text}\n{detail}"
            elif outcome in ("not-run", "deviation"):
                counts["skipped"] += 1
                ET.SubElement(tc, "skipped", message=f"{outcome}: {detail}"[:500])
            out = [f"outcome: {outcome}", text]
            if detail and not failed:
                out.append(detail)
            out += list(r.get("observations") or [])
            ET.SubElement(tc, "system-out").text = "\n".join(out)
        for k, v in counts.items():
            suite.set(k, str(v))
            totals[k] += v
        suite.set("errors", "0")
        suite.set("time", f"{time_sum:.3f}")
    for k, v in totals.items():
        root.set(k, str(v))
    root.set("errors", "0")
    ET.indent(root)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"


# ---------------------------------------------------------------------------- HTML


_CSS = """
body{font:14px/1.4 -apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif;margin:24px;color:#222}
h1{font-size:20px;margin:0 0 4px}.sub{color:#666;margin:0 0 16px}
table{border-collapse:collapse}th,td{padding:3px 8px;border-bottom:1px solid #e5e5e5;vertical-align:top}
th{text-align:left;background:#f6f6f6;position:sticky;top:0}
.targets td{border:none;padding:2px 10px 2px 0}.targets td:nth-child(-n+2){white-space:nowrap}
.ok{color:#2e7d32;font-weight:600}.bad{color:#c0392b;font-weight:600}
.fam td{background:#eef2f5;font-weight:600;padding-top:8px}
.id{font-family:ui-monospace,monospace;white-space:nowrap}
.lvl{font-size:11px;font-weight:600;color:#555}.req{max-width:620px}.src{color:#888;font-size:12px}
.cell{color:#fff;border-radius:3px;padding:1px 6px;font-size:12px;white-space:nowrap;display:inline-block}
.cell{cursor:help}.counts span{display:inline-block;margin-right:8px}
.diff td.idc{border-left:3px solid #d35400}#bar{margin:10px 0 12px}#bar label{margin-right:14px}
"""

_JS = """
function show(){var f=document.querySelector('input[name=f]:checked').value;
document.querySelectorAll('tr.case').forEach(function(r){var k=r.dataset;
r.style.display=(f=='all'||(f=='diff'&&k.diff=='1')||(f=='bad'&&k.bad=='1'))?'':'none'});
history.replaceState(null,'',f=='all'?'#':'#'+f);}
window.addEventListener('load',function(){var h=location.hash.slice(1);
var i=document.querySelector('input[name=f][value="'+h+'"]');if(i){i.checked=true;show();}});
"""


def _filter_bar(everything: str, bad: str) -> str:
    """The radio buttons of a side-by-side page: every row, the rows where the targets differ, the
    rows where one target did not pass (``show()`` in :data:`_JS` applies them)."""
    return "<div id='bar'>" + "".join(
        f"<label><input type='radio' name='f' value='{v}'{' checked' if v == 'all' else ''} "
        f"onchange='show()'> {label}</label>"
        for v, label in (("all", everything), ("diff", "where the targets differ"), ("bad", bad))) + "</div>"


def _target_heads(docs: Sequence[Mapping[str, Any]]) -> str:
    return "".join(f"<th>{html.escape(str(d.get('target', {}).get('name', '?')))}</th>" for d in docs)


def _cell(r: Mapping[str, Any] | None) -> str:
    if r is None:
        return '<td><span class="src">—</span></td>'
    colour, label = STYLE.get(r["outcome"], ("#555", r["outcome"]))
    tip = "\n".join(x for x in [r["outcome"], r.get("detail") or "", *(r.get("observations") or [])] if x)
    return (f'<td><span class="cell" style="background:{colour}" title="{html.escape(tip)}">'
            f"{html.escape(label)}</span></td>")


def _target_row(doc: Mapping[str, Any]) -> str:
    """One target's line of the summary: name, verdict, counts, profile, addresses, duration."""
    t = doc.get("target", {})
    if doc.get("passed"):
        verdict = "<span class='ok'>every MUST passes</span>"
    else:
        verdict = "<span class='bad'>FAILED</span>"
    counts = doc.get("counts", {})
    parts = "".join(f"<span><span class='cell' style='background:{STYLE[o][0]}'>{STYLE[o][1]}</span> "
                    f"{counts[o]}</span>" for o in STYLE if counts.get(o))
    roles = ("namesrv", "broker", "slave", "ha", "controller")
    where = ", ".join(f"{k} {t[k]}" for k in roles if t.get(k))
    version = t.get("version_name") or t.get("server_version") or "?"
    fast = ", --fast" if doc.get("options", {}).get("fast") else ""
    about = (f"profile {t.get('profile')}, answers as {version}; {where}; "
             f"{float(doc.get('duration') or 0):.0f} s{fast}")
    return (f"<tr><td><b>{html.escape(str(t.get('name', '?')))}</b></td><td>{verdict}</td>"
            f"<td class='counts'>{parts}</td><td class='src'>{html.escape(about)}</td></tr>")


def html_report(docs: Sequence[Mapping[str, Any]], *, title: str = "RocketMQ conformance") -> str:
    """One page: each target's summary, then a row per case and a column per target. Hovering a
    cell shows the detail and observations; the filters show only the rows where the targets
    differ, or where one of them did not pass (``#diff`` and ``#bad`` at the end of the address
    open the page filtered)."""
    cases: dict[str, Mapping[str, Any]] = {}
    per: list[dict[str, Mapping[str, Any]]] = []
    for doc in docs:
        results = {r["id"]: r for r in doc["results"]}
        per.append(results)
        for cid, r in results.items():
            cases.setdefault(cid, r)
    order = {family: i for i, (family, _w) in enumerate(FAMILIES.values())}
    ids = sorted(cases, key=lambda c: (order.get(cases[c]["family"], 99), c))
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
           f"<title>{html.escape(title)}</title><style>{_CSS}</style><script>{_JS}</script></head><body>",
           f"<h1>{html.escape(title)}</h1>",
           f"<p class='sub'>{len(ids)} cases, {len(docs)} target(s); generated "
           f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} by mqctl conformance</p>",
           "<table class='targets'>"]
    for doc in docs:
        out.append(_target_row(doc))
    out.append("</table>")
    out.append(_filter_bar("all cases", "not passing somewhere"))
    out.append(f"<table><tr><th>case</th><th>level</th><th>requirement</th>{_target_heads(docs)}</tr>")
    family = None
    for cid in ids:
        c = cases[cid]
        if c["family"] != family:
            family = c["family"]
            prefix = next((p for p, (f, _w) in FAMILIES.items() if f == family), "")
            what = FAMILIES.get(prefix, ("", ""))[1]
            out.append(f"<tr class='fam'><td colspan='{3 + len(docs)}'>{html.escape(str(family))}"
                       f" <span class='src'>{html.escape(what)}</span></td></tr>")
        got = [p.get(cid) for p in per]
        outcomes = {g["outcome"] if g else None for g in got}
        diff = len(outcomes) > 1
        bad = any(g is not None and g["outcome"] not in ("pass", "informational") for g in got)
        cells = "".join(_cell(g) for g in got)
        out.append(f"<tr class='case{' diff' if diff else ''}' data-diff='{int(diff)}' data-bad='{int(bad)}'>"
                   f"<td class='id idc'>{html.escape(cid)}</td><td class='lvl'>{html.escape(c['level'])}</td>"
                   f"<td class='req'>{html.escape(c.get('requirement', ''))}<br><span class='src'>"
                   f"{html.escape(c.get('source', ''))}</span></td>{cells}</tr>")
    out.append("</table></body></html>\n")
    return "\n".join(out)


# ---------------------------------------------------------------------------- HTML of replays


def _replay_cell(v: Mapping[str, Any] | None) -> str:
    if v is None:
        return '<td><span class="src">—</span></td>'
    colour, label = REPLAY_STYLE.get(v["verdict"], ("#555", v["verdict"]))
    diffs = [f"{d['path']}: recorded {d['recorded']}, got {d['got']}" for d in v.get("diffs") or []]
    tip = "\n".join(x for x in [v["verdict"], v.get("reason") or "", *diffs] if x)
    cell = (f'<span class="cell" style="background:{colour}" title="{html.escape(tip)}">'
            f"{html.escape(label)}</span>")
    if v["verdict"] not in REPLAY_OK:
        # a finding is read on the page, not only on hover
        shown = diffs[:6] + ([f"… {len(diffs) - 6} more"] if len(diffs) > 6 else [])
        lines = shown or [v.get("reason") or ""]
        cell += "".join(f"<div class='dif'>{html.escape(x)}</div>" for x in lines if x)
    return f"<td>{cell}</td>"


def _replay_target_row(doc: Mapping[str, Any]) -> str:
    t = doc.get("target", {})
    bad = int(doc.get("unexplained") or 0)
    verdict = ("<span class='ok'>0 unexplained</span>" if not bad
               else f"<span class='bad'>{bad} unexplained</span>")
    counts = doc.get("counts", {})
    parts = "".join(f"<span><span class='cell' style='background:{REPLAY_STYLE[o][0]}'>{REPLAY_STYLE[o][1]}"
                    f"</span> {counts[o]}</span>" for o in REPLAY_STYLE if counts.get(o))
    roles = ("namesrv", "broker", "slave", "ha", "controller")
    where = ", ".join(f"{k} {t[k]}" for k in roles if t.get(k))
    version = t.get("version_name") or t.get("server_version") or "?"
    about = (f"{len(doc.get('captures') or [])} capture(s), {len(doc.get('setup') or [])} set-up step(s); "
             f"answers as {version}; {where}")
    return (f"<tr><td><b>{html.escape(str(t.get('name', '?')))}</b></td><td>{verdict}</td>"
            f"<td class='counts'>{parts}</td><td class='src'>{html.escape(about)}</td></tr>")


def html_replay_report(docs: Sequence[Mapping[str, Any]], *, title: str = "RocketMQ capture replay") -> str:
    """One page of replays: each target's counts, then a row per replayed request (grouped by
    capture) and a column per target. A verdict that is a finding (differ, missing, extra) shows
    its field differences in the cell; the others show the reason on hover. The filters (``#diff``,
    ``#bad``) keep the rows where the targets' verdicts differ, or where one is a finding."""
    Key = tuple[str, int, int]
    rows: dict[Key, Mapping[str, Any]] = {}
    per: list[dict[Key, Mapping[str, Any]]] = []
    for doc in docs:
        keyed = {(v["capture"], int(v["connection"]), int(v["row"])): v for v in doc["verdicts"]}
        per.append(keyed)
        for k, v in keyed.items():
            rows.setdefault(k, v)
    captures: list[str] = []
    for doc in docs:
        for v in doc["verdicts"]:
            if v["capture"] not in captures:
                captures.append(v["capture"])
    order = {c: i for i, c in enumerate(captures)}
    keys = sorted(rows, key=lambda k: (order[k[0]], k[1], k[2]))
    out = ["<!DOCTYPE html><html><head><meta charset='utf-8'>",
           f"<title>{html.escape(title)}</title><style>{_CSS}.dif{{font:12px ui-monospace,monospace;"
           f"color:#922b21;max-width:520px;word-break:break-all}}</style><script>{_JS}</script></head><body>",
           f"<h1>{html.escape(title)}</h1>",
           f"<p class='sub'>{len(keys)} requests of {len(captures)} capture(s), {len(docs)} target(s); "
           f"generated {datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')} by mqctl conformance replay</p>",
           "<table class='targets'>", *(_replay_target_row(d) for d in docs), "</table>"]
    out.append(_filter_bar("all requests", "a finding somewhere"))
    out.append(f"<table><tr><th>connection</th><th>row</th><th>request</th>{_target_heads(docs)}</tr>")
    capture = None
    for key in keys:
        v = rows[key]
        if key[0] != capture:
            capture = key[0]
            n = sum(1 for k in keys if k[0] == capture)
            out.append(f"<tr class='fam'><td colspan='{3 + len(docs)}'>{html.escape(capture)}"
                       f" <span class='src'>{n} request(s)</span></td></tr>")
        got = [p.get(key) for p in per]
        verdicts = {g["verdict"] if g else None for g in got}
        diff = len(verdicts) > 1
        bad = any(g is not None and g["verdict"] not in REPLAY_OK for g in got)
        name = v.get("code_name") or (str(v["code"]) if v.get("code") is not None else "raw bytes")
        kind = f" <span class='src'>{html.escape(str(v.get('kind')))}</span>" if v.get("kind") else ""
        out.append(f"<tr class='case{' diff' if diff else ''}' data-diff='{int(diff)}' data-bad='{int(bad)}'>"
                   f"<td class='id idc'>{key[1]}</td><td class='id'>{key[2]}</td>"
                   f"<td class='id'>{html.escape(name)}{kind}</td>"
                   f"{''.join(_replay_cell(g) for g in got)}</tr>")
    out.append("</table></body></html>\n")
    return "\n".join(out)
