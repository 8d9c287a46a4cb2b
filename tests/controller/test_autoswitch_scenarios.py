# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The scenarios of Java 5.0.0's AutoSwitchHATest, on reference stores and AutoSwitch HA services
(no controller: roles and SyncStateSets are set by hand, as Java's test does), each under an ID.

* ``confirm-offset``: the confirm offset is the lowest ack of the SyncStateSet; with a member gone
  it stays and an all-ack put times out; the other broker becomes master at epoch 2, and the first
  comes back as its slave, cuts what it wrote alone and holds all 20 messages.
* ``async-learner``: an ``asyncLearner`` slave replicates but is never proposed into the set.
* ``all-ack``: a caught-up slave is proposed into the set; with it gone, a put times out.
* ``many-role-changes``: master and slave swap three times (epochs 1, 2, 3); each slave ends with
  every message.
* ``add-broker``: a third broker joins a running pair as a slave and catches up.
* ``sync-from-last-file``: a new slave with ``syncFromLastFile`` starts at the master's last
  CommitLog file (10 of 20 messages, from queue offset 10).
* ``failover-before-any-data`` (ours): the master changes twice before anything is written (the
  new master may hold epoch 2 alone, the old one epoch 1 alone); the old master, its log empty,
  follows from 0 instead of refusing forever as a Java slave does.
* ``expand-in-flight`` (ours, apache/rocketmq#5663): while a larger set is with the controller, an
  all-ack put waits for the proposed members too; the slave stops acking then, and the put times out
  instead of being acknowledged by the master alone.
* ``truncate-then-change-master``: the master's epoch-1 file is deleted (epoch file prefix cut),
  a new slave starts at what remains; a new master at epoch 3 is followed by the old one.

``test_every_scenario_passed`` (last) fails unless every ID ran and passed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path

from reference_broker.ha.autoswitch import AutoSwitchHAService, ControllerModeConfig
from reference_broker.ha.config import HAConfig
from reference_broker.ha.epochfile import EpochFile
from reference_broker.store import MessageStore, PutStatus
from tests.store.storeutil import message, small_config

IDS = ["confirm-offset", "async-learner", "all-ack", "many-role-changes", "add-broker", "sync-from-last-file",
       "truncate-then-change-master", "failover-before-any-data", "expand-in-flight"]
RESULTS: dict[str, str] = {}
TOPIC = "FooBar"


def record_size() -> int:
    from reference_broker.store.append import PutService  # noqa: F401 - the encoder in use

    async def one(tmp: Path) -> int:
        async with MessageStore(small_config(tmp)) as s:
            r = await s.put_message(message(TOPIC, 0, b"x" * 100))
            return r.wrote_bytes
    import tempfile
    with tempfile.TemporaryDirectory() as d:
        return asyncio.run(one(Path(d)))


class Node:
    def __init__(self, root: Path, n: int, file_size: int, **mode: object) -> None:
        self.root = root / f"store{n}"
        self.address = f"127.0.0.1:{8000 + n - 1}"
        self.file_size = file_size
        self.mode = ControllerModeConfig(**mode)  # type: ignore[arg-type]
        self.store: MessageStore
        self.ha: AutoSwitchHAService
        self.proposals: list[set[str]] = []

    async def start(self) -> Node:
        self.store = MessageStore(small_config(self.root, mapped_file_size_commitlog=self.file_size,
                                               broker_role="SLAVE"))
        await self.store.start()
        epochs = EpochFile(self.root / "epochFileCheckpoint")
        epochs.load()
        cfg = HAConfig(mapped_file_size=self.file_size, heartbeat_interval_ms=300, slave_timeout_ms=1000)
        self.ha = AutoSwitchHAService(self.store, cfg, self.mode, self.address, epochs)
        self.ha.on_sync_state_set = self.proposals.append
        await self.ha.start("127.0.0.1", 0)
        return self

    async def stop(self) -> None:
        await self.ha.stop()
        await self.store.shutdown()

    @property
    def ha_address(self) -> str:
        return f"127.0.0.1:{self.ha.port}"

    async def put(self, n: int) -> list[PutStatus]:
        out = []
        for i in range(n):
            r = await self.store.put_message(message(TOPIC, 0, b"%03d" % i + b"x" * 97))
            out.append(r.status)
        return out

    def count(self, start: int) -> tuple[int, int]:
        """The queue's min offset and how many messages it serves from ``start`` (page by page: a
        pull stops at the store's batch limits)."""
        total, offset, low = 0, start, 0
        while True:
            got = self.store.get_messages("G", TOPIC, 0, offset, 1024)
            low = got.min_offset
            if not got.message_count:
                return low, total
            total += got.message_count
            offset = got.next_begin_offset


async def master_and_put(master: Node, slave: Node, slave_id: int, epoch: int, n: int) -> None:
    """``changeMasterAndPutMessage``."""
    master.store.set_broker_role("SYNC_MASTER")
    assert await master.ha.change_to_master(epoch)
    slave.store.set_broker_role("SLAVE")
    assert await slave.ha.change_to_slave(epoch, slave_id)
    slave.ha.update_ha_master_address(master.ha_address)
    await master.put(n)


async def has(node: Node, total: int, start: int, timeout: float = 20) -> None:
    """``checkMessage``: the node serves ``total`` messages of the queue from ``start``."""
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while True:
        node.store.dispatch_replica()
        if node.count(start)[1] == total:
            return
        assert loop.time() < end, f"{node.address}: {node.count(start)} instead of {total} from {start}"
        await asyncio.sleep(0.05)


def scenario(sid: str, body: Callable[[Path], Awaitable[None]], tmp: Path) -> None:
    RESULTS[sid] = "started"
    try:
        asyncio.run(asyncio.wait_for(body(tmp), 90))
    except BaseException as exc:
        RESULTS[sid] = f"{type(exc).__name__}: {exc}"
        raise
    RESULTS[sid] = "passed"


FILE = 1 << 20


def test_confirm_offset(tmp_path: Path) -> None:
    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, FILE, all_ack_in_sync_state_set=True).start()
        n2 = await Node(tmp, 2, FILE).start()
        try:
            n1.ha.set_sync_state_set({n1.address, n2.address})
            n1.store.set_broker_role("SYNC_MASTER")
            assert await n1.ha.change_to_master(1)
            n1.ha.set_sync_state_set({n1.address, n2.address})
            assert await n2.ha.change_to_slave(1, 2)
            n2.ha.update_ha_master_address(n1.ha_address)
            assert set(await n1.put(10)) == {PutStatus.PUT_OK}
            await has(n2, 10, 0)
            confirm = n1.ha.confirm_offset
            assert confirm == n1.store.commitlog_max_offset()
            await n2.stop()
            assert await n1.put(1) == [PutStatus.FLUSH_SLAVE_TIMEOUT]
            assert n1.ha.confirm_offset == confirm          # a member gone: the confirm offset stays
            alone_end = n1.store.commitlog_max_offset()
            await n1.stop()
            n2 = await Node(tmp, 2, FILE).start()
            n2.store.set_broker_role("SYNC_MASTER")
            assert await n2.ha.change_to_master(2)
            n2.ha.set_sync_state_set({n2.address})
            assert set(await n2.put(10)) == {PutStatus.PUT_OK}
            n1 = await Node(tmp, 1, FILE).start()
            assert n1.store.commitlog_max_offset() == alone_end
            assert await n1.ha.change_to_slave(2, 1)
            n1.ha.update_ha_master_address(n2.ha_address)
            await has(n1, 20, 0)
            assert n1.ha.client is not None and n1.ha.client.truncations == [confirm]
            assert [e.epoch for e in n1.ha.epochs.cache.entries()] == [1, 2]
        finally:
            for n in (n1, n2):
                await n.stop()

    scenario("confirm-offset", body, tmp_path)


def test_async_learner(tmp_path: Path) -> None:
    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, FILE).start()
        n2 = await Node(tmp, 2, FILE, async_learner=True).start()
        try:
            await master_and_put(n1, n2, 2, 1, 10)
            n1.ha.set_sync_state_set({n1.address})
            await has(n2, 10, 0)
            await n1.put(5)
            await has(n2, 15, 0)
            assert not any(n2.address in p for p in n1.proposals)
        finally:
            for n in (n1, n2):
                await n.stop()

    scenario("async-learner", body, tmp_path)


