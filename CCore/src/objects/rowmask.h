/*
 * rowmask.h — a set of a cluster's rows as bits: bit i of word i / 64 is row i.
 *
 * A scan evaluates its predicate one cluster at a time on these (query_exec.c): AND, OR and NOT
 * are word operations, a count is a population count, and the forms column leaves store —
 * packed bools and null bitmaps — already are row masks (st_mask_load).
 *
 * Invariants: bits at and past the cluster's row count n are 0 (every function here keeps it;
 * the constructors make it). Words are read through .w but written only by these functions:
 * on SSE2 they work on whole 16-byte halves, and a half written as two 8-byte words and then
 * read as one 16-byte value stalls the processor (a failed store forward, ~12 cycles) — more
 * than the whole AND costs. Code that builds a mask bit by bit does so in a uint64_t array and
 * converts it once (st_mask_of_words).
 */
#ifndef STRATA_ROWMASK_H
#define STRATA_ROWMASK_H

#include "base/base.h"

/* Vector instructions where the processor has them for sure (every x86-64 has SSE2). The
 * plain C below is what other processors (arm64) run: test_query_portable builds the core with
 * ST_PORTABLE_SCAN, so every test run checks both. */
#if defined(__SSE2__) && !defined(ST_PORTABLE_SCAN)
#include <emmintrin.h>
#define ST_SCAN_SSE2 1
#endif

#define ST_MASK_WORDS 4 /* 256 rows: a cluster's most (objects.h checks) */

typedef union st_rowmask {
    uint64_t w[ST_MASK_WORDS];
#ifdef ST_SCAN_SSE2
    __m128i v[ST_MASK_WORDS / 2];
#endif
} st_rowmask;

/* The mask with words w[0..ST_MASK_WORDS-1]. */
static inline st_rowmask st_mask_of_words(const uint64_t *w) {
    st_rowmask m;
#ifdef ST_SCAN_SSE2
    for (uint32_t h = 0; h < ST_MASK_WORDS / 2; h++) {
        /* through registers: compilers would merge the two 8-byte loads into one 16-byte
         * load of what was just stored word by word (the stall above) */
        uint64_t lo = w[2 * h], hi = w[2 * h + 1];
        __asm__("" : "+r"(lo), "+r"(hi));
        m.v[h] = _mm_set_epi64x((long long)hi, (long long)lo);
    }
#else
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) m.w[j] = w[j];
#endif
    return m;
}

static inline st_rowmask st_mask_none(void) {
    st_rowmask m;
    memset(&m, 0, sizeof m);
    return m;
}

/* Word j of the mask of rows 0 .. n-1 (branch-free: n differs from cluster to cluster). */
static inline uint64_t st_word_rows(uint32_t n, uint32_t j) {
    uint32_t r = n > 64 * j ? n - 64 * j : 0; /* rows in this word, up to 64 */
    uint64_t part = (1ull << (r & 63)) - 1;
    return r >= 64 ? ~0ull : part;
}

/* Rows 0 .. n-1. */
static inline st_rowmask st_mask_first(uint32_t n) {
    uint64_t w[ST_MASK_WORDS];
    if (n >= 64 * ST_MASK_WORDS) { /* a full cluster: a constant */
        st_rowmask m;
        memset(&m, 0xFF, sizeof m);
        return m;
    }
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) w[j] = st_word_rows(n, j);
    return st_mask_of_words(w);
}

#ifdef ST_SCAN_SSE2
#define ST_MASK_OP(name, expr)                                                      \
    static inline st_rowmask name(st_rowmask a, st_rowmask b) {                     \
        for (uint32_t h = 0; h < ST_MASK_WORDS / 2; h++) a.v[h] = (expr);           \
        return a;                                                                   \
    }
ST_MASK_OP(st_mask_and, _mm_and_si128(a.v[h], b.v[h]))
ST_MASK_OP(st_mask_or, _mm_or_si128(a.v[h], b.v[h]))
ST_MASK_OP(st_mask_andnot, _mm_andnot_si128(b.v[h], a.v[h])) /* the rows of a not in b */
#else
#define ST_MASK_OP(name, expr)                                                      \
    static inline st_rowmask name(st_rowmask a, st_rowmask b) {                     \
        for (uint32_t j = 0; j < ST_MASK_WORDS; j++) a.w[j] = (expr);               \
        return a;                                                                   \
    }
