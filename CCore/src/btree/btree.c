/*
 * btree.c — copy-on-write B+trees (integer or byte-string keys) and cursors.
 *
 * Tree pages are slotted pages (header in page.h): a slot array grows up from the body (u16 cell
 * offsets from byte 32; in byte-key leaves, u16 offset | u32 key head from byte 48, after the
 * prefix every key of the page shares), cells grow down from the end of the page.
 *
 *   leaf cell:   u16 klen | u8 flags (1 = value in an overflow run) | u8 0 | u32 vlen |
 *                key[klen] | value[vlen]  or  u64 first page of the overflow run
 *   branch cell: u64 child | u16 klen | key[klen]
 *   overflow run: header (kind 3, u32 run length at 28), then the value from byte 32 on,
 *                 spanning run length contiguous pages.
 *
 * Invariants (checked by strata_db_verify: storage/pagecheck.c, btree/treecheck.c):
 *  - Keys in a page are strictly ascending; integer-key trees have 8-byte keys compared as
 *    uint64_t, byte-key trees compare like memcmp then by length.
 *  - Branch cell i covers keys in [key_i, key_{i+1}); cell 0 has an empty key (minus infinity).
 *    In byte-key trees a separator made by a leaf split is the shortest prefix of the right
 *    page's first key that sorts after the left page's last key, not a whole key.
 *    A branch has at least one child; every leaf is at the same depth; only the root leaf may be
 *    empty, and an empty tree has no root at all (root 0).
 *  - A write never changes a committed page: the path from the root to the changed leaf is
 *    copied first (st_page_touch); the copies belong to the transaction until it commits.
 *  - A leaf cell is at most ST_MAX_INLINE_CELL bytes and a key at most STRATA_MAX_KEY, so a
 *    split of a full page into two always succeeds.
 *  - Every offset read from a page is bounds-checked before use (ST_CORRUPT otherwise).
 */
#include "btree/btree.h"


#include <stdlib.h>

#define CAP (ST_PAGE_SIZE - PH_SIZE) /* bytes for slots and cells */
#define MAX_CELLS (CAP / 10 + 2)

typedef struct cellref {
    const uint8_t *p;
    size_t len;
} cellref;

typedef st_wlevel wlevel;

/* ------------------------------------------------------------------ checked reading */

int st_key_cmp(uint8_t kind, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    if (kind == STRATA_KEY_INT) {
        uint64_t x = st_rd64(a), y = st_rd64(b);
        return (x > y) - (x < y);
    }
    return st_bytes_cmp(a, alen, b, blen);
}

int st_node_check(const uint8_t *p, pgno_t pgno, uint8_t key_kind, strata_error *err) {
    uint8_t k = pg_kind(p);
    if (k != ST_PAGE_LEAF && k != ST_PAGE_BRANCH)
        return ST_CORRUPT(err, "page %llu: expected a tree page, found kind %u",
                          (unsigned long long)pgno, k);
    if (!pg_number_is(p, pgno))
        return ST_CORRUPT(err, "page %llu: header says it is page %llu", (unsigned long long)pgno,
                          (unsigned long long)st_rd64(p + PH_PGNO));
    uint8_t flags = p[PH_FLAGS];
    bool heads = flags == (STRATA_KEY_BYTES | ST_PF_HEADS) && k == ST_PAGE_LEAF;
    if (flags != key_kind && !(heads && key_kind == STRATA_KEY_BYTES))
        return ST_CORRUPT(err, "page %llu: key kind %u, the tree's is %u",
                          (unsigned long long)pgno, flags, key_kind);
    unsigned n = pg_nkeys(p), lower = pg_lower(p), upper = pg_upper(p);
    if (lower != pg_slots_at(flags) + pg_slot_width(flags) * n || upper < lower ||
        upper > ST_PAGE_SIZE)
        return ST_CORRUPT(err, "page %llu: bad header (%u keys, lower %u, upper %u)",
                          (unsigned long long)pgno, n, lower, upper);
    if (heads && p[LH_PLEN] > ST_PREFIX_MAX)
        return ST_CORRUPT(err, "page %llu: a key prefix of %u bytes (at most %d)",
                          (unsigned long long)pgno, p[LH_PLEN], ST_PREFIX_MAX);
    if (k == ST_PAGE_BRANCH && n == 0)
        return ST_CORRUPT(err, "page %llu: branch without children", (unsigned long long)pgno);
    return STRATA_OK;
}

int st_leaf_cell_at(const uint8_t *p, pgno_t pgno, int i, st_leaf_cell *c, strata_error *err) {
    size_t o = pg_slot(p, i);
    if (o < pg_upper(p) || o + 8 > ST_PAGE_SIZE)
        return ST_CORRUPT(err, "page %llu: cell %d at offset %zu out of bounds",
                          (unsigned long long)pgno, i, o);
    c->klen = st_rd16(p + o);
    uint8_t flags = p[o + 2];
    c->vlen = st_rd32(p + o + 4);
    if (flags > 1 || c->klen > STRATA_MAX_KEY ||
        (pg_key_kind(p) == STRATA_KEY_INT && c->klen != 8))
        return ST_CORRUPT(err, "page %llu: cell %d has a bad header (key %zu bytes, flags %u)",
                          (unsigned long long)pgno, i, c->klen, flags);
    c->big = flags & 1;
    c->size = 8 + c->klen + (c->big ? 8 : (size_t)c->vlen);
    if (o + c->size > ST_PAGE_SIZE)
        return ST_CORRUPT(err, "page %llu: cell %d (%zu bytes at %zu) runs past the page",
                          (unsigned long long)pgno, i, c->size, o);
    c->key = p + o + 8;
    c->val = c->big ? NULL : c->key + c->klen;
    c->ovf = c->big ? st_rd64(c->key + c->klen) : 0;
    return STRATA_OK;
}

int st_branch_cell_at(const uint8_t *p, pgno_t pgno, int i, pgno_t *child, const uint8_t **key,
                      size_t *klen, strata_error *err) {
    size_t o = pg_slot(p, i);
    if (o < pg_upper(p) || o + 10 > ST_PAGE_SIZE)
        return ST_CORRUPT(err, "page %llu: cell %d at offset %zu out of bounds",
                          (unsigned long long)pgno, i, o);
    *child = st_rd64(p + o);
    *klen = st_rd16(p + o + 8);
    if (*klen > STRATA_MAX_KEY || o + 10 + *klen > ST_PAGE_SIZE ||
        (pg_key_kind(p) == STRATA_KEY_INT && *klen != 8 && i > 0))
        return ST_CORRUPT(err, "page %llu: branch cell %d has a bad key length %zu",
                          (unsigned long long)pgno, i, *klen);
    *key = p + o + 10;
    return STRATA_OK;
}

