# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl broker``: run a reference broker, and inspect or configure any broker."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .errors import UsageError
from .options import WatchOpt, check_addr
from .serving import (
    LogFileOpt,
    SetOpt,
    check_ports,
    exposure_warning,
    listen_address,
    load_server_config,
    parse_sets,
)

if TYPE_CHECKING:
    from reference_broker.broker import Broker
    from wire.admin.broker import BrokerTable

app = typer.Typer(no_args_is_help=True)


@app.command()
def start(
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="broker.properties (RocketMQ's own format).")] = None,
    namesrv: Annotated[str | None, typer.Option(
        "--namesrv", "-n", help="Name server address(es), ';'-separated; overrides namesrvAddr.")] = None,
    listen: Annotated[str | None, typer.Option(
        help="HOST:PORT to listen on. Default: the config's bindAddress, else a brokerIP1 it sets "
             "(not loopback), else 127.0.0.1; the config's listenPort (10911).")] = None,
    set_: SetOpt = None,
    log_file: LogFileOpt = None,
) -> None:
    """Run a reference broker in the foreground until SIGINT/SIGTERM."""
    from reference_broker.config import BrokerConfig, default_broker_config_path
    from reference_broker.runtime import run_foreground, setup_logging

    setup_logging(log_file)
    overrides = parse_sets(set_)
    if namesrv:
        overrides["namesrvAddr"] = namesrv
    cfg = load_server_config(BrokerConfig, config, overrides)
    if config is None:
        # mirrors BrokerPathConfigHelper: without -c, UPDATE_BROKER_CONFIG persists the whole
        # configuration to ~/store/config/broker.properties
        cfg.store_path = str(default_broker_config_path())
    host, port = listen_address(listen, cfg, advertised_key="brokerIP1")
    check_ports(host, [(port, "the broker's port (listenPort)")]
                + ([(port - 2, "the broker's VIP channel, listenPort - 2")] if port > 2 else []))
    warning = exposure_warning(host, cfg.bool("aclEnable"), ha_port=True)
    if warning:
        typer.echo(warning, err=True)

    def make() -> Broker:
        from reference_broker.broker import Broker

        return Broker(cfg, host=host, port=port)

    def started(b: Broker) -> None:
        ns = ";".join(cfg.namesrv_addrs) or "none"
        typer.echo(f"The broker[{cfg.broker_name}, {cfg.broker_ip1}:{b.port}] boot success. "
                   f"and name server is {ns}", err=True)

    raise typer.Exit(run_foreground(make, f"broker {cfg.broker_name}", started))


# ---------------------------------------------------------------------- talking to any broker

BrokerOpt = Annotated[str | None, typer.Option("--broker", "-b", help="Broker address (host:port).",
                                              callback=check_addr)]
ClusterOpt = Annotated[str | None, typer.Option("--cluster", "-c", help="Every broker of this cluster.")]


def _need_one(broker: str | None, cluster: str | None) -> None:
    if (broker is None) == (cluster is None):
        raise UsageError("give one of --broker/-b or --cluster/-c")


def _who(t: BrokerTable) -> str:
    return f"{t.broker_name} {t.addr}" if t.broker_name else t.addr


def _finish(tables: tuple[BrokerTable, ...], what: str) -> None:
    """The partial-answer rule over the brokers asked (see :func:`mqctl.runner.finish`)."""
    from wire.admin.common import Outcome

    from .runner import finish

    finish([Outcome(t.addr, t.error is None, t.error, unreachable=t.unreachable) for t in tables], what,
           servers="brokers")


def _title(t: BrokerTable) -> str:
    who = f" ({t.broker_name}, id {t.broker_id})" if t.broker_name else ""
    return f"============{t.addr}{who}============"


def _render_tables(ctx: typer.Context, tables: tuple[BrokerTable, ...], key_header: str) -> None:
    from .runner import settings

    out = settings(ctx).output
    for t in tables:
        if t.error is not None:
            out.warn(f"{_who(t)}: {t.error}")
    if out.format != "table":
        out.data(tables if len(tables) > 1 or tables[0].broker_name else tables[0].table)
        return
    single = len(tables) == 1
    for t in tables:
        if t.error is not None:
            continue
        if not single:
            out.line(_title(t))
        out.table([key_header, "#Value"], list(t.table.items()))
        if not single:
            out.line()


@app.command()
def status(ctx: typer.Context, broker: BrokerOpt = None, cluster: ClusterOpt = None,
           watch_s: WatchOpt = None) -> None:
    """A broker's runtime figures (GET_BROKER_RUNTIME_INFO; mqadmin brokerStatus)."""
    from wire.admin import broker as api

    from .runner import watch

    _need_one(broker, cluster)
    last = watch(ctx, watch_s, api.broker_status, lambda r: _render_tables(ctx, r, "#Key"),
                 broker=broker, cluster=cluster)
    if last is not None:
        _finish(last, "broker status")


config_app = typer.Typer(no_args_is_help=True, help="Read and change a broker's configuration.")
app.add_typer(config_app, name="config")


@config_app.command("get")
def config_get(
    ctx: typer.Context,
    keys: Annotated[list[str] | None, typer.Argument(help="Only these keys.")] = None,
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
) -> None:
    """A broker's configuration (GET_BROKER_CONFIG; mqadmin getBrokerConfig)."""
    from wire.admin import broker as api

    from .errors import CliError
    from .runner import run

    _need_one(broker, cluster)
    tables = run(ctx, api.broker_config_get, broker=broker, cluster=cluster, keys=tuple(keys or ()))
    _render_tables(ctx, tables, "#Key")
    _finish(tables, "broker config get")
    # what was asked for does not exist: exit 1 (docs/cli.md)
    missing = [k for k in dict.fromkeys(keys or ())
               if any(t.error is None and k not in t.table for t in tables)]
    if missing:
        raise CliError(f"no such configuration key{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")


