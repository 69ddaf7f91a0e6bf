"""Fixtures for the `strata` command-line tool's tests: the built tool, and files made with the
Python package (the same C core)."""
import datetime as dt
import decimal
import json
import os
import subprocess
import uuid

import pytest

import strata

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
UTC = dt.timezone.utc


@pytest.fixture(scope="session")
def tool():
    path = os.environ.get("STRATA_CLI", os.path.join(ROOT, "Sources", "StrataCLI", ".build", "debug", "strata"))
    if not os.path.exists(path):
        pytest.fail(f"the strata tool is not built at {path} (swift build --package-path Sources/StrataCLI)")
    return path


class Runner:
    def __init__(self, tool):
        self.tool = tool

    def __call__(self, *args, ok=True, input=None, timeout=120):
        env = dict(os.environ, STRATA_NO_PROGRESS="1")
        p = subprocess.run([self.tool, *map(str, args)], capture_output=True, text=True, input=input,
                           timeout=timeout, env=env)
        if ok is True:
            assert p.returncode == 0, f"strata {' '.join(map(str, args))} failed ({p.returncode}):\n{p.stderr}"
        elif ok is False:
            assert p.returncode != 0, f"strata {' '.join(map(str, args))} should fail:\n{p.stdout}"
            assert p.returncode < 128 and p.returncode > 0, f"killed by a signal: {p.returncode}"
            assert p.stderr.strip(), "a failure says why on stderr"
        return p

    def json(self, *args):
        return json.loads(self(*args, "--json").stdout)


@pytest.fixture
def run(tool):
    return Runner(tool)


@pytest.fixture
def zoo(tmp_path):
    """Dog(name indexed, age, color?) and Person(id pk, name, age, dogs: List(Dog), best: Link(Dog))."""
    path = str(tmp_path / "zoo.strata")
    with strata.open(path) as db, db.write() as txn:
        txn.create_table("Dog", {"name": strata.String(indexed=True), "age": strata.Int(),
                                 "color": strata.String(optional=True)})
        txn.create_table("Person", {"id": strata.Int(primary_key=True), "name": strata.String(),
                                    "age": strata.Int(), "dogs": strata.List("Dog"), "best": strata.Link("Dog")})
        dogs = txn["Dog"]
        rex = dogs.add(name="Rex", age=3, color="brown")
        fido = dogs.add(name="Fido", age=5)
        bello = dogs.add(name="bello", age=1, color="white")
        people = txn["Person"]
        people.add(id=1, name="Ann", age=40, dogs=[rex, fido], best=rex)
        people.add(id=2, name="Bob, \"the\" builder", age=25, dogs=[bello])
        people.add(id=3, name="Cid", age=33)
    return path


@pytest.fixture
def every_type(tmp_path):
    """A class of every type (plain, optional, list, set, map, mixed), an embedded class held
    one-to-one, in a list and in a map, links to objects with and without primary keys, mixed
    links, and a deleted object (keys with a gap)."""
    path = str(tmp_path / "all.strata")
    with strata.open(path) as db, db.write() as txn:
        txn.create_table("Tag", {"label": strata.String()})
        txn.create_table("Address", {"city": strata.String(), "zip": strata.String(optional=True),
                                     "tag": strata.Link("Tag")}, embedded=True)
        txn.create_table("Item", {
            "id": strata.String(primary_key=True),
            "b": strata.Bool(), "i": strata.Int(indexed=True), "f": strata.Float(), "d": strata.Double(),
            "s": strata.String(), "bin": strata.Bytes(), "ts": strata.Date(), "dec": strata.Decimal(),
            "u": strata.UUID(), "oid": strata.Oid(), "any": strata.Mixed(),
            "oi": strata.Int(optional=True), "os": strata.String(optional=True), "od": strata.Double(optional=True),
            "ints": strata.List(strata.Int), "names": strata.Set(strata.String),
            "scores": strata.Map(strata.Double), "maybe": strata.List(strata.Int(optional=True)),
            "tags": strata.List("Tag"), "tagset": strata.Set("Tag"), "tagmap": strata.Map("Tag"),
            "home": strata.Link("Address"), "homes": strata.List("Address"), "places": strata.Map("Address"),
            "other": strata.Link("Item"), "anys": strata.List(strata.Mixed()),
        })
        tags = txn["Tag"]
        gone = tags.add(label="gone")
        t1 = tags.add(label="first, with a comma")
        t2 = tags.add(label="第二 ✓")
        gone.delete()
        items = txn["Item"]
        a = items.add(id="a", b=True, i=-(1 << 63), f=0.1, d=3.141592653589793, s="naïve 小白 🐕\n\"quoted\"",
                      bin=b"\x00\xff\x10binary", ts=dt.datetime(2026, 11, 27, 19, 0, 1, 123456, tzinfo=UTC),
                      dec=decimal.Decimal("12345678901234567890.123456789012"),
                      u=uuid.UUID("137decc8-b300-4954-a233-f89909f4fd89"),
                      oid=strata.ObjectId("5f1b2c3d4e5f6a7b8c9d0e1f"), any=t2,
                      oi=None, os=None, od=float("nan"), ints=[3, 1, 2], names={"x", "y"},
                      scores={"math": 1.5, "art": -0.0}, maybe=[1, None, 3], tags=[t1, t2, t1],
                      tagset=[t2], tagmap={"k": t1, "none": None},
                      home={"city": "Zürich", "zip": "8000", "tag": t1},
                      homes=[{"city": "A", "tag": None}, {"city": "B", "zip": None, "tag": t2}],
                      places={"work": {"city": "Bern"}})
        items.add(id="b", b=False, i=(1 << 63) - 1, f=float("inf"), d=-1e-300, s="", bin=b"",
                  ts=dt.datetime(1931, 1, 2, 3, 4, 5, 6, tzinfo=UTC), dec=decimal.Decimal("-0.000000000000000000001"),
                  u=uuid.UUID(int=0), oid=strata.ObjectId("000000000000000000000000"),
                  any=dt.datetime(2000, 1, 1, tzinfo=UTC), oi=7, os="", od=float("-inf"), other=a,
                  anys=[None, True, 5, 2.5, "s", b"\x01", decimal.Decimal("1.5"), t1, a])
    return path
