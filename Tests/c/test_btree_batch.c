/*
 * test_btree_batch.c — changes made through a finger (btree.h: the kept path of a sorted batch,
 * as index.c applies its pending entries) against a model: sorted runs of puts and deletes over
 * keys that share long prefixes (heads leaves whose prefix shrinks), values big enough to split
 * leaves and to go to overflow runs, deletes that empty and merge leaves, absent keys, and plain
 * changes between the finger's (which must make it forget its path). After each transaction
 * every key is read back and the file verified. White-box: built with the core's sources.
 */
#include "testlib.h"

#include "objects/private.h"


#define KEYS 6000

typedef struct entry {
    bool present;
    uint32_t vlen;
    uint8_t fill;
} entry;
static entry model[KEYS];

/* Key i: ascending in i; byte keys share a 40-byte prefix and end in a tail of varying length. */
static size_t key_of(bool ints, int i, uint8_t *k) {
    if (ints) {
        st_wr64(k, (uint64_t)i * 7919u);
        return 8;
    }
    int n = snprintf((char *)k, 64, "a-prefix-every-key-of-this-tree-shares-%06d", i);
    size_t tail = (size_t)(i * 37) % 120;
    memset(k + n, 'z', tail);
    return (size_t)n + tail;
}

static uint32_t random_vlen(void) {
    uint64_t r = rnd() % 100;
    if (r < 30) return (uint32_t)(rnd() % 40);
    if (r < 97) return (uint32_t)(200 + rnd() % 500);
    return (uint32_t)(1500 + rnd() % 5000); /* an overflow run */
}

static uint8_t val[8192];

/* One run of changes to every key in [lo, lo + span), through one finger: ascending,
 * or (shuffled) in the order a finger is least made for, where a kept path is used right after
 * the leaf split or merged; now and then a plain change to another key in between. false: a
 * mismatch (reported). */
static bool run_batch(strata_tree_t *t, bool ints, int lo, int span, double del_share,
                      bool shuffled) {
    st_bt_finger f;
    memset(&f, 0, sizeof f);
    uint8_t k[200];
    static int order[KEYS];
    int n = 0;
    for (int i = lo; i < lo + span && i < KEYS; i++) order[n++] = i;
    for (int a = n - 1; shuffled && a > 0; a--) { /* a shuffle of neighbours: most stay close */
        int b = a - (int)(rnd() % (a < 8 ? a + 1 : 8)), x = order[a];
        order[a] = order[b];
        order[b] = x;
    }
    for (int o = 0; o < n; o++) {
        int i = order[o];
        size_t kl = key_of(ints, i, k);
        strata_error e = {0};
        if ((double)(rnd() % 1000) < del_share * 1000) {
            int rc = st_tree_del_near(t, &f, k, kl, &e);
            int want = model[i].present ? STRATA_OK : STRATA_ERR_NOT_FOUND;
            if (rc != want) {
                fprintf(stderr, "  delete of key %d: %s, expected %s (%s)\n", i,
                        strata_status_name(rc), strata_status_name(want), e.message);
                return false;
            }
            model[i].present = false;
        } else {
            uint32_t vl = random_vlen();
            uint8_t fill = (uint8_t)rnd();
            memset(val, fill, vl);
            if (st_tree_put_near(t, &f, k, kl, val, vl, &e) != STRATA_OK) {
                fprintf(stderr, "  put of key %d: %s\n", i, e.message);
                return false;
            }
            model[i] = (entry){true, vl, fill};
        }
        if (rnd() % 50 == 0) { /* someone else changes the tree: the finger must not be used */
            int j = (int)(rnd() % KEYS);
            size_t jl = key_of(ints, j, k);
            uint32_t vl = random_vlen();
            memset(val, 0x5a, vl);
            if (st_tree_put(t, k, jl, val, vl, &e) != STRATA_OK) {
                fprintf(stderr, "  plain put of key %d: %s\n", j, e.message);
                return false;
            }
            model[j] = (entry){true, vl, 0x5a};
        }
    }
    return true;
}

