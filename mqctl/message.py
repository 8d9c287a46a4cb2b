# Licensed under the Apache License, Version 2.0. See LICENSE.
"""``mqctl message``: send, query (by id, key, unique key, offset), consume."""

from __future__ import annotations

import sys
from collections.abc import Iterable
from datetime import tzinfo
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .fmt import human_ms, human_s
from .runner import finish, run, settings, warn_failures

if TYPE_CHECKING:
    from wire.admin.message import ConsumeResult, MessageView, SendResult
    from wire.admin.transaction import TransactionResult

    from .output import Output

app = typer.Typer(no_args_is_help=True)

TopicOpt = Annotated[str, typer.Option("--topic", "-t", help="Topic name.")]


# ---------------------------------------------------------------------- renderers (pure)


def body_text(msg: MessageView, hex_: bool = False) -> str:
    """The body as text when it is printable UTF-8 (and hex is not asked for), else as hex."""
    text = msg.body_text
    if not hex_ and text is not None and all(c.isprintable() or c in "\n\t\r" for c in text):
        return text
    return msg.body.hex()


def _java_list(items: Iterable[object]) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def detail_pairs(msg: MessageView, tz: tzinfo | None = None, hex_: bool = False) -> list[tuple[str, str]]:
    """The fields mqadmin queryMsgById prints, then the body itself."""
    return [
        ("OffsetID:", msg.offset_msg_id),
        ("MsgId:", msg.msg_id),
        ("Topic:", msg.topic),
        ("Tags:", _java_list([msg.tags] if msg.tags is not None else [])),
        ("Keys:", _java_list(msg.keys)),
        ("Broker Name:", msg.broker_name or ""),
        ("Queue ID:", str(msg.queue_id)),
        ("Queue Offset:", str(msg.queue_offset)),
        ("CommitLog Offset:", str(msg.commit_log_offset)),
        ("Reconsume Times:", str(msg.reconsume_times)),
        ("Born Timestamp:", human_ms(msg.born_timestamp, tz)),
        ("Store Timestamp:", human_ms(msg.store_timestamp, tz)),
        ("Born Host:", msg.born_host),
        ("Store Host:", msg.store_host),
        ("System Flag:", str(msg.sys_flag)),
        ("Properties:", "{" + ", ".join(f"{k}={v}" for k, v in msg.properties.items()) + "}"),
        ("Body:", body_text(msg, hex_)),
    ]


KEY_COLUMNS = ["#Message ID", "#Broker Name", "#QID", "#Offset", "#Tags", "#Keys", "#Store Time"]


def key_rows(msgs: tuple[MessageView, ...], tz: tzinfo | None = None) -> list[list[str]]:
    """mqadmin queryMsgByKey (message id, queue, offset) with a few more columns."""
    return [[m.msg_id, m.broker_name or "", str(m.queue_id), str(m.queue_offset), m.tags or "",
             " ".join(m.keys), human_s(m.store_timestamp, tz)] for m in msgs]


CONSUME_COLUMNS = ["#Broker Name", "#QID", "#Offset", "#MsgId", "#Tags", "#Keys", "#Store Time", "#Body"]


def consume_rows(result: ConsumeResult, tz: tzinfo | None = None, hex_: bool = False) -> list[list[str]]:
    return [[m.broker_name or "", str(m.queue_id), str(m.queue_offset), m.msg_id, m.tags or "",
             " ".join(m.keys), human_ms(m.store_timestamp, tz), body_text(m, hex_)] for m in result.messages]


SEND_COLUMNS = ["#Broker Name", "#QID", "#Send Result", "#MsgId", "#OffsetMsgId", "#Queue Offset"]


def send_rows(r: SendResult) -> list[list[str]]:
    return [[r.broker_name, str(r.queue_id), r.status, r.msg_id, r.offset_msg_id or "",
             "" if r.queue_offset is None else str(r.queue_offset)]]


