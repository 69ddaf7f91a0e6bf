/*
 * os.h — the door of the os layer: the database file and its map, the swappable write/sync/
 * grow table, byte-range locks, and in-memory stores shared by identifier within a process.
 * It knows files, not pages: the storage layer above decides what the bytes mean.
 */
#ifndef STRATA_OS_H
#define STRATA_OS_H

#include "base/base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

#include <sys/uio.h>

/* Messages name a file by at most this many bytes of its path (the message keeps its reason). */
#define ST_SHOWN_PATH 80

typedef struct st_memstore st_memstore; /* an in-memory database shared by identifier */

/* The files of one database handle: the database file and its map, and the commit log. */
typedef struct st_file {
    char *path;
    char shown[ST_SHOWN_PATH]; /* the path as messages show it (st_os_shorten) */
    strata_options opts;
    strata_io_methods io;
    int fd;                  /* database file, -1 in memory mode */
    uint8_t *map;            /* reserved range; the file (or memory store) mapped at its start */
    uint64_t map_size;
    _Atomic uint64_t file_size; /* bytes the file has (grown in chunks) */
    st_memstore *mem;        /* memory mode only */
    int log_fd;              /* the commit log (<path>.log), opened by the first logged commit */
    bool log_direct;         /* log_fd bypasses the page cache */
    int log_cached_fd;       /* when log_direct: the log again, through the page cache, for records
                              * written without a sync (group commit); -1 until one is */
    uint64_t log_bytes;      /* the open log file's size */
    uint64_t log_synced_writes; /* records written with their sync (st_os_log_write_synced) */
    uint64_t log_ring_writes; /* records begun before the pages (st_os_log_write_begin) */
    struct st_log_ring *log_ring; /* a log write begun and not yet waited for (io_uring),
                                   * NULL until st_os_log_write_begin first needs it */
    bool found_empty;        /* st_os_open found the file there but empty (set with *missing) */
} st_file;

/* Open f->path if it exists and map it (fd, map, file_size). *missing is set instead when there
 * is no file or an empty one and opts allow creating it: then create it with
 * st_os_create_begin (a temporary file), write it, and st_os_create_commit (rename into place).
 * In memory mode, attaches to (or creates, *missing) the store named f->path. */
int st_os_open(st_file *f, bool *missing, strata_error *err);
int st_os_create_begin(st_file *f, strata_error *err);
int st_os_create_commit(st_file *f, strata_error *err);
void st_os_close(st_file *f);

/* A whole new file beside the database (a copy, a compaction): written under `dest` + suffix,
 * then st_os_newfile_commit syncs it (through f's I/O table), renames it to dest (replace:
 * over what is there; else STRATA_ERR_EXISTS if dest exists) and syncs the directory;
 * st_os_newfile_abandon closes and removes it. Write it with st_os_write_fd(f, nf->fd, ...). */
typedef struct st_newfile {
    int fd;
    char tmp[4200], dest[4200];
    char shown[ST_SHOWN_PATH + 16]; /* dest as messages show it */
} st_newfile;
int st_os_newfile_begin(const char *dest, const char *suffix, st_newfile *nf, strata_error *err);
int st_os_newfile_commit(st_file *f, st_newfile *nf, bool replace, strata_error *err);
void st_os_newfile_abandon(st_newfile *nf);
/* Close the file and its map (and the commit log) and open path again: another file took its
 * name (a compaction). On failure the file is closed. */
int st_os_reopen(st_file *f, strata_error *err);

/* Write len bytes at off through the I/O table (memory mode: copy into the store). */
int st_os_write(st_file *f, uint64_t off, const void *buf, size_t len, strata_error *err);
/* Write n buffers back to back from off: one pwritev with the default I/O table, else copied
 * into one buffer for the table's pwrite (tests count and fail writes through it). */
int st_os_write_gather(st_file *f, uint64_t off, const struct iovec *iov, int n,
                       strata_error *err);
/* fdatasync through the I/O table; nothing in memory mode. */
int st_os_sync(st_file *f, strata_error *err);
/* The same on another file of the database (the commit log); name is for messages. */
int st_os_write_fd(st_file *f, int fd, const char *name, uint64_t off, const void *buf,
                   size_t len, strata_error *err);
