# Licensed under the Apache License, Version 2.0. See LICENSE.
"""mqctl.fastparams: plain coercion on the typer it was written for, plain typer otherwise, and the
same command-line behaviour either way."""

from __future__ import annotations

import socket
import subprocess
import sys

import pytest
import typer
from typer.testing import CliRunner

import mqctl.fastparams as fastparams


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _mqctl(args: list[str], *, typer_version: str | None = None) -> tuple[int, str, bool]:
    """Run mqctl in a fresh interpreter: (exit code, stderr, whether pydantic was imported)."""
    fake = f"typer.__version__ = {typer_version!r}; " if typer_version else ""
    code = (f"import sys, typer; {fake}from mqctl.app import main; rc = main(sys.argv[1:]); "
            "print('pydantic' in sys.modules); sys.exit(rc)")
    r = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=60)
    return r.returncode, r.stderr, r.stdout.strip().endswith("True")


def test_pinned_to_the_typer_it_knows() -> None:
    assert fastparams._typer_minor(typer.__version__) == fastparams.TYPER_MINOR
    assert fastparams._typer_minor("0.30.1") != fastparams.TYPER_MINOR


@pytest.mark.parametrize("args, code, mentions", [
    (["--timeout", "0.5", "cluster", "list"], 3, "cannot connect"),
    (["--timeout", "soon", "cluster", "list"], 2, "--timeout"),
    (["topic", "update", "T", "-c", "C", "-r", "many"], 2, "--read-queues"),
    (["topic", "update", "T", "-c", "C", "-r", "4", "-w", "4"], 3, "cannot connect"),
    (["message", "send", "-t", "T", "-p", "x", "-b", "broker-a", "-q", "1", "--property", "A=1",
      "--property", "B=2"], 3, "cannot connect"),
    (["message", "send", "-t", "T", "-p", "x", "-b", "broker-a", "-q", "one"], 2, "--queue"),
])
def test_same_behaviour_with_and_without_the_plain_path(args: list[str], code: int, mentions: str) -> None:
    argv = ["-n", f"127.0.0.1:{_closed_port()}", *args]
    plain = _mqctl(argv)
    fallback = _mqctl(argv, typer_version="0.30.0")  # a typer this module does not know: plain typer
    assert plain[0] == fallback[0] == code, (plain, fallback)
    assert mentions in plain[1] and mentions in fallback[1], (plain[1], fallback[1])
    assert plain[2] is False  # the plain path never loads pydantic
    assert fallback[2] is True  # typer's own coercion did the work


def test_a_contract_that_changed_leaves_typer_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastparams, "_installed", False)

    def broken(*_a: object) -> object:
        raise TypeError("RuntimeParam is not a dataclass any more")

    monkeypatch.setattr(fastparams, "_plain_class", broken)
    from typer import core

    before = core._TyperParameter.get_runtime_param
    assert fastparams.install() is False
    assert core._TyperParameter.get_runtime_param is before


def test_a_surprise_for_one_parameter_falls_back_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    assert fastparams.install()

    def surprise(*_a: object) -> bool:
        raise AttributeError("type_descriptor changed")

    monkeypatch.setattr(fastparams, "_is_plain", surprise)
    app = typer.Typer()

    @app.command()
    def cmd(n: int = typer.Option(1, "--n")) -> None:
        typer.echo(f"n={n + 1}")

    r = CliRunner().invoke(app, ["--n", "41"])
    assert r.exit_code == 0 and r.stdout.strip() == "n=42"
    r = CliRunner().invoke(app, ["--n", "x"])
    assert r.exit_code == 2
