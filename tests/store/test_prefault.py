# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The store's helper threads: pages faulted in ahead of the CommitLog's appends (resident
before the writer gets there, bytes untouched, the MADV_WILLNEED fallback, a file closed
meanwhile), and the sync thread that answers on the event loop."""

from __future__ import annotations

import asyncio
import ctypes
import mmap
import os
import threading
import time
from pathlib import Path

import pytest

from reference_broker.store import MessageStore
from reference_broker.store._syncer import SyncThread
from reference_broker.store.mapped_file import MappedFile
from reference_broker.store.prefault import Prefaulter
from tests.store.storeutil import message, run, small_config

PAGE = mmap.PAGESIZE
linux_only = pytest.mark.skipif(not os.path.exists("/proc/self/pagemap"), reason="needs Linux's /proc/self/pagemap")


def _resident(f: MappedFile, start: int, end: int) -> list[bool]:
    """Which pages of ``f`` in [start, end) are mapped in this process's page tables (the
    present bit of /proc/self/pagemap): a write there takes no fault. Page-cache residency
    (mincore) would not do: a fault reads the neighbouring pages of a sparse file ahead into
    the cache without mapping them."""
    base = ctypes.addressof(ctypes.c_char.from_buffer(f.mm))
    first, last = (base + start) // PAGE, (base + end - 1) // PAGE
    with open("/proc/self/pagemap", "rb") as pm:
        pm.seek(first * 8)
        raw = pm.read((last - first + 1) * 8)
    return [bool(int.from_bytes(raw[i:i + 8], "little") >> 63) for i in range(0, len(raw), 8)]


def _wait_for(pred: object, timeout: float = 10.0) -> None:
    end = time.monotonic() + timeout
    while not pred():  # type: ignore[operator]
        assert time.monotonic() < end, "timed out"
        time.sleep(0.005)


def _new_file(tmp_path: Path, size: int) -> MappedFile:
    return MappedFile(tmp_path / f"{0:020d}", size, create=True)


MIB = 1 << 20


@linux_only
def test_pages_ahead_of_the_writer_are_resident_and_keep_their_bytes(tmp_path: Path) -> None:
    # a fault may map a whole large folio (up to 2 MiB, aligned), so the pages looked at lie
    # far from the writer and from the stretches' ends
    size = 16 * MIB
    f = _new_file(tmp_path, size)
    p = Prefaulter(8 * MIB, chunk=MIB)
    p.start()
    try:
        assert not any(_resident(f, 0, size))  # a fresh sparse file: nothing in memory yet
        f.append(b"\x01" * 100)
        p.ahead_of(f, f.wrote_position)
        assert f.prefault_requested == 100 + 8 * MIB and f.prefault_mark == 100 + 4 * MIB
        _wait_for(lambda: p.done_bytes >= 8 * MIB)
        assert all(_resident(f, 6 * MIB, 8 * MIB))
        assert not any(_resident(f, 10 * MIB, size))
        # asking again before the mark adds nothing; past it, the next stretch only
        p.ahead_of(f, 4 * MIB + 200)
        assert f.prefault_requested == 12 * MIB + 200
        _wait_for(lambda: p.done_bytes >= 12 * MIB)
        assert all(_resident(f, 10 * MIB, 12 * MIB)) and not any(_resident(f, 14 * MIB, size))
        # populating never changes a byte: the record is there, the rest is zeros
        assert f.read(0, 100) == b"\x01" * 100 and f.read(100, size - 100).count(0) == size - 100
    finally:
        p.stop()
        f.close()
    assert not p.fallback


@linux_only
def test_the_writer_racing_the_prefaulter_loses_nothing(tmp_path: Path) -> None:
    size = 1024 * PAGE
    f = _new_file(tmp_path, size)
    p = Prefaulter(64 * PAGE, chunk=PAGE)
    p.start()
    expected = bytearray()
    try:
        i = 0
        while f.wrote_position + 1300 <= size:
            rec = bytes([i % 251 + 1]) * (1000 + i % 300)
            if f.wrote_position + len(rec) > f.prefault_mark:
                p.ahead_of(f, f.wrote_position)
            f.append(rec)
            expected += rec
            i += 1
        p.stop()
        assert f.read(0, len(expected)) == bytes(expected)
        assert p.done_bytes >= size - 64 * PAGE
    finally:
        p.stop()
        f.close()


@linux_only
def test_an_advice_the_kernel_refuses_falls_back_to_willneed(tmp_path: Path) -> None:
    f = _new_file(tmp_path, 32 * PAGE)
    f.append(b"data")
    # no kernel knows advice 9999: EINVAL, then MADV_WILLNEED for this and later stretches
    p = Prefaulter(8 * PAGE, chunk=2 * PAGE, advice=9999)
    p.start()
    try:
        p.ahead_of(f, f.wrote_position)
        _wait_for(lambda: p.done_bytes >= 8 * PAGE)
        assert p.fallback
        p.ahead_of(f, 7 * PAGE)
        _wait_for(lambda: p.done_bytes >= 15 * PAGE)
        assert f.read(0, 4) == b"data" and f.read(4, 32 * PAGE - 4).count(0) == 32 * PAGE - 4
    finally:
        p.stop()
        f.close()


def test_a_file_closed_while_stretches_are_pending_is_skipped(tmp_path: Path) -> None:
    files = [MappedFile(tmp_path / f"{i * 256 * PAGE:020d}", 256 * PAGE, create=True) for i in range(4)]
    p = Prefaulter(256 * PAGE, chunk=PAGE)
    p.start()
    try:
        for f in files:
            p.ahead_of(f, 0)
        for f in files:
            f.close()  # waits for a stretch in progress, later ones see the file closed
        p.stop()
        assert all(f.closed for f in files)
        assert p.done_bytes < 4 * 256 * PAGE
    finally:
        p.stop()


def test_a_prefaulter_that_is_not_running_asks_for_nothing(tmp_path: Path) -> None:
    f = _new_file(tmp_path, 8 * PAGE)
    try:
        p = Prefaulter(4 * PAGE)
        p.ahead_of(f, 0)
        assert not p.running and f.prefault_requested == 0
        off = Prefaulter(0)
        off.start()
        assert not off.running
    finally:
        f.close()


@linux_only
@pytest.mark.parametrize("ahead", [8 * MIB, 0])
def test_the_store_keeps_the_commitlog_mapped_ahead_of_its_puts(tmp_path: Path, ahead: int) -> None:
    cfg = small_config(tmp_path / "s", mapped_file_size_commitlog=16 * MIB, commitlog_prefault_bytes=ahead)

    async def go() -> tuple[int, list[bool], int]:
        async with MessageStore(cfg) as s:
            r = None
            for i in range(40):
                r = await s.put_message(message(body=b"x" * 1000, keys=f"k{i}"))
            assert r is not None
            f = s.commitlog.files.last()
            assert f is not None
            assert (s.commitlog.prefaulter is s.prefaulter) == (ahead > 0)
            if ahead:
                await asyncio.to_thread(_wait_for, lambda: s.prefaulter.done_bytes >= f.prefault_requested - PAGE)
            return r.wrote_offset + r.wrote_bytes, _resident(f, 6 * MIB, 8 * MIB), f.prefault_requested
    end, far_ahead, requested = run(go())
    if ahead:
        assert end < requested <= end + ahead and all(far_ahead)
    else:
        assert requested == 0 and not any(far_ahead)


def test_sync_thread_runs_calls_in_order_and_hands_errors_back() -> None:
    seen: list[tuple[int, str]] = []

    def call(i: int) -> None:
        seen.append((i, threading.current_thread().name))
        if i == 3:
            raise OSError("disk gone")

    async def go() -> list[BaseException | None]:
        t = SyncThread("test-sync")
        t.start(asyncio.get_running_loop())
        try:
            futs = [t.run(lambda i=i: call(i)) for i in range(6)]
            return list(await asyncio.gather(*futs, return_exceptions=True))
        finally:
            t.stop()

    out = run(go())
    assert [i for i, _ in seen] == list(range(6)) and {n for _, n in seen} == {"test-sync"}
    assert isinstance(out[3], OSError) and str(out[3]) == "disk gone"
    assert out[:3] == [None] * 3 and out[4:] == [None] * 2


def test_sync_thread_refuses_calls_when_not_running() -> None:
    t = SyncThread("idle")
    with pytest.raises(RuntimeError, match="not running"):
        t.run(lambda: None)
    t.stop()  # stopping a thread that never started is fine
