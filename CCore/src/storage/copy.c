/*
 * copy.c — a version written whole into a new file, and compaction (the file replaced by such
 * a copy of its latest version).
 *
 * The copy: the layers above walk the version's trees (btree/treecopy.c, objects/copy_objects.c)
 * and hand each finished page to st_copier_place, children before their parent, so a tree's
 * leaves lie together in key order and every page number a page holds is already its child's
 * new one. Pages are numbered from 2 in the order they arrive, stamped with the copied version
 * and their own number, checksummed, and written in batches. A copy that packs (the default)
 * compresses each tree and column page with LZ4 (packed.c) and, where that saves an eighth or
 * more, gives it a packed reference instead: its compressed bytes go, in the same order, to a
 * scratch file, which becomes the packed region after the plain pages (overflow runs stay
 * plain). The copy has no free pages and no
 * commit log: both meta slots hold the copied version, durable, with a new database id (a log
 * beside the old file is never replayed onto the copy). The file is written under a temporary
 * name, synced, and renamed into place (os.c, st_os_newfile_*), so a crash at any point leaves
 * either no copy or a whole one, and never touches the source.
 *
 * A copy is encrypted as its file is (same key; keys of its own, as its database id is new), or
 * with the key the caller gives, or not at all (encrypt, decrypt, re-key: compaction does it in
 * place, and the handle goes on with the copy's key). Each page of an encrypted copy is sealed
 * as it is placed (cipher.c), a packed one after it is compressed, and its meta pages carry the
 * encryption header.
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
#include "storage/cipher.h"
#include "storage/freelist.h"
#include "storage/packed.h"
#include "storage/pager.h"
#include "storage/readers.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

enum { COPY_BATCH = 64 }; /* pages written by one pwrite */
enum { FRAG_BATCH = 1 << 20 }; /* bytes of packed pages gathered before they go to the scratch file */

struct st_copier {
    strata_txn_t *src;      /* the version copied */
    st_file *io;            /* whose I/O table writes the copy */
    st_newfile *out;
    uint64_t version;
    pgno_t next;            /* the next page's number */
    uint8_t *batch;         /* pages [batch_first, next) not yet written */
    pgno_t batch_first;
    /* Packing (pack set): the packed pages' bytes, at their offsets in the region to be. */
    bool pack;
    int level;              /* the packer's (packed.c) */
    st_packer *packer;
    int scratch_fd;         /* the region's bytes so far (an unlinked file beside the copy) */
    uint64_t region_end;    /* the next packed page's offset in the region (starts at 32) */
    uint64_t region_first;  /* where the packed pages start (after the dictionary) */
    uint32_t npacked;
    uint8_t *zbuf;          /* one compressed page */
    uint8_t *frags;         /* bytes [frags_at, region_end) not yet in the scratch file */
    uint64_t frags_at;
    st_cipher *cipher;      /* the copy's keys (NULL: a plain copy) */
    uint8_t *sealed;        /* a long run, sealed (encrypted copies) */
};

strata_txn_t *st_copier_source(st_copier *c) { return c->src; }

static int flush(st_copier *c, strata_error *err) {
    if (c->next == c->batch_first) return STRATA_OK;
    int rc = st_os_write_fd(c->io, c->out->fd, c->out->shown, c->batch_first * ST_PAGE_SIZE,
                            c->batch, (size_t)(c->next - c->batch_first) * ST_PAGE_SIZE, err);
    c->batch_first = c->next;
    return rc;
}

static int scratch_write(st_copier *c, const uint8_t *p, size_t len, uint64_t off, strata_error *err) {
    while (len > 0) {
        ssize_t n = pwrite(c->scratch_fd, p, len, (off_t)off);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0)
            return st_err_errno(err, n < 0 ? errno : ENOSPC, "cannot write the packed pages of '%s'",
                                c->out->shown);
        p += n, len -= (size_t)n, off += (uint64_t)n;
    }
    return STRATA_OK;
}

