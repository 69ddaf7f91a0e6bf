/*
 * powerloss.c — simulate power loss through the swappable I/O table.
 *
 * The test I/O layer passes every write to the real file (so the map sees it) and keeps a copy
 * as "pending". fdatasync moves the pending writes of that file into a separate durable image
 * (one for the database file, one for its commit log "<path>.log"). At a random
 * operation the power goes: that call and every later one fail with EIO. The crash image is
 * then the durable image plus a random choice of the pending writes, each one dropped, applied
 * whole or torn (a random subset of its 512-byte sectors), applied in random order.
 *
 * A third of the runs use FULL durability: the image must hold every commit that returned. A
 * third use NO_SYNC with strata_db_sync every few commits: the image must hold every commit that
 * a returned sync covered. The rest use FULL with group commit: runs of unsynced commits
 * (STRATA_TXN_NO_SYNC at begin, or strata_txn_commit_unsynced at the end — a log record without
 * a sync — at random), each run made durable by strata_db_sync_commits, strata_db_sync or the
 * synced commit that follows it: the image must hold every commit a returned sync or synced
 * commit covered. Always it must open,
 * verify, and hold no commit half (workload.h).
 *
 * Every 11th commit the file is compacted and every 17th copied (strata_db_compact,
 * strata_db_write_copy). Their new files ("<db>.compacting", "<db>.copy.copying") have images of
 * their own; they are renamed into place only after their sync returns (no write through the I/O
 * table follows), so when a compaction returns the compacted image becomes the database's, and
 * when a copy returns its image must open as a whole database. A cut inside either leaves the
 * database's image as it was.
 *
 * Usage: powerloss RUNS        Last line: powerloss: N runs, L lost, C corrupt
 */
#include "testkey.h"
#include "workload.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct pending {
    int durable_fd; /* the image it goes to */
    int live_fd;
    off_t off;
    size_t len;
    uint8_t *data;
} pending;

typedef struct power {
    int durable_fd;     /* the database file's image */
    int durable_log_fd; /* the commit log's image */
    int compact_fd;     /* the image of a compaction's new file */
    int copy_fd;        /* the image of a copy's new file */
    pending *pend;
    size_t npend, cap;
    uint64_t ops, cut_at;
    int dead;
    uint64_t seed;
} power;

static uint64_t prand(power *p) {
    p->seed ^= p->seed << 13, p->seed ^= p->seed >> 7, p->seed ^= p->seed << 17;
    return p->seed;
}

/* The image for writes to fd: a compaction's or a copy's new file, the commit log's (its path
 * ends in ".log", or ".log.creating" while it is made) or the database file's. */
static int image_of(power *p, int fd) {
    char link[64], path[4200];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    path[n > 0 ? n : 0] = 0;
    if (strstr(path, ".compacting")) return p->compact_fd;
    if (strstr(path, ".copying")) return p->copy_fd;
    return strstr(path, ".log") ? p->durable_log_fd : p->durable_fd;
}

static int tick(power *p) {
    if (p->dead) return -1;
    if (++p->ops == p->cut_at) {
        p->dead = 1;
        return -1;
    }
    return 0;
}

static ssize_t pl_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off) {
    power *p = ctx;
    if (tick(p)) {
        errno = EIO;
        return -1;
    }
    ssize_t n = pwrite(fd, buf, len, off);
    if (n != (ssize_t)len) return n;
    if (p->npend == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 64;
        p->pend = realloc(p->pend, p->cap * sizeof *p->pend);
    }
    pending *w = &p->pend[p->npend++];
    w->durable_fd = image_of(p, fd);
    w->live_fd = fd;
    w->off = off;
    w->len = len;
    w->data = malloc(len);
    memcpy(w->data, buf, len);
    return n;
}

static void apply(const pending *w) {
    if (pwrite(w->durable_fd, w->data, w->len, w->off) != (ssize_t)w->len) perror("apply");
}

static void drop_pending(power *p) {
    for (size_t i = 0; i < p->npend; i++) free(p->pend[i].data);
    p->npend = 0;
}

