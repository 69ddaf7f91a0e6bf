/*
 * changes.c — what changed in a table between two versions: the objects deleted, inserted and
 * modified, and for each modified one which properties. The two versions' cluster trees are
 * compared through btree/treediff.c, which skips every subtree whose page is the same in both;
 * of the cluster records it hands over, those equal byte for byte in both versions (a leaf was
 * rewritten for a neighbour) are dropped; the objects of the rest are matched by key, and a
 * property of an object in both is compared only where its leaf differs (a leaf at the same
 * place in both holds the same values). The cost follows the change, not the table.
 *
 * Lists: a list's contents live in the table's list tree under an id its object's column holds;
 * a list created or emptied changes that column, but one changed in place does not. So the two
 * versions' list trees are compared too (skipping shared subtrees as well): a list stored in
 * both with other contents names its owner (the object and property in its last bytes,
 * object.c), which is checked to hold it; that object is modified, with the list property among
 * its changed ones. Lists written before 0.7.0 name no owner: the objects are searched for them
 * (a scan, only for such lists). Which elements of one list changed: list_changes.c.
 */
#include "objects/private.h"

#include <stdlib.h>

typedef struct rec {
    uint64_t base;
    const uint8_t *bytes;
    size_t len;
} rec;

typedef struct recs {
    rec *v;
    size_t n, cap;
} recs;

typedef struct diff_walk {
    recs side[2];
    const char *table;
} diff_walk;

static int collect(int side, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                   void *arg, strata_error *err) {
    diff_walk *w = arg;
    recs *r = &w->side[side];
    if (klen != 8) return ST_CORRUPT(err, "table '%s': a cluster key of %zu bytes", w->table, klen);
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 64;
        rec *v = realloc(r->v, cap * sizeof *v);
        if (!v) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", w->table);
        r->v = v;
        r->cap = cap;
    }
    r->v[r->n++] = (rec){st_rd64(key), val, vlen};
    return STRATA_OK;
}

static int cmp_rec(const void *a, const void *b) {
    uint64_t x = ((const rec *)a)->base, y = ((const rec *)b)->base;
    return (x > y) - (x < y);
}

/* An object of one side: its key, record and row. */
typedef struct objpos {
    int64_t key;
    const rec *r;
    st_crec cr;
    uint32_t row;
} objpos;

typedef struct objs {
    objpos *v;
    size_t n, cap;
} objs;

struct strata_changes {
    int64_t *keys[3];
    size_t n[3], cap[3];
    uint64_t *changed;      /* per modified object: a bit per property of `cols` */
    size_t words;           /* bits per modified object, in 64-bit words */
    uint32_t *cols;         /* the properties compared (ids), in order */
    size_t ncols;
    uint64_t pages;
};

static int add_key(strata_changes_t *c, int kind, int64_t key) {
    if (c->n[kind] == c->cap[kind]) {
        size_t cap = c->cap[kind] ? c->cap[kind] * 2 : 64;
        int64_t *v = realloc(c->keys[kind], cap * sizeof *v);
        if (!v) return STRATA_ERR_NO_MEMORY;
        c->keys[kind] = v;
        c->cap[kind] = cap;
        if (kind == STRATA_CHANGE_MODIFIED) {
            uint64_t *bits = realloc(c->changed, cap * c->words * sizeof *bits);
            if (!bits) return STRATA_ERR_NO_MEMORY;
            c->changed = bits;
        }
    }
    if (kind == STRATA_CHANGE_MODIFIED) memset(c->changed + c->n[kind] * c->words, 0, c->words * 8);
    c->keys[kind][c->n[kind]++] = key;
    return STRATA_OK;
}

