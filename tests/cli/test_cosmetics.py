# Licensed under the Apache License, Version 2.0. See LICENSE.
"""What the help, the tables and the JSON look like (issue 15 items 18 and 29)."""

from __future__ import annotations

import json

from wire.admin.consumer import ClientConnection, ConnectionInfo


def _cut(text: str) -> list[str]:
    """Lines of a help text that end cut short (click's '...'), the usage line aside."""
    return [line for line in text.splitlines() if line.rstrip().endswith("...") and "Usage:" not in line]


def test_root_help_is_whole_and_claims_nothing_unbuilt(invoke):
    text = invoke("--help").stdout
    assert not _cut(text), _cut(text)
    assert "conformance" not in text.split("Commands:")[0]
    assert "record new ones." in " ".join(text.split())  # the pcap line, not cut


def test_option_help_shows_defaults_that_mean_something(invoke):
    text = invoke("cluster", "list", "-h").stdout
    verbose = next(line for line in text.splitlines() if "--verbose" in line)
    assert "[default: 0]" not in verbose
    flat = " ".join(text.split())
    assert "Seconds to wait for each connection and answer (default: 3)." in flat


def test_noun_help_is_not_cut(invoke):
    for noun in ("broker", "consumer", "namesrv", "topic", "message", "pcap"):
        assert not _cut(invoke(noun, "--help").stdout), noun


def test_producer_connection_json_has_no_consumer_fields(invoke, patch_op):
    info = ConnectionInfo("PG", (ClientConnection("10.0.0.9@1", "10.0.0.9:5555", "JAVA", "V4_9_8"),))
    patch_op("consumer", "producer_connection", info)
    doc = json.loads(invoke("-o", "json", "producer", "connection", "-g", "PG", "-t", "T").stdout)
    assert doc == {"group": "PG", "connections": [{"client_id": "10.0.0.9@1", "client_addr": "10.0.0.9:5555",
                                                    "language": "JAVA", "version": "V4_9_8"}]}


def test_latency_columns_have_three_decimals(invoke):
    from tests.conftest import ROOT

    text = invoke("pcap", "stats", str(ROOT / "fixtures" / "peers" / "peers-alions-produce-consume.pcap")).stdout
    rows = text.split("Requests by code\n", 1)[1].split("\n\n", 1)[0].splitlines()[1:]
    cells = [c for row in rows for c in row.split()[6:10] if c != "-"]
    assert cells and all(len(c.split(".")[1]) == 3 for c in cells), cells
