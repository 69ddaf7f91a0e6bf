/*
 * test_readshare.c — what read transactions derive from a committed tree and keep for later
 * ones (storage/readshare.c, the cluster directory of objects/cluster.c): a directory one read
 * transaction built serves the next one on the same root; short transactions that each read
 * too little to pay for one build it together; a commit that changes the tree is never served
 * the old directory, while a reader still on the old version keeps reading through its own;
 * readers on several threads share directories while a writer commits (TSan: make tsan); a
 * an index's leaf directory is kept the same way;
 * a compaction forgets every directory; a packed file's records (unpacked into a
 * transaction's pins) are never kept; an encrypted file's are. Every read is checked against
 * the values written. White-box: built with the core's sources, it looks at t->cdir.
 */
#include "testlib.h"

#include "objects/private.h"

#include <pthread.h>
#include <stdatomic.h>

#define N 60000 /* objects: a few hundred clusters */

static strata_options opts(const void *key) {
    strata_options o;
    strata_options_init(&o);
    o.map_size = 1ull << 30;
    o.encryption_key = key;
    o.encryption_key_len = key ? 64 : 0;
    return o;
}

static strata_db_t *open_db(const char *name, const void *key) {
    strata_options o = opts(key);
    strata_db_t *db = NULL;
    if (strata_db_open(tl_path(name), &o, &db, E)) {
        fprintf(stderr, "open %s: %s\n", name, tl_err.message);
        exit(1);
    }
    return db;
}

/* A read transaction, its table `table` and that table's property `prop`. */
static int open_read(strata_db_t *db, const char *table, const char *prop, strata_txn_t **r,
                     strata_table_t **t, strata_col_t *c, strata_error *err) {
    *r = NULL;
    int rc = strata_txn_begin(db, STRATA_TXN_READ, r, err);
    if (rc == STRATA_OK && (rc = strata_table_open(*r, table, t, err)) == STRATA_OK)
        rc = strata_table_find_property(*t, prop, c, err);
    if (rc && *r) {
        strata_txn_free(*r);
        *r = NULL;
    }
    return rc;
}

