/*
 * object.c — what keeps the object graph consistent: value checks, create, set, delete (with
 * its cascade to indexes, links, lists and backlinks), lists, and removing a property.
 *
 * Backlinks of table T live in the byte-key tree "$t<T>.b":
 *   key   = BE u64 target object key | BE u32 origin table id | BE u32 origin property id |
 *           BE u64 origin object key
 *   value = u32 how many times the origin property of that object links to the target
 * Lists of table T live in the integer-key tree "$t<T>.l", under the list id that the list
 * property's column holds (0 = empty list, no entry):
 *   value = u32 count | count × element | owner;
 *           element = u8 type tag (0 = null) + payload: bool 1 byte, int and link 8, fixed types
 *           their fixed size (column.c), string and binary u32 length + bytes;
 *           owner (since 0.7.0) = u64 object key | u32 property id | u32 ST_LIST_OWNER_MAGIC:
 *           the object and property holding the list, so that a change of the list tree names
 *           its object (changes.c). Readers stop after `count` elements (older libraries too);
 *           lists written before 0.7.0 have no owner.
 *   A map (STRATA_PROP_MAP, since format 7) is stored the same way with its keys between the
 *   elements and the owner: count | count × element (the values) | count × (u32 length +
 *   UTF-8 bytes) (the keys, ascending by bytes, unique) | owner. Its values read as a list (in
 *   key order) by every reader of lists; map.c reads and writes the keys with them.
 *
 * Invariants: for every link (to-one or in a list) from (O, p, o) to (T, k) the backlink entry
 * (k, O, p, o) counts the occurrences; links only point at live objects of their target table;
 * a list id is used by exactly one object's property. A change is checked completely before
 * anything is written; a failure after that fails the transaction (it can only be aborted), so
 * no half-applied change can be committed.
 */
#include "objects/private.h"

#include <stdio.h>
#include <stdlib.h>


/* ------------------------------------------------------------------ checks */

static bool utf8_valid(const uint8_t *s, size_t n) {
    size_t i = 0;
    while (i < n) {
        uint8_t c = s[i];
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t len;
        uint32_t cp;
        if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F;
        else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F;
        else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07;
        else return false;
        if (n - i < len) return false;
        for (size_t j = 1; j < len; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return false;
            cp = cp << 6 | (s[i + j] & 0x3F);
        }
        if ((len == 2 && cp < 0x80) || (len == 3 && cp < 0x800) || (len == 4 && cp < 0x10000) ||
            cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return false;
        i += len;
    }
    return true;
}

int st_value_shape(const strata_value *v, const char *what, strata_error *err) {
    if (!v) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: the value is NULL", what);
    switch (v->type) {
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        if (!v->u.bytes.data && v->u.bytes.len)
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: %zu bytes at NULL", what,
                          v->u.bytes.len);
        if (v->u.bytes.len > STRATA_MAX_BYTES)
            return st_err(err, STRATA_ERR_TOO_LARGE, "%s: a value of %zu bytes (at most %u)", what,
                          v->u.bytes.len, STRATA_MAX_BYTES);
        if (v->type == STRATA_TYPE_STRING && v->u.bytes.len &&
            !utf8_valid(v->u.bytes.data, v->u.bytes.len))
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: the string is not valid UTF-8", what);
        return STRATA_OK;
    case STRATA_TYPE_TIMESTAMP:
        if (v->u.timestamp.nanoseconds <= -1000000000 || v->u.timestamp.nanoseconds >= 1000000000)
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: %d nanoseconds is out of range",
                          what, v->u.timestamp.nanoseconds);
        return STRATA_OK;
    case STRATA_TYPE_LIST:
        if (!v->u.list.items && v->u.list.count)
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: a list of %zu values at NULL", what,
                          v->u.list.count);
        for (size_t i = 0; i < v->u.list.count; i++) {
            if (v->u.list.items[i].type != STRATA_TYPE_LIST &&
                st_value_shape(&v->u.list.items[i], "", err) == STRATA_OK)
                continue; /* (named only when it is wrong: IN lists can be long) */
            char item[160];
            snprintf(item, sizeof item, "%s, list item %zu", what, i);
            if (v->u.list.items[i].type == STRATA_TYPE_LIST)
                return st_err(err, STRATA_ERR_WRONG_TYPE, "%s: a list inside a list", item);
            int rc = st_value_shape(&v->u.list.items[i], item, err);
            if (rc) return rc;
        }
        return STRATA_OK;
    case STRATA_TYPE_GEO:
        if (!v->u.geo.shape)
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: a region (geo) at NULL", what);
        return STRATA_OK;
    default:
        if ((unsigned)v->type > STRATA_TYPE_GEO)
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: unknown value type %d", what,
                          (int)v->type);
        return STRATA_OK;
    }
}

