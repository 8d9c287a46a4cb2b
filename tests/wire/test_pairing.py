# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.pairing: responses find their requests by opaque, the other way; oneway requests wait for
nothing. The same piece serves wire.aio (Waiting) and wire.capture (Pairing)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wire import FLAG_ONEWAY, FLAG_RESPONSE, RemotingCommand
from wire.pairing import Pairing, Waiting, expects_response, is_oneway, is_response, pair_by_opaque


def test_the_flag_bits() -> None:
    assert is_response(FLAG_RESPONSE) and is_response(FLAG_RESPONSE | FLAG_ONEWAY)
    assert is_oneway(FLAG_ONEWAY) and not is_oneway(FLAG_RESPONSE | FLAG_ONEWAY) and not is_oneway(0)
    assert expects_response(0) and expects_response(4) and not expects_response(FLAG_ONEWAY)
    assert not expects_response(FLAG_RESPONSE)


def test_responses_answer_the_other_direction_in_any_order() -> None:
    p: Pairing[str] = Pairing()
    assert p.see(0, 0, 1, "req1") is None
    assert p.see(0, 0, 2, "req2") is None
    assert p.see(0, FLAG_ONEWAY, 3, "oneway") is None
    assert p.see(1, 0, 1, "server request") is None  # brokers send requests to clients too
    assert p.unanswered == 3
    assert p.see(1, FLAG_RESPONSE, 2, "resp2") == "req2"
    assert p.see(1, FLAG_RESPONSE, 3, "resp3") is None  # the oneway request waits for nothing
    assert p.see(0, FLAG_RESPONSE, 1, "client answer") == "server request"
    assert p.see(1, FLAG_RESPONSE, 1, "resp1") == "req1"
    assert p.see(1, FLAG_RESPONSE, 1, "again") is None  # answered once
    assert p.unanswered == 0


def test_waiting_is_one_side() -> None:
    w: Waiting[str] = Waiting()
    assert w.expect(0, 7, "a") and not w.expect(FLAG_ONEWAY, 8, "b") and not w.expect(FLAG_RESPONSE, 9, "c")
    assert w.expect(0, 7, "a2")  # the same opaque again: the later request takes its place
    assert w.answer(7) == "a2" and w.answer(7) is None and not w


commands = st.lists(st.tuples(st.integers(0, 1), st.integers(0, 3), st.integers(0, 5)), max_size=40)


@given(commands)
def test_pair_by_opaque_is_the_rule(seq: list[tuple[int, int, int]]) -> None:
    # a direct statement of the rule: the latest unanswered non-oneway request of the other
    # direction with the same opaque
    cmds = [(d, RemotingCommand(code=i, language=0, version=0, opaque=op, flag=flag, remark=None,
                                ext_fields={}, body=None))
            for i, (d, flag, op) in enumerate(seq)]
    want = []
    open_: dict[tuple[int, int], RemotingCommand] = {}
    for d, c in cmds:
        if c.flag & FLAG_RESPONSE:
            req = open_.pop((1 - d, c.opaque), None)
            if req is not None:
                want.append((req, c))
        elif not c.flag & FLAG_ONEWAY:
            open_[(d, c.opaque)] = c
    assert list(pair_by_opaque(cmds)) == want
