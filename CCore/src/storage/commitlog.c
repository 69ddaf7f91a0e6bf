/*
 * commitlog.c — the commit log: a durable (FULL) commit syncs one small record instead of its
 * pages, and the first open after a crash replays the records onto the last durable version.
 *
 * File `<path>.log`, ST_LOG_BYTES long (a log made before was 4 MiB: its own size is used),
 * written in full (zeros) when created, so that a record never changes the file's size or
 * extents and its fdatasync writes only the record:
 *   header at 0 (40 bytes):  "STRATLOG" | u64 salt | u64 base version | u64 the database's id
 *                            (st_meta.db_id) | u64 XXH3-64 of bytes 0..31
 *   records from ST_LOG_FIRST on, back to back (each a multiple of 8 bytes):
 *     0    u64 XXH3-64 of bytes [8, len)
 *     8    u64 salt (the header's: a record of an older generation fails it)
 *     16   u64 version
 *     24   u32 len              28 u32 number of page entries
 *     32   st_meta (128 bytes): the meta the commit wrote (flag ST_META_LOGGED)
 *     160  page entries: u64 pgno | u64 base | u32 npages | u32 nranges,
 *          then nranges ranges, the entry padded to 8 (format 14/15: pgno 0 is the meta page's
 *          free-list delta image, ST_DELTA_BYTES, its ranges over the version before's image):
 *            literal: u32 offset | u32 length | length bytes
 *            copy (format 10): u32 offset | u32 length + RANGE_COPY | u32 source | u32 0 —
 *            length bytes of the base page from source (the base as it was before any range)
 *     then zeros to the end of the record's last block (len counts them; since format 10)
 *   An encrypted file's record (cipher.c) has its bytes from 32 sealed, and the tag after them:
 *   len counts the tag, and the checksum covers the sealed bytes.
 *   A page's content is its base page's (zeros when base is 0) with the ranges written over it.
 *   A copy of a committed page differs from it in a few places (a changed cell, a child number,
 *   the header's checksum and version); rewritten column and free-list pages have bytes moved
 *   (a value inserted shifts what follows it), logged as copies from the base. A one-object
 *   Person commit's ~12 pages take 2.8-3.1 KB at 1M objects (6-8 KB as literal bytes).
 *
 * The log is read and written in whole ST_LOG_BLOCKs (aligned, so that it can bypass the page
 * cache, os.c): a record is written with the blocks it covers, the bytes before it in its first
 * block rewritten as they are (the handle keeps the block its last record ended in; else it reads
 * it: only a record after one written before format 10 starts inside a block), the rest of its
 * last block zeros; a new generation's header is written with its first
 * record, through the page cache (block 0 is read and written there: an open reads it without a
 * device round trip; the record's sync writes it too). A record synced at once is written direct
 * (when the log is, os.c) — with its sync in the same write (RWF_DSYNC) when no other write to
 * the log awaits a sync (no header in it, no unsynced record before it); one whose sync comes
 * later (group commit) goes through the page cache — a direct write would wait for the device,
 * which the shared sync does once for the whole group.
 *
 * Commit (pager.c): write the pages without sync, append the record, fdatasync the log, write
 * the meta without sync, publish (a record written on its own for 8 pages or more is begun
 * first and the pages written while the device takes it: they are free pages no durable version
 * names). The record is durable before the meta exists anywhere, so every meta a later writer
 * builds on has its record. An unsynced commit (strata_txn_commit_unsynced,
 * group commit) skips the fdatasync and flags its meta ST_META_LOG_PENDING: a later sync of the
 * log (strata_db_sync_commits, or the next synced record) covers it and every record before it.
 * A power cut before that may take the pending records; recovery then rebuilds what the log
 * still holds — possibly only the durable version itself, which is why invariant 2 must hold.
 *
 * Invariants:
 *  1. The valid records after the header (salt, checksum, consecutive versions, up to the first
 *     that fails) are versions base+1, base+2, ...; the meta's log_base/log_salt/log_end name the
 *     generation and where the next record goes.
 *  2. Version `base` is durable and its pages stay intact while its log is in use: a page freed
 *     after base is reused only if its own checksummed header says a later version wrote it
 *     (freelist.c; an overflow run's middle pages have no header and are held), so every page a
 *     record names as a base holds, at replay, what that record was built from (it was reachable
 *     from the version before, hence written by base or by a record replayed before).
 *  3. Every version after base in the log was logged: a logged commit never follows an unsynced
 *     NO_SYNC one (begin_write makes that durable first).
 *  4. The log starts over (new salt, new base) when the durable version moves; it is made
 *     durable by the sync of the next record, before which nothing depends on it. It never
 *     starts over while versions after the durable one live only in it: a handle appends to
 *     the generation the log's header names, and a commit that finds the header naming another
 *     (the log was replaced) is synced instead of logged.
 */
#include "storage/commitlog.h"

#include "storage/cipher.h"
#include "storage/freelist.h"
#include "storage/pager.h"

#include <errno.h>
#include <stdio.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <stdlib.h>
#include <unistd.h>

static const char LOG_MAGIC[8] = {'S', 'T', 'R', 'A', 'T', 'L', 'O', 'G'};

enum { REC_META = 32, REC_ENTRIES = 32 + 128, ENTRY_HEAD = 24,
       RANGE_HEAD = 8, COPY_HEAD = 16 };
/* A range whose length has RANGE_COPY set copies that many bytes from its base page (format 10);
 * add_ranges looks for moved bytes in ranges of SHIFT_MIN_RANGE bytes or more. */
#define RANGE_COPY 0x80000000u
enum { SHIFT_MIN_RANGE = 128, COPY_MIN = 32, SHIFT_MAX = 128, SHIFT_PROBE_STEP = 32 };

