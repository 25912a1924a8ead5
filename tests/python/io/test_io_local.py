"""FileIO on local files: plain paths and every file: URI form."""

from __future__ import annotations

import os
import urllib.parse
from pathlib import Path

import pytest
from frazil import _native
from frazil.errors import FrazilError, FrazilTypeError, InvalidValueError, NotFoundError
from frazil.io import AlreadyExistsError, FileInfo, FileIO, load_file_io
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st


def file_uri_forms(path: Path) -> list[str]:
    """Every form of a local location that names ``path``: a ``file:`` URI's path is taken
    verbatim, never percent-decoded, as Java's HadoopFileIO (Hadoop's ``Path``) and pyiceberg
    (``urlparse`` without unquoting) take it (tests/interop/test_file_uri_parity.py)."""
    return [str(path), f"file://{path}", f"file:{path}", f"file://localhost{path}"]


def test_every_form_reaches_the_same_file(tmp_path: Path) -> None:
    target = tmp_path / "dir with space" / "a%b#c?.avro"
    fio = FileIO()
    fio.write(str(target), b"payload")
    for form in file_uri_forms(target):
        assert fio.read(form) == b"payload", form
        assert fio.exists(form) and fio.size(form) == 7
    # A percent-encoded spelling names another file (the encoding is part of the name).
    assert target.as_uri() != f"file://{target}"
    assert not fio.exists(target.as_uri())
    assert not fio.exists(f"file://{urllib.parse.quote(str(target))}")
    assert not fio.exists(str(tmp_path / "dir%20with%20space" / "a%b#c?.avro"))


def test_percent_escapes_in_file_uris_are_literal_names(tmp_path: Path) -> None:
    # Java names a partition directory by the URL-encoded value ('é 1/x%' is
    # s=%C3%A9+1%2Fx%25) and writes a directory spelled exactly so.
    literal = tmp_path / "s=%C3%A9+1%2Fx%25" / "%C3%A9.parquet"
    decoded = tmp_path / "s=é 1" / "x%" / "é.parquet"
    fio = FileIO()
    for form in file_uri_forms(literal):
        fio.write(form, form.encode())
        assert literal.read_bytes() == form.encode()
        assert fio.read(form) == form.encode()
    assert not decoded.exists()
    assert _native.parse_location(f"file:{literal}") == ("file", None, None, str(literal))
    [listed] = fio.list(f"file://{tmp_path}")
    assert listed.location == f"file://{literal}"


def test_remote_file_uris_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "x"
    path.write_bytes(b"1")
    with pytest.raises(InvalidValueError, match="otherhost") as info:
        FileIO().read(f"file://otherhost{path}")
    assert isinstance(info.value, ValueError)


def test_writes_create_parents_and_leave_no_temporaries(tmp_path: Path) -> None:
    fio = FileIO()
    loc = (tmp_path / "a" / "b" / "c.json").as_uri()
    fio.write(loc, b"1")
    fio.write(loc, b"22")
    assert fio.read(loc) == b"22"
    assert [p.name for p in (tmp_path / "a" / "b").iterdir()] == ["c.json"]


def test_write_if_absent_and_output_files(tmp_path: Path) -> None:
    fio = FileIO()
    out = fio.new_output(tmp_path / "v1.metadata.json")
    out.write(b"first")
    with pytest.raises(AlreadyExistsError, match=r"v1\.metadata\.json") as info:
        out.write(b"second")
    assert isinstance(info.value, FileExistsError)
    with pytest.raises(FileExistsError):
        out.create()
    assert out.to_input_file().read() == b"first"
    out.write(b"third", overwrite=True)
    assert len(out) == 5
    assert os.listdir(tmp_path) == ["v1.metadata.json"]


def test_missing_files(tmp_path: Path) -> None:
    missing = tmp_path / "none" / "m.avro"
    fio = FileIO()
    for form in file_uri_forms(missing):
        with pytest.raises(NotFoundError, match=r"m\.avro") as info:
            fio.read(form)
        assert isinstance(info.value, FileNotFoundError) and isinstance(info.value, FrazilError)
        assert form in str(info.value)
    assert not fio.new_input(missing).exists()
    fio.delete(missing)  # nothing to delete is fine


def test_list_answers_in_the_prefix_form(tmp_path: Path) -> None:
    fio = FileIO()
    for name in ("t/1", "t/sub/2", "u/3"):
        fio.write(str(tmp_path / name), name.encode())
    assert fio.list(tmp_path / "t") == [
        FileInfo(str(tmp_path / "t/1"), 3),
        FileInfo(str(tmp_path / "t/sub/2"), 7),
    ]
    assert [f.location for f in fio.list((tmp_path / "t").as_uri())] == [
        (tmp_path / "t/1").as_uri(),
        (tmp_path / "t/sub/2").as_uri(),
    ]


