/*
 * index.c — secondary and primary-key indexes: a byte-key B+tree "$t<id>.i<col>" per indexed
 * property, holding one entry per object: the order-preserving encoding of the value followed
 * by the object key (8 bytes, big-endian); the entry's value is empty.
 *
 * Value encoding (memcmp order = value order, nulls first):
 *   0x00                              null
 *   0x01 + payload:
 *     bool       1 byte
 *     int        8 bytes big-endian, sign bit flipped
 *     timestamp  seconds as int, then nanoseconds 4 bytes big-endian, sign bit flipped
 *     ObjectId   12 bytes, UUID 16 bytes, as stored
 *     string     the first ST_INDEX_PREFIX bytes with 0x00 escaped as 0x00 0xFF, then 0x00 0x01
 *                (the whole string) or 0x00 0x02 (truncated: lookups compare the object's value)
 *   A mixed property's index (format 3 files on): 0x01, the value's type (1 byte), then the
 *   payload of that type as above, or for the types only mixed holds:
 *     float      4 bytes, double 8 bytes: the IEEE bits big-endian, sign flipped for positives and
 *                every bit flipped for negatives (memcmp order = numeric order within the type)
 *     decimal128 16 bytes as stored, binary: as a string (escaped, truncated, terminated)
 *   so values of different types never share a key (equal numbers of different types are
 *   different entries: the query planner uses no mixed index, it scans).
 *
 * A direct integer primary key (ST_PROP_PK_DIRECT, objects.h) keeps no entry for an object
 * whose key equals its primary key: lookups try the object at key == value first, and the index
 * answers only for the rest. Range and ordered walks therefore never use such an index.
 *
 * Invariants (checked by verify): every object of the table has exactly one entry in each of
 * its indexes (none in a direct primary key's index when its key is its value), and it encodes
 * the object's current value; a primary-key index has no two entries with the same value.
 */
#include "objects/private.h"

#include <stdio.h>
#include <stdlib.h>

bool st_type_indexable(uint8_t type) {
    return type == STRATA_TYPE_BOOL || type == STRATA_TYPE_INT || type == STRATA_TYPE_STRING ||
           type == STRATA_TYPE_TIMESTAMP || type == STRATA_TYPE_OBJECT_ID || type == STRATA_TYPE_UUID ||
           type == STRATA_TYPE_MIXED;
}

/* An IEEE number's bits, ordered as unsigned bytes order the numbers. */
static uint64_t ordered_bits(uint64_t bits, unsigned width) {
    uint64_t sign = 1ull << (width - 1);
    return bits & sign ? ~bits & (width == 64 ? ~0ull : (1ull << width) - 1) : bits | sign;
}

/* The value part of an index key; returns its length. `mixed`: the key of a mixed property,
 * whose values carry their type (see the top of this file). */
static size_t encode_value(const strata_value *v, uint8_t *out, bool *truncated, bool mixed) {
    *truncated = false;
    if (v->type == STRATA_TYPE_NULL) {
        out[0] = 0;
        return 1;
    }
    out[0] = 1;
    size_t o = 1;
    if (mixed) out[o++] = (uint8_t)v->type;
    switch (v->type) {
    case STRATA_TYPE_FLOAT: {
        uint32_t b;
        memcpy(&b, &v->u.f, 4);
        uint32_t k = (uint32_t)ordered_bits(b, 32);
        for (int i = 0; i < 4; i++) out[o + i] = (uint8_t)(k >> (24 - 8 * i));
        o += 4;
        break;
    }
    case STRATA_TYPE_DOUBLE: {
        uint64_t b;
        memcpy(&b, &v->u.d, 8);
        st_wr_be64(out + o, ordered_bits(b, 64));
        o += 8;
        break;
    }
    case STRATA_TYPE_DECIMAL128:
        st_wr_be64(out + o, v->u.decimal.high);
        st_wr_be64(out + o + 8, v->u.decimal.low);
        o += 16;
        break;
    case STRATA_TYPE_BINARY: /* as a string */
    case STRATA_TYPE_BOOL: out[o++] = v->u.b ? 1 : 0; break;
    case STRATA_TYPE_INT: st_wr_be64(out + o, (uint64_t)v->u.i ^ (1ull << 63)); o += 8; break;
    case STRATA_TYPE_TIMESTAMP: {
        st_wr_be64(out + o, (uint64_t)v->u.timestamp.seconds ^ (1ull << 63));
        uint32_t ns = (uint32_t)v->u.timestamp.nanoseconds ^ (1u << 31);
        out[o + 8] = (uint8_t)(ns >> 24);
        out[o + 9] = (uint8_t)(ns >> 16);
        out[o + 10] = (uint8_t)(ns >> 8);
        out[o + 11] = (uint8_t)ns;
        o += 12;
        break;
    }
    case STRATA_TYPE_OBJECT_ID: memcpy(out + o, v->u.object_id, 12); o += 12; break;
    case STRATA_TYPE_UUID: memcpy(out + o, v->u.uuid, 16); o += 16; break;
    case STRATA_TYPE_TYPED_LINK: /* a mixed value's link: table, then key */
        st_wr_be32(out + o, v->u.typed_link.table);
        st_wr_be64(out + o + 4, (uint64_t)v->u.typed_link.key ^ (1ull << 63));
        o += 12;
        break;
    case STRATA_TYPE_STRING: {
        if (v->type == STRATA_TYPE_BINARY && !mixed) break;
        const uint8_t *s = v->u.bytes.data;
        size_t n = v->u.bytes.len;
        if (n > ST_INDEX_PREFIX) {
            n = ST_INDEX_PREFIX;
            *truncated = true;
        }
        for (size_t i = 0; i < n; i++) {
            out[o++] = s[i];
            if (s[i] == 0) out[o++] = 0xFF;
        }
        out[o++] = 0;
        out[o++] = *truncated ? 2 : 1;
        break;
    }
    default: break;
    }
    return o;
}

