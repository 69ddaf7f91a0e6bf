/*
 * leafdir.c — a read transaction's directory of a byte-key tree's leaves, so that a point
 * search skips the branch levels.
 *
 * A search descends from the root, reading at each branch the last cell whose key is <= the
 * key (cell 0 is minus infinity). In a tree of three or more levels the branches of a large
 * index do not fit the CPU's caches, and each level costs a chain of dependent reads. A read
 * transaction's tree never changes, so once it has descended a tree often enough (as many
 * times as the tree has about 1/64 of its entries, and at least ST_LEAFDIR_MIN_DESCENTS), it
 * lists every leaf with its lower bound in arrays and searches those instead:
 *
 *   head[i]  the lower bound's first 8 bytes, big-endian, zero past its end (0 for leaf 0)
 *   key[i], klen[i]  the lower bound itself, pointing into the mapped branch page (leaf 0: none)
 *   leaf[i]  the leaf's page number
 *
 * Leaf i's lower bound is the key of the branch cell that leads to it, or, for a cell 0, its
 * branch's own lower bound. Building reads only the branch pages (all leaves of a B+tree lie at
 * the same depth, found on the leftmost path); a page named here is read and checked like any
 * page on the way down (a damaged tree whose page there is a branch is descended from it).
 *
 * Invariants: head and key ascend strictly from i = 1 (the separators of a valid tree); the key
 * leaf_for(key) gives is the one the descent from the root reaches. The tree handle holds the
 * directory until a refresh or the transaction's end (st_leafdir_free); the database handle keeps
 * it for later read transactions whose tree has the same root (storage's readshare.c: the
 * descents that count toward building one add up over those transactions too), unless a key
 * lies outside the view (a packed branch page's).
 */
#include "btree/btree.h"

#include <stdlib.h>

#define ST_LEAFDIR_MIN_DESCENTS 256
#define DIR_BLOCK 32

/* The arrays, shared by the read transactions of one tree root (storage's readshare.c). */
typedef struct dir_data {
    st_shared hdr;
    size_t n, cap;
    uint64_t *head;
    const uint8_t **key;
    uint16_t *klen;
    pgno_t *leaf;
    uint64_t *top;     /* head[i * DIR_BLOCK] */
    bool in_view;      /* every key points into the view: it may be shared */
} dir_data;

/* A tree handle's state. */
struct st_leafdir {
    uint64_t descents; /* before it was built */
    uint64_t prior;    /* descents earlier transactions reported for the same root */
    bool built, failed, looked, keyed;
    st_share_key key;
    dir_data *d;
};

static void dir_destroy(st_shared *s) {
    dir_data *d = (dir_data *)s;
    free(d->head);
    free(d->key);
    free(d->klen);
    free(d->leaf);
    free(d->top);
    free(d);
}

void st_leafdir_free(strata_tree_t *tree) {
    st_leafdir *ld = tree->leafdir;
    if (!ld) return;
    if (!ld->built && !ld->failed && ld->keyed && ld->descents)
        st_share_count(tree->txn->db, &ld->key, ld->descents);
    if (ld->d) st_share_release(&ld->d->hdr);
    free(ld);
    tree->leafdir = NULL;
}

const void *st_leafdir_arrays(const strata_tree_t *tree) {
    return tree->leafdir && tree->leafdir->built ? tree->leafdir->d : NULL;
}

static bool add(dir_data *d, const uint8_t *lo, size_t lo_len, pgno_t leaf) {
    if (d->n == d->cap) {
        size_t cap = d->cap ? d->cap * 2 : 256;
        uint64_t *h = realloc(d->head, cap * sizeof *h);
        if (h) d->head = h;
        const uint8_t **k = realloc(d->key, cap * sizeof *k);
        if (k) d->key = k;
        uint16_t *kl = realloc(d->klen, cap * sizeof *kl);
        if (kl) d->klen = kl;
        pgno_t *l = realloc(d->leaf, cap * sizeof *l);
        if (l) d->leaf = l;
        if (!h || !k || !kl || !l) return false;
        d->cap = cap;
    }
    d->head[d->n] = lo ? st_key_head8(lo, lo_len) : 0;
    d->key[d->n] = lo;
    d->klen[d->n] = (uint16_t)lo_len;
    d->leaf[d->n] = leaf;
    d->n++;
    return true;
}

/* The children of branch pg (levels above the leaves: `above`), in order, with lower bounds. */
static int collect(strata_tree_t *tree, dir_data *d, pgno_t pg, int above, const uint8_t *lo,
                   size_t lo_len, strata_error *err) {
    const uint8_t *p;
    int rc;
    if ((rc = st_page_get(tree->txn, pg, &p, err)) ||
        (rc = st_node_check(p, pg, tree->st.kind, err)))
        return rc;
    if (pg_kind(p) != ST_PAGE_BRANCH)
        return ST_CORRUPT(err, "page %llu: a leaf where the tree's leftmost path has a branch",
                          (unsigned long long)pg);
    for (int i = 0; i < pg_nkeys(p); i++) {
        pgno_t child;
        const uint8_t *k;
        size_t kl;
        if ((rc = st_branch_cell_at(p, pg, i, &child, &k, &kl, err))) return rc;
        const uint8_t *clo = i == 0 ? lo : k;
        size_t clo_len = i == 0 ? lo_len : kl;
        d->in_view = d->in_view && (!clo || st_bytes_committed(tree->txn->db, clo));
        if (above > 1) rc = collect(tree, d, child, above - 1, clo, clo_len, err);
        else if (!add(d, clo, clo_len, child)) rc = STRATA_ERR_NO_MEMORY;
        if (rc) return rc;
    }
    return STRATA_OK;
}

