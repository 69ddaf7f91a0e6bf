/*
 * freelist.h — free space tagged by the version that freed it (layout in freelist.c).
 */
#ifndef STRATA_FREELIST_H
#define STRATA_FREELIST_H

#include "internal.h"
#include "page.h"

/* Read the free list of `meta` from the file, checking every bound and the version order. */
int st_freelist_load(strata_db_t *db, const st_meta *meta, st_freelist *out, strata_error *err);
int st_freelist_copy(st_freelist *dst, const st_freelist *src);
/* The next page a write transaction may reuse (no reader can still see it); false if none. */
bool st_freelist_take(strata_txn_t *txn, pgno_t *pgno);
/* Commit step: lay the new free list out in pages taken from itself; *head and *count for the
 * meta. Afterwards txn->fl is the new list. */
int st_freelist_save(strata_txn_t *txn, pgno_t *head, uint64_t *count, strata_error *err);

#endif
