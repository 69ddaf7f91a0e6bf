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
 */
#include "query/query.h"

#include <stdlib.h>
#include <utf8proc.h>

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
