#!/usr/bin/env python3
"""Reads every Parquet file that `realm-dump --export parquet` wrote and compares each value with
the JSON Lines export of the same version (`realm-dump --export jsonl`), once through pyarrow and
once through DuckDB.

Usage: check_parquet.py DIR...   (each DIR holds <Table>.parquet and <Table>.jsonl files)

Prints one line per file and reader; exits 1 at the first file that differs, naming the table, the
object key, the column and both values. RealmToolsTests runs it (ParquetExportTests).
"""
import base64
import decimal
import glob
import json
import math
import os
import struct
import sys
import uuid

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

UNITS = {"s": 10**9, "ms": 10**6, "us": 10**3, "ns": 1}


def days_from_civil(y, m, d):
    """Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm)."""
    y -= m <= 2
    era = (y if y >= 0 else y - 399) // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    doe = yoe * 365 + yoe // 4 - yoe // 100 + doy
    return era * 146097 + doe - 719468


def iso_nanoseconds(text):
    """Nanoseconds since 1970 of the ISO 8601 text the tools write (`[+-]YYYY-MM-DDTHH:MM:SS[.f]Z`)."""
    assert text.endswith("Z"), text
    date, time = text[:-1].split("T")
    sign = 1
    if date[0] in "+-":
        sign = -1 if date[0] == "-" else 1
        date = date[1:]
    y, m, d = date.split("-")
    hms, _, fraction = time.partition(".")
    hh, mm, ss = (int(x) for x in hms.split(":"))
    seconds = days_from_civil(sign * int(y), int(m), int(d)) * 86400 + hh * 3600 + mm * 60 + ss
    return seconds * 10**9 + int((fraction + "000000000")[:9])


def python_values(arr):
    """An Arrow array as Python values, tagging what needs its Arrow type to compare."""
    t = arr.type
    if isinstance(t, pa.ExtensionType):
        values = python_values(arr.storage)
        if t.extension_name == "arrow.uuid":
            return [None if v is None else ("uuid", v[1]) for v in values]
        return values
    if pa.types.is_timestamp(t):
        factor = UNITS[t.unit]
        return [None if v is None else ("ns", v * factor) for v in arr.cast(pa.int64()).to_pylist()]
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_map(t):
        offsets = arr.offsets.to_pylist()
        valid = arr.is_valid().to_pylist()
        if pa.types.is_map(t):
            keys, items = python_values(arr.keys), python_values(arr.items)
            return [
                dict(zip(keys[offsets[i] : offsets[i + 1]], items[offsets[i] : offsets[i + 1]])) if valid[i] else None
                for i in range(len(arr))
            ]
        values = python_values(arr.values)
        return [values[offsets[i] : offsets[i + 1]] if valid[i] else None for i in range(len(arr))]
    if pa.types.is_fixed_size_binary(t):
        return [None if v is None else ("fixed", v) for v in arr.to_pylist()]
    if pa.types.is_float32(t):
        return [None if v is None else ("float32", v) for v in arr.to_pylist()]
    return arr.to_pylist()


def float_of(text_or_number, single):
    if isinstance(text_or_number, str):
        value = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf}[text_or_number]
    else:
        value = float(text_or_number)
    return struct.unpack("<f", struct.pack("<f", value))[0] if single else value


def same(a, e):
    """Whether a value read from Parquet equals the JSON Lines value `e`."""
    if isinstance(a, tuple):
        tag, v = a
        if tag == "ns":
            return isinstance(e, str) and iso_nanoseconds(e) == v
        if tag == "uuid":
            return isinstance(e, str) and str(uuid.UUID(bytes=bytes(v))) == e
        if tag == "fixed":
            # objectId (12 bytes) as hex; a UUID a reader left as 16 bytes.
            return isinstance(e, str) and (bytes(v).hex() == e or (len(v) == 16 and str(uuid.UUID(bytes=bytes(v))) == e))
        if tag == "float32":
            x = float_of(e, True)
            return (math.isnan(v) and math.isnan(x)) or v == x
        raise AssertionError(tag)
    if a is None or e is None:
        return a is None and e is None
    if isinstance(a, bool) or isinstance(e, bool):
        return a is e
    if isinstance(a, int):
        return type(e) is int and a == e
    if isinstance(a, float):
        x = float_of(e, False)
        return (math.isnan(a) and math.isnan(x)) or a == x
    if isinstance(a, decimal.Decimal):
        return isinstance(e, str) and decimal.Decimal(e) == a
    if isinstance(a, (bytes, bytearray)):
        return isinstance(e, str) and base64.b64decode(e) == bytes(a)
    if isinstance(a, uuid.UUID):
        return str(a) == e
    if isinstance(a, str):
        return a == e
    if isinstance(a, list):
        return isinstance(e, list) and len(a) == len(e) and all(same(x, y) for x, y in zip(a, e))
    if isinstance(a, dict):
        return isinstance(e, dict) and a.keys() == e.keys() and all(same(a[k], e[k]) for k in a)
    raise AssertionError(f"unexpected value {a!r} of {type(a)}")


