/*
 * test_fulltext.c — full-text indexes and the TEXT operator through strata.h: how words are cut
 * and folded (case, diacritics, ß, CJK characters, Hangul words), phrases and prefixes and
 * excluded words, errors that name the term; the index's answers against an independent
 * brute-force matcher written here (and against the same property without an index) over a
 * random corpus that is edited, deleted from and rolled back between rounds; building and
 * dropping an index on existing objects, reopening, compacting and verify; damaged chunks found
 * by verify and refused by queries (white-box: the test writes a chunk through the tree layer).
 */
#include "testlib.h"

#include "objects/private.h"

#include <ctype.h>

static strata_value str(const char *s) {
    strata_value v = {.type = STRATA_TYPE_STRING};
    v.u.bytes.data = s;
    v.u.bytes.len = strlen(s);
    return v;
}

/* How many objects of `table` match `pred` with one string argument (NULL: none). */
static int count_of(strata_txn_t *txn, const char *table, const char *pred, const char *arg,
                    uint64_t *n) {
    strata_query_t *q;
    int rc = strata_query_compile(txn, table, pred, &q, E);
    if (rc) return rc;
    strata_value a = arg ? str(arg) : (strata_value){.type = STRATA_TYPE_NULL};
    rc = strata_query_count(q, txn, arg ? &a : NULL, arg ? 1 : 0, n, E);
    strata_query_free(q);
    return rc;
}

static strata_db_t *open_db(const char *name) {
    strata_db_t *db;
    return tl_db_open(tl_path(name), &db) == STRATA_OK ? db : NULL;
}

/* ------------------------------------------------------------------ words */

static const char *texts[] = {
    "Éclair au CAFÉ, s'il vous plaît",     /* 0 */
    "Die Straße ist naß",                   /* 1 */
    "東京都に住んでいます",                 /* 2 */
    "京東の話",                             /* 3 */
    "send an e-mail to bob@example.com",    /* 4 */
    "안녕하세요 세계",                      /* 5 */
    "Swift and Objective-C on Linux",       /* 6 */
    "swiftly swifter data databases",       /* 7 */
    "ÇA VA? ça va.",                        /* 8 */
};
#define NTEXTS (sizeof texts / sizeof *texts)

