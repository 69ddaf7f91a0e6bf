/*
 * error.c — filling strata_error, the one corruption path, and failed debug assertions.
 *
 * Every failed check of on-disk data calls st_corrupt_at (through ST_CORRUPT), so a single
 * breakpoint there catches all corruption, and the message records the source line.
 */
#include "base/base.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void st_utf8_trim(char *s, size_t cap) {
    size_t n = strnlen(s, cap);
    if (n + 1 < cap) return; /* not cut */
    /* drop a last character whose bytes did not all fit */
    size_t i = n, need = 0;
    while (i > 0 && ((unsigned char)s[i - 1] & 0xC0) == 0x80 && n - i < 3) i--;
    if (i == 0) return;
    unsigned char lead = (unsigned char)s[i - 1];
    need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    if (lead >= 0xC0 && n - (i - 1) < need) s[i - 1] = 0;
}

static void st_vfill(strata_error *err, int code, const char *fmt, va_list ap) {
    if (!err) return;
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    st_utf8_trim(err->message, sizeof err->message);
}

int st_err(strata_error *err, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    st_vfill(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int st_err_errno(strata_error *err, int errnum, const char *fmt, ...) {
    int code = (errnum == ENOSPC || errnum == EDQUOT || errnum == EFBIG) ? STRATA_ERR_NO_SPACE
             : (errnum == ENOMEM) ? STRATA_ERR_NO_MEMORY : STRATA_ERR_IO;
    if (!err) return code;
    char what[200];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    err->code = code;
    snprintf(err->message, sizeof err->message, "%s: %s", what, strerror(errnum));
    return code;
}

int st_corrupt_at(strata_error *err, const char *file, int line, const char *fmt, ...) {
    if (!err) return STRATA_ERR_CORRUPT;
    char what[220];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    const char *base = strrchr(file, '/');
    err->code = STRATA_ERR_CORRUPT;
    snprintf(err->message, sizeof err->message, "corrupt database: %s [%s:%d]", what,
             base ? base + 1 : file, line);
    return STRATA_ERR_CORRUPT;
}

#ifdef ST_DEBUG
_Noreturn void st_assert_fail(const char *cond, const char *file, int line) {
    fprintf(stderr, "strata: internal assertion failed: %s [%s:%d]\n", cond, file, line);
    abort();
}
#endif
