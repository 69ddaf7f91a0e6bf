/*
 * cluster.c — a table's objects: a cluster tree keyed by object key, each cluster holding up to
 * ST_CLUSTER_MAX objects as one column leaf per property (column.c), so a scan of one property
 * reads only that property's pages.
 *
 * Cluster record (the value under the cluster's base key in "$t<id>.c"):
 *   u32 n (objects) | u32 nentries | nentries × { u32 property id | u16 off | u16 len | u64 page }
 * Entry 0 (property id 0) is the keys leaf (packed object keys, ascending); the others are the
 * properties' leaves (column.c). The leaves that fit share one column page (smallest first);
 * a leaf that does not fit beside them has a page of its own. A property without an entry (added
 * after the cluster was written) reads as its default: null, or zero / "" when not nullable.
 *
 * Invariants: a cluster covers the keys from its base up to the next cluster's base; its keys
 * are ascending, >= base; n >= 1; every leaf holds n values. A new object's key is at least the
 * table's next_key (a direct primary key may be larger), so new objects always go to the last
 * cluster — or start a new last cluster, when that one holds ST_CLUSTER_MAX objects; when its
 * rows no longer fit one cluster (measured_fits), the rows past the longest run that fits move
 * to the new last cluster (carry_overflow), so appended clusters fill their pages.
 *
 * Writing: a fixed-size or packed value that fits its leaf is patched in place in a copy of the
 * leaf's page (st_cluster_patch). Otherwise the cluster is decoded into memory (st_dcluster) and
 * kept, sorted by base, in the table until the transaction commits, a scan needs the tree, or too
 * many are held (then all are written). Writing a decoded cluster keeps clean leaves that sit
 * alone on their page and re-encodes the rest (all of them when objects were added or removed),
 * splitting the cluster where a page fills when its rows no longer fit one cluster.
 * An st_objref is valid until the next call that may decode or write clusters.
 *
 * Reading: a read transaction that has descended the cluster tree for a quarter as many point
 * reads as the tree has clusters (counting the descents earlier read transactions of this
 * handle made on the same root) lists every cluster (base, record) in arrays once (the
 * directory, t->cdir) and searches those from then on (a guess from the key's place between
 * the first and last base, widened until it brackets the answer, then a binary search). Its
 * tree never changes, so the directory stays right until the table handle goes (a refresh
 * makes new ones). The database handle keeps it for later read transactions whose tree has
 * the same root (storage's readshare.c), unless a record lies outside the view (a packed
 * page's). A cluster whose n equals the distance to the next base holds every key in between
 * (the invariants above), so a point read in it takes row key - base without reading its keys
 * leaf; the directory keeps each cluster's n too, so asking whether such a key is there
 * (ST_READS_NOTHING) reads no record at all. A batch of point reads (st_obj_locate_batch)
 * searches the directory once a key and asks for every record before reading any.
 *
 * Appending: the cluster the last new object went to holds the table's greatest key (new keys
 * only grow, and only appends make later clusters), so the next new object goes there without
 * a search (t->append_dc, forgotten when decoded clusters are written).
 */
#include "objects/private.h"

#include <stdlib.h>

#define MAX_DECODED 64  /* decoded clusters per table before all are written */
#define REC_HEAD 8
#define REC_ENTRY 16

int st_crec_parse(const char *table, uint64_t base, const uint8_t *rec, size_t len, st_crec *out,
                  strata_error *err) {
    if (len < REC_HEAD + REC_ENTRY)
        return ST_CORRUPT(err, "table '%s': cluster %llu record of %zu bytes", table,
                          (unsigned long long)base, len);
    out->n = st_rd32(rec);
    out->nentries = st_rd32(rec + 4);
    out->entries = rec + REC_HEAD;
    if (out->n == 0 || out->n > ST_CLUSTER_MAX || out->nentries == 0 ||
        len != REC_HEAD + (size_t)out->nentries * REC_ENTRY || st_rd32(out->entries) != 0)
        return ST_CORRUPT(err, "table '%s': cluster %llu record says %u objects, %u leaves in "
                          "%zu bytes", table, (unsigned long long)base, out->n, out->nentries, len);
    return STRATA_OK;
}

/* How many of the record's leaves lie on page pg (among the first `upto` entries). */
static uint32_t page_uses(const st_crec *r, pgno_t pg, uint32_t upto) {
    uint32_t uses = 0;
    for (uint32_t j = 0; j < upto; j++) uses += st_crec_entry(r, j, NULL).pgno == pg;
    return uses;
}

st_leafref st_crec_entry(const st_crec *r, uint32_t i, uint32_t *col) {
    const uint8_t *e = r->entries + (size_t)i * REC_ENTRY;
    if (col) *col = st_rd32(e);
    return (st_leafref){st_rd64(e + 8), st_rd16(e + 4), st_rd16(e + 6)};
}

void st_crec_set_page(uint8_t *rec, uint32_t i, pgno_t pgno) {
    st_wr64(rec + REC_HEAD + (size_t)i * REC_ENTRY + 8, pgno);
}

st_leafref st_crec_col(const st_crec *r, uint32_t col) {
    for (uint32_t i = 1; i < r->nentries; i++)
        if (st_rd32(r->entries + (size_t)i * REC_ENTRY) == col) return st_crec_entry(r, i, NULL);
    return (st_leafref){0, 0, 0};
}

/* ------------------------------------------------------------------ finding clusters */

/* The arrays of a directory, shared by the read transactions of one tree root (readshare.c). */
typedef struct cdir_data {
    st_shared hdr;
    uint64_t *base;
    const uint8_t **rec;
    uint32_t *rec_len;
    uint32_t *count;
    size_t n;
    double scale;      /* (n - 1) / (last base - first base): a key's guessed place */
} cdir_data;

static void cdir_destroy(st_shared *s) {
    cdir_data *d = (cdir_data *)s;
    free(d->base);
    free(d->rec);
    free(d->rec_len);
    free(d->count);
    free(d);
}

static void cdir_use(strata_table_t *t, cdir_data *d) {
    t->cdir.base = d->base;
    t->cdir.rec = d->rec;
    t->cdir.rec_len = d->rec_len;
    t->cdir.count = d->count;
    t->cdir.n = d->n;
    t->cdir.scale = d->scale;
    t->cdir.held = &d->hdr;
    t->cdir.built = true;
}

void st_cdir_free(strata_table_t *t) {
    if (!t->cdir.built && t->cdir.keyed && t->cdir.descents)
        st_share_count(t->txn->db, &t->cdir.key, t->cdir.descents);
    st_share_release(t->cdir.held);
    memset(&t->cdir, 0, sizeof t->cdir);
}

/* The directory the handle keeps for the tree's root, if any (once per table handle); else
 * how many descents earlier transactions made on that root. */
static void cdir_look(strata_table_t *t, strata_tree_t *tree) {
    t->cdir.looked = true;
    t->cdir.keyed = st_share_key_of(t->txn, ST_SHARE_CLUSTERS, tree->name, tree->name_len,
                                    tree->st.root, &t->cdir.key);
    if (!t->cdir.keyed) return;
    st_shared *s = st_share_find(t->txn->db, &t->cdir.key, &t->cdir.prior);
    if (s) cdir_use(t, (cdir_data *)s);
}

/* Every cluster of the (read transaction's) tree into a directory, kept by the handle when
 * every record lies in the view. Out of memory leaves it unbuilt: lookups keep descending the
 * tree. */
