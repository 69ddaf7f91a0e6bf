/*
 * freelist.c — free space tagged by version: loading, reusing and saving the free list.
 *
 * Layout: the meta's freelist_head names the first directory page (0 = no free list).
 *   directory page (kind 5): header, u32 count at 28, u64 next directory page at 32,
 *                            then count u64 page numbers of leaves, in order;
 *   leaf page (kind 4):      header, u32 count at 28, then count entries {u64 pgno, u64 version}
 *                            where version is the version that freed pgno.
 * Entries are in non-decreasing version order across the whole list (leaf after leaf).
 *
 * Invariants:
 *  - Entries with version <= the oldest version any reader holds are reusable, and because of
 *    the order they form a prefix of the list. A write transaction reuses them front to back
 *    (st_freelist_take), so the pages it changes are a prefix too.
 *  - A commit rewrites only: the leaves it consumed (freed), a partly consumed leaf (its rest
 *    goes into a new leaf), the last leaf (when the new entries fit beside it) and the
 *    directory. Leaves of pinned entries in between are kept as they are. So with a reader
 *    pinned, a small commit costs a handful of pages, not a copy of the whole list.
 *  - New entries (pages this commit stopped using, tagged with its version) go at the end.
 *  - The pages holding the new list are taken from the free space itself, so the count is
 *    settled by iteration; pages taken beyond the need become empty leaves, dropped next time.
 */
#include "freelist.h"

#include "pager.h"

#include <stdlib.h>

void st_freelist_clear(st_freelist *fl) {
    st_free_vec_clear(&fl->entries);
    free(fl->leaf_start);
    free(fl->leaf_pgno);
    free(fl->dir_pgno);
    memset(fl, 0, sizeof *fl);
}

static int grow_array(void *pp, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return STRATA_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *p = realloc(*(void **)pp, c * elem);
    if (!p) return STRATA_ERR_NO_MEMORY;
    *(void **)pp = p;
    *cap = c;
    return STRATA_OK;
}

/* Builder for a free list: add leaves and directory pages in order. */
typedef struct fl_builder {
    st_freelist *fl;
    size_t leaf_cap, dir_cap;
} fl_builder;

static int add_leaf(fl_builder *b, pgno_t pgno) {
    st_freelist *fl = b->fl;
    if (fl->nleaves + 1 > b->leaf_cap) {
        size_t c = b->leaf_cap ? b->leaf_cap * 2 : 16;
        pgno_t *lp = realloc(fl->leaf_pgno, c * sizeof *lp);
        if (!lp) return STRATA_ERR_NO_MEMORY;
        fl->leaf_pgno = lp;
        size_t *ls = realloc(fl->leaf_start, (c + 1) * sizeof *ls);
        if (!ls) return STRATA_ERR_NO_MEMORY;
        fl->leaf_start = ls;
        b->leaf_cap = c;
    }
    fl->leaf_pgno[fl->nleaves] = pgno;
    fl->leaf_start[fl->nleaves] = fl->entries.n;
    fl->nleaves++;
    fl->leaf_start[fl->nleaves] = fl->entries.n;
    return STRATA_OK;
}

static int add_entry(fl_builder *b, pgno_t pgno, uint64_t version) {
    if (st_free_vec_push(&b->fl->entries, pgno, version)) return STRATA_ERR_NO_MEMORY;
    b->fl->leaf_start[b->fl->nleaves] = b->fl->entries.n;
    return STRATA_OK;
}

/* Append entries [src, src + n) to the current leaf in one copy. */
static int add_entries(fl_builder *b, const st_free_entry *src, size_t n) {
    st_free_vec *fv = &b->fl->entries;
    if (grow_array(&fv->v, &fv->cap, fv->n + n, sizeof *fv->v)) return STRATA_ERR_NO_MEMORY;
    if (n) memcpy(fv->v + fv->n, src, n * sizeof *src);
    fv->n += n;
    b->fl->leaf_start[b->fl->nleaves] = fv->n;
    return STRATA_OK;
}