/* T {v int}: object i holds i * mul. */
static void fill(strata_db_t *db, int64_t mul) {
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t c;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    if (strata_table_open(w, "T", &t, NULL) != STRATA_OK) {
        OK(strata_table_create(w, "T", &t, E));
        OK(strata_table_add_property(t, "v", STRATA_TYPE_INT, 0, NULL, &c, E));
        for (int i = 0; i < N; i++) {
            strata_key_t k;
            OK(strata_obj_create(t, &k, E));
        }
    }
    OK(strata_table_find_property(t, "v", &c, E));
    for (int i = 0; i < N; i++)
        OK(strata_obj_set(t, i, c, &(strata_value){.type = STRATA_TYPE_INT, .u.i = i * mul}, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
}

/* `reads` point reads in a new read transaction (keys spread over the table), each checked
 * against mul; the directory the transaction used (NULL: none) and whether it had one from
 * the first read on. */
typedef struct reading {
    const st_shared *dir;
    bool from_start;
    bool keyed;
} reading;

static void read_into(strata_db_t *db, int reads, int64_t mul, reading *out) {
    strata_txn_t *r;
    strata_table_t *t;
    strata_col_t c;
    OK(open_read(db, "T", "v", &r, &t, &c, E));
    for (int i = 0; i < reads; i++) {
        strata_key_t k = (strata_key_t)(((uint64_t)i * 7919u) % N);
        strata_value v;
        OK(strata_obj_get(t, k, c, &v, E));
        CHECK(v.type == STRATA_TYPE_INT && v.u.i == (int64_t)k * mul);
        if (i == 0) out->from_start = t->cdir.built;
    }
    out->dir = t->cdir.held;
    out->keyed = t->cdir.keyed;
    strata_txn_free(r);
}

static reading read_some(strata_db_t *db, int reads, int64_t mul) {
    reading out = {0};
    read_into(db, reads, mul, &out);
    return out;
}

/* Reads enough for a directory, then a second transaction starts with the same one. */
static void a_directory_serves_the_next_read_transaction(void) {
    strata_db_t *db = open_db("serve.db", NULL);
    fill(db, 3);
    reading a = read_some(db, N, 3);
    CHECK(a.dir != NULL && !a.from_start && a.keyed);
    reading b = read_some(db, 50, 3);
    CHECK(b.dir == a.dir && b.from_start);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* No transaction reads a quarter as many objects as the table has clusters... but they add up. */
static void short_transactions_build_it_together(void) {
    strata_db_t *db = open_db("short.db", NULL);
    fill(db, 5);
    strata_txn_t *r;
    strata_table_t *t;
    strata_tree_t *tree;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "T", &t, E));
    OK(st_table_tree(t, ST_TABLE_CLUSTERS, false, &tree, E));
    int each = (int)(tree->st.count / 4 / 3) + 1, built_after = 0;
    CHECK(each >= 8 && tree->st.count / 4 >= 32);
    strata_txn_free(r);
    for (int i = 1; i <= 6 && !built_after; i++) {
        reading a = read_some(db, each, 5);
        if (a.dir) built_after = i;
    }
    CHECK(built_after >= 3 && built_after <= 5);
    CHECK(read_some(db, 1, 5).from_start);
    OK(strata_db_close(db, E));
}

/* A commit writes a new root: the next reader builds its own (and reads the new values); a
 * reader that began before the commit still reads the old ones through the old directory. */
static void a_changed_tree_gets_a_directory_of_its_own(void) {
    strata_db_t *db = open_db("changed.db", NULL);
    fill(db, 2);
    reading a = read_some(db, N, 2);
    CHECK(a.dir != NULL);
    strata_txn_t *old;
    strata_table_t *ot;
    strata_col_t c;
    OK(open_read(db, "T", "v", &old, &ot, &c, E));
    strata_value v;
    OK(strata_obj_get(ot, 17, c, &v, E));
    CHECK(ot->cdir.built && ot->cdir.held == a.dir && v.u.i == 34);
    for (int round = 0; round < 3; round++) fill(db, 7 + round); /* pages freed and reused */
    reading b = read_some(db, 1, 9);
    CHECK(!b.from_start && b.dir != a.dir);
    for (int i = 0; i < N; i += 13) { /* the old reader, through its directory */
        OK(strata_obj_get(ot, i, c, &v, E));
        CHECK(v.u.i == (int64_t)i * 2);
    }
    strata_txn_free(old);
    reading d = read_some(db, N, 9);
    CHECK(d.dir != NULL && !d.from_start); /* (its memory may be a.dir's, freed) */
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* After a compaction (new page numbers, new stamps) nothing kept before is used. */
static void a_compaction_forgets_every_directory(void) {
    strata_db_t *db = open_db("compact.db", NULL);
    fill(db, 4);
    fill(db, 6);
    CHECK(read_some(db, N, 6).dir != NULL);
    strata_copy_options co;
    strata_copy_options_init(&co);
    co.pack = false;
    OK(strata_db_compact(db, &co, E));
    reading b = read_some(db, N, 6);
    CHECK(!b.from_start && b.dir != NULL);
    CHECK(read_some(db, 10, 6).from_start);
    OK(strata_db_close(db, E));
}

/* Packed records are unpacked into each transaction's pins: never kept for another. */
static void a_packed_files_records_are_not_kept(void) {
    strata_db_t *db = open_db("packed.db", NULL);
    fill(db, 11);
    strata_copy_options co;
    strata_copy_options_init(&co);
    co.pack = true;
    OK(strata_db_compact(db, &co, E));
    strata_space sp = {.size = sizeof sp};
    OK(strata_db_space_get(db, &sp, E));
    CHECK(sp.packed_pages > 0);
    for (int i = 0; i < 3; i++) {
        reading a = read_some(db, N, 11);
        CHECK(!a.from_start && !a.keyed);
    }
    OK(strata_db_close(db, E));
}

/* An encrypted file's records are opened into the view, which stays: kept like a plain one's. */
static void an_encrypted_files_directory_is_kept(void) {
    static const uint8_t key[64] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17};
    strata_db_t *db = open_db("crypt.db", key);
    fill(db, 13);
    reading a = read_some(db, N, 13);
    reading b = read_some(db, 40, 13);
    CHECK(a.dir != NULL && b.dir == a.dir && b.from_start);
    fill(db, 15);
    CHECK(!read_some(db, N, 15).from_start);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* An index's leaf directory (btree/leafdir.c) is kept the same way: searches in short
 * transactions add up to building it, the next transaction starts with it, and a commit that
 * changes the index leaves it behind. */
#define KV 60000

static void kv_name(int i, char *out, size_t cap) {
    if (i < KV) snprintf(out, cap, "name-%08d", i * 37 % KV);
    else snprintf(out, cap, "more-%08d", i);
}

static void kv_fill(strata_db_t *db, int from, int to) {
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t c;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    if (strata_table_open(w, "S", &t, NULL) != STRATA_OK) {
        OK(strata_table_create(w, "S", &t, E));
        OK(strata_table_add_property(t, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c, E));
    }
    OK(strata_table_find_property(t, "name", &c, E));
    for (int i = from; i < to; i++) {
        char name[32];
        strata_key_t k;
        kv_name(i, name, sizeof name);
        OK(strata_obj_create(t, &k, E));
        CHECK(k == i);
        OK(strata_obj_set(t, k, c, &(strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {name, strlen(name)}}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
}

/* `gets` index searches of names that exist; the arrays the index's handle searched at the
 * start and at the end. */
static void kv_gets(strata_db_t *db, int gets, const void **first, const void **last) {
    strata_txn_t *r;
    strata_table_t *t;
    strata_col_t c;
    OK(open_read(db, "S", "name", &r, &t, &c, E));
    for (int n = 0; n < gets; n++) {
        int i = (int)(((unsigned)n * 7919u) % KV);
        char name[32];
        kv_name(i, name, sizeof name);
        strata_key_t k = -1;
        size_t count = 0;
        OK(strata_index_find(t, c, &(strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {name, strlen(name)}}, &k, 1, &count, E));
        CHECK(count == 1 && k == i);
        strata_tree_t *ix;
        OK(st_prop_index_tree(t, st_prop_find(t, (uint32_t)c), false, &ix, E));
        if (n == 0) *first = st_leafdir_arrays(ix);
        *last = st_leafdir_arrays(ix);
    }
    strata_txn_free(r);
}

static void an_index_leaf_directory_is_kept_too(void) {
    strata_db_t *db = open_db("leaves.db", NULL);
    kv_fill(db, 0, KV);
    const void *first, *last, *built = NULL;
    int txns = 0;
    while (!built && txns < 20) { /* 300 searches each: fewer than one builds on */
        kv_gets(db, 300, &first, &last);
        CHECK(first == NULL);
        built = last;
        txns++;
    }
    printf("  %d transactions of 300 searches before one built it\n", txns);
    CHECK(built != NULL && txns >= 2);
    kv_gets(db, 5, &first, &last);
    CHECK(first == built);
    kv_fill(db, KV, KV + 10); /* a new root */
    kv_gets(db, 5, &first, &last);
    CHECK(first == NULL);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Readers on four threads, each a run of short read transactions, while a writer commits new
 * values: every transaction reads one version's values throughout (object i holds i * mul
 * for the mul object 1 holds), through directories others built and kept. (Run under TSan by
 * make tsan.) */
typedef struct racer {
    strata_db_t *db;
    _Atomic bool *stop;
    int reads, wrong, with_dir;
} racer;

static void *race_reader(void *arg) {
    racer *rc = arg;
    while (!atomic_load(rc->stop) || rc->reads < 200) {
        strata_txn_t *r;
        strata_table_t *t;
        strata_col_t c;
        strata_value v;
        if (open_read(rc->db, "T", "v", &r, &t, &c, NULL)) {
            rc->wrong++;
            break;
        }
        if (strata_obj_get(t, 1, c, &v, NULL)) {
            rc->wrong++;
            strata_txn_free(r);
            break;
        }
        int64_t mul = v.u.i;
        for (int i = 0; i < 400; i++) {
            strata_key_t k = (strata_key_t)(((uint64_t)(i + rc->reads) * 7919u) % N);
            if (strata_obj_get(t, k, c, &v, NULL) || v.u.i != (int64_t)k * mul) rc->wrong++;
        }
        rc->with_dir += t->cdir.built;
        rc->reads++;
        strata_txn_free(r);
    }
    return NULL;
}

static void readers_share_directories_while_a_writer_commits(void) {
    strata_db_t *db = open_db("race.db", NULL);
    fill(db, 1);
    _Atomic bool stop = false;
    racer rs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        rs[i] = (racer){db, &stop, 0, 0, 0};
        CHECK(pthread_create(&th[i], NULL, race_reader, &rs[i]) == 0);
    }
    for (int round = 2; round < 8; round++) fill(db, round);
    atomic_store(&stop, true);
    int reads = 0, wrong = 0, with_dir = 0;
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        reads += rs[i].reads;
        wrong += rs[i].wrong;
        with_dir += rs[i].with_dir;
    }
    printf("  %d read transactions, %d of them through a directory, %d wrong values\n", reads,
           with_dir, wrong);
    CHECK(wrong == 0 && reads >= 800 && with_dir > 0);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

static const tl_test tests[] = {
    TL_TEST(a_directory_serves_the_next_read_transaction),
    TL_TEST(short_transactions_build_it_together),
    TL_TEST(a_changed_tree_gets_a_directory_of_its_own),
    TL_TEST(a_compaction_forgets_every_directory),
    TL_TEST(a_packed_files_records_are_not_kept),
    TL_TEST(an_encrypted_files_directory_is_kept),
    TL_TEST(an_index_leaf_directory_is_kept_too),
    TL_TEST(readers_share_directories_while_a_writer_commits),
};

int main(int argc, char **argv) {
    tl_seed(0x2545f4914f6cdd1dull);
    return tl_run("readshare", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
