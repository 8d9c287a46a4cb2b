# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The HA settings (``MessageStoreConfig``'s ha* keys and ``slaveTimeout``), read once."""

from __future__ import annotations

from dataclasses import dataclass

from ..config import BrokerConfig

__all__ = ["HAConfig"]


@dataclass(frozen=True, slots=True)
class HAConfig:
    broker_role: str = "ASYNC_MASTER"
    #: ``mappedFileSizeCommitLog``: an empty slave starts at the master's last file
    mapped_file_size: int = 1 << 30
    #: ``haSendHeartbeatInterval``
    heartbeat_interval_ms: int = 5000
    #: ``haHousekeepingInterval``
    housekeeping_interval_ms: int = 20000
    #: ``haTransferBatchSize``
    transfer_batch_size: int = 32768
    #: ``haSlaveFallbehindMax``: a SYNC_MASTER answers SLAVE_NOT_AVAILABLE beyond this lag
    slave_fallbehind_max: int = 268435456
    #: ``slaveTimeout``: how long a SYNC_MASTER put waits for its slaves
    slave_timeout_ms: int = 3000
    #: ``haMasterAddress``: a slave's fixed master HA address (else the name server's answer)
    master_address: str | None = None
    #: ``brokerIP2``: the host in the ``haServerAddr`` a master registers
    ha_host: str = "127.0.0.1"

    @property
    def is_slave(self) -> bool:
        return self.broker_role == "SLAVE"

    @property
    def sync_master(self) -> bool:
        return self.broker_role == "SYNC_MASTER"

    @classmethod
    def from_broker_config(cls, cfg: BrokerConfig) -> HAConfig:
        fixed = cfg.values.get("haMasterAddress", "").strip()
        return cls(
            broker_role=cfg.broker_role,
            mapped_file_size=cfg.mapped_file_size_commitlog,
            heartbeat_interval_ms=cfg.int("haSendHeartbeatInterval"),
            housekeeping_interval_ms=cfg.int("haHousekeepingInterval"),
            transfer_batch_size=cfg.int("haTransferBatchSize"),
            slave_fallbehind_max=cfg.int("haSlaveFallbehindMax"),
            slave_timeout_ms=cfg.int("slaveTimeout"),
            # mirrors BrokerController.initialize: an address shorter than 6 characters is no address
            master_address=fixed if len(fixed) >= 6 else None,
            ha_host=cfg.get("brokerIP2"),
        )
