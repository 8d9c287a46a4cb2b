# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Dispatch: from CommitLog records to consume queues, the index and the listeners.

Theory of operation
-------------------
The dispatcher is a cursor over the CommitLog (``ReputMessageService``): every byte before
:attr:`Dispatcher.reput_offset` has been dispatched. A record is dispatched by
:meth:`Dispatcher.dispatch` (``DispatchRequest`` through ``CommitLogDispatcherBuildConsumeQueue``
and ``CommitLogDispatcherBuildIndex``): one ConsumeQueue unit for an ordinary or committed message
(prepared and rolled-back ones get none), index entries for UNIQ_KEY and each KEYS word, then the
dispatch and arrival listeners (long polling, delayed delivery).

The fields of a dispatch come from one of two places, and they are the same fields:

* a put knows them (it has just encoded the record from them), so it dispatches at once and moves
  the cursor past its records, without reading its bytes back;
* everything else, a replica's bytes, the records recovery finds after the queues' end, a store
  that was a slave a moment ago, is walked by :meth:`Dispatcher.reput` from the cursor to the last
  whole record. It reads the records' heads straight from the mapped file (the fields above and
  the properties string, never the body) and dispatches them in batches: each queue's units of a
  batch in one append, the index keys hashed and put together, then the listeners, record by
  record. What the head scan does not take (a BLANK, a record cut short, damage) is decided by the
  CommitLog walk, as recovery decides it.

Either way the unit's tagsCode is computed here, by one rule: the hash of TAGS, or for the schedule
topic the due time of the message's delay level (``checkMessageAndReturnSize``, by the delay rule
of :mod:`wire.message.delay` that the send path follows too). Dispatching is idempotent, so
recovery may dispatch records again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType

from wire.message import TRANSACTION_TYPE_MASK, TransactionType
from wire.message.delay import SCHEDULE_TOPIC, schedule_tags_code

from . import _codec
from ._codec import MessageConst
from .consume_queue import ConsumeQueue
from .files import Room, StoreFiles
from .types import PutStatus

__all__ = ["SCHEDULE_TOPIC", "AppendListener", "ArrivalListener", "DispatchListener", "DispatchRequest",
           "Dispatcher", "ReplicaWaiter"]

log = logging.getLogger("reference_broker.store")

#: (topic, queue_id, queue_offset, store_timestamp) of each record that reached a consume queue
DispatchListener = Callable[[str, int, int, int], None]
#: the same plus the unit's tagsCode, for long polling that filters by tag
ArrivalListener = Callable[[str, int, int, int, int], None]
#: the CommitLog's new end, after every append (a put or a replica's bytes)
AppendListener = Callable[[int], None]
#: awaited with the begin and end offsets of a put on a SYNC_MASTER (or of a run of puts made
#: together, and how many puts that is); answers PUT_OK or the HA status
ReplicaWaiter = Callable[[int, int, int], Awaitable[PutStatus]]
#: what one record's dispatch needs: topic, queueId, CommitLog offset, size, store timestamp,
#: queue offset, properties, sysFlag (``DispatchRequest``)
DispatchRequest = tuple[str, int, int, int, int, int, Mapping[str, str], int]

TRAN_MASK = TRANSACTION_TYPE_MASK
_ROLLBACK = int(TransactionType.TRANSACTION_ROLLBACK_TYPE)
#: transaction types whose messages get no ConsumeQueue unit and take queue offset 0
HELD_TRAN_TYPES = (int(TransactionType.TRANSACTION_PREPARED_TYPE), _ROLLBACK)
_KEYS = MessageConst.PROPERTY_KEYS
_TAGS = MessageConst.PROPERTY_TAGS
_NO_PROPS: Mapping[str, str] = MappingProxyType({})
#: records one head scan takes at most (a batch of units, keys and listener calls)
_BATCH = 256
#: tagsCodes remembered by TAGS value (a topic has few tags, each hashed once)
_TAG_CODES_MAX = 4096
_UNIQ_KEY = MessageConst.PROPERTY_UNIQ_CLIENT_MESSAGE_ID_KEYIDX


