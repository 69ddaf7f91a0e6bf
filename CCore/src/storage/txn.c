/*
 * txn.c — the life of a transaction in the storage layer: a read transaction holds a reader
 * slot at one version (the pager's reader protocol; a clone takes a slot of its own at its
 * source's version, for another thread); a write transaction holds the writer lock
 * (the handle's mutex for its threads, the lock file's OFD lock for processes) from begin to
 * end, and commits through the pager.
 *
 * States: ACTIVE → ENDED (commit, abort, a failed refresh), or ACTIVE → FAILED (a write whose
 * change failed half-way: it can only be aborted) → ENDED. The layers above keep their state in
 * the handle (trees, store) and end or free it before calling st_txn_end / st_txn_free.
 */
#include "storage/packed.h"
#include "storage/pager.h"
#include "storage/readers.h"

#include <stdlib.h>

static void txn_register(strata_db_t *db, int delta) {
    pthread_mutex_lock(&db->state_mutex);
    db->open_txns += delta;
    pthread_mutex_unlock(&db->state_mutex);
}

/* A new transaction counts before it touches the file, so that compaction, which replaces the
 * file when none is open, never replaces it under one. */
static int txn_enter(strata_db_t *db, strata_error *err) {
    pthread_mutex_lock(&db->state_mutex);
    bool compacting = db->compacting;
    if (!compacting) db->open_txns++;
    pthread_mutex_unlock(&db->state_mutex);
    return compacting ? st_err(err, STRATA_ERR_BUSY, "'%s' is being compacted", db->file.shown)
                      : STRATA_OK;
}

/* The writer mutexes this thread holds: a second write begin on one of them would wait for
 * itself forever, so it is refused instead. */
enum { HELD_MAX = 8 };
static _Thread_local pthread_mutex_t *held_writer[HELD_MAX];
static _Thread_local int nheld_writer;

static bool thread_holds(pthread_mutex_t *mx) {
    for (int i = 0; i < nheld_writer; i++)
        if (held_writer[i] == mx) return true;
    return false;
}

static void writer_unlock(strata_txn_t *txn) {
    if (!txn->holds_lock) return;
    st_readers_writer_unlock(txn->db);
    pthread_mutex_t *mm = st_os_mem_writer_mutex(&txn->db->file);
    pthread_mutex_t *mx = mm ? mm : &txn->db->write_mutex;
    for (int i = 0; i < nheld_writer; i++)
        if (held_writer[i] == mx) {
            held_writer[i] = held_writer[--nheld_writer];
            break;
        }
    pthread_mutex_unlock(mx);
    txn->holds_lock = false;
}

static int writer_lock(strata_txn_t *txn, bool wait, strata_error *err) {
    strata_db_t *db = txn->db;
    pthread_mutex_t *mm = st_os_mem_writer_mutex(&db->file);
    pthread_mutex_t *mx = mm ? mm : &db->write_mutex;
    if (thread_holds(mx))
        return st_err(err, STRATA_ERR_TXN_STATE,
                      "this thread already holds the write transaction of '%s': a second one "
                      "would wait for the first forever", db->file.shown);
    if (wait) pthread_mutex_lock(mx);
    else if (pthread_mutex_trylock(mx) != 0)
        return st_err(err, STRATA_ERR_BUSY, "another writer holds '%s'", db->file.shown);
    int rc = st_readers_writer_lock(db, wait, err);
    if (rc) {
        pthread_mutex_unlock(mx);
        return rc;
    }
    txn->holds_lock = true;
    if (nheld_writer < HELD_MAX) held_writer[nheld_writer++] = mx;
    return STRATA_OK;
}

/* A reader slot, then the latest version — or `like`'s version (a clone: like's slot holds that
 * version while this one takes its own, so no page of it can be freed meanwhile). */
static int read_begin(strata_txn_t *txn, const strata_txn_t *like, strata_error *err) {
    int rc = STRATA_OK;
    if (txn->reader_slot < 0) rc = st_readers_acquire(txn->db, &txn->reader_slot, err);
    if (rc || !like) return rc ? rc : st_pager_snapshot(txn->db, txn->reader_slot, &txn->meta, err);
    st_readers_hold(txn->db, txn->reader_slot, like->meta.version);
    txn->meta = like->meta;
    return STRATA_OK;
}

