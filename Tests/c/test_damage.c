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
 * A variant's child exits 0 (read a committed version), 10 (clear error at open), 11 (clear
 * error reading); 3 is a wrong answer, 4 an error without a message; a signal is a crash.
 */
#include "testlib.h"

#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <xxhash.h>

enum { VERSIONS = 5, PAGE = 4096 };

/* ------------------------------------------------------------------ fingerprints */

typedef struct fp {
    XXH3_state_t *h;
} fp;

static void fp_bytes(fp *f, const void *p, size_t n) { XXH3_64bits_update(f->h, p, n); }
static void fp_u64(fp *f, uint64_t v) { fp_bytes(f, &v, sizeof v); }

static void fp_value(fp *f, const strata_value *v) {
    fp_u64(f, (uint64_t)v->type);
    switch (v->type) {
    case STRATA_TYPE_STRING:
    case STRATA_TYPE_BINARY:
        fp_u64(f, v->u.bytes.len);
        fp_bytes(f, v->u.bytes.data, v->u.bytes.len);
        break;
    case STRATA_TYPE_NULL: break;
    default: fp_bytes(f, &v->u, sizeof v->u.i); break; /* bool, int, link: the first 8 bytes */
    }
}

/* Everything a reader can see, hashed; STRATA_OK or the first error (in tl_err). */
static int fingerprint(strata_db_t *db, uint64_t *out) {
    fp f = {XXH3_createState()};
    XXH3_64bits_reset(f.h);
    strata_txn_t *r;
    int rc = strata_txn_begin(db, 0, &r, E);
    if (rc) goto done;
    size_t ntables;
    if ((rc = strata_table_count_all(r, &ntables, E))) goto end;
    for (size_t i = 0; i < ntables && !rc; i++) {
        const char *name;
        strata_table_t *t;
        size_t nprops;
        if ((rc = strata_table_name_at(r, i, &name, E)) || (rc = strata_table_open(r, name, &t, E)) ||
            (rc = strata_table_property_count(t, &nprops, E)))
            break;
        fp_bytes(&f, name, strlen(name));
        strata_property_info info[16];
        for (size_t j = 0; j < nprops && j < 16 && !rc; j++) rc = strata_table_property_at(t, j, &info[j], E);
        uint64_t size, seen = 0;
        if (rc || (rc = strata_table_size(t, &size, E))) break;
        fp_u64(&f, size);
        for (strata_key_t k = -1; !rc;) {
            rc = strata_obj_next(t, k, &k, E);
            if (rc == STRATA_ERR_NOT_FOUND) {
                rc = STRATA_OK;
                break;
            }
            if (rc) break;
            seen++;
            fp_u64(&f, (uint64_t)k);
            for (size_t j = 0; j < nprops && j < 16 && !rc; j++) {
                strata_value v;
                if (info[j].flags & STRATA_PROP_LIST) {
                    size_t n;
                    if ((rc = strata_list_size(t, k, info[j].col, &n, E))) break;
                    fp_u64(&f, n);
                    for (size_t e = 0; e < n && !rc; e++)
                        if (!(rc = strata_list_get(t, k, info[j].col, e, &v, E))) fp_value(&f, &v);
                } else if (!(rc = strata_obj_get(t, k, info[j].col, &v, E))) {
                    fp_value(&f, &v);
                }
            }
        }
        if (!rc && seen != size) {
            snprintf(tl_err.message, sizeof tl_err.message, "table %s: %llu objects seen, size says %llu",
                     name, (unsigned long long)seen, (unsigned long long)size);
            rc = 3; /* a wrong answer */
        }
        /* queries (the scan, and the index on Person.name) */
        static const char *queries[] = {"TRUEPREDICATE", "age > 3", "name BEGINSWITH 'p1'",
                                        "name == 'p7'", "ANY dogs.age > 2"};
        for (size_t qi = 0; qi < sizeof queries / sizeof *queries && !rc; qi++) {
            strata_query_t *q;
            uint64_t n = 0;
            if (strata_query_compile(r, name, queries[qi], &q, E) != STRATA_OK) continue; /* not this table's */
            rc = strata_query_count(q, r, NULL, 0, &n, E);
            strata_query_free(q);
            fp_u64(&f, n);
        }
    }
    static const char *trees[] = {"kv", "ints"};
    for (size_t i = 0; i < 2 && !rc; i++) {
        strata_tree_t *t;
        strata_cursor_t *c;
        rc = strata_tree_open(r, trees[i], i ? STRATA_KEY_INT : STRATA_KEY_BYTES, 0, &t, E);
        if (rc == STRATA_ERR_NOT_FOUND) { /* the versions before the first commit */
            fp_u64(&f, 0xAB5E17);
            rc = STRATA_OK;
            continue;
        }
        if (rc) break;
        if ((rc = strata_cursor_open(t, &c, E))) break;
        for (rc = strata_cursor_first(c, E); rc == STRATA_OK; rc = strata_cursor_next(c, E)) {
            const void *k, *v;
            size_t kl, vl;
            if ((rc = strata_cursor_get(c, &k, &kl, &v, &vl, E))) break;
            fp_u64(&f, kl);
            fp_bytes(&f, k, kl);
            fp_u64(&f, vl);
            fp_bytes(&f, v, vl);
        }
        if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
        strata_cursor_close(c);
    }
end:
    strata_txn_free(r);
done:
    *out = XXH3_64bits_digest(f.h);
    XXH3_freeState(f.h);
    return rc;
}

