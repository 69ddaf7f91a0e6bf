/*
 * objects.h — the door of the objects layer: tables of typed objects over the btree layer.
 * Schema and the per-transaction store (schema.c), column leaves (column.c), clusters
 * (cluster.c), indexes (index.c), the words of a text (words.c) and full-text indexes
 * (fulltext.c), links, lists and deletes (object.c), the object-level
 * integrity walk (verify_objects.c), the page walk of clusters (verify_pages.c), the copy of
 * cluster records' pages (copy_objects.c), the objects changed between two versions
 * (changes.c) and the elements of a list changed between two versions (list_changes.c). Row masks
 * (rowmask.h) live here because column leaves compare into them; the query layer uses them too.
 * Private to the folder: private.h (decoded clusters, the column codec, index maintenance).
 *
 * Trees the object layer keeps in the catalog (names starting with '$' are reserved):
 *   "$schema"       byte keys: "v" → u64 schema version, "n" → u32 next table id,
 *                   "t" + BE u32 table id → the table record (schema.c)
 *   "$t<id>.c"      clusters of table <id>: integer key = the cluster's base object key,
 *                   value = the cluster record (cluster.c); flagged ST_TREE_CLUSTERS
 *   "$t<id>.l"      lists: integer key = list id → the list's elements (object.c)
 *   "$t<id>.b"      backlinks to objects of table <id> (object.c)
 *   "$t<id>.i<col>" the index of property <col> (index.c), or its full-text index (fulltext.c)
 */
#ifndef STRATA_OBJECTS_H
#define STRATA_OBJECTS_H

#include "btree/btree.h"
#include "objects/rowmask.h"

#define ST_CLUSTER_MAX 256       /* objects in a cluster */
_Static_assert(ST_CLUSTER_MAX <= 64 * ST_MASK_WORDS, "a row mask holds a cluster");
#define ST_INLINE_MAX 1000u      /* bytes of a string/binary kept in its column leaf */
#define ST_INDEX_PREFIX 200u     /* bytes of a string the index key holds */
#define ST_WORD_KEY_MAX 100u     /* bytes of a word a full-text index entry holds */
#define ST_WORD_POS_MAX 32u      /* positions of a word in one value a full-text index keeps */
#define ST_TREE_CLUSTERS 1       /* tree flag (catalog): values are cluster records that own
                                    column pages (cluster.c) */

/* The name of a value type, for messages (strata_type_name). */
const char *st_type_name(strata_type type);

/* A caller's bool as stored: any non-zero byte is true (C callers fill the union as they like,
 * and loading a byte other than 0/1 as bool is undefined). */
static inline bool st_bool_of(const strata_value *v) {
    uint8_t raw;
    memcpy(&raw, &v->u.b, 1);
    return raw != 0;
}

/* ------------------------------------------------------------------ decoded clusters */

/* Where a column leaf is: a segment [off, off + len) of column page pgno. */
typedef struct st_leafref {
    pgno_t pgno;
    uint16_t off, len;
} st_leafref;

/* ------------------------------------------------------------------ schema */

/* A property flag kept in the table record but never shown to users: the integer primary key
 * is "direct". Objects are then created with key == primary key whenever that key can still be
 * appended (the value is >= the table's next key), and the primary-key index holds only the
 * objects whose key differs from their primary key: a lookup first tries the object at key ==
 * value. Files written before format 2 have no direct keys (their indexes are complete). While
 * that index is empty every object's key is its value, so a read of it needs only the key. */
#define ST_PROP_PK_DIRECT 0x80u

typedef struct st_index_pending st_index_pending; /* private.h */
typedef struct st_dcluster st_dcluster;           /* private.h */

typedef struct st_prop {
    uint32_t id;
    char name[STRATA_MAX_NAME + 1];
    uint8_t type;            /* strata_type */
    uint8_t flags;           /* STRATA_PROP_* */
    uint32_t target;         /* link target table id */
    strata_tree_t *index;    /* opened lazily */
    st_index_pending *pending;
} st_prop;

typedef struct st_store st_store;

/* list_lookup.c: the last list looked up by value or key in a read transaction, decoded. */
typedef struct st_list_cache {
    uint64_t id;             /* 0: none */
    uint32_t col;
    strata_value *vals, *keys; /* keys: a map's */
    size_t n;
    uint32_t *order;         /* a set's positions in value order */
} st_list_cache;

