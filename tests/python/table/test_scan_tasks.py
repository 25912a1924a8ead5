"""``DataScan.plan_tasks`` and ``plan_arrow`` (issue 10): files split and packed as Java 1.10's
table scan does, options checked, and the plan as one pyarrow Table.

Splitting (Java's ``BaseContentScanTask.split``): a file of a splittable format (Parquet, Avro,
ORC) whose split offsets are well defined (non-empty, last offset below the file size) and
strictly ascending gives one task per offset, from that offset to the next (the last to the end
of the file); any other file of those formats fixed pieces of the target size from byte 0.

Packing (Java's ``TableScanUtil.planTasks`` with ``BinPacking.PackingIterable``, largest bin
first): each piece weighs ``max(length + delete bytes, (1 + delete files) * open-file cost)``,
where a deletion vector counts its blob's size and other delete files their file size. A piece
goes to the first open bin it fits in (bin weight + weight <= target); otherwise to a new bin,
and when more than ``lookback`` bins are open the heaviest (the first of equals) is emitted.
At the end the open bins are emitted in order. :func:`java_split` and :func:`java_pack` below
model exactly that, written from the Java source, and are compared with frazil on tables of
hypothesis-generated files.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from frazil import _native
from frazil.errors import FrazilError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scan_helpers import UNPARTITIONED, TableWriter, data_file, entry, paths

MB = 1024 * 1024
T0 = 1_700_000_000_000

# --- the Java model ------------------------------------------------------------------------


def _well_defined(offsets: Sequence[int] | None, size: int) -> bool:
    """BaseFile.hasWellDefinedOffsets plus ArrayUtil.isStrictlyAscending (offsets here are
    never negative)."""
    return (
        offsets is not None
        and len(offsets) > 0
        and offsets[-1] < size
        and all(a < b for a, b in itertools.pairwise(offsets))
    )


def java_split(
    size: int, offsets: Sequence[int] | None, file_format: str, target: int
) -> list[tuple[int, int]]:
    """The (start, length) pieces of a data file."""
    if file_format.upper() not in ("PARQUET", "AVRO", "ORC"):
        return [(0, size)]
    if _well_defined(offsets, size):
        assert offsets is not None
        ends = [*offsets[1:], size]
        return [(start, end - start) for start, end in zip(offsets, ends, strict=True)]
    pieces = []
    offset, remaining = 0, size
    while remaining > 0:
        length = min(target, remaining)
        pieces.append((offset, length))
        offset += length
        remaining -= length
    return pieces


def java_pack(
    items: Sequence[Any], weights: Sequence[int], target: int, lookback: int
) -> list[list[Any]]:
    """BinPacking.PackingIterable(items, target, lookback, weights, largestBinFirst=true)."""
    bins: list[list[Any]] = []  # [weight, [items]]
    out: list[list[Any]] = []
    for item, weight in zip(items, weights, strict=True):
        for b in bins:
            if b[0] + weight <= target:
                b[0] += weight
                b[1].append(item)
                break
        else:
            bins.append([weight, [item]])
            if len(bins) > lookback:
                heaviest = 0
                for i, b in enumerate(bins):
                    if b[0] > bins[heaviest][0]:  # Collections.max keeps the first of equals
                        heaviest = i
                out.append(bins.pop(heaviest)[1])
    out.extend(b[1] for b in bins)
    return out


def java_merge(group: Sequence[tuple[str, int, int]]) -> list[tuple[str, int, int]]:
    """BaseCombinedScanTask(List) -> TableScanUtil.mergeTasks: a piece that starts where the
    previous task of the bin, a piece of the same file, ends joins it (SplitScanTask.merge)."""
    out: list[tuple[str, int, int]] = []
    for path, start, length in group:
        if out and out[-1][0] == path and out[-1][1] + out[-1][2] == start:
            out[-1] = (path, out[-1][1], out[-1][2] + length)
        else:
            out.append((path, start, length))
    return out


def delete_bytes(delete_files: Sequence[Any]) -> int:
    """ScanTaskUtil.contentSizeInBytes: a DV (Puffin) its blob, other delete files their size."""
    return sum(
        d.content_size_in_bytes if d.file_format.upper() == "PUFFIN" else d.file_size_in_bytes
        for d in delete_files
    )


def java_weight(length: int, delete_files: Sequence[Any], open_file_cost: int) -> int:
    return max(length + delete_bytes(delete_files), (1 + len(delete_files)) * open_file_cost)


# --- tables --------------------------------------------------------------------------------


@dataclass
class FileSpec:
    size: int
    offsets: list[int] | None = None
    file_format: str = "PARQUET"
    position_deletes: list[int] = field(default_factory=list)  # their file sizes
    dv: tuple[int, int] | None = None  # (puffin file size, blob size)


def write_files(
    root: Path, files: Sequence[FileSpec], properties: dict[str, str] | None = None
) -> Any:
    """A v3 unpartitioned table: the data files in one manifest (in order), then their
    file-scoped position deletes and deletion vectors in one delete manifest."""
    w = TableWriter(root, specs=(UNPARTITIONED,), format_version=3, default_spec_id=1)
    data = [
        entry(
            data_file(
                w.path(f"{n}.parquet"),
                size=f.size,
                file_format=f.file_format,
                split_offsets=f.offsets,
            )
        )
        for n, f in enumerate(files)
    ]
    w.commit(1, T0, [(data, 1, "data")])
    deletes = []
    for n, f in enumerate(files):
        target = w.path(f"{n}.parquet")
        for k, size in enumerate(f.position_deletes):
            deletes.append(
                entry(
                    data_file(
                        w.path(f"{n}-pos{k}.parquet"),
                        content=1,
                        size=size,
                        referenced_data_file=target,
                    )
                )
            )
        if f.dv is not None:
            deletes.append(
                entry(
                    data_file(
                        w.path(f"{n}-dv.puffin"),
                        content=1,
                        file_format="PUFFIN",
                        size=f.dv[0],
                        referenced_data_file=target,
                        content_offset=4,
                        content_size_in_bytes=f.dv[1],
                    )
                )
            )
    if deletes:
        w.commit(2, T0 + 1, [(deletes, 1, "deletes")], parent=1)
    return w.table(properties=properties)


def _groups(scan: Any) -> list[list[tuple[str, int, int]]]:
    return [
        [(Path(t.file.file_path).name, t.start, t.length) for t in group.tasks]
        for group in scan.plan_tasks()
    ]


def _split_options(target: int, lookback: int = 10, cost: int = 0) -> dict[str, Any]:
    return {
        "read.split.target-size": target,
        "read.split.planning-lookback": lookback,
        "read.split.open-file-cost": cost,
        "threads": 1,
    }


# --- splitting -----------------------------------------------------------------------------


def test_split_at_offsets(tmp_path: Path) -> None:
    table = write_files(tmp_path / "t", [FileSpec(1000, [4, 300, 700])])
    # Offsets win over the target size, as Java's OffsetsAwareSplitScanTaskIterator.
    groups = _groups(table.scan(options=_split_options(100, cost=0)))
    assert groups == [[("0.parquet", 4, 296)], [("0.parquet", 300, 400)], [("0.parquet", 700, 300)]]
    groups = _groups(table.scan(options=_split_options(400, cost=0)))
    assert groups == [[("0.parquet", 4, 296)], [("0.parquet", 300, 400)], [("0.parquet", 700, 300)]]


def test_split_at_the_target_size(tmp_path: Path) -> None:
    table = write_files(tmp_path / "t", [FileSpec(1000)])
    groups = _groups(table.scan(options=_split_options(256, cost=0)))
    assert groups == [
        [("0.parquet", 0, 256)],
        [("0.parquet", 256, 256)],
        [("0.parquet", 512, 256)],
        [("0.parquet", 768, 232)],
    ]
    assert _groups(table.scan(options=_split_options(1000, cost=0))) == [[("0.parquet", 0, 1000)]]
    assert _groups(table.scan(options=_split_options(999, cost=0))) == [
        [("0.parquet", 0, 999)],
        [("0.parquet", 999, 1)],
    ]


@pytest.mark.parametrize(
    "offsets",
    [
        [4, 4, 500],  # not strictly ascending
        [500, 4],
        [4, 1000],  # the last offset at the file's end: corrupt, ignored
        [4, 2000],
        [],
    ],
)
def test_offsets_java_ignores(tmp_path: Path, offsets: list[int]) -> None:
    table = write_files(tmp_path / "t", [FileSpec(1000, offsets)])
    groups = _groups(table.scan(options=_split_options(400, cost=0)))
    assert groups == [[("0.parquet", 0, 400)], [("0.parquet", 400, 400)], [("0.parquet", 800, 200)]]


@pytest.mark.parametrize("file_format", ["PARQUET", "parquet", "AVRO", "avro", "ORC"])
def test_splittable_formats(tmp_path: Path, file_format: str) -> None:
    table = write_files(tmp_path / "t", [FileSpec(100, None, file_format), FileSpec(100, [0, 30])])
    # Pieces 60 40 | 30 70: no two fit one bin of 60.
    groups = _groups(table.scan(options=_split_options(60, cost=0)))
    assert groups == [
        [("0.parquet", 0, 60)],
        [("0.parquet", 60, 40)],
        [("1.parquet", 0, 30)],
        [("1.parquet", 30, 70)],
    ]


def test_contiguous_pieces_in_a_bin_merge(tmp_path: Path) -> None:
    """Java's CombinedScanTask merges consecutive pieces of one file in a bin into one task
    (BaseCombinedScanTask(List) calls TableScanUtil.mergeTasks; SplitScanTask.canMerge: same
    file, this piece starting where the previous one ends). Confirmed against Java 1.10.2 by
    tests/interop/test_scan_task_json_parity.py::test_combined_tasks_merge_contiguous_pieces_as_java.
    """
    table = write_files(tmp_path / "a", [FileSpec(1000, [4, 300, 700])])
    assert _groups(table.scan(options=_split_options(10_000, cost=0))) == [[("0.parquet", 4, 996)]]
    table = write_files(tmp_path / "b", [FileSpec(100, [0, 30]), FileSpec(100, [0, 30])])
    assert _groups(table.scan(options=_split_options(100, cost=0))) == [
        [("0.parquet", 0, 100)],
        [("1.parquet", 0, 100)],
    ]
    # Pieces 500, 200, 50 with a target of 550: bins [500, 50] and [200]; the first bin's
    # pieces are not contiguous and stay apart.
    table = write_files(tmp_path / "c", [FileSpec(750, [0, 500, 700])])
    assert _groups(table.scan(options=_split_options(550, cost=0))) == [
        [("0.parquet", 0, 500), ("0.parquet", 700, 50)],
        [("0.parquet", 500, 200)],
    ]
    assert java_pack(["x", "y", "z"], [500, 200, 50], 550, 10) == [["x", "z"], ["y"]]


def test_an_empty_file_gives_no_task(tmp_path: Path) -> None:
    """Java's fixed-size iterator yields nothing for a length of 0."""
    table = write_files(tmp_path / "t", [FileSpec(0), FileSpec(10)])
    assert [Path(p).name for p in paths(table.scan())] == ["0.parquet", "1.parquet"]
    assert _groups(table.scan(options=_split_options(100, cost=0))) == [[("1.parquet", 0, 10)]]


