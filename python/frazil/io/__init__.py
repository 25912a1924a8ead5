"""Storage: reading and writing files by location, local or in object stores.

A :class:`FileIO` is configured by properties with pyiceberg's names and picks
the store for each location by its scheme:

- local paths and ``file:`` URIs (``file:///p``, ``file:/p``,
  ``file://localhost/p``; a ``file://`` URI naming another host is refused),
  whose path is taken verbatim, never percent-decoded, as Java's HadoopFileIO
  and pyiceberg take it (``file:///t/s=%C3%A9`` is the directory ``s=%C3%A9``);
- ``s3://``, ``s3a://``, ``s3n://`` (one bucket and key for all three):
  ``s3.endpoint``, ``s3.access-key-id``, ``s3.secret-access-key``,
  ``s3.session-token``, ``s3.region`` (each falling back to ``client.*``),
  ``s3.path-style-access`` / ``s3.force-virtual-addressing``,
  ``s3.anonymous``, ``s3.proxy-uri``, ``s3.connect-timeout``,
  ``s3.request-timeout``, ``s3.role-arn``, ``s3.sse-kms-key-id``,
  ``s3.retry.num-retries`` (Java's name; default 10);
- ``gs://``: ``gcs.oauth2.token``, ``gcs.service.host``;
- ``abfs://`` and ``abfss://`` (``container@account.dfs.core.windows.net/path``):
  ``adls.account-key``, ``adls.sas-token`` (or ``adls.sas-token.<account>``),
  ``adls.connection-string``, ``adls.tenant-id``, ``adls.client-id``,
  ``adls.client-secret``, ``adls.token``, ``adls.anon``,
  ``adls.blob-storage-authority`` / ``adls.dfs-storage-authority`` (with their
  ``-scheme``).

What the properties leave out comes from the environment (``AWS_*``,
``GOOGLE_*``, ``AZURE_*``). ``frazil.io.max-concurrent-requests`` (default 64)
bounds the requests :meth:`FileIO.read_many` keeps in flight.

The work is done by the Rust core's FileIO (the same one the planner uses),
with the GIL released: locations are parsed in one place only. Missing files
raise :class:`~frazil.errors.NotFoundError` (a ``FileNotFoundError``), denied
access :class:`~frazil.errors.PermissionDeniedError` (a ``PermissionError``),
other storage failures :class:`~frazil.errors.FrazilIOError` (an ``OSError``),
each naming the location.
"""

from __future__ import annotations

import builtins
import functools
import io
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, TypeAlias

from frazil import _native
from frazil.errors import AlreadyExistsError, FrazilTypeError, InvalidValueError

__all__ = [
    "AlreadyExistsError",
    "FileIO",
    "FileInfo",
    "InputFile",
    "OutputFile",
    "load_file_io",
]

Location: TypeAlias = "str | os.PathLike[str]"
IOLike: TypeAlias = "FileIO | Mapping[str, str] | None"


@dataclass(frozen=True)
class FileInfo:
    """A file found by :meth:`FileIO.list`: its location (in the form of the
    prefix listed), its size in bytes, and when it was last written in
    milliseconds from the epoch (None when the store does not say; not part of
    equality, which compares what the file is, not when it was seen)."""

    location: str
    size: int
    last_modified_ms: int | None = field(default=None, compare=False)


def _bytes(data: bytes, location: str) -> bytes:
    # bytes(5) would be five zero bytes and bytes("x") a bare TypeError.
    if not isinstance(data, bytes | bytearray | memoryview):
        raise FrazilTypeError(f"{location}: data to write must be bytes, not {type(data).__name__}")
    return bytes(data)


def _location(location: Location) -> str:
    try:
        return os.fspath(location)
    except TypeError:
        raise FrazilTypeError(
            f"a location is a str or an os.PathLike, not {type(location).__name__}: {location!r}"
        ) from None


