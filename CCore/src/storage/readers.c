/*
 * readers.c — the lock file `<path>.lock` (memory mode: an anonymous region of the store).
 *
 * Layout (little-endian, native atomics; the file is shared through MAP_SHARED):
 *
 *   offset  size  field
 *   0       8     magic "STRATALK"
 *   8       4     lock format version (1)
 *   12      4     slot count N
 *   16      8     current version: the latest commit published by a writer (atomic)
 *   24      4     commit counter (atomic): bumped by every publish, the futex word waiters of
 *                 strata_db_wait_commit sleep on in any process (strata_db_stop_waits bumps it
 *                 too, to wake this handle's waiters)
 *   28      4     waiters (atomic; an older library leaves it 0): threads of any process asleep,
 *                 or about to be, on the commit counter; a publish wakes them only when there
 *                 are some (a wake with none was a system call at every commit). A waiter of
 *                 an older library does not count itself: it sleeps its 100 ms at most and
 *                 sees the commit then
 *   32      8     encrypted files: the version a commit is writing sealed bytes for (0: none);
 *                 left set by a commit that failed or died (its number is spent)
 *   40      8     encrypted files: the version the file was last renumbered to (0: not since
 *                 the table was set up; pager.c: renumber)
 *   48      8     encrypted files: the version that renumbering started from
 *   56      8     publishes (atomic, since 0.10.0): bumped by every publish before the current
 *                 version moves, so that a handle can tell whether anyone else committed
 *   64      64*N  reader slots: u32 pid (atomic, 0 = free), u32 reserved,
 *                 u64 version (atomic, UINT64_MAX = none), u64 since (atomic: wall-clock
 *                 milliseconds when the slot began holding its version; 0 = unknown, as an
 *                 older library leaves it), 40 reserved
 *
 * Byte-range locks (open-file-description locks, so they are per handle, survive other
 * descriptors closing, and vanish when the process dies):
 *   byte 0  writer lock (exclusive while a write transaction runs)
 *   byte 1  alive lock (shared while a handle is open; whoever gets it exclusive is alone and
 *           resets the table)
 *   byte 2  open lock (exclusive while a handle opens, so resets never race; the handle that
 *           reset the table keeps it until it has recovered the file and published its
 *           version, so nobody opens into a table whose current version is not yet known)
 *
 * A new table is written with pwrite before it is mapped: the file's blocks exist before any
 * store through the map, so a full disk is STRATA_ERR_NO_SPACE at open, never a SIGBUS.
 *
 * Invariants:
 *  - A slot whose pid is not 0 belongs to a live read transaction, or to a dead process; dead
 *    owners are found with kill(pid, 0) == ESRCH and their slots freed.
 *  - A reader stores its version before checking that it is still the current one; a writer
 *    reads the slots after publishing. Both use sequentially consistent atomics, so a writer
 *    either sees the reader's version or the reader sees the newer current version and retries.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "storage/readers.h"


#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_MAGIC "STRATALK"
#define LOCK_FORMAT 1u

typedef struct lock_header {
    char magic[8];
    uint32_t format;
    uint32_t nslots;
    _Atomic uint64_t current;
    _Atomic uint32_t commits;   /* bumped by every publish: a futex word, so that waiters in any
                                   process wake (a lock file of an older library leaves it 0:
                                   its commits wake nobody, a waiter's timeout still ends) */
    _Atomic uint32_t waiters;   /* asleep on commits, or about to be (0 in an older library's file) */
    _Atomic uint64_t attempt;     /* encrypted files: the commit writing sealed bytes (0: none) */
    _Atomic uint64_t renumbered_to, renumbered_from; /* the last renumbering (0: none yet) */
    _Atomic uint64_t publishes;   /* every publish, before the current version moves */
} lock_header;
_Static_assert(sizeof(lock_header) == 64, "lock header is 64 bytes");

typedef struct reader_slot {
    _Atomic uint32_t pid;
    uint32_t reserved0;
    _Atomic uint64_t version;
    _Atomic uint64_t since_ms;
    uint64_t reserved[5];
} reader_slot;
_Static_assert(sizeof(reader_slot) == 64, "reader slot is 64 bytes");

struct st_readers {
    int fd;               /* -1 in memory mode */
    uint8_t *region;
    size_t size;
    bool region_owned;    /* munmap at close (files) */
    lock_header *hdr;
    reader_slot *slots;
    uint32_t nslots;
    bool fresh;           /* this handle reset the table */
    bool opening;         /* this handle holds the open lock (until st_readers_opened) */
    pid_t pid;
};

