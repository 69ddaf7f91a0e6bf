/*
 * query_exec.c — running a compiled query on one snapshot.
 *
 * Binding: 8 or more of one plain property's == terms under OR (!= under AND) fold into one
 * IN term (NOT IN) whose constants are sorted, as are IN's when 8 or more (fold_terms, sort_set):
 * a value is looked up, not compared with each.
 *
 * Plan:
 *  1. If the predicate is (or is ANDed with) a comparison on an indexed property — ==, IN,
 *     BEGINSWITH without [c]/[d], or a range (an equality preferred; a range's bound on the
 *     other side ANDed with it, `p > a AND p < b`, narrows the walk: other_bound) — the index
 *     gives the candidates and the whole
 *     predicate is checked on them as step 2 checks a cluster, on a mask of the candidates'
 *     rows (eval_candidates; a candidate alone in its cluster is checked on its object).
 *     TEXT on a property with a full-text index does the same
 *     (fulltext.c). When the index's answer is exact (an equality or IN: the objects holding
 *     one of the values; TEXT when the index answers it) that term is not checked again, and
 *     when it is the whole predicate the candidates are the answer.
 *  2. Otherwise the clusters are scanned in key order, the cluster tree walked leaf by leaf
 *     (st_bt_each); each cluster is evaluated 8 clusters behind the walk, which asks memory
 *     for the leaves its packed comparisons read meanwhile (scan_all). Each cluster is
 *     evaluated node by node on a mask of its rows (rowmask.h):
 *     AND evaluates its right side only on the rows its left side kept, OR only on the rows it
 *     did not, so either side can end a cluster early. A comparison of a packed integer/bool
 *     property with constants runs on the leaf's stored numbers (st_leaf_compare: whole words
 *     of bits, 16 rows a vector instruction for 8-bit values), unpacking only the widths and
 *     forms it does not take; a float or double property's comparison with numbers runs on
 *     the leaf's values too (cmp_real); a string or binary property's comparison with
 *     constants reads the rows' elements in the leaf, once per cluster for all the terms on
 *     the property, folded once under [c]/[d] (cmp_str); anything else (paths through links,
 *     lists and backlinks, aggregates, SUBQUERY) reads the row's values; a comparison of two
 *     key paths reads the right side's values for the row first and matches the left against
 *     any of them (cmp_paths). Counting needs neither keys nor a result array: a population count of
 *     each cluster's mask.
 *  3. SORT (stable; nulls first ascending; strings in code-point order; by an indexed property
 *     with LIMIT, a walk of the index in order), DISTINCT (first of each
 *     group, in order), LIMIT.
 * GEOWITHIN (and IN a region argument) reads the embedded object a link names — its `type` and
 * `coordinates` — and asks geo.c whether the point is in the region, which is checked and
 * prepared once when the query is bound; the index never serves it.
 * Null semantics: == null / != null test nullness; ordering comparisons with null are false.
 * NaN equals NaN and orders below every number.
 * A to-one link that is null yields null for the rest of its path; an empty list yields nothing
 * (ANY false, ALL true, NONE true).
 */
#include "query/query.h"

#include <stddef.h>
#include <stdlib.h>

/* ------------------------------------------------------------------ bound nodes */

typedef struct rnode {
    const q_node *q;
    struct rnode *a;         /* NOT */
    struct rnode **kids;     /* AND/OR: the bound terms (fewer than q's when some were folded) */
    int nkids;
    q_node *own_q;           /* a node made when binding (folded terms: IN, or NOT over it) */
    bool sorted;             /* IN: vals are sorted and all of the property's type (bsearch) */
    strata_value *vals;      /* the right side: 1 value, or the IN/BETWEEN list */
    int nvals;
    st_text *folded;         /* string right sides under [c]/[d] or LIKE: folded code points */
    bool fast;               /* packed integer comparison on the root table's column */
    bool fast_real;          /* a float or double column compared with numbers, column-wise */
    bool fast_str;           /* a string or binary column compared with constants, column-wise */
    strata_table_t *fast_t;  /* fast: the step's table and property, found when bound */
    st_prop *fast_p;
    struct rnode *sub;       /* SUBQUERY: the bound inner predicate */
    struct rnode *rsub;      /* a SUBQUERY on the right side */
    bool any_val;            /* a property on the right: vals are its values for one object,
                                and a left value matches when it matches any of them */
    st_geo *geo;             /* GEOWITHIN (or IN a region): the region, and the embedded table of */
    strata_table_t *geo_t;   /* points the path links to, with its `type` and `coordinates` */
    st_prop *geo_type, *geo_coords;
    st_fts *fts;             /* TEXT: the compiled terms (fulltext.c) */
} rnode;

typedef struct exec {
    strata_txn_t *txn;
    st_store *store;
    strata_table_t *root;
    strata_error *err;
    int rc;
    const strata_value *args;  /* the run's arguments (a map key given as $n) */
    size_t nargs;
    const rnode *decided;      /* a comparison the index answered exactly: true for every
                                  candidate (find_matches) */
    int64_t ints[ST_CLUSTER_MAX];
} exec;

static void rnode_free(rnode *r) {
    if (!r) return;
    rnode_free(r->a);
    for (int i = 0; r->kids && i < r->nkids; i++) rnode_free(r->kids[i]);
    free(r->kids);
    rnode_free(r->sub);
    rnode_free(r->rsub);
    if (r->folded) {
        for (int i = 0; i < r->nvals; i++) st_text_free(&r->folded[i]);
        free(r->folded);
    }
    free(r->vals);
    free(r->own_q);
    st_geo_free(r->geo);
    st_fts_free(r->fts);
    free(r);
}


/* The property a path step names, checked against the schema of this snapshot. */
static int step_prop(exec *x, const q_step *s, strata_table_t **t, st_prop **p) {
    *t = st_table_by_id(x->store, s->table);
    *p = *t ? st_prop_find(*t, s->col) : NULL;
    if (!*p || (*p)->type != s->type ||
        (((*p)->flags ^ s->flags) & (STRATA_PROP_LIST | STRATA_PROP_MAP)))
        return x->rc = st_err(x->err, STRATA_ERR_NOT_FOUND,
                              "query: a property it uses was removed or changed type since it "
                              "was compiled");
    return STRATA_OK;
}

static int bind_value(exec *x, const q_expr *e, const strata_value *args, size_t nargs,
                      strata_value *out) {
    if (e->kind == QE_CONST) {
        *out = e->value;
        return STRATA_OK;
    }
    if ((size_t)e->arg >= nargs)
        return x->rc = st_err(x->err, STRATA_ERR_INVALID_ARGUMENT,
                              "query: argument $%d is missing (%zu given)", e->arg, nargs);
    *out = args[e->arg];
    if (out->type == STRATA_TYPE_BOOL) out->u.b = st_bool_of(&args[e->arg]);
    return STRATA_OK;
}



/* GEOWITHIN $n: the path ends in a link to an embedded class of points (`type` "Point",
 * `coordinates` [longitude, latitude, ...]), and $n is a region, checked and prepared here. */
static int bind_geo(exec *x, const q_node *q, const strata_value *args, size_t nargs, rnode *r) {
    strata_value v = {.type = STRATA_TYPE_NULL};
    if (bind_value(x, &q->rhs, args, nargs, &v)) return x->rc;
    if (v.type != STRATA_TYPE_GEO || !v.u.geo.shape)
        return x->rc = st_err(x->err, STRATA_ERR_WRONG_TYPE,
                              "query: GEOWITHIN $%d needs a region (a geo argument), not a %s",
                              q->rhs.arg, st_type_name(v.type));
    const q_step *last = &q->lhs.steps[q->lhs.nsteps - 1];
    strata_table_t *t;
    st_prop *p;
    if (q->lhs.kind != QE_PATH || q->lhs.agg != QA_NONE || step_prop(x, last, &t, &p) ||
        p->type != STRATA_TYPE_LINK)
        return x->rc = x->rc ? x->rc : st_err(x->err, STRATA_ERR_WRONG_TYPE,
                                              "query: GEOWITHIN needs a link to an embedded object "
                                              "holding a point");
    strata_table_t *target = st_table_by_id(x->store, p->target);
    if (!st_table_embedded(target))
        return x->rc = st_err(x->err, STRATA_ERR_WRONG_TYPE,
                              "A GEOWITHIN query can only operate on a link to an embedded class "
                              "but '%s' is at the top level", target ? target->name : "?");
    for (uint32_t i = 0; i < target->nprops; i++) {
        st_prop *tp = &target->props[i];
        if (strcmp(tp->name, "type") == 0 && tp->type == STRATA_TYPE_STRING && !(tp->flags & STRATA_PROP_LIST))
            r->geo_type = tp;
        if (strcmp(tp->name, "coordinates") == 0 && tp->type == STRATA_TYPE_DOUBLE &&
            (tp->flags & (STRATA_PROP_LIST | STRATA_PROP_SET | STRATA_PROP_MAP)) == STRATA_PROP_LIST)
            r->geo_coords = tp;
    }
    if (!r->geo_type || !r->geo_coords)
        return x->rc = st_err(x->err, STRATA_ERR_WRONG_TYPE,
                              "Query '%s GEOWITHIN ...' links to data in the wrong format for a "
                              "geoWithin query: '%s' needs 'type' (a string) and 'coordinates' (a "
                              "list of doubles)", p->name, target->name);
    r->geo_t = target;
    char why[200];
    if (st_geo_prepare(v.u.geo.shape, &r->geo, why, sizeof why))
        return x->rc = q->rhs.kind == QE_ARG
            ? st_err(x->err, STRATA_ERR_INVALID_ARGUMENT, "Invalid region in GEOWITHIN query for parameter $%d: %s", q->rhs.arg, why)
            : st_err(x->err, STRATA_ERR_INVALID_ARGUMENT, "Invalid region in GEOWITHIN query (column %d): %s", q->rhs.column, why);
    return STRATA_OK;
}

/* TEXT: the terms, compiled once per run. */
static int bind_text(exec *x, const q_node *q, const strata_value *args, size_t nargs, rnode *r) {
    strata_value v;
    if (bind_value(x, &q->rhs, args, nargs, &v)) return x->rc;
    if (v.type != STRATA_TYPE_STRING)
        return x->rc = st_err(x->err, STRATA_ERR_WRONG_TYPE, "query: TEXT $%d needs a string, not a %s",
                              q->rhs.arg, st_type_name(v.type));
    char why[160];
    int rc = st_fts_compile(v.u.bytes.data, v.u.bytes.len, &r->fts, why, sizeof why);
    if (rc == STRATA_ERR_NO_MEMORY) return x->rc = st_err(x->err, rc, "out of memory");
    if (rc)
        return x->rc = st_err(x->err, rc, "query: TEXT '%.*s': %s", (int)(v.u.bytes.len > 100 ? 100 : v.u.bytes.len),
                              (const char *)v.u.bytes.data, why);
    return STRATA_OK;
}

/* ------------------------------------------------------------------ sets of constants */

/* The type an IN set of a property of type t is sorted in (NULL: none): strings by bytes,
 * integers by value. */
static strata_type set_type(strata_type t) {
    return t == STRATA_TYPE_STRING || t == STRATA_TYPE_INT ? t : STRATA_TYPE_NULL;
}

static int cmp_set_value(const void *a, const void *b) {
    return st_value_cmp((const strata_value *)a, (const strata_value *)b);
}

/* IN with many constants, all of a plain string or integer property's type: sorted, so that a
 * value is looked up (bsearch) rather than compared with each. */
static void sort_set(rnode *r) {
    const q_node *q = r->q;
    enum { SET_MIN = 8 };
    if (r->nvals < SET_MIN || r->folded || r->any_val || q->flags || q->reversed ||
        q->lhs.kind != QE_PATH || q->lhs.agg != QA_NONE)
        return;
    strata_type t = set_type(q_expr_type(&q->lhs));
    if (t == STRATA_TYPE_NULL) return;
    for (int i = 0; i < r->nvals; i++)
        if (r->vals[i].type != t) return;
    qsort(r->vals, (size_t)r->nvals, sizeof *r->vals, cmp_set_value);
    r->sorted = true;
}

static bool in_set(const rnode *r, const strata_value *v) {
    return v->type == r->vals[0].type &&
           bsearch(v, r->vals, (size_t)r->nvals, sizeof *r->vals, cmp_set_value) != NULL;
}

/* A term that folds into a set: prop == constant (OR) or prop != constant (AND) on one plain
 * string or integer property, without [c]/[d]. */
static bool foldable(const rnode *k, q_op op) {
    const q_node *q = k->q;
    return q->kind == QN_CMP && q->op == op && !q->flags && !q->reversed && q->quant == QQ_ANY &&
           q->lhs.kind == QE_PATH && q->lhs.nsteps == 1 && q->lhs.agg == QA_NONE &&
           !(q->lhs.steps[0].flags & STRATA_PROP_LIST) && !q->lhs.steps[0].back &&
           (q->rhs.kind == QE_CONST || q->rhs.kind == QE_ARG) && k->nvals == 1 && !k->any_val &&
           !k->folded && !k->fts && !k->geo && !k->sub &&
           set_type(q->lhs.steps[0].type) != STRATA_TYPE_NULL &&
           k->vals[0].type == set_type(q->lhs.steps[0].type);
}