def test_tasks_share_the_file_deletes_and_residual(tmp_path: Path) -> None:
    table = write_files(tmp_path / "t", [FileSpec(1000, [4, 500], position_deletes=[50])])
    scan = table.scan(row_filter="id > 3", options=_split_options(200, cost=0))
    [planned] = scan.plan_files()
    assert (planned.start, planned.length) == (0, 1000)
    pieces = [t for g in scan.plan_tasks() for t in g.tasks]
    assert [(t.start, t.length) for t in pieces] == [(4, 496), (500, 500)]
    for piece in pieces:
        assert piece.file.file_path == planned.file.file_path
        assert [d.file_path for d in piece.delete_files] == [
            d.file_path for d in planned.delete_files
        ]
        assert piece.residual_json == planned.residual_json
        assert piece.spec_id == planned.spec_id


# --- packing -------------------------------------------------------------------------------


def test_small_files_pack_by_the_open_file_cost(tmp_path: Path) -> None:
    """Defaults (128 MB target, 4 MB open cost): 40 small files weigh 4 MB each, 32 a bin."""
    table = write_files(tmp_path / "t", [FileSpec(1000) for _ in range(40)])
    groups = list(table.scan().plan_tasks())
    assert [len(g.tasks) for g in groups] == [32, 8]
    assert [t.file.file_path for g in groups for t in g.tasks] == paths(table.scan())
    assert groups[0].length == 32 * 1000


