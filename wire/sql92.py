# Licensed under the Apache License, Version 2.0. See LICENSE.
"""RocketMQ's SQL92 message selector (subscriptions with ``expressionType`` SQL92), sans-IO.

Theory of operation
-------------------
A consumer that subscribes with ``MessageSelector.bySql("a > 5 AND b = 'x'")`` sends the text in
its heartbeat (``SubscriptionData.subString``) and, when it posts subscriptions with its pulls, in
PULL_MESSAGE's ``subscription``; the broker compiles it (``SqlFilter.compile`` →
``SelectorParser.parse``, the javacc grammar ``SelectorParser.jj`` of the ``filter`` module) and
evaluates it on each message's properties (``ExpressionMessageFilter.isMatchedByCommitLog``).
:func:`compile_selector` is that compiler and :meth:`Selector.matches` that evaluation, with the
4.9.8 grammar and semantics:

* **The language**: ``OR``/``AND``/``NOT`` (keywords in any case), ``=``, ``<>``, ``>``, ``>=``,
  ``<``, ``<=``, ``[NOT] BETWEEN x AND y``, ``[NOT] IN ('a', 'b')`` (string literals only),
  ``IS [NOT] NULL``, unary ``+``/``-``, parentheses, string literals in single quotes (``''``
  inside is one quote), integer literals (``Integer`` when they fit 32 bits, else ``Long``; an
  ``L`` suffix is allowed), floating literals (``Double``), ``TRUE``, ``FALSE``, ``NULL``, and
  property names ``[a-zA-Z_$][a-zA-Z0-9_$]*``; ``--`` line and ``/* */`` block comments.
* **Checks at compile time** (``ComparisonExpression.create*``): ``>``-like operands may not be
  string or boolean constants; ``=`` may not compare with the ``NULL`` literal; ``BETWEEN``
  constants must be ordered; ``IN`` needs a property on its left; a floating literal must be at
  least ``Double.MIN_VALUE`` (so ``0.0`` is refused, as in Java); the whole expression, and each
  operand of ``AND``/``OR``/``NOT``, must be boolean (a bare property is cast).
* **Values**: a property's value is always its string, or null when the message does not have it.
  Comparisons convert as ``ComparisonExpression.__compare`` does with string conversion on: a
  string compared with a number is parsed as that number's Java type (``Integer.valueOf``,
  ``Long.valueOf``, ``Double.valueOf``); two strings under ``>``-like operators are both parsed
  as doubles; unrelated types compare as "less".
* **Three-valued logic**: a missing property makes its comparison null (unknown), ``NOT`` of null
  is null, ``AND``/``OR`` are SQL's; a message matches only when the result is TRUE. A
  conversion that fails (``a = 5`` where ``a`` is ``x``) aborts the whole evaluation, and the
  message does not match (the broker logs "Message Filter error" and moves on).

A compile error is :class:`SelectorError`; its :attr:`~SelectorError.java_message` is what
``MQFilterException.getMessage()`` gives (``cause.toString()``), which the broker returns as the
remark of CHECK_CLIENT_CONFIG: the Java exception class, then its message, javacc's wording
included (``Encountered "…" at line L, column C.`` and the tokens the parser could have taken
there, in javacc's order). As in javacc's parser, tokens are read only as the parse needs them and
nothing checks that the input ends where the expression does: ``a = 1 b = 2`` is ``a = 1``.
"""

from __future__ import annotations

import math
import re
import struct
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

__all__ = [
    "SQL92",
    "TAG",
    "Selector",
    "SelectorError",
    "compile_selector",
    "is_tag_type",
]

#: ``ExpressionType.SQL92``
SQL92 = "SQL92"
#: ``ExpressionType.TAG``
TAG = "TAG"

_PARSE_EXC = "org.apache.rocketmq.filter.parser.ParseException"
_TOKEN_EXC = "org.apache.rocketmq.filter.parser.TokenMgrError"
_RUNTIME_EXC = "java.lang.RuntimeException"
_NUMBER_EXC = "java.lang.NumberFormatException"

_INT_MIN, _INT_MAX = -(2**31), 2**31 - 1
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_DOUBLE_MIN = 5e-324


def is_tag_type(expression_type: str | None) -> bool:
    """``ExpressionType.isTagType``: no type, an empty one, or ``TAG``."""
    return expression_type is None or expression_type == "" or expression_type == TAG


