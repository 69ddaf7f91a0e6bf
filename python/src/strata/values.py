"""Python values as the core stores them (strata_value) and back.

Types: None, bool, int (int64), float, str, bytes, datetime.datetime (timezone-aware; read back in
UTC), uuid.UUID, decimal.Decimal (IEEE 754-2008 decimal128, BID encoding, 34 digits), ObjectId,
and objects (a link, or in a mixed property a typed link). The bytes a value points to are kept
alive by the `Arena` it was made in.
"""

import datetime as _dt
import decimal as _decimal
import os
import struct
import threading
import time
import uuid as _uuid

from ._native import ffi, lib
from .errors import WrongTypeError, TooLargeError

UTC = _dt.timezone.utc
_EPOCH = _dt.datetime(1970, 1, 1, tzinfo=UTC)


class ObjectId:
    """A 12-byte MongoDB-style ObjectId: 4 bytes of seconds, 5 random, a 3-byte counter."""

    __slots__ = ("_bytes",)
    _lock = threading.Lock()
    _counter = int.from_bytes(os.urandom(3), "big")
    _random = os.urandom(5)

    def __init__(self, value=None):
        if value is None:
            self._bytes = ObjectId._next()
        elif isinstance(value, ObjectId):
            self._bytes = value._bytes
        elif isinstance(value, (bytes, bytearray)) and len(value) == 12:
            self._bytes = bytes(value)
        elif isinstance(value, str) and len(value) == 24:
            try:
                self._bytes = bytes.fromhex(value)
            except ValueError:
                raise ValueError(f"ObjectId: {value!r} is not 24 hexadecimal digits") from None
        else:
            raise ValueError(f"ObjectId: {value!r} is neither 12 bytes nor 24 hexadecimal digits")

    @classmethod
    def _next(cls):
        with cls._lock:
            cls._counter = (cls._counter + 1) & 0xFFFFFF
            n = cls._counter
        return struct.pack(">I", int(time.time()) & 0xFFFFFFFF) + cls._random + n.to_bytes(3, "big")

    @property
    def binary(self):
        return self._bytes

    @property
    def generation_time(self):
        return _dt.datetime.fromtimestamp(struct.unpack(">I", self._bytes[:4])[0], UTC)

    def __str__(self):
        return self._bytes.hex()

    def __repr__(self):
        return f"ObjectId('{self._bytes.hex()}')"

    def __eq__(self, other):
        return isinstance(other, ObjectId) and other._bytes == self._bytes

    def __lt__(self, other):
        return self._bytes < other._bytes

    def __hash__(self):
        return hash(self._bytes)


# decimal128, BID encoding: sign, a 14-bit exponent biased by 6176, a coefficient below 10**34
_BIAS = 6176
_MAX_COEF = 10 ** 34 - 1
_LOW = (1 << 64) - 1


def decimal_to_bits(d):
    """(low, high) of decimal128 `d`; a value that needs more than 34 digits or an exponent
    outside -6176..6111 is rounded to fit (as decimal128 arithmetic would), else refused."""
    if not isinstance(d, _decimal.Decimal):
        d = _decimal.Decimal(d)
    sign = 1 if d.is_signed() else 0
    if d.is_nan():
        return 0, (sign << 63) | (0x1F << 58)
    if d.is_infinite():
        return 0, (sign << 63) | (0x1E << 58)
    t = d.as_tuple()
    coef = int("".join(map(str, t.digits)) or "0")
    exp = t.exponent
    if coef > _MAX_COEF:
        ctx = _decimal.Context(prec=34, Emax=6144, Emin=-6143)
        return decimal_to_bits(ctx.plus(d))
    while exp > 6111 and coef * 10 <= _MAX_COEF:  # clamp by padding the coefficient
        coef *= 10
        exp -= 1
    if exp > 6111 or exp < -_BIAS:
        raise TooLargeError(f"decimal {d} is outside decimal128's range")
    high = (sign << 63) | ((exp + _BIAS) << 49) | (coef >> 64)
    return coef & _LOW, high


def bits_to_decimal(low, high):
    sign = high >> 63
    combo = (high >> 58) & 0x1F
    if combo == 0x1F:
        return _decimal.Decimal("NaN")
    if combo == 0x1E:
        return _decimal.Decimal("-Infinity" if sign else "Infinity")
    if (high >> 61) & 3 == 3:  # the other form: never canonical for 34 digits, reads as zero
        exp = ((high >> 47) & 0x3FFF) - _BIAS
        coef = 0
    else:
        exp = ((high >> 49) & 0x3FFF) - _BIAS
        coef = ((high & ((1 << 49) - 1)) << 64) | low
        if coef > _MAX_COEF:
            coef = 0
    return _decimal.Decimal((sign, tuple(int(c) for c in str(coef)), exp))


class Arena:
    """Keeps the bytes of the values made for one call alive until the call returns."""

    __slots__ = ("keep",)

    def __init__(self):
        self.keep = []


