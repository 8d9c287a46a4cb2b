# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl controller``: run a reference controller, and talk to any 5.x controller.

``metadata``, ``sync-state-set`` and ``elect`` speak to a controller (``-a HOST:PORT``, the
controller's own address, as mqadmin's ``-a``); ``epochs`` asks every process of a broker name
the name server lists. They work against the Java 5.0.0 controller and the reference one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from .serving import LogFileOpt, SetOpt, listen_address, load_server_config, parse_sets

if TYPE_CHECKING:
    from reference_broker.controller import Controller

app = typer.Typer(no_args_is_help=True)

ControllerOpt = Annotated[str, typer.Option("--controller", "-a",
                                            help="The controller's address, HOST:PORT.")]


@app.command()
def start(
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="controller.properties (RocketMQ's ControllerConfig keys).")] = None,
    listen: Annotated[str | None, typer.Option(
        help="HOST:PORT to listen on. Default: this node's address in controllerDLegerPeers.")] = None,
    store: Annotated[Path | None, typer.Option(
        help="Where the event log goes. Default: the config's controllerStorePath.")] = None,
    set_: SetOpt = None,
    log_file: LogFileOpt = None,
) -> None:
    """Run a reference controller (one node) in the foreground until SIGINT/SIGTERM."""
    from reference_broker.controller import ControllerConfig
    from reference_broker.runtime import run_foreground, setup_logging

    setup_logging(log_file)
    cfg = load_server_config(ControllerConfig, config, parse_sets(set_))
    peer = cfg.self_address or "127.0.0.1:9878"
    host, port = listen_address(listen, cfg)
    if not listen and "bindAddress" not in cfg.given:
        host = peer.rpartition(":")[0] or host

    def make() -> Controller:
        from reference_broker.controller import Controller

        return Controller(cfg, host=host, port=port, store_path=store)

    def started(c: Controller) -> None:
        typer.echo(f"The ControllerManager boot success. listening on {c.address}", err=True)

    raise typer.Exit(run_foreground(make, "controller", started))


@app.command()
def metadata(ctx: typer.Context, controller: ControllerOpt) -> None:
    """The controller group's leader and peers (CONTROLLER_GET_METADATA_INFO; mqadmin
    getControllerMetaData)."""
    from wire.admin import controller as api

    from .runner import run, settings

    m = run(ctx, api.controller_metadata, controller=controller)
    out = settings(ctx).output
    if out.format != "table":
        out.data(m)
        return
    out.kv([("#ControllerGroup", m.group), ("#ControllerLeaderId", m.leader_id),
            ("#ControllerLeaderAddress", m.leader_address), ("#IsLeader", str(m.is_leader).lower()),
            ("#Peers", m.peers)])


@app.command()
def config(
    ctx: typer.Context, controller: ControllerOpt,
    keys: Annotated[list[str] | None, typer.Argument(help="Only these keys.")] = None,
) -> None:
    """The controller's configuration (GET_CONTROLLER_CONFIG; mqadmin getControllerConfig). Exit 1
    when a key asked for is not in it."""
    from wire.admin import controller as api

    from .errors import CliError
    from .runner import run, settings

    table = run(ctx, api.controller_config, controller=controller)
    wanted = list(dict.fromkeys(keys or ()))
    shown = {k: table[k] for k in wanted if k in table} if wanted else dict(sorted(table.items()))
    out = settings(ctx).output
    if out.format != "table":
        out.data(shown)
    else:
        out.table(["#Key", "#Value"], list(shown.items()))
    missing = [k for k in wanted if k not in table]
    if missing:
        raise CliError(f"no such configuration key{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")


@app.command("sync-state-set")
def sync_state_set(
    ctx: typer.Context, controller: ControllerOpt,
    broker_names: Annotated[list[str], typer.Argument(help="Broker names, e.g. broker-c.")],
) -> None:
    """Each broker name's master, epochs and in-sync replicas (CONTROLLER_GET_SYNC_STATE_DATA;
    mqadmin getSyncStateSet)."""
    from wire.admin import controller as api

    from .errors import CliError
    from .runner import run, settings

    table = run(ctx, api.sync_state_sets, controller=controller, broker_names=list(broker_names))
    out = settings(ctx).output
    if out.format != "table":
        out.data(table)
    else:
        for name, s in table.items():
            out.kv([("#brokerName", name), ("#MasterAddr", s.master_address),
                    ("#MasterEpoch", s.master_epoch),
                    ("#SyncStateSetEpoch", s.sync_state_set_epoch),
                    ("#SyncStateSetMemberNums", len(s.in_sync_members or ()))])
            out.table(["#Member", "#BrokerId"], [(m.address, m.broker_id) for m in s.in_sync_members or ()])
    missing = [n for n in broker_names if n not in table]
    if missing:
        raise CliError(f"the controller knows no broker named {', '.join(missing)}")


