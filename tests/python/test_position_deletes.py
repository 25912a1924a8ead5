"""Position deletes in Rust (src/arrow/position_deletes.rs, src/puffin/): deletion vectors
round-trip through Puffin files, position-delete files give each data file its rows, and applying
the index to batches at any absolute offset equals the same deletes done in pyarrow. Corrupt
blobs and files are refused with a FrazilError naming the file."""

from __future__ import annotations

import json
import struct
import zlib
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from frazil import _native
from frazil.errors import FrazilError, FrazilTypeError, InvalidDataError, ValidationError
from hypothesis import given, settings
from hypothesis import strategies as st

DV_MAGIC = b"\xd1\xd3\x39\x64"
PUFFIN_MAGIC = b"PFA1"

# Positions around the 32-bit key boundary, runs, and the largest Java can hold.
positions_strategy = st.lists(
    st.one_of(
        st.integers(0, 100_000),
        st.integers(0, 4)
        .map(lambda hi: hi << 32)
        .flatmap(lambda base: st.integers(base, base + 70_000)),
        st.integers(0, 0x7FFF_FFFE_8000_0000),
    ),
    max_size=300,
).map(set)


def _blob(vector: bytes) -> bytes:
    body = DV_MAGIC + vector
    return struct.pack(">I", len(body)) + body + struct.pack(">I", zlib.crc32(body))


def _index(positions: set[int]) -> _native.PositionDeleteIndex:
    index = _native.PositionDeleteIndex("data.parquet")
    index.add_deletion_vector(_native.encode_deletion_vector(sorted(positions)))
    return index


@settings(max_examples=150, deadline=None)
@given(positions=positions_strategy)
def test_deletion_vector_round_trips(positions: set[int]) -> None:
    blob = _native.encode_deletion_vector(pa.array(sorted(positions), pa.int64()))
    # Spec layout: big-endian length of magic + vector, magic, vector, big-endian CRC-32.
    (length,) = struct.unpack(">I", blob[:4])
    assert length == len(blob) - 8
    assert blob[4:8] == DV_MAGIC
    assert struct.unpack(">I", blob[-4:])[0] == zlib.crc32(blob[4:-4])
    # The portable 64-bit Roaring format starts with the bitmap count (LE u64).
    keys = {p >> 32 for p in positions}
    assert struct.unpack("<Q", blob[8:16])[0] == len(keys)
    index = _native.PositionDeleteIndex("f")
    index.add_deletion_vector(blob, record_count=len(positions))
    assert index.positions().to_pylist() == sorted(positions)
    assert len(index) == len(positions)
    assert all(p in index for p in list(positions)[:20])
    assert index.to_deletion_vector() == blob


@settings(max_examples=40, deadline=None)
@given(vectors=st.lists(positions_strategy, min_size=1, max_size=4))
def test_puffin_file_of_deletion_vectors(
    tmp_path_factory: pytest.TempPathFactory, vectors: list[set[int]]
) -> None:
    location = str(tmp_path_factory.mktemp("dv") / "deletes.puffin")
    files = [f"s3://bucket/data/{i}.parquet" for i in range(len(vectors))]
    entries = _native.write_deletion_vector_puffin(
        location, list(zip(files, [sorted(v) for v in vectors], strict=True))
    )
    data = Path(location).read_bytes()
    assert data[:4] == PUFFIN_MAGIC and data[-4:] == PUFFIN_MAGIC
    footer = json.loads(_native.read_puffin_footer(location))
    assert [b["type"] for b in footer["blobs"]] == ["deletion-vector-v1"] * len(vectors)
    for blob, entry, path, positions in zip(footer["blobs"], entries, files, vectors, strict=True):
        assert blob["properties"] == {
            "referenced-data-file": path,
            "cardinality": str(len(positions)),
        }
        assert (blob["snapshot-id"], blob["sequence-number"]) == (-1, -1)
        assert "compression-codec" not in blob
        assert (entry["content_offset"], entry["content_size_in_bytes"]) == (
            blob["offset"],
            blob["length"],
        )
        assert entry["record_count"] == len(positions)
        assert entry["file_size_in_bytes"] == len(data)
        index = _native.PositionDeleteIndex(path)
        index.read_deletion_vector(
            location,
            entry["content_offset"],
            entry["content_size_in_bytes"],
            record_count=entry["record_count"],
            referenced_data_file=path,
        )
        assert index.positions().to_pylist() == sorted(positions)
        raw = _native.read_puffin_blob(location, blob["offset"], blob["length"])
        assert raw == _native.encode_deletion_vector(sorted(positions))


