/*
 * db.c — the life of a database handle in the storage layer: open (the lock file, then the
 * database file, made whole under a temporary name if missing), recovery by the first handle
 * after every handle closed (holding the open and writer locks until the recovered version is
 * published, so that handles opening meanwhile wait and then see it), close (syncing what the handle committed without sync), and what
 * the handle can tell about its file (versions, pages, readers).
 */
#include "storage/cipher.h"
#include "storage/commitlog.h"
#include "storage/freelist.h"
#include "storage/packed.h"
#include "storage/pager.h"
#include "storage/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void db_free(strata_db_t *db) {
    st_readers_close(db);
    st_os_close(&db->file);
    st_trust_free(db);
    st_share_clear(db);
    pthread_mutex_destroy(&db->share_lock);
    st_unpacked_free(db);
    st_freelist_clear(&db->free_cache);
    st_fl_delta_clear(&db->free_cache_delta);
    free(db->free_cache_image);
    db->free_cache_image = NULL;
    st_reuse_map_clear(&db->reuse_map);
    st_pager_free_spares(db);
    free(db->log_buf);
    st_cipher_free(db->cipher);
    for (size_t i = 0; i < sizeof db->open_locks / sizeof *db->open_locks; i++)
        pthread_mutex_destroy(&db->open_locks[i]);
    pthread_mutex_destroy(&db->meta_auth_lock);
    pthread_mutex_destroy(&db->write_mutex);
    pthread_mutex_destroy(&db->state_mutex);
    free(db->file.path);
    free(db);
}

/* A new file (or store): write the first two meta slots, once, under the writer lock. A file
 * is written under a temporary name and renamed into place once synced, so a crash while
 * creating leaves no half-made database behind. */
static int create_file(strata_db_t *db, strata_error *err) {
    pthread_mutex_t *mm = st_os_mem_writer_mutex(&db->file);
    if (mm) pthread_mutex_lock(mm);
    int rc = st_readers_writer_lock(db, true, err);
    if (rc == STRATA_OK) {
        bool missing = true;
        if (!db->file.mem) rc = st_os_open(&db->file, &missing, err); /* another process may have won */
        else missing = !st_meta_valid((const st_meta *)db->file.map);
        if (rc == STRATA_OK && missing) {
            rc = st_os_create_begin(&db->file, err);
            if (rc == STRATA_OK) rc = st_pager_create(db, err);
            if (rc == STRATA_OK) rc = st_os_create_commit(&db->file, err);
        }
        st_readers_writer_unlock(db);
    }
    if (mm) pthread_mutex_unlock(mm);
    return rc;
}

int st_db_open(const char *path, const strata_options *opts, st_check_unsynced_fn check,
               strata_db_t **out, strata_error *err) {
    *out = NULL;
    strata_db_t *db = calloc(1, sizeof *db);
    if (!db || !st_os_set_path(&db->file, path)) {
        free(db);
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory opening a database");
    }
    db->file.opts = *opts;
    db->file.io = opts->io ? *opts->io : *strata_io_default();
    db->file.fd = -1;
    db->file.log_fd = -1;
    db->file.log_cached_fd = -1;
    db->file.map_size = (opts->map_size + ST_PAGE_SIZE - 1) & ~(uint64_t)(ST_PAGE_SIZE - 1);
    pthread_mutex_init(&db->write_mutex, NULL);
    pthread_mutex_init(&db->state_mutex, NULL);
    for (size_t i = 0; i < sizeof db->open_locks / sizeof *db->open_locks; i++)
        pthread_mutex_init(&db->open_locks[i], NULL);
    pthread_mutex_init(&db->meta_auth_lock, NULL);
    pthread_mutex_init(&db->share_lock, NULL);
    db->file.opts.encryption_key = NULL; /* the handle keeps the keys, not the caller's pointer */

    bool missing;
    int rc;
    /* An in-memory database has no file to encrypt: its key is not used. */
    if (opts->encryption_key && opts->durability != STRATA_DURABILITY_MEMORY &&
        (rc = st_cipher_new(opts->encryption_key, opts->encryption_key_len, &db->cipher, err))) {
        db_free(db);
        return rc;
    }
    /* Files: the lock file first, as it serialises creating the database file. */
    if (opts->durability == STRATA_DURABILITY_MEMORY) {
        if ((rc = st_os_open(&db->file, &missing, err)) || (rc = st_readers_open(db, err)))
            goto fail;
    } else {
        if ((rc = st_readers_open(db, err)) || (rc = st_os_open(&db->file, &missing, err)))
            goto fail;
    }
    /* An empty file beside the commit log of a database: the file was cut or replaced, and
     * what the log holds cannot be replayed onto nothing. */
    uint64_t log_id, log_base;
    bool emptied = missing && db->file.found_empty && st_log_exists(db, &log_id, &log_base);
    char log[ST_SHOWN_PATH + 8];
    st_os_log_shown(&db->file, log, sizeof log);
    if (emptied && !opts->accept_rollback) {
        rc = ST_CORRUPT(err, "'%s' is empty, but its commit log '%s' holds commits of database "
                        "%016llx: the file was cut or replaced; open with accept_rollback to "
                        "start an empty database", db->file.shown, log, (unsigned long long)log_id);
        goto fail;
    }
    if (missing && (rc = create_file(db, err))) goto fail;
    if ((rc = st_trust_init(db, err)) || (rc = st_unpacked_init(db, err))) goto fail;
    st_meta m;
    if (st_readers_fresh(db)) { /* the first handle: maybe after a crash */
        /* Under the writer lock, and still holding the open lock, so that nobody opens, reads
         * or writes before the recovered version is published (readers.c). A recoverer that
         * dies leaves both locks to the next opener, which is alone and recovers again. */
        if ((rc = st_readers_writer_lock(db, true, err))) goto fail;
        /* A compaction that died before its rename left its whole copy beside the file. */
        if (!db->file.mem && !opts->read_only) {
            char leftover[4200];
            snprintf(leftover, sizeof leftover, "%s.compacting", db->file.path);
            unlink(leftover);
        }
        rc = st_pager_recover(db, check, &m, err);
        if (rc == STRATA_OK) st_readers_publish(db, m.version, true);
        st_readers_writer_unlock(db);
        if (rc) goto fail;
        if (emptied) { /* accepted: an empty database instead of the versions the log knew */
            db->recovery.newest_version = log_base;
            db->recovery.dropped = log_base;
            snprintf(db->recovery.why, sizeof db->recovery.why,
                     "the file was empty beside the commit log of database %016llx (versions up "
                     "to %llu and more): started an empty database", (unsigned long long)log_id,
                     (unsigned long long)log_base);
        }
    } else if ((rc = st_pager_latest_meta(db, &m, err))) { /* others keep it current */
        goto fail;
    }
    st_readers_baseline(db);
    st_readers_opened(db);
    *out = db;
    return STRATA_OK;
fail:
    db_free(db);
    return rc;
}

