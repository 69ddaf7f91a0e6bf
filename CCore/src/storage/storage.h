/*
 * storage.h — the door of the storage layer: pages of one file in copy-on-write versions. It
 * owns the meta slots and the commit protocol (pager.c), free space tagged by version
 * (freelist.c), the commit log (commitlog.c), the lock file's reader slots and writer lock
 * (readers.c), the life of a database handle (db.c) and of a transaction (txn.c), the page
 * accounting of an integrity walk (pagecheck.c), each page checked (an encrypted file's opened
 * into the view) before first use (pagetrust.c), copies and compaction (copy.c), packed (LZ4)
 * pages with their cache (packed.c), encryption: keys, sealing and opening (cipher.c), and what
 * read transactions derive from a committed tree, kept for later ones (readshare.c). The page
 * format it exports is in page.h.
 *
 * Private to the folder: pager.h, freelist.h, commitlog.h, readers.h, packed.h, cipher.h.
 *
 * The transaction handle is defined here; the layers above keep their state in it behind the
 * pointers at its end (storage never looks inside them).
 */
#ifndef STRATA_STORAGE_H
#define STRATA_STORAGE_H

#include "base/base.h"
#include "os/os.h"
#include "storage/page.h"

/* The newest format read; 4 adds the commit log, 5 packed pages, 6 mixed indexes, 7 maps, 8
 * full-text indexes, 9 encryption, 10 (plain) and 11 (encrypted) copies in log records, 12
 * (plain) and 13 (encrypted) timestamp leaves as two packed arrays (objects/column.c), 14
 * (plain) and 15 (encrypted: its meta MAC covers the delta) the free-list delta in meta pages
 * and log records (freelist.c). */
#define ST_FORMAT_VERSION 15u
#define ST_FORMAT_PLAIN 14u          /* written by every commit of a file without encryption */
#define ST_FORMAT_ENCRYPTED 15u      /* written by every commit of an encrypted file (cipher.c) */
#define ST_FORMAT_ENCRYPTED_9 9u     /* encrypted files written before format 12 */
#define ST_FORMAT_ENCRYPTED_11 11u
#define ST_FORMAT_ENCRYPTED_13 13u   /* encrypted files written before the delta */
#define ST_FORMAT_OLDEST_READ 1u     /* read: 1 lacks direct primary keys, 1 and 2 key heads */
#define ST_MAP_SIZE_MAX (1ull << 46) /* 64 TiB: the most a 47-bit user address space can map */
#define ST_SPARE_PAGES 32            /* page buffers a handle keeps between write transactions */
/* strata_options.unpacked_cache_bytes by default: 32 MiB (16 pages in debug builds, so that the
 * tests go through eviction; packed.c). */
#ifdef ST_DEBUG
#define ST_UNPACKED_DEFAULT_BYTES (16u * ST_PAGE_SIZE)
#else
#define ST_UNPACKED_DEFAULT_BYTES (32u << 20)
#endif

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
    uint32_t packed_live;    /* packed pages this version reaches (format 5; packed.c) */
    uint64_t log_salt;       /* the commit log's generation (commitlog.c), 0 before any */
    uint64_t log_end;        /* where the log's next record goes */
    uint64_t log_base;       /* the durable version the log's records start from */
    uint64_t db_id;          /* random, made with the file (or its first checkpoint of format
                                4): a commit log of another database is never replayed */
    uint64_t packed_region;  /* first page of the packed region, 0 when there is none */
} st_meta;
_Static_assert(sizeof(st_meta) == 128, "st_meta is 128 bytes on disk");

/* ------------------------------------------------------------------ meta flags */

#define ST_META_DURABLE 1u
/* A FULL commit written with one sync: pages and meta, then one fdatasync before it is
 * published. Durable once published; the first open after a crash checks its pages. */
#define ST_META_SYNCED 2u
/* A FULL commit whose pages were written without sync and whose record in the commit log was
 * synced (commitlog.c): durable once published; after a crash the first open replays the log
 * onto the durable version. */
