import datetime as dt
import decimal
import uuid

import pytest

import strata

UTC = dt.timezone.utc

VALUES = [
    ("int", strata.Int(), -(1 << 63)),
    ("int_max", strata.Int(), (1 << 63) - 1),
    ("double", strata.Double(), 3.141592653589793),
    ("float", strata.Float(), 1.5),
    ("bool", strata.Bool(), True),
    ("string", strata.String(), "小白 🐕 naïve"),
    ("empty_string", strata.String(), ""),
    ("bytes", strata.Bytes(), b"\x00\xffbinary"),
    ("date", strata.Date(), dt.datetime(2026, 11, 27, 19, 0, 1, 123456, tzinfo=UTC)),
    ("date_before_1970", strata.Date(), dt.datetime(1931, 1, 2, 3, 4, 5, 6, tzinfo=UTC)),
    ("uuid", strata.UUID(), uuid.UUID("137decc8-b300-4954-a233-f89909f4fd89")),
    ("objectid", strata.Oid(), strata.ObjectId("5f1b2c3d4e5f6a7b8c9d0e1f")),
    ("decimal", strata.Decimal(), decimal.Decimal("12345678901234567890.123456789012")),
    ("decimal_negative_small", strata.Decimal(), decimal.Decimal("-0.000000000000000000001")),
]


@pytest.mark.parametrize("name,ptype,value", VALUES, ids=[v[0] for v in VALUES])
def test_every_type_round_trips_through_a_reopened_file(path, name, ptype, value):
    with strata.open(path) as db, db.write() as txn:
        txn.create_table("T", {"v": ptype, "m": strata.Mixed(), "o": type(ptype)(optional=True)})
        txn["T"].add(v=value, m=value if name != "float" else None, o=None)
    with strata.open(path) as db, db.read() as snap:
        o = snap["T"].first()
        assert o.v == value and o.o is None
        if name != "float":
            assert o.m == value
        assert snap["T"].where("v == $0", value).first() == o


def test_a_datetime_reads_back_in_utc(db):
    plus2 = dt.timezone(dt.timedelta(hours=2))
    with db.write() as txn:
        txn.create_table("T", {"d": strata.Date()})
        txn["T"].add(d=dt.datetime(2026, 1, 1, 12, 0, tzinfo=plus2))
    with db.read() as snap:
        d = snap["T"].first().d
        assert d.tzinfo == UTC and d == dt.datetime(2026, 1, 1, 10, 0, tzinfo=UTC)


def test_a_naive_datetime_is_refused_naming_it(db):
    with db.write() as txn:
        txn.create_table("T", {"d": strata.Date()})
        with pytest.raises(strata.WrongTypeError, match="time zone"):
            txn["T"].add(d=dt.datetime(2026, 1, 1))
        assert len(txn["T"]) == 0  # no half-made object


def test_a_value_of_the_wrong_type_raises_and_leaves_nothing(db):
    with db.write() as txn:
        txn.create_table("T", {"n": strata.Int(), "s": strata.String()})
        with pytest.raises(strata.WrongTypeError, match="T"):
            txn["T"].add(n=1, s=5)
        with pytest.raises(strata.WrongTypeError):
            txn["T"].add(n=object())
        assert len(txn["T"]) == 0


def test_an_integer_past_64_bits_is_too_large(db):
    with db.write() as txn:
        txn.create_table("T", {"n": strata.Int()})
        with pytest.raises(strata.TooLargeError, match="64 bits"):
            txn["T"].add(n=1 << 64)


def test_none_only_where_optional(db):
    with db.write() as txn:
        txn.create_table("T", {"n": strata.Int(), "o": strata.Int(optional=True)})
        t = txn["T"].add(n=1, o=None)
        assert t.o is None
        with pytest.raises(strata.Error):
            t.n = None


def test_object_ids(db):
    a, b = strata.ObjectId(), strata.ObjectId()
    assert a != b and len(a.binary) == 12 and strata.ObjectId(str(a)) == a
    assert abs((a.generation_time - dt.datetime.now(UTC)).total_seconds()) < 5
    with pytest.raises(ValueError, match="hexadecimal"):
        strata.ObjectId("not hex at all, 24 chars")


def test_decimal_specials_and_precision(db):
    vals = [decimal.Decimal("NaN"), decimal.Decimal("Infinity"), decimal.Decimal("-Infinity"),
            decimal.Decimal("9" * 34), decimal.Decimal("1E+6111"), decimal.Decimal("0")]
    with db.write() as txn:
        txn.create_table("T", {"d": strata.Decimal(), "i": strata.Int()})
        for i, v in enumerate(vals):
            txn["T"].add(d=v, i=i)
    with db.read() as snap:
        got = [o.d for o in snap["T"].all().sort("i")]
        assert got[0].is_nan() and got[1:] == vals[1:]


def test_a_mixed_property_holds_an_object_of_any_table(db):
    with db.write() as txn:
        txn.create_table("A", {"x": strata.Int()})
        txn.create_table("B", {"any": strata.Mixed()})
        a = txn["A"].add(x=7)
        txn["B"].add(any=a)
        txn["B"].add(any="text")
    with db.read() as snap:
        vals = [b.any for b in snap["B"]]
        assert vals[0].x == 7 and vals[0].table.name == "A" and vals[1] == "text"
