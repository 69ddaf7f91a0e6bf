/*
 * column.c — column leaves: the values of one property for the objects of one cluster, and
 * their decoded (writable) form.
 *
 * A leaf is a segment of a column page (kind ST_PAGE_COLUMN): the leaves of a cluster that fit
 * share one page, packed after the 32-byte page header at 8-byte aligned offsets; a leaf that
 * does not fit beside the others gets a page of its own (cluster.c decides). Segment layout,
 * offsets relative to the segment's start:
 *    0  u8  encoding: 1 packed integers, 2 fixed-size slots, 3 variable-size elements,
 *           4 timestamps as two packed arrays (format 12)
 *    1  u8  packed: bits per value (0, 1, 2, 4, 8, 16, 32 or 64); fixed: bytes per slot;
 *           timestamps: bits per seconds value (as packed)
 *    2  u8  flags: 1 = null bitmap present, 2 = big bitmap present, 4 = packed values count
 *           from their row: value i = base + i + stored i (keys and ids that grow by one per
 *           object pack to 0 bits), 8 = var element offsets are u16 (format 12: a leaf's
 *           element data is under 64 KiB, as every leaf written since is)
 *    3  u8  timestamps: bits per nanoseconds value (0, 1, 2, 4, 8, 16 or 32); else 0
 *    4  u32 n, the number of values (the cluster's object count)
 *    8  i64 packed: base; value i = base + stored i (+ i with flag 4), stored as unsigned bits;
 *           timestamps: the seconds' base
 *   16  u32 var: bytes of element data; timestamps: the nanoseconds' base (an i32)
 *   20  u32 0
 *   24  null bitmap, (n + 7) / 8 bytes, bit i set = value i is null (if flag 1)
 *       big bitmap, same size, bit i set = element i is {u64 run page, u32 length} (if flag 2)
 *       then, at the next multiple of 8:
 *         packed: ceil(n * bits / 64) u64 words, value i at bit i * bits (little-endian)
 *         fixed:  n slots
 *         var:    n + 1 u32 (flag 8: u16) offsets into the element data that follows (offset 0
 *                 first)
 *         timestamps: the seconds packed as above (ceil(n * bits / 64) u64 words), then the
 *                 nanoseconds the same way with their own width and base
 *
 * Which encoding a property gets: packed for bool, int, link and list ids (a list column holds
 * the id of the list's storage, 0 for empty); fixed for float (4), double (8), timestamp (12:
 * i64 seconds, i32 nanoseconds; written as encoding 4 instead when that is smaller, as it is
 * for times a few years apart: 4 + 4 bytes, or 4 + 0 when whole seconds), ObjectId (12), UUID
 * (16), decimal128 (16: low, high); var for string, binary and mixed. A mixed element is a type
 * tag byte and the value's bytes (the fixed layout above, or the raw string/binary bytes).
 *
 * Elements over ST_INLINE_MAX bytes live in an overflow run (kind 3, as btree.c's) of their
 * own; the leaf keeps its page number and length.
 *
 * Invariants: a leaf lies inside its page and its recorded length; n equals the cluster's object
 * count; null values are stored as zero (packed: as base). Every offset read is checked
 * (ST_CORRUPT otherwise).
 */
#include "objects/private.h"

#include <stdlib.h>

#define CH_ENC 0
#define CH_WIDTH 1
#define CH_FLAGS 2
#define CH_WIDTH2 3
#define CH_N 4
#define CH_BASE 8
#define CH_VARBYTES 16
#define CH_BASE2 16
#define CH_BITMAPS 24

static size_t bitmap_bytes(uint32_t n) { return (n + 7) / 8; }
static size_t align8(size_t x) { return (x + 7) & ~(size_t)7; }

static uint8_t width_for(uint64_t range) {
    static const uint8_t widths[] = {0, 1, 2, 4, 8, 16, 32};
    for (unsigned i = 0; i < sizeof widths; i++)
        if (range < (1ull << widths[i])) return widths[i];
    return 64;
}

/* Bytes of n values of w bits, in whole u64 words. */
static size_t packed_words(uint32_t n, uint8_t w) { return ((size_t)n * w + 63) / 64 * 8; }

/* Whether w bits a value is a packed width (0, 1, 2, 4, ... up to max). */
static bool packed_width(uint8_t w, uint8_t max) { return !(w & (w - 1)) && w <= max; }

/* A var leaf's element offsets: u16 with flag 8 (format 12), else u32; the element data starts
 * at a multiple of 4 either way (an object appended then shifts it by 4 bytes or none, which the
 * commit log's diff finds as a copy: it looks for shifts in multiples of 4). */
#define VAR_U16 8
static size_t var_offsets_size(uint32_t n, bool u16) {
    return u16 ? (((size_t)n + 1) * 2 + 3) & ~(size_t)3 : ((size_t)n + 1) * 4;
}

bool st_col_u32_offsets;

static size_t var_offsets_bytes(const uint8_t *p, uint32_t n) {
    return var_offsets_size(n, p[CH_FLAGS] & VAR_U16);
}

/* Offset i of a var leaf whose offsets start at off. */
static uint32_t var_off(const uint8_t *p, size_t off, uint32_t i) {
    return p[CH_FLAGS] & VAR_U16 ? st_rd16(p + off + 2 * (size_t)i) : st_rd32(p + off + 4 * (size_t)i);
}

static uint64_t get_bits(const uint8_t *d, uint32_t i, uint8_t w) {
    switch (w) {
    case 0: return 0;
    case 8: return d[i];
    case 16: return st_rd16(d + 2 * (size_t)i);
    case 32: return st_rd32(d + 4 * (size_t)i);
    case 64: return st_rd64(d + 8 * (size_t)i);
    default: {
        size_t bit = (size_t)i * w;
        return (uint64_t)(d[bit >> 3] >> (bit & 7)) & ((1u << w) - 1);
    }
    }
}

static void put_bits(uint8_t *d, uint32_t i, uint8_t w, uint64_t v) {
    switch (w) {
    case 0: return;
    case 8: d[i] = (uint8_t)v; return;
    case 16: st_wr16(d + 2 * (size_t)i, (uint16_t)v); return;
    case 32: st_wr32(d + 4 * (size_t)i, (uint32_t)v); return;
    case 64: st_wr64(d + 8 * (size_t)i, v); return;
    default: {
        size_t bit = (size_t)i * w;
        d[bit >> 3] |= (uint8_t)(v << (bit & 7));
    }
    }
}

static bool bit_at(const uint8_t *bm, uint32_t i) { return (bm[i >> 3] >> (i & 7)) & 1; }

/* ------------------------------------------------------------------ types */

unsigned st_type_fixed_size(uint8_t type) {
    switch (type) {
    case STRATA_TYPE_FLOAT: return 4;
    case STRATA_TYPE_DOUBLE: return 8;
    case STRATA_TYPE_TIMESTAMP: return 12;
    case STRATA_TYPE_OBJECT_ID: return 12;
    case STRATA_TYPE_UUID: return 16;
    case STRATA_TYPE_DECIMAL128: return 16;
    case STRATA_TYPE_TYPED_LINK: return 12; /* u32 table id, u64 key (inside mixed values) */
    default: return 0;
    }
}

