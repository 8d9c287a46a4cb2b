# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl namesrv``: run a reference name server, and talk to any name server."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

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
    from reference_broker.namesrv import NameServer
    from wire.admin.topic import Outcome

app = typer.Typer(no_args_is_help=True)


@app.command()
def start(
    config: Annotated[Path | None, typer.Option(
        "--config", "-c", help="namesrv.properties (RocketMQ's own format).")] = None,
    listen: Annotated[str | None, typer.Option(
        help="HOST:PORT to listen on. Default: the config's bindAddress, else 127.0.0.1; "
             "the config's listenPort (9876).")] = None,
    set_: SetOpt = None,
    log_file: LogFileOpt = None,
) -> None:
    """Run a reference name server in the foreground until SIGINT/SIGTERM."""
    from reference_broker.config import NamesrvConfig
    from reference_broker.runtime import run_foreground, setup_logging

    setup_logging(log_file)
    overrides = parse_sets(set_)
    cfg = load_server_config(NamesrvConfig, config, overrides)
    host, port = listen_address(listen, cfg)
    check_ports(host, [(port, "the name server's port")])
    warning = exposure_warning(host, cfg.bool("aclEnable"))
    if warning:
        typer.echo(warning, err=True)

    def make() -> NameServer:
        from reference_broker.namesrv import NameServer

        return NameServer(cfg, host=host, port=port)

    def started(ns: NameServer) -> None:
        typer.echo(f"The Name Server boot success. listening on {host}:{ns.port}", err=True)

    raise typer.Exit(run_foreground(make, "namesrv", started))


# ---------------------------------------------------------------------- talking to any name server

config_app = typer.Typer(no_args_is_help=True, help="Read and change the name servers' configuration.")
kv_app = typer.Typer(no_args_is_help=True, help="The name servers' KV store (namespace, key, value).")
perm_app = typer.Typer(no_args_is_help=True, help="Take away or give back a broker's write permission.")
app.add_typer(config_app, name="config")
app.add_typer(kv_app, name="kv")
app.add_typer(perm_app, name="write-perm")

NamespaceArg = Annotated[str, typer.Argument(help="Namespace, e.g. ORDER_TOPIC_CONFIG.")]
KeyArg = Annotated[str, typer.Argument(help="Key.")]


def _report(ctx: typer.Context, outcomes: tuple[Outcome, ...], what: str, ok_line: str, *,
            each: bool = True) -> None:
    """mqadmin's success line, per name server (``each``) or, as mqadmin prints it, once when all
    of them took the change; when only some did, one line names each that did. A warning for
    each that did not, then the partial-answer rule (:func:`mqctl.runner.finish`)."""
    from .runner import check_outcomes, settings, warn_failures

    out = settings(ctx).output
    if out.format != "table":
        out.data(outcomes)
    elif each or not all(o.ok for o in outcomes):
        for o in outcomes:
            if o.ok:
                line = ok_line.format(target=o.target, detail=o.detail)
                out.line(line if each else f"{line.rstrip('.')}, {o.target}")
        warn_failures(out, [o for o in outcomes if not o.ok])
    else:
        out.line(ok_line)
    check_outcomes(outcomes, what)


@config_app.command("get")
def config_get(
    ctx: typer.Context,
    keys: Annotated[list[str] | None, typer.Argument(help="Only these keys.")] = None,
) -> None:
    """Every listed name server's configuration (GET_NAMESRV_CONFIG; mqadmin getNamesrvConfig)."""
    from wire.admin import namesrv as api
    from wire.admin.common import Outcome

    from .errors import CliError
    from .runner import finish, run, settings

    configs = run(ctx, api.namesrv_config_get, keys=tuple(keys or ()))
    out = settings(ctx).output
    for c in configs:
        if c.error is not None:
            out.warn(f"{c.addr}: {c.error}")
    if out.format != "table":
        out.data(configs if len(configs) > 1 else configs[0].table)
    else:
        for c in configs:
            if c.error is not None:
                continue
            if len(configs) > 1:
                out.line(f"============{c.addr}============")
            out.table(["#Key", "#Value"], list(c.table.items()))
    finish([Outcome(c.addr, c.error is None, c.error, unreachable=c.unreachable) for c in configs],
           "namesrv config get", servers="name servers")
    missing = [k for k in dict.fromkeys(keys or ())
               if any(c.error is None and k not in c.table for c in configs)]
    if missing:
        raise CliError(f"no such configuration key{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")


