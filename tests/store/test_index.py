# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The key/UNIQ_KEY index: queries, file roll-over, and the files read back with wire.store's
independent mirror of IndexFile (index_select_phy_offsets)."""

from __future__ import annotations

import re
from pathlib import Path

from reference_broker.store import MessageStore, StoreConfig
from tests.store.storeutil import message, run, small_config
from wire.message import decode_stored_message
from wire.store import (
    decode_index_entry,
    decode_index_header,
    index_entry_position,
    index_file_size,
    index_key_hash,
    index_select_phy_offsets,
)

FAR = 2**62


def test_query_by_key_and_uniq_key(cfg: StoreConfig) -> None:
    async def go():
        async with MessageStore(cfg) as s:
            rs = [await s.put_message(message(topic="Orders", queue_id=i % 2, body=b"order %d" % i,
                                              keys=f"order-{i} customer-{i % 3}", uniq=f"UNIQ{i:03d}"))
                  for i in range(12)]
            await s.put_message(message(topic="Other", keys="customer-1", uniq="UNIQ001"))
            return rs, {
                "one": s.query_message("Orders", "order-5", 32, 0, FAR),
                "uniq": s.query_message("Orders", "UNIQ007", 32, 0, FAR),
                "many": s.query_message("Orders", "customer-1", 32, 0, FAR),
                "capped": s.query_message("Orders", "customer-1", 2, 0, FAR),
                "other": s.query_message("Other", "customer-1", 32, 0, FAR),
                "none": s.query_message("Orders", "nobody", 32, 0, FAR),
                "later": s.query_message("Orders", "order-5", 32, rs[-1].store_timestamp + 5000, FAR),
                "result": s.query_message_result("Orders", "order-5", 32, 0, FAR),
                "end": s.commitlog_max_offset(),
            }
    rs, q = run(go())
    assert [decode_stored_message(m).body for m in q["one"]] == [b"order 5"]
    assert [decode_stored_message(m).body for m in q["uniq"]] == [b"order 7"]
    assert [decode_stored_message(m).body for m in q["many"]] == [b"order 1", b"order 4", b"order 7", b"order 10"]
    assert len(q["capped"]) == 2
    assert [decode_stored_message(m).topic for m in q["other"]] == ["Other"]
    assert q["none"] == [] and q["later"] == []
    # the header fields of the QUERY_MESSAGE response: where the index stands
    res = q["result"]
    assert res.index_last_update_phyoffset == q["end"] - decode_stored_message(q["other"][0]).total_size
    assert res.index_last_update_timestamp >= rs[-1].store_timestamp


def test_index_files_roll_over_and_read_back_with_wire_store(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", max_hash_slot_num=7, max_index_num=10,
                       flush_interval_consume_queue_ms=600_000)

    async def go():
        async with MessageStore(cfg) as s:
            rs = [await s.put_message(message(topic="T", body=b"%d" % i, keys="same", uniq=f"U{i}"))
                  for i in range(20)]
            # a full file's header is on disk as soon as the next file takes over
            counts = [decode_index_header(p.read_bytes()).index_count for p in sorted(cfg.index_dir.iterdir())]
            return rs, s.query_message("T", "same", 64, 0, FAR), counts
    rs, same, counts = run(go())
    assert counts[:-1] == [10] * (len(counts) - 1)
    files = sorted(cfg.index_dir.iterdir())
    # 40 keys, 9 entries per file (entry 0 is never used)
    assert len(files) == 5
    assert all(re.fullmatch(r"\d{17}", p.name) for p in files)
    assert all(p.stat().st_size == index_file_size(7, 10) for p in files)
    assert sorted(decode_stored_message(m).body for m in same) == sorted(b"%d" % i for i in range(20))
    offsets = {r.wrote_offset for r in rs}
    seen = []
    for p in files:
        buf = p.read_bytes()
        h = decode_index_header(buf)
        n = h.index_count - 1
        entries = [decode_index_entry(buf, index_entry_position(k, 7)) for k in range(1, n + 1)]
        assert all(e.phy_offset in offsets for e in entries)
        assert h.begin_phy_offset == entries[0].phy_offset and h.end_phy_offset == entries[-1].phy_offset
        for e in entries:
            assert e.key_hash in (index_key_hash("T#same"), *(index_key_hash(f"T#U{i}") for i in range(20)))
        seen += [e.phy_offset for e in entries if e.key_hash == index_key_hash("T#same")]
        # the Java walk (wire.store's mirror) finds in this file what we put in it
        walk = index_select_phy_offsets(buf, "T#same", 0, FAR, 64, hash_slot_num=7)
        assert sorted(walk) == sorted(e.phy_offset for e in entries if e.key_hash == index_key_hash("T#same"))
    assert sorted(seen) == sorted(offsets)


def test_disabled_index_builds_nothing(tmp_path: Path) -> None:
    cfg = small_config(tmp_path / "s", message_index_enable=False)

    async def go():
        async with MessageStore(cfg) as s:
            await s.put_message(message(keys="k", uniq="u"))
            return s.query_message("TopicTest", "k", 32, 0, FAR)
    assert run(go()) == []
    assert not cfg.index_dir.exists() or not any(cfg.index_dir.iterdir())
