/*
 * test_damage.c — a deterministic damage sweep: a realistic database left by a writer that
 * crashed after FULL (logged) commits is damaged in every way the sweep knows, and every variant
 * is opened, read in full, written and verified in a child process. Each must end in a clear
 * error or in data equal to a version that was committed; none may crash or answer wrongly.
 *
 * The database: Person {name (indexed), age, photo (big values in overflow runs), dogs: [Dog],
 * best: Dog?}, Dog {name, age}, and raw trees "kv" (byte keys, some values of 9 KB) and "ints".
 * Five commits; the writer's fingerprint of each version (every object, property, list element,
 * tree entry, and query counts) is what a variant's data must equal.
 *
 * Damage: per page, a byte flipped in the body and one in the header, each also "resealed"
 * (checksum recomputed, as a crafted file would have it, so the structure checks behind the
 * checksums are tried too), and the page zeroed; the file truncated at every page boundary; the
 * commit log removed, zeroed, cut, older, flipped, and from another database.
 *
 * With STRATA_TEST_ENCRYPTED=1 the database is encrypted (testkey.h): any changed byte of a page
 * then fails its tag.
 *
 * A variant's child exits 0 (read a committed version), 10 (clear error at open), 11 (clear
 * error reading); 3 is a wrong answer, 4 an error without a message; a signal is a crash.
 */
#include "testlib.h"
#include "sampledb.h"
#include "testkey.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <xxhash.h>

enum { VERSIONS = 5, PAGE = 4096 };

static strata_options opts(void) {
    strata_options o;
    strata_options_init(&o);
    o.map_size = 1ull << 30;
    tk_options(&o); /* STRATA_TEST_ENCRYPTED=1: the sweep on an encrypted file */
    return o;
}

/* The pristine files, and the fingerprint of every committed version. */
static struct {
    uint8_t *db, *log, *log_v2;  /* the crashed writer's file and log (and its log at version 2) */
    size_t db_len, log_len, log_v2_len;
    uint8_t *closed;             /* the same database recovered and closed: no log needed */
    size_t closed_len, closed_pages; /* pages in use (the file is grown in chunks past them) */
    uint64_t fps[VERSIONS + 1]; /* [0]: the new, empty database */
} pristine;

static bool read_all(const char *path, uint8_t **buf, size_t *len) {
    struct stat sb;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &sb) != 0) return false;
    *len = (size_t)sb.st_size;
    *buf = malloc(*len + 1);
    size_t got = 0;
    while (got < *len) {
        ssize_t n = read(fd, *buf + got, *len - got);
        if (n <= 0) break;
        got += (size_t)n;
    }
    close(fd);
    return got == *len;
}

/* Write buf as path, sparsely: zero blocks are left as holes (logs are mostly zeros). */
static bool write_sparse(const char *path, const uint8_t *buf, size_t len) {
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) return false;
    static const uint8_t zero[PAGE];
    bool ok = ftruncate(fd, (off_t)len) == 0;
    for (size_t off = 0; ok && off < len; off += PAGE) {
        size_t n = len - off < PAGE ? len - off : PAGE;
        if (memcmp(buf + off, zero, n) != 0) ok = pwrite(fd, buf + off, n, (off_t)off) == (ssize_t)n;
    }
    close(fd);
    return ok;
}

