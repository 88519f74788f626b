#!/usr/bin/python3
"""Peer for the cache benchmark: each exchange as a zstd BLOB in one SQLite table.

The simple compressed design finrepro's store is measured against: a
dictionary trained on the first 4 KiB of the first 2,000 exchanges
(zstandard's trainer, 112 KiB),
then one table (key TEXT PRIMARY KEY, value BLOB), the key a SHA-256 of the
request (JSON with sorted keys), the value the exchange's JSONL line
compressed at level 3 with the dictionary, commits in batches. It loads a
JSONL file of exchanges, dumps every exchange back as JSONL sorted by key,
then answers the requests of a second JSONL file (one request object per
line) by key, and prints one JSON line with the timings (seconds) and the
store size (bytes, with the dictionary). It keeps the dictionary beside
the database (DB.dict), so that

    /usr/bin/python3 bench/sqlite_zstd_peer.py --lookup requests.jsonl /tmp/peer.sqlite

answers the requests again in a new process (Python's start, the
database's opening and the dictionary's loading included, as a finrepro
replay has them), printing its lookup time alone.

    /usr/bin/python3 bench/sqlite_zstd_peer.py exchanges.jsonl requests.jsonl /tmp/peer.sqlite

Needs python3-zstandard (apt-get install python3-zstandard). Not run by CI.
"""
import hashlib
import json
import os
import sqlite3
import sys
import time

import zstandard

BATCH = 1000  # exchanges per commit
SAMPLES = 2000  # lines the dictionary is trained on
SAMPLE_BYTES = 4096  # of each, their first bytes
DICT_BYTES = 112640


def key_of(request):
    return hashlib.sha256(json.dumps(request, sort_keys=True).encode()).hexdigest()


def lookups(con, dctx, reqs, out):
    found = 0
    with open(reqs, "rb") as f:
        for line in f:
            if not line.strip():
                continue
            row = con.execute("SELECT value FROM exchanges WHERE key = ?", (key_of(json.loads(line)),)).fetchone()
            if row is not None:
                out.write(json.dumps(json.loads(dctx.decompress(row[0]))["response"], ensure_ascii=False, separators=(",", ":")).encode() + b"\n")
                found += 1
    return found


def lookup_only(reqs, db):
    with open(db + ".dict", "rb") as f:
        d = zstandard.ZstdCompressionDict(f.read())
    dctx = zstandard.ZstdDecompressor(dict_data=d)
    con = sqlite3.connect(db)
    t0 = time.perf_counter()
    found = lookups(con, dctx, reqs, open(os.devnull, "wb"))
    print(json.dumps({"lookup_s": time.perf_counter() - t0, "found": found}))


def main():
    if sys.argv[1] == "--lookup":
        return lookup_only(sys.argv[2], sys.argv[3])
    src, reqs, db = sys.argv[1], sys.argv[2], sys.argv[3]
    for p in (db, db + "-journal", db + "-wal"):
        if os.path.exists(p):
            os.remove(p)
    t0 = time.perf_counter()
    with open(src, "rb") as f:
        sample = [line[:SAMPLE_BYTES] for _, line in zip(range(SAMPLES), f)]
    d = zstandard.train_dictionary(DICT_BYTES, sample, k=1024, d=8)
    dict_bytes = len(d.as_bytes())
    with open(db + ".dict", "wb") as f:
        f.write(d.as_bytes())
    cctx = zstandard.ZstdCompressor(level=3, dict_data=d)
    con = sqlite3.connect(db)
    con.execute("CREATE TABLE exchanges (key TEXT PRIMARY KEY, value BLOB)")
    n = 0
    rows = []
    with open(src, "rb") as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            x = json.loads(line)
            rows.append((key_of(x["request"]), cctx.compress(line)))
            n += 1
            if len(rows) == BATCH:
                con.executemany("INSERT OR IGNORE INTO exchanges VALUES (?, ?)", rows)
                con.commit()
                rows = []
    con.executemany("INSERT OR IGNORE INTO exchanges VALUES (?, ?)", rows)
    con.commit()
    con.close()
    load = time.perf_counter() - t0
    size = os.path.getsize(db) + dict_bytes

    dctx = zstandard.ZstdDecompressor(dict_data=d)
    t0 = time.perf_counter()
    con = sqlite3.connect(db)
    out = open(os.devnull, "wb")
    for (v,) in con.execute("SELECT value FROM exchanges ORDER BY key"):
        out.write(dctx.decompress(v) + b"\n")
    dump = time.perf_counter() - t0

    t0 = time.perf_counter()
    found = lookups(con, dctx, reqs, out)
    lookup = time.perf_counter() - t0
    con.close()
    print(json.dumps({"exchanges": n, "load_s": load, "dump_s": dump, "lookup_s": lookup, "found": found, "bytes": size}))


if __name__ == "__main__":
    main()
