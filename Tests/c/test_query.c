/*
 * test_query.c — the query language and engine through strata.h: every operator and modifier
 * on the classic Person/Dog data (Chinese names, accented Latin for [c] and [d], nulls, empty
 * strings), paths through links and lists, SORT/DISTINCT/LIMIT, aggregates, errors, live
 * answers on newer versions, and a randomized test against a brute-force evaluator with and
 * without an index, sorted and unsorted, listed and counted, over packed leaves of every width.
 */
#include "testlib.h"

#include <math.h>

#ifndef QUERY_SUITE
#define QUERY_SUITE "query"
#endif

#include <stdint.h>

static strata_value vstr(const char *s) {
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
}
static strata_value vint(int64_t i) { return (strata_value){.type = STRATA_TYPE_INT, .u.i = i}; }
static strata_value vnull(void) { return (strata_value){.type = STRATA_TYPE_NULL}; }
static strata_value vlink(int64_t k) { return (strata_value){.type = STRATA_TYPE_LINK, .u.link = k}; }

typedef struct fixture {
    strata_db_t *db;
    strata_key_t people[6], dogs[5], google, apple;
} fixture;

/* Person {name (indexed), nick?, age, score?, company, dogs}; Dog {name, color, age};
 * Company {name}. */
static int build(fixture *f, const char *file) {
    strata_txn_t *w;
    strata_table_t *p, *d, *c;
    strata_col_t pn, nick, age, score, comp, pdogs, dn, dc, da, cn;
    int rc;
    if ((rc = tl_db_open(tl_path(file), &f->db)) ||
        (rc = strata_txn_begin(f->db, STRATA_TXN_WRITE, &w, E)) ||
        (rc = strata_table_create(w, "Company", &c, E)) || (rc = strata_table_create(w, "Dog", &d, E)) ||
        (rc = strata_table_create(w, "Person", &p, E)) ||
        (rc = strata_table_add_property(c, "name", STRATA_TYPE_STRING, 0, NULL, &cn, E)) ||
        (rc = strata_table_add_property(d, "name", STRATA_TYPE_STRING, 0, NULL, &dn, E)) ||
        (rc = strata_table_add_property(d, "color", STRATA_TYPE_STRING, 0, NULL, &dc, E)) ||
        (rc = strata_table_add_property(d, "age", STRATA_TYPE_INT, 0, NULL, &da, E)) ||
        (rc = strata_table_add_property(p, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &pn, E)) ||
        (rc = strata_table_add_property(p, "nick", STRATA_TYPE_STRING, STRATA_PROP_NULLABLE, NULL, &nick, E)) ||
        (rc = strata_table_add_property(p, "age", STRATA_TYPE_INT, 0, NULL, &age, E)) ||
        (rc = strata_table_add_property(p, "score", STRATA_TYPE_DOUBLE, STRATA_PROP_NULLABLE, NULL, &score, E)) ||
        (rc = strata_table_add_property(p, "company", STRATA_TYPE_LINK, 0, "Company", &comp, E)) ||
        (rc = strata_table_add_property(p, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &pdogs, E)))
        return rc;
    const char *cnames[] = {"GOOGLE", "Apple"};
    strata_key_t *ck[] = {&f->google, &f->apple};
    for (int i = 0; i < 2; i++)
        if ((rc = strata_obj_create(c, ck[i], E)) ||
            (rc = strata_obj_set(c, *ck[i], cn, (strata_value[]){vstr(cnames[i])}, E)))
            return rc;
    const char *dnames[] = {"小黑", "小白", "旺财", "Rex", "Zoë"};
    const char *colors[] = {"黑色", "白色", "黄色", "黑色", "white"};
    const int dages[] = {3, 1, 5, 7, 2};
    for (int i = 0; i < 5; i++)
        if ((rc = strata_obj_create(d, &f->dogs[i], E)) ||
            (rc = strata_obj_set(d, f->dogs[i], dn, (strata_value[]){vstr(dnames[i])}, E)) ||
            (rc = strata_obj_set(d, f->dogs[i], dc, (strata_value[]){vstr(colors[i])}, E)) ||
            (rc = strata_obj_set(d, f->dogs[i], da, (strata_value[]){vint(dages[i])}, E)))
            return rc;
    const char *names[] = {"张三", "李四", "小明", "José", "JOSE", ""};
    const char *nicks[] = {"三哥", NULL, "明明", "Pepe", NULL, "empty"};
    const int ages[] = {32, 28, 9, 45, 45, 0};
    const double scores[] = {9.5, -1, 7.25, 3.0, -1, 0.5}; /* -1: null */
    const int companies[] = {0, 1, -1, 0, 1, -1};
    for (int i = 0; i < 6; i++) {
        strata_key_t k;
        if ((rc = strata_obj_create(p, &k, E)) ||
            (rc = strata_obj_set(p, k, pn, (strata_value[]){vstr(names[i])}, E)) ||
            (rc = strata_obj_set(p, k, nick, nicks[i] ? (strata_value[]){vstr(nicks[i])} : (strata_value[]){vnull()}, E)) ||
            (rc = strata_obj_set(p, k, age, (strata_value[]){vint(ages[i])}, E)) ||
            (rc = strata_obj_set(p, k, score, scores[i] < 0 ? (strata_value[]){vnull()}
                                              : (strata_value[]){{.type = STRATA_TYPE_DOUBLE, .u.d = scores[i]}}, E)) ||
            (companies[i] >= 0 &&
             (rc = strata_obj_set(p, k, comp, (strata_value[]){vlink(companies[i] ? f->apple : f->google)}, E))))
            return rc;
        f->people[i] = k;
    }
    /* 张三: 小黑 小白 旺财; 李四: 小白; 小明: Rex; José: Zoë 小黑 */
    int lists[6][3] = {{0, 1, 2}, {1, -1, -1}, {3, -1, -1}, {4, 0, -1}, {-1, -1, -1}, {-1, -1, -1}};
    for (int i = 0; i < 6; i++)
        for (int j = 0; j < 3 && lists[i][j] >= 0; j++)
            if ((rc = strata_list_insert(p, f->people[i], pdogs, (size_t)j, (strata_value[]){vlink(f->dogs[lists[i][j]])}, E)))
                return rc;
    if ((rc = strata_txn_commit(w, E))) return rc;
    strata_txn_free(w);
    return STRATA_OK;
}

/* The names of the objects of `table` the query finds, in result order, joined by ','. */
static int run_names_in(fixture *f, const char *table, const char *q, const strata_value *args,
                        size_t nargs, char *out) {
    strata_txn_t *r;
    strata_query_t *query;
    strata_results_t *res;
    strata_table_t *p;
    strata_col_t pn;
    int rc;
    out[0] = 0;
    if ((rc = strata_txn_begin(f->db, STRATA_TXN_READ, &r, E))) return rc;
    if ((rc = strata_query_compile(r, table, q, &query, E)) == STRATA_OK) {
        rc = strata_query_run(query, r, args, nargs, &res, E);
        if (rc == STRATA_OK) {
            strata_table_open(r, table, &p, E);
            strata_table_find_property(p, "name", &pn, E);
            for (size_t i = 0; i < strata_results_size(res); i++) {
                strata_value v;
                strata_obj_get(p, strata_results_key(res, i), pn, &v, E);
                if (i) strcat(out, ",");
                strncat(out, v.u.bytes.data, v.u.bytes.len);
            }
            uint64_t count;
            if (strata_query_count(query, r, args, nargs, &count, E) == STRATA_OK && count != strata_results_size(res)) {
                fprintf(stderr, "  count %llu, results %zu for %s\n", (unsigned long long)count,
                        strata_results_size(res), q);
                rc = -1;
            }
            strata_results_free(res);
        }
        strata_query_free(query);
    }
    strata_txn_free(r);
    return rc;
}

static int run_names(fixture *f, const char *q, const strata_value *args, size_t nargs, char *out) {
    return run_names_in(f, "Person", q, args, nargs, out);
}

#define EXPECT_IN(f, table, q, want)                                                      \
    do {                                                                                  \
        char got_[512];                                                                   \
        OK(run_names_in(f, table, q, NULL, 0, got_));                                      \
        if (strcmp(got_, want) != 0) fprintf(stderr, "  %s\n    got  [%s]\n    want [%s]\n", q, got_, want); \
        CHECK(strcmp(got_, want) == 0);                                                   \
    } while (0)

#define EXPECT_NAMES(f, q, want)                                                          \
    do {                                                                                  \
        char got_[512];                                                                   \
        OK(run_names(f, q, NULL, 0, got_));                                                \
        if (strcmp(got_, want) != 0) fprintf(stderr, "  %s\n    got  [%s]\n    want [%s]\n", q, got_, want); \
        CHECK(strcmp(got_, want) == 0);                                                   \
    } while (0)

static void comparisons_strings_and_logic(void) {
    fixture f;
    OK(build(&f, "q1.db"));
    EXPECT_NAMES(&f, "age > 30", "张三,José,JOSE");
    EXPECT_NAMES(&f, "age >= 45 && age <= 45", "José,JOSE");
    EXPECT_NAMES(&f, "age == 28 OR age = 9", "李四,小明");
    EXPECT_NAMES(&f, "NOT age > 10", "小明,");
    EXPECT_NAMES(&f, "!(age != 0)", "");
    EXPECT_NAMES(&f, "age <> 45 AND age < 40 AND age > 5", "张三,李四,小明");
    EXPECT_NAMES(&f, "45 <= age", "José,JOSE");
    EXPECT_NAMES(&f, "age BETWEEN {9, 32}", "张三,李四,小明");
    EXPECT_NAMES(&f, "age IN {0, 9, 100}", "小明,");
    EXPECT_NAMES(&f, "TRUEPREDICATE", "张三,李四,小明,José,JOSE,");
    EXPECT_NAMES(&f, "FALSEPREDICATE OR age == 32", "张三");
    /* strings, Chinese, empty, nulls */
    EXPECT_NAMES(&f, "name == '张三'", "张三");
    EXPECT_NAMES(&f, "name BEGINSWITH '小'", "小明");
    EXPECT_NAMES(&f, "name == ''", "");
    EXPECT_NAMES(&f, "nick == nil", "李四,JOSE");
    EXPECT_NAMES(&f, "nick != null", "张三,小明,José,");
    EXPECT_NAMES(&f, "nick ENDSWITH '哥'", "张三");
    EXPECT_NAMES(&f, "nick CONTAINS '明'", "小明");
    EXPECT_NAMES(&f, "name LIKE '?四'", "李四");
    EXPECT_NAMES(&f, "name LIKE '*o*'", "José");
    EXPECT_NAMES(&f, "score > 5", "张三,小明");
    EXPECT_NAMES(&f, "score == nil", "李四,JOSE");
    EXPECT_NAMES(&f, "score < 100", "张三,小明,José,");
    /* [c] and [d] */
    EXPECT_NAMES(&f, "name ==[c] 'josé'", "José");
    EXPECT_NAMES(&f, "name ==[d] 'Jose'", "José");
    EXPECT_NAMES(&f, "name ==[cd] 'jose'", "José,JOSE");
    EXPECT_NAMES(&f, "name BEGINSWITH[c] 'JO'", "José,JOSE");
    EXPECT_NAMES(&f, "name CONTAINS[cd] 'SE'", "José,JOSE");
    EXPECT_NAMES(&f, "name LIKE[c] 'j?s*'", "José,JOSE");
    EXPECT_NAMES(&f, "name IN[c] {'JOSÉ', 'x'}", "José");
    EXPECT_NAMES(&f, "name BEGINSWITH \"Jos\\u00e9\"", "José");
    OK(strata_db_close(f.db, E));
}

static void paths_arguments_and_suffixes(void) {
    fixture f;
    OK(build(&f, "q2.db"));
    EXPECT_NAMES(&f, "company.name == 'GOOGLE'", "张三,José");
    EXPECT_NAMES(&f, "company.name == nil", "小明,");
    EXPECT_NAMES(&f, "company == nil", "小明,");
    EXPECT_NAMES(&f, "ANY dogs.color == '黑色'", "张三,小明,José");
    EXPECT_NAMES(&f, "dogs.color == '白色'", "张三,李四");
    EXPECT_NAMES(&f, "ALL dogs.color == '黑色'", "小明,JOSE,");
    EXPECT_NAMES(&f, "NONE dogs.color == '黑色'", "李四,JOSE,");
    EXPECT_NAMES(&f, "dogs.@count > 1", "张三,José");
    EXPECT_NAMES(&f, "dogs.@size == 0", "JOSE,");
    EXPECT_NAMES(&f, "name.@count == 2", "张三,李四,小明");
    EXPECT_NAMES(&f, "ANY dogs.age > 6 OR dogs.name ==[c] 'zoë'", "小明,José");
    /* SUBQUERY and backlinks */
    EXPECT_NAMES(&f, "SUBQUERY(dogs, $d, $d.age > 2).@count >= 2", "张三");
    /* a key path without the variable is the element's too (NSPredicate's reading): Dog.age */
    EXPECT_NAMES(&f, "SUBQUERY(dogs, $d, age > 2).@count >= 2", "张三");
    EXPECT_NAMES(&f, "SUBQUERY(dogs, $d, $d.color == '黑色' AND $d.age > 2).@count == 1", "张三,小明,José");
    EXPECT_NAMES(&f, "SUBQUERY(dogs, $d, SUBQUERY($d.@links.Person.dogs, $o, $o.age < 30).@count > 0).@count > 0",
                 "张三,李四,小明");
    EXPECT_IN(&f, "Dog", "@links.Person.dogs.@count == 2", "小黑,小白");
    EXPECT_IN(&f, "Dog", "ANY @links.Person.dogs.name == '李四'", "小白");
    EXPECT_IN(&f, "Dog", "@links.Person.dogs.age > 40", "小黑,Zoë");
    EXPECT_IN(&f, "Dog", "NONE @links.Person.dogs.age > 40 AND @links.Person.dogs.@count > 0", "小白,旺财,Rex");
    EXPECT_IN(&f, "Dog", "SUBQUERY(@links.Person.dogs, $p, $p.age < 30).@count > 0", "小白,Rex");
    EXPECT_IN(&f, "Dog", "@links.Person.dogs.company.name == 'Apple'", "小白");
    /* arguments */
    char got[512];
    strata_value a[] = {vstr("李四"), vint(30)};
    OK(run_names(&f, "name == $0 OR age > $1", a, 2, got));
    CHECK(strcmp(got, "张三,李四,José,JOSE") == 0);
    OK(run_names(&f, "name == %@ OR age > %@", a, 2, got));
    CHECK(strcmp(got, "张三,李四,José,JOSE") == 0);
    strata_value items[] = {vint(9), vint(45)};
    strata_value list = {.type = STRATA_TYPE_LIST, .u.list = {items, 2}};
    OK(run_names(&f, "age IN $0", &list, 1, got));
    CHECK(strcmp(got, "小明,José,JOSE") == 0);
    /* suffixes */
    EXPECT_NAMES(&f, "TRUEPREDICATE SORT(age DESC, name ASC)", "JOSE,José,张三,李四,小明,");
    EXPECT_NAMES(&f, "age > 0 SORT(name)", "JOSE,José,小明,张三,李四");
    EXPECT_NAMES(&f, "TRUEPREDICATE SORT(nick ASC) LIMIT(3)", "李四,JOSE,José");
    /* no company: after the others ascending, before them descending (realm-core's order) */
    EXPECT_NAMES(&f, "TRUEPREDICATE SORT(company.name)", "李四,JOSE,张三,José,小明,");
    EXPECT_NAMES(&f, "TRUEPREDICATE SORT(company.name DESC)", "小明,,张三,José,李四,JOSE");
    /* DISTINCT through a null link drops the objects the link breaks (realm-core's DISTINCT) */
    EXPECT_NAMES(&f, "TRUEPREDICATE DISTINCT(company.name)", "张三,李四");
    EXPECT_NAMES(&f, "name == '小明' DISTINCT(company.name)", "");
    EXPECT_NAMES(&f, "TRUEPREDICATE DISTINCT(age)", "张三,李四,小明,José,");
    EXPECT_NAMES(&f, "age > 0 DISTINCT(age) SORT(age DESC) LIMIT(2)", "José,张三");
    EXPECT_NAMES(&f, "age > 0 LIMIT(0)", "");
    /* SORT by an indexed property with LIMIT walks the index in order */
    EXPECT_NAMES(&f, "TRUEPREDICATE SORT(name) LIMIT(4)", ",JOSE,José,小明");
    EXPECT_NAMES(&f, "age > 0 SORT(name ASC) LIMIT(2)", "JOSE,José");
    EXPECT_NAMES(&f, "age > 100 SORT(name ASC) LIMIT(2)", "");
    /* the index answers ==, IN, BEGINSWITH and ranges; the rest of the predicate still applies */
    EXPECT_NAMES(&f, "name BEGINSWITH 'J' AND age > 44 SORT(name DESC)", "José,JOSE");
    EXPECT_NAMES(&f, "name > 'J' AND name < 'K'", "José,JOSE"); /* key order */
    EXPECT_NAMES(&f, "name IN {'小明', '李四', '李四'}", "李四,小明");
    OK(strata_db_close(f.db, E));
}

