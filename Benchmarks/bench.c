/*
 * bench.c — the same workloads on Strata, SQLite and LMDB in one run, with ratios.
 *
 * Data: N Person {id int primary key, name string indexed (8–16 characters, about a third of
 * them Chinese), age 0–99, score double, active bool} from a fixed seed, the same for all three.
 *
 * Peers, set up fairly: SQLite with prepared statements reused, batches in one transaction, an
 * index on name, WAL with synchronous=FULL; LMDB with 8-byte integer keys and a packed record,
 * and a second database name → id for the indexed lookups. Every durable workload is durable on
 * all three (SQLite FULL, LMDB default sync, Strata FULL).
 *
 * Strata: Person is a table of the object store (id primary key, name indexed), written and
 * read through strata.h; counts, the range query and the delete's selection are queries in the
 * predicate language (strata_query_*), run by the column-scan engine.
 *
 * Each (engine, repetition) runs in its own child process, so peak memory is per engine. The
 * median of the repetitions is printed. Ratios are Strata / peer for rates, and peer / Strata for
 * times and sizes, so above 1 always means Strata is ahead.
 *
 * "open" is the time to open the file and count its objects (Realm's `objects(Person.self).count`).
 *
 * "first_scan" is count_one once, right after that open: an encrypted file's pages are opened
 * (decrypted) then, a plain file's checked.
 *
 * Built with -DBENCH_CRYPT (crypt_bench, `make bench`'s encryption group): the same workloads on
 * Strata with an encryption key, plain Strata, and SQLCipher (SQLite with its pages encrypted:
 * a raw 256-bit key, so no key derivation, 4 KiB pages like SQLite's); the ratios are those of
 * encrypted Strata, whose reads are timed after an untimed pass over the same data (every engine
 * gets one). (SQLCipher defines SQLite's symbols: it cannot share a program with SQLite.)
 *
 * Usage: bench [-n N] [-r REPS] [-c COMMITS] [-d DIR] [-e strata|sqlite|lmdb]
 * (-e runs one engine alone and prints its numbers without ratios: for profiling.)
 */
#include "strata.h"

#include <fcntl.h>
#ifdef BENCH_CRYPT
#include <sqlcipher/sqlite3.h>
#else
#include <lmdb.h>
#include <sqlite3.h>
#endif
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------------ data */

typedef struct person {
    uint64_t id;
    double score;
    uint8_t age;
    uint8_t active;
    uint8_t namelen;
    char name[49];
} person;

static uint64_t rng = 0x2545F4914F6CDD1Dull;
static uint64_t rnd(void) {
    rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
    return rng;
}

static const char *cjk[] = {"张", "三", "李", "四", "王", "五", "小", "白", "黑", "花", "明", "华",
                            "国", "强", "丽", "静", "云", "海", "山", "林"};

static void make_person(person *p, uint64_t id) {
    p->id = id;
    p->age = (uint8_t)(rnd() % 100);
    p->score = (double)(rnd() % 100000) / 100.0;
    p->active = (uint8_t)(rnd() % 2);
    int chars = 8 + (int)(rnd() % 9);
    bool chinese = rnd() % 3 == 0;
    size_t len = 0;
    for (int i = 0; i < chars; i++) {
        if (chinese) {
            const char *c = cjk[rnd() % 20];
            memcpy(p->name + len, c, 3);
            len += 3;
        } else {
            p->name[len++] = (char)('a' + rnd() % 26);
        }
    }
    p->name[len] = 0;
    p->namelen = (uint8_t)len;
}

/* Packed record for the key-value engines: age, active, score, name length, name. */
__attribute__((unused)) static size_t pack(const person *p, uint8_t *out) { /* (LMDB's record) */
    out[0] = p->age;
    out[1] = p->active;
    memcpy(out + 2, &p->score, 8);
    out[10] = p->namelen;
    memcpy(out + 11, p->name, p->namelen);
    return 11 + (size_t)p->namelen;
}

__attribute__((unused)) static void unpack(const uint8_t *in, size_t len, person *p) {
    p->age = in[0];
    p->active = in[1];
    memcpy(&p->score, in + 2, 8);
    p->namelen = in[10] <= len - 11 ? in[10] : 0;
    memcpy(p->name, in + 11, p->namelen);
    p->name[p->namelen] = 0;
}

/* ------------------------------------------------------------------ measuring */

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *why) {
    fprintf(stderr, "bench: %s: %s\n", what, why ? why : "");
    exit(1);
}

static uint64_t dir_blocks(const char *dir) {
    char cmd[700];
    snprintf(cmd, sizeof cmd, "du -sk '%.600s' 2>/dev/null", dir);
    FILE *f = popen(cmd, "r");
    unsigned long long kb = 0;
    if (f) {
        if (fscanf(f, "%llu", &kb) != 1) kb = 0;
        pclose(f);
    }
    return kb * 1024;
}

static double rss_mb(const char *field) { /* VmHWM, RssAnon, RssFile from /proc/self/status */
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    double kb = 0;
    size_t fl = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, fl) == 0 && line[fl] == ':') kb = atof(line + fl + 1);
    if (f) fclose(f);
    return kb / 1024.0;
}

/* ------------------------------------------------------------------ the engines */

typedef struct engine {
    const char *name;
    void *(*open)(const char *dir);
    void (*close)(void *h);
    void (*insert)(void *h, const person *p, size_t n);
    void (*commit_one)(void *h, const person *p);
    bool (*lookup)(void *h, uint64_t id, person *out); /* inside begin_read/end_read */
    void (*begin_read)(void *h);
    void (*end_read)(void *h);
    uint64_t (*count)(void *h, bool two);
    uint64_t (*total)(void *h); /* how many objects (the count after open) */
    uint64_t (*index_eq)(void *h, const char *name, size_t len); /* inside begin_read */
    size_t (*range_sort)(void *h, uint64_t *ids);
    void (*update)(void *h, const uint64_t *ids, size_t n, const double *scores);
    uint64_t (*delete_young)(void *h);
} engine;

