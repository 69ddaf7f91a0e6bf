/*
 * faults.c — fail the k-th write, sync or grow with EIO or ENOSPC, for every k of a workload.
 *
 * For each point (kind, errno, k): open a database that already holds a few commits with an
 * I/O table that fails that call (that one call; for an ENOSPC write or grow, every later one of
 * its kind too, as a full disk stays full, until a commit has failed and space is freed), run
 * numbered commits (workload.h), and when a
 * commit fails check that it says why (STRATA_ERR_IO or STRATA_ERR_NO_SPACE) and retry it: the
 * handle must stay usable. Then reopen with plain I/O: the file must verify and hold exactly
 * the commits that returned success.
 *
 * Usage: faults                Last line: faults: P points, K clean, C corrupt
 */
#include "testkey.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/stat.h>
#include <unistd.h>

enum { K_WRITE, K_SYNC, K_GROW, K_KINDS };
static const char *kind_names[] = {"write", "sync", "grow"};

#define BASE_COMMITS 5
static uint64_t run_end; /* the last commit of a run: past one that grows the file */

typedef struct faulty {
    uint64_t count[K_KINDS];
    int fail_kind;
    uint64_t fail_at;
    int fail_errno;
    int fired;
    int space_freed; /* ENOSPC: the disk has room again */
} faulty;

static int hit(faulty *f, int kind) {
    ++f->count[kind];
    if (kind != f->fail_kind) return 0;
    if (f->count[kind] == f->fail_at ||
        (f->fail_errno == ENOSPC && kind != K_SYNC && f->fired && !f->space_freed)) {
        f->fired = 1;
        errno = f->fail_errno;
        return -1;
    }
    return 0;
}

static ssize_t f_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off) {
    if (hit(ctx, K_WRITE)) return -1;
    return pwrite(fd, buf, len, off);
}

static int f_fdatasync(void *ctx, int fd) {
    if (hit(ctx, K_SYNC)) return -1;
    return fdatasync(fd);
}

static int f_grow(void *ctx, int fd, off_t size) {
    if (hit(ctx, K_GROW)) return -1;
    return strata_io_default()->grow(NULL, fd, size);
}

static strata_db_t *open_with(const char *path, faulty *f, strata_io_methods *io) {
    strata_options o;
    strata_options_init(&o);
    tk_options(&o);
    o.map_size = 1ull << 30;
    if (f) {
        *io = (strata_io_methods){sizeof *io, f, f_pwrite, f_fdatasync, f_grow};
        o.io = io;
    }
    strata_db_t *db = NULL;
    strata_error e = {0};
    if (strata_db_open(path, &o, &db, &e)) fprintf(stderr, "open %s: %s\n", path, e.message);
    return db;
}

static void remove_db(const char *path) {
    char lock[400];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
}

static int make_base(const char *path) {
    remove_db(path);
    strata_db_t *db = open_with(path, NULL, NULL);
    if (!db) return 1;
    strata_error e = {0};
    for (uint64_t i = 1; i <= BASE_COMMITS; i++)
        if (wl_commit(db, i, &e)) return 1;
    return strata_db_close(db, &e);
}

/* One point; returns 0 when clean, 1 when the file or the behaviour was wrong. */
static int run_point(const char *path, faulty *f, char *why, size_t whylen) {
    if (make_base(path)) {
        snprintf(why, whylen, "cannot build the base database");
        return 1;
    }
    strata_io_methods io;
    strata_db_t *db = open_with(path, f, &io);
    if (!db) {
        snprintf(why, whylen, "cannot open");
        return 1;
    }
    strata_error e = {0};
    int failures = 0;
    uint64_t i = BASE_COMMITS + 1;
    while (i <= run_end) {
        int rc = wl_commit(db, i, &e);
        if (rc == STRATA_OK) {
            i++;
            continue;
        }
        int want = f->fail_errno == ENOSPC ? STRATA_ERR_NO_SPACE : STRATA_ERR_IO;
        f->space_freed = 1;
        if (!f->fired || rc != want || ++failures > 1) {
            snprintf(why, whylen, "commit %llu failed with %s (%.120s)", (unsigned long long)i,
                     strata_status_name(rc), e.message);
            strata_db_close(db, NULL);
            return 1;
        }
    }
    if (f->fired && failures == 0) {
        snprintf(why, whylen, "the failed call did not fail a commit");
        strata_db_close(db, NULL);
        return 1;
    }
    bool fired_before_close = f->fired;
    int crc = strata_db_close(db, &e);
    if (crc) {
        /* a fault in close's own sync (it leaves a durable copy of the meta) must be reported,
         * and every commit made before stays */
        int want = f->fail_errno == ENOSPC ? STRATA_ERR_NO_SPACE : STRATA_ERR_IO;
        if (fired_before_close || !f->fired || crc != want) {
            snprintf(why, whylen, "close: %.200s", e.message);
            return 1;
        }
    }
    db = open_with(path, NULL, NULL);
    uint64_t last = 0;
    if (!db) {
        snprintf(why, whylen, "cannot reopen");
        return 1;
    }
    int bad = wl_check(db, &last, why, whylen);
    if (!bad && last != run_end) {
        snprintf(why, whylen, "reopened at commit %llu, expected %llu", (unsigned long long)last,
                 (unsigned long long)run_end);
        bad = 1;
    }
    strata_db_close(db, NULL);
    return bad;
}

int main(void) {
    char dir[] = "/tmp/strata-faults-XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char path[300];
    snprintf(path, sizeof path, "%s/faults.db", dir);

    run_end = BASE_COMMITS + 12;
    for (uint64_t i = BASE_COMMITS + 1;; i++)
        if (wl_is_big(i)) {
            if (i + 1 > run_end) run_end = i + 1;
            break;
        }
    /* Count each kind of call in a run without faults. */
    faulty dry = {.fail_kind = -1};
    char why[300];
    if (run_point(path, &dry, why, sizeof why)) {
        fprintf(stderr, "dry run: %s\n", why);
        return 2;
    }
    int points = 0, clean = 0, corrupt = 0;
    const int errnos[] = {EIO, ENOSPC};
    for (int kind = 0; kind < K_KINDS; kind++) {
        for (int en = 0; en < 2; en++) {
            for (uint64_t k = 1; k <= dry.count[kind]; k++) {
                faulty f = {.fail_kind = kind, .fail_at = k, .fail_errno = errnos[en]};
                points++;
                if (run_point(path, &f, why, sizeof why)) {
                    corrupt++;
                    fprintf(stderr, "%s #%llu (%s): %s\n", kind_names[kind], (unsigned long long)k,
                            en ? "ENOSPC" : "EIO", why);
                } else {
                    clean++;
                }
            }
        }
    }
    fprintf(stderr, "calls in the workload: %llu writes, %llu syncs, %llu grows\n",
            (unsigned long long)dry.count[K_WRITE], (unsigned long long)dry.count[K_SYNC],
            (unsigned long long)dry.count[K_GROW]);
    remove_db(path);
    rmdir(dir);
    printf("faults: %d points, %d clean, %d corrupt\n", points, clean, corrupt);
    return corrupt ? 1 : 0;
}