def _render_transaction(out: Output, done: TransactionResult) -> None:
    if out.format != "table":
        out.data(done)
        return
    out.table(SEND_COLUMNS, send_rows(done.send))
    out.info(f"transaction of producer group {done.producer_group}: {done.outcome} sent")
    for c in done.checks:
        out.info(f"check from {c.broker_addr} (queue offset {c.tran_state_table_offset}, commit log offset "
                 f"{c.commit_log_offset}): answered {c.answer}")
    if done.outcome == "unknown" and not done.checks:
        out.warn("no CHECK_TRANSACTION_STATE came while waiting: the message is still pending")


def _details(out: Output, msgs: tuple[MessageView, ...], hex_: bool) -> None:
    for i, m in enumerate(msgs):
        if i:
            out.line("-" * 56)
        out.kv(detail_pairs(m, hex_=hex_))


def _as_data(msgs: tuple[MessageView, ...] | ConsumeResult, hex_: bool) -> object:
    from dataclasses import replace

    from wire.admin.message import ConsumeResult

    def one(m: MessageView) -> MessageView:
        # with --hex the text form is left out, so that JSON carries the bytes only
        return replace(m, body_text=None) if hex_ else m

    if isinstance(msgs, ConsumeResult):
        return replace(msgs, messages=tuple(one(m) for m in msgs.messages))
    return [one(m) for m in msgs]


# ---------------------------------------------------------------------- commands


def _parse_props(items: list[str] | None) -> dict[str, str]:
    from .serving import parse_sets

    return parse_sets(items, "--property")


@app.command()
def send(
    ctx: typer.Context,
    topic: TopicOpt,
    body: Annotated[str | None, typer.Option(
        "--body", "-p", help="The body as UTF-8 text; '-' reads it from stdin.")] = None,
    file: Annotated[Path | None, typer.Option("--file", help="Read the body from this file.")] = None,
    keys: Annotated[str | None, typer.Option("--keys", "-k", help="Message keys (space-separated).")] = None,
    tags: Annotated[str | None, typer.Option("--tags", "-c", help="Message tag.")] = None,
    broker: Annotated[str | None, typer.Option("--broker", "-b", help="Send to this broker name.")] = None,
    queue: Annotated[int | None, typer.Option(
        "--queue", "-q", help="Send to this queue id (needs -b).")] = None,
    group: Annotated[str | None, typer.Option("--group", "-g", help="Producer group.")] = None,
    prop: Annotated[list[str] | None, typer.Option(
        "--property", help="KEY=VALUE user property; repeatable.")] = None,
    transaction: Annotated[str | None, typer.Option(
        "--transaction", help="Send a transactional (half) message and end it with commit, rollback or "
        "unknown; after unknown, wait for the broker's CHECK_TRANSACTION_STATE and answer it with "
        "--check-answer.")] = None,
    check_answer: Annotated[str, typer.Option(
        "--check-answer", help="The answer to the broker's transaction checks: commit, rollback or "
        "unknown.")] = "commit",
    wait: Annotated[float, typer.Option(
        "--wait", help="After --transaction unknown, wait this many seconds for a check (the broker "
        "checks every transactionCheckInterval, 60 s by default).")] = 120.0,
    compress: Annotated[str | None, typer.Option(
        "--compress", help="Send the body compressed with zlib, lz4 or zstd, with the sysFlag bits a 5.x "
        "Java producer sets (4.x consumers read only zlib).")] = None,
    compress_level: Annotated[int, typer.Option(
        "--compress-level", help="The zlib (0-9) or zstd (1-22) level; lz4 has none.")] = 5,
) -> None:
    """Send one message (SEND_MESSAGE_V2; mqadmin sendMessage), or a transactional one
    (TransactionMQProducer)."""
    from wire.admin import message as api

    from .errors import UsageError

    if (body is None) == (file is None):
        raise UsageError("give the body with --body/-p or --file")
    if queue is not None and broker is None:
        raise UsageError("--queue needs --broker")
    if file is not None:
        try:
            data = file.read_bytes()
        except OSError as exc:
            raise UsageError(f"--file {file}: {exc.strerror or exc}") from None
    else:
        data = sys.stdin.buffer.read() if body == "-" else (body or "").encode("utf-8")
    # mirrors Validators.checkMessage: the Java client refuses an empty body and a bad topic
    if not data:
        raise UsageError("the message body is empty (the Java client refuses to send one)"
                         if file is None else f"--file {file}: the file is empty")
    from wire.admin.errors import BadRequest

    try:
        api.check_topic_name(topic)
    except BadRequest as exc:
        raise UsageError(f"--topic: {exc}") from None
    compression = None
    if compress is not None:
        from wire.message import CompressionType

        kinds = {t.name.lower(): t for t in CompressionType}
        compression = kinds.get(compress.lower())
        if compression is None:
            raise UsageError(f"--compress takes one of {', '.join(kinds)}, not {compress!r}")
        bounds = {"ZLIB": (0, 9), "ZSTD": (1, 22)}.get(compression.name)
        if bounds is not None and not bounds[0] <= compress_level <= bounds[1]:
            raise UsageError(f"--compress-level for {compress.lower()} is from {bounds[0]} to {bounds[1]}, "
                             f"not {compress_level}")
    outcomes = ("commit", "rollback", "unknown")
    if transaction is not None or check_answer != "commit":
        if compression is not None:
            raise UsageError("--compress is for plain sends, not with --transaction")
        if transaction not in outcomes:
            raise UsageError(f"--transaction takes one of {', '.join(outcomes)}")
        if check_answer not in outcomes:
            raise UsageError(f"--check-answer takes one of {', '.join(outcomes)}")
        from wire.admin import transaction as tx

        done = run(ctx, tx.message_send_transaction, topic=topic, body=data, outcome=transaction,
                   check_answer=check_answer, wait=wait, tags=tags, keys=keys, broker=broker, queue=queue,
                   producer_group=group, properties=_parse_props(prop))
        _render_transaction(settings(ctx).output, done)
        return
    result = run(ctx, api.message_send, topic=topic, body=data, tags=tags, keys=keys, broker=broker,
                 queue=queue, producer_group=group, properties=_parse_props(prop), compression=compression,
                 compress_level=compress_level)
    out = settings(ctx).output
    out.render(result, SEND_COLUMNS, send_rows(result))
    if result.status != "SEND_OK":
        out.warn(f"stored on the master, but {result.status}")