static int cdir_build(strata_table_t *t, strata_tree_t *tree, strata_error *err) {
    ST_ASSERT(!t->txn->write && !t->cdir.built); /* a read transaction's tree never changes */
    size_t cap = tree->st.count;
    cdir_data *d = calloc(1, sizeof *d);
    if (!d) return STRATA_OK;
    d->hdr = (st_shared){1, cdir_destroy};
    d->base = malloc(cap * sizeof *d->base);
    d->rec = malloc(cap * sizeof *d->rec);
    d->rec_len = malloc(cap * sizeof *d->rec_len);
    d->count = malloc(cap * sizeof *d->count);
    if (!d->base || !d->rec || !d->rec_len || !d->count) {
        cdir_destroy(&d->hdr); /* descents back to 0: try again only after as many more */
        t->cdir.descents = t->cdir.prior = 0;
        return STRATA_OK;
    }
    bool in_view = true;
    st_iter c;
    st_iter_init(&c, tree);
    size_t n = 0;
    int rc = st_iter_first(&c, err);
    while (rc == STRATA_OK) {
        const uint8_t *k, *v;
        size_t kl, vl;
        if ((rc = st_iter_get(&c, &k, &kl, &v, &vl, err))) break;
        if (n == cap) {
            rc = ST_CORRUPT(err, "table '%s': the cluster tree holds more entries than its count "
                            "(%zu)", t->name, cap);
            break;
        }
        if (kl != 8 || vl > UINT32_MAX) {
            rc = ST_CORRUPT(err, "table '%s': cluster entry %zu has a %zu-byte key and a %zu-byte "
                            "record", t->name, n, kl, vl);
            break;
        }
        st_crec r;
        strata_error ignored; /* a bad record is reported by the reads that need it */
        d->base[n] = st_rd64(k);
        d->rec[n] = v;
        d->rec_len[n] = (uint32_t)vl;
        d->count[n] = st_crec_parse(t->name, d->base[n], v, vl, &r, &ignored) ? 0 : r.n;
        in_view = in_view && st_bytes_committed(t->txn->db, v);
        n++;
        rc = st_iter_next(&c, err);
    }
    if (rc != STRATA_ERR_NOT_FOUND) {
        cdir_destroy(&d->hdr);
        return rc;
    }
    d->n = n;
    if (n > 1 && d->base[n - 1] > d->base[0])
        d->scale = (double)(n - 1) / (double)(d->base[n - 1] - d->base[0]);
    cdir_use(t, d);
    if (t->cdir.keyed && in_view) st_share_keep(t->txn->db, &t->cdir.key, &d->hdr);
    return STRATA_OK;
}

/* The place in t->cdir of the cluster with the greatest base <= key, plus one (0: none). */
static size_t cdir_after(const strata_table_t *t, int64_t key) {
    size_t lo = 0, hi = t->cdir.n; /* the answer is lo: bases[lo - 1] <= key < bases[lo] */
    const uint64_t *b = t->cdir.base;
    uint64_t k = (uint64_t)key;
    if (hi > 16 && k > b[0] && k < b[hi - 1]) {
        /* Keys are spread about evenly over the clusters (they are handed out in order): guess
         * the cluster from the key and widen around the guess until the answer is bracketed, so
         * a point read costs a few probes instead of a dozen dependent ones. */
        size_t g = (size_t)((double)(k - b[0]) * t->cdir.scale);
        if (g >= hi) g = hi - 1;
        size_t step = 1;
        if (b[g] <= k) { /* the answer is past g: step on until a base is above key */
            lo = g + 1;
            while (lo + step < hi && b[lo + step] <= k) lo += step, step *= 2;
            if (lo + step < hi) hi = lo + step + 1;
        } else { /* before g */
            hi = g;
            while (hi > step && b[hi - step] > k) hi -= step, step *= 2;
            lo = hi > step ? hi - step : 0;
        }
    }
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (t->cdir.base[mid] <= (uint64_t)key) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* The cluster with the greatest base <= key from t->cdir; *next (if asked) is the base of the
 * cluster after it, 0 if there is none. */
static void cdir_floor(const strata_table_t *t, int64_t key, uint64_t *base, const uint8_t **rec,
                       size_t *rlen, bool *found, uint64_t *next) {
    size_t lo = cdir_after(t, key);
    *found = lo > 0;
    if (!*found) return;
    if (next) *next = lo < t->cdir.n ? t->cdir.base[lo] : 0;
    *base = t->cdir.base[lo - 1];
    *rec = t->cdir.rec[lo - 1];
    *rlen = t->cdir.rec_len[lo - 1];
}

/* The record of the cluster with the greatest base <= key: *found false when there is none.
 * *next (if asked) is the next cluster's base when the directory knows it, else 0. */
static int tree_floor(strata_table_t *t, int64_t key, uint64_t *base, const uint8_t **rec,
                      size_t *rlen, bool *found, uint64_t *next, strata_error *err) {
    *found = false;
    if (next) *next = 0;
    if (t->cdir.built) {
        cdir_floor(t, key, base, rec, rlen, found, next);
        return STRATA_OK;
    }
    strata_tree_t *tree;
    /* none yet: a new table's objects are decoded clusters until they are written */
    int rc = st_table_tree_existing(t, ST_TABLE_CLUSTERS, &tree, err);
    if (rc || !tree) return rc;
    if (!t->txn->write && !t->cdir.looked) {
        cdir_look(t, tree);
        if (t->cdir.built) {
            cdir_floor(t, key, base, rec, rlen, found, next);
            return STRATA_OK;
        }
    }
    uint64_t descents = ++t->cdir.descents + t->cdir.prior;
    if (!t->txn->write && descents >= 32 && descents >= tree->st.count / 4) {
        if ((rc = cdir_build(t, tree, err))) return rc;
        if (t->cdir.built) {
            cdir_floor(t, key, base, rec, rlen, found, next);
            return STRATA_OK;
        }
    }
    st_iter c;
    st_iter_init(&c, tree);
    uint8_t k[8];
    st_wr64(k, (uint64_t)key);
    const uint8_t *ck;
    size_t kl;
    rc = st_iter_seek(&c, k, 8, err);
    if (rc == STRATA_OK) {
        if ((rc = st_iter_get(&c, &ck, &kl, rec, rlen, err))) return rc;
        if (st_rd64(ck) != (uint64_t)key) rc = st_iter_prev(&c, err);
    } else if (rc == STRATA_ERR_NOT_FOUND) {
        rc = st_iter_last(&c, err);
    }
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK;
    if (rc || (rc = st_iter_get(&c, &ck, &kl, rec, rlen, err))) return rc;
    *base = st_rd64(ck);
    *found = true;
    return STRATA_OK;
}

/* Index of the decoded cluster with the greatest base <= key, or -1. */
static long dc_floor(const strata_table_t *t, int64_t key) {
    long lo = 0, hi = (long)t->ndc - 1, best = -1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (t->dc[mid]->base <= (uint64_t)key) best = mid, lo = mid + 1;
        else hi = mid - 1;
    }
    return best;
}

/* The row of key, or -1. Without branches to mispredict (a delete asks three times a row): the
 * last key <= key lies in [at, at + len) while len halves. */
static long dc_row(const st_dcluster *dc, int64_t key) {
    if (dc->n == 0) return -1;
    const int64_t *at = dc->keys;
    /* Keys made one after another (an insert's) are dense: their row is key - first. Without
     * this the binary search was 13% of a 1M-object insert (perf), a search each property set. */
    uint64_t guess = (uint64_t)key - (uint64_t)at[0];
    if (guess < dc->n && at[guess] == key) return (long)guess;
    for (uint32_t len = dc->n; len > 1;) {
        uint32_t half = len / 2;
        at = at[half] <= key ? at + half : at;
        len -= half;
    }
    return *at == key ? at - dc->keys : -1;
}

static int rec_row(strata_table_t *t, const st_crec *r, int64_t key, long *row,
                   const uint8_t **keys, strata_error *err) {
    const uint8_t *p;
    int rc = st_leaf_header(t->txn, st_crec_entry(r, 0, NULL), r->n, &p, err);
    if (rc) return rc;
    *keys = p;
    uint32_t lo = st_packed_lower_bound(p, r->n, key);
    *row = lo < r->n && st_packed_at(p, r->n, lo) == key ? (long)lo : -1;
    return STRATA_OK;
}

/* Where key's cluster is: a decoded one (*dc) or a record (*next as tree_floor gives it). */
static int find_cluster(strata_table_t *t, int64_t key, st_dcluster **dc, uint64_t *base,
                        const uint8_t **rec, size_t *rlen, bool *found, uint64_t *next,
                        strata_error *err) {
    *dc = NULL;
    if (next) *next = 0;
    if (t->hint && t->hint->n && t->hint->keys[0] <= key && key <= t->hint->keys[t->hint->n - 1]) {
        *dc = t->hint;
        *found = true;
        return STRATA_OK;
    }
    int rc = tree_floor(t, key, base, rec, rlen, found, next, err);
    if (rc) return rc;
    long i = dc_floor(t, key);
    if (i >= 0 && (!*found || t->dc[i]->base >= *base)) {
        *dc = t->dc[i];
        *found = true;
    }
    return STRATA_OK;
}

