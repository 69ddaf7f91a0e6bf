import os

import pytest

import strata


def fill(db, n=2000):
    with db.write() as txn:
        txn.create_table("T", {"n": strata.Int(), "s": strata.String()})
        for i in range(n):
            txn["T"].add(n=i, s="payload %d " % i * 10)


def test_compaction_keeps_everything_and_gives_space_back(db):
    fill(db)
    with db.write() as txn:
        txn["T"].where("n % 2 == 0 OR n > 100").delete() if False else txn["T"].where("n > 100").delete()
    before = db.space()
    db.compact()
    after = db.space()
    assert after.file_bytes < before.file_bytes and after.free_bytes <= before.free_bytes
    with db.read() as snap:
        assert len(snap["T"]) == 101 and snap["T"].where("n == 100").first().s.startswith("payload 100")
    db.verify()


def test_write_copy_is_a_database_of_its_own(db, tmp_path):
    fill(db, 300)
    copy = str(tmp_path / "copy.strata")
    db.write_copy(copy, pack=False)
    with pytest.raises(strata.ExistsError):
        db.write_copy(copy)
    with strata.open(copy) as c, c.read() as snap:
        assert len(snap["T"]) == 300
        c.verify()


def test_compaction_is_busy_while_a_transaction_is_open(db):
    fill(db, 10)
    snap = db.read()
    with pytest.raises(strata.BusyError):
        db.compact()
    snap.close()
    db.compact()


def test_info_space_readers_and_recovery(db):
    fill(db, 50)
    info = db.info()
    assert info.version == db.version and info.page_size == 4096 and info.file_size > 0
    s = db.space()
    assert s.file_bytes >= s.used_bytes > 0
    with db.read() as snap:
        assert snap.version in db.readers()
    r = db.recovery()
    assert r.dropped == 0 and r.why == ""


def test_changes_between_snapshots(db):
    fill(db, 20)
    old = db.read()
    with db.write() as txn:
        t = txn["T"]
        keys = t.keys()
        t.object(keys[0]).delete()
        t.object(keys[1]).s = "changed"
        added = t.add(n=99, s="new")
    new = db.read()
    c = strata.changes(old, new, "T")
    assert c.deleted == [keys[0]] and c.modified == [keys[1]] and c.inserted == [added.key]
    old.close()
    new.close()


def test_no_sync_commits_then_sync(path):
    with strata.open(path, durability="no_sync") as db:
        fill(db, 10)
        db.sync()
    with strata.open(path) as db, db.read() as snap:
        assert len(snap["T"]) == 10


def test_unsynced_commits_are_visible_and_made_durable_by_sync(db):
    fill(db, 5)
    with db.write(sync=False) as txn:
        txn["T"].add(n=100, s="group")
    with db.read() as snap:
        assert snap["T"].where("n == 100").count() == 1
    db.sync()
