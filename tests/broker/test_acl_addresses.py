# Licensed under the Apache License, Version 2.0. See LICENSE.
"""White-address patterns of plain_acl.yml, as RemoteAddressStrategyFactory reads them."""

from __future__ import annotations

import pytest

from reference_broker.acl import PatternError, parse_pattern


@pytest.mark.parametrize(("pattern", "address", "matches"), [
    ("192.168.1.*", "192.168.1.7", True), ("192.168.1.*", "192.168.2.7", False),
    ("192.168.*.*", "192.168.200.1", True), ("192.168.*.*", "192.169.0.1", False),
    ("192.168.1.10-20", "192.168.1.15", True), ("192.168.1.10-20", "192.168.1.21", False),
    ("192.168.0.{1,2}", "192.168.0.2", True), ("192.168.0.{1,2}", "192.168.0.3", False),
    ("1.1.1.1,2.2.2.2", "2.2.2.2", True), ("*", "10.0.0.1", True), ("*.*.*.*", "::1", True),
    ("", "127.0.0.1", False), ("127.0.0.1", "127.0.0.1", True), ("127.0.0.1", "127.0.0.2", False),
    ("::1", "0:0:0:0:0:0:0:1", True), ("2001:db8::*", "2001:db8::5", True), ("2001:db8::*", "2001:db9::5", False),
    ("2::ac5:78:1-200:*", "2::ac5:78:50:1", True), ("1:2:3:4:5:6:7:10-20", "1:2:3:4:5:6:7:15", True),
    ("1:2:3:4:5:6:7:10-20", "1:2:3:4:5:6:7:21", False), ("192.168.1.*", "::1", False),
])
def test_patterns(pattern: str, address: str, matches: bool) -> None:
    assert parse_pattern(pattern).matches(address) is matches


@pytest.mark.parametrize("pattern", ["1.2.3", "300.1.1.*", "*.1.1.1", "1.1.1.5-2", "abc", "1.1.1.{a}",
                                     "2001:db8:*:1"])
def test_bad_patterns(pattern: str) -> None:
    with pytest.raises(PatternError):
        parse_pattern(pattern)