/* Levels from the root down to the leaves, along the leftmost path (1: the root is a leaf). */
static int tree_depth(strata_tree_t *tree, int *depth, strata_error *err) {
    pgno_t pg = tree->st.root;
    for (*depth = 1; *depth <= ST_MAX_DEPTH; (*depth)++) {
        const uint8_t *p;
        int rc;
        if ((rc = st_page_get(tree->txn, pg, &p, err)) ||
            (rc = st_node_check(p, pg, tree->st.kind, err)))
            return rc;
        if (pg_kind(p) == ST_PAGE_LEAF) return STRATA_OK;
        const uint8_t *k;
        size_t kl;
        if ((rc = st_branch_cell_at(p, pg, 0, &pg, &k, &kl, err))) return rc;
    }
    return ST_CORRUPT(err, "tree deeper than %d levels", ST_MAX_DEPTH);
}

/* The directory of the tree into ld (kept by the handle when every key lies in the view); a
 * tree too shallow to gain, or no memory, marks it failed: searches keep descending. */
static int build(strata_tree_t *tree, st_leafdir *ld, strata_error *err) {
    int depth, rc = tree_depth(tree, &depth, err);
    if (rc) return rc;
    if (depth < 3) { /* the root alone is a branch: nothing to skip worth the memory */
        ld->failed = true;
        return STRATA_OK;
    }
    dir_data *d = calloc(1, sizeof *d);
    if (!d) {
        ld->failed = true;
        return STRATA_OK;
    }
    d->hdr = (st_shared){1, dir_destroy};
    d->in_view = true;
    rc = collect(tree, d, tree->st.root, depth - 1, NULL, 0, err);
    if (rc == STRATA_OK && !(d->top = malloc(((d->n + DIR_BLOCK - 1) / DIR_BLOCK) * sizeof *d->top)))
        rc = STRATA_ERR_NO_MEMORY;
    if (rc) {
        dir_destroy(&d->hdr);
        if (rc != STRATA_ERR_NO_MEMORY) return rc;
        ld->failed = true;
        return STRATA_OK;
    }
    for (size_t i = 0; i < d->n; i += DIR_BLOCK) d->top[i / DIR_BLOCK] = d->head[i];
    ld->d = d;
    ld->built = true;
    if (ld->keyed && d->in_view) st_share_keep(tree->txn->db, &ld->key, &d->hdr);
    return STRATA_OK;
}

/* The last leaf whose lower bound is <= key. The heads of every DIR_BLOCK-th leaf (a few KiB,
 * which stay cached) narrow the search to the blocks whose first head could equal key's; the
 * rest compares heads there (a few cache lines, asked for at once), and keys where heads tie. */
static pgno_t dir_floor(const dir_data *d, const uint8_t *key, size_t klen) {
    uint64_t want = st_key_head8(key, klen);
    size_t nb = (d->n + DIR_BLOCK - 1) / DIR_BLOCK, a = 0, b = nb;
    while (a < b) { /* a: the first block whose first head is >= want */
        size_t mid = (a + b) / 2;
        if (d->top[mid] < want) a = mid + 1;
        else b = mid;
    }
    size_t c = a;
    b = nb;
    while (c < b) { /* c: the first block whose first head is > want */
        size_t mid = (c + b) / 2;
        if (d->top[mid] <= want) c = mid + 1;
        else b = mid;
    }
    /* Block a - 1 starts below key (block 0 starts at minus infinity), so the answer is at or
     * after its start; block c starts above key, so the answer is before it. */
    size_t lo = a ? (a - 1) * DIR_BLOCK + 1 : 1, hi = c * DIR_BLOCK < d->n ? c * DIR_BLOCK : d->n;
    for (size_t i = lo; i < hi && i < lo + 2 * DIR_BLOCK; i += 8) __builtin_prefetch(d->head + i);
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int cmp = d->head[mid] < want   ? -1
                  : d->head[mid] > want ? 1
                                        : st_key_cmp(STRATA_KEY_BYTES, d->key[mid], d->klen[mid],
                                                     key, klen);
        if (cmp <= 0) lo = mid + 1;
        else hi = mid;
    }
    return d->leaf[lo - 1];
}

int st_leafdir_leaf(strata_tree_t *tree, const uint8_t *key, size_t klen, pgno_t *leaf,
                    strata_error *err) {
    *leaf = 0;
    if (tree->txn->write || tree->st.kind != STRATA_KEY_BYTES || !tree->st.root) return STRATA_OK;
    st_leafdir *ld = tree->leafdir;
    if (!ld) {
        if (!(ld = calloc(1, sizeof *ld))) return STRATA_OK;
        tree->leafdir = ld;
    }
    if (!ld->looked) { /* one kept for this root by an earlier read transaction? */
        ld->looked = true;
        ld->keyed = st_share_key_of(tree->txn, ST_SHARE_LEAVES, tree->name, tree->name_len,
                                    tree->st.root, &ld->key);
        st_shared *kept = ld->keyed ? st_share_find(tree->txn->db, &ld->key, &ld->prior) : NULL;
        if (kept) {
            ld->d = (dir_data *)kept;
            ld->built = true;
        }
    }
    if (!ld->built) {
        uint64_t descents = ++ld->descents + ld->prior;
        if (ld->failed || descents < ST_LEAFDIR_MIN_DESCENTS || descents < tree->st.count / 64)
            return STRATA_OK;
        int rc = build(tree, ld, err);
        if (rc) {
            ld->failed = true;
            return rc;
        }
        if (!ld->built) return STRATA_OK;
    }
    *leaf = dir_floor(ld->d, key, klen);
    return STRATA_OK;
}
