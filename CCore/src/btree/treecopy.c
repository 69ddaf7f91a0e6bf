/*
 * treecopy.c — a tree's pages into a copy of its version (storage/copy.c): each page is read,
 * checked like any read (number, version, checksum, header, every cell in bounds), its cells
 * packed against the end of the page in slot order with the gap zeroed (space that deletes
 * left inside the cell area goes), its children and overflow runs copied first, their new
 * numbers written into it, and then it is placed. So a tree's leaves are written in key order,
 * next to one another, each followed by nothing but the pages it owns.
 *
 * A value that owns pages (a cluster record owns column pages) is handed, in the copy's page,
 * to the caller's hook, which copies what it owns and rewrites the references in place.
 */
#include "btree/btree.h"

#include <stdlib.h>

typedef struct copy_walk {
    st_copier *c;
    st_copy_value fn;
    void *arg;
    strata_error *err;
} copy_walk;

/* A big value's run into the copy, its value passed to fn (if given) on the way; *out its new
 * first page. */
static int copy_run(st_copier *c, pgno_t pgno, uint32_t vlen, const st_leaf_cell *cell,
                    st_copy_value fn, void *arg, pgno_t *out, strata_error *err) {
    const uint8_t *val;
    uint32_t run;
    int rc = st_overflow_get(st_copier_source(c), pgno, vlen, &val, &run, err);
    if (rc) return rc;
    size_t bytes = (size_t)run * ST_PAGE_SIZE;
    uint8_t *buf = malloc(bytes);
    if (!buf) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory copying a %u-page value", run);
    memcpy(buf, val - PH_SIZE, PH_SIZE + (size_t)vlen);
    memset(buf + PH_SIZE + vlen, 0, bytes - PH_SIZE - vlen);
    if (fn) rc = fn(c, cell->key, cell->klen, buf + PH_SIZE, vlen, arg, err);
    if (rc == STRATA_OK) rc = st_copier_place(c, buf, run, out, err);
    free(buf);
    return rc;
}

int st_overflow_copy(st_copier *c, pgno_t pgno, uint32_t vlen, pgno_t *out, strata_error *err) {
    return copy_run(c, pgno, vlen, NULL, NULL, NULL, out, err);
}

/* Page p (number pg) rebuilt into out: header and slots as they are, cells packed at the end. */
static int repack(const uint8_t *p, pgno_t pg, uint8_t *out, strata_error *err) {
    unsigned n = pg_nkeys(p), lower = pg_lower(p);
    bool leaf = pg_kind(p) == ST_PAGE_LEAF;
    memset(out, 0, ST_PAGE_SIZE);
    memcpy(out, p, lower);
    size_t end = ST_PAGE_SIZE;
    unsigned at = pg_slots_at(p[PH_FLAGS]), width = pg_slot_width(p[PH_FLAGS]);
    for (unsigned i = 0; i < n; i++) {
        size_t size;
        int rc;
        if (leaf) {
            st_leaf_cell c;
            if ((rc = st_leaf_cell_at(p, pg, (int)i, &c, err))) return rc;
            size = c.size;
        } else {
            pgno_t child;
            const uint8_t *k;
            size_t kl;
            if ((rc = st_branch_cell_at(p, pg, (int)i, &child, &k, &kl, err))) return rc;
            size = 10 + kl;
        }
        if (end - lower < size)
            return ST_CORRUPT(err, "page %llu: its cells do not fit one page", (unsigned long long)pg);
        end -= size;
        memcpy(out + end, p + pg_slot(p, (int)i), size);
        st_wr16(out + at + width * i, (uint16_t)end);
    }
    st_wr16(out + PH_UPPER, (uint16_t)end);
    return STRATA_OK;
}

static int copy_node(copy_walk *w, pgno_t pg, uint8_t kind, int depth, pgno_t *out) {
    if (depth >= ST_MAX_DEPTH)
        return ST_CORRUPT(w->err, "tree deeper than %d levels at page %llu", ST_MAX_DEPTH,
                          (unsigned long long)pg);
    const uint8_t *p;
    int rc = st_page_get(st_copier_source(w->c), pg, &p, w->err);
    if (rc || (rc = st_node_check(p, pg, kind, w->err))) return rc;
    uint8_t *buf = malloc(ST_PAGE_SIZE);
    if (!buf) return st_err(w->err, STRATA_ERR_NO_MEMORY, "out of memory copying page %llu",
                            (unsigned long long)pg);
    if ((rc = repack(p, pg, buf, w->err))) goto out;
    int n = pg_nkeys(buf);
    for (int i = 0; i < n && rc == STRATA_OK; i++) {
        uint8_t *cell = buf + pg_slot(buf, i);
        pgno_t moved;
        if (pg_kind(buf) == ST_PAGE_BRANCH) {
            if ((rc = copy_node(w, st_rd64(cell), kind, depth + 1, &moved)) == STRATA_OK)
                st_wr64(cell, moved);
            continue;
        }
        st_leaf_cell c;
        if ((rc = st_leaf_cell_at(buf, pg, i, &c, w->err))) break;
        if (c.big) {
            if ((rc = copy_run(w->c, c.ovf, c.vlen, &c, w->fn, w->arg, &moved, w->err)) == STRATA_OK)
                st_wr64(cell + 8 + c.klen, moved);
        } else if (w->fn) {
            rc = w->fn(w->c, c.key, c.klen, (uint8_t *)c.val, c.vlen, w->arg, w->err);
        }
    }
    if (rc == STRATA_OK) rc = st_copier_place(w->c, buf, 1, out, w->err);
out:
    free(buf);
    return rc;
}

int st_tree_copy(st_copier *c, const st_tree_state *t, st_copy_value fn, void *arg,
                 pgno_t *new_root, strata_error *err) {
    *new_root = 0;
    if (!t->root) return STRATA_OK;
    copy_walk w = {c, fn, arg, err};
    return copy_node(&w, t->root, t->kind, 0, new_root);
}

/* A catalog record: the tree it names is copied, and its root rewritten. */
typedef struct catalog_copy {
    uint8_t flag;
    st_copy_value fn;
} catalog_copy;

static int copy_catalog_entry(st_copier *c, const uint8_t *key, size_t klen, uint8_t *val,
                              size_t vlen, void *arg, strata_error *err) {
    const catalog_copy *cc = arg;
    char name[STRATA_MAX_TREE_NAME + 1];
    if (klen == 0 || klen > STRATA_MAX_TREE_NAME)
        return ST_CORRUPT(err, "catalog: tree name of %zu bytes", klen);
    memcpy(name, key, klen);
    name[klen] = 0;
    st_tree_state t;
    int rc = st_tree_record_parse(name, val, vlen, &t, err);
    if (rc) return rc;
    pgno_t root;
    bool owns = (t.tflags & cc->flag) != 0;
    if ((rc = st_tree_copy(c, &t, owns ? cc->fn : NULL, name, &root, err))) return rc;
    st_wr64(val, root);
    return STRATA_OK;
}

int st_catalog_copy(st_copier *c, uint8_t flag, st_copy_value fn, pgno_t *root, uint64_t *count,
                    strata_error *err) {
    const st_meta *m = &st_copier_source(c)->meta;
    st_tree_state catalog = {m->catalog_root, m->catalog_count, STRATA_KEY_BYTES, 0};
    catalog_copy cc = {flag, fn};
    *count = m->catalog_count;
    return st_tree_copy(c, &catalog, copy_catalog_entry, &cc, root, err);
}
