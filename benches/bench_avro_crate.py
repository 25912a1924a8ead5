"""Avro through the ``apache-avro`` crate against frazil's hand-written code.

For manifests of 1, 1,000 and 100,000 entries (benches/bench_manifest.py's
realistic entries: 10 columns of metrics, two partition fields), times inside
Rust, on the same Arrow entries, in interleaved rounds:

- write-hand: the hand-written container writer and record encoder;
- write-crate: the crate's ``Writer`` fed by frazil's serde view of the rows
  (header written by frazil, blocks, codec and sync by the crate);
- read-hand: frazil's block decoder into Arrow (``read_manifest``);
- read-crate: the crate's ``Reader`` into its generic ``Value`` records.

Also times ``frazil.manifest.write_manifest`` end to end from Python (what a
commit pays). Run with a release build:

    python benches/bench_avro_crate.py [--rounds 7] [--codec deflate] [--sizes 1,1000,100000]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_manifest import PROFILES, schema_and_spec
from frazil import _native
from frazil import manifest as m

SIZES = (1, 1_000, 100_000)
# Calls per timing: enough that one timing lasts milliseconds.
ITERATIONS = {1: 2_000, 1_000: 20, 100_000: 1}


def entries(n: int) -> list[dict[str, Any]]:
    import datetime as dt

    rng = random.Random(7)
    make = PROFILES["random"]
    batch = [make(rng, 0, i) for i in range(n)]
    for e in batch:
        part = e["data_file"]["partition"]
        part["ts_day"] = dt.date(1970, 1, 1) + dt.timedelta(days=part["ts_day"])
    return batch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--codec", default="deflate")
    parser.add_argument("--sizes", default=",".join(map(str, SIZES)))
    args = parser.parse_args()
    schema, spec = schema_and_spec()
    print(f"codec {args.codec}, {args.rounds} interleaved rounds, medians")
    print(f"{'entries':>8} {'what':<28} {'median':>12}")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(s) for s in args.sizes.split(",")):
            batch = entries(n)
            path = Path(tmp) / f"m{n}.avro"
            python_times = []
            for _ in range(args.rounds if n > 1 else args.rounds * 50):
                path.unlink(missing_ok=True)
                start = time.perf_counter()
                m.write_manifest(path, batch, schema=schema, spec=spec, codec=args.codec)
                python_times.append(time.perf_counter() - start)
            data = path.read_bytes()
            iterations = ITERATIONS.get(n, max(1, 20_000 // n))
            timings = _native._bench_avro_crate(data, args.codec, args.rounds, iterations)
            by_label: dict[str, list[float]] = {}
            for label, seconds in timings:
                by_label.setdefault(label, []).append(seconds)
            rows = [("write_manifest (Python, hand)", python_times)]
            rows += sorted(by_label.items())
            for label, values in rows:
                print(f"{n:>8} {label:<28} {statistics.median(values) * 1e6:>10.1f} us")
            hand, crate = (statistics.median(by_label[k]) for k in ("write-hand", "write-crate"))
            read_hand, read_crate = (
                statistics.median(by_label[k]) for k in ("read-hand", "read-crate")
            )
            print(
                f"{n:>8} crate/hand: write {crate / hand:.2f}x, read {read_crate / read_hand:.2f}x"
                f" ({len(data)} bytes)"
            )


if __name__ == "__main__":
    main()
