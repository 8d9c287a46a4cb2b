# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl conformance``: grade a name server, broker or controller (or our own reference cluster),
list and explain the cases, render reports, and replay captures. The work is done by the
:mod:`conformance` library; this module parses options and renders."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import EXIT_FAILURE, CliError, ConnectionFailed, UsageError
from .runner import settings

if TYPE_CHECKING:
    from conformance.model import Case, CaseResult
    from conformance.runner import Report

app = typer.Typer(no_args_is_help=True)

Addr = Annotated[str | None, typer.Option(help="Address host:port.", show_default=False)]
GlobOpt = Annotated[list[str] | None, typer.Option(
    help="Case ID glob or family (NS-ROUTE-*, namesrv); repeatable, or comma-separated.")]


def _globs(values: list[str] | None) -> list[str]:
    return [g.strip() for v in values or [] for g in v.split(",") if g.strip()]


def _select(only: list[str] | None, skip: list[str] | None) -> list[Case]:
    from conformance.registry import select

    try:
        return select(_globs(only), _globs(skip))
    except KeyError as err:
        raise UsageError(str(err.args[0])) from None


def _summary_rows(doc: dict[str, Any]) -> list[list[Any]]:
    from conformance.report import summary_by_family

    return [[r["family"], r["cases"], r["MUST"], r["SHOULD"], r["INFO"], r["pass"], r["non-strict"],
             r["informational"], r["unimplemented"], r["fail"], r["deviation"], r["not-run"]]
            for r in summary_by_family(doc)]


SUMMARY_COLUMNS = ["family", "cases", "MUST", "SHOULD", "INFO", "pass", "non-strict", "info", "unimpl.",
                   "fail",
                   "deviation", "not-run"]


def _print_report(ctx: typer.Context, report: Report) -> None:
    out = settings(ctx).output
    doc = report.to_json()
    if out.format != "table":
        out.data(doc)
        return
    t = doc["target"]
    out.table(SUMMARY_COLUMNS, _summary_rows(doc),
              title=f"{t['name']}: profile {t['profile']}, answers as {t.get('version_name') or '?'}",
              justify={c: "right" for c in SUMMARY_COLUMNS[1:]})
    shown = [r for r in report.results if r.outcome.value not in ("pass", "informational", "not-run")]
    if shown:
        out.line()
        out.table(["case", "level", "outcome", "detail"],
                  [[r.case.id, r.case.level, r.outcome, r.detail] for r in shown])
    not_run = [r for r in report.results if r.outcome.value == "not-run"]
    if not_run:
        reasons: dict[str, int] = {}
        for r in not_run:
            reasons[r.detail] = reasons.get(r.detail, 0) + 1
        out.line()
        for reason, n in sorted(reasons.items(), key=lambda kv: -kv[1]):
            out.line(f"not run ({n}): {reason}")
    for note in t.get("notes", []):
        out.info(f"target: {note}")
    for err in report.cleanup_errors:
        out.warn(f"clean-up: {err}")
    if report.stale_deviations():
        out.warn(f"listed as deviations but passed: {', '.join(report.stale_deviations())}")
    verdict = "every MUST passes" if report.passed else "FAILED"
    out.info(f"{verdict}: {sum(1 for r in report.results if r.outcome.value != 'not-run')} cases run in "
             f"{report.duration:.1f} s")


