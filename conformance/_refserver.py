# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``python -m conformance._refserver namesrv|broker CONFIG``: one reference server in the
foreground, for :mod:`conformance.refcluster` (the suite's default target). It listens on
127.0.0.1 and the config's ``listenPort``; SIGTERM stops it (exit 0)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("namesrv", "broker"):
        sys.stderr.write("usage: python -m conformance._refserver namesrv|broker CONFIG\n")
        return 2
    role, path = argv[0], Path(argv[1])
    from reference_broker.runtime import run_foreground, setup_logging

    setup_logging()
    if role == "namesrv":
        from reference_broker.config import NamesrvConfig
        from reference_broker.namesrv import NameServer

        ns_cfg = NamesrvConfig.load(path)

        def make_ns() -> Any:
            return NameServer(ns_cfg, host="127.0.0.1", port=ns_cfg.listen_port)

        return run_foreground(make_ns, "namesrv")
    from reference_broker.broker import Broker
    from reference_broker.config import BrokerConfig

    cfg = BrokerConfig.load(path)

    def make_broker() -> Any:
        return Broker(cfg, host="127.0.0.1", port=cfg.listen_port)

    return run_foreground(make_broker, f"broker {cfg.broker_name}")


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
