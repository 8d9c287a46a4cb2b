# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference controller: the 5.0.0 captures' controller traffic replayed against it, the
request rules (fencing, elections), failover on a closed connection, and the event log."""

from __future__ import annotations

import asyncio
import functools
import json
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

from reference_broker.controller import Controller, ControllerConfig, EventLogError
from reference_broker.controller.replicas import ALTER_SYNC_STATE_SET_FAILED, REGISTER_BROKER_FAILED
from tests.conftest import shared_path
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import RemotingConnection, connect
from wire.bodies import SyncStateSet
from wire.capture import CommandRow, decode_capture
from wire.headers import (
    AlterSyncStateSetRequestHeader,
    BrokerHeartbeatRequestHeader,
    ElectMasterRequestHeader,
    GetReplicaInfoRequestHeader,
    RegisterBrokerToControllerRequestHeader,
    request,
)

CLUSTER, NAME = "DefaultCluster5", "broker-c"


def aio(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test in its own event loop; tests that take ``controller`` get a started one."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        async def main() -> None:
            if "controller" in kwargs:
                cfg = ControllerConfig({"scanNotActiveBrokerInterval": "200"})
                async with Controller(cfg, port=0, store_path=kwargs.pop("controller")) as c:
                    await asyncio.wait_for(fn(*args, controller=c, **kwargs), 60)
            else:
                await asyncio.wait_for(fn(*args, **kwargs), 60)

        asyncio.run(main())

    return run


@pytest.fixture
def controller(tmp_path: Path) -> Path:
    return tmp_path


async def _register(conn: RemotingConnection, addr: str, epoch: int = -1, max_offset: int = 0) -> RemotingCommand:
    return await conn.request(request(RequestCode.CONTROLLER_REGISTER_BROKER, RegisterBrokerToControllerRequestHeader(
        cluster_name=CLUSTER, broker_name=NAME, broker_address=addr, epoch=epoch, max_offset=max_offset)))


async def _alter(conn: RemotingConnection, master: str, master_epoch: int, members: list[str],
                 set_epoch: int) -> RemotingCommand:
    body = SyncStateSet(sync_state_set=tuple(members), sync_state_set_epoch=set_epoch).encode()
    return await conn.request(request(RequestCode.CONTROLLER_ALTER_SYNC_STATE_SET, AlterSyncStateSetRequestHeader(
        broker_name=NAME, master_address=master, master_epoch=master_epoch), body))


def _ssset(body: bytes | None) -> tuple[set[str], int]:
    d = json.loads(body or b"{}")
    return set(d["syncStateSet"]), d["syncStateSetEpoch"]


# ------------------------------------------------------------------ the 5.0.0 capture, replayed

def _body_shape(body: bytes | None) -> Any:
    if not body:
        return None
    d = json.loads(body)
    if isinstance(d, dict) and "syncStateSet" in d:
        d["syncStateSet"] = sorted(d["syncStateSet"])
    return d


@pytest.mark.shared
@aio
async def test_startup_capture_replayed(controller: Controller) -> None:
    """Every controller request of 11-controller-startup, sent on one connection per broker as the
    brokers sent them, gets the code, header fields and body Java answered (the controller's own
    address and a body's set order aside)."""
    path = shared_path("captures", "java-5.0.0", "11-controller-startup.pcap")
    rows = [r for r in decode_capture(str(path)) if isinstance(r, CommandRow) and r.conv.server_port == 9878]
    answers = {(r.conv.client_port, r.command.opaque): r.command for r in rows if r.direction == 1}
    conns: dict[int, RemotingConnection] = {}
    compared = 0
    try:
        for r in rows:
            if r.direction != 0:
                continue
            cmd = r.command
            conn = conns.get(r.conv.client_port)
            if conn is None:
                conn = conns[r.conv.client_port] = await connect("127.0.0.1", controller.port)
            if cmd.is_oneway:
                conn.oneway(cmd)
                continue
            got = await conn.request(RemotingCommand(code=cmd.code, ext_fields=dict(cmd.ext_fields or {}),
                                                     body=cmd.body))
            want = answers[(r.conv.client_port, cmd.opaque)]
            assert got.code == want.code, (cmd, got)
            ext_want = dict(want.ext_fields or {})
            ext_got = dict(got.ext_fields or {})
            if cmd.code == RequestCode.CONTROLLER_GET_METADATA_INFO:
                for k in ("controllerLeaderAddress", "peers"):
                    ext_want.pop(k)
                    ext_got.pop(k)
            assert ext_got == ext_want, cmd
            assert _body_shape(got.body) == _body_shape(want.body), cmd
            compared += 1
    finally:
        for c in conns.values():
            await c.aclose()
    assert compared >= 20


# ------------------------------------------------------------------ rules

@aio
async def test_register_assigns_ids_and_the_first_is_master(controller: Controller) -> None:
    async with await connect("127.0.0.1", controller.port) as a, await connect("127.0.0.1", controller.port) as b:
        ra = await _register(a, "127.0.0.1:1001")
        assert ra.code == 0 and ra.ext_fields == {"masterAddress": "127.0.0.1:1001", "brokerId": "0",
                                                  "masterEpoch": "1", "syncStateSetEpoch": "1"}
        rb = await _register(b, "127.0.0.1:2001")
        assert rb.ext_fields["brokerId"] == "2" and rb.ext_fields["masterAddress"] == "127.0.0.1:1001"
        info = await b.request(request(RequestCode.CONTROLLER_GET_REPLICA_INFO,
                                       GetReplicaInfoRequestHeader(broker_name=NAME, broker_address="127.0.0.1:1001")))
        assert info.ext_fields["brokerId"] == "1" and _ssset(info.body) == ({"127.0.0.1:1001"}, 1)


@aio
async def test_alter_sync_state_set_is_fenced(controller: Controller) -> None:
    m, s = "127.0.0.1:1001", "127.0.0.1:2001"
    async with await connect("127.0.0.1", controller.port) as a, await connect("127.0.0.1", controller.port) as b:
        await _register(a, m)
        await _register(b, s)
        assert (await _alter(a, s, 1, [m, s], 1)).code == ResponseCode.CONTROLLER_INVALID_MASTER
        assert (await _alter(a, m, 7, [m, s], 1)).code == ResponseCode.CONTROLLER_FENCED_MASTER_EPOCH
        assert (await _alter(a, m, 1, [m, s], 0)).code == ResponseCode.CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH
        assert (await _alter(a, m, 1, [m, "127.0.0.1:9"], 1)).code == ResponseCode.CONTROLLER_INVALID_REPLICAS
        assert (await _alter(a, m, 1, [m], 1)).code == ALTER_SYNC_STATE_SET_FAILED   # unchanged
        assert (await _alter(a, m, 1, [s], 1)).code == ALTER_SYNC_STATE_SET_FAILED   # drops the master
        ok = await _alter(a, m, 1, [m, s], 1)
        assert ok.code == 0 and ok.ext_fields == {"newSyncStateSetEpoch": "2"} and _ssset(ok.body) == ({m, s}, 2)
        # a replica that is not live cannot join
        await _register(await connect("127.0.0.1", controller.port), "127.0.0.1:3001")
        controller.live.pop((CLUSTER, "127.0.0.1:3001"))
        assert (await _alter(a, m, 1, [m, s, "127.0.0.1:3001"], 2)).code == ResponseCode.CONTROLLER_BROKER_NOT_ALIVE


@aio
async def test_failover_when_the_master_connection_closes(controller: Controller) -> None:
    """As 13-failover: the master's connection closes, the in-sync slave is elected at once and told
    so with NOTIFY_BROKER_ROLE_CHANGED; the old master comes back as a slave with a new id."""
    m, s = "127.0.0.1:1001", "127.0.0.1:2001"
    notices: asyncio.Queue[RemotingCommand] = asyncio.Queue()

    async def on_request(conn: RemotingConnection, cmd: RemotingCommand) -> None:
        notices.put_nowait(cmd)

    from wire.aio import start_server
    slave_server = await start_server(on_request, "127.0.0.1", 0)
    s = f"127.0.0.1:{slave_server.port}"
    try:
        a = await connect("127.0.0.1", controller.port)
        async with await connect("127.0.0.1", controller.port) as b:
            await _register(a, m)
            await _register(b, s)
            assert (await _alter(a, m, 1, [m, s], 1)).code == 0
            b.oneway(request(RequestCode.BROKER_HEARTBEAT, BrokerHeartbeatRequestHeader(
                cluster_name=CLUSTER, broker_addr=s, broker_name=NAME, epoch=1, max_offset=100), oneway=True))
            await a.aclose()
            notice = await asyncio.wait_for(notices.get(), 5)
            assert notice.code == RequestCode.NOTIFY_BROKER_ROLE_CHANGED
            assert notice.ext_fields == {"masterAddress": s, "masterEpoch": "2", "syncStateSetEpoch": "2",
                                         "brokerId": "0"}
            info = await b.request(request(RequestCode.CONTROLLER_GET_REPLICA_INFO,
                                           GetReplicaInfoRequestHeader(broker_name=NAME, broker_address=s)))
            assert info.ext_fields["masterAddress"] == s and _ssset(info.body) == ({s}, 3)
            async with await connect("127.0.0.1", controller.port) as again:
                back = await _register(again, m, epoch=1, max_offset=48_130)
                assert back.ext_fields == {"masterAddress": s, "brokerId": "1", "masterEpoch": "2",
                                           "syncStateSetEpoch": "3"}
                # a manual election of the live master changes nothing
                el = await again.request(request(RequestCode.CONTROLLER_ELECT_MASTER, ElectMasterRequestHeader(
                    cluster_name=CLUSTER, broker_name=NAME, broker_address=s)))
                assert el.code == 2011
    finally:
        await slave_server.close()


@aio
async def test_no_master_and_not_in_sync_cannot_register(controller: Controller) -> None:
    m, s = "127.0.0.1:1001", "127.0.0.1:2001"
    a = await connect("127.0.0.1", controller.port)
    await _register(a, m)
    async with await connect("127.0.0.1", controller.port) as b:
        await _register(b, s)          # never joins the SyncStateSet
        await a.aclose()               # the master goes: no one in sync is left
        for _ in range(50):
            if not controller.replicas.groups[NAME].master:
                break
            await asyncio.sleep(0.02)
        assert controller.replicas.groups[NAME].master == ""
        again = await _register(b, s)
        assert again.code == REGISTER_BROKER_FAILED and again.ext_fields["masterAddress"] == ""


@aio
async def test_state_survives_a_restart(tmp_path: Path) -> None:
    m, s = "127.0.0.1:1001", "127.0.0.1:2001"
    c = Controller(port=0, store_path=tmp_path)
    async with c:
        async with await connect("127.0.0.1", c.port) as a, await connect("127.0.0.1", c.port) as b:
            await _register(a, m)
            await _register(b, s)
            assert (await _alter(a, m, 1, [m, s], 1)).code == 0
    before, written = c.replicas.to_json(), c.events.count
    assert before[NAME]["syncStateSetEpoch"] == 2 and written == 4   # elect, id, alter, master gone
    c2 = Controller(port=0, store_path=tmp_path)
    async with c2:
        assert c2.replicas.to_json() == before
        assert c2.events.count == written
    # a torn last line is dropped, a bad line in the middle is an error with file:line
    log_path = tmp_path / "events.log"
    log_path.write_bytes(log_path.read_bytes() + b'{"type":"ALT')
    c3 = Controller(port=0, store_path=tmp_path)
    async with c3:
        assert c3.replicas.to_json() == c2.replicas.to_json()
    log_path.write_bytes(b'{"type":"ELECT_MASTER"}\nnot json\n')
    with pytest.raises(EventLogError, match=r"events.log:2"):
        await Controller(port=0, store_path=tmp_path).start()


@aio
async def test_embedded_in_the_name_server(tmp_path: Path) -> None:
    from reference_broker.config import NamesrvConfig
    from reference_broker.namesrv import NameServer

    cfg = NamesrvConfig(overrides={"kvConfigPath": str(tmp_path / "kv.json"), "enableControllerInNamesrv": "true",
                                   "controllerDLegerPeers": "n0-127.0.0.1:0",
                                   "controllerStorePath": str(tmp_path / "ctl")})
    async with NameServer(cfg, host="127.0.0.1", port=0) as ns:
        assert ns.controller is not None and ns.controller.port != ns.port
        async with await connect("127.0.0.1", ns.controller.port) as c:
            meta = await c.request(RemotingCommand(code=RequestCode.CONTROLLER_GET_METADATA_INFO))
            assert meta.ext_fields["controllerLeaderAddress"] == ns.controller.address
            assert (await _register(c, "127.0.0.1:1001")).code == 0
    assert (tmp_path / "ctl" / "events.log").exists()


@aio
async def test_unclean_election_only_when_enabled(tmp_path: Path) -> None:
    """The master goes while the only other replica is not in the SyncStateSet: no master (2004,
    the master is cleared) unless ``enableElectUncleanMaster``, then that replica is elected."""
    for unclean in (False, True):
        cfg = ControllerConfig({"enableElectUncleanMaster": str(unclean).lower()})
        async with Controller(cfg, port=0, store_path=tmp_path / f"u{unclean}") as c:
            a = await connect("127.0.0.1", c.port)
            async with await connect("127.0.0.1", c.port) as b:
                await _register(a, "127.0.0.1:1001")
                await _register(b, "127.0.0.1:2001")      # never joins the set
                await a.aclose()
                loop = asyncio.get_running_loop()
                end = loop.time() + 5
                while c.replicas.groups[NAME].master == "127.0.0.1:1001":
                    assert loop.time() < end
                    await asyncio.sleep(0.02)
                g = c.replicas.groups[NAME]
                assert g.master == ("127.0.0.1:2001" if unclean else "")
                assert g.master_epoch == 2


@aio
async def test_heartbeat_timeout_elects(tmp_path: Path) -> None:
    """A master whose heartbeats stop (its connection still open) is found by the scan after its
    heartbeatTimeoutMillis, its connection closed, and the in-sync slave elected."""
    cfg = ControllerConfig({"scanNotActiveBrokerInterval": "100"})
    async with Controller(cfg, port=0, store_path=tmp_path) as c:
        async with await connect("127.0.0.1", c.port) as a, await connect("127.0.0.1", c.port) as b:
            m, s = "127.0.0.1:1001", "127.0.0.1:2001"
            await a.request(request(RequestCode.CONTROLLER_REGISTER_BROKER, RegisterBrokerToControllerRequestHeader(
                cluster_name=CLUSTER, broker_name=NAME, broker_address=m, epoch=-1, max_offset=0,
                heartbeat_timeout_millis=600)))
            await _register(b, s)
            assert (await _alter(a, m, 1, [m, s], 1)).code == 0
            loop = asyncio.get_running_loop()
            end = loop.time() + 10
            while c.replicas.groups[NAME].master != s:
                assert loop.time() < end, c.replicas.groups[NAME]
                b.oneway(request(RequestCode.BROKER_HEARTBEAT, BrokerHeartbeatRequestHeader(
                    cluster_name=CLUSTER, broker_addr=s, broker_name=NAME, epoch=1, max_offset=0), oneway=True))
                await asyncio.sleep(0.1)
            await asyncio.wait_for(a.wait_closed(), 5)     # the controller closed the silent master


@aio
async def test_clean_broker_data(controller: Controller) -> None:
    from wire.headers import CleanControllerBrokerDataRequestHeader

    async def clean(conn: RemotingConnection, addrs: str | None, living: bool = False) -> RemotingCommand:
        return await conn.request(request(RequestCode.CLEAN_BROKER_DATA, CleanControllerBrokerDataRequestHeader(
            cluster_name=CLUSTER, broker_name=NAME, broker_address=addrs, is_clean_living_broker=living)))

    async with await connect("127.0.0.1", controller.port) as admin:
        a = await connect("127.0.0.1", controller.port)
        b = await connect("127.0.0.1", controller.port)
        await _register(a, "127.0.0.1:1001")
        await _register(b, "127.0.0.1:2001")
        assert (await clean(admin, None)).code == ResponseCode.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
        assert (await clean(admin, "127.0.0.1:2001")).code == ResponseCode.CONTROLLER_INVALID_CLEAN_BROKER_METADATA
        await b.aclose()
        loop = asyncio.get_running_loop()
        end = loop.time() + 5
        while controller.is_alive(CLUSTER, "127.0.0.1:2001"):
            assert loop.time() < end
            await asyncio.sleep(0.02)
        assert (await clean(admin, "127.0.0.1:2001")).code == 0
        assert set(controller.replicas.groups[NAME].ids) == {"127.0.0.1:1001"}
        assert (await clean(admin, None, living=True)).code == 0
        assert NAME not in controller.replicas.groups
        await a.aclose()