static void words_fold_case_and_diacritics_and_split_cjk(void) {
    strata_db_t *db = open_db("words.db");
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t body, plain, n;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Note", &t, E));
    OK(strata_table_add_property(t, "body", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT | STRATA_PROP_NULLABLE, NULL, &body, E));
    OK(strata_table_add_property(t, "plain", STRATA_TYPE_STRING, STRATA_PROP_NULLABLE, NULL, &plain, E));
    OK(strata_table_add_property(t, "n", STRATA_TYPE_INT, 0, NULL, &n, E));
    for (size_t i = 0; i < NTEXTS; i++) {
        strata_key_t k;
        strata_value v = str(texts[i]);
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, body, &v, E));
        OK(strata_obj_set(t, k, plain, &v, E));
    }
    strata_key_t nul;
    OK(strata_obj_create(t, &nul, E)); /* body null: no words */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);

    static const struct { const char *terms; uint64_t want; } cases[] = {
        {"eclair", 1}, {"ECLAIR cafe", 1}, {"caf*", 1}, {"plait", 1}, {"strasse", 1},
        {"nass", 1}, {"東京", 1}, {"京東", 1}, {"東", 2}, {"住*", 1}, {"e-mail", 1},
        {"mail", 1}, {"example.com", 1}, {"com", 1}, {"세계", 1}, {"안녕*", 1},
        {"swift", 1}, {"swift*", 2}, {"data*", 1}, {"swift* -linux", 1}, {"-swift*", 7} /* a null has no text: it never matches */,
        {"objective-c", 1}, {"c-objective", 0}, {"ca va", 1}, {"va -ça", 0},
        {"database", 0}, {"  swift   linux  ", 1}, {"SWIFT -data*", 1},
    };
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        uint64_t a = 99, b = 99;
        OK(count_of(r, "Note", "body TEXT $0", cases[i].terms, &a));
        OK(count_of(r, "Note", "plain TEXT $0", cases[i].terms, &b)); /* no index: each text */
        if (a != cases[i].want || b != cases[i].want)
            fprintf(stderr, "  TEXT '%s': %llu with the index, %llu without, want %llu\n", cases[i].terms,
                    (unsigned long long)a, (unsigned long long)b, (unsigned long long)cases[i].want);
        CHECK(a == cases[i].want && b == cases[i].want);
    }
    /* a literal, combined with other terms, and its results' keys */
    uint64_t c;
    OK(count_of(r, "Note", "body TEXT 'swift*' AND NOT body TEXT 'linux'", NULL, &c));
    CHECK(c == 1);
    OK(count_of(r, "Note", "body TEXT 'straße' OR n > 5", NULL, &c));
    CHECK(c == 1);
    strata_query_t *q;
    OK(strata_query_compile(r, "Note", "body TEXT 'swift*' SORT(body DESC)", &q, E));
    strata_results_t *res;
    OK(strata_query_run(q, r, NULL, 0, &res, E));
    CHECK(strata_results_size(res) == 2 && strata_results_key(res, 0) == 7 && strata_results_key(res, 1) == 6);
    strata_results_free(res);
    strata_query_free(q);

    /* errors name what is wrong */
    EXPECT_CODE(count_of(r, "Note", "body TEXT ''", NULL, &c), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "at least one word"));
    EXPECT_CODE(count_of(r, "Note", "body TEXT 'swift -'", NULL, &c), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "'-'"));
    EXPECT_CODE(count_of(r, "Note", "body TEXT $0", "... *", &c), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "'...'") && strstr(tl_err.message, "no word"));
    EXPECT_CODE(count_of(r, "Note", "n TEXT 'x'", NULL, &c), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "TEXT needs a string property") && strstr(tl_err.message, "n is a int"));
    EXPECT_CODE(count_of(r, "Note", "body TEXT 5", NULL, &c), STRATA_ERR_INVALID_ARGUMENT);
    strata_value five = {.type = STRATA_TYPE_INT, .u.i = 5};
    OK(strata_query_compile(r, "Note", "body TEXT $0", &q, E));
    EXPECT_CODE(strata_query_count(q, r, &five, 1, &c, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "TEXT $0 needs a string"));
    strata_query_free(q);
    strata_txn_free(r);

    /* what cannot have a full-text index */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Note", &t, E));
    strata_col_t bad;
    EXPECT_CODE(strata_table_add_property(t, "x", STRATA_TYPE_INT, STRATA_PROP_FULLTEXT, NULL, &bad, E),
                STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "'Note.x'") && strstr(tl_err.message, "only a string property"));
    EXPECT_CODE(strata_table_add_property(t, "y", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT | STRATA_PROP_LIST, NULL, &bad, E),
                STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_table_add_property(t, "z", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT | STRATA_PROP_INDEXED, NULL, &bad, E),
                STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_table_set_indexed(t, body, true, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "full-text index"));
    EXPECT_CODE(strata_table_set_fulltext(t, n, true, E), STRATA_ERR_WRONG_TYPE);
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ against brute force */

#define DOCS 1500
static const char *vocab[] = {
    "alpha", "Alpha", "ALPHABET", "beta", "betamax", "gamma", "delta", "Delta", "epsilon",
    "zeta", "eta", "theta", "iota", "kappa", "lambda", "mu", "nu", "xi", "omicron", "pi", "rho",
    "sigma", "tau", "upsilon", "phi", "chi", "psi", "omega", "data", "database", "datum", "swift",
    "swiftly", "objc", "linux", "apple", "a", "ab", "abc", "x1", "x12", "2024",
};
#define NVOCAB (sizeof vocab / sizeof *vocab)
static const char *seps[] = {" ", "  ", ", ", "-", ". ", "!", " (", ") ", "\n", "/"};

static char docs[DOCS][4096];
static bool doc_null[DOCS];
static bool doc_live[DOCS];

/* w…w plus two letters, 98 to 110 bytes: those of 102 bytes and more share their first 100
 * bytes, all the index keeps of them. */
