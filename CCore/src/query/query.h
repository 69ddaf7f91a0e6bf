/*
 * query.h — the query engine's shared types: the parsed predicate (query_parse.c), its execution
 * (query_exec.c), text matching (text.c) and the TEXT operator's terms (fulltext.c).
 *
 * A compiled query names properties by id, so it stays valid across transactions as long as the
 * properties it uses exist with the same types (each run checks that).
 */
#ifndef STRATA_QUERY_H
#define STRATA_QUERY_H

#include "objects/objects.h"

/* Q_MAX_DEPTH: nesting of parentheses, NOT and SUBQUERY (SQLite allows 1,000 for expressions);
 * parsing, binding and evaluating recurse once per level, AND/OR chains do not (n-ary nodes). */
enum { Q_MAX_PATH = 8, Q_MAX_SORT = 8, Q_MAX_DEPTH = 1000 };

/* One step of a key path: a property of a table (a link or list of links continues the path). */
typedef struct q_step {
    uint32_t table;          /* table id the step reads (back: the origin table) */
    uint32_t col;            /* property id (back: the origin's link property) */
    uint8_t type, flags;     /* the property's, checked again at run time */
    bool back;               /* @links.Table.property: the objects linking here through it */
    uint8_t map;             /* a map property: its values (Q_MAP_VALUES, also `.@values`), its
                                keys (`.@keys`) or the value of one key (`['key']`) */
    uint32_t mkey_len;       /* Q_MAP_KEY: the key, in the query's own storage, */
    const char *mkey;
    int mkey_arg;            /* or the argument that gives it ($n), else -1 */
} q_step;

enum { Q_MAP_VALUES, Q_MAP_KEYS, Q_MAP_KEY };

/* A step yields several objects or values: a list, a map's values or keys, or backlinks. */
static inline bool q_step_many(const q_step *s) {
    return s->back || ((s->flags & STRATA_PROP_LIST) && s->map != Q_MAP_KEY);
}

/* The type of the values a step reads: a map's keys are strings. */
static inline strata_type q_step_type(const q_step *s) {
    return s->map == Q_MAP_KEYS ? STRATA_TYPE_STRING : (strata_type)s->type;
}

typedef enum q_agg { QA_NONE, QA_COUNT, QA_SUM, QA_AVG, QA_MIN, QA_MAX } q_agg;

typedef enum q_expr_kind { QE_PATH, QE_CONST, QE_ARG, QE_LIST, QE_SUBQUERY } q_expr_kind;

typedef struct q_expr {
    q_expr_kind kind;
    /* QE_PATH (QE_SUBQUERY: the path to the collection) */
    q_step steps[Q_MAX_PATH];
    int nsteps;
    q_agg agg;               /* @count/@size, @sum, @avg, @min, @max on the last step */
    bool agg_links;          /* list.@sum.property: the aggregate is of the last step's values
                                over the objects of the step before it (a list of links) */
    struct q_node *sub;      /* QE_SUBQUERY: the predicate on each object of the collection */
    /* QE_CONST (strings point into the query's own storage) */
    strata_value value;
    /* QE_ARG */
    int arg;
    /* QE_LIST: {a, b, ...} of constants or arguments */
    struct q_expr *items;
    int nitems;
    int column;              /* 1-based position in the text, for errors */
} q_expr;

typedef enum q_op {
    QO_EQ, QO_NE, QO_LT, QO_LE, QO_GT, QO_GE, QO_BEGINS, QO_ENDS, QO_CONTAINS, QO_LIKE, QO_IN,
    QO_BETWEEN,
    QO_GEOWITHIN,            /* a link to an embedded point within a region (geo.c); so is
                                IN $n when the argument is a region */
    QO_TEXT                  /* the words of a string (fulltext.c) */
} q_op;

enum { QF_CASE = 1, QF_DIACRITIC = 2 };        /* [c], [d] */
typedef enum q_quant { QQ_ANY, QQ_ALL, QQ_NONE } q_quant;

typedef enum q_node_kind { QN_AND, QN_OR, QN_NOT, QN_TRUE, QN_FALSE, QN_CMP } q_node_kind;

typedef struct q_node {
    q_node_kind kind;
    struct q_node *a;        /* NOT: the negated predicate */
    struct q_node **kids;    /* AND/OR: the terms, in order (nkids >= 2) */
    int nkids;
    q_op op;
    unsigned flags;
    bool reversed;           /* a string operator with the constant on the left:
                                'abc' CONTAINS name is true where name is in 'abc' */
    q_quant quant;
    q_expr lhs, rhs;         /* rhs is a list for IN {..} and BETWEEN */
} q_node;

typedef struct q_sort {
    q_step steps[Q_MAX_PATH];
    int nsteps;
    bool desc;
} q_sort;

struct strata_query {
    char table[STRATA_MAX_NAME + 1];
    uint32_t table_id;
    q_node *root;
    int nargs;               /* $0..$n-1 and %@ */
    q_sort sort[Q_MAX_SORT];
    int nsort;
    q_sort distinct[Q_MAX_SORT];
    int ndistinct;
    int64_t limit;           /* -1: none */
    char *text;              /* the source and its string literals' bytes */
    /* allocation of nodes and expression lists */
    void **owned;
    size_t nowned, capowned;
};

/* Types, shared by the parser's checks and the run's checks of arguments. */
static inline bool q_numeric(strata_type t) {
    return t == STRATA_TYPE_INT || t == STRATA_TYPE_FLOAT || t == STRATA_TYPE_DOUBLE;
}

