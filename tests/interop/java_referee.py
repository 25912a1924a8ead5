"""The Python half of the bridge to Apache Iceberg Java (tests/interop/java/Referee.java).

Values travel to Java and back as newline-separated text tokens in Iceberg's
internal representation (days, microseconds, unscaled decimals, hex bytes...),
so that thousands of values cost one py4j round trip. ``Referee.java``'s header
documents the token format; :func:`encode` and :func:`decode` here are its mirror.

Python-side values use the same types as ``frazil.values``: bool, int, float,
Decimal, date, time, datetime (naive for timestamp, aware for timestamptz), str,
uuid.UUID, bytes. :func:`to_internal` / :func:`from_internal` convert between those
and the internal representation (int days / micros), which is what the token
format and the Arrow arrays of the transform tests use.

:func:`local_spark_session` and :func:`iceberg_spark_jars` set up the JVM itself: the
interop tests' SparkSession (tests/interop/conftest.py) and the one that writes
benches/bench_read.py's tables (benches/read_table.py), so both run Java the same way.
This module imports only the standard library (pyspark when a session is made).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import struct
import sys
import uuid
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

NULL = "~"
EPOCH_DATE = dt.date(1970, 1, 1)
EPOCH = dt.datetime(1970, 1, 1)
EPOCH_TZ = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_DECIMAL = re.compile(r"decimal\((\d+),\s*(\d+)\)")
_FIXED = re.compile(r"fixed\[(\d+)\]")


@dataclass(frozen=True)
class JavaError:
    """Java threw for this one value; ``name`` is the exception's class name."""

    name: str


def kind(type_string: str) -> str:
    """The type's family: 'decimal' for every decimal(P,S), 'fixed' for fixed[L], else itself."""
    if _DECIMAL.fullmatch(type_string):
        return "decimal"
    if _FIXED.fullmatch(type_string):
        return "fixed"
    return type_string


def decimal_scale(type_string: str) -> int:
    match = _DECIMAL.fullmatch(type_string)
    assert match, type_string
    return int(match.group(2))


def decimal_precision(type_string: str) -> int:
    match = _DECIMAL.fullmatch(type_string)
    assert match, type_string
    return int(match.group(1))


def fixed_length(type_string: str) -> int:
    match = _FIXED.fullmatch(type_string)
    assert match, type_string
    return int(match.group(1))


def unscaled(value: Decimal, scale: int) -> int:
    """The exact unscaled integer of ``value`` at ``scale`` (no context rounding)."""
    sign, digits, exponent = value.as_tuple()
    assert isinstance(exponent, int), value
    number = int("".join(map(str, digits)) or "0")
    shift = exponent + scale
    if shift >= 0:
        number *= 10**shift
    else:
        number, rest = divmod(number, 10**-shift)
        assert rest == 0, f"{value} has more than {scale} fraction digits"
    return -number if sign else number


def make_decimal(unscaled_value: int, scale: int) -> Decimal:
    """The Decimal with exactly this unscaled value and scale (no context rounding)."""
    sign = 1 if unscaled_value < 0 else 0
    digits = tuple(int(c) for c in str(abs(unscaled_value)))
    return Decimal((sign, digits, -scale))


def to_internal(type_string: str, value: Any) -> Any:
    """A frazil Python value -> Iceberg's internal representation (days, micros, ...)."""
    if value is None:
        return None
    family = kind(type_string)
    if family == "date":
        return (value - EPOCH_DATE).days
    if family == "time":
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1_000_000 + (
            value.microsecond
        )
    if family == "timestamp":
        assert value.tzinfo is None
        return _micros(value - EPOCH)
    if family == "timestamptz":
        assert value.tzinfo is not None
        return _micros(value - EPOCH_TZ)
    return value


def from_internal(type_string: str, value: Any) -> Any:
    """Iceberg's internal representation -> the frazil Python value."""
    if value is None or isinstance(value, JavaError):
        return value
    family = kind(type_string)
    if family == "date":
        return EPOCH_DATE + dt.timedelta(days=value)
    if family == "time":
        return (dt.datetime.min + dt.timedelta(microseconds=value)).time()
    if family == "timestamp":
        return EPOCH + dt.timedelta(microseconds=value)
    if family == "timestamptz":
        return EPOCH_TZ + dt.timedelta(microseconds=value)
    return value


