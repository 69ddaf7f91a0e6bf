/*
 * packed.c — packed pages: tree and column pages that a compaction stored LZ4-compressed
 * (liblz4), and the cache that hands them out unpacked.
 *
 * Layout (format 5). A compaction that packs writes its plain pages first and then one packed
 * region: a run of pages whose first has the common page header (kind ST_PAGE_PACKED, the run's
 * length in pages at byte 28, its checksum over that first page only), then at byte 32 the u32
 * length (at most 64 KiB) of a dictionary that follows from byte 40, then from the next multiple
 * of 8 the compressed pages back to back, across page boundaries. A packed page is referred to,
 * wherever a page number goes, by its reference: bit 63 | its byte offset in the region << 12 |
 * its compressed length (storage.h). Its bytes are one LZ4 block, compressed with the region's
 * dictionary, of the page up to its last non-zero byte (the rest of the page is zeros: a column
 * page's unused end costs nothing to store or to unpack). The dictionary is samples of the
 * data (1 KiB of each of up to 64 pages spread over the file, at most a 64th of it, or the
 * packed file's own dictionary): a small page compresses well only when LZ4 finds its words in
 * the 64 KiB before it. Pages are compressed with LZ4HC (level set by the copy's options; 0
 * is LZ4's fast mode): slower to write, as fast to read. Unpacked, it is an ordinary page of its kind whose
 * header holds its reference without the length, the compaction's version and the checksum of
 * the whole unpacked page. The meta records the region's first page
 * (packed_region) and how many packed pages the version reaches (packed_live).
 *
 * Invariants: a packed page is never written again; a write transaction that changes one
 * copies it, unpacked, to a plain page (st_page_touch) and counts it freed (packed_freed); the
 * commit lowers packed_live by that count, and the commit that brings it to 0 frees the whole
 * region (its pages go to the free list like any freed page, reused once no reader holds an
 * older version). verify checks that the version reaches exactly packed_live packed pages, each
 * inside the region. Only a compaction writes a region, and it writes a new file: one region
 * per file at most, and a reference names the same bytes for as long as the file lives.
 *
 * Reading: st_page_get finds a reference's page in the transaction's pins (a small hash), else
 * in the handle's cache, else unpacks it there: the compressed bytes must lie inside the region
 * and unpack to exactly one page whose header names the reference, whose version is no newer
 * than the snapshot and whose checksum matches; any failure is STRATA_ERR_CORRUPT naming the
 * reference. A transaction pins every unpacked page it reads until it ends or refreshes (values
 * read from it point into it, as values read from the map do); pages no transaction pins stay
 * in the cache, least recently released first out, up to ST_UNPACKED_KEEP of them.
 *
 * A reader of one column leaf needs only the page's start up to the leaf's end (its small
 * leaves lie first). Once a packed page has been unpacked and checked whole in this process
 * (its reference is in the handle's checked set), st_packed_get_part unpacks only that far
 * (LZ4 stops early), into the transaction's own arena: a count over a small property costs a
 * few dozen unpacked bytes a page. The compressed bytes never change while the file lives, so
 * what was checked stays checked (as pages checked once by pagetrust.c).
 */
#include "storage/packed.h"

#include <lz4.h>
#include <lz4hc.h>
#include <stdlib.h>
#include <string.h>

typedef struct st_upage {
    pgno_t ref;
    uint8_t *page;
    uint32_t pins;
    struct st_upage *hnext;          /* hash chain */
    struct st_upage *lprev, *lnext;  /* the unpinned list (lnext from the sentinel: newest) */
} st_upage;

struct st_unpacked {
    pthread_mutex_t mu;
    pgno_t *checked;                 /* references unpacked and checked whole (open addressing) */
    size_t checked_cap, nchecked;
    st_upage **table;
    size_t cap, count, unpinned;
    st_upage lru;                    /* sentinel of the unpinned list */
    st_upage *spare;                 /* evicted entries (and their pages), for reuse */
    size_t nspare;
    uint8_t *chunks;                 /* arena chunks transactions let go of, for reuse */
    size_t nchunks;
};

