# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl namesrv``: run a reference name server, and talk to any name server."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from .errors import UsageError
from .serving import parse_listen, parse_sets

app = typer.Typer(no_args_is_help=True)


@app.command()
def start(
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="namesrv.properties (RocketMQ's own format).")] = None,
    listen: Annotated[str | None, typer.Option(
        help="HOST:PORT to listen on. Default: 0.0.0.0 and the config's listenPort (9876).")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE overriding the config file; repeatable.")] = None,
    log_file: Annotated[Path | None, typer.Option(help="Also log to this file.")] = None,
) -> None:
    """Run a reference name server in the foreground until SIGINT/SIGTERM."""
    from reference_broker.config import ConfigError, NamesrvConfig
    from reference_broker.runtime import run_foreground, setup_logging

    setup_logging(log_file)
    overrides = parse_sets(set_)
    try:
        cfg = NamesrvConfig.load(config, overrides) if config else NamesrvConfig(overrides=overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    host, port = parse_listen(listen, cfg.listen_port)
    for warning in cfg.unknown:
        typer.echo(f"warning: {warning}", err=True)

    def make():  # type: ignore[no-untyped-def]
        from reference_broker.namesrv import NameServer

        return NameServer(cfg, host=host, port=port)

    def started(ns) -> None:  # type: ignore[no-untyped-def]
        typer.echo(f"The Name Server boot success. listening on {host}:{ns.port}", err=True)

    raise typer.Exit(run_foreground(make, "namesrv", started))