bool st_type_packed(uint8_t type, uint8_t flags) {
    return (flags & STRATA_PROP_LIST) || type == STRATA_TYPE_BOOL || type == STRATA_TYPE_INT ||
           type == STRATA_TYPE_LINK;
}

bool st_type_var(uint8_t type, uint8_t flags) {
    return !(flags & STRATA_PROP_LIST) &&
           (type == STRATA_TYPE_STRING || type == STRATA_TYPE_BINARY || type == STRATA_TYPE_MIXED);
}

/* The fixed-size bytes of a value of a fixed type. */
static void fixed_put(uint8_t type, const strata_value *v, uint8_t *out) {
    switch (type) {
    case STRATA_TYPE_FLOAT: memcpy(out, &v->u.f, 4); break;
    case STRATA_TYPE_DOUBLE: memcpy(out, &v->u.d, 8); break;
    case STRATA_TYPE_TIMESTAMP:
        st_wr64(out, (uint64_t)v->u.timestamp.seconds);
        st_wr32(out + 8, (uint32_t)v->u.timestamp.nanoseconds);
        break;
    case STRATA_TYPE_OBJECT_ID: memcpy(out, v->u.object_id, 12); break;
    case STRATA_TYPE_UUID: memcpy(out, v->u.uuid, 16); break;
    case STRATA_TYPE_DECIMAL128:
        st_wr64(out, v->u.decimal.low);
        st_wr64(out + 8, v->u.decimal.high);
        break;
    case STRATA_TYPE_TYPED_LINK:
        st_wr32(out, v->u.typed_link.table);
        st_wr64(out + 4, (uint64_t)v->u.typed_link.key);
        break;
    }
}

static void fixed_get(uint8_t type, const uint8_t *in, strata_value *v) {
    v->type = (strata_type)type;
    switch (type) {
    case STRATA_TYPE_FLOAT: memcpy(&v->u.f, in, 4); break;
    case STRATA_TYPE_DOUBLE: memcpy(&v->u.d, in, 8); break;
    case STRATA_TYPE_TIMESTAMP:
        v->u.timestamp.seconds = (int64_t)st_rd64(in);
        v->u.timestamp.nanoseconds = (int32_t)st_rd32(in + 8);
        break;
    case STRATA_TYPE_OBJECT_ID: memcpy(v->u.object_id, in, 12); break;
    case STRATA_TYPE_UUID: memcpy(v->u.uuid, in, 16); break;
    case STRATA_TYPE_DECIMAL128:
        v->u.decimal.low = st_rd64(in);
        v->u.decimal.high = st_rd64(in + 8);
        break;
    case STRATA_TYPE_TYPED_LINK:
        v->u.typed_link.table = st_rd32(in);
        v->u.typed_link.key = (strata_key_t)st_rd64(in + 4);
        break;
    }
}

/* A packed column's number for a (checked) value, and back. */
static int64_t packed_of(const strata_value *v) {
    return v->type == STRATA_TYPE_BOOL ? v->u.b : v->type == STRATA_TYPE_LINK ? v->u.link : v->u.i;
}

static void packed_value(const st_prop *p, int64_t x, strata_value *out) {
    if (p->flags & STRATA_PROP_LIST) { /* the list's id */
        out->type = STRATA_TYPE_INT;
        out->u.i = x;
    } else if (p->type == STRATA_TYPE_BOOL) {
        out->type = STRATA_TYPE_BOOL;
        out->u.b = x != 0;
    } else if (p->type == STRATA_TYPE_LINK) {
        out->type = STRATA_TYPE_LINK;
        out->u.link = x;
    } else {
        out->type = STRATA_TYPE_INT;
        out->u.i = x;
    }
}

/* Mixed element: tag + payload. Returns the element length; writes it when out is not NULL
 * (string/binary payloads are not copied: the caller appends v->u.bytes). */
static size_t mixed_head(const strata_value *v, uint8_t *out) {
    uint8_t tmp[17];
    uint8_t *o = out ? out : tmp;
    o[0] = (uint8_t)v->type;
    switch (v->type) {
    case STRATA_TYPE_BOOL: o[1] = v->u.b; return 2;
    case STRATA_TYPE_INT: st_wr64(o + 1, (uint64_t)v->u.i); return 9;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY: return 1;
    default: {
        unsigned fs = st_type_fixed_size((uint8_t)v->type);
        fixed_put((uint8_t)v->type, v, o + 1);
        return 1 + fs;
    }
    }
}

/* Decode a mixed element (bytes [p, p+len)). */
static int mixed_decode(const uint8_t *p, size_t len, strata_value *v, strata_error *err) {
    if (len < 1) return ST_CORRUPT(err, "mixed value of 0 bytes");
    uint8_t tag = p[0];
    size_t need;
    switch (tag) {
    case STRATA_TYPE_BOOL: need = 2; break;
    case STRATA_TYPE_INT: need = 9; break;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        v->type = (strata_type)tag;
        v->u.bytes.data = p + 1;
        v->u.bytes.len = len - 1;
        return STRATA_OK;
    default:
        need = 1 + st_type_fixed_size(tag);
        if (need == 1) return ST_CORRUPT(err, "mixed value with unknown type tag %u", tag);
    }
    if (len != need)
        return ST_CORRUPT(err, "mixed value of type %u has %zu bytes, expected %zu", tag, len, need);
    if (tag == STRATA_TYPE_BOOL) {
        v->type = STRATA_TYPE_BOOL;
        v->u.b = p[1] != 0;
    } else if (tag == STRATA_TYPE_INT) {
        v->type = STRATA_TYPE_INT;
        v->u.i = (int64_t)st_rd64(p + 1);
    } else {
        fixed_get(tag, p + 1, v);
    }
    return STRATA_OK;
}

/* ------------------------------------------------------------------ reading a leaf */

