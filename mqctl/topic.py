# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl topic``: list, route, status, create/update, delete, perm, clusters."""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING, Annotated

import typer

from .fmt import dash, human_ms, perm_text
from .options import BrokerAddrOpt, ClusterOpt, MasterAddrOpt, WatchOpt
from .runner import check_outcomes, finish, print_outcomes, run, settings, warn_failures, watch

if TYPE_CHECKING:
    from wire.admin.topic import TopicConfigView, TopicListing, TopicStatus, TopicWriteResult
    from wire.bodies import TopicRouteData

app = typer.Typer(no_args_is_help=True)

TopicArg = Annotated[str, typer.Argument(help="Topic name.")]
BrokerOpt = BrokerAddrOpt


# ---------------------------------------------------------------------- renderers (pure)


def list_rows(result: TopicListing) -> tuple[list[str], list[list[str]]]:
    """``topicList -c``: one row per (topic, group); a topic nobody consumes gets one empty group,
    one whose brokers did not answer a ``-``."""
    rows = []
    for e in result.topics:
        for g in ("-",) if e.groups is None else e.groups or ("",):
            rows.append([e.cluster or "", e.topic, g])
    return ["#Cluster Name", "#Topic", "#Consumer Group"], rows


BROKER_COLUMNS = ["#Broker Name", "#Cluster", "#BID", "#Addr"]
QUEUE_COLUMNS = ["#Broker Name", "#Read Queues", "#Write Queues", "#Perm", "#Sys Flag"]


def route_rows(route: TopicRouteData) -> tuple[list[list[str]], list[list[str]]]:
    """The route as two tables: broker addresses, and queues per broker."""
    brokers = [[bd.broker_name or "", bd.cluster or "", str(bid), bd.broker_addrs[bid]]
               for bd in sorted(route.broker_datas, key=lambda b: b.broker_name or "")
               for bid in sorted(bd.broker_addrs)]
    queues = [[q.broker_name or "", str(q.read_queue_nums), str(q.write_queue_nums),
               f"{q.perm} ({perm_text(q.perm)})", str(q.topic_sys_flag)]
              for q in sorted(route.queue_datas, key=lambda q: q.broker_name or "")]
    return brokers, queues


STATUS_COLUMNS = ["#Broker Name", "#QID", "#Min Offset", "#Max Offset", "#Last Updated"]


def status_rows(result: TopicStatus, tz: tzinfo | None = None) -> list[list[str]]:
    """mqadmin ``topicStatus``: the last-updated time only when it is set; ``-`` for the queues of
    a broker that did not answer."""
    return [[q.broker_name, str(q.queue_id), dash(q.min_offset), dash(q.max_offset),
             "-" if q.last_update_timestamp is None else
             human_ms(q.last_update_timestamp, tz) if q.last_update_timestamp > 0 else ""]
            for q in result.queues]


def config_text(cfg: TopicConfigView) -> str:
    """``TopicConfig.toString`` (mqadmin prints it after a create)."""
    return (f"TopicConfig [topicName={cfg.topic_name}, readQueueNums={cfg.read_queue_nums}, "
            f"writeQueueNums={cfg.write_queue_nums}, perm={perm_text(cfg.perm)}, "
            f"topicFilterType={cfg.topic_filter_type}, topicSysFlag={cfg.topic_sys_flag}, "
            f"order={str(cfg.order).lower()}]")


# ---------------------------------------------------------------------- commands


@app.command("list")
def list_(
    ctx: typer.Context,
    clusters: Annotated[bool, typer.Option(
        "--clusters", "-c",
        help="Also each topic's cluster and consumer groups (mqadmin topicList -c).")] = False,
    watch_s: WatchOpt = None,
) -> None:
    """Every topic the name servers know (mqadmin topicList)."""
    from wire.admin import topic as api

    out = settings(ctx).output

    def render(result: TopicListing) -> None:
        warn_failures(out, result.failures, _broker_label)
        if out.format != "table":
            out.data(result.topics if result.detailed else [e.topic for e in result.topics])
        elif result.detailed:
            cols, rows = list_rows(result)
            out.table(cols, rows)
        else:
            for e in result.topics:
                out.line(e.topic)

    last = watch(ctx, watch_s, api.topic_list, render, clusters=clusters)
    if last is not None:
        finish(last.failures, "topic list -c", servers="brokers", total=last.brokers_asked)