/* ---------------- Strata */

typedef struct st_h {
    strata_db_t *db;
    strata_txn_t *rd;
    strata_table_t *rt;                          /* Person in the read transaction */
    strata_col_t id, name, age, score, active;
} st_h;

static void st_check(int rc, const strata_error *e, const char *what) {
    if (rc) die(what, e->message);
}

/* The key of the encrypted engines (crypt_bench): 64 bytes for Strata, the first 32 as
 * SQLCipher's raw key. */
static const uint8_t bench_key[64] = {7, 1, 4, 9, 2, 6, 5, 3, 8, 0, 11, 13, 17, 19, 23, 29,
                                      31, 37, 41, 43, 47, 53, 59, 61, 67, 71, 73, 79, 83, 89, 97, 101,
                                      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16,
                                      17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};

static void *st_open_with(const char *dir, const void *key) {
    char path[512];
    snprintf(path, sizeof path, "%s/strata.db", dir);
    st_h *h = calloc(1, sizeof *h);
    strata_error e = {0};
    strata_options o;
    strata_options_init(&o);
    o.encryption_key = key;
    o.encryption_key_len = key ? sizeof bench_key : 0;
    st_check(strata_db_open(path, &o, &h->db, &e), &e, "strata open");
    return h;
}

static void *st_open(const char *dir) { return st_open_with(dir, NULL); }

static void st_close(void *hv) {
    st_h *h = hv;
    strata_db_close(h->db, NULL);
    free(h);
}

/* Person in txn (created with its schema when missing), and its property ids into h. */
static strata_table_t *st_person(st_h *h, strata_txn_t *txn) {
    strata_table_t *t;
    strata_error e = {0};
    if (strata_table_open(txn, "Person", &t, &e) != STRATA_OK) {
        st_check(strata_table_create(txn, "Person", &t, &e), &e, "create Person");
        strata_col_t c;
        st_check(strata_table_add_property(t, "id", STRATA_TYPE_INT, STRATA_PROP_PRIMARY_KEY, NULL, &c, &e), &e, "id");
        st_check(strata_table_add_property(t, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c, &e), &e, "name");
        st_check(strata_table_add_property(t, "age", STRATA_TYPE_INT, 0, NULL, &c, &e), &e, "age");
        st_check(strata_table_add_property(t, "score", STRATA_TYPE_DOUBLE, 0, NULL, &c, &e), &e, "score");
        st_check(strata_table_add_property(t, "active", STRATA_TYPE_BOOL, 0, NULL, &c, &e), &e, "active");
    }
    st_check(strata_table_find_property(t, "id", &h->id, &e), &e, "id");
    st_check(strata_table_find_property(t, "name", &h->name, &e), &e, "name");
    st_check(strata_table_find_property(t, "age", &h->age, &e), &e, "age");
    st_check(strata_table_find_property(t, "score", &h->score, &e), &e, "score");
    st_check(strata_table_find_property(t, "active", &h->active, &e), &e, "active");
    return t;
}

static void st_write(st_h *h, const person *p, size_t n) {
    strata_txn_t *txn;
    strata_error e = {0};
    st_check(strata_txn_begin(h->db, STRATA_TXN_WRITE, &txn, &e), &e, "begin");
    strata_table_t *t = st_person(h, txn);
    for (size_t i = 0; i < n; i++) {
        strata_key_t k;
        strata_value v = {.type = STRATA_TYPE_INT, .u.i = (int64_t)p[i].id};
        st_check(strata_obj_create_pk(t, &v, &k, &e), &e, "create");
        v = (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {p[i].name, p[i].namelen}};
        st_check(strata_obj_set(t, k, h->name, &v, &e), &e, "set name");
        v = (strata_value){.type = STRATA_TYPE_INT, .u.i = p[i].age};
        st_check(strata_obj_set(t, k, h->age, &v, &e), &e, "set age");
        v = (strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = p[i].score};
        st_check(strata_obj_set(t, k, h->score, &v, &e), &e, "set score");
        v = (strata_value){.type = STRATA_TYPE_BOOL, .u.b = p[i].active};
        st_check(strata_obj_set(t, k, h->active, &v, &e), &e, "set active");
    }
    st_check(strata_txn_commit(txn, &e), &e, "commit");
    strata_txn_free(txn);
}

static void st_insert(void *h, const person *p, size_t n) { st_write(h, p, n); }
static void st_commit_one(void *h, const person *p) { st_write(h, p, 1); }

static void st_begin_read(void *hv) {
    st_h *h = hv;
    strata_error e = {0};
    st_check(strata_txn_begin(h->db, STRATA_TXN_READ, &h->rd, &e), &e, "begin read");
    h->rt = st_person(h, h->rd);
}

static void st_end_read(void *hv) {
    st_h *h = hv;
    strata_txn_free(h->rd);
    h->rd = NULL;
}

static void st_read(st_h *h, strata_table_t *t, strata_key_t k, person *out) {
    strata_col_t cols[5] = {h->id, h->name, h->age, h->score, h->active};
    strata_value v[5];
    strata_obj_get_many(t, k, cols, 5, v, NULL);
    out->id = (uint64_t)v[0].u.i;
    out->namelen = (uint8_t)(v[1].u.bytes.len < sizeof out->name ? v[1].u.bytes.len : sizeof out->name - 1);
    memcpy(out->name, v[1].u.bytes.data, out->namelen);
    out->name[out->namelen] = 0;
    out->age = (uint8_t)v[2].u.i;
    out->score = v[3].u.d;
    out->active = v[4].u.b;
}

