/*
 * objops.h — an interpreter that turns bytes into object operations through strata.h: the
 * operation fuzz target runs it on fuzzer input, make_seeds on fixed programs (to make object
 * database seeds), and fuzz_open's reader walks what it made.
 *
 * Schema: Dog {name string indexed, age int?, tags [string?], score mixed (values, or typed links
 *              to people)}
 *         Person {id int primary key, name string (full-text index), best Dog link, dogs [Dog], born timestamp,
 *                 nick {string: int?} (a map), badge Badge link, badges {string: Badge}}
 *         Badge (embedded) {label string, inner Badge link}
 * Each operation is one opcode byte and argument bytes; errors from the API are expected (bad
 * indexes, duplicate keys, dead links) and ignored, but a crash or a failed verify is a bug.
 * Before each commit the write's changes are computed (strata_changes_get, and one list's with
 * strata_list_changes_get) against the snapshot it began on.
 * A commit is now and then followed by a compaction (packed or plain), so the operations after
 * it change packed pages.
 */
#ifndef STRATA_OBJOPS_H
#define STRATA_OBJOPS_H

#include "strata.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct objops_in {
    const uint8_t *p;
    size_t n, i;
} objops_in;

static uint8_t oo_byte(objops_in *in) { return in->i < in->n ? in->p[in->i++] : 0; }
static int64_t oo_small(objops_in *in) { return (int64_t)(oo_byte(in) % 64); }

static strata_value oo_string(objops_in *in) {
    static const char *const words[] = {"", "a", "小白", "Zoë", "张三", "ab\0c", "long "};
    static char buf[4096];
    uint8_t b = oo_byte(in);
    size_t len;
    if (b < 200) {
        const char *w = words[b % 7];
        len = b % 7 == 5 ? 4 : strlen(w);
        memcpy(buf, w, len);
    } else { /* a big value (an overflow run) */
        len = 1000 + (size_t)(b - 200) * 37;
        memset(buf, 'x', len);
    }
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {buf, len}};
}

static int oo_schema(strata_txn_t *txn, strata_table_t **dog, strata_table_t **person) {
    if (strata_table_open(txn, "Dog", dog, NULL) == STRATA_OK &&
        strata_table_open(txn, "Person", person, NULL) == STRATA_OK)
        return 0;
    strata_col_t c;
    if (strata_table_create(txn, "Dog", dog, NULL) || strata_table_create(txn, "Person", person, NULL))
        return -1;
    strata_table_add_property(*dog, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c, NULL);
    strata_table_add_property(*dog, "age", STRATA_TYPE_INT, STRATA_PROP_NULLABLE, NULL, &c, NULL);
    strata_table_add_property(*dog, "tags", STRATA_TYPE_STRING, STRATA_PROP_LIST | STRATA_PROP_NULLABLE, NULL, &c, NULL);
    strata_table_add_property(*dog, "score", STRATA_TYPE_MIXED, 0, NULL, &c, NULL);
    strata_table_add_property(*person, "id", STRATA_TYPE_INT, STRATA_PROP_PRIMARY_KEY, NULL, &c, NULL);
    strata_table_add_property(*person, "name", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT, NULL, &c, NULL);
    strata_table_add_property(*person, "best", STRATA_TYPE_LINK, 0, "Dog", &c, NULL);
    strata_table_add_property(*person, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &c, NULL);
    strata_table_add_property(*person, "born", STRATA_TYPE_TIMESTAMP, 0, NULL, &c, NULL);
    strata_table_t *badge;
    if (strata_table_create(txn, "Badge", &badge, NULL)) return -1;
    strata_table_add_property(badge, "label", STRATA_TYPE_STRING, 0, NULL, &c, NULL);
    strata_table_add_property(badge, "inner", STRATA_TYPE_LINK, 0, "Badge", &c, NULL);
    strata_table_set_embedded(badge, true, 0, NULL);
    strata_table_add_property(*person, "nick", STRATA_TYPE_INT, STRATA_PROP_MAP | STRATA_PROP_NULLABLE, NULL, &c, NULL);
    strata_table_add_property(*person, "badge", STRATA_TYPE_LINK, 0, "Badge", &c, NULL);
    strata_table_add_property(*person, "badges", STRATA_TYPE_LINK, STRATA_PROP_MAP, "Badge", &c, NULL);
    return 0;
}

/* A column of table t by its position (1-based ids are assigned in order). */
static strata_col_t oo_col(strata_table_t *t, objops_in *in) {
    size_t n = 0;
    strata_property_info info;
    strata_table_property_count(t, &n, NULL);
    if (!n || strata_table_property_at(t, oo_byte(in) % n, &info, NULL)) return 0;
    return info.col;
}