int st_value_check(strata_table_t *t, const st_prop *p, const strata_value *v, bool element,
                   strata_value *norm, strata_error *err) {
    /* checked first without naming the property (formatting the name for every value cost more
     * than the check); a value that fails is checked again to say where */
    if (st_value_shape(v, "", err) != STRATA_OK || v->type == STRATA_TYPE_LIST) {
        char what[2 * STRATA_MAX_NAME + 8];
        snprintf(what, sizeof what, "'%s.%s'", t->name, p->name);
        int rc = st_value_shape(v, what, err);
        if (rc) return rc;
        return st_err(err, STRATA_ERR_WRONG_TYPE, "%s: a list is only a query argument", what);
    }
    *norm = *v;
    if (v->type == STRATA_TYPE_BOOL) norm->u.b = st_bool_of(v);
    if (v->type == STRATA_TYPE_NULL) {
        bool ok = (p->flags & STRATA_PROP_NULLABLE) || (!element && p->type == STRATA_TYPE_LINK) ||
                  p->type == STRATA_TYPE_MIXED;
        if (!ok)
            return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is not nullable: null given", t->name,
                          p->name);
        return STRATA_OK;
    }
    strata_type want = (strata_type)p->type;
    if (want == STRATA_TYPE_MIXED) {
        if (v->type == STRATA_TYPE_LINK || v->type == STRATA_TYPE_MIXED || v->type == STRATA_TYPE_LIST ||
            v->type < STRATA_TYPE_NULL || v->type > STRATA_TYPE_TYPED_LINK)
            return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is mixed: it cannot hold a %s",
                          t->name, p->name, st_type_name(v->type));
    } else if (v->type != want) {
        if (v->type == STRATA_TYPE_INT && want == STRATA_TYPE_DOUBLE) {
            norm->type = STRATA_TYPE_DOUBLE;
            norm->u.d = (double)v->u.i;
        } else if (v->type == STRATA_TYPE_INT && want == STRATA_TYPE_FLOAT) {
            norm->type = STRATA_TYPE_FLOAT;
            norm->u.f = (float)v->u.i;
        } else if (v->type == STRATA_TYPE_FLOAT && want == STRATA_TYPE_DOUBLE) {
            norm->type = STRATA_TYPE_DOUBLE;
            norm->u.d = v->u.f;
        } else {
            return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' holds %s%s: a %s was given",
                          t->name, p->name, (p->flags & STRATA_PROP_LIST) ? "a list of " : "",
                          st_type_name(want), st_type_name(v->type));
        }
    }
    switch (norm->type) {
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        if (!norm->u.bytes.data) norm->u.bytes.data = "";
        break;
    case STRATA_TYPE_TYPED_LINK: { /* a mixed value's link: a live object of a top-level table */
        strata_table_t *target = st_table_by_id(t->store, norm->u.typed_link.table);
        if (!target)
            return st_err(err, STRATA_ERR_NOT_FOUND, "'%s.%s': a link to table id %u, which does not exist",
                          t->name, p->name, norm->u.typed_link.table);
        if (st_table_embedded(target))
            return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is mixed: it cannot link to an object of "
                          "the embedded table '%s'", t->name, p->name, target->name);
        st_objref ref;
        strata_error e2;
        int rc = st_obj_locate(target, norm->u.typed_link.key, &ref, &e2);
        if (rc == STRATA_ERR_NOT_FOUND)
            return st_err(err, STRATA_ERR_NOT_FOUND, "'%s.%s' links to '%s': object %lld does not exist there",
                          t->name, p->name, target->name, (long long)norm->u.typed_link.key);
        if (rc) {
            *err = e2;
            return rc;
        }
        break;
    }
    case STRATA_TYPE_LINK: {
        strata_table_t *target = st_table_by_id(t->store, p->target);
        if (!target) return ST_CORRUPT(err, "'%s.%s' links to a missing table", t->name, p->name);
        st_objref ref;
        strata_error e2;
        int rc = st_obj_locate(target, norm->u.link, &ref, &e2);
        if (rc == STRATA_ERR_NOT_FOUND)
            return st_err(err, STRATA_ERR_NOT_FOUND,
                          "'%s.%s' links to '%s': object %lld does not exist there", t->name,
                          p->name, target->name, (long long)norm->u.link);
        if (rc) {
            *err = e2;
            return rc;
        }
        break;
    }
    default: break;
    }
    return STRATA_OK;
}

/* ------------------------------------------------------------------ backlinks */

static void backlink_key(uint8_t k[24], int64_t tkey, uint32_t otable, uint32_t ocol, int64_t okey) {
    st_wr_be64(k, (uint64_t)tkey);
    st_wr_be32(k + 8, otable);
    st_wr_be32(k + 12, ocol);
    st_wr_be64(k + 16, (uint64_t)okey);
}

int st_backlink_add(strata_table_t *target, int64_t tkey, uint32_t otable, uint32_t ocol,
                    int64_t okey, int delta, strata_error *err) {
    strata_tree_t *bt;
    int rc = st_table_tree(target, ST_TABLE_BACKLINKS, true, &bt, err);
    if (rc) return rc;
    uint8_t k[24];
    backlink_key(k, tkey, otable, ocol, okey);
    const uint8_t *v;
    size_t vl;
    int64_t count = 0;
    rc = st_bt_get(target->txn, &bt->st, k, 24, &v, &vl, err);
    if (rc == STRATA_OK) {
        if (vl != 4) return ST_CORRUPT(err, "backlink of '%s' object %lld: %zu-byte count",
                                       target->name, (long long)tkey, vl);
        count = st_rd32(v);
    } else if (rc != STRATA_ERR_NOT_FOUND) {
        return rc;
    }
    count += delta;
    if (count < 0)
        return ST_CORRUPT(err, "backlinks of '%s' object %lld: count below zero", target->name,
                          (long long)tkey);
    if (count == 0) {
        rc = st_tree_del(bt, k, 24, err);
        /* an embedded object whose parent let go of it goes too */
        return rc == STRATA_OK && delta < 0 ? st_embedded_orphaned(target, tkey, err) : rc;
    }
    uint8_t cv[4];
    st_wr32(cv, (uint32_t)count);
    return st_tree_put(bt, k, 24, cv, 4, err);
}

