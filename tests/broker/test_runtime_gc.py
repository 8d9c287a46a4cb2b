# Licensed under the Apache License, Version 2.0. See LICENSE.
"""A server process's collector: :func:`reference_broker.runtime.tune_gc` and :func:`run_async`."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

import pytest

from reference_broker.runtime import GC_GEN0_THRESHOLD, run_async, tune_gc


@pytest.fixture
def thresholds() -> Iterator[None]:
    saved = gc.get_threshold()
    try:
        yield
    finally:
        gc.set_threshold(*saved)


@pytest.mark.usefixtures("thresholds")
def test_tune_gc_raises_the_youngest_threshold_only() -> None:
    gc.set_threshold(700, 10, 10)
    tune_gc()
    assert gc.get_threshold() == (GC_GEN0_THRESHOLD, 10, 10)
    gc.set_threshold(700, 7, 3)
    tune_gc()
    assert gc.get_threshold() == (GC_GEN0_THRESHOLD, 7, 3)


@pytest.mark.usefixtures("thresholds")
def test_tune_gc_never_lowers_a_higher_threshold() -> None:
    gc.set_threshold(GC_GEN0_THRESHOLD * 3, 10, 10)
    tune_gc()
    assert gc.get_threshold() == (GC_GEN0_THRESHOLD * 3, 10, 10)


@pytest.mark.usefixtures("thresholds")
def test_run_async_tunes_the_collector_before_main_runs() -> None:
    gc.set_threshold(700, 10, 10)

    async def main() -> tuple[int, int, int]:
        await asyncio.sleep(0)
        return gc.get_threshold()

    assert run_async(main()) == (GC_GEN0_THRESHOLD, 10, 10)
    assert gc.isenabled()