def _micros(delta: dt.timedelta) -> int:
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


def encode(type_string: str, value: Any) -> str:
    """An internal value -> its token."""
    if value is None:
        return NULL
    family = kind(type_string)
    if family == "boolean":
        assert isinstance(value, bool)
        return "true" if value else "false"
    if family in ("int", "long", "date", "time", "timestamp", "timestamptz"):
        assert isinstance(value, int) and not isinstance(value, bool)
        return str(value)
    if family == "float":
        return str(struct.unpack(">i", struct.pack(">f", value))[0])
    if family == "double":
        return str(struct.unpack(">q", struct.pack(">d", value))[0])
    if family == "decimal":
        return str(unscaled(value, decimal_scale(type_string)))
    if family == "string":
        return value.encode("utf-8").hex()
    if family == "uuid":
        return str(value)
    if family in ("fixed", "binary"):
        return bytes(value).hex()
    raise AssertionError(f"no token form for {type_string}")


def decode(type_string: str, token: str) -> Any:
    """A token -> the internal value (or a :class:`JavaError`)."""
    if token == NULL:
        return None
    if token.startswith("!"):
        return JavaError(token[1:])
    family = kind(type_string)
    if family == "boolean":
        assert token in ("true", "false"), token
        return token == "true"
    if family in ("int", "long", "date", "time", "timestamp", "timestamptz"):
        return int(token)
    if family == "float":
        return struct.unpack(">f", struct.pack(">i", int(token)))[0]
    if family == "double":
        return struct.unpack(">d", struct.pack(">q", int(token)))[0]
    if family == "decimal":
        return make_decimal(int(token), decimal_scale(type_string))
    if family == "string":
        return bytes.fromhex(token).decode("utf-8")
    if family == "uuid":
        return uuid.UUID(token)
    if family in ("fixed", "binary"):
        return bytes.fromhex(token)
    raise AssertionError(f"no token form for {type_string}")


def _join(items: Iterable[str]) -> str:
    items = list(items)
    for item in items:
        assert "\n" not in item, item
    return "\n".join(items)


def _split(text: str, expected: int) -> list[str]:
    items = text.split("\n") if expected else []
    assert len(items) == expected, f"Java returned {len(items)} results for {expected} inputs"
    return items


def transform_result_type(transform: str, source_type: str) -> str:
    """The Iceberg result type of a transform, for decoding Java's answer."""
    if transform.startswith("bucket") or transform in ("year", "month", "hour"):
        return "int"
    if transform == "day":
        return "date" if source_type == "date" else "int"
    return source_type


class Referee:
    """Iceberg Java 1.10.2, in bulk: wraps org.frazil.interop.Referee through py4j."""

    def __init__(self, jvm: Any) -> None:
        self.jvm = jvm
        self._cls = jvm.org.frazil.interop.Referee

    def iceberg_version(self) -> str:
        return str(self._cls.icebergVersion())

    def transform(self, transform: str, type_string: str, values: Sequence[Any]) -> list[Any]:
        """Java's ``Transforms.fromString(transform).bind(type)`` over internal values."""
        tokens = _join(encode(type_string, v) for v in values)
        out = self._cls.transform(transform, type_string, tokens)
        result_type = transform_result_type(transform, type_string)
        return [decode(result_type, t) for t in _split(out, len(values))]

    def to_bytes(self, type_string: str, values: Sequence[Any]) -> list[bytes | JavaError]:
        """``Conversions.toByteBuffer`` of each internal value."""
        out = self._cls.toBytes(type_string, _join(encode(type_string, v) for v in values))
        return [
            JavaError(t[1:]) if t.startswith("!") else bytes.fromhex(t)
            for t in _split(out, len(values))
        ]

    def from_bytes(self, type_string: str, data: Sequence[bytes]) -> list[Any]:
        """``Conversions.fromByteBuffer`` of each byte string, as internal values."""
        out = self._cls.fromBytes(type_string, _join(bytes(d).hex() for d in data))
        return [decode(type_string, t) for t in _split(out, len(data))]

    def hash(self, type_string: str, values: Sequence[Any]) -> list[int | JavaError]:
        """``BucketUtil.hash`` (Appendix B, sign bit kept) of each internal value."""
        out = self._cls.hash(type_string, _join(encode(type_string, v) for v in values))
        return [JavaError(t[1:]) if t.startswith("!") else int(t) for t in _split(out, len(values))]

    def to_json(self, type_string: str, values: Sequence[Any]) -> list[str | JavaError]:
        """``SingleValueParser.toJson`` of each internal value: JSON texts."""
        out = self._cls.toJson(type_string, _join(encode(type_string, v) for v in values))
        return [JavaError(t[1:]) if t.startswith("!") else t for t in _split(out, len(values))]

    def from_json(self, type_string: str, texts: Sequence[str]) -> list[Any]:
        """``SingleValueParser.fromJson`` of each JSON text, as internal values."""
        out = self._cls.fromJson(type_string, _join(texts))
        return [decode(type_string, t) for t in _split(out, len(texts))]

    def json_round_trip(self, type_json: Any, texts: Sequence[str]) -> list[str | JavaError]:
        """For any type (nested too, in Appendix C JSON form): Java's
        ``toJson(type, fromJson(type, text))`` of each JSON text."""
        schema = {
            "type": "struct",
            "schema-id": 0,
            "fields": [{"id": 1_000_000, "name": "v", "required": False, "type": type_json}],
        }
        out = self._cls.jsonRoundTrip(json.dumps(schema), 1_000_000, _join(texts))
        return [JavaError(t[1:]) if t.startswith("!") else t for t in _split(out, len(texts))]