int st_backlink_of(strata_table_t *t, const st_prop *p, const strata_value *v, int64_t okey,
                   int delta, strata_error *err) {
    int64_t k;
    strata_table_t *target = st_link_target(t, p, v, &k);
    if (!target && v->type == STRATA_TYPE_TYPED_LINK)
        return ST_CORRUPT(err, "'%s.%s' of object %lld links to table id %u, which does not exist", t->name,
                          p->name, (long long)okey, v->u.typed_link.table);
    return target ? st_backlink_add(target, k, t->id, p->id, okey, delta, err) : STRATA_OK;
}

typedef struct backlink {
    uint32_t table, col;
    int64_t key;
    uint32_t count;
} backlink;

/* Every backlink entry of object key whose key starts with prefix (8, 12 or 16 bytes). */
static int backlinks_collect(strata_table_t *t, const uint8_t *prefix, size_t plen, backlink **out,
                             size_t *n, strata_error *err) {
    *out = NULL;
    *n = 0;
    strata_tree_t *bt;
    int rc = st_table_tree_existing(t, ST_TABLE_BACKLINKS, &bt, err);
    if (rc || !bt) return rc;
    st_iter c;
    st_iter_init(&c, bt);
    size_t cap = 0;
    for (rc = st_iter_seek(&c, prefix, plen, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, err))) break;
        if (kl != 24 || memcmp(k, prefix, plen) != 0) break;
        if (vl != 4) {
            rc = ST_CORRUPT(err, "backlinks of '%s': %zu-byte count", t->name, vl);
            break;
        }
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            backlink *g = realloc(*out, cap * sizeof *g);
            if (!g) {
                rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
                break;
            }
            *out = g;
        }
        (*out)[(*n)++] = (backlink){st_rd_be32(k + 8), st_rd_be32(k + 12), (int64_t)st_rd_be64(k + 16), st_rd32(v)};
    }
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    if (rc) {
        free(*out);
        *out = NULL;
        *n = 0;
    }
    return rc;
}

int st_backlinks_list(strata_table_t *t, int64_t key, strata_table_t *origin, uint32_t col,
                      int64_t *keys, size_t cap, size_t *count, strata_error *err) {
    uint8_t pre[16];
    st_wr_be64(pre, (uint64_t)key);
    st_wr_be32(pre + 8, origin->id);
    st_wr_be32(pre + 12, col);
    backlink *b;
    size_t n;
    int rc = backlinks_collect(t, pre, 16, &b, &n, err);
    if (rc) return rc;
    for (size_t i = 0; i < n && i < cap; i++) keys[i] = b[i].key;
    *count = n;
    free(b);
    return STRATA_OK;
}

/* ------------------------------------------------------------------ lists */

static size_t elem_size(const strata_value *v) {
    switch (v->type) {
    case STRATA_TYPE_NULL: return 1;
    case STRATA_TYPE_BOOL: return 2;
    case STRATA_TYPE_INT:
    case STRATA_TYPE_LINK: return 9;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY: return 5 + v->u.bytes.len;
    default: return 1 + st_type_fixed_size((uint8_t)v->type);
    }
}

static size_t elem_put(const strata_value *v, uint8_t *o) {
    o[0] = (uint8_t)v->type;
    switch (v->type) {
    case STRATA_TYPE_NULL: return 1;
    case STRATA_TYPE_BOOL: o[1] = v->u.b; return 2;
    case STRATA_TYPE_INT: st_wr64(o + 1, (uint64_t)v->u.i); return 9;
    case STRATA_TYPE_LINK: st_wr64(o + 1, (uint64_t)v->u.link); return 9;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        st_wr32(o + 1, (uint32_t)v->u.bytes.len);
        if (v->u.bytes.len) memcpy(o + 5, v->u.bytes.data, v->u.bytes.len);
        return 5 + v->u.bytes.len;
    case STRATA_TYPE_FLOAT: memcpy(o + 1, &v->u.f, 4); return 5;
    case STRATA_TYPE_DOUBLE: memcpy(o + 1, &v->u.d, 8); return 9;
    case STRATA_TYPE_TIMESTAMP:
        st_wr64(o + 1, (uint64_t)v->u.timestamp.seconds);
        st_wr32(o + 9, (uint32_t)v->u.timestamp.nanoseconds);
        return 13;
    case STRATA_TYPE_OBJECT_ID: memcpy(o + 1, v->u.object_id, 12); return 13;
    case STRATA_TYPE_UUID: memcpy(o + 1, v->u.uuid, 16); return 17;
    case STRATA_TYPE_DECIMAL128:
        st_wr64(o + 1, v->u.decimal.low);
        st_wr64(o + 9, v->u.decimal.high);
        return 17;
    case STRATA_TYPE_TYPED_LINK:
        st_wr32(o + 1, v->u.typed_link.table);
        st_wr64(o + 5, (uint64_t)v->u.typed_link.key);
        return 13;
    default: return 1;
    }
}