struct strata_table {
    st_store *store;
    strata_txn_t *txn;
    bool stale;              /* its read transaction was refreshed */
    uint32_t id;
    char name[STRATA_MAX_NAME + 1];
    st_prop *props;
    uint32_t nprops;
    uint32_t next_col_id;
    uint32_t pk_col;         /* property id, 0 = none */
    int64_t next_key;
    uint64_t count;
    uint64_t next_list_id;
    bool dirty;              /* the table record must be written */
    bool dropped;
    uint8_t tflags;          /* ST_TABLE_EMBEDDED (stored after the properties, format 7) */
    /* Embedded tables: objects created in this transaction, deleted at commit when no parent
     * links to them by then (embedded.c). */
    int64_t *fresh;
    size_t nfresh, capfresh;
    st_list_cache lcache;
    strata_tree_t *clusters, *lists, *backlinks; /* opened lazily */
    uint8_t absent_trees;    /* of those, found missing (bits 1, 2, 4) until one is created */
    /* decoded clusters, sorted by base */
    st_dcluster **dc;
    size_t ndc, capdc;
    st_dcluster *hint;       /* the last cluster used */
    st_dcluster *append_dc;  /* the cluster the last new object went to: the table's last (it
                                holds the greatest key, and only appends make later ones) */
    /* The cluster record last found through the tree, valid while the tree's mod_count stays
     * (and no cluster is decoded): point reads of one cluster skip the tree descent. A dense
     * cluster (every key from first to last) is cached without its keys leaf (keys NULL): a
     * key's row is key - first. Invalid too once a scan let go of unpacked column pages. */
    struct {
        bool valid, dense;
        uint64_t mod, base;
        uint64_t let_go;     /* the transaction's let_go when filled: keys may lie in an
                                unpacked column page that a scan has let go of since */
        const uint8_t *rec, *keys;
        size_t rec_len;
        uint32_t n;
        int64_t first, last;
    } rcache;
    /* Read transactions only (their tree never changes): every cluster's base and record in
     * arrays (cluster.c's directory), found kept by the handle for this tree's root or built
     * once as many point reads went through the tree as a quarter of its clusters, counting
     * those of earlier transactions on the same root (building costs about that many descents:
     * a short read transaction never pays for it alone); then finding a cluster is a search
     * over bases instead of a tree descent. */
    struct {
        uint64_t *base;
        const uint8_t **rec;
        uint32_t *rec_len;
        uint32_t *count;   /* the record's n */
        size_t n;
        double scale;      /* (n - 1) / (last base - first base) */
        uint64_t descents; /* tree descents in this transaction before it was built */
        uint64_t prior;    /* descents earlier transactions reported for the same root */
        bool built;
        bool looked;       /* the handle's kept directories were asked */
        bool keyed;        /* key names the tree: shareable */
        st_share_key key;
        st_shared *held;   /* what the arrays belong to */
    } cdir;
};

typedef struct st_arena_chunk {
    struct st_arena_chunk *next;
    size_t used, cap;
    uint8_t data[];
} st_arena_chunk;

struct st_store {
    strata_txn_t *txn;
    uint64_t schema_version;
    uint32_t next_table_id;
    bool header_dirty;       /* version or next table id changed */
    strata_table_t **tables; /* sorted by name; dropped ones stay until the transaction ends */
    size_t ntables;
    strata_tree_t *schema_tree;
    st_arena_chunk *arena;   /* bytes handed out by reads and kept by decoded clusters */
    st_store *older;      /* states replaced by a refresh, kept until the txn is freed */
};

