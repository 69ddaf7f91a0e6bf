/*
 * test_clusters.c — the shape of a table's clusters: objects appended (in one transaction or one
 * per commit) fill their clusters as far as their strings let a page hold them, instead of 256
 * objects being halved when their strings outgrow a page; wide objects fill their one page;
 * strings that grow past the guess still split cleanly; every object reads back and the file
 * verifies. White-box: built with the core's sources, it reads the cluster records.
 */
#include "testlib.h"

#include "objects/private.h"

typedef struct shape {
    uint32_t n[4096]; /* objects in each cluster, in key order */
    size_t count;
} shape;

static int record_shape(void *arg, const uint8_t *k, size_t kl, const uint8_t *rec, size_t rlen) {
    shape *s = arg;
    st_crec r;
    strata_error err;
    (void)kl;
    int rc = st_crec_parse("T", st_rd64(k), rec, rlen, &r, &err);
    if (rc == STRATA_OK && s->count < 4096) s->n[s->count++] = r.n;
    return rc;
}

/* The cluster sizes of table T in a fresh read transaction. */
static void shape_of(strata_db_t *db, shape *s) {
    strata_txn_t *r;
    strata_table_t *t;
    strata_tree_t *tree;
    memset(s, 0, sizeof *s);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "T", &t, E));
    OK(st_table_tree(t, ST_TABLE_CLUSTERS, false, &tree, E));
    OK(st_bt_each(tree, record_shape, s, E));
    strata_txn_free(r);
}

/* A transaction of db (`mode`: STRATA_TXN_READ or _WRITE) into *txn, table T into *t and its
 * property `prop` into *col. */
static void begin_T(strata_db_t *db, unsigned mode, strata_txn_t **txn, strata_table_t **t,
                    const char *prop, strata_col_t *col) {
    OK(strata_txn_begin(db, mode, txn, E));
    OK(strata_table_open(*txn, "T", t, E));
    OK(strata_table_find_property(*t, prop, col, E));
}

/* "<i>:" then x up to len bytes. */
static size_t text_of(int i, size_t len, char *out) {
    int n = snprintf(out, len + 1, "%d:", i);
    memset(out + n, 'x', len - (size_t)n);
    out[len] = 0;
    return len;
}

/* T {s string}; objects from..to-1 with strings of len bytes (len_at: a longer length from that
 * object on), per_commit objects a transaction. */
static void append(strata_db_t *db, int from, int to, size_t len, int len_at, size_t len2,
                   int per_commit) {
    for (int i = from; i < to;) {
        strata_txn_t *w;
        strata_table_t *t;
        strata_col_t s;
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        if (strata_table_open(w, "T", &t, NULL) != STRATA_OK) {
            OK(strata_table_create(w, "T", &t, E));
            OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, 0, NULL, &s, E));
        }
        OK(strata_table_find_property(t, "s", &s, E));
        for (int j = 0; j < per_commit && i < to; j++, i++) {
            char buf[512];
            strata_key_t k;
            size_t l = text_of(i, i >= len_at ? len2 : len, buf);
            OK(strata_obj_create(t, &k, E));
            CHECK(k == i);
            OK(strata_obj_set(t, k, s, (strata_value[]){{.type = STRATA_TYPE_STRING, .u.bytes = {buf, l}}}, E));
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
    }
}

/* Every object reads back its string; the file verifies. */
static void check_all(strata_db_t *db, int n, size_t len, int len_at, size_t len2) {
    strata_txn_t *r;
    strata_table_t *t;
    strata_col_t s;
    OK(strata_db_verify(db, E));
    begin_T(db, STRATA_TXN_READ, &r, &t, "s", &s);
    for (int i = 0; i < n; i++) {
        char want[512];
        size_t l = text_of(i, i >= len_at ? len2 : len, want);
        strata_value v;
        OK(strata_obj_get(t, i, s, &v, E));
        CHECK(v.type == STRATA_TYPE_STRING && v.u.bytes.len == l && memcmp(v.u.bytes.data, want, l) == 0);
    }
    strata_txn_free(r);
}

