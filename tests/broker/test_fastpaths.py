# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The broker's shortcuts on the send path against the general code they stand in for."""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from reference_broker.broker import Broker
from reference_broker.broker.processors.common import java_bool, validate_topic
from reference_broker.broker.processors.send import (
    _frame_or_response,
    ok_frame,
    ok_frame_tail,
    parse_send_header,
    put_status_response,
)
from reference_broker.broker.props import java_properties_text, send_properties_text
from reference_broker.store import PutResult, PutStatus
from tests.broker.helpers import broker_config
from wire import RemotingCommand, encode_command
from wire.headers import SendMessageRequestHeader, SendMessageRequestHeaderV2
from wire.message import create_offset_msg_id, decode_properties, encode_properties

# the keys producers send, plus the two the broker changes and some that share HashMap buckets
_KEYS = ["UNIQ_KEY", "KEYS", "TAGS", "WAIT", "CLUSTER", "MSG_REGION", "TRACE_ON", "INSTANCE_ID", "a", "b",
         "Aa", "BB", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "k12", "k13"]
_props = st.dictionaries(st.sampled_from(_KEYS) | st.text(min_size=1, max_size=6).filter(
    lambda k: "\x01" not in k and "\x02" not in k), st.text(min_size=1, max_size=8).filter(
    lambda v: "\x01" not in v and "\x02" not in v), max_size=16)


@given(_props, st.sampled_from(["DefaultCluster", "c1"]))
def test_send_properties_text_replays_the_general_puts(props: dict[str, str], cluster: str) -> None:
    text = encode_properties(props)
    # the general path: parse, put CLUSTER (a new key goes last), remove WAIT, write in HashMap order
    values = decode_properties(text)
    order = list(values)
    if "CLUSTER" not in values:
        order.append("CLUSTER")
    values["CLUSTER"] = cluster
    values.pop("WAIT", None)
    expected = java_properties_text(tuple(order), values)
    assert send_properties_text(decode_properties(text), cluster) == expected


_numbers = st.integers(0, 5000).map(str) | st.integers(0, 999_999_999).map(str) | st.sampled_from(
    ["-1", "+3", "0x1", "1_0", " 7", "", "٣", "007", "2147483647", "2147483648", "9" * 19])
_bools = st.sampled_from(["true", "false", "TRUE", "True", "yes", "1", ""])


@given(st.fixed_dictionaries({
    "a": st.text(min_size=1, max_size=4), "b": st.text(min_size=1, max_size=4), "c": st.just("TBW102"),
    "d": _numbers, "e": _numbers, "f": _numbers, "g": st.integers(0, 10**18 - 1).map(str) | _numbers,
    "h": _numbers,
}, optional={"i": st.text(max_size=6), "j": _numbers, "k": _bools, "l": _numbers, "m": _bools}),
    st.booleans())
def test_send_header_shortcut_agrees_with_the_typed_headers(ext: dict[str, str], v2: bool) -> None:
    if not v2:
        names = dict(zip("abcdefghijklm", ("producerGroup", "topic", "defaultTopic", "defaultTopicQueueNums",
                                           "queueId", "sysFlag", "bornTimestamp", "flag", "properties",
                                           "reconsumeTimes", "unitMode", "maxReconsumeTimes", "batch"), strict=True))
        ext = {names[k]: v for k, v in ext.items()}
    req = RemotingCommand.request(310 if v2 else 10, ext)
    typed_cls = SendMessageRequestHeaderV2 if v2 else SendMessageRequestHeader
    try:
        typed = typed_cls.from_ext(ext)
    except Exception as exc:  # the shortcut must fail the same way
        try:
            parse_send_header(req)
        except Exception as again:
            assert type(again) is type(exc)
        else:
            raise AssertionError(f"shortcut accepted what the typed header refuses: {exc}") from None
        return
    h = parse_send_header(req)
    assert (h.producer_group, h.topic, h.default_topic, h.default_topic_queue_nums, h.queue_id, h.sys_flag,
            h.born_timestamp, h.flag, h.properties, h.reconsume_times, h.unit_mode, h.max_reconsume_times,
            h.batch) == (typed.producer_group, typed.topic, typed.default_topic, typed.default_topic_queue_nums,
                         typed.queue_id, typed.sys_flag, typed.born_timestamp, typed.flag, typed.properties,
                         typed.reconsume_times, bool(typed.unit_mode), typed.max_reconsume_times,
                         bool(typed.batch))


def test_java_bool_is_parse_boolean() -> None:
    assert [java_bool(v) for v in (None, "true", "TRUE", "tRuE", "false", "", "1", "yes", " true")] == [
        False, True, True, True, False, False, False, False, False]


def test_topic_validation_is_the_same_from_the_cache() -> None:
    for topic in ("ok_Topic-1", "bad topic", "", "x" * 128, "%RETRY%g", "a|b", None, "ok_Topic-1", "bad topic"):
        first = validate_topic(topic)
        validate_topic.cache_clear()
        assert validate_topic(topic) == first


#: a broker that is never started (put_status_response reads its region, trace flag and stats)
_BROKER_ROOT = tempfile.TemporaryDirectory(prefix="fastpaths-")
_BROKER = Broker(broker_config(Path(_BROKER_ROOT.name)), host="127.0.0.1", port=0)


@given(st.integers(-(2**31), 2**31 - 1), st.integers(0, 2**63 - 1), st.integers(0, 1023),
       st.integers(0, 2**63 - 1), st.text(max_size=8), st.sampled_from(["true", "false"]),
       st.sampled_from(["BenchTopic", "TopicTest", ""]), st.booleans())
def test_send_ok_frame_template_is_the_encoded_response(opaque: int, offset: int, queue_id: int,
                                                       queue_offset: int, region: str, trace: str,
                                                       topic: str, v2: bool) -> None:
    """The SEND_OK frame the run path writes from its template is the frame of the response the
    one-at-a-time path builds (put_status_response) and encodes, byte for byte, and it counts
    the put alike."""
    broker = _BROKER
    broker.region_id, broker.trace_on_text = region, trace
    msg_id = create_offset_msg_id("127.0.0.1", 10911, offset)
    req = RemotingCommand.request(310 if v2 else 10, {"b" if v2 else "topic": topic} if topic else {},
                                  b"body", opaque=opaque)
    result = PutResult(PutStatus.PUT_OK, msg_id, queue_offset, offset, 100, 1, 1)
    before = _put_counts(broker)
    expected = encode_command(put_status_response(broker, req, result, queue_id))
    counted = _put_counts(broker)
    tail = ok_frame_tail(region, trace)
    assert ok_frame(opaque, msg_id, queue_id, queue_offset, tail) == expected
    assert _frame_or_response(broker, req, result, queue_id, tail) == expected
    after = _put_counts(broker)
    assert {k: after[k] - counted.get(k, 0) for k in after} == {k: counted[k] - before.get(k, 0) for k in counted}


def _put_counts(broker: Broker) -> dict[tuple[str, str], int]:
    """The messages each (statistic, key) of the broker's stats has counted."""
    return {key: sum(cell[0] for cell in buckets.values()) for key, buckets in broker.stats._items.items()}
