/*
 * space_bench.c — the `space` group of make bench: what a text-heavy data set costs on disk,
 * and what reading it packed costs.
 *
 * Data: N messages as in the chat example — id (integer primary key), sent (a date), body
 * (10–200 characters: Chinese, or Chinese mixed with English words and numbers, drawn from a
 * vocabulary with a Zipf-like skew, as chat text is), read (bool) — the same from a fixed seed
 * for Strata and SQLite, inserted in commits of 10,000.
 *
 * Rows (bytes per message, the file's size on disk over N):
 *   strata        as inserted
 *   compacted     after strata_db_compact without packing (pages in tree order, no free space)
 *   packed        after strata_db_compact with packing (LZ4 pages in a packed region)
 *   sqlite        after VACUUM (SQLite's own compaction), WAL checkpointed
 * and reading (queries per second, the median of 5, each in a fresh read transaction):
 *   scan          body CONTAINS '好' (every body read)
 *   count         read == false (one packed column)
 * on the compacted file and on the packed one; the ratio packed/plain is what packing costs.
 *
 * Usage: space_bench [-n N] [-d DIR]
 */
#define BENCH_NAME "space_bench"
#include "benchlib.h"

#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------------------ messages */

static const char *hanzi[] = {"我", "你", "他", "们", "的", "了", "是", "不", "在", "有", "这", "个",
                              "好", "吗", "吧", "啊", "呢", "今天", "明天", "晚上", "一起", "吃饭",
                              "工作", "时间", "朋友", "电影", "已经", "还是", "什么", "知道", "觉得",
                              "可以", "没有", "现在", "北京", "上海", "开会", "下班", "周末", "谢谢",
                              "哈哈", "真的", "问题", "项目", "发给", "文件", "看看", "等等", "马上"};
static const char *latin[] = {"ok", "meeting", "PR", "deploy", "ok!", "lol", "iPhone", "the",
                              "build", "review", "3pm", "link", "https://t.cn/x", "v2", "bug"};

/* A skewed pick from n words: low indexes far more often. */
static size_t skewed(size_t n) {
    double u = (double)(rnd() % 1000000) / 1e6;
    return (size_t)((double)n * u * u * u) % n;
}

/* Message i's body into buf (10–200 characters): its length in bytes. */
static size_t make_body(uint64_t i, char *buf, size_t cap) {
    rng = i * 0x2545F4914F6CDD1Dull + 1;
    size_t chars = 10 + rnd() % 191, len = 0, n = 0;
    bool mixed = rnd() % 3 == 0;
    while (n < chars && len + 40 < cap) {
        const char *w;
        if (mixed && rnd() % 4 == 0) {
            w = latin[skewed(sizeof latin / sizeof *latin)];
            buf[len++] = ' ';
            n++;
        } else {
            w = hanzi[skewed(sizeof hanzi / sizeof *hanzi)];
        }
        size_t wl = strlen(w);
        memcpy(buf + len, w, wl);
        len += wl;
        n += wl >= 3 ? wl / 3 : wl; /* characters, roughly */
        if (rnd() % 23 == 0) len += (size_t)snprintf(buf + len, cap - len, "%llu", (unsigned long long)(rnd() % 1000));
    }
    return len;
}

static int64_t sent_at(uint64_t i) { return 1700000000 + (int64_t)i * 17 + (int64_t)(rnd() % 13); }

/* ------------------------------------------------------------------ Strata */