static int frags_flush(st_copier *c, strata_error *err) {
    int rc = scratch_write(c, c->frags, c->region_end - c->frags_at, c->frags_at, err);
    c->frags_at = c->region_end;
    return rc;
}

/* A tree or column page packed, when that saves enough: *ref its packed reference. */
static int try_pack(st_copier *c, uint8_t *buf, pgno_t *ref, strata_error *err) {
    *ref = 0;
    uint8_t kind = pg_kind(buf);
    if (kind != ST_PAGE_LEAF && kind != ST_PAGE_BRANCH && kind != ST_PAGE_COLUMN) return STRATA_OK;
    if (c->region_end >= (1ull << 50)) return STRATA_OK; /* past what a reference can name */
    pgno_t at = ST_PACKED_BIT | c->region_end << 12;
    st_wr64(buf + PH_VERSION, c->version);
    st_wr64(buf + PH_PGNO, at);
    st_wr64(buf + PH_CHECKSUM, st_checksum(buf + 8, ST_PAGE_SIZE - 8));
    uint32_t n = st_pack_page(c->packer, buf, c->zbuf);
    if (!n) return STRATA_OK;
    int rc;
    uint32_t stored = n + (c->cipher ? ST_PACKED_TAG : 0); /* compressed, then sealed */
    if (c->region_end + stored - c->frags_at > FRAG_BATCH && (rc = frags_flush(c, err))) return rc;
    uint8_t *to = c->frags + (c->region_end - c->frags_at);
    if (!c->cipher) memcpy(to, c->zbuf, n);
    else if (st_cipher_seal_packed(c->cipher, c->region_end, c->zbuf, n, to))
        return st_err(err, STRATA_ERR_NO_MEMORY, "cannot seal a packed page (libcrypto)");
    n = stored;
    c->region_end += n;
    c->npacked++;
    *ref = at | n;
    return STRATA_OK;
}

int st_copier_place(st_copier *c, uint8_t *buf, uint32_t npages, pgno_t *pgno, strata_error *err) {
    if (npages == 0) return ST_CORRUPT(err, "a page run of length 0 in the copy of '%s'", c->io->shown);
    int rc;
    if (c->pack && npages == 1) {
        if ((rc = try_pack(c, buf, pgno, err)) || *pgno) return rc;
    }
    *pgno = c->next;
    size_t bytes = (size_t)npages * ST_PAGE_SIZE;
    st_wr64(buf + PH_VERSION, c->version);
    st_wr64(buf + PH_PGNO, *pgno);
    st_wr64(buf + PH_CHECKSUM, st_checksum(buf + 8, bytes - 8));
    if (c->cipher && *pgno + npages > ST_ENC_MAX_PAGES)
        return st_err(err, STRATA_ERR_MAP_FULL, "the copy '%s' would need more pages than an "
                      "encrypted file holds (16 TiB)", c->out->shown);
    if (npages > COPY_BATCH - (c->next - c->batch_first)) {
        if ((rc = flush(c, err))) return rc;
        if (npages > COPY_BATCH) { /* a long run goes out by itself */
            const uint8_t *out = buf;
            if (c->cipher) {
                free(c->sealed);
                if (!(c->sealed = malloc(bytes)) ||
                    st_cipher_seal_page(c->cipher, buf, bytes, *pgno, c->sealed))
                    return st_err(err, STRATA_ERR_NO_MEMORY, "cannot seal a run of %u pages", npages);
                out = c->sealed;
            }
            rc = st_os_write_fd(c->io, c->out->fd, c->out->shown, c->next * ST_PAGE_SIZE, out,
                                bytes, err);
            c->next += npages;
            c->batch_first = c->next;
            return rc;
        }
    }
    uint8_t *at = c->batch + (c->next - c->batch_first) * ST_PAGE_SIZE;
    if (!c->cipher) memcpy(at, buf, bytes);
    else if (st_cipher_seal_page(c->cipher, buf, bytes, *pgno, at))
        return st_err(err, STRATA_ERR_NO_MEMORY, "cannot seal page %llu of the copy", (unsigned long long)*pgno);
    c->next += npages;
    return STRATA_OK;
}

