# Licensed under the Apache License, Version 2.0. See LICENSE.
"""Java library behaviour that RocketMQ's bytes depend on, each written once.

* :func:`java_string_hash` — ``String.hashCode()``: tag codes in consume-queue entries, index-file
  keys, the bucket of a ``HashMap`` key.
* :class:`JavaHashMap` and :func:`java_hash_order` — ``java.util.HashMap`` iteration order. Java
  writes message properties (``MessageDecoder.messageProperties2String``) and fastjson writes the
  name server's tables in that order, so reproducing it gives byte-identical properties strings and
  bodies.
* :func:`java_double_to_string` — ``Double.toString(double)`` as JDK 8 to 18 print it (the
  ``FloatingDecimal`` algorithm, which the Java brokers run on). fastjson 1.2.69 writes a double
  the same way, and the broker's runtime figures (``String.valueOf(double)``) do too.

Theory of operation: ``HashMap``
--------------------------------
Iteration walks the bucket array from index 0 up; a key's bucket is ``(h ^ (h >>> 16)) & (n - 1)``
where ``h`` is the key's ``hashCode()`` and ``n`` the table size; inside a bucket, entries stay in
insertion order (new entries are appended, and a resize splits each bucket keeping the relative
order). So the iteration order is a *stable* sort of the insertion order by bucket index. ``n``
starts at the next power of two of the initial capacity and doubles whenever the size passes
``0.75 n`` (``HashMap.putVal``/``resize``), or when one bucket would hold a 9th entry while
``n < 64`` (``treeifyBin``). Tables never shrink, so the size that matters is the largest one ever
reached. Not modelled: the order inside a bucket of nine or more colliding keys once the table has
64 buckets (Java turns it into a red-black tree whose root moves to the front). A re-put key keeps
its place; removing then re-adding a key puts it last in its bucket, as Java's bucket lists do.

Theory of operation: ``Double.toString``
----------------------------------------
Up to JDK 18, ``Double.toString`` is not "the shortest digits that round-trip" (Python's
``repr``): ``FloatingDecimal`` prints an integral value below 2^63 from its exact integer digits
(less the digits below the precision of the double, rounded), so ``1.9585998730493192E16`` where
the shortest is ``1.958599873049319E16``; and it generates digits with the Steele–White
free-format loop, which in scientific notation always produces a second digit
(``4.9E-324``, not ``5.0E-324``) and tests its stopping conditions in wrapping int/long arithmetic
when the numbers fit (a wrapped bound ends the loop). :func:`java_double_to_string` follows those
steps exactly, with Python integers standing in for Java's ``int``, ``long`` and ``FDBigInteger``
and the wrap reproduced where Java's arithmetic wraps. JDK 19 changed the algorithm to the
shortest form (JDK-4511638); RocketMQ 4.9 and 5.0 run on 8 to 17. The tests compare it with the
JDK's own output (``fixtures/vectors/java_double.tsv``, and the installed ``java`` when present).
"""

from __future__ import annotations

import math
import struct
from collections.abc import Callable, Hashable, Iterable, Iterator, MutableMapping
from typing import TypeVar, overload

__all__ = [
    "JavaHashMap",
    "java_double_to_string",
    "java_hash",
    "java_hash_order",
    "java_string_hash",
    "table_size_for",
]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")
D = TypeVar("D")

# ---------------------------------------------------------------------------------------- hashCode

