"""The `strata` tool against files made here: golden output, round trips (export → import →
export byte for byte, dump → load → dump), damaged files, other processes, bad input."""
import datetime as dt
import decimal
import json
import math
import os
import shutil
import signal
import subprocess
import sys
import time
import uuid

import pytest

import strata

UTC = dt.timezone.utc
COMMANDS = ["info", "schema", "query", "export", "import", "dump", "load", "check", "compact", "copy",
            "readers", "watch", "recover", "encrypt", "decrypt", "rekey"]


# ------------------------------------------------------------------ help, info, schema, query

def test_help_lists_every_command(run):
    out = run("--help").stdout
    for c in COMMANDS:
        assert f"  {c} " in out, c
    for c in COMMANDS:
        sub = run(c, "--help").stdout
        assert "USAGE: strata " + c in sub


def test_info_reports_versions_space_and_readers(run, zoo):
    out = run("info", zoo).stdout
    assert "objects:   6 in 2 classes" in out and "writer:    idle" in out
    j = run.json("info", zoo)
    assert j["objects"] == 6 and j["classes"] == 2 and j["version"] >= 1
    assert j["fileBytes"] >= j["usedBytes"] > 0 and j["liveReaders"] == 0 and j["writer"] == "idle"
    assert j["recovery"]["dropped"] == 0


SCHEMA_GOLDEN = """schema version 0, 2 classes

class Dog
+--------------------+-----------+---------+
| property           | type      |         |
+--------------------+-----------+---------+
| name               | string    | indexed |
| age                | int       |         |
| color              | string?   |         |
| @links.Person.dogs | backlinks |         |
| @links.Person.best | backlinks |         |
+--------------------+-----------+---------+

class Person
+----------+----------------+-------------+
| property | type           |             |
+----------+----------------+-------------+
| id       | int            | primary key |
| name     | string         |             |
| age      | int            |             |
| dogs     | list<link Dog> |             |
| best     | link Dog       |             |
+----------+----------------+-------------+
"""


def test_schema_golden(run, zoo):
    assert run("schema", zoo).stdout == SCHEMA_GOLDEN


def test_schema_json_and_swift(run, every_type):
    j = run.json("schema", every_type)
    item = next(c for c in j["classes"] if c["name"] == "Item")
    props = {p["name"]: p for p in item["properties"]}
    assert props["id"]["primaryKey"] and props["i"]["indexed"]
    assert props["names"]["collection"] == "set" and props["scores"]["collection"] == "map"
    assert props["home"]["target"] == "Address"
    assert next(c for c in j["classes"] if c["name"] == "Address")["embedded"]
    swift = run("schema", every_type, "--swift").stdout
    for line in ["class Address: EmbeddedObject {", "class Item: Object {",
                 "@Persisted(primaryKey: true) var id: String", "@Persisted(indexed: true) var i: Int",
                 "@Persisted var f: Float", "@Persisted var bin: Data", "@Persisted var ts: Date",
                 "@Persisted var dec: Decimal128", "@Persisted var u: UUID", "@Persisted var oid: ObjectId",
                 "@Persisted var any: AnyRealmValue", "@Persisted var oi: Int?", "@Persisted var ints: List<Int>",
                 "@Persisted var names: MutableSet<String>", "@Persisted var scores: Map<String, Double>",
                 "@Persisted var maybe: List<Int?>", "@Persisted var tags: List<Tag>",
                 "@Persisted var tagmap: Map<String, Tag?>", "@Persisted var home: Address?",
                 "@Persisted(originProperty: \"other\") var itemOther: LinkingObjects<Item>"]:
        assert line in swift, line


QUERY_GOLDEN = """+----+--------------------+-----+-------+------+
| id | name               | age | dogs  | best |
+----+--------------------+-----+-------+------+
| 1  | Ann                | 40  | [0,1] | 0    |
| 2  | Bob, "the" builder | 25  | [2]   |      |
+----+--------------------+-----+-------+------+
(2 objects)
"""


def test_query_golden_table_json_csv(run, zoo):
    assert run("query", zoo, "Person", "dogs.@count > $0", "0", "--format", "table").stdout == QUERY_GOLDEN
    rows = json.loads(run("query", zoo, "Person", "age > $0", 20, "--sort=-age", "--json").stdout)
    assert [r["name"] for r in rows] == ["Ann", "Cid", 'Bob, "the" builder']
    assert rows[0]["dogs"] == [0, 1] and rows[1]["best"] is None
    csv = run("query", zoo, "Dog", "name BEGINSWITH[c] $0", "b", "--format", "csv").stdout
    assert csv == "name,age,color\nbello,1,white\n"
    assert run("query", zoo, "Person", "name == $0", '"Ann"', "--count").stdout.strip() == "1"
    assert run("query", zoo, "Person", "--limit", "2", "--sort", "id", "--json").stdout.count('"id"') == 2


