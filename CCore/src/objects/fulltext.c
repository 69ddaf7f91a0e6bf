/*
 * fulltext.c — full-text indexes (since format 8): a string property flagged
 * STRATA_PROP_FULLTEXT keeps the byte-key B+tree "$t<id>.i<col>" (the name plain indexes use; a
 * property has one kind or the other) with one entry per distinct word of each object's value:
 *
 *   word (words.c: folded UTF-8, never a 0x00 byte) cut to ST_WORD_KEY_MAX bytes at a character
 *   boundary | 0x00 | object key (8 bytes big-endian)          value: empty
 *
 * so the objects holding a word are one run of the tree (seek "word" 0x00), those holding a word
 * that begins with a prefix another (seek "prefix"). A word longer than ST_WORD_KEY_MAX bytes
 * shares its entry with every word that begins with the same cut: a lookup of a word that long
 * (or of a prefix that long) is inexact, and its candidates are checked against their text.
 * Changes go through the index's pending queue (index.c), so a commit touches the tree in key
 * order. Null values have no words. Words are positions-free: a phrase (query/fulltext.c) is
 * checked on the candidates' text.
 *
 * Invariant (checked by st_fulltext_verify): the tree holds exactly the entries of the distinct
 * words of every object's current value.
 */
#include "objects/private.h"

#include <stdlib.h>

/* The length of w cut to at most max bytes, at a character boundary. */
static size_t cut_to(const uint8_t *w, size_t len, size_t max) {
    if (len <= max) return len;
    size_t n = max;
    while (n > 0 && (w[n] & 0xC0) == 0x80) n--; /* w[n] continues a character: cut before it */
    return n;
}

/* A word's entry is cut to between ST_WORD_KEY_MAX - 3 and ST_WORD_KEY_MAX bytes: a shorter word
 * is stored whole and can share its entry with no other word, and a prefix that short is whole
 * in the entry of every word that begins with it. */
#define EXACT_MAX (ST_WORD_KEY_MAX - 3)

/* ------------------------------------------------------------------ the words of a value */

typedef struct wordset {
    uint8_t *buf;            /* the cut words, each as u8 length + bytes */
    size_t len, cap;
    uint32_t *at;            /* offsets into buf */
    size_t n, acap;
} wordset;

static int collect(void *arg, const uint8_t *w, size_t len, size_t pos) {
    (void)pos;
    wordset *s = arg;
    len = cut_to(w, len, ST_WORD_KEY_MAX);
    if (s->cap - s->len < len + 1) {
        size_t cap = s->cap ? 2 * s->cap : 1024;
        while (cap - s->len < len + 1) cap *= 2;
        uint8_t *g = realloc(s->buf, cap);
        if (!g) return STRATA_ERR_NO_MEMORY;
        s->buf = g;
        s->cap = cap;
    }
    if (s->n == s->acap) {
        size_t cap = s->acap ? 2 * s->acap : 64;
        uint32_t *g = realloc(s->at, cap * sizeof *g);
        if (!g) return STRATA_ERR_NO_MEMORY;
        s->at = g;
        s->acap = cap;
    }
    s->at[s->n++] = (uint32_t)s->len;
    s->buf[s->len] = (uint8_t)len;
    memcpy(s->buf + s->len + 1, w, len);
    s->len += len + 1;
    return STRATA_OK;
}

static _Thread_local const uint8_t *g_words;

static int word_cmp(const void *a, const void *b) {
    const uint8_t *x = g_words + *(const uint32_t *)a, *y = g_words + *(const uint32_t *)b;
    size_t n = x[0] < y[0] ? x[0] : y[0];
    int c = memcmp(x + 1, y + 1, n);
    return c ? c : (x[0] > y[0]) - (x[0] < y[0]);
}

/* The distinct words of text, sorted (s->at[0..n)). */
static int distinct_words(const uint8_t *text, size_t len, wordset *s) {
    int rc = st_words_each(text, len, collect, s);
    if (rc) return rc;
    g_words = s->buf;
    if (s->n > 1) qsort(s->at, s->n, sizeof *s->at, word_cmp);
    size_t k = 0;
    for (size_t i = 0; i < s->n; i++)
        if (k == 0 || word_cmp(&s->at[k - 1], &s->at[i]) != 0) s->at[k++] = s->at[i];
    s->n = k;
    return STRATA_OK;
}

static void wordset_free(wordset *s) {
    free(s->buf);
    free(s->at);
}

static size_t entry_of(const uint8_t *w, int64_t key, uint8_t *out) {
    memcpy(out, w + 1, w[0]);
    out[w[0]] = 0;
    st_wr_be64(out + w[0] + 1, (uint64_t)key);
    return (size_t)w[0] + 9;
}

/* ------------------------------------------------------------------ maintenance */

int st_fulltext_queue(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                      bool remove, strata_error *err) {
    if (v->type != STRATA_TYPE_STRING) return STRATA_OK;
    wordset s = {0};
    int rc = distinct_words(v->u.bytes.data, v->u.bytes.len, &s);
    if (rc) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; rc == STRATA_OK && i < s.n; i++) {
        uint8_t e[ST_WORD_KEY_MAX + 9];
        size_t el = entry_of(s.buf + s.at[i], key, e);
        rc = st_index_queue(t, p, e, el, remove, err);
    }
    wordset_free(&s);
    return rc;
}

