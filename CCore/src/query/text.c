/*
 * text.c — string matching for queries: UTF-8 to code points, case folding ([c]) and diacritic
 * removal ([d]) through utf8proc, and LIKE patterns.
 *
 * [c] is full Unicode case folding (CaseFolding.txt, status C and F: "ß" folds to "ss", "İ" to
 * "i̇", "ſ" to "s", "µ" to "μ"). [d] decomposes each character (NFD), drops every combining mark
 * (general categories Mn, Mc, Me) and composes again (NFC), so "é" and "e + U+0301" both become
 * "e", "Ș" becomes "S", "ế" becomes "e", and a letter with no decomposition ("Ø", "Ł") is kept.
 * [cd] does both. Without a flag the code points are compared as stored (no normalization).
 * Invalid UTF-8 bytes are taken one by one as code points U+DC80.. (never a crash, stable order);
 * folding leaves them as they are.
 *
 * CONTAINS without flags compares bytes (st_bytes_contain): the part's first two bytes and its
 * last are looked for at 16 positions at once (SSE2; NEON on aarch64), the part's other bytes
 * compared only where all three are found. glibc's memmem (two-way) took 75% of a CONTAINS scan
 * over chat messages, 10–200 characters each, where a part like "好" is a few bytes: its set-up
 * is paid per message, and it compares a byte at a time.
 */
#include "query/query.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>
/* (test_query_portable builds without them: ST_PORTABLE_SCAN, as rowmask.h) */
#if defined(__SSE2__) && !defined(ST_PORTABLE_SCAN)
#define CONTAINS_SSE2 1
#include <emmintrin.h>
#elif defined(__aarch64__) && defined(__ARM_NEON) && !defined(ST_PORTABLE_SCAN)
#define CONTAINS_NEON 1
#include <arm_neon.h>
#endif

/* The positions i (of 16 from at) where a[i] == b[0], a[i + 1] == b[1] and a[i + bl - 1] ==
 * b[bl - 1] (bl >= 2), one bit each. */
#if defined(CONTAINS_SSE2)
static inline __m128i same_as(const uint8_t *p, uint8_t byte) {
    return _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)p), _mm_set1_epi8((char)byte));
}

static inline unsigned candidates(const uint8_t *a, size_t at, const uint8_t *b, size_t bl) {
    __m128i both = _mm_and_si128(same_as(a + at, b[0]), same_as(a + at + 1, b[1]));
    return (unsigned)_mm_movemask_epi8(_mm_and_si128(both, same_as(a + at + bl - 1, b[bl - 1])));
}
#elif defined(CONTAINS_NEON)
static inline unsigned candidates(const uint8_t *a, size_t at, const uint8_t *b, size_t bl) {
    uint8x16_t m = vandq_u8(vandq_u8(vceqq_u8(vld1q_u8(a + at), vdupq_n_u8(b[0])),
                                     vceqq_u8(vld1q_u8(a + at + 1), vdupq_n_u8(b[1]))),
                            vceqq_u8(vld1q_u8(a + at + bl - 1), vdupq_n_u8(b[bl - 1])));
    static const uint8_t bit[16] = {1, 2, 4, 8, 16, 32, 64, 128, 1, 2, 4, 8, 16, 32, 64, 128};
    uint8x16_t w = vandq_u8(m, vld1q_u8(bit));
    return (unsigned)vaddv_u8(vget_low_u8(w)) | (unsigned)vaddv_u8(vget_high_u8(w)) << 8;
}
#endif

bool st_bytes_contain(const uint8_t *a, size_t al, const uint8_t *b, size_t bl) {
    if (bl == 0) return true;
    if (al < bl) return false;
    if (bl == 1) return memchr(a, b[0], al) != NULL;
    size_t at = 0;
#if defined(CONTAINS_SSE2) || defined(CONTAINS_NEON)
    /* three bytes compared by the filter: a part of three bytes (a CJK character) needs no more */
    for (size_t positions = al - bl + 1; at + 16 <= positions; at += 16)
        for (unsigned m = candidates(a, at, b, bl); m; m &= m - 1) {
            size_t i = at + (unsigned)__builtin_ctz(m);
            if (bl <= 3 || memcmp(a + i + 2, b + 2, bl - 3) == 0) return true;
        }
#endif
    for (; at + bl <= al; at++) /* the last (fewer than 16) positions */
        if (a[at] == b[0] && memcmp(a + at + 1, b + 1, bl - 1) == 0) return true;
    return false;
}

