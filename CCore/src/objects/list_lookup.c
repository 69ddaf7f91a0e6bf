/*
 * list_lookup.c — a list's size, a set's value and a map's key found without decoding the list
 * for every call.
 *
 * A list record (object.c) is decoded whole to reach its elements: O(n). Its size is its first
 * u32, read as such. In a read transaction (whose trees never change) the last list looked up in
 * a table is kept decoded — its values, a map's keys, and for a set the positions of its values
 * in value order — so that repeated `contains` and `map[key]` calls on one collection cost
 * O(log n) after the first. A write transaction decodes each time (its lists change under it).
 *
 * Nothing is stored: the cache lives in the table handle (st_list_cache) and points into the
 * snapshot's pages, which the read transaction keeps until it ends.
 */
#include "objects/private.h"

#include <math.h>
#include <stdlib.h>

void st_list_cache_free(st_list_cache *c) {
    free(c->vals);
    free(c->keys);
    free(c->order);
    memset(c, 0, sizeof *c);
}

int st_list_record_size(strata_table_t *t, const st_prop *p, uint64_t id, size_t *n, strata_error *err) {
    *n = 0;
    if (!id) return STRATA_OK;
    strata_tree_t *lt;
    int rc = st_table_tree(t, ST_TABLE_LISTS, false, &lt, err);
    const uint8_t *b;
    size_t len;
    uint8_t k[8];
    st_wr64(k, id);
    if (rc == STRATA_OK) rc = st_bt_get(t->txn, &lt->st, k, 8, &b, &len, err);
    if (rc == STRATA_ERR_NOT_FOUND || (rc == STRATA_OK && len < 4))
        return ST_CORRUPT(err, "'%s.%s': list %llu is missing or malformed", t->name, p->name,
                          (unsigned long long)id);
    if (rc) return rc;
    *n = st_rd32(b);
    if (*n > len) return ST_CORRUPT(err, "'%s.%s': list %llu claims %zu elements in %zu bytes",
                                    t->name, p->name, (unsigned long long)id, *n, len);
    return STRATA_OK;
}

/* A total order on values of one type that agrees with st_value_equal where it says equal
 * (floats by <, NaN last; -0.0 and 0.0 side by side). */
static int value_order(const strata_value *a, const strata_value *b) {
    if (a->type != b->type) return (a->type > b->type) - (a->type < b->type);
    switch (a->type) {
    case STRATA_TYPE_BOOL: return (a->u.b > b->u.b) - (a->u.b < b->u.b);
    case STRATA_TYPE_INT: return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    case STRATA_TYPE_LINK: return (a->u.link > b->u.link) - (a->u.link < b->u.link);
    case STRATA_TYPE_TYPED_LINK: {
        int c = (a->u.typed_link.table > b->u.typed_link.table) - (a->u.typed_link.table < b->u.typed_link.table);
        return c ? c : (a->u.typed_link.key > b->u.typed_link.key) - (a->u.typed_link.key < b->u.typed_link.key);
    }
    case STRATA_TYPE_FLOAT:
    case STRATA_TYPE_DOUBLE: {
        double x = a->type == STRATA_TYPE_FLOAT ? a->u.f : a->u.d, y = b->type == STRATA_TYPE_FLOAT ? b->u.f : b->u.d;
        if (isnan(x) || isnan(y)) return isnan(x) - isnan(y);
        return (x > y) - (x < y);
    }
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY: {
        size_t m = a->u.bytes.len < b->u.bytes.len ? a->u.bytes.len : b->u.bytes.len;
        int c = m ? memcmp(a->u.bytes.data, b->u.bytes.data, m) : 0;
        return c ? c : (a->u.bytes.len > b->u.bytes.len) - (a->u.bytes.len < b->u.bytes.len);
    }
    case STRATA_TYPE_TIMESTAMP: {
        int c = (a->u.timestamp.seconds > b->u.timestamp.seconds) - (a->u.timestamp.seconds < b->u.timestamp.seconds);
        return c ? c : (a->u.timestamp.nanoseconds > b->u.timestamp.nanoseconds) -
                       (a->u.timestamp.nanoseconds < b->u.timestamp.nanoseconds);
    }
    case STRATA_TYPE_OBJECT_ID: return memcmp(a->u.object_id, b->u.object_id, 12);
    case STRATA_TYPE_UUID: return memcmp(a->u.uuid, b->u.uuid, 16);
    case STRATA_TYPE_DECIMAL128: {
        int c = (a->u.decimal.high > b->u.decimal.high) - (a->u.decimal.high < b->u.decimal.high);
        return c ? c : (a->u.decimal.low > b->u.decimal.low) - (a->u.decimal.low < b->u.decimal.low);
    }
    default: return 0;
    }
}

