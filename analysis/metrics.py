# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The metrics, as Spark SQL over the tables (registered as temporary views of the Parquet files).

Each metric is one SQL statement in :data:`METRICS`; :func:`compute` runs them all and returns
plain lists of dicts (JSON-ready). Time series use buckets of ``bucket`` seconds (the ``:bucket``
placeholder), chosen from the capture's span so that a plot has about 60 points.
"""

from __future__ import annotations

import math
from decimal import Decimal
from pathlib import Path
from typing import Any

from pyspark.sql import SparkSession

from .schema import COLUMNS

__all__ = ["METRICS", "compute", "compute_over", "register"]

#: name → (what it shows, SQL)
METRICS: dict[str, tuple[str, str]] = {
    "summary": ("rows per table and the capture's span", """
        SELECT (SELECT count(*) FROM commands) AS commands, (SELECT count(*) FROM exchanges) AS exchanges,
               (SELECT count(*) FROM messages) AS messages, (SELECT count(*) FROM ha) AS ha_frames,
               (SELECT count(*) FROM problems) AS problems, (SELECT count(*) FROM connections) AS connections,
               (SELECT count(DISTINCT capture) FROM connections) AS captures,
               (SELECT min(ts) FROM commands) AS first_ts, (SELECT max(ts) FROM commands) AS last_ts"""),
    "codes": ("requests per code: count, error responses, error rate, unanswered, latency percentiles (ms)", """
        SELECT code, code_name, count(*) AS requests,
               count(response_code) AS answered, count(*) - count(response_code) AS unanswered,
               sum(CASE WHEN response_code <> 0 THEN 1 ELSE 0 END) AS errors,
               round(sum(CASE WHEN response_code <> 0 THEN 1 ELSE 0 END) / greatest(count(response_code), 1), 4)
                   AS error_rate,
               round(percentile_approx(latency, 0.5) * 1000, 3) AS p50_ms,
               round(percentile_approx(latency, 0.95) * 1000, 3) AS p95_ms,
               round(percentile_approx(latency, 0.99) * 1000, 3) AS p99_ms,
               round(max(latency) * 1000, 3) AS max_ms
        FROM exchanges GROUP BY code, code_name ORDER BY requests DESC, code"""),
    "responses": ("responses per response code", """
        SELECT response_code AS code, response_code_name AS name, count(*) AS responses
        FROM exchanges WHERE response_code IS NOT NULL GROUP BY 1, 2 ORDER BY responses DESC, code"""),
    "codes_over_time": ("requests and error responses per bucket", """
        SELECT floor(request_ts / :bucket) * :bucket AS t, count(*) AS requests,
               sum(CASE WHEN response_code <> 0 THEN 1 ELSE 0 END) AS errors
        FROM exchanges GROUP BY 1 ORDER BY 1"""),
    "errors_over_time": ("error responses per code per bucket", """
        SELECT floor(request_ts / :bucket) * :bucket AS t, response_code_name AS name, count(*) AS responses
        FROM exchanges WHERE response_code <> 0 GROUP BY 1, 2 ORDER BY 1, 2"""),
    "latency_over_time": ("latency percentiles (ms) of answered requests per bucket (not PULL_MESSAGE: a broker holds a pull open by long polling)", """
        SELECT floor(request_ts / :bucket) * :bucket AS t, count(*) AS answered,
               percentile_approx(latency, 0.5) * 1000 AS p50_ms, percentile_approx(latency, 0.95) * 1000 AS p95_ms,
               percentile_approx(latency, 0.99) * 1000 AS p99_ms
        FROM exchanges WHERE latency IS NOT NULL AND code <> 11 GROUP BY 1 ORDER BY 1"""),
    "latency_by_server": ("latency percentiles (ms) per server (broker, name server) and code", """
        SELECT server, role, code_name, count(*) AS answered,
               round(percentile_approx(latency, 0.5) * 1000, 3) AS p50_ms,
               round(percentile_approx(latency, 0.95) * 1000, 3) AS p95_ms,
               round(percentile_approx(latency, 0.99) * 1000, 3) AS p99_ms
        FROM exchanges WHERE latency IS NOT NULL GROUP BY 1, 2, 3 ORDER BY answered DESC, server, code_name"""),
    "throughput": ("messages and body bytes per topic: produced (send) and consumed (pull), per second of the captures that show the topic", """
        WITH spans AS (SELECT capture, max(ts) - min(ts) AS span FROM commands GROUP BY capture),
             per AS (SELECT capture, topic, source, count(*) AS messages, sum(body_size) AS bytes FROM messages
                     WHERE error IS NULL AND source IN ('send', 'pull') GROUP BY 1, 2, 3)
        SELECT topic, source, sum(messages) AS messages, sum(bytes) AS bytes,
               round(sum(messages) / nullif(sum(span), 0), 2) AS messages_per_s,
               round(sum(bytes) / nullif(sum(span), 0), 1) AS bytes_per_s
        FROM per JOIN spans USING (capture) GROUP BY 1, 2 ORDER BY messages DESC, topic, source"""),
    "throughput_over_time": ("messages per topic and direction per bucket", """
        SELECT floor(ts / :bucket) * :bucket AS t, topic, source, count(*) AS messages, sum(body_size) AS bytes
        FROM messages WHERE error IS NULL AND source IN ('send', 'pull') GROUP BY 1, 2, 3 ORDER BY 1"""),
    "consumer_lag": ("consumer lag seen on the wire: the last pull answer's maxOffset minus the offset pulled", """
        SELECT group, topic, queue_id, server, max_by(lag, ts) AS lag, max(ts) AS at
        FROM (SELECT r.group, r.topic, r.queue_id, r.server, r.ts,
                     CAST(r.ext['maxOffset'] AS BIGINT) - CAST(q.ext['queueOffset'] AS BIGINT) AS lag
              FROM (SELECT * FROM commands WHERE type = 'response' AND request_code = 11 AND code IN (0, 19, 20)) r
              JOIN (SELECT capture, conn, record, offset, ext FROM commands WHERE type = 'request' AND code = 11) q
                ON q.capture = r.capture AND q.conn = r.conn AND q.record = r.request_record
               AND q.offset = r.request_offset)
        GROUP BY 1, 2, 3, 4 ORDER BY lag DESC"""),
    "ha_lag": ("HA replication per stream over time (buckets of 1/60 of the stream's span): master's offset sent, slave's acked offset, lag, transfer rate", """
        SELECT capture, stream, master, slave, bucket, floor(ts / bucket) * bucket AS t,
               max(CASE WHEN type = 'transfer' THEN ha_offset + coalesce(data_length, 0) END) AS master_offset,
               max(CASE WHEN type IN ('report', 'transfer_ack') THEN ha_offset END) AS slave_offset,
               max(CASE WHEN type = 'transfer' THEN ha_offset + coalesce(data_length, 0) END)
                   - max(CASE WHEN type IN ('report', 'transfer_ack') THEN ha_offset END) AS lag,
               sum(CASE WHEN type = 'transfer' THEN coalesce(data_length, 0) ELSE 0 END) / bucket AS bytes_per_s
        FROM (SELECT *, greatest((max(ts) OVER w - min(ts) OVER w) / 60, 0.001) AS bucket
              FROM ha WINDOW w AS (PARTITION BY capture, stream))
        GROUP BY 1, 2, 3, 4, 5, 6 ORDER BY 1, 2, 6"""),
    "ha_streams": ("HA streams: variant, transfers, bytes, first and last offsets", """
        SELECT capture, stream, master, slave, first(variant) AS variant,
               sum(CASE WHEN type = 'transfer' AND NOT heartbeat THEN 1 ELSE 0 END) AS transfers,
               sum(CASE WHEN type = 'transfer' THEN coalesce(data_length, 0) ELSE 0 END) AS bytes,
               min(CASE WHEN type = 'transfer' AND ha_offset >= 0 THEN ha_offset END) AS first_offset,
               max(CASE WHEN type = 'transfer' THEN ha_offset + coalesce(data_length, 0) END) AS master_offset,
               max(CASE WHEN type IN ('report', 'transfer_ack') THEN ha_offset END) AS slave_offset
        FROM ha GROUP BY 1, 2, 3, 4 ORDER BY 1, 2"""),
    "route_churn": ("broker registrations and unregistrations per broker, and inferred expiries", """
        SELECT server AS namesrv, ext['brokerName'] AS broker_name, ext['brokerAddr'] AS broker_addr,
               sum(CASE WHEN code = 103 THEN 1 ELSE 0 END) AS registrations,
               sum(CASE WHEN code = 104 THEN 1 ELSE 0 END) AS unregistrations,
               round(max(gap), 3) AS longest_silence_s,
               sum(CASE WHEN gap > 120 THEN 1 ELSE 0 END) AS expiries
        FROM (SELECT *, ts - lag(ts) OVER (PARTITION BY capture, server, ext['brokerAddr'] ORDER BY ts) AS gap
              FROM commands WHERE type = 'request' AND code IN (103, 104))
        GROUP BY 1, 2, 3 ORDER BY registrations DESC"""),
    "clients": ("clients by language and version (requests they sent)", """
        SELECT language, version_name, count(DISTINCT capture, conn) AS connections, sum(n) AS requests,
               count(DISTINCT client_id) AS client_ids
        FROM (SELECT language, version_name, capture, conn, ext['clientID'] AS client_id, count(*) AS n
              FROM commands WHERE type <> 'response' AND direction = 'c2s' GROUP BY 1, 2, 3, 4, 5)
        GROUP BY 1, 2 ORDER BY requests DESC"""),
    "problems": ("problems by verdict", """
        SELECT verdict, count(*) AS count, sum(length) AS bytes FROM problems GROUP BY 1 ORDER BY count DESC"""),
}


def register(spark: SparkSession, out: Path | list[Path]) -> None:
    """The tables under ``out`` (or under each of several outputs) as temporary views named after them."""
    outs = out if isinstance(out, list) else [out]
    for name in COLUMNS:
        spark.read.parquet(*[str(o / name) for o in outs]).createOrReplaceTempView(name)


def _bucket(first: float | None, last: float | None) -> float:
    span = (last or 0) - (first or 0)
    if span <= 0:
        return 1.0
    raw = span / 60
    for step in (0.001, 0.01, 0.1, 1, 5, 10, 30, 60, 300, 600, 1800, 3600, 21600, 86400):
        if raw <= step:
            return float(step)
    return float(math.ceil(raw / 86400) * 86400)


def compute_over(spark: SparkSession, outs: list[Path]) -> dict[str, Any]:
    """The metrics over the tables of several outputs together (follow mode's batches)."""
    return compute(spark, outs)


def compute(spark: SparkSession, out: Path | list[Path]) -> dict[str, Any]:
    """Every metric of :data:`METRICS` over the tables under ``out``."""
    register(spark, out)
    sc = spark.sparkContext
    sc.setJobDescription("metrics: summary")
    summary = spark.sql(METRICS["summary"][1]).collect()[0].asDict()
    bucket = _bucket(summary["first_ts"], summary["last_ts"])
    result: dict[str, Any] = {"summary": summary, "bucket_seconds": bucket}
    for name, (_what, sql) in METRICS.items():
        if name == "summary":
            continue
        sc.setJobDescription(f"metrics: {name}")
        rows = spark.sql(sql.replace(":bucket", repr(bucket))).collect()
        result[name] = [{k: _plain(v) for k, v in r.asDict(recursive=True).items()} for r in rows]
    result["summary"] = {k: _plain(v) for k, v in summary.items()}
    return result


def _plain(v: Any) -> Any:
    """Decimals (what SQL arithmetic on doubles and literals may give) as floats, for JSON."""
    if isinstance(v, Decimal):
        return float(v)
    return v
