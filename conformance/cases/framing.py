# Licensed under the Apache License, Version 2.0. See LICENSE.
"""FRM: frames, the two header serializations, the response flag and opaque, oneway requests,
and what a server does with a malformed frame. Each requirement is checked on the name server
and on the broker (``NettyRemotingServer`` serves both the same way)."""

from __future__ import annotations

import struct
from collections.abc import Callable

from wire import RemotingCommand, RequestCode, ResponseCode, SerializeType, encode_command
from wire.remoting import FLAG_ONEWAY, FLAG_RESPONSE

from ..context import Ctx
from ..model import Level
from ..registry import case

R = RequestCode
ROLES = (("namesrv", "the name server"), ("broker", "the broker"))
#: how long a server may take to close a connection that sent a malformed frame
CLOSE_WAIT = 5.0


def _probe(ctx: Ctx, role: str, key: str, *, serialize: SerializeType = SerializeType.JSON,
           opaque: int = 0, oneway: bool = False) -> RemotingCommand:
    """A harmless request whose answer echoes one of its ext fields in the remark, so that the
    answer proves the header was read: GET_KV_CONFIG of a key nobody set (QUERY_NOT_FOUND,
    "No config item, Namespace: … Key: …") on the name server, GET_TOPIC_STATS_INFO of a topic
    nobody created (TOPIC_NOT_EXIST, "topic[…] not exist") on a broker."""
    if role == "namesrv":
        cmd = ctx.command(R.GET_KV_CONFIG, {"namespace": "conformance", "key": key}, serialize=serialize)
    else:
        cmd = ctx.command(R.GET_TOPIC_STATS_INFO, {"topic": key}, serialize=serialize)
    return cmd.replace(opaque=opaque, flag=FLAG_ONEWAY if oneway else 0)


def _probe_answer_ok(ctx: Ctx, role: str, key: str, resp: RemotingCommand) -> None:
    want = ResponseCode.QUERY_NOT_FOUND if role == "namesrv" else ResponseCode.TOPIC_NOT_EXIST
    ctx.code(resp, want, f"the answer to {'GET_KV_CONFIG' if role == 'namesrv' else 'GET_TOPIC_STATS_INFO'} "
                         f"of {key}")
    ctx.check(resp.remark and key in resp.remark,
              f"the answer's remark {resp.remark!r} does not name {key}: the request's ext fields were not "
              "read")


async def _served(ctx: Ctx, role: str, what: str) -> None:
    """A new, well-behaved connection is answered (the server is still serving)."""
    key = ctx.unique("probe")
    peer = await ctx.raw(role)
    peer.send_command(_probe(ctx, role, key, opaque=4242))
    resp = await peer.response_to(4242, ctx.request_timeout)
    ctx.check(resp is not None, f"{what}: a new connection is not answered any more")
    assert resp is not None
    _probe_answer_ok(ctx, role, key, resp)


# ---------------------------------------------------------------------------- serializations


def _serialize_case(ident: str, role: str, who: str, st: SerializeType,
                    profiles: tuple[str, ...] = ("4.9", "5.0")) -> None:
    in_kind = profiles == ("4.9",) or st is SerializeType.JSON
    if in_kind:
        requirement = f"{who} answers a {st.name} request with a {st.name} header that carries the answer"
        source = ("RemotingCommand.decode/encodeHeader; NettyRemotingAbstract.processRequestCommand "
                  "(4.9.4 to 4.9.8: the response keeps the request's serializeTypeCurrentRPC)")
    else:
        requirement = (f"{who} reads a {st.name} request and answers it (in its own serialize type: 5.0.0 "
                       "answers JSON unless configured otherwise)")
        source = ("RocketMQSerializable.rocketMQProtocolDecode; NettyRemotingAbstract.processRequestCommand "
                  "5.0.0 (the response's serializeTypeCurrentRPC is the server's)")

    @case(ident, Level.MUST, requirement, source=source, needs=(role,), profiles=profiles,
          doc=f"Sends {'GET_KV_CONFIG' if role == 'namesrv' else 'GET_TOPIC_STATS_INFO'} with a "
          f"{st.name} header; the answer's " + (f"header must be {st.name} and its " if in_kind else "")
          + "remark must name the key the request carried.")
    async def scenario(ctx: Ctx) -> None:
        key = ctx.unique("k")
        peer = await ctx.raw(role)
        peer.send_command(_probe(ctx, role, key, serialize=st, opaque=7001))
        resp = await peer.response_to(7001, ctx.request_timeout)
        ctx.check(resp is not None, f"no answer to a {st.name} request")
        assert resp is not None
        if in_kind:
            ctx.equal(resp.serialize_type.name, st.name, "the answer's serialize type")
        else:
            ctx.note(f"answered in {resp.serialize_type.name}")
        _probe_answer_ok(ctx, role, key, resp)