def test_open_file_cost_zero_packs_by_bytes(tmp_path: Path) -> None:
    table = write_files(tmp_path / "t", [FileSpec(100) for _ in range(10)])
    groups = _groups(table.scan(options=_split_options(250, lookback=1, cost=0)))
    assert [[name for name, _, _ in g] for g in groups] == [
        ["0.parquet", "1.parquet"],
        ["2.parquet", "3.parquet"],
        ["4.parquet", "5.parquet"],
        ["6.parquet", "7.parquet"],
        ["8.parquet", "9.parquet"],
    ]


def test_deletes_weigh_in(tmp_path: Path) -> None:
    """A file's delete bytes and delete-file count add to its weight: with a target of 1000,
    a 100-byte file with 900 bytes of deletes fills a bin alone."""
    files = [FileSpec(100, position_deletes=[900]), FileSpec(100), FileSpec(100)]
    table = write_files(tmp_path / "t", files)
    groups = _groups(table.scan(options=_split_options(1000, lookback=5, cost=0)))
    assert groups == [[("0.parquet", 0, 100)], [("1.parquet", 0, 100), ("2.parquet", 0, 100)]]
    # With an open-file cost of 400 the delete file counts 400 more: weight 1000, 400, 400.
    groups = _groups(table.scan(options=_split_options(1000, lookback=5, cost=400)))
    assert groups == [[("0.parquet", 0, 100)], [("1.parquet", 0, 100), ("2.parquet", 0, 100)]]
    groups = _groups(table.scan(options=_split_options(1300, lookback=5, cost=0)))
    assert groups == [[("0.parquet", 0, 100), ("1.parquet", 0, 100), ("2.parquet", 0, 100)]]


