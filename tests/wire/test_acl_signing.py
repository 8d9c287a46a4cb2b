# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Plain-ACL signing (wire.acl) against the signatures real clients put on the wire: Java 4.9.8 and
5.0.0 mqadmin (accessKey rocketmq2, secretKey 12345678, the distribution's tools.yml) and the C++
client (empty credentials), in every capture of ../shared."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import shared_path
from wire import RemotingCommand
from wire.acl import Credentials, sign, sign_request, signed_content
from wire.capture import CommandRow, decode_capture

pytestmark = pytest.mark.shared


def test_every_captured_signature_is_ours() -> None:
    seen: Counter[tuple[str, str]] = Counter()
    for path in sorted(shared_path("captures").rglob("*.pcap")):
        for row in decode_capture(path):
            if not isinstance(row, CommandRow) or "Signature" not in row.command.ext_fields:
                continue
            cmd = row.command
            access_key = cmd.ext_fields.get("AccessKey", "")
            secret = "12345678" if access_key == "rocketmq2" else ""
            assert sign(signed_content(cmd.ext_fields, cmd.body), secret) == cmd.ext_fields["Signature"], \
                (path.name, cmd)
            seen[(path.parent.name, cmd.language_name)] += 1
    # Java mqadmin of both versions and the C++ client are all there
    assert seen[("java-4.9.8", "JAVA")] and seen[("java-5.0.0", "JAVA")] and seen[("java-4.9.8", "CPP")], seen


def test_sign_request_adds_the_fields_the_java_hook_adds() -> None:
    cmd = RemotingCommand.request(105, {"topic": "T"}, b"body")
    signed = sign_request(cmd, Credentials("rocketmq2", "12345678", security_token="tok"))
    assert signed.ext_fields["AccessKey"] == "rocketmq2" and signed.ext_fields["SecurityToken"] == "tok"
    # AccessKey, SecurityToken and topic, in TreeMap order, then the body
    assert signed.ext_fields["Signature"] == sign(b"rocketmq2tokT" + b"body", "12345678")
    again = sign_request(signed, Credentials("rocketmq2", "12345678", security_token="tok"))
    assert again.ext_fields == signed.ext_fields  # a new signature replaces the old one


def test_keys_are_ordered_as_java_strings() -> None:
    # String.compareTo orders UTF-16 units: U+FF21 sorts after U+1F600's high surrogate (0xD83D)
    ext = {"\uff21": "b", "\U0001f600": "a", "Z": "c"}
    assert signed_content(ext, None) == b"cab"


def test_credentials_never_show_their_secret() -> None:
    creds = Credentials("rocketmq2", "s3cret-value", "tok3n")
    assert "s3cret-value" not in repr(creds) and "s3cret-value" not in str(creds) and "tok3n" not in repr(creds)
