/*
 * os.c — files, the map, locks and in-memory stores.
 *
 * The map: one range of opts.map_size bytes is reserved once (PROT_READ, MAP_SHARED over the
 * file). The file grows underneath it in chunks; the mapping never moves, so readers keep raw
 * pointers while writers grow the file. Pages past the end of the file are never touched: every
 * page number is checked against the meta's page_count, and page_count * page size never
 * exceeds the file size (checked at open).
 *
 * Writes never go through the map: they use the I/O table (pwrite, fdatasync, grow), which tests
 * replace to inject faults or to simulate power loss. A read-only map protects committed pages
 * from stray writes. With the default table, a log record's synced write can be begun through
 * io_uring (liburing) and waited for later: the commit writes its pages meanwhile.
 *
 * Memory mode: a store is an anonymous read-write range plus a reader table, registered by
 * identifier; handles opened with the same identifier share it; the last close frees it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "os/os.h"

#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------ default I/O table */

static ssize_t io_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off) {
    (void)ctx;
    return pwrite(fd, buf, len, off);
}

static int io_fdatasync(void *ctx, int fd) {
    (void)ctx;
    return fdatasync(fd);
}

static int io_grow(void *ctx, int fd, off_t new_size) {
    (void)ctx;
    struct stat sb;
    if (fstat(fd, &sb) != 0) return -1;
    if (sb.st_size >= new_size) return 0;
    /* fallocate reserves the blocks now, so a full disk is reported here and not later when
     * the kernel writes back a dirty page of the map. */
    if (fallocate(fd, 0, sb.st_size, new_size - sb.st_size) == 0) return 0;
    if (errno != EOPNOTSUPP && errno != ENOSYS) return -1;
    return ftruncate(fd, new_size);
}

static const strata_io_methods default_io = {
    .size = sizeof(strata_io_methods),
    .ctx = NULL,
    .pwrite = io_pwrite,
    .fdatasync = io_fdatasync,
    .grow = io_grow,
};

const strata_io_methods *strata_io_default(void) { return &default_io; }

/* ------------------------------------------------------------------ memory stores */

struct st_memstore {
    char *id;
    uint8_t *map;
    uint64_t map_size;
    uint8_t *lock_region;
    size_t lock_size;
    int refs;
    pthread_mutex_t writer;
    pthread_mutex_t meta;
    st_memstore *next;
};

static pthread_mutex_t mem_registry_mutex = PTHREAD_MUTEX_INITIALIZER;
static st_memstore *mem_registry;

