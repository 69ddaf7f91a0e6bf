/*
 * packed.h — packed pages (LZ4-compressed, written by compaction into a packed region) and the
 * cache of unpacked ones. Private to storage/; readers reach packed pages through st_page_get.
 */
#ifndef STRATA_PACKED_H
#define STRATA_PACKED_H

#include "storage/storage.h"

/* Pages smaller than this once compressed are packed (a saving of an eighth at least). */
#define ST_PACK_MAX 3584u
/* Unpacked pages kept for later transactions once none holds them (16 MiB; few in debug
 * builds, so that the tests go through eviction). */
#ifdef ST_DEBUG
#define ST_UNPACKED_KEEP 16u
#else
#define ST_UNPACKED_KEEP 4096u
#endif

/* The handle's cache of unpacked pages: made at open, emptied when the file is replaced. */
int st_unpacked_init(strata_db_t *db, strata_error *err);
void st_unpacked_free(strata_db_t *db);
void st_unpacked_clear(strata_db_t *db);
/* The transaction lets go of the unpacked pages it read (its end, or a refresh). */
void st_pins_release(strata_txn_t *txn);
void st_pins_free(strata_txn_t *txn);

/* The packed region of version m: its first page checked (kind, run inside the file); *run
 * its length in pages. */
int st_packed_region(strata_txn_t *txn, const st_meta *m, uint32_t *run, strata_error *err);

/* Compress a page (its header stamped with its packed reference and checksum already) into
 * out (LZ4_COMPRESSBOUND(page size) bytes); the compressed length, or 0 when it would not save
 * enough to be worth packing. */
uint32_t st_pack_page(const uint8_t *page, uint8_t *out, size_t cap);
/* Bytes st_pack_page needs in out. */
size_t st_pack_bound(void);

#endif
