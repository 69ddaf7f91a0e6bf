/*
 * api_tree.c — strata_tree_* and strata_cursor_*: argument checks and error reporting around
 * the btree layer's named trees (btree/tree.c) and iterators (btree/btree.c).
 *
 * Names starting with '$' are reserved for the object layer: strata_tree_open and
 * strata_tree_drop refuse them.
 */
#include "btree/btree.h"

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

int strata_tree_open(strata_txn_t *txn, const char *name, strata_key_kind kind, unsigned flags,
                     strata_tree_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_tree_open: out is NULL");
    *out = NULL;
    int rc = st_txn_check(txn, false, err);
    if (rc) return rc;
    if (flags & ~(unsigned)STRATA_TREE_CREATE)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "tree '%s': unknown flags 0x%x",
                      name ? name : "", flags);
    return st_tree_open(txn, name, kind, flags & STRATA_TREE_CREATE, false, out, err);
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
    return st_tree_drop(txn, t, err);
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

/* The _int calls take integer-key trees only (a byte-key tree would take the 8 bytes as a key). */
static int check_int_tree(strata_tree_t *tree, const char *call, strata_error *err) {
    if (tree && tree->st.kind != STRATA_KEY_INT)
        return st_err(err, STRATA_ERR_WRONG_TYPE, "%s: tree '%s' has byte-string keys, not integers",
                      call, tree->name);
    return STRATA_OK;
}

int strata_tree_put_int(strata_tree_t *tree, uint64_t key, const void *value, size_t value_len,
                        strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = check_int_tree(tree, "strata_tree_put_int", err);
    return rc ? rc : strata_tree_put(tree, &key, sizeof key, value, value_len, err);
}

int strata_tree_get_int(strata_tree_t *tree, uint64_t key, const void **value, size_t *value_len,
                        strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = check_int_tree(tree, "strata_tree_get_int", err);
    return rc ? rc : strata_tree_get(tree, &key, sizeof key, value, value_len, err);
}

int strata_tree_delete_int(strata_tree_t *tree, uint64_t key, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = check_int_tree(tree, "strata_tree_delete_int", err);
    return rc ? rc : strata_tree_delete(tree, &key, sizeof key, err);
}

/* ------------------------------------------------------------------ cursors */

int strata_cursor_open(strata_tree_t *tree, strata_cursor_t **out, strata_error *err) {
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_cursor_open: out is NULL");
    *out = NULL;
    int rc = check_tree(tree, false, err);
    if (rc) return rc;
    return st_cursor_new(tree, out, err);
}

void strata_cursor_close(strata_cursor_t *cursor) {
    if (cursor) st_cursor_free(cursor);
}

static int check_cursor(strata_cursor_t *c, strata_error *err) {
    if (!c) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the cursor is NULL");
    return check_tree(c->it.tree, false, err);
}

static int at_end(strata_cursor_t *c, int rc, strata_error *err) {
    if (rc == STRATA_ERR_NOT_FOUND && err->code != STRATA_ERR_NOT_FOUND)
        st_err(err, rc, "tree '%s': no entry there", c->it.tree->name);
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
    CURSOR_CALL(cursor, err, st_iter_first(&cursor->it, err));
}

int strata_cursor_last(strata_cursor_t *cursor, strata_error *err) {
    CURSOR_CALL(cursor, err, st_iter_last(&cursor->it, err));
}

int strata_cursor_next(strata_cursor_t *cursor, strata_error *err) {
    CURSOR_CALL(cursor, err, st_iter_next(&cursor->it, err));
}

int strata_cursor_prev(strata_cursor_t *cursor, strata_error *err) {
    CURSOR_CALL(cursor, err, st_iter_prev(&cursor->it, err));
}

int strata_cursor_seek(strata_cursor_t *cursor, const void *key, size_t key_len,
                       strata_error *err) {
    strata_error local = {0};
    if (!err) err = &local;
    err->code = 0;
    int rc = check_cursor(cursor, err);
    if (rc || (rc = check_key(cursor->it.tree, key, key_len, err))) return rc;
    return at_end(cursor, st_iter_seek(&cursor->it, key, key_len, err), err);
}

int strata_cursor_get(strata_cursor_t *cursor, const void **key, size_t *key_len,
                      const void **value, size_t *value_len, strata_error *err) {
    strata_error local = {0};
    if (!err) err = &local;
    int rc = check_cursor(cursor, err);
    if (rc) return rc;
    return st_iter_get(&cursor->it, (const uint8_t **)key, key_len, (const uint8_t **)value, value_len,
                      err);
}
