# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Start-up after a clean shutdown and after a crash: a store directory copied while the store
runs, torn tails (garbage, a record cut in the middle), lost consume queues and index, and a real
child process killed with SIGKILL in SYNC_FLUSH mode."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from reference_broker.store import GetStatus, MessageStore, PutStatus, StoreConfig, StoreError
from tests.store.storeutil import (
    commitlog_files,
    cq_units,
    message,
    run,
    scan_files,
    small_config,
    tree_bytes,
)
from wire.message import StoredMessage, decode_stored_message
from wire.store import Blank, Problem, ProblemKind, decode_index_header, scan_commitlog

ROOT = Path(__file__).resolve().parents[2]
FAR = 2**62


def _fill(s: MessageStore, n: int, start: int = 0):
    async def go():
        out = []
        for i in range(start, start + n):
            if i % 7 == 6:
                out.append(await s.put_messages([message(queue_id=i % 3, body=b"batch %d.%d" % (i, k),
                                                         uniq=f"B{i}.{k}") for k in range(3)]))
            else:
                out.append(await s.put_message(message(queue_id=i % 3, body=b"msg %d" % i, keys=f"key{i}",
                                                       uniq=f"U{i}", tags=f"tag{i % 2}")))
        return out
    return go()


def _all_bodies(s: MessageStore, queues=range(3)) -> dict[int, list[bytes]]:
    out = {}
    for q in queues:
        bodies, offset = [], s.min_offset("TopicTest", q)
        while True:
            r = s.get_messages("g", "TopicTest", q, offset, 32)
            if r.status is not GetStatus.FOUND:
                break
            bodies += [decode_stored_message(m).body for m in r.messages]
            offset = r.next_begin_offset
        out[q] = bodies
    return out


def _copy_while_running(cfg: StoreConfig, dest: Path) -> StoreConfig:
    shutil.copytree(cfg.root, dest)
    return StoreConfig(**{**cfg.__dict__, "root": dest, "commitlog_dir": dest / "commitlog"})


def test_clean_restart_goes_on_where_it_stopped(cfg: StoreConfig) -> None:
    async def first():
        async with MessageStore(cfg) as s:
            assert cfg.abort_path.exists() and s.last_exit_ok is True
            await _fill(s, 40)
            return _all_bodies(s), s.commitlog_max_offset(), [s.max_offset("TopicTest", q) for q in range(3)]
    bodies, end, maxes = run(first())
    assert not cfg.abort_path.exists()

    async def second():
        async with MessageStore(cfg) as s:
            again = _all_bodies(s), s.commitlog_max_offset(), [s.max_offset("TopicTest", q) for q in range(3)]
            r = await s.put_message(message(queue_id=1, body=b"after restart"))
            return s.last_exit_ok, again, r, s.query_message("TopicTest", "key5", 32, 0, FAR)
    ok, again, r, found = run(second())
    assert ok is True and again == (bodies, end, maxes)
    assert r.wrote_offset == end and r.queue_offset == maxes[1]
    assert [decode_stored_message(m).body for m in found] == [b"msg 5"]


def test_a_second_store_on_the_same_directory_is_refused(cfg: StoreConfig) -> None:
    async def go():
        async with MessageStore(cfg):
            with pytest.raises(StoreError, match="in use"):
                await MessageStore(cfg).start()
    run(go())


def test_files_of_another_size_are_refused(cfg: StoreConfig) -> None:
    cfg.commitlog_dir.mkdir(parents=True)
    (cfg.commitlog_dir / f"{0:020d}").write_bytes(b"\0" * 1000)
    with pytest.raises(StoreError, match="1000 bytes"):
        run(MessageStore(cfg).start())


def test_files_whose_creation_was_cut_short_are_removed(cfg: StoreConfig) -> None:
    async def first():
        async with MessageStore(cfg) as s:
            await _fill(s, 12)
            return _all_bodies(s), s.commitlog_max_offset()
    bodies, end = run(first())
    # what a process killed between creating a file and giving it its size leaves behind
    leftovers = [cfg.commitlog_dir / f"{end - end % 4096 + 4096:020d}.creating",
                 cfg.consumequeue_dir / "TopicTest" / "0" / f"{2000:020d}.creating",
                 cfg.index_dir / "20991231235959999.creating"]
    for path in leftovers:
        path.write_bytes(b"\0" * 10)

    async def second():
        async with MessageStore(cfg) as s:
            r = await s.put_message(message(queue_id=0, body=b"after"))
            return _all_bodies(s), s.commitlog_max_offset(), r
    again, end2, r = run(second())
    assert again == {**bodies, 0: [*bodies[0], b"after"]} and r.wrote_offset == end and end2 > end
    assert r.status is PutStatus.PUT_OK and not any(p.exists() for p in leftovers)
    assert not [p for p in cfg.root.rglob("*.creating")]


