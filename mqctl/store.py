# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl store``: read a broker's store directory offline."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .fmt import dash, human_ms
from .runner import settings

if TYPE_CHECKING:
    from wire.admin.store import StoreReport

    from .output import Output

app = typer.Typer(no_args_is_help=True)


def _time(ms: int | None) -> str:
    return "-" if not ms else human_ms(ms)


def render_report(out: Output, r: StoreReport, *, hex_: bool = False) -> None:
    from .message import body_text

    cp = r.checkpoint
    out.kv([
        ("Store:", r.root),
        ("CommitLog:", r.commitlog_dir),
        ("Offsets:", f"{dash(r.min_offset)} .. {dash(r.max_offset)}"),
        ("Records:", r.records),
        ("Abort file:", "present (a broker runs here, or the last one did not stop cleanly)"
         if r.abort_file else "absent"),
        ("Checkpoint:", "-" if cp is None else
         f"physic {_time(cp.physic_msg_timestamp)}, logics {_time(cp.logics_msg_timestamp)}, "
         f"index {_time(cp.index_msg_timestamp)}"),
    ])
    sections: list[tuple[str, list[str], list[list[str]]]] = [
        ("CommitLog files", ["#File", "#Size", "#Records", "#Used", "#Blank", "#First Store", "#Last Store"],
         [[f.name, str(f.size), str(f.records), str(f.used), dash(f.blank), _time(f.first_store_timestamp),
           _time(f.last_store_timestamp)] for f in r.commitlog]),
        ("Consume queues", ["#Topic", "#QID", "#Files", "#Entries", "#Min Offset", "#Max Offset"],
         [[q.topic, str(q.queue_id), str(q.files), str(q.entries), str(q.min_offset), str(q.max_offset)]
          for q in r.consume_queues]),
        ("Consumer offsets", ["#Group", "#Topic", "#QID", "#Offset", "#Max Offset", "#Lag"],
         [[c.group, c.topic, str(c.queue_id), str(c.offset), dash(c.max_offset), dash(c.lag)]
          for c in r.consumer_offsets]),
        ("Config files", ["#File", "#Entries", "#Error"],
         [[c.name, dash(c.entries), c.error or ""] for c in r.configs]),
        ("Index files", ["#File", "#Begin", "#End", "#Entries"],
         [[i.name, _time(i.begin_timestamp), _time(i.end_timestamp), str(max(i.index_count - 1, 0))]
          for i in r.index_files]),
    ]
    if r.messages:
        sections.append(("Messages", ["#Offset", "#Topic", "#QID", "#Queue Offset", "#MsgId", "#Tags",
                                      "#Store Time", "#Body"],
                         [[str(m.commit_log_offset), m.topic, str(m.queue_id), str(m.queue_offset), m.msg_id,
                           m.tags or "", human_ms(m.store_timestamp), body_text(m, hex_)]
                          for m in r.messages]))
    sections.append(("Problems", ["#File", "#File Offset", "#Offset", "#Kind", "#Reason"],
                     [[p.file, str(p.file_offset), dash(p.offset), p.kind, p.reason] for p in r.problems]))
    for title, cols, rows in sections:
        if not rows:
            continue
        out.line()
        out.table(cols, rows, title=title)


@app.command()
def inspect(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="The store root (storePathRootDir).")],
    commitlog: Annotated[Path | None, typer.Option(
        help="The commit-log directory, when it is not <root>/commitlog (storePathCommitLog).")] = None,
    messages: Annotated[bool, typer.Option("--messages", "-m", help="Also print the records.")] = False,
    limit: Annotated[int, typer.Option(help="At most this many records with --messages.")] = 100,
    hex_: Annotated[bool, typer.Option("--hex", help="Bodies in hex.")] = False,
) -> None:
    """CommitLog files, consume queues, offsets, configs, checkpoint and index files of a store,
    with every corrupt record or dangling queue entry and where it is. Exits 1 when there is one."""
    from wire.admin import store as api

    from .errors import CliError
    from .progress import progress

    out = settings(ctx).output
    with progress(out, None, "reading") as done:
        report = api.inspect_store(directory, commitlog_dir=commitlog, messages=messages, limit=limit,
                                   on_progress=done)
    if out.format != "table":
        out.data(report)
    else:
        render_report(out, report, hex_=hex_)
    if report.problems:
        first = report.problems[0]
        raise CliError(f"{len(report.problems)} problem(s); first: {first.file} at {first.file_offset}: "
                       f"{first.kind}: {first.reason}")