def _batch(length: int) -> pa.RecordBatch:
    return pa.record_batch(
        {
            "i": pa.array(range(length), pa.int64()),
            "s": pa.array([None if i % 7 == 0 else f"v{i}" for i in range(length)], pa.string()),
            "l": pa.array([[i] * (i % 3) for i in range(length)], pa.list_(pa.int32())),
        }
    )


@settings(max_examples=150, deadline=None)
@given(
    deleted=st.sets(st.integers(0, 3_000), max_size=600),
    runs=st.lists(st.tuples(st.integers(0, 3_000), st.integers(1, 500)), max_size=3),
    high=st.booleans(),
    start=st.integers(0, 3_000),
    length=st.integers(0, 2_000),
)
def test_apply_equals_pyarrow(
    deleted: set[int], runs: list[tuple[int, int]], high: bool, start: int, length: int
) -> None:
    base = (1 << 32) - 1_500 if high else 0  # crosses a bitmap key when high
    positions = {p + base for p in deleted} | {p + base for s, n in runs for p in range(s, s + n)}
    index = _index(positions)
    batch = _batch(length)
    absolute = pa.array(range(start + base, start + base + length), pa.int64())
    expected_deleted = pc.is_in(absolute, pa.array(sorted(positions), pa.int64()))
    expected = batch.filter(pc.invert(expected_deleted))
    kept = index.apply(batch, start + base)
    assert isinstance(kept, pa.RecordBatch)
    assert kept.schema == batch.schema
    assert kept.equals(expected)
    mask = index.deleted_mask(start + base, length)
    assert mask.type == pa.bool_() and mask.null_count == 0
    assert mask.equals(expected_deleted)


def test_apply_keeps_schema_metadata_and_accepts_empty() -> None:
    batch = _batch(5).replace_schema_metadata({b"k": b"v"})
    index = _index({1, 3})
    kept = index.apply(batch, 0)
    assert kept.schema.metadata == {b"k": b"v"}
    assert kept.column(0).to_pylist() == [0, 2, 4]
    assert index.apply(_batch(0), 0).num_rows == 0
    assert index.apply(batch, 1_000).equals(batch)


def _by_file(
    paths: Any, positions: Any, source: str = "pd.parquet"
) -> _native.PositionDeletesByFile:
    return _native.PositionDeletesByFile(paths, positions, source)


