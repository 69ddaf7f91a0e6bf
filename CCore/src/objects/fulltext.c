/*
 * fulltext.c — full-text indexes (since format 8): a string property flagged
 * STRATA_PROP_FULLTEXT keeps the byte-key B+tree "$t<id>.i<col>" (the name plain indexes use; a
 * property has one kind or the other) holding, for each word (words.c: folded UTF-8, never a
 * 0x00 byte), the ascending keys of the objects whose value holds it, in chunks:
 *
 *   key    word cut to ST_WORD_KEY_MAX bytes at a character boundary | 0x00 |
 *          the chunk's first object key (8 bytes big-endian)
 *   value  the chunk's other keys, each as the LEB128 varint of its difference from the key
 *          before it (>= 1)
 *
 * A chunk holds 1 to CHUNK_KEYS keys in at most CHUNK_BYTES value bytes, and every key of a
 * chunk is below the first key of the word's next chunk, so the objects holding a word are one
 * run of the tree read in key order (seek "word" 0x00), and those holding a word that begins
 * with a prefix another (seek "prefix"). A common word costs a byte or two per object; a rare
 * one about the size of one entry.
 *
 * A word longer than ST_WORD_KEY_MAX bytes shares its keys with every word that begins with the
 * same cut: a lookup of a word that long (or of a prefix that long) is inexact, and its
 * candidates are checked against their text. Changes are queued as entries "cut word | 0x00 |
 * object key" (index.c sorts them, st_fulltext_apply merges each word's into its chunks), so a
 * commit touches each word's chunks once. Null values have no words. Positions are not kept: a
 * phrase (query/fulltext.c) is checked on the candidates' text.
 *
 * Invariant (checked by st_fulltext_verify): the chunks are well formed and ordered, and they
 * hold exactly the keys of the objects whose current value holds each word.
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

/* ------------------------------------------------------------------ chunks */

#define CHUNK_KEYS 256
#define CHUNK_BYTES 480

typedef struct keyvec {
    int64_t *v;
    size_t n, cap;
} keyvec;

static bool kv_reserve(keyvec *k, size_t more) {
    if (k->n + more <= k->cap) return true;
    size_t cap = k->cap ? 2 * k->cap : 256;
    while (cap < k->n + more) cap *= 2;
    int64_t *g = realloc(k->v, cap * sizeof *g);
    if (!g) return false;
    k->v = g;
    k->cap = cap;
    return true;
}

static size_t varint_put(uint8_t *o, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) o[n++] = (uint8_t)(v | 0x80), v >>= 7;
    o[n++] = (uint8_t)v;
    return n;
}

/* Append a chunk's keys (its first, then its value's) to out; false when the value is not a
 * run of varints >= 1 that stays within int64, or out of memory (*oom). */
static bool chunk_decode(int64_t first, const uint8_t *val, size_t vl, keyvec *out, bool *oom) {
    *oom = false;
    if (first < 0) return false;
    if (!kv_reserve(out, 1 + vl)) return !(*oom = true);
    out->v[out->n++] = first;
    uint64_t at = (uint64_t)first;
    for (size_t i = 0; i < vl;) {
        uint64_t d = 0;
        unsigned shift = 0;
        for (;;) {
            if (i == vl || shift > 63) return false;
            uint8_t b = val[i++];
            d |= (uint64_t)(b & 0x7F) << shift;
            shift += 7;
            if (!(b & 0x80)) break;
        }
        if (d == 0 || d > (uint64_t)INT64_MAX - at) return false;
        at += d;
        out->v[out->n++] = (int64_t)at;
    }
    return true;
}

/* Is entry k (kl bytes) a chunk of the word w0 (the cut word and its 0x00, wl bytes)? */
static bool of_word(const uint8_t *k, size_t kl, const uint8_t *w0, size_t wl) {
    return kl == wl + 8 && memcmp(k, w0, wl) == 0;
}

static int bad_chunk(strata_table_t *t, st_prop *p, const uint8_t *k, size_t kl, strata_error *err) {
    return ST_CORRUPT(err, "full-text index of '%s.%s': the chunk of word '%.*s' at object %lld is "
                      "malformed", t->name, p->name, (int)(kl > 9 ? kl - 9 : 0), (const char *)k,
                      kl >= 8 ? (long long)st_rd_be64(k + kl - 8) : -1LL);
}

