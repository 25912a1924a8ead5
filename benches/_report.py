"""What the benchmarks share for their sections of benches/RESULTS.md, and their timing
schedule.

- :func:`write_section` replaces one benchmark's marker-delimited section of RESULTS.md,
  keeping the other benchmarks' ones;
- :func:`header` and its parts: the lines every section starts with (title, date, command,
  frazil's version and git revision, machine and load average, Python and pyarrow), and
  :func:`how_to_run`, the subsection most end with;
- :func:`min_median` and :func:`ratio_of`: the "min (median)" cells and time ratios;
- :func:`interleaved`: the rounds in which every contender runs every case, its order rotated
  each round.

Stdlib only, so the report modules import it without the benchmarks' dependencies.
"""

from __future__ import annotations

import datetime as dt
import importlib.metadata
import os
import platform
import shlex
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Protocol, TypeVar

BENCH_DIR = Path(__file__).resolve().parent
REPO = BENCH_DIR.parent

Stat = Callable[[list[float]], float]
Load = tuple[Sequence[float], Sequence[float]]  # os.getloadavg() before and after timing
C = TypeVar("C")
K = TypeVar("K")


# ------------------------------------------------------------------------------ writing


def write_section(path: Path, markers: tuple[str, str], text: str) -> None:
    """Replaces the section of ``path`` between ``markers`` (begin, end) by ``text``, keeping
    everything else; appends it when ``path`` has no such section yet."""
    begin, end = markers
    old = path.read_text() if path.exists() else "# Benchmark results\n"
    block = f"{begin}\n{text.rstrip()}\n{end}"
    if begin in old and end in old:
        head, rest = old.split(begin, 1)
        new = head + block + rest.split(end, 1)[1]
    else:
        new = old.rstrip() + "\n\n" + block + "\n"
    path.write_text(new)


# ------------------------------------------------------------------------ the machine


def version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def frazil_version() -> str:
    installed = version("frazil")
    if installed != "not installed":
        return installed
    import frazil  # an editable checkout (a .pth to python/): no distribution metadata

    return f"{getattr(frazil, '__version__', '?')} (from {Path(frazil.__file__).parent})"


def cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_revision() -> str:
    try:
        rev = subprocess.run(
            ["git", "-C", str(REPO), "describe", "--always", "--dirty"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        branch = subprocess.run(
            ["git", "-C", str(REPO), "rev-parse", "--abbrev-ref", "HEAD"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        return f"{rev} (branch {branch})"
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def command_line() -> str:
    exe = Path(sys.executable)
    try:
        exe = exe.relative_to(Path.cwd())
    except ValueError:
        pass
    script = Path(sys.argv[0]).resolve()
    try:
        script = script.relative_to(Path.cwd())
    except ValueError:
        pass
    return shlex.join([str(exe), str(script), *sys.argv[1:]])


def load_text(average: Sequence[float]) -> str:
    """``os.getloadavg()`` as "1.00 / 0.50 / 0.25" (1, 5 and 15 minutes)."""
    return " / ".join(f"{x:.2f}" for x in average)


def header(title: str, script: str, *, small: bool = False) -> list[str]:
    """A section's title and its Date, Command and frazil lines; ``script`` is the bench's
    path from the repository root (``benches/bench_read.py``)."""
    scale = " (SMALL SCALE: `--small`, a quick check, not the issue's figures)" if small else ""
    now = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return [
        f"## {title}{scale}",
        "",
        f"Produced by `{script}` (do not edit this section by hand; re-run it).",
        "",
        f"- Date: {now}",
        f"- Command: `{command_line()}`",
        f"- frazil: {frazil_version()}, git {git_revision()}",
    ]


def machine_line(before: str, after: str) -> str:
    """The Machine line with the load averages (as :func:`load_text` writes them) before and
    after timing."""
    return (
        f"- Machine: {cpu_model()}, {os.cpu_count()} cores; load average (1/5/15 min) "
        f"{before} before timing, {after} after"
    )


def environment_lines(load: Load, notes: Sequence[str]) -> list[str]:
    """The Machine line and the Python / pyarrow line, which carries ``notes`` (the
    contenders' versions and settings)."""
    return [
        machine_line(load_text(load[0]), load_text(load[1])),
        f"- Python {platform.python_version()}, pyarrow {version('pyarrow')}; " + "; ".join(notes),
    ]


def how_to_run(*commands: str) -> list[str]:
    """The "How to run" subsection: a release build, a look at the load, then ``commands``;
    the caller adds its options paragraph after it."""
    return [
        "### How to run",
        "",
        "```sh",
        "VIRTUAL_ENV=$PWD/.venv .venv/bin/maturin develop --release",
        "uptime    # prefer a quiet machine",
        *commands,
        "```",
        "",
    ]


# ---------------------------------------------------------------------------- figures


class Timed(Protocol):
    @property
    def times(self) -> list[float]: ...

    @property
    def cpu(self) -> list[float]: ...


def min_median(xs: list[float], fmt: Callable[[float], str]) -> str:
    """A table cell: the minimum, then the median in parentheses."""
    return f"{fmt(min(xs))} ({fmt(statistics.median(xs))})"


def ratio_of(
    ours: Timed | None, theirs: Timed | None, stat: Stat, cpu: bool = False
) -> float | None:
    """``stat`` of our times (CPU seconds with ``cpu``) over theirs; None when either side has
    no times."""
    if ours is None or theirs is None or not ours.times or not theirs.times:
        return None
    if cpu:
        return stat(ours.cpu) / stat(theirs.cpu)
    return stat(ours.times) / stat(theirs.times)


def ratio_cell(ours: Timed | None, theirs: Timed | None, cpu: bool = False) -> str:
    """ "0.85x / 0.90x": our time over theirs by minimum and by median ("" when not timed)."""
    lo = ratio_of(ours, theirs, min, cpu)
    med = ratio_of(ours, theirs, statistics.median, cpu)
    return f"{lo:.2f}x / {med:.2f}x" if lo is not None and med is not None else ""


# ----------------------------------------------------------------------------- timing


def interleaved(
    contenders: Sequence[C], cases: Iterable[K], rounds: int, started: float
) -> Iterator[tuple[C, K]]:
    """The timing schedule: ``rounds`` rounds, each of every case once per contender, the
    contenders' order rotated by one each round so that load spikes and what the previous
    contender left in the caches fall on all of them alike. Prints a line after each round
    (seconds since ``started``, a ``time.monotonic()``)."""
    every_case = list(cases)
    for r in range(rounds):
        k = r % len(contenders)
        order = [*contenders[k:], *contenders[:k]]
        for case in every_case:
            for contender in order:
                yield contender, case
        print(f"  round {r + 1}/{rounds} done at {time.monotonic() - started:.0f} s", flush=True)