/* fd was synced: its pending writes are durable; the other file's stay pending. */
static void settle(power *p, int fd) {
    size_t keep = 0;
    for (size_t i = 0; i < p->npend; i++) {
        if (p->pend[i].live_fd == fd) {
            apply(&p->pend[i]);
            free(p->pend[i].data);
        } else {
            p->pend[keep++] = p->pend[i];
        }
    }
    p->npend = keep;
}

static int pl_fdatasync(void *ctx, int fd) {
    power *p = ctx;
    if (tick(p)) {
        errno = EIO;
        return -1;
    }
    if (fdatasync(fd)) return -1;
    settle(p, fd);
    return 0;
}

static int pl_grow(void *ctx, int fd, off_t size) {
    power *p = ctx;
    if (tick(p)) {
        errno = EIO;
        return -1;
    }
    if (ftruncate(fd, size)) return -1;
    struct stat sb;
    int image = image_of(p, fd);
    if (fstat(image, &sb) == 0 && sb.st_size < size && ftruncate(image, size)) return -1;
    return 0;
}

/* fd's image replaced by src's whole (a file renamed over another). */
static void replace_image(int fd, int src) {
    struct stat sb;
    if (fstat(src, &sb) || ftruncate(fd, 0)) perror("replace image");
    uint8_t buf[65536];
    for (off_t off = 0; off < sb.st_size;) {
        ssize_t n = pread(src, buf, sizeof buf, off);
        if (n <= 0 || pwrite(fd, buf, (size_t)n, off) != n) {
            perror("replace image");
            break;
        }
        off += n;
    }
}

/* A compaction returned: its file, synced whole, is the database now; writes still pending for
 * the old file (and the removed log) go nowhere. */
static void compacted(power *p) {
    size_t keep = 0;
    for (size_t i = 0; i < p->npend; i++) {
        if (p->pend[i].durable_fd == p->durable_fd || p->pend[i].durable_fd == p->compact_fd ||
            p->pend[i].durable_fd == p->durable_log_fd)
            free(p->pend[i].data);
        else
            p->pend[keep++] = p->pend[i];
    }
    p->npend = keep;
    replace_image(p->durable_fd, p->compact_fd);
    if (ftruncate(p->durable_log_fd, 0) || ftruncate(p->compact_fd, 0)) perror("truncate image");
}

