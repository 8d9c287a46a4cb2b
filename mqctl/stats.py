# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl stats``: the brokers' put and get statistics."""

from __future__ import annotations

from typing import Annotated

import typer

from .fmt import java_fixed
from .runner import finish, run, settings, warn_failures

app = typer.Typer(no_args_is_help=True)

ALL_COLUMNS = ["#Topic", "#Consumer Group", "#Accumulation", "#InTPS", "#OutTPS", "#InMsg24Hour",
               "#OutMsg24Hour"]


@app.command("all")
def all_(
    ctx: typer.Context,
    topic: Annotated[str | None, typer.Option("--topic", "-t", help="Only this topic.")] = None,
    active: Annotated[bool, typer.Option(
        "--active", "-a", help="Only topics with traffic in the last day.")] = False,
) -> None:
    """Every topic's put rate and every consumer group's get rate and backlog (VIEW_BROKER_STATS_DATA,
    GET_CONSUME_STATS; mqadmin statsAll)."""
    from wire.admin import stats as api

    result = run(ctx, api.stats_all, topic=topic, active=active)
    out = settings(ctx).output
    warn_failures(out, result.failures)
    out.render(result, ALL_COLUMNS,
               [[r.topic, r.group or "", str(r.accumulation), java_fixed(r.in_tps, 2),
                 "" if r.out_tps is None else java_fixed(r.out_tps, 2), str(r.in_msg_24h),
                 "NO_CONSUMER" if r.out_msg_24h is None else str(r.out_msg_24h)] for r in result.rows])
    finish(result.failures, "stats all", servers="brokers", total=max(len(result.failures), 1))
