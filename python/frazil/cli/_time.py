"""Points in time on the command line: an ISO 8601 timestamp or a duration before now.

``2024-06-01``, ``2024-06-01T12:00:00``, ``2024-06-01T12:00:00+02:00`` or ``...Z`` (naive
means UTC), or ``7d``, ``12h``, ``30m``, ``45s``, ``2w`` (that long before now). A bare number
is refused: seconds, milliseconds or days ago would all be plausible readings.
"""

from __future__ import annotations

import re
import time

from frazil.errors import ValidationError

# datetime is imported where used: the parser imports this module for --help.

__all__ = ["DURATION_HELP", "describe_ms", "duration_text", "parse_when"]

DURATION_HELP = (
    "an ISO timestamp (2024-06-01T00:00:00Z; naive is UTC) or a duration ago (7d, 12h, 30m)"
)

_UNITS_MS = {"s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000, "w": 604_800_000}
_DURATION = re.compile(r"^\s*(\d+)\s*([smhdw])\s*$", re.IGNORECASE)


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def parse_when(text: str, option: str, now: int | None = None) -> int:
    """Milliseconds from the epoch of ``text`` for the option ``option`` (named in errors)."""
    stripped = text.strip()
    if re.fullmatch(r"[+-]?\d+(\.\d+)?", stripped):
        raise ValidationError(
            f"{option} {text}: a bare number is ambiguous; give a duration such as 7d, 12h or "
            "30m, or an ISO timestamp such as 2024-06-01T00:00:00Z"
        )
    match = _DURATION.match(stripped)
    if match is not None:
        amount, unit = int(match.group(1)), match.group(2).lower()
        return (now_ms() if now is None else now) - amount * _UNITS_MS[unit]
    import datetime as dt

    iso = stripped[:-1] + "+00:00" if stripped[-1:] in ("Z", "z") else stripped  # Python 3.10
    try:
        when = dt.datetime.fromisoformat(iso)
    except ValueError:
        raise ValidationError(
            f"{option} {text!r} is neither a duration (7d, 12h, 30m, 45s, 2w) nor an ISO "
            "timestamp (2024-06-01T00:00:00Z)"
        ) from None
    if when.tzinfo is None:
        when = when.replace(tzinfo=dt.timezone.utc)
    return int(when.timestamp() * 1000)


def describe_ms(ms: int) -> str:
    """A timestamp in milliseconds as readable UTC text."""
    import datetime as dt

    when = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(milliseconds=ms)
    return when.strftime("%Y-%m-%d %H:%M:%S UTC")


def duration_text(ms: int) -> str:
    """``432000000`` -> ``5 days``; the largest unit that divides it, else hours with a
    fraction."""
    for unit, size in (("week", 604_800_000), ("day", 86_400_000), ("hour", 3_600_000)):
        if ms >= size and ms % size == 0:
            count = ms // size
            return f"{count} {unit}{'' if count == 1 else 's'}"
    if ms % 60_000 == 0:
        count = ms // 60_000
        return f"{count} minute{'' if count == 1 else 's'}"
    return f"{ms / 1000:g} seconds"
