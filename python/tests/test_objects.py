import pytest

import strata


def test_links_lists_and_backlinks(zoo):
    with zoo.read() as snap:
        ann = snap["Person"].get(1)
        assert ann.best.name == "Rex" and [d.name for d in ann.dogs] == ["Rex", "Fido"]
        rex = ann.best
        assert rex.backlinks("Person", "dogs") == [ann] and rex.backlinks("Person", "best") == [ann]
        assert snap["Person"].get(3).best is None


def test_list_operations(zoo):
    with zoo.write() as txn:
        ann = txn["Person"].get(1)
        dogs = ann.dogs
        bello = txn["Dog"].where("name == 'bello'").first()
        dogs.append(bello)
        dogs.insert(0, bello)
        assert [d.name for d in dogs] == ["bello", "Rex", "Fido", "bello"]
        assert [d.name for d in dogs[1:3]] == ["Rex", "Fido"] and dogs[-1].name == "bello"
        dogs.move(0, 2)
        assert [d.name for d in dogs] == ["Rex", "Fido", "bello", "bello"]
        del dogs[3]
        dogs[0] = bello
        assert dogs.pop().name == "bello" and len(dogs) == 2
        dogs.remove(bello)
        assert [d.name for d in dogs] == ["Fido"]
        with pytest.raises(IndexError, match="out of range"):
            dogs[5]
        ann.dogs = []
        assert len(ann.dogs) == 0


def test_lists_of_values(db):
    with db.write() as txn:
        txn.create_table("T", {"tags": strata.List(strata.String()), "scores": strata.List(strata.Int(optional=True))})
        t = txn["T"].add(tags=["a", "b"], scores=[1, None, 3])
        t.tags.extend(["c"])
    with db.read() as snap:
        t = snap["T"].first()
        assert t.tags == ["a", "b", "c"] and t.scores.copy() == [1, None, 3]
        assert snap["T"].where("ANY tags == 'c'").count() == 1


def test_sets(db):
    with db.write() as txn:
        txn.create_table("T", {"s": strata.Set(strata.Int())})
        t = txn["T"].add(s=[3, 1, 3, 2])
        assert len(t.s) == 3 and 2 in t.s and 9 not in t.s
        t.s.discard(1)
        t.s.add(4)
        assert t.s.copy() == {2, 3, 4}


def test_maps(db):
    with db.write() as txn:
        txn.create_table("Dog", {"name": strata.String()})
        txn.create_table("T", {"m": strata.Map(strata.Int()), "pets": strata.Map("Dog")})
        rex = txn["Dog"].add(name="Rex")
        t = txn["T"].add(m={"b": 2, "a": 1}, pets={"first": rex})
        t.m["c"] = 3
        del t.m["a"]
        assert t.m.copy() == {"b": 2, "c": 3} and t.m.keys() == ["b", "c"] and t.m.get("zz") is None
        assert t.pets["first"].name == "Rex" and "first" in t.pets
        with pytest.raises(KeyError):
            t.m["a"]
        rex.delete()
        assert t.pets["first"] is None  # a deleted object's map entry holds None


def test_primary_keys_upsert_and_duplicates(zoo):
    with zoo.write() as txn:
        people = txn["Person"]
        with pytest.raises(strata.ExistsError, match="1"):
            people.add(id=1, name="Again")
        people.upsert(id=1, age=41)
        people.upsert(id=9, name="New", age=1)
        assert people.get(1).age == 41 and people.get(1).name == "Ann" and people.get(9).name == "New"
        assert people.get(123) is None
        with pytest.raises(strata.InvalidArgumentError, match="primary key"):
            people.add(name="no id")
        with pytest.raises(strata.InvalidArgumentError, match="primary key"):
            people.get(1).id = 5


def test_deleting_an_object_nulls_links_and_leaves_lists(zoo):
    with zoo.write() as txn:
        rex = txn["Dog"].where("name == 'Rex'").first()
        rex.delete()
        ann = txn["Person"].get(1)
        assert ann.best is None and [d.name for d in ann.dogs] == ["Fido"]
        with pytest.raises(strata.InvalidObjectError, match="deleted"):
            rex.name
        assert not rex.is_valid


def test_an_object_after_its_transaction_ended(zoo):
    with zoo.read() as snap:
        ann = snap["Person"].get(1)
    with pytest.raises(strata.TransactionError, match="ended"):
        ann.name
    with pytest.raises(strata.TransactionError):
        snap["Dog"]


def test_writing_in_a_snapshot_is_read_only_error(zoo):
    with zoo.read() as snap:
        with pytest.raises(strata.ReadOnlyError, match="snapshot"):
            snap["Person"].get(1).name = "X"
        with pytest.raises(strata.ReadOnlyError):
            snap["Dog"].add(name="x", age=1)


def test_embedded_objects_from_dicts(db):
    with db.write() as txn:
        txn.create_table("Address", {"city": strata.String()}, embedded=True)
        txn.create_table("Person", {"name": strata.String(), "home": strata.Link("Address")})
        p = txn["Person"].add(name="Ann", home={"city": "Oslo"})
        assert p.home.city == "Oslo"
        p.home = {"city": "Bergen"}  # replaces (and deletes) the old one
        assert len(txn["Address"]) == 1
    with db.read() as snap:
        assert snap["Person"].first().home.city == "Bergen"


def test_a_link_to_the_wrong_table_is_refused(zoo):
    with zoo.write() as txn:
        with pytest.raises(strata.WrongTypeError, match="links to 'Dog'"):
            txn["Person"].get(1).best = txn["Person"].get(2)


def test_unknown_properties(zoo):
    with zoo.read() as snap:
        ann = snap["Person"].get(1)
        with pytest.raises(AttributeError, match="no property 'nope'"):
            ann.nope
        with pytest.raises(strata.NotFoundError, match="Person"):
            snap["Person"].prop("nope")
        with pytest.raises(strata.NotFoundError, match="Cat"):
            snap["Cat"]


def test_to_dict_and_equality(zoo):
    with zoo.read() as snap:
        ann = snap["Person"].get(1)
        d = ann.to_dict()
        assert d["name"] == "Ann" and [x.name for x in d["dogs"]] == ["Rex", "Fido"]
        assert ann == snap["Person"].get(1) and hash(ann) == hash(snap["Person"].get(1))
        assert ann != snap["Person"].get(2)
