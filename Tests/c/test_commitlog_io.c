/*
 * test_commitlog_io.c — how the commit log meets the file system (os.c, commitlog.c): with the
 * default I/O table the log bypasses the page cache (O_DIRECT); a device that refuses a direct
 * write (EINVAL: its blocks are bigger than the log's) must turn that off and go on through the
 * page cache, losing no record. No device here has such blocks, so the refusal is injected into
 * the handle's I/O table after the log was opened for direct I/O. White-box: built with the
 * core's sources (it reads the handle's log state).
 */
#include "testlib.h"

#include "storage/storage.h"

#include <errno.h>
#include <liburing.h>
#include <fcntl.h>
#include <pthread.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

/* One write transaction: key `key` of tree "t" holds `val` (and, with `ballast`, key
 * BALLAST_KEY + key of tree "b" a value of 40 KiB: a commit of more than ten pages); committed
 * with a sync, or (unsynced) with strata_txn_commit_unsynced. */
#define BALLAST_KEY 1000000u
static int put_ballast(strata_db_t *db, uint64_t key, uint64_t val, bool unsynced, bool ballast) {
    static uint8_t big[40 << 10];
    strata_txn_t *txn;
    strata_tree_t *t;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E);
    if (rc) return rc;
    rc = strata_tree_open(txn, "t", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E);
    if (rc == STRATA_OK) rc = strata_tree_put_int(t, key, &val, sizeof val, E);
    if (rc == STRATA_OK && ballast) {
        memset(big, (int)(key & 0xff), sizeof big);
        rc = strata_tree_open(txn, "b", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E);
        if (rc == STRATA_OK) rc = strata_tree_put_int(t, BALLAST_KEY + key, big, sizeof big, E);
    }
    if (rc == STRATA_OK) rc = unsynced ? strata_txn_commit_unsynced(txn, E) : strata_txn_commit(txn, E);
    strata_txn_free(txn);
    return rc;
}

static int put(strata_db_t *db, uint64_t key, uint64_t val, bool unsynced) {
    return put_ballast(db, key, val, unsynced, false);
}

static int put_one(strata_db_t *db, uint64_t key, uint64_t val) { return put(db, key, val, false); }

static bool holds(strata_txn_t *r, uint64_t key, uint64_t val) {
    strata_tree_t *t;
    const void *v;
    size_t len;
    uint64_t got;
    if (strata_tree_open(r, "t", STRATA_KEY_INT, 0, &t, E) ||
        strata_tree_get_int(t, key, &v, &len, E) || len != 8)
        return false;
    memcpy(&got, v, 8);
    return got == val;
}

/* Refuses every write to the handle's log while it is open for direct I/O, as a device with
 * bigger blocks would (EINVAL); passes everything else to the default table. */
typedef struct refusing {
    strata_db_t *db;
    int refused;
} refusing;

static ssize_t refusing_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off) {
    refusing *r = ctx;
    int fl = fcntl(fd, F_GETFL);
    if (fd == r->db->file.log_fd && fl >= 0 && (fl & O_DIRECT)) {
        r->refused++;
        errno = EINVAL;
        return -1;
    }
    return strata_io_default()->pwrite(NULL, fd, buf, len, off);
}

static bool direct_io_supported_here(void) {
    const char *probe = tl_path("probe");
    int fd = open(probe, O_RDWR | O_CREAT | O_DIRECT, 0644);
    if (fd >= 0) close(fd);
    unlink(probe);
    return fd >= 0;
}

/* Whether a direct write here can carry its own sync (pwritev2 with RWF_DSYNC: Linux 4.7). */
static bool dsync_supported_here(void) {
#ifdef RWF_DSYNC
    const char *probe = tl_path("probe-dsync");
    int fd = open(probe, O_RDWR | O_CREAT | O_DIRECT, 0644);
    bool ok = false;
    void *block = NULL;
    if (fd >= 0 && posix_memalign(&block, 4096, 4096) == 0) {
        memset(block, 0, 4096);
        struct iovec v = {block, 4096};
        ok = pwritev2(fd, &v, 1, 0, RWF_DSYNC) == 4096;
    }
    free(block);
    if (fd >= 0) close(fd);
    unlink(probe);
    return ok;
#else
    return false;
#endif
}

