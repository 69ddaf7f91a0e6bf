/*
 * tree.c — the named trees of a transaction: the catalog (a byte-key tree whose root and count
 * are in the meta) maps each name to a record {root, count, key kind, flags}; open trees are
 * handles on the transaction's list, written back to the catalog at commit when they changed.
 *
 * Names starting with '$' are reserved for the object layer: only reserved opens use them.
 * A handle's mod_count moves with every change, so iterators and fingers that remember a path
 * into it know when to forget it.
 */
#include "btree/btree.h"

#include <stdlib.h>

/* A transaction's trees (txn->trees). */
struct st_txn_trees {
    strata_tree_t catalog;   /* the catalog tree: name → tree record */
    strata_tree_t *open;     /* open trees, newest first */
    strata_cursor_t *cursors; /* public cursors, freed with the transaction */
};

static void catalog_reset(strata_txn_t *txn) {
    strata_tree_t *c = &txn->trees->catalog;
    memset(c, 0, sizeof *c);
    c->txn = txn;
    c->st.kind = STRATA_KEY_BYTES;
    c->st.root = txn->meta.catalog_root;
    c->st.count = txn->meta.catalog_count;
    memcpy(c->name, "(catalog)", 10);
}

int st_trees_begin(strata_txn_t *txn, strata_error *err) {
    ST_ASSERT(txn->trees == NULL);
    txn->trees = calloc(1, sizeof *txn->trees);
    if (!txn->trees) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    catalog_reset(txn);
    return STRATA_OK;
}

void st_trees_refresh(strata_txn_t *txn) {
    for (strata_tree_t *t = txn->trees->open; t; t = t->next) {
        t->stale = true;
        st_leafdir_free(t);
    }
    catalog_reset(txn);
}

void st_trees_free(strata_txn_t *txn) {
    struct st_txn_trees *tt = txn->trees;
    if (!tt) return;
    for (strata_cursor_t *c = tt->cursors, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    for (strata_tree_t *t = tt->open, *next; t; t = next) {
        next = t->next;
        st_leafdir_free(t);
        free(t);
    }
    free(tt);
    txn->trees = NULL;
}

int st_trees_commit(strata_txn_t *txn, strata_error *err) {
    struct st_txn_trees *tt = txn->trees;
    int rc = STRATA_OK;
    for (strata_tree_t *t = tt->open; t && rc == STRATA_OK; t = t->next) {
        if (!t->dirty || t->dropped) continue;
        uint8_t rec[ST_TREE_RECORD_SIZE] = {0};
        st_wr64(rec, t->st.root);
        st_wr64(rec + 8, t->st.count);
        rec[16] = t->st.kind;
        rec[17] = t->st.tflags;
        rc = st_bt_put(txn, &tt->catalog.st, (const uint8_t *)t->name, t->name_len, rec,
                       sizeof rec, err);
        if (rc == STRATA_OK) t->dirty = false;
    }
    if (rc) {
        st_txn_end(txn);
        return rc;
    }
    return st_txn_commit(txn, tt->catalog.st.root, tt->catalog.st.count, err);
}

int st_tree_record_parse(const char *name, const uint8_t *rec, size_t len, st_tree_state *st,
                         strata_error *err) {
    if (len != ST_TREE_RECORD_SIZE || (rec[16] != STRATA_KEY_INT && rec[16] != STRATA_KEY_BYTES))
        return ST_CORRUPT(err, "catalog record of tree '%s' is malformed (%zu bytes, kind %u)",
                          name, len, len > 16 ? rec[16] : 0);
    st->root = st_rd64(rec);
    st->count = st_rd64(rec + 8);
    st->kind = rec[16];
    st->tflags = rec[17];
    if ((st->root == 0) != (st->count == 0))
        return ST_CORRUPT(err, "catalog record of tree '%s': root %llu with %llu entries",
                          name, (unsigned long long)st->root, (unsigned long long)st->count);
    return STRATA_OK;
}

static const char *kind_name(int kind) {
    return kind == STRATA_KEY_INT ? "integer" : "byte-string";
}

int st_tree_open(strata_txn_t *txn, const char *name, strata_key_kind kind, bool create,
                 bool reserved, strata_tree_t **out, strata_error *err) {
    *out = NULL;
    if (!name || !*name)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_tree_open: empty tree name");
    size_t nlen = strlen(name);
    if (name[0] == '$' && !reserved)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "tree name '%s': names starting with '$' are reserved for objects", name);
    if (nlen > STRATA_MAX_TREE_NAME)
        return st_err(err, STRATA_ERR_TOO_LARGE, "tree name of %zu bytes exceeds %u", nlen,
                      STRATA_MAX_TREE_NAME);
    if (kind != STRATA_KEY_INT && kind != STRATA_KEY_BYTES)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tree '%s': unknown key kind %d", name,
                      (int)kind);
    struct st_txn_trees *tt = txn->trees;
    strata_tree_t *t = tt->open;
    while (t && (t->stale || t->name_len != nlen || memcmp(t->name, name, nlen) != 0)) t = t->next;
    if (t && !t->dropped) {
        if (t->st.kind != kind)
            return st_err(err, STRATA_ERR_WRONG_TYPE, "tree '%s' has %s keys, not %s keys", name,
                          kind_name(t->st.kind), kind_name(kind));
        *out = t;
        return STRATA_OK;
    }
    st_tree_state st = {0, 0, (uint8_t)kind, 0};
    bool exists = false;
    int rc;
    if (!t) {
        const uint8_t *rec;
        size_t rlen;
        rc = st_bt_get(txn, &tt->catalog.st, (const uint8_t *)name, nlen, &rec, &rlen, err);
        if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
        if (rc == STRATA_OK) {
            exists = true;
            if ((rc = st_tree_record_parse(name, rec, rlen, &st, err))) return rc;
            if (st.kind != kind)
                return st_err(err, STRATA_ERR_WRONG_TYPE, "tree '%s' has %s keys, not %s keys",
                              name, kind_name(st.kind), kind_name(kind));
        }
    }
    if (!exists) {
        if (!create) return st_err(err, STRATA_ERR_NOT_FOUND, "no tree named '%s'", name);
        if (!txn->write)
            return st_err(err, STRATA_ERR_READ_ONLY,
                          "cannot create tree '%s' in a read transaction", name);
    }
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        t->txn = txn;
        memcpy(t->name, name, nlen + 1);
        t->name_len = nlen;
        t->next = tt->open;
        tt->open = t;
    }
    t->st = st;
    t->dropped = false;
    t->dirty = !exists; /* a new tree gets its catalog record at commit */
    t->mod_count++;
    *out = t;
    return STRATA_OK;
}

