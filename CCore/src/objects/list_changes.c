/*
 * list_changes.c — which elements of one list changed between two versions: the indices
 * deleted from the older list and inserted into the newer one, every other element being in
 * both in the same order (a moved element counts as deleted and inserted).
 *
 * The common prefix and suffix are skipped (a list untouched costs one pass over it) and the
 * middle is compared with Myers' O((N+M)·D) diff (values
 * compared as st_value_same does: links by key, strings by bytes); past MAX_EDITS edits the
 * middle is reported deleted and inserted whole (a small script stays exact; a reshuffle of a
 * long list costs O(N), not O(N²)).
 */
#include "objects/private.h"

#include <stdlib.h>

#define MAX_EDITS 512

struct strata_list_changes {
    size_t *idx[2]; /* STRATA_CHANGE_DELETED, STRATA_CHANGE_INSERTED */
    size_t n[2], cap[2];
};

static int add(strata_list_changes_t *c, int kind, size_t i) {
    if (c->n[kind] == c->cap[kind]) {
        size_t cap = c->cap[kind] ? c->cap[kind] * 2 : 16;
        size_t *v = realloc(c->idx[kind], cap * sizeof *v);
        if (!v) return STRATA_ERR_NO_MEMORY;
        c->idx[kind] = v;
        c->cap[kind] = cap;
    }
    c->idx[kind][c->n[kind]++] = i;
    return STRATA_OK;
}

/* The list of (key, col) in txn's version (empty when there is no such object). */
static int load(strata_txn_t *txn, const char *table, int64_t key, uint32_t col, strata_value **v,
                size_t *n, strata_error *err) {
    strata_table_t *t;
    *v = NULL;
    *n = 0;
    int rc = st_table_open(txn, table, &t, err);
    if (rc) return rc;
    const st_prop *p = st_prop_find(t, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property %u", table, col);
    if (!(p->flags & STRATA_PROP_LIST))
        return st_err(err, STRATA_ERR_WRONG_TYPE, "'%s.%s' is not a list", table, p->name);
    st_objref ref;
    strata_value idv;
    rc = st_obj_locate(t, key, &ref, err);
    if (rc == STRATA_ERR_NOT_FOUND) return STRATA_OK;
    if (rc || (rc = st_obj_read(t, &ref, p, &idv, err))) return rc;
    return st_list_load(t, p, (uint64_t)idv.u.i, v, n, err);
}

/* Myers' diff of a[0, n) and b[0, m): the edit script's deletions and insertions, offset by
 * `at` in each list. STRATA_ERR_TOO_LARGE (nothing added) past MAX_EDITS edits. */
static int myers(const strata_value *a, size_t n, const strata_value *b, size_t m, size_t at,
                 strata_list_changes_t *c) {
    size_t max = n + m < MAX_EDITS ? n + m : MAX_EDITS;
    /* trace[d] holds V (furthest x on each diagonal k in [-d, d]) after step d */
    long *trace = malloc((max + 1) * (2 * max + 3) * sizeof *trace);
    if (!trace) return STRATA_ERR_NO_MEMORY;
    long width = 2 * (long)max + 3, off = (long)max + 1;
    long *v = calloc((size_t)width, sizeof *v);
    if (!v) {
        free(trace);
        return STRATA_ERR_NO_MEMORY;
    }
    long found = -1;
    for (long d = 0; d <= (long)max && found < 0; d++) {
        for (long k = -d; k <= d; k += 2) {
            long x = (k == -d || (k != d && v[off + k - 1] < v[off + k + 1])) ? v[off + k + 1]
                                                                               : v[off + k - 1] + 1;
            long y = x - k;
            while (x < (long)n && y < (long)m && st_value_same(&a[x], &b[y])) x++, y++;
            v[off + k] = x;
            if (x >= (long)n && y >= (long)m) {
                found = d;
                break;
            }
        }
        memcpy(trace + d * width, v, (size_t)width * sizeof *v);
    }
    free(v);
    if (found < 0) {
        free(trace);
        return STRATA_ERR_TOO_LARGE;
    }
    /* walk back from (n, m): each step d came from diagonal k±1 of step d-1 */
    size_t *del = malloc((found + 1) * sizeof *del), *ins = malloc((found + 1) * sizeof *ins);
    size_t nd = 0, ni = 0;
    int rc = del && ins ? STRATA_OK : STRATA_ERR_NO_MEMORY;
    long x = (long)n, y = (long)m;
    for (long d = found; rc == STRATA_OK && d > 0; d--) {
        const long *pv = trace + (d - 1) * width;
        long k = x - y;
        long pk = (k == -d || (k != d && pv[off + k - 1] < pv[off + k + 1])) ? k + 1 : k - 1;
        long px = pv[off + pk], py = px - pk;
        if (pk == k + 1) ins[ni++] = (size_t)py; /* down: b[py] inserted */
        else del[nd++] = (size_t)px;             /* right: a[px] deleted */
        x = px;
        y = py;
    }
    for (size_t i = nd; rc == STRATA_OK && i-- > 0;) rc = add(c, STRATA_CHANGE_DELETED, at + del[i]);
    for (size_t i = ni; rc == STRATA_OK && i-- > 0;) rc = add(c, STRATA_CHANGE_INSERTED, at + ins[i]);
    free(del);
    free(ins);
    free(trace);
    return rc;
}

int st_list_changes_get(strata_txn_t *older, strata_txn_t *newer, const char *table, int64_t key,
                        uint32_t col, strata_list_changes_t **out, strata_error *err) {
    *out = NULL;
    strata_list_changes_t *c = calloc(1, sizeof *c);
    if (!c) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory comparing a list of '%s'", table);
    strata_value *a = NULL, *b = NULL;
    size_t n, m;
    int rc = load(older, table, key, col, &a, &n, err);
    if (rc == STRATA_OK) rc = load(newer, table, key, col, &b, &m, err);
    if (rc) goto out;
    size_t pre = 0, suf = 0;
    while (pre < n && pre < m && st_value_same(&a[pre], &b[pre])) pre++;
    while (suf < n - pre && suf < m - pre && st_value_same(&a[n - 1 - suf], &b[m - 1 - suf])) suf++;
    rc = myers(a + pre, n - pre - suf, b + pre, m - pre - suf, pre, c);
    if (rc == STRATA_ERR_TOO_LARGE) {
        rc = STRATA_OK;
        for (size_t i = pre; rc == STRATA_OK && i < n - suf; i++) rc = add(c, STRATA_CHANGE_DELETED, i);
        for (size_t i = pre; rc == STRATA_OK && i < m - suf; i++) rc = add(c, STRATA_CHANGE_INSERTED, i);
    }
    if (rc == STRATA_ERR_NO_MEMORY)
        rc = st_err(err, rc, "out of memory comparing a list of '%s'", table);
out:
    free(a);
    free(b);
    if (rc) {
        st_list_changes_free(c);
        return rc;
    }
    *out = c;
    return STRATA_OK;
}

size_t st_list_changes_count(const strata_list_changes_t *c, int kind) { return c->n[kind]; }

size_t st_list_changes_index(const strata_list_changes_t *c, int kind, size_t i) {
    return c->idx[kind][i];
}

void st_list_changes_free(strata_list_changes_t *c) {
    if (!c) return;
    free(c->idx[0]);
    free(c->idx[1]);
    free(c);
}