int st_overflow_get(strata_txn_t *txn, pgno_t pgno, uint32_t vlen, const uint8_t **val,
                    uint32_t *run, strata_error *err) {
    const uint8_t *p;
    int rc = st_page_get(txn, pgno, &p, err);
    if (rc) return rc;
    uint32_t need = (uint32_t)(((uint64_t)PH_SIZE + vlen + ST_PAGE_SIZE - 1) / ST_PAGE_SIZE);
    uint64_t limit = txn->write ? txn->page_count : txn->meta.page_count;
    if (pg_kind(p) != ST_PAGE_OVERFLOW || st_rd32(p + PH_RUN) != need || pgno + need > limit)
        return ST_CORRUPT(err, "overflow page %llu: kind %u, run %u, expected a run of %u "
                          "pages for %u bytes", (unsigned long long)pgno, pg_kind(p),
                          st_rd32(p + PH_RUN), need, vlen);
    *val = p + PH_SIZE;
    if (run) *run = need;
    return STRATA_OK;
}

/* The key of cell i for a search probe, with the bounds checks a probe needs (slot inside the
 * cell area, key inside the page); false sends the caller to the fully checked accessor, which
 * names the problem. hdr is 8 for leaf cells, 10 for branch cells. */
static inline bool probe_key(const uint8_t *p, int i, size_t hdr, const uint8_t **k, size_t *kl) {
    size_t o = pg_slot(p, i);
    if (o < pg_upper(p) || o + hdr > ST_PAGE_SIZE) return false;
    *kl = st_rd16(p + o + (hdr == 8 ? 0 : 8));
    if (*kl > STRATA_MAX_KEY || o + hdr + *kl > ST_PAGE_SIZE) return false;
    if (pg_key_kind(p) == STRATA_KEY_INT && *kl != 8) return false;
    *k = p + o + hdr;
    return true;
}

/* The key of leaf cell i for a compare: probe_key, else the fully checked accessor. */
static inline int leaf_probe(const uint8_t *p, pgno_t pgno, int i, const uint8_t **k, size_t *kl,
                             strata_error *err) {
    if (probe_key(p, i, 8, k, kl)) return STRATA_OK;
    st_leaf_cell c;
    int rc = st_leaf_cell_at(p, pgno, i, &c, err);
    if (rc == STRATA_OK) *k = c.key, *kl = c.klen;
    return rc;
}

static inline int probe_cmp(uint8_t kind, const uint8_t *a, size_t alen, const uint8_t *b,
                            size_t blen) {
    if (kind == STRATA_KEY_INT) { /* probe_key made sure the key has 8 bytes */
        uint64_t x = st_rd64(a), y = st_rd64(b);
        return (x > y) - (x < y);
    }
    return st_key_cmp(kind, a, alen, b, blen);
}

/* A binary search's probes are a chain of cache misses (slot, then cell). Asking for the cells
 * of both possible next probes while the current one is compared overlaps them. A prefetch never
 * faults; the offset is kept inside the page anyway. */
static inline void prefetch_probe(const uint8_t *p, int lo, int hi) {
    if (lo < hi) __builtin_prefetch(p + (pg_slot(p, (lo + hi) / 2) & (ST_PAGE_SIZE - 1)));
}

static inline void prefetch_slots(const uint8_t *p) {
    for (unsigned o = 64; o < pg_lower(p) && o < ST_PAGE_SIZE; o += 64) __builtin_prefetch(p + o);
}

static inline void prefetch_cell(const uint8_t *p, int i) {
    if (i < pg_nkeys(p)) __builtin_prefetch(p + (pg_slot(p, i) & (ST_PAGE_SIZE - 1)));
}

/* A tree page on the way down, checked. Its first 8 cache lines (header, slots, heads) are
 * asked for together before the header is read, so the slot lines do not wait for it
 * (interleaved A/B, six rounds: index_eq +1.5%, lookup +1.3%, update +5.8% median). */
static int node_get(strata_txn_t *txn, pgno_t pg, uint8_t kind, const uint8_t **p,
                    strata_error *err) {
    int rc = st_page_get_ahead(txn, pg, 8, p, err);
    if (rc) return rc;
    return st_node_check(*p, pg, kind, err);
}

/* leaf_search in a heads leaf: a key outside the page's prefix lies before or after every key;
 * otherwise the binary search compares heads, which are all in the slot array (a few cache
 * lines, asked for at once), and reads a cell only when the heads are equal. The cells at the
 * answer and after it are asked for before the last compare: a seek reads the first, a scan for
 * equal keys the second. */
static int leaf_search_heads(const uint8_t *p, pgno_t pgno, const uint8_t *key, size_t klen,
                             int *idx, bool *exact, strata_error *err) {
    int n = pg_nkeys(p), lo = 0, hi = n;
    size_t plen = p[LH_PLEN];
    int c = memcmp(key, p + LH_PREFIX, klen < plen ? klen : plen);
    *exact = false;
    if (c > 0) {
        *idx = n;
        return STRATA_OK;
    }
    if (c < 0 || klen < plen) {
        *idx = 0;
        return STRATA_OK;
    }
    uint32_t want = st_key_head(key, klen, plen);
    st_leaf_cell cell;
    const uint8_t *k;
    size_t kl;
    int rc;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        uint32_t h = pg_head(p, mid);
        if (h == want) {
            if ((rc = leaf_probe(p, pgno, mid, &k, &kl, err))) return rc;
            c = st_key_cmp(STRATA_KEY_BYTES, k, kl, key, klen);
        } else {
            c = h < want ? -1 : 1;
        }
        if (c < 0) lo = mid + 1; else hi = mid;
    }
    *idx = lo;
    prefetch_cell(p, lo);
    prefetch_cell(p, lo + 1);
    if (lo < n && pg_head(p, lo) == want) {
        if ((rc = st_leaf_cell_at(p, pgno, lo, &cell, err))) return rc;
        *exact = st_key_cmp(STRATA_KEY_BYTES, cell.key, cell.klen, key, klen) == 0;
    }
    return STRATA_OK;
}

/* First index whose key is >= key; *exact when equal. */
static int leaf_search(const uint8_t *p, pgno_t pgno, uint8_t kind, const uint8_t *key,
                       size_t klen, int *idx, bool *exact, strata_error *err) {
    prefetch_slots(p);
    if (pg_heads(p)) return leaf_search_heads(p, pgno, key, klen, idx, exact, err);
    int lo = 0, hi = pg_nkeys(p);
    st_leaf_cell c;
    const uint8_t *k;
    size_t kl;
    int rc;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        prefetch_probe(p, lo, mid);
        prefetch_probe(p, mid + 1, hi);
        if ((rc = leaf_probe(p, pgno, mid, &k, &kl, err))) return rc;
        if (probe_cmp(kind, k, kl, key, klen) < 0) lo = mid + 1; else hi = mid;
    }
    *idx = lo;
    *exact = false;
    if (lo < pg_nkeys(p)) {
        if ((rc = st_leaf_cell_at(p, pgno, lo, &c, err))) return rc;
        *exact = st_key_cmp(kind, c.key, c.klen, key, klen) == 0;
    }
    return STRATA_OK;
}