/* A new table of nslots free slots in region (64 + 64 * nslots bytes). */
static void table_reset(uint8_t *region, size_t size, uint32_t nslots) {
    memset(region, 0, size);
    lock_header *h = (lock_header *)region;
    memcpy(h->magic, LOCK_MAGIC, 8);
    h->format = LOCK_FORMAT;
    h->nslots = nslots;
    reader_slot *s = (reader_slot *)(region + sizeof(lock_header));
    for (uint32_t i = 0; i < nslots; i++) atomic_store(&s[i].version, ST_NO_VERSION);
}

/* Write a new table into the lock file (allocating its blocks: pwrite fails with ENOSPC on a
 * full disk, where a store through a map of a sparse file would raise SIGBUS). */
static int table_write(int fd, size_t size, uint32_t nslots, const char *shown, strata_error *err) {
    uint8_t *buf = malloc(size);
    if (!buf) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory for lock file '%s'", shown);
    table_reset(buf, size, nslots);
    size_t done = 0;
    int rc = STRATA_OK;
    while (done < size) {
        ssize_t k = pwrite(fd, buf + done, size - done, (off_t)done);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) {
            rc = st_err_errno(err, k < 0 ? errno : ENOSPC, "cannot write lock file '%s'", shown);
            break;
        }
        done += (size_t)k;
    }
    free(buf);
    return rc;
}

/* The open lock, waiting up to the open timeout while another handle opens or recovers. */
static int take_open_lock(strata_db_t *db, int fd, const char *shown, strata_error *err) {
    uint32_t limit = db->file.opts.open_timeout_ms;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (long pause_us = 200;; pause_us = pause_us < 20000 ? pause_us * 2 : 20000) {
        int e = st_os_lock_byte(fd, 2, true, false);
        if (e == 0) return STRATA_OK;
        if (e != EAGAIN) return st_err_errno(err, e, "cannot take the open lock of '%s'", shown);
        clock_gettime(CLOCK_MONOTONIC, &now);
        uint64_t waited = (uint64_t)(now.tv_sec - start.tv_sec) * 1000 +
                          (uint64_t)((now.tv_nsec - start.tv_nsec) / 1000000);
        if (waited >= limit)
            return st_err(err, STRATA_ERR_BUSY,
                          "'%s' is being opened or recovered by another handle; still so after "
                          "%u ms (strata_options.open_timeout_ms)", db->file.shown, limit);
        struct timespec ts = {0, pause_us * 1000};
        nanosleep(&ts, NULL);
    }
}

static int open_lock_file(strata_db_t *db, st_readers *r, strata_error *err) {
    char path[4096], shown[ST_SHOWN_PATH + 8];
    st_os_shorten(db->file.path, ".lock", shown, sizeof shown);
    if (snprintf(path, sizeof path, "%s.lock", db->file.path) >= (int)sizeof path)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the path '%s' is too long (%zu bytes)",
                      db->file.shown, strlen(db->file.path));
    r->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (r->fd < 0) return st_err_errno(err, errno, "cannot open lock file '%s'", shown);
    int rc = take_open_lock(db, r->fd, shown, err);
    if (rc) return rc;
    r->opening = true;
    bool alone = st_os_lock_byte(r->fd, 1, true, false) == 0;
    uint32_t nslots = db->file.opts.max_readers;
    struct stat sb;
    if (fstat(r->fd, &sb) != 0) {
        rc = st_err_errno(err, errno, "cannot stat lock file '%s'", shown);
        goto out;
    }
    if (!alone) {
        /* Others have it open: it must be ours and well formed. */
        lock_header h;
        if (sb.st_size < (off_t)sizeof h || pread(r->fd, &h, sizeof h, 0) != (ssize_t)sizeof h ||
            memcmp(h.magic, LOCK_MAGIC, 8) != 0) {
            rc = st_err(err, STRATA_ERR_FORMAT_VERSION,
                        "lock file '%s' is in use but is not a Strata lock file", shown);
            goto out;
        }
        if (h.format != LOCK_FORMAT) {
            rc = st_err(err, STRATA_ERR_FORMAT_VERSION,
                        "lock file '%s' is owned by an incompatible Strata (lock format %u, this "
                        "library uses %u)", shown, h.format, LOCK_FORMAT);
            goto out;
        }
        if (h.nslots == 0 || h.nslots > 65536 ||
            (off_t)(64 + 64 * (uint64_t)h.nslots) > sb.st_size) {
            rc = st_err(err, STRATA_ERR_FORMAT_VERSION,
                        "lock file '%s' has a bad slot count %u", shown, h.nslots);
            goto out;
        }
        nslots = h.nslots;
    }
    r->size = 64 + 64 * (size_t)nslots;
    if (alone && (rc = table_write(r->fd, r->size, nslots, shown, err))) goto out;
    r->region = mmap(NULL, r->size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
    if (r->region == MAP_FAILED) {
        r->region = NULL;
        rc = st_err_errno(err, errno, "cannot map lock file '%s'", shown);
        goto out;
    }
    r->region_owned = true;
    r->fresh = alone;
    int e = st_os_lock_byte(r->fd, 1, false, true); /* shared alive lock (downgrade if exclusive) */
    if (e) rc = st_err_errno(err, e, "cannot take the alive lock of '%s'", shown);
out:
    /* The handle that reset the table keeps the open lock through recovery (st_readers_opened). */
    if (rc || !r->fresh) {
        st_os_unlock_byte(r->fd, 2);
        r->opening = false;
    }
    return rc;
}