static size_t pad8(size_t n) { return (n + 7) & ~(size_t)7; }

/* ------------------------------------------------------------------ building a record */

static size_t round_block(size_t n) { return (n + ST_LOG_BLOCK - 1) & ~(size_t)(ST_LOG_BLOCK - 1); }

/* db->log_buf holds at least `need` bytes (aligned; the first `keep` kept). */
static int reserve(strata_db_t *db, size_t need, size_t keep, strata_error *err) {
    if (need <= db->log_buf_cap) return STRATA_OK;
    size_t cap = db->log_buf_cap ? db->log_buf_cap : 8 * ST_LOG_BLOCK;
    while (cap < need) cap *= 2;
    void *b;
    if (posix_memalign(&b, ST_LOG_BLOCK, cap))
        return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory building a commit record");
    if (db->log_buf) memcpy(b, db->log_buf, keep);
    free(db->log_buf);
    db->log_buf = b;
    db->log_buf_cap = cap;
    return STRATA_OK;
}

/* Read the log's block at `off` into buf (ST_LOG_BLOCK bytes, aligned). */
/* Block 0, the header, is read and written through the page cache (st_os_log_write_fd's
 * descriptor without O_DIRECT): it changes once a generation, and an open reads it to learn
 * whether anything needs replaying, which a direct read would make a device round trip (a
 * quarter of a millisecond here, most of an open). Other blocks are read direct. */
static int log_fd_for(strata_db_t *db, uint64_t off) {
    return off == 0 ? st_os_log_write_fd(&db->file, true) : db->file.log_fd;
}

static int read_block(strata_db_t *db, uint64_t off, uint8_t *buf, const char *name,
                      strata_error *err) {
    ssize_t k;
    do k = pread(log_fd_for(db, off), buf, ST_LOG_BLOCK, (off_t)off);
    while (k < 0 && errno == EINTR);
    if (k == (ssize_t)ST_LOG_BLOCK) return STRATA_OK;
    if (k < 0) return st_err_errno(err, errno, "cannot read the commit log '%s'", name);
    return st_err(err, STRATA_ERR_IO, "the commit log '%s' ends at block %llu", name,
                  (unsigned long long)off);
}

static inline uint64_t word(const uint8_t *p, size_t i) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    return w;
}

/* Where page and base (len bytes each) first differ at or after i, to a multiple of 8 bytes
 * from i, or where fewer than 8 bytes are left: 64 bytes a step while they are equal (most of a
 * copied page is: a commit's ~14 pages are ~57 KB to compare, a third of the diff's work word
 * by word), then word by word. */
static size_t equal_words(const uint8_t *page, const uint8_t *base, size_t i, size_t len) {
#if defined(__SSE2__)
    while (i + 64 <= len) {
        __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(page + i)),
                                   _mm_loadu_si128((const __m128i *)(base + i)));
        __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(page + i + 16)),
                                   _mm_loadu_si128((const __m128i *)(base + i + 16)));
        __m128i c = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(page + i + 32)),
                                   _mm_loadu_si128((const __m128i *)(base + i + 32)));
        __m128i d = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(page + i + 48)),
                                   _mm_loadu_si128((const __m128i *)(base + i + 48)));
        if (_mm_movemask_epi8(_mm_and_si128(_mm_and_si128(a, b), _mm_and_si128(c, d))) != 0xFFFF)
            break;
        i += 64;
    }
#else
    while (i + 32 <= len &&
           ((word(page, i) ^ word(base, i)) | (word(page, i + 8) ^ word(base, i + 8)) |
            (word(page, i + 16) ^ word(base, i + 16)) | (word(page, i + 24) ^ word(base, i + 24))) == 0)
        i += 32;
#endif
    while (i + 8 <= len && word(page, i) == word(base, i)) i += 8;
    return i;
}

/* Bytes from p on equal to q's, at most max. */
static size_t same_bytes(const uint8_t *p, const uint8_t *q, size_t max) {
    size_t n = 0;
    while (n + 8 <= max && word(p, n) == word(q, n)) n += 8;
    while (n < max && p[n] == q[n]) n++;
    return n;
}

/* A copy from base for page bytes at q (not before `from`) with the base's bytes `shift` bytes
 * away (source q + shift): its start, source and length, or 0 when shorter than COPY_MIN. */
static inline size_t copy_at(const uint8_t *page, const uint8_t *base, size_t len, size_t q,
                             size_t from, ptrdiff_t shift, size_t *dst, size_t *src) {
    if ((shift < 0 && q < (size_t)-shift) || (shift > 0 && q + (size_t)shift + 8 > len)) return 0;
    size_t s = (size_t)((ptrdiff_t)q + shift);
    if (word(base, s) != word(page, q)) return 0;
    size_t n = same_bytes(page + q, base + s, len - (q > s ? q : s)), at = q;
    while (at > from && s > 0 && page[at - 1] == base[s - 1]) at--, s--, n++;
    if (n < COPY_MIN) return 0;
    *dst = at;
    *src = s;
    return n;
}

/* The longest copy from base for page bytes at q (not before `from`): the base's bytes moved by
 * up to SHIFT_MAX bytes either way (a value inserted into a column shifts every leaf after it in
 * the page, an entry taken from a free-list leaf the entries after it; shifts are multiples of 4
 * there). Its start and source, and its length, or 0 when none reaches COPY_MIN bytes. The
 * shift found last in the page (*hint, 0 for none) is tried first (one shift usually moves all
 * the bytes after an insertion); the others nearest first, among those whose first 4 bytes
 * match (a mask of them is one pass over the window: trying 64 shifts both ways word by word
 * at every probe of new bytes was a quarter of a small commit's diff). */
