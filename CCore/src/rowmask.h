/*
 * rowmask.h — a set of a cluster's rows as bits: bit i of word i / 64 is row i.
 *
 * A scan evaluates its predicate one cluster at a time on these (query_exec.c): AND, OR and NOT
 * are word operations, a count is a population count, and the forms column leaves store —
 * packed bools and null bitmaps — already are row masks (st_mask_load).
 *
 * Invariant: bits at and past the cluster's row count n are 0 (every function here keeps it;
 * st_mask_load and st_mask_from_bytes make it).
 */
#ifndef STRATA_ROWMASK_H
#define STRATA_ROWMASK_H

#include "internal.h"

/* Vector instructions where the processor has them for sure (every x86-64 has SSE2); the
 * sanitizer build defines ST_PORTABLE_SCAN so the tests run the plain C that other processors
 * get, too. */
#if defined(__SSE2__) && !defined(ST_PORTABLE_SCAN)
#include <emmintrin.h>
#define ST_SCAN_SSE2 1
#endif

#define ST_MASK_WORDS 4 /* 256 rows: a cluster's most (objstore.h checks) */

typedef struct st_rowmask {
    uint64_t w[ST_MASK_WORDS];
} st_rowmask;

/* Rows 0 .. n-1. */
static inline st_rowmask st_mask_first(uint32_t n) {
    st_rowmask m;
    if (n >= 64 * ST_MASK_WORDS) { /* a full cluster: one constant (no word-by-word stores) */
        memset(&m, 0xFF, sizeof m);
        return m;
    }
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) {
        uint32_t lo = 64 * j;
        m.w[j] = n >= lo + 64 ? ~0ull : n > lo ? (1ull << (n - lo)) - 1 : 0;
    }
    return m;
}

static inline st_rowmask st_mask_none(void) { return (st_rowmask){{0}}; }

static inline st_rowmask st_mask_and(st_rowmask a, st_rowmask b) {
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) a.w[j] &= b.w[j];
    return a;
}

static inline st_rowmask st_mask_or(st_rowmask a, st_rowmask b) {
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) a.w[j] |= b.w[j];
    return a;
}

/* The rows of a that are not in b. */
static inline st_rowmask st_mask_andnot(st_rowmask a, st_rowmask b) {
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) a.w[j] &= ~b.w[j];
    return a;
}

static inline bool st_mask_any(st_rowmask a) {
    uint64_t acc = 0;
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) acc |= a.w[j];
    return acc != 0;
}

static inline uint32_t st_mask_count(st_rowmask a) {
    uint32_t c = 0;
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) { /* in registers: x86-64 may lack popcnt */
        uint64_t x = a.w[j];
        x -= (x >> 1) & 0x5555555555555555ull;
        x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
        c += (uint32_t)((x * 0x0101010101010101ull) >> 56);
    }
    return c;
}

static inline bool st_mask_has(st_rowmask a, uint32_t i) { return (a.w[i >> 6] >> (i & 63)) & 1; }

/* The first row of a after row `after` (after = -1: the first row); -1 when there is none. */
static inline int st_mask_next(st_rowmask a, int after) {
    uint32_t i = (uint32_t)(after + 1);
    if (i >= 64 * ST_MASK_WORDS) return -1;
    uint32_t j = i >> 6;
    uint64_t w = a.w[j] & (~0ull << (i & 63));
    while (!w) {
        if (++j == ST_MASK_WORDS) return -1;
        w = a.w[j];
    }
    return (int)(64 * j + (uint32_t)__builtin_ctzll(w));
}

/* A leaf's bitmap of n bits (little-endian bytes, bit i of byte i / 8), as a mask. The bitmap
 * must be readable up to the next multiple of 8 bytes (column leaves pad it so). */
static inline st_rowmask st_mask_load(const uint8_t *bits, uint32_t n) {
    st_rowmask m = st_mask_first(n);
    for (uint32_t j = 0; j < ST_MASK_WORDS && 64 * j < n; j++) m.w[j] &= st_rd64(bits + 8 * j);
    return m;
}

/* Rows from .. n-1 of bytes of 0 or 1, one per row (b[i] is row i; from a multiple of 16,
 * n <= 64 * ST_MASK_WORDS), as a mask. */
static inline st_rowmask st_mask_from_bytes(const uint8_t *b, uint32_t from, uint32_t n) {
    st_rowmask m = st_mask_none();
    uint32_t i = from;
#ifdef ST_SCAN_SSE2
    for (; i + 16 <= n; i += 16) { /* the low bit of each byte to the top, then gather */
        __m128i v = _mm_slli_epi16(_mm_loadu_si128((const __m128i *)(b + i)), 7);
        m.w[i >> 6] |= (uint64_t)(uint16_t)_mm_movemask_epi8(v) << (i & 63);
    }
#else
    for (; i + 8 <= n; i += 8) { /* byte k's low bit to bit 56 + k, then down */
        uint64_t x = st_rd64(b + i) & 0x0101010101010101ull;
        m.w[i >> 6] |= ((x * 0x0102040810204080ull) >> 56) << (i & 63);
    }
#endif
    for (; i < n; i++) m.w[i >> 6] |= (uint64_t)(b[i] & 1) << (i & 63);
    return m;
}

#endif
