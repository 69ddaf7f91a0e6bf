/*
 * freelist.c — free space tagged by version: loading, reusing and saving the free list.
 *
 * Layout: the meta's freelist_head names the first directory page (0 = no free list).
 *   directory page (kind 5): header, u32 count at 28, u64 next directory page at 32,
 *                            then count u64 page numbers of leaves, in order;
 *   leaf page (kind 4):      header, u32 count at 28, then count entries {u64 pgno, u64 version}
 *                            where version is the version that freed pgno.
 * Entries are in non-decreasing version order across the whole list (leaf after leaf).
 *
 * The delta (format 14; 15 for encrypted files): a commit whose free-list changes since the
 * list was last saved fit its meta page writes them there instead of list pages (flag
 * ST_META_FREE_DELTA; the image's layout below, at "the delta"). The version's list is the
 * saved one without the entries the delta took, then the pages the delta freed and did not take
 * again. A small commit takes and frees a dozen pages: ~200 bytes of delta, so the list is saved
 * again every 20 to 80 commits; between, a commit writes no list page (a third of a one-object
 * commit's pages, and of its CPU: the leaves' rewrite, their log diff and checksums). In memory
 * a transaction keeps the saved list as loaded (txn->fl: its leaves as on disk) and the delta
 * apart (txn->delta); the maps leave the delta's taken entries out (by index, not through the
 * maps: a later transaction may not count reusable what the one that took it did) and map its
 * freed pages as the list's (leaf_of DELTA_LEAF), so they are taken again as soon as they
 * would be in the list. A save as a delta appends what this transaction took (r->took, by index)
 * and freed; a full save leaves out every taken entry and puts the delta's freed pages before
 * this commit's.
 *
 * Invariants:
 *  - Entries with version <= the oldest version any reader holds are reusable, and because of
 *    the order they form a prefix of the list. For a logged commit, an entry freed after the
 *    durable version is held (not reused) unless its page was written after that version (its
 *    own checksummed header says so): the commit log's replay reads the durable version's
 *    pages, and after a power cut that took unsynced records recovery reopens at it (commitlog.c).
 *  - Reuse keeps a commit's writes together: a write transaction maps the reusable pages to a
 *    bit map and takes runs of adjacent free pages (st_freelist_take). A small transaction takes
 *    runs at least half as long as the last commit needed (2 to ST_REUSE_MIN_RUN pages) and
 *    grows the file by a run rather than take shorter ones; shorter runs and lone pages only
 *    once over a quarter of the file is reusable (or in a big transaction), so stranded space
 *    stays bounded. A copy of a cold page (one no commit rewrote for a while: a random index
 *    leaf) is a separate write wherever it goes: it takes a lone page first (take_lone), else a
 *    page of a run too short for the commit's run (take_short), so the pages that change every
 *    commit keep their runs and the holes a scattered update leaves are filled by cold copies;
 *    lone pages of the leaf the last cold copy took from first (take_cold), so that a stream of
 *    small commits rewrites one leaf for them, not another old one each time.
 *    Why: on the test machine 16 pages in one run sync 2.8x faster than 16 scattered ones, and
 *    13 pages in 7 places 2.3x slower than in one; with this a stream of small commits cycles
 *    through the same few runs.
 *  - Searches resume where the handle's last commit left them (st_reuse_hints: per run length,
 *    the position before which no such run starts), looking first at the pages that became
 *    reusable since (up to 32; with more, the positions move back before the lowest). Without
 *    this every small commit re-walked thousands of short runs looking for a long one: ~25 us,
 *    a tenth of a durable commit after a scattered update. A stale hint can only miss a run.
 *  - A commit rewrites only the leaves it took entries from, the not-full last leaf (the new
 *    entries join it), and the directory; other leaves are kept as they are. So with a reader
 *    pinned, a small commit costs a handful of pages, not a copy of the whole list (in memory
 *    too: the list's arrays keep the leaves before the first rewritten one). When the
 *    list has more than twice the leaves its entries need (plus four), the commit packs it all,
 *    which bounds it.
 *  - The reuse maps (a bit per reusable page, a bit per held one, the leaf holding each entry)
 *    are handed from a commit to the handle's next write transaction with the list, which adds
 *    only the entries that became reusable since (versions above `mapped`); they are rebuilt
 *    when the durable version moved, a reader holds an older version, another writer committed
 *    or a transaction did not commit. A commit's own list rewrite records where entries moved;
 *    save counts the taken pages found in leaves against those taken and refuses a mismatch
 *    (make asan compares every handed-over map with one built from scratch).
 *  - A run of pages for a value bigger than a page (st_freelist_take_run) is the shortest run
 *    of adjacent reusable pages that holds it (best fit), else it comes from the end of the file.
 *  - New entries (pages this commit stopped using, tagged with its version) go at the end.
 *  - The pages holding the new list are taken from the free space itself, so the count is
 *    settled by iteration; pages taken beyond the need become empty leaves, dropped next time.
 *  - The file's end is given back: at commit, reusable pages at the very end (no page after
 *    them in use) leave the list and the page count ends before them (st_freelist_trim); the
 *    pager then shortens the file once no reader holds an older version. When the end is kept
 *    only because the durable version's pages there are held for it, the next write
 *    transaction syncs first (a checkpoint), which lets them go. Since runs are taken
 *    from the lowest free pages up, pages that commits rewrite move down, and the end of a file
 *    that grew while a reader was pinned comes free as soon as the reader lets go.
 */
#include "storage/freelist.h"

#include "storage/cipher.h"

#include "storage/pager.h"

#include <stdlib.h>
#include <xxhash.h>

void st_freelist_clear(st_freelist *fl) {
    st_free_vec_clear(&fl->entries);
    free(fl->leaf_start);
    free(fl->leaf_pgno);
    free(fl->dir_pgno);
    memset(fl, 0, sizeof *fl);
}

static int grow_array(void *pp, size_t *cap, size_t need, size_t elem) {
    if (need <= *cap) return STRATA_OK;
    size_t c = *cap ? *cap : 16;
    while (c < need) c *= 2;
    void *p = realloc(*(void **)pp, c * elem);
    if (!p) return STRATA_ERR_NO_MEMORY;
    *(void **)pp = p;
    *cap = c;
    return STRATA_OK;
}

/* Builder for a free list: add leaves and directory pages in order. */
typedef struct fl_builder {
    st_freelist *fl;
    size_t leaf_cap, dir_cap;
} fl_builder;

/* Room for `leaves` leaves in fl's arrays (leaf_start has one more). On failure fl is as it
 * was, its arrays possibly larger. */
static int leaf_room(st_freelist *fl, size_t leaves) {
    pgno_t *lp = realloc(fl->leaf_pgno, leaves * sizeof *lp);
    if (!lp) return STRATA_ERR_NO_MEMORY;
    fl->leaf_pgno = lp;
    size_t *ls = realloc(fl->leaf_start, (leaves + 1) * sizeof *ls);
    if (!ls) return STRATA_ERR_NO_MEMORY;
    fl->leaf_start = ls;
    return STRATA_OK;
}

static int add_leaf(fl_builder *b, pgno_t pgno) {
    st_freelist *fl = b->fl;
    if (fl->nleaves + 1 > b->leaf_cap) {
        size_t c = b->leaf_cap ? b->leaf_cap * 2 : 16;
        if (leaf_room(fl, c)) return STRATA_ERR_NO_MEMORY;
        b->leaf_cap = c;
    }
    fl->leaf_pgno[fl->nleaves] = pgno;
    fl->leaf_start[fl->nleaves] = fl->entries.n;
    fl->nleaves++;
    fl->leaf_start[fl->nleaves] = fl->entries.n;
    return STRATA_OK;
}

static int add_entry(fl_builder *b, pgno_t pgno, uint64_t version) {
    if (st_free_vec_push(&b->fl->entries, pgno, version)) return STRATA_ERR_NO_MEMORY;
    b->fl->leaf_start[b->fl->nleaves] = b->fl->entries.n;
    return STRATA_OK;
}

/* Append entries [src, src + n) to the current leaf in one copy. */
static int add_entries(fl_builder *b, const st_free_entry *src, size_t n) {
    st_free_vec *fv = &b->fl->entries;
    if (grow_array(&fv->v, &fv->cap, fv->n + n, sizeof *fv->v)) return STRATA_ERR_NO_MEMORY;
    if (n) memcpy(fv->v + fv->n, src, n * sizeof *src);
    fv->n += n;
    b->fl->leaf_start[b->fl->nleaves] = fv->n;
    return STRATA_OK;
}

