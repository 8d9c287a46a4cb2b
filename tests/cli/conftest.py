# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Fixtures for the CLI tests: a CliRunner over the whole app, and recording stand-ins for the
library operations (C5: the command's job is to parse, call one operation and render)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from typer.testing import CliRunner

from mqctl import app as app_module


class Recorder:
    """An async stand-in for an ``op(client, **kwargs)`` library call: records the client and the
    keyword arguments, then returns ``result`` (or raises it, when it is an exception)."""

    def __init__(self, result: Any) -> None:
        self.result = result
        self.calls: list[dict[str, Any]] = []
        self.clients: list[Any] = []

    async def __call__(self, client: Any, **kwargs: Any) -> Any:
        self.clients.append(client)
        self.calls.append(kwargs)
        if isinstance(self.result, BaseException):
            raise self.result
        return self.result

    @property
    def kwargs(self) -> dict[str, Any]:
        assert len(self.calls) == 1, f"expected one call, got {self.calls}"
        return self.calls[0]


@pytest.fixture
def invoke() -> Callable[..., Any]:
    """Run ``mqctl ARGS`` through typer's CliRunner (stdout and stderr kept apart), with the
    parameter coercion the console script uses."""
    from mqctl.fastparams import install

    install()
    app_module._register()
    runner = CliRunner()

    def run(*args: str, input: str | None = None) -> Any:
        return runner.invoke(app_module.app, list(args), input=input, catch_exceptions=True)

    return run


@pytest.fixture
def main(capsys: pytest.CaptureFixture[str]) -> Callable[..., tuple[int, str, str]]:
    """Run ``mqctl ARGS`` through the console-script entry point (the error boundary included)."""

    def run(*args: str) -> tuple[int, str, str]:
        rc = app_module.main(list(args))
        cap = capsys.readouterr()
        return rc, cap.out, cap.err

    return run


@pytest.fixture
def patch_op(monkeypatch: pytest.MonkeyPatch) -> Callable[[str, str, Any], Recorder]:
    """Replace ``wire.admin.<module>.<name>`` with a :class:`Recorder` returning ``result``."""
    import importlib

    def patch(module: str, name: str, result: Any) -> Recorder:
        rec = Recorder(result)
        monkeypatch.setattr(importlib.import_module(f"wire.admin.{module}"), name, rec)
        return rec

    return patch


@pytest.fixture(autouse=True)
def _no_user_config(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """The commands run in-process must not read the config file of whoever runs the tests."""
    monkeypatch.delenv("MQCTL_CONFIG", raising=False)
    monkeypatch.delenv("NAMESRV_ADDR", raising=False)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("no-config")))


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """A reference name server and two brokers in this process (see ``tests/cli/test_e2e.py``),
    for the tests that run the real ``mqctl`` against them; one set per test module."""
    pytest.importorskip("reference_broker.broker")
    from .test_e2e import Servers

    s = Servers(tmp_path_factory.mktemp("e2e"))
    s.start()
    yield s
    s.stop()
