# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The message bodies the peer drivers send, shared by the tests that check them.

A body is text (the C++ client reads received bodies through a ``char*``, so a NUL would cut
it): ``"<run>:<i>:"`` followed by the hex SHA-256 digests of ``"<run>:<i>:<k>"`` for k = 0, 1, …,
cut to ``size`` characters. ``js_client.js`` builds the same bytes, so a test can recompute
what any producer sent and recognise a body a consumer received (its ``run:i:`` mark).
"""

from __future__ import annotations

import hashlib


def make_body(run_id: str, i: int, size: int) -> str:
    parts = [f"{run_id}:{i}:"]
    total = len(parts[0])
    k = 0
    while total < size:
        chunk = hashlib.sha256(f"{run_id}:{i}:{k}".encode()).hexdigest()
        parts.append(chunk)
        total += len(chunk)
        k += 1
    return "".join(parts)[:max(size, len(parts[0]))]


def body_sha256(run_id: str, i: int, size: int) -> str:
    return hashlib.sha256(make_body(run_id, i, size).encode()).hexdigest()


def mark_of(body: bytes) -> str:
    """The ``run:i`` a body starts with ("" when it is not one of ours)."""
    head = body[:200].split(b":")
    return f"{head[0].decode(errors='replace')}:{head[1].decode(errors='replace')}" if len(head) >= 3 else ""
