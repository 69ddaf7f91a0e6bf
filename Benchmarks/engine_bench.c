/*
 * engine_bench.c — the storage engine's own numbers, measured in one run on one file system:
 *   - small durable commits per second against raw fdatasync calls per second on a file in the
 *     same directory (how many syncs one commit costs);
 *   - the file size after 10,000 small commits, with no reader, with a reader pinned to the
 *     first version throughout, and after that reader lets go (and 10,000 more commits run);
 *   - churn: 4 MiB of live values of one size (1 KB, 4 KB, 10 KB, 100 KB, 1 MB), each
 *     replaced 16 times over in durable commits of about 64 KiB, no reader: the file against
 *     the live data (freed runs of pages must be reused, or the file grows without end);
 *   - the latency from a commit in one process to strata_db_wait_commit returning in another
 *     (median and 99th percentile of 200);
 *   - the first full scan after open (file in the page cache) of an 8 MiB and a 64 MiB file,
 *     with each page checked on first use (the default) and with strata_options.trust_pages:
 *     what checking every page once (its XXH3 checksum) costs a process that reads it all.
 * Rates are the median of 3 rounds. The side-by-side SQLite/LMDB harness builds on this.
 *
 * Usage: engine_bench [DIR [churn]]   (churn: only the churn rows)
 */
#include "strata.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median3(double v[3]) {
    qsort(v, 3, sizeof *v, cmp_double);
    return v[1];
}

static void die(const char *what, const strata_error *e) {
    fprintf(stderr, "%s: %s\n", what, e ? e->message : "");
    exit(1);
}

static void fresh(const char *path) {
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
    snprintf(lock, sizeof lock, "%s.log", path); /* the commit log */
    unlink(lock);
}

static strata_db_t *open_db(const char *path, strata_durability d) {
    strata_options o;
    strata_options_init(&o);
    o.durability = d;
    strata_db_t *db;
    strata_error e = {0};
    if (strata_db_open(path, &o, &db, &e)) die("open", &e);
    return db;
}

/* One small commit; *started (if asked) is when strata_txn_commit was called. */
static void small_commit_at(strata_db_t *db, uint64_t i, double *started) {
    strata_error e = {0};
    strata_txn_t *txn;
    strata_tree_t *t;
    uint8_t value[64];
    memset(value, (int)i, sizeof value);
    if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &e) ||
        strata_tree_open(txn, "objects", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, &e) ||
        strata_tree_put_int(t, i % 1000, value, sizeof value, &e))
        die("commit", &e);
    if (started) *started = now();
    if (strata_txn_commit(txn, &e)) die("commit", &e);
    strata_txn_free(txn);
}

static void small_commit(strata_db_t *db, uint64_t i) { small_commit_at(db, i, NULL); }

/* From strata_txn_commit being called in one process to strata_db_wait_commit returning in
 * another (the commit's own work included: the waiter can wake before the commit call returns,
 * so its return is no start to measure from): 200 NO_SYNC commits 2 ms apart, median and 99th
 * percentile. */
static void wake_latency(const char *path) {
    enum { N = 200 };
    fresh(path);
    strata_db_t *db = open_db(path, STRATA_DURABILITY_NO_SYNC);
    small_commit(db, 0);
    int fds[2];
    if (pipe(fds)) die("pipe", NULL);
    pid_t pid = fork();
    if (pid == 0) {
        strata_db_t *other = open_db(path, STRATA_DURABILITY_NO_SYNC);
        for (uint64_t i = 1; i <= N; i++) {
            struct timespec pause = {0, 2000000};
            nanosleep(&pause, NULL);
            double at;
            small_commit_at(other, i, &at);
            if (write(fds[1], &at, sizeof at) != sizeof at) _exit(3);
        }
        strata_db_close(other, NULL);
        _exit(0);
    }
    close(fds[1]);
    double lat[N];
    strata_db_info info;
    strata_error e = {0};
    if (strata_db_info_get(db, &info, &e)) die("info", &e);
    uint64_t seen = info.version;
    int got = 0;
    while (got < N) {
        uint64_t v;
        if (strata_db_wait_commit(db, seen, 5000, &v, &e)) die("wait", &e);
        double woke = now();
        /* Every commit this wake found counts, from its own call: on a busy machine two can land
         * before the waiter runs (waiting once a wake then left the last commit's wait to time
         * out). Each commit is one version. */
        for (uint64_t c = seen; c < v && got < N; c++, got++) {
            double at;
            if (read(fds[0], &at, sizeof at) != sizeof at) die("wake pipe", NULL);
            lat[got] = (woke - at) * 1e6;
        }
        seen = v;
    }
    close(fds[0]);
    waitpid(pid, NULL, 0);
    strata_db_close(db, NULL);
    fresh(path);
    qsort(lat, (size_t)got, sizeof *lat, cmp_double);
    printf("%-34s %12.1f us median, %.1f us 99th percentile (%d commits)\n",
           "commit call in another process -> wake", lat[got / 2], lat[got * 99 / 100], got);
    printf("bench wake median_us=%.1f p99_us=%.1f commits=%d\n", lat[got / 2], lat[got * 99 / 100], got);
}

