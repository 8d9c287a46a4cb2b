# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The global options: before or after the command (as mqadmin users type them), where each value
comes from, and every bad value a usage error naming its source (issue 15 items 7, 15, 20, 25, 26)."""

from __future__ import annotations

import os

import pytest

from wire.admin.cluster import ClusterList
from wire.admin.message import ConsumeResult
from wire.codes import SerializeType


def test_global_options_after_the_noun_and_verb(invoke, patch_op):
    """``mqctl cluster list -n ... -o json``: what an mqadmin user types (``mqadmin clusterList -n``)."""
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    r = invoke("cluster", "list", "-n", "10.0.0.1:9876;10.0.0.2:9876", "-o", "json", "--timeout", "1.5",
               "--serialize", "rocketmq", "-c", "C1")
    assert r.exit_code == 0, r.output
    client = rec.clients[0]
    assert client.namesrv_addrs == ["10.0.0.1:9876", "10.0.0.2:9876"]
    assert client.timeout == 1.5 and client.serialize_type is SerializeType.ROCKETMQ
    assert rec.kwargs == {"cluster": "C1"}
    assert r.stdout.startswith("{")


def test_the_last_occurrence_wins_and_verbose_counts(invoke, patch_op):
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    assert invoke("-n", "10.0.0.1:9876", "--timeout", "9", "cluster", "list", "-n", "10.0.0.2:9876").exit_code == 0
    assert rec.clients[0].namesrv_addrs == ["10.0.0.2:9876"] and rec.clients[0].timeout == 9.0
    assert invoke("-v", "cluster", "list", "-v").exit_code == 0
    assert rec.clients[1].trace is not None


def test_message_consume_minus_o_is_the_output(invoke, patch_op):
    """The one clash: ``-o`` is the output everywhere; the offset is ``--offset``/``-O``."""
    rec = patch_op("message", "message_consume", ConsumeResult("T", (), ()))
    r = invoke("message", "consume", "-t", "T", "-o", "json", "-O", "3", "-c", "2")
    assert r.exit_code == 0, r.output
    assert rec.kwargs["offset"] == 3 and rec.kwargs["count"] == 2
    assert r.stdout.startswith("{")


def test_a_commands_own_option_wins(main, tmp_path):
    """``pcap decode -o jsonl`` keeps its own -o (a superset of the global formats)."""
    from tests.capture.helpers import exchange, write_conversation

    conv = write_conversation(tmp_path / "c.pcap", exchange(1))
    rc, out, err = main("pcap", "decode", str(conv), "-o", "jsonl")
    assert rc == 0, err
    assert len(out.splitlines()) == 2 and out.startswith('{"frame.number"')


def test_global_options_are_listed_in_each_commands_help(invoke):
    text = invoke("topic", "route", "-h").stdout
    for flag in ("--namesrv", "--timeout", "--output", "--serialize", "--profile", "--verbose"):
        assert flag in text


@pytest.mark.parametrize(("args", "says"), [
    (("-n", "", "cluster", "list"), "--namesrv: no name server address in ''"),
    (("cluster", "list", "-n", " ; "), "--namesrv: no name server address in ' ; '"),
    (("cluster", "list", "-n", "nohost"), "--namesrv: 'nohost' is not a host:port address"),
    (("broker", "status", "-b", "127.0.0.1"), "--broker: '127.0.0.1' is not a host:port address"),
    (("broker", "status", "-b", "127.0.0.1:99999"), "--broker: port 99999 of '127.0.0.1:99999' is out of range"),
    (("topic", "create", "X1", "-b", "broker-a"), "--broker: 'broker-a' is not a host:port address (a broker name, not an address)"),
    (("consumer", "connection", "-g", "G", "-b", "x:1:2:"), "--broker:"),
    (("ha", "status", "-b", "broker-a"), "--broker: 'broker-a' is not a host:port address"),
    (("--timeout", "nan", "cluster", "list"), "--timeout: 'nan' is not a positive number of seconds"),
    (("cluster", "list", "--timeout", "inf"), "--timeout: 'inf' is not a positive number of seconds"),
    (("cluster", "list", "--timeout", "-1"), "--timeout: '-1' is not a positive number of seconds"),
    (("cluster", "list", "-o", "xml"), "--output: 'xml' is not one of table, json, yaml"),
])
def test_malformed_addresses_and_values_are_usage_errors(main, args, says):
    rc, out, err = main(*args)
    assert rc == 2 and out == "", err
    assert err.startswith(f"error: {says}") and err.count("\n") == 1, err


def test_namesrv_addr_from_the_environment_is_checked(main, monkeypatch):
    monkeypatch.setenv("NAMESRV_ADDR", "somewhere")
    rc, _out, err = main("cluster", "list")
    assert rc == 2 and err.startswith("error: $NAMESRV_ADDR: 'somewhere' is not a host:port address")


def test_a_missing_config_file_named_by_mqctl_config_is_a_usage_error(main, monkeypatch, tmp_path):
    monkeypatch.setenv("MQCTL_CONFIG", str(tmp_path / "nope.yaml"))
    rc, out, err = main("cluster", "list")
    assert rc == 2 and out == ""
    assert err == f"error: $MQCTL_CONFIG names {tmp_path / 'nope.yaml'}, which does not exist\n"


@pytest.mark.parametrize(("profile", "line", "says"), [
    ("timeout: abc", 4, "profile 'p': timeout: 'abc' is not a number of seconds"),
    ("timeout: .nan", 4, "profile 'p': timeout: nan is not a positive number of seconds"),
    ("serialize: xml", 4, "profile 'p': serialize: 'xml' is not one of json, rocketmq"),
    ("namesrv: 'host-without-port'", 4, "profile 'p': namesrv: 'host-without-port' is not a host:port address"),
    ("namesvr: '1.2.3.4:9876'", 4, "profile 'p': unknown key 'namesvr'; did you mean 'namesrv'?"),
    ("output: xml", 4, "profile 'p': output: 'xml' is not one of table, json, yaml"),
])
def test_config_profile_values_are_checked_where_they_are(main, monkeypatch, tmp_path, profile, line, says):
    cfg = tmp_path / "config.yaml"
    cfg.write_text(f"default: p\nprofiles:\n  p:\n    {profile}\n")
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    rc, out, err = main("cluster", "list")
    assert rc == 2 and out == "", err
    assert err == f"error: {cfg}:{line}: {says}\n"


def test_config_file_structure_errors(main, monkeypatch, tmp_path):
    cfg = tmp_path / "config.yaml"
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    cfg.write_text("default: p\nprofile:\n  p: {}\n")
    rc, _out, err = main("cluster", "list")
    assert rc == 2 and err == f"error: {cfg}:2: unknown key 'profile'; did you mean 'profiles'?\n"
    cfg.write_text("default: q\nprofiles:\n  p: {}\n")
    rc, _out, err = main("cluster", "list")
    assert rc == 2 and "no profile named 'q' (profiles: p)" in err
    rc, _out, err = main("--profile", "zz", "cluster", "list")
    assert rc == 2 and err.startswith("error: --profile zz: ")


def test_profile_values_and_their_precedence(invoke, patch_op, monkeypatch, tmp_path):
    cfg = tmp_path / "config.yaml"
    cfg.write_text("default: p\nprofiles:\n  p: {namesrv: '1.1.1.1:9876', timeout: 7, output: json}\n")
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    r = invoke("cluster", "list")
    assert r.exit_code == 0 and r.stdout.startswith("{")
    assert rec.clients[0].namesrv_addrs == ["1.1.1.1:9876"] and rec.clients[0].timeout == 7.0
    monkeypatch.setenv("NAMESRV_ADDR", "2.2.2.2:9876")
    invoke("cluster", "list", "--timeout", "2")
    assert rec.clients[1].namesrv_addrs == ["2.2.2.2:9876"] and rec.clients[1].timeout == 2.0
    monkeypatch.setenv("MQCTL_CONFIG", os.devnull)
    invoke("cluster", "list")
    assert rec.clients[2].timeout == 3.0


def test_settings_table_and_fields_agree():
    """Every global option has its settings field (so that a new one, credentials say, is one
    table entry and one field)."""
    from dataclasses import fields

    from mqctl.settings import GLOBAL_OPTIONS, Settings

    names = {f.name for f in fields(Settings)}
    assert {o.name for o in GLOBAL_OPTIONS} <= names


def test_credentials_are_global_options_too(invoke, patch_op, monkeypatch, tmp_path):
    """The ACL credentials go through the same machinery: after the command as well, from one place
    (the command line, else the environment, else the profile), the secret never shown."""
    from wire.acl import Credentials

    for name in ("MQCTL_ACCESS_KEY", "MQCTL_SECRET_KEY", "MQCTL_SECURITY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    rec = patch_op("cluster", "cluster_list", ClusterList(()))
    assert invoke("cluster", "list", "--access-key", "ops-admin", "--secret-key", "s3cret!").exit_code == 0
    assert rec.clients[0].credentials == Credentials("ops-admin", "s3cret!")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("default: p\nprofiles:\n  p: {access_key: ops-admin, secret_key: 12345678, security_token: t}\n")
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    assert invoke("cluster", "list").exit_code == 0  # a YAML number is the secret's text
    assert rec.clients[1].credentials == Credentials("ops-admin", "12345678", "t")
    monkeypatch.setenv("MQCTL_ACCESS_KEY", "env-key")
    monkeypatch.setenv("MQCTL_SECRET_KEY", "env-secret")
    assert invoke("cluster", "list").exit_code == 0  # the environment's pair, not the profile's token
    assert rec.clients[2].credentials == Credentials("env-key", "env-secret")


def test_half_a_pair_is_a_usage_error_naming_its_place(main, monkeypatch, tmp_path):
    for name in ("MQCTL_ACCESS_KEY", "MQCTL_SECRET_KEY", "MQCTL_SECURITY_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MQCTL_CONFIG", os.devnull)
    rc, out, err = main("cluster", "list", "--secret-key", "only-the-secret")
    assert rc == 2 and err == "error: --access-key and --secret-key go together: give both\n"
    monkeypatch.setenv("MQCTL_SECRET_KEY", "only-the-secret")
    rc, out, err = main("cluster", "list")
    assert rc == 2 and err == "error: $MQCTL_ACCESS_KEY and $MQCTL_SECRET_KEY go together: set both\n"
    monkeypatch.delenv("MQCTL_SECRET_KEY")
    cfg = tmp_path / "config.yaml"
    cfg.write_text("default: p\nprofiles:\n  p:\n    secret_key: only-the-secret\n")
    monkeypatch.setenv("MQCTL_CONFIG", str(cfg))
    rc, out, err = main("cluster", "list")
    assert rc == 2 and err == f"error: {cfg}:4: profile 'p': access_key and secret_key go together\n"
    cfg.write_text("default: p\nprofiles:\n  p:\n    access_key: k\n    secret_key: [only-the-secret]\n")
    rc, out, err = main("cluster", "list")
    assert rc == 2 and err == f"error: {cfg}:5: profile 'p': secret_key: expected a non-empty text\n"
    assert "only-the-secret" not in out


def test_the_settings_never_show_the_secret(monkeypatch):
    from mqctl.settings import resolve

    monkeypatch.setenv("MQCTL_CONFIG", os.devnull)
    s = resolve({"access_key": ("k", "--access-key"), "secret_key": ("s3cret!", "--secret-key")})
    assert "s3cret!" not in repr(s) and "s3cret!" not in repr(s.credentials)
