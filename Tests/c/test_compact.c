/*
 * test_compact.c — copies and compaction: a copy (strata_db_write_copy) holds exactly what the
 * version it copied holds, passes verify, has no free space and takes further commits; a
 * compaction (strata_db_compact) shrinks a file full of freed pages, keeps every value, and the
 * handle goes on with the new file; both refuse clearly what they cannot do (a path that
 * exists, an open transaction, another handle, a memory database, a read-only handle); a failed
 * write or sync at every step of either leaves the original whole and the handle usable; the
 * space report adds up. Packed pages (LZ4): a packed copy holds the same data in fewer bytes,
 * reads through a cache that evicts (a debug build keeps 16 pages), is rewritten plain page by
 * page as commits change it, and its region is freed once no page of it is used; a byte changed
 * anywhere in the region gives STRATA_ERR_CORRUPT or the right data, never a wrong answer. A
 * file grown while a reader was pinned gives its end back through ordinary commits once the
 * reader lets go.
 */
#include "sampledb.h"

#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>

static strata_options opts(void) {
    strata_options o;
    strata_options_init(&o);
    o.map_size = 1ull << 30;
    return o;
}

static bool exists(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0;
}

static uint64_t file_bytes(const char *path) {
    struct stat sb;
    return stat(path, &sb) == 0 ? (uint64_t)sb.st_size : 0;
}

/* The database at path opens, passes verify and holds exactly what fingerprint fp says (the
 * error, if any, in tl_err). */
static bool holds(const char *path, uint64_t fp) {
    strata_options o = opts();
    strata_db_t *db;
    uint64_t got = 0;
    bool ok = strata_db_open(path, &o, &db, E) == STRATA_OK;
    if (ok) {
        ok = strata_db_verify(db, E) == STRATA_OK && fingerprint(db, &got) == STRATA_OK && got == fp;
        strata_db_close(db, NULL);
    }
    return ok;
}

/* A sample database at path with versions 1..n; *fp_out its fingerprint. */
static int make_sample(const char *path, int n, cols *c, uint64_t *fp_out) {
    strata_options o = opts();
    strata_db_t *db;
    int rc = strata_db_open(path, &o, &db, E);
    for (int v = 1; v <= n && rc == STRATA_OK; v++) rc = commit_version(db, v, c);
    if (rc == STRATA_OK) rc = fingerprint(db, fp_out);
    strata_db_close(db, NULL);
    return rc;
}

static void copy_holds_the_version(void) {
    const char *path = tl_path("copy-src.db"), *copy = tl_path("copy.db");
    cols c, c2;
    uint64_t fp, fp_copy;
    OK(make_sample(path, 5, &c, &fp));
    strata_options o = opts();
    strata_db_t *db, *cdb;
    OK(strata_db_open(path, &o, &db, E));
    OK(strata_db_write_copy(db, copy, NULL, E));
    CHECK(!exists(tl_path("copy.db.copying")));
    OK(strata_db_open(copy, &o, &cdb, E));
    OK(strata_db_verify(cdb, E));
    OK(fingerprint(cdb, &fp_copy));
    CHECK(fp_copy == fp);
    strata_space s = {.size = sizeof s}, sc = {.size = sizeof sc};
    OK(strata_db_space_get(db, &s, E));
    OK(strata_db_space_get(cdb, &sc, E));
    CHECK(sc.free_bytes == 0);
    CHECK(sc.used_bytes <= s.used_bytes);      /* packed cells may need no more pages */
    CHECK(sc.file_bytes == sc.used_bytes);     /* nothing past the last page yet */
    CHECK(s.used_bytes + s.free_bytes <= s.file_bytes);
    fprintf(stderr, "  source: %llu bytes on disk, %llu used, %llu free; copy: %llu bytes\n",
            (unsigned long long)s.file_bytes, (unsigned long long)s.used_bytes,
            (unsigned long long)s.free_bytes, (unsigned long long)sc.file_bytes);
    /* the copy is a database of its own: the same commit on both gives the same data */
    c2 = c;
    OK(commit_version(db, 6, &c));
    OK(commit_version(cdb, 6, &c2));
    OK(strata_db_verify(cdb, E));
    OK(fingerprint(db, &fp));
    OK(fingerprint(cdb, &fp_copy));
    CHECK(fp_copy == fp);
    OK(strata_db_close(cdb, E));
    CHECK(holds(copy, fp));
    OK(strata_db_close(db, E));
}

/* The copy is of the latest version when it starts; an older reader and later writers do not
 * change it. */
