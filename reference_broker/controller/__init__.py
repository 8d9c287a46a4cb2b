# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference controller (RocketMQ 5.x controller mode): one node, its state kept in an event log.

:mod:`.replicas` is the state machine (broker groups, masters, SyncStateSets, elections),
:mod:`.eventlog` the append-only log that makes it survive a restart, :mod:`.server` the remoting
listener with broker liveness and role-change notices. The name server embeds one with
``enableControllerInNamesrv=true``; ``mqctl controller start`` runs one alone.
"""

from __future__ import annotations

from .eventlog import EventLog, EventLogError
from .replicas import BrokerGroup, LiveInfo, ReplicasInfo, Result
from .server import Controller, ControllerConfig

__all__ = [
    "BrokerGroup",
    "Controller",
    "ControllerConfig",
    "EventLog",
    "EventLogError",
    "LiveInfo",
    "ReplicasInfo",
    "Result",
]