@app.command()
def query(
    ctx: typer.Context,
    msg_id: Annotated[str | None, typer.Option("--id", "-i", help="An offset message id "
                                               "(or, with -t, a unique key).")] = None,
    key: Annotated[str | None, typer.Option("--key", "-k", help="A message key (needs -t).")] = None,
    unique_key: Annotated[str | None, typer.Option(
        "--unique-key", "-u", help="The client's message id, UNIQ_KEY (needs -t).")] = None,
    offset: Annotated[int | None, typer.Option(
        "--offset", "-O", help="A queue offset (needs -t, -b and -q).")] = None,
    topic: Annotated[str | None, typer.Option("--topic", "-t", help="Topic name.")] = None,
    broker: Annotated[str | None, typer.Option("--broker", "-b", help="Broker name (with --offset).")] = None,
    queue: Annotated[int | None, typer.Option("--queue", "-q", help="Queue id (with --offset).")] = None,
    max_num: Annotated[int, typer.Option(help="At most this many hits per broker (--key).")] = 64,
    hex_: Annotated[bool, typer.Option("--hex", help="Bodies in hex.")] = False,
) -> None:
    """Look a message up by offset id, key, unique key or queue offset (mqadmin queryMsgById,
    queryMsgByKey, queryMsgByUniqueKey, queryMsgByOffset)."""
    from wire.admin import message as api

    from .errors import UsageError

    given = [n for n, v in (("--id", msg_id), ("--key", key), ("--unique-key", unique_key),
                            ("--offset", offset)) if v is not None]
    if offset is not None and offset < 0:
        raise UsageError(f"--offset: {offset} is negative")
    if len(given) != 1:
        raise UsageError("give exactly one of --id, --key, --unique-key, --offset")
    out = settings(ctx).output
    hits = None
    if msg_id is not None:
        msgs = run(ctx, api.message_by_id, msg_id=msg_id, topic=topic)
    elif topic is None:
        raise UsageError(f"{given[0]} needs --topic/-t")
    elif key is not None:
        hits = run(ctx, api.message_by_key, topic=topic, key=key, max_num=max_num)
        warn_failures(out, hits.failures, _label)
        if out.format == "table":
            out.table(KEY_COLUMNS, key_rows(hits.messages))
        else:
            out.data(_as_data(hits.messages, hex_))
        finish(hits.failures, "message query", servers="brokers", total=hits.brokers_asked)
        return
    elif unique_key is not None:
        hits = run(ctx, api.message_by_unique_key, topic=topic, key=unique_key)
        warn_failures(out, hits.failures, _label)
        msgs = hits.messages
    else:
        if broker is None or queue is None:
            raise UsageError("--offset needs --broker/-b and --queue/-q")
        assert offset is not None
        msgs = run(ctx, api.message_by_offset, topic=topic, broker=broker, queue=queue, offset=offset)
    if out.format == "table":
        _details(out, msgs, hex_)
    else:
        out.data(_as_data(msgs, hex_))
    if hits is not None:
        finish(hits.failures, "message query", servers="brokers", total=hits.brokers_asked)


