/*
 * treediff.c — the entries two versions of a tree do not share, found without reading what they
 * do share. Copy-on-write gives a page that changed (or whose subtree changed) a new number, so
 * a page number found in both versions names the same subtree in both. The walk keeps one
 * frontier of page numbers per version, at the same height: numbers in both frontiers are
 * dropped from both, the rest are expanded to their children, down to the leaves, whose entries
 * go to the caller with the version they come from. Pages read: those on the paths to what
 * changed, and their siblings' numbers (a branch's cells) — in proportion to the change, not to
 * the tree.
 */
#include "btree/btree.h"

#include <stdlib.h>

typedef struct frontier {
    pgno_t *pg;
    size_t n, cap;
} frontier;

static int push(frontier *f, pgno_t pg) {
    if (f->n == f->cap) {
        size_t cap = f->cap ? f->cap * 2 : 16;
        pgno_t *p = realloc(f->pg, cap * sizeof *p);
        if (!p) return STRATA_ERR_NO_MEMORY;
        f->pg = p;
        f->cap = cap;
    }
    f->pg[f->n++] = pg;
    return STRATA_OK;
}

static int cmp_pgno(const void *a, const void *b) {
    pgno_t x = *(const pgno_t *)a, y = *(const pgno_t *)b;
    return (x > y) - (x < y);
}

/* Drop the page numbers found in both (each frontier sorted). */
static void drop_shared(frontier *a, frontier *b) {
    if (a->n) qsort(a->pg, a->n, sizeof *a->pg, cmp_pgno);
    if (b->n) qsort(b->pg, b->n, sizeof *b->pg, cmp_pgno);
    size_t i = 0, j = 0, na = 0, nb = 0;
    while (i < a->n || j < b->n) {
        if (j == b->n || (i < a->n && a->pg[i] < b->pg[j])) a->pg[na++] = a->pg[i++];
        else if (i == a->n || b->pg[j] < a->pg[i]) b->pg[nb++] = b->pg[j++];
        else i++, j++; /* the same subtree in both */
    }
    a->n = na;
    b->n = nb;
}

/* The tree's height (1: the root is a leaf), down its first children. */
static int height(strata_txn_t *txn, pgno_t root, uint8_t kind, int *h, uint64_t *pages,
                  strata_error *err) {
    *h = 0;
    for (pgno_t pg = root; pg;) {
        const uint8_t *p;
        int rc = st_page_get(txn, pg, &p, err);
        if (rc || (rc = st_node_check(p, pg, kind, err))) return rc;
        (*pages)++;
        if (++*h > ST_MAX_DEPTH)
            return ST_CORRUPT(err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                              (unsigned long long)root);
        if (pg_kind(p) == ST_PAGE_LEAF) break;
        const uint8_t *k;
        size_t kl;
        if ((rc = st_branch_cell_at(p, pg, 0, &pg, &k, &kl, err))) return rc;
    }
    return STRATA_OK;
}

/* Every page of f replaced by its children (f's pages are branches). */
static int expand(strata_txn_t *txn, frontier *f, uint8_t kind, uint64_t *pages, strata_error *err) {
    frontier next = {0};
    int rc = STRATA_OK;
    for (size_t i = 0; i < f->n && rc == STRATA_OK; i++) {
        const uint8_t *p;
        if ((rc = st_page_get(txn, f->pg[i], &p, err)) || (rc = st_node_check(p, f->pg[i], kind, err)))
            break;
        (*pages)++;
        if (pg_kind(p) != ST_PAGE_BRANCH) {
            rc = ST_CORRUPT(err, "page %llu: a leaf where the tree's other leaves have branches above",
                            (unsigned long long)f->pg[i]);
            break;
        }
        for (int c = 0; c < pg_nkeys(p) && rc == STRATA_OK; c++) {
            pgno_t child;
            const uint8_t *k;
            size_t kl;
            if ((rc = st_branch_cell_at(p, f->pg[i], c, &child, &k, &kl, err)) == STRATA_OK &&
                (rc = push(&next, child)) == STRATA_ERR_NO_MEMORY)
                rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing versions");
        }
    }
    free(f->pg);
    *f = next;
    return rc;
}

/* The entries of f's leaves to fn, as side `side`. */
static int visit(strata_txn_t *txn, const frontier *f, int side, uint8_t kind, st_diff_entry fn,
                 void *arg, uint64_t *pages, strata_error *err) {
    for (size_t i = 0; i < f->n; i++) {
        const uint8_t *p;
        int rc = st_page_get(txn, f->pg[i], &p, err);
        if (rc || (rc = st_node_check(p, f->pg[i], kind, err))) return rc;
        (*pages)++;
        if (pg_kind(p) != ST_PAGE_LEAF)
            return ST_CORRUPT(err, "page %llu: a branch where the tree's other pages are leaves",
                              (unsigned long long)f->pg[i]);
        for (int c = 0; c < pg_nkeys(p); c++) {
            st_leaf_cell cell;
            const uint8_t *val;
            if ((rc = st_leaf_cell_at(p, f->pg[i], c, &cell, err))) return rc;
            val = cell.val;
            if (cell.big && (rc = st_overflow_get(txn, cell.ovf, cell.vlen, &val, NULL, err))) return rc;
            if ((rc = fn(side, cell.key, cell.klen, val, cell.vlen, arg, err))) return rc;
        }
    }
    return STRATA_OK;
}

int st_tree_diff(strata_txn_t *a, const st_tree_state *ta, strata_txn_t *b, const st_tree_state *tb,
                 st_diff_entry fn, void *arg, uint64_t *pages, strata_error *err) {
    *pages = 0;
    if (ta->root == tb->root) return STRATA_OK;
    frontier fa = {0}, fb = {0};
    int ha, hb, rc;
    if ((rc = height(a, ta->root, ta->kind, &ha, pages, err)) ||
        (rc = height(b, tb->root, tb->kind, &hb, pages, err)))
        return rc;
    if ((ta->root && push(&fa, ta->root)) || (tb->root && push(&fb, tb->root))) {
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing versions");
        goto out;
    }
    /* The taller tree down to the other's height (an empty tree, height 0, matches any). */
    while (rc == STRATA_OK && ha > hb && hb > 0) rc = expand(a, &fa, ta->kind, pages, err), ha--;
    while (rc == STRATA_OK && hb > ha && ha > 0) rc = expand(b, &fb, tb->kind, pages, err), hb--;
    while (rc == STRATA_OK) {
        if (ha && hb) drop_shared(&fa, &fb);
        if (!fa.n && !fb.n) break;
        if (ha <= 1 && hb <= 1) { /* leaves */
            if (ha) rc = visit(a, &fa, 0, ta->kind, fn, arg, pages, err);
            if (hb && rc == STRATA_OK) rc = visit(b, &fb, 1, tb->kind, fn, arg, pages, err);
            break;
        }
        if (ha > 1) rc = expand(a, &fa, ta->kind, pages, err), ha--;
        if (hb > 1 && rc == STRATA_OK) rc = expand(b, &fb, tb->kind, pages, err), hb--;
    }
out:
    free(fa.pg);
    free(fb.pg);
    return rc;
}
