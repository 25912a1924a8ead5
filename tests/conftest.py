"""Suite-wide rules.

- A skipped test is a failure, not a pass. The README's test command must prove
  everything it claims, so a test that is skipped or xfailed (say, because Java or
  a peer is missing) fails the run. Set FRAZIL_ALLOW_SKIPS=1 to run a partial suite
  on purpose while developing.
- Tests assert behaviour, never speed: hypothesis's per-example deadline is off
  (speed is measured in benches/), so a loaded machine cannot fail a test.
- tests/run runs the Java interop tests in one process (one SparkSession) and the
  tests without Java in another, alongside.
- The REST client posts its commits' metrics reports in the background: each test waits for
  its own before the next starts, so no test sees another's report arrive at a server.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator

import pytest
from hypothesis import settings

# Session fixtures shared by tests/python and tests/interop.
from postgres_server import postgres_uri  # noqa: F401

settings.register_profile("frazil", deadline=None)
settings.load_profile("frazil")


@pytest.fixture(autouse=True)
def _metrics_reports_sent() -> Iterator[None]:
    yield
    metrics = sys.modules.get("frazil.catalog.rest._metrics")
    if metrics is not None:
        metrics.REPORTS.flush(60)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if os.environ.get("FRAZIL_ALLOW_SKIPS") == "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    not_run = len(reporter.stats.get("skipped", [])) + len(reporter.stats.get("xfailed", []))
    if not_run and exitstatus == 0:
        reporter.write_line(
            f"FAILED: {not_run} test(s) skipped or xfailed; every test must run "
            "(set FRAZIL_ALLOW_SKIPS=1 to allow this while developing)",
            red=True,
        )
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
