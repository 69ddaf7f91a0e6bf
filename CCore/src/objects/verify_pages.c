/*
 * verify_pages.c — the page walk of one version through the object layer's eyes: the catalog
 * and every tree (btree/treecheck.c), and for each cluster tree its records' keys leaves,
 * column leaves and big-value runs, all marked in the page accounting (storage/pagecheck.c),
 * which then checks the free list and that no page leaked. strata_db_verify runs it on the
 * latest version; recovery runs it (st_verify_unsynced, the hook st_db_open takes) on a version
 * written without sync.
 */
#include "objects/private.h"

#include <stdlib.h>

/* A cluster record: its keys leaf, its column leaves (each page once, no two leaves of a page
 * overlapping) and their big-value runs. */
static int cluster_entry(st_pagecheck *v, const st_leaf_cell *c, const uint8_t *val, void *arg) {
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
        const uint8_t *page;
        if (first_use && ((rc = st_pagecheck_mark(v, ref.pgno, 1, ST_REACH_USED, "column")) ||
                          (rc = st_page_get(v->txn, ref.pgno, &page, v->err)) ||
                          (rc = st_pagecheck_sum(v, page, ref.pgno, 1))))
            return rc;
        if ((rc = st_leaf_header(v->txn, ref, r.n, &seg, v->err))) return rc;
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
        if ((rc = st_leaf_big_runs(seg, r.n, runs, lens, NULL, &nruns, v->err))) return rc;
        for (uint32_t j = 0; j < nruns; j++) {
            const uint8_t *rp;
            uint32_t run;
            if ((rc = st_overflow_get(v->txn, runs[j], lens[j], &rp, &run, v->err)) ||
                (rc = st_pagecheck_mark(v, runs[j], run, ST_REACH_USED, "big value")) ||
                (rc = st_pagecheck_sum(v, rp - PH_SIZE, runs[j], run)))
                return rc;
        }
    }
    return STRATA_OK;
}

/* Walk txn's version; with a durable rule from `durable` (may be NULL); *seen_out (if given)
 * receives the page map, to be freed by the caller. */
static int verify_version(strata_txn_t *txn, const st_pagecheck *durable, uint8_t **seen_out,
                          strata_error *err) {
    st_pagecheck pc;
    int rc = st_pagecheck_init(&pc, txn, err);
    if (rc) return rc;
    if (durable) {
        pc.durable_seen = durable->seen;
        pc.durable_pages = durable->page_count;
        pc.durable_version = durable->txn->meta.version;
    }
    rc = st_catalog_check(&pc, ST_TREE_CLUSTERS, cluster_entry);
    if (rc == STRATA_OK) rc = st_pagecheck_finish(&pc);
    if (rc == STRATA_OK && seen_out) {
        *seen_out = pc.seen;
        pc.seen = NULL;
    }
    st_pagecheck_free(&pc);
    return rc;
}

int st_verify_pages(strata_txn_t *txn, strata_error *err) {
    return verify_version(txn, NULL, NULL, err);
}

int st_verify_unsynced(strata_db_t *db, const st_meta *m, const st_meta *d, strata_error *err) {
    strata_txn_t *view;
    int rc;
    st_pagecheck durable = {0};
    if (d) {
        strata_error ignored = {0};
        if ((rc = st_txn_view(db, d, &view, err))) return rc;
        if (verify_version(view, NULL, &durable.seen, &ignored) == STRATA_OK) {
            durable.txn = view;
            durable.page_count = d->page_count;
        } else {
            st_txn_free(view);
        }
    }
    if ((rc = st_txn_view(db, m, &view, err)) == STRATA_OK) {
        rc = verify_version(view, durable.seen ? &durable : NULL, NULL, err);
        st_txn_free(view);
    }
    if (durable.txn) st_txn_free(durable.txn);
    free(durable.seen);
    return rc;
}
