/*
 * copy_objects.c — the object layer's part of a copy of a version (storage/copy.c): the catalog
 * and every tree go through btree/treecopy.c; a cluster record (a value of a tree flagged
 * ST_TREE_CLUSTERS) owns column pages, and their leaves own big-value runs. Each column page is
 * copied once (the small leaves of a cluster share one), after the runs its leaves refer to,
 * with their new first pages written into the leaves; then the record's entries are rewritten
 * with the pages' new numbers. Every leaf is checked as a read would check it before it is
 * copied.
 */
#include "objects/private.h"

#include <stdlib.h>

/* The column page of entry i, with its leaves' runs, into the copy (the entries after i on the
 * same page are its other leaves). */
static int copy_column_page(st_copier *c, const st_crec *r, uint32_t i, pgno_t *out,
                            strata_error *err) {
    strata_txn_t *src = st_copier_source(c);
    st_leafref ref = st_crec_entry(r, i, NULL);
    const uint8_t *page;
    int rc = st_page_get(src, ref.pgno, &page, err);
    if (rc) return rc;
    uint8_t *buf = malloc(ST_PAGE_SIZE);
    pgno_t *runs = malloc(ST_CLUSTER_MAX * sizeof *runs);
    uint32_t *lens = malloc(ST_CLUSTER_MAX * sizeof *lens), *at = malloc(ST_CLUSTER_MAX * sizeof *at);
    if (!buf || !runs || !lens || !at) {
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory copying column page %llu",
                    (unsigned long long)ref.pgno);
        goto out;
    }
    memcpy(buf, page, ST_PAGE_SIZE);
    for (uint32_t k = i; k < r->nentries && rc == STRATA_OK; k++) {
        st_leafref leaf = st_crec_entry(r, k, NULL);
        if (leaf.pgno != ref.pgno) continue;
        const uint8_t *seg;
        uint32_t nruns;
        if ((rc = st_leaf_header(src, leaf, r->n, &seg, err)) ||
            (rc = st_leaf_big_runs(seg, r->n, runs, lens, at, &nruns, err)))
            break;
        for (uint32_t j = 0; j < nruns && rc == STRATA_OK; j++) {
            pgno_t moved;
            if ((rc = st_overflow_copy(c, runs[j], lens[j], &moved, err)) == STRATA_OK)
                st_wr64(buf + leaf.off + at[j], moved);
        }
    }
    if (rc == STRATA_OK) rc = st_copier_place(c, buf, 1, out, err);
out:
    free(buf);
    free(runs);
    free(lens);
    free(at);
    return rc;
}

/* A cluster record: its column pages copied, its entries rewritten. */
static int copy_cluster(st_copier *c, const uint8_t *key, size_t klen, uint8_t *val, size_t vlen,
                        void *arg, strata_error *err) {
    const char *tree = arg;
    if (klen != 8) return ST_CORRUPT(err, "%s: a cluster key of %zu bytes", tree, klen);
    st_crec r;
    int rc = st_crec_parse(tree, st_rd64(key), val, vlen, &r, err);
    if (rc) return rc;
    pgno_t *moved = malloc(r.nentries * sizeof *moved);
    if (!moved) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory copying %s", tree);
    for (uint32_t i = 0; i < r.nentries && rc == STRATA_OK; i++) {
        pgno_t pg = st_crec_entry(&r, i, NULL).pgno;
        uint32_t j = 0;
        while (j < i && st_crec_entry(&r, j, NULL).pgno != pg) j++;
        if (j < i) moved[i] = moved[j]; /* a page shared with an earlier leaf: copied then */
        else rc = copy_column_page(c, &r, i, &moved[i], err);
    }
    /* Written only now: r reads the old numbers from val. */
    for (uint32_t i = 0; i < r.nentries && rc == STRATA_OK; i++) st_crec_set_page(val, i, moved[i]);
    free(moved);
    return rc;
}

int st_copy_objects(st_copier *c, pgno_t *catalog_root, uint64_t *catalog_count, strata_error *err) {
    return st_catalog_copy(c, ST_TREE_CLUSTERS, copy_cluster, catalog_root, catalog_count, err);
}