static size_t find_copy(const uint8_t *page, const uint8_t *base, size_t len, size_t q,
                        size_t from, size_t *dst, size_t *src, ptrdiff_t *hint) {
    if (word(page, q) == 0) return 0;
    size_t n;
    if (*hint && (n = copy_at(page, base, len, q, from, *hint, dst, src))) return n;
    enum { SHIFTS = SHIFT_MAX / 4 };
    uint32_t key = st_rd32(page + q);
    uint64_t ahead = 0, behind = 0; /* bit k-1: the shift +4k / -4k is a candidate */
#if defined(__SSE2__)
    if (q >= 4 * SHIFTS && q + 4 * SHIFTS + 8 <= len) { /* 16 bytes (4 shifts) a compare */
        __m128i kv = _mm_set1_epi32((int)key);
        for (int j = 0; j < SHIFTS / 4; j++) {
            __m128i a = _mm_loadu_si128((const __m128i *)(base + q + 4 + 16 * j));
            ahead |= (uint64_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(a, kv))) << (4 * j);
            /* bytes q-16(j+1) .. q-16j, lanes reversed: lane i is the shift -4(4j+i+1) */
            __m128i b = _mm_shuffle_epi32(_mm_loadu_si128((const __m128i *)(base + q - 16 * (j + 1))),
                                          _MM_SHUFFLE(0, 1, 2, 3));
            behind |= (uint64_t)_mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(b, kv))) << (4 * j);
        }
    } else
#endif
    {
        for (size_t k = 1; k <= SHIFTS && q + 4 * k + 8 <= len; k++)
            ahead |= (uint64_t)(st_rd32(base + q + 4 * k) == key) << (k - 1);
        for (size_t k = 1; k <= SHIFTS && 4 * k <= q; k++)
            behind |= (uint64_t)(st_rd32(base + q - 4 * k) == key) << (k - 1);
    }
    while (ahead | behind) {
        int k = __builtin_ctzll(ahead | behind);
        uint64_t bit = 1ull << k;
        ptrdiff_t d = 4 * (ptrdiff_t)(k + 1);
        if ((ahead & bit) && d != *hint && (n = copy_at(page, base, len, q, from, d, dst, src))) {
            *hint = d;
            return n;
        }
        if ((behind & bit) && -d != *hint && (n = copy_at(page, base, len, q, from, -d, dst, src))) {
            *hint = -d;
            return n;
        }
        ahead &= ~bit;
        behind &= ~bit;
    }
    return 0;
}

static void add_literal(uint8_t *out, size_t *at, const uint8_t *page, size_t from, size_t n) {
    st_wr32(out + *at, (uint32_t)from);
    st_wr32(out + *at + 4, (uint32_t)n);
    memcpy(out + *at + RANGE_HEAD, page + from, n);
    *at += RANGE_HEAD + n;
}

static void add_copy(uint8_t *out, size_t *at, size_t dst, size_t src, size_t n) {
    st_wr32(out + *at, (uint32_t)dst);
    st_wr32(out + *at + 4, (uint32_t)n | RANGE_COPY);
    st_wr32(out + *at + 8, (uint32_t)src);
    st_wr32(out + *at + 12, 0);
    *at += COPY_HEAD;
}

/* Whether page's 8 bytes at i (fewer at the end) equal base's (zeros when NULL). */
static inline bool same_word(const uint8_t *page, const uint8_t *base, size_t i, size_t len) {
    if (__builtin_expect(i + 8 <= len, 1)) return word(page, i) == (base ? word(base, i) : 0);
    for (; i < len; i++)
        if (page[i] != (base ? base[i] : 0)) return false;
    return true;
}

/* Where a range of differences that reaches q (its words before q differ or lie within 16
 * bytes of one that does) ends: the first word boundary q + 8k at which page and base (zeros
 * when NULL; len bytes, a multiple of 8) have two equal words in a row, or len. 64 bytes a
 * step with SSE2 (an 8-bit mask of equal words: 32-bit lanes compared, each lane ANDed with
 * its pair); a moved run of a column page differs in every word, and going word by word was a
 * fifth of the diff. */
static size_t range_end(const uint8_t *page, const uint8_t *base, size_t q, size_t len) {
#if defined(__SSE2__)
    while (base && q + 72 <= len) { /* the block's 8 words and the word after them */
        unsigned eq = 0;
        for (int k = 0; k < 4; k++) {
            __m128i c = _mm_cmpeq_epi32(_mm_loadu_si128((const __m128i *)(page + q + 16 * k)),
                                        _mm_loadu_si128((const __m128i *)(base + q + 16 * k)));
            c = _mm_and_si128(c, _mm_shuffle_epi32(c, _MM_SHUFFLE(2, 3, 0, 1)));
            eq |= (unsigned)_mm_movemask_pd(_mm_castsi128_pd(c)) << (2 * k);
        }
        unsigned after = word(page, q + 64) == word(base, q + 64);
        unsigned pair = eq & ((eq >> 1) | (after << 7));
        if (pair) return q + 8 * (size_t)__builtin_ctz(pair);
        q += 64;
    }
#endif
    for (; q < len; q += 8)
        if (same_word(page, base, q, len) && (q + 8 >= len || same_word(page, base, q + 8, len)))
            return q;
    return len;
}

/* The ranges where page (len bytes) differs from base (zeros when NULL), appended at *at;
 * returns the count. Differences less than 16 bytes apart share a range (a range costs 8). In a
 * range of SHIFT_MIN_RANGE bytes or more, runs of the base's bytes found at other offsets
 * become copies from the base (16 bytes each, format 10): a one-object commit's rewritten column
 * page took ~2 KB of record as literal bytes, a free-list leaf with one entry taken up to 4 KB. */