/* Long chains of one property's comparisons with constants — `p == a OR p == b OR ...`,
 * `p != a AND p != b AND ...` (programs write them: 50,000 such terms over 2,000 objects took
 * 9 s, each term read each object) — become one term, `p IN {a, b, ...}` (for AND: NOT of it:
 * a null or any other value is not in the set either way), whose set is sorted. Terms of other
 * properties, or fewer than 8 of one, stay as they are. */
static int fold_terms(exec *x, rnode *r) {
    enum { FOLD_MIN = 8 };
    q_op op = r->q->kind == QN_OR ? QO_EQ : QO_NE;
    int n = r->nkids;
    for (int i = 0; i < n; i++) {
        if (!foldable(r->kids[i], op)) continue;
        uint32_t col = r->kids[i]->q->lhs.steps[0].col;
        int count = 0;
        for (int j = i; j < n; j++)
            count += foldable(r->kids[j], op) && r->kids[j]->q->lhs.steps[0].col == col;
        if (count < FOLD_MIN) continue;
        rnode *in = calloc(1, sizeof *in), *top = in;
        if (in) in->own_q = malloc(sizeof *in->own_q);
        if (in && in->own_q) in->vals = calloc((size_t)count + 1, sizeof *in->vals);
        if (in && in->vals && op == QO_NE && (top = calloc(1, sizeof *top)) && !(top->own_q = calloc(1, sizeof *top->own_q))) {
            free(top);
            top = NULL;
        }
        if (!in || !in->own_q || !in->vals || !top) {
            if (top != in) free(top);
            rnode_free(in);
            return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
        }
        *in->own_q = *r->kids[i]->q; /* (its paths and constants stay the query's) */
        in->own_q->op = QO_IN;
        in->q = in->own_q;
        in->fast = r->kids[i]->fast;
        in->fast_str = r->kids[i]->fast_str;
        int kept = 0;
        for (int j = 0; j < n; j++) {
            rnode *k = r->kids[j];
            if (j >= i && foldable(k, op) && k->q->lhs.steps[0].col == col) {
                in->vals[in->nvals++] = k->vals[0];
                rnode_free(k);
            } else {
                r->kids[kept++] = k;
            }
        }
        sort_set(in);
        if (top != in) {
            top->own_q->kind = QN_NOT;
            top->q = top->own_q;
            top->a = in;
        }
        r->kids[kept++] = top;
        r->nkids = n = kept;
        i = -1; /* again, for another property's chain */
    }
    if (r->nkids == 1 && r->kids[0]->q->kind != r->q->kind) { /* the chain was all of it: r is */
        rnode *k = r->kids[0];                                   /* its one term (an index may */
        free(r->kids);                                           /* answer an IN) */
        *r = *k;
        free(k);
    }
    return STRATA_OK;
}

static int bind(exec *x, const q_node *q, const strata_value *args, size_t nargs, rnode **out) {
    rnode *r = calloc(1, sizeof *r);
    if (!r) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    *out = r;
    r->q = q;
    if (q->kind == QN_AND || q->kind == QN_OR) {
        r->kids = calloc((size_t)q->nkids, sizeof *r->kids);
        if (!r->kids) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
        r->nkids = q->nkids;
        for (int i = 0; i < q->nkids; i++)
            if (bind(x, q->kids[i], args, nargs, &r->kids[i])) return x->rc;
        return fold_terms(x, r);
    }
    if (q->kind == QN_NOT) return bind(x, q->a, args, nargs, &r->a);
    if (q->kind != QN_CMP) return STRATA_OK;
    for (int i = 0; i < q->lhs.nsteps; i++) {
        strata_table_t *t;
        st_prop *p;
        if (step_prop(x, &q->lhs.steps[i], &t, &p)) return x->rc;
    }
    if (q->lhs.kind == QE_SUBQUERY && bind(x, q->lhs.sub, args, nargs, &r->sub)) return x->rc;
    if (q->op == QO_TEXT) return bind_text(x, q, args, nargs, r);
    if (q->op == QO_GEOWITHIN || (q->op == QO_IN && q->rhs.kind == QE_ARG && (size_t)q->rhs.arg < nargs &&
                                  args[q->rhs.arg].type == STRATA_TYPE_GEO))
        return bind_geo(x, q, args, nargs, r);
    /* the right side's values */
    const q_expr *rhs = &q->rhs;
    if (rhs->kind == QE_PATH || rhs->kind == QE_SUBQUERY) { /* read per object (cmp_paths) */
        for (int i = 0; i < rhs->nsteps; i++) {
            strata_table_t *t;
            st_prop *p;
            if (step_prop(x, &rhs->steps[i], &t, &p)) return x->rc;
        }
        if (rhs->kind == QE_SUBQUERY && bind(x, rhs->sub, args, nargs, &r->rsub)) return x->rc;
        return STRATA_OK;
    }
    if (rhs->kind == QE_LIST) {
        r->nvals = rhs->nitems;
        r->vals = calloc((size_t)r->nvals + 1, sizeof *r->vals);
        if (!r->vals) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
        for (int i = 0; i < r->nvals; i++)
            if (bind_value(x, &rhs->items[i], args, nargs, &r->vals[i])) return x->rc;
    } else {
        strata_value v;
        if (bind_value(x, rhs, args, nargs, &v)) return x->rc;
        if (v.type == STRATA_TYPE_LIST) {
            if (q->op != QO_IN)
                return x->rc = st_err(x->err, STRATA_ERR_WRONG_TYPE,
                                      "query: argument $%d is a list; only IN takes a list", rhs->arg);
            r->nvals = (int)v.u.list.count;
            r->vals = calloc(v.u.list.count + 1, sizeof *r->vals);
            if (!r->vals) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
            if (v.u.list.count) memcpy(r->vals, v.u.list.items, v.u.list.count * sizeof *r->vals);
            for (int i = 0; i < r->nvals; i++)
                if (r->vals[i].type == STRATA_TYPE_BOOL) r->vals[i].u.b = st_bool_of(&r->vals[i]);
        } else {
            if (q->op == QO_IN && rhs->kind == QE_ARG)
                return x->rc = st_err(x->err, STRATA_ERR_WRONG_TYPE,
                                      "query: IN $%d needs a list argument, not a %s", rhs->arg,
                                      st_type_name(v.type));
            r->nvals = 1;
            r->vals = calloc(1, sizeof *r->vals);
            if (!r->vals) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
            r->vals[0] = v;
        }
    }
    strata_type pt = q_expr_type(&q->lhs);
    for (int i = 0; i < r->nvals; i++) {
        strata_type vt = r->vals[i].type;
        if (!q_comparable(pt, vt) ||
            (q->op >= QO_BEGINS && q->op <= QO_LIKE && vt != STRATA_TYPE_NULL &&
             vt != STRATA_TYPE_STRING && vt != STRATA_TYPE_BINARY))
            return x->rc = st_err(x->err, STRATA_ERR_WRONG_TYPE,
                                  "query: cannot compare a %s property with a %s (argument or "
                                  "value %d)", st_type_name(pt), st_type_name(vt), i);
    }
    bool strings = pt == STRATA_TYPE_STRING || pt == STRATA_TYPE_MIXED;
    if (strings && (q->flags || q->op == QO_LIKE)) {
        r->folded = calloc((size_t)r->nvals + 1, sizeof *r->folded);
        if (!r->folded) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
        for (int i = 0; i < r->nvals; i++)
            if (r->vals[i].type == STRATA_TYPE_STRING &&
                st_text_fold(r->vals[i].u.bytes.data, r->vals[i].u.bytes.len, q->flags, &r->folded[i]))
                return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    }
    /* the fast path: one step on the root table, packed, non-list, integer constants */
    const q_step *s0 = &q->lhs.steps[0];
    r->fast = q->lhs.kind == QE_PATH && q->lhs.nsteps == 1 && q->lhs.agg == QA_NONE &&
              !(s0->flags & STRATA_PROP_LIST) &&
              (s0->type == STRATA_TYPE_INT || s0->type == STRATA_TYPE_BOOL) &&
              q->op != QO_BEGINS && q->op != QO_ENDS && q->op != QO_CONTAINS && q->op != QO_LIKE;
    for (int i = 0; r->fast && i < r->nvals; i++)
        r->fast = r->vals[i].type == (s0->type == STRATA_TYPE_BOOL ? STRATA_TYPE_BOOL : STRATA_TYPE_INT);
    if (r->fast && (r->fast_t = st_table_by_id(x->store, s0->table)) &&
        (r->fast_p = st_prop_find(r->fast_t, s0->col)) && r->fast_p->type == s0->type &&
        !((r->fast_p->flags ^ s0->flags) & (STRATA_PROP_LIST | STRATA_PROP_MAP)))
        ; /* read straight on one object (cmp_object) */
    else /* (a property removed since compiling: reported where it is read) */
        r->fast_t = NULL;
    /* Column-wise over the root table's leaf: one plain property against constants (long AND
     * chains of such terms read each row of each term through its object: 50,000 terms over
     * 2,000 objects took 3 s on doubles, 12 s on strings, folding each again under [c]). */
    bool one_column = q->lhs.kind == QE_PATH && q->lhs.nsteps == 1 && q->lhs.agg == QA_NONE &&
                      !(s0->flags & STRATA_PROP_LIST) && !s0->back && q->quant == QQ_ANY &&
                      (q->rhs.kind == QE_CONST || q->rhs.kind == QE_ARG || q->rhs.kind == QE_LIST) &&
                      !r->any_val;
    /* a float or double leaf, a number or two on the right */
    r->fast_real = one_column && (s0->type == STRATA_TYPE_FLOAT || s0->type == STRATA_TYPE_DOUBLE) &&
                   (q->op <= QO_GE ? r->nvals == 1 : q->op == QO_BETWEEN && r->nvals == 2);
    for (int i = 0; r->fast_real && i < r->nvals; i++) {
        strata_type t = r->vals[i].type;
        r->fast_real = t == STRATA_TYPE_INT || t == STRATA_TYPE_FLOAT || t == STRATA_TYPE_DOUBLE;
    }
    /* a string or binary leaf: its elements found once per cluster for all such terms on the
     * property, and folded once under [c]/[d] */
    r->fast_str = one_column && (s0->type == STRATA_TYPE_STRING || s0->type == STRATA_TYPE_BINARY) &&
                  q->op <= QO_BETWEEN;
    if (q->op == QO_IN) sort_set(r);
    return STRATA_OK;
}

/* ------------------------------------------------------------------ comparing one value */

/* A number as a double (an integer's converted). */
static double real_of(const strata_value *v) {
    return v->type == STRATA_TYPE_INT ? (double)v->u.i : v->type == STRATA_TYPE_FLOAT ? v->u.f : v->u.d;
}

/* The order of two doubles: NaN equals NaN, below every number. */
static inline int real_order(double x, double y) {
    if (x != x || y != y) return (y != y) - (x != x);
    return (x > y) - (x < y);
}

static int num_cmp(const strata_value *a, const strata_value *b) {
    if (a->type == STRATA_TYPE_INT && b->type == STRATA_TYPE_INT)
        return (a->u.i > b->u.i) - (a->u.i < b->u.i);
    return real_order(real_of(a), real_of(b));
}

/* Order of a and b when comparable: *ok false when they are not (different kinds). */
static int value_order(const strata_value *a, const strata_value *b, bool *ok) {
    *ok = true;
    if (q_numeric(a->type) && q_numeric(b->type)) return num_cmp(a, b);
    if (a->type == STRATA_TYPE_TYPED_LINK || b->type == STRATA_TYPE_TYPED_LINK) {
        /* a mixed value's link: against another by table and key, against a link by key */
        bool at = a->type == STRATA_TYPE_TYPED_LINK, bt = b->type == STRATA_TYPE_TYPED_LINK;
        *ok = (at || a->type == STRATA_TYPE_LINK) && (bt || b->type == STRATA_TYPE_LINK);
        if (at && bt && a->u.typed_link.table != b->u.typed_link.table)
            return (a->u.typed_link.table > b->u.typed_link.table) - (a->u.typed_link.table < b->u.typed_link.table);
        int64_t x = at ? a->u.typed_link.key : a->u.link, y = bt ? b->u.typed_link.key : b->u.link;
        return (x > y) - (x < y);
    }
    if (a->type == STRATA_TYPE_LINK || b->type == STRATA_TYPE_LINK) {
        int64_t x = a->type == STRATA_TYPE_LINK ? a->u.link : a->u.i;
        int64_t y = b->type == STRATA_TYPE_LINK ? b->u.link : b->u.i;
        *ok = (a->type == STRATA_TYPE_LINK || a->type == STRATA_TYPE_INT) &&
              (b->type == STRATA_TYPE_LINK || b->type == STRATA_TYPE_INT);
        return (x > y) - (x < y);
    }
    if (a->type != b->type) {
        *ok = false;
        return 0;
    }
    if (a->type == STRATA_TYPE_DECIMAL128) return st_decimal_cmp(a, b, ok); /* by value; NaN unordered */
    return st_value_cmp(a, b);
}

static bool text_eq(const st_text *a, const st_text *b, size_t off) {
    for (size_t i = 0; i < b->n; i++)
        if (a->cp[off + i] != b->cp[i]) return false;
    return true;
}

/* A string operator on v (string or binary) against constant i of r; vf is v folded with r's
 * flags when the caller has it (NULL: folded here when r folds). */
