/*
 * commitlog.h — the commit log of durable commits (layout and invariants in commitlog.c).
 * Private to storage/.
 */
#ifndef STRATA_COMMITLOG_H
#define STRATA_COMMITLOG_H

#include "storage/storage.h"

#define ST_LOG_BYTES (16u << 20)      /* the size of a new log file (fixed once made) */
#define ST_LOG_MIN_BYTES (4u << 20)   /* the smallest log this library made (before 16 MiB) */
#define ST_LOG_RETRY_AFTER 64         /* commits synced without a log before making it again */
#define ST_LOG_BLOCK 4096u            /* the unit of every log read and write (aligned) */
#define ST_LOG_FIRST ST_LOG_BLOCK     /* where the first record of a generation goes */
/* A write transaction that finds the log filled past half its size makes the current version
 * durable first (syncs the database file) and the log starts over. */
uint64_t st_log_checkpoint_at(const strata_db_t *db);

/* A transaction of more pages than this is not logged: its pages are written and synced
 * (ST_META_SYNCED). Logging them would write every byte twice (record, then checkpoint) and
 * build a record of megabytes first. */
#define ST_LOG_MAX_PAGES 1024u

/* Append the record of txn's commit: the pages list[0..n) and the meta *m, whose log fields
 * and flags (ST_META_LOGGED) are set and which is sealed here; then sync the log (`defer_sync`:
 * not now, ST_META_LOG_PENDING; st_log_sync does it for every record appended so far).
 * `write_pages(ctx)` writes the pages to the file: called once the record is built, while the
 * record's write is under way where it is begun first (st_os_log_write_begin: a record written
 * on its own, for 8 pages or more), else before the record is written; its failure fails the
 * commit (the record retracted).
 * *logged = false, nothing written and write_pages not called, when the record would not fit
 * (or the transaction is too big to log, above): the caller then writes and syncs the pages
 * themselves; else *record_at = where the record went. A failed sync retracts the record. */
int st_log_commit(strata_txn_t *txn, st_dirty *const *list, size_t n, st_meta *m, bool defer_sync,
                  int (*write_pages)(void *ctx, strata_error *err), void *ctx, bool *logged,
                  uint64_t *record_at, strata_error *err);

/* Make the record at `at` of the log unreplayable (its checksum zeroed, synced): for a commit
 * that failed after its record was written. If even that fails, db->log_retract_at keeps `at`
 * and the next write transaction (or close) must retract it before anything else. */
int st_log_retract(strata_db_t *db, uint64_t at, strata_error *err);
/* Does the commit log beside the file have a valid header (of any database)? *id = its
 * database id, *base the durable version its records start from. */
bool st_log_exists(strata_db_t *db, uint64_t *id, uint64_t *base);

/* Recovery (first opener, writer lock held): rebuild onto the file the pages of every logged
 * version after `base`, the durable version. *out = the newest version rebuilt (its meta as
 * the commit wrote it, not yet in a slot) or *base; img (ST_DELTA_BYTES), the base's meta
 * page delta image, becomes *out's; *replayed = how many; `stop` (stop_len bytes) says why the
 * replay ended where it did ("the log is missing", "record of version 7: checksum", ...). A
 * read-only handle gets STRATA_ERR_READ_ONLY when there is something to replay. */
int st_log_replay(strata_db_t *db, const st_meta *base, st_meta *out, uint8_t *img,
                  uint64_t *replayed, char *stop, size_t stop_len, strata_error *err);

#endif
