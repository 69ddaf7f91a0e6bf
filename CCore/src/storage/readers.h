/*
 * readers.h — the lock file `<path>.lock`: reader slots shared by all processes, the latest
 * published version, and the writer lock. Private to storage/.
 */
#ifndef STRATA_READERS_H
#define STRATA_READERS_H

#include "storage/storage.h"

#define ST_NO_VERSION UINT64_MAX

/* Open or create the lock file (memory mode: the store's region). */
int st_readers_open(strata_db_t *db, strata_error *err);
/* Whether this handle reset the table at open: no other handle was open, so the file may need
 * recovering from a crash (pager.c: st_pager_recover). */
bool st_readers_fresh(strata_db_t *db);
/* The fresh handle has recovered the file and published its version: let others open. */
void st_readers_opened(strata_db_t *db);
void st_readers_close(strata_db_t *db);

/* The latest committed version, as published by the last writer. */
uint64_t st_readers_current(strata_db_t *db);
/* Publish a new latest version (the writer, after its meta is durable), and wake every waiter
 * of every process (a futex word in the lock file). */
void st_readers_publish(strata_db_t *db, uint64_t version, bool own);
/* own: this handle wrote the version's pages (else another handle, say a writer that died
 * between its meta and its publish). Publishes are counted so that a handle knows whether
 * pages changed under it: st_readers_baseline at open, then st_readers_note_foreign once a
 * snapshot is held sets db->foreign_writes (for good) when another handle has published. */
void st_readers_baseline(strata_db_t *db);
void st_readers_note_foreign(strata_db_t *db);
/* Until the latest version is past `after` (*version: it), or timeout_ms (STRATA_ERR_TIMEOUT). */
/* Waits of this handle, those in progress too, return STRATA_ERR_TIMEOUT at once from now on. */
void st_readers_stop_waits(strata_db_t *db);
int st_readers_wait(strata_db_t *db, uint64_t after, uint32_t timeout_ms, uint64_t *version,
                    strata_error *err);

/* Encrypted files' version numbers (pager.c: renumber). The writer marks the version whose
 * sealed bytes it is about to write (0 once published); a mark left behind spends the number. */
void st_readers_attempt(strata_db_t *db, uint64_t version);
uint64_t st_readers_attempted(strata_db_t *db);
/* No renumbering since the table was set up, or a number spent since. */
bool st_readers_must_renumber(strata_db_t *db);
void st_readers_renumbered(strata_db_t *db, uint64_t from, uint64_t to);
/* The last renumbering's jump (false: none since the table was set up). */
bool st_readers_gap(strata_db_t *db, uint64_t *from, uint64_t *to);

/* Take a free slot for a read transaction (freeing slots of dead processes if needed). */
int st_readers_acquire(strata_db_t *db, int *slot, strata_error *err);
/* Record that `slot` holds `version` (sequentially consistent: see pager's reader protocol). */
void st_readers_hold(strata_db_t *db, int slot, uint64_t version);
void st_readers_release(strata_db_t *db, int slot);

/* The oldest version held by a live reader, or `latest` when none; frees dead slots.
 * *live receives the number of slots in use (may be NULL). */
uint64_t st_readers_oldest(strata_db_t *db, uint64_t latest, uint32_t *live);
/* The held versions, ascending and distinct, up to cap; returns how many there are in all. */
size_t st_readers_list(strata_db_t *db, uint64_t *versions, size_t cap);

/* Every taken slot (up to cap into out; returns how many there are), the dead owners' too. */
size_t st_readers_slots(strata_db_t *db, strata_reader *out, size_t cap);
/* Free the slots of dead processes now; returns how many were freed. */
size_t st_readers_clear_stale(strata_db_t *db);

/* The writer lock: exclusive across the processes (OFD lock on byte 0 of the lock file) and
 * threads (the caller also holds the handle's write mutex). */
int st_readers_writer_lock(strata_db_t *db, bool wait, strata_error *err);
void st_readers_writer_unlock(strata_db_t *db);

/* Compaction: the open lock and the alive lock exclusively (nobody else has the file open, and
 * nobody opens it until st_readers_shared), or STRATA_ERR_BUSY naming why. */
int st_readers_exclusive(strata_db_t *db, strata_error *err);
void st_readers_shared(strata_db_t *db);

#endif
