"""The warnings frazil issues (Python's :mod:`warnings`; errors are in :mod:`frazil.errors`).

Every warning is a :class:`FrazilWarning`, so that ``warnings.filterwarnings("error",
category=FrazilWarning)`` turns all of them into errors, and one class can be silenced alone.
A warning is attributed to the first caller outside frazil, so that Python's default filter
shows it once per line of the program that caused it.
"""

from __future__ import annotations

import os
import sys
import warnings as _warnings

__all__ = ["FrazilWarning", "warn"]


class FrazilWarning(UserWarning):
    """Base class of every warning frazil issues."""


_PACKAGE = os.path.dirname(os.path.abspath(__file__)) + os.sep


def warn(warning: FrazilWarning) -> None:
    """Issue ``warning``, attributed to the innermost caller outside the frazil package."""
    level = 2  # 1 is this function, 2 its caller
    frame = sys._getframe(1)
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(_PACKAGE):
        frame = frame.f_back  # type: ignore[assignment]
        level += 1
    _warnings.warn(warning, stacklevel=level)