static double fdatasync_rate(const char *dir, double seconds) {
    char path[512];
    snprintf(path, sizeof path, "%s/raw-sync.bin", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("raw file", NULL);
    uint8_t page[4096];
    memset(page, 1, sizeof page);
    if (ftruncate(fd, 1 << 20)) die("ftruncate", NULL);
    fdatasync(fd);
    long n = 0;
    double t0 = now();
    while (now() - t0 < seconds) {
        page[0] = (uint8_t)n;
        if (pwrite(fd, page, sizeof page, (off_t)(n % 64) * 4096) != (ssize_t)sizeof page) die("pwrite", NULL);
        if (fdatasync(fd)) die("fdatasync", NULL);
        n++;
    }
    double rate = (double)n / (now() - t0);
    close(fd);
    unlink(path);
    return rate;
}

static double commit_rate(const char *path, double seconds) {
    fresh(path);
    strata_db_t *db = open_db(path, STRATA_DURABILITY_FULL);
    for (uint64_t i = 0; i < 200; i++) small_commit(db, i); /* warm up: tree and free list */
    long n = 0;
    double t0 = now();
    while (now() - t0 < seconds) small_commit(db, (uint64_t)n++);
    double rate = (double)n / (now() - t0);
    strata_db_close(db, NULL);
    fresh(path);
    return rate;
}

static unsigned long long file_bytes(strata_db_t *db) {
    strata_db_info info;
    strata_error e = {0};
    if (strata_db_info_get(db, &info, &e)) die("info", &e);
    return (unsigned long long)info.file_size;
}

/* Churn: 4 MiB of live values of `size` bytes, replaced round-robin until 64 MiB were written
 * (commits of about 64 KiB, or one value); returns the file's bytes at the end. */
static unsigned long long churn(const char *path, size_t size) {
    fresh(path);
    strata_db_t *db = open_db(path, STRATA_DURABILITY_FULL);
    const size_t live = 4u << 20, written = 64u << 20;
    size_t count = live / size, per_commit = size >= (64u << 10) ? 1 : (64u << 10) / size;
    uint8_t *value = malloc(size);
    if (!value) die("churn", NULL);
    strata_error e = {0};
    for (size_t done = 0, next = 0; done < count + written / size; next++) {
        strata_txn_t *txn;
        strata_tree_t *t;
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &e) ||
            strata_tree_open(txn, "values", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, &e))
            die("churn", &e);
        for (size_t j = 0; j < per_commit; j++, done++) {
            memset(value, (int)(done + next), size);
            if (strata_tree_put_int(t, (int64_t)(done % count), value, size, &e)) die("churn put", &e);
        }
        if (strata_txn_commit(txn, &e)) die("churn commit", &e);
        strata_txn_free(txn);
    }
    free(value);
    unsigned long long bytes = file_bytes(db);
    strata_db_info info;
    if (getenv("CHURN_VERBOSE") && strata_db_info_get(db, &info, &e) == STRATA_OK)
        fprintf(stderr, "  %zu-byte values: %llu pages, %llu free\n", size,
                (unsigned long long)info.page_count, (unsigned long long)info.free_pages);
    strata_db_close(db, NULL);
    fresh(path);
    return bytes;
}

static void churn_rows(const char *path) {
    static const size_t sizes[] = {1000, 4000, 10000, 100000, 1000000};
    static const char *names[] = {"1 KB", "4 KB", "10 KB", "100 KB", "1 MB"};
    for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
        unsigned long long bytes = churn(path, sizes[i]);
        size_t live = (4u << 20) / sizes[i] * sizes[i];
        char what[64];
        snprintf(what, sizeof what, "churn, %s values, 4 MiB live", names[i]);
        printf("%-34s %12llu bytes (%.2fx the live data)\n", what, bytes, (double)bytes / (double)live);
        printf("bench churn value_bytes=%zu live_bytes=%zu file_bytes=%llu ratio=%.3f\n", sizes[i],
               live, bytes, (double)bytes / (double)live);
    }
}