def test_a_deletion_vector_weighs_its_blob(tmp_path: Path) -> None:
    """A DV in a 10 000-byte Puffin file whose blob is 50 bytes adds 50, not 10 000."""
    files = [FileSpec(100, dv=(10_000, 50)), FileSpec(100)]
    table = write_files(tmp_path / "t", files)
    groups = _groups(table.scan(options=_split_options(250, lookback=5, cost=0)))
    assert groups == [[("0.parquet", 0, 100), ("1.parquet", 0, 100)]]
    groups = _groups(table.scan(options=_split_options(249, lookback=5, cost=0)))
    assert groups == [[("0.parquet", 0, 100)], [("1.parquet", 0, 100)]]


def test_lookback_emits_the_heaviest_bin(tmp_path: Path) -> None:
    """Weights 36 36 36 36 73 16 35, target 100, lookback 2, worked through Java's loop:
    bins A [36 36], B [36 36]; 73 opens C, three bins > 2, so the heaviest leaves: C (73).
    16 joins A (88); 35 fits neither A nor B and opens C again: A, now the heaviest, leaves.
    At the end B and C leave in order."""
    sizes = [36, 36, 36, 36, 73, 16, 35]
    table = write_files(tmp_path / "t", [FileSpec(s) for s in sizes])
    groups = _groups(table.scan(options=_split_options(100, lookback=2, cost=0)))
    assert [[int(name.split(".")[0]) for name, _, _ in g] for g in groups] == [
        [4],
        [0, 1, 5],
        [2, 3],
        [6],
    ]
    assert java_pack(list(range(7)), sizes, 100, 2) == [[4], [0, 1, 5], [2, 3], [6]]
    # With equal weights the first of the heaviest bins leaves.
    assert java_pack(list(range(5)), [1, 2, 3, 4, 5], 3, 1) == [[0, 1], [3], [4], [2]]