static int add_dir(fl_builder *b, pgno_t pgno) {
    if (grow_array(&b->fl->dir_pgno, &b->dir_cap, b->fl->ndirs + 1, sizeof(pgno_t)))
        return STRATA_ERR_NO_MEMORY;
    b->fl->dir_pgno[b->fl->ndirs++] = pgno;
    return STRATA_OK;
}

int st_freelist_copy(st_freelist *dst, const st_freelist *src) {
    memset(dst, 0, sizeof *dst);
    fl_builder b = {dst, 0, 0};
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < src->ndirs; i++) rc = add_dir(&b, src->dir_pgno[i]);
    for (size_t i = 0; rc == STRATA_OK && i < src->nleaves; i++) {
        rc = add_leaf(&b, src->leaf_pgno[i]);
        if (rc == STRATA_OK)
            rc = add_entries(&b, src->entries.v + src->leaf_start[i],
                             src->leaf_start[i + 1] - src->leaf_start[i]);
    }
    if (rc) st_freelist_clear(dst);
    return rc;
}

int st_freelist_load(strata_db_t *db, const st_meta *meta, st_freelist *out, strata_error *err) {
    memset(out, 0, sizeof *out);
    fl_builder b = {out, 0, 0};
    int rc = STRATA_OK;
    uint64_t hops = 0, last_version = 0;
#define FAIL(...) do { rc = ST_CORRUPT(err, __VA_ARGS__); goto fail; } while (0)
    for (pgno_t d = meta->freelist_head; d; ) {
        if (d < 2 || d >= meta->page_count)
            FAIL("free-list directory page %llu out of range", (unsigned long long)d);
        if (++hops > meta->page_count)
            FAIL("free-list directory has a cycle at page %llu", (unsigned long long)d);
        const uint8_t *dp = db->map + d * ST_PAGE_SIZE;
        uint32_t n = st_rd32(dp + PH_FCOUNT);
        if (pg_kind(dp) != ST_PAGE_FREEDIR || n > FL_PER_DIR)
            FAIL("page %llu: expected a free-list directory, found kind %u with %u entries",
                 (unsigned long long)d, pg_kind(dp), n);
        if (add_dir(&b, d)) goto nomem;
        for (uint32_t i = 0; i < n; i++) {
            pgno_t lp = st_rd64(dp + FL_ENTRIES + 8 * i);
            if (lp < 2 || lp >= meta->page_count)
                FAIL("free-list directory page %llu: leaf %u is page %llu, out of range",
                     (unsigned long long)d, i, (unsigned long long)lp);
            if (out->nleaves >= meta->page_count)
                FAIL("free-list directory page %llu lists more leaves than pages", (unsigned long long)d);
            const uint8_t *lpg = db->map + lp * ST_PAGE_SIZE;
            uint32_t m = st_rd32(lpg + PH_FCOUNT);
            if (pg_kind(lpg) != ST_PAGE_FREELIST || m > FL_PER_PAGE)
                FAIL("page %llu: expected a free-list leaf, found kind %u with %u entries",
                     (unsigned long long)lp, pg_kind(lpg), m);
            if (add_leaf(&b, lp)) goto nomem;
            for (uint32_t j = 0; j < m; j++) {
                const uint8_t *e = lpg + FL_ENTRIES + 16 * j;
                pgno_t fp = st_rd64(e);
                uint64_t v = st_rd64(e + 8);
                if (fp < 2 || fp >= meta->page_count)
                    FAIL("free-list leaf %llu entry %u: page %llu out of range",
                         (unsigned long long)lp, j, (unsigned long long)fp);
                if (v > meta->version || v < last_version)
                    FAIL("free-list leaf %llu entry %u: version %llu out of order",
                         (unsigned long long)lp, j, (unsigned long long)v);
                last_version = v;
                if (out->entries.n >= meta->page_count)
                    FAIL("free list holds more entries than pages");
                if (add_entry(&b, fp, v)) goto nomem;
            }
        }
        d = st_rd64(dp + FL_NEXT);
    }
    if (out->entries.n != meta->free_count)
        FAIL("free list holds %zu entries, meta says %llu", out->entries.n,
             (unsigned long long)meta->free_count);
#undef FAIL
    return STRATA_OK;
nomem:
    rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory loading the free list");
fail:
    st_freelist_clear(out);
    return rc;
}