static void copy_beside_readers_and_writers(void) {
    const char *path = tl_path("busy.db"), *copy = tl_path("busy-copy.db");
    cols c;
    uint64_t fp3, fp;
    OK(make_sample(path, 3, &c, &fp3));
    strata_options o = opts();
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E)); /* pins version 3 */
    OK(commit_version(db, 4, &c));
    OK(commit_version(db, 5, &c));
    OK(fingerprint(db, &fp));
    strata_txn_t *w;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E)); /* a writer mid-transaction */
    OK(strata_db_write_copy(db, copy, NULL, E));
    strata_txn_abort(w);
    strata_txn_free(w);
    strata_txn_free(r);
    CHECK(holds(copy, fp) && fp != fp3);
    /* never over a file */
    EXPECT_CODE(strata_db_write_copy(db, copy, NULL, E), STRATA_ERR_EXISTS);
    CHECK(strstr(tl_err.message, "busy-copy.db") != NULL);
    CHECK(!exists(tl_path("busy-copy.db.copying")));
    EXPECT_CODE(strata_db_write_copy(db, tl_path("no-such-dir/x.db"), NULL, E), STRATA_ERR_IO);
    CHECK(strstr(tl_err.message, "no-such-dir/x.db") != NULL);
    EXPECT_CODE(strata_db_write_copy(db, "", NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_db_write_copy(NULL, copy, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_db_close(db, E));
    /* an in-memory database can be written to a file */
    strata_options mo = opts();
    mo.durability = STRATA_DURABILITY_MEMORY;
    strata_db_t *mdb;
    OK(strata_db_open("compact-mem", &mo, &mdb, E));
    cols mc;
    OK(commit_version(mdb, 1, &mc));
    OK(commit_version(mdb, 2, &mc));
    OK(fingerprint(mdb, &fp));
    OK(strata_db_write_copy(mdb, tl_path("from-mem.db"), NULL, E));
    EXPECT_CODE(strata_db_compact(mdb, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_db_close(mdb, E));
    CHECK(holds(tl_path("from-mem.db"), fp));
}

/* Objects made and mostly deleted: a compaction gives the space back, keeps every value, and
 * the handle writes on. */
static void compact_shrinks_and_goes_on(void) {
    const char *path = tl_path("shrink.db");
    cols c;
    uint64_t fp, fp_after;
    OK(make_sample(path, 5, &c, &fp));
    CHECK(tl_copy_file(path, tl_path("shrink.db.compacting"))); /* as a compaction that died */
    strata_options o = opts();
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    CHECK(!exists(tl_path("shrink.db.compacting"))); /* the first open removed it */
    /* a big table, then most of it deleted */
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t body, n;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Message", &t, E));
    OK(strata_table_add_property(t, "body", STRATA_TYPE_STRING, 0, NULL, &body, E));
    OK(strata_table_add_property(t, "n", STRATA_TYPE_INT, STRATA_PROP_INDEXED, NULL, &n, E));
    char text[300];
    for (int i = 0; i < 20000; i++) {
        strata_key_t k;
        int len = snprintf(text, sizeof text, "消息 %d: %.*s", i, 40 + i % 200,
                           "the quick brown fox jumps over the lazy dog and keeps running across the "
                           "field until the evening comes and the light goes down over the hills of "
                           "the valley where nobody has been since the rains of the last long year.");
        OK(strata_obj_create(t, &k, E));
        OK(strata_obj_set(t, k, body, (strata_value[]){{.type = STRATA_TYPE_STRING, .u.bytes = {text, (size_t)len}}}, E));
        OK(strata_obj_set(t, k, n, (strata_value[]){{.type = STRATA_TYPE_INT, .u.i = i}}, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_open(w, "Message", &t, E));
    for (strata_key_t k = 2000; k < 20000; k++) OK(strata_obj_delete(t, k, E)); /* the newer 90% */
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    OK(fingerprint(db, &fp));
    strata_space before = {.size = sizeof before}, after = {.size = sizeof after};
    OK(strata_db_space_get(db, &before, E));
    uint64_t disk_before = file_bytes(path);
    OK(strata_db_compact(db, NULL, E));
    OK(strata_db_space_get(db, &after, E));
    uint64_t disk_after = file_bytes(path);
    fprintf(stderr, "  before: %llu bytes (%llu used, %llu free); after: %llu bytes (%llu used)\n",
            (unsigned long long)disk_before, (unsigned long long)before.used_bytes,
            (unsigned long long)before.free_bytes, (unsigned long long)disk_after,
            (unsigned long long)after.used_bytes);
    CHECK(after.file_bytes == disk_after);
    CHECK(after.free_bytes == 0 && after.used_bytes <= before.used_bytes);
    CHECK(disk_after * 3 < disk_before);
    CHECK(!exists(tl_path("shrink.db.compacting")));
    OK(strata_db_verify(db, E));
    OK(fingerprint(db, &fp_after));
    CHECK(fp_after == fp);
    /* the handle goes on: reads, writes (a new commit log), a second compaction, a reopen */
    OK(commit_version(db, 6, &c));
    OK(commit_version(db, 7, &c));
    OK(fingerprint(db, &fp));
    OK(strata_db_verify(db, E));
    OK(strata_db_compact(db, NULL, E));
    OK(fingerprint(db, &fp_after));
    CHECK(fp_after == fp);
    OK(commit_version(db, 8, &c));
    OK(fingerprint(db, &fp));
    OK(strata_db_close(db, E));
    CHECK(holds(path, fp));
}

static void compact_refuses_clearly(void) {
    const char *path = tl_path("refuse.db");
    cols c;
    uint64_t fp, fp_after;
    OK(make_sample(path, 2, &c, &fp));
    strata_options o = opts();
    strata_db_t *db, *other;
    OK(strata_db_open(path, &o, &db, E));
    strata_txn_t *r;
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    EXPECT_CODE(strata_db_compact(db, NULL, E), STRATA_ERR_BUSY);
    CHECK(strstr(tl_err.message, "transaction") != NULL);
    strata_txn_free(r);
    OK(strata_db_open(path, &o, &other, E));
    EXPECT_CODE(strata_db_compact(db, NULL, E), STRATA_ERR_BUSY);
    CHECK(strstr(tl_err.message, "another handle or process") != NULL);
    OK(fingerprint(other, &fp_after)); /* both handles as they were */
    CHECK(fp_after == fp);
    OK(strata_db_close(other, E));
    OK(fingerprint(db, &fp_after));
    CHECK(fp_after == fp);
    EXPECT_CODE(strata_db_compact(NULL, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_db_close(db, E));
    strata_options ro = opts();
    ro.read_only = true;
    OK(strata_db_open(path, &ro, &db, E));
    EXPECT_CODE(strata_db_compact(db, NULL, E), STRATA_ERR_READ_ONLY);
    OK(strata_db_close(db, E));
    strata_space s = {.size = 8};
    OK(strata_db_open(path, &o, &db, E));
    EXPECT_CODE(strata_db_space_get(db, &s, E), STRATA_ERR_INVALID_ARGUMENT);
    EXPECT_CODE(strata_db_space_get(db, NULL, E), STRATA_ERR_INVALID_ARGUMENT);
    OK(strata_db_close(db, E));
}

/* ------------------------------------------------------------------ failures at every step */

typedef struct faulty {
    int calls;   /* writes and syncs seen */
    int fail_at; /* fail this one (0: none) */
    int err;
} faulty;

static ssize_t f_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off) {
    faulty *f = ctx;
    if (++f->calls == f->fail_at) {
        errno = f->err;
        return -1;
    }
    return pwrite(fd, buf, len, off);
}

static int f_sync(void *ctx, int fd) {
    faulty *f = ctx;
    if (++f->calls == f->fail_at) {
        errno = EIO;
        return -1;
    }
    return fdatasync(fd);
}

static int f_grow(void *ctx, int fd, off_t size) { return strata_io_default()->grow(ctx, fd, size); }

/* Fail the k-th write or sync of a compaction (and of a copy), for every k: an error, the
 * original whole, the handle writing on, nothing left behind. */
static void failure_at_every_step(void) {
    const char *path = tl_path("faulty.db");
    cols c;
    uint64_t fp, fp_after;
    faulty f = {0, 0, EIO};
    strata_io_methods io = {sizeof io, &f, f_pwrite, f_sync, f_grow};
    strata_options o = opts();
    o.io = &io;
    int steps = 0, failed = 0;
    for (int k = 1;; k++) {
        tl_remove_db(path);
        char log[600];
        snprintf(log, sizeof log, "%s.log", path);
        unlink(log);
        f.fail_at = 0;
        strata_db_t *db;
        OK(strata_db_open(path, &o, &db, E));
        for (int v = 1; v <= 3; v++) OK(commit_version(db, v, &c));
        OK(fingerprint(db, &fp));
        f.calls = 0;
        f.fail_at = k;
        f.err = k % 2 ? EIO : ENOSPC;
        int rc = strata_db_compact(db, NULL, E);
        f.fail_at = 0;
        if (rc == STRATA_OK) {
            steps = f.calls;
            OK(fingerprint(db, &fp_after));
            CHECK(fp_after == fp);
            OK(strata_db_close(db, E));
            break;
        }
        failed++;
        CHECK(rc == STRATA_ERR_IO || rc == STRATA_ERR_NO_SPACE);
        CHECK(tl_err.message[0] != 0);
        CHECK(!exists(tl_path("faulty.db.compacting")));
        OK(fingerprint(db, &fp_after));
        CHECK(fp_after == fp);
        OK(commit_version(db, 4, &c)); /* the handle writes on */
        OK(strata_db_verify(db, E));
        OK(strata_db_close(db, E));
        OK(strata_db_open(path, &o, &db, E));
        OK(strata_db_verify(db, E));
        OK(strata_db_close(db, E));
        CHECK(k < 10000);
    }
    fprintf(stderr, "  compaction: %d writes and syncs, each failed once: %d clean errors\n", steps, failed);
    CHECK(failed == steps && steps > 3);
    /* the same for a copy */
    const char *copy = tl_path("faulty-copy.db");
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    for (int k = 1;; k++) {
        f.calls = 0;
        f.fail_at = k;
        int rc = strata_db_write_copy(db, copy, NULL, E);
        f.fail_at = 0;
        if (rc == STRATA_OK) break;
        CHECK(rc == STRATA_ERR_IO || rc == STRATA_ERR_NO_SPACE);
        CHECK(!exists(copy) && !exists(tl_path("faulty-copy.db.copying")));
        CHECK(k < 10000);
    }
    OK(fingerprint(db, &fp));
    OK(strata_db_close(db, E));
    CHECK(holds(copy, fp));
}

/* ------------------------------------------------------------------ packed pages */

static int put_kv(strata_db_t *db, int n, int salt) {
    strata_txn_t *w;
    strata_tree_t *t;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E);
    if (rc == STRATA_OK) rc = strata_tree_open(w, "kv", STRATA_KEY_BYTES, STRATA_TREE_CREATE, &t, E);
    char k[32], v[200];
    for (int i = 0; i < n && rc == STRATA_OK; i++) {
        int kl = snprintf(k, sizeof k, "key-%06d", i);
        int vl = snprintf(v, sizeof v, "值 %d/%d: %.*s", i, salt, 20 + i % 100,
                          "lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod "
                          "tempor incididunt ut labore et dolore magna aliqua");
        rc = strata_tree_put(t, k, (size_t)kl, v, (size_t)vl, E);
    }
    if (rc == STRATA_OK) rc = strata_txn_commit(w, E);
    strata_txn_free(w);
    return rc;
}

/* A packed copy: fewer bytes, the same data; commits rewrite what they change plain, and the
 * region is freed with its last page; an unpacked copy has no region. */
static void packed_pages_live_and_go(void) {
    char path[512]; /* tl_path's buffers are reused after eight calls */
    snprintf(path, sizeof path, "%s", tl_path("kv.db"));
    strata_options o = opts();
    strata_db_t *db;
    uint64_t fp, fp_after;
    OK(strata_db_open(path, &o, &db, E));
    OK(put_kv(db, 20000, 1));
    OK(fingerprint(db, &fp));
    strata_copy_options plain;
    strata_copy_options_init(&plain);
    plain.pack = false;
    OK(strata_db_write_copy(db, tl_path("kv-plain.db"), &plain, E));
    for (int level = 0; level <= 12; level += 4) { /* LZ4's fast mode and LZ4HC levels */
        char name[64];
        snprintf(name, sizeof name, "kv-level-%d.db", level);
        strata_copy_options lv;
        strata_copy_options_init(&lv);
        lv.pack_level = level;
        OK(strata_db_write_copy(db, tl_path(name), &lv, E));
        strata_db_t *ldb;
        uint64_t lfp;
        OK(strata_db_open(tl_path(name), &o, &ldb, E));
        OK(strata_db_verify(ldb, E));
        OK(fingerprint(ldb, &lfp));
        CHECK(lfp == fp);
        OK(strata_db_close(ldb, E));
        fprintf(stderr, "  pack_level %d: %llu bytes\n", level, (unsigned long long)file_bytes(tl_path(name)));
    }
    strata_copy_options bad;
    strata_copy_options_init(&bad);
    bad.pack_level = 13;
    EXPECT_CODE(strata_db_write_copy(db, tl_path("kv-bad.db"), &bad, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "pack_level 13") != NULL);
    OK(strata_db_compact(db, NULL, E));
    strata_space s = {.size = sizeof s};
    OK(strata_db_space_get(db, &s, E));
    uint64_t plain_bytes = file_bytes(tl_path("kv-plain.db"));
    fprintf(stderr, "  20,000 entries: %llu bytes plain, %llu packed (%llu pages in a region of %llu bytes)\n",
            (unsigned long long)plain_bytes, (unsigned long long)s.file_bytes,
            (unsigned long long)s.packed_pages, (unsigned long long)s.packed_bytes);
    CHECK(s.packed_pages > 100 && s.packed_bytes > 0 && s.file_bytes * 3 < plain_bytes * 2);
    OK(strata_db_verify(db, E));
    OK(fingerprint(db, &fp_after)); /* read twice: through the cache, which evicts */
    CHECK(fp_after == fp);
    OK(fingerprint(db, &fp_after));
    CHECK(fp_after == fp);
    strata_db_t *pdb;
    OK(strata_db_open(tl_path("kv-plain.db"), &o, &pdb, E));
    strata_space ps = {.size = sizeof ps};
    OK(strata_db_space_get(pdb, &ps, E));
    CHECK(ps.packed_bytes == 0 && ps.packed_pages == 0);
    OK(fingerprint(pdb, &fp_after));
    CHECK(fp_after == fp);
    OK(strata_db_close(pdb, E));
    /* half the keys changed: their pages are rewritten plain, the rest stay packed */
    strata_txn_t *w;
    strata_tree_t *t;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_tree_open(w, "kv", STRATA_KEY_BYTES, 0, &t, E));
    for (int i = 0; i < 10000; i++) {
        char k[32];
        int kl = snprintf(k, sizeof k, "key-%06d", i);
        OK(strata_tree_put(t, k, (size_t)kl, "new", 3, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
    strata_space half = {.size = sizeof half};
    OK(strata_db_space_get(db, &half, E));
    CHECK(half.packed_pages > 0 && half.packed_pages < s.packed_pages && half.packed_bytes == s.packed_bytes);
    OK(strata_db_verify(db, E));
    /* every page changed: the region is freed */
    OK(put_kv(db, 20000, 2));
    OK(fingerprint(db, &fp));
    strata_space none = {.size = sizeof none};
    OK(strata_db_space_get(db, &none, E));
    fprintf(stderr, "  after rewriting half: %llu packed pages; after all: %llu (region %llu bytes, "
            "%llu bytes free)\n", (unsigned long long)half.packed_pages,
            (unsigned long long)none.packed_pages, (unsigned long long)none.packed_bytes,
            (unsigned long long)none.free_bytes);
    CHECK(none.packed_pages == 0 && none.packed_bytes == 0 && none.free_bytes >= s.packed_bytes);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    CHECK(holds(path, fp));
}

/* Every byte of a packed region's pages, changed one at a time (a sample per page): the open or
 * the reads fail with STRATA_ERR_CORRUPT, or give the data unchanged. */
static void damaged_packed_pages_are_named(void) {
    const char *path = tl_path("dmg-src.db"), *copy = tl_path("dmg.db");
    cols c;
    uint64_t fp, got;
    OK(make_sample(path, 3, &c, &fp));
    strata_options o = opts();
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    OK(strata_db_write_copy(db, copy, NULL, E));
    OK(strata_db_close(db, E));
    OK(strata_db_open(copy, &o, &db, E));
    strata_space s = {.size = sizeof s};
    OK(strata_db_space_get(db, &s, E));
    strata_db_info info;
    OK(strata_db_info_get(db, &info, E));
    OK(strata_db_close(db, E));
    uint64_t region_pages = s.packed_bytes / 4096, first = info.page_count - region_pages;
    CHECK(region_pages > 0);
    int corrupt = 0, same = 0;
    tl_seed(77);
    for (uint64_t pg = first; pg < info.page_count; pg++) {
        for (int k = 0; k < 12; k++) {
            off_t at = (off_t)(pg * 4096 + (k == 0 ? rnd() % 32 : rnd() % 4096));
            int fd = open(copy, O_RDWR);
            uint8_t b, flipped;
            CHECK(fd >= 0 && pread(fd, &b, 1, at) == 1);
            flipped = b ^ (uint8_t)(1 + rnd() % 255);
            CHECK(pwrite(fd, &flipped, 1, at) == 1);
            close(fd);
            int rc = strata_db_open(copy, &o, &db, E);
            if (rc == STRATA_OK) {
                rc = fingerprint(db, &got);
                int vrc = strata_db_verify(db, E);
                if (rc == STRATA_OK) CHECK(got == fp); /* read in full: the flip hit padding */
                if (rc == STRATA_OK && vrc) rc = vrc;
                strata_db_close(db, NULL);
            }
            if (rc) {
                CHECK(rc == STRATA_ERR_CORRUPT);
                CHECK(strstr(tl_err.message, "packed") || strstr(tl_err.message, "page"));
                corrupt++;
            } else {
                same++;
            }
            fd = open(copy, O_RDWR);
            CHECK(fd >= 0 && pwrite(fd, &b, 1, at) == 1);
            close(fd);
        }
    }
    fprintf(stderr, "  %llu region pages, 12 bytes each changed: %d named corrupt, %d read the same data\n",
            (unsigned long long)region_pages, corrupt, same);
    CHECK(corrupt > 0);
}

/* ------------------------------------------------------------------ the file gives space back */

static int small_commit(strata_db_t *db, uint64_t i) {
    strata_txn_t *w;
    strata_tree_t *t;
    uint8_t value[64];
    memset(value, (int)i, sizeof value);
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E);
    if (rc == STRATA_OK) rc = strata_tree_open(w, "objects", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E);
    if (rc == STRATA_OK) rc = strata_tree_put_int(t, i % 1000, value, sizeof value, E);
    if (rc == STRATA_OK) rc = strata_txn_commit(w, E);
    strata_txn_free(w);
    return rc;
}

/* A reader pinned through 3,000 commits grows the file; once it lets go, ordinary commits move
 * what they change down and give the end of the file back, without a compaction; a reader of
 * an older version keeps the file from being cut under it. In both file modes. */
static void the_file_shrinks_after_a_pinned_reader_lets_go(void) {
    for (int mode = 0; mode < 2; mode++) {
        const char *path = tl_path(mode ? "shrink-nosync.db" : "shrink-full.db");
        strata_db_t *db = tl_open_db(path, mode ? STRATA_DURABILITY_NO_SYNC : STRATA_DURABILITY_FULL);
        CHECK(db);
        OK(small_commit(db, 0));
        strata_txn_t *pin;
        OK(strata_txn_begin(db, STRATA_TXN_READ, &pin, E));
        for (uint64_t i = 1; i <= 3000; i++) OK(small_commit(db, i));
        uint64_t grown = file_bytes(path);
        strata_txn_free(pin);
        /* another reader, pinned at the release: the file is not cut while it reads */
        OK(strata_txn_begin(db, STRATA_TXN_READ, &pin, E));
        uint64_t held_at = 0;
        for (uint64_t i = 0; i < 400; i++) OK(small_commit(db, i));
        held_at = file_bytes(path);
        strata_tree_t *t;
        strata_cursor_t *c;
        OK(strata_tree_open(pin, "objects", STRATA_KEY_INT, 0, &t, E));
        OK(strata_cursor_open(t, &c, E));
        int n = 0, rc;
        for (rc = strata_cursor_first(c, E); rc == STRATA_OK; rc = strata_cursor_next(c, E)) n++;
        CHECK(rc == STRATA_ERR_NOT_FOUND && n == 1000);
        strata_cursor_close(c);
        strata_txn_free(pin);
        uint64_t i = 0, small = 0;
        for (; i < 20000 && !small; i++) {
            OK(small_commit(db, i));
            if (file_bytes(path) * 8 < grown) small = file_bytes(path);
        }
        fprintf(stderr, "  %s: %llu bytes after 3,000 commits with a reader pinned; %llu with a reader "
                "pinned at the release; %llu after %llu more commits\n", mode ? "NO_SYNC" : "FULL",
                (unsigned long long)grown, (unsigned long long)held_at, (unsigned long long)small,
                (unsigned long long)i);
        CHECK(grown > (8u << 20) && held_at >= grown && small > 0);
        OK(strata_db_verify(db, E));
        OK(strata_db_close(db, E));
        db = tl_open_db(path, STRATA_DURABILITY_FULL);
        CHECK(db);
        OK(strata_db_verify(db, E));
        OK(small_commit(db, 7));
        OK(strata_db_close(db, E));
    }
}

/* Readers on four threads read a packed file through the one cache while a writer rewrites
 * it page by page: every snapshot reads whole (each reader's fingerprint is one of the
 * versions'). */
typedef struct reader_arg {
    strata_db_t *db;
    int rounds, bad;
} reader_arg;

static void *read_packed(void *p) {
    reader_arg *a = p;
    for (int i = 0; i < a->rounds; i++) {
        strata_txn_t *r;
        strata_tree_t *t;
        strata_error e;
        if (strata_txn_begin(a->db, STRATA_TXN_READ, &r, &e) ||
            strata_tree_open(r, "kv", STRATA_KEY_BYTES, 0, &t, &e)) {
            a->bad++;
            continue;
        }
        uint64_t n = 0;
        strata_cursor_t *c;
        if (strata_cursor_open(t, &c, &e) == STRATA_OK) {
            for (int rc = strata_cursor_first(c, &e); rc == STRATA_OK; rc = strata_cursor_next(c, &e)) n++;
            strata_cursor_close(c);
        }
        if (n != 4000) a->bad++;
        /* a count over one small property: leaves unpacked in part, shared by the threads */
        strata_query_t *q;
        uint64_t count = 0;
        if (strata_query_compile(r, "Flag", "on == true", &q, &e) ||
            strata_query_count(q, r, NULL, 0, &count, &e) || count != 1500)
            a->bad++;
        strata_query_free(q);
        strata_txn_free(r);
    }
    return NULL;
}

/* Table Flag: n objects, `on` true for every `every`-th, `note` from the format (one %d). */
static int flag_table(strata_db_t *db, int n, int every, const char *note_format) {
    strata_txn_t *w;
    strata_table_t *t;
    strata_col_t on, note;
    int rc;
    if ((rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E))) return rc;
    if (!(rc = strata_table_create(w, "Flag", &t, E)) &&
        !(rc = strata_table_add_property(t, "on", STRATA_TYPE_BOOL, 0, NULL, &on, E)))
        rc = strata_table_add_property(t, "note", STRATA_TYPE_STRING, 0, NULL, &note, E);
    for (int i = 0; rc == STRATA_OK && i < n; i++) {
        strata_key_t k;
        char text[160];
        int len = snprintf(text, sizeof text, note_format, i);
        strata_value vo = {.type = STRATA_TYPE_BOOL, .u.b = i % every == 0};
        strata_value vn = {.type = STRATA_TYPE_STRING, .u.bytes = {text, (size_t)len}};
        if (!(rc = strata_obj_create(t, &k, E)) && !(rc = strata_obj_set(t, k, on, &vo, E)))
            rc = strata_obj_set(t, k, note, &vn, E);
    }
    if (rc == STRATA_OK) rc = strata_txn_commit(w, E);
    strata_txn_free(w);
    return rc;
}

static int count_of(strata_txn_t *r, const char *table, const char *pred, uint64_t *count) {
    strata_query_t *q = NULL;
    int rc = strata_query_compile(r, table, pred, &q, E);
    if (rc == STRATA_OK) rc = strata_query_count(q, r, NULL, 0, count, E);
    strata_query_free(q);
    return rc;
}

static int unpacked_now(strata_db_t *db, uint64_t *bytes) {
    strata_space sp = {.size = sizeof sp};
    int rc = strata_db_space_get(db, &sp, E);
    *bytes = sp.unpacked_bytes;
    return rc;
}

/* strata_options.unpacked_cache_bytes bounds what a handle keeps unpacked once no transaction
 * holds it (strata_space.unpacked_bytes): none with 0 (a reader's pages held only while it
 * reads), at most the bound otherwise, and a bound over the working set keeps every page a
 * count read, so that the next count unpacks nothing. */
static void unpacked_pages_kept_up_to_the_option(void) {
    const char *path = tl_path("keep.db");
    strata_options o = opts();
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    OK(flag_table(db, 6000, 3, "flag %d, kept or not: a note long enough that a cluster's page "
                               "holds a few dozen of them"));
    OK(strata_db_compact(db, NULL, E));
    strata_space sp = {.size = sizeof sp};
    OK(strata_db_space_get(db, &sp, E));
    CHECK(sp.packed_pages > 40);
    OK(strata_db_close(db, E));
    static const uint64_t keeps[] = {0, 64u << 10, 64u << 20};
    uint64_t kept[3];
    for (int k = 0; k < 3; k++) {
        o = opts();
        o.unpacked_cache_bytes = keeps[k];
        OK(strata_db_open(path, &o, &db, E));
        for (int round = 0; round < 2; round++) {
            strata_txn_t *r;
            uint64_t count = 0, held;
            OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
            OK(count_of(r, "Flag", "on == true", &count));
            CHECK(count == 2000);
            OK(unpacked_now(db, &held));
            CHECK(held > 0); /* the reader's tree pages (its scan let go of the columns') */
            strata_txn_free(r);
        }
        OK(unpacked_now(db, &kept[k]));
        CHECK(kept[k] <= keeps[k]);
        OK(strata_db_close(db, E));
    }
    fprintf(stderr, "  kept after two counts: %llu, %llu and %llu bytes\n", (unsigned long long)kept[0],
            (unsigned long long)kept[1], (unsigned long long)kept[2]);
    CHECK(kept[0] == 0 && kept[1] > (32u << 10) && kept[2] > (64u << 10));
}

/* Table Tag (name "tag %d", every fifth deleted: its clusters are not dense, so a point read
 * goes through their keys leaves) and table Note: n notes (text "note %d …", long enough that a
 * page holds a few dozen) each linking to a live tag. */
static void tagged_notes(strata_db_t *db, int tags, int n) {
    strata_txn_t *w;
    strata_table_t *tag, *note;
    strata_col_t name, text, link;
    OK(strata_txn_begin(db, STRATA_TXN_WRITE, &w, E));
    OK(strata_table_create(w, "Tag", &tag, E));
    OK(strata_table_add_property(tag, "name", STRATA_TYPE_STRING, 0, NULL, &name, E));
    OK(strata_table_create(w, "Note", &note, E));
    OK(strata_table_add_property(note, "text", STRATA_TYPE_STRING, 0, NULL, &text, E));
    OK(strata_table_add_property(note, "tag", STRATA_TYPE_LINK, 0, "Tag", &link, E));
    char buf[200];
    for (int i = 0; i < tags; i++) {
        strata_key_t k;
        int len = snprintf(buf, sizeof buf, "tag %d", i);
        strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {buf, (size_t)len}};
        OK(strata_obj_create(tag, &k, E));
        OK(strata_obj_set(tag, k, name, &v, E));
    }
    for (int i = 0; i < tags; i += 5) OK(strata_obj_delete(tag, i, E));
    for (int i = 0; i < n; i++) {
        strata_key_t k;
        int len = snprintf(buf, sizeof buf, "note %d, a text long enough that a page of them holds "
                                            "a few dozen and a scan reads hundreds of pages", i);
        strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {buf, (size_t)len}};
        strata_value l = {.type = STRATA_TYPE_LINK, .u.link = i % tags / 5 * 5 + 1};
        OK(strata_obj_create(note, &k, E));
        OK(strata_obj_set(note, k, text, &v, E));
        OK(strata_obj_set(note, k, link, &l, E));
    }
    OK(strata_txn_commit(w, E));
    strata_txn_free(w);
}

/* A scan of a packed table lets go of the column pages it unpacks as it goes: a read
 * transaction that counts over every note holds about the cache's bound, not the table
 * unpacked (as one that reads every note does). What it read before the scan stays where it
 * was, and reads of tags during and after it are right (the tag table's cached cluster record
 * names a keys leaf that the scan let go of after the cluster that followed links to it). */
static void a_scan_of_a_packed_table_holds_the_cache_bound(void) {
    enum { TAGS = 600, NOTES = 6000 };
    const char *path = tl_path("scan.db");
    strata_options o = opts();
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    tagged_notes(db, TAGS, NOTES);
    OK(strata_db_compact(db, NULL, E));
    OK(strata_db_close(db, E));
    o.unpacked_cache_bytes = 0; /* what no transaction holds goes at once */
    OK(strata_db_open(path, &o, &db, E));
    strata_txn_t *r;
    strata_table_t *note, *tag;
    strata_col_t text, name;
    strata_value v;
    /* what a reader of every note holds */
    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Note", &note, E));
    OK(strata_table_find_property(note, "text", &text, E));
    for (int i = 0; i < NOTES; i++) OK(strata_obj_get(note, i, text, &v, E));
    uint64_t all, scanned, count;
    OK(unpacked_now(db, &all));
    strata_txn_free(r);

    OK(strata_txn_begin(db, STRATA_TXN_READ, &r, E));
    OK(strata_table_open(r, "Tag", &tag, E));
    OK(strata_table_find_property(tag, "name", &name, E));
    strata_value first;
    OK(strata_obj_get(tag, 1, name, &first, E)); /* read before: kept */
    uint64_t sevens = 0, both = 0;
    char buf[200], tagbuf[40];
    for (int i = 0; i < NOTES; i++) {
        snprintf(buf, sizeof buf, "note %d,", i);
        sevens += strchr(buf, '7') != NULL;
        snprintf(tagbuf, sizeof tagbuf, "tag %d", i % TAGS / 5 * 5 + 1);
        both += strchr(buf, '1') && strchr(tagbuf, '3');
    }
    OK(count_of(r, "Note", "text CONTAINS '7'", &count));
    CHECK(count == sevens);
    OK(unpacked_now(db, &scanned));
    /* each cluster's text page unpacked where the tag page the cluster before read was */
    OK(count_of(r, "Note", "text CONTAINS '1' AND tag.name CONTAINS '3'", &count));
    CHECK(count == both);
    CHECK(first.type == STRATA_TYPE_STRING && first.u.bytes.len == 5 &&
          memcmp(first.u.bytes.data, "tag 1", 5) == 0);
    for (int i = 0; i < TAGS; i++) {
        int rc = strata_obj_get(tag, i, name, &v, E);
        if (i % 5 == 0) {
            CHECK(rc == STRATA_ERR_NOT_FOUND);
            continue;
        }
        OK(rc);
        int len = snprintf(buf, sizeof buf, "tag %d", i);
        CHECK(v.u.bytes.len == (size_t)len && memcmp(v.u.bytes.data, buf, (size_t)len) == 0);
    }
    strata_txn_free(r);
    fprintf(stderr, "  held by a reader of every note: %llu bytes; by a count over them: %llu\n",
            (unsigned long long)all, (unsigned long long)scanned);
    CHECK(all > (256u << 10) && scanned * 4 < all);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

static void packed_pages_read_by_threads(void) {
    const char *path = tl_path("threads.db");
    strata_options o = opts();
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    OK(put_kv(db, 4000, 1));
    OK(flag_table(db, 3000, 2, "flag %d of the threads' table, with some text"));
    OK(strata_db_compact(db, NULL, E));
    pthread_t th[4];
    reader_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (reader_arg){db, 30, 0};
        CHECK(pthread_create(&th[i], NULL, read_packed, &args[i]) == 0);
    }
    for (int i = 0; i < 20; i++) OK(put_kv(db, 4000 - i * 150, 10 + i)); /* rewrite, a part at a time */
    for (int i = 0; i < 4; i++) {
        pthread_join(th[i], NULL);
        CHECK(args[i].bad == 0);
    }
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(copy_holds_the_version),
        TL_TEST(copy_beside_readers_and_writers),
        TL_TEST(compact_shrinks_and_goes_on),
        TL_TEST(compact_refuses_clearly),
        TL_TEST(failure_at_every_step),
        TL_TEST(packed_pages_live_and_go),
        TL_TEST(damaged_packed_pages_are_named),
        TL_TEST(packed_pages_read_by_threads),
        TL_TEST(unpacked_pages_kept_up_to_the_option),
        TL_TEST(a_scan_of_a_packed_table_holds_the_cache_bound),
        TL_TEST(the_file_shrinks_after_a_pinned_reader_lets_go),
    };
    return tl_run("compact", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
