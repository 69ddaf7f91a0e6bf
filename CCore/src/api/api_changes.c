/*
 * api_changes.c — strata_changes_*: argument checks around objects/changes.c.
 */
#include "objects/objects.h"

int strata_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table,
                       strata_changes_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_changes_get: out is NULL");
    *out = NULL;
    if (!older || !newer || !table)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_changes_get: NULL argument");
    int rc;
    if ((rc = st_txn_check(older, false, err)) || (rc = st_txn_check(newer, false, err))) return rc;
    if (older->db != newer->db)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "strata_changes_get: the two transactions are of different databases");
    return st_changes_get(older, newer, table, out, err);
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
