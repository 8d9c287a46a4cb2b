# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker's request handlers, one module per processor, gathered in one table.

Each handler is ``handler(broker, connection, request)`` and returns the response, ``None`` (no
response), or an awaitable of either (STYLE B3: one table, looked up by request code; codes not
in it get REQUEST_CODE_NOT_SUPPORTED from the broker).
"""

from __future__ import annotations

from ...bodies import BodyDecoders
from . import (
    acl,
    admin,
    client,
    controller,
    ha,
    inspection,
    offsets,
    pull,
    query,
    relay,
    reply,
    reset,
    send,
    transaction,
)
from .common import BrokerHandler

__all__ = ["BODIES", "HANDLERS", "BrokerHandler"]

#: request code → handler
HANDLERS: dict[int, BrokerHandler] = {}
for _module in (send, reply, pull, offsets, reset, relay, client, query, admin, inspection, acl, transaction,
                ha, controller):
    for _code, _handler in _module.HANDLERS.items():
        if _code in HANDLERS:
            raise RuntimeError(f"request code {_code} has two handlers")
        HANDLERS[_code] = _handler

#: request code -> the decoding of its body, for :func:`reference_broker.bodies.preparer`
BODIES: BodyDecoders = {**client.BODIES, **admin.BODIES, **send.BODIES}
