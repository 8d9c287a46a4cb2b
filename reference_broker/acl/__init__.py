# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Access control of the reference servers: RocketMQ 4.x plain ACL (``aclEnable=true``).

:mod:`.plain` reads the ``plain_acl.yml`` files and checks a request as Java's
``PlainAccessValidator`` does; :mod:`.addresses` parses the white-address patterns;
:class:`AclGuard` is what a server holds: the accounts, the watcher that reads the files again when
they change, and the refusal a request gets (SYSTEM_ERROR with Java's text). See docs/servers.md,
Security, for what each server checks.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from wire import RemotingCommand, RequestCode, ResponseCode, SerializeType

from ..periodic import log_failure
from .addresses import AddressPattern, PatternError, parse_pattern
from .plain import ADMIN_CODES, Account, AclConfigError, AclDenied, PlainAcl

__all__ = [
    "ADMIN_CODES",
    "BROKER_ADMIN_CODES",
    "NAMESRV_CHECKED_CODES",
    "Account",
    "AclConfigError",
    "AclDenied",
    "AclGuard",
    "AddressPattern",
    "PatternError",
    "PlainAcl",
    "parse_pattern",
]

log = logging.getLogger("reference_broker.acl")

_R = RequestCode
#: the broker's admin codes: Java's, and (stricter than Java, which lets any account with a valid
#: signature do these) the requests that change the ACL or list its secret keys
BROKER_ADMIN_CODES = ADMIN_CODES | {
    int(_R.UPDATE_AND_CREATE_ACL_CONFIG), int(_R.DELETE_ACL_CONFIG), int(_R.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG),
    int(_R.GET_BROKER_CLUSTER_ACL_CONFIG)}
#: what the name server checks (a 4.9.8 name server checks nothing): the requests that change its
#: state other than a broker's registration, each for an admin account. Registrations and reads
#: stay open, since Java brokers register without credentials.
NAMESRV_CHECKED_CODES = frozenset({
    int(_R.PUT_KV_CONFIG), int(_R.DELETE_KV_CONFIG), int(_R.WIPE_WRITE_PERM_OF_BROKER),
    int(_R.ADD_WRITE_PERM_OF_BROKER), int(_R.DELETE_TOPIC_IN_NAMESRV), int(_R.UPDATE_NAMESRV_CONFIG)})


class AclGuard:
    """A server's ACL: check requests, and read the files again when they change.

    ``checked`` limits the request codes that are checked at all (None: every code, as the Java
    broker); ``admin_codes`` are those that need an admin account."""

    def __init__(self, home: str | Path | None, *, name: str, admin_codes: Iterable[int] = ADMIN_CODES,
                 checked: Iterable[int] | None = None) -> None:
        self.name = name
        self.acl = PlainAcl(home, admin_codes=admin_codes)
        self.checked = None if checked is None else frozenset(checked)
        self.refused = 0
        self._watcher: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Read the files (raises :class:`AclConfigError`) and start watching them."""
        if self.acl.home is None:
            log.warning("%s: aclEnable=true but rocketmqHome is not set: there is no ACL file, so every "
                        "checked request is refused", self.name)
        self.acl.ensure_default_file()
        self.acl.load()
        log.info("%s: ACL on: %d accounts, %d global white addresses, files %s", self.name,
                 len(self.acl.accounts), len(self.acl.global_white), [str(p) for p in self.acl.files])
        self._watcher = asyncio.get_running_loop().create_task(self._watch())

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._watcher
            self._watcher = None

    async def _watch(self) -> None:
        # AclFileWatchService: the files are looked at every few seconds
        while True:
            await asyncio.sleep(self.acl.watch_interval)
            try:
                self.acl.reload_if_changed()
            except Exception as exc:  # the watcher never stops the server
                # a file that cannot be read is one line (a bad one is the loader's AclConfigError)
                log_failure(log, f"{self.name}: reading the ACL files", exc, (OSError,))

    def refusal(self, peer_host: str, request: RemotingCommand,
                decode_heartbeat: Callable[[RemotingCommand], Any] | None = None) -> RemotingCommand | None:
        """None when ``request`` may pass; else Java's answer: SYSTEM_ERROR with the
        ``AclException`` and its source line as remark, in the server's serialize type (JSON),
        as ``NettyRemotingAbstract`` builds it outside the normal path."""
        if self.checked is not None and request.code not in self.checked:
            return None
        try:
            self.acl.check(request, peer_host, decode_heartbeat)
        except AclDenied as denied:
            self.refused += 1
            log.warning("%s: refused %s from %s: %s", self.name, request.code_name, peer_host, denied.message)
            return request.response(ResponseCode.SYSTEM_ERROR, denied.remark(),
                                    serialize_type=SerializeType.JSON)
        return None
