/*
 * search_bench.c — the `search` group of make bench: full-text search, Strata's word index
 * (STRATA_PROP_FULLTEXT, `body TEXT ...`) beside SQLite FTS5 (the default unicode61 tokenizer,
 * an external-content table over the messages, detail=full as FTS5 ships it).
 *
 * Data: N messages of 5–40 words drawn with a Zipf skew (s = 1) from 20,000 made-up words, with
 * punctuation and capitals as people type them; the same from a fixed seed for both, inserted in
 * transactions of 10,000 (FTS5 filled by its 'rebuild' command, its fastest way in).
 *
 * Rows:
 *   index size    bytes on disk per message the index adds: the compacted file with the index
 *                 minus the one without (Strata), the database with the FTS5 table minus the one
 *                 without, both after VACUUM (SQLite)
 *   queries       counts of matches, the median of 21 runs each in one read transaction: a
 *                 common word, a word of middle rank, a rare one, two words, a prefix, a word
 *                 without another, a phrase; the two engines must agree on every count
 *
 * Usage: search_bench [-n N] [-d DIR]
 */
#define BENCH_NAME "search_bench"
#include "benchlib.h"

#include <math.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ the corpus */

#define VOCAB 20000
static char words[VOCAB][16];
static double zipf_cdf[VOCAB];

static void make_vocabulary(void) {
    static const char *cons = "bcdfghklmnprstvz", *vow = "aeiou";
    rng = 0xC0FFEE1234567ull;
    double sum = 0;
    for (int i = 0; i < VOCAB; i++) {
        for (;;) { /* 1–4 syllables, distinct words */
            int syl = 1 + (int)(rnd() % 4), n = 0;
            for (int s = 0; s < syl; s++) {
                words[i][n++] = cons[rnd() % 16];
                words[i][n++] = vow[rnd() % 5];
                if (rnd() % 3 == 0) words[i][n++] = cons[rnd() % 16];
            }
            words[i][n] = 0;
            bool dup = false;
            for (int j = 0; j < i && !dup; j++) dup = strcmp(words[i], words[j]) == 0;
            if (!dup) break;
        }
        sum += 1.0 / (i + 1);
        zipf_cdf[i] = sum;
    }
    for (int i = 0; i < VOCAB; i++) zipf_cdf[i] /= sum;
}

static int zipf_pick(void) {
    double u = (double)(rnd() % 10000000) / 1e7;
    int lo = 0, hi = VOCAB - 1;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (zipf_cdf[mid] < u) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Message i into buf; its length. */
static size_t make_message(uint64_t i, char *buf) {
    rng = i * 0x2545F4914F6CDD1Dull + 7;
    int n = 5 + (int)(rnd() % 36);
    size_t len = 0;
    for (int k = 0; k < n; k++) {
        const char *w = words[zipf_pick()];
        size_t wl = strlen(w);
        memcpy(buf + len, w, wl);
        if (k == 0 || rnd() % 12 == 0) buf[len] = (char)(buf[len] - 32); /* a capital */
        len += wl;
        static const char *sep[] = {" ", " ", " ", " ", " ", ", ", ". ", "! ", "? ", " - "};
        const char *s = k == n - 1 ? "." : sep[rnd() % 10];
        memcpy(buf + len, s, strlen(s));
        len += strlen(s);
    }
    buf[len] = 0;
    return len;
}

/* ------------------------------------------------------------------ Strata */

/* Load the messages (with a full-text index when asked), compact; seconds of the load. */
static double strata_load(const char *path, size_t n, bool fulltext) {
    strata_db_t *db = open_db(path);
    strata_error e;
    strata_col_t c_body;
    char body[1024];
    double t = now();
    for (size_t at = 0; at < n;) {
        strata_txn_t *w;
        strata_table_t *tb;
        check(strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e), &e, "begin");
        if (at == 0) {
            check(strata_table_create(w, "Message", &tb, &e), &e, "table");
            check(strata_table_add_property(tb, "body", STRATA_TYPE_STRING,
                                            fulltext ? STRATA_PROP_FULLTEXT : 0, NULL, &c_body, &e), &e, "body");
        } else {
            check(strata_table_open(w, "Message", &tb, &e), &e, "table");
        }
        for (size_t end = at + 10000 < n ? at + 10000 : n; at < end; at++) {
            size_t len = make_message(at, body);
            strata_value b = {.type = STRATA_TYPE_STRING, .u.bytes = {body, len}};
            strata_key_t k;
            check(strata_obj_create(tb, &k, &e), &e, "create");
            check(strata_obj_set(tb, k, c_body, &b, &e), &e, "body");
        }
        check(strata_txn_commit(w, &e), &e, "commit");
        strata_txn_free(w);
    }
    double load = now() - t;
    strata_copy_options o;
    strata_copy_options_init(&o);
    check(strata_db_compact(db, &o, &e), &e, "compact");
    check(strata_db_close(db, &e), &e, "close");
    return load;
}

