"""Spark 4.3 without any Iceberg jar, in its own virtual environment: tests/run makes it
(pyproject's ``spark4-test`` extra, frazil installed as its abi3 wheel) and runs
``pytest tests/spark4`` there; ``bash tests/run --spark4`` runs only these tests. The main
environment's pytest never collects this directory (pyproject ``testpaths``).

Fixtures (session-scoped):

- ``frazil_catalog_config``: ``$FRAZIL_CONFIG``, a configuration naming the catalog ``spark4``
  (SQLite in a temporary directory), set before ``spark`` starts so its workers see it.
- ``spark``: a local SparkSession (``local[2,2]``: two threads, a failed task retried once, as
  on a cluster; loopback, no UI, UTC) whose Python workers
  run this interpreter.
- ``executor_archive``: this environment packed by venv-pack, what ``spark.archives`` ships.
- ``spark_cluster``: :class:`spark4_cluster.Cluster`, a standalone master and worker on
  loopback started from the pyspark package; ``spark_cluster.run("job_x.py")`` runs a driver
  script on it in its own process and returns its JSON result.

Every test here is marked ``spark4``.
"""

from __future__ import annotations

import importlib.metadata
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from spark4_cluster import Cluster, ClusterError

SPARK_VERSION = "4.3.0"
HERE = Path(__file__).resolve().parent


def _installed(name: str) -> str | None:
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


if _installed("pyspark") != SPARK_VERSION:
    raise pytest.UsageError(
        f"tests/spark4 needs pyspark {SPARK_VERSION} (found {_installed('pyspark')} in "
        f"{sys.prefix}): run them in the Spark 4 environment, `bash tests/run --spark4`"
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if HERE in Path(str(item.path)).resolve().parents:
            item.add_marker(pytest.mark.spark4)


def _log(message: str) -> None:
    sys.stderr.write(f"\n[spark4] {message}\n")


@pytest.fixture(scope="session")
def frazil_catalog_config(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A frazil configuration file naming the catalog ``spark4`` (SQLite and a warehouse in a
    temporary directory), as ``$FRAZIL_CONFIG`` for this process and, since the ``spark``
    session starts after it, for every Python worker Spark forks."""
    scratch = tmp_path_factory.mktemp("frazil-config")
    config = scratch / "frazil.yaml"
    config.write_text(
        "catalog:\n"
        "  spark4:\n"
        "    type: sql\n"
        f"    uri: sqlite:///{scratch / 'catalog.db'}\n"
        f"    warehouse: {scratch / 'warehouse'}\n"
    )
    previous = os.environ.get("FRAZIL_CONFIG")
    os.environ["FRAZIL_CONFIG"] = str(config)
    try:
        yield config
    finally:
        if previous is None:
            os.environ.pop("FRAZIL_CONFIG", None)
        else:
            os.environ["FRAZIL_CONFIG"] = previous


@pytest.fixture(scope="session")
def spark(tmp_path_factory: pytest.TempPathFactory, frazil_catalog_config: Path) -> Iterator[Any]:
    """One local Spark 4.3 session for the run (the cluster jobs run in their own processes)."""
    from pyspark.sql import SparkSession

    scratch = tmp_path_factory.mktemp("spark4-local")
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    os.environ["PYSPARK_PYTHON"] = sys.executable
    started = time.monotonic()
    session = (
        SparkSession.builder.master("local[2,2]")
        .appName("frazil-spark4")
        .config("spark.driver.memory", "1g")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.local.dir", str(scratch))
        .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
        .getOrCreate()
    )
    session.sparkContext.setLogLevel("ERROR")
    if session.version != SPARK_VERSION:
        pytest.fail(f"expected Spark {SPARK_VERSION}, the session runs {session.version}")
    _log(f"local Spark {session.version} session up in {time.monotonic() - started:.1f}s")
    try:
        yield session
    finally:
        session.stop()


@pytest.fixture(scope="session")
def executor_archive(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This environment packed by venv-pack: executors unpack it as ``./environment``.

    Without pyspark's jars (executors run Spark's own; their Python workers import pyspark from
    Spark's ``python/lib/pyspark.zip``): 450 MB instead of 930 MB to fetch and unpack, on the
    driver and in each executor. A ``.tar.gz`` without compression (``--compress-level 0``): on
    loopback gzip would only cost CPU (25 s or more). Not a plain ``.tar``: Spark 4.3 unpacks
    one without the executable bits and refuses the venv's ``bin/python3 -> python ->
    /abs/python3.11`` symlinks (the target leaves the archive); a ``.tar.gz`` keeps both."""
    import frazil

    if Path(sys.prefix) not in Path(frazil.__file__).resolve().parents:
        pytest.fail(
            f"frazil is imported from {frazil.__file__}, not installed in {sys.prefix}: the "
            "archive would ship without it (tests/run installs the wheel; unset PYTHONPATH)"
        )
    archive = tmp_path_factory.mktemp("archive") / "environment.tar.gz"
    venv_pack = str(Path(sys.prefix) / "bin" / "venv-pack")
    command = [
        venv_pack,
        "-p", sys.prefix,
        "-o", str(archive),
        "--exclude", "lib/python*/site-packages/pyspark/jars/*",
        "--compress-level", "0",
        "-q",
    ]  # fmt: skip
    started = time.monotonic()
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.fail(f"venv-pack failed:\n{done.stdout}{done.stderr}")
    _log(f"venv-pack: {archive.stat().st_size / 1e6:.0f} MB in {time.monotonic() - started:.1f}s")
    return archive


@pytest.fixture(scope="session")
def spark_cluster(
    tmp_path_factory: pytest.TempPathFactory, executor_archive: Path
) -> Iterator[Cluster]:
    """A standalone master and worker on loopback, stopped (process groups killed) at the end."""
    cluster = Cluster(tmp_path_factory.mktemp("spark4-cluster"), executor_archive)
    started = time.monotonic()
    try:
        cluster.start()
    except ClusterError as error:
        cluster.stop()
        pytest.fail(str(error), pytrace=False)
    _log(f"standalone cluster at {cluster.master_url} up in {time.monotonic() - started:.1f}s")
    try:
        yield cluster
    finally:
        started = time.monotonic()
        cluster.stop()
        _log(f"standalone cluster stopped in {time.monotonic() - started:.1f}s")