class SelectorError(Exception):
    """The selector does not compile; :attr:`java_message` is Java's ``getMessage()`` of it."""

    def __init__(self, java_class: str, message: str) -> None:
        super().__init__(message)
        self.java_class = java_class
        self.message = message

    @property
    def java_message(self) -> str:
        return f"{self.java_class}: {self.message}"


class _EvalError(Exception):
    """A value conversion failed while evaluating (Java throws; the message does not match)."""


# ---------------------------------------------------------------------------------- Java values


class JInt(int):
    """A ``java.lang.Integer``."""


class JLong(int):
    """A ``java.lang.Long``."""


#: a Java value: Boolean (bool), String (str), Integer, Long, Double (float), or null (None)
Value = bool | str | JInt | JLong | float | None

_JAVA_DOUBLE = re.compile(
    r"[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)\Z")
_JAVA_INT = re.compile(r"[+-]?\d+\Z")


def _bounded_int(text: str) -> int | None:
    """``int(text)`` of an optional sign and ASCII digits, or None when it has more than 19
    digits after its leading zeros (beyond every Java integer; a property value or a literal is
    as long as its sender makes it, and int() of thousands of digits is slow or refused)."""
    body = text.lstrip("+-")
    digits = body.lstrip("0")
    if len(digits) > 19:
        return None
    return int(text[:len(text) - len(body)] + (digits or "0"))


def _java_int(text: str, lo: int, hi: int) -> int:
    """``Integer.valueOf`` / ``Long.valueOf``: an optional sign and ASCII digits, in range."""
    if not _JAVA_INT.match(text) or not text.isascii():
        raise _EvalError(f'{_NUMBER_EXC}: For input string: "{text}"')
    v = _bounded_int(text)
    if v is None or not lo <= v <= hi:
        raise _EvalError(f'{_NUMBER_EXC}: For input string: "{text}"')
    return v


def _java_double(text: str) -> float:
    """``Double.valueOf`` (decimal forms; leading and trailing control characters and spaces are
    trimmed, as ``String.trim``)."""
    t = text.strip("".join(chr(c) for c in range(33)))
    if not _JAVA_DOUBLE.match(t) or not t.isascii():
        raise _EvalError(f'{_NUMBER_EXC}: For input string: "{text}"')
    t = t.rstrip("fFdD") if t[-1:] in "fFdD" and "Infinity" not in t else t
    return float(t.replace("Infinity", "inf"))


def _double_compare(a: float, b: float) -> int:
    """``Double.compareTo``: -0.0 below 0.0, NaN above everything and equal to itself."""
    if a < b:
        return -1
    if a > b:
        return 1
    if math.isnan(a) or math.isnan(b):
        return 0 if math.isnan(a) and math.isnan(b) else (1 if math.isnan(a) else -1)
    ba: int = struct.unpack(">q", struct.pack(">d", a))[0]
    bb: int = struct.unpack(">q", struct.pack(">d", b))[0]
    return int(ba > bb) - int(ba < bb)


def _kind(v: object) -> str:
    if isinstance(v, bool):
        return "Boolean"
    if isinstance(v, str):
        return "String"
    if isinstance(v, JInt):
        return "Integer"
    if isinstance(v, JLong):
        return "Long"
    if isinstance(v, float):
        return "Double"
    return "Object"


def _compare_same(lv: Any, rv: Any) -> int:
    if isinstance(lv, float) and isinstance(rv, float):
        return _double_compare(lv, rv)
    if isinstance(lv, str) and isinstance(rv, str):
        # String.compareTo compares UTF-16 code units
        a, b = lv.encode("utf-16-be", "surrogatepass"), rv.encode("utf-16-be", "surrogatepass")
        return (a > b) - (a < b)
    assert isinstance(lv, int) and isinstance(rv, int)
    return int(lv > rv) - int(lv < rv)


