# Licensed under the Apache License, Version 2.0. See LICENSE.
"""RocketMQ 4.x plain-ACL request signing (``AclClientRPCHook``, ``AclUtils``, ``AclSigner``).

Theory of operation
-------------------
A client with credentials adds ``AccessKey`` (and ``SecurityToken`` when it has one) to a
request's ``extFields``, then signs: the values of every ext field except ``Signature``, in the
order of their keys (a Java ``TreeMap``: ``String.compareTo``, i.e. UTF-16 code units), are
concatenated, encoded as UTF-8 and followed by the body; the signature is the Base64 of the
HmacSHA1 of those bytes under the secret key (UTF-8), sent as the ``Signature`` ext field.

The broker (``PlainAccessValidator.parse``) recomputes the same over the fields it received,
leaving out ``Signature`` and also ``_UNIQUE_KEY_QUERY`` (``MixAll.UNIQUE_MSG_QUERY_FLAG``), which
the client does sign: a QUERY_MESSAGE carrying that flag cannot pass a 4.9.8 broker's check.
:func:`signed_content` takes the fields to leave out, so both sides are written once.

Signing happens on the fields as they go on the wire (the typed header already written into
``extFields``, as ``makeCustomHeaderToNet`` does before the hook runs), so a signed request must
not be changed afterwards.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from .fastjson import java_string_order
from .remoting import RemotingCommand

__all__ = [
    "ACCESS_KEY",
    "SECURITY_TOKEN",
    "SIGNATURE",
    "UNIQUE_MSG_QUERY_FLAG",
    "Credentials",
    "sign",
    "sign_request",
    "signed_content",
]

#: ``SessionCredentials.ACCESS_KEY``
ACCESS_KEY = "AccessKey"
#: ``SessionCredentials.SIGNATURE``
SIGNATURE = "Signature"
#: ``SessionCredentials.SECURITY_TOKEN``
SECURITY_TOKEN = "SecurityToken"
#: ``MixAll.UNIQUE_MSG_QUERY_FLAG``: signed by the client, left out by the broker
UNIQUE_MSG_QUERY_FLAG = "_UNIQUE_KEY_QUERY"


@dataclass(frozen=True, slots=True)
class Credentials:
    """An access key and its secret (and an optional security token). The secret never shows
    in ``repr`` or ``str``."""

    access_key: str
    secret_key: str
    security_token: str | None = None

    def __repr__(self) -> str:
        token = ", security_token=***" if self.security_token else ""
        return f"Credentials(access_key={self.access_key!r}, secret_key=***{token})"

    __str__ = __repr__


def signed_content(ext_fields: Mapping[str, str], body: bytes | None,
                   leave_out: Iterable[str] = (SIGNATURE,)) -> bytes:
    """The bytes a signature covers (``AclUtils.combineRequestContent`` over a ``TreeMap``)."""
    skip = frozenset(leave_out)
    keys = sorted((k for k in ext_fields if k not in skip), key=java_string_order)
    text = "".join(ext_fields[k] for k in keys).encode("utf-8", "replace")
    return text + body if body else text


def sign(content: bytes, secret_key: str) -> str:
    """``AclSigner.calSignature``: Base64 of HmacSHA1(content) under the UTF-8 secret key."""
    digest = hmac.new(secret_key.encode("utf-8", "replace"), content, hashlib.sha1).digest()
    return base64.b64encode(digest).decode("ascii")


def sign_request(cmd: RemotingCommand, credentials: Credentials) -> RemotingCommand:
    """``cmd`` with ``AccessKey`` (and ``SecurityToken``) added and signed, as
    ``AclClientRPCHook.doBeforeRequest`` does; a previous signature is replaced."""
    ext = dict(cmd.ext_fields)
    ext.pop(SIGNATURE, None)
    ext[ACCESS_KEY] = credentials.access_key
    if credentials.security_token is not None:
        ext[SECURITY_TOKEN] = credentials.security_token
    ext[SIGNATURE] = sign(signed_content(ext, cmd.body), credentials.secret_key)
    return cmd.replace(ext_fields=ext)
