/*
 * test_changes.c — strata_changes_get against a brute-force diff of two full snapshots, over
 * rounds of random inserts, deletes and changes (small and big values, nulls, a property added
 * half-way); a write transaction's own changes; and the cost: the pages read for a
 * one-object commit stay flat from 2,000 to 200,000 objects.
 */
#include "testlib.h"

#include <stdint.h>

enum { NPROPS = 5 };
static const char *const prop_names[NPROPS] = {"n", "s", "d", "flag", "blob"};
static const strata_type prop_types[NPROPS] = {STRATA_TYPE_INT, STRATA_TYPE_STRING, STRATA_TYPE_DOUBLE,
                                               STRATA_TYPE_BOOL, STRATA_TYPE_BINARY};

static bool same(const strata_value *a, const strata_value *b) {
    if (a->type != b->type) return false;
    if (a->type == STRATA_TYPE_STRING || a->type == STRATA_TYPE_BINARY)
        return a->u.bytes.len == b->u.bytes.len &&
               (!a->u.bytes.len || memcmp(a->u.bytes.data, b->u.bytes.data, a->u.bytes.len) == 0);
    if (a->type == STRATA_TYPE_NULL) return true;
    if (a->type == STRATA_TYPE_BOOL) return a->u.b == b->u.b;
    return memcmp(&a->u, &b->u, sizeof a->u.i) == 0;
}

static uint8_t blob[6000];

static strata_value random_value(int prop) {
    strata_value v = {.type = prop_types[prop]};
    uint64_t r = rnd();
    switch (prop) {
    case 0: v.u.i = (int64_t)(r % 50); break;
    case 1:
        if (r % 5 == 0) return (strata_value){.type = STRATA_TYPE_NULL};
        v.u.bytes.data = (const char *[]){"", "小白", "Zoë", "a", "long text of a message"}[r % 5];
        v.u.bytes.len = strlen(v.u.bytes.data);
        break;
    case 2: v.u.d = (double)(r % 7) / 2.0; break;
    case 3: v.u.b = r % 2; break;
    default:
        memset(blob, (int)(r % 251), sizeof blob);
        v.u.bytes.data = blob;
        v.u.bytes.len = r % 3 == 0 ? 1500 + r % 4000 : r % 40; /* some big values: runs */
        break;
    }
    return v;
}

static int make_table(strata_db_t *db, strata_col_t *cols) {
    strata_txn_t *w;
    strata_table_t *t;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E);
    if (rc == STRATA_OK) rc = strata_table_create(w, "Item", &t, E);
    for (int p = 0; p < NPROPS && rc == STRATA_OK; p++)
        rc = strata_table_add_property(t, prop_names[p], prop_types[p],
                                       p == 1 ? STRATA_PROP_NULLABLE : 0, NULL, &cols[p], E);
    if (rc == STRATA_OK) rc = strata_txn_commit(w, E);
    strata_txn_free(w);
    return rc;
}

/* The brute-force diff: every object of both versions, every property of cols (ncols). */
typedef struct expect {
    strata_key_t del[8000], ins[8000], mod[8000];
    uint32_t modbits[8000];
    size_t ndel, nins, nmod;
} expect;

static int brute(strata_txn_t *a, strata_txn_t *b, int ncols, expect *x) {
    strata_table_t *ta, *tb;
    int rc;
    if ((rc = strata_table_open(a, "Item", &ta, E)) || (rc = strata_table_open(b, "Item", &tb, E))) return rc;
    x->ndel = x->nins = x->nmod = 0;
    strata_key_t ka = -1, kb = -1;
    int ra = strata_obj_next(ta, ka, &ka, E), rb = strata_obj_next(tb, kb, &kb, E);
    while (ra == STRATA_OK || rb == STRATA_OK) {
        if (rb != STRATA_OK || (ra == STRATA_OK && ka < kb)) {
            x->del[x->ndel++] = ka;
            ra = strata_obj_next(ta, ka, &ka, E);
        } else if (ra != STRATA_OK || kb < ka) {
            x->ins[x->nins++] = kb;
            rb = strata_obj_next(tb, kb, &kb, E);
        } else {
            uint32_t bits = 0;
            for (int p = 0; p < ncols; p++) {
                strata_value va, vb;
                strata_col_t ca, cb;
                if (strata_table_find_property(ta, prop_names[p], &ca, E) != STRATA_OK) continue;
                if ((rc = strata_table_find_property(tb, prop_names[p], &cb, E)) ||
                    (rc = strata_obj_get(ta, ka, ca, &va, E)) || (rc = strata_obj_get(tb, kb, cb, &vb, E)))
                    return rc;
                if (!same(&va, &vb)) bits |= 1u << p;
            }
            if (bits) {
                x->modbits[x->nmod] = bits;
                x->mod[x->nmod++] = ka;
            }
            ra = strata_obj_next(ta, ka, &ka, E);
            rb = strata_obj_next(tb, kb, &kb, E);
        }
    }
    return STRATA_OK;
}

