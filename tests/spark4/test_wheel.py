"""The Spark 4 environment holds frazil as the wheel users install: abi3 (``cp310-abi3``, one
wheel for every CPython >= 3.10 a Spark executor may run), not an editable source tree."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import frazil
import frazil._native


def test_installed_frazil_is_the_abi3_wheel() -> None:
    dist = importlib.metadata.distribution("frazil")
    wheel = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel.splitlines() if line.startswith("Tag:")]
    assert tags, wheel
    assert all(tag.startswith("cp310-abi3-") for tag in tags), tags
    # Installed from a wheel file, not `pip install -e` / `maturin develop`.
    direct_url = dist.read_text("direct_url.json")
    if direct_url is not None:
        assert not json.loads(direct_url).get("dir_info", {}).get("editable", False)
    site = Path(sys.prefix).resolve()
    assert site in Path(frazil.__file__).resolve().parents
    native = Path(frazil._native.__file__).resolve()
    assert native.name == "_native.abi3.so"
    assert site in native.parents
    recorded = {str(f) for f in dist.files or []}
    assert "frazil/_native.abi3.so" in recorded
