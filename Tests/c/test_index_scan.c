/*
 * test_index_scan.c — the index range and prefix walks the query engine uses (st_index_scan),
 * against a brute-force filter over every object: random ints (negative ones too), nulls, and
 * strings long enough to be truncated in the index and sharing 200-byte prefixes; and the leaf
 * directory of a read transaction (leafdir.c) against the descent. White-box: built with the
 * core's sources.
 */
#include "testlib.h"

#include "objects/private.h"


#define N 3000
static char strs[N][400];
static size_t lens[N];
static int64_t ints[N];
static bool int_null[N];

typedef struct hits {
    int64_t keys[N];
    size_t n;
} hits;

static int collect(void *arg, int64_t key) {
    hits *h = arg;
    if (h->n < N) h->keys[h->n] = key;
    h->n++;
    return 0;
}

static int key_cmp(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static void random_string(char *out, size_t *len) {
    static const char *stems[] = {"a", "ab", "b", "张三", "é", ""};
    size_t n = 0;
    if (rnd() % 4 == 0) { /* long: a shared 250-byte stem, then a varying tail */
        memset(out, 'x', 250);
        n = 250;
    }
    int parts = (int)(rnd() % 4);
    for (int i = 0; i < parts; i++) {
        const char *s = stems[rnd() % 6];
        memcpy(out + n, s, strlen(s));
        n += strlen(s);
    }
    *len = n;
}

static bool in_range(const strata_value *v, const st_index_bounds *b) {
    if (v->type == STRATA_TYPE_NULL) return false;
    if (b->prefix)
        return v->u.bytes.len >= b->prefix->u.bytes.len &&
               memcmp(v->u.bytes.data, b->prefix->u.bytes.data, b->prefix->u.bytes.len) == 0;
    if (b->lo) {
        int c = st_value_cmp(v, b->lo);
        if (c < 0 || (c == 0 && !b->lo_incl)) return false;
    }
    if (b->hi) {
        int c = st_value_cmp(v, b->hi);
        if (c > 0 || (c == 0 && !b->hi_incl)) return false;
    }
    return true;
}

static void index_ranges_and_prefixes_match_brute_force(void) {
    strata_db_t *db;
    OK(strata_db_open(tl_path("scan.db"), NULL, &db, E));
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t cs, ci;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "T", &t, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &cs, E));
    OK(strata_table_add_property(t, "i", STRATA_TYPE_INT, STRATA_PROP_INDEXED | STRATA_PROP_NULLABLE, NULL, &ci, E));
    for (int k = 0; k < N; k++) {
        strata_key_t key;
        OK(strata_obj_create(t, &key, E));
        random_string(strs[k], &lens[k]);
        OK(strata_obj_set(t, key, cs, (strata_value[]){{.type = STRATA_TYPE_STRING, .u.bytes = {strs[k], lens[k]}}}, E));
        int_null[k] = rnd() % 10 == 0;
        ints[k] = (int64_t)(rnd() % 200) - 100;
        strata_value iv = int_null[k] ? (strata_value){.type = STRATA_TYPE_NULL}
                                      : (strata_value){.type = STRATA_TYPE_INT, .u.i = ints[k]};
        OK(strata_obj_set(t, key, ci, &iv, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "T", &t, E));
    st_prop *ps = st_prop_find(t, cs), *pi = st_prop_find(t, ci);
    static hits got;
    for (int round = 0; round < 400; round++) {
        bool on_string = round % 2 == 0;
        char lo_s[400], hi_s[400];
        size_t lo_l, hi_l;
        strata_value lo, hi;
        random_string(lo_s, &lo_l);
        random_string(hi_s, &hi_l);
        if (on_string) {
            lo = (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {lo_s, lo_l}};
            hi = (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {hi_s, hi_l}};
        } else {
            lo = (strata_value){.type = STRATA_TYPE_INT, .u.i = (int64_t)(rnd() % 220) - 110};
            hi = (strata_value){.type = STRATA_TYPE_INT, .u.i = (int64_t)(rnd() % 220) - 110};
        }
        st_index_bounds b = {rnd() % 4 ? &lo : NULL, rnd() % 4 ? &hi : NULL, rnd() % 2, rnd() % 2, NULL, false, NULL};
        if (on_string && round % 6 == 0) b = (st_index_bounds){NULL, NULL, false, false, &lo, false, NULL};
        got.n = 0;
        OK(st_index_scan(t, on_string ? ps : pi, &b, collect, &got, E));
        CHECK(got.n <= N);
        qsort(got.keys, got.n, sizeof *got.keys, key_cmp);
        size_t want = 0;
        for (int k = 0; k < N; k++) {
            strata_value v = on_string
                ? (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {strs[k], lens[k]}}
                : int_null[k] ? (strata_value){.type = STRATA_TYPE_NULL}
                              : (strata_value){.type = STRATA_TYPE_INT, .u.i = ints[k]};
            if (!in_range(&v, &b)) continue;
            if (want >= got.n || got.keys[want] != k) {
                fprintf(stderr, "  round %d: object %d %s\n", round, k,
                        want < got.n ? "missing or out of place" : "missing at the end");
                CHECK(false);
            }
            want++;
        }
        if (want != got.n) fprintf(stderr, "  round %d: %zu extra keys\n", round, got.n - want);
        CHECK(want == got.n);
    }
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* Once built, the leaf directory must name, for every entry of a three-level index, the leaf a
 * cursor's descent from the root finds it in (the black-box tests cannot see a directory that
 * names an earlier leaf: the search then walks on from there). */