static uint32_t add_ranges(uint8_t *out, size_t *at, const uint8_t *page, const uint8_t *base,
                           size_t len) {
    uint32_t n = 0;
    size_t i = 0;
    ptrdiff_t hint = 0; /* the shift of the last copy */
    while (i < len) {
        if (base) i = equal_words(page, base, i, len); /* the common case: long equal runs */
        while (i < len && same_word(page, base, i, len)) i += 8;
        if (i >= len) break;
        size_t start = i, end = i + 8 < len ? range_end(page, base, i + 8, len) : len;
        i = end;
        size_t lit = start;
        if (base && end - start >= SHIFT_MIN_RANGE) {
            for (size_t q = start; q + 8 <= end && lit < end;) {
                size_t dst, src, copy = find_copy(page, base, len, q, lit, &dst, &src, &hint);
                if (!copy) {
                    q += SHIFT_PROBE_STEP;
                    continue;
                }
                if (dst > lit) {
                    add_literal(out, at, page, lit, dst - lit);
                    n++;
                }
                add_copy(out, at, dst, src, copy);
                n++;
                q = lit = dst + copy;
            }
            if (lit > i) i = lit; /* a copy ran past the range */
        }
        if (lit < end) {
            add_literal(out, at, page, lit, end - lit);
            n++;
        }
    }
    return n;
}

static int cmp_freed(const void *a, const void *b) {
    pgno_t x = ((const st_free_entry *)a)->pgno, y = ((const st_free_entry *)b)->pgno;
    return x < y ? -1 : x > y;
}

/* Whether `base` is a committed page this transaction stopped using (txn->freed, sorted): only
 * such a page is sure to hold, at replay, what the record was built from (invariant 2). */
static bool usable_base(const strata_txn_t *txn, pgno_t base) {
    size_t lo = 0, hi = txn->freed.n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (txn->freed.v[mid].pgno < base) lo = mid + 1;
        else hi = mid;
    }
    return lo < txn->freed.n && txn->freed.v[lo].pgno == base;
}

/* The log's size: its file's (in whole blocks) once open, else what a new one gets. */
static uint64_t log_bytes(const strata_db_t *db) {
    return db->file.log_fd >= 0 ? db->file.log_bytes & ~(uint64_t)(ST_LOG_BLOCK - 1) : ST_LOG_BYTES;
}

/* Whether a commit after meta m may append to m's log generation: the durable version it was
 * based on is still the durable one and its end lies inside the log. */
static bool generation_goes_on(const strata_txn_t *txn, const st_meta *m) {
    return m->log_salt && m->log_base == txn->durable_version && m->log_end >= ST_LOG_FIRST &&
           m->log_end <= log_bytes(txn->db);
}

uint64_t st_log_checkpoint_at(const strata_db_t *db) { return log_bytes(db) / 2; }

/* *yes = the log's header names m's generation (salt, base, database id); read from the file
 * unless it is the one this handle last wrote or read. */
static int header_names(strata_db_t *db, const st_meta *m, const char *name, bool *yes,
                        strata_error *err) {
    if (db->log_header_salt != m->log_salt) {
        _Alignas(ST_LOG_BLOCK) uint8_t h[ST_LOG_BLOCK];
        int rc = read_block(db, 0, h, name, err);
        if (rc) return rc;
        bool valid = memcmp(h, LOG_MAGIC, 8) == 0 && st_rd64(h + 32) == st_checksum(h, 32);
        db->log_header_salt = valid ? st_rd64(h + 8) : 0;
        db->log_header_base = st_rd64(h + 16);
        db->log_header_id = st_rd64(h + 24);
    }
    *yes = db->log_header_salt == m->log_salt && db->log_header_base == m->log_base &&
           db->log_header_id == m->db_id;
    return STRATA_OK;
}

/* The pages list[0..n) hold. */
static uint64_t pages_of(st_dirty *const *list, size_t n) {
    uint64_t pages = 0;
    for (size_t i = 0; i < n; i++) pages += list[i]->npages;
    return pages;
}

/* Whether a commit's `pages` pages are few enough to log and likely to fit after the log's end:
 * a page takes about 0.3-1 KiB of record in a small commit (a fresh page more), so one that
 * would need less than 1 KiB a page to fit is not tried (a record is built before its size
 * is known). */
static bool worth_logging(const strata_txn_t *txn, uint64_t pages, const st_meta *m) {
    uint64_t end = generation_goes_on(txn, m) ? m->log_end : ST_LOG_FIRST;
    return pages <= ST_LOG_MAX_PAGES && pages * 1024 <= log_bytes(txn->db) - end;
}

/* Pages from which a record synced alone is begun before they are written (os.c): the begun
 * write and its separate sync cost two system calls more than one RWF_DSYNC write, which the
 * overlap pays back only for a few pages' writes. Measured (a record, then n pages by pwritev;
 * one after the other / begun first): 4 pages 40-59 / 43-49 us, 8 pages 58-60 / 51-61, 12
 * pages 68-71 / 49-53; the engine's 5-page commit 8% slower begun first (engine_bench, 3 runs). */
#define LOG_OVERLAP_PAGES 8

