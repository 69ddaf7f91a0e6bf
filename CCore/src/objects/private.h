/*
 * private.h — what stays inside the objects layer: decoded (writable) clusters and the column
 * codec (column.c, cluster.c), index maintenance (index.c), backlinks and list storage
 * (object.c), the arena. The layers above use the door, objects.h; white-box tests include this.
 */
#ifndef STRATA_OBJECTS_PRIVATE_H
#define STRATA_OBJECTS_PRIVATE_H

#include "objects/objects.h"

/* A string/binary/mixed element of a decoded column: inline bytes (in the transaction's arena,
 * or the map) or a big value in an overflow run. Mixed elements are a type tag + payload. */
typedef struct st_var {
    const uint8_t *p;
    uint32_t len;
    pgno_t big;              /* first page of the overflow run, 0 when inline */
} st_var;

typedef struct st_dcol {
    uint32_t col_id;
    uint8_t enc;             /* ST_ENC_* (timestamps: fixed, whatever their leaf's encoding) */
    uint8_t slot;            /* fixed encoding: bytes per value */
    bool times;              /* timestamps: their leaves may be ST_ENC_TIMES */
    bool dirty;              /* values changed since decode */
    st_leafref old;          /* the leaf it was decoded from (pgno 0: none) */
    bool old_own;            /* ... alone on its page (it can stay there if clean) */
    uint8_t nulls[ST_CLUSTER_MAX];
    int64_t *ints;           /* packed encoding */
    uint8_t *fixed;          /* fixed encoding: ST_CLUSTER_MAX * slot bytes */
    st_var *var;             /* var encoding */
} st_dcol;

struct st_dcluster {
    uint64_t base;           /* key of the cluster in the cluster tree */
    bool in_tree;            /* the tree has a record under `base` */
    bool shape_dirty;        /* objects were added or removed */
    uint32_t n;
    int64_t keys[ST_CLUSTER_MAX];
    st_leafref old_keys;
    bool keys_own;           /* the keys leaf was alone on its page */
    bool stale_entries;      /* the record has leaves of properties that no longer exist */
    uint32_t fit_rows;       /* appends: rows that fit one cluster at the last check (cluster.c) */
    uint32_t next_check;     /* ... and the row count at which to check again (0: the next) */
    st_dcol *cols;           /* one per property of the table, in schema order */
    uint32_t ncols;
    pgno_t *old_pages;       /* the distinct pages of the record it was decoded from */
    uint32_t nold_pages;
};

enum { ST_ENC_PACKED = 1, ST_ENC_FIXED = 2, ST_ENC_VAR = 3, ST_ENC_TIMES = 4 };

/* Index changes a write transaction has made but not yet applied to the index tree (index.c):
 * records {u16 key length | u8 remove | key}, in the order they were made. */
struct st_index_pending {
    uint8_t *buf;
    size_t len, cap;
    size_t n;                /* records */
    size_t last;             /* where the last record starts (len when none) */
};

/* The object keeps no entry in p's index: p is a direct primary key and its value is the key. */
static inline bool st_pk_is_key(const st_prop *p, const strata_value *v, int64_t key) {
    return (p->flags & ST_PROP_PK_DIRECT) && v->type == STRATA_TYPE_INT && v->u.i == key;
}

/* The index tree of p, with the transaction's pending changes applied (index.c). */
int st_prop_index_tree(strata_table_t *t, st_prop *p, bool create, strata_tree_t **out,
                       strata_error *err);
/* ... as it is on the tree: only index.c's apply and discard use this. */
int st_prop_index_tree_raw(strata_table_t *t, st_prop *p, bool create, strata_tree_t **out,
                           strata_error *err);
/* The byte width of a fixed-size type, 0 for others. */
unsigned st_type_fixed_size(uint8_t type);
bool st_type_packed(uint8_t type, uint8_t flags);
bool st_type_var(uint8_t type, uint8_t flags);

/* column.c: leaves <-> decoded columns, and reading one value of a leaf in place */
int st_col_decode(strata_txn_t *txn, st_leafref ref, const st_prop *p, uint32_t n, st_dcol *out,
                  st_store *store, strata_error *err);
