# Licensed under the Apache License, Version 2.0. See LICENSE.
from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

from tests.conftest import ROOT, shared_path
from wire import LanguageCode, MQVersion, RequestCode, ResponseCode, request_code, response_code, version_name
from wire.codes import REQUEST_SINCE, RESPONSE_SINCE


def _generator():
    spec = importlib.util.spec_from_file_location("gen_codes", ROOT / "scripts" / "gen_codes.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_generated_module_is_up_to_date() -> None:
    tsv = shared_path("protocol", "codes.tsv")
    assert _generator().generate(tsv) == (ROOT / "wire" / "codes.py").read_text(encoding="utf-8")


def test_every_code_of_the_table_is_present() -> None:
    tsv = shared_path("protocol", "codes.tsv")
    with Path(tsv).open(newline="") as fh:
        rows = list(csv.DictReader(fh, delimiter="\t"))
    assert len([r for r in rows if r["kind"] == "request"]) == 158
    for r in rows:
        table = RequestCode if r["kind"] == "request" else ResponseCode
        assert table[r["name"]] == int(r["code"])


def test_aliases_and_unknowns() -> None:
    assert ResponseCode.UPDATE_AND_CREATE_ACL_CONFIG_FAILED is ResponseCode.POLLING_FULL
    assert ResponseCode(2012).name == "CONTROLLER_ELECT_MASTER_FAILED"
    assert request_code(9999) == 9999 and not isinstance(request_code(9999), RequestCode)
    assert response_code(17) is ResponseCode.TOPIC_NOT_EXIST
    assert REQUEST_SINCE[327] == "4.9.2" and RESPONSE_SINCE[215] == "4.9.5"
    assert LanguageCode.RUST == 12 and LanguageCode.NODE_JS == 13


def test_versions() -> None:
    assert MQVersion.V3_0_11 == 37 and MQVersion.V4_0_0 == 213 and MQVersion.V4_9_4 == 401
    assert MQVersion.V4_9_8 == 409 and MQVersion.V5_0_0 == 413 and MQVersion.V5_3_3 == 479
    assert version_name(63) == "V3_1_8" and version_name(121) == "V3_4_9"
    assert version_name(100000) == "UNKNOWN(100000)"
    for x in range(10):
        for y in range(10):
            assert MQVersion[f"V4_{x}_{y}"] == 213 + 2 * (10 * x + y)
            assert MQVersion[f"V5_{x}_{y}"] == 413 + 2 * (10 * x + y)