int st_log_commit(strata_txn_t *txn, st_dirty *const *list, size_t n, st_meta *m, bool defer_sync,
                  int (*write_pages)(void *ctx, strata_error *err), void *ctx, bool *logged,
                  uint64_t *record_at, strata_error *err) {
    strata_db_t *db = txn->db;
    *logged = false;
    uint64_t pages = pages_of(list, n);
    if (!worth_logging(txn, pages, m)) return STRATA_OK;
    char name[ST_SHOWN_PATH + 8];
    st_os_log_shown(&db->file, name, sizeof name);
    if (db->file.log_fd < 0 && txn->new_version < db->log_retry_version) return STRATA_OK;
    strata_error why = {0};
    int rc = st_os_open_log(&db->file, ST_LOG_MIN_BYTES, ST_LOG_BYTES, &why);
    if (rc == STRATA_ERR_NO_SPACE) {
        /* No room for a log: this commit syncs the file instead (as one too big to log does),
         * and the next ones too, for a while, rather than fail. */
        db->log_retry_version = txn->new_version + ST_LOG_RETRY_AFTER;
        return STRATA_OK;
    }
    if (rc) return st_err(err, rc, "%s", why.message);
    /* A new generation when the durable version moved, or when the log's header does not name
     * the generation the meta does (the file was replaced, or is new). */
    uint64_t d = txn->durable_version;
    bool joins = false;
    if (generation_goes_on(txn, m) && (rc = header_names(db, m, name, &joins, err))) return rc;
    bool reset = !joins;
    /* Starting over drops the records after the durable version: only when there are none
     * (the version this commit follows is durable). Else (this log lost them) the commit is
     * not logged: its sync makes every version before it durable too. */
    if (reset && d != m->version - 1) return STRATA_OK;
    uint64_t at = reset ? ST_LOG_FIRST : m->log_end;
    uint64_t room = log_bytes(db) - at;
    /* The log is written in whole blocks: the record goes into log_buf at its offset in its
     * first block (`lead`), after the bytes the log holds there. */
    size_t lead = (size_t)(at % ST_LOG_BLOCK), head = ST_LOG_BLOCK + lead;
    bool tail_known = !reset && db->log_tail_version == m->version - 1 &&
                      db->log_tail_salt == m->log_salt && db->log_tail_end == at;
    db->log_tail_version = 0; /* block 1 is overwritten below */

    size_t len = REC_ENTRIES;
    if ((rc = reserve(db, head + len, tail_known ? head : 0, err))) return rc;
    if (lead && !tail_known &&
        (rc = read_block(db, at - lead, db->log_buf + ST_LOG_BLOCK, name, err)))
        return rc;
    if (txn->freed.n > 1) qsort(txn->freed.v, txn->freed.n, sizeof *txn->freed.v, cmp_freed);
    for (size_t i = 0; i < n && len <= room; i++) {
        const st_dirty *dp = list[i];
        size_t bytes = (size_t)dp->npages * ST_PAGE_SIZE;
        /* A page's ranges take at most its size plus one range header; the last block is
         * padded. */
        if ((rc = reserve(db, round_block(head + len + ENTRY_HEAD + bytes + RANGE_HEAD),
                          head + len, err)))
            return rc;
        uint8_t *r = db->log_buf + head;
        pgno_t b = dp->base && dp->npages == 1 && usable_base(txn, dp->base) ? dp->base : 0;
        const uint8_t *base = NULL;
        if (b && (rc = st_page_get(txn, b, &base, err))) return rc; /* its plain bytes */
        size_t end = len + ENTRY_HEAD;
        uint32_t nr = add_ranges(r, &end, dp->buf, base, bytes);
        st_wr64(r + len, dp->pgno);
        st_wr64(r + len + 8, b);
        st_wr32(r + len + 16, dp->npages);
        st_wr32(r + len + 20, nr);
        memset(r + end, 0, pad8(end) - end);
        len = pad8(end);
    }
    /* The meta page's delta image where it changed (format 14, 15): an entry of page 0, its
     * ranges over the image the version before had (the free-list delta: a few entries a
     * commit, freelist.c). */
    uint32_t entries = (uint32_t)n;
    if (txn->delta_out && txn->delta_image && len <= room &&
        memcmp(txn->delta_out, txn->delta_image, ST_DELTA_BYTES) != 0) {
        if ((rc = reserve(db, round_block(head + len + ENTRY_HEAD + ST_DELTA_BYTES + RANGE_HEAD),
                          head + len, err)))
            return rc;
        uint8_t *r = db->log_buf + head;
        size_t end = len + ENTRY_HEAD;
        uint32_t nr = add_ranges(r, &end, txn->delta_out, txn->delta_image, ST_DELTA_BYTES);
        st_wr64(r + len, 0);
        st_wr64(r + len + 8, 0);
        st_wr32(r + len + 16, 1);
        st_wr32(r + len + 20, nr);
        memset(r + end, 0, pad8(end) - end);
        len = pad8(end);
        entries++;
    }
    size_t tag = db->cipher ? ST_TAG_BYTES : 0;
    if (len + tag > room) return STRATA_OK; /* does not fit: the caller syncs the pages instead */
    /* The record ends where its last block does (zeros after its entries, which replay counts),
     * so that the next one starts a block of its own: a record of under a block is one block's
     * write, where one starting inside a block took two about half the time. */
    size_t whole = round_block(lead + len + tag) - lead - tag, entries_end = len;
    if (whole + tag <= room) len = whole;
    if ((rc = reserve(db, round_block(head + len + tag), head + entries_end, err))) return rc;
    memset(db->log_buf + head + entries_end, 0, len - entries_end);

    if (reset) {
        m->log_salt = st_random_id(m->log_salt ^ m->version);
        m->log_base = d;
    }
    m->log_end = at + len + tag;
    m->flags = ST_META_LOGGED | (defer_sync ? ST_META_LOG_PENDING : 0) |
               (m->flags & ST_META_FREE_DELTA);
    st_meta_seal(m);
    uint8_t *r = db->log_buf + head;
    st_wr64(r + 8, m->log_salt);
    st_wr64(r + 16, m->version);
    st_wr32(r + 24, (uint32_t)(len + tag));
    st_wr32(r + 28, entries);
    memcpy(r + REC_META, m, sizeof *m);
    if (tag && st_cipher_seal_record(db->cipher, r, m->version, r + REC_META, len - REC_META, r + len))
        return st_err(err, STRATA_ERR_NO_MEMORY, "cannot seal the commit record (libcrypto)");
    len += tag;
    st_wr64(r, st_checksum(r + 8, len - 8));
    size_t stop = round_block(head + len);
    memset(db->log_buf + head + len, 0, stop - (head + len));

    /* A new generation's header goes in block 0, written with the record (which then starts
     * at block 1, ST_LOG_FIRST; the header through the page cache, the record's sync covers
     * both). A failed write leaves at most part of the record, which fails its checksum; the
     * bytes before it in its first block are rewritten unchanged. */
    size_t from = ST_LOG_BLOCK;
    if (reset) {
        uint8_t *h = db->log_buf;
        memset(h, 0, ST_LOG_BLOCK);
        memcpy(h, LOG_MAGIC, 8);
        st_wr64(h + 8, m->log_salt);
        st_wr64(h + 16, d);
        st_wr64(h + 24, m->db_id);
        st_wr64(h + 32, st_checksum(h, 32));
        from = 0;
        db->log_header_salt = 0; /* unknown until written */
    }
    uint64_t off = at - lead - (ST_LOG_BLOCK - from);
    /* A record synced now goes out with its sync in one write when no other write to the log
     * awaits one: no header in this write (it goes through the page cache), and no unsynced
     * record before it — the version it follows is not ST_META_LOG_PENDING, so every record up to
     * that one was synced already (by an fdatasync of the log, or written this way). A record
     * synced now goes to log_fd (st_os_log_write_fd), which st_os_log_write_synced writes. */
    bool alone = !defer_sync && !reset && !(txn->meta.flags & ST_META_LOG_PENDING);
    /* Such a record's write is begun first where it can be, and the pages go into the file
     * while the device writes it: they are free pages no durable version uses, so their order
     * against the record does not matter (the meta goes after both). Else the pages first. */
    bool begun = alone && pages >= LOG_OVERLAP_PAGES &&
                 st_os_log_write_begin(&db->file, off, db->log_buf + from, stop - from);
    int pages_rc = write_pages(ctx, err);
    if (pages_rc && !begun) return pages_rc; /* nothing written to the log */
    int fd = st_os_log_write_fd(&db->file, defer_sync), header_fd = log_fd_for(db, 0);
    if (reset && fd != header_fd) { /* the header through the page cache (read_block) */
        if ((rc = st_os_write_fd(&db->file, header_fd, name, off, db->log_buf, ST_LOG_BLOCK, err)))
            return rc;
        off += ST_LOG_BLOCK;
        from = ST_LOG_BLOCK;
    }
    bool synced = false;
    strata_error spare = {0};
    strata_error *werr = pages_rc ? &spare : err; /* (the pages' failure is the one reported) */
    const uint8_t *rec = db->log_buf + from;
    rc = alone ? st_os_log_write_synced(&db->file, name, off, rec, stop - from, &synced, werr)
               : st_os_write_fd(&db->file, fd, name, off, rec, stop - from, werr);
    if ((rc || pages_rc) && alone) { /* failed, or part of it: the record may be on the disk */
        strata_error e2 = {0};
        st_log_retract(db, at, &e2);
    }
    if (pages_rc) return pages_rc;
    if (rc) return rc;
    if (reset) {
        db->log_header_salt = m->log_salt;
        db->log_header_base = d;
        db->log_header_id = m->db_id;
    }
    if (at == db->log_retract_at) db->log_retract_at = 0; /* overwritten: gone */
    if (!defer_sync && !synced && (rc = st_os_sync_fd(&db->file, db->file.log_fd, name, err))) {
        /* The record may still reach the disk: it must never be replayed. */
        strata_error e2 = {0};
        st_log_retract(db, at, &e2);
        return rc;
    }
    /* The block the record ends in becomes block 1: the next record's lead-in. */
    memmove(db->log_buf + ST_LOG_BLOCK, db->log_buf + stop - ST_LOG_BLOCK, ST_LOG_BLOCK);
    db->log_tail_version = m->version;
    db->log_tail_salt = m->log_salt;
    db->log_tail_end = m->log_end;
    *logged = true;
    *record_at = at;
    return STRATA_OK;
}