@config_app.command("set")
def config_set(
    ctx: typer.Context,
    pairs: Annotated[list[str], typer.Argument(help="KEY=VALUE pairs.", metavar="KEY=VALUE...")],
) -> None:
    """Change the name servers' configuration at run time (UPDATE_NAMESRV_CONFIG; mqadmin
    updateNamesrvConfig)."""
    from wire.admin import namesrv as api

    from .runner import run

    outcomes = run(ctx, api.namesrv_config_set, values=parse_sets(pairs, "KEY=VALUE"))
    _report(ctx, outcomes, "namesrv config set", "update name server config success, {target}")


@kv_app.command("get")
def kv_get(ctx: typer.Context, namespace: NamespaceArg, key: KeyArg) -> None:
    """One KV entry (GET_KV_CONFIG)."""
    from wire.admin import namesrv as api

    from .runner import run, settings

    value = run(ctx, api.kv_get, namespace=namespace, key=key)
    out = settings(ctx).output
    if out.format != "table":
        out.data({"namespace": namespace, "key": key, "value": value})
    else:
        out.line(value)


@kv_app.command("list")
def kv_list(ctx: typer.Context, namespace: NamespaceArg) -> None:
    """Every KV entry of a namespace (GET_KVLIST_BY_NAMESPACE)."""
    from wire.admin import namesrv as api

    from .runner import run, settings

    table = run(ctx, api.kv_list, namespace=namespace)
    settings(ctx).output.render(table, ["#Key", "#Value"], list(table.items()))


@kv_app.command("put")
def kv_put(ctx: typer.Context, namespace: NamespaceArg, key: KeyArg,
           value: Annotated[str, typer.Argument(help="Value.")]) -> None:
    """Create or update a KV entry on every name server (PUT_KV_CONFIG; mqadmin updateKvConfig)."""
    from wire.admin import namesrv as api

    from .runner import run

    outcomes = run(ctx, api.kv_put, namespace=namespace, key=key, value=value)
    _report(ctx, outcomes, "namesrv kv put", "create or update kv config to namespace success.", each=False)


@kv_app.command("delete")
def kv_delete(ctx: typer.Context, namespace: NamespaceArg, key: KeyArg) -> None:
    """Delete a KV entry from every name server (DELETE_KV_CONFIG; mqadmin deleteKvConfig)."""
    from wire.admin import namesrv as api

    from .runner import run

    outcomes = run(ctx, api.kv_delete, namespace=namespace, key=key)
    _report(ctx, outcomes, "namesrv kv delete", "delete kv config from namespace success.", each=False)


BrokerNameArg = Annotated[str, typer.Argument(help="Broker name, e.g. broker-a.")]


@perm_app.command("wipe")
def write_perm_wipe(ctx: typer.Context, broker_name: BrokerNameArg) -> None:
    """Stop producers writing to a broker: every name server drops its write perm
    (WIPE_WRITE_PERM_OF_BROKER; mqadmin wipeWritePerm)."""
    from wire.admin import namesrv as api

    from .runner import run

    outcomes = run(ctx, api.write_perm, action="wipe", broker_name=broker_name)
    _report(ctx, outcomes, "wipe write perm",
            f"wipe write perm of broker[{broker_name}] in name server[{{target}}] OK, {{detail}}")


@perm_app.command("add")
def write_perm_add(ctx: typer.Context, broker_name: BrokerNameArg) -> None:
    """Give a broker its write perm back on every name server (ADD_WRITE_PERM_OF_BROKER; mqadmin
    addWritePerm)."""
    from wire.admin import namesrv as api

    from .runner import run

    outcomes = run(ctx, api.write_perm, action="add", broker_name=broker_name)
    _report(ctx, outcomes, "add write perm",
            f"add write perm of broker[{broker_name}] in name server[{{target}}] OK, {{detail}}")
