/*
 * btree.h — copy-on-write B+trees with integer or byte-string keys, and their cursors.
 */
#ifndef STRATA_BTREE_H
#define STRATA_BTREE_H

#include "internal.h"

/* Values whose leaf cell would exceed this go to an overflow run. */
#define ST_MAX_INLINE_CELL 1024u

int st_bt_get(strata_txn_t *txn, const st_tree_state *t, const uint8_t *key, size_t klen,
              const uint8_t **val, size_t *vlen, strata_error *err);
/* The leaf where key belongs, found without a cursor (in a read transaction that searched the
 * tree often, through its leaf directory): *idx is the first of its *count entries >= key
 * (*idx == *count: that entry is in a later leaf). STRATA_ERR_NOT_FOUND: an empty tree. The
 * page stays valid while the tree is not changed. */
int st_bt_leaf_for(strata_tree_t *tree, const uint8_t *key, size_t klen, const uint8_t **leaf,
                   pgno_t *pgno, int *idx, int *count, strata_error *err);
/* leafdir.c: the leaf of a read transaction's byte-key tree that holds key's place, from the
 * directory (built once the tree was searched often enough), or *leaf = 0: descend. */
typedef struct st_leafdir st_leafdir;
int st_leafdir_leaf(strata_tree_t *tree, const uint8_t *key, size_t klen, pgno_t *leaf,
                    strata_error *err);
void st_leafdir_free(strata_tree_t *tree);
int st_bt_put(strata_txn_t *txn, st_tree_state *t, const uint8_t *key, size_t klen,
              const uint8_t *val, size_t vlen, strata_error *err);
int st_bt_delete(strata_txn_t *txn, st_tree_state *t, const uint8_t *key, size_t klen,
                 strata_error *err);

/* A writer's place in a tree between changes to keys that lie close together (a sorted batch):
 * the writable path to the leaf changed last. A change whose key lies within that leaf's first
 * and last keys starts there instead of descending from the root (a 1M-entry index: 3 searches
 * and 3 dirty-page lookups fewer). A split or merge forgets it (root 0), so does a change to the
 * root by anything else; the caller forgets it when anything else changed the tree (its pages
 * are the transaction's dirty copies and stay put until freed). Zero-initialise. */
typedef struct st_wlevel {
    pgno_t pgno;
    uint8_t *page;
    int idx;
} st_wlevel;
typedef struct st_bt_finger {
    pgno_t root; /* the tree's root when the path was kept; 0: none kept */
    int depth;
    st_wlevel path[ST_MAX_DEPTH];
    uint64_t mod; /* for the caller: the tree handle's mod_count after the last change */
} st_bt_finger;
int st_bt_put_near(strata_txn_t *txn, st_tree_state *t, st_bt_finger *f, const uint8_t *key,
                   size_t klen, const uint8_t *val, size_t vlen, strata_error *err);
int st_bt_delete_near(strata_txn_t *txn, st_tree_state *t, st_bt_finger *f, const uint8_t *key,
                      size_t klen, strata_error *err);
/* Free every page of the tree; t becomes empty. */
int st_bt_drop(strata_txn_t *txn, st_tree_state *t, strata_error *err);

/* Cursor moves: STRATA_OK on an entry, STRATA_ERR_NOT_FOUND past either end. */
int st_cur_first(strata_cursor_t *c, strata_error *err);
int st_cur_last(strata_cursor_t *c, strata_error *err);
int st_cur_seek(strata_cursor_t *c, const uint8_t *key, size_t klen, strata_error *err);
int st_cur_next(strata_cursor_t *c, strata_error *err);
int st_cur_prev(strata_cursor_t *c, strata_error *err);
int st_cur_get(strata_cursor_t *c, const uint8_t **key, size_t *klen, const uint8_t **val,
               size_t *vlen, strata_error *err);

/* Every entry of the tree in key order, leaf by leaf (a scan without a cursor move per entry):
 * visit(arg, key, klen, val, vlen) for each; a non-zero return from visit stops the walk and is
 * returned. The pointers stay valid while the tree is not changed; visit must not change it. */
typedef int (*st_bt_visit)(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
                           size_t vlen);
int st_bt_each(strata_tree_t *tree, st_bt_visit visit, void *arg, strata_error *err);

/* Parsed leaf cell (verify and cursors). */
typedef struct st_leaf_cell {
    const uint8_t *key;
    size_t klen;
    bool big;
    uint32_t vlen;
    const uint8_t *val; /* inline value */
    pgno_t ovf;         /* overflow run, when big */
    size_t size;        /* bytes the cell takes */
} st_leaf_cell;

/* Checked accessors shared with verify.c. */
int st_node_check(const uint8_t *p, pgno_t pgno, uint8_t key_kind, strata_error *err);
int st_leaf_cell_at(const uint8_t *p, pgno_t pgno, int i, st_leaf_cell *c, strata_error *err);
int st_branch_cell_at(const uint8_t *p, pgno_t pgno, int i, pgno_t *child, const uint8_t **key,
                      size_t *klen, strata_error *err);
int st_key_cmp(uint8_t kind, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);
/* The bytes of a big value: checks the run's header and bounds. */
int st_overflow_get(strata_txn_t *txn, pgno_t pgno, uint32_t vlen, const uint8_t **val,
                    uint32_t *run, strata_error *err);

#endif