def test_full_text_index_shown_queried_and_kept_by_copies(run, tmp_path):
    path = str(tmp_path / "notes.strata")
    with strata.open(path) as db, db.write() as txn:
        txn.create_table("Note", {"body": strata.String(full_text=True), "n": strata.Int()})
        txn["Note"].add(body="Swift on Linux", n=1)
        txn["Note"].add(body="Objective-C on macOS", n=2)
    assert "full-text" in run("schema", path).stdout
    assert "@Persisted(indexed: .fullText) var body: String" in run("schema", path, "--swift").stdout
    assert run("query", path, "Note", "body TEXT $0", '"linux -objective-c"', "--count").stdout.strip() == "1"
    p = run("query", path, "Note", "body TEXT '-'", ok=False)
    assert "no word" in p.stderr
    copy = str(tmp_path / "loaded.strata")
    run("load", copy, input=run("dump", path).stdout)
    with strata.open(copy) as db, db.read() as snap:
        assert snap["Note"].properties["body"].full_text
        assert snap["Note"].where("body TEXT 'objective-c'").count() == 1
    run("check", copy)


def test_a_bad_predicate_names_the_column(run, zoo):
    p = run("query", zoo, "Person", "age >> 3", ok=False)
    assert "column" in p.stderr
    p = run("query", zoo, "Person", "age > $0", ok=False)
    assert "argument" in p.stderr
    p = run("query", zoo, "Cat", ok=False)
    assert "Cat" in p.stderr


# ------------------------------------------------------------------ export, import, dump, load

def test_export_import_export_is_byte_identical_for_every_type(run, every_type, tmp_path):
    first = tmp_path / "a.json"
    run("export", every_type, "-o", first)
    copy = str(tmp_path / "copy.strata")
    run("import", copy, first)
    assert run("export", copy).stdout == first.read_text()
    # And the values themselves, read through the Python package.
    with strata.open(copy) as db, db.read() as snap:
        a = snap["Item"].where("id == 'a'").first()
        b = snap["Item"].where("id == 'b'").first()
        assert a.i == -(1 << 63) and b.i == (1 << 63) - 1
        assert a.f == pytest.approx(0.1) and b.f == math.inf and math.isnan(a.od) and b.od == -math.inf
        assert a.s == "naïve 小白 🐕\n\"quoted\"" and a.bin == b"\x00\xff\x10binary"
        assert a.ts == dt.datetime(2026, 11, 27, 19, 0, 1, 123456, tzinfo=UTC)
        assert b.ts == dt.datetime(1931, 1, 2, 3, 4, 5, 6, tzinfo=UTC)
        assert a.dec == decimal.Decimal("12345678901234567890.123456789012")
        assert a.u == uuid.UUID("137decc8-b300-4954-a233-f89909f4fd89")
        assert a.any.label == "第二 ✓" and b.other == a
        assert [t.label for t in a.tags] == ["first, with a comma", "第二 ✓", "first, with a comma"]
        assert a.home.city == "Zürich" and a.home.tag.label == "first, with a comma"
        assert [h.city for h in a.homes] == ["A", "B"] and a.places["work"].city == "Bern"
        assert list(a.maybe) == [1, None, 3] and dict(a.scores) == {"math": 1.5, "art": -0.0}
        assert b.anys[8] == a and b.anys[6] == decimal.Decimal("1.5")


def test_dump_load_dump_round_trips(run, every_type, tmp_path):
    dump = run("dump", every_type).stdout
    assert dump.splitlines()[0] == '{"strata-dump":1,"schemaVersion":0}'
    assert dump.splitlines()[-1] == '{"end":{"objects":4}}'
    new = str(tmp_path / "loaded.strata")
    run("load", new, input=dump)
    assert run("dump", new).stdout == dump
    assert run.json("check", new)["sound"] is True


def test_a_dump_cut_short_is_refused_and_leaves_no_file(run, zoo, tmp_path):
    dump = run("dump", zoo).stdout
    new = str(tmp_path / "cut.strata")
    p = run("load", new, input="\n".join(dump.splitlines()[:-2]) + "\n", ok=False)
    assert "cut short" in p.stderr and not os.path.exists(new)
    p = run("load", new, input="hello\n", ok=False)
    assert "line 1" in p.stderr and not os.path.exists(new)
    run("load", zoo, input=dump, ok=False)  # never over an existing file