int st_readers_exclusive(strata_db_t *db, strata_error *err) {
    st_readers *r = db->readers;
    int e = st_os_lock_byte(r->fd, 2, true, false);
    if (e == EAGAIN)
        return st_err(err, STRATA_ERR_BUSY, "'%s' is being opened by another handle", db->file.shown);
    if (e) return st_err_errno(err, e, "cannot take the open lock of '%s'", db->file.shown);
    e = st_os_lock_byte(r->fd, 1, true, false);
    if (e == 0) return STRATA_OK;
    st_os_unlock_byte(r->fd, 2);
    if (e == EAGAIN)
        return st_err(err, STRATA_ERR_BUSY, "'%s' is open in another handle or process: it can "
                      "be compacted only by its one open handle", db->file.shown);
    return st_err_errno(err, e, "cannot take the alive lock of '%s'", db->file.shown);
}

void st_readers_shared(strata_db_t *db) {
    st_readers *r = db->readers;
    st_os_lock_byte(r->fd, 1, false, true);
    st_os_unlock_byte(r->fd, 2);
}

void st_readers_opened(strata_db_t *db) {
    st_readers *r = db->readers;
    if (r && r->opening) st_os_unlock_byte(r->fd, 2);
    if (r) r->opening = false;
}

int st_readers_open(strata_db_t *db, strata_error *err) {
    st_readers *r = calloc(1, sizeof *r);
    if (!r) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory opening '%s'", db->file.shown);
    r->fd = -1;
    r->pid = getpid();
    db->readers = r;
    int rc;
    if (db->file.mem) {
        r->region = st_os_mem_lock_region(&db->file, &r->size);
        if (memcmp(r->region, LOCK_MAGIC, 8) != 0) {
            table_reset(r->region, r->size, (uint32_t)((r->size - 64) / 64));
            r->fresh = true;
        }
        rc = STRATA_OK;
    } else {
        rc = open_lock_file(db, r, err);
    }
    if (rc == STRATA_OK) {
        r->hdr = (lock_header *)r->region;
        r->slots = (reader_slot *)(r->region + sizeof(lock_header));
        r->nslots = r->hdr->nslots;
    }
    return rc;
}

bool st_readers_fresh(strata_db_t *db) { return db->readers->fresh; }

void st_readers_close(strata_db_t *db) {
    st_readers *r = db->readers;
    if (!r) return;
    if (r->region_owned && r->region) munmap(r->region, r->size);
    if (r->fd >= 0) close(r->fd); /* drops this description's locks */
    free(r);
    db->readers = NULL;
}

uint64_t st_readers_current(strata_db_t *db) { return atomic_load(&db->readers->hdr->current); }

