/*
 * api_object.c — the strata_schema_*, strata_table_*, strata_obj_*, strata_list_* and
 * strata_index_* entry points: argument checks and error reporting around schema.c, cluster.c,
 * index.c and object.c.
 */
#include "objects/objects.h"

#define LOCAL_ERR        \
    strata_error local_; \
    if (!err) err = &local_

static int need(const void *p, const char *fn, const char *what, strata_error *err) {
    return p ? STRATA_OK : st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: %s is NULL", fn, what);
}

static int prop_of(strata_table_t *t, strata_col_t col, st_prop **p, strata_error *err) {
    *p = st_prop_find(t, col);
    if (!*p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property with id %u", t->name, col);
    return STRATA_OK;
}

const char *strata_type_name(strata_type type) { return st_type_name(type); }

/* ------------------------------------------------------------------ schema */

int strata_schema_version(strata_txn_t *txn, uint64_t *version, strata_error *err) {
    LOCAL_ERR;
    int rc = st_txn_check(txn, false, err);
    if (rc || (rc = need(version, "strata_schema_version", "version", err))) return rc;
    return st_schema_get_version(txn, version, err);
}

int strata_schema_set_version(strata_txn_t *txn, uint64_t version, strata_error *err) {
    LOCAL_ERR;
    int rc = st_txn_check(txn, true, err);
    return rc ? rc : st_schema_set_version(txn, version, err);
}

int strata_table_count_all(strata_txn_t *txn, size_t *count, strata_error *err) {
    LOCAL_ERR;
    st_store *store;
    int rc = st_txn_check(txn, false, err);
    if (rc || (rc = need(count, "strata_table_count_all", "count", err)) ||
        (rc = st_store_get(txn, &store, err)))
        return rc;
    size_t n = 0;
    for (size_t i = 0; i < store->ntables; i++) n += !store->tables[i]->dropped;
    *count = n;
    return STRATA_OK;
}

int strata_table_name_at(strata_txn_t *txn, size_t i, const char **name, strata_error *err) {
    LOCAL_ERR;
    st_store *store;
    int rc = st_txn_check(txn, false, err);
    if (rc || (rc = need(name, "strata_table_name_at", "name", err)) || (rc = st_store_get(txn, &store, err)))
        return rc;
    size_t i0 = i;
    for (size_t j = 0; j < store->ntables; j++) {
        if (store->tables[j]->dropped) continue;
        if (i-- == 0) {
            *name = store->tables[j]->name;
            return STRATA_OK;
        }
    }
    return st_err(err, STRATA_ERR_NOT_FOUND, "strata_table_name_at: no table at index %zu", i0);
}

int strata_table_create(strata_txn_t *txn, const char *name, strata_table_t **out, strata_error *err) {
    LOCAL_ERR;
    int rc = st_txn_check(txn, true, err);
    if (rc || (rc = need(out, "strata_table_create", "out", err))) return rc;
    return st_table_create(txn, name, out, err);
}

int strata_table_open(strata_txn_t *txn, const char *name, strata_table_t **out, strata_error *err) {
    LOCAL_ERR;
    int rc = st_txn_check(txn, false, err);
    if (rc || (rc = need(out, "strata_table_open", "out", err))) return rc;
    return st_table_open(txn, name, out, err);
}

int strata_table_drop(strata_txn_t *txn, const char *name, strata_error *err) {
    LOCAL_ERR;
    int rc = st_txn_check(txn, true, err);
    return rc ? rc : st_table_drop(txn, name, err);
}

const char *strata_table_name(const strata_table_t *table) { return table ? table->name : NULL; }

uint32_t strata_table_id(const strata_table_t *table) { return table ? table->id : 0; }

int strata_table_open_id(strata_txn_t *txn, uint32_t id, strata_table_t **out, strata_error *err) {
    LOCAL_ERR;
    st_store *store = NULL;
    int rc = st_txn_check(txn, false, err);
    if (rc || (rc = need(out, "strata_table_open_id", "out", err)) || (rc = st_store_get(txn, &store, err)))
        return rc;
    strata_table_t *t = st_table_by_id(store, id);
    if (!t) return st_err(err, STRATA_ERR_NOT_FOUND, "no table with id %u", id);
    *out = t;
    return STRATA_OK;
}

int strata_table_add_property(strata_table_t *table, const char *name, strata_type type,
                              unsigned flags, const char *link_target, strata_col_t *col,
                              strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    if (rc || (rc = need(col, "strata_table_add_property", "col", err))) return rc;
    return st_prop_add(table, name, type, flags, link_target, col, err);
}

int strata_table_remove_property(strata_table_t *table, strata_col_t col, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    return rc ? rc : st_prop_remove(table, col, err);
}

int strata_table_rename_property(strata_table_t *table, strata_col_t col, const char *new_name,
                                 strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    return rc ? rc : st_prop_rename(table, col, new_name, err);
}

int strata_table_set_indexed(strata_table_t *table, strata_col_t col, bool indexed, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    return rc ? rc : st_set_indexed(table, col, indexed, err);
}

int strata_table_set_fulltext(strata_table_t *table, strata_col_t col, bool fulltext, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    return rc ? rc : st_set_fulltext(table, col, fulltext, err);
}

int strata_table_set_primary_key(strata_table_t *table, strata_col_t col, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    return rc ? rc : st_set_primary_key(table, col, err);
}

int strata_table_set_embedded(strata_table_t *table, bool embedded, unsigned flags, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    if (rc) return rc;
    if (flags & ~(unsigned)STRATA_EMBED_DELETE_ORPHANS)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_table_set_embedded: unknown flags 0x%x", flags);
    return st_table_set_embedded(table, embedded, flags & STRATA_EMBED_DELETE_ORPHANS, err);
}

int strata_table_is_embedded(strata_table_t *table, bool *embedded, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(embedded, "strata_table_is_embedded", "embedded", err))) return rc;
    *embedded = st_table_embedded(table);
    return STRATA_OK;
}