/* Run the program in `in` on db; returns 0, or -1 when verify fails (a bug). */
__attribute__((unused)) static int objops_run(strata_db_t *db, objops_in *in) {
    strata_txn_t *txn = NULL, *before = NULL;
    strata_table_t *dog = NULL, *person = NULL;
    int steps = 0;
    while (in->i < in->n && steps++ < 400) {
        if (!txn) {
            strata_txn_free(before); /* the snapshot the write's changes are taken against */
            before = NULL;
            strata_txn_begin(db, STRATA_TXN_READ, &before, NULL);
            if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, NULL)) {
                strata_txn_free(before);
                return 0;
            }
            if (oo_schema(txn, &dog, &person)) {
                strata_txn_free(txn);
                strata_txn_free(before);
                return 0;
            }
        }
        uint8_t op = oo_byte(in) % 20;
        strata_table_t *t = oo_byte(in) % 2 ? dog : person;
        strata_key_t k = oo_small(in), out;
        strata_value v;
        size_t idx = (size_t)oo_byte(in) % 6;
        switch (op) {
        case 0: case 1:
            if (t == dog) strata_obj_create(dog, &out, NULL);
            else strata_obj_create_pk(person, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = oo_small(in)}}, &out, NULL);
            break;
        case 2: strata_obj_delete(t, k, NULL); break;
        case 3: v = oo_string(in); strata_obj_set(t, k, oo_col(t, in), &v, NULL); break;
        case 4:
            v = (strata_value){.type = oo_byte(in) % 13, .u.i = oo_small(in)};
            if (v.type == STRATA_TYPE_STRING || v.type == STRATA_TYPE_BINARY) v.u.bytes.len = 0, v.u.bytes.data = "";
            strata_obj_set(t, k, oo_col(t, in), &v, NULL);
            break;
        case 5:
            v = (strata_value){.type = STRATA_TYPE_LINK, .u.link = oo_small(in)};
            strata_obj_set(person, k, 3, &v, NULL);
            break;
        case 6:
            v = (strata_value){.type = STRATA_TYPE_LINK, .u.link = oo_small(in)};
            strata_list_insert(person, k, 4, idx, &v, NULL);
            break;
        case 7: v = oo_string(in); strata_list_insert(dog, k, 3, idx, &v, NULL); break;
        case 8: strata_list_remove(t, k, t == dog ? 3 : 4, idx, NULL); break;
        case 9: strata_list_move(t, k, t == dog ? 3 : 4, idx, (size_t)oo_byte(in) % 6, NULL); break;
        case 10: strata_list_clear(t, k, t == dog ? 3 : 4, NULL); break;
        case 11:
            strata_obj_prefetch(t, k, NULL);
            strata_obj_get(t, k, oo_col(t, in), &v, NULL);
            break;
        case 12: {
            /* the write's own changes, of the tables and of one list of each (as a notifier
             * computes them) */
            for (int tb = 0; before && tb < 2; tb++) {
                strata_changes_t *ch;
                strata_list_changes_t *lc;
                if (strata_changes_get(before, txn, tb ? "Person" : "Dog", &ch, NULL) == STRATA_OK) {
                    for (size_t i = 0; i < strata_changes_count(ch, STRATA_CHANGE_MODIFIED); i++)
                        (void)strata_changes_property_changed(ch, i, tb ? 4 : 3);
                    strata_changes_free(ch);
                }
                if (strata_list_changes_get(before, txn, tb ? "Person" : "Dog", k, tb ? 4 : 3, &lc, NULL) == STRATA_OK)
                    strata_list_changes_free(lc);
            }
            strata_txn_commit(txn, NULL);
            strata_txn_free(txn);
            strata_txn_free(before); /* a compaction needs the handle without transactions */
            txn = before = NULL;
            uint8_t c = oo_byte(in);
            if (c % 8 == 0) { /* now and then a compaction, packed or not: later operations
                                 rewrite packed pages plain, and verify checks the region */
                strata_copy_options co;
                strata_copy_options_init(&co);
                co.pack = c % 16 == 0;
                co.pack_level = (c >> 4) % 3;
                strata_db_compact(db, &co, NULL);
            }
            break;
        }
        case 13:
            strata_txn_free(txn); /* abort */
            txn = NULL;
            break;
        case 14: strata_table_set_indexed(dog, 2, oo_byte(in) % 2, NULL); break;
        case 15: {
            strata_key_t keys[8];
            size_t n;
            v = oo_string(in);
            strata_index_find(dog, 1, &v, keys, 8, &n, NULL);
            strata_obj_backlinks(dog, k, person, 4, keys, 8, &n, NULL);
            break;
        }
        case 16: { /* a map entry: set (an int or null), or erase */
            static const char *const mkeys[] = {"", "a", "小白", "b.c", "$x", "zz"};
            const char *mk = mkeys[oo_byte(in) % 6];
            uint8_t b = oo_byte(in);
            v = b % 5 ? (strata_value){.type = STRATA_TYPE_INT, .u.i = b} : (strata_value){.type = STRATA_TYPE_NULL};
            if (b % 7 == 0) strata_map_erase(person, k, 6, mk, strlen(mk), NULL, NULL);
            else strata_map_set(person, k, 6, mk, strlen(mk), &v, NULL, NULL);
            if (b % 3 == 0) { /* a dog's mixed score links to a person (a typed link) */
                strata_value l = {.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {oo_small(in), strata_table_id(person)}};
                strata_obj_set(dog, k, 4, &l, NULL);
            }
            break;
        }
        case 17: case 18: { /* an embedded badge made and linked: as badge, in badges, or inside another */
            strata_table_t *badge;
            if (strata_table_open(txn, "Badge", &badge, NULL) || strata_obj_create(badge, &out, NULL)) break;
            v = oo_string(in);
            strata_obj_set(badge, out, 1, &v, NULL);
            strata_value l = {.type = STRATA_TYPE_LINK, .u.link = out};
            uint8_t where = oo_byte(in) % 4;
            if (where == 0) strata_obj_set(person, k, 7, &l, NULL);
            else if (where == 1) strata_map_set(person, k, 8, "a", 1, &l, NULL, NULL);
            else if (where == 2) strata_obj_set(badge, oo_small(in), 2, &l, NULL);
            /* else left without parent: gone at commit */
            break;
        }
        case 19: { /* a link to an existing badge (refused when it has a parent), or letting go */
            strata_value l = oo_byte(in) % 2 ? (strata_value){.type = STRATA_TYPE_LINK, .u.link = oo_small(in)}
                                              : (strata_value){.type = STRATA_TYPE_NULL};
            if (l.type == STRATA_TYPE_NULL && oo_byte(in) % 2) strata_map_erase(person, k, 8, "a", 1, NULL, NULL);
            else strata_obj_set(person, k, 7, &l, NULL);
            break;
        }
        }
    }
    if (txn) {
        strata_txn_commit(txn, NULL);
        strata_txn_free(txn);
    }
    strata_txn_free(before);
    strata_error e = {0};
    if (strata_db_verify(db, &e) != STRATA_OK) {
        fprintf(stderr, "verify failed after the operations: %s\n", e.message);
        return -1;
    }
    return 0;
}

