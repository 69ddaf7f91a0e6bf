/*
 * test_disk_full.c — a full disk is an error, never a signal, and never locks the user out;
 * processes opening one file together while the first recovers it see no error but BUSY.
 *
 * Full disks are small tmpfs mounts made in a private mount namespace of a child process
 * (root, or an unprivileged user namespace). Where neither is permitted, RLIMIT_FSIZE stands in
 * (every write past the limit fails with EFBIG, which the core reports as NO_SPACE), and the
 * test says so.
 *
 *   - opens on a full disk: a new database, an existing one whose lock file is gone: NO_SPACE
 *     or success, never SIGBUS (the lock file used to be sized sparse and written through a map);
 *   - commits until the disk is full, in FULL (no room for a 16 MiB commit log: synced
 *     commits instead) and NO_SYNC: each fails with NO_SPACE or succeeds, verify stays clean;
 *     then deleting half the objects in one commit works, and so does writing new objects of
 *     every size (1 KB to 100 KB) into the space that freed, without more disk;
 *   - values bigger than a page reuse freed runs (a 10 KB value replaced 2,000 times);
 *   - opens racing a recovery, some of the openers killed at random: only BUSY;
 *   - an open waiting on another's open lock past open_timeout_ms: BUSY naming the option.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "testlib.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>

/* ------------------------------------------------------------------ a small file system */

static bool write_file(const char *path, const char *text) {
    int fd = open(path, O_WRONLY);
    if (fd < 0) return false;
    bool ok = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
    close(fd);
    return ok;
}

/* In this (child) process: a tmpfs of `mib` MiB at `dir`, private to it. false: not permitted. */
static bool mount_small_fs(const char *dir, unsigned mib) {
    char opts[64];
    snprintf(opts, sizeof opts, "size=%um", mib);
    if (unshare(CLONE_NEWNS) != 0) {
        uid_t uid = getuid();
        gid_t gid = getgid();
        if (unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0) return false;
        char map[64];
        write_file("/proc/self/setgroups", "deny");
        snprintf(map, sizeof map, "0 %u 1", (unsigned)uid);
        write_file("/proc/self/uid_map", map);
        snprintf(map, sizeof map, "0 %u 1", (unsigned)gid);
        write_file("/proc/self/gid_map", map);
    }
    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
    return mount("tmpfs", dir, "tmpfs", 0, opts) == 0;
}

/* Fill the file system holding dir until it has no block left. */
static void fill_disk(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/filler", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    static char block[65536];
    for (size_t n = sizeof block; fd >= 0 && n >= 1; n /= 2)
        while (write(fd, block, n) == (ssize_t)n) {}
    if (fd >= 0) close(fd);
}

static void free_disk(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/filler", dir);
    unlink(path);
}

typedef int (*disk_fn)(const char *dir); /* 0: passed; else the child prints why */

static bool tl_fsize_fallback_said;

/* Run fn in a child on a fresh `mib` MiB file system at a new directory; a signal or a
 * non-zero exit fails the calling test. */
static bool on_small_disk(unsigned mib, disk_fn fn, const char *what) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s/disk-XXXXXX", tl_dir);
    if (!mkdtemp(dir)) return false;
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (!mount_small_fs(dir, mib)) {
            struct rlimit rl = {(rlim_t)mib << 20, (rlim_t)mib << 20};
            signal(SIGXFSZ, SIG_IGN);
            if (setrlimit(RLIMIT_FSIZE, &rl) != 0) _exit(3);
            if (!tl_fsize_fallback_said)
                fprintf(stderr, "  (no tmpfs here: RLIMIT_FSIZE of %u MiB per file instead)\n", mib);
        }
        _exit(fn(dir));
    }
    int st = 0;
    waitpid(pid, &st, 0);
    if (WIFSIGNALED(st)) {
        fprintf(stderr, "  %s: killed by signal %d (%s)\n", what, WTERMSIG(st), strsignal(WTERMSIG(st)));
        return false;
    }
    if (WEXITSTATUS(st) != 0) fprintf(stderr, "  %s: failed (exit %d)\n", what, WEXITSTATUS(st));
    return WEXITSTATUS(st) == 0;
}