int strata_table_find_property(strata_table_t *table, const char *name, strata_col_t *col,
                               strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(name, "strata_table_find_property", "name", err)) ||
        (rc = need(col, "strata_table_find_property", "col", err)))
        return rc;
    for (uint32_t i = 0; i < table->nprops; i++)
        if (strcmp(table->props[i].name, name) == 0) {
            *col = table->props[i].id;
            return STRATA_OK;
        }
    return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property '%s'", table->name, name);
}

int strata_table_property_count(strata_table_t *table, size_t *count, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(count, "strata_table_property_count", "count", err))) return rc;
    *count = table->nprops;
    return STRATA_OK;
}

static void fill_info(strata_table_t *t, const st_prop *p, strata_property_info *info) {
    info->col = p->id;
    info->name = p->name;
    info->type = (strata_type)p->type;
    info->flags = p->flags & ~ST_PROP_PK_DIRECT;
    strata_table_t *target = p->type == STRATA_TYPE_LINK ? st_table_by_id(t->store, p->target) : NULL;
    info->link_target = target ? target->name : NULL;
}

int strata_table_property_at(strata_table_t *table, size_t i, strata_property_info *info,
                             strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(info, "strata_table_property_at", "info", err))) return rc;
    if (i >= table->nprops)
        return st_err(err, STRATA_ERR_NOT_FOUND,
                      "table '%s' has %u properties: index %zu is past the last", table->name,
                      table->nprops, i);
    fill_info(table, &table->props[i], info);
    return STRATA_OK;
}

int strata_table_property_get(strata_table_t *table, strata_col_t col, strata_property_info *info,
                              strata_error *err) {
    LOCAL_ERR;
    st_prop *p;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(info, "strata_table_property_get", "info", err)) ||
        (rc = prop_of(table, col, &p, err)))
        return rc;
    fill_info(table, p, info);
    return STRATA_OK;
}

int strata_table_primary_key(strata_table_t *table, strata_col_t *col, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(col, "strata_table_primary_key", "col", err))) return rc;
    *col = table->pk_col;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ objects */