/* Room for `entries` entries, `leaves` leaves and `dirs` directory pages in b's list. */
static int presize(fl_builder *b, size_t entries, size_t leaves, size_t dirs) {
    st_freelist *fl = b->fl;
    if (grow_array(&fl->entries.v, &fl->entries.cap, entries, sizeof *fl->entries.v) ||
        grow_array(&fl->dir_pgno, &b->dir_cap, dirs, sizeof *fl->dir_pgno))
        return STRATA_ERR_NO_MEMORY;
    if (leaves <= b->leaf_cap) return STRATA_OK;
    if (leaf_room(fl, leaves)) return STRATA_ERR_NO_MEMORY;
    b->leaf_cap = leaves;
    return STRATA_OK;
}

static int add_dir(fl_builder *b, pgno_t pgno) {
    if (grow_array(&b->fl->dir_pgno, &b->dir_cap, b->fl->ndirs + 1, sizeof(pgno_t)))
        return STRATA_ERR_NO_MEMORY;
    b->fl->dir_pgno[b->fl->ndirs++] = pgno;
    return STRATA_OK;
}

int st_freelist_load(strata_db_t *db, const st_meta *meta, const st_fl_delta *delta,
                     st_freelist *out, strata_error *err) {
    memset(out, 0, sizeof *out);
    fl_builder b = {out, 0, 0};
    int rc = STRATA_OK;
    uint64_t hops = 0, last_version = 0;
#define FAIL(...) do { rc = ST_CORRUPT(err, __VA_ARGS__); goto fail; } while (0)
    for (pgno_t d = meta->freelist_head; d; ) {
        if (d < 2 || d >= meta->page_count)
            FAIL("free-list directory page %llu out of range", (unsigned long long)d);
        if (++hops > meta->page_count)
            FAIL("free-list directory has a cycle at page %llu", (unsigned long long)d);
        const uint8_t *dp = db->file.map + d * ST_PAGE_SIZE;
        if (db->trust && (rc = st_trust_check(db, dp, d, meta->page_count, meta->version, err)))
            goto fail;
        dp = db->view + d * ST_PAGE_SIZE;
        uint32_t n = st_rd32(dp + PH_FCOUNT);
        if (pg_kind(dp) != ST_PAGE_FREEDIR || n > FL_PER_DIR)
            FAIL("page %llu: expected a free-list directory, found kind %u with %u entries",
                 (unsigned long long)d, pg_kind(dp), n);
        if (add_dir(&b, d)) goto nomem;
        for (uint32_t i = 0; i < n; i++) {
            pgno_t lp = st_rd64(dp + FL_ENTRIES + 8 * i);
            if (lp < 2 || lp >= meta->page_count)
                FAIL("free-list directory page %llu: leaf %u is page %llu, out of range",
                     (unsigned long long)d, i, (unsigned long long)lp);
            if (out->nleaves >= meta->page_count)
                FAIL("free-list directory page %llu lists more leaves than pages", (unsigned long long)d);
            const uint8_t *lpg = db->file.map + lp * ST_PAGE_SIZE;
            if (db->trust && (rc = st_trust_check(db, lpg, lp, meta->page_count, meta->version, err)))
                goto fail;
            lpg = db->view + lp * ST_PAGE_SIZE;
            uint32_t m = st_rd32(lpg + PH_FCOUNT);
            if (pg_kind(lpg) != ST_PAGE_FREELIST || m > FL_PER_PAGE)
                FAIL("page %llu: expected a free-list leaf, found kind %u with %u entries",
                     (unsigned long long)lp, pg_kind(lpg), m);
            if (add_leaf(&b, lp)) goto nomem;
            for (uint32_t j = 0; j < m; j++) {
                const uint8_t *e = lpg + FL_ENTRIES + 16 * j;
                pgno_t fp = st_rd64(e);
                uint64_t v = st_rd64(e + 8);
                if (fp < 2 || fp >= meta->page_count)
                    FAIL("free-list leaf %llu entry %u: page %llu out of range",
                         (unsigned long long)lp, j, (unsigned long long)fp);
                if (v > meta->version || v < last_version)
                    FAIL("free-list leaf %llu entry %u: version %llu out of order",
                         (unsigned long long)lp, j, (unsigned long long)v);
                last_version = v;
                if (out->entries.n >= meta->page_count)
                    FAIL("free list holds more entries than pages");
                if (add_entry(&b, fp, v)) goto nomem;
            }
        }
        d = st_rd64(dp + FL_NEXT);
    }
    /* The meta counts the version's list: the saved one less the delta's taken entries, with
     * the delta's freed pages. */
    size_t nt = delta ? delta->ntaken : 0, nf = delta ? delta->freed.n : 0;
    if (out->entries.n + nf != meta->free_count + nt)
        FAIL("free list holds %zu entries (%zu of them taken, %zu freed since), meta says %llu",
             out->entries.n, nt, nf, (unsigned long long)meta->free_count);
    for (size_t k = 0; k < nt; k++)
        if (delta->taken[k] >= out->entries.n + nf)
            FAIL("free-list delta: taken entry %u of a list of %zu and %zu freed since",
                 delta->taken[k], out->entries.n, nf);
    if (nf && delta->freed.v[0].version < last_version)
        FAIL("free-list delta: freed page %llu (version %llu) before the list's last version %llu",
             (unsigned long long)delta->freed.v[0].pgno,
             (unsigned long long)delta->freed.v[0].version, (unsigned long long)last_version);
#undef FAIL
    return STRATA_OK;
nomem:
    rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory loading the free list");
fail:
    st_freelist_clear(out);
    return rc;
}

/* ------------------------------------------------------------------ the delta */

/* Delta image (a meta page's bytes from ST_DELTA_OFF; meaningful with ST_META_FREE_DELTA).
 * Both arrays only grow until the list is saved again, so that a commit changes the image's
 * header and appends (its commit log record carries little more):
 *   0   u64 XXH3-64 of bytes [8, 24 + 4 * ntaken), seeded with that of the freed entries
 *   8   u64 the meta's version     16 u32 ntaken     20 u32 nfreed
 *   24  ntaken u32, in the order taken: an index below the saved list's length n is a taken
 *       entry of the list; n + k is freed page k taken again
 *   freed page k, {u64 pgno, u64 version}, at ST_DELTA_BYTES - 16 (k + 1): the pages freed since
 *       the list was saved, in version order (taking one again does not move the others) */
#define DELTA_HEAD 24

static size_t delta_bytes(size_t ntaken, size_t nfreed) {
    return DELTA_HEAD + 4 * ntaken + 16 * nfreed;
}

static uint64_t delta_sum(const uint8_t *img, uint32_t nt, uint32_t nf) {
    size_t freed = 16 * (size_t)nf;
    uint64_t seed = XXH3_64bits(img + ST_DELTA_BYTES - freed, freed);
    return XXH3_64bits_withSeed(img + 8, DELTA_HEAD - 8 + 4 * (size_t)nt, seed);
}

void st_fl_delta_clear(st_fl_delta *d) {
    free(d->taken);
    st_free_vec_clear(&d->freed);
    memset(d, 0, sizeof *d);
}

bool st_fl_delta_image_ok(const uint8_t *img, const st_meta *m) {
    uint32_t nt = st_rd32(img + 16), nf = st_rd32(img + 20);
    return nt <= ST_DELTA_BYTES / 4 && nf <= ST_DELTA_BYTES / 16 &&
           delta_bytes(nt, nf) <= ST_DELTA_BYTES && st_rd64(img + 8) == m->version &&
           st_rd64(img) == delta_sum(img, nt, nf);
}

int st_fl_delta_decode(const uint8_t *img, const st_meta *m, st_fl_delta *out, strata_error *err) {
    memset(out, 0, sizeof *out);
    if (!(m->flags & ST_META_FREE_DELTA)) return STRATA_OK;
    if (!st_fl_delta_image_ok(img, m))
        return ST_CORRUPT(err, "the free-list delta of version %llu is damaged",
                          (unsigned long long)m->version);
    uint32_t nt = st_rd32(img + 16), nf = st_rd32(img + 20);
    out->taken = malloc((nt ? nt : 1) * sizeof *out->taken);
    if (!out->taken)
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory loading the free list");
    for (uint32_t i = 0; i < nt; i++) out->taken[i] = st_rd32(img + DELTA_HEAD + 4 * i);
    out->ntaken = nt;
    uint64_t last = 0;
    for (uint32_t k = 0; k < nf; k++) {
        const uint8_t *e = img + ST_DELTA_BYTES - 16 * ((size_t)k + 1);
        pgno_t pg = st_rd64(e);
        uint64_t v = st_rd64(e + 8);
        if (pg < 2 || pg >= m->page_count || v > m->version || v < last) {
            st_fl_delta_clear(out);
            return ST_CORRUPT(err, "the free-list delta of version %llu: freed page %llu "
                              "(version %llu) out of range or order",
                              (unsigned long long)m->version, (unsigned long long)pg,
                              (unsigned long long)v);
        }
        last = v;
        if (st_free_vec_push(&out->freed, pg, v)) {
            st_fl_delta_clear(out);
            return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory loading the free list");
        }
    }
    return STRATA_OK;
}

