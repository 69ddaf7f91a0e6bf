/*
 * schema.c — the catalog of tables and properties, and the object layer's per-transaction state.
 *
 * Stored in the byte-key tree "$schema":
 *   "v"              u64 schema version
 *   "n"              u32 next table id (ids start at 1 and are never reused)
 *   "t" + BE u32 id  table record:
 *       u32 id | u32 next property id | u32 primary-key property id (0 = none) | u32 nprops |
 *       i64 next object key | u64 object count | u64 next list id | u8 name length | name |
 *       nprops × { u32 id | u8 type | u8 flags | u32 link target table id | u8 name length | name }
 *       [u8 table flags: 1 = embedded (embedded.c); format 7, present only when not zero]
 *
 * Invariants: table and property names are unique (within the file / the table), 1..63 bytes;
 * property ids and object keys only grow; a LINK property's target exists; the primary key is a
 * property flagged STRATA_PROP_PRIMARY_KEY | STRATA_PROP_INDEXED and no other has that flag;
 * flag 0x80 (ST_PROP_PK_DIRECT, objects.h) marks an integer primary key whose objects may
 * have it as their key (format 2).
 * The table record is rewritten at commit when the table changed (count, next key, schema).
 */
#include "objects/private.h"

#include <stdio.h>
#include <stdlib.h>

const char *st_type_name(strata_type type) {
    static const char *const names[] = {"null", "bool", "int", "float", "double", "string",
                                        "binary", "timestamp", "objectId", "uuid", "decimal128",
                                        "link", "mixed", "list", "typedLink", "geo"};
    return (unsigned)type < sizeof names / sizeof *names ? names[type] : "unknown type";
}

/* ------------------------------------------------------------------ arena */

void *st_arena_alloc(st_store *store, size_t n) {
    n = (n + 7) & ~(size_t)7;
    st_arena_chunk *c = store->arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > 65536 ? n : 65536;
        c = malloc(sizeof *c + cap);
        if (!c) return NULL;
        c->used = 0;
        c->cap = cap;
        c->next = store->arena;
        store->arena = c;
    }
    void *p = c->data + c->used;
    c->used += n;
    return p;
}

