/*
 * freelist.h — free space tagged by the version that freed it (layout in freelist.c). Private
 * to storage/.
 */
#ifndef STRATA_FREELIST_H
#define STRATA_FREELIST_H

#include "storage/storage.h"

int st_free_vec_push(st_free_vec *fv, pgno_t pgno, uint64_t version);
void st_free_vec_clear(st_free_vec *fv);
void st_freelist_clear(st_freelist *fl);

/* Read the saved free list of `meta` from the file, checking every bound and the version order
 * (and its count against the meta's with `delta`, the version's delta, NULL for none). */
int st_freelist_load(strata_db_t *db, const st_meta *meta, const st_fl_delta *delta,
                     st_freelist *out, strata_error *err);
/* The delta a meta page's image holds (empty without ST_META_FREE_DELTA), checked. */
int st_fl_delta_decode(const uint8_t *img, const st_meta *m, st_fl_delta *out, strata_error *err);
/* Whether the image holds a whole delta of m's version (its checksum holds). */
bool st_fl_delta_image_ok(const uint8_t *img, const st_meta *m);
void st_fl_delta_clear(st_fl_delta *d);
/* A bit for each entry the delta took, over a saved list of n entries and then the delta's
 * freed pages (n + k; free() it); *bad when the delta names one twice or past them (or, with
 * NULL returned, no memory). */
uint64_t *st_fl_delta_taken(const st_fl_delta *d, size_t n, bool *bad);
/* A whole delta image bound to another version (a renumbered meta, pager.c). */
void st_fl_delta_restamp(uint8_t *img, uint64_t version);
/* A small transaction takes runs of at least half what the last commit took, capped at this
 * (and at least 2): it grows the file by a run rather than scatter its writes, because each
 * separate write costs the sync about as much as a whole run (see freelist.c). */
#define ST_REUSE_MIN_RUN 8
/* A transaction that has taken this many pages may take free pages one by one. */
#define ST_REUSE_SCATTER_AFTER 64
/* A page last written more than this many versions ago is cold when copied. */
#define ST_REUSE_HOT_VERSIONS 16

/* A page a write transaction may reuse (no reader can still see it); false when none fits the
 * policy (the caller grows the file). For a copy of a cold page, a lone free page (no free
 * neighbour) first, else a page of a run too short for a small commit's run, so that pages
 * changing every commit keep the runs; otherwise the next of the transaction's run of adjacent
 * free pages, else the start of a new run long enough, else, in a big transaction or once a
 * quarter of the file is reusable (see freelist.c), a shorter run or any free page. */
bool st_freelist_take(strata_txn_t *txn, bool cold, pgno_t *pgno);
/* Entries of the list freed after the durable version and no later than oldest_reader: held
 * back only for the durable version (NO_SYNC; logged: unless written after it), so a sync
 * would free them; the pager syncs when they grow too many. */
size_t st_freelist_held(const strata_txn_t *txn, uint64_t oldest_reader);
/* The durable version or the oldest reader moved during the transaction (a sync to make room):
 * map the reusable entries again, keeping the pages already taken. */
void st_freelist_remap(strata_txn_t *txn);
/* Commit step before the save: reusable pages at the end of the file (none after them in use)
 * are taken out of the list and the transaction's page count ends before them. Returns how
 * many. */
uint64_t st_freelist_trim(strata_txn_t *txn);
/* npages adjacent reusable pages (best fit: the shortest run that holds them), or false. */
bool st_freelist_take_run(strata_txn_t *txn, uint32_t npages, pgno_t *pgno);
void st_reuse_clear(st_reuse *r);
void st_reuse_map_clear(st_reuse_map *m);
/* Where this transaction's searches stopped, into txn->hints_out (the free list saved, the map
 * about to go); the pager makes them the handle's hints if the commit succeeds. Only ever a
 * hint: a stale one costs a missed run, never a wrong page. */
void st_reuse_hints_save(strata_txn_t *txn);
/* Commit step: lay the new free list out in pages taken from itself; *head and *count for the
 * meta. Afterwards txn->fl is the new list. With may_delta (a file without encryption whose
 * list was not trimmed), when the changes since the list was saved fit the meta page, no list
 * page is written: txn->delta_out gets the delta image and txn->delta_saved is set (the list
 * and its head stay). */
int st_freelist_save(strata_txn_t *txn, bool may_delta, pgno_t *head, uint64_t *count,
                     strata_error *err);
/* Tests: commits save the list whole, as before format 14 (a file an older format wrote). */
extern bool st_freelist_whole;

#endif
