/*
 * kv_demo.c — the storage engine (ordered key-value trees) through strata.h only: a file, named trees, a snapshot that keeps
 * its view while a writer commits, the free space coming back, and verify.
 */
#include "strata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRY(call)                                                                       \
    do {                                                                                \
        if ((call) != STRATA_OK) {                                                      \
            fprintf(stderr, "%s failed: %s: %s\n", #call, strata_status_name(err.code), \
                    err.message);                                                       \
            return 1;                                                                   \
        }                                                                               \
    } while (0)

static int put_dog(strata_txn_t *txn, uint64_t id, const char *name, strata_error *e) {
    strata_tree_t *dogs;
    int rc = strata_tree_open(txn, "dogs", STRATA_KEY_INT, STRATA_TREE_CREATE, &dogs, e);
    return rc ? rc : strata_tree_put_int(dogs, id, name, strlen(name), e);
}

static void print_dogs(strata_txn_t *txn, const char *title) {
    strata_tree_t *dogs;
    strata_cursor_t *c;
    printf("  %s (version %llu):", title, (unsigned long long)strata_txn_version(txn));
    if (strata_tree_open(txn, "dogs", STRATA_KEY_INT, 0, &dogs, NULL) == STRATA_OK &&
        strata_cursor_open(dogs, &c, NULL) == STRATA_OK) {
        for (int rc = strata_cursor_first(c, NULL); rc == STRATA_OK; rc = strata_cursor_next(c, NULL)) {
            const void *k, *v;
            size_t kl, vl;
            strata_cursor_get(c, &k, &kl, &v, &vl, NULL);
            uint64_t id;
            memcpy(&id, k, 8);
            printf(" %llu=%.*s", (unsigned long long)id, (int)vl, (const char *)v);
        }
    }
    printf("\n");
}

int main(int argc, char **argv) {
    const char *path = argc > 1 ? argv[1] : "/tmp/strata-demo.db";
    char lock[600];
    snprintf(lock, sizeof lock, "%s.lock", path);
    unlink(path);
    unlink(lock);
    snprintf(lock, sizeof lock, "%s.log", path); /* the commit log */
    unlink(lock);
    strata_error err = {0};
    strata_db_t *db;
    printf("Strata %s, file format %u: %s\n", strata_version(), strata_format_version(), path);
    TRY(strata_db_open(path, NULL, &db, &err));

    strata_txn_t *txn;
    TRY(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &err));
    TRY(put_dog(txn, 1, "小白", &err));
    TRY(put_dog(txn, 2, "Rex", &err));
    TRY(strata_txn_commit(txn, &err));
    strata_txn_free(txn);

    strata_txn_t *snapshot;
    TRY(strata_txn_begin(db, STRATA_TXN_READ, &snapshot, &err));
    TRY(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &err));
    TRY(put_dog(txn, 3, "Fido", &err));
    TRY(put_dog(txn, 1, "小黑", &err));
    TRY(strata_txn_commit(txn, &err));
    strata_txn_free(txn);
    print_dogs(snapshot, "snapshot taken before the second commit");
    TRY(strata_txn_refresh(snapshot, &err));
    print_dogs(snapshot, "the same snapshot, refreshed");
    strata_txn_free(snapshot);

    /* Many small commits: pages freed by old versions are reused, the file stops growing. */
    for (uint64_t i = 0; i < 2000; i++) {
        TRY(strata_txn_begin(db, STRATA_TXN_WRITE, &txn, &err));
        TRY(put_dog(txn, 100 + i % 50, "puppy", &err));
        TRY(strata_txn_commit(txn, &err));
        strata_txn_free(txn);
    }
    strata_db_info info;
    TRY(strata_db_info_get(db, &info, &err));
    printf("  after 2,000 more commits: version %llu, %llu pages (%llu free), file %llu bytes\n",
           (unsigned long long)info.version, (unsigned long long)info.page_count,
           (unsigned long long)info.free_pages, (unsigned long long)info.file_size);
    TRY(strata_db_verify(db, &err));
    printf("  verify: every page reachable exactly once or free, every tree well formed\n");

    TRY(strata_txn_begin(db, STRATA_TXN_READ, &txn, &err));
    strata_tree_t *dogs;
    TRY(strata_tree_open(txn, "dogs", STRATA_KEY_INT, 0, &dogs, &err));
    if (strata_tree_put_int(dogs, 9, "x", 1, &err) != STRATA_OK)
        printf("  a write in a read transaction: %s: %s\n", strata_status_name(err.code), err.message);
    strata_txn_free(txn);
    TRY(strata_db_close(db, &err));
    return 0;
}
