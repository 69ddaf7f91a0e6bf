/*
 * treecheck.c — the walk of a tree's pages for an integrity check (strata_db_verify, recovery):
 * every page marked in the page accounting (storage/pagecheck.c) and proved well formed —
 * kinds, bounds, keys ascending and inside the range the parent gives, leaves all at one depth,
 * no empty node but an empty root, counts as recorded, big values' runs marked and summed.
 * The first failure is reported through ST_CORRUPT, naming the page and what was wrong.
 */
#include "btree/btree.h"

typedef struct bound {
    const uint8_t *key;
    size_t len;
    bool set;
} bound;

static bool below(uint8_t kind, const uint8_t *k, size_t kl, const bound *hi) {
    return !hi->set || st_key_cmp(kind, k, kl, hi->key, hi->len) < 0;
}

static bool at_or_above(uint8_t kind, const uint8_t *k, size_t kl, const bound *lo) {
    return !lo->set || st_key_cmp(kind, k, kl, lo->key, lo->len) >= 0;
}

static int walk(st_pagecheck *v, uint8_t kind, pgno_t pg, int depth, bound lo, bound hi, int *leaf_depth,
                uint64_t *count, st_tree_check_entry fn, void *arg) {
    int rc;
    if (depth >= ST_MAX_DEPTH)
        return ST_CORRUPT(v->err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                          (unsigned long long)pg);
    if ((rc = st_pagecheck_mark(v, pg, 1, ST_REACH_USED, "tree"))) return rc;
    const uint8_t *p;
    if ((rc = st_page_get(v->txn, pg, &p, v->err)) || (rc = st_node_check(p, pg, kind, v->err)) ||
        (rc = st_pagecheck_sum(v, p, pg, 1)))
        return rc;
    int n = pg_nkeys(p);
    if (pg_kind(p) == ST_PAGE_LEAF) {
        if (*leaf_depth < 0) *leaf_depth = depth;
        if (*leaf_depth != depth)
            return ST_CORRUPT(v->err, "leaf page %llu at depth %d, other leaves at depth %d",
                              (unsigned long long)pg, depth, *leaf_depth);
        if (n == 0)
            return ST_CORRUPT(v->err, "leaf page %llu is empty", (unsigned long long)pg);
        st_leaf_cell prev = {0};
        for (int i = 0; i < n; i++) {
            st_leaf_cell c;
            if ((rc = st_leaf_cell_at(p, pg, i, &c, v->err))) return rc;
            if (i > 0 && st_key_cmp(kind, prev.key, prev.klen, c.key, c.klen) >= 0)
                return ST_CORRUPT(v->err, "leaf page %llu: key %d is not above key %d",
                                  (unsigned long long)pg, i, i - 1);
            if (!at_or_above(kind, c.key, c.klen, &lo) || !below(kind, c.key, c.klen, &hi))
                return ST_CORRUPT(v->err, "leaf page %llu: key %d is outside its parent's range",
                                  (unsigned long long)pg, i);
            bool heads = pg_heads(p);
            size_t plen = heads ? p[LH_PLEN] : 0;
            if (heads && (c.klen < plen || memcmp(c.key, p + LH_PREFIX, plen) != 0))
                return ST_CORRUPT(v->err, "leaf page %llu: key %d lacks the page's prefix",
                                  (unsigned long long)pg, i);
            if (heads && pg_head(p, i) != st_key_head(c.key, c.klen, plen))
                return ST_CORRUPT(v->err, "leaf page %llu: key %d has a wrong head",
                                  (unsigned long long)pg, i);
            const uint8_t *val = c.val;
            if (c.big) {
                uint32_t run;
                if ((rc = st_overflow_get(v->txn, c.ovf, c.vlen, &val, &run, v->err)) ||
                    (rc = st_pagecheck_mark(v, c.ovf, run, ST_REACH_USED, "overflow")) ||
                    (rc = st_pagecheck_sum(v, val - PH_SIZE, c.ovf, run)))
                    return rc;
            } else if (c.vlen + 8 + c.klen > ST_MAX_INLINE_CELL) {
                return ST_CORRUPT(v->err, "leaf page %llu: key %d has an inline value of %u bytes",
                                  (unsigned long long)pg, i, c.vlen);
            }
            if (fn && (rc = fn(v, &c, val, arg))) return rc;
            (*count)++;
            prev = c;
        }
        return STRATA_OK;
    }
    for (int i = 0; i < n; i++) {
        pgno_t child;
        const uint8_t *k;
        size_t kl;
        if ((rc = st_branch_cell_at(p, pg, i, &child, &k, &kl, v->err))) return rc;
        if (i == 0 && kl != 0)
            return ST_CORRUPT(v->err, "branch page %llu: first cell has a key",
                              (unsigned long long)pg);
        bound clo = i == 0 ? lo : (bound){k, kl, true};
        if (i > 0 && (!at_or_above(kind, k, kl, &lo) || !below(kind, k, kl, &hi)))
            return ST_CORRUPT(v->err, "branch page %llu: key %d is outside its parent's range",
                              (unsigned long long)pg, i);
        bound chi = hi;
        if (i + 1 < n) {
            pgno_t c2;
            const uint8_t *k2;
            size_t kl2;
            if ((rc = st_branch_cell_at(p, pg, i + 1, &c2, &k2, &kl2, v->err))) return rc;
            if (i > 0 && st_key_cmp(kind, k, kl, k2, kl2) >= 0)
                return ST_CORRUPT(v->err, "branch page %llu: key %d is not above key %d",
                                  (unsigned long long)pg, i + 1, i);
            chi = (bound){k2, kl2, true};
        }
        if ((rc = walk(v, kind, child, depth + 1, clo, chi, leaf_depth, count, fn, arg))) return rc;
    }
    return STRATA_OK;
}