def _compare(lv: Any, rv: Any) -> int:
    """``ComparisonExpression.__compare`` with ``convertStringExpressions`` on (4.9.8 parses
    every selector that way)."""
    lk, rk = _kind(lv), _kind(rv)
    if lk != rk:
        if lk == "Boolean":
            if rk != "String":
                return -1
            # Boolean.valueOf(lv) is applied to the left (already a Boolean): the Boolean is then
            # compared with the String, a ClassCastException in Java
            raise _EvalError("java.lang.ClassCastException")
        if lk == "Integer":
            if rk == "Long":
                lv = JLong(lv)
            elif rk == "Double":
                lv = float(lv)
            elif rk == "String":
                rv = JInt(_java_int(rv, _INT_MIN, _INT_MAX))
            else:
                return -1
        elif lk == "Long":
            if rk == "Integer":
                rv = JLong(rv)
            elif rk == "Double":
                lv = float(lv)
            elif rk == "String":
                rv = JLong(_java_int(rv, _LONG_MIN, _LONG_MAX))
            else:
                return -1
        elif lk == "Double":
            if rk in ("Integer", "Long"):
                rv = float(rv)
            elif rk == "String":
                rv = _java_double(rv)
            else:
                return -1
        elif lk == "String":
            s: str = lv
            if rk == "Boolean":
                lv = s.lower() == "true"
            elif rk == "Integer":
                lv = JInt(_java_int(s, _INT_MIN, _INT_MAX))
            elif rk == "Long":
                lv = JLong(_java_int(s, _LONG_MIN, _LONG_MAX))
            elif rk == "Double":
                lv = _java_double(s)
            else:
                return -1
        else:
            return -1
    return _compare_same(lv, rv)


def _java_text(v: Value) -> str:
    """``ConstantExpression.toString``."""
    if v is None:
        return "NULL"
    if isinstance(v, bool):
        return "TRUE" if v else "FALSE"
    if isinstance(v, str):
        return "'" + v.replace("'", "''") + "'"
    if isinstance(v, float):
        return _java_double_text(v)
    return str(int(v))


def _java_double_text(v: float) -> str:
    """``Double.toString`` for the values a literal can have (enough for error messages)."""
    if math.isinf(v):
        return "Infinity" if v > 0 else "-Infinity"
    if math.isnan(v):
        return "NaN"
    if v != 0 and (abs(v) >= 1e7 or abs(v) < 1e-3):
        m, e = f"{v!r}".split("e") if "e" in repr(v) else (repr(v), "0")
        mant = float(m)
        exp = int(e)
        while abs(mant) >= 10:
            mant /= 10
            exp += 1
        ms = repr(mant)
        return f"{ms if '.' in ms else ms + '.0'}E{exp}"
    r = repr(v)
    return r if "." in r or "e" in r else r + ".0"


# ---------------------------------------------------------------------------------- expressions

Props = Mapping[str, str]


class _Expr:
    """An expression node; ``boolean`` marks Java's ``BooleanExpression`` implementations."""

    boolean = False

    def evaluate(self, props: Props) -> Value:
        raise NotImplementedError

    def __str__(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True, slots=True, eq=False)
class _Const(_Expr):
    value: Value

    def evaluate(self, props: Props) -> Value:
        return self.value

    def __str__(self) -> str:
        return _java_text(self.value)


class _BoolConst(_Const):
    """``BooleanConstantExpression`` (TRUE, FALSE, NULL)."""

    boolean = True


@dataclass(frozen=True, slots=True, eq=False)
class _Prop(_Expr):
    name: str

    def evaluate(self, props: Props) -> Value:
        return props.get(self.name)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True, eq=False)
class _Binary(_Expr):
    left: _Expr
    right: _Expr
    symbol: str
    op: Callable[[_Expr, _Expr, Props], Value]

    boolean = True

    def evaluate(self, props: Props) -> Value:
        return self.op(self.left, self.right, props)

    def __str__(self) -> str:
        return f"({self.left} {self.symbol} {self.right})"


@dataclass(frozen=True, slots=True, eq=False)
class _Unary(_Expr):
    operand: _Expr
    symbol: str
    op: Callable[[_Expr, Props], Value]
    boolean: bool

    def evaluate(self, props: Props) -> Value:
        return self.op(self.operand, props)

    def __str__(self) -> str:
        if self.symbol == "":
            return str(self.operand)
        return f"({self.symbol} {self.operand})"


def _as_bool(v: Value) -> bool | None:
    """The ``(Boolean)`` cast of a logic operand: a non-boolean value is a ClassCastException."""
    if v is None or isinstance(v, bool):
        return v
    raise _EvalError("java.lang.ClassCastException")


