# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Controller mode (5.x): GET_BROKER_EPOCH_CACHE (1007) and NOTIFY_BROKER_ROLE_CHANGED (1008).

GET_BROKER_EPOCH_CACHE answers ``EpochEntryCache``: cluster, broker name and id, every epoch with
its range (the last one open, ending at Long.MAX_VALUE) and the CommitLog end, as
``AdminBrokerProcessor.getBrokerEpochCache`` does. A broker outside controller mode has no epochs;
Java fails the request there (an assertion on its ReplicasManager), the reference broker answers
SYSTEM_ERROR saying so. NOTIFY_BROKER_ROLE_CHANGED, the controller's oneway notice after an
election, changes the role at once (``ReplicasManager.changeBrokerRole``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wire import RemotingCommand, RequestCode, ResponseCode
from wire.aio import HandlerResult, RemotingConnection
from wire.bodies import EpochEntry, EpochEntryCache
from wire.headers import NotifyBrokerRoleChangedRequestHeader

from .common import BrokerHandler

if TYPE_CHECKING:
    from ..broker import Broker

__all__ = ["HANDLERS"]


def get_broker_epoch_cache(broker: Broker, conn: RemotingConnection, req: RemotingCommand) -> HandlerResult:
    if broker.autoswitch is None:
        return req.response(ResponseCode.SYSTEM_ERROR, "the broker is not in controller mode (no epochs)")
    cfg = broker.config
    epochs = tuple(EpochEntry(epoch=r.epoch, start_offset=r.start_offset, end_offset=r.end_offset)
                   for r in broker.autoswitch.epochs.cache.ranges())
    body = EpochEntryCache(cluster_name=cfg.cluster_name, broker_name=cfg.broker_name,
                           broker_id=cfg.broker_id, epoch_list=epochs,
                           max_offset=broker.store.commitlog_max_offset())
    return req.response(ResponseCode.SUCCESS, None, body=body.encode())


async def notify_broker_role_changed(broker: Broker, conn: RemotingConnection,
                                     req: RemotingCommand) -> RemotingCommand | None:
    h = NotifyBrokerRoleChangedRequestHeader.from_ext(req.ext_fields)
    if broker.replicas is not None:
        await broker.replicas.change_broker_role(h.master_address, h.master_epoch or 0,
                                                 h.sync_state_set_epoch or 0, h.broker_id or 0)
    if req.is_oneway:
        return None
    return req.response(ResponseCode.SUCCESS, None)


HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.GET_BROKER_EPOCH_CACHE: get_broker_epoch_cache,
    RequestCode.NOTIFY_BROKER_ROLE_CHANGED: notify_broker_role_changed,
}