int strata_table_size(strata_table_t *table, uint64_t *count, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(count, "strata_table_size", "count", err))) return rc;
    *count = table->count;
    return STRATA_OK;
}

int strata_obj_create(strata_table_t *table, strata_key_t *key, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    if (rc || (rc = need(key, "strata_obj_create", "key", err))) return rc;
    return st_obj_create(table, NULL, key, err);
}

int strata_obj_create_pk(strata_table_t *table, const strata_value *pk, strata_key_t *key,
                         strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    if (rc || (rc = need(key, "strata_obj_create_pk", "key", err)) ||
        (rc = need(pk, "strata_obj_create_pk", "pk", err)))
        return rc;
    return st_obj_create(table, pk, key, err);
}

int strata_obj_find_pk(strata_table_t *table, const strata_value *pk, strata_key_t *key,
                       strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(key, "strata_obj_find_pk", "key", err)) ||
        (rc = need(pk, "strata_obj_find_pk", "pk", err)))
        return rc;
    st_prop *p = table->pk_col ? st_prop_find(table, table->pk_col) : NULL;
    if (!p) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "table '%s' has no primary key", table->name);
    strata_value nv;
    if ((rc = st_value_check(table, p, pk, false, &nv, err))) return rc;
    int64_t k;
    size_t n;
    if ((rc = st_index_find(table, p, &nv, &k, 1, &n, err))) return rc;
    if (n == 0) {
        if (err == &local_) return STRATA_ERR_NOT_FOUND; /* the caller asked for no message */
        char d[100];
        st_value_describe(&nv, d, sizeof d);
        return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no object with primary key %s",
                      table->name, d);
    }
    *key = k;
    return STRATA_OK;
}

int strata_obj_exists(strata_table_t *table, strata_key_t key, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    st_objref ref;
    return rc ? rc : st_obj_locate_for(table, key, ST_READS_NOTHING, &ref, err);
}

int strata_obj_prefetch(strata_table_t *table, strata_key_t key, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    st_objref ref;
    if (rc || (rc = st_obj_locate_for(table, key, ST_READS_NOTHING, &ref, err))) return rc;
    st_obj_prefetch(table, &ref);
    return STRATA_OK;
}

int strata_obj_delete(strata_table_t *table, strata_key_t key, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    return rc ? rc : st_obj_delete(table, key, err);
}

int strata_table_clear(strata_table_t *table, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, true, err);
    return rc ? rc : st_table_clear(table, err);
}

int strata_table_keys(strata_table_t *table, strata_key_t *keys, size_t cap, size_t *count,
                      strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(count, "strata_table_keys", "count", err))) return rc;
    if (cap && !keys)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_table_keys: keys is NULL with cap %zu", cap);
    return st_cluster_keys(table, keys, cap, count, err);
}

int strata_obj_next(strata_table_t *table, strata_key_t after, strata_key_t *key, strata_error *err) {
    LOCAL_ERR;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(key, "strata_obj_next", "key", err))) return rc;
    rc = st_cluster_next_key(table, after, key, err);
    if (rc == STRATA_ERR_NOT_FOUND)
        return st_err(err, rc, "table '%s': no object after key %lld", table->name, (long long)after);
    return rc;
}

int strata_obj_get(strata_table_t *table, strata_key_t key, strata_col_t col, strata_value *out,
                   strata_error *err) {
    LOCAL_ERR;
    st_prop *p;
    st_objref ref;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(out, "strata_obj_get", "out", err)) || (rc = prop_of(table, col, &p, err)))
        return rc;
    if (p->flags & STRATA_PROP_LIST)
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is a list: use the strata_list_ calls",
                      table->name, p->name);
    if (st_pk_always_key(table, p)) { /* the value is the key: only ask whether it is there */
        if ((rc = st_obj_locate_for(table, key, ST_READS_NOTHING, &ref, err))) return rc;
        *out = (strata_value){.type = STRATA_TYPE_INT, .u.i = key};
        return STRATA_OK;
    }
    if ((rc = st_obj_locate_for(table, key, p, &ref, err))) return rc;
    return st_obj_read(table, &ref, p, out, err);
}