void st_col_default(const st_prop *p, uint32_t from, uint32_t to, st_dcol *c);
/* How rows [from, to) of a column are laid out as a leaf: measured once, then encoded. */
typedef struct st_col_plan {
    size_t size;    /* bytes of the leaf; 0 when it cannot fit in a page */
    uint8_t enc;    /* the leaf's encoding (the column's, or ST_ENC_TIMES for timestamps) */
    uint8_t flags;  /* leaf flags: 1 nulls bitmap, 2 big-values bitmap, 4 packed by row */
    uint8_t width;  /* packed: bits per value; times: of the seconds */
    uint8_t width2; /* times: bits per nanoseconds value */
    int64_t base;   /* packed: the value (or value - row) stored as 0; times: the seconds */
    int32_t base2;  /* times: the nanoseconds stored as 0 */
} st_col_plan;
/* For tests of files written before format 12: var leaves are written with u32 offsets. */
extern bool st_col_u32_offsets;
/* Measure the range [from, to) of c as a leaf; returns plan->size (0: it does not fit a page). */
size_t st_col_measure(const st_dcol *c, uint32_t from, uint32_t to, st_col_plan *plan);
/* The same, the leaf's bytes whether or not they fit a page (plan->size is that many). */
size_t st_col_bytes(const st_dcol *c, uint32_t from, uint32_t to, st_col_plan *plan);
/* Write the leaf of rows [from, to) to out (plan->size bytes), as measured by st_col_measure. */
void st_col_encode(const st_dcol *c, uint32_t from, uint32_t to, const st_col_plan *plan,
                   uint8_t *out);
/* Ask for the cache lines a read will need (value i of a leaf whose header is already on its
 * way; st_leaf_prefetch in objects.h for a leaf's first bytes), so that the misses of several
 * leaves overlap. Never fails. */
void st_col_prefetch(strata_txn_t *txn, st_leafref ref, uint32_t n, uint32_t i);
/* The bytes of element i of a variable-size leaf (reads its offset: call after st_col_prefetch). */
void st_col_prefetch_element(strata_txn_t *txn, st_leafref ref, uint32_t n, uint32_t i);
int st_col_read(strata_txn_t *txn, st_leafref ref, uint32_t n, uint32_t i, const st_prop *p,
                strata_value *out, strata_error *err);
/* The i-th value of a decoded column as a strata_value (big values are read from their run). */
int st_dcol_value(strata_txn_t *txn, const st_dcol *c, const st_prop *p, uint32_t i,
                  strata_value *out, strata_error *err);
/* Store a checked value into row i of a decoded column (copies bytes into the arena; writes a
 * big value's run). */
int st_dcol_store(strata_txn_t *txn, st_store *store, st_dcol *c, const st_prop *p, uint32_t i,
                  const strata_value *v, strata_error *err);
int st_dcol_alloc(st_dcol *c, const st_prop *p);
void st_dcol_release(st_dcol *c);
/* Free the big-value run of row i, if any. */
int st_dcol_free_big(strata_txn_t *txn, st_dcol *c, uint32_t i, strata_error *err);

bool st_leaf_can_patch(const uint8_t *seg, uint32_t n, uint32_t i, const st_prop *p,
                       const strata_value *v);
void st_leaf_patch(uint8_t *seg, uint32_t n, uint32_t i, const st_prop *p, const strata_value *v);
/* Every element offset of a var leaf (verify; reads check only the element they read). */
int st_leaf_check_all(const uint8_t *page, uint32_t n, strata_error *err);

/* The decoded (writable) cluster holding key. */
int st_obj_locate_write(strata_table_t *t, int64_t key, st_objref *ref, strata_error *err);

int st_cluster_append(strata_table_t *t, int64_t key, st_objref *ref, strata_error *err);
/* Write v into a cluster that is not decoded, in place in its leaf, when the leaf can take it
 * (*done); otherwise the caller goes through st_obj_locate_write. */
int st_cluster_patch(strata_table_t *t, int64_t key, const st_prop *p, const strata_value *v,
                     bool *done, strata_error *err);
int st_cluster_remove_row(strata_table_t *t, st_objref *ref, strata_error *err);

void st_clusters_forget(strata_table_t *t);
void st_cdir_free(strata_table_t *t); /* the read transaction's cluster directory */