/* The per-transaction store (schema.c): loaded on first use, flushed before commit. */
int st_store_get(strata_txn_t *txn, st_store **out, strata_error *err);
int st_store_flush(strata_txn_t *txn, strata_error *err); /* before commit */
void st_store_end(strata_txn_t *txn);   /* the transaction ended: free data, keep handles */
void st_store_stale(strata_txn_t *txn); /* refresh: handles go stale */
void st_store_free(strata_txn_t *txn);  /* strata_txn_free */
/* schema.c */
st_prop *st_prop_find(const strata_table_t *t, uint32_t col);
strata_table_t *st_table_by_name(st_store *store, const char *name);
int st_schema_get_version(strata_txn_t *txn, uint64_t *v, strata_error *err);
int st_schema_set_version(strata_txn_t *txn, uint64_t v, strata_error *err);
int st_table_create(strata_txn_t *txn, const char *name, strata_table_t **out, strata_error *err);
int st_table_open(strata_txn_t *txn, const char *name, strata_table_t **out, strata_error *err);
int st_table_drop(strata_txn_t *txn, const char *name, strata_error *err);
int st_prop_add(strata_table_t *t, const char *name, strata_type type, unsigned flags,
                const char *link_target, strata_col_t *col, strata_error *err);
int st_prop_rename(strata_table_t *t, uint32_t col, const char *name, strata_error *err);
int st_prop_remove(strata_table_t *t, uint32_t col, strata_error *err);
int st_set_indexed(strata_table_t *t, uint32_t col, bool on, strata_error *err);
/* Add (on) or remove the full-text index of string property col (fulltext.c). */
int st_set_fulltext(strata_table_t *t, uint32_t col, bool on, strata_error *err);
int st_set_primary_key(strata_table_t *t, uint32_t col, strata_error *err);
int st_table_clear(strata_table_t *t, strata_error *err);
strata_table_t *st_table_by_id(st_store *store, uint32_t id);
int st_table_check(strata_table_t *t, bool write, strata_error *err);
/* A table's trees other than its indexes: "$t<id>.c", ".l", ".b" (above). */
typedef enum st_table_tree_kind { ST_TABLE_CLUSTERS, ST_TABLE_LISTS, ST_TABLE_BACKLINKS } st_table_tree_kind;
/* For a caller to whom "no such tree" is an answer: *out is the tree, or NULL when the table
 * has none (STRATA_OK; once known absent in the transaction, no message is made again). */
int st_table_tree_existing(strata_table_t *t, st_table_tree_kind which, strata_tree_t **out,
                           strata_error *err);
int st_table_tree(strata_table_t *t, st_table_tree_kind which, bool create, strata_tree_t **out,
                  strata_error *err);

/* Reading leaves in place (the query scan, verify): */
/* The leaf at ref, checked (kind, bounds, n, sizes): *seg points at its first byte. */
int st_leaf_header(strata_txn_t *txn, st_leafref ref, uint32_t n, const uint8_t **seg,
                   strata_error *err);
/* A hint, never a read: ask memory for the first `bytes` bytes of the leaf at ref (at most its
 * length; 1: its header) and its page's checks, so that the misses of several leaves overlap. */
void st_leaf_prefetch(strata_txn_t *txn, st_leafref ref, uint32_t bytes);
int64_t st_packed_at(const uint8_t *page, uint32_t n, uint32_t i);
/* The first row whose value is >= key in a packed leaf of ascending values (a keys leaf). */
uint32_t st_packed_lower_bound(const uint8_t *seg, uint32_t n, int64_t key);
void st_leaf_unpack(const uint8_t *seg, uint32_t n, int64_t *out);
const uint8_t *st_leaf_nulls(const uint8_t *seg);  /* the null bitmap, NULL when none is null */
bool st_leaf_compare(const uint8_t *seg, uint32_t n, int op, int64_t k0, int64_t k1, st_rowmask *out);
bool st_leaf_is_packed(const uint8_t *seg);
/* A float or double leaf's values as doubles (n of them, into out), or false when the leaf is
 * not one of `type`'s (another encoding or width). */
bool st_leaf_reals(const uint8_t *seg, uint32_t n, strata_type type, double *out);
/* Row i of a string or binary leaf: its bytes and length (a big one's read from its run), NULL
 * for a null row. The bytes stay valid while the transaction writes nothing. */
int st_leaf_element(strata_txn_t *txn, const uint8_t *seg, uint32_t n, uint32_t i,
                    const uint8_t **bytes, uint32_t *len, strata_error *err);
/* The big-value runs a leaf refers to (at most n); at (may be NULL) receives where each
 * reference (u64 first page | u32 length) lies, in bytes from the leaf's start. */
int st_leaf_big_runs(const uint8_t *page, uint32_t n, pgno_t *runs, uint32_t *lens, uint32_t *at,
                     uint32_t *count, strata_error *err);