class Dispatcher(Room):
    """The dispatch cursor, the dispatchers and the listeners; see the module docstring."""

    def __init__(self, files: StoreFiles) -> None:
        super().__init__(files)
        config = files.config
        #: every CommitLog byte before this offset is dispatched
        self.reput_offset = 0
        #: the newest store timestamp dispatched (a put's next timestamp is never older)
        self.last_store_ts = 0
        #: the store timestamp of the last record that reached a consume queue (the checkpoint's)
        self.last_dispatch_ts = 0
        self.listeners: list[DispatchListener] = []
        self.arrival_listeners: list[ArrivalListener] = []
        self.append_listeners: list[AppendListener] = []
        self._index_enable = config.message_index_enable
        self._delay_levels = config.delay_levels_ms
        self._stall_logged = -1
        self._tag_codes: dict[str, int] = {}

    # ------------------------------------------------------------------ listeners
    def notify_append(self) -> None:
        end = self.commitlog.max_offset
        for fn in self.append_listeners:
            try:
                fn(end)
            except Exception:  # a listener's bug must not stop the store
                log.exception("append listener %r failed", fn)

    # ------------------------------------------------------------------ dispatch
    def tags_code(self, topic: str, props: Mapping[str, str], store_ts: int) -> int:
        if topic == SCHEDULE_TOPIC:
            # mirrors checkMessageAndReturnSize: a scheduled message's tagsCode is its due time
            due = schedule_tags_code(props, store_ts, self._delay_levels)
            if due is not None:
                return due
        tags = props.get(_TAGS)
        if not tags:
            return 0
        code = self._tag_codes.get(tags)
        if code is None:
            if len(self._tag_codes) >= _TAG_CODES_MAX:
                self._tag_codes.clear()
            code = self._tag_codes[tags] = _codec.tags_code(tags)
        return code

    def dispatch(self, topic: str, queue_id: int, commit_offset: int, size: int, store_timestamp: int,
                 queue_offset: int, props: Mapping[str, str], sys_flag: int) -> None:
        """``DispatchRequest`` through the dispatchers: consume queue, index, listeners."""
        tran = sys_flag & TRAN_MASK
        if tran not in HELD_TRAN_TYPES:
            tags_code = self.tags_code(topic, props, store_timestamp)
            queues = self.queues
            qs = queues.by_topic.get(topic)
            cq = qs.get(queue_id) if qs is not None else None
            if cq is None:
                cq = queues.find_or_create(topic, queue_id)
            cq.put(commit_offset, size, tags_code, queue_offset, store_timestamp)
            self.last_dispatch_ts = store_timestamp
            key = (topic, queue_id)
            next_offset = queues.next_offset
            if next_offset.get(key, 0) <= queue_offset:
                next_offset[key] = queue_offset + 1
            for fn in self.listeners:
                try:
                    fn(topic, queue_id, queue_offset, store_timestamp)
                except Exception:  # a listener's bug must not stop the store
                    log.exception("dispatch listener %r failed", fn)
            for afn in self.arrival_listeners:
                try:
                    afn(topic, queue_id, queue_offset, store_timestamp, tags_code)
                except Exception:
                    log.exception("arrival listener %r failed", afn)
        if self._index_enable:
            self.index.build_index(topic, commit_offset, store_timestamp, props.get(_KEYS),
                                   props.get(_UNIQ_KEY), tran == _ROLLBACK)
        if store_timestamp > self.last_store_ts:
            self.last_store_ts = store_timestamp

    def dispatch_many(self, requests: list[DispatchRequest]) -> None:
        """:meth:`dispatch` of each request, in CommitLog order, batched: each queue's units in one
        append, the index keys hashed and put together, then the listeners told of each record in
        order (every unit is readable by then). The same units, index entries and listener calls
        as one :meth:`dispatch` a request."""
        queues = self.queues
        by_topic = queues.by_topic
        units: dict[ConsumeQueue, list[tuple[int, int, int, int, int]]] = {}
        told: list[tuple[str, int, int, int, int]] = []
        indexed: list[tuple[str, int, int, str | None, str | None]] = []
        index_enable = self._index_enable
        delay_topic = SCHEDULE_TOPIC
        tag_codes = self._tag_codes
        store_ts = self.last_store_ts
        for topic, queue_id, commit_offset, size, ts, queue_offset, props, sys_flag in requests:
            tran = sys_flag & TRAN_MASK
            if tran not in HELD_TRAN_TYPES:
                tags = props.get(_TAGS)
                if topic == delay_topic:
                    code = self.tags_code(topic, props, ts)
                elif not tags:
                    code = 0
                else:
                    cached = tag_codes.get(tags)
                    # a miss: tags_code hashes them and keeps the code in the cache
                    code = self.tags_code(topic, props, ts) if cached is None else cached
                qs = by_topic.get(topic)
                cq = qs.get(queue_id) if qs is not None else None
                if cq is None:
                    cq = queues.find_or_create(topic, queue_id)
                run = units.get(cq)
                if run is None:
                    run = units[cq] = []
                run.append((commit_offset, size, code, queue_offset, ts))
                told.append((topic, queue_id, queue_offset, ts, code))
            if index_enable and tran != _ROLLBACK:
                keys = props.get(_KEYS)
                uniq = props.get(_UNIQ_KEY)
                if keys or uniq:
                    indexed.append((topic, commit_offset, ts, keys, uniq))
            if ts > store_ts:
                store_ts = ts
        for cq, run in units.items():
            cq.put_units(run)
        if indexed:
            self.index.build_many(indexed)
        self._tell(told)
        self.last_store_ts = store_ts

    def _tell(self, told: list[tuple[str, int, int, int, int]]) -> None:
        """The queues' next offsets moved past, and the listeners told of, each record that
        reached a consume queue: ``(topic, queueId, queue offset, store timestamp, tagsCode)``."""
        next_offset = self.queues.next_offset
        listeners = self.listeners
        arrivals = self.arrival_listeners
        for topic, queue_id, queue_offset, ts, code in told:
            key = (topic, queue_id)
            if next_offset.get(key, 0) <= queue_offset:
                next_offset[key] = queue_offset + 1
            for fn in listeners:
                try:
                    fn(topic, queue_id, queue_offset, ts)
                except Exception:  # a listener's bug must not stop the store
                    log.exception("dispatch listener %r failed", fn)
            for afn in arrivals:
                try:
                    afn(topic, queue_id, queue_offset, ts, code)
                except Exception:
                    log.exception("arrival listener %r failed", afn)
        if told:
            self.last_dispatch_ts = told[-1][3]

    def reput(self, limit: int = 0) -> bool:
        """Dispatch every whole record after the cursor (``ReputMessageService.doReput``), or at
        most ``limit`` of them (0: no limit); True when it stopped at the limit with bytes left.

        Records are read straight from the mapped file, heads only (:func:`wire.message.scan_record_heads`:
        no body copied), and dispatched in batches (:meth:`_dispatch_heads`). Whatever the head
        scan does not take (a BLANK, a record not yet whole, damage, a record the fast scan
        declines) is looked at by the CommitLog walk, which decides and says why."""
        cl = self.commitlog
        done = 0
        if cl.min_offset >= 0 and self.reput_offset < cl.min_offset:
            log.warning("dispatch cursor %d is below the CommitLog start %d", self.reput_offset,
                        cl.min_offset)
            self.reput_offset = cl.min_offset
        while self.reput_offset < cl.max_offset:
            offset = self.reput_offset
            f = cl.files.find(offset)
            if f is None:
                return False
            base = f.file_from_offset
            want = min(limit - done, _BATCH) if limit else _BATCH
            heads, stop = _codec.scan_record_heads(f.mm, offset - base, f.wrote_position, want)
            if heads:
                self._dispatch_heads(base, heads)
                self.reput_offset = base + stop
                done += len(heads)
                if limit and done >= limit:
                    return self.reput_offset < cl.max_offset
                continue
            item = next(iter(cl.walk(offset, verify=False)), None)
            if item is None:
                return False
            if item.kind == "record":
                m = item.message
                assert m is not None
                if m.physical_offset != item.offset:
                    log.warning("record at %d says it is at %d", item.offset, m.physical_offset)
                self.dispatch(m.topic, m.queue_id, item.offset, item.size, m.store_timestamp,
                              m.queue_offset, m.properties, m.sys_flag)
                self.reput_offset = item.offset + item.size
                done += 1
                if limit and done >= limit:
                    return self.reput_offset < cl.max_offset
            elif item.kind == "blank":
                self.reput_offset = cl.roll_next_file(item.offset)
            else:
                if not item.incomplete and self._stall_logged != item.offset:
                    self._stall_logged = item.offset
                    log.error("[BUG] dispatch stops at CommitLog offset %d: %s", item.offset, item.reason)
                return False
        return False

    def _dispatch_heads(self, base: int, heads: list[_codec.RecordHead]) -> None:
        """:meth:`dispatch_many` of a run of record heads of the file that starts at ``base``."""
        requests: list[DispatchRequest] = []
        for head in heads:
            commit_offset = base + head.position
            if head.physical_offset != commit_offset:
                log.warning("record at %d says it is at %d", commit_offset, head.physical_offset)
            text = head.properties_text
            requests.append((head.topic, head.queue_id, commit_offset, head.total_size, head.store_timestamp,
                             head.queue_offset, _codec.decode_properties(text) if text else _NO_PROPS,
                             head.sys_flag))
        self.dispatch_many(requests)

    @property
    def behind_bytes(self) -> int:
        """``dispatchBehindBytes``: CommitLog bytes not yet dispatched."""
        return max(0, self.commitlog.max_offset - self.reput_offset)