/* The child covering key: the last cell whose key is <= key (cell 0 is minus infinity). */
static int branch_search(const uint8_t *p, pgno_t pgno, uint8_t kind, const uint8_t *key,
                         size_t klen, int *idx, pgno_t *child, strata_error *err) {
    int lo = 1, hi = pg_nkeys(p);
    pgno_t ch;
    const uint8_t *k;
    size_t kl;
    int rc;
    prefetch_slots(p);
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        prefetch_probe(p, lo, mid);
        prefetch_probe(p, mid + 1, hi);
        if (!probe_key(p, mid, 10, &k, &kl) &&
            (rc = st_branch_cell_at(p, pgno, mid, &ch, &k, &kl, err)))
            return rc;
        if (probe_cmp(kind, k, kl, key, klen) <= 0) lo = mid + 1; else hi = mid;
    }
    *idx = lo - 1;
    const uint8_t *unused;
    return st_branch_cell_at(p, pgno, *idx, child, &unused, &kl, err);
}

/* Down from page pg (the root, or a leaf the leaf directory named) to the leaf where key
 * belongs: *idx is its first entry >= key (*exact: equal to it). */
static int descend(strata_txn_t *txn, const st_tree_state *t, pgno_t pg, const uint8_t *key,
                   size_t klen, const uint8_t **leaf, pgno_t *leaf_pg, int *idx, bool *exact,
                   strata_error *err) {
    for (int depth = 0; pg; depth++) {
        if (depth >= ST_MAX_DEPTH)
            return ST_CORRUPT(err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                              (unsigned long long)pg);
        const uint8_t *p;
        int rc;
        if ((rc = node_get(txn, pg, t->kind, &p, err))) return rc;
        if (pg_kind(p) == ST_PAGE_BRANCH) {
            if ((rc = branch_search(p, pg, t->kind, key, klen, idx, &pg, err))) return rc;
            continue;
        }
        *leaf = p;
        *leaf_pg = pg;
        return leaf_search(p, pg, t->kind, key, klen, idx, exact, err);
    }
    return STRATA_ERR_NOT_FOUND;
}

int st_bt_get(strata_txn_t *txn, const st_tree_state *t, const uint8_t *key, size_t klen,
              const uint8_t **val, size_t *vlen, strata_error *err) {
    const uint8_t *p;
    pgno_t pg;
    int idx;
    bool exact;
    int rc = descend(txn, t, t->root, key, klen, &p, &pg, &idx, &exact, err);
    if (rc) return rc;
    if (!exact) return STRATA_ERR_NOT_FOUND;
    st_leaf_cell c;
    if ((rc = st_leaf_cell_at(p, pg, idx, &c, err))) return rc;
    *vlen = c.vlen;
    if (!c.big) {
        *val = c.val;
        return STRATA_OK;
    }
    return st_overflow_get(txn, c.ovf, c.vlen, val, NULL, err);
}

int st_bt_leaf_for(strata_tree_t *tree, const uint8_t *key, size_t klen, const uint8_t **leaf,
                   pgno_t *pgno, int *idx, int *count, strata_error *err) {
    bool exact;
    pgno_t start;
    int rc = st_leafdir_leaf(tree, key, klen, &start, err);
    if (rc || (rc = descend(tree->txn, &tree->st, start ? start : tree->st.root, key, klen, leaf,
                            pgno, idx, &exact, err)))
        return rc;
    *count = pg_nkeys(*leaf);
    return STRATA_OK;
}

/* ------------------------------------------------------------------ page editing */

/* Every cell of tree page p (its header checked by st_node_check) lies inside the cell area and
 * has a size a cell can have, and all of them fit one page: what editing the page (insert,
 * compact, split, merge) relies on. Checked when a transaction copies a committed page for
 * writing, and on a sibling before a merge measures it. */
static int node_cells_check(const uint8_t *p, pgno_t pgno, strata_error *err) {
    unsigned n = pg_nkeys(p), upper = pg_upper(p), width = pg_slot_width(p[PH_FLAGS]);
    bool branch = pg_kind(p) == ST_PAGE_BRANCH;
    size_t hdr = branch ? 10 : 8, used = 0;
    for (unsigned i = 0; i < n; i++) {
        size_t o = pg_slot(p, (int)i);
        ST_FIELD_CHECK(o >= upper && o + hdr <= ST_PAGE_SIZE, err,
                       "page %llu: cell %u at offset %zu, outside the cell area [%u, %u)",
                       (unsigned long long)pgno, i, o, upper, ST_PAGE_SIZE);
        size_t klen = st_rd16(p + o + (branch ? 8 : 0));
        size_t len = branch ? 10 + klen : 8 + klen + (p[o + 2] & 1 ? 8 : (size_t)st_rd32(p + o + 4));
        ST_FIELD_CHECK(klen <= STRATA_MAX_KEY && len <= ST_PAGE_SIZE - o &&
                       (branch || (p[o + 2] <= 1 && len <= ST_MAX_INLINE_CELL)), err,
                       "page %llu: cell %u of %zu bytes (key %zu) at offset %zu does not fit",
                       (unsigned long long)pgno, i, len, klen, o);
        used += len + width;
    }
    ST_FIELD_CHECK(used <= ST_PAGE_SIZE - pg_slots_at(p[PH_FLAGS]), err,
                   "page %llu: its %u cells take %zu bytes, more than a page holds",
                   (unsigned long long)pgno, n, used);
    return STRATA_OK;
}

static size_t cell_size(const uint8_t *p, int i) {
    size_t o = pg_slot(p, i);
    if (pg_kind(p) == ST_PAGE_BRANCH) return 10 + st_rd16(p + o + 8);
    return 8 + st_rd16(p + o) + ((p[o + 2] & 1) ? 8 : st_rd32(p + o + 4));
}

/* Bytes the cells of p take with their slots, in a page whose slots are width bytes wide. */
static size_t node_used(const uint8_t *p, unsigned width) {
    size_t used = 0;
    for (int i = 0; i < pg_nkeys(p); i++) used += cell_size(p, i) + width;
    return used;
}

/* node_used(p) >= limit, counting only as far as needed (deletes ask it on every call). */
static bool node_used_at_least(const uint8_t *p, size_t limit) {
    size_t used = 0;
    unsigned width = pg_slot_width(p[PH_FLAGS]);
    for (int i = 0; i < pg_nkeys(p) && used < limit; i++) used += cell_size(p, i) + width;
    return used >= limit;
}

/* The flags of a page written now: byte-key leaves carry heads. */
static uint8_t fresh_flags(uint8_t kind, uint8_t key_kind) {
    return kind == ST_PAGE_LEAF && key_kind == STRATA_KEY_BYTES ? key_kind | ST_PF_HEADS : key_kind;
}

static void node_init(uint8_t *p, uint8_t kind, uint8_t flags) {
    p[PH_KIND] = kind;
    p[PH_FLAGS] = flags;
    st_wr16(p + PH_NKEYS, 0);
    st_wr16(p + PH_LOWER, (uint16_t)pg_slots_at(flags));
    st_wr16(p + PH_UPPER, ST_PAGE_SIZE);
    memset(p + PH_SIZE, 0, ST_PAGE_SIZE - PH_SIZE);
}

/* The head of cell i's key after plen bytes, reading nothing outside the page (a damaged cell
 * gets a wrong head, which verify names, rather than a read past the page). */
static uint32_t cell_head(const uint8_t *p, int i, size_t plen) {
    size_t o = pg_slot(p, i);
    if (o + 8 > ST_PAGE_SIZE) return 0;
    size_t klen = st_rd16(p + o);
    if (klen > ST_PAGE_SIZE - o - 8) klen = ST_PAGE_SIZE - o - 8;
    return st_key_head(p + o + 8, klen, plen);
}