int st_index_key(const st_prop *p, const strata_value *v, int64_t key, uint8_t *out, size_t *len,
                 bool *truncated) {
    size_t n = encode_value(v, out, truncated, p->type == STRATA_TYPE_MIXED);
    st_wr_be64(out + n, (uint64_t)key);
    *len = n + 8;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ pending changes */

#define PENDING_MAX_BYTES (32u << 20) /* applied once this much is queued */

void st_index_discard(st_prop *p) {
    if (!p->pending) return;
    free(p->pending->buf);
    free(p->pending);
    p->pending = NULL;
}

uint8_t *st_index_queue_room(st_prop *p, strata_error *err) {
    st_index_pending *q = p->pending;
    if (!q && !(q = p->pending = calloc(1, sizeof *q))) {
        st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        return NULL;
    }
    if (q->cap - q->len < 3 + STRATA_MAX_KEY) {
        /* small at first: a one-object commit queues a few dozen bytes, and 64 KiB from the heap's
         * top was given back to the system at every commit (two brk calls, its pages faulted
         * in again) */
        size_t cap = q->cap ? 2 * q->cap : 3 + STRATA_MAX_KEY + 256;
        uint8_t *b = realloc(q->buf, cap);
        if (!b) {
            st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
            return NULL;
        }
        q->buf = b;
        q->cap = cap;
    }
    return q->buf + q->len + 3;
}

int st_index_queue_add(strata_table_t *t, st_prop *p, size_t len, bool remove, strata_error *err) {
    st_index_pending *q = p->pending;
    uint8_t *r = q->buf + q->len;
    if (remove && q->last < q->len && !q->buf[q->last + 2] && st_rd16(q->buf + q->last) == len &&
        memcmp(q->buf + q->last + 3, r + 3, len) == 0) {
        /* the entry the last record inserts, removed: the pair changes nothing whatever came
         * before (an object created with the default value, then given its own: without this a
         * bulk insert queued and sorted three records an object, not one) */
        q->len = q->last;
        q->n--;
        return STRATA_OK;
    }
    st_wr16(r, (uint16_t)len);
    r[2] = remove;
    q->last = q->len;
    q->len += 3 + len;
    q->n++;
    return q->len >= PENDING_MAX_BYTES ? st_index_apply(t, p, err) : STRATA_OK;
}

static int pending_add(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                       bool remove, strata_error *err) {
    uint8_t *k = st_index_queue_room(p, err); /* the key built where it goes (private.h) */
    if (!k) return STRATA_ERR_NO_MEMORY;
    size_t kl;
    bool trunc;
    st_index_key(p, v, key, k, &kl, &trunc);
    return st_index_queue_add(t, p, kl, remove, err);
}

/* A record to sort: its key's first 8 bytes as a number (most records differ there), and the
 * record. Sorting these touches the records only on ties, not at every comparison. */
typedef st_head_ref pending_ref;

/* By key, and in the order they were made for the same key (the buffer is in that order, so a
 * record's address is its sequence). */
static int pending_cmp(const void *a, const void *b) {
    const pending_ref *x = a, *y = b;
    if (x->head != y->head) return x->head < y->head ? -1 : 1;
    const uint8_t *rx = x->rec, *ry = y->rec;
    size_t lx = st_rd16(rx), ly = st_rd16(ry), n = lx < ly ? lx : ly;
    int c = memcmp(rx + 3, ry + 3, n);
    if (c == 0) c = (lx > ly) - (lx < ly);
    return c ? c : (rx > ry) - (rx < ry);
}

static bool same_key(const uint8_t *a, const uint8_t *b) {
    return st_rd16(a) == st_rd16(b) && memcmp(a + 3, b + 3, st_rd16(a)) == 0;
}

/* The 8 key bytes of r from byte `off` on as a number (zero past the key's end). */
static uint64_t head_at(const uint8_t *r, size_t off) {
    size_t len = st_rd16(r);
    return off < len ? st_key_head8(r + 3 + off, len - off) : 0;
}

/* A few of v sorted by pending_cmp, by insertion (for sixteen or so: eight radix passes of 256
 * counts, or glibc's qsort calling through a pointer, cost more). */
static void insertion_sort(pending_ref *v, size_t n) {
    for (size_t i = 1; i < n; i++) {
        pending_ref x = v[i];
        size_t j = i;
        for (; j > 0 && pending_cmp(&v[j - 1], &x) > 0; j--) v[j] = v[j - 1];
        v[j] = x;
    }
}

void st_radix_by_head(st_head_ref *v, size_t n, st_head_ref *tmp) {
    if (n < 2) return;
    st_head_ref *src = v, *dst = tmp;
    for (unsigned shift = 0; shift < 64; shift += 8) {
        size_t count[256] = {0};
        for (size_t i = 0; i < n; i++) count[(src[i].head >> shift) & 0xff]++;
        if (count[(src[0].head >> shift) & 0xff] == n) continue;
        size_t at = 0;
        for (unsigned b = 0; b < 256; b++) {
            size_t c = count[b];
            count[b] = at;
            at += c;
        }
        for (size_t i = 0; i < n; i++) dst[count[(src[i].head >> shift) & 0xff]++] = src[i];
        st_head_ref *swap = src;
        src = dst;
        dst = swap;
    }
    if (src != v) memcpy(v, src, n * sizeof *v);
}

/* Sorted by head as st_radix_by_head does; a few whole (insertion_sort: pending_cmp orders by
 * head first). */
static void radix_by_head(pending_ref *v, size_t n, pending_ref *tmp) {
    if (n <= 16) { /* a small commit's few changes */
        insertion_sort(v, n);
        return;
    }
    st_radix_by_head(v, n, tmp);
}

/* The runs of v (sorted by the key bytes before `off`, equal there within a run) sorted on:
 * a long run by its next 8 bytes the same way (strings sharing a long prefix: names in one
 * script share their first bytes), a short one by pending_cmp (by insertion up to 16). */
static void sort_runs(pending_ref *v, size_t n, size_t off, pending_ref *tmp) {
    for (size_t i = 0, j; i < n; i = j) {
        for (j = i + 1; j < n && v[j].head == v[i].head; j++) {}
        size_t run = j - i;
        if (run < 2) continue;
        bool longer = false; /* a key goes on past off + 8: the next bytes can tell them apart */
        for (size_t k = i; k < j && !longer; k++) longer = st_rd16(v[k].rec) > off + 8;
        if (run <= 16) { /* glibc's qsort of a few took 8% of a full-text load */
            insertion_sort(v + i, run);
            continue;
        }
        if (!longer || off + 8 >= STRATA_MAX_KEY) {
            qsort(v + i, run, sizeof *v, pending_cmp);
            continue;
        }
        for (size_t k = i; k < j; k++) v[k].head = head_at(v[k].rec, off + 8);
        radix_by_head(v + i, run, tmp);
        sort_runs(v + i, run, off + 8, tmp);
    }
}

/* Sort by key, keeping the buffer order among equal keys (pending_cmp's order): by the first 8
 * bytes (the heads), then runs of equal heads on. Heads are left as the bytes the last sort
 * looked at: equal keys have equal heads. false: out of memory. */
static bool sort_pending(pending_ref *v, size_t n) {
    if (n < 2) return true;
    pending_ref *tmp = malloc(n * sizeof *tmp);
    if (!tmp) return false;
    radix_by_head(v, n, tmp);
    sort_runs(v, n, 0, tmp);
    free(tmp);
    return true;
}

/* A batch of at least a quarter as many changes as the index has entries lands in nearly every
 * leaf, and inserts into leaves that are full (an index built by appending) split each of them
 * in half: the index ends about 70% full. Such a batch writes the index anew instead: its
 * entries and the batch's decided changes (order[0..n), groups of one key as in
 * st_index_apply), merged in key order, appended into fresh pages (btree.c leaves a full page
 * as it is at the right edge). Each old leaf is freed once read, so the new pages take those
 * this transaction wrote (an index built by an earlier batch of it) instead of growing the
 * file; the branches go last. It costs one pass over the index, which the inserts would have
 * paid in splits. Entries' values are empty (a non-empty one is damage). */
#define REBUILD_MIN 1024

static bool rebuild_pays(const strata_tree_t *ix, size_t n) {
    return n >= REBUILD_MIN && ix->st.count > 0 && n >= ix->st.count / 4;
}

static int rebuild_merged(strata_table_t *t, st_prop *p, strata_tree_t *ix, pending_ref *order,
                          size_t n, strata_error *err) {
    st_tree_state fresh = {0, 0, ix->st.kind, ix->st.tflags};
    st_bt_finger finger = {.leave_room = true};
    st_iter c;
    st_iter_init(&c, ix);
    const uint8_t *ok = NULL, *ov = NULL; /* the old entry at c */
    size_t okl = 0, ovl = 0;
    int rc = st_iter_first(&c, err), orc = rc, height = c.depth;
    pgno_t leaf = rc == STRATA_OK ? c.path[c.depth - 1].pgno : 0; /* the old leaf being read */
    if (rc == STRATA_OK) rc = st_iter_get(&c, &ok, &okl, &ov, &ovl, err);
    else if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    for (size_t i = 0, j; rc == STRATA_OK && (i < n || orc == STRATA_OK); i = j) {
        j = i;
        const uint8_t *r = NULL; /* the decided change at i (NULL: none left) */
        if (i < n) {
            for (j = i + 1; j < n && order[j].head == order[i].head &&
                            same_key(order[i].rec, order[j].rec); j++) {}
            r = order[j - 1].rec;
            if (!order[i].rec[2] && r[2]) continue; /* inserted, then removed: never there */
        }
        int cmp = orc != STRATA_OK ? 1
                  : !r             ? -1
                                   : st_key_cmp(STRATA_KEY_BYTES, ok, okl, r + 3, st_rd16(r));
        if (ovl) {
            rc = ST_CORRUPT(err, "index of '%s.%s': an entry has a %zu-byte value", t->name,
                            p->name, ovl);
        } else if (cmp < 0) { /* an old entry the batch leaves alone */
            j = i;
            rc = st_bt_put_near(t->txn, &fresh, &finger, ok, okl, (const uint8_t *)"", 0, err);
        } else if (r[2] && cmp > 0) {
            rc = ST_CORRUPT(err, "index of '%s.%s' lacks the entry of object %lld", t->name,
                            p->name, (long long)st_rd_be64(r + 3 + st_rd16(r) - 8));
        } else if (!r[2]) { /* an insert (replacing an equal old entry) */
            rc = st_bt_put_near(t->txn, &fresh, &finger, r + 3, st_rd16(r), (const uint8_t *)"", 0,
                                err);
        }
        if (rc == STRATA_OK && cmp <= 0) { /* the old entry was used or removed: the next */
            orc = st_iter_next(&c, err);
            if (orc == STRATA_OK && c.path[c.depth - 1].pgno != leaf) { /* done with that leaf */
                rc = st_page_free(t->txn, leaf, 1, err);
                leaf = c.path[c.depth - 1].pgno;
            }
            if (orc == STRATA_OK && rc == STRATA_OK)
                rc = st_iter_get(&c, &ok, &okl, &ov, &ovl, err);
            else if (orc != STRATA_OK && orc != STRATA_ERR_NOT_FOUND)
                rc = orc;
        }
    }
    if (rc == STRATA_OK && leaf) rc = st_page_free(t->txn, leaf, 1, err); /* the last one */
    if (rc == STRATA_OK) rc = st_bt_drop_branches(t->txn, &ix->st, height, err);
    if (rc) return st_txn_fail(t->txn, rc); /* (old and new pages half freed, half written) */
    ix->st = fresh;
    ix->dirty = true;
    ix->mod_count++;
    return STRATA_OK;
}

int st_index_apply(strata_table_t *t, st_prop *p, strata_error *err) {
    st_index_pending *q = p->pending;
    if (!q || q->n == 0) return STRATA_OK;
    p->pending = NULL; /* taken: the tree calls below must not apply it again */
    strata_tree_t *ix;
    int rc = st_prop_index_tree_raw(t, p, true, &ix, err);
    pending_ref *order = NULL;
    if (rc == STRATA_OK && (p->flags & STRATA_PROP_FULLTEXT)) {
        rc = st_fulltext_apply(t, p, ix, q->buf, q->len, q->n, err); /* it groups by word */
    } else if (rc == STRATA_OK) {
        order = malloc(q->n * sizeof *order);
        size_t n = 0;
        for (size_t off = 0; order && off < q->len; off += 3 + st_rd16(q->buf + off), n++) {
            order[n].rec = q->buf + off;
            order[n].head = st_key_head8(q->buf + off + 3, st_rd16(q->buf + off));
        }
        if (!order || !sort_pending(order, n)) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        /* the changes come in key order: most land in the last leaf */
        st_bt_finger finger = {.leave_room = true};
        if (rc == STRATA_OK && rebuild_pays(ix, n)) {
            rc = rebuild_merged(t, p, ix, order, n, err);
            n = 0; /* done */
        }
        for (size_t i = 0, j; rc == STRATA_OK && i < n; i = j) {
            /* the records are read in key order, all over the buffer: ask for them ahead */
            if (i + 8 < n) __builtin_prefetch(order[i + 8].rec);
            /* Changes of one entry: they alternate, so the last decides, and an entry inserted
             * first and removed last was never there (an object created, then given a value). */
            for (j = i + 1; j < n && order[j].head == order[i].head &&
                            same_key(order[i].rec, order[j].rec); j++) {}
            const uint8_t *r = order[j - 1].rec;
            if (!order[i].rec[2] && r[2]) continue;
            size_t kl = st_rd16(r);
            if (!r[2]) {
                rc = st_tree_put_near(ix, &finger, r + 3, kl, (const uint8_t *)"", 0, err);
            } else if ((rc = st_tree_del_near(ix, &finger, r + 3, kl, err)) == STRATA_ERR_NOT_FOUND) {
                rc = ST_CORRUPT(err, "index of '%s.%s' lacks the entry of object %lld", t->name,
                                p->name, (long long)st_rd_be64(r + 3 + kl - 8));
            }
        }
    }
    free(order);
    free(q->buf);
    free(q);
    return rc ? st_txn_fail(t->txn, rc) : STRATA_OK;
}

int st_index_insert(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                    strata_error *err) {
    if (p->flags & STRATA_PROP_FULLTEXT) return st_fulltext_queue(t, p, v, key, false, err);
    if (st_pk_is_key(p, v, key)) return STRATA_OK;
    return pending_add(t, p, v, key, false, err);
}

int st_index_remove(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                    strata_error *err) {
    if (p->flags & STRATA_PROP_FULLTEXT) return st_fulltext_queue(t, p, v, key, true, err);
    if (st_pk_is_key(p, v, key)) return STRATA_OK;
    return pending_add(t, p, v, key, true, err);
}

bool st_value_equal(const strata_value *a, const strata_value *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case STRATA_TYPE_NULL: return true;
    case STRATA_TYPE_BOOL: return a->u.b == b->u.b;
    case STRATA_TYPE_INT: return a->u.i == b->u.i;
    case STRATA_TYPE_FLOAT: return a->u.f == b->u.f;
    case STRATA_TYPE_DOUBLE: return a->u.d == b->u.d;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        return a->u.bytes.len == b->u.bytes.len &&
               (a->u.bytes.len == 0 || memcmp(a->u.bytes.data, b->u.bytes.data, a->u.bytes.len) == 0);
    case STRATA_TYPE_TIMESTAMP:
        return a->u.timestamp.seconds == b->u.timestamp.seconds &&
               a->u.timestamp.nanoseconds == b->u.timestamp.nanoseconds;
    case STRATA_TYPE_OBJECT_ID: return memcmp(a->u.object_id, b->u.object_id, 12) == 0;
    case STRATA_TYPE_UUID: return memcmp(a->u.uuid, b->u.uuid, 16) == 0;
    case STRATA_TYPE_DECIMAL128:
        return a->u.decimal.low == b->u.decimal.low && a->u.decimal.high == b->u.decimal.high;
    case STRATA_TYPE_LINK: return a->u.link == b->u.link;
    case STRATA_TYPE_TYPED_LINK:
        return a->u.typed_link.key == b->u.typed_link.key && a->u.typed_link.table == b->u.typed_link.table;
    default: return false;
    }
}

