/*
 * api_db.c — strata_db_* and strata_txn_*: argument checks and error reporting around the
 * storage layer's handles (storage/db.c, storage/txn.c), with the trees (btree/tree.c) and the
 * object store (objects/schema.c) begun, committed and ended alongside each transaction.
 */
#include "objects/objects.h"

#include <stddef.h>

#define DEFAULT_MAP_SIZE (64ull << 30)

/* The growth rule (strata.h): the caller gets the first `size` bytes of `full` (a struct of
 * `full_size` bytes whose first member is its size_t `size`), with that member saying how many
 * were written; nothing past them. */
static void give_sized(void *out, size_t size, void *full, size_t full_size) {
    if (size > full_size) size = full_size;
    memcpy(full, &size, sizeof size);
    memcpy(out, full, size);
}

static void options_defaults(strata_options *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->durability = STRATA_DURABILITY_FULL;
    o->create = true;
    o->map_size = DEFAULT_MAP_SIZE;
    o->max_readers = 126;
    o->open_timeout_ms = 30000;
    o->unpacked_cache_bytes = ST_UNPACKED_DEFAULT_BYTES;
}

void strata_options_init_sized(strata_options *opts, size_t size) {
    if (!opts || size < sizeof opts->size) return;
    strata_options d;
    options_defaults(&d);
    give_sized(opts, size, &d, sizeof d);
}

/* The symbol programs built against 0.1-0.7 call: their struct ends after `io`. */
#undef strata_options_init
void strata_options_init(strata_options *opts) {
    strata_options_init_sized(opts, offsetof(strata_options, trust_pages));
}

static int check_options(const strata_options *o, strata_error *err) {
    if (o->durability < STRATA_DURABILITY_FULL || o->durability > STRATA_DURABILITY_MEMORY)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "unknown durability mode %d",
                      (int)o->durability);
    if (o->map_size < (1u << 20) || o->map_size > ST_MAP_SIZE_MAX)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "map_size %llu is outside 1 MiB .. %llu TiB (the address space)",
                      (unsigned long long)o->map_size, (unsigned long long)(ST_MAP_SIZE_MAX >> 40));
    if (o->max_readers < 1 || o->max_readers > 65536)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "max_readers %u is outside 1..65536",
                      o->max_readers);
    if (o->encryption_key && o->encryption_key_len != 64)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "an encryption key is 64 bytes; this one "
                      "is %zu", o->encryption_key_len);
    if (o->io && (o->io->size < sizeof(strata_io_methods) || !o->io->pwrite ||
                  !o->io->fdatasync || !o->io->grow))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "the I/O table is incomplete (size %zu, every call must be set)", o->io->size);
    return STRATA_OK;
}

int strata_db_open(const char *path, const strata_options *opts, strata_db_t **out,
                   strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_open: out is NULL");
    *out = NULL;
    if (!path || !*path)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_open: empty path");
    strata_options o;
    options_defaults(&o);
    if (opts) {
        if (opts->size < offsetof(strata_options, io) + sizeof(void *) ||
            opts->size > 4096)
            return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                          "strata_options.size is %zu: call strata_options_init first", opts->size);
        memcpy(&o, opts, opts->size < sizeof o ? opts->size : sizeof o);
        o.size = sizeof o;
    }
    int rc = check_options(&o, err);
    if (rc) return rc;
    return st_db_open(path, &o, st_verify_unsynced, out, err);
}

int strata_db_recovery(strata_db_t *db, strata_recovery *out, strata_error *err) {
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_recovery: db is NULL");
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_recovery: out is NULL");
    *out = db->recovery;
    return STRATA_OK;
}

int strata_db_close(strata_db_t *db, strata_error *err) {
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_close: db is NULL");
    int open = st_db_open_txns(db);
    if (open)
        return st_err(err, STRATA_ERR_BUSY, "'%s' has %d transaction(s) not yet freed",
                      db->file.shown, open);
    strata_error local;
    return st_db_close(db, err ? err : &local);
}

int strata_db_sync(strata_db_t *db, strata_error *err) {
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_sync: db is NULL");
    strata_error local;
    return st_db_sync(db, err ? err : &local);
}

int strata_db_sync_commits(strata_db_t *db, uint64_t *covered, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_sync_commits: db is NULL");
    uint64_t v;
    int rc = st_db_sync_commits(db, &v, err);
    if (covered) *covered = v;
    return rc;
}

/* ------------------------------------------------------------------ transactions */