#define ST_META_LOGGED 4u
/* With ST_META_LOGGED: the record was appended without a sync (strata_txn_commit_unsynced, group
 * commit); strata_db_sync_commits syncs the log, covering every record before it. After a power
 * loss its record, and those of the pending versions after it, may be missing: recovery then
 * reopens at the last version the log rebuilds and reports the rest dropped, as for NO_SYNC
 * commits (format 7 files: an older library refuses such a file rather than lose them). */
#define ST_META_LOG_PENDING 8u
/* Format 14 (15 encrypted): the meta page holds a free-list delta after the meta (freelist.c):
 * what changed in the free list since its pages were last written. */
#define ST_META_FREE_DELTA 16u
/* NO_SYNC mode makes the current version durable after this many commits without a sync. */
#define ST_NO_SYNC_EVERY 256u
/* A write transaction syncs first when at least this many pages, and an eighth of the file,
 * are held back for the durable version (pager.c). */
#define ST_HELD_SYNC_MIN 64u
/* Pages kept allocated past the end of the data (a sixteenth of it, within these bounds) for
 * commits that free as much as they take: on a full disk deletes still commit (pager.c). */
#define ST_RESERVE_MIN 32u
#define ST_RESERVE_MAX 1024u
/* What such a commit may have taken beyond what it freed at any moment (a copy is taken
 * before its original is freed, a rewritten node before the old ones go); at commit it must
 * have freed at least what it took. */
#define ST_RESERVE_SLACK 64

typedef struct st_readers st_readers;   /* the lock file (readers.c) */

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

/* ------------------------------------------------------------------ the free-list delta */

/* A meta page's bytes from ST_DELTA_OFF on (after the meta and an encrypted file's header,
 * cipher.h) are its delta image: with ST_META_FREE_DELTA, the free-list delta (layout in
 * freelist.c), else bytes of no meaning. A commit log record carries the image's changes. */
#define ST_DELTA_OFF 192u
#define ST_DELTA_BYTES (ST_PAGE_SIZE - ST_DELTA_OFF)

/* The free-list delta of a version: the entries of its saved list (the pages the meta's
 * freelist_head leads to) that commits since the save took, by index in the list, and the
 * pages they freed (in version order, each after every saved entry). The version's free list
 * is the saved one without the taken entries, then the freed ones. */
typedef struct st_fl_delta {
    uint32_t *taken;
    size_t ntaken;
    st_free_vec freed;
} st_fl_delta;

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
    st_leaf_ref *leaf_slots; /* the leaves by page, open addressing (take_bit finds leaf_of's) */
    size_t leaf_mask;      /* leaf_slots has leaf_mask + 1 slots, a power of two; page 0: empty */
    size_t ntaken;         /* pages taken from the list (the delta's taken entries too) */
    /* A bit per entry of the list, then per freed page of the base version's delta: taken
     * (by the delta, or by this transaction where it says which: freed pages, and the list's
     * while took holds them). */
    uint64_t *dtaken;
    struct { uint32_t *v; size_t n, cap; } took; /* those this transaction took, in order */
    bool took_full;        /* more than a delta holds: the commit saves the list */
    bool delta_bad;        /* the delta or a take contradicts the list: never save it */
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
    /* 1 + the index of the leaf cold copies take their pages from first (0: none): the one
     * the last cold copy took from, this commit's or the handle's last (freelist.c, take_cold). */
    size_t cold_leaf;
} st_reuse;

/* Where the last commit's searches for free pages stopped, so the next transaction need not
 * scan again past what it already found unusable (freelist.c, st_reuse_hints_save). */
typedef struct st_reuse_hints {
    bool valid;
    pgno_t run_scan[9], lone_scan;
    uint64_t cutoff;       /* entries freed by versions up to this one were in that map */
    pgno_t cold_leaf;      /* the leaf now holding the rest of the one a cold copy took from */
} st_reuse_hints;

/* ------------------------------------------------------------------ handles */

