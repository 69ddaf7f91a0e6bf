import os

import pytest

import strata

KEY = bytes(range(64))
OTHER = bytes(range(1, 65))
MARKER = "Okavango-secret-2291"


def fill(db, n=300):
    with db.write() as txn:
        txn.create_table("Note", {"n": strata.Int(), "s": strata.String(indexed=True)})
        for i in range(n):
            txn["Note"].add(n=i, s=f"{MARKER} {i} " * (1 + i % 40))


def on_disk(folder, needle):
    """Whether any file in the folder holds the bytes."""
    for name in os.listdir(folder):
        with open(os.path.join(folder, name), "rb") as f:
            if needle.encode() in f.read():
                return True
    return False


def count(db):
    with db.read() as snap:
        return len(snap["Note"])


def test_an_encrypted_file_reopens_with_its_key_and_shows_nothing(tmp_path):
    plain, secret = tmp_path / "plain", tmp_path / "secret"
    plain.mkdir(), secret.mkdir()
    with strata.open(plain / "p.strata") as db:
        fill(db)
    assert on_disk(plain, MARKER)  # the search finds it in a plain file
    with strata.open(secret / "s.strata", encryption_key=KEY) as db:
        fill(db)
        db.verify()
    assert not on_disk(secret, MARKER) and not on_disk(secret, "Note")
    with strata.open(secret / "s.strata", encryption_key=KEY) as db:
        assert count(db) == 300
        with db.read() as snap:
            assert snap["Note"].where("s BEGINSWITH $0", f"{MARKER} 7 ").count() == 1


def test_keys_that_do_not_open_raise_encryption_error(tmp_path):
    path = tmp_path / "k.strata"
    with strata.open(path, encryption_key=KEY) as db:
        fill(db, 10)
    with pytest.raises(strata.EncryptionError, match="does not open"):
        strata.open(path, encryption_key=OTHER)
    with pytest.raises(strata.EncryptionError, match="is encrypted"):
        strata.open(path)
    with pytest.raises(strata.InvalidArgumentError, match="64 bytes; this one is 16"):
        strata.open(path, encryption_key=KEY[:16])
    with pytest.raises(strata.InvalidArgumentError, match="not str"):
        strata.open(path, encryption_key="a string")
    with strata.open(tmp_path / "plain.strata") as db:
        fill(db, 1)
    with pytest.raises(strata.EncryptionError, match="not encrypted"):
        strata.open(tmp_path / "plain.strata", encryption_key=KEY)
    with strata.open(path, encryption_key=KEY) as db:
        assert count(db) == 10


def test_copies_and_compaction_encrypt_decrypt_and_rekey(tmp_path):
    path = tmp_path / "c.strata"
    with strata.open(path, encryption_key=KEY) as db:
        fill(db, 100)
        db.write_copy(tmp_path / "same.strata")
        db.write_copy(tmp_path / "plain.strata", encryption_key=None)
        db.write_copy(tmp_path / "other.strata", encryption_key=OTHER)
        db.compact(encryption_key=OTHER)  # re-keyed in place; goes on
        assert count(db) == 100
    for name, key in [("same.strata", KEY), ("plain.strata", None), ("other.strata", OTHER), ("c.strata", OTHER)]:
        with strata.open(tmp_path / name, encryption_key=key) as db:
            assert count(db) == 100
            db.verify()
    with pytest.raises(strata.EncryptionError):
        strata.open(path, encryption_key=KEY)
    with strata.open(tmp_path / "plain.strata") as db:
        db.compact(encryption_key=KEY)  # encrypted in place
    with pytest.raises(strata.EncryptionError):
        strata.open(tmp_path / "plain.strata")
    with strata.open(tmp_path / "plain.strata", encryption_key=KEY) as db:
        assert count(db) == 100