#define FAIL_IF(cond, ...)                                                          \
    do {                                                                            \
        if (cond) {                                                                 \
            fprintf(stderr, "  FAIL %s:%d: ", __FILE__, __LINE__);                  \
            fprintf(stderr, __VA_ARGS__);                                           \
            fprintf(stderr, "\n");                                                  \
            return 1;                                                               \
        }                                                                           \
    } while (0)

/* ------------------------------------------------------------------ opens on a full disk */

static int open_on_full_disk(const char *dir) {
    char path[700];
    snprintf(path, sizeof path, "%s/new.db", dir);
    /* a database made while there was room, its lock file then removed */
    char old[700], lock[720];
    snprintf(old, sizeof old, "%s/old.db", dir);
    snprintf(lock, sizeof lock, "%s.lock", old);
    strata_db_t *db = tl_open_db(old, STRATA_DURABILITY_NO_SYNC);
    FAIL_IF(!db, "cannot make old.db");
    strata_db_close(db, NULL);
    unlink(lock);
    fill_disk(dir);
    strata_error e = {0};
    strata_options o;
    strata_options_init(&o);
    int rc = strata_db_open(path, &o, &db, &e);
    FAIL_IF(rc != STRATA_ERR_NO_SPACE, "a new database on a full disk: %s (%s)",
            strata_status_name(rc), e.message);
    FAIL_IF(!strstr(e.message, "new.db"), "the message does not name the file: %s", e.message);
    rc = strata_db_open(old, &o, &db, &e);
    FAIL_IF(rc != STRATA_ERR_NO_SPACE && rc != STRATA_OK, "a lock-less open on a full disk: %s (%s)",
            strata_status_name(rc), e.message);
    if (rc == STRATA_OK) strata_db_close(db, NULL);
    free_disk(dir);
    rc = strata_db_open(path, &o, &db, &e);
    FAIL_IF(rc != STRATA_OK, "once there is room: %s (%s)", strata_status_name(rc), e.message);
    FAIL_IF(strata_db_verify(db, &e) != STRATA_OK, "verify: %s", e.message);
    strata_db_close(db, NULL);
    return 0;
}

static void opens_on_a_full_disk_fail_cleanly(void) {
    CHECK(on_small_disk(4, open_on_full_disk, "opens on a full disk"));
}

/* ------------------------------------------------------------------ commits until full */

typedef struct blob_db {
    strata_db_t *db;
    strata_col_t n, data;
} blob_db;

static uint8_t blob[100000];

/* Object sizes cycle through these. */
static const size_t sizes[] = {100, 1000, 4100, 10000, 300, 20000, 2000, 100000};

static int add_objects(blob_db *b, int first, int count, size_t fixed, strata_error *e) {
    strata_txn_t *w;
    strata_table_t *t;
    int rc = strata_txn_begin(b->db, STRATA_TXN_WRITE, &w, e);
    if (rc) return rc;
    if ((rc = strata_table_open(w, "Blob", &t, e)) ||
        (rc = strata_table_find_property(t, "n", &b->n, e)) ||
        (rc = strata_table_find_property(t, "data", &b->data, e)))
        goto out;
    for (int i = first; i < first + count; i++) {
        strata_key_t k;
        size_t len = fixed ? fixed : sizes[i % 8];
        memset(blob, i & 0xff, len);
        strata_value n = {.type = STRATA_TYPE_INT, .u.i = i};
        strata_value d = {.type = STRATA_TYPE_BINARY, .u.bytes = {blob, len}};
        if ((rc = strata_obj_create(t, &k, e)) || (rc = strata_obj_set(t, k, b->n, &n, e)) ||
            (rc = strata_obj_set(t, k, b->data, &d, e)))
            goto out;
    }
    rc = strata_txn_commit(w, e);
out:
    strata_txn_free(w);
    return rc;
}

static uint64_t object_count(blob_db *b) {
    strata_txn_t *r;
    strata_table_t *t;
    uint64_t n = UINT64_MAX;
    if (strata_txn_begin(b->db, STRATA_TXN_READ, &r, NULL)) return n;
    if (strata_table_open(r, "Blob", &t, NULL) == STRATA_OK) strata_table_size(t, &n, NULL);
    strata_txn_free(r);
    return n;
}