/* A test's files: the database, its copy from before the logged commits, and their logs. */
typedef struct cut_files {
    char path[600], cut[600], log[620], cut_log[620];
} cut_files;

/* For the test named `name`, on a file system with direct I/O: its database with one durable
 * version (key 0 = 100), copied to f->cut — the file a power cut that loses every later page
 * falls back to — then opened again with a logged commit made (key 1 = 101; the log opened for
 * direct I/O) into *out; NULL when the test is skipped or a step failed. */
static void direct_logged(const char *name, cut_files *f, strata_db_t **out) {
    *out = NULL;
    if (!direct_io_supported_here()) {
        fprintf(stderr, "  (no direct I/O in %s; skipped)\n", tl_dir);
        return;
    }
    char file[64];
    snprintf(file, sizeof file, "%s.db", name);
    snprintf(f->path, sizeof f->path, "%s", tl_path(file));
    snprintf(file, sizeof file, "%s_cut.db", name);
    snprintf(f->cut, sizeof f->cut, "%s", tl_path(file));
    snprintf(f->log, sizeof f->log, "%s.log", f->path);
    snprintf(f->cut_log, sizeof f->cut_log, "%s.log", f->cut);
    strata_db_t *db = tl_open_db(f->path, STRATA_DURABILITY_FULL);
    CHECK(db);
    OK(put_one(db, 0, 100));
    OK(strata_db_close(db, E));
    CHECK(tl_copy_file(f->path, f->cut));
    db = tl_open_db(f->path, STRATA_DURABILITY_FULL);
    CHECK(db);
    OK(put_one(db, 1, 101));
    *out = db;
    CHECK(db->file.log_fd >= 0 && db->file.log_direct); /* (the logged commit opened it) */
}

/* The log now, copied beside the file from before the logged commits, rebuilds db's latest
 * version there: keys 0..keys-1 hold 100 + key, and the file verifies. Closes db. */
static void cut_replays(strata_db_t *db, const cut_files *f, uint64_t keys) {
    const char *log = f->log, *cut = f->cut, *cut_log = f->cut_log;
    strata_txn_t *rd;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &rd, E));
    uint64_t version = strata_txn_version(rd);
    strata_txn_free(rd);
    CHECK(tl_copy_file(log, cut_log));
    OK(strata_db_close(db, E));

    strata_db_t *l = tl_open_db(cut, STRATA_DURABILITY_FULL);
    CHECK(l);
    if (!l) return;
    OK(strata_txn_begin(l, STRATA_TXN_READ, &rd, E));
    CHECK(strata_txn_version(rd) == version);
    for (uint64_t k = 0; k < keys; k++) CHECK(holds(rd, k, 100 + k));
    strata_txn_free(rd);
    OK(strata_db_verify(l, E));
    OK(strata_db_close(l, E));
}

/* Records written after the refusal go through the page cache and replay like any other: a
 * power cut that loses every page of the logged commits (the file as it was before them) is
 * rebuilt from the log, including the records from before and after the switch. */
static void test_a_refused_direct_log_write_goes_through_the_page_cache(void) {
    cut_files f;
    strata_db_t *db;
    direct_logged("refused", &f, &db);
    if (!db) return;
    refusing r = {db, 0};
    db->file.io.ctx = &r;
    db->file.io.pwrite = refusing_pwrite;
    for (uint64_t k = 2; k < 30; k++) OK(put_one(db, k, 100 + k));
    CHECK(r.refused == 1); /* refused once, then never tried again */
    CHECK(!db->file.log_direct);
    int fl = fcntl(db->file.log_fd, F_GETFL);
    CHECK(fl >= 0 && !(fl & O_DIRECT));
    cut_replays(db, &f, 30);
}

/* Unsynced records (group commit) go through the page cache, synced ones direct, into the same
 * blocks (a record's first block is the last one's): a copy of the file from before them all and
 * of the log after the syncs is rebuilt to the latest version with every value — the direct
 * writes and the syncs saw the cached records. */