static int elem_get(const strata_table_t *t, const st_prop *p, const uint8_t *b, size_t len,
                    size_t *used, strata_value *v, strata_error *err) {
    memset(v, 0, sizeof *v);
    if (len < 1) goto bad;
    uint8_t tag = b[0];
    v->type = (strata_type)tag;
    size_t need;
    switch (tag) {
    case STRATA_TYPE_NULL: need = 1; break;
    case STRATA_TYPE_BOOL: need = 2; break;
    case STRATA_TYPE_INT:
    case STRATA_TYPE_LINK: need = 9; break;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        if (len < 5) goto bad;
        need = 5 + (size_t)st_rd32(b + 1);
        break;
    default:
        need = 1 + st_type_fixed_size(tag);
        if (need == 1) goto bad;
    }
    if (len < need || (tag != STRATA_TYPE_NULL && p->type != STRATA_TYPE_MIXED && tag != p->type))
        goto bad;
    switch (tag) {
    case STRATA_TYPE_BOOL: v->u.b = b[1] != 0; break;
    case STRATA_TYPE_INT: v->u.i = (int64_t)st_rd64(b + 1); break;
    case STRATA_TYPE_LINK: v->u.link = (int64_t)st_rd64(b + 1); break;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        v->u.bytes.data = b + 5;
        v->u.bytes.len = need - 5;
        break;
    case STRATA_TYPE_FLOAT: memcpy(&v->u.f, b + 1, 4); break;
    case STRATA_TYPE_DOUBLE: memcpy(&v->u.d, b + 1, 8); break;
    case STRATA_TYPE_TIMESTAMP:
        v->u.timestamp.seconds = (int64_t)st_rd64(b + 1);
        v->u.timestamp.nanoseconds = (int32_t)st_rd32(b + 9);
        break;
    case STRATA_TYPE_OBJECT_ID: memcpy(v->u.object_id, b + 1, 12); break;
    case STRATA_TYPE_UUID: memcpy(v->u.uuid, b + 1, 16); break;
    case STRATA_TYPE_DECIMAL128:
        v->u.decimal.low = st_rd64(b + 1);
        v->u.decimal.high = st_rd64(b + 9);
        break;
    case STRATA_TYPE_TYPED_LINK:
        v->u.typed_link.table = st_rd32(b + 1);
        v->u.typed_link.key = (strata_key_t)st_rd64(b + 5);
        break;
    default: break;
    }
    *used = need;
    return STRATA_OK;
bad:
    return ST_CORRUPT(err, "list of '%s.%s': malformed element", t->name, p->name);
}

/* The elements of a list (pointing into the tree: valid until the list tree changes), and for a
 * map (keys not NULL) its keys as STRING values. */
int st_list_load_keyed(strata_table_t *t, const st_prop *p, uint64_t list_id, strata_value **vals,
                       strata_value **keys, size_t *n, strata_error *err) {
    *vals = NULL;
    if (keys) *keys = NULL;
    *n = 0;
    if (!list_id) return STRATA_OK;
    strata_tree_t *lt;
    int rc = st_table_tree(t, ST_TABLE_LISTS, false, &lt, err);
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_ERR_CORRUPT;
    const uint8_t *b;
    size_t len;
    uint8_t k[8];
    st_wr64(k, list_id);
    if (rc == STRATA_OK) rc = st_bt_get(t->txn, &lt->st, k, 8, &b, &len, err);
    if (rc == STRATA_ERR_NOT_FOUND || rc == STRATA_ERR_CORRUPT)
        return ST_CORRUPT(err, "'%s.%s': list %llu is missing", t->name, p->name,
                          (unsigned long long)list_id);
    if (rc) return rc;
    if (len < 4) return ST_CORRUPT(err, "'%s.%s': list %llu is malformed", t->name, p->name,
                                   (unsigned long long)list_id);
    uint32_t count = st_rd32(b);
    if (count > len) return ST_CORRUPT(err, "'%s.%s': list %llu claims %u elements in %zu bytes",
                                       t->name, p->name, (unsigned long long)list_id, count, len);
    strata_value *v = calloc(count ? count : 1, sizeof *v);
    strata_value *kv = keys ? calloc(count ? count : 1, sizeof *kv) : NULL;
    if (!v || (keys && !kv)) {
        free(v);
        free(kv);
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    }
    size_t off = 4;
    for (uint32_t i = 0; rc == STRATA_OK && i < count; i++) {
        size_t used = 0;
        if ((rc = elem_get(t, p, b + off, len - off, &used, &v[i], err))) break;
        off += used;
    }
    for (uint32_t i = 0; rc == STRATA_OK && kv && i < count; i++) {
        size_t kl = len - off >= 4 ? st_rd32(b + off) : SIZE_MAX;
        if (kl > len - off - 4 || (i && st_map_key_cmp(&kv[i - 1], b + off + 4, kl) >= 0)) {
            rc = ST_CORRUPT(err, "'%s.%s': map %llu has a malformed or misordered key %u", t->name,
                            p->name, (unsigned long long)list_id, i);
            break;
        }
        kv[i] = (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {b + off + 4, kl}};
        off += 4 + kl;
    }
    if (rc) {
        free(v);
        free(kv);
        return rc;
    }
    *vals = v;
    if (keys) *keys = kv;
    *n = count;
    return STRATA_OK;
}

int st_list_load(strata_table_t *t, const st_prop *p, uint64_t list_id, strata_value **vals,
                 size_t *n, strata_error *err) {
    return st_list_load_keyed(t, p, list_id, vals, NULL, n, err);
}

int st_map_key_cmp(const strata_value *a, const void *b, size_t blen) {
    return st_bytes_cmp(a->u.bytes.data, a->u.bytes.len, b, blen);
}

bool st_list_owner(const uint8_t *b, size_t len, int64_t *key, uint32_t *col) {
    if (len < 4 + ST_LIST_OWNER_SIZE || st_rd32(b + len - 4) != ST_LIST_OWNER_MAGIC) return false;
    *key = (int64_t)st_rd64(b + len - ST_LIST_OWNER_SIZE);
    *col = st_rd32(b + len - 8);
    return true;
}

