"""FileIO against a real S3 API (moto's server on loopback)."""

from __future__ import annotations

import threading
from typing import Any

import pytest
from frazil.errors import FrazilError, FrazilIOError, NotFoundError
from frazil.io import AlreadyExistsError, FileInfo, FileIO, load_file_io
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from s3_loopback import Moto


@pytest.fixture()
def fio(moto_server: Moto) -> FileIO:
    return FileIO(moto_server.properties)


def test_write_read_size_exists_delete(fio: FileIO, bucket: str, moto_server: Moto) -> None:
    loc = f"s3://{bucket}/warehouse/db/t/metadata/snap-1.avro"
    assert not fio.exists(loc)
    fio.write(loc, b"hello world")
    assert fio.exists(loc)
    assert fio.read(loc) == b"hello world"
    assert fio.size(loc) == 11
    assert fio.read_range(loc, 6, 5) == b"world"
    assert fio.read_range(loc, 0, 0) == b""
    # Another client sees exactly the bytes written.
    body = moto_server.client().get_object(Bucket=bucket, Key="warehouse/db/t/metadata/snap-1.avro")
    assert body["Body"].read() == b"hello world"
    fio.write(loc, b"replaced")
    assert fio.read(loc) == b"replaced"
    fio.delete(loc)
    assert not fio.exists(loc)
    fio.delete(loc)  # deleting what is gone is not an error


def test_s3a_and_s3n_name_the_same_object(fio: FileIO, bucket: str) -> None:
    fio.write(f"s3a://{bucket}/k/x", b"1")
    assert fio.read(f"s3://{bucket}/k/x") == b"1"
    assert fio.read(f"s3n://{bucket}/k/x") == b"1"


def test_input_and_output_files(fio: FileIO, bucket: str) -> None:
    out = fio.new_output(f"s3://{bucket}/a/file.json")
    with out.create() as stream:
        stream.write(b'{"a": ')
        stream.write(b"1}")
        # Nothing is visible until the stream is closed.
        assert not out.exists()
    inp = out.to_input_file()
    assert inp.exists() and len(inp) == 8 and inp.size() == 8
    with inp.open() as f:
        assert f.read(4) == b'{"a"'
        f.seek(0)
        assert f.read() == b'{"a": 1}'
    with pytest.raises(AlreadyExistsError, match=r"a/file\.json"):
        out.create()
    with out.create(overwrite=True) as stream:
        stream.write(b"2")
    assert inp.read() == b"2"
    # A stream left by an exception stores nothing.
    other = fio.new_output(f"s3://{bucket}/a/failed")
    with pytest.raises(RuntimeError), other.create() as stream:
        stream.write(b"partial")
        raise RuntimeError("writer failed")
    assert not other.exists()
    fio.delete(inp)
    assert not inp.exists()


def test_write_if_absent(fio: FileIO, bucket: str) -> None:
    loc = f"s3://{bucket}/metadata/v1.metadata.json"
    fio.write(loc, b"first", overwrite=False)
    with pytest.raises(AlreadyExistsError, match=r"v1\.metadata\.json") as info:
        fio.write(loc, b"second", overwrite=False)
    assert isinstance(info.value, FileExistsError) and isinstance(info.value, FrazilError)
    assert fio.read(loc) == b"first"


def test_concurrent_write_if_absent_has_one_winner(fio: FileIO, bucket: str) -> None:
    loc = f"s3://{bucket}/metadata/v2.metadata.json"
    outcomes: dict[int, bool] = {}

    def attempt(i: int) -> None:
        try:
            fio.write(loc, str(i).encode(), overwrite=False)
            outcomes[i] = True
        except AlreadyExistsError:
            outcomes[i] = False

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    winners = [i for i, won in outcomes.items() if won]
    # Every attempt either wrote or was refused with AlreadyExistsError (S3's 412), never another
    # error. Exactly one winner is S3's guarantee, not one moto gives: moto 5.x's threaded server
    # checks If-None-Match and then stores (moto/s3/responses.py put_object) without a lock, so
    # two racing requests can both pass the check. What frazil owns is checked without the race:
    # the object holds a winner's bytes, and once it exists every write-if-absent is refused.
    assert len(outcomes) == 8 and winners
    assert fio.read(loc) in {str(i).encode() for i in winners}
    for i in range(8, 11):
        with pytest.raises(AlreadyExistsError):
            fio.write(loc, str(i).encode(), overwrite=False)
    assert fio.read(loc) in {str(i).encode() for i in winners}


def test_list(fio: FileIO, bucket: str) -> None:
    for key, size in [("t/a", 1), ("t/b/c", 2), ("t/b/d", 3), ("tx", 4), ("u/e", 5)]:
        fio.write(f"s3a://{bucket}/{key}", b"x" * size)
    assert fio.list(f"s3a://{bucket}/t") == [
        FileInfo(f"s3a://{bucket}/t/a", 1),
        FileInfo(f"s3a://{bucket}/t/b/c", 2),
        FileInfo(f"s3a://{bucket}/t/b/d", 3),
    ]
    assert fio.list(f"s3://{bucket}/t/b/") == [
        FileInfo(f"s3://{bucket}/t/b/c", 2),
        FileInfo(f"s3://{bucket}/t/b/d", 3),
    ]
    assert len(fio.list(f"s3://{bucket}")) == 5
    assert fio.list(f"s3://{bucket}/none") == []


