/*
 * test_verify_objects.c — proves that strata_db_verify catches broken object-layer invariants.
 * A white-box test: built with the core's sources (not the library), it breaks one invariant at
 * a time through internal calls, commits, and expects STRATA_ERR_CORRUPT naming the problem.
 */
#include "testlib.h"

#include "objects/private.h"

static strata_value vstr(const char *s) {
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
}

typedef struct fixture {
    strata_db_t *db;
    strata_key_t person, dog;
    strata_col_t name, dogs, best, dname;
} fixture;

/* Person {name indexed, best: link Dog, dogs: [Dog]}, one person with one dog in both. */
static int make(fixture *f, const char *file) {
    strata_txn_t *w;
    strata_table_t *p, *d;
    int rc;
    if ((rc = strata_db_open(tl_path(file), NULL, &f->db, E)) ||
        (rc = strata_txn_begin(f->db, STRATA_TXN_WRITE, &w, E)))
        return rc;
    if ((rc = strata_table_create(w, "Dog", &d, E)) || (rc = strata_table_create(w, "Person", &p, E)) ||
        (rc = strata_table_add_property(d, "name", STRATA_TYPE_STRING, 0, NULL, &f->dname, E)) ||
        (rc = strata_table_add_property(p, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &f->name, E)) ||
        (rc = strata_table_add_property(p, "best", STRATA_TYPE_LINK, 0, "Dog", &f->best, E)) ||
        (rc = strata_table_add_property(p, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &f->dogs, E)) ||
        (rc = strata_obj_create(d, &f->dog, E)) || (rc = strata_obj_create(p, &f->person, E)) ||
        (rc = strata_obj_set(p, f->person, f->name, (strata_value[]){vstr("张三")}, E)) ||
        (rc = strata_obj_set(p, f->person, f->best, (strata_value[]){{.type = STRATA_TYPE_LINK, .u.link = f->dog}}, E)) ||
        (rc = strata_list_insert(p, f->person, f->dogs, 0, (strata_value[]){{.type = STRATA_TYPE_LINK, .u.link = f->dog}}, E)) ||
        (rc = strata_txn_commit(w, E)))
        return rc;
    strata_txn_free(w);
    return strata_db_verify(f->db, E);
}

/* Break something in a write transaction (break_fn), commit, and expect verify to object. */
typedef int (*break_fn)(fixture *f, strata_txn_t *w);

static void expect_caught(const char *file, break_fn fn, const char *words) {
    fixture f;
    OK(make(&f, file));
    strata_txn_t *w;
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    OK(fn(&f, w));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    EXPECT_CODE(strata_db_verify(f.db, E), STRATA_ERR_CORRUPT);
    if (!strstr(tl_err.message, words)) fprintf(stderr, "  message: %s\n", tl_err.message);
    CHECK(strstr(tl_err.message, words));
    OK(strata_db_close(f.db, E));
}

static int drop_index_entry(fixture *f, strata_txn_t *w) {
    strata_table_t *p;
    int rc = strata_table_open(w, "Person", &p, E);
    if (rc) return rc;
    st_prop *pr = st_prop_find(p, f->name);
    strata_value v = vstr("张三");
    return st_index_remove(p, pr, &v, f->person, E);
}

static int drop_backlink(fixture *f, strata_txn_t *w) {
    strata_table_t *p, *d;
    int rc;
    if ((rc = strata_table_open(w, "Person", &p, E)) || (rc = strata_table_open(w, "Dog", &d, E)))
        return rc;
    return st_backlink_add(d, f->dog, p->id, f->best, f->person, -1, E);
}

static int extra_backlink(fixture *f, strata_txn_t *w) {
    strata_table_t *p, *d;
    int rc;
    if ((rc = strata_table_open(w, "Person", &p, E)) || (rc = strata_table_open(w, "Dog", &d, E)))
        return rc;
    return st_backlink_add(d, f->dog, p->id, f->dogs, f->person, 1, E);
}

static int wrong_count(fixture *f, strata_txn_t *w) {
    (void)f;
    strata_table_t *d;
    int rc = strata_table_open(w, "Dog", &d, E);
    if (rc) return rc;
    d->count++;
    d->dirty = true;
    return STRATA_OK;
}

static int orphan_list(fixture *f, strata_txn_t *w) {
    (void)f;
    strata_table_t *p;
    strata_tree_t *lt;
    int rc;
    if ((rc = strata_table_open(w, "Person", &p, E)) || (rc = st_table_tree(p, ST_TABLE_LISTS, true, &lt, E))) return rc;
    uint8_t k[8];
    st_wr64(k, 999);
    return st_tree_put(lt, k, 8, (const uint8_t *)"\0\0\0\0", 4, E);
}

