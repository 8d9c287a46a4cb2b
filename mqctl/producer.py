# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl producer``: the connections of a producer group."""

from __future__ import annotations

from typing import Annotated

import typer

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
