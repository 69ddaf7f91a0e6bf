/*
 * words.c — the words of a text, as full-text indexes store them and TEXT queries match them.
 *
 * A word is a run of letters (Unicode categories L*), digits and other numbers (N*), private-use
 * characters (Co) and combining marks (M*); anything else (spaces, punctuation, symbols,
 * controls, invalid UTF-8 bytes) separates words — the same rule as SQLite FTS5's "unicode61"
 * tokenizer. Chinese and Japanese are written without spaces, so each Han ideograph, hiragana
 * and katakana character is a word of its own (unigrams); a TEXT query term of several such
 * characters is a phrase whose words must follow each other (query/fulltext.c checks it), so
 * "東京" does not match "京東". Hangul is written with spaces and keeps its words; Thai, Lao,
 * Khmer and Myanmar runs are one word each (no dictionary segmentation, as FTS5).
 *
 * Each word is folded as the [cd] string operators fold: full case folding, then every combining
 * mark dropped after canonical decomposition ("Éclair" → "eclair", "Straße" → "strasse"), then
 * composed again (Hangul syllables stay syllables). A word is yielded as folded UTF-8, never
 * empty (a run of marks alone folds to nothing and is skipped), with its position: 0, 1, 2, …
 * over the words of the text.
 */
#include "objects/objects.h"

#include <stdlib.h>
#include <utf8proc.h>

/* One character each: Han ideographs, kana, and the marks of iteration and the CJK symbols
 * that are letters (U+3005 々, U+3006 〆, U+3007 〇). */
static bool solo(uint32_t c) {
    return (c >= 0x3005 && c <= 0x3007) || (c >= 0x3040 && c <= 0x30FF) ||
           (c >= 0x31F0 && c <= 0x31FF) || (c >= 0x3400 && c <= 0x4DBF) ||
           (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0xF900 && c <= 0xFAFF) ||
           (c >= 0xFF66 && c <= 0xFF9D) || (c >= 0x20000 && c <= 0x3FFFF);
}

/* ASCII folded: a letter's lower case, a digit itself, 0 for anything that separates words. */
static const uint8_t ascii_fold[128] = {
    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4',
    ['5'] = '5', ['6'] = '6', ['7'] = '7', ['8'] = '8', ['9'] = '9',
    ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e', ['F'] = 'f', ['G'] = 'g',
    ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l', ['M'] = 'm', ['N'] = 'n',
    ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r', ['S'] = 's', ['T'] = 't', ['U'] = 'u',
    ['V'] = 'v', ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z',
    ['a'] = 'a', ['b'] = 'b', ['c'] = 'c', ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['g'] = 'g',
    ['h'] = 'h', ['i'] = 'i', ['j'] = 'j', ['k'] = 'k', ['l'] = 'l', ['m'] = 'm', ['n'] = 'n',
    ['o'] = 'o', ['p'] = 'p', ['q'] = 'q', ['r'] = 'r', ['s'] = 's', ['t'] = 't', ['u'] = 'u',
    ['v'] = 'v', ['w'] = 'w', ['x'] = 'x', ['y'] = 'y', ['z'] = 'z',
};

static bool word_char(uint32_t c) {
    if (c < 0x80) return ascii_fold[c] != 0;
    switch (utf8proc_category((utf8proc_int32_t)c)) {
    case UTF8PROC_CATEGORY_LU: case UTF8PROC_CATEGORY_LL: case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM: case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_ND: case UTF8PROC_CATEGORY_NL: case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_MN: case UTF8PROC_CATEGORY_MC: case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_CO:
        return true;
    default:
        return false;
    }
}

/* The code point at s (len > 0 bytes); *n its length. Invalid UTF-8: one byte, U+FFFFFFFF. */
static uint32_t next_cp(const uint8_t *s, size_t len, size_t *n) {
    utf8proc_int32_t c;
    utf8proc_ssize_t k = utf8proc_iterate(s, (utf8proc_ssize_t)len, &c);
    if (k <= 0) {
        *n = 1;
        return UINT32_MAX;
    }
    *n = (size_t)k;
    return (uint32_t)c;
}

typedef struct word_buf {
    utf8proc_int32_t *cp;    /* the folded code points of the word so far */
    size_t n, cap;
    uint8_t *utf8;           /* the word, encoded */
    size_t ucap;
    bool jamo;               /* holds Hangul jamo: compose before encoding */
} word_buf;

