/*
 * api_db.c — strata_db_* and strata_txn_*: argument checks, opening and closing, the life of a
 * transaction (reader slot or writer lock, commit, abort, refresh).
 */
#include "btree.h"
#include "freelist.h"
#include "internal.h"
#include "objstore.h"
#include "os.h"
#include "pager.h"
#include "readers.h"

#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#define DEFAULT_MAP_SIZE (64ull << 30)

void strata_options_init(strata_options *opts) {
    if (!opts) return;
    memset(opts, 0, sizeof *opts);
    opts->size = sizeof *opts;
    opts->durability = STRATA_DURABILITY_FULL;
    opts->create = true;
    opts->map_size = DEFAULT_MAP_SIZE;
    opts->max_readers = 126;
}

static int check_options(const strata_options *o, strata_error *err) {
    if (o->durability < STRATA_DURABILITY_FULL || o->durability > STRATA_DURABILITY_MEMORY)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "unknown durability mode %d",
                      (int)o->durability);
    if (o->map_size < (1u << 20))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "map_size %llu is below 1 MiB",
                      (unsigned long long)o->map_size);
    if (o->max_readers < 1 || o->max_readers > 65536)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "max_readers %u is outside 1..65536",
                      o->max_readers);
    if (o->io && (o->io->size < sizeof(strata_io_methods) || !o->io->pwrite ||
                  !o->io->fdatasync || !o->io->grow))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "the I/O table is incomplete (size %zu, every call must be set)", o->io->size);
    return STRATA_OK;
}

static void db_free(strata_db_t *db) {
    st_readers_close(db);
    st_os_close(db);
    st_freelist_clear(&db->free_cache);
    st_reuse_map_clear(&db->reuse_map);
    free(db->log_buf);
    pthread_mutex_destroy(&db->write_mutex);
    pthread_mutex_destroy(&db->state_mutex);
    free(db->path);
    free(db);
}

/* A new file (or store): write the first two meta slots, once, under the writer lock. A file
 * is written under a temporary name and renamed into place once synced, so a crash while
 * creating leaves no half-made database behind. */
static int create_file(strata_db_t *db, strata_error *err) {
    pthread_mutex_t *mm = st_os_mem_writer_mutex(db);
    if (mm) pthread_mutex_lock(mm);
    int rc = st_readers_writer_lock(db, true, err);
    if (rc == STRATA_OK) {
        bool missing = true;
        if (!db->mem) rc = st_os_open(db, &missing, err); /* another process may have won */
        else missing = !st_meta_valid((const st_meta *)db->map);
        if (rc == STRATA_OK && missing) {
            rc = st_os_create_begin(db, err);
            if (rc == STRATA_OK) rc = st_pager_create(db, err);
            if (rc == STRATA_OK) rc = st_os_create_commit(db, err);
        }
        st_readers_writer_unlock(db);
    }
    if (mm) pthread_mutex_unlock(mm);
    return rc;
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
    strata_options_init(&o);
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
    strata_db_t *db = calloc(1, sizeof *db);
    if (!db || !(db->path = strdup(path))) {
        free(db);
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory opening '%s'", path);
    }
    db->opts = o;
    db->io = o.io ? *o.io : *strata_io_default();
    db->fd = -1;
    db->log_fd = -1;
    db->map_size = (o.map_size + ST_PAGE_SIZE - 1) & ~(uint64_t)(ST_PAGE_SIZE - 1);
    pthread_mutex_init(&db->write_mutex, NULL);
    pthread_mutex_init(&db->state_mutex, NULL);

    bool missing;
    /* Files: the lock file first, as it serialises creating the database file. */
    if (o.durability == STRATA_DURABILITY_MEMORY) {
        if ((rc = st_os_open(db, &missing, err)) || (rc = st_readers_open(db, err))) goto fail;
    } else {
        if ((rc = st_readers_open(db, err)) || (rc = st_os_open(db, &missing, err))) goto fail;
    }
    if (missing && (rc = create_file(db, err))) goto fail;
    st_meta m;
    if (st_readers_fresh(db)) { /* the first handle: maybe after a crash */
        if ((rc = st_pager_recover(db, &m, err))) goto fail;
        st_readers_publish(db, m.version);
    } else if ((rc = st_pager_latest_meta(db, &m, err))) { /* others keep it current */
        goto fail;
    }
    *out = db;
    return STRATA_OK;
fail:
    db_free(db);
    return rc;
}

