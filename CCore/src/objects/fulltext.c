/*
 * fulltext.c — full-text indexes (since format 8): a string property flagged
 * STRATA_PROP_FULLTEXT keeps the byte-key B+tree "$t<id>.i<col>" (the name plain indexes use; a
 * property has one kind or the other) holding, for each word (words.c: folded UTF-8, never a
 * 0x00 byte), its postings — the objects whose value holds it, ascending by key, each with the
 * positions of the word in the value — in chunks:
 *
 *   key    word cut to ST_WORD_KEY_MAX bytes at a character boundary | 0x00 |
 *          the chunk's first object key (8 bytes big-endian)
 *   value  per posting: (after the first) the varint difference of its key from the key before
 *          (>= 1), then its positions: a varint count n, then n varints — the first position,
 *          then each one's difference from the one before (>= 1). A count of 0 stands for more
 *          than ST_WORD_POS_MAX positions, which are not kept.
 *
 * Varints are LEB128. A chunk holds 1 to CHUNK_KEYS postings in at most CHUNK_BYTES value bytes
 * (one posting alone may take more), and every key of a chunk is below the first key of the
 * word's next chunk, so the objects holding a word are one run of the tree read in key order
 * (seek "word" 0x00), and those holding a word that begins with a prefix another (seek
 * "prefix"). The positions let a phrase ("e-mail", "東京") be checked without reading the text.
 *
 * A word longer than ST_WORD_KEY_MAX bytes shares its postings with every word that begins with
 * the same cut: a lookup of a word that long (or of a prefix that long) is inexact, and its
 * candidates are checked against their text. Changes are queued as entries "cut word | 0x00 |
 * object key | positions" in index.c's queue; st_fulltext_apply groups them by word (a hash
 * table), takes per word and object the last change made and merges them into the word's
 * chunks, the words in order, so a commit touches each word's chunks once. Null values have no
 * words.
 *
 * Invariant (checked by st_fulltext_verify): the chunks are well formed and ordered, and they
 * hold exactly the postings of every object's current value, positions included.
 */
#include "objects/private.h"

#include <stdlib.h>
#include <xxhash.h>

#define CHUNK_KEYS 256
#define CHUNK_BYTES 480
#define POS_BYTES (1 + 5 * ST_WORD_POS_MAX) /* the most a posting's positions take */
/* An entry (word, 0x00, key, positions) is written in the index queue's room (index.c). */
_Static_assert(ST_WORD_KEY_MAX + 9 + POS_BYTES <= STRATA_MAX_KEY, "an entry fits the room");

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

/* ------------------------------------------------------------------ varints and positions */

static size_t varint_put(uint8_t *o, uint64_t v) {
    size_t n = 0;
    while (v >= 0x80) o[n++] = (uint8_t)(v | 0x80), v >>= 7;
    o[n++] = (uint8_t)v;
    return n;
}

/* A varint at p[*at..len) into *v; false when cut short or over 64 bits. */
static inline bool varint_get(const uint8_t *p, size_t len, size_t *at, uint64_t *v) {
    if (*at < len && p[*at] < 0x80) { /* one byte: most differences */
        *v = p[(*at)++];
        return true;
    }
    *v = 0;
    for (unsigned shift = 0; *at < len && shift <= 63; shift += 7) {
        uint8_t b = p[(*at)++];
        *v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) return true;
    }
    return false;
}

static size_t positions_encode(const uint32_t *pos, size_t n, uint8_t *out) {
    if (n > ST_WORD_POS_MAX) return varint_put(out, 0);
    size_t len = varint_put(out, n);
    for (size_t i = 0; i < n; i++) len += varint_put(out + len, i ? pos[i] - pos[i - 1] : pos[0]);
    return len;
}

/* The length of the positions at p[at..len) (well formed: a count up to ST_WORD_POS_MAX, then
 * that many ascending positions below 2^32), or 0 when they are not. */
static size_t positions_len(const uint8_t *p, size_t len, size_t at) {
    size_t start = at;
    uint64_t n, v, sum = 0;
    if (!varint_get(p, len, &at, &n) || n > ST_WORD_POS_MAX) return 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!varint_get(p, len, &at, &v) || (i > 0 && v == 0) || (sum += v) > UINT32_MAX) return 0;
    }
    return at - start;
}

