import pytest

import strata
from strata._native import ffi, lib
from strata.errors import raise_for

CLASSES = {
    "STRATA_ERR_INVALID_ARGUMENT": strata.InvalidArgumentError, "STRATA_ERR_NOT_FOUND": strata.NotFoundError,
    "STRATA_ERR_EXISTS": strata.ExistsError, "STRATA_ERR_IO": strata.IOError,
    "STRATA_ERR_NO_SPACE": strata.NoSpaceError, "STRATA_ERR_CORRUPT": strata.CorruptError,
    "STRATA_ERR_NOT_STRATA": strata.NotStrataError, "STRATA_ERR_FORMAT_VERSION": strata.FormatVersionError,
    "STRATA_ERR_BUSY": strata.BusyError, "STRATA_ERR_READ_ONLY": strata.ReadOnlyError,
    "STRATA_ERR_TXN_STATE": strata.TransactionError, "STRATA_ERR_TOO_MANY_VERSIONS": strata.TooManyVersionsError,
    "STRATA_ERR_READERS_FULL": strata.ReadersFullError, "STRATA_ERR_MAP_FULL": strata.MapFullError,
    "STRATA_ERR_NO_MEMORY": strata.NoMemoryError, "STRATA_ERR_TOO_LARGE": strata.TooLargeError,
    "STRATA_ERR_WRONG_TYPE": strata.WrongTypeError, "STRATA_ERR_TIMEOUT": strata.TimeoutError,
    "STRATA_ERR_ENCRYPTION": strata.EncryptionError,
}


@pytest.mark.parametrize("name", sorted(CLASSES))
def test_every_status_has_its_exception_class_carrying_the_message(name):
    code = getattr(lib, name)
    err = ffi.new("strata_error *")
    err.message = b"the core's words"
    with pytest.raises(CLASSES[name]) as e:
        raise_for(code, err)
    assert isinstance(e.value, strata.Error) and e.value.code == code and "the core's words" in str(e.value)
    assert ffi.string(lib.strata_status_name(code)).decode() == name


def test_every_status_of_the_header_is_covered():
    names = [n for n in dir(lib) if n.startswith("STRATA_ERR_")]
    assert sorted(names) == sorted(CLASSES)


def test_a_file_that_is_no_database(tmp_path):
    p = tmp_path / "junk"
    p.write_bytes(b"this is not a database, it is plain text padded out " * 200)
    with pytest.raises(strata.NotStrataError, match="junk"):
        strata.open(str(p))


def test_a_missing_file_without_create(tmp_path):
    with pytest.raises(strata.NotFoundError):
        strata.open(str(tmp_path / "none"), create=False)


def test_a_second_writer_is_busy_with_try_only(zoo):
    import threading
    txn = zoo.write()
    seen = []

    def other():
        try:
            zoo.write(try_only=True).rollback()
            seen.append("began")
        except strata.BusyError as e:
            seen.append(e)

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert isinstance(seen[0], strata.BusyError)
    with pytest.raises(strata.TransactionError, match="already holds"):
        zoo.write()  # the same thread: it would wait for itself
    txn.rollback()
    zoo.write(try_only=True).rollback()


def test_bad_options(tmp_path):
    with pytest.raises(strata.InvalidArgumentError, match="durability"):
        strata.open(str(tmp_path / "x"), durability="sometimes")
    with pytest.raises(strata.InvalidArgumentError, match="map_size"):
        strata.open(str(tmp_path / "x"), map_size=10)


def test_a_transaction_used_after_commit(zoo):
    txn = zoo.write()
    dogs = txn["Dog"]
    txn.commit()
    with pytest.raises(strata.TransactionError, match="committed"):
        dogs.add(name="late", age=1)
    with pytest.raises(strata.TransactionError):
        txn.commit()


def test_a_snapshot_after_the_database_closed(zoo):
    snap = zoo.read()
    zoo.close()
    with pytest.raises(strata.TransactionError):
        snap["Dog"]
    with pytest.raises(strata.TransactionError, match="closed"):
        zoo.read()
    zoo.close()  # twice: nothing


def test_a_transaction_from_another_thread(zoo):
    import threading
    txn = zoo.read()
    caught = []

    def other():
        try:
            txn["Dog"]
        except strata.ThreadError as e:
            caught.append(str(e))

    t = threading.Thread(target=other)
    t.start()
    t.join()
    assert caught and "thread" in caught[0]
    txn.close()


def test_a_full_map_is_map_full(tmp_path):
    with strata.open(str(tmp_path / "small"), map_size=1 << 20) as db:
        with pytest.raises((strata.MapFullError, strata.NoSpaceError)):
            with db.write() as txn:
                txn.create_table("T", {"b": strata.Bytes()})
                for _ in range(200):
                    txn["T"].add(b=b"x" * 100_000)
        with db.read() as snap:
            assert "T" not in snap  # nothing of the failed write