/* Can aggregate a (@sum @avg @min @max) be taken of values of type t? Numbers and decimals;
 * for @min and @max also dates. */
static inline bool q_aggregable(q_agg a, strata_type t) {
    if (q_numeric(t) || t == STRATA_TYPE_DECIMAL128) return true;
    return (a == QA_MIN || a == QA_MAX) && t == STRATA_TYPE_TIMESTAMP;
}

/* Can a property of type prop be compared with a value of type v? */
static inline bool q_comparable(strata_type prop, strata_type v) {
    if (v == STRATA_TYPE_NULL || prop == STRATA_TYPE_MIXED) return true;
    if (q_numeric(prop) && q_numeric(v)) return true;
    if (prop == STRATA_TYPE_LINK) return v == STRATA_TYPE_LINK || v == STRATA_TYPE_INT;
    return prop == v;
}

/* The type of what a path (after its aggregate) or a SUBQUERY(...).@count yields. */
static inline strata_type q_expr_type(const q_expr *e) {
    if (e->kind == QE_SUBQUERY) return STRATA_TYPE_INT;
    const q_step *last = &e->steps[e->nsteps - 1];
    switch (e->agg) {
    case QA_COUNT: return STRATA_TYPE_INT;
    case QA_NONE: return q_step_type(last);
    default: /* decimals aggregate to a decimal, dates (@min @max) to a date */
        if (last->type == STRATA_TYPE_DECIMAL128 || last->type == STRATA_TYPE_TIMESTAMP) return (strata_type)last->type;
        if (e->agg == QA_AVG) return STRATA_TYPE_DOUBLE;
        return last->type == STRATA_TYPE_INT ? STRATA_TYPE_INT : STRATA_TYPE_DOUBLE;
    }
}

struct strata_results {
    int64_t *keys;
    size_t n;
    uint32_t table_id;
};

int st_query_parse(strata_txn_t *txn, const char *table, const char *text,
                   const strata_name_map_t *names, strata_query_t **out, strata_error *err);
/* The column that public_name of table stands for in map (name_map.c), or NULL. */
const char *st_name_map_column(const strata_name_map_t *map, const char *table, const char *public_name);
void st_query_free(strata_query_t *q);

/* Execution: the matching keys of txn's snapshot (sorted, distinct, limited) or their count. */
int st_query_run(strata_query_t *q, strata_txn_t *txn, const strata_value *args, size_t nargs,
                 strata_results_t **out, strata_error *err);
int st_query_count(strata_query_t *q, strata_txn_t *txn, const strata_value *args, size_t nargs,
                   uint64_t *count, strata_error *err);
/* One object: whether it matches the predicate; where it goes among keys in the query's order. */
int st_query_matches(strata_query_t *q, strata_txn_t *txn, const strata_value *args, size_t nargs,
                     int64_t key, bool *out, strata_error *err);
int st_query_position(strata_query_t *q, strata_txn_t *txn, const int64_t *keys, size_t n,
                      int64_t key, size_t *pos, strata_error *err);

/* text.c: UTF-8 strings compared with [c] (full Unicode case folding) and [d] (decomposed,
 * combining marks dropped, composed again), both through utf8proc. */
typedef struct st_text {
    uint32_t *cp;
    size_t n;
} st_text;
int st_text_fold(const uint8_t *s, size_t len, unsigned flags, st_text *out);
void st_text_free(st_text *t);
bool st_text_like(const st_text *s, const st_text *pattern); /* '*' any run, '?' one */
/* Whether b's bytes occur in a (CONTAINS without flags). */
bool st_bytes_contain(const uint8_t *a, size_t al, const uint8_t *b, size_t bl);
size_t st_utf8_length(const uint8_t *s, size_t len);

/* geo.c: a region of a GEOWITHIN argument, checked and prepared once per run (*why: what is
 * wrong with it, for STRATA_ERR_INVALID_ARGUMENT). */
typedef struct st_geo st_geo;
int st_geo_prepare(const strata_geo *in, st_geo **out, char *why, size_t whylen);
bool st_geo_contains(const st_geo *g, double lng, double lat);
void st_geo_free(st_geo *g);

/* A growing array of object keys (query_exec.c). push: STRATA_ERR_NO_MEMORY when out of it;
 * unique: sorted, each key once. */
typedef struct keyvec {
    int64_t *v;
    size_t n, cap;
} keyvec;
/* A key vector's first capacity: small, so that a query finding a few keys allocates from the
 * allocator's fast bins (a 2 KiB first block made glibc consolidate them at every query). */
#define ST_KEYVEC_FIRST 16
int st_keyvec_push(keyvec *k, int64_t key);
void st_keyvec_unique(keyvec *k);

/* fulltext.c: the terms of a TEXT argument, compiled (*why: what is wrong with it, for
 * STRATA_ERR_INVALID_ARGUMENT), matched against a text, or answered by a full-text index:
 * candidates sorted by key, *exact false when each must still be matched against its text.
 * st_fts_served: the index can answer (some term has no '-'). */
typedef struct st_fts st_fts;
int st_fts_compile(const uint8_t *s, size_t len, st_fts **out, char *why, size_t whylen);
int st_fts_match(const st_fts *f, const uint8_t *text, size_t len, bool *out);
bool st_fts_served(const st_fts *f);
int st_fts_candidates(const st_fts *f, strata_table_t *t, st_prop *p, int64_t **out, size_t *n,
                      bool *exact, strata_error *err);
void st_fts_free(st_fts *f);

#endif