static void arena_free(st_store *store) {
    for (st_arena_chunk *c = store->arena, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    store->arena = NULL;
}

/* ------------------------------------------------------------------ table records */

typedef struct rbuf {
    const uint8_t *p;
    size_t len, off;
    bool bad;
} rbuf;

static const uint8_t *take(rbuf *r, size_t n) {
    if (r->bad || r->len - r->off < n) {
        r->bad = true;
        return NULL;
    }
    const uint8_t *p = r->p + r->off;
    r->off += n;
    return p;
}
static uint32_t take32(rbuf *r) { const uint8_t *p = take(r, 4); return p ? st_rd32(p) : 0; }
static uint64_t take64(rbuf *r) { const uint8_t *p = take(r, 8); return p ? st_rd64(p) : 0; }
static uint8_t take8(rbuf *r) { const uint8_t *p = take(r, 1); return p ? *p : 0; }
static bool take_name(rbuf *r, char *out) {
    uint8_t n = take8(r);
    const uint8_t *p = take(r, n);
    if (!p || n == 0 || n > STRATA_MAX_NAME) return false;
    memcpy(out, p, n);
    out[n] = 0;
    return true;
}

static int table_parse(st_store *store, const uint8_t *rec, size_t len, strata_table_t **out,
                       strata_error *err) {
    rbuf r = {rec, len, 0, false};
    strata_table_t *t = calloc(1, sizeof *t);
    if (!t) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    t->store = store;
    t->txn = store->txn;
    t->id = take32(&r);
    t->next_col_id = take32(&r);
    t->pk_col = take32(&r);
    t->nprops = take32(&r);
    t->next_key = (int64_t)take64(&r);
    t->count = take64(&r);
    t->next_list_id = take64(&r);
    bool ok = take_name(&r, t->name) && !r.bad && t->nprops < 4096;
    if (ok) t->props = calloc(t->nprops ? t->nprops : 1, sizeof *t->props);
    for (uint32_t i = 0; ok && i < t->nprops; i++) {
        st_prop *p = &t->props[i];
        p->id = take32(&r);
        p->type = take8(&r);
        p->flags = take8(&r);
        p->target = take32(&r);
        ok = take_name(&r, p->name) && p->id > 0 && p->id < t->next_col_id &&
             p->type >= STRATA_TYPE_BOOL && p->type <= STRATA_TYPE_MIXED;
    }
    if (ok && r.off < len) t->tflags = take8(&r); /* format 7: table flags, when not zero */
    if (!ok || r.bad || r.off != len || t->next_key < 0 || (t->tflags & ~ST_TABLE_EMBEDDED)) {
        free(t->props);
        free(t);
        return ST_CORRUPT(err, "schema: table record of %zu bytes is malformed", len);
    }
    *out = t;
    return STRATA_OK;
}

static size_t table_record(const strata_table_t *t, uint8_t *out) {
    size_t o = 0;
#define PUT32(v) (out ? st_wr32(out + o, (v)) : (void)0, o += 4)
#define PUT64(v) (out ? st_wr64(out + o, (v)) : (void)0, o += 8)
#define PUT8(v) (out ? (void)(out[o] = (uint8_t)(v)) : (void)0, o += 1)
#define PUTNAME(s) do { size_t l_ = strlen(s); PUT8(l_); if (out) memcpy(out + o, s, l_); o += l_; } while (0)
    PUT32(t->id);
    PUT32(t->next_col_id);
    PUT32(t->pk_col);
    PUT32(t->nprops);
    PUT64((uint64_t)t->next_key);
    PUT64(t->count);
    PUT64(t->next_list_id);
    PUTNAME(t->name);
    for (uint32_t i = 0; i < t->nprops; i++) {
        const st_prop *p = &t->props[i];
        PUT32(p->id);
        PUT8(p->type);
        PUT8(p->flags);
        PUT32(p->target);
        PUTNAME(p->name);
    }
    if (t->tflags) PUT8(t->tflags);
#undef PUT32
#undef PUT64
#undef PUT8
#undef PUTNAME
    return o;
}

static void table_key(uint32_t id, uint8_t key[5]) {
    key[0] = 't';
    key[1] = (uint8_t)(id >> 24);
    key[2] = (uint8_t)(id >> 16);
    key[3] = (uint8_t)(id >> 8);
    key[4] = (uint8_t)id;
}

/* ------------------------------------------------------------------ the per-transaction state */

static int schema_tree(st_store *store, bool create, strata_error *err) {
    if (store->schema_tree && !store->schema_tree->dropped) return STRATA_OK;
    return st_tree_open(store->txn, "$schema", STRATA_KEY_BYTES, create, true, &store->schema_tree, err);
}

static int table_name_cmp(const void *a, const void *b) {
    return strcmp((*(strata_table_t *const *)a)->name, (*(strata_table_t *const *)b)->name);
}

static int os_load(st_store *store, strata_error *err) {
    int rc = schema_tree(store, false, err);
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK; /* no object has been stored yet */
    if (rc) return rc;
    const uint8_t *v;
    size_t vl;
    rc = st_bt_get(store->txn, &store->schema_tree->st, (const uint8_t *)"v", 1, &v, &vl, err);
    if (rc == STRATA_OK && vl == 8) store->schema_version = st_rd64(v);
    else if (rc != STRATA_ERR_NOT_FOUND) return rc ? rc : ST_CORRUPT(err, "schema: bad version entry");
    rc = st_bt_get(store->txn, &store->schema_tree->st, (const uint8_t *)"n", 1, &v, &vl, err);
    if (rc == STRATA_OK && vl == 4) store->next_table_id = st_rd32(v);
    else if (rc != STRATA_ERR_NOT_FOUND) return rc ? rc : ST_CORRUPT(err, "schema: bad table id entry");
    st_iter c;
    st_iter_init(&c, store->schema_tree);
    for (rc = st_iter_seek(&c, (const uint8_t *)"t", 1, err); rc == STRATA_OK;
         rc = st_iter_next(&c, err)) {
        const uint8_t *k;
        size_t kl;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, err))) return rc;
        if (kl != 5 || k[0] != 't') break;
        strata_table_t *t = NULL;
        if ((rc = table_parse(store, v, vl, &t, err))) return rc;
        strata_table_t **grown = realloc(store->tables, (store->ntables + 1) * sizeof *grown);
        if (!grown) {
            free(t->props);
            free(t);
            return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        }
        store->tables = grown;
        store->tables[store->ntables++] = t;
    }
    if (rc != STRATA_OK && rc != STRATA_ERR_NOT_FOUND) return rc;
    if (store->ntables) qsort(store->tables, store->ntables, sizeof *store->tables, table_name_cmp);
    for (size_t i = 0; i < store->ntables; i++)
        for (uint32_t j = 0; j < store->tables[i]->nprops; j++) {
            st_prop *p = &store->tables[i]->props[j];
            if (p->type == STRATA_TYPE_LINK && !st_table_by_id(store, p->target))
                return ST_CORRUPT(err, "schema: '%s.%s' links to table id %u, which does not exist",
                                  store->tables[i]->name, p->name, p->target);
        }
    return STRATA_OK;
}

