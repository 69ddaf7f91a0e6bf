/*
 * strata.h — the whole public C ABI of Strata, an embedded object database.
 *
 * Conventions (see DESIGN.md):
 *  - Handles are opaque. Every handle has one call that ends it; each function says who owns
 *    what it returns and when that dies.
 *  - Every fallible call returns a status (STRATA_OK == 0 on success) and takes
 *    `strata_error *err` as its last argument. `err` may be NULL; when it is not, a failing call
 *    fills it with the code and a message naming the offending thing (file, page, tree, key).
 *    There is no thread-local error state.
 *  - Misuse (a NULL handle, an ended transaction, a write in a read transaction) is an error,
 *    never a crash.
 *  - Bytes read from the database point into the memory map (zero copy) and stay valid until
 *    the transaction that read them ends, or, in a write transaction, until the next change to
 *    the same tree.
 */
#ifndef STRATA_H
#define STRATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) || defined(__clang__)
#define STRATA_API __attribute__((visibility("default")))
#else
#define STRATA_API
#endif

/* ---------------------------------------------------------------- versions and errors */

#define STRATA_VERSION_MAJOR 0
#define STRATA_VERSION_MINOR 14
#define STRATA_VERSION_PATCH 0

/** The library's version as "major.minor.patch"; a static string. */
STRATA_API const char *strata_version(void);

/** The newest on-disk format version this library writes (see CCore/FORMAT.md): 13, that of
 *  encrypted files; a plain file is written as format 12. */
STRATA_API uint32_t strata_format_version(void);

typedef enum strata_status {
    STRATA_OK = 0,
    STRATA_ERR_INVALID_ARGUMENT = 1, /* NULL handle, bad option, empty name, ... */
    STRATA_ERR_NOT_FOUND = 2,        /* no such key, tree or file; end of a cursor */
    STRATA_ERR_EXISTS = 3,           /* the thing to create already exists */
    STRATA_ERR_IO = 4,               /* a read, write, sync or lock failed (EIO, ...) */
    STRATA_ERR_NO_SPACE = 5,         /* the disk is full (ENOSPC, EDQUOT, EFBIG) */
    STRATA_ERR_CORRUPT = 6,          /* the file contradicts itself; the message names where */
    STRATA_ERR_NOT_STRATA = 7,       /* the file is not a Strata database */
    STRATA_ERR_FORMAT_VERSION = 8,   /* unknown file format or incompatible lock file */
    STRATA_ERR_BUSY = 9,             /* try-lock found another writer; an open waited past
                                        open_timeout_ms */
    STRATA_ERR_READ_ONLY = 10,       /* a write on a read-only database or transaction */
    STRATA_ERR_TXN_STATE = 11,       /* the transaction has ended or has failed */
    STRATA_ERR_TOO_MANY_VERSIONS = 12, /* max_versions would be exceeded by a pinned reader */
    STRATA_ERR_READERS_FULL = 13,    /* every reader slot of the lock file is taken */
    STRATA_ERR_MAP_FULL = 14,        /* the file would outgrow the reserved map_size */
    STRATA_ERR_NO_MEMORY = 15,
    STRATA_ERR_TOO_LARGE = 16,       /* a key or value over the limits */
    STRATA_ERR_WRONG_TYPE = 17,      /* e.g. an integer-key call on a byte-key tree */
    STRATA_ERR_TIMEOUT = 18,         /* strata_db_wait_commit: no commit in the time given */
    STRATA_ERR_ENCRYPTION = 19,      /* the file is encrypted and no key was given, the key does
                                        not open it, or a key was given for a plain file */
} strata_status;

/** Where a failing call puts its code and message. Zero-initialise it, or ignore it (NULL). */
typedef struct strata_error {
    int code;           /* a strata_status */
    char message[256];  /* NUL-terminated, names the offending thing */
} strata_error;

/** The name of a status ("STRATA_ERR_CORRUPT"); a static string, "unknown status" if unknown. */
STRATA_API const char *strata_status_name(int code);

/* ---------------------------------------------------------------- opening a database */

typedef struct strata_db strata_db_t;
typedef struct strata_txn strata_txn_t;
typedef struct strata_tree strata_tree_t;
typedef struct strata_cursor strata_cursor_t;

typedef enum strata_durability {
    STRATA_DURABILITY_FULL = 0,    /* a commit is on disk when strata_txn_commit returns */
    STRATA_DURABILITY_NO_SYNC = 1, /* no fsync at commit: survives a process crash; a power loss
                                      drops the commits since the last sync (strata_db_sync,
                                      close, or every 256th commit), never half of one */
    STRATA_DURABILITY_MEMORY = 2,  /* no file; handles opened with the same path (identifier) in
                                      one process share the data; gone when the last one closes */
} strata_durability;

/**
 * The file I/O a database uses for writing, replaceable so tests can inject faults and simulate
 * power loss. Each call returns what the POSIX call returns (-1 and errno on failure). Reads go
 * through the memory map and are not part of this table.
 */
typedef struct strata_io_methods {
    size_t size; /* sizeof(strata_io_methods) */
    void *ctx;   /* passed back to every call */
    ssize_t (*pwrite)(void *ctx, int fd, const void *buf, size_t len, off_t offset);
    int (*fdatasync)(void *ctx, int fd);
    /* Make the file at least new_size bytes long (fallocate, or ftruncate where unsupported). */
    int (*grow)(void *ctx, int fd, off_t new_size);
} strata_io_methods;

/** The default I/O table (pwrite, fdatasync, fallocate); a static table. */
STRATA_API const strata_io_methods *strata_io_default(void);

typedef struct strata_options {
    size_t size;                   /* sizeof(strata_options): lets the struct grow */
    strata_durability durability;  /* default FULL */
    bool read_only;                /* refuse write transactions; default false */
    bool create;                   /* create the file when missing; default true */
    uint64_t map_size;             /* bytes of address space reserved for the map; the file
                                      can never grow past it; default 64 GiB */
    uint32_t max_readers;          /* reader slots in a new lock file; default 126 */
    uint64_t max_versions;         /* refuse a commit that would keep more than this many
                                      versions alive because of pinned readers; 0 = no cap */
    const strata_io_methods *io;   /* NULL = strata_io_default() */
    bool trust_pages;              /* skip checking each page (its number, version and XXH3
                                      checksum) the first time this process reads it: only for
                                      files the app made itself and trusts; default false */
    bool accept_rollback;          /* when commits that were durable through the commit log
                                      cannot be recovered (the log `<path>.log` is missing,
                                      emptied, damaged, older, or of another database; or the
                                      file is empty beside its log), open at the last version
                                      the file holds on its own and drop them (reported by
                                      strata_db_recovery) instead of refusing the file with
                                      STRATA_ERR_CORRUPT; default false */
    uint32_t open_timeout_ms;      /* how long an open waits while another handle opens or
                                      recovers the file (the first open after a crash replays
                                      or checks the last commits) before it gives up with
                                      STRATA_ERR_BUSY; 0 = do not wait; default 30000 */
    const void *encryption_key;    /* 64 bytes (RealmSwift's encryptionKey): the file is
                                      encrypted with it (a new file), or must have been (an
                                      existing one: STRATA_ERR_ENCRYPTION when it is plain or the
                                      key does not open it, as when a key is missing for an
                                      encrypted file). The pages, the commit log and copies are
                                      sealed with ChaCha20-Poly1305 under keys derived from it
                                      (FORMAT.md); the library keeps its own copy. Not used for
                                      an in-memory database. Default NULL: not encrypted */
    size_t encryption_key_len;     /* 64; another length is STRATA_ERR_INVALID_ARGUMENT */
    uint64_t unpacked_cache_bytes; /* a packed file's (strata_copy_options.pack): bytes of its
                                      pages kept unpacked for later transactions once none holds
                                      them; reads beyond it unpack again. Default 32 MiB (a
                                      count over 1M packed messages keeps ~20 MiB: the start of
                                      each column page and the cluster tree's pages) */
} strata_options;

