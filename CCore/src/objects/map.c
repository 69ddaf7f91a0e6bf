/*
 * map.c — maps: properties flagged STRATA_PROP_MAP, string keys to values of the property's type.
 *
 * Layout (object.c's top comment has the whole list record): a map is a list record whose
 * values are followed by their keys, count × (u32 length + UTF-8 bytes), ascending by bytes.
 * Every reader of lists sees the values, in key order; this file finds a key by binary search
 * over the loaded keys and rewrites the record with the keys beside the values.
 *
 * Invariants: keys are unique and ascending; key i belongs to value i; a value is of the
 * property's type or null (a map of links keeps the key of a deleted object, with null);
 * backlinks count the links a map holds as for a list. A change is checked whole (key, value,
 * link target) before anything is written.
 */
#include "objects/private.h"

#include <stdio.h>
#include <stdlib.h>

int st_map_key_check(strata_table_t *t, const st_prop *p, const strata_value *mk, strata_error *err) {
    char what[2 * STRATA_MAX_NAME + 16];
    snprintf(what, sizeof what, "a key of '%s.%s'", t->name, p->name);
    if (!mk || mk->type != STRATA_TYPE_STRING)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s must be a string", what);
    int rc = st_value_shape(mk, what, err);
    if (rc) return rc;
    const char *s = mk->u.bytes.data;
    size_t n = mk->u.bytes.len;
    if (n && s[0] == '$')
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s ('%.*s') must not start with '$'", what,
                      (int)(n < 60 ? n : 60), s);
    if (n && memchr(s, '.', n))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s ('%.*s') must not contain '.'", what,
                      (int)(n < 60 ? n : 60), s);
    return STRATA_OK;
}

size_t st_map_key_search(const strata_value *keys, size_t n, const strata_value *mk, bool *found) {
    size_t lo = 0, hi = n;
    *found = false;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = st_map_key_cmp(&keys[mid], mk->u.bytes.data, mk->u.bytes.len);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Copy bytes handed out from the tree into the transaction's arena (the tree may change). */
static int to_arena(strata_table_t *t, strata_value *v, strata_error *err) {
    if ((v->type != STRATA_TYPE_STRING && v->type != STRATA_TYPE_BINARY) || !t->txn->write)
        return STRATA_OK;
    uint8_t *copy = st_arena_alloc(t->store, v->u.bytes.len ? v->u.bytes.len : 1);
    if (!copy) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    memcpy(copy, v->u.bytes.data, v->u.bytes.len);
    v->u.bytes.data = copy;
    return STRATA_OK;
}

static int map_set(strata_table_t *t, int64_t key, st_prop *p, uint64_t id, strata_value **vp,
                   strata_value **kp, size_t n, const strata_value *mk, const strata_value *value,
                   bool *inserted, strata_error *err) {
    strata_value nv;
    int rc = st_value_check(t, p, value, false, &nv, err);
    if (rc) return rc;
    bool found;
    size_t at = st_map_key_search(*kp, n, mk, &found);
    strata_table_t *target = p->type == STRATA_TYPE_LINK ? st_table_by_id(t->store, p->target) : NULL;
    if (!found) {
        strata_value *v = realloc(*vp, (n + 1) * sizeof *v);
        if (v) *vp = v;
        strata_value *k = v ? realloc(*kp, (n + 1) * sizeof *k) : NULL;
        if (k) *kp = k;
        if (!v || !k) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        memmove(v + at + 1, v + at, (n - at) * sizeof *v);
        memmove(k + at + 1, k + at, (n - at) * sizeof *k);
        k[at] = *mk;
        v[at] = (strata_value){.type = STRATA_TYPE_NULL};
        n++;
    }
    strata_value *v = *vp;
    strata_value old = v[at];
    if (inserted) *inserted = !found;
    if (found && st_table_embedded(target) && st_value_equal(&old, &nv)) return STRATA_OK; /* its own */
    if (st_table_embedded(target) && nv.type == STRATA_TYPE_LINK && (rc = st_embedded_claim(target, nv.u.link, err)))
        return rc;
    v[at] = nv;
    /* the record first (the keys point into it), then the links: letting go of an embedded
     * object deletes it, which may change this table's lists */
    if ((rc = st_list_write(t, key, p, id, v, *kp, n, err)) || (rc = st_backlink_of(t, p, &nv, key, 1, err)))
        return rc;
    return st_backlink_of(t, p, &old, key, -1, err);
}

int st_map_op(strata_table_t *t, int64_t key, uint32_t col, st_map_edit op, const strata_value *mk,
              size_t index, const strata_value *value, bool *changed, strata_value *out,
              strata_error *err) {
    st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", t->name, col);
    if (!(p->flags & STRATA_PROP_MAP))
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is not a map", t->name, p->name);
    int rc = op == ST_MAP_KEY_AT ? STRATA_OK : st_map_key_check(t, p, mk, err);
    if (rc) return rc;
    if (op == ST_MAP_GET && !t->txn->write) { /* by binary search over the cached keys */
        st_objref ref;
        strata_value idv;
        size_t at;
        bool found;
        if ((rc = st_obj_locate(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &idv, err)) ||
            (rc = st_map_lookup(t, p, (uint64_t)idv.u.i, mk, &at, &found, out, err)))
            return rc;
        return found ? STRATA_OK : STRATA_ERR_NOT_FOUND;
    }
    uint64_t id;
    strata_value *v, *keys;
    size_t n;
    if ((rc = st_list_open(t, key, col, &p, &id, &v, &keys, &n, err))) return rc;
    bool found = false;
    size_t at = op == ST_MAP_KEY_AT ? index : st_map_key_search(keys, n, mk, &found);
    switch (op) {
    case ST_MAP_GET:
        if (!found) rc = STRATA_ERR_NOT_FOUND; /* quietly: the caller names the key */
        else *out = v[at], rc = to_arena(t, out, err);
        break;
    case ST_MAP_KEY_AT:
        if (at >= n) rc = st_err(err, STRATA_ERR_NOT_FOUND, "'%s.%s': index %zu is out of range (size %zu)",
                                 t->name, p->name, at, n);
        else *out = keys[at], rc = to_arena(t, out, err);
        break;
    case ST_MAP_ERASE:
        if (changed) *changed = found;
        if (!found) break;
        strata_value gone = v[at];
        memmove(v + at, v + at + 1, (n - at - 1) * sizeof *v);
        memmove(keys + at, keys + at + 1, (n - at - 1) * sizeof *keys);
        rc = st_list_write(t, key, p, id, v, keys, n - 1, err);
        if (rc == STRATA_OK) rc = st_backlink_of(t, p, &gone, key, -1, err);
        if (rc) st_txn_fail(t->txn, rc);
        break;
    case ST_MAP_SET:
        rc = map_set(t, key, p, id, &v, &keys, n, mk, value, changed, err);
        /* refusals before anything was written leave the transaction usable */
        if (rc && rc != STRATA_ERR_NOT_FOUND && rc != STRATA_ERR_WRONG_TYPE &&
            rc != STRATA_ERR_INVALID_ARGUMENT && rc != STRATA_ERR_EXISTS &&
            (rc != STRATA_ERR_TOO_LARGE || p->type == STRATA_TYPE_LINK))
            st_txn_fail(t->txn, rc);
        break;
    }
    free(v);
    free(keys);
    return rc;
}
