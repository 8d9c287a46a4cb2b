# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl analyze``: the capture pipeline on Spark (:mod:`analysis`), imported only when run.

``mqctl analyze CAPTURE-OR-DIR... --out DIR [--master URL] [--partitions N] [--conf K=V] [--report]``
writes the Parquet tables and ``report.html`` under DIR and prints the main metrics (tables, or one
JSON document with the global ``-o json``). Inputs are local paths or any URL Spark's Hadoop file
systems read (``hdfs://``, ``s3a://`` with its connector given by ``--conf``). ``--follow DIR`` keeps
analysing the capture files that arrive in DIR (Spark Structured Streaming) until Ctrl-C. Exit codes:
0; 1 when the job fails or a capture is damaged; 2 for bad arguments or a missing pyspark.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .errors import CliError, UsageError

if TYPE_CHECKING:
    from .output import Output


def analyze(
    ctx: typer.Context,
    inputs: Annotated[
        list[str] | None,
        typer.Argument(help="Capture files, directories or globs (file:// too).", show_default=False),
    ] = None,
    out: Annotated[
        Path, typer.Option("--out", help="Directory for the Parquet tables and report.html.")
    ] = Path("analysis-out"),
    master: Annotated[
        str, typer.Option(help="Spark master: local[*], local[N], spark://host:port, yarn.")
    ] = "local[*]",
    partitions: Annotated[int | None, typer.Option(help="Shuffle partitions (default: 2 per core).")] = None,
    report: Annotated[bool, typer.Option(help="Write report.html (plots and tables).")] = True,
    follow: Annotated[
        Path | None,
        typer.Option(help="Keep analysing the capture files that arrive in this directory (Ctrl-C stops)."),
    ] = None,
    port: Annotated[
        list[str] | None,
        typer.Option("--port", help="ROLE=PORT[,PORT] (see 'pcap decode --help'). Repeatable."),
    ] = None,
    conf: Annotated[
        list[str] | None,
        typer.Option("--conf", help="KEY=VALUE: a Spark setting (spark.jars.packages, spark.hadoop.*, "
                                    "spark.executor.memory, ...). Repeatable."),
    ] = None,
) -> None:
    """Analyse captures with Spark: Parquet tables, metrics, an HTML report."""
    from .pcap import _roles, _settings

    settings = _settings(ctx)
    output = settings.output
    if partitions is not None and partitions < 1:
        raise UsageError("--partitions must be at least 1")
    if follow is None and not inputs:
        raise UsageError("name at least one capture, directory or glob (or --follow DIR)")
    roles = _roles(port)
    settings_conf: dict[str, str] = {}
    for item in conf or []:
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise UsageError(f"--conf {item!r}: expected KEY=VALUE")
        settings_conf[key.strip()] = value
    try:
        import pyspark  # noqa: F401
    except ImportError:
        raise UsageError(
            "mqctl analyze needs pyspark: pip install 'mqctl[analysis]' (scripts/bootstrap installs it)"
        ) from None
    from analysis.job import AnalysisError, failure_reason

    try:
        if follow is not None:
            from analysis.follow import follow as run_follow

            output.streaming = True  # one JSON document per line (a YAML document per batch)
            run_follow(
                follow,
                out,
                master=master,
                partitions=partitions,
                roles=roles,
                console=output.err,
                on_update=lambda m: _follow_update(output, m),
                conf=settings_conf or None,
            )
            return
        from analysis import analyze as run

        result = run(
            list(inputs or []),
            out,
            master=master,
            partitions=partitions,
            report=report,
            roles=roles,
            console=output.err,
            conf=settings_conf or None,
        )
    except AnalysisError as err:
        raise CliError(str(err)) from None
    except Exception as err:  # a failed Spark job: one line, the first line of Spark's reason
        name = type(err).__name__
        if name not in (
            "Py4JJavaError",
            "PySparkException",
            "AnalysisException",
            "CaptureFileError",
        ) and not name.endswith("Exception"):
            raise
        raise CliError(f"the Spark job failed: {failure_reason(err)}") from None
    if output.format == "table":
        _render(output, result)
    else:
        output.data(result)


def _follow_update(out: Output, r: dict[str, Any]) -> None:
    """One micro-batch of --follow: the metrics so far (tables, or one JSON document per line), or a
    warning for a batch that failed (the follow goes on)."""
    if "error" in r:
        out.warn(f"batch {r['batch']} ({', '.join(r['files'])}): {r['error']}")
    elif out.format == "table":
        _render(out, r)
    else:
        out.data(r)


def _render(out: Output, r: dict[str, Any]) -> None:
    from rich.table import Table

    console = out.out
    m = r["metrics"]
    s = m["summary"]
    rows = r.get("rows", {})
    console.print(
        f"{len(r.get('captures', []))} capture(s), {r.get('splits', 0)} split(s) in "
        f"{r.get('seconds', 0)} s on {r.get('master', '')}: "
        + ", ".join(f"{n:,} {k}" for k, n in rows.items()),
        markup=False,
        highlight=False,
    )
    whole = [c["path"] for c in r.get("captures", []) if str(c.get("read", "")).startswith("whole (gzip")]
    if whole:
        console.print(f"read whole by one task each (gzip'd: no random access to cut them into byte ranges): "
                      f"{', '.join(whole)}", markup=False, highlight=False)

    def table(title: str, cols: list[str], data: list[dict[str, Any]], limit: int = 15) -> None:
        if not data:
            return
        t = Table(title=title, title_justify="left")
        for c in cols:
            t.add_column(c, overflow="fold")
        for row in data[:limit]:
            t.add_row(*["" if row.get(c) is None else str(row.get(c)) for c in cols])
        console.print(t)

    table(
        "Requests by code",
        ["code", "code_name", "requests", "unanswered", "errors", "error_rate", "p50_ms", "p95_ms", "p99_ms"],
        m["codes"],
    )
    table(
        "Throughput per topic",
        ["topic", "source", "messages", "bytes", "messages_per_s", "bytes_per_s"],
        m["throughput"],
    )
    table(
        "HA streams",
        ["stream", "master", "slave", "variant", "transfers", "bytes", "master_offset", "slave_offset"],
        m["ha_streams"],
    )
    table("Consumer lag", ["group", "topic", "queue_id", "server", "lag"], m["consumer_lag"])
    table("Clients", ["language", "version_name", "connections", "requests"], m["clients"])
    table("Problems", ["verdict", "count", "bytes"], m["problems"])
    if s.get("commands") is not None and r.get("report"):
        console.print(f"report: {r['report']}", markup=False, highlight=False)
