# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Name servers: configuration (GET_NAMESRV_CONFIG 319, UPDATE_NAMESRV_CONFIG 318), the KV store
(PUT_KV_CONFIG 100, GET_KV_CONFIG 101, DELETE_KV_CONFIG 102, GET_KVLIST_BY_NAMESPACE 219) and
brokers' write permission (WIPE_WRITE_PERM_OF_BROKER 205, ADD_WRITE_PERM_OF_BROKER 327).

Writes go to every listed name server, as ``MQClientAPIImpl.putKVConfigValue`` and the mqadmin
namesrv commands do (name servers do not replicate each other); reads go to one, with failover.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from ..aio import RemotingIOError
from ..codes import RequestCode, ResponseCode
from ..errors import WireError
from ..remoting import RemotingCommand
from .client import AdminClient
from .common import Outcome, check_taken, outcome
from .errors import AdminError, BadRequest, NotFound, ServerError, ServerNotFound

__all__ = [
    "NamesrvConfig",
    "kv_delete",
    "kv_get",
    "kv_list",
    "kv_put",
    "namesrv_config_get",
    "namesrv_config_set",
    "write_perm",
]


@dataclass(frozen=True, slots=True)
class NamesrvConfig:
    addr: str
    table: Mapping[str, str]
    error: str | None = None
    #: the name server could not be reached or did not answer in time
    unreachable: bool = False


async def namesrv_config_get(client: AdminClient, *, keys: tuple[str, ...] = ()) -> tuple[NamesrvConfig, ...]:
    """GET_NAMESRV_CONFIG (319) from every listed name server at once (mqadmin getNamesrvConfig).
    With one name server, its failure is raised; with several, each failure is kept in its entry."""
    from ..bodies import PropertiesBody

    out = []
    answers = await client.each_namesrv(RequestCode.GET_NAMESRV_CONFIG)
    for addr, resp in answers:
        err: Exception | None = None
        if isinstance(resp, WireError):
            err = resp
        elif resp.code != ResponseCode.SUCCESS:
            err = ServerError(resp.code, resp.remark, addr=addr, request_code=RequestCode.GET_NAMESRV_CONFIG)
        if err is not None:
            if len(answers) == 1:
                raise err
            out.append(NamesrvConfig(addr, {}, str(err), isinstance(err, RemotingIOError)))
            continue
        assert not isinstance(resp, WireError)
        table = PropertiesBody.decode(resp.body or b"").table
        # the keys asked for, in the order asked for (mqadmin prints what it is given)
        out.append(NamesrvConfig(addr, {k: table[k] for k in keys if k in table} if keys else dict(table)))
    return tuple(out)


def _outcomes(results: list[tuple[str, RemotingCommand | WireError]], code: int,
              detail_key: str | None = None) -> tuple[Outcome, ...]:
    out = []
    for addr, resp in results:
        if isinstance(resp, WireError):
            out.append(outcome(addr, resp))
            continue
        if resp.code != ResponseCode.SUCCESS:
            out.append(outcome(addr, ServerError(resp.code, resp.remark, addr=addr, request_code=code)))
        else:
            out.append(Outcome(addr, True, None, resp.ext_fields.get(detail_key) if detail_key else None))
    return tuple(out)


async def namesrv_config_set(client: AdminClient, values: Mapping[str, str]) -> tuple[Outcome, ...]:
    """UPDATE_NAMESRV_CONFIG (318) with a Properties body, to every name server."""
    from ..bodies import encode_properties

    if not values:
        raise BadRequest("nothing to set")
    from ..bodies import PropertiesBody

    body = encode_properties(dict(values), escape=True)
    outcomes = _outcomes(await client.each_namesrv(RequestCode.UPDATE_NAMESRV_CONFIG, None, body),
                         RequestCode.UPDATE_NAMESRV_CONFIG)
    # read back: a Java name server answers SUCCESS and keeps the old value when it cannot parse one
    checked = []
    for o in outcomes:
        if o.ok:
            try:
                resp = await client.call(o.target, RequestCode.GET_NAMESRV_CONFIG)
                now = dict(PropertiesBody.decode(resp.body or b"").table)
                why = check_taken(dict(values), now, "name server")
            except (WireError, AdminError) as err:
                o = outcome(o.target, err)
            else:
                if why is not None:
                    o = Outcome(o.target, False, why)
        checked.append(o)
    return tuple(checked)