int st_leaf_header(strata_txn_t *txn, st_leafref ref, uint32_t n, const uint8_t **seg,
                   strata_error *err) {
    const uint8_t *pg;
    /* A leaf is read no further than its end (a packed page need not be unpacked whole). */
    size_t need = (size_t)ref.off + ref.len > ST_PAGE_SIZE ? ST_PAGE_SIZE : (size_t)ref.off + ref.len;
    int rc = st_page_get_part(txn, ref.pgno, need < PH_SIZE ? PH_SIZE : need, &pg, err);
    if (rc) return rc;
    unsigned long long pgno = (unsigned long long)ref.pgno;
    if (pg_kind(pg) != ST_PAGE_COLUMN)
        return ST_CORRUPT(err, "page %llu: expected a column page, found kind %u", pgno, pg_kind(pg));
    if (!pg_number_is(pg, ref.pgno))
        return ST_CORRUPT(err, "column page %llu: header says page %llu", pgno,
                          (unsigned long long)st_rd64(pg + PH_PGNO));
    if (ref.off < PH_SIZE || ref.off % 8 || (size_t)ref.off + ref.len > ST_PAGE_SIZE ||
        ref.len < CH_BITMAPS)
        return ST_CORRUPT(err, "column page %llu: a leaf at [%u, +%u) does not fit the page",
                          pgno, ref.off, ref.len);
    const uint8_t *p = pg + ref.off;
    if (st_rd32(p + CH_N) != n)
        return ST_CORRUPT(err, "column page %llu: leaf at %u holds %u values, its cluster %u",
                          pgno, ref.off, st_rd32(p + CH_N), n);
    uint8_t enc = p[CH_ENC], w = p[CH_WIDTH], flags = p[CH_FLAGS];
    size_t off = CH_BITMAPS + ((flags & 1) ? bitmap_bytes(n) : 0) + ((flags & 2) ? bitmap_bytes(n) : 0);
    off = align8(off);
    size_t end;
    if (enc == ST_ENC_PACKED) {
        if (!packed_width(w, 64)) return ST_CORRUPT(err, "column page %llu: bit width %u", pgno, w);
        end = off + packed_words(n, w);
    } else if (enc == ST_ENC_FIXED) {
        if (w == 0 || w > 16) return ST_CORRUPT(err, "column page %llu: slot of %u bytes", pgno, w);
        end = off + (size_t)n * w;
    } else if (enc == ST_ENC_VAR) {
        /* Element offsets are checked where they are used (var_bounds); verify checks all. */
        end = off + var_offsets_bytes(p, n) + st_rd32(p + CH_VARBYTES);
    } else if (enc == ST_ENC_TIMES) {
        uint8_t w2 = p[CH_WIDTH2];
        if (!packed_width(w, 64) || !packed_width(w2, 32))
            return ST_CORRUPT(err, "column page %llu: timestamps of %u and %u bits", pgno, w, w2);
        end = off + packed_words(n, w) + packed_words(n, w2);
    } else {
        return ST_CORRUPT(err, "column page %llu: unknown encoding %u", pgno, enc);
    }
    if (end > ref.len)
        return ST_CORRUPT(err, "column page %llu: a leaf of %zu bytes overruns its %u", pgno,
                          end, ref.len);
    *seg = p;
    return STRATA_OK;
}

static size_t data_off(const uint8_t *p, uint32_t n);

/* Element i's bounds [*a, *b) in the element data of a var leaf, checked. */
static int var_bounds(const uint8_t *p, uint32_t n, uint32_t i, uint32_t *a, uint32_t *b,
                      strata_error *err) {
    size_t off = data_off(p, n);
    *a = var_off(p, off, i);
    *b = var_off(p, off, i + 1);
    if ((i == 0 && *a != 0) || *a > *b || *b > st_rd32(p + CH_VARBYTES))
        return ST_CORRUPT(err, "column leaf: element %u of %u spans [%u, %u) of %u bytes", i, n,
                          *a, *b, st_rd32(p + CH_VARBYTES));
    return STRATA_OK;
}

int st_leaf_check_all(const uint8_t *p, uint32_t n, strata_error *err) {
    if (p[CH_ENC] != ST_ENC_VAR) return STRATA_OK;
    uint32_t a, b;
    for (uint32_t i = 0; i < n; i++) {
        int rc = var_bounds(p, n, i, &a, &b, err);
        if (rc) return rc;
    }
    size_t off = data_off(p, n);
    if (n && var_off(p, off, n) != st_rd32(p + CH_VARBYTES))
        return ST_CORRUPT(err, "column leaf: element data ends at %u, not %u", var_off(p, off, n),
                          st_rd32(p + CH_VARBYTES));
    return STRATA_OK;
}

static size_t data_off(const uint8_t *p, uint32_t n) {
    uint8_t flags = p[CH_FLAGS];
    return align8(CH_BITMAPS + ((flags & 1) ? bitmap_bytes(n) : 0) +
                  ((flags & 2) ? bitmap_bytes(n) : 0));
}

int64_t st_packed_at(const uint8_t *p, uint32_t n, uint32_t i) {
    uint64_t v = st_rd64(p + CH_BASE) + get_bits(p + data_off(p, n), i, p[CH_WIDTH]);
    return (int64_t)((p[CH_FLAGS] & 4) ? v + i : v);
}

/* Row i of a timestamps leaf (encoding 4). */
static void times_at(const uint8_t *p, uint32_t n, uint32_t i, int64_t *seconds, int32_t *nanos) {
    const uint8_t *d = p + data_off(p, n);
    *seconds = (int64_t)(st_rd64(p + CH_BASE) + get_bits(d, i, p[CH_WIDTH]));
    const uint8_t *d2 = d + packed_words(n, p[CH_WIDTH]);
    *nanos = (int32_t)(st_rd32(p + CH_BASE2) + (uint32_t)get_bits(d2, i, p[CH_WIDTH2]));
}

