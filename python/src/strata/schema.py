"""Property types for `create_table` and what a table's properties are.

    txn.create_table("Dog", {"name": strata.String(indexed=True), "age": strata.Int(),
                             "owner": strata.Link("Person"), "tags": strata.List(strata.String())})
"""

from ._native import lib


class Property:
    """A property's type: the core type, whether it may be null, indexed or the primary key."""

    core_type = None

    def __init__(self, optional=False, indexed=False, primary_key=False):
        self.optional = optional
        self.indexed = indexed
        self.primary_key = primary_key

    def flags(self):
        f = 0
        if self.optional:
            f |= lib.STRATA_PROP_NULLABLE
        if self.indexed:
            f |= lib.STRATA_PROP_INDEXED
        if self.primary_key:
            f |= lib.STRATA_PROP_PRIMARY_KEY
        return f

    target = None

    def __repr__(self):
        opts = [k for k in ("optional", "indexed", "primary_key", "full_text") if getattr(self, k, False)]
        return f"strata.{type(self).__name__}({', '.join(o + '=True' for o in opts)})"


class Int(Property):
    core_type = lib.STRATA_TYPE_INT


class Bool(Property):
    core_type = lib.STRATA_TYPE_BOOL


class Float(Property):
    """A 32-bit float (values read back as Python floats of that precision)."""
    core_type = lib.STRATA_TYPE_FLOAT


class Double(Property):
    core_type = lib.STRATA_TYPE_DOUBLE


class String(Property):
    """A string; `full_text=True` keeps a full-text index of its words for `TEXT` queries
    (`"body TEXT 'swift -objc data*'"`)."""
    core_type = lib.STRATA_TYPE_STRING

    def __init__(self, optional=False, indexed=False, primary_key=False, full_text=False):
        super().__init__(optional=optional, indexed=indexed, primary_key=primary_key)
        self.full_text = full_text

    def flags(self):
        return super().flags() | (lib.STRATA_PROP_FULLTEXT if self.full_text else 0)


class Bytes(Property):
    core_type = lib.STRATA_TYPE_BINARY


class Date(Property):
    """A timestamp: timezone-aware `datetime`s, read back in UTC (nanoseconds kept to the
    microsecond Python has)."""
    core_type = lib.STRATA_TYPE_TIMESTAMP


class Decimal(Property):
    """decimal128: `decimal.Decimal` values of up to 34 digits."""
    core_type = lib.STRATA_TYPE_DECIMAL128


class UUID(Property):
    core_type = lib.STRATA_TYPE_UUID


class Oid(Property):
    """An ObjectId property (values are `strata.ObjectId`)."""
    core_type = lib.STRATA_TYPE_OBJECT_ID


class Mixed(Property):
    """Any value, an object of any table included; always optional."""
    core_type = lib.STRATA_TYPE_MIXED

    def __init__(self, indexed=False):
        super().__init__(optional=True, indexed=indexed)


class Link(Property):
    """A to-one link to an object of table `target` (None when there is none)."""
    core_type = lib.STRATA_TYPE_LINK

    def __init__(self, target):
        super().__init__(optional=True)
        self.target = target

    def __repr__(self):
        return f"strata.Link({self.target!r})"


class _Collection(Property):
    kind_flag = 0

    def __init__(self, element):
        super().__init__()
        if isinstance(element, str):
            element = Link(element)
        if isinstance(element, type) and issubclass(element, Property):
            element = element()
        if not isinstance(element, Property) or isinstance(element, _Collection):
            raise TypeError(f"{type(self).__name__}: the element type must be a property type or a table name, "
                            f"not {element!r}")
        self.element = element
        self.core_type = element.core_type
        self.target = element.target
        self.optional = element.optional and not isinstance(element, Link)

    def flags(self):
        f = self.kind_flag
        if self.optional:
            f |= lib.STRATA_PROP_NULLABLE
        return f

    def __repr__(self):
        return f"strata.{type(self).__name__}({self.element!r})"


class List(_Collection):
    """An ordered list of values, or of objects of a table (`strata.List("Dog")`)."""
    kind_flag = lib.STRATA_PROP_LIST


class Set(_Collection):
    """A set: each value (or object) at most once."""
    kind_flag = lib.STRATA_PROP_SET


class Map(_Collection):
    """String keys to values (or objects, or None)."""
    kind_flag = lib.STRATA_PROP_MAP


class PropertyInfo:
    """What a table's property is, read from the file: its name, core type, flags and link target."""

    __slots__ = ("name", "col", "type", "flags", "target", "is_list", "is_set", "is_map", "is_collection",
                 "optional", "indexed", "primary_key", "full_text")

    def __init__(self, name, col, type_, flags, target):
        self.name, self.col, self.type, self.flags, self.target = name, col, type_, flags, target
        self.is_set = bool(flags & lib.STRATA_PROP_SET)
        self.is_map = bool(flags & lib.STRATA_PROP_MAP)
        self.is_list = bool(flags & lib.STRATA_PROP_LIST) and not self.is_set and not self.is_map
        self.is_collection = bool(flags & (lib.STRATA_PROP_LIST | lib.STRATA_PROP_SET | lib.STRATA_PROP_MAP))
        self.optional = bool(flags & lib.STRATA_PROP_NULLABLE)
        self.indexed = bool(flags & lib.STRATA_PROP_INDEXED)
        self.primary_key = bool(flags & lib.STRATA_PROP_PRIMARY_KEY)
        self.full_text = bool(flags & lib.STRATA_PROP_FULLTEXT)

    def __repr__(self):
        return f"<property {self.name}: {TYPE_NAMES.get(self.type, self.type)}{'?' if self.optional else ''}>"


TYPE_NAMES = {lib.STRATA_TYPE_BOOL: "bool", lib.STRATA_TYPE_INT: "int", lib.STRATA_TYPE_FLOAT: "float",
              lib.STRATA_TYPE_DOUBLE: "double", lib.STRATA_TYPE_STRING: "string",
              lib.STRATA_TYPE_BINARY: "bytes", lib.STRATA_TYPE_TIMESTAMP: "date",
              lib.STRATA_TYPE_OBJECT_ID: "objectId", lib.STRATA_TYPE_UUID: "uuid",
              lib.STRATA_TYPE_DECIMAL128: "decimal", lib.STRATA_TYPE_LINK: "link",
              lib.STRATA_TYPE_MIXED: "mixed"}