#define RUNS 21

/* Median seconds of a count of `body TEXT terms`; *count its answer. */
static double strata_query(strata_db_t *db, const char *terms, uint64_t *count) {
    strata_error e;
    strata_txn_t *txn;
    strata_query_t *q;
    check(strata_txn_begin(db, STRATA_TXN_READ, &txn, &e), &e, "begin");
    check(strata_query_compile(txn, "Message", "body TEXT $0", &q, &e), &e, terms);
    strata_value a = {.type = STRATA_TYPE_STRING, .u.bytes = {terms, strlen(terms)}};
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t = now();
        check(strata_query_count(q, txn, &a, 1, count, &e), &e, terms);
        v[r] = now() - t;
    }
    strata_query_free(q);
    strata_txn_free(txn);
    qsort(v, RUNS, sizeof *v, cmp_double);
    return v[RUNS / 2];
}

/* ------------------------------------------------------------------ SQLite FTS5 */

static double sqlite_load(sqlite3 *db, size_t n) {
    sq(db, "PRAGMA journal_mode=WAL");
    sq(db, "CREATE TABLE message (id INTEGER PRIMARY KEY, body TEXT)");
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(db, "INSERT INTO message VALUES (?, ?)", -1, &ins, NULL) != SQLITE_OK)
        die("prepare", sqlite3_errmsg(db));
    char body[1024];
    double t = now();
    for (size_t at = 0; at < n;) {
        sq(db, "BEGIN");
        for (size_t end = at + 10000 < n ? at + 10000 : n; at < end; at++) {
            size_t len = make_message(at, body);
            sqlite3_bind_int64(ins, 1, (sqlite3_int64)at + 1);
            sqlite3_bind_text(ins, 2, body, (int)len, SQLITE_STATIC);
            if (sqlite3_step(ins) != SQLITE_DONE) die("insert", sqlite3_errmsg(db));
            sqlite3_reset(ins);
        }
        sq(db, "COMMIT");
    }
    sqlite3_finalize(ins);
    return now() - t;
}

static void sqlite_settle(sqlite3 *db) {
    sq(db, "VACUUM");
    sq(db, "PRAGMA wal_checkpoint(TRUNCATE)");
}

static double fts5_query(sqlite3 *db, const char *match, uint64_t *count) {
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT count(*) FROM search WHERE search MATCH ?", -1, &st, NULL) != SQLITE_OK)
        die("prepare", sqlite3_errmsg(db));
    sq(db, "BEGIN");
    double v[RUNS];
    for (int r = 0; r < RUNS; r++) {
        double t = now();
        sqlite3_bind_text(st, 1, match, -1, SQLITE_STATIC);
        if (sqlite3_step(st) != SQLITE_ROW) die(match, sqlite3_errmsg(db));
        *count = (uint64_t)sqlite3_column_int64(st, 0);
        sqlite3_reset(st);
        v[r] = now() - t;
    }
    sq(db, "COMMIT");
    sqlite3_finalize(st);
    qsort(v, RUNS, sizeof *v, cmp_double);
    return v[RUNS / 2];
}

/* ------------------------------------------------------------------ the run */