/* 40-byte strings: 44 bytes an object in the string leaf, so ~91 objects fit its page. Halving
 * 256 (and then 128) would make clusters of 64; closing a cluster while it had room for 24 more
 * (before session 37) made them 80; appends that carry what overflows into the next cluster
 * fill the page: 90 or more. */
static void appended_clusters_fill_their_pages(void) {
    for (int per_commit = 0; per_commit < 2; per_commit++) {
        strata_db_t *db;
        OK(strata_db_open(tl_path(per_commit ? "fill-commits.db" : "fill-one.db"), NULL, &db, E));
        int n = per_commit ? 600 : 4000;
        append(db, 0, n, 40, n, 40, per_commit ? 1 : n);
        check_all(db, n, 40, n, 40);
        shape s;
        shape_of(db, &s);
        CHECK(s.count >= 2);
        uint32_t smallest = 256, total = 0;
        for (size_t i = 0; i < s.count; i++) {
            total += s.n[i];
            if (i + 1 < s.count && s.n[i] < smallest) smallest = s.n[i];
        }
        if (smallest < 90)
            fprintf(stderr, "  %s: a cluster of %u objects (of %zu clusters)\n",
                    per_commit ? "one per commit" : "one transaction", smallest, s.count);
        CHECK(total == (uint32_t)n);
        CHECK(smallest >= 90);
        OK(strata_db_close(db, E));
    }
}

/* Wide objects (300-byte strings: fewer than 64 fill a page) keep a cluster's leaves on one
 * page: 13 fit it (the header, the keys leaf, 4 + 300 bytes an object). Before session 37 a
 * cluster was closed while it had room for more like its own: 12 a page. */
static void wide_objects_fill_their_page(void) {
    for (int per_commit = 0; per_commit < 2; per_commit++) {
        strata_db_t *db;
        OK(strata_db_open(tl_path(per_commit ? "wide-commits.db" : "wide-one.db"), NULL, &db, E));
        int n = 1000;
        append(db, 0, n, 300, n, 300, per_commit ? 7 : n);
        check_all(db, n, 300, n, 300);
        shape s;
        shape_of(db, &s);
        uint32_t smallest = 256, largest = 0, total = 0;
        for (size_t i = 0; i < s.count; i++) {
            total += s.n[i];
            if (i + 1 < s.count && s.n[i] < smallest) smallest = s.n[i];
            if (s.n[i] > largest) largest = s.n[i];
        }
        if (smallest < 13 || largest > 13)
            fprintf(stderr, "  %s: clusters of %u to %u objects (of %zu clusters)\n",
                    per_commit ? "7 per commit" : "one transaction", smallest, largest, s.count);
        CHECK(total == (uint32_t)n && smallest == 13 && largest == 13);
        OK(strata_db_close(db, E));
    }
}

/* An object whose leaves cannot share one page (200 double properties: 32 bytes of leaf each)
 * still goes in: it spreads its leaves over pages, a cluster to itself. Read back and verified,
 * written in one transaction and one per commit. */
static void objects_too_wide_for_a_page_spread_their_leaves(void) {
    enum { PROPS = 200 };
    strata_db_t *db;
    OK(strata_db_open(tl_path("too-wide.db"), NULL, &db, E));
    strata_col_t cols[PROPS];
    for (int round = 0; round < 2; round++) {
        int from = round ? 60 : 0, to = round ? 80 : 60;
        for (int i = from; i < to;) {
            strata_txn_t *w;
            strata_table_t *t;
            OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
            if (strata_table_open(w, "W", &t, NULL) != STRATA_OK) {
                OK(strata_table_create(w, "W", &t, E));
                for (int p = 0; p < PROPS; p++) {
                    char name[16];
                    snprintf(name, sizeof name, "d%d", p);
                    OK(strata_table_add_property(t, name, STRATA_TYPE_DOUBLE, 0, NULL, &cols[p], E));
                }
            }
            for (int j = 0; j < (round ? 1 : 60) && i < to; j++, i++) {
                strata_key_t k;
                OK(strata_obj_create(t, &k, E));
                for (int p = 0; p < PROPS; p++)
                    OK(strata_obj_set(t, k, cols[p],
                                      (strata_value[]){{.type = STRATA_TYPE_DOUBLE, .u.d = i * 1000.0 + p}}, E));
            }
            OK(strata_txn_commit(w, E));
            strata_txn_free(w);
        }
    }
    OK(strata_db_verify(db, E));
    strata_txn_t *r;
    strata_table_t *t;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "W", &t, E));
    bool same = true;
    for (int i = 0; i < 80 && same; i++)
        for (int p = 0; p < PROPS && same; p++) {
            strata_value v;
            OK(strata_obj_get(t, i, cols[p], &v, E));
            same = v.type == STRATA_TYPE_DOUBLE && v.u.d == i * 1000.0 + p;
        }
    CHECK(same);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* The guess is the average so far: strings that then grow fivefold overflow the cluster it left
 * open, which is split when written. Nothing is lost and every leaf fits its page (verify). */
