# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Bodies compressed with zlib, LZ4 or ZSTD (the 5.x compression-type bits of sysFlag): the broker
stores and serves them unchanged; wire, the message tools, store inspect and the pcap field
decoder show them inflated."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.broker.helpers import client, run, running_cluster, send_request
from wire import ResponseCode
from wire.admin.client import AdminClient
from wire.admin.message import message_consume, message_send
from wire.admin.store import inspect_store
from wire.capture.fields import _send_body
from wire.message import CompressionType, compress_body, decode_messages

BODY = ("compressed by a 5.x producer; " * 300).encode()


@pytest.mark.parametrize("kind", [CompressionType.ZLIB, CompressionType.LZ4, CompressionType.ZSTD])
def test_compressed_body_round_trip(tmp_path: Path, kind: CompressionType) -> None:
    packed, bits = compress_body(BODY, compression=kind)

    async def main() -> None:
        async with running_cluster(tmp_path) as (ns, b):
            conn = await client(b)
            req = send_request("Zip", packed, sys_flag=bits, tags="z")
            assert (await conn.request(req)).code == ResponseCode.SUCCESS
            # served unchanged: the pulled record holds the compressed bytes and the flag bits
            r = b.store.get_messages("g", "Zip", 0, 0, 1)
            (m,) = decode_messages(r.messages[0])
            assert (m.body, m.sys_flag & 0x701) == (packed, bits)
            assert m.decompressed_body() == BODY
            await conn.aclose()
            async with AdminClient([ns.address]) as c:
                (view,) = (await message_consume(c, "Zip")).messages
                assert view.body == BODY and view.body_text == BODY.decode()
                # the library's own send (mqctl message send --compress)
                assert (await message_send(c, "Zip2", BODY, compression=kind)).status == "SEND_OK"
                (view,) = (await message_consume(c, "Zip2")).messages
                assert view.body == BODY and view.sys_flag & 0x701 == bits
            # the pcap decoder's send fields
            assert _send_body(310, {"b": "Zip", "f": str(bits)}, packed)["body"] == BODY.decode()
        report = inspect_store(tmp_path / "store", messages=True)
        assert [v.body for v in report.messages if v.topic == "Zip"] == [BODY]

    run(main())
