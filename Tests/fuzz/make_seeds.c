/*
 * make_seeds.c — real database files for the fuzz corpus: the workload's commits (integer keys,
 * overflow values, deletes, a free list) plus a byte-key tree, each file cut to its used pages;
 * object databases; and a packed copy of each (strata_db_write_copy: LZ4 pages in a packed
 * region with its dictionary), so that mutations reach the unpacking code.
 * Usage: make_seeds DIR
 */
#include "../c/workload.h"
#include "objops.h"

#include <unistd.h>

static int seed(const char *dir, int n, uint64_t commits) {
    char path[512], lock[600];
    snprintf(path, sizeof path, "%s/seed-%d.db", dir, n);
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    strata_options o;
    strata_options_init(&o);
    o.durability = STRATA_DURABILITY_NO_SYNC;
    strata_db_t *db;
    strata_error e = {0};
    if (strata_db_open(path, &o, &db, &e)) return fprintf(stderr, "%s\n", e.message), 1;
    for (uint64_t i = 1; i <= commits; i++)
        if (!wl_is_big(i) && wl_commit(db, i, &e)) return fprintf(stderr, "%s\n", e.message), 1;
    strata_txn_t *txn;
    strata_tree_t *t;
    if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &e) ||
        strata_tree_open(txn, "names", STRATA_KEY_BYTES, STRATA_TREE_CREATE, &t, &e))
        return 1;
    const char *names[] = {"小白", "Ana", "Zoë", "张三", ""};
    for (int i = 0; i < 5; i++) strata_tree_put(t, names[i], strlen(names[i]), &i, sizeof i, &e);
    if (strata_txn_commit(txn, &e)) return 1;
    strata_txn_free(txn);
    strata_db_info info;
    strata_db_info_get(db, &info, &e);
    strata_db_close(db, &e);
    if (truncate(path, (off_t)(info.page_count * info.page_size))) return 1;
    unlink(lock);
    return 0;
}

/* An object database made by a fixed program of objops.h. */
static int object_seed(const char *dir, int n, uint64_t rng) {
    char path[512], lock[600];
    snprintf(path, sizeof path, "%s/objects-%d.db", dir, n);
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    strata_db_t *db;
    strata_error e = {0};
    if (strata_db_open(path, NULL, &db, &e)) return fprintf(stderr, "%s\n", e.message), 1;
    uint8_t prog[3000];
    for (size_t i = 0; i < sizeof prog; i++) {
        rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
        prog[i] = (uint8_t)rng;
        if (i % 7 == 0) prog[i] = (uint8_t)(rng % 2 ? 0 : 6); /* mostly creates and links */
    }
    objops_in in = {prog, sizeof prog, 0};
    if (objops_run(db, &in)) return 1;
    strata_db_info info;
    strata_db_info_get(db, &info, &e);
    strata_db_close(db, &e);
    if (truncate(path, (off_t)(info.page_count * info.page_size))) return 1;
    unlink(lock);
    return 0;
}

/* A packed copy of DIR/NAME as DIR/packed-NAME. */
static int packed_seed(const char *dir, const char *name) {
    char path[512], copy[600], lock[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    snprintf(copy, sizeof copy, "%s/packed-%s", dir, name);
    unlink(copy);
    strata_db_t *db;
    strata_error e = {0};
    if (strata_db_open(path, NULL, &db, &e) || strata_db_write_copy(db, copy, NULL, &e))
        return fprintf(stderr, "%s\n", e.message), 1;
    strata_db_close(db, &e);
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(lock);
    return 0;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    return seed(argv[1], 1, 2) || seed(argv[1], 2, 8) || seed(argv[1], 3, 20) ||
           object_seed(argv[1], 1, 0x1234567) || object_seed(argv[1], 2, 0x89abcdef) ||
           packed_seed(argv[1], "seed-3.db") || packed_seed(argv[1], "objects-1.db") ||
           packed_seed(argv[1], "objects-2.db");
}
