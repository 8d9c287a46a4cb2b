# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The ``mqctl`` command: the root app, its global options and the error boundary.

Each noun is a Typer sub-app in its own module, registered in :data:`SUBAPPS` below. Sub-app
modules stay cheap to import: anything heavy (scapy, the reference servers) is imported inside
the command that needs it, so that admin commands start fast.
"""

from __future__ import annotations

import importlib
import io
import os
import sys
from typing import Annotated, Any

import typer
from typer.core import TyperGroup

from . import __version__
from .errors import EXIT_FAILURE, EXIT_USAGE, CliError

#: where the global options given on the command line wait for :func:`mqctl.runner.settings`
_GLOBALS_KEY = "mqctl.globals"


def _store_global(ctx: typer.Context, param: typer.CallbackParam, value: Any) -> None:
    """Keep a global option's raw value on the root context; :func:`mqctl.runner.settings`
    resolves them all at once (the last occurrence wins; ``-v`` counts add up)."""
    counted = bool(getattr(param, "count", False))
    if value is None or value is False or (isinstance(value, int) and not isinstance(value, bool)
                                           and value == 0 and counted):
        return
    given = ctx.find_root().meta.setdefault(_GLOBALS_KEY, {})
    flag = max(param.opts, key=len)
    if counted and param.name in given:
        value = given[param.name][0] + value
    given[param.name] = (value, flag)


def _global_params() -> list[Any]:
    """The click parameters of :data:`mqctl.settings.GLOBAL_OPTIONS`, built by typer from a
    function signature made from the table (so they parse and show help as typer's own)."""
    cached = _GLOBAL_PARAMS
    if cached:
        return cached
    import inspect

    from .settings import GLOBAL_OPTIONS

    params = []
    for o in GLOBAL_OPTIONS:
        if not o.flags:  # from the environment or the profile only
            continue
        if o.kind == "count":
            ann: Any = Annotated[int, typer.Option(*o.flags, help=o.help, count=True, callback=_store_global,
                                                   expose_value=False, show_default=False)]
            default: Any = 0
        elif o.kind == "flag":
            ann = Annotated[bool, typer.Option(*o.flags, help=o.help, callback=_store_global,
                                               expose_value=False, show_default=False)]
            default = False
        else:
            ann = Annotated[str | None, typer.Option(*o.flags, help=o.help, metavar=o.metavar,
                                                     callback=_store_global, expose_value=False)]
            default = None
        params.append(inspect.Parameter(o.name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                        annotation=ann))

    def options(**_: Any) -> None:
        pass

    options.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    holder = typer.Typer()
    holder.command()(options)
    names = {o.name for o in GLOBAL_OPTIONS}
    _GLOBAL_PARAMS.extend(p for p in typer.main.get_command(holder).params if p.name in names)
    return _GLOBAL_PARAMS


_GLOBAL_PARAMS: list[Any] = []


def _option_names(cmd: Any) -> set[str]:
    return {o for p in cmd.params for o in (*getattr(p, "opts", ()), *getattr(p, "secondary_opts", ()))}


def _with_globals(cmd: Any) -> Any:
    """``cmd`` (a noun's group, or one command) with the global options on every command, except
    where the command has an option of the same name (its own wins), and with the settings
    resolved before the command body runs (a bad global option is a usage error even for a
    command that would not have used it)."""
    if getattr(cmd, "_mqctl_globals", False):
        return cmd
    cmd._mqctl_globals = True
    subs = getattr(cmd, "commands", None)
    if subs is not None:
        import types

        cmd.format_commands = types.MethodType(_format_commands, cmd)
        for sub in subs.values():
            _with_globals(sub)
        return cmd
    own = _option_names(cmd)
    cmd.params.extend(p for p in _global_params() if not own & set(p.opts))
    body = cmd.callback
    if body is not None:
        import functools

        @functools.wraps(body)
        def run(*args: Any, **kwargs: Any) -> Any:
            from typer._click.globals import get_current_context

            from .runner import settings

            settings(get_current_context())  # type: ignore[arg-type]
            return body(*args, **kwargs)

        cmd.callback = run
    return cmd


def _format_commands(self: Any, ctx: Any, formatter: Any) -> None:
    """A group's commands with their whole first help line (click cuts them with '...')."""
    rows = []
    for name in self.list_commands(ctx):
        cmd = self.get_command(ctx, name)
        if cmd is not None and not cmd.hidden:
            rows.append((name, cmd.get_short_help_str(limit=1 << 16)))
    if rows:
        with formatter.section("Commands"):
            formatter.write_dl(rows)


class RootGroup(TyperGroup):
    """The root command: global options here and on every command, and the mqadmin command
    names as hidden aliases (:mod:`mqctl.aliases`)."""

    def __init__(self, **attrs: Any) -> None:
        super().__init__(**attrs)
        own = _option_names(self)
        self.params[:0] = [p for p in _global_params() if not own & set(p.opts)]

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        cmd = super().get_command(ctx, cmd_name)
        return _with_globals(cmd) if cmd is not None else None

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        _format_commands(self, ctx, formatter)

    def resolve_command(self, ctx: Any, args: list[str]) -> Any:
        from .aliases import resolve_alias, route_alias

        if not args or super().get_command(ctx, args[0]) is not None:
            return super().resolve_command(ctx, args)
        routed = route_alias(args[0], args[1:])
        if routed is not None:
            path, rest = routed
            rewrite: Any = lambda _args: rest  # noqa: E731
        else:
            found = resolve_alias(args[0])
            if found is None:
                return super().resolve_command(ctx, args)
            path, rewrite = found
        cmd: Any = self
        for word in path:
            cmd = cmd.get_command(ctx, word)
            if cmd is None:
                ctx.fail(f"the mqadmin alias {args[0]!r} needs the command 'mqctl {' '.join(path)}', "
                         "which is not available")
        return " ".join(path), _with_globals(cmd), rewrite(args[1:])


app = typer.Typer(
    name="mqctl",
    cls=RootGroup,
    help="Speak Apache RocketMQ's wire protocol: operate clusters, run reference servers, decode and "
         "analyse captures.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
    rich_markup_mode=None,
)

#: (module under mqctl, attribute, command name, help). Registered in this order.
SUBAPPS: list[tuple[str, str, str, str]] = [
    ("cluster", "app", "cluster", "List a cluster's brokers; run a local reference cluster."),
    ("topic", "app", "topic", "List, inspect, create, update and delete topics."),
    ("broker", "app", "broker", "Run a reference broker; inspect and configure brokers."),
    ("consumer", "app", "consumer", "Consumer progress, connections and subscription groups."),
    ("producer", "app", "producer", "Producer connections."),
    ("message", "app", "message", "Send, query and consume messages."),
    ("namesrv", "app", "namesrv", "Run a reference name server; query and configure name servers."),
    ("ha", "app", "ha", "Master/slave replication status."),
    ("controller", "app", "controller", "Run a reference controller (5.x controller mode); SyncStateSets, "
     "elections, epochs."),
    ("stats", "app", "stats", "Put and get statistics of the brokers' topics and groups."),
    ("store", "app", "store", "Read a broker's store directory offline."),
    ("pcap", "app", "pcap", "Decode and summarise captures of RocketMQ traffic; record new ones."),
    ("acl", "app", "acl", "A broker's plain ACL: accounts, white addresses, versions."),
    ("analyze", "analyze", "analyze", "Analyse captures with Spark: Parquet tables, metrics, a report."),
    ("conformance", "app", "conformance", "Grade a name server, broker or controller; replay captures."),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mqctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Global options go before or after the command: ``mqctl -n host:9876 cluster list -o json``."""


_registered: list[str] = []


def _value_options() -> frozenset[str]:
    from .settings import GLOBAL_OPTIONS

    return frozenset(f for o in GLOBAL_OPTIONS if o.kind == "value" for f in o.flags)


def _noun(argv: list[str]) -> str | None:
    """The sub-app named on the command line (an mqadmin alias names its noun), if any."""
    values = _value_options()
    it = iter(argv)
    for arg in it:
        if arg in values:
            next(it, None)
        elif not arg.startswith("-"):
            from .aliases import resolve_alias

            try:
                found = resolve_alias(arg)
            except CliError:  # an mqadmin name mqctl does not cover: said when the command runs
                return None
            return found[0][0] if found is not None else arg
    return None


def _register(argv: list[str] | None = None) -> None:
    """Add the sub-apps, once (tests call :func:`main` many times in one process). With the
    command line given, only the sub-app it names is imported and added, so that a command
    pays for its own modules only; help, completion and unknown nouns get all of them."""
    names = [s[2] for s in SUBAPPS]
    noun = _noun(argv) if argv is not None else None
    if noun in names and not _registered:
        wanted = [noun]
    else:
        wanted = names
    for module, attr, name, help_text in SUBAPPS:
        if name in _registered or name not in wanted:
            continue
        sub = getattr(importlib.import_module(f"mqctl.{module}"), attr)
        if isinstance(sub, typer.Typer):
            app.add_typer(sub, name=name, help=help_text)
        else:  # a verb with no sub-commands (analyze)
            app.command(name=name, help=help_text)(sub)
        _registered.append(name)


def main(argv: list[str] | None = None) -> int:
    """Console-script entry point: run the app and turn every error into one line and an exit code."""
    from .fastparams import install

    install()
    _quiet_library_logs()
    _guard_stdout()
    _register(sys.argv[1:] if argv is None else argv)
    try:
        rv = app(args=argv, standalone_mode=False, prog_name="mqctl")
    except CliError as err:
        _error(str(err))
        return err.exit_code
    except typer.Exit as ex:
        return ex.exit_code
    except typer.Abort:
        _error("aborted")
        return EXIT_FAILURE
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as exc:  # the boundary: no traceback reaches a user
        if isinstance(exc, typer.exceptions.TyperException) and hasattr(exc, "show"):
            return _usage(exc)
        output_failed = _output_failure(exc)
        if output_failed is not None:
            return output_failed
        from .errors import exit_code_of

        code = exit_code_of(exc)
        if code is not None:
            _error(str(exc))
            return code
        if os.environ.get("MQCTL_DEBUG"):
            raise
        _error(f"internal error: {type(exc).__name__}: {exc} (set MQCTL_DEBUG=1 for a traceback)")
        return EXIT_FAILURE
    return rv if isinstance(rv, int) else 0


class OutputFailed(Exception):
    """Writing standard output failed (a full disk, say). Not an :class:`OSError`, so that
    nothing between the write and the boundary takes it for another kind of failure."""

    def __init__(self, strerror: str) -> None:
        super().__init__(strerror)
        self.strerror = strerror


class OutputClosed(Exception):
    """Standard output is a pipe whose reader has gone (``| head -1``). Not a
    :class:`BrokenPipeError`: click would turn that into a silent exit 1."""


class _GuardedStdout(io.FileIO):
    """File descriptor 1, whose write failures say that they are the output's."""

    def write(self, data: Any) -> int:
        try:
            return super().write(data)
        except BrokenPipeError:
            raise OutputClosed() from None
        except OSError as exc:
            raise OutputFailed(exc.strerror or str(exc)) from None


def _guard_stdout() -> None:
    """Route the process's standard output through :class:`_GuardedStdout` (only the real one: a
    test's captured output is left alone)."""
    out = sys.stdout
    if out is not sys.__stdout__ or out is None or isinstance(getattr(out, "buffer", None), _Guarded):
        return
    try:
        fd = out.fileno()
    except (OSError, ValueError, AttributeError):
        return
    out.flush()
    raw = _GuardedStdout(fd, "w", closefd=False)
    sys.stdout = io.TextIOWrapper(_Guarded(raw), encoding=out.encoding, errors=out.errors,
                                  line_buffering=out.line_buffering)


class _Guarded(io.BufferedWriter):
    pass


def _output_failure(exc: BaseException) -> int | None:
    """The exit code for a failure to write standard output, or ``None`` for another error.

    A closed pipe (``mqctl topic list | head -1``) ends the command quietly with exit 0: the reader
    has what it wanted. Any other write failure (a full disk) is one error line, exit 1. Standard
    output is then pointed at /dev/null, so that the final flush of what is still buffered does
    not fail a second time."""
    if isinstance(exc, OutputClosed):
        _drop_stdout()
        return 0
    if isinstance(exc, OutputFailed):
        _drop_stdout()
        _error(f"cannot write the output: {exc.strerror}")
        return EXIT_FAILURE
    return None


def _drop_stdout() -> None:
    try:
        fd = sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
    for stream in (sys.stdout, getattr(sys.stdout, "buffer", None)):
        try:
            if stream is not None:
                stream.flush()
        except OSError:
            pass


def _quiet_library_logs() -> None:
    """The library's log records (``wire.aio`` closing a connection, say) are not for the
    terminal of an admin command: its failure reaches the user as the command's one error line.
    The reference servers started by ``mqctl namesrv/broker start`` configure their own logging."""
    import logging

    wire_log = logging.getLogger("wire")
    if not any(isinstance(h, logging.NullHandler) for h in wire_log.handlers):
        wire_log.addHandler(logging.NullHandler())


def _usage(exc: Exception) -> int:
    """Click's usage errors as one line with the help hint; a noun or command given without
    arguments still shows its help."""
    code = int(getattr(exc, "exit_code", EXIT_USAGE))
    ctx = getattr(exc, "ctx", None)
    if type(exc).__name__ == "NoArgsIsHelpError" or not hasattr(exc, "format_message"):
        if hasattr(exc, "show"):  # every click exception has it (the caller checked)
            exc.show()
        return code
    hint = f" (see '{ctx.command_path} -h')" if ctx is not None else ""
    _error(f"{exc.format_message()}{hint}")
    return code


#: the most of an error line shown (a remark is as long as the server makes it)
_ERROR_CHARS = 2000


def _error(message: str) -> None:
    # one line whatever the text holds (server remarks often carry a second "See http://…" line),
    # its control characters escaped (a remark is a server's text) and its length bounded
    from .output import visible

    message = visible(" ".join(part.strip() for part in str(message).splitlines() if part.strip()))
    if len(message) > _ERROR_CHARS:
        message = f"{message[:_ERROR_CHARS]}… ({len(message):,} characters)"
    sys.stderr.write(f"error: {message}\n")
    sys.stderr.flush()


if __name__ == "__main__":
    raise SystemExit(main())
