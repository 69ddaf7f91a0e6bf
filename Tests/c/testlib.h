/*
 * testlib.h — a small test harness for the C tests: TEST functions, CHECK macros that name the
 * failing expression and line, temporary directories, opening a database and copying its files,
 * and the closing "N passed, N failed" line.
 */
#ifndef STRATA_TESTLIB_H
#define STRATA_TESTLIB_H

#include "strata.h"
#include "testkey.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int tl_failed_checks;
/* The shared error out-parameter the OK macro prints. */
static _Thread_local strata_error tl_err; /* per thread: tests read it from threads too */
#define E (&tl_err)
static char tl_dir[256];

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) {                                                               \
            fprintf(stderr, "  FAIL %s:%d: %s\n", __FILE__, __LINE__, #cond);        \
            tl_failed_checks++;                                                      \
            return;                                                                  \
        }                                                                            \
    } while (0)

#define OK(expr)                                                                     \
    do {                                                                             \
        int rc_ = (expr);                                                            \
        if (rc_ != STRATA_OK) {                                                      \
            fprintf(stderr, "  FAIL %s:%d: %s returned %s: %s\n", __FILE__, __LINE__, \
                    #expr, strata_status_name(rc_), tl_err.message);                 \
            tl_failed_checks++;                                                      \
            return;                                                                  \
        }                                                                            \
    } while (0)

#define EXPECT_CODE(expr, code)                                                      \
    do {                                                                             \
        int rc_ = (expr);                                                            \
        if (rc_ != (code)) {                                                         \
            fprintf(stderr, "  FAIL %s:%d: %s returned %s, expected %s (%s)\n",      \
                    __FILE__, __LINE__, #expr, strata_status_name(rc_),              \
                    strata_status_name(code), tl_err.message);                       \
            tl_failed_checks++;                                                      \
            return;                                                                  \
        }                                                                            \
    } while (0)

typedef struct tl_test {
    const char *name;
    void (*fn)(void);
} tl_test;

static void tl_make_dir(void) {
    const char *base = getenv("TMPDIR");
    snprintf(tl_dir, sizeof tl_dir, "%s/strata-test-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(tl_dir)) {
        perror("mkdtemp");
        exit(2);
    }
}

/* A fresh path inside the test directory. */
__attribute__((unused)) static const char *tl_path(const char *name) {
    static char buf[8][512];
    static int next;
    char *p = buf[next++ % 8];
    snprintf(p, 512, "%s/%s", tl_dir, name);
    return p;
}

__attribute__((unused)) static void tl_remove_db(const char *path) {
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
}

/* strata_db_open with the default options, encrypted with the test key when
 * STRATA_TEST_ENCRYPTED=1 (testkey.h): the suites that use it run on encrypted files too. */
__attribute__((unused)) static int tl_db_open(const char *path, strata_db_t **db) {
    strata_options o;
    strata_options_init(&o);
    tk_options(&o);
    return strata_db_open(path, &o, db, E);
}

/* A database at `path` with the given durability (4 GiB map); NULL, with the error printed, when
 * it does not open. */
__attribute__((unused)) static strata_db_t *tl_open_db(const char *path, strata_durability d) {
    strata_options o;
    strata_options_init(&o);
    tk_options(&o);
    o.durability = d;
    o.map_size = 1ull << 32;
    strata_db_t *db = NULL;
    if (strata_db_open(path, &o, &db, E) != STRATA_OK)
        fprintf(stderr, "  open %s: %s\n", path, tl_err.message);
    return db;
}

/* Copies a file's bytes as reads see them (a database file or log "as the disk holds it"). */
__attribute__((unused)) static bool tl_copy_file(const char *from, const char *to) {
    char buf[65536];
    int in = open(from, O_RDONLY), out = open(to, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ssize_t n = 0;
    while (in >= 0 && out >= 0 && (n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) n = -1;
    if (in >= 0) close(in);
    if (out >= 0) close(out);
    return in >= 0 && out >= 0 && n == 0;
}

/* For I/O tables that count what a test's commits write: whether fd is a commit log (its path
 * ends in ".log"), and the default table's sync and grow passed through. */
__attribute__((unused)) static bool tl_fd_is_commit_log(int fd) {
    char link[64], path[4200];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    return n > 4 && memcmp(path + n - 4, ".log", 4) == 0;
}
__attribute__((unused)) static int tl_passing_sync(void *ctx, int fd) {
    (void)ctx;
    return strata_io_default()->fdatasync(NULL, fd);
}
__attribute__((unused)) static int tl_passing_grow(void *ctx, int fd, off_t size) {
    (void)ctx;
    return strata_io_default()->grow(NULL, fd, size);
}

/* Run tests (all, or those whose names contain argv[1]); print the closing line. */
static int tl_run(const char *suite, const tl_test *tests, int n, int argc, char **argv) {
    tl_make_dir();
    int passed = 0, failed = 0;
    for (int i = 0; i < n; i++) {
        if (argc > 1 && !strstr(tests[i].name, argv[1])) continue;
        int before = tl_failed_checks;
        fprintf(stderr, "%s: %s\n", suite, tests[i].name);
        tests[i].fn();
        if (tl_failed_checks > before) failed++; else passed++;
    }
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tl_dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tl_dir);
    printf("%s: %d passed, %d failed\n", suite, passed, failed);
    return failed ? 1 : 0;
}

#define TL_TEST(name) {#name, name}

/* A repeatable random sequence (xorshift64) for the suites' random runs. A suite seeds it with
 * tl_seed before its tests run; a test that needs the same data twice seeds it again. */
static uint64_t tl_rng = 0x9E3779B97F4A7C15ull;
__attribute__((unused)) static void tl_seed(uint64_t seed) { tl_rng = seed; }
__attribute__((unused)) static uint64_t rnd(void) {
    tl_rng ^= tl_rng << 13;
    tl_rng ^= tl_rng >> 7;
    tl_rng ^= tl_rng << 17;
    return tl_rng;
}

#endif
