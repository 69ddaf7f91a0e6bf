import random

import pytest

import strata


def names(results):
    return [o.name for o in results]


def test_arguments_sort_distinct_limit(zoo):
    with zoo.read() as snap:
        dogs = snap["Dog"]
        assert names(dogs.where("age >= $0", 3).sort("age", ascending=False)) == ["Fido", "Rex"]
        assert names(dogs.where("name BEGINSWITH[c] 'b'")) == ["bello"]
        assert names(dogs.all().sort("name")) == ["Fido", "Rex", "bello"]
        assert len(dogs.all().distinct("color")) == 3
        assert names(dogs.all().sort("age").limit(2)) == ["bello", "Rex"]
        assert dogs.where("color == nil").count() == 1


def test_lazy_results_index_slice_iterate(zoo):
    with zoo.read() as snap:
        r = snap["Dog"].all().sort("age")
        assert len(r) == 3 and r[0].name == "bello" and r[-1].name == "Fido"
        assert names(r[1:]) == ["Rex", "Fido"] and r.first().name == "bello"
        assert bool(snap["Dog"].where("age > 100")) is False
        assert snap["Dog"].where("age > 100").first() is None


def test_aggregates(zoo):
    with zoo.read() as snap:
        dogs = snap["Dog"].all()
        assert (dogs.sum("age"), dogs.min("age"), dogs.max("age")) == (9, 1, 5)
        assert dogs.avg("age") == pytest.approx(3.0)
        assert snap["Dog"].where("age > 100").avg("age") is None


def test_in_lists_links_and_backlinks(zoo):
    with zoo.read() as snap:
        dogs, people = snap["Dog"], snap["Person"]
        assert names(dogs.where("name IN $0", ["Rex", "bello"]).sort("name")) == ["Rex", "bello"]
        rex = dogs.where("name == 'Rex'").first()
        assert names(people.where("best == $0", rex)) == ["Ann"]
        assert names(people.where("ANY dogs.name == 'bello'")) == ["Bob"]
        assert names(people.where("dogs.@count == 0")) == ["Cid"]
        assert names(dogs.where("@links.Person.dogs.@count == 0")) == []
        assert names(people.where("SUBQUERY(dogs, $d, $d.age > 2).@count == 2")) == ["Ann"]


def test_narrowing_results(zoo):
    with zoo.read() as snap:
        r = snap["Person"].where("age > $0", 20).where("name != $0", "Bob")
        assert sorted(names(r)) == ["Ann", "Cid"]


def test_a_bad_predicate_names_the_column(zoo):
    with zoo.read() as snap:
        with pytest.raises(strata.InvalidArgumentError, match="column"):
            len(snap["Dog"].where("age >>> 3"))
        with pytest.raises(strata.Error, match="nope"):
            len(snap["Dog"].where("nope == 3"))


def test_results_see_their_snapshot(zoo):
    with zoo.read() as snap:
        r = snap["Dog"].all()
        with zoo.write() as txn:
            txn["Dog"].add(name="New", age=9)
        assert len(r) == 3


def test_deleting_results(zoo):
    with zoo.write() as txn:
        txn["Dog"].where("age < 4").delete()
        assert names(txn["Dog"]) == ["Fido"]


OPS = ["==", "!=", "<", "<=", ">", ">="]


def model_match(obj, prop, op, value):
    v = obj[prop]
    if v is None:
        return op == "!=" if value is not None else op == "=="
    if value is None:
        return op == "!="
    return {"==": lambda: v == value, "!=": lambda: v != value, "<": lambda: v < value,
            "<=": lambda: v <= value, ">": lambda: v > value, ">=": lambda: v >= value}[op]()


@pytest.mark.parametrize("seed", range(6))
def test_random_predicates_agree_with_a_plain_python_model(db, seed):
    rnd = random.Random(seed)
    rows = [{"a": rnd.randint(-5, 5), "b": rnd.choice([None, rnd.randint(0, 3)]),
             "s": rnd.choice(["x", "y", "z", "xy"]), "f": rnd.uniform(-1, 1)} for _ in range(120)]
    with db.write() as txn:
        txn.create_table("R", {"a": strata.Int(), "b": strata.Int(optional=True), "s": strata.String(),
                               "f": strata.Double()})
        for r in rows:
            txn["R"].add(**r)
    with db.read() as snap:
        objs = list(zip(snap["R"].all().keys(), rows))
        for _ in range(40):
            clauses, args, checks = [], [], []
            for _ in range(rnd.randint(1, 3)):
                prop = rnd.choice(["a", "b", "s", "f"])
                op = rnd.choice(OPS if prop != "s" else ["==", "!="])
                value = {"a": rnd.randint(-5, 5), "b": rnd.choice([None, rnd.randint(0, 3)]),
                         "s": rnd.choice(["x", "y", "q"]), "f": rnd.uniform(-1, 1)}[prop]
                if value is None and op not in ("==", "!="):
                    op = "=="
                clauses.append(f"{prop} {op} ${len(args)}")
                args.append(value)
                checks.append((prop, op, value))
            joiner = rnd.choice([" AND ", " OR "])
            pred = joiner.join(clauses)
            got = set(snap["R"].where(pred, *args).keys())
            combine = all if joiner == " AND " else any
            want = {k for k, r in objs if combine(model_match(r, p, o, v) for p, o, v in checks)}
            assert got == want, pred
            assert len(snap["R"].where(pred, *args)) == len(want)


def test_full_text_search(db):
    with db.write() as txn:
        txn.create_table("Note", {"body": strata.String(optional=True, full_text=True), "title": strata.String()})
        notes = txn["Note"]
        notes.add(body="Swift on Linux, no Objective-C", title="a")
        notes.add(body="Café data for the DATABASE", title="b")
        notes.add(body=None, title="c")
        assert notes.properties["body"].full_text and not notes.properties["title"].full_text
    with db.read() as snap:
        notes = snap["Note"]
        assert [n.title for n in notes.where("body TEXT 'swift -objective-c'")] == []
        assert [n.title for n in notes.where("body TEXT $0", "SWIFT linux")] == ["a"]
        assert [n.title for n in notes.where("body TEXT 'cafe data*'")] == ["b"]
        assert notes.where("body TEXT '-swift'").count() == 1  # null has no text: never matches
        with pytest.raises(strata.InvalidArgumentError, match="no word"):
            notes.where("body TEXT '***'").count()
    with db.write() as txn:  # an index added later, on existing objects
        txn["Note"].set_full_text("title")
        assert repr(strata.String(full_text=True)) == "strata.String(full_text=True)"
    with db.read() as snap:
        assert snap["Note"].where("title TEXT 'b'").count() == 1