static void test_unsynced_records_go_through_the_page_cache(void) {
    cut_files f;
    strata_db_t *db;
    direct_logged("cached", &f, &db); /* synced records: direct (the header block alone cached) */
    if (!db) return;
    uint64_t covered = 0;
    for (uint64_t k = 2; k < 60; k++) {
        OK(put(db, k, 100 + k, k % 3 != 0));
        if (k % 7 == 0) OK(strata_db_sync_commits(db, &covered, E));
    }
    CHECK(db->file.log_cached_fd >= 0 && db->file.log_cached_fd != db->file.log_fd);
    int fl = fcntl(db->file.log_cached_fd, F_GETFL), dfl = fcntl(db->file.log_fd, F_GETFL);
    CHECK(fl >= 0 && !(fl & O_DIRECT) && dfl >= 0 && (dfl & O_DIRECT));
    OK(put(db, 60, 160, true)); /* the last one unsynced, then one sync covers the rest */
    OK(strata_db_sync_commits(db, &covered, E));
    strata_txn_t *rd;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &rd, E));
    uint64_t version = strata_txn_version(rd);
    strata_txn_free(rd);
    CHECK(covered == version);
    cut_replays(db, &f, 61);
}

/* Counts the fdatasyncs of a handle's log; passes every call to the default table. */
typedef struct counting {
    strata_db_t *db;
    int log_syncs;
} counting;

static int counting_fdatasync(void *ctx, int fd) {
    counting *c = ctx;
    if (fd == c->db->file.log_fd) c->log_syncs++;
    return strata_io_default()->fdatasync(NULL, fd);
}

/* Whether this kernel lets this process use io_uring (a sandbox may refuse it). */
static bool io_uring_here(void) {
    struct io_uring probe;
    if (io_uring_queue_init(2, &probe, 0) != 0) return false;
    io_uring_queue_exit(&probe);
    return true;
}

/* A synced record goes out on its own — with its sync in one write (RWF_DSYNC, no fdatasync),
 * or for a commit of many pages begun before its pages and synced after them (io_uring) — only
 * when no other write to the log awaits a sync: after an unsynced record (group commit), the
 * next synced commit writes its record plainly and syncs the log, which makes the cached record
 * durable too — written on its own, the synced record could survive a power cut that took the
 * one before it, and the log would stop short of it. The log written either way replays onto
 * the file from before every record. Small commits, then (where io_uring is) big ones. */
static void synced_records_on_their_own(const char *name, bool big) {
    cut_files f;
    strata_db_t *db;
    direct_logged(name, &f, &db);
    if (!db) return;
    counting c = {db, 0};
    db->file.io.ctx = &c;
    db->file.io.fdatasync = counting_fdatasync;
    uint64_t written = db->file.log_synced_writes, begun = db->file.log_ring_writes;
    int plain = 0; /* records written plainly, then synced */
    /* on its own: a begun write and an fdatasync each (big), else a synced write each */
#define ALONE(k)                                                                      \
    CHECK(big ? db->file.log_ring_writes == begun + (k) && c.log_syncs == (k) + plain  \
              : db->file.log_synced_writes == written + (k) && c.log_syncs == plain && \
                    db->file.log_ring_writes == begun)
    OK(put_ballast(db, 2, 102, false, big)); /* follows a synced record: on its own */
    ALONE(1);
    OK(put_ballast(db, 3, 103, true, big)); /* unsynced: through the page cache, no sync */
    ALONE(1);
    OK(put_ballast(db, 4, 104, false, big)); /* follows an unsynced record: plain, then synced */
    plain = 1;
    ALONE(1);
    OK(put_ballast(db, 5, 105, false, big)); /* everything before it synced again: on its own */
    ALONE(2);
#undef ALONE
    cut_replays(db, &f, 6);
}

static void test_a_synced_record_goes_out_with_its_sync_unless_another_awaits_one(void) {
    if (!dsync_supported_here()) {
        fprintf(stderr, "  (no RWF_DSYNC writes in %s; skipped)\n", tl_dir);
        return;
    }
    synced_records_on_their_own("dsync", false);
    if (io_uring_here()) synced_records_on_their_own("dsync_big", true);
    else fprintf(stderr, "  (no io_uring here: big commits' records not begun first; skipped)\n");
}

typedef struct syncing {
    strata_db_t *db;
    uint64_t covered;
    int rc;
    _Atomic bool done;
} syncing;