/**
 * The growth rule of the ABI's option and result structs (strata_options, strata_copy_options,
 * strata_space, strata_io_methods): a struct only grows at its end, its `size` says how much of
 * it the caller knows, and the library never reads or writes past that; fields the caller does
 * not know take their defaults.
 *
 * Fill the first `size` bytes of `opts` with the defaults (FULL, create, 64 GiB map, 126
 * readers, 30 s open timeout) and set opts->size to min(size, sizeof(strata_options)). Called
 * through the macro strata_options_init(opts), which passes sizeof *opts: a program compiled
 * against this header passes the size it was compiled with. (The function of that name, which
 * programs built against 0.1-0.7 call, fills their shorter layout: the fields up to `io`.)
 */
STRATA_API void strata_options_init_sized(strata_options *opts, size_t size);
STRATA_API void strata_options_init(strata_options *opts);
#define strata_options_init(opts) strata_options_init_sized((opts), sizeof *(opts))

/**
 * Open (and with opts->create, create) the database at `path` and its lock file `<path>.lock`.
 * For STRATA_DURABILITY_MEMORY, `path` is only an identifier. `opts` may be NULL (defaults).
 * On success *out is a handle the caller owns and ends with strata_db_close. A handle may be
 * shared by threads. While another handle, in any process, opens the file or recovers it after
 * a crash, this call waits (up to opts->open_timeout_ms, then STRATA_ERR_BUSY) and then sees the
 * recovered version.
 */
STRATA_API int strata_db_open(const char *path, const strata_options *opts, strata_db_t **out,
                              strata_error *err);

/**
 * Close the database and free the handle (after making its NO_SYNC commits durable). Refused
 * (STRATA_ERR_BUSY, nothing closed) while a transaction of this handle has not been freed. If
 * that final sync fails, the handle is closed all the same and the error returned.
 */
STRATA_API int strata_db_close(strata_db_t *db, strata_error *err);

/** Make every commit made so far durable (the fsyncs that NO_SYNC mode skipped), and leave a meta
 *  marked durable so that the next first open needs no recovery check. */
STRATA_API int strata_db_sync(strata_db_t *db, strata_error *err);
/**
 * Make every commit published so far durable, at the least cost: when they are all in the
 * commit log (FULL commits made with strata_txn_commit_unsynced), one sync of the log, without
 * taking the writer lock, so that writers go on committing meanwhile (group commit: commits that
 * arrive during one sync share the next); else as strata_db_sync. *covered (may be NULL)
 * receives the latest version when it began: every version up to it is durable on success.
 */
STRATA_API int strata_db_sync_commits(strata_db_t *db, uint64_t *covered, strata_error *err);

typedef struct strata_db_info {
    uint64_t version;        /* latest committed version */
    uint32_t page_size;
    uint64_t page_count;     /* pages in use by the latest version, free ones included */
    uint64_t free_pages;     /* pages of the latest version's free space */
    uint64_t file_size;      /* bytes on disk (the file is grown in chunks) */
    uint32_t live_readers;   /* reader slots held by live read transactions */
    uint64_t oldest_version; /* oldest version a reader holds, or `version` when none */
} strata_db_info;

/**
 * What the open of this handle found and did. Only the first handle to open a file after every
 * handle closed recovers it (after a crash: replays the commit log, or checks versions written
 * without sync); the others report `recovered` false.
 *
 * Recovery never opens a file silently at an older version than one that was durable: when
 * the commit log that FULL commits since the last sync need is missing or damaged, the open
 * fails with STRATA_ERR_CORRUPT naming the log, the versions and why, unless
 * strata_options.accept_rollback, and then `dropped` and `why` say what was lost. Commits made
 * in NO_SYNC mode since the last sync may be dropped after a power loss (that mode's promise);
 * they are reported the same way.
 */
typedef struct strata_recovery {
    bool recovered;            /* this open ran recovery */
    uint64_t newest_version;   /* the newest version the file named (0 when it was created) */
    uint64_t durable_version;  /* the version the file held on its own (synced) */
    uint64_t replayed;         /* versions rebuilt from the commit log */
    uint64_t opened_version;   /* the version the database opened at */
    uint64_t dropped;          /* committed versions not recovered: newest - opened */
    char why[200];             /* why they were dropped; "" when none were */
} strata_recovery;

/** Fill *out with what opening this handle recovered. */
STRATA_API int strata_db_recovery(strata_db_t *db, strata_recovery *out, strata_error *err);

/** Fill *info with the database's current numbers. */
STRATA_API int strata_db_info_get(strata_db_t *db, strata_db_info *info, strata_error *err);

/** Where the file's bytes go (strata_db_space_get). */
typedef struct strata_space {
    size_t size;             /* sizeof(strata_space), set by the caller */
    uint64_t file_bytes;     /* the file's size on disk (it grows in chunks) */
    uint64_t used_bytes;     /* bytes of the pages the latest version uses: what a compaction keeps */
    uint64_t free_bytes;     /* bytes of free pages inside the file (reused by later commits, some
                                only once readers of older versions let go) */
    uint64_t packed_bytes;   /* of used_bytes, the packed region's (LZ4-compressed pages that a
                                compaction wrote; it is freed when none of them is used) */
    uint64_t packed_pages;   /* pages the latest version reaches in the packed region */
    uint64_t unpacked_bytes; /* bytes of packed pages this handle holds unpacked in memory: those
                                its transactions read, and up to
                                strata_options.unpacked_cache_bytes kept for later ones */
} strata_space;

/** Fill *out with the latest version's use of the file: out->size, set by the caller, says how
 *  much of the struct it knows (at least up to free_bytes); nothing past it is written. */
STRATA_API int strata_db_space_get(strata_db_t *db, strata_space *out, strata_error *err);

