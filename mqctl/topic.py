# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl topic``: list, route, status, create/update, delete, perm, clusters."""

from __future__ import annotations

from datetime import tzinfo
from typing import TYPE_CHECKING, Annotated

import typer

from .fmt import human_ms, perm_text
from .runner import check_outcomes, print_outcomes, run, settings, watch

if TYPE_CHECKING:
    from wire.admin.topic import TopicConfigView, TopicListing, TopicStatus, TopicWriteResult
    from wire.bodies import TopicRouteData

app = typer.Typer(no_args_is_help=True)

TopicArg = Annotated[str, typer.Argument(help="Topic name.")]
ClusterOpt = Annotated[str | None, typer.Option("--cluster", "-c", help="Every master of this cluster.")]
BrokerOpt = Annotated[str | None, typer.Option("--broker", "-b", help="This broker address (host:port).")]
WatchOpt = Annotated[float | None, typer.Option(
    "--watch", "-w", metavar="SECONDS", help="Redraw every SECONDS until Ctrl-C.")]


# ---------------------------------------------------------------------- renderers (pure)


def list_rows(result: TopicListing) -> tuple[list[str], list[list[str]]]:
    """``topicList -c``: one row per (topic, group); a topic nobody consumes gets one empty group."""
    rows = []
    for e in result.topics:
        for g in e.groups or ("",):
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
    """mqadmin ``topicStatus``: the last-updated time only when it is set."""
    return [[q.broker_name, str(q.queue_id), str(q.min_offset), str(q.max_offset),
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
        if out.format != "table":
            out.data(result.topics if result.detailed else [e.topic for e in result.topics])
        elif result.detailed:
            cols, rows = list_rows(result)
            out.table(cols, rows)
        else:
            for e in result.topics:
                out.line(e.topic)

    watch(ctx, watch_s, api.topic_list, render, clusters=clusters)


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
        out.render(result, STATUS_COLUMNS, status_rows(result))

    watch(ctx, watch_s, api.topic_status, render, topic=topic)


def _upsert(ctx: typer.Context, topic: str, cluster: str | None, broker: str | None, read_queues: int,
            write_queues: int, perm: str, order: bool, unit: bool, has_unit_sub: bool) -> None:
    from wire.admin import topic as api

    from .errors import UsageError

    if (cluster is None) == (broker is None):
        raise UsageError("give one of --cluster/-c or --broker/-b")
    result: TopicWriteResult = run(ctx, api.topic_upsert, topic=topic, cluster=cluster, broker=broker,
                                   read_queues=read_queues, write_queues=write_queues,
                                   perm=api.parse_perm(perm), order=order, unit=unit,
                                   has_unit_sub=has_unit_sub)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    else:
        print_outcomes(out, result.brokers, lambda o: f"create topic to {o.target} success.",
                       lambda o: f"create topic to {o.target} failed: {o.error}")
        if result.order_conf is not None:
            out.line(f"set orderConf. isOrder=true, orderConf=[{result.order_conf}]")
        out.line(config_text(result.config))
    outcomes = list(result.brokers)
    if result.order_conf_outcome is not None:
        outcomes.append(result.order_conf_outcome)
    check_outcomes(outcomes, "topic update")


def _upsert_command(name: str, doc: str) -> None:
    @app.command(name, help=doc)
    def command(
        ctx: typer.Context,
        topic: TopicArg,
        cluster: ClusterOpt = None,
        broker: BrokerOpt = None,
        read_queues: Annotated[int, typer.Option("--read-queues", "-r", help="readQueueNums.")] = 8,
        write_queues: Annotated[int, typer.Option("--write-queues", "-w", help="writeQueueNums.")] = 8,
        perm: Annotated[str, typer.Option(
            "--perm", "-p", help="2 (W), 4 (R), 6 (RW), or the letters.")] = "6",
        order: Annotated[bool, typer.Option(help="An ordered topic (also sets ORDER_TOPIC_CONFIG).")] = False,
        unit: Annotated[bool, typer.Option(help="A unit topic (topicSysFlag bit 0).")] = False,
        has_unit_sub: Annotated[bool, typer.Option(
            help="Has unit subscriptions (topicSysFlag bit 1).")] = False,
    ) -> None:
        _upsert(ctx, topic, cluster, broker, read_queues, write_queues, perm, order, unit, has_unit_sub)


_upsert_command("create", "Create a topic on every master of a cluster, or on one broker "
                "(UPDATE_AND_CREATE_TOPIC; mqadmin updateTopic).")
_upsert_command("update", "Update a topic's queues, perm or flags (the same upsert as create; "
                "mqadmin updateTopic).")


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
    check_outcomes([*result.brokers, *result.namesrvs], "topic delete")


@app.command()
def perm(
    ctx: typer.Context,
    topic: TopicArg,
    perm_: Annotated[str, typer.Option("--perm", "-p", help="2 (W), 4 (R), 6 (RW), or the letters.")],
    cluster: ClusterOpt = None,
    broker: Annotated[str | None, typer.Option(
        "--broker", "-b", help="This master broker address (host:port).")] = None,
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
