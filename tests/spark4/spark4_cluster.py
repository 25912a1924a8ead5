"""A real Spark standalone cluster on loopback, started from the pyspark package, and the jobs
that run on it.

:class:`Cluster` starts a master and one worker (``bin/spark-class ...deploy.master.Master`` and
``...deploy.worker.Worker``, as ``sbin/start-*.sh`` would, but in the foreground so that the test
owns their process group), with the web UIs on free loopback ports and the REST submission server
off. Executors are separate JVMs started by the worker, and their Python workers run the
interpreter of a venv-pack archive of the Spark 4 environment shipped with ``spark.archives``,
as README "PySpark" tells users to do.

A SparkContext is one per process, and the tests' local ``spark`` session already holds one, so
each cluster job is a driver script (``tests/spark4/job_*.py``) run in its own process by
:meth:`Cluster.run`: it builds its session with :func:`cluster_session` and ends with
:func:`emit`, whose JSON :meth:`Cluster.run` returns.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
# How the job learns where the cluster is (JSON: master URL, archive, scratch directory).
CLUSTER_ENV = "FRAZIL_TEST_CLUSTER"
RESULT_PREFIX = "FRAZIL-JOB-RESULT "
# Variables of the test process that must not reach the cluster or the job's driver: another
# PYTHONPATH (e.g. a source checkout of frazil) would shadow the archive's frazil.
_SCRUBBED = (
    "PYTHONPATH",
    "PYSPARK_PYTHON",
    "PYSPARK_DRIVER_PYTHON",
    "SPARK_HOME",
    "FRAZIL_THREADS",
)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def spark_home() -> Path:
    """The pyspark package: pip's pyspark is a whole Spark distribution (bin/, jars/)."""
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def _clean_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in _SCRUBBED}
    env["SPARK_LOCAL_IP"] = "127.0.0.1"
    return env


class ClusterError(RuntimeError):
    pass


