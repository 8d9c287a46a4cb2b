# Licensed under the Apache License, Version 2.0. See LICENSE.
"""END_TRANSACTION (37): commit or roll back a half message (:mod:`..transaction`)."""

from __future__ import annotations

from wire import RequestCode

from ..transaction import end_transaction
from .common import BrokerHandler

__all__ = ["HANDLERS"]

HANDLERS: dict[int, BrokerHandler] = {RequestCode.END_TRANSACTION: end_transaction}
