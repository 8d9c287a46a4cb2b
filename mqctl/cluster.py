# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl cluster``: list a cluster's brokers, and run a local reference cluster."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .fmt import dash, java_fixed
from .options import MasterAddrOpt, WatchOpt
from .runner import finish, settings, watch

if TYPE_CHECKING:
    from wire.admin.cluster import BrokerRow, ClusterList

    from .local import LocalCluster

app = typer.Typer(no_args_is_help=True)



def _load(row: BrokerRow, tps: float | None, size: int | None, wait: int | None) -> str:
    if row.error is not None:
        return "-"
    # mirrors printClusterBaseInfo: "%9.2f(%s,%sms)" of the TPS, queue size and head wait
    return f"{java_fixed(tps or 0.0, 2)}({dash(size)},{dash(wait)}ms)"


def base_columns(result: ClusterList) -> list[str]:
    cols = ["#Cluster Name", "#Broker Name", "#BID", "#Addr", "#Version", "#InTPS(LOAD)", "#OutTPS(LOAD)"]
    if result.has_5x:
        cols.append("#Timer(Progress)")
    cols += ["#PCWait(ms)", "#Hour", "#SPACE"]
    if result.has_5x:
        cols.append("#ACTIVATED")
    return cols


def base_rows(result: ClusterList) -> list[list[str]]:
    """The mqadmin ``clusterList`` table (5.x columns when any broker is 5.x)."""
    rows = []
    for b in result.brokers:
        row = [b.cluster, b.broker_name, str(b.broker_id), b.addr, dash(b.version),
               _load(b, b.in_tps, b.send_queue_size, b.send_queue_wait_ms),
               _load(b, b.out_tps, b.pull_queue_size, b.pull_queue_wait_ms)]
        if b.ack_queue_size is not None and b.error is None:
            # mirrors the 5.1+ tool: "%9.2f(%s,%sms|%s,%sms)", the ack pool after the pull pool
            wait = "N" if b.ack_queue_wait_ms is None else b.ack_queue_wait_ms
            row[-1] = row[-1][:-1] + f"|{b.ack_queue_size},{wait}ms)"
        if result.has_5x:
            t = b.timer
            row.append("-" if t is None else
                       f"{t.read_behind}-{t.offset_behind}({java_fixed(t.congest_num / 10000, 1)}w, "
                       f"{java_fixed(t.enqueue_tps, 1)}, {java_fixed(t.dequeue_tps, 1)})")
        row += [dash(b.page_cache_lock_ms),
                "-" if b.hours is None else java_fixed(b.hours, 2),
                "-" if b.commit_log_disk_ratio is None else java_fixed(b.commit_log_disk_ratio, 4)]
        if result.has_5x:
            row.append(dash(None if b.activated is None else str(b.activated).lower()))
        rows.append(row)
    return rows


MORE_COLUMNS = ["#Cluster Name", "#Broker Name", "#BID", "#Addr", "#InTotalYest", "#OutTotalYest",
                "#InTotalToday", "#OutTotalToday"]


def more_rows(result: ClusterList) -> list[list[str]]:
    """The mqadmin ``clusterList -m`` table (message totals of yesterday and today)."""
    return [[b.cluster, b.broker_name, str(b.broker_id), b.addr, dash(b.in_total_yesterday),
             dash(b.out_total_yesterday), dash(b.in_total_today), dash(b.out_total_today)]
            for b in result.brokers]


@app.command("list")
def list_(
    ctx: typer.Context,
    cluster: Annotated[str | None, typer.Option(
        "--cluster", "-c", help="Only this cluster.")] = None,
    more: Annotated[bool, typer.Option(
        "--more", "-m", help="Message totals of yesterday and today instead of the load figures.")] = False,
    watch_s: WatchOpt = None,
) -> None:
    """Every broker with its version, load, disk use and (5.x) activation (mqadmin clusterList)."""
    from wire.admin import cluster as api
    from wire.admin.common import Outcome

    out = settings(ctx).output

    def render(result: ClusterList) -> None:
        for b in result.brokers:
            if b.error is not None:
                out.warn(f"{b.broker_name} {b.addr}: no runtime info: {b.error}")
        if more:
            out.render(result, MORE_COLUMNS, more_rows(result))
        else:
            out.render(result, base_columns(result), base_rows(result))

    last = watch(ctx, watch_s, api.cluster_list, render, cluster=cluster)
    if last is not None:
        finish([Outcome(b.addr, b.error is None, b.error, unreachable=b.unreachable) for b in last.brokers],
               "cluster list", servers="brokers")


# ---------------------------------------------------------------------- local reference cluster

DirOpt = Annotated[Path | None, typer.Option(
    "--dir", "-d", help="Where the cluster keeps its configs, stores, logs and pid files. "
    "Default: $XDG_DATA_HOME/mqctl/cluster (~/.local/share/mqctl/cluster).")]