static void *sync_commits_thread(void *arg) {
    syncing *s = arg;
    strata_error e;
    s->rc = strata_db_sync_commits(s->db, &s->covered, &e);
    atomic_store(&s->done, true);
    return NULL;
}

/* strata_db_sync_commits while another thread holds the writer lock (in the middle of a write
 * transaction) returns without waiting for it when there is nothing to sync, or only the log:
 * after the file's creation (its version durable), after a synced commit, and after a log sync
 * already covering the latest version. Only an unlogged latest version takes the writer lock. */
static void test_sync_commits_does_not_wait_for_the_writer(void) {
    strata_db_t *db = tl_open_db(tl_path("nowait.db"), STRATA_DURABILITY_FULL);
    CHECK(db);
    for (int step = 0; step < 4; step++) {
        if (step == 1) OK(put_one(db, 1, 1));   /* synced (logged) */
        if (step == 2) OK(put(db, 2, 2, true)); /* pending: one log sync, without the lock */
        /* step 3: that sync covers it: nothing to do */
        strata_txn_t *w;
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
        syncing s = {.db = db};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, sync_commits_thread, &s) == 0);
        for (int i = 0; i < 500 && !atomic_load(&s.done); i++) usleep(10000);
        bool returned = atomic_load(&s.done);
        strata_txn_abort(w); /* (lets a waiting one finish) */
        pthread_join(t, NULL);
        strata_txn_free(w);
        if (!returned) fprintf(stderr, "  step %d: sync_commits waited for the writer\n", step);
        CHECK(returned);
        CHECK(s.rc == STRATA_OK);
        strata_txn_t *rd;
        OK(strata_txn_begin(db, STRATA_TXN_READ, &rd, E));
        CHECK(s.covered == strata_txn_version(rd));
        strata_txn_free(rd);
    }
    OK(strata_db_close(db, E));
}

/* A new object of T holding string s in col. */
static int add_string(strata_table_t *t, strata_col_t col, const char *s) {
    strata_key_t k;
    strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
    int rc = strata_obj_create(t, &k, E);
    return rc ? rc : strata_obj_set(t, k, col, &v, E);
}

/* A file at path with table T of n objects, each holding fmt's string for its number in
 * property s (*col; keys[i] its key when keys is given), committed at once; closed, copied to
 * cut, and open again (*out; NULL after a failed check). */
static void strings_file(const char *path, const char *cut, int n, const char *fmt,
                         strata_key_t *keys, strata_col_t *col, strata_db_t **out) {
    *out = NULL;
    strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(db);
    strata_txn_t *txn;
    strata_table_t *t;
    char s[64];
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
    OK(strata_table_create(txn, "T", &t, E));
    OK(strata_table_add_property(t, "s", STRATA_TYPE_STRING, 0, NULL, col, E));
    for (int i = 0; i < n; i++) {
        snprintf(s, sizeof s, fmt, i);
        strata_key_t k;
        strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, *col, &v, E));
        if (keys) keys[i] = k;
    }
    OK(strata_txn_commit(txn, E));
    strata_txn_free(txn);
    OK(strata_db_close(db, E));
    CHECK(tl_copy_file(path, cut));
    *out = tl_open_db(path, STRATA_DURABILITY_FULL);
}

/* After one-object commits whose longest record took `longest` bytes (one block of the log at
 * most): *db's log goes with the copy at cut made before them (the pages they wrote lost, as
 * after a power cut), *db closes, and the copy opens, replaying the log: *db becomes it, with
 * a read transaction (*r) on its table T (*t) of *count objects (*r NULL after a failed
 * check). */
static void replayed_copy(strata_db_t **db, const char *path, const char *cut, uint64_t longest,
                          strata_txn_t **r, strata_table_t **t, uint64_t *count) {
    *r = NULL;
    char log[600], cut_log[600];
    snprintf(log, sizeof log, "%s.log", path);
    snprintf(cut_log, sizeof cut_log, "%s.log", cut);
    printf("  longest record: %llu bytes\n", (unsigned long long)longest);
    CHECK(longest > 0 && longest <= 4096);
    CHECK(tl_copy_file(log, cut_log));
    OK(strata_db_close(*db, E));
    *db = tl_open_db(cut, STRATA_DURABILITY_FULL);
    CHECK(*db);
    strata_txn_t *rd;
    OK(strata_txn_begin(*db, STRATA_TXN_READ, &rd, E));
    OK(strata_table_open(rd, "T", t, E));
    OK(strata_table_size(*t, count, E));
    *r = rd;
}

