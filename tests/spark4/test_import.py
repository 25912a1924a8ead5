"""``import frazil`` never imports pyspark, and without pyspark ``frazil.spark`` still imports
and says which extra is missing (issue 23, "the process model"). Checked in a fresh
interpreter of both environments: this one (the wheel, pyspark 4.3) and the main one
(the source tree, pyspark 3.5; tests/run passes it as $FRAZIL_MAIN_PYTHON)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

CHECK = r"""
import importlib, json, pkgutil, sys

import frazil
import frazil.spark
imported_pyspark = sorted(m for m in sys.modules if m == "pyspark" or m.startswith("pyspark."))


class BlockPyspark:
    # pyspark as if it were not installed.
    def find_spec(self, name, path=None, target=None):
        if name == "pyspark" or name.startswith("pyspark."):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


for name in [m for m in sys.modules if m.startswith("frazil.spark")]:
    del sys.modules[name]
sys.meta_path.insert(0, BlockPyspark())
import frazil.spark

from frazil.errors import FrazilError, MissingDependencyError
from frazil.spark import _pyspark

# Every module of frazil.spark imports without pyspark or says which extra is missing (a module
# that subclasses pyspark's classes, such as the Data Source, needs it at import).
modules = {}
for info in pkgutil.walk_packages(frazil.spark.__path__, "frazil.spark."):
    try:
        importlib.import_module(info.name)
        modules[info.name] = None
    except MissingDependencyError as error:
        modules[info.name] = str(error)

try:
    _pyspark.require("pyspark.sql")
except MissingDependencyError as error:
    raised = {"type": type(error).__name__, "frazil_error": isinstance(error, FrazilError),
              "message": str(error)}
else:
    raised = None
print(json.dumps({"imported_pyspark": imported_pyspark, "modules": modules, "raised": raised,
                  "frazil": frazil.__file__}))
"""


def _interpreters() -> list[tuple[str, str | None]]:
    return [("spark4", sys.executable), ("main", os.environ.get("FRAZIL_MAIN_PYTHON"))]


@pytest.mark.parametrize(("environment", "python"), _interpreters(), ids=lambda v: str(v))
def test_frazil_imports_without_pyspark(environment: str, python: str | None) -> None:
    if python is None:
        pytest.fail(
            "FRAZIL_MAIN_PYTHON is not set: the interpreter of the main environment "
            "(tests/run sets it; e.g. FRAZIL_MAIN_PYTHON=$PWD/.venv/bin/python)"
        )
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    done = subprocess.run(
        [python, "-c", CHECK], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    assert result["imported_pyspark"] == []
    modules = result["modules"]
    assert "frazil.spark._pyspark" in modules
    for name, error in modules.items():
        assert error is None or 'pip install "frazil[spark]"' in error, (name, error)
    raised = result["raised"]
    assert raised is not None, "frazil.spark._pyspark.require() did not raise without pyspark"
    assert raised["type"] == "MissingDependencyError"
    assert raised["frazil_error"]
    assert 'pip install "frazil[spark]"' in raised["message"]