def _show(out: object, cluster: LocalCluster, verb: str) -> None:
    from .output import Output

    assert isinstance(out, Output)
    if out.format != "table":
        out.data(cluster)
        return
    out.line(f"{verb} {cluster.layout} cluster {cluster.cluster_name!r} in {cluster.dir}")
    out.table(["#Process", "#Role", "#Addr", "#Pid", "#State", "#Log"],
              [[p.name, p.role, p.addr, dash(p.pid), p.state, p.log] for p in cluster.processes])


@app.command()
def up(
    ctx: typer.Context,
    layout: Annotated[str, typer.Option(
        help="single: one name server and broker-a; 2m-noslave: broker-a and broker-b; "
        "2m-2s-async: broker-a and broker-b (ASYNC_MASTER), each with a slave (broker-a-s, broker-b-s) "
        "replicating it; 2m-2s-sync: the same with SYNC_MASTERs (a send waits for the slave); "
        "controller: a name server with its embedded controller and three controller-mode replicas "
        "of broker-c.")] = "single",
    dir_: DirOpt = None,
    host: Annotated[str, typer.Option(
        help="Address every process listens on (0.0.0.0: every interface; the processes are then "
        "registered and shown as 127.0.0.1).")] = "127.0.0.1",
    namesrv_port: Annotated[int, typer.Option(help="Name server port.")] = 9876,
    broker_port: Annotated[int, typer.Option(
        help="broker-a's port; each broker also takes port - 2 (VIP) and port + 1 (HA); broker-a-s is "
        "10 more, broker-b 20 more, broker-b-s 30 more (10911, 10921, 10931, 10941 by default, as the "
        "official layouts).")] = 10911,
    cluster_name: Annotated[str, typer.Option(help="brokerClusterName.")] = "DefaultCluster",
    wait: Annotated[float, typer.Option(help="Seconds to wait for each process to answer.")] = 20.0,
    force: Annotated[bool, typer.Option(
        help="Use --dir even though it holds files mqctl did not make (they are left alone, "
        "also by 'down --purge').")] = False,
    broker_set: Annotated[list[str] | None, typer.Option(
        "--broker-set", metavar="KEY=VALUE", help="Add this setting to every broker's configuration "
        "(aclEnable=true, say); repeatable.")] = None,
) -> None:
    """Start a local reference cluster in the background and wait until it answers."""
    from . import local
    from .serving import parse_sets

    extra = parse_sets(broker_set, "--broker-set")
    result = local.cluster_up(local.cluster_dir(dir_), layout=layout, host=host,
                              namesrv_port=namesrv_port, broker_port=broker_port,
                              cluster_name=cluster_name, wait=wait, force=force, broker_config=extra)
    _show(settings(ctx).output, result, "started")
    out = settings(ctx).output
    if out.format == "table":
        out.info(f"try: mqctl -n {result.namesrv_addr} cluster list")


@app.command()
def down(
    ctx: typer.Context,
    dir_: DirOpt = None,
    wait: Annotated[float, typer.Option(help="Seconds to wait for each process to exit.")] = 15.0,
    purge: Annotated[bool, typer.Option(
        help="Also delete what 'cluster up' made in the directory (configs, stores, logs); "
        "nothing else in it is touched.")] = False,
) -> None:
    """Stop the local reference cluster (SIGTERM, then wait for every process to exit). Where no
    cluster runs, it says so and exits 0."""
    from . import local

    result = local.cluster_down(local.cluster_dir(dir_), wait=wait, purge=purge)
    out = settings(ctx).output
    if result.processes:
        _show(out, result, "stopped")
    elif out.format != "table":
        out.data(result)
    else:
        out.info(f"no cluster running in {result.dir}")
    p = result.purge
    if p is not None:
        what = f"deleted {_names(p.removed)} from {result.dir}" if p.removed else "nothing to delete"
        if p.dir_removed:
            what += ", then the directory itself"
        if p.kept:
            what += f"; kept {len(p.kept)} entries mqctl did not make ({_names(p.kept)})"
        out.info(what)


def _names(names: tuple[str, ...], most: int = 8) -> str:
    return ", ".join(names[:most]) + (f" and {len(names) - most} more" if len(names) > most else "")


@app.command()
def status(
    ctx: typer.Context,
    dir_: DirOpt = None,
    watch_s: WatchOpt = None,
) -> None:
    """Show the local reference cluster's processes and whether each one answers."""
    from . import local
    from .errors import CliError

    out = settings(ctx).output
    directory = local.cluster_dir(dir_)
    state: dict[str, LocalCluster] = {}

    def render(result: LocalCluster) -> None:
        state["last"] = result
        _show(out, result, "local")

    async def probe(client: object) -> LocalCluster:
        return await local.cluster_status(directory, timeout=settings(ctx).timeout)

    watch(ctx, watch_s, probe, render)
    last = state.get("last")
    if last is not None and not last.running:
        raise CliError(f"the local cluster in {directory} is not running"
                       + ("" if not last.processes else " (or not every process answers)"))


# ---------------------------------------------------------------------- send round-trip, metadata


