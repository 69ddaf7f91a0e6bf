/*
 * pagetrust.c — a page is checked before this process first trusts it.
 *
 * Committed pages never change while a version that reaches them is alive (copy-on-write), so
 * a page needs checking once per process, not at every read: the first time any path takes it
 * from the map (tree descent, cluster and column reads, overflow runs, the free list, the
 * schema, a copy for write), its header and its XXH3 checksum are checked, and the version
 * stamped in its header is remembered. A later read of the same page finds the same stamp and
 * skips the check; a page freed and rewritten since (by any process) carries a newer stamp and
 * is checked again.
 *
 * Table: one u32 per page the map can hold, the low 32 bits of the version stamp the page had
 * when checked (st_stamp_of: never 0; 0 means never checked). Anonymous memory reserved for map_size / page size entries
 * and backed only where touched (4 KiB of table per 1,024 pages read). Entries are read and
 * written with relaxed atomics: two threads checking one page at once both check it, and both
 * store the same stamp.
 *
 * Invariants:
 *  - An entry is set only after the page passed every check below, or by the handle's own
 *    commit after it was published (those pages are the bytes this process wrote).
 *  - A version number is never published twice (a failed commit's number is reused, but its
 *    pages were never published, so never marked), so a stamp identifies one content of a page.
 *
 * Checks: the page's own number, a stamp no newer than the reading snapshot, for an overflow
 * run a run length inside the file, and the checksum over the page (the whole run).
 *
 * Encrypted files (cipher.c): the map holds sealed pages, whose version stamp is in clear at
 * the same place. The first read of a page with a given stamp opens it (authenticates and
 * decrypts the page, or the whole overflow run) into the view, memory of the map's size that
 * this process owns, at the page's own offset, and only then sets the entry (release; the fast
 * path reads it with acquire). An entry equal to the stamp in the map thus says the view holds
 * that content. The view of a page is written only while no reader can be reading it: a
 * committed page's bytes change only once no version reaching the old ones is held (invariant
 * 4 of pager.c), and openers of one page take turns (db->open_locks). The view is anonymous
 * memory left out of core dumps; like any process memory it may be swapped.
 */
#include "storage/cipher.h"
#include "storage/pager.h"

#include <stdatomic.h>
#include <sys/mman.h>

int st_trust_init(strata_db_t *db, strata_error *err) {
    db->view = db->file.map;
    if (!db->cipher && (db->file.mem || db->file.opts.trust_pages)) return STRATA_OK; /* nothing to check */
    db->trust_pages = db->file.map_size / ST_PAGE_SIZE;
    db->trust = st_os_reserve(db->trust_pages * sizeof *db->trust);
    if (db->trust && db->cipher) {
        db->view = st_os_reserve(db->file.map_size);
        if (db->view) madvise(db->view, db->file.map_size, MADV_DONTDUMP);
    }
    if (!db->trust || !db->view) {
        st_trust_free(db);
        return st_err(err, STRATA_ERR_NO_MEMORY,
                      "cannot reserve the page-check table of '%s' (%llu pages): lower map_size",
                      db->file.shown, (unsigned long long)db->trust_pages);
    }
    return STRATA_OK;
}

void st_trust_free(strata_db_t *db) {
    st_os_unreserve((void *)db->trust, db->trust_pages * sizeof *db->trust);
    db->trust = NULL;
    if (db->cipher && db->view && db->view != db->file.map) st_os_unreserve(db->view, db->file.map_size);
    db->view = NULL;
}


