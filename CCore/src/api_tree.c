/*
 * api_tree.c — strata_tree_* and strata_cursor_*: argument checks around btree.c, and the
 * catalog of named trees (name → root page, entry count, key kind).
 *
 * Catalog record (24 bytes): u64 root page | u64 entry count | u8 key kind | u8 tree flags
 * (ST_TREE_*) | 6 bytes zero.
 *
 * Names starting with '$' are reserved for the object layer (objstore.h): strata_tree_open and
 * strata_tree_drop refuse them; the object layer uses st_internal_tree / st_internal_drop.
 */
#include "btree.h"
#include "internal.h"
#include "objstore.h"

#include <stdlib.h>

#define TREE_RECORD_SIZE 24

static int check_tree(strata_tree_t *tree, bool write, strata_error *err) {
    if (!tree) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the tree is NULL");
    int rc = st_txn_check(tree->txn, write, err);
    if (rc) return rc;
    if (tree->dropped)
        return st_err(err, STRATA_ERR_TXN_STATE, "tree '%s' was dropped", tree->name);
    if (tree->stale)
        return st_err(err, STRATA_ERR_TXN_STATE,
                      "tree '%s' was opened before the transaction was refreshed", tree->name);
    return STRATA_OK;
}

static int check_key(strata_tree_t *tree, const void *key, size_t klen, strata_error *err) {
    if (!key && klen)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tree '%s': key is NULL", tree->name);
    if (tree->st.kind == STRATA_KEY_INT && klen != 8)
        return st_err(err, STRATA_ERR_WRONG_TYPE,
                      "tree '%s' has integer keys (8 bytes); got a %zu-byte key", tree->name, klen);
    if (klen > STRATA_MAX_KEY)
        return st_err(err, STRATA_ERR_TOO_LARGE, "tree '%s': key of %zu bytes exceeds %u",
                      tree->name, klen, STRATA_MAX_KEY);
    return STRATA_OK;
}

static int parse_record(const strata_tree_t *t, const uint8_t *rec, size_t len,
                        st_tree_state *st, strata_error *err) {
    if (len != TREE_RECORD_SIZE || (rec[16] != STRATA_KEY_INT && rec[16] != STRATA_KEY_BYTES))
        return ST_CORRUPT(err, "catalog record of tree '%s' is malformed (%zu bytes, kind %u)",
                          t->name, len, len > 16 ? rec[16] : 0);
    st->root = st_rd64(rec);
    st->count = st_rd64(rec + 8);
    st->kind = rec[16];
    st->tflags = rec[17];
    if ((st->root == 0) != (st->count == 0))
        return ST_CORRUPT(err, "catalog record of tree '%s': root %llu with %llu entries",
                          t->name, (unsigned long long)st->root, (unsigned long long)st->count);
    return STRATA_OK;
}

static const char *kind_name(int kind) {
    return kind == STRATA_KEY_INT ? "integer" : "byte-string";
}

static int tree_open(strata_txn_t *txn, const char *name, strata_key_kind kind, unsigned flags,
                     strata_tree_t **out, bool internal, strata_error *err);

int strata_tree_open(strata_txn_t *txn, const char *name, strata_key_kind kind, unsigned flags,
                     strata_tree_t **out, strata_error *err) {
    return tree_open(txn, name, kind, flags, out, false, err);
}

int st_internal_tree(strata_txn_t *txn, const char *name, strata_key_kind kind, bool create,
                     strata_tree_t **out, strata_error *err) {
    return tree_open(txn, name, kind, create ? STRATA_TREE_CREATE : 0, out, true, err);
}