static bool string_match(const rnode *r, const strata_value *v, const st_text *vf, int i) {
    const strata_value *c = &r->vals[i];
    q_op op = r->q->op;
    if (r->folded && c->type == STRATA_TYPE_STRING && v->type == STRATA_TYPE_STRING) {
        st_text folded = {0};
        if (vf) folded = *vf;
        else if (st_text_fold(v->u.bytes.data, v->u.bytes.len, r->q->flags, &folded)) return false;
        /* s is the text, p the part or pattern: the constant is the text when reversed */
        const st_text *p = r->q->reversed ? &folded : &r->folded[i];
        const st_text s = r->q->reversed ? r->folded[i] : folded;
        bool m = false;
        switch (op) {
        case QO_EQ: case QO_NE: case QO_IN: m = s.n == p->n && text_eq(&s, p, 0); break;
        case QO_BEGINS: m = s.n >= p->n && text_eq(&s, p, 0); break;
        case QO_ENDS: m = s.n >= p->n && text_eq(&s, p, s.n - p->n); break;
        case QO_CONTAINS:
            for (size_t o = 0; !m && o + p->n <= s.n; o++) m = text_eq(&s, p, o);
            break;
        case QO_LIKE: m = st_text_like(&s, p); break;
        default: break;
        }
        if (!vf) st_text_free(&folded);
        return op == QO_NE ? !m : m;
    }
    const uint8_t *a = v->u.bytes.data, *b = c->u.bytes.data;
    size_t al = v->u.bytes.len, bl = c->u.bytes.len;
    if (r->q->reversed) { /* the constant is the text */
        const uint8_t *tb = a;
        size_t tl = al;
        a = b, al = bl, b = tb, bl = tl;
    }
    switch (op) {
    case QO_BEGINS: return al >= bl && memcmp(a, b, bl) == 0;
    case QO_ENDS: return al >= bl && memcmp(a + al - bl, b, bl) == 0;
    case QO_CONTAINS: return st_bytes_contain(a, al, b, bl);
    default: return false;
    }
}

static bool match_one(const rnode *r, const strata_value *v, const st_text *vf, int i) {
    const strata_value *c = &r->vals[i];
    q_op op = r->q->op == QO_IN ? QO_EQ : r->q->op;
    if (c->type == STRATA_TYPE_NULL || v->type == STRATA_TYPE_NULL) {
        bool both = c->type == v->type;
        if (op == QO_EQ) return both;
        if (op == QO_NE) return !both;
        return false;
    }
    bool textual = (v->type == STRATA_TYPE_STRING || v->type == STRATA_TYPE_BINARY) &&
                   (c->type == STRATA_TYPE_STRING || c->type == STRATA_TYPE_BINARY);
    if (op >= QO_BEGINS && op <= QO_LIKE) return textual && string_match(r, v, vf, i);
    if (textual && r->folded && (op == QO_EQ || op == QO_NE)) return string_match(r, v, vf, i);
    bool ok;
    int o = value_order(v, c, &ok);
    if (!ok) return op == QO_NE;
    switch (op) {
    case QO_EQ: return o == 0;
    case QO_NE: return o != 0;
    case QO_LT: return o < 0;
    case QO_LE: return o <= 0;
    case QO_GT: return o > 0;
    case QO_GE: return o >= 0;
    default: return false;
    }
}

/* Whether v matches r; vf as string_match's. */
static bool matches_folded(const rnode *r, const strata_value *v, const st_text *vf) {
    if (r->fts) { /* TEXT (out of memory: no match) */
        bool m = false;
        if (v->type == STRATA_TYPE_STRING) (void)st_fts_match(r->fts, v->u.bytes.data, v->u.bytes.len, &m);
        return m;
    }
    switch (r->q->op) {
    case QO_IN:
        if (r->sorted && (v->type == r->vals[0].type || v->type == STRATA_TYPE_NULL)) return in_set(r, v);
        for (int i = 0; i < r->nvals; i++)
            if (match_one(r, v, vf, i)) return true;
        return false;
    case QO_BETWEEN: {
        if (v->type == STRATA_TYPE_NULL) return false;
        bool ok1, ok2;
        int lo = value_order(v, &r->vals[0], &ok1), hi = value_order(v, &r->vals[1], &ok2);
        return ok1 && ok2 && lo >= 0 && hi <= 0;
    }
    default:
        if (!r->any_val) return match_one(r, v, vf, 0);
        for (int i = 0; i < r->nvals; i++)
            if (match_one(r, v, vf, i)) return true;
        return false;
    }
}

static bool matches(const rnode *r, const strata_value *v) { return matches_folded(r, v, NULL); }

/* ------------------------------------------------------------------ walking paths */

/* Room for at least `need` keys in k (doubling from ST_KEYVEC_FIRST). */
static int keyvec_room(keyvec *k, size_t need) {
    if (need <= k->cap) return 0;
    size_t cap = k->cap ? 2 * k->cap : ST_KEYVEC_FIRST;
    while (cap < need) cap *= 2;
    int64_t *g = realloc(k->v, cap * sizeof *g);
    if (!g) return STRATA_ERR_NO_MEMORY;
    k->v = g;
    k->cap = cap;
    return 0;
}

int st_keyvec_push(keyvec *k, int64_t key) {
    if (k->n == k->cap && keyvec_room(k, k->n + 1)) return STRATA_ERR_NO_MEMORY;
    k->v[k->n++] = key;
    return 0;
}


/* Values gathered from a path for one object (the right side of a comparison of two). */
typedef struct valvec {
    strata_value *v;
    size_t n, cap;
} valvec;

typedef struct qstate {
    const rnode *r;
    int seen, hits;
    valvec *collect;         /* gather the values instead of matching them */
} qstate;

/* Is the embedded point a link value names inside the region? 1 yes, 0 no (a null link, a type
 * other than "Point", fewer than 2 coordinates), -1 on a read error. */
static int geo_match(exec *x, const rnode *r, const strata_value *v) {
    if (v->type != STRATA_TYPE_LINK) return 0;
    st_objref ref;
    strata_value type, list;
    if ((x->rc = st_obj_locate(r->geo_t, v->u.link, &ref, x->err)) ||
        (x->rc = st_obj_read(r->geo_t, &ref, r->geo_type, &type, x->err)) ||
        (x->rc = st_obj_read(r->geo_t, &ref, r->geo_coords, &list, x->err)))
        return -1;
    if (type.type != STRATA_TYPE_STRING || type.u.bytes.len != 5 || memcmp(type.u.bytes.data, "Point", 5) != 0)
        return 0;
    strata_value *el = NULL;
    size_t n = 0;
    if ((uint64_t)list.u.i && (x->rc = st_list_load(r->geo_t, r->geo_coords, (uint64_t)list.u.i, &el, &n, x->err)))
        return -1;
    int in = n >= 2 && el[0].type == STRATA_TYPE_DOUBLE && el[1].type == STRATA_TYPE_DOUBLE &&
             st_geo_contains(r->geo, el[0].u.d, el[1].u.d);
    free(el);
    return in;
}

/* Feed every value the path yields from object (t, key) at step i to the quantifier state;
 * returns 1 when the answer is known. */
static int feed(exec *x, qstate *st, const strata_value *v) {
    if (st->collect) {
        valvec *c = st->collect;
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 8;
            strata_value *g = realloc(c->v, cap * sizeof *g);
            if (!g) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory"), -1;
            c->v = g;
            c->cap = cap;
        }
        c->v[c->n++] = *v;
        return 0;
    }
    st->seen++;
    bool m;
    if (st->r->geo) {
        int g = geo_match(x, st->r, v);
        if (g < 0) return -1;
        m = g;
    } else {
        m = matches(st->r, v);
    }
    st->hits += m;
    switch (st->r->q->quant) {
    case QQ_ANY: return m;
    case QQ_ALL: return !m;
    case QQ_NONE: return m;
    }
    (void)x;
    return 0;
}

/* @sum (0 for none) and @avg (null for none) of decimal128 values, exactly (decimal.c). */
static void agg_decimals(q_agg agg, const strata_value *el, size_t n, strata_value *out) {
    strata_value sum = {.type = STRATA_TYPE_DECIMAL128, .u.decimal = {0, 6176ull << 49}}; /* 0 */
    uint64_t cnt = 0;
    for (size_t i = 0; i < n; i++) {
        if (el[i].type != STRATA_TYPE_DECIMAL128) continue;
        st_decimal_add(&sum, &el[i], &sum);
        cnt++;
    }
    if (agg == QA_SUM) *out = sum;
    else if (!cnt) *out = (strata_value){.type = STRATA_TYPE_NULL};
    else st_decimal_div(&sum, cnt, out);
}

/* The aggregate of values el[0..n) of a property of type `type`: @sum of none is 0, the others
 * null; @min/@max of any ordered type, @sum/@avg of numbers and decimals. */
static void agg_values(q_agg agg, strata_type type, const strata_value *el, size_t n,
                       strata_value *out) {
    if (type == STRATA_TYPE_DECIMAL128 && (agg == QA_SUM || agg == QA_AVG)) {
        agg_decimals(agg, el, n, out);
        return;
    }
    double sum = 0;
    int64_t isum = 0;
    size_t cnt = 0;
    strata_value best = {.type = STRATA_TYPE_NULL};
    for (size_t i = 0; i < n; i++) {
        if (el[i].type == STRATA_TYPE_NULL) continue;
        cnt++;
        double d = el[i].type == STRATA_TYPE_INT ? (double)el[i].u.i
                 : el[i].type == STRATA_TYPE_FLOAT ? el[i].u.f : el[i].u.d;
        sum += d;
        if (el[i].type == STRATA_TYPE_INT) isum += el[i].u.i;
        bool ok;
        if (best.type == STRATA_TYPE_NULL ||
            (agg == QA_MIN && value_order(&el[i], &best, &ok) < 0) ||
            (agg == QA_MAX && value_order(&el[i], &best, &ok) > 0))
            best = el[i];
    }
    switch (agg) {
    case QA_COUNT: *out = (strata_value){.type = STRATA_TYPE_INT, .u.i = (int64_t)n}; break;
    case QA_SUM:
        *out = type == STRATA_TYPE_INT ? (strata_value){.type = STRATA_TYPE_INT, .u.i = isum}
                                       : (strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = sum};
        break;
    case QA_AVG:
        *out = cnt ? (strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = sum / (double)cnt}
                   : (strata_value){.type = STRATA_TYPE_NULL};
        break;
    default: *out = best; break;
    }
    if (out->type == STRATA_TYPE_FLOAT) *out = (strata_value){.type = STRATA_TYPE_DOUBLE, .u.d = out->u.f};
}

/* The values step s reads from list `id` of (t, p): a list's elements, a map's values, its keys
 * (@keys), or one key's value (['key']; null when the map lacks the key). */
static int step_elems(exec *x, const q_step *s, strata_table_t *t, st_prop *p, uint64_t id,
                      strata_value **el, size_t *n) {
    if (s->map == Q_MAP_VALUES) return (x->rc = st_list_load(t, p, id, el, n, x->err)) ? -1 : 0;
    strata_value *vals, *keys;
    if ((x->rc = st_list_load_keyed(t, p, id, &vals, &keys, n, x->err))) return -1;
    if (s->map == Q_MAP_KEYS) {
        free(vals);
        *el = keys;
        return 0;
    }
    strata_value mk = {.type = STRATA_TYPE_STRING, .u.bytes = {s->mkey, s->mkey_len}};
    if (s->mkey_arg >= 0) { /* map[$n]: checked a string when bound */
        if ((size_t)s->mkey_arg >= x->nargs || x->args[s->mkey_arg].type != STRATA_TYPE_STRING) {
            free(vals);
            free(keys);
            return x->rc = st_err(x->err, STRATA_ERR_INVALID_ARGUMENT,
                                  "query: the map key $%d must be a string", s->mkey_arg), -1;
        }
        mk = x->args[s->mkey_arg];
    }
    bool found;
    size_t at = st_map_key_search(keys, *n, &mk, &found);
    free(keys);
    if (!vals && !(vals = calloc(1, sizeof *vals)))  /* an empty map has no storage */
        return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory"), -1;
    vals[0] = found ? vals[at] : (strata_value){.type = STRATA_TYPE_NULL};
    *n = 1;
    *el = vals;
    return 0;
}

static int aggregate(exec *x, const q_expr *e, st_prop *p, strata_table_t *t, const strata_value *v,
                     strata_value *out) {
    if (!(p->flags & STRATA_PROP_LIST)) { /* @count/@size of a string, or of a to-one link */
        out->type = STRATA_TYPE_INT;
        out->u.i = v->type == STRATA_TYPE_STRING ? (int64_t)st_utf8_length(v->u.bytes.data, v->u.bytes.len)
                 : v->type == STRATA_TYPE_BINARY ? (int64_t)v->u.bytes.len
                 : v->type == STRATA_TYPE_LINK ? 1 : 0;
        return STRATA_OK;
    }
    strata_value *el;
    size_t n;
    if (step_elems(x, &e->steps[e->nsteps - 1], t, p, (uint64_t)v->u.i, &el, &n)) return x->rc;
    agg_values(e->agg, q_step_type(&e->steps[e->nsteps - 1]), el, n, out);
    free(el);
    return STRATA_OK;
}