static bool st_lookup(void *hv, uint64_t id, person *out) {
    st_h *h = hv;
    strata_key_t k;
    strata_value pk = {.type = STRATA_TYPE_INT, .u.i = (int64_t)id};
    if (strata_obj_find_pk(h->rt, &pk, &k, NULL)) return false;
    st_read(h, h->rt, k, out);
    return true;
}

static uint64_t st_query_count(st_h *h, const char *text) {
    strata_error e = {0};
    strata_query_t *q;
    uint64_t n = 0;
    st_begin_read(h);
    st_check(strata_query_compile(h->rd, "Person", text, &q, &e), &e, text);
    st_check(strata_query_count(q, h->rd, NULL, 0, &n, &e), &e, text);
    strata_query_free(q);
    st_end_read(h);
    return n;
}

static uint64_t st_count(void *hv, bool two) {
    return st_query_count(hv, two ? "age > 50 AND active == true" : "age > 50");
}

static uint64_t st_total(void *hv) {
    st_h *h = hv;
    uint64_t n = 0;
    st_begin_read(h);
    strata_table_size(h->rt, &n, NULL);
    st_end_read(h);
    return n;
}

static uint64_t st_index_eq(void *hv, const char *name, size_t len) {
    st_h *h = hv;
    strata_key_t k;
    size_t n;
    strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {name, len}};
    if (strata_index_find(h->rt, h->name, &v, &k, 1, &n, NULL) || n == 0) return 0;
    strata_obj_get(h->rt, k, h->id, &v, NULL);
    return (uint64_t)v.u.i;
}

static size_t st_range_sort(void *hv, uint64_t *ids) {
    st_h *h = hv;
    strata_error e = {0};
    strata_query_t *q;
    strata_results_t *r;
    st_begin_read(h);
    const char *text = "age BETWEEN {20, 30} SORT(name ASC) LIMIT(100)";
    st_check(strata_query_compile(h->rd, "Person", text, &q, &e), &e, text);
    st_check(strata_query_run(q, h->rd, NULL, 0, &r, &e), &e, text);
    size_t n = strata_results_size(r);
    for (size_t i = 0; i < n; i++) {
        strata_value id;
        strata_obj_get(h->rt, strata_results_key(r, i), h->id, &id, NULL);
        ids[i] = (uint64_t)id.u.i;
    }
    strata_results_free(r);
    strata_query_free(q);
    st_end_read(h);
    return n;
}

static void st_update(void *hv, const uint64_t *ids, size_t n, const double *scores) {
    st_h *h = hv;
    strata_txn_t *txn;
    strata_error e = {0};
    st_check(strata_txn_begin(h->db, STRATA_TXN_WRITE, &txn, &e), &e, "begin");
    strata_table_t *t = st_person(h, txn);
    for (size_t i = 0; i < n; i++) {
        strata_key_t k;
        strata_value v = {.type = STRATA_TYPE_INT, .u.i = (int64_t)ids[i]};
        if (strata_obj_find_pk(t, &v, &k, NULL)) continue;
        v = (strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = scores[i]};
        st_check(strata_obj_set(t, k, h->score, &v, &e), &e, "update");
    }
    st_check(strata_txn_commit(txn, &e), &e, "commit");
    strata_txn_free(txn);
}

static uint64_t st_delete_young(void *hv) {
    st_h *h = hv;
    strata_txn_t *txn;
    strata_error e = {0};
    st_check(strata_txn_begin(h->db, STRATA_TXN_WRITE, &txn, &e), &e, "begin");
    strata_table_t *t = st_person(h, txn);
    strata_query_t *q;
    strata_results_t *r;
    st_check(strata_query_compile(txn, "Person", "age < 10", &q, &e), &e, "query");
    st_check(strata_query_run(q, txn, NULL, 0, &r, &e), &e, "query");
    uint64_t n = strata_results_size(r);
    for (size_t i = 0; i < n; i++)
        st_check(strata_obj_delete(t, strata_results_key(r, i), &e), &e, "delete");
    strata_results_free(r);
    strata_query_free(q);
    st_check(strata_txn_commit(txn, &e), &e, "commit");
    strata_txn_free(txn);
    return n;
}

static const engine strata_engine = {"strata", st_open, st_close, st_insert, st_commit_one,
                                     st_lookup, st_begin_read, st_end_read, st_count, st_total, st_index_eq,
                                     st_range_sort, st_update, st_delete_young};
#ifdef BENCH_CRYPT
static void *st_open_encrypted(const char *dir) { return st_open_with(dir, bench_key); }
static const engine strata_enc_engine = {"strata-enc", st_open_encrypted, st_close, st_insert,
                                         st_commit_one, st_lookup, st_begin_read, st_end_read,
                                         st_count, st_total, st_index_eq, st_range_sort, st_update,
                                         st_delete_young};
#endif

/* ---------------- SQLite */

typedef struct sq_h {
    sqlite3 *db;
    sqlite3_stmt *ins, *get, *by_name, *upd, *c1, *c2, *range;
} sq_h;

static void sq_exec(sqlite3 *db, const char *sql) {
    char *msg = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) die(sql, msg);
}

static sqlite3_stmt *sq_prep(sqlite3 *db, const char *sql) {
    sqlite3_stmt *s;
    if (sqlite3_prepare_v2(db, sql, -1, &s, NULL) != SQLITE_OK) die(sql, sqlite3_errmsg(db));
    return s;
}

