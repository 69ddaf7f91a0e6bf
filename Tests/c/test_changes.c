/*
 * test_changes.c — strata_changes_get against a brute-force diff of two full snapshots, over
 * rounds of random inserts, deletes and changes (small and big values, nulls, a property added
 * half-way); a write transaction's own changes; the cost: the pages read for a one-object
 * commit stay flat from 2,000 to 200,000 objects; and lists: a list's change makes its object
 * modified, and strata_list_changes_get's deletions and insertions turn the old list into the
 * new one with no more edits than were made.
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


/* Random rounds of list edits on a few objects' lists; each round's changes checked. */
enum { NOWNERS = 6, MAXLIST = 300 };

static void list_changes_are_an_edit_script(void) {
    strata_db_t *db = tl_open_db(tl_path("lists.db"), STRATA_DURABILITY_NO_SYNC);
    CHECK(db);
    strata_txn_t *w, *a, *b;
    strata_table_t *t;
    strata_col_t nums, name;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Owner", &t, E));
    OK(strata_table_add_property(t, "name", STRATA_TYPE_INT, 0, NULL, &name, E));
    OK(strata_table_add_property(t, "nums", STRATA_TYPE_INT, STRATA_PROP_LIST, NULL, &nums, E));
    static int64_t model[NOWNERS][MAXLIST], before[NOWNERS][MAXLIST];
    size_t len[NOWNERS] = {0}, lenb[NOWNERS];
    for (int o = 0; o < NOWNERS; o++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        CHECK(k == o);
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    tl_seed(77);
    size_t total_edits = 0, total_reported = 0;
    for (int round = 0; round < 300; round++) {
        memcpy(before, model, sizeof model);
        memcpy(lenb, len, sizeof len);
        OK(strata_txn_begin(db, STRATA_TXN_READ, &a, E));
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Owner", &t, E));
        int edits[NOWNERS] = {0};
        int owners = 1 + (int)(rnd() % 3);
        for (int j = 0; j < owners; j++) {
            int o = (int)(rnd() % NOWNERS);
            int ops = round % 10 == 0 ? 1 + (int)(rnd() % 60) : 1 + (int)(rnd() % 4);
            for (int i = 0; i < ops; i++) {
                uint64_t r = rnd() % 100;
                size_t n = len[o];
                if (n == 0 || (r < 45 && n < MAXLIST)) {
                    size_t at = r < 25 ? n : rnd() % (n + 1);
                    int64_t v = (int64_t)(rnd() % 20);
                    OK(strata_list_insert(t, o, nums, at, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = v}}, E));
                    memmove(&model[o][at + 1], &model[o][at], (n - at) * sizeof model[o][0]);
                    model[o][at] = v;
                    len[o]++;
                } else if (r < 70) {
                    size_t at = rnd() % n;
                    OK(strata_list_remove(t, o, nums, at, E));
                    memmove(&model[o][at], &model[o][at + 1], (n - at - 1) * sizeof model[o][0]);
                    len[o]--;
                } else if (r < 85) {
                    size_t from = rnd() % n, to = rnd() % n;
                    OK(strata_list_move(t, o, nums, from, to, E));
                    int64_t x = model[o][from];
                    if (from < to) memmove(&model[o][from], &model[o][from + 1], (to - from) * sizeof x);
                    else memmove(&model[o][to + 1], &model[o][to], (from - to) * sizeof x);
                    model[o][to] = x;
                    edits[o]++; /* a move is a deletion and an insertion */
                } else if (r < 98) {
                    size_t at = rnd() % n;
                    int64_t v = (int64_t)(rnd() % 20);
                    OK(strata_list_set(t, o, nums, at, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = v}}, E));
                    model[o][at] = v;
                    edits[o]++;
                } else {
                    OK(strata_list_clear(t, o, nums, E));
                    edits[o] += (int)n - 1;
                    len[o] = 0;
                }
                edits[o]++;
            }
        }
        /* a scalar change of an object whose list stays */
        strata_key_t plain = (strata_key_t)(rnd() % NOWNERS);
        if (edits[plain]) plain = -1;
        else
            OK(strata_obj_set(t, plain, name, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = round + 1}}, E));
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        OK(strata_txn_begin(db, STRATA_TXN_READ, &b, E));
        strata_changes_t *c;
        OK(strata_changes_get(a, b, "Owner", &c, E));
        size_t m = 0;
        for (int o = 0; o < NOWNERS; o++) {
            bool mod = m < strata_changes_count(c, STRATA_CHANGE_MODIFIED) && strata_changes_key(c, STRATA_CHANGE_MODIFIED, m) == o;
            /* modified with its list among the changed properties exactly when the list was edited */
            /* edits that leave the list as it was change nothing */
            bool listed = lenb[o] != len[o] || memcmp(before[o], model[o], len[o] * sizeof model[o][0]) != 0;
            /* modified when its list's contents or its scalar changed; a list emptied and
             * filled again as it was gets a new id: modified too (with edits, never without) */
            CHECK(!(listed || o == plain) || mod);
            CHECK(!mod || listed || o == plain || edits[o] > 0);
            if (mod) {
                bool changed = strata_changes_property_changed(c, m++, nums);
                CHECK(!listed || changed);
                CHECK(!changed || edits[o] > 0);
            }
            strata_list_changes_t *lc;
            OK(strata_list_changes_get(a, b, "Owner", o, nums, &lc, E));
            size_t nd = strata_list_changes_count(lc, STRATA_CHANGE_DELETED);
            size_t ni = strata_list_changes_count(lc, STRATA_CHANGE_INSERTED);
            if (!edits[o]) CHECK(nd == 0 && ni == 0);
            CHECK(nd + ni <= (size_t)edits[o]);
            /* the old list without its deletions is the new one without its insertions */
            int64_t kept_a[MAXLIST], kept_b[MAXLIST];
            size_t ka = 0, kb = 0, d = 0, in = 0;
            for (size_t i = 0; i < lenb[o]; i++) {
                if (d < nd && strata_list_changes_index(lc, STRATA_CHANGE_DELETED, d) == i) d++;
                else kept_a[ka++] = before[o][i];
            }
            for (size_t i = 0; i < len[o]; i++) {
                if (in < ni && strata_list_changes_index(lc, STRATA_CHANGE_INSERTED, in) == i) in++;
                else kept_b[kb++] = model[o][i];
            }
            CHECK(d == nd && in == ni); /* every index ascending and in range */
            CHECK(ka == kb && memcmp(kept_a, kept_b, ka * sizeof *kept_a) == 0);
            total_edits += (size_t)edits[o];
            total_reported += nd + ni;
            strata_list_changes_free(lc);
        }
        strata_changes_free(c);
        strata_txn_free(a);
        strata_txn_free(b);
    }
    /* the simple cases exactly */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Owner", &t, E));
    OK(strata_list_clear(t, 0, nums, E));
    for (int i = 0; i < 10; i++)
        OK(strata_list_insert(t, 0, nums, (size_t)i, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = i}}, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    struct { int op; size_t a, b; size_t del, ins; } cases[] = {
        {0, 10, 0, SIZE_MAX, 10}, /* append: inserted at 10 */
        {1, 3, 0, 3, SIZE_MAX},   /* remove 3 */
        {2, 0, 5, 0, 5},          /* move 0 to 5: deleted at 0, inserted at 5 */
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        OK(strata_txn_begin(db, STRATA_TXN_READ, &a, E));
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Owner", &t, E));
        if (cases[i].op == 0) OK(strata_list_insert(t, 0, nums, cases[i].a, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = 99}}, E));
        if (cases[i].op == 1) OK(strata_list_remove(t, 0, nums, cases[i].a, E));
        if (cases[i].op == 2) OK(strata_list_move(t, 0, nums, cases[i].a, cases[i].b, E));
        strata_list_changes_t *lc;
        OK(strata_list_changes_get(a, w, "Owner", 0, nums, &lc, E)); /* the write's own changes */
        CHECK(strata_list_changes_index(lc, STRATA_CHANGE_DELETED, 0) == cases[i].del);
        CHECK(strata_list_changes_index(lc, STRATA_CHANGE_INSERTED, 0) == cases[i].ins);
        CHECK(strata_list_changes_count(lc, STRATA_CHANGE_DELETED) + strata_list_changes_count(lc, STRATA_CHANGE_INSERTED) ==
              (cases[i].op == 2 ? 2u : 1u));
        strata_list_changes_free(lc);
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        strata_txn_free(a);
    }
    strata_list_changes_t *lc;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &a, E));
    EXPECT_CODE(strata_list_changes_get(a, a, "Owner", 0, name, &lc, E), STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_list_changes_get(a, a, "Owner", 0, 99, &lc, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_list_changes_get(a, NULL, "Owner", 0, nums, &lc, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_list_changes_get(a, a, "Owner", 1234, nums, &lc, E)); /* no such object: empty */
    CHECK(strata_list_changes_count(lc, STRATA_CHANGE_INSERTED) == 0 && strata_list_changes_index(lc, 1, 0) == SIZE_MAX);
    strata_list_changes_free(lc);
    strata_txn_free(a);
    OK(strata_db_verify(db, E));
    fprintf(stderr, "  300 rounds of list edits: %zu edits made, %zu deletions and insertions reported\n",
            total_edits, total_reported);
    OK(strata_db_close(db, E));
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(changes_match_a_full_diff),
        TL_TEST(a_write_transactions_own_changes),
        TL_TEST(the_cost_follows_the_change),
        TL_TEST(list_changes_are_an_edit_script),
    };
    return tl_run("changes", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