/* Read every property of every object of every table (fuzz_open, on mutated files). */
__attribute__((unused)) static void objops_read_all(strata_txn_t *txn) {
    size_t ntables = 0;
    if (strata_table_count_all(txn, &ntables, NULL)) return;
    for (size_t i = 0; i < ntables && i < 16; i++) {
        const char *name;
        strata_table_t *t;
        size_t nprops;
        if (strata_table_name_at(txn, i, &name, NULL) || strata_table_open(txn, name, &t, NULL) ||
            strata_table_property_count(t, &nprops, NULL))
            continue;
        for (size_t j = 0; j < nprops; j++) { /* a scan of each packed property: count and run */
            strata_property_info info;
            strata_query_t *q;
            strata_results_t *r;
            uint64_t n;
            char text[160];
            if (strata_table_property_at(t, j, &info, NULL) || (info.flags & STRATA_PROP_LIST) ||
                (info.type != STRATA_TYPE_INT && info.type != STRATA_TYPE_BOOL))
                continue;
            if (info.type == STRATA_TYPE_BOOL) snprintf(text, sizeof text, "%.100s == true", info.name);
            else snprintf(text, sizeof text, "%.60s > 1 AND %.60s != 3", info.name, info.name);
            if (strata_query_compile(txn, name, text, &q, NULL)) continue;
            strata_query_count(q, txn, NULL, 0, &n, NULL);
            if (strata_query_run(q, txn, NULL, 0, &r, NULL) == STRATA_OK) strata_results_free(r);
            strata_query_free(q);
        }
        int objs = 0;
        for (strata_key_t k = -1; objs++ < 2000 && strata_obj_next(t, k, &k, NULL) == STRATA_OK;) {
            strata_obj_prefetch(t, k, NULL); /* on damaged records and leaves too */
            for (size_t j = 0; j < nprops; j++) {
                strata_property_info info;
                strata_value v;
                size_t n;
                if (strata_table_property_at(t, j, &info, NULL)) continue;
                if (info.flags & STRATA_PROP_LIST) {
                    if (strata_list_size(t, k, info.col, &n, NULL) == STRATA_OK && n)
                        strata_list_get(t, k, info.col, n - 1, &v, NULL);
                    if ((info.flags & STRATA_PROP_MAP) && n && strata_map_key_at(t, k, info.col, 0, &v, NULL) == STRATA_OK)
                        strata_map_get(t, k, info.col, v.u.bytes.data, v.u.bytes.len, &v, NULL);
                } else {
                    strata_obj_get(t, k, info.col, &v, NULL);
                }
            }
        }
    }
}

#endif
