"""Query results: lazy (run when first read), sorted / distinct / limited by chaining, with
len, iteration, indexing, slicing and aggregates; and the changes between two snapshots."""

from collections import namedtuple

from ._native import ffi, lib
from .errors import check, new_error, InvalidArgumentError
from . import values as V


class Results:
    __slots__ = ("table", "predicate", "args", "_sort", "_distinct", "_limit", "_keys")

    def __init__(self, table, predicate, args, sort=(), distinct=(), limit=None):
        self.table = table
        self.predicate = predicate
        self.args = tuple(args)
        self._sort = tuple(sort)
        self._distinct = tuple(distinct)
        self._limit = limit
        self._keys = None

    def _derive(self, **kw):
        d = dict(sort=self._sort, distinct=self._distinct, limit=self._limit)
        d.update(kw)
        return Results(self.table, self.predicate, self.args, **d)

    def sort(self, key, ascending=True):
        """Sorted by `key` (a property, or a path through to-one links); an earlier sort breaks
        this one's ties."""
        return self._derive(sort=((key, ascending),) + self._sort)

    def distinct(self, *keys):
        """The first object of each distinct combination of these properties' values."""
        return self._derive(distinct=self._distinct + keys)

    def limit(self, n):
        if n < 0:
            raise InvalidArgumentError(f"limit({n}): give a count of at least 0")
        return self._derive(limit=n)

    def where(self, predicate, *args):
        """These results narrowed by another predicate (its $0 is its own first argument)."""
        shift = len(self.args)
        import re
        shifted = re.sub(r"\$(\d+)", lambda m: f"${int(m.group(1)) + shift}", predicate)
        r = Results(self.table, f"({self.predicate}) AND ({shifted})", self.args + tuple(args),
                    self._sort, self._distinct, self._limit)
        return r

    def _text(self):
        t = self.predicate
        if self._sort:
            t += " SORT(" + ", ".join(f"{k} {'ASC' if a else 'DESC'}" for k, a in self._sort) + ")"
        if self._distinct:
            t += " DISTINCT(" + ", ".join(self._distinct) + ")"
        if self._limit is not None:
            t += f" LIMIT({self._limit})"
        return t

    def _run(self, count_only=False):
        table = self.table
        txn = table.txn._handle()
        q = ffi.new("strata_query_t **")
        err = new_error()
        check(lib.strata_query_compile(txn, table.name.encode(), self._text().encode(), q, err), err)
        query = ffi.gc(q[0], lib.strata_query_free)
        from .objects import _linker
        arena = V.Arena()
        n = len(self.args)
        args = ffi.new("strata_value[]", max(n, 1))
        for i, a in enumerate(self.args):
            _arg(table, a, args[i], arena)
        if count_only:
            c = ffi.new("uint64_t *")
            check(lib.strata_query_count(query, txn, args, n, c, err), err)
            return int(c[0])
        out = ffi.new("strata_results_t **")
        check(lib.strata_query_run(query, txn, args, n, out, err), err)
        return ffi.gc(out[0], lib.strata_results_free)

    def _materialize(self):
        if self._keys is None:
            res = self._run()
            n = lib.strata_results_size(res)
            key = lib.strata_results_key
            self._keys = [key(res, i) for i in range(n)]
        else:
            self.table.txn._handle()
        return self._keys

    def __len__(self):
        if self._keys is None and not self._sort and not self._distinct and self._limit is None:
            return self._run(count_only=True)
        return len(self._materialize())

    def count(self):
        return len(self)

    def __iter__(self):
        table = self.table
        cls = table._class()
        for k in self._materialize():
            yield cls(table, k)

    def __getitem__(self, i):
        keys = self._materialize()
        if isinstance(i, slice):
            return [self.table._object(k) for k in keys[i]]
        return self.table._object(keys[i])

    def __bool__(self):
        return len(self) > 0

    def first(self):
        keys = self._materialize()
        return self.table._object(keys[0]) if keys else None

    def keys(self):
        return list(self._materialize())

    def _aggregate(self, prop, agg):
        p = self.table.prop(prop)
        res = self._run()
        val = ffi.new("strata_value *")
        err = new_error()
        check(lib.strata_results_aggregate(res, self.table._handle(), p.col, agg, val, err), err)
        return V.from_value(val)

    def sum(self, prop):
        return self._aggregate(prop, lib.STRATA_AGG_SUM)

    def avg(self, prop):
        return self._aggregate(prop, lib.STRATA_AGG_AVG)

    def min(self, prop):
        return self._aggregate(prop, lib.STRATA_AGG_MIN)

    def max(self, prop):
        return self._aggregate(prop, lib.STRATA_AGG_MAX)

    def delete(self):
        """Delete every object of these results (in a write)."""
        for o in list(self):
            o.delete()

    def __repr__(self):
        return f"<strata.Results {self.table.name} where {self._text()!r}>"


def _arg(table, a, out, arena):
    """A query argument: a value, an object (a link), or a list / tuple / set of them (IN)."""
    if isinstance(a, (list, tuple, set, frozenset)):
        items = list(a)
        arr = ffi.new("strata_value[]", max(len(items), 1))
        arena.keep.append(arr)
        for i, x in enumerate(items):
            _arg(table, x, arr[i], arena)
        out.type = lib.STRATA_TYPE_LIST
        out.u.list.items = arr
        out.u.list.count = len(items)
        return

    def link(obj, val):
        val.type = lib.STRATA_TYPE_LINK
        val.u.link = obj.key

    V.to_value(a, out, arena, link)


Changes = namedtuple("Changes", "deleted inserted modified")
Changes.__doc__ = """Keys of the objects of one table deleted, inserted and modified between two snapshots."""


def changes(old, new, table):
    """What changed in `table` from snapshot `old` to snapshot (or write) `new`: the keys
    deleted, inserted and modified, ascending. The cost follows the change, not the table."""
    out = ffi.new("strata_changes_t **")
    err = new_error()
    check(lib.strata_changes_get(old._handle(), new._handle(), table.encode(), out, err), err)
    c = ffi.gc(out[0], lib.strata_changes_free)

    def keys(kind):
        return [int(lib.strata_changes_key(c, kind, i)) for i in range(lib.strata_changes_count(c, kind))]
    return Changes(keys(lib.STRATA_CHANGE_DELETED), keys(lib.STRATA_CHANGE_INSERTED), keys(lib.STRATA_CHANGE_MODIFIED))
