/*
 * verify.c — the integrity walker behind strata_db_verify.
 *
 * It reads one snapshot (a read transaction on the latest version) and proves the invariants of
 * pager.c and btree.c on it:
 *  - every page of [2, page_count) is reached exactly once: from the catalog, from a tree, as
 *    part of an overflow run, as a free-list page, or as a free-list entry (invariant 3);
 *  - every reachable page carries its own number, a version no newer than the snapshot and a
 *    matching checksum;
 *  - every tree is well formed: kinds, bounds, keys ascending and inside the range the parent
 *    gives, leaves all at one depth, no empty node but an empty root, counts as recorded.
 * Then verify_objects.c checks the object layer (tables, indexes, links, backlinks, lists).
 * The first failure is reported through ST_CORRUPT, naming the page and what was wrong.
 */
#include "btree.h"
#include "freelist.h"
#include "internal.h"
#include "objstore.h"
#include "pager.h"

#include <stdlib.h>

typedef struct vctx {
    strata_txn_t *txn;
    uint64_t page_count;
    uint8_t *seen;        /* per page: 0 unseen, 1 used, 2 free */
    strata_error *err;
    /* Recovery of a version written without sync: a page stamped with a version up to the
     * durable one must be one of the durable version's used pages (else its new contents were
     * lost and an older page's bytes are there). */
    const uint8_t *durable_seen;
    uint64_t durable_pages, durable_version;
} vctx;

typedef struct bound {
    const uint8_t *key;
    size_t len;
    bool set;
} bound;

static int mark(vctx *v, pgno_t pg, uint32_t run, const char *what) {
    if (pg < 2 || pg + run > v->page_count || pg + run < pg)
        return ST_CORRUPT(v->err, "%s page %llu (run %u) out of range [2, %llu)", what,
                          (unsigned long long)pg, run, (unsigned long long)v->page_count);
    for (uint32_t i = 0; i < run; i++) {
        if (v->seen[pg + i])
            return ST_CORRUPT(v->err, "page %llu is reached twice (as %s, and earlier as %s)",
                              (unsigned long long)(pg + i), what,
                              v->seen[pg + i] == 1 ? "a used page" : "free space");
        v->seen[pg + i] = strcmp(what, "free") == 0 ? 2 : 1;
    }
    return STRATA_OK;
}

static int check_sum(vctx *v, const uint8_t *p, pgno_t pg, uint32_t run) {
    uint64_t want = st_checksum(p + 8, (size_t)run * ST_PAGE_SIZE - 8);
    if (st_rd64(p + PH_CHECKSUM) != want)
        return ST_CORRUPT(v->err, "page %llu: checksum mismatch", (unsigned long long)pg);
    if (st_rd64(p + PH_PGNO) != pg)
        return ST_CORRUPT(v->err, "page %llu: header says it is page %llu",
                          (unsigned long long)pg, (unsigned long long)st_rd64(p + PH_PGNO));
    uint64_t written = st_rd64(p + PH_VERSION);
    if (written > v->txn->meta.version)
        return ST_CORRUPT(v->err, "page %llu: written by version %llu, newer than the snapshot %llu",
                          (unsigned long long)pg, (unsigned long long)written,
                          (unsigned long long)v->txn->meta.version);
    if (v->durable_seen && written <= v->durable_version &&
        (pg >= v->durable_pages || v->durable_seen[pg] != 1))
        return ST_CORRUPT(v->err, "page %llu: holds version %llu bytes outside durable version "
                          "%llu: its newer contents were lost", (unsigned long long)pg,
                          (unsigned long long)written, (unsigned long long)v->durable_version);
    return STRATA_OK;
}

static bool below(uint8_t kind, const uint8_t *k, size_t kl, const bound *hi) {
    return !hi->set || st_key_cmp(kind, k, kl, hi->key, hi->len) < 0;
}

static bool at_or_above(uint8_t kind, const uint8_t *k, size_t kl, const bound *lo) {
    return !lo->set || st_key_cmp(kind, k, kl, lo->key, lo->len) >= 0;
}

typedef int (*entry_fn)(vctx *v, const st_leaf_cell *c, const uint8_t *val, void *arg);

