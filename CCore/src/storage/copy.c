/*
 * copy.c — a version written whole into a new file, and compaction (the file replaced by such
 * a copy of its latest version).
 *
 * The copy: the layers above walk the version's trees (btree/treecopy.c, objects/copy_objects.c)
 * and hand each finished page to st_copier_place, children before their parent, so a tree's
 * leaves lie together in key order and every page number a page holds is already its child's
 * new one. Pages are numbered from 2 in the order they arrive, stamped with the copied version
 * and their own number, checksummed, and written in batches. The copy has no free pages and no
 * commit log: both meta slots hold the copied version, durable, with a new database id (a log
 * beside the old file is never replayed onto the copy). The file is written under a temporary
 * name, synced, and renamed into place (os.c, st_os_newfile_*), so a crash at any point leaves
 * either no copy or a whole one, and never touches the source.
 *
 * Compaction (st_db_compact) takes, in order: the open lock (byte 2 of the lock file: handles
 * opening meanwhile wait for it), the alive lock exclusively (byte 1: refused if any other
 * handle of any process has the file open), and the writer lock. It copies the latest version
 * to `<path>.compacting`, renames that over the file, syncs the directory, removes the old
 * commit log (the copy's meta does not need it), maps the new file, and lets go of the locks.
 * Before the rename the original file is whole and in use; after it, the copy is.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "storage/freelist.h"
#include "storage/pager.h"
#include "storage/readers.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { COPY_BATCH = 64 }; /* pages written by one pwrite */

struct st_copier {
    strata_txn_t *src;      /* the version copied */
    st_file *io;            /* whose I/O table writes the copy */
    st_newfile *out;
    uint64_t version;
    pgno_t next;            /* the next page's number */
    uint8_t *batch;         /* pages [batch_first, next) not yet written */
    pgno_t batch_first;
};

strata_txn_t *st_copier_source(st_copier *c) { return c->src; }

static int flush(st_copier *c, strata_error *err) {
    if (c->next == c->batch_first) return STRATA_OK;
    int rc = st_os_write_fd(c->io, c->out->fd, c->out->shown, c->batch_first * ST_PAGE_SIZE,
                            c->batch, (size_t)(c->next - c->batch_first) * ST_PAGE_SIZE, err);
    c->batch_first = c->next;
    return rc;
}

int st_copier_place(st_copier *c, uint8_t *buf, uint32_t npages, pgno_t *pgno, strata_error *err) {
    if (npages == 0) return ST_CORRUPT(err, "a page run of length 0 in the copy of '%s'", c->io->shown);
    *pgno = c->next;
    st_wr64(buf + PH_VERSION, c->version);
    st_wr64(buf + PH_PGNO, *pgno);
    st_wr64(buf + PH_CHECKSUM, st_checksum(buf + 8, (size_t)npages * ST_PAGE_SIZE - 8));
    int rc;
    if (npages > COPY_BATCH - (c->next - c->batch_first)) {
        if ((rc = flush(c, err))) return rc;
        if (npages > COPY_BATCH) { /* a long run goes out by itself */
            rc = st_os_write_fd(c->io, c->out->fd, c->out->shown, c->next * ST_PAGE_SIZE, buf,
                                (size_t)npages * ST_PAGE_SIZE, err);
            c->next += npages;
            c->batch_first = c->next;
            return rc;
        }
    }
    memcpy(c->batch + (c->next - c->batch_first) * ST_PAGE_SIZE, buf, (size_t)npages * ST_PAGE_SIZE);
    c->next += npages;
    return STRATA_OK;
}

/* The copy's pages through fn, then its two meta slots; nothing synced. */
static int write_copy(strata_txn_t *src, st_newfile *out, st_copy_fn fn, strata_error *err) {
    st_copier c = {.src = src, .io = &src->db->file, .out = out, .version = src->meta.version,
                   .next = 2, .batch_first = 2};
    c.batch = malloc((size_t)COPY_BATCH * ST_PAGE_SIZE);
    if (!c.batch) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory copying '%s'", src->db->file.shown);
    pgno_t root = 0;
    uint64_t count = 0;
    int rc = fn(&c, &root, &count, err);
    if (rc == STRATA_OK) rc = flush(&c, err);
    free(c.batch);
    if (rc) return rc;
    st_meta m = src->meta;
    m.page_count = c.next;
    m.catalog_root = root;
    m.catalog_count = count;
    m.freelist_head = 0;
    m.free_count = 0;
    m.durable_version = m.version;
    m.flags = ST_META_DURABLE;
    m.format_version = ST_FORMAT_VERSION;
    m.log_salt = m.log_end = m.log_base = 0;
    m.db_id = st_random_id(m.db_id);
    memset(m.reserved, 0, sizeof m.reserved);
    m.reserved0 = 0;
    st_meta_seal(&m);
    uint8_t page[ST_PAGE_SIZE];
    memset(page, 0, sizeof page);
    memcpy(page, &m, sizeof m);
    for (int slot = 0; slot < 2 && rc == STRATA_OK; slot++)
        rc = st_os_write_fd(&src->db->file, out->fd, out->shown, (uint64_t)slot * ST_PAGE_SIZE,
                            page, sizeof page, err);
    return rc;
}