/* The writer: five commits, a copy of its log after the second, then it dies without closing. */
static bool build_pristine(void) {
    int fds[2];
    if (pipe(fds)) return false;
    pid_t pid = fork();
    if (pid == 0) {
        close(fds[0]);
        strata_options o = opts();
        strata_db_t *db;
        cols c;
        uint64_t empty;
        if (strata_db_open(tl_path("w.db"), &o, &db, E) || fingerprint(db, &empty)) _exit(2);
        if (write(fds[1], &empty, sizeof empty) != sizeof empty) _exit(4);
        for (int v = 1; v <= VERSIONS; v++) {
            uint64_t f;
            if (commit_version(db, v, &c) || fingerprint(db, &f)) {
                fprintf(stderr, "  build v%d: %s\n", v, tl_err.message);
                _exit(3);
            }
            if (write(fds[1], &f, sizeof f) != sizeof f) _exit(4);
            if (v == 2 && !tl_copy_file(tl_path("w.db.log"), tl_path("w.db.log.v2"))) _exit(5);
        }
        _exit(0); /* a crash: no close, no sync; the log holds the commits */
    }
    close(fds[1]);
    for (int v = 0; v <= VERSIONS; v++)
        if (read(fds[0], &pristine.fps[v], sizeof pristine.fps[v]) != sizeof pristine.fps[v]) return false;
    close(fds[0]);
    int status;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 ||
        !read_all(tl_path("w.db"), &pristine.db, &pristine.db_len) ||
        !read_all(tl_path("w.db.log"), &pristine.log, &pristine.log_len) ||
        !read_all(tl_path("w.db.log.v2"), &pristine.log_v2, &pristine.log_v2_len))
        return false;
    /* recovered and closed cleanly: every page is read from the file itself */
    strata_options o = opts();
    strata_db_t *db;
    uint64_t f;
    if (strata_db_open(tl_path("w.db"), &o, &db, E) || fingerprint(db, &f) || f != pristine.fps[VERSIONS] ||
        strata_db_close(db, E) || !read_all(tl_path("w.db"), &pristine.closed, &pristine.closed_len))
        return false;
    for (int slot = 0; slot < 2; slot++) { /* page_count of the newest meta */
        uint64_t v, pc, best = 0;
        memcpy(&v, pristine.closed + slot * PAGE + 24, 8);
        memcpy(&pc, pristine.closed + slot * PAGE + 32, 8);
        if (v >= best && pc > pristine.closed_pages) pristine.closed_pages = (size_t)pc;
    }
    return pristine.closed_pages > 2 && pristine.closed_pages * PAGE <= pristine.closed_len;
}

/* ------------------------------------------------------------------ one variant */

typedef struct tally {
    int variants, consistent, open_errors, read_errors, crafted, wrong, crashes;
} tally;

/* How a variant is opened: the defaults, or accepting a rollback (then it must open and read a
 * committed version). */
enum { DEFAULTS = 0, ROLLBACK = 1, CRAFTED = 2 /* checksums made to match: only memory safety
                                                  and a committed version's data are asked */ };

/* The child: open, read everything, write, verify. */
static int try_variant(const char *path, const strata_options *o, int mode) {
    strata_db_t *db;
    int rc = strata_db_open(path, o, &db, E);
    if (rc) return tl_err.message[0] ? 10 : 4;
    uint64_t f;
    rc = fingerprint(db, &f);
    int result = 0;
    if (rc == 3) {
        result = 3;
    } else if (rc) {
        result = tl_err.message[0] ? 11 : 4;
    } else {
        result = 3;
        for (int v = 0; v <= VERSIONS; v++)
            if (f == pristine.fps[v]) result = 0;
        /* an older version than the newest is never opened silently */
        strata_recovery rec;
        if (result == 0 && f != pristine.fps[VERSIONS] && !(mode & CRAFTED) &&
            (strata_db_recovery(db, &rec, E) || !rec.dropped || !rec.why[0])) {
            snprintf(tl_err.message, sizeof tl_err.message, "opened at an older version without "
                     "reporting it (dropped %llu)", (unsigned long long)rec.dropped);
            result = 5;
        }
    }
    /* then write into it, and verify; either may fail cleanly */
    strata_error found = tl_err;
    strata_txn_t *w;
    if (strata_txn_begin(db, STRATA_TXN_WRITE, &w, E) == STRATA_OK) {
        strata_table_t *p;
        strata_tree_t *kv;
        strata_key_t k;
        strata_col_t name;
        if (strata_table_open(w, "Person", &p, E) == STRATA_OK &&
            strata_table_find_property(p, "name", &name, E) == STRATA_OK &&
            strata_obj_create(p, &k, E) == STRATA_OK &&
            strata_obj_set(p, k, name, (strata_value[]){vstr("after damage")}, E) == STRATA_OK &&
            strata_tree_open(w, "kv", STRATA_KEY_BYTES, 0, &kv, E) == STRATA_OK &&
            strata_tree_put(kv, "key/050/1", 9, big, 5000, E) == STRATA_OK &&
            (strata_tree_delete(kv, "key/017/1", 9, E) == STRATA_OK ||
             tl_err.code == STRATA_ERR_NOT_FOUND))
            strata_txn_commit(w, E);
        strata_txn_free(w);
    }
    strata_db_verify(db, E);
    if (strata_db_close(db, E)) {
        snprintf(found.message, sizeof found.message, "close: %.200s", tl_err.message);
        result = 4;
    }
    tl_err = found;
    return result;
}