static bool matches(const strata_changes_t *c, const expect *x, const strata_col_t *cols, int ncols) {
    if (strata_changes_count(c, STRATA_CHANGE_DELETED) != x->ndel ||
        strata_changes_count(c, STRATA_CHANGE_INSERTED) != x->nins ||
        strata_changes_count(c, STRATA_CHANGE_MODIFIED) != x->nmod) {
        fprintf(stderr, "  counts: got %zu/%zu/%zu deleted/inserted/modified, expected %zu/%zu/%zu\n",
                strata_changes_count(c, STRATA_CHANGE_DELETED), strata_changes_count(c, STRATA_CHANGE_INSERTED),
                strata_changes_count(c, STRATA_CHANGE_MODIFIED), x->ndel, x->nins, x->nmod);
        return false;
    }
    for (size_t i = 0; i < x->ndel; i++)
        if (strata_changes_key(c, STRATA_CHANGE_DELETED, i) != x->del[i]) return false;
    for (size_t i = 0; i < x->nins; i++)
        if (strata_changes_key(c, STRATA_CHANGE_INSERTED, i) != x->ins[i]) return false;
    for (size_t i = 0; i < x->nmod; i++) {
        if (strata_changes_key(c, STRATA_CHANGE_MODIFIED, i) != x->mod[i]) return false;
        for (int p = 0; p < ncols; p++)
            if (strata_changes_property_changed(c, i, cols[p]) != ((x->modbits[i] >> p) & 1)) {
                fprintf(stderr, "  object %lld: property %s changed? got %d\n", (long long)x->mod[i],
                        prop_names[p], strata_changes_property_changed(c, i, cols[p]));
                return false;
            }
    }
    return true;
}

static expect ex;

/* Random rounds: snapshot, random changes committed, snapshot; the change set equals the
 * brute-force diff, and reversed, inserted and deleted swap. A property is added to the table
 * half-way (the versions then differ in their schema). */