static int list_store(strata_table_t *t, int64_t owner, uint32_t col, uint64_t list_id,
                      const strata_value *v, const strata_value *keys, size_t n, strata_error *err) {
    strata_tree_t *lt;
    int rc = st_table_tree(t, ST_TABLE_LISTS, true, &lt, err);
    if (rc) return rc;
    uint8_t k[8];
    st_wr64(k, list_id);
    if (n == 0) {
        rc = st_tree_del(lt, k, 8, err);
        return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
    }
    size_t len = 4 + ST_LIST_OWNER_SIZE;
    for (size_t i = 0; i < n; i++) len += elem_size(&v[i]) + (keys ? 4 + keys[i].u.bytes.len : 0);
    if (len > STRATA_MAX_VALUE) return st_err(err, STRATA_ERR_TOO_LARGE, "a list of %zu bytes", len);
    uint8_t *buf = malloc(len);
    if (!buf) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    st_wr32(buf, (uint32_t)n);
    size_t off = 4;
    for (size_t i = 0; i < n; i++) off += elem_put(&v[i], buf + off);
    for (size_t i = 0; keys && i < n; i++) {
        st_wr32(buf + off, (uint32_t)keys[i].u.bytes.len);
        if (keys[i].u.bytes.len) memcpy(buf + off + 4, keys[i].u.bytes.data, keys[i].u.bytes.len);
        off += 4 + keys[i].u.bytes.len;
    }
    st_wr64(buf + off, (uint64_t)owner);
    st_wr32(buf + off + 8, col);
    st_wr32(buf + off + 12, ST_LIST_OWNER_MAGIC);
    rc = st_tree_put(lt, k, 8, buf, len, err);
    free(buf);
    return rc;
}

int st_list_free_storage(strata_table_t *t, const st_prop *p, uint64_t list_id, int64_t okey,
                         strata_error *err) {
    if (!list_id) return STRATA_OK;
    if (st_prop_links(p)) {
        strata_value *v;
        size_t n;
        int rc = st_list_load(t, p, list_id, &v, &n, err);
        if (rc) return rc;
        for (size_t i = 0; rc == STRATA_OK && i < n; i++) rc = st_backlink_of(t, p, &v[i], okey, -1, err);
        free(v);
        if (rc) return rc;
    }
    return list_store(t, okey, p->id, list_id, NULL, NULL, 0, err);
}

static int read_prop(strata_table_t *t, int64_t key, const st_prop *p, strata_value *v,
                     strata_error *err) {
    st_objref ref;
    int rc = st_obj_locate(t, key, &ref, err);
    return rc ? rc : st_obj_read(t, &ref, p, v, err);
}

