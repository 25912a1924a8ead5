"""frazil.spark.planning's options and Java's AUTO heuristic, without Spark (issue 23,
"Distributed planning").

Java's ``BaseDistributedDataScan`` (1.10): ``shouldPlanLocally`` is true for LOCAL, for
DISTRIBUTED only when there is no manifest, and for AUTO when the remote parallelism is at most
the local one, or there are at most 2x local-parallelism manifests, or they hold at most
local-parallelism x 128 MB; deletes are planned locally also when the mode is AUTO and equality
deletes may exist (delete manifests match and the snapshot's ``total-equality-deletes`` is
missing or not "0"), data also when the mode is AUTO and column stats are loaded (equality
deletes may exist, or the scan returns column stats).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any

import pytest
from frazil.errors import ValidationError
from frazil.spark import planning
from frazil.spark.planning import (
    DATA_PLANNING_MODE,
    DELETE_PLANNING_MODE,
    LOCAL_PLANNING_MAX_SLOT_SIZE,
    Decision,
    decide,
    plan_locally,
    planning_mode,
)
from hypothesis import given
from hypothesis import strategies as st

MB = 1024 * 1024


@dataclass
class _Table:
    properties: dict[str, Any] = field(default_factory=dict)


@dataclass
class _Scan:
    """What planning_mode reads of a DataScan."""

    options: dict[str, Any] = field(default_factory=dict)
    table: _Table = field(default_factory=_Table)


def test_importing_planning_does_not_import_pyspark() -> None:
    import subprocess

    assert planning.__name__ == "frazil.spark.planning"
    code = "import frazil.spark.planning, sys; print('pyspark' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("name", [DATA_PLANNING_MODE, DELETE_PLANNING_MODE])
def test_mode_defaults_to_auto(name: str) -> None:
    assert planning_mode(_Scan(), name) == "auto"  # type: ignore[arg-type]


@pytest.mark.parametrize("name", [DATA_PLANNING_MODE, DELETE_PLANNING_MODE])
@pytest.mark.parametrize("value", ["auto", "LOCAL", "Distributed"])
def test_mode_from_option_or_property_case_insensitive(name: str, value: str) -> None:
    assert planning_mode(_Scan({name: value}), name) == value.lower()  # type: ignore[arg-type]
    table = _Table({name: value})
    assert planning_mode(_Scan(table=table), name) == value.lower()  # type: ignore[arg-type]


def test_scan_option_wins_over_table_property() -> None:
    scan = _Scan({DATA_PLANNING_MODE: "local"}, _Table({DATA_PLANNING_MODE: "distributed"}))
    assert planning_mode(scan, DATA_PLANNING_MODE) == "local"  # type: ignore[arg-type]
    assert planning_mode(scan, DELETE_PLANNING_MODE) == "auto"  # type: ignore[arg-type]


@pytest.mark.parametrize("name", [DATA_PLANNING_MODE, DELETE_PLANNING_MODE])
@pytest.mark.parametrize("value", ["remote", "", " local", 1, True])
def test_bad_mode_names_option_and_value(name: str, value: Any) -> None:
    for scan in (_Scan({name: value}), _Scan(table=_Table({name: value}))):
        with pytest.raises(ValidationError) as error:
            planning_mode(scan, name)  # type: ignore[arg-type]
        assert name in str(error.value) and repr(value) in str(error.value)


def test_plan_locally_modes() -> None:
    assert plan_locally("local", 10_000, 10**12, 1000, 1)
    assert not plan_locally("distributed", 1, 1, 1, 64)
    assert plan_locally("distributed", 0, 0, 1000, 1)  # nothing to distribute
    with pytest.raises(ValidationError, match="'remote'"):
        plan_locally("remote", 1, 1, 1, 1)


def test_auto_each_condition_alone() -> None:
    big = 10 * LOCAL_PLANNING_MAX_SLOT_SIZE
    # remote parallelism <= local threads
    assert plan_locally("auto", 1000, big, 4, 4)
    assert not plan_locally("auto", 1000, big, 5, 4)
    # manifests <= 2 x local threads
    assert plan_locally("auto", 8, big, 100, 4)
    assert not plan_locally("auto", 9, big, 100, 4)
    # bytes <= local threads x 128 MB
    assert plan_locally("auto", 1000, 4 * LOCAL_PLANNING_MAX_SLOT_SIZE, 100, 4)
    assert not plan_locally("auto", 1000, 4 * LOCAL_PLANNING_MAX_SLOT_SIZE + 1, 100, 4)


@given(
    count=st.integers(0, 200),
    size=st.integers(0, 2**40),
    remote=st.integers(1, 512),
    local=st.integers(1, 64),
)
def test_auto_is_the_disjunction(count: int, size: int, remote: int, local: int) -> None:
    expected = remote <= local or count <= 2 * local or size <= local * 128 * MB
    assert plan_locally("auto", count, size, remote, local) == expected
    assert plan_locally("distributed", count, size, remote, local) == (count == 0)


def _decide(**changes: Any) -> Decision:
    arguments: dict[str, Any] = {
        "data_mode": "auto",
        "delete_mode": "auto",
        "data_manifests": [64 * MB] * 100,
        "delete_manifests": [64 * MB] * 100,
        "summary": {"operation": "append", "total-equality-deletes": "0"},
        "include_column_stats": False,
        "remote_parallelism": 100,
        "local_parallelism": 2,
    }
    arguments.update(changes)
    return decide(**arguments)


def test_auto_distributes_a_large_plan_without_equality_deletes() -> None:
    assert _decide() == Decision(data_locally=False, deletes_locally=False)


@pytest.mark.parametrize(
    "summary", [None, {"operation": "append"}, {"total-equality-deletes": "3"}]
)
def test_equality_deletes_may_exist_plans_both_locally_under_auto(
    summary: dict[str, str] | None,
) -> None:
    assert _decide(summary=summary) == Decision(data_locally=True, deletes_locally=True)
    # Explicit modes are obeyed (Java: only AUTO looks at equality deletes).
    assert _decide(summary=summary, data_mode="distributed", delete_mode="distributed") == (
        Decision(data_locally=False, deletes_locally=False)
    )


def test_equality_deletes_need_matching_delete_manifests() -> None:
    # No delete manifest matches: no equality delete can apply, whatever the summary says.
    decision = _decide(summary=None, delete_manifests=[])
    assert decision == Decision(data_locally=False, deletes_locally=True)


def test_column_stats_keep_data_local_under_auto() -> None:
    decision = _decide(include_column_stats=True)
    assert decision == Decision(data_locally=True, deletes_locally=False)
    assert not _decide(include_column_stats=True, data_mode="distributed").data_locally


def test_modes_apply_to_their_own_manifests() -> None:
    decision = _decide(data_mode="local", delete_mode="distributed")
    assert decision == Decision(data_locally=True, deletes_locally=False)
    decision = _decide(data_manifests=[MB] * 4)  # few data manifests
    assert decision == Decision(data_locally=True, deletes_locally=False)
    decision = _decide(remote_parallelism=2)  # the cluster is no wider than the driver
    assert decision == Decision(data_locally=True, deletes_locally=True)
