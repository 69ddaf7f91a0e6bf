"""Transactions: a write (commits when its `with` block ends, rolls back when it raises) or a
read snapshot (never blocks, never changes until `refresh()`). A transaction belongs to the
thread that began it; tables and objects read through it live as long as it does."""

import threading

from ._native import ffi, lib
from .errors import check, new_error, TransactionError, ThreadError, ReadOnlyError, NotFoundError
from .table import Table


class Transaction:
    def __init__(self, db, handle, write, sync=True):
        self._db = db
        self._txn = handle
        self.is_write = write
        self._sync = sync
        self._thread = threading.get_ident()
        self._tables = {}
        self._props = {}  # table name -> {property name: PropertyInfo}
        self._pks = {}  # table name -> its primary key property's name (or None)
        # scratch space for single calls (a transaction is used by one thread at a time)
        self._val = ffi.new("strata_value *")
        self._flat = ffi.new("strata_py_value *")
        self._classes = {}  # table name -> the Object subclass with a descriptor per property
        self._key = ffi.new("strata_key_t *")
        self._err = ffi.new("strata_error *")
        self._ended = None  # why it ended: "committed", "rolled back", "closed"

    # -------------------------------------------------------------- state

    def _handle(self):
        """The core's handle; raises for an ended transaction or another thread."""
        if self._ended:
            raise TransactionError(f"the {'write' if self.is_write else 'snapshot'} has ended ({self._ended})")
        if threading.get_ident() != self._thread:
            raise ThreadError(f"a {'write' if self.is_write else 'snapshot'} belongs to the thread that began it "
                              f"(thread {self._thread}); begin one in this thread")
        return self._txn

    def _usable(self):
        """True when the transaction may be used here and now (else _handle() says why)."""
        return not self._ended and threading.get_ident() == self._thread

    def _require_write(self, what):
        self._handle()
        if not self.is_write:
            raise ReadOnlyError(f"{what}: a read snapshot cannot change the database; use db.write()")

    @property
    def active(self):
        return not self._ended

    @property
    def version(self):
        """The version this transaction reads (a write: the one it will commit)."""
        return int(lib.strata_txn_version(self._handle()))

    def _end(self, abort, from_close=False):
        if self._ended:
            return
        if not from_close and threading.get_ident() != self._thread:
            raise ThreadError("a transaction is ended by the thread that began it")
        txn, self._txn = self._txn, None
        self._tables.clear()
        self._props.clear()
        self._pks.clear()
        self._classes.clear()
        self._ended = "closed" if from_close else "rolled back" if abort else "committed"
        lib.strata_txn_free(txn)
        self._db._forget(self)

    def commit(self):
        """Commit a write (a snapshot: end it). On failure nothing of the write is visible and the
        error is raised."""
        h = self._handle()
        err = new_error()
        if self.is_write:
            rc = lib.strata_txn_commit(h, err) if self._sync else lib.strata_txn_commit_unsynced(h, err)
        else:
            rc = 0
        self._end(abort=False)
        check(rc, err)

    def rollback(self):
        """Discard the write's changes (a snapshot: end it)."""
        self._handle()
        self._end(abort=True)

    close = rollback

    def refresh(self):
        """Move a snapshot to the latest commit (tables and objects read before must be read again)."""
        if self.is_write:
            raise TransactionError("a write always reads the latest version: refresh() is for snapshots")
        err = new_error()
        check(lib.strata_txn_refresh(self._handle(), err), err)
        self._tables.clear()
        self._props.clear()
        self._pks.clear()
        self._classes.clear()

    def __enter__(self):
        return self

    def __exit__(self, exc_type, exc, tb):
        if self._ended:
            return False
        if exc_type is None and self.is_write:
            self.commit()
        else:
            self._end(abort=True)
        return False

    def __del__(self):
        try:
            if self._txn is not None and threading.get_ident() == self._thread:
                self._end(abort=True)
        except Exception:
            pass

    def __repr__(self):
        state = self._ended or f"version {lib.strata_txn_version(self._txn)}"
        return f"<strata {'write' if self.is_write else 'snapshot'} {state}>"

    # -------------------------------------------------------------- schema

    @property
    def schema_version(self):
        v = ffi.new("uint64_t *")
        err = new_error()
        check(lib.strata_schema_version(self._handle(), v, err), err)
        return int(v[0])

    @schema_version.setter
    def schema_version(self, version):
        self._require_write("schema_version")
        err = new_error()
        check(lib.strata_schema_set_version(self._txn, version, err), err)

    def table_names(self):
        """The tables, sorted by name."""
        h = self._handle()
        n = ffi.new("size_t *")
        err = new_error()
        check(lib.strata_table_count_all(h, n, err), err)
        name = ffi.new("const char **")
        out = []
        for i in range(n[0]):
            check(lib.strata_table_name_at(h, i, name, err), err)
            out.append(ffi.string(name[0]).decode())
        return out

    def __contains__(self, name):
        try:
            self._table_handle(name)
            return True
        except NotFoundError:
            return False

    def __getitem__(self, name):
        """The table named `name` (NotFoundError naming it when there is none)."""
        return Table(self, name, self._table_handle(name))

    def _table_handle(self, name):
        h = self._tables.get(name)
        if h is None:
            out = ffi.new("strata_table_t **")
            err = new_error()
            check(lib.strata_table_open(self._handle(), name.encode(), out, err), err)
            h = self._tables[name] = out[0]
        else:
            self._handle()
        return h

    def _table_by_id(self, table_id):
        out = ffi.new("strata_table_t **")
        err = new_error()
        check(lib.strata_table_open_id(self._handle(), table_id, out, err), err)
        name = ffi.string(lib.strata_table_name(out[0])).decode()
        self._tables.setdefault(name, out[0])
        return Table(self, name, out[0])

    def create_table(self, name, properties, embedded=False):
        """Create table `name` with `properties` ({name: strata.Int(), ...}); one may be the
        primary key (`primary_key=True`). Link targets must exist or be created in this write
        (create them first, or in one call each and add links after with `add_property`)."""
        self._require_write(f"create_table({name!r})")
        out = ffi.new("strata_table_t **")
        err = new_error()
        check(lib.strata_table_create(self._txn, name.encode(), out, err), err)
        self._tables[name] = out[0]
        table = Table(self, name, out[0])
        for prop_name, prop in properties.items():
            table.add_property(prop_name, prop)
        if embedded:
            check(lib.strata_table_set_embedded(out[0], True, 0, err), err)
        return table

    def drop_table(self, name):
        """Delete a table and its objects (refused while another table links to it)."""
        self._require_write(f"drop_table({name!r})")
        err = new_error()
        check(lib.strata_table_drop(self._txn, name.encode(), err), err)
        self._tables.pop(name, None)
