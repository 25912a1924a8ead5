"""Seeded value generators for the parity tests: thousands of values per type in
Iceberg's internal representation (days, micros, Decimal, str, bytes, UUID...), the
known pitfalls always included (see /work/shared/notes/pitfalls.md).

The generation is seeded so a failure reproduces; each function takes a
``random.Random`` so tests do not share state.
"""

from __future__ import annotations

import datetime as dt
import math
import random
import struct
import uuid
from decimal import Decimal

from java_referee import make_decimal

INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MICROS_PER_DAY = 86_400_000_000
MICROS_PER_HOUR = 3_600_000_000
# Python's datetime covers years 1..9999; values in this range can also travel as
# Python objects (frazil.values' contract), values outside it only as Arrow data.
MIN_DAY = (dt.date(1, 1, 1) - dt.date(1970, 1, 1)).days
MAX_DAY = (dt.date(9999, 12, 31) - dt.date(1970, 1, 1)).days
MIN_MICROS = MIN_DAY * MICROS_PER_DAY
MAX_MICROS = (MAX_DAY + 1) * MICROS_PER_DAY - 1


def _powers_around(limit_bits: int, signed: bool = True) -> list[int]:
    """2^k - 1, 2^k, 2^k + 1 (and negatives) for every k below limit_bits: byte-length edges."""
    out: list[int] = []
    for k in range(limit_bits):
        for v in (2**k - 1, 2**k, 2**k + 1):
            out.append(v)
            if signed:
                out.append(-v)
    return out


def ints(rng: random.Random, n: int, lo: int = INT_MIN, hi: int = INT_MAX) -> list[int]:
    """Integers in [lo, hi]: edges, byte-length boundaries, small values, uniform values."""
    bits = max(lo.bit_length(), hi.bit_length())
    edges = [0, 1, -1, lo, hi, lo + 1, hi - 1, 10, -10, 9, -9, 11, -11, 34, -34]
    edges += _powers_around(bits)
    values = [v for v in edges if lo <= v <= hi]
    while len(values) < n:
        pick = rng.random()
        if pick < 0.3:
            v = rng.randint(-1000, 1000)
        elif pick < 0.6:
            # log-uniform magnitude: every byte length is well represented
            v = rng.getrandbits(rng.randint(1, bits)) * rng.choice((1, -1))
        else:
            v = rng.randint(lo, hi)
        if lo <= v <= hi:
            values.append(v)
    return values


def decimal_unscaled(rng: random.Random, n: int, precision: int) -> list[int]:
    """Unscaled values of a decimal(precision, _): all digit counts, both signs, edges."""
    top = 10**precision - 1
    edges = [0, 1, -1, top, -top, top - 1, -top + 1, 127, -127, 128, -128, 255, -255, 256, -256]
    edges += [32767, -32768, 32768, -32769, 2**63 - 1, -(2**63), 2**63, -(2**63) - 1]
    edges += [10**k for k in range(precision)] + [-(10**k) for k in range(precision)]
    edges += _powers_around(min(127, math.ceil(precision * math.log2(10))))
    values = [v for v in edges if -top <= v <= top]
    while len(values) < n:
        digits = rng.randint(1, precision)
        v = rng.randint(10 ** (digits - 1) if digits > 1 else 0, 10**digits - 1)
        values.append(v if rng.random() < 0.5 else -v)
    return values


def decimals(rng: random.Random, n: int, precision: int, scale: int) -> list[Decimal]:
    return [make_decimal(u, scale) for u in decimal_unscaled(rng, n, precision)]


# Code point pools by UTF-8 length, surrogates excluded (they are not valid UTF-8).
_POOLS = [
    [(0x00, 0x7F)],
    [(0x80, 0x7FF)],
    [(0x800, 0xD7FF), (0xE000, 0xFFFF)],
    [(0x10000, 0x10FFFF)],
]
_FAVOURITES = "a€日本語ß\u0301\U0001d11e🧊😀\U0010ffff\x00\n\t\"\\'~!"


def _code_point(rng: random.Random, width: int) -> str:
    lo, hi = rng.choice(_POOLS[width])
    return chr(rng.randint(lo, hi))


def strings(rng: random.Random, n: int) -> list[str]:
    """Strings mixing 1- to 4-byte UTF-8 characters, lengths 0..24."""
    values = [
        "",
        "iceberg",
        "ice",
        "\U0001d11e",
        "🧊" * 5,
        "日本語テキスト",
        "a\U0001d11eb",
        "\U0001d11e" * 3 + "x",
        "e\u0301",
        "\x00",
        "\n",
        "~",
        "\U0010ffff",
        "\ud7ff\ue000",
    ]
    while len(values) < n:
        length = rng.choice((0, 1, 2, 3, 4, 5, rng.randint(0, 24)))
        mode = rng.random()
        chars = []
        for _ in range(length):
            if mode < 0.2:
                chars.append(rng.choice(_FAVOURITES))
            elif mode < 0.4:
                chars.append(_code_point(rng, 0))
            else:
                chars.append(_code_point(rng, rng.randrange(4)))
        values.append("".join(chars))
    return values