class Warehouse:
    """What Java wrote in the Hadoop catalog, for tests that read Java's files.

    Hadoop catalog layout: ``<warehouse>/<namespace>/<table>/metadata/v<N>.metadata.json``
    with ``version-hint.text`` naming the current N; manifest lists ``snap-*.avro`` and
    manifests ``*-m<k>.avro`` beside them; data files under ``data/``.
    """

    def __init__(self, spark: Any, java: Any, root: Path, catalog: str) -> None:
        self.spark = spark
        self.java = java
        self.root = root
        self.catalog = catalog

    def sql(self, statement: str) -> list[Any]:
        """Runs Spark SQL and returns the collected rows."""
        return list(self.spark.sql(statement).collect())

    def name(self, namespace: str, table: str) -> str:
        """The table's name in Spark SQL."""
        return f"{self.catalog}.{namespace}.{table}"

    def location(self, namespace: str, table: str) -> Path:
        return self.root / namespace / table

    def metadata_files(self, namespace: str, table: str) -> list[Path]:
        """All ``v<N>.metadata.json`` files, oldest first."""
        folder = self.location(namespace, table) / "metadata"
        files = list(folder.glob("v*.metadata.json"))
        return sorted(files, key=lambda p: int(p.name[1:].split(".")[0]))

    def current_metadata_file(self, namespace: str, table: str) -> Path:
        folder = self.location(namespace, table) / "metadata"
        version = (folder / "version-hint.text").read_text().strip()
        return folder / f"v{version}.metadata.json"

    def current_metadata(self, namespace: str, table: str) -> dict[str, Any]:
        """The current table metadata JSON, parsed."""
        loaded: dict[str, Any] = json.loads(
            self.current_metadata_file(namespace, table).read_text()
        )
        return loaded

    def manifest_lists(self, namespace: str, table: str) -> list[Path]:
        folder = self.location(namespace, table) / "metadata"
        return sorted(folder.glob("snap-*.avro"))

    def manifests(self, namespace: str, table: str) -> list[Path]:
        folder = self.location(namespace, table) / "metadata"
        return sorted(p for p in folder.glob("*.avro") if not p.name.startswith("snap-"))

    def data_files(self, namespace: str, table: str) -> list[Path]:
        return sorted((self.location(namespace, table) / "data").rglob("*.parquet"))

    def java_catalog(self) -> Any:
        """An org.apache.iceberg.hadoop.HadoopCatalog over the same warehouse."""
        conf = self.spark._jsc.hadoopConfiguration()
        return self.java.org.apache.iceberg.hadoop.HadoopCatalog(conf, str(self.root))

    def java_table(self, namespace: str, table: str) -> Any:
        """The table as an org.apache.iceberg.Table (Java API)."""
        # TableIdentifier.of is varargs, which py4j cannot call.
        identifier = self.java.org.apache.iceberg.catalog.TableIdentifier.parse(
            f"{namespace}.{table}"
        )
        return self.java_catalog().loadTable(identifier)