/** How a copy or a compaction writes its file (strata_copy_options_init sets the defaults). */
typedef struct strata_copy_options {
    size_t size;             /* sizeof(strata_copy_options) */
    bool pack;               /* store tree and column pages LZ4-compressed where that saves an
                                eighth of a page or more ("packed": read back through a cache,
                                rewritten plain when changed); default true */
    int pack_level;          /* 0: LZ4's fast mode; 1..12: LZ4HC's levels (smaller files, slower
                                to write, read as fast); default 1 */
    bool set_encryption;     /* false (default): the copy is encrypted as the file is, with its
                                key; true: with encryption_key, or not encrypted when that is
                                NULL — to encrypt, decrypt or re-key (strata_db_compact does it
                                to the file in place). Packed pages of an encrypted copy are
                                compressed, then sealed */
    const void *encryption_key; /* with set_encryption: 64 bytes, or NULL */
    size_t encryption_key_len;
} strata_copy_options;

/** The defaults for the first `size` bytes (the growth rule above); called through the macro
 *  strata_copy_options_init(opts). (The function of that name fills the 0.8 layout: `pack`.) */
STRATA_API void strata_copy_options_init_sized(strata_copy_options *opts, size_t size);
STRATA_API void strata_copy_options_init(strata_copy_options *opts);
#define strata_copy_options_init(opts) strata_copy_options_init_sized((opts), sizeof *(opts))

/**
 * Write a copy of the latest version to a new file at `path` (STRATA_ERR_EXISTS if there is a
 * file there): pages in tree order, no free space, synced before it appears under its name
 * (written as `<path>.copying` and renamed), so a crash leaves no partial copy. Readers and
 * writers of this database go on meanwhile; the copy is a database of its own. `opts` may be
 * NULL (defaults).
 */
STRATA_API int strata_db_write_copy(strata_db_t *db, const char *path,
                                    const strata_copy_options *opts, strata_error *err);

/**
 * Rewrite the file as a copy of its latest version (as strata_db_write_copy does) and put the
 * copy in its place atomically; the handle goes on with it. Refused with STRATA_ERR_BUSY while
 * this handle has a transaction not yet freed or another handle, in this or any process, has
 * the file open; handles that open meanwhile wait for it. A crash at any point leaves either the
 * original file or the whole copy. STRATA_ERR_INVALID_ARGUMENT for an in-memory database.
 * `opts` may be NULL (defaults).
 */
STRATA_API int strata_db_compact(strata_db_t *db, const strata_copy_options *opts,
                                 strata_error *err);

/**
 * The versions held by live readers of every process, ascending, duplicates removed: up to
 * `cap` are written to `versions`; *count receives how many there are in all.
 */
STRATA_API int strata_db_live_versions(strata_db_t *db, uint64_t *versions, size_t cap,
                                       size_t *count, strata_error *err);

/** One taken reader slot of the lock file (strata_db_readers). A struct that never grows: a
 *  later field will come with a call of its own. */
typedef struct strata_reader {
    uint32_t slot;     /* its index in the lock file */
    uint32_t pid;      /* the process that took it */
    uint64_t version;  /* the version it holds; UINT64_MAX while it has taken the slot but not
                          yet a version */
    int64_t since_ms;  /* wall-clock milliseconds (Unix epoch) when it began holding that
                          version; 0 when unknown (a slot taken by a library before 0.9) */
    bool alive;        /* false: its process is gone and the slot is stale (freed by the next
                          commit, or by strata_db_clear_stale_readers) */
} strata_reader;

/**
 * The reader slots taken in the lock file by every process, live and stale, by slot index: up
 * to `cap` are written to `readers`; *count receives how many there are in all (cap 0 sizes the
 * buffer). A snapshot: readers come and go while it is read.
 */
STRATA_API int strata_db_readers(strata_db_t *db, strata_reader *readers, size_t cap,
                                 size_t *count, strata_error *err);
/** Free now the reader slots of processes that are gone (a killed reader's slot pins its version
 *  until then); *cleared (may be NULL) receives how many. Live readers are never touched. */
STRATA_API int strata_db_clear_stale_readers(strata_db_t *db, size_t *cleared, strata_error *err);

/**
 * Wait until a commit, by any handle of any process, makes the latest version newer than
 * `after` (for example the version a reader last saw): *version receives it. Returns at once
 * when it already is; STRATA_ERR_TIMEOUT after timeout_ms without one. A commit wakes every
 * waiter through a futex word in the lock file: no polling (a commit by an older library,
 * which does not touch it, is seen within 100 ms).
 */
STRATA_API int strata_db_wait_commit(strata_db_t *db, uint64_t after, uint32_t timeout_ms,
                                     uint64_t *version, strata_error *err);

/**
 * From now on every strata_db_wait_commit of this handle, those in progress included, returns
 * STRATA_ERR_TIMEOUT at once: call it before closing a handle that another thread waits on,
 * then wait for that thread to return. Other handles' waits are not stopped.
 */
STRATA_API int strata_db_stop_waits(strata_db_t *db, strata_error *err);

/**
 * Check the latest version of the whole file: every page reachable exactly once or free, every
 * checksum, every tree well formed, every count right. STRATA_OK or STRATA_ERR_CORRUPT with a
 * message naming the first page and what was wrong.
 */
STRATA_API int strata_db_verify(strata_db_t *db, strata_error *err);

/* ---------------------------------------------------------------- transactions */

enum {
    STRATA_TXN_READ = 0,  /* a snapshot of the latest commit; never blocks */
    STRATA_TXN_WRITE = 1, /* exclusive across threads and processes; waits for the lock */
    STRATA_TXN_TRY = 2,   /* with STRATA_TXN_WRITE: fail with STRATA_ERR_BUSY instead of waiting */
    /* With STRATA_TXN_WRITE: commit without syncing, as a NO_SYNC handle's commit — visible at
     * once, surviving a process crash, but after a power loss possibly gone together with every
     * commit after it (never half of one) until strata_db_sync, or a later synced commit of a
     * FULL handle, makes it durable. Group commit: several such commits, then one sync. */
    STRATA_TXN_NO_SYNC = 4,
};

/**
 * Begin a transaction. *out is owned by the caller and freed with strata_txn_free; it belongs to
 * one thread at a time.
 */
STRATA_API int strata_txn_begin(strata_db_t *db, unsigned flags, strata_txn_t **out,
                                strata_error *err);

/**
 * Commit a write transaction (or end a read transaction). The handle stays allocated but ended;
 * every tree, cursor and pointer obtained through it dies. On failure nothing of it is visible
 * and the transaction is ended too. On a full disk a write fails with STRATA_ERR_NO_SPACE
 * (naming the file) at the call that needed a page or at commit; pages kept in reserve let a
 * transaction that frees as much as it takes (deletes) commit all the same, and a delete too big
 * for the reserve is refused, asking for smaller commits.
 */