/* Delete every other run of 8 objects (every size) in one commit; *bytes: their data. */
static int delete_half(blob_db *b, size_t *bytes, strata_error *e) {
    strata_txn_t *w;
    strata_table_t *t;
    *bytes = 0;
    int rc = strata_txn_begin(b->db, STRATA_TXN_WRITE, &w, e);
    if (rc) return rc;
    if ((rc = strata_table_open(w, "Blob", &t, e))) goto out;
    strata_key_t k = -1;
    for (int i = 0; (rc = strata_obj_next(t, k, &k, e)) == STRATA_OK; i++) {
        if (i / 8 % 2) continue;
        strata_value v;
        if ((rc = strata_obj_get(t, k, b->data, &v, e))) goto out;
        *bytes += v.u.bytes.len;
        if ((rc = strata_obj_delete(t, k, e))) goto out;
    }
    if (rc != STRATA_ERR_NOT_FOUND) goto out;
    rc = strata_txn_commit(w, e);
out:
    strata_txn_free(w);
    return rc;
}

/* A new database `file` in dir (path receives its path) with the table Blob {n, data}. */
static int open_blobs(const char *dir, const char *file, strata_durability mode, char path[700],
                      blob_db *b) {
    snprintf(path, 700, "%s/%s", dir, file);
    strata_error e = {0};
    b->db = tl_open_db(path, mode);
    FAIL_IF(!b->db, "open: %s", tl_err.message);
    strata_txn_t *w;
    strata_table_t *t;
    FAIL_IF(strata_txn_begin(b->db, STRATA_TXN_WRITE, &w, &e) ||
                strata_table_create(w, "Blob", &t, &e) ||
                strata_table_add_property(t, "n", STRATA_TYPE_INT, 0, NULL, &b->n, &e) ||
                strata_table_add_property(t, "data", STRATA_TYPE_BINARY, 0, NULL, &b->data, &e) ||
                strata_txn_commit(w, &e),
            "schema: %s", e.message);
    strata_txn_free(w);
    return 0;
}

static int fill_delete_refill(const char *dir, strata_durability mode) {
    char path[700];
    blob_db b = {0};
    strata_error e = {0};
    if (open_blobs(dir, "blobs.db", mode, path, &b)) return 1;
    /* Until the disk is full: commits of 8 objects, 100 B to 100 KB. */
    int next = 0, committed = 0, rc = STRATA_OK;
    while ((rc = add_objects(&b, next, 8, 0, &e)) == STRATA_OK) {
        next += 8;
        committed += 8;
        FAIL_IF(next > 100000, "the disk never filled");
    }
    FAIL_IF(rc != STRATA_ERR_NO_SPACE, "filling: %s (%s)", strata_status_name(rc), e.message);
    FAIL_IF(committed < 40, "only %d objects fit", committed);
    /* smaller commits fill the corners; each fails cleanly */
    for (int i = 0; i < 50; i++) {
        rc = add_objects(&b, next, 1, 0, &e);
        FAIL_IF(rc != STRATA_OK && rc != STRATA_ERR_NO_SPACE, "filling: %s (%s)",
                strata_status_name(rc), e.message);
        if (rc == STRATA_OK) committed++;
        next++;
    }
    FAIL_IF(object_count(&b) != (uint64_t)committed, "%llu objects after the failed commits, %d committed",
            (unsigned long long)object_count(&b), committed);
    FAIL_IF(strata_db_verify(b.db, &e) != STRATA_OK, "verify on a full disk: %s", e.message);
    /* Deleting half in one commit must work on the full disk. */
    size_t freed_bytes = 0;
    rc = delete_half(&b, &freed_bytes, &e);
    FAIL_IF(rc != STRATA_OK, "deleting half of %d objects on a full disk: %s (%s)", committed,
            strata_status_name(rc), e.message);
    uint64_t left = object_count(&b);
    FAIL_IF(left > (uint64_t)(committed / 2 + 8), "%llu objects after deleting half of %d",
            (unsigned long long)left, committed);
    /* New objects of every size now fit: a third of the freed space, size by size. */
    static const size_t refill[] = {1000, 4100, 10000, 100000, 300};
    int refilled = 0;
    for (size_t s = 0; s < sizeof refill / sizeof *refill; s++) {
        size_t budget = freed_bytes / 3 / (sizeof refill / sizeof *refill);
        for (size_t used = 0; used + refill[s] <= budget; used += refill[s]) {
            rc = add_objects(&b, next++, 1, refill[s], &e);
            refilled++;
            FAIL_IF(rc != STRATA_OK, "a new %zu-byte object after deleting half (%zu of %zu "
                    "freed bytes used): %s (%s)", refill[s], used, freed_bytes,
                    strata_status_name(rc), e.message);
        }
    }
    FAIL_IF(strata_db_verify(b.db, &e) != STRATA_OK, "verify: %s", e.message);
    fprintf(stderr, "  %s: %d objects filled the disk; half deleted in one commit; %d new ones "
            "of 300 B to 100 KB written in the %zu bytes that freed\n",
            mode == STRATA_DURABILITY_FULL ? "FULL" : "NO_SYNC", committed,
            refilled, freed_bytes);
    rc = strata_db_close(b.db, &e);
    FAIL_IF(rc != STRATA_OK && rc != STRATA_ERR_NO_SPACE, "close: %s (%s)", strata_status_name(rc),
            e.message);
    b.db = tl_open_db(path, mode);
    FAIL_IF(!b.db, "reopen on a full disk: %s", tl_err.message);
    FAIL_IF(strata_db_verify(b.db, &e) != STRATA_OK, "verify after reopen: %s", e.message);
    strata_db_close(b.db, NULL);
    return 0;
}