static int tree_open(strata_txn_t *txn, const char *name, strata_key_kind kind, unsigned flags,
                     strata_tree_t **out, bool internal, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_tree_open: out is NULL");
    *out = NULL;
    int rc = st_txn_check(txn, false, err);
    if (rc) return rc;
    if (!name || !*name)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_tree_open: empty tree name");
    size_t nlen = strlen(name);
    if (name[0] == '$' && !internal)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "tree name '%s': names starting with '$' are reserved for objects", name);
    if (nlen > STRATA_MAX_TREE_NAME)
        return st_err(err, STRATA_ERR_TOO_LARGE, "tree name of %zu bytes exceeds %u", nlen,
                      STRATA_MAX_TREE_NAME);
    if (kind != STRATA_KEY_INT && kind != STRATA_KEY_BYTES)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tree '%s': unknown key kind %d", name,
                      (int)kind);
    if (flags & ~(unsigned)STRATA_TREE_CREATE)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tree '%s': unknown flags 0x%x", name,
                      flags);
    strata_tree_t *t = txn->trees;
    while (t && (t->stale || t->name_len != nlen || memcmp(t->name, name, nlen) != 0)) t = t->next;
    if (t && !t->dropped) {
        if (t->st.kind != kind)
            return st_err(err, STRATA_ERR_WRONG_TYPE, "tree '%s' has %s keys, not %s keys", name,
                          kind_name(t->st.kind), kind_name(kind));
        *out = t;
        return STRATA_OK;
    }
    st_tree_state st = {0, 0, (uint8_t)kind, 0};
    bool exists = false;
    if (!t) {
        const uint8_t *rec;
        size_t rlen;
        rc = st_bt_get(txn, &txn->catalog.st, (const uint8_t *)name, nlen, &rec, &rlen, err);
        if (rc && rc != STRATA_ERR_NOT_FOUND) return rc;
        if (rc == STRATA_OK) {
            exists = true;
            strata_tree_t tmp = {.name_len = nlen};
            memcpy(tmp.name, name, nlen + 1);
            if ((rc = parse_record(&tmp, rec, rlen, &st, err))) return rc;
            if (st.kind != kind)
                return st_err(err, STRATA_ERR_WRONG_TYPE, "tree '%s' has %s keys, not %s keys",
                              name, kind_name(st.kind), kind_name(kind));
        }
    }
    if (!exists) {
        if (!(flags & STRATA_TREE_CREATE))
            return st_err(err, STRATA_ERR_NOT_FOUND, "no tree named '%s'", name);
        if (!txn->write)
            return st_err(err, STRATA_ERR_READ_ONLY,
                          "cannot create tree '%s' in a read transaction", name);
    }
    if (!t) {
        t = calloc(1, sizeof *t);
        if (!t) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        t->txn = txn;
        memcpy(t->name, name, nlen + 1);
        t->name_len = nlen;
        t->next = txn->trees;
        txn->trees = t;
    }
    t->st = st;
    t->dropped = false;
    t->dirty = !exists; /* a new tree gets its catalog record at commit */
    t->mod_count++;
    *out = t;
    return STRATA_OK;
}

int strata_tree_drop(strata_txn_t *txn, const char *name, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = st_txn_check(txn, true, err);
    if (rc) return rc;
    strata_tree_t *t = NULL;
    /* Open with either key kind: dropping does not care. */
    rc = strata_tree_open(txn, name, STRATA_KEY_BYTES, 0, &t, err);
    if (rc == STRATA_ERR_WRONG_TYPE) rc = strata_tree_open(txn, name, STRATA_KEY_INT, 0, &t, err);
    if (rc) return rc;
    return st_internal_drop(txn, t, err);
}

int st_internal_drop(strata_txn_t *txn, strata_tree_t *t, strata_error *err) {
    int rc;
    if ((rc = st_bt_drop(txn, &t->st, err))) return rc;
    rc = st_bt_delete(txn, &txn->catalog.st, (const uint8_t *)t->name, t->name_len, err);
    if (rc == STRATA_ERR_NOT_FOUND) rc = STRATA_OK; /* created in this transaction */
    if (rc) return st_txn_fail(txn, rc);
    t->dropped = true;
    t->dirty = false;
    t->mod_count++;
    return STRATA_OK;
}

int st_tree_put(strata_tree_t *t, const uint8_t *key, size_t klen, const uint8_t *val, size_t vlen,
                strata_error *err) {
    return st_tree_put_near(t, NULL, key, klen, val, vlen, err);
}

int st_tree_del(strata_tree_t *t, const uint8_t *key, size_t klen, strata_error *err) {
    return st_tree_del_near(t, NULL, key, klen, err);
}

/* A finger (f may be NULL) is forgotten when the tree changed by other calls since its last. */
int st_tree_put_near(strata_tree_t *t, st_bt_finger *f, const uint8_t *key, size_t klen,
                     const uint8_t *val, size_t vlen, strata_error *err) {
    if (f && f->mod != t->mod_count) f->root = 0;
    t->mod_count++;
    t->dirty = true;
    int rc = st_bt_put_near(t->txn, &t->st, f, key, klen, val, vlen, err);
    if (f) f->mod = t->mod_count;
    return rc;
}

int st_tree_del_near(strata_tree_t *t, st_bt_finger *f, const uint8_t *key, size_t klen,
                     strata_error *err) {
    if (f && f->mod != t->mod_count) f->root = 0;
    int rc = st_bt_delete_near(t->txn, &t->st, f, key, klen, err);
    if (rc != STRATA_ERR_NOT_FOUND) {
        t->mod_count++;
        t->dirty = true;
    }
    if (f) f->mod = t->mod_count;
    return rc;
}

int strata_tree_put(strata_tree_t *tree, const void *key, size_t key_len, const void *value,
                    size_t value_len, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = check_tree(tree, true, err);
    if (rc || (rc = check_key(tree, key, key_len, err))) return rc;
    if (!value && value_len)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tree '%s': value is NULL", tree->name);
    if (value_len > STRATA_MAX_VALUE)
        return st_err(err, STRATA_ERR_TOO_LARGE, "tree '%s': value of %zu bytes exceeds %u",
                      tree->name, value_len, STRATA_MAX_VALUE);
    return st_tree_put(tree, key, key_len, value, value_len, err);
}

