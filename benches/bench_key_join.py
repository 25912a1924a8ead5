"""Key-join benchmark: frazil's ``KeyIndex`` (the hash join of upserts) against pyarrow's
``Table.join`` on the same data, one thread each.

A source of 1M unique keys (the rows to upsert) is indexed; a target of 10M rows, half of whose
keys are in the source, is probed against it in batches of 2^20 rows. Cases: one int64 key
(machine words), one 16-character string key (the values' bytes) and both together (arrow-row
encoded). pyarrow's inner join (Acero, ``use_threads=False``, ``pa.set_cpu_count(1)``) builds its
hash table on the source and yields the same pairs (a row-number column on each side); its time
is build and probe together. Every repetition checks that both found the same number of pairs.

    .venv/bin/python benches/bench_key_join.py            # 1M x 10M, 3 repetitions
    .venv/bin/python benches/bench_key_join.py --quick    # 10x smaller

Build frazil optimised first (``maturin develop --release``, or ``--profile ci`` for a faster
build without LTO); prints a Markdown table.
"""

from __future__ import annotations

import argparse
import gc
import os
import time
from collections.abc import Callable

import numpy as np
import pyarrow as pa
from frazil._native import KeyIndex


def _keys(ids: np.ndarray, case: str) -> dict[str, pa.Array]:
    longs = pa.array(ids, pa.int64())
    if case == "int64":
        return {"id": longs}
    # 16 hex digits a key, built vectorised (a Python loop over 10M values takes minutes).
    digits = np.frombuffer(b"0123456789abcdef", dtype=np.uint8)
    nibbles = (ids.astype(np.uint64)[:, None] >> np.arange(60, -4, -4, dtype=np.uint64)) & 15
    data = digits[nibbles.astype(np.intp)].tobytes()
    offsets = pa.array(np.arange(0, 16 * (len(ids) + 1), 16, dtype=np.int32))
    texts = pa.StringArray.from_buffers(len(ids), offsets.buffers()[1], pa.py_buffer(data))
    if case == "string16":
        return {"s": texts}
    return {"id": longs, "s": texts}


def _best(run: Callable[[], int], reps: int, setup: Callable[[], object] = lambda: None) -> float:
    """The shortest of `reps` timed runs of `run` (each after an untimed `setup`)."""
    times = []
    for _ in range(reps):
        setup()
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="10x smaller data")
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    scale = 10 if args.quick else 1
    n, m = 1_000_000 // scale, 10_000_000 // scale
    pa.set_cpu_count(1)
    rng = np.random.default_rng(42)
    # Distinct keys in no order; the target draws from twice as many, so about half match.
    universe = rng.permutation(2 * n).astype(np.int64) * 2_654_435_761 % (2**62)
    source_ids = universe[:n]
    target_ids = universe[rng.integers(0, 2 * n, size=m)]

    print(f"source {n:,} keys, target {m:,} rows (about half match), one thread;", end=" ")
    print(f"min of {args.reps}; load average {os.getloadavg()[0]:.2f}\n")
    print("| key | frazil build | frazil probe | frazil total | pyarrow join | pyarrow / frazil |")
    print("|---|---|---|---|---|---|")
    for case in ["int64", "string16", "int64+string16"]:
        source = pa.table(_keys(source_ids, case))
        target = pa.Table.from_batches(
            pa.table(_keys(target_ids, case)).to_batches(max_chunksize=1 << 20)
        )
        indexes: list[KeyIndex] = []

        def build(source: pa.Table = source, indexes: list[KeyIndex] = indexes) -> int:
            indexes[:] = [KeyIndex(source, source="bench")]
            return len(indexes[0])

        def probe(target: pa.Table = target, indexes: list[KeyIndex] = indexes) -> int:
            return len(indexes[0].probe(target)[0])

        build_time = _best(build, args.reps)
        # Each probe on a fresh index, so that every run records its matches anew.
        probe_time = _best(probe, args.reps, setup=build)
        matches = probe()

        left = target.append_column("__target_row", pa.array(np.arange(m, dtype=np.int64)))
        right = source.append_column("__source_row", pa.array(np.arange(n, dtype=np.int64)))
        names = source.column_names

        def join(left: pa.Table = left, right: pa.Table = right, names: list[str] = names) -> int:
            joined = left.join(right, keys=names, join_type="inner", use_threads=False)
            return int(joined.num_rows)

        join_time = _best(join, args.reps)
        joined = join()
        assert matches == joined, (case, matches, joined)
        total = build_time + probe_time
        print(
            f"| {case} | {build_time * 1e3:.0f} ms | {probe_time:.2f} s | {total:.2f} s "
            f"| {join_time:.2f} s | {join_time / total:.1f}x |"
        )


if __name__ == "__main__":
    main()
