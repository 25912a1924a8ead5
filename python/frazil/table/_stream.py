"""Ordered streams read in parallel with bounded memory (issue 11: "everything streams").

A scan reads several files at once but hands their batches on in plan order. Each file in
flight gets a worker thread that queues its batches; the consumer drains the oldest file's
queue, then moves on. Memory is bounded two ways: the oldest file (the head, which the consumer
is draining) runs at most ``depth`` batches ahead; the files behind it read ahead only while
everything queued stays within ``budget`` bytes, so they keep the cores busy without growing
with file or table size. (A per-file bound alone would stall every file behind the head, and
the read would use one file's parallelism only.) When the consumer stops early (a limit, a
closed reader), the workers stop at their next batch.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Generic, TypeVar

from frazil.errors import ValidationError

__all__ = ["ordered_parallel"]

T = TypeVar("T")


class _Done:
    """Queued last: the source ended (with ``error`` if it failed)."""

    __slots__ = ("error",)

    def __init__(self, error: BaseException | None) -> None:
        self.error = error


class _Shared:
    """State every source and the consumer share, under one condition."""

    def __init__(self, budget: int | None) -> None:
        self.changed = threading.Condition()
        self.budget = budget
        self.queued_bytes = 0
        self.head = 0  # index of the source the consumer drains
        self.stopped = False


class _Source(Generic[T]):
    def __init__(
        self, index: int, shared: _Shared, depth: int, size_of: Callable[[T], int]
    ) -> None:
        self.index = index
        self.items: deque[tuple[T | _Done, int]] = deque()
        self._shared = shared
        self._depth = depth
        self._size_of = size_of

    def run(self, produce: Callable[[], Iterable[T]]) -> None:
        """The worker: queues what ``produce`` yields, then the end (or its error)."""
        try:
            for item in produce():
                if not self._put(item, self._size_of(item)):
                    return
        except BaseException as error:  # handed to the consumer, raised there
            self._put(_Done(error), 0)
        else:
            self._put(_Done(None), 0)

    def _may_put(self, size: int) -> bool:
        shared = self._shared
        if shared.head == self.index:
            return len(self.items) < self._depth
        return shared.budget is None or shared.queued_bytes + size <= shared.budget

    def _put(self, item: T | _Done, size: int) -> bool:
        shared = self._shared
        with shared.changed:
            while not shared.stopped and not self._may_put(size):
                shared.changed.wait()
            if shared.stopped:
                return False
            self.items.append((item, size))
            shared.queued_bytes += size
            shared.changed.notify_all()
            return True

    def drain(self) -> Iterator[T]:
        """The consumer: this source's items until its end, raising its error there."""
        shared = self._shared
        while True:
            with shared.changed:
                while not self.items:
                    shared.changed.wait()
                item, size = self.items.popleft()
                shared.queued_bytes -= size
                shared.changed.notify_all()
            if isinstance(item, _Done):
                if item.error is not None:
                    raise item.error
                return
            yield item


def ordered_parallel(
    sources: Iterable[Callable[[], Iterable[T]]],
    in_flight: int,
    depth: int,
    budget: int | None = None,
    size_of: Callable[[T], int] = lambda _: 1,
    thread_name_prefix: str = "frazil-read",
) -> Iterator[T]:
    """The items of every source in order, at most ``in_flight`` sources produced at once.
    The source being consumed runs at most ``depth`` items ahead; the others queue items
    while all queued items' ``size_of`` stays within ``budget`` (no bound when None). A
    source's error is raised when the consumer reaches it."""
    if in_flight < 1 or depth < 1:
        raise ValidationError(f"in_flight and depth must be >= 1, got {in_flight} and {depth}")
    remaining = iter(sources)
    shared = _Shared(budget)
    pool = ThreadPoolExecutor(max_workers=in_flight, thread_name_prefix=thread_name_prefix)
    pending: deque[_Source[T]] = deque()
    started = 0
    try:
        while True:
            while len(pending) < in_flight:
                produce = next(remaining, None)
                if produce is None:
                    break
                source = _Source(started, shared, depth, size_of)
                started += 1
                pool.submit(source.run, produce)
                pending.append(source)
            if not pending:
                return
            yield from pending[0].drain()
            pending.popleft()
            with shared.changed:
                shared.head += 1
                shared.changed.notify_all()
    finally:
        with shared.changed:
            shared.stopped = True
            shared.changed.notify_all()
        pool.shutdown(wait=False, cancel_futures=True)