int st_db_write_copy(strata_db_t *db, const char *path, st_copy_fn fn, strata_error *err) {
    strata_txn_t *txn;
    int rc = st_txn_begin(db, false, true, &txn, err);
    if (rc) return rc;
    st_newfile nf;
    if ((rc = st_os_newfile_begin(path, ".copying", &nf, err)) == STRATA_OK &&
        (rc = write_copy(txn, &nf, fn, err)) == STRATA_OK)
        rc = st_os_newfile_commit(&db->file, &nf, false, err);
    st_os_newfile_abandon(&nf);
    st_txn_free(txn);
    return rc;
}

/* ------------------------------------------------------------------ compaction */

/* The handle after its file was replaced: what it knew of the old file goes. */
static int adopt_new_file(strata_db_t *db, strata_error *err) {
    st_freelist_clear(&db->free_cache);
    db->free_cache_valid = false;
    st_reuse_map_clear(&db->reuse_map);
    memset(&db->reuse_hints, 0, sizeof db->reuse_hints);
    db->unsynced = false;
    db->log_retract_at = 0;
    db->log_tail_version = db->log_tail_salt = db->log_tail_end = 0;
    db->log_header_salt = db->log_header_base = db->log_header_id = 0;
    db->log_retry_version = 0;
    st_trust_free(db);
    int rc = st_os_reopen(&db->file, err);
    if (rc == STRATA_OK) rc = st_trust_init(db, err);
    if (rc) {
        db->broken = true;
        snprintf(db->broken_why, sizeof db->broken_why,
                 "the compacted file could not be opened again (%.120s)", err->message);
    }
    return rc;
}

int st_db_compact(strata_db_t *db, st_copy_fn fn, strata_error *err) {
    if (db->file.mem)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "'%s' is an in-memory database: there is no file to compact", db->file.shown);
    if (db->file.opts.read_only)
        return st_err(err, STRATA_ERR_READ_ONLY, "'%s' is open read-only", db->file.shown);
    if (db->broken)
        return st_err(err, STRATA_ERR_IO, "'%s' must be reopened: %s", db->file.shown, db->broken_why);
    pthread_mutex_lock(&db->state_mutex);
    int open = db->open_txns;
    if (!open) db->compacting = true;
    pthread_mutex_unlock(&db->state_mutex);
    if (open)
        return st_err(err, STRATA_ERR_BUSY, "'%s' has %d transaction(s) of this handle not yet "
                      "freed: it cannot be compacted now", db->file.shown, open);
    pthread_mutex_lock(&db->write_mutex);
    int rc = st_readers_exclusive(db, err); /* the open and alive locks, or BUSY */
    if (rc == STRATA_OK) {
        if ((rc = st_readers_writer_lock(db, false, err)) == STRATA_OK) {
            /* A view of the latest version: no reader slot is needed, nobody else has the
             * file open and this handle holds the writer lock. */
            strata_txn_t *txn = NULL;
            st_newfile nf = {.fd = -1};
            st_meta m;
            if ((rc = st_pager_latest_meta(db, &m, err)) == STRATA_OK &&
                (rc = st_txn_view(db, &m, &txn, err)) == STRATA_OK &&
                (rc = st_os_newfile_begin(db->file.path, ".compacting", &nf, err)) == STRATA_OK &&
                (rc = write_copy(txn, &nf, fn, err)) == STRATA_OK)
                rc = st_os_newfile_commit(&db->file, &nf, true, err);
            st_os_newfile_abandon(&nf);
            if (txn) st_txn_free(txn);
            if (rc == STRATA_OK) { /* renamed into place: the copy is the database */
                char log[4200];
                st_os_log_path(&db->file, log, sizeof log);
                unlink(log);
                rc = adopt_new_file(db, err);
            }
            st_readers_writer_unlock(db);
        }
        st_readers_shared(db);
    }
    pthread_mutex_unlock(&db->write_mutex);
    pthread_mutex_lock(&db->state_mutex);
    db->compacting = false;
    pthread_mutex_unlock(&db->state_mutex);
    return rc;
}