STRATA_API int strata_txn_commit(strata_txn_t *txn, strata_error *err);
/**
 * Commit a write transaction without syncing (group commit): visible at once, durable after the
 * next strata_db_sync_commits or strata_db_sync (or a later synced commit). On a FULL handle its
 * record is appended to the commit log without a sync (when it does not fit the log, it is
 * committed as with STRATA_TXN_NO_SYNC). After a power loss it may be gone, together with the
 * unsynced commits after it, never half of one. On a NO_SYNC or memory handle the same as
 * strata_txn_commit. A read transaction is TXN_STATE.
 */
STRATA_API int strata_txn_commit_unsynced(strata_txn_t *txn, strata_error *err);

/** End the transaction, discarding its changes. Ending an ended transaction does nothing. */
STRATA_API void strata_txn_abort(strata_txn_t *txn);

/** Abort if still active, then free the handle. NULL is ignored. */
STRATA_API void strata_txn_free(strata_txn_t *txn);

/**
 * Move an active read transaction to the latest commit. Trees, cursors and pointers obtained
 * before die.
 */
STRATA_API int strata_txn_refresh(strata_txn_t *txn, strata_error *err);

/**
 * Another read transaction reading the same version as `txn` (an active read transaction), for
 * another thread: it holds that version on its own, so either may end first. STRATA_ERR_BUSY
 * while the handle compacts; STRATA_ERR_READERS_FULL when no reader slot is free.
 */
STRATA_API int strata_txn_clone(strata_txn_t *txn, strata_txn_t **out, strata_error *err);

/** The version the transaction reads (for a write transaction: the one it will commit). */
STRATA_API uint64_t strata_txn_version(const strata_txn_t *txn);

/* ---------------------------------------------------------------- trees (ordered key-value) */

typedef enum strata_key_kind {
    STRATA_KEY_INT = 1,   /* keys are uint64_t (8 bytes, native order), sorted numerically */
    STRATA_KEY_BYTES = 2, /* keys are byte strings up to STRATA_MAX_KEY, sorted like memcmp */
} strata_key_kind;

#define STRATA_MAX_KEY 480u              /* bytes in a key */
#define STRATA_MAX_VALUE (1u << 30)      /* bytes in a value */
#define STRATA_MAX_TREE_NAME 200u        /* bytes in a tree name */

enum {
    STRATA_TREE_CREATE = 1, /* create the tree when missing (write transactions only) */
};

/**
 * Open the tree named `name` in `txn`. *out is owned by the transaction and dies when it ends
 * (or when the tree is dropped); opening the same name twice gives the same handle.
 */
STRATA_API int strata_tree_open(strata_txn_t *txn, const char *name, strata_key_kind kind,
                                unsigned flags, strata_tree_t **out, strata_error *err);

/** Delete the tree named `name` and all its entries. Its open handle dies. */
STRATA_API int strata_tree_drop(strata_txn_t *txn, const char *name, strata_error *err);

/** Insert or replace the value of `key`. */
STRATA_API int strata_tree_put(strata_tree_t *tree, const void *key, size_t key_len,
                               const void *value, size_t value_len, strata_error *err);

/**
 * Find `key`. *value points into the map (or the transaction's own pages) and lives until the
 * transaction ends or, in a write transaction, until the tree changes. STRATA_ERR_NOT_FOUND if
 * absent.
 */
STRATA_API int strata_tree_get(strata_tree_t *tree, const void *key, size_t key_len,
                               const void **value, size_t *value_len, strata_error *err);

/** Remove `key`; STRATA_ERR_NOT_FOUND if absent. */
STRATA_API int strata_tree_delete(strata_tree_t *tree, const void *key, size_t key_len,
                                  strata_error *err);

/** The number of entries. */
STRATA_API int strata_tree_count(strata_tree_t *tree, uint64_t *count, strata_error *err);

/* Integer-key shorthands for STRATA_KEY_INT trees. */
STRATA_API int strata_tree_put_int(strata_tree_t *tree, uint64_t key, const void *value,
                                   size_t value_len, strata_error *err);
STRATA_API int strata_tree_get_int(strata_tree_t *tree, uint64_t key, const void **value,
                                   size_t *value_len, strata_error *err);
STRATA_API int strata_tree_delete_int(strata_tree_t *tree, uint64_t key, strata_error *err);

/* ---------------------------------------------------------------- cursors */

/**
 * Open a cursor on `tree`, unpositioned. *out is owned by the transaction (it dies when the
 * transaction ends) and may be freed earlier with strata_cursor_close. A cursor survives changes
 * to its tree: it re-finds its key before moving.
 */
STRATA_API int strata_cursor_open(strata_tree_t *tree, strata_cursor_t **out, strata_error *err);

/** Free a cursor before its transaction ends. NULL is ignored. */
STRATA_API void strata_cursor_close(strata_cursor_t *cursor);

/* Positioning: STRATA_OK on an entry, STRATA_ERR_NOT_FOUND when there is none. */
STRATA_API int strata_cursor_first(strata_cursor_t *cursor, strata_error *err);
STRATA_API int strata_cursor_last(strata_cursor_t *cursor, strata_error *err);
/** Position on the first entry whose key is >= `key`. */
STRATA_API int strata_cursor_seek(strata_cursor_t *cursor, const void *key, size_t key_len,
                                  strata_error *err);
STRATA_API int strata_cursor_next(strata_cursor_t *cursor, strata_error *err);
STRATA_API int strata_cursor_prev(strata_cursor_t *cursor, strata_error *err);

/**
 * The entry under the cursor; any out-pointer may be NULL. The bytes live as those of
 * strata_tree_get.
 */
STRATA_API int strata_cursor_get(strata_cursor_t *cursor, const void **key, size_t *key_len,
                                 const void **value, size_t *value_len, strata_error *err);


/* ---------------------------------------------------------------- objects: schema
 *
 * A database holds tables ("classes") of objects. A property has a stable id (strata_col_t),
 * assigned when it is added and never reused in its table; objects have stable 64-bit keys,
 * never reused in their table. Schema changes happen in write transactions. Table handles are
 * owned by their transaction and die when it ends (or when the table is dropped).
 */

typedef struct strata_table strata_table_t;
typedef uint32_t strata_col_t;
typedef int64_t strata_key_t;

typedef enum strata_type {
    STRATA_TYPE_NULL = 0,       /* only as a value: null */
    STRATA_TYPE_BOOL = 1,
    STRATA_TYPE_INT = 2,        /* int64, stored packed to the width the values need */
    STRATA_TYPE_FLOAT = 3,
    STRATA_TYPE_DOUBLE = 4,
    STRATA_TYPE_STRING = 5,     /* UTF-8, checked on write */
    STRATA_TYPE_BINARY = 6,
    STRATA_TYPE_TIMESTAMP = 7,  /* seconds + nanoseconds */
    STRATA_TYPE_OBJECT_ID = 8,  /* 12 bytes */
    STRATA_TYPE_UUID = 9,       /* 16 bytes */
    STRATA_TYPE_DECIMAL128 = 10,/* IEEE 754-2008 decimal128 bits, stored as given */
    STRATA_TYPE_LINK = 11,      /* a to-one link: the key of an object of the target table */
    STRATA_TYPE_MIXED = 12,     /* a property that holds a value of any type but LINK */
    STRATA_TYPE_LIST = 13,      /* only as a query argument: the values of `IN $n` */
    STRATA_TYPE_TYPED_LINK = 14,/* a link that names its table: what a MIXED property (or list,
                                   set or map of MIXED) holds to link to an object */
    STRATA_TYPE_GEO = 15,       /* only as a query argument: a region for GEOWITHIN (or IN) */
} strata_type;

