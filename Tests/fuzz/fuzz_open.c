/*
 * fuzz_open.c — libFuzzer target: open a mutated database file, verify it, and read every tree
 * the workload makes, every object of the object seeds, and a counting and a listing scan of
 * each int and bool property (the query engine's leaf reads). Whatever the bytes, the result
 * must be an error or success: never a crash, a hang, or a sanitizer report. Seeded with real
 * files (make_seeds.c). Then a write is committed into it (its changes computed against the
 * snapshot before), and a quarter of the inputs are
 * compacted (packed or not) and read again.
 *
 * Every page is checksummed, so most mutations end at the first check of a page. Half the
 * inputs (chosen by their hash, so a finding replays) have every page's and meta slot's
 * checksum recomputed before the open, as a crafted file would: then the mutated bytes reach the
 * structure checks behind the checksums (counts, offsets, lengths, page numbers).
 *
 * A third of the inputs (again by hash) are then encrypted with a key this target knows, as one
 * who holds the key could craft a file: every page (an overflow run as one) sealed as its
 * version and number say, the meta slots given format 11 and their header (storage/cipher.c),
 * and the file opened with the key: the mutations reach the same checks behind the tags.
 */
#include "objops.h"
#include "storage/cipher.h"
#include "storage/storage.h"

#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <xxhash.h>

/* Give every page of the file (size bytes at buf) the checksum its bytes need. */
static void reseal(uint8_t *buf, size_t size) {
    enum { PAGE = 4096 };
    size_t pages = size / PAGE;
    for (size_t pg = 0; pg < pages; pg++) {
        uint8_t *p = buf + pg * PAGE;
        size_t len = pg < 2 ? 128 : PAGE;
        if (pg >= 2 && p[24] == 3) { /* an overflow run: the checksum covers it all */
            uint32_t run;
            memcpy(&run, p + 28, 4);
            if (run && run <= pages - pg) len = (size_t)run * PAGE;
        }
        uint64_t h = XXH3_64bits(p + 8, len - 8);
        memcpy(p, &h, 8);
    }
}

static const uint8_t fuzz_key[64] = {9, 8, 7, 6, 5, 4, 3, 2, 1};

/* The plain file at buf sealed in place with fuzz_key (keys of slot 0's database id). */
static void encrypt_file(uint8_t *buf, size_t size) {
    enum { PAGE = 4096 };
    size_t pages = size / PAGE;
    st_cipher *c;
    if (pages < 2 || st_cipher_new(fuzz_key, sizeof fuzz_key, &c, NULL)) return;
    uint64_t id;
    memcpy(&id, buf + 112, 8);
    uint8_t *sealed = malloc(size);
    if (sealed && st_cipher_bind(c, id, NULL) == STRATA_OK) {
        for (size_t pg = 2; pg < pages; pg++) {
            uint8_t *p = buf + pg * PAGE;
            size_t len = PAGE;
            if (p[24] == 3) { /* an overflow run */
                uint32_t run;
                memcpy(&run, p + 28, 4);
                if (run && run <= pages - pg) len = (size_t)run * PAGE;
            }
            if (st_cipher_seal_page(c, p, len, pg, sealed) == 0) memcpy(p, sealed, len);
            pg += len / PAGE - 1;
        }
        for (int slot = 0; slot < 2; slot++) {
            uint8_t *m = buf + slot * PAGE;
            uint32_t format = ST_FORMAT_ENCRYPTED;
            memcpy(m + 16, &format, 4);
            uint64_t h = XXH3_64bits(m + 8, 120);
            memcpy(m, &h, 8);
            st_cipher_meta_seal(c, m);
        }
    }
    free(sealed);
    st_cipher_free(c);
}

static char path[256];