/* A database of about `mib` MiB: objects {n: int, s: string of 40..120 bytes}. */
static void build_scan_file(const char *path, unsigned mib) {
    fresh(path);
    strata_db_t *db = open_db(path, STRATA_DURABILITY_NO_SYNC);
    strata_error e = {0};
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t cn, cs;
    if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e) || strata_table_create(w, "O", &t, &e) ||
        strata_table_add_property(t, "n", STRATA_TYPE_INT, 0, NULL, &cn, &e) ||
        strata_table_add_property(t, "s", STRATA_TYPE_STRING, 0, NULL, &cs, &e) ||
        strata_txn_commit(w, &e))
        die("scan schema", &e);
    strata_txn_free(w);
    char text[128];
    for (uint64_t i = 0; file_bytes(db) < (unsigned long long)mib << 20; i++) {
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e) || strata_table_open(w, "O", &t, &e))
            die("scan fill", &e);
        for (int j = 0; j < 5000; j++) {
            strata_key_t k;
            size_t len = 40 + (i * 5000 + (uint64_t)j) % 80;
            memset(text, 'a' + j % 26, len);
            strata_value n = {.type = STRATA_TYPE_INT, .u.i = (int64_t)(i * 5000 + (uint64_t)j)};
            strata_value sv = {.type = STRATA_TYPE_STRING, .u.bytes = {text, len}};
            if (strata_obj_create(t, &k, &e) || strata_obj_set(t, k, cn, &n, &e) ||
                strata_obj_set(t, k, cs, &sv, &e))
                die("scan fill", &e);
        }
        if (strata_txn_commit(w, &e)) die("scan commit", &e);
        strata_txn_free(w);
    }
    strata_db_close(db, NULL);
}

/* Open a new handle and read every page a query needs: a scan of both properties. */
static double first_scan(const char *path, bool trust) {
    strata_options o;
    strata_options_init(&o);
    o.map_size = 1ull << 32;
    o.trust_pages = trust;
    strata_db_t *db;
    strata_error e = {0};
    double t0 = now();
    if (strata_db_open(path, &o, &db, &e)) die("scan open", &e);
    strata_txn_t *r;
    strata_query_t *q;
    uint64_t n;
    if (strata_txn_begin(db, STRATA_TXN_READ, &r, &e) ||
        strata_query_compile(r, "O", "n >= 0 AND s BEGINSWITH 'q'", &q, &e) ||
        strata_query_count(q, r, NULL, 0, &n, &e))
        die("scan", &e);
    double t = now() - t0;
    strata_query_free(q);
    strata_txn_free(r);
    strata_db_close(db, NULL);
    return t;
}

static void scan_cost(const char *path, unsigned mib) {
    build_scan_file(path, mib);
    double checked[5], trusted[5];
    for (int r = 0; r < 5; r++) { /* interleaved, the page cache warm from the build */
        trusted[r] = first_scan(path, true);
        checked[r] = first_scan(path, false);
    }
    qsort(checked, 5, sizeof *checked, cmp_double);
    qsort(trusted, 5, sizeof *trusted, cmp_double);
    double c = checked[2], t = trusted[2];
    char what[64];
    snprintf(what, sizeof what, "first scan after open, %u MiB", mib);
    printf("%-34s %9.2f ms checked, %.2f ms trusted (%+.0f%%)\n", what, c * 1e3, t * 1e3,
           (c / t - 1) * 100);
    printf("bench first_scan mib=%u checked_ms=%.3f trusted_ms=%.3f ratio=%.3f\n", mib, c * 1e3,
           t * 1e3, c / t);
    fresh(path);
}

/* The change set of a one-object commit on a table of n objects (strata_changes_get): the
 * median time of 21 computations and the pages read. Flat in n is the goal (issue 27). */
