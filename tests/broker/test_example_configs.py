# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The example configurations under docs/configs load cleanly and describe the intended layouts.

Each file goes through the servers' own reader (``BrokerConfig.load`` / ``NamesrvConfig.load``),
which knows every 4.9.8 key: an unknown key there would be silently ignored by a Java broker and
only warned about by ours, so it is a mistake in the example.
"""

from __future__ import annotations

import re
from itertools import combinations
from pathlib import Path

import pytest

from reference_broker.config import BrokerConfig, NamesrvConfig

CONFIGS = Path(__file__).resolve().parents[2] / "docs" / "configs"

#: (layout, file stem) -> (brokerName, brokerRole, brokerId, listenPort)
EXPECTED: dict[tuple[str, str], tuple[str, str, int, int]] = {
    ("2m-noslave", "broker-a"): ("broker-a", "ASYNC_MASTER", 0, 10911),
    ("2m-noslave", "broker-b"): ("broker-b", "ASYNC_MASTER", 0, 10931),
    ("2m-2s-async", "broker-a"): ("broker-a", "ASYNC_MASTER", 0, 10911),
    ("2m-2s-async", "broker-a-s"): ("broker-a", "SLAVE", 1, 10921),
    ("2m-2s-async", "broker-b"): ("broker-b", "ASYNC_MASTER", 0, 10931),
    ("2m-2s-async", "broker-b-s"): ("broker-b", "SLAVE", 1, 10941),
    ("2m-2s-sync", "broker-a"): ("broker-a", "SYNC_MASTER", 0, 10911),
    ("2m-2s-sync", "broker-a-s"): ("broker-a", "SLAVE", 1, 10921),
    ("2m-2s-sync", "broker-b"): ("broker-b", "SYNC_MASTER", 0, 10931),
    ("2m-2s-sync", "broker-b-s"): ("broker-b", "SLAVE", 1, 10941),
}
NAMESRV_PORT = 9876


def _load(layout: str, stem: str) -> BrokerConfig:
    return BrokerConfig.load(CONFIGS / layout / f"{stem}.properties")


def _ports(cfg: BrokerConfig) -> set[int]:
    # a broker binds listenPort - 2 (VIP channel), listenPort and, in Java, listenPort + 1 (HA)
    return {cfg.listen_port - 2, cfg.listen_port, cfg.ha_listen_port}


def test_every_file_is_expected() -> None:
    found = {(p.parent.name, p.stem) for p in CONFIGS.glob("*/*.properties")}
    assert found == set(EXPECTED)
    assert sorted(p.name for p in CONFIGS.glob("*.properties")) == ["namesrv.properties"]


@pytest.mark.parametrize(("layout", "stem"), sorted(EXPECTED), ids=lambda v: str(v))
def test_broker_file(layout: str, stem: str) -> None:
    cfg = _load(layout, stem)
    name, role, broker_id, port = EXPECTED[(layout, stem)]
    assert cfg.unknown == []
    assert (cfg.cluster_name, cfg.broker_name, cfg.broker_role, cfg.broker_id) == (
        "DefaultCluster", name, role, broker_id)
    assert cfg.listen_port == port
    # Java ignores haListenPort and always uses listenPort + 1 (BrokerStartup)
    assert cfg.ha_listen_port == port + 1
    assert cfg.namesrv_addrs == [f"127.0.0.1:{NAMESRV_PORT}"]
    assert (cfg.broker_ip1, cfg.get("brokerIP2")) == ("127.0.0.1", "127.0.0.1")
    # the keys every official layout file carries, unchanged
    assert (cfg.get("deleteWhen"), cfg.int("fileReservedTime"), cfg.flush_disk_type) == (
        "04", 48, "ASYNC_FLUSH")
    assert cfg.store_root == Path(f"/tmp/rocketmq/{layout}/{stem}")
    assert cfg.commitlog_dir == cfg.store_root / "commitlog"


@pytest.mark.parametrize("layout", sorted({layout for layout, _ in EXPECTED}))
def test_layout_fits_one_machine(layout: str) -> None:
    cfgs = [_load(layout, stem) for lay, stem in sorted(EXPECTED) if lay == layout]
    for a, b in combinations(cfgs, 2):
        assert not _ports(a) & _ports(b), (a.source, b.source)
        assert not a.store_root.is_relative_to(b.store_root)
        assert not b.store_root.is_relative_to(a.store_root)
    assert all(NAMESRV_PORT not in _ports(c) for c in cfgs)
    masters = {c.broker_name for c in cfgs if c.is_master}
    slaves = {c.broker_name for c in cfgs if not c.is_master}
    assert masters == {"broker-a", "broker-b"}
    assert slaves == (set() if layout == "2m-noslave" else masters)


def test_namesrv_file() -> None:
    path = CONFIGS / "namesrv.properties"
    cfg = NamesrvConfig.load(path)
    assert cfg.unknown == []
    assert cfg.listen_port == NAMESRV_PORT
    assert cfg.kv_config_path == Path("/tmp/rocketmq/namesrv/kvConfig.json")
    # UPDATE_NAMESRV_CONFIG writes configStorePath: it must not be the example file itself
    assert Path(cfg.get("configStorePath")) == Path("/tmp/rocketmq/namesrv/namesrv.properties")
    assert Path(cfg.get("configStorePath")).resolve() != path.resolve()


def test_readme_table_matches_the_files() -> None:
    text = (CONFIGS / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(\S+?)/(\S+?)\.properties\]\(\S+\) \| (\S+) \| (\S+) \| (\d+) \| "
                      r"(\d+), (\d+), (\d+) \| `(\S+)` \|$", text, re.M)
    assert {(lay, stem) for lay, stem, *_ in rows} == set(EXPECTED)
    for lay, stem, name, role, bid, vip, port, ha, root in rows:
        cfg = _load(lay, stem)
        assert (name, role, int(bid)) == (cfg.broker_name, cfg.broker_role, cfg.broker_id)
        assert (int(vip), int(port), int(ha)) == (
            cfg.listen_port - 2, cfg.listen_port, cfg.ha_listen_port)
        assert Path(root) == cfg.store_root
