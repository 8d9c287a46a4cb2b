# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Compressed bodies between the real Java 5.0.0 client and our servers, with the Java 5.0.0
broker as the baseline (tests/interop/java/CompressProbe.java, compiled against ../shared/javakit).

For ZLIB, LZ4 and ZSTD: a Java producer whose ``compressType`` is that type sends bodies of 6000,
3000 and 20000 bytes (it compresses those of 4096 and more) to our broker and to the Java one.
Both brokers keep the same bytes and sysFlag bits (the stored body's CRC is the same on both:
neither touches the body); ``wire.admin.message_consume`` (mqctl message) reads the original
bodies from both, and a Java pull consumer reads them back from ours; ``wire``'s compressor gives
the very bytes Java's gave. The other way: bodies our ``message_send(compression=...)``
compressed are read by the Java consumer as the originals, from our broker and from Java's."""

from __future__ import annotations

import asyncio
import hashlib
import subprocess
from collections.abc import Iterator

import pytest

from tests.interop.clientkit import compile_probe, threaded_servers
from tests.javakit import JavaServers
from wire.admin.client import AdminClient
from wire.admin.message import MessageView, message_consume, message_send
from wire.message import CompressionType, MessageSysFlag, body_crc, compress_body

pytestmark = [pytest.mark.shared, pytest.mark.slow]

KINDS = [CompressionType.ZLIB, CompressionType.LZ4, CompressionType.ZSTD]
#: the bits a 5.x producer sets on a compressed body: COMPRESSED_FLAG and the type
MASK = MessageSysFlag.COMPRESSED_FLAG | MessageSysFlag.COMPRESSION_TYPE_COMPARATOR
BITS = {CompressionType.ZLIB: 0x301, CompressionType.LZ4: 0x101, CompressionType.ZSTD: 0x201}


@pytest.fixture(scope="module")
def probe(tmp_path_factory: pytest.TempPathFactory) -> list[str]:
    return compile_probe("CompressProbe", "5.0.0", tmp_path_factory.mktemp("compressprobe"))


@pytest.fixture(scope="module")
def ours(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with threaded_servers(tmp_path_factory.mktemp("our-zip")) as (namesrv, _):
        yield namesrv


@pytest.fixture(scope="module")
def java(java_servers_module: JavaServers) -> str:
    """A Java 5.0.0 name server and broker; the name server's address."""
    ns = java_servers_module.namesrv("5.0.0")
    java_servers_module.broker("5.0.0", namesrv=ns, name="zip-java")
    return ns.addr


def _probe(probe: list[str], *args: str) -> list[str]:
    done = subprocess.run([*probe, *args], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-3000:]
    return [line for line in done.stdout.splitlines() if "=" in line]


def _values(lines: list[str], key: str) -> list[str]:
    return [line.partition("=")[2] for line in lines if line.partition("=")[0] == key]


def _read(namesrv: str, topic: str) -> tuple[MessageView, ...]:
    async def main() -> tuple[MessageView, ...]:
        async with AdminClient([namesrv]) as c:
            return (await message_consume(c, topic, count=64)).messages

    return asyncio.run(main())


def _digest(body: bytes) -> str:
    return f"{len(body)}:{hashlib.sha256(body).hexdigest()}"


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_java_producer_bodies(probe: list[str], ours: str, java: str, kind: CompressionType) -> None:
    topic = f"JavaZip{kind.name}"
    stored: dict[str, dict[int, tuple[int, int]]] = {}
    for name, namesrv in (("ours", ours), ("java", java)):
        sent = _values(_probe(probe, namesrv, "produce", topic, kind.name), "sent")
        assert len(sent) == 3
        views = _read(namesrv, topic)
        # the original bodies, inflated by wire
        assert sorted(_digest(v.body) for v in views) == sorted(sent), name
        # the bits the producer set, and the stored bytes (their CRC), per body length
        stored[name] = {len(v.body): (v.sys_flag & MASK, v.body_crc) for v in views}
        assert {n: bits for n, (bits, _) in stored[name].items()} == {
            6000: BITS[kind], 3000: 0, 20000: BITS[kind]}, name
    assert stored["ours"] == stored["java"]
    # our compressor makes the bytes Java's made (ZLIB, LZ4; ZSTD at Java's default level 5)
    for v in views:
        if v.sys_flag & MASK:
            assert body_crc(compress_body(v.body, 5, kind)[0]) == v.body_crc
    # the Java consumer reads them back from our broker as it does from its own
    for namesrv in (ours, java):
        got = _values(_probe(probe, namesrv, "consume", topic, "3"), "got")
        assert sorted(g.partition(":")[2] for g in got) == sorted(sent)


@pytest.mark.parametrize("kind", KINDS, ids=[k.name for k in KINDS])
def test_our_compressed_bodies_read_by_java(probe: list[str], ours: str, java: str,
                                            kind: CompressionType) -> None:
    topic = f"PyZip{kind.name}"
    bodies = [(f"compressed by mqctl with {kind.name}; " * n).encode() for n in (1, 200, 3000)]
    for namesrv in (ours, java):
        async def send(namesrv: str = namesrv) -> None:
            async with AdminClient([namesrv]) as c:
                for body in bodies:
                    assert (await message_send(c, topic, body, compression=kind)).status == "SEND_OK"

        asyncio.run(send())
        got = _values(_probe(probe, namesrv, "consume", topic, str(len(bodies))), "got")
        assert sorted(g.partition(":")[2] for g in got) == sorted(_digest(b) for b in bodies)
        assert {int(g.partition(":")[0]) & MASK for g in got} == {BITS[kind]}
