# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference name server: Apache RocketMQ 4.9.8's, as seen on the wire.

:class:`NameServer` runs it (``async with NameServer(config, port=0) as ns``);
:class:`RouteInfoManager`, :class:`KVConfigManager` and :func:`process` over a
:class:`NamesrvContext` are the socket-free parts the handlers in :data:`HANDLERS` work on.
"""

from __future__ import annotations

from wire.java import JavaHashMap, java_hash_order

from .kvconfig import NAMESPACE_ORDER_TOPIC_CONFIG, KVConfigError, KVConfigManager
from .processor import HANDLERS, Handler, NamesrvContext, RequestFailed, process, topic_not_exist_remark
from .routeinfo import BrokerEntry, BrokerLiveInfo, RegisterBrokerResult, RouteInfoManager
from .server import NameServer

__all__ = [
    "HANDLERS",
    "NAMESPACE_ORDER_TOPIC_CONFIG",
    "BrokerEntry",
    "BrokerLiveInfo",
    "Handler",
    "JavaHashMap",
    "KVConfigError",
    "KVConfigManager",
    "NameServer",
    "NamesrvContext",
    "RegisterBrokerResult",
    "RequestFailed",
    "RouteInfoManager",
    "java_hash_order",
    "process",
    "topic_not_exist_remark",
]