static void strata_load(const char *path, size_t n) {
    strata_db_t *db = open_db(path);
    strata_error e;
    strata_col_t c_sent, c_body, c_read, c_id;
    char body[1024];
    for (size_t at = 0; at < n;) {
        strata_txn_t *w;
        strata_table_t *t;
        check(strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e), &e, "begin");
        if (at == 0) {
            check(strata_table_create(w, "Message", &t, &e), &e, "table");
            check(strata_table_add_property(t, "id", STRATA_TYPE_INT, STRATA_PROP_PRIMARY_KEY, NULL, &c_id, &e), &e, "id");
            check(strata_table_add_property(t, "sent", STRATA_TYPE_TIMESTAMP, 0, NULL, &c_sent, &e), &e, "sent");
            check(strata_table_add_property(t, "body", STRATA_TYPE_STRING, 0, NULL, &c_body, &e), &e, "body");
            check(strata_table_add_property(t, "read", STRATA_TYPE_BOOL, 0, NULL, &c_read, &e), &e, "read");
        } else {
            check(strata_table_open(w, "Message", &t, &e), &e, "table");
        }
        for (size_t end = at + 10000 < n ? at + 10000 : n; at < end; at++) {
            size_t len = make_body(at, body, sizeof body);
            strata_value id = {.type = STRATA_TYPE_INT, .u.i = (int64_t)at};
            strata_value sent = {.type = STRATA_TYPE_TIMESTAMP, .u.timestamp = {sent_at(at), 0}};
            strata_value b = {.type = STRATA_TYPE_STRING, .u.bytes = {body, len}};
            strata_value r = {.type = STRATA_TYPE_BOOL, .u.b = at % 3 != 0};
            strata_key_t k;
            check(strata_obj_create_pk(t, &id, &k, &e), &e, "create");
            check(strata_obj_set(t, k, c_sent, &sent, &e), &e, "sent");
            check(strata_obj_set(t, k, c_body, &b, &e), &e, "body");
            check(strata_obj_set(t, k, c_read, &r, &e), &e, "read");
        }
        check(strata_txn_commit(w, &e), &e, "commit");
        strata_txn_free(w);
    }
    check(strata_db_close(db, &e), &e, "close");
}

static void compact(const char *path, bool pack) {
    strata_db_t *db = open_db(path);
    strata_error e;
    strata_copy_options o;
    strata_copy_options_init(&o);
    o.pack = pack;
    check(strata_db_compact(db, &o, &e), &e, "compact");
    check(strata_db_close(db, &e), &e, "close");
}

/* Queries per second of `pred` on the file (median of 5, a fresh read transaction each), and
 * its count. */
static double query_rate(const char *path, const char *pred, uint64_t *count) {
    strata_db_t *db = open_db(path);
    strata_error e;
    double v[5];
    for (int r = 0; r < 5; r++) {
        strata_txn_t *txn;
        strata_query_t *q;
        check(strata_txn_begin(db, STRATA_TXN_READ, &txn, &e), &e, "begin");
        check(strata_query_compile(txn, "Message", pred, &q, &e), &e, pred);
        double t = now();
        check(strata_query_count(q, txn, NULL, 0, count, &e), &e, pred);
        v[r] = 1.0 / (now() - t);
        strata_query_free(q);
        strata_txn_free(txn);
    }
    strata_db_close(db, &e);
    qsort(v, 5, sizeof *v, cmp_double);
    return v[2];
}

/* ------------------------------------------------------------------ SQLite */

static uint64_t sqlite_bytes(const char *path, size_t n) {
    sqlite3 *db;
    if (sqlite3_open(path, &db) != SQLITE_OK) die("sqlite open", path);
    sq(db, "PRAGMA journal_mode=WAL");
    sq(db, "PRAGMA synchronous=FULL");
    sq(db, "CREATE TABLE message (id INTEGER PRIMARY KEY, sent INTEGER, body TEXT, read INTEGER)");
    sqlite3_stmt *ins;
    if (sqlite3_prepare_v2(db, "INSERT INTO message VALUES (?, ?, ?, ?)", -1, &ins, NULL) != SQLITE_OK)
        die("prepare", sqlite3_errmsg(db));
    char body[1024];
    for (size_t at = 0; at < n;) {
        sq(db, "BEGIN");
        for (size_t end = at + 10000 < n ? at + 10000 : n; at < end; at++) {
            size_t len = make_body(at, body, sizeof body);
            sqlite3_bind_int64(ins, 1, (sqlite3_int64)at);
            sqlite3_bind_int64(ins, 2, sent_at(at));
            sqlite3_bind_text(ins, 3, body, (int)len, SQLITE_STATIC);
            sqlite3_bind_int(ins, 4, at % 3 != 0);
            if (sqlite3_step(ins) != SQLITE_DONE) die("insert", sqlite3_errmsg(db));
            sqlite3_reset(ins);
        }
        sq(db, "COMMIT");
    }
    sqlite3_finalize(ins);
    sq(db, "VACUUM");
    sq(db, "PRAGMA wal_checkpoint(TRUNCATE)");
    sqlite3_close(db);
    return disk_bytes(path);
}