static int not_found(strata_table_t *t, int64_t key, strata_error *err) {
    return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no object with key %lld", t->name,
                  (long long)key);
}

/* The cached record answers unless the tree changed since (mod_count), the cluster was
 * decoded (dc_insert drops it then) or a scan let go of unpacked column pages (the keys leaf
 * may have been one). A decoded cluster that is new has a base above every key
 * of the tree, so it never falls inside the cached record's keys. */
static bool rcache_usable(const strata_table_t *t) {
    return t->rcache.valid && t->clusters && !t->clusters->dropped &&
           t->rcache.mod == t->clusters->mod_count && t->rcache.let_go == t->txn->let_go;
}

/* Row of key in the cached cluster's keys leaf (the first row with a key >= key: *exact);
 * key lies between the cached first and last. */
static inline uint32_t rcache_row(const strata_table_t *t, int64_t key, bool *exact) {
    ST_ASSERT(rcache_usable(t));
    if (t->rcache.dense) {
        *exact = true;
        return (uint32_t)(key - t->rcache.first);
    }
    uint32_t lo = st_packed_lower_bound(t->rcache.keys, t->rcache.n, key);
    *exact = lo < t->rcache.n && st_packed_at(t->rcache.keys, t->rcache.n, lo) == key;
    return lo;
}

/* The key at a row of the cached cluster. */
static inline int64_t rcache_key(const strata_table_t *t, uint32_t row) {
    return t->rcache.dense ? t->rcache.first + row : st_packed_at(t->rcache.keys, t->rcache.n, row);
}

/* Cache a cluster record: with its keys leaf, or (keys NULL) a dense cluster, whose keys are
 * base .. base + n - 1. */
static void rcache_fill(strata_table_t *t, uint64_t base, const uint8_t *rec, size_t rlen,
                        uint32_t n, const uint8_t *keys) {
    if (!t->clusters) return;
    t->rcache.valid = true;
    t->rcache.dense = keys == NULL;
    t->rcache.mod = t->clusters->mod_count;
    t->rcache.let_go = t->txn->let_go;
    t->rcache.base = base;
    t->rcache.rec = rec;
    t->rcache.rec_len = rlen;
    t->rcache.keys = keys;
    t->rcache.n = n;
    t->rcache.first = keys ? st_packed_at(keys, n, 0) : (int64_t)base;
    t->rcache.last = keys ? st_packed_at(keys, n, n - 1) : (int64_t)(base + n - 1);
}

const st_prop st_reads_nothing;

static int locate_in(strata_table_t *t, int64_t key, uint64_t base, const uint8_t *rec,
                     size_t rlen, uint64_t next, const st_prop *only, st_objref *ref,
                     strata_error *err);

int st_obj_locate(strata_table_t *t, int64_t key, st_objref *ref, strata_error *err) {
    return st_obj_locate_for(t, key, NULL, ref, err);
}

int st_obj_locate_for(strata_table_t *t, int64_t key, const st_prop *only, st_objref *ref,
                      strata_error *err) {
    if (rcache_usable(t) && key >= t->rcache.first && key <= t->rcache.last) {
        bool exact;
        uint32_t row = rcache_row(t, key, &exact);
        if (!exact) return not_found(t, key, err);
        memset(ref, 0, sizeof *ref);
        ref->row = row;
        ref->rec = t->rcache.rec;
        ref->rec_len = t->rcache.rec_len;
        return STRATA_OK;
    }
    if (only == ST_READS_NOTHING && t->cdir.built && !t->ndc) {
        /* Whether the object is there: a cluster the directory knows to be dense answers
         * without its record being read. */
        size_t at = cdir_after(t, key);
        if (at == 0) return not_found(t, key, err);
        const uint64_t *b = t->cdir.base;
        if (at < t->cdir.n && b[at] - b[at - 1] == t->cdir.count[at - 1]) {
            memset(ref, 0, sizeof *ref);
            ref->row = (uint32_t)((uint64_t)key - b[at - 1]);
            ref->rec = t->cdir.rec[at - 1];
            ref->rec_len = t->cdir.rec_len[at - 1];
            /* the reads of the object that usually follow find its cluster here */
            rcache_fill(t, b[at - 1], ref->rec, ref->rec_len, t->cdir.count[at - 1], NULL);
            return STRATA_OK;
        }
    }
    st_dcluster *dc;
    uint64_t base = 0;
    const uint8_t *rec = NULL;
    size_t rlen = 0;
    bool found;
    uint64_t next;
    int rc = find_cluster(t, key, &dc, &base, &rec, &rlen, &found, &next, err);
    if (rc) return rc;
    if (!found) return not_found(t, key, err);
    memset(ref, 0, sizeof *ref);
    if (dc) {
        long row = dc_row(dc, key);
        if (row < 0) return not_found(t, key, err);
        ref->dc = dc;
        ref->row = (uint32_t)row;
        t->hint = dc;
        return STRATA_OK;
    }
    return locate_in(t, key, base, rec, rlen, next, only, ref, err);
}

/* key in the stored cluster (base, rec) whose next cluster starts at `next` (0: unknown): ref
 * is zeroed by the caller. */
static int locate_in(strata_table_t *t, int64_t key, uint64_t base, const uint8_t *rec,
                     size_t rlen, uint64_t next, const st_prop *only, st_objref *ref,
                     strata_error *err) {
    st_crec r;
    long row;
    const uint8_t *keys;
    int rc;
    if ((rc = st_crec_parse(t->name, base, rec, rlen, &r, err))) return rc;
    /* A cluster holding as many keys as lie between its base and the next cluster's holds every
     * one of them (its keys ascend inside that range), so key is at row key - base: no need to
     * search its keys leaf. Point reads of a table without deletions all go this way. */
    bool dense = next > base && next - base == r.n;
    /* The reads that follow touch the keys leaf (unless dense) and the leaves of the properties
     * read (only's, none, else any): ask for their headers together. */
    if (!dense) st_leaf_prefetch(t->txn, st_crec_entry(&r, 0, NULL), 1);
    if (!only) {
        for (uint32_t i = 1; i < r.nentries; i++)
            st_leaf_prefetch(t->txn, st_crec_entry(&r, i, NULL), 1);
    } else if (only != ST_READS_NOTHING) {
        st_leafref leaf = st_crec_col(&r, only->id);
        if (leaf.pgno) st_leaf_prefetch(t->txn, leaf, 1);
    }
    if (dense) {
        rcache_fill(t, base, rec, rlen, r.n, NULL);
        ref->row = (uint32_t)((uint64_t)key - base);
        ref->rec = rec;
        ref->rec_len = rlen;
        return STRATA_OK;
    }
    if ((rc = rec_row(t, &r, key, &row, &keys, err))) return rc;
    rcache_fill(t, base, rec, rlen, r.n, keys);
    if (row < 0) return not_found(t, key, err);
    ref->row = (uint32_t)row;
    ref->rec = rec;
    ref->rec_len = rlen;
    return STRATA_OK;
}

int st_obj_locate_batch(strata_table_t *t, const int64_t *keys, size_t n, const st_prop *only,
                        st_objref *refs, strata_error *err) {
    size_t at[ST_LOCATE_BATCH];
    if (!t->cdir.built || t->ndc || n > ST_LOCATE_BATCH) { /* one at a time */
        for (size_t i = 0; i < n; i++) {
            int rc = st_obj_locate_for(t, keys[i], only, &refs[i], err);
            if (rc) return rc;
        }
        return STRATA_OK;
    }
    for (size_t i = 0; i < n; i++) { /* every record asked for before any is read */
        at[i] = cdir_after(t, keys[i]);
        if (at[i] == 0) continue;
        const uint8_t *rec = t->cdir.rec[at[i] - 1];
        __builtin_prefetch(rec);
        if (t->cdir.rec_len[at[i] - 1] > 64) __builtin_prefetch(rec + 64);
    }
    for (size_t i = 0; i < n; i++) {
        size_t a = at[i];
        if (a == 0) return not_found(t, keys[i], err);
        memset(&refs[i], 0, sizeof refs[i]);
        int rc = locate_in(t, keys[i], t->cdir.base[a - 1], t->cdir.rec[a - 1],
                           t->cdir.rec_len[a - 1], a < t->cdir.n ? t->cdir.base[a] : 0, only,
                           &refs[i], err);
        if (rc) return rc;
    }
    return STRATA_OK;
}

