# Licensed under the Apache License, Version 2.0. See LICENSE.
"""mqctl: the admin CLI. Commands are thin: parse arguments, call one library function, render."""

from __future__ import annotations

__version__ = "0.1.0"