/* Every key reads back as the model has it. */
static bool matches(strata_tree_t *t, bool ints) {
    uint8_t k[200];
    uint64_t present = 0, count = 0;
    for (int i = 0; i < KEYS; i++) {
        size_t kl = key_of(ints, i, k);
        const void *v;
        size_t vl;
        strata_error e = {0};
        int rc = strata_tree_get(t, k, kl, &v, &vl, &e);
        bool ok = model[i].present ? rc == STRATA_OK && vl == model[i].vlen &&
                                         (vl == 0 || (((const uint8_t *)v)[0] == model[i].fill &&
                                                      ((const uint8_t *)v)[vl - 1] == model[i].fill))
                                   : rc == STRATA_ERR_NOT_FOUND;
        if (!ok) {
            fprintf(stderr, "  key %d: %s (%zu bytes), model has %s (%u bytes)\n", i,
                    strata_status_name(rc), rc == STRATA_OK ? vl : 0,
                    model[i].present ? "it" : "none", model[i].vlen);
            return false;
        }
        present += model[i].present;
    }
    strata_error e = {0};
    if (strata_tree_count(t, &count, &e) != STRATA_OK || count != present) {
        fprintf(stderr, "  count %llu, model %llu\n", (unsigned long long)count,
                (unsigned long long)present);
        return false;
    }
    return true;
}

static void sorted_batches(bool ints, const char *file) {
    memset(model, 0, sizeof model);
    strata_options o;
    strata_options_init(&o);
    o.durability = STRATA_DURABILITY_NO_SYNC;
    o.map_size = 1ull << 32;
    strata_db_t *db;
    OK(strata_db_open(tl_path(file), &o, &db, E));
    /* fill first (mostly puts), then mixed runs, then mostly deletes (leaves empty and merge) */
    const double del_share[] = {0.0, 0.05, 0.3, 0.5, 0.5, 0.7, 0.9, 0.95, 0.5, 0.2};
    for (int txn_no = 0; txn_no < 10; txn_no++) {
        strata_txn_t *txn;
        strata_tree_t *t;
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
        OK(strata_tree_open(txn, "batched", ints ? STRATA_KEY_INT : STRATA_KEY_BYTES,
                            STRATA_TREE_CREATE, &t, E));
        for (int b = 0; b < 60; b++) {
            int lo = (int)(rnd() % KEYS), span = 50 + (int)(rnd() % (KEYS / 2));
            if (!run_batch(t, ints, lo, span, del_share[txn_no], b % 2 == 1)) {
                fprintf(stderr, "  (transaction %d, batch %d)\n", txn_no, b);
                CHECK(false);
            }
        }
        CHECK(matches(t, ints));
        OK(strata_txn_commit(txn, E));
        strata_txn_free(txn);
        OK(strata_db_verify(db, E));
        OK(strata_txn_begin(db, 0, &txn, E));
        OK(strata_tree_open(txn, "batched", ints ? STRATA_KEY_INT : STRATA_KEY_BYTES, 0, &t, E));
        CHECK(matches(t, ints));
        strata_txn_free(txn);
    }
    OK(strata_db_close(db, E));
}

static void sorted_batches_through_a_finger_match_the_model_byte_keys(void) {
    sorted_batches(false, "bytes.db");
}

static void sorted_batches_through_a_finger_match_the_model_int_keys(void) {
    sorted_batches(true, "ints.db");
}

static const tl_test tests[] = {
    TL_TEST(sorted_batches_through_a_finger_match_the_model_byte_keys),
    TL_TEST(sorted_batches_through_a_finger_match_the_model_int_keys),
};

int main(int argc, char **argv) {
    tl_seed(0x2545F4914F6CDD1Dull);
    return tl_run("btree-batch", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