int st_tree_check(st_pagecheck *v, const char *name, const st_tree_state *t,
                  st_tree_check_entry fn, void *arg) {
    if (!t->root) {
        if (t->count)
            return ST_CORRUPT(v->err, "tree '%s' is empty but records %llu entries", name,
                              (unsigned long long)t->count);
        return STRATA_OK;
    }
    int leaf_depth = -1;
    uint64_t count = 0;
    bound none = {NULL, 0, false};
    int rc = walk(v, t->kind, t->root, 0, none, none, &leaf_depth, &count, fn, arg);
    if (rc) return rc;
    if (count != t->count)
        return ST_CORRUPT(v->err, "tree '%s' holds %llu entries but records %llu", name,
                          (unsigned long long)count, (unsigned long long)t->count);
    return STRATA_OK;
}

/* For each catalog entry: parse the record and walk the tree it names. */
typedef struct catalog_walk {
    uint8_t flag;
    st_tree_check_entry entry;
} catalog_walk;

static int catalog_entry(st_pagecheck *v, const st_leaf_cell *c, const uint8_t *val, void *arg) {
    const catalog_walk *cw = arg;
    char name[STRATA_MAX_TREE_NAME + 1];
    if (c->klen == 0 || c->klen > STRATA_MAX_TREE_NAME)
        return ST_CORRUPT(v->err, "catalog: tree name of %zu bytes", c->klen);
    memcpy(name, c->key, c->klen);
    name[c->klen] = 0;
    st_tree_state t;
    int rc = st_tree_record_parse(name, val, c->vlen, &t, v->err);
    if (rc) return rc;
    if (t.tflags & cw->flag) return st_tree_check(v, name, &t, cw->entry, name);
    return st_tree_check(v, name, &t, NULL, NULL);
}

int st_catalog_check(st_pagecheck *pc, uint8_t flag, st_tree_check_entry entry) {
    const st_meta *m = &pc->txn->meta;
    st_tree_state catalog = {m->catalog_root, m->catalog_count, STRATA_KEY_BYTES, 0};
    catalog_walk cw = {flag, entry};
    return st_tree_check(pc, "(catalog)", &catalog, catalog_entry, &cw);
}

