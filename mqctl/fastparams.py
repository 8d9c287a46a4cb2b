# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Plain parameter coercion for typer, so that a command does not import pydantic.

typer 0.29 coerces every command-line value through a pydantic ``TypeAdapter``
(``typer._coercion.build_runtime_param``), built on first use for each parameter of the
invoked command. Importing pydantic alone takes about 85 ms, a third of the start-up budget of
an admin command. Every mqctl parameter is a ``str``, ``int``, ``float``, ``bool`` or ``Path``
(optionally ``None``, or a list of them); :func:`install` makes typer coerce those with the plain
constructors and leaves anything else (choices, ranges, files, constrained paths, other types)
to typer as before.

This reaches into typer's internals (``_TyperParameter.get_runtime_param``, the ``RuntimeParam``
contract of ``typer._coercion``), so every step falls back to plain typer:

* typer is pinned to the minor version this was written for (``pyproject.toml``), and
  :func:`install` changes nothing on any other version (:data:`TYPER_MINOR`);
* it changes nothing when a name it uses is missing, or when the coercion class cannot be built
  or instantiated;
* per parameter, any surprise while choosing the plain path (an attribute gone, a constructor
  that changed) leaves that parameter to typer's own coercion.

The fallback costs only the pydantic import; ``tests/cli/test_startup.py`` proves the plain path
is taken (no pydantic in an admin command) and ``tests/cli/test_fastparams.py`` that commands
behave the same either way.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

__all__ = ["TYPER_MINOR", "install"]

#: the typer minor version whose internals this module knows
TYPER_MINOR = (0, 29)

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


def _typer_minor(version: str) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in version.split(".")[:2])
    except ValueError:
        return ()


def _plain_class(runtime_cls: Any, bad_parameter: Any) -> Any:
    """The coercion class for simple parameters, a ``RuntimeParam`` of typer's contract."""

    @dataclass(frozen=True)
    class PlainRuntimeParam(runtime_cls):  # type: ignore[misc]  # typer's class, typed Any here
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
                raise bad_parameter(f"{value!r} is not a valid {_SIMPLE[self.leaf]}.", ctx=ctx,
                                    param=param) from None

    return PlainRuntimeParam


def _is_plain(desc: Any, leaf: Any) -> bool:
    info = getattr(desc, "parameter_info", None)
    return (leaf is not None and getattr(desc, "file_annotation", None) is None
            and getattr(info, "min", None) is None and getattr(info, "max", None) is None
            and not getattr(desc, "is_choice", True)
            and (leaf is not Path or all(getattr(info, k, v) == v for k, v in _PATH_DEFAULTS.items())))


def install() -> bool:
    """Route the simple parameters around pydantic; returns whether it could (see the module notes:
    on any doubt, typer is left as it is)."""
    global _installed
    if _installed:
        return True
    try:
        import typer
        from typer import _coercion, core
        from typer._click.exceptions import BadParameter
    except ImportError:
        return False
    if _typer_minor(getattr(typer, "__version__", "")) != TYPER_MINOR:
        return False
    param_cls = getattr(core, "_TyperParameter", None)
    runtime_cls = getattr(_coercion, "RuntimeParam", None)
    original = getattr(param_cls, "get_runtime_param", None)
    if param_cls is None or runtime_cls is None or original is None:
        return False
    try:
        plain_cls = _plain_class(runtime_cls, BadParameter)
        probe = plain_cls(parameter_info=None, annotation=int, leaf=int)
        if probe.coerce("7", param=_ProbeParam(), ctx=None) != 7:
            return False
    except Exception:  # typer's contract is not the one this was written for: leave typer alone
        return False

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", None) is None:
            try:
                desc: Any = getattr(self, "type_descriptor", None)
                annotation = getattr(desc, "annotation", None)
                leaf = _leaf(annotation)
                if _is_plain(desc, leaf):
                    self._runtime_param = plain_cls(parameter_info=desc.parameter_info, annotation=annotation,
                                                    leaf=leaf)
            except Exception:  # anything unexpected: typer's own coercion for this parameter
                self._runtime_param = None
        return original(self)

    param_cls.get_runtime_param = get_runtime_param
    _installed = True
    return True


class _ProbeParam:
    """What ``RuntimeParam.coerce`` reads of a parameter, for the probe in :func:`install`."""

    multiple = False
    nargs = 1
