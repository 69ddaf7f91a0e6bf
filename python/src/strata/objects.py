"""Objects of a transaction and their collection properties. An object reads and writes its
table's row through the transaction that handed it out: after that transaction ends, or after
the object's deletion, using it raises (InvalidObjectError / TransactionError)."""

from threading import get_ident

from ._native import ffi, lib
from .errors import check, new_error, InvalidObjectError, WrongTypeError, NotFoundError, InvalidArgumentError
from . import values as V

_INT, _STRING, _DOUBLE, _FLOAT, _NULL, _BOOL = (lib.STRATA_TYPE_INT, lib.STRATA_TYPE_STRING, lib.STRATA_TYPE_DOUBLE,
                                               lib.STRATA_TYPE_FLOAT, lib.STRATA_TYPE_NULL, lib.STRATA_TYPE_BOOL)
_LINK, _TYPED_LINK = lib.STRATA_TYPE_LINK, lib.STRATA_TYPE_TYPED_LINK
_py_get, _unpack = lib.strata_py_get, ffi.unpack


def _linker(table, prop):
    """How an object (or a dict, for an embedded target) is stored in property `prop`."""
    txn = table.txn

    def link(obj, out):
        if isinstance(obj, dict):
            raise WrongTypeError(f"{table.name}.{prop.name}: give an object, not a dict")
        if obj.table.txn is not txn:
            raise WrongTypeError(f"{table.name}.{prop.name}: the object belongs to another transaction")
        if prop.type == lib.STRATA_TYPE_MIXED:
            out.type = lib.STRATA_TYPE_TYPED_LINK
            out.u.typed_link.key = obj._strata_key
            out.u.typed_link.table = lib.strata_table_id(obj.table._handle())
        else:
            if prop.target != obj.table.name:
                raise WrongTypeError(f"{table.name}.{prop.name} links to '{prop.target}', not to a '{obj.table.name}'")
            out.type = lib.STRATA_TYPE_LINK
            out.u.link = obj._strata_key
    return link


def _resolver(table, prop):
    from .table import Table
    txn = table.txn

    def resolve(kind, val):
        if kind == lib.STRATA_TYPE_LINK:
            return txn[prop.target]._object(int(val.u.link))
        return txn._table_by_id(val.u.typed_link.table)._object(int(val.u.typed_link.key))
    return resolve


