/*
 * btree.h — the door of the btree layer: copy-on-write B+trees with integer or byte-string keys
 * (btree.c), their iterators, leaf directories for read transactions (leafdir.c), the catalog
 * of named trees of a transaction (tree.c), the walk of a tree's pages for an integrity
 * check (treecheck.c), a tree's pages into a copy of its version (treecopy.c), and the entries
 * two versions of a tree do not share (treediff.c).
 */
#ifndef STRATA_BTREE_H
#define STRATA_BTREE_H

#include "storage/storage.h"

typedef struct st_tree_state {
    pgno_t root;
    uint64_t count;
    uint8_t kind;            /* strata_key_kind */
    uint8_t tflags;          /* ST_TREE_*: stored in the catalog record */
} st_tree_state;

struct strata_tree {
    strata_txn_t *txn;
    struct strata_tree *next;   /* the transaction's list of open trees */
    char name[STRATA_MAX_TREE_NAME + 1];
    size_t name_len;
    st_tree_state st;
    bool dirty;              /* state changed: written to the catalog at commit */
    bool dropped;
    bool stale;              /* its read transaction was refreshed */
    uint64_t mod_count;      /* bumped by every change; iterators re-seek when it moves */
    struct st_leafdir *leafdir; /* read transactions: its leaves, for searches (leafdir.c) */
};

typedef struct st_iter_level {
    pgno_t pgno;
    const uint8_t *page;
    int idx;
} st_iter_level;

/* The tree layer's iterator: a path from the root to an entry. It lives where its user puts it
 * (st_iter_init on the stack); it survives changes to its tree, re-seeking its key when the
 * tree's mod_count moved. */
typedef struct st_iter {
    strata_tree_t *tree;
    st_iter_level path[ST_MAX_DEPTH];
    int depth;               /* levels in path; 0 = unpositioned */
    bool positioned;
    uint64_t mod_count;      /* tree->mod_count when path was built */
    uint8_t key_copy[STRATA_MAX_KEY]; /* the current key, to re-seek after a change */
    size_t key_copy_len;
} st_iter;

typedef struct st_leaf_cell st_leaf_cell; /* a parsed leaf cell (below) */

/* A public cursor is an iterator on the transaction's list (freed with it). */
struct strata_cursor {
    st_iter it;
    struct strata_cursor *next;
};

/* ------------------------------------------------------------------ named trees (tree.c) */

/* Catalog record of a tree (24 bytes): u64 root page | u64 entry count | u8 key kind | u8 tree
 * flags | 6 bytes zero. The flags belong to the layer that made the tree (objects: ST_TREE_*). */
#define ST_TREE_RECORD_SIZE 24
int st_tree_record_parse(const char *name, const uint8_t *rec, size_t len, st_tree_state *st,
                         strata_error *err);

/* A transaction's trees: st_trees_begin after st_txn_begin, st_trees_free before st_txn_free. */
int st_trees_begin(strata_txn_t *txn, strata_error *err);
/* A refreshed read transaction: its open trees go stale, the catalog is the new version's. */
void st_trees_refresh(strata_txn_t *txn);
void st_trees_free(strata_txn_t *txn);
/* Write every changed tree's root and count into the catalog, then commit the transaction
 * (st_txn_commit), which ends it either way. */
int st_trees_commit(strata_txn_t *txn, strata_error *err);

/* Open the tree `name` (create: make it if missing, in a write transaction). Names starting
 * with '$' are the object layer's: only `reserved` opens may use them. The handle belongs to
 * the transaction (freed with it). */
int st_tree_open(strata_txn_t *txn, const char *name, strata_key_kind kind, bool create,
                 bool reserved, strata_tree_t **out, strata_error *err);
/* Free every page of the tree and remove it from the catalog. */
int st_tree_drop(strata_txn_t *txn, strata_tree_t *t, strata_error *err);
/* Put or delete in an open tree (no argument checks): it is written to the catalog at commit and
 * its iterators re-seek. st_tree_del returns STRATA_ERR_NOT_FOUND, unmarked, when key is absent. */
int st_tree_put(strata_tree_t *t, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                strata_error *err);
int st_tree_del(strata_tree_t *t, const uint8_t *key, size_t klen, strata_error *err);
/* The same through a finger (below; NULL: none): changes to a sorted run of keys skip the
 * descent. */
typedef struct st_bt_finger st_bt_finger;
int st_tree_put_near(strata_tree_t *t, st_bt_finger *f, const uint8_t *key, size_t klen,
                     const uint8_t *val, size_t vlen, strata_error *err);
int st_tree_del_near(strata_tree_t *t, st_bt_finger *f, const uint8_t *key, size_t klen,
                     strata_error *err);
/* A public cursor on the transaction's list, and its removal. */
int st_cursor_new(strata_tree_t *t, strata_cursor_t **out, strata_error *err);
void st_cursor_free(strata_cursor_t *c);

/* ------------------------------------------------------------------ page walk (treecheck.c) */

/* Every page of a tree marked in pc and checked (kinds, bounds, keys ascending and inside the
 * range the parent gives, leaves all at one depth, no empty node but an empty root, the count as
 * recorded); entry, if given, sees each entry with its value (a big value read from its run). */
typedef int (*st_tree_check_entry)(st_pagecheck *pc, const struct st_leaf_cell *c, const uint8_t *val,
                                   void *arg);
int st_tree_check(st_pagecheck *pc, const char *name, const st_tree_state *t,
                  st_tree_check_entry entry, void *arg);
/* The catalog of pc's version and every tree it names; the entries of trees whose flags have
 * `flag` go to entry (arg: the tree's name). */