/* Power is gone: write a random fate of each pending write into the durable image. */
static void crash(power *p) {
    for (size_t i = p->npend; i > 1; i--) { /* random order */
        size_t j = prand(p) % i;
        pending t = p->pend[i - 1];
        p->pend[i - 1] = p->pend[j];
        p->pend[j] = t;
    }
    for (size_t i = 0; i < p->npend; i++) {
        pending *w = &p->pend[i];
        uint64_t fate = prand(p) % 3;
        if (fate == 0) continue; /* dropped */
        if (fate == 1) {
            apply(w);
            continue;
        }
        for (size_t s = 0; s < w->len; s += 512) { /* torn: some sectors made it */
            if (prand(p) % 2) continue;
            size_t n = w->len - s < 512 ? w->len - s : 512;
            if (pwrite(w->durable_fd, w->data + s, n, w->off + (off_t)s) != (ssize_t)n) perror("tear");
        }
    }
    drop_pending(p);
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 300;
    char dir[] = "/tmp/strata-power-XXXXXX";
    if (!mkdtemp(dir)) return 2;
    /* POWERLOSS_SEED (printed with a failure) and POWERLOSS_RUN replay one run */
    uint64_t seed0 = getenv("POWERLOSS_SEED") ? strtoull(getenv("POWERLOSS_SEED"), NULL, 0)
                                              : (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)getpid();
    int only_run = getenv("POWERLOSS_RUN") ? atoi(getenv("POWERLOSS_RUN")) : -1;
    int lost = 0, corrupt = 0, cut_in_commit = 0, copies = 0, cut_in_copy = 0, pending_dropped = 0;
    for (int run = 0; run < runs; run++) {
        if (only_run >= 0 && run != only_run) continue;
        char live[300], durable[300], durable_log[320];
        snprintf(live, sizeof live, "%s/live-%d.db", dir, run);
        snprintf(durable, sizeof durable, "%s/image-%d.db", dir, run);
        snprintf(durable_log, sizeof durable_log, "%s.log", durable);
        power p = {0};
        p.seed = wl_hash(seed0 + (uint64_t)run) | 1;
        p.durable_fd = open(durable, O_RDWR | O_CREAT | O_TRUNC, 0644);
        p.durable_log_fd = open(durable_log, O_RDWR | O_CREAT | O_TRUNC, 0644);
        char compact_image[320], copy_image[320], copy_live[320];
        snprintf(compact_image, sizeof compact_image, "%s/compacting-%d.db", dir, run);
        snprintf(copy_image, sizeof copy_image, "%s/copy-%d.db", dir, run);
        snprintf(copy_live, sizeof copy_live, "%s.copy", live);
        p.compact_fd = open(compact_image, O_RDWR | O_CREAT | O_TRUNC, 0644);
        p.copy_fd = open(copy_image, O_RDWR | O_CREAT | O_TRUNC, 0644);
        bool copied = false;
        p.cut_at = 1 + prand(&p) % 400;
        strata_io_methods io = {sizeof io, &p, pl_pwrite, pl_fdatasync, pl_grow};
        strata_options o;
        strata_options_init(&o);
        tk_options(&o);
        o.io = &io;
        bool no_sync = run % 3 == 1, grouped = run % 3 == 2;
        uint64_t sync_every = 1 + prand(&p) % 8;
        if (no_sync) o.durability = STRATA_DURABILITY_NO_SYNC;
        o.map_size = 1ull << 30;
        strata_db_t *db = NULL;
        strata_error e = {0};
        uint64_t returned = 0; /* the last commit that returned success */
        int opened = strata_db_open(live, &o, &db, &e) == STRATA_OK;
        if (opened) {
            for (uint64_t i = 1; !p.dead; i++) {
                /* grouped: a synced commit every sync_every, or a strata_db_sync after the group */
                bool unsynced = grouped && i % sync_every != 0;
                bool at_begin = prand(&p) % 2 == 0; /* STRATA_TXN_NO_SYNC, or decided at the commit */
                if (wl_commit_flags(db, i, unsynced && at_begin ? STRATA_TXN_NO_SYNC : 0, unsynced && !at_begin, &e))
                    break;
                if (grouped && unsynced && prand(&p) % 4 == 0) {
                    /* the log's sync (strata_db_sync_commits) or the file's, at random */
                    int src = prand(&p) % 2 ? strata_db_sync_commits(db, NULL, &e) : strata_db_sync(db, &e);
                    if (src == STRATA_OK) returned = i;
                } else if (!no_sync && !unsynced) {
                    returned = i;
                } else if (no_sync && i % sync_every == 0 && strata_db_sync(db, &e) == STRATA_OK) {
                    returned = i;
                }
                if (i % 11 == 0) {
                    if (ftruncate(p.compact_fd, 0)) perror("truncate image");
                    if (strata_db_compact(db, NULL, &e) != STRATA_OK) {
                        cut_in_copy++;
                        break;
                    }
                    compacted(&p);
                    returned = i; /* the compacted file holds it, synced */
                }
                if (i % 17 == 0) {
                    unlink(copy_live);
                    if (ftruncate(p.copy_fd, 0)) perror("truncate image");
                    copied = false;
                    if (strata_db_write_copy(db, copy_live, NULL, &e) != STRATA_OK) {
                        cut_in_copy++;
                        break;
                    }
                    copied = true;
                }
            }
            strata_db_close(db, NULL);
        }
        if (p.dead && p.ops == p.cut_at) cut_in_commit++;
        crash(&p);
        free(p.pend);
        close(p.durable_fd);
        close(p.durable_log_fd);
        close(p.compact_fd);
        close(p.copy_fd);
        unlink(compact_image);
        unlink(copy_live);
        if (copied) { /* a copy that returned is a whole database */
            strata_options co;
            strata_options_init(&co);
            tk_options(&co);
            co.map_size = 1ull << 30;
            strata_db_t *cdb = NULL;
            char cwhy[300] = "cannot open";
            uint64_t at = 0;
            if (strata_db_open(copy_image, &co, &cdb, &e) != STRATA_OK ||
                wl_check(cdb, &at, cwhy, sizeof cwhy)) {
                fprintf(stderr, "run %d: the copy is not whole: %s %s\n", run, cwhy, e.message);
                corrupt++;
            } else {
                copies++;
            }
            if (cdb) strata_db_close(cdb, NULL);
        }
        {
            char lk[340];
            snprintf(lk, sizeof lk, "%s.lock", copy_image);
            unlink(lk);
            if (!corrupt) unlink(copy_image);
            snprintf(lk, sizeof lk, "%s.log", copy_image);
            unlink(lk);
        }
        /* Power lost while creating: the file is only renamed into place once complete, so
         * there is no database at the path and nothing was promised. */
        if (!opened) {
            char tmp[320];
            snprintf(tmp, sizeof tmp, "%s.creating", live);
            unlink(tmp);
            if (access(live, F_OK) == 0) {
                fprintf(stderr, "run %d: open failed but left '%s' behind\n", run, live);
                corrupt++;
            }
            continue;
        }
        strata_options ro;
        strata_options_init(&ro);
        tk_options(&ro);
        ro.map_size = 1ull << 30;
        char why[300] = "cannot open";
        uint64_t last = 0;
        db = NULL;
        if (strata_db_open(durable, &ro, &db, &e) != STRATA_OK) {
            snprintf(why, sizeof why, "open: %.200s", e.message);
            fprintf(stderr, "run %d (cut at op %llu): corrupt: %s\n", run,
                    (unsigned long long)p.cut_at, why);
            corrupt++;
        } else if (wl_check(db, &last, why, sizeof why)) {
            fprintf(stderr, "run %d (cut at op %llu): corrupt: %s\n", run,
                    (unsigned long long)p.cut_at, why);
            corrupt++;
        } else if (({ strata_recovery rec = {0};
                      strata_db_recovery(db, &rec, NULL) == STRATA_OK && rec.dropped &&
                      strstr(rec.why, "without a sync of the commit log"); })) {
            pending_dropped++; /* unsynced log records lost, as promised: still check the rest */
            if (last < returned) {
                fprintf(stderr, "run %d (grouped): lost: commit %llu returned, image has %llu\n", run,
                        (unsigned long long)returned, (unsigned long long)last);
                lost++;
            }
        } else if (last < returned) {
            fprintf(stderr, "run %d (%s): lost: commit %llu returned, image has %llu\n", run,
                    no_sync ? "no-sync" : grouped ? "grouped" : "full", (unsigned long long)returned,
                    (unsigned long long)last);
            lost++;
        }
        if (db) strata_db_close(db, NULL);
        char lock[320];
        snprintf(lock, sizeof lock, "%s.lock", live);
        unlink(live), unlink(lock);
        snprintf(lock, sizeof lock, "%s.log", live);
        unlink(lock);
        snprintf(lock, sizeof lock, "%s.lock", durable);
        if (!corrupt && !lost) unlink(durable), unlink(lock), unlink(durable_log);
    }
    if (!corrupt && !lost) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) return 2;
    } else {
        fprintf(stderr, "failing images kept in %s (POWERLOSS_SEED=%llu)\n", dir, (unsigned long long)seed0);
    }
    fprintf(stderr, "power cut inside %d of %d runs' workloads (%d inside a compaction or copy); "
            "%d whole copies checked; %d runs lost unsynced log records (and reopened before them)\n",
            cut_in_commit, runs, cut_in_copy, copies, pending_dropped);
    printf("powerloss: %d runs, %d lost, %d corrupt\n", runs, lost, corrupt);
    return lost || corrupt ? 1 : 0;
}
