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

__all__ = ["ReportError", "html_report", "junit_xml", "load_report", "summary_by_family", "write_json"]

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


class ReportError(ValueError):
    """A report file that cannot be read (the message names the file)."""


def write_json(doc: Mapping[str, Any], path: str | Path) -> None:
    Path(path).write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def load_report(path: str | Path) -> dict[str, Any]:
    """A run's JSON report, checked for the keys the renderers need."""
    p = Path(path)
    try:
        doc = json.loads(p.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ReportError(f"{p}: cannot read: {exc.strerror or exc}") from None
    except ValueError as exc:
        raise ReportError(f"{p}: not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("suite") != "mqctl-conformance" \
            or not isinstance(doc.get("results"), list):
        raise ReportError(f"{p}: not a conformance report (no suite/results)")
    for n, r in enumerate(doc["results"]):
        if not isinstance(r, dict) or not {"id", "outcome", "level", "family"} <= set(r):
            raise ReportError(f"{p}: result {n} lacks id/outcome/level/family")
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
    out.append("<div id='bar'>" + "".join(
        f"<label><input type='radio' name='f' value='{v}'{' checked' if v == 'all' else ''} "
        f"onchange='show()'> {label}</label>"
        for v, label in (("all", "all cases"), ("diff", "where the targets differ"),
                         ("bad", "not passing somewhere"))) + "</div>")
    heads = "".join(f"<th>{html.escape(str(d.get('target', {}).get('name', '?')))}</th>" for d in docs)
    out.append(f"<table><tr><th>case</th><th>level</th><th>requirement</th>{heads}</tr>")
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