def _or(left: _Expr, right: _Expr, props: Props) -> Value:
    lv = _as_bool(left.evaluate(props))
    if lv:
        return True
    rv = _as_bool(right.evaluate(props))
    if rv:
        return True
    if lv is None or rv is None:
        return None
    return False


def _and(left: _Expr, right: _Expr, props: Props) -> Value:
    lv = _as_bool(left.evaluate(props))
    if lv is False:
        return False
    rv = _as_bool(right.evaluate(props))
    if rv is False:
        return False
    if lv is None or rv is None:
        return None
    return True


def _equal(left: _Expr, right: _Expr, props: Props) -> Value:
    lv = left.evaluate(props)
    rv = right.evaluate(props)
    if (lv is None) != (rv is None):
        return None if lv is None else False
    if lv is None:
        return True
    if _kind(lv) == _kind(rv) and lv == rv and not isinstance(lv, float):
        return True
    return _compare(lv, rv) == 0


def _ordering(test: Callable[[int], bool]) -> Callable[[_Expr, _Expr, Props], Value]:
    def op(left: _Expr, right: _Expr, props: Props) -> Value:
        lv = left.evaluate(props)
        if lv is None:
            return None
        rv = right.evaluate(props)
        if rv is None:
            return None
        if isinstance(lv, str) and isinstance(rv, str):
            # "Compare String is illegal": both are parsed as doubles first
            try:
                return test(_compare(_java_double(lv), _java_double(rv)))
            except _EvalError as exc:
                raise _EvalError(
                    f"{_RUNTIME_EXC}: It's illegal to compare string by '>=', '>', '<', '<='. "
                    f"lv={lv}, rv={rv}") from exc
        return test(_compare(lv, rv))

    return op


_GT = _ordering(lambda a: a > 0)
_GE = _ordering(lambda a: a >= 0)
_LT = _ordering(lambda a: a < 0)
_LE = _ordering(lambda a: a <= 0)


def _not(operand: _Expr, props: Props) -> Value:
    v = _as_bool(operand.evaluate(props))
    return None if v is None else not v


def _bool_cast(operand: _Expr, props: Props) -> Value:
    v = operand.evaluate(props)
    if v is None:
        return None
    return v if isinstance(v, bool) else False


def _negate(operand: _Expr, props: Props) -> Value:
    v = operand.evaluate(props)
    if v is None or isinstance(v, (bool, str)):
        return None
    if isinstance(v, JInt):
        # Integer negation wraps (-Integer.MIN_VALUE is itself)
        return JInt(((-int(v) + 2**31) % 2**32) - 2**31)
    if isinstance(v, JLong):
        return JLong(((-int(v) + 2**63) % 2**64) - 2**63)
    return -v


@dataclass(frozen=True, slots=True, eq=False)
class _In(_Expr):
    prop: _Prop
    values: frozenset[str]
    items: tuple[str, ...]
    negated: bool

    boolean = True

    def evaluate(self, props: Props) -> Value:
        v = self.prop.evaluate(props)
        if v is None or not isinstance(v, str):
            return None
        return (v in self.values) != self.negated

    def __str__(self) -> str:
        return f"{self.prop} {'NOT IN' if self.negated else 'IN'} ( {', '.join(self.items)} )"


def _check_less_than_operand(e: _Expr) -> None:
    """``checkLessThanOperand``: only numbers (or non-constant, non-boolean expressions)."""
    if isinstance(e, _Const) and not e.boolean:
        if isinstance(e.value, (JInt, JLong, float)) and not isinstance(e.value, bool):
            return
        raise SelectorError(_RUNTIME_EXC, f"Value '{e}' cannot be compared.")
    if e.boolean:
        raise SelectorError(_RUNTIME_EXC, f"Value '{e}' cannot be compared.")


def _check_equal_operand(e: _Expr) -> None:
    if isinstance(e, _Const) and e.value is None:
        raise SelectorError(_RUNTIME_EXC, f"'{e}' cannot be compared.")


def _ordered(left: _Expr, right: _Expr, symbol: str) -> _Expr:
    _check_less_than_operand(left)
    _check_less_than_operand(right)
    op = {">": _GT, ">=": _GE, "<": _LT, "<=": _LE}[symbol]
    return _Binary(left, right, symbol, op)