/* Small objects only: deleting every other one rewrites every leaf, which may need more than
 * the reserve in one commit (NO_SPACE, nothing changed); in commits of 256 it always works. */
static int fill_small_then_delete(const char *dir) {
    char path[700];
    blob_db b = {0};
    strata_error e = {0};
    if (open_blobs(dir, "small.db", STRATA_DURABILITY_FULL, path, &b)) return 1;
    strata_txn_t *w;
    strata_table_t *t;
    int next = 0, rc;
    while ((rc = add_objects(&b, next, 256, 200, &e)) == STRATA_OK) next += 256;
    FAIL_IF(rc != STRATA_ERR_NO_SPACE, "filling: %s (%s)", strata_status_name(rc), e.message);
    uint64_t full = object_count(&b);
    size_t bytes;
    rc = delete_half(&b, &bytes, &e);
    FAIL_IF(rc != STRATA_OK && rc != STRATA_ERR_NO_SPACE, "deleting half: %s (%s)",
            strata_status_name(rc), e.message);
    bool at_once = rc == STRATA_OK;
    FAIL_IF(!at_once && object_count(&b) != full, "a failed delete changed the count");
    FAIL_IF(!at_once && !strstr(e.message, "delete in smaller commits"), "message: %s", e.message);
    int batches = 0;
    while (!at_once && object_count(&b) > full / 2) { /* 256 at a time, from the front */
        FAIL_IF(strata_txn_begin(b.db, STRATA_TXN_WRITE, &w, &e) ||
                    strata_table_open(w, "Blob", &t, &e), "delete: %s", e.message);
        strata_key_t k = -1;
        for (int i = 0; i < 256 && strata_obj_next(t, -1, &k, &e) == STRATA_OK; i++)
            FAIL_IF((rc = strata_obj_delete(t, k, &e)), "delete: %s", e.message);
        rc = strata_txn_commit(w, &e);
        strata_txn_free(w);
        FAIL_IF(rc, "deleting 256 small objects on a full disk: %s (%s)", strata_status_name(rc),
                e.message);
        batches++;
    }
    int refilled = 0;
    for (; refilled < (int)(full / 4); refilled += 64)
        FAIL_IF((rc = add_objects(&b, next + refilled, 64, 200, &e)),
                "refilling after the delete (%d of %llu): %s (%s)", refilled,
                (unsigned long long)full / 4, strata_status_name(rc), e.message);
    FAIL_IF(strata_db_verify(b.db, &e) != STRATA_OK, "verify: %s", e.message);
    fprintf(stderr, "  small: %llu 200-byte objects filled the disk; half deleted %s; %d new ones "
            "written\n", (unsigned long long)full,
            at_once ? "in one commit" : batches ? "in commits of 256 (one commit: NO_SPACE)" : "",
            refilled);
    strata_db_close(b.db, NULL);
    return 0;
}