/* Tag {id int primary key}: ids 0 and 5 are their keys (direct), id 1 gets key 6 (indexed). */
static int tags(strata_txn_t *w, strata_table_t **t, st_prop **id) {
    strata_col_t col;
    strata_key_t k;
    int rc;
    if ((rc = strata_table_create(w, "Tag", t, E)) ||
        (rc = strata_table_add_property(*t, "id", STRATA_TYPE_INT, STRATA_PROP_PRIMARY_KEY, NULL, &col, E)))
        return rc;
    for (int i = 0; i < 3; i++)
        if ((rc = strata_obj_create_pk(*t, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = "\0\5\1"[i]}}, &k, E)))
            return rc;
    *id = st_prop_find(*t, col);
    return k == 6 ? STRATA_OK : -1;
}

static int index_entry_for_a_direct_key(fixture *f, strata_txn_t *w) {
    (void)f;
    strata_table_t *t;
    st_prop *id;
    strata_tree_t *ix;
    int rc = tags(w, &t, &id);
    if (rc || (rc = st_prop_index_tree(t, id, true, &ix, E))) return rc;
    uint8_t k[STRATA_MAX_KEY];
    size_t kl;
    bool trunc;
    st_index_key(id, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = 5}}, 5, k, &kl, &trunc);
    return st_tree_put(ix, k, kl, (const uint8_t *)"", 0, E);
}

static int direct_flag_lost(fixture *f, strata_txn_t *w) {
    (void)f;
    strata_table_t *t;
    st_prop *id;
    int rc = tags(w, &t, &id);
    if (rc) return rc;
    id->flags &= (uint8_t)~ST_PROP_PK_DIRECT; /* as a reader of format 1 would take it */
    t->dirty = true;
    return STRATA_OK;
}

static int primary_key_twice(fixture *f, strata_txn_t *w) {
    (void)f;
    strata_table_t *t;
    st_prop *id;
    bool done;
    strata_value one = {.type = STRATA_TYPE_INT, .u.i = 1}, five = {.type = STRATA_TYPE_INT, .u.i = 5};
    int rc = tags(w, &t, &id);
    if (rc || (rc = st_clusters_flush(t, E)) || (rc = st_cluster_patch(t, 6, id, &five, &done, E)))
        return rc;
    if (!done) return -1;
    /* the index follows, so only the duplicate is wrong: object 6 says 5, as object 5 does */
    if ((rc = st_index_remove(t, id, &one, 6, E))) return rc;
    return st_index_insert(t, id, &five, 6, E);
}

static void verify_catches_a_missing_index_entry(void) { expect_caught("v1.db", drop_index_entry, "index of 'Person.name'"); }
static void verify_catches_a_missing_backlink(void) { expect_caught("v2.db", drop_backlink, "backlink"); }
static void verify_catches_a_backlink_without_a_link(void) { expect_caught("v3.db", extra_backlink, "backlinks of 'Dog'"); }
static void verify_catches_a_wrong_object_count(void) { expect_caught("v4.db", wrong_count, "records 2"); }
static void verify_catches_a_list_nobody_uses(void) { expect_caught("v5.db", orphan_list, "lists stored"); }

static void verify_catches_an_index_entry_for_a_direct_primary_key(void) {
    expect_caught("v6.db", index_entry_for_a_direct_key, "whose key is its primary key");
}
static void verify_catches_a_direct_primary_key_read_as_complete(void) {
    expect_caught("v7.db", direct_flag_lost, "index of 'Tag.id' has no entry for object 0");
}
static void verify_catches_a_direct_primary_key_held_twice(void) {
    expect_caught("v8.db", primary_key_twice, "holds 5 twice");
}

static const tl_test tests[] = {
    TL_TEST(verify_catches_an_index_entry_for_a_direct_primary_key),
    TL_TEST(verify_catches_a_direct_primary_key_read_as_complete),
    TL_TEST(verify_catches_a_direct_primary_key_held_twice),
    TL_TEST(verify_catches_a_missing_index_entry),
    TL_TEST(verify_catches_a_missing_backlink),
    TL_TEST(verify_catches_a_backlink_without_a_link),
    TL_TEST(verify_catches_a_wrong_object_count),
    TL_TEST(verify_catches_a_list_nobody_uses),
};

int main(int argc, char **argv) {
    return tl_run("verify-objects", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
