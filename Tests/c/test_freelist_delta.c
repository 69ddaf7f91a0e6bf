/*
 * test_freelist_delta.c — the free-list delta (format 14, storage/freelist.c): a commit whose
 * free-list changes fit its meta page writes no free-list page; the delta reaches other
 * handles through the file, a killed writer's deltas come back from the commit log, a damaged
 * delta is named, and one that contradicts its list is never saved over. White-box: reads
 * meta pages from the file and writes crafted ones.
 */
#include "testlib.h"

#include "storage/storage.h"

#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>
#include <xxhash.h>

/* The newest valid meta slot of the file as it is on disk: its meta and delta image. */
typedef struct disk_meta {
    st_meta m;
    uint8_t img[ST_DELTA_BYTES];
    int slot;
} disk_meta;

/* (of two slots with the newest version, the one that is not the durable copy) */
static bool read_meta(const char *path, disk_meta *out) {
    int fd = open(path, O_RDONLY);
    if (fd < 0) return false;
    bool found = false;
    for (int s = 0; s < 2; s++) {
        uint8_t page[4096];
        if (pread(fd, page, sizeof page, (off_t)s * 4096) != (ssize_t)sizeof page) break;
        st_meta m;
        memcpy(&m, page, sizeof m);
        if (m.checksum != XXH3_64bits((const uint8_t *)&m + 8, sizeof m - 8)) continue;
        if (!found || m.version > out->m.version ||
            (m.version == out->m.version && !(m.flags & ST_META_DURABLE))) {
            out->m = m;
            memcpy(out->img, page + ST_DELTA_OFF, ST_DELTA_BYTES);
            out->slot = s;
            found = true;
        }
    }
    close(fd);
    return found;
}

static int put(strata_db_t *db, uint64_t key, uint64_t val) {
    strata_txn_t *txn;
    strata_tree_t *t;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E);
    if (rc) return rc;
    rc = strata_tree_open(txn, "t", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E);
    if (rc == STRATA_OK) rc = strata_tree_put_int(t, key, &val, sizeof val, E);
    if (rc == STRATA_OK) rc = strata_txn_commit(txn, E);
    strata_txn_free(txn);
    return rc;
}

/* keys [0, n) of tree "t" hold 1000 + key * 7 + round, with a 300-byte value in "b" each, then
 * every other "b" value deleted: a file with a free list of a few hundred pages. */
static int fill(strata_db_t *db, uint64_t n) {
    static uint8_t pad[300];
    strata_txn_t *txn;
    strata_tree_t *t, *b;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E);
    if (rc) return rc;
    if ((rc = strata_tree_open(txn, "t", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E)) ||
        (rc = strata_tree_open(txn, "b", STRATA_KEY_INT, STRATA_TREE_CREATE, &b, E))) {
        strata_txn_free(txn);
        return rc;
    }
    for (uint64_t k = 0; k < n && rc == STRATA_OK; k++) {
        uint64_t v = 1000 + k * 7;
        rc = strata_tree_put_int(t, k, &v, sizeof v, E);
        if (rc == STRATA_OK) rc = strata_tree_put_int(b, k, pad, sizeof pad, E);
    }
    if (rc == STRATA_OK) rc = strata_txn_commit(txn, E);
    strata_txn_free(txn);
    if (rc || (rc = strata_txn_begin(db, STRATA_TXN_WRITE, &txn, E))) return rc;
    rc = strata_tree_open(txn, "b", STRATA_KEY_INT, 0, &b, E);
    for (uint64_t k = 0; k < n && rc == STRATA_OK; k += 2) rc = strata_tree_delete_int(b, k, E);
    if (rc == STRATA_OK) rc = strata_txn_commit(txn, E);
    strata_txn_free(txn);
    return rc;
}

static bool holds(strata_db_t *db, uint64_t key, uint64_t val) {
    strata_txn_t *r;
    strata_tree_t *t;
    const void *v;
    size_t len;
    uint64_t got = 0;
    if (strata_txn_begin(db, STRATA_TXN_READ, &r, E)) return false;
    bool ok = strata_tree_open(r, "t", STRATA_KEY_INT, 0, &t, E) == STRATA_OK &&
              strata_tree_get_int(t, key, &v, &len, E) == STRATA_OK && len == 8;
    if (ok) memcpy(&got, v, 8);
    strata_txn_free(r);
    return ok && got == val;
}

/* Small commits on a file with a free list: most leave the list's pages as they are (the same
 * head, the delta in the meta), the delta fills and the list is saved again now and then, and
 * every version verifies (verify counts the delta's pages). */