# The polynomial Σ c[i]·31^(n-1-i) is the value of the digits c[i] read in base 31. An ASCII
# code c is 31·(c // 31) + c % 31 with both parts valid base-31 digits (c // 31 <= 4), so the
# hash is 31·int(high digits, 31) + int(low digits, 31), which int() evaluates in C: about five
# times faster than a Python loop for the 40-character index keys the store hashes twice a put.
# Short strings are faster in the loop; int() refuses over 4300 digits in a non-power-of-2 base.
_BASE31 = b"0123456789abcdefghijklmnopqrstu"
_HIGH_DIGITS = bytes(_BASE31[c // 31] if c < 0x80 else 0x30 for c in range(256))
_LOW_DIGITS = bytes(_BASE31[c % 31] if c < 0x80 else 0x30 for c in range(256))
_BASE31_MIN, _BASE31_MAX = 9, 4000


def java_string_hash(s: str) -> int:
    """``String.hashCode()``: 31-polynomial over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    if s.isascii():
        raw = s.encode("ascii")
        if _BASE31_MIN <= len(raw) <= _BASE31_MAX:
            h = (31 * int(raw.translate(_HIGH_DIGITS), 31) + int(raw.translate(_LOW_DIGITS), 31)) & 0xFFFFFFFF
        else:
            for c in raw:
                h = (31 * h + c) & 0xFFFFFFFF
    else:
        units = s.encode("utf-16-be", "surrogatepass")
        for i in range(0, len(units), 2):
            h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h - 0x100000000 if h & 0x80000000 else h


def java_hash(key: object) -> int:
    """``hashCode()`` of a ``String`` or of a ``Long`` key (the key types RocketMQ's maps use)."""
    if isinstance(key, str):
        return java_string_hash(key)
    if isinstance(key, int) and not isinstance(key, bool):
        # Long.hashCode: (int) (value ^ (value >>> 32))
        v = key & 0xFFFFFFFFFFFFFFFF
        return (v ^ (v >> 32)) & 0xFFFFFFFF
    raise TypeError(f"no Java hashCode for {type(key).__name__}")


# ---------------------------------------------------------------------------------------- HashMap

_TREEIFY_THRESHOLD = 8
_MIN_TREEIFY_CAPACITY = 64


def _spread(h: int) -> int:
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def table_size_for(capacity: int) -> int:
    """``HashMap.tableSizeFor``: the power of two at or above ``capacity`` (at least 1)."""
    return 1 << (capacity - 1).bit_length() if capacity > 1 else 1


def java_hash_order(keys: Iterable[K], initial_capacity: int = 16) -> list[K]:
    """The iteration order of a fresh ``HashMap(initial_capacity)`` after putting ``keys`` in this
    order (a repeated key keeps its first place). 16 is ``new HashMap()`` (4.9.x
    ``string2messageProperties``), 128 the 5.x ``new HashMap<>(128)``."""
    table: JavaHashMap[K, None] = JavaHashMap(initial_capacity)
    for k in keys:
        table[k] = None
    return list(table)


class JavaHashMap(MutableMapping[K, V]):
    """A mapping that remembers insertion order and iterates in Java ``HashMap`` order."""

    __slots__ = ("_bucket_counts", "_capacity", "_data", "_hash", "_order", "_spread_cache")

    def __init__(self, initial_capacity: int = 16, items: Iterable[tuple[K, V]] = (), *,
                 key_hash: Callable[[object], int] = java_hash) -> None:
        self._data: dict[K, V] = {}
        self._capacity = table_size_for(max(1, initial_capacity))
        self._hash = key_hash
        self._spread_cache: dict[K, int] = {}
        self._bucket_counts: dict[int, int] = {}
        self._order: list[K] | None = None
        for k, v in items:
            self[k] = v

    @property
    def capacity(self) -> int:
        """The size Java's bucket array would have now."""
        return self._capacity

    def _bucket(self, key: K) -> int:
        return self._spread_cache[key] & (self._capacity - 1)

    def _grow(self) -> None:
        self._capacity <<= 1
        # the bucket counts serve only the treeifyBin rule, which needs fewer than 64 buckets:
        # past that a resize is O(1) here (the order is sorted when next read), so a table of
        # a million keys never holds its writer for a pass over all of them
        counts: dict[int, int] = {}
        if self._capacity < _MIN_TREEIFY_CAPACITY:
            for k in self._data:
                b = self._bucket(k)
                counts[b] = counts.get(b, 0) + 1
        self._bucket_counts = counts

    def __setitem__(self, key: K, value: V) -> None:
        if key in self._data:
            self._data[key] = value
            return
        self._insert(key, self._hash(key), value)

    def put_hashed(self, key: K, hash_code: int, value: V) -> None:
        """``self[key] = value`` where the caller knows the key's ``hashCode()`` already (one key
        put in many maps: a broker name in the queue data of each of its topics)."""
        if key in self._data:
            self._data[key] = value
            return
        self._insert(key, hash_code, value)

    def _insert(self, key: K, hash_code: int, value: V) -> None:
        self._spread_cache[key] = _spread(hash_code)
        self._data[key] = value
        self._order = None
        if self._capacity < _MIN_TREEIFY_CAPACITY:
            b = self._bucket(key)
            count = self._bucket_counts.get(b, 0) + 1
            self._bucket_counts[b] = count
            # mirrors putVal: treeifyBin resizes a small table instead of making a tree
            if count > _TREEIFY_THRESHOLD:
                self._grow()
        if len(self._data) > self._capacity * 3 // 4:
            self._grow()

    def __delitem__(self, key: K) -> None:
        del self._data[key]
        if self._capacity < _MIN_TREEIFY_CAPACITY:
            self._bucket_counts[self._bucket(key)] -= 1
        del self._spread_cache[key]
        self._order = None

    def __getitem__(self, key: K) -> V:
        return self._data[key]

    @overload
    def get(self, key: K, /) -> V | None: ...

    @overload
    def get(self, key: K, /, default: V | D) -> V | D: ...

    def get(self, key: K, /, default: object = None) -> object:
        # the dict's own get: Mapping.get goes through __getitem__ and an exception for a miss
        return self._data.get(key, default)

    def keys_in_insertion_order(self) -> list[K]:
        """The keys in the order they were put, without Java's order (for work whose result does
        not depend on the order, on a table too large to sort on every change)."""
        return list(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __len__(self) -> int:
        return len(self._data)

    def __iter__(self) -> Iterator[K]:
        if self._order is None:
            self._order = sorted(self._data, key=self._bucket)
        return iter(list(self._order))

    def __repr__(self) -> str:
        return f"JavaHashMap({dict(self.items())!r})"


# ---------------------------------------------------------------------------------------- Double.toString

_EXP_SHIFT = 52
_FRACT_HOB = 1 << _EXP_SHIFT
_SIGNIF_MASK = _FRACT_HOB - 1
_EXP_ONE = 0x3FF0000000000000
_DOUBLE_BITS = struct.Struct(">d")
_LONG_BITS = struct.Struct(">Q")
#: FloatingDecimal.N_5_BITS: the bits 5^i needs, for the 27 powers it tabulates
_N_5_BITS = tuple((5**i).bit_length() for i in range(27))
#: FloatingDecimal.insignificantDigitsNumber: decimal digits of 2^p, less one
_INSIGNIFICANT = tuple(len(str(1 << p)) - 1 for p in range(64))


def _wrap(x: int, bits: int) -> int:
    """``x`` as Java's ``int`` (32) or ``long`` (64) arithmetic leaves it."""
    x &= (1 << bits) - 1
    return x - (1 << bits) if x >> (bits - 1) else x


def _estimate_dec_exp(fract_bits: int, bin_exp: int) -> int:
    # mirrors FloatingDecimal.estimateDecExp: a floor of log10 in double arithmetic, which may be
    # one too low (the digit loop then starts with a zero digit and drops it)
    d2: float = _DOUBLE_BITS.unpack(_LONG_BITS.pack(_EXP_ONE | (fract_bits & _SIGNIF_MASK)))[0]
    return math.floor((d2 - 1.5) * 0.289529654 + 0.176091259 + bin_exp * 0.301029995663981)


def _long_digits(lvalue: int, insignificant: int) -> tuple[list[int], int]:
    # mirrors BinaryToASCIIBuffer.developLongDigits: drop the insignificant low digits (rounding
    # half up), then the trailing zeros
    dec = 0
    if insignificant:
        pow10 = 10**insignificant
        lvalue, residue = divmod(lvalue, pow10)
        dec = insignificant
        if residue >= pow10 >> 1:
            lvalue += 1
    text = str(lvalue)
    return [int(c) for c in text.rstrip("0")], dec + len(text)


def _dtoa(bin_exp: int, fract_bits: int, n_significant_bits: int) -> tuple[list[int], int]:
    """The digits and decimal exponent (value = 0.d1d2… × 10^exp) that
    ``FloatingDecimal.BinaryToASCIIBuffer.dtoa`` produces for a normalized double."""
    tail_zeros = (fract_bits & -fract_bits).bit_length() - 1
    n_fract_bits = _EXP_SHIFT + 1 - tail_zeros
    n_tiny_bits = max(0, n_fract_bits - bin_exp - 1)
    if -21 <= bin_exp <= 62 and n_tiny_bits == 0:
        # an integer that fits in a long: its own digits
        insignificant = 0
        if bin_exp > n_significant_bits:
            p2 = bin_exp - n_significant_bits - 1
            insignificant = _INSIGNIFICANT[p2] if 1 < p2 < 64 else 0
        if bin_exp >= _EXP_SHIFT:
            return _long_digits(fract_bits << (bin_exp - _EXP_SHIFT), insignificant)
        return _long_digits(fract_bits >> (_EXP_SHIFT - bin_exp), insignificant)
    dec_exp = _estimate_dec_exp(fract_bits, bin_exp)
    # value = b / s, m is half the gap to the neighbouring doubles, all scaled to integers
    b5 = max(0, -dec_exp)
    b2 = b5 + n_tiny_bits + bin_exp
    s5 = max(0, dec_exp)
    s2 = s5 + n_tiny_bits
    m5 = b5
    m2 = b2 - n_significant_bits
    fract_bits >>= tail_zeros
    b2 -= n_fract_bits - 1
    common = min(b2, s2)
    b2 -= common
    s2 -= common
    m2 -= common
    if n_fract_bits == 1:
        m2 -= 1
    if m2 < 0:
        b2 -= m2
        s2 -= m2
        m2 = 0
    b_bits = n_fract_bits + b2 + (_N_5_BITS[b5] if b5 < len(_N_5_BITS) else b5 * 3)
    ten_s_bits = s2 + 1 + (_N_5_BITS[s5 + 1] if s5 + 1 < len(_N_5_BITS) else (s5 + 1) * 3)
    b = (fract_bits * 5**b5) << b2
    s = 5**s5 << s2
    tens = s * 10
    digits: list[int] = []
    # Java runs the same loop in int, long or FDBigInteger arithmetic, whichever holds b and 10s.
    # The int/long loops test "b + m > 10s" and end when m wraps; the FDBigInteger one tests >=.
    width = 32 if b_bits < 32 and ten_s_bits < 32 else 64 if b_bits < 64 and ten_s_bits < 64 else 0
    m = 5**m5 << m2
    if width:
        m = _wrap(m, width)
    q, b = divmod(b, s)
    b *= 10
    m = _wrap(m * 10, width) if width else m * 10
    low = b < m
    high = (_wrap(b + m, width) > tens) if width else (b + m >= tens)
    if q == 0 and not high:
        dec_exp -= 1  # the estimate was one too low: a leading zero
    else:
        digits.append(q)
    if dec_exp < -3 or dec_exp >= 8:
        # "Java spec sez that we always have at least one digit after the ." in E-form
        high = low = False
    while not low and not high:
        q, b = divmod(b, s)
        b *= 10
        if width:
            m = _wrap(m * 10, width)
            if m > 0:
                low = b < m
                high = _wrap(b + m, width) > tens
            else:
                low = high = True
        else:
            m *= 10
            low = b < m
            high = b + m >= tens
        digits.append(q)
    dec_exponent = dec_exp + 1
    if high:
        diff = (b << 1) - tens if low else 0
        # round the last digit up: always when only "high", else to nearest, ties to even
        if not low or diff > 0 or (diff == 0 and digits[-1] & 1):
            i = len(digits) - 1
            while digits[i] == 9 and i > 0:
                digits[i] = 0
                i -= 1
            if digits[i] == 9:
                dec_exponent += 1
                digits[0] = 1
            else:
                digits[i] += 1
    return digits, dec_exponent


def java_double_to_string(value: float) -> str:
    """``Double.toString(value)`` as JDK 8–18 write it (see the module notes): plain notation with
    at least one fractional digit for 10^-3 <= |value| < 10^7 ("0.001", "100.0"), else
    ``d.ddd…E[-]n`` ("1.0E7", "4.9E-324"); "NaN", "Infinity", "-0.0" as Java spells them."""
    if value != value:
        return "NaN"
    if value in (math.inf, -math.inf):
        return "Infinity" if value > 0 else "-Infinity"
    bits: int = _LONG_BITS.unpack(_DOUBLE_BITS.pack(value))[0]
    negative = bits >> 63
    fract = bits & _SIGNIF_MASK
    bin_exp = (bits >> _EXP_SHIFT) & 0x7FF
    if bin_exp == 0:
        if fract == 0:
            return "-0.0" if negative else "0.0"
        # mirrors getBinaryToASCIIConverter: a subnormal is normalized, with fewer significant bits
        leading = 64 - fract.bit_length()
        shift = leading - (63 - _EXP_SHIFT)
        fract <<= shift
        bin_exp = 1 - shift
        n_significant = 64 - leading
    else:
        fract |= _FRACT_HOB
        n_significant = _EXP_SHIFT + 1
    digits, dec = _dtoa(bin_exp - 1023, fract, n_significant)
    text = "".join(map(str, digits))
    sign = "-" if negative else ""
    # mirrors BinaryToASCIIBuffer.getChars
    if 0 < dec < 8:
        if len(text) <= dec:
            return f"{sign}{text}{'0' * (dec - len(text))}.0"
        return f"{sign}{text[:dec]}.{text[dec:]}"
    if -3 < dec <= 0:
        return f"{sign}0.{'0' * -dec}{text}"
    return f"{sign}{text[0]}.{text[1:] or '0'}E{dec - 1}"
