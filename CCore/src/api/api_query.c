/*
 * api_query.c — the strata_query_* and strata_results_* entry points: argument checks around
 * query_parse.c and query_exec.c, and aggregates over results.
 */
#include "query/query.h"

#include <stdio.h>
#include <stdlib.h>

int strata_query_compile(strata_txn_t *txn, const char *table, const char *predicate,
                         strata_query_t **out, strata_error *err) {
    return strata_query_compile_mapped(txn, table, predicate, NULL, out, err);
}

int strata_query_compile_mapped(strata_txn_t *txn, const char *table, const char *predicate,
                                const strata_name_map_t *names, strata_query_t **out,
                                strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_compile: out is NULL");
    *out = NULL;
    int rc = st_txn_check(txn, false, err);
    if (rc) return rc;
    if (!table) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_compile: table is NULL");
    if (!predicate)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_compile: predicate is NULL");
    return st_query_parse(txn, table, predicate, names, out, err);
}

void strata_query_free(strata_query_t *query) { st_query_free(query); }

int strata_geo_check(const strata_geo *shape, strata_error *err) {
    if (!shape) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_geo_check: shape is NULL");
    st_geo *g;
    char why[200];
    if (st_geo_prepare(shape, &g, why, sizeof why))
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "Invalid region: %s", why);
    st_geo_free(g);
    return STRATA_OK;
}

size_t strata_query_arg_count(const strata_query_t *query) {
    return query ? (size_t)query->nargs : 0;
}

static int run_check(strata_query_t *q, const strata_value *args, size_t nargs, strata_error *err) {
    if (!q) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the query is NULL");
    if (nargs && !args) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "query: %zu arguments at NULL", nargs);
    if (nargs < (size_t)q->nargs)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "query on '%s' takes %d argument%s, %zu given",
                      q->table, q->nargs, q->nargs == 1 ? "" : "s", nargs);
    for (size_t i = 0; i < nargs; i++) {
        strata_error scratch;
        if (st_value_shape(&args[i], "query argument", &scratch) == STRATA_OK) continue;
        char what[48]; /* (named only when it is wrong: a query runs thousands of times) */
        snprintf(what, sizeof what, "query argument $%zu", i);
        return st_value_shape(&args[i], what, err);
    }
    return STRATA_OK;
}

int strata_query_run(strata_query_t *query, strata_txn_t *txn, const strata_value *args,
                     size_t nargs, strata_results_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_run: out is NULL");
    *out = NULL;
    int rc = run_check(query, args, nargs, err);
    return rc ? rc : st_query_run(query, txn, args, nargs, out, err);
}

int strata_query_matches(strata_query_t *query, strata_txn_t *txn, const strata_value *args,
                         size_t nargs, strata_key_t key, bool *matches, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!matches) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_matches: matches is NULL");
    int rc = run_check(query, args, nargs, err);
    return rc ? rc : st_query_matches(query, txn, args, nargs, key, matches, err);
}

int strata_query_position(strata_query_t *query, strata_txn_t *txn, const strata_key_t *keys,
                          size_t n, strata_key_t key, size_t *position, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!position) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_position: position is NULL");
    if (!keys && n) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_position: keys is NULL");
    if (!query) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the query is NULL");
    return st_query_position(query, txn, keys, n, key, position, err); /* no arguments: SORT takes none */
}

int strata_query_count(strata_query_t *query, strata_txn_t *txn, const strata_value *args,
                       size_t nargs, uint64_t *count, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!count) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_query_count: count is NULL");
    int rc = run_check(query, args, nargs, err);
    return rc ? rc : st_query_count(query, txn, args, nargs, count, err);
}

size_t strata_results_size(const strata_results_t *r) { return r ? r->n : 0; }

strata_key_t strata_results_key(const strata_results_t *r, size_t i) {
    return r && i < r->n ? r->keys[i] : -1;
}

void strata_results_free(strata_results_t *r) {
    if (!r) return;
    free(r->keys);
    free(r);
}

