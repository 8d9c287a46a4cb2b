# Licensed under the Apache License, Version 2.0. See LICENSE.
"""wire.sql92: RocketMQ 4.9.8's SQL92 selector grammar, its checks and its evaluation semantics
(three-valued logic on missing properties, Java's string/number conversions)."""

from __future__ import annotations

import pytest

from wire.sql92 import SelectorError, compile_selector

CASES = [
    # (selector, properties, Java's result: True matches, False/None do not)
    ("a > 5 AND b = 'x'", {"a": "7", "b": "x"}, True),
    ("a > 5 AND b = 'x'", {"a": "3", "b": "x"}, False),
    ("a > 5", {}, None),
    ("NOT (a > 5)", {}, None),
    ("a > 5 OR b = 'x'", {"b": "x"}, True),
    ("a > 5 AND b = 'x'", {"b": "x"}, None),
    ("a IS NULL", {}, True),
    ("a IS NULL", {"a": ""}, False),
    ("a IS NOT NULL", {"a": "1"}, True),
    ("a BETWEEN 1 AND 10", {"a": "10"}, True),
    ("a NOT BETWEEN 1 AND 10", {"a": "11"}, True),
    ("c IN ('x', 'y')", {"c": "y"}, True),
    ("c NOT IN ('x', 'y')", {"c": "y"}, False),
    ("c IN ('x')", {}, None),
    ("a > 1.5", {"a": "2"}, True),
    ("a = 2", {"a": "2"}, True),
    ("a = '2'", {"a": "2"}, True),
    ("a > 3000000000", {"a": "3000000001"}, True),
    ("a = TRUE", {"a": "true"}, True),
    ("a = FALSE", {"a": "yes"}, True),
    ("flag", {"flag": "true"}, False),
    ("TRUE", {}, True),
    ("FALSE OR a = 'q'", {"a": "q"}, True),
    ("a > -5", {"a": "-1"}, True),
    ("a <> 3", {"a": "3"}, False),
    ("a <> 3", {}, None),
    ("a = 'it''s'", {"a": "it's"}, True),
    ("A = 1 and b = 2", {"A": "1", "b": "2"}, True),
    ("a = 1 -- a comment\n", {"a": "1"}, True),
    ("/* c */ a = 1", {"a": "1"}, True),
    ("a > b", {"a": "2.5", "b": "2"}, True),
]


@pytest.mark.parametrize(("text", "props", "want"), CASES)
def test_evaluation(text: str, props: dict[str, str], want: bool | None) -> None:
    s = compile_selector(text)
    assert s.evaluate(props) is want
    assert s.matches(props) is (want is True)


@pytest.mark.parametrize(("text", "props"), [
    ("a = 5 OR b = 1", {"a": "x", "b": "1"}),  # Integer.valueOf("x") throws: the whole evaluation fails
    ("a > b", {"a": "x", "b": "1"}),
    ("a > 5", {"a": "5.5"}),
])
def test_conversion_errors_do_not_match(text: str, props: dict[str, str]) -> None:
    s = compile_selector(text)
    assert not s.matches(props)
    with pytest.raises(ValueError):
        s.evaluate(props)


@pytest.mark.parametrize(("text", "java"), [
    ("a >", 'org.apache.rocketmq.filter.parser.ParseException: Encountered "<EOF>" at line 1, column'),
    ("a > 'x'", "java.lang.RuntimeException: Value ''x'' cannot be compared."),
    ("a = NULL", "java.lang.RuntimeException: 'NULL' cannot be compared."),
    ("5", "org.apache.rocketmq.filter.parser.ParseException: Expression will not result in a boolean value: 5"),
    ("a BETWEEN 10 AND 1", "java.lang.RuntimeException: Illegal values of between, left value(10) must less "
                           "than or equal to right value(1)"),
    ("a # 3", 'org.apache.rocketmq.filter.parser.TokenMgrError: Lexical error at line 1, column 3.  '
              'Encountered: "#" (35), after : ""'),
    ("a > 0.0", "java.lang.RuntimeException: 0.0 is less than 4.9E-324"),
    ("1 IN ('a')", "java.lang.RuntimeException: Expected a property for In expression, got: 1"),
    ("c IN (1, 2)", "org.apache.rocketmq.filter.parser.ParseException: Encountered"),
    ("TRUE = 5", "java.lang.RuntimeException: 'TRUE' cannot be compared with '5'"),
    ("a IS 5", 'org.apache.rocketmq.filter.parser.ParseException: Encountered " <DECIMAL_LITERAL> "5 "" at '
               'line 1, column 6.\nWas expecting:\n    "NOT" ...\n    '),
    ("a = 1 #", 'org.apache.rocketmq.filter.parser.TokenMgrError: Lexical error at line 1, column 8.  '
                'Encountered: <EOF> after : ""'),
])
def test_compile_errors(text: str, java: str) -> None:
    with pytest.raises(SelectorError) as info:
        compile_selector(text)
    assert info.value.java_message.startswith(java)