/* A heads leaf's prefix becomes its first plen bytes; every head is written again. */
static void heads_shrink_prefix(uint8_t *p, size_t plen) {
    p[LH_PLEN] = (uint8_t)plen;
    memset(p + LH_PREFIX + plen, 0, ST_PREFIX_MAX - plen);
    for (int i = 0; i < pg_nkeys(p); i++)
        st_wr32(p + LH_SLOTS + 6u * (unsigned)i + 2, cell_head(p, i, plen));
}

static size_t common_prefix(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    size_t i = 0;
    while (i < alen && i < blen && a[i] == b[i]) i++;
    return i;
}

static bool node_insert(uint8_t *p, int idx, const uint8_t *cell, size_t len) {
    unsigned n = pg_nkeys(p), lower = pg_lower(p), upper = pg_upper(p);
    uint8_t flags = p[PH_FLAGS];
    unsigned w = pg_slot_width(flags);
    if (upper - lower < len + w) return false;
    upper -= (unsigned)len;
    memcpy(p + upper, cell, len);
    uint8_t *slots = p + pg_slots_at(flags);
    memmove(slots + w * (unsigned)(idx + 1), slots + w * (unsigned)idx, w * (n - (unsigned)idx));
    st_wr16(slots + w * (unsigned)idx, (uint16_t)upper);
    st_wr16(p + PH_NKEYS, (uint16_t)(n + 1));
    st_wr16(p + PH_LOWER, (uint16_t)(lower + w));
    st_wr16(p + PH_UPPER, (uint16_t)upper);
    if (flags & ST_PF_HEADS) { /* a key outside the prefix shortens it */
        const uint8_t *key = cell + 8;
        size_t klen = st_rd16(cell), plen = p[LH_PLEN];
        size_t common = common_prefix(key, klen, p + LH_PREFIX, plen);
        if (common < plen) heads_shrink_prefix(p, plen = common);
        st_wr32(slots + 6u * (unsigned)idx + 2, st_key_head(key, klen, plen));
    }
    return true;
}

static void node_remove(uint8_t *p, int idx) {
    unsigned n = pg_nkeys(p), w = pg_slot_width(p[PH_FLAGS]);
    uint8_t *slots = p + pg_slots_at(p[PH_FLAGS]);
    memmove(slots + w * (unsigned)idx, slots + w * (unsigned)(idx + 1),
            w * (n - 1 - (unsigned)idx));
    st_wr16(p + PH_NKEYS, (uint16_t)(n - 1));
    st_wr16(p + PH_LOWER, (uint16_t)(pg_lower(p) - w));
}

/* Rebuild p from cells in key order that do not point into p; false if they do not fit (the
 * callers size them first). A heads leaf's prefix is what its first and last keys share. */
static bool node_build(uint8_t *p, uint8_t kind, uint8_t flags, const cellref *cells, int n) {
    node_init(p, kind, flags);
    if ((flags & ST_PF_HEADS) && n > 0) {
        const uint8_t *a = cells[0].p, *b = cells[n - 1].p;
        size_t plen = common_prefix(a + 8, st_rd16(a), b + 8, st_rd16(b));
        if (plen > ST_PREFIX_MAX) plen = ST_PREFIX_MAX;
        p[LH_PLEN] = (uint8_t)plen;
        memcpy(p + LH_PREFIX, a + 8, plen);
    }
    for (int i = 0; i < n; i++)
        if (!node_insert(p, i, cells[i].p, cells[i].len)) return false;
    return true;
}

/* Scratch for splits and merges, on the heap to keep stacks small. */
typedef struct scratch {
    uint8_t a[ST_PAGE_SIZE], b[ST_PAGE_SIZE];
    cellref cells[2 * MAX_CELLS];
    uint8_t first[10 + STRATA_MAX_KEY]; /* a rewritten first branch cell */
    uint8_t sep[10 + STRATA_MAX_KEY];   /* the separator cell sent to the parent */
    bool leave_room;                    /* appends leave room in leaves (st_bt_finger) */
} scratch;

static int collect(const uint8_t *copy, cellref *out) {
    int n = pg_nkeys(copy);
    for (int i = 0; i < n; i++) out[i] = (cellref){copy + pg_slot(copy, i), cell_size(copy, i)};
    return n;
}

/* The same cells without the holes removals left (in the page's own layout, so they fit). */
static void node_compact(uint8_t *p, scratch *s) {
    memcpy(s->a, p, ST_PAGE_SIZE);
    int n = collect(s->a, s->cells);
    node_build(p, pg_kind(s->a), s->a[PH_FLAGS], s->cells, n);
}

/* Make branch cell 0 keyless again (after the old cell 0 was removed). */
static void branch_clear_first_key(uint8_t *p, scratch *s) {
    size_t o = pg_slot(p, 0);
    if (st_rd16(p + o + 8) == 0) return;
    uint8_t cell[10];
    memcpy(cell, p + o, 8);
    st_wr16(cell + 8, 0);
    node_remove(p, 0);
    if (!node_insert(p, 0, cell, 10)) {
        node_compact(p, s);
        node_insert(p, 0, cell, 10);
    }
}

/* ------------------------------------------------------------------ writing */

/* Copy the path from the root to the leaf for key (copy-on-write), fixing child pointers. */
/* The path to key without copying anything: page and index per level (page stays NULL). */
static int find_path(strata_txn_t *txn, const st_tree_state *t, const uint8_t *key, size_t klen,
                     wlevel *path, int *depth, bool *exact, strata_error *err) {
    pgno_t pg = t->root;
    for (int d = 0;; d++) {
        if (d >= ST_MAX_DEPTH)
            return ST_CORRUPT(err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                              (unsigned long long)pg);
        const uint8_t *p;
        int rc;
        if ((rc = node_get(txn, pg, t->kind, &p, err))) return rc;
        path[d] = (wlevel){pg, NULL, 0};
        if (pg_kind(p) == ST_PAGE_LEAF) {
            *depth = d + 1;
            return leaf_search(p, pg, t->kind, key, klen, &path[d].idx, exact, err);
        }
        if ((rc = branch_search(p, pg, t->kind, key, klen, &path[d].idx, &pg, err))) return rc;
    }
}

/* Make every page of a path found by find_path writable, top down, pointing each copied parent
 * at its child's copy (the indexes stay valid: a copy has its original's layout). */
static int touch_found_path(strata_txn_t *txn, st_tree_state *t, wlevel *path, int depth,
                            strata_error *err) {
    for (int d = 0; d < depth; d++) {
        pgno_t old = path[d].pgno;
        int rc = st_page_touch(txn, old, &path[d].page, &path[d].pgno, err);
        if (rc || (path[d].pgno != old && (rc = node_cells_check(path[d].page, old, err))))
            return rc;
        if (d == 0) t->root = path[0].pgno;
        else if (path[d].pgno != old)
            st_wr64(path[d - 1].page + pg_slot(path[d - 1].page, path[d - 1].idx), path[d].pgno);
    }
    return STRATA_OK;
}