@app.command()
def run(
    ctx: typer.Context,
    namesrv: Addr = None,
    broker: Annotated[str | None, typer.Option(
        help="Broker address (default: the master the name server lists).",
                                               show_default=False)] = None,
    slave: Annotated[str | None, typer.Option(help="Slave address (default: from the name server).",
                                              show_default=False)] = None,
    ha: Annotated[str | None, typer.Option(help="The master's HA address (default: brokerIP2:haListenPort).",
                                           show_default=False)] = None,
    controller: Annotated[str | None, typer.Option(help="5.x controller address (default: the broker's "
                                                   "controllerAddr).", show_default=False)] = None,
    profile: Annotated[str | None, typer.Option(help="Grade as 4.9 or 5.0 (default: from the version the "
                                                "servers answer with).", show_default=False)] = None,
    only: GlobOpt = None,
    skip: GlobOpt = None,
    strict: Annotated[bool, typer.Option(help="A missed SHOULD fails the run too.")] = False,
    fast: Annotated[bool, typer.Option(
        help="Leave out the cases that wait for minutes; shorten long waits.")] = False,
    deviations: Annotated[Path | None, typer.Option(help="Known-deviations YAML file of the target.")] = None,
    name: Annotated[str | None, typer.Option(help="The target's name in reports.")] = None,
    junit_xml: Annotated[Path | None, typer.Option("--junit-xml", help="Write JUnit XML here.")] = None,
    json_file: Annotated[Path | None, typer.Option("--json", help="Write the JSON report here.")] = None,
    html_file: Annotated[Path | None, typer.Option("--html", help="Write the HTML report here.")] = None,
    timeout_scale: Annotated[float, typer.Option(help="Multiply every case's time limit.")] = 1.0,
) -> None:
    """Grade a target: exit 0 when every MUST passes, 1 otherwise. Without --namesrv, a reference
    cluster of ours (name server, master, slave) is started in a temporary directory and graded."""
    from conformance.deviations import DeviationError, Deviations, load_deviations
    from conformance.runner import RunOptions

    if profile is not None and profile not in ("4.9", "5.0"):
        raise UsageError(f"--profile must be 4.9 or 5.0, not {profile!r}")
    if timeout_scale <= 0:
        raise UsageError("--timeout-scale must be positive")
    if namesrv is None and any((broker, slave, ha, controller)):
        raise UsageError("give --namesrv with --broker/--slave/--ha/--controller (without any address, a "
                         "reference cluster of ours is graded)")
    cases = _select(only, skip)
    try:
        devs = load_deviations(deviations) if deviations else Deviations()
    except DeviationError as err:
        raise UsageError(str(err)) from None
    options = RunOptions(fast=fast, strict=strict, deviations=devs, timeout_scale=timeout_scale,
                         request_timeout=max(5.0, settings(ctx).timeout))
    if namesrv is None:
        from conformance.refcluster import ReferenceCluster, ReferenceClusterError

        out = settings(ctx).output
        out.info("no --namesrv: starting a reference cluster of ours (name server, master, slave)")
        try:
            with ReferenceCluster() as cluster:
                assert cluster.target is not None
                target = cluster.target
                if name:
                    target = _renamed(target, name)
                report = _run(ctx, target, cases, options)
        except ReferenceClusterError as err:
            raise ConnectionFailed(f"the reference cluster did not start: {err}") from None
    else:
        from conformance.target import Target

        try:
            target = Target(name=name or namesrv, namesrv=namesrv, broker=broker, slave=slave, ha=ha,
                            controller=controller, profile=profile)
        except Exception as err:  # a malformed address
            raise UsageError(str(err)) from None
        _reachable(target)
        report = _run(ctx, target, cases, options)
    _write(report, json_file, junit_xml, html_file)
    _print_report(ctx, report)
    if not report.passed:
        raise typer.Exit(EXIT_FAILURE)


def _renamed(target: Any, name: str) -> Any:
    from dataclasses import replace

    return replace(target, name=name)


def _reachable(target: Any) -> None:
    """Exit 3 at once when the name server (or a given broker) cannot be connected to."""
    import asyncio
    import contextlib

    from wire.aio import connect, split_addr

    async def probe(addr: str) -> str | None:
        host, port = split_addr(addr)
        try:
            conn = await connect(host, port, timeout=5.0)
        except Exception as exc:
            return str(exc)
        with contextlib.suppress(Exception):
            await conn.aclose()
        return None

    for role in ("namesrv", "broker", "controller"):
        addr = getattr(target, role)
        if addr and (err := asyncio.run(probe(addr))):
            raise ConnectionFailed(f"{role}: {err}")


