"""Seconds per test file from pytest's JUnit XML reports (tests/run writes one per pytest run and
prints this summary at the end), so the two lanes of tests/run can be balanced by measurement.

    python tests/timings.py REPORT.xml [REPORT.xml ...]
"""

from __future__ import annotations

import sys
import xml.etree.ElementTree as ElementTree
from collections import defaultdict


def module_of(classname: str) -> str:
    """``tests.interop.test_x.TestY`` -> ``tests/interop/test_x.py``: the module is the dotted
    name up to its first ``test_`` part (test modules are named test_*.py)."""
    parts = classname.split(".")
    for index, part in enumerate(parts):
        if part.startswith("test_"):
            return "/".join(parts[: index + 1]) + ".py"
    return "/".join(parts)


def main(paths: list[str]) -> None:
    for path in paths:
        seconds: dict[str, float] = defaultdict(float)
        tests: dict[str, int] = defaultdict(int)
        for case in ElementTree.parse(path).getroot().iter("testcase"):
            module = module_of(case.get("classname", ""))
            seconds[module] += float(case.get("time", "0") or 0)
            tests[module] += 1
        total = sum(seconds.values())
        print(f"-- {path}: {total:.0f} s in {sum(tests.values())} tests; slowest files:")
        for module, spent in sorted(seconds.items(), key=lambda item: -item[1])[:25]:
            print(f"   {spent:7.1f} s  {tests[module]:5d}  {module}")


if __name__ == "__main__":
    main(sys.argv[1:])
