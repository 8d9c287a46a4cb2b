# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Hostile numbers: each is refused with a DecodeError that names its field, before any costly
conversion, and the error quotes only a short excerpt of it.

The inputs are the reproducers of the hostile-input report: a JSON header number with a huge
exponent (which stalled both servers for half a minute in ``int(Decimal(...))``), numbers that
raised ``decimal.InvalidOperation``, ``MemoryError`` or the ``ValueError`` of Python's 4,300-digit
limit, NaN and Infinity, and header values of thousands of ASCII or Arabic-Indic digits (whose
digit-by-digit parsing was quadratic and whose error echoed the whole value).
"""

from __future__ import annotations

import json

import pytest

from wire import DecodeError, SerializeType, decode_command, fastjson
from wire._javanum import BEYOND_LONG, MAX_NUMBER_TEXT, java_decimal
from wire.bodies import decode_body
from wire.errors import EXCERPT_CHARS, excerpt
from wire.headers import GetMaxOffsetRequestHeader, UnRegisterBrokerRequestHeader
from wire.remoting import decode_header, decode_json_header

#: an error message may quote this much of the input, with its own words around it
SHORT = 4 * EXCERPT_CHARS + 200

HUGE_EXPONENTS = ["1e999999", "1E+999999", "-1e999999", "1e99999999999999999999", "1.5e999999999999999999",
                  "1e5000", "1e-999999", "2.5E1001"]


def _header(field: str, number: str) -> bytes:
    fields = {"code": "105", "flag": "0", "opaque": "1", "version": "409"}
    fields[field] = number
    return ('{"code":' + fields["code"] + ',"extFields":{"topic":"TopicTest"},"flag":' + fields["flag"]
            + ',"language":"JAVA","opaque":' + fields["opaque"] + ',"serializeTypeCurrentRPC":"JSON","version":'
            + fields["version"] + "}").encode()


@pytest.mark.parametrize("number", HUGE_EXPONENTS)
@pytest.mark.parametrize("field", ["code", "flag", "opaque", "version"])
def test_json_header_number_with_a_huge_exponent_is_refused(field: str, number: str) -> None:
    data = _header(field, number)
    with pytest.raises(DecodeError) as info:
        decode_header(SerializeType.JSON, data)
    err = info.value
    assert err.offset == data.index(number.encode())
    assert len(str(err)) < SHORT


@pytest.mark.parametrize("text", [b'{"code":1e99999999999999999999}', b'{"code":1.5e999999999999999999}',
                                  b'{"code":1e5000}', b'{"code":1e999999}', b'{"code":' + b"9" * 4301 + b"}",
                                  b'{"code":' + b"9" * 4000 + b"}", b'{"code":1.' + b"5" * 5000 + b"}",
                                  b'{"code":"' + b"7" * 5000 + b'"}', b"{'code':" + b"9" * 5000 + b"}"])
def test_numbers_of_the_report_raise_decode_error(text: bytes) -> None:
    with pytest.raises(DecodeError) as info:
        decode_json_header(text)
    assert len(str(info.value)) < SHORT


@pytest.mark.parametrize("value", ["NaN", "Infinity", "-Infinity"])
def test_nan_and_infinity_are_not_json(value: str) -> None:
    data = ('{"code":105,"extFields":{"topic":' + value + '},"flag":0,"opaque":1}').encode()
    with pytest.raises(DecodeError) as info:
        decode_json_header(data)
    assert info.value.offset == data.index(value.encode())
    with pytest.raises(DecodeError):
        fastjson.loads(data)


@pytest.mark.parametrize("number", HUGE_EXPONENTS)
def test_json_body_numbers_are_checked_before_conversion(number: str) -> None:
    body = ('{"topicConfigTable":{"T":{"topicName":"T","readQueueNums":' + number + '}},'
            '"dataVersion":{"counter":1,"timestamp":1}}').encode()
    with pytest.raises(DecodeError) as info:
        fastjson.loads(body)
    assert info.value.offset == body.index(number.encode())
    with pytest.raises(DecodeError):
        decode_body(103, False, b'{"topicConfigSerializeWrapper":' + body + b"}")  # REGISTER_BROKER


def test_a_fraction_within_bounds_still_reads_as_java_would() -> None:
    cmd = decode_json_header(b'{"code":105.9,"flag":0,"opaque":7e2,"version":4.09E2}')
    assert (cmd.code, cmd.opaque, cmd.version) == (105, 700, 409)
    assert fastjson.loads(b'{"d":4.9E-324,"e":1.7976931348623157E308}') == {
        "d": fastjson.json_decimal("4.9E-324"), "e": fastjson.json_decimal("1.7976931348623157E308")}


# ------------------------------------------------------------------ typed header numbers


@pytest.mark.parametrize("raw", ["1" * 4301, "9" * 5000, "\u0661" * 400_000, "\u0661" * 100_000 + "x",
                                 "0" * 65 + "1", "-" + "\uff19" * 70])
def test_long_numeric_header_values_are_refused_with_a_short_error(raw: str) -> None:
    with pytest.raises(DecodeError) as info:
        GetMaxOffsetRequestHeader.from_ext({"topic": "T", "queueId": raw})
    err = info.value
    assert err.field == "extFields.queueId"
    assert len(str(err)) < SHORT and len(str(err.found)) < SHORT
    assert f"({len(raw)} chars)" in str(err)


def test_unregister_broker_id_of_arabic_indic_digits() -> None:
    ext = {"brokerName": "b", "brokerAddr": "127.0.0.1:10911", "clusterName": "C", "brokerId": "\u0661" * 400_000}
    with pytest.raises(DecodeError) as info:
        UnRegisterBrokerRequestHeader.from_ext(ext)
    assert info.value.field == "extFields.brokerId" and len(str(info.value)) < SHORT


@pytest.mark.parametrize(("raw", "value"), [
    ("\u0661\u0662", 12), ("-\u0663", -3), ("+7", 7), ("007", 7), ("0" * 40 + "5", 5),
    ("\uff19" * 3, 999), ("9223372036854775807", 2**63 - 1), ("-9223372036854775808", -(2**63)),
])
def test_java_decimal_reads_what_java_reads(raw: str, value: int) -> None:
    assert java_decimal(raw) == value


@pytest.mark.parametrize(("raw", "value"), [
    ("9" * 20, BEYOND_LONG), ("-" + "9" * 20, -BEYOND_LONG), ("1" * MAX_NUMBER_TEXT, BEYOND_LONG),
    ("1" * (MAX_NUMBER_TEXT + 1), None), ("", None), ("-", None), ("+-1", None), ("1 ", None), ("0x1", None),
    ("\u0661x", None), ("\U0001d7cf", None), ("1_000", None),
])
def test_java_decimal_refuses_or_clamps(raw: str, value: int | None) -> None:
    assert java_decimal(raw) == value


def test_numbers_beyond_the_java_type_say_so() -> None:
    with pytest.raises(DecodeError, match="outside the Integer range"):
        GetMaxOffsetRequestHeader.from_ext({"topic": "T", "queueId": "9" * 30})


# ------------------------------------------------------------------ whole frames


def test_a_route_request_with_a_huge_opaque() -> None:
    header = _header("opaque", "1e999999")
    data = (4 + len(header)).to_bytes(4, "big") + len(header).to_bytes(4, "big") + header
    with pytest.raises(DecodeError) as info:
        decode_command(data)
    assert info.value.offset == 8 + header.index(b"1e999999")


def test_excerpt_keeps_errors_short() -> None:
    assert excerpt("abc") == "'abc'"
    assert excerpt("x" * 1000) == f"{'x' * EXCERPT_CHARS!r}… (1000 chars)"
    assert excerpt(b"\x00" * 100).endswith("(100 bytes)")
    assert excerpt(10**5000) == f"an integer of {(10**5000).bit_length()} bits"
    assert json.loads(json.dumps(excerpt("\u0661" * 10)))