@app.command()
def route(ctx: typer.Context, topic: TopicArg) -> None:
    """A topic's brokers and queues (mqadmin topicRoute); -o json prints the route as the name
    server sends it, in standard JSON."""
    from wire.admin import topic as api

    result = run(ctx, api.topic_route, topic=topic)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result.to_json(standard=True))
        return
    brokers, queues = route_rows(result)
    out.table(BROKER_COLUMNS, brokers)
    out.line()
    out.table(QUEUE_COLUMNS, queues)
    if result.order_topic_conf:
        out.line(f"\norderTopicConf: {result.order_topic_conf}")


@app.command()
def status(ctx: typer.Context, topic: TopicArg, watch_s: WatchOpt = None) -> None:
    """Min and max offset of every queue of a topic (mqadmin topicStatus)."""
    from wire.admin import topic as api

    out = settings(ctx).output

    def render(result: TopicStatus) -> None:
        warn_failures(out, result.failures, _broker_label)
        out.render(result, STATUS_COLUMNS, status_rows(result))

    last = watch(ctx, watch_s, api.topic_status, render, topic=topic)
    if last is not None:
        finish(last.failures, "topic status", servers="brokers",
               total=len({q.broker_name for q in last.queues}))


def _broker_label(o: object) -> str:
    name = getattr(o, "detail", None)
    target = getattr(o, "target", "")
    return f"{name} {target}" if name else str(target)


def _upsert(ctx: typer.Context, verb: str, topic: str, cluster: str | None, broker: str | None,
            read_queues: int | None, write_queues: int | None, perm: str | None, order: bool | None,
            unit: bool | None, has_unit_sub: bool | None) -> None:
    from wire.admin import topic as api
    from wire.admin.errors import BadRequest

    from .errors import UsageError

    if (cluster is None) == (broker is None):
        raise UsageError("give one of --cluster/-c or --broker/-b")
    try:
        api.check_topic_name(topic)
        parsed_perm = None if perm is None else api.parse_perm(perm)
    except BadRequest as exc:
        raise UsageError(str(exc)) from None
    result: TopicWriteResult = run(ctx, api.topic_upsert, topic=topic, cluster=cluster, broker=broker,
                                   read_queues=read_queues, write_queues=write_queues, perm=parsed_perm,
                                   order=order, unit=unit, has_unit_sub=has_unit_sub, create=verb == "create")
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    else:
        print_outcomes(out, result.brokers, lambda o: f"{verb} topic to {o.target} success.",
                       lambda o: f"{verb} topic to {o.target} failed: {o.error}")
        if result.order_conf is not None:
            out.line(f"set orderConf. isOrder=true, orderConf=[{result.order_conf}]")
        # the TopicConfig a broker took (mqadmin prints the one it sent); none when none took it
        sent = result.sent or tuple(result.config for _o in result.brokers)
        for cfg in dict.fromkeys(c for c, o in zip(sent, result.brokers, strict=True) if o.ok and c):
            out.line(config_text(cfg))
    outcomes = list(result.brokers)
    if result.order_conf_outcome is not None:
        outcomes.append(result.order_conf_outcome)
    check_outcomes(outcomes, f"topic {verb}")


@app.command("create")
def create(
    ctx: typer.Context,
    topic: TopicArg,
    cluster: ClusterOpt = None,
    broker: BrokerOpt = None,
    read_queues: Annotated[int, typer.Option("--read-queues", "-r", help="readQueueNums.")] = 8,
    write_queues: Annotated[int, typer.Option("--write-queues", "-w", help="writeQueueNums.")] = 8,
    perm: Annotated[str, typer.Option("--perm", "-p", help="2 (W), 4 (R), 6 (RW), or the letters.")] = "6",
    order: Annotated[bool, typer.Option(help="An ordered topic (also sets ORDER_TOPIC_CONFIG).")] = False,
    unit: Annotated[bool, typer.Option(help="A unit topic (topicSysFlag bit 0).")] = False,
    has_unit_sub: Annotated[bool, typer.Option(help="Has unit subscriptions (topicSysFlag bit 1).")] = False,
) -> None:
    """Create a topic on every master of a cluster, or on one broker, with mqadmin updateTopic's
    defaults (UPDATE_AND_CREATE_TOPIC)."""
    _upsert(ctx, "create", topic, cluster, broker, read_queues, write_queues, perm, order, unit, has_unit_sub)


