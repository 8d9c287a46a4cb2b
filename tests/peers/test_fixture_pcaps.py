# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The pcaps of ``fixtures/peers/`` (real clients and mqctl's admin commands against the
reference servers) decode cleanly, hold the conversation their README describes, match their
line of ``MANIFEST.tsv``, and decode to exactly their expected ``.jsonl``.

They were recorded by ``tests/peers/record_fixtures.py``; no peer is needed to read them.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.peers.bodies import make_body
from wire import RequestCode, ResponseCode
from wire.capture import CommandRow, ProblemRow, decode_capture
from wire.message import MessageSysFlag, decode_messages

R = RequestCode
PULL_SUSPEND = 0x2  # PullSysFlag.FLAG_SUSPEND
FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "peers"

#: file → (requests that must be there, run id and sizes of the messages sent, sending code)
EXPECTED: dict[str, tuple[set[int], str | None, tuple[int, ...], int | None]] = {
    "peers-broker-registration": ({R.REGISTER_BROKER, R.UNREGISTER_BROKER}, None, (), None),
    "peers-cpp-produce-consume": (
        {R.GET_ROUTEINFO_BY_TOPIC, R.SEND_MESSAGE, R.HEART_BEAT, R.GET_CONSUMER_LIST_BY_GROUP,
         R.QUERY_CONSUMER_OFFSET, R.PULL_MESSAGE, R.UPDATE_CONSUMER_OFFSET, R.NOTIFY_CONSUMER_IDS_CHANGED,
         R.UNREGISTER_CLIENT, R.REGISTER_BROKER},
        "cppfix", (200, 200, 5000), R.SEND_MESSAGE),
    "peers-alions-produce-consume": (
        {R.GET_ROUTEINFO_BY_TOPIC, R.SEND_MESSAGE_V2, R.HEART_BEAT, R.GET_CONSUMER_LIST_BY_GROUP,
         R.QUERY_CONSUMER_OFFSET, R.PULL_MESSAGE, R.UPDATE_CONSUMER_OFFSET, R.UNREGISTER_CLIENT},
        "jsfix", (200, 200, 5000), R.SEND_MESSAGE_V2),
    "mqctl-admin-commands": (
        {R.GET_BROKER_CLUSTER_INFO, R.GET_BROKER_RUNTIME_INFO, R.UPDATE_AND_CREATE_TOPIC, R.GET_ROUTEINFO_BY_TOPIC,
         R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, R.SEND_MESSAGE_V2, R.QUERY_MESSAGE, R.GET_TOPIC_STATS_INFO,
         R.GET_BROKER_CONFIG, R.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, R.PUT_KV_CONFIG, R.GET_KV_CONFIG,
         R.DELETE_KV_CONFIG, R.GET_NAMESRV_CONFIG, R.GET_BROKER_HA_STATUS, R.DELETE_TOPIC_IN_BROKER,
         R.DELETE_TOPIC_IN_NAMESRV},
        None, (), None),
}
#: the answers other than SUCCESS that a capture holds on purpose
ERRORS_MEANT = {"mqctl-admin-commands": {ResponseCode.TOPIC_NOT_EXIST, ResponseCode.REQUEST_CODE_NOT_SUPPORTED}}


def _manifest() -> dict[str, list[str]]:
    lines = (FIXTURES / "MANIFEST.tsv").read_text(encoding="utf-8").splitlines()
    return {cols[0]: cols for cols in (line.split("\t") for line in lines if line and not line.startswith("#"))}


def test_every_fixture_has_a_manifest_line_and_an_expected_decode() -> None:
    pcaps = sorted(p.name for p in FIXTURES.glob("*.pcap"))
    manifest = _manifest()
    assert sorted(manifest) == pcaps
    assert sorted(f"{name}.pcap" for name in EXPECTED) == pcaps
    for cols in manifest.values():
        assert len(cols) == 8 and (FIXTURES / cols[1]).is_file(), cols


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_pcap_matches_its_manifest_line(name: str) -> None:
    rows = list(decode_capture(FIXTURES / f"{name}.pcap"))
    commands = [r for r in rows if isinstance(r, CommandRow)]
    requests = sum(1 for r in commands if not r.command.is_response)
    found = [len({r.conv for r in commands}), len(commands), requests, len(commands) - requests,
             sum(1 for r in rows if isinstance(r, ProblemRow))]
    assert found == [int(x) for x in _manifest()[f"{name}.pcap"][2:7]]


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_pcap_decodes_to_its_expected_output(name: str) -> None:
    # the real command, as a user runs it; the expected file is what it printed when recorded
    argv = [sys.executable, "-m", "mqctl.app", "pcap", "decode", "-o", "jsonl", "--bodies", "decoded",
            "--strict", str(FIXTURES / f"{name}.pcap")]
    done = subprocess.run(argv, capture_output=True, timeout=120, cwd=FIXTURES.parents[1])
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    ours = done.stdout.decode().splitlines()
    expected = (FIXTURES / f"{name}.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(ours) == len(expected)
    for number, (got, want) in enumerate(zip(ours, expected, strict=True), 1):
        assert got == want, f"{name}.jsonl line {number} differs"


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_fixture_pcap(name: str) -> None:
    path = FIXTURES / f"{name}.pcap"
    if not path.exists():
        pytest.skip(f"{path} has not been recorded (python -m tests.peers.record_fixtures)")
    rows = list(decode_capture(path))
    problems = [r for r in rows if isinstance(r, ProblemRow)]
    assert not problems, problems
    commands = [r for r in rows if isinstance(r, CommandRow)]
    requests = [r for r in commands if not r.command.is_response]
    answered = {r.request.number for r in commands if r.command.is_response and r.request is not None}
    required, run, sizes, send_code = EXPECTED[name]
    assert required <= {r.command.code for r in requests}
    for req in requests:  # every two-way request got its answer, and none failed but expected ones
        # (but a long-polling pull still held when its consumer shut down is never answered)
        held = req.command.code == R.PULL_MESSAGE and int(req.command.ext_fields["sysFlag"]) & PULL_SUSPEND
        assert req.command.is_oneway or req.number in answered or held, req.command
    meant = ERRORS_MEANT.get(name, {ResponseCode.TOPIC_NOT_EXIST, ResponseCode.PULL_NOT_FOUND})
    for resp in (r for r in commands if r.command.is_response):
        assert resp.command.code == ResponseCode.SUCCESS or resp.command.code in meant, resp.command
    if run is None:
        return

    sends = [r for r in commands if r.command.is_response and r.request is not None
             and r.request.command.code == send_code]
    assert [r.command.code for r in sends] == [ResponseCode.SUCCESS] * len(sizes)
    pulled = [m for r in commands if r.command.is_response and r.request is not None
              and r.request.command.code == R.PULL_MESSAGE and r.command.code == ResponseCode.SUCCESS
              for m in decode_messages(r.command.body or b"")]
    bodies = sorted(m.decompressed_body() for m in pulled if not m.topic.startswith("%RETRY%"))
    assert bodies == sorted(make_body(run, i, size).encode() for i, size in enumerate(sizes))
    for m in pulled:
        assert bool(m.sys_flag & MessageSysFlag.COMPRESSED_FLAG) == (len(m.decompressed_body()) > 4096)