/* Lay out the variant's files (db bytes, log bytes or none), run it in a child, count it. */
static void run_variant(tally *t, const char *what, const uint8_t *db, size_t db_len,
                        const uint8_t *log, size_t log_len, int mode) {
    const char *path = tl_path("v.db");
    char lp[600], kp[600];
    snprintf(lp, sizeof lp, "%s.log", path);
    snprintf(kp, sizeof kp, "%s.lock", path);
    unlink(kp);
    unlink(lp);
    if (!write_sparse(path, db, db_len) || (log && !write_sparse(lp, log, log_len))) {
        fprintf(stderr, "  %s: cannot write the variant\n", what);
        t->crashes++;
        return;
    }
    t->variants++;
    fflush(stderr);
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        strata_options o = opts();
        o.accept_rollback = mode == ROLLBACK;
        if (!log) o.durability = STRATA_DURABILITY_NO_SYNC; /* its write makes no 16 MiB log */
        int r = try_variant(path, &o, mode);
        if (mode == ROLLBACK && r != 0 && r != 5) {
            fprintf(stderr, "  %s, accepting a rollback: %d (%s)\n", what, r, tl_err.message);
            r = 6;
        }
        if (r == 3 && (mode & CRAFTED)) r = 12; /* crafted data read back: allowed */
        if (r >= 3 && r <= 5)
            fprintf(stderr, "  %s: %s (%s)\n", what,
                    r == 3 ? "WRONG ANSWER" : r == 4 ? "no message" : "SILENT ROLLBACK", tl_err.message);
        else if (getenv("DAMAGE_VERBOSE")) fprintf(stderr, "  %s: %d %s\n", what, r, r ? tl_err.message : "");
        _exit(r);
    }
    int status;
    waitpid(pid, &status, 0);
    if (WIFSIGNALED(status)) {
        fprintf(stderr, "  %s: CRASH (signal %d)\n", what, WTERMSIG(status));
        t->crashes++;
        return;
    }
    switch (WEXITSTATUS(status)) {
    case 0: t->consistent++; break;
    case 10: t->open_errors++; break;
    case 11: t->read_errors++; break;
    case 12: t->crafted++; break;
    default: t->wrong++; break;
    }
}

static void report(const char *name, const tally *t) {
    fprintf(stderr, "  %s: %d variants: %d read a committed version, %d refused at open, %d "
                    "failed reading, %d read crafted data, %d wrong, %d crashed\n", name,
            t->variants, t->consistent, t->open_errors, t->read_errors, t->crafted, t->wrong,
            t->crashes);
}

static bool ensure_pristine(void) {
    static int state; /* 0 not built, 1 built, 2 failed */
    if (!state) state = build_pristine() ? 1 : 2;
    return state == 1;
}

/* The kind and run length of the page at pg (0 for a meta page). */
static size_t run_of(const uint8_t *db, size_t db_len, size_t pg) {
    const uint8_t *p = db + pg * PAGE;
    if (pg < 2 || p[24] != 3) return 1;
    uint32_t run;
    memcpy(&run, p + 28, 4);
    return run && pg + run <= db_len / PAGE ? run : 1;
}

/* Recompute the checksum a damaged page would need to pass (a crafted file). */
static void reseal(uint8_t *db, size_t db_len, size_t pg) {
    uint8_t *p = db + pg * PAGE;
    uint64_t h = pg < 2 ? XXH3_64bits(p + 8, 120) : XXH3_64bits(p + 8, run_of(db, db_len, pg) * PAGE - 8);
    memcpy(p, &h, 8);
}

