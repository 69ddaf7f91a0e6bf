/*
 * pagecheck.c — the page accounting of an integrity walk (strata_db_verify, and recovery's
 * check of a version written without sync). The layers above walk their trees and mark every
 * page they reach; this file proves, for one version:
 *  - every page of [2, page_count) is reached exactly once: from a tree, as part of an overflow
 *    run, as a free-list page, or as a free-list entry — the saved list's but those its delta
 *    took, and the delta's freed pages (read when the walk begins: format 14) (invariant 3);
 *  - every reached page carries its own number, a version no newer than the snapshot and a
 *    matching checksum (an encrypted file's: opens, from the file's bytes, not the view);
 *  - during recovery, a page stamped with a version up to the durable one belongs to the
 *    durable version (else its newer contents were lost);
 *  - the packed region (packed.c), if any, is reached whole, and the version reaches exactly as
 *    many packed pages as its meta says, each inside the region.
 * The first failure is reported through ST_CORRUPT, naming the page and what was wrong.
 */
#include "storage/cipher.h"
#include "storage/freelist.h"
#include "storage/pager.h"
#include "storage/packed.h"

#include <stdlib.h>

int st_pagecheck_init(st_pagecheck *pc, strata_txn_t *txn, strata_error *err) {
    memset(pc, 0, sizeof *pc);
    pc->txn = txn;
    pc->err = err;
    pc->page_count = txn->meta.page_count;
    pc->seen = calloc(pc->page_count ? pc->page_count : 1, 1);
    if (!pc->seen)
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory verifying '%s'",
                      txn->db->file.shown);
    int drc = st_pager_free_delta(txn->db, &txn->meta, &pc->delta, err);
    if (drc) {
        st_pagecheck_free(pc);
        return drc;
    }
    st_region r = {0};
    int rc;
    if (txn->meta.packed_region && (rc = st_packed_region(txn, &txn->meta, &r, err))) {
        st_pagecheck_free(pc);
        return rc;
    }
    pc->packed_bytes = (uint64_t)r.run * ST_PAGE_SIZE;
    pc->packed_first = r.first;
    return STRATA_OK;
}

void st_pagecheck_free(st_pagecheck *pc) {
    free(pc->seen);
    pc->seen = NULL;
    st_fl_delta_clear(&pc->delta);
}

int st_pagecheck_mark(st_pagecheck *pc, pgno_t pg, uint32_t run, int reach, const char *what) {
    ST_ASSERT(reach == ST_REACH_USED || reach == ST_REACH_FREE);
    if (st_pgno_packed(pg)) {
        uint64_t off = st_packed_off(pg), len = st_packed_len(pg);
        if (reach != ST_REACH_USED || run != 1 || len == 0 || off < pc->packed_first ||
            off + len > pc->packed_bytes)
            return ST_CORRUPT(pc->err, "%s page %#llx: not a packed page inside the version's packed "
                              "region (%llu bytes)", what, (unsigned long long)pg,
                              (unsigned long long)pc->packed_bytes);
        pc->packed_seen++;
        return STRATA_OK;
    }
    if (pg < 2 || pg + run > pc->page_count || pg + run < pg)
        return ST_CORRUPT(pc->err, "%s page %llu (run %u) out of range [2, %llu)", what,
                          (unsigned long long)pg, run, (unsigned long long)pc->page_count);
    for (uint32_t i = 0; i < run; i++) {
        if (pc->seen[pg + i])
            return ST_CORRUPT(pc->err, "page %llu is reached twice (as %s, and earlier as %s)",
                              (unsigned long long)(pg + i), what,
                              pc->seen[pg + i] == ST_REACH_USED ? "a used page" : "free space");
        pc->seen[pg + i] = (uint8_t)reach;
    }
    return STRATA_OK;
}

/* An encrypted file's page pg (its run) opened from the file into memory of its own. */
static int open_from_file(st_pagecheck *pc, pgno_t pg, uint32_t run, uint8_t **plain) {
    strata_db_t *db = pc->txn->db;
    size_t bytes = (size_t)run * ST_PAGE_SIZE;
    *plain = malloc(bytes);
    if (!*plain) return st_err(pc->err, STRATA_ERR_NO_MEMORY, "out of memory verifying page %llu",
                               (unsigned long long)pg);
    if (pg + run <= pc->page_count &&
        st_cipher_open_page(db->cipher, db->file.map + pg * ST_PAGE_SIZE, bytes, pg, *plain) == 0)
        return STRATA_OK;
    free(*plain);
    *plain = NULL;
    return ST_CORRUPT(pc->err, "page %llu%s does not authenticate: damaged, moved or rolled back",
                      (unsigned long long)pg, run > 1 ? " (an overflow run)" : "");
}