/* The objects of records v[0, n) (each record's keys leaf read), ascending by key. */
static int expand_objects(strata_txn_t *txn, const char *table, const rec *v, size_t n, objs *out,
                          strata_error *err) {
    for (size_t i = 0; i < n; i++) {
        st_crec cr;
        const uint8_t *seg;
        int rc = st_crec_parse(table, v[i].base, v[i].bytes, v[i].len, &cr, err);
        if (rc || (rc = st_leaf_header(txn, st_crec_entry(&cr, 0, NULL), cr.n, &seg, err))) return rc;
        if (out->n + cr.n > out->cap) {
            size_t cap = (out->cap + cr.n) * 2;
            objpos *p = realloc(out->v, cap * sizeof *p);
            if (!p) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", table);
            out->v = p;
            out->cap = cap;
        }
        for (uint32_t row = 0; row < cr.n; row++)
            out->v[out->n++] = (objpos){st_packed_at(seg, cr.n, row), &v[i], cr, row};
    }
    return STRATA_OK;
}

/* The value a property has with no leaf in its cluster (added after the cluster was written). */
static strata_value default_value(const st_prop *p) {
    strata_value v;
    memset(&v, 0, sizeof v);
    if ((p->flags & (STRATA_PROP_NULLABLE | STRATA_PROP_LIST)) == STRATA_PROP_NULLABLE ||
        p->type == STRATA_TYPE_LINK || p->type == STRATA_TYPE_MIXED)
        v.type = STRATA_TYPE_NULL;
    else
        v.type = (p->flags & STRATA_PROP_LIST) ? STRATA_TYPE_INT : p->type;
    if (v.type == STRATA_TYPE_STRING || v.type == STRATA_TYPE_BINARY) v.u.bytes.data = "";
    return v;
}

static int read_value(strata_txn_t *txn, const objpos *o, const st_prop *p, strata_value *out,
                      strata_error *err) {
    st_leafref ref = st_crec_col(&o->cr, p->id);
    if (!ref.pgno) {
        *out = default_value(p);
        return STRATA_OK;
    }
    return st_col_read(txn, ref, o->cr.n, o->row, p, out, err);
}

bool st_value_same(const strata_value *a, const strata_value *b) {
    if (a->type != b->type) return false;
    switch (a->type) {
    case STRATA_TYPE_NULL: return true;
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        return a->u.bytes.len == b->u.bytes.len &&
               (a->u.bytes.len == 0 || memcmp(a->u.bytes.data, b->u.bytes.data, a->u.bytes.len) == 0);
    case STRATA_TYPE_BOOL: return a->u.b == b->u.b;
    case STRATA_TYPE_FLOAT: return memcmp(&a->u.f, &b->u.f, sizeof a->u.f) == 0;
    case STRATA_TYPE_TIMESTAMP:
        return a->u.timestamp.seconds == b->u.timestamp.seconds &&
               a->u.timestamp.nanoseconds == b->u.timestamp.nanoseconds;
    case STRATA_TYPE_TYPED_LINK: /* (its struct has padding) */
        return a->u.typed_link.key == b->u.typed_link.key && a->u.typed_link.table == b->u.typed_link.table;
    default: return memcmp(&a->u, &b->u, sizeof a->u) == 0;
    }
}

static bool same_ref(st_leafref a, st_leafref b) {
    return a.pgno == b.pgno && a.off == b.off && a.len == b.len;
}

/* Objects a (older) and b (newer), the same key: which properties differ. */
static int compare(strata_changes_t *c, strata_table_t *ta, strata_table_t *tb, const objpos *a,
                   const objpos *b, strata_error *err) {
    bool modified = false;
    size_t at = c->n[STRATA_CHANGE_MODIFIED];
    for (size_t i = 0; i < c->ncols; i++) {
        const st_prop *pa = st_prop_find(ta, c->cols[i]), *pb = st_prop_find(tb, c->cols[i]);
        st_leafref ra = st_crec_col(&a->cr, pa->id), rb = st_crec_col(&b->cr, pb->id);
        if (same_ref(ra, rb) && a->row == b->row && a->cr.n == b->cr.n) continue; /* one leaf */
        strata_value va, vb;
        int rc = read_value(ta->txn, a, pa, &va, err);
        if (rc || (rc = read_value(tb->txn, b, pb, &vb, err))) return rc;
        if (st_value_same(&va, &vb)) continue;
        if (!modified) {
            if (add_key(c, STRATA_CHANGE_MODIFIED, a->key))
                return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", tb->name);
            modified = true;
        }
        c->changed[at * c->words + i / 64] |= 1ull << (i % 64);
    }
    return STRATA_OK;
}