/* The path to key, made writable: find_path, then touch_found_path. */
static int touch_path(strata_txn_t *txn, st_tree_state *t, const uint8_t *key, size_t klen,
                      wlevel *path, int *depth, bool *exact, strata_error *err) {
    int rc = find_path(txn, t, key, klen, path, depth, exact, err);
    return rc ? rc : touch_found_path(txn, t, path, *depth, err);
}

/* Length of the shortest prefix of right that sorts after left (left < right, byte keys): one
 * byte past their common prefix. Branches of byte-key trees hold such prefixes instead of whole
 * keys (suffix truncation): index keys end in an 8-byte object key and names share little, so
 * separators of a few bytes let a branch hold several times more children (a 1M-entry name
 * index: ~60 → ~250, 4 levels → 3). */
static size_t separator_len(const uint8_t *left, size_t llen, const uint8_t *right, size_t rlen) {
    size_t i = 0;
    while (i < llen && i < rlen && left[i] == right[i]) i++;
    return i < rlen ? i + 1 : rlen;
}

/* Insert cell at (level d, idx), splitting up the path as needed. */
static int insert_at(strata_txn_t *txn, st_tree_state *t, wlevel *path, int d, int idx,
                     const uint8_t *cell, size_t len, scratch *s, bool *split, strata_error *err) {
    uint8_t *p = path[d].page;
    if (node_insert(p, idx, cell, len)) return STRATA_OK;
    node_compact(p, s);
    if (node_insert(p, idx, cell, len)) return STRATA_OK;
    *split = true;

    /* Split: cells of p plus the new one, divided by bytes, into two pages of the current
     * layout (p may be a leaf of an older file, whose slots were narrower). */
    memcpy(s->a, p, ST_PAGE_SIZE);
    int n = collect(s->a, s->cells);
    memmove(s->cells + idx + 1, s->cells + idx, (size_t)(n - idx) * sizeof(cellref));
    s->cells[idx] = (cellref){cell, len};
    n++;
    uint8_t kind = pg_kind(s->a), kk = pg_key_kind(s->a), flags = fresh_flags(kind, kk);
    bool leaf = kind == ST_PAGE_LEAF;
    size_t width = pg_slot_width(flags), cap = ST_PAGE_SIZE - pg_slots_at(flags);
    size_t total = 0, acc = 0, last = s->cells[n - 1].len + width;
    for (int i = 0; i < n; i++) total += s->cells[i].len + width;
    int cut = 1;
    /* Appending at the right edge of the tree (ascending keys: object keys, sequential primary
     * keys) leaves the full page as it is and starts a new one, so such trees fill their pages
     * instead of leaving every page half empty (SQLite's "quick balance"); with the finger's
     * leave_room, a leaf keeps all but a 32nd of its room, for the inserts that come later. */
    bool append = idx == n - 1 && total - last <= cap;
    for (int l = 0; append && l < d; l++) append = path[l].idx == pg_nkeys(path[l].page) - 1;
    if (append && leaf && s->leave_room) {
        for (cut = 0; cut < n - 1 && acc + s->cells[cut].len + width <= cap - cap / ST_BT_ROOM;)
            acc += s->cells[cut++].len + width;
        if (cut == 0) cut = 1;
    } else if (append) {
        cut = n - 1;
    } else { /* the most even cut; both halves fit, as no cell is near half a page */
        size_t best = SIZE_MAX;
        for (int i = 1; i < n; i++) {
            acc += s->cells[i - 1].len + width;
            size_t larger = acc > total - acc ? acc : total - acc;
            if (larger < best) best = larger, cut = i;
        }
    }

    /* Separator: the first key of the right half. */
    const uint8_t *sk;
    size_t sklen;
    pgno_t right_child = 0;
    if (leaf) {
        sklen = st_rd16(s->cells[cut].p);
        sk = s->cells[cut].p + 8;
        if (kk == STRATA_KEY_BYTES) /* the shortest separator will do */
            sklen = separator_len(s->cells[cut - 1].p + 8, st_rd16(s->cells[cut - 1].p), sk, sklen);
    } else {
        right_child = st_rd64(s->cells[cut].p);
        sklen = st_rd16(s->cells[cut].p + 8);
        sk = s->cells[cut].p + 10;
    }
    uint8_t *sep = s->sep;
    memcpy(sep + 10, sk, sklen);
    st_wr16(sep + 8, (uint16_t)sklen);
    if (!leaf) { /* the right half's first cell loses its key */
        st_wr64(s->first, right_child);
        st_wr16(s->first + 8, 0);
        s->cells[cut] = (cellref){s->first, 10};
    }
    uint8_t *rp;
    pgno_t rpg;
    int rc = st_page_alloc(txn, 1, &rp, &rpg, err);
    if (rc) return rc;
    if (!node_build(p, kind, flags, s->cells, cut) ||
        !node_build(rp, kind, flags, s->cells + cut, n - cut))
        return ST_CORRUPT(err, "page %llu: its cells do not fit in two pages",
                          (unsigned long long)path[d].pgno);
    st_wr64(sep, rpg);

    if (d == 0) { /* new root */
        uint8_t *root;
        pgno_t rootpg;
        if ((rc = st_page_alloc(txn, 1, &root, &rootpg, err))) return rc;
        node_init(root, ST_PAGE_BRANCH, kk);
        uint8_t c0[10];
        st_wr64(c0, path[0].pgno);
        st_wr16(c0 + 8, 0);
        node_insert(root, 0, c0, 10);
        node_insert(root, 1, sep, 10 + sklen);
        t->root = rootpg;
        return STRATA_OK;
    }
    /* The parent's insert may split again: hand it a copy of sep (s is reused). */
    uint8_t up[10 + STRATA_MAX_KEY];
    memcpy(up, sep, 10 + sklen);
    return insert_at(txn, t, path, d - 1, path[d - 1].idx + 1, up, 10 + sklen, s, split, err);
}

static int free_value(strata_txn_t *txn, const uint8_t *leaf, pgno_t pgno, int idx,
                      strata_error *err) {
    st_leaf_cell c;
    int rc = st_leaf_cell_at(leaf, pgno, idx, &c, err);
    if (rc || !c.big) return rc;
    const uint8_t *v;
    uint32_t run;
    if ((rc = st_overflow_get(txn, c.ovf, c.vlen, &v, &run, err))) return rc;
    return st_page_free(txn, c.ovf, run, err);
}

/* The finger's leaf holds key's place when key lies within the leaf's first and last keys (a
 * key past either end may belong to a neighbour), or past its last key when it is the tree's
 * last leaf (appending): then *held, and the kept (writable) path leads to it. Either way the
 * finger is forgotten until the change succeeds without reshaping the tree (finger_keep). */
