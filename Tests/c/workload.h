/*
 * workload.h — numbered commits for the crash, power-loss and fault tests.
 *
 * Commit i changes tree "data" (integer keys 0..WL_KEYS-1) in a way derived from i alone: a few
 * puts of values from a few bytes to 20 KiB (overflow runs), now and then one of about a MiB
 * (the file grows), and a few deletes, and records i in
 * tree "state" under key 0. The state after commit L is therefore known by replaying 1..L on a
 * model, so a checker can tell a complete commit from a half-applied one.
 */
#ifndef STRATA_WORKLOAD_H
#define STRATA_WORKLOAD_H

#include "strata.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define WL_KEYS 200
#define WL_OPS 6

typedef struct wl_entry {
    int present;
    uint64_t seed;
    size_t len;
} wl_entry;

__attribute__((unused)) static uint64_t wl_hash(uint64_t x) {
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

__attribute__((unused)) static void wl_fill(uint8_t *buf, size_t len, uint64_t seed) {
    uint64_t s = seed | 1;
    for (size_t i = 0; i < len; i++) {
        s ^= s << 13, s ^= s >> 7, s ^= s << 17;
        buf[i] = (uint8_t)s;
    }
}

#define WL_MAX_VALUE 4000000

__attribute__((unused)) static size_t wl_len(uint64_t h) {
    if (h % 97 == 0) return 2600000 + (h >> 8) % 1400000; /* grows the file by a chunk */
    switch (h % 10) {
    case 0: return 4000 + (h >> 8) % 16000; /* overflow run */
    case 1: case 2: return 500 + (h >> 8) % 500;
    default: return (h >> 8) % 120;
    }
}

/* What commit i does to key op j: *put and the value's seed and length. */
__attribute__((unused)) static void wl_op(uint64_t i, int j, uint64_t *key, int *put, uint64_t *seed, size_t *len) {
    uint64_t h = wl_hash(i * 131 + (uint64_t)j);
    *key = h % WL_KEYS;
    *put = (h >> 40) % 4 != 0;
    *seed = h;
    *len = wl_len(h >> 3);
}

__attribute__((unused)) static void wl_model(wl_entry *m, uint64_t i) {
    for (int j = 0; j < WL_OPS; j++) {
        uint64_t key, seed;
        int put;
        size_t len;
        wl_op(i, j, &key, &put, &seed, &len);
        if (put) m[key] = (wl_entry){1, seed, len};
        else m[key].present = 0;
    }
}

/* Apply commit i's changes inside txn (the caller commits). */
__attribute__((unused)) static int wl_apply(strata_txn_t *txn, uint64_t i, strata_error *err) {
    static uint8_t buf[WL_MAX_VALUE];
    strata_tree_t *data, *state;
    int rc;
    if ((rc = strata_tree_open(txn, "data", STRATA_KEY_INT, STRATA_TREE_CREATE, &data, err)) ||
        (rc = strata_tree_open(txn, "state", STRATA_KEY_INT, STRATA_TREE_CREATE, &state, err)))
        return rc;
    for (int j = 0; j < WL_OPS; j++) {
        uint64_t key, seed;
        int put;
        size_t len;
        wl_op(i, j, &key, &put, &seed, &len);
        if (put) {
            wl_fill(buf, len, seed);
            rc = strata_tree_put_int(data, key, buf, len, err);
        } else {
            rc = strata_tree_delete_int(data, key, err);
            if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK;
        }
        if (rc) return rc;
    }
    return strata_tree_put_int(state, 0, &i, sizeof i, err);
}

/* Does commit i write a value large enough to grow the file? */
__attribute__((unused)) static int wl_is_big(uint64_t i) {
    for (int j = 0; j < WL_OPS; j++) {
        uint64_t key, seed;
        int put;
        size_t len;
        wl_op(i, j, &key, &put, &seed, &len);
        if (put && len >= 2600000) return 1;
    }
    return 0;
}

/* Begin, apply commit i, commit. */
/* Commit i, with extra begin flags (STRATA_TXN_NO_SYNC), or `unsynced`: through
 * strata_txn_commit_unsynced. */
__attribute__((unused)) static int wl_commit_flags(strata_db_t *db, uint64_t i, unsigned flags, bool unsynced,
                                                   strata_error *err) {
    strata_txn_t *txn;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE | flags, &txn, err);
    if (rc) return rc;
    rc = wl_apply(txn, i, err);
    if (rc == STRATA_OK) rc = unsynced ? strata_txn_commit_unsynced(txn, err) : strata_txn_commit(txn, err);
    strata_txn_free(txn);
    return rc;
}

__attribute__((unused)) static int wl_commit(strata_db_t *db, uint64_t i, strata_error *err) {
    strata_txn_t *txn;
    int rc = strata_txn_begin(db, STRATA_TXN_WRITE, &txn, err);
    if (rc) return rc;
    rc = wl_apply(txn, i, err);
    if (rc == STRATA_OK) rc = strata_txn_commit(txn, err);
    strata_txn_free(txn);
    return rc;
}

/* Verify the file, read the last commit L, and compare "data" with the model of 1..L.
 * Returns 0 when consistent; otherwise writes why. */
__attribute__((unused)) static int wl_check(strata_db_t *db, uint64_t *last, char *why, size_t whylen) {
    static uint8_t buf[WL_MAX_VALUE];
    strata_error e = {0};
    if (strata_db_verify(db, &e)) {
        snprintf(why, whylen, "verify: %.200s", e.message);
        return 1;
    }
    strata_txn_t *txn;
    if (strata_txn_begin(db, STRATA_TXN_READ, &txn, &e)) {
        snprintf(why, whylen, "begin: %.200s", e.message);
        return 1;
    }
    int bad = 0;
    strata_tree_t *data = NULL, *state;
    const void *v;
    size_t vlen;
    *last = 0;
    if (strata_tree_open(txn, "state", STRATA_KEY_INT, 0, &state, &e) == STRATA_OK) {
        if (strata_tree_get_int(state, 0, &v, &vlen, &e) || vlen != 8) {
            snprintf(why, whylen, "state tree has no last commit");
            bad = 1;
        } else {
            memcpy(last, v, 8);
        }
    }
    wl_entry *m = calloc(WL_KEYS, sizeof *m);
    for (uint64_t i = 1; !bad && i <= *last; i++) wl_model(m, i);
    if (!bad && *last > 0 && strata_tree_open(txn, "data", STRATA_KEY_INT, 0, &data, &e)) {
        snprintf(why, whylen, "no data tree after commit %llu", (unsigned long long)*last);
        bad = 1;
    }
    for (uint64_t k = 0; !bad && data && k < WL_KEYS; k++) {
        int rc = strata_tree_get_int(data, k, &v, &vlen, &e);
        if (rc != (m[k].present ? STRATA_OK : STRATA_ERR_NOT_FOUND)) {
            snprintf(why, whylen, "after commit %llu key %llu is %.150s", (unsigned long long)*last,
                     (unsigned long long)k, rc == STRATA_OK ? "present, expected absent" : e.message);
            bad = 1;
        } else if (rc == STRATA_OK) {
            wl_fill(buf, m[k].len, m[k].seed);
            if (vlen != m[k].len || memcmp(buf, v, vlen) != 0) {
                snprintf(why, whylen, "after commit %llu key %llu has the wrong value",
                         (unsigned long long)*last, (unsigned long long)k);
                bad = 1;
            }
        }
    }
    free(m);
    strata_txn_free(txn);
    return bad;
}

#endif