int st_os_sync_fd(st_file *f, int fd, const char *name, strata_error *err);

/* Zeroed memory of `bytes` whose pages are backed only once touched (anonymous, no swap
 * reserved): tables sized by the map but used sparsely. NULL when the address space is short. */
void *st_os_reserve(size_t bytes);
void st_os_unreserve(void *p, size_t bytes);

/* Set f->path (a copy) and f->shown; false when out of memory. */
bool st_os_set_path(st_file *f, const char *path);
/* path + suffix for a message: whole when it fits in cap bytes, else "..." and its end, cut at a
 * UTF-8 character's start, so the file's name stays and the message keeps room for its reason. */
void st_os_shorten(const char *path, const char *suffix, char *out, size_t cap);
/* The commit log's path, "<path>.log", and its name in messages. */
void st_os_log_path(const st_file *f, char *buf, size_t len);
void st_os_log_shown(const st_file *f, char *buf, size_t len);
/* Open the commit log into f->log_fd (nothing if open already) and set f->log_bytes to its
 * size. A missing log, or one shorter than min_size, is left closed (log_fd
 * -1) unless create_size: then it is made that many bytes of zeros, synced, and renamed into
 * place (so appending to it never changes its size). */
int st_os_open_log(st_file *f, uint64_t min_size, uint64_t create_size, strata_error *err);
/* The descriptor to write a log record with: log_fd, or for a record not synced now
 * (`deferred`) of a direct log, one through the page cache — a direct write waits for the
 * device, which a record whose sync comes later (shared by a group of them) need not. */
int st_os_log_write_fd(st_file *f, bool deferred);
/* Write a log record's blocks (log_fd) so that they are on stable storage when it returns, in one
 * call where it can: a direct log through the default I/O table is written with RWF_DSYNC (the
 * device's FUA, or a flush the kernel adds: a system call and a device round trip fewer than a
 * write and an fdatasync) and *synced is set; else the blocks are written plainly, *synced stays
 * false and the caller syncs. It covers these blocks only: the caller knows no other write to the
 * log awaits a sync. After a failure the blocks may or may not be on the disk. */
int st_os_log_write_synced(st_file *f, const char *name, uint64_t off, const void *buf, size_t len,
                           bool *synced, strata_error *err);
/* Begin writing these blocks and return at once (io_uring, the direct log through the default
 * I/O table), so that the caller can work while the device writes: st_os_log_write_synced with
 * the same arguments then waits for the write (and writes the blocks itself if it did not
 * complete whole); *synced stays false then: the caller syncs the log. False when nothing was
 * begun (no io_uring here: a kernel before 5.1, a sandbox that refuses it; another I/O table; a
 * log through the page cache). buf must stay as it is until then. */
bool st_os_log_write_begin(st_file *f, uint64_t off, const void *buf, size_t len);

/* Grow the file in chunks so that it holds at least `needed` bytes. */
int st_os_ensure_size(st_file *f, uint64_t needed, strata_error *err);
/* The file holds `needed` bytes and `headroom` more (grown in chunks of at least the headroom;
 * on a full disk, exactly needed + headroom, else the error). */
int st_os_ensure_room(st_file *f, uint64_t needed, uint64_t headroom, strata_error *err);

/* Shorten the file to `size` bytes (nothing in memory mode; a failure leaves it as it was). */
void st_os_shrink(st_file *f, uint64_t size);

/* Meta slots of an in-memory store are copied under a mutex (a file's go through the kernel). */
void st_os_meta_lock(st_file *f);
void st_os_meta_unlock(st_file *f);

/* The writer lock shared by every handle of a memory store; NULL for files. */
pthread_mutex_t *st_os_mem_writer_mutex(st_file *f);
/* The reader-table region of a memory store (allocated with it), and its size. */
uint8_t *st_os_mem_lock_region(st_file *f, size_t *size);

/* Open-file-description locks on one byte of fd: 0 or an errno (EAGAIN when busy). */
int st_os_lock_byte(int fd, off_t byte, bool exclusive, bool wait);
int st_os_unlock_byte(int fd, off_t byte);

#endif