def _eq(left: _Expr, right: _Expr) -> _Expr:
    _check_equal_operand(left)
    _check_equal_operand(right)
    if isinstance(left, _Const) and isinstance(right, _Const) and left.boolean and not right.boolean:
        raise SelectorError(_RUNTIME_EXC, f"'{left}' cannot be compared with '{right}'")
    return _Binary(left, right, "==", _equal)


def _logic_not(e: _Expr) -> _Expr:
    return _Unary(e, "NOT", _not, True)


def _between(value: _Expr, low: _Expr, high: _Expr) -> _Expr:
    if isinstance(low, _Const) and isinstance(high, _Const):
        lv, rv = low.value, high.value
        if lv is None or rv is None:
            raise SelectorError(_RUNTIME_EXC, "Illegal values of between, values can not be null!")
        try:
            ret = _compare(rv, lv)
        except _EvalError as exc:
            raise SelectorError(_RUNTIME_EXC, str(exc)) from None
        if ret < 0:
            raise SelectorError(
                _RUNTIME_EXC,
                f"Illegal values of between, left value({_plain(lv)}) must less than or equal to "
                f"right value({_plain(rv)})")
    return _Binary(_ordered(value, low, ">="), _ordered(value, high, "<="), "&&", _and)


def _plain(v: Value) -> str:
    """``String.format("%s", v)`` of a constant's value."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return _java_double_text(v)
    return str(v)


# ---------------------------------------------------------------------------------- tokens

# token kinds, named as javacc's tokenImage shows them
_EOF = "<EOF>"
_KEYWORDS = ("NOT", "AND", "OR", "BETWEEN", "IN", "TRUE", "FALSE", "NULL", "IS")
_PUNCT = ("<>", ">=", "<=", "=", ">", "<", "(", ")", ",", "+", "-")
#: ``--`` up to and with the end of its line: tried only where a line end follows (without one the
#: pattern would read the rest of the text for every ``-`` of a run of them and fail)
_LINE_RE = re.compile(r"(?P<line>--[^\n\r]*(\r\n|\n|\r))")
_TOKEN_RE = re.compile(
    r"""(?P<ws>[ \t\n\r\f]+)
      | (?P<block>/\*[^*]*\*+([^*/][^*]*\*+)*/)
      | (?P<float>\d+\.\d*([eE][+-]?\d+)?|\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+)
      | (?P<decimal>0|[1-9]\d*[lL]?)
      | (?P<string>'([^']|'')*')
      | (?P<id>[a-zA-Z_$][a-zA-Z0-9_$]*)
      | (?P<punct><>|>=|<=|[=><(),+\-])
    """,
    re.VERBOSE,
)


@dataclass(frozen=True, slots=True)
class _Token:
    kind: str  # a keyword, a punctuation string, "<ID>", "<DECIMAL_LITERAL>", ... or <EOF>
    image: str
    line: int
    column: int

    @property
    def java_image(self) -> str:
        """``tokenImage[kind]`` of javacc's constants."""
        if self.kind in _KEYWORDS:
            return f'"{self.kind}"'
        if self.kind in _PUNCT:
            return f'"{self.kind}"'
        return self.kind


def _add_escapes(s: str) -> str:
    """javacc's ``add_escapes``."""
    out = []
    for ch in s:
        if ch in "\b\t\n\f\r\"'\\":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r",
                        '"': '\\"', "'": "\\'", "\\": "\\\\"}[ch])
        elif ord(ch) < 0x20 or ord(ch) > 0x7E:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(ch)
    return "".join(out)


#: javacc's token kinds in the order the grammar declares them (``SelectorParserConstants``): a
#: "Was expecting" list is written in this order
_KIND_ORDER = {k: i for i, k in enumerate((
    _EOF, "NOT", "AND", "OR", "BETWEEN", "IN", "TRUE", "FALSE", "NULL", "IS", "<DECIMAL_LITERAL>",
    "<FLOATING_POINT_LITERAL>", "<STRING_LITERAL>", "<ID>", "=", "<>", ">", ">=", "<", "<=", "(", ",", ")",
    "+", "-"))}
#: the tokens that may start a unary expression (``+`` is taken by a syntactic lookahead, which
#: javacc leaves out of its expected lists)
_UNARY_FIRST = ("-", "NOT", "<STRING_LITERAL>", "<DECIMAL_LITERAL>", "<FLOATING_POINT_LITERAL>", "TRUE",
                "FALSE", "NULL", "<ID>", "(")