/* The packed region after the plain pages: its first page's header, then the scratch file's
 * bytes page by page. *run its length. */
static int write_region(st_copier *c, uint32_t *run, strata_error *err) {
    int rc = frags_flush(c, err);
    if (rc) return rc;
    uint64_t pages = (c->region_end + ST_PAGE_SIZE - 1) / ST_PAGE_SIZE;
    if (pages > UINT32_MAX) return st_err(err, STRATA_ERR_TOO_LARGE, "a packed region of %llu pages",
                                          (unsigned long long)pages);
    *run = (uint32_t)pages;
    for (uint64_t i = 0; i < pages && rc == STRATA_OK; i += COPY_BATCH) {
        size_t n = (size_t)(pages - i < COPY_BATCH ? pages - i : COPY_BATCH), bytes = n * ST_PAGE_SIZE;
        memset(c->batch, 0, bytes);
        for (size_t got = 0; got < bytes;) {
            ssize_t k = pread(c->scratch_fd, c->batch + got, bytes - got, (off_t)(i * ST_PAGE_SIZE + got));
            if (k < 0 && errno == EINTR) continue;
            if (k < 0) return st_err_errno(err, errno, "cannot read the packed pages of '%s'", c->out->shown);
            if (k == 0) break; /* the last page's end: zeros */
            got += (size_t)k;
        }
        if (i == 0) {
            uint32_t dict_len;
            const uint8_t *dict = st_packer_dict(c->packer, &dict_len);
            if (c->cipher) memcpy(c->batch + ST_REGION_DICT, dict, dict_len);
            memset(c->batch, 0, PH_SIZE);
            st_wr32(c->batch + ST_REGION_DICT_LEN, dict_len);
            st_wr64(c->batch + PH_VERSION, c->version);
            st_wr64(c->batch + PH_PGNO, c->next);
            c->batch[PH_KIND] = ST_PAGE_PACKED;
            st_wr32(c->batch + PH_RUN, *run);
            st_wr64(c->batch + PH_CHECKSUM, st_checksum(c->batch + 8, ST_PAGE_SIZE - 8));
            /* encrypted: the header and dictionary sealed as a page of that length */
            uint8_t *head = c->cipher ? malloc(c->region_first) : NULL;
            if (c->cipher && (!head || st_cipher_seal_page(c->cipher, c->batch, c->region_first, c->next, head)))
                rc = st_err(err, STRATA_ERR_NO_MEMORY, "cannot seal the packed region's head");
            if (head && rc == STRATA_OK) memcpy(c->batch, head, c->region_first);
            free(head);
            if (rc) return rc;
        }
        rc = st_os_write_fd(c->io, c->out->fd, c->out->shown, (c->next + i) * ST_PAGE_SIZE,
                            c->batch, bytes, err);
    }
    return rc;
}

/* The packing side of a copier: its buffers and the scratch file beside the copy. */
static int pack_begin(st_copier *c, strata_error *err) {
    char path[4300];
    snprintf(path, sizeof path, "%s.packing", c->out->dest);
    c->scratch_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (c->scratch_fd < 0) return st_err_errno(err, errno, "cannot create '%s.packing'", c->out->shown);
    unlink(path); /* a scratch file: gone with its descriptor */
    c->zbuf = malloc(st_pack_bound());
    c->frags = malloc(FRAG_BATCH + st_pack_bound());
    if (!c->zbuf || !c->frags) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory packing '%s'", c->out->shown);
    int rc = st_packer_new(c->src, c->level, &c->packer, err);
    if (rc) return rc;
    uint32_t dict_len;
    const uint8_t *dict = st_packer_dict(c->packer, &dict_len);
    /* (an encrypted copy's dictionary, samples of the data, never goes to the scratch file:
     * write_region takes it from the packer and seals it) */
    if (dict_len && !c->cipher && (rc = scratch_write(c, dict, dict_len, ST_REGION_DICT, err))) return rc;
    c->region_end = c->frags_at = c->region_first = (ST_REGION_DICT + dict_len + 7) & ~7ull;
    return STRATA_OK;
}