void st_value_describe(const strata_value *v, char *buf, size_t cap) {
    switch (v->type) {
    case STRATA_TYPE_NULL: snprintf(buf, cap, "null"); break;
    case STRATA_TYPE_BOOL: snprintf(buf, cap, "%s", v->u.b ? "true" : "false"); break;
    case STRATA_TYPE_INT: snprintf(buf, cap, "%lld", (long long)v->u.i); break;
    case STRATA_TYPE_FLOAT: snprintf(buf, cap, "%g", (double)v->u.f); break;
    case STRATA_TYPE_DOUBLE: snprintf(buf, cap, "%g", v->u.d); break;
    case STRATA_TYPE_STRING: {
        size_t n = v->u.bytes.len > 60 ? 60 : v->u.bytes.len;
        snprintf(buf, cap, "'%.*s'%s", (int)n, (const char *)v->u.bytes.data,
                 v->u.bytes.len > 60 ? "..." : "");
        break;
    }
    case STRATA_TYPE_BINARY: snprintf(buf, cap, "<%zu bytes>", v->u.bytes.len); break;
    case STRATA_TYPE_TIMESTAMP:
        snprintf(buf, cap, "T%lld:%d", (long long)v->u.timestamp.seconds, v->u.timestamp.nanoseconds);
        break;
    case STRATA_TYPE_OBJECT_ID:
    case STRATA_TYPE_UUID: {
        const uint8_t *b = v->type == STRATA_TYPE_UUID ? v->u.uuid : v->u.object_id;
        int n = v->type == STRATA_TYPE_UUID ? 16 : 12;
        size_t o = (size_t)snprintf(buf, cap, "%s(", v->type == STRATA_TYPE_UUID ? "uuid" : "oid");
        for (int i = 0; i < n && o + 3 < cap; i++) o += (size_t)snprintf(buf + o, cap - o, "%02x", b[i]);
        if (o + 2 < cap) snprintf(buf + o, cap - o, ")");
        break;
    }
    case STRATA_TYPE_DECIMAL128:
        snprintf(buf, cap, "decimal128(%016llx%016llx)", (unsigned long long)v->u.decimal.high,
                 (unsigned long long)v->u.decimal.low);
        break;
    case STRATA_TYPE_LINK: snprintf(buf, cap, "link(%lld)", (long long)v->u.link); break;
    case STRATA_TYPE_TYPED_LINK:
        snprintf(buf, cap, "link(table %u, %lld)", v->u.typed_link.table, (long long)v->u.typed_link.key);
        break;
    default: snprintf(buf, cap, "?"); break;
    }
}