/**
 * A region of the sphere for `path GEOWITHIN $n` (strata_value of type STRATA_TYPE_GEO,
 * u.geo.shape). Points are longitude, latitude pairs in degrees (as GeoJSON orders them).
 *  - BOX: points[0] the south-west corner, points[1] the north-east one: the latitudes between
 *    and the longitudes from the first eastwards to the second (across the antimeridian when
 *    the first is east of the second).
 *  - CIRCLE: points[0] the centre, `radius` the angle in radians (0 ..): every point at most
 *    that far along the sphere.
 *  - POLYGON: rings of points, ring_ends[i] the index after ring i's last point; each ring
 *    closed (its last point its first) with at least 3 distinct vertices, edges along great
 *    circles; ring 0 the boundary, the others holes in it (inside it, not crossing each other).
 *    A polygon must lie within a hemisphere.
 * A shape that breaks these is STRATA_ERR_INVALID_ARGUMENT naming what is wrong, when the query
 * runs. The property GEOWITHIN reads is a link to an embedded object holding `type` (a string,
 * "Point") and `coordinates` (a list of doubles: longitude, latitude[, altitude]); an object
 * whose type is not "Point" or whose coordinates are missing is in no region.
 */
typedef enum strata_geo_kind {
    STRATA_GEO_BOX = 1,
    STRATA_GEO_CIRCLE = 2,
    STRATA_GEO_POLYGON = 3,
} strata_geo_kind;

typedef struct strata_geo {
    strata_geo_kind kind;
    const double *points;      /* 2 * npoints doubles: longitude, latitude */
    size_t npoints;
    const size_t *ring_ends;   /* POLYGON: nrings ends, ascending, the last == npoints */
    size_t nrings;
    double radius;             /* CIRCLE: radians */
} strata_geo;

enum {
    STRATA_PROP_NULLABLE = 1,    /* may hold null (links always may) */
    STRATA_PROP_INDEXED = 2,     /* kept in an index: bool, int, string, timestamp, oid, uuid */
    STRATA_PROP_PRIMARY_KEY = 4, /* unique, indexed: int, string, oid, uuid */
    STRATA_PROP_LIST = 8,        /* a list of `type` values (of links when type is LINK) */
    STRATA_PROP_SET = 16,        /* a set: a list whose elements are unique (implies LIST) */
    STRATA_PROP_MAP = 32,        /* a map from string keys to `type` values (implies LIST: its
                                    values read as a list, in key order) */
    STRATA_PROP_FULLTEXT = 64,   /* a string kept in a full-text index of its words (TEXT
                                    queries); not with INDEXED or PRIMARY_KEY */
};

#define STRATA_MAX_NAME 63u             /* bytes in a table or property name */
#define STRATA_MAX_BYTES (16u << 20)    /* bytes in a string or binary value */
#define STRATA_NO_COL 0u                /* "no property", e.g. to remove a primary key */

/** A value: the type tag says which member is meaningful. */
typedef struct strata_value {
    strata_type type;
    union {
        bool b;
        int64_t i;
        float f;
        double d;
        struct { const void *data; size_t len; } bytes; /* STRING (not NUL-terminated), BINARY */
        struct { int64_t seconds; int32_t nanoseconds; } timestamp;
        uint8_t object_id[12];
        uint8_t uuid[16];
        struct { uint64_t low, high; } decimal;
        strata_key_t link;                              /* LINK: key in the target table */
        struct { strata_key_t key; uint32_t table; } typed_link; /* TYPED_LINK: key, table id */
        struct { const struct strata_value *items; size_t count; } list; /* LIST */
        struct { const struct strata_geo *shape; } geo;                  /* GEO */
    } u;
} strata_value;

/** What a property is. `link_target` names the target table of LINK properties (else NULL). */
typedef struct strata_property_info {
    strata_col_t col;
    const char *name;        /* lives until the transaction ends or the property is renamed */
    strata_type type;
    unsigned flags;          /* STRATA_PROP_* */
    const char *link_target;
} strata_property_info;

/** The schema version stored in the file (0 for a new database). */
STRATA_API int strata_schema_version(strata_txn_t *txn, uint64_t *version, strata_error *err);
/** Set the schema version (write transactions). */
STRATA_API int strata_schema_set_version(strata_txn_t *txn, uint64_t version, strata_error *err);

/** The number of tables, and the name of table `i` (0-based, sorted by name); the name lives
 *  until the transaction ends. */
STRATA_API int strata_table_count_all(strata_txn_t *txn, size_t *count, strata_error *err);
STRATA_API int strata_table_name_at(strata_txn_t *txn, size_t i, const char **name,
                                    strata_error *err);

/** Create an empty table. *out is owned by the transaction. STRATA_ERR_EXISTS if it exists. */
STRATA_API int strata_table_create(strata_txn_t *txn, const char *name, strata_table_t **out,
                                   strata_error *err);
/** Open an existing table; *out is owned by the transaction. STRATA_ERR_NOT_FOUND if absent. */
STRATA_API int strata_table_open(strata_txn_t *txn, const char *name, strata_table_t **out,
                                 strata_error *err);
/** Delete a table and its objects. Refused while another table has a link property to it. */
STRATA_API int strata_table_drop(strata_txn_t *txn, const char *name, strata_error *err);
/** The table's name; lives as the handle does. */
STRATA_API const char *strata_table_name(const strata_table_t *table);
/** The table's id (what a TYPED_LINK names; ids are never reused in a file). */
STRATA_API uint32_t strata_table_id(const strata_table_t *table);
/** The table of id `id`, or STRATA_ERR_NOT_FOUND. */
STRATA_API int strata_table_open_id(strata_txn_t *txn, uint32_t id, strata_table_t **out,
                                    strata_error *err);

/**
 * Add a property. `link_target` names the target table for LINK (else must be NULL). Existing
 * objects get null, or the type's zero ("" for strings) when not nullable. *col receives the
 * property's id.
 */
STRATA_API int strata_table_add_property(strata_table_t *table, const char *name, strata_type type,
                                         unsigned flags, const char *link_target,
                                         strata_col_t *col, strata_error *err);
/** Remove a property and its values (and their backlinks and index). */
STRATA_API int strata_table_remove_property(strata_table_t *table, strata_col_t col,
                                            strata_error *err);
STRATA_API int strata_table_rename_property(strata_table_t *table, strata_col_t col,
                                            const char *new_name, strata_error *err);
