# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The admin client: one connection per server address, name-server failover, typed calls.

Theory of operation
-------------------
An :class:`AdminClient` owns at most one :class:`wire.aio.RemotingConnection` per ``host:port``
and opens it on first use; concurrent callers of the same address share the connection (the
responses are matched by ``opaque``, so many requests can be in flight on it at once, as the Java
``NettyRemotingClient`` does with its channel table).

Requests for the name server go through :meth:`AdminClient.namesrv`: the addresses are tried in
the order given, starting with the last one that answered, and a connection failure, a closed
connection or a timeout moves on to the next, as ``NettyRemotingClient.getAndCreateNameserverChannel``
does. An answer, even an error code, stops the search: the name server is up and said no.

Every request carries the serialize type chosen for the client (``--serialize``); the servers
answer in the type of the request. A client given credentials signs every request it sends
(plain ACL, :mod:`wire.acl`), as Java's ``AclClientRPCHook`` does. Each request waits at most
``timeout`` seconds, and so does
opening a connection.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeAlias, TypeVar

from ..acl import Credentials, sign_request
from ..aio import ConnectError, ConnectionPool, RemotingConnection, RemotingIOError, split_addr
from ..codes import LanguageCode, ResponseCode, SerializeType
from ..errors import WireError
from ..remoting import DEFAULT_VERSION, RemotingCommand
from .errors import AdminError, ServerError

if TYPE_CHECKING:
    from ..headers import CustomHeader

__all__ = ["AdminClient", "Ext", "gather_map", "split_addr"]

T = TypeVar("T")

#: a request's ext fields: a typed header of :mod:`wire.headers` (what the library sends), or
#: plain pairs (for requests no header class describes, or deliberately malformed ones)
Ext: TypeAlias = "CustomHeader | Mapping[str, Any] | None"

_OK = frozenset({int(ResponseCode.SUCCESS)})


class AdminClient:
    """An asyncio admin client (use ``async with``); see the module docstring."""

    def __init__(self, namesrv: Sequence[str] = ("127.0.0.1:9876",), *, timeout: float = 3.0,
                 serialize: str | SerializeType = SerializeType.JSON,
                 language: LanguageCode = LanguageCode.JAVA, version: int = DEFAULT_VERSION,
                 trace: Callable[[str], None] | None = None, credentials: Credentials | None = None) -> None:
        #: called with one line per request sent and per answer received (``mqctl -v``)
        self.trace = trace
        self.namesrv_addrs = list(namesrv)
        self.timeout = timeout
        self.serialize_type = (serialize if isinstance(serialize, SerializeType)
                               else SerializeType[str(serialize).upper()])
        self.language = language
        self.version = version
        #: when set, every request is signed (plain ACL: ``AccessKey``/``Signature``, :mod:`wire.acl`)
        self.credentials = credentials
        self._pool = ConnectionPool(timeout=timeout, name="mqctl")
        self._preferred = 0
        #: the name server that gave the last answer
        self.last_namesrv: str | None = None

    async def __aenter__(self) -> AdminClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self._pool.close()

    # ------------------------------------------------------------------ connections

    async def connection(self, addr: str) -> RemotingConnection:
        """The open connection to ``addr``, opening it if needed."""
        return await self._pool.get(addr)

    # ------------------------------------------------------------------ requests

    def command(self, code: int, ext: Ext = None, body: bytes | None = None) -> RemotingCommand:
        """A request in this client's serialize type, language and version."""
        if ext is not None and not isinstance(ext, Mapping):
            ext = ext.to_ext()
        cmd = RemotingCommand.request(code, ext, body, language=self.language, version=self.version,
                                      serialize_type=self.serialize_type)
        return cmd if self.credentials is None else sign_request(cmd, self.credentials)

    async def invoke(self, addr: str, code: int, ext: Ext = None,
                     body: bytes | None = None, *, timeout: float | None = None) -> RemotingCommand:
        """Send one request to ``addr`` and return the response, whatever its code."""
        cmd = self.command(code, ext, body)
        if self.trace is None:
            conn = await self.connection(addr)
            return await conn.request(cmd, self.timeout if timeout is None else timeout)
        started = time.monotonic()
        self.trace(f"-> {addr} {cmd.code_name}({code}) {dict(cmd.ext_fields)}"
                   + (f" body {len(cmd.body)}B" if cmd.body else ""))
        try:
            conn = await self.connection(addr)
            resp = await conn.request(cmd, self.timeout if timeout is None else timeout)
        except WireError as err:
            self.trace(f"<- {addr} failed after {(time.monotonic() - started) * 1000:.1f} ms: {err}")
            raise
        self.trace(f"<- {addr} {resp.code_name}({resp.code}) {(time.monotonic() - started) * 1000:.1f} ms"
                   + (f" body {len(resp.body)}B" if resp.body else "")
                   + (f" remark {resp.remark!r}" if resp.remark else ""))
        return resp

    async def call(self, addr: str, code: int, ext: Ext = None,
                   body: bytes | None = None, *, ok: Collection[int] = _OK,
                   timeout: float | None = None) -> RemotingCommand:
        """:meth:`invoke`, raising :class:`ServerError` unless the response code is in ``ok``."""
        resp = await self.invoke(addr, code, ext, body, timeout=timeout)
        if resp.code not in ok:
            raise ServerError(resp.code, resp.remark, addr=addr, request_code=code)
        return resp

    async def namesrv(self, code: int, ext: Ext = None,
                      body: bytes | None = None, *, ok: Collection[int] = _OK) -> RemotingCommand:
        """Send a request to a name server, failing over across the listed addresses."""
        addrs = self.namesrv_addrs
        if not addrs:
            raise ConnectError("no name server address given")
        last: RemotingIOError | None = None
        for i in range(len(addrs)):
            index = (self._preferred + i) % len(addrs)
            try:
                resp = await self.invoke(addrs[index], code, ext, body)
            except RemotingIOError as err:
                last = err
                continue
            self._preferred = index
            self.last_namesrv = addrs[index]
            if resp.code not in ok:
                raise ServerError(resp.code, resp.remark, addr=addrs[index], request_code=code)
            return resp
        assert last is not None
        if len(addrs) > 1:
            raise type(last)(f"no name server answered ({', '.join(addrs)}); last error: {last}")
        raise last

    async def each_namesrv(self, code: int, ext: Ext = None,
                           body: bytes | None = None) -> list[tuple[str, RemotingCommand | WireError]]:
        """Send the same request to every listed name server at once (writes that must reach
        all of them, like mqadmin's loops over ``getNameServerAddressList``). Each answer or
        failure is returned in list order; nothing is raised."""

        async def one(addr: str) -> RemotingCommand | WireError:
            try:
                return await self.invoke(addr, code, ext, body)
            except WireError as err:
                return err

        results = await asyncio.gather(*(one(a) for a in self.namesrv_addrs))
        return list(zip(self.namesrv_addrs, results, strict=True))


async def gather_map(items: Sequence[T], fn: Any, *, limit: int = 32) -> list[Any]:
    """``fn(item)`` for every item, at most ``limit`` at a time; results (or the exception each
    raised) in item order."""
    sem = asyncio.Semaphore(limit)

    async def one(item: T) -> Any:
        async with sem:
            try:
                return await fn(item)
            except (WireError, AdminError) as err:  # collected: the caller decides per item
                return err

    return list(await asyncio.gather(*(one(i) for i in items)))