@app.command()
def rt(
    ctx: typer.Context,
    cluster: Annotated[str | None, typer.Option("--cluster", "-c", help="Only this cluster.")] = None,
    amount: Annotated[int, typer.Option("--amount", "-a", help="Messages sent to each broker.")] = 100,
    size: Annotated[int, typer.Option("--size", "-s", help="Body size in bytes.")] = 128,
    broker: Annotated[str | None, typer.Option("--broker", "-b", help="Only this broker name.")] = None,
) -> None:
    """Send round-trip time of every broker: AMOUNT messages of SIZE bytes to the topic named after
    the broker, the mean time after the first send (mqadmin clusterRT)."""
    from wire.admin import cluster as api
    from wire.admin.common import Outcome

    from .runner import finish, run

    result = run(ctx, api.cluster_rt, cluster=cluster, amount=amount, size=size, broker=broker)
    out = settings(ctx).output
    for b in result:
        if b.error is not None:
            out.warn(f"{b.broker_name}: {b.error}")
    out.render(result, ["#Cluster Name", "#Broker Name", "#RT", "#successCount", "#failCount"],
               [[b.cluster, b.broker_name, "-" if b.rt_ms is None else java_fixed(b.rt_ms, 2), str(b.success),
                 str(b.fail)] for b in result])
    finish([Outcome(b.broker_name, b.error is None, b.error) for b in result], "cluster rt",
           servers="brokers")


metadata_app = typer.Typer(no_args_is_help=True,
                           help="Export a cluster's topics and groups, and import them.")
app.add_typer(metadata_app, name="metadata")


@metadata_app.command("export")
def metadata_export(
    ctx: typer.Context,
    cluster: Annotated[str, typer.Option("--cluster", "-c", help="The cluster to export.")],
    file: Annotated[Path | None, typer.Option("--file", "-f", help="Write here (default: stdout).")] = None,
    topics_only: Annotated[bool, typer.Option("--topics-only", help="Only the topics.")] = False,
    groups_only: Annotated[bool, typer.Option("--groups-only", help="Only the subscription groups.")] = False,
) -> None:
    """The user topics and subscription groups of a cluster's masters as one JSON document (YAML with
    -o yaml), mqadmin exportMetadata's metadata.json: queue counts summed over the masters."""
    import json as _json

    from wire.admin import metadata as api

    from .errors import UsageError
    from .runner import run

    if topics_only and groups_only:
        raise UsageError("give at most one of --topics-only, --groups-only")
    result = run(ctx, api.export_metadata, cluster=cluster, topics=not groups_only, groups=not topics_only)
    doc = result.to_document()
    if topics_only:
        doc.pop("subscriptionGroupTable")
    if groups_only:
        doc.pop("topicConfigTable")
    out = settings(ctx).output
    if file is None:
        out.data(doc)
        return
    if out.format == "yaml":
        import yaml

        text = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True)
    else:
        text = _json.dumps(doc, ensure_ascii=False, indent=2) + "\n"
    try:
        file.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UsageError(f"--file {file}: {exc.strerror or exc}") from None
    out.info(f"export {file} success: {len(result.topics)} topics, {len(result.groups)} groups")


@metadata_app.command("import")
def metadata_import(
    ctx: typer.Context,
    file: Annotated[Path, typer.Argument(
        help="A document of 'cluster metadata export' or mqadmin exportMetadata, or a JSON array "
        "of topic or group configs (mqadmin updateTopicList / updateSubGroupList).")],
    cluster: Annotated[str | None, typer.Option(
        "--cluster", "-c", help="Create them on every master of this cluster.")] = None,
    broker: MasterAddrOpt = None,
) -> None:
    """Create (or update) every topic and subscription group of an exported document on a cluster's
    masters, or on one broker (UPDATE_AND_CREATE_TOPIC, UPDATE_AND_CREATE_SUBSCRIPTIONGROUP); each
    master gets the exported queue counts divided by the number of masters they were summed over,
    or the counts of an array of configs as written."""
    from wire import fastjson
    from wire.admin import metadata as api
    from wire.admin.errors import BadRequest
    from wire.errors import DecodeError

    from .errors import UsageError
    from .runner import check_outcomes, print_outcomes, run

    if (cluster is None) == (broker is None):
        raise UsageError("give -c CLUSTER or -b BROKER_ADDR (one of them)")
    try:
        text = file.read_bytes()
    except OSError as exc:
        raise UsageError(f"{file}: {exc.strerror or exc}") from None
    try:
        if file.suffix in (".yaml", ".yml"):
            import yaml

            doc = yaml.safe_load(text)
        else:
            doc = fastjson.loads(text, what=str(file))
        metadata = api.Metadata.from_document(doc)
    except (DecodeError, ValueError, BadRequest) as exc:
        raise UsageError(f"{file}: {exc}") from None
    except Exception as exc:  # yaml's errors
        if type(exc).__module__.startswith("yaml"):
            raise UsageError(f"{file}: not valid YAML ({exc})") from None
        raise
    result = run(ctx, api.import_metadata, metadata=metadata, cluster=cluster, broker=broker)
    out = settings(ctx).output
    if out.format != "table":
        out.data(result)
    else:
        print_outcomes(out, result.outcomes, lambda o: f"import {o.target} success.",
                       lambda o: f"import {o.target} failed: {o.error}")
    check_outcomes(result.outcomes, "cluster metadata import")
