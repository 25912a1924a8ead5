"""frazil in Spark 4.3's forked Python workers (local mode): transforms through mapInArrow
equal the same transforms run in this process (issue 23, "the process model")."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from frazil import transforms
from pyspark import cloudpickle

ROWS = 2_000_000
# Spark's Python workers cannot import this test module: ship its functions by value.
cloudpickle.register_pickle_by_value(sys.modules[__name__])


def _bucketed(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    from frazil import transforms

    for batch in batches:
        ids, names = batch.column("id"), batch.column("name")
        yield pa.RecordBatch.from_pydict(
            {
                "id": ids,
                "id_bucket": transforms.bucket(ids, 16),
                "name_bucket": transforms.bucket(names, 1024),
                "name_truncate": transforms.truncate(names, 3),
                "pid": pa.array([os.getpid()] * len(ids), pa.int64()),
            }
        )


def test_transforms_in_forked_workers(spark: Any) -> None:
    result = (
        spark.range(0, ROWS, numPartitions=4)
        .selectExpr("id", "concat('é', cast(id * 7919 as string), 'ß') AS name")
        .mapInArrow(
            _bucketed,
            "id long, id_bucket int, name_bucket int, name_truncate string, pid long",
        )
        .toArrow()
        .sort_by("id")
    )
    ids = pa.array(range(ROWS), pa.int64())
    assert result.column("id").combine_chunks().equals(ids)
    names = pc.binary_join_element_wise("é", pc.cast(pc.multiply(ids, 7919), pa.string()), "ß", "")
    assert result.column("id_bucket").combine_chunks().equals(transforms.bucket(ids, 16))
    assert result.column("name_bucket").combine_chunks().equals(transforms.bucket(names, 1024))
    assert result.column("name_truncate").combine_chunks().equals(transforms.truncate(names, 3))
    # Python workers of their own (forked by pyspark's daemon), not this process.
    worker_pids = set(result.column("pid").to_pylist())
    assert worker_pids and os.getpid() not in worker_pids