static void changes_match_a_full_diff(void) {
    strata_db_t *db = tl_open_db(tl_path("changes.db"), STRATA_DURABILITY_NO_SYNC);
    CHECK(db);
    strata_col_t cols[NPROPS];
    OK(make_table(db, cols));
    tl_seed(2026);
    uint64_t total_pages = 0, total_changes = 0;
    for (int round = 0; round < 40; round++) {
        strata_txn_t *a, *w, *b;
        strata_table_t *t;
        OK(strata_txn_begin(db, STRATA_TXN_READ, &a, E));
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Item", &t, E));
        strata_col_t extra;
        if (round == 20) OK(strata_table_add_property(t, "extra", STRATA_TYPE_INT, 0, NULL, &extra, E));
        int ops = round == 0 ? 3000 : (int)(1 + rnd() % (round % 5 == 0 ? 400 : 20));
        for (int i = 0; i < ops; i++) {
            uint64_t r = rnd() % 10;
            strata_key_t k;
            if (round == 0 || r < 3) {
                OK(strata_obj_create(t, &k, E));
                for (int p = 0; p < NPROPS; p++) {
                    strata_value v = random_value(p);
                    OK(strata_obj_set(t, k, cols[p], &v, E));
                }
                continue;
            }
            uint64_t size;
            OK(strata_table_size(t, &size, E));
            strata_key_t pick = (strata_key_t)(rnd() % (3000 + 200 * (uint64_t)round));
            if (strata_obj_next(t, pick - 1, &k, E) != STRATA_OK) continue;
            if (r < 5) {
                OK(strata_obj_delete(t, k, E));
            } else {
                int p = (int)(rnd() % NPROPS);
                strata_value v = random_value(p);
                OK(strata_obj_set(t, k, cols[p], &v, E));
            }
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        OK(strata_txn_begin(db, STRATA_TXN_READ, &b, E));
        strata_changes_t *c;
        OK(strata_changes_get(a, b, "Item", &c, E));
        OK(brute(a, b, NPROPS, &ex));
        CHECK(matches(c, &ex, cols, NPROPS));
        total_pages += strata_changes_pages_read(c);
        total_changes += ex.ndel + ex.nins + ex.nmod;
        strata_changes_free(c);
        /* the other way round: inserted and deleted swap */
        OK(strata_changes_get(b, a, "Item", &c, E));
        CHECK(strata_changes_count(c, STRATA_CHANGE_INSERTED) == ex.ndel &&
              strata_changes_count(c, STRATA_CHANGE_DELETED) == ex.nins);
        strata_changes_free(c);
        strata_txn_free(a);
        strata_txn_free(b);
    }
    fprintf(stderr, "  40 rounds: %llu changes found as a full diff finds them, %llu pages read\n",
            (unsigned long long)total_changes, (unsigned long long)total_pages);
    OK(strata_db_close(db, E));
}

/* The newer side may be a write transaction: its changes not yet committed count. */
static void a_write_transactions_own_changes(void) {
    strata_db_t *db = tl_open_db(tl_path("own.db"), STRATA_DURABILITY_NO_SYNC);
    CHECK(db);
    strata_col_t cols[NPROPS];
    OK(make_table(db, cols));
    strata_txn_t *w, *a;
    strata_table_t *t;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Item", &t, E));
    for (int i = 0; i < 500; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, cols[0], (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = i}}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &a, E));
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Item", &t, E));
    OK(strata_obj_set(t, 7, cols[0], (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = -7}}, E));
    OK(strata_obj_delete(t, 300, E));
    strata_key_t k;
    OK(strata_obj_create(t, &k, E));
    strata_changes_t *c;
    OK(strata_changes_get(a, w, "Item", &c, E));
    CHECK(strata_changes_count(c, STRATA_CHANGE_MODIFIED) == 1 && strata_changes_key(c, STRATA_CHANGE_MODIFIED, 0) == 7);
    CHECK(strata_changes_property_changed(c, 0, cols[0]) && !strata_changes_property_changed(c, 0, cols[1]));
    CHECK(strata_changes_count(c, STRATA_CHANGE_DELETED) == 1 && strata_changes_key(c, STRATA_CHANGE_DELETED, 0) == 300);
    CHECK(strata_changes_count(c, STRATA_CHANGE_INSERTED) == 1 && strata_changes_key(c, STRATA_CHANGE_INSERTED, 0) == k);
    CHECK(strata_changes_key(c, STRATA_CHANGE_INSERTED, 5) == -1 && strata_changes_count(c, 9) == 0);
    strata_changes_free(c);
    EXPECT_CODE(strata_changes_get(a, w, "Nothing", &c, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_changes_get(NULL, w, "Item", &c, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_txn_abort(w);
    strata_txn_free(w);
    strata_txn_free(a);
    OK(strata_db_close(db, E));
}

/* One object changed in a table of N: the pages read do not grow with N. */
static uint64_t pages_for_one_change(size_t n) {
    char name[64];
    snprintf(name, sizeof name, "flat-%zu.db", n);
    strata_db_t *db = tl_open_db(tl_path(name), STRATA_DURABILITY_NO_SYNC);
    strata_col_t cols[NPROPS];
    if (!db || make_table(db, cols)) return UINT64_MAX;
    strata_txn_t *w, *a, *b;
    strata_table_t *t;
    for (size_t done = 0; done < n;) {
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, E) || strata_table_open(w, "Item", &t, E)) return UINT64_MAX;
        for (size_t end = done + 20000 < n ? done + 20000 : n; done < end; done++) {
            strata_key_t k;
            strata_obj_create(t, &k, E);
            strata_obj_set(t, k, cols[0], (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = (int64_t)done}}, E);
            strata_obj_set(t, k, cols[1], (strata_value[]){{.type = STRATA_TYPE_STRING, .u.bytes = {"小白", 6}}}, E);
        }
        if (strata_txn_commit(w, E)) return UINT64_MAX;
        strata_txn_free(w);
    }
    strata_txn_begin(db, STRATA_TXN_READ, &a, E);
    strata_txn_begin(db, STRATA_TXN_WRITE, &w, E);
    strata_table_open(w, "Item", &t, E);
    strata_obj_set(t, (strata_key_t)(n / 2), cols[0], (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = -1}}, E);
    strata_txn_commit(w, E);
    strata_txn_free(w);
    strata_txn_begin(db, STRATA_TXN_READ, &b, E);
    strata_changes_t *c;
    uint64_t pages = UINT64_MAX;
    if (strata_changes_get(a, b, "Item", &c, E) == STRATA_OK) {
        if (strata_changes_count(c, STRATA_CHANGE_MODIFIED) == 1 &&
            strata_changes_count(c, STRATA_CHANGE_INSERTED) + strata_changes_count(c, STRATA_CHANGE_DELETED) == 0)
            pages = strata_changes_pages_read(c);
        strata_changes_free(c);
    }
    strata_txn_free(a);
    strata_txn_free(b);
    strata_db_close(db, NULL);
    return pages;
}

static void the_cost_follows_the_change(void) {
    uint64_t small = pages_for_one_change(2000), big = pages_for_one_change(200000);
    fprintf(stderr, "  one object changed: %llu pages read at 2,000 objects, %llu at 200,000\n",
            (unsigned long long)small, (unsigned long long)big);
    CHECK(small != UINT64_MAX && big != UINT64_MAX);
    CHECK(big <= small + 8 && big < 40);
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(changes_match_a_full_diff),
        TL_TEST(a_write_transactions_own_changes),
        TL_TEST(the_cost_follows_the_change),
    };
    return tl_run("changes", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
