# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Truncation is crash-safe: a former master that rejoins cuts what it wrote alone, and a SIGKILL
right after the cut finds no stale message on disk, and no stale message after the restart.

Reference name server with its embedded controller and two controller-mode brokers (processes,
``allAckInSyncStateSet``). The slave B is frozen (SIGSTOP) while the master A takes twelve sends of
3.5 MB (stored, answered FLUSH_SLAVE_TIMEOUT), more than the sockets between them hold: the last of
them exist on A alone. A is killed, B thawed: it appends what its socket still held, cuts the
record that arrived half (``truncateInvalidMsg``), is elected and takes sends at epoch 2. A
restarts: it cuts its CommitLog where B's epoch 2 starts and is killed (SIGKILL) as soon as it logs
the cut done. Its CommitLog files then hold zeros from the cut to where its stale tail ended (Java
5.x leaves the tail on disk, apache/rocketmq#10666). A starts again, follows B, and its CommitLog
equals B's: the messages B never got are gone from A too.
"""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path

import pytest

from tests.broker.helpers import send_request
from tests.controller.test_kill_master import call, max_offset, members, sync_state, wait
from tests.ha.servers import OurProcess, OurServers
from tests.javakit import free_port
from wire import RemotingCommand, RequestCode, ResponseCode
from wire.store import scan_commitlog

pytestmark = pytest.mark.slow

NAME = "broker-t"


def commitlog(p: OurProcess) -> bytes:
    return b"".join(f.read_bytes() for f in sorted(p.commitlog_dir.iterdir()))


def bodies(data: bytes) -> list[bytes]:
    out = []
    for _, rec in scan_commitlog(data, 0):
        body = getattr(rec, "body", None)
        if body is not None:
            out.append(bytes(body))
    return out


def call_epochs(addr: str) -> list[dict[str, int]]:
    r = call(addr, RemotingCommand(code=RequestCode.GET_BROKER_EPOCH_CACHE))
    out: list[dict[str, int]] = json.loads(r.body or b"{}").get("epochList") or []
    return out


def test_sigkill_right_after_truncation_leaves_no_stale_message(tmp_path: Path) -> None:
    with OurServers(tmp_path / "servers") as servers:
        cport = free_port()
        controller = f"127.0.0.1:{cport}"
        ns = servers.namesrv(enableControllerInNamesrv="true", controllerDLegerPeers=f"n0-{controller}",
                             controllerStorePath=str(tmp_path / "controller"))
        keys = dict(name=NAME, cluster="TruncCluster", role="SLAVE", broker_id=-1, enableControllerMode="true",
                    controllerAddr=controller, allAckInSyncStateSet="true", haSendHeartbeatInterval="1000",
                    syncBrokerMetadataPeriod="1000", checkSyncStateSetPeriod="1000", slaveTimeout="300",
                    haMaxTimeSlaveNotCatchup="60000", haHousekeepingInterval="60000",
                    commitlog_file_size=str(64 * 1024 * 1024))
        a = servers.broker(namesrv=ns, **keys)  # type: ignore[arg-type]
        wait(lambda: sync_state(controller, NAME).get("masterAddress") == a.addr, "A is master", 30)
        b = servers.broker(namesrv=ns, **keys)  # type: ignore[arg-type]
        wait(lambda: members(controller, NAME) == {a.addr, b.addr}, "B joins the SyncStateSet", 60)
        for i in range(5):
            assert call(a.addr, send_request("TruncTopic", b"common-%d" % i, code=10)).code == 0
        common = max_offset(a.addr)
        wait(lambda: max_offset(b.addr) == common, "B holds A's log", 20)

        b.freeze()
        big = b"x" * (3_500_000)
        for i in range(12):
            r = call(a.addr, send_request("TruncTopic", b"stale-%02d" % i + big, code=10))
            assert r.code == ResponseCode.FLUSH_SLAVE_TIMEOUT, r
        stale_end = max_offset(a.addr)
        assert stale_end > common
        a.kill()
        b.thaw()
        wait(lambda: sync_state(controller, NAME).get("masterAddress") == b.addr, "B is elected", 30)
        wait(lambda: call(b.addr, send_request("TruncTopic", b"epoch2-0", code=10)).code == 0,
             "B takes sends", 30)
        for i in range(1, 4):
            assert call(b.addr, send_request("TruncTopic", b"epoch2-%d" % i, code=10)).code == 0
        assert b"stale-11" in commitlog(a)
        epoch2 = next(e for e in call_epochs(b.addr) if e["epoch"] == 2)["startOffset"]
        assert common <= epoch2 < stale_end
        assert b"stale-11" not in commitlog(b)[:epoch2]      # B never got the last of them

        # A restarts, cuts its stale tail, and dies the moment the cut is on disk
        servers.restart(a, graceful=False)
        done = re.compile(r"CommitLog and epoch file cut at (\d+) and on disk")
        deadline = time.monotonic() + 30
        while not (m := done.search(a.log_path.read_text(errors="replace"))):
            assert time.monotonic() < deadline, a.log_path.read_text()[-3000:]
            time.sleep(0.005)
        a.signal(signal.SIGKILL)
        assert int(m.group(1)) == epoch2
        wait(lambda: not a.alive, "A is dead", 10)
        on_disk = commitlog(a)
        assert len(on_disk) >= stale_end and not any(on_disk[epoch2:stale_end]), "the cut tail is still on disk"
        assert b"stale-11" not in on_disk

        # and after a restart: A follows B, byte for byte, no stale message anywhere
        servers.restart(a, graceful=False)
        wait(lambda: members(controller, NAME) == {a.addr, b.addr}, "A rejoins the SyncStateSet", 60)
        end = max_offset(b.addr)
        wait(lambda: max_offset(a.addr) == end, "A catches up", 30)
        assert commitlog(a)[:end] == commitlog(b)[:end]
        found = bodies(commitlog(a)[:end])
        assert b"stale-11" not in commitlog(a)
        assert [x for x in found if x.startswith(b"epoch2-")] == [b"epoch2-%d" % i for i in range(4)]
