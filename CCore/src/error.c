/*
 * error.c — filling strata_error, status names, and the one corruption path.
 *
 * Every failed check of on-disk data calls st_corrupt_at (through ST_CORRUPT), so a single
 * breakpoint there catches all corruption, and the message records the source line.
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static void st_vfill(strata_error *err, int code, const char *fmt, va_list ap) {
    if (!err) return;
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
}

int st_err(strata_error *err, int code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    st_vfill(err, code, fmt, ap);
    va_end(ap);
    return code;
}

int st_err_errno(strata_error *err, int errnum, const char *fmt, ...) {
    int code = (errnum == ENOSPC || errnum == EDQUOT) ? STRATA_ERR_NO_SPACE
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

const char *strata_status_name(int code) {
    switch (code) {
    case STRATA_OK: return "STRATA_OK";
    case STRATA_ERR_INVALID_ARGUMENT: return "STRATA_ERR_INVALID_ARGUMENT";
    case STRATA_ERR_NOT_FOUND: return "STRATA_ERR_NOT_FOUND";
    case STRATA_ERR_EXISTS: return "STRATA_ERR_EXISTS";
    case STRATA_ERR_IO: return "STRATA_ERR_IO";
    case STRATA_ERR_NO_SPACE: return "STRATA_ERR_NO_SPACE";
    case STRATA_ERR_CORRUPT: return "STRATA_ERR_CORRUPT";
    case STRATA_ERR_NOT_STRATA: return "STRATA_ERR_NOT_STRATA";
    case STRATA_ERR_FORMAT_VERSION: return "STRATA_ERR_FORMAT_VERSION";
    case STRATA_ERR_BUSY: return "STRATA_ERR_BUSY";
    case STRATA_ERR_READ_ONLY: return "STRATA_ERR_READ_ONLY";
    case STRATA_ERR_TXN_STATE: return "STRATA_ERR_TXN_STATE";
    case STRATA_ERR_TOO_MANY_VERSIONS: return "STRATA_ERR_TOO_MANY_VERSIONS";
    case STRATA_ERR_READERS_FULL: return "STRATA_ERR_READERS_FULL";
    case STRATA_ERR_MAP_FULL: return "STRATA_ERR_MAP_FULL";
    case STRATA_ERR_NO_MEMORY: return "STRATA_ERR_NO_MEMORY";
    case STRATA_ERR_TOO_LARGE: return "STRATA_ERR_TOO_LARGE";
    case STRATA_ERR_WRONG_TYPE: return "STRATA_ERR_WRONG_TYPE";
    default: return "unknown status";
    }
}

#define ST_STR2(x) #x
#define ST_STR(x) ST_STR2(x)
const char *strata_version(void) {
    return ST_STR(STRATA_VERSION_MAJOR) "." ST_STR(STRATA_VERSION_MINOR) "." ST_STR(STRATA_VERSION_PATCH);
}

uint32_t strata_format_version(void) { return ST_FORMAT_VERSION; }
