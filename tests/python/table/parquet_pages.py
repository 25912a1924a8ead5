"""Parquet page headers of one column chunk, read with a small Thrift compact-protocol decoder
(pyarrow does not expose pages): enough to count data pages and their values."""

from __future__ import annotations

from typing import Any

import pyarrow.parquet as pq

DATA_PAGE = 0
DICTIONARY_PAGE = 2
DATA_PAGE_V2 = 3


class _Reader:
    def __init__(self, data: bytes, pos: int) -> None:
        self.data = data
        self.pos = pos

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def varint(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    def zigzag(self) -> int:
        n = self.varint()
        return (n >> 1) ^ -(n & 1)

    def value(self, kind: int) -> Any:
        if kind in (1, 2):
            return kind == 1
        if kind == 3:
            return self.byte()
        if kind in (4, 5, 6):
            return self.zigzag()
        if kind == 7:
            self.pos += 8
            return None
        if kind == 8:
            size = self.varint()
            self.pos += size
            return None
        if kind in (9, 10):
            header = self.byte()
            size = header >> 4
            if size == 15:
                size = self.varint()
            return [self.value(header & 0x0F) for _ in range(size)]
        if kind == 12:
            return self.struct()
        raise AssertionError(f"unexpected thrift type {kind}")

    def struct(self) -> dict[int, Any]:
        fields: dict[int, Any] = {}
        last = 0
        while True:
            header = self.byte()
            if header == 0:
                return fields
            delta, kind = header >> 4, header & 0x0F
            last = last + delta if delta else self.zigzag()
            fields[last] = self.value(kind)


def page_headers(path: str, row_group: int = 0, column: int = 0) -> list[dict[int, Any]]:
    """The page headers of one column chunk, in order (Thrift field ids: 1 type, 3 compressed
    size, 5 data page header whose 1 is num_values, 7 dictionary page header)."""
    chunk = pq.read_metadata(path).row_group(row_group).column(column)
    start = chunk.data_page_offset
    if chunk.has_dictionary_page and chunk.dictionary_page_offset is not None:
        start = min(start, chunk.dictionary_page_offset)
    with open(path, "rb") as f:
        data = f.read()
    end = start + chunk.total_compressed_size
    headers = []
    pos = start
    while pos < end:
        reader = _Reader(data, pos)
        header = reader.struct()
        headers.append(header)
        pos = reader.pos + header[3]
    return headers


def data_page_values(path: str, row_group: int = 0, column: int = 0) -> list[int]:
    """The value count of each data page of a column chunk."""
    out = []
    for header in page_headers(path, row_group, column):
        if header[1] == DATA_PAGE:
            out.append(header[5][1])
        elif header[1] == DATA_PAGE_V2:
            out.append(header[8][1])
    return out