static void *sq_open(const char *dir) {
    char path[512];
    snprintf(path, sizeof path, "%s/sqlite.db", dir);
    sq_h *h = calloc(1, sizeof *h);
    if (sqlite3_open(path, &h->db) != SQLITE_OK) die("sqlite open", sqlite3_errmsg(h->db));
#ifdef BENCH_CRYPT
    char pragma[128] = "PRAGMA key = \"x'";
    for (int i = 0; i < 32; i++) snprintf(pragma + strlen(pragma), 3, "%02x", bench_key[i]);
    strcat(pragma, "'\"; PRAGMA cipher_page_size = 4096;");
    sq_exec(h->db, pragma);
#endif
    sq_exec(h->db, "PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL;"
                   "CREATE TABLE IF NOT EXISTS person(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
                   " age INTEGER NOT NULL, score REAL NOT NULL, active INTEGER NOT NULL);"
                   "CREATE INDEX IF NOT EXISTS person_name ON person(name);");
    h->ins = sq_prep(h->db, "INSERT INTO person(id, name, age, score, active) VALUES (?,?,?,?,?)");
    h->get = sq_prep(h->db, "SELECT name, age, score, active FROM person WHERE id = ?");
    h->by_name = sq_prep(h->db, "SELECT id FROM person WHERE name = ?");
    h->upd = sq_prep(h->db, "UPDATE person SET score = ? WHERE id = ?");
    h->c1 = sq_prep(h->db, "SELECT count(*) FROM person WHERE age > 50");
    h->c2 = sq_prep(h->db, "SELECT count(*) FROM person WHERE age > 50 AND active = 1");
    h->range = sq_prep(h->db, "SELECT id FROM person WHERE age BETWEEN 20 AND 30 "
                              "ORDER BY name LIMIT 100");
    return h;
}

static void sq_close(void *hv) {
    sq_h *h = hv;
    sqlite3_stmt *all[] = {h->ins, h->get, h->by_name, h->upd, h->c1, h->c2, h->range};
    for (int i = 0; i < 7; i++) sqlite3_finalize(all[i]);
    sqlite3_close(h->db);
    free(h);
}

static void sq_write(sq_h *h, const person *p, size_t n) {
    sq_exec(h->db, "BEGIN");
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_int64(h->ins, 1, (sqlite3_int64)p[i].id);
        sqlite3_bind_text(h->ins, 2, p[i].name, p[i].namelen, SQLITE_STATIC);
        sqlite3_bind_int(h->ins, 3, p[i].age);
        sqlite3_bind_double(h->ins, 4, p[i].score);
        sqlite3_bind_int(h->ins, 5, p[i].active);
        if (sqlite3_step(h->ins) != SQLITE_DONE) die("insert", sqlite3_errmsg(h->db));
        sqlite3_reset(h->ins);
    }
    sq_exec(h->db, "COMMIT");
}

static void sq_insert(void *h, const person *p, size_t n) { sq_write(h, p, n); }
static void sq_commit_one(void *h, const person *p) { sq_write(h, p, 1); }
static void sq_begin_read(void *h) { sq_exec(((sq_h *)h)->db, "BEGIN"); }
static void sq_end_read(void *h) { sq_exec(((sq_h *)h)->db, "COMMIT"); }

static bool sq_lookup(void *hv, uint64_t id, person *out) {
    sq_h *h = hv;
    sqlite3_bind_int64(h->get, 1, (sqlite3_int64)id);
    bool found = sqlite3_step(h->get) == SQLITE_ROW;
    if (found) {
        int len = sqlite3_column_bytes(h->get, 0);
        if (len > 48) len = 48;
        memcpy(out->name, sqlite3_column_text(h->get, 0), (size_t)len);
        out->name[len] = 0;
        out->namelen = (uint8_t)len;
        out->age = (uint8_t)sqlite3_column_int(h->get, 1);
        out->score = sqlite3_column_double(h->get, 2);
        out->active = (uint8_t)sqlite3_column_int(h->get, 3);
        out->id = id;
    }
    sqlite3_reset(h->get);
    return found;
}

static uint64_t sq_count(void *hv, bool two) {
    sq_h *h = hv;
    sqlite3_stmt *s = two ? h->c2 : h->c1;
    uint64_t n = sqlite3_step(s) == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(s, 0) : 0;
    sqlite3_reset(s);
    return n;
}

static uint64_t sq_total(void *hv) {
    sq_h *h = hv;
    sqlite3_stmt *s = sq_prep(h->db, "SELECT COUNT(*) FROM person");
    uint64_t n = sqlite3_step(s) == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(s, 0) : 0;
    sqlite3_finalize(s);
    return n;
}

static uint64_t sq_index_eq(void *hv, const char *name, size_t len) {
    sq_h *h = hv;
    sqlite3_bind_text(h->by_name, 1, name, (int)len, SQLITE_STATIC);
    uint64_t id = sqlite3_step(h->by_name) == SQLITE_ROW ? (uint64_t)sqlite3_column_int64(h->by_name, 0) : 0;
    sqlite3_reset(h->by_name);
    return id;
}

static size_t sq_range_sort(void *hv, uint64_t *ids) {
    sq_h *h = hv;
    size_t n = 0;
    while (sqlite3_step(h->range) == SQLITE_ROW) ids[n++] = (uint64_t)sqlite3_column_int64(h->range, 0);
    sqlite3_reset(h->range);
    return n;
}

static void sq_update(void *hv, const uint64_t *ids, size_t n, const double *scores) {
    sq_h *h = hv;
    sq_exec(h->db, "BEGIN");
    for (size_t i = 0; i < n; i++) {
        sqlite3_bind_double(h->upd, 1, scores[i]);
        sqlite3_bind_int64(h->upd, 2, (sqlite3_int64)ids[i]);
        if (sqlite3_step(h->upd) != SQLITE_DONE) die("update", sqlite3_errmsg(h->db));
        sqlite3_reset(h->upd);
    }
    sq_exec(h->db, "COMMIT");
}

static uint64_t sq_delete_young(void *hv) {
    sq_h *h = hv;
    sq_exec(h->db, "DELETE FROM person WHERE age < 10");
    return (uint64_t)sqlite3_changes(h->db);
}

static const engine sqlite_engine = {
#ifdef BENCH_CRYPT
                                     "sqlcipher",
#else
                                     "sqlite",
#endif
                                      sq_open, sq_close, sq_insert, sq_commit_one,
                                     sq_lookup, sq_begin_read, sq_end_read, sq_count, sq_total, sq_index_eq,
                                     sq_range_sort, sq_update, sq_delete_young};