/* A string column's page (3.5 KB of 120 strings of 26 bytes): appending one object moves the
 * element data after the new offset by 4 bytes. Logged, those bytes are a copy from the page's
 * old copy, not literal bytes: each one-object commit's record fits one block of the log (as
 * literal bytes it took 4,184 bytes: two). A power cut that loses every page after the durable
 * version is rebuilt from the log, copies and all. (Up to 128 objects: their strings fill the
 * page at ~134, and the commit that starts the next cluster logs its new page whole.) */
static void test_moved_bytes_are_logged_as_copies_and_replayed(void) {
    const char *path = tl_path("moved.db"), *cut = tl_path("moved_cut.db");
    char s[32];
    strata_col_t col;
    strata_db_t *db;
    strings_file(path, cut, 120, "value %04d of 26 chars...", NULL, &col, &db);
    CHECK(db);
    strata_txn_t *txn;
    strata_table_t *t;
    uint64_t longest = 0;
    for (int i = 120; i < 128; i++) { /* the page holds them all (one more cluster: a new page) */
        uint64_t end = db->log_tail_end;
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
        OK(strata_table_open(txn, "T", &t, E));
        snprintf(s, sizeof s, "value %04d of 26 chars...", i);
        OK(add_string(t, col, s));
        OK(strata_txn_commit(txn, E));
        strata_txn_free(txn);
        if (i > 120 && db->log_tail_end - end > longest) longest = db->log_tail_end - end;
    }
    strata_txn_t *r;
    uint64_t count = 0;
    replayed_copy(&db, path, cut, longest, &r, &t, &count);
    CHECK(r);
    CHECK(count == 128);
    int i = 0;
    for (strata_key_t key = 0; i < 128 && key < 1000; key++) {
        strata_value v;
        if (strata_obj_get(t, key, col, &v, NULL)) continue;
        snprintf(s, sizeof s, "value %04d of 26 chars...", i++);
        CHECK(v.type == STRATA_TYPE_STRING && v.u.bytes.len == strlen(s) &&
              !memcmp(v.u.bytes.data, s, strlen(s)));
    }
    CHECK(i == 128);
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Deleting moves bytes the other way: the strings after a deleted one's move back (28 bytes,
 * their offsets 4), near the page's start and in its middle. Each one-object commit's record
 * takes copies from the old page at those shifts (one block of the log), and a power cut that
 * loses every page after the durable version is rebuilt from the log. */
static void test_bytes_moved_back_by_deletes_are_logged_as_copies(void) {
    const char *path = tl_path("moved_back.db"), *cut = tl_path("moved_back_cut.db");
    char s[32];
    strata_col_t col;
    strata_key_t keys[110];
    strata_db_t *db;
    strings_file(path, cut, 110, "value %04d of 28 chars......", keys, &col, &db);
    CHECK(db);
    strata_txn_t *txn;
    strata_table_t *t;
    bool gone[110] = {false};
    static const int victims[] = {0, 55, 1, 56, 2, 100, 3, 57};
    uint64_t longest = 0;
    for (size_t i = 0; i < sizeof victims / sizeof *victims; i++) {
        uint64_t end = db->log_tail_end;
        OK(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E));
        OK(strata_table_open(txn, "T", &t, E));
        OK(strata_obj_delete(t, keys[victims[i]], E));
        gone[victims[i]] = true;
        OK(strata_txn_commit(txn, E));
        strata_txn_free(txn);
        if (i > 0 && db->log_tail_end - end > longest) longest = db->log_tail_end - end;
    }
    strata_txn_t *r;
    uint64_t count = 0;
    replayed_copy(&db, path, cut, longest, &r, &t, &count);
    CHECK(r);
    CHECK(count == 110 - sizeof victims / sizeof *victims);
    for (int i = 0; i < 110; i++) {
        strata_value v;
        int rc = strata_obj_get(t, keys[i], col, &v, NULL);
        CHECK(gone[i] ? rc == STRATA_ERR_NOT_FOUND : rc == STRATA_OK);
        if (gone[i]) continue;
        snprintf(s, sizeof s, "value %04d of 28 chars......", i);
        CHECK(v.type == STRATA_TYPE_STRING && v.u.bytes.len == strlen(s) &&
              !memcmp(v.u.bytes.data, s, strlen(s)));
    }
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* A synced record's write is begun (io_uring) before the commit writes its pages, which go into
 * the file while the device writes the record (then the log is synced); the log written so
 * replays onto the file from before every record. When the pages' write fails while the
 * record's is under way, the commit fails and the record is retracted at once: a writer that
 * dies right after (a child that exits without closing) leaves a file whose recovery shows the
 * version before it. */
