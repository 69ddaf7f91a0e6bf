/*
 * verify_objects.c — the object layer's part of strata_db_verify, run after the page walk of
 * verify_pages.c has proved every page well formed. For every table it reads every object and checks:
 *  - the object count and the keys (ascending, below the table's next key);
 *  - every value decodes as its property's type;
 *  - every index holds exactly one entry per object, encoding the object's current value, and a
 *    primary-key index no value twice; a direct primary key's index has no entry for the objects
 *    whose key is their value, and no other object has such a value;
 *  - every link points at a live object of its target table, and the target table's backlinks
 *    are exactly the links that exist (entry by entry, with their counts);
 *  - every list id is used once and the list tree holds exactly the lists in use.
 */
#include "objects/private.h"

#include <stdlib.h>

typedef struct blink {
    uint8_t key[24]; /* as in the backlink tree */
} blink;

typedef struct vstate {
    strata_txn_t *txn;
    strata_error *err;
    blink **expect;  /* per table (by position in store->tables): the backlinks links imply */
    size_t *nexpect, *capexpect;
    uint64_t direct; /* objects of the current table whose key is their direct primary key */
} vstate;


static long table_pos(st_store *store, uint32_t id) {
    for (size_t i = 0; i < store->ntables; i++)
        if (store->tables[i]->id == id && !store->tables[i]->dropped) return (long)i;
    return -1;
}

static int expect_link_to(vstate *s, strata_table_t *t, const st_prop *p, uint32_t target_table, int64_t okey,
                          int64_t target, const char *where) {
    st_store *store = t->store;
    long pos = table_pos(store, target_table);
    strata_table_t *tt = pos >= 0 ? store->tables[pos] : NULL;
    st_objref ref;
    strata_error e2;
    if (!tt || st_obj_locate(tt, target, &ref, &e2) != STRATA_OK)
        return ST_CORRUPT(s->err, "'%s' object %lld: %s '%s' links to object %lld of '%s', which "
                          "does not exist", t->name, (long long)okey, where, p->name,
                          (long long)target, tt ? tt->name : "?");
    if (s->nexpect[pos] == s->capexpect[pos]) {
        size_t cap = s->capexpect[pos] ? 2 * s->capexpect[pos] : 64;
        blink *g = realloc(s->expect[pos], cap * sizeof *g);
        if (!g) return st_err(s->err, STRATA_ERR_NO_MEMORY, "out of memory verifying links");
        s->expect[pos] = g;
        s->capexpect[pos] = cap;
    }
    uint8_t *k = s->expect[pos][s->nexpect[pos]++].key;
    st_wr_be64(k, (uint64_t)target);
    st_wr_be32(k + 8, t->id);
    st_wr_be32(k + 12, p->id);
    st_wr_be64(k + 16, (uint64_t)okey);
    return STRATA_OK;
}

static int expect_link(vstate *s, strata_table_t *t, const st_prop *p, int64_t okey, int64_t target,
                       const char *where) {
    return expect_link_to(s, t, p, p->target, okey, target, where);
}

static int blink_cmp(const void *a, const void *b) { return memcmp(a, b, 24); }

