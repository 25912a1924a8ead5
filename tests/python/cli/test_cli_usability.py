"""The ``frazil`` command line for people: options anywhere, one-line errors (never a
traceback), messages that say what to write, ``scan``'s limits and NULLs, ``expire-snapshots``
that explains itself, and a ``--help`` that starts fast."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pytest
from frazil.catalog.memory import InMemoryCatalog
from frazil.cli import main
from frazil.cli._ddl import parse_partition_spec, parse_schema
from frazil.errors import FrazilError, ValidationError
from frazil.table import Table
from hypothesis import given, settings
from hypothesis import strategies as st


@pytest.fixture
def catalog(tmp_path: Path) -> InMemoryCatalog:
    catalog = InMemoryCatalog(warehouse=str(tmp_path / "warehouse"))
    catalog.create_namespace("db")
    schema = parse_schema("id long, name string, ts timestamptz")
    table = catalog.create_table("db.t", schema)
    for first in (0, 30, 60):
        table.append(
            pa.table(
                {
                    "id": pa.array(range(first, first + 30), pa.int64()),
                    "name": ["", None, "x"] * 10,
                    "ts": pa.array([None] * 30, pa.timestamp("us", tz="UTC")),
                }
            )
        )
    return catalog


def run(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str], *argv: str, status: int = 0
) -> tuple[str, str]:
    code = main(list(argv), catalog_factory=lambda name, props: catalog)
    captured = capsys.readouterr()
    assert code == status, captured.err
    return captured.out, captured.err


def cli(*argv: str, cwd: Path, **popen: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "HOME": str(cwd)}
    env.pop("FRAZIL_CONFIG", None)
    return subprocess.run(
        [sys.executable, "-m", "frazil.cli", *argv],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


# --- global options anywhere ------------------------------------------------------------------


def test_json_and_catalog_may_follow_the_command(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    names: list[str] = []

    def factory(name: str, props: dict[str, str]) -> InMemoryCatalog:
        names.append(name)
        return catalog

    for argv in (
        ["--json", "--catalog", "one", "ns", "list"],
        ["ns", "list", "--json", "--catalog", "two"],
        ["ns", "--json", "list"],
        ["--catalog", "three", "table", "describe", "db.t", "--json"],
    ):
        assert main(argv, catalog_factory=factory) == 0
        assert isinstance(json.loads(capsys.readouterr().out), (list, dict))
    assert names == ["one", "two", "default", "three"]
    assert main(["scan", "db.t", "--limit", "1"], catalog_factory=factory) == 0
    assert not capsys.readouterr().out.lstrip().startswith("[")  # no --json: a table


# --- errors: one line, never a traceback ------------------------------------------------------


def _one_line_error(err: str, *fragments: str) -> None:
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("frazil: ")
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize("kind", ["missing", "directory", "not-utf8"])
def test_schema_file_errors_are_one_line(
    kind: str, catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "schema.txt"
    if kind == "directory":
        path.mkdir()
    elif kind == "not-utf8":
        path.write_bytes(b"id long, name \xff\xfe")
    _, err = run(catalog, capsys, "table", "create", "db.new", "--schema", f"@{path}", status=1)
    _one_line_error(err, "schema file", str(path))


def test_interrupt_and_unexpected_errors_are_one_line(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(name: str, props: dict[str, str]) -> InMemoryCatalog:
        raise KeyboardInterrupt

    def broken(name: str, props: dict[str, str]) -> InMemoryCatalog:
        raise RuntimeError("boom\nsecond line")

    assert main(["ns", "list"], catalog_factory=interrupted) == 130
    _one_line_error(capsys.readouterr().err, "interrupted")
    assert main(["ns", "list"], catalog_factory=broken) == 1
    _one_line_error(capsys.readouterr().err, "RuntimeError", "boom; second line")

    class PanicException(BaseException):  # what pyo3 raises for a Rust panic
        pass

    def panicked(name: str, props: dict[str, str]) -> InMemoryCatalog:
        raise PanicException("index out of bounds")

    assert main(["ns", "list"], catalog_factory=panicked) == 1
    _one_line_error(capsys.readouterr().err, "PanicException: index out of bounds")


@pytest.fixture
def embedded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A directory whose default catalog (./frazil-warehouse) holds db.big: 5,000 rows, more
    than a pipe buffer holds when printed."""
    import frazil

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.delenv("FRAZIL_CONFIG", raising=False)
    catalog = frazil.load_catalog("default")
    catalog.create_namespace("db")
    table = catalog.create_table("db.big", parse_schema("id long, name string"))
    ids = pa.array(range(5_000), pa.int64())
    table.append(pa.table({"id": ids, "name": pa.compute.cast(ids, pa.string())}))
    yield tmp_path