/* ------------------------------------------------------------------ the database */

static strata_value vstr(const char *s) {
    return (strata_value){.type = STRATA_TYPE_STRING, .u.bytes = {s, strlen(s)}};
}
static strata_value vint(int64_t i) { return (strata_value){.type = STRATA_TYPE_INT, .u.i = i}; }
static strata_value vlink(int64_t k) { return (strata_value){.type = STRATA_TYPE_LINK, .u.link = k}; }

static uint8_t big[9000];

typedef struct cols {
    strata_col_t name, age, photo, dogs, best, dname, dage;
} cols;

/* Commit v (1..VERSIONS) of the database. */
static int commit_version(strata_db_t *db, int v, cols *c) {
    strata_txn_t *w;
    strata_table_t *p, *d;
    strata_tree_t *kv, *ints;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E);
    if (rc) return rc;
    if (v == 1) {
        if ((rc = strata_table_create(w, "Dog", &d, E)) || (rc = strata_table_create(w, "Person", &p, E)) ||
            (rc = strata_table_add_property(d, "name", STRATA_TYPE_STRING, 0, NULL, &c->dname, E)) ||
            (rc = strata_table_add_property(d, "age", STRATA_TYPE_INT, 0, NULL, &c->dage, E)) ||
            (rc = strata_table_add_property(p, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED, NULL, &c->name, E)) ||
            (rc = strata_table_add_property(p, "age", STRATA_TYPE_INT, 0, NULL, &c->age, E)) ||
            (rc = strata_table_add_property(p, "photo", STRATA_TYPE_BINARY, STRATA_PROP_NULLABLE, NULL, &c->photo, E)) ||
            (rc = strata_table_add_property(p, "dogs", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Dog", &c->dogs, E)) ||
            (rc = strata_table_add_property(p, "best", STRATA_TYPE_LINK, 0, "Dog", &c->best, E)))
            goto out;
    } else if ((rc = strata_table_open(w, "Dog", &d, E)) || (rc = strata_table_open(w, "Person", &p, E))) {
        goto out;
    }
    if ((rc = strata_tree_open(w, "kv", STRATA_KEY_BYTES, STRATA_TREE_CREATE, &kv, E)) ||
        (rc = strata_tree_open(w, "ints", STRATA_KEY_INT, STRATA_TREE_CREATE, &ints, E)))
        goto out;
    char s[64];
    for (int i = 0; i < 25; i++) { /* dogs: new ones each version */
        strata_key_t k;
        snprintf(s, sizeof s, "狗%d.%d", v, i);
        if ((rc = strata_obj_create(d, &k, E)) || (rc = strata_obj_set(d, k, c->dname, (strata_value[]){vstr(s)}, E)) ||
            (rc = strata_obj_set(d, k, c->dage, (strata_value[]){vint((v * 7 + i) % 11)}, E)))
            goto out;
    }
    for (int i = 0; i < 40; i++) { /* people: 40 new, and older ones changed or deleted */
        strata_key_t k;
        snprintf(s, sizeof s, "p%d-%d Zoë", i, v);
        if ((rc = strata_obj_create(p, &k, E)) || (rc = strata_obj_set(p, k, c->name, (strata_value[]){vstr(s)}, E)) ||
            (rc = strata_obj_set(p, k, c->age, (strata_value[]){vint(i % 9)}, E)))
            goto out;
        if (i % 8 == 0) {
            memset(big, 'a' + v + i % 20, sizeof big);
            strata_value b = {.type = STRATA_TYPE_BINARY, .u.bytes = {big, 4500u + 500u * (unsigned)(i % 9)}};
            if ((rc = strata_obj_set(p, k, c->photo, &b, E))) goto out;
        }
        for (int j = 0; j < i % 4; j++)
            if ((rc = strata_list_insert(p, k, c->dogs, (size_t)j, (strata_value[]){vlink((v - 1) * 25 + (i + j) % 25)}, E)))
                goto out;
        if (i % 3 == 0 && (rc = strata_obj_set(p, k, c->best, (strata_value[]){vlink((v - 1) * 25 + i % 25)}, E)))
            goto out;
    }
    if (v > 1) {
        for (strata_key_t k = (v - 2) * 40; k < (v - 2) * 40 + 40; k += 5)
            if ((rc = strata_obj_delete(p, k, E))) goto out;
        for (strata_key_t k = (v - 2) * 40 + 2; k < (v - 2) * 40 + 40; k += 5)
            if ((rc = strata_obj_set(p, k, c->age, (strata_value[]){vint(100 + v)}, E))) goto out;
    }
    for (int i = 0; i < 60; i++) {
        snprintf(s, sizeof s, "key/%03d/%d", (i * 17 + v) % 97, v % 2);
        size_t len = i % 20 == 0 ? 9000 : (size_t)(10 + i);
        memset(big, 'A' + (i + v) % 26, len);
        if ((rc = strata_tree_put(kv, s, strlen(s), big, len, E))) goto out;
        uint64_t ik = (uint64_t)(i * 131 + v * 7) % 400;
        if ((rc = strata_tree_put_int(ints, ik, s, strlen(s), E))) goto out;
    }
    rc = strata_txn_commit(w, E);
out:
    strata_txn_free(w);
    return rc;
}

static strata_options opts(void) {
    strata_options o;
    strata_options_init(&o);
    o.map_size = 1ull << 30;
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