class FileIO:
    """Reads and writes locations of any supported scheme (see the module docs).

    Store clients are built on first use, one per bucket (or container and
    account), and reused. A FileIO may be shared between threads and survives
    ``fork``: a child process builds its own clients.
    """

    __slots__ = ("_raw",)

    def __init__(self, properties: Mapping[str, str] | None = None) -> None:
        props = {str(k): str(v) for k, v in (properties or {}).items()}
        self._raw = _native.RawFileIO(props)

    @property
    def properties(self) -> dict[str, str]:
        """The properties this FileIO was configured with (a copy)."""
        props: dict[str, str] = self._raw.properties
        return props

    def __repr__(self) -> str:
        # Values may be credentials: show the names only.
        return f"FileIO(properties={sorted(self.properties)!r})"

    def __reduce__(self) -> tuple[Any, ...]:
        return (FileIO, (self.properties,))

    def new_input(self, location: Location) -> InputFile:
        """A file to read; nothing is fetched until it is read."""
        return InputFile(self, _location(location))

    def new_output(self, location: Location) -> OutputFile:
        """A file to write; nothing is written until it is."""
        return OutputFile(self, _location(location))

    def delete(self, location: Location | InputFile | OutputFile) -> None:
        """Deletes a file or object; deleting one that does not exist succeeds."""
        if isinstance(location, (InputFile, OutputFile)):
            location = location.location
        self._raw.delete(_location(location))

    def read(self, location: Location) -> bytes:
        """The whole content of a file or object."""
        data: bytes = self._raw.read(_location(location))
        return data

    def read_range(self, location: Location, start: int, length: int) -> bytes:
        """``length`` bytes from offset ``start``; a range past the end is refused."""
        loc = _location(location)
        if start < 0 or length < 0 or start + length >= 2**64:
            raise InvalidValueError(f"{loc}: cannot read {length} bytes at offset {start}")
        data: bytes = self._raw.read_range(loc, start, length)
        return data

    def read_many(self, locations: Iterable[Location], threads: int = 0) -> list[bytes]:
        """The contents of many locations, in order, fetched together (object-store
        requests overlap their network waits; local files are read on ``threads``
        workers, 0 for all cores). The first failure, in that order, is raised."""
        if threads < 0:
            raise InvalidValueError(f"threads must be 0 (all cores) or more, not {threads}")
        data: list[bytes] = self._raw.read_many([_location(x) for x in locations], threads)
        return data

    def exists(self, location: Location) -> bool:
        result: bool = self._raw.exists(_location(location))
        return result

    def size(self, location: Location) -> int:
        result: int = self._raw.size(_location(location))
        return result

    def write(self, location: Location, data: bytes, *, overwrite: bool = True) -> None:
        """Writes ``data`` at ``location``; readers never see a partial file.

        With ``overwrite=False`` the write happens only if nothing is there yet,
        atomically (a local hard link, an S3 ``If-None-Match: *`` put);
        otherwise :class:`AlreadyExistsError` is raised."""
        loc = _location(location)
        payload = _bytes(data, loc)
        if overwrite:
            self._raw.write(loc, payload)
        elif not self._raw.write_if_absent(loc, payload):
            raise AlreadyExistsError(f"already exists: {loc}")

    def list(self, prefix: Location) -> list[FileInfo]:
        """Every file under ``prefix`` taken as a directory, recursively, sorted
        by location; empty when there is none."""
        listed: list[tuple[str, int, int | None]] = self._raw.list(_location(prefix))
        return [FileInfo(location, size, modified) for location, size, modified in listed]

    def list_dir(self, prefix: Location) -> tuple[builtins.list[FileInfo], builtins.list[str]]:
        """One level of ``prefix`` taken as a directory: the files directly in it and the
        locations of its subdirectories (each sorted, in the form of the prefix), so that a
        listing can be split by directory (frazil.spark lists each one in a task). Empty
        when there is none."""
        files, directories = self._raw.list_dir(_location(prefix))
        infos = [FileInfo(location, size, modified) for location, size, modified in files]
        return infos, [str(d) for d in directories]


class InputFile:
    """A location to read, in the spirit of pyiceberg's ``InputFile``."""

    __slots__ = ("_io", "location")

    def __init__(self, file_io: FileIO, location: str) -> None:
        self._io = file_io
        self.location = location

    def __repr__(self) -> str:
        return f"InputFile({self.location!r})"

    def exists(self) -> bool:
        return self._io.exists(self.location)

    def size(self) -> int:
        return self._io.size(self.location)

    def __len__(self) -> int:
        return self.size()

    def read(self) -> bytes:
        return self._io.read(self.location)

    def read_range(self, start: int, length: int) -> bytes:
        return self._io.read_range(self.location, start, length)

    def open(self, seekable: bool = True) -> IO[bytes]:
        """A readable, seekable binary file object over the whole content
        (fetched at once: Iceberg's metadata files are small)."""
        return io.BytesIO(self.read())


class _OutputStream(io.BytesIO):
    """Collects what is written and stores it on close, so a reader never sees
    a partial file. A stream closed by an exception stores nothing."""

    def __init__(self, target: OutputFile, overwrite: bool) -> None:
        super().__init__()
        self._target = target
        self._overwrite = overwrite
        self._failed = False

    def __exit__(self, *exc: object) -> None:
        if exc[0] is not None:
            self._failed = True
        self.close()

    def close(self) -> None:
        if self.closed:
            return
        data = self.getvalue()
        super().close()
        if not self._failed:
            self._target.write(data, overwrite=self._overwrite)


class OutputFile:
    """A location to write, in the spirit of pyiceberg's ``OutputFile``."""

    __slots__ = ("_io", "location")

    def __init__(self, file_io: FileIO, location: str) -> None:
        self._io = file_io
        self.location = location

    def __repr__(self) -> str:
        return f"OutputFile({self.location!r})"

    def exists(self) -> bool:
        return self._io.exists(self.location)

    def __len__(self) -> int:
        return self._io.size(self.location)

    def to_input_file(self) -> InputFile:
        return InputFile(self._io, self.location)

    def create(self, overwrite: bool = False) -> IO[bytes]:
        """A writable binary stream whose content is stored when it is closed.

        Without ``overwrite``, :class:`AlreadyExistsError` is raised here when the
        file exists, and again on close if another writer created it meanwhile."""
        if not overwrite and self.exists():
            raise AlreadyExistsError(f"already exists: {self.location}")
        return _OutputStream(self, overwrite)

    def write(self, data: bytes, *, overwrite: bool = False) -> None:
        """Stores ``data`` at once (see :meth:`FileIO.write`)."""
        self._io.write(self.location, data, overwrite=overwrite)


def load_file_io(
    properties: Mapping[str, str] | None = None, location: Location | None = None
) -> FileIO:
    """The FileIO for ``properties`` (pyiceberg's ``load_file_io``). A
    ``location``, when given, is checked to be one frazil can reach."""
    file_io = FileIO(properties)
    if location is not None:
        _native.parse_location(_location(location))
    return file_io


def resolve(file_io: IOLike) -> FileIO:
    """A FileIO from a FileIO, a properties mapping, or None (no properties)."""
    if isinstance(file_io, FileIO):
        return file_io
    if file_io is None:
        return _default()
    return FileIO(file_io)


@functools.cache
def _default() -> FileIO:
    return FileIO()


def raw(file_io: IOLike) -> _native.RawFileIO:
    """The native FileIO behind :func:`resolve`'s answer, for the bindings."""
    return resolve(file_io)._raw