int strata_results_aggregate(const strata_results_t *r, strata_table_t *table, strata_col_t col,
                             strata_aggregate agg, strata_value *out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    int rc = st_table_check(table, false, err);
    if (rc) return rc;
    if (!r || !out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_results_aggregate: NULL argument");
    if (r->table_id != table->id)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "the results are not of table '%s'", table->name);
    st_prop *p = st_prop_find(table, col);
    if (!p) return st_err(err, STRATA_ERR_NOT_FOUND, "table '%s' has no property with id %u", table->name, col);
    bool numeric = p->type == STRATA_TYPE_INT || p->type == STRATA_TYPE_FLOAT || p->type == STRATA_TYPE_DOUBLE;
    if ((p->flags & STRATA_PROP_LIST) ||
        (agg != STRATA_AGG_COUNT && !numeric && !((agg == STRATA_AGG_MIN || agg == STRATA_AGG_MAX) &&
                                                   p->type == STRATA_TYPE_TIMESTAMP)))
        return st_err(err, STRATA_ERR_WRONG_TYPE, "cannot aggregate '%s.%s' (a %s%s) that way",
                      table->name, p->name, (p->flags & STRATA_PROP_LIST) ? "list of " : "",
                      strata_type_name(p->type));
    if (agg < STRATA_AGG_COUNT || agg > STRATA_AGG_AVG)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "unknown aggregate %d", (int)agg);
    uint64_t count = 0;
    int64_t isum = 0;
    double dsum = 0;
    strata_value best = {.type = STRATA_TYPE_NULL};
    for (size_t i = 0; i < r->n; i++) {
        st_objref ref;
        strata_value v;
        rc = st_obj_locate_for(table, r->keys[i], p, &ref, err);
        if (rc == STRATA_ERR_NOT_FOUND) continue; /* deleted since */
        if (rc || (rc = st_obj_read(table, &ref, p, &v, err))) return rc;
        if (v.type == STRATA_TYPE_NULL) continue;
        count++;
        if (v.type == STRATA_TYPE_INT) isum += v.u.i, dsum += (double)v.u.i;
        else if (v.type == STRATA_TYPE_FLOAT) dsum += v.u.f;
        else if (v.type == STRATA_TYPE_DOUBLE) dsum += v.u.d;
        if (agg == STRATA_AGG_MIN || agg == STRATA_AGG_MAX) {
            int c = 0;
            if (best.type != STRATA_TYPE_NULL) {
                if (v.type == STRATA_TYPE_TIMESTAMP) c = st_value_cmp(&v, &best);
                else {
                    double a = v.type == STRATA_TYPE_INT ? (double)v.u.i : v.type == STRATA_TYPE_FLOAT ? v.u.f : v.u.d;
                    double b = best.type == STRATA_TYPE_INT ? (double)best.u.i : best.type == STRATA_TYPE_FLOAT ? best.u.f : best.u.d;
                    c = v.type == STRATA_TYPE_INT && best.type == STRATA_TYPE_INT
                            ? (v.u.i > best.u.i) - (v.u.i < best.u.i) : (a > b) - (a < b);
                }
            }
            if (best.type == STRATA_TYPE_NULL || (agg == STRATA_AGG_MIN ? c < 0 : c > 0)) best = v;
        }
    }
    memset(out, 0, sizeof *out);
    switch (agg) {
    case STRATA_AGG_COUNT: out->type = STRATA_TYPE_INT; out->u.i = (int64_t)count; break;
    case STRATA_AGG_SUM:
        if (p->type == STRATA_TYPE_INT) out->type = STRATA_TYPE_INT, out->u.i = isum;
        else out->type = STRATA_TYPE_DOUBLE, out->u.d = dsum;
        break;
    case STRATA_AGG_AVG:
        if (count) out->type = STRATA_TYPE_DOUBLE, out->u.d = dsum / (double)count;
        else out->type = STRATA_TYPE_NULL;
        break;
    default: *out = best; break;
    }
    return STRATA_OK;
}
