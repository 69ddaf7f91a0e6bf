/*
 * fuzz_query.c — libFuzzer target: the input is a query string (random or mutated from real
 * ones), compiled against a small Person/Dog database (Person.bio has a full-text index) and, when it compiles, run and counted
 * with a few arguments. Whatever the string: an error or an answer, never a crash.
 */
#include "strata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static strata_db_t *db;

static void setup(void) {
    char id[64];
    snprintf(id, sizeof id, "fuzz-query-%d", (int)getpid());
    strata_options o;
    strata_options_init(&o);
    o.durability = STRATA_DURABILITY_MEMORY;
    o.map_size = 1ull << 30;
    if (strata_db_open(id, &o, &db, NULL)) abort();
    strata_txn_t *w;
    strata_table_t *p, *d;
    strata_col_t c;
    if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, NULL)) abort();
    strata_table_create(w, "Dog", &d, NULL);
    strata_table_add_property(d, "name", STRATA_TYPE_STRING, 0, NULL, &c, NULL);
    strata_table_add_property(d, "age", STRATA_TYPE_INT, STRATA_PROP_NULLABLE, NULL, &c, NULL);
    strata_table_create(w, "Person", &p, NULL);
    strata_table_add_property(p, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c, NULL);
    strata_table_add_property(p, "age", STRATA_TYPE_INT, STRATA_PROP_INDEXED, NULL, &c, NULL);
    strata_table_add_property(p, "score", STRATA_TYPE_DOUBLE, STRATA_PROP_NULLABLE, NULL, &c, NULL);
    strata_table_add_property(p, "born", STRATA_TYPE_TIMESTAMP, 0, NULL, &c, NULL);
    strata_table_add_property(p, "best", STRATA_TYPE_LINK, 0, "Dog", &c, NULL);
    strata_table_add_property(p, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &c, NULL);
    strata_table_add_property(p, "tags", STRATA_TYPE_STRING, STRATA_PROP_LIST, NULL, &c, NULL);
    strata_table_add_property(p, "any", STRATA_TYPE_MIXED, STRATA_PROP_NULLABLE, NULL, &c, NULL);
    strata_table_add_property(p, "bio", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT, NULL, &c, NULL);
    const char *bios[] = {"José likes e-mail and DATA", "张三 lives in 東京", "", "swift, objc; swift!",
                          "Ça va très bien"};
    const char *names[] = {"张三", "李四", "José", "", "小白"};
    for (int i = 0; i < 40; i++) {
        strata_key_t dk, pk;
        strata_obj_create(d, &dk, NULL);
        strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {names[i % 5], strlen(names[i % 5])}};
        strata_obj_set(d, dk, 1, &v, NULL);
        strata_obj_create(p, &pk, NULL);
        strata_obj_set(p, pk, 1, &v, NULL);
        strata_obj_set(p, pk, 2, &(strata_value){.type = STRATA_TYPE_INT, .u.i = i % 7}, NULL);
        strata_obj_set(p, pk, 5, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = dk}, NULL);
        strata_list_insert(p, pk, 6, 0, &(strata_value){.type = STRATA_TYPE_LINK, .u.link = dk}, NULL);
        strata_list_insert(p, pk, 7, 0, &v, NULL);
        strata_value bio = {.type = STRATA_TYPE_STRING, .u.bytes = {bios[i % 5], strlen(bios[i % 5])}};
        strata_obj_set(p, pk, 9, &bio, NULL);
    }
    strata_txn_commit(w, NULL);
    strata_txn_free(w);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!db) setup();
    char *text = malloc(size + 1);
    if (!text) return 0;
    memcpy(text, data, size);
    text[size] = 0;
    strata_txn_t *r;
    if (strata_txn_begin(db, STRATA_TXN_READ, &r, NULL) == STRATA_OK) {
        strata_query_t *q;
        if (strata_query_compile(r, "Person", text, &q, NULL) == STRATA_OK) {
            strata_value items[2] = {{.type = STRATA_TYPE_INT, .u.i = 3}, {.type = STRATA_TYPE_STRING, .u.bytes = {"李四", 6}}};
            strata_value args[4] = {{.type = STRATA_TYPE_INT, .u.i = 2},
                                    {.type = STRATA_TYPE_STRING, .u.bytes = {"张", 3}},
                                    {.type = STRATA_TYPE_LIST, .u.list = {items, 2}},
                                    {.type = STRATA_TYPE_NULL}};
            strata_results_t *res;
            uint64_t n;
            if (strata_query_run(q, r, args, 4, &res, NULL) == STRATA_OK) strata_results_free(res);
            strata_query_count(q, r, args, 4, &n, NULL);
            strata_query_free(q);
        }
        strata_txn_free(r);
    }
    free(text);
    return 0;
}
