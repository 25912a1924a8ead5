"""The Java referee: Apache Iceberg Java 1.10.2 running in one local PySpark session.

Fixtures (all session-scoped, so the JVM starts once per test run):

- ``spark``: a local SparkSession (master local[2]) with the Iceberg runtime and SQL
  extensions, and a Hadoop catalog named by ``catalog`` whose warehouse is ``warehouse``.
- ``java``: ``spark._jvm``, the py4j view of the driver JVM (``java.org.apache.iceberg...``).
- ``referee``: :class:`java_referee.Referee`, our Java helper class
  (tests/interop/java/Referee.java, compiled with javac at session start) which runs
  Iceberg's transforms, Conversions, BucketUtil and SingleValueParser over many values
  in one call.
- ``iceberg_jars``: the jar folder of snowpark-connect-deps-iceberg.
- ``tables``: :class:`Warehouse`, helpers to find what Java wrote for a table (metadata
  JSON, manifest lists, manifests, data files) and to load it through the Java API.
- ``plan_referee``: :class:`java_referee.PlanReferee`, Java's ``planFiles()`` for a whole
  battery of filters in one call (tests/interop/java/PlanReferee.java).
- ``scan_tables``: the tables of tests/interop/scan_tables.py (v1, v2, v3; every transform,
  partition evolution, every type, deletes of every kind, branches and tags), built once.
- ``java_rest_server``, ``java_rest_server_factory``, ``java_rest``: a reference Iceberg REST
  catalog server, Iceberg Java's CatalogHandlers over a JdbcCatalog in its own JVM (no Spark),
  see tests/interop/_java_rest.py.

Everything comes from PyPI packages installed by tests/run plus the machine's JDK 17;
a missing piece is a test failure with a clear message, never a skip.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NoReturn

import pytest
from _java_rest import (  # noqa: F401  (session fixtures of the reference REST server)
    java_rest,
    java_rest_classpath,
    java_rest_server,
    java_rest_server_factory,
)
from java_referee import (
    ICEBERG_VERSION,
    PlanReferee,
    Referee,
    Warehouse,
    iceberg_spark_jars,
    local_spark_session,
)
from scan_tables import ScanTable, build_all

HERE = Path(__file__).resolve().parent
CATALOG = "ref"


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Every test under tests/interop talks to Java: mark it so `-m "not interop"` works.
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.interop)


def _fail(message: str) -> NoReturn:
    pytest.fail(f"Java interop harness: {message}", pytrace=False)


def _tool(name: str) -> str:
    java_home = os.environ.get("JAVA_HOME")
    if java_home and (Path(java_home) / "bin" / name).exists():
        return str(Path(java_home) / "bin" / name)
    found = shutil.which(name)
    if found is None:
        _fail(
            f"`{name}` not found (JAVA_HOME unset or without it, and not on PATH). "
            "The interop tests need a JDK 17 (e.g. apt-get install openjdk-17-jdk-headless)."
        )
    return found


@pytest.fixture(scope="session")
def iceberg_jars() -> dict[str, Path]:
    """The Iceberg Spark runtime and extensions jars (Scala 2.12) from PyPI."""
    try:
        return iceberg_spark_jars()
    except ImportError:
        _fail("snowpark-connect-deps-iceberg==1.0.2 is not installed (pyproject `interop` extra)")
    except FileNotFoundError as error:
        _fail(str(error))


# The JDBC drivers of Java's JdbcCatalog (Debian's libxerial-sqlite-jdbc-java and
# libpostgresql-jdbc-java, installed by tests/run), for tests/interop/test_catalog_parity.py.
JDBC_JARS = ("/usr/share/java/sqlite-jdbc.jar", "/usr/share/java/postgresql.jar")


def _jdbc_jars() -> list[Path]:
    jars = [Path(p) for p in JDBC_JARS]
    missing = [str(p) for p in jars if not p.is_file()]
    if missing:
        _fail(
            f"JDBC drivers missing: {missing} (apt-get install libxerial-sqlite-jdbc-java "
            "libpostgresql-jdbc-java; tests/run does)"
        )
    return jars


@pytest.fixture(scope="session")
def referee_classes(
    tmp_path_factory: pytest.TempPathFactory, iceberg_jars: dict[str, Path]
) -> Path:
    """tests/interop/java/*.java compiled against the Iceberg runtime jar."""
    javac = _tool("javac")
    out = tmp_path_factory.mktemp("referee-classes")
    sources = sorted(str(p) for p in (HERE / "java").glob("*.java"))
    command = [javac, "-nowarn", "-d", str(out), "-cp", str(iceberg_jars["runtime"]), *sources]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        _fail(f"javac failed ({' '.join(command)}):\n{done.stdout}{done.stderr}")
    return out


@pytest.fixture(scope="session")
def warehouse(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The Hadoop catalog's warehouse directory (fresh for each test run)."""
    return tmp_path_factory.mktemp("warehouse")


@pytest.fixture(scope="session")
def catalog() -> str:
    """The name of the Iceberg catalog in Spark SQL: ``f"{catalog}.db.table"``."""
    return CATALOG


@pytest.fixture(scope="session")
def spark(
    tmp_path_factory: pytest.TempPathFactory,
    iceberg_jars: dict[str, Path],
    referee_classes: Path,
    warehouse: Path,
    catalog: str,
) -> Iterator[Any]:
    """One local SparkSession with Iceberg Java for the whole test run."""
    _tool("java")
    if importlib.util.find_spec("pyspark") is None:
        _fail("pyspark 3.5 is not installed (pyproject `interop` extra)")
    started = time.monotonic()
    session = local_spark_session(
        app_name="frazil-interop",
        driver_memory="1g",
        class_path=[
            iceberg_jars["runtime"],
            iceberg_jars["extensions"],
            referee_classes,
            *_jdbc_jars(),
        ],
        scratch=tmp_path_factory.mktemp("spark"),
        catalog=catalog,
        warehouse=warehouse,
    )
    version = session._jvm.org.frazil.interop.Referee.icebergVersion()
    if version != ICEBERG_VERSION:
        _fail(f"expected Iceberg Java {ICEBERG_VERSION} on the driver, found {version}")
    elapsed = time.monotonic() - started
    sys.stderr.write(f"\n[interop] SparkSession with Iceberg {version} up in {elapsed:.1f}s\n")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def java(spark: Any) -> Any:
    """The driver JVM through py4j: ``java.org.apache.iceberg.types.Types.LongType.get()``."""
    return spark._jvm


@pytest.fixture(scope="session")
def referee(java: Any) -> Referee:
    """Iceberg Java's transforms, Conversions, BucketUtil and SingleValueParser in bulk."""
    return Referee(java)


@pytest.fixture(scope="session")
def tables(spark: Any, java: Any, warehouse: Path, catalog: str) -> Warehouse:
    """Helpers over the Hadoop catalog's warehouse (see :class:`Warehouse`)."""
    return Warehouse(spark, java, warehouse, catalog)


@pytest.fixture(scope="session")
def plan_referee(spark: Any) -> PlanReferee:
    """Iceberg Java's scan planning, a battery of filters per py4j call."""
    return PlanReferee(spark)


@pytest.fixture(scope="session")
def scan_tables(tables: Warehouse) -> dict[str, ScanTable]:
    """The scan-planning parity tables (tests/interop/scan_tables.py), by name."""
    started = time.monotonic()
    built = build_all(tables)
    sys.stderr.write(
        f"\n[interop] scan tables built in {time.monotonic() - started:.1f}s: "
        + ", ".join(f"{t.name} {t.seconds_to_build:.1f}s" for t in built.values())
        + "\n"
    )
    return built