def test_the_input_need_not_end_with_the_expression() -> None:
    """javacc's JmsSelector has no end-of-input check and reads tokens only as it needs them."""
    assert compile_selector("a = 1 b = 2").matches({"a": "1"})
    assert compile_selector("a = 1) garbage # not even read").matches({"a": "1"})


@pytest.mark.parametrize(("text", "java"), [
    ("", 'org.apache.rocketmq.filter.parser.ParseException: Encountered "<EOF>" at line 0, column 0.'),
    ("a = 1\nAND b >", 'org.apache.rocketmq.filter.parser.ParseException: Encountered "<EOF>" at line 2, column 7.'),
])
def test_end_of_input_position(text: str, java: str) -> None:
    with pytest.raises(SelectorError) as info:
        compile_selector(text)
    assert info.value.java_message.startswith(java)


def test_hostile_numbers_in_literals_and_properties() -> None:
    """A literal or a property value of thousands of digits is Java's NumberFormatException (a
    compile error, or a message that does not match), never Python's 4,300-digit ValueError."""
    with pytest.raises(SelectorError) as info:
        compile_selector("a = " + "9" * 5000)
    assert info.value.java_message.startswith("java.lang.NumberFormatException")
    s = compile_selector("a = 5")
    assert not s.matches({"a": "9" * 5000})
    assert s.matches({"a": "0" * 5000 + "5"})
    with pytest.raises(ValueError, match="NumberFormatException"):
        s.evaluate({"a": "-" + "1" * 4400})


def test_a_chain_too_deep_to_evaluate_is_refused_at_compile() -> None:
    """The parser loops over a chain of ANDs, as javacc's does; evaluating 4,000 levels would
    exhaust the stack on every message, so such a selector does not compile."""
    with pytest.raises(SelectorError, match="nests too deeply"):
        compile_selector(" AND ".join(f"a = {i}" for i in range(4_000)))
    wide = compile_selector(" AND ".join(f"a{i} = {i}" for i in range(150)))
    assert wide.matches({f"a{i}": str(i) for i in range(150)})


def test_a_run_of_minus_signs_reads_no_comment(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--`` starts a comment only up to a line end. Where none follows, no ``-`` of a run tries
    to read one: that read the rest of the text for every ``-`` (36,000 of them took 0.6 s). The
    attempts are counted, not timed."""
    from wire import sql92

    real = sql92._LINE_RE
    tried: list[int] = []

    class Counting:
        def match(self, text: str, pos: int) -> object:
            tried.append(pos)
            return real.match(text, pos)

    monkeypatch.setattr(sql92, "_LINE_RE", Counting())
    with pytest.raises(SelectorError, match="nests too deeply"):
        compile_selector("a > " + "-" * 30_000 + "7")
    assert tried == []
    # a comment with its line end is still one
    s = compile_selector("a > -7 -- the least\nAND b = 'x'")
    assert tried == [7]
    assert s.matches({"a": "0", "b": "x"}) and not s.matches({"a": "0", "b": "y"})
    # and a trailing "--" with no line end is a minus, where the parse has already ended (javacc)
    assert compile_selector("a = 8 --x").matches({"a": "8"})


def test_the_length_bound() -> None:
    from wire.sql92 import MAX_SELECTOR_LENGTH

    at = "a = '" + "x" * (MAX_SELECTOR_LENGTH - 6) + "'"
    assert len(at) == MAX_SELECTOR_LENGTH and compile_selector(at).matches({"a": at[5:-1]})
    with pytest.raises(SelectorError, match=f"is {MAX_SELECTOR_LENGTH + 1} characters long"):
        compile_selector(at + " ")


def test_a_selector_that_does_not_compile_is_not_parsed_again() -> None:
    """Java's PARSE_CACHE keeps the exception too: a heartbeat selector that does not compile is
    looked up at every pull, and parsing it again each time would cost as much as the first."""
    from wire import sql92

    text = "a > " + "(" * 50 + "'x'"
    calls = []
    real = sql92._Parser.selector

    def counted(self: object) -> object:
        calls.append(1)
        return real(self)  # type: ignore[arg-type]

    sql92._Parser.selector = counted  # type: ignore[method-assign]
    try:
        for _ in range(3):
            with pytest.raises(SelectorError) as info:
                compile_selector(text)
    finally:
        sql92._Parser.selector = real  # type: ignore[method-assign]
    assert len(calls) == 1 and info.value.java_message.startswith("org.apache.rocketmq.filter.parser.ParseException")
