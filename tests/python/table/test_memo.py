"""The shared cache of delete files and key sets (frazil.table._memo): concurrent callers of
one key compute it once, results are bounded in number, errors are not cached."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from frazil.table._memo import shared_lru
from hypothesis import given
from hypothesis import strategies as st


def test_concurrent_callers_of_one_key_compute_it_once() -> None:
    calls: list[int] = []

    @shared_lru(4)
    def slow(key: int) -> int:
        calls.append(key)
        time.sleep(0.05)
        return key * 10

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(slow, [1] * 8 + [2] * 8))
    assert results == [10] * 8 + [20] * 8
    assert sorted(calls) == [1, 2]


def test_different_keys_run_at_the_same_time() -> None:
    both_running = threading.Barrier(2, timeout=5)

    @shared_lru(4)
    def meet(key: int) -> int:
        both_running.wait()  # would time out if one key waited for the other
        return key

    with ThreadPoolExecutor(2) as pool:
        assert sorted(pool.map(meet, [1, 2])) == [1, 2]


@given(keys=st.lists(st.integers(0, 9), max_size=40), maxsize=st.integers(1, 5))
def test_least_recently_used_results_are_dropped(keys: list[int], maxsize: int) -> None:
    calls: list[int] = []

    @shared_lru(maxsize)
    def square(key: int) -> int:
        calls.append(key)
        return key * key

    recent: list[int] = []  # a model of the cache: most recently used last
    for key in keys:
        before = len(calls)
        assert square(key) == key * key
        assert len(calls) - before == (0 if key in recent else 1)
        recent = [k for k in recent if k != key] + [key]
        recent = recent[-maxsize:]


def test_errors_are_not_cached() -> None:
    attempts: list[int] = []

    @shared_lru(4)
    def flaky(key: int) -> int:
        attempts.append(key)
        if len(attempts) == 1:
            raise OSError("transient")
        return key

    with pytest.raises(OSError, match="transient"):
        flaky(3)
    assert flaky(3) == 3
    assert flaky(3) == 3
    assert attempts == [3, 3]
