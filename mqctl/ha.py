# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl ha``: master/slave replication status."""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo
from typing import TYPE_CHECKING, Annotated, TypeVar

import typer

from .fmt import human_ms, java_fixed
from .runner import settings, watch

if TYPE_CHECKING:
    from wire.admin.ha import HAStatus

    from .output import Output

app = typer.Typer(no_args_is_help=True)
T = TypeVar("T")

SLAVE_COLUMNS = ["#SlaveAddr", "#SlaveAckOffset", "#Diff", "#TransferSpeed(KB/s)", "#Status",
                 "#TransferFromWhere"]


def _opt(value: T | None, show: Callable[[T], str] = str) -> str:
    """A figure as ``show`` writes it, or ``-`` where a 4.x broker does not give it."""
    return "-" if value is None else show(value)


def _kb_s(value: float) -> str:
    return java_fixed(value, 2)


def _source_line(s: HAStatus) -> list[tuple[str, str]]:
    from wire.admin.ha import SOURCE_HA

    return [] if s.source == SOURCE_HA else [("#Source", f"{s.source} (4.x broker: offsets compared)")]


def master_lines(s: HAStatus) -> list[tuple[str, str]]:
    """mqadmin haStatus, master part: the summary lines."""
    return [("#MasterAddr", s.addr), ("#MasterCommitLogMaxOffset", str(s.master_commit_log_max_offset)),
            ("#SlaveNum", str(len(s.slaves))), ("#InSyncSlaveNum", str(s.in_sync_slave_nums)),
            *_source_line(s)]


def slave_rows(s: HAStatus) -> list[list[str]]:
    """mqadmin haStatus, master part: one row per slave connection."""
    return [[c.addr, str(c.ack_offset), str(c.diff),
             _opt(c.transfer_kb_s, _kb_s),
             "OK" if c.in_sync else "Fall Behind", _opt(c.transfer_from_where)] for c in s.slaves]


def client_lines(s: HAStatus, tz: tzinfo | None = None) -> list[tuple[str, str]]:
    """mqadmin haStatus, slave part."""
    c = s.client
    if c is None:
        return [("#MasterAddr", "")]
    return [("#MasterAddr", c.master_addr), ("#CommitLogMaxOffset", str(c.max_offset)),
            ("#TransferSpeed(KB/s)", _opt(c.transfer_kb_s, _kb_s)),
            ("#LastReadTime", _opt(c.last_read_timestamp, lambda ms: human_ms(ms, tz))),
            ("#LastWriteTime", _opt(c.last_write_timestamp, lambda ms: human_ms(ms, tz))),
            ("#MasterFlushOffset", _opt(c.master_flush_offset)), *_source_line(s)]


def error_text(s: HAStatus) -> str:
    if not s.supported:
        return s.error or f"broker {s.addr} does not support HA status"
    return f"{s.addr}: {s.error}"


def render_status(out: Output, statuses: tuple[HAStatus, ...], *, errors: bool = True) -> None:
    for i, s in enumerate(statuses):
        if s.error is not None:
            if errors:
                out.error(error_text(s))
            continue
        if i:
            out.line()
        if s.master:
            out.kv(master_lines(s))
            out.table(SLAVE_COLUMNS, slave_rows(s))
        else:
            out.kv(client_lines(s))


@app.command()
def status(
    ctx: typer.Context,
    broker: Annotated[str | None, typer.Option("--broker", "-b", help="Broker address (host:port).")] = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", "-c", help="Every broker of this cluster.")] = None,
    watch_s: Annotated[float | None, typer.Option(
        "--watch", "-w", metavar="SECONDS", help="Redraw every SECONDS until Ctrl-C.")] = None,
) -> None:
    """Replication status of a broker or a cluster (GET_BROKER_HA_STATUS, 5.x; mqadmin haStatus).
    A 4.x broker's status is put together from its broker name's runtime info."""
    from wire.admin import ha as api

    from .errors import CliError, UsageError

    if (broker is None) == (cluster is None):
        raise UsageError("give one of --broker/-b or --cluster/-c")
    out = settings(ctx).output
    failed: list[str] = []

    def render(result: tuple[HAStatus, ...]) -> None:
        # once: the failures end the command as its one error line; watched: shown every round
        failed[:] = [error_text(s) for s in result if s.error is not None]
        if out.format != "table":
            out.data(result)
        else:
            render_status(out, result, errors=bool(watch_s))

    watch(ctx, watch_s, api.ha_status, render, broker=broker, cluster=cluster)
    if failed:
        raise CliError("; ".join(failed))
