"""A reference Iceberg REST catalog server: Iceberg Java 1.10.2's own request handling
(``org.apache.iceberg.rest.CatalogHandlers`` and ``RESTSerializers``) behind the JDK's HTTP
server, over a JdbcCatalog on SQLite with a local warehouse (tests/interop/rest_java/
ReferenceRestServer.java, whose header documents the routes, the error model and the test
control API). It is the evidence that a REST client speaks the protocol as Java serves it.

Fixtures (tests/interop/conftest.py imports them):

- ``java_rest_server`` (session): one server without authentication, shared by the session's
  tests (give each test its own namespace).
- ``java_rest`` (per test): that server with no faults and an empty request log when the test
  starts, and its faults cleared when it ends.
- ``java_rest_server_factory`` (session): ``factory(token=..., oauth_client=..., prefix=...,
  config_defaults=..., config_overrides=..., table_config=...)`` starts another server (a JVM
  start, about a second) and stops it at the session's end.

A :class:`JavaRestServer` (the interface other tests rely on; keep it stable):

- ``uri``: ``"http://127.0.0.1:<port>"``, the catalog URI to give a client (no trailing
  slash; routes are ``uri + "/v1/..."``).
- ``warehouse``: the local warehouse directory (a plain absolute path, which is also how table
  locations look: ``<warehouse>/<namespace>/<table>``); ``catalog_db``: the SQLite file of the
  JdbcCatalog behind the server (the server's own: read it only after ``stop()``).
- ``token``: the bearer token every ``/v1`` route except ``/v1/oauth/tokens`` requires (None:
  no authentication); ``oauth_client``: ``"id:secret"`` that ``POST /v1/oauth/tokens`` (the
  ``client_credentials`` grant) accepts, answering ``token``; ``prefix``: the path prefix the
  server advertises in ``/v1/config`` ``overrides`` and requires (None: none).
- ``request(method, path, body=None, headers=None)`` -> :class:`Response` (``status``,
  ``headers`` with lower-case names, ``body`` bytes, ``json()``): raw HTTP to ``uri + path``,
  with the server's bearer token unless ``headers`` has an ``Authorization`` (``""`` sends
  none). Error bodies are the OpenAPI's IcebergErrorResponse: ``{"error": {"message", "type",
  "code", "stack"}}``, ``type`` being the Java exception's simple name (NoSuchTableException
  404, AlreadyExistsException and CommitFailedException 409, IllegalArgumentException and
  ValidationException 400, NotAuthorizedException 401, UnsupportedOperationException 406 (an
  unknown update action, as in Java), NamespaceNotEmptyException 409, others 500). ``url(path)``
  is ``uri + path``.
- ``add_fault(**spec) -> int``: the next matching request(s) get an error instead (fields as in
  the Java header, ``delay_ms`` for ``delay-ms``): ``add_fault(operation="updateTable",
  status=503)``; ``when="after"`` runs the request and then answers the error (a commit whose
  answer was lost); ``status=0`` closes the connection unanswered. ``operation`` is the
  OpenAPI operationId. ``faults()`` lists the live ones; ``clear_faults()``.
- ``requests()``: the ``/v1`` requests received (the last 10000), oldest first: ``operation``,
  ``method``, ``path`` (raw), ``query`` (raw), ``headers`` (lower-case names), ``body`` (text),
  ``status`` (0 for a dropped connection); ``clear_requests()``.
- ``stderr()``: the server's log so far; ``stop()``.

Every answer with a LoadTableResult (create, register, load, commit) has an ``ETag`` header;
``loadTable`` answers 304 to a matching ``If-None-Match``. Requests are served four at a time;
catalog writes one at a time (so a multi-table commit is atomic for other requests).

Path variables are decoded as Java decodes them (``RESTUtil.decodeNamespace``: levels joined
by ``%1F``, each URL-decoded with ``URLDecoder``, so ``+`` is a space: send ``%2B``).

The JVM's class path is the Iceberg Spark runtime jar (snowpark-connect-deps-iceberg), Hadoop's
client jars and logging from pyspark's jars folder (HadoopFileIO writes the metadata files) and
Debian's SQLite JDBC driver. The server class is compiled by javac once per source hash into
pytest's cache (``.pytest_cache/d/rest-java``). Everything it needs missing is a test failure
with a clear message, never a skip.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import pytest
from java_referee import iceberg_spark_jars

HERE = Path(__file__).resolve().parent
SOURCE = HERE / "rest_java" / "ReferenceRestServer.java"
MAIN_CLASS = "org.frazil.interop.rest.ReferenceRestServer"
SQLITE_JDBC = Path("/usr/share/java/sqlite-jdbc.jar")
# From pyspark's jars folder: Hadoop's client (HadoopFileIO, JdbcCatalog's default FileIO) and
# the logging it and Iceberg use (slf4j to log4j2).
PYSPARK_JARS = (
    "hadoop-client-api-*.jar",
    "hadoop-client-runtime-*.jar",
    "commons-logging-*.jar",
    "slf4j-api-*.jar",
    "log4j-slf4j2-impl-*.jar",
    "log4j-api-*.jar",
    "log4j-core-*.jar",
)
# On the class path beside the classes. The raw local file system: HadoopFileIO through the
# checksummed LocalFileSystem would leave a .crc file beside every metadata file.
CORE_SITE = """<?xml version="1.0"?>
<configuration>
  <property><name>fs.file.impl</name><value>org.apache.hadoop.fs.RawLocalFileSystem</value></property>