int strata_obj_get_many(strata_table_t *table, strata_key_t key, const strata_col_t *cols,
                        size_t ncols, strata_value *out, strata_error *err) {
    LOCAL_ERR;
    enum { BATCH = 32 };
    st_prop *props[BATCH];
    st_objref ref;
    int rc = st_table_check(table, false, err);
    if (rc || (ncols && ((rc = need(cols, "strata_obj_get_many", "cols", err)) ||
                         (rc = need(out, "strata_obj_get_many", "out", err)))))
        return rc;
    if ((rc = st_obj_locate(table, key, &ref, err))) return rc;
    for (size_t at = 0; at < ncols; at += BATCH) { /* reads leave the object where it is */
        size_t m = ncols - at < BATCH ? ncols - at : BATCH;
        for (size_t i = 0; i < m; i++) {
            if ((rc = prop_of(table, cols[at + i], &props[i], err))) return rc;
            if (props[i]->flags & STRATA_PROP_LIST)
                return st_err(err, STRATA_ERR_WRONG_TYPE,
                              "'%s.%s' is a list: use the strata_list_ calls", table->name,
                              props[i]->name);
        }
        if ((rc = st_obj_read_many(table, &ref, props, m, out + at, err))) return rc;
    }
    return STRATA_OK;
}

int strata_obj_set(strata_table_t *table, strata_key_t key, strata_col_t col,
                   const strata_value *value, strata_error *err) {
    LOCAL_ERR;
    st_prop *p;
    int rc = st_table_check(table, true, err);
    if (rc || (rc = need(value, "strata_obj_set", "value", err)) || (rc = prop_of(table, col, &p, err)))
        return rc;
    return st_obj_set_value(table, key, p, value, err);
}

/* ------------------------------------------------------------------ lists */

static int list_call(strata_table_t *t, bool write, strata_key_t key, strata_col_t col, st_list_edit op,
                     size_t a, size_t b, const strata_value *v, size_t *size, strata_value *out,
                     strata_error *err) {
    int rc = st_table_check(t, write, err);
    if (rc) return rc;
    if ((op == ST_LIST_SIZE && !size) || (op == ST_LIST_GET && !out) || ((op == ST_LIST_INSERT || op == ST_LIST_REPLACE) && !v))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "list call on '%s': an argument is NULL", t->name);
    return st_list_op(t, key, col, op, a, b, v, size, out, err);
}

int strata_list_size(strata_table_t *table, strata_key_t key, strata_col_t col, size_t *size,
                     strata_error *err) {
    LOCAL_ERR;
    return list_call(table, false, key, col, ST_LIST_SIZE, 0, 0, NULL, size, NULL, err);
}

int strata_list_get(strata_table_t *table, strata_key_t key, strata_col_t col, size_t index,
                    strata_value *out, strata_error *err) {
    LOCAL_ERR;
    return list_call(table, false, key, col, ST_LIST_GET, index, 0, NULL, NULL, out, err);
}

int strata_list_insert(strata_table_t *table, strata_key_t key, strata_col_t col, size_t index,
                       const strata_value *value, strata_error *err) {
    LOCAL_ERR;
    return list_call(table, true, key, col, ST_LIST_INSERT, index, 0, value, NULL, NULL, err);
}

int strata_list_set(strata_table_t *table, strata_key_t key, strata_col_t col, size_t index,
                    const strata_value *value, strata_error *err) {
    LOCAL_ERR;
    return list_call(table, true, key, col, ST_LIST_REPLACE, index, 0, value, NULL, NULL, err);
}

int strata_list_move(strata_table_t *table, strata_key_t key, strata_col_t col, size_t from,
                     size_t to, strata_error *err) {
    LOCAL_ERR;
    return list_call(table, true, key, col, ST_LIST_MOVE, from, to, NULL, NULL, NULL, err);
}

