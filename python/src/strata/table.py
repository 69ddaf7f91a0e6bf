"""A table of a transaction: its properties, and its objects (add, get by primary key, upsert,
delete, iterate, query)."""

from threading import get_ident

from ._native import ffi, lib
from .errors import check, new_error, NotFoundError, InvalidArgumentError, WrongTypeError, Error
from .schema import Property, PropertyInfo
from . import values as V
from .objects import Object, object_class

_find_int = lib.strata_py_find_int
_NOT_FOUND = lib.STRATA_ERR_NOT_FOUND


class Table:
    __slots__ = ("txn", "name", "_h")

    def __init__(self, txn, name, handle):
        self.txn = txn
        self.name = name
        self._h = handle

    def _handle(self):
        self.txn._handle()
        return self._h

    def __repr__(self):
        return f"<strata.Table {self.name}>"

    def __eq__(self, other):
        return isinstance(other, Table) and other.txn is self.txn and other.name == self.name

    def __hash__(self):
        return hash((id(self.txn), self.name))

    # -------------------------------------------------------------- schema

    @property
    def properties(self):
        """The properties in the order they were added ({name: PropertyInfo})."""
        cache = self.txn._props
        props = cache.get(self.name)
        if props is None:
            h = self._handle()
            n = ffi.new("size_t *")
            err = new_error()
            check(lib.strata_table_property_count(h, n, err), err)
            info = ffi.new("strata_property_info *")
            props = {}
            for i in range(n[0]):
                check(lib.strata_table_property_at(h, i, info, err), err)
                name = ffi.string(info.name).decode()
                target = ffi.string(info.link_target).decode() if info.link_target != ffi.NULL else None
                props[name] = PropertyInfo(name, info.col, info.type, info.flags, target)
            cache[self.name] = props
        return props

    def prop(self, name):
        p = self.properties.get(name)
        if p is None:
            raise NotFoundError(f"table '{self.name}' has no property '{name}'")
        return p

    @property
    def primary_key(self):
        """The primary key property's name, or None."""
        pks = self.txn._pks
        if self.name not in pks:
            pks[self.name] = next((p.name for p in self.properties.values() if p.primary_key), None)
        return pks[self.name]

    @property
    def embedded(self):
        b = ffi.new("bool *")
        err = new_error()
        check(lib.strata_table_is_embedded(self._handle(), b, err), err)
        return bool(b[0])

    def _schema_changed(self):
        self.txn._props.pop(self.name, None)
        self.txn._pks.pop(self.name, None)
        self.txn._classes.pop(self.name, None)

    def _object(self, key):
        """The object of key `key`, as an instance of this table's class (a descriptor per
        property: `dog.name` reads without a lookup by name)."""
        return self._class()(self, key)

    def _class(self):
        cls = self.txn._classes.get(self.name)
        if cls is None:
            cls = self.txn._classes[self.name] = object_class(self.name, self.properties)
        return cls

    def add_property(self, name, prop):
        """Add a property (existing objects get None, or the type's zero when not optional)."""
        self.txn._require_write(f"add_property({self.name}.{name})")
        if isinstance(prop, type) and issubclass(prop, Property):
            prop = prop()
        if not isinstance(prop, Property):
            raise InvalidArgumentError(f"{self.name}.{name}: {prop!r} is not a property type (strata.Int(), strata.List('Dog'), ...)")
        col = ffi.new("strata_col_t *")
        err = new_error()
        target = prop.target.encode() if prop.target else ffi.NULL
        flags = prop.flags() & ~lib.STRATA_PROP_PRIMARY_KEY
        check(lib.strata_table_add_property(self._h, name.encode(), prop.core_type, flags, target, col, err), err)
        if prop.primary_key:
            check(lib.strata_table_set_primary_key(self._h, col[0], err), err)
        self._schema_changed()

    def remove_property(self, name):
        self.txn._require_write(f"remove_property({self.name}.{name})")
        err = new_error()
        check(lib.strata_table_remove_property(self._h, self.prop(name).col, err), err)
        self._schema_changed()

    def rename_property(self, name, new_name):
        self.txn._require_write(f"rename_property({self.name}.{name})")
        err = new_error()
        check(lib.strata_table_rename_property(self._h, self.prop(name).col, new_name.encode(), err), err)
        self._schema_changed()

    def set_indexed(self, name, indexed=True):
        self.txn._require_write(f"set_indexed({self.name}.{name})")
        err = new_error()
        check(lib.strata_table_set_indexed(self._h, self.prop(name).col, indexed, err), err)
        self._schema_changed()

    def set_full_text(self, name, full_text=True):
        """Add (or remove) the full-text index of string property `name`; building it reads
        every object. A property has a full-text index or a plain one, not both."""
        self.txn._require_write(f"set_full_text({self.name}.{name})")
        err = new_error()
        check(lib.strata_table_set_fulltext(self._h, self.prop(name).col, full_text, err), err)
        self._schema_changed()

    def set_primary_key(self, name):
        """Make `name` the primary key (None: no primary key); refused, changing nothing, when
        objects share a value."""
        self.txn._require_write(f"set_primary_key({self.name}.{name})")
        err = new_error()
        col = self.prop(name).col if name is not None else lib.STRATA_NO_COL
        check(lib.strata_table_set_primary_key(self._h, col, err), err)
        self._schema_changed()

    # -------------------------------------------------------------- objects

    def __len__(self):
        n = ffi.new("uint64_t *")
        err = new_error()
        check(lib.strata_table_size(self._handle(), n, err), err)
        return int(n[0])

    def keys(self):
        h = self._handle()
        n = ffi.new("size_t *")
        err = new_error()
        check(lib.strata_table_keys(h, ffi.NULL, 0, n, err), err)
        cap = n[0]
        buf = ffi.new("strata_key_t[]", max(cap, 1))
        check(lib.strata_table_keys(h, buf, cap, n, err), err)
        return ffi.unpack(buf, min(cap, n[0]))

    def __iter__(self):
        cls = self._class()
        for k in self.keys():
            yield cls(self, k)

    def object(self, key):
        """The object whose key is `key` (NotFoundError when there is none)."""
        err = new_error()
        check(lib.strata_obj_exists(self._handle(), key, err), err)
        return self._object(key)

    def first(self):
        for o in self:
            return o
        return None

    def get(self, primary_key, default=None):
        """The object whose primary key is `primary_key`, or `default`."""
        # (the common case inline: an integer key, the table's class made already)
        txn = self.txn
        if txn._ended or get_ident() != txn._thread:
            txn._handle()  # raises
        if type(primary_key) is int and txn._pks.get(self.name) and -(1 << 63) <= primary_key < (1 << 63):
            rc = _find_int(self._h, primary_key, txn._key, txn._err)
            if rc:
                if rc == _NOT_FOUND:
                    return default
                check(rc, txn._err)
            cls = txn._classes.get(self.name) or self._class()
            return cls(self, txn._key[0])
        key = self._find_pk(primary_key)
        return default if key is None else self._object(key)

    def _find_pk(self, value):
        txn = self.txn
        if txn._ended or get_ident() != txn._thread:
            txn._handle()  # raises
        if self.primary_key is None:
            raise InvalidArgumentError(f"table '{self.name}' has no primary key")
        if type(value) is int and -(1 << 63) <= value < (1 << 63):
            rc = _find_int(self._h, value, txn._key, txn._err)
        else:
            arena = V.Arena()
            V.to_value(value, txn._val, arena)
            rc = lib.strata_obj_find_pk(self._h, txn._val, txn._key, txn._err)
        if rc == lib.STRATA_ERR_NOT_FOUND:
            return None
        check(rc, txn._err)
        return txn._key[0]

    def add(self, **values):
        """A new object with these property values (the primary key among them when the table
        has one: ExistsError when it is taken). A value that does not fit raises and leaves no
        object behind."""
        txn = self.txn
        if not (txn.is_write and txn._usable()):
            txn._require_write(f"{self.name}.add")
        h = self._h
        pk = self.primary_key
        out, err = txn._key, txn._err
        if pk is not None:
            if pk not in values:
                raise InvalidArgumentError(f"{self.name}.add: the primary key '{pk}' is missing")
            v = values[pk]
            if type(v) is int and -(1 << 63) <= v < (1 << 63):
                rc = lib.strata_py_create_int(h, v, out, err)
            else:
                arena = V.Arena()
                V.to_value(v, txn._val, arena)
                rc = lib.strata_obj_create_pk(h, txn._val, out, err)
            if rc:
                check(rc, err)
        else:
            check(lib.strata_obj_create(h, out, err), err)
        key = out[0]
        obj = self._object(key)
        try:
            obj._update(values, skip=pk, fresh=True)
        except BaseException:
            lib.strata_obj_delete(h, key, ffi.NULL)
            raise
        return obj

    def upsert(self, **values):
        """Update the object with this primary key (only the values given), or add it."""
        pk = self.primary_key
        if pk is None or pk not in values:
            raise InvalidArgumentError(f"{self.name}.upsert needs the primary key '{pk}'")
        existing = self.get(values[pk])
        if existing is None:
            return self.add(**values)
        self.txn._require_write(f"{self.name}.upsert")
        existing._update({k: v for k, v in values.items() if k != pk})
        return existing

    def delete(self, obj):
        """Delete an object (links to it become None; it leaves every list)."""
        obj.delete()

    def clear(self):
        """Delete every object of the table."""
        self.txn._require_write(f"{self.name}.clear")
        err = new_error()
        check(lib.strata_table_clear(self._h, err), err)

    def where(self, predicate, *args):
        """The objects matching `predicate` (Realm's query language: `age > $0 AND name
        BEGINSWITH[c] $1`, `ANY dogs.name == 'Rex'`, `@links.Person.dogs.@count > 0`, ...)
        with `args`; lazy: run when first read."""
        from .results import Results
        return Results(self, predicate, args)

    def all(self):
        from .results import Results
        return Results(self, "TRUEPREDICATE", ())