static int list_prop(strata_table_t *t, uint32_t col, st_prop **p, strata_error *err) {
    *p = st_prop_find(t, col);
    if (!*p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", t->name, col);
    if (!((*p)->flags & STRATA_PROP_LIST))
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is not a list", t->name, (*p)->name);
    return STRATA_OK;
}

int st_list_open(strata_table_t *t, int64_t key, uint32_t col, st_prop **p, uint64_t *id,
                 strata_value **v, strata_value **keys, size_t *n, strata_error *err) {
    int rc = list_prop(t, col, p, err);
    strata_value idv;
    if (rc || (rc = read_prop(t, key, *p, &idv, err))) return rc;
    *id = (uint64_t)idv.u.i;
    return st_list_load_keyed(t, *p, *id, v, keys, n, err);
}

static int list_open(strata_table_t *t, int64_t key, uint32_t col, st_prop **p, uint64_t *id,
                     strata_value **v, size_t *n, strata_error *err) {
    return st_list_open(t, key, col, p, id, v, NULL, n, err);
}

static int index_error(strata_table_t *t, const st_prop *p, size_t index, size_t size, strata_error *err) {
    return st_err(err, STRATA_ERR_NOT_FOUND, "'%s.%s': index %zu is out of range (size %zu)",
                  t->name, p->name, index, size);
}

/* Store the new contents of a list: an empty list has no storage and id 0 in its column; a list
 * that gains its first element gets a new id. */
int st_list_write(strata_table_t *t, int64_t key, st_prop *p, uint64_t id, const strata_value *v,
                  const strata_value *keys, size_t n, strata_error *err) {
    int rc;
    uint64_t want = n == 0 ? 0 : id ? id : t->next_list_id;
    if (want != id) {
        if (!id) {
            t->next_list_id++;
            t->dirty = true;
        }
        st_objref ref;
        strata_value idv = {.type = STRATA_TYPE_INT, .u.i = (int64_t)want};
        if ((rc = st_obj_locate_write(t, key, &ref, err))) return rc;
        for (uint32_t i = 0; i < ref.dc->ncols; i++)
            if (ref.dc->cols[i].col_id == p->id)
                rc = st_dcol_store(t->txn, t->store, &ref.dc->cols[i], p, ref.row, &idv, err);
        if (rc) return rc;
    }
    return list_store(t, key, p->id, want ? want : id, v, keys, n, err);
}

/* A list's size and a set's lookup, without decoding the list each time (list_lookup.c). */
static int list_find(strata_table_t *t, int64_t key, uint32_t col, st_list_edit op,
                     const strata_value *value, size_t *size_out, strata_error *err) {
    st_prop *p;
    strata_value idv, nv;
    int rc = list_prop(t, col, &p, err);
    if (rc || (rc = read_prop(t, key, p, &idv, err))) return rc;
    if (op == ST_LIST_SIZE) return st_list_record_size(t, p, (uint64_t)idv.u.i, size_out, err);
    if ((p->flags & STRATA_PROP_MAP))
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is a map: it is read by key", t->name, p->name);
    if ((rc = st_value_check(t, p, value, true, &nv, err))) return rc;
    bool found;
    if ((rc = st_set_lookup(t, p, (uint64_t)idv.u.i, &nv, size_out, &found, err))) return rc;
    return found ? STRATA_OK : STRATA_ERR_NOT_FOUND; /* quietly: err untouched */
}

int st_list_op(strata_table_t *t, int64_t key, uint32_t col, st_list_edit op, size_t a, size_t b,
               const strata_value *value, size_t *size_out, strata_value *out, strata_error *err) {
    if (op == ST_LIST_SIZE || op == ST_SET_FIND) return list_find(t, key, col, op, value, size_out, err);
    st_prop *p;
    uint64_t id;
    strata_value *v;
    size_t n;
    int rc = list_open(t, key, col, &p, &id, &v, &n, err);
    if (rc) return rc;
    strata_value nv;
    strata_table_t *target = p->type == STRATA_TYPE_LINK ? st_table_by_id(t->store, p->target) : NULL;
    if ((p->flags & STRATA_PROP_MAP) && op != ST_LIST_SIZE && op != ST_LIST_GET && op != ST_LIST_CLEAR) {
        free(v);
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is a map: it is changed by key", t->name,
                      p->name);
    }
    switch (op) {
    case ST_LIST_SIZE: /* list_find */
    case ST_SET_FIND:
        break;
    case ST_LIST_GET: /* get */
        if (a >= n) rc = index_error(t, p, a, n, err);
        else *out = v[a];
        break;
    case ST_LIST_INSERT: /* insert */
    case ST_LIST_REPLACE: { /* replace */
        if (op == ST_LIST_INSERT ? a > n : a >= n) {
            rc = index_error(t, p, a, n, err);
            break;
        }
        if ((rc = st_value_check(t, p, value, true, &nv, err))) break;
        if (st_table_embedded(target)) {
            if (op == ST_LIST_REPLACE && st_value_equal(&v[a], &nv)) break; /* its own already */
            if ((rc = st_embedded_claim(target, nv.u.link, err))) break;
        }
        if (p->flags & STRATA_PROP_SET) { /* unique elements: refuse a second copy */
            bool twice = false;
            for (size_t i = 0; i < n && !twice; i++)
                twice = (op == ST_LIST_INSERT || i != a) && st_value_equal(&v[i], &nv);
            if (twice) {
                char d[100];
                st_value_describe(&nv, d, sizeof d);
                rc = st_err(err, STRATA_ERR_EXISTS, "'%s.%s' is a set and already holds %s", t->name,
                            p->name, d);
                break;
            }
        }
        strata_value *g = realloc(v, (n + 1) * sizeof *g);
        if (!g) {
            rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
            break;
        }
        v = g;
        if (op == ST_LIST_INSERT) {
            memmove(v + a + 1, v + a, (n - a) * sizeof *v);
            n++;
        } else if ((rc = st_backlink_of(t, p, &v[a], key, -1, err))) {
            break;
        }
        v[a] = nv;
        if ((rc = st_backlink_of(t, p, &nv, key, 1, err))) break;
        rc = st_list_write(t, key, p, id, v, NULL, n, err);
        break;
    }
    case ST_LIST_MOVE: { /* move a → b */
        if (a >= n || b >= n) {
            rc = index_error(t, p, a >= n ? a : b, n, err);
            break;
        }
        strata_value x = v[a];
        if (a < b) memmove(v + a, v + a + 1, (b - a) * sizeof *v);
        else memmove(v + b + 1, v + b, (a - b) * sizeof *v);
        v[b] = x;
        rc = st_list_write(t, key, p, id, v, NULL, n, err);
        break;
    }
    case ST_LIST_REMOVE: /* remove */
        if (a >= n) {
            rc = index_error(t, p, a, n, err);
            break;
        }
        if ((rc = st_backlink_of(t, p, &v[a], key, -1, err))) break;
        memmove(v + a, v + a + 1, (n - a - 1) * sizeof *v);
        rc = st_list_write(t, key, p, id, v, NULL, n - 1, err);
        break;
    case ST_LIST_CLEAR: /* clear */
        for (size_t i = 0; rc == STRATA_OK && i < n; i++) rc = st_backlink_of(t, p, &v[i], key, -1, err);
        if (rc == STRATA_OK) rc = st_list_write(t, key, p, id, v, NULL, 0, err);
        break;
    }
    /* a get hands out bytes of the tree: copy them into the arena (the tree may change) */
    if (rc == STRATA_OK && op == ST_LIST_GET && (out->type == STRATA_TYPE_STRING || out->type == STRATA_TYPE_BINARY) &&
        t->txn->write) {
        uint8_t *copy = st_arena_alloc(t->store, out->u.bytes.len ? out->u.bytes.len : 1);
        if (!copy) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        else {
            memcpy(copy, out->u.bytes.data, out->u.bytes.len);
            out->u.bytes.data = copy;
        }
    }
    free(v);
    if (rc && op != ST_LIST_SIZE && op != ST_LIST_GET && op != ST_SET_FIND && rc != STRATA_ERR_NOT_FOUND &&
        rc != STRATA_ERR_WRONG_TYPE && rc != STRATA_ERR_INVALID_ARGUMENT && rc != STRATA_ERR_TOO_LARGE &&
        rc != STRATA_ERR_EXISTS)
        st_txn_fail(t->txn, rc);
    return rc;
}

/* ------------------------------------------------------------------ set, create, delete */

/* Write v (checked) into the object's column, keeping indexes and backlinks: in place in its
 * leaf when it fits, else through the decoded cluster. */
