# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Replaying captured Java answers to the admin library, without sockets.

:func:`exchanges` gives the answered requests of a capture as the conformance replayer reads them
(:func:`conformance.replay.ingest.load_capture`: wire.capture's ingest, whose answer pairing is
:mod:`wire.pairing`).
:class:`ReplayClient` is an :class:`~wire.admin.client.AdminClient` whose :meth:`invoke` answers
each request with the response the official Java server gave to the matching captured request
(same server address and request code, and the same values for the ext fields that identify
it, e.g. the topic of a route request), and records what the library sent. A request the capture
has no answer for fails as an unreachable server would.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conformance.replay.ingest import load_capture
from wire import RemotingCommand
from wire.admin.client import AdminClient
from wire.aio import ConnectError

#: the ext fields that tell two requests of one code apart
IDENTITY: dict[int, tuple[str, ...]] = {
    105: ("topic",), 202: ("topic",), 300: ("topic",), 208: ("consumerGroup",), 203: ("consumerGroup",),
    11: ("topic", "queueId", "queueOffset"), 30: ("topic", "queueId"), 31: ("topic", "queueId"),
    12: ("topic", "key"), 33: ("offset",), 101: ("namespace", "key"),
}

#: what a client library adds to every request and ours does not (ACL hook, request-type tag)
CLIENT_NOISE = frozenset({"AccessKey", "Signature", "ReqT"})


@dataclass
class Exchange:
    server: str
    request: RemotingCommand
    response: RemotingCommand
    time: float
    used: bool = False


def exchanges(pcap: Path) -> list[Exchange]:
    """Every answered request of the capture (background connections included), in the order the
    requests were sent."""
    capture = load_capture(pcap)
    out = [Exchange(conn.server, step.command, step.recorded, step.ts)
           for conn, step in capture.steps() if step.command is not None and step.recorded is not None]
    return out


def request_ext(cmd: RemotingCommand) -> dict[str, str]:
    return {k: v for k, v in cmd.ext_fields.items() if k not in CLIENT_NOISE}


@dataclass
class Sent:
    addr: str
    command: RemotingCommand


class ReplayClient(AdminClient):
    """An admin client answered from a capture (see the module docstring)."""

    def __init__(self, pcap: Path, namesrv: str = "127.0.0.1:9876", **kw: Any) -> None:
        super().__init__([namesrv], **kw)
        self.exchanges = exchanges(pcap)
        self.sent: list[Sent] = []
        #: answers (ext fields of a SUCCESS) for request codes mqctl sends where mqadmin did not
        self.extra: dict[int, dict[str, str]] = {}

    def find(self, addr: str, code: int, ext: Mapping[str, str]) -> Exchange | None:
        keys = IDENTITY.get(code, ())
        fits = [e for e in self.exchanges if e.server == addr and e.request.code == code
                and all(e.request.ext_fields.get(k) == ext.get(k) for k in keys)]
        fresh = [e for e in fits if not e.used]
        return (fresh or fits or [None])[0]

    async def invoke(self, addr: str, code: int, ext: Mapping[str, Any] | None = None,
                     body: bytes | None = None, *, timeout: float | None = None) -> RemotingCommand:
        cmd = self.command(code, ext, body)
        self.sent.append(Sent(addr, cmd))
        ex = self.find(addr, code, cmd.ext_fields)
        if ex is None and code in self.extra:
            return cmd.response(0, ext_fields=self.extra[code])
        if ex is None:
            raise ConnectError(f"cannot connect to {addr}: the capture has no answer to {cmd.code_name}")
        ex.used = True
        return ex.response

    def sent_codes(self) -> list[tuple[str, int]]:
        return [(s.addr, s.command.code) for s in self.sent]


@dataclass
class Captured:
    """A capture's exchanges with helpers to pick requests and responses by code."""

    items: list[Exchange] = field(default_factory=list)

    def requests(self, code: int) -> list[RemotingCommand]:
        return [e.request for e in self.items if e.request.code == code]

    def response(self, code: int, server: str | None = None) -> RemotingCommand:
        for e in self.items:
            if e.request.code == code and (server is None or e.server == server):
                return e.response
        raise LookupError(f"no answered request {code} in the capture")