</configuration>
"""
LOG4J2 = """status = error
appender.err.type = Console
appender.err.name = err
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = %d{HH:mm:ss.SSS} %-5p %c{1}: %m%n
rootLogger.level = warn
rootLogger.appenderRef.err.ref = err
"""
READY = "READY "
START_TIMEOUT = 120.0  # seconds; a JVM on a loaded two-core machine can take a while


def _fail(message: str) -> NoReturn:
    pytest.fail(f"Java REST server: {message}", pytrace=False)


def _tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).exists():
        return str(Path(java_home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        _fail(f"`{name}` not found (JAVA_HOME unset or without it, and not on PATH): needs JDK 17")
    return found


def runtime_jars() -> list[Path]:
    """The jars the server runs with (see the module docstring)."""
    try:
        jars = [iceberg_spark_jars()["runtime"]]
    except ImportError:
        _fail("snowpark-connect-deps-iceberg==1.0.2 is not installed (pyproject `interop` extra)")
    except FileNotFoundError as error:
        _fail(str(error))
    spec = importlib.util.find_spec("pyspark")
    if spec is None or not spec.submodule_search_locations:
        _fail("pyspark 3.5 is not installed (pyproject `interop` extra)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "jars"
    for pattern in PYSPARK_JARS:
        found = sorted(folder.glob(pattern))
        if len(found) != 1:
            _fail(f"expected one {pattern} in {folder}, found {[p.name for p in found]}")
        jars.append(found[0])
    if not SQLITE_JDBC.is_file():
        _fail(f"{SQLITE_JDBC} is missing (apt-get install libxerial-sqlite-jdbc-java)")
    jars.append(SQLITE_JDBC)
    return jars


def compile_server(cache: Path, jars: list[Path]) -> tuple[Path, float]:
    """The server's classes (with core-site.xml and log4j2.properties) in ``cache/<hash>``,
    compiled unless already there; returns the folder and the seconds javac took (0 if cached).

    The hash covers the source, the resources and the class path's jar names, so an edit or a
    new jar recompiles. javac writes to a fresh folder renamed into place, so concurrent
    sessions (xdist workers) never see half a compilation."""
    digest = hashlib.sha256()
    for part in (SOURCE.read_bytes(), CORE_SITE.encode(), LOG4J2.encode()):
        digest.update(hashlib.sha256(part).digest())
    digest.update("\n".join(p.name for p in jars).encode())
    target = cache / digest.hexdigest()[:16]
    if (target / "org").is_dir():
        return target, 0.0
    cache.mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix="compile-", dir=cache))
    javac = _tool("javac")
    command = [javac, "-nowarn", "--release", "17", "-d", str(work)]
    command += ["-cp", os.pathsep.join(str(p) for p in jars), str(SOURCE)]
    started = time.monotonic()
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - started
    if done.returncode != 0:
        shutil.rmtree(work, ignore_errors=True)
        _fail(f"javac failed ({' '.join(command)}):\n{done.stdout}{done.stderr}")
    (work / "core-site.xml").write_text(CORE_SITE)
    (work / "log4j2.properties").write_text(LOG4J2)
    try:
        work.rename(target)
    except OSError:  # another session got there first: its classes are the same
        shutil.rmtree(work, ignore_errors=True)
    return target, seconds


@dataclass(frozen=True)
class Response:
    """One HTTP answer: ``status``, ``headers`` (lower-case names), ``body``."""

    status: int
    headers: Mapping[str, str]
    body: bytes

    def json(self) -> Any:
        if not self.body:
            raise AssertionError(f"HTTP {self.status} has no body to parse")
        return json.loads(self.body)


# Loopback only: never through a proxy the environment may name.
_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}))


def http_request(
    method: str,
    url: str,
    body: Any = None,
    headers: Mapping[str, str] | None = None,
    timeout: float = 60.0,
) -> Response:
    """Raw HTTP: ``body`` is sent as JSON unless it is bytes or str (sent as is)."""
    sent = dict(headers or {})
    data: bytes | None
    if body is None:
        data = None
    elif isinstance(body, bytes):
        data = body
    elif isinstance(body, str):
        data = body.encode()
    else:
        data = json.dumps(body).encode()
        sent.setdefault("Content-Type", "application/json")
    request = urllib.request.Request(url, data=data, method=method, headers=sent)
    try:
        with _OPENER.open(request, timeout=timeout) as answer:
            return Response(
                answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
            )
    except urllib.error.HTTPError as error:
        return Response(error.code, {k.lower(): v for k, v in error.headers.items()}, error.read())


class JavaRestServer:
    """A running ReferenceRestServer (see the module docstring for the interface)."""

    def __init__(
        self,
        *,
        process: subprocess.Popen[bytes],
        uri: str,
        root: Path,
        token: str | None,
        oauth_client: str | None,
        prefix: str | None,
        seconds_to_start: float,
    ) -> None:
        self._process = process
        self.uri = uri
        self.root = root
        self.warehouse = root / "warehouse"
        self.catalog_db = root / "catalog.db"
        self.token = token
        self.oauth_client = oauth_client
        self.prefix = prefix
        self.seconds_to_start = seconds_to_start

    def url(self, path: str) -> str:
        return self.uri + path

    def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Response:
        sent = dict(headers or {})
        if self.token is not None and "Authorization" not in sent:
            sent["Authorization"] = f"Bearer {self.token}"
        if sent.get("Authorization") == "":
            del sent["Authorization"]
        return http_request(method, self.url(path), body, sent)

    def _control(self, method: str, path: str, body: Any = None) -> Any:
        answer = http_request(method, self.url(path), body)
        if answer.status >= 300:
            raise AssertionError(f"{method} {path}: HTTP {answer.status} {answer.body!r}")
        return answer.json() if answer.body else None

    def add_fault(self, **spec: Any) -> int:
        body = {key.replace("_", "-"): value for key, value in spec.items()}
        fault_id: int = self._control("POST", "/_test/faults", body)["id"]
        return fault_id

    def faults(self) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = self._control("GET", "/_test/faults")["faults"]
        return listed

    def clear_faults(self) -> None:
        self._control("DELETE", "/_test/faults")

    def requests(self) -> list[dict[str, Any]]:
        listed: list[dict[str, Any]] = self._control("GET", "/_test/requests")["requests"]
        return listed

    def clear_requests(self) -> None:
        self._control("DELETE", "/_test/requests")

    def stderr(self) -> str:
        return (self.root / "server.err").read_text(errors="replace")

    @property
    def running(self) -> bool:
        return self._process.poll() is None

    def stop(self) -> None:
        """Close the server's stdin (it exits on EOF); kill it if it lingers."""
        if self._process.stdin is not None and not self._process.stdin.closed:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()


