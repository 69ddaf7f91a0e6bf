"""The exceptions: one class per STRATA_ERR_* status under `strata.Error`, each carrying the
core's message (which names the file, table, property or value at fault), and the misuse errors
of the binding itself."""

from ._native import ffi, lib


class Error(Exception):
    """Every error the database reports. `code` is the core's status (0 for the binding's own)."""

    code = 0

    def __init__(self, message, code=None):
        super().__init__(message)
        if code is not None:
            self.code = code


class InvalidArgumentError(Error, ValueError):
    """A bad argument: an empty name, an unknown option, a malformed predicate."""
    code = lib.STRATA_ERR_INVALID_ARGUMENT


class NotFoundError(Error, LookupError):
    """No such file, table, property, object or index."""
    code = lib.STRATA_ERR_NOT_FOUND


class ExistsError(Error):
    """The thing to create exists already (a table, a file, a primary key value)."""
    code = lib.STRATA_ERR_EXISTS


class IOError_(Error, OSError):
    """A read, write, sync or lock failed."""
    code = lib.STRATA_ERR_IO


class NoSpaceError(Error, OSError):
    """The disk is full: the write failed and nothing of it is visible."""
    code = lib.STRATA_ERR_NO_SPACE


class CorruptError(Error):
    """The file contradicts itself; the message names where."""
    code = lib.STRATA_ERR_CORRUPT


class NotStrataError(Error):
    """The file is not a Strata database."""
    code = lib.STRATA_ERR_NOT_STRATA


class FormatVersionError(Error):
    """The file's format is newer or older than this library reads."""
    code = lib.STRATA_ERR_FORMAT_VERSION


class BusyError(Error):
    """Another writer holds the file (a try-write), or it was being opened for too long."""
    code = lib.STRATA_ERR_BUSY


class ReadOnlyError(Error):
    """A write on a read-only database or in a read snapshot."""
    code = lib.STRATA_ERR_READ_ONLY


class TransactionError(Error):
    """The transaction has ended (committed, rolled back or closed) or failed."""
    code = lib.STRATA_ERR_TXN_STATE


class TooManyVersionsError(Error):
    """A pinned reader keeps more versions alive than the database allows."""
    code = lib.STRATA_ERR_TOO_MANY_VERSIONS


class ReadersFullError(Error):
    """Every reader slot of the lock file is taken."""
    code = lib.STRATA_ERR_READERS_FULL


class MapFullError(Error):
    """The file would outgrow the address space reserved for it (map_size)."""
    code = lib.STRATA_ERR_MAP_FULL


class NoMemoryError(Error, MemoryError):
    code = lib.STRATA_ERR_NO_MEMORY


class TooLargeError(Error, ValueError):
    """A key or value over the core's limits."""
    code = lib.STRATA_ERR_TOO_LARGE


class WrongTypeError(Error, TypeError):
    """A value of the wrong type for a property."""
    code = lib.STRATA_ERR_WRONG_TYPE


class TimeoutError_(Error, TimeoutError):
    """No commit came in the time given."""
    code = lib.STRATA_ERR_TIMEOUT


class EncryptionError(Error):
    """The file is encrypted and no key was given, the key does not open it, or a key was given
    for a file that is not encrypted."""
    code = lib.STRATA_ERR_ENCRYPTION


class ThreadError(Error):
    """A transaction (or what it handed out) used from a thread other than the one that began it."""


class InvalidObjectError(Error):
    """An object used after its deletion, or after the transaction that read it ended."""


_BY_CODE = {c.code: c for c in (
    InvalidArgumentError, NotFoundError, ExistsError, IOError_, NoSpaceError, CorruptError,
    NotStrataError, FormatVersionError, BusyError, ReadOnlyError, TransactionError,
    TooManyVersionsError, ReadersFullError, MapFullError, NoMemoryError, TooLargeError,
    WrongTypeError, TimeoutError_, EncryptionError)}


def raise_for(code, err):
    """Raise the exception of status `code` with the message the core put in `err`."""
    message = ffi.string(err.message).decode("utf-8", "replace") if err is not None else ""
    cls = _BY_CODE.get(code, Error)
    raise cls(message or ffi.string(lib.strata_status_name(code)).decode(), code)


def new_error():
    return ffi.new("strata_error *")


def check(code, err):
    if code != 0:
        raise_for(code, err)