void st_fl_delta_restamp(uint8_t *img, uint64_t version) {
    uint32_t nt = st_rd32(img + 16), nf = st_rd32(img + 20);
    st_wr64(img + 8, version);
    st_wr64(img, delta_sum(img, nt, nf));
}

/* Encode d for version into img (its other bytes left as they are: an appended entry changes
 * only its own bytes and the header); false when it does not fit. */
static bool delta_encode(const st_fl_delta *d, uint64_t version, uint8_t *img) {
    if (delta_bytes(d->ntaken, d->freed.n) > ST_DELTA_BYTES) return false;
    st_wr64(img + 8, version);
    st_wr32(img + 16, (uint32_t)d->ntaken);
    st_wr32(img + 20, (uint32_t)d->freed.n);
    for (size_t i = 0; i < d->ntaken; i++) st_wr32(img + DELTA_HEAD + 4 * i, d->taken[i]);
    for (size_t k = 0; k < d->freed.n; k++) {
        uint8_t *e = img + ST_DELTA_BYTES - 16 * (k + 1);
        st_wr64(e, d->freed.v[k].pgno);
        st_wr64(e + 8, d->freed.v[k].version);
    }
    st_wr64(img, delta_sum(img, (uint32_t)d->ntaken, (uint32_t)d->freed.n));
    return true;
}

/* ------------------------------------------------------------------ reuse */

void st_reuse_map_clear(st_reuse_map *m) {
    free(m->bits);
    free(m->held);
    free(m->leaf_of);
    memset(m, 0, sizeof *m);
}

void st_reuse_clear(st_reuse *r) {
    st_reuse_map_clear(&r->map);
    free(r->leaf_taken);
    free(r->leaf_slots);
    free(r->dtaken);
    free(r->took.v);
    memset(r, 0, sizeof *r);
}

static bool bit_is_set(const st_reuse *r, pgno_t p) {
    return p < r->map.npages && (r->map.bits[p / 64] >> (p % 64) & 1);
}

/* A logged commit's durable version must stay intact until the log moves past it: a page freed
 * after it is reused only if it is not one of its pages, i.e. was written after it (its header
 * says which version wrote it). Only a page whose own checksum holds has a header: the middle
 * pages of an overflow run hold value bytes where a header would be (and a run's head sums the
 * whole run), so they are held — read as a version they once let a commit reuse pages of the
 * durable version, which an unsynced log record lost to a power cut then needed (powerloss).
 * Other modes never reach here with such an entry: NO_SYNC caps the reusable entries at the
 * durable version, and FULL without a log has it as the current. An encrypted file's page
 * proves its header by opening (a middle page of a run does not open as a page of its own). */
static bool written_after_durable(const strata_txn_t *txn, pgno_t p) {
    strata_db_t *db = txn->db;
    const uint8_t *page = db->file.map + p * ST_PAGE_SIZE;
    uint64_t version = st_rd64(page + PH_VERSION);
    if (version <= txn->durable_version) return false;
    /* Checked (or opened) with this stamp before, or written by this handle's commit: this
     * process saw that version write the page. (Most entries a stream of small commits frees
     * are pages the handle's last commits wrote: a checksum each was a tenth of a commit.) */
    if (db->trust && st_page_trusted(db, page, p, txn->meta.version)) return true;
    if (!db->cipher) return st_rd64(page + PH_CHECKSUM) == st_checksum(page + 8, ST_PAGE_SIZE - 8);
    uint8_t plain[ST_PAGE_SIZE];
    return st_cipher_open_page(db->cipher, page, ST_PAGE_SIZE, p, plain) == 0;
}

/* The first entry freed after `version` (entries are in version order). */
static size_t first_after(const st_freelist *fl, uint64_t version) {
    size_t lo = 0, hi = fl->entries.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (fl->entries.v[mid].version <= version) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Cover pages [0, npages): new bits clear. false: out of memory. */
static bool map_cover(st_reuse_map *m, size_t npages) {
    size_t had = (m->npages + 63) / 64, words = (npages + 63) / 64;
    uint64_t *b = realloc(m->bits, words * 8);
    if (b) m->bits = b;
    uint64_t *h = m->held ? realloc(m->held, words * 8) : NULL;
    if (h) m->held = h;
    pgno_t *l = realloc(m->leaf_of, (npages ? npages : 1) * sizeof *l);
    if (l) m->leaf_of = l;
    if (!b || (m->held && !h) || !l) return false;
    memset(m->bits + had, 0, (words - had) * 8);
    if (m->held) memset(m->held + had, 0, (words - had) * 8);
    m->npages = npages;
    return true;
}

static size_t leaf_slot(pgno_t leaf, size_t mask) {
    return (size_t)((leaf * 0x9E3779B97F4A7C15ull) >> 20) & mask;
}

/* The leaves' table by page (r->leaf_slots): built at every write transaction; sorting them
 * for a binary search through glibc's qsort (a merge sort of 16-byte elements by memcpy) was
 * 2-3% of a small commit, a shell sort still 1.8% of its user time. false: out of memory. */
static bool index_leaves(st_reuse *r, const st_freelist *fl) {
    size_t slots = 16;
    while (slots < 2 * fl->nleaves) slots *= 2;
    r->leaf_slots = calloc(slots, sizeof *r->leaf_slots);
    if (!r->leaf_slots) return false;
    r->leaf_mask = slots - 1;
    for (size_t i = 0; i < fl->nleaves; i++) {
        size_t j = leaf_slot(fl->leaf_pgno[i], r->leaf_mask);
        while (r->leaf_slots[j].pgno) j = (j + 1) & r->leaf_mask;
        r->leaf_slots[j] = (st_leaf_ref){fl->leaf_pgno[i], i};
    }
    return true;
}

static size_t leaf_index(const strata_txn_t *txn, pgno_t leaf);

/* Where a page of the delta's freed ones is, in leaf_of: no leaf (a leaf's page is 2 or more). */
#define DELTA_LEAF 1

static inline bool dtaken_at(const uint64_t *dtaken, size_t i) {
    return dtaken && (dtaken[i / 64] >> (i % 64) & 1);
}

/* Map one reusable entry: page p, freed by `version`, in the leaf on page leaf_pg (DELTA_LEAF:
 * freed since the list was saved): held for the durable version, or free to take (fresh when
 * freed after the hints' cutoff). false when out of memory. */
static bool map_entry(strata_txn_t *txn, pgno_t p, uint64_t version, pgno_t leaf_pg,
                      pgno_t *low, int *nfresh) {
    st_reuse *r = &txn->reuse;
    st_reuse_map *m = &r->map;
    if (p >= m->npages) return true; /* checked at load; never reused if it were wrong */
    m->leaf_of[p] = leaf_pg;
    if (version > txn->durable_version && !written_after_durable(txn, p)) {
        if (!m->held && !(m->held = calloc((m->npages + 63) / 64, 8))) return false;
        m->held[p / 64] |= 1ull << (p % 64);
        return true;
    }
    m->bits[p / 64] |= 1ull << (p % 64);
    if (version > txn->db->reuse_hints.cutoff) {
        int cap = (int)(sizeof r->fresh / sizeof *r->fresh);
        if (p < *low) *low = p;
        if (*nfresh >= 0 && *nfresh < cap) r->fresh[(*nfresh)++] = p;
        else *nfresh = -1;
    }
    return true;
}

/* Map the reusable entries: a bit per page, the leaf of each, a taken count per leaf. The maps
 * handed over from the handle's last commit already hold the entries freed up to their
 * `mapped` version, decided for the same durable version; only the entries that became reusable
 * since are added (all when the durable version moved, a reader holds an older version, or
 * nothing was handed over). The delta's freed pages are reusable as the list's entries are. */
static bool map_prepare(strata_txn_t *txn, const uint64_t *dt) {
    st_reuse *r = &txn->reuse;
    st_reuse_map *m = &r->map;
    const st_freelist *fl = &txn->fl;
    const st_free_vec *df = &txn->delta.freed;
    size_t lo = first_after(fl, txn->oldest_reader), dlo = 0;
    while (dlo < df->n && df->v[dlo].version <= txn->oldest_reader) dlo++;
    r->ready = true;
    r->reusable = lo;
    bool keep = m->bits && m->durable == txn->durable_version && m->mapped <= txn->oldest_reader &&
                m->npages <= txn->page_count;
    if (!keep || (lo == 0 && dlo == 0)) st_reuse_map_clear(m);
    if (lo == 0 && dlo == 0) return true;
    size_t from = keep ? first_after(fl, m->mapped) : 0, dfrom = 0;
    while (keep && dfrom < df->n && df->v[dfrom].version <= m->mapped) dfrom++;
    r->leaf_taken = calloc(fl->nleaves + 1, sizeof *r->leaf_taken);
    if (!map_cover(m, txn->page_count) || !r->leaf_taken || !index_leaves(r, fl)) {
        st_reuse_clear(r); /* reuse nothing: the file grows instead */
        r->ready = true;
        return false;
    }
    m->mapped = txn->oldest_reader;
    m->durable = txn->durable_version;
    /* Searches start where the last commit's stopped. Pages that became reusable since are
     * looked at first; when there are many, the searches start before the lowest of them
     * instead (less the longest run looked for: such a page may extend a run before it). */
    const st_reuse_hints *h = &txn->db->reuse_hints;
    pgno_t low = m->npages;
    int nfresh = 0;
    size_t leaf = 0, b = fl->nleaves; /* leaf: the last leaf starting at or before `from` */
    while (b - leaf > 1) {
        size_t mid = leaf + (b - leaf) / 2;
        if (fl->leaf_start[mid] <= from) leaf = mid;
        else b = mid;
    }
    bool ok = true;
    for (size_t i = from; ok && i < lo; i++) { /* (not the entries the delta took) */
        while (leaf + 1 < fl->nleaves && fl->leaf_start[leaf + 1] <= i) leaf++;
        if (!dtaken_at(dt, i))
            ok = map_entry(txn, fl->entries.v[i].pgno, fl->entries.v[i].version,
                           fl->leaf_pgno[leaf], &low, &nfresh);
    }
    for (size_t i = dfrom; ok && i < dlo; i++)
        if (!dtaken_at(dt, fl->entries.n + i))
            ok = map_entry(txn, df->v[i].pgno, df->v[i].version, DELTA_LEAF, &low, &nfresh);
    if (!ok) {
        st_reuse_clear(r); /* reuse nothing: the file grows instead */
        r->ready = true;
        return false;
    }
    pgno_t back = !h->valid ? 0 : nfresh >= 0 ? m->npages
                                 : low > ST_REUSE_MIN_RUN ? low - ST_REUSE_MIN_RUN : 0;
    for (int len = 1; len <= ST_REUSE_MIN_RUN; len++)
        r->run_scan[len] = h->run_scan[len] < back ? h->run_scan[len] : back;
    r->lone_scan = h->lone_scan < back ? h->lone_scan : back;
    r->nfresh = h->valid && nfresh > 0 ? nfresh : 0;
    size_t cold = h->valid && h->cold_leaf ? leaf_index(txn, h->cold_leaf) : fl->nleaves;
    r->cold_leaf = cold < fl->nleaves ? cold + 1 : 0;
    return true;
}

/* The leaf holding entry j (the last starting at or before it). */
static size_t leaf_of_entry(const st_freelist *fl, size_t j) {
    size_t lo = 0, hi = fl->nleaves;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (fl->leaf_start[mid] <= j) lo = mid;
        else hi = mid;
    }
    return lo;
}