def _run(ctx: typer.Context, target: Any, cases: list[Case], options: Any) -> Report:
    import asyncio
    import sys

    from conformance.runner import run_suite

    out = settings(ctx).output
    live = out.format == "table" and sys.stderr.isatty()
    if not live:
        return asyncio.run(run_suite(target, cases, options))
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    bad: list[CaseResult] = []
    with Progress(TextColumn("[bold]{task.description}"), BarColumn(), MofNCompleteColumn(),
                  TimeElapsedColumn(),
                  TextColumn("{task.fields[now]}"), console=out.err, transient=True) as progress:
        task = progress.add_task("conformance", total=len(cases), now="")

        def started(case: Case) -> None:
            progress.update(task, now=f"{case.id}: {case.requirement[:60]}")

        def finished(result: CaseResult) -> None:
            progress.advance(task)
            if result.outcome.value in ("fail", "non-strict", "unimplemented"):
                bad.append(result)
                colour = "red" if result.outcome.value == "fail" else "yellow"
                progress.console.print(f"[{colour}]{result.outcome}[/] {result.case.id}: {result.detail}",
                                       markup=True, highlight=False, soft_wrap=True)

        return asyncio.run(run_suite(target, cases, options, on_start=started, on_result=finished))


def _write(report: Report, json_file: Path | None, junit: Path | None, html_file: Path | None) -> None:
    from conformance.report import html_report, junit_xml, write_json

    doc = report.to_json()
    for path in (json_file, junit, html_file):
        if path is not None and path.parent and not path.parent.exists():
            raise UsageError(f"{path}: the directory {path.parent} does not exist")
    if json_file is not None:
        write_json(doc, json_file)
    if junit is not None:
        junit.write_text(junit_xml(doc), encoding="utf-8")
    if html_file is not None:
        html_file.write_text(html_report([doc]), encoding="utf-8")


@app.command("list")
def list_(ctx: typer.Context, only: GlobOpt = None, skip: GlobOpt = None) -> None:
    """The cases: ID, family, level, the requirement in one line, and where it comes from."""
    cases = _select(only, skip)
    out = settings(ctx).output
    out.render([c.describe() for c in cases], ["id", "family", "level", "requirement", "source"],
               [[c.id, c.family, c.level, c.requirement, c.source] for c in cases])


@app.command()
def explain(ctx: typer.Context,
            case_id: Annotated[str, typer.Argument(help="A case ID, e.g. NS-ROUTE-003.")]) -> None:
    """Everything about one case: the requirement, its source, what the scenario does and needs."""
    from conformance.registry import get

    try:
        c = get(case_id)
    except KeyError as err:
        raise UsageError(str(err.args[0])) from None
    out = settings(ctx).output
    info = {**c.describe(), "scenario": c.doc, "codes": list(c.codes), "timeout": c.timeout,
            "fast": c.fast_note or ("left out with --fast" if c.slow else "")}
    if out.format != "table":
        out.data(info)
        return
    out.kv([("id", c.id), ("family", c.family), ("level", c.level), ("requirement", c.requirement),
            ("source", c.source), ("scenario", c.doc or "-"), ("needs", ", ".join(c.needs)),
            ("profiles", ", ".join(c.profiles)), ("request codes", ", ".join(map(str, c.codes)) or "-"),
            ("time limit", f"{c.timeout:g} s"), ("--fast", info["fast"] or "-")])


