# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The walk of docs/architecture.md: a SEND_MESSAGE_V2 from a raw socket to the CommitLog and
back crosses each layer once, in order, going down and coming back up."""

from __future__ import annotations

import asyncio
import functools
from pathlib import Path
from typing import Any

import pytest

import wire.aio
from reference_broker.broker import HANDLERS, Broker
from reference_broker.broker.processors import send
from reference_broker.store import MessageStore, _codec
from tests.broker.helpers import run, running_broker, send_request
from wire import FrameBuffer, RequestCode, ResponseCode, decode_frame, encode_command, split_frame
from wire.message import decode_messages


def test_send_message_v2_crosses_each_layer_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps: list[str] = []

    def traced(name: str, fn: Any) -> Any:
        @functools.wraps(fn)
        def call(*args: Any, **kwargs: Any) -> Any:
            steps.append(name)
            return fn(*args, **kwargs)
        return call

    real_next = FrameBuffer.next_frame

    def next_frame(self: FrameBuffer) -> Any:
        frame = real_next(self)
        if frame is not None:
            steps.append("framing: next_frame")
        return frame

    monkeypatch.setattr(wire.aio.RemotingConnection, "data_received",
                        traced("aio: data_received", wire.aio.RemotingConnection.data_received))
    monkeypatch.setattr(FrameBuffer, "next_frame", next_frame)
    monkeypatch.setattr(wire.aio, "decode_frame", traced("remoting: decode_frame", wire.aio.decode_frame))
    monkeypatch.setattr(Broker, "_handle", traced("broker: _handle", Broker._handle))
    monkeypatch.setitem(HANDLERS, RequestCode.SEND_MESSAGE_V2,
                        traced("processor: send_message", HANDLERS[RequestCode.SEND_MESSAGE_V2]))
    monkeypatch.setattr(MessageStore, "put_deferred", traced("store: put_deferred", MessageStore.put_deferred))
    monkeypatch.setattr(_codec, "encode_record_fields", traced("wire: encode_record_fields",
                                                               _codec.encode_record_fields))
    monkeypatch.setattr(send, "put_status_response", traced("processor: put_status_response",
                                                             send.put_status_response))
    monkeypatch.setattr(wire.aio, "encode_command", traced("remoting: encode_command", wire.aio.encode_command))

    async def main() -> None:
        async with running_broker(tmp_path) as b:
            reader, writer = await asyncio.open_connection("127.0.0.1", b.port)  # no wire.aio on this side
            steps.clear()
            writer.write(encode_command(send_request("Walk", b"down and back", queue_id=0).replace(opaque=77)))
            head = await asyncio.wait_for(reader.readexactly(4), 10)
            rest = await asyncio.wait_for(reader.readexactly(int.from_bytes(head, "big")), 10)
            answer = decode_frame(split_frame(head + rest))
            writer.close()
            await writer.wait_closed()
            assert answer.code == ResponseCode.SUCCESS and answer.opaque == 77 and answer.is_response
            assert steps == [
                "aio: data_received",
                "framing: next_frame",
                "remoting: decode_frame",
                "broker: _handle",
                "processor: send_message",
                "store: put_deferred",
                "wire: encode_record_fields",
                "processor: put_status_response",
                "remoting: encode_command",
            ]
            # and the record is in the CommitLog, as the store's own reader finds it
            data = Path(b.store.config.commitlog_dir).glob("*")
            first = sorted(data)[0].read_bytes()
            (msg,) = decode_messages(first[:int.from_bytes(first[:4], "big")])
            assert msg.topic == "Walk" and msg.body == b"down and back"

    run(main())