static int txn_start(strata_db_t *db, bool write, bool wait, bool no_sync, const strata_txn_t *like,
                     strata_txn_t **out, strata_error *err) {
    *out = NULL;
    if (write && db->file.opts.read_only)
        return st_err(err, STRATA_ERR_READ_ONLY, "'%s' is open read-only", db->file.shown);
    if (write && db->broken)
        return st_err(err, STRATA_ERR_IO, "'%s' must be reopened: %s", db->file.shown,
                      db->broken_why);
    int rc = txn_enter(db, err);
    if (rc) return rc;
    strata_txn_t *txn = calloc(1, sizeof *txn);
    if (!txn) {
        txn_register(db, -1);
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    }
    txn->db = db;
    txn->write = write;
    /* (only a FULL handle's write syncs: NO_SYNC and memory handles commit so anyway) */
    txn->no_sync = write && no_sync && db->file.opts.durability == STRATA_DURABILITY_FULL && !db->file.mem;
    txn->reader_slot = -1;
    if (write) {
        if ((rc = writer_lock(txn, wait, err))) goto fail;
        if ((rc = st_pager_begin_write(txn, err))) goto fail;
    } else if ((rc = read_begin(txn, like, err))) {
        goto fail;
    }
    txn->state = ST_TXN_ACTIVE;
    *out = txn;
    return STRATA_OK;
fail:
    txn_register(db, -1);
    if (write) {
        st_pager_end_write(txn);
        writer_unlock(txn);
    }
    if (txn->reader_slot >= 0) st_readers_release(db, txn->reader_slot);
    free(txn);
    return rc;
}

int st_txn_begin(strata_db_t *db, bool write, bool wait, bool no_sync, strata_txn_t **out, strata_error *err) {
    return txn_start(db, write, wait, no_sync, NULL, out, err);
}

int st_txn_clone(strata_txn_t *src, strata_txn_t **out, strata_error *err) {
    return txn_start(src->db, false, false, false, src, out, err);
}

int st_txn_view(strata_db_t *db, const st_meta *m, strata_txn_t **out, strata_error *err) {
    strata_txn_t *txn = calloc(1, sizeof *txn);
    if (!txn) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    txn->db = db;
    txn->reader_slot = -1;
    txn->meta = *m;
    txn->state = ST_TXN_ACTIVE;
    txn_register(db, 1);
    *out = txn;
    return STRATA_OK;
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

int st_txn_fail(strata_txn_t *txn, int code) {
    if (txn->write && txn->state == ST_TXN_ACTIVE) txn->state = ST_TXN_FAILED;
    return code;
}

void st_txn_end(strata_txn_t *txn) {
    if (txn->state == ST_TXN_ENDED) return;
    if (txn->write) {
        st_pager_end_write(txn);
        writer_unlock(txn);
    } else if (txn->reader_slot >= 0) {
        st_readers_release(txn->db, txn->reader_slot);
        txn->reader_slot = -1;
    }
    st_pins_release(txn);
    txn->state = ST_TXN_ENDED;
}

int st_txn_commit(strata_txn_t *txn, pgno_t catalog_root, uint64_t catalog_count,
                  strata_error *err) {
    ST_ASSERT(txn->state == ST_TXN_ACTIVE);
    int rc = txn->write ? st_pager_commit(txn, catalog_root, catalog_count, err) : STRATA_OK;
    st_txn_end(txn);
    return rc;
}

int st_txn_refresh(strata_txn_t *txn, strata_error *err) {
    ST_ASSERT(!txn->write && txn->state == ST_TXN_ACTIVE);
    st_pins_release(txn); /* what was read before is gone, as after an end */
    int rc = read_begin(txn, NULL, err);
    if (rc) st_txn_end(txn);
    return rc;
}

void st_txn_free(strata_txn_t *txn) {
    st_txn_end(txn);
    ST_ASSERT(txn->trees == NULL && txn->store == NULL);
    st_pins_free(txn);
    txn_register(txn->db, -1);
    free(txn);
}