@app.command()
def elect(
    ctx: typer.Context, controller: ControllerOpt,
    broker: Annotated[str, typer.Option("--broker", "-b", help="The broker name to elect a master for.")],
    cluster: Annotated[str, typer.Option("--cluster", "-c", help="Its cluster.")] = "DefaultCluster",
    addr: Annotated[str | None, typer.Option(
        "--addr", help="The replica to make master (live and in the SyncStateSet); default: the "
        "controller's choice.")] = None,
) -> None:
    """A manual election (CONTROLLER_ELECT_MASTER; mqadmin electMaster). Fails while the live
    master stays the controller's choice."""
    from wire.admin import controller as api

    from .runner import run, settings

    r = run(ctx, api.elect_master, controller=controller, cluster=cluster, broker_name=broker,
            broker_addr=addr)
    out = settings(ctx).output
    if out.format != "table":
        out.data(r)
        return
    out.kv([("#BrokerName", r.broker_name), ("#NewMasterAddr", r.new_master),
            ("#MasterEpoch", r.master_epoch),
            ("#SyncStateSetEpoch", r.sync_state_set_epoch)])


@app.command()
def epochs(
    ctx: typer.Context,
    broker: Annotated[str | None, typer.Argument(help="Broker name, e.g. broker-c.")] = None,
    cluster: Annotated[str | None, typer.Option("--cluster", "-c", help="Its cluster.")] = None,
    file: Annotated[Path | None, typer.Option(
        "--file", help="Read an epoch file (storePathEpochFile, Java's or ours) instead of asking "
        "brokers.")] = None,
) -> None:
    """Every replica's epoch entries and CommitLog end (GET_BROKER_EPOCH_CACHE; mqadmin
    getBrokerEpoch), or the entries of one epoch file on disk (``--file``)."""
    from .errors import CliError, UsageError
    from .runner import settings

    out = settings(ctx).output
    if file is not None:
        if broker is not None:
            raise UsageError("give a broker name or --file, not both")
        _epoch_file(out, file)
        return
    if broker is None:
        raise UsageError("a broker name (or --file) is needed")
    from wire.admin import controller as api

    from .runner import run

    found = run(ctx, api.broker_epochs, broker_name=broker, cluster=cluster)
    if out.format != "table":
        out.data(found)
    else:
        for b in found:
            if b.cache is None:
                out.warn(f"{b.addr}: {b.error}")
                continue
            c = b.cache
            out.kv([("#clusterName", c.cluster_name), ("#brokerName", c.broker_name), ("#brokerAddr", b.addr),
                    ("#brokerId", c.broker_id), ("#maxOffset", c.max_offset)])
            out.table(["#Epoch", "#StartOffset", "#EndOffset"],
                      [(e.epoch, e.start_offset, e.end_offset) for e in c.epoch_list or ()])
    if any(b.cache is None for b in found):
        raise CliError("some replicas did not answer GET_BROKER_EPOCH_CACHE")


def _epoch_file(out: Any, path: Path) -> None:
    from wire.errors import DecodeError
    from wire.ha.autoswitch import EpochCache
    from wire.ha.epoch import decode_epoch_file

    from .errors import CliError

    try:
        data = path.read_bytes()
    except OSError as exc:
        raise CliError(f"{path}: {exc.strerror or exc}") from None
    try:
        entries = decode_epoch_file(data)
    except DecodeError as exc:
        raise CliError(f"{path}: {exc}") from None
    ranges = EpochCache(entries).ranges()
    rows = [(r.epoch, r.start_offset, r.end_offset) for r in ranges]
    if out.format != "table":
        out.data([{"epoch": e, "start_offset": a, "end_offset": b} for e, a, b in rows])
        return
    out.table(["#Epoch", "#StartOffset", "#EndOffset"], rows)