@app.command("update")
def update(
    ctx: typer.Context,
    topic: TopicArg,
    cluster: ClusterOpt = None,
    broker: BrokerOpt = None,
    read_queues: Annotated[int | None, typer.Option(
        "--read-queues", "-r", help="readQueueNums. Default: unchanged.", show_default=False)] = None,
    write_queues: Annotated[int | None, typer.Option(
        "--write-queues", "-w", help="writeQueueNums. Default: unchanged.", show_default=False)] = None,
    perm: Annotated[str | None, typer.Option(
        "--perm", "-p", help="2 (W), 4 (R), 6 (RW), or the letters. Default: unchanged.",
        show_default=False)] = None,
    order: Annotated[bool | None, typer.Option(
        "--order/--no-order", help="Ordered or not (also ORDER_TOPIC_CONFIG). Default: unchanged.",
        show_default=False)] = None,
    unit: Annotated[bool | None, typer.Option(
        "--unit/--no-unit", help="topicSysFlag bit 0. Default: unchanged.", show_default=False)] = None,
    has_unit_sub: Annotated[bool | None, typer.Option(
        "--has-unit-sub/--no-has-unit-sub", help="topicSysFlag bit 1. Default: unchanged.",
        show_default=False)] = None,
) -> None:
    """Change what is given of a topic and nothing else: each broker's own TopicConfig
    (GET_ALL_TOPIC_CONFIG) supplies the rest of the upsert (UPDATE_AND_CREATE_TOPIC; mqadmin
    updateTopic, which would reset what is not given to its defaults)."""
    _upsert(ctx, "update", topic, cluster, broker, read_queues, write_queues, perm, order, unit, has_unit_sub)


@app.command()
def delete(ctx: typer.Context, topic: TopicArg, cluster: Annotated[str | None, typer.Option(
        "--cluster", "-c", help="Delete from this cluster. Default: the clusters holding the topic.")] = None,
           ) -> None:
    """Delete a topic from the masters, then from every name server (mqadmin deleteTopic)."""
    from wire.admin import topic as api

    result = run(ctx, api.topic_delete, topic=topic, cluster=cluster)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    else:
        # mqadmin deleteTopic's two lines when everything went through; the failures come as
        # the command's error line
        if all(o.ok for o in result.brokers):
            for c in result.clusters:
                out.line(f"delete topic [{topic}] from cluster [{c}] success.")
        if all(o.ok for o in result.namesrvs):
            out.line(f"delete topic [{topic}] from NameServer success.")
        warn_failures(out, [o for o in (*result.brokers, *result.namesrvs) if not o.ok])
    check_outcomes([*result.brokers, *result.namesrvs], "topic delete")


@app.command()
def perm(
    ctx: typer.Context,
    topic: TopicArg,
    perm_: Annotated[str, typer.Option("--perm", "-p", help="2 (W), 4 (R), 6 (RW), or the letters.")],
    cluster: ClusterOpt = None,
    broker: MasterAddrOpt = None,
) -> None:
    """Change a topic's read/write permission (mqadmin updateTopicPerm)."""
    from wire.admin import topic as api

    from .errors import UsageError

    if (cluster is None) == (broker is None):
        raise UsageError("give one of --cluster/-c or --broker/-b")
    result = run(ctx, api.topic_perm, topic=topic, perm=api.parse_perm(perm_), cluster=cluster, broker=broker)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    elif result.unchanged:
        out.line("new perm equals to the old one!")
    else:
        print_outcomes(out, result.brokers,
                       lambda o: f"update topic perm from {o.detail} to {result.perm} in {o.target} success.",
                       lambda o: f"update topic perm in {o.target} failed: {o.error}")
    check_outcomes(result.brokers, "topic perm")


@app.command()
def clusters(ctx: typer.Context, topic: TopicArg) -> None:
    """The clusters a topic lives in (mqadmin topicClusterList)."""
    from wire.admin import topic as api

    result = run(ctx, api.topic_clusters, topic=topic)
    out = settings(ctx).output
    if out.format != "table":
        out.data(list(result))
    else:
        for c in result:
            out.line(c)