static int check_object(vstate *s, strata_table_t *t, int64_t key, uint64_t *list_ids,
                        size_t *nlists) {
    st_objref ref;
    int rc = st_obj_locate(t, key, &ref, s->err);
    if (rc) return rc;
    if (st_table_embedded(t)) { /* owned by exactly one parent */
        int parents;
        if ((rc = st_embedded_parents(t, key, &parents, s->err))) return rc;
        if (parents != 1)
            return ST_CORRUPT(s->err, "'%s' is embedded and its object %lld has %s parent", t->name,
                              (long long)key, parents ? "more than one" : "no");
    }
    for (uint32_t i = 0; i < t->nprops; i++) {
        st_prop *p = &t->props[i];
        strata_value v;
        if ((rc = st_obj_read(t, &ref, p, &v, s->err))) return rc;
        if (p->flags & STRATA_PROP_LIST) {
            if (v.u.i == 0) continue;
            list_ids[(*nlists)++] = (uint64_t)v.u.i;
            strata_value *el, *keys = NULL;
            size_t n;
            bool map = p->flags & STRATA_PROP_MAP; /* its keys are checked as they load */
            if ((rc = st_list_load_keyed(t, p, (uint64_t)v.u.i, &el, map ? &keys : NULL, &n, s->err)))
                return rc;
            free(keys);
            if (n == 0) rc = ST_CORRUPT(s->err, "'%s.%s' of object %lld: an empty list has storage",
                                        t->name, p->name, (long long)key);
            for (size_t j = 0; rc == STRATA_OK && j < n; j++)
                if (el[j].type == STRATA_TYPE_TYPED_LINK)
                    rc = expect_link_to(s, t, p, el[j].u.typed_link.table, key, el[j].u.typed_link.key, "list");
                else if (p->type == STRATA_TYPE_LINK && !(map && el[j].type == STRATA_TYPE_NULL))
                    rc = el[j].type == STRATA_TYPE_LINK
                             ? expect_link(s, t, p, key, el[j].u.link, "list")
                             : ST_CORRUPT(s->err, "'%s.%s' of object %lld: a list of links holds a %s",
                                          t->name, p->name, (long long)key, st_type_name(el[j].type));
            /* a set holds each value once (sets are small: compared pairwise) */
            for (size_t j = 0; rc == STRATA_OK && (p->flags & STRATA_PROP_SET) && j < n; j++)
                for (size_t k = j + 1; rc == STRATA_OK && k < n; k++)
                    if (st_value_equal(&el[j], &el[k]))
                        rc = ST_CORRUPT(s->err, "'%s.%s' of object %lld: the set holds a value twice (elements %zu and %zu)",
                                        t->name, p->name, (long long)key, j, k);
            free(el);
            if (rc) return rc;
            continue;
        }
        if (p->type == STRATA_TYPE_LINK && v.type == STRATA_TYPE_LINK &&
            (rc = expect_link(s, t, p, key, v.u.link, "link")))
            return rc;
        if (v.type == STRATA_TYPE_TYPED_LINK &&
            (rc = expect_link_to(s, t, p, v.u.typed_link.table, key, v.u.typed_link.key, "mixed value")))
            return rc;
        if (p->flags & STRATA_PROP_INDEXED) {
            strata_tree_t *ix;
            uint8_t k[STRATA_MAX_KEY];
            size_t kl;
            bool trunc, direct = st_pk_is_key(p, &v, key);
            const uint8_t *val;
            size_t vl;
            st_index_key(p, &v, key, k, &kl, &trunc);
            rc = st_prop_index_tree(t, p, false, &ix, s->err);
            if (rc == STRATA_OK) rc = st_bt_get(s->txn, &ix->st, k, kl, &val, &vl, s->err);
            if (direct) {
                s->direct++;
                if (rc == STRATA_OK)
                    return ST_CORRUPT(s->err, "index of '%s.%s' has an entry for object %lld, whose "
                                      "key is its primary key", t->name, p->name, (long long)key);
                if (rc != STRATA_ERR_NOT_FOUND) return rc;
                continue;
            }
            if (rc == STRATA_ERR_NOT_FOUND)
                return ST_CORRUPT(s->err, "index of '%s.%s' has no entry for object %lld",
                                  t->name, p->name, (long long)key);
            if (rc) return rc;
            /* the object at key == value must not hold the same primary key */
            bool twice;
            if ((rc = st_pk_direct_holder(t, p, &v, &twice, s->err))) return rc;
            if (twice)
                return ST_CORRUPT(s->err, "primary key '%s.%s' holds %lld twice (objects %lld "
                                  "and %lld)", t->name, p->name, (long long)v.u.i,
                                  (long long)key, (long long)v.u.i);
            if ((p->flags & ST_PROP_PK_DIRECT) && (rc = st_obj_locate(t, key, &ref, s->err)))
                return rc; /* the look at the other object may have moved ref's cluster */
        }
    }
    return STRATA_OK;
}

