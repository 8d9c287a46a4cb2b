# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The package root: its public API resolves, stays cheap to import, and wire/ keeps its rules."""

from __future__ import annotations

import re
import subprocess
import sys

import wire
from tests.conftest import ROOT


def test_every_public_name_resolves() -> None:
    for name in wire.__all__:
        assert getattr(wire, name) is not None, name
    assert wire.StoredMessage is wire.message.StoredMessage
    assert wire.decode_body is wire.bodies.decode_body


def test_import_wire_does_not_load_the_heavy_modules() -> None:
    code = ("import sys, wire; "
            "print(sorted(m for m in sys.modules if m.startswith(('wire.', 'scapy', 'pyspark'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    loaded = eval(out)  # a printed list of module names
    assert not [m for m in loaded if m.startswith(("scapy", "pyspark", "wire.capture", "wire.bodies"))]


def test_no_debugging_constructs_in_wire() -> None:
    # STYLE §P.4: Probe prints the whole context on every parse; Debugger opens pdb on error.
    pattern = re.compile(r"\b(Probe|Debugger)\s*\(")
    offenders = [str(p.relative_to(ROOT)) for p in (ROOT / "wire").rglob("*.py")
                 if pattern.search(p.read_text(encoding="utf-8"))]
    assert offenders == []


def test_scapy_is_imported_in_one_ingest_module_only() -> None:
    # the optional scapy packet layer for interactive use is scapy by nature; everything else in the
    # capture path gets plain tuples from one reader module
    pattern = re.compile(r"^\s*(from scapy|import scapy)", re.M)
    users = sorted(str(p.relative_to(ROOT)) for base in ("wire", "mqctl", "reference_broker", "conformance")
                   for p in (ROOT / base).rglob("*.py") if pattern.search(p.read_text(encoding="utf-8")))
    assert len([u for u in users if u.startswith("wire/") and "scapy_layer" not in u]) <= 1, users


def test_protocol_docs_code_tables_are_current() -> None:
    from tests.conftest import shared_path

    shared_path("protocol", "codes.tsv")
    result = subprocess.run([sys.executable, str(ROOT / "docs" / "protocol" / "_gen_codes_tables.py"), "--check"],
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def _imports(path) -> set[str]:
    import ast

    tree = ast.parse(path.read_text(encoding="utf-8"))
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            out.add(node.module)
    return out


def test_wire_imports_no_layer_above_it() -> None:
    # DESIGN: dependencies point down only; wire/ (the admin library included) sits at the bottom
    above = ("mqctl", "reference_broker", "conformance", "analysis", "typer", "rich", "pyspark")
    offenders = sorted(f"{p.relative_to(ROOT)}: {m}" for p in (ROOT / "wire").rglob("*.py")
                       for m in _imports(p) if m.split(".")[0] in above)
    assert offenders == []


def test_admin_library_imports_without_the_cli_toolkit() -> None:
    # the conformance suite and scripts use wire.admin; typer and rich are made unimportable
    names = sorted(p.stem for p in (ROOT / "wire" / "admin").glob("*.py") if p.stem != "__init__")
    assert {"client", "cluster", "topic", "message", "store"} <= set(names)
    code = ("import sys; sys.modules.update(typer=None, rich=None, mqctl=None, reference_broker=None); "
            + "; ".join(f"import wire.admin.{n}" for n in names)
            + "; print(sorted(m for m in sys.modules if m.startswith(('typer', 'rich', 'mqctl', 'reference_broker'))"
            + " and sys.modules[m] is not None))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


def test_a_header_class_loads_only_its_area() -> None:
    # wire.headers creates an area's classes on first use (short-lived commands pay for what they send)
    code = ("import sys; from wire.headers import GetRouteInfoRequestHeader; "
            "print(sorted(m for m in sys.modules if m.startswith('wire._headers.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert eval(out) == ["wire._headers.namesrv"]
