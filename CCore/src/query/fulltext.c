/*
 * fulltext.c — the TEXT operator: `body TEXT 'swift -objc data*'`.
 *
 * The argument is split at white space into terms. A term matches a text when the text holds
 * the term's words (objects/words.c: folded, so case and diacritics never matter) one after the
 * other; `word*` matches any word that begins with `word` (in a phrase, the last word); a term
 * starting with '-' must not match. A text matches when every term does what its sign says.
 * A term usually has one word; it has several when its characters split into words ("e-mail",
 * "東京": each kanji is a word), and then they must follow each other in the text, as a phrase.
 * A term with no word in it ("-", "*", "...") is an error naming it, as is a TEXT with no terms.
 *
 * With a full-text index (objects/fulltext.c) the objects holding each word of the terms without
 * '-' come from the index and are intersected; single-word terms with '-' are subtracted. The
 * result is exact unless a phrase or a very long word needs the text itself: then the caller
 * checks each candidate with st_fts_match. Without an index, each object's text is matched.
 */
#include "query/query.h"

#include <stdio.h>
#include <stdlib.h>

typedef struct fts_term {
    size_t first, nwords;    /* its words: words[first .. first + nwords) */
    size_t state_at;         /* its bits in a match's state (st_fts_match) */
    bool prefix, exclude;
} fts_term;

struct st_fts {
    uint8_t *buf;            /* the words' bytes */
    size_t len, cap;
    size_t *at, *wlen;       /* word i: buf[at[i] .. at[i] + wlen[i]) */
    size_t nwords, wcap;
    fts_term *terms;
    size_t nterms, nexcluded;
    size_t state_words;      /* 64-bit words of a match's state */
};

static int add_word(void *arg, const uint8_t *w, size_t len, size_t pos) {
    (void)pos;
    st_fts *f = arg;
    if (f->cap - f->len < len) {
        size_t cap = f->cap ? 2 * f->cap : 256;
        while (cap - f->len < len) cap *= 2;
        uint8_t *g = realloc(f->buf, cap);
        if (!g) return STRATA_ERR_NO_MEMORY;
        f->buf = g;
        f->cap = cap;
    }
    if (f->nwords == f->wcap) {
        size_t cap = f->wcap ? 2 * f->wcap : 16;
        size_t *a = realloc(f->at, cap * sizeof *a);
        if (!a) return STRATA_ERR_NO_MEMORY;
        f->at = a;
        size_t *l = realloc(f->wlen, cap * sizeof *l);
        if (!l) return STRATA_ERR_NO_MEMORY;
        f->wlen = l;
        f->wcap = cap;
    }
    memcpy(f->buf + f->len, w, len);
    f->at[f->nwords] = f->len;
    f->wlen[f->nwords++] = len;
    f->len += len;
    return STRATA_OK;
}

