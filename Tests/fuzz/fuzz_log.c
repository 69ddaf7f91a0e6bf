/*
 * fuzz_log.c — libFuzzer target: replay a damaged commit log. A real log is made once per
 * process (a durable version of 60 objects, then 40 logged one-object commits that append,
 * lengthen and delete strings, so that its records hold literal and copy ranges of columns and
 * free-list leaves), beside a copy of the file as the durable version left it: what a power cut
 * that loses every later page leaves. Each input is a list of edits to the log's header and
 * records (5 bytes each: u32 offset, byte to xor); half of the inputs (by their hash) then have the header's and each
 * record's checksum recomputed, as a crafted log would, so the edits reach the record's entries
 * and ranges (apply_record's checks) instead of ending at the first checksum. The copy is opened
 * with the edited log: the open must fail with an error or succeed, then verify, read every
 * object and take a write; never a crash, a hang or a sanitizer report.
 */
#include "strata.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

static char path[256], log_path[300];
static uint8_t *base_file, *base_log;
static size_t base_file_len, base_log_len, records_end; /* the log kept: its first 4 MiB */

static uint8_t *read_whole(const char *p, size_t *len) {
    int fd = open(p, O_RDONLY);
    if (fd < 0) return NULL;
    off_t end = lseek(fd, 0, SEEK_END);
    uint8_t *b = end > 0 ? malloc((size_t)end) : NULL;
    bool ok = b && pread(fd, b, (size_t)end, 0) == end;
    close(fd);
    if (!ok) {
        free(b);
        return NULL;
    }
    *len = (size_t)end;
    return b;
}

static bool write_whole(const char *p, const uint8_t *b, size_t len) {
    int fd = open(p, O_RDWR | O_CREAT | O_TRUNC, 0644);
    bool ok = fd >= 0 && write(fd, b, len) == (ssize_t)len;
    if (fd >= 0) close(fd);
    return ok;
}

static int put_string(strata_table_t *t, strata_col_t col, strata_key_t k, int i) {
    char s[64];
    int n = snprintf(s, sizeof s, "value %d %.*s", i, i % 29, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
    strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {s, (size_t)n}};
    return strata_obj_set(t, k, col, &v, NULL);
}

/* The length of the record at `at` (commitlog.c's layout: its length at 24, at least the 160
 * bytes before the page entries, a multiple of 8, inside the log), or 0 where none can be. */
static size_t record_len(const uint8_t *log, size_t len, size_t at) {
    uint32_t rl;
    if (at + 160 > len) return 0;
    memcpy(&rl, log + at + 24, 4);
    return rl < 160 || rl % 8 || rl > len - at ? 0 : rl;
}

/* The durable file and the log of the commits after it, kept in memory. */
static bool make_base_(void);
static bool make_base(void) {
    bool ok = make_base_();
    if (!ok) fprintf(stderr, "fuzz_log: cannot make the base log (%s)\n", path);
    return ok;
}
static bool make_base_(void) {
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/strata-fuzzlog-%d.db", dir, (int)getpid());
    snprintf(log_path, sizeof log_path, "%s.log", path);
    char lock[320];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(log_path);
    unlink(lock);
    strata_options o;
    strata_options_init(&o);
    o.map_size = 1ull << 30;
    strata_db_t *db;
    strata_txn_t *txn;
    strata_table_t *t;
    strata_col_t s, n;
    strata_key_t k;
    if (strata_db_open(path, &o, &db, NULL) || strata_txn_begin(db, STRATA_TXN_WRITE, &txn, NULL) ||
        strata_table_create(txn, "T", &t, NULL) ||
        strata_table_add_property(t, "s", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &s, NULL) ||
        strata_table_add_property(t, "n", STRATA_TYPE_INT, 0, NULL, &n, NULL))
        return false;
    for (int i = 0; i < 60; i++)
        if (strata_obj_create(t, &k, NULL) || put_string(t, s, k, i)) return false;
    int rc = strata_txn_commit(txn, NULL);
    strata_txn_free(txn);
    if (rc || strata_db_close(db, NULL)) return false;
    if (!(base_file = read_whole(path, &base_file_len))) return false;
    if (strata_db_open(path, &o, &db, NULL)) return false;
    for (int i = 0; i < 40; i++) {
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, NULL) ||
            strata_table_open(txn, "T", &t, NULL))
            return false;
        /* (an object deleted before is not there to change: those calls fail, harmlessly) */
        strata_value v = {.type = STRATA_TYPE_INT, .u.i = i};
        strata_key_t old = (strata_key_t)(i * 7 % 60);
        if (i % 3 == 0 && (strata_obj_create(t, &k, NULL) || put_string(t, s, k, 100 + i)))
            return false;
        if (i % 3 == 1 && put_string(t, s, old, 200 + i) == STRATA_OK)
            strata_obj_set(t, old, n, &v, NULL);
        if (i % 3 == 2) strata_obj_delete(t, (strata_key_t)(i * 11 % 60), NULL);
        rc = strata_txn_commit(txn, NULL);
        strata_txn_free(txn);
        if (rc) return false;
    }
    base_log = read_whole(log_path, &base_log_len); /* synced, before close checkpoints it */
    strata_db_close(db, NULL);
    if (!base_log || base_log_len < (4u << 20)) return false;
    base_log_len = 4u << 20; /* the smallest log a library takes for one (commitlog.c) */
    records_end = 4096;
    for (size_t rl; (rl = record_len(base_log, base_log_len, records_end));) records_end += rl;
    return records_end > 4096;
}

