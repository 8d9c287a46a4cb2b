# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl consumer``: progress and lag, connections, subscription groups."""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING, Annotated, Any

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
    from wire.admin.offsets import ResetResult

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


# ---------------------------------------------------------------------- offsets, running info, config

TopicReqOpt = Annotated[str, typer.Option("--topic", "-t", help="Topic name.")]
ForceOpt = Annotated[bool, typer.Option(
    "--force/--no-force", help="Also move offsets forward (mqadmin's default); --no-force only moves "
    "them back.")]

RESET_COLUMNS = ["#Broker Name", "#QID", "#Offset"]
RESET_OFFLINE_COLUMNS = ["#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset", "#Timestamp Offset",
                         "#Rollback Offset"]


def _render_reset(out: Output, result: ResetResult, label: str) -> None:
    warn_failures(out, result.failures, _label)
    if out.format != "table":
        out.data(result)
        return
    out.line(f"rollback consumer offset by specified group[{result.group}], topic[{result.topic}], "
             f"force[{str(result.force).lower()}], timestamp(string)[{label}], "
             f"timestamp(long)[{result.timestamp}]")
    offline = [q for q in result.queues if q.timestamp_offset is not None]
    online = [q for q in result.queues if q.timestamp_offset is None]
    if online or not offline:
        out.table(RESET_COLUMNS, [[q.broker_name, str(q.queue_id), str(q.offset)] for q in online])
    if offline:
        if online:
            out.line()
        out.table(RESET_OFFLINE_COLUMNS, [[q.broker_name, str(q.queue_id), dash(q.broker_offset),
                                           dash(q.consumer_offset), dash(q.timestamp_offset), str(q.offset)]
                                          for q in offline])
    if result.by_offsets:
        out.info(f"the group has no consumer online at {', '.join(result.by_offsets)}: its committed "
                 "offsets were changed there (mqadmin's resetOffsetByTimeOld)")


@app.command("reset-offset")
def reset_offset(
    ctx: typer.Context,
    group: GroupOpt,
    topic: TopicReqOpt,
    time_: Annotated[str, typer.Option(
        "--time", "-s", help="Milliseconds since the epoch, 2026-11-22T09:57:42 (local time), "
        "mqadmin's 2026-11-22#09:57:42:000, or 'now' (each queue's end).")],
    force: ForceOpt = True,
) -> None:
    """Move a group's offsets on a topic to a point in time, without restarting its consumers
    (INVOKE_BROKER_TO_RESET_OFFSET; when the group is not online, its committed offsets are changed
    with SEARCH_OFFSET_BY_TIMESTAMP and UPDATE_CONSUMER_OFFSET; mqadmin resetOffsetByTime)."""
    from wire.admin import offsets as api

    from .options import parse_time

    timestamp = api.TO_THE_END if time_.strip() == "now" else parse_time(time_, "--time")
    result = run(ctx, api.reset_offset, group=group, topic=topic, timestamp=timestamp, force=force)
    _render_reset(settings(ctx).output, result, time_)
    finish(result.failures, "consumer reset-offset", servers="brokers", total=result.brokers_asked)


@app.command("skip-accumulated")
def skip_accumulated(ctx: typer.Context, group: GroupOpt, topic: TopicReqOpt, force: ForceOpt = True) -> None:
    """Skip every message a group has not consumed yet: its offsets on the topic go to each queue's
    end (the reset of reset-offset with 'now'; mqadmin skipAccumulatedMessage)."""
    from wire.admin import offsets as api

    result = run(ctx, api.reset_offset, group=group, topic=topic, timestamp=api.TO_THE_END, force=force)
    _render_reset(settings(ctx).output, result, "now")
    finish(result.failures, "consumer skip-accumulated", servers="brokers", total=result.brokers_asked)


@app.command("clone-offset")
def clone_offset(
    ctx: typer.Context,
    src: Annotated[str, typer.Option("--from", "-s", help="The group whose offsets are copied.")],
    dest: Annotated[str, typer.Option("--to", "-d", help="The group that gets them.")],
    topic: TopicReqOpt,
    offline: Annotated[bool, typer.Option(
        help="Copy even where the source group no longer subscribes to the topic.")] = False,
) -> None:
    """Copy a group's committed offsets of a topic to another group (CLONE_GROUP_OFFSET; mqadmin
    cloneGroupOffset)."""
    from wire.admin import offsets as api

    result = run(ctx, api.clone_offset, src_group=src, dest_group=dest, topic=topic, offline=offline)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    else:
        print_outcomes(out, result.brokers,
                       lambda o: f"clone group offset success. srcGroup[{src}], destGroup[{dest}], "
                       f"topic[{topic}], broker[{o.target}]",
                       lambda o: f"clone group offset failed at {o.target}: {o.error}")
    check_outcomes(result.brokers, "consumer clone-offset")