struct strata_db {
    st_file file;            /* the database file, its map and the commit log (os layer) */
    st_readers *readers;     /* the lock file (or its in-memory twin) */
    _Atomic uint32_t *trust; /* per page: the version stamp it was checked with (pagetrust.c);
                                NULL when pages are not checked (memory mode, trust_pages) */
    uint64_t trust_pages;    /* entries of trust */
    pthread_mutex_t write_mutex; /* writer exclusion between this handle's threads */
    pthread_mutex_t state_mutex; /* guards open_txns, broken and the free-list cache */
    int open_txns;
    bool broken;             /* a failed meta rollback: writes refused until reopen */
    bool compacting;         /* st_db_compact runs: new transactions are refused (BUSY) */
    _Atomic bool waits_stopped; /* strata_db_stop_waits: waits return at once (readers.c) */
    bool tail_held;          /* the last commit found the file's free end held for the durable
                                version: the next write syncs first (guarded by the writer lock) */
    bool unsynced;           /* this handle committed without syncing the file (NO_SYNC or
                                logged) since its last sync */
    char broken_why[200];
    strata_recovery recovery; /* what opening this handle recovered (st_pager_recover) */
    /* Free-list cache: the free list of version `free_cache_version`, as the last commit of
     * this handle wrote it, handed to the next write transaction so that it need not read it
     * back (that transaction's commit hands its own back; an abort leaves none). */
    uint64_t free_cache_version;
    st_freelist free_cache;
    st_fl_delta free_cache_delta; /* its delta, and the meta page's delta image (ST_DELTA_BYTES) */
    uint8_t *free_cache_image;
    bool free_cache_valid;
    uint64_t last_write_pages; /* pages the last committed write transaction took (a hint) */
    st_reuse_hints reuse_hints; /* guarded by the writer lock */
    /* Page buffers of ended write transactions, kept for the next one's copies (guarded by the
     * writer lock): a small commit allocated, zeroed and freed ~14 of them. */
    uint8_t *spare_pages[ST_SPARE_PAGES];
    int nspare;
    st_reuse_map reuse_map;  /* the free-list cache's page maps, handed over with it */
    /* The record being built (commitlog.c), aligned to ST_LOG_BLOCK: block 0 for the log's
     * header, then the record from its offset in its first block on. After a commit its last
     * block is moved to block 1: the log's bytes before the next record (log_tail_*). */
    uint8_t *log_buf;
    size_t log_buf_cap;
    uint64_t log_retract_at; /* a failed commit's record not yet retracted (0: none) */
    uint64_t log_tail_version, log_tail_salt, log_tail_end; /* the record ending in block 1 */
    /* The log's header as this handle last wrote or read it (salt 0: unknown). */
    uint64_t log_header_salt, log_header_base, log_header_id;
    /* The log could not be made (a full disk): FULL commits sync the file instead until this
     * version, then try again (commitlog.c). */
    uint64_t log_retry_version;
    /* strata_db_sync_commits syncs the log without the writer lock: how many do now, and a
     * compaction about to close the log waits for them (copy.c). */
    _Atomic int log_syncers;
    _Atomic uint64_t log_synced; /* every version up to it made durable by a log sync of this
                                  * handle (st_pager_sync_commits); 0 after a compaction */
    _Atomic bool log_closing;
    struct st_unpacked *unpacked; /* packed pages unpacked for this handle's readers (packed.c) */
    /* Encryption (cipher.c): the file's keys, NULL for a plain file. Pages are read from
     * `view`: the map itself for a plain file; for an encrypted one, memory of the same size
     * that this process owns, where each page is opened (decrypted) the first time it is
     * read with a given version stamp (pagetrust.c). open_locks: one opener of a page at once. */
    struct st_cipher *cipher;
    uint8_t *view;
    pthread_mutex_t open_locks[16];
    /* The meta slots' bytes (meta and encryption header) last authenticated, so that a snapshot
     * compares bytes instead of computing two HMACs (pager.c), and (format 15) the delta image
     * authenticated with each, which a writer compares instead of computing the HMAC again. */
    pthread_mutex_t meta_auth_lock;
    uint8_t meta_auth[2][192];
    uint8_t meta_auth_img[2][ST_DELTA_BYTES];
    bool meta_auth_has_img[2];
    /* Whether another handle (of any process) has published since this one opened
     * (readers.c): until then, an encrypted file's view is current for every page it trusts,
     * and a read checks the view's stamp instead of the file's (one cache line, not two). */
    uint64_t publishes_base;
    _Atomic uint64_t own_publishes;
    _Atomic bool foreign_writes;
    /* What read transactions derived from committed trees, for later ones (readshare.c). */
    pthread_mutex_t share_lock;
    struct st_share_table *shares;
};