/* A list changed in place: its owner and property. */
typedef struct owned {
    int64_t key;
    uint32_t col;
    uint64_t id;
} owned;

static int cmp_owned(const void *a, const void *b) {
    const owned *x = a, *y = b;
    if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
    return (x->col > y->col) - (x->col < y->col);
}

static bool has_key(const strata_changes_t *c, int kind, int64_t key) {
    size_t lo = 0, hi = c->n[kind];
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (c->keys[kind][mid] < key) lo = mid + 1;
        else hi = mid;
    }
    return lo < c->n[kind] && c->keys[kind][lo] == key;
}

/* Whether list property col of object key holds list id in t's version. */
static int holds_list(strata_table_t *t, int64_t key, uint32_t col, uint64_t id, bool *yes,
                      strata_error *err) {
    *yes = false;
    const st_prop *p = st_prop_find(t, col);
    if (!p || !(p->flags & STRATA_PROP_LIST)) return STRATA_OK;
    st_objref ref;
    strata_value v;
    int rc = st_obj_locate(t, key, &ref, err);
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK;
    if (rc || (rc = st_obj_read(t, &ref, p, &v, err))) return rc;
    *yes = (uint64_t)v.u.i == id;
    return STRATA_OK;
}

/* The owners of lists `ids` (sorted) that name none: every object's list properties read. */
static int find_owners(strata_table_t *t, const uint64_t *ids, size_t n, owned *out, size_t *nout,
                       strata_error *err) {
    int64_t key = -1;
    int rc;
    while ((rc = st_cluster_next_key(t, key, &key, err)) == STRATA_OK) {
        st_objref ref;
        if ((rc = st_obj_locate(t, key, &ref, err))) return rc;
        for (uint32_t i = 0; i < t->nprops; i++) {
            const st_prop *p = &t->props[i];
            strata_value v;
            if (!(p->flags & STRATA_PROP_LIST)) continue;
            if ((rc = st_obj_read(t, &ref, p, &v, err))) return rc;
            uint64_t id = (uint64_t)v.u.i;
            size_t lo = 0, hi = n;
            while (lo < hi) {
                size_t mid = (lo + hi) / 2;
                if (ids[mid] < id) lo = mid + 1;
                else hi = mid;
            }
            if (id && lo < n && ids[lo] == id) out[(*nout)++] = (owned){key, p->id, id};
        }
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

/* The lists stored in both versions with other contents: their objects become modified (or
 * gain the list property among their changed ones). */
static int changed_lists(strata_changes_t *c, strata_txn_t *older, strata_txn_t *newer,
                         strata_table_t *ta, strata_table_t *tb, strata_error *err) {
    strata_tree_t *la = NULL, *lb = NULL;
    int rc = st_table_tree(ta, ST_TABLE_LISTS, false, &la, err);
    if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
    rc = st_table_tree(tb, ST_TABLE_LISTS, false, &lb, err);
    if (rc == STRATA_ERR_NOT_FOUND || (rc == STRATA_OK && !la)) return STRATA_OK; /* no list in both */
    if (rc) return rc;
    diff_walk w = {.table = tb->name};
    owned *pairs = NULL;
    uint64_t *orphans = NULL;
    size_t npairs = 0, norphans = 0;
    if ((rc = st_tree_diff(older, &la->st, newer, &lb->st, collect, &w, &c->pages, err))) goto out;
    for (int side = 0; side < 2; side++)
        if (w.side[side].n) qsort(w.side[side].v, w.side[side].n, sizeof *w.side[side].v, cmp_rec);
    pairs = malloc((w.side[1].n + 1) * sizeof *pairs);
    orphans = malloc((w.side[1].n + 1) * sizeof *orphans);
    if (!pairs || !orphans) {
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", tb->name);
        goto out;
    }
    for (size_t i = 0, j = 0; rc == STRATA_OK && i < w.side[0].n && j < w.side[1].n;) {
        const rec *x = &w.side[0].v[i], *y = &w.side[1].v[j];
        if (x->base != y->base) {
            if (x->base < y->base) i++;
            else j++;
            continue; /* a list made or dropped: its column changed */
        }
        i++, j++;
        if (x->len == y->len && memcmp(x->bytes, y->bytes, x->len) == 0) continue;
        int64_t key;
        uint32_t col;
        bool yes = false;
        if (st_list_owner(y->bytes, y->len, &key, &col) &&
            (rc = holds_list(tb, key, col, y->base, &yes, err)) == STRATA_OK && yes)
            pairs[npairs++] = (owned){key, col, y->base};
        else if (rc == STRATA_OK)
            orphans[norphans++] = y->base;
    }
    if (rc == STRATA_OK && norphans) {
        owned *more = realloc(pairs, (npairs + norphans * tb->nprops + 1) * sizeof *pairs);
        if (!more) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", tb->name);
        else {
            pairs = more;
            rc = find_owners(tb, orphans, norphans, pairs, &npairs, err);
        }
    }
    if (rc || !npairs) goto out;
    qsort(pairs, npairs, sizeof *pairs, cmp_owned);
    /* merge into the modified objects (keys ascending) */
    size_t nm = c->n[STRATA_CHANGE_MODIFIED], cap = nm + npairs;
    int64_t *keys = malloc(cap * sizeof *keys);
    uint64_t *bits = calloc(cap * c->words, sizeof *bits);
    if (!keys || !bits) {
        free(keys);
        free(bits);
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", tb->name);
        goto out;
    }
    size_t m = 0, i = 0, j = 0;
    while (i < nm || j < npairs) {
        const owned *o = j < npairs ? &pairs[j] : NULL;
        if (o && (has_key(c, STRATA_CHANGE_INSERTED, o->key) || has_key(c, STRATA_CHANGE_DELETED, o->key))) {
            j++;
            continue;
        }
        int64_t key = i < nm && (!o || c->keys[STRATA_CHANGE_MODIFIED][i] <= o->key)
                          ? c->keys[STRATA_CHANGE_MODIFIED][i] : o->key;
        keys[m] = key;
        if (i < nm && c->keys[STRATA_CHANGE_MODIFIED][i] == key) {
            memcpy(bits + m * c->words, c->changed + i * c->words, c->words * sizeof *bits);
            i++;
        }
        for (; j < npairs && pairs[j].key == key; j++)
            for (size_t k = 0; k < c->ncols; k++)
                if (c->cols[k] == pairs[j].col) bits[m * c->words + k / 64] |= 1ull << (k % 64);
        m++;
    }
    free(c->keys[STRATA_CHANGE_MODIFIED]);
    free(c->changed);
    c->keys[STRATA_CHANGE_MODIFIED] = keys;
    c->changed = bits;
    c->n[STRATA_CHANGE_MODIFIED] = m;
    c->cap[STRATA_CHANGE_MODIFIED] = cap;
out:
    free(w.side[0].v);
    free(w.side[1].v);
    free(pairs);
    free(orphans);
    return rc;
}

int st_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table,
                   strata_changes_t **out, strata_error *err) {
    *out = NULL;
    strata_table_t *ta, *tb;
    strata_tree_t *ca = NULL, *cb = NULL;
    int rc;
    if ((rc = st_table_open(older, table, &ta, err)) || (rc = st_table_open(newer, table, &tb, err)))
        return rc;
    if (ta->id != tb->id)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "table '%s' was dropped and made again between the two versions", table);
    /* Pending changes of a write transaction are in its clusters: written to the tree first. */
    if ((rc = st_clusters_flush(ta, err)) || (rc = st_clusters_flush(tb, err))) return rc;
    rc = st_table_tree(ta, ST_TABLE_CLUSTERS, false, &ca, err);
    if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
    rc = st_table_tree(tb, ST_TABLE_CLUSTERS, false, &cb, err);
    if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
    st_tree_state empty = {0, 0, STRATA_KEY_INT, 0};
    strata_changes_t *c = calloc(1, sizeof *c);
    diff_walk w = {.table = table};
    objs oa = {0}, ob = {0};
    if (!c) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", table);
    /* The properties both versions have (by id), compared in the newer's order. */
    c->cols = malloc((tb->nprops + 1) * sizeof *c->cols);
    if (!c->cols) {
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing '%s'", table);
        goto out;
    }
    for (uint32_t i = 0; i < tb->nprops; i++)
        if (st_prop_find(ta, tb->props[i].id) && st_prop_find(ta, tb->props[i].id)->type == tb->props[i].type)
            c->cols[c->ncols++] = tb->props[i].id;
    c->words = (c->ncols + 63) / 64 ? (c->ncols + 63) / 64 : 1;
    if ((rc = st_tree_diff(older, ca ? &ca->st : &empty, newer, cb ? &cb->st : &empty, collect, &w,
                           &c->pages, err)))
        goto out;
    /* Records equal in both versions: their objects did not change. */
    for (int side = 0; side < 2; side++)
        if (w.side[side].n) qsort(w.side[side].v, w.side[side].n, sizeof *w.side[side].v, cmp_rec);
    size_t i = 0, j = 0, na = 0, nb = 0;
    while (i < w.side[0].n || j < w.side[1].n) {
        rec *x = i < w.side[0].n ? &w.side[0].v[i] : NULL, *y = j < w.side[1].n ? &w.side[1].v[j] : NULL;
        if (x && y && x->base == y->base && x->len == y->len && memcmp(x->bytes, y->bytes, x->len) == 0) {
            i++, j++;
            continue;
        }
        if (y == NULL || (x && x->base <= y->base)) w.side[0].v[na++] = w.side[0].v[i++];
        else w.side[1].v[nb++] = w.side[1].v[j++];
    }
    if ((rc = expand_objects(older, table, w.side[0].v, na, &oa, err)) ||
        (rc = expand_objects(newer, table, w.side[1].v, nb, &ob, err)))
        goto out;
    for (i = 0, j = 0; rc == STRATA_OK && (i < oa.n || j < ob.n);) {
        if (j == ob.n || (i < oa.n && oa.v[i].key < ob.v[j].key)) {
            if (add_key(c, STRATA_CHANGE_DELETED, oa.v[i++].key)) rc = STRATA_ERR_NO_MEMORY;
        } else if (i == oa.n || ob.v[j].key < oa.v[i].key) {
            if (add_key(c, STRATA_CHANGE_INSERTED, ob.v[j++].key)) rc = STRATA_ERR_NO_MEMORY;
        } else {
            rc = compare(c, ta, tb, &oa.v[i++], &ob.v[j++], err);
        }
    }
    if (rc == STRATA_ERR_NO_MEMORY) rc = st_err(err, rc, "out of memory comparing '%s'", table);
    if (rc == STRATA_OK) rc = changed_lists(c, older, newer, ta, tb, err);
out:
    free(w.side[0].v);
    free(w.side[1].v);
    free(oa.v);
    free(ob.v);
    if (rc) {
        st_changes_free(c);
        return rc;
    }
    *out = c;
    return STRATA_OK;
}

size_t st_changes_count(const strata_changes_t *c, int kind) { return c->n[kind]; }

int64_t st_changes_key(const strata_changes_t *c, int kind, size_t i) { return c->keys[kind][i]; }

bool st_changes_changed(const strata_changes_t *c, size_t i, uint32_t col) {
    for (size_t k = 0; k < c->ncols; k++)
        if (c->cols[k] == col) return c->changed[i * c->words + k / 64] >> (k % 64) & 1;
    return false;
}

uint64_t st_changes_pages(const strata_changes_t *c) { return c->pages; }

void st_changes_free(strata_changes_t *c) {
    if (!c) return;
    for (int k = 0; k < 3; k++) free(c->keys[k]);
    free(c->changed);
    free(c->cols);
    free(c);
}