/* cluster.c */
typedef struct st_objref {
    st_dcluster *dc;         /* the decoded cluster, or NULL: read from the record */
    uint32_t row;
    const uint8_t *rec;      /* cluster record when dc is NULL */
    size_t rec_len;
} st_objref;
int st_obj_locate(strata_table_t *t, int64_t key, st_objref *ref, strata_error *err);
/* The same, for a caller about to read only property `only` (its leaf is fetched, not all), or
 * none (ST_READS_NOTHING: the caller asks whether the object is there). */
int st_obj_locate_for(strata_table_t *t, int64_t key, const st_prop *only, st_objref *ref,
                      strata_error *err);
/* st_obj_locate_for of up to ST_LOCATE_BATCH keys (an error stops at the key it names): with a
 * read transaction's cluster directory, every key's record is asked for from memory before any
 * is read, so that the misses of keys spread over the table overlap. */
#define ST_LOCATE_BATCH 16
int st_obj_locate_batch(strata_table_t *t, const int64_t *keys, size_t n, const st_prop *only,
                        st_objref *refs, strata_error *err);
extern const st_prop st_reads_nothing;
#define ST_READS_NOTHING (&st_reads_nothing)
int st_obj_read(strata_table_t *t, const st_objref *ref, const st_prop *p, strata_value *out,
                strata_error *err);
/* Ask memory for the cache lines of every value of the object at ref (and then its strings'
 * bytes) at once: a hint for reads one property at a time (strata_obj_prefetch). */
void st_obj_prefetch(strata_table_t *t, const st_objref *ref);
/* Several properties of one object: its cluster record is parsed once. */
int st_obj_read_many(strata_table_t *t, const st_objref *ref, st_prop *const *props, size_t n,
                     strata_value *out, strata_error *err);
int st_clusters_flush(strata_table_t *t, strata_error *err);
/* Every key, ascending (flushes first): up to cap into keys; *count: how many in all. */
int st_cluster_keys(strata_table_t *t, int64_t *keys, size_t cap, size_t *count, strata_error *err);
/* Next key after `after` (flushes first). */
int st_cluster_next_key(strata_table_t *t, int64_t after, int64_t *key, strata_error *err);
/* Parsed cluster record (layout in cluster.c). */
typedef struct st_crec {
    uint32_t n, nentries;    /* entry 0 is the keys leaf */
    const uint8_t *entries;  /* nentries × {u32 property id (0: keys) | u16 off | u16 len | u64 page} */
} st_crec;
int st_crec_parse(const char *table, uint64_t base, const uint8_t *rec, size_t len, st_crec *out,
                  strata_error *err);
st_leafref st_crec_entry(const st_crec *r, uint32_t i, uint32_t *col);
/* The leaf of property col (pgno 0 when the cluster has none). */
st_leafref st_crec_col(const st_crec *r, uint32_t col);
/* Entry i of the record's bytes rec names page pgno (a copy: copy_objects.c). */
void st_crec_set_page(uint8_t *rec, uint32_t i, pgno_t pgno);

/* index.c */
/* p is a direct primary key whose index is empty: every object's value of p is its key. */
bool st_pk_always_key(strata_table_t *t, st_prop *p);
/* Keys with value v, ascending; *n receives the count, up to cap written. */
int st_index_find(strata_table_t *t, st_prop *p, const strata_value *v, int64_t *keys,
                  size_t cap, size_t *n, strata_error *err);
/* The index holds every object (false for a direct primary key: only ==/IN lookups apply). */
static inline bool st_index_complete(const st_prop *p) { return !(p->flags & ST_PROP_PK_DIRECT); }
/* p keeps an index tree: a plain one or a full-text one (fulltext.c). */
static inline bool st_prop_has_index(const st_prop *p) {
    return p->flags & (STRATA_PROP_INDEXED | STRATA_PROP_FULLTEXT);
}
/* Index range and prefix walks for the query engine: lo/hi (NULL: unbounded, nulls excluded)
 * with their inclusivity, or a string prefix. visit gets the keys in index order (value, then
 * key); a non-zero return stops the walk and is returned. */
