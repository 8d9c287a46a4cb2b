# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl producer``: the connections of a producer group, the producers of a broker."""

from __future__ import annotations

from typing import Annotated

import typer

from .options import check_addr
from .runner import run, settings

app = typer.Typer(no_args_is_help=True)


@app.command()
def connection(
    ctx: typer.Context,
    group: Annotated[str, typer.Option("--group", "-g", help="Producer group.")],
    topic: Annotated[str, typer.Option("--topic", "-t", help="A topic the group sends to "
                                       "(its broker is the one asked).")],
) -> None:
    """The clients of a producer group (GET_PRODUCER_CONNECTION_LIST; mqadmin producerConnection)."""
    from wire.admin import consumer as api

    info = run(ctx, api.producer_connection, group=group, topic=topic)
    out = settings(ctx).output
    # a producer group has connections only (the subscription fields are a consumer's)
    out.render({"group": info.group, "connections": info.connections},
               ["#", "#ClientId", "#ClientAddr", "#Language", "#Version"],
               [[f"{i:04d}", c.client_id, c.client_addr, c.language, c.version]
                for i, c in enumerate(info.connections, 1)])


@app.command("list")
def list_(
    ctx: typer.Context,
    broker: Annotated[str, typer.Option("--broker", "-b", help="Broker address (host:port).",
                                        callback=check_addr)],
) -> None:
    """Every producer connected to a broker, by group (GET_ALL_PRODUCER_INFO; mqadmin producer)."""
    from wire.admin import queues as api

    from .fmt import human_ms

    table = run(ctx, api.all_producers, broker=broker)
    settings(ctx).output.render(
        table, ["#Group", "#ClientId", "#RemoteIP", "#Language", "#Version", "#LastUpdate"],
        [[r.group, r.client_id, r.remote_ip, r.language, str(r.version), human_ms(r.last_update)]
         for r in table.rows])