/** Add (indexed true) or remove an index. The primary key's index cannot be removed. */
STRATA_API int strata_table_set_indexed(strata_table_t *table, strata_col_t col, bool indexed,
                                        strata_error *err);
/** Add (fulltext true) or remove the full-text index of string property `col`: an index of
 *  its words that TEXT queries use (`body TEXT 'swift -objc data*'`). Building it reads every
 *  object; a property has a full-text index or a plain one, not both. */
STRATA_API int strata_table_set_fulltext(strata_table_t *table, strata_col_t col, bool fulltext,
                                         strata_error *err);
/**
 * Make `col` the primary key (STRATA_NO_COL: no primary key). Fails, changing nothing, when
 * existing objects share a value: the message names the table, the property and the value.
 */
STRATA_API int strata_table_set_primary_key(strata_table_t *table, strata_col_t col,
                                            strata_error *err);
/**
 * Embedded tables: each object is owned by exactly one parent, through a to-one link, a list of
 * links or a map of links. Linking an object that already has a parent is STRATA_ERR_EXISTS
 * naming the parent; removing the last link to one (overwriting it, removing it from its list
 * or map, deleting the parent) deletes it and what it owns; one created and not linked by
 * commit is deleted then. An embedded table has no primary key.
 * Making a table embedded checks every object first: one with several parents is
 * STRATA_ERR_EXISTS naming it; ones with none are too, unless `flags` has
 * STRATA_EMBED_DELETE_ORPHANS (then they are deleted). Nothing changes when it fails.
 */
enum { STRATA_EMBED_DELETE_ORPHANS = 1 };
STRATA_API int strata_table_set_embedded(strata_table_t *table, bool embedded, unsigned flags,
                                         strata_error *err);
/** Whether the table is embedded. */
STRATA_API int strata_table_is_embedded(strata_table_t *table, bool *embedded, strata_error *err);
/** The property named `name`. STRATA_ERR_NOT_FOUND names the table and the property. */
STRATA_API int strata_table_find_property(strata_table_t *table, const char *name,
                                          strata_col_t *col, strata_error *err);
/** Properties in the order they were added: how many, and the i-th. */
STRATA_API int strata_table_property_count(strata_table_t *table, size_t *count, strata_error *err);
STRATA_API int strata_table_property_at(strata_table_t *table, size_t i,
                                        strata_property_info *info, strata_error *err);
STRATA_API int strata_table_property_get(strata_table_t *table, strata_col_t col,
                                         strata_property_info *info, strata_error *err);
/** The primary key property, or STRATA_NO_COL. */
STRATA_API int strata_table_primary_key(strata_table_t *table, strata_col_t *col,
                                        strata_error *err);

/* ---------------------------------------------------------------- objects: data
 *
 * Strings and binaries read from an object point into the map (or, in a write transaction, into
 * memory the transaction owns) and stay valid until the transaction ends; in a write
 * transaction a value over 1000 bytes stays valid only until that property of that object
 * changes.
 */

/** The number of objects in the table. */
STRATA_API int strata_table_size(strata_table_t *table, uint64_t *count, strata_error *err);
/**
 * Every object's key, ascending: up to `cap` are written to `keys`; *count receives how many
 * there are in all (call with cap 0 to size the buffer). One pass over the clusters' key leaves.
 */
STRATA_API int strata_table_keys(strata_table_t *table, strata_key_t *keys, size_t cap,
                                 size_t *count, strata_error *err);
/** Create an object in a table without a primary key; *key receives its new key. */
STRATA_API int strata_obj_create(strata_table_t *table, strata_key_t *key, strata_error *err);
/** Create an object with primary key `pk`. STRATA_ERR_EXISTS names the value if taken. */
STRATA_API int strata_obj_create_pk(strata_table_t *table, const strata_value *pk,
                                    strata_key_t *key, strata_error *err);
/** The object whose primary key is `pk`; STRATA_ERR_NOT_FOUND if none. */
STRATA_API int strata_obj_find_pk(strata_table_t *table, const strata_value *pk,
                                  strata_key_t *key, strata_error *err);
/** STRATA_OK if the object exists, STRATA_ERR_NOT_FOUND if not. */
STRATA_API int strata_obj_exists(strata_table_t *table, strata_key_t key, strata_error *err);
/**
 * A hint: the object's properties are about to be read one call at a time (as an object
 * accessor does). The cache lines of all its values (and of its strings' and binaries' bytes)
 * are asked of memory now, together, so that the reads that follow do not each wait for their
 * own miss. Reads and changes nothing. STRATA_ERR_NOT_FOUND if there is no such object.
 */
STRATA_API int strata_obj_prefetch(strata_table_t *table, strata_key_t key, strata_error *err);
/**
 * Delete an object: it leaves every index, links to it become null and it is removed from
 * every list that holds it.
 */
STRATA_API int strata_obj_delete(strata_table_t *table, strata_key_t key, strata_error *err);
/** Delete every object of the table, with the same consequences. */
STRATA_API int strata_table_clear(strata_table_t *table, strata_error *err);
/** Iterate in key order: the first key greater than `after` (-1 for the first object);
 *  STRATA_ERR_NOT_FOUND at the end. */
STRATA_API int strata_obj_next(strata_table_t *table, strata_key_t after, strata_key_t *key,
                               strata_error *err);

/** Read property `col` of object `key`. Bytes live as the section comment says. */
STRATA_API int strata_obj_get(strata_table_t *table, strata_key_t key, strata_col_t col,
                              strata_value *out, strata_error *err);
/** Read properties cols[0..ncols) of object `key` into out[0..ncols) in one call: the object
 *  is located once and its columns are fetched together (faster than ncols strata_obj_get).
 *  Fails, naming the property, on an unknown property or a list; ncols 0 checks that the object
 *  exists. */
STRATA_API int strata_obj_get_many(strata_table_t *table, strata_key_t key,
                                   const strata_col_t *cols, size_t ncols, strata_value *out,
                                   strata_error *err);
/** Write property `col`: the value's type must be the property's (INT is accepted for FLOAT
 *  and DOUBLE; any non-link type for MIXED), or NULL for nullable properties. */
STRATA_API int strata_obj_set(strata_table_t *table, strata_key_t key, strata_col_t col,
                              const strata_value *value, strata_error *err);

/* Lists (properties with STRATA_PROP_LIST). Indexes are 0-based; a bad index is
 * STRATA_ERR_NOT_FOUND naming the index and the size. */
STRATA_API int strata_list_size(strata_table_t *table, strata_key_t key, strata_col_t col,
                                size_t *size, strata_error *err);
STRATA_API int strata_list_get(strata_table_t *table, strata_key_t key, strata_col_t col,
                               size_t index, strata_value *out, strata_error *err);
/** Insert before `index` (index == size appends). */
STRATA_API int strata_list_insert(strata_table_t *table, strata_key_t key, strata_col_t col,
                                  size_t index, const strata_value *value, strata_error *err);
