# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The pull processor's header shortcut (``parse_pull_header``) against the typed header it stands
in for (``wire.headers.PullMessageRequestHeader``): the same fields, or the same error."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from reference_broker.broker.processors.pull import parse_pull_header
from wire import RemotingCommand
from wire.headers import PullMessageRequestHeader

_numbers = st.integers(0, 5000).map(str) | st.integers(0, 10**18 - 1).map(str) | st.sampled_from(
    ["-1", "+3", "0x1", "1_0", " 7", "", "٣", "007", "2147483647", "2147483648", "9" * 18, "9" * 19,
     "99999999999999999999"])
_FIELDS = ("queueId", "queueOffset", "maxMsgNums", "sysFlag", "commitOffset", "suspendTimeoutMillis",
           "subVersion")


@given(st.fixed_dictionaries(
    {"consumerGroup": st.text(min_size=1, max_size=4), "topic": st.text(min_size=1, max_size=4),
     **{k: _numbers for k in _FIELDS}},
    optional={"subscription": st.text(max_size=6), "expressionType": st.sampled_from(["TAG", "SQL92", ""])}),
    st.sets(st.sampled_from((*_FIELDS, "consumerGroup", "topic")), max_size=1))
def test_pull_header_shortcut_agrees_with_the_typed_header(ext: dict[str, str], drop: set[str]) -> None:
    for k in drop:
        del ext[k]
    req = RemotingCommand.request(11, ext)
    try:
        t = PullMessageRequestHeader.from_ext(ext)
    except Exception as exc:  # the shortcut must fail the same way
        try:
            parse_pull_header(req)
        except Exception as again:
            assert type(again) is type(exc)
            assert str(again) == str(exc)
        else:
            raise AssertionError(f"shortcut accepted what the typed header refuses: {exc}") from None
        return
    h = parse_pull_header(req)
    assert (h.consumer_group, h.topic, h.queue_id, h.queue_offset, h.max_msg_nums, h.sys_flag, h.commit_offset,
            h.suspend_timeout_millis, h.subscription, h.sub_version, h.expression_type) == (
        t.consumer_group, t.topic, t.queue_id, t.queue_offset, t.max_msg_nums, t.sys_flag, t.commit_offset,
        t.suspend_timeout_millis, t.subscription, t.sub_version, t.expression_type)