int st_obj_read(strata_table_t *t, const st_objref *ref, const st_prop *p, strata_value *out,
                strata_error *err) {
    if (ref->dc) {
        for (uint32_t i = 0; i < ref->dc->ncols; i++)
            if (ref->dc->cols[i].col_id == p->id)
                return st_dcol_value(t->txn, &ref->dc->cols[i], p, ref->row, out, err);
        return ST_CORRUPT(err, "table '%s': decoded cluster lacks property '%s'", t->name, p->name);
    }
    st_crec r;
    int rc = st_crec_parse(t->name, 0, ref->rec, ref->rec_len, &r, err);
    if (rc) return rc;
    st_leafref leaf = st_crec_col(&r, p->id);
    if (leaf.pgno) return st_col_read(t->txn, leaf, r.n, ref->row, p, out, err);
    /* not written yet: the default */
    st_dcol tmp;
    if (st_dcol_alloc(&tmp, p)) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    st_col_default(p, ref->row, ref->row + 1, &tmp);
    rc = st_dcol_value(t->txn, &tmp, p, ref->row, out, err);
    st_dcol_release(&tmp);
    return rc;
}

/* Ask for the cache line of each value of row in the record's leaves first, then for the bytes
 * of strings and binaries (their offsets are on the way by then), so that the misses overlap.
 * The record's entries after the keys leaf are the properties' leaves. */
void st_obj_prefetch(strata_table_t *t, const st_objref *ref) {
    st_crec r;
    strata_error ignored;
    if (ref->dc || !ref->rec || st_crec_parse(t->name, 0, ref->rec, ref->rec_len, &r, &ignored)) return;
    for (uint32_t i = 1; i < r.nentries; i++) {
        st_leafref leaf = st_crec_entry(&r, i, NULL);
        if (leaf.pgno) st_col_prefetch(t->txn, leaf, r.n, ref->row);
    }
    for (uint32_t i = 1; i < r.nentries; i++) {
        uint32_t col;
        st_leafref leaf = st_crec_entry(&r, i, &col);
        const st_prop *p = st_prop_find(t, col);
        if (leaf.pgno && p && st_type_var(p->type, p->flags))
            st_col_prefetch_element(t->txn, leaf, r.n, ref->row);
    }
}

int st_obj_read_many(strata_table_t *t, const st_objref *ref, st_prop *const *props, size_t n,
                     strata_value *out, strata_error *err) {
    st_crec r; /* a stored cluster's record, parsed once for all the properties */
    int rc = ref->dc ? STRATA_OK : st_crec_parse(t->name, 0, ref->rec, ref->rec_len, &r, err);
    if (rc == STRATA_OK && !ref->dc && n > 1) {
        /* Ask for every value's cache line first, then for the bytes of strings (their offsets
         * are on the way by then), so that the misses overlap. */
        for (size_t i = 0; i < n; i++) {
            st_leafref leaf = st_crec_col(&r, props[i]->id);
            if (leaf.pgno) st_col_prefetch(t->txn, leaf, r.n, ref->row);
        }
        for (size_t i = 0; i < n; i++)
            if (st_type_var(props[i]->type, props[i]->flags)) {
                st_leafref leaf = st_crec_col(&r, props[i]->id);
                if (leaf.pgno) st_col_prefetch_element(t->txn, leaf, r.n, ref->row);
            }
    }
    for (size_t i = 0; rc == STRATA_OK && i < n; i++) {
        st_leafref leaf = ref->dc ? (st_leafref){0, 0, 0} : st_crec_col(&r, props[i]->id);
        rc = leaf.pgno ? st_col_read(t->txn, leaf, r.n, ref->row, props[i], &out[i], err)
                       : st_obj_read(t, ref, props[i], &out[i], err); /* decoded, or the default */
    }
    return rc;
}

/* ------------------------------------------------------------------ decoding */

static void dc_free(st_dcluster *dc) {
    if (!dc) return;
    for (uint32_t i = 0; i < dc->ncols; i++) st_dcol_release(&dc->cols[i]);
    free(dc->cols);
    free(dc->old_pages);
    free(dc);
}

static st_dcluster *dc_new(const strata_table_t *t) {
    st_dcluster *dc = calloc(1, sizeof *dc);
    if (!dc) return NULL;
    dc->cols = calloc(t->nprops ? t->nprops : 1, sizeof *dc->cols);
    if (!dc->cols) {
        free(dc);
        return NULL;
    }
    dc->ncols = t->nprops;
    for (uint32_t i = 0; i < t->nprops; i++)
        if (st_dcol_alloc(&dc->cols[i], &t->props[i])) {
            dc_free(dc);
            return NULL;
        }
    return dc;
}

static int dc_insert(strata_table_t *t, st_dcluster *dc, strata_error *err) {
    if (t->ndc == t->capdc) {
        size_t cap = t->capdc ? 2 * t->capdc : 8;
        st_dcluster **grown = realloc(t->dc, cap * sizeof *grown);
        if (!grown) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        t->dc = grown;
        t->capdc = cap;
    }
    if (t->rcache.valid && t->rcache.base == dc->base) t->rcache.valid = false; /* shadowed */
    long i = dc_floor(t, (int64_t)dc->base) + 1;
    memmove(t->dc + i + 1, t->dc + i, (t->ndc - (size_t)i) * sizeof *t->dc);
    t->dc[i] = dc;
    t->ndc++;
    return STRATA_OK;
}

static int decode(strata_table_t *t, uint64_t base, const uint8_t *rec, size_t rlen,
                  st_dcluster **out, strata_error *err) {
    st_crec r;
    int rc = st_crec_parse(t->name, base, rec, rlen, &r, err);
    if (rc) return rc;
    st_dcluster *dc = dc_new(t);
    if (!dc) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    dc->base = base;
    dc->in_tree = true;
    dc->n = r.n;
    dc->old_keys = st_crec_entry(&r, 0, NULL);
    const uint8_t *kp;
    if ((rc = st_leaf_header(t->txn, dc->old_keys, r.n, &kp, err))) goto fail;
    st_leaf_unpack(kp, r.n, dc->keys);
    for (uint32_t i = 0; i < t->nprops; i++) {
        st_leafref leaf = st_crec_col(&r, t->props[i].id);
        if (leaf.pgno) rc = st_col_decode(t->txn, leaf, &t->props[i], r.n, &dc->cols[i], t->store, err);
        else st_col_default(&t->props[i], 0, r.n, &dc->cols[i]);
        if (rc) goto fail;
    }
    /* Every page the record names (the shared one, own pages, leaves of properties that no
     * longer exist): writing the cluster frees those it no longer uses. */
    dc->old_pages = calloc(r.nentries, sizeof *dc->old_pages);
    if (!dc->old_pages) {
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        goto fail;
    }
    uint32_t present = 1;
    for (uint32_t i = 0; i < r.nentries; i++) {
        pgno_t pg = st_crec_entry(&r, i, NULL).pgno;
        uint32_t uses = page_uses(&r, pg, r.nentries);
        bool seen = false;
        for (uint32_t j = 0; j < dc->nold_pages; j++) seen |= dc->old_pages[j] == pg;
        if (!seen) dc->old_pages[dc->nold_pages++] = pg;
        if (i == 0) dc->keys_own = uses == 1;
        for (uint32_t c = 0; c < dc->ncols; c++)
            if (dc->cols[c].old.pgno == pg) dc->cols[c].old_own = uses == 1;
    }
    for (uint32_t c = 0; c < dc->ncols; c++) present += dc->cols[c].old.pgno != 0;
    dc->stale_entries = present != r.nentries;
    /* Its rows were written as one cluster: the first append does not measure them (the
     * write measures anyway, and splits a cluster that outgrew its page). A stream of
     * one-object commits measured every last cluster twice: 3% of such a commit. */
    dc->fit_rows = r.n;
    dc->next_check = r.n + 1;
    *out = dc;
    return STRATA_OK;
fail:
    dc_free(dc);
    return rc;
}

static int make_room(strata_table_t *t, strata_error *err) {
    if (t->ndc < MAX_DECODED) return STRATA_OK;
    return st_clusters_flush(t, err);
}

