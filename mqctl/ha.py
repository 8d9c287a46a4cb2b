# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl ha``: master/slave replication status, and proof that a slave is a faithful copy."""

from __future__ import annotations

import sys
from collections.abc import Callable
from datetime import tzinfo
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer

from .fmt import human_ms, java_fixed
from .options import check_addr
from .runner import settings, watch

if TYPE_CHECKING:
    from wire.admin.ha import HASlave, HAStatus, VerifyResult

    from .output import Output

app = typer.Typer(no_args_is_help=True)
T = TypeVar("T")

#: mqadmin haStatus's columns
SLAVE_COLUMNS = ["#SlaveAddr", "#SlaveAckOffset", "#Diff", "#TransferSpeed(KB/s)", "#Status",
                 "#TransferFromWhere"]
#: how long each slave has been behind: a reference master reports it (a Java one does not, and its
#: table stays exactly mqadmin's)
LAG_COLUMN = "#Behind"
BAR_WIDTH = 30


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


def human_duration(ms: int) -> str:
    """``850ms``, ``12.3s``, ``4m05s``, ``2h07m``."""
    if ms < 1000:
        return f"{ms}ms"
    if ms < 60_000:
        return f"{ms / 1000:.1f}s"
    s = ms // 1000
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


def human_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} TiB"  # pragma: no cover - the loop returns at GiB


def _has_lag(s: HAStatus) -> bool:
    return any(c.lag_ms is not None for c in s.slaves)


def slave_columns(s: HAStatus) -> list[str]:
    return [*SLAVE_COLUMNS, LAG_COLUMN] if _has_lag(s) else SLAVE_COLUMNS


def slave_rows(s: HAStatus) -> list[list[str]]:
    """mqadmin haStatus, master part: one row per slave connection (and how long it is behind,
    where the master says)."""
    lag = _has_lag(s)
    return [[c.addr, str(c.ack_offset), str(c.diff),
             _opt(c.transfer_kb_s, _kb_s),
             "OK" if c.in_sync else "Fall Behind", _opt(c.transfer_from_where),
             *([_opt(c.lag_ms, human_duration)] if lag else [])] for c in s.slaves]


def progress_line(c: HASlave) -> str | None:
    """A bar for a slave still catching up: how much of its copy it holds, what is left, how fast
    it goes and when it should be done; None for a slave in step with its master."""
    if c.diff <= 0:
        return None
    fraction = c.progress
    speed = c.transfer_kb_s * 1024 if c.transfer_kb_s else None
    parts = [c.addr]
    if fraction is not None:
        done = int(fraction * BAR_WIDTH)
        parts.append("[" + "#" * done + "-" * (BAR_WIDTH - done) + f"] {fraction * 100:5.1f}%")
    parts.append(f"{human_bytes(c.diff)} to go")
    if speed:
        parts.append(f"{human_bytes(speed)}/s, about {human_duration(int(c.diff / speed * 1000))} left")
    return "  ".join(parts)


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
            out.table(slave_columns(s), slave_rows(s))
            bars = [b for b in (progress_line(c) for c in s.slaves) if b]
            if bars:
                out.line("#CatchingUp")
                for b in bars:
                    out.line(f"  {b}")
            for c in s.slaves:
                if c.problem:
                    out.warn(f"slave {c.addr}: {c.problem}")
        else:
            out.kv(client_lines(s))


@app.command()
def status(
    ctx: typer.Context,
    broker: Annotated[str | None, typer.Option("--broker", "-b", help="Broker address (host:port).",
                                               callback=check_addr)] = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", "-c", help="Every broker of this cluster.")] = None,
    watch_s: Annotated[float | None, typer.Option(
        "--watch", "-w", metavar="SECONDS", help="Redraw every SECONDS until Ctrl-C.")] = None,
) -> None:
    """Replication status of a broker or a cluster (GET_BROKER_HA_STATUS; mqadmin haStatus): each
    slave's acknowledged offset, how far behind it is in bytes and time, in sync or not, and a
    progress bar while it catches up (redrawn with --watch). A 4.x Java broker's status is put
    together from its broker name's runtime info."""
    from wire.admin import ha as api

    from .errors import CliError, UsageError

    if (broker is None) == (cluster is None):
        raise UsageError("give one of --broker/-b or --cluster/-c")
    from wire.admin.common import Outcome

    from .runner import finish

    out = settings(ctx).output

    def render(result: tuple[HAStatus, ...]) -> None:
        # one broker asked once: its failure is the command's error line (below)
        for s in result if len(result) > 1 or watch_s else ():
            if s.error is not None:
                out.warn(error_text(s))
        if out.format != "table":
            out.data(result)
        else:
            render_status(out, result, errors=False)

    last = watch(ctx, watch_s, api.ha_status, render, broker=broker, cluster=cluster)
    if last is None:
        return
    if len(last) == 1 and last[0].error is not None:  # one broker asked: its failure is the command's
        raise CliError(error_text(last[0]))
    finish([Outcome(s.addr, s.error is None, s.error, unreachable=s.unreachable) for s in last], "ha status",
           servers="brokers")