static int store_value(strata_table_t *t, int64_t key, st_prop *p, const strata_value *v,
                       bool maintain, strata_error *err) {
    strata_value old;
    int rc;
    if (maintain && (st_prop_has_index(p) || st_prop_links(p))) {
        if ((rc = read_prop(t, key, p, &old, err))) return rc;
        if (st_prop_has_index(p) && (rc = st_index_remove(t, p, &old, key, err))) return rc;
        if ((rc = st_backlink_of(t, p, &old, key, -1, err))) return rc;
    }
    bool done;
    if ((rc = st_cluster_patch(t, key, p, v, &done, err))) return rc;
    if (!done) {
        st_objref ref;
        if ((rc = st_obj_locate_write(t, key, &ref, err))) return rc;
        st_dcol *c = NULL;
        for (uint32_t i = 0; i < ref.dc->ncols; i++)
            if (ref.dc->cols[i].col_id == p->id) c = &ref.dc->cols[i];
        if (!c) return ST_CORRUPT(err, "'%s': decoded cluster lacks '%s'", t->name, p->name);
        if ((rc = st_dcol_store(t->txn, t->store, c, p, ref.row, v, err))) return rc;
    }
    if (maintain) {
        if (st_prop_has_index(p) && (rc = st_index_insert(t, p, v, key, err))) return rc;
        if ((rc = st_backlink_of(t, p, v, key, 1, err))) return rc;
    }
    return STRATA_OK;
}

static int pk_taken(strata_table_t *t, st_prop *p, const strata_value *v, int64_t except,
                    strata_error *err) {
    int64_t keys[2];
    size_t n;
    int rc = st_index_find(t, p, v, keys, 2, &n, err);
    if (rc) return rc;
    for (size_t i = 0; i < n && i < 2; i++)
        if (keys[i] != except) {
            char d[100];
            st_value_describe(v, d, sizeof d);
            return st_err(err, STRATA_ERR_EXISTS,
                          "table '%s': an object with primary key %s already exists (key %lld)",
                          t->name, d, (long long)keys[i]);
        }
    return STRATA_OK;
}

int st_obj_set_value(strata_table_t *t, int64_t key, st_prop *p, const strata_value *v,
                     strata_error *err) {
    if (p->flags & STRATA_PROP_LIST)
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is a list: use the strata_list_ calls",
                      t->name, p->name);
    strata_value nv;
    st_objref ref;
    int rc = st_obj_locate(t, key, &ref, err);
    if (rc || (rc = st_value_check(t, p, v, false, &nv, err))) return rc;
    if ((p->flags & STRATA_PROP_PRIMARY_KEY) && (rc = pk_taken(t, p, &nv, key, err))) return rc;
    strata_table_t *target = p->type == STRATA_TYPE_LINK ? st_table_by_id(t->store, p->target) : NULL;
    if (st_table_embedded(target) && nv.type == STRATA_TYPE_LINK) {
        strata_value old;
        if ((rc = st_obj_read(t, &ref, p, &old, err))) return rc;
        if (old.type == STRATA_TYPE_LINK && old.u.link == nv.u.link) return STRATA_OK; /* its own already */
        if ((rc = st_embedded_claim(target, nv.u.link, err))) return rc;
    }
    if ((rc = store_value(t, key, p, &nv, true, err))) st_txn_fail(t->txn, rc);
    return rc;
}

int st_obj_create(strata_table_t *t, const strata_value *pk, int64_t *key, strata_error *err) {
    st_prop *pkp = t->pk_col ? st_prop_find(t, t->pk_col) : NULL;
    if (pkp && !pk)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "table '%s' has a primary key ('%s'): create its objects with a value",
                      t->name, pkp->name);
    if (!pkp && pk)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "table '%s' has no primary key", t->name);
    strata_value nv;
    int rc;
    if (pkp && ((rc = st_value_check(t, pkp, pk, false, &nv, err)) || (rc = pk_taken(t, pkp, &nv, -1, err))))
        return rc;
    /* A direct primary key is the object's key when it can still be appended. */
    int64_t k = t->next_key;
    if (pkp && (pkp->flags & ST_PROP_PK_DIRECT) && nv.type == STRATA_TYPE_INT && nv.u.i >= k &&
        nv.u.i < INT64_MAX)
        k = nv.u.i;
    t->next_key = k + 1;
    st_objref ref;
    if ((rc = st_cluster_append(t, k, &ref, err))) goto fail;
    t->count++;
    t->dirty = true;
    if (pkp) {
        for (uint32_t i = 0; i < ref.dc->ncols; i++)
            if (ref.dc->cols[i].col_id == pkp->id)
                rc = st_dcol_store(t->txn, t->store, &ref.dc->cols[i], pkp, ref.row, &nv, err);
        if (rc) goto fail;
    }
    for (uint32_t i = 0; i < t->nprops; i++) {
        st_prop *p = &t->props[i];
        if (!st_prop_has_index(p)) continue;
        strata_value dv;
        if ((rc = st_dcol_value(t->txn, &ref.dc->cols[i], p, ref.row, &dv, err)) ||
            (rc = st_index_insert(t, p, &dv, k, err)))
            goto fail;
    }
    if (st_table_embedded(t) && (rc = st_embedded_created(t, k, err))) goto fail;
    *key = k;
    return STRATA_OK;
fail:
    return st_txn_fail(t->txn, rc);
}

/* Take object key of table gone_table out of the list of (t, okey, p): every occurrence. In a
 * map, and a list of mixed values, the places stay and become null (as RealmSwift's Map and
 * AnyRealmValue lists do with a deleted object); a set drops them. */