int strata_txn_begin(strata_db_t *db, unsigned flags, strata_txn_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_begin: out is NULL");
    *out = NULL;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_begin: db is NULL");
    if (flags & ~(unsigned)(STRATA_TXN_WRITE | STRATA_TXN_TRY | STRATA_TXN_NO_SYNC))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_begin: unknown flags 0x%x",
                      flags);
    if ((flags & (STRATA_TXN_TRY | STRATA_TXN_NO_SYNC)) && !(flags & STRATA_TXN_WRITE))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "strata_txn_begin: STRATA_TXN_%s applies to write transactions only",
                      (flags & STRATA_TXN_TRY) ? "TRY" : "NO_SYNC");
    strata_txn_t *txn;
    int rc = st_txn_begin(db, flags & STRATA_TXN_WRITE, !(flags & STRATA_TXN_TRY), flags & STRATA_TXN_NO_SYNC,
                          &txn, err);
    if (rc) return rc;
    if ((rc = st_trees_begin(txn, err))) {
        st_txn_free(txn);
        return rc;
    }
    *out = txn;
    return STRATA_OK;
}

int strata_txn_clone(strata_txn_t *txn, strata_txn_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_clone: out is NULL");
    *out = NULL;
    int rc = st_txn_check(txn, false, err);
    if (rc) return rc;
    if (txn->write)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "strata_txn_clone: a write transaction cannot be cloned (only a read one)");
    strata_txn_t *clone;
    if ((rc = st_txn_clone(txn, &clone, err))) return rc;
    if ((rc = st_trees_begin(clone, err))) {
        st_txn_free(clone);
        return rc;
    }
    *out = clone;
    return STRATA_OK;
}

/* The transaction ended (commit, abort, failure): the object layer lets go of its data. */
static void txn_end(strata_txn_t *txn) {
    st_txn_end(txn);
    st_store_end(txn);
}

int strata_txn_commit_unsynced(strata_txn_t *txn, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!txn) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_commit_unsynced: txn is NULL");
    if (txn->state == ST_TXN_ACTIVE && !txn->write)
        return st_err(err, STRATA_ERR_TXN_STATE, "strata_txn_commit_unsynced: a read transaction has nothing to commit");
    if (txn->write && txn->db->file.opts.durability == STRATA_DURABILITY_FULL && !txn->db->file.mem)
        txn->commit_unsynced = true;
    return strata_txn_commit(txn, err);
}

int strata_txn_commit(strata_txn_t *txn, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!txn) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_commit: txn is NULL");
    int rc = st_txn_check(txn, false, err);
    if (rc) {
        if (txn->state == ST_TXN_FAILED) txn_end(txn);
        return rc;
    }
    if (txn->write && (rc = st_store_flush(txn, err)) == STRATA_OK)
        rc = st_trees_commit(txn, err); /* ends it */
    txn_end(txn);
    return rc;
}

void strata_txn_abort(strata_txn_t *txn) {
    if (txn && txn->state != ST_TXN_ENDED) txn_end(txn);
}

void strata_txn_free(strata_txn_t *txn) {
    if (!txn) return;
    strata_txn_abort(txn);
    st_store_free(txn);
    st_trees_free(txn);
    st_txn_free(txn);
}

int strata_txn_refresh(strata_txn_t *txn, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = st_txn_check(txn, false, err);
    if (rc) return rc;
    if (txn->write)
        return st_err(err, STRATA_ERR_TXN_STATE, "refresh is for read transactions");
    st_store_stale(txn);
    if ((rc = st_txn_refresh(txn, err))) {
        st_store_end(txn);
        return rc;
    }
    st_trees_refresh(txn);
    return STRATA_OK;
}

uint64_t strata_txn_version(const strata_txn_t *txn) {
    if (!txn) return 0;
    return txn->write ? txn->new_version : txn->meta.version;
}

/* ------------------------------------------------------------------ information */

int strata_db_info_get(strata_db_t *db, strata_db_info *info, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db || !info)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_info_get: NULL argument");
    return st_db_info(db, info, err);
}

int strata_db_space_get(strata_db_t *db, strata_space *out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db || !out)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_space_get: NULL argument");
    size_t known = out->size;
    if (known < offsetof(strata_space, packed_bytes) || known > 4096)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "strata_space.size is %zu: set it to sizeof(strata_space) (at least %zu)", known,
                      offsetof(strata_space, packed_bytes));
    strata_db_info info;
    int rc = st_db_info(db, &info, err);
    if (rc) return rc;
    strata_space s = {0};
    s.file_bytes = info.file_size;
    s.used_bytes = (info.page_count - info.free_pages) * info.page_size;
    s.free_bytes = info.free_pages * info.page_size;
    rc = st_db_packed(db, &s.packed_bytes, &s.packed_pages, err);
    if (rc) return rc;
    s.unpacked_bytes = st_unpacked_bytes(db);
    give_sized(out, known, &s, sizeof s); /* only what the caller's struct has */
    return STRATA_OK;
}