class _Lexer:
    """``SelectorParserTokenManager``: tokens are read one at a time, when the parser looks at
    them, so text after the point where the parse ends is never read (javacc's selector has no
    end-of-input check: ``a = 1 b`` parses as ``a = 1``)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.line, self.col = 1, 1
        # where javacc reports the end of input: the last character read ((0, 0) for none)
        self.last = (0, 0)
        #: the last line end of the text: a ``--`` after it starts no comment
        self._last_eol = max(text.rfind("\n"), text.rfind("\r"))

    def _advance(self, chunk: str) -> None:
        for ch in chunk:
            self.last = (self.line, self.col)
            if ch == "\n" or ch == "\r":
                self.line += 1
                self.col = 1
            elif ch == "\t":
                self.col += 8 - ((self.col - 1) % 8)
            else:
                self.col += 1

    def next(self) -> _Token:
        text = self.text
        while self.pos < len(text):
            m = None
            if self.pos < self._last_eol and text.startswith("--", self.pos):
                m = _LINE_RE.match(text, self.pos)
            if m is None:
                m = _TOKEN_RE.match(text, self.pos)
            if m is None or m.end() == self.pos:
                ch = text[self.pos]
                if self.pos == len(text) - 1:
                    # javacc's token manager reads on after the bad character to see whether a
                    # longer token could match; at the end of the input it reports that instead
                    raise SelectorError(_TOKEN_EXC, f"Lexical error at line {self.line}, column "
                                                    f'{self.col + 1}.  Encountered: <EOF> after : ""')
                raise SelectorError(
                    _TOKEN_EXC,
                    f"Lexical error at line {self.line}, column {self.col}.  "
                    f'Encountered: "{_add_escapes(ch)}" ({ord(ch)}), after : ""')
            group = m.lastgroup
            image = m.group(0)
            line, col = self.line, self.col
            self._advance(image)
            self.pos = m.end()
            if group in ("ws", "line", "block"):
                continue
            if group == "id":
                upper = image.upper()
                kind = upper if upper in _KEYWORDS else "<ID>"
            elif group == "decimal":
                kind = "<DECIMAL_LITERAL>"
            elif group == "float":
                kind = "<FLOATING_POINT_LITERAL>"
            elif group == "string":
                kind = "<STRING_LITERAL>"
            else:
                kind = image
            return _Token(kind, image, line, col)
        return _Token(_EOF, "", *self.last)


# ---------------------------------------------------------------------------------- parser


class _Parser:
    """A recursive-descent reading of ``SelectorParser.jj`` (same productions, same order).

    Like javacc, it remembers which tokens the choices made at the current token would have
    taken (:attr:`expected`, cleared when a token is consumed), so that a parse error lists them
    in javacc's order."""

    def __init__(self, text: str) -> None:
        self.lexer = _Lexer(text)
        self.buffer: list[_Token] = []
        self.expected: set[str] = set()

    def peek(self, n: int = 0) -> _Token:
        while len(self.buffer) <= n:
            if self.buffer and self.buffer[-1].kind == _EOF:
                return self.buffer[-1]
            self.buffer.append(self.lexer.next())
        return self.buffer[n]

    @property
    def tok(self) -> _Token:
        return self.peek()

    def take(self) -> _Token:
        t = self.peek()
        if t.kind != _EOF:
            self.buffer.pop(0)
        self.expected.clear()
        return t

    def at(self, *kinds: str) -> str | None:
        """The current token's kind if it is one of ``kinds`` (a choice javacc records)."""
        self.expected.update(kinds)
        k = self.tok.kind
        return k if k in kinds else None

    def fail(self, *more: str) -> SelectorError:
        t = self.tok
        if t.kind == _EOF:
            found = _EOF
        else:
            found = f' {t.java_image} "{_add_escapes(t.image)} "'
        kinds = sorted(self.expected | set(more), key=lambda k: _KIND_ORDER.get(k, 99))
        images = [f'"{k}"' if k in _PUNCT or k in _KEYWORDS else k for k in kinds]
        want = "".join(f"{e} ...\n    " if e != _EOF else f"{e} \n    " for e in images)
        head = "Was expecting:" if len(kinds) == 1 else "Was expecting one of:"
        return SelectorError(
            _PARSE_EXC, f'Encountered "{found}" at line {t.line}, column {t.column}.\n{head}\n    {want}')

    def expect(self, kind: str) -> _Token:
        if self.tok.kind != kind:
            raise self.fail(kind)
        return self.take()

    @staticmethod
    def as_boolean(e: _Expr) -> _Expr:
        if e.boolean:
            return e
        if isinstance(e, _Prop):
            return _Unary(e, "", _bool_cast, True)
        raise SelectorError(_PARSE_EXC, f"Expression will not result in a boolean value: {e}")

    def selector(self) -> _Expr:
        # JmsSelector: orExpression, and nothing requires the input to end there
        return self.as_boolean(self.or_expr())

    def or_expr(self) -> _Expr:
        left = self.and_expr()
        while self.at("OR"):
            self.take()
            right = self.and_expr()
            left = _Binary(self.as_boolean(left), self.as_boolean(right), "||", _or)
        return left

    def and_expr(self) -> _Expr:
        left = self.equality()
        while self.at("AND"):
            self.take()
            right = self.equality()
            left = _Binary(self.as_boolean(left), self.as_boolean(right), "&&", _and)
        return left

    def equality(self) -> _Expr:
        left = self.comparison()
        while True:
            k = self.at("=", "<>", "IS")
            if k == "=":
                self.take()
                left = _eq(left, self.comparison())
            elif k == "<>":
                self.take()
                left = _logic_not(_eq(left, self.comparison()))
            elif k == "IS" and self.peek(1).kind == "NULL":
                self.take()
                self.take()
                left = _Binary(left, _BoolConst(None), "==", _equal)
            elif k == "IS":
                self.take()
                self.expect("NOT")
                self.expect("NULL")
                left = _logic_not(_Binary(left, _BoolConst(None), "==", _equal))
            else:
                return left

    def string_list(self) -> list[str]:
        self.expect("(")
        items = [self.string_literal()]
        while self.at(","):
            self.take()
            items.append(self.string_literal())
        self.expect(")")
        return items

    def string_literal(self) -> str:
        t = self.expect("<STRING_LITERAL>")
        return t.image[1:-1].replace("''", "'")

    def in_expr(self, left: _Expr, negated: bool) -> _Expr:
        items = self.string_list()
        if not isinstance(left, _Prop):
            raise SelectorError(_RUNTIME_EXC, f"Expected a property for In expression, got: {left}")
        return _In(left, frozenset(items), tuple(items), negated)

    def comparison(self) -> _Expr:
        left = self.unary()
        while True:
            # the loop is entered on any first token of its alternatives, NOT included; the NOT
            # alternatives are chosen by a 2-token lookahead, which javacc leaves out of the list
            k = self.at(">", ">=", "<", "<=", "BETWEEN", "IN", "NOT")
            if k in (">", ">=", "<", "<="):
                self.take()
                left = _ordered(left, self.unary(), k)
            elif k == "BETWEEN":
                self.take()
                low = self.unary()
                self.expect("AND")
                left = _between(left, low, self.unary())
            elif k == "IN":
                self.take()
                left = self.in_expr(left, False)
            elif k == "NOT" and self.peek(1).kind == "BETWEEN":
                self.take()
                self.take()
                low = self.unary()
                self.expect("AND")
                high = self.unary()
                left = _Binary(_ordered(left, low, "<"), _ordered(left, high, ">"), "||", _or)
            elif k == "NOT" and self.peek(1).kind == "IN":
                self.take()
                self.take()
                left = self.in_expr(left, True)
            elif k == "NOT":
                self.expected = {">", ">=", "<", "<=", "BETWEEN", "IN"}
                raise self.fail()
            else:
                return left

    def unary(self) -> _Expr:
        k = self.tok.kind
        if k == "+":
            self.take()
            return self.unary()
        if k == "-":
            self.take()
            return _Unary(self.unary(), "-", _negate, False)
        if k == "NOT":
            self.take()
            return _logic_not(self.as_boolean(self.unary()))
        return self.primary()

    def primary(self) -> _Expr:
        t = self.tok
        k = t.kind
        if k == "<STRING_LITERAL>":
            return _Const(self.string_literal())
        if k == "<DECIMAL_LITERAL>":
            self.take()
            return _Const(_decimal(t.image))
        if k == "<FLOATING_POINT_LITERAL>":
            self.take()
            return _Const(_floating(t.image))
        if k in ("TRUE", "FALSE", "NULL"):
            self.take()
            return _BoolConst({"TRUE": True, "FALSE": False, "NULL": None}[k])
        if k == "<ID>":
            self.take()
            return _Prop(t.image)
        if k == "(":
            self.take()
            e = self.or_expr()
            self.expect(")")
            return e
        raise self.fail(*_UNARY_FIRST)