uint64_t *st_fl_delta_taken(const st_fl_delta *d, size_t n, bool *bad) {
    size_t all = n + d->freed.n;
    uint64_t *dt = calloc(all / 64 + 1, 8);
    *bad = dt == NULL;
    for (size_t k = 0; dt && k < d->ntaken; k++) {
        size_t j = d->taken[k];
        if (j >= all || dtaken_at(dt, j)) {
            *bad = true;
            break;
        }
        dt[j / 64] |= 1ull << (j % 64);
    }
    return dt;
}

/* The maps, then the base version's delta in them: the entries it took are taken (the maps
 * leave them out; each of the list's counts against its leaf like a page taken now, and save
 * leaves them out of the list). A delta that cannot be applied marks the maps unusable for a
 * save (delta_bad). */
static bool reuse_prepare(strata_txn_t *txn) {
    st_reuse *r = &txn->reuse;
    const st_freelist *fl = &txn->fl;
    bool bad;
    uint64_t *dt = st_fl_delta_taken(&txn->delta, fl->entries.n, &bad);
    bool ok = map_prepare(txn, dt);
    r->dtaken = dt;
    r->delta_bad = bad;
    if (bad) return ok;
    if (!r->leaf_taken && !(r->leaf_taken = calloc(fl->nleaves + 1, sizeof *r->leaf_taken))) {
        r->delta_bad = true;
        return ok;
    }
    for (size_t k = 0; k < txn->delta.ntaken; k++) {
        size_t j = txn->delta.taken[k];
        if (j >= fl->entries.n) continue; /* a freed page taken again: not the list's */
        r->leaf_taken[leaf_of_entry(fl, j)]++;
        r->ntaken++;
    }
    return ok;
}

/* Length of the run of set bits starting at page p (bits past npages are clear). */
static size_t run_length(const st_reuse *r, pgno_t p) {
    pgno_t q = p;
    while (q < r->map.npages) {
        uint64_t clear = ~r->map.bits[q / 64] >> (q % 64);
        if (clear == 0) {
            q += 64 - q % 64;
            continue;
        }
        q += (pgno_t)__builtin_ctzll(clear);
        break;
    }
    return (size_t)(q - p);
}

/* The run of set bits through page p: its start and length (false when p is not set). */
static bool run_through(const st_reuse *r, pgno_t p, pgno_t *start, size_t *len) {
    if (!bit_is_set(r, p)) return false;
    pgno_t s = p;
    while (s > 0 && bit_is_set(r, s - 1)) s--;
    *start = s;
    *len = run_length(r, s);
    return true;
}

void st_reuse_hints_save(strata_txn_t *txn) {
    const st_reuse *r = &txn->reuse;
    st_reuse_hints *h = &txn->hints_out;
    if (!r->ready || !r->map.bits) return; /* no search: the handle's hints still hold */
    /* The rest of the run being used holds runs up to its length, not longer ones. */
    size_t left = r->run_next < r->run_end ? (size_t)(r->run_end - r->run_next) : 0;
    for (size_t m = 1; m <= ST_REUSE_MIN_RUN; m++)
        h->run_scan[m] = m <= left && r->run_next < r->run_scan[m] ? r->run_next : r->run_scan[m];
    h->lone_scan = r->lone_scan;
    /* Runs through fresh pages this transaction left are not fresh next time: searches must
     * reach them. */
    for (int i = 0; i < r->nfresh; i++) {
        pgno_t s;
        size_t len;
        if (!run_through(r, r->fresh[i], &s, &len)) continue;
        for (size_t m = 1; m <= len && m <= ST_REUSE_MIN_RUN; m++)
            if (s < h->run_scan[m]) h->run_scan[m] = s;
        if (len == 1 && s < h->lone_scan) h->lone_scan = s;
    }
    h->cutoff = txn->oldest_reader;
    h->valid = true;
}

/* The first set bit at or after p, or npages. */
static pgno_t next_set(const st_reuse *r, pgno_t p) {
    while (p < r->map.npages) {
        uint64_t w = r->map.bits[p / 64] >> (p % 64);
        if (w) return p + (pgno_t)__builtin_ctzll(w);
        p += 64 - p % 64;
    }
    return r->map.npages;
}

/* The index in the list of the leaf on page `leaf`, or nleaves when no leaf is there. */
static size_t leaf_index(const strata_txn_t *txn, pgno_t leaf) {
    const st_reuse *r = &txn->reuse;
    if (!r->leaf_slots || leaf < 2) return txn->fl.nleaves;
    for (size_t j = leaf_slot(leaf, r->leaf_mask);; j = (j + 1) & r->leaf_mask) {
        if (r->leaf_slots[j].pgno == leaf) return r->leaf_slots[j].index;
        if (r->leaf_slots[j].pgno == 0) return txn->fl.nleaves;
    }
}

/* Take page p: its bit goes, its leaf counts one entry taken (save checks the counts). Which
 * entry it was goes into r->took, for a save as a delta (while it may still fit one): of the
 * list, or one of the delta's freed pages (its last not taken yet). */