async def kv_get(client: AdminClient, namespace: str, key: str) -> str:
    """GET_KV_CONFIG (101); :class:`NotFound` when the name server has no such entry."""
    from ..headers import GetKVConfigRequestHeader, GetKVConfigResponseHeader

    resp = await client.namesrv(RequestCode.GET_KV_CONFIG,
                                GetKVConfigRequestHeader(namespace=namespace, key=key),
                                ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))
    value = GetKVConfigResponseHeader.from_ext(resp.ext_fields).value
    if resp.code != ResponseCode.SUCCESS:
        raise ServerNotFound(resp.code, resp.remark, addr=client.last_namesrv or "the name server",
                             request_code=RequestCode.GET_KV_CONFIG)
    if value is None:
        raise NotFound(f"no KV config {namespace}/{key}")
    return value


async def kv_list(client: AdminClient, namespace: str) -> dict[str, str]:
    """GET_KVLIST_BY_NAMESPACE (219): every entry of a namespace."""
    from ..bodies import KVTable
    from ..headers import GetKVListByNamespaceRequestHeader

    resp = await client.namesrv(RequestCode.GET_KVLIST_BY_NAMESPACE,
                                GetKVListByNamespaceRequestHeader(namespace=namespace),
                                ok=(ResponseCode.SUCCESS, ResponseCode.QUERY_NOT_FOUND))
    if resp.code != ResponseCode.SUCCESS:
        # what was asked for does not exist: the name server's own answer, as docs/cli.md says
        raise ServerNotFound(resp.code, resp.remark, addr=client.last_namesrv or "the name server",
                             request_code=RequestCode.GET_KVLIST_BY_NAMESPACE)
    return dict(sorted(KVTable.decode(resp.body or b"{}").table.items()))


async def kv_put(client: AdminClient, namespace: str, key: str, value: str) -> tuple[Outcome, ...]:
    """PUT_KV_CONFIG (100) to every name server (mqadmin updateKvConfig)."""
    from ..headers import PutKVConfigRequestHeader

    return _outcomes(await client.each_namesrv(
        RequestCode.PUT_KV_CONFIG, PutKVConfigRequestHeader(namespace=namespace, key=key, value=value)),
        RequestCode.PUT_KV_CONFIG)


async def kv_delete(client: AdminClient, namespace: str, key: str) -> tuple[Outcome, ...]:
    """DELETE_KV_CONFIG (102) to every name server (mqadmin deleteKvConfig)."""
    from ..headers import DeleteKVConfigRequestHeader

    return _outcomes(await client.each_namesrv(
        RequestCode.DELETE_KV_CONFIG, DeleteKVConfigRequestHeader(namespace=namespace, key=key)),
        RequestCode.DELETE_KV_CONFIG)


_PERM_CODES = {
    "wipe": (RequestCode.WIPE_WRITE_PERM_OF_BROKER, "wipeTopicCount"),
    "add": (RequestCode.ADD_WRITE_PERM_OF_BROKER, "addTopicCount"),
}


async def write_perm(client: AdminClient, action: str, broker_name: str) -> tuple[Outcome, ...]:
    """Take away (``wipe``) or give back (``add``) a broker's write permission on every name
    server; each outcome's ``detail`` is the number of topics changed there."""
    if action not in _PERM_CODES:
        raise BadRequest(f"write-perm action {action!r}: expected wipe or add")
    from ..headers import AddWritePermOfBrokerRequestHeader, WipeWritePermOfBrokerRequestHeader

    code, count_key = _PERM_CODES[action]
    header = (WipeWritePermOfBrokerRequestHeader(broker_name=broker_name) if action == "wipe"
              else AddWritePermOfBrokerRequestHeader(broker_name=broker_name))
    return _outcomes(await client.each_namesrv(code, header), code, count_key)
