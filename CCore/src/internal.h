/*
 * internal.h — the types every subsystem of the core shares: the database handle, the
 * transaction, trees and cursors, and the error helpers. Nothing here is exported.
 *
 * Subsystems (one .c each): error, os (files, map, locks, in-memory stores), readers (the lock
 * file), pager (meta slots, pages, free space, commit), btree, verify, api_db, api_tree.
 */
#ifndef STRATA_INTERNAL_H
#define STRATA_INTERNAL_H

#include "strata.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>

typedef uint64_t pgno_t;

#define ST_PAGE_SIZE 4096u
#define ST_FORMAT_VERSION 4u         /* written by every commit; 4 adds the commit log */
#define ST_FORMAT_OLDEST_READ 1u     /* read: 1 lacks direct primary keys, 1 and 2 key heads */
#define ST_MAX_DEPTH 32

/* ------------------------------------------------------------------ errors (error.c) */

/* Fill err (never NULL inside the core) and return code. */
int st_err(strata_error *err, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Errno of a failed system call → STRATA_ERR_NO_SPACE or STRATA_ERR_IO, with the message. */
int st_err_errno(strata_error *err, int errnum, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The one corruption path: every failed check of on-disk data goes through it (one breakpoint). */
int st_corrupt_at(strata_error *err, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
#define ST_CORRUPT(err, ...) st_corrupt_at((err), __FILE__, __LINE__, __VA_ARGS__)

/* ------------------------------------------------------------------ on-disk meta (pager.c) */

/* One meta slot: page 0 holds slot 0, page 1 holds slot 1. Layout in FORMAT.md. */
typedef struct st_meta {
    uint64_t checksum;       /* XXH3-64 of bytes [8, sizeof(st_meta)) */
    char magic[8];           /* "STRATADB" */
    uint32_t format_version;
    uint32_t page_size;
    uint64_t version;        /* the transaction that wrote this slot */
    uint64_t page_count;     /* pages [0, page_count) are in use or free */
    uint64_t catalog_root;   /* root page of the catalog tree, 0 when empty */
    uint64_t catalog_count;  /* entries in the catalog (trees) */
    uint64_t freelist_head;  /* first free-list page, 0 when none */
    uint64_t free_count;     /* free page entries in the free list */
    uint64_t durable_version; /* the newest version known durable when this one was written */
    uint32_t flags;          /* ST_META_DURABLE: every page was synced before this meta */
    uint32_t reserved0;
    uint64_t log_salt;       /* the commit log's generation (commitlog.c), 0 before any */
    uint64_t log_end;        /* where the log's next record goes */
    uint64_t log_base;       /* the durable version the log's records start from */
    uint64_t db_id;          /* random, made with the file (or its first checkpoint of format
                                4): a commit log of another database is never replayed */
    uint64_t reserved[1];
} st_meta;
_Static_assert(sizeof(st_meta) == 128, "st_meta is 128 bytes on disk");

/* ------------------------------------------------------------------ storage (os.c) */

#define ST_META_DURABLE 1u
/* A FULL commit written with one sync: pages and meta, then one fdatasync before it is
 * published. Durable once published; the first open after a crash checks its pages. */
#define ST_META_SYNCED 2u
/* A FULL commit whose pages were written without sync and whose record in the commit log was
 * synced (commitlog.c): durable once published; after a crash the first open replays the log
 * onto the durable version. */
#define ST_META_LOGGED 4u
/* NO_SYNC mode makes the current version durable after this many commits without a sync. */
#define ST_NO_SYNC_EVERY 256u

typedef struct st_memstore st_memstore; /* an in-memory database shared by identifier */

typedef struct st_readers st_readers;   /* readers.c */

/* ------------------------------------------------------------------ dirty pages (pager.c) */

typedef struct st_dirty {
    pgno_t pgno;      /* 0 = empty slot */
    uint32_t npages;  /* 1, or the length of an overflow run */
    uint8_t *buf;     /* npages * page size bytes */
    pgno_t base;      /* the committed page this one is a copy of, 0 for a new page */
} st_dirty;

typedef struct st_dirty_map {
    st_dirty *slots;
    size_t cap;       /* power of two */
    size_t count;
} st_dirty_map;

typedef struct st_free_entry {
    pgno_t pgno;
    uint64_t version; /* the version that freed it */
} st_free_entry;

typedef struct st_free_vec {
    st_free_entry *v;
    size_t n, cap;
} st_free_vec;

/* The free list of one version as loaded (layout in pager.c): entries in chain order, split
 * into leaves, listed by directory pages. */
typedef struct st_freelist {
    st_free_vec entries;
    size_t *leaf_start;      /* nleaves + 1 offsets into entries */
    pgno_t *leaf_pgno;
    size_t nleaves;
    pgno_t *dir_pgno;
    size_t ndirs;
} st_freelist;

/* The page maps below (bits, held, leaf_of) are kept by the handle between its commits and
 * extended by each write transaction with the entries that became reusable since (`mapped`):
 * building them from the whole list cost ~7 us a commit with 9,000 free pages. */
typedef struct st_reuse_map {
    uint64_t *bits;        /* bit p: page p is a reusable entry not taken yet */
    uint64_t *held;        /* bit p: a reusable-by-age entry held for the durable version */
    pgno_t *leaf_of;       /* page -> the list leaf holding its entry (where bits or held) */
    size_t npages;         /* pages the maps cover */
    uint64_t mapped;       /* entries freed by versions up to this one are in the maps */
    uint64_t durable;      /* the durable version `held` was decided for */
} st_reuse_map;

typedef struct st_leaf_ref {
    pgno_t pgno;           /* a free-list leaf's page */
    size_t index;          /* its place in the list */
} st_leaf_ref;

/* How a write transaction reuses free pages (freelist.c), built on its first take. Small
 * transactions take runs of adjacent pages so that a commit's writes stay few and contiguous. */
typedef struct st_reuse {
    bool ready;
    size_t reusable;       /* entries [0, reusable) are old enough to reuse */
    st_reuse_map map;
    uint32_t *leaf_taken;  /* per leaf of the list: entries taken from it */
    st_leaf_ref *leaf_by_pgno; /* the leaves sorted by page (take_bit finds leaf_of's) */
    size_t ntaken;         /* pages taken from the list */
    pgno_t run_next, run_end; /* the run of adjacent free pages being used */
    /* Searches: no run of at least m free pages starts before run_scan[m] (m = 1..8, the
     * longest run looked for, ST_REUSE_MIN_RUN) other than the one being used; no lone page
     * is left before lone_scan. */
    pgno_t run_scan[9];
    pgno_t lone_scan;
    pgno_t short_scan;     /* no run shorter than the small-commit run starts before it */
    /* Pages that became reusable since those positions were found: runs and lone pages through
     * them are looked for first (nfresh < 0: too many; the positions were moved back instead). */
    pgno_t fresh[32];
    int nfresh;
} st_reuse;

/* Where the last commit's searches for free pages stopped, so the next transaction need not
 * scan again past what it already found unusable (freelist.c, st_reuse_hints_save). */
typedef struct st_reuse_hints {
    bool valid;
    pgno_t run_scan[9], lone_scan;
    uint64_t cutoff;       /* entries freed by versions up to this one were in that map */
} st_reuse_hints;

/* ------------------------------------------------------------------ handles */

struct strata_db {
    char *path;
    strata_options opts;
    strata_io_methods io;
    int fd;                  /* database file, -1 in memory mode */
    uint8_t *map;            /* reserved range; the file (or memory store) mapped at its start */
    uint64_t map_size;
    _Atomic uint64_t file_size; /* bytes the file has (grown in chunks) */
    st_readers *readers;     /* the lock file (or its in-memory twin) */
    st_memstore *mem;        /* memory mode only */
    pthread_mutex_t write_mutex; /* writer exclusion between this handle's threads */
    pthread_mutex_t state_mutex; /* guards open_txns, broken and the free-list cache */
    int open_txns;
    bool broken;             /* a failed meta rollback: writes refused until reopen */
    bool unsynced;           /* this handle committed without syncing the file (NO_SYNC or
                                logged) since its last sync */
    char broken_why[200];
    /* Free-list cache: the free list of version `free_cache_version`, as the last commit of
     * this handle wrote it, handed to the next write transaction so that it need not read it
     * back (that transaction's commit hands its own back; an abort leaves none). */
    uint64_t free_cache_version;
    st_freelist free_cache;
    bool free_cache_valid;
    uint64_t last_write_pages; /* pages the last committed write transaction took (a hint) */
    st_reuse_hints reuse_hints; /* guarded by the writer lock */
    st_reuse_map reuse_map;  /* the free-list cache's page maps, handed over with it */
    int log_fd;              /* the commit log (<path>.log), opened by the first logged commit */
    bool log_direct;         /* log_fd bypasses the page cache (os.c) */
    uint64_t log_bytes;      /* the open log file's size (commitlog.c uses whole blocks of it) */
    /* The record being built (commitlog.c), aligned to ST_LOG_BLOCK: block 0 for the log's
     * header, then the record from its offset in its first block on. After a commit its last
     * block is moved to block 1: the log's bytes before the next record (log_tail_*). */
    uint8_t *log_buf;
    size_t log_buf_cap;
    uint64_t log_retract_at; /* a failed commit's record not yet retracted (0: none) */
    uint64_t log_tail_version, log_tail_salt, log_tail_end; /* the record ending in block 1 */
    /* The log's header as this handle last wrote or read it (salt 0: unknown). */
    uint64_t log_header_salt, log_header_base, log_header_id;
};

typedef struct st_tree_state {
    pgno_t root;
    uint64_t count;
    uint8_t kind;            /* strata_key_kind */
    uint8_t tflags;          /* ST_TREE_*: stored in the catalog record */
} st_tree_state;

#define ST_TREE_CLUSTERS 1   /* values are cluster records that own column pages (cluster.c) */

struct strata_tree {
    strata_txn_t *txn;
    struct strata_tree *next;   /* the transaction's list of open trees */
    char name[STRATA_MAX_TREE_NAME + 1];
    size_t name_len;
    st_tree_state st;
    bool dirty;              /* state changed: written to the catalog at commit */
    bool dropped;
    bool stale;              /* its read transaction was refreshed */
    bool is_catalog;
    uint64_t mod_count;      /* bumped by every change; cursors re-seek when it moves */
    struct st_leafdir *leafdir; /* read transactions: its leaves, for searches (leafdir.c) */
};

typedef struct st_cursor_level {
    pgno_t pgno;
    const uint8_t *page;
    int idx;
} st_cursor_level;

struct strata_cursor {
    strata_tree_t *tree;
    struct strata_cursor *next; /* the transaction's list of cursors */
    st_cursor_level path[ST_MAX_DEPTH];
    int depth;               /* levels in path; 0 = unpositioned */
    bool positioned;
    uint64_t mod_count;      /* tree->mod_count when path was built */
    uint8_t key_copy[STRATA_MAX_KEY]; /* the current key, to re-seek after a change */
    size_t key_copy_len;
};

enum { ST_TXN_ACTIVE = 1, ST_TXN_ENDED = 2, ST_TXN_FAILED = 3 };

struct strata_txn {
    strata_db_t *db;
    bool write;
    int state;
    char failed_why[200];
    st_meta meta;            /* the version read (for a write: the base, updated at commit) */
    int reader_slot;         /* read transactions: the slot in the lock file, -1 for none */
    strata_tree_t catalog;   /* the catalog tree: name → tree record */
    strata_tree_t *trees;    /* open user trees */
    strata_cursor_t *cursors;
    /* write transactions only */
    uint64_t new_version;
    uint64_t page_count;     /* grows as pages are taken from the end */
    uint64_t oldest_reader;  /* pages freed by versions <= this may be reused */
    uint64_t durable_version; /* newest version whose pages are all on disk */
    int meta_slot;           /* where the new meta goes: never the durable version's slot */
    bool logged;             /* FULL on a file: the commit syncs a log record (commitlog.c) */
    st_dirty_map dirty;
    st_freelist fl;          /* the base version's free list */
    st_reuse reuse;          /* which of its entries this transaction has taken */
    st_reuse_hints hints_out; /* where its searches stopped: the handle's hints if it commits */
    st_reuse_map reuse_out;  /* the page maps after its list was saved: the handle's if it commits */
    uint64_t pages_taken;    /* pages taken from free space or the end of the file */
    st_free_vec own;         /* pages this transaction made and then freed: reusable at once */
    st_free_vec freed;       /* committed pages this transaction stopped using */
    bool holds_lock;
    struct st_objstore *os;      /* the object layer's state, loaded on first use */
    struct st_objstore *os_dead; /* states replaced by refresh (their handles answer "stale") */
};

/* ------------------------------------------------------------------ small helpers */

static inline uint64_t st_rd64(const void *p) { uint64_t v; memcpy(&v, p, 8); return v; }
static inline uint32_t st_rd32(const void *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static inline uint16_t st_rd16(const void *p) { uint16_t v; memcpy(&v, p, 2); return v; }
static inline void st_wr64(void *p, uint64_t v) { memcpy(p, &v, 8); }
static inline void st_wr32(void *p, uint32_t v) { memcpy(p, &v, 4); }
static inline void st_wr16(void *p, uint16_t v) { memcpy(p, &v, 2); }
/* A byte key's first 8 bytes as a big-endian number, zero past its end: a < b gives
 * head(a) <= head(b), so comparing heads first reads the keys only on ties. */
static inline uint64_t st_key_head8(const uint8_t *k, size_t len) {
    uint64_t h = 0;
    for (size_t i = 0; i < 8; i++) h = h << 8 | (i < len ? k[i] : 0);
    return h;
}

int st_free_vec_push(st_free_vec *fv, pgno_t pgno, uint64_t version);
void st_free_vec_clear(st_free_vec *fv);
void st_freelist_clear(st_freelist *fl);

/* A txn that must be active (and writable when `write`); fills err otherwise. */
int st_txn_check(const strata_txn_t *txn, bool write, strata_error *err);
/* Mark a write transaction failed: from now on it can only be aborted. Returns code. */
int st_txn_fail(strata_txn_t *txn, int code);

#endif
