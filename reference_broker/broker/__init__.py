# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The reference broker: RocketMQ 4.9.8's broker as real clients see it on the wire.

``async with Broker(config, host="127.0.0.1", port=0) as b`` runs one on the current event loop
(``b.port``, ``b.address``). See :mod:`.broker` for start-up and shutdown, :mod:`.processors` for
the requests served, and the managers (:mod:`.topics`, :mod:`.offsets`, :mod:`.subscriptions`,
:mod:`.clients`, :mod:`.longpoll`, :mod:`.schedule`) for the state they work on.
"""

from __future__ import annotations

from .broker import Broker
from .processors import HANDLERS

__all__ = ["HANDLERS", "Broker"]