static int fill_full(const char *dir) { return fill_delete_refill(dir, STRATA_DURABILITY_FULL); }
static int fill_nosync(const char *dir) { return fill_delete_refill(dir, STRATA_DURABILITY_NO_SYNC); }

static void full_disk_then_delete_half_and_refill(void) {
    CHECK(on_small_disk(8, fill_full, "FULL on an 8 MiB disk"));
    CHECK(on_small_disk(8, fill_nosync, "NO_SYNC on an 8 MiB disk"));
    CHECK(on_small_disk(8, fill_small_then_delete, "small objects on an 8 MiB disk"));
}

/* ------------------------------------------------------------------ big values reuse space */

static void big_values_reuse_freed_runs(void) {
    strata_db_t *db = tl_open_db(tl_path("churn.db"), STRATA_DURABILITY_FULL);
    CHECK(db);
    static uint8_t v[10000];
    for (int i = 0; i < 2000; i++) {
        strata_txn_t *w;
        strata_tree_t *t;
        memset(v, i, sizeof v);
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        OK(strata_tree_open(w, "t", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E));
        OK(strata_tree_put_int(t, 1, v, sizeof v, E));
        OK(strata_txn_commit(w, E));
        strata_txn_free(w);
    }
    strata_db_info info;
    OK(strata_db_info_get(db, &info, E));
    /* it grew to 25 MiB when runs were never reused */
    if (info.file_size > (2u << 20))
        fprintf(stderr, "  %llu bytes, %llu pages, %llu free\n", (unsigned long long)info.file_size,
                (unsigned long long)info.page_count, (unsigned long long)info.free_pages);
    CHECK(info.file_size <= (2u << 20));
    OK(strata_db_verify(db, E));
    strata_db_close(db, NULL);
}

/* ------------------------------------------------------------------ opens racing recovery */

/* A database whose writer died after many commits: FULL (the log to replay) or NO_SYNC (the
 * unsynced versions to check page by page). */
static bool crashed_writer(const char *path, strata_durability mode) {
    tl_remove_db(path);
    char log[600];
    snprintf(log, sizeof log, "%s.log", path);
    unlink(log);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        strata_db_t *db = tl_open_db(path, mode);
        if (!db) _exit(1);
        blob_db b = {db, 0, 0};
        strata_txn_t *w;
        strata_table_t *t;
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, NULL) ||
            strata_table_create(w, "Blob", &t, NULL) ||
            strata_table_add_property(t, "n", STRATA_TYPE_INT, 0, NULL, &b.n, NULL) ||
            strata_table_add_property(t, "data", STRATA_TYPE_BINARY, 0, NULL, &b.data, NULL) ||
            strata_txn_commit(w, NULL))
            _exit(1);
        strata_txn_free(w);
        for (int i = 0; i < 300; i++)
            if (add_objects(&b, i * 4, 4, 3000, NULL)) _exit(1);
        kill(getpid(), SIGKILL); /* no close: the next opener recovers */
    }
    int st;
    waitpid(pid, &st, 0);
    return WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL;
}

/* An opener: open, write one object, read the count; 0 when all went well or only BUSY came. */
static int opener(const char *path, int go_fd) {
    char c;
    if (read(go_fd, &c, 1) != 1) return 9;
    strata_options o;
    strata_options_init(&o);
    o.map_size = 1ull << 32;
    strata_db_t *db;
    strata_error e = {0};
    int rc = strata_db_open(path, &o, &db, &e);
    if (rc == STRATA_ERR_BUSY) return 0;
    if (rc) {
        fprintf(stderr, "  opener %d: open: %s (%s)\n", (int)getpid(), strata_status_name(rc), e.message);
        return 1;
    }
    blob_db b = {db, 0, 0};
    rc = add_objects(&b, 1000000 + getpid(), 1, 100, &e);
    if (rc != STRATA_OK && rc != STRATA_ERR_BUSY) {
        fprintf(stderr, "  opener %d: write: %s (%s)\n", (int)getpid(), strata_status_name(rc), e.message);
        return 1;
    }
    if (object_count(&b) == UINT64_MAX) {
        fprintf(stderr, "  opener %d: read failed\n", (int)getpid());
        return 1;
    }
    strata_db_close(db, NULL);
    return 0;
}