/* ------------------------------------------------------------------ the run */

int main(int argc, char **argv) {
    size_t n = 1000000;
    const char *dir = "build/bench-data";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "-n")) n = strtoull(argv[i + 1], NULL, 10);
        else if (!strcmp(argv[i], "-d")) dir = argv[i + 1];
        else die("usage", "space_bench [-n N] [-d DIR]");
    }
    if (n < 10) die("usage", "N must be at least 10");
    char path[300], sqpath[300], cmd[2400];
    snprintf(path, sizeof path, "%.250s/space.db", dir);
    snprintf(sqpath, sizeof sqpath, "%.250s/space.sqlite", dir);
    snprintf(cmd, sizeof cmd, "mkdir -p '%.250s' && rm -f '%s' '%s.lock' '%s.log' '%s' '%s-wal' '%s-shm'",
             dir, path, path, path, sqpath, sqpath, sqpath);
    if (system(cmd)) die("mkdir", dir);

    double t = now();
    strata_load(path, n);
    double load_s = now() - t;
    uint64_t plain = disk_bytes(path);
    compact(path, false);
    uint64_t compacted = disk_bytes(path);
    uint64_t c_scan, c_count;
    double scan_plain = query_rate(path, "body CONTAINS '好'", &c_scan);
    double count_plain = query_rate(path, "read == false", &c_count);
    t = now();
    compact(path, true);
    double pack_s = now() - t;
    uint64_t packed = disk_bytes(path);
    uint64_t p_scan, p_count;
    double scan_packed = query_rate(path, "body CONTAINS '好'", &p_scan);
    double count_packed = query_rate(path, "read == false", &p_count);
    if (p_scan != c_scan || p_count != c_count) die("packed", "the packed file answers differently");
    uint64_t sqlite = sqlite_bytes(sqpath, n);

    double per = (double)n;
    printf("space: N=%zu messages (body 10-200 characters, Chinese and mixed), bytes per message on disk\n", n);
    printf("%-22s %12s %10s\n", "file", "bytes/msg", "vs sqlite");
    printf("%-22s %12.1f %9.2fx\n", "strata (as inserted)", plain / per, (double)plain / (double)sqlite);
    printf("%-22s %12.1f %9.2fx\n", "strata compacted", compacted / per, (double)compacted / (double)sqlite);
    printf("%-22s %12.1f %9.2fx\n", "strata packed (LZ4)", packed / per, (double)packed / (double)sqlite);
    printf("%-22s %12.1f %9.2fx\n", "sqlite after VACUUM", sqlite / per, 1.0);
    printf("%-22s %12s %12s %10s\n", "query (per second)", "compacted", "packed", "packed/plain");
    printf("%-22s %12.2f %12.2f %9.2fx\n", "body CONTAINS '好'", scan_plain, scan_packed, scan_packed / scan_plain);
    printf("%-22s %12.2f %12.2f %9.2fx\n", "read == false", count_plain, count_packed, count_packed / count_plain);
    printf("(insert %.1f s; packing compaction %.2f s; %llu and %llu matches)\n", load_s, pack_s,
           (unsigned long long)c_scan, (unsigned long long)c_count);
    printf("bench space strata=%.1f compacted=%.1f packed=%.1f sqlite=%.1f packed_vs_sqlite=%.3f "
           "scan_packed_vs_plain=%.3f count_packed_vs_plain=%.3f\n", plain / per, compacted / per,
           packed / per, sqlite / per, (double)packed / (double)sqlite, scan_packed / scan_plain,
           count_packed / count_plain);
    if (getenv("SPACE_KEEP")) return 0; /* the files, for a closer look */
    snprintf(cmd, sizeof cmd, "rm -f '%s' '%s.lock' '%s.log' '%s' '%s-wal' '%s-shm'", path, path,
             path, sqpath, sqpath, sqpath);
    if (system(cmd)) die("rm", dir);
    return 0;
}