static int finger_find(const st_tree_state *t, st_bt_finger *f, const uint8_t *key, size_t klen,
                       int *depth, bool *exact, bool *held, strata_error *err) {
    *held = false;
    if (!f) return STRATA_OK;
    pgno_t root = f->root;
    f->root = 0;
    if (!root || root != t->root) return STRATA_OK;
    /* the kept path is the transaction's writable copies, root to leaf (finger_keep) */
    ST_ASSERT(f->depth > 0 && f->depth <= ST_MAX_DEPTH);
    wlevel *leaf = &f->path[f->depth - 1];
    ST_ASSERT(pg_kind(leaf->page) == ST_PAGE_LEAF);
    int n = pg_nkeys(leaf->page), idx;
    int rc = leaf_search(leaf->page, leaf->pgno, t->kind, key, klen, &idx, exact, err);
    if (rc) return rc;
    /* Past the leaf's last key: the place only when the leaf is the tree's last (every level
     * of the path at its last child), as when a tree is written in key order. */
    bool last = idx == n && n > 0;
    for (int l = 0; last && l < f->depth - 1; l++)
        last = f->path[l].idx == pg_nkeys(f->path[l].page) - 1;
    if (!((idx > 0 && idx < n) || (idx == 0 && *exact && n > 0) || last)) return STRATA_OK;
    leaf->idx = idx;
    *depth = f->depth;
    *held = true;
    return STRATA_OK;
}

static void finger_keep(const st_tree_state *t, st_bt_finger *f, int depth) {
    if (!f || !t->root) return;
    f->root = t->root;
    f->depth = depth;
}

int st_bt_put(strata_txn_t *txn, st_tree_state *t, const uint8_t *key, size_t klen,
              const uint8_t *val, size_t vlen, strata_error *err) {
    return st_bt_put_near(txn, t, NULL, key, klen, val, vlen, err);
}

int st_bt_delete(strata_txn_t *txn, st_tree_state *t, const uint8_t *key, size_t klen,
                 strata_error *err) {
    return st_bt_delete_near(txn, t, NULL, key, klen, err);
}

int st_bt_put_near(strata_txn_t *txn, st_tree_state *t, st_bt_finger *f, const uint8_t *key,
                   size_t klen, const uint8_t *val, size_t vlen, strata_error *err) {
    uint8_t cell[ST_MAX_INLINE_CELL];
    bool big = 8 + klen + vlen > ST_MAX_INLINE_CELL;
    st_wr16(cell, (uint16_t)klen);
    cell[2] = big;
    cell[3] = 0;
    st_wr32(cell + 4, (uint32_t)vlen);
    memcpy(cell + 8, key, klen);
    size_t clen;
    int rc;
    if (big) {
        uint32_t npages = (uint32_t)((PH_SIZE + vlen + ST_PAGE_SIZE - 1) / ST_PAGE_SIZE);
        uint8_t *run;
        pgno_t ovf;
        if ((rc = st_page_alloc(txn, npages, &run, &ovf, err))) return rc;
        run[PH_KIND] = ST_PAGE_OVERFLOW;
        st_wr32(run + PH_RUN, npages);
        memcpy(run + PH_SIZE, val, vlen);
        st_wr64(cell + 8 + klen, ovf);
        clen = 8 + klen + 8;
    } else {
        if (vlen) memcpy(cell + 8 + klen, val, vlen);
        clen = 8 + klen + vlen;
    }
    if (t->root == 0) {
        uint8_t *p;
        pgno_t pg;
        if (f) f->root = 0;
        if ((rc = st_page_alloc(txn, 1, &p, &pg, err))) return rc;
        node_init(p, ST_PAGE_LEAF, fresh_flags(ST_PAGE_LEAF, t->kind));
        node_insert(p, 0, cell, clen);
        t->root = pg;
        t->count = 1;
        return STRATA_OK;
    }
    wlevel local[ST_MAX_DEPTH], *path = f ? f->path : local;
    int depth = 0;
    bool exact, held;
    if ((rc = finger_find(t, f, key, klen, &depth, &exact, &held, err)) ||
        (!held && (rc = touch_path(txn, t, key, klen, path, &depth, &exact, err))))
        return st_txn_fail(txn, rc);
    wlevel *leaf = &path[depth - 1];
    if (exact) {
        if ((rc = free_value(txn, leaf->page, leaf->pgno, leaf->idx, err)))
            return st_txn_fail(txn, rc);
        node_remove(leaf->page, leaf->idx);
    } else {
        t->count++;
    }
    if (node_insert(leaf->page, leaf->idx, cell, clen)) { /* the common case: it fits */
        finger_keep(t, f, depth);
        return STRATA_OK;
    }
    scratch *s = malloc(sizeof *s);
    if (!s) return st_txn_fail(txn, st_err(err, STRATA_ERR_NO_MEMORY, "out of memory"));
    s->leave_room = f && f->leave_room;
    bool split = false;
    rc = insert_at(txn, t, path, depth - 1, leaf->idx, cell, clen, s, &split, err);
    free(s);
    if (rc) return st_txn_fail(txn, rc);
    if (!split) finger_keep(t, f, depth);
    return STRATA_OK;
}

/* After a removal at level d: drop empty nodes, merge small ones, shrink the root. */
static int rebalance(strata_txn_t *txn, st_tree_state *t, wlevel *path, int d, scratch *s,
                     strata_error *err) {
    int rc;
    for (;; d--) {
        uint8_t *p = path[d].page;
        int n = pg_nkeys(p);
        if (d == 0) {
            if (n == 0) {
                t->root = 0;
                return st_page_free(txn, path[0].pgno, 1, err);
            }
            /* A root branch with one child gives way to the child. */
            const uint8_t *rp = p;
            pgno_t rpg = path[0].pgno;
            while (pg_kind(rp) == ST_PAGE_BRANCH && pg_nkeys(rp) == 1) {
                pgno_t child;
                const uint8_t *k;
                size_t kl;
                if ((rc = st_branch_cell_at(rp, rpg, 0, &child, &k, &kl, err))) return rc;
                if ((rc = st_page_free(txn, rpg, 1, err))) return rc;
                t->root = rpg = child;
                if ((rc = st_page_get(txn, child, &rp, err)) ||
                    (rc = st_node_check(rp, child, t->kind, err)))
                    return rc;
            }
            return STRATA_OK;
        }
        if (n > 0 && node_used_at_least(p, CAP / 4)) return STRATA_OK;
        wlevel *par = &path[d - 1];
        int pn = pg_nkeys(par->page), pi = par->idx;
        if (n == 0) {
            if ((rc = st_page_free(txn, path[d].pgno, 1, err))) return rc;
            node_remove(par->page, pi);
            if (pi == 0 && pg_nkeys(par->page) > 0) branch_clear_first_key(par->page, s);
            continue;
        }
        if (pn < 2) return STRATA_OK;
        int si = pi > 0 ? pi - 1 : pi + 1;
        pgno_t sib;
        const uint8_t *k;
        size_t kl;
        if ((rc = st_branch_cell_at(par->page, par->pgno, si, &sib, &k, &kl, err))) return rc;
        const uint8_t *sp_ro;
        if ((rc = st_page_get(txn, sib, &sp_ro, err)) ||
            (rc = st_node_check(sp_ro, sib, t->kind, err)) ||
            (rc = node_cells_check(sp_ro, sib, err)))
            return rc;
        if (pg_kind(sp_ro) != pg_kind(p))
            return ST_CORRUPT(err, "page %llu and its sibling %llu differ in kind",
                              (unsigned long long)path[d].pgno, (unsigned long long)sib);
        int ri = (si < pi) ? pi : si; /* parent index of the right node */
        const uint8_t *rk;
        size_t rkl;
        pgno_t unused;
        if ((rc = st_branch_cell_at(par->page, par->pgno, ri, &unused, &rk, &rkl, err))) return rc;
        bool branch = pg_kind(p) == ST_PAGE_BRANCH;
        uint8_t flags = fresh_flags(pg_kind(p), t->kind);
        unsigned width = pg_slot_width(flags);
        size_t need = node_used(p, width) + node_used(sp_ro, width) + (branch ? rkl : 0);
        if (need > ST_PAGE_SIZE - pg_slots_at(flags))
            return STRATA_OK; /* cannot merge; the node stays small */
        uint8_t *sp;
        pgno_t snp;
        if ((rc = st_page_touch(txn, sib, &sp, &snp, err))) return rc;
        if (snp != sib) st_wr64(par->page + pg_slot(par->page, si), snp);
        uint8_t *L = (si < pi) ? sp : p, *R = (si < pi) ? p : sp;
        pgno_t rpg = (si < pi) ? path[d].pgno : snp;
        memcpy(s->a, L, ST_PAGE_SIZE);
        memcpy(s->b, R, ST_PAGE_SIZE);
        int nl = collect(s->a, s->cells);
        int nr = collect(s->b, s->cells + nl);
        if (branch) { /* R's keyless first cell takes the separator from the parent */
            memcpy(s->first, s->cells[nl].p, 8);
            st_wr16(s->first + 8, (uint16_t)rkl);
            memcpy(s->first + 10, rk, rkl);
            s->cells[nl] = (cellref){s->first, 10 + rkl};
        }
        if (!node_build(L, s->a[PH_KIND], flags, s->cells, nl + nr))
            return ST_CORRUPT(err, "page %llu: merged cells do not fit",
                              (unsigned long long)path[d].pgno);
        node_remove(par->page, ri);
        if ((rc = st_page_free(txn, rpg, 1, err))) return rc;
    }
}