/* The header's and each record's checksum made right again, record by record while their
 * lengths chain (commitlog.c's layout: header XXH3 of bytes 0..31 at 32; a record's of bytes
 * 8..len at 0, its length at 24). */
static void reseal(uint8_t *log, size_t len) {
    uint64_t h = XXH3_64bits(log, 32);
    memcpy(log + 32, &h, 8);
    for (size_t at = 4096, rl; (rl = record_len(log, len, at)); at += rl) {
        h = XXH3_64bits(log + at + 8, rl - 8);
        memcpy(log + at, &h, 8);
    }
}

static void read_all(strata_db_t *db) {
    strata_txn_t *txn;
    strata_table_t *t;
    strata_col_t s;
    if (strata_txn_begin(db, STRATA_TXN_READ, &txn, NULL)) return;
    if (strata_table_open(txn, "T", &t, NULL) == STRATA_OK &&
        strata_table_find_property(t, "s", &s, NULL) == STRATA_OK) {
        volatile size_t sink = 0;
        for (strata_key_t k = 0; k < 200; k++) {
            strata_value v;
            if (strata_obj_get(t, k, s, &v, NULL) == STRATA_OK && v.type == STRATA_TYPE_STRING)
                sink += v.u.bytes.len;
        }
        (void)sink;
    }
    strata_txn_free(txn);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static int ready; /* 0 unknown, 1 made, -1 failed */
    if (!ready) ready = make_base() ? 1 : -1;
    if (ready < 0) abort(); /* the target cannot run: say so loudly */
    uint8_t *log = malloc(base_log_len);
    if (!log) return 0;
    memcpy(log, base_log, base_log_len);
    for (size_t i = 0; i + 5 <= size; i += 5) {
        uint32_t off;
        memcpy(&off, data + i, 4);
        log[off % (records_end + 4096)] ^= data[i + 4]; /* the header, the records, a block */
    }
    if (XXH3_64bits(data, size) & 1) reseal(log, base_log_len);
    char lock[320];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    bool written = write_whole(path, base_file, base_file_len) && write_whole(log_path, log, base_log_len);
    free(log);
    if (!written) return 0;
    strata_options o;
    strata_options_init(&o);
    o.create = false;
    o.map_size = 1ull << 30;
    strata_db_t *db;
    if (strata_db_open(path, &o, &db, NULL) == STRATA_OK) {
        strata_db_verify(db, NULL);
        read_all(db);
        strata_txn_t *txn;
        strata_table_t *t;
        strata_key_t k;
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, NULL) == STRATA_OK) {
            if (strata_table_open(txn, "T", &t, NULL) == STRATA_OK) strata_obj_create(t, &k, NULL);
            strata_txn_commit(txn, NULL);
            strata_txn_free(txn);
        }
        strata_db_close(db, NULL);
    }
    return 0;
}