int st_catalog_check(st_pagecheck *pc, uint8_t flag, st_tree_check_entry entry);

/* ------------------------------------------------------------------ copies (treecopy.c) */

/* A value that owns pages, in the copy's page (writable): fn copies what it owns into c and
 * rewrites its references. key is the entry's key. */
typedef int (*st_copy_value)(st_copier *c, const uint8_t *key, size_t klen, uint8_t *val,
                             size_t vlen, void *arg, strata_error *err);
/* Every page of tree t into the copy, children before parents (leaves in key order), each page
 * checked as it is read and its cells packed; values go through fn if given. */
int st_tree_copy(st_copier *c, const st_tree_state *t, st_copy_value fn, void *arg,
                 pgno_t *new_root, strata_error *err);
/* A big value's run (as st_overflow_get finds it) into the copy; *out its new first page. */
int st_overflow_copy(st_copier *c, pgno_t pgno, uint32_t vlen, pgno_t *out, strata_error *err);
/* The catalog of the copy's source and every tree it names; trees whose flags have `flag` pass
 * their values to fn (arg: the tree's name). */
int st_catalog_copy(st_copier *c, uint8_t flag, st_copy_value fn, pgno_t *root, uint64_t *count,
                    strata_error *err);

/* ------------------------------------------------------------------ two versions (treediff.c) */

/* An entry of a leaf one version does not share with the other: side 0 the older (a), 1 the
 * newer (b); val is the whole value (a big one read from its run). */
typedef int (*st_diff_entry)(int side, const uint8_t *key, size_t klen, const uint8_t *val,
                             size_t vlen, void *arg, strata_error *err);
/* The entries of the leaves that trees ta (read in a) and tb (in b) do not share, each to fn;
 * subtrees with the same page in both are skipped unread. *pages: pages read. */
int st_tree_diff(strata_txn_t *a, const st_tree_state *ta, strata_txn_t *b, const st_tree_state *tb,
                 st_diff_entry fn, void *arg, uint64_t *pages, strata_error *err);

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
/* The directory's arrays the tree handle searches, NULL when it has none (for tests). */
const void *st_leafdir_arrays(const strata_tree_t *tree);
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
    /* Appends at the right edge leave a 1/ST_BT_ROOM of each leaf free (else they fill it): an
     * index written in key order then takes the random inserts that follow without splitting
     * a leaf for each (a full name index split a leaf in nearly every one-object commit). */
    bool leave_room;
} st_bt_finger;
#define ST_BT_ROOM 32
int st_bt_put_near(strata_txn_t *txn, st_tree_state *t, st_bt_finger *f, const uint8_t *key,
                   size_t klen, const uint8_t *val, size_t vlen, strata_error *err);
int st_bt_delete_near(strata_txn_t *txn, st_tree_state *t, st_bt_finger *f, const uint8_t *key,
                      size_t klen, strata_error *err);
/* Free every page of the tree; t becomes empty. */
int st_bt_drop(strata_txn_t *txn, st_tree_state *t, strata_error *err);
/* Free the tree's branch pages (its leaves, at level height - 1 of `height`, the caller freed
 * already, and they are not read); t becomes empty. For a caller that freed each leaf once it
 * had read it (a rebuild whose new pages take the freed ones). */
int st_bt_drop_branches(strata_txn_t *txn, st_tree_state *t, int height, strata_error *err);

/* Iterator moves: STRATA_OK on an entry, STRATA_ERR_NOT_FOUND past either end. */
static inline void st_iter_init(st_iter *c, strata_tree_t *tree) {
    memset(c, 0, sizeof *c);
    c->tree = tree;
}
int st_iter_first(st_iter *c, strata_error *err);
int st_iter_last(st_iter *c, strata_error *err);
int st_iter_seek(st_iter *c, const uint8_t *key, size_t klen, strata_error *err);
int st_iter_next(st_iter *c, strata_error *err);
int st_iter_prev(st_iter *c, strata_error *err);
int st_iter_get(st_iter *c, const uint8_t **key, size_t *klen, const uint8_t **val,
               size_t *vlen, strata_error *err);

/* Every entry of the tree in key order, leaf by leaf (a scan without a cursor move per entry):
 * visit(arg, key, klen, val, vlen) for each; a non-zero return from visit stops the walk and is
 * returned. The pointers stay valid while the tree is not changed; visit must not change it. */
typedef int (*st_bt_visit)(void *arg, const uint8_t *key, size_t klen, const uint8_t *val,
                           size_t vlen);
int st_bt_each(strata_tree_t *tree, st_bt_visit visit, void *arg, strata_error *err);

/* Parsed leaf cell (verify and iterators). */
struct st_leaf_cell {
    const uint8_t *key;
    size_t klen;
    bool big;
    uint32_t vlen;
    const uint8_t *val; /* inline value */
    pgno_t ovf;         /* overflow run, when big */
    size_t size;        /* bytes the cell takes */
};

/* Checked accessors shared with the page walk (treecheck.c). */
int st_node_check(const uint8_t *p, pgno_t pgno, uint8_t key_kind, strata_error *err);
int st_leaf_cell_at(const uint8_t *p, pgno_t pgno, int i, st_leaf_cell *c, strata_error *err);
int st_branch_cell_at(const uint8_t *p, pgno_t pgno, int i, pgno_t *child, const uint8_t **key,
                      size_t *klen, strata_error *err);
int st_key_cmp(uint8_t kind, const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);
/* The bytes of a big value: checks the run's header and bounds. */
int st_overflow_get(strata_txn_t *txn, pgno_t pgno, uint32_t vlen, const uint8_t **val,
                    uint32_t *run, strata_error *err);

#endif
