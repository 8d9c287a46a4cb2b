# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Master/slave replication, 4.x HA protocol (``HAService``): the I/O and store glue around the
sans-IO sessions of :mod:`wire.ha.session`.

* :mod:`.master`: the HA listener, one :class:`SlaveConnection` per slave (transfer from the
  CommitLog, acks, heartbeats, housekeeping) and the SYNC_MASTER waiters;
* :mod:`.slave`: the slave's :class:`HAClient` (reports, append through the store, reconnects);
* :mod:`.sync`: the slave's 10 s copy of the master's tables (:class:`SlaveSynchronize`);
* :mod:`.waiters`: puts waiting for an ack that covers them.

Controller mode (5.x AutoSwitch) is meant to reuse these pieces: the listener, the per-connection
reader/writer pair and its CommitLog sending (``sendmsg`` of views of the mapped files), the slave's
connect/receive/append loop and :class:`OffsetWaiters` (advanced with whatever offset the in-sync
replicas confirm) do not depend on the frame layout; what changes is the sans-IO session each
connection drives (:mod:`wire.ha.session` for 4.x; AutoSwitch adds the handshake, epochs and the
confirm offset) and the rule that turns acks into a confirmed offset.
"""

from __future__ import annotations

from .config import HAConfig
from .master import HAService, SlaveConnection, SlaveProblem
from .slave import HAClient
from .sync import SlaveSynchronize
from .waiters import OffsetWaiters

__all__ = ["HAClient", "HAConfig", "HAService", "OffsetWaiters", "SlaveConnection", "SlaveProblem",
           "SlaveSynchronize"]
