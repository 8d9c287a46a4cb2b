# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The delay-level rule of wire.message.delay, which the send path and the store's dispatch share:
``Integer.parseInt`` of DELAY, the cap at the last level, the schedule queue, the due time."""

from __future__ import annotations

import pytest

from wire.message import (
    capped_delay_level,
    delay_level_queue_id,
    delay_time_level,
    deliver_timestamp,
    java_parse_int,
    schedule_tags_code,
)

LEVELS = (1000, 5000, 10_000)


@pytest.mark.parametrize(("text", "value"), [
    ("1", 1), ("+3", 3), ("-2", -2), ("007", 7), ("0", 0), ("2147483647", 2**31 - 1),
    ("-2147483648", -(2**31)),
    # Character.digit takes any Unicode decimal digit of one UTF-16 unit
    ("\u0663", 3), ("\uff15", 5),
])
def test_java_parse_int_takes_what_integer_parse_int_takes(text: str, value: int) -> None:
    assert java_parse_int(text) == value


@pytest.mark.parametrize("text", [
    "", "+", "-", " 1", "1 ", "1_0", "1.5", "abc", "0x10", "2147483648", "-2147483649", "99999999999999999999",
    "\U0001d7ce",  # a decimal digit outside the BMP: two UTF-16 units, neither a digit to Java
])
def test_java_parse_int_refuses_what_integer_parse_int_refuses(text: str) -> None:
    with pytest.raises(ValueError) as err:
        java_parse_int(text)
    assert str(err.value) == f'For input string: "{text}"'


def test_delay_time_level_is_0_without_the_property() -> None:
    assert delay_time_level({}) == 0 and delay_time_level({"DELAY": "2"}) == 2
    with pytest.raises(ValueError):
        delay_time_level({"DELAY": "soon"})


def test_levels_queues_and_due_times() -> None:
    assert [capped_delay_level(n, 3) for n in (1, 3, 4, 99)] == [1, 3, 3, 3]
    assert [delay_level_queue_id(n) for n in (1, 18)] == [0, 17]
    assert [deliver_timestamp(n, 100, LEVELS) for n in (1, 2, 3)] == [1100, 5100, 10_100]
    # computeDeliverTimestamp: a level without a delay is due a second after its store time
    assert deliver_timestamp(4, 100, LEVELS) == 1100


@pytest.mark.parametrize(("delay", "due"), [
    ("1", 1100), ("3", 10_100), ("9", 10_100), ("0", None), ("-1", None), ("x", None), (None, None),
])
def test_schedule_tags_code(delay: str | None, due: int | None) -> None:
    props = {"TAGS": "T"} if delay is None else {"TAGS": "T", "DELAY": delay}
    assert schedule_tags_code(props, 100, LEVELS) == due