int st_fulltext_build(strata_table_t *t, st_prop *p, strata_error *err) {
    int rc;
    int64_t key = -1;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        st_objref ref;
        strata_value v;
        if ((rc = st_obj_locate(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &v, err)) ||
            (rc = st_fulltext_queue(t, p, &v, key, false, err)))
            break;
    }
    if (rc == STRATA_ERR_NOT_FOUND) rc = st_index_apply(t, p, err);
    if (rc) st_index_discard(p);
    return rc;
}

/* ------------------------------------------------------------------ lookups */

int st_fulltext_scan(strata_table_t *t, st_prop *p, const uint8_t *word, size_t len, bool prefix,
                     st_index_visit visit, void *arg, bool *exact, strata_error *err) {
    size_t cl = cut_to(word, len, prefix ? EXACT_MAX : ST_WORD_KEY_MAX);
    *exact = prefix ? cl == len : len < EXACT_MAX;
    uint8_t start[ST_WORD_KEY_MAX + 1];
    memcpy(start, word, cl);
    size_t sl = cl;
    if (!prefix) start[sl++] = 0;
    strata_tree_t *ix;
    int rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK;
    if (rc) return rc;
    st_iter c;
    st_iter_init(&c, ix);
    for (rc = st_iter_seek(&c, start, sl, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *k;
        size_t kl;
        if ((rc = st_iter_get(&c, &k, &kl, NULL, NULL, err))) return rc;
        if (kl < sl || memcmp(k, start, sl) != 0) break;
        if (kl < 10 || k[kl - 9] != 0 || kl - 9 > ST_WORD_KEY_MAX)
            return ST_CORRUPT(err, "full-text index of '%s.%s': a malformed %zu-byte entry",
                              t->name, p->name, kl);
        if ((rc = visit(arg, (int64_t)st_rd_be64(k + kl - 8)))) return rc;
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* ------------------------------------------------------------------ verify */

int st_fulltext_verify(strata_txn_t *txn, strata_table_t *t, st_prop *p, strata_error *err) {
    strata_tree_t *ix;
    int rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
    bool have_tree = rc == STRATA_OK;
    uint64_t entries = 0;
    int64_t key = -1;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        st_objref ref;
        strata_value v;
        if ((rc = st_obj_locate(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &v, err))) break;
        if (v.type != STRATA_TYPE_STRING) continue;
        wordset s = {0};
        if (distinct_words(v.u.bytes.data, v.u.bytes.len, &s)) {
            wordset_free(&s);
            return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        }
        for (size_t i = 0; rc == STRATA_OK && i < s.n; i++) {
            uint8_t e[ST_WORD_KEY_MAX + 9];
            size_t el = entry_of(s.buf + s.at[i], key, e);
            const uint8_t *val;
            size_t vl;
            rc = have_tree ? st_bt_get(txn, &ix->st, e, el, &val, &vl, err) : STRATA_ERR_NOT_FOUND;
            if (rc == STRATA_ERR_NOT_FOUND)
                rc = ST_CORRUPT(err, "full-text index of '%s.%s' lacks the word '%.*s' of object %lld",
                                t->name, p->name, (int)(el - 9), (const char *)e,
                                (long long)key);
            entries++;
        }
        wordset_free(&s);
        if (rc) return rc;
    }
    if (rc != STRATA_ERR_NOT_FOUND) return rc;
    uint64_t stored = have_tree ? ix->st.count : 0;
    if (stored != entries)
        return ST_CORRUPT(err, "full-text index of '%s.%s' holds %llu entries for %llu words",
                          t->name, p->name, (unsigned long long)stored, (unsigned long long)entries);
    return STRATA_OK;
}

/* ------------------------------------------------------------------ schema operation */

/* Why p cannot have a full-text index, or NULL. */
static const char *refusal(const st_prop *p, unsigned flags) {
    if (p->type != STRATA_TYPE_STRING || (flags & STRATA_PROP_LIST)) return "only a string property can";
    if (flags & (STRATA_PROP_INDEXED | STRATA_PROP_PRIMARY_KEY))
        return (flags & STRATA_PROP_PRIMARY_KEY) ? "the primary key cannot" : "an indexed property cannot (remove its index first)";
    return NULL;
}

int st_fulltext_check(const strata_table_t *t, const st_prop *p, unsigned flags, strata_error *err) {
    const char *why = refusal(p, flags);
    return why ? st_err(err, STRATA_ERR_WRONG_TYPE, "property '%s.%s' (%s%s): %s have a full-text index",
                        t->name, p->name, (flags & STRATA_PROP_LIST) ? "list of " : "",
                        st_type_name(p->type), why)
               : STRATA_OK;
}

int st_set_fulltext(strata_table_t *t, uint32_t col, bool on, strata_error *err) {
    st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", t->name, col);
    if (on == !!(p->flags & STRATA_PROP_FULLTEXT)) return STRATA_OK;
    int rc;
    if (on) {
        if ((rc = st_fulltext_check(t, p, p->flags, err)) || (rc = st_fulltext_build(t, p, err)))
            return rc;
        p->flags |= STRATA_PROP_FULLTEXT;
    } else {
        if ((rc = st_index_drop(t, p, err))) return rc;
        p->flags &= (uint8_t)~STRATA_PROP_FULLTEXT;
    }
    t->dirty = true;
    return STRATA_OK;
}