@config_app.command("set")
def config_set(
    ctx: typer.Context,
    pairs: Annotated[list[str], typer.Argument(help="KEY=VALUE pairs.", metavar="KEY=VALUE...")],
    broker: BrokerOpt = None,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", "-c", help="Every master of this cluster.")] = None,
) -> None:
    """Change a broker's configuration at run time (UPDATE_BROKER_CONFIG; mqadmin updateBrokerConfig)."""
    from wire.admin import broker as api

    from .runner import check_outcomes, print_outcomes, run, settings

    _need_one(broker, cluster)
    values = parse_sets(pairs, "KEY=VALUE")
    outcomes = run(ctx, api.broker_config_set, values=values, broker=broker, cluster=cluster)
    out = settings(ctx).output
    if out.format != "table":
        out.data(outcomes)
    else:
        print_outcomes(out, outcomes, lambda o: f"update broker config success, {o.target}",
                       lambda o: f"update broker config failed, {o.target}: {o.error}")
    check_outcomes(outcomes, "broker config set")


CONSUME_STATS_COLUMNS = ["#Topic", "#Group", "#Broker Name", "#QID", "#Broker Offset", "#Consumer Offset",
                         "#Diff", "#LastTime"]


@app.command("consume-stats")
def consume_stats(
    ctx: typer.Context,
    broker: Annotated[str, typer.Option("--broker", "-b", help="Broker address (host:port).",
                                        callback=check_addr)],
    order: Annotated[bool, typer.Option("--order", help="Ordered topics only.")] = False,
) -> None:
    """Every group's progress on every queue of one broker (GET_BROKER_CONSUME_STATS; mqadmin
    brokerConsumeStats)."""
    from wire.admin import broker as api

    from .fmt import human_s
    from .runner import run, settings

    result = run(ctx, api.broker_consume_stats, broker=broker, order=order)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
        return
    out.table(CONSUME_STATS_COLUMNS,
              [[r.topic, r.group, r.broker_name, str(r.queue_id), str(r.broker_offset),
                str(r.consumer_offset), str(r.diff), human_s(r.last_timestamp) if r.last_timestamp else "N/A"]
               for r in result.rows])
    out.line()
    out.line(f"Diff Total: {result.total_diff}")


def _maintenance_command(action: str, doc: str) -> None:
    @app.command(action, help=doc)
    def command(ctx: typer.Context, broker: BrokerOpt = None, cluster: Annotated[str | None, typer.Option(
            "--cluster", "-c", help="Every master of this cluster.")] = None) -> None:
        from wire.admin import broker as api

        from .runner import check_outcomes, print_outcomes, run, settings

        _need_one(broker, cluster)
        outcomes = run(ctx, api.broker_maintenance, action=action, broker=broker, cluster=cluster)
        out = settings(ctx).output
        if out.format != "table":
            out.data(outcomes)
        else:
            print_outcomes(out, outcomes, lambda o: f"{action}: {o.target} success",
                           lambda o: f"{action}: {o.target} failed: {o.error}")
        check_outcomes(outcomes, f"broker {action}")


_maintenance_command("clean-expired-cq", "Drop the consume queues whose topic is gone and the expired "
                     "entries (CLEAN_EXPIRED_CONSUMEQUEUE; mqadmin cleanExpiredCQ).")
_maintenance_command("clean-unused-topic", "Drop the consume queues of topics the broker no longer has "
                     "(CLEAN_UNUSED_TOPIC; mqadmin cleanUnusedTopic).")
_maintenance_command("delete-expired-commitlog", "Delete the expired CommitLog files now, whatever the hour "
                     "(DELETE_EXPIRED_COMMITLOG; mqadmin deleteExpiredCommitLog).")


@app.command("query-cq")
def query_cq(
    ctx: typer.Context,
    topic: Annotated[str, typer.Option("--topic", "-t", help="Topic.")],
    queue: Annotated[int, typer.Option("--queue", "-q", help="Queue id.")],
    index: Annotated[int, typer.Option("--index", "-i", help="The first index (queue offset) to show.")],
    count: Annotated[int, typer.Option("--count", "-c", min=1, help="How many units.")] = 10,
    group: Annotated[str | None, typer.Option("--group", "-g", help="Also show this consumer group's "
                                              "subscription and filter data.")] = None,
    broker: Annotated[str | None, typer.Option(
        "--broker", "-b", help="Broker address (default: the first broker of the topic's route).",
        callback=check_addr)] = None,
) -> None:
    """Units of a broker's ConsumeQueue: CommitLog offset, size and tags code per index
    (QUERY_CONSUME_QUEUE; mqadmin queryCq). Offline, `mqctl store inspect` reads the files."""
    from wire.admin import queues as api

    from .runner import run, settings

    view = run(ctx, api.query_consume_queue, topic=topic, queue_id=queue, index=index, count=count,
               group=group, broker=broker)
    out = settings(ctx).output
    if out.format != "table":
        out.data(view)
        return
    if view.subscription is not None:
        import json

        out.line(f"Subscription data: {json.dumps(view.subscription)}")
    if view.filter_data is not None:
        out.line(f"Filter data: {view.filter_data}")
    out.table(["#Index", "#PhysicOffset", "#PhysicSize", "#TagsCode"],
              [[str(u.index), str(u.physic_offset), str(u.physic_size), str(u.tags_code)]
               for u in view.units],
              title=f"{view.queue_id}@{view.topic} on {view.broker}: min {view.min}, max {view.max}")
    if view.remark:
        out.line(view.remark)