static void aggregates_over_results(void) {
    fixture f;
    OK(build(&f, "q3.db"));
    strata_txn_t *r;
    strata_query_t *q;
    strata_results_t *res;
    strata_table_t *p;
    strata_col_t age, score, name;
    OK(strata_txn_begin(f.db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Person", &p, E));
    OK(strata_table_find_property(p, "age", &age, E));
    OK(strata_table_find_property(p, "score", &score, E));
    OK(strata_table_find_property(p, "name", &name, E));
    OK(strata_query_compile(r, "Person", "age > 5", &q, E));
    OK(strata_query_run(q, r, NULL, 0, &res, E));
    strata_value v;
    OK(strata_results_aggregate(res, p, age, STRATA_AGG_SUM, &v, E));
    CHECK(v.type == STRATA_TYPE_INT && v.u.i == 32 + 28 + 9 + 45 + 45);
    OK(strata_results_aggregate(res, p, age, STRATA_AGG_MIN, &v, E));
    CHECK(v.u.i == 9);
    OK(strata_results_aggregate(res, p, age, STRATA_AGG_MAX, &v, E));
    CHECK(v.u.i == 45);
    OK(strata_results_aggregate(res, p, score, STRATA_AGG_AVG, &v, E));
    CHECK(v.type == STRATA_TYPE_DOUBLE && v.u.d == (9.5 + 7.25 + 3.0) / 3);
    OK(strata_results_aggregate(res, p, score, STRATA_AGG_COUNT, &v, E));
    CHECK(v.u.i == 3); /* nulls ignored */
    EXPECT_CODE(strata_results_aggregate(res, p, name, STRATA_AGG_SUM, &v, E), STRATA_ERR_WRONG_TYPE);
    strata_results_free(res);
    OK(strata_query_run(q, r, NULL, 0, &res, E));
    strata_query_free(q);
    /* @sum/@avg/@min/@max over a list of dogs' ages is not a list of numbers: refused */
    EXPECT_CODE(strata_query_compile(r, "Person", "dogs.@sum > 3", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_results_free(res);
    strata_txn_free(r);
    OK(strata_db_close(f.db, E));
}

static void errors_name_the_column_and_the_problem(void) {
    fixture f;
    OK(build(&f, "q4.db"));
    strata_txn_t *r;
    strata_query_t *q;
    OK(strata_txn_begin(f.db, STRATA_TXN_READ, &r, E));
    struct { const char *q, *words; } bad[] = {
        {"age >", "column 6"},
        {"age > 3 AND", "column 12: expected a predicate"},
        {"age 3", "column 5: expected a comparison operator"},
        {"height > 3", "table 'Person' has no property 'height'"},
        {"company.height == 1", "table 'Company' has no property 'height'"},
        {"age == 'x'", "cannot compare age (a int) with a string"},
        {"name > 3", "cannot compare name (a string) with a int"},
        {"(age > 3", "expected ')'"},
        {"name == 'abc", "unterminated string"},
        {"age > 3 SORT(age", "expected ',' or ')'"},
        {"age > 3 LIMIT(-1)", "non-negative integer"},
        {"age BETWEEN {1}", "2 values, not 1"},
        {"ANY age > 3", "need a path through a list"},
        {"age ==[c] 3 ~", "unexpected character '~'"},
        {"SUBQUERY(dogs, $d, height > 1).@count > 0", "table 'Dog' has no property 'height'"},
        {"SUBQUERY(name, $d, $d.age > 1).@count > 0", "needs a list of links or @links"},
        {"SUBQUERY(dogs, $d, $d.age > 1) > 0", "expected .@count"},
        {"@links.Dog.name == 'x'", "'Dog.name' does not link to 'Person'"},
        {"@links.Cat.x == 1", "no table named 'Cat'"},
        {"", "expected a predicate"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int rc = strata_query_compile(r, "Person", bad[i].q, &q, E);
        if (rc == STRATA_OK) strata_query_free(q);
        if (rc == STRATA_OK || !strstr(tl_err.message, bad[i].words))
            fprintf(stderr, "  %s -> %s\n", bad[i].q, rc ? tl_err.message : "compiled");
        CHECK(rc != STRATA_OK && strstr(tl_err.message, bad[i].words));
    }
    EXPECT_CODE(strata_query_compile(r, "Nobody", "age > 3", &q, E), STRATA_ERR_NOT_FOUND);
    /* arguments: too few, wrong type */
    OK(strata_query_compile(r, "Person", "age > $1", &q, E));
    CHECK(strata_query_arg_count(q) == 2);
    strata_results_t *res;
    EXPECT_CODE(strata_query_run(q, r, (strata_value[]){vint(1)}, 1, &res, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "takes 2 arguments, 1 given"));
    EXPECT_CODE(strata_query_run(q, r, (strata_value[]){vint(1), vstr("x")}, 2, &res, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "int") && strstr(tl_err.message, "string"));
    strata_query_free(q);
    strata_txn_free(r);
    OK(strata_db_close(f.db, E));
}

static void a_query_gives_the_newer_answer_on_a_newer_version(void) {
    fixture f;
    OK(build(&f, "q5.db"));
    strata_txn_t *r, *w;
    strata_query_t *q;
    uint64_t n;
    OK(strata_txn_begin(f.db, STRATA_TXN_READ, &r, E));
    OK(strata_query_compile(r, "Person", "age > 30", &q, E));
    OK(strata_query_count(q, r, NULL, 0, &n, E));
    CHECK(n == 3);
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    strata_table_t *p;
    strata_col_t age;
    OK(strata_table_open(w, "Person", &p, E));
    OK(strata_table_find_property(p, "age", &age, E));
    OK(strata_obj_set(p, f.people[1], age, (strata_value[]){vint(60)}, E));
    OK(strata_query_count(q, w, NULL, 0, &n, E)); /* a write transaction sees its own change */
    CHECK(n == 4);
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_query_count(q, r, NULL, 0, &n, E)); /* the old snapshot keeps its answer */
    CHECK(n == 3);
    OK(strata_txn_refresh(r, E));
    OK(strata_query_count(q, r, NULL, 0, &n, E));
    CHECK(n == 4);
    strata_query_free(q);
    strata_txn_free(r);
    OK(strata_db_close(f.db, E));
}


/* A new database (file in the test folder) in a write transaction with an empty table. */
static int new_table(const char *file, const char *table, strata_db_t **db, strata_txn_t **w,
                     strata_table_t **t) {
    int rc = tl_db_open(tl_path(file), db);
    if (rc == STRATA_OK) rc = strata_txn_begin(*db, STRATA_TXN_WRITE, w, E);
    if (rc == STRATA_OK) rc = strata_table_create(*w, table, t, E);
    return rc;
}

static void literals_of_every_kind(void) {
    strata_db_t *db;
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t at, oid, uuid, bin, flag, dbl;
    OK(new_table("q6.db", "Event", &db, &w, &t));
    OK(strata_table_add_property(t, "at", STRATA_TYPE_TIMESTAMP, STRATA_PROP_INDEXED, NULL, &at, E));
    OK(strata_table_add_property(t, "oid", STRATA_TYPE_OBJECT_ID, STRATA_PROP_NULLABLE, NULL, &oid, E));
    OK(strata_table_add_property(t, "u", STRATA_TYPE_UUID, 0, NULL, &uuid, E));
    OK(strata_table_add_property(t, "data", STRATA_TYPE_BINARY, 0, NULL, &bin, E));
    OK(strata_table_add_property(t, "flag", STRATA_TYPE_BOOL, 0, NULL, &flag, E));
    OK(strata_table_add_property(t, "d", STRATA_TYPE_DOUBLE, 0, NULL, &dbl, E));
    strata_col_t nums;
    OK(strata_table_add_property(t, "nums", STRATA_TYPE_INT, STRATA_PROP_LIST | STRATA_PROP_NULLABLE, NULL, &nums, E));
    int64_t secs[] = {1483272000 /* 2017-01-01 12:00:00 */, 1700000000, 1700000000, -86400};
    for (int i = 0; i < 4; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, at, (strata_value[]){{.type = STRATA_TYPE_TIMESTAMP, .u.timestamp = {secs[i], i == 2 ? 5 : 0}}}, E));
        strata_value o = {.type = STRATA_TYPE_OBJECT_ID};
        memset(o.u.object_id, i, 12);
        OK(strata_obj_set(t, k, oid, i == 3 ? (strata_value[]){vnull()} : &o, E));
        strata_value u = {.type = STRATA_TYPE_UUID};
        memset(u.u.uuid, 0x10 * i, 16);
        OK(strata_obj_set(t, k, uuid, &u, E));
        OK(strata_obj_set(t, k, bin, (strata_value[]){{.type = STRATA_TYPE_BINARY, .u.bytes = {"\0\1\2\3", (size_t)i}}}, E));
        OK(strata_obj_set(t, k, flag, (strata_value[]){{.type = STRATA_TYPE_BOOL, .u.b = i % 2}}, E));
        OK(strata_obj_set(t, k, dbl, (strata_value[]){{.type = STRATA_TYPE_DOUBLE, .u.d = i * 1.5}}, E));
        /* nums: i+1 values 1..i+1, and a null in object 2 */
        for (int j = 0; j <= i; j++)
            OK(strata_list_insert(t, k, nums, (size_t)j, (strata_value[]){vint(j + 1)}, E));
        if (i == 2) OK(strata_list_insert(t, k, nums, 0, (strata_value[]){vnull()}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    struct { const char *q; uint64_t want; } cases[] = {
        {"at == 2017-01-01@12:00:00", 1},
        {"at > T1700000000:0", 1},
        {"at >= T1700000000:0", 2},
        {"at < 1970-01-01@00:00:00", 1},
        {"at BETWEEN {2017-01-01, T1700000000:5}", 3},
        {"oid == oid(010101010101010101010101)", 1},
        {"oid == nil", 1},
        {"oid != oid(000000000000000000000000)", 3},
        {"u == uuid(20202020-2020-2020-2020-202020202020)", 1},
        {"data == $0", 1},
        {"data BEGINSWITH $0", 3},
        {"data.@size > 1", 2},
        {"flag == true", 2},
        {"flag != false AND d > 1", 2},
        {"d IN {0, 4.5}", 2},
        {"d >= -0.5e1 AND d < .5", 1},
        {"nums.@sum == 6", 1},           /* 1+2+3 (object 2; its null ignored) */
        {"nums.@avg == 2.5", 1},         /* object 3: 1..4 */
        {"nums.@min == 1", 4},
        {"nums.@max >= 3", 2},
        {"nums.@count == 4", 2},         /* object 2 counts its null */
        {"ANY nums == nil", 1},
        {"ALL nums > 0", 3},
    };
    strata_value arg = {.type = STRATA_TYPE_BINARY, .u.bytes = {"\0", 1}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        strata_query_t *q;
        uint64_t n = 0;
        OK(strata_query_compile(r, "Event", cases[i].q, &q, E));
        OK(strata_query_count(q, r, &arg, 1, &n, E));
        strata_query_free(q);
        if (n != cases[i].want) fprintf(stderr, "  %s: %llu, expected %llu\n", cases[i].q, (unsigned long long)n, (unsigned long long)cases[i].want);
        CHECK(n == cases[i].want);
    }
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ float and double columns */

/* A float or double property against numbers runs column-wise over its leaves (cmp_real): the
 * same answers as the row-by-row order (num_cmp: NaN equals NaN and sorts below every number,
 * -0 equals 0, an integer or float argument compared as a double, a null row matches only !=),
 * over several clusters, with properties added after the first clusters were written (no leaf
 * there: null, or 0 when not nullable), alone and inside AND and OR. */
static int real_order_brute(double x, double y) {
    if (isnan(x) || isnan(y)) return isnan(y) - isnan(x);
    return (x > y) - (x < y);
}

static bool real_match_brute(int op, bool null, double v, double k0, double k1) {
    if (null) return op == 1;
    int o = real_order_brute(v, k0);
    switch (op) {
    case 0: return o == 0;
    case 1: return o != 0;
    case 2: return o < 0;
    case 3: return o <= 0;
    case 4: return o > 0;
    case 5: return o >= 0;
    default: return o >= 0 && real_order_brute(v, k1) <= 0;
    }
}

/* Object k's nullable double (null one time in one_in) and float, random from a pool with NaN,
 * -0 and infinities; what was set into *null, *dv, *fv. */
static void set_random_reals(strata_table_t *t, strata_key_t k, strata_col_t cdbl, strata_col_t cflt,
                             unsigned one_in, bool *null, double *dv, double *fv) {
    static const double pool[] = {0.0, -0.0, 1.5, -2.25, 3.0, 1e300, -1e300, 0.1, 2.5, NAN, INFINITY, -INFINITY, 7.0};
    enum { POOL = sizeof pool / sizeof *pool };
    *null = rnd() % one_in == 0;
    *dv = pool[rnd() % POOL];
    *fv = (float)pool[rnd() % POOL];
    OK(strata_obj_set(t, k, cdbl, *null ? (strata_value[]){vnull()}
                                        : (strata_value[]){{.type = STRATA_TYPE_DOUBLE, .u.d = *dv}}, E));
    OK(strata_obj_set(t, k, cflt, (strata_value[]){{.type = STRATA_TYPE_FLOAT, .u.f = (float)*fv}}, E));
}

static void real_columns_compare_column_wise(void) {
    enum { N = 700, LATER = 400 }; /* objects; the first LATER exist before g and h */
    strata_db_t *db;
    OK(tl_db_open(tl_path("reals.db"), &db));
    static double d[N], f[N], g[N], h[N];
    static bool dnull[N], gnull[N];
    strata_col_t cd, cf, cg, ch;
    strata_txn_t *w;
    strata_table_t *t;
    for (int phase = 0; phase < 2; phase++) {
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        if (phase == 0) {
            OK(strata_table_create(w, "Real", &t, E));
            OK(strata_table_add_property(t, "d", STRATA_TYPE_DOUBLE, STRATA_PROP_NULLABLE, NULL, &cd, E));
            OK(strata_table_add_property(t, "f", STRATA_TYPE_FLOAT, 0, NULL, &cf, E));
        } else {
            OK(strata_table_open(w, "Real", &t, E));
            OK(strata_table_add_property(t, "g", STRATA_TYPE_DOUBLE, STRATA_PROP_NULLABLE, NULL, &cg, E));
            OK(strata_table_add_property(t, "h", STRATA_TYPE_FLOAT, 0, NULL, &ch, E));
        }
        for (int i = phase ? LATER : 0; i < (phase ? N : LATER); i++) {
            strata_key_t k;
            OK(strata_obj_create(t, &k, E));
            CHECK(k == i);
            set_random_reals(t, k, cd, cf, 5, &dnull[i], &d[i], &f[i]);
            if (phase) set_random_reals(t, k, cg, ch, 4, &gnull[i], &g[i], &h[i]);
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
    }
    for (int i = 0; i < LATER; i++) { gnull[i] = true; h[i] = 0; } /* no leaf: the defaults */
    static const char *ops[] = {"==", "!=", "<", "<=", ">", ">=", "BETWEEN"};
    const char *props[] = {"d", "f", "g", "h"};
    const double *vals[] = {d, f, g, h};
    const bool *nulls[] = {dnull, NULL, gnull, NULL};
    strata_value args[] = {{.type = STRATA_TYPE_INT, .u.i = 3}, {.type = STRATA_TYPE_DOUBLE, .u.d = 2.5},
                           {.type = STRATA_TYPE_DOUBLE, .u.d = NAN}, {.type = STRATA_TYPE_DOUBLE, .u.d = -0.0},
                           {.type = STRATA_TYPE_FLOAT, .u.f = 0.1f}, {.type = STRATA_TYPE_INT, .u.i = -1},
                           {.type = STRATA_TYPE_DOUBLE, .u.d = INFINITY}};
    enum { NARGS = sizeof args / sizeof *args };
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    int checked = 0;
    for (int pi = 0; pi < 4; pi++)
        for (int op = 0; op < 7; op++)
            for (int a = 0; a < NARGS; a++) {
                int b = (a + 3) % NARGS;
                char text[128];
                if (op == 6) snprintf(text, sizeof text, "%s BETWEEN {$%d, $%d}", props[pi], a, b);
                else snprintf(text, sizeof text, "%s %s $%d", props[pi], ops[op], a);
                double k0 = args[a].type == STRATA_TYPE_INT ? (double)args[a].u.i
                            : args[a].type == STRATA_TYPE_FLOAT ? args[a].u.f : args[a].u.d;
                double k1 = args[b].type == STRATA_TYPE_INT ? (double)args[b].u.i
                            : args[b].type == STRATA_TYPE_FLOAT ? args[b].u.f : args[b].u.d;
                /* alone, and ANDed / ORed with an integer-free term on another real column */
                for (int form = 0; form < 3; form++) {
                    char full[200];
                    if (form == 0) snprintf(full, sizeof full, "%s", text);
                    else snprintf(full, sizeof full, "(%s) %s f >= 0", text, form == 1 ? "AND" : "OR");
                    uint64_t want = 0, got = 0;
                    for (int i = 0; i < N; i++) {
                        bool m = real_match_brute(op, nulls[pi] && nulls[pi][i], vals[pi][i], k0, k1);
                        bool other = real_match_brute(5, false, f[i], 0, 0);
                        want += form == 0 ? m : form == 1 ? (m && other) : (m || other);
                    }
                    strata_query_t *q;
                    OK(strata_query_compile(r, "Real", full, &q, E));
                    OK(strata_query_count(q, r, args, NARGS, &got, E));
                    strata_query_free(q);
                    if (got != want) fprintf(stderr, "  %s: %llu, expected %llu\n", full, (unsigned long long)got, (unsigned long long)want);
                    CHECK(got == want);
                    checked++;
                }
            }
    CHECK(checked == 4 * 7 * NARGS * 3);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* Integer and bool properties added after the first clusters were written: those clusters have
 * no leaf, and their rows compare as the default (0, false, or null when nullable). */
static void packed_properties_added_later_hold_their_default(void) {
    enum { N = 700, LATER = 400 };
    static int64_t nv[N], mv[N];
    static bool bv[N], mnull[N];
    strata_db_t *db;
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t cn, cb, cm;
    OK(new_table("later.db", "L", &db, &w, &t));
    for (int i = 0; i < LATER; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        mnull[i] = true;
    }
    OK(strata_table_add_property(t, "n", STRATA_TYPE_INT, 0, NULL, &cn, E));
    OK(strata_table_add_property(t, "b", STRATA_TYPE_BOOL, 0, NULL, &cb, E));
    OK(strata_table_add_property(t, "m", STRATA_TYPE_INT, STRATA_PROP_NULLABLE, NULL, &cm, E));
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "L", &t, E));
    for (int i = LATER; i < N; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        nv[i] = (int64_t)(rnd() % 7) - 3, bv[i] = rnd() % 2, mnull[i] = rnd() % 4 == 0, mv[i] = (int64_t)(rnd() % 5);
        OK(strata_obj_set(t, k, cn, (strata_value[]){vint(nv[i])}, E));
        OK(strata_obj_set(t, k, cb, (strata_value[]){{.type = STRATA_TYPE_BOOL, .u.b = bv[i]}}, E));
        OK(strata_obj_set(t, k, cm, (strata_value[]){mnull[i] ? vnull() : vint(mv[i])}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    static const char *texts[] = {"n == 0", "n != 0", "n > -1", "n IN {0, 2}", "b == false",
                                  "m == nil", "m != 3", "m < 2"};
    for (int q = 0; q < 8; q++) {
        uint64_t want = 0, got;
        for (int i = 0; i < N; i++) {
            int64_t n = nv[i], m = mv[i];
            bool mn = mnull[i];
            bool hit[] = {n == 0, n != 0, n > -1, n == 0 || n == 2, !bv[i], mn, mn || m != 3, !mn && m < 2};
            want += hit[q];
        }
        strata_query_t *qq;
        OK(strata_query_compile(r, "L", texts[q], &qq, E));
        OK(strata_query_count(qq, r, NULL, 0, &got, E));
        strata_query_free(qq);
        if (got != want) fprintf(stderr, "  %s: %llu, expected %llu\n", texts[q], (unsigned long long)got, (unsigned long long)want);
        CHECK(got == want);
    }
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ strings column-wise */

/* Stored in string_columns_compare_column_wise: empty, cases, accents (precomposed and not),
 * CJK, LIKE's wildcards as text, and a big value (kept in an overflow run). */
static const char *const str_words[] = {"", "a", "A", "abc", "ABC", "abd", "ab", "b", "\xc3\x81" "bc",
                                        "\xc3\xa1" "bc", "a\xcc\x81" "bc", "zz", "\xe6\x97\xa5\xe6\x9c\xac",
                                        "\xe6\x97\xa5\xe6\x9c\xac\xe8\xaa\x9e", "x*y", "b?c", "big"};
enum { STR_WORDS = sizeof str_words / sizeof *str_words };
static char str_big[1600]; /* "big": 1,599 bytes, 'a's with "bc" inside and "zz" at the end */

static strata_value str_word(int w) {
    if (w < 0) return vnull();
    return w == STR_WORDS - 1 ? vstr(str_big) : vstr(str_words[w]);
}

/* Each object's s (nullable, indexed) and p (not nullable) are also the one element of the
 * lists ss and pl, so `ANY ss op x` (read object by object, through the list) is the oracle of
 * `s op x` (column-wise: cmp_str, or an index's candidates cluster by cluster). */
static void set_str_pair(strata_table_t *t, strata_key_t k, strata_col_t one, strata_col_t list, int w,
                         bool first) {
    strata_value v = str_word(w);
    OK(strata_obj_set(t, k, one, &v, E));
    if (first) OK(strata_list_insert(t, k, list, 0, &v, E));
    else OK(strata_list_set(t, k, list, 0, &v, E));
}

static int str_failures;

static uint64_t str_count(strata_txn_t *txn, const char *text, const strata_value *args, size_t nargs) {
    strata_query_t *q;
    uint64_t n = UINT64_MAX; /* (matches no count: a failure shows as a mismatch too) */
    if (strata_query_compile(txn, "Str", text, &q, E) == STRATA_OK) {
        if (strata_query_count(q, txn, args, nargs, &n, E) != STRATA_OK) n = UINT64_MAX;
        strata_query_free(q);
    }
    if (n == UINT64_MAX) {
        fprintf(stderr, "  %s: %s\n", text, tl_err.message);
        str_failures++;
    }
    return n;
}

/* Every operator, with and without [c]/[d], on every stored word and null; alone, ANDed and
 * ORed with a term on the other column, and ANDed with a range the index serves — against
 * the same through the lists; then in a write transaction that changed some objects. */
static void str_check_all(strata_txn_t *txn, bool quick) {
    static const char *ops[] = {"==", "!=", "<", "<=", ">", ">=", "BEGINSWITH", "ENDSWITH", "CONTAINS", "LIKE"};
    static const char *flags[] = {"", "[c]", "[d]", "[cd]"};
    strata_value args[STR_WORDS + 1];
    for (int i = 0; i < STR_WORDS; i++) args[i] = str_word(i);
    args[STR_WORDS] = vnull();
    int checked = 0;
    for (int prop = 0; prop < 2; prop++)
        for (int op = 0; op < 10; op++)
            for (int f = 0; f < 4; f++) {
                if (f && (op >= 2 && op <= 5)) continue; /* no [c] on orderings */
                for (int a = quick ? (op + f) % 3 : 0; a <= STR_WORDS; a += quick ? 3 : 1) {
                    if (op == 9 && a == STR_WORDS) continue; /* LIKE null: no pattern */
                    const char *one = prop ? "p" : "s", *list = prop ? "pl" : "ss";
                    for (int form = (a + op + f) % 4; form < 4; form += quick ? 4 : 2) {
                        static const char *tails[] = {"", " AND p != 'zz'", " OR p BEGINSWITH 'a'", " AND s >= 'ab'"};
                        static const char *ltails[] = {"", " AND ANY pl != 'zz'", " OR ANY pl BEGINSWITH 'a'", " AND ANY ss >= 'ab'"};
                        char text[160], oracle[160];
                        snprintf(text, sizeof text, "(%s %s%s $%d)%s", one, ops[op], flags[f], a, tails[form]);
                        snprintf(oracle, sizeof oracle, "(ANY %s %s%s $%d)%s", list, ops[op], flags[f], a, ltails[form]);
                        uint64_t got = str_count(txn, text, args, STR_WORDS + 1);
                        uint64_t want = str_count(txn, oracle, args, STR_WORDS + 1);
                        if (got != want) fprintf(stderr, "  %s: %llu, the lists say %llu\n", text, (unsigned long long)got, (unsigned long long)want);
                        CHECK(got == want);
                        checked++;
                    }
                }
            }
    /* IN (a few, and 8 or more: a sorted set), BETWEEN, a chain of != folded into NOT IN */
    const char *more[][2] = {
        {"s IN {'abc', 'zz', 'A', nil}", "ANY ss IN {'abc', 'zz', 'A', nil}"},
        {"p IN {'', 'a', 'ab', 'abc', 'abd', 'b', 'zz', 'x*y', 'b?c'}", "ANY pl IN {'', 'a', 'ab', 'abc', 'abd', 'b', 'zz', 'x*y', 'b?c'}"},
        {"s BETWEEN {'ab', 'b'}", "ANY ss BETWEEN {'ab', 'b'}"},
        {"p BETWEEN {'', 'abc'} AND s != nil", "ANY pl BETWEEN {'', 'abc'} AND ANY ss != nil"},
        {"s != 'a' AND s != 'A' AND s != 'abc' AND s != 'ABC' AND s != 'abd' AND s != 'ab' AND s != 'b' AND s != 'zz' AND s != ''",
         "NOT (ANY ss IN {'a', 'A', 'abc', 'ABC', 'abd', 'ab', 'b', 'zz', ''})"},
        {"s CONTAINS[c] 'B' AND s ENDSWITH 'c' AND p LIKE[c] '*B*' AND NOT s BEGINSWITH[d] 'a'",
         "ANY ss CONTAINS[c] 'B' AND ANY ss ENDSWITH 'c' AND ANY pl LIKE[c] '*B*' AND NOT ANY ss BEGINSWITH[d] 'a'"},
        {"s >= 'a' AND s < 'b' AND s CONTAINS 'zz'", "ANY ss >= 'a' AND ANY ss < 'b' AND ANY ss CONTAINS 'zz'"},
    };
    for (size_t i = 0; i < sizeof more / sizeof *more; i++) {
        uint64_t got = str_count(txn, more[i][0], NULL, 0), want = str_count(txn, more[i][1], NULL, 0);
        if (got != want) fprintf(stderr, "  %s: %llu, the lists say %llu\n", more[i][0], (unsigned long long)got, (unsigned long long)want);
        CHECK(got == want);
        CHECK(want > 0);
    }
    CHECK(checked > (quick ? 100 : 900));
    CHECK(str_failures == 0);
}

static void string_columns_compare_column_wise(void) {
    enum { N = 700, LATER = 400 }; /* objects; the first LATER exist before `late` */
    memset(str_big, 'a', sizeof str_big - 1);
    memcpy(str_big + 700, "bc", 2);
    memcpy(str_big + sizeof str_big - 3, "zz", 2);
    strata_db_t *db;
    OK(tl_db_open(tl_path("strings.db"), &db));
    static int late[N];
    strata_col_t cs, css, cp, cpl, clate;
    strata_txn_t *w;
    strata_table_t *t;
    for (int phase = 0; phase < 2; phase++) {
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        if (phase == 0) {
            OK(strata_table_create(w, "Str", &t, E));
            OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_NULLABLE | STRATA_PROP_INDEXED, NULL, &cs, E));
            OK(strata_table_add_property(t, "ss", STRATA_TYPE_STRING, STRATA_PROP_LIST | STRATA_PROP_NULLABLE, NULL, &css, E));
            OK(strata_table_add_property(t, "p", STRATA_TYPE_STRING, 0, NULL, &cp, E));
            OK(strata_table_add_property(t, "pl", STRATA_TYPE_STRING, STRATA_PROP_LIST, NULL, &cpl, E));
        } else {
            OK(strata_table_open(w, "Str", &t, E));
            OK(strata_table_add_property(t, "late", STRATA_TYPE_STRING, 0, NULL, &clate, E));
        }
        for (int i = phase ? LATER : 0; i < (phase ? N : LATER); i++) {
            strata_key_t k;
            OK(strata_obj_create(t, &k, E));
            set_str_pair(t, k, cs, css, rnd() % 6 == 0 ? -1 : (int)(rnd() % STR_WORDS), true);
            set_str_pair(t, k, cp, cpl, (int)(rnd() % STR_WORDS), true);
            late[i] = phase ? (int)(rnd() % STR_WORDS) : 0; /* "" before: no leaf, the default */
            if (phase) {
                strata_value v = str_word(late[i]);
                OK(strata_obj_set(t, k, clate, &v, E));
            }
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
    }
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    str_check_all(r, false);
    /* the property added later: the first clusters have no leaf, every row holds "" */
    static const char *late_ops[] = {"==", "!=", "<", ">=", "BEGINSWITH", "CONTAINS"};
    for (int op = 0; op < 6; op++)
        for (int a = 0; a < STR_WORDS; a++) {
            strata_value arg = str_word(a);
            uint64_t want = 0;
            for (int i = 0; i < N; i++) {
                strata_value v = str_word(late[i]);
                const char *x = v.u.bytes.data, *y = arg.u.bytes.data;
                size_t xl = v.u.bytes.len, yl = arg.u.bytes.len;
                int c = memcmp(x, y, xl < yl ? xl : yl);
                c = c ? c : (xl > yl) - (xl < yl);
                bool m = op == 0 ? c == 0 : op == 1 ? c != 0 : op == 2 ? c < 0 : op == 3 ? c >= 0
                       : op == 4 ? xl >= yl && memcmp(x, y, yl) == 0
                                 : yl == 0 || (xl >= yl && memmem(x, xl, y, yl) != NULL);
                want += m;
            }
            char text[64];
            snprintf(text, sizeof text, "late %s $0", late_ops[op]);
            uint64_t got = str_count(r, text, &arg, 1);
            if (got != want) fprintf(stderr, "  %s ($0 = word %d): %llu, expected %llu\n", text, a, (unsigned long long)got, (unsigned long long)want);
            CHECK(got == want);
        }
    strata_txn_free(r);
    /* a write transaction's own changes (clusters it holds decoded) */
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Str", &t, E));
    for (int i = 0; i < 40; i++) {
        strata_key_t k = (strata_key_t)(rnd() % N);
        set_str_pair(t, k, cs, css, rnd() % 5 == 0 ? -1 : (int)(rnd() % STR_WORDS), false);
        set_str_pair(t, k, cp, cpl, (int)(rnd() % STR_WORDS), false);
    }
    str_check_all(w, true);
    strata_txn_free(w); /* rolled back */
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ ranges on an index */

/* `p > a AND p < b` on an indexed property walks the index from a to b (other_bound), whichever
 * term comes first, with other terms between them: every pair of one-sided operators on an
 * indexed int (nullable) and string property, with bounds on stored values and between them,
 * against a brute force. */
static void two_sided_ranges_use_both_bounds(void) {
    enum { N = 1500 };
    static int64_t nv[N];
    static bool nnull[N];
    static char sv[N][4];
    strata_db_t *db;
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t cn, cs, cx;
    OK(new_table("ranges.db", "R", &db, &w, &t));
    OK(strata_table_add_property(t, "n", STRATA_TYPE_INT, STRATA_PROP_NULLABLE | STRATA_PROP_INDEXED, NULL, &cn, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &cs, E));
    OK(strata_table_add_property(t, "x", STRATA_TYPE_INT, 0, NULL, &cx, E));
    for (int i = 0; i < N; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        nnull[i] = rnd() % 10 == 0;
        nv[i] = (int64_t)(rnd() % 40) * 2 - 30; /* even: odd bounds fall between values */
        strata_value v = nnull[i] ? vnull() : vint(nv[i]);
        OK(strata_obj_set(t, k, cn, &v, E));
        snprintf(sv[i], sizeof sv[i], "%c%c", 'a' + (int)(rnd() % 6), 'a' + 2 * (int)(rnd() % 4));
        v = vstr(sv[i]);
        OK(strata_obj_set(t, k, cs, &v, E));
        v = vint(i % 3);
        OK(strata_obj_set(t, k, cx, &v, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    static const char *lows[] = {">", ">="}, *highs[] = {"<", "<="};
    static const int64_t nb[] = {-31, -30, -2, 0, 1, 8, 47, 48, 60};
    static const char *sb[] = {"a", "aa", "bc", "cd", "ce", "d", "fg", "z"};
    int checked = 0;
    for (int prop = 0; prop < 2; prop++)
        for (int lo = 0; lo < 2; lo++)
            for (int hi = 0; hi < 2; hi++)
                for (int a = 0; a < (prop ? 8 : 9); a++)
                    for (int b = 0; b < (prop ? 8 : 9); b++)
                        for (int form = 0; form < 3; form++) {
                            char la[16], hb[16], text[160];
                            if (prop) snprintf(la, sizeof la, "'%s'", sb[a]), snprintf(hb, sizeof hb, "'%s'", sb[b]);
                            else snprintf(la, sizeof la, "%lld", (long long)nb[a]), snprintf(hb, sizeof hb, "%lld", (long long)nb[b]);
                            const char *pn = prop ? "s" : "n";
                            if (form == 0) snprintf(text, sizeof text, "%s %s %s AND %s %s %s", pn, lows[lo], la, pn, highs[hi], hb);
                            else if (form == 1) snprintf(text, sizeof text, "%s %s %s AND x != 1 AND %s %s %s", pn, highs[hi], hb, pn, lows[lo], la);
                            else snprintf(text, sizeof text, "x != 2 AND %s %s %s AND %s %s %s", pn, lows[lo], la, pn, highs[hi], hb);
                            uint64_t want = 0, got;
                            for (int i = 0; i < N; i++) {
                                int cl, ch;
                                if (prop) {
                                    cl = strcmp(sv[i], sb[a]), ch = strcmp(sv[i], sb[b]);
                                } else {
                                    if (nnull[i]) continue;
                                    cl = (nv[i] > nb[a]) - (nv[i] < nb[a]), ch = (nv[i] > nb[b]) - (nv[i] < nb[b]);
                                }
                                bool m = (lo ? cl >= 0 : cl > 0) && (hi ? ch <= 0 : ch < 0) &&
                                         (form == 0 || (form == 1 ? i % 3 != 1 : i % 3 != 2));
                                want += m;
                            }
                            strata_query_t *q;
                            OK(strata_query_compile(r, "R", text, &q, E));
                            OK(strata_query_count(q, r, NULL, 0, &got, E));
                            strata_query_free(q);
                            if (got != want) fprintf(stderr, "  %s: %llu, expected %llu\n", text, (unsigned long long)got, (unsigned long long)want);
                            CHECK(got == want);
                            checked++;
                        }
    CHECK(checked == 2 * 2 * (81 + 64) * 3);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ equality through an index */

/* An index's answer to `p == v` (or IN) is the query's, not checked again object by object:
 * strings longer than an index key holds (kept as a prefix, so several values share an entry
 * start), null, IN with repeats, ANDed with other terms, and in a write transaction whose
 * changes the index has not taken yet — against a brute force. */
static void index_equality_answers_exactly(void) {
    enum { N = 600, W = 12 };
    static char words[W][700];
    for (int w = 0; w < W; w++) { /* 600 bytes alike, then the word's own end */
        memset(words[w], 'p', 600);
        snprintf(words[w] + 600, 100, "-%d", w % 4 == 3 ? 3 : w); /* 3, 7 and 11 are equal */
        if (w >= 8) words[w][10 + w] = 'q';                        /* ... and differ early */
    }
    static int val[N]; /* index into words, -1 null */
    strata_db_t *db;
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t cs, cx;
    OK(new_table("ixeq.db", "E", &db, &w, &t));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_NULLABLE | STRATA_PROP_INDEXED, NULL, &cs, E));
    OK(strata_table_add_property(t, "x", STRATA_TYPE_INT, 0, NULL, &cx, E));
    for (int i = 0; i < N; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        val[i] = rnd() % 9 == 0 ? -1 : (int)(rnd() % W);
        strata_value v = val[i] < 0 ? vnull() : vstr(words[val[i]]);
        OK(strata_obj_set(t, k, cs, &v, E));
        OK(strata_obj_set(t, k, cx, (strata_value[]){vint(i % 5)}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    for (int phase = 0; phase < 2; phase++) {
        strata_txn_t *txn;
        OK(strata_txn_begin(db, phase ? STRATA_TXN_WRITE : STRATA_TXN_READ, &txn, E));
        if (phase) { /* changes the index takes at the next query */
            OK(strata_table_open(txn, "E", &t, E));
            for (int i = 0; i < 60; i++) {
                int k = (int)(rnd() % N);
                val[k] = rnd() % 4 == 0 ? -1 : (int)(rnd() % W);
                strata_value v = val[k] < 0 ? vnull() : vstr(words[val[k]]);
                OK(strata_obj_set(t, k, cs, &v, E));
            }
        }
        for (int a = -1; a < W; a++) {
            strata_value args[3] = {a < 0 ? vnull() : vstr(words[a]), vstr(words[(a + 5 + W) % W]), vstr(words[a < 0 ? 0 : a])};
            const char *forms[] = {"s == $0", "s IN {$0, $1, $2}", "s == $0 AND x != 2", "x > 0 AND s IN {$0, $1}"};
            for (int f = 0; f < 4; f++) {
                uint64_t want = 0, got = 0;
                for (int i = 0; i < N; i++) {
                    bool eq[3];
                    for (int j = 0; j < 3; j++)
                        eq[j] = args[j].type == STRATA_TYPE_NULL ? val[i] < 0
                                : val[i] >= 0 && strcmp(words[val[i]], args[j].u.bytes.data) == 0;
                    want += f == 0 ? eq[0] : f == 1 ? (eq[0] || eq[1] || eq[2])
                          : f == 2 ? (eq[0] && i % 5 != 2) : (i % 5 > 0 && (eq[0] || eq[1]));
                }
                strata_query_t *q;
                OK(strata_query_compile(txn, "E", forms[f], &q, E));
                OK(strata_query_count(q, txn, args, 3, &got, E));
                strata_query_free(q);
                if (got != want) fprintf(stderr, "  %s (word %d, %s): %llu, expected %llu\n", forms[f], a, phase ? "write" : "read", (unsigned long long)got, (unsigned long long)want);
                CHECK(got == want);
            }
        }
        strata_txn_free(txn);
    }
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ chains folded into sets */

/* Long chains of one property's == (OR) or != (AND) with constants run as one sorted set:
 * random chains over nullable int and string properties (indexed or not), with repeats, mixed
 * with other terms, as literals and as arguments, against a brute force; and the same chains
 * with [c], which are not folded. */
static void chains_fold_into_sets(void) {
    enum { N = 3000 };
    static int64_t iv[N];
    static int sv[N];   /* index into names, -1 null */
    static bool inull[N];
    char names[40][8];
    for (int i = 0; i < 40; i++) snprintf(names[i], sizeof names[i], "n%02d", i);
    for (int indexed = 0; indexed < 2; indexed++) {
        strata_db_t *db;
        strata_txn_t *w;
        strata_table_t *t;
        strata_col_t ci, cs;
        unsigned ix = indexed ? STRATA_PROP_INDEXED : 0;
        OK(new_table(indexed ? "chains-ix.db" : "chains.db", "C", &db, &w, &t));
        OK(strata_table_add_property(t, "i", STRATA_TYPE_INT, STRATA_PROP_NULLABLE | ix, NULL, &ci, E));
        OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_NULLABLE | ix, NULL, &cs, E));
        tl_seed(0x9e3779b97f4a7c15ull);
        for (int k = 0; k < N; k++) {
            strata_key_t key;
            OK(strata_obj_create(t, &key, E));
            inull[k] = rnd() % 10 == 0;
            iv[k] = (int64_t)(rnd() % 60) - 10;
            sv[k] = rnd() % 10 == 0 ? -1 : (int)(rnd() % 40);
            strata_value v = inull[k] ? vnull() : vint(iv[k]);
            OK(strata_obj_set(t, key, ci, &v, E));
            v = sv[k] < 0 ? vnull() : vstr(names[sv[k]]);
            OK(strata_obj_set(t, key, cs, &v, E));
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        strata_txn_t *r;
        OK(strata_txn_begin(db, 0, &r, E));
        static char q[8192];
        for (int round = 0; round < 120; round++) {
            bool ors = round % 2, strs = round % 4 >= 2, args = round % 8 >= 4, cflag = round % 16 >= 12;
            int nterms = 8 + (int)(rnd() % 40);
            int64_t ks[64];
            int kn[64];
            strata_value av[64];
            size_t at = 0;
            for (int j = 0; j < nterms; j++) {
                ks[j] = (int64_t)(rnd() % 70) - 15;
                kn[j] = (int)(rnd() % 45); /* 40..44: names nobody has */
                const char *op = ors ? "==" : "!=";
                if (args) {
                    av[j] = strs ? vstr(kn[j] < 40 ? names[kn[j]] : "zz") : vint(ks[j]);
                    at += (size_t)snprintf(q + at, sizeof q - at, "%s%s %s%s $%d", j ? (ors ? " OR " : " AND ") : "",
                                           strs ? "s" : "i", op, cflag && strs ? "[c]" : "", j);
                } else if (strs) {
                    at += (size_t)snprintf(q + at, sizeof q - at, "%ss %s%s '%s'", j ? (ors ? " OR " : " AND ") : "",
                                           op, cflag ? "[c]" : "", kn[j] < 40 ? names[kn[j]] : "zz");
                } else {
                    at += (size_t)snprintf(q + at, sizeof q - at, "%si %s %lld", j ? (ors ? " OR " : " AND ") : "",
                                           op, (long long)ks[j]);
                }
            }
            bool extra = round % 3 == 0; /* another property's term beside the chain */
            char full[8400];
            snprintf(full, sizeof full, extra ? "(%s) AND %s" : "%s", q, strs ? "i >= 0" : "s != 'n01'");
            uint64_t want = 0;
            for (int k = 0; k < N; k++) {
                bool m = !ors;
                for (int j = 0; j < nterms; j++) {
                    bool eq = strs ? (sv[k] >= 0 && kn[j] < 40 && sv[k] == kn[j]) : (!inull[k] && iv[k] == ks[j]);
                    if (ors && eq) m = true;
                    if (!ors && eq) m = false;
                }
                if (extra) m = m && (strs ? (!inull[k] && iv[k] >= 0) : sv[k] != 1);
                want += m;
            }
            strata_query_t *cq;
            uint64_t got;
            OK(strata_query_compile(r, "C", full, &cq, E));
            OK(strata_query_count(cq, r, args ? av : NULL, args ? (size_t)nterms : 0, &got, E));
            strata_query_free(cq);
            if (got != want) fprintf(stderr, "  round %d: %s: %llu, brute force %llu\n", round, full,
                                     (unsigned long long)got, (unsigned long long)want);
            CHECK(got == want);
        }
        strata_txn_free(r);
        OK(strata_db_close(db, E));
    }
}

/* ------------------------------------------------------------------ random against brute force */


#define RN 1500
typedef struct robj {
    int64_t a;       /* int, indexed in the indexed run */
    bool a_null;
    int64_t b;       /* int */
    int64_t c;       /* int whose leaves take every width: 2, 4, 8, 16, 32, 64 bits by cluster */
    bool flag;
    char s[16];      /* string, indexed in the indexed run */
    int best;        /* a to-one link to another object, -1: null */
    int nfriends, friends[3]; /* a list of links */
} robj;
static robj data[RN];

static const char *rstrings[] = {"", "a", "ab", "abc", "b", "ba", "张", "张三", "é", "E"};
static const char *rtexts[] = {"abc", "xbay", "张三丰", "aé", "", "bab"}; /* 'text' op s */
static const char *rpatterns[] = {"*", "a*", "*b", "?", "??", "a?", "*张*", "*a*b*", "?*", "b?a",
                                  "张?", "*?*"};

/* LIKE by brute force: '*' any run of characters (UTF-8), '?' one. */
static size_t u8len(const char *s) {
    unsigned char c = (unsigned char)*s;
    return c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
}
static bool like(const char *s, const char *p) {
    if (!*p) return !*s;
    if (*p == '*') {
        for (const char *t = s;; t += u8len(t)) {
            if (like(t, p + 1)) return true;
            if (!*t) return false;
        }
    }
    if (!*s) return false;
    if (*p == '?') return like(s + u8len(s), p + 1);
    size_t n = u8len(p);
    return strncmp(s, p, n) == 0 && like(s + n, p + n);
}

/* [c] and [cd] on the strings above: ASCII lower case; [d] also takes é to e. */
static void fold(const char *s, bool d, char *out) {
    for (; *s; s++) {
        if (d && (unsigned char)s[0] == 0xC3 && (unsigned char)s[1] == 0xA9) *out++ = 'e', s++;
        else *out++ = (char)((*s >= 'A' && *s <= 'Z') ? *s + 32 : *s);
    }
    *out = 0;
}

/* A random predicate: its text into out, its truth for object i by eval. */
typedef struct pred {
    int kind;        /* 0 cmp a, 1 cmp b, 2 flag, 3 string op, 4 and, 5 or, 6 not, 7 between a,
                        8 cmp c, 9 c IN {k, k2, k3}, 10 a op b, 11 b op c, 12 'str' op s,
                        13 s LIKE pattern, 14 c op hex, 15 s ==[c]/[cd] 'str',
                        16 friends.@agg.b op k (k2: the aggregate), 17 best.@count op k,
                        18 ANY/ALL/NONE friends.b op b (k2: the quantifier), 19 best.b op c */
    int op;          /* 0 == 1 != 2 < 3 <= 4 > 5 >= ; strings: 0 == 1 BEGINSWITH 2 ENDSWITH 3 CONTAINS */
    int64_t k, k2, k3;
    bool null_const;
    const char *str;
    struct pred *l, *r;
} pred;

static pred pool[4096];
static int npool;

static pred *gen(int depth) {
    pred *p = &pool[npool++];
    memset(p, 0, sizeof *p);
    int kind = (int)(rnd() % (depth > 2 ? 4 : 20));
    if (kind == 7 && rnd() % 2) kind = 0;
    if (depth > 2 && rnd() % 2) kind = 10 + (int)(rnd() % 10);
    p->kind = kind;
    p->op = (int)(rnd() % 6);
    p->k = (int64_t)(rnd() % 21) - 10;
    p->k2 = p->k + (int64_t)(rnd() % 8);
    p->null_const = kind == 0 && p->op < 2 && rnd() % 5 == 0;
    if (kind == 3) p->op = (int)(rnd() % 4), p->str = rstrings[rnd() % 10];
    if (kind == 12) p->op = 1 + (int)(rnd() % 3), p->str = rtexts[rnd() % 6];
    if (kind == 13) p->str = rpatterns[rnd() % 12];
    if (kind == 14) p->k = data[rnd() % RN].c + (int64_t)(rnd() % 3) - 1;
    if (kind == 15) p->op = (int)(rnd() % 2), p->str = rstrings[rnd() % 10];
    if (kind == 16) p->k2 = (int64_t)(rnd() % 5), p->k = (int64_t)(rnd() % 600) - 300;
    if (kind == 17) p->k = (int64_t)(rnd() % 3);
    if (kind == 18) p->k2 = (int64_t)(rnd() % 3);
    if (kind == 8 || kind == 9) { /* near some object's c (in any cluster), or far from all */
        int64_t *ks[] = {&p->k, &p->k2, &p->k3};
        for (int i = 0; i < 3; i++)
            *ks[i] = rnd() % 16 == 0 ? (rnd() % 2 ? 1 : -1) * ((int64_t)1 << 52)
                                     : data[rnd() % RN].c + (int64_t)(rnd() % 3) - 1;
    }
    if (kind >= 4 && kind <= 5) p->l = gen(depth + 1), p->r = gen(depth + 1);
    if (kind == 6) p->l = gen(depth + 1);
    return p;
}

static void text(const pred *p, char *out) {
    static const char *ops[] = {"==", "!=", "<", "<=", ">", ">="};
    static const char *sops[] = {"==", "BEGINSWITH", "ENDSWITH", "CONTAINS"};
    char l[4096], r[4096];
    switch (p->kind) {
    case 0:
        if (p->null_const) sprintf(out, "a %s nil", ops[p->op]);
        else sprintf(out, "a %s %lld", ops[p->op], (long long)p->k);
        break;
    case 1: sprintf(out, "%lld %s b", (long long)p->k, ops[p->op]); break; /* constant first */
    case 2: sprintf(out, "flag %s %s", p->op % 2 ? "!=" : "==", p->k % 2 ? "true" : "false"); break;
    case 3: sprintf(out, "s %s '%s'", sops[p->op], p->str); break;
    case 4: text(p->l, l); text(p->r, r); sprintf(out, "(%s AND %s)", l, r); break;
    case 5: text(p->l, l); text(p->r, r); sprintf(out, "(%s || %s)", l, r); break;
    case 6: text(p->l, l); sprintf(out, "NOT (%s)", l); break;
    case 7: sprintf(out, "a BETWEEN {%lld, %lld}", (long long)p->k, (long long)p->k2); break;
    case 8: sprintf(out, "c %s %lld", ops[p->op], (long long)p->k); break;
    case 9: sprintf(out, "c IN {%lld, %lld, %lld}", (long long)p->k, (long long)p->k2, (long long)p->k3); break;
    case 10: sprintf(out, "a %s b", ops[p->op]); break;
    case 11: sprintf(out, "b %s c", ops[p->op]); break;
    case 12: sprintf(out, "'%s' %s s", p->str, sops[p->op]); break;
    case 13: sprintf(out, "s LIKE '%s'", p->str); break;
    case 14:
        sprintf(out, "c %s %s0x%llx", ops[p->op], p->k < 0 ? "-" : "",
                (unsigned long long)(p->k < 0 ? -(uint64_t)p->k : (uint64_t)p->k));
        break;
    case 15: sprintf(out, "s ==%s '%s'", p->op ? "[cd]" : "[c]", p->str); break;
    case 16: {
        static const char *aggs[] = {"@sum", "@avg", "@min", "@max", "@count"};
        if (p->k2 == 4) sprintf(out, "friends.@count %s %lld", ops[p->op], (long long)(p->k & 3));
        else sprintf(out, "friends.%s.b %s %lld", aggs[p->k2], ops[p->op], (long long)p->k);
        break;
    }
    case 17: sprintf(out, "best.@count %s %lld", ops[p->op], (long long)p->k); break;
    case 18: {
        static const char *qs[] = {"ANY", "ALL", "NONE"};
        sprintf(out, "%s friends.b %s b", qs[p->k2], ops[p->op]);
        break;
    }
    case 19: sprintf(out, "best.b %s c", ops[p->op]); break;
    }
}

static bool cmp_int(int op, int64_t v, int64_t k) {
    switch (op) {
    case 0: return v == k;
    case 1: return v != k;
    case 2: return v < k;
    case 3: return v <= k;
    case 4: return v > k;
    default: return v >= k;
    }
}

static bool eval(const pred *p, const robj *o) {
    switch (p->kind) {
    case 0:
        if (p->null_const) return p->op == 0 ? o->a_null : !o->a_null;
        if (o->a_null) return p->op == 1;
        return cmp_int(p->op, o->a, p->k);
    case 1: { /* k op b  ==  b mirror(op) k */
        static const int mirror[] = {0, 1, 4, 5, 2, 3};
        return cmp_int(mirror[p->op], o->b, p->k);
    }
    case 2: return (o->flag == (p->k % 2 != 0)) != (p->op % 2 == 1);
    case 3: {
        size_t sl = strlen(o->s), kl = strlen(p->str);
        switch (p->op) {
        case 0: return strcmp(o->s, p->str) == 0;
        case 1: return sl >= kl && memcmp(o->s, p->str, kl) == 0;
        case 2: return sl >= kl && memcmp(o->s + sl - kl, p->str, kl) == 0;
        default: return strstr(o->s, p->str) != NULL;
        }
    }
    case 4: return eval(p->l, o) && eval(p->r, o);
    case 5: return eval(p->l, o) || eval(p->r, o);
    case 6: return !eval(p->l, o);
    case 7: return !o->a_null && o->a >= p->k && o->a <= p->k2;
    case 8: return cmp_int(p->op, o->c, p->k);
    case 9: return o->c == p->k || o->c == p->k2 || o->c == p->k3;
    case 10: return o->a_null ? p->op == 1 : cmp_int(p->op, o->a, o->b);
    case 11: return cmp_int(p->op, o->b, o->c);
    case 12: { /* the constant is the text, s the part */
        size_t sl = strlen(o->s), kl = strlen(p->str);
        switch (p->op) {
        case 1: return kl >= sl && memcmp(p->str, o->s, sl) == 0;
        case 2: return kl >= sl && memcmp(p->str + kl - sl, o->s, sl) == 0;
        default: return strstr(p->str, o->s) != NULL;
        }
    }
    case 13: return like(o->s, p->str);
    case 16: {
        if (p->k2 == 4) return cmp_int(p->op, o->nfriends, p->k & 3);
        if (o->nfriends == 0) /* @sum of none is 0; the others are null */
            return p->k2 == 0 ? cmp_int(p->op, 0, p->k) : p->op == 1;
        int64_t sum = 0, mn = INT64_MAX, mx = INT64_MIN;
        for (int i = 0; i < o->nfriends; i++) {
            int64_t b = data[o->friends[i]].b;
            sum += b;
            if (b < mn) mn = b;
            if (b > mx) mx = b;
        }
        if (p->k2 == 1) {
            double avg = (double)sum / o->nfriends, k = (double)p->k;
            switch (p->op) {
            case 0: return avg == k;
            case 1: return avg != k;
            case 2: return avg < k;
            case 3: return avg <= k;
            case 4: return avg > k;
            default: return avg >= k;
            }
        }
        return cmp_int(p->op, p->k2 == 0 ? sum : p->k2 == 2 ? mn : mx, p->k);
    }
    case 17: return cmp_int(p->op, o->best >= 0, p->k);
    case 18: {
        int hits = 0;
        for (int i = 0; i < o->nfriends; i++) hits += cmp_int(p->op, data[o->friends[i]].b, o->b);
        return p->k2 == 0 ? hits > 0 : p->k2 == 1 ? hits == o->nfriends : hits == 0;
    }
    case 19: return o->best < 0 ? p->op == 1 : cmp_int(p->op, data[o->best].b, o->c);
    case 14: return cmp_int(p->op, o->c, p->k);
    default: {
        char a[64], b[64];
        fold(o->s, p->op == 1, a);
        fold(p->str, p->op == 1, b);
        return strcmp(a, b) == 0;
    }
    }
}

static int64_t sort_key_a(int i) { return data[i].a_null ? INT64_MIN : data[i].a; }

static void random_predicates_match_brute_force(void) {
    for (int indexed = 0; indexed < 2; indexed++) {
        strata_db_t *db;
        strata_txn_t *w;
        strata_table_t *t;
        strata_col_t ca, cb, cc, cf, cs;
        unsigned ix = indexed ? STRATA_PROP_INDEXED : 0;
        OK(new_table(indexed ? "rand-ix.db" : "rand.db", "R", &db, &w, &t));
        OK(strata_table_add_property(t, "a", STRATA_TYPE_INT, STRATA_PROP_NULLABLE | ix, NULL, &ca, E));
        OK(strata_table_add_property(t, "b", STRATA_TYPE_INT, 0, NULL, &cb, E));
        OK(strata_table_add_property(t, "c", STRATA_TYPE_INT, 0, NULL, &cc, E));
        OK(strata_table_add_property(t, "flag", STRATA_TYPE_BOOL, 0, NULL, &cf, E));
        OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, ix, NULL, &cs, E));
        strata_col_t cbest, cfriends;
        OK(strata_table_add_property(t, "best", STRATA_TYPE_LINK, 0, "R", &cbest, E));
        OK(strata_table_add_property(t, "friends", STRATA_TYPE_LINK, STRATA_PROP_LIST, "R", &cfriends, E));
        tl_seed(0x853c49e6748fea9bull); /* the same data in both runs */
        for (int i = 0; i < RN; i++) {
            strata_key_t k;
            OK(strata_obj_create(t, &k, E));
            CHECK(k == i);
            robj *o = &data[i];
            o->a_null = rnd() % 8 == 0;
            o->a = (int64_t)(rnd() % 21) - 10;
            o->b = (int64_t)(rnd() % 1000) - 500;
            static const int64_t spans[] = {4, 16, 200, 60000, 3000000000ll, 1ll << 50};
            int64_t span = spans[(i / 256) % 6];
            o->c = (int64_t)(rnd() % (uint64_t)span) - span / 2;
            o->flag = rnd() % 2;
            strcpy(o->s, rstrings[rnd() % 10]);
            OK(strata_obj_set(t, k, ca, o->a_null ? (strata_value[]){vnull()} : (strata_value[]){vint(o->a)}, E));
            OK(strata_obj_set(t, k, cb, (strata_value[]){vint(o->b)}, E));
            OK(strata_obj_set(t, k, cc, (strata_value[]){vint(o->c)}, E));
            OK(strata_obj_set(t, k, cf, (strata_value[]){{.type = STRATA_TYPE_BOOL, .u.b = o->flag}}, E));
            OK(strata_obj_set(t, k, cs, (strata_value[]){vstr(o->s)}, E));
        }
        for (int i = 0; i < RN; i++) { /* links, once every object exists */
            robj *o = &data[i];
            o->best = rnd() % 4 == 0 ? -1 : (int)(rnd() % RN);
            o->nfriends = (int)(rnd() % 4);
            if (o->best >= 0) OK(strata_obj_set(t, i, cbest, (strata_value[]){vlink(o->best)}, E));
            for (int j = 0; j < o->nfriends; j++) {
                o->friends[j] = (int)(rnd() % RN);
                OK(strata_list_insert(t, i, cfriends, (size_t)j, (strata_value[]){vlink(o->friends[j])}, E));
            }
        }
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
        strata_txn_t *r;
        OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
        for (int round = 0; round < 300; round++) {
            npool = 0;
            pred *p = gen(0);
            char q[8192];
            text(p, q);
            bool sorted = round % 3 == 0, by_s = round % 3 == 1;
            if (sorted) strcat(q, " SORT(a DESC)");
            if (by_s) strcat(q, " SORT(s ASC) LIMIT(50)");
            strata_query_t *query;
            strata_results_t *res;
            OK(strata_query_compile(r, "R", q, &query, E));
            OK(strata_query_run(query, r, NULL, 0, &res, E));
            int want[RN], nw = 0;
            for (int i = 0; i < RN; i++)
                if (eval(p, &data[i])) want[nw++] = i;
            if (sorted) /* stable: by a descending (nulls last), then key */
                for (int i = 1; i < nw; i++)
                    for (int j = i; j > 0 && sort_key_a(want[j - 1]) < sort_key_a(want[j]); j--) {
                        int tmp = want[j];
                        want[j] = want[j - 1];
                        want[j - 1] = tmp;
                    }
            if (by_s) { /* stable by s (bytes), then the first 50 */
                for (int i = 1; i < nw; i++)
                    for (int j = i; j > 0 && strcmp(data[want[j - 1]].s, data[want[j]].s) > 0; j--) {
                        int tmp = want[j];
                        want[j] = want[j - 1];
                        want[j - 1] = tmp;
                    }
                if (nw > 50) nw = 50;
            }
            uint64_t count = 0; /* counting takes its own path: no keys, no result array */
            OK(strata_query_count(query, r, NULL, 0, &count, E));
            bool same = strata_results_size(res) == (size_t)nw && count == (uint64_t)nw;
            for (int i = 0; same && i < nw; i++) same = strata_results_key(res, (size_t)i) == want[i];
            if (!same)
                fprintf(stderr, "  %s: %zu results, count %llu, brute force %d (%s)\n", q,
                        strata_results_size(res), (unsigned long long)count, nw, indexed ? "indexed" : "scan");
            strata_results_free(res);
            strata_query_free(query);
            CHECK(same);
        }
        strata_txn_free(r);
        OK(strata_db_close(db, E));
    }
}

/* [c] is full Unicode case folding and [d] drops every combining mark after decomposing (both
 * through utf8proc); LIKE's '*' and '?' are wildcards even where the text has those characters. */
static void unicode_folding_and_like(void) {
    static const char *words[] = {
        "İstanbul", "istanbul", "ſtraße", "STRASSE", "µ-meter", "μ-meter", "Άλφα", "άλφα", "ΑΛΦΑ",
        "Școală", "scoala", "Việt Nam", "Viet Nam", "Øre", "Ore", "Łódź", "Lodz", "Star* Spot",
        "Star Spot", "Why?", "e\xcc\x81te", "été"};
    fixture f = {0};
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t name;
    OK(tl_db_open(tl_path("fold.db"), &f.db));
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Word", &t, E));
    OK(strata_table_add_property(t, "name", STRATA_TYPE_STRING, 0, NULL, &name, E));
    for (size_t i = 0; i < sizeof words / sizeof *words; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, name, (strata_value[]){vstr(words[i])}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    EXPECT_IN(&f, "Word", "name ==[c] 'strasse'", "ſtraße,STRASSE");        /* ſ -> s, ß -> ss */
    EXPECT_IN(&f, "Word", "name ==[c] 'istanbul'", "istanbul");             /* İ -> i + U+0307 */
    EXPECT_IN(&f, "Word", "name ==[cd] 'istanbul'", "İstanbul,istanbul");
    EXPECT_IN(&f, "Word", "name BEGINSWITH[c] 'μ'", "µ-meter,μ-meter");      /* µ -> μ */
    EXPECT_IN(&f, "Word", "name ==[c] 'αλφα'", "ΑΛΦΑ");                     /* tonos kept */
    EXPECT_IN(&f, "Word", "name ==[cd] 'αλφα'", "Άλφα,άλφα,ΑΛΦΑ");
    EXPECT_IN(&f, "Word", "name ==[d] 'Scoala'", "Școală");                 /* comma below */
    EXPECT_IN(&f, "Word", "name ==[cd] 'SCOALA'", "Școală,scoala");
    EXPECT_IN(&f, "Word", "name ==[d] 'Viet Nam'", "Việt Nam,Viet Nam");     /* two marks */
    EXPECT_IN(&f, "Word", "name BEGINSWITH[d] 'O'", "Ore");                  /* Ø has none */
    EXPECT_IN(&f, "Word", "name ==[d] 'Lodz'", "Lodz");                      /* nor Ł */
    EXPECT_IN(&f, "Word", "name ==[d] 'Łodz'", "Łódź");
    EXPECT_IN(&f, "Word", "name ==[d] 'ete'", "e\xcc\x81te,été");                   /* NFD and NFC */
    EXPECT_IN(&f, "Word", "name == 'été'", "été");                          /* no flag: as stored */
    EXPECT_IN(&f, "Word", "name CONTAINS[cd] 'ET NAM'", "Việt Nam,Viet Nam");
    EXPECT_IN(&f, "Word", "name LIKE 'Star*'", "Star* Spot,Star Spot");
    EXPECT_IN(&f, "Word", "name LIKE 'Star?Spot'", "Star Spot");
    EXPECT_IN(&f, "Word", "name LIKE 'Star??Spot'", "Star* Spot");
    EXPECT_IN(&f, "Word", "name LIKE 'Why?'", "Why?");
    EXPECT_IN(&f, "Word", "name LIKE[c] 'why*'", "Why?");
    EXPECT_IN(&f, "Word", "name LIKE[cd] '*straSSe'", "ſtraße,STRASSE");
    OK(strata_db_close(f.db, E));
}

static bool valid_utf8(const char *s) {
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = *p < 0x80 ? 1 : *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC0 ? 2 : 0;
        if (!n) return false;
        for (int i = 1; i < n; i++)
            if ((p[i] & 0xC0) != 0x80) return false;
        p += n;
    }
    return true;
}

/* Forms Realm's parser accepts: non-ASCII and dashed property names, inf and nan, dates with
 * nanoseconds or without padding, hexadecimal integers; errors never cut a character. */
static void literals_and_names_realm_accepts(void) {
    fixture f = {0};
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t name, nr, dash, score, when;
    OK(tl_db_open(tl_path("names.db"), &f.db));
    OK(strata_txn_begin(f.db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Runner", &t, E));
    OK(strata_table_add_property(t, "name", STRATA_TYPE_STRING, 0, NULL, &name, E));
    OK(strata_table_add_property(t, "løbenummer", STRATA_TYPE_INT, 0, NULL, &nr, E));
    OK(strata_table_add_property(t, "姓名", STRATA_TYPE_STRING, 0, NULL, &dash, E));
    OK(strata_table_add_property(t, "first-name", STRATA_TYPE_STRING, 0, NULL, &dash, E));
    OK(strata_table_add_property(t, "score", STRATA_TYPE_DOUBLE, 0, NULL, &score, E));
    OK(strata_table_add_property(t, "when", STRATA_TYPE_TIMESTAMP, 0, NULL, &when, E));
    strata_col_t cn;
    OK(strata_table_find_property(t, "姓名", &cn, E));
    struct { const char *name, *cn, *first; int64_t nr; double score; int64_t s; int32_t ns; } rows[] = {
        {"Bob", "鲍勃", "Anna", 1, 1.0 / 0.0, 1512130073, 505},
        {"Ann", "安", "Bert", 3, -1.0 / 0.0, 1512090423, 0},
        {"Eve", "夏娃", "Alma", 31, 2.5, -5, -3},
    };
    for (int i = 0; i < 3; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, name, (strata_value[]){vstr(rows[i].name)}, E));
        OK(strata_obj_set(t, k, cn, (strata_value[]){vstr(rows[i].cn)}, E));
        OK(strata_obj_set(t, k, dash, (strata_value[]){vstr(rows[i].first)}, E));
        OK(strata_obj_set(t, k, nr, (strata_value[]){vint(rows[i].nr)}, E));
        OK(strata_obj_set(t, k, score, (strata_value[]){{.type = STRATA_TYPE_DOUBLE, .u.d = rows[i].score}}, E));
        OK(strata_obj_set(t, k, when, (strata_value[]){{.type = STRATA_TYPE_TIMESTAMP,
            .u.timestamp = {rows[i].s, rows[i].ns}}}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    EXPECT_IN(&f, "Runner", "姓名 == '安'", "Ann");
    EXPECT_IN(&f, "Runner", "løbenummer > 2", "Ann,Eve");
    EXPECT_IN(&f, "Runner", "first-name BEGINSWITH 'A'", "Bob,Eve");
    EXPECT_IN(&f, "Runner", "løbenummer == 0x1F", "Eve");
    EXPECT_IN(&f, "Runner", "løbenummer > -0X2 AND løbenummer < 0x3", "Bob");
    EXPECT_IN(&f, "Runner", "score == inf", "Bob");
    EXPECT_IN(&f, "Runner", "score == -INF", "Ann");
    EXPECT_IN(&f, "Runner", "score > -Infinity AND score < +infinity", "Eve");
    EXPECT_IN(&f, "Runner", "score != NaN", "Bob,Ann,Eve");
    EXPECT_IN(&f, "Runner", "when == 2017-12-01@12:07:53:505", "Bob");    /* nanoseconds */
    EXPECT_IN(&f, "Runner", "when == 2017-12-1@1:7:3", "Ann");           /* no padding */
    EXPECT_IN(&f, "Runner", "when == 2017-12-01T01:07:03", "Ann");
    EXPECT_IN(&f, "Runner", "when == 2017-12-01@12:07:53.000000505", "Bob");
    EXPECT_IN(&f, "Runner", "when == T1512130073:505", "Bob");
    EXPECT_IN(&f, "Runner", "when == T-5:-3", "Eve");
    strata_txn_t *r;
    strata_query_t *q;
    OK(strata_txn_begin(f.db, STRATA_TXN_READ, &r, E));
    EXPECT_CODE(strata_query_compile(r, "Runner", "when > T-5:3", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "different signs"));
    EXPECT_CODE(strata_query_compile(r, "Runner", "when > T5:-3", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_query_compile(r, "Runner", "名字 == 'x'", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "'名字'") && valid_utf8(tl_err.message));
    EXPECT_CODE(strata_query_compile(r, "Runner", "løbenummer == 5张", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "'张'") && valid_utf8(tl_err.message));
    char longq[1200] = "";
    for (int i = 0; i < 300; i++) strcat(longq, "张");
    strcat(longq, " == 1");
    for (int cut = 0; cut < 3; cut++) { /* messages cut at every byte position stay whole */
        EXPECT_CODE(strata_query_compile(r, "Runner", longq + cut * 3, &q, E), STRATA_ERR_INVALID_ARGUMENT);
        CHECK(valid_utf8(tl_err.message));
    }
    char longer[1200] = "a";
    strcat(longer, longq);
    EXPECT_CODE(strata_query_compile(r, "Runner", longer, &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(valid_utf8(tl_err.message));
    strcpy(longer, "ab");
    strcat(longer, longq);
    EXPECT_CODE(strata_query_compile(r, "Runner", longer, &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(valid_utf8(tl_err.message));
    strata_txn_free(r);
    OK(strata_db_close(f.db, E));
}

/* Aggregates over a list of links, @count of a to-one link, a constant on the left of any
 * operator, and a list of links compared with null (refused). */
static void aggregates_of_links_and_constants_on_the_left(void) {
    fixture f;
    OK(build(&f, "aggl.db"));
    EXPECT_NAMES(&f, "dogs.@sum.age > 5", "张三,小明");
    EXPECT_NAMES(&f, "dogs.@sum.age == 0", "JOSE,");                  /* empty: 0 */
    EXPECT_NAMES(&f, "dogs.@avg.age == 2.5", "José");
    EXPECT_NAMES(&f, "dogs.@avg.age == NULL", "JOSE,");               /* empty: null */
    EXPECT_NAMES(&f, "dogs.@min.age == 1", "张三,李四");
    EXPECT_NAMES(&f, "dogs.@max.age >= 5 AND dogs.@count > 0", "张三,小明");
    EXPECT_NAMES(&f, "dogs.@min.age == NULL", "JOSE,");
    EXPECT_NAMES(&f, "company.@count == 1", "张三,李四,José,JOSE");
    EXPECT_NAMES(&f, "company.@count == 0", "小明,");
    EXPECT_IN(&f, "Dog", "@links.Person.dogs.@max.age == 45", "小黑,Zoë");
    EXPECT_IN(&f, "Dog", "@links.Person.dogs.@sum.age == 0", "");
    EXPECT_NAMES(&f, "5 < age AND 40 >= age", "张三,李四,小明");
    EXPECT_NAMES(&f, "NULL == company", "小明,");
    EXPECT_NAMES(&f, "'张三丰' CONTAINS name", "张三,");              /* "" is in every text */
    EXPECT_NAMES(&f, "'JOSE MARIA' BEGINSWITH name AND name != ''", "JOSE");
    EXPECT_NAMES(&f, "'xJOSE' ENDSWITH[c] name AND name != ''", "JOSE");
    EXPECT_NAMES(&f, "'xJOSE' ENDSWITH[cd] name AND name != ''", "José,JOSE");
    EXPECT_NAMES(&f, "'José' LIKE[c] name", "José");
    strata_txn_t *r;
    strata_query_t *q;
    OK(strata_txn_begin(f.db, STRATA_TXN_READ, &r, E));
    EXPECT_CODE(strata_query_compile(r, "Person", "dogs == NULL", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "never null"));
    EXPECT_CODE(strata_query_compile(r, "Person", "dogs != nil", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_query_compile(r, "Person", "dogs.@sum.name > 1", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "needs numbers"));
    EXPECT_CODE(strata_query_compile(r, "Person", "dogs.@sum > 1", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_txn_free(r);
    OK(strata_db_close(f.db, E));
}

/* Two properties compared, through links, lists and aggregates. */
static void two_properties_compared(void) {
    fixture f;
    OK(build(&f, "twoprops.db"));
    EXPECT_NAMES(&f, "age > score", "张三,小明,José");                 /* int with double, nulls */
    EXPECT_NAMES(&f, "score < age AND age < 40", "张三,小明");
    EXPECT_NAMES(&f, "nick == nick", "张三,李四,小明,José,JOSE,");    /* null equals null */
    EXPECT_NAMES(&f, "name == nick", "");
    EXPECT_NAMES(&f, "ANY dogs.age < score", "张三,小明,José");
    EXPECT_NAMES(&f, "ALL dogs.age < score", "张三,小明,JOSE,");
    EXPECT_NAMES(&f, "NONE dogs.age >= score", "张三,李四,小明,JOSE,"); /* 1 >= null is false */
    EXPECT_NAMES(&f, "dogs.@count == company.@count", "李四,");
    EXPECT_NAMES(&f, "dogs.@max.age > dogs.@avg.age", "张三,José");
    EXPECT_NAMES(&f, "ANY dogs.name == dogs.name", "张三,李四,小明,José");
    EXPECT_NAMES(&f, "name BEGINSWITH[cd] 'jos' AND nick !=[c] name", "José,JOSE");
    EXPECT_NAMES(&f, "company.name CONTAINS[c] company.name AND company.name != 'GOOGLE'", "李四,JOSE");
    EXPECT_NAMES(&f, "company == company", "张三,李四,小明,José,JOSE,");
    EXPECT_NAMES(&f, "company != company", "");
    EXPECT_IN(&f, "Dog", "age <= @links.Person.dogs.@min.age", "小黑,小白,旺财,Rex,Zoë");
    EXPECT_IN(&f, "Dog", "ANY @links.Person.dogs.score <= age", "小黑");
    EXPECT_NAMES(&f, "SUBQUERY(dogs, $d, $d.age > 2).@count == dogs.@count AND dogs.@count > 0",
                 "小明");
    strata_txn_t *r;
    strata_query_t *q;
    OK(strata_txn_begin(f.db, STRATA_TXN_READ, &r, E));
    EXPECT_CODE(strata_query_compile(r, "Person", "age > name", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "cannot compare age (a int) with name (a string)"));
    EXPECT_CODE(strata_query_compile(r, "Person", "ANY dogs == company", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "different tables"));
    EXPECT_CODE(strata_query_compile(r, "Person", "name CONTAINS age", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    strata_txn_free(r);
    OK(strata_db_close(f.db, E));
}

/* The keys a query finds, compiled with a name map (NULL: none), as "k1,k2,…". */
static int run_keys_mapped(fixture *f, const char *table, const char *q, const strata_name_map_t *names,
                           char *out) {
    strata_txn_t *r;
    strata_query_t *query;
    strata_results_t *res;
    int rc;
    out[0] = 0;
    if ((rc = strata_txn_begin(f->db, STRATA_TXN_READ, &r, E))) return rc;
    if ((rc = strata_query_compile_mapped(r, table, q, names, &query, E)) == STRATA_OK) {
        if ((rc = strata_query_run(query, r, NULL, 0, &res, E)) == STRATA_OK) {
            for (size_t i = 0; i < strata_results_size(res); i++)
                sprintf(out + strlen(out), "%s%lld", i ? "," : "", (long long)strata_results_key(res, i));
            strata_results_free(res);
        }
        strata_query_free(query);
    }
    strata_txn_free(r);
    return rc;
}

/* Public names (RealmSwift's propertiesMapping): a query compiled with a name map finds what the
 * same query over the column names finds, through links, lists, @links, SORT and DISTINCT; a name
 * the map does not know is still a column's; bad maps are refused naming what is wrong. */
static void public_names_stand_for_columns(void) {
    fixture f;
    OK(build(&f, "mapped.db"));
    strata_name_map_t *m;
    OK(strata_name_map_create(&m, E));
    OK(strata_name_map_add(m, "Person", "years", "age", E));
    OK(strata_name_map_add(m, "Person", "pets", "dogs", E));
    OK(strata_name_map_add(m, "Dog", "title", "name", E));
    OK(strata_name_map_add(m, "Dog", "years", "age", E));
    static const char *pairs[][3] = {
        {"Person", "years > 30", "age > 30"},
        {"Person", "ANY pets.title BEGINSWITH '小' SORT(years DESC)", "ANY dogs.name BEGINSWITH '小' SORT(age DESC)"},
        {"Person", "pets.@sum.years > 5 AND name != ''", "dogs.@sum.age > 5 AND name != ''"},
        {"Person", "SUBQUERY(pets, $d, $d.years > 2).@count > 0", "SUBQUERY(dogs, $d, $d.age > 2).@count > 0"},
        {"Person", "TRUEPREDICATE DISTINCT(years)", "TRUEPREDICATE DISTINCT(age)"},
        {"Dog", "ANY @links.Person.pets.years > 30", "ANY @links.Person.dogs.age > 30"},
        {"Dog", "title == '小黑' OR age > 3", "name == '小黑' OR age > 3"},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        char mapped[512], plain[512];
        OK(run_keys_mapped(&f, pairs[i][0], pairs[i][1], m, mapped));
        OK(run_keys_mapped(&f, pairs[i][0], pairs[i][2], NULL, plain));
        if (strcmp(mapped, plain) != 0) fprintf(stderr, "  %s: [%s] vs [%s]\n", pairs[i][1], mapped, plain);
        CHECK(strcmp(mapped, plain) == 0);
        CHECK(plain[0] != 0);
    }
    char out[512];
    /* without the map, the public name is unknown, and the message names it */
    EXPECT_CODE(run_keys_mapped(&f, "Person", "years > 30", NULL, out), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "table 'Person' has no property 'years'"));
    EXPECT_CODE(strata_name_map_add(m, "Person", "years", "score", E), STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "'Person.years' already stands for column 'age'"));
    EXPECT_CODE(strata_name_map_add(m, "Person", "", "age", E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "public name is empty"));
    EXPECT_CODE(strata_name_map_add(m, "Person", "x", "\xff", E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "column") && strstr(tl_err.message, "UTF-8"));
    /* a public name standing for a column that does not exist: the compile names both */
    OK(strata_name_map_add(m, "Person", "ghost", "nothere", E));
    EXPECT_CODE(run_keys_mapped(&f, "Person", "ghost == 1", m, out), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "nothere"));
    strata_name_map_free(m);
    strata_name_map_free(NULL);
    OK(strata_db_close(f.db, E));
}

/* A decimal128 value coefficient × 10^exp (coefficient as high and low 64 bits). */
static strata_value vdec(bool neg, uint64_t chi, uint64_t clo, int exp) {
    strata_value v = {.type = STRATA_TYPE_DECIMAL128};
    v.u.decimal.high = (neg ? 1ull << 63 : 0) | ((uint64_t)(exp + 6176) << 49) | chi;
    v.u.decimal.low = clo;
    return v;
}

static strata_value vtime(int64_t s) {
    return (strata_value){.type = STRATA_TYPE_TIMESTAMP, .u.timestamp = {s, 0}};
}

/* @sum @avg @min @max of decimals (exact, 34 digits rounded half to even) and @min @max of dates,
 * in lists of values and through lists of links, as realm-core takes them. */
static void decimal_and_date_aggregates(void) {
    strata_db_t *db;
    strata_txn_t *w;
    strata_table_t *l, *e;
    strata_col_t amounts, days, entries, ea, et, name;
    OK(tl_db_open(tl_path("decagg.db"), &db));
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Entry", &e, E));
    OK(strata_table_create(w, "Ledger", &l, E));
    OK(strata_table_add_property(e, "amount", STRATA_TYPE_DECIMAL128, 0, NULL, &ea, E));
    OK(strata_table_add_property(e, "at", STRATA_TYPE_TIMESTAMP, 0, NULL, &et, E));
    OK(strata_table_add_property(l, "name", STRATA_TYPE_STRING, 0, NULL, &name, E));
    OK(strata_table_add_property(l, "amounts", STRATA_TYPE_DECIMAL128, STRATA_PROP_LIST, NULL, &amounts, E));
    OK(strata_table_add_property(l, "days", STRATA_TYPE_TIMESTAMP, STRATA_PROP_LIST, NULL, &days, E));
    OK(strata_table_add_property(l, "entries", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Entry", &entries, E));
    strata_key_t a, b;
    OK(strata_obj_create(l, &a, E));
    OK(strata_obj_create(l, &b, E)); /* empty lists */
    OK(strata_obj_set(l, a, name, (strata_value[]){vstr("a")}, E));
    OK(strata_obj_set(l, b, name, (strata_value[]){vstr("b")}, E));
    strata_value decs[] = {vdec(false, 0, 15, -1), vdec(false, 0, 25, -1), vdec(false, 0, 25, -2)}; /* 1.5 2.5 0.25 */
    for (size_t i = 0; i < 3; i++) {
        strata_key_t k;
        OK(strata_list_insert(l, a, amounts, i, &decs[i], E));
        OK(strata_list_insert(l, a, days, i, (strata_value[]){vtime(1000 * (int64_t)(i + 1))}, E));
        OK(strata_obj_create(e, &k, E));
        OK(strata_obj_set(e, k, ea, &decs[i], E));
        OK(strata_obj_set(e, k, et, (strata_value[]){vtime(1000 * (int64_t)(3 - i))}, E));
        OK(strata_list_insert(l, a, entries, i, (strata_value[]){vlink(k)}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    fixture f = {.db = db};
    /* 4.25 / 3 = 1.416666666666666666666666666666667 (34 digits): coefficient 14166666666666666666 ×
     * 10^14 + 66666666666667 as high:low 64-bit words */
    unsigned __int128 third = (unsigned __int128)14166666666666666666ull * 100000000000000ull + 66666666666667ull;
    strata_value args[] = {vdec(false, 0, 425, -2), vdec(false, (uint64_t)(third >> 64), (uint64_t)third, -33),
                           vdec(false, 0, 25, -2), vdec(false, 0, 25, -1), vtime(1000), vtime(3000),
                           vdec(false, 0, 0, 0), vdec(false, 0, 425000, -5)};
    char got[512];
    OK(run_names_in(&f, "Ledger", "amounts.@sum == $0 AND amounts.@avg == $1", args, 8, got));
    CHECK(strcmp(got, "a") == 0);
    OK(run_names_in(&f, "Ledger", "amounts.@min == $2 AND amounts.@max == $3 AND days.@min == $4 AND days.@max == $5", args, 8, got));
    CHECK(strcmp(got, "a") == 0);
    OK(run_names_in(&f, "Ledger", "entries.@sum.amount == $7 AND entries.@min.at == $4 AND entries.@max.amount == $3", args, 8, got));
    CHECK(strcmp(got, "a") == 0);
    /* empty: @sum is 0, @avg @min @max null */
    OK(run_names_in(&f, "Ledger", "amounts.@sum == $6 AND amounts.@avg == nil AND days.@max == nil", args, 8, got));
    CHECK(strcmp(got, "b") == 0);
    OK(run_names_in(&f, "Ledger", "amounts.@avg > $2 SORT(name)", args, 8, got));
    CHECK(strcmp(got, "a") == 0);
    strata_txn_t *r;
    strata_query_t *q;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    EXPECT_CODE(strata_query_compile(r, "Ledger", "days.@sum > 1", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "@sum needs a list of numbers"));
    EXPECT_CODE(strata_query_compile(r, "Ledger", "entries.@avg.at > 1", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "@avg needs numbers, and 'Entry.at' is a timestamp"));
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}


/* GEOWITHIN: embedded points (type "Point", coordinates [lng, lat]) in boxes, circles and
 * polygons, against a brute-force check (boxes, circles: haversine) and known answers
 * (polygons, holes, the antimeridian, the poles); bad regions and bad targets are errors. */
static double haversine(double lat1, double lng1, double lat2, double lng2) {
    double r = M_PI / 180, dlat = (lat2 - lat1) * r, dlng = (lng2 - lng1) * r;
    double a = sin(dlat / 2) * sin(dlat / 2) + cos(lat1 * r) * cos(lat2 * r) * sin(dlng / 2) * sin(dlng / 2);
    return 2 * atan2(sqrt(a), sqrt(1 - a));
}

#define GEO_N 400
static double geo_lat[GEO_N], geo_lng[GEO_N];

static int geo_count(strata_txn_t *txn, const char *q, const strata_geo *g, uint64_t *n) {
    strata_query_t *query;
    int rc = strata_query_compile(txn, "Place", q, &query, E);
    if (rc) return rc;
    strata_value arg = {.type = STRATA_TYPE_GEO, .u.geo.shape = g};
    rc = strata_query_count(query, txn, &arg, 1, n, E);
    strata_query_free(query);
    return rc;
}

static void geo_regions(void) {
    strata_db_t *db = tl_open_db(tl_path("geo.db"), STRATA_DURABILITY_NO_SYNC);
    CHECK(db);
    strata_txn_t *txn;
    strata_table_t *loc, *place, *top;
    strata_col_t ltype, lcoords, plink, pname, ttype, tcoords, plinktop;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
    OK(strata_table_create(txn, "Loc", &loc, E));
    OK(strata_table_add_property(loc, "coordinates", STRATA_TYPE_DOUBLE, STRATA_PROP_LIST, NULL, &lcoords, E));
    OK(strata_table_add_property(loc, "type", STRATA_TYPE_STRING, 0, NULL, &ltype, E));
    OK(strata_table_set_embedded(loc, true, 0, E));
    OK(strata_table_create(txn, "Top", &top, E));
    OK(strata_table_add_property(top, "coordinates", STRATA_TYPE_DOUBLE, STRATA_PROP_LIST, NULL, &tcoords, E));
    OK(strata_table_add_property(top, "type", STRATA_TYPE_STRING, 0, NULL, &ttype, E));
    OK(strata_table_create(txn, "Place", &place, E));
    OK(strata_table_add_property(place, "name", STRATA_TYPE_INT, 0, NULL, &pname, E));
    OK(strata_table_add_property(place, "location", STRATA_TYPE_LINK, 0, "Loc", &plink, E));
    OK(strata_table_add_property(place, "top", STRATA_TYPE_LINK, 0, "Top", &plinktop, E));
    for (int i = 0; i < GEO_N; i++) {
        /* spread over the globe, with some at the poles and on the antimeridian */
        geo_lat[i] = i % 50 == 0 ? (i % 100 == 0 ? 90 : -90) : (int64_t)(rnd() % 1000000007u) % 18001 / 100.0 - 90;
        geo_lng[i] = i % 37 == 0 ? (i % 74 == 0 ? 180 : -180) : (int64_t)(rnd() % 1000000007u) % 36001 / 100.0 - 180;
        strata_key_t pk, lk;
        OK(strata_obj_create(place, &pk, E));
        OK(strata_obj_set(place, pk, pname, &(strata_value){.type = STRATA_TYPE_INT, .u.i = i}, E));
        OK(strata_obj_create(loc, &lk, E));
        OK(strata_obj_set(place, pk, plink, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = lk}, E));
        strata_value t = {.type = STRATA_TYPE_STRING, .u.bytes = {i % 97 == 5 ? "Polygon" : "Point", i % 97 == 5 ? 7 : 5}};
        OK(strata_obj_set(loc, lk, ltype, &t, E));
        OK(strata_list_insert(loc, lk, lcoords, 0, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = geo_lng[i]}, E));
        OK(strata_list_insert(loc, lk, lcoords, 1, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = geo_lat[i]}, E));
    }
    strata_key_t nolink;
    OK(strata_obj_create(place, &nolink, E)); /* no location: in no region */
    OK(strata_obj_set(place, nolink, pname, &(strata_value){.type = STRATA_TYPE_INT, .u.i = -1}, E));
    OK(strata_txn_commit(txn, E));
    strata_txn_free(txn);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &txn, E));
    /* boxes (one across the antimeridian) and circles (one around a pole), against brute force */
    for (int round = 0; round < 60; round++) {
        double lat1 = (int64_t)(rnd() % 1000000007u) % 18001 / 100.0 - 90, lat2 = (int64_t)(rnd() % 1000000007u) % 18001 / 100.0 - 90;
        if (lat1 > lat2) { double t = lat1; lat1 = lat2; lat2 = t; }
        double w = (int64_t)(rnd() % 1000000007u) % 36001 / 100.0 - 180, e = (int64_t)(rnd() % 1000000007u) % 36001 / 100.0 - 180;
        double box[4] = {w, lat1, e, lat2};
        strata_geo g = {.kind = STRATA_GEO_BOX, .points = box, .npoints = 2};
        uint64_t n, want = 0;
        OK(geo_count(txn, round % 2 ? "location GEOWITHIN $0" : "location IN $0", &g, &n));
        for (int i = 0; i < GEO_N; i++) {
            if (i % 97 == 5 || geo_lat[i] < lat1 || geo_lat[i] > lat2) continue;
            bool in = fabs(geo_lat[i]) == 90 || (w <= e ? geo_lng[i] >= w && geo_lng[i] <= e
                                                        : geo_lng[i] >= w || geo_lng[i] <= e);
            want += in;
        }
        CHECK(n == want);
        double centre[2] = {round == 0 ? 0 : (int64_t)(rnd() % 1000000007u) % 36001 / 100.0 - 180,
                            round == 0 ? 90 : (int64_t)(rnd() % 1000000007u) % 18001 / 100.0 - 90};
        double radius = ((int64_t)(rnd() % 1000000007u) % 3000) / 1000.0;
        strata_geo c = {.kind = STRATA_GEO_CIRCLE, .points = centre, .npoints = 1, .radius = radius};
        OK(geo_count(txn, "location GEOWITHIN $0 AND name >= 0", &c, &n));
        want = 0;
        for (int i = 0; i < GEO_N; i++)
            want += i % 97 != 5 && haversine(centre[1], centre[0], geo_lat[i], geo_lng[i]) <= radius + 1e-9;
        CHECK(n == want);
    }
    /* a polygon with a hole, across the antimeridian: a square from 170E to 170W, 10S to 10N,
     * without the square 2 degrees around (180, 0) */
    strata_txn_free(txn);
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
    OK(strata_table_open(txn, "Place", &place, E));
    OK(strata_table_open(txn, "Loc", &loc, E));
    double probes[][2] = {{175, 5}, {-175, -5}, {180, 0}, {179.5, 0.5}, {165, 0}, {-165, 0}, {178.5, 0}};
    for (int i = 0; i < 7; i++) {
        strata_key_t pk, lk;
        OK(strata_obj_create(place, &pk, E));
        OK(strata_obj_set(place, pk, pname, &(strata_value){.type = STRATA_TYPE_INT, .u.i = 1000 + i}, E));
        OK(strata_obj_create(loc, &lk, E));
        OK(strata_obj_set(place, pk, plink, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = lk}, E));
        OK(strata_obj_set(loc, lk, ltype, &(strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {"Point", 5}}, E));
        OK(strata_list_insert(loc, lk, lcoords, 0, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = probes[i][0]}, E));
        OK(strata_list_insert(loc, lk, lcoords, 1, &(strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = probes[i][1]}, E));
    }
    double rings[] = {170, -10, -170, -10, -170, 10, 170, 10, 170, -10,
                      179, -1, 179, 1, -179, 1, -179, -1, 179, -1};
    size_t ends[] = {5, 10};
    strata_geo poly = {.kind = STRATA_GEO_POLYGON, .points = rings, .npoints = 10, .ring_ends = ends, .nrings = 2};
    strata_results_t *res;
    strata_query_t *q;
    OK(strata_query_compile(txn, "Place", "location GEOWITHIN $0 AND name >= 1000", &q, E));
    strata_value arg = {.type = STRATA_TYPE_GEO, .u.geo.shape = &poly};
    OK(strata_query_run(q, txn, &arg, 1, &res, E));
    /* in: (175, 5), (-175, -5), (178.5, 0); the hole holds (180, 0) and (179.5, 0.5) */
    CHECK(strata_results_size(res) == 3);
    strata_results_free(res);
    poly.nrings = 1;
    poly.npoints = 5;
    ends[0] = 5;
    OK(strata_query_run(q, txn, &arg, 1, &res, E));
    CHECK(strata_results_size(res) == 5);
    strata_results_free(res);
    /* the same regions as literals of the query language */
    strata_query_free(q);
    struct { const char *text; size_t want; } lits[] = {
        {"location GEOWITHIN geoPolygon({[170, -10], [-170, -10], [-170, 10], [170, 10], [170, -10]}, "
         "{[179, -1], [179, 1], [-179, 1], [-179, -1], [179, -1]}) AND name >= 1000", 3},
        {"location GEOWITHIN geoBox([170, -10], [-170, 10]) AND name >= 1000", 5},
        {"location GEOWITHIN geoCircle([180, 0], 0.0175) AND name >= 1000", 2}, /* (180, 0), (179.5, 0.5) */
    };
    for (size_t i = 0; i < 3; i++) {
        OK(strata_query_compile(txn, "Place", lits[i].text, &q, E));
        OK(strata_query_run(q, txn, NULL, 0, &res, E));
        CHECK(strata_results_size(res) == lits[i].want);
        strata_results_free(res);
        strata_query_free(q);
    }
    EXPECT_CODE(strata_query_compile(txn, "Place", "location GEOWITHIN geoCircle([1, 2], )", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "expected a number"));
    EXPECT_CODE(strata_query_compile(txn, "Place", "location GEOWITHIN geoSquare([1, 2])", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_query_compile(txn, "Place", "location GEOWITHIN $0 AND name >= 1000", &q, E));
    /* bad regions: named */
    double open_ring[] = {0, 0, 1, 0, 1, 1, 0, 2};
    size_t oe[] = {4};
    strata_geo bad = {.kind = STRATA_GEO_POLYGON, .points = open_ring, .npoints = 4, .ring_ends = oe, .nrings = 1};
    arg.u.geo.shape = &bad;
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "not closed"));
    double bow[] = {0, 0, 2, 2, 2, 0, 0, 2, 0, 0}; /* a bow tie: edges 0 and 2 cross */
    size_t be[] = {5};
    strata_geo tie = {.kind = STRATA_GEO_POLYGON, .points = bow, .npoints = 5, .ring_ends = be, .nrings = 1};
    arg.u.geo.shape = &tie;
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "edges 0 and 2 cross"));
    double sq[] = {0, 0, 1, 0, 1, 1, 0, 1, 0, 0, 2, 2, 3, 2, 3, 3, 2, 3, 2, 2};
    size_t se[] = {5, 10};
    strata_geo outside = {.kind = STRATA_GEO_POLYGON, .points = sq, .npoints = 10, .ring_ends = se, .nrings = 2};
    arg.u.geo.shape = &outside;
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "not inside the first ring"));
    double c0[] = {0, 0};
    strata_geo neg = {.kind = STRATA_GEO_CIRCLE, .points = c0, .npoints = 1, .radius = -1};
    arg.u.geo.shape = &neg;
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "radius"));
    double badbox[] = {0, 95, 1, 1};
    strata_geo bb = {.kind = STRATA_GEO_BOX, .points = badbox, .npoints = 2};
    arg.u.geo.shape = &bb;
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_INVALID_ARGUMENT);
    /* not a region; a top-level target; a non-link */
    arg = vint(3);
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "needs a region"));
    strata_query_free(q);
    arg = (strata_value){.type = STRATA_TYPE_GEO, .u.geo.shape = &(strata_geo){.kind = STRATA_GEO_CIRCLE, .points = c0, .npoints = 1, .radius = 1}};
    OK(strata_query_compile(txn, "Place", "top GEOWITHIN $0", &q, E));
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_WRONG_TYPE);
    CHECK(strstr(tl_err.message, "'Top' is at the top level"));
    strata_query_free(q);
    OK(strata_query_compile(txn, "Place", "name GEOWITHIN $0", &q, E));
    EXPECT_CODE(strata_query_run(q, txn, &arg, 1, &res, E), STRATA_ERR_WRONG_TYPE);
    strata_query_free(q);
    EXPECT_CODE(strata_query_compile(txn, "Place", "location GEOWITHIN 3", &q, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "region after GEOWITHIN"));
    /* a region is a query argument only: never stored */
    strata_table_t *pl;
    OK(strata_table_open(txn, "Place", &pl, E));
    strata_key_t k0;
    OK(strata_obj_next(pl, -1, &k0, E));
    EXPECT_CODE(strata_obj_set(pl, k0, pname, &arg, E), STRATA_ERR_WRONG_TYPE);
    strata_txn_free(txn);
    OK(strata_db_close(db, E));
}

/* strata_query_matches and strata_query_position: one object against a query, as a live
 * collection follows a commit. For random objects and sorts (ties, nulls, descending, through a
 * link), every object of a run's results is found where the run put it among the others, and
 * matches is true exactly for those. */
static void one_object_matched_and_placed(void) {
    tl_seed(0xFACADE);
    strata_db_t *db;
    OK(tl_db_open(tl_path("place.db"), &db));
    strata_txn_t *w;
    strata_table_t *t, *o;
    strata_col_t a, b, s, l, on;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Owner", &o, E));
    OK(strata_table_add_property(o, "name", STRATA_TYPE_STRING, 0, NULL, &on, E));
    OK(strata_table_create(w, "Item", &t, E));
    OK(strata_table_add_property(t, "a", STRATA_TYPE_INT, STRATA_PROP_NULLABLE, NULL, &a, E));
    OK(strata_table_add_property(t, "b", STRATA_TYPE_INT, 0, NULL, &b, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &s, E));
    OK(strata_table_add_property(t, "owner", STRATA_TYPE_LINK, 0, "Owner", &l, E));
    static const char *names[] = {"b", "a", "张", "", "ab"};
    for (int i = 0; i < 6; i++) {
        strata_key_t k;
        OK(strata_obj_create(o, &k, E));
        strata_value v = vstr(names[i % 5]);
        OK(strata_obj_set(o, k, on, &v, E));
    }
    for (int i = 0; i < 400; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        strata_value va = rnd() % 7 ? vint((int64_t)(rnd() % 20)) : vnull(), vb = vint((int64_t)(rnd() % 5)),
                     vs = vstr(names[rnd() % 5]), vl = rnd() % 5 ? vlink((int64_t)(rnd() % 6)) : vnull();
        OK(strata_obj_set(t, k, a, &va, E));
        OK(strata_obj_set(t, k, b, &vb, E));
        OK(strata_obj_set(t, k, s, &vs, E));
        OK(strata_obj_set(t, k, l, &vl, E));
        if (i % 50 == 7) OK(strata_obj_delete(t, k - 3, E)); /* gaps in the keys */
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    static const char *queries[] = {
        "a > 5", "a > 5 SORT(a ASC)", "b != 2 SORT(b DESC, a ASC)", "TRUEPREDICATE SORT(s ASC, b DESC)",
        "s BEGINSWITH 'a' OR a == nil SORT(owner.name DESC)", "b < $0 SORT(a DESC)",
    };
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    strata_value arg = vint(3);
    for (size_t qi = 0; qi < sizeof queries / sizeof *queries; qi++) {
        strata_query_t *q;
        strata_results_t *res;
        OK(strata_query_compile(r, "Item", queries[qi], &q, E));
        OK(strata_query_run(q, r, &arg, 1, &res, E));
        size_t n = strata_results_size(res);
        strata_key_t *keys = malloc((n + 1) * sizeof *keys), *others = malloc((n + 1) * sizeof *others);
        CHECK(keys && others && n > 10);
        for (size_t i = 0; i < n; i++) keys[i] = strata_results_key(res, i);
        for (size_t i = 0; i < n; i++) { /* each one, placed among the others */
            memcpy(others, keys, i * sizeof *keys);
            memcpy(others + i, keys + i + 1, (n - i - 1) * sizeof *keys);
            size_t pos = 99999;
            OK(strata_query_position(q, r, others, n - 1, keys[i], &pos, E));
            if (pos != i) fprintf(stderr, "  '%s': object %lld placed at %zu, run put it at %zu\n", queries[qi], (long long)keys[i], pos, i);
            CHECK(pos == i);
        }
        for (strata_key_t k = 0; k < 410; k++) { /* matches: exactly the run's objects */
            bool m = true, in = false;
            OK(strata_query_matches(q, r, &arg, 1, k, &m, E));
            for (size_t i = 0; i < n && !in; i++) in = keys[i] == k;
            CHECK(m == in);
        }
        free(keys);
        free(others);
        strata_results_free(res);
        strata_query_free(q);
    }
    strata_query_t *q;
    OK(strata_query_compile(r, "Item", "a > 1 LIMIT(3)", &q, E));
    size_t pos;
    EXPECT_CODE(strata_query_position(q, r, NULL, 0, 1, &pos, E), STRATA_ERR_INVALID_ARGUMENT);
    bool m;
    EXPECT_CODE(strata_query_matches(q, r, NULL, 0, 1, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_query_matches(q, r, NULL, 0, 1, &m, E));
    strata_query_free(q);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* A scan over many clusters (the query engine evaluates each a few clusters after the tree walk
 * passes it, its leaves asked for meanwhile): results in key order and counts as brute force
 * finds them, for packed comparisons alone and with row reads, in a read transaction and in a
 * write transaction that has changed objects. */
static void scans_of_many_clusters_match_brute_force(void) {
    enum { N = 20000 };
    strata_db_t *db;
    OK(tl_db_open(tl_path("many-clusters.db"), &db));
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t ca, cs;
    static int64_t a[N];
    static bool gone[N];
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Many", &t, E));
    OK(strata_table_add_property(t, "a", STRATA_TYPE_INT, 0, NULL, &ca, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, 0, NULL, &cs, E));
    for (int i = 0; i < N; i++) {
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        a[i] = (int64_t)(rnd() % 100);
        char str[16];
        snprintf(str, sizeof str, "x%d", i % 37);
        OK(strata_obj_set(t, k, ca, (strata_value[]){vint(a[i])}, E));
        OK(strata_obj_set(t, k, cs, (strata_value[]){vstr(str)}, E));
    }
    for (int i = 0; i < N; i += 5) { /* gaps: clusters whose keys must be read */
        OK(strata_obj_delete(t, i, E));
        gone[i] = true;
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    static const char *queries[] = {"a < 30", "a < 30 AND s BEGINSWITH 'x1'",
                                    "a >= 90 OR s == 'x5'"};
    for (int pass = 0; pass < 2; pass++) { /* a read transaction, then a write transaction */
        strata_txn_t *txn;
        OK(strata_txn_begin(db, pass ? STRATA_TXN_WRITE : STRATA_TXN_READ, &txn, E));
        if (pass) {
            OK(strata_table_open(txn, "Many", &t, E));
            for (int i = 1; i < N; i += 97) {
                if (gone[i]) continue;
                a[i] = 95 - a[i] % 10;
                OK(strata_obj_set(t, i, ca, (strata_value[]){vint(a[i])}, E));
            }
        }
        for (size_t qi = 0; qi < sizeof queries / sizeof *queries; qi++) {
            strata_query_t *q;
            strata_results_t *res;
            uint64_t count = 0;
            OK(strata_query_compile(txn, "Many", queries[qi], &q, E));
            OK(strata_query_run(q, txn, NULL, 0, &res, E));
            OK(strata_query_count(q, txn, NULL, 0, &count, E));
            size_t at = 0;
            bool same = true;
            for (int i = 0; i < N && same; i++) {
                char str[16];
                snprintf(str, sizeof str, "x%d", i % 37);
                bool m = qi == 0   ? a[i] < 30
                         : qi == 1 ? a[i] < 30 && strncmp(str, "x1", 2) == 0
                                   : a[i] >= 90 || strcmp(str, "x5") == 0;
                if (gone[i] || !m) continue;
                same = at < strata_results_size(res) && strata_results_key(res, at) == i;
                at++;
            }
            CHECK(same && at == strata_results_size(res) && count == at && at > 1000);
            strata_results_free(res);
            strata_query_free(q);
        }
        strata_txn_free(txn);
    }
    OK(strata_db_close(db, E));
}

/* CONTAINS compares bytes 16 positions at a time (query/text.c) and the last few one by one:
 * parts of one to many characters, found or nearly found (the same first bytes, the same last
 * byte) at every position of texts of every length up to 90 bytes, as the column-wise scan
 * and the row-wise comparison (the constant as the text) decide them, against memmem. */
static void contains_finds_parts_at_every_position(void) {
    /* 好 她 share their first two bytes (E5 A5), 妳 its first (E5) */
    static const char *tokens[] = {"a", "b", "好", "她", "妳"};
    enum { N = 600, MAXTOK = 40 };
    static char texts[N][MAXTOK * 3 + 1];
    static int toks[N][MAXTOK], ntok[N];
    strata_db_t *db;
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t cs;
    OK(tl_db_open(tl_path("contains.db"), &db));
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Text", &t, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, 0, NULL, &cs, E));
    for (int i = 0; i < N; i++) {
        ntok[i] = (int)(rnd() % (MAXTOK + 1));
        texts[i][0] = 0;
        for (int j = 0; j < ntok[i]; j++) {
            toks[i][j] = (int)(rnd() % 5);
            strcat(texts[i], tokens[toks[i][j]]);
        }
        strata_key_t k;
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, cs, (strata_value[]){vstr(texts[i])}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_READ, &w, E));
    int checked = 0, found_somewhere = 0;
    for (int round = 0; round < 300; round++) {
        char part[MAXTOK * 3 + 1] = "", text[MAXTOK * 3 + 40];
        int from = (int)(rnd() % N), len = 1 + (int)(rnd() % 8);
        if (round % 3 == 0) { /* made up: found or nearly found */
            for (int j = 0; j < len; j++) strcat(part, tokens[rnd() % 5]);
        } else { /* a piece of a stored text */
            int a = ntok[from] ? (int)(rnd() % (unsigned)ntok[from]) : 0;
            for (int j = a; j < a + len && j < ntok[from]; j++) strcat(part, tokens[toks[from][j]]);
            if (!part[0]) strcat(part, "好");
        }
        uint64_t want = 0, got = 0, rwant = 0, rgot = 0;
        for (int i = 0; i < N; i++) {
            want += memmem(texts[i], strlen(texts[i]), part, strlen(part)) != NULL;
            rwant += memmem(texts[from], strlen(texts[from]), texts[i], strlen(texts[i])) != NULL;
        }
        strata_query_t *q;
        snprintf(text, sizeof text, "s CONTAINS '%s'", part);
        OK(strata_query_compile(w, "Text", text, &q, E));
        OK(strata_query_count(q, w, NULL, 0, &got, E));
        strata_query_free(q);
        snprintf(text, sizeof text, "'%s' CONTAINS s", texts[from]);
        OK(strata_query_compile(w, "Text", text, &q, E));
        OK(strata_query_count(q, w, NULL, 0, &rgot, E));
        strata_query_free(q);
        if (got != want || rgot != rwant) {
            fprintf(stderr, "  FAIL: CONTAINS '%s': %llu of %llu; '%s' CONTAINS s: %llu of %llu\n",
                    part, (unsigned long long)got, (unsigned long long)want, texts[from],
                    (unsigned long long)rgot, (unsigned long long)rwant);
            tl_failed_checks++;
            break;
        }
        checked++;
        found_somewhere += want > 0 && want < N;
    }
    strata_txn_free(w);
    fprintf(stderr, "  %d parts checked both ways, %d found in some texts and not others\n",
            checked, found_somewhere);
    CHECK(checked == 300 && found_somewhere > 150);
    OK(strata_db_close(db, E));
}

static const tl_test tests[] = {
    TL_TEST(scans_of_many_clusters_match_brute_force),
    TL_TEST(one_object_matched_and_placed),
    TL_TEST(geo_regions),
    TL_TEST(comparisons_strings_and_logic),
    TL_TEST(paths_arguments_and_suffixes),
    TL_TEST(aggregates_over_results),
    TL_TEST(errors_name_the_column_and_the_problem),
    TL_TEST(a_query_gives_the_newer_answer_on_a_newer_version),
    TL_TEST(literals_of_every_kind),
    TL_TEST(unicode_folding_and_like),
    TL_TEST(literals_and_names_realm_accepts),
    TL_TEST(aggregates_of_links_and_constants_on_the_left),
    TL_TEST(two_properties_compared),
    TL_TEST(random_predicates_match_brute_force),
    TL_TEST(public_names_stand_for_columns),
    TL_TEST(decimal_and_date_aggregates),
    TL_TEST(chains_fold_into_sets),
    TL_TEST(real_columns_compare_column_wise),
    TL_TEST(packed_properties_added_later_hold_their_default),
    TL_TEST(string_columns_compare_column_wise),
    TL_TEST(two_sided_ranges_use_both_bounds),
    TL_TEST(index_equality_answers_exactly),
    TL_TEST(contains_finds_parts_at_every_position),
};

int main(int argc, char **argv) {
    tl_seed(0x853c49e6748fea9bull);
    return tl_run(QUERY_SUITE, tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
