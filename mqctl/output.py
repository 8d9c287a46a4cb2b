# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The one output object: data to stdout, diagnostics to stderr, in table, json or yaml form.

Commands never create a ``Console``; they get an :class:`Output` from the settings object.
JSON output is plain standard JSON with no styling, whatever the server sent. Tables are aligned
plain text (bold header and dim titles on a terminal): nothing wraps or gets cut, so ids stay whole
and the output pipes into ``awk``/``sort``. rich draws the diagnostics on stderr and is imported
only when one is printed.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

FORMATS = ("table", "json", "yaml")

#: control characters as the visible escapes Python writes: what a table or an error line shows
#: comes from servers and clients (remarks, config values, client ids, topic names), and raw
#: ESC/OSC sequences would reach the terminal (set its title, clear it, recolour what follows)
_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F, *range(0x80, 0xA0))}
_CONTROLS.update({0x09: "\\t", 0x0A: "\\n", 0x0D: "\\r"})


def visible(text: str) -> str:
    """``text`` with its control characters written as escapes (``\\x1b``, ``\\n``)."""
    return text.translate(_CONTROLS) if not text.isprintable() else text


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
        return {k: _plain(getattr(value, k)) for k in value.__dataclass_fields__ if not k.startswith("_")}
    if type(value).__name__ == "Decimal":
        return int(value) if value == value.to_integral_value() else float(value)
    return value


class Output:
    def __init__(self, fmt: str = "table", *, no_color: bool = False) -> None:
        if fmt not in FORMATS:
            raise ValueError(f"unknown output format {fmt!r}")
        self.format = fmt
        self.no_color = no_color
        self._out: Any = None
        self._err: Any = None
        #: set while ``--watch`` redraws: JSON documents are then written one per line
        self.streaming = False

    # ------------------------------------------------------------- consoles (made on first use)
    @property
    def out(self) -> Any:
        if self._out is None:
            from rich.console import Console

            self._out = Console(no_color=self.no_color, soft_wrap=True, highlight=False)
        return self._out

    @property
    def err(self) -> Any:
        if self._err is None:
            from rich.console import Console

            self._err = Console(stderr=True, no_color=self.no_color, soft_wrap=True, highlight=False)
        return self._err

    # ------------------------------------------------------------- diagnostics
    def error(self, message: str) -> None:
        self.err.print(f"[bold red]error:[/] {_escape(message)}", markup=True, highlight=False)

    def warn(self, message: str) -> None:
        self.err.print(f"[yellow]warning:[/] {_escape(message)}", markup=True, highlight=False)

    def info(self, message: str) -> None:
        self.err.print(message, markup=False, highlight=False)

    # ------------------------------------------------------------- data
    def data(self, value: Any) -> None:
        """Print structured data in json or yaml form (the table form is the caller's job)."""
        plain = _plain(value)
        if self.format == "yaml":
            import yaml

            text = yaml.safe_dump(plain, sort_keys=False, allow_unicode=True)
            sys.stdout.write(("---\n" + text) if self.streaming else text)
        elif self.streaming:
            sys.stdout.write(json.dumps(plain, ensure_ascii=False, separators=(",", ":")) + "\n")
        else:
            sys.stdout.write(json.dumps(plain, ensure_ascii=False, indent=2) + "\n")
        sys.stdout.flush()

    @property
    def color(self) -> bool:
        """Styled output: stdout is a terminal and colour is not turned off."""
        return not self.no_color and sys.stdout.isatty()

    def table(self, columns: Sequence[str], rows: Iterable[Sequence[Any]], *, title: str | None = None,
              justify: Mapping[str, str] | None = None) -> None:
        """Aligned columns, two spaces apart, no trailing blanks; nothing is wrapped or cut, so
        ids and addresses stay whole and ``awk``/``cut`` work on the output. On a terminal the
        header is bold and the title dim."""
        self._plain_table(columns, [["" if v is None else visible(str(v)) for v in r] for r in rows],
                          title and visible(title), justify or {})

    def _plain_table(self, columns: Sequence[str], rows: list[list[str]], title: str | None,
                     justify: Mapping[str, str]) -> None:
        widths = [len(c) for c in columns]
        for r in rows:
            for i, v in enumerate(r[:len(widths)]):
                widths[i] = max(widths[i], len(v))
        lines = [self._style(title, "2")] if title else []
        for n, r in enumerate([list(columns), *rows]):
            cells = [v.rjust(widths[i]) if justify.get(columns[i]) == "right" else v.ljust(widths[i])
                     for i, v in enumerate(r[:len(widths)])]
            text = "  ".join(cells).rstrip()
            lines.append(self._style(text, "1") if n == 0 else text)
        sys.stdout.write("\n".join(lines) + "\n")
        sys.stdout.flush()

    def _style(self, text: str, sgr: str) -> str:
        return f"\x1b[{sgr}m{text}\x1b[0m" if self.color else text

    def kv(self, pairs: Iterable[tuple[str, Any]], *, title: str | None = None) -> None:
        """``key: value`` lines with the keys aligned (a record's fields, a runtime table)."""
        items = [(visible(str(k)), "" if v is None else visible(str(v))) for k, v in pairs]
        if title:
            self.line(title)
        width = max((len(k) for k, _ in items), default=0)
        for k, v in items:
            self.line(f"{k.ljust(width)}  {v}")

    def render(self, value: Any, columns: Sequence[str], rows: Iterable[Sequence[Any]], **kw: Any) -> None:
        """``value`` as json/yaml, or ``rows`` as a table: the common pattern for list commands."""
        if self.format == "table":
            self.table(columns, rows, **kw)
        else:
            self.data(value)

    def line(self, text: str = "") -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def begin_refresh(self, header: str) -> None:
        """Start one redraw of ``--watch``: clear a terminal and print the header line."""
        self.streaming = True
        if self.format != "table":
            return
        if sys.stdout.isatty():
            sys.stdout.write("\x1b[H\x1b[2J")  # home, clear the screen
        else:
            self.line()
        self.line(self._style(header, "2"))


def _escape(text: str) -> str:
    from rich.markup import escape

    return escape(text)