bool st_freelist_take(strata_txn_t *txn, pgno_t *pgno) {
    const st_free_vec *e = &txn->fl.entries;
    if (txn->fl_pos >= e->n || e->v[txn->fl_pos].version > txn->oldest_reader) return false;
    *pgno = e->v[txn->fl_pos++].pgno;
    return true;
}

/* The first leaf not wholly consumed when pos entries are gone. */
static size_t first_live_leaf(const st_freelist *fl, size_t pos) {
    size_t i = 0;
    while (i < fl->nleaves && fl->leaf_start[i + 1] <= pos) i++;
    return i;
}

typedef struct layout {
    size_t k;             /* first leaf not wholly consumed */
    bool partial;         /* leaf k is partly consumed: its rest moves to a new leaf */
    size_t first_kept;    /* leaves [first_kept, nleaves) survive ... */
    bool rewrite_last;    /* ... except the last, rewritten with the new entries beside it */
    size_t tail_leaves;   /* new leaves at the end */
    size_t new_leaves;    /* partial + tail_leaves */
    size_t ndirs;
    size_t empties;       /* pages taken beyond the need, kept as empty leaves */
} layout;

static size_t leaf_len(const st_freelist *fl, size_t i) {
    return fl->leaf_start[i + 1] - fl->leaf_start[i];
}

/* The layout for the current state with `taken` pages in hand, or false if more are needed. */
static bool plan(strata_txn_t *txn, size_t taken, layout *L) {
    const st_freelist *fl = &txn->fl;
    size_t pos = txn->fl_pos;
    L->k = first_live_leaf(fl, pos);
    L->partial = L->k < fl->nleaves && pos > fl->leaf_start[L->k];
    L->first_kept = L->k + L->partial;
    size_t kept = fl->nleaves - L->first_kept;
    size_t t0 = txn->freed.n + txn->own.n + L->first_kept; /* consumed leaves are freed too */
    size_t last = kept ? leaf_len(fl, fl->nleaves - 1) : 0;
    L->rewrite_last = kept > 0 && last + t0 + 1 <= FL_PER_PAGE;
    size_t tail = t0 + L->rewrite_last + (L->rewrite_last ? last : 0);
    L->tail_leaves = (tail + FL_PER_PAGE - 1) / FL_PER_PAGE;
    L->new_leaves = L->partial + L->tail_leaves;
    size_t leaves = L->partial + kept - L->rewrite_last + L->tail_leaves;
    for (size_t nd = 0; L->new_leaves + nd <= taken; nd++) {
        size_t empties = taken - L->new_leaves - nd;
        size_t all = leaves + empties;
        if (all == 0 ? nd == 0 : nd * FL_PER_DIR >= all) {
            L->ndirs = nd;
            L->empties = empties;
            return true;
        }
    }
    return false;
}

static void write_leaf(uint8_t *p, const st_free_entry *e, size_t n) {
    p[PH_KIND] = ST_PAGE_FREELIST;
    st_wr32(p + PH_FCOUNT, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        st_wr64(p + FL_ENTRIES + 16 * i, e[i].pgno);
        st_wr64(p + FL_ENTRIES + 16 * i + 8, e[i].version);
    }
}