def _decimal(image: str) -> Value:
    """``ConstantExpression.createFromDecimal``."""
    text = image[:-1] if image[-1:] in "lL" else image
    v = _bounded_int(text)
    if v is None or v > _LONG_MAX:
        raise SelectorError(_NUMBER_EXC, f'For input string: "{text}"')
    return JInt(v) if _INT_MIN <= v <= _INT_MAX else JLong(v)


def _floating(image: str) -> Value:
    """``ConstantExpression.createFloat``: Java refuses values below ``Double.MIN_VALUE``
    (including 0.0)."""
    v = float(image)
    if math.isinf(v):
        raise SelectorError(_RUNTIME_EXC, f"{image} is greater than 1.7976931348623157E308")
    if v < _DOUBLE_MIN:
        raise SelectorError(_RUNTIME_EXC, f"{image} is less than 4.9E-324")
    return v


# ---------------------------------------------------------------------------------- selector


@dataclass(frozen=True, slots=True)
class Selector:
    """A compiled SQL92 selector."""

    text: str
    _root: _Expr

    def evaluate(self, properties: Props) -> bool | None:
        """The expression's value for a message's properties: True, False or None (unknown);
        raises ValueError when Java's evaluation would throw."""
        try:
            v = self._root.evaluate(properties)
        except _EvalError as exc:
            raise ValueError(str(exc)) from None
        return v if isinstance(v, bool) or v is None else False

    def matches(self, properties: Props) -> bool:
        """``isMatchedByCommitLog``: only a TRUE result matches; an evaluation error does not."""
        try:
            return self._root.evaluate(properties) is True
        except _EvalError:
            return False

    def __str__(self) -> str:
        return str(self._root)


