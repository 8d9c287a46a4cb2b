# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name server's ACL (``aclEnable=true``, ours: a 4.9.8 name server checks nothing): the
requests that change its state need an admin account's signature; broker registration, unsigned
as Java brokers send it, and reads stay open."""

from __future__ import annotations

import asyncio
import zlib
from pathlib import Path

from reference_broker.config import NamesrvConfig
from reference_broker.namesrv import NameServer
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.acl import Credentials, sign_request
from wire.aio import connect

R = RequestCode
ACL = """\
accounts:
  - accessKey: operator1
    secretKey: operator-secret
    admin: false
  - accessKey: rocketmq2
    secretKey: "12345678"
    admin: true
"""


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 30))


def acl_namesrv(tmp_path: Path, **extra: str) -> NameServer:
    (tmp_path / "home" / "conf").mkdir(parents=True)
    (tmp_path / "home" / "conf" / "plain_acl.yml").write_text(ACL)
    cfg = NamesrvConfig(overrides={"kvConfigPath": str(tmp_path / "kv.json"),
                                   "configStorePath": str(tmp_path / "ns.properties"), "aclEnable": "true",
                                   "rocketmqHome": str(tmp_path / "home"), **extra})
    return NameServer(cfg, port=0)


def test_state_changes_need_an_admin_signature(tmp_path: Path) -> None:
    writes = [
        RemotingCommand.request(R.UPDATE_NAMESRV_CONFIG, {}, b"orderMessageEnable=true\n"),
        RemotingCommand.request(R.PUT_KV_CONFIG, {"namespace": "NS", "key": "k", "value": "v"}),
        RemotingCommand.request(R.DELETE_KV_CONFIG, {"namespace": "NS", "key": "k"}),
        RemotingCommand.request(R.WIPE_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}),
        RemotingCommand.request(R.ADD_WRITE_PERM_OF_BROKER, {"brokerName": "broker-a"}),
        RemotingCommand.request(R.DELETE_TOPIC_IN_NAMESRV, {"topic": "T"}),
    ]

    async def main() -> None:
        async with acl_namesrv(tmp_path) as ns:
            conn = await connect("127.0.0.1", ns.port)
            for req in writes:
                r = await conn.request(req)
                assert r.code == ResponseCode.SYSTEM_ERROR and "No accessKey is configured" in (r.remark or ""), r
                r = await conn.request(sign_request(req, Credentials("operator1", "operator-secret")))
                assert f"Need admin permission for request code={req.code}" in (r.remark or ""), r
            assert not ns.config.order_message_enable
            for req in writes:
                r = await conn.request(sign_request(req, Credentials("rocketmq2", "12345678")))
                assert r.code != ResponseCode.SYSTEM_ERROR or "AclException" not in (r.remark or ""), r
            assert ns.config.order_message_enable
            await conn.aclose()

    run(main())


def test_registration_and_reads_stay_open(tmp_path: Path) -> None:
    from tests.namesrv.test_server import registration

    async def main() -> None:
        async with acl_namesrv(tmp_path) as ns:
            conn = await connect("127.0.0.1", ns.port)
            reg = registration("127.0.0.1:10911", 0, "TopicOpen")
            assert (await conn.request(reg)).code == ResponseCode.SUCCESS
            r = await conn.request(RemotingCommand.request(R.GET_ROUTEINFO_BY_TOPIC, {"topic": "TopicOpen"}))
            assert r.code == ResponseCode.SUCCESS
            r = await conn.request(RemotingCommand.request(R.GET_BROKER_CLUSTER_INFO))
            assert r.code == ResponseCode.SUCCESS and zlib.crc32(r.body or b"")
            await conn.aclose()

    run(main())