int strata_list_remove(strata_table_t *table, strata_key_t key, strata_col_t col, size_t index,
                       strata_error *err) {
    LOCAL_ERR;
    return list_call(table, true, key, col, ST_LIST_REMOVE, index, 0, NULL, NULL, NULL, err);
}

int strata_list_clear(strata_table_t *table, strata_key_t key, strata_col_t col, strata_error *err) {
    LOCAL_ERR;
    return list_call(table, true, key, col, ST_LIST_CLEAR, 0, 0, NULL, NULL, NULL, err);
}

/* A set property of table t, or an error naming the call. */
static int set_prop_check(strata_table_t *t, strata_col_t col, const char *call, strata_error *err) {
    st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "%s: table '%s' has no property %u", call, t->name, col);
    if (!(p->flags & STRATA_PROP_SET))
        return st_err(err, STRATA_ERR_WRONG_TYPE, "%s: '%s.%s' is not a set", call, t->name, p->name);
    return STRATA_OK;
}

/* The position of value in the set property col of object key: *found false when absent. The
 * object and property are checked first (errors name them), then the elements are searched. */
static int set_lookup(strata_table_t *t, bool write, strata_key_t key, strata_col_t col, const strata_value *value,
                      const char *call, size_t *at, size_t *size, bool *found, strata_error *err) {
    int rc = st_table_check(t, write, err);
    if (rc || (rc = need(value, call, "value", err)) || (rc = set_prop_check(t, col, call, err)) ||
        (rc = st_list_op(t, key, col, ST_LIST_SIZE, 0, 0, NULL, size, NULL, err)))
        return rc;
    rc = st_list_op(t, key, col, ST_SET_FIND, 0, 0, value, at, NULL, err);
    *found = rc == STRATA_OK;
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

int strata_set_find(strata_table_t *table, strata_key_t key, strata_col_t col, const strata_value *value,
                    size_t *index, strata_error *err) {
    LOCAL_ERR;
    size_t at = 0, n;
    bool found;
    int rc = need(index, "strata_set_find", "index", err);
    if (rc || (rc = set_lookup(table, false, key, col, value, "strata_set_find", &at, &n, &found, err))) return rc;
    if (!found) return st_err(err, STRATA_ERR_NOT_FOUND, "'%s': the set does not hold the value", table->name);
    *index = at;
    return STRATA_OK;
}

int strata_set_insert(strata_table_t *table, strata_key_t key, strata_col_t col, const strata_value *value,
                      bool *inserted, strata_error *err) {
    LOCAL_ERR;
    size_t at, n;
    bool found;
    int rc = set_lookup(table, true, key, col, value, "strata_set_insert", &at, &n, &found, err);
    if (rc) return rc;
    if (inserted) *inserted = !found;
    return found ? STRATA_OK : st_list_op(table, key, col, ST_LIST_INSERT, n, 0, value, NULL, NULL, err);
}

int strata_set_erase(strata_table_t *table, strata_key_t key, strata_col_t col, const strata_value *value,
                     bool *removed, strata_error *err) {
    LOCAL_ERR;
    size_t at, n;
    bool found;
    int rc = set_lookup(table, true, key, col, value, "strata_set_erase", &at, &n, &found, err);
    if (rc) return rc;
    if (removed) *removed = found;
    return found ? st_list_op(table, key, col, ST_LIST_REMOVE, at, 0, NULL, NULL, NULL, err) : STRATA_OK;
}

/* ------------------------------------------------------------------ maps */

/* A map call: the table usable, the key not NULL when it has bytes, then the operation. */
static int map_call(strata_table_t *t, bool write, strata_key_t key, strata_col_t col, st_map_edit op,
                    const char *call, const char *mkey, size_t klen, size_t index,
                    const strata_value *value, bool *changed, strata_value *out, strata_error *err) {
    int rc = st_table_check(t, write, err);
    if (rc) return rc;
    if (op != ST_MAP_KEY_AT && !mkey && klen)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: a key of %zu bytes at NULL", call, klen);
    if ((op == ST_MAP_SET && (rc = need(value, call, "value", err))) ||
        ((op == ST_MAP_GET || op == ST_MAP_KEY_AT) && (rc = need(out, call, "out", err))))
        return rc;
    strata_value mk = {.type = STRATA_TYPE_STRING, .u.bytes = {mkey ? mkey : "", klen}};
    rc = st_map_op(t, key, col, op, &mk, index, value, changed, out, err);
    if (rc == STRATA_ERR_NOT_FOUND && op == ST_MAP_GET)
        return st_err(err, rc, "%s: the map '%s.%s' has no key '%.*s'", call, t->name,
                      st_prop_find(t, col)->name, (int)(klen < 60 ? klen : 60), mkey);
    return rc;
}

int strata_map_set(strata_table_t *table, strata_key_t key, strata_col_t col, const char *map_key,
                   size_t key_len, const strata_value *value, bool *inserted, strata_error *err) {
    LOCAL_ERR;
    return map_call(table, true, key, col, ST_MAP_SET, "strata_map_set", map_key, key_len, 0, value,
                    inserted, NULL, err);
}

int strata_map_get(strata_table_t *table, strata_key_t key, strata_col_t col, const char *map_key,
                   size_t key_len, strata_value *out, strata_error *err) {
    LOCAL_ERR;
    return map_call(table, false, key, col, ST_MAP_GET, "strata_map_get", map_key, key_len, 0, NULL,
                    NULL, out, err);
}

int strata_map_erase(strata_table_t *table, strata_key_t key, strata_col_t col, const char *map_key,
                     size_t key_len, bool *removed, strata_error *err) {
    LOCAL_ERR;
    return map_call(table, true, key, col, ST_MAP_ERASE, "strata_map_erase", map_key, key_len, 0, NULL,
                    removed, NULL, err);
}

int strata_map_key_at(strata_table_t *table, strata_key_t key, strata_col_t col, size_t index,
                      strata_value *out, strata_error *err) {
    LOCAL_ERR;
    return map_call(table, false, key, col, ST_MAP_KEY_AT, "strata_map_key_at", NULL, 0, index, NULL,
                    NULL, out, err);
}

/* ------------------------------------------------------------------ backlinks and indexes */

int strata_obj_backlinks(strata_table_t *table, strata_key_t key, strata_table_t *origin,
                         strata_col_t origin_col, strata_key_t *keys, size_t cap, size_t *count,
                         strata_error *err) {
    LOCAL_ERR;
    st_prop *p;
    st_objref ref;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = st_table_check(origin, false, err)) ||
        (rc = need(count, "strata_obj_backlinks", "count", err)) ||
        (rc = prop_of(origin, origin_col, &p, err)))
        return rc;
    if (origin->txn != table->txn)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tables '%s' and '%s' are of different "
                      "transactions", table->name, origin->name);
    if (p->type != STRATA_TYPE_LINK || p->target != table->id)
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' does not link to table '%s'",
                      origin->name, p->name, table->name);
    if (cap && !keys) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_obj_backlinks: keys is NULL");
    if ((rc = st_obj_locate(table, key, &ref, err))) return rc;
    return st_backlinks_list(table, key, origin, origin_col, keys, cap, count, err);
}

int strata_index_find(strata_table_t *table, strata_col_t col, const strata_value *value,
                      strata_key_t *keys, size_t cap, size_t *count, strata_error *err) {
    LOCAL_ERR;
    st_prop *p;
    int rc = st_table_check(table, false, err);
    if (rc || (rc = need(value, "strata_index_find", "value", err)) ||
        (rc = need(count, "strata_index_find", "count", err)) || (rc = prop_of(table, col, &p, err)))
        return rc;
    if (!(p->flags & STRATA_PROP_INDEXED))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "'%s.%s' is not indexed", table->name, p->name);
    if (cap && !keys) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_index_find: keys is NULL");
    strata_value nv;
    if ((rc = st_value_check(table, p, value, false, &nv, err))) return rc;
    return st_index_find(table, p, &nv, keys, cap, count, err);
}