static int unlink_from_list(strata_table_t *t, int64_t okey, st_prop *p, uint32_t gone_table, int64_t key,
                            strata_error *err) {
    uint64_t id;
    strata_value *v, *keys = NULL;
    size_t n, m = 0;
    st_prop *pp;
    bool map = p->flags & STRATA_PROP_MAP;
    int rc = st_list_open(t, okey, p->id, &pp, &id, &v, map ? &keys : NULL, &n, err);
    if (rc) return rc;
    bool keep = map || (p->type == STRATA_TYPE_MIXED && !(p->flags & STRATA_PROP_SET)); /* as null */
    for (size_t i = 0; i < n; i++) {
        bool hit = (v[i].type == STRATA_TYPE_LINK && v[i].u.link == key && p->type == STRATA_TYPE_LINK) ||
                   (v[i].type == STRATA_TYPE_TYPED_LINK && v[i].u.typed_link.key == key &&
                    v[i].u.typed_link.table == gone_table);
        if (keep && hit) v[i] = (strata_value){.type = STRATA_TYPE_NULL};
        if (keep || !hit) v[m++] = v[i];
    }
    rc = st_list_write(t, okey, p, id, v, keys, m, err);
    free(v);
    free(keys);
    return rc;
}

/* A link to a deleted object becomes null (its backlink goes with the object; an indexed mixed
 * property's index follows). */
static int null_link(strata_table_t *o, int64_t okey, st_prop *p, strata_error *err) {
    strata_value old, null = {.type = STRATA_TYPE_NULL};
    int rc;
    if (st_prop_has_index(p) &&
        ((rc = read_prop(o, okey, p, &old, err)) || (rc = st_index_remove(o, p, &old, okey, err))))
        return rc;
    if ((rc = store_value(o, okey, p, &null, false, err))) return rc;
    return st_prop_has_index(p) ? st_index_insert(o, p, &null, okey, err) : STRATA_OK;
}

int st_obj_delete(strata_table_t *t, int64_t key, strata_error *err) {
    st_objref ref;
    int rc = st_obj_locate(t, key, &ref, err);
    if (rc) return rc;
    /* 1. links from this object: their backlinks go; its lists' storage goes; its index entries
     * go. Read from its decoded cluster (its row goes in step 3 anyway). */
    for (uint32_t i = 0; rc == STRATA_OK && i < t->nprops; i++) {
        st_prop *p = &t->props[i];
        strata_value v;
        if (!(p->flags & STRATA_PROP_LIST) && !st_prop_has_index(p) && !st_prop_links(p)) continue;
        if ((rc = st_obj_locate_write(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &v, err)))
            break;
        if (p->flags & STRATA_PROP_LIST) {
            rc = st_list_free_storage(t, p, (uint64_t)v.u.i, key, err);
        } else {
            if (st_prop_has_index(p) && (rc = st_index_remove(t, p, &v, key, err))) break;
            rc = st_backlink_of(t, p, &v, key, -1, err);
        }
    }
    /* 2. links to this object: nulled, or taken out of their lists */
    uint8_t pre[8];
    st_wr_be64(pre, (uint64_t)key);
    backlink *b = NULL;
    size_t nb = 0;
    if (rc == STRATA_OK) rc = backlinks_collect(t, pre, 8, &b, &nb, err);
    for (size_t i = 0; rc == STRATA_OK && i < nb; i++) {
        strata_table_t *o = st_table_by_id(t->store, b[i].table);
        st_prop *p = o ? st_prop_find(o, b[i].col) : NULL;
        if (!p) {
            rc = ST_CORRUPT(err, "'%s' object %lld has a backlink from unknown table %u property %u",
                            t->name, (long long)key, b[i].table, b[i].col);
            break;
        }
        if (p->flags & STRATA_PROP_LIST) rc = unlink_from_list(o, b[i].key, p, t->id, key, err);
        else rc = null_link(o, b[i].key, p, err);
        if (rc == STRATA_OK) {
            uint8_t k[24];
            backlink_key(k, key, b[i].table, b[i].col, b[i].key);
            rc = st_tree_del(t->backlinks, k, 24, err);
        }
    }
    free(b);
    /* 3. the row */
    if (rc == STRATA_OK) rc = st_obj_locate_write(t, key, &ref, err);
    if (rc == STRATA_OK) rc = st_cluster_remove_row(t, &ref, err);
    if (rc) return st_txn_fail(t->txn, rc);
    t->count--;
    t->dirty = true;
    return STRATA_OK;
}

int st_table_clear(strata_table_t *t, strata_error *err) {
    int64_t key;
    int rc;
    while ((rc = st_cluster_next_key(t, -1, &key, err)) == STRATA_OK)
        if ((rc = st_obj_delete(t, key, err))) return rc;
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

int st_prop_remove(strata_table_t *t, uint32_t col, strata_error *err) {
    st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", t->name, col);
    int rc = STRATA_OK;
    if (t->pk_col == col) t->pk_col = 0;
    if (st_prop_has_index(p)) rc = st_index_drop(t, p, err);
    if (rc == STRATA_OK && (st_prop_links(p) || (p->flags & STRATA_PROP_LIST))) {
        int64_t key = -1;
        while (rc == STRATA_OK && (rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
            strata_value v;
            if ((rc = read_prop(t, key, p, &v, err))) break;
            if (p->flags & STRATA_PROP_LIST) rc = st_list_free_storage(t, p, (uint64_t)v.u.i, key, err);
            else rc = st_backlink_of(t, p, &v, key, -1, err);
        }
        if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    }
    if (rc == STRATA_OK) rc = st_clusters_drop_column(t, col, err);
    if (rc) return st_txn_fail(t->txn, rc);
    uint32_t i = (uint32_t)(p - t->props);
    memmove(t->props + i, t->props + i + 1, (t->nprops - i - 1) * sizeof *t->props);
    t->nprops--;
    t->dirty = true;
    return STRATA_OK;
}
