# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The conformance suite as pytest items: ``pytest --pyargs conformance --rmq-namesrv ADDR``.
One item per case (see :mod:`conformance.pytest_plugin` for the options and how outcomes map)."""

from __future__ import annotations

from typing import Any


def test_case(conformance_case: Any, conformance_run: Any) -> None:
    conformance_run(conformance_case)
