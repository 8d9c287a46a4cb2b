# Licensed under the Apache License, Version 2.0. See LICENSE.
"""END_TRANSACTION (37): commit or roll back a half message; RESUME_CHECK_HALF_MESSAGE (323): have
a message checked again (:mod:`..transaction`)."""

from __future__ import annotations

from wire import RequestCode

from ..transaction import end_transaction, resume_check_half_message
from .common import BrokerHandler

__all__ = ["HANDLERS"]

HANDLERS: dict[int, BrokerHandler] = {
    RequestCode.END_TRANSACTION: end_transaction,
    RequestCode.RESUME_CHECK_HALF_MESSAGE: resume_check_half_message,
}