@app.command()
def report(
    ctx: typer.Context,
    reports: Annotated[list[Path], typer.Argument(
        help="JSON reports of conformance runs, or of replays (one per target; not both kinds).")],
    html_file: Annotated[Path | None, typer.Option("--html",
                                                   help="Write the side-by-side HTML page here.")] = None,
    junit_xml: Annotated[Path | None, typer.Option("--junit-xml",
                                                   help="Write JUnit XML of the first report.")] = None,
    title: Annotated[str, typer.Option(help="The HTML page's title.")] = "RocketMQ conformance",
) -> None:
    """Put the runs of several targets side by side (a row per case, a column per target), or
    their replays of the same captures (a row per request)."""
    from conformance.report import ReportError, html_report, load_report, report_kind
    from conformance.report import junit_xml as to_junit

    try:
        kinds = {report_kind(p) for p in reports}
        if kinds == {"replay"}:
            if junit_xml is not None:
                raise UsageError("--junit-xml: replay reports have no JUnit form")
            _replay_reports(ctx, reports, html_file, title)
            return
        if len(kinds) > 1:
            raise UsageError("give the reports of conformance runs or of replays, not both")
        docs = [load_report(p) for p in reports]
    except ReportError as err:
        raise UsageError(str(err)) from None
    if html_file is not None:
        html_file.write_text(html_report(docs, title=title), encoding="utf-8")
    if junit_xml is not None:
        junit_xml.write_text(to_junit(docs[0]), encoding="utf-8")
    out = settings(ctx).output
    if out.format != "table":
        out.data([{"target": d["target"], "passed": d["passed"], "counts": d["counts"]} for d in docs])
        return
    ids = sorted({r["id"] for d in docs for r in d["results"]})
    by = [{r["id"]: r["outcome"] for r in d["results"]} for d in docs]
    differ = [i for i in ids if len({b.get(i) for b in by}) > 1]
    outcomes = ("pass", "non-strict", "informational", "unimplemented", "fail", "deviation", "not-run")
    out.table(["target", "passed", *SUMMARY_COLUMNS[5:]],
              [[d["target"]["name"], "yes" if d["passed"] else "NO",
                *(d["counts"].get(o, 0) for o in outcomes)] for d in docs])
    if differ and len(docs) > 1:
        out.line()
        out.table(["case", *(d["target"]["name"] for d in docs)],
                  [[i, *(b.get(i, "-") for b in by)] for i in differ], title="where the targets differ")


def _replay_reports(ctx: typer.Context, paths: list[Path], html_file: Path | None, title: str) -> None:
    """``report`` of replay JSONs: the side-by-side page and a table of counts per target."""
    from conformance.report import REPLAY_OK, REPLAY_STYLE, html_replay_report, load_replay_report

    docs = [load_replay_report(p) for p in paths]
    if html_file is not None:
        page_title = "RocketMQ capture replay" if title == "RocketMQ conformance" else title
        html_file.write_text(html_replay_report(docs, title=page_title), encoding="utf-8")
    out = settings(ctx).output
    if out.format != "table":
        out.data([{"target": d["target"], "unexplained": d.get("unexplained", 0),
                   "counts": d.get("counts", {})} for d in docs])
        return
    verdicts = list(REPLAY_STYLE)
    out.table(["target", "unexplained", *verdicts],
              [[d["target"].get("name", "?"), d.get("unexplained", 0),
                *(d.get("counts", {}).get(v, 0) for v in verdicts)] for d in docs],
              justify={v: "right" for v in ["unexplained", *verdicts]})
    if len(docs) > 1:
        keyed = [{(v["capture"], v["connection"], v["row"]): v for v in d["verdicts"]} for d in docs]
        keys = sorted({k for m in keyed for k in m}, key=lambda k: (str(k[0]), int(k[1]), int(k[2])))
        differ = [k for k in keys if len({(m[k]["verdict"] if k in m else None) for m in keyed}) > 1
                  and any(k in m and m[k]["verdict"] not in REPLAY_OK for m in keyed)]
        if differ:
            out.line()
            out.table(["capture", "row", "request", *(d["target"].get("name", "?") for d in docs)],
                      [[k[0], k[2], next(m[k].get("code_name") or "-" for m in keyed if k in m),
                        *(m[k]["verdict"] if k in m else "-" for m in keyed)] for k in differ],
                      title="findings where the targets differ")


# ---------------------------------------------------------------------------- replay