enum { CHUNKS_MAX = 64 };

enum { SPARE_MAX = 256 };

/* A page unpacked in part for one transaction: its first `have` bytes. */
typedef struct st_part {
    pgno_t ref;
    uint8_t *buf;
    uint32_t have;
} st_part;

/* A transaction's pinned pages, by reference (open addressing, power-of-two capacity), and the
 * pages it unpacked in part, in its arena. */
struct st_pins {
    st_upage **slot;
    size_t cap, n;
    st_part *part;
    size_t part_cap, npart;
    uint8_t *arena;          /* the current chunk (its first 8 bytes link the chunk before) */
    size_t arena_used, arena_size;
};

enum { ARENA_CHUNK = 64 * 1024 };

static size_t hash_ref(pgno_t r) { return (size_t)((r * 0x9E3779B97F4A7C15ull) >> 17); }

int st_unpacked_init(strata_db_t *db, strata_error *err) {
    struct st_unpacked *u = calloc(1, sizeof *u);
    if (u) u->table = calloc(u->cap = 1024, sizeof *u->table);
    if (!u || !u->table) {
        free(u);
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory opening '%s'", db->file.shown);
    }
    pthread_mutex_init(&u->mu, NULL);
    u->lru.lnext = u->lru.lprev = &u->lru;
    db->unpacked = u;
    return STRATA_OK;
}

static void drop_all(struct st_unpacked *u) {
    free(u->checked);
    u->checked = NULL;
    u->checked_cap = u->nchecked = 0;
    for (size_t i = 0; i < u->cap; i++)
        for (st_upage *e = u->table[i], *next; e; e = next) {
            next = e->hnext;
            free(e->page);
            free(e);
        }
    for (st_upage *e = u->spare, *next; e; e = next) {
        next = e->hnext;
        free(e->page);
        free(e);
    }
    u->spare = NULL;
    u->nspare = 0;
    while (u->chunks) {
        uint8_t *prev;
        memcpy(&prev, u->chunks, sizeof prev);
        free(u->chunks);
        u->chunks = prev;
    }
    u->nchunks = 0;
    memset(u->table, 0, u->cap * sizeof *u->table);
    u->count = u->unpinned = 0;
    u->lru.lnext = u->lru.lprev = &u->lru;
}

void st_unpacked_clear(strata_db_t *db) {
    if (!db->unpacked) return;
    pthread_mutex_lock(&db->unpacked->mu);
    drop_all(db->unpacked);
    pthread_mutex_unlock(&db->unpacked->mu);
}

void st_unpacked_free(strata_db_t *db) {
    struct st_unpacked *u = db->unpacked;
    if (!u) return;
    drop_all(u);
    pthread_mutex_destroy(&u->mu);
    free(u->table);
    free(u);
    db->unpacked = NULL;
}

static void lru_unlink(st_upage *e) {
    e->lprev->lnext = e->lnext;
    e->lnext->lprev = e->lprev;
    e->lprev = e->lnext = NULL;
}

/* e is no longer pinned: to the front of the unpinned list (mutex held). */
static void lru_push(struct st_unpacked *u, st_upage *e) {
    e->lnext = u->lru.lnext;
    e->lprev = &u->lru;
    u->lru.lnext->lprev = e;
    u->lru.lnext = e;
    u->unpinned++;
}

/* An entry no longer in the table, kept with its page for the next unpack (mutex held). */
static void entry_spare(struct st_unpacked *u, st_upage *e) {
    e->hnext = u->spare;
    u->spare = e;
    u->nspare++;
}

/* Unpinned pages over the limit go, oldest first (mutex held). */
static void evict(struct st_unpacked *u) {
    while (u->unpinned > ST_UNPACKED_KEEP) {
        st_upage *e = u->lru.lprev;
        lru_unlink(e);
        st_upage **pp = &u->table[hash_ref(e->ref) & (u->cap - 1)];
        while (*pp != e) pp = &(*pp)->hnext;
        *pp = e->hnext;
        u->count--;
        u->unpinned--;
        if (u->nspare < SPARE_MAX) { /* kept, page and all, for the next unpack */
            entry_spare(u, e);
        } else {
            free(e->page);
            free(e);
        }
    }
}