static void strings_longer_than_the_guess_still_split_cleanly(void) {
    strata_db_t *db;
    OK(strata_db_open(tl_path("grow.db"), NULL, &db, E));
    append(db, 0, 1000, 12, 150, 60, 1000);
    check_all(db, 1000, 12, 150, 60);
    shape s;
    shape_of(db, &s);
    uint32_t total = 0;
    for (size_t i = 0; i < s.count; i++) total += s.n[i];
    CHECK(total == 1000);
    OK(strata_db_close(db, E));
}

/* ---------------------------------------------------------------- timestamp leaves */

/* Object i's time, by cluster (256 objects each): whole seconds a minute apart (0..255); times
 * within a year with nanoseconds, before 1970 too, every 7th null (256..511); the extremes
 * (512..767); a second apart with microseconds, as Date() makes them (768..1023). */
static strata_value time_of(int i) {
    strata_value v = {.type = STRATA_TYPE_TIMESTAMP};
    if (i < 256) {
        v.u.timestamp.seconds = 1700000000 + 60 * (int64_t)i;
    } else if (i < 512) {
        if (i % 7 == 0) return (strata_value){.type = STRATA_TYPE_NULL};
        int64_t s = (int64_t)(rnd() % 31536000) - (i % 3 == 0 ? 40000000 : 0);
        int32_t ns = (int32_t)(rnd() % 1000000000);
        v.u.timestamp.seconds = s;
        v.u.timestamp.nanoseconds = s < 0 ? -ns : ns; /* Realm's rule: the signs agree */
    } else if (i < 768) {
        v.u.timestamp.seconds = i % 2 ? INT64_MAX - i : INT64_MIN + i;
        v.u.timestamp.nanoseconds = i % 2 ? 999999999 : -999999999;
    } else {
        v.u.timestamp.seconds = 1800000000 + i;
        v.u.timestamp.nanoseconds = (int32_t)(rnd() % 1000000) * 1000;
    }
    return v;
}

static bool same_time(const strata_value *a, const strata_value *b) {
    return a->type == b->type && (a->type == STRATA_TYPE_NULL ||
                                  (a->u.timestamp.seconds == b->u.timestamp.seconds &&
                                   a->u.timestamp.nanoseconds == b->u.timestamp.nanoseconds));
}

static int time_cmp(const strata_value *a, const strata_value *b) {
    if (a->u.timestamp.seconds != b->u.timestamp.seconds)
        return a->u.timestamp.seconds < b->u.timestamp.seconds ? -1 : 1;
    return (a->u.timestamp.nanoseconds > b->u.timestamp.nanoseconds) -
           (a->u.timestamp.nanoseconds < b->u.timestamp.nanoseconds);
}

typedef struct leaf_kinds {
    strata_txn_t *txn;
    strata_col_t col;
    int times, fixed; /* leaves of the property by encoding */
} leaf_kinds;

static int count_leaf_kind(void *arg, const uint8_t *k, size_t kl, const uint8_t *rec, size_t rlen) {
    leaf_kinds *lk = arg;
    st_crec r;
    strata_error err;
    const uint8_t *pg;
    (void)kl;
    int rc = st_crec_parse("T", st_rd64(k), rec, rlen, &r, &err);
    if (rc) return rc;
    st_leafref leaf = st_crec_col(&r, lk->col);
    if (!leaf.pgno || (rc = st_page_get(lk->txn, leaf.pgno, &pg, &err))) return rc;
    if (pg[leaf.off] == ST_ENC_TIMES) lk->times++;
    if (pg[leaf.off] == ST_ENC_FIXED) lk->fixed++;
    return STRATA_OK;
}

