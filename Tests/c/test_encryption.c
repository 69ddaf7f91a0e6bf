/*
 * test_encryption.c — encryption at rest: nothing readable on disk, the right key and only the
 * right key opens a file, a damaged, moved or rolled-back page is named, logged commits replay,
 * version numbers are never reused after a failed commit, copies stay encrypted, and threads
 * open pages together.
 */
#include "sampledb.h"

#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/wait.h>

static uint8_t KEY[64], OTHER[64];
static const char MARKER[] = "Zanzibar-marker-7f3a";

static strata_options enc_opts(const uint8_t *key, strata_durability d) {
    strata_options o;
    strata_options_init(&o);
    o.durability = d;
    o.map_size = 1ull << 30;
    o.encryption_key = key;
    o.encryption_key_len = key ? 64 : 0;
    return o;
}

static int open_enc(const char *path, const uint8_t *key, strata_durability d, strata_db_t **db) {
    strata_options o = enc_opts(key, d);
    return strata_db_open(path, &o, db, E);
}

/* Whether any file of the test directory whose name starts with `prefix`'s file name holds the
 * bytes (the database, its log, its lock file, leftovers). */
static bool marker_on_disk(const char *prefix, const void *needle, size_t nlen) {
    const char *base = strrchr(prefix, '/') + 1;
    DIR *d = opendir(tl_dir);
    bool found = false;
    struct dirent *e;
    while (d && !found && (e = readdir(d))) {
        if (strncmp(e->d_name, base, strlen(base)) != 0) continue;
        char path[800];
        snprintf(path, sizeof path, "%s/%s", tl_dir, e->d_name);
        FILE *f = fopen(path, "rb");
        if (!f) continue;
        fseek(f, 0, SEEK_END);
        long n = ftell(f);
        fseek(f, 0, SEEK_SET);
        uint8_t *buf = malloc(n > 0 ? (size_t)n : 1);
        if (buf && fread(buf, 1, (size_t)n, f) == (size_t)n && n >= (long)nlen)
            found = memmem(buf, (size_t)n, needle, nlen) != NULL;
        free(buf);
        fclose(f);
    }
    if (d) closedir(d);
    return found;
}

/* Secrets whose names, notes (some longer than a page: overflow runs), tags (a list) and a
 * full-text bio carry the marker; half the commits logged, half NO_SYNC. */
static int write_marked(strata_db_t *db, int rounds) {
    char s[12000];
    for (int r = 0; r < rounds; r++) {
        strata_txn_t *w;
        strata_table_t *t;
        strata_col_t name, note, tags, bio;
        int rc = strata_txn_begin(db, STRATA_TXN_WRITE | (r % 2 ? STRATA_TXN_NO_SYNC : 0), &w, E);
        if (rc) return rc;
        if (strata_table_open(w, "Secret", &t, E) == STRATA_OK) {
            rc = strata_table_find_property(t, "name", &name, E) || strata_table_find_property(t, "note", &note, E) ||
                 strata_table_find_property(t, "tags", &tags, E) || strata_table_find_property(t, "bio", &bio, E);
        } else {
            rc = strata_table_create(w, "Secret", &t, E) ||
                 strata_table_add_property(t, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &name, E) ||
                 strata_table_add_property(t, "note", STRATA_TYPE_STRING, 0, NULL, &note, E) ||
                 strata_table_add_property(t, "tags", STRATA_TYPE_STRING, STRATA_PROP_LIST, NULL, &tags, E) ||
                 strata_table_add_property(t, "bio", STRATA_TYPE_STRING, STRATA_PROP_FULLTEXT, NULL, &bio, E);
        }
        for (int i = 0; i < 30 && rc == STRATA_OK; i++) {
            strata_key_t k;
            snprintf(s, sizeof s, "%s %d.%d", MARKER, r, i);
            strata_value v = vstr(s);
            rc = strata_obj_create(t, &k, E) || strata_obj_set(t, k, name, &v, E) ||
                 strata_list_insert(t, k, tags, 0, &v, E) || strata_obj_set(t, k, bio, &v, E);
            if (rc == STRATA_OK && i % 10 == 0) {
                size_t n = 0;
                while (n + sizeof MARKER < 9000) n += (size_t)snprintf(s + n, sizeof s - n, "%s ", MARKER);
                v = vstr(s);
                rc = strata_obj_set(t, k, note, &v, E);
            }
        }
        if (rc == STRATA_OK) rc = strata_txn_commit(w, E);
        strata_txn_free(w);
        if (rc) return rc;
    }
    return STRATA_OK;
}

