"""A bounded cache for work that concurrent readers share (delete files, key sets).

Files in flight are read by several threads; the tasks they read often share the same delete
files (a partition's deletes apply to each of its data files), so the first tasks of a scan
ask for the same delete file at the same moment. ``functools.lru_cache`` would read it once
per thread; here the later callers wait for the first one's result. An error is not cached:
the next caller tries again.
"""

from __future__ import annotations

import functools
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import ParamSpec, TypeVar

from frazil.errors import FrazilTypeError

__all__ = ["shared_lru"]

P = ParamSpec("P")
R = TypeVar("R")


def shared_lru(maxsize: int) -> Callable[[Callable[P, R]], Callable[P, R]]:
    """Memoizes a function of hashable positional arguments, keeping the ``maxsize`` most
    recently used results, computing each at most once at a time."""

    def decorate(function: Callable[P, R]) -> Callable[P, R]:
        guard = threading.Lock()
        results: OrderedDict[Hashable, R] = OrderedDict()
        running: dict[Hashable, threading.Lock] = {}

        def lookup(key: Hashable) -> tuple[bool, R | None]:
            with guard:
                if key in results:
                    results.move_to_end(key)
                    return True, results[key]
            return False, None

        @functools.wraps(function)
        def cached(*args: P.args, **kwargs: P.kwargs) -> R:
            if kwargs:
                raise FrazilTypeError(f"{function.__name__} takes positional arguments only")
            key: Hashable = args
            found, value = lookup(key)
            if found:
                return value  # type: ignore[return-value]
            with guard:
                key_lock = running.setdefault(key, threading.Lock())
            with key_lock:
                found, value = lookup(key)
                if found:
                    return value  # type: ignore[return-value]
                try:
                    result = function(*args, **kwargs)
                    with guard:
                        results[key] = result
                        while len(results) > maxsize:
                            results.popitem(last=False)
                finally:
                    with guard:
                        running.pop(key, None)
                return result

        return cached

    return decorate
