/*
 * test_hostile.c — input meant to break the core gets a clear error, never a crash and never a
 * half-applied change: deep and long queries, values with NULL data, schema changes that fail
 * half-way, calls on the wrong kind of tree, keys at the ends of their range, messages that keep
 * their reason, and a second write transaction on the thread that holds one.
 */
#include "testlib.h"

#include <pthread.h>
#include <stdint.h>

static strata_value vstr(const char *s) {
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
}
static strata_value vint(int64_t i) { return (strata_value){.type = STRATA_TYPE_INT, .u.i = i}; }

/* Person {name, age, dogs: [Dog]}, Dog {name, age}: n people, person i aged i % 50 with dogs
 * i % 3 of them. */
typedef struct people {
    strata_db_t *db;
    strata_col_t name, age, dogs;
} people;

static int make_people(people *f, const char *file, int n) {
    strata_txn_t *w;
    strata_table_t *p, *d;
    strata_col_t dn, da;
    int rc;
    if ((rc = strata_db_open(tl_path(file), NULL, &f->db, E)) ||
        (rc = strata_txn_begin(f->db, STRATA_TXN_WRITE, &w, E)))
        return rc;
    if ((rc = strata_table_create(w, "Dog", &d, E)) || (rc = strata_table_create(w, "Person", &p, E)) ||
        (rc = strata_table_add_property(d, "name", STRATA_TYPE_STRING, 0, NULL, &dn, E)) ||
        (rc = strata_table_add_property(d, "age", STRATA_TYPE_INT, 0, NULL, &da, E)) ||
        (rc = strata_table_add_property(p, "name", STRATA_TYPE_STRING, 0, NULL, &f->name, E)) ||
        (rc = strata_table_add_property(p, "age", STRATA_TYPE_INT, 0, NULL, &f->age, E)) ||
        (rc = strata_table_add_property(p, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &f->dogs, E)))
        goto out;
    for (int i = 0; i < n; i++) {
        strata_key_t k;
        char nm[32];
        snprintf(nm, sizeof nm, "p%d", i);
        if ((rc = strata_obj_create(p, &k, E)) ||
            (rc = strata_obj_set(p, k, f->name, (strata_value[]){vstr(nm)}, E)) ||
            (rc = strata_obj_set(p, k, f->age, (strata_value[]){vint(i % 50)}, E)))
            goto out;
        for (int j = 0; j < i % 3; j++) {
            strata_key_t dk;
            strata_value link = {.type = STRATA_TYPE_LINK};
            if ((rc = strata_obj_create(d, &dk, E)) ||
                (rc = strata_obj_set(d, dk, da, (strata_value[]){vint(j)}, E)))
                goto out;
            link.u.link = dk;
            if ((rc = strata_list_insert(p, k, f->dogs, (size_t)j, &link, E))) goto out;
        }
    }
    rc = strata_txn_commit(w, E);
out:
    strata_txn_free(w);
    return rc;
}

static void close_people(people *f) {
    strata_db_close(f->db, NULL);
}

/* Count the Person objects matching q; STRATA_OK or the compile/run error. */
static int count_where(people *f, const char *q, uint64_t *n) {
    strata_txn_t *r;
    strata_query_t *cq = NULL;
    int rc = strata_txn_begin(f->db, 0, &r, E);
    if (rc) return rc;
    if ((rc = strata_query_compile(r, "Person", q, &cq, E)) == STRATA_OK)
        rc = strata_query_count(cq, r, NULL, 0, n, E);
    strata_query_free(cq);
    strata_txn_free(r);
    return rc;
}

static char *repeat3(const char *pre, int n, const char *mid, const char *post, int m) {
    size_t lp = strlen(pre), lm = strlen(mid), lq = strlen(post);
    char *s = malloc(lp * (size_t)n + lm + lq * (size_t)m + 1), *o = s;
    for (int i = 0; i < n; i++, o += lp) memcpy(o, pre, lp);
    memcpy(o, mid, lm);
    o += lm;
    for (int i = 0; i < m; i++, o += lq) memcpy(o, post, lq);
    *o = 0;
    return s;
}