def tag_fixed(v):
    """Bytes a reader returned for a FIXED_LEN_BYTE_ARRAY column (DuckDB reads them as BLOB)."""
    if v is None or isinstance(v, tuple):
        return v
    if isinstance(v, list):
        return [tag_fixed(x) for x in v]
    if isinstance(v, dict):
        return {k: tag_fixed(x) for k, x in v.items()}
    return ("fixed", v) if isinstance(v, (bytes, bytearray)) else v


def decode_json(v):
    """The value of a JSON column (mixed): JSON text, in lists and maps too."""
    if v is None:
        return None
    if isinstance(v, list):
        return [decode_json(x) for x in v]
    if isinstance(v, dict):
        return {k: decode_json(x) for k, x in v.items()}
    return ("json", json.loads(v))


def same_column_value(a, e):
    if isinstance(a, tuple) and a[0] == "json":
        return json.dumps(a[1], sort_keys=True) == json.dumps(e, sort_keys=True)
    if isinstance(a, list):
        return isinstance(e, list) and len(a) == len(e) and all(same_column_value(x, y) for x, y in zip(a, e))
    if isinstance(a, dict):
        return isinstance(e, dict) and a.keys() == e.keys() and all(same_column_value(a[k], e[k]) for k in a)
    return same(a, e)


def compare(path, table, reader):
    jsonl = path[: -len(".parquet")] + ".jsonl"
    with open(jsonl, encoding="utf-8") as f:
        expected = [json.loads(line) for line in f]
    schema = pq.ParquetFile(path).schema
    json_columns = {
        schema.column(i).path.split(".")[0]
        for i in range(len(schema))
        if schema.column(i).logical_type.type == "JSON"
    }
    fixed_columns = {
        schema.column(i).path.split(".")[0]
        for i in range(len(schema))
        if schema.column(i).physical_type == "FIXED_LEN_BYTE_ARRAY"
    }
    names = table.column_names
    if len(expected) != table.num_rows:
        return f"{path} ({reader}): {table.num_rows} rows, JSON Lines has {len(expected)}"
    columns = {}
    for name in names:
        values = python_values(table.column(name).combine_chunks())
        if name in json_columns:
            values = [decode_json(v) for v in values]
        if name in fixed_columns:
            values = [tag_fixed(v) for v in values]
        columns[name] = values
    for row, e in enumerate(expected):
        if list(e.keys()) != names:
            return f"{path} ({reader}): columns {names}, JSON Lines has {list(e.keys())}"
        for name in names:
            a = columns[name][row]
            if not same_column_value(a, e[name]):
                return f"{path} ({reader}): object {e['_key']}, {name}: Parquet {a!r}, JSON Lines {e[name]!r}"
    return None


def main(directories):
    files = sorted(p for d in directories for p in glob.glob(os.path.join(d, "*.parquet")))
    if not files:
        print("no Parquet files", file=sys.stderr)
        return 1
    rows = 0
    for path in files:
        readers = [
            ("pyarrow", pq.read_table(path)),
            ("duckdb", duckdb.connect().sql("SELECT * FROM read_parquet('%s')" % path.replace("'", "''")).to_arrow_table()),
        ]
        for reader, table in readers:
            problem = compare(path, table, reader)
            if problem:
                print(problem, file=sys.stderr)
                return 1
        rows += readers[0][1].num_rows
        groups = pq.ParquetFile(path).num_row_groups
        print(f"{path}: {readers[0][1].num_rows} rows in {groups} row groups match (pyarrow, duckdb)")
    print(f"{len(files)} files, {rows} rows: every value matches the JSON Lines export in pyarrow and DuckDB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