int st_log_retract(strata_db_t *db, uint64_t at, strata_error *err) {
    char name[ST_SHOWN_PATH + 8];
    st_os_log_shown(&db->file, name, sizeof name);
    db->log_tail_version = 0;
    _Alignas(ST_LOG_BLOCK) uint8_t block[ST_LOG_BLOCK];
    uint64_t off = at - at % ST_LOG_BLOCK;
    int rc = read_block(db, off, block, name, err);
    if (rc == STRATA_OK) {
        memset(block + at % ST_LOG_BLOCK, 0, 8); /* the record's checksum */
        rc = st_os_write_fd(&db->file, db->file.log_fd, name, off, block, sizeof block, err);
    }
    if (rc == STRATA_OK) rc = st_os_sync_fd(&db->file, db->file.log_fd, name, err);
    db->log_retract_at = rc ? at : 0; /* else the next write transaction tries again */
    return rc;
}

/* ------------------------------------------------------------------ replay */

static int read_all(int fd, uint8_t *buf, size_t len) {
    size_t got = 0;
    while (got < len) {
        ssize_t k = pread(fd, buf + got, len - got, (off_t)got);
        if (k < 0) return -1;
        if (k == 0) break;
        got += (size_t)k;
    }
    memset(buf + got, 0, len - got);
    return 0;
}

/* Why record r (at most `avail` bytes) cannot follow `prev` in generation salt, or NULL. An
 * encrypted file's record is opened in place. */