/* ---------------- LMDB */
#ifndef BENCH_CRYPT

typedef struct lm_h {
    MDB_env *env;
    MDB_dbi person, names;
    MDB_txn *rd;
} lm_h;

static void lm_check(int rc, const char *what) {
    if (rc) die(what, mdb_strerror(rc));
}

static void *lm_open(const char *dir) {
    lm_h *h = calloc(1, sizeof *h);
    lm_check(mdb_env_create(&h->env), "mdb_env_create");
    lm_check(mdb_env_set_mapsize(h->env, 64ull << 30), "mapsize");
    lm_check(mdb_env_set_maxdbs(h->env, 4), "maxdbs");
    /* LMDB at its fastest safe setting: synced commits (no MDB_NOSYNC / MDB_NOMETASYNC: a
     * commit is durable, as Strata's FULL and SQLite's synchronous=FULL), MDB_NORDAHEAD (no
     * kernel readahead for the random reads of lookups), MDB_NOTLS (read transactions are not
     * tied to a thread's slot). */
    lm_check(mdb_env_open(h->env, dir, MDB_NORDAHEAD | MDB_NOTLS, 0644), "mdb_env_open");
    MDB_txn *txn;
    lm_check(mdb_txn_begin(h->env, NULL, 0, &txn), "begin");
    lm_check(mdb_dbi_open(txn, "person", MDB_CREATE | MDB_INTEGERKEY, &h->person), "dbi person");
    lm_check(mdb_dbi_open(txn, "names", MDB_CREATE | MDB_DUPSORT | MDB_DUPFIXED | MDB_INTEGERDUP,
                          &h->names), "dbi names");
    lm_check(mdb_txn_commit(txn), "commit");
    return h;
}

static void lm_close(void *hv) {
    lm_h *h = hv;
    mdb_env_close(h->env);
    free(h);
}

static void lm_write(lm_h *h, const person *p, size_t n) {
    MDB_txn *txn;
    lm_check(mdb_txn_begin(h->env, NULL, 0, &txn), "begin");
    uint8_t rec[64];
    for (size_t i = 0; i < n; i++) {
        size_t id = (size_t)p[i].id;
        MDB_val k = {sizeof id, &id}, v = {pack(&p[i], rec), rec};
        lm_check(mdb_put(txn, h->person, &k, &v, 0), "put");
        MDB_val nk = {p[i].namelen, (void *)p[i].name}, nv = {sizeof id, &id};
        lm_check(mdb_put(txn, h->names, &nk, &nv, 0), "put name");
    }
    lm_check(mdb_txn_commit(txn), "commit");
}

static void lm_insert(void *h, const person *p, size_t n) { lm_write(h, p, n); }
static void lm_commit_one(void *h, const person *p) { lm_write(h, p, 1); }

static void lm_begin_read(void *hv) {
    lm_h *h = hv;
    lm_check(mdb_txn_begin(h->env, NULL, MDB_RDONLY, &h->rd), "begin read");
}

static void lm_end_read(void *hv) {
    lm_h *h = hv;
    mdb_txn_abort(h->rd);
    h->rd = NULL;
}

static bool lm_lookup(void *hv, uint64_t id, person *out) {
    lm_h *h = hv;
    size_t key = (size_t)id;
    MDB_val k = {sizeof key, &key}, v;
    if (mdb_get(h->rd, h->person, &k, &v)) return false;
    unpack(v.mv_data, v.mv_size, out);
    out->id = id;
    return true;
}

static uint64_t lm_count(void *hv, bool two) {
    lm_h *h = hv;
    lm_begin_read(h);
    MDB_cursor *c;
    mdb_cursor_open(h->rd, h->person, &c);
    MDB_val k, v;
    uint64_t n = 0;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0; rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        const uint8_t *r = v.mv_data;
        n += r[0] > 50 && (!two || r[1]);
    }
    mdb_cursor_close(c);
    lm_end_read(h);
    return n;
}

static uint64_t lm_total(void *hv) {
    lm_h *h = hv;
    MDB_stat st;
    lm_begin_read(h);
    mdb_stat(h->rd, h->person, &st);
    lm_end_read(h);
    return st.ms_entries;
}

static uint64_t lm_index_eq(void *hv, const char *name, size_t len) {
    lm_h *h = hv;
    MDB_val k = {len, (void *)name}, v;
    size_t id = 0;
    if (mdb_get(h->rd, h->names, &k, &v) == 0) memcpy(&id, v.mv_data, sizeof id);
    return id;
}

static size_t lm_range_sort(void *hv, uint64_t *ids) {
    lm_h *h = hv;
    lm_begin_read(h);
    MDB_cursor *c;
    mdb_cursor_open(h->rd, h->names, &c);
    MDB_val k, v;
    size_t n = 0;
    for (int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST); rc == 0 && n < 100;
         rc = mdb_cursor_get(c, &k, &v, MDB_NEXT)) {
        size_t id;
        memcpy(&id, v.mv_data, sizeof id);
        MDB_val pk = {sizeof id, &id}, pv;
        if (mdb_get(h->rd, h->person, &pk, &pv) == 0) {
            uint8_t age = ((const uint8_t *)pv.mv_data)[0];
            if (age >= 20 && age <= 30) ids[n++] = id;
        }
    }
    mdb_cursor_close(c);
    lm_end_read(h);
    return n;
}