/* Every object's time reads back in r, each count query agrees with the values, and the
 * property's leaves are of both encodings (*kinds). */
static void check_times(strata_txn_t *r, const strata_value *want, int n, leaf_kinds *kinds) {
    strata_table_t *t;
    strata_col_t at;
    strata_tree_t *tree;
    OK(strata_table_open(r, "T", &t, E));
    OK(strata_table_find_property(t, "at", &at, E));
    for (int i = 0; i < n; i++) {
        strata_value v;
        OK(strata_obj_get(t, i, at, &v, E));
        if (!same_time(&v, &want[i])) {
            fprintf(stderr, "  object %d: %lld.%d, want %lld.%d\n", i, (long long)v.u.timestamp.seconds,
                    v.u.timestamp.nanoseconds, (long long)want[i].u.timestamp.seconds,
                    want[i].u.timestamp.nanoseconds);
            CHECK(false);
            return;
        }
    }
    const char *preds[] = {"at > $0", "at <= $0", "at == $0", "at == nil", "at BETWEEN {$0, $1}"};
    for (int probe = 0; probe < 6; probe++) {
        strata_value args[2] = {want[probe * 97 % n], want[probe * 61 % n]};
        if (args[0].type == STRATA_TYPE_NULL || args[1].type == STRATA_TYPE_NULL) continue;
        for (size_t q = 0; q < sizeof preds / sizeof *preds; q++) {
            strata_query_t *query;
            uint64_t count, expect = 0;
            OK(strata_query_compile(r, "T", preds[q], &query, E));
            OK(strata_query_count(query, r, args, 2, &count, E));
            strata_query_free(query);
            for (int i = 0; i < n; i++) {
                const strata_value *v = &want[i];
                bool null = v->type == STRATA_TYPE_NULL;
                int c0 = null ? 0 : time_cmp(v, &args[0]), c1 = null ? 0 : time_cmp(v, &args[1]);
                expect += q == 0 ? !null && c0 > 0 : q == 1 ? !null && c0 <= 0 : q == 2 ? !null && c0 == 0
                          : q == 3 ? null : !null && c0 >= 0 && c1 <= 0;
            }
            if (count != expect) fprintf(stderr, "  %s: %llu, want %llu\n", preds[q],
                                         (unsigned long long)count, (unsigned long long)expect);
            CHECK(count == expect);
        }
    }
    *kinds = (leaf_kinds){r, at, 0, 0};
    OK(st_table_tree(t, ST_TABLE_CLUSTERS, false, &tree, E));
    OK(st_bt_each(tree, count_leaf_kind, kinds, E));
}

/* Timestamps are stored as two packed arrays (seconds, nanoseconds; format 12) where that is
 * smaller than 12 bytes a value, and as fixed slots where not (the extremes): both read back,
 * query and sort alike, take changes in place (inside the leaf's range) and changes that
 * re-encode the cluster, in the write, after commit and after reopening, and the file
 * verifies. */