static void copy_defaults(strata_copy_options *o) {
    memset(o, 0, sizeof *o);
    o->size = sizeof *o;
    o->pack = true;
    o->pack_level = 1;
}

void strata_copy_options_init_sized(strata_copy_options *opts, size_t size) {
    if (!opts || size < sizeof opts->size) return;
    strata_copy_options d;
    copy_defaults(&d);
    give_sized(opts, size, &d, sizeof d);
}

/* The symbol programs built against 0.8 call: their struct ends after `pack`. */
#undef strata_copy_options_init
void strata_copy_options_init(strata_copy_options *opts) {
    strata_copy_options_init_sized(opts, offsetof(strata_copy_options, pack_level));
}

/* opts (may be NULL) read up to the size the caller knows. */
static int copy_options(const strata_copy_options *opts, strata_copy_options *o, const char *fn,
                        strata_error *err) {
    copy_defaults(o);
    if (!opts) return STRATA_OK;
    if (opts->size < offsetof(strata_copy_options, pack) + sizeof(bool) || opts->size > 4096)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "%s: strata_copy_options.size is %zu: call strata_copy_options_init first", fn,
                      opts->size);
    memcpy(o, opts, opts->size < sizeof *o ? opts->size : sizeof *o);
    o->size = sizeof *o;
    if (o->pack_level < 0 || o->pack_level > 12)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: pack_level %d is outside 0..12", fn,
                      o->pack_level);
    if (o->set_encryption && o->encryption_key && o->encryption_key_len != 64)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: an encryption key is 64 bytes; this "
                      "one is %zu", fn, o->encryption_key_len);
    return STRATA_OK;
}

int strata_db_write_copy(strata_db_t *db, const char *path, const strata_copy_options *opts,
                         strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_write_copy: db is NULL");
    if (!path || !*path)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_write_copy: empty path");
    strata_copy_options o;
    int rc = copy_options(opts, &o, "strata_db_write_copy", err);
    if (rc) return rc;
    st_copy_key key = {o.set_encryption, o.encryption_key, o.encryption_key_len};
    return st_db_write_copy(db, path, o.pack ? o.pack_level : -1, &key, st_copy_objects, err);
}

int strata_db_compact(strata_db_t *db, const strata_copy_options *opts, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_compact: db is NULL");
    strata_copy_options o;
    int rc = copy_options(opts, &o, "strata_db_compact", err);
    if (rc) return rc;
    st_copy_key key = {o.set_encryption, o.encryption_key, o.encryption_key_len};
    return st_db_compact(db, o.pack ? o.pack_level : -1, &key, st_copy_objects, err);
}

int strata_db_live_versions(strata_db_t *db, uint64_t *versions, size_t cap, size_t *count,
                            strata_error *err) {
    if (!db || !count || (cap && !versions))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_live_versions: NULL argument");
    *count = st_db_live_versions(db, versions, cap);
    return STRATA_OK;
}

int strata_db_readers(strata_db_t *db, strata_reader *readers, size_t cap, size_t *count,
                      strata_error *err) {
    if (!db || !count || (cap && !readers))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_readers: NULL argument");
    *count = st_db_readers(db, readers, cap);
    return STRATA_OK;
}

int strata_db_clear_stale_readers(strata_db_t *db, size_t *cleared, strata_error *err) {
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_clear_stale_readers: db is NULL");
    size_t n = st_db_clear_stale_readers(db);
    if (cleared) *cleared = n;
    return STRATA_OK;
}

int strata_db_wait_commit(strata_db_t *db, uint64_t after, uint32_t timeout_ms,
                          uint64_t *version, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db || !version)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_wait_commit: NULL argument");
    return st_db_wait_commit(db, after, timeout_ms, version, err);
}

int strata_db_stop_waits(strata_db_t *db, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_stop_waits: db is NULL");
    st_db_stop_waits(db);
    return STRATA_OK;
}

int strata_db_verify(strata_db_t *db, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_verify: db is NULL");
    int rc = STRATA_ERR_BUSY;
    /* (BUSY: commits of other handles overwrote the snapshot's meta slot, and its free-list
     * delta, before the walk read it: a new snapshot) */
    for (int attempt = 0; rc == STRATA_ERR_BUSY && attempt < 8; attempt++) {
        strata_txn_t *txn;
        if ((rc = strata_txn_begin(db, STRATA_TXN_READ, &txn, err))) return rc;
        rc = st_verify_pages(txn, err);
        if (rc == STRATA_OK) rc = st_verify_objects(txn, err);
        strata_txn_free(txn);
    }
    return rc;
}
