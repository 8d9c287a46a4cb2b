# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The message store's settings: the ``MessageStoreConfig`` keys the store acts on.

The broker builds a :class:`StoreConfig` from its ``broker.properties``
(:meth:`StoreConfig.from_broker_config`); tests build one directly with tiny file sizes.
Defaults are the 4.9.8 ``MessageStoreConfig`` defaults.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..config import BrokerConfig

__all__ = ["DEFAULT_DELAY_LEVELS_MS", "FLUSH_TYPES", "BROKER_ROLES", "StoreConfig"]

FLUSH_TYPES = ("ASYNC_FLUSH", "SYNC_FLUSH")
BROKER_ROLES = ("ASYNC_MASTER", "SYNC_MASTER", "SLAVE")

#: ``messageDelayLevel`` "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h" in ms
DEFAULT_DELAY_LEVELS_MS: tuple[int, ...] = (
    1000, 5000, 10000, 30000, 60000, 120000, 180000, 240000, 300000, 360000, 420000, 480000,
    540000, 600000, 1200000, 1800000, 3600000, 7200000,
)


@dataclass(frozen=True)
class StoreConfig:
    """Where the store lives and how it behaves (``MessageStoreConfig``)."""

    #: ``storePathRootDir``: consumequeue/, index/, checkpoint, abort and lock live here
    root: Path
    #: ``storePathCommitLog`` (default ``<root>/commitlog``)
    commitlog_dir: Path
    #: ``mappedFileSizeCommitLog``: every CommitLog file has exactly this size
    mapped_file_size_commitlog: int = 1024 * 1024 * 1024
    #: ``mappedFileSizeConsumeQueue``, rounded up to whole 20-byte units
    mapped_file_size_consume_queue: int = 300000 * 20
    #: ``flushDiskType``: ASYNC_FLUSH or SYNC_FLUSH (group commit)
    flush_disk_type: str = "ASYNC_FLUSH"
    #: ``flushIntervalCommitLog``: the ASYNC_FLUSH period
    flush_interval_ms: int = 500
    #: ``syncFlushTimeout``: a SYNC_FLUSH put not flushed by then answers FLUSH_DISK_TIMEOUT
    sync_flush_timeout_ms: int = 5000
    #: ``fileReservedTime``: CommitLog files older than this many hours are deleted
    file_reserved_hours: int = 72
    #: ``deleteWhen``: hours of the day (";"-separated) when expired files are deleted
    delete_when: str = "04"
    #: ``maxMessageSize``: the largest body accepted
    max_message_size: int = 4 * 1024 * 1024
    #: ``brokerIP1:listenPort``, written into every record and every offset msgId
    store_host: tuple[str, int] = ("127.0.0.1", 10911)
    #: ``maxHashSlotNum``: hash slots per index file
    max_hash_slot_num: int = 5_000_000
    #: ``maxIndexNum``: entries per index file
    max_index_num: int = 20_000_000
    #: ``messageIndexEnable``: build the key/UNIQ_KEY index
    message_index_enable: bool = True
    #: ``brokerRole``: a SLAVE refuses local puts and keeps the requested offset on a miss
    broker_role: str = "ASYNC_MASTER"
    #: ``flushIntervalConsumeQueue``: period of the ConsumeQueue/index/checkpoint flush
    flush_interval_consume_queue_ms: int = 1000
    #: ``cleanResourceInterval``: period of the expired-file check
    clean_resource_interval_ms: int = 10000
    #: ``diskMaxUsedSpaceRatio``: above this disk usage (percent) expired files go at any hour
    disk_max_used_space_ratio: int = 75
    #: ``maxTransferBytesOnMessageInMemory`` / ``...CountOnMessageInMemory``
    max_transfer_bytes_in_memory: int = 256 * 1024
    max_transfer_count_in_memory: int = 32
    #: ``maxTransferBytesOnMessageInDisk`` / ``...CountOnMessageInDisk``
    max_transfer_bytes_in_disk: int = 64 * 1024
    max_transfer_count_in_disk: int = 8
    #: ``accessMessageInMemoryMaxRatio``: the share of RAM counted as "in memory" for pulls
    access_message_in_memory_max_ratio: int = 40
    #: ``maxMsgsNumBatch``: the most messages one QUERY_MESSAGE returns
    max_msgs_num_batch: int = 64
    #: ``checkCRCOnRecover``: verify body CRCs when recovering after a crash
    check_crc_on_recover: bool = True
    #: ``offsetCheckInSlave``: a slave corrects the next offset like a master does
    offset_check_in_slave: bool = False
    #: ``messageDelayLevel`` in ms; the tagsCode of SCHEDULE_TOPIC_XXXX entries is the due time
    delay_levels_ms: tuple[int, ...] = field(default=DEFAULT_DELAY_LEVELS_MS)
    #: how far ahead of the CommitLog's write position a background thread faults the mapped
    #: pages in (0: not at all); our own setting, in the spirit of ``warmMapedFileEnable``
    commitlog_prefault_bytes: int = 4 * 1024 * 1024

    def __post_init__(self) -> None:
        if self.flush_disk_type not in FLUSH_TYPES:
            raise ValueError(f"flush_disk_type must be one of {FLUSH_TYPES}, got {self.flush_disk_type!r}")
        if self.broker_role not in BROKER_ROLES:
            raise ValueError(f"broker_role must be one of {BROKER_ROLES}, got {self.broker_role!r}")
        if self.mapped_file_size_commitlog < 128:
            raise ValueError(f"mappedFileSizeCommitLog {self.mapped_file_size_commitlog} is too small to "
                             "hold a record (128 bytes at least)")
        if self.mapped_file_size_consume_queue < 20:
            raise ValueError(f"mappedFileSizeConsumeQueue {self.mapped_file_size_consume_queue} does not "
                             "hold one 20-byte unit")
        # MessageStoreConfig.getMappedFileSizeConsumeQueue rounds up to whole units
        rounded = -(-self.mapped_file_size_consume_queue // 20) * 20
        object.__setattr__(self, "mapped_file_size_consume_queue", rounded)
        object.__setattr__(self, "root", Path(self.root))
        object.__setattr__(self, "commitlog_dir", Path(self.commitlog_dir))
        if self.commitlog_prefault_bytes < 0:
            raise ValueError("commitlog_prefault_bytes must be >= 0")
        if self.max_hash_slot_num <= 0 or self.max_index_num <= 1:
            raise ValueError(f"maxHashSlotNum ({self.max_hash_slot_num}) must be > 0 and maxIndexNum "
                             f"({self.max_index_num}) > 1")
        for w in self.delete_when.split(";"):
            if not w.strip().isdigit():
                raise ValueError(f"delete_when: {self.delete_when!r} is not ';'-separated hours")

    @property
    def sync_flush(self) -> bool:
        return self.flush_disk_type == "SYNC_FLUSH"

    @property
    def is_slave(self) -> bool:
        return self.broker_role == "SLAVE"

    @property
    def consumequeue_dir(self) -> Path:
        return self.root / "consumequeue"

    @property
    def index_dir(self) -> Path:
        return self.root / "index"

    @property
    def checkpoint_path(self) -> Path:
        return self.root / "checkpoint"

    @property
    def abort_path(self) -> Path:
        return self.root / "abort"

    @property
    def lock_path(self) -> Path:
        return self.root / "lock"

    @classmethod
    def for_directory(cls, root: str | Path, **overrides: object) -> StoreConfig:
        """A config rooted at ``root`` with the CommitLog in ``root/commitlog``."""
        r = Path(root)
        return cls(root=r, commitlog_dir=r / "commitlog", **overrides)  # type: ignore[arg-type]

    @classmethod
    def from_broker_config(cls, cfg: BrokerConfig) -> StoreConfig:
        """The store settings of a broker's ``broker.properties``."""
        return cls(
            root=cfg.store_root,
            commitlog_dir=cfg.commitlog_dir,
            mapped_file_size_commitlog=cfg.mapped_file_size_commitlog,
            mapped_file_size_consume_queue=cfg.mapped_file_size_consume_queue,
            flush_disk_type=cfg.flush_disk_type,
            flush_interval_ms=cfg.flush_interval_commitlog_ms,
            sync_flush_timeout_ms=cfg.sync_flush_timeout_ms,
            file_reserved_hours=cfg.file_reserved_hours,
            delete_when=cfg.delete_when,
            max_message_size=cfg.max_message_size,
            store_host=(cfg.broker_ip1, cfg.listen_port),
            max_hash_slot_num=cfg.int("maxHashSlotNum"),
            max_index_num=cfg.int("maxIndexNum"),
            message_index_enable=cfg.bool("messageIndexEnable"),
            broker_role=cfg.broker_role,
            flush_interval_consume_queue_ms=cfg.int("flushIntervalConsumeQueue"),
            clean_resource_interval_ms=cfg.int("cleanResourceInterval"),
            disk_max_used_space_ratio=cfg.int("diskMaxUsedSpaceRatio"),
            max_transfer_bytes_in_memory=cfg.int("maxTransferBytesOnMessageInMemory"),
            max_transfer_count_in_memory=cfg.int("maxTransferCountOnMessageInMemory"),
            max_transfer_bytes_in_disk=cfg.int("maxTransferBytesOnMessageInDisk"),
            max_transfer_count_in_disk=cfg.int("maxTransferCountOnMessageInDisk"),
            access_message_in_memory_max_ratio=cfg.int("accessMessageInMemoryMaxRatio"),
            max_msgs_num_batch=cfg.int("maxMsgsNumBatch"),
            check_crc_on_recover=cfg.bool("checkCRCOnRecover"),
            offset_check_in_slave=cfg.bool("offsetCheckInSlave"),
            delay_levels_ms=tuple(cfg.message_delay_levels),
        )
