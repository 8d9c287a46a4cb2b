# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.fastjson: the fastjson-compatible reader and writer.

Literal vectors come from PROTOCOL.md §4 and §10 (fastjson 1.2.83 output on stand-in classes) and
from reading fastjson's ``SerializeWriter``/``MapSerializer``/``RyuDouble`` (1.2.83).
"""

from __future__ import annotations

import json
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wire import DecodeError
from wire import fastjson as fastjson_module
from wire.fastjson import FrozenObject, dumps, java_double, loads, quote

ROUTE_LEGACY = ('{"brokerDatas":[{"brokerAddrs":{0:"192.168.0.2:10911",1:"192.168.0.3:10911"},"brokerName":'
                '"broker-a","cluster":"DefaultCluster"}],"filterServerTable":{},"queueDatas":[{"brokerName":'
                '"broker-a","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}')
ROUTE_STANDARD = ROUTE_LEGACY.replace('{0:"192.168.0.2:10911",1:', '{"0":"192.168.0.2:10911","1":')


def test_string_list_vector() -> None:
    # RemotingSerializableTest: the compact form of a bean holding a string list
    text = '{"stringList":["a","o","e","i","u","v"]}'
    value = {"stringList": ["a", "o", "e", "i", "u", "v"]}
    assert dumps(value) == text
    assert loads(text.encode()) == value


def test_long_keyed_map_default_form_is_not_json_but_standard_form_is() -> None:
    # RemotingSerializableTest: Map<Long,String> {0 -> "Test"}
    value = {0: "Test"}
    plain, standard = dumps(value), dumps(value, standard=True)
    assert plain == '{0:"Test"}'
    assert standard == '{"0":"Test"}'
    with pytest.raises(json.JSONDecodeError):
        json.loads(plain)
    assert json.loads(standard) == {"0": "Test"}
    assert loads(plain) == {0: "Test"}


@pytest.mark.parametrize("text", [ROUTE_LEGACY, ROUTE_STANDARD], ids=["legacy", "standard"])
def test_route_bodies_read_back_to_the_same_text(text: str) -> None:
    value = loads(text.encode())
    assert value["brokerDatas"][0]["brokerName"] == "broker-a"
    addrs = value["brokerDatas"][0]["brokerAddrs"]
    assert {int(k): v for k, v in addrs.items()} == {0: "192.168.0.2:10911", 1: "192.168.0.3:10911"}
    assert dumps(value, standard=text is ROUTE_STANDARD) == text


def test_route_legacy_rewritten_in_standard_form() -> None:
    assert dumps(loads(ROUTE_LEGACY), standard=True) == ROUTE_STANDARD


# --------------------------------------------------------------------------- strings


@pytest.mark.parametrize(("text", "plain", "browser"), [
    ("plain", '"plain"', '"plain"'),
    ('q"b\\s/', '"q\\"b\\\\s/"', '"q\\"b\\\\s\\/"'),
    ("\b\t\n\f\r", '"\\b\\t\\n\\f\\r"', '"\\b\\t\\n\\f\\r"'),
    ("\x00\x01\x0b\x1f", '"\\u0000\\u0001\\u000B\\u001F"', '"\\u0000\\u0001\\u000B\\u001F"'),
    ("\x7f\x80\x9f\xa0", '"\\u007F\\u0080\\u009F\xa0"', '"\\u007F\\u0080\\u009F\\u00A0"'),
    ("a\u2028b\u2029", '"a\\u2028b\\u2029"', '"a\\u2028b\\u2029"'),
    ("é中", '"é中"', '"\\u00E9\\u4E2D"'),
    ("\U0001F600", '"\U0001F600"', '"\\uD83D\\uDE00"'),
])
def test_string_escaping(text: str, plain: str, browser: str) -> None:
    # SerializeWriter.writeStringWithDoubleQuote, default features and BrowserCompatible
    assert quote(text) == plain
    assert quote(text, browser=True) == browser
    assert loads(plain) == text
    assert loads(browser) == text


# --------------------------------------------------------------------------- numbers


@pytest.mark.parametrize(("value", "text"), [
    (0.0, "0.0"), (-0.0, "-0.0"), (0.4, "0.4"), (1.0, "1.0"), (100.0, "100.0"), (-2.5, "-2.5"),
    (0.001, "0.001"), (0.001234, "0.001234"), (0.0001, "1.0E-4"), (1.5e-4, "1.5E-4"),
    (9999999.0, "9999999.0"), (1e7, "1.0E7"), (12345678.9, "1.23456789E7"), (1e21, "1.0E21"),
    (123456.789, "123456.789"), (0.06663668016059439, "0.06663668016059439"), (5e-324, "4.9E-324"),
])
def test_doubles_are_written_like_java(value: float, text: str) -> None:
    # RyuDouble: Double.toString layout, plain in [1e-3, 1e7), else d.dddE[-]n
    assert java_double(value) == text
    assert float(loads(text)) == value


@pytest.mark.parametrize(("value", "standard", "text"), [
    (9007199254740991, True, "9007199254740991"),
    (9007199254740992, True, '"9007199254740992"'),
    (-9007199254740991, True, "-9007199254740991"),
    (-9007199254740992, True, '"-9007199254740992"'),
    (9223372036854775807, True, '"9223372036854775807"'),
    (9223372036854775807, False, "9223372036854775807"),
])
def test_browser_compatible_longs(value: int, standard: bool, text: str) -> None:
    # SerializeWriter.writeLong: BrowserCompatible quotes longs beyond +/-9007199254740991
    assert dumps(value, standard=standard) == text


def test_nan_and_infinity_are_not_written_or_read() -> None:
    for bad in (float("nan"), float("inf")):
        with pytest.raises(ValueError):
            dumps(bad)
    for text in (b"NaN", b'{"a":Infinity}', b"[-Infinity]"):
        with pytest.raises(DecodeError):
            loads(text)


# --------------------------------------------------------------------------- maps


def test_map_sort_field_orders_keys_naturally() -> None:
    # MapSortField copies the map into a TreeMap: numbers numerically, strings by UTF-16 units
    assert dumps({10: "x", 2: "y", -1: "z"}) == '{10:"x",2:"y",-1:"z"}'
    assert dumps({10: "x", 2: "y", -1: "z"}, standard=True) == '{"-1":"z","2":"y","10":"x"}'
    # U+FF61 sorts after the surrogate pair of U+1F600 in Java (0xD83D < 0xFF61)
    text = dumps({"\uff61": 1, "\U0001F600": 2, "B": 3, "a": 4}, standard=True)
    assert text == '{"B":3,"a":4,"\\uD83D\\uDE00":2,"\\uFF61":1}'


def test_null_map_values_are_left_out_but_list_items_are_kept() -> None:
    assert dumps({"a": None, "b": [None, 1]}) == '{"b":[null,1]}'


def test_object_keys() -> None:
    key = FrozenObject({"brokerName": "a", "queueId": 0, "topic": "T/x"})
    value = {key: {"brokerOffset": 5}}
    plain = '{{"brokerName":"a","queueId":0,"topic":"T/x"}:{"brokerOffset":5}}'
    standard = '{"{\\"brokerName\\":\\"a\\",\\"queueId\\":0,\\"topic\\":\\"T\\/x\\"}":{"brokerOffset":5}}'
    assert dumps(value) == plain
    assert dumps(value, standard=True) == standard
    decoded = loads(plain)
    assert decoded == value and hash(next(iter(decoded))) == hash(key)
    assert json.loads(loads(standard.encode()).popitem()[0]) == dict(key)


# --------------------------------------------------------------------------- the lenient reader


@pytest.mark.parametrize(("text", "value"), [
    ("{'a':'b'}", {"a": "b"}),
    ("{code:105,language:'CPP'}", {"code": 105, "language": "CPP"}),
    ("{0:1,-2:3}", {0: 1, -2: 3}),
    ('{"a":1,}', {"a": 1}),
    (' { "a" : [ 1 , 2.50 ] } \n', {"a": [1, Decimal("2.50")]}),
    ('{["x",1]:2}', {("x", 1): 2}),
])
def test_lenient_forms(text: str, value: Any) -> None:
    assert loads(text) == value


@pytest.mark.parametrize(("data", "offset"), [
    (b'{"a":}', 5),
    (b'{"a":1', 6),
    ('{"é":x}'.encode(), 6),  # offsets count bytes: "é" is two
    (b"\xff{}", 0),
    (b'{"a":"\\q"}', 6),  # the backslash
    (b"{" + b"9" * 5000 + b":1}", 1),
])
def test_errors_say_where(data: bytes, offset: int) -> None:
    with pytest.raises(DecodeError) as info:
        loads(data)
    assert info.value.offset == offset


# --------------------------------------------------------------------------- properties

_text = st.text(st.characters(exclude_categories=("Cs",)), max_size=8)
_scalars = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | _text | st.floats(
    allow_nan=False, allow_infinity=False)
_json = st.recursive(
    _scalars,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text | st.integers(-(2**40), 2**40), inner,
                                                                max_size=4),
    max_leaves=20)


def _expected(v: Any, standard: bool) -> Any:
    """What the value reads back as: nulls in objects dropped, doubles as Decimal, and in the
    standard form every key a string and big longs strings."""
    if isinstance(v, dict):
        return {(str(k) if standard else k): _expected(x, standard) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_expected(x, standard) for x in v]
    if isinstance(v, float):
        return Decimal(java_double(v))
    if standard and isinstance(v, int) and not isinstance(v, bool) and abs(v) > 9007199254740991:
        return str(v)
    return v


def _keys_clash(v: Any) -> bool:
    if isinstance(v, dict):
        keys = [str(k) for k in v]
        return len(set(keys)) != len(keys) or any(_keys_clash(x) for x in v.values())
    return isinstance(v, list) and any(_keys_clash(x) for x in v)


@settings(max_examples=300)
@given(_json, st.booleans())
def test_dumps_then_loads_round_trips(value: Any, standard: bool) -> None:
    if standard and _keys_clash(value):  # 1 and "1" are one key once quoted
        return
    text = dumps(value, standard=standard)
    assert loads(text.encode("utf-8")) == _expected(value, standard)
    if standard:
        assert text.isascii()
        json.loads(text)  # the standard form is strict JSON


@settings(max_examples=500)
@given(st.binary(max_size=200))
def test_arbitrary_bytes_give_a_value_or_decode_error(data: bytes) -> None:
    try:
        loads(data)
    except DecodeError:
        pass


@settings(max_examples=300)
@given(st.sampled_from([ROUTE_LEGACY.encode(), ROUTE_STANDARD.encode()]), st.data())
def test_mutated_route_bodies_give_a_value_or_decode_error(base: bytes, data: st.DataObject) -> None:
    buf = bytearray(base)
    for _ in range(data.draw(st.integers(1, 4))):
        pos = data.draw(st.integers(0, len(buf) - 1))
        buf[pos] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(0, len(buf)))
    try:
        loads(bytes(buf[:cut]))
    except DecodeError:
        pass


def _parser_or_error(text: str) -> Any:
    try:
        return fastjson_module._Parser(text, "t").parse()
    except (DecodeError, RecursionError):
        return DecodeError


def _same(fast: Any, slow: Any) -> None:
    # equal values of equal types: an int key must not come back as "0", nor 1 as True
    assert fast == slow and repr(fast) == repr(slow)


@settings(max_examples=300)
@given(_json)
def test_bare_int_key_path_agrees_with_the_parser(value: Any) -> None:
    text = dumps(value)
    fast = fastjson_module._bare_int_keys(text)
    if fast is not fastjson_module._NOT_THAT_FORM:
        _same(fast, _parser_or_error(text))


@pytest.mark.parametrize("text", [
    '{0:"a",1:"b"}', '{ 0 : 1 ,\n-7:2}', '{"0":1,0:2}', '{-0:1}', '[{3:4},{"5":6}]',
    '{"a":{"b":[1,{2:3.5}]}}', '{"k":"a,5:b"}', '{"k":"x",5:"a,5:b"}', '{007:1}', '{1.5:2}',
    "{'a':1,2:3}", '{"\\u0000x":1,2:3}', '{0:"a",}', '{0:NaN}', '{"k":"\\",5:\\""}',
])
def test_bare_int_key_path_on_the_edge_cases(text: str) -> None:
    fast = fastjson_module._bare_int_keys(text)
    slow = _parser_or_error(text)
    if fast is fastjson_module._NOT_THAT_FORM:
        assert loads(text) == slow if slow is not DecodeError else True
    else:
        _same(fast, slow)


@settings(max_examples=300)
@given(st.text(alphabet='{}[],:"\\ 0123456789-.abu', max_size=40))
def test_bare_int_key_path_on_arbitrary_text(text: str) -> None:
    fast = fastjson_module._bare_int_keys(text)
    if fast is not fastjson_module._NOT_THAT_FORM:
        _same(fast, _parser_or_error(text))