def test_missing_schema_file_in_a_real_process(embedded: Path) -> None:
    done = cli("table", "create", "db.x", "--schema", "@nowhere.json", cwd=embedded)
    assert done.returncode == 1
    _one_line_error(done.stderr, "nowhere.json", "No such file")


def test_a_reader_that_stops_early_gets_no_traceback(embedded: Path) -> None:
    env = {**os.environ, "HOME": str(embedded)}
    for argv in (["scan", "db.big", "--limit", "0"], ["--json", "scan", "db.big", "--limit", "0"]):
        process = subprocess.Popen(
            [sys.executable, "-m", "frazil.cli", *argv],
            cwd=embedded,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert process.stdout is not None and process.stderr is not None
        process.stdout.read(100)  # `| head -c 100`
        process.stdout.close()
        err = process.stderr.read().decode()
        assert process.wait(timeout=120) == 141, err
        assert err == "", err


# --- parse messages that help ------------------------------------------------------------------


def test_schema_column_without_a_type() -> None:
    with pytest.raises(ValidationError) as caught:
        parse_schema("id")
    assert "'id' has no type" in str(caught.value) and "id long" in str(caught.value)
    with pytest.raises(ValidationError, match=r"column 'a': unknown Iceberg type.*types: boolean"):
        parse_schema("a lnog")
    assert (
        parse_schema("id: long, n string").field("id").field_type
        == parse_schema("id long").field("id").field_type
    )


_SCHEMA = parse_schema("id long, s string, ts timestamptz, d date")
_EXPECTED = {
    # Iceberg's spelling, Spark's, and the names Java's PartitionSpec.Builder gives.
    "bucket[16](id)": ("id_bucket", "bucket[16]"),
    "bucket(16, id)": ("id_bucket", "bucket[16]"),
    "truncate[4](s)": ("s_trunc", "truncate[4]"),
    "truncate(4, s)": ("s_trunc", "truncate[4]"),
    "identity(s)": ("s", "identity"),
    "s": ("s", "identity"),
    "hours(ts)": ("ts_hour", "hour"),
    "hour(ts)": ("ts_hour", "hour"),
    "days(ts)": ("ts_day", "day"),
    "months(d)": ("d_month", "month"),
    "years(d)": ("d_year", "year"),
    "YEAR(d)": ("d_year", "year"),
}


@pytest.mark.parametrize("text", sorted(_EXPECTED))
def test_partition_spellings(text: str) -> None:
    spec = parse_partition_spec(text, _SCHEMA)
    assert [(f.name, f.transform) for f in spec.fields] == [_EXPECTED[text]]


def test_partition_errors_say_what_to_write() -> None:
    with pytest.raises(ValidationError, match=r"no column 'idx'.*columns: id, s, ts, d"):
        parse_partition_spec("bucket[16](idx)", _SCHEMA)
    with pytest.raises(ValidationError, match="unknown partition transform 'week\\(ts\\)'"):
        parse_partition_spec("week(ts)", _SCHEMA)
    with pytest.raises(ValidationError, match="bucket\\[N\\]\\(col\\) or bucket\\(N, col\\)"):
        parse_partition_spec("bucket(id)", _SCHEMA)


def test_filter_with_double_quoted_text_hints_at_single_quotes(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    _, err = run(catalog, capsys, "scan", "db.t", "--filter", 'name = "x"', status=1)
    _one_line_error(err, "single quotes", "'x'")
    _, err = run(catalog, capsys, "scan", "db.t", "--filter", "name IN ('a', \"b\")", status=1)
    _one_line_error(err, "'b'")


def test_invalid_date_is_called_invalid(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    for text in ("2024-13-45", "2024-02-30T10:00:00"):
        _, err = run(catalog, capsys, "scan", "db.t", "--filter", f"ts = '{text}'", status=1)
        _one_line_error(err, "not a valid date")
        assert "offset" not in err
    _, err = run(catalog, capsys, "scan", "db.t", "--filter", "ts = '2024-01-02'", status=1)
    _one_line_error(err, "2024-01-02T00:00:00+00:00")
    _, err = run(catalog, capsys, "scan", "db.t", "--filter", "ts < '2024-01-02T10:00'", status=1)
    _one_line_error(err, "no zone offset")


@pytest.fixture(scope="module")
def ids_0_to_89(tmp_path_factory: pytest.TempPathFactory) -> Table:
    catalog = InMemoryCatalog(warehouse=str(tmp_path_factory.mktemp("between")))
    catalog.create_namespace("db")
    table = catalog.create_table("db.t", parse_schema("id long"))
    table.append(pa.table({"id": pa.array([*range(90), None], pa.int64())}))
    return table


@settings(max_examples=30, deadline=None)
@given(low=st.integers(-5, 95), high=st.integers(-5, 95), negated=st.booleans())
def test_between_is_inclusive(ids_0_to_89: Table, low: int, high: int, negated: bool) -> None:
    keyword = "NOT BETWEEN" if negated else "BETWEEN"
    got = ids_0_to_89.scan(row_filter=f"id {keyword} {low} AND {high}").to_arrow()
    expected = [i for i in range(90) if (low <= i <= high) != negated]
    assert sorted(got["id"].to_pylist()) == expected  # a NULL id matches neither


def test_between_syntax() -> None:
    from frazil.expressions import And, GreaterThanOrEqual, LessThanOrEqual, Not, parse

    inside = And(GreaterThanOrEqual("d", "2024-01-01"), LessThanOrEqual("d", "2024-12-31"))
    assert parse("d BETWEEN '2024-01-01' AND '2024-12-31'") == inside
    assert parse("d not between '2024-01-01' and '2024-12-31' OR d IS NULL") == parse(
        "NOT (d >= '2024-01-01' AND d <= '2024-12-31') OR d IS NULL"
    )
    assert parse("x BETWEEN 1 AND 2 AND y = 3") == parse("x >= 1 AND x <= 2 AND y = 3")
    assert isinstance(parse("NOT x BETWEEN 1 AND 2"), Not)
    with pytest.raises(FrazilError, match="expected AND"):
        parse("x BETWEEN 1 OR 2")


# --- scan ---------------------------------------------------------------------------------------


def test_scan_help_shows_the_default_limit(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["scan", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "default: 20; 0 for all" in help_text
    assert "--ref" in help_text and "--as-of" in help_text


def test_scan_says_when_rows_were_left_out(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = run(catalog, capsys, "scan", "db.t")
    assert "showing the first 20 rows; more match (--limit N for more, --limit 0 for all)" in out
    out, _ = run(catalog, capsys, "scan", "db.t", "--limit", "0")
    assert out.rstrip().endswith("90 rows") and "more match" not in out
    out, _ = run(catalog, capsys, "scan", "db.t", "--filter", "id = 5")
    assert out.rstrip().endswith("1 row")
    out, err = run(catalog, capsys, "--json", "scan", "db.t", "--limit", "5")
    assert len(json.loads(out)) == 5 and "showing the first 5 rows" in err
    out, err = run(catalog, capsys, "--json", "scan", "db.t", "--limit", "0")
    assert len(json.loads(out)) == 90 and err == ""


def test_scan_shows_null_apart_from_the_empty_string(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = run(catalog, capsys, "scan", "db.t", "--filter", "id < 3", "--columns", "id,name")
    cells = {
        int(line.split("│")[1]): line.split("│")[2].strip()
        for line in out.splitlines()
        if line.startswith("│")
    }
    assert cells == {0: "", 1: "NULL", 2: "x"}


def test_scan_picks_the_snapshot_by_id_ref_or_time(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    table = catalog.load_table("db.t")
    first, second, _ = table.snapshots()
    table.manage_snapshots().create_tag("v1", first.snapshot_id).commit_to()

    def count(*argv: str) -> int:
        out, _ = run(catalog, capsys, "--json", "scan", "db.t", "--limit", "0", *argv)
        return len(json.loads(out))

    assert count("--ref", "v1") == 30
    assert count("--snapshot-id", str(second.snapshot_id)) == 60
    at = dt.datetime.fromtimestamp(second.timestamp_ms / 1000, dt.timezone.utc)
    assert count("--as-of", at.isoformat()) == 60
    assert count() == 90
    with pytest.raises(SystemExit) as exited:  # argparse's usage error
        main(["scan", "db.t", "--ref", "v1", "--as-of", "1d"], catalog_factory=lambda n, p: catalog)
    assert exited.value.code == 2
    assert "argument --as-of: not allowed with argument --ref" in capsys.readouterr().err


# --- expire-snapshots -------------------------------------------------------------------------


def test_older_than_takes_a_duration_or_a_timestamp() -> None:
    from frazil.cli._time import parse_when

    now = 1_700_000_000_000
    assert parse_when("7d", "--older-than", now) == now - 7 * 86_400_000
    assert parse_when("12h", "--older-than", now) == now - 12 * 3_600_000
    assert parse_when("30m", "--older-than", now) == now - 30 * 60_000
    assert parse_when("2024-06-01T00:00:00Z", "--older-than") == 1_717_200_000_000
    assert parse_when("2024-06-01", "--older-than") == 1_717_200_000_000
    assert parse_when("2024-06-01T02:00:00+02:00", "--older-than") == 1_717_200_000_000
    for bare in ("5", "1700000000000", "-3", "1.5"):
        with pytest.raises(ValidationError, match="bare number is ambiguous"):
            parse_when(bare, "--older-than")
    with pytest.raises(ValidationError, match="neither a duration"):
        parse_when("yesterday", "--older-than")


def test_expire_explains_why_nothing_expired(
    catalog: InMemoryCatalog, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = run(catalog, capsys, "expire-snapshots", "db.t")
    assert "nothing expired: every snapshot is younger than the cutoff" in out
    assert "(history.expire.max-snapshot-age-ms = 5 days, the default)" in out
    assert "pass --older-than" in out
    out, _ = run(catalog, capsys, "--json", "expire-snapshots", "db.t", "--older-than", "0m")
    result = json.loads(out)
    assert result["expired-snapshots"] == 2 and result["reason"] is None
    assert len(catalog.load_table("db.t").snapshots()) == 1
    out, _ = run(catalog, capsys, "expire-snapshots", "db.t", "--older-than", "0m")
    assert "nothing expired: the table has 1 snapshot, and the newest 1 of a branch" in out
    assert "history.expire.min-snapshots-to-keep = 1, the default" in out
    table = catalog.load_table("db.t")
    table.manage_snapshots().create_tag("keep", table.current_snapshot().snapshot_id).commit_to()
    table.append(pa.table({"id": pa.array([1], pa.int64())}))
    out, _ = run(catalog, capsys, "expire-snapshots", "db.t", "--older-than", "0m")
    assert "nothing expired: the snapshots older than the cutoff" in out
    assert "--older-than 0m" in out and "by a tag" in out
    _, err = run(catalog, capsys, "expire-snapshots", "db.t", "--older-than", "5", status=1)
    _one_line_error(err, "ambiguous")


# --- start-up ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv", [["--help"], ["--version"], ["scan", "--help"], ["table", "create", "--help"]]
)
def test_help_and_version_import_nothing_heavy(argv: list[str], tmp_path: Path) -> None:
    code = (
        "import sys\n"
        "from frazil.cli import main\n"
        "try:\n"
        f"    main({argv!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in "
        "('pyarrow', 'numpy', 'pandas', 'rich', 'yaml'))\n"
        "print('HEAVY', heavy, file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert "HEAVY []" in done.stderr, done.stderr
    assert "usage: frazil" in done.stdout or "frazil " in done.stdout
