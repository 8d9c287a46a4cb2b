# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl acl``: a broker's plain ACL (mqadmin updateAclConfig, deleteAclConfig,
updateGlobalWhiteAddr, clusterAclConfigVersion, getAclConfig).

These requests need credentials of an admin account when the brokers check ACL: give them with
the global ``--access-key``/``--secret-key`` options, ``MQCTL_ACCESS_KEY``/``MQCTL_SECRET_KEY``, or
the profile (see ``mqctl --help``). Secret keys are never printed unless asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

import typer

from .errors import UsageError
from .options import BrokerAddrOpt

app = typer.Typer(no_args_is_help=True)

BrokerOpt = BrokerAddrOpt
ClusterOpt = Annotated[str | None, typer.Option("--cluster", "-c", help="Every master of this cluster.")]
PERMS = "PUB, SUB, PUB|SUB or DENY"


def _need_one(broker: str | None, cluster: str | None) -> None:
    if (broker is None) == (cluster is None):
        raise UsageError("give one of --broker/-b or --cluster/-c")


@app.command("update")
def update(
    ctx: typer.Context,
    account: Annotated[str, typer.Option(
        "--account", "-a", help="The account's access key (over 6 characters).")],
    account_secret: Annotated[str, typer.Option(
        "--account-secret", "-s", help="The account's secret key (over 6 characters); not echoed.",
        prompt="Secret key of the account", hide_input=True)],
    white_address: Annotated[str | None, typer.Option(
        "--white-address", "-w", help="Addresses from which this account needs no signature "
        "(e.g. 192.168.0.*).")] = None,
    admin: Annotated[bool, typer.Option("--admin", help="May use the admin requests.")] = False,
    default_topic_perm: Annotated[str | None, typer.Option(help=f"Topics not listed: {PERMS}.")] = None,
    default_group_perm: Annotated[str | None, typer.Option(help=f"Groups not listed: {PERMS}.")] = None,
    topic_perm: Annotated[list[str] | None, typer.Option(
        "--topic-perm", help="TOPIC=PERM; repeatable.")] = None,
    group_perm: Annotated[list[str] | None, typer.Option(
        "--group-perm", help="GROUP=PERM; repeatable.")] = None,
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
) -> None:
    """Create or update an account (UPDATE_AND_CREATE_ACL_CONFIG; mqadmin updateAclConfig)."""
    from wire.admin import acl as api

    from .runner import check_outcomes, print_outcomes, run, settings

    _need_one(broker, cluster)
    outcomes = run(ctx, api.acl_update, access_key=account, secret_key=account_secret,
                   white_remote_address=white_address, admin=admin, default_topic_perm=default_topic_perm,
                   default_group_perm=default_group_perm, topic_perms=topic_perm, group_perms=group_perm,
                   broker=broker, cluster=cluster)
    out = settings(ctx).output
    if out.format != "table":
        out.data(outcomes)
    else:
        print_outcomes(out, outcomes, lambda o: f"update acl config success, {o.target}",
                       lambda o: f"update acl config failed, {o.target}: {o.error}")
    check_outcomes(outcomes, "acl update")


@app.command("delete")
def delete(
    ctx: typer.Context,
    account: Annotated[str, typer.Argument(help="The access key of the account to delete.")],
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
) -> None:
    """Delete an account (DELETE_ACL_CONFIG; mqadmin deleteAclConfig)."""
    from wire.admin import acl as api

    from .runner import check_outcomes, print_outcomes, run, settings

    _need_one(broker, cluster)
    outcomes = run(ctx, api.acl_delete, access_key=account, broker=broker, cluster=cluster)
    out = settings(ctx).output
    if out.format != "table":
        out.data(outcomes)
    else:
        print_outcomes(out, outcomes, lambda o: f"delete acl config success, {o.target}",
                       lambda o: f"delete acl config failed, {o.target}: {o.error}")
    check_outcomes(outcomes, "acl delete")