def to_value(v, out, arena, link=None):
    """Fill strata_value `out` with Python value `v`. `link(obj)` turns an object into a
    (type, payload) pair for the property at hand (LINK or TYPED_LINK)."""
    if v is None:
        out.type = lib.STRATA_TYPE_NULL
    elif v is True or v is False:
        out.type = lib.STRATA_TYPE_BOOL
        out.u.b = v
    elif isinstance(v, int):
        if not -(1 << 63) <= v < (1 << 63):
            raise TooLargeError(f"integer {v} does not fit in 64 bits")
        out.type = lib.STRATA_TYPE_INT
        out.u.i = v
    elif isinstance(v, float):
        out.type = lib.STRATA_TYPE_DOUBLE
        out.u.d = v
    elif isinstance(v, str):
        b = v.encode("utf-8")
        buf = ffi.from_buffer(b)
        arena.keep.append((b, buf))
        out.type = lib.STRATA_TYPE_STRING
        out.u.bytes.data = buf
        out.u.bytes.len = len(b)
    elif isinstance(v, (bytes, bytearray, memoryview)):
        b = bytes(v)
        buf = ffi.from_buffer(b)
        arena.keep.append((b, buf))
        out.type = lib.STRATA_TYPE_BINARY
        out.u.bytes.data = buf
        out.u.bytes.len = len(b)
    elif isinstance(v, _dt.datetime):
        if v.tzinfo is None:
            raise WrongTypeError(f"datetime {v} has no time zone: give an aware datetime "
                                 "(datetime.timezone.utc for UTC)")
        delta = v - _EPOCH
        seconds = delta.days * 86400 + delta.seconds
        out.type = lib.STRATA_TYPE_TIMESTAMP
        out.u.timestamp.seconds = seconds
        out.u.timestamp.nanoseconds = delta.microseconds * 1000
    elif isinstance(v, _uuid.UUID):
        out.type = lib.STRATA_TYPE_UUID
        ffi.memmove(out.u.uuid, v.bytes, 16)
    elif isinstance(v, ObjectId):
        out.type = lib.STRATA_TYPE_OBJECT_ID
        ffi.memmove(out.u.object_id, v.binary, 12)
    elif isinstance(v, _decimal.Decimal):
        low, high = decimal_to_bits(v)
        out.type = lib.STRATA_TYPE_DECIMAL128
        out.u.decimal.low = low
        out.u.decimal.high = high
    elif link is not None and hasattr(v, "_strata_key"):
        link(v, out)
    else:
        raise WrongTypeError(f"a {type(v).__name__} ({v!r:.60}) cannot be stored")


_STRING, _INT = lib.STRATA_TYPE_STRING, lib.STRATA_TYPE_INT


def from_value(val, resolve=None):
    """The Python value of strata_value `val` (bytes copied out of the map). `resolve(kind,
    val)` turns LINK and TYPED_LINK values into objects."""
    t = val.type
    if t == _STRING:
        n = val.u.bytes.len
        return ffi.unpack(ffi.cast("char *", val.u.bytes.data), n).decode("utf-8") if n else ""
    if t == _INT:
        return val.u.i
    if t == lib.STRATA_TYPE_NULL:
        return None
    if t == lib.STRATA_TYPE_BOOL:
        return bool(val.u.b)
    if t == lib.STRATA_TYPE_INT:
        return int(val.u.i)
    if t == lib.STRATA_TYPE_DOUBLE:
        return float(val.u.d)
    if t == lib.STRATA_TYPE_FLOAT:
        return float(val.u.f)
    if t == lib.STRATA_TYPE_STRING:
        n = val.u.bytes.len
        return ffi.unpack(ffi.cast("char *", val.u.bytes.data), n).decode("utf-8") if n else ""
    if t == lib.STRATA_TYPE_BINARY:
        n = val.u.bytes.len
        return ffi.unpack(ffi.cast("char *", val.u.bytes.data), n) if n else b""
    if t == lib.STRATA_TYPE_TIMESTAMP:
        ts = val.u.timestamp
        return _EPOCH + _dt.timedelta(seconds=ts.seconds, microseconds=ts.nanoseconds // 1000)
    if t == lib.STRATA_TYPE_UUID:
        return _uuid.UUID(bytes=bytes(ffi.buffer(val.u.uuid, 16)))
    if t == lib.STRATA_TYPE_OBJECT_ID:
        return ObjectId(bytes(ffi.buffer(val.u.object_id, 12)))
    if t == lib.STRATA_TYPE_DECIMAL128:
        return bits_to_decimal(val.u.decimal.low, val.u.decimal.high)
    if t in (lib.STRATA_TYPE_LINK, lib.STRATA_TYPE_TYPED_LINK):
        return resolve(t, val) if resolve else None
    raise WrongTypeError(f"a value of core type {t} cannot be read")