static void pack_end(st_copier *c) {
    if (c->scratch_fd >= 0) close(c->scratch_fd);
    st_packer_free(c->packer);
    free(c->zbuf);
    free(c->frags);
}

/* The keys a copy is written with (*out NULL: a plain copy), bound to its database id. */
static int copy_cipher(strata_db_t *db, const st_copy_key *key, uint64_t id, st_cipher **out,
                       strata_error *err) {
    *out = NULL;
    int rc = STRATA_OK;
    if (key && key->set) {
        if (key->key) rc = st_cipher_new(key->key, key->len, out, err);
    } else if (db->cipher) {
        rc = st_cipher_clone(db->cipher, out, err);
    }
    if (rc == STRATA_OK && *out && (rc = st_cipher_bind(*out, id, err))) {
        st_cipher_free(*out);
        *out = NULL;
    }
    return rc;
}

/* The copy's pages through fn, then its packed region and its two meta slots; nothing synced.
 * *keys: the copy's keys (the caller's to free), NULL for a plain copy. */
static int write_copy(strata_txn_t *src, st_newfile *out, int pack, const st_copy_key *key,
                      st_copy_fn fn, st_cipher **keys, strata_error *err) {
    strata_db_t *db = src->db;
    uint64_t id = st_random_id(src->meta.db_id);
    int rc = copy_cipher(db, key, id, keys, err);
    if (rc) return rc;
    st_copier c = {.src = src, .io = &db->file, .out = out, .version = src->meta.version,
                   .next = 2, .batch_first = 2, .pack = pack >= 0, .level = pack,
                   .scratch_fd = -1, .cipher = *keys};
    c.batch = malloc((size_t)COPY_BATCH * ST_PAGE_SIZE);
    rc = c.batch ? STRATA_OK
                 : st_err(err, STRATA_ERR_NO_MEMORY, "out of memory copying '%s'", db->file.shown);
    if (rc == STRATA_OK && c.pack) rc = pack_begin(&c, err);
    pgno_t root = 0;
    uint64_t count = 0;
    uint32_t run = 0;
    if (rc == STRATA_OK) rc = fn(&c, &root, &count, err);
    if (rc == STRATA_OK) rc = flush(&c, err);
    pgno_t region = c.npacked ? c.next : 0;
    if (rc == STRATA_OK && c.npacked) rc = write_region(&c, &run, err);
    pack_end(&c);
    free(c.batch);
    free(c.sealed);
    if (rc) return rc;
    st_meta m = src->meta;
    m.page_count = c.next + run;
    m.packed_region = region;
    m.packed_live = c.npacked;
    m.catalog_root = root;
    m.catalog_count = count;
    m.freelist_head = 0;
    m.free_count = 0;
    m.durable_version = m.version;
    m.flags = ST_META_DURABLE;
    m.format_version = c.cipher ? ST_FORMAT_ENCRYPTED : ST_FORMAT_PLAIN;
    m.log_salt = m.log_end = m.log_base = 0;
    m.db_id = id;
    st_meta_seal(&m);
    uint8_t page[ST_PAGE_SIZE];
    memset(page, 0, sizeof page);
    memcpy(page, &m, sizeof m);
    if (c.cipher) st_cipher_meta_seal(c.cipher, page);
    for (int slot = 0; slot < 2 && rc == STRATA_OK; slot++)
        rc = st_os_write_fd(&src->db->file, out->fd, out->shown, (uint64_t)slot * ST_PAGE_SIZE,
                            page, sizeof page, err);
    return rc;
}