static void take_bit(strata_txn_t *txn, pgno_t p) {
    st_reuse *r = &txn->reuse;
    const st_freelist *fl = &txn->fl;
    r->map.bits[p / 64] &= ~(1ull << (p % 64));
    size_t n = fl->entries.n, j = SIZE_MAX;
    if (r->map.leaf_of[p] == DELTA_LEAF) {
        const st_free_vec *df = &txn->delta.freed;
        for (size_t k = df->n; j == SIZE_MAX && k-- > 0;)
            if (df->v[k].pgno == p && !dtaken_at(r->dtaken, n + k)) j = n + k;
    } else {
        size_t i = leaf_index(txn, r->map.leaf_of[p]);
        r->ntaken++;
        if (i >= fl->nleaves) return; /* (save refuses the count) */
        r->leaf_taken[i]++;
        if (r->took_full) return; /* a full save: the maps say which were taken */
        for (size_t e = fl->leaf_start[i]; j == SIZE_MAX && e < fl->leaf_start[i + 1]; e++)
            if (fl->entries.v[e].pgno == p && !dtaken_at(r->dtaken, e)) j = e;
    }
    if (j == SIZE_MAX || !r->dtaken) {
        r->delta_bad = true; /* not where the maps said: save refuses */
        return;
    }
    r->dtaken[j / 64] |= 1ull << (j % 64);
    if (r->took_full) return;
    if (r->took.n == r->took.cap) {
        size_t cap = r->took.cap ? 2 * r->took.cap : 32;
        uint32_t *t = cap <= ST_DELTA_BYTES / 4 ? realloc(r->took.v, cap * sizeof *t) : NULL;
        if (!t) { /* no delta could hold them (or no memory): the commit saves the list */
            r->took_full = true;
            return;
        }
        r->took.v = t;
        r->took.cap = cap;
    }
    r->took.v[r->took.n++] = (uint32_t)j;
}

/* The delta's freed pages not taken (by it or this transaction), appended to v. */
static int push_delta_freed(const strata_txn_t *txn, st_free_vec *v) {
    const st_free_vec *df = &txn->delta.freed;
    size_t n = txn->fl.entries.n;
    for (size_t k = 0; k < df->n; k++)
        if (!dtaken_at(txn->reuse.dtaken, n + k) &&
            st_free_vec_push(v, df->v[k].pgno, df->v[k].version))
            return STRATA_ERR_NO_MEMORY;
    return STRATA_OK;
}

/* How many of the delta's freed pages are not taken (by it or this transaction). */
static size_t delta_freed_left(const strata_txn_t *txn) {
    size_t n = txn->fl.entries.n, left = 0;
    for (size_t k = 0; k < txn->delta.freed.n; k++) left += !dtaken_at(txn->reuse.dtaken, n + k);
    return left;
}
_Static_assert(sizeof ((st_reuse *)0)->run_scan / sizeof(pgno_t) == ST_REUSE_MIN_RUN + 1,
               "a search position per run length");

/* Start a new run at the first run of at least min pages (searching from run_scan[min]). */
static bool find_run(st_reuse *r, size_t min) {
    for (int i = 0; i < r->nfresh; i++) { /* runs the positions do not account for */
        pgno_t s;
        size_t len;
        if (r->fresh[i] < r->run_scan[min] && run_through(r, r->fresh[i], &s, &len) && len >= min) {
            r->run_next = s;
            r->run_end = s + len;
            return true;
        }
    }
    pgno_t p = next_set(r, r->run_scan[min]);
    size_t len = 0;
    while (p < r->map.npages && (len = run_length(r, p)) < min) p = next_set(r, p + len);
    /* No run of min pages starts before p, so none longer does; the run at p is in use. */
    for (size_t m = min; m <= ST_REUSE_MIN_RUN; m++)
        if (r->run_scan[m] < p + len) r->run_scan[m] = p + len;
    if (p >= r->map.npages) return false;
    r->run_next = p;
    r->run_end = p + len;
    return true;
}

#ifdef ST_CHECK_REUSE /* make asan: every map handed over must equal one built from scratch */
#include <stdio.h>
static bool map_bit(const uint64_t *m, size_t n, pgno_t p) {
    return m && p < n && (m[p / 64] >> (p % 64) & 1);
}
static void check_maps(strata_txn_t *txn) {
    st_reuse kept = txn->reuse;
    memset(&txn->reuse, 0, sizeof txn->reuse);
    reuse_prepare(txn);
    st_reuse_map *a = &kept.map, *b = &txn->reuse.map;
    size_t n = a->npages > b->npages ? a->npages : b->npages;
    for (pgno_t p = 0; p < n; p++) {
        bool ab = map_bit(a->bits, a->npages, p), bb = map_bit(b->bits, b->npages, p);
        bool ah = map_bit(a->held, a->npages, p), bh = map_bit(b->held, b->npages, p);
        if (ab != bb || ah != bh || ((ab || ah) && a->leaf_of[p] != b->leaf_of[p])) {
            fprintf(stderr, "reuse map differs at page %llu: bits %d/%d, held %d/%d, leaf %llu/%llu\n",
                    (unsigned long long)p, ab, bb, ah, bh,
                    (unsigned long long)(ab || ah ? a->leaf_of[p] : 0),
                    (unsigned long long)(bb || bh ? b->leaf_of[p] : 0));
            abort();
        }
    }
    st_reuse_clear(&txn->reuse);
    txn->reuse = kept;
}
#endif

/* The reuse map, built on first use; false when nothing can be reused. */
static bool reuse_ready(strata_txn_t *txn) {
    st_reuse *r = &txn->reuse;
#ifdef ST_CHECK_REUSE
    if (!r->ready) { reuse_prepare(txn); check_maps(txn); }
#endif
    if (!r->ready) reuse_prepare(txn);
    return r->map.bits != NULL;
}

/* A lone reusable page (no free neighbour), or false. */
static bool take_lone(strata_txn_t *txn, pgno_t *pgno) {
    st_reuse *r = &txn->reuse;
    for (int i = 0; i < r->nfresh; i++) {
        pgno_t s, p = r->fresh[i];
        size_t len;
        if (p < r->lone_scan && run_through(r, p, &s, &len) && len == 1) {
            *pgno = p;
            take_bit(txn, p);
            return true;
        }
    }
    for (pgno_t p = next_set(r, r->lone_scan); p < r->map.npages; p = next_set(r, p + 1)) {
        size_t len = run_length(r, p);
        if (len == 1 && (p == 0 || !bit_is_set(r, p - 1))) {
            r->lone_scan = p + 1;
            *pgno = p;
            take_bit(txn, p);
            return true;
        }
        p += len - 1;
    }
    r->lone_scan = r->map.npages;
    return false;
}

/* A page of a run shorter than min_run (too short for a small commit's run), or false. */
static bool take_short(strata_txn_t *txn, size_t min_run, pgno_t *pgno) {
    st_reuse *r = &txn->reuse;
    for (pgno_t p = next_set(r, r->short_scan); p < r->map.npages; p = next_set(r, p)) {
        size_t len = run_length(r, p);
        if (len < min_run && (p < r->run_next || p >= r->run_end)) {
            r->short_scan = p;
            *pgno = p;
            take_bit(txn, p);
            return true;
        }
        p += len;
    }
    r->short_scan = r->map.npages;
    return false;
}

/* A page for a cold copy: first a lone page whose entry lies in the leaf the last cold copy took
 * from (this commit's, or the handle's last commit's, which rewrote that leaf after the durable
 * version: rewriting it again frees a page reusable at once), not one freed in the last
 * ST_REUSE_HOT_VERSIONS commits (those belong to the runs small commits cycle through); only then
 * a lone page or one of a short run anywhere (take_lone, take_short), whose leaf the following
 * cold copies take from. Taking the first lone page anywhere rewrote another old leaf in most
 * small commits: a page held until the next checkpoint, and up to 4 KB more of commit record
 * (its entries shift). A leaf's last entries are tried first: fewer entries shift. */
static bool take_cold(strata_txn_t *txn, size_t min_run, pgno_t *pgno) {
    st_reuse *r = &txn->reuse;
    const st_freelist *fl = &txn->fl;
    if (r->cold_leaf) {
        size_t leaf = r->cold_leaf - 1;
        for (size_t j = fl->leaf_start[leaf + 1]; j-- > fl->leaf_start[leaf];) {
            pgno_t p = fl->entries.v[j].pgno;
            /* a lone page: set, its neighbours not (computing its run walked it bit by bit:
             * a third of the takes' time in a stream of small commits) */
            if (fl->entries.v[j].version + ST_REUSE_HOT_VERSIONS >= txn->new_version ||
                (p >= r->run_next && p < r->run_end) || !bit_is_set(r, p) ||
                (p > 0 && bit_is_set(r, p - 1)) || bit_is_set(r, p + 1))
                continue;
            take_bit(txn, p);
            *pgno = p;
            return true;
        }
    }
    if (!take_lone(txn, pgno) && !take_short(txn, min_run, pgno)) return false;
    size_t leaf = leaf_index(txn, r->map.leaf_of[*pgno]);
    r->cold_leaf = leaf < fl->nleaves ? leaf + 1 : 0;
    return true;
}