int st_db_open_txns(strata_db_t *db) {
    pthread_mutex_lock(&db->state_mutex);
    int open = db->open_txns;
    pthread_mutex_unlock(&db->state_mutex);
    return open;
}

int st_db_close(strata_db_t *db, strata_error *err) {
    /* NO_SYNC commits become durable at close, so the next open need not check them. */
    int rc = db->unsynced ? st_pager_sync(db, err) : STRATA_OK;
    if (rc == STRATA_OK) st_pager_trim_at_close(db);
    db_free(db);
    return rc;
}

int st_db_sync(strata_db_t *db, strata_error *err) { return st_pager_sync(db, err); }
int st_db_sync_commits(strata_db_t *db, uint64_t *covered, strata_error *err) {
    return st_pager_sync_commits(db, covered, err);
}

int st_db_info(strata_db_t *db, strata_db_info *info, strata_error *err) {
    strata_txn_t *txn;
    int rc = st_txn_begin(db, false, true, false, &txn, err);
    if (rc) return rc;
    memset(info, 0, sizeof *info);
    info->version = txn->meta.version;
    info->page_size = ST_PAGE_SIZE;
    info->page_count = txn->meta.page_count;
    info->free_pages = txn->meta.free_count;
    st_txn_free(txn);
    if (db->file.mem) {
        info->file_size = info->page_count * ST_PAGE_SIZE;
    } else {
        off_t size = lseek(db->file.fd, 0, SEEK_END);
        info->file_size = size > 0 ? (uint64_t)size : 0;
    }
    info->oldest_version = st_readers_oldest(db, info->version, &info->live_readers);
    return STRATA_OK;
}

int st_db_packed(strata_db_t *db, uint64_t *bytes, uint64_t *pages, strata_error *err) {
    strata_txn_t *txn;
    int rc = st_txn_begin(db, false, true, false, &txn, err);
    if (rc) return rc;
    st_region r = {0};
    if (txn->meta.packed_region) rc = st_packed_region(txn, &txn->meta, &r, err);
    *bytes = (uint64_t)r.run * ST_PAGE_SIZE;
    *pages = txn->meta.packed_live;
    st_txn_free(txn);
    return rc;
}

void st_db_stop_waits(strata_db_t *db) { st_readers_stop_waits(db); }

int st_db_wait_commit(strata_db_t *db, uint64_t after, uint32_t timeout_ms, uint64_t *version,
                      strata_error *err) {
    return st_readers_wait(db, after, timeout_ms, version, err);
}

size_t st_db_live_versions(strata_db_t *db, uint64_t *versions, size_t cap) {
    return st_readers_list(db, versions, cap);
}

size_t st_db_readers(strata_db_t *db, strata_reader *out, size_t cap) {
    return st_readers_slots(db, out, cap);
}

size_t st_db_clear_stale_readers(strata_db_t *db) {
    return st_readers_clear_stale(db);
}
