/*
 * test_engine.c — the storage engine through strata.h: trees against an in-memory model,
 * cursors, transactions and snapshots, free space, readers, durability modes, bad files and
 * misuse. Every test that writes ends with strata_db_verify.
 */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* ------------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Deterministic value bytes from a seed. */
static void fill_value(uint8_t *buf, size_t len, uint64_t seed) {
    uint64_t s = seed * 0x2545F4914F6CDD1Dull + 1;
    for (size_t i = 0; i < len; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        buf[i] = (uint8_t)s;
    }
}

static size_t random_len(void) {
    uint64_t r = rnd() % 100;
    if (r < 60) return rnd() % 64;
    if (r < 90) return rnd() % 900;
    if (r < 98) return 1000 + rnd() % 9000; /* overflow runs of 1..3 pages */
    return 20000 + rnd() % 60000;
}

static strata_db_t *open_db(const char *path, strata_durability d) {
    strata_options o;
    strata_options_init(&o);
    o.durability = d;
    o.map_size = 1ull << 32;
    strata_db_t *db = NULL;
    if (strata_db_open(path, &o, &db, E) != STRATA_OK)
        fprintf(stderr, "  open %s: %s\n", path, tl_err.message);
    return db;
}

static bool verify_ok(strata_db_t *db) {
    strata_error e = {0};
    if (strata_db_verify(db, &e) == STRATA_OK) return true;
    fprintf(stderr, "  verify: %s\n", e.message);
    return false;
}

/* ------------------------------------------------------------------ model test */

#define MODEL_KEYS 4000

typedef struct model_entry {
    bool present;
    uint64_t seed;
    size_t len;
} model_entry;

/* Compare the whole tree with the model: point gets, a forward scan and a backward scan. */
static bool model_matches(strata_tree_t *t, const model_entry *m, uint8_t *buf) {
    uint64_t count = 0, expect = 0;
    for (int k = 0; k < MODEL_KEYS; k++) expect += m[k].present;
    if (strata_tree_count(t, &count, E) || count != expect) {
        fprintf(stderr, "  count %llu, model %llu\n", (unsigned long long)count,
                (unsigned long long)expect);
        return false;
    }
    strata_cursor_t *c;
    if (strata_cursor_open(t, &c, E)) return false;
    int k = -1;
    int rc = strata_cursor_first(c, E);
    while (rc == STRATA_OK) {
        const void *key, *val;
        size_t klen, vlen;
        if (strata_cursor_get(c, &key, &klen, &val, &vlen, E)) return false;
        uint64_t ik;
        memcpy(&ik, key, 8);
        do k++; while (k < MODEL_KEYS && !m[k].present);
        if ((uint64_t)k != ik || vlen != m[k].len) {
            fprintf(stderr, "  scan: key %llu (len %zu), model key %d (len %zu)\n",
                    (unsigned long long)ik, vlen, k, k < MODEL_KEYS ? m[k].len : 0);
            return false;
        }
        fill_value(buf, vlen, m[k].seed);
        if (memcmp(buf, val, vlen) != 0) {
            fprintf(stderr, "  scan: key %d has wrong bytes\n", k);
            return false;
        }
        rc = strata_cursor_next(c, E);
    }
    if (rc != STRATA_ERR_NOT_FOUND) return false;
    do k++; while (k < MODEL_KEYS && !m[k].present);
    if (k < MODEL_KEYS) {
        fprintf(stderr, "  scan ended before model key %d\n", k);
        return false;
    }
    /* Backward. */
    k = MODEL_KEYS;
    rc = strata_cursor_last(c, E);
    while (rc == STRATA_OK) {
        const void *key;
        size_t klen;
        if (strata_cursor_get(c, &key, &klen, NULL, NULL, E)) return false;
        uint64_t ik;
        memcpy(&ik, key, 8);
        do k--; while (k >= 0 && !m[k].present);
        if ((uint64_t)k != ik) return false;
        rc = strata_cursor_prev(c, E);
    }
    do k--; while (k >= 0 && !m[k].present);
    strata_cursor_close(c);
    return rc == STRATA_ERR_NOT_FOUND && k < 0;
}