static int grow_table(struct st_unpacked *u) {
    size_t cap = u->cap * 2;
    st_upage **t = calloc(cap, sizeof *t);
    if (!t) return STRATA_ERR_NO_MEMORY;
    for (size_t i = 0; i < u->cap; i++)
        for (st_upage *e = u->table[i], *next; e; e = next) {
            next = e->hnext;
            size_t h = hash_ref(e->ref) & (cap - 1);
            e->hnext = t[h];
            t[h] = e;
        }
    free(u->table);
    u->table = t;
    u->cap = cap;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ a transaction's pins */

static st_upage *pins_find(const struct st_pins *ps, pgno_t ref) {
    if (!ps || !ps->cap) return NULL;
    for (size_t i = hash_ref(ref) & (ps->cap - 1);; i = (i + 1) & (ps->cap - 1)) {
        if (!ps->slot[i]) return NULL;
        if (ps->slot[i]->ref == ref) return ps->slot[i];
    }
}

static int pins_add(strata_txn_t *txn, st_upage *e) {
    struct st_pins *ps = txn->pins;
    if (!ps && !(ps = txn->pins = calloc(1, sizeof *ps))) return STRATA_ERR_NO_MEMORY;
    if ((ps->n + 1) * 4 > ps->cap * 3) {
        size_t cap = ps->cap ? ps->cap * 2 : 64;
        st_upage **slot = calloc(cap, sizeof *slot);
        if (!slot) return STRATA_ERR_NO_MEMORY;
        for (size_t i = 0; i < ps->cap; i++) {
            if (!ps->slot[i]) continue;
            size_t j = hash_ref(ps->slot[i]->ref) & (cap - 1);
            while (slot[j]) j = (j + 1) & (cap - 1);
            slot[j] = ps->slot[i];
        }
        free(ps->slot);
        ps->slot = slot;
        ps->cap = cap;
    }
    size_t j = hash_ref(e->ref) & (ps->cap - 1);
    while (ps->slot[j]) j = (j + 1) & (ps->cap - 1);
    ps->slot[j] = e;
    ps->n++;
    return STRATA_OK;
}

/* The transaction's partly unpacked pages go; its arena's chunks go back to the handle
 * (mutex held), a few kept for the next transaction. */
static void parts_release(struct st_unpacked *u, struct st_pins *ps) {
    if (ps->npart) memset(ps->part, 0, ps->part_cap * sizeof *ps->part);
    ps->npart = 0;
    while (ps->arena) {
        uint8_t *prev;
        memcpy(&prev, ps->arena, sizeof prev);
        if (u->nchunks < CHUNKS_MAX) {
            memcpy(ps->arena, &u->chunks, sizeof u->chunks);
            u->chunks = ps->arena;
            u->nchunks++;
        } else {
            free(ps->arena);
        }
        ps->arena = prev;
    }
    ps->arena_used = ps->arena_size = 0;
}

void st_pins_release(strata_txn_t *txn) {
    struct st_pins *ps = txn->pins;
    if (!ps || (!ps->n && !ps->arena)) return;
    struct st_unpacked *u = txn->db->unpacked;
    pthread_mutex_lock(&u->mu);
    parts_release(u, ps);
    for (size_t i = 0; i < ps->cap; i++) {
        st_upage *e = ps->slot[i];
        if (!e) continue;
        ps->slot[i] = NULL;
        if (--e->pins == 0) lru_push(u, e);
    }
    ps->n = 0;
    evict(u);
    pthread_mutex_unlock(&u->mu);
}

void st_pins_free(strata_txn_t *txn) {
    st_pins_release(txn);
    if (txn->pins) free(txn->pins->part);
    if (txn->pins) free(txn->pins->slot);
    free(txn->pins);
    txn->pins = NULL;
}

/* ------------------------------------------------------------------ the checked set */

static bool checked_has(const struct st_unpacked *u, pgno_t ref) {
    if (!u->checked_cap) return false;
    for (size_t i = hash_ref(ref) & (u->checked_cap - 1);; i = (i + 1) & (u->checked_cap - 1)) {
        if (!u->checked[i]) return false;
        if (u->checked[i] == ref) return true;
    }
}

/* Remember ref as checked (mutex held); out of memory only forgets it (it is checked again). */
static void checked_add(struct st_unpacked *u, pgno_t ref) {
    if ((u->nchecked + 1) * 4 > u->checked_cap * 3) {
        size_t cap = u->checked_cap ? u->checked_cap * 2 : 1024;
        pgno_t *t = calloc(cap, sizeof *t);
        if (!t) return;
        for (size_t i = 0; i < u->checked_cap; i++) {
            if (!u->checked[i]) continue;
            size_t j = hash_ref(u->checked[i]) & (cap - 1);
            while (t[j]) j = (j + 1) & (cap - 1);
            t[j] = u->checked[i];
        }
        free(u->checked);
        u->checked = t;
        u->checked_cap = cap;
    }
    size_t j = hash_ref(ref) & (u->checked_cap - 1);
    while (u->checked[j] && u->checked[j] != ref) j = (j + 1) & (u->checked_cap - 1);
    if (!u->checked[j]) u->nchecked++;
    u->checked[j] = ref;
}

/* ------------------------------------------------------------------ reading */

int st_packed_region(strata_txn_t *txn, const st_meta *m, st_region *r, strata_error *err) {
    const uint8_t *hdr;
    int rc = st_page_get(txn, m->packed_region, &hdr, err);
    if (rc) return rc;
    if (pg_kind(hdr) != ST_PAGE_PACKED)
        return ST_CORRUPT(err, "page %llu: expected the packed region, found kind %u",
                          (unsigned long long)m->packed_region, pg_kind(hdr));
    r->run = st_rd32(hdr + PH_RUN);
    if (r->run == 0 || r->run > m->page_count - m->packed_region)
        return ST_CORRUPT(err, "packed region at page %llu: a run of %u pages past the file's %llu",
                          (unsigned long long)m->packed_region, r->run,
                          (unsigned long long)m->page_count);
    r->dict_len = st_rd32(hdr + ST_REGION_DICT_LEN);
    r->dict = hdr + ST_REGION_DICT;
    r->first = (ST_REGION_DICT + (uint64_t)r->dict_len + 7) & ~7ull;
    if (r->dict_len > ST_DICT_MAX || r->first > (uint64_t)r->run * ST_PAGE_SIZE)
        return ST_CORRUPT(err, "packed region at page %llu: a dictionary of %u bytes in %u pages",
                          (unsigned long long)m->packed_region, r->dict_len, r->run);
    return STRATA_OK;
}

/* Unpack ref into page (a page's bytes): checked, or CORRUPT naming it. */
static int unpack(strata_txn_t *txn, pgno_t ref, uint8_t *page, strata_error *err) {
    const st_meta *m = &txn->meta;
    unsigned long long shown = (unsigned long long)ref;
    if (!m->packed_region)
        return ST_CORRUPT(err, "packed page %#llx: version %llu has no packed region", shown,
                          (unsigned long long)m->version);
    st_region r;
    int rc = st_packed_region(txn, m, &r, err);
    if (rc) return rc;
    uint64_t off = st_packed_off(ref), len = st_packed_len(ref);
    if (len == 0 || off < r.first || off + len > (uint64_t)r.run * ST_PAGE_SIZE)
        return ST_CORRUPT(err, "packed page %#llx: %llu bytes at %llu lie outside the region's %u pages",
                          shown, (unsigned long long)len, (unsigned long long)off, r.run);
    const char *src = (const char *)txn->db->file.map + m->packed_region * ST_PAGE_SIZE + off;
    int n = LZ4_decompress_safe_usingDict(src, (char *)page, (int)len, ST_PAGE_SIZE,
                                          (const char *)r.dict, (int)r.dict_len);
    if (n >= PH_SIZE) memset(page + n, 0, ST_PAGE_SIZE - (size_t)n);
    if (n < PH_SIZE)
        rc = ST_CORRUPT(err, "packed page %#llx: does not unpack to a page (LZ4 gave %d)", shown, n);
    else if (!pg_number_is(page, ref))
        rc = ST_CORRUPT(err, "packed page %#llx: header says %#llx", shown,
                        (unsigned long long)st_rd64(page + PH_PGNO));
    else if (st_rd64(page + PH_VERSION) > m->version)
        rc = ST_CORRUPT(err, "packed page %#llx: written by version %llu, newer than the snapshot %llu",
                        shown, (unsigned long long)st_rd64(page + PH_VERSION),
                        (unsigned long long)m->version);
    else if (st_rd64(page + PH_CHECKSUM) != st_checksum(page + 8, ST_PAGE_SIZE - 8))
        rc = ST_CORRUPT(err, "packed page %#llx (kind %u): checksum mismatch", shown, pg_kind(page));
    return rc;
}

/* An entry with a page to unpack into: a spare one, or new (mutex held). */
static st_upage *entry_new(struct st_unpacked *u) {
    st_upage *e = u->spare;
    if (e) {
        u->spare = e->hnext;
        u->nspare--;
        return e;
    }
    e = calloc(1, sizeof *e);
    if (e && !(e->page = aligned_alloc(64, ST_PAGE_SIZE))) {
        free(e);
        e = NULL;
    }
    return e;
}


int st_packed_get(strata_txn_t *txn, pgno_t ref, const uint8_t **page, strata_error *err) {
    st_upage *e = pins_find(txn->pins, ref);
    if (e) {
        *page = e->page;
        return STRATA_OK;
    }
    struct st_unpacked *u = txn->db->unpacked;
    pthread_mutex_lock(&u->mu);
    e = u->table[hash_ref(ref) & (u->cap - 1)];
    while (e && e->ref != ref) e = e->hnext;
    int rc = STRATA_OK;
    if (e) {
        if (e->pins++ == 0) {
            lru_unlink(e);
            u->unpinned--;
        }
    } else if (!(e = entry_new(u)) || (u->count + 1 > u->cap && grow_table(u) != STRATA_OK)) {
        if (e) entry_spare(u, e);
        e = NULL;
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory unpacking a page");
    } else if ((rc = unpack(txn, ref, e->page, err))) {
        entry_spare(u, e);
        e = NULL;
    } else {
        checked_add(u, ref);
        e->ref = ref;
        e->pins = 1;
        e->lprev = e->lnext = NULL;
        size_t h = hash_ref(ref) & (u->cap - 1);
        e->hnext = u->table[h];
        u->table[h] = e;
        u->count++;
    }
    if (rc == STRATA_OK && pins_add(txn, e) != STRATA_OK) {
        if (--e->pins == 0) lru_push(u, e);
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory unpacking a page");
    }
    pthread_mutex_unlock(&u->mu);
    if (rc) return rc;
    *page = e->page;
    return STRATA_OK;
}

static st_part *part_find(struct st_pins *ps, pgno_t ref) {
    if (!ps || !ps->part_cap) return NULL;
    for (size_t i = hash_ref(ref) & (ps->part_cap - 1);; i = (i + 1) & (ps->part_cap - 1)) {
        if (!ps->part[i].ref) return NULL;
        if (ps->part[i].ref == ref) return &ps->part[i];
    }
}

static st_part *part_add(struct st_pins *ps, pgno_t ref) {
    if ((ps->npart + 1) * 4 > ps->part_cap * 3) {
        size_t cap = ps->part_cap ? ps->part_cap * 2 : 256;
        st_part *t = calloc(cap, sizeof *t);
        if (!t) return NULL;
        for (size_t i = 0; i < ps->part_cap; i++) {
            if (!ps->part[i].ref) continue;
            size_t j = hash_ref(ps->part[i].ref) & (cap - 1);
            while (t[j].ref) j = (j + 1) & (cap - 1);
            t[j] = ps->part[i];
        }
        free(ps->part);
        ps->part = t;
        ps->part_cap = cap;
    }
    size_t j = hash_ref(ref) & (ps->part_cap - 1);
    while (ps->part[j].ref) j = (j + 1) & (ps->part_cap - 1);
    ps->npart++;
    ps->part[j] = (st_part){ref, NULL, 0};
    return &ps->part[j];
}

static uint8_t *arena_take(struct st_unpacked *u, struct st_pins *ps, size_t bytes) {
    if (ps->arena_used + bytes > ps->arena_size) {
        uint8_t *chunk = NULL;
        pthread_mutex_lock(&u->mu);
        if (u->chunks) {
            chunk = u->chunks;
            memcpy(&u->chunks, chunk, sizeof u->chunks);
            u->nchunks--;
        }
        pthread_mutex_unlock(&u->mu);
        if (!chunk && !(chunk = malloc(ARENA_CHUNK))) return NULL;
        memcpy(chunk, &ps->arena, sizeof ps->arena);
        ps->arena = chunk;
        ps->arena_used = 64; /* the link, and aligned */
        ps->arena_size = ARENA_CHUNK;
    }
    uint8_t *p = ps->arena + ps->arena_used;
    ps->arena_used += bytes;
    return p;
}

int st_packed_get_part(strata_txn_t *txn, pgno_t ref, size_t need, const uint8_t **page,
                       strata_error *err) {
    struct st_pins *ps = txn->pins;
    st_upage *e = pins_find(ps, ref);
    if (e) {
        *page = e->page;
        return STRATA_OK;
    }
    st_part *pt = part_find(ps, ref);
    if (pt && pt->have >= need) {
        *page = pt->buf;
        return STRATA_OK;
    }
    size_t want = (need + 63) & ~(size_t)63;
    struct st_unpacked *u = txn->db->unpacked;
    pthread_mutex_lock(&u->mu);
    bool checked = checked_has(u, ref);
    st_upage *whole = u->table[hash_ref(ref) & (u->cap - 1)];
    while (whole && whole->ref != ref) whole = whole->hnext;
    pthread_mutex_unlock(&u->mu);
    if (whole || !checked || want > ST_PAGE_SIZE / 2 || !txn->meta.packed_region)
        return st_packed_get(txn, ref, page, err); /* the whole page (the cache has it) */
    st_region r;
    int rc = st_packed_region(txn, &txn->meta, &r, err);
    if (rc) return rc;
    uint64_t off = st_packed_off(ref), len = st_packed_len(ref);
    if (len == 0 || off < r.first || off + len > (uint64_t)r.run * ST_PAGE_SIZE)
        return st_packed_get(txn, ref, page, err); /* names what is wrong */
    if (!ps && !(ps = txn->pins = calloc(1, sizeof *ps)))
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory unpacking a page");
    uint8_t *buf = arena_take(u, ps, want);
    if (!buf || (!pt && !(pt = part_add(ps, ref))))
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory unpacking a page");
    const char *src = (const char *)txn->db->file.map + txn->meta.packed_region * ST_PAGE_SIZE + off;
    int n = LZ4_decompress_safe_partial_usingDict(src, (char *)buf, (int)len, (int)want, (int)want,
                                                  (const char *)r.dict, (int)r.dict_len);
    if (n < PH_SIZE) /* checked whole before: the bytes changed since */
        return ST_CORRUPT(err, "packed page %#llx: does not unpack (LZ4 gave %d)",
                          (unsigned long long)ref, n);
    if ((size_t)n < want) memset(buf + n, 0, want - (size_t)n); /* the page's zero end */
    pt->buf = buf;
    pt->have = (uint32_t)want;
    *page = buf;
    return STRATA_OK;
}

/* ------------------------------------------------------------------ writing (copy.c) */

struct st_packer {
    int level;               /* 0: LZ4's fast mode; else the LZ4HC level */
    LZ4_stream_t loaded;     /* the state after loading the dictionary, copied for each page */
    LZ4_stream_t work;
    LZ4_streamHC_t loaded_hc, work_hc;
    uint8_t dict[ST_DICT_MAX];
    uint32_t dict_len;
    uint8_t check[ST_PAGE_SIZE];
};

size_t st_pack_bound(void) { return (size_t)LZ4_compressBound(ST_PAGE_SIZE); }

/* Samples of the source's pages for the dictionary: 1 KiB of each of 64 tree or column pages
 * spread over the file (a column page's leaves from its start, a tree page's cells from its
 * end). Read as bytes: what they hold only shapes how well the copy compresses. */
static uint32_t sample(strata_txn_t *src, uint8_t *dict) {
    enum { SAMPLES = 64, CHUNK = ST_DICT_MAX / SAMPLES };
    uint64_t pages = src->meta.page_count, len = 0;
    uint64_t samples = pages / 64 < SAMPLES ? pages / 64 : SAMPLES; /* at most 1/64 of the file */
    const uint8_t *map = src->db->file.map;
    for (uint64_t i = 0; i < samples; i++) {
        const uint8_t *p = map + (2 + (pages - 2) * i / samples) * ST_PAGE_SIZE;
        uint8_t kind = pg_kind(p);
        if (kind == ST_PAGE_COLUMN) memcpy(dict + len, p + PH_SIZE, CHUNK);
        else if (kind == ST_PAGE_LEAF || kind == ST_PAGE_BRANCH) memcpy(dict + len, p + ST_PAGE_SIZE - CHUNK, CHUNK);
        else continue;
        len += CHUNK;
    }
    return (uint32_t)len;
}

int st_packer_new(strata_txn_t *src, int level, st_packer **out, strata_error *err) {
    st_packer *p = malloc(sizeof *p);
    if (!p) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory packing '%s'", src->db->file.shown);
    st_region r;
    if (src->meta.packed_region && st_packed_region(src, &src->meta, &r, err) == STRATA_OK && r.dict_len) {
        memcpy(p->dict, r.dict, r.dict_len); /* a packed file keeps its dictionary */
        p->dict_len = r.dict_len;
    } else {
        p->dict_len = sample(src, p->dict);
    }
    p->level = level;
    if (level) {
        LZ4_initStreamHC(&p->loaded_hc, sizeof p->loaded_hc);
        LZ4_resetStreamHC_fast(&p->loaded_hc, level);
        LZ4_loadDictHC(&p->loaded_hc, (const char *)p->dict, (int)p->dict_len);
    } else {
        LZ4_initStream(&p->loaded, sizeof p->loaded);
        LZ4_loadDict(&p->loaded, (const char *)p->dict, (int)p->dict_len);
    }
    *out = p;
    return STRATA_OK;
}

void st_packer_free(st_packer *p) { free(p); }

const uint8_t *st_packer_dict(const st_packer *p, uint32_t *len) {
    *len = p->dict_len;
    return p->dict;
}

uint32_t st_pack_page(st_packer *p, const uint8_t *page, uint8_t *out) {
    size_t used = ST_PAGE_SIZE;
    while (used > PH_SIZE && page[used - 1] == 0) used--; /* the zeros at the end are implied */
    int n;
    if (p->level) { /* a copy of the state with the dictionary loaded: LZ4HC's tables are big,
                       loading it again for each page would cost more */
        memcpy(&p->work_hc, &p->loaded_hc, sizeof p->work_hc);
        n = LZ4_compress_HC_continue(&p->work_hc, (const char *)page, (char *)out, (int)used,
                                     (int)st_pack_bound());
    } else {
        memcpy(&p->work, &p->loaded, sizeof p->work);
        n = LZ4_compress_fast_continue(&p->work, (const char *)page, (char *)out, (int)used,
                                       (int)st_pack_bound(), 1);
    }
    if (n <= 0 || (uint32_t)n > ST_PACK_MAX) return 0;
    int back = LZ4_decompress_safe_usingDict((const char *)out, (char *)p->check, n, ST_PAGE_SIZE,
                                             (const char *)p->dict, (int)p->dict_len);
    if (back != (int)used || memcmp(p->check, page, used) != 0) return 0; /* stored plain */
    return (uint32_t)n;
}