def binaries(rng: random.Random, n: int, length: int | None = None) -> list[bytes]:
    """Random byte strings (of a fixed length if given)."""
    values: list[bytes] = []
    lengths = [length] if length is not None else [0, 1, 2, 3, 4, 5, 15, 16, 17, 40]
    for size in lengths:
        values += [bytes(size), b"\xff" * size, bytes(range(size % 256)) if size < 256 else b""]
    values = [v for v in values if length is None or len(v) == length]
    while len(values) < n:
        size = length if length is not None else rng.choice((0, 1, 2, 3, rng.randint(0, 64)))
        values.append(rng.randbytes(size))
    return values


def uuids(rng: random.Random, n: int) -> list[uuid.UUID]:
    values = [
        uuid.UUID(int=0),
        uuid.UUID(int=2**128 - 1),
        uuid.UUID(int=2**127),
        uuid.UUID(int=2**127 - 1),
        uuid.UUID(int=2**63),
        uuid.UUID("f79c3e09-677c-4bbd-a479-3f349cb785e7"),
    ]
    while len(values) < n:
        values.append(uuid.UUID(int=rng.getrandbits(128)))
    return values


def days(rng: random.Random, n: int, lo: int = MIN_DAY, hi: int = MAX_DAY) -> list[int]:
    """Day counts: dense around 1970 and month / year boundaries before and after it."""
    edges = [0, -1, 1, -365, -366, -364, 365, 366, -730, -731, -1461, -1462, 59, 60, -306]
    for year in (1, 4, 100, 1582, 1600, 1899, 1900, 1968, 1969, 1970, 1971, 2000, 2024, 9999):
        for month in (1, 2, 3, 12):
            for day in (1, 28):
                d = (dt.date(year, month, day) - dt.date(1970, 1, 1)).days
                edges += [d - 1, d, d + 1]
    values = [d for d in edges if lo <= d <= hi]
    while len(values) < n:
        if rng.random() < 0.4:
            values.append(rng.randint(max(lo, -3000), min(hi, 3000)))
        else:
            values.append(rng.randint(lo, hi))
    return values


def micros(rng: random.Random, n: int, lo: int = MIN_MICROS, hi: int = MAX_MICROS) -> list[int]:
    """Microsecond timestamps: unit boundaries +-1 us around day, month and year starts
    before and after 1970, and uniform values."""
    values: list[int] = [0, -1, 1, -MICROS_PER_HOUR, -MICROS_PER_HOUR - 1, -MICROS_PER_HOUR + 1]
    for d in days(rng, 200):
        base = d * MICROS_PER_DAY
        values += [base - 1, base, base + 1]
    values = [v for v in values if lo <= v <= hi]
    while len(values) < n:
        pick = rng.random()
        if pick < 0.3:
            # near the epoch, where floor and truncation differ
            values.append(rng.randint(-3 * MICROS_PER_DAY * 400, 3 * MICROS_PER_DAY * 400))
        elif pick < 0.5:
            # exact hour boundaries +-1 us
            base = rng.randint(lo // MICROS_PER_HOUR + 1, hi // MICROS_PER_HOUR - 1)
            values.append(base * MICROS_PER_HOUR + rng.choice((-1, 0, 1)))
        else:
            values.append(rng.randint(lo, hi))
    return values


def times(rng: random.Random, n: int) -> list[int]:
    """Microseconds from midnight, 0 .. 86_399_999_999."""
    values = [0, 1, MICROS_PER_DAY - 1, 12 * MICROS_PER_HOUR, 81_068_000_000]
    while len(values) < n:
        values.append(rng.randrange(MICROS_PER_DAY))
    return values


def floats(rng: random.Random, n: int, double: bool) -> list[float]:
    """Floats and doubles: zeros of both signs, infinities, NaN, subnormals, extremes,
    and random bit patterns (float values are exactly representable in 32 bits)."""
    fmt, bits = (">d", 64) if double else (">f", 32)
    edge_bits = [0, 1, 2 ** (bits - 1), 2 ** (bits - 1) + 1, 2**bits - 1]
    values = [struct.unpack(fmt, b.to_bytes(bits // 8, "big"))[0] for b in edge_bits]
    values += [0.0, -0.0, 1.0, -1.0, 0.1, -0.1, math.inf, -math.inf, 3.4028234663852886e38]
    values += [1.401298464324817e-45, 1.1754943508222875e-38]
    if double:
        values += [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 1e300, -1e-300]
    values = [struct.unpack(fmt, struct.pack(fmt, v))[0] for v in values]
    while len(values) < n:
        if rng.random() < 0.5:
            raw = rng.getrandbits(bits).to_bytes(bits // 8, "big")
            v = struct.unpack(fmt, raw)[0]
        else:
            v = struct.unpack(fmt, struct.pack(fmt, rng.uniform(-1e6, 1e6)))[0]
        values.append(v)
    return values
