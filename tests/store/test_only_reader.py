# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The store is the only reader of CommitLog bytes: the broker and the other servers get typed
records (``StoredMessage``) from it (``message_at``, ``queue_message``,
``GetResult.stored_messages``, a ``properties_filter`` given the decoded properties) and never
decode a record themselves. Read from the source, since a second decoder would work just as well."""

from __future__ import annotations

import ast

from tests.conftest import ROOT

#: wire.message's decoders of stored records
RECORD_DECODERS = {"decode_stored_message", "decode_stored_message_construct", "iter_stored_messages",
                   "decode_messages"}


def _names(tree: ast.AST) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom | ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.Attribute):
            found.add(node.attr)
        elif isinstance(node, ast.Name):
            found.add(node.id)
    return found & RECORD_DECODERS


def test_no_server_module_outside_the_store_decodes_a_record() -> None:
    servers = ROOT / "reference_broker"
    store = servers / "store"
    offenders = {
        str(p.relative_to(ROOT)): sorted(names)
        for p in sorted(servers.rglob("*.py"))
        if store not in p.parents and (names := _names(ast.parse(p.read_text(encoding="utf-8"))))
    }
    assert offenders == {}


def test_the_check_sees_a_decoder_however_it_is_reached() -> None:
    for source in ("from wire.message import decode_stored_message as d",
                   "import wire.message\nwire.message.iter_stored_messages(b'')",
                   "x = decode_messages"):
        assert _names(ast.parse(source)), source
    assert not _names(ast.parse("from wire.message import StoredMessage"))
