#!/usr/bin/env python3
"""DuckDB's side of realm-vs-sqlite's read workloads (issue 31): the same N rows as the Swift
systems (Data6 in Workloads.swift), one thread, W2-W5 and W10, each query timed inside Python
around the query and the fetch of its result.

Usage: duckdb_workloads.py N DIR
Prints one JSON object: {"version": ..., "workloads": {"W2": {"first": s, "third": s, "answer": "..."}, ...}}
(seconds of the first and third run of each workload on the open database, as the Swift side
times its read workloads).
"""
import json
import os
import sys
import time

import duckdb


def main(n, directory):
    path = os.path.join(directory, f"realm-vs-sqlite-{os.getpid()}-duckdb.duckdb")
    for p in (path, path + ".wal"):
        if os.path.exists(p):
            os.remove(p)
    con = duckdb.connect(path)
    con.execute("SET threads = 1")
    con.execute(
        "CREATE TABLE person AS SELECT i AS id, 'name-' || (i % 10000) AS name, (i * 7) % 100 AS age, "
        "CAST(i % 1000 AS DOUBLE) / 10 AS score, i % 3 = 0 AS active FROM range(?) t(i)",
        [n],
    )
    con.execute("CHECKPOINT")

    def w10():
        count = 0
        ages = 0
        for name, age in con.execute("SELECT name, age FROM person").fetchall():
            count += 1 if name else 0
            ages += age
        return f"{count} objects, ages {ages}"

    def w4():
        s, a, lo, hi = con.execute("SELECT SUM(score), AVG(age), MIN(age), MAX(score) FROM person").fetchone()
        return "%.0f / %.1f / %d / %.1f" % (s, a, lo, hi)

    workloads = {
        "W2": lambda: str(con.execute("SELECT COUNT(*) FROM person WHERE age > 50").fetchone()[0]),
        "W3": lambda: str(
            con.execute("SELECT COUNT(*) FROM person WHERE age BETWEEN 20 AND 30 AND starts_with(name, 'name-1')").fetchone()[0]
        ),
        "W4": w4,
        "W5": lambda: str(sum(r[0] for r in con.execute("SELECT id FROM person ORDER BY score DESC, id LIMIT 100").fetchall())),
        "W10": w10,
    }
    out = {}
    for wid, body in workloads.items():
        runs = []
        answer = None
        for _ in range(3):
            start = time.perf_counter()
            answer = body()
            runs.append(time.perf_counter() - start)
        out[wid] = {"first": runs[0], "third": runs[2], "answer": answer}
    con.close()
    for p in (path, path + ".wal"):
        if os.path.exists(p):
            os.remove(p)
    print(json.dumps({"version": duckdb.__version__, "workloads": out}))


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2])