static void opens_racing_recovery_see_only_busy(void) {
    const char *path = tl_path("race.db");
    int bad = 0, killed = 0, opened = 0;
    srand(7);
    for (int round = 0; round < 12; round++) {
        CHECK(crashed_writer(path, round % 2 ? STRATA_DURABILITY_NO_SYNC : STRATA_DURABILITY_FULL));
        enum { N = 6 };
        int go[2];
        CHECK(pipe(go) == 0);
        pid_t kids[N];
        fflush(NULL);
        for (int i = 0; i < N; i++) {
            kids[i] = fork();
            if (kids[i] == 0) {
                close(go[1]);
                _exit(opener(path, go[0]));
            }
        }
        close(go[0]);
        CHECK(write(go[1], "gggggg", N) == N); /* all at once */
        close(go[1]);
        /* kill one or two at random moments: perhaps the recoverer, mid-recovery */
        for (int k = 0; k < 1 + round % 2; k++) {
            struct timespec ts = {0, (rand() % 4000) * 1000L};
            nanosleep(&ts, NULL);
            kill(kids[rand() % N], SIGKILL);
        }
        for (int i = 0; i < N; i++) {
            int st;
            waitpid(kids[i], &st, 0);
            if (WIFSIGNALED(st)) killed++;
            else if (WEXITSTATUS(st) != 0) bad++;
            else opened++;
        }
        /* whatever was killed, the file opens and verifies */
        strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
        CHECK(db);
        OK(strata_db_verify(db, E));
        blob_db b = {db, 0, 0};
        CHECK(object_count(&b) >= 1200);
        strata_db_close(db, NULL);
    }
    fprintf(stderr, "  12 rounds of 6 openers: %d ran, %d killed, %d errors other than BUSY\n",
            opened, killed, bad);
    CHECK(bad == 0);
}

/* Another process holds the open lock (as a long recovery would): an open waits up to its
 * timeout, then gives BUSY naming the option; once the lock goes, it opens. */
static void open_waits_then_busy(void) {
    const char *path = tl_path("slow.db");
    strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(db);
    strata_db_close(db, NULL);
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    int go[2], done[2];
    CHECK(pipe(go) == 0 && pipe(done) == 0);
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) { /* holds byte 2 until told */
        int fd = open(lock, O_RDWR);
        struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 2, .l_len = 1};
        char c = fd >= 0 && fcntl(fd, F_OFD_SETLK, &fl) == 0 ? 'y' : 'n';
        if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1) _exit(1);
        _exit(0);
    }
    char c = 0;
    CHECK(read(go[0], &c, 1) == 1 && c == 'y');
    strata_options o;
    strata_options_init(&o);
    o.open_timeout_ms = 150;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    EXPECT_CODE(strata_db_open(path, &o, &db, E), STRATA_ERR_BUSY);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    CHECK(ms >= 140 && ms < 2000);
    CHECK(strstr(tl_err.message, "open_timeout_ms") && strstr(tl_err.message, "slow.db"));
    CHECK(write(done[1], "x", 1) == 1);
    int st;
    waitpid(pid, &st, 0);
    OK(strata_db_open(path, &o, &db, E));
    strata_db_close(db, NULL);
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(opens_on_a_full_disk_fail_cleanly),
        TL_TEST(full_disk_then_delete_half_and_refill),
        TL_TEST(big_values_reuse_freed_runs),
        TL_TEST(opens_racing_recovery_see_only_busy),
        TL_TEST(open_waits_then_busy),
    };
    return tl_run("disk-full", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