STRATA_API int strata_list_set(strata_table_t *table, strata_key_t key, strata_col_t col,
                               size_t index, const strata_value *value, strata_error *err);
/** Move the element at `from` so that it ends up at `to`. */
STRATA_API int strata_list_move(strata_table_t *table, strata_key_t key, strata_col_t col,
                                size_t from, size_t to, strata_error *err);
STRATA_API int strata_list_remove(strata_table_t *table, strata_key_t key, strata_col_t col,
                                  size_t index, strata_error *err);
STRATA_API int strata_list_clear(strata_table_t *table, strata_key_t key, strata_col_t col,
                                 strata_error *err);

/* Sets (properties with STRATA_PROP_SET): lists whose elements are unique, in no meaningful order.
 * The list calls read them (size, get) and change them (remove, clear, move); a list insert or set
 * that would hold a value twice is STRATA_ERR_EXISTS naming the property and the value. */
/** Add `value` unless the set holds it; *inserted (may be NULL) tells which. */
STRATA_API int strata_set_insert(strata_table_t *table, strata_key_t key, strata_col_t col,
                                 const strata_value *value, bool *inserted, strata_error *err);
/** Remove `value` if the set holds it; *removed (may be NULL) tells which. */
STRATA_API int strata_set_erase(strata_table_t *table, strata_key_t key, strata_col_t col,
                                const strata_value *value, bool *removed, strata_error *err);
/** The position of `value` in the set, or STRATA_ERR_NOT_FOUND when it does not hold it. */
STRATA_API int strata_set_find(strata_table_t *table, strata_key_t key, strata_col_t col,
                               const strata_value *value, size_t *index, strata_error *err);

/* Maps (properties with STRATA_PROP_MAP): string keys (valid UTF-8, not starting with '$', no
 * '.', as in Realm) to values of the property's type, or null (always allowed; a map of links
 * holds null where a linked object was deleted). Kept in ascending key order (by bytes): the
 * list calls read a map's values in that order (size, get) and clear it; the other list edits
 * are STRATA_ERR_WRONG_TYPE on a map. */
/** Set the value of `map_key` (adding the key when the map lacks it); *inserted (may be NULL)
 *  tells which. */
STRATA_API int strata_map_set(strata_table_t *table, strata_key_t key, strata_col_t col,
                              const char *map_key, size_t key_len, const strata_value *value,
                              bool *inserted, strata_error *err);
/** The value of `map_key`, or STRATA_ERR_NOT_FOUND when the map lacks the key. */
STRATA_API int strata_map_get(strata_table_t *table, strata_key_t key, strata_col_t col,
                              const char *map_key, size_t key_len, strata_value *out,
                              strata_error *err);
/** Remove `map_key` and its value if the map holds it; *removed (may be NULL) tells which. */
STRATA_API int strata_map_erase(strata_table_t *table, strata_key_t key, strata_col_t col,
                                const char *map_key, size_t key_len, bool *removed,
                                strata_error *err);
/** The key at position `index` of the map's key order (a STRING value; its value is
 *  strata_list_get at the same index). */
STRATA_API int strata_map_key_at(strata_table_t *table, strata_key_t key, strata_col_t col,
                                 size_t index, strata_value *out, strata_error *err);

/**
 * Backlinks: the objects of `origin` that link to object `key` of `table` through property
 * `origin_col` (a link or a list of links). *count receives how many distinct objects there are;
 * up to `cap` of their keys, ascending, are written to `keys` (which may be NULL when cap is 0).
 */
STRATA_API int strata_obj_backlinks(strata_table_t *table, strata_key_t key,
                                    strata_table_t *origin, strata_col_t origin_col,
                                    strata_key_t *keys, size_t cap, size_t *count,
                                    strata_error *err);

/** Every object whose indexed property `col` equals `value`, ascending keys, as backlinks. */
STRATA_API int strata_index_find(strata_table_t *table, strata_col_t col,
                                 const strata_value *value, strata_key_t *keys, size_t cap,
                                 size_t *count, strata_error *err);


/* ---------------------------------------------------------------- changes between versions */

/** What changed in a table between two versions (strata_changes_get). */
typedef struct strata_changes strata_changes_t;

enum {
    STRATA_CHANGE_DELETED = 0,  /* objects the older version has and the newer does not */
    STRATA_CHANGE_INSERTED = 1, /* objects the newer version has and the older does not */
    STRATA_CHANGE_MODIFIED = 2, /* objects of both whose properties differ */
};

/**
 * The objects of `table` deleted, inserted and modified from the version `older` reads to the
 * one `newer` reads (two transactions of one database; a write transaction's own changes
 * count). The two versions' cluster trees are compared skipping every subtree whose page is
 * the same in both (copy-on-write shares them): the cost follows what changed, not the table.
 * Keys come ascending. A change to a list's elements makes its object modified, with the list
 * property changed. *out is the caller's; free it with strata_changes_free.
 */
STRATA_API int strata_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table,
                                  strata_changes_t **out, strata_error *err);
/** How many objects of a kind (STRATA_CHANGE_*); 0 for a NULL c or an unknown kind. */
STRATA_API size_t strata_changes_count(const strata_changes_t *c, int kind);
/** The i-th key of a kind, ascending; -1 when out of range. */
STRATA_API strata_key_t strata_changes_key(const strata_changes_t *c, int kind, size_t i);
/** Whether property col of the i-th modified object changed. */
STRATA_API bool strata_changes_property_changed(const strata_changes_t *c, size_t i,
                                                strata_col_t col);
/** Pages read to compute c (to show the cost follows the change). */
STRATA_API uint64_t strata_changes_pages_read(const strata_changes_t *c);
STRATA_API void strata_changes_free(strata_changes_t *c);

/** Which elements of one list changed between two versions (strata_list_changes_get). */
typedef struct strata_list_changes strata_list_changes_t;

/**
 * The elements of the list property `col` of object `key` in `table` deleted from the list
 * `older` reads (STRATA_CHANGE_DELETED: indices in that list) and inserted into the one `newer`
 * reads (STRATA_CHANGE_INSERTED: indices in this list); every other element is in both, in the
 * same order (a moved element is deleted and inserted). A small edit script by elements'
 * values (Myers' diff after the common prefix and suffix); past 512 edits the differing middle
 * is reported deleted and inserted whole. An object missing from a version has an empty list
 * there. Indices come ascending.
 * *out is the caller's; free it with strata_list_changes_free.
 */
STRATA_API int strata_list_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table,
                                       strata_key_t key, strata_col_t col,
                                       strata_list_changes_t **out, strata_error *err);
/** How many indices of a kind (STRATA_CHANGE_DELETED or _INSERTED); 0 for NULL or another kind. */
STRATA_API size_t strata_list_changes_count(const strata_list_changes_t *c, int kind);
/** The i-th index of a kind, ascending; SIZE_MAX when out of range. */
STRATA_API size_t strata_list_changes_index(const strata_list_changes_t *c, int kind, size_t i);
STRATA_API void strata_list_changes_free(strata_list_changes_t *c);

