/*
 * embedded.c — embedded tables: objects owned by exactly one parent each, through a to-one link,
 * a list of links or a map of links.
 *
 * Layout: table flag ST_TABLE_EMBEDDED, the byte after the properties in the table record
 * (schema.c; written only when not zero, format 7). Nothing else is stored: the parent is the
 * object's one backlink.
 *
 * Invariants (at every commit): an object of an embedded table has exactly one backlink entry,
 * with count 1. Kept by: a link to an object that already has a parent is refused before
 * anything changes (st_embedded_claim); removing the last link to one deletes it, and with it
 * what it owns (st_embedded_orphaned, called by st_backlink_add); an object created and never
 * linked is deleted at commit (st_embedded_sweep). Making a table embedded checks every object
 * (several parents: refused naming one; none: refused, or deleted when asked).
 */
#include "objects/private.h"

#include <stdio.h>
#include <stdlib.h>

int st_backlinks_any(strata_table_t *t, int64_t key, bool *any, strata_error *err) {
    int n;
    int rc = st_embedded_parents(t, key, &n, err);
    *any = n > 0;
    return rc;
}

/* The parent of (t, key) (its first backlink), for messages. */
static void parent_of(strata_table_t *t, int64_t key, char *out, size_t cap) {
    int64_t keys[1];
    snprintf(out, cap, "another object");
    for (size_t i = 0; i < t->store->ntables; i++) {
        strata_table_t *o = t->store->tables[i];
        for (uint32_t j = 0; !o->dropped && j < o->nprops; j++) {
            st_prop *p = &o->props[j];
            size_t n = 0;
            strata_error e;
            if (p->type != STRATA_TYPE_LINK || p->target != t->id ||
                st_backlinks_list(t, key, o, p->id, keys, 1, &n, &e) || n == 0)
                continue;
            snprintf(out, cap, "'%s.%s' of object %lld", o->name, p->name, (long long)keys[0]);
            return;
        }
    }
}

int st_embedded_claim(strata_table_t *target, int64_t tkey, strata_error *err) {
    if (!st_table_embedded(target)) return STRATA_OK;
    bool any;
    int rc = st_backlinks_any(target, tkey, &any, err);
    if (rc || !any) return rc;
    char parent[2 * STRATA_MAX_NAME + 48];
    parent_of(target, tkey, parent, sizeof parent);
    return st_err(err, STRATA_ERR_EXISTS,
                  "'%s' is embedded and its object %lld already has a parent (%s): an embedded "
                  "object cannot be linked twice", target->name, (long long)tkey, parent);
}

int st_embedded_orphaned(strata_table_t *target, int64_t tkey, strata_error *err) {
    if (!st_table_embedded(target)) return STRATA_OK;
    bool any;
    int rc = st_backlinks_any(target, tkey, &any, err);
    if (rc || any) return rc;
    st_objref ref;
    strata_error e;
    if (st_obj_locate(target, tkey, &ref, &e) == STRATA_ERR_NOT_FOUND) return STRATA_OK; /* being deleted */
    return st_obj_delete(target, tkey, err);
}

int st_embedded_created(strata_table_t *t, int64_t key, strata_error *err) {
    if (t->nfresh == t->capfresh) {
        size_t cap = t->capfresh ? 2 * t->capfresh : 16;
        int64_t *g = realloc(t->fresh, cap * sizeof *g);
        if (!g) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        t->fresh = g;
        t->capfresh = cap;
    }
    t->fresh[t->nfresh++] = key;
    return STRATA_OK;
}

int st_embedded_sweep(st_store *store, strata_error *err) {
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < store->ntables; i++) {
        strata_table_t *t = store->tables[i];
        for (size_t j = 0; rc == STRATA_OK && !t->dropped && st_table_embedded(t) && j < t->nfresh; j++)
            rc = st_embedded_orphaned(t, t->fresh[j], err);
        free(t->fresh);
        t->fresh = NULL;
        t->nfresh = t->capfresh = 0;
    }
    return rc;
}

int st_embedded_parents(strata_table_t *t, int64_t key, int *n, strata_error *err) {
    *n = 0;
    strata_tree_t *bt;
    int rc = st_table_tree_existing(t, ST_TABLE_BACKLINKS, &bt, err);
    if (rc || !bt) return rc;
    uint8_t pre[8];
    st_wr_be64(pre, (uint64_t)key);
    st_iter c;
    st_iter_init(&c, bt);
    for (rc = st_iter_seek(&c, pre, 8, err); rc == STRATA_OK && *n < 2; rc = st_iter_next(&c, err)) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, err))) return rc;
        if (kl != 24 || memcmp(k, pre, 8) != 0) break;
        *n += vl == 4 ? (int)(st_rd32(v) > 1 ? 2 : 1) : 2;
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

int st_table_set_embedded(strata_table_t *t, bool embedded, bool delete_orphans, strata_error *err) {
    if (embedded == st_table_embedded(t)) return STRATA_OK;
    if (!embedded) {
        t->tflags &= (uint8_t)~ST_TABLE_EMBEDDED;
        t->dirty = true;
        return STRATA_OK;
    }
    if (t->pk_col)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "table '%s' has a primary key: an embedded table cannot have one", t->name);
    /* checked whole first: nothing changes when an object has several parents, or none */
    int64_t key = -1;
    int rc;
    size_t orphans = 0;
    int64_t first_orphan = -1;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        int n;
        if ((rc = st_embedded_parents(t, key, &n, err))) return rc;
        if (n > 1)
            return st_err(err, STRATA_ERR_EXISTS,
                          "table '%s' cannot become embedded: its object %lld has more than one "
                          "parent", t->name, (long long)key);
        if (n == 0 && orphans++ == 0) first_orphan = key;
    }
    if (rc != STRATA_ERR_NOT_FOUND) return rc;
    if (orphans && !delete_orphans)
        return st_err(err, STRATA_ERR_EXISTS,
                      "table '%s' cannot become embedded: %zu of its objects (object %lld first) "
                      "have no parent", t->name, orphans, (long long)first_orphan);
    key = -1;
    while (orphans && (rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        int n;
        if ((rc = st_embedded_parents(t, key, &n, err)) || (n == 0 && (rc = st_obj_delete(t, key, err))))
            return st_txn_fail(t->txn, rc);
    }
    t->tflags |= ST_TABLE_EMBEDDED;
    t->dirty = true;
    return STRATA_OK;
}