@settings(max_examples=100, deadline=None)
@given(
    rows=st.lists(
        st.tuples(st.sampled_from(["a", "b", "ab", "a "]), st.integers(0, 10_000)), max_size=400
    ),
    string_type=st.sampled_from([pa.string(), pa.large_string(), pa.string_view()]),
    dictionary=st.booleans(),
    chunk=st.integers(1, 50),
)
def test_a_position_delete_file_gives_each_data_file_its_rows(
    rows: list[tuple[str, int]], string_type: pa.DataType, dictionary: bool, chunk: int
) -> None:
    rows.sort()  # the spec sorts by file_path, then pos
    paths = pa.array([f for f, _ in rows], string_type)
    if dictionary:
        paths = pc.dictionary_encode(paths)
    positions = pa.array([p for _, p in rows], pa.int64())
    by_file = _by_file(paths, positions)
    assert len(by_file) == len({f for f, _ in rows})
    for name in ("a", "b", "ab", "a ", "c"):
        expected = sorted({p for f, p in rows if f == name})
        assert (name in by_file) == bool(expected)
        assert by_file.count(name) == len(expected)
        index = _native.PositionDeleteIndex(name)
        assert index.add_position_file(by_file) == len(expected)
        assert index.positions().to_pylist() == expected
    # Chunked differently on each side (no chunks at all when empty): same answer.
    chunked_paths = pa.chunked_array(
        [paths[i : i + chunk] for i in range(0, len(paths), chunk)], paths.type
    )
    again = _by_file(chunked_paths, pa.chunked_array([positions], pa.int64()))
    for name in ("a", "b"):
        first, second = _native.PositionDeleteIndex(name), _native.PositionDeleteIndex(name)
        first.add_position_file(by_file)
        second.add_position_file(again)
        assert second.positions().equals(first.positions())


def test_deletion_vectors_and_position_rows_union() -> None:
    index = _native.PositionDeleteIndex("f.parquet")
    index.add_deletion_vector(_native.encode_deletion_vector([1, 5, (1 << 33) + 2]))
    by_file = _by_file(
        pa.array(["f.parquet", "g.parquet", "f.parquet"]), pa.array([7, 8, 5], pa.int64())
    )
    assert index.add_position_file(by_file) == 2
    assert index.positions().to_pylist() == [1, 5, 7, (1 << 33) + 2]
    assert -1 not in index
    assert "PositionDeleteIndex" in repr(index)


def test_bad_position_rows_are_refused_naming_the_file() -> None:
    with pytest.raises(InvalidDataError, match=r"pd\.parquet.*negative position -3"):
        _by_file(pa.array(["a", "a"]), pa.array([1, -3], pa.int64()))
    # A bad row refuses the whole delete file, whichever data file it names: it is corrupt.
    with pytest.raises(InvalidDataError, match=r"pd\.parquet.*negative position -3 in row 1"):
        _by_file(pa.array(["a", "b"]), pa.array([1, -3], pa.int64()))
    with pytest.raises(InvalidDataError, match=r"pd\.parquet.*pos is null"):
        _by_file(pa.array(["a"]), pa.array([None], pa.int64()))
    with pytest.raises(InvalidDataError, match=r"pd\.parquet.*file_path is null"):
        _by_file(pa.array(["a", None]), pa.array([1, 2], pa.int64()))
    with pytest.raises(InvalidDataError, match=r"2 file paths but 1 positions"):
        _by_file(pa.array(["a", "b"]), pa.array([1], pa.int64()))
    with pytest.raises(FrazilError, match="pos must be a long"):
        _by_file(pa.array(["a"]), pa.array([1], pa.int32()))
    with pytest.raises(FrazilError, match="file_path must be a string"):
        _by_file(pa.array([1]), pa.array([1], pa.int64()))
    with pytest.raises(FrazilError, match="negative position"):
        _native.encode_deletion_vector([-1])
    with pytest.raises(FrazilTypeError, match="sequence of ints, not str"):
        _native.encode_deletion_vector("12")
    with pytest.raises(FrazilTypeError, match="positions must be int64, not Int32"):
        _native.encode_deletion_vector(pa.array([1], pa.int32()))
    with pytest.raises(FrazilError, match="must not be null"):
        _native.encode_deletion_vector(pa.array([1, None], pa.int64()))


