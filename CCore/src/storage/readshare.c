/*
 * readshare.c — what read transactions derive from a committed tree (a table's cluster
 * directory, an index's leaf directory), kept by the handle and shared by its later read
 * transactions of any version that still reaches the same tree.
 *
 * A tree's contents are named by its root page: the page's number and the version stamp in its
 * header. Pages are copy-on-write, so any change to a tree writes a new root (another page, or
 * the same number with a newer stamp), and a number with a stamp names one content for as long
 * as the file lives (pagetrust.c's invariant: a version is never published twice). A snapshot
 * whose tree has the root an entry was built from therefore reaches exactly the pages it was
 * built from, and while that snapshot lives none of them is freed: pointers into the view
 * (st_bytes_committed) stay right for the transaction that holds it. A structure pointing
 * anywhere else (packed pages unpacked into a transaction's pins, a write transaction's own
 * pages) must not be shared: its builder checks that before st_share_keep.
 *
 * Table: up to SHARE_SLOTS entries {key, uses, data, last use}, allocated at first use, guarded
 * by share_lock. A key is {kind, tree (a hash of the tree's name), root, stamp}; keeping or
 * counting for a key replaces an entry of the same kind and tree with another root (the tree
 * changed: the old entry can only match snapshots older than every new one), else the least
 * recently used entry. `uses` counts the searches transactions made through the tree itself
 * (reported as each transaction lets go of it), so that a directory is built once many short
 * transactions together have paid what building it costs.
 *
 * Data is reference-counted (st_shared, the structure's first member): the table holds one
 * reference, each transaction using it another; the last release destroys it. A compaction (a
 * new file, whose numbers and stamps start over) and the handle's close empty the table.
 */
#include "storage/pager.h"

#include <stdlib.h>

#define SHARE_SLOTS 64

typedef struct st_share_entry {
    st_share_key key;
    uint64_t uses;
    uint64_t last_use;       /* the table's tick at the entry's last use; 0: the slot is free */
    st_shared *data;         /* NULL until built */
} st_share_entry;

struct st_share_table {
    st_share_entry slot[SHARE_SLOTS];
    uint64_t tick;
};

static bool same_tree(const st_share_key *a, const st_share_key *b) {
    return a->kind == b->kind && a->tree == b->tree;
}

static bool same_root(const st_share_key *a, const st_share_key *b) {
    return same_tree(a, b) && a->root == b->root && a->stamp == b->stamp;
}

void st_share_release(st_shared *s) {
    if (s && atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) s->destroy(s);
}

static void entry_clear(st_share_entry *e) {
    st_share_release(e->data);
    memset(e, 0, sizeof *e);
}

/* The entry of key's tree (any root), else the free or least recently used slot, emptied and
 * given the key; NULL without memory. Under share_lock. */
static st_share_entry *entry_for(strata_db_t *db, const st_share_key *key) {
    if (!db->shares && !(db->shares = calloc(1, sizeof *db->shares))) return NULL;
    st_share_table *t = db->shares;
    st_share_entry *victim = &t->slot[0];
    for (size_t i = 0; i < SHARE_SLOTS; i++) {
        st_share_entry *e = &t->slot[i];
        if (e->last_use && same_tree(&e->key, key)) {
            if (!same_root(&e->key, key)) {
                entry_clear(e);
                e->key = *key;
            }
            e->last_use = ++t->tick;
            return e;
        }
        if (e->last_use < victim->last_use) victim = e;
    }
    entry_clear(victim);
    victim->key = *key;
    victim->last_use = ++t->tick;
    return victim;
}

bool st_share_key_of(strata_txn_t *txn, uint8_t kind, const char *name, size_t name_len,
                     pgno_t root, st_share_key *key) {
    if (txn->write || !root || st_pgno_packed(root)) return false;
    const uint8_t *p;
    strata_error ignored; /* a bad root is reported by the search that reads it */
    if (st_page_get(txn, root, &p, &ignored) || !st_bytes_committed(txn->db, p)) return false;
    *key = (st_share_key){kind, st_checksum(name, name_len), root, st_rd64(p + PH_VERSION)};
    return true;
}

st_shared *st_share_find(strata_db_t *db, const st_share_key *key, uint64_t *uses) {
    st_shared *found = NULL;
    *uses = 0;
    pthread_mutex_lock(&db->share_lock);
    for (size_t i = 0; db->shares && i < SHARE_SLOTS; i++) {
        st_share_entry *e = &db->shares->slot[i];
        if (e->last_use && same_root(&e->key, key)) {
            e->last_use = ++db->shares->tick;
            *uses = e->uses;
            if ((found = e->data)) atomic_fetch_add_explicit(&found->refs, 1, memory_order_relaxed);
            break;
        }
    }
    pthread_mutex_unlock(&db->share_lock);
    return found;
}

void st_share_count(strata_db_t *db, const st_share_key *key, uint64_t uses) {
    pthread_mutex_lock(&db->share_lock);
    st_share_entry *e = entry_for(db, key);
    if (e) e->uses += uses;
    pthread_mutex_unlock(&db->share_lock);
}

void st_share_keep(strata_db_t *db, const st_share_key *key, st_shared *s) {
    pthread_mutex_lock(&db->share_lock);
    st_share_entry *e = entry_for(db, key);
    if (e && !e->data) {
        atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
        e->data = s;
    }
    pthread_mutex_unlock(&db->share_lock);
}

void st_share_clear(strata_db_t *db) {
    pthread_mutex_lock(&db->share_lock);
    for (size_t i = 0; db->shares && i < SHARE_SLOTS; i++) entry_clear(&db->shares->slot[i]);
    free(db->shares);
    db->shares = NULL;
    pthread_mutex_unlock(&db->share_lock);
}
