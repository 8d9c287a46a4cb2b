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

import math

from wire.sql92 import SQL92, Selector, SelectorError, compile_selector, is_tag_type

__all__ = ["bloom_filter_data", "compile_failure", "is_tag_type", "selector_of"]

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



# ------------------------------------------------------------------------------ bloom filter data

_M64 = (1 << 64) - 1


def _rotl64(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _M64


def _fmix64(k: int) -> int:
    k ^= k >> 33
    k = (k * 0xFF51AFD7ED558CCD) & _M64
    k ^= k >> 33
    k = (k * 0xC4CEB9FE1A85EC53) & _M64
    return k ^ (k >> 33)


def murmur3_128_long(data: bytes) -> int:
    """Guava's ``Hashing.murmur3_128().hashBytes(data).asLong()`` (seed 0): the first 64 bits of
    MurmurHash3 x64 128, unsigned."""
    c1, c2 = 0x87C37B91114253D5, 0x4CF5AD432745937F
    h1 = h2 = 0
    blocks = len(data) // 16
    for i in range(blocks):
        k1 = int.from_bytes(data[16 * i:16 * i + 8], "little")
        k2 = int.from_bytes(data[16 * i + 8:16 * i + 16], "little")
        h1 ^= (_rotl64((k1 * c1) & _M64, 31) * c2) & _M64
        h1 = ((_rotl64(h1, 27) + h2) * 5 + 0x52DCE729) & _M64
        h2 ^= (_rotl64((k2 * c2) & _M64, 33) * c1) & _M64
        h2 = ((_rotl64(h2, 31) + h1) * 5 + 0x38495AB5) & _M64
    tail = data[16 * blocks:]
    if len(tail) > 8:
        h2 ^= (_rotl64((int.from_bytes(tail[8:], "little") * c2) & _M64, 33) * c1) & _M64
    if tail:
        h1 ^= (_rotl64((int.from_bytes(tail[:8], "little") * c1) & _M64, 31) * c2) & _M64
    h1 ^= len(data)
    h2 ^= len(data)
    h1 = (h1 + h2) & _M64
    h2 = (h2 + h1) & _M64
    h1, h2 = _fmix64(h1), _fmix64(h2)
    return (h1 + h2) & _M64


def _int32(x: int) -> int:
    x &= 0xFFFFFFFF
    return x - (1 << 32) if x >= 1 << 31 else x


def bloom_filter_data(key: str, error_rate: int = 20, expected: int = 32) -> tuple[int, list[int]]:
    """``BloomFilter.createByFn(maxErrorRateOfBloomFilter, expectConsumerNumUseFilter).generate(key)``
    of 4.9.8 (``key`` is ``<group>#<topic>``): the filter's bit count and the key's bit positions,
    the ``bloomFilterData`` a ConsumerFilterData carries."""
    rate = error_rate / 100.0
    k = math.ceil(math.log(rate) / math.log(0.5))
    m = math.ceil(expected * (math.log(1 / rate) / math.log(2)) * (math.log(math.e) / math.log(2)))
    m = 8 * math.ceil(m / 8.0)
    h = murmur3_128_long(key.encode("utf-8"))
    hash1, hash2 = _int32(h), _int32(h >> 32)
    positions = []
    for i in range(1, k + 1):
        combined = _int32(hash1 + i * hash2)
        if combined < 0:
            combined = ~combined
        positions.append(combined % m)
    return m, positions