int main(int argc, char **argv) {
    size_t n = 200000;
    const char *dir = "build/bench-data";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n")) n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-d")) dir = argv[i + 1];
        else die("usage", "search_bench [-n N] [-d DIR]");
    }
    if (n < 1000) die("usage", "N must be at least 1000");
    make_vocabulary();
    char plain[300], indexed[300], sqpath[300], cmd[4000];
    snprintf(plain, sizeof plain, "%.250s/search-plain.db", dir);
    snprintf(indexed, sizeof indexed, "%.250s/search.db", dir);
    snprintf(sqpath, sizeof sqpath, "%.250s/search.sqlite", dir);
    const char *clean = "rm -f '%s' '%s.lock' '%s.log' '%s' '%s.lock' '%s.log' '%s' '%s-wal' '%s-shm'";
    snprintf(cmd, sizeof cmd, "mkdir -p '%.250s'", dir);
    if (system(cmd)) die("mkdir", dir);
    snprintf(cmd, sizeof cmd, clean, plain, plain, plain, indexed, indexed, indexed, sqpath, sqpath, sqpath);
    if (system(cmd)) die("rm", dir);

    double load_plain = strata_load(plain, n, false);
    double load_fts = strata_load(indexed, n, true);
    uint64_t s_plain = disk_bytes(plain), s_fts = disk_bytes(indexed);

    sqlite3 *sdb;
    if (sqlite3_open(sqpath, &sdb) != SQLITE_OK) die("sqlite open", sqpath);
    double sq_load = sqlite_load(sdb, n);
    sqlite_settle(sdb);
    uint64_t q_plain = disk_bytes(sqpath);
    double t = now();
    sq(sdb, "CREATE VIRTUAL TABLE search USING fts5(body, content='message', content_rowid='id')");
    sq(sdb, "INSERT INTO search(search) VALUES('rebuild')");
    double sq_build = now() - t;
    sqlite_settle(sdb);
    uint64_t q_fts = disk_bytes(sqpath);

    /* the queries: words by rank (0 the most common) */
    /* the queries: words by rank (0 the most common), in each engine's syntax where they differ */
    static const struct { const char *what, *strata, *fts5; int a, b; } qs[] = {
        {"common word", "%s", "%s", 2, 0},        {"middle word", "%s", "%s", 150, 0},
        {"rare word", "%s", "%s", 6000, 0},       {"two words", "%s %s", "%s %s", 9, 150},
        {"prefix", "%.2s*", "%.2s*", 40, 0},      {"word -word", "%s -%s", "%s NOT %s", 9, 2},
        {"phrase", "%s-%s", "\"%s %s\"", 0, 1},
    };
    char q[7][2][96];
    for (int i = 0; i < 7; i++) {
        snprintf(q[i][0], 96, qs[i].strata, words[qs[i].a], words[qs[i].b]);
        snprintf(q[i][1], 96, qs[i].fts5, words[qs[i].a], words[qs[i].b]);
    }

    strata_db_t *db = open_db(indexed);
    double per = (double)n;
    printf("search: N=%zu messages (5-40 words, Zipf over 20,000 words); Strata's word index vs SQLite FTS5\n", n);
    printf("%-14s %-24s %10s %12s %12s %9s\n", "query", "terms", "matches", "strata us", "fts5 us", "vs fts5");
    double logsum = 0;
    for (int i = 0; i < 7; i++) {
        uint64_t a, b;
        double ts = strata_query(db, q[i][0], &a), tf = fts5_query(sdb, q[i][1], &b);
        if (a != b) {
            fprintf(stderr, "search_bench: '%s': Strata counts %llu, FTS5 %llu\n", q[i][0],
                    (unsigned long long)a, (unsigned long long)b);
            exit(1);
        }
        logsum += log(tf / ts);
        printf("%-14s %-24s %10llu %12.1f %12.1f %8.2fx\n", qs[i].what, q[i][0], (unsigned long long)a,
               ts * 1e6, tf * 1e6, tf / ts);
    }
    double geo = exp(logsum / 7);
    double idx_s = (double)(s_fts - s_plain) / per, idx_q = (double)(q_fts - q_plain) / per;
    printf("%-30s %12s %12s %9s\n", "index", "strata", "fts5", "ratio");
    printf("%-30s %12.1f %12.1f %8.2fx\n", "bytes per message", idx_s, idx_q, idx_s / idx_q);
    printf("%-30s %12.0f %12.0f %8.2fx\n", "messages/s, load with index", per / load_fts,
           per / (sq_load + sq_build), (sq_load + sq_build) / load_fts);
    printf("(Strata loads without the index at %.0f messages/s; SQLite builds FTS5 in %.2f s after a "
           "%.2f s load)\n", per / load_plain, sq_build, sq_load);
    printf("bench search queries_vs_fts5=%.3f index_bytes_vs_fts5=%.3f strata_index_bytes=%.1f "
           "fts5_index_bytes=%.1f load_vs_fts5=%.3f\n", geo, idx_s / idx_q, idx_s, idx_q,
           (sq_load + sq_build) / load_fts);
    strata_error e;
    strata_db_close(db, &e);
    sqlite3_close(sdb);
    if (getenv("SEARCH_KEEP")) return 0;
    snprintf(cmd, sizeof cmd, clean, plain, plain, plain, indexed, indexed, indexed, sqpath, sqpath, sqpath);
    if (system(cmd)) die("rm", dir);
    return 0;
}