def test_list_dir_gives_one_level_in_the_prefix_form(tmp_path: Path) -> None:
    fio = FileIO()
    for name in ("t/1", "t/sub/2", "t/sub/deeper/3", "t/b/4", "u/5"):
        fio.write(str(tmp_path / name), name.encode())
    files, directories = fio.list_dir(tmp_path / "t")
    assert files == [FileInfo(str(tmp_path / "t/1"), 3)]
    assert directories == [str(tmp_path / "t/b"), str(tmp_path / "t/sub")]
    # Listing each directory recursively gives what the recursive listing gives.
    split = files + [info for d in directories for info in fio.list(d)]
    assert sorted(split, key=lambda f: f.location) == fio.list(tmp_path / "t")
    uri_files, uri_directories = fio.list_dir((tmp_path / "t").as_uri() + "/")
    assert [f.location for f in uri_files] == [(tmp_path / "t/1").as_uri()]
    assert uri_directories == [(tmp_path / "t/b").as_uri(), (tmp_path / "t/sub").as_uri()]
    assert fio.list_dir(tmp_path / "none") == ([], [])


def test_read_many_raises_the_first_failure_in_order(tmp_path: Path) -> None:
    fio = FileIO()
    good = [tmp_path / f"{i}" for i in range(5)]
    for i, p in enumerate(good):
        p.write_bytes(bytes([i]))
    assert fio.read_many(good, threads=2) == [bytes([i]) for i in range(5)]
    with pytest.raises(NotFoundError, match="missing-1"):
        fio.read_many([*good, tmp_path / "missing-1", tmp_path / "missing-2"])


def test_parse_location() -> None:
    assert _native.parse_location("s3a://bkt/a/b") == ("s3", "bkt", None, "a/b")
    assert _native.parse_location("gs://bkt/k") == ("gs", "bkt", None, "k")
    assert _native.parse_location("abfss://c@acct.dfs.core.windows.net/p/q") == (
        "abfs",
        "c",
        "acct",
        "p/q",
    )
    # Verbatim: no percent-decoding (see file_uri_forms).
    assert _native.parse_location("file:/tmp/a%20b") == ("file", None, None, "/tmp/a%20b")
    assert _native.parse_location("file:///tmp/a b") == ("file", None, None, "/tmp/a b")
    for bad in ("hdfs://nn/p", "s3:///k", "abfs://acct.dfs.core.windows.net/p", "file:rel"):
        with pytest.raises(InvalidValueError, match=bad.replace("/", "/")):
            _native.parse_location(bad)
    assert isinstance(load_file_io({"s3.region": "x"}, "s3://b/k"), FileIO)


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    name=st.text(
        st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/\\"),
        min_size=1,
        max_size=20,
    ).filter(lambda s: s not in (".", "..") and len(s.encode()) < 200),
    data=st.binary(max_size=500),
)
def test_file_uris_round_trip(tmp_path: Path, name: str, data: bytes) -> None:
    path = tmp_path / name
    fio = FileIO()
    fio.write(f"file://{path}", data)
    assert path.read_bytes() == data
    for form in file_uri_forms(path):
        assert fio.read(form) == data
        assert _native.parse_location(form) == ("file", None, None, str(path))
    # Listings answer with file: URIs that name the path, spelled verbatim.
    listed = {f.location: f.size for f in fio.list(f"file://{tmp_path}")}
    assert listed[f"file://{path}"] == len(data)
    fio.delete(f"file://{path}")
    assert not path.exists()


def test_bad_arguments_raise_frazil_errors(tmp_path: Path) -> None:
    fio = FileIO()
    loc = tmp_path / "f"
    fio.write(loc, b"0123")
    with pytest.raises(FrazilTypeError, match="location"):
        fio.read(42)  # type: ignore[arg-type]
    with pytest.raises(FrazilTypeError, match="bytes"):
        fio.write(loc, "text")  # type: ignore[arg-type]
    with pytest.raises(FrazilTypeError, match="bytes"):
        fio.write(loc, 5)  # type: ignore[arg-type]
    for start, length in ((-1, 1), (0, -1), (2**64, 0)):
        with pytest.raises(InvalidValueError, match=str(loc)):
            fio.read_range(loc, start, length)
    with pytest.raises(InvalidValueError, match="threads"):
        fio.read_many([loc], threads=-1)
    assert fio.read(loc) == b"0123"
