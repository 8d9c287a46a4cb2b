# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.java: Java's String.hashCode, HashMap order and Double.toString, checked against the JDK.

The vectors (``fixtures/vectors/java/double_tostring.tsv``) are the JDK's own output, written by
``tests/java/JavaRules.java``; where ``java`` is installed, the tests also ask it directly for fresh
values (``JavaRules.java`` run as a single-file program).
"""

from __future__ import annotations

import itertools
import math
import random
import shutil
import struct
import subprocess

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tests.conftest import FIXTURES, ROOT
from wire.java import JavaHashMap, java_double_to_string, java_hash, java_hash_order, java_string_hash

JAVA_RULES = ROOT / "tests" / "java" / "JavaRules.java"
VECTORS = FIXTURES / "vectors" / "java" / "double_tostring.tsv"


def _double(bits: str) -> float:
    return struct.unpack(">d", bytes.fromhex(bits))[0]


def _bits(v: float) -> str:
    return f"{struct.unpack('>Q', struct.pack('>d', v))[0]:016x}"


def _jdk(requests: list[str]) -> list[str]:
    """The JDK's answers to ``JavaRules.java`` requests, or a skip where there is no java."""
    java = shutil.which("java")
    if java is None:
        pytest.skip("java is not installed: the JDK differential checks need it (the vectors still run)")
    r = subprocess.run([java, str(JAVA_RULES)], input="".join(f"{q}\n" for q in requests), capture_output=True,
                       text=True, encoding="utf-8", timeout=300)
    assert r.returncode == 0, r.stderr
    out = r.stdout.split("\n")[:-1]
    assert len(out) == len(requests)
    return out


# ---------------------------------------------------------------------------------------- Double.toString


def test_double_to_string_matches_the_jdk_vectors() -> None:
    rows = [line.split("\t") for line in VECTORS.read_text(encoding="utf-8").splitlines()]
    assert len(rows) > 2000
    wrong = [(bits, java, ours) for bits, java in rows if (ours := java_double_to_string(_double(bits))) != java]
    assert wrong == []


@pytest.mark.parametrize("value, java", [
    (5e-324, "4.9E-324"),  # Double.MIN_VALUE: E-form always prints a second digit
    (1e-323, "1.0E-323"),
    (1.9585998730493192e16, "1.9585998730493192E16"),  # an integer below 2^63: its own digits
    (2.0**63, "9.223372036854776E18"),
    (1e7, "1.0E7"), (9999999.999999998, "9999999.999999998"), (0.001, "0.001"), (0.0009999999999999998,
                                                                                   "9.999999999999998E-4"),
    (100.0, "100.0"), (0.1, "0.1"), (-0.0, "-0.0"), (0.0, "0.0"),
    (1e23, "9.999999999999999E22"),  # not the shortest digits (JDK-4511638)
    (math.nan, "NaN"), (math.inf, "Infinity"), (-math.inf, "-Infinity"),
])
def test_double_to_string_cases(value: float, java: str) -> None:
    assert java_double_to_string(value) == java


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_double_to_string_reads_back_as_the_same_double(v: float) -> None:
    assert float(java_double_to_string(v)) == v


def test_double_to_string_against_the_jdk() -> None:
    rng = random.Random(20261126)
    values = [_double(f"{rng.getrandbits(64):016x}") for _ in range(6000)]
    values += [float(rng.randrange(2**53, 2**63)) for _ in range(2000)]
    values += [round(rng.uniform(-1e6, 1e6), rng.randint(0, 8)) for _ in range(2000)]
    values = [v for v in values if math.isfinite(v)]
    java = _jdk([f"double {_bits(v)}" for v in values])
    assert [(v, j) for v, j in zip(values, java, strict=True) if java_double_to_string(v) != j] == []


def test_the_writers_of_doubles_share_the_rule() -> None:
    # fastjson's writer and the broker's runtime figures both print Double.toString
    from reference_broker.store.stats import java_double
    from wire.fastjson import dumps

    for v in (5e-324, 1.9585998730493192e16, 0.25, 1e7):
        assert java_double(v) == java_double_to_string(v) == dumps(v)


# ---------------------------------------------------------------------------------------- hashCode and HashMap


@pytest.mark.parametrize("text, expected", [("", 0), ("a", 97), ("Aa", 2112), ("BB", 2112),
                                            ("\U0001F600", 0xD83D * 31 + 0xDE00), ("TopicTest", -1902610879)])