int st_bt_delete_near(strata_txn_t *txn, st_tree_state *t, st_bt_finger *f, const uint8_t *key,
                      size_t klen, strata_error *err) {
    if (!t->root) return STRATA_ERR_NOT_FOUND;
    wlevel local[ST_MAX_DEPTH], *path = f ? f->path : local;
    int depth = 0;
    bool exact = false, held;
    int rc = finger_find(t, f, key, klen, &depth, &exact, &held, err);
    if (rc == STRATA_OK && !held) rc = find_path(txn, t, key, klen, path, &depth, &exact, err);
    if (rc) return rc;
    if (!exact) {
        if (held) finger_keep(t, f, depth);
        return STRATA_ERR_NOT_FOUND;
    }
    if (!held && (rc = touch_found_path(txn, t, path, depth, err))) return st_txn_fail(txn, rc);
    wlevel *leaf = &path[depth - 1];
    if ((rc = free_value(txn, leaf->page, leaf->pgno, leaf->idx, err)))
        return st_txn_fail(txn, rc);
    node_remove(leaf->page, leaf->idx);
    t->count--;
    /* rebalance's first test: a leaf that stays at least a quarter full changes nothing above */
    if (pg_nkeys(leaf->page) > 0 && (depth == 1 || node_used_at_least(leaf->page, CAP / 4))) {
        finger_keep(t, f, depth);
        return STRATA_OK;
    }
    scratch *s = malloc(sizeof *s);
    if (!s) return st_txn_fail(txn, st_err(err, STRATA_ERR_NO_MEMORY, "out of memory"));
    s->leave_room = false;
    rc = rebalance(txn, t, path, depth - 1, s, err);
    free(s);
    return rc ? st_txn_fail(txn, rc) : STRATA_OK;
}

static int drop_pages(strata_txn_t *txn, uint8_t kind, pgno_t pg, int depth, strata_error *err) {
    if (depth >= ST_MAX_DEPTH)
        return ST_CORRUPT(err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                          (unsigned long long)pg);
    const uint8_t *p;
    int rc;
    if ((rc = st_page_get(txn, pg, &p, err)) || (rc = st_node_check(p, pg, kind, err))) return rc;
    for (int i = 0; i < pg_nkeys(p); i++) {
        if (pg_kind(p) == ST_PAGE_BRANCH) {
            pgno_t child;
            const uint8_t *k;
            size_t kl;
            if ((rc = st_branch_cell_at(p, pg, i, &child, &k, &kl, err)) ||
                (rc = drop_pages(txn, kind, child, depth + 1, err)))
                return rc;
        } else if ((rc = free_value(txn, p, pg, i, err))) {
            return rc;
        }
    }
    return st_page_free(txn, pg, 1, err);
}

/* The branch pages below pg (level `level` of `height`), and pg itself when it is a branch. */
static int drop_branch_pages(strata_txn_t *txn, uint8_t kind, pgno_t pg, int level, int height,
                             strata_error *err) {
    if (level >= height - 1) return STRATA_OK; /* a leaf: the caller's */
    const uint8_t *p;
    int rc;
    if ((rc = st_page_get(txn, pg, &p, err)) || (rc = st_node_check(p, pg, kind, err))) return rc;
    if (pg_kind(p) != ST_PAGE_BRANCH)
        return ST_CORRUPT(err, "page %llu: a leaf where the tree has branches", (unsigned long long)pg);
    for (int i = 0; i < pg_nkeys(p); i++) {
        pgno_t child;
        const uint8_t *k;
        size_t kl;
        if ((rc = st_branch_cell_at(p, pg, i, &child, &k, &kl, err)) ||
            (rc = drop_branch_pages(txn, kind, child, level + 1, height, err)))
            return rc;
    }
    return st_page_free(txn, pg, 1, err);
}

int st_bt_drop_branches(strata_txn_t *txn, st_tree_state *t, int height, strata_error *err) {
    int rc = t->root ? drop_branch_pages(txn, t->kind, t->root, 0, height, err) : STRATA_OK;
    if (rc) return st_txn_fail(txn, rc);
    t->root = 0;
    t->count = 0;
    return STRATA_OK;
}