static void test_btree_matches_model_through_random_ops_commits_aborts_and_reopens(void) {
    const char *path = tl_path("model.db");
    strata_db_t *db = open_db(path, STRATA_DURABILITY_NO_SYNC);
    CHECK(db);
    static model_entry model[MODEL_KEYS], saved[MODEL_KEYS];
    memset(model, 0, sizeof model);
    uint8_t *buf = malloc(1 << 17);
    strata_txn_t *txn = NULL;
    strata_tree_t *t = NULL;
    for (int round = 0; round < 60; round++) {
        memcpy(saved, model, sizeof model);
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
        OK(strata_tree_open(txn, "model", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E));
        int ops = 50 + (int)(rnd() % 400);
        for (int i = 0; i < ops; i++) {
            uint64_t key = rnd() % MODEL_KEYS;
            if (round > 30 && round % 7 == 0) key = i % MODEL_KEYS; /* dense runs */
            uint64_t r = rnd() % 100;
            if (r < 65) {
                size_t len = random_len();
                uint64_t seed = rnd();
                fill_value(buf, len, seed);
                OK(strata_tree_put_int(t, key, buf, len, E));
                model[key] = (model_entry){true, seed, len};
            } else if (r < 95) {
                int rc = strata_tree_delete_int(t, key, E);
                CHECK(rc == (model[key].present ? STRATA_OK : STRATA_ERR_NOT_FOUND));
                model[key].present = false;
            } else {
                const void *v;
                size_t vlen;
                int rc = strata_tree_get_int(t, key, &v, &vlen, E);
                CHECK(rc == (model[key].present ? STRATA_OK : STRATA_ERR_NOT_FOUND));
                if (rc == STRATA_OK) {
                    CHECK(vlen == model[key].len);
                    fill_value(buf, vlen, model[key].seed);
                    CHECK(memcmp(buf, v, vlen) == 0);
                }
            }
        }
        CHECK(model_matches(t, model, buf));
        if (round % 5 == 4) {
            strata_txn_free(txn); /* abort: the model goes back */
            memcpy(model, saved, sizeof model);
        } else {
            OK(strata_txn_commit(txn, E));
            strata_txn_free(txn);
        }
        txn = NULL;
        CHECK(verify_ok(db));
        if (round % 10 == 9) {
            OK(strata_db_close(db, E));
            db = open_db(path, STRATA_DURABILITY_NO_SYNC);
            CHECK(db);
        }
        strata_txn_t *rd;
        OK(strata_txn_begin(db, STRATA_TXN_READ, &rd, E));
        strata_tree_t *rt;
        OK(strata_tree_open(rd, "model", STRATA_KEY_INT, 0, &rt, E));
        CHECK(model_matches(rt, model, buf));
        strata_txn_free(rd);
    }
    /* Delete everything: the tree empties and its pages all come back as free space. */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
    OK(strata_tree_open(txn, "model", STRATA_KEY_INT, 0, &t, E));
    for (int k = 0; k < MODEL_KEYS; k++)
        if (model[k].present) OK(strata_tree_delete_int(t, (uint64_t)k, E));
    uint64_t n;
    OK(strata_tree_count(t, &n, E));
    CHECK(n == 0);
    OK(strata_txn_commit(txn, E));
    strata_txn_free(txn);
    CHECK(verify_ok(db));
    strata_db_info info;
    OK(strata_db_info_get(db, &info, E));
    /* In use: 2 meta pages, the catalog leaf, and the free-list pages (253 entries each). */
    uint64_t used = info.page_count - info.free_pages;
    CHECK(used <= 2 + 1 + (info.free_pages + 252) / 253);
    free(buf);
    OK(strata_db_close(db, E));
}

