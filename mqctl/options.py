# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Command options that several nouns share, declared once: broker addresses (checked as
``host:port`` when parsed, so that a broker *name* given where an address belongs is a usage
error, not a failed connection), clusters, ``--watch``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = ["BrokerAddrOpt", "ClusterOpt", "MasterAddrOpt", "WatchOpt", "check_addr", "parse_time"]


def check_addr(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> Any:
    """A typer callback: ``value`` must be a ``host:port`` address (usage error otherwise)."""
    if value is None:
        return None
    from .settings import parse_addr

    return parse_addr(str(value), max(param.opts, key=len), names="a broker name")


BrokerAddrOpt = Annotated[str | None, typer.Option(
    "--broker", "-b", help="This broker address (host:port).", callback=check_addr)]
MasterAddrOpt = Annotated[str | None, typer.Option(
    "--broker", "-b", help="This master broker address (host:port).", callback=check_addr)]
ClusterOpt = Annotated[str | None, typer.Option("--cluster", "-c", help="Every master of this cluster.")]
WatchOpt = Annotated[float | None, typer.Option(
    "--watch", "-w", metavar="SECONDS", help="Redraw every SECONDS until Ctrl-C.")]


def parse_time(text: str, what: str) -> int:
    """A point in time as milliseconds since the epoch: a number of milliseconds, an ISO date and
    time (``2026-11-22T09:57:42``, ``2026-11-22 09:57:42.397``, local time unless it has a zone)
    or mqadmin's ``yyyy-MM-dd#HH:mm:ss:SSS``; a usage error naming ``what`` otherwise."""
    from datetime import datetime

    from .errors import UsageError

    t = text.strip()
    if t.lstrip("-").isdigit():
        value = int(t)
        if value < 0:
            raise UsageError(f"{what}: {text!r} is before the epoch")
        return value
    try:
        if "#" in t:  # UtilAll.YYYY_MM_DD_HH_MM_SS_SSS
            dt = datetime.strptime(t, "%Y-%m-%d#%H:%M:%S:%f")
        else:
            dt = datetime.fromisoformat(t)
    except ValueError:
        raise UsageError(f"{what}: {text!r} is not a time (milliseconds since the epoch, "
                         "2026-11-22T09:57:42 or mqadmin's 2026-11-22#09:57:42:000)") from None
    return int(dt.timestamp() * 1000)
