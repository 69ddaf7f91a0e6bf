/*
 * test_objects.c — the object layer through strata.h: schema, every property type, clusters,
 * links and backlinks, lists, primary keys and indexes, schema changes, bad input, and a
 * randomized differential test against an in-memory model. Every test that writes verifies.
 */
#include "testlib.h"

#include <sys/stat.h>

#include <stdint.h>


static strata_value vint(int64_t i) { return (strata_value){.type = STRATA_TYPE_INT, .u.i = i}; }
static strata_value vbool(bool b) { return (strata_value){.type = STRATA_TYPE_BOOL, .u.b = b}; }
static strata_value vdouble(double d) { return (strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = d}; }
static strata_value vnull(void) { return (strata_value){.type = STRATA_TYPE_NULL}; }
static strata_value vlink(int64_t k) { return (strata_value){.type = STRATA_TYPE_LINK, .u.link = k}; }
static strata_value vstr(const char *s) {
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
}
static bool str_is(const strata_value *v, const char *s) {
    return v->type == STRATA_TYPE_STRING && v->u.bytes.len == strlen(s) &&
           memcmp(v->u.bytes.data, s, v->u.bytes.len) == 0;
}

static strata_db_t *open_db(const char *path) {
    strata_db_t *db = NULL;
    if (tl_db_open(path, &db) != STRATA_OK) {
        fprintf(stderr, "  open %s: %s\n", path, tl_err.message);
        return NULL;
    }
    return db;
}

/* ------------------------------------------------------------------ every type */

/* Two values read back are the same (bytes compared by content). */
/* A write transaction on db with a new table "T" of one indexed string property "s". */
static int begin_indexed_strings(strata_db_t *db, strata_txn_t **w, strata_table_t **t,
                                 strata_col_t *s) {
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, w, E);
    if (rc == STRATA_OK) rc = strata_table_create(*w, "T", t, E);
    if (rc == STRATA_OK)
        rc = strata_table_add_property(*t, "s", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, s, E);
    return rc;
}

/* Commit w, verify the file, then a read transaction with table "T" open in *t (NULL on a
 * failure, which it reports). */
static strata_txn_t *commit_verify_read(strata_db_t *db, strata_txn_t *w, strata_table_t **t) {
    strata_txn_t *r = NULL;
    int rc = strata_txn_commit(w, E);
    strata_txn_free(w);
    if (rc == STRATA_OK) rc = strata_db_verify(db, E);
    if (rc == STRATA_OK) rc = strata_txn_begin(db, STRATA_TXN_READ, &r, E);
    if (rc == STRATA_OK && (rc = strata_table_open(r, "T", t, E)) != STRATA_OK) {
        strata_txn_free(r);
        r = NULL;
    }
    if (rc != STRATA_OK) fprintf(stderr, "  commit, verify and read: %s\n", tl_err.message);
    return r;
}

static bool same_value(const strata_value *a, const strata_value *b) {
    if (a->type != b->type) return false;
    if (a->type == STRATA_TYPE_STRING || a->type == STRATA_TYPE_BINARY)
        return a->u.bytes.len == b->u.bytes.len &&
               memcmp(a->u.bytes.data, b->u.bytes.data, a->u.bytes.len) == 0;
    return memcmp(&a->u, &b->u, sizeof a->u) == 0;
}

/* strata_obj_get_many reads what strata_obj_get reads, property by property. */
static void get_many_matches_get(strata_table_t *t, strata_key_t k, const strata_col_t *cols, size_t n) {
    strata_value many[16], one;
    memset(many, 0, sizeof many);
    OK(strata_obj_get_many(t, k, cols, n, many, E));
    for (size_t i = 0; i < n; i++) {
        memset(&one, 0, sizeof one);
        OK(strata_obj_get(t, k, cols[i], &one, E));
        CHECK(same_value(&one, &many[i]));
    }
}