for _n, (_role, _who) in enumerate(ROLES):
    _serialize_case(f"FRM-SER-{2 * _n + 1:03d}", _role, _who, SerializeType.JSON)
    _serialize_case(f"FRM-SER-{2 * _n + 2:03d}", _role, _who, SerializeType.ROCKETMQ, profiles=("4.9",))
    _serialize_case(f"FRM-SER-{_n + 5:03d}", _role, _who, SerializeType.ROCKETMQ, profiles=("5.0",))


# ---------------------------------------------------------------------------- responses


def _response_case(ident: str, role: str, who: str) -> None:
    @case(ident, Level.MUST,
          f"{who}'s answer has flag bit 0 (response) set, bit 1 clear, and the request's opaque",
          source="RemotingCommand.markResponseType; NettyRemotingAbstract.processRequestCommand "
                 "(response.setOpaque(opaque))", needs=(role,))
    async def scenario(ctx: Ctx) -> None:
        """Sends one request with opaque 1234567 and reads the answer."""
        key = ctx.unique("k")
        peer = await ctx.raw(role)
        peer.send_command(_probe(ctx, role, key, opaque=1234567))
        cmd = await peer.read_command(ctx.request_timeout)
        ctx.check(cmd is not None, "no answer")
        assert cmd is not None
        ctx.check(cmd.flag & FLAG_RESPONSE, f"the answer's flag {cmd.flag} lacks bit 0 (response)")
        ctx.check(not cmd.flag & FLAG_ONEWAY, f"the answer's flag {cmd.flag} has bit 1 (oneway) set")
        ctx.equal(cmd.opaque, 1234567, "the answer's opaque")


def _pipelined_case(ident: str, role: str, who: str) -> None:
    @case(ident, Level.MUST,
          f"{who} answers requests pipelined on one connection, each answer under its request's "
          "opaque", source="NettyRemotingAbstract.processRequestCommand; NettyRemotingClient responseTable",
          needs=(role,))
    async def scenario(ctx: Ctx) -> None:
        """Writes five requests in one segment, each with its own opaque and key, and matches
        the answers by opaque (they may come in any order)."""
        peer = await ctx.raw(role)
        keys = {9000 + i: ctx.unique("k") for i in range(5)}
        peer.send(b"".join(encode_command(_probe(ctx, role, key, opaque=op)) for op, key in keys.items()))
        got: dict[int, RemotingCommand] = {}
        while len(got) < len(keys):
            cmd = await peer.read_command(ctx.request_timeout)
            ctx.check(cmd is not None, f"{len(got)} of {len(keys)} pipelined requests answered")
            assert cmd is not None
            ctx.check(cmd.opaque in keys and cmd.opaque not in got,
                      f"an answer with opaque {cmd.opaque}, which no request had or which came twice")
            got[cmd.opaque] = cmd
        for opaque, key in keys.items():
            _probe_answer_ok(ctx, role, key, got[opaque])


def _oneway_case(ident: str, role: str, who: str) -> None:
    @case(ident, Level.MUST, f"{who} does not answer a oneway request (flag bit 1)",
          source="NettyRemotingAbstract.processRequestCommand (if (!cmd.isOnewayRPC()) ... writeAndFlush)",
          needs=(role,))
    async def scenario(ctx: Ctx) -> None:
        """Sends a oneway request (opaque 501) then a normal one (opaque 502) on the same
        connection; once 502 is answered, nothing may have come for 501."""
        peer = await ctx.raw(role)
        peer.send_command(_probe(ctx, role, ctx.unique("k"), opaque=501, oneway=True))
        peer.send_command(_probe(ctx, role, ctx.unique("k"), opaque=502))
        resp = await peer.response_to(502, ctx.request_timeout)
        ctx.check(resp is not None, "the request after the oneway one was not answered")
        stray = [c for c in peer.answers() if c.opaque == 501]
        ctx.check(not stray, f"the oneway request was answered: {stray[0]!r}" if stray else "")


for _n, (_role, _who) in enumerate(ROLES):
    _response_case(f"FRM-RSP-{_n + 1:03d}", _role, _who)
    _pipelined_case(f"FRM-RSP-{_n + 3:03d}", _role, _who)
    _oneway_case(f"FRM-ONEWAY-{_n + 1:03d}", _role, _who)


# ---------------------------------------------------------------------------- malformed frames


