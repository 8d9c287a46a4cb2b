# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Table rows as Arrow: the executors' output files (pyarrow; no pyspark here).

A decoding unit (:mod:`analysis.tasks`) collects its rows as flat tuples and turns them into Arrow
record batches in C (a struct array built from the tuples, then split into columns), appended to
one Arrow IPC file per table (:class:`TableFiles`). Once the driver has ranked the connections,
:func:`finish_tables` reads those files back, puts in the ``stream`` column (and the file-wide
stream number in problem messages), drops the unit-local columns and writes the Parquet file of
each table. Writing Arrow first costs a memory copy; it lets a unit be decoded once although the
stream numbers are known only after every unit has finished.

File names depend only on the unit (``u<unit>/<table>.arrow``) and the part number
(``<table>/part-<part>.parquet``), and are written under a temporary name and renamed, so a retried
or repeated task replaces its own files and never leaves half a file behind.
"""

from __future__ import annotations

import os
import re
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .schema import COLUMNS, RAW

__all__ = ["ARROW_TYPES", "TableFiles", "arrow_schema", "empty_table", "finish_tables"]

TABLES = tuple(RAW)

ARROW_TYPES: dict[str, Any] = {
    "string": pa.string(),
    "bigint": pa.int64(),
    "int": pa.int32(),
    "double": pa.float64(),
    "boolean": pa.bool_(),
    "map<string,string>": pa.map_(pa.string(), pa.string()),
}


def arrow_schema(columns: list[tuple[str, str, str]]) -> Any:
    return pa.schema([pa.field(n, ARROW_TYPES[t]) for n, t, _d in columns])


_RAW_SCHEMAS = {name: arrow_schema(cols) for name, cols in RAW.items()}
_RAW_STRUCTS = {name: pa.struct(list(schema)) for name, schema in _RAW_SCHEMAS.items()}
_SCHEMAS = {name: arrow_schema(cols) for name, cols in COLUMNS.items()}


def _parquet_options(schema: Any) -> dict[str, Any]:
    """Dictionaries for the text columns (few distinct values: roles, codes, names, addresses),
    statistics for the numbers and the capture (what queries filter on): measured on the commands
    table, writing takes about 60% of the time of pyarrow's defaults, for the same size."""
    return {
        "use_dictionary": [f.name for f in schema if pa.types.is_string(f.type)],
        "write_statistics": [f.name for f in schema
                             if pa.types.is_integer(f.type) or pa.types.is_floating(f.type)] + ["capture"],
    }


_OPTIONS = {name: _parquet_options(schema) for name, schema in _SCHEMAS.items()}


def empty_table(name: str) -> Any:
    return _SCHEMAS[name].empty_table()


def _tmp(path: str) -> str:
    return os.path.join(os.path.dirname(path), f".{os.path.basename(path)}.{os.getpid()}.tmp")


class TableFiles:
    """One unit's output files, one per table, created on its first rows.

    By default Arrow IPC files under ``directory``, for :func:`finish_tables`. With ``out`` (a unit
    that decoded whole files, whose connection numbers are already the files' stream numbers),
    the Parquet files of the tables themselves, ``out/<table>/part-<part>.parquet``: the ``stream``
    column is the connection id less the file's ``base`` given with each write.
    """

    def __init__(self, directory: str, *, out: str | None = None, part: int = 0) -> None:
        self.directory = directory
        self.out = out
        self.part = part
        self.writers: dict[str, tuple[Any, Any, str]] = {}
        if os.path.isdir(directory):  # a previous attempt of this unit: its rows are written again
            for f in os.listdir(directory):
                os.unlink(os.path.join(directory, f))

    def write(self, out: list[list[tuple[Any, ...]]], counts: list[int], base: int | None = None) -> None:
        """Append the buffered rows of every table (and empty the buffers); ``base``: see the class."""
        for i, name in enumerate(TABLES):
            rows = out[i]
            if not rows:
                continue
            batch = pa.RecordBatch.from_struct_array(pa.array(rows, type=_RAW_STRUCTS[name]))
            w = self.writers.get(name)
            if self.out is not None:
                assert base is not None
                table = _final(pa.Table.from_batches([batch]), name, pc.subtract(batch["conn"], base))
                if w is None:
                    final = os.path.join(self.out, name, f"part-{self.part:05d}.parquet")
                    os.makedirs(os.path.dirname(final), exist_ok=True)
                    w = self.writers[name] = (pq.ParquetWriter(_tmp(final), _SCHEMAS[name], **_OPTIONS[name]),
                                              None, final)
                w[0].write_table(table, row_group_size=128 * 1024)
            else:
                if w is None:
                    os.makedirs(self.directory, exist_ok=True)
                    final = os.path.join(self.directory, f"{name}.arrow")
                    sink = pa.OSFile(_tmp(final), "wb")
                    w = self.writers[name] = (pa.ipc.new_file(sink, _RAW_SCHEMAS[name]), sink, final)
                w[0].write_batch(batch)
            counts[i] += len(rows)
            rows.clear()

    def close(self) -> None:
        for writer, sink, final in self.writers.values():
            writer.close()
            if sink is not None:
                sink.close()
            os.replace(_tmp(final), final)
        self.writers = {}

    def discard(self) -> None:
        for writer, sink, final in self.writers.values():
            try:
                writer.close()
            finally:
                if sink is not None:
                    sink.close()
                os.unlink(_tmp(final))
        self.writers = {}


def _final(table: Any, name: str, stream: Any) -> Any:
    """A table of raw columns with its ``stream`` column, in the written columns and types."""
    table = table.add_column(table.schema.get_field_index("conn") + 1, "stream", stream)
    return table.select([c for c, _t, _d in COLUMNS[name]]).cast(_SCHEMAS[name])


_STREAM_WORD = re.compile(r"^stream (\d+)")


def finish_tables(src: str, out: str, streams: dict[int, int], part: int) -> list[int]:
    """The Parquet files of one unit (see the module docstring); returns rows per table."""
    counts = [0] * len(TABLES)
    conns = pa.array(list(streams), pa.int64())
    numbers = pa.array(list(streams.values()), pa.int32())
    for i, name in enumerate(TABLES):
        path = os.path.join(src, f"{name}.arrow")
        if not os.path.exists(path):
            continue
        with pa.memory_map(path) as source:
            table = pa.ipc.open_file(source).read_all()
        if not table.num_rows:
            continue
        stream = pc.take(numbers, pc.index_in(table["conn"], value_set=conns))
        if name == "problems":
            table = table.set_column(table.schema.get_field_index("message"), "message",
                                     _problem_messages(table, stream))
        table = _final(table, name, stream)
        target = os.path.join(out, name, f"part-{part:05d}.parquet")
        os.makedirs(os.path.dirname(target), exist_ok=True)
        pq.write_table(table, _tmp(target), row_group_size=128 * 1024, **_OPTIONS[name])
        os.replace(_tmp(target), target)
        counts[i] = table.num_rows
    return counts


def _problem_messages(table: Any, streams: Any) -> Any:
    """Problem messages name the stream by number: a unit's own number becomes the file's."""
    out = []
    for message, local, stream in zip(table["message"].to_pylist(), table["local_stream"].to_pylist(),
                                      streams.to_pylist(), strict=True):
        if message is not None and local is not None and stream is not None and local != stream:
            m = _STREAM_WORD.match(message)
            if m and int(m.group(1)) == local:
                message = f"stream {stream}{message[m.end():]}"
        out.append(message)
    return pa.array(out, pa.string())