int st_store_get(strata_txn_t *txn, st_store **out, strata_error *err) {
    if (txn->store) {
        *out = txn->store;
        return STRATA_OK;
    }
    st_store *store = calloc(1, sizeof *store);
    if (!store) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    store->txn = txn;
    store->next_table_id = 1;
    txn->store = store;
    int rc = os_load(store, err);
    if (rc) {
        if (txn->write) st_txn_fail(txn, rc);
        return rc;
    }
    *out = store;
    return STRATA_OK;
}

static void table_release(strata_table_t *t) {
    st_list_cache_free(&t->lcache);
    free(t->fresh);
    t->fresh = NULL;
    t->nfresh = t->capfresh = 0;
    for (uint32_t i = 0; i < t->nprops; i++) st_index_discard(&t->props[i]);
    st_clusters_forget(t);
    st_cdir_free(t);
    free(t->dc);
    t->dc = NULL;
    t->ndc = t->capdc = 0;
}

/* Free what the state holds, keeping the table structs (handles may still be asked, and must
 * answer with an error). */
static void os_release(st_store *store) {
    for (size_t i = 0; i < store->ntables; i++) table_release(store->tables[i]);
    arena_free(store);
}

static void os_destroy(st_store *store) {
    os_release(store);
    for (size_t i = 0; i < store->ntables; i++) {
        free(store->tables[i]->props);
        free(store->tables[i]);
    }
    free(store->tables);
    free(store);
}

void st_store_end(strata_txn_t *txn) {
    for (st_store *store = txn->store; store; store = store->older) os_release(store);
}

void st_store_stale(strata_txn_t *txn) {
    if (!txn->store) return;
    for (size_t i = 0; i < txn->store->ntables; i++) txn->store->tables[i]->stale = true;
    os_release(txn->store);
    st_store *old = txn->store;
    txn->store = NULL;
    /* keep it (its handles answer "stale") until the transaction is freed */
    old->older = txn->store_dead;
    txn->store_dead = old;
}

void st_store_free(strata_txn_t *txn) {
    st_store_stale(txn);
    for (st_store *store = txn->store_dead, *next; store; store = next) {
        next = store->older;
        os_destroy(store);
    }
    txn->store_dead = NULL;
}