/* ---------------------------------------------------------------- queries
 *
 * The predicate language (Realm's): comparisons == = != <> < <= > >=; BEGINSWITH, ENDSWITH,
 * CONTAINS, LIKE (* and ?) with [c] (case-insensitive), [d] (diacritic-insensitive) or [cd];
 * IN {…} or IN $n (a STRATA_TYPE_LIST argument); BETWEEN {lo, hi}; GEOWITHIN $n (a STRATA_TYPE_GEO
 * argument; `IN $n` with one too) on a link to an embedded point; AND && OR || NOT ! and
 * parentheses; TRUEPREDICATE, FALSEPREDICATE; key paths through links and lists (ANY by default,
 * or ALL / NONE) and backlinks (@links.Person.dogs.name); @count / @size on lists and strings,
 * @sum @avg @min @max on lists; SUBQUERY(dogs, $d, $d.color == 'x' AND $d.age > 2).@count; arguments
 * $0…$n and %@; literals: 'strings' "with escapes", numbers, true/false, nil/null,
 * T<seconds>:<nanoseconds>, YYYY-MM-DD@HH:MM:SS, oid(…), uuid(…); suffixes SORT(a ASC, b DESC),
 * DISTINCT(a, …), LIMIT(n). Example: "color = '白色' AND name BEGINSWITH[c] $0 SORT(age DESC)".
 */

typedef struct strata_query strata_query_t;
typedef struct strata_results strata_results_t;

/**
 * Compile `predicate` for table `table` as txn's schema has it. *out is owned by the caller
 * (strata_query_free) and may be run in any later transaction while the properties it names keep
 * their types. A syntax error names the 1-based column and what was expected there.
 */
STRATA_API int strata_query_compile(strata_txn_t *txn, const char *table, const char *predicate,
                                    strata_query_t **out, strata_error *err);
/** Free a compiled query. NULL is ignored. */
STRATA_API void strata_query_free(strata_query_t *query);
/**
 * Public names for stored properties (realm-core's key-path mapping; RealmSwift's
 * `propertiesMapping()`): a binding whose model calls a property `pk` while the file's column is
 * `custom_pk` adds (table, "pk", "custom_pk"), and queries compiled with the map accept `pk`
 * wherever a property of that table is named (paths, SORT, DISTINCT, @links.Table.property). A
 * name is looked up in the map first, then among the table's columns. The map belongs to the
 * caller and is never written to a file; do not add to it while a compile on another thread reads it.
 */
typedef struct strata_name_map strata_name_map_t;
STRATA_API int strata_name_map_create(strata_name_map_t **out, strata_error *err);
/** Free a map (NULL is ignored). Queries compiled with it do not need it afterwards. */
STRATA_API void strata_name_map_free(strata_name_map_t *map);
/**
 * `public_name` stands for `column` of `table`. Names: non-empty, at most STRATA_MAX_NAME bytes,
 * valid UTF-8 (INVALID_ARGUMENT naming which); a public name given twice for one table is EXISTS.
 * The names are not checked against a schema: a column that does not exist is reported by the
 * compile that uses it.
 */
STRATA_API int strata_name_map_add(strata_name_map_t *map, const char *table,
                                   const char *public_name, const char *column, strata_error *err);
/** strata_query_compile with public names from `names` (NULL: none). */
STRATA_API int strata_query_compile_mapped(strata_txn_t *txn, const char *table, const char *predicate,
                                           const strata_name_map_t *names, strata_query_t **out,
                                           strata_error *err);
/** Check a region as a GEOWITHIN argument would be checked: STRATA_OK, or
 *  STRATA_ERR_INVALID_ARGUMENT saying what is wrong (an open ring, crossing edges, a hole
 *  outside the boundary, a negative radius, ...). */
STRATA_API int strata_geo_check(const strata_geo *shape, strata_error *err);

/** How many arguments ($0…$n-1, %@) the query takes. */
STRATA_API size_t strata_query_arg_count(const strata_query_t *query);

/**
 * Run the query on txn's snapshot with `args`: *out receives the matching object keys (in key
 * order, or as SORT/DISTINCT/LIMIT say), owned by the caller (strata_results_free). Running it on
 * a newer version gives the newer answer.
 */
STRATA_API int strata_query_run(strata_query_t *query, strata_txn_t *txn, const strata_value *args,
                                size_t nargs, strata_results_t **out, strata_error *err);
/** How many objects match, without materializing them (unless SORT/DISTINCT/LIMIT). */
STRATA_API int strata_query_count(strata_query_t *query, strata_txn_t *txn,
                                  const strata_value *args, size_t nargs, uint64_t *count,
                                  strata_error *err);

/**
 * Whether object `key` satisfies the query's predicate in txn's snapshot (SORT, DISTINCT and
 * LIMIT play no part); false for a key with no object. With strata_query_position, a live
 * collection follows one commit's changes without running the query again.
 */
STRATA_API int strata_query_matches(strata_query_t *query, strata_txn_t *txn, const strata_value *args,
                                    size_t nargs, strata_key_t key, bool *matches, strata_error *err);
/**
 * Where object `key` goes among `keys` (n objects of the query's table, in the query's SORT order
 * as a run gives it; ties in key order): *position is the index of the first that sorts after
 * it. Without SORT the order is the keys'. INVALID_ARGUMENT for a query with DISTINCT or LIMIT.
 */
STRATA_API int strata_query_position(strata_query_t *query, strata_txn_t *txn, const strata_key_t *keys,
                                     size_t n, strata_key_t key, size_t *position, strata_error *err);

STRATA_API size_t strata_results_size(const strata_results_t *results);
/** The i-th key (i < size), or -1 when out of range. */
STRATA_API strata_key_t strata_results_key(const strata_results_t *results, size_t i);
/** Free results. NULL is ignored. */
STRATA_API void strata_results_free(strata_results_t *results);

typedef enum strata_aggregate {
    STRATA_AGG_COUNT = 0, /* non-null values */
    STRATA_AGG_SUM = 1,   /* int: INT; float/double: DOUBLE; 0 when there are none */
    STRATA_AGG_MIN = 2,   /* NULL when there are no values */
    STRATA_AGG_MAX = 3,
    STRATA_AGG_AVG = 4,   /* DOUBLE; NULL when there are no values */
} strata_aggregate;

/**
 * Aggregate property `col` (int, float, double or timestamp; COUNT takes any) over the results,
 * reading the objects in txn (the results' snapshot or a newer one); nulls are ignored.
 */
STRATA_API int strata_results_aggregate(const strata_results_t *results, strata_table_t *table,
                                        strata_col_t col, strata_aggregate agg, strata_value *out,
                                        strata_error *err);

/** The type's name ("int", "string", ...); a static string. */
STRATA_API const char *strata_type_name(strata_type type);

#ifdef __cplusplus
}
#endif
#endif /* STRATA_H */
