"""Partition values as Java's ``Transform.toHumanString`` writes them: the text of the
``lower_bound`` / ``upper_bound`` columns of the manifests metadata tables (Java's
``ManifestsTable.partitionSummariesToRows``)."""

from __future__ import annotations

import base64
import datetime as dt
import decimal
import math
import struct
from typing import Any

from frazil import values
from frazil.errors import InvalidValueError
from frazil.types import IcebergType

__all__ = ["human_string"]

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_DATE = dt.date(1970, 1, 1)


def _fraction(nanos: int) -> str:
    """Java's ``ISO_LOCAL_TIME`` fraction: as few digits as the value needs, none at zero."""
    return "" if nanos == 0 else "." + f"{nanos:09d}".rstrip("0")


def _iso_local(micros: int) -> str:
    """Java's ``DateTimeFormatter.ISO_LOCAL_DATE_TIME`` of a microsecond timestamp."""
    seconds, micro = divmod(micros, 1_000_000)
    days, second_of_day = divmod(seconds, 86_400)
    date = _EPOCH_DATE + dt.timedelta(days=days)
    hours, rest = divmod(second_of_day, 3600)
    return (
        f"{_year(date.year)}-{date.month:02d}-{date.day:02d}T"
        f"{hours:02d}:{rest // 60:02d}:{rest % 60:02d}{_fraction(micro * 1000)}"
    )


def _year(year: int) -> str:
    # ISO_LOCAL_DATE: four digits, a sign above 9999.
    return f"+{year}" if year > 9999 else f"{year:04d}"


def _local_time(micros: int) -> str:
    """Java's ``LocalTime.toString``: seconds only when set, the fraction in groups of three."""
    seconds, micro = divmod(micros, 1_000_000)
    text = f"{seconds // 3600:02d}:{seconds // 60 % 60:02d}"
    if seconds % 60 or micro:
        text += f":{seconds % 60:02d}"
        if micro:
            nanos = micro * 1000
            text += f".{nanos // 1_000_000:03d}" if nanos % 1_000_000 == 0 else f".{micro:06d}"
    return text


def _java_double(value: float, single: bool = False) -> str:
    """Java's ``Double.toString`` / ``Float.toString``: the shortest digits that read back,
    plain from 1e-3 up to 1e7, else ``d.dddE<n>``."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    shortest = repr(value)
    if single:
        for precision in range(1, 10):
            candidate = f"{value:.{precision}g}"
            if struct.unpack("<f", struct.pack("<f", float(candidate)))[0] == value:
                shortest = candidate
                break
    sign_bit, digit_tuple, exp = decimal.Decimal(shortest).normalize().as_tuple()
    assert isinstance(exp, int)
    digits = "".join(map(str, digit_tuple))
    exponent = len(digits) - 1 + exp  # of the leading digit
    sign = "-" if sign_bit else ""
    if 1e-3 <= abs(value) < 1e7:
        if exponent >= 0:
            whole = digits[: exponent + 1].ljust(exponent + 1, "0")
            fraction = digits[exponent + 1 :] or "0"
        else:
            whole, fraction = "0", "0" * (-exponent - 1) + digits
        return f"{sign}{whole}.{fraction}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{exponent}"


def _human_day(days: int) -> str:
    date = _EPOCH_DATE + dt.timedelta(days=days)
    return f"{date.year:04d}-{date.month:02d}-{date.day:02d}"


def human_string(transform: str, result_type: IcebergType, data: bytes | None) -> str | None:
    """The human string of a partition bound (Appendix D binary of ``result_type``), or None
    when there is no bound."""
    if data is None:
        return None
    try:
        return _human(transform, str(result_type), data)
    except (OverflowError, ValueError):
        raise InvalidValueError(
            f"partition bound {data.hex()} ({transform} of {result_type}) is outside the "
            "dates Python can format"
        ) from None


def _human(transform: str, kind: str, data: bytes) -> str:
    if transform == "void":
        return "null"
    if transform in ("year", "month", "day", "hour"):
        ordinal = int.from_bytes(data[:4], "little", signed=True)
        if transform == "year":
            return f"{1970 + ordinal:04d}"
        if transform == "month":
            return f"{1970 + ordinal // 12:04d}-{1 + ordinal % 12:02d}"
        if transform == "day":
            return _human_day(ordinal)
        moment = _EPOCH + dt.timedelta(hours=ordinal)
        return f"{moment.year:04d}-{moment.month:02d}-{moment.day:02d}-{moment.hour:02d}"
    if kind == "date":
        return _human_day(int.from_bytes(data, "little", signed=True))
    if kind == "time":
        return _local_time(int.from_bytes(data, "little", signed=True))
    if kind in ("timestamp", "timestamptz"):
        text = _iso_local(int.from_bytes(data, "little", signed=True))
        return text + "+00:00" if kind == "timestamptz" else text
    if kind in ("timestamp_ns", "timestamptz_ns"):
        nanos = int.from_bytes(data, "little", signed=True)
        micros, extra = divmod(nanos, 1000)
        text = _iso_local(micros)
        if extra:
            frac = (micros % 1_000_000) * 1000 + extra
            text = text.split(".")[0] + _fraction(frac)
        return text + "+00:00" if kind == "timestamptz_ns" else text
    if kind == "binary" or kind.startswith("fixed"):
        return base64.b64encode(bytes(data)).decode("ascii")
    # Python's datetime cannot hold every Iceberg date or timestamp: those are formatted above
    # from their integers; the rest decode to values whose str() is Java's toString().
    value: Any = values.from_bytes(kind, data)
    if kind == "boolean":
        return "true" if value else "false"
    if kind in ("float", "double"):
        return _java_double(float(value), single=kind == "float")
    return str(value)