static int u64_cmp(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static int check_table(vstate *s, strata_table_t *t) {
    uint64_t seen = 0;
    int64_t key = -1, prev = -1;
    size_t nlists = 0, list_props = 0;
    for (uint32_t i = 0; i < t->nprops; i++) list_props += (t->props[i].flags & STRATA_PROP_LIST) != 0;
    uint64_t *ids = calloc(t->count * list_props + 1, sizeof *ids);
    if (!ids) return st_err(s->err, STRATA_ERR_NO_MEMORY, "out of memory verifying '%s'", t->name);
    int rc = STRATA_OK;
    s->direct = 0;
    for (uint32_t i = 0; rc == STRATA_OK && i < t->nprops; i++) {
        const st_prop *p = &t->props[i];
        if ((p->flags & ST_PROP_PK_DIRECT) &&
            (p->id != t->pk_col || p->type != STRATA_TYPE_INT || !(p->flags & STRATA_PROP_INDEXED)))
            rc = ST_CORRUPT(s->err, "'%s.%s' is flagged a direct primary key but is not the table's "
                            "indexed integer primary key", t->name, p->name);
    }
    while (rc == STRATA_OK && (rc = st_cluster_next_key(t, key, &key, s->err)) == STRATA_OK) {
        if (key <= prev || key >= t->next_key || seen == t->count) {
            rc = ST_CORRUPT(s->err, "table '%s': object key %lld out of order, past the next key "
                            "%lld or beyond the count %llu", t->name, (long long)key,
                            (long long)t->next_key, (unsigned long long)t->count);
            break;
        }
        prev = key;
        seen++;
        if ((rc = check_object(s, t, key, ids, &nlists))) break;
    }
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    if (rc == STRATA_OK && seen != t->count)
        rc = ST_CORRUPT(s->err, "table '%s' holds %llu objects but records %llu", t->name,
                        (unsigned long long)seen, (unsigned long long)t->count);
    /* lists: ids unique, and the list tree holds exactly them */
    if (rc == STRATA_OK) {
        qsort(ids, nlists, sizeof *ids, u64_cmp);
        for (size_t i = 1; rc == STRATA_OK && i < nlists; i++)
            if (ids[i] == ids[i - 1])
                rc = ST_CORRUPT(s->err, "table '%s': list %llu is used twice", t->name,
                                (unsigned long long)ids[i]);
        strata_tree_t *lt;
        int lrc = st_table_tree(t, ST_TABLE_LISTS, false, &lt, s->err);
        uint64_t stored = lrc == STRATA_OK ? lt->st.count : 0;
        if (rc == STRATA_OK && stored != nlists)
            rc = ST_CORRUPT(s->err, "table '%s': %llu lists stored, %zu in use", t->name,
                            (unsigned long long)stored, nlists);
        if (rc == STRATA_OK && lrc != STRATA_OK && lrc != STRATA_ERR_NOT_FOUND) rc = lrc;
    }
    free(ids);
    /* indexes: exactly one entry per object; a primary key no value twice; full-text indexes
     * exactly the words of each object */
    for (uint32_t i = 0; rc == STRATA_OK && i < t->nprops; i++) {
        st_prop *p = &t->props[i];
        if (p->flags & STRATA_PROP_FULLTEXT) rc = st_fulltext_verify(t, p, s->err);
        if (!(p->flags & STRATA_PROP_INDEXED)) continue;
        strata_tree_t *ix;
        int irc = st_prop_index_tree(t, p, false, &ix, s->err);
        uint64_t n = irc == STRATA_OK ? ix->st.count : 0;
        uint64_t want = t->count - ((p->flags & ST_PROP_PK_DIRECT) ? s->direct : 0);
        if (n != want)
            rc = ST_CORRUPT(s->err, "index of '%s.%s' holds %llu entries for %llu objects", t->name,
                            p->name, (unsigned long long)n, (unsigned long long)want);
        if (rc || !(p->flags & STRATA_PROP_PRIMARY_KEY) || irc) continue;
        st_iter c;
        st_iter_init(&c, ix);
        uint8_t last[STRATA_MAX_KEY];
        size_t last_len = 0;
        bool have = false;
        for (rc = st_iter_first(&c, s->err); rc == STRATA_OK; rc = st_iter_next(&c, s->err)) {
            const uint8_t *k;
            size_t kl;
            if ((rc = st_iter_get(&c, &k, &kl, NULL, NULL, s->err))) break;
            bool trunc = kl > 10 && k[kl - 9] == 2 && k[kl - 10] == 0 && p->type == STRATA_TYPE_STRING;
            if (have && !trunc && kl == last_len && memcmp(k, last, kl - 8) == 0) {
                rc = ST_CORRUPT(s->err, "primary key '%s.%s' holds a value twice", t->name, p->name);
                break;
            }
            memcpy(last, k, kl);
            last_len = kl;
            have = true;
        }
        if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    }
    return rc;
}

/* The backlink tree of table t holds exactly the expected entries, counted. */
static int check_backlinks(vstate *s, strata_table_t *t, blink *exp, size_t n) {
    if (n) qsort(exp, n, sizeof *exp, blink_cmp);
    strata_tree_t *bt;
    int rc = st_table_tree(t, ST_TABLE_BACKLINKS, false, &bt, s->err);
    if (rc == STRATA_ERR_NOT_FOUND) {
        if (n) return ST_CORRUPT(s->err, "table '%s' has %zu links to it and no backlinks", t->name, n);
        return STRATA_OK;
    }
    if (rc) return rc;
    st_iter c;
    st_iter_init(&c, bt);
    size_t i = 0;
    for (rc = st_iter_first(&c, s->err); rc == STRATA_OK; rc = st_iter_next(&c, s->err)) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, s->err))) return rc;
        if (kl != 24 || vl != 4)
            return ST_CORRUPT(s->err, "backlinks of '%s': entry of %zu/%zu bytes", t->name, kl, vl);
        uint32_t count = st_rd32(v), have = 0;
        while (i < n && memcmp(exp[i].key, k, 24) == 0) i++, have++;
        if (have != count)
            return ST_CORRUPT(s->err, "backlinks of '%s': an entry counts %u links, %u exist",
                              t->name, count, have);
    }
    if (rc != STRATA_ERR_NOT_FOUND) return rc;
    if (i != n)
        return ST_CORRUPT(s->err, "table '%s': %zu links to it have no backlink entry", t->name, n - i);
    return STRATA_OK;
}

int st_verify_objects(strata_txn_t *txn, strata_error *err) {
    st_store *store;
    int rc = st_store_get(txn, &store, err);
    if (rc) return rc;
    vstate s = {txn, err, calloc(store->ntables + 1, sizeof *s.expect),
                calloc(store->ntables + 1, sizeof(size_t)), calloc(store->ntables + 1, sizeof(size_t)), 0};
    if (!s.expect || !s.nexpect || !s.capexpect) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; rc == STRATA_OK && i < store->ntables; i++)
        if (!store->tables[i]->dropped) rc = check_table(&s, store->tables[i]);
    for (size_t i = 0; rc == STRATA_OK && i < store->ntables; i++)
        if (!store->tables[i]->dropped) rc = check_backlinks(&s, store->tables[i], s.expect[i], s.nexpect[i]);
    for (size_t i = 0; s.expect && i < store->ntables; i++) free(s.expect[i]);
    free(s.expect);
    free(s.nexpect);
    free(s.capexpect);
    return rc;
}
