# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker's plain ACL (``aclEnable=true``): what passes, what is refused and with which
answer (Java 4.9.8's text, checked against the real broker in tests/interop/test_acl_java.py),
the ACL admin requests, and hot reload of the files. Real sockets on 127.0.0.1."""

from __future__ import annotations

import asyncio
import textwrap
from pathlib import Path

import pytest

from reference_broker.broker import Broker
from tests.broker.helpers import (
    broker_config,
    client,
    heartbeat_request,
    pull_request,
    run,
    send_request,
    wait_until,
)
from wire import RemotingCommand, ResponseCode, SerializeType
from wire.acl import Credentials, sign_request
from wire.admin.acl import acl_config, acl_delete, acl_update, acl_versions, acl_white_addrs
from wire.admin.client import AdminClient

EXC = "org.apache.rocketmq.acl.common.AclException: "
MANAGER = "org.apache.rocketmq.acl.plain.PlainPermissionManager"

ACL = textwrap.dedent("""\
    globalWhiteRemoteAddresses:
      - 10.10.103.*
    accounts:
      - accessKey: RocketMQ
        secretKey: 12345678
        whiteRemoteAddress:
        admin: false
        defaultTopicPerm: DENY
        defaultGroupPerm: SUB
        topicPerms:
          - topicA=DENY
          - topicB=PUB|SUB
          - topicC=SUB
        groupPerms:
          - groupA=DENY
          - groupB=PUB|SUB
      - accessKey: rocketmq2
        secretKey: 12345678
        whiteRemoteAddress: 192.168.1.*
        admin: true
      - accessKey: loopback-account
        secretKey: 87654321
        whiteRemoteAddress: 127.0.0.1
    """)

USER = Credentials("RocketMQ", "12345678")
ADMIN = Credentials("rocketmq2", "12345678")


def home(tmp_path: Path, text: str = ACL) -> Path:
    conf = tmp_path / "home" / "conf"
    conf.mkdir(parents=True)
    (conf / "plain_acl.yml").write_text(text)
    return tmp_path / "home"


def acl_broker(tmp_path: Path, text: str = ACL) -> Broker:
    cfg = broker_config(tmp_path / "store", aclEnable="true", rocketmqHome=str(home(tmp_path, text)))
    return Broker(cfg, host="127.0.0.1", port=0)


def remark_of(message: str, line: int, method: str = "validate") -> str:
    return f"{EXC}{message}, {MANAGER}.{method}(PlainPermissionManager.java:{line})"


def test_requests_without_valid_credentials_are_refused_as_java_refuses_them(tmp_path: Path) -> None:
    async def main() -> None:
        async with acl_broker(tmp_path) as b:
            c = await client(b)
            for st in SerializeType:
                r = await c.request(RemotingCommand.request(28, serialize_type=st))  # GET_BROKER_RUNTIME_INFO
                assert r.code == ResponseCode.SYSTEM_ERROR
                assert r.remark == remark_of("No accessKey is configured", 664)
                assert r.serialize_type is SerializeType.JSON  # built outside the normal path, as Java
            r = await c.request(sign_request(RemotingCommand.request(28), Credentials("nobody-at-all", "secret-key")))
            assert r.remark == remark_of("No acl config for nobody-at-all", 668)
            r = await c.request(sign_request(RemotingCommand.request(28), Credentials("RocketMQ", "wrong-secret")))
            assert r.remark == remark_of("Check signature failed for accessKey=RocketMQ", 684)
            # a signed request that was changed afterwards
            signed = sign_request(RemotingCommand.request(28, {"x": "1"}), USER)
            r = await c.request(signed.replace(ext_fields={**signed.ext_fields, "x": "2"}))
            assert r.remark == remark_of("Check signature failed for accessKey=RocketMQ", 684)
            ok = await c.request(sign_request(RemotingCommand.request(28), USER))
            assert ok.code == ResponseCode.SUCCESS and ok.body
            await c.aclose()

    run(main())


def test_the_reported_admin_requests_need_an_admin_account(tmp_path: Path) -> None:
    """The report's list: config rewrite, topic deletion and creation, groups."""

    async def main() -> None:
        async with acl_broker(tmp_path) as b:
            c = await client(b)
            requests = [
                RemotingCommand.request(25, {}, b"brokerPermission=2\n"),  # UPDATE_BROKER_CONFIG
                RemotingCommand.request(215, {"topic": "SomeTopic"}),  # DELETE_TOPIC_IN_BROKER
                RemotingCommand.request(17, {"topic": "T1", "defaultTopic": "TBW102", "readQueueNums": "4",
                                             "writeQueueNums": "4", "perm": "6", "topicFilterType": "SINGLE_TAG",
                                             "order": "false"}),
                RemotingCommand.request(207, {"groupName": "G", "removeOffset": "false"}),
            ]
            for req in requests:
                r = await c.request(req)
                assert r.code == ResponseCode.SYSTEM_ERROR and "No accessKey is configured" in (r.remark or "")
                r = await c.request(sign_request(req, USER))
                assert r.remark == remark_of(
                    f"Need admin permission for request code={req.code}, but accessKey=RocketMQ is not", 581,
                    "checkPerm")
            assert b.config.broker_permission == 6  # nothing changed
            for req in requests:
                r = await c.request(sign_request(req, ADMIN))
                assert r.code == ResponseCode.SUCCESS, r
            await c.aclose()

    run(main())


def test_topic_and_group_permissions(tmp_path: Path) -> None:
    async def main() -> None:
        async with acl_broker(tmp_path) as b:
            admin = await client(b)
            for topic in ("topicA", "topicB", "topicC", "topicD"):
                create = RemotingCommand.request(17, {"topic": topic, "defaultTopic": "TBW102", "readQueueNums": "1",
                                                      "writeQueueNums": "1", "perm": "6",
                                                      "topicFilterType": "SINGLE_TAG", "order": "false"})
                assert (await admin.request(sign_request(create, ADMIN))).code == ResponseCode.SUCCESS
            c = await client(b)

            async def send(topic: str) -> RemotingCommand:
                return await c.request(sign_request(send_request(topic, b"x"), USER))

            assert (await send("topicB")).code == ResponseCode.SUCCESS
            for topic in ("topicA", "topicC", "topicD"):  # DENY, SUB only, and the default (DENY)
                r = await send(topic)
                line = 606 if topic == "topicD" else 611
                assert r.remark == remark_of(f"No default permission for topic:{topic}", line, "checkPerm"), r
            # a pull needs SUB on the topic and on the group's retry topic
            r = await c.request(sign_request(pull_request("groupB", "topicB", 0, 0), USER))
            assert r.code in (ResponseCode.SUCCESS, ResponseCode.PULL_NOT_FOUND)
            r = await c.request(sign_request(pull_request("groupA", "topicB", 0, 0), USER))
            assert r.remark == remark_of("No default permission for group:groupA", 611, "checkPerm")
            r = await c.request(sign_request(pull_request("groupB", "topicA", 0, 0), USER))
            assert r.remark == remark_of("No default permission for topic:topicA", 611, "checkPerm")
            # a heartbeat names every subscribed topic
            hb = heartbeat_request("c1", consumer_group="groupB", topics=("topicB", "topicD"))
            r = await c.request(sign_request(hb, USER))
            assert r.remark == remark_of("No default permission for topic:topicD", 606, "checkPerm")
            # trace data may always be published
            r = await c.request(sign_request(send_request("RMQ_SYS_TRACE_TOPIC", b"trace"), USER))
            assert r.code != ResponseCode.SYSTEM_ERROR or "AclException" not in (r.remark or "")
            await c.aclose()
            await admin.aclose()

    run(main())


def test_white_addresses(tmp_path: Path) -> None:
    async def main() -> None:
        async with acl_broker(tmp_path) as b:
            c = await client(b)
            # the account's own white address: its access key suffices, no signature
            r = await c.request(RemotingCommand.request(28, {"AccessKey": "loopback-account"}))
            assert r.code == ResponseCode.SUCCESS
            await c.aclose()
        async with acl_broker(tmp_path / "2", ACL.replace("10.10.103.*", "127.0.0.*")) as b:
            c = await client(b)
            r = await c.request(RemotingCommand.request(17, {"topic": "Anyone", "defaultTopic": "TBW102",
                                                             "readQueueNums": "1", "writeQueueNums": "1",
                                                             "perm": "6", "topicFilterType": "SINGLE_TAG",
                                                             "order": "false"}))
            assert r.code == ResponseCode.SUCCESS  # a global white address needs nothing at all
            await c.aclose()

    run(main())


def test_the_files_are_read_again_when_they_change(tmp_path: Path) -> None:
    async def main() -> None:
        async with acl_broker(tmp_path) as b:
            assert b.acl is not None
            b.acl.acl.watch_interval = 0.1
            c = await client(b)
            newcomer = Credentials("newcomer", "secret-of-newcomer")
            r = await c.request(sign_request(RemotingCommand.request(28), newcomer))
            assert "No acl config for newcomer" in (r.remark or "")
            extra = b.acl.acl.acl_dir
            assert extra is not None
            extra.mkdir(parents=True, exist_ok=True)
            (extra / "team.yml").write_text("accounts:\n  - accessKey: newcomer\n    secretKey: secret-of-newcomer\n")
            await wait_until(lambda: "newcomer" in b.acl.acl.accounts, timeout=10)  # type: ignore[union-attr]
            r = await c.request(sign_request(RemotingCommand.request(28), newcomer))
            assert r.code == ResponseCode.SUCCESS
            # a broken file is logged and the accounts stay
            (extra / "team.yml").write_text("accounts: [oops\n")
            await asyncio.sleep(0.5)
            assert "newcomer" in b.acl.acl.accounts  # type: ignore[union-attr]
            await c.aclose()

    run(main())


def test_acl_admin_requests(tmp_path: Path) -> None:
    async def main() -> None:
        async with acl_broker(tmp_path) as b:
            addr = b.address
            async with AdminClient(["127.0.0.1:1"], credentials=ADMIN) as admin:
                (before,) = await acl_versions(admin, broker=addr)
                assert before.broker_name == "broker-a" and before.files
                outcomes = await acl_update(admin, access_key="operator1", secret_key="operator-secret",
                                            default_topic_perm="PUB", topic_perms=["topicX=SUB"],
                                            group_perms=["g1=SUB"], broker=addr)
                assert all(o.ok for o in outcomes), outcomes
                (after,) = await acl_versions(admin, broker=addr)
                assert (after.counter or 0) == (before.counter or 0) + 1
                (config,) = await acl_config(admin, broker=addr)
                assert config.config is not None
                keys = {a.access_key: a for a in config.config.plain_access_configs}
                assert keys["operator1"].topic_perms == ("topicX=SUB",)
                assert config.config.global_white_addrs == ("10.10.103.*",)
                assert all(o.ok for o in await acl_white_addrs(admin, addresses=["10.1.1.*"], broker=addr))
                (config,) = await acl_config(admin, broker=addr)
                assert config.config is not None and config.config.global_white_addrs == ("10.1.1.*",)
            async with AdminClient(["127.0.0.1:1"], credentials=Credentials("operator1", "operator-secret")) as op:
                assert (await op.invoke(addr, 28)).code == ResponseCode.SUCCESS
                # a non-admin account may not change the ACL (stricter than Java, see docs/servers.md)
                (outcome,) = await acl_delete(op, access_key="RocketMQ", broker=addr)
                assert not outcome.ok and "Need admin permission for request code=51" in (outcome.error or "")
            async with AdminClient(["127.0.0.1:1"], credentials=ADMIN) as admin:
                assert all(o.ok for o in await acl_delete(admin, access_key="operator1", broker=addr))
                (outcome,) = await acl_delete(admin, access_key="operator1", broker=addr)
                assert not outcome.ok and "deleted failed" in (outcome.error or "")
                # an update that Java refuses: a short secret
                with pytest.raises(Exception, match="longer than 6"):
                    await acl_update(admin, access_key="operator2", secret_key="short", broker=addr)
            async with AdminClient(["127.0.0.1:1"], credentials=Credentials("operator1", "operator-secret")) as op:
                assert "No acl config for operator1" in ((await op.invoke(addr, 28)).remark or "")

    run(main())


def test_a_broker_without_acl_says_so_to_acl_requests(tmp_path: Path) -> None:
    async def main() -> None:
        async with Broker(broker_config(tmp_path), host="127.0.0.1", port=0) as b:
            async with AdminClient(["127.0.0.1:1"]) as admin:
                (outcome,) = await acl_update(admin, access_key="someone1", secret_key="secret12", broker=b.address)
                assert not outcome.ok and "aclEnable=false" in (outcome.error or "")
                # and every other request passes without credentials
                assert (await admin.invoke(b.address, 28)).code == ResponseCode.SUCCESS

    run(main())


def test_a_bad_acl_file_stops_the_start_naming_it(tmp_path: Path) -> None:
    from reference_broker.runtime import ServiceError

    async def main() -> None:
        with pytest.raises(ServiceError, match=r"plain_acl\.yml"):
            async with acl_broker(tmp_path, "accounts:\n  - accessKey: short\n    secretKey: x\n"):
                pass

    run(main())