int st_db_write_copy(strata_db_t *db, const char *path, int pack, const st_copy_key *key,
                     st_copy_fn fn, strata_error *err) {
    strata_txn_t *txn;
    int rc = st_txn_begin(db, false, true, false, &txn, err);
    if (rc) return rc;
    st_newfile nf;
    st_cipher *keys = NULL;
    if ((rc = st_os_newfile_begin(path, ".copying", &nf, err)) == STRATA_OK &&
        (rc = write_copy(txn, &nf, pack, key, fn, &keys, err)) == STRATA_OK)
        rc = st_os_newfile_commit(&db->file, &nf, false, err);
    st_cipher_free(keys);
    st_os_newfile_abandon(&nf);
    st_txn_free(txn);
    return rc;
}

/* ------------------------------------------------------------------ compaction */

/* The handle after its file was replaced: what it knew of the old file goes, and it reads the
 * new one with the new file's keys (keys: taken over, NULL for a plain file). */
static int adopt_new_file(strata_db_t *db, st_cipher *keys, strata_error *err) {
    st_freelist_clear(&db->free_cache);
    st_fl_delta_clear(&db->free_cache_delta);
    free(db->free_cache_image);
    db->free_cache_image = NULL;
    db->free_cache_valid = false;
    st_reuse_map_clear(&db->reuse_map);
    memset(&db->reuse_hints, 0, sizeof db->reuse_hints);
    db->unsynced = false;
    db->log_retract_at = 0;
    db->log_tail_version = db->log_tail_salt = db->log_tail_end = 0;
    db->log_header_salt = db->log_header_base = db->log_header_id = 0;
    db->log_retry_version = 0;
    st_trust_free(db); /* (the view goes with the old keys) */
    st_share_clear(db); /* (the new file's page numbers and stamps are its own) */
    st_unpacked_clear(db);
    st_cipher_free(db->cipher);
    db->cipher = keys;
    memset(db->meta_auth, 0, sizeof db->meta_auth); /* authenticated under the old keys */
    memset(db->meta_auth_has_img, 0, sizeof db->meta_auth_has_img);
    /* the log's descriptor closes here: syncs of it in progress (strata_db_sync_commits) first */
    atomic_store(&db->log_closing, true);
    while (atomic_load(&db->log_syncers) > 0) usleep(200);
    int rc = st_os_reopen(&db->file, err);
    atomic_store(&db->log_synced, 0); /* (the versions of the new file's log are its own) */
    atomic_store(&db->log_closing, false);
    if (rc == STRATA_OK) rc = st_trust_init(db, err);
    st_meta m;
    if (rc == STRATA_OK && db->cipher) rc = st_pager_latest_meta(db, &m, err); /* binds the copy's keys */
    if (rc) {
        db->broken = true;
        snprintf(db->broken_why, sizeof db->broken_why,
                 "the compacted file could not be opened again (%.120s)", err->message);
    }
    return rc;
}

int st_db_compact(strata_db_t *db, int pack, const st_copy_key *key, st_copy_fn fn,
                  strata_error *err) {
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
            st_cipher *keys = NULL;
            if ((rc = st_pager_latest_meta(db, &m, err)) == STRATA_OK &&
                (rc = st_txn_view(db, &m, &txn, err)) == STRATA_OK &&
                (rc = st_os_newfile_begin(db->file.path, ".compacting", &nf, err)) == STRATA_OK &&
                (rc = write_copy(txn, &nf, pack, key, fn, &keys, err)) == STRATA_OK)
                rc = st_os_newfile_commit(&db->file, &nf, true, err);
            st_os_newfile_abandon(&nf);
            if (txn) st_txn_free(txn);
            if (rc == STRATA_OK) { /* renamed into place: the copy is the database */
                char log[4200];
                st_os_log_path(&db->file, log, sizeof log);
                unlink(log);
                rc = adopt_new_file(db, keys, err);
                keys = NULL;
            }
            st_cipher_free(keys);
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