static bool reserve(word_buf *w, size_t more) {
    if (w->n + more <= w->cap) return true;
    size_t cap = w->cap ? 2 * w->cap : 64;
    while (cap < w->n + more) cap *= 2;
    utf8proc_int32_t *g = realloc(w->cp, cap * sizeof *g);
    if (!g) return false;
    w->cp = g;
    w->cap = cap;
    return true;
}

/* A character past ASCII folded into w (ASCII never comes here: st_words_each folds it through
 * ascii_fold). */
static bool fold_into(word_buf *w, uint32_t c) {
    for (size_t room = 8;; room *= 4) {
        if (!reserve(w, room)) return false;
        int bound = 0;
        utf8proc_ssize_t k = utf8proc_decompose_char(
            (utf8proc_int32_t)c, w->cp + w->n, (utf8proc_ssize_t)(w->cap - w->n),
            UTF8PROC_DECOMPOSE | UTF8PROC_CASEFOLD | UTF8PROC_STRIPMARK, &bound);
        if (k < 0) return true; /* not a character utf8proc knows: dropped */
        if ((size_t)k <= w->cap - w->n) {
            for (utf8proc_ssize_t i = 0; i < k; i++)
                if (w->cp[w->n + (size_t)i] >= 0x1100 && w->cp[w->n + (size_t)i] <= 0x11FF) w->jamo = true;
            w->n += (size_t)k;
            return true;
        }
    }
}

/* Yield the word gathered in w (if any), then empty it. */
static int flush(word_buf *w, size_t *pos, st_word_visit visit, void *arg) {
    if (w->n == 0) return STRATA_OK;
    size_t n = w->n;
    w->n = 0;
    if (w->jamo) {
        utf8proc_ssize_t k = utf8proc_normalize_utf32(w->cp, (utf8proc_ssize_t)n,
                                                      UTF8PROC_COMPOSE | UTF8PROC_STABLE);
        if (k > 0) n = (size_t)k;
        w->jamo = false;
    }
    if (w->ucap < 4 * n) {
        uint8_t *g = realloc(w->utf8, 4 * n);
        if (!g) return STRATA_ERR_NO_MEMORY;
        w->utf8 = g;
        w->ucap = 4 * n;
    }
    size_t len = 0;
    for (size_t i = 0; i < n; i++) {
        if (w->cp[i] < 0x80) w->utf8[len++] = (uint8_t)w->cp[i];
        else len += (size_t)utf8proc_encode_char(w->cp[i], w->utf8 + len);
    }
    return visit(arg, w->utf8, len, (*pos)++);
}

int st_words_each(const uint8_t *text, size_t len, st_word_visit visit, void *arg) {
    word_buf w = {0};
    size_t pos = 0, n;
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < len; i += n) {
        if (text[i] < 0x80) { /* a run of ASCII letters and digits without utf8proc */
            size_t j = i;
            while (j < len && text[j] < 0x80 && ascii_fold[text[j]]) j++;
            n = j > i ? j - i : 1;
            if (j == i) {
                rc = flush(&w, &pos, visit, arg);
            } else if (w.n == 0 && (j == len || text[j] < 0x80)) { /* a whole ASCII word */
                if (w.ucap < n) {
                    uint8_t *g = realloc(w.utf8, n < 64 ? 64 : n);
                    if (!g) {
                        rc = STRATA_ERR_NO_MEMORY;
                        continue;
                    }
                    w.utf8 = g;
                    w.ucap = n < 64 ? 64 : n;
                }
                for (size_t k = 0; k < n; k++) w.utf8[k] = ascii_fold[text[i + k]];
                rc = visit(arg, w.utf8, n, pos++);
            } else if (!reserve(&w, n)) {
                rc = STRATA_ERR_NO_MEMORY;
            } else {
                for (size_t k = i; k < j; k++) w.cp[w.n++] = ascii_fold[text[k]];
            }
            continue;
        }
        uint32_t c = next_cp(text + i, len - i, &n);
        if (c == UINT32_MAX || !word_char(c)) {
            rc = flush(&w, &pos, visit, arg);
        } else if (solo(c)) {
            if ((rc = flush(&w, &pos, visit, arg)) == STRATA_OK)
                rc = !fold_into(&w, c) ? STRATA_ERR_NO_MEMORY : flush(&w, &pos, visit, arg);
        } else if (!fold_into(&w, c)) {
            rc = STRATA_ERR_NO_MEMORY;
        }
    }
    if (rc == STRATA_OK) rc = flush(&w, &pos, visit, arg);
    free(w.cp);
    free(w.utf8);
    return rc;
}