static void the_leaf_directory_names_the_leaf_the_descent_reaches(void) {
    strata_db_t *db;
    OK(strata_db_open(tl_path("leafdir.db"), NULL, &db, E));
    strata_txn_t *w, *r;
    strata_table_t *t;
    strata_col_t cs;
    enum { ENTRIES = 36000 };
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "T", &t, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &cs, E));
    for (int i = 0; i < ENTRIES; i++) {
        char buf[101];
        snprintf(buf, sizeof buf, "k%08d", (i * 7919) % ENTRIES);
        memset(buf + 9, 'p', 91);
        strata_key_t key;
        OK(strata_obj_create(t, &key, E));
        OK(strata_obj_set(t, key, cs, (strata_value[]){{.type = STRATA_TYPE_STRING, .u.bytes = {buf, 100}}}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "T", &t, E));
    strata_tree_t *ix;
    OK(st_prop_index_tree(t, st_prop_find(t, cs), false, &ix, E));
    for (int pass = 0; pass < 2; pass++) { /* the first pass builds it on the way */
        int named = 0, wrong = 0, entries = 0, rc;
        st_iter c;
        st_iter_init(&c, ix);
        for (rc = st_iter_first(&c, E); rc == STRATA_OK; rc = st_iter_next(&c, E)) {
            const uint8_t *k;
            size_t kl;
            pgno_t leaf;
            OK(st_iter_get(&c, &k, &kl, NULL, NULL, E));
            OK(st_leafdir_leaf(ix, k, kl, &leaf, E));
            entries++;
            named += leaf != 0;
            wrong += leaf != 0 && leaf != c.path[c.depth - 1].pgno;
        }
        EXPECT_CODE(rc, STRATA_ERR_NOT_FOUND);
        if (wrong) fprintf(stderr, "  pass %d: %d of %d leaves named wrong\n", pass, wrong, named);
        CHECK(entries == ENTRIES && wrong == 0 && named > 0);
        CHECK(pass == 0 || named == ENTRIES);
    }
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

static const tl_test tests[] = {
    TL_TEST(index_ranges_and_prefixes_match_brute_force),
    TL_TEST(the_leaf_directory_names_the_leaf_the_descent_reaches),
};

int main(int argc, char **argv) {
    tl_seed(0x9E3779B97F4A7C15ull);
    return tl_run("index-scan", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