class Object:
    """A row: its properties read as attributes (`dog.name`) and, in a write, set the same way."""

    __slots__ = ("table", "_strata_key")

    def __init__(self, table, key):
        _set_table(self, table)
        _set_key(self, key)

    @property
    def key(self):
        """The object's key in its table (stable, never reused)."""
        return self._strata_key

    def _h(self, what):
        h = self.table._handle()
        err = new_error()
        if lib.strata_obj_exists(h, self._strata_key, err) != 0:
            raise InvalidObjectError(f"{what}: the {self.table.name} object {self._strata_key} was deleted")
        return h

    @property
    def is_valid(self):
        """False once deleted or once its transaction has ended."""
        try:
            self._h("is_valid")
            return True
        except Exception:
            return False

    def __getattr__(self, name):
        table = self.table
        props = table.txn._props.get(table.name) or table.properties
        prop = props.get(name)
        if prop is None:
            if name.startswith("__"):
                raise AttributeError(name)
            raise AttributeError(f"'{table.name}' has no property '{name}'")
        return self._get(prop)

    def __getitem__(self, name):
        return self._get(self.table.prop(name))

    def _get(self, prop):
        if prop.is_collection:
            self._h(f"{self.table.name}.{prop.name}")
            if prop.is_list:
                return ListProxy(self, prop)
            return SetProxy(self, prop) if prop.is_set else MapProxy(self, prop)
        return _read(self, prop)

    def __setattr__(self, name, value):
        self._set(name, value)

    def __setitem__(self, name, value):
        self._set(name, value)

    def _set(self, name, value):
        self.table.txn._require_write(f"{self.table.name}.{name} = ...")
        self._update({name: value})

    def _update(self, values, skip=None, fresh=False):
        """Set properties (`skip`: the primary key an add set; `fresh`: the object was just made)."""
        table = self.table
        txn = table.txn
        props = table.properties
        h = table._h if fresh else self._h(f"{table.name}")
        val, err = txn._val, txn._err
        key = self._strata_key
        for name, value in values.items():
            if name == skip:
                continue
            prop = props.get(name) or table.prop(name)
            if prop.is_collection:
                self._get(prop)._assign(value)
                continue
            if prop.primary_key:
                raise InvalidArgumentError(f"{table.name}.{name} is the primary key: it is set when the object is added")
            t, pt = type(value), prop.type
            if t is str and pt == _STRING:
                b = value.encode("utf-8")
                rc = lib.strata_py_set_bytes(h, key, prop.col, _STRING, b, len(b), err)
            elif t is int and pt == _INT and -(1 << 63) <= value < (1 << 63):
                rc = lib.strata_py_set_int(h, key, prop.col, value, err)
            elif t is float and pt == _DOUBLE:
                rc = lib.strata_py_set_double(h, key, prop.col, value, err)
            else:
                arena = V.Arena()
                _store(table, prop, value, val, arena, self)
                rc = lib.strata_obj_set(h, key, prop.col, val, err)
            if rc:
                check(rc, err)

    def delete(self):
        """Delete the object (in a write)."""
        self.table.txn._require_write(f"delete {self.table.name}")
        h = self._h(f"delete {self.table.name}")
        err = new_error()
        check(lib.strata_obj_delete(h, self._strata_key, err), err)

    def backlinks(self, table, prop):
        """The objects of `table` whose property `prop` (a link or list of links) points here."""
        src = self.table.txn[table]
        p = src.prop(prop)
        h = self._h(f"backlinks of {self.table.name}")
        count = ffi.new("size_t *")
        err = new_error()
        check(lib.strata_obj_backlinks(h, self._strata_key, src._handle(), p.col, ffi.NULL, 0, count, err), err)
        n = count[0]
        keys = ffi.new("strata_key_t[]", max(n, 1))
        check(lib.strata_obj_backlinks(h, self._strata_key, src._handle(), p.col, keys, n, count, err), err)
        return [src._object(int(keys[i])) for i in range(min(n, count[0]))]

    def to_dict(self):
        """The property values (collections as lists and dicts, links as objects)."""
        out = {}
        for name, prop in self.table.properties.items():
            v = self._get(prop)
            out[name] = v.copy() if isinstance(v, (ListProxy, SetProxy, MapProxy)) else v
        return out

    def __eq__(self, other):
        return (isinstance(other, Object) and other._strata_key == self._strata_key
                and other.table.name == self.table.name and other.table.txn._db is self.table.txn._db)

    def __hash__(self):
        return hash((self.table.name, self._strata_key))

    def __repr__(self):
        return f"<{self.table.name} {self._strata_key}>"

    def __dir__(self):
        return list(self.table.properties) + ["key", "table", "delete", "backlinks", "to_dict", "is_valid"]


def _read(obj, prop):
    """A scalar property of `obj`, read through the C glue's flat struct (the one read path:
    Object._get and the per-table descriptors call it)."""
    table = obj.table
    txn = table.txn
    if txn._ended or get_ident() != txn._thread:
        txn._handle()  # raises
    flat = txn._flat
    rc = _py_get(table._h, obj._strata_key, prop.col, flat, txn._val, txn._err)
    if rc:
        if rc == lib.STRATA_ERR_NOT_FOUND:
            obj._h(f"{table.name}.{prop.name}")  # deleted: says so
        check(rc, txn._err)
    t = flat.type
    if t == _STRING:
        n = flat.n
        return _unpack(flat.p, n).decode("utf-8") if n else ""
    if t == _INT:
        return flat.i
    if t == _DOUBLE or t == _FLOAT:
        return flat.d
    if t == _NULL:
        return None
    if t == _BOOL:
        return flat.i != 0
    if t == _LINK or t == _TYPED_LINK:
        return V.from_value(txn._val, _resolver(table, prop))
    return V.from_value(txn._val)


_set_table = Object.table.__set__
_set_key = Object._strata_key.__set__


