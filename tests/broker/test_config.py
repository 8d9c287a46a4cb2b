# Licensed under the Apache License, Version 2.0. See LICENSE.
from __future__ import annotations

from pathlib import Path

import pytest

from reference_broker.config import (
    BrokerConfig,
    ConfigError,
    NamesrvConfig,
    format_properties,
    parse_delay_levels,
    parse_properties,
)


def test_properties_syntax() -> None:
    text = (
        "# comment\n! also a comment\n"
        "a=1\n"
        "b : two\n"
        "c three\n"
        "  d=  spaced value  \n"
        "e=long\\\n    continued\n"
        "f\\=g=h\n"
        "u=\\u0041\\t\n"
        "empty=\n"
    )
    got = {k: v for k, v, _ in parse_properties(text)}
    assert got == {"a": "1", "b": "two", "c": "three", "d": "spaced value  ", "e": "longcontinued",
                   "f=g": "h", "u": "A\t", "empty": ""}
    lines = {k: n for k, _, n in parse_properties(text)}
    assert lines["a"] == 3 and lines["e"] == 7


def test_format_round_trips() -> None:
    values = {"a b": "x=y", "k": " lead", "n": "1\n2", "p": "C:\\dir"}
    assert {k: v for k, v, _ in parse_properties(format_properties(values))} == values


def test_broker_config_from_official_layout(tmp_path: Path) -> None:
    f = tmp_path / "broker-a-s.properties"
    f.write_text("brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=1\ndeleteWhen=04\n"
                 "fileReservedTime=48\nbrokerRole=SLAVE\nflushDiskType=ASYNC_FLUSH\n"
                 "mapedFileSizeCommitLog=10485760\nlistenPort=10921\nnoSuchKey=1\n")
    cfg = BrokerConfig.load(f)
    assert (cfg.broker_name, cfg.broker_id, cfg.broker_role, cfg.is_master) == ("broker-a", 1, "SLAVE", False)
    assert cfg.mapped_file_size_commitlog == 10485760  # the old spelling is accepted
    assert cfg.file_reserved_hours == 48 and cfg.listen_port == 10921 and cfg.ha_listen_port == 10912
    assert cfg.unknown == [f"{f}:10: unknown key 'noSuchKey' (kept, not used)"]
    assert "noSuchKey=1\n" in cfg.as_properties()


def test_defaults_are_the_java_ones() -> None:
    cfg = BrokerConfig()
    assert cfg.listen_port == 10911 and cfg.mapped_file_size_commitlog == 1 << 30
    assert cfg.mapped_file_size_consume_queue == 6000000 and cfg.file_reserved_hours == 72
    assert cfg.default_topic_queue_nums == 8 and cfg.auto_create_topic and cfg.broker_role == "ASYNC_MASTER"
    assert cfg.message_delay_levels[:3] == [1000, 5000, 10000] and cfg.message_delay_levels[-1] == 7_200_000
    assert cfg.commitlog_dir == cfg.store_root / "commitlog"


@pytest.mark.parametrize(("line", "message"), [
    ("listenPort=abc", "x.properties:2: listenPort: expected an integer (Java int), got 'abc'"),
    ("brokerRole=BOSS", "x.properties:2: brokerRole: expected one of ASYNC_MASTER, SYNC_MASTER, SLAVE"),
    ("autoCreateTopicEnable=yes", "x.properties:2: autoCreateTopicEnable: expected true or false"),
    # Integer.parseInt and Long.parseLong: the Java field's range, no '_' (Java skips such values)
    ("brokerPermission=2147483648", "x.properties:2: brokerPermission: expected an integer (Java int), "
                                    "got '2147483648'"),
    ("brokerId=9223372036854775808", "brokerId: expected an integer (Java long)"),
    ("maxMessageSize=1_000", "maxMessageSize: expected an integer (Java int), got '1_000'"),
    ("maxMessageSize=" + "9" * 5000, "maxMessageSize: expected an integer (Java int), got '9999999999"),
    # our own bounds: a negative budget would close every connection holding part of a frame
    ("serverMaxBufferedBytes=-1", "x.properties:2: serverMaxBufferedBytes: expected 0 (off) or more, got '-1'"),
    ("serverFrameReadTimeoutSeconds=-5", "serverFrameReadTimeoutSeconds: expected 0 (off) or more"),
])
def test_bad_values_name_file_and_line(line: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message.replace("(", r"\(").replace(")", r"\)")) as caught:
        BrokerConfig(parse_properties("# x\n" + line), "x.properties")
    assert len(str(caught.value)) < 200, "a bad value is quoted as a short excerpt"


def test_numbers_read_as_java_reads_them() -> None:
    cfg = BrokerConfig(parse_properties(
        "brokerId=9223372036854775807\nmaxMessageSize=+4096\nlistenPort=\u0661\u0660\u0669\u0661\u0661\n"
        "brokerPermission=-2147483648"), "x")
    assert cfg.int("brokerId") == 2**63 - 1 and cfg.max_message_size == 4096
    assert cfg.listen_port == 10911 and cfg.int("brokerPermission") == -(2**31)


def test_delete_when_is_a_string_of_hours() -> None:
    assert BrokerConfig(parse_properties("deleteWhen=04;05"), "x").delete_when == "04;05"


def test_slave_needs_an_id_and_missing_file() -> None:
    with pytest.raises(ConfigError, match="brokerId > 0"):
        BrokerConfig(parse_properties("brokerRole=SLAVE"), "s")
    with pytest.raises(ConfigError, match="no such file"):
        BrokerConfig.load("/nonexistent/broker.properties")
    with pytest.raises(ConfigError, match="bad level"):
        parse_delay_levels("1s 5x")


def test_namesrv_config_file_is_where_updates_go(tmp_path: Path) -> None:
    f = tmp_path / "namesrv.properties"
    f.write_text("listenPort=9886\n")
    assert NamesrvConfig.load(f).get("configStorePath") == str(f)


def test_namesrv_config() -> None:
    cfg = NamesrvConfig(parse_properties("listenPort=9886\nscanNotActiveBrokerInterval=1000\n"), "n")
    assert cfg.listen_port == 9886 and cfg.scan_interval_ms == 1000 and cfg.broker_expired_ms == 120000
    assert "kvConfigPath=" in cfg.as_properties()


def test_ha_master_address_is_a_broker_key() -> None:
    """``haMasterAddress`` (MessageStoreConfig, default null) is known to a broker from a file and from
    the command line alike, and unknown to a name server."""
    cfg = BrokerConfig(parse_properties("brokerId=1\nbrokerRole=SLAVE\nhaMasterAddress=127.0.0.1:10912\n"), "b",
                       overrides={"haMasterAddress": " 127.0.0.1:10922 "})
    assert cfg.unknown == [] and cfg.get("haMasterAddress") == "127.0.0.1:10922"
    assert NamesrvConfig(parse_properties("haMasterAddress=x\n"), "n").unknown == [
        "n:1: unknown key 'haMasterAddress' (kept, not used)"]