def _oversize(ctx: Ctx, role: str) -> bytes:
    # totalLength 0x7fffffff: over the 16 MiB frameMaxLength before anything is buffered
    return struct.pack(">iI", 0x7FFFFFFF, 40) + encode_command(_probe(ctx, role, "oversize"))[8:]


def _header_past_frame(ctx: Ctx, role: str) -> bytes:
    # totalLength 24, headerLength 200: the header cannot fit in the frame (capture 10-malformed-frames)
    return struct.pack(">iI", 24, 200) + b"\x00" * 20


def _bad_serialize_type(ctx: Ctx, role: str) -> bytes:
    # serialize type byte 7: neither JSON (0) nor ROCKETMQ (1)
    data = bytearray(encode_command(_probe(ctx, role, "serialize7")))
    data[4] = 7
    return bytes(data)


def _broken_json(ctx: Ctx, role: str) -> bytes:
    header = b'{"code":105,"extFields":{"topic":"T"},"flag":0,"language":"JAVA","opaque":3,'
    return struct.pack(">iI", 4 + len(header), len(header)) + header


def _short_binary(ctx: Ctx, role: str) -> bytes:
    # a ROCKETMQ header whose remark length runs past the header
    header = struct.pack(">hBhiii", R.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, 0, 409, 3, 0, 1000) + b"abc"
    return struct.pack(">iI", 4 + len(header), (1 << 24) | len(header)) + header


MALFORMED: list[tuple[str, str, Callable[[Ctx, str], bytes], str]] = [
    ("oversize", "a frame length over the 16 MiB limit (0x7fffffff)", _oversize,
     "NettyDecoder (LengthFieldBasedFrameDecoder, frameMaxLength 16777216)"),
    ("headerlen", "a header length past the end of the frame", _header_past_frame,
     "RemotingCommand.decode; capture java-4.9.8/10-malformed-frames"),
    ("sertype", "an unknown serialize type byte", _bad_serialize_type,
     "RemotingCommand.headerDecode (SerializeType.valueOf); capture java-4.9.8/10-malformed-frames"),
    ("json", "a JSON header that is not JSON", _broken_json, "RemotingSerializable.decode (fastjson)"),
    ("binary", "a ROCKETMQ header whose remark runs past the header", _short_binary,
     "RocketMQSerializable.rocketMQProtocolDecode"),
]


def _malformed_case(ident: str, role: str, who: str, what: str, make: Callable[[Ctx, str], bytes],
                    source: str) -> None:
    @case(ident, Level.MUST, f"{who} closes a connection that sends {what}, without an answer, and keeps "
          "serving its other connections",
          source=source + "; NettyDecoder closes the channel on any decode error",
          needs=(role,), timeout=30.0,
          doc=f"Opens a good connection, then sends {what} on a second one: the second must be closed within "
          f"{CLOSE_WAIT:g} s with nothing sent back, and the first (and a new one) must still be answered.")
    async def scenario(ctx: Ctx) -> None:
        keep = await ctx.connect(role)
        bad = await ctx.raw(role)
        bad.send(make(ctx, role))
        await bad.drain()
        closed = await bad.wait_closed(CLOSE_WAIT)
        answers = bad.answers()
        ctx.check(not answers, f"the malformed frame was answered: {answers[0]!r}" if answers else "")
        ctx.check(closed, f"the connection is still open {CLOSE_WAIT:g} s after the malformed frame")
        key = ctx.unique("k")
        resp = await ctx.request(role, _probe(ctx, role, key), conn=keep)
        _probe_answer_ok(ctx, role, key, resp)
        await _served(ctx, role, "after the malformed frame")


for _n, (_role, _who) in enumerate(ROLES):
    for _i, (_slug, _what, _make, _source) in enumerate(MALFORMED):
        _malformed_case(f"FRM-BAD-{_n * len(MALFORMED) + _i + 1:03d}", _role, _who, _what, _make, _source)


# ---------------------------------------------------------------------------- identity


def _identity_case(ident: str, role: str, who: str) -> None:
    @case(ident, Level.INFO, f"the language and version {who} puts in its answers",
          source="RemotingCommand.createResponseCommand (language, version = MQVersion.CURRENT_VERSION)",
          needs=(role,))
    async def scenario(ctx: Ctx) -> None:
        from wire import version_name

        key = ctx.unique("k")
        resp = await ctx.request(role, _probe(ctx, role, key))
        ctx.note(f"language {resp.language_name}, version {resp.version} ({version_name(resp.version)})")


for _n, (_role, _who) in enumerate(ROLES):
    _identity_case(f"FRM-INFO-{_n + 1:03d}", _role, _who)