/* Drop a column's leaves from every cluster (flushes first). */
int st_clusters_drop_column(strata_table_t *t, uint32_t col, strata_error *err);
/* Free every page of every cluster and empty the tree. */
int st_clusters_drop_all(strata_table_t *t, strata_error *err);

int st_index_key(const st_prop *p, const strata_value *v, int64_t key, uint8_t *out, size_t *len,
                 bool *truncated);
/* Insert and remove are queued in the property's pending changes and applied, sorted, when the
 * index is next read (st_prop_index_tree), when many are queued, or before commit (st_store_flush):
 * index pages are then touched in key order, once each, instead of at random. */
int st_index_insert(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                    strata_error *err);
int st_index_remove(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                    strata_error *err);
int st_index_apply(strata_table_t *t, st_prop *p, strata_error *err);
/* Something sorted by a number (a byte key's first 8 bytes, st_key_head8) before its bytes. */
typedef struct st_head_ref {
    uint64_t head;
    const uint8_t *rec;
} st_head_ref;
/* v[0..n) sorted by head, keeping the order among equal heads: a radix sort, a byte a pass from
 * the lowest (passes where every head has the same byte are skipped). tmp holds n. */
void st_radix_by_head(st_head_ref *v, size_t n, st_head_ref *tmp);
/* Queue one raw entry (its key bytes) to insert or remove, written where it goes: room for an
 * entry of up to STRATA_MAX_KEY bytes at the queue's end (NULL: out of memory, said in err), then
 * the entry written there queued (st_index_queue_add; no other queue call in between). Built
 * elsewhere and copied in, a full-text entry cost 384 cycles to queue (the same copy in a loop
 * alone: 55): the copy's vector loads waited for the bytes the builder had just stored. */
uint8_t *st_index_queue_room(st_prop *p, strata_error *err);
int st_index_queue_add(strata_table_t *t, st_prop *p, size_t len, bool remove, strata_error *err);
/* fulltext.c: queue the entries of the words of v (a string; nothing for null) for object key. */
int st_fulltext_queue(strata_table_t *t, st_prop *p, const strata_value *v, int64_t key,
                      bool remove, strata_error *err);
/* Apply the queued changes of a full-text index: the queue's n records (u16 entry length | u8
 * remove | entry) back to back in queue[0..len), in the order they were made. */
int st_fulltext_apply(strata_table_t *t, st_prop *p, strata_tree_t *ix, const uint8_t *queue,
                      size_t len, size_t n, strata_error *err);
/* Index every object's words (the property is flagged already). */
int st_fulltext_build(strata_table_t *t, st_prop *p, strata_error *err);
/* STRATA_OK when p (with flags) may have a full-text index, else the error saying why not. */
int st_fulltext_check(const strata_table_t *t, const st_prop *p, unsigned flags, strata_error *err);
/* The index holds exactly the entries of every object's words (verify_objects.c). */
int st_fulltext_verify(strata_table_t *t, st_prop *p, strata_error *err);
/* Forget the pending changes (the index is dropped, or the transaction ended). */
void st_index_discard(st_prop *p);
/* Drop p's index tree (plain or full-text) and its pending changes; the flags stay. */
int st_index_drop(strata_table_t *t, st_prop *p, strata_error *err);

/* *found: p is a direct primary key and the object at key == v holds v (it has no entry). */
int st_pk_direct_holder(strata_table_t *t, st_prop *p, const strata_value *v, bool *found,
                        strata_error *err);

int st_index_build(strata_table_t *t, st_prop *p, bool unique, strata_error *err);

bool st_type_indexable(uint8_t type);
/* A primary key is an int, string, objectId or uuid. */
static inline bool st_pk_type_ok(uint8_t type) {
    return type == STRATA_TYPE_INT || type == STRATA_TYPE_STRING ||
           type == STRATA_TYPE_OBJECT_ID || type == STRATA_TYPE_UUID;
}
bool st_value_equal(const strata_value *a, const strata_value *b);

int st_backlink_add(strata_table_t *target, int64_t tkey, uint32_t origin_table,
                    uint32_t origin_col, int64_t okey, int delta, strata_error *err);

int st_list_free_storage(strata_table_t *t, const st_prop *p, uint64_t list_id, int64_t okey,
                         strata_error *err);

void *st_arena_alloc(st_store *store, size_t n);

#endif