@dataclass(frozen=True)
class JavaPlanError:
    """Java refused the filter (ExpressionParser or the scan threw): class and message."""

    message: str


@dataclass(frozen=True)
class FileMetrics:
    """One data file's metrics for one field, as Java's planFiles() reports them."""

    location: str
    record_count: int
    value_count: int | None
    null_count: int | None
    nan_count: int | None
    lower: bytes | None
    upper: bytes | None


Plan = dict[str, tuple[str, ...]]
"""A planned scan: data file location -> its delete files, sorted; a deletion vector is
``"<puffin location>#<content offset>#<content size>"``."""

_RS = "\u001e"
_US = "\u001f"


class PlanReferee:
    """Iceberg Java 1.10.2's scan planning in bulk: wraps org.frazil.interop.PlanReferee
    (tests/interop/java/PlanReferee.java), one py4j call for a whole battery of filters."""

    def __init__(self, spark: Any) -> None:
        self.jvm = spark._jvm
        self._cls = self.jvm.org.frazil.interop.PlanReferee
        self._io = self.jvm.org.apache.iceberg.hadoop.HadoopFileIO(spark._jsc.hadoopConfiguration())
        # Every filter re-reads the same manifests: let Java keep their bytes in memory.
        properties = self.jvm.java.util.HashMap()
        properties.put("io.manifest.cache-enabled", "true")
        self._io.initialize(properties)

    def load(self, metadata_location: str) -> Any:
        """The table as Java reads it from this metadata file (StaticTableOperations)."""
        return self._cls.load(metadata_location, self._io)

    def plan_all(
        self, table: Any, selection: str, filters: Sequence[str]
    ) -> list[Plan | JavaPlanError]:
        """``table.newScan()`` with the snapshot ``selection`` ("current", "snapshot:<id>",
        "ref:<name>", "asof:<ms>") and each filter (ExpressionParser JSON), ``planFiles()``."""
        text = self._cls.planAll(table, selection, _join(filters))
        out: list[Plan | JavaPlanError] = []
        for line in _split(text, len(filters)):
            if line.startswith("!"):
                out.append(JavaPlanError(line[1:]))
                continue
            plan: Plan = {}
            for task in line.split(_RS) if line else []:
                data, *deletes = task.split(_US)
                assert data not in plan, f"Java planned {data} twice"
                plan[data] = tuple(deletes)
            out.append(plan)
        return out

    def file_metrics(self, table: Any, selection: str, field_id: int) -> dict[str, FileMetrics]:
        """Every data file of the selected snapshot with its metrics for ``field_id``."""
        text = self._cls.fileStats(table, selection, field_id)
        out = {}
        for line in text.split("\n") if text else []:
            location, records, values, nulls, nans, lower, upper = line.split("\t")

            def number(token: str) -> int | None:
                return None if token == NULL else int(token)

            def data(token: str) -> bytes | None:
                return None if token == NULL else bytes.fromhex(token)

            out[location] = FileMetrics(
                location,
                int(records),
                number(values),
                number(nulls),
                number(nans),
                data(lower),
                data(upper),
            )
        return out

    def delete_column_sizes(
        self, table: Any, selection: str
    ) -> dict[str, dict[str, dict[int, int] | None]]:
        """Per data file of the selected snapshot planned with column stats: its delete
        files' column sizes (None where the delete file has none)."""
        text = self._cls.deleteColumnSizes(table, selection)
        out: dict[str, dict[str, dict[int, int] | None]] = {}
        for line in text.split("\n") if text else []:
            data, *tokens = line.split(_US)
            deletes: dict[str, dict[int, int] | None] = {}
            for location, sizes in zip(tokens[0::2], tokens[1::2], strict=True):
                deletes[location] = (
                    None
                    if sizes == NULL
                    else {int(k): int(v) for k, v in (p.split("=") for p in sizes.split(",") if p)}
                )
            out[data] = deletes
        return out

    def plan_tasks(
        self, table: Any, locations: Sequence[str], target: int, lookback: int, cost: int
    ) -> tuple[list[list[tuple[str, int, int]]], int]:
        """``TableScanUtil.planTasks(splitFiles(tasks, target), target, lookback, cost)`` over
        the current snapshot's tasks in the order of ``locations``: the combined tasks' pieces
        (location, start, length), and the number of pieces splitFiles made."""
        text = self._cls.planTasks(table, _join(locations), target, lookback, cost)
        count, *lines = text.split("\n")
        groups = []
        for line in lines:
            pieces = []
            for piece in line.split(_RS):
                location, start, length = piece.split(_US)
                pieces.append((location, int(start), int(length)))
            groups.append(pieces)
        return groups, int(count)