int st_store_flush(strata_txn_t *txn, strata_error *err) {
    st_store *store = txn->store;
    if (!store) return STRATA_OK;
    int rc = st_embedded_sweep(store, err);
    if (rc) return st_txn_fail(txn, rc);
    for (size_t i = 0; i < store->ntables; i++) {
        strata_table_t *t = store->tables[i];
        if (t->dropped) continue;
        if ((rc = st_clusters_flush(t, err))) return rc;
        for (uint32_t j = 0; j < t->nprops; j++)
            if ((rc = st_index_apply(t, &t->props[j], err))) return rc;
        if (!t->dirty) continue;
        if ((rc = schema_tree(store, true, err))) return rc;
        size_t len = table_record(t, NULL);
        uint8_t *rec = malloc(len);
        if (!rec) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        table_record(t, rec);
        uint8_t key[5];
        table_key(t->id, key);
        rc = st_tree_put(store->schema_tree, key, 5, rec, len, err);
        free(rec);
        if (rc) return rc;
        t->dirty = false;
    }
    if (store->header_dirty) {
        if ((rc = schema_tree(store, true, err))) return rc;
        uint8_t v[8], n[4];
        st_wr64(v, store->schema_version);
        st_wr32(n, store->next_table_id);
        if ((rc = st_tree_put(store->schema_tree, (const uint8_t *)"v", 1, v, 8, err)) ||
            (rc = st_tree_put(store->schema_tree, (const uint8_t *)"n", 1, n, 4, err)))
            return rc;
        store->header_dirty = false;
    }
    return STRATA_OK;
}

/* ------------------------------------------------------------------ lookups */

st_prop *st_prop_find(const strata_table_t *t, uint32_t col) {
    for (uint32_t i = 0; i < t->nprops; i++)
        if (t->props[i].id == col) return &t->props[i];
    return NULL;
}

strata_table_t *st_table_by_id(st_store *store, uint32_t id) {
    for (size_t i = 0; i < store->ntables; i++)
        if (store->tables[i]->id == id && !store->tables[i]->dropped) return store->tables[i];
    return NULL;
}

strata_table_t *st_table_by_name(st_store *store, const char *name) {
    for (size_t i = 0; i < store->ntables; i++)
        if (!store->tables[i]->dropped && strcmp(store->tables[i]->name, name) == 0) return store->tables[i];
    return NULL;
}

int st_table_check(strata_table_t *t, bool write, strata_error *err) {
    if (!t) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the table is NULL");
    int rc = st_txn_check(t->txn, write, err);
    if (rc) return rc;
    if (t->stale)
        return st_err(err, STRATA_ERR_TXN_STATE,
                      "table '%s' was opened before the transaction was refreshed", t->name);
    if (t->dropped) return st_err(err, STRATA_ERR_TXN_STATE, "table '%s' was dropped", t->name);
    return STRATA_OK;
}

/* Each of a table's trees: its name's letter ("$t<id>.<letter>"), its key kind, and its bit in
 * absent_trees. */
static const struct {
    char letter;
    strata_key_kind kind;
    uint8_t bit;
} table_trees[] = {
    [ST_TABLE_CLUSTERS] = {'c', STRATA_KEY_INT, 1},
    [ST_TABLE_LISTS] = {'l', STRATA_KEY_INT, 2},
    [ST_TABLE_BACKLINKS] = {'b', STRATA_KEY_BYTES, 4},
};

static strata_tree_t **table_tree_slot(strata_table_t *t, st_table_tree_kind which) {
    switch (which) {
    case ST_TABLE_CLUSTERS: return &t->clusters;
    case ST_TABLE_LISTS: return &t->lists;
    case ST_TABLE_BACKLINKS: return &t->backlinks;
    }
    return NULL;
}

int st_table_tree_existing(strata_table_t *t, st_table_tree_kind which, strata_tree_t **out,
                           strata_error *err) {
    strata_tree_t *open = *table_tree_slot(t, which);
    *out = NULL;
    if (!(open && !open->dropped) && (t->absent_trees & table_trees[which].bit)) return STRATA_OK;
    int rc = st_table_tree(t, which, false, out, err);
    if (rc == STRATA_ERR_NOT_FOUND) {
        *out = NULL;
        return STRATA_OK;
    }
    return rc;
}