enum { ST_TXN_ACTIVE = 1, ST_TXN_ENDED = 2, ST_TXN_FAILED = 3 };

struct strata_txn {
    strata_db_t *db;
    bool write;
    int state;
    char failed_why[200];
    st_meta meta;            /* the version read (for a write: the base, updated at commit) */
    int reader_slot;         /* read transactions: the slot in the lock file, -1 for none */
    struct st_pins *pins;    /* the unpacked pages this transaction reads (packed.c) */
    uint64_t let_go;         /* how many times a scan let go of unpacked column pages */
    /* write transactions only */
    uint64_t new_version;
    uint64_t page_count;     /* grows as pages are taken from the end */
    uint64_t oldest_reader;  /* pages freed by versions <= this may be reused */
    uint64_t durable_version; /* newest version whose pages are all on disk */
    int meta_slot;           /* where the new meta goes: never the durable version's slot */
    bool logged;             /* FULL on a file: the commit syncs a log record (commitlog.c) */
    bool no_sync;            /* STRATA_TXN_NO_SYNC: committed as a NO_SYNC handle's commit */
    bool commit_unsynced;    /* strata_txn_commit_unsynced: this commit is neither logged nor synced */
    st_dirty_map dirty;
    st_freelist fl;          /* the base version's saved free list */
    st_fl_delta delta;       /* the base version's free-list delta (freelist.c) */
    uint8_t *delta_image;    /* the base version's meta page from ST_DELTA_OFF (ST_DELTA_BYTES) */
    uint8_t *delta_out;      /* the same for the version committed (st_freelist_save) */
    bool delta_saved;        /* that version's free list is a delta: no list pages written */
    st_reuse reuse;          /* which of its entries this transaction has taken */
    st_reuse_hints hints_out; /* where its searches stopped: the handle's hints if it commits */
    st_reuse_map reuse_out;  /* the page maps after its list was saved: the handle's if it commits */
    uint64_t pages_taken;    /* pages taken from free space or the end of the file */
    st_free_vec own;         /* pages this transaction made and then freed: reusable at once */
    st_free_vec freed;       /* committed pages this transaction stopped using */
    bool holds_lock;
    int64_t growth;          /* pages taken less pages freed so far */
    int64_t growth_at_save;  /* the same when the commit began to lay out the free list */
    bool room_tried;         /* a full disk made this transaction sync to free space once */
    bool used_reserve;       /* it took pages kept in reserve (it must free what it takes) */
    bool saving;             /* the commit is laying out the free list: no remapping now */
    uint32_t packed_freed;   /* packed pages of the base version this transaction stopped using */
    /* Owned by the layers above (storage never looks inside): */
    struct st_txn_trees *trees;  /* btree/: the catalog, the open trees and cursors */
    struct st_store *store;      /* objects/: the object layer's state, loaded on first use */
    struct st_store *store_dead; /* states replaced by refresh (their handles answer "stale") */
};


/* ------------------------------------------------------------------ pages (pager.c) */

/* A page for reading, asking for its first `lines` cache lines at once before its header is
 * read (a tree page's slots and key heads, so that they arrive together with it): the
 * transaction's own copy if it has one, else the map. Bounds-checked, and checked (number,
 * version, checksum) the first time this process reads it (pagetrust.c). */
int st_page_get_ahead(strata_txn_t *txn, pgno_t pgno, unsigned lines, const uint8_t **page,
                      strata_error *err);

/* A packed page (packed.c): LZ4-compressed, inside the packed region that a compaction wrote.
 * Its reference, where a page number goes, is bit 63 | the byte offset of its compressed bytes
 * in the region << 12 | their length (1 .. 4095). A reader gets it unpacked from st_page_get,
 * which keeps it for the transaction. */
#define ST_PACKED_BIT (1ull << 63)
static inline bool st_pgno_packed(pgno_t p) { return (p & ST_PACKED_BIT) != 0; }
static inline uint64_t st_packed_off(pgno_t p) { return (p & ~ST_PACKED_BIT) >> 12; }
static inline uint32_t st_packed_len(pgno_t p) { return (uint32_t)(p & 0xFFF); }
/* The number a page's header holds: its page number, or for a packed page its reference without
 * the length (known only once the page, header included, is compressed). */
