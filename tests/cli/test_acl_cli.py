# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Credentials for signed requests (``--access-key``/``--secret-key``, the environment, the profile)
and the ``mqctl acl`` commands, with the library call replaced (C5); and one end-to-end run of
mqctl against a reference broker with ACL on."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wire.acl import Credentials
from wire.admin.acl import AclVersion, BrokerAclConfig
from wire.admin.topic import Outcome
from wire.bodies.acl import AclConfig, PlainAccessConfig

SECRET = "s3cret-never-shown"


@pytest.fixture(autouse=True)
def _no_ambient_credentials(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("MQCTL_ACCESS_KEY", "MQCTL_SECRET_KEY", "MQCTL_SECURITY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MQCTL_CONFIG", os.devnull)  # no config file


def test_credentials_from_the_options_sign_the_client(invoke, patch_op):
    rec = patch_op("acl", "acl_versions", ())
    r = invoke("--access-key", "rocketmq2", "--secret-key", SECRET, "acl", "version", "-b", "10.0.0.1:10911")
    assert r.exit_code == 0, r.output
    assert rec.clients[0].credentials == Credentials("rocketmq2", SECRET)
    assert SECRET not in r.output and SECRET not in (r.stderr or "")


def test_credentials_from_the_environment_and_the_profile(invoke, patch_op, monkeypatch, tmp_path):
    rec = patch_op("acl", "acl_versions", ())
    monkeypatch.setenv("MQCTL_ACCESS_KEY", "from-env1")
    monkeypatch.setenv("MQCTL_SECRET_KEY", "env-secret")
    assert invoke("acl", "version", "-b", "10.0.0.1:10911").exit_code == 0
    assert rec.clients[0].credentials == Credentials("from-env1", "env-secret")
    monkeypatch.delenv("MQCTL_ACCESS_KEY")
    monkeypatch.delenv("MQCTL_SECRET_KEY")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("default: p\nprofiles:\n  p: {access_key: from-profile, secret_key: profile-secret}\n")
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    assert invoke("acl", "version", "-b", "10.0.0.1:10911").exit_code == 0
    assert rec.clients[1].credentials == Credentials("from-profile", "profile-secret")
    # the options win over both
    monkeypatch.setenv("MQCTL_ACCESS_KEY", "from-env1")
    monkeypatch.setenv("MQCTL_SECRET_KEY", "env-secret")
    assert invoke("--access-key", "cli-key1", "--secret-key", "cli-secret", "acl", "version",
                  "-b", "10.0.0.1:10911").exit_code == 0
    assert rec.clients[2].credentials == Credentials("cli-key1", "cli-secret")


def test_no_credentials_means_unsigned_requests(invoke, patch_op):
    rec = patch_op("acl", "acl_versions", ())
    assert invoke("acl", "version", "-b", "10.0.0.1:10911").exit_code == 0
    assert rec.clients[0].credentials is None


@pytest.mark.parametrize("args", [("--access-key", "only-the-key"), ("--secret-key", "only-the-secret")])
def test_half_a_pair_is_a_usage_error_that_does_not_echo_the_secret(main, args):
    rc, out, err = main(*args, "acl", "version", "-b", "10.0.0.1:10911")
    assert rc == 2 and "--access-key" in err and "only-the-secret" not in err + out


def test_acl_update_arguments(invoke, patch_op):
    rec = patch_op("acl", "acl_update", (Outcome("10.0.0.1:10911", True),))
    r = invoke("acl", "update", "-a", "operator1", "-s", "operator-secret", "-w", "192.168.0.*", "--admin",
               "--default-topic-perm", "PUB", "--topic-perm", "a=SUB", "--topic-perm", "b=PUB|SUB",
               "--group-perm", "g=SUB", "-c", "DefaultCluster")
    assert r.exit_code == 0, r.output
    assert rec.kwargs == {"access_key": "operator1", "secret_key": "operator-secret",
                          "white_remote_address": "192.168.0.*", "admin": True, "default_topic_perm": "PUB",
                          "default_group_perm": None, "topic_perms": ["a=SUB", "b=PUB|SUB"],
                          "group_perms": ["g=SUB"], "broker": None, "cluster": "DefaultCluster"}
    assert "update acl config success, 10.0.0.1:10911" in r.output and "operator-secret" not in r.output


def test_acl_update_asks_for_the_secret_without_echoing_it(invoke, patch_op):
    rec = patch_op("acl", "acl_update", (Outcome("10.0.0.1:10911", True),))
    r = invoke("acl", "update", "-a", "operator1", "-b", "10.0.0.1:10911", input="typed-secret\n")
    assert r.exit_code == 0, r.output
    assert rec.kwargs["secret_key"] == "typed-secret" and "typed-secret" not in r.output


def test_acl_failures_exit_1(invoke, patch_op):
    patch_op("acl", "acl_delete", (Outcome("10.0.0.1:10911", False, "code 1: no"),))
    r = invoke("acl", "delete", "operator1", "-b", "10.0.0.1:10911")
    assert r.exit_code == 1


def test_acl_list_hides_secrets_unless_asked(invoke, patch_op):
    cfg = AclConfig(global_white_addrs=("10.0.0.*",), plain_access_configs=(
        PlainAccessConfig(access_key="rocketmq2", secret_key="12345678", admin=True),))
    patch_op("acl", "acl_config", (BrokerAclConfig("10.0.0.1:10911", cfg),))
    r = invoke("acl", "list", "-b", "10.0.0.1:10911")
    assert r.exit_code == 0 and "rocketmq2" in r.output and "12345678" not in r.output and "***" in r.output
    assert "10.0.0.*" in r.output
    r = invoke("acl", "list", "-b", "10.0.0.1:10911", "--show-secrets")
    assert "12345678" in r.output
    r = invoke("-o", "json", "acl", "list", "-b", "10.0.0.1:10911")
    assert '"secretKey": "***"' in r.output


def test_acl_version_table(invoke, patch_op):
    patch_op("acl", "acl_versions", (AclVersion("10.0.0.1:10911", "broker-a", "C", 3, 1795341742797,
                                                {"/x/plain_acl.yml": (3, 1795341742797)}),))
    r = invoke("acl", "version", "-b", "10.0.0.1:10911")
    assert r.exit_code == 0 and "broker-a" in r.output and "3" in r.output


# ---------------------------------------------------------------------- end to end

MQCTL = Path(sys.executable).with_name("mqctl")


@pytest.mark.skipif(not MQCTL.exists(), reason=f"{MQCTL} is not installed (run ./scripts/bootstrap)")
def test_mqctl_signs_its_requests_to_a_broker_with_acl(tmp_path: Path) -> None:
    from reference_broker.broker import Broker
    from tests.broker.helpers import broker_config

    conf = tmp_path / "home" / "conf"
    conf.mkdir(parents=True)
    (conf / "plain_acl.yml").write_text(textwrap.dedent("""\
        accounts:
          - accessKey: rocketmq2
            secretKey: "12345678"
            admin: true
        """))
    env = {**os.environ, "HOME": str(tmp_path), "MQCTL_CONFIG": os.devnull}
    env.pop("MQCTL_ACCESS_KEY", None)
    env.pop("MQCTL_SECRET_KEY", None)

    async def main() -> None:
        cfg = broker_config(tmp_path / "store", aclEnable="true", rocketmqHome=str(tmp_path / "home"))
        async with Broker(cfg, host="127.0.0.1", port=0) as b:
            loop = asyncio.get_running_loop()

            def mqctl(*args: str, **extra: str) -> subprocess.CompletedProcess[str]:
                return subprocess.run([str(MQCTL), *args], capture_output=True, text=True, timeout=60,
                                      env={**env, **extra})

            refused = await loop.run_in_executor(None, lambda: mqctl("broker", "status", "-b", b.address))
            assert refused.returncode == 1 and "No accessKey is configured" in refused.stderr, refused
            ok = await loop.run_in_executor(None, lambda: mqctl(
                "--access-key", "rocketmq2", "--secret-key", "12345678", "broker", "status", "-b", b.address))
            assert ok.returncode == 0, ok.stderr
            ok = await loop.run_in_executor(None, lambda: mqctl(
                "acl", "update", "-a", "operator1", "-s", "operator-secret", "-b", b.address,
                MQCTL_ACCESS_KEY="rocketmq2", MQCTL_SECRET_KEY="12345678"))
            assert ok.returncode == 0 and "12345678" not in ok.stdout + ok.stderr, ok.stderr
            listed = await loop.run_in_executor(None, lambda: mqctl(
                "-o", "json", "acl", "list", "-b", b.address, MQCTL_ACCESS_KEY="rocketmq2",
                MQCTL_SECRET_KEY="12345678"))
            assert listed.returncode == 0 and "operator1" in listed.stdout and "operator-secret" not in listed.stdout

    asyncio.run(asyncio.wait_for(main(), 120))