int st_tree_drop(strata_txn_t *txn, strata_tree_t *t, strata_error *err) {
    int rc;
    if ((rc = st_bt_drop(txn, &t->st, err))) return rc;
    rc = st_bt_delete(txn, &txn->trees->catalog.st, (const uint8_t *)t->name, t->name_len, err);
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK; /* created in this transaction */
    if (rc) return st_txn_fail(txn, rc);
    t->dropped = true;
    t->dirty = false;
    t->mod_count++;
    return STRATA_OK;
}

int st_tree_put(strata_tree_t *t, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                strata_error *err) {
    return st_tree_put_near(t, NULL, key, klen, val, vlen, err);
}

int st_tree_del(strata_tree_t *t, const uint8_t *key, size_t klen, strata_error *err) {
    return st_tree_del_near(t, NULL, key, klen, err);
}

/* A finger (f may be NULL) is forgotten when the tree changed by other calls since its last. */
int st_tree_put_near(strata_tree_t *t, st_bt_finger *f, const uint8_t *key, size_t klen,
                     const uint8_t *val, size_t vlen, strata_error *err) {
    ST_ASSERT(t->txn->write && !t->dropped && !t->stale);
    if (f && f->mod != t->mod_count) f->root = 0;
    t->mod_count++;
    t->dirty = true;
    int rc = st_bt_put_near(t->txn, &t->st, f, key, klen, val, vlen, err);
    if (f) f->mod = t->mod_count;
    return rc;
}

int st_tree_del_near(strata_tree_t *t, st_bt_finger *f, const uint8_t *key, size_t klen,
                     strata_error *err) {
    ST_ASSERT(t->txn->write && !t->dropped && !t->stale);
    if (f && f->mod != t->mod_count) f->root = 0;
    int rc = st_bt_delete_near(t->txn, &t->st, f, key, klen, err);
    if (rc != STRATA_ERR_NOT_FOUND) {
        t->mod_count++;
        t->dirty = true;
    }
    if (f) f->mod = t->mod_count;
    return rc;
}

int st_cursor_new(strata_tree_t *t, strata_cursor_t **out, strata_error *err) {
    strata_cursor_t *c = calloc(1, sizeof *c);
    if (!c) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    st_iter_init(&c->it, t);
    struct st_txn_trees *tt = t->txn->trees;
    c->next = tt->cursors;
    tt->cursors = c;
    *out = c;
    return STRATA_OK;
}

void st_cursor_free(strata_cursor_t *cursor) {
    strata_txn_t *txn = cursor->it.tree->txn;
    strata_cursor_t **pp = txn->trees ? &txn->trees->cursors : NULL;
    while (pp && *pp && *pp != cursor) pp = &(*pp)->next;
    if (pp && *pp) *pp = cursor->next;
    free(cursor);
}