def test_csv_export_import_and_a_bad_cell_named_by_line_and_column(run, zoo, tmp_path):
    csv = tmp_path / "people.csv"
    run("export", zoo, "--class", "Person", "--format", "csv", "-o", csv)
    assert csv.read_text().splitlines()[0] == "id,name,age,dogs,best"
    # A new file with the same classes and no objects, then the CSV of each class.
    empty = tmp_path / "schema.json"
    doc = json.loads(run("export", zoo).stdout)
    doc["objects"] = {}
    empty.write_text(json.dumps(doc))
    new = str(tmp_path / "new.strata")
    run("import", new, empty)
    dogs = tmp_path / "dogs.csv"
    run("export", zoo, "--class", "Dog", "--format", "csv", "-o", dogs)
    run("import", new, "--class", "Dog", dogs)
    run("import", new, "--class", "Person", csv)
    assert run("export", new).stdout == run("export", zoo).stdout
    bad = tmp_path / "bad.csv"
    bad.write_text("id,name,age,dogs,best\n10,Eve,41,[],\n11,Fay,old,[],\n")
    p = run("import", new, "--class", "Person", bad, ok=False)
    assert "line 3" in p.stderr and "column 3 (age)" in p.stderr and "'old' is not an int" in p.stderr
    assert run("query", new, "Person", "--count").stdout.strip() == "3"  # nothing of it stayed
    bad.write_text("id,nom\n1,x\n")
    assert "no property 'nom'" in run("import", new, "--class", "Person", bad, ok=False).stderr


def test_a_bad_json_import_changes_nothing(run, zoo, tmp_path):
    doc = json.loads(run("export", zoo).stdout)
    before = run("export", zoo).stdout
    doc["objects"] = {"Person": [{"id": 9, "name": "Dup", "age": 1, "dogs": [], "best": None},
                                 {"id": 1, "name": "Ann again", "age": 2, "dogs": [], "best": None}]}
    src = tmp_path / "dup.json"
    src.write_text(json.dumps(doc))
    p = run("import", zoo, src, ok=False)
    assert "primary key 1 already exists" in p.stderr and "STRATA_ERR_EXISTS" in p.stderr
    doc["objects"] = {"Person": [{"id": 9, "name": "X", "age": 1, "dogs": [7], "best": None}]}
    src.write_text(json.dumps(doc))
    assert "Dog #7" in run("import", zoo, src, ok=False).stderr
    src.write_text('{"strata":1,"schema":[')
    assert "not valid JSON" in run("import", zoo, src, ok=False).stderr
    assert run("export", zoo).stdout == before


# ------------------------------------------------------------------ check, compact, copy, recover

def damage(path, offset, length=64):
    with open(path, "r+b") as f:
        f.seek(offset)
        data = bytearray(f.read(length))
        for i in range(len(data)):
            data[i] ^= 0x5A
        f.seek(offset)
        f.write(data)


def used_pages(run, path):
    return run.json("info", path)["usedBytes"] // 4096


def test_check_passes_a_sound_file_and_names_the_damage(run, every_type, tmp_path):
    out = run("check", every_type).stdout
    assert out.startswith(f"{every_type}: sound")
    bad = str(tmp_path / "bad.strata")
    shutil.copy(every_type, bad)
    n = used_pages(run, every_type)
    named = 0
    for page in range(2, n):
        shutil.copy(every_type, bad)
        damage(bad, page * 4096 + 100)
        p = run("check", bad, ok=None)
        assert p.returncode in (0, 1), p  # never a crash
        if p.returncode == 1:
            named += "damaged" in p.stderr
    assert named > 0


def test_compact_and_copy_keep_every_object(run, zoo, tmp_path):
    with strata.open(zoo) as db:
        for i in range(20):
            with db.write() as txn:
                txn["Dog"].add(name=f"d{i}", age=i)
        with db.write() as txn:
            for d in txn["Dog"].where("name BEGINSWITH 'd'"):
                d.delete()
    before = run("export", zoo).stdout
    copy = str(tmp_path / "copy.strata")
    run("copy", zoo, copy)
    assert run("export", copy).stdout == before
    j = run.json("compact", zoo)
    assert j["bytesAfter"] <= j["bytesBefore"]
    assert run("export", zoo).stdout == before
    assert run.json("check", zoo)["sound"]


