/*
 * api_info.c — what the library is: status names, its version, the format version it writes.
 */
#include "storage/storage.h"

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
    case STRATA_ERR_TIMEOUT: return "STRATA_ERR_TIMEOUT";
    case STRATA_ERR_ENCRYPTION: return "STRATA_ERR_ENCRYPTION";
    default: return "unknown status";
    }
}

#define ST_STR2(x) #x
#define ST_STR(x) ST_STR2(x)
const char *strata_version(void) {
    return ST_STR(STRATA_VERSION_MAJOR) "." ST_STR(STRATA_VERSION_MINOR) "." ST_STR(STRATA_VERSION_PATCH);
}

uint32_t strata_format_version(void) { return ST_FORMAT_VERSION; }