bool st_freelist_take(strata_txn_t *txn, bool cold, pgno_t *pgno) {
    st_reuse *r = &txn->reuse;
    if (!reuse_ready(txn)) return false;
    /* Runs of at least half what the last commit took (2 to ST_REUSE_MIN_RUN pages). */
    uint64_t hint = txn->db->last_write_pages;
    size_t min_run = hint == 0 || hint / 2 > ST_REUSE_MIN_RUN ? ST_REUSE_MIN_RUN
                     : hint / 2 < 2 ? 2 : hint / 2;
    /* A cold copy is a separate write wherever it goes: it fills the holes that runs skip. */
    if (cold && take_cold(txn, min_run, pgno)) return true;
    bool scattered_ok = txn->pages_taken >= ST_REUSE_SCATTER_AFTER ||
                        (txn->page_count + 1) * ST_PAGE_SIZE > txn->db->file.map_size;
    while (r->run_next < r->run_end && !bit_is_set(r, r->run_next)) r->run_next++;
    if (r->run_next == r->run_end && r->run_end && bit_is_set(r, r->run_end))
        r->run_end += run_length(r, r->run_end); /* the run goes on: pages freed since */
    /* Shorter runs as free space accumulates: stranded space stays under about a quarter. */
    bool much_free = r->reusable > r->map.npages / 4;
    if (r->run_next >= r->run_end && !find_run(r, min_run) &&
        !((scattered_ok || much_free) && find_run(r, 2)) &&
        !((scattered_ok || much_free) && find_run(r, 1)))
        return false;
    *pgno = r->run_next++;
    take_bit(txn, *pgno);
    return true;
}

size_t st_freelist_held(const strata_txn_t *txn, uint64_t oldest_reader) {
    size_t from = first_after(&txn->fl, txn->durable_version);
    size_t to = first_after(&txn->fl, oldest_reader), held = to > from ? to - from : 0;
    /* and the delta's freed pages (in version order) not taken again */
    const st_fl_delta *d = &txn->delta;
    uint64_t again[ST_DELTA_BYTES / 16 / 64 + 1] = {0};
    size_t n = txn->fl.entries.n;
    for (size_t k = 0; k < d->ntaken; k++)
        if (d->taken[k] >= n && d->taken[k] - n < d->freed.n)
            again[(d->taken[k] - n) / 64] |= 1ull << ((d->taken[k] - n) % 64);
    for (size_t k = 0; k < d->freed.n && d->freed.v[k].version <= oldest_reader; k++)
        held += d->freed.v[k].version > txn->durable_version && !(again[k / 64] >> (k % 64) & 1);
    return held;
}

void st_freelist_remap(strata_txn_t *txn) {
    st_reuse_clear(&txn->reuse);
    if (!reuse_prepare(txn) || !txn->reuse.map.bits) return;
    /* The pages this transaction already took stay taken (and counted against their leaves). */
    const st_dirty_map *d = &txn->dirty;
    for (size_t i = 0; i < d->cap; i++)
        for (uint32_t k = 0; d->slots[i].pgno && k < d->slots[i].npages; k++)
            if (bit_is_set(&txn->reuse, d->slots[i].pgno + k)) take_bit(txn, d->slots[i].pgno + k);
    for (size_t i = 0; i < txn->own.n; i++)
        if (bit_is_set(&txn->reuse, txn->own.v[i].pgno)) take_bit(txn, txn->own.v[i].pgno);
}

uint64_t st_freelist_trim(strata_txn_t *txn) {
    if (!reuse_ready(txn)) return 0;
    st_reuse *r = &txn->reuse;
    pgno_t end = txn->page_count;
    while (end > 2 && end - 1 < r->map.npages && bit_is_set(r, end - 1)) {
        take_bit(txn, end - 1);
        end--;
    }
    uint64_t trimmed = txn->page_count - end;
    /* The last page in use is only held for the durable version (its page, freed since): the
     * next write transaction syncs first, so that it comes free (pager.c). */
    txn->db->tail_held = end > 2 && end - 1 < r->map.npages && r->map.held &&
                         (r->map.held[(end - 1) / 64] >> ((end - 1) % 64) & 1);
    txn->page_count = end;
    if (r->run_end > end) r->run_end = end > r->run_next ? end : r->run_next;
    return trimmed;
}

bool st_freelist_take_run(strata_txn_t *txn, uint32_t npages, pgno_t *pgno) {
    st_reuse *r = &txn->reuse;
    if (!reuse_ready(txn)) return false;
    /* Best fit: the shortest run of adjacent reusable pages that holds npages (adjacent pages
     * freed by different commits form one run: the map has a bit per page), so long runs stay
     * for long values. An exact fit ends the search. */
    pgno_t best = 0;
    size_t best_len = 0;
    for (pgno_t p = next_set(r, 2); p < r->map.npages;) {
        size_t len = run_length(r, p);
        if (len >= npages && (!best_len || len < best_len)) {
            best = p;
            best_len = len;
            if (len == npages) break;
        }
        p = next_set(r, p + len);
    }
    if (!best_len) return false;
    for (uint32_t i = 0; i < npages; i++) take_bit(txn, best + i);
    *pgno = best;
    return true;
}

/* Whether entry i, of page p, was taken, given the maps' fields (reusable 0 without maps):
 * reusable, in the maps, and neither a reusable bit nor a held one left. */
static inline bool taken_from(const uint64_t *bits, const uint64_t *held, size_t reusable,
                              size_t npages, size_t i, pgno_t p) {
    return i < reusable && p < npages && !(bits[p / 64] >> (p % 64) & 1) &&
           !(held && (held[p / 64] >> (p % 64) & 1));
}

/* Entry i of the list was taken by this transaction or by the delta. */
static inline bool entry_taken(const strata_txn_t *txn, size_t i) {
    const st_reuse *r = &txn->reuse;
    return dtaken_at(r->dtaken, i) ||
           taken_from(r->map.bits, r->map.held, r->map.bits ? r->reusable : 0, r->map.npages, i,
                      txn->fl.entries.v[i].pgno);
}

/* ------------------------------------------------------------------ save */

static size_t leaf_len(const st_freelist *fl, size_t i) {
    return fl->leaf_start[i + 1] - fl->leaf_start[i];
}

static size_t leaf_taken(const strata_txn_t *txn, size_t i) {
    return txn->reuse.leaf_taken ? txn->reuse.leaf_taken[i] : 0;
}

/* What becomes of the list. A leaf is kept as it is, or packed: leaves packed next to each other
 * have their remaining entries (those not taken) written densely into new leaves; a packed group
 * that reaches the end of the list goes first in the tail, before everything this commit freed.
 * Packed: a leaf entries were taken from (or an empty one), the last leaf when not full, and
 * every leaf when the list has grown to over twice the leaves its entries need (plus a few): so
 * the list stays within that bound while a small commit rewrites only the leaves it touched.
 * (Packing a touched leaf's not-full neighbours too kept leaves fuller, for a page and ~2 KB of
 * commit record more in most small commits, and an old page held until the next checkpoint.)
 * When a quarter of the file is free to reuse, a leaf lying past where the pages in use would
 * end (with a quarter to spare) is packed too: its new page comes from low free space, so the
 * end of the file can come free. */
typedef struct layout {
    size_t packed;        /* old leaves whose pages are freed */
    size_t kept;          /* leaves untouched */
    size_t group_leaves;  /* new leaves for packed groups before the end */
    size_t tail;          /* entries of the tail */
    size_t tail_leaves;   /* new leaves at the end */
    size_t new_leaves;    /* group_leaves + tail_leaves */
    size_t ndirs;
    size_t empties;       /* pages taken beyond the need, kept as empty leaves */
} layout;

static bool leaf_touched(const strata_txn_t *txn, size_t i) {
    return leaf_len(&txn->fl, i) == 0 || leaf_taken(txn, i) > 0;
}

/* The layout for the current state with `taken` pages in hand, or false if more are needed.
 * pack[i] says which leaves are packed (nleaves entries). */