typedef struct st_index_bounds {
    const strata_value *lo, *hi;
    bool lo_incl, hi_incl;
    const strata_value *prefix;
    bool with_nulls;         /* no bounds: walk nulls too (first), for ordered walks */
    bool *saw_truncated;     /* set when a string entry holds only a prefix (order among equal
                                prefixes is then by key, not by value) */
} st_index_bounds;
typedef int (*st_index_visit)(void *arg, int64_t key);
int st_index_scan(strata_table_t *t, st_prop *p, const st_index_bounds *b, st_index_visit visit,
                  void *arg, strata_error *err);
/* words.c: the words of a UTF-8 text, folded (see its top comment), with their positions.
 * visit's non-zero result ends the walk and is returned; STRATA_ERR_NO_MEMORY when out of it. */
typedef int (*st_word_visit)(void *arg, const uint8_t *word, size_t len, size_t pos);
int st_words_each(const uint8_t *text, size_t len, st_word_visit visit, void *arg);

/* fulltext.c: visit the postings of `word` in full-text property p — each object whose value
 * holds it (prefix: a word that begins with it), with the word's n positions there, ascending
 * (n == ST_WORD_POS_UNKNOWN: it occurs more often than the index keeps positions for) — in index
 * order (word, then key; a prefix visits an object once per word it matches). A non-zero result
 * of visit ends the walk and is returned. *exact false: the index cannot tell long words apart,
 * and a candidate's text decides. */
#define ST_WORD_POS_UNKNOWN UINT32_MAX
typedef int (*st_posting_visit)(void *arg, int64_t key, const uint32_t *pos, uint32_t n);
int st_fulltext_scan(strata_table_t *t, st_prop *p, const uint8_t *word, size_t len, bool prefix,
                     st_posting_visit visit, void *arg, bool *exact, strata_error *err);
/* How many chunks hold the postings of `word` (or of the words with that prefix), counted up to
 * cap: a cheap measure of how many objects hold it (a chunk holds 1 to 256). */
int st_fulltext_chunks(strata_table_t *t, st_prop *p, const uint8_t *word, size_t len, bool prefix,
                       size_t cap, size_t *n, strata_error *err);

/* Order of two values of one indexable type (strings: bytes, i.e. code points). */
int st_value_cmp(const strata_value *a, const strata_value *b);
/* A short printable form of a value for error messages. */
void st_value_describe(const strata_value *v, char *buf, size_t cap);

/* object.c */
/* The checks a value needs whatever it is for (obj_set, lists, primary keys, index lookups,
 * query arguments): a known type, bytes not at NULL, sizes within limits, valid UTF-8, a
 * timestamp's nanoseconds in range, a list's items (not lists) checked the same way. `what`
 * names the value in the message ("'Person.name'", "query argument $2"). */
int st_value_shape(const strata_value *v, const char *what, strata_error *err);
/* st_value_shape, then the value against property p (element: of its list), normalized into
 * *norm (INT for FLOAT/DOUBLE, a bool's byte, "" for empty bytes at NULL). */
int st_value_check(strata_table_t *t, const st_prop *p, const strata_value *v, bool element,
                   strata_value *norm, strata_error *err);
int st_obj_set_value(strata_table_t *t, int64_t key, st_prop *p, const strata_value *v,
                     strata_error *err);
int st_obj_delete(strata_table_t *t, int64_t key, strata_error *err);
int st_obj_create(strata_table_t *t, const strata_value *pk, int64_t *key, strata_error *err);
int st_list_load(strata_table_t *t, const st_prop *p, uint64_t list_id, strata_value **vals,
                 size_t *n, strata_error *err);
/* st_list_load, and for a map (keys not NULL) its keys, ascending, as STRING values. */
int st_list_load_keyed(strata_table_t *t, const st_prop *p, uint64_t list_id, strata_value **vals,
                       strata_value **keys, size_t *n, strata_error *err);
/* Load the list property col of object key: *p the property, *id its list id (0: empty). */
int st_list_open(strata_table_t *t, int64_t key, uint32_t col, st_prop **p, uint64_t *id,
                 strata_value **v, strata_value **keys, size_t *n, strata_error *err);
/* Store the new contents of list `id` of (t, key, p) (keys: a map's, else NULL); an empty list
 * has no storage and id 0 in its column; a list gaining its first element gets a new id. */