int st_pagecheck_sum(st_pagecheck *pc, const uint8_t *p, pgno_t pg, uint32_t run) {
    uint8_t *plain = NULL;
    if (pc->txn->db->cipher && !st_pgno_packed(pg)) {
        int rc = open_from_file(pc, pg, run, &plain);
        if (rc) return rc;
        p = plain;
    } else if (st_rd64(p + PH_CHECKSUM) != st_checksum(p + 8, (size_t)run * ST_PAGE_SIZE - 8)) {
        return ST_CORRUPT(pc->err, "page %llu: checksum mismatch", (unsigned long long)pg);
    }
    int rc = STRATA_OK;
    uint64_t written = st_rd64(p + PH_VERSION);
    uint64_t snapshot = pc->txn->meta.version;
    if (!pg_number_is(p, pg))
        rc = ST_CORRUPT(pc->err, "page %llu: header says it is page %llu",
                        (unsigned long long)pg, (unsigned long long)st_rd64(p + PH_PGNO));
    else if (written > snapshot)
        rc = ST_CORRUPT(pc->err, "page %llu: written by version %llu, newer than the snapshot %llu",
                        (unsigned long long)pg, (unsigned long long)written,
                        (unsigned long long)snapshot);
    else if (pc->durable_seen && written <= pc->durable_version && !st_pgno_packed(pg) &&
             (pg >= pc->durable_pages || pc->durable_seen[pg] != ST_REACH_USED))
        rc = ST_CORRUPT(pc->err, "page %llu: holds version %llu bytes outside durable version "
                        "%llu: its newer contents were lost", (unsigned long long)pg,
                        (unsigned long long)written, (unsigned long long)pc->durable_version);
    free(plain);
    return rc;
}

/* Pages of the free list itself (its directory or its leaves): reached once, intact. */
static int mark_list_pages(st_pagecheck *pc, const pgno_t *pages, size_t n) {
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < n; i++) {
        rc = st_pagecheck_mark(pc, pages[i], 1, ST_REACH_USED, "free-list");
        if (rc == STRATA_OK)
            rc = st_pagecheck_sum(pc, pc->txn->db->file.map + pages[i] * ST_PAGE_SIZE, pages[i], 1);
    }
    return rc;
}

/* The free list's directory and leaf pages (used), then its entries (free): the saved list's
 * but those its delta took (in use: reached by the walk), and the delta's freed pages. */
static int mark_freelist(st_pagecheck *pc) {
    st_freelist fl;
    const st_fl_delta d = pc->delta; /* (read at init) */
    int rc = st_freelist_load(pc->txn->db, &pc->txn->meta, &d, &fl, pc->err);
    if (rc) return rc;
    rc = mark_list_pages(pc, fl.dir_pgno, fl.ndirs);
    if (rc == STRATA_OK) rc = mark_list_pages(pc, fl.leaf_pgno, fl.nleaves);
    size_t n = fl.entries.n; /* taken: by index, the delta's freed pages after n */
    bool bad;
    uint64_t *taken = st_fl_delta_taken(&d, n, &bad);
    if (rc == STRATA_OK && !taken) rc = st_err(pc->err, STRATA_ERR_NO_MEMORY, "out of memory");
    if (rc == STRATA_OK && bad)
        rc = ST_CORRUPT(pc->err, "free-list delta of version %llu: an entry taken twice",
                        (unsigned long long)pc->txn->meta.version);
#define TAKEN(j) (taken[(j) / 64] >> ((j) % 64) & 1)
    for (size_t i = 0; rc == STRATA_OK && i < n; i++)
        if (!TAKEN(i)) rc = st_pagecheck_mark(pc, fl.entries.v[i].pgno, 1, ST_REACH_FREE, "free");
    for (size_t k = 0; rc == STRATA_OK && k < d.freed.n; k++)
        if (!TAKEN(n + k))
            rc = st_pagecheck_mark(pc, d.freed.v[k].pgno, 1, ST_REACH_FREE,
                                   "free (since the list)");
#undef TAKEN
    free(taken);
    st_freelist_clear(&fl);
    return rc;
}

int st_pagecheck_finish(st_pagecheck *pc) {
    int rc = mark_freelist(pc);
    const st_meta *m = &pc->txn->meta;
    if (rc == STRATA_OK && m->packed_region) {
        rc = st_pagecheck_mark(pc, m->packed_region, (uint32_t)(pc->packed_bytes / ST_PAGE_SIZE),
                               ST_REACH_USED, "packed region");
        /* (an encrypted file's region head authenticated when the walk began: st_packed_region) */
        if (rc == STRATA_OK && !pc->txn->db->cipher)
            rc = st_pagecheck_sum(pc, pc->txn->db->file.map + m->packed_region * ST_PAGE_SIZE,
                                  m->packed_region, 1);
    }
    if (rc == STRATA_OK && pc->packed_seen != m->packed_live)
        rc = ST_CORRUPT(pc->err, "the version reaches %llu packed pages, its meta says %u",
                        (unsigned long long)pc->packed_seen, m->packed_live);
    for (uint64_t pg = 2; rc == STRATA_OK && pg < pc->page_count; pg++)
        if (!pc->seen[pg])
            rc = ST_CORRUPT(pc->err, "page %llu is neither reachable nor free (leaked)",
                            (unsigned long long)pg);
    return rc;
}
