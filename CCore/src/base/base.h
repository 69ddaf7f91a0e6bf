/*
 * base.h — the door of the base layer, which every layer of the core may use: filling
 * strata_error (error.c), the one corruption path, debug assertions, and byte helpers.
 *
 * The core's layers, bottom up (each a folder of CCore/src, each with one door header):
 *   base → os → storage → btree → objects → query → api
 * A layer includes only the doors of the layers below it; nothing calls up. Where a lower layer
 * needs knowledge from above (recovery checking the pages of a version), the higher layer hands
 * it a function (a hook) through the call that needs it.
 */
#ifndef STRATA_BASE_H
#define STRATA_BASE_H

#include "strata.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t pgno_t;

#define ST_PAGE_SIZE 4096u
#define ST_MAX_DEPTH 32              /* levels of a B+tree (cursors keep a path this long) */

/* ------------------------------------------------------------------ errors (error.c) */

/* Fill err (never NULL inside the core) and return code. */
int st_err(strata_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* s (a buffer of cap bytes that vsnprintf may have cut) ends with whole UTF-8 characters. */
void st_utf8_trim(char *s, size_t cap);
/* Errno of a failed system call → STRATA_ERR_NO_SPACE or STRATA_ERR_IO, with the message. */
int st_err_errno(strata_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The one corruption path: every failed check of on-disk data goes through it (one breakpoint). */
int st_corrupt_at(strata_error *err, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define ST_CORRUPT(err, ...) st_corrupt_at((err), __FILE__, __LINE__, __VA_ARGS__)
/* A field read from a page (a count, an offset, a length, a page number) is checked before it
 * is used: unless cond holds, the calling function returns STRATA_ERR_CORRUPT naming it. */
#define ST_FIELD_CHECK(cond, err, ...) \
    do { \
        if (!(cond)) return ST_CORRUPT((err), __VA_ARGS__); \
    } while (0)

/* ------------------------------------------------------------------ debug assertions */

/* An internal precondition (a finger's validity, a cache's invalidation rule, a page's kind
 * after it was checked): never a check of input or of on-disk data, which gets an error. On in
 * test and sanitizer builds (ST_DEBUG, set by the Makefile for them and by SwiftPM's debug
 * configuration), compiled out in release builds. A failure prints the rule and aborts. */
#ifdef ST_DEBUG
_Noreturn void st_assert_fail(const char *cond, const char *file, int line);
#define ST_ASSERT(cond) ((cond) ? (void)0 : st_assert_fail(#cond, __FILE__, __LINE__))
#else
#define ST_ASSERT(cond) ((void)0)
#endif

/* ------------------------------------------------------------------ bytes */

static inline uint64_t st_rd64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t st_rd32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t st_rd16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline void st_wr64(void *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void st_wr32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void st_wr16(void *p, uint16_t v) { memcpy(p, &v, 2); }

/* Big-endian numbers: index and backlink keys sort like memcmp. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define ST_BE64(v) (v)
#else
#define ST_BE64(v) __builtin_bswap64(v)
#endif
static inline void st_wr_be64(uint8_t *o, uint64_t v) {
    v = ST_BE64(v); /* (a byte loop here compiled to eight stores and shifts) */
    memcpy(o, &v, 8);
}
static inline void st_wr_be32(uint8_t *o, uint32_t v) {
    for (int i = 3; i >= 0; i--, v >>= 8) o[i] = (uint8_t)v;
}
static inline uint64_t st_rd_be64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, 8);
    return ST_BE64(v);
}
static inline uint32_t st_rd_be32(const uint8_t *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* The order of two byte strings (-1, 0, 1): bytes as unsigned, then the shorter first. Byte keys,
 * strings (UTF-8's byte order is code-point order) and binaries all sort so. */
static inline int st_bytes_cmp(const void *a, size_t al, const void *b, size_t bl) {
    size_t n = al < bl ? al : bl;
    int c = n ? memcmp(a, b, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return (al > bl) - (al < bl);
}

/* A byte key's first 8 bytes as a big-endian number, zero past its end: a < b gives
 * head(a) <= head(b), so comparing heads first reads the keys only on ties. */
static inline uint64_t st_key_head8(const uint8_t *k, size_t len) {
    if (len >= 8) return st_rd_be64(k);
    uint64_t h = 0;
    for (size_t i = 0; i < 8; i++) h = h << 8 | (i < len ? k[i] : 0);
    return h;
}

#endif
