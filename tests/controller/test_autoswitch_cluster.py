# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Reference brokers in controller mode, in one process with a reference controller and name
server: roles from the controller, AutoSwitch replication with epochs, the SyncStateSet growing
when the slave catches up, allAckInSyncStateSet puts, failover when the master goes, and the old
master rejoining as a slave after truncating what it wrote alone."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from reference_broker.broker import Broker
from reference_broker.controller import Controller, ControllerConfig
from reference_broker.namesrv import NameServer
from tests.broker.helpers import broker_config, client, namesrv_config, run, send_request, wait_until
from tests.conftest import shared_path
from tests.javakit import free_broker_port
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import connect
from wire.bodies import HARuntimeInfo, KVTable
from wire.ha import decode_epoch_file

NAME = "broker-c"
CLUSTER = "DefaultCluster5"


def node(root: Path, ns: str, controller: str, **keys: str) -> Broker:
    values = {"brokerName": NAME, "brokerClusterName": CLUSTER, "enableControllerMode": "true",
              "controllerAddr": controller, "brokerRole": "SLAVE", "brokerId": "-1",
              "syncBrokerMetadataPeriod": "500", "checkSyncStateSetPeriod": "500", "allAckInSyncStateSet": "true",
              "haSendHeartbeatInterval": "1000", "slaveTimeout": "1000", **keys}
    return Broker(broker_config(root, ns, **values), host="127.0.0.1", port=free_broker_port())


@contextlib.asynccontextmanager
async def group(tmp: Path) -> AsyncIterator[tuple[Controller, NameServer, Broker, Broker]]:
    ctl = Controller(ControllerConfig({"scanNotActiveBrokerInterval": "500"}), port=0, store_path=tmp / "ctl")
    async with ctl, NameServer(namesrv_config(tmp / "ns"), host="127.0.0.1", port=0) as ns:
        a = node(tmp / "a", ns.address, ctl.address)
        await a.start()
        await wait_until(lambda: a.autoswitch is not None and a.autoswitch.role == "master", 10)
        b = node(tmp / "b", ns.address, ctl.address)
        await b.start()
        try:
            yield ctl, ns, a, b
        finally:
            for x in (b, a):
                with contextlib.suppress(Exception):
                    await x.stop()


async def send(b: Broker, n: int, start: int = 0) -> list[RemotingCommand]:
    out = []
    conn = await client(b)
    try:
        for i in range(start, start + n):
            out.append(await conn.request(send_request("C5Topic", b"m%05d" % i + b"x" * 500, queue_id=i % 4)))
    finally:
        await conn.aclose()
    return out


def in_sync(a: Broker, b: Broker) -> bool:
    return a.autoswitch is not None and b.address in a.autoswitch.sync_state_set and \
        b.store.commitlog_max_offset() == a.store.commitlog_max_offset()


def test_roles_replication_and_sync_state_set(tmp_path: Path) -> None:
    async def main() -> None:
        async with group(tmp_path) as (ctl, _ns, a, b):
            await wait_until(lambda: b.autoswitch is not None and b.autoswitch.role == "slave", 10)
            assert a.config.broker_id == 0 and b.config.broker_id == 2
            answers = await send(a, 40)
            assert {r.code for r in answers} == {ResponseCode.SUCCESS}
            await wait_until(lambda: in_sync(a, b), 20)
            # the controller has the grown set
            await wait_until(lambda: ctl.replicas.groups[NAME].sync_state_set == {a.address, b.address}, 10)
            assert b.autoswitch is not None and a.autoswitch is not None
            assert b.autoswitch.epochs.cache.entries() == a.autoswitch.epochs.cache.entries()
            assert a.store.read_commitlog(0, a.store.commitlog_max_offset()) == \
                b.store.read_commitlog(0, b.store.commitlog_max_offset())
            # the slave refuses sends, and its status names its master's HA address
            refused = await send(b, 1)
            assert refused[0].code != ResponseCode.SUCCESS
            conn = await client(b)
            try:
                st = await conn.request(RemotingCommand(code=RequestCode.GET_BROKER_HA_STATUS))
                info = HARuntimeInfo.decode(st.body or b"")
                assert not info.master and info.ha_client_runtime_info.master_addr == a.ha_server_addr
                rt = await conn.request(RemotingCommand(code=RequestCode.GET_BROKER_RUNTIME_INFO))
                assert KVTable.decode(rt.body or b"").table["brokerActive"] == "false"
                ep = await conn.request(RemotingCommand(code=RequestCode.GET_BROKER_EPOCH_CACHE))
                body = json.loads(ep.body or b"")
                assert body["epochList"] == [{"endOffset": 2**63 - 1, "epoch": 1, "startOffset": 0}]
            finally:
                await conn.aclose()
            master_conn = await client(a)
            try:
                rt = await master_conn.request(RemotingCommand(code=RequestCode.GET_BROKER_RUNTIME_INFO))
                assert KVTable.decode(rt.body or b"").table["brokerActive"] == "true"
            finally:
                await master_conn.aclose()
            # the epoch file on disk is Java's format
            path = Path(b.config.get("storePathEpochFile"))
            assert [(e.epoch, e.start_offset) for e in decode_epoch_file(path.read_bytes())] == [(1, 0)]

    run(main(), 90)


