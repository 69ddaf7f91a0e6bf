/*
 * api_changes.c — strata_changes_* and strata_list_changes_*: argument checks around objects/changes.c
 * and objects/list_changes.c.
 */
#include "objects/objects.h"

/* The checks both calls share: out set, no NULL, two live transactions of one database. */
static int check_pair(const char *fn, strata_txn_t *older, strata_txn_t *newer, const char *table,
                      const void *out, strata_error *err) {
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: out is NULL", fn);
    if (!older || !newer || !table) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "%s: NULL argument", fn);
    int rc;
    if ((rc = st_txn_check(older, false, err)) || (rc = st_txn_check(newer, false, err))) return rc;
    if (older->db != newer->db)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "%s: the two transactions are of different databases", fn);
    return STRATA_OK;
}

int strata_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table,
                       strata_changes_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (out) *out = NULL;
    int rc = check_pair("strata_changes_get", older, newer, table, out, err);
    return rc ? rc : st_changes_get(older, newer, table, out, err);
}

size_t strata_changes_count(const strata_changes_t *c, int kind) {
    if (!c || kind < STRATA_CHANGE_DELETED || kind > STRATA_CHANGE_MODIFIED) return 0;
    return st_changes_count(c, kind);
}

strata_key_t strata_changes_key(const strata_changes_t *c, int kind, size_t i) {
    if (i >= strata_changes_count(c, kind)) return -1;
    return st_changes_key(c, kind, i);
}

bool strata_changes_property_changed(const strata_changes_t *c, size_t i, strata_col_t col) {
    if (i >= strata_changes_count(c, STRATA_CHANGE_MODIFIED)) return false;
    return st_changes_changed(c, i, col);
}

uint64_t strata_changes_pages_read(const strata_changes_t *c) { return c ? st_changes_pages(c) : 0; }

void strata_changes_free(strata_changes_t *c) { st_changes_free(c); }

int strata_list_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table,
                            strata_key_t key, strata_col_t col, strata_list_changes_t **out,
                            strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (out) *out = NULL;
    int rc = check_pair("strata_list_changes_get", older, newer, table, out, err);
    return rc ? rc : st_list_changes_get(older, newer, table, key, col, out, err);
}

size_t strata_list_changes_count(const strata_list_changes_t *c, int kind) {
    if (!c || (kind != STRATA_CHANGE_DELETED && kind != STRATA_CHANGE_INSERTED)) return 0;
    return st_list_changes_count(c, kind);
}

size_t strata_list_changes_index(const strata_list_changes_t *c, int kind, size_t i) {
    if (i >= strata_list_changes_count(c, kind)) return SIZE_MAX;
    return st_list_changes_index(c, kind, i);
}

void strata_list_changes_free(strata_list_changes_t *c) { st_list_changes_free(c); }