/* The cursor's entry as a chunk of w0: its keys appended to keys, its first in *first. */
static int take_chunk(strata_table_t *t, st_prop *p, st_iter *c, int64_t *first, keyvec *keys,
                      strata_error *err) {
    const uint8_t *k, *v;
    size_t kl, vl;
    bool oom;
    int rc = st_iter_get(c, &k, &kl, &v, &vl, err);
    if (rc) return rc;
    *first = (int64_t)st_rd_be64(k + kl - 8);
    if (chunk_decode(*first, v, vl, keys, &oom)) return STRATA_OK;
    return oom ? st_err(err, STRATA_ERR_NO_MEMORY, "out of memory") : bad_chunk(t, p, k, kl, err);
}

/* Where key `key` of word w0 belongs: the chunk with the largest first key <= key (*have; its
 * first key and its keys, decoded into keys) and the first key of the chunk after it
 * (*have_next, *next). With no chunk at or below key, the next is the word's first chunk. */
static int locate(strata_table_t *t, st_prop *p, strata_tree_t *ix, const uint8_t *w0, size_t wl,
                  int64_t key, bool *have, int64_t *first, keyvec *keys, bool *have_next,
                  int64_t *next, strata_error *err) {
    uint8_t target[ST_WORD_KEY_MAX + 9];
    memcpy(target, w0, wl);
    st_wr_be64(target + wl, (uint64_t)key);
    *have = *have_next = false;
    keys->n = 0;
    st_iter c;
    st_iter_init(&c, ix);
    const uint8_t *k;
    size_t kl;
    int rc = st_iter_seek(&c, target, wl + 8, err);
    if (rc == STRATA_OK) {
        if ((rc = st_iter_get(&c, &k, &kl, NULL, NULL, err))) return rc;
        if (of_word(k, kl, w0, wl) && (int64_t)st_rd_be64(k + wl) == key) { /* a chunk starts here */
            if ((rc = take_chunk(t, p, &c, first, keys, err))) return rc;
            *have = true;
            if ((rc = st_iter_next(&c, err)) == STRATA_OK &&
                (rc = st_iter_get(&c, &k, &kl, NULL, NULL, err)) == STRATA_OK && of_word(k, kl, w0, wl)) {
                *have_next = true;
                *next = (int64_t)st_rd_be64(k + wl);
            }
            return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
        }
        if (of_word(k, kl, w0, wl)) {
            *have_next = true;
            *next = (int64_t)st_rd_be64(k + wl);
        }
        rc = st_iter_prev(&c, err);
    } else if (rc == STRATA_ERR_NOT_FOUND) {
        rc = st_iter_last(&c, err);
    }
    if (rc == STRATA_OK && (rc = st_iter_get(&c, &k, &kl, NULL, NULL, err)) == STRATA_OK &&
        of_word(k, kl, w0, wl)) {
        if ((rc = take_chunk(t, p, &c, first, keys, err))) return rc;
        *have = true;
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* Write keys (ascending, distinct) as chunks of word w0. */
static int write_chunks(strata_tree_t *ix, const uint8_t *w0, size_t wl, const keyvec *keys,
                        strata_error *err) {
    uint8_t key[ST_WORD_KEY_MAX + 9], val[CHUNK_BYTES + 10];
    memcpy(key, w0, wl);
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < keys->n;) {
        st_wr_be64(key + wl, (uint64_t)keys->v[i]);
        size_t vl = 0, j = i + 1;
        for (; j < keys->n && j - i < CHUNK_KEYS; j++) {
            uint8_t one[10];
            size_t n = varint_put(one, (uint64_t)(keys->v[j] - keys->v[j - 1]));
            if (vl + n > CHUNK_BYTES) break;
            memcpy(val + vl, one, n);
            vl += n;
        }
        rc = st_tree_put(ix, key, wl + 8, val, vl, err);
        i = j;
    }
    return rc;
}

static size_t find_key(const keyvec *k, int64_t key, bool *found) {
    size_t lo = 0, hi = k->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (k->v[mid] < key) lo = mid + 1;
        else hi = mid;
    }
    *found = lo < k->n && k->v[lo] == key;
    return lo;
}

