# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The request tables are written with the Java names of the codes (STYLE W3/B3: a grep finds both
sides), and the processor tables share no code."""

from __future__ import annotations

import ast

import pytest

from reference_broker.broker import HANDLERS as BROKER_HANDLERS
from reference_broker.namesrv import HANDLERS as NAMESRV_HANDLERS
from tests.conftest import ROOT
from wire import RequestCode

TABLE_FILES = [*sorted((ROOT / "reference_broker" / "broker" / "processors").glob("*.py")),
               ROOT / "reference_broker" / "namesrv" / "processor.py"]


@pytest.mark.parametrize("table", [BROKER_HANDLERS, NAMESRV_HANDLERS], ids=["broker", "namesrv"])
def test_every_key_is_a_request_code_member(table) -> None:
    assert table
    assert all(type(code) is RequestCode for code in table), [c for c in table if type(c) is not RequestCode]


@pytest.mark.parametrize("path", TABLE_FILES, ids=lambda p: p.stem)
def test_tables_are_written_with_code_names(path) -> None:
    # the source itself: a table entry keyed by a bare number would still work, so read the text
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.target.id in ("HANDLERS", "BODIES"):
            if isinstance(node.value, ast.Dict):
                bare = [ast.unparse(k) for k in node.value.keys if isinstance(k, ast.Constant)]
                assert bare == [], f"{path.name}: {bare}"