/* Append to out the keys of the objects step s leads to from object (t, key) (ref: its located
 * cluster row, or NULL): a link's target, a list's links, or the backlinks; *next is their
 * table, *null set when a to-one link is null. */
static int step_keys(exec *x, const q_step *s, strata_table_t *t, int64_t key, const st_objref *ref,
                     keyvec *out, strata_table_t **next, bool *null) {
    strata_table_t *pt;
    st_prop *p;
    if (step_prop(x, s, &pt, &p)) return -1;
    if (s->back) {
        *next = pt;
        size_t n, at = out->n;
        if ((x->rc = st_backlinks_list(t, key, pt, p->id, NULL, 0, &n, x->err))) return -1;
        for (size_t j = 0; j < n; j++)
            if (st_keyvec_push(out, 0)) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory"), -1;
        if (n && (x->rc = st_backlinks_list(t, key, pt, p->id, out->v + at, n, &n, x->err))) return -1;
        return 0;
    }
    st_objref own;
    if (!ref) {
        if ((x->rc = st_obj_locate(t, key, &own, x->err))) return -1;
        ref = &own;
    }
    strata_value v;
    if ((x->rc = st_obj_read(t, ref, p, &v, x->err))) return -1;
    *next = st_table_by_id(x->store, p->target);
    if (!(p->flags & STRATA_PROP_LIST)) {
        if (v.type == STRATA_TYPE_LINK) {
            if (st_keyvec_push(out, v.u.link)) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory"), -1;
        } else {
            *null = true;
        }
        return 0;
    }
    strata_value *el;
    size_t n;
    if (step_elems(x, s, t, p, (uint64_t)v.u.i, &el, &n)) return -1;
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < n; j++)
        if (el[j].type == STRATA_TYPE_LINK && st_keyvec_push(out, el[j].u.link))
            rc = -1, x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    free(el);
    return rc;
}

static int walk(exec *x, qstate *st, const q_expr *e, int i, strata_table_t *t, int64_t key,
                const st_objref *ref);

static int cmp_i64(const void *a, const void *b) {
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}
void st_keyvec_unique(keyvec *k) {
    if (k->n > 1) qsort(k->v, k->n, sizeof *k->v, cmp_i64);
    size_t m = 0;
    for (size_t i = 0; i < k->n; i++)
        if (i == 0 || k->v[i] != k->v[i - 1]) k->v[m++] = k->v[i];
    k->n = m;
}

/* A path that fans out more than once (lists of links, backlinks) can reach an object along
 * many routes: walked hop by hop, each hop's objects are taken once, so a hop costs at most the
 * objects it reaches (the recursive walk would repeat the rest of the path per route). The
 * quantifiers ask whether any, all or none of the values match, which repeats do not change. */
static bool fans_out_twice(const q_expr *e) {
    int many = 0;
    for (int i = 0; i + 1 < e->nsteps - e->agg_links; i++) many += q_step_many(&e->steps[i]);
    return many >= 2;
}

static int walk_hops(exec *x, qstate *st, const q_expr *e, strata_table_t *t, int64_t key,
                     const st_objref *ref) {
    keyvec cur = {0}, next = {0};
    bool null = false;
    int rc = st_keyvec_push(&cur, key) ? -1 : 0;
    if (rc) x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    int end = e->nsteps - 1 - e->agg_links; /* the step walked per object at the end */
    for (int i = 0; rc == 0 && i < end; i++) {
        strata_table_t *nt = NULL;
        next.n = 0;
        for (size_t j = 0; rc == 0 && j < cur.n; j++)
            rc = step_keys(x, &e->steps[i], t, cur.v[j], i == 0 ? ref : NULL, &next, &nt, &null);
        st_keyvec_unique(&next);
        keyvec tmp = cur;
        cur = next;
        next = tmp;
        if (nt) t = nt;
    }
    for (size_t j = 0; rc == 0 && j < cur.n; j++) rc = walk(x, st, e, end, t, cur.v[j], NULL);
    if (rc == 0 && null) { /* a null to-one link on the way yields null */
        strata_value nv = {.type = STRATA_TYPE_NULL};
        rc = feed(x, st, &nv);
    }
    free(cur.v);
    free(next.v);
    return rc;
}

/* list.@sum.property from object (t, key): the property of each object the list (or
 * backlinks) step i reaches, aggregated into one value. */