int st_bt_drop(strata_txn_t *txn, st_tree_state *t, strata_error *err) {
    int rc = t->root ? drop_pages(txn, t->kind, t->root, 0, err) : STRATA_OK;
    if (rc) return st_txn_fail(txn, rc);
    t->root = 0;
    t->count = 0;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ cursors */

static int cur_page(st_iter *c, int d, pgno_t pg, strata_error *err) {
    if (d >= ST_MAX_DEPTH)
        return ST_CORRUPT(err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                          (unsigned long long)pg);
    const uint8_t *p;
    int rc;
    if ((rc = node_get(c->tree->txn, pg, c->tree->st.kind, &p, err))) return rc;
    c->path[d] = (st_iter_level){pg, p, 0};
    return STRATA_OK;
}

/* From level d (already loaded), go down to the leftmost or rightmost leaf. */
static int cur_descend(st_iter *c, int d, bool leftmost, strata_error *err) {
    for (;; d++) {
        st_iter_level *l = &c->path[d];
        int n = pg_nkeys(l->page);
        l->idx = leftmost ? 0 : n - 1;
        if (pg_kind(l->page) == ST_PAGE_LEAF) {
            c->depth = d + 1;
            return n ? STRATA_OK : STRATA_ERR_NOT_FOUND;
        }
        pgno_t child;
        const uint8_t *k;
        size_t kl;
        int rc;
        if ((rc = st_branch_cell_at(l->page, l->pgno, l->idx, &child, &k, &kl, err)) ||
            (rc = cur_page(c, d + 1, child, err)))
            return rc;
    }
}

static int cur_settle(st_iter *c, int rc, strata_error *err) {
    c->positioned = rc == STRATA_OK;
    c->mod_count = c->tree->mod_count;
    if (rc) return rc;
    st_iter_level *l = &c->path[c->depth - 1];
    st_leaf_cell cell;
    if ((rc = st_leaf_cell_at(l->page, l->pgno, l->idx, &cell, err))) {
        c->positioned = false;
        return rc;
    }
    memcpy(c->key_copy, cell.key, cell.klen);
    c->key_copy_len = cell.klen;
    return STRATA_OK;
}

static int cur_edge(st_iter *c, bool first, strata_error *err) {
    if (!c->tree->st.root) return cur_settle(c, STRATA_ERR_NOT_FOUND, err);
    int rc = cur_page(c, 0, c->tree->st.root, err);
    if (rc == STRATA_OK) rc = cur_descend(c, 0, first, err);
    return cur_settle(c, rc, err);
}

int st_iter_first(st_iter *c, strata_error *err) { return cur_edge(c, true, err); }
int st_iter_last(st_iter *c, strata_error *err) { return cur_edge(c, false, err); }

static int step(st_iter *c, bool forward, strata_error *err) {
    int leafd = c->depth - 1;
    st_iter_level *l = &c->path[leafd];
    if (forward ? l->idx + 1 < pg_nkeys(l->page) : l->idx > 0) {
        l->idx += forward ? 1 : -1;
        return STRATA_OK;
    }
    for (int d = leafd - 1; d >= 0; d--) {
        st_iter_level *b = &c->path[d];
        if (forward ? b->idx + 1 < pg_nkeys(b->page) : b->idx > 0) {
            b->idx += forward ? 1 : -1;
            pgno_t child;
            const uint8_t *k;
            size_t kl;
            int rc;
            if ((rc = st_branch_cell_at(b->page, b->pgno, b->idx, &child, &k, &kl, err)) ||
                (rc = cur_page(c, d + 1, child, err)))
                return rc;
            return cur_descend(c, d + 1, forward, err);
        }
    }
    return STRATA_ERR_NOT_FOUND;
}

static int seek_raw(st_iter *c, const uint8_t *key, size_t klen, bool *exact,
                    strata_error *err) {
    *exact = false;
    const st_tree_state *t = &c->tree->st;
    if (!t->root) return STRATA_ERR_NOT_FOUND;
    int rc = cur_page(c, 0, t->root, err);
    for (int d = 0; rc == STRATA_OK; d++) {
        st_iter_level *l = &c->path[d];
        if (pg_kind(l->page) == ST_PAGE_LEAF) {
            c->depth = d + 1;
            if ((rc = leaf_search(l->page, l->pgno, t->kind, key, klen, &l->idx, exact, err)))
                return rc;
            if (l->idx < pg_nkeys(l->page)) return STRATA_OK;
            if (pg_nkeys(l->page) == 0) return STRATA_ERR_NOT_FOUND;
            l->idx = pg_nkeys(l->page) - 1; /* past this leaf: the next entry is beyond */
            return step(c, true, err);
        }
        pgno_t child;
        if ((rc = branch_search(l->page, l->pgno, t->kind, key, klen, &l->idx, &child, err)))
            return rc;
        rc = cur_page(c, d + 1, child, err);
    }
    return rc;
}

int st_iter_seek(st_iter *c, const uint8_t *key, size_t klen, strata_error *err) {
    bool exact;
    return cur_settle(c, seek_raw(c, key, klen, &exact, err), err);
}

static int cur_move(st_iter *c, bool forward, strata_error *err) {
    if (!c->positioned) return st_err(err, STRATA_ERR_NOT_FOUND, "the cursor is not on an entry");
    if (c->mod_count != c->tree->mod_count) {
        /* The tree changed under the cursor: find our key again. */
        uint8_t key[STRATA_MAX_KEY];
        size_t klen = c->key_copy_len;
        memcpy(key, c->key_copy, klen);
        bool exact;
        int rc = seek_raw(c, key, klen, &exact, err);
        if (forward) {
            if (rc == STRATA_OK && exact) rc = step(c, true, err);
            return cur_settle(c, rc, err);
        }
        if (rc == STRATA_ERR_NOT_FOUND) return st_iter_last(c, err);
        if (rc == STRATA_OK) rc = step(c, false, err);
        return cur_settle(c, rc, err);
    }
    return cur_settle(c, step(c, forward, err), err);
}

int st_iter_next(st_iter *c, strata_error *err) { return cur_move(c, true, err); }
int st_iter_prev(st_iter *c, strata_error *err) { return cur_move(c, false, err); }

int st_bt_each(strata_tree_t *tree, st_bt_visit visit, void *arg, strata_error *err) {
    st_iter c;
    st_iter_init(&c, tree);
    if (!tree->st.root) return STRATA_OK;
    int rc = cur_page(&c, 0, tree->st.root, err);
    if (rc == STRATA_OK) rc = cur_descend(&c, 0, true, err);
    while (rc == STRATA_OK) {
        st_iter_level *l = &c.path[c.depth - 1];
        int n = pg_nkeys(l->page);
        for (int i = 0; i < n; i++) {
            st_leaf_cell cell;
            const uint8_t *val = NULL;
            if ((rc = st_leaf_cell_at(l->page, l->pgno, i, &cell, err))) return rc;
            if (!cell.big) val = cell.val;
            else if ((rc = st_overflow_get(tree->txn, cell.ovf, cell.vlen, &val, NULL, err))) return rc;
            if ((rc = visit(arg, cell.key, cell.klen, val, cell.vlen))) return rc;
        }
        l->idx = n ? n - 1 : 0;
        rc = step(&c, true, err);
    }
    return rc == STRATA_ERR_NOT_FOUND ? STRATA_OK : rc;
}

int st_iter_get(st_iter *c, const uint8_t **key, size_t *klen, const uint8_t **val,
               size_t *vlen, strata_error *err) {
    if (!c->positioned || c->mod_count != c->tree->mod_count)
        return st_err(err, STRATA_ERR_NOT_FOUND,
                      c->positioned ? "the tree changed since the cursor moved; move it again"
                                    : "the cursor is not on an entry");
    st_iter_level *l = &c->path[c->depth - 1];
    st_leaf_cell cell;
    int rc = st_leaf_cell_at(l->page, l->pgno, l->idx, &cell, err);
    if (rc) return rc;
    if (key) *key = cell.key;
    if (klen) *klen = cell.klen;
    if (vlen) *vlen = cell.vlen;
    if (val) {
        if (!cell.big) *val = cell.val;
        else if ((rc = st_overflow_get(c->tree->txn, cell.ovf, cell.vlen, val, NULL, err))) return rc;
    }
    return STRATA_OK;
}
