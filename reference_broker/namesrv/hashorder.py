# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A dict that iterates in the order a ``java.util.HashMap`` with the same history would.

Why: the name server writes several of its tables straight onto the wire with fastjson (topic
lists, ClusterInfo, the KV tables, the legacy route form), and fastjson writes a ``HashMap`` or
``HashSet`` in its iteration order. Reproducing that order makes our bodies byte-for-byte those
of a Java name server holding the same data, which the capture replays check.

``HashMap`` iteration walks the bucket array from index 0 up; a key's bucket is
``(h ^ (h >>> 16)) & (n - 1)`` where ``h`` is the key's ``hashCode()`` and ``n`` the table size;
inside a bucket, entries stay in insertion order (new entries are appended, and a resize splits
each bucket keeping the relative order). So the iteration order is a *stable* sort of the
insertion order by bucket index. ``n`` starts at the next power of two of the initial capacity
and doubles whenever the size passes ``0.75 n`` (``HashMap.putVal``/``resize``), or when one
bucket would hold a 9th entry while ``n < 64`` (``treeifyBin``). Tables never shrink, so the
size that matters is the largest one ever reached, which we track.

Not modelled: the order inside a bucket of nine or more colliding keys once the table has 64
buckets (Java turns it into a red-black tree whose root moves to the front). Python's dict
keeps insertion order, and removing then re-adding a key puts it last, as Java's bucket lists do.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Iterator, MutableMapping
from typing import TypeVar

from wire.message import java_string_hash

__all__ = ["JavaHashMap", "java_hash", "java_hash_order", "table_size_for"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")

_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def java_hash(key: object) -> int:
    """``hashCode()`` of a ``String`` or of a ``Long`` key (the only key types the tables use)."""
    if isinstance(key, str):
        return java_string_hash(key)
    if isinstance(key, int) and not isinstance(key, bool):
        # Long.hashCode: (int) (value ^ (value >>> 32))
        v = key & 0xFFFFFFFFFFFFFFFF
        return (v ^ (v >> 32)) & 0xFFFFFFFF
    raise TypeError(f"no Java hashCode for {type(key).__name__}")


def _spread(h: int) -> int:
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at or above ``capacity`` (at least 1)."""
    n = 1
    while n < capacity:
        n <<= 1
    return n


def java_hash_order(keys: Iterable[K], initial_capacity: int = 16) -> list[K]:
    """The iteration order of a fresh ``HashMap(initial_capacity)`` after putting ``keys``."""
    table: JavaHashMap[K, None] = JavaHashMap(initial_capacity)
    for k in keys:
        table[k] = None
    return list(table)


class JavaHashMap(MutableMapping[K, V]):
    """A mapping that remembers insertion order and iterates in Java ``HashMap`` order."""

    __slots__ = ("_bucket_counts", "_capacity", "_data", "_hash", "_order", "_spread_cache")

    def __init__(self, initial_capacity: int = 16, items: Iterable[tuple[K, V]] = (), *,
                 key_hash: Callable[[object], int] = java_hash) -> None:
        self._data: dict[K, V] = {}
        self._capacity = table_size_for(max(1, initial_capacity))
        self._hash = key_hash
        self._spread_cache: dict[K, int] = {}
        self._bucket_counts: dict[int, int] = {}
        self._order: list[K] | None = None
        for k, v in items:
            self[k] = v

    @property
    def capacity(self) -> int:
        """The size Java's bucket array would have now."""
        return self._capacity

    def _bucket(self, key: K) -> int:
        return self._spread_cache[key] & (self._capacity - 1)

    def _grow(self) -> None:
        self._capacity <<= 1
        counts: dict[int, int] = {}
        for k in self._data:
            b = self._bucket(k)
            counts[b] = counts.get(b, 0) + 1
        self._bucket_counts = counts

    def __setitem__(self, key: K, value: V) -> None:
        if key in self._data:
            self._data[key] = value
            return
        self._spread_cache[key] = _spread(self._hash(key))
        self._data[key] = value
        self._order = None
        b = self._bucket(key)
        count = self._bucket_counts.get(b, 0) + 1
        self._bucket_counts[b] = count
        if count > _TREEIFY_THRESHOLD and self._capacity < _MIN_TREEIFY_CAPACITY:
            self._grow()
        if len(self._data) > self._capacity * 3 // 4:
            self._grow()

    def __delitem__(self, key: K) -> None:
        del self._data[key]
        b = self._bucket(key)
        self._bucket_counts[b] -= 1
        del self._spread_cache[key]
        self._order = None

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        if self._order is None:
            self._order = sorted(self._data, key=self._bucket)
        return iter(list(self._order))

    def __repr__(self) -> str:
        return f"JavaHashMap({dict(self.items())!r})"
