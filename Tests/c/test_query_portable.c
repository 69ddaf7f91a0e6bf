/*
 * test_query_portable.c — the query tests again, on a core built from source with
 * ST_PORTABLE_SCAN: the scan's plain-C mask code (what processors without SSE2 run, e.g. the
 * arm64 of Apple platforms) instead of its SSE2 code, so both are checked against the
 * brute-force evaluator on every run.
 */
#define QUERY_SUITE "query-portable"
#include "test_query.c"