int st_pk_direct_holder(strata_table_t *t, st_prop *p, const strata_value *v, bool *found,
                        strata_error *err) {
    *found = false;
    if (!(p->flags & ST_PROP_PK_DIRECT) || v->type != STRATA_TYPE_INT || v->u.i < 0 ||
        v->u.i >= t->next_key)
        return STRATA_OK;
    /* With the index empty every object's value is its key: being there is holding v. */
    bool by_key = st_pk_always_key(t, p);
    st_objref ref;
    strata_value cur;
    strata_error miss; /* an absent key is no error here */
    int rc = st_obj_locate_for(t, v->u.i, by_key ? ST_READS_NOTHING : p, &ref, &miss);
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK;
    if (rc) return err ? (*err = miss, rc) : rc;
    if (by_key) {
        *found = true;
        return STRATA_OK;
    }
    if ((rc = st_obj_read(t, &ref, p, &cur, err))) return rc;
    *found = st_value_equal(&cur, v);
    return STRATA_OK;
}

bool st_pk_always_key(strata_table_t *t, st_prop *p) {
    if (!(p->flags & ST_PROP_PK_DIRECT) || (p->pending && p->pending->n)) return false;
    strata_tree_t *tree;
    strata_error ignored;
    int rc = st_prop_index_tree_raw(t, p, false, &tree, &ignored);
    return rc == STRATA_ERR_NOT_FOUND || (rc == STRATA_OK && tree->st.count == 0);
}

