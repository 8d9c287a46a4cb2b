# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What a case gets: the target's addresses, connections that are closed for it, unique names,
clean-ups, and the checks that grade it.

Every check raises :class:`~conformance.model.CaseFailed` with a message that says what was
expected and what came; the runner grades that by the case's level. A request whose code the case
is about (``Case.codes``) and that the target answers with REQUEST_CODE_NOT_SUPPORTED raises
:class:`~conformance.model.Unimplemented` instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from wire import LanguageCode, RemotingCommand, ResponseCode, SerializeType, WireError
from wire.aio import ConnectionPool, RemotingConnection, connect, split_addr
from wire.remoting import DEFAULT_VERSION

from .model import Case, CaseFailed, NotApplicable, Unimplemented
from .peer import RawPeer
from .target import Target

__all__ = ["AtEnd", "Ctx", "code_name"]

#: a clean-up run once the whole run is over, given a connection pool of its own
AtEnd = Callable[[ConnectionPool], Awaitable[Any]]


def code_name(code: int) -> str:
    try:
        return f"{ResponseCode(code).name}({code})"
    except ValueError:
        return str(code)


class Ctx:
    """The context of one case run against one target."""

    def __init__(self, target: Target, case: Case, run_id: str, *, fast: bool = False,
                 request_timeout: float = 5.0, at_end: list[AtEnd] | None = None) -> None:
        self.target = target
        self.case = case
        self.run_id = run_id
        self.fast = fast
        self.request_timeout = request_timeout
        self.observations: list[str] = []
        self._conns: list[RemotingConnection] = []
        self._shared: dict[str, RemotingConnection] = {}
        self._raw: list[RawPeer] = []
        self._cleanups: list[Callable[[], Awaitable[Any]]] = []
        self._at_end = at_end if at_end is not None else []
        self._names = itertools.count(1)

    # ------------------------------------------------------------------ addresses and names

    @property
    def profile(self) -> str:
        return self.target.profile or "4.9"

    def addr(self, role: str) -> str:
        addr = self.target.addr(role)
        if addr is None:
            raise NotApplicable(f"the target has no {role} address")
        return addr

    def unique(self, kind: str = "t") -> str:
        """A name no other case or run uses: topics, groups, keys, fake brokers."""
        slug = self.case.id.lower().replace("-", "_")
        return f"conf_{self.run_id}_{slug}_{kind}{next(self._names)}"

    # ------------------------------------------------------------------ connections

    async def connect(self, role: str, *, handler: Any = None) -> RemotingConnection:
        """A new connection to ``role``, closed when the case ends."""
        host, port = split_addr(self.addr(role))
        conn = await connect(host, port, timeout=self.request_timeout, handler=handler, name="conformance")
        self._conns.append(conn)
        return conn

    async def raw(self, role: str | None = None, *, addr: str | None = None) -> RawPeer:
        """A new raw connection (:class:`~conformance.peer.RawPeer`), closed when the case ends."""
        peer = await RawPeer.open(addr or self.addr(role or "namesrv"), self.request_timeout)
        self._raw.append(peer)
        return peer

    async def shared(self, role: str) -> RemotingConnection:
        """The case's one connection to ``role`` for ordinary requests."""
        conn = self._shared.get(role)
        if conn is None or conn.is_closing:
            conn = self._shared[role] = await self.connect(role)
        return conn

    def command(self, code: int, ext: Mapping[str, Any] | None = None, body: bytes | None = None, *,
                serialize: SerializeType = SerializeType.JSON, version: int = DEFAULT_VERSION,
                language: LanguageCode | str = LanguageCode.JAVA, oneway: bool = False) -> RemotingCommand:
        return RemotingCommand.request(code, ext, body, serialize_type=serialize, version=version,
                                       language=language, oneway=oneway)

    async def request(self, role: str, code: int | RemotingCommand, ext: Mapping[str, Any] | None = None,
                      body: bytes | None = None, *, timeout: float | None = None,
                      conn: RemotingConnection | None = None, **kw: Any) -> RemotingCommand:
        """Send a request to ``role`` (on the shared connection unless ``conn`` is given) and return
        the answer, whatever its code."""
        cmd = code if isinstance(code, RemotingCommand) else self.command(code, ext, body, **kw)
        c = conn if conn is not None else await self.shared(role)
        resp = await c.request(cmd, self.request_timeout if timeout is None else timeout)
        if resp.code == ResponseCode.REQUEST_CODE_NOT_SUPPORTED and cmd.code in self.case.codes:
            raise Unimplemented(f"{role} answered REQUEST_CODE_NOT_SUPPORTED to request {cmd.code}"
                                + (f": {resp.remark.strip()}" if resp.remark else ""))
        return resp

    async def call(self, role: str, code: int, ext: Mapping[str, Any] | None = None,
                   body: bytes | None = None,
                   *, what: str = "", ok: tuple[int, ...] = (ResponseCode.SUCCESS,),
                   **kw: Any) -> RemotingCommand:
        """:meth:`request` that fails the case unless the answer's code is in ``ok``."""
        resp = await self.request(role, code, ext, body, **kw)
        if resp.code not in ok:
            raise CaseFailed(f"{what or f'request {code}'}: {role} answered {code_name(resp.code)}"
                             + (f" ({resp.remark.strip()})" if resp.remark else "")
                             + f", expected {' or '.join(code_name(c) for c in ok)}")
        return resp

    async def oneway(self, role: str, code: int, ext: Mapping[str, Any] | None = None,
                     body: bytes | None = None, *, conn: RemotingConnection | None = None, **kw: Any) -> None:
        c = conn if conn is not None else await self.shared(role)
        c.oneway(self.command(code, ext, body, **kw))

    # ------------------------------------------------------------------ waiting

    async def poll(self, probe: Callable[[], Awaitable[Any]], *, timeout: float, interval: float = 0.1,
                   what: str) -> Any:
        """Call ``probe`` until it returns something true; fail with ``what`` after ``timeout`` s."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        last: Any = None
        while True:
            last = await probe()
            if last:
                return last
            if loop.time() >= end:
                raise CaseFailed(f"{what} (waited {timeout:g} s)")
            await asyncio.sleep(interval)

    # ------------------------------------------------------------------ grading

    def note(self, text: str) -> None:
        """Record an observation (shown in reports; the value of INFO cases)."""
        self.observations.append(text)

    def fail(self, message: str) -> None:
        raise CaseFailed(message)

    def check(self, condition: object, message: str) -> None:
        if not condition:
            raise CaseFailed(message)

    def equal(self, actual: object, expected: object, what: str) -> None:
        if actual != expected:
            raise CaseFailed(f"{what}: expected {expected!r}, got {actual!r}")

    def code(self, resp: RemotingCommand, expected: int, what: str) -> None:
        if resp.code != expected:
            raise CaseFailed(f"{what}: expected {code_name(expected)}, got {code_name(resp.code)}"
                             + (f" ({resp.remark.strip()})" if resp.remark else ""))

    def not_applicable(self, reason: str) -> None:
        raise NotApplicable(reason)

    # ------------------------------------------------------------------ clean-up

    def cleanup(self, fn: Callable[[], Awaitable[Any]]) -> None:
        """Run ``fn`` when the case ends (last registered, first run), whatever the outcome."""
        self._cleanups.append(fn)

    def cleanup_after_run(self, fn: AtEnd) -> None:
        """Run ``fn`` once the whole run is over. Topics are deleted then, not when their case
        ends: a Java 4.9.8 broker that deletes a topic while its messages are still being
        dispatched to the ConsumeQueue writes into an unmapped file and dies (SIGSEGV)."""
        self._at_end.append(fn)

    async def close(self, timeout: float = 10.0) -> list[str]:
        """Run the clean-ups and close every connection; the clean-up errors, as text."""
        errors: list[str] = []
        for fn in reversed(self._cleanups):
            try:
                await asyncio.wait_for(fn(), timeout)
            except Exception as exc:  # a clean-up never changes the verdict
                errors.append(f"clean-up failed: {type(exc).__name__}: {exc}")
        self._cleanups.clear()
        for conn in self._conns:
            with contextlib.suppress(WireError, OSError):
                await conn.aclose()
        for peer in self._raw:
            await peer.close()
        return errors
