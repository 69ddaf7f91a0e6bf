"""A database handle: `strata.open(path)`, its transactions, and the file-level calls
(compaction, copies, verification, space, readers, waiting for commits)."""

import os
import threading
from collections import namedtuple

from ._native import ffi, lib
from .errors import check, new_error, TransactionError, InvalidArgumentError
from .transaction import Transaction

_DURABILITY = {"full": lib.STRATA_DURABILITY_FULL, "no_sync": lib.STRATA_DURABILITY_NO_SYNC,
               "memory": lib.STRATA_DURABILITY_MEMORY}

Space = namedtuple("Space", "file_bytes used_bytes free_bytes packed_bytes packed_pages")
Info = namedtuple("Info", "version page_size page_count free_pages file_size live_readers oldest_version")
Recovery = namedtuple("Recovery", "recovered newest_version durable_version replayed opened_version dropped why")


def library_version():
    """The C library's version, "major.minor.patch"."""
    return ffi.string(lib.strata_version()).decode()


def open(path, durability="full", read_only=False, create=True, map_size=None, max_readers=None,
         open_timeout=None, accept_rollback=False, encryption_key=None):
    """Open (or create) the database at `path`; use it in a `with` block or `close()` it.

    durability: "full" (a commit is on disk when it returns), "no_sync" (survives a crash of the
    process, a power loss may drop the last commits, never half of one) or "memory" (no file;
    `path` names it within the process). map_size: bytes of address space reserved (the file
    cannot outgrow it). open_timeout: seconds to wait while another process recovers the file.
    encryption_key: 64 bytes: a new file is encrypted with it, an existing one must have been
    (EncryptionError when it was not, or with another key, or when a key is missing).
    """
    return Database(path, durability, read_only, create, map_size, max_readers, open_timeout,
                    accept_rollback, encryption_key)


class _SameKey:
    def __repr__(self):
        return "strata.SAME_KEY"


SAME_KEY = _SameKey()
"""write_copy/compact: the copy is encrypted as the file is (the default)."""


def _key_buffer(key, what):
    """The key as a buffer the C call may read (kept alive by the caller), or NULL for None."""
    if key is None:
        return ffi.NULL
    if not isinstance(key, (bytes, bytearray, memoryview)):
        raise InvalidArgumentError(f"{what}: an encryption key is 64 bytes, not {type(key).__name__}")
    return ffi.from_buffer(key)