static void test_small_commits_leave_the_list_pages_alone(void) {
    const char *path = tl_path("deltas.db");
    strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(db);
    OK(fill(db, 3000));
    int deltas = 0, saves = 0;
    disk_meta before, after;
    CHECK(read_meta(path, &before));
    for (uint64_t i = 0; i < 400; i++) {
        OK(put(db, (i * 37) % 3000, i));
        CHECK(read_meta(path, &after));
        CHECK(after.m.version == before.m.version + 1);
        if (after.m.flags & ST_META_FREE_DELTA) {
            CHECK(after.m.freelist_head == before.m.freelist_head); /* no list page written */
            CHECK(after.m.format_version == (tk_encrypted() ? 15 : 14));
            deltas++;
        } else {
            saves++;
        }
        if (i % 50 == 0) OK(strata_db_verify(db, E));
        before = after;
    }
    fprintf(stderr, "  400 small commits: %d as deltas, %d saved the list\n", deltas, saves);
    CHECK(deltas >= 300);
    CHECK(saves >= 2); /* the delta fills: the list is saved again */
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    db = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(db && holds(db, (399 * 37) % 3000, 399));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* Two handles taking turns: each reads the other's delta from the file (its cached list is of
 * an older version), and space stays reused. */
static void test_another_handle_takes_the_delta_from_the_file(void) {
    const char *path = tl_path("turns.db");
    strata_db_t *a = tl_open_db(path, STRATA_DURABILITY_FULL);
    strata_db_t *b = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(a && b);
    OK(fill(a, 2000));
    strata_db_info info;
    for (uint64_t i = 0; i < 300; i++) {
        OK(put(i % 3 ? a : b, i % 2000, i));
        if (i == 100) OK(strata_db_info_get(a, &info, E));
        if (i % 60 == 0) OK(strata_db_verify(i % 2 ? a : b, E));
    }
    strata_db_info end;
    OK(strata_db_info_get(b, &end, E));
    CHECK(end.page_count <= info.page_count + 16); /* freed pages are taken again */
    CHECK(holds(a, 299 % 2000, 299) && holds(b, 298 % 2000, 298));
    OK(strata_db_verify(a, E));
    OK(strata_db_close(a, E));
    OK(strata_db_close(b, E));
}

/* A writer killed after logged commits whose free lists were deltas: the next open replays the
 * records, their delta images with them, and the file verifies and takes commits. */
static void test_a_killed_writer_deltas_come_back_from_the_log(void) {
    const char *path = tl_path("killed.db");
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
        if (!db || fill(db, 2000)) _exit(3);
        for (uint64_t i = 0; i < 120; i++)
            if (put(db, i, 5000 + i)) _exit(4);
        raise(SIGKILL); /* no close: the versions since the last checkpoint are in the log */
    }
    int status = 0;
    CHECK(child > 0 && waitpid(child, &status, 0) == child);
    CHECK(WIFSIGNALED(status));
    disk_meta dm;
    CHECK(read_meta(path, &dm));
    strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(db);
    strata_recovery rec;
    OK(strata_db_recovery(db, &rec, E));
    CHECK(rec.replayed > 0 && rec.dropped == 0);
    CHECK(read_meta(path, &dm) && (dm.m.flags & ST_META_FREE_DELTA)); /* rebuilt with it */
    CHECK(holds(db, 119, 5119) && holds(db, 0, 5000));
    OK(strata_db_verify(db, E));
    for (uint64_t i = 0; i < 60; i++) OK(put(db, i, 9000 + i));
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
}

/* A closed file whose newest meta holds a delta: a free list, then ten small commits. */
static bool closed_with_delta(const char *path, disk_meta *dm) {
    strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
    bool ok = db && fill(db, 1000) == STRATA_OK;
    for (uint64_t i = 0; ok && i < 10; i++) ok = put(db, i, i) == STRATA_OK;
    ok = db && strata_db_close(db, E) == STRATA_OK && ok;
    return ok && read_meta(path, dm) && (dm->m.flags & ST_META_FREE_DELTA);
}

/* The delta's bytes damaged: in the newest version's logged slot, its durable copy (a close
 * made it) opens; in both, the open names the delta (or, encrypted, the MAC over it). */
static void test_a_damaged_delta_is_named(void) {
    const char *path = tl_path("damaged.db");
    disk_meta dm;
    CHECK(closed_with_delta(path, &dm));
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    uint8_t b;
    off_t at = (off_t)dm.slot * 4096 + ST_DELTA_OFF + 24; /* the first taken entry */
    CHECK(pread(fd, &b, 1, at) == 1);
    b ^= 0x40;
    CHECK(pwrite(fd, &b, 1, at) == 1);
    close(fd);
    strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(db && holds(db, 9, 9));
    OK(strata_db_verify(db, E));
    OK(put(db, 20, 20)); /* a writer builds on the whole copy */
    OK(strata_db_verify(db, E));
    OK(strata_db_close(db, E));
    CHECK(read_meta(path, &dm));
    fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    for (int s = 0; s < 2; s++) { /* both slots */
        at = (off_t)s * 4096 + ST_DELTA_OFF + 8; /* the version it is bound to */
        CHECK(pread(fd, &b, 1, at) == 1);
        b ^= 1;
        CHECK(pwrite(fd, &b, 1, at) == 1);
    }
    close(fd);
    strata_db_t *bad = NULL;
    strata_options o;
    strata_options_init(&o);
    tk_options(&o);
    if (dm.m.flags & ST_META_FREE_DELTA) { /* (an encrypted file's MAC covers the delta) */
        EXPECT_CODE(strata_db_open(path, &o, &bad, E), STRATA_ERR_CORRUPT);
        CHECK(strstr(tl_err.message, tk_encrypted() ? "authenticate" : "free-list delta"));
    }
}

