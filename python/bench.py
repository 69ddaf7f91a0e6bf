"""Strata's Python package beside the standard library's sqlite3 (WAL, synchronous FULL) and the
`lmdb` package, on the same workloads in one run: insert N people in one transaction, look up
N/2 by primary key (reading a name), count the people over 50 (20 times), iterate over all of
them summing ages. Prints each time (the median of RUNS) and Strata's speed relative to the peer
(>1: Strata is faster).

    python3 python/bench.py [N] [RUNS]
"""
import os
import random
import shutil
import sqlite3
import statistics
import struct
import sys
import tempfile
import time

import strata

try:
    import lmdb
except ImportError:  # the peer is optional: `pip install lmdb`
    lmdb = None

N = int(sys.argv[1]) if len(sys.argv) > 1 else 100_000
RUNS = int(sys.argv[2]) if len(sys.argv) > 2 else 3
rnd = random.Random(7)
PEOPLE = [(i, f"person {i}", rnd.randint(0, 99)) for i in range(N)]
LOOKUPS = [rnd.randrange(N) for _ in range(N // 2)]
COUNTS = 20


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return time.perf_counter() - t, out


class StrataBench:
    name = "strata"

    def __init__(self, d):
        self.db = strata.open(os.path.join(d, "b.strata"))
        with self.db.write() as txn:
            txn.create_table("P", {"id": strata.Int(primary_key=True), "name": strata.String(), "age": strata.Int()})

    def insert(self):
        with self.db.write() as txn:
            add = txn["P"].add
            for i, name, age in PEOPLE:
                add(id=i, name=name, age=age)

    def lookup(self):
        with self.db.read() as snap:
            get = snap["P"].get
            return sum(len(get(k).name) for k in LOOKUPS)

    def count(self):
        with self.db.read() as snap:
            return sum(len(snap["P"].where("age > 50")) for _ in range(COUNTS))

    def iterate(self):
        with self.db.read() as snap:
            return sum(p.age for p in snap["P"])

    def close(self):
        self.db.close()


class SqliteBench:
    name = "sqlite3"

    def __init__(self, d):
        self.c = sqlite3.connect(os.path.join(d, "b.sqlite"), isolation_level=None)
        self.c.execute("PRAGMA journal_mode=WAL")
        self.c.execute("PRAGMA synchronous=FULL")
        self.c.execute("CREATE TABLE p (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER NOT NULL)")
        self.c.execute("CREATE INDEX p_age ON p(age)")

    def insert(self):
        self.c.execute("BEGIN")
        self.c.executemany("INSERT INTO p VALUES (?, ?, ?)", PEOPLE)
        self.c.execute("COMMIT")

    def lookup(self):
        ex = self.c.execute
        return sum(len(ex("SELECT name FROM p WHERE id = ?", (k,)).fetchone()[0]) for k in LOOKUPS)

    def count(self):
        return sum(self.c.execute("SELECT count(*) FROM p WHERE age > 50").fetchone()[0] for _ in range(COUNTS))

    def iterate(self):
        return sum(a for (a,) in self.c.execute("SELECT age FROM p"))

    def close(self):
        self.c.close()


class LmdbBench:
    """Rows packed with struct under an 8-byte big-endian key; a count reads every row (LMDB has
    no query engine: this is what an app on it does)."""
    name = "lmdb"
    ROW = struct.Struct(">q")

    def __init__(self, d):
        self.env = lmdb.open(os.path.join(d, "b.lmdb"), map_size=1 << 32, sync=True, readahead=False)

    def insert(self):
        pack = self.ROW.pack
        with self.env.begin(write=True) as txn:
            for i, name, age in PEOPLE:
                txn.put(pack(i), bytes([age]) + name.encode())

    def lookup(self):
        pack = self.ROW.pack
        with self.env.begin() as txn:
            get = txn.get
            return sum(len(get(pack(k))[1:].decode()) for k in LOOKUPS)

    def count(self):
        with self.env.begin() as txn:
            return sum(sum(1 for _, v in txn.cursor() if v[0] > 50) for _ in range(COUNTS))

    def iterate(self):
        with self.env.begin() as txn:
            return sum(v[0] for _, v in txn.cursor())

    def close(self):
        self.env.close()


def main():
    kinds = [StrataBench, SqliteBench] + ([LmdbBench] if lmdb else [])
    work = ["insert", "lookup", "count", "iterate"]
    times = {k.name: {w: [] for w in work} for k in kinds}
    answers = {}
    for _ in range(RUNS):
        for k in kinds:
            d = tempfile.mkdtemp()
            try:
                b = k(d)
                for w in work:
                    t, out = timed(getattr(b, w))
                    times[k.name][w].append(t)
                    if out is not None:
                        assert answers.setdefault(w, out) == out, (k.name, w, out, answers[w])
                b.close()
            finally:
                shutil.rmtree(d)
    med = {k: {w: statistics.median(v) for w, v in ws.items()} for k, ws in times.items()}
    peers = [k.name for k in kinds if k.name != "strata"]
    print(f"python bench: N={N}, median of {RUNS} runs (seconds; vs_peer > 1: Strata faster)")
    print(f"{'workload':10}" + "".join(f"{k.name:>12}" for k in kinds) + "".join(f"{'vs_' + p:>12}" for p in peers))
    for w in work:
        row = f"{w:10}" + "".join(f"{med[k.name][w]:12.4f}" for k in kinds)
        row += "".join(f"{med[p][w] / med['strata'][w]:11.2f}x" for p in peers)
        print(row)
    if not lmdb:
        print("(lmdb not installed: pip install lmdb to compare with it)")


if __name__ == "__main__":
    main()
