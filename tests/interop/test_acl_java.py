# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Plain ACL against the real Java 4.9.8 servers (``../shared/javakit``, through tests/javakit.py):

* our broker with ACL on refuses exactly as the Java broker with ACL on refuses (same answer code,
  same remark, same serialize type) for the same requests;
* the Java broker with ACL on accepts our signed requests (the admin library, ``mqctl``);
* Java's own ``mqadmin`` (its ``conf/tools.yml`` credentials) and a Java client program compiled
  against the 4.9.8 jars (``AclClientRPCHook``) produce and consume through our name server and
  broker with ACL on, and are refused with wrong credentials.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.javakit import KIT, JavaProcess, JavaServers, ask
from wire import RemotingCommand, ResponseCode, SerializeType
from wire.acl import Credentials, sign_request
from wire.admin.acl import acl_update, acl_versions
from wire.admin.client import AdminClient

pytestmark = pytest.mark.slow

PLAIN_ACL = textwrap.dedent("""\
    accounts:
      - accessKey: RocketMQ
        secretKey: "12345678"
        admin: false
        defaultTopicPerm: DENY
        defaultGroupPerm: SUB
        topicPerms:
          - topicA=DENY
          - topicB=PUB|SUB
      - accessKey: rocketmq2
        secretKey: "12345678"
        admin: true
    """)
USER = Credentials("RocketMQ", "12345678")
ADMIN = Credentials("rocketmq2", "12345678")


def rocketmq_home(base: Path, acl: str = PLAIN_ACL, tools: Credentials | None = ADMIN) -> Path:
    """A ROCKETMQ_HOME for Java: the kit's conf (logging) with our ACL and tools files."""
    home = base / "rocketmq-home"
    shutil.copytree(KIT / "home-4.9.8" / "conf", home / "conf")
    (home / "conf" / "plain_acl.yml").write_text(acl)
    if tools is None:
        (home / "conf" / "tools.yml").write_text("")
    else:
        (home / "conf" / "tools.yml").write_text(f"accessKey: {tools.access_key}\nsecretKey: {tools.secret_key}\n")
    return home


@pytest.fixture(scope="module")
def java_acl_broker(java_servers_module: JavaServers, tmp_path_factory: pytest.TempPathFactory) -> \
        Iterator[JavaProcess]:
    home = rocketmq_home(tmp_path_factory.mktemp("java-acl"))
    previous = os.environ.get("JAVA_OPT_EXT")
    os.environ["JAVA_OPT_EXT"] = f"-Drocketmq.home.dir={home}"
    try:
        ns = java_servers_module.namesrv("4.9.8")
        broker = java_servers_module.broker("4.9.8", namesrv=ns, name="acl-java", aclEnable="true")
        broker.wait_admin_ready(lambda: sign_request(RemotingCommand.request(28), ADMIN))
    finally:
        if previous is None:
            os.environ.pop("JAVA_OPT_EXT", None)
        else:
            os.environ["JAVA_OPT_EXT"] = previous
    yield broker


@pytest.fixture(scope="module")
def our_acl_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """Our name server and broker with ACL on, in a thread of their own, for the module."""
    from reference_broker.broker import Broker
    from reference_broker.config import NamesrvConfig
    from reference_broker.namesrv import NameServer
    from tests.broker.helpers import broker_config

    base = tmp_path_factory.mktemp("our-acl")
    home = base / "home"
    (home / "conf").mkdir(parents=True)
    (home / "conf" / "plain_acl.yml").write_text(PLAIN_ACL)
    ready: dict[str, str] = {}
    started = threading.Event()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        ns_cfg = NamesrvConfig(overrides={"kvConfigPath": str(base / "kv.json"),
                                          "configStorePath": str(base / "ns.properties")})
        async with NameServer(ns_cfg, port=0) as ns:
            cfg = broker_config(base / "store", ns.address, aclEnable="true", rocketmqHome=str(home),
                                brokerName="acl-ours", autoCreateTopicEnable="true")
            async with Broker(cfg, host="127.0.0.1", port=0) as b:
                ready["namesrv"], ready["broker"] = ns.address, b.address
                started.set()
                await stop.wait()

    thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    thread.start()
    assert started.wait(60), "our servers did not start"
    try:
        yield ready["namesrv"], ready["broker"]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        loop.close()