static void sweep(bool resealed) {
    CHECK(ensure_pristine());
    tally t = {0};
    size_t len = pristine.closed_len, pages = pristine.closed_pages;
    uint8_t *db = malloc(len);
    for (size_t pg = 0; pg < pages; pg++) {
        /* a body byte; a header byte (count, lower, upper, kind, flags) or a meta field */
        size_t offs[2] = {8 + (pg * 131 + 77) % (PAGE - 8), pg < 2 ? 16 + (pg * 8) % 112 : 24 + pg % 8};
        /* DAMAGE_STRIDE=n (not in make test): every n-th byte of each page instead, resealed */
        size_t stride = getenv("DAMAGE_STRIDE") ? (size_t)atoi(getenv("DAMAGE_STRIDE")) : 0;
        for (size_t o = 8; stride && resealed && o < PAGE; o += stride) {
            memcpy(db, pristine.closed, len);
            db[pg * PAGE + o] ^= (uint8_t)(1u << (o % 8));
            reseal(db, len, pg);
            char what[80];
            snprintf(what, sizeof what, "page %zu byte %zu flipped, resealed", pg, o);
            run_variant(&t, what, db, len, NULL, 0, CRAFTED);
        }
        for (int k = 0; k < 2 && !(stride && resealed); k++) {
            memcpy(db, pristine.closed, len);
            db[pg * PAGE + offs[k]] ^= (uint8_t)(1u << (pg + (size_t)k) % 8);
            if (resealed) reseal(db, len, pg);
            char what[80];
            snprintf(what, sizeof what, "page %zu byte %zu flipped%s", pg, offs[k], resealed ? ", resealed" : "");
            run_variant(&t, what, db, len, NULL, 0, resealed ? CRAFTED : DEFAULTS);
        }
        if (!resealed) {
            memcpy(db, pristine.closed, len);
            memset(db + pg * PAGE, 0, PAGE);
            char what[80];
            snprintf(what, sizeof what, "page %zu zeroed", pg);
            run_variant(&t, what, db, len, NULL, 0, DEFAULTS);
        }
    }
    free(db);
    report(resealed ? "resealed flips" : "flips and zeroed pages", &t);
    CHECK(t.wrong == 0 && t.crashes == 0);
}

static void damaged_pages(void) { sweep(false); }

/* Item 1 of the hostile-input issue: a write into a leaf whose cells lie (an offset past the
 * page, a key longer than the page) with a matching checksum, as a crafted file has it. Every
 * tree leaf of the file gets each lie in turn; the child's read and write must end cleanly. */
static void crafted_leaves_then_write(void) {
    if (tk_encrypted()) { /* leaves can be crafted only with the key: fuzz_open seals its inputs */
        printf("  crafted leaves, then a write: not on an encrypted file (fuzz_open crafts those)\n");
        return;
    }
    CHECK(ensure_pristine());
    tally t = {0};
    size_t len = pristine.closed_len;
    uint8_t *db = malloc(len);
    for (size_t pg = 2; pg < pristine.closed_pages; pg++) {
        const uint8_t *p = pristine.closed + pg * PAGE;
        uint16_t n;
        memcpy(&n, p + 26, 2);
        if (p[24] != 1 || n == 0) continue; /* tree leaves with cells */
        size_t slots = p[25] & 0x80 ? 48 : 32;
        for (int lie = 0; lie < 3; lie++) {
            memcpy(db, pristine.closed, len);
            uint8_t *q = db + pg * PAGE;
            uint16_t off;
            memcpy(&off, q + slots, 2);
            if (lie == 0) off = PAGE - 2; /* the first cell's header past the page */
            if (lie == 1 && off + 2u <= PAGE) memcpy(q + off, "\xff\xff", 2); /* key of 65535 bytes */
            if (lie == 2) { /* a count and a slot array that claim the whole page */
                uint16_t many = 2000, lower = (uint16_t)(slots + 2000u * (slots == 48 ? 6 : 2));
                memcpy(q + 26, &many, 2);
                memcpy(q + 28, &lower, 2);
            }
            if (lie == 0) memcpy(q + slots, &off, 2);
            reseal(db, len, pg);
            char what[80];
            snprintf(what, sizeof what, "leaf %zu crafted (%s)", pg,
                     lie == 0 ? "cell past the page" : lie == 1 ? "key of 65535 bytes" : "2000 cells");
            run_variant(&t, what, db, len, NULL, 0, CRAFTED);
        }
    }
    free(db);
    report("crafted leaves, then a write", &t);
    CHECK(t.variants > 0 && t.wrong == 0 && t.crashes == 0);
}
static void crafted_pages(void) { sweep(true); }

