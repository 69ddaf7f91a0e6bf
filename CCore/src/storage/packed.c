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
 * is LZ4's fast mode): slower to write, as fast to read. Unpacked, a packed page is an ordinary
 * page of its kind whose header holds its reference without the length, the compaction's
 * version and the checksum of the whole unpacked page. The meta records the region's first
 * page (packed_region) and how many packed pages the version reaches (packed_live).
 *
 * Invariants: a packed page is never written again; a write transaction that changes one
 * copies it, unpacked, to a plain page (st_page_touch) and counts it freed (packed_freed); the
 * commit lowers packed_live by that count, and the commit that brings it to 0 frees the whole
 * region (its pages go to the free list like any freed page, reused once no reader holds an
 * older version). verify checks that the version reaches exactly packed_live packed pages, each
 * inside the region. Only a compaction writes a region, and it writes a new file: one region
 * per file at most, and a reference names the same bytes for as long as the file lives.
 *
 * Reading: st_page_get finds a reference's page among the last ones the transaction was given
 * (direct-mapped, no lock), else in the handle's cache (a hash table with each reference beside
 * its entry, under a mutex), else unpacks it there: the compressed bytes must lie inside the
 * region and unpack to at most a page (the rest zeros) whose header names the reference, whose
 * version is no newer than the snapshot and whose checksum matches; any failure is
 * STRATA_ERR_CORRUPT naming the reference. A transaction pins every unpacked page it reads
 * until it ends or refreshes (values read from it point into it, as values read from the map
 * do); an entry records the pin generation of the last transaction to pin it, so one pinned
 * again is not held twice. Pages no transaction pins stay in the cache up to
 * strata_options.unpacked_cache_bytes of unpacked bytes; past it, a clock over the entries in
 * order of arrival evicts (a pinned entry,
 * or one used since the hand passed, gets a second chance): a hit moves no entry. A scan reads
 * ~one packed page a cluster, each a different one: it asks for their slots ahead
 * (st_packed_prefetch), and an entry's bytes follow it in one allocation, so a hit costs about
 * one miss. A scan that keeps nothing of a cluster once it has evaluated it (a count, the keys
 * of the matches: query_exec.c) lets go of the column pages it pinned since it began
 * (st_pins_let_go_columns) after each cluster: they go to the back of their list, the first the
 * hand takes, so the cache keeps what it held before (a table under the bound stays whole) and
 * the next page unpacks into an entry just read. A transaction scanning a packed table holds
 * the bound, not the table unpacked (a count over 1M chat messages: 495 → 189 MB resident,
 * the packed file's map included). Tree pages stay pinned (a cursor's place, a directory's
 * records), and the transaction counts the lets-go (let_go) for the caches of leaf addresses
 * above (objects/cluster.c's cached record).
 *
 * A reader of one column leaf needs only the page's start up to the leaf's end (its small
 * leaves lie first). Once a packed page has been unpacked and checked whole in this process
 * (its reference is in the handle's checked set), st_packed_get_part unpacks only that far
 * (LZ4 stops early) into an entry of its own, cached like a whole page (a page may have both;
 * the cache's bound counts bytes): a count over a small property keeps a few dozen unpacked
 * bytes a page, and a second count finds them. The compressed bytes never change while the
 * file lives, so what was checked stays checked (as pages checked once by pagetrust.c): a page
 * unpacked whole again is not summed again. A plain file's pages are unpacked right after a
 * copy of the dictionary (LZ4 then reads it as the bytes before the page: its fast path), then
 * copied to their entry.
 *
 * Encrypted files (cipher.c): compressed, then sealed. A packed page's bytes are its tag and the
 * ciphertext of its compressed bytes (the reference's length counts the tag); the region's first
 * page up to its packed pages (header and dictionary) is sealed as a page of that length, opened
 * once per handle and kept (region_head). Unpacking opens the packed bytes first.
 */
#include "storage/packed.h"

#include "storage/cipher.h"

#include <lz4.h>
#include <lz4hc.h>
#include <stdlib.h>
#include <string.h>

/* A hash table's slot: a reference beside its entry, so that a probe compares references
 * without reading the entries (each one another cache line: a scan's pins run to thousands). */
typedef struct {
    pgno_t ref;
    struct st_upage *e;              /* NULL: empty */
} st_uslot;

typedef struct st_upage {
    pgno_t ref;
    uint8_t *page;
    uint32_t have;                   /* bytes unpacked: the whole page, or its first part */
    uint32_t pins;
    uint64_t pinned_by;              /* the pin generation of the last transaction to pin it */
    bool referenced;                 /* released since the eviction hand last passed it */
    struct st_upage *hnext;          /* the spare list */
    struct st_upage *lprev, *lnext;  /* its list, whole pages or parts (lnext from the sentinel:
                                        newest, or last given a second chance) */
} st_upage;

struct st_unpacked {
    pthread_mutex_t mu;
    pgno_t *checked;                 /* references unpacked and checked whole (open addressing) */
    size_t checked_cap, nchecked;
    st_uslot *table;                 /* by reference (open addressing, at most half full); a
                                        page may have a whole and a part entry */
    size_t cap, count;
    size_t unpinned_bytes, unpinned_whole; /* bytes of the entries no transaction pins; of
                                              them, whole pages' */
    uint64_t generation;             /* the last pin generation handed out */
    st_upage lru, lru_part;          /* sentinels of the lists of entries: whole pages, parts */
    st_upage *spare;                 /* evicted whole-page entries (and their pages), for reuse */
    size_t nspare;
    size_t keep;                     /* strata_options.unpacked_cache_bytes */
    size_t bytes;                    /* unpacked bytes of all entries, pinned or not */
    /* Where pages are unpacked (mutex held): a copy of the region's dictionary with room for a
     * page right after it, so that LZ4 reads the dictionary as the bytes before the page (its
     * fast path; a dictionary elsewhere takes its slower external-dictionary path, which
     * copied matches with memmove: 16% of a packed CONTAINS scan). */
    uint8_t *scratch;
    const uint8_t *scratch_of;       /* the dictionary copied (its address and length) */
    uint32_t scratch_len;
    /* Encrypted files: the packed region's first bytes (header and dictionary), opened; the
     * one they replaced is kept until the cache is emptied (a reader may still point into it). */
    pthread_mutex_t head_mu;         /* (unpacking holds mu, and reads the head) */
    uint8_t *head, *old_head;
    pgno_t head_page;
    uint64_t head_stamp;
};

enum { SPARE_MAX = 256 };

/* A transaction's pins: every entry it holds (let go at its end), under one pin generation
 * (an entry it pinned carries it: pinned again, it is not held twice), and the last entries it
 * was given, by reference (direct-mapped: found again without the cache's mutex). */
enum { RECENT = 64 };
struct st_pins {
    st_upage **held;
    size_t nheld, held_cap;
    uint64_t generation;             /* 0: none yet (nothing held) */
    st_uslot recent[RECENT];
};

static size_t hash_ref(pgno_t r) {
    r ^= r >> 29;
    r *= 0xBF58476D1CE4E5B9ull;
    return (size_t)(r ^ (r >> 32));
}

int st_unpacked_init(strata_db_t *db, strata_error *err) {
    struct st_unpacked *u = calloc(1, sizeof *u);
    if (u) u->table = calloc(u->cap = 1024, sizeof *u->table);
    if (!u || !u->table) {
        free(u);
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory opening '%s'", db->file.shown);
    }
    u->keep = db->file.opts.unpacked_cache_bytes > SIZE_MAX ? SIZE_MAX : (size_t)db->file.opts.unpacked_cache_bytes;
    pthread_mutex_init(&u->mu, NULL);
    pthread_mutex_init(&u->head_mu, NULL);
    u->lru.lnext = u->lru.lprev = &u->lru;
    u->lru_part.lnext = u->lru_part.lprev = &u->lru_part;
    db->unpacked = u;
    return STRATA_OK;
}

static void entry_free(st_upage *e) { free(e); }

static void drop_all(struct st_unpacked *u) {
    free(u->checked);
    u->checked = NULL;
    u->checked_cap = u->nchecked = 0;
    for (size_t i = 0; i < u->cap; i++)
        if (u->table[i].e) entry_free(u->table[i].e);
    for (st_upage *e = u->spare, *next; e; e = next) {
        next = e->hnext;
        entry_free(e);
    }
    u->spare = NULL;
    u->nspare = 0;
    free(u->head);
    free(u->old_head);
    u->head = u->old_head = NULL;
    u->head_page = 0;
    free(u->scratch);
    u->scratch = NULL;
    u->scratch_of = NULL;
    u->scratch_len = 0;
    memset(u->table, 0, u->cap * sizeof *u->table);
    u->count = u->unpinned_bytes = u->unpinned_whole = u->bytes = 0;
    u->lru.lnext = u->lru.lprev = &u->lru;
    u->lru_part.lnext = u->lru_part.lprev = &u->lru_part;
}

uint64_t st_unpacked_bytes(strata_db_t *db) {
    struct st_unpacked *u = db->unpacked;
    if (!u) return 0;
    pthread_mutex_lock(&u->mu);
    size_t n = u->bytes;
    pthread_mutex_unlock(&u->mu);
    return n;
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
    pthread_mutex_destroy(&u->head_mu);
    free(u->table);
    free(u);
    db->unpacked = NULL;
}

/* Place e in a table of cap slots (a free slot is there). */
static void slot_put(st_uslot *t, size_t cap, st_upage *e) {
    size_t i = hash_ref(e->ref) & (cap - 1);
    while (t[i].e) i = (i + 1) & (cap - 1);
    t[i].ref = e->ref;
    t[i].e = e;
}

/* (table and cap are stored atomically: st_packed_prefetch reads them without the mutex) */
static int grow_table(struct st_unpacked *u) {
    size_t cap = u->cap * 2;
    st_uslot *t = calloc(cap, sizeof *t), *old = u->table;
    if (!t) return STRATA_ERR_NO_MEMORY;
    for (size_t i = 0; i < u->cap; i++)
        if (old[i].e) slot_put(t, cap, old[i].e);
    __atomic_store_n(&u->table, t, __ATOMIC_RELEASE);
    __atomic_store_n(&u->cap, cap, __ATOMIC_RELEASE);
    free(old);
    return STRATA_OK;
}

/* Take e out of the table: the slots after it in its run move back over the gap when their
 * home is not between the gap and them (linear probing's deletion, no tombstones). */
static void table_remove(struct st_unpacked *u, const st_upage *e) {
    size_t mask = u->cap - 1, i = hash_ref(e->ref) & mask;
    while (u->table[i].e != e) i = (i + 1) & mask;
    for (size_t j = (i + 1) & mask; u->table[j].e; j = (j + 1) & mask) {
        size_t home = hash_ref(u->table[j].ref) & mask;
        bool stays = i <= j ? (i < home && home <= j) : (i < home || home <= j);
        if (stays) continue;
        u->table[i] = u->table[j];
        i = j;
    }
    u->table[i].e = NULL;
    u->count--;
}

/* An entry of ref with at least `need` bytes unpacked, or NULL (mutex held). */
static st_upage *cache_find(const struct st_unpacked *u, pgno_t ref, size_t need) {
    for (size_t i = hash_ref(ref) & (u->cap - 1); u->table[i].e; i = (i + 1) & (u->cap - 1))
        if (u->table[i].ref == ref && u->table[i].e->have >= need) return u->table[i].e;
    return NULL;
}

static void lru_unlink(st_upage *e) {
    e->lprev->lnext = e->lnext;
    e->lnext->lprev = e->lprev;
    e->lprev = e->lnext = NULL;
}

/* e into its list between two neighbours (mutex held). */
static void lru_insert(st_upage *e, st_upage *prev, st_upage *next) {
    e->lprev = prev;
    e->lnext = next;
    prev->lnext = e;
    next->lprev = e;
}

static st_upage *lru_head(struct st_unpacked *u, const st_upage *e) {
    return e->have == ST_PAGE_SIZE ? &u->lru : &u->lru_part;
}

/* e to the front of its list (mutex held). */
static void lru_push(struct st_unpacked *u, st_upage *e) {
    st_upage *head = lru_head(u, e);
    lru_insert(e, head, head->lnext);
}

/* e to the back of its list, the next the hand takes (mutex held). */
static void lru_push_oldest(struct st_unpacked *u, st_upage *e) {
    st_upage *head = lru_head(u, e);
    lru_insert(e, head->lprev, head);
}

/* No transaction pins e now, or one pins it again: the unpinned bytes (mutex held). */
static void count_unpinned(struct st_unpacked *u, const st_upage *e, bool unpinned) {
    size_t whole = e->have == ST_PAGE_SIZE ? e->have : 0;
    if (unpinned) {
        u->unpinned_bytes += e->have;
        u->unpinned_whole += whole;
    } else {
        u->unpinned_bytes -= e->have;
        u->unpinned_whole -= whole;
    }
}

/* An entry no longer in the table: a whole page is kept for the next unpack, a part freed
 * (mutex held). */
static void entry_retire(struct st_unpacked *u, st_upage *e) {
    if (e->have == ST_PAGE_SIZE && u->nspare < SPARE_MAX) {
        e->hnext = u->spare;
        u->spare = e;
        u->nspare++;
    } else {
        entry_free(e);
    }
}

/* Unpinned pages over the limit go, whole pages before parts: a part costs a few dozen bytes
 * to keep, and a count that finds them all again runs at the speed of plain pages, where one
 * that cycles through more whole pages than fit would unpack each again (mutex held). Each
 * list is a clock: its oldest entry goes unless it is pinned or was used since the hand last
 * passed it (then it gets a second chance, to the front). Pinning an entry does not move it,
 * so a reader's hit touches no other entry. */
static void evict(struct st_unpacked *u) {
    while (u->unpinned_bytes > u->keep) {
        st_upage *list = u->unpinned_whole ? &u->lru : &u->lru_part, *e = list->lprev;
        lru_unlink(e);
        if (e->pins || e->referenced) {
            e->referenced = false;
            lru_push(u, e);
            continue;
        }
        table_remove(u, e);
        count_unpinned(u, e, false);
        u->bytes -= e->have;
        entry_retire(u, e);
    }
}

/* ------------------------------------------------------------------ a transaction's pins */

/* An entry of ref with at least `need` bytes that the transaction was given lately, or NULL
 * (it holds it: no mutex needed). */
static st_upage *pins_recent(const struct st_pins *ps, pgno_t ref, size_t need) {
    if (!ps) return NULL;
    const st_uslot *r = &ps->recent[hash_ref(ref) & (RECENT - 1)];
    return r->e && r->ref == ref && r->e->have >= need ? r->e : NULL;
}

/* The transaction holds e: pinned once per generation, remembered among the recent (mutex
 * held). */
static int pin(struct st_unpacked *u, strata_txn_t *txn, st_upage *e) {
    struct st_pins *ps = txn->pins;
    if (!ps && !(ps = txn->pins = calloc(1, sizeof *ps))) return STRATA_ERR_NO_MEMORY;
    if (!ps->generation) ps->generation = ++u->generation;
    if (e->pinned_by != ps->generation) {
        if (ps->nheld == ps->held_cap) {
            size_t cap = ps->held_cap ? ps->held_cap * 2 : 64;
            st_upage **h = realloc(ps->held, cap * sizeof *h);
            if (!h) return STRATA_ERR_NO_MEMORY;
            ps->held = h;
            ps->held_cap = cap;
        }
        ps->held[ps->nheld++] = e;
        if (e->pins++ == 0) count_unpinned(u, e, false);
        e->pinned_by = ps->generation;
    }
    st_uslot *r = &ps->recent[hash_ref(e->ref) & (RECENT - 1)];
    if (r->ref != e->ref || !r->e || r->e->have < e->have) { /* the widest is kept */
        r->ref = e->ref;
        r->e = e;
    }
    return STRATA_OK;
}

void st_pins_release(strata_txn_t *txn) {
    struct st_pins *ps = txn->pins;
    if (!ps || !ps->generation) return;
    struct st_unpacked *u = txn->db->unpacked;
    pthread_mutex_lock(&u->mu);
    for (size_t i = 0; i < ps->nheld; i++) {
        st_upage *e = ps->held[i];
        if (i + 8 < ps->nheld) __builtin_prefetch(ps->held[i + 8], 1); /* a scan's are thousands */
        e->referenced = true;
        if (--e->pins == 0) count_unpinned(u, e, true);
    }
    evict(u);
    pthread_mutex_unlock(&u->mu);
    ps->nheld = 0;
    ps->generation = 0;
    memset(ps->recent, 0, sizeof ps->recent);
}

size_t st_pins_mark(const strata_txn_t *txn) { return txn->pins ? txn->pins->nheld : 0; }

size_t st_pins_let_go_columns(strata_txn_t *txn, size_t mark) {
    struct st_pins *ps = txn->pins;
    if (!ps || ps->nheld <= mark) return mark;
    struct st_unpacked *u = txn->db->unpacked;
    size_t kept = mark;
    pthread_mutex_lock(&u->mu);
    for (size_t i = mark; i < ps->nheld; i++) {
        st_upage *e = ps->held[i];
        if (pg_kind(e->page) != ST_PAGE_COLUMN) { /* held to the end as before */
            ps->held[kept++] = e;
            continue;
        }
        st_uslot *r = &ps->recent[hash_ref(e->ref) & (RECENT - 1)];
        if (r->e == e) r->e = NULL;
        if (e->pinned_by == ps->generation) e->pinned_by = 0; /* pinned again if read again */
        if (--e->pins == 0) count_unpinned(u, e, true);
        /* The first to go when the cache is over its bound: a scan reads each page once, so
         * what the cache held before it stays (a table that fits stays whole), and the entry
         * the next page is unpacked into is one just read (in the processor's cache). */
        e->referenced = false;
        lru_unlink(e);
        lru_push_oldest(u, e);
    }
    evict(u);
    pthread_mutex_unlock(&u->mu);
    ps->nheld = kept;
    txn->let_go++;
    return kept;
}

void st_pins_free(strata_txn_t *txn) {
    st_pins_release(txn);
    if (txn->pins) free(txn->pins->held);
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

/* An encrypted file's region head, opened (cached per handle): *hdr its plain bytes. */
static int sealed_region_head(strata_txn_t *txn, const st_meta *m, const uint8_t **hdr, strata_error *err) {
    strata_db_t *db = txn->db;
    struct st_unpacked *u = db->unpacked;
    pgno_t pg = m->packed_region;
    const uint8_t *p = db->file.map + pg * ST_PAGE_SIZE;
    uint64_t stamp = st_rd64(p + PH_VERSION);
    int rc = STRATA_OK;
    pthread_mutex_lock(&u->head_mu);
    if (u->head && u->head_page == pg && u->head_stamp == stamp) goto done;
    uint8_t peek[16];
    if (stamp > m->version || pg >= ST_ENC_MAX_PAGES || st_cipher_peek_page(db->cipher, p, pg, peek, 16)) {
        rc = ST_CORRUPT(err, "packed region at page %llu: version %llu, newer than the snapshot %llu",
                        (unsigned long long)pg, (unsigned long long)stamp, (unsigned long long)m->version);
        goto done;
    }
    /* The sizes, read before they are authenticated, only size the opening. */
    uint64_t run = st_rd32(peek + (PH_RUN - 24)), dict = st_rd32(peek + (ST_REGION_DICT_LEN - 24));
    uint64_t first = (ST_REGION_DICT + dict + 7) & ~7ull;
    uint8_t *head = NULL;
    if (peek[0] != ST_PAGE_PACKED || run == 0 || run > m->page_count - pg || dict > ST_DICT_MAX ||
        first > run * ST_PAGE_SIZE || !(head = malloc(first)) ||
        st_cipher_open_page(db->cipher, p, first, pg, head)) {
        free(head);
        rc = ST_CORRUPT(err, "packed region at page %llu does not authenticate: damaged, moved or "
                        "written with another key", (unsigned long long)pg);
        goto done;
    }
    free(u->old_head);
    u->old_head = u->head;
    u->head = head;
    u->head_page = pg;
    u->head_stamp = stamp;
done:
    *hdr = u->head;
    pthread_mutex_unlock(&u->head_mu);
    return rc;
}

int st_packed_region(strata_txn_t *txn, const st_meta *m, st_region *r, strata_error *err) {
    const uint8_t *hdr;
    int rc = txn->db->cipher ? sealed_region_head(txn, m, &hdr, err)
                             : st_page_get(txn, m->packed_region, &hdr, err);
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

/* Unpack the first `want` bytes of ref's page into page (the whole page: want == the page
 * size, and then it is checked: number, version, checksum), or CORRUPT naming it. A part is
 * unpacked only from a page checked whole before in this process. */
/* The scratch area holding dict right before room for a page, or NULL (out of memory: LZ4
 * then reads the dictionary where it is) (mutex held). */
static uint8_t *scratch_for(struct st_unpacked *u, const uint8_t *dict, uint32_t len) {
    if (u->scratch && u->scratch_of == dict && u->scratch_len == len) return u->scratch;
    uint8_t *s = realloc(u->scratch, (size_t)ST_DICT_MAX + ST_PAGE_SIZE);
    if (!s) return NULL;
    memcpy(s + ST_DICT_MAX - len, dict, len);
    u->scratch = s;
    u->scratch_of = dict;
    u->scratch_len = len;
    return s;
}

static int unpack(strata_txn_t *txn, pgno_t ref, uint8_t *page, size_t want, bool checked,
                  strata_error *err) {
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
    uint8_t opened[ST_PAGE_SIZE];
    if (txn->db->cipher) { /* sealed after it was compressed */
        if (st_cipher_open_packed(txn->db->cipher, off, (const uint8_t *)src, len, opened))
            return ST_CORRUPT(err, "packed page %#llx does not authenticate: damaged, moved or "
                              "written with another key", shown);
        src = (const char *)opened;
        len -= ST_PACKED_TAG;
    }
    /* (a plain file's dictionary lies in the map, where it stays while the file does; an
     * encrypted file's is an opened copy that a new head may replace: read where it is) */
    uint8_t *scratch = txn->db->cipher ? NULL : scratch_for(txn->db->unpacked, r.dict, r.dict_len);
    const char *dict = scratch ? (const char *)scratch + ST_DICT_MAX - r.dict_len : (const char *)r.dict;
    char *out = scratch ? (char *)scratch + ST_DICT_MAX : (char *)page;
    int n = want < ST_PAGE_SIZE
                ? LZ4_decompress_safe_partial_usingDict(src, out, (int)len, (int)want, (int)want, dict,
                                                        (int)r.dict_len)
                : LZ4_decompress_safe_usingDict(src, out, (int)len, ST_PAGE_SIZE, dict, (int)r.dict_len);
    if (n > 0 && scratch) memcpy(page, out, (size_t)n);
    if (n < PH_SIZE)
        return ST_CORRUPT(err, "packed page %#llx: does not unpack to a page (LZ4 gave %d)", shown, n);
    memset(page + n, 0, want - (size_t)n); /* the page's zero end */
    if (want < ST_PAGE_SIZE) return STRATA_OK; /* checked whole before */
    if (!pg_number_is(page, ref))
        return ST_CORRUPT(err, "packed page %#llx: header says %#llx", shown,
                          (unsigned long long)st_rd64(page + PH_PGNO));
    if (st_rd64(page + PH_VERSION) > m->version)
        return ST_CORRUPT(err, "packed page %#llx: written by version %llu, newer than the snapshot %llu",
                          shown, (unsigned long long)st_rd64(page + PH_VERSION),
                          (unsigned long long)m->version);
    if (!checked && st_rd64(page + PH_CHECKSUM) != st_checksum(page + 8, ST_PAGE_SIZE - 8))
        return ST_CORRUPT(err, "packed page %#llx (kind %u): checksum mismatch", shown, pg_kind(page));
    return STRATA_OK;
}

/* An entry with `bytes` to unpack into: a spare whole page, or new: the entry and its bytes
 * in one allocation, the bytes from the entry's second cache line on (a reader's miss on the
 * entry brings the start of its bytes with it) (mutex held). */
enum { ENTRY_HEAD = 64 };
_Static_assert(sizeof(st_upage) <= ENTRY_HEAD, "an entry's fields fit its first cache line");
static st_upage *entry_new(struct st_unpacked *u, size_t bytes) {
    st_upage *e = NULL;
    if (bytes == ST_PAGE_SIZE && (e = u->spare)) {
        u->spare = e->hnext;
        u->nspare--;
        return e;
    }
    if (!(e = aligned_alloc(64, ENTRY_HEAD + bytes))) return NULL;
    e->page = (uint8_t *)e + ENTRY_HEAD;
    return e;
}

/* The first `need` bytes of ref's page (the page size: all of it), pinned by the transaction. */
static int get(strata_txn_t *txn, pgno_t ref, size_t need, const uint8_t **page, strata_error *err) {
    st_upage *e = pins_recent(txn->pins, ref, need);
    if (e) {
        *page = e->page;
        return STRATA_OK;
    }
    struct st_unpacked *u = txn->db->unpacked;
    int rc = STRATA_OK;
    pthread_mutex_lock(&u->mu);
    if (!(e = cache_find(u, ref, need))) {
        size_t want = (need + 63) & ~(size_t)63;
        bool checked = checked_has(u, ref);
        if (want > ST_PAGE_SIZE / 2 || !checked) want = ST_PAGE_SIZE;
        if (!(e = entry_new(u, want)) || ((u->count + 1) * 2 > u->cap && grow_table(u) != STRATA_OK)) {
            if (e) entry_retire(u, e);
            e = NULL;
            rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory unpacking a page");
        } else if ((rc = unpack(txn, ref, e->page, want, checked, err))) {
            e->have = (uint32_t)want;
            entry_retire(u, e);
            e = NULL;
        } else {
            if (want == ST_PAGE_SIZE) checked_add(u, ref);
            e->ref = ref;
            e->have = (uint32_t)want;
            e->pins = 0;
            e->pinned_by = 0;
            e->referenced = false;
            slot_put(u->table, u->cap, e);
            u->count++;
            u->bytes += want;
            lru_push(u, e);
            count_unpinned(u, e, true); /* until pinned, below */
        }
    }
    if (rc == STRATA_OK && pin(u, txn, e) != STRATA_OK) {
        evict(u); /* (a new entry no one pins may be over the limit) */
        rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory unpacking a page");
    }
    pthread_mutex_unlock(&u->mu);
    if (rc) return rc;
    *page = e->page;
    return STRATA_OK;
}

void st_packed_prefetch(strata_txn_t *txn, pgno_t ref) {
    struct st_unpacked *u = txn->db->unpacked;
    if (!u) return;
    /* Read without the mutex: a table being replaced gives a stale or out-of-range address,
     * which a prefetch may be given (it never faults); the address is made as an integer. */
    uintptr_t t = (uintptr_t)__atomic_load_n(&u->table, __ATOMIC_ACQUIRE);
    size_t cap = __atomic_load_n(&u->cap, __ATOMIC_ACQUIRE);
    __builtin_prefetch((const void *)(t + (hash_ref(ref) & (cap - 1)) * sizeof(st_uslot)));
}

int st_packed_get(strata_txn_t *txn, pgno_t ref, const uint8_t **page, strata_error *err) {
    return get(txn, ref, ST_PAGE_SIZE, page, err);
}

int st_packed_get_part(strata_txn_t *txn, pgno_t ref, size_t need, const uint8_t **page,
                       strata_error *err) {
    return get(txn, ref, need < PH_SIZE ? PH_SIZE : need, page, err);
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
    uint8_t opened[ST_PAGE_SIZE];
    for (uint64_t i = 0; i < samples; i++) {
        pgno_t pg = 2 + (pages - 2) * i / samples;
        const uint8_t *p = map + pg * ST_PAGE_SIZE;
        if (src->db->cipher) { /* an encrypted file's page, opened here (a free one may not) */
            if (st_cipher_open_page(src->db->cipher, p, ST_PAGE_SIZE, pg, opened)) continue;
            p = opened;
        }
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
