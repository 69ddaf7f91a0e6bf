import os

import pytest

import strata


@pytest.fixture
def path(tmp_path):
    return os.path.join(tmp_path, "test.strata")


@pytest.fixture
def db(path):
    with strata.open(path) as d:
        yield d


@pytest.fixture
def zoo(db):
    """Dogs and people: Person(id pk, name, age, dogs: List(Dog), best: Link(Dog)), Dog(name, age, color?)."""
    with db.write() as txn:
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
        people.add(id=2, name="Bob", age=25, dogs=[bello])
        people.add(id=3, name="Cid", age=33)
    return db
