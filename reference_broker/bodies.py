# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Request bodies, decoded off the event loop when they are large.

A handler decodes its request's body itself (``HeartbeatData.decode``, the batch of a send, a
REGISTER_BROKER topic table). The cost follows the size, and a client chooses the size: 16 MiB of
JSON costs seconds, and on the event loop those seconds are taken from every other connection.
So each server declares, per request code, the function that decodes that request's body
(:data:`BodyDecoders`), and passes :func:`preparer` of that table to its listener: for a body of
``wire.aio.OFFLOAD_BYTES`` or more, the connection runs it in a worker thread before the handler
(:mod:`wire.aio`), which holds the result while the handler runs; the handler then asks
:func:`request_body` with the same function and gets that result, or the error it raised, as if it
had decoded the body itself. A small body is decoded in place, on the loop, as before.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from wire import RemotingCommand
from wire.aio import Prepare, RemotingConnection

__all__ = ["BodyDecoders", "preparer", "request_body", "resumed"]

T = TypeVar("T")

#: request code -> the function its handler decodes the body with
BodyDecoders = Mapping[int, Callable[[RemotingCommand], Any]]

class _Decoded:
    __slots__ = ("request", "decode", "value", "error")

    def __init__(self, request: RemotingCommand, decode: Callable[[RemotingCommand], Any], value: Any,
                 error: Exception | None) -> None:
        self.request, self.decode, self.value, self.error = request, decode, value, error


def preparer(decoders: BodyDecoders) -> Prepare:
    """The ``prepare`` hook for :class:`wire.aio.RemotingServer`: decode the body of a large request
    with its code's function (in the worker thread), for :func:`request_body`."""

    def prepare(conn: RemotingConnection, request: RemotingCommand) -> _Decoded | None:
        decode = decoders.get(request.code)
        if decode is None:
            return None
        try:
            return _Decoded(request, decode, decode(request), None)
        except Exception as exc:  # the handler raises it, as it would have raised it itself
            return _Decoded(request, decode, None, exc)

    return prepare


def request_body(conn: object, request: RemotingCommand, decode: Callable[[RemotingCommand], T]) -> T:
    """``decode(request)``, or what the worker thread got from it for this very request."""
    ready = getattr(conn, "prepared", None)
    if isinstance(ready, _Decoded) and ready.request is request and ready.decode is decode:
        if ready.error is not None:
            raise ready.error
        value: T = ready.value
        return value
    return decode(request)


@contextlib.contextmanager
def resumed(conn: object, prepared: object) -> Iterator[None]:
    """For a handler that starts after its request's dispatch (queued behind other work):
    ``prepared`` is what ``conn.prepared`` held during that dispatch, and while this block runs
    the connection holds it again, so :func:`request_body` gets the worker thread's result
    instead of decoding the body a second time, on the loop."""
    if prepared is None or not isinstance(conn, RemotingConnection):
        yield
        return
    saved, conn.prepared = conn.prepared, prepared
    try:
        yield
    finally:
        conn.prepared = saved