static inline pgno_t st_header_pgno(pgno_t p) { return st_pgno_packed(p) ? p & ~(pgno_t)0xFFF : p; }
static inline bool pg_number_is(const uint8_t *p, pgno_t pgno) {
    return st_rd64(p + PH_PGNO) == st_header_pgno(pgno);
}
int st_packed_get(strata_txn_t *txn, pgno_t ref, const uint8_t **page, strata_error *err);
int st_packed_get_part(strata_txn_t *txn, pgno_t ref, size_t need, const uint8_t **page,
                       strata_error *err);
/* A hint before st_packed_get_part of ref (a scan asks a few clusters ahead): the cache's slot
 * for it is asked for. Never blocks, never fails. */
void st_packed_prefetch(strata_txn_t *txn, pgno_t ref);
/* A scan that keeps nothing it read from a cluster once it has evaluated it (a count, the keys
 * of the matches) lets go of the column pages it unpacked as it goes, so that scanning a packed
 * table holds the unpacked cache's bound, not the table unpacked: st_pins_mark where it
 * begins, st_pins_let_go_columns(txn, mark) after each cluster. Only column pages go (a tree
 * page may hold a cursor's place or a record a directory points at); values read from them
 * before are gone, which is why the transaction counts the times (let_go: the object layer's
 * caches of leaf addresses compare it). Nothing for pages not packed. */
size_t st_pins_mark(const strata_txn_t *txn);
/* (its result: the mark for the next call, past the pages kept) */
size_t st_pins_let_go_columns(strata_txn_t *txn, size_t mark);

/* A page-trust entry for a version stamp: its low 32 bits, never 0 (0 is "not checked": a
 * version whose low bits are 0 shares its entry with the one after it, 2^32 versions apart). */
static inline uint32_t st_stamp_of(uint64_t version) {
    return (uint32_t)version | ((uint32_t)version == 0);
}

/* The check's fast path: page p was checked before with the version stamp it has now. */
static inline bool st_page_trusted(const strata_db_t *db, const uint8_t *p, pgno_t pgno,
                                   uint64_t snapshot) {
    if (!db->trust) return true;
    uint32_t stamp = atomic_load_explicit(&db->trust[pgno], memory_order_acquire);
    if (stamp == 0) return false;
    /* An encrypted file nobody else wrote since this handle opened: the view's stamp (read
     * after the entry: the bytes it guards were written before it was set). */
    if (db->cipher && !atomic_load_explicit(&db->foreign_writes, memory_order_relaxed))
        p = db->view + pgno * ST_PAGE_SIZE;
    uint64_t v = st_rd64(p + PH_VERSION);
    return stamp == st_stamp_of(v) && v <= snapshot;
}
/* Whether bytes lie in committed pages as this process reads them (the view), which stay put
 * while a version reaching them lives (a write transaction's own pages do not). */
static inline bool st_bytes_committed(const strata_db_t *db, const void *b) {
    const uint8_t *p = b;
    return p >= db->view && p < db->view + db->file.map_size;
}

/* st_page_get_ahead without asking ahead; a read transaction's trusted page is found inline. */
static inline int st_page_get(strata_txn_t *txn, pgno_t pgno, const uint8_t **page,
                              strata_error *err) {
    if (!txn->write && pgno >= 2 && pgno < txn->meta.page_count) {
        const uint8_t *p = txn->db->file.map + pgno * ST_PAGE_SIZE;
        if (st_page_trusted(txn->db, p, pgno, txn->meta.version)) {
            *page = txn->db->view + pgno * ST_PAGE_SIZE;
            return STRATA_OK;
        }
    }
    return st_page_get_ahead(txn, pgno, 0, page, err);
}
/* A hint, never a read: ask memory for the cache lines that st_page_get of a read transaction's
 * page and a read of bytes [off, off + len) of it will touch (the page's trust entry and stamp,
 * and those bytes' lines; len 1 for one byte), without waiting for any. Nothing for a write
 * transaction (its own copies are found by st_page_get) or a page outside the snapshot. */