static void timestamps_are_stored_as_packed_seconds_and_nanoseconds(void) {
    enum { N = 1024 };
    static strata_value want[N];
    const char *path = tl_path("times.db");
    strata_db_t *db;
    OK(strata_db_open(path, NULL, &db, E));
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t at;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "T", &t, E));
    OK(strata_table_add_property(t, "at", STRATA_TYPE_TIMESTAMP, STRATA_PROP_NULLABLE, NULL, &at, E));
    for (int i = 0; i < N; i++) {
        strata_key_t k;
        want[i] = time_of(i);
        OK(strata_obj_create(t, &k, E));
        CHECK(k == i);
        OK(strata_obj_set(t, k, at, &want[i], E));
    }
    leaf_kinds kinds;
    check_times(w, want, N, &kinds); /* (the clusters are written for the scans) */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    check_times(r, want, N, &kinds);
    strata_txn_free(r);
    CHECK(kinds.times >= 3 && kinds.fixed >= 1); /* whole seconds, with nanoseconds, microseconds; extremes */
    OK(strata_db_verify(db, E));

    /* Changes: inside a leaf's ranges (written in place), outside them (nanoseconds where a
     * leaf has none, seconds past its width: the cluster is re-encoded), to and from null. The
     * first round changes one object of each cluster by each way alone (in place needs the
     * cluster not decoded yet), the second many. */
    for (int round = 0; round < 3; round++) {
        begin_T(db, STRATA_TXN_WRITE, &w, &t, "at", &at);
        for (int i = round < 2 ? 3 + 40 * round : 1; i < N; i += round < 2 ? 256 : 5) {
            strata_value v = want[i];
            int how = round < 2 ? round : i % 4;
            if (how == 0 && v.type == STRATA_TYPE_TIMESTAMP) { /* a neighbour's value: in range */
                v = want[i + 1].type == STRATA_TYPE_TIMESTAMP ? want[i + 1] : v;
            } else if (how == 1) { /* far away, with nanoseconds: outside every narrow leaf */
                v = (strata_value){.type = STRATA_TYPE_TIMESTAMP, .u.timestamp = {-(int64_t)i * 1000003, -(int32_t)i - 1}};
            } else if (how == 2) {
                v = (strata_value){.type = STRATA_TYPE_NULL};
            } else if (v.type == STRATA_TYPE_TIMESTAMP) {
                v.u.timestamp.nanoseconds = v.u.timestamp.seconds < 0 ? -7 : 7;
            }
            OK(strata_obj_set(t, i, at, &v, E));
            want[i] = v;
        }
        check_times(w, want, N, &kinds);
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
        check_times(r, want, N, &kinds);
        strata_txn_free(r);
    }
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    OK(strata_db_open(path, NULL, &db, E));
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    check_times(r, want, N, &kinds);
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Strings written before format 12 (u32 element offsets, here through the core's test switch)
 * read, change and verify beside leaves written since (u16 offsets): the same file, the same
 * table, objects of both kinds in one cluster after the changes. */
static void string_leaves_of_both_offset_widths_read_and_change(void) {
    strata_db_t *db;
    OK(strata_db_open(tl_path("offsets.db"), NULL, &db, E));
    st_col_u32_offsets = true;
    append(db, 0, 300, 30, 300, 30, 300);
    st_col_u32_offsets = false;
    append(db, 300, 600, 30, 450, 50, 100); /* later ones longer: the other string length */
    check_all(db, 600, 30, 450, 50);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t s;
    begin_T(db, STRATA_TXN_WRITE, &w, &t, "s", &s);
    for (int i = 0; i < 600; i += 7) { /* another text, then its own again: the cluster is
                                         * decoded and written anew, with u16 offsets */
        char buf[512];
        size_t l = text_of(i, i >= 450 ? 50 : 30, buf);
        OK(strata_obj_set(t, i, s, (strata_value[]){{.type = STRATA_TYPE_STRING, .u.bytes = {"changed", 7}}}, E));
        OK(strata_obj_set(t, i, s, (strata_value[]){{.type = STRATA_TYPE_STRING, .u.bytes = {buf, l}}}, E));
    }
    strata_key_t k;
    OK(strata_obj_create(t, &k, E)); /* an object without a string, into the last cluster */
    OK(strata_obj_delete(t, k, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    check_all(db, 600, 30, 450, 50);
    OK(strata_db_close(db, E));
    OK(strata_db_open(tl_path("offsets.db"), NULL, &db, E));
    check_all(db, 600, 30, 450, 50);
    OK(strata_db_close(db, E));
}

static const tl_test tests[] = {
    TL_TEST(appended_clusters_fill_their_pages),
    TL_TEST(strings_longer_than_the_guess_still_split_cleanly),
    TL_TEST(wide_objects_fill_their_page),
    TL_TEST(objects_too_wide_for_a_page_spread_their_leaves),
    TL_TEST(timestamps_are_stored_as_packed_seconds_and_nanoseconds),
    TL_TEST(string_leaves_of_both_offset_widths_read_and_change),
};

int main(int argc, char **argv) {
    tl_seed(0x9e3779b97f4a7c15ull);
    return tl_run("clusters", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
