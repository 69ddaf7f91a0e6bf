/*
 * pager.c — meta slots, page access, free space tagged by version, and the commit protocol.
 *
 * File: pages of ST_PAGE_SIZE bytes. Page 0 holds meta slot 0, page 1 meta slot 1 (st_meta in
 * storage.h, 128 bytes at the start of the page, rest zero). Pages [2, page_count) are tree
 * pages, overflow runs, free-list pages or free.
 *
 * Durable versions: a meta flagged ST_META_DURABLE was written after every page it reaches was
 * synced (memory mode, strata_db_sync, close, a checkpoint). A FULL commit on a file writes its
 * pages and meta without sync and syncs one record in the commit log (ST_META_LOGGED,
 * commitlog.c): durable when published; after a crash the first opener replays the log onto the
 * durable version. A FULL commit whose record does not fit the log writes its pages and meta and
 * syncs the file once (ST_META_SYNCED): durable when published, but checked after a crash like a
 * NO_SYNC one, since a power cut during that sync may leave the meta without some pages. A
 * non-durable meta records the newest durable version D. A new meta never goes into D's slot;
 * pages freed after D are not reused (NO_SYNC), or only those written after D (logged), so D's
 * pages stay intact until the next sync. After a crash the first opener checks an unsynced
 * newest version page by page (the hook st_db_open takes: objects/verify_pages.c) and falls
 * back to D if any of its pages did not reach the disk. NO_SYNC makes the current version
 * durable by itself every ST_NO_SYNC_EVERY commits, a logged handle when the log passes half
 * its size, and both at close.
 *
 * Invariants (checked by strata_db_verify: storage/pagecheck.c, btree/treecheck.c):
 *  1. A page reachable from a committed version is never written in place: a write transaction
 *     copies it to a page it allocated (st_page_touch) and frees the old one.
 *  2. A commit exists exactly when its meta slot and every page it wrote are durable, or its
 *     record in the commit log is and its base (the durable version) is. A torn meta fails its
 *     checksum; a meta whose pages did not all arrive fails the recovery check (the hook) or is
 *     rebuilt from the log: open falls back to the other slot, whose pages this commit never
 *     touched, and replays the log onto it.
 *  3. Every page of [2, page_count) is reachable from the latest version or in its free list
 *     (tagged with the version that freed it), exactly one of these, or is a page of the packed
 *     region (packed.c), of which the version reaches exactly meta.packed_live packed pages.
 *  4. A page freed by version v is reused only when no reader holds a version older than v
 *     (v <= oldest held version); pages freed by the transaction that made them are reused at
 *     once.
 *  5. Readers never block and never take the writer lock (st_pager_snapshot).
 *
 * Commit, step by step:
 *   0. packed pages the transaction copied or dropped lower meta.packed_live (the region's pages
 *      are freed with its last one); reusable pages at the end of the file leave the free list
 *      and the page count ends before them (st_freelist_trim);
 *   a. save the free list (freelist.c): as a delta in the meta page when it fits (format 14,
 *      15 encrypted: no list page written; not after a trim), else only its
 *      consumed leaves, its last leaf and its directory are rewritten, in pages taken from the
 *      free space itself; the meta page's delta image goes wherever the meta goes (a durable
 *      copy, a rollback, a replayed version);
 *   b. checksum every dirty page (the file already holds them: it grows when a transaction
 *      takes a page past its end, keeping a reserve for commits that free what they take; on a
 *      full disk see room_at_end); an encrypted file's pages are then sealed (cipher.c) and the
 *      lock file marks the version as being written (a failure spends it: renumber, below);
 *   c. pwrite every dirty page, in page order (adjacent ones together), without sync (an
 *      encrypted file's view gets their plain bytes, trusted with the new stamp) — for a logged
 *      commit from st_log_commit (write_pages), once its record is built: while the device
 *      takes a record written on its own for 8 pages or more (begun through io_uring, os.c;
 *      the log synced after), else before it;
 *   d. logged: append the record and sync it (one write with RWF_DSYNC when nothing else in
 *      the log awaits a sync, else a write and an fdatasync of the log; unsynced: not now, the
 *      record through the page cache and the meta flagged ST_META_LOG_PENDING;
 *      st_pager_sync_commits makes them durable with one log sync, without the writer lock, and
 *      does nothing when the latest version is durable already), then pwrite the meta into
 *      txn->meta_slot; else pwrite
 *      the meta and (FULL, synced) fdatasync the file;
 *   e. publish the version in the lock file; keep the new free list as the next base; shorten
 *      the file if its end came free (never below either meta slot's page count, and only once
 *      no reader holds an older version).
 *  A write transaction's page buffers come from, and its one-page ones go back to, the handle's
 *  spares (up to ST_SPARE_PAGES, guarded by the writer lock); a copy of a page is not zeroed.
 *  A failure in a..c leaves the file at the previous commit (only free pages were written). A
 *  failed log sync, or a failed meta write after it, retracts the record (commitlog.c). A failed
 *  meta write of the unlogged way leaves at worst a torn slot that held the version before the
 *  latest (which is durable and stays the newest valid slot); a failed sync there rewrites the
 *  slot's previous bytes and syncs, since the new meta may still reach the disk; if even that
 *  fails, the handle refuses writes until reopened.
 *  A new file is written as `<path>.creating`, synced, and renamed into place (db.c).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "storage/pager.h"

#include "storage/cipher.h"
#include "storage/commitlog.h"
#include "storage/freelist.h"
#include "storage/packed.h"
#include "storage/readers.h"

#include <errno.h>
#include <stdarg.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>
#if defined(__x86_64__) && defined(__linux__) && defined(__has_include)
#if __has_include(<xxh_x86dispatch.h>)
/* libxxhash's own dispatch to the widest vector unit the CPU has (AVX2, AVX-512: a 4 KiB page in
 * ~130 ns instead of ~450 with SSE2, the baseline the library is built for): checksums were a
 * fifth of a small commit's instructions. The same hash on every path. */
#include <xxh_x86dispatch.h>
#endif
#endif

static const char META_MAGIC[8] = {'S', 'T', 'R', 'A', 'T', 'A', 'D', 'B'};

uint64_t st_checksum(const void *data, size_t len) { return XXH3_64bits(data, len); }

uint64_t st_random_id(uint64_t seed) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    static _Atomic uint64_t calls;
    uint64_t in[6] = {seed, (uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec, (uint64_t)getpid(),
                      atomic_fetch_add(&calls, 1), 0};
    if (getrandom(&in[5], sizeof in[5], GRND_NONBLOCK) != (ssize_t)sizeof in[5]) in[5] = 0;
    uint64_t id = st_checksum(in, sizeof in);
    return id ? id : 1;
}

/* ------------------------------------------------------------------ free vectors */

int st_free_vec_push(st_free_vec *fv, pgno_t pgno, uint64_t version) {
    if (fv->n == fv->cap) {
        size_t cap = fv->cap ? fv->cap * 2 : 64;
        st_free_entry *v = realloc(fv->v, cap * sizeof *v);
        if (!v) return STRATA_ERR_NO_MEMORY;
        fv->v = v;
        fv->cap = cap;
    }
    fv->v[fv->n++] = (st_free_entry){pgno, version};
    return STRATA_OK;
}

void st_free_vec_clear(st_free_vec *fv) {
    free(fv->v);
    fv->v = NULL;
    fv->n = fv->cap = 0;
}

/* ------------------------------------------------------------------ dirty map */

