/*
 * sampledb.h — a realistic sample database for the C tests, and the fingerprint of everything a
 * reader can see in it.
 *
 * The database: Person {name (indexed), age, photo (big values in overflow runs), dogs: [Dog],
 * best: Dog?, nick: {string: int} (a map), tag: Tag?}, Dog {name (full-text index), age, born (a
 * timestamp, null for some)}, Tag (embedded)
 * {label}, and raw trees "kv" (byte keys, some values of 9 KB) and "ints".
 * commit_version(db, v) makes version v (1, 2, ...): new dogs and people each time, older people
 * changed or deleted, tree entries put over earlier ones.
 *
 * fingerprint: every object, property, list element, map key, tree entry, and the counts of a few
 * queries (the scan, the index on Person.name, TEXT on Dog.name's full-text index), hashed.
 */
#ifndef STRATA_SAMPLEDB_H
#define STRATA_SAMPLEDB_H

#include "testlib.h"

#include <stdint.h>
#include <xxhash.h>

/* ------------------------------------------------------------------ fingerprints */

typedef struct fp_state {
    XXH3_state_t *h;
} fp_state;

static void fp_bytes(fp_state *f, const void *p, size_t n) { XXH3_64bits_update(f->h, p, n); }
static void fp_u64(fp_state *f, uint64_t v) { fp_bytes(f, &v, sizeof v); }

static void fp_value(fp_state *f, const strata_value *v) {
    fp_u64(f, (uint64_t)v->type);
    switch (v->type) {
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        fp_u64(f, v->u.bytes.len);
        fp_bytes(f, v->u.bytes.data, v->u.bytes.len);
        break;
    case STRATA_TYPE_NULL: break;
    case STRATA_TYPE_TIMESTAMP:
        fp_u64(f, (uint64_t)v->u.timestamp.seconds);
        fp_u64(f, (uint64_t)(uint32_t)v->u.timestamp.nanoseconds);
        break;
    default: fp_bytes(f, &v->u, sizeof v->u.i); break; /* bool, int, link: the first 8 bytes */
    }
}

/* Everything a reader can see, hashed; STRATA_OK or the first error (in tl_err). */
__attribute__((unused)) static int fingerprint(strata_db_t *db, uint64_t *out) {
    fp_state f = {XXH3_createState()};
    XXH3_64bits_reset(f.h);
    strata_txn_t *r;
    int rc = strata_txn_begin(db, 0, &r, E);
    if (rc) goto done;
    size_t ntables;
    if ((rc = strata_table_count_all(r, &ntables, E))) goto end;
    for (size_t i = 0; i < ntables && !rc; i++) {
        const char *name;
        strata_table_t *t;
        size_t nprops;
        if ((rc = strata_table_name_at(r, i, &name, E)) || (rc = strata_table_open(r, name, &t, E)) ||
            (rc = strata_table_property_count(t, &nprops, E)))
            break;
        fp_bytes(&f, name, strlen(name));
        strata_property_info info[16];
        for (size_t j = 0; j < nprops && j < 16 && !rc; j++) rc = strata_table_property_at(t, j, &info[j], E);
        uint64_t size, seen = 0;
        if (rc || (rc = strata_table_size(t, &size, E))) break;
        fp_u64(&f, size);
        for (strata_key_t k = -1; !rc;) {
            rc = strata_obj_next(t, k, &k, E);
            if (rc == STRATA_ERR_NOT_FOUND) {
                rc = STRATA_OK;
                break;
            }
            if (rc) break;
            seen++;
            fp_u64(&f, (uint64_t)k);
            for (size_t j = 0; j < nprops && j < 16 && !rc; j++) {
                strata_value v;
                if (info[j].flags & STRATA_PROP_LIST) {
                    size_t n;
                    if ((rc = strata_list_size(t, k, info[j].col, &n, E))) break;
                    fp_u64(&f, n);
                    for (size_t e = 0; e < n && !rc; e++) {
                        if (!(rc = strata_list_get(t, k, info[j].col, e, &v, E))) fp_value(&f, &v);
                        if (!rc && (info[j].flags & STRATA_PROP_MAP) &&
                            !(rc = strata_map_key_at(t, k, info[j].col, e, &v, E)))
                            fp_value(&f, &v);
                    }
                } else if (!(rc = strata_obj_get(t, k, info[j].col, &v, E))) {
                    fp_value(&f, &v);
                }
            }
        }
        if (!rc && seen != size) {
            snprintf(tl_err.message, sizeof tl_err.message, "table %s: %llu objects seen, size says %llu",
                     name, (unsigned long long)seen, (unsigned long long)size);
            rc = 3; /* a wrong answer */
        }
        /* queries (the scan, the index on Person.name, the full-text index on Dog.name) */
        static const char *queries[] = {"TRUEPREDICATE", "age > 3", "name BEGINSWITH 'p1'",
                                        "name == 'p7'", "ANY dogs.age > 2", "name TEXT '狗 2*'",
                                        "name TEXT 'zoe -p1*'"};
        for (size_t qi = 0; qi < sizeof queries / sizeof *queries && !rc; qi++) {
            strata_query_t *q;
            uint64_t n = 0;
            if (strata_query_compile(r, name, queries[qi], &q, E) != STRATA_OK) continue; /* not this table's */
            rc = strata_query_count(q, r, NULL, 0, &n, E);
            strata_query_free(q);
            fp_u64(&f, n);
        }
    }
    static const char *trees[] = {"kv", "ints"};
    for (size_t i = 0; i < 2 && !rc; i++) {
        strata_tree_t *t;
        strata_cursor_t *c;
        rc = strata_tree_open(r, trees[i], i ? STRATA_KEY_INT : STRATA_KEY_BYTES, 0, &t, E);
        if (rc == STRATA_ERR_NOT_FOUND) { /* the versions before the first commit */
            fp_u64(&f, 0xAB5E17);
            rc = STRATA_OK;
            continue;
        }
        if (rc) break;
        if ((rc = strata_cursor_open(t, &c, E))) break;
        for (rc = strata_cursor_first(c, E); rc == STRATA_OK; rc = strata_cursor_next(c, E)) {
            const void *k, *v;
            size_t kl, vl;
            if ((rc = strata_cursor_get(c, &k, &kl, &v, &vl, E))) break;
            fp_u64(&f, kl);
            fp_bytes(&f, k, kl);
            fp_u64(&f, vl);
            fp_bytes(&f, v, vl);
        }
        if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
        strata_cursor_close(c);
    }
end:
    strata_txn_free(r);
done:
    *out = XXH3_64bits_digest(f.h);
    XXH3_freeState(f.h);
    return rc;
}

