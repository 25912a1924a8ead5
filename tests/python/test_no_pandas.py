"""Crossing Arrow data to Python must not import pandas.

pyarrow's ``pa.table(obj)`` (and ``pa.array`` on a list) first checks whether its
argument is a pandas object, which imports pandas: about a second, paid by every
fresh process, so by every PySpark worker. frazil hands Arrow data over through
pyarrow's C data interface importers instead (src/py/arrow.rs). Each check runs in
a fresh interpreter, where nothing has imported pandas yet.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from frazil import manifest as m

SCHEMA = {
    "type": "struct",
    "schema-id": 0,
    "fields": [
        {"id": 1, "name": "id", "required": True, "type": "long"},
        {"id": 2, "name": "region", "required": False, "type": "string"},
    ],
}
SPEC = {
    "spec-id": 0,
    "fields": [{"name": "region", "transform": "identity", "source-id": 2, "field-id": 1000}],
}


def _manifests(tmp_path: Path) -> Path:
    entries = [
        {
            "status": 1,
            "snapshot_id": 1,
            "data_file": {
                "content": 0,
                "file_path": f"f{i}.parquet",
                "file_format": "PARQUET",
                "partition": {"region": "eu"},
                "record_count": 10,
                "file_size_in_bytes": 100,
            },
        }
        for i in range(3)
    ]
    row = m.write_manifest(tmp_path / "m.avro", entries, schema=SCHEMA, spec=SPEC, snapshot_id=1)
    row["added_snapshot_id"] = 1
    listing = tmp_path / "list.avro"
    m.write_manifest_list(listing, [row], snapshot_id=1, sequence_number=1)
    return listing


def _run_fresh(code: str) -> str:
    """Runs ``code`` in a new interpreter; it ends by printing the pandas verdict."""
    script = textwrap.dedent(code) + "\nprint('pandas' in sys.modules)\n"
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_import_does_not_import_pandas() -> None:
    assert _run_fresh("import sys\nimport frazil\n") == "False"


def test_manifest_reads_do_not_import_pandas(tmp_path: Path) -> None:
    listing = _manifests(tmp_path)
    verdict = _run_fresh(
        f"""
        import sys
        from frazil import manifest as m
        listing = m.read_manifest_list({str(listing)!r})
        assert listing.num_rows == 1
        (table,) = m.read_manifests(listing)
        assert table.num_rows == 3
        path = listing.column("manifest_path")[0].as_py()
        one = m.read_manifest(path, columns=["data_file.file_path"])
        assert one.column("data_file").to_pylist()[0] == {{"file_path": "f0.parquet"}}
        assert b"schema" in one.schema.metadata
        assert m.manifest_file_schema().names[0] == "manifest_path"
        m.manifest_entry_schema({SPEC!r}, {SCHEMA!r})
        """
    )
    assert verdict == "False"


def test_transforms_do_not_import_pandas() -> None:
    verdict = _run_fresh(
        """
        import sys
        import pyarrow as pa
        from frazil import transforms
        # pa.array([...]) would itself import pandas: build the input from buffers.
        data = pa.py_buffer(b"".join(v.to_bytes(8, "little", signed=True) for v in (1, -2, 3)))
        array = pa.Array.from_buffers(pa.int64(), 3, [None, data])
        assert transforms.apply("bucket[16]", array).to_pylist() == [
            transforms.apply("bucket[16]", array.slice(i, 1)).to_pylist()[0] for i in range(3)
        ]
        chunked = pa.chunked_array([array, array], type=pa.int64())
        assert transforms.apply("truncate[10]", chunked).to_pylist() == [0, -10, 0] * 2
        empty = pa.chunked_array([], type=pa.int64())
        assert transforms.apply("bucket[4]", empty).type == pa.int32()
        """
    )
    assert verdict == "False"
