"""The hand-written metadata files in data/ (shapes from the spec and Java's parsers)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

DATA = Path(__file__).parent / "data"


def load(name: str) -> dict[str, Any]:
    with open(DATA / name, encoding="utf-8") as file:
        result: dict[str, Any] = json.load(file)
    return result