int st_table_tree(strata_table_t *t, st_table_tree_kind which, bool create, strata_tree_t **out,
                  strata_error *err) {
    strata_tree_t **slot = table_tree_slot(t, which);
    if (*slot && !(*slot)->dropped) {
        *out = *slot;
        return STRATA_OK;
    }
    uint8_t bit = table_trees[which].bit;
    if (!create && (t->absent_trees & bit)) /* looked for already: a delete asks every time */
        return st_err(err, STRATA_ERR_NOT_FOUND, "no tree named '$t%u.%c'", t->id, table_trees[which].letter);
    char name[40];
    snprintf(name, sizeof name, "$t%u.%c", t->id, table_trees[which].letter);
    int rc = st_tree_open(t->txn, name, table_trees[which].kind, create && t->txn->write, true,
                          slot, err);
    if (rc == STRATA_ERR_NOT_FOUND && !create) t->absent_trees |= bit;
    if (rc) return rc;
    t->absent_trees &= (uint8_t)~bit;
    if (which == ST_TABLE_CLUSTERS) (*slot)->st.tflags |= ST_TREE_CLUSTERS;
    *out = *slot;
    return STRATA_OK;
}

int st_prop_index_tree(strata_table_t *t, st_prop *p, bool create, strata_tree_t **out,
                       strata_error *err) {
    int rc = st_index_apply(t, p, err);
    return rc ? rc : st_prop_index_tree_raw(t, p, create, out, err);
}

int st_prop_index_tree_raw(strata_table_t *t, st_prop *p, bool create, strata_tree_t **out,
                           strata_error *err) {
    if (p->index && !p->index->dropped) {
        *out = p->index;
        return STRATA_OK;
    }
    char name[40];
    snprintf(name, sizeof name, "$t%u.i%u", t->id, p->id);
    int rc = st_tree_open(t->txn, name, STRATA_KEY_BYTES, create && t->txn->write, true, &p->index, err);
    if (rc == STRATA_OK) *out = p->index;
    return rc;
}

/* ------------------------------------------------------------------ schema changes */

static int check_name(const char *what, const char *name, strata_error *err) {
    if (!name || !*name) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s name is empty", what);
    size_t n = strlen(name);
    if (n > STRATA_MAX_NAME)
        return st_err(err, STRATA_ERR_TOO_LARGE, "%s name '%.40s...' has %zu bytes (at most %u)",
                      what, name, n, STRATA_MAX_NAME);
    return STRATA_OK;
}

int st_schema_get_version(strata_txn_t *txn, uint64_t *v, strata_error *err) {
    st_store *store = NULL;
    int rc = st_store_get(txn, &store, err);
    if (rc == STRATA_OK) *v = store->schema_version;
    return rc;
}

int st_schema_set_version(strata_txn_t *txn, uint64_t v, strata_error *err) {
    st_store *store = NULL;
    int rc = st_store_get(txn, &store, err);
    if (rc) return rc;
    store->schema_version = v;
    store->header_dirty = true;
    return STRATA_OK;
}

int st_table_create(strata_txn_t *txn, const char *name, strata_table_t **out, strata_error *err) {
    int rc = check_name("table", name, err);
    if (rc) return rc;
    st_store *store = NULL;
    if ((rc = st_store_get(txn, &store, err))) return rc;
    if (st_table_by_name(store, name))
        return st_err(err, STRATA_ERR_EXISTS, "table '%s' already exists", name);
    strata_table_t *t = calloc(1, sizeof *t);
    strata_table_t **grown = realloc(store->tables, (store->ntables + 1) * sizeof *grown);
    if (!t || !grown) {
        free(t);
        if (grown) store->tables = grown;
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    }
    store->tables = grown;
    t->store = store;
    t->txn = txn;
    t->id = store->next_table_id++;
    snprintf(t->name, sizeof t->name, "%s", name);
    t->next_col_id = 1;
    t->next_list_id = 1;
    t->dirty = true;
    store->header_dirty = true;
    store->tables[store->ntables++] = t;
    if (store->ntables) qsort(store->tables, store->ntables, sizeof *store->tables, table_name_cmp);
    *out = t;
    return STRATA_OK;
}