static const char *record_problem(strata_db_t *db, uint8_t *r, size_t avail, uint64_t salt,
                                  const st_meta *prev, st_meta *m) {
    size_t tag = db->cipher ? ST_TAG_BYTES : 0;
    if (avail < REC_ENTRIES + tag) return "end of the log";
    uint32_t len = st_rd32(r + 24);
    if (len < REC_ENTRIES + tag || len > avail || len % 8) return "length";
    if (st_rd64(r + 8) != salt) return "salt";
    if (st_rd64(r) != st_checksum(r + 8, len - 8)) return "checksum";
    if (st_rd64(r + 16) != prev->version + 1) return "version";
    if (tag && st_cipher_open_record(db->cipher, r, prev->version + 1, r + REC_META,
                                     len - tag - REC_META, r + len - tag))
        return "does not authenticate";
    memcpy(m, r + REC_META, sizeof *m);
    if (!st_meta_valid(m) || m->version != prev->version + 1 || !(m->flags & ST_META_LOGGED) ||
        m->page_size != ST_PAGE_SIZE || m->page_count < 2 || m->db_id != prev->db_id)
        return "meta";
    return NULL;
}

/* Write the nr ranges of record r (len bytes) at *at over dst (bytes long; copies read from,
 * the base as it was, NULL for none); false when one lies outside. */
static bool apply_ranges(const uint8_t *r, size_t len, size_t *at, uint32_t nr, uint8_t *dst,
                         const uint8_t *from, size_t bytes) {
    for (uint32_t k = 0; k < nr; k++) {
        if (*at + RANGE_HEAD > len) return false;
        uint32_t off = st_rd32(r + *at), n = st_rd32(r + *at + 4);
        if (n & RANGE_COPY) { /* n bytes of the base from offset src */
            n &= ~RANGE_COPY;
            if (*at + COPY_HEAD > len || !from) return false;
            uint32_t src = st_rd32(r + *at + 8);
            if (off > bytes || n > bytes - off || src > bytes || n > bytes - src) return false;
            memcpy(dst + off, from + src, n);
            *at += COPY_HEAD;
            continue;
        }
        if (n > len - *at - RANGE_HEAD || off > bytes || n > bytes - off) return false;
        memcpy(dst + off, r + *at + RANGE_HEAD, n);
        *at += RANGE_HEAD + n;
    }
    return true;
}

/* Rebuild and write the pages of record r (valid as a whole) onto the file; img, the delta
 * image of the version before, becomes the record's. */
static int apply_record(strata_db_t *db, const uint8_t *r, const st_meta *prev, const st_meta *m,
                        uint8_t *img, uint8_t **page, size_t *page_cap, strata_error *err) {
    uint32_t len = st_rd32(r + 24) - (db->cipher ? ST_TAG_BYTES : 0), count = st_rd32(r + 28);
    int rc = st_os_ensure_size(&db->file, m->page_count * ST_PAGE_SIZE, err);
    if (rc) return rc;
    uint8_t next_img[ST_DELTA_BYTES];
    memcpy(next_img, img, ST_DELTA_BYTES);
    size_t at = REC_ENTRIES;
    for (uint32_t i = 0; i < count; i++) {
        if (at + ENTRY_HEAD > len)
            return ST_CORRUPT(err, "commit log record of version %llu ends inside page entry %u",
                              (unsigned long long)m->version, i);
        pgno_t pgno = st_rd64(r + at), base = st_rd64(r + at + 8);
        uint32_t npages = st_rd32(r + at + 16), nr = st_rd32(r + at + 20);
        at += ENTRY_HEAD;
        if (pgno == 0) { /* the meta page's delta image (format 14) */
            if (base || npages != 1 ||
                !apply_ranges(r, len, &at, nr, next_img, img, ST_DELTA_BYTES))
                return ST_CORRUPT(err, "commit log record of version %llu: its free-list delta "
                                  "entry is damaged", (unsigned long long)m->version);
            at = pad8(at);
            continue;
        }
        if (pgno < 2 || npages == 0 || npages > m->page_count || pgno > m->page_count - npages ||
            (base && (base < 2 || npages != 1 || base >= prev->page_count)))
            return ST_CORRUPT(err, "commit log record of version %llu: page %llu (base %llu, "
                              "%u pages) is out of range", (unsigned long long)m->version,
                              (unsigned long long)pgno, (unsigned long long)base, npages);
        size_t bytes = (size_t)npages * ST_PAGE_SIZE;
        if (3 * bytes > *page_cap) { /* the page, its sealed bytes, its base's plain bytes */
            uint8_t *p = realloc(*page, 3 * bytes);
            if (!p) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory replaying the log");
            *page = p;
            *page_cap = 3 * bytes;
        }
        uint8_t *sealed = *page + bytes;
        /* Copies read the base as it was (ranges before them may have changed the page). */
        const uint8_t *from = base ? db->file.map + base * ST_PAGE_SIZE : NULL;
        if (base && db->cipher) {
            uint8_t *plain = *page + 2 * bytes;
            if (st_cipher_open_page(db->cipher, db->file.map + base * ST_PAGE_SIZE, bytes, base, plain))
                return ST_CORRUPT(err, "commit log record of version %llu: its base page %llu "
                                  "does not authenticate", (unsigned long long)m->version,
                                  (unsigned long long)base);
            memcpy(*page, plain, bytes);
            from = plain;
        } else if (base) {
            memcpy(*page, from, bytes);
        } else {
            memset(*page, 0, bytes);
        }
        if (!apply_ranges(r, len, &at, nr, *page, from, bytes)) goto bad_range;
        at = pad8(at);
        if (st_rd64(*page + PH_CHECKSUM) != st_checksum(*page + 8, bytes - 8))
            return ST_CORRUPT(err, "commit log record of version %llu rebuilds page %llu (from "
                              "page %llu) with a wrong checksum", (unsigned long long)m->version,
                              (unsigned long long)pgno, (unsigned long long)base);
        /* Sealed again, a page gets the very bytes its commit wrote (cipher.c: its nonce is
         * its version and number). */
        if (db->cipher && st_cipher_seal_page(db->cipher, *page, bytes, pgno, sealed))
            return st_err(err, STRATA_ERR_NO_MEMORY, "cannot seal page %llu (libcrypto)",
                          (unsigned long long)pgno);
        if ((rc = st_os_write(&db->file, pgno * ST_PAGE_SIZE, db->cipher ? sealed : *page, bytes, err)))
            return rc;
        continue;
    bad_range:
        return ST_CORRUPT(err, "commit log record of version %llu: a range of page %llu lies "
                          "outside it", (unsigned long long)m->version, (unsigned long long)pgno);
    }
    if ((m->flags & ST_META_FREE_DELTA) && !st_fl_delta_image_ok(next_img, m))
        return ST_CORRUPT(err, "commit log record of version %llu does not rebuild its free-list "
                          "delta", (unsigned long long)m->version);
    memcpy(img, next_img, ST_DELTA_BYTES);
    return STRATA_OK;
}

