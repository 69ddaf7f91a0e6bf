"""Strata: an embedded object database (memory-mapped, copy-on-write versions, crash-safe),
through its C ABI.

    import strata
    with strata.open("app.strata") as db:
        with db.write() as txn:
            txn.create_table("Dog", {"name": strata.String(indexed=True), "age": strata.Int()})
            txn["Dog"].add(name="Rex", age=3)
        with db.read() as snap:
            [d.name for d in snap["Dog"].where("age > $0", 2).sort("name")]
"""

from .errors import (Error, InvalidArgumentError, NotFoundError, ExistsError, IOError_ as IOError,
                     NoSpaceError, CorruptError, NotStrataError, FormatVersionError, BusyError,
                     ReadOnlyError, TransactionError, TooManyVersionsError, ReadersFullError,
                     MapFullError, NoMemoryError, TooLargeError, WrongTypeError,
                     TimeoutError_ as TimeoutError, EncryptionError, ThreadError, InvalidObjectError)
from .values import ObjectId
from .schema import (Property, Int, Bool, Float, Double, String, Bytes, Date, Decimal, UUID, Oid,
                     Mixed, Link, List, Set, Map, PropertyInfo)
from .database import open, Database, library_version, SAME_KEY
from .transaction import Transaction
from .table import Table
from .objects import Object, ListProxy, SetProxy, MapProxy
from .results import Results, Changes, changes

__version__ = "0.14.0"
