# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Plain parameter coercion for typer, so that a command does not import pydantic.

typer 0.29 coerces every command-line value through a pydantic ``TypeAdapter``
(``typer._coercion.build_runtime_param``), built on first use for each parameter of the
invoked command. Importing pydantic alone takes about 85 ms, a third of the start-up budget of
an admin command. Every mqctl parameter is a ``str``, ``int``, ``float``, ``bool`` or ``Path``
(optionally ``None``, or a list of them); :func:`install` makes typer coerce those with the plain
constructors and leaves anything else (choices, ranges, files, constrained paths, other types)
to typer as before. When typer's internals are not the expected ones, nothing is changed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

__all__ = ["install"]

_SIMPLE: dict[Any, str] = {str: "text", int: "integer", float: "number", Path: "path", bool: "boolean"}
_BOOLS = {"true": True, "1": True, "yes": True, "y": True, "on": True, "t": True,
          "false": False, "0": False, "no": False, "n": False, "off": False, "f": False}
_PATH_DEFAULTS = {"exists": False, "file_okay": True, "dir_okay": True, "writable": False, "readable": True,
                  "resolve_path": False, "allow_dash": False, "path_type": None}

_installed = False


def _leaf(annotation: Any) -> Any | None:
    """The simple type of ``annotation`` (``T``, ``list[T]``), or ``None``."""
    if get_origin(annotation) is list:
        args = get_args(annotation)
        annotation = args[0] if len(args) == 1 else None
    return annotation if annotation in _SIMPLE else None


def install() -> bool:
    """Route the simple parameters around pydantic; returns whether it could."""
    global _installed
    if _installed:
        return True
    try:
        from typer import _coercion, core
        from typer._click.exceptions import BadParameter
    except ImportError:
        return False
    param_cls = getattr(core, "_TyperParameter", None)
    runtime_cls = getattr(_coercion, "RuntimeParam", None)
    original = getattr(param_cls, "get_runtime_param", None)
    if param_cls is None or runtime_cls is None or original is None:
        return False

    @dataclass(frozen=True)
    class PlainRuntimeParam(runtime_cls):  # type: ignore[misc, valid-type]
        leaf: Any = str

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            if isinstance(value, (list, tuple)):
                return [self._one(v, param, ctx) for v in value]
            return self._one(value, param, ctx)

        def _one(self, value: Any, param: Any, ctx: Any) -> Any:
            if isinstance(value, self.leaf) and (self.leaf is bool or not isinstance(value, bool)):
                return value
            try:
                if self.leaf is bool:
                    return _BOOLS[str(value).strip().lower()]
                return self.leaf(value)
            except (TypeError, ValueError, KeyError):
                raise BadParameter(f"{value!r} is not a valid {_SIMPLE[self.leaf]}.", ctx=ctx,
                                   param=param) from None

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", None) is None:
            desc: Any = getattr(self, "type_descriptor", None)
            annotation = getattr(desc, "annotation", None)
            leaf = _leaf(annotation)
            info = getattr(desc, "parameter_info", None)
            plain = (leaf is not None and getattr(desc, "file_annotation", None) is None
                     and getattr(info, "min", None) is None and getattr(info, "max", None) is None
                     and not getattr(desc, "is_choice", True)
                     and (leaf is not Path
                          or all(getattr(info, k, v) == v for k, v in _PATH_DEFAULTS.items())))
            if plain:
                self._runtime_param = PlainRuntimeParam(parameter_info=info, annotation=annotation, leaf=leaf)
        return original(self)

    param_cls.get_runtime_param = get_runtime_param
    _installed = True
    return True
