# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Message filters of subscriptions that are not tags (``FilterFactory``, ``ConsumerFilterManager``
and ``ExpressionMessageFilter`` of 4.9.8).

Only ``SQL92`` is known (:mod:`wire.sql92`); another type does not compile (Java's factory has
no filter for it and the lookup fails). Compiled selectors are cached by text, as Java's parse
cache is. A TAG subscription keeps the ConsumeQueue fast path (tag hash codes, no record read);
a SQL92 one is evaluated on each record's properties (``isMatchedByCommitLog``): the filter bit
map of ``enableCalcFilterBitMap`` is not built, and without it Java too matches every unit by
ConsumeQueue and decides on the record.
"""

from __future__ import annotations

from wire.sql92 import SQL92, Selector, SelectorError, compile_selector, is_tag_type

__all__ = ["compile_failure", "is_tag_type", "selector_of"]

#: the message of the NullPointerException a 4.9.8 broker on JDK 17 gets for an unknown type
_NO_FILTER = ('Cannot invoke "org.apache.rocketmq.filter.FilterSpi.compile(String)" because the return '
              'value of "org.apache.rocketmq.filter.FilterFactory.get(String)" is null')


def selector_of(expression_type: str | None, text: str | None) -> Selector | None:
    """The compiled selector, or None when it does not compile (``ConsumerFilterManager.build``
    returns null then)."""
    if expression_type != SQL92 or text is None:
        return None
    try:
        return compile_selector(text)
    except SelectorError:
        return None


def compile_failure(expression_type: str | None, text: str | None) -> str | None:
    """None when the expression compiles; else Java's ``getMessage()`` of the failure ('' for
    none), which CHECK_CLIENT_CONFIG returns as its remark."""
    if expression_type != SQL92:
        return _NO_FILTER
    try:
        compile_selector(text or "")
    except SelectorError as exc:
        return exc.java_message
    return None

