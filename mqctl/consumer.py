# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl consumer``: progress and lag, connections, subscription groups."""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING, Annotated

import typer

from .fmt import dash, human_s, java_fixed
from .options import BrokerAddrOpt, ClusterOpt, WatchOpt
from .runner import check_outcomes, finish, print_outcomes, run, settings, warn_failures, watch

if TYPE_CHECKING:
    from wire.admin.consumer import (
        ConnectionInfo,
        ConsumerGroups,
        ConsumerProgress,
        GroupSummary,
        GroupWriteResult,
    )

    from .output import Output

app = typer.Typer(no_args_is_help=True)
group_app = typer.Typer(no_args_is_help=True, help="Create, update and delete subscription groups.")
app.add_typer(group_app, name="group")

GroupOpt = Annotated[str, typer.Option("--group", "-g", help="Consumer group.")]
BrokerOpt = BrokerAddrOpt


# ---------------------------------------------------------------------- renderers (pure)


def progress_columns(result: ConsumerProgress) -> list[str]:
    cols = ["#Topic", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset"]
    if any(q.pull_offset is not None for q in result.queues):
        cols.append("#Inflight")
    return [*cols, "#Diff", "#LastTime"]


def progress_rows(result: ConsumerProgress, tz: tzinfo | None = None) -> list[list[str]]:
    """mqadmin ``consumerProgress -g``; ``#Inflight`` (pulled, not yet committed) for 5.1+ brokers;
    a broker that did not answer gets one row of ``-`` under its name."""
    inflight = any(q.pull_offset is not None for q in result.queues)
    rows = []
    width = len(progress_columns(result))
    for f in result.failures:
        rows.append(["-", f.detail or f.target] + ["-"] * (width - 2))
    for q in result.queues:
        row = [q.topic, q.broker_name, str(q.queue_id), str(q.broker_offset), str(q.consumer_offset)]
        if inflight:
            row.append("-" if q.pull_offset is None else str(q.pull_offset - q.consumer_offset))
        # mirrors ConsumerProgressSubCommand: "N/A" for a queue never consumed
        row += [str(q.diff), "N/A" if q.last_timestamp == 0 else human_s(q.last_timestamp, tz)]
        rows.append(row)
    return rows


GROUPS_COLUMNS = ["#Group", "#Count", "#Version", "#Type", "#Model", "#TPS", "#Diff Total"]


def groups_rows(result: tuple[GroupSummary, ...]) -> list[list[str]]:
    """mqadmin ``consumerProgress`` without ``-g``: OFFLINE for a group with no consumer online."""
    return [[g.group, dash(g.count), "-" if g.count is None else (g.version or "") if g.count else "OFFLINE",
             g.consume_type or "", g.message_model or "", str(g.tps), str(g.diff_total)] for g in result]


def render_connection(out: Output, info: ConnectionInfo) -> None:
    """mqadmin ``consumerConnection``: clients, then subscriptions, then the group's settings."""
    out.table(["#ClientId", "#ClientAddr", "#Language", "#Version"],
              [[c.client_id, c.client_addr, c.language, c.version] for c in info.connections])
    if info.subscriptions or info.consume_type:
        out.line()
        out.line("Below is subscription:")
        out.table(["#Topic", "#SubExpression"], [[s.topic, s.expression] for s in info.subscriptions])
        out.line()
        out.line(f"ConsumeType: {dash(info.consume_type)}")
        out.line(f"MessageModel: {dash(info.message_model)}")
        out.line(f"ConsumeFromWhere: {dash(info.consume_from_where)}")


# ---------------------------------------------------------------------- commands


@app.command()
def progress(
    ctx: typer.Context,
    group: Annotated[str | None, typer.Option(
        "--group", "-g", help="One group's queues. Default: a summary of every group.")] = None,
    topic: Annotated[str | None, typer.Option("--topic", "-t", help="Only this topic (with -g).")] = None,
    watch_s: WatchOpt = None,
) -> None:
    """Consumer offsets and lag (Diff) per queue, or per group (mqadmin consumerProgress)."""
    from wire.admin import consumer as api

    from .errors import UsageError

    out = settings(ctx).output
    if group is None:
        if topic is not None:
            raise UsageError("--topic needs --group")

        def render_all(result: ConsumerGroups) -> None:
            warn_failures(out, result.failures, _label)
            silent = {f.target for f in result.failures}
            for g in result.groups:
                if g.error and not any(addr in g.error for addr in silent):
                    out.warn(f"{g.group}: {g.error}")
            out.render(result.groups, GROUPS_COLUMNS, groups_rows(result.groups))

        groups = watch(ctx, watch_s, api.consumer_groups, render_all)
        if groups is not None:
            finish(groups.failures, "consumer progress", servers="brokers", total=groups.brokers_asked)
        return

    def render(result: ConsumerProgress) -> None:
        warn_failures(out, result.failures, _label)
        if out.format != "table":
            out.data(result)
            return
        out.table(progress_columns(result), progress_rows(result))
        out.line()
        out.line(f"Consume TPS: {java_fixed(result.consume_tps, 2)}")
        out.line(f"Diff Total: {result.diff_total}")

    last = watch(ctx, watch_s, api.consumer_progress, render, group=group, topic=topic)
    if last is not None:
        finish(last.failures, "consumer progress", servers="brokers", total=last.brokers_asked)


def _label(o: object) -> str:
    name = getattr(o, "detail", None)
    return f"{name} {getattr(o, 'target', '')}" if name else str(getattr(o, "target", ""))


@app.command()
def connection(ctx: typer.Context, group: GroupOpt, broker: BrokerOpt = None) -> None:
    """The clients of a consumer group and what they subscribe to (mqadmin consumerConnection)."""
    from wire.admin import consumer as api

    info = run(ctx, api.consumer_connection, group=group, broker=broker)
    out = settings(ctx).output
    if out.format != "table":
        out.data(info)
    else:
        render_connection(out, info)


def _upsert(ctx: typer.Context, verb: str, **kw: object) -> None:
    from wire.admin import consumer as api

    from .errors import UsageError

    if (kw["broker"] is None) == (kw["cluster"] is None):
        raise UsageError("give one of --broker/-b or --cluster/-c")
    result: GroupWriteResult = run(ctx, api.group_upsert, **kw, create=verb == "create")
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    else:
        print_outcomes(out, result.brokers, lambda o: f"{verb} subscription group to {o.target} success.",
                       lambda o: f"{verb} subscription group to {o.target} failed: {o.error}")
        if any(o.ok for o in result.brokers):
            fields = ", ".join(f"{k}={str(v).lower() if isinstance(v, bool) else v}"
                               for k, v in result.config.items())
            out.line(f"SubscriptionGroupConfig [{fields}]")
    check_outcomes(result.brokers, f"consumer group {verb}")


@group_app.command("create")
def group_create(
    ctx: typer.Context,
    group: GroupOpt,
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
    consume_enable: Annotated[bool, typer.Option(help="consumeEnable.")] = True,
    from_min: Annotated[bool, typer.Option(help="consumeFromMinEnable.")] = False,
    broadcast: Annotated[bool, typer.Option(help="consumeBroadcastEnable.")] = False,
    retry_queues: Annotated[int, typer.Option(help="retryQueueNums.")] = 1,
    retry_max_times: Annotated[int, typer.Option(help="retryMaxTimes.")] = 16,
    broker_id: Annotated[int, typer.Option(help="brokerId to consume from.")] = 0,
    slow_broker_id: Annotated[int, typer.Option(help="whichBrokerWhenConsumeSlowly.")] = 1,
    notify_ids_changed: Annotated[bool, typer.Option(help="notifyConsumerIdsChangedEnable.")] = True,
) -> None:
    """Create a subscription group on a broker or every master of a cluster, with mqadmin
    updateSubGroup's defaults (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP)."""
    _upsert(ctx, "create", group=group, broker=broker, cluster=cluster, consume_enable=consume_enable,
            consume_from_min=from_min, broadcast=broadcast, retry_queues=retry_queues,
            retry_max_times=retry_max_times, broker_id=broker_id, slow_broker_id=slow_broker_id,
            notify_ids_changed=notify_ids_changed)


_UNCHANGED = "Default: unchanged."


@group_app.command("update")
def group_update(
    ctx: typer.Context,
    group: GroupOpt,
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
    consume_enable: Annotated[bool | None, typer.Option(
        "--consume-enable/--no-consume-enable", help=f"consumeEnable. {_UNCHANGED}",
        show_default=False)] = None,
    from_min: Annotated[bool | None, typer.Option(
        "--from-min/--no-from-min", help=f"consumeFromMinEnable. {_UNCHANGED}", show_default=False)] = None,
    broadcast: Annotated[bool | None, typer.Option(
        "--broadcast/--no-broadcast", help=f"consumeBroadcastEnable. {_UNCHANGED}",
        show_default=False)] = None,
    retry_queues: Annotated[int | None, typer.Option(
        help=f"retryQueueNums. {_UNCHANGED}", show_default=False)] = None,
    retry_max_times: Annotated[int | None, typer.Option(
        help=f"retryMaxTimes. {_UNCHANGED}", show_default=False)] = None,
    broker_id: Annotated[int | None, typer.Option(
        help=f"brokerId to consume from. {_UNCHANGED}", show_default=False)] = None,
    slow_broker_id: Annotated[int | None, typer.Option(
        help=f"whichBrokerWhenConsumeSlowly. {_UNCHANGED}", show_default=False)] = None,
    notify_ids_changed: Annotated[bool | None, typer.Option(
        "--notify-ids-changed/--no-notify-ids-changed", help=f"notifyConsumerIdsChangedEnable. {_UNCHANGED}",
        show_default=False)] = None,
) -> None:
    """Change what is given of a subscription group and nothing else: each broker's own config
    (GET_ALL_SUBSCRIPTIONGROUP_CONFIG) supplies the rest (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP;
    mqadmin updateSubGroup, which would reset what is not given)."""
    _upsert(ctx, "update", group=group, broker=broker, cluster=cluster, consume_enable=consume_enable,
            consume_from_min=from_min, broadcast=broadcast, retry_queues=retry_queues,
            retry_max_times=retry_max_times, broker_id=broker_id, slow_broker_id=slow_broker_id,
            notify_ids_changed=notify_ids_changed)


@group_app.command()
def delete(
    ctx: typer.Context,
    group: GroupOpt,
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
    remove_offset: Annotated[bool, typer.Option(help="Also drop the group's consumer offsets.")] = False,
) -> None:
    """Delete a subscription group; with -c also its retry and dead-letter topics (mqadmin deleteSubGroup)."""
    from wire.admin import consumer as api

    from .errors import UsageError

    if (broker is None) == (cluster is None):
        raise UsageError("give one of --broker/-b or --cluster/-c")
    result = run(ctx, api.group_delete, group=group, broker=broker, cluster=cluster,
                 remove_offset=remove_offset)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    else:
        what = f"delete subscription group [{group}] from broker"
        print_outcomes(out, result.brokers, lambda o: f"{what} [{o.target}] success.",
                       lambda o: f"{what} [{o.target}] failed: {o.error}")
        print_outcomes(out, result.topics, lambda o: f"delete topic [{o.target}] success.",
                       lambda o: f"delete topic [{o.target}]: {o.error}")
    check_outcomes(result.brokers, "subscription group delete")