@app.command()
def status(
    ctx: typer.Context,
    group: GroupOpt,
    client_id: Annotated[str | None, typer.Option("--client", "-i", help="Only this client id.")] = None,
    broker: BrokerOpt = None,
    jstack: Annotated[bool, typer.Option("--jstack", help="Ask for the clients' thread stacks too.")] = False,
) -> None:
    """The running state of a group's clients: their properties, subscriptions, queues and
    consume rates, as each client reports it (GET_CONSUMER_RUNNING_INFO through the broker;
    mqadmin consumerStatus)."""
    from wire.admin import consumer as api
    from wire.admin.common import Outcome

    result = run(ctx, api.consumer_status, group=group, client_id=client_id, broker=broker, jstack=jstack)
    out = settings(ctx).output
    for c in result:
        if c.error is not None:
            out.warn(f"{c.client_id}: {c.error}")
    if out.format != "table":
        out.data(result)
    else:
        for i, c in enumerate(s for s in result if s.info is not None):
            if i:
                out.line()
            render_running_info(out, c.client_id, c.info or {})
    finish([Outcome(c.client_id, c.error is None, c.error, unreachable=c.unreachable) for c in result],
           "consumer status", servers="clients")


def render_running_info(out: Output, client_id: str, info: dict[str, Any]) -> None:
    """A client's ConsumerRunningInfo: properties, subscriptions, then one row per queue."""
    out.line(f"#Consumer: {client_id}")
    props = info.get("properties") or {}
    out.kv(sorted((str(k), str(v)) for k, v in props.items()), title="#Properties")
    subs = info.get("subscriptionSet") or []
    out.line()
    out.table(["#Topic", "#SubExpression", "#Type"],
              [[str(s.get("topic", "")), str(s.get("subString", "")), str(s.get("expressionType") or "TAG")]
               for s in subs if isinstance(s, dict)], title="#Subscriptions")
    queues = info.get("mqTable") or {}
    rows = []
    for mq, pq in queues.items():
        mq = mq if isinstance(mq, dict) or hasattr(mq, "get") else {}
        pq = pq if isinstance(pq, dict) else {}
        rows.append([str(mq.get("topic", "")), str(mq.get("brokerName", "")), str(mq.get("queueId", "")),
                     str(pq.get("commitOffset", "")), str(pq.get("cachedMsgCount", "")),
                     str(pq.get("cachedMsgSizeInMiB", "")), str(pq.get("lastPullTimestamp", ""))])
    out.line()
    out.table(["#Topic", "#Broker Name", "#QID", "#Commit Offset", "#Cached", "#Cached MiB", "#Last Pull"],
              sorted(rows), title="#Queues")
    status_table = info.get("statusTable") or {}
    if status_table:
        out.line()
        keys = ("pullRT", "pullTPS", "consumeRT", "consumeOKTPS", "consumeFailedTPS")
        columns = ["#Topic", "#Pull RT", "#Pull TPS", "#Consume RT", "#Consume OK TPS", "#Consume Failed TPS"]
        rows = [[str(t), *(str(st.get(k, "")) for k in keys)]
                for t, st in sorted(status_table.items()) if isinstance(st, dict)]
        out.table(columns, rows, title="#Status")
    if info.get("jstack"):
        out.line()
        out.line(str(info["jstack"]))


@app.command()
def config(ctx: typer.Context, group: GroupOpt) -> None:
    """A subscription group's configuration on every master that has it (GET_ALL_SUBSCRIPTIONGROUP_CONFIG;
    mqadmin getConsumerConfig)."""
    from wire.admin import consumer as api
    from wire.admin.common import Outcome

    result = run(ctx, api.consumer_config, group=group)
    out = settings(ctx).output
    for c in result:
        if c.error is not None:
            out.warn(f"{c.broker_name} {c.addr}: {c.error}")
    if out.format != "table":
        out.data(result)
    else:
        for c in (c for c in result if c.config is not None):
            out.line(f"============{c.cluster} {c.broker_name} {c.addr}============")
            assert c.config is not None
            out.kv(sorted((k, str(v).lower() if isinstance(v, bool) else str(v))
                          for k, v in c.config.to_json(standard=True).items()))
    finish([Outcome(c.addr, c.error is None, c.error, unreachable=c.unreachable) for c in result],
           "consumer config", servers="brokers")


@app.command("time-span")
def time_span(ctx: typer.Context, group: GroupOpt, topic: TopicReqOpt) -> None:
    """Per queue of a topic, the store times of its first and last message and of the group's last
    consumed one, and how long the next unconsumed message has waited (QUERY_CONSUME_TIME_SPAN,
    asked of every broker of the topic's route; DefaultMQAdminExt.queryConsumeTimeSpan)."""
    from wire.admin import queues as api

    from .fmt import human_ms

    def when(ms: int) -> str:
        return human_ms(ms) if ms > 0 else "-"

    result = run(ctx, api.consume_time_span, group=group, topic=topic)
    out = settings(ctx).output
    out.render(
        result, ["#Broker Name", "#QID", "#First", "#Last", "#Consumed", "#Delay(ms)"],
        [[r.broker_name, str(r.queue_id), when(r.min), when(r.max), when(r.consumed), str(r.delay_ms)]
         for r in result.rows])
    warn_failures(out, result.failures)
    finish(result.failures, "consumer time-span", servers="brokers", total=result.brokers_asked)