def _corruptions(blob: bytes) -> list[tuple[bytes, str]]:
    n = len(blob)
    return [
        (blob[:3], "at least 12 bytes"),
        (struct.pack(">I", n) + blob[4:], "length field says"),
        (blob[:-1], "length field says"),
        (blob[:4] + b"\xd1\xd3\x39\x65" + blob[8:], "magic"),
        (blob[:-1] + bytes([blob[-1] ^ 1]), "CRC-32"),
        (blob[:10] + bytes([blob[10] ^ 0x10]) + blob[11:], "CRC-32"),
        (_blob(b"\x01" + b"\x00" * 7), "cannot fit"),
        (_blob(struct.pack("<QI", 1, 0) + b"\x3a\x30\x00\x00"), "corrupt Roaring bitmap"),
        (
            _blob(struct.pack("<QI", 1, 0x7FFF_FFFF) + b"\x3a\x30\x00\x00\x00\x00\x00\x00"),
            "too large",
        ),
    ]


def test_corrupt_deletion_vectors_are_refused() -> None:
    blob = _native.encode_deletion_vector([3, 4, 1 << 40])
    for bad, expected in _corruptions(blob):
        index = _native.PositionDeleteIndex("f")
        with pytest.raises(InvalidDataError, match=expected) as caught:
            index.add_deletion_vector(bad, source="dv of s3://b/x.puffin")
        assert "dv of s3://b/x.puffin" in str(caught.value)
        assert len(index) == 0
    with pytest.raises(InvalidDataError, match=r"record_count is 2"):
        _native.PositionDeleteIndex("f").add_deletion_vector(blob, record_count=2)
    with pytest.raises(ValidationError, match=r"applies to other\.parquet, not to f"):
        _native.PositionDeleteIndex("f").add_deletion_vector(
            blob, referenced_data_file="other.parquet"
        )


def test_corrupt_puffin_files_are_refused_naming_the_file(tmp_path: Path) -> None:
    location = str(tmp_path / "dv.puffin")
    (entry,) = _native.write_deletion_vector_puffin(location, [("d.parquet", [1, 2, 3])])
    good = Path(location).read_bytes()
    offset, size = entry["content_offset"], entry["content_size_in_bytes"]

    def read(data: bytes, offset: int = offset, size: int = size) -> None:
        Path(location).write_bytes(data)
        _native.PositionDeleteIndex("d.parquet").read_deletion_vector(
            location, offset, size, record_count=3
        )

    read(good)
    for data, at, length, expected in [
        (good, len(good) - 4, size, "cannot read"),
        (good, offset, size + 1, "length field says"),
        (good, offset + 1, size, "length field says"),
        (good, -1, size, "negative"),
        (good[: offset + size - 2], offset, size, "cannot read"),
        (good[: offset + 6] + b"\x00" + good[offset + 7 :], offset, size, "CRC-32|magic"),
    ]:
        with pytest.raises(InvalidDataError, match=expected) as caught:
            read(data, at, length)
        assert location in str(caught.value)
    # The footer: truncated, or with a broken magic, or an unknown codec.
    for data, expected in [
        (good[:-3], "at the end of the file"),
        (b"XXXX" + good[4:], "at the start of the file"),
        (good[:10], "too short"),
        (good[:-8] + b"\x04\x00\x00\x00" + good[-4:], "unknown footer flags"),
    ]:
        Path(location).write_bytes(data)
        with pytest.raises(InvalidDataError, match=expected) as caught:
            _native.read_puffin_footer(location)
        assert location in str(caught.value)
    Path(location).write_bytes(good)
    with pytest.raises(InvalidDataError, match="snappy"):
        _native.read_puffin_blob(location, offset, size, compression_codec="snappy")
    missing = str(tmp_path / "missing.puffin")
    with pytest.raises(FrazilError, match=r"missing\.puffin"):
        _native.PositionDeleteIndex("d.parquet").read_deletion_vector(missing, 4, size)


def test_write_refuses_two_vectors_for_one_file(tmp_path: Path) -> None:
    with pytest.raises(ValidationError, match="at most one"):
        _native.write_deletion_vector_puffin(str(tmp_path / "x.puffin"), [("a", [1]), ("a", [2])])
    assert not (tmp_path / "x.puffin").exists()