def _processes_in(groups: set[int]) -> list[int]:
    """The live (not zombie) processes whose process group is one of ``groups``."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        # After the command: state, ppid, pgrp (proc(5)).
        if fields[0] != "Z" and int(fields[2]) in groups:
            found.append(int(stat.parent.name))
    return found


class Cluster:
    """A standalone master and one worker (2 cores, 2 GB) on 127.0.0.1."""

    def __init__(self, scratch: Path, archive: Path) -> None:
        self.scratch = scratch
        self.archive = archive
        self.port = free_port()
        self.master_url = f"spark://127.0.0.1:{self.port}"
        self._processes: list[tuple[str, subprocess.Popen[bytes], Path]] = []

    def _spawn(self, name: str, args: list[str], opts: str) -> None:
        env = _clean_env()
        env["SPARK_HOME"] = str(spark_home())
        env["SPARK_MASTER_OPTS" if name == "master" else "SPARK_WORKER_OPTS"] = opts
        log = self.scratch / f"{name}.log"
        with log.open("wb") as out:
            process = subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), *args],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=self.scratch,
                # Its own process group: stop() kills the daemon, its executors and their
                # Python workers together.
                start_new_session=True,
            )
        self._processes.append((name, process, log))

    def _wait_for(self, name: str, text: str, timeout: float) -> None:
        _, process, log = next(p for p in self._processes if p[0] == name)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if text in log.read_text(errors="replace"):
                return
            if process.poll() is not None:
                break
            time.sleep(0.2)
        raise ClusterError(
            f"the standalone {name} did not log {text!r} within {timeout}s "
            f"(exit status {process.poll()}); its log ({log}) ends:\n{self.log_tail(name)}"
        )

    def log_tail(self, name: str, lines: int = 40) -> str:
        log = self.scratch / f"{name}.log"
        return "\n".join(log.read_text(errors="replace").splitlines()[-lines:])

    def start(self, timeout: float = 120) -> None:
        no_ui = "-Dspark.ui.enabled=false -Dspark.ui.showConsoleProgress=false"
        self._spawn(
            "master",
            [
                "org.apache.spark.deploy.master.Master",
                "--host", "127.0.0.1",
                "--port", str(self.port),
                "--webui-port", str(free_port()),
            ],
            f"{no_ui} -Dspark.master.rest.enabled=false -Dspark.master.rest.port={free_port()}",
        )  # fmt: skip
        self._wait_for("master", f"Starting Spark master at {self.master_url}", timeout)
        work_dir = self.scratch / "work"
        work_dir.mkdir()
        self._spawn(
            "worker",
            [
                "org.apache.spark.deploy.worker.Worker",
                "--host", "127.0.0.1",
                "--port", str(free_port()),
                "--webui-port", str(free_port()),
                "--work-dir", str(work_dir),
                "--cores", "2",
                "--memory", "2g",
                self.master_url,
            ],
            no_ui,
        )  # fmt: skip
        self._wait_for("worker", "Successfully registered with master", timeout)

    def stop(self) -> None:
        for _, process, _ in reversed(self._processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for _, process, _ in self._processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            # What the daemon started and left behind (executors, Python workers).
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        groups = {process.pid for _, process, _ in self._processes}
        deadline = time.monotonic() + 10
        while (left := _processes_in(groups)) and time.monotonic() < deadline:
            time.sleep(0.1)
        if left:
            raise ClusterError(f"processes of the cluster outlived it: {left}")

    def run(
        self, job: str, *args: str, env: dict[str, str] | None = None, timeout: float = 600
    ) -> Any:
        """Run ``tests/spark4/<job>`` as a driver on this cluster (with this interpreter, in
        its own process) and return the JSON it emitted."""
        script = HERE / job
        if not script.is_file():
            raise ClusterError(f"no driver script {script}")
        job_env = _clean_env()
        job_env[CLUSTER_ENV] = json.dumps(
            {"master": self.master_url, "archive": str(self.archive), "scratch": str(self.scratch)}
        )
        job_env.update(env or {})
        started = time.monotonic()
        done = subprocess.run(
            [sys.executable, str(script), *args],
            capture_output=True,
            text=True,
            env=job_env,
            cwd=self.scratch,
            timeout=timeout,
            check=False,
        )
        results = [
            line[len(RESULT_PREFIX) :]
            for line in done.stdout.splitlines()
            if line.startswith(RESULT_PREFIX)
        ]
        if done.returncode != 0 or len(results) != 1:
            raise ClusterError(
                f"cluster job {job} failed (exit status {done.returncode}, "
                f"{len(results)} results)\nstdout:\n{done.stdout[-5000:]}\n"
                f"stderr:\n{done.stderr[-10000:]}\nworker log:\n{self.log_tail('worker')}"
            )
        sys.stderr.write(f"\n[spark4] cluster job {job} took {time.monotonic() - started:.1f}s\n")
        return json.loads(results[0])


# The job side (driver scripts).


def cluster_session(app_name: str, conf: dict[str, str] | None = None) -> Any:
    """A SparkSession on the cluster named by $FRAZIL_TEST_CLUSTER: the driver runs this
    interpreter, executors the archive's (``spark.archives`` unpacked as ``environment``)."""
    from pyspark.sql import SparkSession

    cluster = json.loads(os.environ[CLUSTER_ENV])
    scratch = Path(cluster["scratch"])
    os.environ["SPARK_LOCAL_IP"] = "127.0.0.1"
    # Python workers of executors run the shipped interpreter; the driver is this one.
    os.environ["PYSPARK_PYTHON"] = "./environment/bin/python"
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    local_dir = scratch / f"driver-{os.getpid()}"
    local_dir.mkdir()
    builder = (
        SparkSession.builder.master(cluster["master"])
        .appName(app_name)
        .config("spark.archives", f"{cluster['archive']}#environment")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.memory", "512m")
        .config("spark.executor.memory", "1g")
        # One executor JVM with both of the worker's cores.
        .config("spark.executor.cores", "2")
        .config("spark.cores.max", "2")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.local.dir", str(local_dir))
    )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def emit(result: Any) -> None:
    """The job's result, for :meth:`Cluster.run`."""
    sys.stdout.write(RESULT_PREFIX + json.dumps(result) + "\n")
    sys.stdout.flush()
