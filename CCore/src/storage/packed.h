/*
 * packed.h — packed pages (LZ4-compressed, written by compaction into a packed region) and the
 * cache of unpacked ones. Private to storage/; readers reach packed pages through st_page_get.
 */
#ifndef STRATA_PACKED_H
#define STRATA_PACKED_H

#include "storage/storage.h"

/* Pages smaller than this once compressed are packed (a saving of an eighth at least). */
#define ST_PACK_MAX 3584u

/* The handle's cache of unpacked pages: made at open, emptied when the file is replaced. */
int st_unpacked_init(strata_db_t *db, strata_error *err);
void st_unpacked_free(strata_db_t *db);
void st_unpacked_clear(strata_db_t *db);
/* The transaction lets go of the unpacked pages it read (its end, or a refresh). */
void st_pins_release(strata_txn_t *txn);
void st_pins_free(strata_txn_t *txn);

/* The packed region's layout: the page header (kind ST_PAGE_PACKED, run at 28), u32 dictionary
 * length at 32, the dictionary from 40, packed pages from the next multiple of 8 on. */
#define ST_REGION_DICT_LEN 32
#define ST_REGION_DICT 40
#define ST_DICT_MAX 65536u

/* The packed region of version m, checked (kind, run and dictionary inside the file): its run
 * in pages, its dictionary and the offset where its packed pages start (each may be NULL). */
typedef struct st_region {
    uint32_t run;
    const uint8_t *dict;
    uint32_t dict_len;
    uint64_t first;          /* the first packed page's offset */
} st_region;
int st_packed_region(strata_txn_t *txn, const st_meta *m, st_region *r, strata_error *err);

/* Compressing pages for a copy: LZ4 with a dictionary of samples of the data (the 64 KiB
 * before each page, as far as LZ4 is concerned), so that even a small page finds the words it
 * shares with the rest of the file. */
typedef struct st_packer st_packer;
/* A packer whose dictionary samples the source version's pages (or is its packed region's);
 * level 0 is LZ4's fast mode, 1..12 LZ4HC's levels. */
int st_packer_new(strata_txn_t *src, int level, st_packer **out, strata_error *err);
void st_packer_free(st_packer *p);
const uint8_t *st_packer_dict(const st_packer *p, uint32_t *len);
/* Compress a page (its header stamped with its packed reference and checksum already) into
 * out (st_pack_bound() bytes): the compressed length, or 0 when it would not save enough to be
 * worth packing. Each result is unpacked and compared before it is given. */
uint32_t st_pack_page(st_packer *p, const uint8_t *page, uint8_t *out);
size_t st_pack_bound(void);

#endif
