/*
 * page.h — the common page header and page kinds (byte tables in FORMAT.md).
 *
 *   offset size field
 *   0      8    checksum: XXH3-64 of bytes [8, page size * run length), set at commit
 *   8      8    version that wrote the page
 *   16     8    the page's own number (catches misdirected writes)
 *   24     1    kind (ST_PAGE_*)
 *   25     1    flags (tree pages: the key kind, 1 = int, 2 = bytes)
 *   26     2    nkeys (tree pages)
 *   28     2    lower: end of the slot array (tree pages)    | u32 run length (overflow)
 *   30     2    upper: start of the cell area (tree pages)
 *   28     4    free-list leaf or directory: u32 entry count
 *   32          body
 */
#ifndef STRATA_PAGE_H
#define STRATA_PAGE_H

#include "internal.h"

enum {
    ST_PAGE_LEAF = 1,
    ST_PAGE_BRANCH = 2,
    ST_PAGE_OVERFLOW = 3,
    ST_PAGE_FREELIST = 4, /* a free-list leaf: entries {u64 pgno, u64 version} */
    ST_PAGE_FREEDIR = 5,  /* a free-list directory: u64 page numbers of leaves */
};

#define PH_CHECKSUM 0
#define PH_VERSION 8
#define PH_PGNO 16
#define PH_KIND 24
#define PH_FLAGS 25
#define PH_NKEYS 26
#define PH_LOWER 28
#define PH_UPPER 30
#define PH_RUN 28      /* overflow: u32 number of pages in the run */
#define PH_FCOUNT 28   /* free list: u32 entries in this page */
#define PH_SIZE 32
#define FL_NEXT 32     /* free-list directory: u64 next directory page, 0 at the end */
#define FL_ENTRIES 40  /* leaf: entries of {u64 pgno, u64 version}; directory: u64 pgnos */
#define FL_PER_PAGE ((ST_PAGE_SIZE - FL_ENTRIES) / 16)
#define FL_PER_DIR ((ST_PAGE_SIZE - FL_ENTRIES) / 8)

static inline uint8_t pg_kind(const uint8_t *p) { return p[PH_KIND]; }
static inline uint16_t pg_nkeys(const uint8_t *p) { return st_rd16(p + PH_NKEYS); }
static inline uint16_t pg_lower(const uint8_t *p) { return st_rd16(p + PH_LOWER); }
static inline uint16_t pg_upper(const uint8_t *p) { return st_rd16(p + PH_UPPER); }
static inline uint16_t pg_slot(const uint8_t *p, int i) { return st_rd16(p + PH_SIZE + 2 * i); }

uint64_t st_checksum(const void *data, size_t len);

#endif
