# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The name server's namespaced key/value store (``namesrv/kvconfig/KVConfigManager.java``).

Operators keep small settings here, chiefly namespace ``ORDER_TOPIC_CONFIG`` (topic →
``brokerName:queueCount;…``, the order-topic layout the route reports when
``orderMessageEnable`` is on, and which every REGISTER_BROKER answer carries).

Every put and delete rewrites ``kvConfigPath`` as Java does: ``{"configTable":{namespace:{key:
value}}}`` (compact fastjson, HashMap order), written to ``<path>.tmp`` first, the previous
file kept as ``<path>.bak``, then the new file moved into place (``MixAll.string2File``). A
missing or empty file at start is an empty store; a file that is not such a JSON object stops
the server from starting (Java's start-up fails on it too).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from pathlib import Path

from wire import DecodeError, fastjson
from wire.bodies import KVTable
from wire.java import JavaHashMap

from ..files import string_to_file

__all__ = ["NAMESPACE_ORDER_TOPIC_CONFIG", "KVConfigError", "KVConfigManager"]

log = logging.getLogger("reference_broker.namesrv.kv")

#: ``NamesrvUtil.NAMESPACE_ORDER_TOPIC_CONFIG``
NAMESPACE_ORDER_TOPIC_CONFIG = "ORDER_TOPIC_CONFIG"


class KVConfigError(Exception):
    """The KV config file cannot be read or written (the message names the file)."""


class KVConfigManager:
    """Namespaced key/value pairs, persisted to ``path`` (``None``: kept in memory only)."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self.config_table: JavaHashMap[str, JavaHashMap[str, str]] = JavaHashMap()

    def load(self) -> None:
        """Read ``path`` if it exists (``KVConfigManager.load``)."""
        if self.path is None:
            return
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return
        except (OSError, UnicodeDecodeError) as exc:
            raise KVConfigError(f"{self.path}: cannot read the KV config: {exc}") from None
        if not text.strip():
            return
        try:
            value = fastjson.loads(text, what=str(self.path))
        except DecodeError as exc:
            raise KVConfigError(f"{self.path}: not a KV config file: {exc}") from None
        table = value.get("configTable") if isinstance(value, Mapping) else None
        if value is not None and not isinstance(value, Mapping):
            raise KVConfigError(f"{self.path}: not a KV config file: expected a JSON object")
        if table is None:
            return
        if not isinstance(table, Mapping):
            raise KVConfigError(f"{self.path}: configTable is not an object")
        for namespace, items in table.items():
            if not isinstance(items, Mapping):
                raise KVConfigError(f"{self.path}: configTable.{namespace} is not an object")
            kv = self.config_table[str(namespace)] = JavaHashMap()
            for k, v in items.items():
                if v is not None:
                    kv[str(k)] = v if isinstance(v, str) else fastjson.dumps(v)
        log.info("loaded the KV config table from %s", self.path)

    def put(self, namespace: str, key: str, value: str) -> None:
        kv = self.config_table.get(namespace)
        if kv is None:
            kv = self.config_table[namespace] = JavaHashMap()
            log.info("KV config: new namespace %s", namespace)
        kv[key] = value
        log.info("KV config: %s %s = %s", namespace, key, value)
        self.persist()

    def get(self, namespace: str, key: str) -> str | None:
        kv = self.config_table.get(namespace)
        return kv.get(key) if kv is not None else None

    def delete(self, namespace: str, key: str) -> None:
        """Remove a key; an emptied namespace stays (it lists as an empty table), as in Java."""
        kv = self.config_table.get(namespace)
        if kv is not None and key in kv:
            del kv[key]
            log.info("KV config: deleted %s %s", namespace, key)
        self.persist()

    def namespace_table(self, namespace: str) -> KVTable | None:
        """``getKVListByNamespace``: the namespace as a KVTable body, or None if it never existed."""
        kv = self.config_table.get(namespace)
        return KVTable(table=dict(kv.items())) if kv is not None else None

    def to_json(self) -> str:
        """The file content: ``KVConfigSerializeWrapper.toJson()``."""
        return fastjson.dumps({"configTable": {ns: dict(kv.items()) for ns, kv in self.config_table.items()}})

    def persist(self) -> None:
        """Write the table to ``path`` (``MixAll.string2File``); failures are logged, as in Java."""
        if self.path is None:
            return
        try:
            string_to_file(self.to_json(), self.path)
        except OSError as exc:
            log.error("cannot persist the KV config to %s: %s", self.path, exc)
