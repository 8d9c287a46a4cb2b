# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The controller's append-only event log: one JSON object per line, fsynced before it counts.

Java 5.0.0 keeps its events in a DLedger log and replays them into ``ReplicasInfoManager`` at start;
this is the same idea for one controller node: :meth:`EventLog.append` writes the events of one
request and fsyncs them before the request's answer goes out, :meth:`EventLog.replay` reads them
back in order. A last line without its newline is a write the process did not finish (a crash): it
is cut off with a warning. Any other line that does not decode stops the start with its
``file:line``, and the file is left as it is.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..runtime import ServiceError

__all__ = ["EventLog", "EventLogError"]

log = logging.getLogger("reference_broker.controller")


class EventLogError(ServiceError):
    """The event log cannot be read; the message says where."""


class EventLog:
    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.count = 0
        self._fd: int | None = None

    def replay(self) -> Iterator[dict[str, Any]]:
        """The events on disk, in order (nothing for a memory-only log or a missing file)."""
        if self.path is None or not self.path.exists():
            return
        data = self.path.read_bytes()
        good = 0
        lines = data.split(b"\n")
        for number, raw in enumerate(lines, 1):
            last = number == len(lines)
            if last:
                if raw:
                    log.warning("%s:%d: an unfinished last event (%d bytes) is dropped", self.path, number,
                                len(raw))
                    with open(self.path, "r+b") as f:
                        f.truncate(good)
                        os.fsync(f.fileno())
                break
            good += len(raw) + 1
            if not raw.strip():
                continue
            try:
                event = json.loads(raw)
            except ValueError as exc:
                raise EventLogError(f"{self.path}:{number}: not a JSON event ({exc})") from None
            if not isinstance(event, dict) or not isinstance(event.get("type"), str):
                raise EventLogError(f"{self.path}:{number}: an event needs a \"type\"")
            self.count += 1
            yield event

    def append(self, events: Iterable[dict[str, Any]]) -> None:
        text = b"".join(json.dumps(e, sort_keys=True, separators=(",", ":")).encode() + b"\n" for e in events)
        if not text or self.path is None:
            return
        if self._fd is None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        view = memoryview(text)
        while view:
            n = os.write(self._fd, view)
            view = view[n:]
        os.fsync(self._fd)
        self.count += text.count(b"\n")

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
