# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The one output object: data to stdout, diagnostics to stderr, in table, json or yaml form.

Commands never create a ``Console``; they get an :class:`Output` from the settings object.
JSON output is plain standard JSON with no styling, whatever the server sent.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from rich.console import Console
from rich.table import Table

FORMATS = ("table", "json", "yaml")


def _plain(value: Any) -> Any:
    """Make a value JSON/YAML friendly (enums by name, bytes as hex, mappings as dicts)."""
    from enum import Enum

    if isinstance(value, Enum):
        return value.name
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [_plain(v) for v in value]
    if isinstance(value, (bytes, bytearray)):
        return value.hex()
    if hasattr(value, "__dataclass_fields__"):
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}
    if type(value).__name__ == "Decimal":
        return float(value)
    return value


class Output:
    def __init__(self, fmt: str = "table", *, no_color: bool = False) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown output format {fmt!r}")
        self.format = fmt
        self.out = Console(no_color=no_color, soft_wrap=True, highlight=False)
        self.err = Console(stderr=True, no_color=no_color, soft_wrap=True, highlight=False)

    # ------------------------------------------------------------- diagnostics
    def error(self, message: str) -> None:
        self.err.print(f"[bold red]error:[/] {message}", markup=True, highlight=False)

    def warn(self, message: str) -> None:
        self.err.print(f"[yellow]warning:[/] {message}", markup=True, highlight=False)

    def info(self, message: str) -> None:
        self.err.print(message, markup=False, highlight=False)

    # ------------------------------------------------------------- data
    def data(self, value: Any) -> None:
        """Print structured data in json or yaml form (the table form is the caller's job)."""
        plain = _plain(value)
        if self.format == "yaml":
            import yaml

            sys.stdout.write(yaml.safe_dump(plain, sort_keys=False, allow_unicode=True))
        else:
            sys.stdout.write(json.dumps(plain, ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None,
              justify: Mapping[str, str] | None = None) -> None:
        t = Table(title=title, box=None, header_style="bold", pad_edge=False)
        for c in columns:
            t.add_column(c, justify=(justify or {}).get(c, "left"), overflow="fold")  # type: ignore[arg-type]
        for r in rows:
            t.add_row(*("" if v is None else str(v) for v in r))
        self.out.print(t)

    def render(self, value: Any, columns: Sequence[str], rows: Iterable[Sequence[Any]], **kw: Any) -> None:
        """``value`` as json/yaml, or ``rows`` as a table: the common pattern for list commands."""
        if self.format == "table":
            self.table(columns, rows, **kw)
        else:
            self.data(value)

    def line(self, text: str = "") -> None:
        self.out.print(text, markup=False, highlight=False)