class _Column:
    """A property of a table's object class: `dog.name` reads it directly."""

    __slots__ = ("prop",)

    def __init__(self, prop):
        self.prop = prop

    def __get__(self, obj, cls=None):
        if obj is None:
            return self
        prop = self.prop
        return obj._get(prop) if prop.is_collection else _read(obj, prop)

    def __set__(self, obj, value):
        obj._set(self.prop.name, value)


def object_class(name, props):
    """The Object subclass of table `name`: a descriptor per property (names of Object's own
    members stay theirs; read those properties as `obj["key"]`)."""
    attrs = {"__slots__": ()}
    for pname, prop in props.items():
        if pname.isidentifier() and not hasattr(Object, pname):
            attrs[pname] = _Column(prop)
    return type(name, (Object,), attrs)


def _store(table, prop, value, out, arena, owner=None):
    """Fill `out` with `value` for property `prop` of `table` (a dict for a link to an embedded
    table makes a new embedded object)."""
    if isinstance(value, dict) and prop.type == lib.STRATA_TYPE_LINK:
        target = table.txn[prop.target]
        if not target.embedded:
            raise WrongTypeError(f"{table.name}.{prop.name}: a dict makes an object only for an embedded table; "
                                 f"'{prop.target}' is not one: give an object")
        value = target.add(**value)
    if prop.type == lib.STRATA_TYPE_FLOAT and isinstance(value, (int, float)) and not isinstance(value, bool):
        out.type = lib.STRATA_TYPE_FLOAT
        out.u.f = float(value)
        return
    V.to_value(value, out, arena, _linker(table, prop))


class _Collection:
    __slots__ = ("owner", "prop")

    def __init__(self, owner, prop):
        self.owner = owner
        self.prop = prop

    def _h(self):
        return self.owner._h(f"{self.owner.table.name}.{self.prop.name}")

    def __len__(self):
        n = ffi.new("size_t *")
        err = new_error()
        check(lib.strata_list_size(self._h(), self.owner._strata_key, self.prop.col, n, err), err)
        return int(n[0])

    def _at(self, i):
        val = ffi.new("strata_value *")
        err = new_error()
        check(lib.strata_list_get(self._h(), self.owner._strata_key, self.prop.col, i, val, err), err)
        return V.from_value(val, _resolver(self.owner.table, self.prop))

    def _value(self, v, arena):
        val = ffi.new("strata_value *")
        _store(self.owner.table, self.prop, v, val, arena)
        return val

    def _write(self, what):
        self.owner.table.txn._require_write(f"{self.owner.table.name}.{self.prop.name}.{what}")

    def __iter__(self):
        for i in range(len(self)):
            yield self._at(i)

    def clear(self):
        self._write("clear")
        err = new_error()
        check(lib.strata_list_clear(self._h(), self.owner._strata_key, self.prop.col, err), err)

    def __repr__(self):
        return f"<{type(self).__name__} {self.owner!r}.{self.prop.name} {self.copy()!r}>"

    def __eq__(self, other):
        return self.copy() == (other.copy() if isinstance(other, _Collection) else other)


class ListProxy(_Collection):
    """A list property: indexing (negative and slices too), len, iteration, and in a write
    append / extend / insert / `l[i] = v` / `del l[i]` / pop / remove / move / clear."""

    def __getitem__(self, i):
        n = len(self)
        if isinstance(i, slice):
            return [self._at(j) for j in range(*i.indices(n))]
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self.owner.table.name}.{self.prop.name}: index {i} is out of range (size {n})")
        return self._at(i)

    def insert(self, i, v):
        self._write("insert")
        n = len(self)
        i = max(0, min(n, i + n if i < 0 else i))
        arena = V.Arena()
        err = new_error()
        check(lib.strata_list_insert(self._h(), self.owner._strata_key, self.prop.col, i, self._value(v, arena), err), err)

    def append(self, v):
        self.insert(len(self), v)

    def extend(self, values):
        for v in values:
            self.append(v)

    def __setitem__(self, i, v):
        self._write("set")
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self.owner.table.name}.{self.prop.name}: index {i} is out of range (size {n})")
        arena = V.Arena()
        err = new_error()
        check(lib.strata_list_set(self._h(), self.owner._strata_key, self.prop.col, i, self._value(v, arena), err), err)

    def __delitem__(self, i):
        self._write("remove")
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError(f"{self.owner.table.name}.{self.prop.name}: index {i} is out of range (size {n})")
        err = new_error()
        check(lib.strata_list_remove(self._h(), self.owner._strata_key, self.prop.col, i, err), err)

    def pop(self, i=-1):
        v = self[i]
        del self[i]
        return v

    def index(self, v):
        for i, x in enumerate(self):
            if x == v:
                return i
        raise ValueError(f"{v!r} is not in {self.owner.table.name}.{self.prop.name}")

    def remove(self, v):
        del self[self.index(v)]

    def move(self, src, dst):
        self._write("move")
        err = new_error()
        check(lib.strata_list_move(self._h(), self.owner._strata_key, self.prop.col, src, dst, err), err)

    def copy(self):
        return list(self)

    def _assign(self, values):
        self.clear()
        self.extend(values or [])