class Database:
    """An open database. Shared by threads; each transaction belongs to the thread that began it."""

    def __init__(self, path, durability="full", read_only=False, create=True, map_size=None,
                 max_readers=None, open_timeout=None, accept_rollback=False, encryption_key=None):
        if durability not in _DURABILITY:
            raise InvalidArgumentError(f"durability {durability!r}: give 'full', 'no_sync' or 'memory'")
        self.path = os.fspath(path)
        opts = ffi.new("strata_options *")
        lib.strata_options_init_sized(opts, ffi.sizeof("strata_options"))
        opts.durability = _DURABILITY[durability]
        opts.read_only = read_only
        opts.create = create
        if map_size is not None:
            opts.map_size = map_size
        if max_readers is not None:
            opts.max_readers = max_readers
        if open_timeout is not None:
            opts.open_timeout_ms = int(open_timeout * 1000)
        opts.accept_rollback = accept_rollback
        key = _key_buffer(encryption_key, "open")
        opts.encryption_key = key
        opts.encryption_key_len = len(key) if key != ffi.NULL else 0
        out = ffi.new("strata_db_t **")
        err = new_error()
        check(lib.strata_db_open(self.path.encode(), opts, out, err), err)
        self._db = out[0]
        self._lock = threading.Lock()
        self._txns = set()  # open transactions (closed before the handle)

    # -------------------------------------------------------------- lifetime

    def _handle(self):
        if self._db is None:
            raise TransactionError(f"the database '{self.path}' is closed")
        return self._db

    @property
    def closed(self):
        return self._db is None

    def close(self):
        """Close the handle (its open transactions are rolled back first). Closing twice does nothing."""
        if self._db is None:
            return
        with self._lock:
            txns = list(self._txns)
        for t in txns:
            t._end(abort=True, from_close=True)
        db, self._db = self._db, None
        err = new_error()
        check(lib.strata_db_close(db, err), err)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            if getattr(self, "_db", None) is not None:
                self.close()
        except Exception:
            pass

    def __repr__(self):
        return f"<strata.Database {self.path!r}{' closed' if self._db is None else ''}>"

    # -------------------------------------------------------------- transactions

    def write(self, try_only=False, sync=True):
        """A write transaction (one writer at a time across threads and processes: this waits
        for the lock, or with `try_only` raises BusyError). In a `with` block it commits when the
        block ends and rolls back when it raises. `sync=False`: commit without syncing (durable
        at the next `sync()` or synced commit)."""
        flags = lib.STRATA_TXN_WRITE | (lib.STRATA_TXN_TRY if try_only else 0)
        return self._begin(flags, sync)

    def read(self):
        """A snapshot of the latest commit: never blocks, never changes (`refresh()` moves it on)."""
        return self._begin(lib.STRATA_TXN_READ, True)

    def _begin(self, flags, sync):
        out = ffi.new("strata_txn_t **")
        err = new_error()
        check(lib.strata_txn_begin(self._handle(), flags, out, err), err)
        t = Transaction(self, out[0], write=bool(flags & lib.STRATA_TXN_WRITE), sync=sync)
        with self._lock:
            self._txns.add(t)
        return t

    def _forget(self, txn):
        with self._lock:
            self._txns.discard(txn)

    # -------------------------------------------------------------- the file

    def sync(self):
        """Make every commit so far durable (after NO_SYNC or unsynced commits)."""
        err = new_error()
        check(lib.strata_db_sync(self._handle(), err), err)

    def wait_for_commit(self, after, timeout=None):
        """Wait until a commit (by any process) makes the latest version newer than `after`:
        the new version, or None after `timeout` seconds without one."""
        out = ffi.new("uint64_t *")
        err = new_error()
        ms = 0xFFFFFFFF if timeout is None else max(0, int(timeout * 1000))
        rc = lib.strata_db_wait_commit(self._handle(), after, ms, out, err)
        if rc == lib.STRATA_ERR_TIMEOUT:
            return None
        check(rc, err)
        return int(out[0])

    @property
    def version(self):
        """The latest committed version."""
        return self.info().version

    def info(self):
        i = ffi.new("strata_db_info *")
        err = new_error()
        check(lib.strata_db_info_get(self._handle(), i, err), err)
        return Info(i.version, i.page_size, i.page_count, i.free_pages, i.file_size, i.live_readers,
                    i.oldest_version)

    def space(self):
        """Where the file's bytes go: file, used, free and packed (compressed) bytes."""
        s = ffi.new("strata_space *")
        s.size = ffi.sizeof("strata_space")
        err = new_error()
        check(lib.strata_db_space_get(self._handle(), s, err), err)
        return Space(s.file_bytes, s.used_bytes, s.free_bytes, s.packed_bytes, s.packed_pages)

    def recovery(self):
        """What opening this handle recovered after a crash (versions replayed or dropped)."""
        r = ffi.new("strata_recovery *")
        err = new_error()
        check(lib.strata_db_recovery(self._handle(), r, err), err)
        return Recovery(bool(r.recovered), r.newest_version, r.durable_version, r.replayed,
                        r.opened_version, r.dropped, ffi.string(r.why).decode())

    def readers(self):
        """The versions live readers (of every process) hold, ascending."""
        count = ffi.new("size_t *")
        err = new_error()
        check(lib.strata_db_live_versions(self._handle(), ffi.NULL, 0, count, err), err)
        n = count[0] + 8
        buf = ffi.new("uint64_t[]", n)
        check(lib.strata_db_live_versions(self._handle(), buf, n, count, err), err)
        return [int(buf[i]) for i in range(min(count[0], n))]

    def verify(self):
        """Check the whole latest version (every page, checksum, tree and count); raises
        CorruptError naming the first fault."""
        err = new_error()
        check(lib.strata_db_verify(self._handle(), err), err)

    def _copy_options(self, pack, pack_level, encryption_key, what):
        """The options and the key's buffer (to keep alive through the call)."""
        o = ffi.new("strata_copy_options *")
        lib.strata_copy_options_init_sized(o, ffi.sizeof("strata_copy_options"))
        o.pack = pack
        o.pack_level = pack_level
        key = ffi.NULL
        if encryption_key is not SAME_KEY:
            key = _key_buffer(encryption_key, what)
            o.set_encryption = True
            o.encryption_key = key
            o.encryption_key_len = len(key) if key != ffi.NULL else 0
        return o, key

    def write_copy(self, path, pack=True, pack_level=1, encryption_key=SAME_KEY):
        """Write a compact copy of the latest version to a new file at `path` (ExistsError if
        there is one); the copy appears whole or not at all. encryption_key: SAME_KEY (the
        file's, if it is encrypted), None (a plain copy) or 64 bytes (encrypted with them); an
        encrypted copy's packed pages are compressed, then sealed."""
        err = new_error()
        o, key = self._copy_options(pack, pack_level, encryption_key, "write_copy")
        check(lib.strata_db_write_copy(self._handle(), os.fspath(path).encode(), o, err), err)
        del key

    def compact(self, pack=True, pack_level=1, encryption_key=SAME_KEY):
        """Rewrite the file without free space (cold pages LZ4-packed); BusyError while another
        handle has it open or a transaction of this one is open. encryption_key as for
        write_copy: compaction encrypts, decrypts or re-keys the file in place."""
        err = new_error()
        o, key = self._copy_options(pack, pack_level, encryption_key, "compact")
        check(lib.strata_db_compact(self._handle(), o, err), err)
        del key