def start_server(
    classes: Path,
    jars: list[Path],
    root: Path,
    *,
    token: str | None = None,
    oauth_client: str | None = None,
    prefix: str | None = None,
    catalog_name: str = "reference",
    config_defaults: Mapping[str, str] | None = None,
    config_overrides: Mapping[str, str] | None = None,
    table_config: Mapping[str, str] | None = None,
) -> JavaRestServer:
    """Start a server on a fresh warehouse and catalog under ``root``; returns once it serves.

    ``config_defaults`` and ``config_overrides`` join ``/v1/config``'s ``defaults`` and
    ``overrides``; ``table_config`` is the ``config`` of every LoadTableResult."""
    if oauth_client is not None and token is None:
        raise ValueError("oauth_client needs a token to issue")
    root.mkdir(parents=True, exist_ok=True)
    (root / "warehouse").mkdir()
    command = [_tool("java"), "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1"]
    command += ["-cp", os.pathsep.join(str(p) for p in [classes, *jars]), MAIN_CLASS]
    command += ["--warehouse", str(root / "warehouse"), "--catalog-db", str(root / "catalog.db")]
    command += ["--catalog-name", catalog_name]
    for option, value in (("token", token), ("oauth-client", oauth_client), ("prefix", prefix)):
        if value is not None:
            command += [f"--{option}", value]
    for option, mapping in (
        ("config-defaults", config_defaults),
        ("config-overrides", config_overrides),
        ("table-config", table_config),
    ):
        if mapping:
            command += [f"--{option}", json.dumps(dict(mapping))]
    out_path, err_path = root / "server.out", root / "server.err"
    started = time.monotonic()
    with out_path.open("wb") as out, err_path.open("wb") as err:
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=out, stderr=err)
    deadline = started + START_TIMEOUT
    while True:
        line = out_path.read_text(errors="replace").partition("\n")
        if line[1] and line[0].startswith(READY):
            uri = line[0][len(READY) :].strip()
            break
        if process.poll() is not None or time.monotonic() > deadline:
            if process.poll() is None:
                process.kill()
            process.wait()
            why = f"exited with {process.returncode}" if process.returncode else "timed out"
            _fail(
                f"did not start ({why}): {' '.join(command)}\nstdout:\n{out_path.read_text()}"
                f"\nstderr:\n{err_path.read_text(errors='replace')[-8000:]}"
            )
        time.sleep(0.05)
    return JavaRestServer(
        process=process,
        uri=uri,
        root=root,
        token=token,
        oauth_client=oauth_client,
        prefix=prefix,
        seconds_to_start=time.monotonic() - started,
    )


