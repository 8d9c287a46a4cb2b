# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Command options that several nouns share, declared once: broker addresses (checked as
``host:port`` when parsed, so that a broker *name* given where an address belongs is a usage
error, not a failed connection), clusters, ``--watch``."""

from __future__ import annotations

from typing import Annotated, Any

import typer

__all__ = ["BrokerAddrOpt", "ClusterOpt", "MasterAddrOpt", "WatchOpt", "check_addr"]


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
