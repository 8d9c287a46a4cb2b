# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Helpers for the store tests: tiny configs in tmp_path, messages, reading the files back."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from reference_broker.store import MessageToStore, StoreConfig
from wire.store import iter_cq_entries, scan_commitlog

BORN = ("10.0.0.7", 50123)


def run(coro: Coroutine[Any, Any, Any], timeout: float = 60) -> Any:
    return asyncio.run(asyncio.wait_for(coro, timeout))


def small_config(root: Path, **kw: Any) -> StoreConfig:
    """A store with tiny files so that a few messages cross file boundaries."""
    base: dict[str, Any] = dict(
        mapped_file_size_commitlog=4096,
        mapped_file_size_consume_queue=10 * 20,
        max_hash_slot_num=64,
        max_index_num=400,
        flush_disk_type="ASYNC_FLUSH",
        flush_interval_ms=50,
        flush_interval_consume_queue_ms=100,
        store_host=("127.0.0.1", 10911),
        # the background cleaner would delete any file once the disk is 85 % full (Java's
        # diskSpaceCleanForciblyRatio); the tests call delete_expired_files themselves
        clean_resource_interval_ms=3_600_000,
    )
    base.update(kw)
    return StoreConfig.for_directory(root, **base)


def message(topic: str = "TopicTest", queue_id: int = 0, body: bytes = b"hello", *, tags: str | None = None,
            keys: str | None = None, uniq: str | None = None, extra: dict[str, str] | None = None,
            born_ts: int = 1_700_000_000_000, **kw: Any) -> MessageToStore:
    props: dict[str, str] = {}
    if tags is not None:
        props["TAGS"] = tags
    if keys is not None:
        props["KEYS"] = keys
    if uniq is not None:
        props["UNIQ_KEY"] = uniq
    props["WAIT"] = "true"
    props.update(extra or {})
    return MessageToStore(topic=topic, queue_id=queue_id, body=body, born_timestamp=born_ts, born_host=BORN,
                          properties=props, **kw)


def commitlog_files(cfg: StoreConfig) -> list[Path]:
    return sorted(p for p in cfg.commitlog_dir.iterdir())


def cq_files(cfg: StoreConfig, topic: str, queue_id: int) -> list[Path]:
    d = cfg.consumequeue_dir / topic / str(queue_id)
    return sorted(d.iterdir()) if d.exists() else []


def cq_units(cfg: StoreConfig, topic: str, queue_id: int) -> list[tuple[int, int, int]]:
    """Every written unit of a queue, read straight from its files (stops at the zero tail)."""
    out = []
    for p in cq_files(cfg, topic, queue_id):
        for e in iter_cq_entries(p.read_bytes()):
            if e.size == 0:
                break
            out.append((e.commit_log_offset, e.size, e.tags_code))
    return out


def scan_files(cfg: StoreConfig) -> list[tuple[int, object]]:
    """Everything wire.store.scan_commitlog finds in the CommitLog files, file by file."""
    out: list[tuple[int, object]] = []
    for p in commitlog_files(cfg):
        out.extend(scan_commitlog(p.read_bytes(), int(p.name), verify_crc=True))
    return out


def tree_bytes(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}
