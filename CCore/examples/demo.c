/*
 * demo.c — the classic example through strata.h only: Company, Person (name indexed, age, a
 * to-one company, a list of dogs) and Dog (name, color, and its owners through backlinks).
 * It adds 张三 with three dogs, prints each dog's owners, renames a person, deletes a dog, and
 * shows that the list and the backlinks followed.
 */
#include "strata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static strata_error err;

#define TRY(call)                                                                       \
    do {                                                                                \
        if ((call) != STRATA_OK) {                                                      \
            fprintf(stderr, "%s failed: %s: %s\n", #call, strata_status_name(err.code), \
                    err.message);                                                       \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static strata_value str(const char *s) {
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
}
static strata_value num(int64_t i) { return (strata_value){.type = STRATA_TYPE_INT, .u.i = i}; }
static strata_value link_to(strata_key_t k) {
    return (strata_value){.type = STRATA_TYPE_LINK, .u.link = k};
}

typedef struct schema {
    strata_table_t *company, *person, *dog;
    strata_col_t company_name, name, age, works_at, dogs, dog_name, color;
} schema;

static void open_schema(strata_txn_t *txn, schema *s) {
    TRY(strata_table_open(txn, "Company", &s->company, &err));
    TRY(strata_table_open(txn, "Person", &s->person, &err));
    TRY(strata_table_open(txn, "Dog", &s->dog, &err));
    TRY(strata_table_find_property(s->company, "name", &s->company_name, &err));
    TRY(strata_table_find_property(s->person, "name", &s->name, &err));
    TRY(strata_table_find_property(s->person, "age", &s->age, &err));
    TRY(strata_table_find_property(s->person, "company", &s->works_at, &err));
    TRY(strata_table_find_property(s->person, "dogs", &s->dogs, &err));
    TRY(strata_table_find_property(s->dog, "name", &s->dog_name, &err));
    TRY(strata_table_find_property(s->dog, "color", &s->color, &err));
}

static void create_schema(strata_txn_t *txn) {
    strata_table_t *company, *person, *dog;
    strata_col_t c;
    TRY(strata_table_create(txn, "Company", &company, &err));
    TRY(strata_table_add_property(company, "name", STRATA_TYPE_STRING, STRATA_PROP_PRIMARY_KEY, NULL, &c, &err));
    TRY(strata_table_create(txn, "Dog", &dog, &err));
    TRY(strata_table_add_property(dog, "name", STRATA_TYPE_STRING, 0, NULL, &c, &err));
    TRY(strata_table_add_property(dog, "color", STRATA_TYPE_STRING, 0, NULL, &c, &err));
    TRY(strata_table_create(txn, "Person", &person, &err));
    TRY(strata_table_add_property(person, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c, &err));
    TRY(strata_table_add_property(person, "age", STRATA_TYPE_INT, 0, NULL, &c, &err));
    TRY(strata_table_add_property(person, "company", STRATA_TYPE_LINK, 0, "Company", &c, &err));
    TRY(strata_table_add_property(person, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &c, &err));
    TRY(strata_schema_set_version(txn, 1, &err));
}

static const char *text(strata_table_t *t, strata_key_t k, strata_col_t col, char *buf, size_t cap) {
    strata_value v;
    TRY(strata_obj_get(t, k, col, &v, &err));
    if (v.type == STRATA_TYPE_NULL) return "(null)";
    snprintf(buf, cap, "%.*s", (int)v.u.bytes.len, (const char *)v.u.bytes.data);
    return buf;
}

static void show(strata_db_t *db, const char *title) {
    strata_txn_t *txn;
    schema s;
    char a[64], b[64];
    TRY(strata_txn_begin(db, STRATA_TXN_READ, &txn, &err));
    open_schema(txn, &s);
    printf("-- %s (version %llu)\n", title, (unsigned long long)strata_txn_version(txn));
    for (strata_key_t p = -1; strata_obj_next(s.person, p, &p, NULL) == STRATA_OK;) {
        strata_value age, company;
        size_t n;
        TRY(strata_obj_get(s.person, p, s.age, &age, &err));
        TRY(strata_obj_get(s.person, p, s.works_at, &company, &err));
        TRY(strata_list_size(s.person, p, s.dogs, &n, &err));
        printf("   %s, %lld, works at %s, dogs:", text(s.person, p, s.name, a, sizeof a),
               (long long)age.u.i,
               company.type == STRATA_TYPE_LINK ? text(s.company, company.u.link, s.company_name, b, sizeof b)
                                                : "(nobody)");
        for (size_t i = 0; i < n; i++) {
            strata_value d;
            TRY(strata_list_get(s.person, p, s.dogs, i, &d, &err));
            printf(" %s", text(s.dog, d.u.link, s.dog_name, b, sizeof b));
        }
        printf("\n");
    }
    for (strata_key_t d = -1; strata_obj_next(s.dog, d, &d, NULL) == STRATA_OK;) {
        strata_key_t owners[8];
        size_t n;
        TRY(strata_obj_backlinks(s.dog, d, s.person, s.dogs, owners, 8, &n, &err));
        printf("   dog %s (%s), owners:", text(s.dog, d, s.dog_name, a, sizeof a),
               text(s.dog, d, s.color, b, sizeof b));
        for (size_t i = 0; i < n && i < 8; i++) printf(" %s", text(s.person, owners[i], s.name, a, sizeof a));
        printf("%s\n", n ? "" : " (none)");
    }
    strata_txn_free(txn);
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/tmp/strata-demo.db";
    char lock[512];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
    snprintf(lock, sizeof lock, "%s.log", path); /* the commit log */
    unlink(lock);
    printf("Strata %s: the classic example in %s\n", strata_version(), path);

    strata_db_t *db;
    strata_txn_t *txn;
    schema s;
    TRY(strata_db_open(path, NULL, &db, &err));

    /* 1. the schema, 张三 with three dogs, 李四 sharing one of them */
    TRY(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &err));
    create_schema(txn);
    open_schema(txn, &s);
    strata_key_t google, zhang, li, dogs[3];
    TRY(strata_obj_create_pk(s.company, (strata_value[]){str("GOOGLE")}, &google, &err));
    TRY(strata_obj_create(s.person, &zhang, &err));
    TRY(strata_obj_set(s.person, zhang, s.name, (strata_value[]){str("张三")}, &err));
    TRY(strata_obj_set(s.person, zhang, s.age, (strata_value[]){num(32)}, &err));
    TRY(strata_obj_set(s.person, zhang, s.works_at, (strata_value[]){link_to(google)}, &err));
    TRY(strata_obj_create(s.person, &li, &err));
    TRY(strata_obj_set(s.person, li, s.name, (strata_value[]){str("李四")}, &err));
    TRY(strata_obj_set(s.person, li, s.age, (strata_value[]){num(28)}, &err));
    const char *names[] = {"小黑", "小白", "旺财"}, *colors[] = {"黑色", "白色", "黄色"};
    for (int i = 0; i < 3; i++) {
        TRY(strata_obj_create(s.dog, &dogs[i], &err));
        TRY(strata_obj_set(s.dog, dogs[i], s.dog_name, (strata_value[]){str(names[i])}, &err));
        TRY(strata_obj_set(s.dog, dogs[i], s.color, (strata_value[]){str(colors[i])}, &err));
        TRY(strata_list_insert(s.person, zhang, s.dogs, (size_t)i, (strata_value[]){link_to(dogs[i])}, &err));
    }
    TRY(strata_list_insert(s.person, li, s.dogs, 0, (strata_value[]){link_to(dogs[1])}, &err));
    TRY(strata_txn_commit(txn, &err));
    strata_txn_free(txn);
    show(db, "张三 with three dogs; 李四 shares 小白");

    /* 2. a bad write is refused with a message, and nothing changes */
    TRY(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &err));
    open_schema(txn, &s);
    strata_key_t dup;
    if (strata_obj_create_pk(s.company, (strata_value[]){str("GOOGLE")}, &dup, &err) != STRATA_OK)
        printf("-- refused: %s\n", err.message);
    if (strata_obj_set(s.person, zhang, s.age, (strata_value[]){str("old")}, &err) != STRATA_OK)
        printf("-- refused: %s\n", err.message);

    /* 3. rename 张三 (the index follows) and delete 小白 (lists and backlinks follow) */
    TRY(strata_obj_set(s.person, zhang, s.name, (strata_value[]){str("张三丰")}, &err));
    TRY(strata_obj_delete(s.dog, dogs[1], &err));
    TRY(strata_txn_commit(txn, &err));
    strata_txn_free(txn);
    show(db, "renamed 张三 to 张三丰, deleted 小白");

    TRY(strata_txn_begin(db, STRATA_TXN_READ, &txn, &err));
    open_schema(txn, &s);
    strata_key_t found[4];
    size_t n;
    TRY(strata_index_find(s.person, s.name, (strata_value[]){str("张三丰")}, found, 4, &n, &err));
    printf("-- index: name == '张三丰' finds %zu person(s); ", n);
    TRY(strata_index_find(s.person, s.name, (strata_value[]){str("张三")}, found, 4, &n, &err));
    printf("name == '张三' finds %zu\n", n);
    strata_txn_free(txn);

    TRY(strata_db_verify(db, &err));
    printf("-- verify: ok\n");
    TRY(strata_db_close(db, &err));
    return 0;
}