int st_table_open(strata_txn_t *txn, const char *name, strata_table_t **out, strata_error *err) {
    if (!name) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "table name is NULL");
    st_store *store = NULL;
    int rc = st_store_get(txn, &store, err);
    if (rc) return rc;
    strata_table_t *t = st_table_by_name(store, name);
    if (!t) return st_err(err, STRATA_ERR_NOT_FOUND, "no table named '%s'", name);
    *out = t;
    return STRATA_OK;
}

int st_table_drop(strata_txn_t *txn, const char *name, strata_error *err) {
    strata_table_t *t;
    int rc = st_table_open(txn, name, &t, err);
    if (rc) return rc;
    st_store *store = t->store;
    for (size_t i = 0; i < store->ntables; i++) {
        strata_table_t *o = store->tables[i];
        if (o == t || o->dropped) continue;
        for (uint32_t j = 0; j < o->nprops; j++)
            if (o->props[j].type == STRATA_TYPE_LINK && o->props[j].target == t->id)
                return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                              "table '%s' cannot be dropped: '%s.%s' links to it", name, o->name,
                              o->props[j].name);
    }
    /* Unlink its objects from other tables' backlinks (and its own lists), then free it all. */
    if ((rc = st_table_clear(t, err))) return st_txn_fail(txn, rc);
    for (uint32_t j = 0; j < t->nprops; j++) {
        strata_tree_t *ix;
        st_index_discard(&t->props[j]);
        if (st_prop_index_tree(t, &t->props[j], false, &ix, err) == STRATA_OK &&
            (rc = st_tree_drop(txn, ix, err)))
            return st_txn_fail(txn, rc);
    }
    if ((rc = st_clusters_drop_all(t, err))) return st_txn_fail(txn, rc);
    for (st_table_tree_kind which = ST_TABLE_CLUSTERS; which <= ST_TABLE_BACKLINKS; which++) {
        strata_tree_t *tr;
        if (st_table_tree(t, which, false, &tr, err) == STRATA_OK &&
            (rc = st_tree_drop(txn, tr, err)))
            return st_txn_fail(txn, rc);
    }
    uint8_t key[5];
    table_key(t->id, key);
    if ((rc = schema_tree(store, true, err))) return st_txn_fail(txn, rc);
    rc = st_tree_del(store->schema_tree, key, 5, err);
    if (rc && rc != STRATA_ERR_NOT_FOUND) return st_txn_fail(txn, rc);
    t->dropped = true;
    t->dirty = false;
    return STRATA_OK;
}

static bool type_valid(int type) { return type >= STRATA_TYPE_BOOL && type <= STRATA_TYPE_MIXED; }