/* A delta whose checksum holds but that takes the same entry twice (as no commit writes it):
 * the next commit refuses to save over it, naming the free list, and the file is unchanged. */
static void test_a_delta_that_contradicts_its_list_is_refused(void) {
    const char *path = tl_path("crafted.db");
    disk_meta dm;
    CHECK(closed_with_delta(path, &dm));
    uint32_t nt, nf;
    memcpy(&nt, dm.img + 16, 4);
    memcpy(&nf, dm.img + 20, 4);
    CHECK(nt >= 2);
    memcpy(dm.img + 24 + 4, dm.img + 24, 4); /* the second taken entry is the first again */
    uint64_t seed = XXH3_64bits(dm.img + ST_DELTA_BYTES - 16 * (size_t)nf, 16 * (size_t)nf);
    uint64_t sum = XXH3_64bits_withSeed(dm.img + 8, 16 + 4 * (size_t)nt, seed);
    memcpy(dm.img, &sum, 8);
    int fd = open(path, O_RDWR);
    CHECK(fd >= 0);
    for (int s = 0; s < 2; s++)
        CHECK(pwrite(fd, dm.img, ST_DELTA_BYTES, (off_t)s * 4096 + ST_DELTA_OFF) == ST_DELTA_BYTES);
    close(fd);
    if (tk_encrypted()) { /* its checksum holds, but not the meta's MAC, which covers it */
        strata_db_t *bad = NULL;
        strata_options o;
        strata_options_init(&o);
        tk_options(&o);
        EXPECT_CODE(strata_db_open(path, &o, &bad, E), STRATA_ERR_CORRUPT);
        CHECK(strstr(tl_err.message, "authenticate"));
        return;
    }
    strata_db_t *db = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(db);
    EXPECT_CODE(put(db, 1, 100), STRATA_ERR_CORRUPT);
    CHECK(strstr(tl_err.message, "free list") || strstr(tl_err.message, "free-list"));
    CHECK(holds(db, 1, 1));
    EXPECT_CODE(strata_db_verify(db, E), STRATA_ERR_CORRUPT);
    OK(strata_db_close(db, E));
}

/* A writer thread commits on another handle while this one verifies: each walk reads its
 * version's delta when it begins (two commits overwrite that version's meta slot). */
static volatile bool writer_done;

static void *committer(void *arg) {
    strata_db_t *db = arg;
    for (uint64_t i = 0; i < 400 && !writer_done; i++)
        if (put(db, i % 1500, 7000 + i)) break;
    writer_done = true;
    return NULL;
}

static void test_verify_while_another_handle_commits(void) {
    const char *path = tl_path("busy.db");
    strata_db_t *a = tl_open_db(path, STRATA_DURABILITY_FULL);
    strata_db_t *b = tl_open_db(path, STRATA_DURABILITY_FULL);
    CHECK(a && b);
    OK(fill(a, 20000)); /* (a walk long enough for several commits) */
    writer_done = false;
    pthread_t t;
    CHECK(pthread_create(&t, NULL, committer, b) == 0);
    int walks = 0, failed = 0;
    while (!writer_done) {
        walks++;
        if (strata_db_verify(a, E) != STRATA_OK) {
            fprintf(stderr, "  verify during commits: %s\n", tl_err.message);
            failed++;
            break;
        }
    }
    writer_done = true;
    pthread_join(t, NULL);
    fprintf(stderr, "  %d walks during 400 commits of another handle\n", walks);
    CHECK(failed == 0 && walks >= 1);
    OK(strata_db_verify(a, E));
    OK(strata_db_close(a, E));
    OK(strata_db_close(b, E));
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        TL_TEST(test_small_commits_leave_the_list_pages_alone),
        TL_TEST(test_another_handle_takes_the_delta_from_the_file),
        TL_TEST(test_a_killed_writer_deltas_come_back_from_the_log),
        TL_TEST(test_a_damaged_delta_is_named),
        TL_TEST(test_a_delta_that_contradicts_its_list_is_refused),
        TL_TEST(test_verify_while_another_handle_commits),
    };
    return tl_run("freelist-delta", tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