int st_freelist_save(strata_txn_t *txn, pgno_t *head, uint64_t *count, strata_error *err) {
    st_freelist *fl = &txn->fl;
    int rc;
    for (size_t i = 0; i < fl->ndirs; i++)
        if ((rc = st_page_free(txn, fl->dir_pgno[i], 1, err))) return rc;

    /* Take pages until the list fits in them (taking shrinks the list, so re-plan each time). */
    pgno_t *pages = NULL;
    uint8_t **bufs = NULL;
    size_t taken = 0, cap = 0, bcap = 0;
    layout L;
    while (!plan(txn, taken, &L)) {
        if (grow_array(&pages, &cap, taken + 1, sizeof *pages) ||
            grow_array(&bufs, &bcap, taken + 1, sizeof *bufs)) {
            rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory saving the free list");
            goto out;
        }
        if ((rc = st_page_alloc(txn, 1, &bufs[taken], &pages[taken], err))) goto out;
        taken++;
    }
    for (size_t i = 0; i < L.first_kept; i++)
        if ((rc = st_page_free(txn, fl->leaf_pgno[i], 1, err))) goto out;
    if (L.rewrite_last && (rc = st_page_free(txn, fl->leaf_pgno[fl->nleaves - 1], 1, err))) goto out;

    /* Build the new list. */
    st_freelist nf = {0};
    fl_builder b = {&nf, 0, 0};
    size_t next = 0; /* next page of `pages` to use */
    rc = STRATA_OK;
    if (L.partial) {
        size_t from = txn->fl_pos, to = fl->leaf_start[L.k + 1];
        write_leaf(bufs[next], fl->entries.v + from, to - from);
        rc = add_leaf(&b, pages[next++]);
        if (rc == STRATA_OK) rc = add_entries(&b, fl->entries.v + from, to - from);
    }
    size_t keep_end = fl->nleaves - L.rewrite_last;
    for (size_t i = L.first_kept; rc == STRATA_OK && i < keep_end; i++) {
        rc = add_leaf(&b, fl->leaf_pgno[i]);
        if (rc == STRATA_OK)
            rc = add_entries(&b, fl->entries.v + fl->leaf_start[i],
                             fl->leaf_start[i + 1] - fl->leaf_start[i]);
    }
    /* Tail: the rewritten last leaf's entries, then everything this commit freed. */
    st_free_vec tail = {0};
    if (L.rewrite_last)
        for (size_t j = fl->leaf_start[fl->nleaves - 1]; rc == STRATA_OK && j < fl->entries.n; j++)
            rc = st_free_vec_push(&tail, fl->entries.v[j].pgno, fl->entries.v[j].version);
    for (size_t j = 0; rc == STRATA_OK && j < txn->freed.n; j++)
        rc = st_free_vec_push(&tail, txn->freed.v[j].pgno, txn->new_version);
    for (size_t j = 0; rc == STRATA_OK && j < txn->own.n; j++)
        rc = st_free_vec_push(&tail, txn->own.v[j].pgno, txn->new_version);
    for (size_t t = 0; rc == STRATA_OK && t < L.tail_leaves; t++) {
        size_t from = t * FL_PER_PAGE, to = from + FL_PER_PAGE < tail.n ? from + FL_PER_PAGE : tail.n;
        write_leaf(bufs[next], tail.v + from, to - from);
        rc = add_leaf(&b, pages[next++]);
        if (rc == STRATA_OK) rc = add_entries(&b, tail.v + from, to - from);
    }
    st_free_vec_clear(&tail);
    for (size_t e = 0; rc == STRATA_OK && e < L.empties; e++) {
        write_leaf(bufs[next], NULL, 0);
        rc = add_leaf(&b, pages[next++]);
    }
    for (size_t d = 0; rc == STRATA_OK && d < L.ndirs; d++) {
        uint8_t *p = bufs[next + d];
        size_t from = d * FL_PER_DIR, to = from + FL_PER_DIR < nf.nleaves ? from + FL_PER_DIR : nf.nleaves;
        p[PH_KIND] = ST_PAGE_FREEDIR;
        st_wr32(p + PH_FCOUNT, (uint32_t)(to - from));
        st_wr64(p + FL_NEXT, d + 1 < L.ndirs ? pages[next + d + 1] : 0);
        for (size_t i = from; i < to; i++) st_wr64(p + FL_ENTRIES + 8 * (i - from), nf.leaf_pgno[i]);
        rc = add_dir(&b, pages[next + d]);
    }
    if (rc) {
        st_freelist_clear(&nf);
        rc = st_txn_fail(txn, st_err(err, STRATA_ERR_NO_MEMORY, "out of memory saving the free list"));
        goto out;
    }
    *head = L.ndirs ? pages[next] : 0;
    *count = nf.entries.n;
    /* The list just laid out becomes this transaction's: cached by the handle after commit. */
    st_freelist_clear(fl);
    *fl = nf;
    txn->fl_pos = 0;
    st_free_vec_clear(&txn->freed);
    txn->own.n = 0;
out:
    free(pages);
    free(bufs);
    return rc;
}
