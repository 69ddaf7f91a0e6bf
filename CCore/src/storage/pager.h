/*
 * pager.h — meta slots and the commit protocol (page access is in the door, storage.h).
 * Private to storage/.
 */
#ifndef STRATA_PAGER_H
#define STRATA_PAGER_H

#include "storage/storage.h"

/* Write the two meta slots of a new, empty database (version 0 and 1) and sync. */
int st_pager_create(strata_db_t *db, strata_error *err);
/* The newest valid meta of the file, with the checks of open (magic, format, sizes). */
int st_pager_latest_meta(strata_db_t *db, st_meta *out, strata_error *err);
/* The reader protocol: hold `slot` at the current version and copy its meta. */
int st_pager_snapshot(strata_db_t *db, int slot, st_meta *out, strata_error *err);

int st_pager_begin_write(strata_txn_t *txn, strata_error *err);
/* Write the transaction durably (per the durability mode), its meta recording the catalog's
 * root and count, and publish it. On failure the transaction's pages are discarded and the file
 * is left at its previous commit. */
/* Free the page buffers kept for write transactions (closing the handle). */
void st_pager_free_spares(strata_db_t *db);
int st_pager_commit(strata_txn_t *txn, pgno_t catalog_root, uint64_t catalog_count,
                    strata_error *err);
void st_pager_end_write(strata_txn_t *txn);

bool st_meta_valid(const st_meta *m);
/* The format a commit of this handle writes: ST_FORMAT_ENCRYPTED for an encrypted file. */
uint32_t st_format_of(const strata_db_t *db);
/* A random nonzero number (time, process, a counter and seed mixed): database ids, log salts. */
uint64_t st_random_id(uint64_t seed);
/* Set m's checksum over its other bytes. */
void st_meta_seal(st_meta *m);
/* At the first open after every handle closed (perhaps by a crash): the version to start from.
 * A newest version written without sync is checked page by page, and if its pages did not all
 * reach the disk, the last durable version is used instead; then the commit log's records
 * after that version are replayed (commitlog.c) and the newest of them made durable. */
int st_pager_recover(strata_db_t *db, st_check_unsynced_fn check, st_meta *out,
                     strata_error *err);
/* The last handle closing: the file's end past the pages in use and the reserve (what growing
 * in chunks left) is given back, so a closed file takes what it holds. Nothing when another
 * handle or process has the file open (its map may reach there), in memory or read-only. */
void st_pager_trim_at_close(strata_db_t *db);
/* fdatasync, then mark the current version durable (strata_db_sync). */
int st_pager_sync(strata_db_t *db, strata_error *err);
/* Make every commit published so far durable, by one sync of the commit log when they are all
 * logged (without the writer lock), else as st_pager_sync; *covered = the latest version then. */
int st_pager_sync_commits(strata_db_t *db, uint64_t *covered, strata_error *err);

/* The free-list delta of version m (empty without ST_META_FREE_DELTA), read from its meta
 * slot; STRATA_ERR_BUSY when later commits have overwritten that slot. */
int st_pager_free_delta(strata_db_t *db, const st_meta *m, st_fl_delta *out, strata_error *err);

/* pagetrust.c: each page is checked (number, version, checksum) before this process first
 * trusts it. Init reserves the table (nothing in memory mode or with opts.trust_pages). */
int st_trust_init(strata_db_t *db, strata_error *err);
void st_trust_free(strata_db_t *db);
/* Page pgno at p, read from the map by a snapshot of version `snapshot` whose file has
 * page_count pages: checked unless it was with the same stamp before. */
int st_trust_check(strata_db_t *db, const uint8_t *p, pgno_t pgno, uint64_t page_count,
                   uint64_t snapshot, strata_error *err);
/* A page this handle's commit wrote with `version`, published: trusted without a check. */
void st_trust_mark(strata_db_t *db, pgno_t pgno, uint64_t version);
#endif