static void lm_update(void *hv, const uint64_t *ids, size_t n, const double *scores) {
    lm_h *h = hv;
    MDB_txn *txn;
    lm_check(mdb_txn_begin(h->env, NULL, 0, &txn), "begin");
    uint8_t rec[64];
    for (size_t i = 0; i < n; i++) {
        size_t id = (size_t)ids[i];
        MDB_val k = {sizeof id, &id}, v;
        if (mdb_get(txn, h->person, &k, &v)) continue;
        memcpy(rec, v.mv_data, v.mv_size);
        memcpy(rec + 2, &scores[i], 8);
        MDB_val nv = {v.mv_size, rec};
        lm_check(mdb_put(txn, h->person, &k, &nv, 0), "update");
    }
    lm_check(mdb_txn_commit(txn), "commit");
}

static uint64_t lm_delete_young(void *hv) {
    lm_h *h = hv;
    MDB_txn *txn;
    lm_check(mdb_txn_begin(h->env, NULL, 0, &txn), "begin");
    MDB_cursor *c;
    mdb_cursor_open(txn, h->person, &c);
    MDB_val k, v;
    uint64_t n = 0;
    int rc = mdb_cursor_get(c, &k, &v, MDB_FIRST);
    while (rc == 0) {
        person p;
        unpack(v.mv_data, v.mv_size, &p);
        if (p.age < 10) {
            size_t id;
            memcpy(&id, k.mv_data, sizeof id);
            MDB_val nk = {p.namelen, p.name}, nv = {sizeof id, &id};
            lm_check(mdb_del(txn, h->names, &nk, &nv), "delete name");
            lm_check(mdb_cursor_del(c, 0), "delete");
            n++;
            rc = mdb_cursor_get(c, &k, &v, MDB_GET_CURRENT);
            if (rc == 0) continue;
            rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
            continue;
        }
        rc = mdb_cursor_get(c, &k, &v, MDB_NEXT);
    }
    mdb_cursor_close(c);
    lm_check(mdb_txn_commit(txn), "commit");
    return n;
}

static const engine lmdb_engine = {"lmdb", lm_open, lm_close, lm_insert, lm_commit_one,
                                   lm_lookup, lm_begin_read, lm_end_read, lm_count, lm_total, lm_index_eq,
                                   lm_range_sort, lm_update, lm_delete_young};
#endif

/* ------------------------------------------------------------------ workloads */

enum { W_INSERT, W_COMMIT, W_LOOKUP, W_COUNT_ONE, W_COUNT_TWO, W_INDEX_EQ, W_RANGE_SORT,
       W_UPDATE, W_DELETE, W_OPEN, W_FIRST_SCAN, W_SIZE, W_RSS_LOOKUP_ANON, W_RSS_SCAN_ANON,
       W_RSS_PEAK, W_CHECK, W_COUNT };
static const char *wnames[] = {"insert", "commit", "lookup", "count_one", "count_two", "index_eq",
                               "range_sort", "update", "delete", "open", "first_scan", "size"};
static const char *wunits[] = {"objects/s", "commits/s", "lookups/s", "objects/s", "objects/s",
                               "queries/s", "queries/s", "objects/s", "objects/s", "ms", "objects/s",
                               "bytes"};
#define W_PRINTED 12

typedef struct config {
    size_t n, commits, queries;
    const char *dir;
} config;

/* Repeat fn until at least `min` seconds passed; returns seconds per call. */
#define TIME_REPEAT(min, calls, body)              \
    do {                                           \
        double t0_ = now();                        \
        calls = 0;                                 \
        do {                                       \
            body;                                  \
            calls++;                               \
        } while (now() - t0_ < (min));             \
        elapsed = (now() - t0_) / (double)calls;   \
    } while (0)

static void run_engine(const engine *eng, const config *cf, const person *people,
                       const uint64_t *order, double *out) {
    char dir[600];
    snprintf(dir, sizeof dir, "%s/%s", cf->dir, eng->name);
    char cmd[1300];
    snprintf(cmd, sizeof cmd, "rm -rf '%.600s' && mkdir -p '%.600s'", dir, dir);
    if (system(cmd)) die("mkdir", dir);
    double elapsed, t;
    long calls;
    uint64_t check = 0;
    void *h = eng->open(dir);

    t = now();
    eng->insert(h, people, cf->n);
    out[W_INSERT] = (double)cf->n / (now() - t);
    out[W_SIZE] = (double)dir_blocks(dir) / (double)cf->n;

    double anon0 = rss_mb("RssAnon");
    person p;
#ifdef BENCH_CRYPT
    /* The reads after warm-up (first_scan times the cold pages): every engine reads each page
     * once untimed first, lookups and index lookups alike. */
    eng->count(h, true);
    eng->begin_read(h);
    for (size_t i = 0; i < cf->n; i++) eng->lookup(h, order[i], &p);
    for (size_t i = 0; i < cf->queries; i++)
        eng->index_eq(h, people[order[i % cf->n] - 1].name, people[order[i % cf->n] - 1].namelen);
#else
    eng->begin_read(h);
#endif
    t = now();
    for (size_t i = 0; i < cf->n; i++) {
        if (!eng->lookup(h, order[i], &p)) die(eng->name, "lookup missed");
        check += p.age + p.namelen + (uint64_t)p.score + p.active;
    }
    out[W_LOOKUP] = (double)cf->n / (now() - t);
    eng->end_read(h);
    out[W_RSS_LOOKUP_ANON] = rss_mb("RssAnon") - anon0;

    uint64_t c1 = 0, c2 = 0;
    TIME_REPEAT(0.3, calls, c1 = eng->count(h, false));
    out[W_COUNT_ONE] = (double)cf->n / elapsed;
    TIME_REPEAT(0.3, calls, c2 = eng->count(h, true));
    out[W_COUNT_TWO] = (double)cf->n / elapsed;
    out[W_RSS_SCAN_ANON] = rss_mb("RssAnon") - anon0;
    check += c1 * 3 + c2 * 7;

    eng->begin_read(h);
    t = now();
    for (size_t i = 0; i < cf->queries; i++) {
        const person *q = &people[order[i % cf->n] - 1];
        uint64_t id = eng->index_eq(h, q->name, q->namelen);
        if (!id) die(eng->name, "index_eq missed");
    }
    out[W_INDEX_EQ] = (double)cf->queries / (now() - t);
    eng->end_read(h);

    uint64_t ids[100];
    size_t got = 0;
    TIME_REPEAT(0.3, calls, got = eng->range_sort(h, ids));
    out[W_RANGE_SORT] = 1.0 / elapsed;
    for (size_t i = 0; i < got; i++) check += ids[i] * (i + 1);

    size_t nu = cf->n / 10 ? cf->n / 10 : 1;
    uint64_t *uids = malloc(nu * sizeof *uids);
    double *scores = malloc(nu * sizeof *scores);
    for (size_t i = 0; i < nu; i++) {
        uids[i] = order[(i * 7919) % cf->n];
        scores[i] = (double)i / 3.0;
    }
    t = now();
    eng->update(h, uids, nu, scores);
    out[W_UPDATE] = (double)nu / (now() - t);
    free(uids);
    free(scores);

    person extra;
    t = now();
    for (size_t i = 0; i < cf->commits; i++) {
        make_person(&extra, cf->n + 1 + i);
        eng->commit_one(h, &extra);
    }
    out[W_COMMIT] = (double)cf->commits / (now() - t);

    t = now();
    uint64_t deleted = eng->delete_young(h);
    out[W_DELETE] = (double)deleted / (now() - t);
    check += deleted * 11;
    eng->close(h);

    t = now();
    h = eng->open(dir);
    check += eng->total(h);
    out[W_OPEN] = (now() - t) * 1000.0;
    t = now();
    check += eng->count(h, false) * 13;
    out[W_FIRST_SCAN] = (double)cf->n / (now() - t);
    eng->close(h);
    out[W_RSS_PEAK] = rss_mb("VmHWM");
    out[W_CHECK] = (double)check;
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd)) die("rm", dir);
}