def _capture_paths(items: list[Path]) -> list[Path]:
    out: list[Path] = []
    for item in items:
        if item.is_dir():
            found = sorted(p for p in item.iterdir() if p.suffix in (".pcap", ".pcapng"))
            if not found:
                raise UsageError(f"{item}: no .pcap or .pcapng file in it")
            out += found
        elif item.is_file():
            out.append(item)
        else:
            raise UsageError(f"{item}: no such file or directory")
    return out


def _maps(items: list[str] | None) -> dict[int, str]:
    from wire.aio import split_addr

    out: dict[int, str] = {}
    for item in items or []:
        port, sep, addr = item.partition("=")
        if not sep or not port.strip().isdigit():
            raise UsageError(f"--map {item!r}: expected PORT=HOST:PORT")
        try:
            split_addr(addr)
        except Exception:
            raise UsageError(f"--map {item!r}: {addr!r} is not a host:port address") from None
        out[int(port)] = addr.strip()
    return out


@app.command()
def replay(
    ctx: typer.Context,
    captures: Annotated[list[Path], typer.Argument(help="pcap/pcapng files, or folders of them.")],
    namesrv: Addr = None,
    broker: Addr = None,
    slave: Addr = None,
    controller: Addr = None,
    map_: Annotated[list[str] | None, typer.Option(
        "--map", help="PORT=HOST:PORT: send what went to the recorded server port there; repeatable. "
        "Default: by role (9876 name server, 10911 broker, 10921 slave, 9878 controller, ...).")] = None,
    setup: Annotated[str, typer.Option(
        help="Set-up file, 'auto' (beside the capture, else shipped for ../shared captures) or "
        "'none'.")] = "auto",
    rules: Annotated[Path | None, typer.Option(help="Normalisation rules added to the shipped ones.")] = None,
    all_connections: Annotated[bool, typer.Option(
        help="Replay the connections between the recorded servers too (registrations, slave sync).")] = False,
    learn_volatile: Annotated[bool, typer.Option(
        help="Replay twice against the target and print rules for the answer fields that varied.")] = False,
    json_file: Annotated[Path | None, typer.Option("--json", help="Write the verdicts as JSON here.")] = None,
    html_file: Annotated[Path | None, typer.Option(
        "--html", help="Write the verdicts as an HTML page here (a row per request, the differences "
        "shown).")] = None,
    wait: Annotated[float, typer.Option(help="Seconds to wait for each answer.")] = 10.0,
    local_cluster: Annotated[Path | None, typer.Option(
        "--local-cluster", help="Replay against the local cluster of this directory (mqctl cluster up "
        "--dir DIR): its name server, broker-a and broker-a-s, which the replay freezes (SIGSTOP), "
        "stops and starts again for the captures recorded so (the 09-* SYNC_MASTER ones).")] = None,
) -> None:
    """Re-send the client requests of captures to a target and compare the answers with the
    recorded ones (exit 1 when a difference is not explained). Without --namesrv, a reference
    cluster of ours is started and replayed against."""
    import asyncio

    from conformance.replay import learn_volatile as learn
    from conformance.replay import replay_async
    from conformance.replay.rules import RuleError, load_rules
    from conformance.replay.setup import SetupError

    paths = _capture_paths(captures)
    mapping = _maps(map_)
    if setup not in ("auto", "none") and not Path(setup).is_file():
        raise UsageError(f"--setup {setup!r}: not a file (or 'auto', 'none')")
    try:
        ruleset = load_rules()
        if rules is not None:
            ruleset = ruleset.merged(load_rules(rules))
    except RuleError as err:
        raise UsageError(str(err)) from None
    kw: dict[str, Any] = {"mapping": mapping, "setup": None if setup == "none" else setup, "rules": ruleset,
                          "all_connections": all_connections, "timeout": wait}

    def run(target: Any) -> Any:
        try:
            if learn_volatile:
                return asyncio.run(learn(paths, target, **kw))
            return asyncio.run(replay_async(paths, target, **kw))
        except SetupError as err:
            raise CliError(str(err)) from None

    if local_cluster is not None and any((namesrv, broker, slave, controller)):
        raise UsageError("--local-cluster names the target: not with --namesrv, --broker, --slave or "
                         "--controller")
    if namesrv is None and any((broker, slave, controller)):
        raise UsageError("give --namesrv with --broker/--slave/--controller")
    if local_cluster is not None:
        from conformance.target import Target

        from .local import LocalClusterError, cluster_dir, process_thaw, slave_control

        directory = cluster_dir(local_cluster)
        try:
            control = slave_control(directory, "broker-a-s")
            procs = {p.name: p for p in _local_processes(directory)}
        except LocalClusterError as err:
            raise UsageError(f"--local-cluster {local_cluster}: {err}") from None
        target = Target(name=str(directory), namesrv=procs["namesrv"].addr, broker=procs["broker-a"].addr,
                        slave=procs["broker-a-s"].addr)
        _reachable(target)
        kw["slave"] = control
        before = control.state
        try:
            result = run(target)
        finally:
            if control.state == "frozen":
                process_thaw(directory, "broker-a-s")
                control.state = "up"
        if control.state != before:  # the slave as it was found (started again after the stopped captures)
            try:
                settings(ctx).output.info(f"set-up: {asyncio.run(control(before))}")
            except LocalClusterError as err:
                settings(ctx).output.warn(f"broker-a-s was left {control.state}: {err}")
    elif namesrv is None:
        from conformance.refcluster import ReferenceCluster, ReferenceClusterError

        settings(ctx).output.info("no --namesrv: starting a reference cluster of ours (name server, master, "
                                  "slave)")
        try:
            with ReferenceCluster() as cluster:
                result = run(cluster.target)
        except ReferenceClusterError as err:
            raise ConnectionFailed(f"the reference cluster did not start: {err}") from None
    else:
        from conformance.target import Target

        try:
            target = Target(name=namesrv, namesrv=namesrv, broker=broker, slave=slave, controller=controller)
        except Exception as err:
            raise UsageError(str(err)) from None
        _reachable(target)
        result = run(target)
    out = settings(ctx).output
    if learn_volatile:
        import yaml

        out.line(yaml.safe_dump(result, sort_keys=False, allow_unicode=True, width=100).rstrip())
        return
    _print_replay(ctx, result, json_file, html_file)
    if result.unexplained:
        raise typer.Exit(EXIT_FAILURE)