def test_crash_copy_recovers_everything(cfg: StoreConfig, tmp_path: Path) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            await _fill(s, 50)
            copy = _copy_while_running(cfg, tmp_path / "crashed")
            return copy, _all_bodies(s), s.commitlog_max_offset(), tree_bytes(cfg.consumequeue_dir)
    copy, bodies, end, queues = run(go())
    assert copy.abort_path.exists()

    async def recover():
        async with MessageStore(copy) as s:
            return s.last_exit_ok, _all_bodies(s), s.commitlog_max_offset()
    ok, again, end2 = run(recover())
    assert ok is False and again == bodies and end2 == end
    assert tree_bytes(copy.consumequeue_dir) == queues


def test_garbage_after_the_end_is_cleared(cfg: StoreConfig, tmp_path: Path) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            await _fill(s, 20)
            return _copy_while_running(cfg, tmp_path / "torn"), s.commitlog_max_offset(), _all_bodies(s)
    copy, end, bodies = run(go())
    last = commitlog_files(copy)[-1]
    with open(last, "r+b") as fh:
        fh.seek(end - int(last.name))
        fh.write(os.urandom(300))

    async def recover():
        async with MessageStore(copy) as s:
            state = s.commitlog_max_offset(), _all_bodies(s)
            r = await s.put_message(message(queue_id=0, body=b"next"))
            return state, r
    (end2, again), r = run(recover())
    assert end2 == end and again == bodies
    assert r.wrote_offset == end
    items = scan_files(copy)
    assert isinstance(items[-1][1], Problem) and items[-1][1].kind is ProblemKind.ZERO_TAIL
    tail = last.read_bytes()[end - int(last.name) + r.wrote_bytes:]
    assert tail == bytes(len(tail))