offsets_strategy = st.one_of(
    st.none(),
    st.lists(st.integers(0, 3000), max_size=5),  # often invalid: unsorted, repeated, too large
    st.lists(st.integers(0, 3000), min_size=1, max_size=5, unique=True).map(sorted),
)
files_strategy = st.lists(
    st.builds(
        FileSpec,
        size=st.integers(0, 3000),
        offsets=offsets_strategy,
        file_format=st.sampled_from(["PARQUET", "PARQUET", "AVRO", "orc"]),
        position_deletes=st.lists(st.integers(1, 800), max_size=2),
        dv=st.one_of(st.none(), st.tuples(st.integers(100, 5000), st.integers(1, 300))),
    ),
    min_size=1,
    max_size=14,
)


@settings(
    max_examples=80,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    files=files_strategy,
    target=st.integers(1, 4000),
    lookback=st.integers(1, 6),
    cost=st.integers(0, 600),
)
def test_plan_tasks_is_javas(files: list[FileSpec], target: int, lookback: int, cost: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        table = write_files(Path(tmp) / "t", files)
        scan = table.scan(options=_split_options(target, lookback, cost))
        planned = list(scan.plan_files())
        got = _groups(scan)
    # plan_files streams the manifest's entries in order: the order Java's packer sees.
    assert [Path(t.file.file_path).name for t in planned] == [
        f"{n}.parquet" for n in range(len(files))
    ]
    pieces, weights = [], []
    for n, (spec, task) in enumerate(zip(files, planned, strict=True)):
        deletes = task.delete_files
        # A deletion vector replaces the file's position delete files (spec: "Scan Planning").
        assert len(deletes) == (1 if spec.dv is not None else len(spec.position_deletes))
        for start, length in java_split(spec.size, spec.offsets, spec.file_format, target):
            pieces.append((f"{n}.parquet", start, length))
            weights.append(java_weight(length, deletes, cost))
    # Java's combined tasks merge a file's contiguous pieces within a bin: compare merged
    # (test_contiguous_pieces_in_a_bin_merge checks that frazil merges them too).
    expected = [java_merge(g) for g in java_pack(pieces, weights, target, lookback)]
    assert [java_merge(g) for g in got] == expected
    # Each file's pieces tile it: from its first offset (0 without offsets) to its end.
    for n, spec in enumerate(files):
        mine = sorted((s, n_) for g in got for name, s, n_ in g if name == f"{n}.parquet")
        position = mine[0][0] if mine else spec.size
        assert position == (spec.offsets[0] if _well_defined(spec.offsets, spec.size) else 0) or (
            spec.size == 0
        )
        for start, length in mine:
            assert start == position and length > 0
            position += length
        assert position == spec.size


# --- options -------------------------------------------------------------------------------


def test_split_options_from_table_properties(tmp_path: Path) -> None:
    properties = {
        "read.split.target-size": "300",
        "read.split.planning-lookback": "1",
        "read.split.open-file-cost": "0",
    }
    table = write_files(tmp_path / "t", [FileSpec(500), FileSpec(100)], properties)
    assert _groups(table.scan()) == [
        [("0.parquet", 0, 300)],
        [("0.parquet", 300, 200), ("1.parquet", 0, 100)],
    ]
    # A scan option wins over the table property.
    assert _groups(table.scan(options={"read.split.target-size": 1000})) == [
        [("0.parquet", 0, 500), ("1.parquet", 0, 100)]
    ]


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("read.split.target-size", 0),
        ("read.split.target-size", "0"),
        ("read.split.target-size", -1),
        ("read.split.target-size", "big"),
        ("read.split.target-size", ""),
        ("read.split.target-size", 1.5),
        ("read.split.target-size", True),
        ("read.split.planning-lookback", 0),
        ("read.split.planning-lookback", "0"),
        ("read.split.planning-lookback", -3),
        ("read.split.planning-lookback", "ten"),
        ("read.split.open-file-cost", -1),
        ("read.split.open-file-cost", "-1"),
        ("read.split.open-file-cost", "4MB"),
        ("threads", -1),
        ("threads", "many"),
        ("threads", False),
        ("include-column-stats", "maybe"),
        ("include-column-stats", 2),
    ],
)
@pytest.mark.parametrize("where", ["option", "property"])
def test_invalid_option_values(tmp_path: Path, name: str, value: Any, where: str) -> None:
    if where == "property":
        text = str(value).lower() if isinstance(value, bool) else str(value)
        table = write_files(tmp_path / "t", [FileSpec(100)], {name: text})
        scan = table.scan()
    else:
        scan = write_files(tmp_path / "t", [FileSpec(100)]).scan(options={name: value})
    with pytest.raises(FrazilError) as raised:
        list(scan.plan_tasks())
    assert name in str(raised.value)
    if not name.startswith("read.split."):
        with pytest.raises(FrazilError, match=name):
            list(scan.plan_files())
        with pytest.raises(FrazilError, match=name):
            scan.plan_arrow()


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("read.split.target-size", "1"),
        ("read.split.target-size", 10**15),
        ("read.split.planning-lookback", 1),
        ("read.split.open-file-cost", 0),
        ("read.split.open-file-cost", "0"),
        ("threads", 0),
        ("threads", "3"),
    ],
)
def test_valid_edge_option_values(tmp_path: Path, name: str, value: Any) -> None:
    scan = write_files(tmp_path / "t", [FileSpec(3)]).scan(options={name: value})
    pieces = [(t.start, t.length) for g in scan.plan_tasks() for t in g.tasks]
    if name == "read.split.target-size" and value == "1":
        assert pieces == [(0, 1), (1, 1), (2, 1)]
    else:
        assert pieces == [(0, 3)]