/* The changes of one word (w0: cut word and 0x00), sorted by object key, each key once. */
static int apply_word(strata_table_t *t, st_prop *p, strata_tree_t *ix, const uint8_t *w0,
                      size_t wl, const uint8_t **recs, size_t n, keyvec *keys, strata_error *err) {
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < n;) {
        bool have, have_next;
        int64_t first = 0, next = 0;
        if ((rc = locate(t, p, ix, w0, wl, (int64_t)st_rd_be64(recs[i] + 3 + wl), &have, &first,
                         keys, &have_next, &next, err)))
            break;
        for (; i < n; i++) { /* every change below the next chunk goes into this one */
            int64_t key = (int64_t)st_rd_be64(recs[i] + 3 + wl);
            if (have_next && key >= next) break;
            bool found;
            size_t at = find_key(keys, key, &found);
            if (recs[i][2]) { /* remove */
                if (!found)
                    return st_txn_fail(t->txn, ST_CORRUPT(err, "full-text index of '%s.%s' lacks "
                                       "the word '%.*s' of object %lld", t->name, p->name,
                                       (int)(wl - 1), (const char *)w0, (long long)key));
                memmove(keys->v + at, keys->v + at + 1, (keys->n - at - 1) * sizeof *keys->v);
                keys->n--;
            } else if (!found) {
                if (!kv_reserve(keys, 1)) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
                memmove(keys->v + at + 1, keys->v + at, (keys->n - at) * sizeof *keys->v);
                keys->v[at] = key;
                keys->n++;
            }
        }
        if (have) {
            uint8_t old[ST_WORD_KEY_MAX + 9];
            memcpy(old, w0, wl);
            st_wr_be64(old + wl, (uint64_t)first);
            rc = st_tree_del(ix, old, wl + 8, err);
        }
        if (rc == STRATA_OK) rc = write_chunks(ix, w0, wl, keys, err);
    }
    return rc;
}

int st_fulltext_apply(strata_table_t *t, st_prop *p, strata_tree_t *ix, const uint8_t **recs,
                      size_t n, strata_error *err) {
    keyvec keys = {0};
    int rc = STRATA_OK;
    for (size_t i = 0, j; rc == STRATA_OK && i < n; i = j) {
        size_t el = st_rd16(recs[i]);
        if (el < 9 || el - 8 > ST_WORD_KEY_MAX + 1 || recs[i][3 + el - 9] != 0) {
            rc = ST_CORRUPT(err, "full-text index of '%s.%s': a queued %zu-byte entry", t->name, p->name, el);
            break;
        }
        const uint8_t *w0 = recs[i] + 3;
        size_t wl = el - 8;
        for (j = i + 1; j < n && st_rd16(recs[j]) == el && memcmp(recs[j] + 3, w0, wl) == 0; j++) {}
        rc = apply_word(t, p, ix, w0, wl, recs + i, j - i, &keys, err);
    }
    free(keys.v);
    return rc ? st_txn_fail(t->txn, rc) : STRATA_OK;
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
    keyvec keys = {0};
    st_iter c;
    st_iter_init(&c, ix);
    for (rc = st_iter_seek(&c, start, sl, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *k, *v;
        size_t kl, vl;
        bool oom;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, err))) break;
        if (kl < sl || memcmp(k, start, sl) != 0) break;
        if (kl < 10 || k[kl - 9] != 0 || kl - 9 > ST_WORD_KEY_MAX) {
            rc = bad_chunk(t, p, k, kl, err);
            break;
        }
        keys.n = 0;
        if (!chunk_decode((int64_t)st_rd_be64(k + kl - 8), v, vl, &keys, &oom)) {
            rc = oom ? st_err(err, STRATA_ERR_NO_MEMORY, "out of memory") : bad_chunk(t, p, k, kl, err);
            break;
        }
        for (size_t i = 0; rc == STRATA_OK && i < keys.n; i++) rc = visit(arg, keys.v[i]);
        if (rc) break;
    }
    free(keys.v);
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* ------------------------------------------------------------------ verify */