/* ------------------------------------------------------------------ the database */

static strata_value vstr(const char *s) {
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
}
static strata_value vint(int64_t i) { return (strata_value){.type = STRATA_TYPE_INT, .u.i = i}; }
static strata_value vlink(int64_t k) { return (strata_value){.type = STRATA_TYPE_LINK, .u.link = k}; }

static uint8_t big[9000];

typedef struct cols {
    strata_col_t name, age, photo, dogs, best, dname, dage, dborn, nick, tag, tlabel;
} cols;

/* Commit v (1..VERSIONS) of the database. */
__attribute__((unused)) static int commit_version(strata_db_t *db, int v, cols *c) {
    strata_txn_t *w;
    strata_table_t *p, *d, *tg;
    strata_tree_t *kv, *ints;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E);
    if (rc) return rc;
    if (v == 1) {
        if ((rc = strata_table_create(w, "Dog", &d, E)) || (rc = strata_table_create(w, "Person", &p, E)) ||
            (rc = strata_table_add_property(d, "name", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT, NULL, &c->dname, E)) ||
            (rc = strata_table_add_property(d, "age", STRATA_TYPE_INT, 0, NULL, &c->dage, E)) ||
            (rc = strata_table_add_property(d, "born", STRATA_TYPE_TIMESTAMP, STRATA_PROP_NULLABLE, NULL, &c->dborn, E)) ||
            (rc = strata_table_add_property(p, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c->name, E)) ||
            (rc = strata_table_add_property(p, "age", STRATA_TYPE_INT, 0, NULL, &c->age, E)) ||
            (rc = strata_table_add_property(p, "photo", STRATA_TYPE_BINARY, STRATA_PROP_NULLABLE, NULL, &c->photo, E)) ||
            (rc = strata_table_add_property(p, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &c->dogs, E)) ||
            (rc = strata_table_add_property(p, "best", STRATA_TYPE_LINK, 0, "Dog", &c->best, E)) ||
            (rc = strata_table_create(w, "Tag", &tg, E)) ||
            (rc = strata_table_add_property(tg, "label", STRATA_TYPE_STRING, 0, NULL, &c->tlabel, E)) ||
            (rc = strata_table_set_embedded(tg, true, 0, E)) ||
            (rc = strata_table_add_property(p, "nick", STRATA_TYPE_INT, STRATA_PROP_MAP, NULL, &c->nick, E)) ||
            (rc = strata_table_add_property(p, "tag", STRATA_TYPE_LINK, 0, "Tag", &c->tag, E)))
            goto out;
    } else if ((rc = strata_table_open(w, "Dog", &d, E)) || (rc = strata_table_open(w, "Person", &p, E)) ||
               (rc = strata_table_open(w, "Tag", &tg, E))) {
        goto out;
    }
    if ((rc = strata_tree_open(w, "kv", STRATA_KEY_BYTES, STRATA_TREE_CREATE, &kv, E)) ||
        (rc = strata_tree_open(w, "ints", STRATA_KEY_INT, STRATA_TREE_CREATE, &ints, E)))
        goto out;
    char s[64];
    for (int i = 0; i < 25; i++) { /* dogs: new ones each version */
        strata_key_t k;
        snprintf(s, sizeof s, "狗%d.%d", v, i);
        if ((rc = strata_obj_create(d, &k, E)) || (rc = strata_obj_set(d, k, c->dname, (strata_value[]){vstr(s)}, E)) ||
            (rc = strata_obj_set(d, k, c->dage, (strata_value[]){vint((v * 7 + i) % 11)}, E)))
            goto out;
        strata_value born = {.type = STRATA_TYPE_TIMESTAMP,
                             .u.timestamp = {1700000000 + v * 86400 + i * 61, (int32_t)((i * 7919u) % 1000000000u)}};
        if (i % 6 != 5 && (rc = strata_obj_set(d, k, c->dborn, &born, E))) goto out;
    }
    for (int i = 0; i < 40; i++) { /* people: 40 new, and older ones changed or deleted */
        strata_key_t k;
        snprintf(s, sizeof s, "p%d-%d Zoë", i, v);
        if ((rc = strata_obj_create(p, &k, E)) || (rc = strata_obj_set(p, k, c->name, (strata_value[]){vstr(s)}, E)) ||
            (rc = strata_obj_set(p, k, c->age, (strata_value[]){vint(i % 9)}, E)))
            goto out;
        if (i % 8 == 0) {
            memset(big, 'a' + v + i % 20, sizeof big);
            strata_value b = {.type = STRATA_TYPE_BINARY, .u.bytes = {big, 4500u + 500u * (unsigned)(i % 9)}};
            if ((rc = strata_obj_set(p, k, c->photo, &b, E))) goto out;
        }
        for (int j = 0; j < i % 4; j++)
            if ((rc = strata_list_insert(p, k, c->dogs, (size_t)j, (strata_value[]){vlink((v - 1) * 25 + (i + j) % 25)}, E)))
                goto out;
        if (i % 3 == 0 && (rc = strata_obj_set(p, k, c->best, (strata_value[]){vlink((v - 1) * 25 + i % 25)}, E)))
            goto out;
        for (int j = 0; j < i % 3; j++) { /* a map, keys out of order */
            snprintf(s, sizeof s, "%s%d", j ? "ü" : "k", (i * 7 + j) % 10);
            if ((rc = strata_map_set(p, k, c->nick, s, strlen(s), (strata_value[]){vint(i * v + j)}, NULL, E))) goto out;
        }
        if (i % 4 == 1) { /* an embedded tag */
            strata_key_t t;
            snprintf(s, sizeof s, "tag %d.%d", v, i);
            if ((rc = strata_obj_create(tg, &t, E)) || (rc = strata_obj_set(tg, t, c->tlabel, (strata_value[]){vstr(s)}, E)) ||
                (rc = strata_obj_set(p, k, c->tag, (strata_value[]){vlink(t)}, E)))
                goto out;
        }
    }
    if (v > 1) {
        for (strata_key_t k = (v - 2) * 40; k < (v - 2) * 40 + 40; k += 5)
            if ((rc = strata_obj_delete(p, k, E))) goto out;
        for (strata_key_t k = (v - 2) * 40 + 2; k < (v - 2) * 40 + 40; k += 5)
            if ((rc = strata_obj_set(p, k, c->age, (strata_value[]){vint(100 + v)}, E))) goto out;
    }
    for (int i = 0; i < 60; i++) {
        snprintf(s, sizeof s, "key/%03d/%d", (i * 17 + v) % 97, v % 2);
        size_t len = i % 20 == 0 ? 9000 : (size_t)(10 + i);
        memset(big, 'A' + (i + v) % 26, len);
        if ((rc = strata_tree_put(kv, s, strlen(s), big, len, E))) goto out;
        uint64_t ik = (uint64_t)(i * 131 + v * 7) % 400;
        if ((rc = strata_tree_put_int(ints, ik, s, strlen(s), E))) goto out;
    }
    rc = strata_txn_commit(w, E);
out:
    strata_txn_free(w);
    return rc;
}

#endif