static int walk(vctx *v, uint8_t kind, pgno_t pg, int depth, bound lo, bound hi, int *leaf_depth,
                uint64_t *count, entry_fn fn, void *arg) {
    int rc;
    if (depth >= ST_MAX_DEPTH)
        return ST_CORRUPT(v->err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                          (unsigned long long)pg);
    if ((rc = mark(v, pg, 1, "tree"))) return rc;
    const uint8_t *p;
    if ((rc = st_page_get(v->txn, pg, &p, v->err)) || (rc = st_node_check(p, pg, kind, v->err)) ||
        (rc = check_sum(v, p, pg, 1)))
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
                    (rc = mark(v, c.ovf, run, "overflow")) ||
                    (rc = check_sum(v, val - PH_SIZE, c.ovf, run)))
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

static int walk_tree(vctx *v, const char *name, const st_tree_state *t, entry_fn fn, void *arg) {
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

/* A cluster record: its keys leaf, its column leaves (each page once, no two leaves of a page
 * overlapping) and their big-value runs. */
static int cluster_entry(vctx *v, const st_leaf_cell *c, const uint8_t *val, void *arg) {
    const char *tree = arg;
    uint64_t base = st_rd64(c->key);
    st_crec r;
    int rc = st_crec_parse(tree, base, val, c->vlen, &r, v->err);
    if (rc) return rc;
    for (uint32_t i = 0; i < r.nentries; i++) {
        st_leafref ref = st_crec_entry(&r, i, NULL);
        const uint8_t *seg;
        bool first_use = true;
        for (uint32_t j = 0; j < i; j++) {
            st_leafref o = st_crec_entry(&r, j, NULL);
            if (o.pgno != ref.pgno) continue;
            first_use = false;
            if (ref.off < o.off + o.len && o.off < ref.off + ref.len)
                return ST_CORRUPT(v->err, "%s: cluster %llu: leaves %u and %u overlap on page %llu",
                                  tree, (unsigned long long)base, j, i, (unsigned long long)ref.pgno);
        }
        if (first_use && (rc = mark(v, ref.pgno, 1, "column"))) return rc;
        if ((rc = st_leaf_header(v->txn, ref, r.n, &seg, v->err))) return rc;
        if (first_use && (rc = check_sum(v, seg - ref.off, ref.pgno, 1))) return rc;
        if ((rc = st_leaf_check_all(seg, r.n, v->err))) return rc;
        if (i == 0) { /* the keys: ascending, >= base */
            for (uint32_t j = 0; j < r.n; j++) {
                int64_t k = st_packed_at(seg, r.n, j);
                if ((uint64_t)k < base || (j && k <= st_packed_at(seg, r.n, j - 1)))
                    return ST_CORRUPT(v->err, "%s: cluster %llu: key %lld at row %u is out of order",
                                      tree, (unsigned long long)base, (long long)k, j);
            }
            continue;
        }
        pgno_t runs[ST_CLUSTER_MAX];
        uint32_t lens[ST_CLUSTER_MAX], nruns = 0;
        if ((rc = st_leaf_big_runs(seg, r.n, runs, lens, &nruns, v->err))) return rc;
        for (uint32_t j = 0; j < nruns; j++) {
            const uint8_t *rp;
            uint32_t run;
            if ((rc = st_overflow_get(v->txn, runs[j], lens[j], &rp, &run, v->err)) ||
                (rc = mark(v, runs[j], run, "big value")) ||
                (rc = check_sum(v, rp - PH_SIZE, runs[j], run)))
                return rc;
        }
    }
    return STRATA_OK;
}

/* For each catalog entry: parse the record and walk the tree it names. */
static int catalog_entry(vctx *v, const st_leaf_cell *c, const uint8_t *val, void *arg) {
    (void)arg;
    char name[STRATA_MAX_TREE_NAME + 1];
    if (c->klen == 0 || c->klen > STRATA_MAX_TREE_NAME)
        return ST_CORRUPT(v->err, "catalog: tree name of %zu bytes", c->klen);
    memcpy(name, c->key, c->klen);
    name[c->klen] = 0;
    if (c->vlen != 24 || (val[16] != STRATA_KEY_INT && val[16] != STRATA_KEY_BYTES))
        return ST_CORRUPT(v->err, "catalog: record of tree '%s' is malformed", name);
    st_tree_state t = {st_rd64(val), st_rd64(val + 8), val[16], val[17]};
    if (t.tflags & ST_TREE_CLUSTERS) return walk_tree(v, name, &t, cluster_entry, name);
    return walk_tree(v, name, &t, NULL, NULL);
}

/* Walk txn's version; *seen_out (if given) receives the page map, to be freed by the caller. */
static int verify_snapshot(strata_txn_t *txn, const vctx *rule, uint8_t **seen_out,
                           strata_error *err) {
    strata_db_t *db = txn->db;
    vctx v = {txn, txn->meta.page_count, calloc(txn->meta.page_count, 1), err, NULL, 0, 0};
    if (rule) {
        v.durable_seen = rule->durable_seen;
        v.durable_pages = rule->durable_pages;
        v.durable_version = rule->durable_version;
    }
    if (!v.seen) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory verifying '%s'", db->path);
    st_tree_state catalog = {txn->meta.catalog_root, txn->meta.catalog_count, STRATA_KEY_BYTES, 0};
    int rc = walk_tree(&v, "(catalog)", &catalog, catalog_entry, NULL);
    if (rc == STRATA_OK) {
        st_freelist fl;
        rc = st_freelist_load(db, &txn->meta, &fl, err);
        if (rc == STRATA_OK) {
            for (size_t i = 0; rc == STRATA_OK && i < fl.ndirs; i++) {
                rc = mark(&v, fl.dir_pgno[i], 1, "free-list");
                if (rc == STRATA_OK)
                    rc = check_sum(&v, db->map + fl.dir_pgno[i] * ST_PAGE_SIZE, fl.dir_pgno[i], 1);
            }
            for (size_t i = 0; rc == STRATA_OK && i < fl.nleaves; i++) {
                rc = mark(&v, fl.leaf_pgno[i], 1, "free-list");
                if (rc == STRATA_OK)
                    rc = check_sum(&v, db->map + fl.leaf_pgno[i] * ST_PAGE_SIZE, fl.leaf_pgno[i], 1);
            }
            for (size_t i = 0; rc == STRATA_OK && i < fl.entries.n; i++)
                rc = mark(&v, fl.entries.v[i].pgno, 1, "free");
            st_freelist_clear(&fl);
        }
    }
    for (uint64_t pg = 2; rc == STRATA_OK && pg < v.page_count; pg++)
        if (!v.seen[pg])
            rc = ST_CORRUPT(err, "page %llu is neither reachable nor free (leaked)",
                            (unsigned long long)pg);
    if (rc == STRATA_OK && seen_out) *seen_out = v.seen;
    else free(v.seen);
    return rc;
}

int strata_db_verify(strata_db_t *db, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_verify: db is NULL");
    strata_txn_t *txn;
    int rc = strata_txn_begin(db, STRATA_TXN_READ, &txn, err);
    if (rc) return rc;
    rc = verify_snapshot(txn, NULL, NULL, err);
    if (rc == STRATA_OK) rc = st_verify_objects(txn, err);
    strata_txn_free(txn);
    return rc;
}

int st_verify_unsynced(strata_db_t *db, const st_meta *m, const st_meta *d, strata_error *err) {
    strata_txn_t t;
    memset(&t, 0, sizeof t);
    t.db = db;
    t.reader_slot = -1;
    vctx rule = {0};
    uint8_t *durable_seen = NULL;
    if (d) {
        strata_error ignored = {0};
        t.meta = *d;
        if (verify_snapshot(&t, NULL, &durable_seen, &ignored) == STRATA_OK) {
            rule.durable_seen = durable_seen;
            rule.durable_pages = d->page_count;
            rule.durable_version = d->version;
        }
    }
    t.meta = *m;
    int rc = verify_snapshot(&t, durable_seen ? &rule : NULL, NULL, err);
    free(durable_seen);
    return rc;
}
