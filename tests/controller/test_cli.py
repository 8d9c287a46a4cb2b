# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl controller`` against a reference controller, name server and controller-mode broker
running on their own event loop in a thread (the CLI runs its own loop)."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from mqctl import app as app_module
from reference_broker.broker import Broker
from reference_broker.controller import Controller, ControllerConfig
from reference_broker.namesrv import NameServer
from tests.broker.helpers import broker_config, namesrv_config
from tests.javakit import free_broker_port

NAME = "broker-c"


class Group:
    def __init__(self, tmp: Path) -> None:
        self.tmp = tmp
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.ctl: Controller
        self.ns: NameServer
        self.broker: Broker

    def call(self, coro: Any, timeout: float = 30) -> Any:
        fut: Future[Any] = asyncio.run_coroutine_threadsafe(coro, self.loop)
        return fut.result(timeout)

    async def _start(self) -> None:
        self.ctl = Controller(ControllerConfig(), port=0, store_path=self.tmp / "ctl")
        await self.ctl.start()
        self.ns = NameServer(namesrv_config(self.tmp / "ns"), host="127.0.0.1", port=0)
        await self.ns.start()
        cfg = broker_config(self.tmp / "b", self.ns.address, brokerName=NAME, brokerClusterName="C5",
                            enableControllerMode="true", controllerAddr=self.ctl.address, brokerRole="SLAVE",
                            brokerId="-1")
        self.broker = Broker(cfg, host="127.0.0.1", port=free_broker_port())
        await self.broker.start()
        for _ in range(200):
            if self.broker.autoswitch is not None and self.broker.autoswitch.role == "master" \
                    and not self.broker.isolated:
                break
            await asyncio.sleep(0.05)
        await self.broker.register_all()

    async def _stop(self) -> None:
        await self.broker.stop()
        await self.ns.stop()
        await self.ctl.stop()

    def __enter__(self) -> Group:
        self.thread.start()
        self.call(self._start())
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.call(self._stop())
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(10)
            self.loop.close()


@pytest.fixture
def group(tmp_path: Path) -> Iterator[Group]:
    with Group(tmp_path) as g:
        yield g


@dataclass
class Ran:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


@pytest.fixture
def mqctl(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``mqctl ARGS`` through the console script's entry point (its error boundary included)."""

    def run(*args: str) -> Ran:
        rc = app_module.main(list(args))
        cap = capsys.readouterr()
        return Ran(rc, cap.out, cap.err)

    return run


def test_controller_commands(group: Group, mqctl: Callable[..., Ran]) -> None:
    a = group.ctl.address
    r = mqctl("-o", "json", "controller", "metadata", "-a", a)
    assert r.exit_code == 0, r.output
    meta = json.loads(r.stdout)
    assert meta["leader_address"] == a and meta["is_leader"] is True
    r = mqctl("-o", "json", "controller", "sync-state-set", "-a", a, NAME)
    assert r.exit_code == 0, r.output
    sss = json.loads(r.stdout)[NAME]
    assert sss["master_address"] == group.broker.address and sss["master_epoch"] == 1
    r = mqctl("controller", "sync-state-set", "-a", a, NAME, "no-such-broker")
    assert r.exit_code != 0 and "no-such-broker" in r.output
    r = mqctl("-n", group.ns.address, "-o", "json", "controller", "epochs", NAME)
    assert r.exit_code == 0, r.output
    (one,) = json.loads(r.stdout)
    assert one["addr"] == group.broker.address
    assert [(e["epoch"], e["start_offset"]) for e in one["cache"]["epoch_list"]] == [(1, 0)]
    # the live master stays: the election fails with the controller's answer
    r = mqctl("controller", "elect", "-a", a, "--broker", NAME, "--cluster", "C5")
    assert r.exit_code != 0 and "2011" in r.output
    r = mqctl("controller", "metadata", "-a", a)
    assert r.exit_code == 0 and "#ControllerLeaderAddress" in r.stdout
    # the configuration, all of it or the keys asked (mqadmin getControllerConfig, under its name too)
    r = mqctl("-o", "json", "controller", "config", "-a", a, "controllerDLegerGroup", "controllerDLegerSelfId")
    assert r.exit_code == 0 and list(json.loads(r.stdout)) == ["controllerDLegerGroup", "controllerDLegerSelfId"]
    r = mqctl("getControllerConfig", "-a", a)
    assert r.exit_code == 0 and r.stdout.startswith("#Key") and "controllerDLegerGroup" in r.stdout, r.output
    r = mqctl("controller", "config", "-a", a, "noSuchKey")
    assert r.exit_code == 1 and "no such configuration key: noSuchKey" in r.stderr
    # an epoch file on disk, ours (and Java's format: the bytes of CheckpointFile's own example)
    r = mqctl("-o", "json", "controller", "epochs", "--file", group.broker.config.get("storePathEpochFile"))
    assert r.exit_code == 0 and json.loads(r.stdout) == [
        {"epoch": 1, "start_offset": 0, "end_offset": 2**63 - 1}], r.output
    java_file = group.tmp / "javaEpochFile"
    java_file.write_text("2\n773307083\n7-7000\n8-8000\n")
    r = mqctl("controller", "epochs", "--file", str(java_file))
    assert r.exit_code == 0 and "7000" in r.stdout and "8000" in r.stdout, r.output
    java_file.write_text("2\n1\n7-7000\n8-8000\n")
    r = mqctl("controller", "epochs", "--file", str(java_file))
    assert r.exit_code != 0 and "CRC" in r.output and "Traceback" not in r.output
    # the same under ``ha``
    r = mqctl("-o", "json", "ha", "sync-state-set", "-a", a, NAME)
    assert r.exit_code == 0 and json.loads(r.stdout)[NAME]["master_address"] == group.broker.address
    r = mqctl("-n", group.ns.address, "ha", "epochs", NAME)
    assert r.exit_code == 0 and "#Epoch" in r.stdout, r.output