void st_readers_publish(strata_db_t *db, uint64_t version, bool own) {
    lock_header *h = db->readers->hdr;
    if (own) atomic_fetch_add(&db->own_publishes, 1); /* first: see st_readers_note_foreign */
    atomic_fetch_add(&h->publishes, 1);
    atomic_store(&h->current, version);
    atomic_fetch_add(&h->commits, 1);
    /* Not FUTEX_PRIVATE: waiters in other processes map the same lock file. A waiter counts
     * itself before it sleeps on the counter (it sleeps only while the counter holds what it
     * read): either this load sees it, or its sleep sees the counter moved (both atomics
     * sequentially consistent). */
    if (atomic_load(&h->waiters)) syscall(SYS_futex, &h->commits, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

void st_readers_baseline(strata_db_t *db) {
    db->publishes_base = atomic_load(&db->readers->hdr->publishes) - atomic_load(&db->own_publishes);
}

void st_readers_note_foreign(strata_db_t *db) {
    if (atomic_load_explicit(&db->foreign_writes, memory_order_relaxed)) return;
    /* own publishes are counted before the file's: more here than both is someone else's */
    if (atomic_load(&db->readers->hdr->publishes) > db->publishes_base + atomic_load(&db->own_publishes))
        atomic_store(&db->foreign_writes, true);
}

void st_readers_attempt(strata_db_t *db, uint64_t version) {
    atomic_store(&db->readers->hdr->attempt, version);
}

uint64_t st_readers_attempted(strata_db_t *db) { return atomic_load(&db->readers->hdr->attempt); }

bool st_readers_must_renumber(strata_db_t *db) {
    lock_header *h = db->readers->hdr;
    return atomic_load(&h->renumbered_to) == 0 || atomic_load(&h->attempt) != 0;
}

void st_readers_renumbered(strata_db_t *db, uint64_t from, uint64_t to) {
    lock_header *h = db->readers->hdr;
    atomic_store(&h->renumbered_from, from);
    atomic_store(&h->renumbered_to, to);
    atomic_store(&h->attempt, 0);
}

bool st_readers_gap(strata_db_t *db, uint64_t *from, uint64_t *to) {
    lock_header *h = db->readers->hdr;
    *from = atomic_load(&h->renumbered_from);
    *to = atomic_load(&h->renumbered_to);
    return *to != 0;
}

void st_readers_stop_waits(strata_db_t *db) {
    lock_header *h = db->readers->hdr;
    atomic_store(&db->waits_stopped, true);
    /* move the word so that a waiter about to sleep on its old value does not, and wake those
     * asleep (waiters of other processes wake too, find no commit and sleep again) */
    atomic_fetch_add(&h->commits, 1);
    syscall(SYS_futex, &h->commits, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

int st_readers_wait(strata_db_t *db, uint64_t after, uint32_t timeout_ms, uint64_t *version,
                    strata_error *err) {
    lock_header *h = db->readers->hdr;
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        uint32_t seq = atomic_load(&h->commits);
        uint64_t cur = atomic_load(&h->current);
        if (cur > after) {
            *version = cur;
            return STRATA_OK;
        }
        if (atomic_load(&db->waits_stopped)) {
            *version = cur;
            return st_err(err, STRATA_ERR_TIMEOUT, "waits for commits to '%s' were stopped (strata_db_stop_waits)",
                          db->file.shown);
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        int64_t left_ns = (int64_t)timeout_ms * 1000000 - ((int64_t)(now.tv_sec - start.tv_sec) * 1000000000 +
                                                            (now.tv_nsec - start.tv_nsec));
        if (left_ns <= 0) {
            *version = cur;
            return st_err(err, STRATA_ERR_TIMEOUT, "no commit to '%s' after version %llu within %u ms",
                          db->file.shown, (unsigned long long)after, timeout_ms);
        }
        /* A commit by a library that does not bump the word is seen at the next wake-up: wait
         * at most 100 ms at a time. */
        if (left_ns > 100000000) left_ns = 100000000;
        struct timespec ts = {left_ns / 1000000000, left_ns % 1000000000};
        atomic_fetch_add(&h->waiters, 1);
        syscall(SYS_futex, &h->commits, FUTEX_WAIT, seq, &ts, NULL, 0);
        atomic_fetch_sub(&h->waiters, 1);
    }
}

static bool owner_dead(st_readers *r, uint32_t pid) {
    if (pid == 0 || (pid_t)pid == r->pid) return false;
    return kill((pid_t)pid, 0) != 0 && errno == ESRCH;
}

static void reap_slot(st_readers *r, uint32_t i, uint32_t pid) {
    atomic_store(&r->slots[i].version, ST_NO_VERSION);
    uint32_t expect = pid;
    atomic_compare_exchange_strong(&r->slots[i].pid, &expect, 0);
}

int st_readers_acquire(strata_db_t *db, int *slot, strata_error *err) {
    st_readers *r = db->readers;
    for (int pass = 0; pass < 2; pass++) {
        for (uint32_t i = 0; i < r->nslots; i++) {
            uint32_t expect = 0;
            if (atomic_load(&r->slots[i].pid) == 0 &&
                atomic_compare_exchange_strong(&r->slots[i].pid, &expect, (uint32_t)r->pid)) {
                atomic_store(&r->slots[i].version, ST_NO_VERSION);
                *slot = (int)i;
                return STRATA_OK;
            }
        }
        /* Full: free the slots of dead processes and try once more. */
        for (uint32_t i = 0; i < r->nslots; i++) {
            uint32_t pid = atomic_load(&r->slots[i].pid);
            if (owner_dead(r, pid)) reap_slot(r, i, pid);
        }
    }
    return st_err(err, STRATA_ERR_READERS_FULL,
                  "all %u reader slots of '%s.lock' are held by live read transactions",
                  r->nslots, db->file.shown);
}

/* Wall-clock milliseconds from the coarse clock (a few ns: read transactions begin often). */
static uint64_t now_ms(void) {
    struct timespec ts;
    if (clock_gettime(CLOCK_REALTIME_COARSE, &ts) != 0) return 0;
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

void st_readers_hold(strata_db_t *db, int slot, uint64_t version) {
    reader_slot *s = &db->readers->slots[slot];
    if (atomic_load_explicit(&s->version, memory_order_relaxed) != version)
        atomic_store_explicit(&s->since_ms, now_ms(), memory_order_relaxed);
    atomic_store(&s->version, version);
}

void st_readers_release(strata_db_t *db, int slot) {
    st_readers *r = db->readers;
    atomic_store(&r->slots[slot].version, ST_NO_VERSION);
    atomic_store(&r->slots[slot].pid, 0);
}

uint64_t st_readers_oldest(strata_db_t *db, uint64_t latest, uint32_t *live) {
    st_readers *r = db->readers;
    uint64_t oldest = latest;
    uint32_t n = 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        uint32_t pid = atomic_load(&r->slots[i].pid);
        if (pid == 0) continue;
        if (owner_dead(r, pid)) {
            reap_slot(r, i, pid);
            continue;
        }
        n++;
        uint64_t v = atomic_load(&r->slots[i].version);
        if (v < oldest) oldest = v;
    }
    if (live) *live = n;
    return oldest;
}

static int cmp_u64(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

size_t st_readers_slots(strata_db_t *db, strata_reader *out, size_t cap) {
    st_readers *r = db->readers;
    size_t n = 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        uint32_t pid = atomic_load(&r->slots[i].pid);
        if (pid == 0) continue;
        if (n < cap) {
            out[n] = (strata_reader){.slot = i, .pid = pid,
                                     .version = atomic_load(&r->slots[i].version),
                                     .since_ms = (int64_t)atomic_load(&r->slots[i].since_ms),
                                     .alive = !owner_dead(r, pid)};
        }
        n++;
    }
    return n;
}

size_t st_readers_clear_stale(strata_db_t *db) {
    st_readers *r = db->readers;
    size_t cleared = 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        uint32_t pid = atomic_load(&r->slots[i].pid);
        if (owner_dead(r, pid)) {
            reap_slot(r, i, pid);
            cleared++;
        }
    }
    return cleared;
}

size_t st_readers_list(strata_db_t *db, uint64_t *versions, size_t cap) {
    st_readers *r = db->readers;
    uint64_t *all = malloc(sizeof(uint64_t) * (r->nslots ? r->nslots : 1));
    if (!all) return 0;
    size_t n = 0;
    for (uint32_t i = 0; i < r->nslots; i++) {
        uint32_t pid = atomic_load(&r->slots[i].pid);
        if (pid == 0 || owner_dead(r, pid)) continue;
        uint64_t v = atomic_load(&r->slots[i].version);
        if (v != ST_NO_VERSION) all[n++] = v;
    }
    qsort(all, n, sizeof *all, cmp_u64);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && all[i] == all[i - 1]) continue;
        if (distinct < cap) versions[distinct] = all[i];
        distinct++;
    }
    free(all);
    return distinct;
}

int st_readers_writer_lock(strata_db_t *db, bool wait, strata_error *err) {
    st_readers *r = db->readers;
    if (r->fd < 0) return STRATA_OK; /* memory mode: the store's mutex is enough */
    int e = st_os_lock_byte(r->fd, 0, true, wait);
    if (e == EAGAIN)
        return st_err(err, STRATA_ERR_BUSY, "another writer holds '%s'", db->file.shown);
    if (e) return st_err_errno(err, e, "cannot take the writer lock of '%s.lock'", db->file.shown);
    return STRATA_OK;
}

void st_readers_writer_unlock(strata_db_t *db) {
    if (db->readers->fd >= 0) st_os_unlock_byte(db->readers->fd, 0);
}