class SetProxy(_Collection):
    """A set property: len, iteration, `in`, and in a write add / discard / update / clear."""

    def __contains__(self, v):
        arena = V.Arena()
        idx = ffi.new("size_t *")
        err = new_error()
        try:
            val = self._value(v, arena)
        except WrongTypeError:
            return False
        rc = lib.strata_set_find(self._h(), self.owner._strata_key, self.prop.col, val, idx, err)
        if rc == lib.STRATA_ERR_NOT_FOUND:
            return False
        check(rc, err)
        return True

    def add(self, v):
        self._write("add")
        arena = V.Arena()
        err = new_error()
        check(lib.strata_set_insert(self._h(), self.owner._strata_key, self.prop.col, self._value(v, arena), ffi.NULL, err), err)

    def update(self, values):
        for v in values:
            self.add(v)

    def discard(self, v):
        self._write("discard")
        arena = V.Arena()
        err = new_error()
        check(lib.strata_set_erase(self._h(), self.owner._strata_key, self.prop.col, self._value(v, arena), ffi.NULL, err), err)

    def copy(self):
        items = list(self)
        try:
            return set(items)
        except TypeError:
            return items

    def _assign(self, values):
        self.clear()
        self.update(values or [])


class MapProxy(_Collection):
    """A map property: `m[key]`, `in`, get, keys / values / items, len, and in a write
    `m[key] = v`, `del m[key]`, update, clear."""

    def keys(self):
        h = self._h()
        out = []
        val = ffi.new("strata_value *")
        err = new_error()
        for i in range(len(self)):
            check(lib.strata_map_key_at(h, self.owner._strata_key, self.prop.col, i, val, err), err)
            out.append(V.from_value(val))
        return out

    def __iter__(self):
        return iter(self.keys())

    def values(self):
        return [self._at(i) for i in range(len(self))]

    def items(self):
        return list(zip(self.keys(), self.values()))

    def __getitem__(self, k):
        b = k.encode()
        val = ffi.new("strata_value *")
        err = new_error()
        rc = lib.strata_map_get(self._h(), self.owner._strata_key, self.prop.col, b, len(b), val, err)
        if rc == lib.STRATA_ERR_NOT_FOUND:
            raise KeyError(k)
        check(rc, err)
        return V.from_value(val, _resolver(self.owner.table, self.prop))

    def get(self, k, default=None):
        try:
            return self[k]
        except KeyError:
            return default

    def __contains__(self, k):
        try:
            self[k]
            return True
        except KeyError:
            return False

    def __setitem__(self, k, v):
        self._write("set")
        b = k.encode()
        arena = V.Arena()
        err = new_error()
        check(lib.strata_map_set(self._h(), self.owner._strata_key, self.prop.col, b, len(b), self._value(v, arena), ffi.NULL, err), err)

    def __delitem__(self, k):
        self._write("delete")
        b = k.encode()
        removed = ffi.new("bool *")
        err = new_error()
        check(lib.strata_map_erase(self._h(), self.owner._strata_key, self.prop.col, b, len(b), removed, err), err)
        if not removed[0]:
            raise KeyError(k)

    def update(self, values):
        for k, v in dict(values).items():
            self[k] = v

    def copy(self):
        return dict(self.items())

    def _assign(self, values):
        self.clear()
        self.update(values or {})
