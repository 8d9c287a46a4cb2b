# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The ``mqctl`` command: the root app, its global options and the error boundary.

Each noun is a Typer sub-app in its own module, registered in :data:`SUBAPPS` below. Sub-app
modules stay cheap to import: anything heavy (scapy, the reference servers) is imported inside
the command that needs it, so that admin commands start fast.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Annotated

import typer

from . import __version__
from .errors import EXIT_FAILURE, EXIT_USAGE, CliError
from .output import FORMATS

app = typer.Typer(
    name="mqctl",
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
    ("store", "app", "store", "Read a broker's store directory offline."),
    ("pcap", "app", "pcap", "Decode and summarise captures of RocketMQ traffic; record new ones."),
    ("acl", "app", "acl", "A broker's plain ACL: accounts, white addresses, versions."),
    ("analyze", "analyze", "analyze", "Analyse captures with Spark: Parquet tables, metrics, a report."),
]


def _version(value: bool) -> None:
    if value:
        typer.echo(f"mqctl {__version__}")
        raise typer.Exit()


@app.callback()
def root(
    ctx: typer.Context,
    namesrv: Annotated[str | None, typer.Option(
        "--namesrv", "-n", help="Name server address(es), ';'-separated. Default: $NAMESRV_ADDR, "
        "the profile's namesrv, else 127.0.0.1:9876.")] = None,
    timeout: Annotated[float | None, typer.Option(help="Seconds to wait for each answer.")] = None,
    output: Annotated[str, typer.Option(
        "--output", "-o", help=f"Output format: {', '.join(FORMATS)}.")] = "table",
    serialize: Annotated[str | None, typer.Option(
        help="Request header serialization: json or rocketmq.")] = None,
    profile: Annotated[str | None, typer.Option(
        help="Profile from ~/.config/mqctl/config.yaml.")] = None,
    access_key: Annotated[str | None, typer.Option(
        "--access-key", help="Sign every request with this ACL access key (with --secret-key). Default: "
        "$MQCTL_ACCESS_KEY, else the profile's access_key.")] = None,
    secret_key: Annotated[str | None, typer.Option(
        "--secret-key", help="The access key's secret (never printed). Default: $MQCTL_SECRET_KEY, else the "
        "profile's secret_key.")] = None,
    verbose: Annotated[int, typer.Option("--verbose", "-v", count=True, help="More detail on stderr.")] = 0,
    no_color: Annotated[bool, typer.Option("--no-color", help="Plain output without colour.")] = False,
    version: Annotated[bool, typer.Option(
        "--version", callback=_version, is_eager=True, help="Print the version and exit.")] = False,
) -> None:
    """Global options come before the command: ``mqctl -n host:9876 -o json cluster list``."""
    from .settings import resolve

    if output not in FORMATS:
        raise typer.BadParameter(f"must be one of {', '.join(FORMATS)}", param_hint="--output")
    ctx.obj = resolve(namesrv=namesrv, timeout=timeout, serialize=serialize, output=output,
                      profile=profile, verbose=verbose, no_color=no_color or "NO_COLOR" in os.environ,
                      access_key=access_key, secret_key=secret_key)


_registered: list[str] = []

#: the root options that take a value (the noun is the first word that is not one of them)
_VALUE_OPTIONS = frozenset({"-n", "--namesrv", "--timeout", "-o", "--output", "--serialize", "--profile",
                            "--access-key", "--secret-key"})


def _noun(argv: list[str]) -> str | None:
    """The sub-app named on the command line, if any."""
    it = iter(argv)
    for arg in it:
        if arg in _VALUE_OPTIONS:
            next(it, None)
        elif not arg.startswith("-"):
            return arg
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