static bool plan(strata_txn_t *txn, size_t taken, bool *pack, layout *L) {
    const st_freelist *fl = &txn->fl;
    memset(L, 0, sizeof *L);
    size_t n = fl->nleaves, rest_all = 0;
    for (size_t i = 0; i < n; i++) rest_all += leaf_len(fl, i) - leaf_taken(txn, i);
    bool all = n > 2 * ((rest_all + FL_PER_PAGE - 1) / FL_PER_PAGE) + 4;
    uint64_t pages = txn->meta.page_count, used = pages - txn->meta.free_count;
    size_t reusable = txn->reuse.ready ? txn->reuse.reusable : 0; /* not what readers hold */
    pgno_t high = reusable * 4 > pages ? used + used / 4 + 64 : UINT64_MAX;
    for (size_t i = 0; i < n; i++) {
        bool not_full = leaf_len(fl, i) < FL_PER_PAGE;
        pack[i] = all || leaf_touched(txn, i) || fl->leaf_pgno[i] >= high ||
                  (not_full && i == n - 1);
    }
    size_t end_rest = 0;
    for (size_t i = 0; i < n;) {
        if (!pack[i]) {
            L->kept++;
            i++;
            continue;
        }
        size_t rest = 0;
        for (; i < n && pack[i]; i++, L->packed++) rest += leaf_len(fl, i) - leaf_taken(txn, i);
        if (i == n) end_rest = rest;
        else L->group_leaves += (rest + FL_PER_PAGE - 1) / FL_PER_PAGE;
    }
    L->tail = end_rest + delta_freed_left(txn) + txn->freed.n + txn->own.n + L->packed;
    L->tail_leaves = (L->tail + FL_PER_PAGE - 1) / FL_PER_PAGE;
    L->new_leaves = L->group_leaves + L->tail_leaves;
    size_t leaves = L->kept + L->new_leaves;
    for (size_t nd = 0; L->new_leaves + nd <= taken; nd++) {
        size_t empties = taken - L->new_leaves - nd;
        size_t total = leaves + empties;
        if (total == 0 ? nd == 0 : nd * FL_PER_DIR >= total) {
            L->ndirs = nd;
            L->empties = empties;
            return true;
        }
    }
    return false;
}

static void write_leaf(uint8_t *p, const st_free_entry *e, size_t n) {
    p[PH_KIND] = ST_PAGE_FREELIST;
    st_wr32(p + PH_FCOUNT, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        st_wr64(p + FL_ENTRIES + 16 * i, e[i].pgno);
        st_wr64(p + FL_ENTRIES + 16 * i + 8, e[i].version);
    }
}

/* Append the entries of leaf i that were not taken to v (room made once, not per entry: a
 * small commit rewrites two or three leaves of ~250 entries; taken_from's test with the maps
 * held in locals, which the stores to v would otherwise make the compiler reload). */
static int push_rest(const strata_txn_t *txn, size_t i, st_free_vec *v) {
    const st_freelist *fl = &txn->fl;
    const st_reuse *r = &txn->reuse;
    size_t from = fl->leaf_start[i], to = fl->leaf_start[i + 1];
    if (grow_array(&v->v, &v->cap, v->n + (to - from), sizeof *v->v)) return STRATA_ERR_NO_MEMORY;
    const st_free_entry *e = fl->entries.v;
    st_free_entry *out = v->v;
    size_t n = v->n;
    const uint64_t *bits = r->map.bits, *held = r->map.held, *dt = r->dtaken;
    size_t reusable = bits ? r->reusable : 0, npages = r->map.npages;
    for (size_t j = from; j < to; j++)
        if (!taken_from(bits, held, reusable, npages, j, e[j].pgno) && !dtaken_at(dt, j))
            out[n++] = e[j];
    v->n = n;
    return STRATA_OK;
}

/* Write entries v[0, n) into new leaves from pages[*next], dense. */
static int write_leaves(fl_builder *b, const st_free_entry *v, size_t n, uint8_t **bufs,
                        const pgno_t *pages, size_t *next, st_reuse_map *m) {
    int rc = STRATA_OK;
    for (size_t from = 0; rc == STRATA_OK && from < n; from += FL_PER_PAGE) {
        size_t to = from + FL_PER_PAGE < n ? from + FL_PER_PAGE : n;
        write_leaf(bufs[*next], v + from, to - from);
        for (size_t i = from; m->leaf_of && i < to; i++) /* the entries moved here */
            if (v[i].pgno < m->npages) m->leaf_of[v[i].pgno] = pages[*next];
        rc = add_leaf(b, pages[(*next)++]);
        if (rc == STRATA_OK) rc = add_entries(b, v + from, to - from);
    }
    return rc;
}

/* The new version's delta image: the base's bytes (those a delta does not use stay, so that
 * the commit log carries only what changed), with d encoded when d is not NULL; false when
 * out of memory or d does not fit. */
static bool delta_out(strata_txn_t *txn, const st_fl_delta *d) {
    if (!txn->delta_image) return d == NULL; /* (none loaded: the list is saved whole) */
    if (!txn->delta_out && !(txn->delta_out = malloc(ST_DELTA_BYTES))) return false;
    memcpy(txn->delta_out, txn->delta_image, ST_DELTA_BYTES);
    return !d || delta_encode(d, txn->new_version, txn->delta_out);
}

bool st_freelist_whole;

/* The commit as a delta, when the entries taken since the list was saved and the pages freed
 * since fit the meta page: the base version's delta with what this transaction took and freed
 * appended. No list page is written; the list and its maps stay as they are for the next
 * transaction (*done false: they do not fit, save the list). */
static int save_delta(strata_txn_t *txn, bool *done, pgno_t *head, uint64_t *count,
                      strata_error *err) {
    st_freelist *fl = &txn->fl;
    st_reuse *r = &txn->reuse;
    const st_fl_delta *d = &txn->delta;
    *done = false;
    size_t nt = d->ntaken + r->took.n, nf = d->freed.n + txn->freed.n + txn->own.n;
    if (r->took_full || delta_bytes(nt, nf) > ST_DELTA_BYTES ||
        fl->entries.n + nf > UINT32_MAX)
        return STRATA_OK;
    /* Every page this transaction took from the list is in took (save's count check). */
    size_t listed = 0;
    for (size_t k = 0; k < nt; k++)
        listed += (k < d->ntaken ? d->taken[k] : r->took.v[k - d->ntaken]) < fl->entries.n;
    if (listed != r->ntaken)
        return st_txn_fail(txn, ST_CORRUPT(err, "free list: %zu pages taken, %zu found in its "
                                           "leaves", r->ntaken, listed));
    st_fl_delta nd = {0};
    int rc = STRATA_OK;
    if (!(nd.taken = malloc((nt ? nt : 1) * sizeof *nd.taken))) rc = STRATA_ERR_NO_MEMORY;
    if (rc == STRATA_OK) {
        if (d->ntaken) memcpy(nd.taken, d->taken, d->ntaken * sizeof *nd.taken);
        if (r->took.n) memcpy(nd.taken + d->ntaken, r->took.v, r->took.n * sizeof *nd.taken);
        nd.ntaken = nt;
    }
    for (size_t k = 0; rc == STRATA_OK && k < d->freed.n; k++)
        if (st_free_vec_push(&nd.freed, d->freed.v[k].pgno, d->freed.v[k].version))
            rc = STRATA_ERR_NO_MEMORY;
    for (size_t j = 0; rc == STRATA_OK && j < txn->freed.n; j++)
        if (st_free_vec_push(&nd.freed, txn->freed.v[j].pgno, txn->new_version))
            rc = STRATA_ERR_NO_MEMORY;
    for (size_t j = 0; rc == STRATA_OK && j < txn->own.n; j++)
        if (st_free_vec_push(&nd.freed, txn->own.v[j].pgno, txn->new_version))
            rc = STRATA_ERR_NO_MEMORY;
    if (rc == STRATA_OK && !delta_out(txn, &nd)) rc = STRATA_ERR_NO_MEMORY;
    if (rc) {
        st_fl_delta_clear(&nd);
        return st_txn_fail(txn, st_err(err, rc, "out of memory saving the free list"));
    }
    *head = txn->meta.freelist_head;
    *count = fl->entries.n + nf - nt;
    st_reuse_hints_save(txn);
    txn->hints_out.cold_leaf = r->cold_leaf ? fl->leaf_pgno[r->cold_leaf - 1] : 0;
    txn->reuse_out = r->map; /* the handle's, if the commit succeeds */
    memset(&r->map, 0, sizeof r->map);
    st_reuse_clear(r);
    st_fl_delta_clear(&txn->delta);
    txn->delta = nd;
    txn->delta_saved = true;
    txn->own.n = 0;
    *done = true;
    return STRATA_OK;
}