int st_obj_locate_write(strata_table_t *t, int64_t key, st_objref *ref, strata_error *err) {
    int rc = st_obj_locate(t, key, ref, err);
    if (rc || ref->dc) return rc;
    if ((rc = make_room(t, err))) return rc;
    st_dcluster *dc;
    uint64_t base = 0;
    const uint8_t *rec;
    size_t rlen;
    bool found;
    if ((rc = find_cluster(t, key, &dc, &base, &rec, &rlen, &found, NULL, err))) return rc;
    if (!found) return not_found(t, key, err);
    if (!dc) {
        if ((rc = decode(t, base, rec, rlen, &dc, err)) || (rc = dc_insert(t, dc, err))) return rc;
    }
    long row = dc_row(dc, key);
    if (row < 0) return not_found(t, key, err);
    ref->dc = dc;
    ref->row = (uint32_t)row;
    ref->rec = NULL;
    t->hint = dc;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ adding and removing rows */

#define WIDE_ROWS 64 /* fewer objects than this fill a page: wide (carry_overflow) */

/* Measure every leaf of rows [from, to) (plans[0] the keys, plans[1 + i] column i): the bytes
 * they take side by side on one page (header included, each leaf aligned to 8); *each_fits
 * whether every leaf fits a page alone. */
static size_t measure_range(const st_dcluster *dc, const st_dcol *keys, uint32_t from, uint32_t to,
                            st_col_plan *plans, bool *each_fits) {
    size_t total = PH_SIZE;
    *each_fits = true;
    for (uint32_t e = 0; e <= dc->ncols; e++) {
        size_t size = st_col_bytes(e == 0 ? keys : &dc->cols[e - 1], from, to, &plans[e]);
        *each_fits = *each_fits && size <= ST_PAGE_SIZE - PH_SIZE;
        total = ((total + 7) & ~(size_t)7) + size;
    }
    return total;
}

/* Whether objects of leaves totalling `total` bytes (measure_range) over n rows are wide: fewer
 * than WIDE_ROWS of them fill a page. */
static bool wide_rows(size_t total, uint32_t n) {
    return (total - PH_SIZE) * WIDE_ROWS > (size_t)(ST_PAGE_SIZE - PH_SIZE) * n;
}

static int size_cmp(const void *a, const void *b) {
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Whether the leaves of `rows` rows measured into plans (ne of them, measure_range's total and
 * each_fits) make one cluster: every leaf fits a page; a wide object's leaves all fit one page;
 * otherwise no page of their layout (write_leaves': the smallest share a page, each other one
 * has a page of its own) is less than a quarter full — else a table of one string property
 * would give its keys leaf a page of its own once the strings fill theirs. One object whose
 * leaves cannot share a page spreads them over pages (nothing smaller can be written). */
static bool measured_fits(const st_col_plan *plans, uint32_t ne, uint32_t rows, size_t total,
                          bool each, bool wide) {
    if (!each) return false;
    if (total <= ST_PAGE_SIZE || rows == 1) return true;
    if (wide) return false;
    size_t local[32], *sizes = ne <= 32 ? local : malloc(ne * sizeof *sizes);
    if (!sizes) return false;
    for (uint32_t e = 0; e < ne; e++) sizes[e] = plans[e].size;
    qsort(sizes, ne, sizeof *sizes, size_cmp);
    size_t used = PH_SIZE;
    bool ok = true;
    for (uint32_t e = 0; e < ne; e++) {
        size_t at = (used + 7) & ~(size_t)7;
        if (at + sizes[e] <= ST_PAGE_SIZE) used = at + sizes[e];
        else ok = ok && PH_SIZE + sizes[e] >= ST_PAGE_SIZE / 4;
    }
    ok = ok && used >= ST_PAGE_SIZE / 4;
    if (sizes != local) free(sizes);
    return ok;
}

/* Whether rows [from, to) can be written as one cluster (measured_fits). */
static bool range_fits(const st_dcluster *dc, const st_dcol *keys, uint32_t from, uint32_t to,
                       bool wide, st_col_plan *plans) {
    bool each;
    size_t total = measure_range(dc, keys, from, to, plans, &each);
    return measured_fits(plans, 1 + dc->ncols, to - from, total, each, wide);
}

/* The most rows from `from` (fewer than to - from, which do not fit) that fit one cluster,
 * found by doubling, then halving, their number (from `known` rows, when that many fit: the
 * appends know how many did at their last check); 0 when one object alone does not fit. */
static uint32_t longest_fit(const st_dcluster *dc, const st_dcol *keys, uint32_t from, uint32_t to,
                            uint32_t known, bool wide, st_col_plan *plans) {
    uint32_t fit = 0, miss = to - from; /* fit rows fit, miss do not */
    if (known > 0 && known < miss && range_fits(dc, keys, from, from + known, wide, plans))
        fit = known;
    for (uint32_t n = fit ? miss : 1; n < miss; n *= 2) {
        if (!range_fits(dc, keys, from, from + n, wide, plans)) {
            miss = n;
            break;
        }
        fit = n;
    }
    while (miss - fit > 1) {
        uint32_t n = fit + (miss - fit) / 2;
        if (range_fits(dc, keys, from, from + n, wide, plans)) fit = n;
        else miss = n;
    }
    return fit;
}

/* dc's keys as a packed column, to measure and write like the others. */
static st_dcol keys_column(const st_dcluster *dc) {
    st_dcol keys;
    memset(&keys, 0, sizeof keys);
    keys.enc = ST_ENC_PACKED;
    keys.ints = (int64_t *)dc->keys;
    return keys;
}

/* Appends fill clusters to their page(s): a cluster grows until its rows no longer fit one
 * cluster (measured_fits: every leaf on a page; a wide object's leaves all on one page; no page
 * of the layout under a quarter full) or reach ST_CLUSTER_MAX, and then the rows past the
 * longest run that fits move to a new cluster that the appends go on filling. Measuring takes
 * a pass over the rows, so appends ask again only 7/8 of the way to where objects like the
 * cluster's would reach a limit (next_check): a few passes a cluster, and the run that fits is
 * searched for only among the rows added since the last pass that fit. Before session 37 a
 * cluster was closed while it had room for one and a half more objects like its own (strings
 * vary, and a cluster that outgrew its page was halved when written): 1.5 to 2 wide objects'
 * room free on every page (a 4-property chat message table used 396 bytes a message
 * compacted; 364 now), and clusters of ~151 Person objects where ~165 fit.
 *
 * Wide objects (fewer than WIDE_ROWS fill a page, all leaves together: messages with a text
 * body) are kept to one page per cluster, all leaves on it: else the body leaf fills a page
 * alone and the small leaves take a second one, mostly empty (a 3-property message table used
 * 1.7 times SQLite's bytes so). Narrow objects keep clusters of up to 256 over a few pages: a
 * scan visits fewer clusters. */

/* When rows [0, n) fit as measured (plans, total): the row count at which to check again — 7/8
 * of the way to where, adding objects like these, the first limit would be reached (a wide
 * object's page, else the first of its var or fixed leaves to fill a page), at least the next
 * row. */
static uint32_t next_check(const st_dcluster *dc, const st_col_plan *plans, size_t total,
                           bool wide) {
    uint32_t n = dc->n;
    uint64_t left = ST_CLUSTER_MAX - n; /* objects to the nearest limit, estimated */
    if (total > ST_PAGE_SIZE && (wide || n == 1)) {
        left = 0; /* one object spread over pages (measured_fits): ask at the next */
    } else if (wide) {
        left = (uint64_t)(ST_PAGE_SIZE - total) * n / (total - PH_SIZE);
    } else {
        for (uint32_t i = 0; i < dc->ncols; i++) {
            size_t size = plans[1 + i].size;
            if (dc->cols[i].enc == ST_ENC_PACKED || size == 0) continue;
            uint64_t rows = (uint64_t)(ST_PAGE_SIZE - PH_SIZE - size) * n / size;
            if (rows < left) left = rows;
        }
    }
    left = left * 7 / 8;
    return n + (left > 1 ? (uint32_t)(left < ST_CLUSTER_MAX ? left : ST_CLUSTER_MAX) : 1);
}

/* dc's rows (at least one) past those that fit one cluster move to a new cluster, *out; NULL
 * when they all fit. */
static int carry_overflow(strata_table_t *t, st_dcluster *dc, st_dcluster **out,
                          strata_error *err) {
    *out = NULL;
    st_col_plan local[16];
    st_col_plan *plans = dc->ncols < 16 ? local : malloc((1 + (size_t)dc->ncols) * sizeof *plans);
    if (!plans) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    st_dcol keys = keys_column(dc);
    bool each;
    size_t total = measure_range(dc, &keys, 0, dc->n, plans, &each);
    bool wide = wide_rows(total, dc->n);
    bool fits = measured_fits(plans, 1 + dc->ncols, dc->n, total, each, wide);
    uint32_t keep = fits ? dc->n : longest_fit(dc, &keys, 0, dc->n, dc->fit_rows, wide, plans);
    if (fits) {
        dc->fit_rows = dc->n;
        dc->next_check = next_check(dc, plans, total, wide);
    }
    if (plans != local) free(plans);
    if (keep == 0) keep = 1; /* one object that does not fit: its write says so */
    if (keep == dc->n) return STRATA_OK;
    st_dcluster *next = dc_new(t);
    if (!next) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    uint32_t moved = dc->n - keep;
    next->base = (uint64_t)dc->keys[keep];
    next->n = moved;
    next->shape_dirty = true;
    memcpy(next->keys, dc->keys + keep, moved * sizeof *dc->keys);
    for (uint32_t i = 0; i < dc->ncols; i++) {
        st_dcol *c = &dc->cols[i], *d = &next->cols[i];
        memcpy(d->nulls, c->nulls + keep, moved);
        if (c->ints) memcpy(d->ints, c->ints + keep, moved * sizeof *c->ints);
        if (c->fixed) memcpy(d->fixed, c->fixed + (size_t)keep * c->slot, (size_t)moved * c->slot);
        if (c->var) memcpy(d->var, c->var + keep, moved * sizeof *c->var);
        d->dirty = true;
    }
    dc->n = keep;
    *out = next;
    return STRATA_OK;
}

int st_cluster_append(strata_table_t *t, int64_t key, st_objref *ref, strata_error *err) {
    int rc = make_room(t, err);
    if (rc) return rc;
    st_dcluster *dc = NULL;
    uint64_t base = 0;
    const uint8_t *rec;
    size_t rlen;
    bool found = false;
    st_dcluster *last = t->append_dc;
    if (last && last->n && key > last->keys[last->n - 1]) /* the next key: no search */
        dc = last;
    else if ((rc = find_cluster(t, key, &dc, &base, &rec, &rlen, &found, NULL, err)))
        return rc;
    if (found && !dc) {
        st_crec r;
        if ((rc = st_crec_parse(t->name, base, rec, rlen, &r, err))) return rc;
        if (r.n < ST_CLUSTER_MAX) {
            if ((rc = decode(t, base, rec, rlen, &dc, err)) || (rc = dc_insert(t, dc, err)))
                return rc;
        }
    }
    if (dc && dc->n && dc->keys[dc->n - 1] >= key) dc = NULL;
    if (dc && dc->n && (dc->n >= ST_CLUSTER_MAX || dc->n >= dc->next_check)) {
        st_dcluster *next;
        if ((rc = carry_overflow(t, dc, &next, err))) return rc;
        if (next && (rc = dc_insert(t, next, err))) {
            dc_free(next);
            return rc;
        }
        dc = next ? next : dc->n >= ST_CLUSTER_MAX ? NULL : dc;
    }
    if (!dc) {
        if (!(dc = dc_new(t))) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        dc->base = (uint64_t)key;
        if ((rc = dc_insert(t, dc, err))) {
            dc_free(dc);
            return rc;
        }
    }
    uint32_t row = dc->n++;
    dc->keys[row] = key;
    for (uint32_t i = 0; i < dc->ncols; i++) st_col_default(&t->props[i], row, row + 1, &dc->cols[i]);
    dc->shape_dirty = true;
    ref->dc = dc;
    ref->row = row;
    ref->rec = NULL;
    t->hint = t->append_dc = dc;
    return STRATA_OK;
}

int st_cluster_patch(strata_table_t *t, int64_t key, const st_prop *p, const strata_value *v,
                     bool *done, strata_error *err) {
    *done = false;
    st_dcluster *dc;
    uint64_t base = 0;
    const uint8_t *rec = NULL, *keys, *seg;
    size_t rlen = 0;
    bool found;
    int rc = find_cluster(t, key, &dc, &base, &rec, &rlen, &found, NULL, err);
    if (rc || !found || dc) return rc;
    st_crec r;
    long row;
    if ((rc = st_crec_parse(t->name, base, rec, rlen, &r, err)) ||
        (rc = rec_row(t, &r, key, &row, &keys, err)))
        return rc;
    if (row < 0) return not_found(t, key, err);
    st_leafref leaf = st_crec_col(&r, p->id);
    if (!leaf.pgno) return STRATA_OK;
    if ((rc = st_leaf_header(t->txn, leaf, r.n, &seg, err))) return rc;
    if (!st_leaf_can_patch(seg, r.n, (uint32_t)row, p, v)) return STRATA_OK;
    uint8_t *page;
    pgno_t newp;
    if ((rc = st_page_touch(t->txn, leaf.pgno, &page, &newp, err))) return rc;
    st_leaf_patch(page + leaf.off, r.n, (uint32_t)row, p, v);
    if (newp != leaf.pgno) { /* the page moved: every leaf on it moves with it */
        uint8_t *nrec = malloc(rlen);
        if (!nrec) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        memcpy(nrec, rec, rlen);
        for (uint32_t i = 0; i < r.nentries; i++)
            if (st_rd64(nrec + REC_HEAD + (size_t)i * REC_ENTRY + 8) == leaf.pgno)
                st_wr64(nrec + REC_HEAD + (size_t)i * REC_ENTRY + 8, newp);
        uint8_t k[8];
        st_wr64(k, base);
        rc = st_tree_put(t->clusters, k, 8, nrec, rlen, err);
        free(nrec);
        if (rc) return rc;
    }
    *done = true;
    return STRATA_OK;
}

int st_cluster_remove_row(strata_table_t *t, st_objref *ref, strata_error *err) {
    st_dcluster *dc = ref->dc;
    uint32_t row = ref->row, tail = dc->n - row - 1;
    for (uint32_t i = 0; i < dc->ncols; i++) {
        st_dcol *c = &dc->cols[i];
        int rc = st_dcol_free_big(t->txn, c, row, err);
        if (rc) return rc;
        memmove(c->nulls + row, c->nulls + row + 1, tail);
        if (c->ints) memmove(c->ints + row, c->ints + row + 1, tail * sizeof *c->ints);
        if (c->fixed) memmove(c->fixed + (size_t)row * c->slot, c->fixed + (size_t)(row + 1) * c->slot,
                              (size_t)tail * c->slot);
        if (c->var) memmove(c->var + row, c->var + row + 1, tail * sizeof *c->var);
    }
    memmove(dc->keys + row, dc->keys + row + 1, tail * sizeof *dc->keys);
    dc->n--;
    dc->shape_dirty = true;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ writing */

static int free_page(strata_txn_t *txn, pgno_t pg, strata_error *err) {
    return pg ? st_page_free(txn, pg, 1, err) : STRATA_OK;
}

/* Leaf e (0 = keys, else column e - 1) stays where it is: a clean leaf alone on its page. */
static bool keeps_leaf(const st_dcluster *dc, uint32_t e, bool reuse) {
    if (!reuse) return false;
    if (e == 0) return dc->keys_own;
    const st_dcol *c = &dc->cols[e - 1];
    return !c->dirty && c->old_own && c->old.pgno;
}

typedef struct pending {
    const st_dcol *col; /* NULL: the leaf is kept where it is */
    pgno_t old;         /* the page the leaf was on (a hint for the commit log) */
    size_t len;
    st_leafref ref;
} pending;

static int pending_len_cmp(const void *a, const void *b) {
    const pending *x = *(pending *const *)a, *y = *(pending *const *)b;
    return (x->len > y->len) - (x->len < y->len);
}

/* A page for column leaves, most like `old` (where its first leaf was). */
static int new_column_page(strata_txn_t *txn, pgno_t old, uint8_t **p, pgno_t *pg,
                           strata_error *err) {
    int rc = st_page_alloc(txn, 1, p, pg, err);
    if (rc) return rc;
    (*p)[PH_KIND] = ST_PAGE_COLUMN;
    if (old) st_page_resembles(txn, *pg, old);
    return STRATA_OK;
}

/* Write the leaves of rows [from, to) and the record naming them. The smallest leaves share a
 * page; those that do not fit beside them get their own. */
static int write_leaves(strata_table_t *t, strata_tree_t *tree, st_dcluster *dc, const st_dcol *keys,
                        uint32_t from, uint32_t to, bool reuse, const st_col_plan *plans,
                        strata_error *err) {
    uint32_t ne = 1 + dc->ncols, nq = 0;
    pending *pd = calloc(ne, sizeof *pd);
    pending **queue = calloc(ne, sizeof *queue);
    size_t rlen = REC_HEAD + (size_t)ne * REC_ENTRY;
    uint8_t *rec = malloc(rlen);
    int rc = pd && queue && rec ? STRATA_OK : st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    for (uint32_t e = 0; rc == STRATA_OK && e < ne; e++) {
        const st_dcol *c = e == 0 ? keys : &dc->cols[e - 1];
        if (keeps_leaf(dc, e, reuse)) {
            pd[e].ref = e == 0 ? dc->old_keys : c->old;
            continue;
        }
        pd[e].col = c;
        pd[e].old = e == 0 ? dc->old_keys.pgno : c->old.pgno;
        pd[e].len = plans[e].size;
        queue[nq++] = &pd[e];
    }
    if (rc == STRATA_OK) qsort(queue, nq, sizeof *queue, pending_len_cmp);
    /* place: the shared page first, smallest leaves first; each leaf is encoded where it goes */
    size_t used = PH_SIZE;
    uint32_t nshared = 0;
    for (uint32_t q = 0; rc == STRATA_OK && q < nq; q++) {
        size_t at = (used + 7) & ~(size_t)7;
        if (at + queue[q]->len <= ST_PAGE_SIZE) {
            queue[q]->ref = (st_leafref){0, (uint16_t)at, (uint16_t)queue[q]->len};
            used = at + queue[q]->len;
            nshared++;
            continue;
        }
        uint8_t *p;
        pgno_t pg;
        if ((rc = new_column_page(t->txn, queue[q]->old, &p, &pg, err))) break;
        st_col_encode(queue[q]->col, from, to, &plans[queue[q] - pd], p + PH_SIZE);
        queue[q]->ref = (st_leafref){pg, PH_SIZE, (uint16_t)queue[q]->len};
    }
    if (rc == STRATA_OK && nshared) {
        uint8_t *p;
        pgno_t pg;
        if ((rc = new_column_page(t->txn, queue[0]->old, &p, &pg, err)) == STRATA_OK)
            for (uint32_t q = 0; q < nshared; q++) {
                st_col_encode(queue[q]->col, from, to, &plans[queue[q] - pd], p + queue[q]->ref.off);
                queue[q]->ref.pgno = pg;
            }
    }
    if (rc == STRATA_OK) {
        st_wr32(rec, to - from);
        st_wr32(rec + 4, ne);
        for (uint32_t e = 0; e < ne; e++) {
            uint8_t *o = rec + REC_HEAD + (size_t)e * REC_ENTRY;
            st_wr32(o, e == 0 ? 0 : dc->cols[e - 1].col_id);
            st_wr16(o + 4, pd[e].ref.off);
            st_wr16(o + 6, pd[e].ref.len);
            st_wr64(o + 8, pd[e].ref.pgno);
        }
        uint8_t k[8];
        st_wr64(k, from == 0 ? dc->base : (uint64_t)dc->keys[from]);
        rc = st_tree_put(tree, k, 8, rec, rlen, err);
    }
    free(pd);
    free(queue);
    free(rec);
    return rc;
}

/* Write rows [from, to) as one or more clusters. A range that does not fit (range_fits) is
 * split where a page fills: the longest run of rows from its start that fits is written, then
 * the rest the same way (appends carry what overflows into the next cluster before this:
 * st_cluster_append). A range that must split keeps none of its old leaves: *reuse turns
 * false. plans (1 + ncols) is scratch: each range measures and writes before the next one
 * starts. */
static int write_range(strata_table_t *t, strata_tree_t *tree, st_dcluster *dc, const st_dcol *keys,
                       uint32_t from, uint32_t to, bool *reuse, st_col_plan *plans,
                       strata_error *err) {
    bool each;
    size_t total = measure_range(dc, keys, from, to, plans, &each);
    bool wide = wide_rows(total, to - from);
    if (measured_fits(plans, 1 + dc->ncols, to - from, total, each, wide))
        return write_leaves(t, tree, dc, keys, from, to, *reuse, plans, err);
    *reuse = false;
    for (;;) { /* [from, to) does not fit */
        uint32_t fit = longest_fit(dc, keys, from, to, 0, wide, plans);
        if (fit == 0)
            return st_err(err, STRATA_ERR_TOO_LARGE, "table '%s': object %lld does not fit a "
                          "cluster", t->name, (long long)dc->keys[from]);
        range_fits(dc, keys, from, from + fit, wide, plans); /* its plans, for the write */
        int rc = write_leaves(t, tree, dc, keys, from, from + fit, false, plans, err);
        if (rc) return rc;
        from += fit;
        if (range_fits(dc, keys, from, to, wide, plans))
            return write_leaves(t, tree, dc, keys, from, to, false, plans, err);
    }
}

static int write_cluster(strata_table_t *t, st_dcluster *dc, strata_error *err) {
    strata_tree_t *tree;
    int rc = st_table_tree(t, ST_TABLE_CLUSTERS, true, &tree, err);
    if (rc) return rc;
    bool any_dirty = dc->shape_dirty || dc->stale_entries || !dc->in_tree;
    for (uint32_t i = 0; i < dc->ncols; i++) any_dirty |= dc->cols[i].dirty || !dc->cols[i].old.pgno;
    if (!any_dirty) return STRATA_OK;
    bool reuse = dc->in_tree && !dc->shape_dirty;
    st_dcol keys = keys_column(dc);
    if (dc->n == 0) {
        if (dc->in_tree) {
            uint8_t k[8];
            st_wr64(k, dc->base);
            if ((rc = st_tree_del(tree, k, 8, err))) return rc;
        }
    } else {
        st_col_plan *plans = malloc((1 + (size_t)dc->ncols) * sizeof *plans);
        if (!plans) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        rc = write_range(t, tree, dc, &keys, 0, dc->n, &reuse, plans, err);
        free(plans);
        if (rc) return rc;
    }
    /* the old pages no kept leaf is on */
    for (uint32_t i = 0; i < dc->nold_pages; i++) {
        pgno_t pg = dc->old_pages[i];
        bool kept = dc->n && keeps_leaf(dc, 0, reuse) && dc->old_keys.pgno == pg;
        for (uint32_t e = 1; dc->n && !kept && e <= dc->ncols; e++)
            kept = keeps_leaf(dc, e, reuse) && dc->cols[e - 1].old.pgno == pg;
        if (!kept && (rc = free_page(t->txn, pg, err))) return rc;
    }
    return STRATA_OK;
}

int st_clusters_flush(strata_table_t *t, strata_error *err) {
    int rc = STRATA_OK;
    for (size_t i = 0; i < t->ndc; i++) {
        if (rc == STRATA_OK) rc = write_cluster(t, t->dc[i], err);
        dc_free(t->dc[i]);
    }
    t->ndc = 0;
    t->hint = t->append_dc = NULL;
    if (rc) st_txn_fail(t->txn, rc);
    return rc;
}

void st_clusters_forget(strata_table_t *t) {
    for (size_t i = 0; i < t->ndc; i++) dc_free(t->dc[i]);
    t->ndc = 0;
    t->hint = t->append_dc = NULL;
}

/* ------------------------------------------------------------------ walking */

int st_cluster_next_key(strata_table_t *t, int64_t after, int64_t *key, strata_error *err) {
    int rc;
    if (after == INT64_MAX) return STRATA_ERR_NOT_FOUND; /* no key follows it */
    if (t->ndc && (rc = st_clusters_flush(t, err))) return rc;
    if (rcache_usable(t) && after >= t->rcache.first && after < t->rcache.last) {
        bool exact;
        uint32_t row = rcache_row(t, after, &exact);
        if (exact) row++;
        *key = rcache_key(t, row);
        return STRATA_OK;
    }
    strata_tree_t *tree;
    if ((rc = st_table_tree_existing(t, ST_TABLE_CLUSTERS, &tree, err))) return rc;
    if (!tree) return STRATA_ERR_NOT_FOUND;
    st_iter c;
    st_iter_init(&c, tree);
    int64_t from = after < 0 ? 0 : after + 1;
    uint8_t k[8];
    st_wr64(k, (uint64_t)from);
    const uint8_t *ck, *rec;
    size_t kl, rlen;
    rc = st_iter_seek(&c, k, 8, err);
    /* the cluster before the seek position may hold keys >= from */
    if (rc == STRATA_OK) {
        if ((rc = st_iter_get(&c, &ck, &kl, &rec, &rlen, err))) return rc;
        if (st_rd64(ck) > (uint64_t)from && st_iter_prev(&c, err) != STRATA_OK)
            rc = st_iter_first(&c, err);
    } else if (rc == STRATA_ERR_NOT_FOUND) {
        rc = st_iter_last(&c, err);
    }
    for (; rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        if ((rc = st_iter_get(&c, &ck, &kl, &rec, &rlen, err))) return rc;
        st_crec r;
        const uint8_t *kp;
        if ((rc = st_crec_parse(t->name, st_rd64(ck), rec, rlen, &r, err)) ||
            (rc = st_leaf_header(t->txn, st_crec_entry(&r, 0, NULL), r.n, &kp, err)))
            return rc;
        if (st_packed_at(kp, r.n, r.n - 1) < from) continue;
        rcache_fill(t, st_rd64(ck), rec, rlen, r.n, kp);
        *key = st_packed_at(kp, r.n, st_packed_lower_bound(kp, r.n, from)); /* < n: see above */
        return STRATA_OK;
    }
    return rc;
}

int st_cluster_keys(strata_table_t *t, int64_t *keys, size_t cap, size_t *count, strata_error *err) {
    *count = 0;
    int rc = st_clusters_flush(t, err);
    if (rc) return rc;
    strata_tree_t *tree;
    rc = st_table_tree_existing(t, ST_TABLE_CLUSTERS, &tree, err);
    if (rc || !tree) return rc;
    st_iter c;
    st_iter_init(&c, tree);
    size_t n = 0;
    for (rc = st_iter_first(&c, err); rc == STRATA_OK; rc = st_iter_next(&c, err)) {
        const uint8_t *ck, *rec, *kp;
        size_t kl, rlen;
        st_crec r;
        if ((rc = st_iter_get(&c, &ck, &kl, &rec, &rlen, err)) ||
            (rc = st_crec_parse(t->name, st_rd64(ck), rec, rlen, &r, err)) ||
            (rc = st_leaf_header(t->txn, st_crec_entry(&r, 0, NULL), r.n, &kp, err)))
            return rc;
        for (uint32_t row = 0; row < r.n; row++, n++)
            if (n < cap) keys[n] = st_packed_at(kp, r.n, row);
    }
    if (rc != STRATA_ERR_NOT_FOUND) return rc;
    *count = n;
    return STRATA_OK;
}

/* Every cluster base, ascending (flushes first). */
static int all_bases(strata_table_t *t, uint64_t **out, size_t *n, strata_error *err) {
    *out = NULL;
    *n = 0;
    int rc = st_clusters_flush(t, err);
    if (rc) return rc;
    strata_tree_t *tree;
    rc = st_table_tree_existing(t, ST_TABLE_CLUSTERS, &tree, err);
    if (rc || !tree) return rc;
    uint64_t *v = malloc((tree->st.count + 1) * sizeof *v);
    if (!v) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    st_iter c;
    st_iter_init(&c, tree);
    size_t k = 0;
    for (rc = st_iter_first(&c, err); rc == STRATA_OK && k < tree->st.count; rc = st_iter_next(&c, err)) {
        const uint8_t *ck;
        size_t kl;
        if ((rc = st_iter_get(&c, &ck, &kl, NULL, NULL, err))) break;
        v[k++] = st_rd64(ck);
    }
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
    if (rc) {
        free(v);
        return rc;
    }
    *out = v;
    *n = k;
    return STRATA_OK;
}

/* Free the big-value runs of a var leaf. */
static int free_leaf_bigs(strata_table_t *t, const st_prop *p, st_leafref leaf, uint32_t n,
                          strata_error *err) {
    if (!st_type_var(p->type, p->flags)) return STRATA_OK;
    st_dcol c;
    if (st_dcol_alloc(&c, p)) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    int rc = st_col_decode(t->txn, leaf, p, n, &c, t->store, err);
    for (uint32_t i = 0; rc == STRATA_OK && i < n; i++) rc = st_dcol_free_big(t->txn, &c, i, err);
    st_dcol_release(&c);
    return rc;
}

/* The record of the cluster at base (k receives its tree key). */
static int record_at(strata_table_t *t, uint64_t base, uint8_t k[8], const uint8_t **rec,
                     size_t *rlen, st_crec *r, strata_error *err) {
    st_wr64(k, base);
    int rc = st_bt_get(t->txn, &t->clusters->st, k, 8, rec, rlen, err);
    return rc ? rc : st_crec_parse(t->name, base, *rec, *rlen, r, err);
}

int st_clusters_drop_column(strata_table_t *t, uint32_t col, strata_error *err) {
    st_prop *p = st_prop_find(t, col);
    uint64_t *bases;
    size_t nb;
    int rc = all_bases(t, &bases, &nb, err);
    if (rc) return rc;
    strata_tree_t *tree = t->clusters;
    for (size_t i = 0; rc == STRATA_OK && i < nb; i++) {
        uint8_t k[8];
        const uint8_t *rec;
        size_t rlen;
        st_crec r;
        if ((rc = record_at(t, bases[i], k, &rec, &rlen, &r, err))) break;
        st_leafref leaf = st_crec_col(&r, col);
        if (!leaf.pgno) continue;
        if (p && (rc = free_leaf_bigs(t, p, leaf, r.n, err))) break;
        if (page_uses(&r, leaf.pgno, r.nentries) == 1 && (rc = st_page_free(t->txn, leaf.pgno, 1, err))) break;
        /* (a leaf on the shared page stays there as unused bytes until the cluster is rewritten) */
        uint8_t *nrec = malloc(rlen);
        if (!nrec) {
            rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
            break;
        }
        memcpy(nrec, rec, REC_HEAD);
        uint32_t kept = 0;
        for (uint32_t j = 0; j < r.nentries; j++)
            if (j == 0 || st_rd32(r.entries + (size_t)j * REC_ENTRY) != col)
                memcpy(nrec + REC_HEAD + (size_t)kept++ * REC_ENTRY, r.entries + (size_t)j * REC_ENTRY,
                       REC_ENTRY);
        st_wr32(nrec + 4, kept);
        rc = st_tree_put(tree, k, 8, nrec, REC_HEAD + (size_t)kept * REC_ENTRY, err);
        free(nrec);
    }
    free(bases);
    return rc;
}

int st_clusters_drop_all(strata_table_t *t, strata_error *err) {
    uint64_t *bases;
    size_t nb;
    int rc = all_bases(t, &bases, &nb, err);
    if (rc) return rc;
    strata_tree_t *tree = t->clusters;
    for (size_t i = 0; rc == STRATA_OK && i < nb; i++) {
        uint8_t k[8];
        const uint8_t *rec;
        size_t rlen;
        st_crec r;
        if ((rc = record_at(t, bases[i], k, &rec, &rlen, &r, err))) break;
        for (uint32_t j = 1; rc == STRATA_OK && j < r.nentries; j++) {
            uint32_t col;
            st_leafref leaf = st_crec_entry(&r, j, &col);
            st_prop *p = st_prop_find(t, col);
            if (p) rc = free_leaf_bigs(t, p, leaf, r.n, err);
        }
        for (uint32_t j = 0; rc == STRATA_OK && j < r.nentries; j++) { /* each page once */
            pgno_t pg = st_crec_entry(&r, j, NULL).pgno;
            if (!page_uses(&r, pg, j)) rc = st_page_free(t->txn, pg, 1, err);
        }
        if (rc == STRATA_OK) rc = st_tree_del(tree, k, 8, err);
    }
    free(bases);
    return rc;
}
