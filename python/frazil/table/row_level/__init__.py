"""Row-level changes (spec: "Row-level Deletes", "Delete Formats", "Row Lineage"): deletes,
updates, upserts and merges, copy-on-write or merge-on-read per ``write.delete.mode``,
``write.update.mode`` and ``write.merge.mode``, each one snapshot committed through a
transaction.

- :mod:`~frazil.table.row_level.delete`: merge-on-read deletes by filter.
- :mod:`~frazil.table.row_level._touched`: the files and rows a change touches.
- :mod:`~frazil.table.row_level._deltas`: position deletes and deletion vectors of a change.
"""