static bool space(uint8_t c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

void st_fts_free(st_fts *f) {
    if (!f) return;
    free(f->buf);
    free(f->at);
    free(f->wlen);
    free(f->terms);
    free(f);
}

int st_fts_compile(const uint8_t *s, size_t len, st_fts **out, char *why, size_t whylen) {
    *out = NULL;
    st_fts *f = calloc(1, sizeof *f);
    size_t most = len / 2 + 1; /* terms are separated by at least one space */
    if (!f || !(f->terms = calloc(most, sizeof *f->terms))) {
        st_fts_free(f);
        return STRATA_ERR_NO_MEMORY;
    }
    for (size_t i = 0; i < len;) {
        while (i < len && space(s[i])) i++;
        if (i == len) break;
        size_t start = i;
        while (i < len && !space(s[i])) i++;
        size_t a = start, b = i;
        fts_term *t = &f->terms[f->nterms];
        if (s[a] == '-') t->exclude = true, a++;
        if (b > a && s[b - 1] == '*') t->prefix = true, b--;
        t->first = f->nwords;
        if (st_words_each(s + a, b - a, add_word, f)) {
            st_fts_free(f);
            return STRATA_ERR_NO_MEMORY;
        }
        t->nwords = f->nwords - t->first;
        f->nexcluded += t->exclude;
        t->state_at = f->state_words;
        f->state_words += (t->nwords + 63) / 64;
        if (t->nwords == 0) {
            snprintf(why, whylen, "the term '%.*s' has no word in it (words are letters and digits)",
                     (int)(i - start), (const char *)s + start);
            st_fts_free(f);
            return STRATA_ERR_INVALID_ARGUMENT;
        }
        f->nterms++;
    }
    if (f->nterms == 0) {
        snprintf(why, whylen, "it needs at least one word");
        st_fts_free(f);
        return STRATA_ERR_INVALID_ARGUMENT;
    }
    *out = f;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ matching one text */

static bool word_is(const st_fts *f, size_t w, const uint8_t *s, size_t len, bool prefix) {
    return prefix ? len >= f->wlen[w] && memcmp(s, f->buf + f->at[w], f->wlen[w]) == 0
                  : len == f->wlen[w] && memcmp(s, f->buf + f->at[w], len) == 0;
}

/* Matching streams the text's words once: for each term, bit i of its state says that the
 * term's words 0..i match the words ending at the one just seen (so a phrase of any length is
 * followed exactly, and a single word costs one comparison a word). */
typedef struct match_run {
    const st_fts *f;
    uint64_t *state;         /* the terms' bits, term t's from word state_at[t] */
    bool *seen;              /* per term: the term occurs */
    size_t positive_left;    /* terms without '-' not yet seen */
    bool excluded;           /* a term with '-' occurs */
} match_run;

enum { STOP = 1 << 20 };     /* ends the walk once the answer is known */

static bool bit(const uint64_t *b, size_t i) { return b[i / 64] >> (i % 64) & 1; }

static int match_word(void *arg, const uint8_t *w, size_t len, size_t pos) {
    (void)pos;
    match_run *m = arg;
    const st_fts *f = m->f;
    for (size_t t = 0; t < f->nterms; t++) {
        const fts_term *term = &f->terms[t];
        if (m->seen[t]) continue;
        uint64_t *b = m->state + term->state_at;
        size_t nw = term->nwords;
        for (size_t i = nw; i-- > 0;) { /* from the last word: bit i - 1 is still the old one */
            bool m_i = (i == 0 || bit(b, i - 1)) &&
                       word_is(f, term->first + i, w, len, term->prefix && i == nw - 1);
            if (m_i) b[i / 64] |= 1ull << (i % 64);
            else b[i / 64] &= ~(1ull << (i % 64));
        }
        if (!bit(b, nw - 1)) continue;
        m->seen[t] = true;
        if (term->exclude) return m->excluded = true, STOP;
        if (--m->positive_left == 0 && !f->nexcluded) return STOP;
    }
    return STRATA_OK;
}

int st_fts_match(const st_fts *f, const uint8_t *s, size_t len, bool *out) {
    uint64_t state_small[16];
    bool seen_small[16];
    bool small = f->state_words <= 16 && f->nterms <= 16;
    uint64_t *state = small ? state_small : calloc(f->state_words, sizeof *state);
    bool *seen = small ? seen_small : calloc(f->nterms, sizeof *seen);
    int rc = STRATA_OK;
    if (!state || !seen) {
        rc = STRATA_ERR_NO_MEMORY;
    } else {
        memset(state, 0, f->state_words * sizeof *state);
        memset(seen, 0, f->nterms * sizeof *seen);
        match_run m = {f, state, seen, f->nterms - f->nexcluded, false};
        rc = st_words_each(s, len, match_word, &m);
        if (rc == STOP) rc = STRATA_OK;
        *out = !m.excluded && m.positive_left == 0;
    }
    if (!small) {
        free(state);
        free(seen);
    }
    return rc;
}

/* ------------------------------------------------------------------ candidates from the index */

/* A posting visitor gathering the objects (keyvec, query.h). */
static int keys_push(void *arg, int64_t key, const uint32_t *pos, uint32_t npos) {
    (void)pos, (void)npos;
    return st_keyvec_push(arg, key);
}

/* Sort many keys of a dense range through a bitmap (a prefix's postings: one run per word),
 * dropping repeats; false when the range is too sparse for it (or out of memory). */
static bool keys_bitmap_sort(keyvec *k) {
    if (k->n < 1024) return false;
    int64_t lo = k->v[0], hi = k->v[0];
    for (size_t i = 1; i < k->n; i++) {
        if (k->v[i] < lo) lo = k->v[i];
        if (k->v[i] > hi) hi = k->v[i];
    }
    uint64_t span = (uint64_t)(hi - lo) + 1;
    if (span / 64 > k->n) return false; /* more bitmap words than keys */
    uint64_t *bits = calloc((size_t)(span / 64 + 1), sizeof *bits);
    if (!bits) return false;
    for (size_t i = 0; i < k->n; i++) {
        uint64_t b = (uint64_t)(k->v[i] - lo);
        bits[b / 64] |= 1ull << (b % 64);
    }
    size_t n = 0;
    for (uint64_t w = 0; w <= span / 64; w++)
        for (uint64_t x = bits[w]; x; x &= x - 1) k->v[n++] = lo + (int64_t)(w * 64 + (uint64_t)__builtin_ctzll(x));
    k->n = n;
    free(bits);
    return true;
}

/* Sorted, each key once: a prefix visits an object once per word it matches (one word's
 * postings come in key order, each object once). */
static void keys_settle(keyvec *k, bool sorted) {
    if (!sorted && !keys_bitmap_sort(k)) st_keyvec_unique(k);
}

/* a := a ∩ b (keep) or a \ b (!keep); both sorted. */
static void keys_merge(keyvec *a, const keyvec *b, bool keep) {
    size_t n = 0, j = 0;
    for (size_t i = 0; i < a->n; i++) {
        while (j < b->n && b->v[j] < a->v[i]) j++;
        bool in = j < b->n && b->v[j] == a->v[i];
        if (in == keep) a->v[n++] = a->v[i];
    }
    a->n = n;
}

/* a := a ∪ b; both sorted. */
static int keys_union(keyvec *a, const keyvec *b) {
    if (!b->n) return STRATA_OK;
    int64_t *v = malloc((a->n + b->n) * sizeof *v);
    if (!v) return STRATA_ERR_NO_MEMORY;
    size_t n = 0, i = 0, j = 0;
    while (i < a->n || j < b->n) {
        int64_t x = j == b->n || (i < a->n && a->v[i] <= b->v[j]) ? a->v[i] : b->v[j];
        v[n++] = x;
        while (i < a->n && a->v[i] == x) i++;
        while (j < b->n && b->v[j] == x) j++;
    }
    free(a->v);
    a->v = v;
    a->n = a->cap = n;
    return STRATA_OK;
}

/* The objects holding word w of f (a prefix when asked), sorted. */
static int word_keys(const st_fts *f, size_t w, bool prefix, strata_table_t *t, st_prop *p,
                     keyvec *out, bool *exact, strata_error *err) {
    out->n = 0;
    bool ex;
    int rc = st_fulltext_scan(t, p, f->buf + f->at[w], f->wlen[w], prefix, keys_push, out, &ex, err);
    if (rc == STRATA_ERR_NO_MEMORY) rc = st_err(err, rc, "out of memory");
    if (rc) return rc;
    *exact &= ex;
    keys_settle(out, !prefix); /* one word's entries come in key order */
    return STRATA_OK;
}

/* Postings with positions: entry i is object key[i] with positions pos[at[i] .. at[i] + n[i]),
 * or n[i] == UNKNOWN when the index did not keep them. */
typedef struct plist {
    int64_t *key;
    size_t *at;
    uint32_t *n;
    size_t len, cap;
    uint32_t *pos;
    size_t npos, pcap;
} plist;

#define UNKNOWN ST_WORD_POS_UNKNOWN

static void pl_free(plist *l) {
    free(l->key), free(l->at), free(l->n), free(l->pos);
    memset(l, 0, sizeof *l);
}

static int pl_add(plist *l, int64_t key, const uint32_t *pos, uint32_t n) {
    if (l->len == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        int64_t *k = realloc(l->key, cap * sizeof *k);
        if (!k) return STRATA_ERR_NO_MEMORY;
        l->key = k;
        size_t *a = realloc(l->at, cap * sizeof *a);
        if (!a) return STRATA_ERR_NO_MEMORY;
        l->at = a;
        uint32_t *c = realloc(l->n, cap * sizeof *c);
        if (!c) return STRATA_ERR_NO_MEMORY;
        l->n = c;
        l->cap = cap;
    }
    size_t m = n == UNKNOWN ? 0 : n;
    if (l->pcap - l->npos < m) {
        size_t cap = l->pcap ? 2 * l->pcap : 1024;
        while (cap - l->npos < m) cap *= 2;
        uint32_t *g = realloc(l->pos, cap * sizeof *g);
        if (!g) return STRATA_ERR_NO_MEMORY;
        l->pos = g;
        l->pcap = cap;
    }
    if (m) memcpy(l->pos + l->npos, pos, m * sizeof *pos);
    l->key[l->len] = key;
    l->at[l->len] = l->npos;
    l->n[l->len++] = n;
    l->npos += m;
    return STRATA_OK;
}

static int pl_push(void *arg, int64_t key, const uint32_t *pos, uint32_t npos) {
    return pl_add(arg, key, pos, npos);
}

static _Thread_local const plist *g_pl;

static int cmp_entry(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    int64_t kx = g_pl->key[x], ky = g_pl->key[y];
    return kx != ky ? (kx > ky) - (kx < ky) : (x > y) - (x < y);
}

static int cmp_u32(const void *a, const void *b) {
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* A prefix's postings (word by word) as one list by key: the positions of an object's matching
 * words merged. */
static int pl_by_key(const plist *in, plist *out) {
    size_t *order = malloc((in->len + 1) * sizeof *order);
    uint32_t *merged = malloc((in->npos + 1) * sizeof *merged);
    int rc = order && merged ? STRATA_OK : STRATA_ERR_NO_MEMORY;
    for (size_t i = 0; order && i < in->len; i++) order[i] = i;
    g_pl = in;
    if (!rc && in->len > 1) qsort(order, in->len, sizeof *order, cmp_entry);
    for (size_t i = 0, j; !rc && i < in->len; i = j) {
        uint32_t m = 0;
        bool unknown = false;
        for (j = i; j < in->len && in->key[order[j]] == in->key[order[i]]; j++) {
            size_t e = order[j];
            if (in->n[e] == UNKNOWN) unknown = true;
            else memcpy(merged + m, in->pos + in->at[e], in->n[e] * sizeof *merged), m += in->n[e];
        }
        if (!unknown && m > 1) qsort(merged, m, sizeof *merged, cmp_u32);
        rc = pl_add(out, in->key[order[i]], merged, unknown ? UNKNOWN : m);
    }
    free(order);
    free(merged);
    return rc;
}

/* One object of a phrase's state (where the phrase may start: a0[0..na), or unknown) meeting
 * word k's positions b[0..nb) (or unknown) there: what is left goes to next. */
static int phrase_meet(plist *next, int64_t key, const uint32_t *a, uint32_t na, const uint32_t *b,
                       uint32_t nb, uint32_t k) {
    if (na == UNKNOWN || nb == UNKNOWN) return pl_add(next, key, NULL, UNKNOWN);
    uint32_t starts[ST_WORD_POS_MAX], m = 0; /* a phrase starts at most where its first word is */
    for (uint32_t x = 0, y = 0; x < na && y < nb && m < ST_WORD_POS_MAX;) {
        uint64_t want = (uint64_t)a[x] + k;
        if (b[y] < want) y++;
        else if (b[y] > want) x++;
        else starts[m++] = a[x++];
    }
    return m ? pl_add(next, key, starts, m) : STRATA_OK;
}

/* Word k of a phrase read from the index and met with the state as it comes (its postings
 * come in key order); the read ends once the state is passed. */
typedef struct phrase_step {
    const plist *state;
    size_t i;
    uint32_t k;
    plist *next;
} phrase_step;

enum { PHRASE_DONE = 1 << 21 };

static int phrase_visit(void *arg, int64_t key, const uint32_t *pos, uint32_t npos) {
    phrase_step *ps = arg;
    const plist *st = ps->state;
    while (ps->i < st->len && st->key[ps->i] < key) ps->i++;
    if (ps->i == st->len) return PHRASE_DONE;
    if (st->key[ps->i] != key) return STRATA_OK;
    size_t i = ps->i++;
    return phrase_meet(ps->next, key, st->pos + st->at[i], st->n[i], pos, npos, ps->k);
}

/* The objects where term t (several words: a phrase) occurs: *sure those the positions prove,
 * *unsure those whose positions the index did not keep (the text decides); both sorted. */
static int phrase_keys(const st_fts *f, const fts_term *term, strata_table_t *t, st_prop *p,
                       keyvec *sure, keyvec *unsure, bool *exact, strata_error *err) {
    plist state = {0}, next = {0}, raw = {0}, word = {0}; /* state: per object, where the phrase may start */
    int rc = STRATA_OK;
    for (uint32_t k = 0; rc == STRATA_OK && k < term->nwords && (k == 0 || state.len); k++) {
        bool prefix = term->prefix && k == term->nwords - 1, ex;
        size_t w = term->first + k;
        raw.len = raw.npos = word.len = word.npos = next.len = next.npos = 0;
        if (k > 0 && !prefix) { /* met as it is read */
            phrase_step ps = {&state, 0, k, &next};
            rc = st_fulltext_scan(t, p, f->buf + f->at[w], f->wlen[w], false, phrase_visit, &ps, &ex, err);
            if (rc == PHRASE_DONE) rc = STRATA_OK;
        } else { /* the first word, or a prefix's words (by word, then key): gathered */
            rc = st_fulltext_scan(t, p, f->buf + f->at[w], f->wlen[w], prefix, pl_push, &raw, &ex, err);
            if (rc == STRATA_OK && prefix) rc = pl_by_key(&raw, &word);
            const plist *wl = prefix ? &word : &raw;
            if (rc == STRATA_OK && k == 0) {
                plist tmp = state;
                state = raw;
                raw = tmp;
                *exact &= ex;
                continue;
            }
            for (size_t i = 0, j = 0; rc == STRATA_OK && i < state.len; i++) {
                while (j < wl->len && wl->key[j] < state.key[i]) j++;
                if (j < wl->len && wl->key[j] == state.key[i])
                    rc = phrase_meet(&next, state.key[i], state.pos + state.at[i], state.n[i],
                                     wl->pos + wl->at[j], wl->n[j], k);
            }
        }
        if (rc) break;
        *exact &= ex;
        plist tmp = state;
        state = next;
        next = tmp;
    }
    for (size_t i = 0; rc == STRATA_OK && i < state.len; i++)
        rc = keys_push(state.n[i] == UNKNOWN ? unsure : sure, state.key[i], NULL, 0);
    if (rc == STRATA_ERR_NO_MEMORY) rc = st_err(err, rc, "out of memory");
    pl_free(&state);
    pl_free(&next);
    pl_free(&word);
    pl_free(&raw);
    return rc;
}

/* The objects where term t occurs, as phrase_keys says (a single word: all sure). */
static int term_keys(const st_fts *f, const fts_term *term, strata_table_t *t, st_prop *p,
                     keyvec *sure, keyvec *unsure, bool *exact, strata_error *err) {
    sure->n = unsure->n = 0;
    if (term->nwords == 1) return word_keys(f, term->first, term->prefix, t, p, sure, exact, err);
    return phrase_keys(f, term, t, p, sure, unsure, exact, err);
}

bool st_fts_served(const st_fts *f) {
    for (size_t i = 0; i < f->nterms; i++)
        if (!f->terms[i].exclude) return true;
    return false;
}

/* Keep (or drop) the keys of acc an exact word's postings hold, read as they come; the read
 * ends once acc is passed. */
typedef struct filter {
    const keyvec *acc;
    size_t i;
    bool *hit;
} filter;

enum { FILTER_DONE = 1 << 22 };

static int filter_visit(void *arg, int64_t key, const uint32_t *pos, uint32_t npos) {
    (void)pos, (void)npos;
    filter *fl = arg;
    while (fl->i < fl->acc->n && fl->acc->v[fl->i] < key) fl->i++;
    if (fl->i == fl->acc->n) return FILTER_DONE;
    if (fl->acc->v[fl->i] == key) fl->hit[fl->i++] = true;
    return STRATA_OK;
}

static int filter_word(const st_fts *f, size_t w, strata_table_t *t, st_prop *p, keyvec *acc, bool keep,
                       bool *exact, strata_error *err) {
    bool *hit = calloc(acc->n + 1, sizeof *hit);
    if (!hit) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    filter fl = {acc, 0, hit};
    bool ex;
    int rc = st_fulltext_scan(t, p, f->buf + f->at[w], f->wlen[w], false, filter_visit, &fl, &ex, err);
    if (rc == FILTER_DONE) rc = STRATA_OK;
    if (rc == STRATA_OK && !ex) *exact = false;
    if (rc == STRATA_OK && (ex || keep)) { /* an inexact word may not drop: the text decides */
        size_t n = 0;
        for (size_t i = 0; i < acc->n; i++)
            if (hit[i] == keep) acc->v[n++] = acc->v[i];
        acc->n = n;
    }
    free(hit);
    return rc;
}

/* How many chunks the term's first word has (up to 64): which terms to read first. */
static size_t term_weight(const st_fts *f, const fts_term *term, strata_table_t *t, st_prop *p) {
    size_t n = 64;
    strata_error ignored;
    st_fulltext_chunks(t, p, f->buf + f->at[term->first], f->wlen[term->first],
                       term->prefix && term->nwords == 1, 64, &n, &ignored);
    return n;
}

int st_fts_candidates(const st_fts *f, strata_table_t *t, st_prop *p, int64_t **out, size_t *n,
                      bool *exact, strata_error *err) {
    keyvec acc = {0}, sure = {0}, unsure = {0};
    bool first = true;
    int rc = STRATA_OK;
    *exact = true;
    /* the terms without '-', the lightest first: every one must occur */
    size_t *order = malloc((f->nterms + 1) * sizeof *order), *weight = malloc((f->nterms + 1) * sizeof *weight);
    size_t npos = 0;
    if (!order || !weight) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; rc == STRATA_OK && i < f->nterms; i++)
        if (!f->terms[i].exclude) order[npos++] = i;
    for (size_t i = 0; rc == STRATA_OK && npos > 1 && i < npos; i++) weight[i] = term_weight(f, &f->terms[order[i]], t, p);
    for (size_t i = 1; rc == STRATA_OK && npos > 1 && i < npos; i++) /* insertion sort: few terms */
        for (size_t j = i; j > 0 && weight[j] < weight[j - 1]; j--) {
            size_t o = order[j], w = weight[j];
            order[j] = order[j - 1], weight[j] = weight[j - 1];
            order[j - 1] = o, weight[j - 1] = w;
        }
    for (size_t o = 0; rc == STRATA_OK && o < npos && (first || acc.n); o++) {
        const fts_term *term = &f->terms[order[o]];
        if (!first && term->nwords == 1 && !term->prefix) { /* met as it is read */
            rc = filter_word(f, term->first, t, p, &acc, true, exact, err);
            continue;
        }
        if ((rc = term_keys(f, term, t, p, &sure, &unsure, exact, err))) break;
        if (unsure.n) {
            *exact = false;
            if (keys_union(&sure, &unsure)) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        }
        if (first) {
            keyvec tmp = acc;
            acc = sure;
            sure = tmp;
            first = false;
        } else {
            keys_merge(&acc, &sure, true);
        }
    }
    free(order);
    free(weight);
    /* the terms with '-': the objects where they surely occur go */
    for (size_t i = 0; rc == STRATA_OK && i < f->nterms && acc.n; i++) {
        const fts_term *term = &f->terms[i];
        if (!term->exclude) continue;
        if (term->nwords == 1 && !term->prefix) {
            rc = filter_word(f, term->first, t, p, &acc, false, exact, err);
            continue;
        }
        bool ex = true;
        if ((rc = term_keys(f, term, t, p, &sure, &unsure, &ex, err))) break;
        if (!ex) { /* a long word's postings are shared: the text decides */
            *exact = false;
            continue;
        }
        if (unsure.n) *exact = false;
        keys_merge(&acc, &sure, false);
    }
    free(sure.v);
    free(unsure.v);
    if (rc) {
        free(acc.v);
        return rc;
    }
    *out = acc.v;
    *n = acc.n;
    return STRATA_OK;
}
