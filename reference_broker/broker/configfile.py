# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker's JSON configuration files (``ConfigManager``): load with a ``.bak`` fallback,
persist through a temporary file, and write fastjson's pretty layout.

``ConfigManager.load`` reads the file; when it is missing, empty or does not decode, it reads
``<file>.bak`` instead (a missing backup is not an error: the manager keeps its defaults).
One case differs from Java on purpose: a file that does not decode with no backup beside it.
Java starts with an empty table there, and its next persist writes over the file, so the topics
or offsets in it are gone; here the load fails, naming the file and what is wrong where, and the
broker does not start until the file is repaired or moved away. Nothing is written meanwhile.
``ConfigManager.persist`` (``MixAll.string2File``) writes ``<file>.tmp``, copies the current file
to ``<file>.bak``, and renames the temporary file over the original, so a crash leaves either the
old or the new text plus a backup.

The files are written with fastjson's ``PrettyFormat`` (tab indentation, one property per line;
a map with numeric keys keeps its entries on one line and only its closing brace on a new line,
as fastjson's ``MapSerializer`` does). Java reads any layout, ours or its own.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wire import fastjson
from wire.errors import WireError

from ..files import string_to_file

__all__ = ["ConfigFile", "pretty_json"]

log = logging.getLogger("reference_broker.broker")


def pretty_json(compact: str | bytes) -> str:
    """Re-lay compact fastjson text out as fastjson's ``PrettyFormat`` writes it."""
    value = fastjson.loads(compact, what="config file")
    out: list[str] = []
    _pretty(value, 0, out)
    return "".join(out)


def _pretty(value: Any, depth: int, out: list[str]) -> None:
    if isinstance(value, Mapping):
        if not value:
            out.append("{}")
            return
        out.append("{")
        inner = "\n" + "\t" * (depth + 1)
        first = True
        for k, v in value.items():
            if not first:
                out.append(",")
            first = False
            if isinstance(k, str):
                # MapSerializer/JavaBeanSerializer: a new line before each string-keyed entry only
                out.append(inner)
            out.append(fastjson.dumps(k))
            out.append(":")
            _pretty(v, depth + 1, out)
        out.append("\n" + "\t" * depth + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
            return
        out.append("[")
        inner = "\n" + "\t" * (depth + 1)
        for i, v in enumerate(value):
            if i:
                out.append(",")
            out.append(inner)
            _pretty(v, depth + 1, out)
        out.append("\n" + "\t" * depth + "]")
    else:
        out.append(fastjson.dumps(value))


class ConfigFile(ABC):
    """One ``ConfigManager`` file: subclasses say how to encode and decode their table."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        #: why the last :meth:`load` failed (the file, the error and where), else None
        self.load_error: str | None = None

    @abstractmethod
    def encode(self) -> str:
        """The compact fastjson text of the table (also what the GET_ALL_* requests answer)."""

    @abstractmethod
    def decode(self, text: str) -> None:
        """Replace or merge the table from file text; raises on text that does not decode."""

    def load(self) -> bool:
        """``ConfigManager.load``: the file, else its ``.bak``; False (with :attr:`load_error`)
        if the file does not decode and no backup does, including when there is no backup."""
        self.load_error = None
        text = _read(self.path)
        if text:
            try:
                self.decode(text)
                log.info("load %s OK", self.path)
                return True
            except (WireError, ValueError, KeyError, TypeError) as exc:
                log.error("load %s failed, trying the backup: %s", self.path, exc)
                self.load_error = f"{self.path}: {exc}"
        return self._load_bak()

    def _load_bak(self) -> bool:
        bak = self.path.with_name(self.path.name + ".bak")
        text = _read(bak)
        if text:
            try:
                self.decode(text)
                log.info("load %s OK", bak)
                self.load_error = None
                return True
            except (WireError, ValueError, KeyError, TypeError) as exc:
                log.error("load %s failed: %s", bak, exc)
                self.load_error = f"{self.load_error or self.path}; {bak}: {exc}"
                return False
        if self.load_error is not None:
            # Java would start empty and write over the file at its next persist
            self.load_error += f"; no {bak.name} to fall back on"
            log.error("not starting from an empty table over %s: repair it or move it away", self.path)
            return False
        return True

    def persist(self) -> None:
        """``ConfigManager.persist``: write the pretty text through ``.tmp`` and keep a ``.bak``."""
        try:
            text = pretty_json(self.encode())
        except WireError as exc:  # our own encoder's output always parses; log rather than lose data
            log.error("persist %s: %s", self.path, exc)
            text = self.encode()
        try:
            string_to_file(text, self.path)
        except OSError as exc:
            log.error("persist file %s failed: %s", self.path, exc)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        log.error("cannot read %s: %s", path, exc)
        return None