/* (Always inlined: GCC 12 at -O2 finds a function of prefetches alone free of effects and drops
 * the calls to it, so until session 37 a read transaction's prefetch asked for nothing.) */
__attribute__((always_inline)) static inline void st_page_prefetch(const strata_txn_t *txn,
                                                                   pgno_t pgno, unsigned off,
                                                                   unsigned len) {
    if (txn->write || pgno < 2 || pgno >= txn->meta.page_count || off >= ST_PAGE_SIZE) return;
    const strata_db_t *db = txn->db;
    if (db->trust) {
        __builtin_prefetch(&db->trust[pgno]);
        __builtin_prefetch(db->file.map + pgno * ST_PAGE_SIZE + PH_VERSION);
    }
    const uint8_t *p = db->view + pgno * ST_PAGE_SIZE;
    unsigned end = len > ST_PAGE_SIZE - off ? ST_PAGE_SIZE : off + len;
    for (unsigned at = off & ~63u; at < end; at += 64) __builtin_prefetch(p + at);
}
/* The first `need` bytes of a page, for a reader that reads no further (a column leaf's): as
 * st_page_get, but a packed page that this process has checked whole before is unpacked only
 * that far, into memory its transaction keeps until it ends (a count over one small property
 * of a packed table unpacks a few dozen bytes of each page, not the page). */
static inline int st_page_get_part(strata_txn_t *txn, pgno_t pgno, size_t need, const uint8_t **page,
                                   strata_error *err) {
    if (st_pgno_packed(pgno)) return st_packed_get_part(txn, pgno, need, page, err);
    return st_page_get(txn, pgno, page, err);
}
/* A page for writing (copy-on-write): *newp is its number in this transaction. */
int st_page_touch(strata_txn_t *txn, pgno_t pgno, uint8_t **page, pgno_t *newp,
                  strata_error *err);
/* A new zeroed run of npages pages, stamped with its number and version. */
int st_page_alloc(strata_txn_t *txn, uint32_t npages, uint8_t **page, pgno_t *pgno,
                  strata_error *err);
/* A hint for the commit log: page pgno (allocated by this transaction) will hold much what
 * committed page `like` held, so the log records it as changes to that page. Used only if
 * `like` is a page this transaction stopped using (st_page_free); else the page is logged whole. */
void st_page_resembles(strata_txn_t *txn, pgno_t pgno, pgno_t like);
/* Stop using a page (or a run): reused at once if this transaction made it, else freed by the
 * new version. */
int st_page_free(strata_txn_t *txn, pgno_t pgno, uint32_t npages, strata_error *err);

/* ------------------------------------------------------------------ shared by readers (readshare.c) */

/* A structure derived from a committed tree, shared by read transactions: the first member of
 * the structure; refs counts its holders, destroy frees it when the last lets go. */
typedef struct st_shared {
    _Atomic uint32_t refs;
    void (*destroy)(struct st_shared *s);
} st_shared;

enum { ST_SHARE_CLUSTERS = 1, ST_SHARE_LEAVES = 2 }; /* what was derived */

/* A tree's contents as a read transaction sees them: its name's hash, its root's number and
 * version stamp, and what is derived from them. */
typedef struct st_share_key {
    uint8_t kind;
    uint64_t tree;
    pgno_t root;
    uint64_t stamp;
} st_share_key;
typedef struct st_share_table st_share_table;

/* The key of tree `name` with root `root` in txn: false when nothing of it may be shared (a
 * write transaction, an empty tree, a packed root). */
bool st_share_key_of(strata_txn_t *txn, uint8_t kind, const char *name, size_t name_len,
                     pgno_t root, st_share_key *key);
/* What is kept for key, with a reference taken (st_share_release), or NULL; *uses: the searches
 * through the tree transactions reported for key so far. */
st_shared *st_share_find(strata_db_t *db, const st_share_key *key, uint64_t *uses);
/* Report `uses` more searches through key's tree. */
void st_share_count(strata_db_t *db, const st_share_key *key, uint64_t uses);
/* Keep s for key (the handle takes a reference of its own; a structure kept first stays). Every
 * pointer in s must point into the view (st_bytes_committed) or into s's own memory. */
