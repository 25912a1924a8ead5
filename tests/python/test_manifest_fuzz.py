"""The manifest decoders on random and mutated bytes: a frazil error or a
result, never a crash, a hang or another exception (bounded time)."""

from __future__ import annotations

import tempfile
from pathlib import Path

from frazil import manifest as m
from frazil.errors import FrazilError
from hypothesis import given, settings
from hypothesis import strategies as st

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "s", "required": False, "type": "string"},
    ],
}
SPEC = {
    "spec-id": 0,
    "fields": [{"name": "s", "transform": "identity", "source-id": 2, "field-id": 1000}],
}


def _seed() -> tuple[bytes, bytes]:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "m.avro"
        entries = [
            {
                "status": 1,
                "snapshot_id": i,
                "data_file": {
                    "file_path": f"f{i}",
                    "file_format": "PARQUET",
                    "partition": {"s": "x" if i % 2 else None},
                    "record_count": i,
                    "file_size_in_bytes": 10,
                    "column_sizes": [(1, 4)],
                    "lower_bounds": [(1, (i).to_bytes(8, "little"))],
                    "split_offsets": [4],
                },
            }
            for i in range(8)
        ]
        row = m.write_manifest(path, entries, schema=SCHEMA, spec=SPEC, codec="null")
        m.write_manifest_list(
            Path(tmp) / "l.avro", [row], snapshot_id=1, sequence_number=1, codec="null"
        )
        return path.read_bytes(), (Path(tmp) / "l.avro").read_bytes()


MANIFEST, LISTING = _seed()


def _decode(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "fuzz.avro"
        path.write_bytes(data)
        for read in (m.read_manifest, m.read_manifest_list):
            try:
                read(path)
            except FrazilError as e:
                assert "fuzz.avro" in str(e) or "column" in str(e)


@settings(max_examples=150, deadline=None)
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    _decode(data)
    _decode(b"Obj\x01" + data)


@settings(max_examples=300, deadline=None)
@given(
    source=st.sampled_from([MANIFEST, LISTING]),
    edits=st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), min_size=1, max_size=6),
    cut=st.none() | st.integers(0, 10**6),
)
def test_mutated_files(source: bytes, edits: list[tuple[int, int]], cut: int | None) -> None:
    data = bytearray(source)
    for pos, value in edits:
        data[pos % len(data)] = value
    if cut is not None:
        data = data[: cut % (len(data) + 1)]
    _decode(bytes(data))
