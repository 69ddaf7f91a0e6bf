/*
 * fuzz_objects.c — libFuzzer target: the input is a program of object operations (objops.h)
 * run on an in-memory database; whatever the program, every call must return (an error is
 * fine), and the database must verify afterwards. A failed verify aborts: that is a finding.
 */
#include "objops.h"

#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    char id[64];
    snprintf(id, sizeof id, "fuzz-objects-%d", (int)getpid());
    strata_options o;
    strata_options_init(&o);
    o.durability = STRATA_DURABILITY_MEMORY;
    o.map_size = 1ull << 30;
    strata_db_t *db;
    if (strata_db_open(id, &o, &db, NULL) != STRATA_OK) return 0;
    objops_in in = {data, size, 0};
    int rc = objops_run(db, &in);
    strata_db_close(db, NULL);
    if (rc) abort();
    return 0;
}