static int order_cmp(const void *x, const void *y, void *arg) {
    const strata_value *v = arg;
    return value_order(&v[*(const uint32_t *)x], &v[*(const uint32_t *)y]);
}

/* The cached decoding of list `id` of (t, p), made when it is another list. */
static int cache_get(strata_table_t *t, const st_prop *p, uint64_t id, st_list_cache **out,
                     strata_error *err) {
    st_list_cache *c = &t->lcache;
    *out = c;
    if (c->id == id && c->col == p->id) return STRATA_OK;
    st_list_cache_free(c);
    bool map = p->flags & STRATA_PROP_MAP;
    int rc = st_list_load_keyed(t, p, id, &c->vals, map ? &c->keys : NULL, &c->n, err);
    if (rc) return rc;
    if (!map && c->n) {
        if (!(c->order = malloc(c->n * sizeof *c->order))) {
            st_list_cache_free(c);
            return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        }
        for (size_t i = 0; i < c->n; i++) c->order[i] = (uint32_t)i;
        qsort_r(c->order, c->n, sizeof *c->order, order_cmp, c->vals);
    }
    c->id = id;
    c->col = p->id;
    return STRATA_OK;
}

int st_set_lookup(strata_table_t *t, const st_prop *p, uint64_t id, const strata_value *nv,
                  size_t *at, bool *found, strata_error *err) {
    *found = false;
    if (!id) return STRATA_OK;
    if (t->txn->write || p->type == STRATA_TYPE_MIXED) { /* mixed: equality is per type: scan */
        strata_value *v;
        size_t n;
        int rc = st_list_load(t, p, id, &v, &n, err);
        for (size_t i = 0; rc == STRATA_OK && !*found && i < n; i++)
            if (st_value_equal(&v[i], nv)) *at = i, *found = true;
        free(v);
        return rc;
    }
    st_list_cache *c;
    int rc = cache_get(t, p, id, &c, err);
    if (rc) return rc;
    size_t lo = 0, hi = c->n;
    while (lo < hi) { /* the first position not below nv */
        size_t mid = lo + (hi - lo) / 2;
        if (value_order(&c->vals[c->order[mid]], nv) < 0) lo = mid + 1;
        else hi = mid;
    }
    for (; lo < c->n && value_order(&c->vals[c->order[lo]], nv) == 0; lo++)
        if (st_value_equal(&c->vals[c->order[lo]], nv)) {
            *at = c->order[lo];
            *found = true;
            break;
        }
    return STRATA_OK;
}

int st_map_lookup(strata_table_t *t, const st_prop *p, uint64_t id, const strata_value *mk,
                  size_t *at, bool *found, strata_value *value, strata_error *err) {
    *found = false;
    if (!id) return STRATA_OK;
    st_list_cache *c;
    int rc = cache_get(t, p, id, &c, err);
    if (rc) return rc;
    *at = st_map_key_search(c->keys, c->n, mk, found);
    if (*found && value) *value = c->vals[*at];
    return STRATA_OK;
}