@pytest.fixture(scope="session")
def java_rest_classpath(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> list[Path]:
    """The server's class path: its compiled classes (cached by source hash), then its jars."""
    jars = runtime_jars()
    cache = getattr(request.config, "cache", None)
    if cache is not None:
        folder = Path(cache.mkdir("rest-java"))
    else:  # -p no:cacheprovider: compile for this session only
        folder = tmp_path_factory.mktemp("rest-java-classes")
    classes, seconds = compile_server(folder, jars)
    if seconds:
        sys.stderr.write(f"\n[interop] javac ReferenceRestServer.java: {seconds:.1f}s\n")
    return [classes, *jars]


@pytest.fixture(scope="session")
def java_rest_server_factory(
    java_rest_classpath: list[Path],
    tmp_path_factory: pytest.TempPathFactory,
    request: pytest.FixtureRequest,
) -> Iterator[Callable[..., JavaRestServer]]:
    """``factory(token=None, oauth_client=None, prefix=None, catalog_name="reference",
    config_defaults=None, config_overrides=None, table_config=None)`` starts a server (stopped
    at the session's end); see :func:`start_server`."""
    started: list[JavaRestServer] = []
    classes, jars = java_rest_classpath[0], java_rest_classpath[1:]

    def factory(**options: Any) -> JavaRestServer:
        root = tmp_path_factory.mktemp("rest-java")
        server = start_server(classes, jars, root, **options)
        sys.stderr.write(f"\n[interop] Java REST server up in {server.seconds_to_start:.1f}s\n")
        started.append(server)
        return server

    yield factory
    died = [s for s in started if not s.running]
    for server in started:
        server.stop()
    failed = request.session.testsfailed > 0
    for server in started:
        if failed or server in died:
            sys.stderr.write(f"\n[interop] Java REST server {server.uri} stderr:\n")
            sys.stderr.write(server.stderr()[-20000:] + "\n")
    if died:
        _fail(f"{len(died)} server(s) exited during the session (their stderr is above)")


@pytest.fixture(scope="session")
def java_rest_server(java_rest_server_factory: Callable[..., JavaRestServer]) -> JavaRestServer:
    """The session's reference REST catalog server, without authentication."""
    return java_rest_server_factory()


@pytest.fixture
def java_rest(java_rest_server: JavaRestServer) -> Iterator[JavaRestServer]:
    """The session's server with no faults and an empty request log for this test."""
    java_rest_server.clear_faults()
    java_rest_server.clear_requests()
    yield java_rest_server
    java_rest_server.clear_faults()