/* Every chunk well formed, each word's chunks in order; *postings: the keys they hold. */
static int verify_chunks(strata_table_t *t, st_prop *p, strata_tree_t *ix, uint64_t *postings,
                         strata_error *err) {
    keyvec keys = {0};
    uint8_t last_word[ST_WORD_KEY_MAX + 1];
    size_t last_wl = 0;
    int64_t last_key = -1;
    st_iter c;
    st_iter_init(&c, ix);
    int rc;
    for (rc = st_iter_first(&c, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *k, *v;
        size_t kl, vl;
        bool oom;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, err))) break;
        keys.n = 0;
        if (kl < 10 || k[kl - 9] != 0 || kl - 9 > ST_WORD_KEY_MAX || vl > CHUNK_BYTES ||
            !chunk_decode((int64_t)st_rd_be64(k + kl - 8), v, vl, &keys, &oom) || keys.n > CHUNK_KEYS) {
            rc = oom ? st_err(err, STRATA_ERR_NO_MEMORY, "out of memory") : bad_chunk(t, p, k, kl, err);
            break;
        }
        bool same = kl - 8 == last_wl && memcmp(k, last_word, last_wl) == 0;
        if (same && keys.v[0] <= last_key) {
            rc = ST_CORRUPT(err, "full-text index of '%s.%s': the chunks of word '%.*s' overlap at "
                            "object %lld", t->name, p->name, (int)(kl - 9), (const char *)k,
                            (long long)keys.v[0]);
            break;
        }
        memcpy(last_word, k, kl - 8);
        last_wl = kl - 8;
        last_key = keys.v[keys.n - 1];
        *postings += keys.n;
    }
    free(keys.v);
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

int st_fulltext_verify(strata_table_t *t, st_prop *p, strata_error *err) {
    strata_tree_t *ix;
    int rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
    bool have_tree = rc == STRATA_OK;
    uint64_t postings = 0, words = 0;
    if (have_tree && (rc = verify_chunks(t, p, ix, &postings, err))) return rc;
    keyvec keys = {0};
    int64_t key = -1;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        st_objref ref;
        strata_value v;
        if ((rc = st_obj_locate(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &v, err))) break;
        if (v.type != STRATA_TYPE_STRING) continue;
        wordset s = {0};
        if (distinct_words(v.u.bytes.data, v.u.bytes.len, &s)) {
            wordset_free(&s);
            free(keys.v);
            return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        }
        for (size_t i = 0; rc == STRATA_OK && i < s.n; i++) {
            const uint8_t *w = s.buf + s.at[i];
            uint8_t w0[ST_WORD_KEY_MAX + 1];
            memcpy(w0, w + 1, w[0]);
            w0[w[0]] = 0;
            bool have = false, have_next, found = false;
            int64_t first, next;
            if (have_tree) rc = locate(t, p, ix, w0, (size_t)w[0] + 1, key, &have, &first, &keys,
                                       &have_next, &next, err);
            if (rc == STRATA_OK && have) find_key(&keys, key, &found);
            if (rc == STRATA_OK && !found)
                rc = ST_CORRUPT(err, "full-text index of '%s.%s' lacks the word '%.*s' of object %lld",
                                t->name, p->name, (int)w[0], (const char *)w + 1, (long long)key);
            words++;
        }
        wordset_free(&s);
        if (rc) break;
    }
    free(keys.v);
    if (rc != STRATA_ERR_NOT_FOUND) return rc;
    if (postings != words)
        return ST_CORRUPT(err, "full-text index of '%s.%s' holds %llu object keys for %llu words",
                          t->name, p->name, (unsigned long long)postings, (unsigned long long)words);
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
        if ((rc = st_fulltext_check(t, p, p->flags, err))) return rc;
        p->flags |= STRATA_PROP_FULLTEXT; /* before the build: its changes are applied as chunks */
        if ((rc = st_fulltext_build(t, p, err))) {
            p->flags &= (uint8_t)~STRATA_PROP_FULLTEXT;
            return rc;
        }
    } else {
        if ((rc = st_index_drop(t, p, err))) return rc;
        p->flags &= (uint8_t)~STRATA_PROP_FULLTEXT;
    }
    t->dirty = true;
    return STRATA_OK;
}
