"""Deletion vectors in Puffin files on S3 (moto's server on loopback) read through the Rust
FileIO exactly like local ones; a range past the object's end names the object."""

from __future__ import annotations

import json

import pytest
from frazil import _native
from frazil.errors import InvalidDataError
from s3_loopback import Moto


def test_deletion_vectors_on_s3(moto_server: Moto, bucket: str) -> None:
    io = _native.RawFileIO(moto_server.properties)
    location = f"s3://{bucket}/t/data/deletes.puffin"
    vectors = [
        (f"s3://{bucket}/t/data/a.parquet", [0, 9, 1 << 33]),
        (f"s3://{bucket}/t/data/b.parquet", list(range(5_000, 9_000))),
    ]
    entries = _native.write_deletion_vector_puffin(location, vectors, io=io)
    footer = json.loads(_native.read_puffin_footer(location, io=io))
    assert [b["properties"]["referenced-data-file"] for b in footer["blobs"]] == [
        path for path, _ in vectors
    ]
    for (path, positions), entry in zip(vectors, entries, strict=True):
        index = _native.PositionDeleteIndex(path)
        index.read_deletion_vector(
            location,
            entry["content_offset"],
            entry["content_size_in_bytes"],
            record_count=entry["record_count"],
            io=io,
        )
        assert index.positions().to_pylist() == positions
    with pytest.raises(InvalidDataError, match=r"deletes\.puffin") as caught:
        _native.PositionDeleteIndex("x").read_deletion_vector(
            location, entries[-1]["file_size_in_bytes"] - 4, 100, io=io
        )
    assert "cannot read" in str(caught.value)
