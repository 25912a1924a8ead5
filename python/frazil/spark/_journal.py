"""The files Spark task attempts wrote, recorded so that the driver can delete those no commit
took (Java's ``SparkWrite`` abort rules): every attempt that succeeds writes a journal entry
``<location>/<partition>-<attempt>-<task id>.json`` listing its files before Spark sees its
result; a failing attempt deletes its own files. After the job the driver knows which files
were reported (the attempts Spark kept): after a commit, the recorded files of the other
attempts (speculative duplicates, retried stages) are deleted; after a failure, every file;
when the commit's outcome is unknown, only files it cannot hold. Journals live under the
table's ``metadata/`` (not hidden: one left by a killed driver is an orphan like any other)."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from frazil.io import FileIO
from frazil.spark._pyspark import require

__all__ = ["JOURNAL", "Journal", "delete_files", "journaled_files"]

JOURNAL = "metadata/spark-write-"


@dataclass(frozen=True)
class Journal:
    """The journal of one Spark job writing to a table (plain data: it pickles)."""

    io: FileIO
    location: str

    @classmethod
    def create(cls, table_location: str, io: FileIO, job_id: str) -> Journal:
        return cls(io, f"{table_location.rstrip('/')}/{JOURNAL}{job_id}")

    def record(self, files: Iterable[str]) -> None:
        """In a task: records the files this attempt wrote (before it returns them)."""
        context = require("pyspark").TaskContext.get()
        name = f"{context.partitionId()}-{context.attemptNumber()}-{context.taskAttemptId()}"
        self.io.write(f"{self.location}/{name}.json", json.dumps(list(files)).encode())

    def clean_up(self, reported: set[str | None], committed: bool, unknown: bool) -> None:
        """Deletes the job's files no commit took: after a commit, those of discarded
        attempts; after a failure, all of them; when the outcome is unknown, only files the
        commit cannot hold (never reported to the driver). Then the journal itself."""
        recorded, journals = journaled_files(self.io, self.location)
        if committed or unknown:
            doomed = [f for f in recorded if f not in reported]
        else:
            doomed = list(dict.fromkeys([*recorded, *(f for f in reported if f)]))
        delete_files(self.io, doomed)
        delete_files(self.io, journals)


def delete_files(io: FileIO, locations: Iterable[str]) -> None:
    """Deletes each location; one already gone is no error."""
    for location in locations:
        try:
            io.delete(location)
        except FileNotFoundError:
            pass


def journaled_files(io: FileIO, journal: str) -> tuple[list[str], list[str]]:
    """The files every recorded task attempt wrote, and the journal entries themselves."""
    try:
        entries = io.list(journal)
    except FileNotFoundError:
        return [], []
    files: list[str] = []
    journals = []
    for entry in entries:
        journals.append(entry.location)
        files.extend(json.loads(io.read(entry.location)))
    return files, journals