REFUSED = {
    "unsigned": lambda: RemotingCommand.request(28),
    "unsigned ROCKETMQ header": lambda: RemotingCommand.request(28, serialize_type=SerializeType.ROCKETMQ),
    "unknown key": lambda: sign_request(RemotingCommand.request(28), Credentials("nobody-here", "whatever1")),
    "wrong secret": lambda: sign_request(RemotingCommand.request(28), Credentials("RocketMQ", "not-the-secret")),
    "admin code": lambda: sign_request(RemotingCommand.request(17, {
        "topic": "T1", "defaultTopic": "TBW102", "readQueueNums": "4", "writeQueueNums": "4", "perm": "6",
        "topicFilterType": "SINGLE_TAG", "order": "false"}), USER),
    "denied topic": lambda: sign_request(RemotingCommand.request(310, {
        "a": "PG", "b": "topicA", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1", "h": "0", "i": "",
        "j": "0", "k": "false", "m": "false"}, b"x"), USER),
    "default topic permission": lambda: sign_request(RemotingCommand.request(310, {
        "a": "PG", "b": "topicZ", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1", "h": "0", "i": "",
        "j": "0", "k": "false", "m": "false"}, b"x"), USER),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_our_refusals_are_javas(java_acl_broker: JavaProcess, our_acl_servers: tuple[str, str],
                                case: str) -> None:
    java = ask(java_acl_broker.addr, REFUSED[case]())
    ours = ask(our_acl_servers[1], REFUSED[case]())
    assert java.code == ResponseCode.SYSTEM_ERROR, java
    assert (ours.code, ours.remark, ours.serialize_type) == (java.code, java.remark, java.serialize_type)


def test_the_java_broker_accepts_our_signed_requests(java_acl_broker: JavaProcess) -> None:
    signed = ask(java_acl_broker.addr, sign_request(RemotingCommand.request(28), USER))
    assert signed.code == ResponseCode.SUCCESS and signed.body
    for st in SerializeType:
        r = ask(java_acl_broker.addr, sign_request(RemotingCommand.request(28, serialize_type=st), ADMIN))
        assert r.code == ResponseCode.SUCCESS

    async def admin() -> None:
        async with AdminClient(["127.0.0.1:1"], credentials=ADMIN) as client:
            (v,) = await acl_versions(client, broker=java_acl_broker.addr)
            assert v.error is None and v.broker_name == "acl-java"
            (o,) = await acl_update(client, access_key="from-mqctl", secret_key="mqctl-secret",
                                    topic_perms=["topicB=PUB"], broker=java_acl_broker.addr)
            assert o.ok, o
        async with AdminClient(["127.0.0.1:1"], credentials=Credentials("from-mqctl", "mqctl-secret")) as client:
            # the Java broker took the new account (its file watcher, or at once)
            for _ in range(40):
                r = await client.invoke(java_acl_broker.addr, 28)
                if r.code == ResponseCode.SUCCESS:
                    break
                await asyncio.sleep(0.5)
            assert r.code == ResponseCode.SUCCESS, r

    asyncio.run(admin())


def _mqadmin(servers: JavaServers, home: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    previous = os.environ.get("JAVA_OPT_EXT")
    if home is not None:
        os.environ["JAVA_OPT_EXT"] = f"-Drocketmq.home.dir={home}"
    try:
        return servers.mqadmin("4.9.8", *args)
    finally:
        if previous is None:
            os.environ.pop("JAVA_OPT_EXT", None)
        else:
            os.environ["JAVA_OPT_EXT"] = previous


def test_java_mqadmin_with_credentials_works_on_our_broker(java_servers_module: JavaServers,
                                                           our_acl_servers: tuple[str, str],
                                                           tmp_path: Path) -> None:
    _, broker = our_acl_servers
    good = _mqadmin(java_servers_module, rocketmq_home(tmp_path / "good"), "updateTopic", "-b", broker,
                    "-t", "MqadminTopic", "-r", "2", "-w", "2")
    assert "create topic to " in good.stdout and "success" in good.stdout, good.stdout + good.stderr
    status = _mqadmin(java_servers_module, rocketmq_home(tmp_path / "status"), "brokerStatus", "-b", broker)
    assert "brokerVersionDesc" in status.stdout, status.stdout + status.stderr
    bad = _mqadmin(java_servers_module, rocketmq_home(tmp_path / "bad", tools=Credentials("rocketmq2", "bad-secret")),
                   "updateTopic", "-b", broker, "-t", "RefusedTopic", "-r", "1", "-w", "1")
    assert "Check signature failed for accessKey=rocketmq2" in bad.stdout + bad.stderr, bad.stdout + bad.stderr


JAVA_CLIENT = textwrap.dedent("""\
    import java.util.*;
    import org.apache.rocketmq.acl.common.*;
    import org.apache.rocketmq.client.consumer.*;
    import org.apache.rocketmq.client.producer.*;
    import org.apache.rocketmq.common.message.*;
    import org.apache.rocketmq.remoting.RPCHook;

    public class AclClient {
        public static void main(String[] a) throws Exception {
            String ns = a[0], topic = a[1], ak = a[2], sk = a[3];
            int n = Integer.parseInt(a[4]);
            RPCHook hook = new AclClientRPCHook(new SessionCredentials(ak, sk));
            DefaultMQProducer p = new DefaultMQProducer("AclProducerGroup", hook);
            p.setNamesrvAddr(ns);
            p.setSendMsgTimeout(10000);
            p.start();
            int sent = 0;
            try {
                for (int i = 0; i < n; i++) {
                    SendResult r = p.send(new Message(topic, "TagA", ("acl-" + i).getBytes("UTF-8")));
                    if (r.getSendStatus() == SendStatus.SEND_OK) sent++;
                }
            } catch (Exception e) {
                Throwable cause = e;
                while (cause.getCause() != null) cause = cause.getCause();
                System.out.println("SEND_FAILED " + String.valueOf(cause.getMessage()).replace((char) 10, (char) 32));
            }
            p.shutdown();
            System.out.println("SENT " + sent);
            if (sent == 0) return;
            DefaultLitePullConsumer c = new DefaultLitePullConsumer("groupB", hook);
            c.setNamesrvAddr(ns);
            c.setConsumeFromWhere(org.apache.rocketmq.common.consumer.ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET);
            c.subscribe(topic, "*");
            c.start();
            int got = 0;
            long end = System.currentTimeMillis() + 60000;
            while (got < sent && System.currentTimeMillis() < end) {
                for (MessageExt m : c.poll(1000)) got++;
            }
            c.shutdown();
            System.out.println("RECEIVED " + got);
        }
    }
    """)


def _java_client(tmp_path: Path) -> list[str]:
    src = tmp_path / "AclClient.java"
    src.write_text(JAVA_CLIENT)
    classpath = f"{KIT / 'lib-4.9.8'}/*"
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac (a JDK) is needed to compile the Java client program")
    done = subprocess.run([javac, "-cp", classpath, "-d", str(tmp_path), str(src)], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return ["java", "-Xmx128m", "-cp", f"{tmp_path}:{classpath}", "-Duser.home=" + str(tmp_path),
            "-Drocketmq.client.logRoot=" + str(tmp_path / "logs"), "AclClient"]


def test_a_java_client_with_credentials_produces_and_consumes_through_our_servers(
        our_acl_servers: tuple[str, str], tmp_path: Path) -> None:
    namesrv, broker = our_acl_servers
    # the topic exists (created by an admin); RocketMQ may publish and subscribe to topicB
    r = ask(broker, sign_request(RemotingCommand.request(17, {
        "topic": "topicB", "defaultTopic": "TBW102", "readQueueNums": "2", "writeQueueNums": "2", "perm": "6",
        "topicFilterType": "SINGLE_TAG", "order": "false"}), ADMIN))
    assert r.code == ResponseCode.SUCCESS
    client = _java_client(tmp_path)
    done = subprocess.run([*client, namesrv, "topicB", "RocketMQ", "12345678", "5"], capture_output=True,
                          text=True, timeout=240)
    assert "SENT 5" in done.stdout and "RECEIVED 5" in done.stdout, done.stdout + done.stderr[-3000:]
    refused = subprocess.run([*client, namesrv, "topicB", "RocketMQ", "wrong-secret", "1"], capture_output=True,
                             text=True, timeout=240)
    assert "SENT 0" in refused.stdout and "Check signature failed" in refused.stdout, refused.stdout
    denied = subprocess.run([*client, namesrv, "topicA", "RocketMQ", "12345678", "1"], capture_output=True,
                            text=True, timeout=240)
    assert "SENT 0" in denied.stdout, denied.stdout