static void truncated_files(void) {
    CHECK(ensure_pristine());
    tally t = {0};
    /* (cut to nothing, with no log beside it, the file is taken for a new database) */
    for (size_t len = PAGE; len <= pristine.closed_pages * PAGE; len += PAGE) {
        char what[80];
        snprintf(what, sizeof what, "file cut at %zu bytes", len);
        run_variant(&t, what, pristine.closed, len, NULL, 0, DEFAULTS);
    }
    for (size_t len = 0; len < pristine.db_len; len += 16 * PAGE) { /* the crashed writer's */
        char what[80];
        snprintf(what, sizeof what, "crashed file cut at %zu bytes", len);
        run_variant(&t, what, pristine.db, len, pristine.log, pristine.log_len, DEFAULTS);
    }
    report("truncated files", &t);
    CHECK(t.wrong == 0 && t.crashes == 0);
}

static void damaged_logs(void) {
    CHECK(ensure_pristine());
    tally t = {0};
    run_variant(&t, "intact", pristine.db, pristine.db_len, pristine.log, pristine.log_len, DEFAULTS);
    CHECK(t.consistent == 1);
    uint8_t *log = malloc(pristine.log_len);
    run_variant(&t, "log removed", pristine.db, pristine.db_len, NULL, 0, DEFAULTS);
    memset(log, 0, pristine.log_len);
    run_variant(&t, "log zeroed", pristine.db, pristine.db_len, log, pristine.log_len, DEFAULTS);
    run_variant(&t, "log emptied", pristine.db, pristine.db_len, log, 0, DEFAULTS);
    run_variant(&t, "log of version 2", pristine.db, pristine.db_len, pristine.log_v2, pristine.log_v2_len, DEFAULTS);
    for (size_t off = 0; off < 64 * 1024; off += 997) { /* the header and the first records */
        memcpy(log, pristine.log, pristine.log_len);
        log[off] ^= 0x10;
        char what[80];
        snprintf(what, sizeof what, "log byte %zu flipped", off);
        run_variant(&t, what, pristine.db, pristine.db_len, log, pristine.log_len, DEFAULTS);
    }
    memcpy(log, pristine.log, pristine.log_len);
    memset(log + 24, 0x5A, 8); /* another database's id */
    uint64_t h = XXH3_64bits(log, 32);
    memcpy(log + 32, &h, 8);
    run_variant(&t, "log of another database", pristine.db, pristine.db_len, log, pristine.log_len, DEFAULTS);
    run_variant(&t, "empty file beside its log", pristine.db, 0, pristine.log, pristine.log_len, DEFAULTS);
    CHECK(t.open_errors == t.variants - t.consistent); /* every log that cannot serve is refused */
    int before = t.consistent;
    /* accepting the rollback: each opens, at a committed version, and says what it dropped */
    run_variant(&t, "log removed", pristine.db, pristine.db_len, NULL, 0, ROLLBACK);
    run_variant(&t, "log of version 2", pristine.db, pristine.db_len, pristine.log_v2, pristine.log_v2_len, ROLLBACK);
    run_variant(&t, "empty file beside its log", pristine.db, 0, pristine.log, pristine.log_len, ROLLBACK);
    CHECK(t.consistent == before + 3);
    free(log);
    report("damaged logs", &t);
    CHECK(t.wrong == 0 && t.crashes == 0);
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(damaged_logs),
        TL_TEST(damaged_pages),
        TL_TEST(crafted_pages),
        TL_TEST(crafted_leaves_then_write),
        TL_TEST(truncated_files),
    };
    return tl_run("damage", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