def test_string_hash(text: str, expected: int) -> None:
    assert java_string_hash(text) == expected


def test_bucket_order_resizes_and_collisions() -> None:
    keys = ["KEYS", "UNIQ_KEY", "WAIT", "TAGS", "CLUSTER"]
    order = java_hash_order(keys)
    assert sorted(order) == sorted(keys)

    def bucket(k: str, n: int) -> int:
        h = java_string_hash(k) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (n - 1)

    assert [bucket(k, 16) for k in order] == sorted(bucket(k, 16) for k in keys)
    # colliding keys stay in insertion order; duplicates keep their first place
    assert java_hash_order(["BB", "Aa"]) == ["BB", "Aa"]
    assert java_hash_order(["Aa", "BB", "Aa"]) == ["Aa", "BB"]
    # 13 keys pass the 0.75 load factor of 16 buckets: the table doubles to 32
    many = [f"k{i}" for i in range(13)]
    assert [bucket(k, 32) for k in java_hash_order(many)] == sorted(bucket(k, 32) for k in many)
    assert [bucket(k, 128) for k in java_hash_order(many, 128)] == sorted(bucket(k, 128) for k in many)


@given(st.lists(st.text(max_size=8), unique=True, max_size=60), st.data())
def test_removal_keeps_capacity_and_relative_order(keys: list[str], data: st.DataObject) -> None:
    m: JavaHashMap[str, None] = JavaHashMap(items=((k, None) for k in keys))
    peak = m.capacity
    order = list(m)
    gone = data.draw(st.sets(st.sampled_from(keys))) if keys else set()
    for k in gone:
        del m[k]
    # a Java table never shrinks, and removing entries does not reorder the others
    assert m.capacity == peak
    assert list(m) == [k for k in order if k not in gone]


def test_update_keeps_position_and_reinsert_goes_last_in_its_bucket() -> None:
    m: JavaHashMap[str, int] = JavaHashMap(items=[("Aa", 1), ("BB", 2)])
    assert list(m) == ["Aa", "BB"]
    m["Aa"] = 3
    assert list(m) == ["Aa", "BB"]
    del m["Aa"]
    m["Aa"] = 4
    assert list(m) == ["BB", "Aa"]


def test_long_keys_use_long_hash_code() -> None:
    assert java_hash(0) == 0 and java_hash(1) == 1
    assert java_hash(-1) == 0  # (int) (-1L ^ (-1L >>> 32)) == 0
    assert java_hash(1 << 32) == 1
    m: JavaHashMap[int, str] = JavaHashMap(items=[(3, "c"), (1, "b"), (0, "a"), (17, "r")])
    assert list(m) == [0, 1, 17, 3]  # 17 lands in bucket 1 of 16, after 1


def test_growth_thresholds() -> None:
    m: JavaHashMap[int, None] = JavaHashMap()
    for i in range(12):
        m[i] = None
    assert m.capacity == 16
    m[12] = None  # the 13th entry passes 0.75 * 16
    assert m.capacity == 32
    # nine keys in one bucket of a table below 64 buckets force a resize (treeifyBin)
    n: JavaHashMap[int, None] = JavaHashMap()
    for i in range(9):
        n[i * 64] = None
    assert n.capacity == 32


def test_hash_order_against_the_jdk() -> None:
    # key sets of every size up to past two resizes, colliding keys ("Aa"/"BB" blocks), the
    # capacities RocketMQ uses; not the treeified bins of tables of 64 or more (not modelled)
    rng = random.Random(5)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_%-é中"
    cases: list[tuple[int, list[str]]] = []
    for _ in range(400):
        n = rng.randrange(0, 60)
        keys = ["".join(rng.choice(alphabet) for _ in range(rng.randrange(1, 12))) for _ in range(n)]
        cases.append((rng.choice([1, 2, 16, 32, 128, 1024]), keys))
    # equal hashes: the 9th and 10th put resize a small table (treeifyBin); the 11th would make a tree
    collide = ["".join(p) for p in itertools.product(["Aa", "BB"], repeat=4)]
    cases += [(16, collide[:9]), (16, collide[:10]), (2, collide[:5]), (64, collide[:8])]
    java = _jdk([f"hashmap {cap} " + "\t".join(keys) for cap, keys in cases])
    for (cap, keys), answer in zip(cases, java, strict=True):
        assert java_hash_order(keys, cap) == (answer.split("\t") if answer else []), (cap, keys)