void st_share_keep(strata_db_t *db, const st_share_key *key, st_shared *s);
void st_share_release(st_shared *s); /* NULL: nothing */
void st_share_clear(strata_db_t *db); /* the file was replaced, or the handle closes */

/* ------------------------------------------------------------------ transactions (txn.c) */

/* Begin a read transaction on the latest version (a reader slot holds it), or a write
 * transaction (the writer lock; wait: block for it, else STRATA_ERR_BUSY). The caller owns
 * *out and frees it with st_txn_free. */
/* `no_sync`: a write committed without syncing (STRATA_TXN_NO_SYNC). */
int st_txn_begin(strata_db_t *db, bool write, bool wait, bool no_sync, strata_txn_t **out, strata_error *err);
/* A read view of version m for an integrity walk during recovery: no reader slot, so the caller
 * must hold the writer lock with no other handle open (nothing can reuse m's pages). Free with
 * st_txn_free. */
int st_txn_view(strata_db_t *db, const st_meta *m, strata_txn_t **out, strata_error *err);
/* Another read transaction of src's version (src: an active read transaction of a handle whose
 * reader slots are in use), holding the version in a slot of its own. */
int st_txn_clone(strata_txn_t *src, strata_txn_t **out, strata_error *err);
/* A txn that must be active (and writable when `write`); fills err otherwise. */
int st_txn_check(const strata_txn_t *txn, bool write, strata_error *err);
/* Mark a write transaction failed: from now on it can only be aborted. Returns code. */
int st_txn_fail(strata_txn_t *txn, int code);
/* Write the transaction durably (per the durability mode) and publish it, with the catalog
 * tree's root and entry count in its meta; then end it. On failure the file is left at its
 * previous commit and the transaction ends too. */
int st_txn_commit(strata_txn_t *txn, pgno_t catalog_root, uint64_t catalog_count,
                  strata_error *err);
/* End the transaction without committing (nothing if it ended): its lock or reader slot goes. */
void st_txn_end(strata_txn_t *txn);
/* A read transaction moves to the latest version (same reader slot); on failure it ends. */
int st_txn_refresh(strata_txn_t *txn, strata_error *err);
/* End it if need be and free it; the layers above freed their state (trees, store) first. */
void st_txn_free(strata_txn_t *txn);

/* ------------------------------------------------------------------ database handles (db.c) */

/* Recovery's check of a version written without sync (m) against the durable version d (may
 * be NULL): every page m reaches must be intact, and any page from d's time must belong to d.
 * Reaching every page needs the layers above (trees, cluster records), so they hand it in. */
typedef int (*st_check_unsynced_fn)(strata_db_t *db, const st_meta *m, const st_meta *d,
                                    strata_error *err);
/* Open (or create) the database at path with options already checked and completed; the first
 * handle after every handle closed recovers the file, checking unsynced versions with check. */
int st_db_open(const char *path, const strata_options *opts, st_check_unsynced_fn check,
               strata_db_t **out, strata_error *err);
/* Free the handle (its transactions are freed): unsynced commits are synced first. */
int st_db_close(strata_db_t *db, strata_error *err);
/* fdatasync, then mark the current version durable (strata_db_sync). */
int st_db_sync(strata_db_t *db, strata_error *err);
int st_db_sync_commits(strata_db_t *db, uint64_t *covered, strata_error *err);
/* Transactions of this handle not yet freed. */
int st_db_open_txns(strata_db_t *db);
int st_db_info(strata_db_t *db, strata_db_info *info, strata_error *err);
/* The latest version's packed region: its bytes and the packed pages it reaches. */
int st_db_packed(strata_db_t *db, uint64_t *bytes, uint64_t *pages, strata_error *err);
/* Bytes the handle's cache of packed pages holds unpacked, pinned or kept (packed.c). */
uint64_t st_unpacked_bytes(strata_db_t *db);
/* The held versions, ascending and distinct, up to cap; returns how many there are in all. */
size_t st_db_live_versions(strata_db_t *db, uint64_t *versions, size_t cap);
/* The lock file's taken reader slots (up to cap; returns how many), and freeing dead ones. */
size_t st_db_readers(strata_db_t *db, strata_reader *out, size_t cap);
size_t st_db_clear_stale_readers(strata_db_t *db);
/* Block until a commit, in any process, makes the latest version newer than `after`. */
void st_db_stop_waits(strata_db_t *db);
int st_db_wait_commit(strata_db_t *db, uint64_t after, uint32_t timeout_ms, uint64_t *version,
                      strata_error *err);

