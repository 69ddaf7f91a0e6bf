/*
 * page.h — the common page header and page kinds (byte tables in FORMAT.md): part of the
 * storage layer's door (storage.h includes it).
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
 *
 * Tree pages: a slot array from the body on, up to `lower`; cells from `upper` to the end. A
 * byte-key leaf written by format 3 or later (flag ST_PF_HEADS) starts its body with the prefix
 * every key in the page shares and gives each slot the next 4 key bytes, so a search compares
 * slots, which lie together, instead of cells, which are scattered over the page:
 *   32  u8  prefix length (0 .. ST_PREFIX_MAX)   33  prefix bytes (zero after the length)
 *   48  slots of 6 bytes: u16 cell offset | u32 head (the key's 4 bytes after the prefix as a
 *       big-endian number, zero-padded past the key's end)
 * Other tree pages (and byte-key leaves of older files): slots of 2 bytes (u16 cell offset) at 32.
 */
#ifndef STRATA_PAGE_H
#define STRATA_PAGE_H

#include "base/base.h"

enum {
    ST_PAGE_LEAF = 1,
    ST_PAGE_BRANCH = 2,
    ST_PAGE_OVERFLOW = 3,
    ST_PAGE_FREELIST = 4, /* a free-list leaf: entries {u64 pgno, u64 version} */
    ST_PAGE_FREEDIR = 5,  /* a free-list directory: u64 page numbers of leaves */
    ST_PAGE_COLUMN = 6,   /* column leaves of clusters (layout: objects/column.c) */
    ST_PAGE_PACKED = 7,   /* the first page of a packed region: u32 run length at 28 (packed.c) */
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
#define ST_PF_HEADS 0x80 /* tree page flag: a byte-key leaf whose slots carry key heads */
#define LH_PLEN 32       /* heads leaf: u8 prefix length */
#define LH_PREFIX 33     /* heads leaf: the prefix */
#define ST_PREFIX_MAX 15
#define LH_SLOTS 48      /* heads leaf: the slot array */

static inline uint8_t pg_key_kind(const uint8_t *p) { return p[PH_FLAGS] & 0x7F; }
static inline bool pg_heads(const uint8_t *p) { return (p[PH_FLAGS] & ST_PF_HEADS) != 0; }
/* Where the slot array starts and how wide a slot is, for a page with these flags. */
static inline unsigned pg_slots_at(uint8_t flags) {
    return flags & ST_PF_HEADS ? LH_SLOTS : PH_SIZE;
}
static inline unsigned pg_slot_width(uint8_t flags) { return flags & ST_PF_HEADS ? 6 : 2; }
static inline uint16_t pg_slot(const uint8_t *p, int i) {
    return st_rd16(p + pg_slots_at(p[PH_FLAGS]) + pg_slot_width(p[PH_FLAGS]) * (unsigned)i);
}
/* A key's head after a prefix of plen bytes: its next 4 bytes as a big-endian number, zero
 * past its end. Heads order like the keys they come from (a < b gives head(a) <= head(b)). */
static inline uint32_t st_key_head(const uint8_t *key, size_t klen, size_t plen) {
    uint32_t h = 0;
    for (size_t i = plen; i < plen + 4; i++) h = h << 8 | (i < klen ? key[i] : 0);
    return h;
}
/* A heads leaf's head of slot i. */
static inline uint32_t pg_head(const uint8_t *p, int i) {
    return st_rd32(p + LH_SLOTS + 6u * (unsigned)i + 2);
}

uint64_t st_checksum(const void *data, size_t len);

#endif
