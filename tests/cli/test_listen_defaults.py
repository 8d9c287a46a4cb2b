# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Safe defaults: the reference servers listen on 127.0.0.1 unless an address is configured, and
listening beyond this machine without ACL prints one clear warning."""

from __future__ import annotations

import os
import re
import selectors
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqctl.serving import exposure_warning, is_loopback, listen_address
from reference_broker.config import BrokerConfig, NamesrvConfig

MQCTL = Path(sys.executable).with_name("mqctl")


def test_nothing_configured_means_this_machine_only() -> None:
    assert listen_address(None, NamesrvConfig()) == ("127.0.0.1", 9876)
    assert listen_address(None, BrokerConfig(), advertised_key="brokerIP1") == ("127.0.0.1", 10911)


def test_the_configured_address_wins_in_order() -> None:
    ns = NamesrvConfig(overrides={"bindAddress": "0.0.0.0", "listenPort": "9877"})
    assert listen_address(None, ns) == ("0.0.0.0", 9877)
    assert listen_address("10.1.2.3:1234", ns) == ("10.1.2.3", 1234)
    assert listen_address(":0", ns) == ("0.0.0.0", 0)
    broker = BrokerConfig(overrides={"brokerIP1": "10.1.2.3"})
    assert listen_address(None, broker, advertised_key="brokerIP1") == ("10.1.2.3", 10911)
    broker = BrokerConfig(overrides={"brokerIP1": "10.1.2.3", "bindAddress": "0.0.0.0"})
    assert listen_address(None, broker, advertised_key="brokerIP1") == ("0.0.0.0", 10911)
    # a brokerIP1 computed (not given) or on loopback does not open the server to the network
    assert listen_address(None, BrokerConfig(overrides={"brokerIP1": "127.0.0.1"}),
                          advertised_key="brokerIP1") == ("127.0.0.1", 10911)


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.3.4.5", True), ("::1", True),
                                                ("[::1]", True), ("localhost", True), ("0.0.0.0", False),
                                                ("::", False), ("10.0.0.1", False), ("broker.example", False)])
def test_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback
    assert (exposure_warning(host, acl_enabled=False) is None) is loopback
    assert exposure_warning(host, acl_enabled=True) is None
    # a broker's HA port is outside ACL: a broker beyond loopback with ACL still hears of it
    assert (exposure_warning(host, acl_enabled=True, ha_port=True) is None) is loopback


def _start(argv: list[str], env: dict[str, str], ready: bytes) -> tuple[bytes, int]:
    """Run a server until its boot line, stop it with SIGTERM; its stderr up to then and the exit code."""
    with subprocess.Popen([str(MQCTL), *argv], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, env=env) as proc:
        assert proc.stderr is not None
        seen = b""
        end = time.monotonic() + 60
        try:
            with selectors.DefaultSelector() as sel:
                sel.register(proc.stderr, selectors.EVENT_READ)
                while ready not in seen and time.monotonic() < end:
                    if sel.select(end - time.monotonic()):
                        chunk = os.read(proc.stderr.fileno(), 4096)
                        if not chunk:
                            break
                        seen += chunk
            assert ready in seen, seen.decode(errors="replace")
            proc.send_signal(signal.SIGTERM)
            return seen, proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()


@pytest.mark.skipif(not MQCTL.exists(), reason=f"{MQCTL} is not installed (run ./scripts/bootstrap)")
def test_servers_started_without_an_address_listen_on_loopback_quietly(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    seen, code = _start(["namesrv", "start", "--set", "listenPort=0", "--set", f"kvConfigPath={tmp_path}/kv.json",
                         "--set", f"configStorePath={tmp_path}/ns.properties"], env, b"boot success")
    assert code == 0 and re.search(rb"listening on 127\.0\.0\.1:\d+", seen) and b"warning" not in seen, seen


@pytest.mark.skipif(not MQCTL.exists(), reason=f"{MQCTL} is not installed (run ./scripts/bootstrap)")
def test_listening_on_every_interface_without_acl_warns_once(tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "PYTHONUNBUFFERED": "1"}
    seen, code = _start(["namesrv", "start", "--listen", "0.0.0.0:0", "--set", f"kvConfigPath={tmp_path}/kv.json",
                         "--set", f"configStorePath={tmp_path}/ns.properties"], env, b"boot success")
    assert code == 0 and seen.count(b"without ACL") == 1, seen
    broker = ["broker", "start", "--set", "listenPort=0", "--set", "bindAddress=0.0.0.0",
              "--set", f"storePathRootDir={tmp_path}/store"]
    seen, code = _start(broker, env, b"boot success")
    assert code == 0 and seen.count(b"without ACL") == 1, seen
    seen, code = _start([*broker, "--set", "aclEnable=true"], env, b"boot success")
    assert code == 0 and b"without ACL" not in seen, seen
    assert seen.count(b"ACL does not cover the HA port") == 1, seen
