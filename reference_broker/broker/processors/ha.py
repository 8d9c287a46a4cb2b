# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replication status: GET_BROKER_HA_STATUS (907).

A 4.9.x broker does not know this 5.x request; the reference broker answers it with the 5.x
``HARuntimeInfo`` body (``DefaultHAService.getRuntimeInfo``) so that ``mqctl ha status`` and a 5.x
``mqadmin haStatus`` show a 4.x-protocol master's slaves with real figures: each connection's
acknowledged offset, how far behind it is, its transfer speed and where the transfer stands. A
slave answers with its HA client's figures.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.bodies import HAClientRuntimeInfo, HARuntimeInfo

from .common import BrokerHandler

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS", "ha_runtime_info"]


def ha_runtime_info(broker: Broker) -> HARuntimeInfo:
    if broker.autoswitch is not None:
        return broker.autoswitch.runtime_info()
    if broker.ha_client is not None:
        return HARuntimeInfo(master=False, ha_client_runtime_info=broker.ha_client.runtime_info())
    if broker.ha is not None:
        return broker.ha.runtime_info()
    return HARuntimeInfo(master=not broker.is_slave, ha_client_runtime_info=HAClientRuntimeInfo())


def get_broker_ha_status(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    return req.response(ResponseCode.SUCCESS, None, None, ha_runtime_info(broker).encode())


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.GET_BROKER_HA_STATUS: get_broker_ha_status,
}