int st_prop_add(strata_table_t *t, const char *name, strata_type type, unsigned flags,
                const char *link_target, strata_col_t *col, strata_error *err) {
    int rc = check_name("property", name, err);
    if (rc) return rc;
    if (!type_valid(type))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "property '%s.%s': unknown type %d",
                      t->name, name, (int)type);
    if (flags & ~(unsigned)(STRATA_PROP_NULLABLE | STRATA_PROP_INDEXED | STRATA_PROP_PRIMARY_KEY |
                            STRATA_PROP_LIST | STRATA_PROP_SET | STRATA_PROP_MAP |
                            STRATA_PROP_FULLTEXT))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "property '%s.%s': unknown flags 0x%x",
                      t->name, name, flags);
    if ((flags & STRATA_PROP_SET) && (flags & STRATA_PROP_MAP))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "property '%s.%s': a set cannot be a map",
                      t->name, name);
    if (flags & (STRATA_PROP_SET | STRATA_PROP_MAP)) flags |= STRATA_PROP_LIST; /* stored as a list */
    for (uint32_t i = 0; i < t->nprops; i++)
        if (strcmp(t->props[i].name, name) == 0)
            return st_err(err, STRATA_ERR_EXISTS, "table '%s' already has a property '%s'",
                          t->name, name);
    uint32_t target = 0;
    if (type == STRATA_TYPE_LINK) {
        if (!link_target)
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                          "link property '%s.%s' needs a target table", t->name, name);
        strata_table_t *tt = st_table_by_name(t->store, link_target);
        if (!tt)
            return st_err(err, STRATA_ERR_NOT_FOUND, "link property '%s.%s': no table named '%s'",
                          t->name, name, link_target);
        target = tt->id;
        if (!(flags & STRATA_PROP_LIST)) flags |= STRATA_PROP_NULLABLE;
    } else if (link_target) {
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "property '%s.%s' is a %s, not a link: it takes no target table", t->name,
                      name, st_type_name(type));
    }
    bool list = flags & STRATA_PROP_LIST;
    if ((flags & (STRATA_PROP_INDEXED | STRATA_PROP_PRIMARY_KEY)) &&
        (list || !st_type_indexable((uint8_t)type)))
        return st_err(err, STRATA_ERR_WRONG_TYPE, "property '%s.%s': a %s%s cannot be indexed",
                      t->name, name, list ? "list of " : "", st_type_name(type));
    if (flags & STRATA_PROP_FULLTEXT) {
        st_prop probe = {.type = (uint8_t)type};
        snprintf(probe.name, sizeof probe.name, "%s", name);
        if ((rc = st_fulltext_check(t, &probe, flags, err))) return rc;
    }
    bool want_pk = flags & STRATA_PROP_PRIMARY_KEY;
    flags &= ~(unsigned)STRATA_PROP_PRIMARY_KEY;
    if (want_pk && st_table_embedded(t))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "'%s.%s' cannot be the primary key: '%s' is embedded", t->name, name, t->name);
    /* All or nothing: what can be refused is refused before the property exists. */
    if (want_pk && !st_pk_type_ok((uint8_t)type))
        return st_err(err, STRATA_ERR_WRONG_TYPE,
                      "'%s.%s' cannot be the primary key: a %s (int, string, objectId or uuid only)",
                      t->name, name, st_type_name(type));
    if (want_pk && t->count > 1)
        return st_err(err, STRATA_ERR_EXISTS,
                      "table '%s': a new property '%s' cannot be the primary key: its %llu objects "
                      "would all share its default value", t->name, name,
                      (unsigned long long)t->count);
    /* Decoded clusters are written with the old schema first. */
    if ((rc = st_clusters_flush(t, err))) return rc;
    st_prop *grown = realloc(t->props, (t->nprops + 1) * sizeof *grown);
    if (!grown) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    t->props = grown;
    st_prop *p = &t->props[t->nprops];
    memset(p, 0, sizeof *p);
    p->id = t->next_col_id++;
    snprintf(p->name, sizeof p->name, "%s", name);
    p->type = (uint8_t)type;
    p->flags = (uint8_t)(flags & ~(unsigned)(STRATA_PROP_INDEXED | STRATA_PROP_FULLTEXT));
    p->target = target;
    t->nprops++;
    t->dirty = true;
    uint32_t id = p->id;
    if ((flags & STRATA_PROP_INDEXED) && (rc = st_index_build(t, p, false, err)) == STRATA_OK)
        p->flags |= STRATA_PROP_INDEXED;
    if (rc == STRATA_OK && (flags & STRATA_PROP_FULLTEXT)) rc = st_set_fulltext(t, id, true, err);
    if (rc == STRATA_OK && want_pk) rc = st_set_primary_key(t, id, err);
    if (rc) { /* a failure before any index entry was written leaves no trace; after, the
                 transaction already failed (it can only be aborted) */
        if (!st_prop_has_index(&t->props[t->nprops - 1])) t->nprops--;
        else st_txn_fail(t->txn, rc);
        return rc;
    }
    *col = id;
    return STRATA_OK;
}

int st_prop_rename(strata_table_t *t, uint32_t col, const char *name, strata_error *err) {
    int rc = check_name("property", name, err);
    if (rc) return rc;
    st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", t->name, col);
    for (uint32_t i = 0; i < t->nprops; i++)
        if (t->props[i].id != col && strcmp(t->props[i].name, name) == 0)
            return st_err(err, STRATA_ERR_EXISTS, "table '%s' already has a property '%s'",
                          t->name, name);
    snprintf(p->name, sizeof p->name, "%s", name);
    t->dirty = true;
    return STRATA_OK;
}