static void change_set_cost(const char *path, size_t n) {
    fresh(path);
    strata_db_t *db = open_db(path, STRATA_DURABILITY_NO_SYNC);
    strata_error e = {0};
    strata_txn_t *w, *a, *b;
    strata_table_t *t;
    strata_col_t age, name;
    if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e) || strata_table_create(w, "Person", &t, &e) ||
        strata_table_add_property(t, "age", STRATA_TYPE_INT, 0, NULL, &age, &e) ||
        strata_table_add_property(t, "name", STRATA_TYPE_STRING, 0, NULL, &name, &e) || strata_txn_commit(w, &e))
        die("schema", &e);
    strata_txn_free(w);
    for (size_t done = 0; done < n;) {
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e) || strata_table_open(w, "Person", &t, &e)) die("fill", &e);
        for (size_t end = done + 50000 < n ? done + 50000 : n; done < end; done++) {
            strata_key_t k;
            strata_value v = {.type = STRATA_TYPE_INT, .u.i = (int64_t)(done % 90)};
            strata_value s = {.type = STRATA_TYPE_STRING, .u.bytes = {"张三", 6}};
            if (strata_obj_create(t, &k, &e) || strata_obj_set(t, k, age, &v, &e) || strata_obj_set(t, k, name, &s, &e))
                die("fill", &e);
        }
        if (strata_txn_commit(w, &e)) die("fill", &e);
        strata_txn_free(w);
    }
    if (strata_txn_begin(db, STRATA_TXN_READ, &a, &e) || strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e) ||
        strata_table_open(w, "Person", &t, &e) ||
        strata_obj_set(t, (strata_key_t)(n / 2), age, &(strata_value){.type = STRATA_TYPE_INT, .u.i = -1}, &e) ||
        strata_txn_commit(w, &e) || strata_txn_begin(db, STRATA_TXN_READ, &b, &e))
        die("change", &e);
    strata_txn_free(w);
    double us[21];
    uint64_t pages = 0;
    for (int r = 0; r < 21; r++) {
        strata_changes_t *c;
        double t0 = now();
        if (strata_changes_get(a, b, "Person", &c, &e)) die("changes", &e);
        us[r] = (now() - t0) * 1e6;
        if (strata_changes_count(c, STRATA_CHANGE_MODIFIED) != 1) die("changes: not one modified object", NULL);
        pages = strata_changes_pages_read(c);
        strata_changes_free(c);
    }
    strata_txn_free(a);
    strata_txn_free(b);
    strata_db_close(db, NULL);
    fresh(path);
    qsort(us, 21, sizeof *us, cmp_double);
    printf("%-34s %12.1f us, %llu pages read (%zu objects)\n", "change set of a one-object commit", us[10],
           (unsigned long long)pages, n);
    printf("bench changes objects=%zu median_us=%.1f pages=%llu\n", n, us[10], (unsigned long long)pages);
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : ".";
    char path[512];
    snprintf(path, sizeof path, "%s/engine-bench.db", dir);
    if (argc > 2 && strcmp(argv[2], "churn") == 0) { /* only the churn rows */
        churn_rows(path);
        return 0;
    }

    double sync_rates[3], commit_rates[3];
    for (int r = 0; r < 3; r++) {
        sync_rates[r] = fdatasync_rate(dir, 1.0);
        commit_rates[r] = commit_rate(path, 1.0);
    }
    double syncs = median3(sync_rates), commits = median3(commit_rates);
    printf("%-34s %12.0f /s\n", "raw fdatasync (4 KiB pwrite + sync)", syncs);
    printf("%-34s %12.0f /s\n", "small durable commits", commits);
    printf("%-34s %12.2f\n", "syncs per commit (ratio)", syncs / commits);
    printf("bench commit strata=%.0f unit=commits/s fdatasync_per_s=%.0f vs_fdatasync=%.3f\n",
           commits, syncs, commits / syncs);

    /* Growth: 10,000 small durable commits. NO_SYNC also holds back the pages freed since its
     * last sync (at most 256 commits' worth), so it is measured on its own line. */
    fresh(path);
    strata_db_t *db = open_db(path, STRATA_DURABILITY_NO_SYNC);
    for (uint64_t i = 0; i < 10000; i++) small_commit(db, i);
    unsigned long long no_reader_nosync = file_bytes(db);
    strata_db_close(db, NULL);

    fresh(path);
    db = open_db(path, STRATA_DURABILITY_FULL);
    for (uint64_t i = 0; i < 10000; i++) small_commit(db, i);
    unsigned long long no_reader = file_bytes(db);
    strata_db_close(db, NULL);

    fresh(path);
    db = open_db(path, STRATA_DURABILITY_FULL);
    small_commit(db, 0);
    strata_txn_t *pin;
    strata_error e = {0};
    if (strata_txn_begin(db, STRATA_TXN_READ, &pin, &e)) die("pin", &e);
    for (uint64_t i = 1; i <= 10000; i++) small_commit(db, i);
    unsigned long long pinned = file_bytes(db);
    strata_txn_free(pin);
    for (uint64_t i = 0; i < 10000; i++) small_commit(db, i);
    unsigned long long released = file_bytes(db);
    strata_db_info info;
    strata_db_info_get(db, &info, &e);
    strata_db_close(db, NULL);
    fresh(path);
    printf("%-34s %12llu bytes\n", "10,000 commits, no reader", no_reader);
    printf("%-34s %12llu bytes\n", "  the same in NO_SYNC mode", no_reader_nosync);
    printf("%-34s %12llu bytes\n", "10,000 commits, reader pinned", pinned);
    printf("%-34s %12llu bytes (%llu of %llu pages free)\n", "then released + 10,000 more",
           released, (unsigned long long)info.free_pages, (unsigned long long)info.page_count);
    printf("bench growth commits=10000 no_reader_bytes=%llu no_reader_nosync_bytes=%llu "
           "pinned_reader_bytes=%llu after_release_bytes=%llu\n", no_reader, no_reader_nosync,
           pinned, released);
    wake_latency(path);
    change_set_cost(path, 10000);
    change_set_cost(path, 100000);
    change_set_cost(path, 1000000);
    churn_rows(path);
    scan_cost(path, 8);
    scan_cost(path, 64);
    return 0;
}