@app.command("white-addrs")
def white_addrs(
    ctx: typer.Context,
    addresses: Annotated[list[str], typer.Argument(help="Addresses or patterns (10.0.0.*, 10.0.0.{1,2}).")],
    file: Annotated[str, typer.Option(
        "--file", help="The broker's ACL file to write (default: its conf/plain_acl.yml).")] = "",
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
) -> None:
    """Replace the global white addresses: clients there need no credentials
    (UPDATE_GLOBAL_WHITE_ADDRS_CONFIG; mqadmin updateGlobalWhiteAddr)."""
    from wire.admin import acl as api

    from .runner import check_outcomes, print_outcomes, run, settings

    _need_one(broker, cluster)
    entries = [a.strip() for item in addresses for a in item.split(",") if a.strip()]
    outcomes = run(ctx, api.acl_white_addrs, addresses=entries, file=file, broker=broker, cluster=cluster)
    out = settings(ctx).output
    if out.format != "table":
        out.data(outcomes)
    else:
        print_outcomes(out, outcomes, lambda o: f"update global white remote addresses success, {o.target}",
                       lambda o: f"update global white remote addresses failed, {o.target}: {o.error}")
    check_outcomes(outcomes, "acl white-addrs")


@app.command("version")
def version(ctx: typer.Context, broker: BrokerOpt = None, cluster: ClusterOpt = None) -> None:
    """The version of each broker's ACL files (GET_BROKER_CLUSTER_ACL_INFO; mqadmin
    clusterAclConfigVersion)."""
    from wire.admin import acl as api

    from .fmt import human_ms
    from .runner import run, settings

    _need_one(broker, cluster)
    results = run(ctx, api.acl_versions, broker=broker, cluster=cluster)
    rows = [r for r in results if r.error is None]
    out = settings(ctx).output
    out.render(results, ["#Cluster", "#Broker", "#Addr", "#Counter", "#Updated", "#Files"], [
        [r.cluster_name, r.broker_name, r.addr, r.counter, human_ms(r.timestamp) if r.timestamp else None,
         len(r.files)] for r in rows])
    _failed(out, results, "acl version")


def _failed(out: Any, results: Sequence[Any], what: str) -> None:
    """The brokers that did not answer (``results`` with an ``error``): a warning line each, then
    the partial-answer rule (:func:`mqctl.runner.finish`)."""
    from wire.admin.common import Outcome

    from .runner import finish, warn_failures

    failures = [Outcome(r.addr, False, r.error, unreachable=r.unreachable)
                for r in results if r.error is not None]
    warn_failures(out, failures)
    finish(failures, what, servers="brokers", total=len(results))


@app.command("list")
def list_(
    ctx: typer.Context,
    broker: BrokerOpt = None,
    cluster: ClusterOpt = None,
    show_secrets: Annotated[bool, typer.Option("--show-secrets", help="Print the secret keys too.")] = False,
) -> None:
    """The accounts and global white addresses of each broker (GET_BROKER_CLUSTER_ACL_CONFIG;
    mqadmin getAclConfig). Secret keys are shown as *** unless --show-secrets."""
    from wire.admin import acl as api

    from .runner import run, settings

    _need_one(broker, cluster)
    results = run(ctx, api.acl_config, broker=broker, cluster=cluster)
    out = settings(ctx).output
    rows: list[list[object]] = []
    plain: list[dict[str, object]] = []
    for r in results:
        if r.config is None:  # a warning line, and its error in JSON
            plain.append({"addr": r.addr, "error": r.error, "unreachable": r.unreachable})
            continue
        accounts = []
        for a in r.config.plain_access_configs:
            secret = a.secret_key if show_secrets else ("***" if a.secret_key else None)
            accounts.append({"accessKey": a.access_key, "secretKey": secret,
                             "whiteRemoteAddress": a.white_remote_address, "admin": a.admin,
                             "defaultTopicPerm": a.default_topic_perm,
                             "defaultGroupPerm": a.default_group_perm,
                             "topicPerms": list(a.topic_perms or ()),
                             "groupPerms": list(a.group_perms or ())})
            rows.append([r.addr, a.access_key, secret, a.white_remote_address, "true" if a.admin else "false",
                         f"{a.default_topic_perm or '-'}/{a.default_group_perm or '-'}",
                         ",".join(a.topic_perms or ()) or "-", ",".join(a.group_perms or ()) or "-"])
        plain.append({"addr": r.addr, "globalWhiteAddrs": list(r.config.global_white_addrs),
                      "accounts": accounts})
    out.render(plain, ["#Addr", "#AccessKey", "#SecretKey", "#WhiteAddress", "#Admin",
                       "#DefaultTopic/Group", "#TopicPerms", "#GroupPerms"], rows)
    if out.format == "table":
        for r in results:
            if r.config is not None:
                out.line(f"{r.addr} global white addresses: {', '.join(r.config.global_white_addrs) or '-'}")
    _failed(out, results, "acl list")