/* Item 6: 16k parentheses or 8k NOTs overflowed the parser's stack. */
static void deep_nesting_is_refused_by_name(void) {
    people f;
    OK(make_people(&f, "deep.db", 30));
    uint64_t n;
    struct { const char *pre, *post; int depth; } cases[] = {
        {"(", ")", 16000}, {"NOT ", "", 8000}, {"!", "", 8000}, {"(NOT ", ")", 5000},
        {"SUBQUERY(dogs, $d, (", ")).@count > 0 AND age > 5", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char *inner = repeat3("(", 1000, "$d.age > 1", ")", 1000); /* inside the SUBQUERY */
        char *q = cases[i].depth > 1
                      ? repeat3(cases[i].pre, cases[i].depth, "age > 5", cases[i].post, cases[i].depth)
                      : repeat3(cases[i].pre, 1, inner, cases[i].post, 1);
        int rc = count_where(&f, q, &n);
        free(q);
        free(inner);
        EXPECT_CODE(rc, STRATA_ERR_INVALID_ARGUMENT);
        CHECK(strstr(tl_err.message, "nested more than 1000 levels"));
        CHECK(strstr(tl_err.message, "column "));
    }
    /* at the limit it works, and NOT NOT ... keeps its meaning */
    char *q = repeat3("(", 999, "age > 5", ")", 999);
    OK(count_where(&f, q, &n));
    free(q);
    CHECK(n == 24); /* ages 0..29: 24 above 5 */
    q = repeat3("NOT ", 1000, "age > 5", "", 0);
    OK(count_where(&f, q, &n));
    free(q);
    CHECK(n == 24);
    close_people(&f);
}

/* The deepest query allowed, compiled and run on a thread with a 512 KiB stack (the size of
 * Apple's secondary threads): nesting is bounded so that the recursion fits (it needs about
 * 190 KiB in a release build; sanitizers' frames are larger, and get more). */
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
#define SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define SANITIZED 1
#endif
#ifdef SANITIZED
#define SMALL_STACK (4 * 512 * 1024)
#else
#define SMALL_STACK (512 * 1024)
#endif
typedef struct deep_job {
    people *f;
    int rc;
    uint64_t n;
} deep_job;

static void *deep_on_small_stack(void *arg) {
    deep_job *j = arg;
    char *q = repeat3("(age < 100 AND NOT ", 499, "age > 5", ")", 499);
    j->rc = count_where(j->f, q, &j->n);
    free(q);
    return NULL;
}

static void deepest_query_fits_a_small_stack(void) {
    people f;
    OK(make_people(&f, "small-stack.db", 30));
    pthread_attr_t a;
    pthread_attr_init(&a);
    pthread_attr_setstacksize(&a, SMALL_STACK);
    deep_job j = {&f, -1, 0};
    pthread_t t;
    CHECK(pthread_create(&t, &a, deep_on_small_stack, &j) == 0);
    pthread_join(t, NULL);
    pthread_attr_destroy(&a);
    OK(j.rc);
    /* 499 levels of (age < 100 AND NOT ...), two nestings each (998): the innermost is
     * age <= 5 and each level out negates it, so an odd count of levels leaves ages 0..5 */
    CHECK(j.n == 6);
    close_people(&f);
}

/* Item 7: 100,000 AND/OR terms compiled (superlinearly) and then overflowed the stack in bind. */
static void long_chains_compile_and_run(void) {
    people f;
    OK(make_people(&f, "chains.db", 200));
    const int terms = 100000;
    size_t cap = (size_t)terms * 24;
    char *q = malloc(cap), *o = q;
    for (int i = 0; i < terms; i++) o += sprintf(o, "%sage == %d", i ? " OR " : "", 1000 + i);
    o += sprintf(o, " OR age == 7");
    uint64_t n;
    OK(count_where(&f, q, &n));
    CHECK(n == 4); /* 200 people, ages i % 50: 7, 57, 107, 157 */
    o = q;
    for (int i = 0; i < terms; i++) o += sprintf(o, "%sage < %d", i ? " && " : "", 1000 + i);
    o += sprintf(o, " && age >= 48");
    OK(count_where(&f, q, &n));
    CHECK(n == 8); /* ages 48, 49 four times each */
    /* 20,000 string literals: each sized by itself (it was sized by the rest of the query:
     * quadratic time and memory) */
    o = q;
    for (int i = 0; i < 20000; i++) o += sprintf(o, "%sname != 'x%d\\'\\u00e9'", i ? " AND " : "", i);
    o += sprintf(o, " AND age == 7");
    OK(count_where(&f, q, &n));
    CHECK(n == 4);
    /* mixed: AND binds tighter than OR */
    OK(count_where(&f, "age == 1 OR age == 2 AND name == 'p2' OR age == 3 AND age == 4", &n));
    CHECK(n == 4 + 1);
    free(q);
    close_people(&f);
}

/* Item 8: a query argument with NULL data crashed bind/encode_value; every call that takes a
 * value now checks it the same way. */
static void values_with_null_data_are_refused(void) {
    people f;
    OK(make_people(&f, "nulldata.db", 10));
    strata_txn_t *r;
    strata_query_t *q;
    OK(strata_txn_begin(f.db, 0, &r, E));
    OK(strata_query_compile(r, "Person", "name == $0", &q, E));
    strata_value bad = {.type = STRATA_TYPE_STRING, .u.bytes = {NULL, 5}};
    uint64_t n;
    EXPECT_CODE(strata_query_count(q, r, &bad, 1, &n, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "query argument $0") && strstr(tl_err.message, "5 bytes at NULL"));
    strata_query_free(q);
    OK(strata_query_compile(r, "Person", "age IN $0", &q, E));
    strata_value list = {.type = STRATA_TYPE_LIST, .u.list = {NULL, 3}};
    EXPECT_CODE(strata_query_count(q, r, &list, 1, &n, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "list of 3 values at NULL"));
    strata_value items[2] = {vint(3), {.type = STRATA_TYPE_BINARY, .u.bytes = {NULL, 2}}};
    list.u.list.items = items;
    list.u.list.count = 2;
    EXPECT_CODE(strata_query_count(q, r, &list, 1, &n, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "list item 1"));
    strata_value nested = {.type = STRATA_TYPE_LIST, .u.list = {&list, 1}};
    EXPECT_CODE(strata_query_count(q, r, &nested, 1, &n, E), STRATA_ERR_WRONG_TYPE);
    strata_value odd = {.type = (strata_type)99};
    EXPECT_CODE(strata_query_count(q, r, &odd, 1, &n, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "unknown value type 99"));
    items[1] = vint(4);
    OK(strata_query_count(q, r, &list, 1, &n, E));
    CHECK(n == 2);
    strata_query_free(q);
    strata_txn_free(r);
    /* the same value to obj_set and to an index lookup */
    strata_txn_t *w;
    strata_table_t *t;
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Person", &t, E));
    EXPECT_CODE(strata_obj_set(t, 0, f.name, &bad, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "'Person.name'") && strstr(tl_err.message, "5 bytes at NULL"));
    OK(strata_table_set_indexed(t, f.name, true, E));
    size_t count;
    EXPECT_CODE(strata_index_find(t, f.name, &bad, NULL, 0, &count, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_txn_free(w);
    close_people(&f);
}

/* Item 9: adding a primary key over duplicate values said EXISTS but kept the property. */
static void failed_schema_changes_leave_no_trace(void) {
    people f;
    OK(make_people(&f, "pk.db", 5));
    strata_txn_t *w;
    strata_table_t *t;
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Person", &t, E));
    size_t before, after;
    OK(strata_table_property_count(t, &before, E));
    strata_col_t c;
    EXPECT_CODE(strata_table_add_property(t, "id", STRATA_TYPE_STRING, STRATA_PROP_PRIMARY_KEY, NULL, &c, E),
                STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "'id'") && strstr(tl_err.message, "5 objects"));
    EXPECT_CODE(strata_table_add_property(t, "score", STRATA_TYPE_DOUBLE, STRATA_PROP_PRIMARY_KEY, NULL, &c, E),
                STRATA_ERR_WRONG_TYPE);
    OK(strata_table_property_count(t, &after, E));
    CHECK(after == before);
    EXPECT_CODE(strata_table_find_property(t, "id", &c, E), STRATA_ERR_NOT_FOUND);
    /* an existing property with duplicates: refused, and it is not the primary key */
    EXPECT_CODE(strata_table_set_primary_key(t, f.dogs, E), STRATA_ERR_WRONG_TYPE);
    strata_key_t k0 = -1, k1;
    OK(strata_obj_next(t, k0, &k0, E));
    OK(strata_obj_next(t, k0, &k1, E));
    OK(strata_obj_set(t, k1, f.name, (strata_value[]){vstr("p0")}, E));
    EXPECT_CODE(strata_table_set_primary_key(t, f.name, E), STRATA_ERR_EXISTS);
    strata_col_t pk = 99;
    OK(strata_table_primary_key(t, &pk, E));
    CHECK(pk == STRATA_NO_COL);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    strata_txn_t *r;
    OK(strata_txn_begin(f.db, 0, &r, E));
    OK(strata_table_open(r, "Person", &t, E));
    OK(strata_table_property_count(t, &after, E));
    CHECK(after == before);
    OK(strata_db_verify(f.db, E));
    strata_txn_free(r);
    close_people(&f);
}

/* Item 10: the _int calls took a byte-key tree's 8 bytes as a key. Item 11: obj_next after
 * INT64_MAX overflowed into a small key. */
static void wrong_tree_kind_and_last_key(void) {
    people f;
    OK(make_people(&f, "kinds.db", 3));
    strata_txn_t *w;
    strata_tree_t *bytes;
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    OK(strata_tree_open(w, "names", STRATA_KEY_BYTES, STRATA_TREE_CREATE, &bytes, E));
    EXPECT_CODE(strata_tree_put_int(bytes, 7, "x", 1, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "strata_tree_put_int") && strstr(tl_err.message, "'names'"));
    const void *v;
    size_t vl;
    EXPECT_CODE(strata_tree_get_int(bytes, 7, &v, &vl, E), STRATA_ERR_WRONG_TYPE);
    EXPECT_CODE(strata_tree_delete_int(bytes, 7, E), STRATA_ERR_WRONG_TYPE);
    uint64_t n = 9;
    OK(strata_tree_count(bytes, &n, E));
    CHECK(n == 0);
    strata_table_t *t;
    OK(strata_table_open(w, "Person", &t, E));
    strata_key_t k;
    EXPECT_CODE(strata_obj_next(t, INT64_MAX, &k, E), STRATA_ERR_NOT_FOUND);
    OK(strata_obj_next(t, INT64_MIN, &k, E));
    CHECK(k == 0);
    strata_txn_free(w);
    close_people(&f);
}

/* Every character of s complete: a lead byte followed by as many continuation bytes as it says. */
static bool utf8_whole(const char *str) {
    const unsigned char *s = (const unsigned char *)str;
    while (*s) {
        int more = *s < 0x80 ? 0 : (*s & 0xE0) == 0xC0 ? 1 : (*s & 0xF0) == 0xE0 ? 2
                 : (*s & 0xF8) == 0xF0 ? 3 : -1;
        if (more < 0) return false;
        s++;
        for (int i = 0; i < more; i++, s++)
            if ((*s & 0xC0) != 0x80) return false;
    }
    return true;
}

/* Item 12: messages that lost their reason. */
static void messages_keep_their_reason(void) {
    char longdir[5200];
    int n = snprintf(longdir, sizeof longdir, "%s", tl_dir);
    while (n < 5000) n += snprintf(longdir + n, sizeof longdir - (size_t)n, "/%s", "很长的目录名");
    strata_db_t *db;
    int rc = strata_db_open(longdir, NULL, &db, E);
    CHECK(rc != STRATA_OK);
    CHECK(strstr(tl_err.message, "too long") || strstr(tl_err.message, "No such file") ||
          strstr(tl_err.message, "File name too long"));
    CHECK(utf8_whole(tl_err.message)); /* no character cut in half */
    CHECK(strstr(tl_err.message, "...") != NULL);
    strata_options o;
    strata_options_init(&o);
    o.map_size = UINT64_MAX;
    EXPECT_CODE(strata_db_open(tl_path("map.db"), &o, &db, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "map_size 18446744073709551615"));
    people f;
    OK(make_people(&f, "msgs.db", 1));
    strata_txn_t *r;
    strata_table_t *t;
    strata_property_info info;
    OK(strata_txn_begin(f.db, 0, &r, E));
    OK(strata_table_open(r, "Person", &t, E));
    EXPECT_CODE(strata_table_property_at(t, SIZE_MAX, &info, E), STRATA_ERR_NOT_FOUND);
    CHECK(strstr(tl_err.message, "18446744073709551615") && strstr(tl_err.message, "3 properties"));
    strata_txn_free(r);
    close_people(&f);
}

/* Item 13: a backlink path of 8 hops walked every route again (4 s on 1,500 objects); each hop
 * now takes its objects once. The answers are checked against sets computed here. */
enum { HOP_PEOPLE = 1500, HOP_DOGS = 600 };

static void hop_dogs_of(int person, int out[2]) {
    out[0] = person % HOP_DOGS;
    out[1] = (person * 7 + 3) % HOP_DOGS;
}

/* The dogs reached from person p along dogs(.@links.Person.dogs)^rounds, as a set. */
static void hop_reach(int p, int rounds, bool *dogs) {
    static bool people_at[HOP_PEOPLE];
    memset(dogs, 0, HOP_DOGS);
    int d[2];
    hop_dogs_of(p, d);
    dogs[d[0]] = dogs[d[1]] = true;
    for (int r = 0; r < rounds; r++) {
        memset(people_at, 0, sizeof people_at);
        for (int q = 0; q < HOP_PEOPLE; q++) {
            hop_dogs_of(q, d);
            if (dogs[d[0]] || dogs[d[1]]) people_at[q] = true;
        }
        for (int q = 0; q < HOP_PEOPLE; q++)
            if (people_at[q]) {
                hop_dogs_of(q, d);
                dogs[d[0]] = dogs[d[1]] = true;
            }
    }
}

static void backlink_paths_take_each_object_once(void) {
    strata_db_t *db;
    strata_txn_t *w;
    strata_table_t *p, *d;
    strata_col_t dage, pdogs;
    OK(strata_db_open(tl_path("hops.db"), NULL, &db, E));
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Dog", &d, E));
    OK(strata_table_create(w, "Person", &p, E));
    OK(strata_table_add_property(d, "age", STRATA_TYPE_INT, 0, NULL, &dage, E));
    OK(strata_table_add_property(p, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &pdogs, E));
    for (int j = 0; j < HOP_DOGS; j++) {
        strata_key_t k;
        OK(strata_obj_create(d, &k, E));
        OK(strata_obj_set(d, k, dage, (strata_value[]){vint(j)}, E));
    }
    for (int i = 0; i < HOP_PEOPLE; i++) {
        strata_key_t k;
        int dd[2];
        hop_dogs_of(i, dd);
        OK(strata_obj_create(p, &k, E));
        for (int j = 0; j < 2; j++)
            OK(strata_list_insert(p, k, pdogs, (size_t)j,
                                  (strata_value[]){{.type = STRATA_TYPE_LINK, .u.link = dd[j]}}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    static const struct { const char *q; int rounds; int age; bool all; } cases[] = {
        {"dogs.@links.Person.dogs.dogs.@links.Person.dogs.dogs.@links.Person.dogs.dogs.age == 17",
         3, 17, false},
        {"dogs.@links.Person.dogs.dogs.@links.Person.dogs.dogs.age == 250", 2, 250, false},
        {"ALL dogs.@links.Person.dogs.dogs.age != 5", 1, 5, true},
        {"NONE dogs.@links.Person.dogs.dogs.@links.Person.dogs.dogs.@links.Person.dogs.dogs.age == 17",
         3, 17, true},
    };
    strata_txn_t *r;
    OK(strata_txn_begin(db, 0, &r, E));
    bool reach[HOP_DOGS];
    for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
        strata_query_t *q;
        strata_results_t *res;
        OK(strata_query_compile(r, "Person", cases[c].q, &q, E));
        OK(strata_query_run(q, r, NULL, 0, &res, E));
        size_t want = 0;
        for (int i = 0; i < HOP_PEOPLE; i++) {
            hop_reach(i, cases[c].rounds, reach);
            want += cases[c].all ? !reach[cases[c].age] : reach[cases[c].age];
        }
        if (strata_results_size(res) != want)
            fprintf(stderr, "  %s: %zu, expected %zu\n", cases[c].q, strata_results_size(res), want);
        CHECK(strata_results_size(res) == want);
        strata_results_free(res);
        strata_query_free(q);
    }
    strata_txn_free(r);
    strata_db_close(db, NULL);
}

/* Item 14: a second blocking write begin on the thread holding the write transaction waited
 * for itself forever. */
static void second_write_on_the_same_thread(void) {
    people f;
    OK(make_people(&f, "twice.db", 1));
    strata_txn_t *w, *w2 = NULL;
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    EXPECT_CODE(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w2, E), STRATA_ERR_TXN_STATE);
    CHECK(w2 == NULL && strstr(tl_err.message, "already holds the write transaction"));
    strata_txn_free(w);
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w2, E)); /* free again once it ended */
    strata_txn_free(w2);
    /* in-memory databases share their writer among handles of one name */
    strata_options o;
    strata_options_init(&o);
    o.durability = STRATA_DURABILITY_MEMORY;
    strata_db_t *m1, *m2;
    OK(strata_db_open("hostile-mem", &o, &m1, E));
    OK(strata_db_open("hostile-mem", &o, &m2, E));
    OK(strata_txn_begin(m1, STRATA_TXN_WRITE, &w, E));
    EXPECT_CODE(strata_txn_begin(m2, STRATA_TXN_WRITE, &w2, E), STRATA_ERR_TXN_STATE);
    strata_txn_free(w);
    strata_db_close(m2, NULL);
    strata_db_close(m1, NULL);
    close_people(&f);
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(deep_nesting_is_refused_by_name),
        TL_TEST(deepest_query_fits_a_small_stack),
        TL_TEST(long_chains_compile_and_run),
        TL_TEST(values_with_null_data_are_refused),
        TL_TEST(failed_schema_changes_leave_no_trace),
        TL_TEST(wrong_tree_kind_and_last_key),
        TL_TEST(messages_keep_their_reason),
        TL_TEST(backlink_paths_take_each_object_once),
        TL_TEST(second_write_on_the_same_thread),
    };
    return tl_run("hostile", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