/* Byte keys: ordering like memcmp, then by length; prefixes, empty key, long keys. */
static void test_byte_keys_sort_like_memcmp_and_seek_finds_the_next_key(void) {
    strata_db_t *db = open_db(tl_path("bytes.db"), STRATA_DURABILITY_NO_SYNC);
    CHECK(db);
    strata_txn_t *txn;
    strata_tree_t *t;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
    OK(strata_tree_open(txn, "names", STRATA_KEY_BYTES, STRATA_TREE_CREATE, &t, E));
    const char *keys[] = {"", "a", "ab", "abc", "b", "\xe5\xb0\x8f\xe7\x99\xbd", "zz"};
    for (int i = 6; i >= 0; i--) OK(strata_tree_put(t, keys[i], strlen(keys[i]), &i, sizeof i, E));
    char longkey[STRATA_MAX_KEY + 1];
    memset(longkey, 'q', sizeof longkey);
    EXPECT_CODE(strata_tree_put(t, longkey, sizeof longkey, "x", 1, E), STRATA_ERR_TOO_LARGE);
    OK(strata_tree_put(t, longkey, STRATA_MAX_KEY, "x", 1, E));
    /* Many long keys force branch splits with big separators. */
    for (int i = 0; i < 2000; i++) {
        char k[STRATA_MAX_KEY];
        memset(k, 'm', sizeof k);
        snprintf(k + 400, 20, "%06d", i);
        OK(strata_tree_put(t, k, sizeof k, &i, sizeof i, E));
    }
    strata_cursor_t *c;
    OK(strata_cursor_open(t, &c, E));
    OK(strata_cursor_seek(c, "aa", 2, E));
    const void *k;
    size_t kl;
    OK(strata_cursor_get(c, &k, &kl, NULL, NULL, E));
    CHECK(kl == 2 && memcmp(k, "ab", 2) == 0);
    OK(strata_cursor_first(c, E));
    OK(strata_cursor_get(c, &k, &kl, NULL, NULL, E));
    CHECK(kl == 0);
    OK(strata_cursor_seek(c, "\xff", 1, E) == STRATA_ERR_NOT_FOUND ? STRATA_OK : 1);
    OK(strata_cursor_last(c, E));
    OK(strata_cursor_get(c, &k, &kl, NULL, NULL, E));
    CHECK(kl == 6 && memcmp(k, keys[5], 6) == 0);
    /* Walk all, checking strict order. */
    uint8_t prev[STRATA_MAX_KEY];
    size_t prevlen = 0;
    int n = 0;
    for (int rc = strata_cursor_first(c, E); rc == STRATA_OK; rc = strata_cursor_next(c, E)) {
        OK(strata_cursor_get(c, &k, &kl, NULL, NULL, E));
        if (n > 0) {
            size_t m = prevlen < kl ? prevlen : kl;
            int cmp = memcmp(prev, k, m);
            CHECK(cmp < 0 || (cmp == 0 && prevlen < kl));
        }
        memcpy(prev, k, kl);
        prevlen = kl;
        n++;
    }
    CHECK(n == 7 + 1 + 2000);
    OK(strata_txn_commit(txn, E));
    strata_txn_free(txn);
    CHECK(verify_ok(db));
    OK(strata_db_close(db, E));
}

/* A cursor survives deletes and inserts made through its own transaction. */
static void test_cursor_walks_on_while_its_tree_changes(void) {
    strata_db_t *db = open_db(tl_path("cursor.db"), STRATA_DURABILITY_NO_SYNC);
    CHECK(db);
    strata_txn_t *txn;
    strata_tree_t *t;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
    OK(strata_tree_open(txn, "t", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E));
    for (uint64_t i = 0; i < 3000; i++) OK(strata_tree_put_int(t, i * 2, &i, sizeof i, E));
    strata_cursor_t *c;
    OK(strata_cursor_open(t, &c, E));
    int seen = 0;
    for (int rc = strata_cursor_first(c, E); rc == STRATA_OK; rc = strata_cursor_next(c, E)) {
        const void *k;
        size_t kl;
        OK(strata_cursor_get(c, &k, &kl, NULL, NULL, E));
        uint64_t key;
        memcpy(&key, k, 8);
        CHECK(key == (uint64_t)seen * 2);
        OK(strata_tree_delete_int(t, key, E));  /* delete the current entry */
        if (key % 4 == 0) OK(strata_tree_put_int(t, key + 1, "odd", 3, E)); /* insert behind */
        seen++;
        if (key % 4 == 0) { /* the odd key we just inserted comes next */
            OK(strata_cursor_next(c, E));
            OK(strata_cursor_get(c, &k, &kl, NULL, NULL, E));
            memcpy(&key, k, 8);
            CHECK(key == (uint64_t)(seen - 1) * 2 + 1);
        }
    }
    CHECK(seen == 3000);
    uint64_t n;
    OK(strata_tree_count(t, &n, E));
    CHECK(n == 1500);
    OK(strata_txn_commit(txn, E));
    strata_txn_free(txn);
    CHECK(verify_ok(db));
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ registration */

static const tl_test tests[] = {
    TL_TEST(test_btree_matches_model_through_random_ops_commits_aborts_and_reopens),
    TL_TEST(test_byte_keys_sort_like_memcmp_and_seek_finds_the_next_key),
    TL_TEST(test_cursor_walks_on_while_its_tree_changes),
};

int main(int argc, char **argv) {
    return tl_run("engine", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