static size_t long_word(char *out) {
    static const size_t lens[] = {98, 99, 100, 101, 102, 104, 110};
    static const char *tails[] = {"aa", "ab", "ba"};
    size_t len = lens[rnd() % 7];
    memset(out, 'w', len - 2);
    memcpy(out + len - 2, tails[rnd() % 3], 2);
    return len;
}

static void random_doc(char *out) {
    size_t n = 0;
    int words = 1 + (int)(rnd() % 14);
    if (rnd() % 25 == 0) { /* a word more often than the index keeps positions for */
        const char *w = vocab[rnd() % 8];
        for (int k = 0; k < 40; k++) n += (size_t)sprintf(out + n, "%s ", w);
    }
    for (int i = 0; i < words; i++) {
        if (rnd() % 30 == 0) { /* a word as long as an index entry holds, or longer */
            n += long_word(out + n);
        } else {
            const char *w = vocab[rnd() % NVOCAB];
            memcpy(out + n, w, strlen(w));
            n += strlen(w);
        }
        const char *s = seps[rnd() % (sizeof seps / sizeof *seps)];
        memcpy(out + n, s, strlen(s));
        n += strlen(s);
    }
    out[n] = 0;
}

/* The brute force: lowercase ASCII words, split at everything else. */
typedef struct bwords {
    char w[120][128];
    int n;
} bwords;

static void brute_words(const char *s, bwords *out) {
    out->n = 0;
    size_t len = 0;
    for (const char *p = s;; p++) {
        if (*p && isalnum((unsigned char)*p)) {
            if (len < 127) out->w[out->n][len++] = (char)tolower((unsigned char)*p);
            continue;
        }
        if (len) {
            out->w[out->n][len] = 0;
            out->n++;
            len = 0;
        }
        if (!*p) break;
    }
}

static bool brute_match(const char *text, const char *query) {
    bwords t, q;
    brute_words(text, &t);
    char buf[400];
    snprintf(buf, sizeof buf, "%s", query);
    for (char *save = NULL, *term = strtok_r(buf, " ", &save); term; term = strtok_r(NULL, " ", &save)) {
        bool exclude = term[0] == '-';
        if (exclude) term++;
        size_t tl = strlen(term);
        bool prefix = tl && term[tl - 1] == '*';
        if (prefix) term[tl - 1] = 0;
        brute_words(term, &q);
        bool found = false;
        for (int i = 0; !found && i + q.n <= t.n; i++) {
            int k = 0;
            for (; k < q.n; k++) {
                bool last = k == q.n - 1;
                if (prefix && last ? strncmp(t.w[i + k], q.w[k], strlen(q.w[k])) != 0
                                   : strcmp(t.w[i + k], q.w[k]) != 0)
                    break;
            }
            found = k == q.n;
        }
        if (found == exclude) return false;
    }
    return true;
}

static void random_query(char *out) {
    static const char *extra[] = {"alpha-beta", "data-swift", "ww*", "wwwwwwwwww*", "x1*", "a*", "ab*",
                                  "omega*", "zz", "alpha-alpha", "beta-beta-gamma", "ALPHA-b*", "delta-d*"};
    size_t n = 0;
    int terms = 1 + (int)(rnd() % 3);
    for (int i = 0; i < terms; i++) {
        if (i && rnd() % 3 == 0) out[n++] = '-';
        const char *w = rnd() % 4 == 0 ? extra[rnd() % (sizeof extra / sizeof *extra)] : vocab[rnd() % NVOCAB];
        n += (size_t)sprintf(out + n, "%s", w);
        if (rnd() % 5 == 0 && out[n - 1] != '*') out[n++] = '*';
        out[n++] = ' ';
    }
    if (rnd() % 4 == 0) { /* a long word, exactly */
        n += long_word(out + n);
        if (rnd() % 3 == 0) out[n++] = '*';
    }
    out[n] = 0;
}

static void set_doc(strata_table_t *t, strata_col_t a, strata_col_t b, strata_key_t k, int i) {
    strata_value v = doc_null[i] ? (strata_value){.type = STRATA_TYPE_NULL} : str(docs[i]);
    OK(strata_obj_set(t, k, a, &v, E));
    OK(strata_obj_set(t, k, b, &v, E));
}