FILE_COLUMNS = ["#File", "#From", "#To", "#Records", "#MasterCRC", "#SlaveCRC", "#Match"]
VERDICT_COLUMNS = ["#SlaveAddr", "#BID", "#MasterMaxOffset", "#SlaveMaxOffset", "#Diff", "#BytesCompared",
                   "#Verdict"]


def verdict_rows(result: VerifyResult) -> list[list[str]]:
    rows = []
    for v in result.slaves:
        if v.error is not None:
            verdict = f"error: {v.error}"
        elif v.faithful:
            verdict = "faithful copy" if result.bytes_checked else "same end"
        elif v.diff:
            verdict = "behind" if v.diff > 0 else "ahead of its master"
        else:
            verdict = "BYTES DIFFER"
        rows.append([v.addr, str(v.broker_id), _opt(v.master_max_offset), _opt(v.slave_max_offset),
                     _opt(v.diff), str(v.bytes_compared) if result.bytes_checked else "-", verdict])
    return rows


@app.command()
def verify(
    ctx: typer.Context,
    broker_name: Annotated[str, typer.Argument(help="The broker name (brokerName) whose slaves to check.")],
    check_bytes: Annotated[bool, typer.Option(
        "--bytes", help="Also compare every record both hold (VIEW_MESSAGE_BY_ID on master and slave), "
        "a CRC32 per CommitLog file.")] = False,
) -> None:
    """Prove a slave is a faithful copy of its master: the CommitLog ends compared and, with
    --bytes, the bytes of the range both hold. Exits 1 unless every slave is."""
    from wire.admin import ha as api

    from .errors import CliError
    from .runner import run

    out = settings(ctx).output
    progress_bar = None
    if check_bytes and out.format == "table" and sys.stderr.isatty():
        from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

        progress_bar = Progress("comparing", BarColumn(), DownloadColumn(), TimeRemainingColumn(),
                                console=out.err, transient=True)
    task: list[Any] = []  # the bar's TaskID, once the total is known

    def step(done: int, total: int) -> None:
        if progress_bar is None:
            return
        if not task:
            task.append(progress_bar.add_task("", total=total))
        progress_bar.update(task[0], completed=done, total=total)

    if progress_bar is not None:
        with progress_bar:
            result = run(ctx, api.ha_verify, broker_name=broker_name, check_bytes=check_bytes, progress=step)
    else:
        result = run(ctx, api.ha_verify, broker_name=broker_name, check_bytes=check_bytes)
    if out.format != "table":
        out.data(result)
    else:
        out.kv([("#BrokerName", result.broker_name), ("#MasterAddr", result.master_addr)])
        out.table(VERDICT_COLUMNS, verdict_rows(result))
        for v in result.slaves:
            if v.files:
                out.line()
                out.table(FILE_COLUMNS, [[f.name, str(f.start), str(f.end), str(f.records),
                                          f"{f.master_crc:08x}", f"{f.slave_crc:08x}",
                                          "yes" if f.match else f"NO (from {f.first_difference})"]
                                         for f in v.files], title=f"{v.addr}: CommitLog files")
    if not result.slaves:
        raise CliError(f"{broker_name} has no slave registered")
    if not result.faithful:
        bad = [v.addr for v in result.slaves if not v.faithful]
        raise CliError(f"not a faithful copy of {result.master_addr}: {', '.join(bad)}")


# ---------------------------------------------------------------------- controller mode (5.x)
# The SyncStateSet and the epochs are replication status too: the same commands as
# ``mqctl controller sync-state-set`` and ``mqctl controller epochs``.
from .controller import epochs as _epochs  # noqa: E402
from .controller import sync_state_set as _sync_state_set  # noqa: E402

app.command("sync-state-set")(_sync_state_set)
app.command("epochs")(_epochs)
