import threading

import pytest

import strata


def test_library_version_is_the_c_librarys():
    v = strata.library_version()
    assert v.count(".") == 2 and all(p.isdigit() for p in v.split("."))


def test_the_issue_tour(db):
    with db.write() as txn:
        txn.create_table("Dog", {"name": strata.String(indexed=True), "age": strata.Int()})
        txn.create_table("Person", {"id": strata.Int(primary_key=True), "name": strata.String(),
                                    "dogs": strata.List("Dog")})
        rex = txn["Dog"].add(name="Rex", age=3)
        txn["Person"].add(id=1, name="Ann", dogs=[rex])
    with db.read() as snap:
        assert snap["Person"].get(1).dogs[0].name == "Rex"
        q = snap["Dog"].where("age > $0 AND name BEGINSWITH[c] $1", 2, "r")
        assert (len(q), [d.name for d in q.sort("name")], q.sum("age")) == (1, ["Rex"], 3)
        assert snap["Dog"].first().backlinks("Person", "dogs") == [snap["Person"].get(1)]


def test_a_write_commits_when_its_block_ends(zoo, path):
    zoo.close()
    with strata.open(path) as again, again.read() as snap:
        assert len(snap["Dog"]) == 3 and snap["Person"].get(1).name == "Ann"


def test_a_write_rolls_back_when_its_block_raises(zoo):
    with pytest.raises(RuntimeError):
        with zoo.write() as txn:
            txn["Dog"].add(name="Ghost", age=9)
            raise RuntimeError("no")
    with zoo.read() as snap:
        assert len(snap["Dog"]) == 3


def test_explicit_commit_and_rollback(zoo):
    txn = zoo.write()
    txn["Dog"].add(name="Kept", age=2)
    txn.commit()
    txn = zoo.write()
    txn["Dog"].add(name="Dropped", age=2)
    txn.rollback()
    with zoo.read() as snap:
        assert [d.name for d in snap["Dog"].where("age == 2")] == ["Kept"]


def test_a_snapshot_never_changes_until_refreshed(zoo):
    snap = zoo.read()
    before = snap.version
    with zoo.write() as txn:
        txn["Dog"].add(name="Later", age=7)
    assert len(snap["Dog"]) == 3 and snap.version == before
    snap.refresh()
    assert len(snap["Dog"]) == 4 and snap.version > before
    snap.close()


def test_a_reader_thread_reads_a_stable_snapshot_while_a_writer_commits(zoo):
    counts, stop = [], threading.Event()

    def reader():
        while not stop.is_set():
            with zoo.read() as snap:
                n = len(snap["Dog"])
                assert n == len(list(snap["Dog"]))  # one snapshot, one answer
                counts.append(n)

    t = threading.Thread(target=reader)
    t.start()
    for i in range(50):
        with zoo.write() as txn:
            txn["Dog"].add(name=f"d{i}", age=i)
    stop.set()
    t.join()
    assert counts and counts == sorted(counts) and counts[-1] <= 53


def test_table_names_and_schema(zoo):
    with zoo.read() as snap:
        assert snap.table_names() == ["Dog", "Person"]
        assert "Dog" in snap and "Cat" not in snap
        props = snap["Person"].properties
        assert list(props) == ["id", "name", "age", "dogs", "best"]
        assert props["id"].primary_key and props["dogs"].is_list and props["dogs"].target == "Dog"
        assert snap["Person"].primary_key == "id" and snap["Dog"].primary_key is None


def test_schema_changes_and_schema_version(zoo):
    with zoo.write() as txn:
        txn.schema_version = 2
        txn["Dog"].add_property("weight", strata.Double(optional=True))
        txn["Dog"].rename_property("color", "colour")
        txn["Dog"].add(name="Heavy", age=4, weight=30.5, colour="black")
    with zoo.read() as snap:
        assert snap.schema_version == 2
        assert snap["Dog"].where("weight > 30").first().colour == "black"
        assert snap["Dog"].where("name == 'Rex'").first().weight is None
    with zoo.write() as txn:
        txn["Dog"].remove_property("weight")
        assert "weight" not in txn["Dog"].properties


def test_a_table_that_exists_already_is_an_exists_error(zoo):
    with zoo.write() as txn:
        with pytest.raises(strata.ExistsError, match="Dog"):
            txn.create_table("Dog", {})


def test_drop_table(zoo):
    with zoo.write() as txn:
        txn.create_table("Tmp", {"x": strata.Int()})
        txn["Tmp"].add(x=1)
    with zoo.write() as txn:
        txn.drop_table("Tmp")
    with zoo.read() as snap:
        assert "Tmp" not in snap


def test_memory_databases_share_data_by_name_within_the_process():
    with strata.open("mem-test", durability="memory") as a, strata.open("mem-test", durability="memory") as b:
        with a.write() as txn:
            txn.create_table("T", {"x": strata.Int()})
            txn["T"].add(x=42)
        with b.read() as snap:
            assert snap["T"].first().x == 42


def test_read_only_databases_refuse_writes(zoo, path):
    zoo.close()
    with strata.open(path, read_only=True) as ro:
        with ro.read() as snap:
            assert len(snap["Dog"]) == 3
        with pytest.raises(strata.ReadOnlyError):
            ro.write()


def test_the_gil_is_released_while_waiting_for_a_commit(zoo):
    import time
    done = threading.Event()

    def waiter():
        zoo.wait_for_commit(zoo.version, timeout=0.5)  # no commit comes: waits in C
        done.set()

    t = threading.Thread(target=waiter)
    start = time.time()
    t.start()
    spins = 0
    while not done.is_set() and time.time() - start < 5:
        spins += 1  # Python runs meanwhile: the waiting thread does not hold the GIL
    t.join()
    assert done.is_set() and spins > 10_000
