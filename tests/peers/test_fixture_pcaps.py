# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The pcaps of ``fixtures/peers/`` (real clients against the reference servers) decode cleanly
and hold the conversation their README describes.

They were recorded by ``tests/peers/record_fixtures.py``; no peer is needed to read them.
"""

from __future__ import annotations

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
}


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
    for resp in (r for r in commands if r.command.is_response):
        assert resp.command.code in (ResponseCode.SUCCESS, ResponseCode.TOPIC_NOT_EXIST,
                                     ResponseCode.PULL_NOT_FOUND), resp.command
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