int strata_db_close(strata_db_t *db, strata_error *err) {
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_close: db is NULL");
    pthread_mutex_lock(&db->state_mutex);
    int open = db->open_txns;
    pthread_mutex_unlock(&db->state_mutex);
    if (open)
        return st_err(err, STRATA_ERR_BUSY, "'%s' has %d transaction(s) not yet freed", db->path,
                      open);
    /* NO_SYNC commits become durable at close, so the next open need not check them. */
    strata_error local;
    int rc = db->unsynced ? st_pager_sync(db, err ? err : &local) : STRATA_OK;
    db_free(db);
    return rc;
}

int strata_db_sync(strata_db_t *db, strata_error *err) {
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_sync: db is NULL");
    strata_error local;
    return st_pager_sync(db, err ? err : &local);
}

/* ------------------------------------------------------------------ transactions */

static void txn_register(strata_db_t *db, int delta) {
    pthread_mutex_lock(&db->state_mutex);
    db->open_txns += delta;
    pthread_mutex_unlock(&db->state_mutex);
}

static void writer_unlock(strata_txn_t *txn) {
    if (!txn->holds_lock) return;
    st_readers_writer_unlock(txn->db);
    pthread_mutex_t *mm = st_os_mem_writer_mutex(txn->db);
    pthread_mutex_unlock(mm ? mm : &txn->db->write_mutex);
    txn->holds_lock = false;
}

static int writer_lock(strata_txn_t *txn, bool wait, strata_error *err) {
    strata_db_t *db = txn->db;
    pthread_mutex_t *mm = st_os_mem_writer_mutex(db);
    pthread_mutex_t *mx = mm ? mm : &db->write_mutex;
    if (wait) pthread_mutex_lock(mx);
    else if (pthread_mutex_trylock(mx) != 0)
        return st_err(err, STRATA_ERR_BUSY, "another writer holds '%s'", db->path);
    int rc = st_readers_writer_lock(db, wait, err);
    if (rc) {
        pthread_mutex_unlock(mx);
        return rc;
    }
    txn->holds_lock = true;
    return STRATA_OK;
}

static void catalog_reset(strata_txn_t *txn) {
    strata_tree_t *c = &txn->catalog;
    memset(c, 0, sizeof *c);
    c->txn = txn;
    c->is_catalog = true;
    c->st.kind = STRATA_KEY_BYTES;
    c->st.root = txn->meta.catalog_root;
    c->st.count = txn->meta.catalog_count;
    memcpy(c->name, "(catalog)", 10);
}

static int read_begin(strata_txn_t *txn, strata_error *err) {
    int rc = STRATA_OK;
    if (txn->reader_slot < 0) rc = st_readers_acquire(txn->db, &txn->reader_slot, err);
    if (rc == STRATA_OK) rc = st_pager_snapshot(txn->db, txn->reader_slot, &txn->meta, err);
    if (rc == STRATA_OK) catalog_reset(txn);
    return rc;
}

int strata_txn_begin(strata_db_t *db, unsigned flags, strata_txn_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_begin: out is NULL");
    *out = NULL;
    if (!db) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_begin: db is NULL");
    if (flags & ~(unsigned)(STRATA_TXN_WRITE | STRATA_TXN_TRY))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_txn_begin: unknown flags 0x%x",
                      flags);
    bool write = flags & STRATA_TXN_WRITE;
    if (write && db->opts.read_only)
        return st_err(err, STRATA_ERR_READ_ONLY, "'%s' is open read-only", db->path);
    if (write && db->broken)
        return st_err(err, STRATA_ERR_IO, "'%s' must be reopened: %s", db->path, db->broken_why);
    strata_txn_t *txn = calloc(1, sizeof *txn);
    if (!txn) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    txn->db = db;
    txn->write = write;
    txn->reader_slot = -1;
    int rc;
    if (write) {
        if ((rc = writer_lock(txn, !(flags & STRATA_TXN_TRY), err))) goto fail;
        if ((rc = st_pager_begin_write(txn, err))) goto fail;
        catalog_reset(txn);
    } else if ((rc = read_begin(txn, err))) {
        goto fail;
    }
    txn->state = ST_TXN_ACTIVE;
    txn_register(db, 1);
    *out = txn;
    return STRATA_OK;
