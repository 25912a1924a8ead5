"""pyarrow access to data files through a FileIO's configuration.

The reader hands Parquet files to pyarrow's C++ reader, which reads ranges itself (footer
first, then the column chunks it needs). Locations are parsed by the Rust core
(:func:`frazil._native.parse_location`) as for every other read; what pyarrow gets:

- local paths and ``file:`` URIs: pyarrow's local filesystem;
- ``s3://`` (and ``s3a://``, ``s3n://``): pyarrow's ``S3FileSystem`` configured from the same
  FileIO properties as the Rust client (the mapping lives here and nowhere else);
- any other scheme: a seekable file object whose reads are range reads of the FileIO.
"""

from __future__ import annotations

import functools
import io
from collections.abc import Mapping
from typing import Any

import pyarrow as pa
import pyarrow.fs as pafs

from frazil import _native
from frazil.errors import FrazilIOError, InvalidValueError, NotFoundError, PermissionDeniedError

_TRUE = ("true", "1", "yes")
_FALSE = ("false", "0", "no")


def _first(properties: Mapping[str, str], *names: str) -> str | None:
    return next((properties[n] for n in names if n in properties), None)


def _flag(properties: Mapping[str, str], name: str) -> bool | None:
    value = properties.get(name)
    if value is None:
        return None
    text = value.strip().lower()
    if text in _TRUE or text in _FALSE:
        return text in _TRUE
    raise InvalidValueError(f"property {name} must be true or false, not {value!r}")


def _seconds(properties: Mapping[str, str], name: str) -> float | None:
    value = properties.get(name)
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        raise InvalidValueError(
            f"property {name} must be a number of seconds, not {value!r}"
        ) from None


def s3_filesystem_options(properties: Mapping[str, str]) -> dict[str, Any]:
    """Keyword arguments of ``pyarrow.fs.S3FileSystem`` for FileIO properties (the names the
    Rust client reads: ``s3.*`` first, then ``client.*``)."""
    options: dict[str, Any] = {}
    endpoint = properties.get("s3.endpoint")
    if endpoint is not None:
        scheme, sep, rest = endpoint.partition("://")
        if sep:
            options["scheme"] = scheme
            options["endpoint_override"] = rest.rstrip("/")
        else:
            options["endpoint_override"] = endpoint.rstrip("/")
    for option, names in (
        ("access_key", ("s3.access-key-id", "client.access-key-id")),
        ("secret_key", ("s3.secret-access-key", "client.secret-access-key")),
        ("session_token", ("s3.session-token", "client.session-token")),
        ("region", ("s3.region", "client.region")),
        ("role_arn", ("s3.role-arn", "client.role-arn")),
        ("session_name", ("s3.role-session-name", "client.role-session-name")),
    ):
        value = _first(properties, *names)
        if value is not None:
            options[option] = value
    path_style = _flag(properties, "s3.path-style-access")
    virtual_hosted = _flag(properties, "s3.force-virtual-addressing")
    if path_style is not None and virtual_hosted is not None and path_style == virtual_hosted:
        raise InvalidValueError(
            "s3.path-style-access and s3.force-virtual-addressing contradict each other"
        )
    if virtual_hosted is None and path_style is not None:
        virtual_hosted = not path_style
    if virtual_hosted is not None:
        options["force_virtual_addressing"] = virtual_hosted
    if _flag(properties, "s3.anonymous"):
        options["anonymous"] = True
    for option, name in (
        ("connect_timeout", "s3.connect-timeout"),
        ("request_timeout", "s3.request-timeout"),
    ):
        seconds = _seconds(properties, name)
        if seconds is not None:
            options[option] = seconds
    proxy = properties.get("s3.proxy-uri")
    if proxy is not None:
        options["proxy_options"] = proxy
    retries = properties.get("s3.retry.num-retries")
    if retries is not None:
        try:
            count = int(retries)
        except ValueError:
            count = -1
        if count < 0:
            raise InvalidValueError(
                f"property s3.retry.num-retries must be a count, not {retries!r}"
            )
        options["retry_strategy"] = pafs.AwsStandardS3RetryStrategy(max_attempts=count + 1)
    return options


@functools.lru_cache(maxsize=16)
def _s3(items: tuple[tuple[str, str], ...]) -> pafs.S3FileSystem:
    return pafs.S3FileSystem(**s3_filesystem_options(dict(items)))


@functools.cache
def _local() -> pafs.LocalFileSystem:
    return pafs.LocalFileSystem()


class _RangeReader(io.RawIOBase):
    """A read-only seekable file over a FileIO's range reads (schemes pyarrow is not given a
    filesystem for)."""

    def __init__(self, raw: _native.RawFileIO, location: str) -> None:
        super().__init__()
        self._raw = raw
        self._location = location
        self._size = raw.size(location)
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        length = min(len(view), self._size - self._position)
        if length <= 0:
            return 0
        data = self._raw.read_range(self._location, self._position, length)
        view[: len(data)] = data
        self._position += len(data)
        return len(data)


def open_arrow_file(raw: _native.RawFileIO, location: str) -> pa.NativeFile:
    """A pyarrow random-access file for ``location``, opened with the FileIO's configuration.
    A missing file is :class:`NotFoundError`, other failures :class:`FrazilIOError`, each
    naming the location."""
    kind, bucket, _account, key = _native.parse_location(location)
    try:
        if kind == "file":
            return _local().open_input_file(key)
        if kind == "s3":
            filesystem = _s3(tuple(sorted(raw.properties.items())))
            return filesystem.open_input_file(f"{bucket}/{key}")
    except FileNotFoundError:
        raise NotFoundError(f"data file not found: {location}") from None
    except PermissionError as error:
        raise PermissionDeniedError(f"{location}: permission denied: {error}") from None
    except OSError as error:
        raise FrazilIOError(f"{location}: cannot open: {error}") from None
    return pa.PythonFile(_RangeReader(raw, location), mode="r")


class _BufferedOutput(io.BytesIO):
    """Collects a file written by pyarrow and stores it through the FileIO on close (schemes
    pyarrow is not given a filesystem for)."""

    def __init__(self, raw: _native.RawFileIO, location: str) -> None:
        super().__init__()
        self._raw = raw
        self._location = location

    def close(self) -> None:
        if not self.closed:
            data = self.getvalue()
            super().close()
            if not self._raw.write_if_absent(self._location, data):
                raise FrazilIOError(f"{self._location}: already exists")


def open_arrow_output(raw: _native.RawFileIO, location: str) -> pa.NativeFile:
    """A pyarrow output stream writing a new file at ``location`` with the FileIO's
    configuration (local files and S3 stream as they are written; other schemes are stored
    when the stream is closed). Failures are :class:`FrazilIOError` naming the location."""
    kind, bucket, _account, key = _native.parse_location(location)
    try:
        if kind == "file":
            parent = key.rsplit("/", 1)[0]
            if parent:
                _local().create_dir(parent, recursive=True)
            return _local().open_output_stream(key)
        if kind == "s3":
            filesystem = _s3(tuple(sorted(raw.properties.items())))
            return filesystem.open_output_stream(f"{bucket}/{key}")
    except PermissionError as error:
        raise PermissionDeniedError(f"{location}: permission denied: {error}") from None
    except OSError as error:
        raise FrazilIOError(f"{location}: cannot create: {error}") from None
    return pa.PythonFile(_BufferedOutput(raw, location), mode="w")