/* ------------------------------------------------------------------ copies (copy.c) */

/* A copy of one version being written to a new file. The layers above walk the version's pages
 * (reading them through st_copier_source) and place each finished page, children before the
 * page naming them: st_copier_place gives it the copy's next page number (*pgno), stamps its
 * header (number, version, checksum over the run) and writes it. buf is the caller's and is
 * changed (the header). */
typedef struct st_copier st_copier;
strata_txn_t *st_copier_source(st_copier *c);
int st_copier_place(st_copier *c, uint8_t *buf, uint32_t npages, pgno_t *pgno, strata_error *err);
/* The walk: every tree of the source version into the copy; the new catalog's root and count. */
typedef int (*st_copy_fn)(st_copier *c, pgno_t *catalog_root, uint64_t *catalog_count,
                          strata_error *err);
/* How a copy is encrypted: as the file is (set false), or with key (set; NULL: not at all). */
typedef struct st_copy_key {
    bool set;
    const uint8_t *key;
    size_t len;
} st_copy_key;
/* The latest version into a new file at path (STRATA_ERR_EXISTS if there is one), synced;
 * pack >= 0: tree and column pages LZ4-compressed where that pays (packed.c), at that LZ4HC
 * level (0: LZ4's fast mode); -1: none. An encrypted copy's packed pages are sealed too. */
int st_db_write_copy(strata_db_t *db, const char *path, int pack, const st_copy_key *key,
                     st_copy_fn fn, strata_error *err);
/* The file replaced by a copy of its latest version; the handle continues on it (with the
 * copy's key). Refused (BUSY) while this handle has transactions or another handle or process
 * has the file open. */
int st_db_compact(strata_db_t *db, int pack, const st_copy_key *key, st_copy_fn fn,
                  strata_error *err);

/* ------------------------------------------------------------------ page accounting (pagecheck.c) */

/* An integrity walk's map of the pages of one version: each reached exactly once, each with
 * its own number, a version no newer than the snapshot and a matching checksum (invariants 1
 * and 3). The trees are walked by the layers above; the free list and leaks are checked here. */
typedef struct st_pagecheck {
    strata_txn_t *txn;       /* the version walked */
    uint64_t page_count;
    uint64_t packed_seen;    /* packed pages reached (must equal the meta's packed_live) */
    uint64_t packed_bytes;   /* the packed region's bytes */
    uint64_t packed_first;   /* where its packed pages start */
    uint8_t *seen;           /* per page: 0 unseen, 1 used, 2 free */
    strata_error *err;
    /* Recovery of a version written without sync: a page stamped with a version up to the
     * durable one must be one of the durable version's used pages (else its new contents were
     * lost and an older page's bytes are there). NULL: no such rule. */
    const uint8_t *durable_seen;
    uint64_t durable_pages, durable_version;
    /* The version's free-list delta, read when the walk begins (its meta slot may be
     * overwritten by two commits during a long walk). */
    st_fl_delta delta;
} st_pagecheck;
int st_pagecheck_init(st_pagecheck *pc, strata_txn_t *txn, strata_error *err);
void st_pagecheck_free(st_pagecheck *pc);
/* Page [pg, pg + run) is reached as `what` (ST_REACH_*): in range, not reached before. */
enum { ST_REACH_USED = 1, ST_REACH_FREE = 2 };
int st_pagecheck_mark(st_pagecheck *pc, pgno_t pg, uint32_t run, int reach, const char *what);
/* The page's checksum over its run, its number, and the version rules. */
int st_pagecheck_sum(st_pagecheck *pc, const uint8_t *p, pgno_t pg, uint32_t run);
/* The version's free-list pages and free pages, then every page reached (no leak). */
int st_pagecheck_finish(st_pagecheck *pc);

#endif
