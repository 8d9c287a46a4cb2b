# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Writing the servers' own files as RocketMQ does (``MixAll.string2File``)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

__all__ = ["string_to_file"]


def string_to_file(text: str, path: Path) -> None:
    """``MixAll.string2File``: write ``<path>.tmp``, keep the current file (if any) as
    ``<path>.bak``, then move the new text into place, so that a crash leaves the old text or
    the new, and a backup. Like Java's ``FileWriter``, what UTF-8 cannot hold (a lone surrogate
    from a JSON escape) is written as ``?``. Raises OSError."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8", errors="replace")
    try:
        shutil.copyfile(path, path.with_name(path.name + ".bak"))
    except FileNotFoundError:
        pass
    os.replace(tmp, path)