int strata_tree_get(strata_tree_t *tree, const void *key, size_t key_len, const void **value,
                    size_t *value_len, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = check_tree(tree, false, err);
    if (rc || (rc = check_key(tree, key, key_len, err))) return rc;
    if (!value || !value_len)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tree '%s': NULL output", tree->name);
    const uint8_t *v;
    rc = st_bt_get(tree->txn, &tree->st, key, key_len, &v, value_len, err);
    if (rc == STRATA_ERR_NOT_FOUND)
        return st_err(err, rc, "tree '%s': no such key", tree->name);
    if (rc == STRATA_OK) *value = v;
    return rc;
}

int strata_tree_delete(strata_tree_t *tree, const void *key, size_t key_len, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = check_tree(tree, true, err);
    if (rc || (rc = check_key(tree, key, key_len, err))) return rc;
    rc = st_tree_del(tree, key, key_len, err);
    if (rc == STRATA_ERR_NOT_FOUND) return st_err(err, rc, "tree '%s': no such key", tree->name);
    return rc;
}

int strata_tree_count(strata_tree_t *tree, uint64_t *count, strata_error *err) {
    int rc = check_tree(tree, false, err);
    if (rc) return rc;
    if (!count) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_tree_count: count is NULL");
    *count = tree->st.count;
    return STRATA_OK;
}

int strata_tree_put_int(strata_tree_t *tree, uint64_t key, const void *value, size_t value_len,
                        strata_error *err) {
    return strata_tree_put(tree, &key, sizeof key, value, value_len, err);
}

int strata_tree_get_int(strata_tree_t *tree, uint64_t key, const void **value, size_t *value_len,
                        strata_error *err) {
    return strata_tree_get(tree, &key, sizeof key, value, value_len, err);
}

int strata_tree_delete_int(strata_tree_t *tree, uint64_t key, strata_error *err) {
    return strata_tree_delete(tree, &key, sizeof key, err);
}

/* ------------------------------------------------------------------ cursors */

int strata_cursor_open(strata_tree_t *tree, strata_cursor_t **out, strata_error *err) {
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_cursor_open: out is NULL");
    *out = NULL;
    int rc = check_tree(tree, false, err);
    if (rc) return rc;
    strata_cursor_t *c = calloc(1, sizeof *c);
    if (!c) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    c->tree = tree;
    c->next = tree->txn->cursors;
    tree->txn->cursors = c;
    *out = c;
    return STRATA_OK;
}

void strata_cursor_close(strata_cursor_t *cursor) {
    if (!cursor) return;
    strata_cursor_t **pp = &cursor->tree->txn->cursors;
    while (*pp && *pp != cursor) pp = &(*pp)->next;
    if (*pp) *pp = cursor->next;
    free(cursor);
}

static int check_cursor(strata_cursor_t *c, strata_error *err) {
    if (!c) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the cursor is NULL");
    return check_tree(c->tree, false, err);
}

static int at_end(strata_cursor_t *c, int rc, strata_error *err) {
    if (rc == STRATA_ERR_NOT_FOUND && err->code != STRATA_ERR_NOT_FOUND)
        st_err(err, rc, "tree '%s': no entry there", c->tree->name);
    return rc;
}

#define CURSOR_CALL(c, err, call)                     \
    do {                                              \
        strata_error local_ = {0};                    \
        if (!(err)) (err) = &local_;                  \
        (err)->code = 0;                              \
        int rc_ = check_cursor((c), (err));           \
        if (rc_) return rc_;                          \
        return at_end((c), (call), (err));            \
    } while (0)

int strata_cursor_first(strata_cursor_t *cursor, strata_error *err) {
    CURSOR_CALL(cursor, err, st_cur_first(cursor, err));
}

int strata_cursor_last(strata_cursor_t *cursor, strata_error *err) {
    CURSOR_CALL(cursor, err, st_cur_last(cursor, err));
}

int strata_cursor_next(strata_cursor_t *cursor, strata_error *err) {
    CURSOR_CALL(cursor, err, st_cur_next(cursor, err));
}

int strata_cursor_prev(strata_cursor_t *cursor, strata_error *err) {
    CURSOR_CALL(cursor, err, st_cur_prev(cursor, err));
}

int strata_cursor_seek(strata_cursor_t *cursor, const void *key, size_t key_len,
                       strata_error *err) {
    strata_error local = {0};
    if (!err) err = &local;
    err->code = 0;
    int rc = check_cursor(cursor, err);
    if (rc || (rc = check_key(cursor->tree, key, key_len, err))) return rc;
    return at_end(cursor, st_cur_seek(cursor, key, key_len, err), err);
}

int strata_cursor_get(strata_cursor_t *cursor, const void **key, size_t *key_len,
                      const void **value, size_t *value_len, strata_error *err) {
    strata_error local = {0};
    if (!err) err = &local;
    int rc = check_cursor(cursor, err);
    if (rc) return rc;
    return st_cur_get(cursor, (const uint8_t **)key, key_len, (const uint8_t **)value, value_len,
                      err);
}