/* An encrypted file's page p (sealed, in the map): opened into the view (above). */
static int open_sealed(strata_db_t *db, const uint8_t *p, pgno_t pgno, uint64_t page_count,
                       uint64_t snapshot, strata_error *err) {
    pthread_mutex_t *lock = &db->open_locks[pgno % (sizeof db->open_locks / sizeof *db->open_locks)];
    pthread_mutex_lock(lock);
    int rc = STRATA_OK;
    uint64_t version = st_rd64(p + PH_VERSION), run = 1;
    uint8_t head[8];
    if (st_page_trusted(db, p, pgno, snapshot)) goto done; /* another thread opened it */
    if (version > snapshot) {
        rc = ST_CORRUPT(err, "page %llu: written by version %llu, newer than the version read "
                        "(%llu)", (unsigned long long)pgno, (unsigned long long)version,
                        (unsigned long long)snapshot);
        goto done;
    }
    uint8_t *into = db->view + pgno * ST_PAGE_SIZE;
    /* Most pages are single pages; an overflow run's first page opens only as the whole run,
     * whose length (read before it is authenticated) only sizes the opening: a damaged one
     * fails the tag like any damage. */
    bool opened = pgno < ST_ENC_MAX_PAGES && st_cipher_open_page(db->cipher, p, ST_PAGE_SIZE, pgno, into) == 0;
    if (!opened && pgno < ST_ENC_MAX_PAGES && st_cipher_peek_page(db->cipher, p, pgno, head, 8) == 0 &&
        head[0] == ST_PAGE_OVERFLOW) {
        run = st_rd32(head + 4);
        opened = run > 1 && run <= page_count - pgno &&
                 st_cipher_open_page(db->cipher, p, run * ST_PAGE_SIZE, pgno, into) == 0;
    }
    if (!opened) { /* (the view's bytes there were cleared: nothing vouches for them) */
        atomic_store_explicit(&db->trust[pgno], 0, memory_order_release);
        rc = ST_CORRUPT(err, "page %llu (version %llu) does not authenticate: it is damaged, was "
                        "moved or rolled back, or was written with another key",
                        (unsigned long long)pgno, (unsigned long long)version);
        goto done;
    }
    atomic_store_explicit(&db->trust[pgno], st_stamp_of(version), memory_order_release);
done:
    pthread_mutex_unlock(lock);
    return rc;
}

int st_trust_check(strata_db_t *db, const uint8_t *p, pgno_t pgno, uint64_t page_count,
                   uint64_t snapshot, strata_error *err) {
    if (st_page_trusted(db, p, pgno, snapshot)) return STRATA_OK; /* the same stamp as checked */
    if (db->cipher) return open_sealed(db, p, pgno, page_count, snapshot, err);
    uint64_t version = st_rd64(p + PH_VERSION);
    if (st_rd64(p + PH_PGNO) != pgno)
        return ST_CORRUPT(err, "page %llu: header says it is page %llu", (unsigned long long)pgno,
                          (unsigned long long)st_rd64(p + PH_PGNO));
    if (version > snapshot)
        return ST_CORRUPT(err, "page %llu: written by version %llu, newer than the version read "
                          "(%llu)", (unsigned long long)pgno, (unsigned long long)version,
                          (unsigned long long)snapshot);
    uint64_t run = 1;
    if (pg_kind(p) == ST_PAGE_OVERFLOW) {
        run = st_rd32(p + PH_RUN);
        if (run == 0 || run > page_count - pgno)
            return ST_CORRUPT(err, "overflow page %llu: a run of %llu pages past the file's %llu",
                              (unsigned long long)pgno, (unsigned long long)run,
                              (unsigned long long)page_count);
    }
    uint64_t sum = st_checksum(p + 8, run * ST_PAGE_SIZE - 8);
    if (st_rd64(p + PH_CHECKSUM) != sum)
        return ST_CORRUPT(err, "page %llu (kind %u, version %llu%s): checksum mismatch",
                          (unsigned long long)pgno, pg_kind(p), (unsigned long long)version,
                          run > 1 ? ", an overflow run" : "");
    atomic_store_explicit(&db->trust[pgno], st_stamp_of(version), memory_order_release);
    return STRATA_OK;
}

void st_trust_mark(strata_db_t *db, pgno_t pgno, uint64_t version) {
    if (db->trust && pgno < db->trust_pages)
        atomic_store_explicit(&db->trust[pgno], st_stamp_of(version), memory_order_release);
}