/* ------------------------------------------------------------------ the machine's limits */

static double fdatasync_rate(const char *dir) {
    char path[600];
    snprintf(path, sizeof path, "%s/raw-sync.bin", dir);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) die("open", path);
    uint8_t page[4096];
    memset(page, 1, sizeof page);
    long n = 0;
    double t0 = now();
    while (now() - t0 < 0.5) {
        if (pwrite(fd, page, sizeof page, (off_t)(n % 64) * 4096) != 4096 || fdatasync(fd))
            die("fdatasync", path);
        n++;
    }
    double rate = (double)n / (now() - t0);
    close(fd);
    unlink(path);
    return rate;
}

static double mem_read_gbs(void) {
    size_t bytes = 256u << 20;
    uint64_t *buf = malloc(bytes);
    memset(buf, 1, bytes);
    double best = 0;
    volatile uint64_t sink = 0;
    for (int r = 0; r < 3; r++) {
        double t0 = now();
        uint64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (size_t i = 0; i < bytes / 8; i += 4) {
            s0 += buf[i];
            s1 += buf[i + 1];
            s2 += buf[i + 2];
            s3 += buf[i + 3];
        }
        sink += s0 + s1 + s2 + s3;
        double gbs = (double)bytes / (now() - t0) / 1e9;
        if (gbs > best) best = gbs;
    }
    free(buf);
    return best;
}

static int cmp_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv) {
    config cf = {1000000, 10000, 100000, "build/bench-data"};
    int reps = 3;
    const char *only = NULL;
    static const char usage[] =
        "bench [-n N>=10] [-r REPS] [-c COMMITS] [-q INDEX_QUERIES] [-d DIR] [-e ENGINE]";
    for (int i = 1; i < argc; i += 2) {
        bool known = argv[i][0] == '-' && argv[i][1] && strchr("enrcqd", argv[i][1]) &&
                     !argv[i][2];
        if (!known || i + 1 == argc) {
            fprintf(stderr, "bench: '%s' %s\nusage: %s\n", argv[i],
                    known ? "needs a value" : "is not an option", usage);
            return 2;
        }
        if (!strcmp(argv[i], "-e")) only = argv[i + 1];
        else if (!strcmp(argv[i], "-n")) cf.n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-r")) reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "-c")) cf.commits = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-q")) cf.queries = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-d")) cf.dir = argv[i + 1];
    }
    if (cf.n < 10 || reps < 1 || cf.queries < 1) die("usage", usage);
    if (cf.queries > cf.n * 10) cf.queries = cf.n * 10;
    char cmd[600];
    snprintf(cmd, sizeof cmd, "mkdir -p '%s'", cf.dir);
    if (system(cmd)) die("mkdir", cf.dir);

    person *people = malloc(cf.n * sizeof *people);
    uint64_t *order = malloc(cf.n * sizeof *order);
    for (size_t i = 0; i < cf.n; i++) make_person(&people[i], i + 1);
    for (size_t i = 0; i < cf.n; i++) order[i] = i + 1;
    for (size_t i = cf.n; i > 1; i--) { /* random lookup order, the same for all engines */
        size_t j = rnd() % i;
        uint64_t t = order[i - 1];
        order[i - 1] = order[j];
        order[j] = t;
    }
#ifdef BENCH_CRYPT
    const engine *engines[] = {&strata_enc_engine, &strata_engine, &sqlite_engine};
#else
    const engine *engines[] = {&strata_engine, &sqlite_engine, &lmdb_engine};
