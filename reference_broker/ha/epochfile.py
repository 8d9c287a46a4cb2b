# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The epoch file of a controller-mode broker (``storePathEpochFile``), in Java's format.

:class:`EpochFile` owns a :class:`wire.ha.autoswitch.EpochCache` and writes it with
:func:`wire.ha.encode_epoch_file` whenever it changed (:meth:`EpochFile.save`): the new text goes to
``<file>.tmp`` and is fsynced, the current file is kept as ``<file>.bak``, the new one is moved into
place and the directory fsynced, so that a crash leaves the old entries or the new, never a torn
file. Java reads the ``.bak`` when the main file is unreadable; so does :meth:`EpochFile.load`.

Better than Java on purpose: Java writes nothing at all when the cache becomes empty (a truncation
to before the first epoch), so the old entries come back at the next start; this file then holds
the empty list (``0``/``0``, which the Java reader accepts). The default path is inside the store
(``<storePathRootDir>/epochFileCheckpoint``), not Java's ``~/store/epochFileCheckpoint`` that every
broker of a machine would share (the 5.0.0 captures' MANIFEST tells what that sharing did).
"""

from __future__ import annotations

import logging
import os
import shutil
from pathlib import Path

from wire.errors import DecodeError
from wire.ha import decode_epoch_file, encode_epoch_file
from wire.ha.autoswitch import EpochCache

__all__ = ["EpochFile", "EpochFileError", "fsync_dir"]

log = logging.getLogger("reference_broker.ha")


class EpochFileError(ValueError):
    """Neither the epoch file nor its backup can be read; the message says where and why."""


def fsync_dir(path: Path) -> None:
    """fsync a directory (a rename or an unlink in it becomes durable)."""
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class EpochFile:
    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.cache = EpochCache()
        self._saved = self.cache.version

    def load(self) -> EpochCache:
        """Read the file (or its ``.bak``); a missing file is an empty cache."""
        errors = []
        for p in (self.path, self.path.with_name(self.path.name + ".bak")):
            if not p.exists():
                continue
            try:
                data = p.read_bytes()
                if not data.strip():
                    errors.append(f"{p}: empty")
                    continue
                self.cache.reset(decode_epoch_file(data))
                self._saved = self.cache.version
                if errors:
                    log.warning("epoch file: %s; read the backup %s", "; ".join(errors), p)
                return self.cache
            except (OSError, DecodeError) as exc:
                errors.append(f"{p}: {exc}")
        if errors:
            raise EpochFileError("; ".join(errors))
        return self.cache

    def save(self) -> bool:
        """Write the cache if it changed since the last save; True when it wrote."""
        if self.cache.version == self._saved:
            return False
        data = encode_epoch_file(self.cache.entries())
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_name(self.path.name + ".tmp")
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if self.path.exists():
            shutil.copyfile(self.path, self.path.with_name(self.path.name + ".bak"))
        os.replace(tmp, self.path)
        fsync_dir(self.path.parent)
        self._saved = self.cache.version
        return True