static void read_tree(strata_txn_t *txn, const char *name, strata_key_kind kind) {
    strata_tree_t *t;
    strata_cursor_t *c;
    if (strata_tree_open(txn, name, kind, 0, &t, NULL) || strata_cursor_open(t, &c, NULL)) return;
    volatile uint8_t sink = 0;
    int steps = 0;
    for (int rc = strata_cursor_first(c, NULL); rc == STRATA_OK && steps < 100000;
         rc = strata_cursor_next(c, NULL), steps++) {
        const void *k, *v;
        size_t kl, vl;
        if (strata_cursor_get(c, &k, &kl, &v, &vl, NULL)) break;
        if (kl) sink ^= ((const uint8_t *)k)[kl - 1];
        if (vl) sink ^= ((const uint8_t *)v)[0] ^ ((const uint8_t *)v)[vl - 1];
    }
    for (int rc = strata_cursor_last(c, NULL); rc == STRATA_OK && steps < 200000;
         rc = strata_cursor_prev(c, NULL), steps++) {
    }
    uint64_t key = 7;
    const void *v;
    size_t vl;
    if (kind == STRATA_KEY_INT) strata_tree_get(t, &key, 8, &v, &vl, NULL);
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!path[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/strata-fuzz-%d.db", base, (int)getpid());
    }
    uint8_t *buf = malloc(size ? size : 1);
    if (!buf) return 0;
    if (size) memcpy(buf, data, size);
    uint64_t hash = XXH3_64bits(data, size);
    if (hash & 1) reseal(buf, size);
    bool encrypted = (hash >> 5) % 3 == 0;
    if (encrypted) encrypt_file(buf, size);
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    bool written = fd >= 0 && (!size || write(fd, buf, size) == (ssize_t)size);
    if (fd >= 0) close(fd);
    free(buf);
    if (!written) return 0;
    char side[300]; /* a log left by the previous input is not this file's */
    snprintf(side, sizeof side, "%s.log", path);
    unlink(side);
    strata_options o;
    strata_options_init(&o);
    o.create = false;
    o.map_size = 1ull << 30;
    o.encryption_key = encrypted ? fuzz_key : NULL;
    o.encryption_key_len = encrypted ? sizeof fuzz_key : 0;
    strata_db_t *db;
    if (strata_db_open(path, &o, &db, NULL) == STRATA_OK) {
        strata_db_verify(db, NULL);
        strata_txn_t *txn;
        if (strata_txn_begin(db, STRATA_TXN_READ, &txn, NULL) == STRATA_OK) {
            read_tree(txn, "data", STRATA_KEY_INT);
            read_tree(txn, "state", STRATA_KEY_INT);
            read_tree(txn, "names", STRATA_KEY_BYTES);
            objops_read_all(txn);
            strata_txn_free(txn);
        }
        /* A write on a damaged file must fail cleanly or succeed and stay verifiable; its
         * changes (tables and a list, against the snapshot before) are computed as a notifier
         * would, reading the damaged cluster and list trees of both versions. */
        strata_txn_t *before = NULL;
        strata_txn_begin(db, STRATA_TXN_READ, &before, NULL);
        if (strata_txn_begin(db, STRATA_TXN_WRITE, &txn, NULL) == STRATA_OK) {
            strata_tree_t *t;
            strata_table_t *person;
            if (strata_tree_open(txn, "data", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, NULL) == 0) {
                strata_tree_put_int(t, 3, "fuzz", 4, NULL);
                strata_tree_delete_int(t, 5, NULL);
            }
            if (strata_table_open(txn, "Person", &person, NULL) == STRATA_OK)
                strata_list_insert(person, 1, 4, 0, (strata_value[]){{.type = STRATA_TYPE_LINK, .u.link = 2}}, NULL);
            for (int tb = 0; before && tb < 2; tb++) {
                strata_changes_t *ch;
                strata_list_changes_t *lc;
                if (strata_changes_get(before, txn, tb ? "Person" : "Dog", &ch, NULL) == STRATA_OK)
                    strata_changes_free(ch);
                if (strata_list_changes_get(before, txn, tb ? "Person" : "Dog", 1, tb ? 4 : 3, &lc, NULL) == STRATA_OK)
                    strata_list_changes_free(lc);
            }
            strata_txn_commit(txn, NULL);
            strata_txn_free(txn);
        }
        strata_txn_free(before);
        /* A quarter of the inputs: a compaction (packed or not) reads every page of the
         * damaged file; it must fail cleanly or leave a file that opens and reads. */
        uint64_t h = XXH3_64bits(data, size);
        if ((h >> 1) % 4 == 0) {
            strata_copy_options co;
            strata_copy_options_init(&co);
            co.pack = (h >> 3) % 2;
            if (strata_db_compact(db, &co, NULL) == STRATA_OK) {
                strata_db_verify(db, NULL);
                if (strata_txn_begin(db, STRATA_TXN_READ, &txn, NULL) == STRATA_OK) {
                    objops_read_all(txn);
                    strata_txn_free(txn);
                }
            }
        }
        strata_db_close(db, NULL);
    }
    return 0;
}