static size_t utf8_next(const uint8_t *s, size_t len, uint32_t *cp) {
    uint8_t c = s[0];
    size_t n;
    uint32_t v;
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    if ((c & 0xE0) == 0xC0) n = 2, v = c & 0x1F;
    else if ((c & 0xF0) == 0xE0) n = 3, v = c & 0x0F;
    else if ((c & 0xF8) == 0xF0) n = 4, v = c & 0x07;
    else goto bad;
    if (len < n) goto bad;
    for (size_t i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80) goto bad;
        v = v << 6 | (s[i] & 0x3F);
    }
    *cp = v;
    return n;
bad:
    *cp = 0xDC00 + c;
    return 1;
}

size_t st_utf8_length(const uint8_t *s, size_t len) {
    size_t n = 0;
    uint32_t cp;
    for (size_t i = 0; i < len; n++) i += utf8_next(s + i, len - i, &cp);
    return n;
}

/* Append the folding of code point c (options: utf8proc's) to out, growing it. */
static int fold_one(uint32_t c, utf8proc_option_t options, st_text *out, size_t *cap) {
    for (;;) {
        int bound = 0;
        utf8proc_ssize_t n = 1;
        if (c < 0xD800 || (c > 0xDFFF && c < 0x110000))
            n = utf8proc_decompose_char((utf8proc_int32_t)c, (utf8proc_int32_t *)out->cp + out->n,
                                        (utf8proc_ssize_t)(*cap - out->n), options, &bound);
        else if (out->n < *cap)
            out->cp[out->n] = c; /* an invalid byte: kept */
        if (n < 0) { /* not a character utf8proc knows: kept */
            n = 1;
            if (out->n < *cap) out->cp[out->n] = c;
        }
        if ((size_t)n <= *cap - out->n) {
            out->n += (size_t)n;
            return STRATA_OK;
        }
        size_t grown = *cap * 2 + (size_t)n;
        uint32_t *g = realloc(out->cp, grown * sizeof *g);
        if (!g) return STRATA_ERR_NO_MEMORY;
        out->cp = g;
        *cap = grown;
    }
}

int st_text_fold(const uint8_t *s, size_t len, unsigned flags, st_text *out) {
    size_t cap = len + 8;
    out->cp = malloc(cap * sizeof *out->cp);
    out->n = 0;
    if (!out->cp) return STRATA_ERR_NO_MEMORY;
    utf8proc_option_t options = 0;
    if (flags & QF_CASE) options |= UTF8PROC_CASEFOLD;
    if (flags & QF_DIACRITIC) options |= UTF8PROC_DECOMPOSE | UTF8PROC_STRIPMARK;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        i += utf8_next(s + i, len - i, &c);
        if (!options) {
            out->cp[out->n++] = c;
            continue;
        }
        if (fold_one(c, options, out, &cap)) {
            st_text_free(out);
            return STRATA_ERR_NO_MEMORY;
        }
    }
    if (flags & QF_DIACRITIC) { /* compose what the marks left (Hangul, a few others) */
        utf8proc_ssize_t n = utf8proc_normalize_utf32((utf8proc_int32_t *)out->cp,
                                                      (utf8proc_ssize_t)out->n, UTF8PROC_COMPOSE);
        if (n >= 0) out->n = (size_t)n;
    }
    return STRATA_OK;
}

void st_text_free(st_text *t) {
    free(t->cp);
    t->cp = NULL;
    t->n = 0;
}

/* '*' matches any run of code points, '?' exactly one; iterative with one backtrack point. */
bool st_text_like(const st_text *s, const st_text *p) {
    size_t si = 0, pi = 0, star = (size_t)-1, mark = 0;
    while (si < s->n) {
        if (pi < p->n && p->cp[pi] == '*') { /* a wildcard even where the text has a '*' */
            star = pi++;
            mark = si;
        } else if (pi < p->n && (p->cp[pi] == '?' || p->cp[pi] == s->cp[si])) {
            si++;
            pi++;
        } else if (star != (size_t)-1) {
            pi = star + 1;
            si = ++mark;
        } else {
            return false;
        }
    }
    while (pi < p->n && p->cp[pi] == '*') pi++;
    return pi == p->n;
}
