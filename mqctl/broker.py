# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl broker``: run a reference broker, and inspect or configure any broker."""

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
        "--config", "-c", help="broker.properties (RocketMQ's own format).")] = None,
    namesrv: Annotated[str | None, typer.Option(
        "--namesrv", "-n", help="Name server address(es), ';'-separated; overrides namesrvAddr.")] = None,
    listen: Annotated[str | None, typer.Option(
        help="HOST:PORT to listen on. Default: 0.0.0.0 and the config's listenPort (10911).")] = None,
    set_: Annotated[list[str] | None, typer.Option(
        "--set", help="KEY=VALUE overriding the config file; repeatable.")] = None,
    log_file: Annotated[Path | None, typer.Option(help="Also log to this file.")] = None,
) -> None:
    """Run a reference broker in the foreground until SIGINT/SIGTERM."""
    from reference_broker.config import BrokerConfig, ConfigError
    from reference_broker.runtime import run_foreground, setup_logging

    setup_logging(log_file)
    overrides = parse_sets(set_)
    if namesrv:
        overrides["namesrvAddr"] = namesrv
    try:
        cfg = BrokerConfig.load(config, overrides) if config else BrokerConfig(overrides=overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None
    host, port = parse_listen(listen, cfg.listen_port)
    for warning in cfg.unknown:
        typer.echo(f"warning: {warning}", err=True)

    def make():  # type: ignore[no-untyped-def]
        from reference_broker.broker import Broker

        return Broker(cfg, host=host, port=port)

    def started(b) -> None:  # type: ignore[no-untyped-def]
        ns = ";".join(cfg.namesrv_addrs) or "none"
        typer.echo(f"The broker[{cfg.broker_name}, {cfg.broker_ip1}:{b.port}] boot success. "
                   f"and name server is {ns}", err=True)

    raise typer.Exit(run_foreground(make, f"broker {cfg.broker_name}", started))
