# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The tables' columns: one list per table of (name, Spark SQL type, meaning), in the order of the
row tuples that :mod:`analysis.tasks` emits. docs/analysis.md is written from these lists
(``python -m analysis.schema`` prints its tables) and a test keeps the two equal.

``raw`` columns exist only between the executors and the driver (``conn`` ids local to a reduce
partition); the written tables replace them with the stream number of ``mqctl pcap``.
"""

from __future__ import annotations

from typing import Any

__all__ = ["COLUMNS", "RAW", "markdown", "spark_schema"]

Column = tuple[str, str, str]

_WHERE: list[Column] = [
    ("capture", "string", "capture file"),
    ("conn", "bigint", "connection id (unique within the capture; the stream number is `stream`)"),
]

#: columns of the row tuples, per table, as the executors emit them
RAW: dict[str, list[Column]] = {
    "commands": [
        *_WHERE,
        ("role", "string", "role of the server port: namesrv, broker, vip, controller, ha, remoting or null"),
        ("record", "bigint", "capture record (from 1) holding the frame's first byte (`frame.number`)"),
        ("ts", "double", "capture time of that record, seconds since the epoch"),
        ("ts_end", "double", "capture time of the record holding the frame's last byte"),
        ("direction", "string", "c2s (client to server) or s2c"),
        ("src", "string", "source address"),
        ("src_port", "int", "source port"),
        ("dst", "string", "destination address"),
        ("dst_port", "int", "destination port"),
        ("server", "string", "server endpoint host:port (the broker, name server or controller)"),
        ("offset", "bigint", "stream offset of the frame in its direction"),
        ("frame_no", "bigint", "frame number in its direction, from 0"),
        ("size", "int", "bytes on the wire, length field included"),
        ("header_length", "int", "header length"),
        ("serialize_type", "string", "JSON or ROCKETMQ"),
        ("type", "string", "request, response or oneway"),
        ("code", "int", "request or response code"),
        ("code_name", "string", "name of the code (GET_ROUTEINFO_BY_TOPIC, SUCCESS, ...)"),
        ("flag", "int", "flag word (bit 0 response, bit 1 oneway)"),
        ("opaque", "int", "request id, copied by the response"),
        ("language", "string", "sender's language (JAVA, CPP, ...)"),
        ("version", "int", "sender's version ordinal"),
        ("version_name", "string", "the version's name (V4_9_8)"),
        ("remark", "string", "remark"),
        ("ext", "map<string,string>", "ext (custom header) fields as sent"),
        ("body_length", "int", "body length"),
        ("topic", "string", "topic named by the header (of the request, for a response)"),
        ("group", "string", "consumer or producer group named by the header (likewise)"),
        ("queue_id", "int", "queue id named by the header (likewise)"),
        ("request_code", "int", "for a response: its request's code"),
        ("request_record", "bigint", "for a response: its request's record"),
        ("request_offset", "bigint", "for a response: its request's stream offset"),
        ("latency", "double", "for a response: seconds from the request's last byte to its first"),
        (
            "emit_record",
            "bigint",
            "ordering: record whose arrival produced the row (2^62: the capture's end)",
        ),
        ("emit_index", "bigint", "ordering: place among the rows of that record"),
    ],
    "exchanges": [
        *_WHERE,
        ("role", "string", "role of the server port"),
        ("client", "string", "client endpoint host:port"),
        ("server", "string", "server endpoint host:port"),
        ("direction", "string", "direction of the request (s2c for requests a server sends to a client)"),
        ("code", "int", "request code"),
        ("code_name", "string", "request code name"),
        ("opaque", "int", "opaque shared by request and response"),
        ("language", "string", "requester's language"),
        ("version", "int", "requester's version ordinal"),
        ("topic", "string", "topic named by the request header"),
        ("group", "string", "group named by the request header"),
        ("queue_id", "int", "queue id named by the request header"),
        ("request_record", "bigint", "record of the request's first byte"),
        ("request_offset", "bigint", "stream offset of the request"),
        ("request_ts", "double", "time of the request's first byte"),
        ("request_ts_end", "double", "time of the request's last byte"),
        ("request_size", "int", "request bytes on the wire"),
        ("response_record", "bigint", "record of the response's first byte (null: unanswered)"),
        ("response_offset", "bigint", "stream offset of the response"),
        ("response_ts", "double", "time of the response's first byte"),
        ("response_size", "int", "response bytes on the wire"),
        ("response_code", "int", "response code"),
        ("response_code_name", "string", "response code name"),
        ("response_remark", "string", "response remark"),
        ("latency", "double", "seconds from the request's last byte to the response's first"),
    ],
    "messages": [
        *_WHERE,
        ("source", "string", "send (a send request's body), pull, query or view (a stored-message answer)"),
        ("record", "bigint", "record of the carrying frame's first byte"),
        ("ts", "double", "time of that record"),
        ("client", "string", "client endpoint host:port"),
        ("server", "string", "broker endpoint host:port"),
        ("group", "string", "producer group (send) or consumer group (pull)"),
        ("topic", "string", "topic"),
        ("queue_id", "int", "queue id"),
        ("queue_offset", "bigint", "queue offset (stored messages)"),
        ("msg_id", "string", "UNIQ_KEY, else the offset message id"),
        ("keys", "string", "KEYS property"),
        ("tags", "string", "TAGS property"),
        ("body_size", "int", "body bytes (as sent, compressed or not)"),
        ("born_ts", "bigint", "born timestamp, ms"),
        ("store_ts", "bigint", "store timestamp, ms (stored messages)"),
        ("reconsume_times", "int", "reconsume times"),
        ("store_host", "string", "store host:port (stored messages)"),
        ("error", "string", "why the body did not decode (then the other message columns are null)"),
    ],
    "ha": [
        *_WHERE,
        ("record", "bigint", "record of the frame's first byte"),
        ("ts", "double", "time of that record"),
        ("ts_end", "double", "time of the frame's last byte"),
        ("direction", "string", "c2s (slave to master) or s2c (master to slave)"),
        ("master", "string", "HA listener host:port"),
        ("slave", "string", "slave endpoint host:port"),
        ("offset", "bigint", "stream offset of the frame"),
        ("size", "int", "frame bytes"),
        ("variant", "string", "HA protocol variant (v4, autoswitch-5.0.0, ...)"),
        ("type", "string", "report, transfer, handshake, handshake_reply, transfer_ack"),
        ("ha_offset", "bigint", "commit-log offset: a transfer's start, or the slave's reported max offset"),
        ("data_length", "int", "commit-log bytes carried by a transfer"),
        ("heartbeat", "boolean", "a transfer without data"),
        ("epoch", "int", "epoch of the data (AutoSwitch)"),
        ("epoch_start_offset", "bigint", "start offset of that epoch (AutoSwitch)"),
        ("confirm_offset", "bigint", "master's confirm offset (AutoSwitch)"),
        ("max_phy_offset", "bigint", "master's max offset (AutoSwitch handshake reply)"),
        ("last_epoch", "int", "master's last epoch (AutoSwitch handshake reply)"),
        ("emit_record", "bigint", "ordering, as in commands"),
        ("emit_index", "bigint", "ordering, as in commands"),
    ],
    "problems": [
        ("capture", "string", "capture file"),
        ("conn", "bigint", "connection id (null for a packet that does not parse)"),
        ("local_stream", "bigint", "(raw only) the connection's number within its partition"),
        ("record", "bigint", "record where the problem was seen"),
        ("ts", "double", "time of that record"),
        ("direction", "string", "c2s, s2c or null"),
        ("offset", "bigint", "stream offset (for a packet: offset inside the record)"),
        ("verdict", "string", "gap, decode, skipped, truncated, packet or late"),
        ("message", "string", "what is wrong, in one line, as mqctl pcap says it"),
        ("length", "bigint", "bytes concerned"),
        ("field", "string", "field that did not decode"),
        ("expected", "string", "what was expected there"),
        ("found", "string", "what was found"),
        ("emit_record", "bigint", "ordering, as in commands"),
        ("emit_index", "bigint", "ordering, as in commands"),
    ],
    "connections": [
        *_WHERE,
        ("local_stream", "bigint", "(raw only) the connection's number within its partition"),
        ("first_record", "bigint", "record that opened the connection"),
        ("client", "string", "client address"),
        ("client_port", "int", "client port"),
        ("server", "string", "server address"),
        ("server_port", "int", "server port"),
        ("role", "string", "role of the server port"),
        ("protocol", "string", "remoting, ha, other or unknown"),
        ("ha_variant", "string", "HA protocol variant"),
        ("first_ts", "double", "time of the first segment"),
        ("last_ts", "double", "time of the last segment"),
        ("syn", "boolean", "the handshake was captured"),
        ("frames_c2s", "bigint", "frames decoded client to server"),
        ("frames_s2c", "bigint", "frames decoded server to client"),
        ("bytes_c2s", "bigint", "payload bytes client to server"),
        ("bytes_s2c", "bigint", "payload bytes server to client"),
        ("problems", "bigint", "problems reported"),
        ("missing", "bigint", "bytes reported missing"),
        ("unanswered", "bigint", "requests without a response when it ended"),
    ],
}

_STREAM: Column = (
    "stream",
    "int",
    "TCP stream number (`tcp.stream` of mqctl pcap), null for a packet problem",
)

#: the written tables: the raw columns without ``local_stream``, with ``stream`` after ``conn``
COLUMNS: dict[str, list[Column]] = {
    name: [
        c for col in cols for c in ((col, _STREAM) if col[0] == "conn" else (col,)) if c[0] != "local_stream"
    ]
    for name, cols in RAW.items()
}


def spark_schema(columns: list[Column]) -> Any:
    """A pyspark ``StructType`` for the columns (imported here, on the driver, when called)."""
    from pyspark.sql.types import StructType

    return StructType.fromDDL(", ".join(f"`{n}` {t}" for n, t, _ in columns))


def markdown() -> str:
    """The tables of docs/analysis.md's schema section."""
    out = []
    for name, cols in COLUMNS.items():
        out.append(f"### `{name}`\n\n| column | type | meaning |\n| --- | --- | --- |")
        out.extend(f"| `{n}` | {t} | {d} |" for n, t, d in cols)
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(markdown())
