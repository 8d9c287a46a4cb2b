# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Message properties as the 4.9.8 broker rewrites them before storing.

Java keeps a message's properties in a ``java.util.HashMap`` and writes the stored properties
string with ``MessageDecoder.messageProperties2String``, i.e. in the map's iteration order, which
depends on the keys' hashes and on the order of the puts (and on the table size they drove it to).
The broker changes the map on the way in, e.g. for a send (``SendMessageProcessor.asyncSendMessage``):
parse the producer's string, put ``CLUSTER``, remove ``WAIT``, write the string. To store the
bytes Java stores we replay the same puts: :func:`java_properties_text` takes the sequence of keys
in put order (a key removed and put again appears once, at its second put; a key removed for good
appears where it was first put, since it still grew the table) and the final values, and writes
the present keys in :func:`wire.java.java_hash_order`.

Orders are cached by key sequence: producers send the same few layouts over and over.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import lru_cache

from wire.java import java_hash_order
from wire.message import MessageConst

__all__ = ["java_properties_text", "send_properties_text"]

_CLUSTER = MessageConst.PROPERTY_CLUSTER
_WAIT = MessageConst.PROPERTY_WAIT_STORE_MSG_OK


@lru_cache(maxsize=4096)
def _order(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(java_hash_order(keys))


def java_properties_text(put_order: tuple[str, ...], values: Mapping[str, str]) -> str:
    """The properties string of a HashMap built by putting ``put_order`` (see the module notes);
    keys of ``put_order`` missing from ``values`` were removed and are left out."""
    return "\x02".join(k + "\x01" + values[k] for k in _order(put_order) if k in values)


@lru_cache(maxsize=4096)
def _send_order(keys: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(k for k in java_hash_order(keys) if k != _WAIT)


def send_properties_text(values: dict[str, str], cluster: str) -> str:
    """The stored properties of a plain send (``asyncSendMessage``): the producer's parsed
    ``values`` (in their string's order) with ``CLUSTER`` put and ``WAIT`` removed, i.e.
    :func:`java_properties_text` of that put sequence, with the order cached by the producer's
    key layout. ``values`` gets ``CLUSTER``; ``WAIT`` stays in it."""
    values[_CLUSTER] = cluster
    return "\x02".join([k + "\x01" + values[k] for k in _send_order(tuple(values))])