def _label(o: object) -> str:
    name = getattr(o, "detail", None)
    return f"{name} {getattr(o, 'target', '')}" if name else str(getattr(o, "target", ""))


@app.command()
def consume(
    ctx: typer.Context,
    topic: TopicOpt,
    broker: Annotated[str | None, typer.Option("--broker", "-b", help="Only this broker name.")] = None,
    queue: Annotated[int | None, typer.Option("--queue", "-q", help="Only this queue id.")] = None,
    offset: Annotated[int | None, typer.Option(
        "--offset", "-O", help="Start every queue at this offset. Default: its min offset.")] = None,
    count: Annotated[int, typer.Option("--count", "-c", help="At most this many messages.")] = 32,
    group: Annotated[str, typer.Option("--group", "-g", help="Consumer group of the pulls "
                                       "(nothing is committed).")] = "TOOLS_CONSUMER",
    hex_: Annotated[bool, typer.Option("--hex", help="Bodies in hex.")] = False,
    sql: Annotated[str | None, typer.Option(
        "--sql", help="Only messages this SQL92 selector matches on their properties, e.g. "
        "\"a > 5 AND b = 'x'\" (the broker filters; it needs enablePropertyFilter=true).")] = None,
    begin: Annotated[str | None, typer.Option(
        "--begin", "-s", help="Only messages stored at or after this time (milliseconds since the epoch, "
        "2026-11-22T09:57:42 or mqadmin's 2026-11-22#09:57:42:000).")] = None,
    end: Annotated[str | None, typer.Option(
        "--end", "-e", help="Only messages stored at or before this time.")] = None,
) -> None:
    """Print messages of a topic from given offsets with a pull loop (mqadmin printMsg/consumeMessage).
    Nothing is written to the broker: no offset is committed, and an offset out of a queue's range
    is refused before it is asked for."""
    from wire.admin import message as api

    from .errors import UsageError

    if offset is not None and offset < 0:
        raise UsageError(f"--offset: {offset} is negative")
    if count <= 0:
        raise UsageError(f"--count: {count} is not a positive number")

    from .options import parse_time

    if begin is not None and offset is not None:
        raise UsageError("give --offset or --begin, not both")
    begin_ms = None if begin is None else parse_time(begin, "--begin")
    end_ms = None if end is None else parse_time(end, "--end")
    if begin_ms is not None and end_ms is not None and end_ms < begin_ms:
        raise UsageError("--end is before --begin")
    result = run(ctx, api.message_consume, topic=topic, broker=broker, queue=queue, offset=offset,
                 count=count, group=group, sql=sql, begin=begin_ms, end=end_ms)
    out = settings(ctx).output
    warn_failures(out, result.failures, _label)
    if out.format != "table":
        out.data(_as_data(result, hex_))
    else:
        out.table(CONSUME_COLUMNS, consume_rows(result, hex_=hex_))
        out.info(f"{len(result.messages)} message(s) from {len(result.queues)} queue(s)")
    finish(result.failures, "message consume", servers="brokers", total=result.brokers_asked)
