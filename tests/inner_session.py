# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A pytest session of its own over a few test cases, with this suite's ``conftest.py``: how the
tests of the suite's own guards (tests/test_loud_bugs.py, tests/test_no_process_left.py) see
what the guards make of tests that misbehave on purpose."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CONFTEST = Path(__file__).with_name("conftest.py")
ROOT = Path(__file__).resolve().parents[1]


def run_session(tmp_path: Path, cases: str, *, ini: str = "",
                env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``pytest -rA -q`` in a new interpreter over ``cases`` (written as ``test_cases.py`` in
    ``tmp_path``, beside a copy of the suite's conftest), with ``ini`` added to its pytest.ini
    and ``env`` to the environment."""
    (tmp_path / "conftest.py").write_text(CONFTEST.read_text())
    (tmp_path / "test_cases.py").write_text(cases)
    (tmp_path / "pytest.ini").write_text(
        "[pytest]\naddopts = --strict-markers -p no:cacheprovider\n" + ini
        + "markers =\n    provokes_error_log(pattern): on purpose\n    shared: x\n")
    return subprocess.run([sys.executable, "-m", "pytest", "-rA", "-q", str(tmp_path)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})})
