# Licensed under the Apache License, Version 2.0. See LICENSE.
"""The fuzz harness (benchmarks/fuzz_wire.py) over every decoder: only DecodeError leaves them.

CI runs a bounded sample of 50,000 mutated inputs; ``benchmarks/fuzz_wire.py --count N`` runs
as many as wanted (the figures of a long run are in docs/servers.md)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _harness() -> ModuleType:
    spec = importlib.util.spec_from_file_location("fuzz_wire", ROOT / "benchmarks" / "fuzz_wire.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["fuzz_wire"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def fuzz() -> ModuleType:
    return _harness()


@pytest.mark.slow
def test_fifty_thousand_mutated_inputs_give_values_or_decode_errors(fuzz: ModuleType) -> None:
    seeds = fuzz.build_seeds()
    assert set(seeds.by_target) == set(fuzz.DECODERS), "every decoder has seeds"
    report = fuzz.run(50_000, seed=17, seeds=seeds)
    assert report.inputs == 50_000
    problems = [f"{f.target} [{f.mutations}] {f.exception}\n{f.trace}" for f in report.foreign]
    assert not report.foreign_kinds, "\n".join(problems)
    assert report.stalls == 0
    for target, outcomes in report.outcomes.items():
        assert outcomes["DecodeError"] > 0, f"{target}: no mutation was refused, so none reached a check"


def test_the_harness_sees_foreign_exceptions(fuzz: ModuleType, monkeypatch: pytest.MonkeyPatch) -> None:
    """A decoder that lets a ValueError through is reported, with the input that did it."""

    def leaky(_ctx: object, data: bytes) -> object:
        return int(data.decode("latin-1") or "x")

    seeds = fuzz.Seeds()
    seeds.add("leaky", None, b"12345", "test")
    monkeypatch.setitem(fuzz.DECODERS, "leaky", leaky)
    report = fuzz.run(200, seed=1, seeds=seeds)
    assert report.foreign_kinds["builtins.ValueError"] > 0
    assert report.foreign and report.foreign[0].target == "leaky"


def test_mutations_are_reproducible(fuzz: ModuleType) -> None:
    seeds = fuzz.build_seeds(captures=False)
    a = fuzz.run(300, seed=5, seeds=seeds)
    b = fuzz.run(300, seed=5, seeds=seeds)
    assert a.outcomes == b.outcomes


def test_every_typed_header_and_body_is_seeded(fuzz: ModuleType) -> None:
    """The captures carry fewer than half of the request codes: every header class and body class
    gets seeds of its own, and each code keeps one through the per-decoder limit."""
    from wire.bodies import REQUEST_BODIES, RESPONSE_BODIES
    from wire.headers import REQUEST_HEADERS, RESPONSE_HEADERS

    seeds = fuzz.build_seeds(captures=False)
    headers = {(code, is_response) for (_kind, code, is_response), _data in seeds.by_target["header.typed"]}
    assert {(int(c), False) for c in REQUEST_HEADERS} <= headers
    assert {(int(c), True) for c in RESPONSE_HEADERS} <= headers
    bodies = {(code, is_response) for (code, is_response, _ext), _data in seeds.by_target["body"]}
    assert {(int(c), False) for c in REQUEST_BODIES} <= bodies
    assert {(int(c), True) for c in RESPONSE_BODIES} <= bodies
    for (ctx, data) in seeds.by_target["body"] + seeds.by_target["header.typed"]:
        target = "body" if len(ctx) == 3 and isinstance(ctx[2], dict) else "header.typed"
        assert fuzz.DECODERS[target](ctx, data) is not None, (target, ctx)


def test_capture_files_are_fuzzed_as_files(fuzz: ModuleType) -> None:
    """Classic pcap, gzip-compressed pcap and pcapng seeds decode as ``mqctl pcap`` reads them."""
    seeds = fuzz.Seeds()
    pcaps = sorted((ROOT / "fixtures" / "peers").rglob("*.pcap"))
    assert pcaps, "fixtures/peers holds captures"
    fuzz._capture_file_seeds(seeds, pcaps[0], "test")
    kinds = {data[:4] for _ctx, data in seeds.by_target["capture.pcap"] + seeds.by_target["capture.pcapng"]}
    assert kinds == {b"\xd4\xc3\xb2\xa1", b"\x1f\x8b\x08\x00", b"\n\r\r\n"}
    rows = {target: [fuzz.DECODERS[target](ctx, data) for ctx, data in seeds.by_target[target]]
            for target in ("capture.pcap", "capture.pcapng")}
    assert rows["capture.pcap"][0] > 0
    assert rows["capture.pcap"] == [rows["capture.pcap"][0]] * 2
    assert rows["capture.pcapng"] == [rows["capture.pcap"][0]]