int st_freelist_save(strata_txn_t *txn, bool may_delta, pgno_t *head, uint64_t *count,
                     strata_error *err) {
    st_freelist *fl = &txn->fl;
    int rc;
    /* The delta's taken entries must be known to leave them out (and a delta that names
     * entries the list does not have is never saved over). */
    if (txn->delta.ntaken && !txn->reuse.ready) reuse_prepare(txn);
    if (txn->reuse.delta_bad)
        return st_txn_fail(txn, ST_CORRUPT(err, "free list: the delta of version %llu names "
                                           "entries its list does not have (or no memory)",
                                           (unsigned long long)txn->meta.version));
    if (may_delta && txn->delta_image && !st_freelist_whole) {
        bool done;
        if ((rc = save_delta(txn, &done, head, count, err)) || done) return rc;
    }
    for (size_t i = 0; i < fl->ndirs; i++)
        if ((rc = st_page_free(txn, fl->dir_pgno[i], 1, err))) return rc;

    /* Take pages until the list fits in them (taking shrinks the list, so re-plan each time). */
    size_t n = fl->nleaves;
    pgno_t *pages = NULL;
    uint8_t **bufs = NULL;
    bool *pack = malloc(n + 1);
    size_t taken = 0, cap = 0, bcap = 0;
    layout L;
    if (!pack) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory saving the free list");
    while (!plan(txn, taken, pack, &L)) {
        if (grow_array(&pages, &cap, taken + 1, sizeof *pages) ||
            grow_array(&bufs, &bcap, taken + 1, sizeof *bufs)) {
            rc = st_err(err, STRATA_ERR_NO_MEMORY, "out of memory saving the free list");
            goto out;
        }
        if ((rc = st_page_alloc(txn, 1, &bufs[taken], &pages[taken], err))) goto out;
        taken++;
    }
    if (txn->reuse.delta_bad) { /* (a page of the delta taken for the list, not found) */
        rc = st_txn_fail(txn, ST_CORRUPT(err, "free list: a freed page of the delta of version "
                                         "%llu was taken but is not in it",
                                         (unsigned long long)txn->meta.version));
        goto out;
    }
    size_t counted = 0;
    for (size_t i = 0; i < n; i++) counted += leaf_taken(txn, i);
    if (counted != txn->reuse.ntaken) { /* a page's leaf was not found: never write the list */
        rc = st_txn_fail(txn, ST_CORRUPT(err, "free list: %zu pages taken, %zu found in its leaves",
                                         txn->reuse.ntaken, counted));
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (pack[i] && (rc = st_page_free(txn, fl->leaf_pgno[i], 1, err))) goto out;

    /* Build the new list from the first packed leaf on (the leaves before it are kept, and stay
     * where they are: copying them into a new list each commit was 5% of a small commit with
     * 8,000 free pages): kept leaves and packed groups in order, the tail (the last group's
     * rest, then everything this commit freed), the empties, the directory. nf holds the leaves
     * from `first` on until the old list has been read for the last time, then replaces them. */
    size_t first = 0;
    while (first < n && !pack[first]) first++;
    size_t kept_entries = fl->nleaves ? fl->leaf_start[first] : 0;
    st_freelist nf = {0};
    fl_builder b = {&nf, 0, 0};
    size_t next = 0; /* next page of `pages` to use */
    st_free_vec tmp = {0};
    rc = presize(&b, fl->entries.n - kept_entries + delta_freed_left(txn) + txn->freed.n +
                         txn->own.n,
                 L.kept + L.new_leaves + L.empties - first, L.ndirs);
    for (size_t i = first; rc == STRATA_OK && i < n;) {
        if (!pack[i]) {
            rc = add_leaf(&b, fl->leaf_pgno[i]);
            if (rc == STRATA_OK) rc = add_entries(&b, fl->entries.v + fl->leaf_start[i], leaf_len(fl, i));
            i++;
            continue;
        }
        tmp.n = 0;
        for (; rc == STRATA_OK && i < n && pack[i]; i++) rc = push_rest(txn, i, &tmp);
        if (rc == STRATA_OK && i < n) rc = write_leaves(&b, tmp.v, tmp.n, bufs, pages, &next, &txn->reuse.map);
    }
    if (n == 0 || !pack[n - 1]) tmp.n = 0; /* else tmp holds the last group's rest */
    if (rc == STRATA_OK) rc = push_delta_freed(txn, &tmp); /* freed since the list was saved */
    for (size_t j = 0; rc == STRATA_OK && j < txn->freed.n; j++)
        rc = st_free_vec_push(&tmp, txn->freed.v[j].pgno, txn->new_version);
    for (size_t j = 0; rc == STRATA_OK && j < txn->own.n; j++)
        rc = st_free_vec_push(&tmp, txn->own.v[j].pgno, txn->new_version);
    if (rc == STRATA_OK) rc = write_leaves(&b, tmp.v, tmp.n, bufs, pages, &next, &txn->reuse.map);
    if (rc == STRATA_OK && (tmp.n != L.tail || next != L.new_leaves))
        rc = ST_CORRUPT(err, "free list: laid out %zu entries in %zu leaves, planned %zu in %zu",
                        tmp.n, next, L.tail, L.new_leaves);
    st_free_vec_clear(&tmp);
    for (size_t e = 0; rc == STRATA_OK && e < L.empties; e++) {
        write_leaf(bufs[next], NULL, 0);
        rc = add_leaf(&b, pages[next++]);
    }
    /* Room for the whole new list in the old one's arrays (nothing moves yet: a failure here
     * leaves the old list as it was). */
    size_t nleaves = first + nf.nleaves;
    if (rc == STRATA_OK &&
        grow_array(&fl->entries.v, &fl->entries.cap, kept_entries + nf.entries.n, sizeof *fl->entries.v))
        rc = STRATA_ERR_NO_MEMORY;
    if (rc == STRATA_OK && nleaves > fl->nleaves) rc = leaf_room(fl, nleaves);
    for (size_t d = 0; rc == STRATA_OK && d < L.ndirs; d++) {
        uint8_t *p = bufs[next + d];
        size_t from = d * FL_PER_DIR, to = from + FL_PER_DIR < nleaves ? from + FL_PER_DIR : nleaves;
        p[PH_KIND] = ST_PAGE_FREEDIR;
        st_wr32(p + PH_FCOUNT, (uint32_t)(to - from));
        st_wr64(p + FL_NEXT, d + 1 < L.ndirs ? pages[next + d + 1] : 0);
        for (size_t i = from; i < to; i++)
            st_wr64(p + FL_ENTRIES + 8 * (i - from),
                    i < first ? fl->leaf_pgno[i] : nf.leaf_pgno[i - first]);
        rc = add_dir(&b, pages[next + d]);
    }
    if (rc == STRATA_OK && !delta_out(txn, NULL)) rc = STRATA_ERR_NO_MEMORY; /* no delta */
    if (rc) {
        st_freelist_clear(&nf);
        if (rc == STRATA_ERR_NO_MEMORY)
            st_err(err, STRATA_ERR_NO_MEMORY, "out of memory saving the free list");
        rc = st_txn_fail(txn, rc);
        goto out;
    }
    /* For the commit log: the new leaves are much like the packed ones, in order (a small
     * commit rewrites the last leaf with a few entries more), and the directories like the old. */
    for (size_t i = 0, k = 0; i < n && k < L.new_leaves; i++)
        if (pack[i]) st_page_resembles(txn, pages[k++], fl->leaf_pgno[i]);
    for (size_t d = 0; d < L.ndirs && d < fl->ndirs; d++)
        st_page_resembles(txn, pages[next + d], fl->dir_pgno[d]);
    *head = L.ndirs ? pages[next] : 0;
    *count = kept_entries + nf.entries.n;
    /* Where the rest of the leaf cold copies took from went (write_leaves noted it). */
    pgno_t cold_leaf = 0;
    if (txn->reuse.cold_leaf && txn->reuse.map.leaf_of) {
        size_t i = txn->reuse.cold_leaf - 1;
        for (size_t j = fl->leaf_start[i]; !cold_leaf && j < fl->leaf_start[i + 1]; j++)
            if (!entry_taken(txn, j) && fl->entries.v[j].pgno < txn->reuse.map.npages)
                cold_leaf = txn->reuse.map.leaf_of[fl->entries.v[j].pgno];
    }
    /* The list just laid out becomes this transaction's (cached by the handle after commit):
     * the old one's leaves before `first`, then nf's. */
    if (nf.entries.n) memcpy(fl->entries.v + kept_entries, nf.entries.v, nf.entries.n * sizeof *nf.entries.v);
    fl->entries.n = kept_entries + nf.entries.n;
    if (nf.nleaves) memcpy(fl->leaf_pgno + first, nf.leaf_pgno, nf.nleaves * sizeof *nf.leaf_pgno);
    for (size_t k = 0; k <= nf.nleaves && fl->leaf_start; k++)
        fl->leaf_start[first + k] = kept_entries + (nf.nleaves ? nf.leaf_start[k] : 0);
    fl->nleaves = nleaves;
    free(fl->dir_pgno);
    fl->dir_pgno = nf.dir_pgno;
    fl->ndirs = nf.ndirs;
    nf.dir_pgno = NULL;
    st_freelist_clear(&nf);
    st_reuse_hints_save(txn);
    txn->hints_out.cold_leaf = cold_leaf;
    txn->reuse_out = txn->reuse.map; /* the handle's, if the commit succeeds */
    memset(&txn->reuse.map, 0, sizeof txn->reuse.map);
    st_reuse_clear(&txn->reuse);
    st_fl_delta_clear(&txn->delta); /* the list holds it all now */
    txn->own.n = 0; /* txn->freed stays: the commit log checks its pages' hints against it */
out:
    free(pack);
    free(pages);
    free(bufs);
    return rc;
}