bool st_log_exists(strata_db_t *db, uint64_t *id, uint64_t *base) {
    strata_error ignored;
    if (st_os_open_log(&db->file, ST_LOG_MIN_BYTES, 0, &ignored) || db->file.log_fd < 0) return false;
    _Alignas(ST_LOG_BLOCK) uint8_t h[ST_LOG_BLOCK];
    bool ok = pread(log_fd_for(db, 0), h, sizeof h, 0) == (ssize_t)sizeof h &&
              memcmp(h, LOG_MAGIC, 8) == 0 && st_rd64(h + 32) == st_checksum(h, 32);
    *id = ok ? st_rd64(h + 24) : 0;
    *base = ok ? st_rd64(h + 16) : 0;
    return ok;
}

int st_log_replay(strata_db_t *db, const st_meta *base, st_meta *out, uint8_t *img,
                  uint64_t *replayed, char *stop, size_t stop_len, strata_error *err) {
    *out = *base;
    *replayed = 0;
    snprintf(stop, stop_len, "the log is missing (or shorter than a log)");
    int rc = st_os_open_log(&db->file, ST_LOG_MIN_BYTES, 0, err);
    if (rc || db->file.log_fd < 0) return rc;
    char name[ST_SHOWN_PATH + 8];
    st_os_log_shown(&db->file, name, sizeof name);
    /* The header first: after a clean close it names an older durable version (nothing to
     * read further); a log of another database is never replayed. */
    _Alignas(ST_LOG_BLOCK) uint8_t h[ST_LOG_BLOCK]; /* whole blocks: the log may be O_DIRECT */
    if (pread(log_fd_for(db, 0), h, sizeof h, 0) != (ssize_t)sizeof h || memcmp(h, LOG_MAGIC, 8) != 0 ||
        st_rd64(h + 32) != st_checksum(h, 32)) {
        snprintf(stop, stop_len, "the log has no valid header (emptied, zeroed or damaged)");
        return STRATA_OK;
    }
    if (!base->db_id || st_rd64(h + 24) != base->db_id) {
        snprintf(stop, stop_len, "the log belongs to another database");
        return STRATA_OK;
    }
    if (st_rd64(h + 16) != base->version) {
        snprintf(stop, stop_len, "the log starts from version %llu, not from the durable version",
                 (unsigned long long)st_rd64(h + 16));
        return STRATA_OK;
    }
    uint64_t salt = st_rd64(h + 8);
    void *log_mem = NULL;
    size_t bytes = (size_t)log_bytes(db);
    uint8_t *log = posix_memalign(&log_mem, ST_LOG_BLOCK, bytes) ? NULL : log_mem;
    if (!log) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory reading the commit log");
    if (read_all(db->file.log_fd, log, bytes)) {
        rc = st_err_errno(err, errno, "cannot read the commit log '%s'", name);
        goto done;
    }
    uint8_t *page = NULL;
    size_t page_cap = 0;
    st_meta prev = *base, m;
    for (size_t at = ST_LOG_FIRST; at < bytes;) {
        const char *problem = record_problem(db, log + at, bytes - at, salt, &prev, &m);
        if (problem) {
            snprintf(stop, stop_len, "the record of version %llu is not there or damaged (%s, at "
                     "byte %zu)", (unsigned long long)(prev.version + 1), problem, at);
            break;
        }
        if (db->file.opts.read_only) {
            rc = st_err(err, STRATA_ERR_READ_ONLY,
                        "'%s' has commits after version %llu in its commit log '%s' that a "
                        "read-only open cannot replay; open it writable once",
                        db->file.shown, (unsigned long long)base->version, name);
            break;
        }
        /* A record that fails to rebuild ends the replay at the version before it: its pages
         * are free in that version, so what it wrote does no harm. */
        strata_error why = {0};
        int arc = apply_record(db, log + at, &prev, &m, img, &page, &page_cap, &why);
        if (arc == STRATA_ERR_CORRUPT) {
            snprintf(stop, stop_len, "the record of version %llu does not rebuild its pages (%.80s)",
                     (unsigned long long)m.version, why.message);
            break;
        }
        if (arc) {
            rc = st_err(err, arc, "%s", why.message);
            break;
        }
        prev = m;
        (*replayed)++;
        at += st_rd32(log + at + 24);
    }
    free(page);
    if (rc == STRATA_OK) *out = prev;
done:
    free(log);
    return rc;
}
