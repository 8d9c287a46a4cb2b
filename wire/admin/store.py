# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Reading a broker's store directory offline: ``mqctl store inspect``.

The layout is the one ``DefaultMessageStore`` keeps (see :mod:`wire.store`); the reference broker
and a Java 4.9.x or 5.x broker write the same files, so either can be inspected::

    <root>/commitlog/<20-digit offset>          records, then a BLANK marker at each file's end
    <root>/consumequeue/<topic>/<queueId>/<20-digit offset>   20-byte entries
    <root>/config/topics.json, consumerOffset.json, subscriptionGroup.json, delayOffset.json
    <root>/checkpoint, <root>/abort (present while a broker runs or after a crash), <root>/index/*

Each commit-log file is walked the way recovery walks it (:func:`wire.store.scan_commitlog`, CRCs
checked as ``checkCRCOnRecover`` does): the walk ends at the first zero tail, and anything else
that stops it (a torn record, a bad magic code, sizes that do not add up, a CRC mismatch) is a
problem reported with its file and offsets. Every consume-queue entry is checked against the
commit log: it must point at the start of a record of the size it claims, unless the commit log
no longer holds that offset (expired files). Nothing is written; files are mapped read-only.
"""

from __future__ import annotations

import contextlib
import mmap
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DecodeError
from ..message import StoredMessage
from ..store import (
    CQ_STORE_UNIT_SIZE,
    INDEX_HEADER_SIZE,
    Blank,
    Problem,
    decode_checkpoint,
    decode_index_header,
    file_name_to_offset,
    iter_cq_entries,
    scan_commitlog,
)
from .errors import BadRequest
from .message import MessageView, view

__all__ = [
    "CommitLogFile",
    "ConfigFile",
    "ConsumeQueueInfo",
    "ConsumerOffset",
    "IndexFile",
    "StoreProblem",
    "StoreReport",
    "inspect_store",
]

CONFIG_FILES = ("topics.json", "consumerOffset.json", "subscriptionGroup.json", "delayOffset.json")


@dataclass(frozen=True, slots=True)
class StoreProblem:
    """Something that does not read as a healthy store would."""

    file: str
    #: offset of the problem inside ``file``
    file_offset: int
    #: commit-log offset (commit-log problems) or logical queue offset (consume-queue problems)
    offset: int | None
    kind: str
    reason: str


@dataclass(frozen=True, slots=True)
class CommitLogFile:
    name: str
    base_offset: int
    size: int
    records: int
    #: bytes from the file's start to the end of its last good record (or its BLANK marker)
    used: int
    blank: int | None
    first_store_timestamp: int | None
    last_store_timestamp: int | None


@dataclass(frozen=True, slots=True)
class ConsumeQueueInfo:
    topic: str
    queue_id: int
    files: int
    entries: int
    #: the logical offset of the first real entry, and one past the last
    min_offset: int
    max_offset: int
    last_commit_log_offset: int | None


@dataclass(frozen=True, slots=True)
class ConsumerOffset:
    group: str
    topic: str
    queue_id: int
    offset: int
    #: the consume queue's max offset in this store, and how far the group is behind it
    max_offset: int | None
    lag: int | None


@dataclass(frozen=True, slots=True)
class ConfigFile:
    name: str
    entries: int | None
    error: str | None = None


@dataclass(frozen=True, slots=True)
class IndexFile:
    name: str
    begin_timestamp: int
    end_timestamp: int
    begin_phy_offset: int
    end_phy_offset: int
    hash_slot_count: int
    index_count: int


@dataclass(frozen=True, slots=True)
class Checkpoint:
    physic_msg_timestamp: int
    logics_msg_timestamp: int
    index_msg_timestamp: int
    master_flushed_offset: int
    confirm_phy_offset: int


@dataclass(frozen=True, slots=True)
class StoreReport:
    root: str
    commitlog_dir: str
    commitlog: tuple[CommitLogFile, ...]
    #: the first commit-log offset still held, and where the written data ends
    min_offset: int | None
    max_offset: int | None
    records: int
    consume_queues: tuple[ConsumeQueueInfo, ...]
    consumer_offsets: tuple[ConsumerOffset, ...]
    configs: tuple[ConfigFile, ...]
    checkpoint: Checkpoint | None
    index_files: tuple[IndexFile, ...]
    #: the ``abort`` file exists: a broker is running here, or the last one did not stop cleanly
    abort_file: bool
    problems: tuple[StoreProblem, ...]
    messages: tuple[MessageView, ...] = ()


@contextlib.contextmanager
def _mapped(path: Path) -> Iterator[memoryview | bytes]:
    size = path.stat().st_size
    if size == 0:
        yield b""
        return
    with open(path, "rb") as f, mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as mm:
        view_ = memoryview(mm)
        try:
            yield view_
        finally:
            view_.release()


def _numbered(directory: Path) -> list[tuple[int, Path]]:
    out = []
    if directory.is_dir():
        for p in directory.iterdir():
            with contextlib.suppress(DecodeError):
                out.append((file_name_to_offset(p.name), p))
    return sorted(out)


class _Records:
    """The offset and size of every good record, in commit-log order: two packed arrays (12 bytes
    a record, so a store of millions of messages fits), looked up by bisection."""

    def __init__(self) -> None:
        self.offsets = array("q")
        self.sizes = array("i")

    def add(self, offset: int, size: int) -> None:
        self.offsets.append(offset)
        self.sizes.append(size)

    def size_at(self, offset: int) -> int | None:
        """The size of the record that starts at ``offset``, or ``None``."""
        i = bisect_left(self.offsets, offset)
        return self.sizes[i] if i < len(self.offsets) and self.offsets[i] == offset else None


def _scan_commitlog(directory: Path, problems: list[StoreProblem], want_messages: bool, limit: int,
                    messages: list[MessageView], progress: _Progress
                    ) -> tuple[list[CommitLogFile], _Records, int | None]:
    """Walk every file; returns the files, the good records, and where the data ends."""
    files: list[CommitLogFile] = []
    sizes = _Records()
    end: int | None = None
    numbered = _numbered(directory)
    for i, (base, path) in enumerate(numbered):
        last_file = i == len(numbered) - 1
        records, used, blank, first_ts, last_ts = 0, 0, None, None, None
        with _mapped(path) as data:
            scan = scan_commitlog(data, base, verify_crc=True)
            for offset, item in scan:
                if isinstance(item, StoredMessage):
                    records += 1
                    if not records & 0x3FF:
                        progress.at(offset - base)
                    sizes.add(offset, item.total_size)
                    used = offset - base + item.total_size
                    first_ts = item.store_timestamp if first_ts is None else first_ts
                    last_ts = item.store_timestamp
                    if want_messages and len(messages) < limit:
                        messages.append(view(item))
                elif isinstance(item, Blank):
                    blank = item.size
                    used = offset - base + 8
                elif isinstance(item, Problem):
                    if item.kind.value == "zero-tail":
                        if not last_file and blank is None:
                            problems.append(StoreProblem(path.name, offset - base, offset, "no-blank",
                                                         "zeros before the file's end with no BLANK marker, "
                                                         "but a later file exists"))
                        break
                    problems.append(StoreProblem(path.name, offset - base, offset, item.kind.value,
                                                 item.reason))
                    break
            # the walk holds the mapping until it is closed
            scan.close()
            size = len(data)
        files.append(CommitLogFile(path.name, base, size, records, used, blank, first_ts, last_ts))
        progress.file_done(path)
    if files:
        last = files[-1]
        end = last.base_offset + (last.used if last.blank is None else last.size)
    return files, sizes, end


class _Progress:
    """Bytes of the store's files read so far, reported to ``on_progress(done, total)``."""

    def __init__(self, paths: list[Path], on_progress: Callable[[int, int], None] | None) -> None:
        self.on_progress = on_progress
        self.total = sum(_size(p) for p in paths) if on_progress is not None else 0
        self.done = 0

    def at(self, pos: int) -> None:
        """``pos`` bytes into the file being read."""
        if self.on_progress is not None:
            self.on_progress(min(self.done + pos, self.total), self.total)

    def file_done(self, path: Path) -> None:
        if self.on_progress is not None:
            self.done += _size(path)
            self.on_progress(min(self.done, self.total), self.total)


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _scan_queues(root: Path, sizes: _Records, min_offset: int | None, end: int | None,
                 problems: list[StoreProblem], progress: _Progress) -> list[ConsumeQueueInfo]:
    out: list[ConsumeQueueInfo] = []
    cq_root = root / "consumequeue"
    if not cq_root.is_dir():
        return out
    for topic_dir in sorted(p for p in cq_root.iterdir() if p.is_dir()):
        for qdir in sorted((p for p in topic_dir.iterdir() if p.is_dir() and p.name.isdigit()),
                           key=lambda p: int(p.name)):
            qid = int(qdir.name)
            numbered = _numbered(qdir)
            entries, first, last, last_phy = 0, None, None, None
            for base, path in numbered:
                rel = f"consumequeue/{topic_dir.name}/{qdir.name}/{path.name}"
                with _mapped(path) as mapped:
                    whole = len(mapped) - len(mapped) % CQ_STORE_UNIT_SIZE
                    if whole != len(mapped):
                        problems.append(StoreProblem(rel, whole, None, "cq-size",
                                                     f"{len(mapped)} bytes is not a whole number of entries"))
                    data = bytes(mapped[:whole])
                for n, e in enumerate(iter_cq_entries(data)):
                    # mirrors ConsumeQueue.recover: the written entries end at the first empty one
                    if e.size == 0 and e.commit_log_offset == 0:
                        break
                    if e.is_pre_blank:
                        continue
                    logical = base // CQ_STORE_UNIT_SIZE + n
                    entries += 1
                    first = logical if first is None else first
                    last, last_phy = logical, e.commit_log_offset
                    held = min_offset is not None and e.commit_log_offset >= min_offset
                    if held and end is not None and e.commit_log_offset >= end:
                        problems.append(StoreProblem(rel, n * CQ_STORE_UNIT_SIZE, logical, "cq-dangling",
                                                     f"entry points at commit-log offset "
                                                     f"{e.commit_log_offset}, past the data end {end}"))
                    elif held and (got := sizes.size_at(e.commit_log_offset)) != e.size:
                        why = "no record starts there" if got is None else f"the record there is {got} bytes"
                        problems.append(StoreProblem(rel, n * CQ_STORE_UNIT_SIZE, logical, "cq-mismatch",
                                                     f"entry says {e.size} bytes at commit-log offset "
                                                     f"{e.commit_log_offset}, but {why}"))
                progress.file_done(path)
            out.append(ConsumeQueueInfo(topic_dir.name, qid, len(numbered), entries,
                                        first if first is not None else 0,
                                        last + 1 if last is not None else 0, last_phy))
    return out


def _read_configs(root: Path,
                  problems: list[StoreProblem]) -> tuple[list[ConfigFile], dict[str, dict[int, int]]]:
    from ..bodies import (
        ConsumerOffsetSerializeWrapper,
        DelayOffsetSerializeWrapper,
        SubscriptionGroupWrapper,
        TopicConfigSerializeWrapper,
    )

    readers: dict[str, tuple[type[Any], str]] = {
        "topics.json": (TopicConfigSerializeWrapper, "topic_config_table"),
        "consumerOffset.json": (ConsumerOffsetSerializeWrapper, "offset_table"),
        "subscriptionGroup.json": (SubscriptionGroupWrapper, "subscription_group_table"),
        "delayOffset.json": (DelayOffsetSerializeWrapper, "offset_table"),
    }
    configs = []
    offsets: dict[str, dict[int, int]] = {}
    for name in CONFIG_FILES:
        path = root / "config" / name
        if not path.is_file():
            continue
        cls, attr = readers[name]
        try:
            body = cls.decode(path.read_bytes())
        except (DecodeError, OSError) as err:
            configs.append(ConfigFile(name, None, str(err)))
            problems.append(StoreProblem(f"config/{name}", getattr(err, "offset", None) or 0, None,
                                         "bad-config", str(err)))
            continue
        table = getattr(body, attr)
        configs.append(ConfigFile(name, len(table)))
        if name == "consumerOffset.json":
            offsets = {k: dict(v) for k, v in table.items()}
    return configs, offsets


def inspect_store(root: Path | str, *, commitlog_dir: Path | str | None = None, messages: bool = False,
                  limit: int = 100, on_progress: Callable[[int, int], None] | None = None) -> StoreReport:
    """Read the store under ``root`` (see the module docstring); ``messages`` also returns the
    first ``limit`` records of the commit log. ``on_progress(done, total)`` is called now and then
    with the bytes of the commit-log and consume-queue files read so far and in all."""
    root = Path(root)
    if not root.is_dir():
        raise BadRequest(f"{root} is not a directory")
    cl_dir = Path(commitlog_dir) if commitlog_dir is not None else root / "commitlog"
    if not cl_dir.is_dir() and not (root / "consumequeue").is_dir():
        raise BadRequest(f"{root} does not look like a broker store (no commitlog/ or consumequeue/)")
    problems: list[StoreProblem] = []
    msgs: list[MessageView] = []
    cq_root = root / "consumequeue"
    progress = _Progress([p for _b, p in _numbered(cl_dir)]
                         + ([p for p in cq_root.rglob("*") if p.is_file()] if cq_root.is_dir() else []),
                         on_progress)
    files, sizes, end = _scan_commitlog(cl_dir, problems, messages, limit, msgs, progress)
    min_offset = files[0].base_offset if files else None
    queues = _scan_queues(root, sizes, min_offset, end, problems, progress)
    configs, offsets = _read_configs(root, problems)
    max_by_queue = {(q.topic, q.queue_id): q.max_offset for q in queues}
    consumer = []
    for key, table in sorted(offsets.items()):
        topic, _, group = key.partition("@")
        for qid, off in sorted(table.items()):
            mx = max_by_queue.get((topic, qid))
            consumer.append(ConsumerOffset(group, topic, qid, off, mx, None if mx is None else mx - off))
    checkpoint = None
    cp_path = root / "checkpoint"
    if cp_path.is_file():
        try:
            cp = decode_checkpoint(cp_path.read_bytes())
            checkpoint = Checkpoint(cp.physic_msg_timestamp, cp.logics_msg_timestamp, cp.index_msg_timestamp,
                                    cp.master_flushed_offset, cp.confirm_phy_offset)
        except DecodeError as err:
            problems.append(StoreProblem("checkpoint", err.offset or 0, None, "bad-checkpoint", str(err)))
    index_files = []
    idx_dir = root / "index"
    if idx_dir.is_dir():
        for p in sorted(idx_dir.iterdir()):
            if not p.is_file():
                continue
            try:
                with open(p, "rb") as f:
                    h = decode_index_header(f.read(INDEX_HEADER_SIZE))
            except (DecodeError, OSError) as err:
                problems.append(StoreProblem(f"index/{p.name}", 0, None, "bad-index", str(err)))
                continue
            index_files.append(IndexFile(p.name, h.begin_timestamp, h.end_timestamp, h.begin_phy_offset,
                                         h.end_phy_offset, h.hash_slot_count, h.index_count))
    return StoreReport(str(root), str(cl_dir), tuple(files), min_offset, end, sum(f.records for f in files),
                       tuple(queues), tuple(consumer), tuple(configs), checkpoint, tuple(index_files),
                       (root / "abort").exists(), tuple(problems), tuple(msgs))

