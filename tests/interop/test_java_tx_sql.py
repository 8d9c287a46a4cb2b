# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The same Java 4.9.8 client program (tests/interop/java/TxSqlProbe.java, compiled here against
../shared/javakit's jars) against our name server and broker and against the Java ones: a
TransactionMQProducer's commit, rollback and unknown-then-check outcomes, push consumers that see
only what was committed, a MessageSelector.bySql subscription (CHECK_CLIENT_CONFIG, SQL92
heartbeats, broker-side filtering), a tag subscription, and the refusal of a selector that does
not compile. Both brokers check transactions every second (transactionCheckInterval=1000)."""

from __future__ import annotations

import asyncio
import shutil
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.javakit import JavaServers, javakit_missing

pytestmark = [pytest.mark.shared, pytest.mark.slow]

SOURCE = Path(__file__).parent / "java" / "TxSqlProbe.java"
SETTINGS = {"transactionCheckInterval": "1000", "transactionTimeOut": "1000", "enablePropertyFilter": "true"}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    missing = javakit_missing()
    if missing:
        pytest.skip(missing)
    javac = shutil.which("javac")
    if javac is None:
        pytest.skip("javac (a JDK) is needed to compile the Java client program")
    from tests.javakit import require_javakit

    kit = require_javakit()
    out = tmp_path_factory.mktemp("txsqlprobe")
    classpath = f"{kit / 'lib-4.9.8'}/*"
    done = subprocess.run([javac, "-cp", classpath, "-d", str(out), str(SOURCE)], capture_output=True, text=True,
                          timeout=180)
    assert done.returncode == 0, done.stderr
    return ["java", "-Xmx128m", "-cp", f"{out}:{classpath}", "-Duser.home=" + str(out),
            "-Drocketmq.client.logRoot=" + str(out / "logs"), "TxSqlProbe"]


def _run(probe: list[str], namesrv: str, suffix: str) -> dict[str, list[str]]:
    done = subprocess.run([*probe, namesrv, suffix], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    found: dict[str, list[str]] = {}
    for line in done.stdout.splitlines():
        key, sep, value = line.partition("=")
        if sep:
            found.setdefault(key.replace(suffix, ""), []).append(value.replace(suffix, ""))
    return found


@pytest.fixture(scope="module")
def our_servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Our name server and broker in a thread of their own; yields the name server address."""
    from reference_broker.broker import Broker
    from reference_broker.config import NamesrvConfig
    from reference_broker.namesrv import NameServer
    from tests.broker.helpers import broker_config

    base = tmp_path_factory.mktemp("our-txsql")
    ready: dict[str, str] = {}
    started = threading.Event()
    loop = asyncio.new_event_loop()
    stop = asyncio.Event()

    async def serve() -> None:
        ns_cfg = NamesrvConfig(overrides={"kvConfigPath": str(base / "kv.json"),
                                          "configStorePath": str(base / "ns.properties")})
        async with NameServer(ns_cfg, port=0) as ns:
            cfg = broker_config(base / "store", ns.address, autoCreateTopicEnable="true", **SETTINGS)
            async with Broker(cfg, host="127.0.0.1", port=0):
                ready["namesrv"] = ns.address
                started.set()
                await stop.wait()

    thread = threading.Thread(target=lambda: loop.run_until_complete(serve()), daemon=True)
    thread.start()
    assert started.wait(60), "our servers did not start"
    try:
        yield ready["namesrv"]
    finally:
        loop.call_soon_threadsafe(stop.set)
        thread.join(30)
        loop.close()


@pytest.fixture(scope="module")
def outcomes(probe: list[str], our_servers: str, java_servers_module: JavaServers) -> dict[str, dict[str, list[str]]]:
    ns = java_servers_module.namesrv("4.9.8")
    java_servers_module.broker("4.9.8", namesrv=ns, name="txsql-java", **SETTINGS)
    return {"ours": _run(probe, our_servers, "Ours"), "java": _run(probe, ns.addr, "Java")}


@pytest.mark.parametrize("side", ["ours", "java"])
def test_transactions_and_filters(outcomes: dict[str, dict[str, list[str]]], side: str) -> None:
    found = outcomes[side]
    assert found["tx.send"] == ["commit/- SEND_OK COMMIT_MESSAGE", "rollback/- SEND_OK ROLLBACK_MESSAGE",
                                "unknown/commit SEND_OK UNKNOW", "unknown/rollback SEND_OK UNKNOW"]
    assert found["tx.checks.atLeast2"] == ["true"]
    # the checks carry the message under its real topic, with its check count
    assert {c.split(" ")[0] for c in found["tx.check"]} == {"unknown/commit", "unknown/rollback"}
    assert all("topic=TxT" in c and "checkTimes=" in c for c in found["tx.check"])
    assert found["tx.consumed"] == ["[commit/-, unknown/commit]"]
    assert found["sql.consumed"] == ["[m0, m3, m4, m5]"]
    assert found["tag.consumed"] == ["[m1, m3, m5]"]
    assert found["sql.bad.code"] == [str(23)]  # SUBSCRIPTION_PARSE_FAILED
    assert found["sql.bad.message"] == ["java.lang.RuntimeException: Value ''x'' cannot be compared."]


def test_same_outcomes(outcomes: dict[str, dict[str, list[str]]]) -> None:
    """Everything the program saw is the same on both sides, the properties of the consumed
    messages included (what a committed transaction message keeps); only the check lines (how
    many checks came in the time) may differ."""
    ours, java = ({k: v for k, v in side.items() if k != "tx.check"} for side in (outcomes["ours"],
                                                                                  outcomes["java"]))
    assert ours == java
