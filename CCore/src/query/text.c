/*
 * text.c — string matching for queries: UTF-8 to code points, case folding ([c]) and diacritic
 * removal ([d]), and LIKE patterns.
 *
 * Case folding is Unicode simple folding for the scripts the tests and users meet most: ASCII,
 * Latin-1, Latin Extended-A, Greek and Cyrillic (other code points fold to themselves).
 * Diacritic removal maps the Latin-1 and Latin Extended-A letters to their base letter and drops
 * combining marks (U+0300..U+036F), so both precomposed and decomposed text match.
 * Invalid UTF-8 bytes are taken one by one as code points U+DC80.. (never a crash, stable order).
 */
#include "query/query.h"

#include <stdlib.h>

static uint32_t fold_case(uint32_t c) {
    if (c < 0x80) return c >= 'A' && c <= 'Z' ? c + 32 : c;
    if (c >= 0xC0 && c <= 0xDE && c != 0xD7) return c + 32;
    if (c >= 0x100 && c <= 0x137) return c | 1;                       /* pairs: even upper */
    if (c >= 0x139 && c <= 0x148) return (c & 1) ? c + 1 : c;          /* odd upper */
    if (c >= 0x14A && c <= 0x177) return c | 1;
    if (c == 0x178) return 0xFF;
    if (c >= 0x179 && c <= 0x17E) return (c & 1) ? c + 1 : c;
    if (c >= 0x391 && c <= 0x3AB && c != 0x3A2) return c + 32;         /* Greek capitals */
    if (c == 0x3C2) return 0x3C3;                                       /* final sigma */
    if (c >= 0x410 && c <= 0x42F) return c + 32;                        /* Cyrillic */
    if (c >= 0x400 && c <= 0x40F) return c + 80;
    return c;
}

/* Latin-1 and Latin Extended-A letters → base letter (lower and upper keep their case). */
static uint32_t strip_diacritic(uint32_t c) {
    static const char latin1[] = /* U+00C0 .. U+00FF */
        "AAAAAAACEEEEIIII" "DNOOOOO*OUUUUYTs" "aaaaaaaceeeeiiii" "dnooooo/ouuuuyty";
    static const char exta[] = /* U+0100 .. U+017F */
        "AaAaAaCcCcCcCcDd" "DdEeEeEeEeEeGgGg" "GgGgHhHhIiIiIiIi" "IiJjJjKkkLlLlLlL"
        "lLlNnNnNnnNnOoOo" "OoOoRrRrRrSsSsSs" "SsTtTtTtUuUuUuUu" "UuUuWwYyYZzZzZzs";
    if (c >= 0xC0 && c <= 0xFF) {
        char b = latin1[c - 0xC0];
        return b == '*' || b == '/' ? c : (uint32_t)(unsigned char)b;
    }
    if (c >= 0x100 && c <= 0x17F) return (uint32_t)(unsigned char)exta[c - 0x100];
    return c;
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

int st_text_fold(const uint8_t *s, size_t len, unsigned flags, st_text *out) {
    out->cp = malloc((len ? len : 1) * sizeof *out->cp);
    out->n = 0;
    if (!out->cp) return STRATA_ERR_NO_MEMORY;
    for (size_t i = 0; i < len;) {
        uint32_t c;
        i += utf8_next(s + i, len - i, &c);
        if (flags & QF_DIACRITIC) {
            if (c >= 0x300 && c <= 0x36F) continue; /* a combining mark */
            c = strip_diacritic(c);
        }
        if (flags & QF_CASE) c = fold_case(c);
        out->cp[out->n++] = c;
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
        if (pi < p->n && (p->cp[pi] == '?' || p->cp[pi] == s->cp[si])) {
            si++;
            pi++;
        } else if (pi < p->n && p->cp[pi] == '*') {
            star = pi++;
            mark = si;
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
