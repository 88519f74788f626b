#!/usr/bin/python3
"""Baseline for the cache benchmark: a sqlitedict store of the same exchanges.

This is the cache design of HELM and lm-evaluation-harness: one SQLite table,
the key a SHA-256 of the request (JSON with sorted keys), the value the
pickled exchange, commits in batches. It loads a JSONL file of exchanges
({"request", "response", "meta"} per line), then dumps every exchange back as
JSONL sorted by key, and prints one JSON line with the timings (seconds) and
the store size (bytes).

    /usr/bin/python3 bench/sqlitedict_baseline.py exchanges.jsonl /tmp/baseline.sqlite

Needs python3-sqlitedict (apt-get install python3-sqlitedict). Not run by CI.
"""
import hashlib
import json
import os
import sys
import time

from sqlitedict import SqliteDict

BATCH = 1000  # exchanges per commit


def main():
    src, db = sys.argv[1], sys.argv[2]
    for p in (db, db + "-journal", db + "-wal"):
        if os.path.exists(p):
            os.remove(p)
    t0 = time.perf_counter()
    d = SqliteDict(db, tablename="exchanges", autocommit=False)
    n = 0
    with open(src, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            x = json.loads(line)
            key = hashlib.sha256(json.dumps(x["request"], sort_keys=True).encode()).hexdigest()
            d[key] = x
            n += 1
            if n % BATCH == 0:
                d.commit()
    d.commit()
    d.close()
    load = time.perf_counter() - t0
    size = os.path.getsize(db)

    t0 = time.perf_counter()
    d = SqliteDict(db, tablename="exchanges", flag="r")
    out = open(os.devnull, "w")
    for key in sorted(d.keys()):
        out.write(json.dumps(d[key], ensure_ascii=False, separators=(",", ":")) + "\n")
    d.close()
    dump = time.perf_counter() - t0
    print(json.dumps({"exchanges": n, "load_s": load, "dump_s": dump, "bytes": size, "raw_bytes": os.path.getsize(src)}))


if __name__ == "__main__":
    main()