/* ------------------------------------------------------------------ the words of a value */

/* Every word of a text (cut) with its position, then sorted by word and position. */
typedef struct wordset {
    uint8_t *buf;            /* the cut words, each as u8 length + bytes */
    size_t len, cap;
    struct wordpos { uint64_t head; uint32_t at, pos; } *w; /* head: the word's first 8 bytes */
    size_t n, wcap;
} wordset;

static int collect(void *arg, const uint8_t *w, size_t len, size_t pos) {
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
    if (s->n == s->wcap) {
        size_t cap = s->wcap ? 2 * s->wcap : 64;
        struct wordpos *g = realloc(s->w, cap * sizeof *g);
        if (!g) return STRATA_ERR_NO_MEMORY;
        s->w = g;
        s->wcap = cap;
    }
    s->w[s->n].head = st_key_head8(w, len);
    s->w[s->n].at = (uint32_t)s->len;
    s->w[s->n++].pos = pos > UINT32_MAX ? UINT32_MAX : (uint32_t)pos;
    s->buf[s->len] = (uint8_t)len;
    memcpy(s->buf + s->len + 1, w, len);
    s->len += len + 1;
    return STRATA_OK;
}

static _Thread_local const uint8_t *g_words;

static int word_cmp(const uint8_t *x, const uint8_t *y) {
    size_t n = x[0] < y[0] ? x[0] : y[0];
    int c = memcmp(x + 1, y + 1, n);
    return c ? c : (x[0] > y[0]) - (x[0] < y[0]);
}

static int wordpos_cmp(const void *a, const void *b) {
    const struct wordpos *x = a, *y = b;
    if (x->head != y->head) return x->head < y->head ? -1 : 1;
    int c = word_cmp(g_words + x->at, g_words + y->at);
    return c ? c : (x->pos > y->pos) - (x->pos < y->pos);
}

/* The words of text with their positions, sorted: a word's run is s->w[i .. next_word(s, i)). */
static int words_of(const uint8_t *text, size_t len, wordset *s) {
    int rc = st_words_each(text, len, collect, s);
    if (rc) return rc;
    g_words = s->buf;
    if (s->n > 64) {
        qsort(s->w, s->n, sizeof *s->w, wordpos_cmp);
        return STRATA_OK;
    }
    for (size_t i = 1; i < s->n; i++) { /* a message's few words: by insertion (qsort's calls cost more) */
        struct wordpos x = s->w[i];
        size_t j = i;
        for (; j > 0 && wordpos_cmp(&s->w[j - 1], &x) > 0; j--) s->w[j] = s->w[j - 1];
        s->w[j] = x;
    }
    return STRATA_OK;
}

static size_t next_word(const wordset *s, size_t i) {
    size_t j = i + 1;
    while (j < s->n && s->w[j].head == s->w[i].head && word_cmp(s->buf + s->w[i].at, s->buf + s->w[j].at) == 0)
        j++;
    return j;
}

static void wordset_free(wordset *s) {
    free(s->buf);
    free(s->w);
}

/* The entry of word run [i, j) of s for object key: cut word | 0x00 | key | positions. */
static size_t entry_of(const wordset *s, size_t i, size_t j, int64_t key, bool positions, uint8_t *out) {
    const uint8_t *w = s->buf + s->w[i].at;
    memcpy(out, w + 1, w[0]);
    out[w[0]] = 0;
    st_wr_be64(out + w[0] + 1, (uint64_t)key);
    size_t len = (size_t)w[0] + 9;
    if (!positions) return len;
    uint32_t pos[ST_WORD_POS_MAX];
    size_t n = j - i;
    for (size_t k = 0; k < n && k < ST_WORD_POS_MAX; k++) pos[k] = s->w[i + k].pos;
    return len + positions_encode(pos, n, out + len);
}

/* ------------------------------------------------------------------ maintenance */