def test_all_ack(tmp_path: Path) -> None:
    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, FILE, all_ack_in_sync_state_set=True).start()
        n2 = await Node(tmp, 2, FILE).start()
        try:
            await master_and_put(n1, n2, 2, 1, 10)
            n1.ha.set_sync_state_set({n1.address})
            await has(n2, 10, 0)
            await n1.put(1)   # an ack after the set is known: the slave is proposed in
            loop = asyncio.get_running_loop()
            end = loop.time() + 10
            while not any(p == {n1.address, n2.address} for p in n1.proposals):
                assert loop.time() < end, n1.proposals
                await asyncio.sleep(0.05)
            n1.ha.set_sync_state_set({n1.address, n2.address})
            await n2.stop()
            assert await n1.put(1) == [PutStatus.FLUSH_SLAVE_TIMEOUT]
        finally:
            await n1.stop()

    scenario("all-ack", body, tmp_path)


def test_many_role_changes(tmp_path: Path) -> None:
    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, FILE).start()
        n2 = await Node(tmp, 2, FILE).start()
        try:
            await master_and_put(n1, n2, 2, 1, 10)
            await has(n2, 10, 0)
            await master_and_put(n2, n1, 1, 2, 10)
            await has(n1, 20, 0)
            await master_and_put(n1, n2, 2, 3, 10)
            await has(n2, 30, 0)
            assert [e.epoch for e in n2.ha.epochs.cache.entries()] == [1, 2, 3]
            assert n1.ha.epochs.cache.entries() == n2.ha.epochs.cache.entries()
            end = n1.store.commitlog_max_offset()
            assert n1.store.read_commitlog(0, end) == n2.store.read_commitlog(0, end)
        finally:
            for n in (n1, n2):
                await n.stop()

    scenario("many-role-changes", body, tmp_path)