static int count_people(strata_db_t *db, uint64_t *n) {
    strata_txn_t *r;
    strata_table_t *t;
    int rc = strata_txn_begin(db, 0, &r, E);
    if (rc) return rc;
    if ((rc = strata_table_open(r, "Secret", &t, E)) == STRATA_OK) rc = strata_table_size(t, n, E);
    strata_txn_free(r);
    return rc;
}

static void nothing_in_plain_text(void) {
    /* The control: a plain file holds the marker, so the search below can fail. */
    const char *plain = tl_path("plain.db");
    strata_db_t *db;
    OK(open_enc(plain, NULL, STRATA_DURABILITY_FULL, &db));
    OK(write_marked(db, 4));
    OK(strata_db_close(db, E));
    CHECK(marker_on_disk(plain, MARKER, strlen(MARKER)));

    const char *path = tl_path("secret.db");
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    OK(write_marked(db, 12));
    /* before and after close: the log's records, the pages, the lock file */
    CHECK(!marker_on_disk(path, MARKER, strlen(MARKER)));
    CHECK(!marker_on_disk(path, "Zanzibar", 8));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    CHECK(!marker_on_disk(path, MARKER, strlen(MARKER)));
    CHECK(!marker_on_disk(path, "Secret", 6)); /* the schema too */

    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    uint64_t n;
    OK(count_people(db, &n));
    CHECK(n == 12 * 30);
    strata_txn_t *r;
    strata_table_t *t;
    strata_col_t note;
    strata_value v;
    OK(strata_txn_begin(db, 0, &r, E));
    OK(strata_table_open(r, "Secret", &t, E));
    OK(strata_table_find_property(t, "note", &note, E));
    OK(strata_obj_get(t, 40, note, &v, E));
    CHECK(v.type == STRATA_TYPE_STRING && v.u.bytes.len > 8000 &&
          memcmp(v.u.bytes.data, MARKER, strlen(MARKER)) == 0);
    uint64_t hits;
    strata_query_t *q;
    OK(strata_query_compile(r, "Secret", "bio TEXT 'zanzibar'", &q, E));
    OK(strata_query_count(q, r, NULL, 0, &hits, E));
    CHECK(hits == n);
    strata_query_free(q);
    strata_txn_free(r);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

static void keys_that_do_not_open(void) {
    const char *path = tl_path("keys.db");
    strata_db_t *db;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    OK(write_marked(db, 2));
    OK(strata_db_close(db, E));
    struct stat before;
    CHECK(stat(path, &before) == 0);

    EXPECT_CODE(open_enc(path, OTHER, STRATA_DURABILITY_FULL, &db), STRATA_ERR_ENCRYPTION);
    CHECK(strstr(tl_err.message, "keys.db") && strstr(tl_err.message, "does not open"));
    EXPECT_CODE(open_enc(path, NULL, STRATA_DURABILITY_FULL, &db), STRATA_ERR_ENCRYPTION);
    CHECK(strstr(tl_err.message, "keys.db") && strstr(tl_err.message, "is encrypted"));
    strata_options o = enc_opts(KEY, STRATA_DURABILITY_FULL);
    o.encryption_key_len = 32;
    EXPECT_CODE(strata_db_open(path, &o, &db, E), STRATA_ERR_INVALID_ARGUMENT);
    CHECK(strstr(tl_err.message, "64 bytes") && strstr(tl_err.message, "32"));
    o.read_only = true;
    o.encryption_key = OTHER;
    o.encryption_key_len = 64;
    EXPECT_CODE(strata_db_open(path, &o, &db, E), STRATA_ERR_ENCRYPTION);

    const char *plain = tl_path("keys-plain.db");
    OK(open_enc(plain, NULL, STRATA_DURABILITY_FULL, &db));
    OK(strata_db_close(db, E));
    EXPECT_CODE(open_enc(plain, KEY, STRATA_DURABILITY_FULL, &db), STRATA_ERR_ENCRYPTION);
    CHECK(strstr(tl_err.message, "not encrypted"));

    /* nothing changed by the refused opens */
    struct stat after;
    CHECK(stat(path, &after) == 0 && after.st_size == before.st_size &&
          after.st_mtim.tv_sec == before.st_mtim.tv_sec && after.st_mtim.tv_nsec == before.st_mtim.tv_nsec);
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    uint64_t n;
    OK(count_people(db, &n));
    CHECK(n == 60);
    OK(strata_db_close(db, E));
}

/* The first page of Person's records that a read reaches: found by damaging pages one by one. */
static void tampered_pages_are_named(void) {
    const char *path = tl_path("tamper.db");
    strata_db_t *db;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    OK(write_marked(db, 6));
    OK(strata_db_close(db, E));
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    struct stat sb;
    CHECK(fstat(fd, &sb) == 0);
    uint8_t meta[4096];
    CHECK(pread(fd, meta, sizeof meta, 0) == 4096);
    uint64_t pages;
    memcpy(&pages, meta + 32, 8);
    int named = 0, swaps = 0;
    uint8_t a[4096], b[4096];
    for (uint64_t pg = 2; pg < pages; pg++) {
        /* a flipped byte in the page's ciphertext */
        CHECK(pread(fd, a, 4096, (off_t)(pg * 4096)) == 4096);
        uint8_t flipped[4096];
        memcpy(flipped, a, sizeof a);
        flipped[100 + pg % 3000] ^= 0x20;
        CHECK(pwrite(fd, flipped, 4096, (off_t)(pg * 4096)) == 4096);
        OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
        int rc = strata_db_verify(db, E);
        char want[64];
        snprintf(want, sizeof want, "page %llu", (unsigned long long)pg);
        /* a free page is not read: only pages the version reaches must be named */
        if (rc == STRATA_ERR_CORRUPT && strstr(tl_err.message, want) &&
            strstr(tl_err.message, "authenticate"))
            named++;
        else
            CHECK(rc == STRATA_OK || rc == STRATA_ERR_CORRUPT);
        strata_db_close(db, NULL);
        CHECK(pwrite(fd, a, 4096, (off_t)(pg * 4096)) == 4096);
        /* two pages swapped: each fails where it now lies */
        if (pg + 1 < pages) {
            CHECK(pread(fd, b, 4096, (off_t)((pg + 1) * 4096)) == 4096);
            CHECK(pwrite(fd, b, 4096, (off_t)(pg * 4096)) == 4096);
            CHECK(pwrite(fd, a, 4096, (off_t)((pg + 1) * 4096)) == 4096);
            OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
            if (strata_db_verify(db, E) == STRATA_ERR_CORRUPT) swaps++;
            strata_db_close(db, NULL);
            CHECK(pwrite(fd, a, 4096, (off_t)(pg * 4096)) == 4096);
            CHECK(pwrite(fd, b, 4096, (off_t)((pg + 1) * 4096)) == 4096);
        }
    }
    close(fd);
    CHECK(named > 10);
    CHECK(swaps > 10);
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* A page put back as an older copy of itself (a rollback of one page) fails to open. */
static void rolled_back_page_fails(void) {
    const char *path = tl_path("rollback.db");
    strata_db_t *db;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    OK(write_marked(db, 3));
    OK(strata_db_sync(db, E));
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    struct stat sb;
    CHECK(fstat(fd, &sb) == 0);
    uint8_t *old = malloc((size_t)sb.st_size);
    CHECK(old && pread(fd, old, (size_t)sb.st_size, 0) == sb.st_size);
    close(fd);
    OK(write_marked(db, 3));
    OK(strata_db_close(db, E));
    /* every page that changed, one at a time, back to its older bytes (up to the end of the
     * shorter file: a closing handle gives the tail back) */
    fd = open(path, O_RDWR);
    struct stat closed;
    CHECK(fd >= 0 && fstat(fd, &closed) == 0);
    off_t end = closed.st_size < sb.st_size ? closed.st_size : sb.st_size;
    int failed = 0, tried = 0;
    uint8_t now[4096];
    for (off_t off = 2 * 4096; off + 4096 <= end; off += 4096) {
        CHECK(pread(fd, now, 4096, off) == 4096);
        if (memcmp(now, old + off, 4096) == 0) continue;
        tried++;
        CHECK(pwrite(fd, old + off, 4096, off) == 4096);
        OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
        int rc = strata_db_verify(db, E);
        if (rc == STRATA_ERR_CORRUPT) failed++;
        strata_db_close(db, NULL);
        CHECK(pwrite(fd, now, 4096, off) == 4096);
    }
    close(fd);
    free(old);
    CHECK(tried > 5);
    CHECK(failed > 0);
}

/* A writer killed after logged commits: the next open replays its records. */
static void logged_commits_replay(void) {
    const char *path = tl_path("replay.db");
    pid_t pid = fork();
    if (pid == 0) {
        strata_db_t *db;
        if (open_enc(path, KEY, STRATA_DURABILITY_FULL, &db)) _exit(3);
        for (int v = 0; v < 6; v++) {
            strata_txn_t *w;
            strata_tree_t *t;
            char k[32], val[64];
            if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, E) ||
                strata_tree_open(w, "kv", STRATA_KEY_BYTES, STRATA_TREE_CREATE, &t, E))
                _exit(4);
            for (int i = 0; i < 50; i++) {
                snprintf(k, sizeof k, "k%d.%d", v, i);
                snprintf(val, sizeof val, "%s %d", MARKER, i);
                if (strata_tree_put(t, k, strlen(k), val, strlen(val), E)) _exit(5);
            }
            if (strata_txn_commit(w, E)) _exit(6);
            strata_txn_free(w);
        }
        _exit(0); /* no close: the last commits live in the log only as far as recovery knows */
    }
    int status;
    CHECK(waitpid(pid, &status, 0) == pid && WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(!marker_on_disk(path, MARKER, strlen(MARKER)));
    strata_db_t *db;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    strata_recovery rec;
    OK(strata_db_recovery(db, &rec, E));
    CHECK(rec.recovered && rec.replayed >= 1 && rec.dropped == 0);
    OK(strata_db_verify(db, E));
    strata_txn_t *r;
    strata_tree_t *t;
    OK(strata_txn_begin(db, 0, &r, E));
    OK(strata_tree_open(r, "kv", STRATA_KEY_BYTES, 0, &t, E));
    uint64_t n;
    OK(strata_tree_count(t, &n, E));
    CHECK(n == 300);
    strata_txn_free(r);
    OK(strata_db_close(db, E));
}

/* I/O that fails on a chosen write: a commit that fails after sealed bytes went out spends its
 * version number; the next commit has another. */
static int fail_at = -1, writes_seen;
static ssize_t f_pwrite(void *ctx, int fd, const void *buf, size_t len, off_t off) {
    if (writes_seen++ == fail_at) {
        errno = EIO;
        return -1;
    }
    return strata_io_default()->pwrite(ctx, fd, buf, len, off);
}
static int f_sync(void *ctx, int fd) { return strata_io_default()->fdatasync(ctx, fd); }
static int f_grow(void *ctx, int fd, off_t size) { return strata_io_default()->grow(ctx, fd, size); }

static void versions_are_never_reused(void) {
    const char *path = tl_path("versions.db");
    strata_io_methods io = *strata_io_default();
    io.pwrite = f_pwrite;
    io.fdatasync = f_sync;
    io.grow = f_grow;
    strata_options o = enc_opts(KEY, STRATA_DURABILITY_FULL);
    o.io = &io;
    strata_db_t *db;
    OK(strata_db_open(path, &o, &db, E));
    OK(write_marked(db, 1));
    strata_db_info info;
    OK(strata_db_info_get(db, &info, E));
    uint64_t first = info.version;
    CHECK(first > (1u << 20)); /* the first commit renumbered the file */
    OK(write_marked(db, 1));
    OK(strata_db_info_get(db, &info, E));
    CHECK(info.version == first + 1);
    /* each write of the next commit fails in turn; every later commit gets a fresh number */
    uint64_t last = info.version;
    int spent = 0;
    for (int k = 0; k < 6; k++) {
        writes_seen = 0;
        fail_at = k;
        int rc = write_marked(db, 1);
        fail_at = -1;
        OK(strata_db_info_get(db, &info, E));
        if (rc == STRATA_OK) {
            CHECK(info.version == last + 1);
        } else {
            spent++;
            OK(write_marked(db, 1));
            OK(strata_db_info_get(db, &info, E));
            CHECK(info.version > last + (1u << 20)); /* the failed number and all below it are spent */
        }
        last = info.version;
        OK(strata_db_verify(db, E));
    }
    CHECK(spent >= 3);
    /* a reader pinned across the renumbering: max_versions counts versions, not the jump */
    OK(strata_db_close(db, E));
    o.max_versions = 10;
    OK(strata_db_open(path, &o, &db, E));
    strata_txn_t *r;
    OK(strata_txn_begin(db, 0, &r, E));
    OK(write_marked(db, 3));
    strata_txn_free(r);
    OK(strata_db_close(db, E));
    o.io = NULL;
    OK(strata_db_open(path, &o, &db, E));
    uint64_t n;
    OK(count_people(db, &n));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    CHECK(!marker_on_disk(path, MARKER, strlen(MARKER)));
}

static void copies_stay_encrypted(void) {
    const char *path = tl_path("copy.db"), *copy = tl_path("copy-of.db");
    strata_db_t *db;
    cols c;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    for (int v = 1; v <= 4; v++) OK(commit_version(db, v, &c));
    OK(write_marked(db, 2));
    uint64_t fp, fp2;
    OK(fingerprint(db, &fp));
    OK(strata_db_write_copy(db, copy, NULL, E));
    OK(strata_db_compact(db, NULL, E));
    OK(fingerprint(db, &fp2));
    CHECK(fp == fp2);
    OK(strata_db_verify(db, E));
    OK(commit_version(db, 5, &c)); /* goes on after the compaction, under the copy's keys */
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    CHECK(!marker_on_disk(path, MARKER, strlen(MARKER)));
    CHECK(!marker_on_disk(copy, MARKER, strlen(MARKER)));
    EXPECT_CODE(open_enc(copy, NULL, STRATA_DURABILITY_FULL, &db), STRATA_ERR_ENCRYPTION);
    OK(open_enc(copy, KEY, STRATA_DURABILITY_FULL, &db));
    OK(fingerprint(db, &fp2));
    CHECK(fp == fp2);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Copies and compaction with another key, without one, or with one for a plain file:
 * encrypt, decrypt and re-key, the file in place included. */
static void copies_change_keys(void) {
    const char *path = tl_path("rekey.db"), *other = tl_path("rekey-other.db"),
               *plain = tl_path("rekey-plain.db");
    strata_db_t *db;
    cols c;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    for (int v = 1; v <= 3; v++) OK(commit_version(db, v, &c));
    OK(write_marked(db, 2));
    uint64_t fp, got;
    OK(fingerprint(db, &fp));
    strata_copy_options co;
    strata_copy_options_init(&co);
    co.set_encryption = true;
    co.encryption_key = OTHER;
    co.encryption_key_len = 32;
    EXPECT_CODE(strata_db_write_copy(db, other, &co, E), STRATA_ERR_INVALID_ARGUMENT);
    co.encryption_key_len = 64;
    OK(strata_db_write_copy(db, other, &co, E));  /* re-keyed */
    co.encryption_key = NULL;
    OK(strata_db_write_copy(db, plain, &co, E));  /* decrypted */
    co.encryption_key = OTHER;
    OK(strata_db_compact(db, &co, E));            /* re-keyed in place: the handle goes on */
    OK(fingerprint(db, &got));
    CHECK(got == fp);
    OK(commit_version(db, 4, &c));
    OK(fingerprint(db, &fp));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    CHECK(!marker_on_disk(path, MARKER, strlen(MARKER)) && !marker_on_disk(other, MARKER, strlen(MARKER)));
    CHECK(marker_on_disk(plain, MARKER, strlen(MARKER)));
    EXPECT_CODE(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db), STRATA_ERR_ENCRYPTION);
    OK(open_enc(path, OTHER, STRATA_DURABILITY_FULL, &db));
    OK(fingerprint(db, &got));
    CHECK(got == fp);
    OK(strata_db_close(db, E));
    OK(open_enc(other, OTHER, STRATA_DURABILITY_FULL, &db));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    /* the plain copy, encrypted in place */
    OK(open_enc(plain, NULL, STRATA_DURABILITY_FULL, &db));
    OK(fingerprint(db, &fp));
    co.encryption_key = KEY;
    OK(strata_db_compact(db, &co, E));
    OK(fingerprint(db, &got));
    CHECK(got == fp);
    OK(strata_db_close(db, E));
    CHECK(!marker_on_disk(plain, MARKER, strlen(MARKER)));
    OK(open_enc(plain, KEY, STRATA_DURABILITY_FULL, &db));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Packed copies of an encrypted file: compressed, then sealed; read back, verified, and a
 * changed byte of a packed page or of the region's head named. */
static void packed_pages_are_sealed(void) {
    const char *path = tl_path("packed.db");
    strata_db_t *db;
    cols c;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    for (int v = 1; v <= 5; v++) OK(commit_version(db, v, &c));
    OK(write_marked(db, 4));
    uint64_t fp, got;
    OK(fingerprint(db, &fp));
    strata_copy_options co;
    strata_copy_options_init(&co);
    co.pack_level = 4;
    OK(strata_db_compact(db, &co, E));
    strata_space sp = {.size = sizeof sp};
    OK(strata_db_space_get(db, &sp, E));
    CHECK(sp.packed_pages > 20);
    OK(fingerprint(db, &got));
    CHECK(got == fp);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    CHECK(!marker_on_disk(path, MARKER, strlen(MARKER)));
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    OK(fingerprint(db, &got));
    CHECK(got == fp);
    OK(commit_version(db, 6, &c)); /* changes copy packed pages out, plain and sealed */
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    /* damage: 24 bytes spread over the region (its head, the packed pages version 6 reaches and
     * those it copied out): those on reached pages are named, the rest read as before (8 and
     * 10 of 24 named on the cluster shapes of sessions 37 and 36) */
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    strata_db_info info;
    OK(strata_db_info_get(db, &info, E));
    OK(strata_db_space_get(db, &sp, E));
    OK(strata_db_close(db, E));
    int fd = open(path, O_RDWR);
    uint8_t meta[4096];
    CHECK(fd >= 0 && pread(fd, meta, sizeof meta, 0) == 4096);
    uint64_t region, region1;
    memcpy(&region, meta + 120, 8);
    CHECK(pread(fd, meta, sizeof meta, 4096) == 4096);
    memcpy(&region1, meta + 120, 8);
    if (!region) region = region1;
    CHECK(region > 2);
    int named = 0;
    for (int k = 0; k < 24; k++) {
        off_t at = (off_t)(region * 4096 + 30 + (uint64_t)k * (sp.packed_bytes / 24));
        uint8_t b;
        CHECK(pread(fd, &b, 1, at) == 1);
        uint8_t x = b ^ 0x40;
        CHECK(pwrite(fd, &x, 1, at) == 1);
        OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
        int rc = strata_db_verify(db, E);
        if (rc == STRATA_ERR_CORRUPT && strstr(tl_err.message, "authenticate")) named++;
        else CHECK(rc == STRATA_OK); /* a byte no page of the version reaches */
        strata_db_close(db, NULL);
        CHECK(pwrite(fd, &b, 1, at) == 1);
    }
    close(fd);
    CHECK(named >= 6);
}

typedef struct reader_arg {
    strata_db_t *db;
    uint64_t fp;
    int rc;
} reader_arg;

static void *read_all(void *p) {
    reader_arg *a = p;
    a->rc = fingerprint(a->db, &a->fp);
    return NULL;
}

/* Threads opening the same pages for the first time together, then a writer beside them. */
static void threads_open_pages_together(void) {
    const char *path = tl_path("threads.db");
    strata_db_t *db;
    cols c;
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    for (int v = 1; v <= 6; v++) OK(commit_version(db, v, &c));
    uint64_t want;
    OK(fingerprint(db, &want));
    OK(strata_db_close(db, E));
    OK(open_enc(path, KEY, STRATA_DURABILITY_FULL, &db));
    reader_arg a[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        a[i] = (reader_arg){db, 0, 0};
        CHECK(pthread_create(&th[i], NULL, read_all, &a[i]) == 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) CHECK(a[i].rc == STRATA_OK && a[i].fp == want);
    for (int i = 0; i < 4; i++) {
        a[i] = (reader_arg){db, 0, 0};
        CHECK(pthread_create(&th[i], NULL, read_all, &a[i]) == 0);
    }
    OK(commit_version(db, 7, &c));
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) CHECK(a[i].rc == STRATA_OK);
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

int main(int argc, char **argv) {
    for (int i = 0; i < 64; i++) {
        KEY[i] = (uint8_t)(i * 7 + 1);
        OTHER[i] = (uint8_t)(i * 7 + 2);
    }
    static const tl_test tests[] = {
        TL_TEST(nothing_in_plain_text),
        TL_TEST(keys_that_do_not_open),
        TL_TEST(tampered_pages_are_named),
        TL_TEST(rolled_back_page_fails),
        TL_TEST(logged_commits_replay),
        TL_TEST(versions_are_never_reused),
        TL_TEST(copies_stay_encrypted),
        TL_TEST(copies_change_keys),
        TL_TEST(packed_pages_are_sealed),
        TL_TEST(threads_open_pages_together),
    };
    return tl_run("encryption", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
