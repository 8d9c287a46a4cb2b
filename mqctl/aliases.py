# Licensed under the Apache License, Version 2.0. See LICENSE.
"""mqadmin's command names as hidden aliases of mqctl's commands (``mqctl clusterList``)."""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["resolve_alias"]

Rewrite = Callable[[list[str]], list[str]]


def resolve_alias(name: str) -> tuple[tuple[str, ...], Rewrite] | None:
    """The mqctl command path an mqadmin command name stands for, and how its arguments are
    rewritten into mqctl's; ``None`` for a name that is not an alias."""
    return None