#: the deepest expression tree compiled: evaluation recurses once per level, and a chain of
#: 20,000 ANDs parses (the parser loops over it) but would exhaust the stack on each message
MAX_DEPTH = 200
#: the longest selector compiled. The broker compiles a consumer's selector on its event loop
#: (heartbeats, pulls that carry their subscription, CHECK_CLIENT_CONFIG), at about a
#: microsecond a character: a 16 MiB expression would hold every other connection for tens of
#: seconds. Java sets no bound; real selectors are a few hundred characters.
MAX_SELECTOR_LENGTH = 64 * 1024


def _depth(root: _Expr) -> int:
    deepest = 0
    todo = [(root, 1)]
    while todo:
        node, depth = todo.pop()
        deepest = max(deepest, depth)
        if isinstance(node, _Binary):
            todo += ((node.left, depth + 1), (node.right, depth + 1))
        elif isinstance(node, _Unary):
            todo.append((node.operand, depth + 1))
    return deepest


def compile_selector(text: str) -> Selector:
    """``SelectorParser.parse``; raises :class:`SelectorError`. Results are cached both ways, as
    in Java's ``PARSE_CACHE``: a selector that does not compile is not parsed again at each pull.
    An expression longer than :data:`MAX_SELECTOR_LENGTH` or deeper than :data:`MAX_DEPTH` is
    refused."""
    result = _compiled(text)
    if isinstance(result, SelectorError):
        raise SelectorError(result.java_class, result.message)  # a new one: no traceback piles up
    return result


@lru_cache(maxsize=256)
def _compiled(text: str) -> Selector | SelectorError:
    if len(text) > MAX_SELECTOR_LENGTH:
        return SelectorError(_PARSE_EXC, f"the expression is {len(text)} characters long; at most "
                                         f"{MAX_SELECTOR_LENGTH} are compiled")
    try:
        root = _Parser(text).selector()
    except RecursionError:
        return SelectorError(_PARSE_EXC, "the expression nests too deeply")
    except SelectorError as exc:
        return exc
    if _depth(root) > MAX_DEPTH:
        return SelectorError(_PARSE_EXC, "the expression nests too deeply")
    return Selector(text, root)