# --- plan_arrow ----------------------------------------------------------------------------


def test_plan_arrow_matches_plan_files(tmp_path: Path) -> None:
    files = [
        FileSpec(100 + n, position_deletes=[10 + n] * (n % 3), dv=(900, 9) if n % 4 == 1 else None)
        for n in range(12)
    ]
    table = write_files(tmp_path / "t", files)
    for row_filter in (None, "id < 5"):
        scan = table.scan(row_filter=row_filter)
        arrow = scan.plan_arrow()
        assert arrow.schema == _native.plan_arrow_schema()
        tasks = list(scan.plan_files())
        assert arrow.num_rows == len(tasks) == 12
        rows = arrow.to_pylist()
        for row, task in zip(rows, tasks, strict=True):
            f = task.file
            assert row["file_path"] == f.file_path
            assert row["file_format"] == f.file_format
            assert row["spec_id"] == task.spec_id == 1
            assert row["record_count"] == f.record_count
            assert row["file_size_in_bytes"] == f.file_size_in_bytes
            assert row["data_sequence_number"] == f.data_sequence_number == 1
            assert row["residual"] == task.residual_json
            assert row["delete_files"] == [
                {
                    "file_path": d.file_path,
                    "content": d.content,
                    "file_format": d.file_format,
                    "record_count": d.record_count,
                    "file_size_in_bytes": d.file_size_in_bytes,
                    "data_sequence_number": d.data_sequence_number,
                    "referenced_data_file": d.referenced_data_file,
                    "content_offset": d.content_offset,
                    "content_size_in_bytes": d.content_size_in_bytes,
                }
                for d in task.delete_files
            ]
        dv_rows = [r for r in rows if any(d["file_format"] == "PUFFIN" for d in r["delete_files"])]
        assert len(dv_rows) == 3
        assert all(d["data_sequence_number"] == 2 for r in rows for d in r["delete_files"])


def test_plan_arrow_needs_no_pandas(tmp_path: Path) -> None:
    location = write_files(tmp_path / "t", [FileSpec(100, position_deletes=[5])]).metadata_location
    script = textwrap.dedent(
        f"""
        import sys
        import frazil
        assert "pandas" not in sys.modules, "import frazil imported pandas"
        table = frazil.StaticTable.from_metadata({str(location)!r})
        plan = table.scan(row_filter="id > 1").plan_arrow()
        assert plan.num_rows == 1, plan
        assert len(plan.column("delete_files")[0].as_py()) == 1
        for group in table.scan().plan_tasks():
            pass
        print("pandas" in sys.modules)
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=300, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"