static int mem_attach(st_file *f, bool *created, strata_error *err) {
    pthread_mutex_lock(&mem_registry_mutex);
    st_memstore *m = mem_registry;
    while (m && strcmp(m->id, f->path) != 0) m = m->next;
    if (m) {
        m->refs++;
        *created = false;
    } else {
        m = calloc(1, sizeof *m);
        if (!m) goto nomem;
        m->id = strdup(f->path);
        m->map_size = f->map_size;
        m->map = mmap(NULL, m->map_size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        m->lock_size = 64 + 64 * (size_t)f->opts.max_readers;
        m->lock_region = mmap(NULL, m->lock_size, PROT_READ | PROT_WRITE,
                              MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (!m->id || m->map == MAP_FAILED || m->lock_region == MAP_FAILED) {
            if (m->map != MAP_FAILED && m->map) munmap(m->map, m->map_size);
            if (m->lock_region != MAP_FAILED && m->lock_region) munmap(m->lock_region, m->lock_size);
            free(m->id);
            free(m);
            goto nomem;
        }
        pthread_mutex_init(&m->writer, NULL);
        pthread_mutex_init(&m->meta, NULL);
        m->refs = 1;
        m->next = mem_registry;
        mem_registry = m;
        *created = true;
    }
    pthread_mutex_unlock(&mem_registry_mutex);
    f->mem = m;
    f->map = m->map;
    f->map_size = m->map_size;
    atomic_store(&f->file_size, m->map_size);
    return STRATA_OK;
nomem:
    pthread_mutex_unlock(&mem_registry_mutex);
    return st_err(err, STRATA_ERR_NO_MEMORY, "in-memory database '%s': cannot reserve %llu bytes",
                  f->shown, (unsigned long long)f->map_size);
}

static void mem_detach(st_file *f) {
    st_memstore *m = f->mem;
    if (!m) return;
    pthread_mutex_lock(&mem_registry_mutex);
    if (--m->refs == 0) {
        st_memstore **pp = &mem_registry;
        while (*pp != m) pp = &(*pp)->next;
        *pp = m->next;
        munmap(m->map, m->map_size);
        munmap(m->lock_region, m->lock_size);
        pthread_mutex_destroy(&m->writer);
        pthread_mutex_destroy(&m->meta);
        free(m->id);
        free(m);
    }
    pthread_mutex_unlock(&mem_registry_mutex);
    f->mem = NULL;
    f->map = NULL;
}

void st_os_meta_lock(st_file *f) {
    if (f->mem) pthread_mutex_lock(&f->mem->meta);
}

void st_os_meta_unlock(st_file *f) {
    if (f->mem) pthread_mutex_unlock(&f->mem->meta);
}

pthread_mutex_t *st_os_mem_writer_mutex(st_file *f) {
    return f->mem ? &f->mem->writer : NULL;
}

uint8_t *st_os_mem_lock_region(st_file *f, size_t *size) {
    *size = f->mem->lock_size;
    return f->mem->lock_region;
}

/* ------------------------------------------------------------------ files */

static int map_file(st_file *f, strata_error *err) {
    struct stat sb;
    if (fstat(f->fd, &sb) != 0) return st_err_errno(err, errno, "cannot stat '%s'", f->shown);
    if (!S_ISREG(sb.st_mode))
        return st_err(err, STRATA_ERR_NOT_STRATA, "'%s' is not a regular file", f->shown);
    atomic_store(&f->file_size, (uint64_t)sb.st_size);
    f->map = mmap(NULL, f->map_size, PROT_READ, MAP_SHARED, f->fd, 0);
    if (f->map == MAP_FAILED) {
        f->map = NULL;
        return st_err_errno(err, errno, "cannot map %llu bytes of '%s'",
                            (unsigned long long)f->map_size, f->shown);
    }
    return STRATA_OK;
}

int st_os_open(st_file *f, bool *missing, strata_error *err) {
    *missing = false;
    if (f->opts.durability == STRATA_DURABILITY_MEMORY) return mem_attach(f, missing, err);
    bool may_create = f->opts.create && !f->opts.read_only;
    f->fd = open(f->path, (f->opts.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (f->fd < 0) {
        if (errno == ENOENT && may_create) {
            *missing = true;
            return STRATA_OK;
        }
        if (errno == ENOENT)
            return st_err(err, STRATA_ERR_NOT_FOUND, "database file '%s' does not exist", f->shown);
        return st_err_errno(err, errno, "cannot open database file '%s'", f->shown);
    }
    struct stat sb;
    if (fstat(f->fd, &sb) != 0) return st_err_errno(err, errno, "cannot stat '%s'", f->shown);
    if (S_ISREG(sb.st_mode) && sb.st_size == 0) {
        if (!may_create)
            return st_err(err, STRATA_ERR_NOT_STRATA, "'%s' is empty", f->shown);
        close(f->fd);
        f->fd = -1;
        *missing = true;
        f->found_empty = true;
        return STRATA_OK;
    }
    return map_file(f, err);
}

static void creating_path(const st_file *f, char *buf, size_t len) {
    snprintf(buf, len, "%s.creating", f->path);
}

int st_os_create_begin(st_file *f, strata_error *err) {
    if (f->mem) return STRATA_OK;
    char tmp[4200];
    creating_path(f, tmp, sizeof tmp);
    f->fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (f->fd < 0) return st_err_errno(err, errno, "cannot create '%s.creating'", f->shown);
    atomic_store(&f->file_size, 0);
    return STRATA_OK;
}

/* Make a new name in path's directory durable. */
static void sync_parent_dir(const char *path) {
    char dir[4200];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (slash == dir) slash[1] = 0;
    else if (slash) *slash = 0;
    else snprintf(dir, sizeof dir, ".");
    int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
}

int st_os_create_commit(st_file *f, strata_error *err) {
    if (f->mem) return STRATA_OK;
    char tmp[4200];
    creating_path(f, tmp, sizeof tmp);
    if (rename(tmp, f->path) != 0)
        return st_err_errno(err, errno, "cannot rename the new file into place as '%s'", f->shown);
    sync_parent_dir(f->path);
    return map_file(f, err);
}

int st_os_newfile_begin(const char *dest, const char *suffix, st_newfile *nf, strata_error *err) {
    memset(nf, 0, sizeof *nf);
    nf->fd = -1;
    st_os_shorten(dest, "", nf->shown, sizeof nf->shown);
    if (snprintf(nf->dest, sizeof nf->dest, "%s", dest) >= (int)sizeof nf->dest ||
        snprintf(nf->tmp, sizeof nf->tmp, "%s%s", dest, suffix) >= (int)sizeof nf->tmp)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the path '%s' is too long", nf->shown);
    nf->fd = open(nf->tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (nf->fd < 0) return st_err_errno(err, errno, "cannot create '%s%s'", nf->shown, suffix);
    return STRATA_OK;
}

void st_os_newfile_abandon(st_newfile *nf) {
    if (nf->fd >= 0) {
        close(nf->fd);
        unlink(nf->tmp);
    }
    nf->fd = -1;
}

int st_os_newfile_commit(st_file *f, st_newfile *nf, bool replace, strata_error *err) {
    int rc = st_os_sync_fd(f, nf->fd, nf->shown, err);
    if (rc) return rc;
    if (replace) {
        if (rename(nf->tmp, nf->dest) != 0)
            return st_err_errno(err, errno, "cannot rename the new file into place as '%s'",
                                nf->shown);
    } else if (renameat2(AT_FDCWD, nf->tmp, AT_FDCWD, nf->dest, RENAME_NOREPLACE) != 0) {
        if (errno == EEXIST)
            return st_err(err, STRATA_ERR_EXISTS, "'%s' exists: a copy is never written over a file",
                          nf->shown);
        /* File systems without RENAME_NOREPLACE: a hard link fails the same way on a name. */
        if (errno != EINVAL && errno != ENOSYS)
            return st_err_errno(err, errno, "cannot rename the new file into place as '%s'", nf->shown);
        if (link(nf->tmp, nf->dest) != 0)
            return errno == EEXIST
                       ? st_err(err, STRATA_ERR_EXISTS,
                                "'%s' exists: a copy is never written over a file", nf->shown)
                       : st_err_errno(err, errno, "cannot link the new file into place as '%s'",
                                      nf->shown);
        unlink(nf->tmp);
    }
    sync_parent_dir(nf->dest);
    close(nf->fd);
    nf->fd = -1;
    return STRATA_OK;
}

int st_os_reopen(st_file *f, strata_error *err) {
    st_os_close(f);
    bool missing;
    int rc = st_os_open(f, &missing, err);
    if (rc == STRATA_OK && missing)
        rc = st_err(err, STRATA_ERR_NOT_FOUND, "'%s' vanished while it was replaced", f->shown);
    if (rc) st_os_close(f);
    return rc;
}

/* ------------------------------------------------------------------ the log's ring */

/* A log record's write begun before the commit writes its pages, waited for after, then the
 * log synced: the device takes the record while the pages go into the page cache. The write is
 * a plain direct one: with RWF_DSYNC the kernel finishes it (the flush) on a worker thread, which
 * on a busy machine waits for a processor — measured on the test machine (an 8 KiB record, 12
 * pages by pwritev into the file; idle / beside 4 busy loops): one after the other with RWF_DSYNC
 * 75 / 114 us a commit; begun with RWF_DSYNC 54 / 328 us; begun plain, then fdatasync 60 / 90 us.
 * One ring per handle, two entries; a writer uses it inside its commit. */
struct st_log_ring {
    struct io_uring ring;
    bool usable;        /* set up; false: this handle writes records plainly */
    pid_t pid;          /* the process that set it up (a forked child makes its own) */
    bool pending;       /* a write was submitted and its completion not yet taken */
    uint64_t off;       /* what it writes */
    const void *buf;
    size_t len;
};

static void log_ring_close(st_file *f) {
    struct st_log_ring *r = f->log_ring;
    if (!r) return;
    if (r->usable && r->pid == getpid()) {
        if (r->pending) { /* (a commit always waits: only a failed close path gets here) */
            struct io_uring_cqe *cqe;
            while (io_uring_wait_cqe(&r->ring, &cqe) == -EINTR) {}
        }
        io_uring_queue_exit(&r->ring);
    }
    free(r);
    f->log_ring = NULL;
}

bool st_os_log_write_begin(st_file *f, uint64_t off, const void *buf, size_t len) {
    if (!f->log_direct || f->io.pwrite != io_pwrite || f->log_fd < 0 || len > UINT32_MAX)
        return false;
    struct st_log_ring *r = f->log_ring;
    if (r && r->pid != getpid()) { /* the parent's ring, shared since a fork: left to it */
        free(r);
        r = f->log_ring = NULL;
    }
    if (!r) {
        if (!(r = f->log_ring = calloc(1, sizeof *r))) return false;
        r->usable = io_uring_queue_init(2, &r->ring, 0) == 0;
        r->pid = getpid();
    }
    if (!r->usable || r->pending) return false;
    struct io_uring_sqe *sqe = io_uring_get_sqe(&r->ring);
    if (!sqe) return false;
    io_uring_prep_write(sqe, f->log_fd, buf, (unsigned)len, off);
    if (io_uring_submit(&r->ring) != 1) { /* not queued: the plain way, from now on */
        io_uring_queue_exit(&r->ring);
        r->usable = false;
        return false;
    }
    r->pending = true;
    r->off = off;
    r->buf = buf;
    r->len = len;
    return true;
}

/* Wait for the begun write; true when it wrote exactly these blocks, whole (not synced yet). */
static bool log_ring_finish(st_file *f, uint64_t off, const void *buf, size_t len) {
    struct st_log_ring *r = f->log_ring;
    if (!r || !r->pending) return false;
    struct io_uring_cqe *cqe;
    int e;
    while ((e = io_uring_wait_cqe(&r->ring, &cqe)) == -EINTR) {}
    r->pending = false;
    if (e) { /* the ring itself failed: written plainly, from now on */
        io_uring_queue_exit(&r->ring);
        r->usable = false;
        return false;
    }
    int res = cqe->res;
    io_uring_cqe_seen(&r->ring, cqe);
    /* short, failed or refused (a device that will not take it direct): the blocks are written
     * again the plain way, which reports what fails */
    return res >= 0 && (size_t)res == len && r->off == off && r->buf == buf && r->len == len;
}

void st_os_close(st_file *f) {
    if (f->mem) {
        mem_detach(f);
        return;
    }
    if (f->map) munmap(f->map, f->map_size);
    f->map = NULL;
    if (f->fd >= 0) close(f->fd);
    f->fd = -1;
    if (f->log_cached_fd >= 0 && f->log_cached_fd != f->log_fd) close(f->log_cached_fd);
    f->log_cached_fd = -1;
    log_ring_close(f);
    if (f->log_fd >= 0) close(f->log_fd);
    f->log_fd = -1;
}

void st_os_log_path(const st_file *f, char *buf, size_t len) {
    snprintf(buf, len, "%s.log", f->path);
}

void *st_os_reserve(size_t bytes) {
    void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

void st_os_unreserve(void *p, size_t bytes) {
    if (p) munmap(p, bytes);
}

void st_os_log_shown(const st_file *f, char *buf, size_t len) {
    st_os_shorten(f->path, ".log", buf, len);
}

void st_os_shorten(const char *path, const char *suffix, char *out, size_t cap) {
    size_t n = strlen(path), s = strlen(suffix);
    if (n + s < cap) {
        snprintf(out, cap, "%s%s", path, suffix);
        return;
    }
    size_t keep = cap - s - 4; /* "..." + the end of the path + suffix + NUL */
    const char *tail = path + n - keep;
    while ((*tail & 0xC0) == 0x80) tail++; /* not inside a character */
    snprintf(out, cap, "...%s%s", tail, suffix);
}

bool st_os_set_path(st_file *f, const char *path) {
    if (!(f->path = strdup(path))) return false;
    st_os_shorten(path, "", f->shown, sizeof f->shown);
    return true;
}

/* A writable log written through the default I/O table bypasses the page cache (O_DIRECT): its
 * records then go to the device in the write and the sync only flushes the device's cache
 * (about 10% faster per commit). Records synced later (group commit) are written through the
 * page cache instead (st_os_log_write_fd): a direct write waits for the device, ~80 us here,
 * which made an unsynced commit cost 110 us where it costs 20-30 us through the cache. Every
 * log access is in whole ST_LOG_BLOCKs at aligned offsets from aligned buffers either way
 * (commitlog.c), so a file system without direct I/O keeps the page cache, and a custom I/O
 * table sees the same writes. */
static void log_direct(st_file *f) {
    f->log_direct = false;
    if (f->opts.read_only || f->io.pwrite != io_pwrite) return;
    int fl = fcntl(f->log_fd, F_GETFL);
    f->log_direct = fl >= 0 && fcntl(f->log_fd, F_SETFL, fl | O_DIRECT) == 0;
}

int st_os_open_log(st_file *f, uint64_t min_size, uint64_t create_size, strata_error *err) {
    if (f->log_fd >= 0) return STRATA_OK;
    char path[4200], tmp[4220], shown[ST_SHOWN_PATH + 16];
    st_os_log_path(f, path, sizeof path);
    st_os_log_shown(f, shown, sizeof shown);
    f->log_fd = open(path, (f->opts.read_only ? O_RDONLY : O_RDWR) | O_CLOEXEC);
    if (f->log_fd >= 0) {
        struct stat sb;
        if (fstat(f->log_fd, &sb) == 0 && (uint64_t)sb.st_size >= min_size) {
            f->log_bytes = (uint64_t)sb.st_size;
            log_direct(f);
            return STRATA_OK;
        }
        /* Shorter than a log: not one this library made (a log is renamed into place only
         * when complete). Nothing to replay; a writer makes a new one. */
        close(f->log_fd);
        f->log_fd = -1;
    } else if (errno != ENOENT) {
        return st_err_errno(err, errno, "cannot open the commit log '%s'", shown);
    }
    if (!create_size) return STRATA_OK;
    /* Written in full (zeros) before use, so that appending a record later changes no file
     * metadata and its sync writes only the record; renamed into place once synced. */
    snprintf(tmp, sizeof tmp, "%s.creating", path);
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return st_err_errno(err, errno, "cannot create the commit log '%s'", shown);
    int rc = STRATA_OK;
    /* The blocks first: a full disk says so at once, not after megabytes of zeros. */
    int e = posix_fallocate(fd, 0, (off_t)create_size);
    if (e && e != EOPNOTSUPP && e != EINVAL)
        rc = st_err_errno(err, e, "cannot make the commit log '%s' (%llu bytes)", shown,
                          (unsigned long long)create_size);
    uint8_t *zeros = rc ? NULL : calloc(1, 1u << 16);
    if (!zeros && !rc) rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory creating '%s'", shown);
    for (uint64_t off = 0; off < create_size && rc == STRATA_OK; off += 1u << 16) {
        size_t n = create_size - off < (1u << 16) ? (size_t)(create_size - off) : 1u << 16;
        rc = st_os_write_fd(f, fd, shown, off, zeros, n, err);
    }
    free(zeros);
    if (rc == STRATA_OK) rc = st_os_sync_fd(f, fd, shown, err);
    if (rc == STRATA_OK && rename(tmp, path) != 0)
        rc = st_err_errno(err, errno, "cannot rename the new commit log into place as '%s'", shown);
    if (rc) {
        close(fd);
        unlink(tmp);
        return rc;
    }
    sync_parent_dir(path);
    f->log_fd = fd;
    f->log_bytes = create_size;
    log_direct(f);
    return STRATA_OK;
}

int st_os_log_write_fd(st_file *f, bool deferred) {
    if (!deferred || !f->log_direct) return f->log_fd;
    if (f->log_cached_fd < 0) {
        /* The same file (not the path, which another handle may have renamed a new log onto),
         * opened anew without O_DIRECT. Mixing the two is coherent: a direct write or read of
         * a range first writes back its dirty cached pages, and a sync of either descriptor
         * flushes the file. Where /proc is missing, records go direct. */
        char proc[64];
        snprintf(proc, sizeof proc, "/proc/self/fd/%d", f->log_fd);
        f->log_cached_fd = open(proc, O_RDWR | O_CLOEXEC);
        if (f->log_cached_fd < 0) f->log_cached_fd = f->log_fd;
    }
    return f->log_cached_fd;
}

int st_os_log_write_synced(st_file *f, const char *name, uint64_t off, const void *buf, size_t len,
                           bool *synced, strata_error *err) {
    *synced = false;
    if (log_ring_finish(f, off, buf, len)) { /* written; the caller syncs */
        f->log_ring_writes++;
        return STRATA_OK;
    }
#ifdef RWF_DSYNC
    if (f->log_direct && f->io.pwrite == io_pwrite) {
        const uint8_t *p = buf;
        size_t done = 0;
        while (done < len) {
            struct iovec v = {(void *)(p + done), len - done};
            ssize_t n = pwritev2(f->log_fd, &v, 1, (off_t)(off + done), RWF_DSYNC);
            if (n > 0) {
                done += (size_t)n;
                continue;
            }
            if (n < 0 && errno == EINTR) continue;
            /* A kernel without per-write flags (before 4.7), or a refused direct write: the
             * plain way (which turns direct I/O off on EINVAL), then the caller's sync. */
            if (n < 0 && done == 0 && (errno == EOPNOTSUPP || errno == ENOSYS || errno == EINVAL)) break;
            if (n == 0) return st_err(err, STRATA_ERR_IO, "write to '%s' made no progress", name);
            return st_err_errno(err, errno, "synced write of %zu bytes at offset %llu of '%s' failed",
                                len - done, (unsigned long long)(off + done), name);
        }
        if (done == len) {
            *synced = true;
            f->log_synced_writes++;
            return STRATA_OK;
        }
    }
#endif
    return st_os_write_fd(f, f->log_fd, name, off, buf, len, err);
}

int st_os_write(st_file *f, uint64_t off, const void *buf, size_t len, strata_error *err) {
    if (off + len > f->map_size)
        return st_err(err, STRATA_ERR_MAP_FULL, "write at %llu past the map size %llu of '%s'",
                      (unsigned long long)off, (unsigned long long)f->map_size, f->shown);
    if (f->mem) {
        memcpy(f->map + off, buf, len);
        return STRATA_OK;
    }
    return st_os_write_fd(f, f->fd, f->shown, off, buf, len, err);
}

int st_os_write_gather(st_file *f, uint64_t off, const struct iovec *iov, int n,
                       strata_error *err) {
    size_t len = 0;
    for (int i = 0; i < n; i++) len += iov[i].iov_len;
    if (off + len > f->map_size)
        return st_err(err, STRATA_ERR_MAP_FULL, "write at %llu past the map size %llu of '%s'",
                      (unsigned long long)off, (unsigned long long)f->map_size, f->shown);
    if (f->mem) { /* copied into the store */
        for (int i = 0; i < n; off += iov[i++].iov_len)
            memcpy(f->map + off, iov[i].iov_base, iov[i].iov_len);
        return STRATA_OK;
    }
    if (f->io.pwrite != io_pwrite) { /* through one buffer */
        uint8_t *buf = malloc(len ? len : 1);
        if (!buf) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory writing '%s'", f->shown);
        size_t at = 0;
        for (int i = 0; i < n; i++) {
            memcpy(buf + at, iov[i].iov_base, iov[i].iov_len);
            at += iov[i].iov_len;
        }
        int rc = st_os_write(f, off, buf, len, err);
        free(buf);
        return rc;
    }
    ssize_t k;
    do k = pwritev(f->fd, iov, n, (off_t)off);
    while (k < 0 && errno == EINTR);
    if (k < 0)
        return st_err_errno(err, errno, "write of %zu bytes at offset %llu of '%s' failed", len,
                            (unsigned long long)off, f->shown);
    for (int i = 0; i < n; i++) { /* a short write (rare): the rest buffer by buffer */
        size_t l = iov[i].iov_len, done = (size_t)k < l ? (size_t)k : l;
        k -= (ssize_t)done;
        int rc = done == l ? STRATA_OK
                           : st_os_write(f, off + done, (const uint8_t *)iov[i].iov_base + done,
                                         l - done, err);
        if (rc) return rc;
        off += l;
    }
    return STRATA_OK;
}

int st_os_write_fd(st_file *f, int fd, const char *name, uint64_t off, const void *buf,
                   size_t len, strata_error *err) {
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = f->io.pwrite(f->io.ctx, fd, p, len, (off_t)off);
        if (n < 0) {
            if (errno == EINTR) continue;
            if (errno == EINVAL && fd == f->log_fd && f->log_direct) {
                /* a device whose blocks are larger than the log's: through the page cache */
                int fl = fcntl(fd, F_GETFL);
                if (fl >= 0 && fcntl(fd, F_SETFL, fl & ~O_DIRECT) == 0) {
                    f->log_direct = false;
                    continue;
                }
            }
            return st_err_errno(err, errno, "write of %zu bytes at offset %llu of '%s' failed",
                                len, (unsigned long long)off, name);
        }
        if (n == 0) return st_err(err, STRATA_ERR_IO, "write to '%s' made no progress", name);
        p += n;
        off += (uint64_t)n;
        len -= (size_t)n;
    }
    return STRATA_OK;
}

int st_os_sync(st_file *f, strata_error *err) {
    if (f->mem) return STRATA_OK;
    return st_os_sync_fd(f, f->fd, f->shown, err);
}

int st_os_sync_fd(st_file *f, int fd, const char *name, strata_error *err) {
    for (;;) {
        if (f->io.fdatasync(f->io.ctx, fd) == 0) return STRATA_OK;
        if (errno != EINTR) return st_err_errno(err, errno, "fdatasync of '%s' failed", name);
    }
}

int st_os_ensure_size(st_file *f, uint64_t needed, strata_error *err) {
    return st_os_ensure_room(f, needed, 0, err);
}

void st_os_shrink(st_file *f, uint64_t size) {
    if (f->mem || size >= atomic_load(&f->file_size)) return;
    if (ftruncate(f->fd, (off_t)size) == 0) atomic_store(&f->file_size, size);
}

int st_os_ensure_room(st_file *f, uint64_t needed, uint64_t headroom, strata_error *err) {
    if (needed > f->map_size)
        return st_err(err, STRATA_ERR_MAP_FULL,
                      "'%s' needs %llu bytes but map_size is %llu; reopen with a larger map_size",
                      f->shown, (unsigned long long)needed, (unsigned long long)f->map_size);
    uint64_t have = atomic_load(&f->file_size);
    if (f->mem || needed + headroom <= have) return STRATA_OK;
    /* Grow by an eighth of the file (at least the headroom, 1 MiB, at most 256 MiB), in whole
     * MiB: the headroom is taken from the chunk, so it costs no extra space. */
    uint64_t chunk = have / 8;
    if (chunk < (1u << 20)) chunk = 1u << 20;
    if (chunk > (256u << 20)) chunk = 256u << 20;
    if (chunk < headroom) chunk = headroom;
    uint64_t target = needed + chunk;
    target = (target + (1u << 20) - 1) & ~(uint64_t)((1u << 20) - 1);
    uint64_t least = needed + headroom < f->map_size ? needed + headroom : needed;
    if (target > f->map_size) target = least;
    for (;;) {
        if (f->io.grow(f->io.ctx, f->fd, (off_t)target) == 0) break;
        if (errno == EINTR) continue;
        int e = errno;
        if (target > least && (e == ENOSPC || e == EDQUOT)) { /* the bare minimum may fit */
            target = least;
            if (f->io.grow(f->io.ctx, f->fd, (off_t)target) == 0) break;
            e = errno;
        }
        return st_err_errno(err, e, "cannot grow '%s' to %llu bytes", f->shown,
                            (unsigned long long)target);
    }
    atomic_store(&f->file_size, target);
    return STRATA_OK;
}

/* ------------------------------------------------------------------ locks */

int st_os_lock_byte(int fd, off_t byte, bool exclusive, bool wait) {
    struct flock fl = {.l_type = exclusive ? F_WRLCK : F_RDLCK, .l_whence = SEEK_SET,
                       .l_start = byte, .l_len = 1, .l_pid = 0};
    for (;;) {
        if (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) == 0) return 0;
        if (errno == EINTR) continue;
        return (errno == EACCES) ? EAGAIN : errno;
    }
}

int st_os_unlock_byte(int fd, off_t byte) {
    struct flock fl = {.l_type = F_UNLCK, .l_whence = SEEK_SET, .l_start = byte, .l_len = 1,
                       .l_pid = 0};
    return fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 0 : errno;
}