def test_add_broker(tmp_path: Path) -> None:
    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, FILE).start()
        n2 = await Node(tmp, 2, FILE).start()
        n3 = await Node(tmp, 3, FILE).start()
        try:
            await master_and_put(n1, n2, 2, 1, 10)
            await has(n2, 10, 0)
            assert await n3.ha.change_to_slave(1, 3)
            n3.ha.update_ha_master_address(n1.ha_address)
            await has(n3, 10, 0)
        finally:
            for n in (n1, n2, n3):
                await n.stop()

    scenario("add-broker", body, tmp_path)


def _ten_per_file() -> int:
    """A CommitLog file size that holds exactly ten of these messages (Java's test uses 1700 for
    its 157-byte records)."""
    return 10 * record_size() + 64


def test_sync_from_last_file(tmp_path: Path) -> None:
    size = _ten_per_file()

    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, size).start()
        n2 = await Node(tmp, 2, size).start()
        n3 = await Node(tmp, 3, size, sync_from_last_file=True).start()
        try:
            await master_and_put(n1, n2, 2, 1, 10)
            await has(n2, 10, 0)
            await master_and_put(n1, n2, 2, 2, 10)
            await has(n2, 20, 0)
            assert await n3.ha.change_to_slave(2, 3)
            n3.ha.update_ha_master_address(n1.ha_address)
            await has(n3, 10, 10)
            assert n3.store.commitlog_min_offset() == size
        finally:
            for n in (n1, n2, n3):
                await n.stop()

    scenario("sync-from-last-file", body, tmp_path)