fail:
    if (write) {
        st_pager_end_write(txn);
        writer_unlock(txn);
    }
    if (txn->reader_slot >= 0) st_readers_release(db, txn->reader_slot);
    free(txn);
    return rc;
}

int st_txn_check(const strata_txn_t *txn, bool write, strata_error *err) {
    if (!txn) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the transaction is NULL");
    if (txn->state == ST_TXN_ENDED)
        return st_err(err, STRATA_ERR_TXN_STATE, "the transaction has ended");
    if (txn->state == ST_TXN_FAILED)
        return st_err(err, STRATA_ERR_TXN_STATE,
                      "the transaction failed earlier and can only be aborted");
    if (write && !txn->write)
        return st_err(err, STRATA_ERR_READ_ONLY, "a write in a read transaction");
    return STRATA_OK;
}

static void txn_end(strata_txn_t *txn) {
    if (txn->write) {
        st_pager_end_write(txn);
        writer_unlock(txn);
    } else if (txn->reader_slot >= 0) {
        st_readers_release(txn->db, txn->reader_slot);
        txn->reader_slot = -1;
    }
    txn->state = ST_TXN_ENDED;
    st_os_end(txn);
}

/* Write every changed tree's root and count into the catalog. */
static int flush_trees(strata_txn_t *txn, strata_error *err) {
    for (strata_tree_t *t = txn->trees; t; t = t->next) {
        if (!t->dirty || t->dropped) continue;
        uint8_t rec[24] = {0};
        st_wr64(rec, t->st.root);
        st_wr64(rec + 8, t->st.count);
        rec[16] = t->st.kind;
        rec[17] = t->st.tflags;
        int rc = st_bt_put(txn, &txn->catalog.st, (const uint8_t *)t->name, t->name_len, rec,
                           sizeof rec, err);
        if (rc) return rc;
        t->dirty = false;
    }
    return STRATA_OK;
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
    if (txn->write) {
        rc = st_os_flush(txn, err);
        if (rc == STRATA_OK) rc = flush_trees(txn, err);
        if (rc == STRATA_OK) rc = st_pager_commit(txn, err);
    }
    txn_end(txn);
    return rc;
}

void strata_txn_abort(strata_txn_t *txn) {
    if (txn && txn->state != ST_TXN_ENDED) txn_end(txn);
}

void strata_txn_free(strata_txn_t *txn) {
    if (!txn) return;
    strata_txn_abort(txn);
    st_os_free(txn);
    for (strata_cursor_t *c = txn->cursors, *next; c; c = next) {
        next = c->next;
        free(c);
    }
    for (strata_tree_t *t = txn->trees, *next; t; t = next) {
        next = t->next;
        st_leafdir_free(t);
        free(t);
    }
    txn_register(txn->db, -1);
    free(txn);
}

int strata_txn_refresh(strata_txn_t *txn, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = st_txn_check(txn, false, err);
    if (rc) return rc;
    if (txn->write)
        return st_err(err, STRATA_ERR_TXN_STATE, "refresh is for read transactions");
    for (strata_tree_t *t = txn->trees; t; t = t->next) {
        t->stale = true;
        st_leafdir_free(t);
    }
    st_os_stale(txn);
    if ((rc = read_begin(txn, err))) txn_end(txn);
    return rc;
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
    strata_txn_t *txn;
    int rc = strata_txn_begin(db, STRATA_TXN_READ, &txn, err);
    if (rc) return rc;
    memset(info, 0, sizeof *info);
    info->version = txn->meta.version;
    info->page_size = ST_PAGE_SIZE;
    info->page_count = txn->meta.page_count;
    info->free_pages = txn->meta.free_count;
    strata_txn_free(txn);
    if (db->mem) {
        info->file_size = info->page_count * ST_PAGE_SIZE;
    } else {
        off_t size = lseek(db->fd, 0, SEEK_END);
        info->file_size = size > 0 ? (uint64_t)size : 0;
    }
    info->oldest_version = st_readers_oldest(db, info->version, &info->live_readers);
    return STRATA_OK;
}

int strata_db_live_versions(strata_db_t *db, uint64_t *versions, size_t cap, size_t *count,
                            strata_error *err) {
    if (!db || !count || (cap && !versions))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_db_live_versions: NULL argument");
    *count = st_readers_list(db, versions, cap);
    return STRATA_OK;
}