def test_list_dir(fio: FileIO, bucket: str) -> None:
    for key, size in [("t/a", 1), ("t/b/c", 2), ("t/b/d/e", 3), ("tx", 4), ("t/f/g", 5)]:
        fio.write(f"s3a://{bucket}/{key}", b"x" * size)
    files, directories = fio.list_dir(f"s3a://{bucket}/t")
    assert files == [FileInfo(f"s3a://{bucket}/t/a", 1)]
    assert directories == [f"s3a://{bucket}/t/b", f"s3a://{bucket}/t/f"]
    split = files + [info for d in directories for info in fio.list(d)]
    assert split == fio.list(f"s3a://{bucket}/t")
    assert fio.list_dir(f"s3://{bucket}/none") == ([], [])


def test_missing_objects_name_the_location(fio: FileIO, bucket: str) -> None:
    loc = f"s3://{bucket}/missing/m1.avro"
    for call in (
        lambda: fio.read(loc),
        lambda: fio.size(loc),
        lambda: fio.read_range(loc, 0, 4),
        lambda: fio.new_input(loc).open(),
        lambda: fio.read_many([loc]),
    ):
        with pytest.raises(NotFoundError, match=r"s3://b-\w+/missing/m1\.avro") as info:
            call()
        assert isinstance(info.value, FileNotFoundError)
    # A bucket that does not exist is missing too.
    with pytest.raises(NotFoundError, match="no-such-bucket"):
        fio.read("s3://no-such-bucket/x")


def test_ranges_past_the_end_are_refused(fio: FileIO, bucket: str) -> None:
    loc = f"s3://{bucket}/r"
    fio.write(loc, b"0123")
    with pytest.raises(FrazilError, match=f"s3://{bucket}/r"):
        fio.read_range(loc, 2, 5)
    with pytest.raises(FrazilError, match=f"s3://{bucket}/r"):
        fio.read_range(loc, 10, 0)


def test_read_many_keeps_order(fio: FileIO, bucket: str, tmp_path: Any) -> None:
    locations = [f"s3://{bucket}/m/{i:03}.avro" for i in range(150)]
    for i, loc in enumerate(locations):
        fio.write(loc, f"manifest {i}".encode() * (i + 1))
    local = tmp_path / "local.avro"
    fio.write(str(local), b"local")
    mixed = [*locations[:3], str(local), *locations[3:]]
    got = fio.read_many(mixed, threads=2)
    assert got[3] == b"local"
    assert [g for i, g in enumerate(got) if i != 3] == [
        f"manifest {i}".encode() * (i + 1) for i in range(150)
    ]


def test_unreachable_endpoint_is_an_io_error(bucket: str) -> None:
    fio = FileIO(
        {
            "s3.endpoint": "http://127.0.0.1:9",
            "s3.access-key-id": "k",
            "s3.secret-access-key": "s",
            "s3.region": "us-east-1",
            "s3.connect-timeout": "1",
            "s3.request-timeout": "1",
            "s3.retry.num-retries": "0",
        }
    )
    with pytest.raises(FrazilIOError, match=f"s3://{bucket}/x") as info:
        fio.exists(f"s3://{bucket}/x")
    assert not isinstance(info.value, (FileNotFoundError, PermissionError))


def test_bad_properties_and_locations_are_refused(moto_server: Moto) -> None:
    with pytest.raises(ValueError, match=r"s3\.path-style-access"):
        FileIO({**moto_server.properties, "s3.path-style-access": "yes"}).read("s3://b/k")
    with pytest.raises(ValueError, match="contradict"):
        FileIO({**moto_server.properties, "s3.force-virtual-addressing": "true"}).read("s3://b/k")
    with pytest.raises(ValueError, match="unsupported scheme"):
        load_file_io({}, "hdfs://namenode/warehouse")
    with pytest.raises(ValueError, match=r"frazil\.io\.max-concurrent-requests"):
        FileIO({"frazil.io.max-concurrent-requests": "many"})


def test_file_io_pickles_and_hides_secrets(moto_server: Moto) -> None:
    import pickle

    fio = FileIO(moto_server.properties)
    assert "testing-secret-key" not in repr(fio)
    copy = pickle.loads(pickle.dumps(fio))
    assert copy.properties == fio.properties


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    key=st.lists(
        st.text(
            st.characters(blacklist_categories=("Cs", "Cc"), blacklist_characters="/"),
            min_size=1,
            max_size=12,
        ).filter(lambda s: s not in (".", "..")),
        min_size=1,
        max_size=4,
    ).map("/".join),
    data=st.binary(max_size=2000),
)
def test_any_key_round_trips(fio: FileIO, bucket: str, key: str, data: bytes) -> None:
    loc = f"s3://{bucket}/{key}"
    fio.write(loc, data)
    assert fio.read(loc) == data
    assert fio.size(loc) == len(data)
    assert fio.list(f"s3://{bucket}") == [FileInfo(loc, len(data))]
    fio.delete(loc)
    assert not fio.exists(loc)
