# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Bytes that must be UTF-8: one rule (wire.errors.decode_utf8), and the decoders that call it
report the first bad byte where it is in their input."""

from __future__ import annotations

import pytest

from wire import DecodeError, fastjson
from wire.bodies.properties import decode_properties as decode_java_properties
from wire.errors import decode_utf8
from wire.message import decode_properties


def test_the_first_bad_byte_where_the_bytes_start() -> None:
    assert decode_utf8("hé".encode(), 7, "topic") == "hé"
    with pytest.raises(DecodeError) as e:
        decode_utf8(b"ab\xffcdef", 10, "topic")
    err = e.value
    assert (err.offset, err.field, err.expected, err.found) == (12, "topic", "UTF-8", "ff636465")
    assert str(err) == "topic is not valid UTF-8 (offset 12)"
    with pytest.raises(DecodeError) as e:
        decode_utf8(b"\xc3", None, "section")
    assert e.value.offset is None and e.value.found == "c3"


@pytest.mark.parametrize("decode", [decode_properties, decode_java_properties,
                                    lambda b: fastjson.loads(b, what="body")],
                         ids=["message properties", "java properties", "json"])
def test_the_decoders_call_it(decode) -> None:
    with pytest.raises(DecodeError) as e:
        decode(b'{"k":"v\xe9"}')
    assert e.value.offset == 7 and e.value.reason.endswith("is not valid UTF-8")