static void compare_queries(strata_db_t *db, int nq) {
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    strata_query_t *qi, *qs;
    OK(strata_query_compile(r, "Doc", "body TEXT $0", &qi, E));
    OK(strata_query_compile(r, "Doc", "copy TEXT $0", &qs, E));
    for (int i = 0; i < nq; i++) {
        char query[400];
        random_query(query);
        strata_value a = str(query);
        strata_results_t *ri, *rs;
        OK(strata_query_run(qi, r, &a, 1, &ri, E));
        OK(strata_query_run(qs, r, &a, 1, &rs, E));
        size_t want = 0;
        bool same = strata_results_size(ri) == strata_results_size(rs);
        for (int d = 0, at = 0; d < DOCS; d++) {
            if (!doc_live[d]) continue;
            bool m = !doc_null[d] && brute_match(docs[d], query);
            if (!m) continue;
            want++;
            same &= strata_results_key(ri, (size_t)at) == d && strata_results_key(rs, (size_t)at) == d;
            at++;
        }
        if (!same || want != strata_results_size(ri))
            fprintf(stderr, "  TEXT '%s': index %zu, scan %zu, brute force %zu\n", query,
                    strata_results_size(ri), strata_results_size(rs), want);
        size_t got = strata_results_size(ri);
        strata_results_free(ri);
        strata_results_free(rs);
        CHECK(same && want == got);
    }
    strata_query_free(qi);
    strata_query_free(qs);
    strata_txn_free(r);
}