#endif
    double results[3][W_COUNT], runs[8][W_COUNT];
    bool found = !only;
    for (int e = 0; e < 3; e++) found |= only && !strcmp(only, engines[e]->name);
    if (!found) die("usage", "-e takes one of the engines' names");
    for (int e = 0; e < 3; e++) {
        if (only && strcmp(only, engines[e]->name)) continue;
        for (int r = 0; r < reps && r < 8; r++) {
            int fds[2];
            if (pipe(fds)) die("pipe", NULL);
            pid_t pid = fork();
            if (pid == 0) {
                close(fds[0]);
                double out[W_COUNT] = {0};
                run_engine(engines[e], &cf, people, order, out);
                if (write(fds[1], out, sizeof out) != (ssize_t)sizeof out) _exit(3);
                _exit(0);
            }
            close(fds[1]);
            ssize_t got = read(fds[0], runs[r], sizeof runs[r]);
            close(fds[0]);
            int status;
            waitpid(pid, &status, 0);
            if (got != (ssize_t)sizeof runs[r] || !WIFEXITED(status) || WEXITSTATUS(status))
                die(engines[e]->name, "benchmark child failed");
        }
        for (int w = 0; w < W_COUNT; w++) {
            double v[8];
            for (int r = 0; r < reps && r < 8; r++) v[r] = runs[r][w];
            int k = reps < 8 ? reps : 8;
            qsort(v, (size_t)k, sizeof *v, cmp_double);
            results[e][w] = v[k / 2];
        }
    }
    if (only) { /* one engine: its numbers, no ratios */
        int e = !strcmp(only, engines[0]->name) ? 0 : !strcmp(only, engines[1]->name) ? 1 : 2;
        for (int w = 0; w < W_PRINTED; w++)
            printf("%-11s %14.1f %10s (%s)\n", wnames[w], results[e][w], wunits[w], only);
        free(people);
        free(order);
        return 0;
    }
    /* Every engine must have computed the same answers. */
    if (results[0][W_CHECK] != results[1][W_CHECK] || results[0][W_CHECK] != results[2][W_CHECK]) {
        fprintf(stderr, "bench: engines disagree (check %.0f %.0f %.0f)\n", results[0][W_CHECK],
                results[1][W_CHECK], results[2][W_CHECK]);
        return 1;
    }
    double syncs = fdatasync_rate(cf.dir), gbs = mem_read_gbs();

    const char *n0 = engines[0]->name, *n1 = engines[1]->name, *n2 = engines[2]->name;
#ifdef BENCH_CRYPT
    const char *tag = "crypt";
#else
    const char *tag = "bench";
#endif
    char v1[32], v2[32];
    snprintf(v1, sizeof v1, "vs %s", n1);
    snprintf(v2, sizeof v2, "vs %s", n2);
    printf("N=%zu objects, %zu single-object commits, %d repetition(s), medians\n", cf.n,
           cf.commits, reps);
    printf("%-11s %14s %14s %14s %10s %9s %9s\n", "workload", n0, n1, n2, "unit", v1, v2);
    for (int w = 0; w < W_PRINTED; w++) {
        bool lower_better = w == W_OPEN || w == W_SIZE;
        double s = results[0][w], q = results[1][w], l = results[2][w];
        double vq = lower_better ? q / s : s / q, vl = lower_better ? l / s : s / l;
        printf("%-11s %14.1f %14.1f %14.1f %10s %8.2fx %8.2fx\n", wnames[w], s, q, l, wunits[w], vq, vl);
    }
    printf("%-11s %14.1f %14.1f %14.1f %10s\n", "rss lookup", results[0][W_RSS_LOOKUP_ANON],
           results[1][W_RSS_LOOKUP_ANON], results[2][W_RSS_LOOKUP_ANON], "MB heap");
    printf("%-11s %14.1f %14.1f %14.1f %10s\n", "rss scans", results[0][W_RSS_SCAN_ANON],
           results[1][W_RSS_SCAN_ANON], results[2][W_RSS_SCAN_ANON], "MB heap");
    printf("%-11s %14.1f %14.1f %14.1f %10s\n", "rss peak", results[0][W_RSS_PEAK],
           results[1][W_RSS_PEAK], results[2][W_RSS_PEAK], "MB");
    printf("(ratios above 1 mean %s is ahead: rates %s/peer, ms and bytes peer/%s)\n", n0, n0, n0);
    for (int w = 0; w < W_PRINTED; w++) {
        bool lower_better = w == W_OPEN || w == W_SIZE;
        double s = results[0][w], q = results[1][w], l = results[2][w];
        printf("%s %s %s=%.6g %s=%.6g %s=%.6g unit=%s vs_%s=%.3f vs_%s=%.3f\n", tag, wnames[w],
               n0, s, n1, q, n2, l, wunits[w], n1, lower_better ? q / s : s / q, n2,
               lower_better ? l / s : s / l);
    }
    printf("%s rss %s_lookup_heap_mb=%.1f %s_lookup_heap_mb=%.1f %s_lookup_heap_mb=%.1f "
           "%s_scan_heap_mb=%.1f %s_scan_heap_mb=%.1f %s_scan_heap_mb=%.1f\n", tag,
           n0, results[0][W_RSS_LOOKUP_ANON], n1, results[1][W_RSS_LOOKUP_ANON],
           n2, results[2][W_RSS_LOOKUP_ANON], n0, results[0][W_RSS_SCAN_ANON],
           n1, results[1][W_RSS_SCAN_ANON], n2, results[2][W_RSS_SCAN_ANON]);
    printf("limit fdatasync_per_s=%.0f mem_read_gb_s=%.2f\n", syncs, gbs);
    /* The counts against the time the machine needs to read the bytes they scan, as Strata
     * packs them (age: 8 bits a value, active: 1 bit): 1 would be memory speed. */
    double n = (double)cf.n, read_one = n / (gbs * 1e9), read_two = (n + n / 8) / (gbs * 1e9);
    if (gbs > 0 && results[0][W_COUNT_ONE] > 0 && results[0][W_COUNT_TWO] > 0)
        printf("%s scan_vs_memory count_one=%.1f count_two=%.1f (times the column bytes' read)\n",
               tag, n / results[0][W_COUNT_ONE] / read_one, n / results[0][W_COUNT_TWO] / read_two);
    free(people);
    free(order);
    return 0;
}