static void every_property_type_round_trips_through_commit_and_reopen(void) {
    const char *path = tl_path("types.db");
    strata_db_t *db = open_db(path);
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t, *o;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Other", &o, E));
    OK(strata_table_create(w, "All", &t, E));
    strata_col_t c[13], cn;
    const strata_type types[] = {STRATA_TYPE_BOOL, STRATA_TYPE_INT, STRATA_TYPE_FLOAT,
                                 STRATA_TYPE_DOUBLE, STRATA_TYPE_STRING, STRATA_TYPE_BINARY,
                                 STRATA_TYPE_TIMESTAMP, STRATA_TYPE_OBJECT_ID, STRATA_TYPE_UUID,
                                 STRATA_TYPE_DECIMAL128, STRATA_TYPE_LINK, STRATA_TYPE_MIXED};
    for (int i = 0; i < 12; i++) {
        char name[20];
        snprintf(name, sizeof name, "p%d", i);
        OK(strata_table_add_property(t, name, types[i], 0,
                                     types[i] == STRATA_TYPE_LINK ? "Other" : NULL, &c[i], E));
    }
    OK(strata_table_add_property(t, "n", STRATA_TYPE_INT, STRATA_PROP_NULLABLE, NULL, &cn, E));
    strata_key_t ok, k;
    OK(strata_obj_create(o, &ok, E));
    OK(strata_obj_create(t, &k, E));
    /* defaults */
    strata_value v;
    OK(strata_obj_get(t, k, c[1], &v, E));
    CHECK(v.type == STRATA_TYPE_INT && v.u.i == 0);
    OK(strata_obj_get(t, k, c[4], &v, E));
    CHECK(str_is(&v, ""));
    OK(strata_obj_get(t, k, c[10], &v, E));
    CHECK(v.type == STRATA_TYPE_NULL);
    OK(strata_obj_get(t, k, cn, &v, E));
    CHECK(v.type == STRATA_TYPE_NULL);
    strata_value vals[12];
    memset(vals, 0, sizeof vals);
    vals[0] = vbool(true);
    vals[1] = vint(-1234567890123ll);
    vals[2] = (strata_value){.type = STRATA_TYPE_FLOAT, .u.f = 1.5f};
    vals[3] = vdouble(3.25);
    vals[4] = vstr("张三 and Zoë");
    vals[5] = (strata_value){.type = STRATA_TYPE_BINARY, .u.bytes = {"\0\1\2\3", 4}};
    vals[6] = (strata_value){.type = STRATA_TYPE_TIMESTAMP, .u.timestamp = {1700000000, 123}};
    vals[7].type = STRATA_TYPE_OBJECT_ID;
    memcpy(vals[7].u.object_id, "abcdefghijkl", 12);
    vals[8].type = STRATA_TYPE_UUID;
    memcpy(vals[8].u.uuid, "0123456789abcdef", 16);
    vals[9] = (strata_value){.type = STRATA_TYPE_DECIMAL128, .u.decimal = {42, 0x3040000000000000ull}};
    vals[10] = vlink(ok);
    vals[11] = vstr("mixed string");
    for (int i = 0; i < 12; i++) OK(strata_obj_set(t, k, c[i], &vals[i], E));
    OK(strata_obj_set(t, k, cn, (strata_value[]){vint(7)}, E));
    strata_col_t all[13];
    memcpy(all, c, 12 * sizeof *c);
    all[12] = cn;
    get_many_matches_get(t, k, all, 13); /* from the transaction's own (decoded) cluster */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));

    db = open_db(path);
    CHECK(db);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "All", &t, E));
    for (int i = 0; i < 12; i++) {
        OK(strata_obj_get(t, k, c[i], &v, E));
        if (!(v.type == vals[i].type)) fprintf(stderr, "  property %d: type %d\n", i, v.type);
        CHECK(v.type == vals[i].type);
        switch (v.type) {
        case STRATA_TYPE_STRING:
        case STRATA_TYPE_BINARY:
            CHECK(v.u.bytes.len == vals[i].u.bytes.len &&
                  memcmp(v.u.bytes.data, vals[i].u.bytes.data, v.u.bytes.len) == 0);
            break;
        default: CHECK(memcmp(&v.u, &vals[i].u, sizeof v.u.uuid) == 0 || v.type == STRATA_TYPE_FLOAT ||
                       v.type == STRATA_TYPE_BOOL || v.type == STRATA_TYPE_TIMESTAMP);
        }
    }
    OK(strata_obj_get(t, k, c[0], &v, E));
    CHECK(v.u.b);
    OK(strata_obj_get(t, k, c[2], &v, E));
    CHECK(v.u.f == 1.5f);
    OK(strata_obj_get(t, k, c[6], &v, E));
    CHECK(v.u.timestamp.seconds == 1700000000 && v.u.timestamp.nanoseconds == 123);
    OK(strata_obj_get(t, k, cn, &v, E));
    CHECK(v.type == STRATA_TYPE_INT && v.u.i == 7);
    get_many_matches_get(t, k, all, 13); /* from the file */
    strata_value two[2];
    EXPECT_CODE(strata_obj_get_many(t, k, (strata_col_t[]){c[1], 999}, 2, two, E), STRATA_ERR_NOT_FOUND);
    CHECK(strstr(tl_err.message, "'All'") && strstr(tl_err.message, "999"));
    EXPECT_CODE(strata_obj_get_many(t, k + 1, all, 2, two, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_get_many(t, k, NULL, 2, two, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_obj_get_many(t, k, all, 2, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_obj_get_many(t, k, NULL, 0, NULL, E)); /* the object exists */
    EXPECT_CODE(strata_obj_get_many(NULL, k, all, 2, two, E), STRATA_ERR_INVALID_ARGUMENT);
    uint64_t ver;
    OK(strata_schema_version(r, &ver, E));
    CHECK(ver == 0);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ the classic example */

typedef struct classic {
    strata_table_t *company, *person, *dog;
    strata_col_t cname, pname, page, pcompany, pdogs, dname, dcolor;
} classic;

static int classic_schema(strata_txn_t *w, classic *c) {
    int rc;
    if ((rc = strata_table_create(w, "Company", &c->company, E)) ||
        (rc = strata_table_create(w, "Dog", &c->dog, E)) ||
        (rc = strata_table_create(w, "Person", &c->person, E)) ||
        (rc = strata_table_add_property(c->company, "name", STRATA_TYPE_STRING, 0, NULL, &c->cname, E)) ||
        (rc = strata_table_add_property(c->dog, "name", STRATA_TYPE_STRING, 0, NULL, &c->dname, E)) ||
        (rc = strata_table_add_property(c->dog, "color", STRATA_TYPE_STRING, 0, NULL, &c->dcolor, E)) ||
        (rc = strata_table_add_property(c->person, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c->pname, E)) ||
        (rc = strata_table_add_property(c->person, "age", STRATA_TYPE_INT, 0, NULL, &c->page, E)) ||
        (rc = strata_table_add_property(c->person, "company", STRATA_TYPE_LINK, 0, "Company", &c->pcompany, E)) ||
        (rc = strata_table_add_property(c->person, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &c->pdogs, E)))
        return rc;
    return STRATA_OK;
}

static void deleting_a_dog_updates_lists_and_backlinks(void) {
    const char *path = tl_path("classic.db");
    strata_db_t *db = open_db(path);
    CHECK(db);
    strata_txn_t *w;
    classic c;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(classic_schema(w, &c));
    strata_key_t google, zs, ls, d[3];
    OK(strata_obj_create(c.company, &google, E));
    OK(strata_obj_set(c.company, google, c.cname, (strata_value[]){vstr("GOOGLE")}, E));
    OK(strata_obj_create(c.person, &zs, E));
    OK(strata_obj_set(c.person, zs, c.pname, (strata_value[]){vstr("张三")}, E));
    OK(strata_obj_set(c.person, zs, c.pcompany, (strata_value[]){vlink(google)}, E));
    OK(strata_obj_create(c.person, &ls, E));
    OK(strata_obj_set(c.person, ls, c.pname, (strata_value[]){vstr("李四")}, E));
    const char *names[] = {"小黑", "小白", "旺财"};
    for (int i = 0; i < 3; i++) {
        OK(strata_obj_create(c.dog, &d[i], E));
        OK(strata_obj_set(c.dog, d[i], c.dname, (strata_value[]){vstr(names[i])}, E));
        OK(strata_list_insert(c.person, zs, c.pdogs, (size_t)i, (strata_value[]){vlink(d[i])}, E));
    }
    OK(strata_list_insert(c.person, ls, c.pdogs, 0, (strata_value[]){vlink(d[1])}, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));

    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Person", &c.person, E));
    OK(strata_table_open(w, "Dog", &c.dog, E));
    strata_key_t owners[4];
    size_t n;
    OK(strata_obj_backlinks(c.dog, d[1], c.person, c.pdogs, owners, 4, &n, E));
    CHECK(n == 2 && owners[0] == zs && owners[1] == ls);
    OK(strata_obj_backlinks(c.dog, d[0], c.person, c.pdogs, owners, 4, &n, E));
    CHECK(n == 1 && owners[0] == zs);
    /* rename through the index */
    OK(strata_obj_set(c.person, zs, c.pname, (strata_value[]){vstr("张三丰")}, E));
    strata_key_t found[2];
    OK(strata_index_find(c.person, c.pname, (strata_value[]){vstr("张三")}, found, 2, &n, E));
    CHECK(n == 0);
    OK(strata_index_find(c.person, c.pname, (strata_value[]){vstr("张三丰")}, found, 2, &n, E));
    CHECK(n == 1 && found[0] == zs);
    /* delete 小白: gone from both lists and from backlinks */
    OK(strata_obj_delete(c.dog, d[1], E));
    size_t size;
    OK(strata_list_size(c.person, zs, c.pdogs, &size, E));
    CHECK(size == 2);
    strata_value v;
    OK(strata_list_get(c.person, zs, c.pdogs, 1, &v, E));
    CHECK(v.type == STRATA_TYPE_LINK && v.u.link == d[2]);
    EXPECT_CODE(strata_obj_get_many(c.person, zs, &c.pdogs, 1, &v, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "'Person.dogs' is a list"));
    OK(strata_list_size(c.person, ls, c.pdogs, &size, E));
    CHECK(size == 0);
    EXPECT_CODE(strata_obj_backlinks(c.dog, d[1], c.person, c.pdogs, owners, 4, &n, E), STRATA_ERR_NOT_FOUND);
    /* delete the company: the person's link becomes null */
    strata_table_t *company;
    OK(strata_table_open(w, "Company", &company, E));
    OK(strata_obj_delete(company, google, E));
    OK(strata_obj_get(c.person, zs, c.pcompany, &v, E));
    CHECK(v.type == STRATA_TYPE_NULL);
    /* delete a person: the dogs lose an owner */
    OK(strata_obj_delete(c.person, zs, E));
    OK(strata_obj_backlinks(c.dog, d[0], c.person, c.pdogs, owners, 4, &n, E));
    CHECK(n == 0);
    uint64_t count;
    OK(strata_table_size(c.dog, &count, E));
    CHECK(count == 2);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ primary keys */

static void primary_keys_are_unique_and_found(void) {
    strata_db_t *db = open_db(tl_path("pk.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t id, name;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "User", &t, E));
    OK(strata_table_add_property(t, "id", STRATA_TYPE_STRING, STRATA_PROP_PRIMARY_KEY, NULL, &id, E));
    OK(strata_table_add_property(t, "n", STRATA_TYPE_INT, 0, NULL, &name, E));
    strata_key_t k1, k2, k;
    OK(strata_obj_create_pk(t, (strata_value[]){vstr("alice")}, &k1, E));
    OK(strata_obj_create_pk(t, (strata_value[]){vstr("bob")}, &k2, E));
    EXPECT_CODE(strata_obj_create_pk(t, (strata_value[]){vstr("alice")}, &k, E), STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "'alice'"));
    EXPECT_CODE(strata_obj_create(t, &k, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_obj_create_pk(t, (strata_value[]){vint(3)}, &k, E), STRATA_ERR_WRONG_TYPE);
    OK(strata_obj_find_pk(t, (strata_value[]){vstr("bob")}, &k, E));
    CHECK(k == k2);
    EXPECT_CODE(strata_obj_find_pk(t, (strata_value[]){vstr("carol")}, &k, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_set(t, k2, id, (strata_value[]){vstr("alice")}, E), STRATA_ERR_EXISTS);
    uint64_t n;
    OK(strata_table_size(t, &n, E));
    CHECK(n == 2);
    /* a primary key over duplicates fails, naming the value, and changes nothing */
    OK(strata_obj_set(t, k1, name, (strata_value[]){vint(5)}, E));
    OK(strata_obj_set(t, k2, name, (strata_value[]){vint(5)}, E));
    EXPECT_CODE(strata_table_set_primary_key(t, name, E), STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "'User.n' has duplicate values") && strstr(tl_err.message, "5"));
    strata_col_t pk;
    OK(strata_table_primary_key(t, &pk, E));
    CHECK(pk == id);
    OK(strata_obj_set(t, k2, name, (strata_value[]){vint(6)}, E));
    OK(strata_table_set_primary_key(t, name, E));
    OK(strata_obj_find_pk(t, (strata_value[]){vint(6)}, &k, E));
    CHECK(k == k2);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Integer primary keys are "direct": an object created with a primary key at or past the table's
 * next key gets that key, and its index keeps entries only for the others. A model of pk -> key
 * checks creates (in order, out of order, negative, taken), pk changes, deletes, finds, queries
 * (==, IN, ranges, sorting on the key), dropping and restoring the primary key, and reopening. */
#define PK_SPACE 400
static int64_t pk_model[PK_SPACE + 100]; /* pk + 50 -> key, -1 = none */

static strata_key_t pk_model_key(int64_t pk) {
    return pk >= -50 && pk < PK_SPACE + 50 ? pk_model[pk + 50] : -1;
}

static int64_t pk_query_count(strata_txn_t *r, const char *pred, const strata_value *args, size_t nargs) {
    strata_query_t *q;
    uint64_t n = 0;
    if (strata_query_compile(r, "Item", pred, &q, E)) return -1;
    int rc = strata_query_count(q, r, args, nargs, &n, E);
    strata_query_free(q);
    return rc ? -1 : (int64_t)n;
}

static int pk_check_model(strata_db_t *db, strata_col_t id) {
    strata_txn_t *r;
    strata_table_t *t;
    int rc = strata_txn_begin(db, STRATA_TXN_READ, &r, E);
    if (rc) return rc;
    if ((rc = strata_table_open(r, "Item", &t, E))) goto out;
    int64_t live = 0, above = 0, between = 0;
    for (int64_t pk = -50; pk < PK_SPACE + 50; pk++) {
        strata_key_t want = pk_model_key(pk), k;
        live += want >= 0;
        above += want >= 0 && pk > 100;
        between += want >= 0 && pk >= 20 && pk <= 220;
        rc = strata_obj_find_pk(t, (strata_value[]){vint(pk)}, &k, E);
        if (want < 0 ? rc != STRATA_ERR_NOT_FOUND : (rc != STRATA_OK || k != want)) {
            fprintf(stderr, "  find pk %lld: rc %d key %lld, model %lld\n", (long long)pk, rc,
                    (long long)k, (long long)want);
            rc = -1;
            goto out;
        }
        if (want >= 0) {
            strata_value v;
            if ((rc = strata_obj_get(t, want, id, &v, E))) goto out;
            if (v.u.i != pk) { rc = -1; goto out; }
        }
        /* the query path agrees */
        if (pk % 7 == 0 && pk_query_count(r, "id == $0", (strata_value[]){vint(pk)}, 1) != (want >= 0)) {
            fprintf(stderr, "  query id == %lld disagrees\n", (long long)pk);
            rc = -1;
            goto out;
        }
    }
    rc = -1;
    if (pk_query_count(r, "id > 100", NULL, 0) != above ||
        pk_query_count(r, "id BETWEEN {20, 220}", NULL, 0) != between ||
        pk_query_count(r, "id IN {3, 5, 7, 390, -7}", NULL, 0) !=
            (pk_model_key(3) >= 0) + (pk_model_key(5) >= 0) + (pk_model_key(7) >= 0) +
                (pk_model_key(390) >= 0) + (pk_model_key(-7) >= 0)) {
        fprintf(stderr, "  range or IN counts disagree with the model\n");
        goto out;
    }
    /* sorted by the primary key: ascending values */
    strata_query_t *q;
    strata_results_t *res;
    if (strata_query_compile(r, "Item", "TRUEPREDICATE SORT(id ASC) LIMIT(1000)", &q, E)) goto out;
    int qrc = strata_query_run(q, r, NULL, 0, &res, E);
    strata_query_free(q);
    if (qrc) goto out;
    bool sorted = (int64_t)strata_results_size(res) == live;
    int64_t prev = INT64_MIN;
    for (size_t i = 0; sorted && i < strata_results_size(res); i++) {
        strata_value v;
        sorted = strata_obj_get(t, strata_results_key(res, i), id, &v, E) == STRATA_OK && v.u.i > prev;
        prev = v.u.i;
    }
    strata_results_free(res);
    if (!sorted) {
        fprintf(stderr, "  SORT(id) is not the primary keys in order\n");
        goto out;
    }
    rc = STRATA_OK;
out:
    strata_txn_free(r);
    return rc;
}

static void integer_primary_keys_are_object_keys_when_they_can_be(void) {
    const char *path = tl_path("pkdirect.db");
    strata_db_t *db = open_db(path);
    CHECK(db);
    for (int i = 0; i < PK_SPACE + 100; i++) pk_model[i] = -1;
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t id, v, pkcol;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Item", &t, E));
    OK(strata_table_add_property(t, "id", STRATA_TYPE_INT, STRATA_PROP_PRIMARY_KEY, NULL, &id, E));
    OK(strata_table_add_property(t, "v", STRATA_TYPE_INT, 0, NULL, &v, E));
    /* ids in order are the keys: nothing goes into the index */
    strata_key_t k;
    for (int64_t i = 0; i < 50; i++) {
        OK(strata_obj_create_pk(t, (strata_value[]){vint(i * 2)}, &k, E));
        CHECK(k == i * 2);
        pk_model[i * 2 + 50] = k;
    }
    strata_property_info info;
    OK(strata_table_property_get(t, id, &info, E));
    CHECK(info.flags == (STRATA_PROP_PRIMARY_KEY | STRATA_PROP_INDEXED));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(pk_check_model(db, id));
    OK(strata_db_verify(db, E));
    strata_key_t next_key = 99;
    for (int round = 0; round < 30; round++) {
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Item", &t, E));
        for (int op = 0; op < 60; op++) {
            unsigned what = (unsigned)(rnd() % 10);
            int64_t pk = (int64_t)(rnd() % (PK_SPACE + 40)) - 40;
            strata_key_t at = pk_model_key(pk);
            if (what < 4) { /* create: taken, below the next key (indexed) or past it (direct) */
                int rc = strata_obj_create_pk(t, (strata_value[]){vint(pk)}, &k, E);
                if (at >= 0) {
                    CHECK(rc == STRATA_ERR_EXISTS && strstr(tl_err.message, "Item"));
                    continue;
                }
                OK(rc);
                CHECK(k > next_key && (pk > next_key ? k == pk : true));
                next_key = k;
                pk_model[pk + 50] = k;
            } else if (what < 6) { /* change an object's pk, maybe to its own key */
                int64_t from = (int64_t)(rnd() % PK_SPACE);
                strata_key_t obj = pk_model_key(from);
                if (obj < 0) continue;
                if (what == 5) pk = obj < PK_SPACE ? obj : pk;
                at = pk_model_key(pk);
                int rc = strata_obj_set(t, obj, id, (strata_value[]){vint(pk)}, E);
                if (at >= 0 && at != obj) {
                    CHECK(rc == STRATA_ERR_EXISTS);
                    continue;
                }
                OK(rc);
                pk_model[from + 50] = -1;
                pk_model[pk + 50] = obj;
                /* read back before commit: the change is still pending in the index */
                strata_value got;
                OK(strata_obj_get(t, obj, id, &got, E));
                CHECK(got.type == STRATA_TYPE_INT && got.u.i == pk);
            } else if (what < 8) { /* delete */
                if (at < 0) continue;
                OK(strata_obj_delete(t, at, E));
                pk_model[pk + 50] = -1;
                strata_value gone;
                CHECK(strata_obj_get(t, at, id, &gone, E) == STRATA_ERR_NOT_FOUND);
            } else { /* other properties leave the key alone */
                if (at < 0) continue;
                OK(strata_obj_set(t, at, v, (strata_value[]){vint(pk * 3)}, E));
            }
        }
        if (round % 10 == 4) { /* no primary key: a complete ordinary index; then back */
            OK(strata_table_set_primary_key(t, STRATA_NO_COL, E));
            OK(strata_table_primary_key(t, &pkcol, E));
            CHECK(pkcol == STRATA_NO_COL);
            OK(strata_txn_commit(w, E));
            strata_txn_free(w);
            OK(strata_db_verify(db, E));
            OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
            OK(strata_table_open(w, "Item", &t, E));
            OK(strata_table_set_primary_key(t, id, E));
        }
        if (round % 10 == 9) { /* the primary key moves to v (duplicates refused) and back */
            int rc = strata_table_set_primary_key(t, v, E);
            CHECK(rc == STRATA_OK || rc == STRATA_ERR_EXISTS);
            OK(strata_table_set_primary_key(t, id, E));
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        OK(pk_check_model(db, id));
        OK(strata_db_verify(db, E));
        if (round % 5 == 2) {
            OK(strata_db_close(db, E));
            db = open_db(path);
            CHECK(db);
        }
    }
    /* both kinds remain: objects whose key is their primary key, and indexed ones */
    int direct = 0, indexed = 0;
    for (int64_t i = -50; i < PK_SPACE + 50; i++) {
        direct += pk_model_key(i) == i;
        indexed += pk_model_key(i) >= 0 && pk_model_key(i) != i;
    }
    fprintf(stderr, "direct %d indexed %d\n", direct, indexed);
    CHECK(direct > 0 && indexed > 0);
    OK(strata_db_close(db, E));
}

/* While no object's key differs from its primary key (the index is empty), a read of the primary
 * key answers from the key; the first object that differs, still pending in the write
 * transaction or committed, must be read from its stored value. */
static void a_direct_primary_key_reads_back_its_stored_value(void) {
    strata_db_t *db = open_db(tl_path("pkread.db"));
    CHECK(db);
    strata_txn_t *w, *r;
    strata_table_t *t;
    strata_col_t id;
    strata_key_t k;
    strata_value got;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Item", &t, E));
    OK(strata_table_add_property(t, "id", STRATA_TYPE_INT, STRATA_PROP_PRIMARY_KEY, NULL, &id, E));
    for (int64_t i = 10; i < 20; i++) OK(strata_obj_create_pk(t, (strata_value[]){vint(i)}, &k, E));
    OK(strata_obj_get(t, 15, id, &got, E));
    CHECK(got.type == STRATA_TYPE_INT && got.u.i == 15);
    CHECK(strata_obj_get(t, 9, id, &got, E) == STRATA_ERR_NOT_FOUND && strstr(tl_err.message, "9"));
    OK(strata_obj_find_pk(t, (strata_value[]){vint(15)}, &k, E));
    CHECK(k == 15);
    EXPECT_CODE(strata_obj_find_pk(t, (strata_value[]){vint(9)}, &k, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_find_pk(t, (strata_value[]){vint(20)}, &k, E), STRATA_ERR_NOT_FOUND);
    OK(strata_obj_set(t, 12, id, (strata_value[]){vint(112)}, E)); /* pending in the index */
    OK(strata_obj_get(t, 12, id, &got, E));
    CHECK(got.u.i == 112);
    EXPECT_CODE(strata_obj_find_pk(t, (strata_value[]){vint(12)}, &k, E), STRATA_ERR_NOT_FOUND);
    OK(strata_obj_find_pk(t, (strata_value[]){vint(112)}, &k, E));
    CHECK(k == 12);
    OK(strata_obj_create_pk(t, (strata_value[]){vint(5)}, &k, E)); /* below the next key */
    CHECK(k == 20);
    OK(strata_obj_get(t, 20, id, &got, E));
    CHECK(got.u.i == 5);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Item", &t, E));
    OK(strata_obj_get(t, 12, id, &got, E));
    CHECK(got.u.i == 112);
    OK(strata_obj_get(t, 20, id, &got, E));
    CHECK(got.u.i == 5);
    OK(strata_obj_get(t, 13, id, &got, E));
    CHECK(got.u.i == 13);
    EXPECT_CODE(strata_obj_find_pk(t, (strata_value[]){vint(12)}, &k, E), STRATA_ERR_NOT_FOUND);
    OK(strata_obj_find_pk(t, (strata_value[]){vint(5)}, &k, E));
    CHECK(k == 20);
    strata_txn_free(r);
    /* both set back: the index is empty again and the key answers */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Item", &t, E));
    OK(strata_obj_set(t, 12, id, (strata_value[]){vint(12)}, E));
    OK(strata_obj_delete(t, 20, E));
    OK(strata_obj_get(t, 12, id, &got, E));
    CHECK(got.u.i == 12);
    CHECK(strata_obj_get(t, 20, id, &got, E) == STRATA_ERR_NOT_FOUND);
    OK(strata_obj_find_pk(t, (strata_value[]){vint(12)}, &k, E));
    CHECK(k == 12);
    EXPECT_CODE(strata_obj_find_pk(t, (strata_value[]){vint(5)}, &k, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_create_pk(t, (strata_value[]){vint(13)}, &k, E), STRATA_ERR_EXISTS);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E)); /* the index tree is there, empty */
    OK(strata_table_open(r, "Item", &t, E));
    OK(strata_obj_find_pk(t, (strata_value[]){vint(12)}, &k, E));
    CHECK(k == 12);
    OK(strata_obj_get(t, 12, id, &got, E));
    CHECK(got.u.i == 12);
    EXPECT_CODE(strata_obj_find_pk(t, (strata_value[]){vint(5)}, &k, E), STRATA_ERR_NOT_FOUND);
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* strata_index_find walks a value's entries in the leaf it finds them in, and starts over with a
 * cursor when they run on into the next leaves: a value held by a third of the objects (entries
 * over many leaves), unique values, an absent one, and long strings whose index entries are the
 * same 200-byte prefix (the stored values decide) must all come back complete and in key order. */
static void index_find_returns_every_holder_across_leaves(void) {
    strata_db_t *db = open_db(tl_path("findmany.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t tag;
    static char longs[2][301];
    for (int j = 0; j < 2; j++) {
        memset(longs[j], 'x', 300);
        longs[j][299] = (char)('A' + j);
        longs[j][300] = 0;
    }
    OK(begin_indexed_strings(db, &w, &t, &tag));
    for (int64_t i = 0; i < 3000; i++) {
        strata_key_t k;
        char buf[32];
        snprintf(buf, sizeof buf, "u%05lld", (long long)i);
        strata_value v = i % 3 == 0 ? vstr("common") : i % 3 == 1 ? vstr(buf) : vstr(longs[(i / 3) % 2]);
        OK(strata_obj_create(t, &k, E));
        CHECK(k == i);
        OK(strata_obj_set(t, k, tag, &v, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    for (int pass = 0; pass < 2; pass++) { /* a write transaction, then a read one */
        strata_txn_t *x;
        OK(strata_txn_begin(db, pass ? STRATA_TXN_READ : STRATA_TXN_WRITE, &x, E));
        OK(strata_table_open(x, "T", &t, E));
        static strata_key_t keys[1200];
        size_t n;
        OK(strata_index_find(t, tag, (strata_value[]){vstr("common")}, keys, 1200, &n, E));
        CHECK(n == 1000);
        for (size_t i = 0; i < n && i < 1000; i++) CHECK(keys[i] == (strata_key_t)i * 3);
        OK(strata_index_find(t, tag, (strata_value[]){vstr("common")}, keys, 10, &n, E));
        CHECK(n == 1000 && keys[9] == 27);
        for (int j = 0; j < 2; j++) {
            OK(strata_index_find(t, tag, (strata_value[]){vstr(longs[j])}, keys, 1200, &n, E));
            CHECK(n == 500);
            for (size_t i = 0; i < n && i < 500; i++)
                CHECK(keys[i] == (strata_key_t)(6 * i + 2 + 3 * (size_t)j));
        }
        for (int64_t i = 1; i < 3000; i += 3 * 37) {
            char buf[32];
            snprintf(buf, sizeof buf, "u%05lld", (long long)i);
            OK(strata_index_find(t, tag, (strata_value[]){vstr(buf)}, keys, 2, &n, E));
            CHECK(n == 1 && keys[0] == i);
        }
        OK(strata_index_find(t, tag, (strata_value[]){vstr("u99999")}, keys, 2, &n, E));
        CHECK(n == 0);
        OK(strata_index_find(t, tag, (strata_value[]){vstr("zzz")}, keys, 2, &n, E));
        CHECK(n == 0);
        strata_txn_free(x);
    }
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* A read transaction that searches an index often finds its leaves through a directory of them
 * (leafdir.c) instead of the branches: a three-level index of 100-byte strings (each value held
 * by three objects, so some run over a leaf's end) must answer exactly as the descent does, for
 * every value, for keys between two values, before the first and after the last, in a write
 * transaction (which never builds one) and in read transactions, before and after a refresh. */
#define LD_VALUES 12000
static void ld_value(char *buf, int64_t v) {
    snprintf(buf, 101, "k%08lld", (long long)v);
    memset(buf + 9, 'p', 91);
    buf[100] = 0;
}

static void ld_check(strata_table_t *t, strata_col_t s) {
    char buf[128];
    strata_key_t keys[4];
    size_t n;
    for (int pass = 0; pass < 2; pass++) /* the first pass builds the directory on the way */
        for (int64_t i = 0; i < LD_VALUES; i++) {
            int64_t v = (i * 7919) % LD_VALUES;
            ld_value(buf, v);
            OK(strata_index_find(t, s, (strata_value[]){vstr(buf)}, keys, 4, &n, E));
            CHECK(n == 3 && keys[0] == v && keys[1] == v + LD_VALUES && keys[2] == v + 2 * LD_VALUES);
            buf[99] = 'q'; /* after v's entries, before v + 1's */
            OK(strata_index_find(t, s, (strata_value[]){vstr(buf)}, keys, 4, &n, E));
            CHECK(n == 0);
            buf[9] = 0; /* a prefix of v: before its entries */
            OK(strata_index_find(t, s, (strata_value[]){vstr(buf)}, keys, 4, &n, E));
            CHECK(n == 0);
        }
    const char *outside[] = {"", "a", "k", "k99999999", "l", "\xc3\xbf"};
    for (size_t i = 0; i < sizeof outside / sizeof *outside; i++) {
        OK(strata_index_find(t, s, (strata_value[]){vstr(outside[i])}, keys, 4, &n, E));
        CHECK(n == 0);
    }
}

static void index_searches_through_the_leaf_directory_agree_with_the_descent(void) {
    strata_db_t *db = open_db(tl_path("leafdir.db"));
    CHECK(db);
    strata_txn_t *w, *r;
    strata_table_t *t;
    strata_col_t s;
    char buf[128];
    OK(begin_indexed_strings(db, &w, &t, &s));
    for (int64_t i = 0; i < 3 * LD_VALUES; i++) {
        strata_key_t k;
        ld_value(buf, i % LD_VALUES);
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, s, (strata_value[]){vstr(buf)}, E));
    }
    ld_check(t, s);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "T", &t, E));
    ld_check(t, s);
    OK(strata_txn_refresh(r, E));
    OK(strata_table_open(r, "T", &t, E));
    ld_check(t, s);
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Index changes are applied at commit in key order: whole leaves emptied, leaves merged,
 * removals mixed with insertions of new values between them, then everything; after each commit
 * every remaining value finds exactly its holders and verify passes. */
static void index_removals_in_runs_keep_the_index_exact(void) {
    strata_db_t *db = open_db(tl_path("idxdel.db"));
    CHECK(db);
    enum { N = 20000 };
    static int64_t model[N]; /* object -> its value, -1 = deleted */
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t s;
    char buf[64];
    OK(begin_indexed_strings(db, &w, &t, &s));
    for (int64_t i = 0; i < N; i++) {
        strata_key_t k;
        model[i] = i / 2; /* two holders a value */
        snprintf(buf, sizeof buf, "value %06lld", (long long)model[i]);
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, s, (strata_value[]){vstr(buf)}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    for (int round = 0; round < 4; round++) {
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "T", &t, E));
        for (int64_t i = 0; i < N; i++) {
            if (model[i] < 0) continue;
            bool gone = round == 0   ? (i >= 3000 && i < 9000) || i % 5 == 1 /* whole leaves, spread */
                        : round == 1 ? i % 3 == 0
                        : round == 2 ? false
                                     : true; /* everything */
            if (gone) {
                OK(strata_obj_delete(t, i, E));
                model[i] = -1;
            } else if (round == 2 && i % 4 == 0) { /* new values that fall between old ones */
                model[i] = model[i] + N;
                snprintf(buf, sizeof buf, "value %06lld", (long long)(model[i] - N));
                strcat(buf, "x");
                OK(strata_obj_set(t, i, s, (strata_value[]){vstr(buf)}, E));
            }
        }
        strata_txn_t *r = commit_verify_read(db, w, &t);
        CHECK(r);
        uint64_t count;
        OK(strata_table_size(t, &count, E));
        uint64_t live = 0;
        for (int64_t i = 0; i < N; i++) {
            if (model[i] < 0) continue;
            live++;
            int64_t v = model[i] >= N ? model[i] - N : model[i];
            snprintf(buf, sizeof buf, "value %06lld%s", (long long)v, model[i] >= N ? "x" : "");
            strata_key_t keys[4];
            size_t n;
            OK(strata_index_find(t, s, (strata_value[]){vstr(buf)}, keys, 4, &n, E));
            size_t want = 0;
            for (int64_t j = (i / 2) * 2; j < (i / 2) * 2 + 2; j++) want += model[j] == model[i];
            CHECK(n == want && (keys[0] == i || (n == 2 && keys[1] == i)));
        }
        CHECK(count == live);
        strata_txn_free(r);
    }
    OK(strata_db_close(db, E));
}

/* Changes of an indexed value that undo each other inside one write (an object created with the
 * default and given its value, A -> B -> A, created and deleted): the queue drops an insert the
 * next record removes, and the index must answer as the objects say, before and after commit. */
static const char *const undo_values[] = {"", "a", "b", "c", "ab", "ba"};
enum { UNDO_VALUES = 6, UNDO_MAX = 3000 };

static void undo_check(strata_table_t *t, strata_col_t s, const int *model, int n) {
    for (int v = 0; v < UNDO_VALUES; v++) {
        static strata_key_t keys[UNDO_MAX];
        size_t got;
        OK(strata_index_find(t, s, (strata_value[]){vstr(undo_values[v])}, keys, UNDO_MAX, &got, E));
        size_t want = 0;
        for (int i = 0; i < n; i++) want += model[i] == v;
        if (got != want) fprintf(stderr, "  value '%s': index %zu, objects %zu\n", undo_values[v], got, want);
        CHECK(got == want);
        for (size_t k = 0; k < got; k++) CHECK(keys[k] < n && model[keys[k]] == v);
    }
}

static void index_changes_that_undo_each_other_in_one_write(void) {
    tl_seed(0xC0FFEE);
    strata_db_t *db = open_db(tl_path("undo.db"));
    CHECK(db);
    static int model[UNDO_MAX]; /* object -> index into undo_values, -1 = deleted */
    int n = 0;
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t s;
    OK(begin_indexed_strings(db, &w, &t, &s));
    for (; n < 200; n++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        CHECK(k == n);
        model[n] = n % UNDO_VALUES;
        if (model[n]) OK(strata_obj_set(t, k, s, (strata_value[]){vstr(undo_values[model[n]])}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    for (int round = 0; round < 3; round++) {
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "T", &t, E));
        for (int step = 0; step < 2000 && n < UNDO_MAX; step++) {
            int op = (int)(rnd() % 10);
            if (op < 2) { /* a new object: the default, maybe a value, maybe back to "" */
                strata_key_t k;
                OK(strata_obj_create(t, &k, E));
                CHECK(k == n);
                model[n] = 0;
                for (int sets = (int)(rnd() % 3); sets > 0; sets--) {
                    model[n] = (int)(rnd() % UNDO_VALUES);
                    OK(strata_obj_set(t, k, s, (strata_value[]){vstr(undo_values[model[n]])}, E));
                }
                n++;
                continue;
            }
            int i = (int)(rnd() % (uint64_t)n);
            if (model[i] < 0) continue;
            if (op == 2) {
                OK(strata_obj_delete(t, i, E));
                model[i] = -1;
            } else { /* one value, or there and back (A -> B -> A) */
                int was = model[i], to = (int)(rnd() % UNDO_VALUES);
                OK(strata_obj_set(t, i, s, (strata_value[]){vstr(undo_values[to])}, E));
                model[i] = to;
                if (op >= 7) {
                    OK(strata_obj_set(t, i, s, (strata_value[]){vstr(undo_values[was])}, E));
                    model[i] = was;
                }
            }
        }
        undo_check(t, s, model, n); /* in the write, queued changes applied for the lookups */
        if (round == 2) { /* the last round rolled back (the test ends there) */
            strata_txn_abort(w);
            strata_txn_free(w);
            OK(strata_db_close(db, E));
            break;
        }
        strata_txn_t *r = commit_verify_read(db, w, &t);
        CHECK(r);
        undo_check(t, s, model, n);
        strata_txn_free(r);
    }
}

/* Strings that index in an order unrelated to the objects' order (as names do). */
static void spread_name(int64_t i, char *buf, size_t cap) {
    snprintf(buf, cap, "n%08llu-%lld", (unsigned long long)((uint64_t)i * 2654435761u % 100000007u),
             (long long)i);
}

/* `from`..`to` objects with spread names, in one transaction (the table made if missing). */
static int add_spread(strata_db_t *db, int64_t from, int64_t to) {
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t s;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E);
    if (rc == STRATA_OK && strata_table_open(w, "T", &t, NULL) != STRATA_OK) {
        strata_txn_free(w);
        rc = begin_indexed_strings(db, &w, &t, &s);
    }
    if (rc == STRATA_OK) rc = strata_table_find_property(t, "s", &s, E);
    for (int64_t i = from; rc == STRATA_OK && i < to; i++) {
        char buf[48];
        strata_key_t k;
        spread_name(i, buf, sizeof buf);
        rc = strata_obj_create(t, &k, E);
        if (rc == STRATA_OK) rc = strata_obj_set(t, k, s, (strata_value[]){vstr(buf)}, E);
    }
    if (rc == STRATA_OK) rc = strata_txn_commit(w, E);
    strata_txn_free(w);
    return rc;
}

/* Inserts that land in full leaves split each in half; a batch of a quarter as many changes as
 * the index holds or more writes it anew instead (index.c), so an index grown by a big batch
 * is as full as one written at once: the same bytes within 3%, where splitting left it a
 * third larger. Every value is found afterwards, and the file verifies. */
static void an_index_grown_in_bulk_stays_full(void) {
    enum { N = 40000 };
    strata_db_t *once = open_db(tl_path("ix_once.db")), *twice = open_db(tl_path("ix_twice.db"));
    CHECK(once && twice);
    OK(add_spread(once, 0, N));
    OK(add_spread(twice, 0, N * 2 / 3));
    OK(add_spread(twice, N * 2 / 3, N));
    strata_space a = {.size = sizeof a}, b = {.size = sizeof b};
    OK(strata_db_space_get(once, &a, E));
    OK(strata_db_space_get(twice, &b, E));
    printf("  %d objects: %llu bytes in use written at once, %llu in two transactions\n", N,
           (unsigned long long)a.used_bytes, (unsigned long long)b.used_bytes);
    CHECK(b.used_bytes <= a.used_bytes + a.used_bytes * 3 / 100);
    OK(strata_db_verify(twice, E));
    strata_txn_t *r;
    strata_table_t *t;
    strata_col_t s;
    OK(strata_txn_begin(twice, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "T", &t, E));
    OK(strata_table_find_property(t, "s", &s, E));
    for (int64_t i = 0; i < N; i++) {
        char buf[48];
        strata_key_t k = -1;
        size_t n = 0;
        spread_name(i, buf, sizeof buf);
        OK(strata_index_find(t, s, (strata_value[]){vstr(buf)}, &k, 1, &n, E));
        CHECK(n == 1 && k == i);
    }
    strata_txn_free(r);
    OK(strata_db_close(once, E));
    OK(strata_db_close(twice, E));
}

/* The file grows a chunk (an eighth of it) at a time; a transaction that grew the data by a
 * chunk or more gives the unused end back at commit, keeping the full-disk reserve (a
 * sixteenth of the pages, at most 1,024): so a file written in bulk is not a tenth larger
 * than its data. */
static void a_bulk_commit_gives_the_files_unused_end_back(void) {
    strata_db_t *db = open_db(tl_path("trim.db"));
    CHECK(db);
    OK(add_spread(db, 0, 500000));
    strata_space sp = {.size = sizeof sp};
    OK(strata_db_space_get(db, &sp, E));
    uint64_t reserve = sp.used_bytes / 16 > 1024 * 4096 ? 1024 * 4096 : sp.used_bytes / 16;
    printf("  file %llu bytes, in use %llu, free %llu\n", (unsigned long long)sp.file_bytes,
           (unsigned long long)sp.used_bytes, (unsigned long long)sp.free_bytes);
    CHECK(sp.file_bytes <= sp.used_bytes + sp.free_bytes + reserve + (2u << 20));
    OK(add_spread(db, 500000, 500010)); /* small commits after it grow it again, once */
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* The file's size on disk (st_size). */
static uint64_t file_size(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* Commits that grow the file a little each take a chunk (an eighth of it) at a time, and keep
 * it: they would grow it again. The last handle closing gives the end back beyond the pages in
 * use and the reserve (whole MiB); a handle closing while another has the file open leaves it
 * (the other's map may reach there). Before session 37 a closed file kept up to an eighth of
 * itself unused. */
static void the_last_handle_closing_gives_the_files_end_back(void) {
    const char *path = tl_path("close-trim.db");
    strata_db_t *db = open_db(path), *other = open_db(path);
    CHECK(db && other);
    /* batches (50,000 objects at least) until the end past the pages and the reserve (whole
     * MiB) is a MiB or more */
    strata_space sp = {.size = sizeof sp};
    uint64_t open_size = 0, keep = 0, mib = 1u << 20;
    int64_t n = 0;
    while (n < 1000000 && (n < 50000 || open_size < keep + mib)) {
        OK(add_spread(db, n, n + 5000));
        n += 5000;
        OK(strata_db_space_get(db, &sp, E));
        uint64_t pages = sp.used_bytes + sp.free_bytes; /* the version's page count, in bytes */
        uint64_t reserve = pages / 16 > 1024 * 4096 ? 1024 * 4096 : pages / 16;
        keep = (pages + reserve + mib - 1) / mib * mib;
        open_size = file_size(path);
    }
    printf("  %lld objects: in use %llu bytes, free %llu; file %llu open\n", (long long)n,
           (unsigned long long)sp.used_bytes, (unsigned long long)sp.free_bytes,
           (unsigned long long)open_size);
    CHECK(open_size >= keep + mib);
    OK(strata_db_close(db, E));
    CHECK(file_size(path) == open_size); /* `other` still has it open */
    OK(strata_db_close(other, E));
    printf("  file %llu after the last close\n", (unsigned long long)file_size(path));
    CHECK(file_size(path) <= keep && file_size(path) >= sp.used_bytes);
    db = open_db(path);
    CHECK(db);
    OK(strata_db_verify(db, E));
    OK(add_spread(db, n, n + 100));
    OK(strata_db_close(db, E));
}

/* What reaches the disk: free-list leaves among the file's pages written (page kind 4 at byte
 * 24) and bytes of commit log. */
typedef struct disk_writes {
    uint64_t freelist_leaves, log_bytes;
} disk_writes;

static ssize_t tally_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off) {
    disk_writes *w = ctx;
    if (tl_fd_is_commit_log(fd)) w->log_bytes += len;
    else
        for (size_t at = off % 4096 ? len : 0; at + 4096 <= len; at += 4096)
            w->freelist_leaves +=
                off + (off_t)at >= 2 * 4096 && ((const uint8_t *)buf)[at + 24] == 4;
    return strata_io_default()->pwrite(NULL, fd, buf, len, off);
}

static void random_name(char *name, size_t *len) {
    *len = 8 + rnd() % 9;
    for (size_t i = 0; i < *len; i++) name[i] = (char)('a' + rnd() % 26);
}

/* `make bench`'s durable commit: one object with a random indexed name after a bulk insert and
 * an update of a tenth of the objects at random. Its cold copy (the name index leaf, which no
 * commit rewrote lately) takes a lone free page; taking the first one anywhere rewrote another old
 * leaf of the free list in most commits, and its neighbour when not full: 2.9 leaves and 17.4 KB
 * of commit log a commit here (2.4 and 14.3 KB since the leaf the last cold copy took from
 * serves the next, and a not-full leaf is no longer packed with a neighbour that was; 8.8 KB
 * since moved bytes are logged as copies; 4.5 KB since an index written in key order leaves
 * room in its leaves, so that the name index no longer splits a leaf for most new names). */
static void small_commits_after_a_random_update_rewrite_few_free_list_leaves(void) {
    disk_writes w = {0};
    strata_io_methods io = {sizeof io, &w, tally_pwrite, tl_passing_sync, tl_passing_grow};
    strata_options o;
    strata_options_init(&o);
    tk_options(&o);
    o.io = &io;
    strata_db_t *db;
    OK(strata_db_open(tl_path("coldleaf.db"), &o, &db, E));
    tl_seed(7);
    enum { N = 200000, COMMITS = 400 };
    strata_txn_t *txn;
    strata_table_t *t;
    strata_col_t cid, cname, cscore;
    char name[20];
    size_t len;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
    OK(strata_table_create(txn, "Person", &t, E));
    OK(strata_table_add_property(t, "id", STRATA_TYPE_INT, STRATA_PROP_PRIMARY_KEY, NULL, &cid, E));
    OK(strata_table_add_property(t, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &cname,
                                 E));
    OK(strata_table_add_property(t, "score", STRATA_TYPE_DOUBLE, 0, NULL, &cscore, E));
    for (int64_t id = 0; id < N + COMMITS; id++) {
        if (id == N) { /* the bulk insert and the update, then one commit per object */
            OK(strata_txn_commit(txn, E));
            strata_txn_free(txn);
            OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
            OK(strata_table_open(txn, "Person", &t, E));
            for (int i = 0; i < N / 10; i++) {
                strata_key_t k;
                OK(strata_obj_find_pk(t, (strata_value[]){vint((int64_t)(rnd() % N))}, &k, E));
                OK(strata_obj_set(t, k, cscore, (strata_value[]){vdouble(i)}, E));
            }
            OK(strata_txn_commit(txn, E));
            strata_txn_free(txn);
            w = (disk_writes){0};
        }
        if (id >= N) {
            OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
            OK(strata_table_open(txn, "Person", &t, E));
        }
        strata_key_t k;
        OK(strata_obj_create_pk(t, (strata_value[]){vint(id)}, &k, E));
        random_name(name, &len);
        strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {name, len}};
        OK(strata_obj_set(t, k, cname, &v, E));
        if (id >= N) {
            OK(strata_txn_commit(txn, E));
            strata_txn_free(txn);
        }
    }
    printf("  %.2f free-list leaves, %llu bytes of commit log a commit\n",
           (double)w.freelist_leaves / COMMITS, (unsigned long long)(w.log_bytes / COMMITS));
    /* (An encrypted file's pages go out sealed: their kind is not readable here.) */
    CHECK(tk_encrypted() || w.freelist_leaves * 100 <= 265 * COMMITS); /* 2.86 before, 2.44 now */
    /* 17,356 before, 14,325 with the leaves, 8,785 with copies, 4,464 with room in index leaves */
    CHECK(w.log_bytes <= 6000 * COMMITS);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ bad input */

static void bad_input_gets_clear_errors(void) {
    strata_db_t *db = open_db(tl_path("bad.db"));
    CHECK(db);
    strata_txn_t *w, *r;
    classic c;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(classic_schema(w, &c));
    strata_key_t p, dog, comp;
    OK(strata_obj_create(c.person, &p, E));
    OK(strata_obj_create(c.dog, &dog, E));
    OK(strata_obj_create(c.company, &comp, E));
    EXPECT_CODE(strata_obj_set(c.person, p, c.page, (strata_value[]){vstr("x")}, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "Person.age") && strstr(tl_err.message, "string"));
    EXPECT_CODE(strata_obj_set(c.person, p, c.page, (strata_value[]){vnull()}, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "not nullable"));
    EXPECT_CODE(strata_obj_set(c.person, p, 99, (strata_value[]){vint(1)}, E), STRATA_ERR_NOT_FOUND);
    strata_col_t col;
    EXPECT_CODE(strata_table_find_property(c.person, "height", &col, E), STRATA_ERR_NOT_FOUND);
    CHECK(strstr(tl_err.message, "Person") && strstr(tl_err.message, "height"));
    strata_table_t *t;
    EXPECT_CODE(strata_table_open(w, "Cat", &t, E), STRATA_ERR_NOT_FOUND);
    CHECK(strstr(tl_err.message, "Cat"));
    /* a link to an object of the wrong table (a key that does not exist in the target) */
    EXPECT_CODE(strata_obj_set(c.person, p, c.pcompany, (strata_value[]){vlink(comp + 100)}, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_list_insert(c.person, p, c.pdogs, 0, (strata_value[]){vint(dog)}, E), STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_list_insert(c.person, p, c.pdogs, 5, (strata_value[]){vlink(dog)}, E), STRATA_ERR_NOT_FOUND);
    OK(strata_obj_delete(c.dog, dog, E));
    EXPECT_CODE(strata_list_insert(c.person, p, c.pdogs, 0, (strata_value[]){vlink(dog)}, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_get(c.person, p + 1000, c.page, (strata_value[]){vint(0)}, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_set(c.person, p, c.pname, &(strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {"\xff\xfe", 2}}, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_obj_set(NULL, p, c.page, (strata_value[]){vint(1)}, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_obj_set(c.person, p, c.page, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_table_add_property(c.person, "age", STRATA_TYPE_INT, 0, NULL, &col, E), STRATA_ERR_EXISTS);
    EXPECT_CODE(strata_table_add_property(c.person, "x", STRATA_TYPE_LINK, 0, "Nope", &col, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_table_add_property(c.person, "y", STRATA_TYPE_DOUBLE, STRATA_PROP_INDEXED, NULL, &col, E), STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_table_drop(w, "Dog", E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "Person.dogs"));
    EXPECT_CODE(strata_tree_drop(w, "$schema", E), STRATA_ERR_INVALID_ARGUMENT);
    /* the valid changes still commit */
    OK(strata_obj_set(c.person, p, c.page, (strata_value[]){vint(30)}, E));
    OK(strata_txn_commit(w, E));
    /* a call on a committed transaction's table */
    EXPECT_CODE(strata_obj_set(c.person, p, c.page, (strata_value[]){vint(31)}, E), STRATA_ERR_TXN_STATE);
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Person", &t, E));
    EXPECT_CODE(strata_obj_set(t, p, c.page, (strata_value[]){vint(31)}, E), STRATA_ERR_READ_ONLY);
    EXPECT_CODE(strata_table_create(r, "New", &t, E), STRATA_ERR_READ_ONLY);
    strata_value v;
    OK(strata_obj_get(t, p, c.page, &v, E));
    CHECK(v.u.i == 30);
    OK(strata_txn_refresh(r, E));
    EXPECT_CODE(strata_obj_get(t, p, c.page, &v, E), STRATA_ERR_TXN_STATE);
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ big values */

static void strings_up_to_16_mib_round_trip(void) {
    const char *path = tl_path("big.db");
    strata_db_t *db = open_db(path);
    CHECK(db);
    size_t sizes[] = {0, 999, 1000, 1001, 5000, 70000, STRATA_MAX_BYTES};
    char *buf = malloc(STRATA_MAX_BYTES);
    CHECK(buf);
    for (size_t i = 0; i < STRATA_MAX_BYTES; i++) buf[i] = (char)('a' + i % 26);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t s, b;
    strata_key_t keys[7];
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Blob", &t, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, 0, NULL, &s, E));
    OK(strata_table_add_property(t, "b", STRATA_TYPE_BINARY, STRATA_PROP_NULLABLE, NULL, &b, E));
    for (int i = 0; i < 7; i++) {
        OK(strata_obj_create(t, &keys[i], E));
        OK(strata_obj_set(t, keys[i], s, &(strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {buf, sizes[i]}}, E));
    }
    EXPECT_CODE(strata_obj_set(t, keys[0], b, &(strata_value){.type = STRATA_TYPE_BINARY, .u.bytes = {buf, STRATA_MAX_BYTES + 1}}, E), STRATA_ERR_TOO_LARGE);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    /* replace the big ones (their runs are freed) and read back after reopen */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Blob", &t, E));
    OK(strata_obj_set(t, keys[5], s, (strata_value[]){vstr("small now")}, E));
    OK(strata_obj_delete(t, keys[4], E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    db = open_db(path);
    CHECK(db);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Blob", &t, E));
    strata_value v;
    for (int i = 0; i < 7; i++) {
        if (i == 4) continue;
        OK(strata_obj_get(t, keys[i], s, &v, E));
        size_t want = i == 5 ? 9 : sizes[i];
        CHECK(v.type == STRATA_TYPE_STRING && v.u.bytes.len == want);
        if (i != 5) CHECK(memcmp(v.u.bytes.data, buf, want) == 0);
    }
    strata_txn_free(r);
    free(buf);
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ schema changes */

static void schema_changes_keep_data_consistent(void) {
    const char *path = tl_path("schema.db");
    strata_db_t *db = open_db(path);
    CHECK(db);
    strata_txn_t *w;
    classic c;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(classic_schema(w, &c));
    strata_key_t dogs[300], p;
    OK(strata_obj_create(c.person, &p, E));
    for (int i = 0; i < 300; i++) {
        char name[32];
        snprintf(name, sizeof name, "dog %d", i);
        OK(strata_obj_create(c.dog, &dogs[i], E));
        OK(strata_obj_set(c.dog, dogs[i], c.dname, (strata_value[]){vstr(name)}, E));
        if (i % 3 == 0) OK(strata_list_insert(c.person, p, c.pdogs, 0, (strata_value[]){vlink(dogs[i])}, E));
    }
    OK(strata_schema_set_version(w, 2, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));

    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Dog", &c.dog, E));
    OK(strata_table_open(w, "Person", &c.person, E));
    strata_col_t age;
    OK(strata_table_add_property(c.dog, "age", STRATA_TYPE_INT, STRATA_PROP_INDEXED, NULL, &age, E));
    strata_value v;
    OK(strata_obj_get(c.dog, dogs[7], age, &v, E));
    CHECK(v.type == STRATA_TYPE_INT && v.u.i == 0);
    strata_key_t found[400];
    size_t n;
    OK(strata_index_find(c.dog, age, (strata_value[]){vint(0)}, found, 400, &n, E));
    CHECK(n == 300);
    OK(strata_obj_set(c.dog, dogs[7], age, (strata_value[]){vint(3)}, E));
    OK(strata_table_rename_property(c.dog, c.dname, "title", E));
    strata_col_t col;
    OK(strata_table_find_property(c.dog, "title", &col, E));
    CHECK(col == c.dname);
    OK(strata_table_set_indexed(c.dog, c.dname, true, E));
    OK(strata_index_find(c.dog, c.dname, (strata_value[]){vstr("dog 42")}, found, 400, &n, E));
    CHECK(n == 1 && found[0] == dogs[42]);
    OK(strata_table_remove_property(c.dog, c.dcolor, E));
    /* removing the list property drops its backlinks */
    OK(strata_table_remove_property(c.person, c.pdogs, E));
    OK(strata_table_drop(w, "Dog", E));
    EXPECT_CODE(strata_obj_get(c.dog, dogs[7], age, &v, E), STRATA_ERR_TXN_STATE);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_txn_begin(db, STRATA_TXN_READ, &w, E));
    uint64_t ver;
    size_t ntables;
    OK(strata_schema_version(w, &ver, E));
    OK(strata_table_count_all(w, &ntables, E));
    CHECK(ver == 2 && ntables == 2);
    strata_txn_free(w);
    OK(strata_db_close(db, E));
}


/* ------------------------------------------------------------------ the remaining calls */

static void lists_of_values_mixed_and_listing_calls_work(void) {
    strata_db_t *db = open_db(tl_path("lists.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t tags, nums, any, code;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Item", &t, E));
    OK(strata_table_add_property(t, "tags", STRATA_TYPE_STRING, STRATA_PROP_LIST | STRATA_PROP_NULLABLE, NULL, &tags, E));
    OK(strata_table_add_property(t, "nums", STRATA_TYPE_INT, STRATA_PROP_LIST, NULL, &nums, E));
    OK(strata_table_add_property(t, "any", STRATA_TYPE_MIXED, STRATA_PROP_NULLABLE, NULL, &any, E));
    OK(strata_table_add_property(t, "code", STRATA_TYPE_INT, STRATA_PROP_INDEXED, NULL, &code, E));
    strata_key_t k, k2;
    OK(strata_obj_create(t, &k, E));
    OK(strata_obj_create(t, &k2, E));
    OK(strata_obj_exists(t, k, E));
    EXPECT_CODE(strata_obj_exists(t, k + 10, E), STRATA_ERR_NOT_FOUND);
    /* a list of nullable strings: insert, set, move, remove, clear */
    OK(strata_list_insert(t, k, tags, 0, (strata_value[]){vstr("b")}, E));
    OK(strata_list_insert(t, k, tags, 0, (strata_value[]){vstr("a")}, E));
    OK(strata_list_insert(t, k, tags, 2, (strata_value[]){vnull()}, E));
    OK(strata_list_set(t, k, tags, 1, (strata_value[]){vstr("β")}, E));
    OK(strata_list_move(t, k, tags, 0, 2, E));
    strata_value v;
    size_t n;
    OK(strata_list_size(t, k, tags, &n, E));
    CHECK(n == 3);
    OK(strata_list_get(t, k, tags, 0, &v, E));
    CHECK(str_is(&v, "β"));
    OK(strata_list_get(t, k, tags, 1, &v, E));
    CHECK(v.type == STRATA_TYPE_NULL);
    OK(strata_list_get(t, k, tags, 2, &v, E));
    CHECK(str_is(&v, "a"));
    EXPECT_CODE(strata_list_insert(t, k, nums, 0, (strata_value[]){vnull()}, E), STRATA_ERR_WRONG_TYPE);
    OK(strata_list_insert(t, k, nums, 0, (strata_value[]){vint(-5)}, E));
    OK(strata_list_remove(t, k, tags, 1, E));
    OK(strata_list_clear(t, k, tags, E));
    OK(strata_list_size(t, k, tags, &n, E));
    CHECK(n == 0);
    EXPECT_CODE(strata_list_get(t, k, tags, 0, &v, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_get(t, k, tags, &v, E), STRATA_ERR_WRONG_TYPE);
    /* mixed holds any type but links */
    strata_value mixed[] = {vint(3), vstr("三"), vdouble(2.5), vbool(false), vnull()};
    for (int i = 0; i < 5; i++) {
        OK(strata_obj_set(t, k, any, &mixed[i], E));
        OK(strata_obj_get(t, k, any, &v, E));
        CHECK(v.type == mixed[i].type);
    }
    OK(strata_obj_set(t, k, any, (strata_value[]){vstr("三")}, E));
    EXPECT_CODE(strata_obj_set(t, k, any, (strata_value[]){vlink(k2)}, E), STRATA_ERR_WRONG_TYPE);
    /* listing calls */
    size_t count;
    const char *name;
    OK(strata_table_count_all(w, &count, E));
    CHECK(count == 1);
    OK(strata_table_name_at(w, 0, &name, E));
    CHECK(strcmp(name, "Item") == 0 && strcmp(strata_table_name(t), "Item") == 0);
    EXPECT_CODE(strata_table_name_at(w, 1, &name, E), STRATA_ERR_NOT_FOUND);
    OK(strata_table_property_count(t, &count, E));
    CHECK(count == 4);
    strata_property_info info;
    OK(strata_table_property_at(t, 0, &info, E));
    CHECK(strcmp(info.name, "tags") == 0 && info.type == STRATA_TYPE_STRING &&
          (info.flags & STRATA_PROP_LIST) && (info.flags & STRATA_PROP_NULLABLE));
    OK(strata_table_property_get(t, code, &info, E));
    CHECK(strcmp(info.name, "code") == 0 && (info.flags & STRATA_PROP_INDEXED));
    /* index off and on again; primary key on and off */
    OK(strata_obj_set(t, k2, code, (strata_value[]){vint(9)}, E));
    OK(strata_table_set_indexed(t, code, false, E));
    EXPECT_CODE(strata_index_find(t, code, (strata_value[]){vint(9)}, &k, 1, &n, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_table_set_primary_key(t, code, E));
    EXPECT_CODE(strata_table_set_indexed(t, code, false, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_key_t found;
    OK(strata_obj_find_pk(t, (strata_value[]){vint(9)}, &found, E));
    CHECK(found == k2);
    OK(strata_table_set_primary_key(t, STRATA_NO_COL, E));
    strata_col_t pk;
    OK(strata_table_primary_key(t, &pk, E));
    CHECK(pk == STRATA_NO_COL);
    /* clear the table */
    OK(strata_table_clear(t, E));
    uint64_t size;
    OK(strata_table_size(t, &size, E));
    CHECK(size == 0);
    strata_key_t next;
    EXPECT_CODE(strata_obj_next(t, -1, &next, E), STRATA_ERR_NOT_FOUND);
    OK(strata_obj_create(t, &next, E));
    CHECK(next == k2 + 1); /* keys are never reused */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}


/* Found by fuzzing: a C caller may put any byte in a bool (a union member); it means true. */
static void a_bool_from_any_nonzero_byte_reads_back_true(void) {
    strata_db_t *db = open_db(tl_path("bool.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t flag;
    strata_key_t k;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Flags", &t, E));
    OK(strata_table_add_property(t, "flag", STRATA_TYPE_BOOL, STRATA_PROP_INDEXED, NULL, &flag, E));
    OK(strata_obj_create(t, &k, E));
    strata_value odd = {.type = STRATA_TYPE_BOOL};
    memset(&odd.u, 0x0F, sizeof odd.u);
    OK(strata_obj_set(t, k, flag, &odd, E));
    strata_value v;
    OK(strata_obj_get(t, k, flag, &v, E));
    CHECK(v.type == STRATA_TYPE_BOOL && v.u.b == true);
    strata_key_t found;
    size_t n;
    OK(strata_index_find(t, flag, (strata_value[]){vbool(true)}, &found, 1, &n, E));
    CHECK(n == 1 && found == k);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* A mixed property may be indexed (format 6): values of every type keep one entry each, keyed by
 * type, through changes and a reopen; lookups find the exact type; queries (which scan a mixed
 * property) and sorts agree with the values. */
static void a_mixed_property_can_be_indexed(void) {
    const char *path = tl_path("mixedix.db");
    strata_db_t *db = open_db(path);
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t any;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Box", &t, E));
    OK(strata_table_add_property(t, "val", STRATA_TYPE_MIXED, STRATA_PROP_NULLABLE | STRATA_PROP_INDEXED, NULL, &any, E));
    strata_property_info info;
    OK(strata_table_property_get(t, any, &info, E));
    CHECK(info.flags & STRATA_PROP_INDEXED);
    float f = -1.5f;
    strata_value vals[] = {vint(5), vdouble(5.0), vstr("five"), vbool(true), vnull(), vdouble(-2.25),
                           {.type = STRATA_TYPE_FLOAT, .u.f = f}, vint(-7), vstr("")};
    enum { N = sizeof vals / sizeof vals[0] };
    strata_key_t keys[N];
    for (int i = 0; i < N; i++) {
        OK(strata_obj_create(t, &keys[i], E));
        OK(strata_obj_set(t, keys[i], any, &vals[i], E));
    }
    OK(strata_obj_set(t, keys[7], any, (strata_value[]){vint(8)}, E)); /* an entry changed */
    OK(strata_obj_delete(t, keys[8], E));                              /* and one removed */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));

    db = open_db(path);
    CHECK(db);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Box", &t, E));
    strata_key_t found[4];
    size_t n;
    OK(strata_index_find(t, any, (strata_value[]){vint(5)}, found, 4, &n, E));
    CHECK(n == 1 && found[0] == keys[0]); /* the int, not the double 5.0 */
    OK(strata_index_find(t, any, (strata_value[]){vdouble(5.0)}, found, 4, &n, E));
    CHECK(n == 1 && found[0] == keys[1]);
    OK(strata_index_find(t, any, (strata_value[]){vstr("five")}, found, 4, &n, E));
    CHECK(n == 1 && found[0] == keys[2]);
    OK(strata_index_find(t, any, (strata_value[]){vint(-7)}, found, 4, &n, E));
    CHECK(n == 0);
    strata_query_t *q;
    uint64_t count;
    OK(strata_query_compile(r, "Box", "val == 5", &q, E));
    OK(strata_query_count(q, r, NULL, 0, &count, E));
    CHECK(count == 2); /* the query compares across numeric types, as mixed comparisons do */
    strata_query_free(q);
    OK(strata_query_compile(r, "Box", "TRUEPREDICATE SORT(val ASC)", &q, E));
    strata_results_t *res;
    OK(strata_query_run(q, r, NULL, 0, &res, E));
    CHECK(strata_results_size(res) == N - 1);
    strata_results_free(res);
    strata_query_free(q);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* Sets are lists of unique elements: insert adds a value once, erase and find by value, a list
 * insert or set that would repeat a value is refused naming it, links keep their backlinks, and
 * queries and verify see them as lists. */
static void sets_hold_each_value_once(void) {
    strata_db_t *db = open_db(tl_path("sets.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t, *tag;
    strata_col_t nums, tags, label;
    strata_key_t k, t1, t2;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Tag", &tag, E));
    OK(strata_table_add_property(tag, "label", STRATA_TYPE_STRING, 0, NULL, &label, E));
    OK(strata_table_create(w, "Post", &t, E));
    OK(strata_table_add_property(t, "nums", STRATA_TYPE_INT, STRATA_PROP_SET, NULL, &nums, E));
    OK(strata_table_add_property(t, "tags", STRATA_TYPE_LINK, STRATA_PROP_SET, "Tag", &tags, E));
    strata_property_info info;
    OK(strata_table_property_get(t, nums, &info, E));
    CHECK((info.flags & STRATA_PROP_SET) && (info.flags & STRATA_PROP_LIST));
    OK(strata_obj_create(t, &k, E));
    OK(strata_obj_create(tag, &t1, E));
    OK(strata_obj_create(tag, &t2, E));
    bool did;
    for (int64_t v = 1; v <= 3; v++) {
        OK(strata_set_insert(t, k, nums, (strata_value[]){vint(v)}, &did, E));
        CHECK(did);
    }
    OK(strata_set_insert(t, k, nums, (strata_value[]){vint(2)}, &did, E));
    CHECK(!did);
    size_t n, at;
    OK(strata_list_size(t, k, nums, &n, E));
    CHECK(n == 3);
    EXPECT_CODE(strata_list_insert(t, k, nums, 0, (strata_value[]){vint(3)}, E), STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "Post.nums") && strstr(tl_err.message, "3"));
    EXPECT_CODE(strata_list_set(t, k, nums, 0, (strata_value[]){vint(2)}, E), STRATA_ERR_EXISTS);
    OK(strata_list_set(t, k, nums, 0, (strata_value[]){vint(1)}, E)); /* the same element again */
    OK(strata_set_find(t, k, nums, (strata_value[]){vint(3)}, &at, E));
    CHECK(at == 2);
    EXPECT_CODE(strata_set_find(t, k, nums, (strata_value[]){vint(9)}, &at, E), STRATA_ERR_NOT_FOUND);
    OK(strata_set_erase(t, k, nums, (strata_value[]){vint(2)}, &did, E));
    CHECK(did);
    OK(strata_set_erase(t, k, nums, (strata_value[]){vint(2)}, &did, E));
    CHECK(!did);
    EXPECT_CODE(strata_set_insert(t, k, 999, (strata_value[]){vint(1)}, &did, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_set_insert(tag, t1, label, (strata_value[]){vstr("x")}, &did, E), STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_set_insert(t, k + 100, nums, (strata_value[]){vint(1)}, &did, E), STRATA_ERR_NOT_FOUND);
    strata_value l1 = {.type = STRATA_TYPE_LINK, .u.link = t1}, l2 = {.type = STRATA_TYPE_LINK, .u.link = t2};
    OK(strata_set_insert(t, k, tags, &l1, &did, E));
    OK(strata_set_insert(t, k, tags, &l1, &did, E));
    CHECK(!did);
    OK(strata_set_insert(t, k, tags, &l2, &did, E));
    strata_key_t owners[2];
    OK(strata_obj_backlinks(tag, t1, t, tags, owners, 2, &n, E));
    CHECK(n == 1 && owners[0] == k);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    strata_query_t *q;
    uint64_t count;
    OK(strata_query_compile(r, "Post", "ANY nums == 3 AND nums.@count == 2 AND tags.@count == 2", &q, E));
    OK(strata_query_count(q, r, NULL, 0, &count, E));
    CHECK(count == 1);
    strata_query_free(q);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* Maps hold string keys in ascending order: set adds or replaces, get and erase by key, the
 * list calls read the values in key order and refuse index edits, bad keys are refused naming
 * the property, a deleted linked object leaves its key with null, and queries read values,
 * @keys and one key. */
static void maps_keep_values_by_key(void) {
    strata_db_t *db = open_db(tl_path("maps.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *t, *dog;
    strata_col_t ages, pets, dname;
    strata_key_t k, k2, d1, d2;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Dog", &dog, E));
    OK(strata_table_add_property(dog, "name", STRATA_TYPE_STRING, 0, NULL, &dname, E));
    OK(strata_table_create(w, "Owner", &t, E));
    OK(strata_table_add_property(t, "ages", STRATA_TYPE_INT, STRATA_PROP_MAP, NULL, &ages, E));
    OK(strata_table_add_property(t, "pets", STRATA_TYPE_LINK, STRATA_PROP_MAP, "Dog", &pets, E));
    EXPECT_CODE(strata_table_add_property(t, "bad", STRATA_TYPE_INT, STRATA_PROP_MAP | STRATA_PROP_SET,
                                          NULL, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_property_info info;
    OK(strata_table_property_get(t, ages, &info, E));
    CHECK((info.flags & STRATA_PROP_MAP) && (info.flags & STRATA_PROP_LIST));
    OK(strata_obj_create(t, &k, E));
    OK(strata_obj_create(t, &k2, E));
    OK(strata_obj_create(dog, &d1, E));
    OK(strata_obj_create(dog, &d2, E));
    OK(strata_obj_set(dog, d1, dname, (strata_value[]){vstr("Rex")}, E));
    bool did;
    const char *names[] = {"zed", "amy", "bob"};
    for (int i = 0; i < 3; i++) {
        OK(strata_map_set(t, k, ages, names[i], strlen(names[i]), (strata_value[]){vint(10 * (i + 1))}, &did, E));
        CHECK(did);
    }
    OK(strata_map_set(t, k, ages, "bob", 3, (strata_value[]){vint(31)}, &did, E));
    CHECK(!did);
    size_t n;
    OK(strata_list_size(t, k, ages, &n, E));
    CHECK(n == 3);
    strata_value v;
    const char *order[] = {"amy", "bob", "zed"};
    int64_t want[] = {20, 31, 10};
    for (size_t i = 0; i < 3; i++) {
        OK(strata_map_key_at(t, k, ages, i, &v, E));
        CHECK(v.type == STRATA_TYPE_STRING && v.u.bytes.len == 3 && memcmp(v.u.bytes.data, order[i], 3) == 0);
        OK(strata_list_get(t, k, ages, i, &v, E));
        CHECK(v.type == STRATA_TYPE_INT && v.u.i == want[i]);
    }
    OK(strata_map_get(t, k, ages, "zed", 3, &v, E));
    CHECK(v.u.i == 10);
    EXPECT_CODE(strata_map_get(t, k, ages, "nobody", 6, &v, E), STRATA_ERR_NOT_FOUND);
    CHECK(strstr(tl_err.message, "Owner.ages") && strstr(tl_err.message, "nobody"));
    EXPECT_CODE(strata_map_key_at(t, k, ages, 3, &v, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_map_set(t, k, ages, "a.b", 3, (strata_value[]){vint(1)}, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "Owner.ages") && strstr(tl_err.message, "'.'"));
    EXPECT_CODE(strata_map_set(t, k, ages, "$x", 2, (strata_value[]){vint(1)}, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_map_set(t, k, ages, "\xff", 1, (strata_value[]){vint(1)}, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_map_set(t, k, ages, "s", 1, (strata_value[]){vstr("x")}, NULL, E), STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_map_set(t, k, ages, "n", 1, &(strata_value){.type = STRATA_TYPE_NULL}, NULL, E),
                STRATA_ERR_WRONG_TYPE); /* not nullable */
    EXPECT_CODE(strata_list_insert(t, k, ages, 0, (strata_value[]){vint(1)}, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "is a map"));
    EXPECT_CODE(strata_list_remove(t, k, ages, 0, E), STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_map_set(t, k, 999, "a", 1, (strata_value[]){vint(1)}, NULL, E), STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_map_set(dog, d1, dname, "a", 1, (strata_value[]){vint(1)}, NULL, E), STRATA_ERR_WRONG_TYPE);
    OK(strata_map_set(t, k, ages, "", 0, (strata_value[]){vint(0)}, &did, E)); /* the empty key */
    OK(strata_map_erase(t, k, ages, "", 0, &did, E));
    CHECK(did);
    OK(strata_map_erase(t, k, ages, "", 0, &did, E));
    CHECK(!did);
    OK(strata_map_set(t, k2, ages, "amy", 3, (strata_value[]){vint(5)}, NULL, E));
    /* links: backlinks counted, a null allowed, a deleted object's key stays with null */
    strata_value l1 = {.type = STRATA_TYPE_LINK, .u.link = d1}, l2 = {.type = STRATA_TYPE_LINK, .u.link = d2};
    OK(strata_map_set(t, k, pets, "first", 5, &l1, NULL, E));
    OK(strata_map_set(t, k, pets, "second", 6, &l2, NULL, E));
    OK(strata_map_set(t, k, pets, "none", 4, &(strata_value){.type = STRATA_TYPE_NULL}, NULL, E));
    strata_key_t owners[2];
    OK(strata_obj_backlinks(dog, d2, t, pets, owners, 2, &n, E));
    CHECK(n == 1 && owners[0] == k);
    OK(strata_obj_delete(dog, d2, E));
    OK(strata_list_size(t, k, pets, &n, E));
    CHECK(n == 3);
    OK(strata_map_get(t, k, pets, "second", 6, &v, E));
    CHECK(v.type == STRATA_TYPE_NULL);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    struct { const char *q; uint64_t want; } qs[] = {
        {"ANY ages == 31", 1}, {"ages.@values == 31", 1}, {"ages['zed'] == 10", 1},
        {"ages[\"amy\"] == 5", 1}, {"ages['amy'] > 1", 2}, {"ages['nobody'] == nil", 2},
        {"ANY ages.@keys == 'bob'", 1}, {"ages.@keys BEGINSWITH 'a'", 2}, {"ages.@count == 3", 1},
        {"ages.@sum == 61", 1}, {"pets['first'].name == 'Rex'", 1}, {"ANY pets.name == 'Rex'", 1},
        {"pets['second'] == nil", 2} /* k2 has no such key: null */, {"ALL ages > 6", 1}};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        strata_query_t *q;
        uint64_t count = 99;
        OK(strata_query_compile(r, "Owner", qs[i].q, &q, E));
        OK(strata_query_count(q, r, NULL, 0, &count, E));
        if (count != qs[i].want) fprintf(stderr, "query %s: %llu, expected %llu\n", qs[i].q,
                                         (unsigned long long)count, (unsigned long long)qs[i].want);
        CHECK(count == qs[i].want);
        strata_query_free(q);
    }
    strata_query_t *q;
    uint64_t count;
    strata_value args[2] = {vstr("zed"), vint(10)};
    OK(strata_query_compile(r, "Owner", "ages[$0] == $1 AND ANY ages.@allKeys == 'amy' AND ages.@allValues == 20", &q, E));
    OK(strata_query_count(q, r, args, 2, &count, E));
    CHECK(count == 1);
    args[0] = vint(3); /* a map key must be a string */
    EXPECT_CODE(strata_query_count(q, r, args, 2, &count, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_query_free(q);
    EXPECT_CODE(strata_query_compile(r, "Owner", "ages[5] == 1", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_query_compile(r, "Owner", "ages.@keys == 1", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_txn_free(r);
    /* clearing removes keys with values */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Owner", &t, E));
    OK(strata_list_clear(t, k, ages, E));
    OK(strata_list_size(t, k, ages, &n, E));
    CHECK(n == 0);
    EXPECT_CODE(strata_map_get(t, k, ages, "amy", 3, &v, E), STRATA_ERR_NOT_FOUND);
    OK(strata_map_set(t, k, ages, "back", 4, (strata_value[]){vint(1)}, NULL, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

static size_t table_size(strata_txn_t *txn, const char *name) {
    strata_table_t *t;
    uint64_t n = 0;
    strata_query_t *q;
    if (strata_table_open(txn, name, &t, E) || strata_query_compile(txn, name, "TRUEPREDICATE", &q, E)) return SIZE_MAX;
    if (strata_query_count(q, txn, NULL, 0, &n, E)) n = SIZE_MAX;
    strata_query_free(q);
    return (size_t)n;
}

/* Embedded objects have exactly one parent: a second link is refused naming the parent; letting
 * go of one (overwrite, list removal, map erase, parent deleted) deletes it and what it owns; one
 * never linked is gone at commit; a table becomes embedded only when every object has one
 * parent (orphans deleted when asked); queries go through the parent. */
static void embedded_objects_belong_to_one_parent(void) {
    strata_db_t *db = open_db(tl_path("embedded.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *person, *addr;
    strata_col_t home, past, byname, city, sub;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Address", &addr, E));
    OK(strata_table_add_property(addr, "city", STRATA_TYPE_STRING, 0, NULL, &city, E));
    OK(strata_table_add_property(addr, "sub", STRATA_TYPE_LINK, 0, "Address", &sub, E));
    OK(strata_table_set_embedded(addr, true, 0, E));
    bool emb = false;
    OK(strata_table_is_embedded(addr, &emb, E));
    CHECK(emb);
    EXPECT_CODE(strata_table_set_primary_key(addr, city, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_table_create(w, "Person", &person, E));
    OK(strata_table_add_property(person, "home", STRATA_TYPE_LINK, 0, "Address", &home, E));
    OK(strata_table_add_property(person, "past", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Address", &past, E));
    OK(strata_table_add_property(person, "byname", STRATA_TYPE_LINK, STRATA_PROP_MAP, "Address", &byname, E));
    strata_key_t p1, p2, a1, a2, a3, a4, inner, lost;
    OK(strata_obj_create(person, &p1, E));
    OK(strata_obj_create(person, &p2, E));
    OK(strata_obj_create(addr, &a1, E));
    OK(strata_obj_set(addr, a1, city, (strata_value[]){vstr("Paris")}, E));
    OK(strata_obj_create(addr, &inner, E));
    OK(strata_obj_set(addr, a1, sub, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = inner}, E));
    OK(strata_obj_set(person, p1, home, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a1}, E));
    OK(strata_obj_set(person, p1, home, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a1}, E)); /* its own again */
    EXPECT_CODE(strata_obj_set(person, p2, home, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a1}, E),
                STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "Address") && strstr(tl_err.message, "Person.home"));
    EXPECT_CODE(strata_list_insert(person, p2, past, 0, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a1}, E),
                STRATA_ERR_EXISTS);
    EXPECT_CODE(strata_map_set(person, p2, byname, "x", 1, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a1}, NULL, E),
                STRATA_ERR_EXISTS);
    OK(strata_obj_create(addr, &a2, E));
    OK(strata_obj_create(addr, &a3, E));
    OK(strata_obj_create(addr, &a4, E));
    OK(strata_obj_set(addr, a2, city, (strata_value[]){vstr("Lyon")}, E));
    OK(strata_list_insert(person, p2, past, 0, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a2}, E));
    OK(strata_list_insert(person, p2, past, 1, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a3}, E));
    OK(strata_map_set(person, p2, byname, "work", 4, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = a4}, NULL, E));
    OK(strata_obj_create(addr, &lost, E)); /* never linked */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    CHECK(table_size(r, "Address") == 5); /* the one never linked is gone */
    strata_query_t *q;
    uint64_t count;
    OK(strata_query_compile(r, "Person", "home.city == 'Paris' OR ANY past.city == 'Lyon'", &q, E));
    OK(strata_query_count(q, r, NULL, 0, &count, E));
    CHECK(count == 2);
    strata_query_free(q);
    strata_txn_free(r);
    /* letting go deletes: overwrite (with what it owns), list removal, map erase, the parent */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Person", &person, E));
    OK(strata_obj_set(person, p1, home, &(strata_value){.type = STRATA_TYPE_NULL}, E));
    CHECK(table_size(w, "Address") == 3); /* a1 and its sub-address */
    OK(strata_list_remove(person, p2, past, 0, E));
    CHECK(table_size(w, "Address") == 2);
    OK(strata_map_erase(person, p2, byname, "work", 4, NULL, E));
    CHECK(table_size(w, "Address") == 1);
    OK(strata_obj_delete(person, p2, E));
    CHECK(table_size(w, "Address") == 0);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    /* becoming embedded: several parents refused, orphans refused unless deleted */
    strata_table_t *tag, *post;
    strata_col_t tagcol;
    strata_key_t t1, t2, po1, po2;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Tag", &tag, E));
    OK(strata_table_create(w, "Post", &post, E));
    OK(strata_table_add_property(post, "tag", STRATA_TYPE_LINK, 0, "Tag", &tagcol, E));
    OK(strata_obj_create(tag, &t1, E));
    OK(strata_obj_create(tag, &t2, E));
    OK(strata_obj_create(post, &po1, E));
    OK(strata_obj_create(post, &po2, E));
    OK(strata_obj_set(post, po1, tagcol, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = t1}, E));
    OK(strata_obj_set(post, po2, tagcol, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = t1}, E));
    EXPECT_CODE(strata_table_set_embedded(tag, true, STRATA_EMBED_DELETE_ORPHANS, E), STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "Tag") && strstr(tl_err.message, "more than one parent"));
    OK(strata_obj_set(post, po2, tagcol, &(strata_value){.type = STRATA_TYPE_NULL}, E));
    EXPECT_CODE(strata_table_set_embedded(tag, true, 0, E), STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "no parent"));
    OK(strata_table_is_embedded(tag, &emb, E));
    CHECK(!emb && table_size(w, "Tag") == 2);
    OK(strata_table_set_embedded(tag, true, STRATA_EMBED_DELETE_ORPHANS, E));
    CHECK(table_size(w, "Tag") == 1);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    db = open_db(tl_path("embedded.db")); /* the flag is kept */
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Tag", &tag, E));
    OK(strata_table_is_embedded(tag, &emb, E));
    CHECK(emb);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* Lookups by value (sets) and by key (maps) in a read transaction go through a decoded copy
 * of the list kept by the table handle: they agree with the list for every value, miss what it
 * does not hold, and see the list's new contents after a refresh (the list keeps its id). */
static void set_and_map_lookups_agree_with_the_list_across_refreshes(void) {
    strata_db_t *db = open_db(tl_path("lookups.db"));
    CHECK(db);
    strata_txn_t *w, *r;
    strata_table_t *t;
    strata_col_t nums, words, ages;
    strata_key_t k;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Bag", &t, E));
    OK(strata_table_add_property(t, "nums", STRATA_TYPE_DOUBLE, STRATA_PROP_SET, NULL, &nums, E));
    OK(strata_table_add_property(t, "words", STRATA_TYPE_STRING, STRATA_PROP_SET, NULL, &words, E));
    OK(strata_table_add_property(t, "ages", STRATA_TYPE_INT, STRATA_PROP_MAP, NULL, &ages, E));
    OK(strata_obj_create(t, &k, E));
    char buf[32];
    for (int i = 0; i < 500; i++) {
        int v = (i * 7919) % 1000; /* 500 distinct values, inserted out of order */
        OK(strata_set_insert(t, k, nums, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = v - 250.5}, NULL, E));
        snprintf(buf, sizeof buf, "w%d", v);
        OK(strata_set_insert(t, k, words, (strata_value[]){vstr(buf)}, NULL, E));
        OK(strata_map_set(t, k, ages, buf, strlen(buf), (strata_value[]){vint(v)}, NULL, E));
    }
    OK(strata_set_insert(t, k, nums, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = -0.0}, NULL, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Bag", &t, E));
    size_t n, at;
    strata_value got;
    OK(strata_list_size(t, k, nums, &n, E));
    CHECK(n == 501);
    for (int v = 0; v < 1000; v++) {
        bool held = false;
        for (int i = 0; i < 500 && !held; i++) held = (i * 7919) % 1000 == v;
        int rc = strata_set_find(t, k, nums, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = v - 250.5}, &at, E);
        CHECK(held ? rc == STRATA_OK : rc == STRATA_ERR_NOT_FOUND);
        if (rc == STRATA_OK) {
            OK(strata_list_get(t, k, nums, at, &got, E));
            CHECK(got.u.d == v - 250.5);
        }
        snprintf(buf, sizeof buf, "w%d", v);
        CHECK((strata_set_find(t, k, words, (strata_value[]){vstr(buf)}, &at, E) == STRATA_OK) == held);
        rc = strata_map_get(t, k, ages, buf, strlen(buf), &got, E);
        CHECK(held ? rc == STRATA_OK && got.u.i == v : rc == STRATA_ERR_NOT_FOUND);
    }
    OK(strata_set_find(t, k, nums, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = 0.0}, &at, E)); /* == -0.0 */
    /* another version changes the lists in place (same list ids); a refresh sees it */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    strata_table_t *wt;
    OK(strata_table_open(w, "Bag", &wt, E));
    OK(strata_set_erase(wt, k, words, (strata_value[]){vstr("w0")}, NULL, E));
    OK(strata_set_insert(wt, k, words, (strata_value[]){vstr("new")}, NULL, E));
    OK(strata_map_set(wt, k, ages, "w0", 2, (strata_value[]){vint(-1)}, NULL, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    CHECK(strata_set_find(t, k, words, (strata_value[]){vstr("w0")}, &at, E) == STRATA_OK); /* its snapshot */
    OK(strata_txn_refresh(r, E));
    OK(strata_table_open(r, "Bag", &t, E));
    CHECK(strata_set_find(t, k, words, (strata_value[]){vstr("w0")}, &at, E) == STRATA_ERR_NOT_FOUND);
    OK(strata_set_find(t, k, words, (strata_value[]){vstr("new")}, &at, E));
    OK(strata_map_get(t, k, ages, "w0", 2, &got, E));
    CHECK(got.u.i == -1);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* A mixed value links to an object of any table (TYPED_LINK: table id and key): the link is
 * checked, kept in the target's backlinks, becomes null (or leaves a set) when the object is
 * deleted, compares in queries, and verify counts it. */
static void mixed_values_link_to_objects_of_any_table(void) {
    strata_db_t *db = open_db(tl_path("typedlinks.db"));
    CHECK(db);
    strata_txn_t *w;
    strata_table_t *box, *dog, *cat, *emb;
    strata_col_t any, anys, anyset, anymap, dname;
    strata_key_t b, d1, d2, c1, e1;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Dog", &dog, E));
    OK(strata_table_add_property(dog, "name", STRATA_TYPE_STRING, 0, NULL, &dname, E));
    OK(strata_table_create(w, "Cat", &cat, E));
    OK(strata_table_create(w, "Emb", &emb, E));
    OK(strata_table_set_embedded(emb, true, 0, E));
    OK(strata_table_create(w, "Box", &box, E));
    OK(strata_table_add_property(box, "val", STRATA_TYPE_MIXED, STRATA_PROP_INDEXED, NULL, &any, E));
    OK(strata_table_add_property(box, "anys", STRATA_TYPE_MIXED, STRATA_PROP_LIST, NULL, &anys, E));
    OK(strata_table_add_property(box, "anyset", STRATA_TYPE_MIXED, STRATA_PROP_SET, NULL, &anyset, E));
    OK(strata_table_add_property(box, "anymap", STRATA_TYPE_MIXED, STRATA_PROP_MAP, NULL, &anymap, E));
    OK(strata_obj_create(box, &b, E));
    OK(strata_obj_create(dog, &d1, E));
    OK(strata_obj_create(dog, &d2, E));
    OK(strata_obj_create(cat, &c1, E));
    OK(strata_obj_create(emb, &e1, E));
    OK(strata_obj_set(dog, d1, dname, (strata_value[]){vstr("Rex")}, E));
    strata_value ld1 = {.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {d1, strata_table_id(dog)}};
    strata_value ld2 = {.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {d2, strata_table_id(dog)}};
    strata_value lc1 = {.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {c1, strata_table_id(cat)}};
    OK(strata_obj_set(box, b, any, &ld1, E));
    OK(strata_list_insert(box, b, anys, 0, &ld2, E));
    OK(strata_list_insert(box, b, anys, 1, &lc1, E));
    OK(strata_list_insert(box, b, anys, 2, (strata_value[]){vint(7)}, E));
    OK(strata_set_insert(box, b, anyset, &ld2, NULL, E));
    OK(strata_set_insert(box, b, anyset, &lc1, NULL, E));
    OK(strata_map_set(box, b, anymap, "pet", 3, &ld2, NULL, E));
    EXPECT_CODE(strata_obj_set(box, b, any, &(strata_value){.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {99, strata_table_id(dog)}}, E),
                STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_set(box, b, any, &(strata_value){.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {0, 999}}, E),
                STRATA_ERR_NOT_FOUND);
    EXPECT_CODE(strata_obj_set(box, b, any, &(strata_value){.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {e1, strata_table_id(emb)}}, E),
                STRATA_ERR_WRONG_TYPE);
    strata_value got;
    OK(strata_obj_get(box, b, any, &got, E));
    CHECK(got.type == STRATA_TYPE_TYPED_LINK && got.u.typed_link.key == d1 && got.u.typed_link.table == strata_table_id(dog));
    strata_table_t *byid;
    OK(strata_table_open_id(w, strata_table_id(cat), &byid, E));
    CHECK(byid == cat);
    EXPECT_CODE(strata_table_open_id(w, 999, &byid, E), STRATA_ERR_NOT_FOUND);
    OK(strata_obj_delete(cat, c1, E)); /* its place in the list becomes null; it leaves the set */
    size_t n;
    OK(strata_list_size(box, b, anys, &n, E));
    CHECK(n == 3);
    OK(strata_list_get(box, b, anys, 1, &got, E));
    CHECK(got.type == STRATA_TYPE_NULL);
    OK(strata_list_size(box, b, anyset, &n, E));
    CHECK(n == 1);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    strata_query_t *q;
    uint64_t count;
    OK(strata_query_compile(r, "Box", "val == $0 AND ANY anys == $1 AND anymap['pet'] == $1", &q, E));
    strata_value args[2] = {ld1, ld2};
    OK(strata_query_count(q, r, args, 2, &count, E));
    CHECK(count == 1);
    args[0] = ld2;
    OK(strata_query_count(q, r, args, 2, &count, E));
    CHECK(count == 0);
    strata_query_free(q);
    strata_txn_free(r);
    /* deleting the dogs: the property, the list element and the map value become null */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Dog", &dog, E));
    OK(strata_table_open(w, "Box", &box, E));
    OK(strata_table_clear(dog, E));
    OK(strata_obj_get(box, b, any, &got, E));
    CHECK(got.type == STRATA_TYPE_NULL);
    OK(strata_map_get(box, b, anymap, "pet", 3, &got, E));
    CHECK(got.type == STRATA_TYPE_NULL);
    OK(strata_list_size(box, b, anyset, &n, E));
    CHECK(n == 0);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ differential test */

#define M_OBJS 3000
#define M_LIST 8

typedef struct mobj {
    bool live;
    int64_t num;            /* int, indexed */
    bool num_null;
    char str[48];           /* string */
    double d;
    int64_t link;           /* -1 = null; key in the same table */
    int64_t list[M_LIST];   /* links */
    int nlist;
} mobj;

static mobj model[M_OBJS];

static void random_str(char *out) {
    static const char *parts[] = {"a", "b", "张", "三", "é", "zz", "", "0"};
    out[0] = 0;
    int n = (int)(rnd() % 5);
    for (int i = 0; i < n; i++) strcat(out, parts[rnd() % 8]);
}

typedef struct dcols {
    strata_col_t num, str, d, link, list;
} dcols;

static int check_against_model(strata_db_t *db, const dcols *c) {
    strata_txn_t *r;
    strata_table_t *t;
    int rc = strata_txn_begin(db, STRATA_TXN_READ, &r, E);
    if (rc) return rc;
    if ((rc = strata_table_open(r, "Node", &t, E))) goto out;
    uint64_t live = 0, size;
    for (int i = 0; i < M_OBJS; i++) live += model[i].live;
    if ((rc = strata_table_size(t, &size, E))) goto out;
    if (size != live) {
        fprintf(stderr, "  size %llu, model %llu\n", (unsigned long long)size, (unsigned long long)live);
        rc = -1;
        goto out;
    }
    /* strata_table_keys: every live key of the model, ascending, in one call (sized by a first) */
    size_t nkeys = 0, got = 0;
    static strata_key_t all[M_OBJS];
    if ((rc = strata_table_keys(t, NULL, 0, &nkeys, E)) || (rc = strata_table_keys(t, all, M_OBJS, &got, E))) goto out;
    for (size_t i = 0, j = 0; rc == STRATA_OK && i < M_OBJS; i++)
        if (model[i].live && (j >= got || all[j++] != (strata_key_t)i)) rc = -1;
    if (rc || nkeys != live || got != live) {
        fprintf(stderr, "  strata_table_keys: %zu and %zu keys, model %llu\n", nkeys, got, (unsigned long long)live);
        rc = -1;
        goto out;
    }
    strata_key_t k = -1, prev = -1;
    uint64_t seen = 0;
    while ((rc = strata_obj_next(t, k, &k, E)) == STRATA_OK) {
        if (k <= prev || k >= M_OBJS || !model[k].live) {
            fprintf(stderr, "  iteration gave key %lld\n", (long long)k);
            rc = -1;
            goto out;
        }
        prev = k;
        seen++;
        mobj *m = &model[k];
        strata_value v;
        if ((rc = strata_obj_get(t, k, c->num, &v, E))) goto out;
        bool ok = m->num_null ? v.type == STRATA_TYPE_NULL : (v.type == STRATA_TYPE_INT && v.u.i == m->num);
        if ((rc = strata_obj_get(t, k, c->str, &v, E))) goto out;
        ok = ok && str_is(&v, m->str);
        if ((rc = strata_obj_get(t, k, c->d, &v, E))) goto out;
        ok = ok && v.u.d == m->d;
        if ((rc = strata_obj_get(t, k, c->link, &v, E))) goto out;
        ok = ok && (m->link < 0 ? v.type == STRATA_TYPE_NULL : v.u.link == m->link);
        size_t n;
        if ((rc = strata_list_size(t, k, c->list, &n, E))) goto out;
        ok = ok && n == (size_t)m->nlist;
        for (int j = 0; ok && j < m->nlist; j++) {
            if ((rc = strata_list_get(t, k, c->list, (size_t)j, &v, E))) goto out;
            ok = v.u.link == m->list[j];
        }
        /* backlinks through `link` */
        strata_key_t bl[M_OBJS];
        size_t nb;
        if ((rc = strata_obj_backlinks(t, k, t, c->link, bl, M_OBJS, &nb, E))) goto out;
        size_t want = 0;
        for (int j = 0; j < M_OBJS; j++) want += model[j].live && model[j].link == k;
        ok = ok && nb == want;
        /* the index */
        strata_key_t found[M_OBJS];
        size_t nf;
        strata_value q = m->num_null ? vnull() : vint(m->num);
        if ((rc = strata_index_find(t, c->num, &q, found, M_OBJS, &nf, E))) goto out;
        bool in = false;
        for (size_t j = 0; j < nf; j++) in |= found[j] == k;
        ok = ok && in;
        if (!ok) {
            fprintf(stderr, "  object %lld differs from the model (num %lld%s, link %lld, list %d, "
                    "backlinks %zu of %zu, in index %d)\n", (long long)k, (long long)m->num,
                    m->num_null ? " null" : "", (long long)m->link, m->nlist, nb, want, in);
            rc = -1;
            goto out;
        }
    }
    rc = rc == STRATA_ERR_NOT_FOUND && seen == live ? STRATA_OK : -1;
out:
    strata_txn_free(r);
    return rc;
}

static void random_operations_match_a_model(void) {
    const char *path = tl_path("diff.db");
    strata_db_t *db = open_db(path);
    CHECK(db);
    memset(model, 0, sizeof model);
    dcols c;
    strata_txn_t *w;
    strata_table_t *t;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Node", &t, E));
    OK(strata_table_add_property(t, "num", STRATA_TYPE_INT, STRATA_PROP_NULLABLE | STRATA_PROP_INDEXED, NULL, &c.num, E));
    OK(strata_table_add_property(t, "str", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c.str, E));
    OK(strata_table_add_property(t, "d", STRATA_TYPE_DOUBLE, 0, NULL, &c.d, E));
    OK(strata_table_add_property(t, "link", STRATA_TYPE_LINK, 0, "Node", &c.link, E));
    OK(strata_table_add_property(t, "list", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Node", &c.list, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    int64_t next = 0;
    for (int round = 0; round < 40; round++) {
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_table_open(w, "Node", &t, E));
        int ops = 20 + (int)(rnd() % 200);
        for (int op = 0; op < ops; op++) {
            if (op % 16 == 15) { /* the index inside the transaction, queued changes and all */
                int64_t want = (int64_t)(rnd() % 50) - 25;
                strata_key_t found[M_OBJS];
                size_t nf, expect = 0;
                OK(strata_index_find(t, c.num, (strata_value[]){vint(want)}, found, M_OBJS, &nf, E));
                for (int i = 0; i < next; i++) {
                    bool match = model[i].live && !model[i].num_null && model[i].num == want;
                    expect += match;
                    bool in = false;
                    for (size_t j = 0; j < nf; j++) in |= found[j] == i;
                    CHECK(in == match);
                }
                CHECK(nf == expect);
            }
            int64_t k = (int64_t)(rnd() % (uint64_t)(next ? next : 1));
            bool live = next && model[k].live;
            unsigned what = (unsigned)(rnd() % 10);
            if ((what < 3 || !live) && next < M_OBJS) {
                strata_key_t nk;
                OK(strata_obj_create(t, &nk, E));
                CHECK(nk == next);
                model[nk] = (mobj){.live = true, .num_null = true, .link = -1};
                next++;
            } else if (!live) {
                continue;
            } else if (what == 3) {
                OK(strata_obj_delete(t, k, E));
                model[k].live = false;
                for (int i = 0; i < next; i++) {
                    if (model[i].link == k) model[i].link = -1;
                    int m = 0;
                    for (int j = 0; j < model[i].nlist; j++)
                        if (model[i].list[j] != k) model[i].list[m++] = model[i].list[j];
                    model[i].nlist = m;
                }
            } else if (what == 4) {
                bool null = rnd() % 5 == 0;
                int64_t n = (int64_t)(rnd() % 50) - 25;
                OK(strata_obj_set(t, k, c.num, null ? (strata_value[]){vnull()} : (strata_value[]){vint(n)}, E));
                model[k].num_null = null;
                model[k].num = null ? 0 : n;
            } else if (what == 5) {
                char s[48];
                random_str(s);
                OK(strata_obj_set(t, k, c.str, (strata_value[]){vstr(s)}, E));
                strcpy(model[k].str, s);
            } else if (what == 6) {
                double d = (double)(rnd() % 1000) / 7.0;
                OK(strata_obj_set(t, k, c.d, (strata_value[]){vdouble(d)}, E));
                model[k].d = d;
            } else if (what == 7) {
                int64_t target = (int64_t)(rnd() % (uint64_t)next);
                if (!model[target].live || rnd() % 4 == 0) {
                    OK(strata_obj_set(t, k, c.link, (strata_value[]){vnull()}, E));
                    model[k].link = -1;
                } else {
                    OK(strata_obj_set(t, k, c.link, (strata_value[]){vlink(target)}, E));
                    model[k].link = target;
                }
            } else if (what == 8) {
                int64_t target = (int64_t)(rnd() % (uint64_t)next);
                mobj *m = &model[k];
                if (model[target].live && m->nlist < M_LIST) {
                    size_t at = (size_t)(rnd() % (uint64_t)(m->nlist + 1));
                    OK(strata_list_insert(t, k, c.list, at, (strata_value[]){vlink(target)}, E));
                    memmove(m->list + at + 1, m->list + at, (size_t)(m->nlist - (int)at) * sizeof *m->list);
                    m->list[at] = target;
                    m->nlist++;
                }
            } else {
                mobj *m = &model[k];
                if (m->nlist == 0) continue;
                size_t a = (size_t)(rnd() % (uint64_t)m->nlist), b = (size_t)(rnd() % (uint64_t)m->nlist);
                if (rnd() % 2) {
                    OK(strata_list_remove(t, k, c.list, a, E));
                    memmove(m->list + a, m->list + a + 1, (size_t)(m->nlist - (int)a - 1) * sizeof *m->list);
                    m->nlist--;
                } else {
                    OK(strata_list_move(t, k, c.list, a, b, E));
                    int64_t x = m->list[a];
                    if (a < b) memmove(m->list + a, m->list + a + 1, (b - a) * sizeof *m->list);
                    else memmove(m->list + b + 1, m->list + b, (a - b) * sizeof *m->list);
                    m->list[b] = x;
                }
            }
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        OK(check_against_model(db, &c));
        if (round % 8 == 7) {
            OK(strata_db_verify(db, E));
            OK(strata_db_close(db, E));
            db = open_db(path);
            CHECK(db);
            OK(check_against_model(db, &c));
        }
    }
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* A read transaction that reads many objects finds clusters through a directory of the tree
 * (built after enough reads); it must answer exactly as the tree does: objects present, gaps
 * left by deleted clusters, keys before the first and after the last, and after a refresh;
 * strata_obj_exists, which the directory answers alone for a dense cluster, agrees, and so does
 * strata_obj_prefetch (a hint that reads nothing, but finds the object).
 * Round -1 reads before any deletion: every cluster but the last holds every key up to the next
 * one's base, so a key's row is found without its keys leaf. */
#define DIR_N 20000
static bool dir_alive(int64_t k, int round) {
    if (k < 0 || k >= DIR_N + (round > 0 ? 300 : 0)) return false;
    return round < 0 || (!(k >= 1000 && k < 2000) && k % 7 != 3);
}

static void dir_check_reads(strata_txn_t *r, strata_col_t v, int round) {
    strata_table_t *t;
    OK(strata_table_open(r, "T", &t, E));
    for (int64_t i = 0; i < DIR_N + 400; i++) {
        int64_t k = (i * 7919) % (DIR_N + 400) - 50; /* every key in [-50, DIR_N + 350) */
        strata_value got;
        EXPECT_CODE(strata_obj_prefetch(t, k, E), dir_alive(k, round) ? STRATA_OK : STRATA_ERR_NOT_FOUND);
        int rc = strata_obj_get(t, k, v, &got, E);
        EXPECT_CODE(strata_obj_exists(t, k, E), dir_alive(k, round) ? STRATA_OK : STRATA_ERR_NOT_FOUND);
        if (!dir_alive(k, round)) {
            EXPECT_CODE(rc, STRATA_ERR_NOT_FOUND);
            continue;
        }
        OK(rc);
        CHECK(got.type == STRATA_TYPE_INT && got.u.i == k * 3 + (round > 0 ? round : 0));
    }
}

static void point_reads_in_a_long_read_transaction_find_every_cluster(void) {
    strata_db_t *db = open_db(tl_path("dir.db"));
    CHECK(db);
    strata_txn_t *w, *r;
    strata_table_t *t;
    strata_col_t v;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "T", &t, E));
    OK(strata_table_add_property(t, "v", STRATA_TYPE_INT, 0, NULL, &v, E));
    for (int64_t i = 0; i < DIR_N; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        CHECK(k == i);
        OK(strata_obj_set(t, k, v, (strata_value[]){vint(i * 3)}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    dir_check_reads(r, v, -1);
    strata_txn_free(r);
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "T", &t, E));
    for (int64_t i = 0; i < DIR_N; i++)
        if (!dir_alive(i, 0)) OK(strata_obj_delete(t, i, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);

    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    dir_check_reads(r, v, 0);
    /* a commit while the reader holds its snapshot: new objects, every value + 1 */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "T", &t, E));
    for (int64_t i = 0; i < DIR_N + 300; i++) {
        if (i >= DIR_N) {
            strata_key_t k;
            OK(strata_obj_create(t, &k, E));
            CHECK(k == i);
        }
        if (dir_alive(i, 1)) OK(strata_obj_set(t, i, v, (strata_value[]){vint(i * 3 + 1)}, E));
        else if (i >= DIR_N) OK(strata_obj_delete(t, i, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    dir_check_reads(r, v, 0); /* still the old snapshot */
    OK(strata_txn_refresh(r, E));
    dir_check_reads(r, v, 1);
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

static const tl_test tests[] = {
    TL_TEST(every_property_type_round_trips_through_commit_and_reopen),
    TL_TEST(deleting_a_dog_updates_lists_and_backlinks),
    TL_TEST(primary_keys_are_unique_and_found),
    TL_TEST(integer_primary_keys_are_object_keys_when_they_can_be),
    TL_TEST(a_direct_primary_key_reads_back_its_stored_value),
    TL_TEST(index_find_returns_every_holder_across_leaves),
    TL_TEST(index_searches_through_the_leaf_directory_agree_with_the_descent),
    TL_TEST(index_removals_in_runs_keep_the_index_exact),
    TL_TEST(index_changes_that_undo_each_other_in_one_write),
    TL_TEST(an_index_grown_in_bulk_stays_full),
    TL_TEST(a_bulk_commit_gives_the_files_unused_end_back),
    TL_TEST(the_last_handle_closing_gives_the_files_end_back),
    TL_TEST(small_commits_after_a_random_update_rewrite_few_free_list_leaves),
    TL_TEST(bad_input_gets_clear_errors),
    TL_TEST(strings_up_to_16_mib_round_trip),
    TL_TEST(schema_changes_keep_data_consistent),
    TL_TEST(lists_of_values_mixed_and_listing_calls_work),
    TL_TEST(a_bool_from_any_nonzero_byte_reads_back_true),
    TL_TEST(a_mixed_property_can_be_indexed),
    TL_TEST(sets_hold_each_value_once),
    TL_TEST(maps_keep_values_by_key),
    TL_TEST(embedded_objects_belong_to_one_parent),
    TL_TEST(set_and_map_lookups_agree_with_the_list_across_refreshes),
    TL_TEST(mixed_values_link_to_objects_of_any_table),
    TL_TEST(random_operations_match_a_model),
    TL_TEST(point_reads_in_a_long_read_transaction_find_every_cluster),
};

int main(int argc, char **argv) {
    tl_seed(0x2545F4914F6CDD1Dull);
    return tl_run("objects", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