static void index_answers_match_brute_force(void) {
    tl_seed(0x51ED5EEDull);
    strata_db_t *db = open_db("corpus.db");
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t body, copy;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Doc", &t, E));
    OK(strata_table_add_property(t, "body", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT | STRATA_PROP_NULLABLE, NULL, &body, E));
    OK(strata_table_add_property(t, "copy", STRATA_TYPE_STRING, STRATA_PROP_NULLABLE, NULL, &copy, E));
    for (int i = 0; i < DOCS; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        CHECK(k == i);
        doc_live[i] = true;
        doc_null[i] = rnd() % 40 == 0;
        random_doc(docs[i]);
        set_doc(t, body, copy, k, i);
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    compare_queries(db, 300);
    for (int round = 0; round < 4; round++) {
        /* edits, deletes, nulls; every other round rolled back */
        bool keep = round % 2 == 0;
        static char saved[DOCS][4096];
        static bool saved_null[DOCS], saved_live[DOCS];
        memcpy(saved, docs, sizeof docs);
        memcpy(saved_null, doc_null, sizeof doc_null);
        memcpy(saved_live, doc_live, sizeof doc_live);
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Doc", &t, E));
        for (int e = 0; e < 300; e++) {
            int d = (int)(rnd() % DOCS);
            if (!doc_live[d]) continue;
            if (rnd() % 6 == 0) {
                OK(strata_obj_delete(t, d, E));
                doc_live[d] = false;
                continue;
            }
            doc_null[d] = rnd() % 10 == 0;
            random_doc(docs[d]);
            set_doc(t, body, copy, d, d);
        }
        if (keep) {
            OK(strata_txn_commit(w, E));
        } else {
            strata_txn_abort(w);
            memcpy(docs, saved, sizeof docs);
            memcpy(doc_null, saved_null, sizeof doc_null);
            memcpy(doc_live, saved_live, sizeof doc_live);
        }
        strata_txn_free(w);
        OK(strata_db_verify(db, E));
        compare_queries(db, 150);
    }
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ the index's life */

static void an_index_is_built_dropped_reopened_and_compacted(void) {
    strata_db_t *db = open_db("life.db");
    CHECK(db);
    strata_txn_t *w, *r;
    strata_table_t *t;
    strata_col_t body;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Msg", &t, E));
    OK(strata_table_add_property(t, "body", STRATA_TYPE_STRING, 0, NULL, &body, E));
    for (int i = 0; i < 2000; i++) {
        strata_key_t k;
        char text[64];
        snprintf(text, sizeof text, "message %d about %s", i, i % 3 ? "cats" : "dogs and cats");
        strata_value v = str(text);
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, body, &v, E));
    }
    OK(strata_table_set_fulltext(t, body, true, E)); /* built over the existing objects */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    uint64_t n;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(count_of(r, "Msg", "body TEXT 'cats -dogs'", NULL, &n));
    CHECK(n == 1333);
    OK(count_of(r, "Msg", "body TEXT 'message 17*'", NULL, &n));
    CHECK(n == 111); /* 17, 170..179, 1700..1799 */
    strata_txn_free(r);

    /* reopened, then compacted: the same answers, verify clean */
    OK(strata_db_close(db, E));
    db = open_db("life.db");
    CHECK(db);
    OK(strata_db_compact(db, NULL, E));
    OK(strata_db_verify(db, E));
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(count_of(r, "Msg", "body TEXT 'dogs'", NULL, &n));
    CHECK(n == 667);
    strata_txn_free(r);

    /* dropped: TEXT still answers, from the texts */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Msg", &t, E));
    OK(strata_table_set_fulltext(t, body, false, E));
    OK(strata_table_set_indexed(t, body, true, E)); /* and a plain index may take its place */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(count_of(r, "Msg", "body TEXT 'dogs'", NULL, &n));
    CHECK(n == 667);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

static void a_damaged_chunk_is_reported_not_followed(void) {
    strata_db_t *db = open_db("damage.db");
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t body;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Msg", &t, E));
    OK(strata_table_add_property(t, "body", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT, NULL, &body, E));
    for (int i = 0; i < 50; i++) {
        strata_key_t k;
        strata_value v = str(i % 2 ? "red fox" : "blue fox");
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, body, &v, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    /* a chunk's value: per posting, (after the first) its key's difference, then its positions:
     * a count and the positions ("red" is word 0 of its objects) */
    static const struct { const uint8_t val[6]; size_t len; const char *why; } bad[] = {
        {{0x05, 0x00}, 2, "malformed"},                    /* 5 positions, 1 there */
        {{0x01, 0x00, 0x00, 0x01, 0x00}, 5, "malformed"},  /* a difference of 0: a key twice */
        {{0x01, 0x81}, 2, "malformed"},                    /* a varint cut short */
        {{0x01, 0x00, 0x02, 0x01, 0x00}, 5, "lacks the word"}, /* objects 1 and 3 only */
        {{0x01, 0x01}, 2, "positions"},                    /* "red" at 1 */
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Msg", &t, E));
        strata_tree_t *ix;
        OK(st_prop_index_tree(t, st_prop_find(t, body), false, &ix, E));
        uint8_t key[4 + 8] = {'r', 'e', 'd', 0};
        st_wr_be64(key + 4, 1); /* "red" starts at object 1 */
        OK(st_tree_put(ix, key, sizeof key, bad[i].val, bad[i].len, E));
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        EXPECT_CODE(strata_db_verify(db, E), STRATA_ERR_CORRUPT);
        if (!strstr(tl_err.message, bad[i].why)) fprintf(stderr, "  %zu: %s\n", i, tl_err.message);
        CHECK(strstr(tl_err.message, "Msg.body") && strstr(tl_err.message, bad[i].why));
        strata_txn_t *r;
        uint64_t n = 0;
        OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
        int rc = count_of(r, "Msg", "body TEXT 'red'", NULL, &n);
        CHECK(rc == (i < 3 ? STRATA_ERR_CORRUPT : STRATA_OK));
        OK(count_of(r, "Msg", "body TEXT 'blue'", NULL, &n)); /* other words still answer */
        CHECK(n == 25);
        strata_txn_free(r);
        /* mended: the index rebuilt */
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Msg", &t, E));
        OK(strata_table_set_fulltext(t, body, false, E));
        OK(strata_table_set_fulltext(t, body, true, E));
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        OK(strata_db_verify(db, E));
    }
    OK(strata_db_close(db, E));
}

static const tl_test tests[] = {
    TL_TEST(words_fold_case_and_diacritics_and_split_cjk),
    TL_TEST(index_answers_match_brute_force),
    TL_TEST(an_index_is_built_dropped_reopened_and_compacted),
    TL_TEST(a_damaged_chunk_is_reported_not_followed),
};

int main(int argc, char **argv) {
    tl_seed(0x9E3779B97F4A7C15ull);
    return tl_run("fulltext", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
