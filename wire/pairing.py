# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Requests and their responses, paired by opaque: the rule, written once. Sans-IO.

Theory of operation
-------------------
Flag bit 0 (:data:`wire.FLAG_RESPONSE`) marks a response, bit 1 (:data:`wire.FLAG_ONEWAY`) a
oneway request (``RemotingCommand.markResponseType`` / ``markOnewayRPC``). Requests and responses
are told apart by these bits only, never by port: brokers send requests to clients too
(NOTIFY_CONSUMER_IDS_CHANGED, CHECK_TRANSACTION_STATE).

* A request that is not oneway waits for its response under its ``opaque``, on the side of the
  connection that sent it (Java's ``NettyRemotingAbstract.responseTable``). Responses may come in
  any order, so the waiting requests are a dict, not a FIFO; a second request with the same opaque
  takes the place of the first.
* A response answers the request waiting under its opaque on the *other* side (it travelled the
  other way) and takes it out; a response nobody waits for answers nothing (Java logs and drops it).
* A oneway request never waits, and is never answered: a server sends nothing back for it.

:class:`Waiting` is one side's table (the requests a client sent, in :mod:`wire.aio`);
:class:`Pairing` holds both sides of one connection (a captured connection in
:mod:`wire.capture`, a replayed one); :func:`pair_by_opaque` pairs a recorded sequence of commands
(the conformance replayer's "which answer belongs to which request").
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

from .remoting import FLAG_ONEWAY, FLAG_RESPONSE, RemotingCommand

__all__ = ["Pairing", "Waiting", "expects_response", "is_oneway", "is_response", "pair_by_opaque"]

T = TypeVar("T")


def is_response(flag: int) -> bool:
    """Flag bit 0: the command is a response."""
    return bool(flag & FLAG_RESPONSE)


def is_oneway(flag: int) -> bool:
    """A request with flag bit 1: nobody answers it."""
    return flag & (FLAG_RESPONSE | FLAG_ONEWAY) == FLAG_ONEWAY


def expects_response(flag: int) -> bool:
    """A request that is not oneway: a response is due (and a server must send one)."""
    return not flag & (FLAG_RESPONSE | FLAG_ONEWAY)


class Waiting(dict[int, T]):
    """The requests one side sent that wait for their response, keyed by opaque (a dict, so that
    hot loops may use its methods directly; :class:`Pairing` and :mod:`wire.aio` go through
    :meth:`expect` and :meth:`answer`)."""

    __slots__ = ()

    def expect(self, flag: int, opaque: int, item: T) -> bool:
        """Note a request sent with ``flag``/``opaque``: it waits unless it is oneway (or not a
        request at all). Returns whether it waits."""
        if flag & (FLAG_RESPONSE | FLAG_ONEWAY):
            return False
        self[opaque] = item
        return True

    def answer(self, opaque: int) -> T | None:
        """The request a response with ``opaque`` answers, taken out; ``None`` when none waits."""
        return self.pop(opaque, None)


class Pairing(Generic[T]):
    """Both directions of one connection (0 and 1): commands go in as they were seen, and each
    response comes out with the request it answers."""

    __slots__ = ("waiting",)

    def __init__(self) -> None:
        #: the requests each direction sent that wait for their response
        self.waiting: tuple[Waiting[T], Waiting[T]] = (Waiting(), Waiting())

    def response(self, direction: int, opaque: int) -> T | None:
        """A response seen travelling in ``direction``: the request it answers (sent the other
        way), taken out, or ``None``."""
        return self.waiting[1 - direction].pop(opaque, None)

    def request(self, direction: int, flag: int, opaque: int, item: T) -> None:
        """A request seen travelling in ``direction``: it waits unless it is oneway."""
        self.waiting[direction].expect(flag, opaque, item)

    def see(self, direction: int, flag: int, opaque: int, item: T) -> T | None:
        """Any command seen in ``direction``: for a response, the request it answers (or ``None``);
        a request is noted (:meth:`request`) and gives ``None``."""
        if flag & FLAG_RESPONSE:
            return self.waiting[1 - direction].pop(opaque, None)
        self.waiting[direction].expect(flag, opaque, item)
        return None

    @property
    def unanswered(self) -> int:
        """Requests still waiting, both directions."""
        return len(self.waiting[0]) + len(self.waiting[1])


def pair_by_opaque(commands: Iterable[tuple[int, RemotingCommand]]) -> Iterator[tuple[RemotingCommand,
                                                                                        RemotingCommand]]:
    """``(request, response)`` for every answered request among ``(direction, command)`` pairs of
    one connection, in the order seen, each as soon as its response comes. Oneway requests,
    unanswered requests and responses that answer nothing yield nothing."""
    pairing: Pairing[RemotingCommand] = Pairing()
    for direction, cmd in commands:
        req = pairing.see(direction, cmd.flag, cmd.opaque, cmd)
        if req is not None:
            yield req, cmd
