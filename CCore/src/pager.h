/*
 * pager.h — meta slots, page access and allocation, free space by version, and commit.
 */
#ifndef STRATA_PAGER_H
#define STRATA_PAGER_H

#include "internal.h"
#include "page.h"

/* Write the two meta slots of a new, empty database (version 0 and 1) and sync. */
int st_pager_create(strata_db_t *db, strata_error *err);
/* The newest valid meta of the file, with the checks of open (magic, format, sizes). */
int st_pager_latest_meta(strata_db_t *db, st_meta *out, strata_error *err);
/* The reader protocol: hold `slot` at the current version and copy its meta. */
int st_pager_snapshot(strata_db_t *db, int slot, st_meta *out, strata_error *err);

/* A page for reading: the transaction's own copy if it has one, else the map. Bounds-checked. */
int st_page_get(strata_txn_t *txn, pgno_t pgno, const uint8_t **page, strata_error *err);
/* A page for writing (copy-on-write): *newp is its number in this transaction. */
int st_page_touch(strata_txn_t *txn, pgno_t pgno, uint8_t **page, pgno_t *newp,
                  strata_error *err);
/* A new zeroed run of npages pages, stamped with its number and version. */
int st_page_alloc(strata_txn_t *txn, uint32_t npages, uint8_t **page, pgno_t *pgno,
                  strata_error *err);
/* A hint for the commit log: page pgno (allocated by this transaction) will hold much what
 * committed page `like` held, so the log records it as changes to that page. Used only if
 * `like` is a page this transaction stopped using (st_page_free); else the page is logged whole. */
void st_page_resembles(strata_txn_t *txn, pgno_t pgno, pgno_t like);
/* Stop using a page (or a run): reused at once if this transaction made it, else freed by the
 * new version. */
int st_page_free(strata_txn_t *txn, pgno_t pgno, uint32_t npages, strata_error *err);

int st_pager_begin_write(strata_txn_t *txn, strata_error *err);
/* Write the transaction durably (per the durability mode) and publish it. On failure the
 * transaction's pages are discarded and the file is left at its previous commit. */
int st_pager_commit(strata_txn_t *txn, strata_error *err);
void st_pager_end_write(strata_txn_t *txn);

bool st_meta_valid(const st_meta *m);
/* A random nonzero number (time, process, a counter and seed mixed): database ids, log salts. */
uint64_t st_random_id(uint64_t seed);
/* Set m's checksum over its other bytes. */
void st_meta_seal(st_meta *m);
/* At the first open after every handle closed (perhaps by a crash): the version to start from.
 * A newest version written without sync is checked page by page, and if its pages did not all
 * reach the disk, the last durable version is used instead; then the commit log's records
 * after that version are replayed (commitlog.c) and the newest of them made durable. */
int st_pager_recover(strata_db_t *db, st_meta *out, strata_error *err);
/* fdatasync, then mark the current version durable (strata_db_sync). */
int st_pager_sync(strata_db_t *db, strata_error *err);
/* verify.c: check version m, written without sync, against the durable version d (may be NULL):
 * every page it reaches must be intact, and any page from d's time must belong to d. */
int st_verify_unsynced(strata_db_t *db, const st_meta *m, const st_meta *d, strata_error *err);

#endif
