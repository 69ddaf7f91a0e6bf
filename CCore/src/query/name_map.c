/*
 * name_map.c — public names for stored properties, as queries see them (realm-core's
 * KeyPathMapping; RealmSwift's `propertiesMapping()`).
 *
 * A binding whose model calls a property `pk` while the file's column is `custom_pk` gives
 * strata_query_compile_mapped a map with (table, "pk") → "custom_pk": every property name a
 * predicate, SORT or DISTINCT names on that table (including after a link and in
 * `@links.Table.property`) is looked up in the map first, then among the columns themselves.
 *
 * Layout: an array of entries (table, public name, column), in the order added. Invariants: one
 * entry per (table, public name); names are non-empty, valid UTF-8, at most STRATA_MAX_NAME
 * bytes. The map is the caller's, is never stored in a file, and is read-only while a compile
 * reads it (adding to it concurrently with a compile is the caller's race).
 */
#include "query/query.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct name_entry {
    char table[STRATA_MAX_NAME + 1];
    char public_name[STRATA_MAX_NAME + 1];
    char column[STRATA_MAX_NAME + 1];
} name_entry;

struct strata_name_map {
    name_entry *entries;
    size_t count, cap;
};

int strata_name_map_create(strata_name_map_t **out, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!out) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_name_map_create: out is NULL");
    *out = calloc(1, sizeof **out);
    if (!*out) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
    return STRATA_OK;
}

void strata_name_map_free(strata_name_map_t *map) {
    if (!map) return;
    free(map->entries);
    free(map);
}

static int check_name(const char *what, const char *name, strata_error *err) {
    if (!name) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_name_map_add: %s is NULL", what);
    size_t n = strlen(name);
    if (n == 0) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_name_map_add: %s is empty", what);
    if (n > STRATA_MAX_NAME)
        return st_err(err, STRATA_ERR_INVALID_ARGUMENT,
                      "strata_name_map_add: %s '%.20s…' is longer than %u bytes", what, name, STRATA_MAX_NAME);
    strata_value v = {.type = STRATA_TYPE_STRING, .u.bytes = {name, n}};
    char label[40];
    snprintf(label, sizeof label, "strata_name_map_add: %s", what);
    return st_value_shape(&v, label, err);
}

int strata_name_map_add(strata_name_map_t *map, const char *table, const char *public_name,
                        const char *column, strata_error *err) {
    strata_error local;
    if (!err) err = &local;
    if (!map) return st_err(err, STRATA_ERR_INVALID_ARGUMENT, "strata_name_map_add: the map is NULL");
    int rc;
    if ((rc = check_name("table", table, err)) || (rc = check_name("public name", public_name, err)) ||
        (rc = check_name("column", column, err)))
        return rc;
    const char *have = st_name_map_column(map, table, public_name);
    if (have)
        return st_err(err, STRATA_ERR_EXISTS, "'%s.%s' already stands for column '%s'", table,
                      public_name, have);
    if (map->count == map->cap) {
        size_t cap = map->cap ? map->cap * 2 : 8;
        name_entry *e = realloc(map->entries, cap * sizeof *e);
        if (!e) return st_err(err, STRATA_ERR_NO_MEMORY, "out of memory");
        map->entries = e;
        map->cap = cap;
    }
    name_entry *e = &map->entries[map->count++];
    strcpy(e->table, table);
    strcpy(e->public_name, public_name);
    strcpy(e->column, column);
    return STRATA_OK;
}

const char *st_name_map_column(const strata_name_map_t *map, const char *table, const char *public_name) {
    if (!map) return NULL;
    for (size_t i = 0; i < map->count; i++) {
        const name_entry *e = &map->entries[i];
        if (strcmp(e->public_name, public_name) == 0 && strcmp(e->table, table) == 0) return e->column;
    }
    return NULL;
}