int st_fulltext_queue(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                      bool remove, strata_error *err) {
    if (v->type != STRATA_TYPE_STRING) return STRATA_OK;
    wordset s = {0};
    int rc = words_of(v->u.bytes.data, v->u.bytes.len, &s);
    if (rc) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0, j; rc == STRATA_OK && i < s.n; i = j) {
        j = next_word(&s, i);
        uint8_t *e = st_index_queue_room(p, err);
        if (!e) {
            rc = STRATA_ERR_NO_MEMORY;
            break;
        }
        rc = st_index_queue_add(t, p, entry_of(&s, i, j, key, !remove, e), remove, err);
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

typedef struct posting {
    int64_t key;
    const uint8_t *pos;      /* its positions' bytes (in a chunk copy or a queued entry) */
    size_t plen;
} posting;

typedef struct plist {
    posting *v;
    size_t n, cap;
    uint8_t *copy;           /* the decoded chunk's value, copied: the tree changes under it */
    size_t copy_cap;
} plist;

static bool pl_reserve(plist *l, size_t more) {
    if (l->n + more <= l->cap) return true;
    size_t cap = l->cap ? 2 * l->cap : 256;
    while (cap < l->n + more) cap *= 2;
    posting *g = realloc(l->v, cap * sizeof *g);
    if (!g) return false;
    l->v = g;
    l->cap = cap;
    return true;
}

static void pl_free(plist *l) {
    free(l->v);
    free(l->copy);
}

/* The key of a chunk's next posting (after `count` read) from *key and the difference at
 * val[*i..vl) (none for the first); *i left at its positions. false when malformed. */
static bool posting_key(const uint8_t *val, size_t vl, size_t *i, size_t count, uint64_t *key) {
    if (count == 0) return true;
    uint64_t d;
    if (!varint_get(val, vl, i, &d) || d == 0 || d > (uint64_t)INT64_MAX - *key) return false;
    *key += d;
    return true;
}

/* Append a chunk's postings (its first key, then its value's) to out, their positions pointing
 * into val; false when the value is malformed, or out of memory (*oom). */
static bool chunk_decode(int64_t first, const uint8_t *val, size_t vl, plist *out, bool *oom) {
    *oom = false;
    if (first < 0) return false;
    uint64_t at = (uint64_t)first;
    for (size_t i = 0, count = 0; i < vl || count == 0; count++) {
        if (!posting_key(val, vl, &i, count, &at)) return false;
        size_t pl = positions_len(val, vl, i);
        if (!pl) return false;
        if (!pl_reserve(out, 1)) return !(*oom = true);
        out->v[out->n++] = (posting){(int64_t)at, val + i, pl};
        i += pl;
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

/* The cursor's entry as a chunk: its value copied into l, its postings appended to l, its first
 * key in *first. */
static int take_chunk(strata_table_t *t, st_prop *p, st_iter *c, int64_t *first, plist *l,
                      strata_error *err) {
    const uint8_t *k, *v;
    size_t kl, vl;
    bool oom;
    int rc = st_iter_get(c, &k, &kl, &v, &vl, err);
    if (rc) return rc;
    if (l->copy_cap < vl + 1) {
        uint8_t *g = realloc(l->copy, vl + 1);
        if (!g) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        l->copy = g;
        l->copy_cap = vl + 1;
    }
    memcpy(l->copy, v, vl);
    *first = (int64_t)st_rd_be64(k + kl - 8);
    if (chunk_decode(*first, l->copy, vl, l, &oom)) return STRATA_OK;
    return oom ? st_err(err, STRATA_ERR_NO_MEMORY, "out of memory") : bad_chunk(t, p, k, kl, err);
}

/* Where key `key` of word w0 belongs: the chunk with the largest first key <= key (*have; its
 * first key and its postings, decoded into l) and the first key of the chunk after it
 * (*have_next, *next). With no chunk at or below key, the next is the word's first chunk. */
static int locate(strata_table_t *t, st_prop *p, strata_tree_t *ix, const uint8_t *w0, size_t wl,
                  int64_t key, bool *have, int64_t *first, plist *l, bool *have_next,
                  int64_t *next, strata_error *err) {
    uint8_t target[ST_WORD_KEY_MAX + 9];
    memcpy(target, w0, wl);
    st_wr_be64(target + wl, (uint64_t)key);
    *have = *have_next = false;
    l->n = 0;
    st_iter c;
    st_iter_init(&c, ix);
    const uint8_t *k;
    size_t kl;
    int rc = st_iter_seek(&c, target, wl + 8, err);
    if (rc == STRATA_OK) {
        if ((rc = st_iter_get(&c, &k, &kl, NULL, NULL, err))) return rc;
        if (of_word(k, kl, w0, wl) && (int64_t)st_rd_be64(k + wl) == key) { /* a chunk starts here */
            if ((rc = take_chunk(t, p, &c, first, l, err))) return rc;
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
        if ((rc = take_chunk(t, p, &c, first, l, err))) return rc;
        *have = true;
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* Write postings (ascending, distinct keys) as chunks of word w0. */
static int write_chunks(strata_tree_t *ix, st_bt_finger *f, const uint8_t *w0, size_t wl,
                        const plist *l, strata_error *err) {
    uint8_t key[ST_WORD_KEY_MAX + 9], val[CHUNK_BYTES + 10 + POS_BYTES];
    memcpy(key, w0, wl);
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < l->n;) {
        st_wr_be64(key + wl, (uint64_t)l->v[i].key);
        memcpy(val, l->v[i].pos, l->v[i].plen);
        size_t vl = l->v[i].plen, j = i + 1;
        for (; j < l->n && j - i < CHUNK_KEYS; j++) {
            uint8_t d[10];
            size_t dn = varint_put(d, (uint64_t)(l->v[j].key - l->v[j - 1].key));
            if (vl + dn + l->v[j].plen > CHUNK_BYTES) break;
            memcpy(val + vl, d, dn);
            memcpy(val + vl + dn, l->v[j].pos, l->v[j].plen);
            vl += dn + l->v[j].plen;
        }
        rc = st_tree_put_near(ix, f, key, wl + 8, val, vl, err);
        i = j;
    }
    return rc;
}

static size_t find_key(const plist *l, int64_t key, bool *found) {
    if (l->n == 0 || l->v[l->n - 1].key < key) { /* past the last: appending objects */
        *found = false;
        return l->n;
    }
    size_t lo = 0, hi = l->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (l->v[mid].key < key) lo = mid + 1;
        else hi = mid;
    }
    *found = lo < l->n && l->v[lo].key == key;
    return lo;
}

/* A decided change of one posting: its entry, whether it is a removal (else an insert or a
 * replacement), and whether a removal may find nothing (the object gained the word and lost it
 * again in this transaction). */
typedef struct change {
    const uint8_t *rec;
    int64_t key;             /* its object's */
    bool remove, may_be_absent;
} change;

/* The changes of one word (w0: cut word and 0x00, wl bytes), sorted by object key. */
static int apply_word(strata_table_t *t, st_prop *p, strata_tree_t *ix, st_bt_finger *f,
                      const uint8_t *w0, size_t wl, const change *ch, size_t n, plist *l,
                      strata_error *err) {
    int rc = STRATA_OK;
    for (size_t i = 0; rc == STRATA_OK && i < n;) {
        bool have, have_next;
        int64_t first = 0, next = 0;
        if ((rc = locate(t, p, ix, w0, wl, ch[i].key, &have, &first,
                         l, &have_next, &next, err)))
            break;
        for (; i < n; i++) { /* every change below the next chunk goes into this one */
            if (i + 8 < n) __builtin_prefetch(ch[i + 8].rec); /* records all over the queue */
            const uint8_t *e = ch[i].rec + 3;
            size_t el = st_rd16(ch[i].rec);
            int64_t key = ch[i].key;
            if (have_next && key >= next) break;
            bool found;
            size_t at = find_key(l, key, &found);
            if (ch[i].remove) {
                if (!found && ch[i].may_be_absent) continue;
                if (!found)
                    return st_txn_fail(t->txn, ST_CORRUPT(err, "full-text index of '%s.%s' lacks "
                                       "the word '%.*s' of object %lld", t->name, p->name,
                                       (int)(wl - 1), (const char *)w0, (long long)key));
                memmove(l->v + at, l->v + at + 1, (l->n - at - 1) * sizeof *l->v);
                l->n--;
            } else {
                posting np = {key, e + wl + 8, el - wl - 8};
                if (!found) {
                    if (!pl_reserve(l, 1)) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
                    memmove(l->v + at + 1, l->v + at, (l->n - at) * sizeof *l->v);
                    l->n++;
                }
                l->v[at] = np;
            }
        }
        if (have && (l->n == 0 || l->v[0].key != first)) { /* (else its first put replaces it) */
            uint8_t old[ST_WORD_KEY_MAX + 9];
            memcpy(old, w0, wl);
            st_wr_be64(old + wl, (uint64_t)first);
            rc = st_tree_del_near(ix, f, old, wl + 8, err);
        }
        if (rc == STRATA_OK) rc = write_chunks(ix, f, w0, wl, l, err);
    }
    return rc;
}

/* The word part of a queued entry (cut word and its 0x00): its length, 0 when malformed. */
static size_t word_part(const uint8_t *rec) {
    size_t el = st_rd16(rec);
    const uint8_t *zero = memchr(rec + 3, 0, el < ST_WORD_KEY_MAX + 1 ? el : ST_WORD_KEY_MAX + 1);
    size_t wl = zero ? (size_t)(zero - (rec + 3)) + 1 : 0;
    return wl >= 2 && el >= wl + 8 ? wl : 0;
}

/* The queue's records grouped by word: each distinct cut word (a hash table) gets its records
 * in queue order (a counting sort), then the words are sorted, and a word's records by object
 * key (stably: the queue's order among equal keys) when they are not in that order already (a
 * load appends objects in key order). A commit of 10,000 messages queues ~200,000 records of
 * ~15,000 words: sorting every record by its bytes (index.c's radix sort) took a fifth of a
 * full-text load. */
typedef struct word_group {
    const uint8_t *word;     /* the cut word and its 0x00 (set when every word is in) */
    uint32_t woff, wl;       /* where it is in grouping.words; its length, 0x00 included */
    uint32_t n, at;          /* its records: ordered[at .. at + n) */
    uint64_t hash;
} word_group;

typedef struct grouping {
    word_group *g;
    size_t ng, gcap;
    uint8_t *words;          /* the groups' words back to back (read at each probe: kept close) */
    size_t wlen, wcap;
    uint32_t *slot;          /* open addressing: a group's number + 1, 0 when free */
    size_t mask;
} grouping;

static bool slots_make(grouping *w, size_t cap) {
    uint32_t *s = calloc(cap, sizeof *s);
    if (!s) return false;
    free(w->slot);
    w->slot = s;
    w->mask = cap - 1;
    for (size_t i = 0; i < w->ng; i++) {
        size_t at = w->g[i].hash & w->mask;
        while (s[at]) at = (at + 1) & w->mask;
        s[at] = (uint32_t)i + 1;
    }
    return true;
}

/* The group of word (wl bytes, its 0x00 included), made when new; -1: out of memory. */
static long group_of(grouping *w, const uint8_t *word, size_t wl) {
    uint64_t h = XXH3_64bits(word, wl);
    size_t at = h & w->mask;
    for (uint32_t s; (s = w->slot[at]) != 0; at = (at + 1) & w->mask) {
        const word_group *g = &w->g[s - 1];
        if (g->hash == h && g->wl == wl && memcmp(w->words + g->woff, word, wl) == 0) return (long)s - 1;
    }
    if (w->ng == w->gcap) {
        size_t cap = w->gcap * 2;
        word_group *g = realloc(w->g, cap * sizeof *g);
        if (!g) return -1;
        w->g = g;
        w->gcap = cap;
    }
    if (w->wcap - w->wlen < wl) {
        size_t cap = 2 * w->wcap + wl;
        uint8_t *b = realloc(w->words, cap);
        if (!b) return -1;
        w->words = b;
        w->wcap = cap;
    }
    memcpy(w->words + w->wlen, word, wl);
    w->g[w->ng] = (word_group){NULL, (uint32_t)w->wlen, (uint32_t)wl, 0, 0, h};
    w->wlen += wl;
    w->slot[at] = (uint32_t)++w->ng;
    if (2 * w->ng > w->mask && !slots_make(w, 2 * (w->mask + 1))) return -1; /* at most half full */
    return (long)w->ng - 1;
}

/* The groups sorted by word (words hold no 0x00: shorter first): by their first 8 bytes, then
 * runs of equal ones by insertion; false: out of memory. */
static bool groups_sort(grouping *w) {
    st_head_ref *v = malloc(2 * (w->ng + 1) * sizeof *v);
    word_group *sorted = malloc((w->ng + 1) * sizeof *sorted);
    if (!v || !sorted) {
        free(v);
        free(sorted);
        return false;
    }
    for (size_t i = 0; i < w->ng; i++) /* (rec: the group itself) */
        v[i] = (st_head_ref){st_key_head8(w->g[i].word, w->g[i].wl), (const uint8_t *)&w->g[i]};
    st_radix_by_head(v, w->ng, v + w->ng);
    for (size_t i = 0, j; i < w->ng; i = j) {
        for (j = i + 1; j < w->ng && v[j].head == v[i].head; j++) {}
        for (size_t k = i + 1; k < j; k++) {
            st_head_ref x = v[k];
            const word_group *gx = (const word_group *)x.rec;
            size_t m = k;
            for (; m > i; m--) {
                const word_group *gm = (const word_group *)v[m - 1].rec;
                if (st_bytes_cmp(gm->word, gm->wl, gx->word, gx->wl) <= 0) break;
                v[m] = v[m - 1];
            }
            v[m] = x;
        }
    }
    for (size_t i = 0; i < w->ng; i++) sorted[i] = *(const word_group *)v[i].rec;
    free(v);
    free(w->g);
    w->g = sorted;
    w->gcap = w->ng + 1;
    return true;
}

/* A queued record of a word, its object key and whether it removes (read once, in queue order:
 * the queue of a big commit is megabytes, and reading a record again is a cache miss). */
typedef struct keyed_rec {
    const uint8_t *rec;
    uint64_t key;
    uint32_t group;          /* its word's (grouping.g) until the groups are sorted */
    bool remove;
} keyed_rec;

/* By object key, then by address (the queue's order). */
static int rec_cmp(const void *a, const void *b) {
    const keyed_rec *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->rec > y->rec) - (x->rec < y->rec);
}

/* One word's records (r[0..n), by object key, the queue's order among equal keys) as decided
 * changes: per object, the first and the last change made decide. */
static size_t decide(const keyed_rec *r, size_t n, change *ch) {
    size_t nch = 0;
    for (size_t j = 0, k; j < n; j = k) {
        for (k = j + 1; k < n && r[k].key == r[j].key; k++) {}
        bool remove = r[k - 1].remove, first_insert = !r[j].remove;
        if (!(remove && first_insert && k - j > 1)) /* not created and gone again */
            ch[nch++] = (change){r[k - 1].rec, (int64_t)r[j].key, remove, first_insert};
    }
    return nch;
}

int st_fulltext_apply(strata_table_t *t, st_prop *p, strata_tree_t *ix, const uint8_t *queue,
                      size_t len, size_t n, strata_error *err) {
    grouping w = {.gcap = 1024};
    w.g = malloc(w.gcap * sizeof *w.g);
    keyed_rec *inq = malloc((n + 1) * sizeof *inq), *ordered = malloc((n + 1) * sizeof *ordered);
    change *ch = malloc((n + 1) * sizeof *ch);
    plist l = {0};
    st_bt_finger finger = {.leave_room = true}; /* the words go in order: puts land near */
    int rc = w.g && inq && ordered && ch && slots_make(&w, 4096) ? STRATA_OK
             : st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    size_t i = 0;
    for (size_t off = 0; rc == STRATA_OK && off < len && i < n; off += 3 + st_rd16(queue + off), i++) {
        const uint8_t *rec = queue + off;
        size_t wl = word_part(rec);
        long g = wl ? group_of(&w, rec + 3, wl) : -1;
        if (!wl)
            rc = ST_CORRUPT(err, "full-text index of '%s.%s': a malformed queued change", t->name, p->name);
        else if (g < 0)
            rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        else
            w.g[g].n++, inq[i] = (keyed_rec){rec, st_rd_be64(rec + 3 + wl), (uint32_t)g, rec[2]};
    }
    if (rc == STRATA_OK) { /* each word's records in queue order */
        uint32_t at = 0;
        for (size_t g = 0; g < w.ng; g++) w.g[g].at = at, at += w.g[g].n, w.g[g].word = w.words + w.g[g].woff;
        for (size_t k = 0; k < i; k++) ordered[w.g[inq[k].group].at++] = inq[k];
        for (size_t g = 0; g < w.ng; g++) w.g[g].at -= w.g[g].n;
        if (!groups_sort(&w)) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t g = 0; rc == STRATA_OK && g < w.ng; g++) {
        const word_group *wg = &w.g[g];
        keyed_rec *r = ordered + wg->at;
        bool sorted = true;
        for (size_t k = 1; k < wg->n && sorted; k++) sorted = r[k - 1].key <= r[k].key;
        if (!sorted) qsort(r, wg->n, sizeof *r, rec_cmp);
        size_t nch = decide(r, wg->n, ch);
        rc = apply_word(t, p, ix, &finger, wg->word, wg->wl, ch, nch, &l, err);
    }
    free(w.g);
    free(w.slot);
    free(w.words);
    free(inq);
    free(ordered);
    free(ch);
    pl_free(&l);
    return rc ? st_txn_fail(t->txn, rc) : STRATA_OK;
}

/* ------------------------------------------------------------------ lookups */

/* The positions at p[*at..len) into out (*n of them; ST_WORD_POS_UNKNOWN when not kept), well
 * formed as positions_len says; false when not. */
static bool positions_read(const uint8_t *p, size_t len, size_t *at, uint32_t *out, uint32_t *n) {
    uint64_t count, v, sum = 0;
    if (!varint_get(p, len, at, &count) || count > ST_WORD_POS_MAX) return false;
    *n = count ? (uint32_t)count : ST_WORD_POS_UNKNOWN;
    for (uint64_t i = 0; i < count; i++) {
        if (!varint_get(p, len, at, &v) || (i > 0 && v == 0) || (sum += v) > UINT32_MAX) return false;
        out[i] = (uint32_t)sum;
    }
    return true;
}

/* The run of chunks of `word` (or of the words with that prefix): the cursor at its first
 * entry, the bytes every entry of it starts with in start[0..*sl); *exact as st_fulltext_scan
 * says. STRATA_ERR_NOT_FOUND: no index tree yet. */
typedef struct word_run {
    st_iter c;
    uint8_t start[ST_WORD_KEY_MAX + 1];
    size_t sl;
} word_run;

static int run_seek(strata_table_t *t, st_prop *p, const uint8_t *word, size_t len, bool prefix,
                    word_run *r, bool *exact, strata_error *err) {
    r->sl = cut_to(word, len, prefix ? EXACT_MAX : ST_WORD_KEY_MAX);
    *exact = prefix ? r->sl == len : len < EXACT_MAX;
    memcpy(r->start, word, r->sl);
    if (!prefix) r->start[r->sl++] = 0;
    strata_tree_t *ix;
    int rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc) return rc;
    st_iter_init(&r->c, ix);
    return st_iter_seek(&r->c, r->start, r->sl, err);
}

static bool in_run(const word_run *r, const uint8_t *k, size_t kl) {
    return kl >= r->sl && memcmp(k, r->start, r->sl) == 0;
}

int st_fulltext_scan(strata_table_t *t, st_prop *p, const uint8_t *word, size_t len, bool prefix,
                     st_posting_visit visit, void *arg, bool *exact, strata_error *err) {
    word_run r;
    int rc;
    for (rc = run_seek(t, p, word, len, prefix, &r, exact, err); rc == STRATA_OK; rc = st_iter_next(&r.c, err)) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if ((rc = st_iter_get(&r.c, &k, &kl, &v, &vl, err))) break;
        if (!in_run(&r, k, kl)) break;
        int64_t first = kl >= 10 ? (int64_t)st_rd_be64(k + kl - 8) : -1;
        if (first < 0 || k[kl - 9] != 0 || kl - 9 > ST_WORD_KEY_MAX) return bad_chunk(t, p, k, kl, err);
        /* the chunk's postings, read and checked in one pass (chunk_decode's rules) */
        uint64_t key = (uint64_t)first;
        for (size_t i = 0, count = 0; i < vl || count == 0; count++) {
            uint32_t pos[ST_WORD_POS_MAX], n;
            if (!posting_key(v, vl, &i, count, &key) || !positions_read(v, vl, &i, pos, &n))
                return bad_chunk(t, p, k, kl, err);
            if ((rc = visit(arg, (int64_t)key, pos, n))) return rc;
        }
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

int st_fulltext_chunks(strata_table_t *t, st_prop *p, const uint8_t *word, size_t len, bool prefix,
                       size_t cap, size_t *n, strata_error *err) {
    word_run r;
    bool exact;
    int rc;
    *n = 0;
    for (rc = run_seek(t, p, word, len, prefix, &r, &exact, err); rc == STRATA_OK && *n < cap;
         rc = st_iter_next(&r.c, err)) {
        const uint8_t *k;
        size_t kl;
        if ((rc = st_iter_get(&r.c, &k, &kl, NULL, NULL, err))) break;
        if (!in_run(&r, k, kl)) break;
        ++*n;
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* ------------------------------------------------------------------ verify */

/* Every chunk well formed, each word's chunks in order; *postings: how many they hold. */
static int verify_chunks(strata_table_t *t, st_prop *p, strata_tree_t *ix, uint64_t *postings,
                         strata_error *err) {
    plist l = {0};
    uint8_t last_word[ST_WORD_KEY_MAX + 1];
    size_t last_wl = 0;
    int64_t last_key = -1;
    st_iter c;
    st_iter_init(&c, ix);
    int rc;
    for (rc = st_iter_first(&c, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *k, *v;
        size_t kl, vl;
        bool oom = false;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, err))) break;
        l.n = 0;
        if (kl < 10 || k[kl - 9] != 0 || kl - 9 > ST_WORD_KEY_MAX ||
            !chunk_decode((int64_t)st_rd_be64(k + kl - 8), v, vl, &l, &oom) || l.n > CHUNK_KEYS ||
            (l.n > 1 && vl > CHUNK_BYTES)) {
            rc = oom ? st_err(err, STRATA_ERR_NO_MEMORY, "out of memory") : bad_chunk(t, p, k, kl, err);
            break;
        }
        bool same = kl - 8 == last_wl && memcmp(k, last_word, last_wl) == 0;
        if (same && l.v[0].key <= last_key) {
            rc = ST_CORRUPT(err, "full-text index of '%s.%s': the chunks of word '%.*s' overlap at "
                            "object %lld", t->name, p->name, (int)(kl - 9), (const char *)k,
                            (long long)l.v[0].key);
            break;
        }
        memcpy(last_word, k, kl - 8);
        last_wl = kl - 8;
        last_key = l.v[l.n - 1].key;
        *postings += l.n;
    }
    pl_free(&l);
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

int st_fulltext_verify(strata_table_t *t, st_prop *p, strata_error *err) {
    strata_tree_t *ix;
    int rc = st_prop_index_tree(t, p, false, &ix, err);
    if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
    bool have_tree = rc == STRATA_OK;
    uint64_t postings = 0, words = 0;
    if (have_tree && (rc = verify_chunks(t, p, ix, &postings, err))) return rc;
    plist l = {0};
    int64_t key = -1;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        st_objref ref;
        strata_value v;
        if ((rc = st_obj_locate(t, key, &ref, err)) || (rc = st_obj_read(t, &ref, p, &v, err))) break;
        if (v.type != STRATA_TYPE_STRING) continue;
        wordset s = {0};
        if (words_of(v.u.bytes.data, v.u.bytes.len, &s)) {
            wordset_free(&s);
            pl_free(&l);
            return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        }
        for (size_t i = 0, j; rc == STRATA_OK && i < s.n; i = j) {
            j = next_word(&s, i);
            uint8_t e[ST_WORD_KEY_MAX + 9 + POS_BYTES];
            size_t el = entry_of(&s, i, j, key, true, e), wl = (size_t)s.buf[s.w[i].at] + 1;
            bool have = false, have_next, found = false;
            int64_t first, next;
            if (have_tree) rc = locate(t, p, ix, e, wl, key, &have, &first, &l, &have_next, &next, err);
            size_t at = have ? find_key(&l, key, &found) : 0;
            if (rc == STRATA_OK && !found)
                rc = ST_CORRUPT(err, "full-text index of '%s.%s' lacks the word '%.*s' of object %lld",
                                t->name, p->name, (int)(wl - 1), (const char *)e, (long long)key);
            else if (rc == STRATA_OK && (l.v[at].plen != el - wl - 8 || memcmp(l.v[at].pos, e + wl + 8, l.v[at].plen)))
                rc = ST_CORRUPT(err, "full-text index of '%s.%s': the positions of word '%.*s' in "
                                "object %lld are wrong", t->name, p->name, (int)(wl - 1),
                                (const char *)e, (long long)key);
            words++;
        }
        wordset_free(&s);
        if (rc) break;
    }
    pl_free(&l);
    if (rc != STRATA_ERR_NOT_FOUND) return rc;
    if (postings != words)
        return ST_CORRUPT(err, "full-text index of '%s.%s' holds %llu postings for %llu words",
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