/* st_index_find's step for index entry k: past v's entries (or after a unique key's one) sets
 * *done; an entry whose object holds v is counted in *n (and stored while cap allows). */
static int find_take(strata_table_t *t, st_prop *p, const strata_value *v, bool trunc,
                     const uint8_t *pre, size_t pl, const uint8_t *k, size_t kl, int64_t *keys,
                     size_t cap, size_t *n, bool *done, strata_error *err) {
    if (kl != pl + 8 || memcmp(k, pre, pl) != 0) {
        *done = true;
        return STRATA_OK;
    }
    int64_t key = (int64_t)st_rd_be64(k + pl);
    if (trunc) { /* the index holds a prefix: compare the whole value */
        st_objref ref;
        strata_value cur;
        int rc;
        if ((rc = st_obj_locate_for(t, key, p, &ref, err)) ||
            (rc = st_obj_read(t, &ref, p, &cur, err)))
            return rc;
        if (!st_value_equal(&cur, v)) return STRATA_OK;
    }
    if (*n < cap) keys[*n] = key;
    (*n)++;
    *done = p->flags & STRATA_PROP_PRIMARY_KEY; /* unique: no second entry */
    return STRATA_OK;
}

/* Visit every object key whose entry starts with the encoding of v. */
int st_index_find(strata_table_t *t, st_prop *p, const strata_value *v, int64_t *keys, size_t cap,
                  size_t *n, strata_error *err) {
    *n = 0;
    bool direct;
    int rc = st_pk_direct_holder(t, p, v, &direct, err);
    if (rc) return rc;
    if (direct) { /* unique: the index cannot hold the value too */
        if (cap) keys[0] = v->u.i;
        *n = 1;
        return STRATA_OK;
    }
    strata_tree_t *ix;
    rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK;
    if (rc) return rc;
    uint8_t pre[STRATA_MAX_KEY];
    bool trunc;
    size_t pl = encode_value(v, pre, &trunc, p->type == STRATA_TYPE_MIXED);
    /* Most values' entries end inside one leaf: walk it without a cursor. */
    const uint8_t *leaf;
    pgno_t leaf_pg;
    int i, count;
    rc = st_bt_leaf_for(ix, pre, pl, &leaf, &leaf_pg, &i, &count, err);
    if (rc) return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
    for (bool done = false; i < count; i++) {
        st_leaf_cell cell;
        if ((rc = st_leaf_cell_at(leaf, leaf_pg, i, &cell, err)) ||
            (rc = find_take(t, p, v, trunc, pre, pl, cell.key, cell.klen, keys, cap, n, &done,
                            err)))
            return rc;
        if (done) return STRATA_OK;
    }
    /* They run on into the next leaf: start over with a cursor. */
    *n = 0;
    st_iter c;
    st_iter_init(&c, ix);
    for (rc = st_iter_seek(&c, pre, pl, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *k;
        size_t kl;
        bool done = false;
        if ((rc = st_iter_get(&c, &k, &kl, NULL, NULL, err)) ||
            (rc = find_take(t, p, v, trunc, pre, pl, k, kl, keys, cap, n, &done, err)))
            return rc;
        if (done) break;
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* ------------------------------------------------------------------ ranges and prefixes */

int st_value_cmp(const strata_value *a, const strata_value *b) {
    if (a->type != b->type) return (a->type > b->type) - (a->type < b->type);
    switch (a->type) {
    case STRATA_TYPE_BOOL: return (a->u.b > b->u.b) - (a->u.b < b->u.b);
    case STRATA_TYPE_INT: return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    case STRATA_TYPE_TIMESTAMP:
        if (a->u.timestamp.seconds != b->u.timestamp.seconds)
            return a->u.timestamp.seconds < b->u.timestamp.seconds ? -1 : 1;
        return (a->u.timestamp.nanoseconds > b->u.timestamp.nanoseconds) -
               (a->u.timestamp.nanoseconds < b->u.timestamp.nanoseconds);
    case STRATA_TYPE_OBJECT_ID: return memcmp(a->u.object_id, b->u.object_id, 12);
    case STRATA_TYPE_UUID: return memcmp(a->u.uuid, b->u.uuid, 16);
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY: return st_bytes_cmp(a->u.bytes.data, a->u.bytes.len, b->u.bytes.data, b->u.bytes.len);
    default: return 0;
    }
}

static bool starts_with(const strata_value *v, const strata_value *prefix) {
    return v->u.bytes.len >= prefix->u.bytes.len &&
           memcmp(v->u.bytes.data, prefix->u.bytes.data, prefix->u.bytes.len) == 0;
}

int st_index_scan(strata_table_t *t, st_prop *p, const st_index_bounds *b, st_index_visit visit,
                  void *arg, strata_error *err) {
    strata_tree_t *ix;
    int rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK;
    if (rc) return rc;
    uint8_t start[STRATA_MAX_KEY], lo[STRATA_MAX_KEY], hi[STRATA_MAX_KEY], pre[STRATA_MAX_KEY];
    size_t start_len, lo_len = 0, hi_len = 0, pre_len = 0;
    bool lo_trunc = false, hi_trunc = false, pre_long = false;
    if (b->prefix) {
        /* 0x01 + the escaped prefix, without the terminator */
        strata_value cut = *b->prefix;
        if (cut.u.bytes.len > ST_INDEX_PREFIX) cut.u.bytes.len = ST_INDEX_PREFIX, pre_long = true;
        bool tr;
        pre_len = encode_value(&cut, pre, &tr, p->type == STRATA_TYPE_MIXED) - 2;
        memcpy(start, pre, pre_len);
        start_len = pre_len;
    } else {
        if (b->lo) lo_len = encode_value(b->lo, lo, &lo_trunc, p->type == STRATA_TYPE_MIXED);
        if (b->hi) hi_len = encode_value(b->hi, hi, &hi_trunc, p->type == STRATA_TYPE_MIXED);
        if (b->lo) {
            memcpy(start, lo, lo_len);
            start_len = lo_len;
        } else { /* from the first non-null value (or the very first) */
            start[0] = 1;
            start_len = b->with_nulls ? 0 : 1;
        }
    }
    st_iter c;
    st_iter_init(&c, ix);
    for (rc = st_iter_seek(&c, start, start_len, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *k;
        size_t kl;
        if ((rc = st_iter_get(&c, &k, &kl, NULL, NULL, err))) return rc;
        if (kl < 9) return ST_CORRUPT(err, "index of '%s.%s': a %zu-byte entry", t->name, p->name, kl);
        size_t vl = kl - 8;
        int64_t key = (int64_t)st_rd_be64(k + vl);
        bool entry_trunc = p->type == STRATA_TYPE_STRING && vl >= 3 && k[vl - 2] == 0 && k[vl - 1] == 2;
        bool check_value = entry_trunc || lo_trunc || hi_trunc || pre_long;
        if (entry_trunc && b->saw_truncated) *b->saw_truncated = true;
        if (b->prefix) {
            if (vl < pre_len || memcmp(k, pre, pre_len) != 0) break;
        } else {
            if (k[0] == 0 && !(b->with_nulls && !b->lo && !b->hi)) continue; /* null */
            if (b->hi && !check_value) {
                int ch = st_bytes_cmp(k, vl, hi, hi_len);
                if (ch > 0 || (ch == 0 && !b->hi_incl)) break;
            }
            if (b->lo && !b->lo_incl && !check_value && st_bytes_cmp(k, vl, lo, lo_len) == 0) continue;
        }
        if (check_value) { /* prefixes of long strings: decide on the stored value */
            st_objref ref;
            strata_value cur;
            if ((rc = st_obj_locate_for(t, key, p, &ref, err)) ||
                (rc = st_obj_read(t, &ref, p, &cur, err)))
                return rc;
            if (b->prefix) {
                if (!starts_with(&cur, b->prefix)) continue;
            } else {
                if (b->lo) {
                    int cl = st_value_cmp(&cur, b->lo);
                    if (cl < 0 || (cl == 0 && !b->lo_incl)) continue;
                }
                if (b->hi) {
                    int ch = st_value_cmp(&cur, b->hi);
                    if (ch > 0 || (ch == 0 && !b->hi_incl)) {
                        /* past hi for good once the entry's prefix is past hi's */
                        if (st_bytes_cmp(k, vl, hi, hi_len) > 0) break;
                        continue;
                    }
                }
            }
        }
        if ((rc = visit(arg, key))) return rc;
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* ------------------------------------------------------------------ building */

typedef struct ientry {
    uint8_t *key;
    size_t len;
    bool trunc;
    bool direct;             /* the object's key is its direct primary key: no entry */
    int64_t obj;
} ientry;

static int ientry_cmp(const void *a, const void *b) {
    const ientry *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->key, y->key, n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

int st_index_build(strata_table_t *t, st_prop *p, bool unique, strata_error *err) {
    size_t cap = t->count + 1, n = 0;
    ientry *e = calloc(cap, sizeof *e);
    if (!e) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    int rc;
    int64_t key = -1;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        st_objref ref;
        strata_value v;
        if ((rc = st_obj_locate(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &v, err))) break;
        if (n == cap) {
            rc = ST_CORRUPT(err, "table '%s' holds more objects than its count %llu", t->name,
                            (unsigned long long)t->count);
            break;
        }
        uint8_t k[STRATA_MAX_KEY];
        size_t kl;
        st_index_key(p, &v, key, k, &kl, &e[n].trunc);
        e[n].key = malloc(kl);
        if (!e[n].key) {
            rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
            break;
        }
        memcpy(e[n].key, k, kl);
        e[n].len = kl;
        e[n].direct = st_pk_is_key(p, &v, key);
        e[n].obj = key;
        n++;
    }
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    if (rc == STRATA_OK && n) qsort(e, n, sizeof *e, ientry_cmp);
    /* Unique: no two entries may share their value part. */
    for (size_t i = 1; rc == STRATA_OK && unique && i < n; i++) {
        if (e[i].len != e[i - 1].len || memcmp(e[i].key, e[i - 1].key, e[i].len - 8) != 0) continue;
        strata_value a, b;
        st_objref ra, rb;
        if ((rc = st_obj_locate(t, e[i - 1].obj, &ra, err)) || (rc = st_obj_read(t, &ra, p, &a, err)))
            break;
        if ((rc = st_obj_locate(t, e[i].obj, &rb, err)) || (rc = st_obj_read(t, &rb, p, &b, err)))
            break;
        if (!e[i].trunc || st_value_equal(&a, &b)) {
            char d[100];
            st_value_describe(&a, d, sizeof d);
            rc = st_err(err, STRATA_ERR_EXISTS,
                        "Primary key property '%s.%s' has duplicate values: objects %lld and "
                        "%lld share the value %s", t->name, p->name, (long long)e[i - 1].obj,
                        (long long)e[i].obj, d);
        }
    }
    strata_tree_t *ix = NULL;
    if (rc == STRATA_OK && !(p->flags & STRATA_PROP_INDEXED)) {
        rc = st_prop_index_tree(t, p, true, &ix, err);
        for (size_t i = 0; rc == STRATA_OK && i < n; i++)
            if (!e[i].direct) rc = st_tree_put(ix, e[i].key, e[i].len, (const uint8_t *)"", 0, err);
        if (rc) st_txn_fail(t->txn, rc);
    }
    for (size_t i = 0; i < n; i++) free(e[i].key);
    free(e);
    return rc;
}

/* ------------------------------------------------------------------ schema operations */

int st_set_indexed(strata_table_t *t, uint32_t col, bool on, strata_error *err) {
    st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", t->name, col);
    if (on == !!(p->flags & STRATA_PROP_INDEXED)) return STRATA_OK;
    if (on && (p->flags & STRATA_PROP_FULLTEXT))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "property '%s.%s' has a full-text index: remove it before adding an index",
                      t->name, p->name);
    if (on) {
        if ((p->flags & STRATA_PROP_LIST) || !st_type_indexable(p->type))
            return st_err(err, STRATA_ERR_WRONG_TYPE, "property '%s.%s': a %s%s cannot be indexed",
                          t->name, p->name, (p->flags & STRATA_PROP_LIST) ? "list of " : "",
                          st_type_name(p->type));
        int rc = st_index_build(t, p, false, err);
        if (rc) return rc;
        p->flags |= STRATA_PROP_INDEXED;
        t->dirty = true;
        return STRATA_OK;
    }
    if (p->flags & STRATA_PROP_PRIMARY_KEY)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "'%s.%s' is the primary key: its index cannot be removed", t->name, p->name);
    int rc = st_index_drop(t, p, err);
    if (rc) return rc;
    p->flags &= (uint8_t)~STRATA_PROP_INDEXED;
    t->dirty = true;
    return STRATA_OK;
}

int st_index_drop(strata_table_t *t, st_prop *p, strata_error *err) {
    strata_tree_t *ix;
    st_index_discard(p);
    int rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc == STRATA_OK) rc = st_tree_drop(t->txn, ix, err);
    return rc && rc != STRATA_ERR_NOT_FOUND ? st_txn_fail(t->txn, rc) : STRATA_OK;
}

/* Queue adding (add) or removing the entries of the objects whose key equals their value of p:
 * a direct primary key's index becomes complete, or a complete one becomes direct. */
static int direct_entries(strata_table_t *t, st_prop *p, bool add, strata_error *err) {
    int rc;
    int64_t key = -1;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        st_objref ref;
        strata_value v;
        if ((rc = st_obj_locate(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &v, err)) ||
            (v.type == STRATA_TYPE_INT && v.u.i == key && (rc = pending_add(t, p, &v, key, !add, err))))
            break;
    }
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    return rc ? st_txn_fail(t->txn, rc) : STRATA_OK;
}

/* p stops being the primary key; it stays indexed, so a direct index is completed. */
static int pk_release(strata_table_t *t, st_prop *p, strata_error *err) {
    if (p->flags & ST_PROP_PK_DIRECT) {
        p->flags &= (uint8_t)~ST_PROP_PK_DIRECT;
        int rc = direct_entries(t, p, true, err);
        if (rc) return rc;
    }
    p->flags &= (uint8_t)~STRATA_PROP_PRIMARY_KEY;
    t->pk_col = 0;
    t->dirty = true;
    return STRATA_OK;
}

int st_set_primary_key(strata_table_t *t, uint32_t col, strata_error *err) {
    st_prop *old = t->pk_col ? st_prop_find(t, t->pk_col) : NULL;
    if (col == STRATA_NO_COL) {
        if (old) return pk_release(t, old, err);
        t->pk_col = 0;
        return STRATA_OK;
    }
    st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", t->name, col);
    if (p == old) return STRATA_OK;
    if (st_table_embedded(t))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "'%s.%s' cannot be the primary key: '%s' is embedded", t->name, p->name, t->name);
    if ((p->flags & STRATA_PROP_LIST) || !st_pk_type_ok(p->type))
        return st_err(err, STRATA_ERR_WRONG_TYPE,
                      "'%s.%s' cannot be the primary key: a %s%s (int, string, objectId or uuid "
                      "only)", t->name, p->name, (p->flags & STRATA_PROP_LIST) ? "list of " : "",
                      st_type_name(p->type));
    /* The duplicate check runs before anything changes. An integer key becomes direct: a new
     * index leaves out the objects whose key is their value; an existing one loses them. */
    bool direct = p->type == STRATA_TYPE_INT, had_index = p->flags & STRATA_PROP_INDEXED;
    if (direct) p->flags |= ST_PROP_PK_DIRECT;
    int rc = st_index_build(t, p, true, err);
    if (rc) {
        p->flags &= (uint8_t)~ST_PROP_PK_DIRECT;
        return rc;
    }
    if (direct && had_index && (rc = direct_entries(t, p, false, err))) return rc;
    if (old && (rc = pk_release(t, old, err))) return rc;
    p->flags |= STRATA_PROP_PRIMARY_KEY | STRATA_PROP_INDEXED;
    t->pk_col = p->id;
    t->dirty = true;
    return STRATA_OK;
}