ST_MASK_OP(st_mask_and, a.w[j] & b.w[j])
ST_MASK_OP(st_mask_or, a.w[j] | b.w[j])
ST_MASK_OP(st_mask_andnot, a.w[j] & ~b.w[j]) /* the rows of a not in b */
#endif
#undef ST_MASK_OP

static inline bool st_mask_any(st_rowmask a) {
#ifdef ST_SCAN_SSE2
    __m128i acc = _mm_or_si128(a.v[0], a.v[1]);
    return _mm_movemask_epi8(_mm_cmpeq_epi8(acc, _mm_setzero_si128())) != 0xFFFF;
#else
    uint64_t acc = 0;
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) acc |= a.w[j];
    return acc != 0;
#endif
}

static inline uint32_t st_mask_count(st_rowmask a) {
#ifdef ST_SCAN_SSE2
    /* bit counts per 2, 4, 8 bits, then the bytes summed by psadbw (no 64-bit multiply) */
    const __m128i m1 = _mm_set1_epi8(0x55), m2 = _mm_set1_epi8(0x33), m4 = _mm_set1_epi8(0x0F);
    __m128i sum = _mm_setzero_si128();
    for (uint32_t h = 0; h < ST_MASK_WORDS / 2; h++) {
        __m128i x = a.v[h];
        x = _mm_sub_epi8(x, _mm_and_si128(_mm_srli_epi16(x, 1), m1));
        x = _mm_add_epi8(_mm_and_si128(x, m2), _mm_and_si128(_mm_srli_epi16(x, 2), m2));
        x = _mm_and_si128(_mm_add_epi8(x, _mm_srli_epi16(x, 4)), m4);
        sum = _mm_add_epi64(sum, _mm_sad_epu8(x, _mm_setzero_si128()));
    }
    return (uint32_t)_mm_cvtsi128_si32(sum) + (uint32_t)_mm_cvtsi128_si32(_mm_srli_si128(sum, 8));
#else
    uint32_t c = 0;
    for (uint32_t j = 0; j < ST_MASK_WORDS; j++) { /* in registers: x86-64 may lack popcnt */
        uint64_t x = a.w[j];
        x -= (x >> 1) & 0x5555555555555555ull;
        x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0Full;
        c += (uint32_t)((x * 0x0101010101010101ull) >> 56);
    }
    return c;
#endif
}

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

/* A leaf's bitmap of n bits (little-endian bytes, bit i of byte i / 8), as a mask; with flip,
 * its complement (within rows 0 .. n-1). The bitmap must be readable up to the next multiple
 * of 8 bytes (column leaves pad it so). */
static inline st_rowmask st_mask_load(const uint8_t *bits, uint32_t n, bool flip) {
    uint64_t w[ST_MASK_WORDS] = {0}, x = flip ? ~0ull : 0;
    for (uint32_t j = 0; j < ST_MASK_WORDS && 64 * j < n; j++)
        w[j] = (st_rd64(bits + 8 * j) ^ x) & st_word_rows(n, j);
    return st_mask_of_words(w);
}

/* Rows from .. n-1 of bytes of 0 or 1, one per row (b[i] is row i; from a multiple of 16,
 * n <= 64 * ST_MASK_WORDS), as words (or-ed into w). */
static inline void st_words_from_bytes(const uint8_t *b, uint32_t from, uint32_t n, uint64_t *w) {
    uint32_t i = from;
#ifdef ST_SCAN_SSE2
    for (; i + 16 <= n; i += 16) { /* the low bit of each byte to the top, then gather */
        __m128i v = _mm_slli_epi16(_mm_loadu_si128((const __m128i *)(b + i)), 7);
        w[i >> 6] |= (uint64_t)(uint16_t)_mm_movemask_epi8(v) << (i & 63);
    }
#else
    for (; i + 8 <= n; i += 8) { /* byte k's low bit to bit 56 + k, then down */
        uint64_t x = st_rd64(b + i) & 0x0101010101010101ull;
        w[i >> 6] |= ((x * 0x0102040810204080ull) >> 56) << (i & 63);
    }
#endif
    for (; i < n; i++) w[i >> 6] |= (uint64_t)(b[i] & 1) << (i & 63);
}

/* Rows 0 .. n-1 of bytes of 0 or 1, one per row, as a mask. */
static inline st_rowmask st_mask_from_bytes(const uint8_t *b, uint32_t n) {
    uint64_t w[ST_MASK_WORDS] = {0};
    st_words_from_bytes(b, 0, n, w);
    return st_mask_of_words(w);
}

#endif
