/*
 * cipher.h — encryption at rest (cipher.c): the keys of one encrypted file, and sealing and
 * opening its pages, its commit log's records and its meta pages. Private to storage/.
 */
#ifndef STRATA_CIPHER_H
#define STRATA_CIPHER_H

#include "base/base.h"

#define ST_KEY_BYTES 64u     /* the key an app passes (RealmSwift's encryptionKey: 64 bytes) */
#define ST_TAG_BYTES 16u     /* a Poly1305 tag */
#define ST_ENC_HEADER 128u   /* a meta page's encryption header: bytes 128 .. 191 */
#define ST_ENC_HEADER_END 192u
/* The most pages an encrypted file may hold: a page's nonce carries 32 bits of its number. */
#define ST_ENC_MAX_PAGES (1ull << 32)

typedef struct st_cipher st_cipher;

/* The keys derived from an app's 64-byte key (HKDF-SHA256): the meta key at once, the page and
 * log keys of a file once st_cipher_bind names its database id. */
int st_cipher_new(const uint8_t *key, size_t len, st_cipher **out, strata_error *err);
void st_cipher_free(st_cipher *c);
/* A second cipher with the same app key (a copy of the file gets keys of its own). */
int st_cipher_clone(const st_cipher *c, st_cipher **out, strata_error *err);
/* Derive the page and log keys of the file with this database id (again after a compaction,
 * whose file has a new id). */
int st_cipher_bind(st_cipher *c, uint64_t db_id, strata_error *err);
uint64_t st_cipher_bound_id(const st_cipher *c);

/* Meta pages stay readable (a tool can tell what the file is) and are authenticated: bytes
 * 128..191 of a meta page of an encrypted file hold "STRATAEN" | u32 cipher (1) | u32 0 |
 * 16-byte key check | 32-byte HMAC-SHA256 under the meta key of bytes 0..159, and from format
 * 15 on of the delta image after them too (bytes 192..4095, storage.h). */
bool st_meta_page_encrypted(const uint8_t *page);
/* Seal a whole meta page (its format, at byte 16, says what the MAC covers). */
void st_cipher_meta_seal(const st_cipher *c, uint8_t *page);
typedef enum st_meta_auth { ST_META_AUTH_OK, ST_META_AUTH_WRONG_KEY, ST_META_AUTH_BAD_MAC } st_meta_auth;
/* Check a meta page's first 192 bytes, with img its delta image (ST_DELTA_BYTES; read only for
 * format 15 and later). */
st_meta_auth st_cipher_meta_check(const st_cipher *c, const uint8_t *head, const uint8_t *img);

/* A page (a run of `bytes` bytes: an overflow run is sealed as one) of plain bytes into
 * `sealed`: bytes 0..7 and 16..23 the tag, 8..15 the version (in clear), 24.. the ciphertext of
 * the plain bytes 24.. . The nonce is the version and the page number, which the tag also
 * covers: a page moved elsewhere or replaced by an older copy fails to open. Opening restores
 * the plain header (the checksum field zero, the version, the page number); -1 when the tag
 * does not match (nothing trustworthy is left in `plain`). */
int st_cipher_seal_page(const st_cipher *c, const uint8_t *plain, size_t bytes, uint64_t pgno,
                        uint8_t *sealed);
int st_cipher_open_page(const st_cipher *c, const uint8_t *sealed, size_t bytes, uint64_t pgno,
                        uint8_t *plain);
/* Plain bytes 24 .. 24+len (len <= 16) of a sealed page, unauthenticated (the kind, an overflow
 * run's length, a packed region's dictionary length): only ever used to size the authenticated
 * open. */
int st_cipher_peek_page(const st_cipher *c, const uint8_t *sealed, uint64_t pgno, uint8_t *out,
                        size_t len);

/* A packed page's compressed bytes (packed.c) sealed: out = tag | ciphertext (len + 16 bytes),
 * nonce = its offset in the packed region (written once per file) under the packed key, which
 * the tag also covers. Open: `in` of `len` bytes (tag included) into out (len - 16); -1 when the
 * tag does not match. */
#define ST_PACKED_TAG ST_TAG_BYTES
int st_cipher_seal_packed(const st_cipher *c, uint64_t off, const uint8_t *in, size_t len, uint8_t *out);
int st_cipher_open_packed(const st_cipher *c, uint64_t off, const uint8_t *in, size_t len, uint8_t *out);

/* A commit log record's body (after its 32-byte head, which the tag covers) sealed in place
 * with the record's version as nonce; the tag goes to `tag`. Open: -1 when it does not match. */
int st_cipher_seal_record(const st_cipher *c, const uint8_t *head, uint64_t version,
                          uint8_t *body, size_t len, uint8_t tag[ST_TAG_BYTES]);
int st_cipher_open_record(const st_cipher *c, const uint8_t *head, uint64_t version,
                          uint8_t *body, size_t len, const uint8_t tag[ST_TAG_BYTES]);

#endif