def test_a_record_cut_in_the_middle_is_dropped_with_its_queue_unit_and_keys(cfg: StoreConfig,
                                                                           tmp_path: Path) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            await _fill(s, 20)
            r = await s.put_message(message(queue_id=2, body=b"torn" * 30, keys="tornkey", uniq="TORN"))
            return _copy_while_running(cfg, tmp_path / "cut"), r, s.max_offset("TopicTest", 2), _all_bodies(s)
    copy, torn, max2, bodies = run(go())
    last = commitlog_files(copy)[-1]
    pos = torn.wrote_offset - int(last.name)
    with open(last, "r+b") as fh:  # the second half of the record never reached the disk
        fh.seek(pos + torn.wrote_bytes // 2)
        fh.write(bytes(torn.wrote_bytes - torn.wrote_bytes // 2))

    async def recover():
        async with MessageStore(copy) as s:
            state = (s.commitlog_max_offset(), s.max_offset("TopicTest", 2), _all_bodies(s),
                     s.query_message("TopicTest", "tornkey", 32, 0, FAR),
                     s.query_message("TopicTest", "TORN", 32, 0, FAR))
            r = await s.put_message(message(queue_id=2, body=b"replacement", keys="tornkey"))
            return state, r, s.query_message("TopicTest", "tornkey", 32, 0, FAR)
    (end, qmax, again, by_key, by_uniq), r, after = run(recover())
    assert end == torn.wrote_offset and qmax == max2 - 1
    bodies[2].pop()
    assert again == bodies
    assert by_key == [] and by_uniq == []
    assert len(cq_units(copy, "TopicTest", 2)) == qmax + 1  # the new one
    assert (r.wrote_offset, r.queue_offset) == (torn.wrote_offset, torn.queue_offset)
    assert [decode_stored_message(m).body for m in after] == [b"replacement"]


def test_lost_consume_queues_and_index_are_rebuilt(cfg: StoreConfig, tmp_path: Path) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            await _fill(s, 45)
            return _copy_while_running(cfg, tmp_path / "lost"), tree_bytes(cfg.consumequeue_dir)
    copy, queues = run(go())
    shutil.rmtree(copy.consumequeue_dir)
    shutil.rmtree(copy.index_dir)
    async def recover():
        async with MessageStore(copy) as s:
            return s.query_message("TopicTest", "key33", 32, 0, FAR), s.query_message("TopicTest", "B27.1", 32, 0, FAR)
    by_key, by_uniq = run(recover())
    assert tree_bytes(copy.consumequeue_dir) == queues
    assert [decode_stored_message(m).body for m in by_key] == [b"msg 33"]
    assert [decode_stored_message(m).body for m in by_uniq] == [b"batch 27.1"]


def test_consume_queues_ahead_of_the_commitlog_are_cut_back(cfg: StoreConfig, tmp_path: Path) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            rs = await _fill(s, 30)
            return _copy_while_running(cfg, tmp_path / "ahead"), rs
    copy, rs = run(go())
    # the CommitLog lost its last three puts; the queues and index still point at them
    cut = rs[-3].wrote_offset
    for p in commitlog_files(copy):
        start = int(p.name)
        if start + p.stat().st_size > cut:
            data = bytearray(p.read_bytes())
            keep = max(0, cut - start)
            data[keep:] = bytes(len(data) - keep)
            p.write_bytes(bytes(data))
    async def recover():
        async with MessageStore(copy) as s:
            return s.commitlog_max_offset(), [s.max_offset("TopicTest", q) for q in range(3)]
    end, maxes = run(recover())
    records = [m for _, m in scan_files(copy) if isinstance(m, StoredMessage)]
    assert end == cut
    assert maxes == [sum(1 for m in records if m.queue_id == q) for q in range(3)]
    for q in range(3):
        assert all(o < cut for o, _, _ in cq_units(copy, "TopicTest", q))


CHILD = textwrap.dedent("""
    import asyncio, sys
    from reference_broker.store import MessageStore, MessageToStore, PutStatus, StoreConfig

    async def producer(s, q):
        i = 0
        while True:
            body = b"crash q%d n%06d " % (q, i) + bytes(97 * (i % 5))
            r = await s.put_message(MessageToStore("Crash", q, body, 1, ("127.0.0.1", 9), properties={"KEYS": f"c{q}-{i}"}))
            if r.status is PutStatus.PUT_OK:
                print(q, r.queue_offset, r.wrote_offset, body.hex(), flush=True)
            i += 1

    async def main(root):
        cfg = StoreConfig.for_directory(root, mapped_file_size_commitlog=32 * 1024,
                                        mapped_file_size_consume_queue=50 * 20, flush_disk_type="SYNC_FLUSH",
                                        max_hash_slot_num=101, max_index_num=1000)
        async with MessageStore(cfg) as s:
            print("ready", flush=True)
            await asyncio.gather(*(producer(s, q) for q in range(4)))

    asyncio.run(main(sys.argv[1]))
""")


def test_sigkill_in_sync_flush_loses_no_acknowledged_message(tmp_path: Path) -> None:
    root = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(root)], stdout=subprocess.PIPE, env=env,
                            cwd=ROOT, text=True)
    assert proc.stdout is not None
    acks: list[str] = []
    deadline = time.monotonic() + 60
    try:
        assert proc.stdout.readline().strip() == "ready"
        while len(acks) < 2000 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            acks.append(line)
        os.kill(proc.pid, signal.SIGKILL)
        acks += proc.stdout.readlines()  # acknowledged before the kill, still in the pipe
    finally:
        proc.kill()
        proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert len(acks) >= 2000
    cfg = StoreConfig.for_directory(root, mapped_file_size_commitlog=32 * 1024,
                                    mapped_file_size_consume_queue=50 * 20, flush_disk_type="SYNC_FLUSH",
                                    max_hash_slot_num=101, max_index_num=1000)
    assert len(commitlog_files(cfg)) > 3 and cfg.abort_path.exists()

    async def recover():
        async with MessageStore(cfg) as s:
            missing = []
            for line in acks:
                q, qo, wrote, body = line.split()
                r = s.get_messages("g", "Crash", int(q), int(qo), 1)
                if r.status is not GetStatus.FOUND or decode_stored_message(r.messages[0]).body.hex() != body \
                        or s.lookup_message(int(wrote)) != r.messages[0]:
                    missing.append(line)
            unindexed = []
            for line in acks[::25]:
                q, _, _, body = line.split()
                n = int(bytes.fromhex(body).split()[2][1:])
                found = s.query_message("Crash", f"c{q}-{n}", 32, 0, FAR)
                if [decode_stored_message(m).body.hex() for m in found] != [body]:
                    unindexed.append(line)
            q0 = s.max_offset("Crash", 0)
            r = await s.put_message(message(topic="Crash", queue_id=0, body=b"after the crash"))
            return s.last_exit_ok, missing, unindexed, q0, r
    ok, missing, unindexed, q0, r = run(recover())
    assert ok is False and missing == [] and unindexed == []
    assert r.status is PutStatus.PUT_OK and r.queue_offset == q0


def test_index_entries_newer_than_their_header_are_taken_back_in(tmp_path: Path) -> None:
    # the header of the index file being filled is written at flushes; a crash in between
    # leaves entries past the count on disk
    cfg = small_config(tmp_path / "s", flush_interval_consume_queue_ms=600_000)

    async def go():
        async with MessageStore(cfg) as s:
            await s.put_message(message(keys="first"))
            await s.flusher.flush_logics()
            await _fill(s, 12)
            return _copy_while_running(cfg, tmp_path / "stale")
    copy = run(go())
    (index_file,) = sorted(copy.index_dir.iterdir())
    assert decode_index_header(index_file.read_bytes()).index_count == 2  # entry 0 unused, "first"

    async def recover():
        async with MessageStore(copy) as s:
            return [len(s.query_message("TopicTest", k, 8, 0, FAR)) for k in ("first", "key3", "U11", "B6.2")]
    assert run(recover()) == [1, 1, 1, 1]
    assert decode_index_header(index_file.read_bytes()).index_count > 20


def test_crash_recovery_starts_at_the_file_the_checkpoint_names(cfg: StoreConfig, tmp_path: Path) -> None:
    from wire.store import StoreCheckpoint, encode_checkpoint

    async def go():
        async with MessageStore(cfg) as s:
            rs = await _fill(s, 60)
            return _copy_while_running(cfg, tmp_path / "cp"), rs, _all_bodies(s)
    copy, rs, bodies = run(go())
    files = commitlog_files(copy)
    assert len(files) >= 3
    starts = [int(p.name) for p in files]
    first_of = {start: next(r for r in rs if r.wrote_offset >= start) for start in starts}
    # the checkpoint says all was flushed up to the first record of the third file (plus 3 s)
    stamp = first_of[starts[2]].store_timestamp + 3000
    copy.checkpoint_path.write_bytes(encode_checkpoint(StoreCheckpoint(stamp, stamp, stamp)))
    # a body CRC that does not match in the second file: a walk from the first file would stop there
    rec = first_of[starts[1]]
    with open(files[1], "r+b") as fh:
        fh.seek(rec.wrote_offset - starts[1] + 8)
        crc = fh.read(4)
        fh.seek(-4, 1)
        fh.write(bytes([crc[0] ^ 0x40]) + crc[1:])

    async def recover():
        async with MessageStore(copy) as s:
            return s.commitlog_max_offset(), _all_bodies(s)
    assert run(recover()) == (rs[-1].wrote_offset + rs[-1].wrote_bytes, bodies)


_BASE: dict[str, object] = {}


def _base_store(factory) -> tuple[StoreConfig, list]:
    if "cfg" not in _BASE:
        cfg = small_config(factory.mktemp("base") / "store")

        async def go():
            async with MessageStore(cfg) as s:
                return await _fill(s, 40)
        _BASE["rs"] = run(go())
        _BASE["cfg"] = cfg
    return _BASE["cfg"], _BASE["rs"]  # type: ignore[return-value]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(0, 40 * 200))
@example(cut=4012)  # inside the first file's BLANK: the marker survives, nothing follows it
def test_a_tail_lost_anywhere_recovers_to_the_last_whole_record(tmp_path_factory, cut: int) -> None:
    cfg, _ = _base_store(tmp_path_factory)
    records = [(o, m) for o, m in scan_files(cfg) if isinstance(m, StoredMessage)]
    end_of_data = records[-1][0] + records[-1][1].total_size
    cut = min(cut, end_of_data)
    dest = tmp_path_factory.mktemp("cut") / "store"
    shutil.copytree(cfg.root, dest)
    copy = StoreConfig(**{**cfg.__dict__, "root": dest, "commitlog_dir": dest / "commitlog"})
    copy.abort_path.touch()
    for p in commitlog_files(copy):
        start = int(p.name)
        if start + p.stat().st_size > cut:
            data = bytearray(p.read_bytes())
            keep = max(0, cut - start)
            data[keep:] = bytes(len(data) - keep)
            p.write_bytes(bytes(data))
    # what survives is what an independent walk (wire.store.scan_commitlog, CRCs checked) of the
    # damaged files accepts; zeros in a record's topic or properties pass, as they do in Java,
    # since the CRC covers the body only
    # A BLANK that survives moves the end to the next file's start even when no record follows
    # there (recoverAbnormally sets processOffset to the next file's start at a BLANK).
    kept, blanks, end_expected = [], [], 0
    for p in commitlog_files(copy):
        items = list(scan_commitlog(p.read_bytes(), int(p.name), verify_crc=True))
        records = [(o, m) for o, m in items if isinstance(m, StoredMessage)]
        kept += records
        if records:
            end_expected = records[-1][0] + records[-1][1].total_size
        blanks += [(o, o + b.size) for o, b in items if isinstance(b, Blank)]
        if not any(isinstance(m, Blank) for _, m in items):
            break
        end_expected = int(p.name) + p.stat().st_size
    assert end_expected <= cut or any(o < cut < o + m.total_size for o, m in kept) \
        or any(o < cut < e == end_expected for o, e in blanks)

    async def recover():
        async with MessageStore(copy) as s:
            return s.commitlog_max_offset(), [s.max_offset("TopicTest", q) for q in range(3)], _all_bodies(s)
    end, maxes, bodies = run(recover())
    assert end == end_expected
    assert maxes == [sum(1 for _, m in kept if m.queue_id == q) for q in range(3)]
    assert bodies == {q: [m.body for _, m in kept if m.queue_id == q] for q in range(3)}