def test_truncate_then_change_master(tmp_path: Path) -> None:
    size = _ten_per_file()

    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, size).start()
        n2 = await Node(tmp, 2, size).start()
        n3 = await Node(tmp, 3, size).start()
        try:
            await master_and_put(n1, n2, 2, 1, 10)
            await has(n2, 10, 0)
            await master_and_put(n1, n2, 2, 2, 10)
            await has(n2, 20, 0)
            # the master's first file (all of epoch 1) goes, and its epoch with it
            epoch2_start = n1.ha.epochs.cache.entries()[1].start_offset
            files = n1.store.commitlog.files
            first = files.first()
            assert first is not None
            files.remove([first])
            n1.ha.epochs.cache.truncate_prefix_by_offset(epoch2_start)
            n1.ha.epochs.save()
            assert n1.store.commitlog_min_offset() == size
            await has(n1, 10, 10)
            # a new slave starts where the master's log now starts (its min offset)
            assert await n3.ha.change_to_slave(2, 3)
            n3.ha.update_ha_master_address(n1.ha_address)
            await has(n3, 10, 10)
            # broker 2 becomes master at epoch 3 with broker 3 following; then broker 1 follows it
            await master_and_put(n2, n3, 3, 3, 10)
            await has(n3, 20, 10)
            n1.store.set_broker_role("SLAVE")
            assert await n1.ha.change_to_slave(3, 1)
            n1.ha.update_ha_master_address(n2.ha_address)
            await has(n1, 20, 10)
            assert [e.epoch for e in n1.ha.epochs.cache.entries()] == [2, 3]
        finally:
            for n in (n1, n2, n3):
                await n.stop()

    scenario("truncate-then-change-master", body, tmp_path)


def test_failover_before_any_data(tmp_path: Path) -> None:
    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, FILE).start()
        n2 = await Node(tmp, 2, FILE).start()
        try:
            await master_and_put(n1, n2, 2, 1, 0)
            await master_and_put(n2, n1, 1, 2, 0)
            await n2.put(5)
            await has(n1, 5, 0)
            assert n1.ha.client is not None and n1.ha.client.refusals == 0
        finally:
            for n in (n1, n2):
                await n.stop()

    scenario("failover-before-any-data", body, tmp_path)


def test_expand_in_flight(tmp_path: Path) -> None:
    async def body(tmp: Path) -> None:
        n1 = await Node(tmp, 1, FILE, all_ack_in_sync_state_set=True).start()
        n2 = await Node(tmp, 2, FILE).start()
        try:
            n1.store.set_broker_role("SYNC_MASTER")
            assert await n1.ha.change_to_master(1)
            n1.ha.set_sync_state_set({n1.address})
            assert await n2.ha.change_to_slave(1, 2)
            n2.ha.update_ha_master_address(n1.ha_address)
            assert set(await n1.put(5)) == {PutStatus.PUT_OK}
            await has(n2, 5, 0)
            await n1.put(1)
            loop = asyncio.get_running_loop()
            end = loop.time() + 10
            while not n1.proposals:      # the controller (here: nobody) has the proposal
                assert loop.time() < end
                await asyncio.sleep(0.05)
            assert n1.ha.members == {n1.address, n2.address} and n1.ha.sync_state_set == {n1.address}
            assert n2.ha.client is not None
            n2.ha.client.session.receive_data = lambda *args, **kwargs: []  # type: ignore[method-assign]
            assert await n1.put(1) == [PutStatus.FLUSH_SLAVE_TIMEOUT]
            n1.ha.proposal_ended()       # refused: the master's own ack counts alone again
            assert await n1.put(1) == [PutStatus.PUT_OK]
        finally:
            for n in (n1, n2):
                await n.stop()

    scenario("expand-in-flight", body, tmp_path)


def test_every_scenario_passed() -> None:
    missing = {sid: RESULTS.get(sid, "did not run") for sid in IDS if RESULTS.get(sid) != "passed"}
    assert not missing, missing