def test_compact_is_refused_while_another_process_has_the_file(run, zoo):
    holder = subprocess.Popen([sys.executable, "-c", (
        "import strata, sys\n"
        f"db = strata.open({zoo!r})\n"
        "print('open', flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        before = open(zoo, "rb").read()
        p = run("compact", zoo, ok=False)
        assert "BUSY" in p.stderr
        assert open(zoo, "rb").read() == before
    finally:
        holder.stdin.close()
        holder.wait(10)


def test_recover_copies_what_is_readable(run, every_type, tmp_path):
    out = str(tmp_path / "rec.strata")
    j = run.json("recover", every_type, out)
    assert j["lost"] == [] and j["copied"] == {"Item": 2, "Tag": 2}
    assert run("export", out).stdout == run("export", every_type).stdout
    # Damaged copies: never a crash; whatever is written is a sound file.
    n = used_pages(run, every_type)
    for page in range(2, n):
        bad = str(tmp_path / f"bad{page}.strata")
        shutil.copy(every_type, bad)
        damage(bad, page * 4096 + 200)
        rec = str(tmp_path / f"rec{page}.strata")
        p = run("recover", bad, rec, ok=None)
        assert p.returncode in (0, 1), p.stderr
        if p.returncode == 0:
            assert run.json("check", rec)["sound"]
        else:
            assert not os.path.exists(rec)


# ------------------------------------------------------------------ readers, watch

def test_readers_lists_a_reader_and_clears_it_when_its_process_dies(run, zoo):
    # Another process keeps the file open (while none does, the next open resets the slots).
    holder = subprocess.Popen([sys.executable, "-c", (
        "import strata, sys\n"
        f"db = strata.open({zoo!r})\n"
        "print('open', flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    reader = subprocess.Popen([sys.executable, "-c", (
        "import strata, sys, os\n"
        f"db = strata.open({zoo!r})\n"
        "snap = db.read().__enter__()\n"
        "print(os.getpid(), flush=True)\n"
        "sys.stdin.read()\n")], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "open"
        pid = int(reader.stdout.readline())
        j = run.json("readers", zoo)
        mine = [r for r in j["readers"] if r["pid"] == pid]
        assert len(mine) == 1 and mine[0]["alive"] and mine[0]["version"] >= 1 and 0 <= mine[0]["ageMs"] < 60000
        assert str(pid) in run("readers", zoo).stdout
        reader.kill()
        reader.wait()
        j = run.json("readers", zoo)
        assert [r["alive"] for r in j["readers"] if r["pid"] == pid] == [False]
        assert "stale" in run("readers", zoo).stdout
        j = run.json("readers", zoo, "--clear-stale")
        assert j["cleared"] == 1 and j["readers"] == []
    finally:
        reader.kill()
        holder.stdin.close()
        holder.wait(10)


def test_watch_sees_a_commit_of_another_process(run, tool, zoo):
    env = dict(os.environ, STRATA_NO_PROGRESS="1")
    w = subprocess.Popen([tool, "watch", zoo, "--json", "--commits", "2", "--timeout", "20"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = json.loads(w.stdout.readline())
        assert first["watching"] == zoo
        with strata.open(zoo) as db:
            with db.write() as txn:
                txn["Person"].add(id=4, name="Dee", age=20)
                txn["Person"].where("id == 2").first().age = 26
            with db.write() as txn:
                txn["Person"].where("id == 3").first().delete()
        c1 = json.loads(w.stdout.readline())
        c2 = json.loads(w.stdout.readline())
        assert w.wait(20) == 0
    finally:
        w.kill()
    person = next(c for c in c1["changes"] if c["class"] == "Person")
    assert person["inserted"] == [4] and person["modified"] == [{"ref": 2, "properties": ["age"]}]
    assert c2["version"] == c1["version"] + 1
    person = next(c for c in c2["changes"] if c["class"] == "Person")
    assert person["deleted"] == [3]


# ------------------------------------------------------------------ bad files

def test_bad_files_are_clear_errors(run, tmp_path, zoo):
    for cmd in (["info"], ["schema"], ["query", "X"], ["export"], ["check"], ["dump"], ["readers"]):
        p = run(cmd[0], str(tmp_path / "missing.strata"), *cmd[1:], ok=False)
        assert "no such file" in p.stderr
        assert not os.path.exists(tmp_path / "missing.strata")
    text = tmp_path / "notes.txt"
    text.write_text("hello, this is not a database at all " * 200)
    p = run("info", text, ok=False)
    assert "NOT_STRATA" in p.stderr
    assert text.read_text().startswith("hello")
    p = run("check", tmp_path, ok=False)
    assert "directory" in p.stderr
    p = run("copy", zoo, zoo, ok=False)
    assert "EXISTS" in p.stderr