static size_t dirty_hash(pgno_t p, size_t cap) {
    return (size_t)((p * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static st_dirty *dirty_find(st_dirty_map *m, pgno_t pgno) {
    if (!m->cap || pgno < 2) return NULL; /* 0 marks an empty slot; 0 and 1 are meta pages */
    for (size_t i = dirty_hash(pgno, m->cap);; i = (i + 1) & (m->cap - 1)) {
        if (m->slots[i].pgno == pgno) return &m->slots[i];
        if (m->slots[i].pgno == 0) return NULL;
    }
}

static int dirty_insert(st_dirty_map *m, st_dirty d) {
    if ((m->count + 1) * 4 > m->cap * 3) {
        size_t cap = m->cap ? m->cap * 2 : 256;
        st_dirty *slots = calloc(cap, sizeof *slots);
        if (!slots) return STRATA_ERR_NO_MEMORY;
        for (size_t i = 0; i < m->cap; i++) {
            if (!m->slots[i].pgno) continue;
            size_t j = dirty_hash(m->slots[i].pgno, cap);
            while (slots[j].pgno) j = (j + 1) & (cap - 1);
            slots[j] = m->slots[i];
        }
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    size_t j = dirty_hash(d.pgno, m->cap);
    while (m->slots[j].pgno) j = (j + 1) & (m->cap - 1);
    m->slots[j] = d;
    m->count++;
    return STRATA_OK;
}

/* Remove by backward-shift deletion (no tombstones). */
static void dirty_remove(st_dirty_map *m, st_dirty *d) {
    size_t i = (size_t)(d - m->slots);
    m->slots[i].pgno = 0;
    m->count--;
    for (size_t j = (i + 1) & (m->cap - 1); m->slots[j].pgno; j = (j + 1) & (m->cap - 1)) {
        size_t home = dirty_hash(m->slots[j].pgno, m->cap);
        /* Move j into the hole i when its home is not in (i, j] cyclically. */
        bool between = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
        if (!between) {
            m->slots[i] = m->slots[j];
            m->slots[j].pgno = 0;
            i = j;
        }
    }
}

/* ------------------------------------------------------------------ meta slots */

void st_meta_seal(st_meta *m) {
    m->checksum = st_checksum((const uint8_t *)m + 8, sizeof *m - 8);
}

bool st_meta_valid(const st_meta *m) {
    return memcmp(m->magic, META_MAGIC, 8) == 0 &&
           m->checksum == st_checksum((const uint8_t *)m + 8, sizeof *m - 8);
}

/* A meta slot as read: the meta, and an encrypted file's header after it (cipher.h). */
typedef struct meta_slot {
    st_meta m;
    uint8_t enc[ST_ENC_HEADER_END - sizeof(st_meta)];
} meta_slot;

static void meta_read(strata_db_t *db, int slot, meta_slot *out) {
    st_os_meta_lock(&db->file);
    memcpy(out, db->file.map + (size_t)slot * ST_PAGE_SIZE, sizeof *out);
    st_os_meta_unlock(&db->file);
}

static void slot_image(strata_db_t *db, int slot, uint8_t *out);

int st_pager_free_delta(strata_db_t *db, const st_meta *m, st_fl_delta *out, strata_error *err) {
    memset(out, 0, sizeof *out);
    if (!(m->flags & ST_META_FREE_DELTA)) return STRATA_OK;
    int damaged = -1;
    for (int s = 0; s < 2; s++) {
        meta_slot ms;
        meta_read(db, s, &ms);
        if (ms.m.version != m->version || !(ms.m.flags & ST_META_FREE_DELTA)) continue;
        uint8_t img[ST_DELTA_BYTES];
        slot_image(db, s, img);
        if (st_fl_delta_image_ok(img, m)) return st_fl_delta_decode(img, m, out, err);
        /* A commit of another handle may have overwritten the slot while its image was read
         * (a verify beside commits read a newer image under the older meta, and called it
         * damaged): only an image that fails under the same meta is damaged. */
        meta_read(db, s, &ms);
        if (ms.m.version != m->version) continue;
        damaged = s;
    }
    if (damaged >= 0)
        return ST_CORRUPT(err, "'%s': the free-list delta of version %llu is damaged (meta "
                          "slot %d)", db->file.shown, (unsigned long long)m->version, damaged);
    return st_err(err, STRATA_ERR_BUSY, "'%s': version %llu left its meta slot (commits since): "
                  "its free list cannot be read now", db->file.shown,
                  (unsigned long long)m->version);
}

static void meta_copy(strata_db_t *db, int slot, st_meta *out) {
    meta_slot ms;
    meta_read(db, slot, &ms);
    *out = ms.m;
}

uint32_t st_format_of(const strata_db_t *db) {
    return db->cipher ? ST_FORMAT_ENCRYPTED : ST_FORMAT_PLAIN;
}

/* Encrypted files: whether these slot bytes were authenticated before (the two last ones are
 * kept: a snapshot compares 192 bytes rather than computing an HMAC per slot) — and, img not
 * NULL, this delta image with them (a writer, which reads the image at every write
 * transaction, compares 4 KiB rather than computing the HMAC over them again: ~17,000 cycles,
 * and three a commit before; the meta a commit seals is put here as it is written). */
static bool meta_authentic(strata_db_t *db, const meta_slot *slot, const uint8_t *img) {
    _Static_assert(sizeof(meta_slot) == sizeof db->meta_auth[0], "a slot's bytes");
    pthread_mutex_lock(&db->meta_auth_lock);
    bool yes = false;
    for (int i = 0; i < 2 && !yes; i++)
        yes = memcmp(db->meta_auth[i], slot, sizeof *slot) == 0 &&
              (!img || (db->meta_auth_has_img[i] &&
                        memcmp(db->meta_auth_img[i], img, ST_DELTA_BYTES) == 0));
    pthread_mutex_unlock(&db->meta_auth_lock);
    return yes;
}

/* slot's bytes (and img, the delta image its MAC covered; NULL: none) authenticated. */
static void meta_authenticated(strata_db_t *db, const meta_slot *slot, const uint8_t *img) {
    pthread_mutex_lock(&db->meta_auth_lock);
    memcpy(db->meta_auth[1], db->meta_auth[0], sizeof *slot);
    memcpy(db->meta_auth_img[1], db->meta_auth_img[0], ST_DELTA_BYTES);
    db->meta_auth_has_img[1] = db->meta_auth_has_img[0];
    memcpy(db->meta_auth[0], slot, sizeof *slot);
    if (img) memcpy(db->meta_auth_img[0], img, ST_DELTA_BYTES);
    db->meta_auth_has_img[0] = img != NULL;
    pthread_mutex_unlock(&db->meta_auth_lock);
}

/* The delta image of a slot's meta page (ST_DELTA_BYTES into out). */
static void slot_image(strata_db_t *db, int slot, uint8_t *out) {
    st_os_meta_lock(&db->file);
    memcpy(out, db->file.map + (size_t)slot * ST_PAGE_SIZE + ST_DELTA_OFF, ST_DELTA_BYTES);
    st_os_meta_unlock(&db->file);
}

/* Write a meta page: m, then the delta image img (NULL: zeros); an encrypted file's page is
 * then sealed (its MAC covers the image from format 15 on). */
static int meta_write(strata_db_t *db, int slot, const st_meta *m, const uint8_t *img,
                      strata_error *err) {
    uint8_t page[ST_PAGE_SIZE];
    memset(page, 0, sizeof page);
    memcpy(page, m, sizeof *m);
    if (img) memcpy(page + ST_DELTA_OFF, img, ST_DELTA_BYTES);
    if (db->cipher) st_cipher_meta_seal(db->cipher, page);
    st_os_meta_lock(&db->file);
    int rc = st_os_write(&db->file, (uint64_t)slot * ST_PAGE_SIZE, page, sizeof page, err);
    st_os_meta_unlock(&db->file);
    /* sealed here: authentic as written (the next write transaction reads it back) */
    if (rc == STRATA_OK && db->cipher)
        meta_authenticated(db, (const meta_slot *)page,
                           m->format_version >= ST_FORMAT_ENCRYPTED ? page + ST_DELTA_OFF : NULL);
    return rc;
}

int st_pager_create(strata_db_t *db, strata_error *err) {
    st_meta m;
    memset(&m, 0, sizeof m);
    memcpy(m.magic, META_MAGIC, 8);
    m.format_version = st_format_of(db);
    m.page_size = ST_PAGE_SIZE;
    m.page_count = 2;
    m.flags = ST_META_DURABLE;
    m.db_id = st_random_id(0);
    int rc = db->cipher ? st_cipher_bind(db->cipher, m.db_id, err) : STRATA_OK;
    if (rc == STRATA_OK) rc = st_os_ensure_size(&db->file, 2 * ST_PAGE_SIZE, err);
    for (uint64_t v = 0; v < 2 && rc == STRATA_OK; v++) {
        m.version = m.durable_version = v;
        st_meta_seal(&m);
        rc = meta_write(db, (int)v, &m, NULL, err);
    }
    if (rc == STRATA_OK) rc = st_os_sync(&db->file, err);
    return rc;
}

/* Another handle may have grown the file: ask the kernel. */
static uint64_t file_size_now(strata_db_t *db) {
    if (db->file.mem) return atomic_load(&db->file.file_size);
    struct stat sb;
    if (fstat(db->file.fd, &sb) == 0 && (uint64_t)sb.st_size > atomic_load(&db->file.file_size))
        atomic_store(&db->file.file_size, (uint64_t)sb.st_size);
    return atomic_load(&db->file.file_size);
}

/* Why a slot cannot be used (META_OK: it can); meta_problem_name gives the words. */
typedef enum meta_problem_t {
    META_OK, META_NO_MAGIC, META_FORMAT, META_PAGE_SIZE, META_CHECKSUM, META_FLAGS,
    META_BEYOND_MAP, META_TOO_FEW_PAGES, META_FILE_SHORT, META_CATALOG, META_FREELIST,
    META_FREE_COUNT, META_PACKED, META_ENCRYPTED, META_NOT_ENCRYPTED, META_WRONG_KEY,
    META_NOT_AUTHENTIC, META_DELTA
} meta_problem_t;

static const char *meta_problem_name(meta_problem_t p) {
    static const char *const names[] = {
        [META_OK] = "usable", [META_NO_MAGIC] = "no magic", [META_FORMAT] = "format version",
        [META_PAGE_SIZE] = "page size", [META_CHECKSUM] = "checksum mismatch",
        [META_FLAGS] = "bad flags", [META_BEYOND_MAP] = "page count beyond map_size",
        [META_TOO_FEW_PAGES] = "page count below 2",
        [META_FILE_SHORT] = "file shorter than page count",
        [META_CATALOG] = "catalog root out of range", [META_FREELIST] = "free list out of range",
        [META_FREE_COUNT] = "free count above page count",
        [META_PACKED] = "packed region out of range", [META_ENCRYPTED] = "encrypted",
        [META_NOT_ENCRYPTED] = "not encrypted", [META_WRONG_KEY] = "another encryption key",
        [META_NOT_AUTHENTIC] = "does not authenticate",
        [META_DELTA] = "free-list delta damaged",
    };
    return names[p];
}

/* What is wrong with meta slot s (read into *slot), if anything; with_delta: its free-list
 * delta checked too when it has one (a reader, which needs no free list, does not ask). The
 * page's delta image is read when needed: for that, and for the MAC of an encrypted file's
 * meta from format 15 on (a writer changing the slot meanwhile fails it: not a usable slot). */
static meta_problem_t meta_problem(strata_db_t *db, int s, const meta_slot *slot,
                                   bool with_delta) {
    const st_meta *m = &slot->m;
    uint8_t img[ST_DELTA_BYTES];
    bool have_img = false;
    if (memcmp(m->magic, META_MAGIC, 8) != 0) return META_NO_MAGIC;
    /* A newer format may checksum differently: name the version before the checksum. */
    if (m->format_version < ST_FORMAT_OLDEST_READ || m->format_version > ST_FORMAT_VERSION)
        return META_FORMAT;
    if (m->page_size != ST_PAGE_SIZE) return META_PAGE_SIZE;
    if (m->checksum != st_checksum((const uint8_t *)m + 8, sizeof *m - 8)) return META_CHECKSUM;
    /* Formats 9, 11, 13 and 15 are exactly the encrypted files: their meta pages carry the
     * header. */
    bool encrypted = st_meta_page_encrypted((const uint8_t *)slot);
    if (encrypted != (m->format_version == ST_FORMAT_ENCRYPTED ||
                      m->format_version == ST_FORMAT_ENCRYPTED_13 ||
                      m->format_version == ST_FORMAT_ENCRYPTED_11 ||
                      m->format_version == ST_FORMAT_ENCRYPTED_9))
        return META_FLAGS;
    if (encrypted && !db->cipher) return META_ENCRYPTED;
    if (!encrypted && db->cipher) return META_NOT_ENCRYPTED;
    /* (the delta a writer reads is authenticated with it: by the cache only as the very bytes
     * authenticated before) */
    bool mac_img = encrypted && m->format_version >= ST_FORMAT_ENCRYPTED;
    if (encrypted && mac_img && with_delta) {
        slot_image(db, s, img);
        have_img = true;
    }
    if (encrypted && !meta_authentic(db, slot, have_img ? img : NULL)) {
        if (mac_img && !have_img) {
            slot_image(db, s, img);
            have_img = true;
        }
        st_meta_auth a = st_cipher_meta_check(db->cipher, (const uint8_t *)slot, img);
        if (a == ST_META_AUTH_WRONG_KEY) return META_WRONG_KEY;
        if (a != ST_META_AUTH_OK) return META_NOT_AUTHENTIC;
        meta_authenticated(db, slot, mac_img ? img : NULL);
    }
    if (m->durable_version > m->version ||
        (m->flags & ~(ST_META_DURABLE | ST_META_SYNCED | ST_META_LOGGED | ST_META_LOG_PENDING |
                      ST_META_FREE_DELTA)))
        return META_FLAGS;
    if (m->flags & ST_META_FREE_DELTA) { /* format 14, or 15 encrypted */
        if (m->format_version < (encrypted ? ST_FORMAT_ENCRYPTED : ST_FORMAT_PLAIN))
            return META_FLAGS;
        if (with_delta && !have_img) slot_image(db, s, img);
        if (with_delta && !st_fl_delta_image_ok(img, m)) return META_DELTA;
    }
    if (m->page_count > db->file.map_size / ST_PAGE_SIZE) return META_BEYOND_MAP;
    if (m->page_count < 2) return META_TOO_FEW_PAGES;
    if (m->page_count > atomic_load(&db->file.file_size) / ST_PAGE_SIZE &&
        m->page_count > file_size_now(db) / ST_PAGE_SIZE)
        return META_FILE_SHORT;
    if (st_pgno_packed(m->catalog_root) ? !m->packed_region
                                        : m->catalog_root == 1 || m->catalog_root >= m->page_count)
        return META_CATALOG;
    if ((m->catalog_root == 0) != (m->catalog_count == 0)) return META_CATALOG;
    if (m->freelist_head == 1 || m->freelist_head >= m->page_count) return META_FREELIST;
    if (m->free_count > m->page_count) return META_FREE_COUNT;
    if (m->packed_region == 1 || m->packed_region >= m->page_count ||
        (m->packed_region == 0) != (m->packed_live == 0))
        return META_PACKED;
    return META_OK;
}

int st_pager_latest_meta(strata_db_t *db, st_meta *out, strata_error *err) {
    uint64_t size = atomic_load(&db->file.file_size);
    if (size < 16)
        return st_err(err, STRATA_ERR_NOT_STRATA, "'%s' is non-empty but too small (%llu bytes) to be a Strata database",
                      db->file.shown, (unsigned long long)size);
    if (memcmp(db->file.map + 8, META_MAGIC, 8) != 0) {
        if (size >= 2 * ST_PAGE_SIZE && memcmp(db->file.map + ST_PAGE_SIZE + 8, META_MAGIC, 8) == 0)
            goto slots; /* slot 0 torn, slot 1 may do */
        return st_err(err, STRATA_ERR_NOT_STRATA, "'%s' is not a Strata database (no magic)",
                      db->file.shown);
    }
    if (size < 2 * ST_PAGE_SIZE)
        return ST_CORRUPT(err, "'%s' is truncated: %llu bytes, a Strata file has at least %u",
                          db->file.shown, (unsigned long long)size, 2 * ST_PAGE_SIZE);
slots:;
    st_meta m[2];
    meta_problem_t why[2];
    for (int s = 0; s < 2; s++) {
        meta_slot ms;
        meta_read(db, s, &ms);
        m[s] = ms.m;
        why[s] = meta_problem(db, s, &ms, true);
    }
    int best = -1;
    for (int s = 0; s < 2; s++)
        if (why[s] == META_OK && (best < 0 || m[s].version > m[best].version ||
                        (m[s].version == m[best].version && (m[s].flags & ST_META_DURABLE))))
            best = s;
    if (best >= 0) {
        *out = m[best];
        return db->cipher ? st_cipher_bind(db->cipher, out->db_id, err) : STRATA_OK;
    }
    /* Neither slot is usable: name the most telling reason (a key problem first). */
    for (int s = 0; s < 2; s++) {
        if (why[s] == META_ENCRYPTED)
            return st_err(err, STRATA_ERR_ENCRYPTION, "'%s' is encrypted: open it with its "
                          "encryption key", db->file.shown);
        if (why[s] == META_NOT_ENCRYPTED)
            return st_err(err, STRATA_ERR_ENCRYPTION, "'%s' is not encrypted, but an encryption "
                          "key was given", db->file.shown);
        if (why[s] == META_WRONG_KEY)
            return st_err(err, STRATA_ERR_ENCRYPTION, "the encryption key given does not open "
                          "'%s' (it was encrypted with another key)", db->file.shown);
    }
    for (int s = 0; s < 2; s++) {
        if (why[s] == META_FORMAT)
            return st_err(err, STRATA_ERR_FORMAT_VERSION,
                          "'%s' has file format version %u; this library reads versions %u to %u",
                          db->file.shown, m[s].format_version, ST_FORMAT_OLDEST_READ, ST_FORMAT_VERSION);
        if (why[s] == META_PAGE_SIZE)
            return st_err(err, STRATA_ERR_FORMAT_VERSION,
                          "'%s' has page size %u; this library reads %u", db->file.shown,
                          m[s].page_size, ST_PAGE_SIZE);
        if (why[s] == META_BEYOND_MAP)
            return st_err(err, STRATA_ERR_MAP_FULL,
                          "'%s' has %llu pages, more than map_size %llu holds; reopen with a "
                          "larger map_size", db->file.shown, (unsigned long long)m[s].page_count,
                          (unsigned long long)db->file.map_size);
        if (why[s] == META_FILE_SHORT)
            return ST_CORRUPT(err, "'%s' is truncated: meta slot %d (version %llu) needs %llu "
                              "pages, the file has %llu bytes", db->file.shown, s,
                              (unsigned long long)m[s].version,
                              (unsigned long long)m[s].page_count,
                              (unsigned long long)atomic_load(&db->file.file_size));
    }
    return ST_CORRUPT(err, "'%s': no usable meta slot (slot 0: %s; slot 1: %s)", db->file.shown,
                      meta_problem_name(why[0]), meta_problem_name(why[1]));
}

/* The slot holding a valid meta of `version` (its durable copy if both do), or -1; with_delta:
 * its free-list delta whole too (a writer's, or a copy's source; a reader needs none). */
static int find_slot_of(strata_db_t *db, uint64_t version, st_meta *out, bool with_delta) {
    int found = -1;
    for (int s = 0; s < 2; s++) {
        meta_slot ms;
        meta_read(db, s, &ms);
        if (ms.m.version != version || meta_problem(db, s, &ms, with_delta) != META_OK) continue;
        if (found < 0 || (ms.m.flags & ST_META_DURABLE)) {
            *out = ms.m;
            found = s;
        }
    }
    return found;
}

static int find_slot(strata_db_t *db, uint64_t version, st_meta *out) {
    return find_slot_of(db, version, out, true);
}

int st_pager_snapshot(strata_db_t *db, int slot, st_meta *out, strata_error *err) {
    for (long attempt = 0; attempt < 1000000; attempt++) {
        uint64_t v = st_readers_current(db);
        st_readers_hold(db, slot, v);
        if (st_readers_current(db) != v) continue; /* a writer published meanwhile */
        /* A NO_SYNC commit overwrites the slot of the version it replaces, just before it
         * publishes (or its writer died just before): the next version is complete, and the
         * hold on v protects it too. */
        if (find_slot_of(db, v, out, false) >= 0 || find_slot_of(db, v + 1, out, false) >= 0) {
            if (db->cipher) st_readers_note_foreign(db); /* pages may have changed under the view */
            return STRATA_OK;
        }
        if (attempt > 8) sched_yield();
    }
    st_readers_hold(db, slot, UINT64_MAX);
    return ST_CORRUPT(err, "'%s': the lock file's current version %llu has no valid meta slot",
                      db->file.shown, (unsigned long long)st_readers_current(db));
}

static int mark_durable(strata_db_t *db, int slot, st_meta *m, strata_error *err);

/* The version recovery starts from before the commit log: the newest, if durable or intact. */
static int recover_base(strata_db_t *db, st_check_unsynced_fn check, const st_meta *newest,
                        st_meta *out, strata_error *err) {
    st_meta durable;
    if (newest->flags & ST_META_DURABLE) {
        *out = *newest;
        return STRATA_OK;
    }
    int ds = find_slot(db, newest->durable_version, &durable);
    /* a SYNCED version that a later commit names as durable was published, hence synced */
    bool have_durable = ds >= 0 && (durable.flags & (ST_META_DURABLE | ST_META_SYNCED));
    if (newest->flags & ST_META_LOGGED) { /* rebuilt from the log, if at all */
        if (!have_durable)
            return ST_CORRUPT(err, "'%s': version %llu was logged after version %llu, which is "
                              "gone", db->file.shown, (unsigned long long)newest->version,
                              (unsigned long long)newest->durable_version);
        *out = durable;
        return STRATA_OK;
    }
    /* Written in NO_SYNC mode (or SYNCED): its pages may not all have reached the disk. */
    strata_error why = {0};
    int rc = check(db, newest, have_durable ? &durable : NULL, &why);
    if (rc == STRATA_OK) {
        *out = *newest;
        return STRATA_OK;
    }
    if (rc != STRATA_ERR_CORRUPT) return st_err(err, rc, "%s", why.message);
    if (!have_durable)
        return ST_CORRUPT(err, "'%s': version %llu was written without sync and is damaged (%.100s); "
                          "its durable version %llu is gone", db->file.shown,
                          (unsigned long long)newest->version, why.message,
                          (unsigned long long)newest->durable_version);
    *out = durable; /* the commits after the last sync were lost with the power */
    return STRATA_OK;
}

/* snprintf whose output may be cut (a report's text): not analysed for truncation. */
static void report_text(char *out, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void report_text(char *out, size_t cap, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(out, cap, fmt, ap);
    va_end(ap);
}

/* Versions that were committed durably (FULL, logged) and that the log could not rebuild:
 * refused unless the open accepts the rollback; either way what happened is reported. */
static int recovery_outcome(strata_db_t *db, const st_meta *newest, const st_meta *base,
                            const st_meta *rebuilt, const char *stop, strata_error *err) {
    strata_recovery *r = &db->recovery;
    r->recovered = true;
    r->newest_version = newest->version > rebuilt->version ? newest->version : rebuilt->version;
    r->durable_version = base->version;
    r->opened_version = rebuilt->version;
    r->dropped = r->newest_version - rebuilt->version;
    if (!r->dropped) return STRATA_OK;
    char log[ST_SHOWN_PATH + 8];
    st_os_log_shown(&db->file, log, sizeof log);
    if (!(newest->flags & ST_META_LOGGED)) { /* NO_SYNC (or SYNCED) pages lost with the power */
        report_text(r->why, sizeof r->why, "versions %llu..%llu were written without sync and did not "
                 "all reach the disk", (unsigned long long)rebuilt->version + 1,
                 (unsigned long long)newest->version);
        return STRATA_OK;
    }
    if (newest->flags & ST_META_LOG_PENDING) { /* records appended after the log's last sync */
        report_text(r->why, sizeof r->why, "versions %llu..%llu were committed without a sync of the "
                 "commit log and their records did not all reach the disk",
                 (unsigned long long)rebuilt->version + 1, (unsigned long long)newest->version);
        return STRATA_OK;
    }
    report_text(r->why, sizeof r->why, "versions %llu..%llu need the commit log '%s': %s",
             (unsigned long long)rebuilt->version + 1, (unsigned long long)newest->version, log, stop);
    if (db->file.opts.accept_rollback) return STRATA_OK;
    return ST_CORRUPT(err, "%s; open with accept_rollback to reopen at version %llu without them",
                      r->why, (unsigned long long)rebuilt->version);
}

int st_pager_recover(strata_db_t *db, st_check_unsynced_fn check, st_meta *out,
                     strata_error *err) {
    st_meta newest, base, rebuilt;
    int rc = st_pager_latest_meta(db, &newest, err);
    if (rc || (rc = recover_base(db, check, &newest, &base, err))) return rc;
    uint64_t replayed;
    char stop[160];
    /* The delta image of the base version, which the records' changes rebuild onward. */
    uint8_t img[ST_DELTA_BYTES];
    st_meta found;
    int from = find_slot(db, base.version, &found);
    if (from >= 0) slot_image(db, from, img);
    else memset(img, 0, sizeof img);
    if ((rc = st_log_replay(db, &base, &rebuilt, img, &replayed, stop, sizeof stop, err)) ||
        (rc = recovery_outcome(db, &newest, &base, &rebuilt, stop, err)))
        return rc;
    db->recovery.replayed = replayed;
    if (replayed == 0 && rebuilt.version == newest.version) {
        /* A version written without sync that passed its check page by page is made durable
         * now (a sync, and its durable copy in the other slot): else every later first open
         * checks it again, until some handle commits (a process that wrote 1 GB and died would
         * cost each open a pass over that gigabyte). */
        int slot;
        if (!(base.flags & ST_META_DURABLE) && !db->file.opts.read_only && !db->file.mem &&
            (slot = find_slot(db, base.version, &newest)) >= 0 &&
            (rc = mark_durable(db, slot, &base, err)))
            return rc;
        *out = base;
        return STRATA_OK;
    }
    if (replayed == 0) { /* a rollback: the newer meta must not come back at the next open */
        int base_slot = find_slot(db, base.version, &newest);
        st_meta copy = base;
        if (base_slot < 0)
            return ST_CORRUPT(err, "'%s': the durable version %llu vanished during recovery",
                              db->file.shown, (unsigned long long)base.version);
        slot_image(db, base_slot, img);
        if ((rc = meta_write(db, 1 - base_slot, &copy, img, err)) ||
            (rc = st_os_sync(&db->file, err)))
            return rc;
        *out = base;
        return STRATA_OK;
    }
    /* The rebuilt version goes into the slot it was written for (never the base's), then
     * becomes durable: a sync, and its durable copy in the base's slot. */
    int base_slot = find_slot(db, base.version, &newest);
    if (base_slot < 0)
        return ST_CORRUPT(err, "'%s': the durable version %llu vanished during recovery",
                          db->file.shown, (unsigned long long)base.version);
    if ((rc = meta_write(db, 1 - base_slot, &rebuilt, img, err)) ||
        (rc = mark_durable(db, 1 - base_slot, &rebuilt, err)))
        return rc;
    *out = rebuilt;
    return STRATA_OK;
}

/* With the writer lock held: sync, then write a durable copy of the current version's meta
 * (in `slot`) into the other slot, and sync again. *m becomes the durable copy. */
static int mark_durable(strata_db_t *db, int slot, st_meta *m, strata_error *err) {
    db->reuse_hints.valid = false; /* pages held back for the old durable version come free */
    int rc = st_os_sync(&db->file, err);
    if (rc || ((m->flags & ST_META_DURABLE) && m->db_id)) return rc;
    m->flags |= ST_META_DURABLE;
    if (!m->db_id) m->db_id = st_random_id(m->version); /* a file of format 3 or older */
    m->durable_version = m->version;
    st_meta_seal(m);
    uint8_t img[ST_DELTA_BYTES]; /* the same delta (its checksum does not cover the flags) */
    slot_image(db, slot, img);
    if ((rc = meta_write(db, 1 - slot, m, img, err))) return rc;
    return st_os_sync(&db->file, err);
}

int st_pager_sync(strata_db_t *db, strata_error *err) {
    if (db->file.mem) return STRATA_OK;
    if (db->file.opts.read_only) return st_os_sync(&db->file, err);
    pthread_mutex_lock(&db->write_mutex);
    int rc = st_readers_writer_lock(db, true, err);
    if (rc == STRATA_OK && db->log_retract_at) {
        rc = st_log_retract(db, db->log_retract_at, err);
        if (rc) st_readers_writer_unlock(db);
    }
    if (rc == STRATA_OK) {
        st_meta m;
        int slot = find_slot(db, st_readers_current(db), &m);
        rc = slot >= 0 ? mark_durable(db, slot, &m, err) : st_os_sync(&db->file, err);
        st_readers_writer_unlock(db);
    }
    pthread_mutex_unlock(&db->write_mutex);
    if (rc == STRATA_OK) db->unsynced = false;
    return rc;
}

int st_pager_sync_commits(strata_db_t *db, uint64_t *covered, strata_error *err) {
    *covered = st_readers_current(db);
    if (db->file.mem || db->file.opts.read_only) return STRATA_OK;
    st_meta m;
    int slot = find_slot(db, *covered, &m);
    /* Two commits published since the version was read overwrite its slot: the latest then
     * covers it (and is what a sync would have covered anyway). */
    for (int tries = 0; slot < 0 && tries < 64; tries++) {
        uint64_t v = st_readers_current(db);
        if (v == *covered) break;
        *covered = v;
        slot = find_slot(db, v, &m);
    }
    if (slot >= 0) {
        /* Durable already: synced at its commit (a checkpoint, a synced commit, a synced log
         * record: every version before it is then durable too), or covered by a log sync of
         * this handle. Nothing to sync — in particular no file sync under the writer lock. */
        if ((m.flags & (ST_META_DURABLE | ST_META_SYNCED)) ||
            (m.flags & (ST_META_LOGGED | ST_META_LOG_PENDING)) == ST_META_LOGGED ||
            *covered <= atomic_load(&db->log_synced))
            return STRATA_OK;
    }
    /* When the latest version is logged, every version after the durable one is (a logged commit
     * after an unlogged one syncs first: begin_write): their records precede the latest's in the
     * log, written before it was published, so one sync of the log covers them all. Without the
     * writer lock: writers go on appending meanwhile, for the next sync. */
    if (slot >= 0 && (m.flags & ST_META_LOGGED)) {
        atomic_fetch_add(&db->log_syncers, 1);
        int fd = atomic_load(&db->log_closing) ? -1 : db->file.log_fd;
        int rc = -1;
        if (fd >= 0) {
            char name[ST_SHOWN_PATH + 8];
            st_os_log_shown(&db->file, name, sizeof name);
            rc = st_os_sync_fd(&db->file, fd, name, err);
        }
        if (rc == STRATA_OK) { /* (a later sync may have raised it already) */
            uint64_t was = atomic_load(&db->log_synced);
            while (was < *covered && !atomic_compare_exchange_weak(&db->log_synced, &was, *covered)) {}
        }
        atomic_fetch_sub(&db->log_syncers, 1);
        if (rc >= 0) return rc;
    }
    /* else (an unlogged commit, or the log not open in this handle): the file's sync */
    return st_pager_sync(db, err);
}

/* ------------------------------------------------------------------ pages */

static uint64_t txn_page_count(const strata_txn_t *txn) {
    return txn->write ? txn->page_count : txn->meta.page_count;
}

int st_page_get_ahead(strata_txn_t *txn, pgno_t pgno, unsigned lines, const uint8_t **page,
                      strata_error *err) {
    if (txn->write) {
        st_dirty *d = dirty_find(&txn->dirty, pgno);
        if (d) {
            *page = d->buf;
            return STRATA_OK;
        }
    }
    if (st_pgno_packed(pgno)) return st_packed_get(txn, pgno, page, err);
    if (pgno < 2 || pgno >= txn_page_count(txn))
        return ST_CORRUPT(err, "page number %llu out of range [2, %llu)",
                          (unsigned long long)pgno, (unsigned long long)txn_page_count(txn));
    const uint8_t *p = txn->db->file.map + pgno * ST_PAGE_SIZE;
    for (unsigned o = 64; o < 64 * lines; o += 64) __builtin_prefetch(p + o);
    int rc;
    if (txn->db->trust && (rc = st_trust_check(txn->db, p, pgno, txn_page_count(txn),
                                               txn->meta.version, err)))
        return rc;
    *page = txn->db->view + pgno * ST_PAGE_SIZE;
    return STRATA_OK;
}

static uint64_t reserve_pages(uint64_t page_count) {
    uint64_t r = page_count / 16;
    return r < ST_RESERVE_MIN ? ST_RESERVE_MIN : r > ST_RESERVE_MAX ? ST_RESERVE_MAX : r;
}

/* A full disk, and pages held back only for the durable version: make the current version
 * durable now (a sync) so that they come free, and map the free list again. Once a
 * transaction; not while the commit lays out the free list. */
static int make_room(strata_txn_t *txn, bool *retry, strata_error *err) {
    strata_db_t *db = txn->db;
    *retry = false;
    if (txn->room_tried || txn->saving || txn->durable_version >= txn->meta.version) return STRATA_OK;
    txn->room_tried = true;
    st_meta cur;
    int slot = find_slot(db, txn->meta.version, &cur);
    if (slot < 0) return STRATA_OK;
    int rc = mark_durable(db, slot, &txn->meta, err);
    if (rc) return st_txn_fail(txn, rc);
    db->unsynced = false;
    txn->durable_version = txn->meta.version;
    txn->meta_slot = slot; /* the durable copy went into the other one */
    txn->oldest_reader = st_readers_oldest(db, txn->meta.version, NULL);
    st_freelist_remap(txn);
    *retry = true;
    return STRATA_OK;
}

/* Pages [page_count, end) are about to be used: the file holds them, and normally a reserve
 * after them too. On a full disk: make room once (above), then a commit that frees as much as
 * it takes may use the reserve; any other gets NO_SPACE. */
static int room_at_end(strata_txn_t *txn, uint64_t end, bool *retry, strata_error *err) {
    strata_db_t *db = txn->db;
    *retry = false;
    if (db->file.mem) return STRATA_OK;
    uint64_t have = atomic_load(&db->file.file_size) / ST_PAGE_SIZE;
    uint64_t reserve = reserve_pages(end);
    if (end + reserve <= have) return STRATA_OK;
    strata_error full = {0};
    int rc = st_os_ensure_room(&db->file, end * ST_PAGE_SIZE, reserve * ST_PAGE_SIZE, &full);
    if (rc == STRATA_OK) return STRATA_OK;
    if (rc != STRATA_ERR_NO_SPACE) return st_err(err, rc, "%s", full.message);
    if ((rc = make_room(txn, retry, err)) || *retry) return rc;
    /* A commit that may free as much as it takes (so far it took at most a few pages more: a
     * copy is taken before its original is freed) may use the reserve; st_pager_commit refuses
     * it if in the end it took more than it freed. The free list's own pages come at commit. */
    if (txn->saving ? txn->growth_at_save <= 0 : txn->growth <= ST_RESERVE_SLACK) {
        txn->used_reserve = true;
        if (end <= have) return STRATA_OK;
        if (st_os_ensure_size(&db->file, end * ST_PAGE_SIZE, NULL) == STRATA_OK) return STRATA_OK;
        return st_err(err, STRATA_ERR_NO_SPACE, "'%s': the disk is full, and this commit, which "
                      "frees as much as it takes, needs more than the %llu pages kept in reserve "
                      "for such commits: delete in smaller commits", db->file.shown,
                      (unsigned long long)(have > txn->meta.page_count ? have - txn->meta.page_count : 0));
    }
    return st_err(err, STRATA_ERR_NO_SPACE, "'%s': the disk is full (%s); the last %llu pages "
                  "are kept for commits that free as much as they take (deletes)", db->file.shown,
                  strerror(ENOSPC), (unsigned long long)reserve);
}

/* cold: see st_freelist_take. */
static int take_pages(strata_txn_t *txn, uint32_t npages, bool cold, pgno_t *pgno,
                      strata_error *err) {
    txn->growth += npages;
    for (;;) {
        if (npages == 1) {
            if (txn->own.n > 0) {
                *pgno = txn->own.v[--txn->own.n].pgno;
                return STRATA_OK;
            }
            if (st_freelist_take(txn, cold, pgno)) {
                txn->pages_taken++;
                return STRATA_OK;
            }
        } else if (st_freelist_take_run(txn, npages, pgno)) { /* a value bigger than a page */
            txn->pages_taken += npages;
            return STRATA_OK;
        }
        /* Else from the end of the file. */
        uint64_t end = txn->page_count + npages;
        if (txn->db->cipher && end > ST_ENC_MAX_PAGES)
            return st_err(err, STRATA_ERR_MAP_FULL, "'%s' would need %llu pages; an encrypted "
                          "file holds at most %llu (16 TiB)", txn->db->file.shown,
                          (unsigned long long)end, (unsigned long long)ST_ENC_MAX_PAGES);
        if (end * ST_PAGE_SIZE > txn->db->file.map_size)
            return st_err(err, STRATA_ERR_MAP_FULL,
                          "'%s' would need %llu bytes, over map_size %llu; reopen with a larger "
                          "map_size", txn->db->file.shown, (unsigned long long)(end * ST_PAGE_SIZE),
                          (unsigned long long)txn->db->file.map_size);
        bool retry;
        int rc = room_at_end(txn, end, &retry, err);
        if (rc) return rc;
        if (retry) continue; /* the sync freed pages: look in the free list again */
        *pgno = txn->page_count;
        txn->page_count = end;
        txn->pages_taken += npages;
        return STRATA_OK;
    }
}

/* A buffer for npages pages: a spare one (zeroed when `zero`), else a new zeroed one. */
static uint8_t *page_buffer(strata_db_t *db, uint32_t npages, bool zero) {
    if (npages != 1 || db->nspare == 0) return calloc(npages, ST_PAGE_SIZE);
    uint8_t *buf = db->spare_pages[--db->nspare];
    if (zero) memset(buf, 0, ST_PAGE_SIZE);
    return buf;
}

/* A write transaction's page buffers: one-page ones are kept as spares, up to ST_SPARE_PAGES. */
static void dirty_free_all(strata_db_t *db, st_dirty_map *m) {
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->slots[i].pgno) continue;
        if (m->slots[i].npages == 1 && db->nspare < ST_SPARE_PAGES)
            db->spare_pages[db->nspare++] = m->slots[i].buf;
        else
            free(m->slots[i].buf);
    }
    free(m->slots);
    memset(m, 0, sizeof *m);
}

void st_pager_free_spares(strata_db_t *db) {
    while (db->nspare > 0) free(db->spare_pages[--db->nspare]);
}

/* Take npages pages and a buffer for them: zeroed when `zero` (else the caller writes every
 * byte from PH_KIND on: a copy). base: the committed page the new one copies (0: none), for
 * the commit log. */
static int alloc_pages(strata_txn_t *txn, uint32_t npages, bool cold, pgno_t base, bool zero,
                       uint8_t **page, pgno_t *pgno, strata_error *err) {
    int rc = take_pages(txn, npages, cold, pgno, err);
    if (rc) return st_txn_fail(txn, rc);
    uint8_t *buf = page_buffer(txn->db, npages, zero);
    if (!buf || dirty_insert(&txn->dirty, (st_dirty){*pgno, npages, buf, base}) != STRATA_OK) {
        free(buf);
        return st_txn_fail(txn, st_err(err, STRATA_ERR_NO_MEMORY, "out of memory for %u pages", npages));
    }
    st_wr64(buf + PH_VERSION, txn->new_version);
    st_wr64(buf + PH_PGNO, *pgno);
    *page = buf;
    return STRATA_OK;
}

int st_page_alloc(strata_txn_t *txn, uint32_t npages, uint8_t **page, pgno_t *pgno,
                  strata_error *err) {
    ST_ASSERT(txn->write && txn->state != ST_TXN_ENDED && npages > 0);
    return alloc_pages(txn, npages, false, 0, true, page, pgno, err);
}

void st_page_resembles(strata_txn_t *txn, pgno_t pgno, pgno_t like) {
    st_dirty *d = dirty_find(&txn->dirty, pgno);
    if (d && d->npages == 1) d->base = like;
}

int st_page_touch(strata_txn_t *txn, pgno_t pgno, uint8_t **page, pgno_t *newp,
                  strata_error *err) {
    ST_ASSERT(txn->write && txn->state != ST_TXN_ENDED);
    st_dirty *d = dirty_find(&txn->dirty, pgno);
    if (d) {
        *page = d->buf;
        *newp = pgno;
        return STRATA_OK;
    }
    const uint8_t *src;
    int rc = st_page_get(txn, pgno, &src, err);
    if (rc) return rc;
    uint8_t *buf;
    bool cold = txn->new_version - st_rd64(src + PH_VERSION) > ST_REUSE_HOT_VERSIONS;
    /* A packed page is logged whole: a replay reads plain pages only. */
    if ((rc = alloc_pages(txn, 1, cold, st_pgno_packed(pgno) ? 0 : pgno, false, &buf, newp, err))) return rc;
    if (*newp == pgno) /* a damaged free list: freeing the original would free its own copy */
        return st_txn_fail(txn, ST_CORRUPT(err, "page %llu is in use but listed as free",
                                           (unsigned long long)pgno));
    memcpy(buf + PH_KIND, src + PH_KIND, ST_PAGE_SIZE - PH_KIND);
    if ((rc = st_page_free(txn, pgno, 1, err))) return rc;
    *page = buf;
    return STRATA_OK;
}

int st_page_free(strata_txn_t *txn, pgno_t pgno, uint32_t npages, strata_error *err) {
    ST_ASSERT(txn->write && txn->state != ST_TXN_ENDED);
    if (st_pgno_packed(pgno)) { /* its region goes when none of its pages is left (commit) */
        txn->packed_freed++;
        return STRATA_OK;
    }
    st_dirty *d = dirty_find(&txn->dirty, pgno);
    int rc = STRATA_OK;
    if (d) {
        free(d->buf);
        dirty_remove(&txn->dirty, d);
        for (uint32_t i = 0; i < npages && rc == STRATA_OK; i++)
            rc = st_free_vec_push(&txn->own, pgno + i, 0);
    } else {
        for (uint32_t i = 0; i < npages && rc == STRATA_OK; i++)
            rc = st_free_vec_push(&txn->freed, pgno + i, txn->new_version);
    }
    txn->growth -= npages;
    if (rc) return st_txn_fail(txn, st_err(err, rc, "out of memory freeing page %llu",
                                           (unsigned long long)pgno));
    return STRATA_OK;
}

/* ------------------------------------------------------------------ write transactions */

static int take_free_list(strata_txn_t *txn, int slot, strata_error *err);

/* Encrypted files: a version number seals its pages' nonces (cipher.c), so it must never be
 * written twice with different bytes. A commit that failed, or whose writer died, after its
 * first sealed write spent its number (the lock file says so), and after every process closed
 * the file a power cut may have lost commits whose pages did reach the disk: at most
 * ST_NO_SYNC_EVERY unsynced commits, or as many logged ones as records fit in the log. So
 * before the first commit since the lock table was set up, and before any commit after a spent
 * number, the file moves to a version ST_RENUMBER_GAP above every number seen: the current
 * version made durable (as a checkpoint) under that number, with the same pages. */
#define ST_RENUMBER_GAP (1ull << 20)
_Static_assert(ST_LOG_BYTES / 176 + ST_NO_SYNC_EVERY < ST_RENUMBER_GAP,
               "a renumbering jumps past every commit a power cut may have lost");

static int renumber(strata_txn_t *txn, int *slot, strata_error *err) {
    strata_db_t *db = txn->db;
    uint64_t top = txn->meta.version, spent = st_readers_attempted(db);
    if (spent > top) top = spent;
    for (int s = 0; s < 2; s++) {
        meta_slot ms;
        meta_read(db, s, &ms);
        if (meta_problem(db, s, &ms, false) == META_OK && ms.m.version > top) top = ms.m.version;
    }
    st_meta n = txn->meta;
    n.version = n.durable_version = top + ST_RENUMBER_GAP;
    n.flags = ST_META_DURABLE | (txn->meta.flags & ST_META_FREE_DELTA);
    st_meta_seal(&n);
    /* The delta goes with the meta, bound to the new number (and is the transaction's base). */
    uint8_t img[ST_DELTA_BYTES];
    slot_image(db, *slot, img);
    if (n.flags & ST_META_FREE_DELTA) st_fl_delta_restamp(img, n.version);
    if (txn->delta_image) memcpy(txn->delta_image, img, ST_DELTA_BYTES);
    db->reuse_hints.valid = false; /* pages held back for the old durable version come free */
    int rc;
    if ((rc = st_os_sync(&db->file, err)) || (rc = meta_write(db, 1 - *slot, &n, img, err)) ||
        (rc = st_os_sync(&db->file, err)))
        return rc;
    st_readers_publish(db, n.version, true);
    st_readers_renumbered(db, txn->meta.version, n.version);
    db->unsynced = false;
    txn->meta = n;
    *slot = 1 - *slot;
    return STRATA_OK;
}

int st_pager_begin_write(strata_txn_t *txn, strata_error *err) {
    strata_db_t *db = txn->db;
    int rc;
    /* A failed commit whose log record could not be retracted then: first of all. */
    if (db->log_retract_at && (rc = st_log_retract(db, db->log_retract_at, err))) return rc;
    uint64_t v = st_readers_current(db);
    int slot = find_slot(db, v, &txn->meta);
    if (slot < 0 && (slot = find_slot(db, v + 1, &txn->meta)) >= 0)
        st_readers_publish(db, v + 1, false); /* its writer died between meta and publish */
    if (slot < 0)
        return ST_CORRUPT(err, "'%s': the lock file's current version %llu has no valid meta slot",
                          db->file.shown, (unsigned long long)v);
    if (db->cipher) st_readers_note_foreign(db);
    /* (a STRATA_TXN_NO_SYNC write commits as a NO_SYNC handle's does) */
    bool full = db->file.opts.durability != STRATA_DURABILITY_NO_SYNC && !txn->no_sync; /* memory: nothing to lose */
    txn->logged = db->file.opts.durability == STRATA_DURABILITY_FULL && !db->file.mem && !txn->no_sync;
    const st_meta *cm = &txn->meta;
    bool synced = cm->flags & (ST_META_DURABLE | ST_META_SYNCED);
    /* NO_SYNC: make the current version durable now and then, so that the space it holds back
     * is reused and a power loss costs at most this many commits. FULL: when the log has filled,
     * and before logging on top of an unsynced NO_SYNC commit (the log holds only logged ones). */
    bool checkpoint;
    if (txn->logged)
        checkpoint = !cm->db_id || /* a file of format 3 or older gets its id */
                     (!synced && (!(cm->flags & ST_META_LOGGED) ||
                                  cm->log_end > st_log_checkpoint_at(db)));
    else
        checkpoint = !full && !synced && cm->version - cm->durable_version >= ST_NO_SYNC_EVERY;
    /* The free list first (the checkpoint below does not change it): pages freed since the
     * durable version are held back until it moves, so when they grow to an eighth of the
     * file (at least ST_HELD_SYNC_MIN pages), sync now rather than grow the file for them. */
    if ((rc = take_free_list(txn, slot, err))) return rc;
    uint64_t oldest = st_readers_oldest(db, cm->version, NULL); /* a checkpoint keeps the version */
    if (!checkpoint && !synced && !db->file.mem) {
        txn->durable_version = cm->durable_version;
        size_t held = st_freelist_held(txn, oldest);
        checkpoint = (held >= ST_HELD_SYNC_MIN && held >= cm->page_count / 16) || db->tail_held;
    }
    db->tail_held = false;
    if (db->cipher && st_readers_must_renumber(db)) { /* a checkpoint under a new number */
        if ((rc = renumber(txn, &slot, err))) return rc;
    } else if (checkpoint) {
        if ((rc = mark_durable(db, slot, &txn->meta, err))) return rc;
        slot = 1 - slot;
        db->unsynced = false;
    }
    /* The new meta never overwrites the durable version's slot; pages freed after the durable
     * version are not reused until it moves on (a crash may fall back to it), except, for a
     * logged commit, those written after it (freelist.c). */
    st_meta d;
    int durable_slot = slot;
    if (txn->meta.flags & (ST_META_DURABLE | ST_META_SYNCED)) { /* published: synced */
        txn->durable_version = txn->meta.version;
    } else {
        txn->durable_version = txn->meta.durable_version;
        int ds = find_slot(db, txn->durable_version, &d);
        if (ds >= 0 && (d.flags & (ST_META_DURABLE | ST_META_SYNCED))) durable_slot = ds;
    }
    txn->meta_slot = 1 - durable_slot;
    txn->new_version = txn->meta.version + 1;
    txn->page_count = txn->meta.page_count;
    txn->oldest_reader = oldest;
    /* Versions kept alive: a renumbering's jump holds none. */
    uint64_t alive = txn->new_version - txn->oldest_reader, gap_from, gap_to;
    if (st_readers_gap(db, &gap_from, &gap_to) && txn->oldest_reader <= gap_from &&
        gap_to < txn->new_version)
        alive -= gap_to - gap_from;
    if (db->file.opts.max_versions && alive > db->file.opts.max_versions)
        return st_err(err, STRATA_ERR_TOO_MANY_VERSIONS,
                      "'%s': a reader holds version %llu; committing version %llu would keep %llu "
                      "versions alive, over max_versions %llu", db->file.shown,
                      (unsigned long long)txn->oldest_reader,
                      (unsigned long long)txn->new_version,
                      (unsigned long long)alive,
                      (unsigned long long)db->file.opts.max_versions);

    if (!full && txn->durable_version < txn->oldest_reader) txn->oldest_reader = txn->durable_version;

    return STRATA_OK;
}

/* The base version's free list: the one the handle's last commit saved, handed over (a copy
 * cost a few microseconds a commit with ~9,000 entries; a transaction that does not commit
 * leaves the next to load it), else read from the file. */
static int take_free_list(strata_txn_t *txn, int slot, strata_error *err) {
    strata_db_t *db = txn->db;
    pthread_mutex_lock(&db->state_mutex);
    bool cached = db->free_cache_valid && db->free_cache_version == txn->meta.version &&
                  db->free_cache_image;
    if (cached) { /* with its page maps (freelist.c decides whether they still hold) */
        txn->fl = db->free_cache;
        memset(&db->free_cache, 0, sizeof db->free_cache);
        txn->delta = db->free_cache_delta;
        memset(&db->free_cache_delta, 0, sizeof db->free_cache_delta);
        txn->delta_image = db->free_cache_image;
        db->free_cache_image = NULL;
        txn->reuse.map = db->reuse_map;
        memset(&db->reuse_map, 0, sizeof db->reuse_map);
    } else {
        st_freelist_clear(&db->free_cache);
        st_fl_delta_clear(&db->free_cache_delta);
        free(db->free_cache_image);
        db->free_cache_image = NULL;
        st_reuse_map_clear(&db->reuse_map);
    }
    db->free_cache_valid = false;
    pthread_mutex_unlock(&db->state_mutex);
    if (cached) return STRATA_OK;
    /* The version's delta, then its saved list. */
    if (!(txn->delta_image = malloc(ST_DELTA_BYTES)))
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory loading the free list");
    slot_image(db, slot, txn->delta_image);
    int rc = st_fl_delta_decode(txn->delta_image, &txn->meta, &txn->delta, err);
    return rc ? rc : st_freelist_load(db, &txn->meta, &txn->delta, &txn->fl, err);
}

void st_pager_end_write(strata_txn_t *txn) {
    dirty_free_all(txn->db, &txn->dirty);
    st_freelist_clear(&txn->fl);
    st_fl_delta_clear(&txn->delta);
    free(txn->delta_image);
    free(txn->delta_out);
    txn->delta_image = txn->delta_out = NULL;
    st_reuse_clear(&txn->reuse);
    st_reuse_map_clear(&txn->reuse_out);
    st_free_vec_clear(&txn->own);
    st_free_vec_clear(&txn->freed);
}

/* pages, or more if a valid meta slot names more (after a crash, recovery may start from the
 * durable version in the other slot). */
static uint64_t slot_pages(strata_db_t *db, uint64_t pages) {
    for (int s = 0; s < 2; s++) {
        st_meta other;
        meta_copy(db, s, &other);
        if (st_meta_valid(&other) && other.page_count > pages) pages = other.page_count;
    }
    return pages;
}

/* The file's bytes to keep for `pages` pages in use (slot_pages) and the reserve, in whole MiB
 * as the file grows. */
static uint64_t bytes_to_keep(strata_db_t *db, uint64_t pages) {
    pages = slot_pages(db, pages);
    uint64_t keep = (pages + reserve_pages(pages)) * ST_PAGE_SIZE;
    return (keep + (1u << 20) - 1) & ~(uint64_t)((1u << 20) - 1);
}

/* The file holds more than two growth chunks past the pages in use and the reserve, or this
 * commit grew the pages in use by a chunk or more (a bulk write, whose last chunk is mostly
 * unused: 10% of a file written in one transaction) and more than a MiB lies past them and the
 * reserve: shorten it (once no reader holds a version older than m, whose snapshot could name a
 * page past the new end: pages there are free, but a damaged page of an old version must not
 * fault the map). Never below either meta slot's page count: after a crash, recovery may start
 * from the durable version in the other slot. A failure only leaves the file longer. Commits
 * that grow the file by a little (the next chunk is taken once every chunk's worth of them) do
 * not shrink it: they would grow it again. */
static void shrink_file(strata_txn_t *txn, const st_meta *m) {
    strata_db_t *db = txn->db;
    if (db->file.mem) return;
    uint64_t have = atomic_load(&db->file.file_size), chunk = have / 8 < (1u << 20) ? 1u << 20 : have / 8;
    uint64_t pages = m->page_count;
    bool bulk = pages > txn->meta.page_count && (pages - txn->meta.page_count) * ST_PAGE_SIZE >= chunk;
    uint64_t slack = bulk ? 1u << 20 : 2 * chunk;
    if (have <= (pages + reserve_pages(pages)) * ST_PAGE_SIZE + slack) return; /* most commits */
    uint64_t keep = bytes_to_keep(db, pages);
    if (have <= keep + slack || st_readers_oldest(db, m->version, NULL) < m->version) return;
    st_os_shrink(&db->file, keep);
}

void st_pager_trim_at_close(strata_db_t *db) {
    if (db->file.mem || db->file.opts.read_only) return;
    uint64_t pages = slot_pages(db, 0);
    strata_error ignored;
    if (pages == 0 || st_readers_exclusive(db, &ignored) != STRATA_OK) return; /* no valid slot */
    uint64_t keep = bytes_to_keep(db, pages);
    if (file_size_now(db) > keep) st_os_shrink(&db->file, keep); /* (another handle grew it) */
}

static int cmp_dirty(const void *a, const void *b) {
    pgno_t x = (*(st_dirty *const *)a)->pgno, y = (*(st_dirty *const *)b)->pgno;
    return x < y ? -1 : x > y;
}

/* A commit's pages, sorted, and an encrypted file's sealed copies of them back to back. */
typedef struct page_writes {
    strata_db_t *db;
    strata_txn_t *txn;
    st_dirty *const *list;
    size_t n;
    const uint8_t *sealed;
    bool done; /* write_pages was called */
} page_writes;

/* Write the commit's pages into the file (adjacent ones in one write, up to WRITE_BATCH
 * buffers: fewer system calls); an encrypted file's view gets their plain bytes. */
static int write_pages(void *ctx, strata_error *err) {
    page_writes *w = ctx;
    strata_db_t *db = w->db;
    st_dirty *const *list = w->list;
    w->done = true;
    enum { WRITE_BATCH = 64 };
    struct iovec iov[WRITE_BATCH];
    int rc = STRATA_OK;
    for (size_t i = 0, at = 0; i < w->n && rc == STRATA_OK;) {
        size_t j = i;
        for (; j < w->n && j - i < WRITE_BATCH &&
               (j == i || list[j]->pgno == list[j - 1]->pgno + list[j - 1]->npages); j++) {
            size_t len = (size_t)list[j]->npages * ST_PAGE_SIZE;
            iov[j - i] = (struct iovec){w->sealed ? (uint8_t *)w->sealed + at : list[j]->buf, len};
            at += len;
        }
        rc = st_os_write_gather(&db->file, list[i]->pgno * ST_PAGE_SIZE, iov, (int)(j - i), err);
        i = j;
    }
    /* The view of an encrypted file gets the plain bytes just written (their pages were free:
     * nobody reads them), trusted with the new stamp, which no other bytes will ever carry. */
    for (size_t i = 0; rc == STRATA_OK && db->cipher && i < w->n; i++) {
        memcpy(db->view + list[i]->pgno * ST_PAGE_SIZE, list[i]->buf,
               (size_t)list[i]->npages * ST_PAGE_SIZE);
        st_trust_mark(db, list[i]->pgno, w->txn->new_version);
    }
    return rc;
}

int st_pager_commit(strata_txn_t *txn, pgno_t catalog_root, uint64_t catalog_count,
                    strata_error *err) {
    strata_db_t *db = txn->db;
    if (db->broken)
        return st_err(err, STRATA_ERR_IO, "'%s' must be reopened: %s", db->file.shown, db->broken_why);
    st_meta m = txn->meta;
    m.format_version = st_format_of(db); /* an older file becomes the current format */
    txn->hints_out.valid = false;
    if (txn->used_reserve && txn->growth > 0)
        return st_txn_fail(txn, st_err(err, STRATA_ERR_NO_SPACE, "the disk holding '%s' is full; "
                                       "the pages it keeps in reserve are for commits that free as "
                                       "much as they take (deletes), and this one takes %lld more",
                                       db->file.shown, (long long)txn->growth));
    int rc;
    if (txn->packed_freed) { /* packed pages copied or dropped: the region goes with the last */
        if (txn->packed_freed > m.packed_live)
            return st_txn_fail(txn, ST_CORRUPT(err, "'%s': %u packed pages freed, the version had %u",
                                               db->file.shown, txn->packed_freed, m.packed_live));
        m.packed_live -= txn->packed_freed;
        st_region r;
        if (m.packed_live == 0 && m.packed_region) {
            if ((rc = st_packed_region(txn, &txn->meta, &r, err)) ||
                (rc = st_page_free(txn, m.packed_region, r.run, err)))
                return st_txn_fail(txn, rc);
            m.packed_region = 0;
        }
    }
    /* The end of the file, if free, is given back (a quarter of it free at least: else the
     * reuse maps would be built for nothing). */
    uint64_t trimmed = 0;
    if (!db->file.mem && txn->meta.free_count * 4 > txn->meta.page_count) {
        trimmed = st_freelist_trim(txn);
        txn->growth -= (int64_t)trimmed;
    }
    txn->saving = true;
    txn->growth_at_save = txn->growth;
    /* (a trimmed list is saved whole: its saved entries past the new end must go) */
    rc = st_freelist_save(txn, trimmed == 0, &m.freelist_head, &m.free_count, err);
    txn->saving = false;
    if (rc) return rc;

    st_dirty **list = malloc((txn->dirty.count + 1) * sizeof *list);
    if (!list) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    size_t n = 0;
    for (size_t i = 0; i < txn->dirty.cap; i++)
        if (txn->dirty.slots[i].pgno) list[n++] = &txn->dirty.slots[i];
    qsort(list, n, sizeof *list, cmp_dirty);
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        size_t len = (size_t)list[i]->npages * ST_PAGE_SIZE;
        st_wr64(list[i]->buf + PH_CHECKSUM, st_checksum(list[i]->buf + 8, len - 8));
        total += len;
    }
    rc = st_os_ensure_size(&db->file, txn->page_count * ST_PAGE_SIZE, err);
    /* An encrypted file's pages go out sealed (cipher.c); from the first sealed byte written,
     * this version number is spent unless the commit is published (renumber, below). */
    uint8_t *sealed = NULL;
    if (rc == STRATA_OK && db->cipher) {
        sealed = malloc(total ? total : 1);
        if (!sealed) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory sealing %zu pages", n);
        for (size_t i = 0, at = 0; rc == STRATA_OK && i < n; i++) {
            size_t len = (size_t)list[i]->npages * ST_PAGE_SIZE;
            if (st_cipher_seal_page(db->cipher, list[i]->buf, len, list[i]->pgno, sealed + at))
                rc = st_err(err, STRATA_ERR_NO_MEMORY, "cannot seal page %llu (libcrypto)",
                            (unsigned long long)list[i]->pgno);
            at += len;
        }
        if (rc == STRATA_OK) st_readers_attempt(db, txn->new_version);
    }
    page_writes pw = {db, txn, list, n, sealed, false};
    /* An unsynced commit. STRATA_TXN_NO_SYNC at begin: as a NO_SYNC handle's, no record, no
     * sync. strata_txn_commit_unsynced of a logged transaction: its record is appended without
     * a sync (ST_META_LOG_PENDING; strata_db_sync_commits syncs the log for a group of them);
     * when the record does not fit the log, no record and no sync either: the meta says the
     * durable version is still the one before. That is safe for a logged transaction: the
     * pages it reused were written after the durable version (freelist.c), so that version
     * stays intact and the log still rebuilds every logged version after it; a newer logged
     * commit checkpoints first (begin_write). */
    bool unsynced = txn->no_sync || txn->commit_unsynced;
    bool sync = db->file.opts.durability == STRATA_DURABILITY_FULL && !unsynced;
    bool memory = db->file.opts.durability == STRATA_DURABILITY_MEMORY; /* nothing to lose */
    if (rc) {
        free(sealed);
        free(list);
        return rc;
    }

    m.version = txn->new_version;
    m.page_count = txn->page_count;
    m.catalog_root = catalog_root;
    m.catalog_count = catalog_count;
    m.flags = memory ? ST_META_DURABLE : sync ? ST_META_SYNCED : 0;
    if (txn->delta_saved) m.flags |= ST_META_FREE_DELTA;
    m.durable_version = memory ? m.version : txn->durable_version;
    bool logged = false;
    uint64_t record_at = 0;
    if (txn->logged && (!unsynced || txn->commit_unsynced)) /* (the pages written from there) */
        rc = st_log_commit(txn, list, n, &m, unsynced, write_pages, &pw, &logged, &record_at, err);
    if (rc == STRATA_OK && !pw.done) rc = write_pages(&pw, err);
    free(sealed);
    free(list);
    if (rc) return rc;
    if (logged) {
        /* Durable now; the meta only tells readers and later writers. A failed write must not
         * leave a record that a recovery would replay. */
        if ((rc = meta_write(db, txn->meta_slot, &m, txn->delta_out, err))) {
            strata_error e2 = {0};
            st_log_retract(db, record_at, &e2);
            return rc;
        }
    } else {
        st_meta_seal(&m);
        st_meta previous;
        uint8_t previous_image[ST_DELTA_BYTES];
        meta_copy(db, txn->meta_slot, &previous);
        slot_image(db, txn->meta_slot, previous_image);
        /* A failed meta write leaves the slot torn at worst: it never holds the durable version. */
        if ((rc = meta_write(db, txn->meta_slot, &m, txn->delta_out, err))) return rc;
        if (sync) rc = st_os_sync(&db->file, err);
        if (rc) {
            /* The new meta sits in the page cache and may still reach the disk: put the slot's
             * old bytes back so that the failed commit never appears. */
            strata_error e2 = {0};
            if (meta_write(db, txn->meta_slot, &previous, previous_image, &e2) ||
                st_os_sync(&db->file, &e2)) {
                db->broken = true;
                snprintf(db->broken_why, sizeof db->broken_why,
                         "a failed commit could not be rolled back (%.150s)", e2.message);
            }
            return rc;
        }
        if (txn->logged) db->reuse_hints.valid = false; /* synced: the durable version moved */
    }
    st_readers_publish(db, m.version, true);
    if (db->cipher) st_readers_attempt(db, 0); /* published: the number was used once */
    shrink_file(txn, &m);
    for (size_t i = 0; db->trust && !db->cipher && i < txn->dirty.cap; i++) /* the bytes this process wrote */
        if (txn->dirty.slots[i].pgno) st_trust_mark(db, txn->dirty.slots[i].pgno, m.version);
    txn->meta = m;
    if (!memory) db->unsynced = true; /* close leaves a durable meta: no check at next open */

    pthread_mutex_lock(&db->state_mutex);
    st_freelist_clear(&db->free_cache);
    db->free_cache = txn->fl; /* the list just written (or kept, with the new delta) */
    memset(&txn->fl, 0, sizeof txn->fl);
    st_fl_delta_clear(&db->free_cache_delta);
    db->free_cache_delta = txn->delta;
    memset(&txn->delta, 0, sizeof txn->delta);
    free(db->free_cache_image);
    db->free_cache_image = txn->delta_out;
    txn->delta_out = NULL;
    st_reuse_map_clear(&db->reuse_map);
    db->reuse_map = txn->reuse_out;
    memset(&txn->reuse_out, 0, sizeof txn->reuse_out);
    db->free_cache_version = m.version;
    db->free_cache_valid = true;
    db->last_write_pages = txn->pages_taken;
    if (txn->hints_out.valid) db->reuse_hints = txn->hints_out;
    pthread_mutex_unlock(&db->state_mutex);
    return STRATA_OK;
}