def test_failover_and_rejoin_with_truncation(tmp_path: Path) -> None:
    async def main() -> None:
        async with group(tmp_path) as (ctl, ns, a, b):
            await send(a, 20)
            await wait_until(lambda: in_sync(a, b), 20)
            await wait_until(lambda: ctl.replicas.groups[NAME].sync_state_set == {a.address, b.address}, 10)
            common = a.store.commitlog_max_offset()
            # the slave stays connected but stops taking data (as a frozen process): the master writes
            # alone, and with allAckInSyncStateSet those puts are stored but time out
            assert b.autoswitch is not None and b.autoswitch.client is not None
            b.autoswitch.client.session.receive_data = lambda *args, **kwargs: []  # type: ignore[method-assign]
            before = [a.store.max_offset("C5Topic", q) for q in range(4)]
            alone = await send(a, 3, start=20)
            assert {r.code for r in alone} == {ResponseCode.FLUSH_SLAVE_TIMEOUT}
            # consumers never read past the confirm offset: the unconfirmed messages are not served
            assert [a.store.max_offset("C5Topic", q) for q in range(4)] == before
            got = a.store.get_messages("G", "C5Topic", 0, before[0], 32)
            assert got.message_count == 0 and got.next_begin_offset == before[0]
            stale_end = a.store.commitlog_max_offset()
            assert stale_end > common
            # the master dies: the controller sees its connection close and elects b
            a_root = Path(a.config.get("storePathRootDir"))
            a_port = a.port
            t0 = asyncio.get_running_loop().time()
            await a.stop()
            await wait_until(lambda: b.autoswitch is not None and b.autoswitch.role == "master", 10)
            elected_s = asyncio.get_running_loop().time() - t0
            assert elected_s < 5
            assert b.autoswitch.epochs.cache.entries()[-1].epoch == 2
            after = await send(b, 10, start=100)
            assert {r.code for r in after} == {ResponseCode.SUCCESS}
            # the old master comes back: a slave that cuts its stale tail and follows b
            a2 = Broker(broker_config(a_root, ns.address, **{
                k: a.config.get(k) for k in ("brokerName", "brokerClusterName", "enableControllerMode",
                                             "controllerAddr", "syncBrokerMetadataPeriod",
                                             "checkSyncStateSetPeriod", "allAckInSyncStateSet",
                                             "haSendHeartbeatInterval", "slaveTimeout")},
                                            brokerRole="SLAVE", brokerId="-1"),
                host="127.0.0.1", port=a_port)
            await a2.start()
            try:
                await wait_until(lambda: a2.autoswitch is not None and a2.autoswitch.client is not None
                                 and bool(a2.autoswitch.client.truncations), 20)
                assert a2.autoswitch is not None and a2.autoswitch.client is not None
                assert a2.autoswitch.client.truncations == [common]
                await wait_until(lambda: in_sync(b, a2), 20)
                assert a2.store.read_commitlog(0, a2.store.commitlog_max_offset()) == \
                    b.store.read_commitlog(0, b.store.commitlog_max_offset())
                assert [e.epoch for e in a2.autoswitch.epochs.cache.entries()] == [1, 2]
                await wait_until(lambda: ctl.replicas.groups[NAME].sync_state_set == {a2.address, b.address}, 10)
            finally:
                await a2.stop()

    run(main(), 120)


def _shape(value: object) -> object:
    """A JSON value's structure: object keys (recursively), list element shapes, leaf types."""
    if isinstance(value, dict):
        return {k: _shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        shapes = []
        for v in value:
            s = _shape(v)
            if s not in shapes:
                shapes.append(s)
        return shapes
    return "number" if isinstance(value, (int, float)) and not isinstance(value, bool) else type(value).__name__


@pytest.mark.shared
def test_admin_captures_replayed(tmp_path: Path) -> None:
    """The mqadmin requests of the 12-* captures (getSyncStateSet, getControllerMetaData,
    getBrokerEpoch, haStatus on master and slave), sent to a reference controller group in the
    same state as the captured one (a master, a slave in the set), get Java's codes and body
    shapes."""
    from wire.capture import CommandRow, decode_capture

    async def main() -> None:
        async with group(tmp_path) as (ctl, _ns, a, b):
            await send(a, 10)
            await wait_until(lambda: in_sync(a, b), 20)
            await wait_until(lambda: ctl.replicas.groups[NAME].sync_state_set == {a.address, b.address}, 10)
            target = {9878: ctl.address, 30911: a.address, 31911: b.address}
            compared = 0
            for name in ("12-getSyncStateSet", "12-getControllerMetaData", "12-getBrokerEpoch",
                         "12-haStatus-master", "12-haStatus-slave"):
                rows = list(decode_capture(str(shared_path("captures", "java-5.0.0", f"{name}.pcap"))))
                for r in rows:
                    c = r.command if isinstance(r, CommandRow) else None
                    if c is None or c.is_response or c.code not in (1005, 1006, 1007, 907) \
                            or r.conv.server_port not in target:
                        continue
                    want = next(x.command for x in rows if isinstance(x, CommandRow) and x.request is r)
                    host, port = target[r.conv.server_port].split(":")
                    conn = await connect(host, int(port))
                    try:
                        body = c.body
                        if c.code == 1006:
                            body = json.dumps([NAME]).encode()
                        got = await conn.request(RemotingCommand(code=c.code, ext_fields=dict(c.ext_fields or {}),
                                                                 body=body))
                    finally:
                        await conn.aclose()
                    assert got.code == want.code, (name, c)
                    assert sorted(got.ext_fields or {}) == sorted(want.ext_fields or {}), (name, c)
                    if want.body:
                        assert _shape(json.loads(got.body or b"null")) == _shape(json.loads(want.body)), name
                    compared += 1
            assert compared >= 8

    run(main(), 90)
