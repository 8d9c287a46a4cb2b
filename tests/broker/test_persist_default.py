# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A broker started without -c persists UPDATE_BROKER_CONFIG where Java does:
~/store/config/broker.properties (BrokerPathConfigHelper's default), whatever storePathRootDir is."""

from __future__ import annotations

from pathlib import Path

import pytest

from reference_broker.broker import Broker
from reference_broker.config import default_broker_config_path
from tests.broker.helpers import broker_config, client, run
from wire import RemotingCommand, ResponseCode


def test_update_broker_config_without_c_goes_to_home_store_config(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    path = default_broker_config_path()
    assert path == tmp_path / "home" / "store" / "config" / "broker.properties"

    async def main() -> None:
        cfg = broker_config(tmp_path / "elsewhere")
        cfg.store_path = str(path)  # what `mqctl broker start` without -c sets
        async with Broker(cfg, host="127.0.0.1", port=0) as b:
            conn = await client(b)
            r = await conn.request(RemotingCommand.request(25, None, b"brokerPermission=4\n"))
            assert r.code == ResponseCode.SUCCESS
            await conn.aclose()

    run(main())
    assert "brokerPermission=4" in path.read_text().splitlines()
