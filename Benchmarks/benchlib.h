/*
 * benchlib.h — what the C benchmark programs of the space and search groups share: a monotonic
 * clock, failing with the program's name (BENCH_NAME, defined before including this), a
 * repeatable random sequence, opening a Strata file, a file's bytes on disk, medians, and
 * running SQL on the SQLite peer.
 */
#ifndef STRATA_BENCHLIB_H
#define STRATA_BENCHLIB_H

#include "strata.h"

#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why) {
    fprintf(stderr, BENCH_NAME ": %s: %s\n", what, why ? why : "");
    exit(1);
}

/* xorshift64: the data of a run comes from the seeds the program sets */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static void check(int rc, const strata_error *e, const char *what) {
    if (rc) die(what, e->message);
}

/* Bytes the file takes on disk (its blocks, not its length). */
static uint64_t disk_bytes(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_blocks * 512 : 0;
}

static strata_db_t *open_db(const char *path) {
    strata_options o;
    strata_options_init(&o);
    strata_db_t *db;
    strata_error e;
    check(strata_db_open(path, &o, &db, &e), &e, "open");
    return db;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void sq(sqlite3 *db, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) die(sql, msg);
}

#endif