int st_list_write(strata_table_t *t, int64_t key, st_prop *p, uint64_t id, const strata_value *v,
                  const strata_value *keys, size_t n, strata_error *err);
/* Compare a map key (a STRING value) with bytes: memcmp order, a prefix first. */
int st_map_key_cmp(const strata_value *a, const void *b, size_t blen);
/* map.c: one operation on the map property col of object key, by map key (mk) or position. */
typedef enum st_map_edit { ST_MAP_SET, ST_MAP_GET, ST_MAP_ERASE, ST_MAP_KEY_AT } st_map_edit;
int st_map_op(strata_table_t *t, int64_t key, uint32_t col, st_map_edit op, const strata_value *mk,
              size_t index, const strata_value *value, bool *changed, strata_value *out,
              strata_error *err);
/* The position of mk among the ascending keys[0, n): *found, or where it would go. */
size_t st_map_key_search(const strata_value *keys, size_t n, const strata_value *mk, bool *found);
/* The object value v of property p links to: a LINK of a link property, or a TYPED_LINK (a
 * mixed value's); its table (*key its key), or NULL when v links to nothing. */
static inline strata_table_t *st_link_target(const strata_table_t *t, const st_prop *p,
                                             const strata_value *v, int64_t *key) {
    if (v->type == STRATA_TYPE_LINK && p->type == STRATA_TYPE_LINK) {
        *key = v->u.link;
        return st_table_by_id(t->store, p->target);
    }
    if (v->type == STRATA_TYPE_TYPED_LINK) {
        *key = v->u.typed_link.key;
        return st_table_by_id(t->store, v->u.typed_link.table);
    }
    return NULL;
}
/* Add delta to the backlink of what v links to from (t, p, okey); nothing when it links to nothing. */
int st_backlink_of(strata_table_t *t, const st_prop *p, const strata_value *v, int64_t okey,
                   int delta, strata_error *err);
/* Whether property p may hold links: a link, or a mixed value (typed links). */
static inline bool st_prop_links(const st_prop *p) {
    return p->type == STRATA_TYPE_LINK || p->type == STRATA_TYPE_MIXED;
}

/* decimal.c: two decimal128 values by the numbers they stand for (*ok false when either is NaN). */
int st_decimal_cmp(const strata_value *a, const strata_value *b, bool *ok);
/* decimal.c: a + b, rounded half to even to 34 digits (NaN with a NaN or +inf + -inf). */
void st_decimal_add(const strata_value *a, const strata_value *b, strata_value *out);
/* a / n (n > 0), rounded half to even to 34 digits. */
void st_decimal_div(const strata_value *a, uint64_t n, strata_value *out);

/* list_lookup.c */
void st_list_cache_free(st_list_cache *c);
/* The size of list `id` (its first u32; 0 for id 0), without decoding it. */
int st_list_record_size(strata_table_t *t, const st_prop *p, uint64_t id, size_t *n, strata_error *err);
/* The position of the checked value nv in set `id`: *found, *at. */
int st_set_lookup(strata_table_t *t, const st_prop *p, uint64_t id, const strata_value *nv,
                  size_t *at, bool *found, strata_error *err);
/* Read transactions: the position and value (may be NULL) of key mk in map `id`. */
int st_map_lookup(strata_table_t *t, const st_prop *p, uint64_t id, const strata_value *mk,
                  size_t *at, bool *found, strata_value *value, strata_error *err);
/* embedded.c: tables whose objects are owned by one parent each. */
#define ST_TABLE_EMBEDDED 1u
static inline bool st_table_embedded(const strata_table_t *t) { return t && (t->tflags & ST_TABLE_EMBEDDED); }
/* Whether any object links to object key of t. */
int st_backlinks_any(strata_table_t *t, int64_t key, bool *any, strata_error *err);
/* Before a link to (target, tkey) is stored: refused (STRATA_ERR_EXISTS, naming the parent) when
 * target is embedded and the object already has a parent. */
