"""Several processes on one file, and a writer killed mid-commit."""
import os
import signal
import subprocess
import sys
import textwrap
import time

import strata

WRITER = textwrap.dedent("""
    import sys, strata
    path, start, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    with strata.open(path) as db:
        for i in range(start, start + count):
            with db.write() as txn:
                txn["Log"].add(n=i, text="entry %d " % i * 20)
            print(i, flush=True)  # reported after the commit returned: durable
""")


def make_log(path):
    with strata.open(path) as db, db.write() as txn:
        txn.create_table("Log", {"n": strata.Int(indexed=True), "text": strata.String()})


def run_writer(path, start, count):
    return subprocess.Popen([sys.executable, "-c", WRITER, path, str(start), str(count)],
                            stdout=subprocess.PIPE, text=True)


def test_two_processes_write_in_turn(path):
    make_log(path)
    a, b = run_writer(path, 0, 60), run_writer(path, 1000, 60)
    assert a.wait(60) == 0 and b.wait(60) == 0
    with strata.open(path) as db, db.read() as snap:
        ns = sorted(o.n for o in snap["Log"])
        assert ns == list(range(60)) + list(range(1000, 1060))
        db.verify()


def test_a_writer_killed_mid_commit_loses_nothing_durable(path):
    make_log(path)
    for round_ in range(3):
        w = run_writer(path, round_ * 100_000, 100_000)
        reported = []
        deadline = time.time() + 0.3 + 0.2 * round_
        while time.time() < deadline:
            line = w.stdout.readline()
            if line:
                reported.append(int(line))
        w.send_signal(signal.SIGKILL)
        w.wait()
        with strata.open(path) as db:
            db.verify()
            with db.read() as snap:
                present = set(snap["Log"].where("n >= $0 AND n < $1", round_ * 100_000, (round_ + 1) * 100_000).keys())
                found = {o.n for o in snap["Log"].where("n >= $0 AND n < $1", round_ * 100_000, (round_ + 1) * 100_000)}
                assert reported and set(reported) <= found
                assert len(present) == len(found)


def test_waiting_for_a_commit_from_another_process(path):
    make_log(path)
    with strata.open(path) as db:
        v = db.version
        w = run_writer(path, 0, 1)
        got = db.wait_for_commit(v, timeout=30)
        assert got is not None and got > v
        w.wait(30)
        assert db.wait_for_commit(db.version, timeout=0.05) is None