static int walk_agg_links(exec *x, qstate *st, const q_expr *e, int i, strata_table_t *t,
                          int64_t key, const st_objref *ref) {
    keyvec k = {0};
    strata_table_t *next = NULL, *vt;
    bool null = false;
    st_prop *vp;
    if (step_keys(x, &e->steps[i], t, key, ref, &k, &next, &null) ||
        step_prop(x, &e->steps[i + 1], &vt, &vp))
        return free(k.v), -1;
    strata_value *vals = malloc((k.n ? k.n : 1) * sizeof *vals);
    int rc = vals ? 0 : (x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory"), -1);
    for (size_t j = 0; rc == 0 && j < k.n; j++) {
        st_objref r;
        if ((x->rc = st_obj_locate(vt, k.v[j], &r, x->err)) ||
            (x->rc = st_obj_read(vt, &r, vp, &vals[j], x->err)))
            rc = -1;
    }
    if (rc == 0) {
        strata_value a;
        agg_values(e->agg, (strata_type)vp->type, vals, k.n, &a);
        rc = feed(x, st, &a);
    }
    free(vals);
    free(k.v);
    return rc;
}

static int walk(exec *x, qstate *st, const q_expr *e, int i, strata_table_t *t, int64_t key,
                const st_objref *ref) {
    if (e->agg_links && i == e->nsteps - 2) return walk_agg_links(x, st, e, i, t, key, ref);
    strata_table_t *pt;
    st_prop *p;
    if (step_prop(x, &e->steps[i], &pt, &p)) return -1;
    bool last = i == e->nsteps - 1;
    if (e->steps[i].back) { /* the objects of pt linking here through p */
        keyvec k = {0};
        strata_table_t *next;
        bool null = false;
        if (step_keys(x, &e->steps[i], t, key, NULL, &k, &next, &null)) return free(k.v), -1;
        int rc = 0;
        if (last && e->agg == QA_COUNT) {
            strata_value c = {.type = STRATA_TYPE_INT, .u.i = (int64_t)k.n};
            rc = feed(x, st, &c);
        }
        for (size_t j = 0; rc == 0 && !(last && e->agg == QA_COUNT) && j < k.n; j++) {
            strata_value l = {.type = STRATA_TYPE_LINK, .u.link = k.v[j]};
            rc = last ? feed(x, st, &l) : walk(x, st, e, i + 1, pt, k.v[j], NULL);
        }
        free(k.v);
        return rc;
    }
    st_objref own;
    if (!ref) {
        if ((x->rc = st_obj_locate(t, key, &own, x->err))) return -1;
        ref = &own;
    }
    strata_value v;
    if ((x->rc = st_obj_read(t, ref, p, &v, x->err))) return -1;
    if (last && e->agg != QA_NONE) {
        strata_value a;
        if (aggregate(x, e, p, t, &v, &a)) return -1;
        return feed(x, st, &a);
    }
    if (!(p->flags & STRATA_PROP_LIST)) {
        if (last || v.type == STRATA_TYPE_NULL) {
            strata_value null = {.type = STRATA_TYPE_NULL};
            return feed(x, st, last ? &v : &null);
        }
        strata_table_t *next = st_table_by_id(x->store, p->target);
        return walk(x, st, e, i + 1, next, v.u.link, NULL);
    }
    strata_value *el;
    size_t n;
    if (step_elems(x, &e->steps[i], t, p, (uint64_t)v.u.i, &el, &n)) return -1;
    int rc = 0;
    strata_table_t *next = last ? NULL : st_table_by_id(x->store, p->target);
    for (size_t j = 0; rc == 0 && j < n; j++) {
        if (last) rc = feed(x, st, &el[j]);
        else if (el[j].type == STRATA_TYPE_LINK) rc = walk(x, st, e, i + 1, next, el[j].u.link, NULL);
    }
    free(el);
    return rc;
}

/* Visit the objects at the end of steps [i, n) (links, lists of links, backlinks) from object
 * (t, key); fn returns 1 to stop, -1 on error. */
typedef int (*obj_visit)(exec *x, void *arg, strata_table_t *t, int64_t key);

static int walk_objects(exec *x, const q_step *steps, int n, int i, strata_table_t *t, int64_t key,
                        const st_objref *ref, obj_visit fn, void *arg) {
    keyvec k = {0};
    strata_table_t *next;
    bool null = false;
    if (step_keys(x, &steps[i], t, key, ref, &k, &next, &null)) return free(k.v), -1;
    int rc = 0;
    for (size_t j = 0; rc == 0 && j < k.n; j++)
        rc = i == n - 1 ? fn(x, arg, next, k.v[j])
                        : walk_objects(x, steps, n, i + 1, next, k.v[j], NULL, fn, arg);
    free(k.v);
    return rc;
}

static int eval_object(exec *x, const rnode *r, strata_table_t *t, int64_t key,
                       const st_objref *ref, bool *out);

typedef struct sub_count {
    const rnode *sub;
    int64_t count;
} sub_count;

static int sub_visit(exec *x, void *arg, strata_table_t *t, int64_t key) {
    sub_count *c = arg;
    bool m;
    if (eval_object(x, c->sub, t, key, NULL, &m)) return -1;
    c->count += m;
    return 0;
}

static int cmp_object(exec *x, const rnode *r, strata_table_t *t, int64_t key,
                      const st_objref *ref, bool *out);

/* The values an operand that is a path (or SUBQUERY(...).@count) yields for object (t, key). */
static int operand_values(exec *x, const q_expr *e, const rnode *sub, strata_table_t *t,
                          int64_t key, const st_objref *ref, valvec *out) {
    qstate st = {NULL, 0, 0, out};
    if (e->kind == QE_SUBQUERY) {
        sub_count c = {sub, 0};
        if (walk_objects(x, e->steps, e->nsteps, 0, t, key, ref, sub_visit, &c) < 0) return -1;
        strata_value v = {.type = STRATA_TYPE_INT, .u.i = c.count};
        return feed(x, &st, &v) < 0 ? -1 : 0;
    }
    int w = fans_out_twice(e) ? walk_hops(x, &st, e, t, key, ref) : walk(x, &st, e, 0, t, key, ref);
    return w < 0 ? -1 : 0;
}

/* A comparison of two properties on one object: the right side's values are read first, then
 * the left side is matched against any of them (folded for [c], [d] and LIKE). */
__attribute__((noinline)) static int cmp_paths(exec *x, const rnode *r, strata_table_t *t,
                                               int64_t key, const st_objref *ref, bool *out) {
    valvec vals = {0};
    if (operand_values(x, &r->q->rhs, r->rsub, t, key, ref, &vals)) return free(vals.v), x->rc;
    rnode one = *r;
    one.vals = vals.v;
    one.nvals = (int)vals.n;
    one.any_val = true;
    one.folded = NULL;
    strata_type lt = q_expr_type(&r->q->lhs);
    bool strings = lt == STRATA_TYPE_STRING || lt == STRATA_TYPE_MIXED;
    int rc = STRATA_OK;
    if (strings && (r->q->flags || r->q->op == QO_LIKE) && vals.n) {
        one.folded = calloc(vals.n, sizeof *one.folded);
        if (!one.folded) rc = x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
        for (size_t i = 0; rc == STRATA_OK && i < vals.n; i++)
            if (vals.v[i].type == STRATA_TYPE_STRING &&
                st_text_fold(vals.v[i].u.bytes.data, vals.v[i].u.bytes.len, r->q->flags, &one.folded[i]))
                rc = x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    }
    if (rc == STRATA_OK) rc = cmp_object(x, &one, t, key, ref, out);
    for (size_t i = 0; one.folded && i < vals.n; i++) st_text_free(&one.folded[i]);
    free(one.folded);
    free(vals.v);
    return rc;
}

/* The comparison on one object of table t. */
__attribute__((noinline)) static int cmp_object(exec *x, const rnode *r, strata_table_t *t,
                                                int64_t key, const st_objref *ref, bool *out) {
    if (r == x->decided) {
        *out = true;
        return STRATA_OK;
    }
    if (r->fast && ref && t == r->fast_t) { /* one value, read straight (a point read's path) */
        strata_value v;
        if ((x->rc = st_obj_read(t, ref, r->fast_p, &v, x->err))) return x->rc;
        bool m = matches(r, &v);
        *out = r->q->quant == QQ_NONE ? !m : m;
        return STRATA_OK;
    }
    if (!r->any_val && (r->q->rhs.kind == QE_PATH || r->q->rhs.kind == QE_SUBQUERY))
        return cmp_paths(x, r, t, key, ref, out);
    qstate st = {r, 0, 0, NULL};
    if (r->q->lhs.kind == QE_SUBQUERY) {
        sub_count c = {r->sub, 0};
        if (walk_objects(x, r->q->lhs.steps, r->q->lhs.nsteps, 0, t, key, ref, sub_visit, &c) < 0)
            return x->rc;
        strata_value v = {.type = STRATA_TYPE_INT, .u.i = c.count};
        *out = matches(r, &v);
        return STRATA_OK;
    }
    int w = fans_out_twice(&r->q->lhs) ? walk_hops(x, &st, &r->q->lhs, t, key, ref)
                                       : walk(x, &st, &r->q->lhs, 0, t, key, ref);
    if (w < 0) return x->rc;
    switch (r->q->quant) {
    case QQ_ANY: *out = st.hits > 0; break;
    case QQ_ALL: *out = st.hits == st.seen; break;
    case QQ_NONE: *out = st.hits == 0; break;
    }
    return STRATA_OK;
}

static int eval_object(exec *x, const rnode *r, strata_table_t *t, int64_t key,
                       const st_objref *ref, bool *out) {
    bool a;
    if (r->q->kind == QN_CMP) return cmp_object(x, r, t, key, ref, out);
    switch (r->q->kind) {
    case QN_TRUE: *out = true; return STRATA_OK;
    case QN_FALSE: *out = false; return STRATA_OK;
    case QN_NOT:
        if (eval_object(x, r->a, t, key, ref, &a)) return x->rc;
        *out = !a;
        return STRATA_OK;
    case QN_AND:
    case QN_OR: /* the first term that decides it ends the loop */
        a = r->q->kind == QN_AND;
        for (int i = 0; i < r->nkids; i++) {
            if (eval_object(x, r->kids[i], t, key, ref, &a)) return x->rc;
            if (a == (r->q->kind == QN_OR)) break;
        }
        *out = a;
        return STRATA_OK;
    case QN_CMP: return cmp_object(x, r, t, key, ref, out);
    }
    return STRATA_OK;
}

/* ------------------------------------------------------------------ clusters */

/* A string or binary column of the cluster being evaluated, read for the terms on it
 * (cmp_str): each row's bytes, and (for terms that fold) each row folded as they fold; rows
 * are read when a term first asks for them (an index's candidates are a few rows of each). */
typedef struct str_col {
    uint64_t cluster;        /* the scan's cluster it was read for (0: none yet) */
    uint32_t col;
    unsigned fold;           /* 0: the bytes as stored; else FOLD_AS | the [c]/[d] flags */
    bool dflt;               /* no leaf: every row holds the property's default */
    const uint8_t *seg;      /* the leaf */
    st_rowmask nulls;
    uint64_t read[ST_MASK_WORDS]; /* the rows whose bytes were read (bit i: row i) */
    uint64_t have[ST_MASK_WORDS]; /* fold: the rows folded so far */
    const uint8_t *bytes[ST_CLUSTER_MAX];
    uint32_t lens[ST_CLUSTER_MAX];
    st_text folded[ST_CLUSTER_MAX];
} str_col;

#define STR_COLS 4           /* columns (or foldings of one) kept per cluster */
#define FOLD_AS 0x100

typedef struct str_cols {
    str_col c[STR_COLS];
    unsigned next;           /* the slot taken next when none fits */
} str_cols;

typedef struct cluster_ctx {
    const uint8_t *rec;
    size_t rec_len;
    st_crec cr;
    const uint8_t *keys;     /* keys leaf; NULL when nothing needs it (find_matches) */
    str_cols *strs;          /* the scan's string columns (cmp_str) */
    uint64_t seq;            /* the cluster's number in the scan (from 1) */
} cluster_ctx;

/* A bool or int constant as the number a packed leaf stores. */
static int64_t packed_const(const strata_value *v) {
    return v->type == STRATA_TYPE_BOOL ? v->u.b : v->u.i;
}

/* A comparison's rows of in from a leaf's hits: a null row matches != and nothing else. */
static st_rowmask kept_rows(const rnode *r, const st_rowmask *in, st_rowmask hits, st_rowmask nulls) {
    st_rowmask out = st_mask_andnot(st_mask_and(*in, hits), nulls);
    return r->q->op == QO_NE ? st_mask_or(out, st_mask_and(*in, nulls)) : out;
}

/* A cluster without a leaf for r's property (added after it was written): every row holds the
 * property's default (null, or zero / empty), so r keeps all of in or none. */
static int default_rows(exec *x, const rnode *r, const st_rowmask *in, st_rowmask *out) {
    strata_table_t *t;
    st_prop *p;
    if (step_prop(x, &r->q->lhs.steps[0], &t, &p)) return x->rc;
    strata_value dv;
    memset(&dv, 0, sizeof dv);
    dv.type = (p->flags & STRATA_PROP_NULLABLE) ? STRATA_TYPE_NULL : p->type;
    if (dv.type == STRATA_TYPE_STRING || dv.type == STRATA_TYPE_BINARY) dv.u.bytes.data = (const uint8_t *)"";
    *out = matches(r, &dv) ? *in : st_mask_none();
    return STRATA_OK;
}

/* The packed comparison on a whole leaf, on the rows of in. (Not inlined, nor is cmp_rows: their
 * buffers stay out of eval_cluster's frame, which nesting repeats.) */
__attribute__((noinline)) static int cmp_fast(exec *x, const rnode *r, const cluster_ctx *c, const st_rowmask *in,
                    st_rowmask *out) {
    const q_step *s = &r->q->lhs.steps[0];
    uint32_t n = c->cr.n;
    st_leafref leaf = st_crec_col(&c->cr, s->col);
    st_rowmask hits, nulls = st_mask_none();
    int64_t *v = x->ints;
    int64_t k0 = packed_const(&r->vals[0]), k1 = r->nvals > 1 ? packed_const(&r->vals[1]) : 0;
    if (!leaf.pgno) return default_rows(x, r, in, out);
    const uint8_t *seg, *nb;
    if ((x->rc = st_leaf_header(x->txn, leaf, n, &seg, x->err))) return x->rc;
    if (!st_leaf_is_packed(seg))
        return x->rc = ST_CORRUPT(x->err, "query: a packed leaf was expected for '%s'", x->root->name);
    if ((nb = st_leaf_nulls(seg))) nulls = st_mask_load(nb, n, false);
    static const int ops[] = {[QO_EQ] = 0, [QO_NE] = 1, [QO_LT] = 2, [QO_LE] = 3, [QO_GT] = 4,
                              [QO_GE] = 5, [QO_BETWEEN] = 6};
    if ((r->q->op <= QO_GE || r->q->op == QO_BETWEEN) &&
        st_leaf_compare(seg, n, ops[r->q->op], k0, k1, &hits))
        goto nulls; /* no unpacking */
    st_leaf_unpack(seg, n, v);
    uint8_t hit[ST_MASK_WORDS * 64];
    switch (r->q->op) { /* tight loops, no calls */
    case QO_EQ: for (uint32_t i = 0; i < n; i++) hit[i] = v[i] == k0; break;
    case QO_NE: for (uint32_t i = 0; i < n; i++) hit[i] = v[i] != k0; break;
    case QO_LT: for (uint32_t i = 0; i < n; i++) hit[i] = v[i] < k0; break;
    case QO_LE: for (uint32_t i = 0; i < n; i++) hit[i] = v[i] <= k0; break;
    case QO_GT: for (uint32_t i = 0; i < n; i++) hit[i] = v[i] > k0; break;
    case QO_GE: for (uint32_t i = 0; i < n; i++) hit[i] = v[i] >= k0; break;
    case QO_BETWEEN: for (uint32_t i = 0; i < n; i++) hit[i] = v[i] >= k0 && v[i] <= k1; break;
    case QO_IN:
        if (r->sorted) { /* integers, sorted */
            for (uint32_t i = 0; i < n; i++) {
                strata_value w = {.type = STRATA_TYPE_INT, .u.i = v[i]};
                hit[i] = in_set(r, &w);
            }
            break;
        }
        for (uint32_t i = 0; i < n; i++) {
            bool any = false;
            for (int j = 0; j < r->nvals; j++) any |= v[i] == packed_const(&r->vals[j]);
            hit[i] = any;
        }
        break;
    default: memset(hit, 0, n); break;
    }
    hits = st_mask_from_bytes(hit, n);
nulls:
    *out = kept_rows(r, in, hits, nulls);
    return STRATA_OK;
}

/* A float or double property against one or two numbers over a whole leaf, on the rows of in
 * (as matches() decides each row: null rows match only !=). */
__attribute__((noinline)) static int cmp_real(exec *x, const rnode *r, const cluster_ctx *c,
                                              const st_rowmask *in, st_rowmask *out) {
    const q_step *s = &r->q->lhs.steps[0];
    uint32_t n = c->cr.n;
    st_leafref leaf = st_crec_col(&c->cr, s->col);
    if (!leaf.pgno) return default_rows(x, r, in, out);
    const uint8_t *seg, *nb;
    if ((x->rc = st_leaf_header(x->txn, leaf, n, &seg, x->err))) return x->rc;
    double v[ST_MASK_WORDS * 64];
    if (!st_leaf_reals(seg, n, s->type, v))
        return x->rc = ST_CORRUPT(x->err, "query: a %s leaf was expected for '%s'",
                                  st_type_name(s->type), x->root->name);
    st_rowmask nulls = (nb = st_leaf_nulls(seg)) ? st_mask_load(nb, n, false) : st_mask_none();
    double k0 = real_of(&r->vals[0]), k1 = r->nvals > 1 ? real_of(&r->vals[1]) : 0;
    uint8_t hit[ST_MASK_WORDS * 64];
    switch (r->q->op) {
    case QO_EQ: for (uint32_t i = 0; i < n; i++) hit[i] = real_order(v[i], k0) == 0; break;
    case QO_NE: for (uint32_t i = 0; i < n; i++) hit[i] = real_order(v[i], k0) != 0; break;
    case QO_LT: for (uint32_t i = 0; i < n; i++) hit[i] = real_order(v[i], k0) < 0; break;
    case QO_LE: for (uint32_t i = 0; i < n; i++) hit[i] = real_order(v[i], k0) <= 0; break;
    case QO_GT: for (uint32_t i = 0; i < n; i++) hit[i] = real_order(v[i], k0) > 0; break;
    case QO_GE: for (uint32_t i = 0; i < n; i++) hit[i] = real_order(v[i], k0) >= 0; break;
    case QO_BETWEEN:
        for (uint32_t i = 0; i < n; i++) hit[i] = real_order(v[i], k0) >= 0 && real_order(v[i], k1) <= 0;
        break;
    default: memset(hit, 0, n); break;
    }
    *out = kept_rows(r, in, st_mask_from_bytes(hit, n), nulls);
    return STRATA_OK;
}

static void str_col_drop_folded(str_col *sc) {
    for (int j = 0; j < ST_MASK_WORDS; j++)
        for (; sc->have[j]; sc->have[j] &= sc->have[j] - 1)
            st_text_free(&sc->folded[64 * j + __builtin_ctzll(sc->have[j])]);
}

/* An empty cache (not zeroed whole: its arrays are 29 KB, and an index's few candidates made
 * that a tenth of a lookup). */
static str_cols *str_cols_new(void) {
    str_cols *cs = malloc(sizeof *cs);
    if (!cs) return NULL;
    cs->next = 0;
    for (int i = 0; i < STR_COLS; i++) {
        cs->c[i].cluster = 0;
        memset(cs->c[i].have, 0, sizeof cs->c[i].have);
    }
    return cs;
}

static void str_cols_free(str_cols *cs) {
    if (!cs) return;
    for (int i = 0; i < STR_COLS; i++) str_col_drop_folded(&cs->c[i]);
    free(cs);
}

/* r's column in c as the strings cache holds it (read now when it does not). */
static int str_col_of(exec *x, const rnode *r, const cluster_ctx *c, str_col **out) {
    const q_step *s = &r->q->lhs.steps[0];
    unsigned fold = r->folded ? FOLD_AS | r->q->flags : 0;
    str_cols *cs = c->strs;
    for (int i = 0; i < STR_COLS; i++)
        if (cs->c[i].cluster == c->seq && cs->c[i].col == s->col && cs->c[i].fold == fold)
            return *out = &cs->c[i], STRATA_OK;
    str_col *sc = &cs->c[cs->next];
    cs->next = (cs->next + 1) % STR_COLS;
    str_col_drop_folded(sc);
    sc->cluster = 0;
    sc->col = s->col;
    sc->fold = fold;
    uint32_t n = c->cr.n;
    st_leafref leaf = st_crec_col(&c->cr, s->col);
    sc->dflt = !leaf.pgno;
    memset(sc->read, 0, sizeof sc->read);
    if (leaf.pgno) {
        const uint8_t *nb;
        if ((x->rc = st_leaf_header(x->txn, leaf, n, &sc->seg, x->err))) return x->rc;
        sc->nulls = (nb = st_leaf_nulls(sc->seg)) ? st_mask_load(nb, n, false) : st_mask_none();
    }
    sc->cluster = c->seq;
    *out = sc;
    return STRATA_OK;
}

/* The bytes of sc's rows in `in` (those not read yet read now). */
static int str_rows(exec *x, str_col *sc, const cluster_ctx *c, const st_rowmask *in) {
    for (int j = 0; j < ST_MASK_WORDS; j++)
        for (uint64_t w = in->w[j] & ~sc->read[j]; w; w &= w - 1) {
            uint32_t i = 64 * (uint32_t)j + (uint32_t)__builtin_ctzll(w);
            if ((x->rc = st_leaf_element(x->txn, sc->seg, c->cr.n, i, &sc->bytes[i], &sc->lens[i], x->err)))
                return x->rc;
            sc->read[j] |= 1ull << (i & 63);
        }
    return STRATA_OK;
}

/* A string or binary property against constants over a whole leaf, on the rows of in: each
 * row decided as matches() decides it, without reading its object; one constant of the
 * property's type (no folding, not reversed) by a loop per operator. */
__attribute__((noinline)) static int cmp_str(exec *x, const rnode *r, const cluster_ctx *c,
                                             const st_rowmask *in, st_rowmask *out) {
    str_col *sc;
    if (str_col_of(x, r, c, &sc)) return x->rc;
    strata_type type = r->q->lhs.steps[0].type;
    if (sc->dflt) return default_rows(x, r, in, out);
    if (str_rows(x, sc, c, in)) return x->rc;
    uint64_t hit[ST_MASK_WORDS] = {0};
    const strata_value *k = &r->vals[0];
    q_op op = r->q->op;
    if (!r->folded && !r->q->reversed && r->nvals == 1 && k->type == type && op <= QO_CONTAINS) {
        st_rowmask rows = st_mask_andnot(*in, sc->nulls);
        const uint8_t *b = k->u.bytes.data ? k->u.bytes.data : (const uint8_t *)"";
        uint32_t bl = (uint32_t)k->u.bytes.len;
#define EACH_ROW(test)                                                                  \
    for (int i = st_mask_next(rows, -1); i >= 0; i = st_mask_next(rows, i)) {           \
        const uint8_t *a = sc->bytes[i];                                                \
        uint32_t al = sc->lens[i];                                                      \
        hit[i >> 6] |= (uint64_t)(test) << (i & 63);                                    \
    }
        switch (op) {
        case QO_EQ: EACH_ROW(al == bl && memcmp(a, b, bl) == 0) break;
        case QO_NE: EACH_ROW(al != bl || memcmp(a, b, bl) != 0) break;
        case QO_LT: EACH_ROW(st_bytes_cmp(a, al, b, bl) < 0) break;
        case QO_LE: EACH_ROW(st_bytes_cmp(a, al, b, bl) <= 0) break;
        case QO_GT: EACH_ROW(st_bytes_cmp(a, al, b, bl) > 0) break;
        case QO_GE: EACH_ROW(st_bytes_cmp(a, al, b, bl) >= 0) break;
        case QO_BEGINS: EACH_ROW(al >= bl && memcmp(a, b, bl) == 0) break;
        case QO_ENDS: EACH_ROW(al >= bl && memcmp(a + al - bl, b, bl) == 0) break;
        default: EACH_ROW(st_bytes_contain(a, al, b, bl)) break;
        }
#undef EACH_ROW
        *out = kept_rows(r, in, st_mask_of_words(hit), sc->nulls);
        return STRATA_OK;
    }
    for (int i = st_mask_next(*in, -1); i >= 0; i = st_mask_next(*in, i)) {
        strata_value v = {.type = sc->bytes[i] ? type : STRATA_TYPE_NULL,
                          .u.bytes = {sc->bytes[i], sc->lens[i]}};
        const st_text *vf = NULL;
        if (sc->fold && sc->bytes[i] && type == STRATA_TYPE_STRING) {
            if (!(sc->have[i >> 6] >> (i & 63) & 1)) {
                if (st_text_fold(sc->bytes[i], sc->lens[i], r->q->flags, &sc->folded[i]))
                    return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
                sc->have[i >> 6] |= 1ull << (i & 63);
            }
            vf = &sc->folded[i];
        }
        hit[i >> 6] |= (uint64_t)matches_folded(r, &v, vf) << (i & 63);
    }
    *out = st_mask_of_words(hit);
    return STRATA_OK;
}

/* A comparison row by row (reading each row's object), on the rows of in. */
__attribute__((noinline)) static int cmp_rows(exec *x, const rnode *r, const cluster_ctx *c,
                                              const st_rowmask *in, st_rowmask *out) {
    uint64_t hits[ST_MASK_WORDS] = {0};
    for (int i = st_mask_next(*in, -1); i >= 0; i = st_mask_next(*in, i)) {
        st_objref ref = {NULL, (uint32_t)i, c->rec, c->rec_len};
        bool m;
        if (cmp_object(x, r, x->root, st_packed_at(c->keys, c->cr.n, (uint32_t)i), &ref, &m))
            return x->rc;
        hits[i >> 6] |= (uint64_t)m << (i & 63);
    }
    *out = st_mask_of_words(hits);
    return STRATA_OK;
}

/* Evaluate r on the rows of c in `in`: *out = the rows of in where it holds. */
static int eval_cluster(exec *x, const rnode *r, const cluster_ctx *c, const st_rowmask *in,
                        st_rowmask *out) {
    st_rowmask a, b;
    switch (r->q->kind) {
    case QN_TRUE: *out = *in; return STRATA_OK;
    case QN_FALSE: *out = st_mask_none(); return STRATA_OK;
    case QN_NOT:
        if (eval_cluster(x, r->a, c, in, &a)) return x->rc;
        *out = st_mask_andnot(*in, a);
        return STRATA_OK;
    case QN_AND: /* each term only on the rows the terms before it kept */
        a = *in;
        for (int i = 0; i < r->nkids && st_mask_any(a); i++) {
            if (eval_cluster(x, r->kids[i], c, &a, &b)) return x->rc;
            a = b;
        }
        *out = a;
        return STRATA_OK;
    case QN_OR: { /* each term only on the rows no term before it kept */
        st_rowmask rest = *in;
        a = st_mask_none();
        for (int i = 0; i < r->nkids && st_mask_any(rest); i++) {
            if (eval_cluster(x, r->kids[i], c, &rest, &b)) return x->rc;
            a = st_mask_or(a, b);
            rest = st_mask_andnot(rest, b);
        }
        *out = a;
        return STRATA_OK;
    }
    case QN_CMP:
        if (r == x->decided) { /* the index's exact answer: every candidate */
            *out = *in;
            return STRATA_OK;
        }
        return r->fast ? cmp_fast(x, r, c, in, out)
               : r->fast_real ? cmp_real(x, r, c, in, out)
               : r->fast_str ? cmp_str(x, r, c, in, out) : cmp_rows(x, r, c, in, out);
    }
    return STRATA_OK;
}

/* ------------------------------------------------------------------ candidates from an index */

static int visit_push(void *arg, int64_t key) { return st_keyvec_push(arg, key); }

/* A comparison the index can answer (candidates that then face the whole predicate). */
static const rnode *index_node(exec *x, const rnode *r) {
    if (r->q->kind == QN_AND) { /* an equality (or TEXT) before a range: it selects fewer */
        const rnode *range = NULL;
        for (int i = 0; i < r->nkids; i++) {
            const rnode *a = index_node(x, r->kids[i]);
            if (a && (a->fts || a->q->op == QO_EQ || a->q->op == QO_IN)) return a;
            if (!range) range = a;
        }
        return range;
    }
    if (r->q->kind != QN_CMP || r->geo) return NULL;
    const q_node *q = r->q;
    if (r->fts) { /* TEXT on the root's full-text property, with a term the index answers */
        strata_table_t *t;
        st_prop *p;
        return q->lhs.nsteps == 1 && !q->lhs.steps[0].back &&
               !step_prop(x, &q->lhs.steps[0], &t, &p) && (p->flags & STRATA_PROP_FULLTEXT) &&
               st_fts_served(r->fts) ? r : NULL;
    }
    if (q->lhs.kind != QE_PATH || q->lhs.nsteps != 1 || q->lhs.agg != QA_NONE ||
        q->quant != QQ_ANY || q->flags || q->reversed || q->lhs.steps[0].back ||
        q->rhs.kind == QE_PATH || q->rhs.kind == QE_SUBQUERY)
        return NULL;
    strata_table_t *t;
    st_prop *p;
    if (step_prop(x, &q->lhs.steps[0], &t, &p) || !(p->flags & STRATA_PROP_INDEXED)) return NULL;
    for (int i = 0; i < r->nvals; i++)
        if (r->vals[i].type != p->type && !(q->op == QO_EQ || q->op == QO_IN ? r->vals[i].type == STRATA_TYPE_NULL : false))
            return NULL;
    if (!st_index_complete(p) && q->op != QO_EQ && q->op != QO_IN) return NULL; /* partial */
    switch (q->op) {
    case QO_EQ: case QO_IN: case QO_LT: case QO_LE: case QO_GT: case QO_GE: case QO_BETWEEN:
        return r;
    case QO_BEGINS: return p->type == STRATA_TYPE_STRING ? r : NULL;
    default: return NULL;
    }
}

static bool lower_bound_op(q_op op) { return op == QO_GT || op == QO_GE; }
static bool upper_bound_op(q_op op) { return op == QO_LT || op == QO_LE; }

/* For a one-sided range r the index serves, a term ANDed with it in root that bounds the same
 * property from the other side (`p > a AND p < b`), or NULL. */
static const rnode *other_bound(const rnode *root, const rnode *r) {
    q_op op = r->q->op;
    if (root->q->kind != QN_AND || (!lower_bound_op(op) && !upper_bound_op(op))) return NULL;
    for (int i = 0; i < root->nkids; i++) {
        const rnode *k = root->kids[i];
        const q_node *q = k->q;
        if (k == r || q->kind != QN_CMP || q->lhs.kind != QE_PATH || q->lhs.nsteps != 1 ||
            q->lhs.agg != QA_NONE || q->quant != QQ_ANY || q->flags || q->reversed ||
            q->lhs.steps[0].back || q->lhs.steps[0].col != r->q->lhs.steps[0].col ||
            (q->rhs.kind != QE_CONST && q->rhs.kind != QE_ARG) || k->nvals != 1 || k->any_val ||
            k->vals[0].type != r->vals[0].type)
            continue;
        if (lower_bound_op(op) ? upper_bound_op(q->op) : lower_bound_op(q->op)) return k;
    }
    return NULL;
}

/* Candidates for r from its index (narrowed by other, other_bound's), sorted; *exact: each
 * satisfies r (TEXT when the index answers it, an equality on a property not mixed). */
static int index_candidates(exec *x, const rnode *r, const rnode *other, keyvec *out, bool *exact) {
    strata_table_t *t;
    st_prop *p;
    *exact = false;
    if (step_prop(x, &r->q->lhs.steps[0], &t, &p)) return x->rc;
    if (r->fts) {
        free(out->v);
        out->v = NULL;
        out->cap = 0;
        x->rc = st_fts_candidates(r->fts, t, p, &out->v, &out->n, exact, x->err);
        out->cap = out->n;
        return x->rc;
    }
    if (r->q->op == QO_EQ || r->q->op == QO_IN) {
        /* the index finds the objects whose value equals one of r's (a value kept as a prefix
         * is compared whole): r's answer, where the query's == is that equality (a mixed
         * property's is not: 1 == 1.0) */
        *exact = p->type != STRATA_TYPE_MIXED;
        for (int i = 0; i < r->nvals; i++) {
            /* one descent when the keys fit the room left (most equalities find a few), a
             * second with the room made when they did not */
            size_t at = out->n, n;
            if (keyvec_room(out, at + ST_KEYVEC_FIRST))
                return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
            if ((x->rc = st_index_find(t, p, &r->vals[i], out->v + at, out->cap - at, &n, x->err)))
                return x->rc;
            if (n > out->cap - at) {
                if (keyvec_room(out, at + n))
                    return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
                if ((x->rc = st_index_find(t, p, &r->vals[i], out->v + at, n, &n, x->err)))
                    return x->rc;
            }
            out->n = at + n;
        }
    } else {
        st_index_bounds b = {NULL, NULL, false, false, NULL, false, NULL};
        switch (r->q->op) {
        case QO_LT: b.hi = &r->vals[0]; break;
        case QO_LE: b.hi = &r->vals[0]; b.hi_incl = true; break;
        case QO_GT: b.lo = &r->vals[0]; break;
        case QO_GE: b.lo = &r->vals[0]; b.lo_incl = true; break;
        case QO_BETWEEN: b.lo = &r->vals[0]; b.hi = &r->vals[1]; b.lo_incl = b.hi_incl = true; break;
        case QO_BEGINS: b.prefix = &r->vals[0]; break;
        default: break;
        }
        if (other) {
            bool incl = other->q->op == QO_LE || other->q->op == QO_GE;
            if (upper_bound_op(other->q->op)) b.hi = &other->vals[0], b.hi_incl = incl;
            else b.lo = &other->vals[0], b.lo_incl = incl;
        }
        if ((x->rc = st_index_scan(t, p, &b, visit_push, out, x->err))) return x->rc;
    }
    st_keyvec_unique(out); /* IN lists may name a value twice */
    return STRATA_OK;
}

/* ------------------------------------------------------------------ the run */

/* Does evaluating r read objects row by row (and so need the cluster's keys)? */
static bool reads_rows(const rnode *r) {
    if (!r) return false;
    if (r->q->kind == QN_CMP) return !r->fast && !r->fast_real && !r->fast_str;
    if (r->q->kind == QN_NOT) return reads_rows(r->a);
    for (int i = 0; r->kids && i < r->nkids; i++)
        if (reads_rows(r->kids[i])) return true;
    return false;
}

/* A scan evaluates each cluster SCAN_AHEAD clusters after the tree walk passed it: the walk
 * copies the cluster's record into a ring and asks memory for the leaves the query will read
 * (the packed comparisons' columns, the keys when it collects them), so that when the cluster's
 * turn comes their cache lines have arrived, and the misses of several clusters overlap
 * instead of queueing one after another (a cluster's leaves sit on a page of their own). */
#define SCAN_AHEAD 8
#define SCAN_COLS 8          /* columns asked for ahead, at most */
#define SCAN_PREFETCH 512    /* bytes of each leaf asked for, at most */

typedef struct ring_slot {
    uint8_t *rec;            /* a copy of the record (cap bytes), parsed into cr */
    size_t len, cap;
    st_crec cr;
} ring_slot;

typedef struct scan {
    exec *x;
    const rnode *root;
    keyvec *out;       /* the matching keys, or NULL */
    uint64_t *count;   /* how many match, or NULL */
    bool want_keys;    /* read each cluster's keys leaf */
    uint32_t cols[SCAN_COLS];
    int ncols;
    ring_slot ring[SCAN_AHEAD];
    unsigned head, held;
    str_cols *strs;    /* for cmp_str's terms (NULL when there are none) */
    uint64_t clusters; /* evaluated so far */
    size_t pins;       /* the transaction's pins when the scan began (st_pins_mark) */
} scan;

static bool reads_strings(const rnode *r) {
    if (!r) return false;
    if (r->q->kind == QN_CMP) return r->fast_str;
    if (r->q->kind == QN_NOT) return reads_strings(r->a);
    for (int i = 0; r->kids && i < r->nkids; i++)
        if (reads_strings(r->kids[i])) return true;
    return false;
}

/* The columns r's packed comparisons read (up to SCAN_COLS). */
static void fast_cols(scan *s, const rnode *r) {
    if (!r) return;
    if (r->q->kind == QN_NOT) fast_cols(s, r->a);
    for (int i = 0; r->kids && i < r->nkids; i++) fast_cols(s, r->kids[i]);
    if (r->q->kind != QN_CMP || !r->fast) return;
    uint32_t col = r->q->lhs.steps[0].col;
    for (int i = 0; i < s->ncols; i++)
        if (s->cols[i] == col) return;
    if (s->ncols < SCAN_COLS) s->cols[s->ncols++] = col;
}

/* Evaluate the cluster of a ring slot. */
static int scan_one(scan *s, const ring_slot *pc) {
    exec *x = s->x;
    cluster_ctx c = {pc->rec, pc->len, pc->cr, NULL, s->strs, ++s->clusters};
    if (s->want_keys &&
        (x->rc = st_leaf_header(x->txn, st_crec_entry(&c.cr, 0, NULL), c.cr.n, &c.keys, x->err)))
        return x->rc;
    st_rowmask all = st_mask_first(c.cr.n), sel;
    if (eval_cluster(x, s->root, &c, &all, &sel)) return x->rc;
    if (s->count) *s->count += st_mask_count(sel);
    for (int i = s->out ? st_mask_next(sel, -1) : -1; i >= 0; i = st_mask_next(sel, i))
        if (st_keyvec_push(s->out, st_packed_at(c.keys, c.cr.n, (uint32_t)i)))
            return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    /* Nothing read from the cluster is kept past here (keys are copied, the strings cache is
     * per cluster): a packed table's unpacked column pages go back to the cache (a plain file's
     * transaction holds none: no call). */
    if (x->txn->pins) s->pins = st_pins_let_go_columns(x->txn, s->pins);
    return STRATA_OK;
}

/* One cluster of a scan (st_bt_visit): into the ring, its leaves asked for; the ring's oldest
 * evaluated when the ring is full. */
static int scan_cluster(void *arg, const uint8_t *k, size_t kl, const uint8_t *rec,
                        size_t rec_len) {
    scan *s = arg;
    exec *x = s->x;
    (void)kl; /* 8: an integer-key tree (checked by the tree) */
    if (s->held == SCAN_AHEAD) {
        if (scan_one(s, &s->ring[s->head])) return x->rc;
        s->head = (s->head + 1) % SCAN_AHEAD;
        s->held--;
    }
    ring_slot *pc = &s->ring[(s->head + s->held) % SCAN_AHEAD];
    if (pc->cap < rec_len) {
        uint8_t *grown = realloc(pc->rec, rec_len);
        if (!grown) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
        pc->rec = grown;
        pc->cap = rec_len;
    }
    memcpy(pc->rec, rec, rec_len);
    pc->len = rec_len;
    if ((x->rc = st_crec_parse(x->root->name, st_rd64(k), pc->rec, rec_len, &pc->cr, x->err)))
        return x->rc;
    s->held++;
    if (s->want_keys) st_leaf_prefetch(x->txn, st_crec_entry(&pc->cr, 0, NULL), 1);
    for (int i = 0; i < s->ncols; i++) {
        st_leafref leaf = st_crec_col(&pc->cr, s->cols[i]);
        if (leaf.pgno) st_leaf_prefetch(x->txn, leaf, SCAN_PREFETCH);
    }
    return STRATA_OK;
}

/* Scan every cluster of tree with s: the walk, then the clusters still in the ring. */
static int scan_all(scan *s, strata_tree_t *tree) {
    exec *x = s->x;
    s->pins = st_pins_mark(x->txn);
    fast_cols(s, s->root);
    if (reads_strings(s->root) && !(s->strs = str_cols_new()))
        return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    int rc = st_bt_each(tree, scan_cluster, s, x->err);
    if (rc && !x->rc) x->rc = rc;
    for (; !x->rc && s->held; s->held--, s->head = (s->head + 1) % SCAN_AHEAD)
        scan_one(s, &s->ring[s->head]);
    for (int i = 0; i < SCAN_AHEAD; i++) free(s->ring[i].rec);
    str_cols_free(s->strs);
    return x->rc;
}

static int found(exec *x, int64_t key, keyvec *out, uint64_t *count) {
    if (count) (*count)++;
    if (out && st_keyvec_push(out, key)) return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    return STRATA_OK;
}

/* The candidates an index gave (keys ascending) checked against the whole predicate cluster by
 * cluster, as a scan checks its clusters but on a mask of the candidates' rows, so that a long
 * predicate runs column-wise here too (object by object, a chain of 50,000 terms read each
 * candidate 50,000 times). A candidate alone in its cluster (a selective index: one in each
 * of thousands of clusters) is checked object by object: a column-wise term would read its
 * whole leaf for one row; so is one in a cluster this write transaction holds decoded. Records
 * stay where they are during the run, so two candidates share a cluster when they share its
 * record's address. */
static int eval_candidates(exec *x, const rnode *root, const keyvec *cand, keyvec *out,
                           uint64_t *count) {
    str_cols *strs = NULL;
    bool strings = reads_strings(root);
    uint64_t seq = 0;
    st_objref ref, next;
    bool have_next = false;
    for (size_t i = 0, j; i < cand->n; i = j) {
        if (have_next) ref = next;
        else if ((x->rc = st_obj_locate(x->root, cand->v[i], &ref, x->err))) break;
        j = i + 1;
        have_next = !ref.dc && j < cand->n;
        if (have_next && (x->rc = st_obj_locate(x->root, cand->v[j], &next, x->err))) break;
        if (!have_next || next.dc || next.rec != ref.rec) { /* alone in its cluster */
            bool m;
            if (eval_object(x, root, x->root, cand->v[i], &ref, &m) || (m && found(x, cand->v[i], out, count)))
                break;
            continue;
        }
        have_next = false;
        if (strings && !strs && !(strs = str_cols_new())) {
            x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
            break;
        }
        cluster_ctx c = {ref.rec, ref.rec_len, {0}, NULL, strs, ++seq};
        if ((x->rc = st_crec_parse(x->root->name, (uint64_t)cand->v[i], ref.rec, ref.rec_len, &c.cr, x->err)) ||
            (x->rc = st_leaf_header(x->txn, st_crec_entry(&c.cr, 0, NULL), c.cr.n, &c.keys, x->err)))
            break;
        uint32_t n = c.cr.n;
        int64_t last = st_packed_at(c.keys, n, n - 1);
        uint64_t rows[ST_MASK_WORDS] = {0};
        rows[ref.row >> 6] |= 1ull << (ref.row & 63);
        for (; j < cand->n && cand->v[j] <= last; j++) { /* the cluster's other candidates */
            uint32_t row = st_packed_lower_bound(c.keys, n, cand->v[j]);
            if (row >= n || st_packed_at(c.keys, n, row) != cand->v[j]) {
                x->rc = ST_CORRUPT(x->err, "table '%s': the index names object %lld, which its "
                                   "cluster does not hold", x->root->name, (long long)cand->v[j]);
                break;
            }
            rows[row >> 6] |= 1ull << (row & 63);
        }
        if (x->rc) break;
        st_rowmask in = st_mask_of_words(rows), sel;
        if (eval_cluster(x, root, &c, &in, &sel)) break;
        for (int r = st_mask_next(sel, -1); r >= 0; r = st_mask_next(sel, r))
            if (found(x, st_packed_at(c.keys, n, (uint32_t)r), out, count)) break;
        if (x->rc) break;
    }
    str_cols_free(strs);
    return x->rc;
}

static int find_matches(exec *x, const rnode *root, keyvec *out, uint64_t *count) {
    const rnode *ix = index_node(x, root);
    if (x->rc) return x->rc;
    if (ix) {
        keyvec cand = {0};
        bool exact;
        if (index_candidates(x, ix, other_bound(root, ix), &cand, &exact)) {
            free(cand.v);
            return x->rc;
        }
        if (exact && ix == root) { /* the index's answer is the answer */
            if (count) *count += cand.n;
            if (out && out->n == 0) {
                free(out->v);
                *out = cand;
                return STRATA_OK;
            }
            if (out) {
                for (size_t i = 0; i < cand.n && !x->rc; i++)
                    if (st_keyvec_push(out, cand.v[i])) x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
            }
            free(cand.v);
            return x->rc;
        }
        x->decided = exact ? ix : NULL;
        eval_candidates(x, root, &cand, out, count);
        x->decided = NULL;
        free(cand.v);
        return x->rc;
    }
    strata_tree_t *tree;
    int rc = st_table_tree_existing(x->root, ST_TABLE_CLUSTERS, &tree, x->err);
    if (rc) return x->rc = rc;
    if (!tree) return STRATA_OK;
    /* a count of packed comparisons needs no keys */
    scan s = {.x = x, .root = root, .out = out, .count = count,
              .want_keys = out || reads_rows(root)};
    return scan_all(&s, tree);
}

static int exec_begin(exec *x, strata_query_t *q, strata_txn_t *txn, const strata_value *args,
                      size_t nargs, strata_error *err) {
    memset(x, 0, offsetof(exec, ints)); /* (ints is scratch: 2 KB not zeroed a query) */
    x->txn = txn;
    x->err = err;
    x->args = args;
    x->nargs = nargs;
    int rc = st_txn_check(txn, false, err);
    if (rc || (rc = st_store_get(txn, &x->store, err))) return rc;
    x->root = st_table_by_id(x->store, q->table_id);
    if (!x->root || strcmp(x->root->name, q->table) != 0)
        return st_err(err, STRATA_ERR_NOT_FOUND, "query: table '%s' no longer exists", q->table);
    /* a write transaction's pending changes go to the tree first */
    if (txn->write) {
        for (size_t i = 0; i < x->store->ntables; i++)
            if (!x->store->tables[i]->dropped && (rc = st_clusters_flush(x->store->tables[i], err))) return rc;
    }
    return STRATA_OK;
}

int st_query_count(strata_query_t *q, strata_txn_t *txn, const strata_value *args, size_t nargs,
                   uint64_t *count, strata_error *err) {
    if (q->nsort || q->ndistinct || q->limit >= 0) {
        strata_results_t *r;
        int rc = st_query_run(q, txn, args, nargs, &r, err);
        if (rc) return rc;
        *count = r->n;
        free(r->keys);
        free(r);
        return STRATA_OK;
    }
    exec x;
    int rc = exec_begin(&x, q, txn, args, nargs, err);
    if (rc) return rc;
    rnode *root = NULL;
    *count = 0;
    if (bind(&x, q->root, args, nargs, &root) == STRATA_OK) find_matches(&x, root, NULL, count);
    rnode_free(root);
    return x.rc;
}

/* ------------------------------------------------------------------ sort and distinct */

typedef struct sortrow {
    int64_t key;
    size_t pos;
    strata_value *vals;      /* one per sort (or distinct) key */
} sortrow;

typedef struct sortspec {
    const q_sort *keys;
    int n;
} sortspec;

static _Thread_local const sortspec *g_spec;

/* A sort key path that a null link broke before its last step (not a null value): such rows go
 * after every other when ascending, before when descending (realm-core's order). */
#define Q_SORT_BROKEN_LINK ((strata_type)0x7f)

static int sort_value_cmp(const strata_value *a, const strata_value *b) {
    if (a->type == Q_SORT_BROKEN_LINK || b->type == Q_SORT_BROKEN_LINK)
        return (a->type == Q_SORT_BROKEN_LINK) - (b->type == Q_SORT_BROKEN_LINK);
    if (a->type == STRATA_TYPE_NULL || b->type == STRATA_TYPE_NULL)
        return (a->type != STRATA_TYPE_NULL) - (b->type != STRATA_TYPE_NULL); /* nulls first */
    bool ok;
    int o = value_order(a, b, &ok);
    if (!ok && a->type == STRATA_TYPE_DECIMAL128 && b->type == STRATA_TYPE_DECIMAL128) { /* NaN last */
        bool an = a->u.decimal.high >> 58 == 0x1F || a->u.decimal.high >> 58 == 0x3F;
        bool bn = b->u.decimal.high >> 58 == 0x1F || b->u.decimal.high >> 58 == 0x3F;
        return (an > bn) - (an < bn);
    }
    if (!ok) return (a->type > b->type) - (a->type < b->type);
    return o;
}

static int sortrow_cmp(const void *pa, const void *pb) {
    const sortrow *a = pa, *b = pb;
    for (int i = 0; i < g_spec->n; i++) {
        int c = sort_value_cmp(&a->vals[i], &b->vals[i]);
        if (c) return g_spec->keys[i].desc ? -c : c;
    }
    return (a->pos > b->pos) - (a->pos < b->pos); /* stable */
}

/* The single value of a sort/distinct key path for object key (Q_SORT_BROKEN_LINK through a null
 * link). */
static int key_value(exec *x, const q_sort *s, int64_t key, strata_value *out) {
    strata_table_t *t = x->root;
    for (int i = 0; i < s->nsteps; i++) {
        strata_table_t *pt;
        st_prop *p;
        st_objref ref;
        if (step_prop(x, &s->steps[i], &pt, &p)) return x->rc;
        if ((x->rc = st_obj_locate(t, key, &ref, x->err)) || (x->rc = st_obj_read(t, &ref, p, out, x->err)))
            return x->rc;
        if (i == s->nsteps - 1) return STRATA_OK;
        if (out->type == STRATA_TYPE_NULL) {
            out->type = Q_SORT_BROKEN_LINK;
            return STRATA_OK;
        }
        key = out->u.link;
        t = st_table_by_id(x->store, p->target);
    }
    return STRATA_OK;
}

static int load_rows(exec *x, const keyvec *k, const q_sort *keys, int nkeys, sortrow **rows) {
    *rows = calloc(k->n + 1, sizeof **rows);
    strata_value *vals = calloc(k->n * (size_t)nkeys + 1, sizeof *vals);
    if (!*rows || !vals) {
        free(*rows);
        free(vals);
        return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < k->n; i++) {
        (*rows)[i] = (sortrow){k->v[i], i, vals + i * (size_t)nkeys};
        for (int j = 0; j < nkeys; j++)
            if (key_value(x, &keys[j], k->v[i], &(*rows)[i].vals[j])) return x->rc;
    }
    return STRATA_OK;
}

/* (sorting moves rows: the value block starts at the smallest vals pointer) */
static void free_rows(sortrow *rows, size_t n) {
    if (!rows) return;
    strata_value *base = rows[0].vals;
    for (size_t i = 1; i < n; i++)
        if (rows[i].vals < base) base = rows[i].vals;
    free(base);
    free(rows);
}

static int apply_sort(exec *x, strata_query_t *q, keyvec *k) {
    if (!q->nsort || k->n < 2) return STRATA_OK;
    sortrow *rows;
    if (load_rows(x, k, q->sort, q->nsort, &rows)) return free_rows(rows, k->n), x->rc;
    sortspec spec = {q->sort, q->nsort};
    g_spec = &spec;
    qsort(rows, k->n, sizeof *rows, sortrow_cmp);
    for (size_t i = 0; i < k->n; i++) k->v[i] = rows[i].key;
    free_rows(rows, k->n);
    return STRATA_OK;
}

/* DISTINCT keeps the first object of each combination of values; an object whose key path a
 * null link breaks has no value and is dropped (realm-core's DISTINCT). */
static int apply_distinct(exec *x, strata_query_t *q, keyvec *k) {
    if (!q->ndistinct || k->n == 0) return STRATA_OK;
    sortrow *rows;
    if (load_rows(x, k, q->distinct, q->ndistinct, &rows)) return free_rows(rows, k->n), x->rc;
    q_sort asc[Q_MAX_SORT];
    for (int i = 0; i < q->ndistinct; i++) asc[i] = q->distinct[i], asc[i].desc = false;
    sortspec spec = {asc, q->ndistinct};
    g_spec = &spec;
    qsort(rows, k->n, sizeof *rows, sortrow_cmp); /* groups, each in original order */
    uint8_t *keep = calloc(k->n, 1);
    if (!keep) return free_rows(rows, k->n), x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
    for (size_t i = 0; i < k->n; i++) {
        bool first = i == 0;
        for (int j = 0; !first && j < q->ndistinct; j++)
            first = sort_value_cmp(&rows[i].vals[j], &rows[i - 1].vals[j]) != 0;
        bool broken = false;
        for (int j = 0; j < q->ndistinct; j++) broken |= rows[i].vals[j].type == Q_SORT_BROKEN_LINK;
        if (first && !broken) keep[rows[i].pos] = 1;
    }
    size_t m = 0;
    for (size_t i = 0; i < k->n; i++)
        if (keep[i]) k->v[m++] = k->v[i];
    free(keep);
    free_rows(rows, k->n);
    k->n = m;
    return STRATA_OK;
}

/* SORT(p ASC) LIMIT(n) on an indexed p: walk the index in order and stop at n matches (the
 * index order is the sort order: nulls first, then values, equal values by key). The index
 * hands out keys of objects spread over the table: a read transaction takes them WALK_BATCH at
 * a time and asks memory for each one's cluster record, then for the leaf the predicate reads
 * (st_obj_locate_batch), before evaluating any, so that the misses of a batch overlap instead
 * of queueing. (Asking for the values too measured no faster.) */
#define WALK_BATCH ST_LOCATE_BATCH

typedef struct ordered_walk {
    exec *x;
    const rnode *root;
    keyvec *out;
    size_t limit;
    size_t batch;            /* WALK_BATCH, 1 in a write transaction (its clusters may be decoded) */
    const st_prop *only;     /* the one property the predicate reads (ST_READS_NOTHING: none),
                                NULL: several */
    size_t n;
    int64_t keys[WALK_BATCH];
} ordered_walk;

/* Evaluate the batch in order: 1 once the limit is reached. */
static int ordered_flush(ordered_walk *w) {
    exec *x = w->x;
    strata_table_t *t = x->root;
    st_objref refs[WALK_BATCH];
    size_t n = w->n;
    w->n = 0;
    /* (locating asks for the read leaves' headers) */
    if ((x->rc = st_obj_locate_batch(t, w->keys, n, w->only, refs, x->err))) return x->rc;
    for (size_t i = 0; i < n; i++) {
        bool m;
        if (eval_object(x, w->root, t, w->keys[i], &refs[i], &m)) return x->rc;
        if (m && st_keyvec_push(w->out, w->keys[i]))
            return x->rc = st_err(x->err, STRATA_ERR_NO_MEMORY, "out of memory");
        if (w->out->n >= w->limit) return 1;
    }
    return 0;
}

/* The root table's property a predicate reads when it reads one (*col, 0 when none yet),
 * UINT32_MAX when it reads several or cannot say. */
static void first_steps(const q_node *q, uint32_t *col) {
    const q_expr *sides[2] = {&q->lhs, &q->rhs};
    switch (q->kind) {
    case QN_TRUE:
    case QN_FALSE: return;
    case QN_NOT: first_steps(q->a, col); return;
    case QN_AND:
    case QN_OR:
        for (int i = 0; i < q->nkids; i++) first_steps(q->kids[i], col);
        return;
    case QN_CMP:
        for (int i = 0; i < 2; i++) {
            const q_expr *e = sides[i];
            if (e->kind != QE_PATH && e->kind != QE_SUBQUERY) continue;
            /* (a backlink step names the origin's property, not one of the root table's) */
            uint32_t c = e->nsteps && !e->steps[0].back ? e->steps[0].col : UINT32_MAX;
            *col = *col == 0 || *col == c ? c : UINT32_MAX;
        }
        return;
    default: *col = UINT32_MAX; return;
    }
}

static int ordered_visit(void *arg, int64_t key) {
    ordered_walk *w = arg;
    w->keys[w->n++] = key;
    return w->n < w->batch ? 0 : ordered_flush(w);
}

/* *used false: the plan does not apply (the caller sorts). */
static int sorted_by_index(exec *x, strata_query_t *q, const rnode *root, keyvec *k, bool *used) {
    *used = false;
    if (q->nsort != 1 || q->ndistinct || q->limit < 0 || q->sort[0].desc || q->sort[0].nsteps != 1)
        return STRATA_OK;
    strata_table_t *t;
    st_prop *p;
    if (step_prop(x, &q->sort[0].steps[0], &t, &p) || !(p->flags & STRATA_PROP_INDEXED) ||
        p->type == STRATA_TYPE_MIXED /* its index groups values by type, not in sort order */ ||
        !st_index_complete(p)) {
        x->rc = STRATA_OK;
        return STRATA_OK;
    }
    if (q->limit == 0) return *used = true, STRATA_OK;
    bool truncated = false;
    st_index_bounds b = {NULL, NULL, false, false, NULL, true, &truncated};
    uint32_t col = 0;
    first_steps(q->root, &col);
    const st_prop *only = col == 0 ? ST_READS_NOTHING : col == UINT32_MAX ? NULL : st_prop_find(x->root, col);
    ordered_walk w = {x, root, k, (size_t)q->limit, x->txn->write ? 1 : WALK_BATCH, only, 0, {0}};
    int rc = st_index_scan(t, p, &b, ordered_visit, &w, x->err);
    if (rc == 0 && w.n) rc = ordered_flush(&w); /* the index ended inside a batch */
    if (rc < 0 || rc > 1) return x->rc = rc;
    if (truncated) { /* long strings: the index order is not the value order there */
        k->n = 0;
        return STRATA_OK;
    }
    *used = true;
    return STRATA_OK;
}

int st_query_run(strata_query_t *q, strata_txn_t *txn, const strata_value *args, size_t nargs,
                 strata_results_t **out, strata_error *err) {
    exec x;
    int rc = exec_begin(&x, q, txn, args, nargs, err);
    if (rc) return rc;
    rnode *root = NULL;
    keyvec k = {0};
    bool ordered = false;
    if (bind(&x, q->root, args, nargs, &root) == STRATA_OK &&
        sorted_by_index(&x, q, root, &k, &ordered) == STRATA_OK &&
        (ordered || (find_matches(&x, root, &k, NULL) == STRATA_OK &&
                     apply_sort(&x, q, &k) == STRATA_OK && apply_distinct(&x, q, &k) == STRATA_OK))) {
        if (q->limit >= 0 && (uint64_t)q->limit < k.n) k.n = (size_t)q->limit;
        strata_results_t *r = calloc(1, sizeof *r);
        if (!r) x.rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        else {
            r->keys = k.v;
            r->n = k.n;
            r->table_id = q->table_id;
            k.v = NULL;
            *out = r;
        }
    }
    free(k.v);
    rnode_free(root);
    return x.rc;
}

/* ------------------------------------------------------------------ one object at a time */

int st_query_matches(strata_query_t *q, strata_txn_t *txn, const strata_value *args, size_t nargs,
                     int64_t key, bool *out, strata_error *err) {
    exec x;
    int rc = exec_begin(&x, q, txn, args, nargs, err);
    if (rc) return rc;
    *out = false;
    rnode *root = NULL;
    st_objref ref;
    if (bind(&x, q->root, args, nargs, &root) == STRATA_OK) {
        int lrc = st_obj_locate(x.root, key, &ref, err);
        if (lrc == STRATA_OK) eval_object(&x, root, x.root, key, &ref, out);
        else if (lrc != STRATA_ERR_NOT_FOUND) x.rc = lrc; /* no such object: no match */
    }
    rnode_free(root);
    return x.rc;
}

/* The sort values of one object, for st_query_position. */
static int sort_values(exec *x, const strata_query_t *q, int64_t key, strata_value *vals) {
    for (int i = 0; i < q->nsort; i++)
        if (key_value(x, &q->sort[i], key, &vals[i])) return x->rc;
    return STRATA_OK;
}

int st_query_position(strata_query_t *q, strata_txn_t *txn, const int64_t *keys, size_t n,
                      int64_t key, size_t *pos, strata_error *err) {
    if (q->ndistinct || q->limit >= 0)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "strata_query_position: a query with DISTINCT or LIMIT places no single object");
    exec x;
    int rc = exec_begin(&x, q, txn, NULL, 0, err);
    if (rc) return rc;
    strata_value mine[Q_MAX_SORT], theirs[Q_MAX_SORT];
    if (q->nsort && sort_values(&x, q, key, mine)) return x.rc;
    size_t lo = 0, hi = n;
    while (lo < hi) { /* the first element that sorts after key (ties: by key, as a run's sort) */
        size_t mid = lo + (hi - lo) / 2;
        int c = 0;
        if (q->nsort && sort_values(&x, q, keys[mid], theirs)) return x.rc;
        for (int i = 0; c == 0 && i < q->nsort; i++) {
            c = sort_value_cmp(&theirs[i], &mine[i]);
            if (q->sort[i].desc) c = -c;
        }
        if (c == 0) c = (keys[mid] > key) - (keys[mid] < key);
        if (c <= 0) lo = mid + 1;
        else hi = mid;
    }
    *pos = lo;
    return STRATA_OK;
}