static void test_the_pages_go_out_while_the_record_is_written(void) {
    cut_files f;
    strata_db_t *db;
    if (!dsync_supported_here()) {
        fprintf(stderr, "  (no RWF_DSYNC writes in %s; skipped)\n", tl_dir);
        return;
    }
    direct_logged("ring", &f, &db);
    if (!db) return;
    if (!io_uring_here()) { /* (a kernel or sandbox without it) */
        fprintf(stderr, "  (no io_uring here: records written after the pages; skipped)\n");
        OK(strata_db_close(db, E));
        return;
    }
    uint64_t begun = db->file.log_ring_writes;
    for (uint64_t k = 2; k < 30; k++) OK(put_ballast(db, k, 100 + k, false, k % 2 == 0));
    CHECK(db->file.log_ring_writes == begun + 14); /* the big commits' (not the few pages') */
    cut_replays(db, &f, 30);

    const char *path = tl_path("ring_fails.db");
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) { /* two commits, then one whose pages fail (its descriptor made read-only) */
        db = tl_open_db(path, STRATA_DURABILITY_FULL);
        if (!db || put_one(db, 0, 100) || put_ballast(db, 1, 101, false, true)) _exit(3);
        int ro = open(path, O_RDONLY);
        uint64_t before = db->file.log_ring_writes;
        if (ro < 0 || dup2(ro, db->file.fd) < 0) _exit(4);
        strata_error e = {0};
        strata_txn_t *txn;
        strata_tree_t *t;
        uint64_t v = 102;
        static uint8_t big[40 << 10];
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &e) ||
            strata_tree_open(txn, "t", STRATA_KEY_INT, 0, &t, &e) ||
            strata_tree_put_int(t, 2, &v, sizeof v, &e) ||
            strata_tree_open(txn, "b", STRATA_KEY_INT, 0, &t, &e) ||
            strata_tree_put_int(t, BALLAST_KEY + 2, big, sizeof big, &e)) /* (many pages) */
            _exit(5);
        int rc = strata_txn_commit(txn, &e);
        bool named = strstr(e.message, "ring_fails.db") != NULL;
        _exit(rc && named && db->file.log_ring_writes == before + 1 ? 0 : 6); /* dies: no close */
    }
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    strata_db_t *again = tl_open_db(path, STRATA_DURABILITY_FULL); /* recovers (the log) */
    CHECK(again);
    if (again) {
        strata_txn_t *rd;
        strata_tree_t *t;
        const void *v;
        size_t len;
        OK(strata_txn_begin(again, STRATA_TXN_READ, &rd, E));
        CHECK(holds(rd, 0, 100) && holds(rd, 1, 101));
        OK(strata_tree_open(rd, "t", STRATA_KEY_INT, 0, &t, E));
        CHECK(strata_tree_get_int(t, 2, &v, &len, E) == STRATA_ERR_NOT_FOUND);
        strata_txn_free(rd);
        OK(strata_db_verify(again, E));
        OK(put_one(again, 2, 102));
        OK(strata_db_close(again, E));
    }
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(test_a_refused_direct_log_write_goes_through_the_page_cache),
        TL_TEST(test_unsynced_records_go_through_the_page_cache),
        TL_TEST(test_a_synced_record_goes_out_with_its_sync_unless_another_awaits_one),
        TL_TEST(test_the_pages_go_out_while_the_record_is_written),
        TL_TEST(test_sync_commits_does_not_wait_for_the_writer),
        TL_TEST(test_moved_bytes_are_logged_as_copies_and_replayed),
        TL_TEST(test_bytes_moved_back_by_deletes_are_logged_as_copies),
    };
    return tl_run("commitlog-io", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
