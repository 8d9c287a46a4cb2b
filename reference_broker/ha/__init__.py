# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Master/slave replication, 4.x HA protocol (``HAService``): the I/O and store glue around the
sans-IO sessions of :mod:`wire.ha.session`.

* :mod:`.master`: the HA listener, one :class:`SlaveConnection` per slave (transfer from the
  CommitLog, acks, heartbeats, housekeeping) and the SYNC_MASTER waiters;
* :mod:`.slave`: the slave's :class:`HAClient` (reports, append through the store, reconnects);
* :mod:`.sync`: the slave's 10 s copy of the master's tables (:class:`SlaveSynchronize`);
* :mod:`.waiters`: puts waiting for an ack that covers them.
"""

from __future__ import annotations

from .config import HAConfig
from .master import HAService, SlaveConnection, SlaveProblem
from .slave import HAClient
from .sync import SlaveSynchronize
from .waiters import OffsetWaiters

__all__ = ["HAClient", "HAConfig", "HAService", "OffsetWaiters", "SlaveConnection", "SlaveProblem",
           "SlaveSynchronize"]