# ------------------------------------------------------------------------ the SparkSession

ICEBERG_VERSION = "1.10.2"
SCALA = "2.12"  # pyspark 3.5 from PyPI is built for Scala 2.12

_LOG4J2 = """\
rootLogger.level = error
rootLogger.appenderRef.stderr.ref = console
appender.console.type = Console
appender.console.name = console
appender.console.target = SYSTEM_ERR
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = %d{HH:mm:ss} %p %c{1}: %m%n
"""


def iceberg_spark_jars() -> dict[str, Path]:
    """The Iceberg Spark ``runtime`` and ``extensions`` jars of ``ICEBERG_VERSION`` from the
    PyPI package snowpark-connect-deps-iceberg (pyproject's `interop` extra).

    Raises ImportError when that package is missing, FileNotFoundError when a jar is."""
    import snowpark_connect_deps_iceberg as deps

    folder = Path(deps.get_jars_dir())
    jars = {
        "runtime": folder / f"iceberg-spark-runtime-3.5_{SCALA}-{ICEBERG_VERSION}.jar",
        "extensions": folder / f"iceberg-spark-extensions-3.5_{SCALA}-{ICEBERG_VERSION}.jar",
    }
    for jar in jars.values():
        if not jar.is_file():
            found = sorted(p.name for p in folder.glob("*.jar"))
            raise FileNotFoundError(f"{jar} is missing (pyproject `interop` extra); found {found}")
    return jars


def local_spark_session(
    *,
    app_name: str,
    driver_memory: str,
    class_path: Sequence[Path],
    scratch: Path,
    catalog: str,
    warehouse: Path,
    catalog_options: Mapping[str, str] | None = None,
) -> Any:
    """A local SparkSession (master ``local[2]``, loopback only, no UI, UTC) with Iceberg's SQL
    extensions and a Hadoop catalog named ``catalog`` over ``warehouse`` (plus
    ``catalog_options``, e.g. ``{"cache-enabled": "false"}``).

    In local mode the driver is the only JVM: ``class_path`` (the Iceberg jars, compiled
    helpers, JDBC drivers) goes on its class path. Spark's scratch files and the log4j2
    configuration (errors only, to stderr) go under ``scratch``."""
    from pyspark.sql import SparkSession

    log4j = scratch / "log4j2.properties"
    log4j.write_text(_LOG4J2)
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    # Python workers (only used by Python UDFs) must run this interpreter.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = (
        SparkSession.builder.master("local[2]")
        .appName(app_name)
        .config("spark.driver.memory", driver_memory)
        .config("spark.driver.extraClassPath", os.pathsep.join(str(p) for p in class_path))
        .config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{log4j}")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.sql.shuffle.partitions", "2")
        .config("spark.default.parallelism", "2")
        .config("spark.local.dir", str(scratch))
        .config("spark.sql.warehouse.dir", str(scratch / "spark-warehouse"))
        .config("spark.sql.session.timeZone", "UTC")
        .config(
            "spark.sql.extensions",
            "org.apache.iceberg.spark.extensions.IcebergSparkSessionExtensions",
        )
        .config(f"spark.sql.catalog.{catalog}", "org.apache.iceberg.spark.SparkCatalog")
        .config(f"spark.sql.catalog.{catalog}.type", "hadoop")
        .config(f"spark.sql.catalog.{catalog}.warehouse", str(warehouse))
    )
    for key, value in (catalog_options or {}).items():
        builder = builder.config(f"spark.sql.catalog.{catalog}.{key}", value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session