/* The first row whose value is >= key in a packed leaf of ascending values (object keys). */
uint32_t st_packed_lower_bound(const uint8_t *p, uint32_t n, int64_t key) {
    const uint8_t *d = p + data_off(p, n);
    uint64_t base = st_rd64(p + CH_BASE);
    uint8_t w = p[CH_WIDTH];
    bool by_row = p[CH_FLAGS] & 4;
    if (w == 0 && by_row) { /* dense keys: arithmetic */
        int64_t first = (int64_t)base;
        if (key <= first) return 0;
        uint64_t row = (uint64_t)key - base;
        return row >= n ? n : (uint32_t)row;
    }
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
        uint32_t mid = (lo + hi) / 2;
        int64_t v = (int64_t)(base + get_bits(d, mid, w) + (by_row ? mid : 0));
        if (v < key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* All n values of a packed leaf, in one pass per width (the query engine's scans). */
void st_leaf_unpack(const uint8_t *p, uint32_t n, int64_t *out) {
    const uint8_t *d = p + data_off(p, n);
    uint64_t base = st_rd64(p + CH_BASE);
    uint8_t w = p[CH_WIDTH];
    switch (w) {
    case 0: for (uint32_t i = 0; i < n; i++) out[i] = (int64_t)base; break;
    case 8: for (uint32_t i = 0; i < n; i++) out[i] = (int64_t)(base + d[i]); break;
    case 16: for (uint32_t i = 0; i < n; i++) out[i] = (int64_t)(base + st_rd16(d + 2 * i)); break;
    case 32: for (uint32_t i = 0; i < n; i++) out[i] = (int64_t)(base + st_rd32(d + 4 * i)); break;
    case 64: for (uint32_t i = 0; i < n; i++) out[i] = (int64_t)(base + st_rd64(d + 8 * (size_t)i)); break;
    default: {
        uint64_t mask = (1u << w) - 1;
        for (uint32_t i = 0; i < n; i++) {
            size_t bit = (size_t)i * w;
            out[i] = (int64_t)(base + ((uint64_t)(d[bit >> 3] >> (bit & 7)) & mask));
        }
    }
    }
    if (p[CH_FLAGS] & 4)
        for (uint32_t i = 0; i < n; i++) out[i] = (int64_t)((uint64_t)out[i] + i);
}

static bool enc_matches(const uint8_t *p, const st_prop *prop);

/* Can row i of leaf p take v without growing (no null involved, a fixed slot, or a packed value
 * inside the leaf's range)? */
bool st_leaf_can_patch(const uint8_t *p, uint32_t n, uint32_t i, const st_prop *prop,
                       const strata_value *v) {
    if (v->type == STRATA_TYPE_NULL || (prop->flags & STRATA_PROP_LIST) || !enc_matches(p, prop))
        return false;
    if ((p[CH_FLAGS] & 1) && bit_at(p + CH_BITMAPS, i)) return false; /* now null */
    if (p[CH_ENC] == ST_ENC_FIXED) return true;
    if (p[CH_ENC] == ST_ENC_TIMES) {
        uint64_t s = (uint64_t)v->u.timestamp.seconds - st_rd64(p + CH_BASE);
        uint32_t ns = (uint32_t)v->u.timestamp.nanoseconds - st_rd32(p + CH_BASE2);
        uint8_t w = p[CH_WIDTH], w2 = p[CH_WIDTH2];
        return (w == 64 || s < (1ull << w)) && (w2 == 32 || ns < (1u << w2));
    }
    if (p[CH_ENC] != ST_ENC_PACKED) return false;
    int64_t x = packed_of(v);
    uint64_t stored = (uint64_t)x - st_rd64(p + CH_BASE) - ((p[CH_FLAGS] & 4) ? i : 0);
    uint8_t w = p[CH_WIDTH];
    (void)n;
    return w == 64 || stored < (1ull << w);
}

/* Replace value i of w-bit packed values at d. */
static void patch_bits(uint8_t *d, uint32_t i, uint8_t w, uint64_t stored) {
    if (w > 0 && w < 8) { /* clear the old bits first */
        size_t bit = (size_t)i * w;
        d[bit >> 3] &= (uint8_t)~(((1u << w) - 1) << (bit & 7));
    }
    put_bits(d, i, w, stored);
}

/* Write v into row i of a writable leaf that st_leaf_can_patch accepted. */
void st_leaf_patch(uint8_t *p, uint32_t n, uint32_t i, const st_prop *prop, const strata_value *v) {
    uint8_t *d = p + data_off(p, n);
    if (p[CH_ENC] == ST_ENC_FIXED) {
        fixed_put(prop->type, v, d + (size_t)i * p[CH_WIDTH]);
        return;
    }
    if (p[CH_ENC] == ST_ENC_TIMES) {
        patch_bits(d, i, p[CH_WIDTH], (uint64_t)v->u.timestamp.seconds - st_rd64(p + CH_BASE));
        patch_bits(d + packed_words(n, p[CH_WIDTH]), i, p[CH_WIDTH2],
                   (uint32_t)v->u.timestamp.nanoseconds - st_rd32(p + CH_BASE2));
        return;
    }
    int64_t x = packed_of(v);
    patch_bits(d, i, p[CH_WIDTH], (uint64_t)x - st_rd64(p + CH_BASE) - ((p[CH_FLAGS] & 4) ? i : 0));
}

/* Compare a packed leaf with constants without unpacking it: *out = the rows whose value op k0
 * [, k1] holds. op: 0 ==, 1 !=, 2 <, 3 <=, 4 >, 5 >=, 6 between k0 and k1. Works on the stored
 * numbers (the constants are moved into their domain), for widths 0, 1, 8, 16 and 32 of plainly
 * packed leaves; false when it cannot (the caller unpacks). Null rows hold the base, so they are
 * in *out as that value would be: nulls are the caller's business. */
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((optimize("tree-vectorize"))) /* clang vectorizes at -O2 already */
#endif
bool st_leaf_compare(const uint8_t *p, uint32_t n, int op, int64_t k0, int64_t k1, st_rowmask *out) {
    uint8_t w = p[CH_WIDTH];
    if ((p[CH_FLAGS] & 4) || !(w == 0 || w == 1 || w == 8 || w == 16 || w == 32)) return false;
    int64_t base = (int64_t)st_rd64(p + CH_BASE);
    /* bounds of the stored value s (0 <= s < 2^w): lo <= s <= hi, as an inclusive range */
    int64_t maxs = w == 32 ? (int64_t)UINT32_MAX : ((int64_t)1 << w) - 1;
    if (k0 < base - ((int64_t)1 << 40) || k0 > base + ((int64_t)1 << 40) ||
        k1 < base - ((int64_t)1 << 40) || k1 > base + ((int64_t)1 << 40))
        return false; /* far constants: let the general path decide (no overflow here) */
    int64_t a = k0 - base, b = k1 - base, lo, hi;
    bool neg = false; /* != : the complement of == */
    switch (op) {
    case 0: lo = a, hi = a; break;
    case 1: lo = a, hi = a, neg = true; break;
    case 2: lo = 0, hi = a - 1; break;
    case 3: lo = 0, hi = a; break;
    case 4: lo = a + 1, hi = maxs; break;
    case 5: lo = a, hi = maxs; break;
    case 6: lo = a, hi = b; break;
    default: return false;
    }
    if (lo < 0) lo = 0;
    if (hi > maxs) hi = maxs;
    const uint8_t *d = p + data_off(p, n);
    uint32_t ulo = (uint32_t)lo, span = (uint32_t)(hi - lo);
    uint64_t hits[ST_MASK_WORDS] = {0};
    st_rowmask m;
    if (lo > hi) { /* nothing in range */
        m = st_mask_none();
    } else if (w == 0) { /* every stored value is 0 */
        m = lo == 0 ? st_mask_first(n) : st_mask_none();
    } else if (w == 1) { /* the bits are the mask, or its complement */
        m = lo == 1 ? st_mask_load(d, n, false) : hi == 0 ? st_mask_load(d, n, true)
                    : st_mask_first(n); /* 0..1 */
    } else {
        uint8_t hit[ST_MASK_WORDS * 64]; /* 0 or 1 a row, in loops compilers turn into vectors */
        uint32_t i = 0;                  /* rows before i are in hits already */
        if (w == 8) {
            uint8_t lo8 = (uint8_t)ulo, span8 = (uint8_t)span;
#ifdef ST_SCAN_SSE2
            /* s - lo <= span as unsigned bytes: min(s - lo, span) == s - lo; 64 rows a word */
            __m128i vlo = _mm_set1_epi8((char)lo8), vspan = _mm_set1_epi8((char)span8);
#define HITS(load) /* the 16 rows of the vector load: bit k = row k in range */          \
    ((uint64_t)(uint16_t)_mm_movemask_epi8(                                             \
        _mm_cmpeq_epi8(_mm_min_epu8(_mm_sub_epi8(load, vlo), vspan), _mm_sub_epi8(load, vlo))))
#define HITS16(at) HITS(_mm_loadu_si128((const __m128i *)(d + (at))))
            for (; i + 64 <= n; i += 64)
                hits[i >> 6] = HITS16(i) | HITS16(i + 16) << 16 | HITS16(i + 32) << 32 | HITS16(i + 48) << 48;
            if (i < n) { /* the last word, in a register: 16 rows a step, then the last 1..15
                          * (the data is padded to 8 bytes: an 8- or a 16-byte load) */
                uint64_t word = 0;
                uint32_t at = i;
                for (; at + 16 <= n; at += 16) word |= HITS16(at) << (at - i);
                if (at < n) {
                    uint64_t last = n - at <= 8 ? HITS(_mm_loadl_epi64((const __m128i *)(d + at)))
                                                : HITS16(at);
                    word |= (last & ((1ull << (n - at)) - 1)) << (at - i);
                }
                hits[i >> 6] = word;
                i = n;
            }
#undef HITS16
#undef HITS
#endif
            for (uint32_t j = i; j < n; j++) hit[j] = (uint8_t)(d[j] - lo8) <= span8;
        } else if (w == 16) {
            for (uint32_t j = 0; j < n; j++) hit[j] = (uint32_t)st_rd16(d + 2 * j) - ulo <= span;
        } else {
            for (uint32_t j = 0; j < n; j++) hit[j] = st_rd32(d + 4 * j) - ulo <= span;
        }
        if (i < n) st_words_from_bytes(hit, i, n, hits);
        m = st_mask_of_words(hits);
    }
    *out = neg ? st_mask_andnot(st_mask_first(n), m) : m;
    return true;
}

const uint8_t *st_leaf_nulls(const uint8_t *p) { return (p[CH_FLAGS] & 1) ? p + CH_BITMAPS : NULL; }

bool st_leaf_is_packed(const uint8_t *p) { return p[CH_ENC] == ST_ENC_PACKED; }

bool st_leaf_reals(const uint8_t *p, uint32_t n, strata_type type, double *out) {
    uint8_t slot = type == STRATA_TYPE_FLOAT ? 4 : 8;
    if (p[CH_ENC] != ST_ENC_FIXED || p[CH_WIDTH] != slot) return false;
    const uint8_t *d = p + data_off(p, n);
    if (slot == 8) {
        memcpy(out, d, (size_t)n * 8);
    } else {
        for (uint32_t i = 0; i < n; i++) {
            float f;
            memcpy(&f, d + 4 * (size_t)i, 4);
            out[i] = f;
        }
    }
    return true;
}

static bool leaf_null(const uint8_t *p, uint32_t i) {
    return (p[CH_FLAGS] & 1) && bit_at(p + CH_BITMAPS, i);
}

static bool leaf_big(const uint8_t *p, uint32_t n, uint32_t i) {
    if (!(p[CH_FLAGS] & 2)) return false;
    size_t bo = CH_BITMAPS + ((p[CH_FLAGS] & 1) ? bitmap_bytes(n) : 0);
    return bit_at(p + bo, i);
}

int st_leaf_big_runs(const uint8_t *p, uint32_t n, pgno_t *runs, uint32_t *lens, uint32_t *at,
                     uint32_t *count, strata_error *err) {
    *count = 0;
    if (p[CH_ENC] != ST_ENC_VAR || !(p[CH_FLAGS] & 2)) return STRATA_OK;
    size_t off = data_off(p, n), data = off + var_offsets_bytes(p, n);
    for (uint32_t i = 0; i < n; i++) {
        if (!leaf_big(p, n, i)) continue;
        uint32_t a, b;
        int rc = var_bounds(p, n, i, &a, &b, err);
        if (rc) return rc;
        if (b - a != 12)
            return ST_CORRUPT(err, "column leaf: big element %u has a %u-byte reference", i, b - a);
        if (at) at[*count] = (uint32_t)(data + a);
        runs[*count] = st_rd64(p + data + a);
        lens[(*count)++] = st_rd32(p + data + a + 8);
    }
    return STRATA_OK;
}

static bool enc_matches(const uint8_t *p, const st_prop *prop) {
    if (st_type_packed(prop->type, prop->flags)) return p[CH_ENC] == ST_ENC_PACKED;
    if (st_type_var(prop->type, prop->flags)) return p[CH_ENC] == ST_ENC_VAR;
    if (prop->type == STRATA_TYPE_TIMESTAMP && p[CH_ENC] == ST_ENC_TIMES) return true;
    return p[CH_ENC] == ST_ENC_FIXED && p[CH_WIDTH] == st_type_fixed_size(prop->type);
}

/* A var element: inline bytes, or the run of a big one. */
static int var_element(strata_txn_t *txn, const uint8_t *p, uint32_t n, uint32_t i,
                       const uint8_t **bytes, uint32_t *len, pgno_t *big, strata_error *err) {
    size_t off = data_off(p, n);
    uint32_t a, b;
    int rc = var_bounds(p, n, i, &a, &b, err);
    if (rc) return rc;
    const uint8_t *e = p + off + var_offsets_bytes(p, n) + a;
    *big = 0;
    if (leaf_big(p, n, i)) {
        if (b - a != 12)
            return ST_CORRUPT(err, "column leaf: big element %u has a %u-byte reference", i, b - a);
        *big = st_rd64(e);
        *len = st_rd32(e + 8);
        if (*len > STRATA_MAX_BYTES + 17)
            return ST_CORRUPT(err, "column leaf: big element %u of %u bytes", i, *len);
        return st_overflow_get(txn, *big, *len, bytes, NULL, err);
    }
    *bytes = e;
    *len = b - a;
    return STRATA_OK;
}

int st_leaf_element(strata_txn_t *txn, const uint8_t *p, uint32_t n, uint32_t i,
                    const uint8_t **bytes, uint32_t *len, strata_error *err) {
    if (p[CH_ENC] != ST_ENC_VAR)
        return ST_CORRUPT(err, "column leaf: encoding %u where variable-size elements were expected",
                          p[CH_ENC]);
    if (leaf_null(p, i)) {
        *bytes = NULL;
        *len = 0;
        return STRATA_OK;
    }
    pgno_t big;
    return var_element(txn, p, n, i, bytes, len, &big, err);
}

/* Bytes returned by a write transaction from its own pages are copied into the arena: those
 * pages may be rewritten before the transaction ends. Committed pages stay put. */
static const uint8_t *stable_bytes(strata_txn_t *txn, const uint8_t *b, size_t len) {
    strata_db_t *db = txn->db;
    if (!txn->write || st_bytes_committed(db, b)) return b;
    st_store *store;
    strata_error ignored;
    if (st_store_get(txn, &store, &ignored)) return NULL;
    uint8_t *copy = st_arena_alloc(store, len ? len : 1);
    if (copy) memcpy(copy, b, len);
    return copy;
}

static int var_value(strata_txn_t *txn, const st_prop *p, const uint8_t *b, uint32_t len,
                     bool big, strata_value *out, strata_error *err) {
    if (!big) {
        b = stable_bytes(txn, b, len);
        if (!b) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory reading '%s'", p->name);
    }
    if (p->type == STRATA_TYPE_MIXED) return mixed_decode(b, len, out, err);
    out->type = (strata_type)p->type;
    out->u.bytes.data = b;
    out->u.bytes.len = len;
    return STRATA_OK;
}

/* The leaf at ref, checked, and of the encoding prop's type takes. */
static int prop_leaf(strata_txn_t *txn, st_leafref ref, uint32_t n, const st_prop *prop,
                     const uint8_t **seg, strata_error *err) {
    int rc = st_leaf_header(txn, ref, n, seg, err);
    if (rc == STRATA_OK && !enc_matches(*seg, prop))
        return ST_CORRUPT(err, "column page %llu: encoding %u/%u does not fit property '%s'",
                          (unsigned long long)ref.pgno, (*seg)[CH_ENC], (*seg)[CH_WIDTH], prop->name);
    return rc;
}

/* A hint, never a read that can fail: a random point read touches several leaves (often on
 * different pages), and asking for all of their cache lines before reading any lets the misses
 * overlap instead of queueing one after another; a scan asks for the leaves of clusters a few
 * ahead of the one it reads. The leaf's first `bytes` bytes (1: its header; at most its length).
 * Out-of-range refs are skipped (the read that follows reports them). */
void st_leaf_prefetch(strata_txn_t *txn, st_leafref ref, uint32_t bytes) {
    if (ref.off >= ST_PAGE_SIZE) return;
    if (st_pgno_packed(ref.pgno)) { /* the read that follows finds it unpacked, or unpacks it */
        st_packed_prefetch(txn, ref.pgno);
        return;
    }
    if (bytes > ref.len) bytes = ref.len ? ref.len : 1;
    if (!txn->write) { /* its page's checks' lines too, without waiting for them */
        st_page_prefetch(txn, ref.pgno, ref.off, bytes);
        return;
    }
    const uint8_t *pg;
    strata_error ignored;
    if (st_page_get(txn, ref.pgno, &pg, &ignored)) return;
    for (uint32_t at = 0; at < bytes && ref.off + at < ST_PAGE_SIZE; at += 64)
        __builtin_prefetch(pg + ref.off + at);
}

/* The leaf at ref when its header lies inside its page and row i exists, else NULL. */
static const uint8_t *leaf_to_prefetch(strata_txn_t *txn, st_leafref ref, uint32_t n, uint32_t i) {
    const uint8_t *pg;
    strata_error ignored;
    if (ref.len < CH_BITMAPS || (size_t)ref.off + ref.len > ST_PAGE_SIZE || i >= n ||
        st_pgno_packed(ref.pgno) || st_page_get(txn, ref.pgno, &pg, &ignored))
        return NULL;
    return pg + ref.off;
}

void st_col_prefetch(strata_txn_t *txn, st_leafref ref, uint32_t n, uint32_t i) {
    const uint8_t *p = leaf_to_prefetch(txn, ref, n, i);
    if (!p) return;
    size_t at = data_off(p, n);
    switch (p[CH_ENC]) {
    case ST_ENC_PACKED:
    case ST_ENC_TIMES: at += (size_t)i * p[CH_WIDTH] / 8; break;
    case ST_ENC_FIXED: at += (size_t)i * p[CH_WIDTH]; break;
    default: at += (size_t)i * (p[CH_FLAGS] & VAR_U16 ? 2 : 4); break; /* the element's offsets */
    }
    if (at < ref.len) __builtin_prefetch(p + at);
}

void st_col_prefetch_element(strata_txn_t *txn, st_leafref ref, uint32_t n, uint32_t i) {
    const uint8_t *p = leaf_to_prefetch(txn, ref, n, i);
    if (!p || p[CH_ENC] != ST_ENC_VAR) return;
    size_t off = data_off(p, n);
    if (off + var_offsets_bytes(p, n) > ref.len) return;
    size_t at = off + var_offsets_bytes(p, n) + var_off(p, off, i);
    if (at < ref.len) __builtin_prefetch(p + at);
}

int st_col_read(strata_txn_t *txn, st_leafref ref, uint32_t n, uint32_t i, const st_prop *prop,
                strata_value *out, strata_error *err) {
    const uint8_t *p;
    int rc = prop_leaf(txn, ref, n, prop, &p, err);
    if (rc) return rc;
    memset(out, 0, sizeof *out);
    if (leaf_null(p, i)) {
        out->type = STRATA_TYPE_NULL;
        return STRATA_OK;
    }
    switch (p[CH_ENC]) {
    case ST_ENC_PACKED: {
        packed_value(prop, st_packed_at(p, n, i), out);
        return STRATA_OK;
    }
    case ST_ENC_FIXED:
        fixed_get(prop->type, p + data_off(p, n) + (size_t)i * p[CH_WIDTH], out);
        return STRATA_OK;
    case ST_ENC_TIMES:
        out->type = STRATA_TYPE_TIMESTAMP;
        times_at(p, n, i, &out->u.timestamp.seconds, &out->u.timestamp.nanoseconds);
        return STRATA_OK;
    default: {
        const uint8_t *b = NULL;
        uint32_t len = 0;
        pgno_t big = 0;
        if ((rc = var_element(txn, p, n, i, &b, &len, &big, err))) return rc;
        return var_value(txn, prop, b, len, big != 0, out, err);
    }
    }
}

/* ------------------------------------------------------------------ decoded columns */

/* The values' arrays are not zeroed: rows are written before they are read (decoded, or given
 * their default when appended); zeroing a cluster's room at every decode was ~10 KB of
 * memset. */
int st_dcol_alloc(st_dcol *c, const st_prop *p) {
    memset(c, 0, sizeof *c);
    c->col_id = p->id;
    if (st_type_packed(p->type, p->flags)) {
        c->enc = ST_ENC_PACKED;
        c->ints = malloc(ST_CLUSTER_MAX * sizeof *c->ints);
        return c->ints ? 0 : -1;
    }
    if (st_type_var(p->type, p->flags)) {
        c->enc = ST_ENC_VAR;
        c->var = malloc(ST_CLUSTER_MAX * sizeof *c->var);
        return c->var ? 0 : -1;
    }
    c->enc = ST_ENC_FIXED;
    c->slot = (uint8_t)st_type_fixed_size(p->type);
    c->times = p->type == STRATA_TYPE_TIMESTAMP;
    c->fixed = malloc((size_t)ST_CLUSTER_MAX * c->slot);
    return c->fixed ? 0 : -1;
}

void st_dcol_release(st_dcol *c) {
    free(c->ints);
    free(c->fixed);
    free(c->var);
    c->ints = NULL;
    c->fixed = NULL;
    c->var = NULL;
}

void st_col_default(const st_prop *p, uint32_t from, uint32_t to, st_dcol *c) {
    bool null = (p->flags & STRATA_PROP_NULLABLE) && !(p->flags & STRATA_PROP_LIST);
    if (p->type == STRATA_TYPE_LINK && !(p->flags & STRATA_PROP_LIST)) null = true;
    for (uint32_t i = from; i < to; i++) {
        c->nulls[i] = null;
        if (c->ints) c->ints[i] = 0;
        if (c->fixed) memset(c->fixed + (size_t)i * c->slot, 0, c->slot);
        if (c->var) c->var[i] = (st_var){(const uint8_t *)"", 0, 0};
    }
    if (c->var && p->type == STRATA_TYPE_MIXED && !null) {
        /* a non-nullable mixed defaults to the integer 0 */
        static const uint8_t zero_int[9] = {STRATA_TYPE_INT};
        for (uint32_t i = from; i < to; i++) c->var[i] = (st_var){zero_int, 9, 0};
    }
}

int st_col_decode(strata_txn_t *txn, st_leafref ref, const st_prop *prop, uint32_t n, st_dcol *c,
                  st_store *store, strata_error *err) {
    const uint8_t *p;
    int rc = prop_leaf(txn, ref, n, prop, &p, err);
    if (rc) return rc;
    c->old = ref;
    size_t off = data_off(p, n);
    if (p[CH_FLAGS] & 1)
        for (uint32_t i = 0; i < n; i++) c->nulls[i] = bit_at(p + CH_BITMAPS, i);
    else
        memset(c->nulls, 0, n);
    if (c->enc == ST_ENC_PACKED) {
        st_leaf_unpack(p, n, c->ints);
    } else if (c->enc == ST_ENC_FIXED && p[CH_ENC] == ST_ENC_TIMES) {
        for (uint32_t i = 0; i < n; i++) { /* (null rows are zeros, as in a fixed leaf) */
            strata_value v = {.type = STRATA_TYPE_TIMESTAMP};
            if (!c->nulls[i]) times_at(p, n, i, &v.u.timestamp.seconds, &v.u.timestamp.nanoseconds);
            fixed_put(STRATA_TYPE_TIMESTAMP, &v, c->fixed + (size_t)i * c->slot);
        }
    } else if (c->enc == ST_ENC_FIXED) {
        memcpy(c->fixed, p + off, (size_t)n * c->slot);
    } else { /* the elements' bytes are copied at once; each element points into the copy */
        size_t data = off + var_offsets_bytes(p, n);
        uint32_t end = n ? var_off(p, off, n) : 0;
        if (end > st_rd32(p + CH_VARBYTES))
            return ST_CORRUPT(err, "column page %llu: element data ends at %u, past %u bytes",
                              (unsigned long long)ref.pgno, end, st_rd32(p + CH_VARBYTES));
        uint8_t *copy = st_arena_alloc(store, end ? end : 1);
        if (!copy) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        memcpy(copy, p + data, end);
        bool bigs = p[CH_FLAGS] & 2;
        uint32_t a = n ? var_off(p, off, 0) : 0, b;
        for (uint32_t i = 0; i < n; i++, a = b) {
            b = var_off(p, off, i + 1);
            if ((i == 0 && a != 0) || a > b || b > end)
                return ST_CORRUPT(err, "column page %llu: element %u of %u spans [%u, %u) of %u "
                                  "bytes", (unsigned long long)ref.pgno, i, n, a, b, end);
            if (bigs && leaf_big(p, n, i)) {
                if (b - a != 12)
                    return ST_CORRUPT(err, "column page %llu: big element %u has a %u-byte "
                                      "reference", (unsigned long long)ref.pgno, i, b - a);
                c->var[i] = (st_var){NULL, st_rd32(p + data + a + 8), st_rd64(p + data + a)};
                continue;
            }
            c->var[i] = (st_var){copy + a, b - a, 0};
        }
    }
    return STRATA_OK;
}

int st_dcol_value(strata_txn_t *txn, const st_dcol *c, const st_prop *p, uint32_t i,
                  strata_value *out, strata_error *err) {
    memset(out, 0, sizeof *out);
    if (c->nulls[i]) {
        out->type = STRATA_TYPE_NULL;
        return STRATA_OK;
    }
    if (c->enc == ST_ENC_PACKED) {
        packed_value(p, c->ints[i], out);
        return STRATA_OK;
    }
    if (c->enc == ST_ENC_FIXED) {
        fixed_get(p->type, c->fixed + (size_t)i * c->slot, out);
        return STRATA_OK;
    }
    const st_var *e = &c->var[i];
    const uint8_t *b = e->p;
    if (e->big) {
        int rc = st_overflow_get(txn, e->big, e->len, &b, NULL, err);
        if (rc) return rc;
    }
    if (p->type == STRATA_TYPE_MIXED) return mixed_decode(b, e->len, out, err);
    out->type = (strata_type)p->type;
    out->u.bytes.data = b;
    out->u.bytes.len = e->len;
    return STRATA_OK;
}

int st_dcol_free_big(strata_txn_t *txn, st_dcol *c, uint32_t i, strata_error *err) {
    if (!c->var || !c->var[i].big) return STRATA_OK;
    uint32_t run = (uint32_t)(((uint64_t)PH_SIZE + c->var[i].len + ST_PAGE_SIZE - 1) / ST_PAGE_SIZE);
    int rc = st_page_free(txn, c->var[i].big, run, err);
    c->var[i].big = 0;
    return rc;
}

int st_dcol_store(strata_txn_t *txn, st_store *store, st_dcol *c, const st_prop *p, uint32_t i,
                  const strata_value *v, strata_error *err) {
    int rc = st_dcol_free_big(txn, c, i, err);
    if (rc) return rc;
    c->dirty = true;
    if (v->type == STRATA_TYPE_NULL) {
        c->nulls[i] = 1;
        if (c->ints) c->ints[i] = 0;
        if (c->fixed) memset(c->fixed + (size_t)i * c->slot, 0, c->slot);
        if (c->var) c->var[i] = (st_var){(const uint8_t *)"", 0, 0};
        return STRATA_OK;
    }
    c->nulls[i] = 0;
    if (c->enc == ST_ENC_PACKED) {
        c->ints[i] = packed_of(v);
        return STRATA_OK;
    }
    if (c->enc == ST_ENC_FIXED) {
        fixed_put(p->type, v, c->fixed + (size_t)i * c->slot);
        return STRATA_OK;
    }
    /* var: build the element (mixed: tag + payload) */
    size_t head = 0;
    uint8_t hbuf[17];
    const uint8_t *payload = NULL;
    size_t plen = 0;
    if (p->type == STRATA_TYPE_MIXED) {
        head = mixed_head(v, hbuf);
        if (v->type == STRATA_TYPE_STRING || v->type == STRATA_TYPE_BINARY) {
            payload = v->u.bytes.data;
            plen = v->u.bytes.len;
        }
    } else {
        payload = v->u.bytes.data;
        plen = v->u.bytes.len;
    }
    size_t len = head + plen;
    if (len <= ST_INLINE_MAX) {
        uint8_t *copy = st_arena_alloc(store, len ? len : 1);
        if (!copy) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        memcpy(copy, hbuf, head);
        if (plen) memcpy(copy + head, payload, plen);
        c->var[i] = (st_var){copy, (uint32_t)len, 0};
        return STRATA_OK;
    }
    uint32_t run = (uint32_t)(((uint64_t)PH_SIZE + len + ST_PAGE_SIZE - 1) / ST_PAGE_SIZE);
    uint8_t *pg;
    pgno_t pgno;
    if ((rc = st_page_alloc(txn, run, &pg, &pgno, err))) return rc;
    pg[PH_KIND] = ST_PAGE_OVERFLOW;
    st_wr32(pg + PH_RUN, run);
    memcpy(pg + PH_SIZE, hbuf, head);
    memcpy(pg + PH_SIZE + head, payload, plen);
    c->var[i] = (st_var){NULL, (uint32_t)len, pgno};
    return STRATA_OK;
}

/* ------------------------------------------------------------------ encoding */

/* The nulls and big-values flags of rows [from, to). */
static uint8_t range_flags(const st_dcol *c, uint32_t from, uint32_t to) {
    uint8_t flags = 0;
    for (uint32_t i = from; i < to && !(flags & 1); i++)
        if (c->nulls[i]) flags |= 1;
    for (uint32_t i = from; c->var && i < to && !(flags & 2); i++)
        if (c->var[i].big) flags |= 2;
    return flags;
}

/* The narrowest packing of rows [from, to): plain (base + stored) or counting from the row
 * (base + row + stored, *by_row). Values compare as signed numbers. */
static void packed_range(const st_dcol *c, uint32_t from, uint32_t to, int64_t *base, uint8_t *w,
                         bool *by_row) {
    uint32_t i = from;
    while (i < to && c->nulls[i]) i++;
    int64_t lo = 0, hi = 0, rlo = 0, rhi = 0;
    if (i < to) lo = hi = c->ints[i], rlo = rhi = (int64_t)((uint64_t)c->ints[i] - (i - from));
    for (; i < to; i++) {
        if (c->nulls[i]) continue;
        int64_t v = c->ints[i];
        int64_t r = (int64_t)((uint64_t)v - (i - from));
        lo = v < lo ? v : lo;
        hi = v > hi ? v : hi;
        rlo = r < rlo ? r : rlo;
        rhi = r > rhi ? r : rhi;
    }
    uint8_t plain = width_for((uint64_t)hi - (uint64_t)lo);
    /* every r lies in [rlo, rhi] as signed numbers, so r - rlo (mod 2^64) <= rhi - rlo */
    uint8_t rowed = width_for((uint64_t)rhi - (uint64_t)rlo);
    *by_row = rowed < plain;
    *base = *by_row ? rlo : lo;
    *w = *by_row ? rowed : plain;
}

size_t st_col_measure(const st_dcol *c, uint32_t from, uint32_t to, st_col_plan *plan) {
    size_t size = st_col_bytes(c, from, to, plan);
    plan->size = size <= ST_PAGE_SIZE - PH_SIZE ? size : 0;
    return plan->size;
}

/* Timestamps [from, to) as two packed arrays (encoding 4): the widths and bases into plan, the
 * bytes of the two arrays returned. */
static size_t times_range(const st_dcol *c, uint32_t from, uint32_t to, st_col_plan *plan) {
    int64_t slo = 0, shi = 0, nlo = 0, nhi = 0;
    bool any = false;
    for (uint32_t i = from; i < to; i++) {
        if (c->nulls[i]) continue;
        const uint8_t *f = c->fixed + (size_t)i * c->slot;
        int64_t sec = (int64_t)st_rd64(f), ns = (int32_t)st_rd32(f + 8);
        if (!any) slo = shi = sec, nlo = nhi = ns, any = true;
        slo = sec < slo ? sec : slo;
        shi = sec > shi ? sec : shi;
        nlo = ns < nlo ? ns : nlo;
        nhi = ns > nhi ? ns : nhi;
    }
    plan->base = slo;
    plan->base2 = (int32_t)nlo;
    plan->width = width_for((uint64_t)shi - (uint64_t)slo);
    plan->width2 = width_for((uint64_t)(nhi - nlo)); /* < 2^32: nanoseconds are int32 */
    return packed_words(to - from, plan->width) + packed_words(to - from, plan->width2);
}

size_t st_col_bytes(const st_dcol *c, uint32_t from, uint32_t to, st_col_plan *plan) {
    uint32_t n = to - from;
    *plan = (st_col_plan){.enc = c->enc, .flags = range_flags(c, from, to)};
    size_t size = CH_BITMAPS + (plan->flags & 1 ? bitmap_bytes(n) : 0) +
                  (plan->flags & 2 ? bitmap_bytes(n) : 0);
    size = align8(size);
    if (c->enc == ST_ENC_PACKED) {
        bool by_row;
        packed_range(c, from, to, &plan->base, &plan->width, &by_row);
        if (by_row) plan->flags |= 4;
        size += packed_words(n, plan->width);
    } else if (c->enc == ST_ENC_FIXED) {
        size_t times = c->times ? times_range(c, from, to, plan) : SIZE_MAX;
        if (times < (size_t)n * c->slot) plan->enc = ST_ENC_TIMES; /* (format 12: smaller) */
        size += plan->enc == ST_ENC_TIMES ? times : (size_t)n * c->slot;
    } else {
        size_t bytes = 0;
        for (uint32_t i = from; i < to; i++) bytes += c->var[i].big ? 12 : c->var[i].len;
        if (bytes <= UINT16_MAX && !st_col_u32_offsets) plan->flags |= VAR_U16; /* (format 12) */
        size += var_offsets_size(n, plan->flags & VAR_U16) + bytes;
    }
    plan->size = size;
    return size;
}

void st_col_encode(const st_dcol *c, uint32_t from, uint32_t to, const st_col_plan *plan,
                   uint8_t *p) {
    uint32_t n = to - from;
    memset(p, 0, plan->size);
    p[CH_ENC] = plan->enc;
    st_wr32(p + CH_N, n);
    uint8_t flags = plan->flags, w = plan->width;
    int64_t base = plan->base;
    bool by_row = flags & 4;
    p[CH_FLAGS] = flags;
    size_t bo = CH_BITMAPS;
    if (flags & 1) {
        for (uint32_t i = 0; i < n; i++)
            if (c->nulls[from + i]) p[bo + (i >> 3)] |= (uint8_t)(1u << (i & 7));
        bo += bitmap_bytes(n);
    }
    if (flags & 2)
        for (uint32_t i = 0; i < n; i++)
            if (c->var[from + i].big) p[bo + (i >> 3)] |= (uint8_t)(1u << (i & 7));
    size_t off = data_off(p, n);
    if (c->enc == ST_ENC_PACKED) {
        p[CH_WIDTH] = w;
        st_wr64(p + CH_BASE, (uint64_t)base);
        for (uint32_t i = 0; i < n; i++)
            if (!c->nulls[from + i])
                put_bits(p + off, i, w,
                         (uint64_t)c->ints[from + i] - (uint64_t)base - (by_row ? i : 0));
    } else if (plan->enc == ST_ENC_TIMES) {
        uint8_t w2 = plan->width2;
        uint8_t *d2 = p + off + packed_words(n, w);
        p[CH_WIDTH] = w;
        p[CH_WIDTH2] = w2;
        st_wr64(p + CH_BASE, (uint64_t)base);
        st_wr32(p + CH_BASE2, (uint32_t)plan->base2);
        for (uint32_t i = 0; i < n; i++) {
            if (c->nulls[from + i]) continue;
            const uint8_t *f = c->fixed + (size_t)(from + i) * c->slot;
            put_bits(p + off, i, w, st_rd64(f) - (uint64_t)base);
            put_bits(d2, i, w2, (uint32_t)(st_rd32(f + 8) - (uint32_t)plan->base2));
        }
    } else if (c->enc == ST_ENC_FIXED) {
        p[CH_WIDTH] = c->slot;
        memcpy(p + off, c->fixed + (size_t)from * c->slot, (size_t)n * c->slot);
    } else {
        bool u16 = flags & VAR_U16;
        uint8_t *data = p + off + var_offsets_size(n, u16);
        uint32_t o = 0;
        for (uint32_t i = 0; i < n; i++) {
            const st_var *e = &c->var[from + i];
            if (u16) st_wr16(p + off + 2 * (size_t)i, (uint16_t)o);
            else st_wr32(p + off + 4 * (size_t)i, o);
            if (e->big) {
                st_wr64(data + o, e->big);
                st_wr32(data + o + 8, e->len);
                o += 12;
            } else {
                if (e->len) memcpy(data + o, e->p, e->len);
                o += e->len;
            }
        }
        if (u16) st_wr16(p + off + 2 * (size_t)n, (uint16_t)o);
        else st_wr32(p + off + 4 * (size_t)n, o);
        st_wr32(p + CH_VARBYTES, o);
    }
}
