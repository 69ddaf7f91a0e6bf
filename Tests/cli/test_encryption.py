"""The tool on encrypted files: the key from --key-file or $STRATA_KEY, a clear error without
it, and encrypt / decrypt / rekey in place."""
import os

import pytest

import strata

KEY = bytes(range(64))
OTHER = bytes(range(100, 164))


def make(path, key):
    with strata.open(path, encryption_key=key) as db, db.write() as txn:
        txn.create_table("Secret", {"n": strata.Int(), "s": strata.String()})
        for i in range(50):
            txn["Secret"].add(n=i, s=f"Serengeti {i}")


def holds(path, needle):
    with open(path, "rb") as f:
        return needle in f.read()


@pytest.fixture
def keys(tmp_path):
    raw, hexed = tmp_path / "raw.key", tmp_path / "hex.key"
    raw.write_bytes(KEY)
    hexed.write_text(OTHER.hex().upper() + "\n")
    bad = tmp_path / "bad.key"
    bad.write_text("abc")
    return raw, hexed, bad


def test_commands_open_an_encrypted_file_with_its_key(run, tmp_path, keys):
    raw, hexed, bad = keys
    path = tmp_path / "e.strata"
    make(path, KEY)
    p = run("info", path, ok=False)
    assert "is encrypted" in p.stderr and "e.strata" in p.stderr
    p = run("info", path, "--key-file", hexed, ok=False)
    assert "does not open" in p.stderr
    p = run("info", path, "--key-file", bad, ok=False)
    assert "64 bytes or 128 hex digits" in p.stderr
    assert run.json("query", path, "Secret", "n < 3", "--key-file", raw)
    assert run.json("info", path, "--key-file", raw)["encrypted"] is True
    assert "ChaCha20-Poly1305" in run("info", path, "--key-file", raw).stdout
    env = dict(os.environ, STRATA_KEY=KEY.hex())
    import subprocess
    out = subprocess.run([run.tool, "check", str(path)], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr


def test_encrypt_decrypt_and_rekey_in_place(run, tmp_path, keys):
    raw, hexed, _ = keys
    path = tmp_path / "p.strata"
    make(path, None)
    assert holds(path, b"Serengeti 7")
    run("encrypt", path, "--new-key-file", raw)
    assert not holds(path, b"Serengeti 7")
    run("info", path, ok=False)
    run("rekey", path, "--key-file", raw, "--new-key-file", hexed)
    run("info", path, "--key-file", raw, ok=False)
    with strata.open(path, encryption_key=OTHER) as db, db.read() as snap:
        assert len(snap["Secret"]) == 50
    assert run.json("decrypt", path, "--key-file", hexed)["encrypted"] is False
    run("check", path)  # no key needed now (the plain file is packed: LZ4 hides the text)
    with strata.open(path) as db, db.read() as snap:
        assert snap["Secret"].where("n == 7").first().s == "Serengeti 7"