def _local_processes(directory: Path) -> Any:
    import asyncio

    from .local import cluster_status

    return asyncio.run(cluster_status(directory)).processes


def _print_replay(ctx: typer.Context, report: Any, json_file: Path | None, html_file: Path | None) -> None:
    from conformance.report import html_replay_report, write_json

    doc = report.to_json()
    if json_file is not None:
        write_json(doc, json_file)
    if html_file is not None:
        html_file.write_text(html_replay_report([doc]), encoding="utf-8")
    out = settings(ctx).output
    if out.format != "table":
        out.data(doc)
        return
    verdicts = ("match", "explained", "closed-as-recorded", "skipped", "differ", "missing", "extra")
    per: dict[str, dict[str, int]] = {}
    for v in report.verdicts:
        per.setdefault(v.capture, {}).setdefault(v.verdict, 0)
        per[v.capture][v.verdict] += 1
    out.table(["capture", *verdicts],
              [[c, *(counts.get(v, 0) for v in verdicts)] for c, counts in per.items()],
              justify={v: "right" for v in verdicts})
    bad = report.unexplained
    if bad:
        out.line()
        rows = []
        for v in bad:
            detail = "; ".join(str(d) for d in v.diffs[:4]) or v.reason
            rows.append([v.capture, v.number, v.to_json()["code_name"] or "-", v.verdict, detail])
        out.table(["capture", "row", "request", "verdict", "detail"], rows)
    for line in report.setup:
        out.info(f"set-up: {line}")
    total = len(report.verdicts)
    out.info(f"{total - len(bad)} of {total} requests as recorded (or explained, or skipped with the "
             f"reason); {len(bad)} unexplained")