int st_embedded_claim(strata_table_t *target, int64_t tkey, strata_error *err);
/* After the last link to (target, tkey) went: an embedded object without parent is deleted. */
int st_embedded_orphaned(strata_table_t *target, int64_t tkey, strata_error *err);
/* An object created in an embedded table: remembered for the commit's sweep. */
int st_embedded_created(strata_table_t *t, int64_t key, strata_error *err);
/* How many parents object key of t has: 0, 1, or 2 for "more than one" (repeats counted). */
int st_embedded_parents(strata_table_t *t, int64_t key, int *n, strata_error *err);
/* At commit: embedded objects created in this transaction that no parent links to are deleted. */
int st_embedded_sweep(st_store *store, strata_error *err);
/* Make t embedded (every object must then have exactly one parent; with delete_orphans those
 * with none are deleted, else they are refused naming one) or top-level again. */
int st_table_set_embedded(strata_table_t *t, bool embedded, bool delete_orphans, strata_error *err);
/* A map key's checks (UTF-8, no '.', not starting with '$'), naming the property. */
int st_map_key_check(strata_table_t *t, const st_prop *p, const strata_value *mk, strata_error *err);
/* The object and property a stored list names as its owner (its last 16 bytes, object.c);
 * false when it has none (written before 0.7.0). A claim is checked by its caller. */
#define ST_LIST_OWNER_SIZE 16u
#define ST_LIST_OWNER_MAGIC 0x4c4f574eu /* "NWOL" little-endian: "list owner" */
bool st_list_owner(const uint8_t *b, size_t len, int64_t *key, uint32_t *col);
/* One operation on the list property col of object key: its size, the element at a, insert at
 * a, replace a, move a → b, remove a, clear. */
typedef enum st_list_edit {
    ST_LIST_SIZE, ST_LIST_GET, ST_LIST_INSERT, ST_LIST_REPLACE, ST_LIST_MOVE, ST_LIST_REMOVE,
    ST_LIST_CLEAR,
    ST_SET_FIND /* *size_out = the position of value, or STRATA_ERR_NOT_FOUND (quietly: err untouched) */
} st_list_edit;
int st_list_op(strata_table_t *t, int64_t key, uint32_t col, st_list_edit op, size_t a, size_t b,
               const strata_value *value, size_t *size_out, strata_value *out, strata_error *err);
int st_backlinks_list(strata_table_t *t, int64_t key, strata_table_t *origin, uint32_t col,
                      int64_t *keys, size_t cap, size_t *count, strata_error *err);

/* verify_objects.c: tables, indexes, links, backlinks and lists of txn's snapshot agree. */
int st_verify_objects(strata_txn_t *txn, strata_error *err);
/* verify_pages.c: every page of txn's snapshot reached once, intact (pagecheck.c's rules),
 * through the catalog, every tree and every cluster record's column leaves and big values. */
int st_verify_pages(strata_txn_t *txn, strata_error *err);
/* changes.c: the objects of `table` deleted, inserted and modified from older's version to
 * newer's (strata_changes_get). */
int st_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table,
                   strata_changes_t **out, strata_error *err);
size_t st_changes_count(const strata_changes_t *c, int kind);
int64_t st_changes_key(const strata_changes_t *c, int kind, size_t i);
bool st_changes_changed(const strata_changes_t *c, size_t i, uint32_t col);
uint64_t st_changes_pages(const strata_changes_t *c);
void st_changes_free(strata_changes_t *c);
/* Whether two values are the same (type and value; strings and bytes by content). */
bool st_value_same(const strata_value *a, const strata_value *b);
/* list_changes.c: the elements of one list deleted (indices in older's list) and inserted
 * (indices in newer's) between two versions (strata_list_changes_get). */
int st_list_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table, int64_t key,
                        uint32_t col, strata_list_changes_t **out, strata_error *err);
size_t st_list_changes_count(const strata_list_changes_t *c, int kind);
size_t st_list_changes_index(const strata_list_changes_t *c, int kind, size_t i);
void st_list_changes_free(strata_list_changes_t *c);
/* copy_objects.c: every tree of the copy's source version, with the column pages and big
 * values of cluster records, into the copy (st_copy_fn, handed to st_db_write_copy and
 * st_db_compact). */
int st_copy_objects(st_copier *c, pgno_t *catalog_root, uint64_t *catalog_count, strata_error *err);
/* Recovery's check of an unsynced version (st_check_unsynced_fn, handed to st_db_open). */
int st_verify_unsynced(strata_db_t *db, const st_meta *m, const st_meta *d, strata_error *err);

#endif
