/*
 * test_badargs.c — every public call with bad arguments: NULL handles, NULL outputs, NULL
 * values, unknown types, flags and kinds, out-of-range indexes and columns, a read transaction
 * where a write is needed, and a NULL error pointer. Each case runs in a child process (a crash
 * is named, not fatal to the run) and must return an error with a message — or, for the calls
 * that return no status, simply return.
 */
#include "testlib.h"

#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>

/* The handles the cases use, made once by the parent (the children inherit them). */
static strata_db_t *db;
static strata_txn_t *rtxn, *wtxn;
static strata_table_t *table, *wtable;
static strata_tree_t *tree, *wtree;
static strata_cursor_t *cursor;
static strata_query_t *query;
static strata_results_t *results;
static strata_col_t col_name, col_age, col_list;
static strata_key_t key0;
static strata_value vnull = {.type = STRATA_TYPE_NULL}, vint5 = {.type = STRATA_TYPE_INT, .u.i = 5};
static strata_value vbadtype = {.type = (strata_type)77};
static strata_value vnullbytes = {.type = STRATA_TYPE_STRING, .u.bytes = {NULL, 4}};
static const void *pv;
static size_t sz;
static uint64_t u64;
static strata_key_t k;
static strata_col_t c;
static strata_value v, vs[4];
static const char *s;
static bool bo;
static strata_table_t *tab;

typedef struct bad_case {
    const char *what;
    int (*fn)(void);
    bool status; /* the call returns a status that must be an error */
} bad_case;

#define CASE(name, expr) \
    static int name(void) { return (expr); }
#define VOID_CASE(name, stmt) \
    static int name(void) { \
        stmt; \
        return 0; \
    }

/* databases and transactions */
CASE(open_null_path, strata_db_open(NULL, NULL, &db, E))
CASE(open_empty_path, strata_db_open("", NULL, &db, E))
CASE(open_null_out, strata_db_open(tl_path("x.db"), NULL, NULL, E))
static int open_bad_opts(void) {
    strata_options o;
    memset(&o, 0, sizeof o); /* never initialized: size 0 */
    strata_db_t *d;
    return strata_db_open(tl_path("x.db"), &o, &d, E);
}
static int open_bad_durability(void) {
    strata_options o;
    strata_options_init(&o);
    o.durability = (strata_durability)9;
    strata_db_t *d;
    return strata_db_open(tl_path("x.db"), &o, &d, E);
}
static int open_no_readers(void) {
    strata_options o;
    strata_options_init(&o);
    o.max_readers = 0;
    strata_db_t *d;
    return strata_db_open(tl_path("x.db"), &o, &d, E);
}
static int open_half_io(void) {
    strata_io_methods io = *strata_io_default();
    io.pwrite = NULL;
    strata_options o;
    strata_options_init(&o);
    o.io = &io;
    strata_db_t *d;
    return strata_db_open(tl_path("x.db"), &o, &d, E);
}
CASE(open_missing_no_create, ({
    strata_options o;
    strata_options_init(&o);
    o.create = false;
    strata_db_t *d;
    strata_db_open(tl_path("never.db"), &o, &d, E);
}))
CASE(close_null, strata_db_close(NULL, E))
CASE(close_busy, strata_db_close(db, E)) /* transactions not freed */
CASE(sync_null, strata_db_sync(NULL, E))
CASE(info_null_db, strata_db_info_get(NULL, &(strata_db_info){0}, E))
CASE(info_null_out, strata_db_info_get(db, NULL, E))
CASE(recovery_null_db, strata_db_recovery(NULL, &(strata_recovery){0}, E))
CASE(recovery_null_out, strata_db_recovery(db, NULL, E))
CASE(live_null_db, strata_db_live_versions(NULL, &u64, 1, &sz, E))
CASE(live_null_versions, strata_db_live_versions(db, NULL, 4, &sz, E))
CASE(live_null_count, strata_db_live_versions(db, &u64, 1, NULL, E))
CASE(readers_null_db, strata_db_readers(NULL, &(strata_reader){0}, 1, &sz, E))
CASE(readers_null_out, strata_db_readers(db, NULL, 4, &sz, E))
CASE(readers_null_count, strata_db_readers(db, &(strata_reader){0}, 1, NULL, E))
CASE(clear_stale_null_db, strata_db_clear_stale_readers(NULL, &sz, E))
CASE(geo_check_null, strata_geo_check(NULL, E))
CASE(geo_check_open_ring, strata_geo_check(&(strata_geo){.kind = STRATA_GEO_POLYGON, .points = (const double[]){0, 0, 1, 0, 1, 1, 0, 1}, .npoints = 4, .ring_ends = (const size_t[]){4}, .nrings = 1}, E))
CASE(geo_check_kind, strata_geo_check(&(strata_geo){.kind = 9}, E))
CASE(verify_null, strata_db_verify(NULL, E))
CASE(space_null_db, strata_db_space_get(NULL, &(strata_space){.size = sizeof(strata_space)}, E))
CASE(space_null_out, strata_db_space_get(db, NULL, E))
CASE(space_small_size, strata_db_space_get(db, &(strata_space){.size = 4}, E))
CASE(copy_null_db, strata_db_write_copy(NULL, tl_path("c.db"), NULL, E))
CASE(copy_null_path, strata_db_write_copy(db, NULL, NULL, E))
CASE(copy_empty_path, strata_db_write_copy(db, "", NULL, E))
CASE(compact_null, strata_db_compact(NULL, NULL, E))
CASE(compact_busy, strata_db_compact(db, NULL, E)) /* transactions not freed */
CASE(wait_null_db, strata_db_wait_commit(NULL, 0, 10, &u64, E))
CASE(changes_null_out, strata_changes_get(rtxn, rtxn, "Dog", NULL, E))
CASE(changes_null_older, ({
    strata_changes_t *ch;
    strata_changes_get(NULL, rtxn, "Dog", &ch, E);
}))
CASE(changes_null_table, ({
    strata_changes_t *ch;
    strata_changes_get(rtxn, rtxn, NULL, &ch, E);
}))
CASE(list_changes_null_out, strata_list_changes_get(rtxn, rtxn, "Dog", 0, 1, NULL, E))
CASE(list_changes_null_newer, ({
    strata_list_changes_t *lc;
    strata_list_changes_get(rtxn, NULL, "Dog", 0, 1, &lc, E);
}))
CASE(list_changes_null_table, ({
    strata_list_changes_t *lc;
    strata_list_changes_get(rtxn, rtxn, NULL, 0, 1, &lc, E);
}))
VOID_CASE(list_changes_free_null, strata_list_changes_free(NULL))
VOID_CASE(list_changes_count_null, (void)strata_list_changes_count(NULL, 0))
VOID_CASE(list_changes_index_null, (void)strata_list_changes_index(NULL, 1, 0))
CASE(stop_waits_null, strata_db_stop_waits(NULL, E))
CASE(wait_null_version, strata_db_wait_commit(db, 0, 10, NULL, E))
CASE(clone_null, strata_txn_clone(NULL, &rtxn, E))
CASE(clone_null_out, strata_txn_clone(rtxn, NULL, E))
CASE(keys_null_table, ({
    size_t n;
    strata_table_keys(NULL, NULL, 0, &n, E);
}))
CASE(keys_null_count, strata_table_keys(table, NULL, 0, NULL, E))
CASE(keys_null_buffer, ({
    size_t n;
    strata_table_keys(table, NULL, 4, &n, E);
}))
CASE(begin_null_db, strata_txn_begin(NULL, STRATA_TXN_READ, &rtxn, E))
CASE(begin_null_out, strata_txn_begin(db, STRATA_TXN_READ, NULL, E))
CASE(begin_bad_flags, ({
    strata_txn_t *t;
    strata_txn_begin(db, 0x40, &t, E);
}))
CASE(begin_try_read, ({
    strata_txn_t *t;
    strata_txn_begin(db, STRATA_TXN_TRY, &t, E);
}))
CASE(begin_no_sync_read, ({
    strata_txn_t *t;
    strata_txn_begin(db, STRATA_TXN_NO_SYNC, &t, E);
}))
CASE(commit_null, strata_txn_commit(NULL, E))
CASE(commit_unsynced_null, strata_txn_commit_unsynced(NULL, E))
CASE(commit_unsynced_read, ({
    strata_txn_t *t;
    strata_txn_begin(db, STRATA_TXN_READ, &t, E) ? -1 : ({ int r_ = strata_txn_commit_unsynced(t, E); strata_txn_free(t); r_; });
}))
CASE(commit_ended, ({
    strata_txn_t *t;
    strata_txn_begin(db, STRATA_TXN_READ, &t, E) || strata_txn_commit(t, E) ? -1 : strata_txn_commit(t, E);
}))
VOID_CASE(abort_null, strata_txn_abort(NULL))
VOID_CASE(free_null, strata_txn_free(NULL))
CASE(refresh_null, strata_txn_refresh(NULL, E))
CASE(refresh_write, strata_txn_refresh(wtxn, E))
VOID_CASE(version_null, u64 = strata_txn_version(NULL))
CASE(err_null_too, strata_txn_commit(NULL, NULL)) /* no error pointer: still an error code */

/* trees and cursors */
CASE(tree_open_null_txn, strata_tree_open(NULL, "t", STRATA_KEY_INT, 0, &tree, E))
CASE(tree_open_null_name, strata_tree_open(wtxn, NULL, STRATA_KEY_INT, STRATA_TREE_CREATE, &tree, E))
CASE(tree_open_empty_name, strata_tree_open(wtxn, "", STRATA_KEY_INT, STRATA_TREE_CREATE, &tree, E))
CASE(tree_open_reserved, strata_tree_open(wtxn, "$t1.c", STRATA_KEY_INT, STRATA_TREE_CREATE, &tree, E))
CASE(tree_open_bad_kind, strata_tree_open(wtxn, "k", (strata_key_kind)9, STRATA_TREE_CREATE, &tree, E))
CASE(tree_open_bad_flags, strata_tree_open(wtxn, "k", STRATA_KEY_INT, 0x10, &tree, E))
CASE(tree_open_null_out, strata_tree_open(rtxn, "ints", STRATA_KEY_INT, 0, NULL, E))
CASE(tree_open_create_read, ({
    strata_tree_t *t;
    strata_tree_open(rtxn, "new", STRATA_KEY_INT, STRATA_TREE_CREATE, &t, E);
}))
CASE(tree_drop_null_txn, strata_tree_drop(NULL, "ints", E))
CASE(tree_drop_null_name, strata_tree_drop(wtxn, NULL, E))
CASE(tree_drop_read, strata_tree_drop(rtxn, "ints", E))
CASE(put_null_tree, strata_tree_put(NULL, "a", 1, "b", 1, E))
CASE(put_null_key, strata_tree_put(wtree, NULL, 8, "b", 1, E))
CASE(put_null_value, strata_tree_put(wtree, &u64, 8, NULL, 3, E))
CASE(put_short_int_key, strata_tree_put(wtree, "abc", 3, "b", 1, E))
CASE(put_read_tree, strata_tree_put(tree, &u64, 8, "b", 1, E))
CASE(get_null_tree, strata_tree_get(NULL, &u64, 8, &pv, &sz, E))
CASE(get_null_outs, strata_tree_get(tree, &u64, 8, NULL, NULL, E))
CASE(delete_null_tree, strata_tree_delete(NULL, &u64, 8, E))
CASE(delete_null_key, strata_tree_delete(wtree, NULL, 8, E))
CASE(count_null_tree, strata_tree_count(NULL, &u64, E))
CASE(count_null_out, strata_tree_count(tree, NULL, E))
CASE(count_null_all, strata_tree_count(NULL, NULL, NULL))
CASE(put_int_null, strata_tree_put_int(NULL, 1, "a", 1, E))
CASE(get_int_null, strata_tree_get_int(NULL, 1, &pv, &sz, E))
CASE(get_int_null_out, strata_tree_get_int(tree, 1, NULL, &sz, E))
CASE(delete_int_null, strata_tree_delete_int(NULL, 1, E))
CASE(cursor_open_null, strata_cursor_open(NULL, &cursor, E))
CASE(cursor_open_null_out, strata_cursor_open(tree, NULL, E))
VOID_CASE(cursor_close_null, strata_cursor_close(NULL))
CASE(cursor_first_null, strata_cursor_first(NULL, E))
CASE(cursor_last_null, strata_cursor_last(NULL, E))
CASE(cursor_next_null, strata_cursor_next(NULL, E))
CASE(cursor_prev_null, strata_cursor_prev(NULL, E))
CASE(cursor_seek_null, strata_cursor_seek(NULL, &u64, 8, E))
CASE(cursor_seek_null_key, strata_cursor_seek(cursor, NULL, 8, E))
CASE(cursor_get_null, strata_cursor_get(NULL, &pv, &sz, &pv, &sz, E))
CASE(cursor_get_unpositioned, ({
    strata_cursor_t *cc;
    strata_cursor_open(tree, &cc, E) ? tl_err.code : strata_cursor_get(cc, &pv, &sz, &pv, &sz, E);
}))

/* schema */
CASE(schema_version_null, strata_schema_version(NULL, &u64, E))
CASE(schema_version_null_out, strata_schema_version(rtxn, NULL, E))
CASE(schema_set_version_read, strata_schema_set_version(rtxn, 3, E))
CASE(schema_set_version_null, strata_schema_set_version(NULL, 3, E))
CASE(count_all_null, strata_table_count_all(NULL, &sz, E))
CASE(count_all_null_out, strata_table_count_all(rtxn, NULL, E))
CASE(name_at_null, strata_table_name_at(NULL, 0, &s, E))
CASE(name_at_null_out, strata_table_name_at(rtxn, 0, NULL, E))
CASE(name_at_past, strata_table_name_at(rtxn, SIZE_MAX, &s, E))
CASE(table_create_null_txn, strata_table_create(NULL, "T", &wtable, E))
CASE(table_create_null_name, strata_table_create(wtxn, NULL, &wtable, E))
CASE(table_create_empty_name, strata_table_create(wtxn, "", &wtable, E))
CASE(table_create_long_name, strata_table_create(wtxn, "a_name_longer_than_sixty_three_bytes_is_refused_by_every_call_that_takes_one", &wtable, E))
CASE(table_create_null_out, strata_table_create(wtxn, "T2", NULL, E))
CASE(table_create_read, strata_table_create(rtxn, "T2", &wtable, E))
CASE(table_create_exists, strata_table_create(wtxn, "Person", &wtable, E))
CASE(table_open_null_txn, strata_table_open(NULL, "Person", &wtable, E))
CASE(table_open_null_name, strata_table_open(rtxn, NULL, &wtable, E))
CASE(table_open_null_out, strata_table_open(rtxn, "Person", NULL, E))
CASE(table_open_missing, strata_table_open(rtxn, "Nobody", &wtable, E))
CASE(table_drop_null, strata_table_drop(NULL, "Person", E))
CASE(table_drop_null_name, strata_table_drop(wtxn, NULL, E))
CASE(table_drop_read, strata_table_drop(rtxn, "Person", E))
VOID_CASE(table_name_null, s = strata_table_name(NULL))
CASE(add_prop_null_table, strata_table_add_property(NULL, "x", STRATA_TYPE_INT, 0, NULL, &c, E))
CASE(add_prop_null_name, strata_table_add_property(wtable, NULL, STRATA_TYPE_INT, 0, NULL, &c, E))
CASE(add_prop_bad_type, strata_table_add_property(wtable, "x", (strata_type)77, 0, NULL, &c, E))
CASE(add_prop_list_type, strata_table_add_property(wtable, "x", STRATA_TYPE_LIST, 0, NULL, &c, E))
CASE(add_prop_bad_flags, strata_table_add_property(wtable, "x", STRATA_TYPE_INT, 0x100, NULL, &c, E))
CASE(add_prop_null_out, strata_table_add_property(wtable, "x", STRATA_TYPE_INT, 0, NULL, NULL, E))
CASE(add_prop_link_no_target, strata_table_add_property(wtable, "x", STRATA_TYPE_LINK, 0, NULL, &c, E))
CASE(add_prop_link_missing, strata_table_add_property(wtable, "x", STRATA_TYPE_LINK, 0, "Nobody", &c, E))
CASE(add_prop_read, strata_table_add_property(table, "x", STRATA_TYPE_INT, 0, NULL, &c, E))
CASE(remove_prop_null, strata_table_remove_property(NULL, 1, E))
CASE(remove_prop_missing, strata_table_remove_property(wtable, 999, E))
CASE(rename_prop_null, strata_table_rename_property(NULL, 1, "y", E))
CASE(rename_prop_null_name, strata_table_rename_property(wtable, col_age, NULL, E))
CASE(set_indexed_null, strata_table_set_indexed(NULL, 1, true, E))
CASE(set_indexed_missing, strata_table_set_indexed(wtable, 999, true, E))
CASE(set_indexed_list, strata_table_set_indexed(wtable, col_list, true, E))
CASE(set_fulltext_null, strata_table_set_fulltext(NULL, 1, true, E))
CASE(set_fulltext_missing, strata_table_set_fulltext(wtable, 999, true, E))
CASE(set_fulltext_list, strata_table_set_fulltext(wtable, col_list, true, E))
CASE(set_pk_null, strata_table_set_primary_key(NULL, 1, E))
CASE(set_pk_missing, strata_table_set_primary_key(wtable, 999, E))
CASE(find_prop_null, strata_table_find_property(NULL, "name", &c, E))
CASE(find_prop_null_name, strata_table_find_property(table, NULL, &c, E))
CASE(find_prop_null_out, strata_table_find_property(table, "name", NULL, E))
CASE(prop_count_null, strata_table_property_count(NULL, &sz, E))
CASE(prop_count_null_out, strata_table_property_count(table, NULL, E))
CASE(prop_at_null, strata_table_property_at(NULL, 0, &(strata_property_info){0}, E))
CASE(prop_at_null_out, strata_table_property_at(table, 0, NULL, E))
CASE(prop_at_past, strata_table_property_at(table, SIZE_MAX, &(strata_property_info){0}, E))
CASE(prop_get_null, strata_table_property_get(NULL, col_age, &(strata_property_info){0}, E))
CASE(prop_get_null_out, strata_table_property_get(table, col_age, NULL, E))
CASE(prop_get_missing, strata_table_property_get(table, 999, &(strata_property_info){0}, E))
CASE(pk_null, strata_table_primary_key(NULL, &c, E))
CASE(pk_null_out, strata_table_primary_key(table, NULL, E))

/* objects and lists */
CASE(size_null, strata_table_size(NULL, &u64, E))
CASE(size_null_out, strata_table_size(table, NULL, E))
CASE(create_null, strata_obj_create(NULL, &k, E))
CASE(create_null_out, strata_obj_create(wtable, NULL, E))
CASE(create_read, strata_obj_create(table, &k, E))
CASE(create_pk_null, strata_obj_create_pk(NULL, &vint5, &k, E))
CASE(create_pk_null_value, strata_obj_create_pk(wtable, NULL, &k, E))
CASE(create_pk_no_pk, strata_obj_create_pk(wtable, &vint5, &k, E))
CASE(find_pk_null, strata_obj_find_pk(NULL, &vint5, &k, E))
CASE(find_pk_null_value, strata_obj_find_pk(table, NULL, &k, E))
CASE(find_pk_null_out, strata_obj_find_pk(table, &vint5, NULL, E))
CASE(exists_null, strata_obj_exists(NULL, 0, E))
CASE(exists_missing, strata_obj_exists(table, INT64_MAX, E))
CASE(prefetch_null, strata_obj_prefetch(NULL, 0, E))
CASE(prefetch_missing, strata_obj_prefetch(table, INT64_MAX, E))
CASE(delete_obj_null, strata_obj_delete(NULL, 0, E))
CASE(delete_obj_missing, strata_obj_delete(wtable, -5, E))
CASE(delete_obj_read, strata_obj_delete(table, key0, E))
CASE(clear_null, strata_table_clear(NULL, E))
CASE(clear_read, strata_table_clear(table, E))
CASE(next_null, strata_obj_next(NULL, -1, &k, E))
CASE(next_null_out, strata_obj_next(table, -1, NULL, E))
CASE(next_last, strata_obj_next(table, INT64_MAX, &k, E))
CASE(get_obj_null, strata_obj_get(NULL, key0, col_age, &v, E))
CASE(get_obj_null_out, strata_obj_get(table, key0, col_age, NULL, E))
CASE(get_obj_bad_col, strata_obj_get(table, key0, 999, &v, E))
CASE(get_obj_missing, strata_obj_get(table, -1, col_age, &v, E))
CASE(get_obj_list, strata_obj_get(table, key0, col_list, &v, E))
CASE(get_many_null, strata_obj_get_many(NULL, key0, &col_age, 1, vs, E))
CASE(get_many_null_cols, strata_obj_get_many(table, key0, NULL, 2, vs, E))
CASE(get_many_null_out, strata_obj_get_many(table, key0, &col_age, 1, NULL, E))
CASE(set_null, strata_obj_set(NULL, key0, col_age, &vint5, E))
CASE(set_null_value, strata_obj_set(wtable, key0, col_age, NULL, E))
CASE(set_bad_type, strata_obj_set(wtable, key0, col_age, &vbadtype, E))
CASE(set_null_bytes, strata_obj_set(wtable, key0, col_name, &vnullbytes, E))
CASE(set_null_required, strata_obj_set(wtable, key0, col_age, &vnull, E))
CASE(set_read, strata_obj_set(table, key0, col_age, &vint5, E))
CASE(set_list, strata_obj_set(wtable, key0, col_list, &vint5, E))
CASE(list_size_null, strata_list_size(NULL, key0, col_list, &sz, E))
CASE(list_size_null_out, strata_list_size(table, key0, col_list, NULL, E))
CASE(list_size_not_list, strata_list_size(table, key0, col_age, &sz, E))
CASE(list_get_null, strata_list_get(NULL, key0, col_list, 0, &v, E))
CASE(list_get_null_out, strata_list_get(table, key0, col_list, 0, NULL, E))
CASE(list_get_past, strata_list_get(table, key0, col_list, SIZE_MAX, &v, E))
CASE(list_insert_null, strata_list_insert(NULL, key0, col_list, 0, &vint5, E))
CASE(list_insert_null_value, strata_list_insert(wtable, key0, col_list, 0, NULL, E))
CASE(list_insert_null_bytes, strata_list_insert(wtable, key0, col_list, 0, &vnullbytes, E))
CASE(list_insert_past, strata_list_insert(wtable, key0, col_list, 99, &vint5, E))
CASE(list_set_null, strata_list_set(NULL, key0, col_list, 0, &vint5, E))
CASE(list_set_past, strata_list_set(wtable, key0, col_list, SIZE_MAX, &vint5, E))
CASE(list_move_null, strata_list_move(NULL, key0, col_list, 0, 1, E))
CASE(list_move_past, strata_list_move(wtable, key0, col_list, 0, SIZE_MAX, E))
CASE(list_remove_null, strata_list_remove(NULL, key0, col_list, 0, E))
CASE(list_remove_past, strata_list_remove(wtable, key0, col_list, SIZE_MAX, E))
CASE(list_clear_null, strata_list_clear(NULL, key0, col_list, E))
CASE(list_clear_read, strata_list_clear(table, key0, col_list, E))
CASE(set_insert_null, strata_set_insert(NULL, key0, col_list, &vint5, NULL, E))
CASE(set_insert_null_value, strata_set_insert(wtable, key0, col_list, NULL, NULL, E))
CASE(set_insert_not_set, strata_set_insert(wtable, key0, col_list, &vint5, NULL, E))
CASE(set_insert_read, strata_set_insert(table, key0, col_list, &vint5, NULL, E))
CASE(set_erase_null, strata_set_erase(NULL, key0, col_list, &vint5, NULL, E))
CASE(set_erase_not_set, strata_set_erase(wtable, key0, col_age, &vint5, NULL, E))
CASE(set_find_null, strata_set_find(NULL, key0, col_list, &vint5, &sz, E))
CASE(set_find_null_index, strata_set_find(table, key0, col_list, &vint5, NULL, E))
CASE(set_find_not_set, strata_set_find(table, key0, col_list, &vint5, &sz, E))
CASE(map_set_null, strata_map_set(NULL, key0, col_list, "k", 1, &vint5, NULL, E))
CASE(map_set_null_value, strata_map_set(wtable, key0, col_list, "k", 1, NULL, NULL, E))
CASE(map_set_null_key, strata_map_set(wtable, key0, col_list, NULL, 5, &vint5, NULL, E))
CASE(map_set_not_map, strata_map_set(wtable, key0, col_list, "k", 1, &vint5, NULL, E))
CASE(map_set_read, strata_map_set(table, key0, col_list, "k", 1, &vint5, NULL, E))
CASE(map_get_null, strata_map_get(NULL, key0, col_list, "k", 1, &v, E))
CASE(map_get_null_out, strata_map_get(table, key0, col_list, "k", 1, NULL, E))
CASE(map_get_not_map, strata_map_get(table, key0, col_age, "k", 1, &v, E))
CASE(map_erase_null, strata_map_erase(NULL, key0, col_list, "k", 1, NULL, E))
CASE(map_erase_read, strata_map_erase(table, key0, col_list, "k", 1, NULL, E))
CASE(map_key_at_null, strata_map_key_at(NULL, key0, col_list, 0, &v, E))
CASE(map_key_at_null_out, strata_map_key_at(table, key0, col_list, 0, NULL, E))
CASE(map_key_at_not_map, strata_map_key_at(table, key0, col_list, 0, &v, E))
CASE(set_embedded_null, strata_table_set_embedded(NULL, true, 0, E))
CASE(set_embedded_read, strata_table_set_embedded(table, true, 0, E))
CASE(set_embedded_flags, strata_table_set_embedded(wtable, true, 0x80, E))
CASE(is_embedded_null, strata_table_is_embedded(NULL, &bo, E))
CASE(is_embedded_null_out, strata_table_is_embedded(table, NULL, E))
CASE(open_id_null, strata_table_open_id(NULL, 1, &tab, E))
CASE(open_id_null_out, strata_table_open_id(rtxn, 1, NULL, E))
CASE(open_id_missing, strata_table_open_id(rtxn, 9999, &tab, E))
CASE(set_typed_link_missing_table, strata_obj_set(wtable, key0, col_name, &(strata_value){.type = STRATA_TYPE_TYPED_LINK, .u.typed_link = {0, 9999}}, E))
CASE(backlinks_null, strata_obj_backlinks(NULL, key0, table, col_age, &k, 1, &sz, E))
CASE(backlinks_null_origin, strata_obj_backlinks(table, key0, NULL, col_age, &k, 1, &sz, E))
CASE(backlinks_not_link, strata_obj_backlinks(table, key0, table, col_age, &k, 1, &sz, E))
CASE(backlinks_null_keys, strata_obj_backlinks(table, key0, table, col_list, NULL, 4, &sz, E))
CASE(backlinks_null_count, strata_obj_backlinks(table, key0, table, col_list, &k, 1, NULL, E))
CASE(index_find_null, strata_index_find(NULL, col_name, &vint5, &k, 1, &sz, E))
CASE(index_find_null_value, strata_index_find(table, col_name, NULL, &k, 1, &sz, E))
CASE(index_find_not_indexed, strata_index_find(table, col_age, &vint5, &k, 1, &sz, E))
CASE(index_find_null_keys, strata_index_find(table, col_name, &vnull, NULL, 4, &sz, E))
CASE(index_find_null_count, strata_index_find(table, col_name, &vnull, &k, 1, NULL, E))

/* queries */
CASE(compile_null_txn, strata_query_compile(NULL, "Person", "age > 1", &query, E))
CASE(compile_null_table, strata_query_compile(rtxn, NULL, "age > 1", &query, E))
CASE(compile_null_text, strata_query_compile(rtxn, "Person", NULL, &query, E))
CASE(compile_null_out, strata_query_compile(rtxn, "Person", "age > 1", NULL, E))
CASE(compile_missing_table, strata_query_compile(rtxn, "Nobody", "age > 1", &query, E))
CASE(compile_bad_text, strata_query_compile(rtxn, "Person", "age >", &query, E))
CASE(compile_mapped_null_txn, strata_query_compile_mapped(NULL, "Person", "age > 1", NULL, &query, E))
CASE(compile_mapped_null_out, strata_query_compile_mapped(rtxn, "Person", "age > 1", NULL, NULL, E))
CASE(name_map_create_null, strata_name_map_create(NULL, E))
CASE(name_map_add_null, strata_name_map_add(NULL, "Person", "years", "age", E))
VOID_CASE(name_map_free_null, strata_name_map_free(NULL))
VOID_CASE(query_free_null, strata_query_free(NULL))
VOID_CASE(arg_count_null, sz = strata_query_arg_count(NULL))
CASE(run_null_query, strata_query_run(NULL, rtxn, NULL, 0, &results, E))
CASE(run_null_txn, strata_query_run(query, NULL, NULL, 0, &results, E))
CASE(run_null_args, strata_query_run(query, rtxn, NULL, 2, &results, E))
CASE(run_null_out, strata_query_run(query, rtxn, NULL, 0, NULL, E))
CASE(run_bad_arg, strata_query_run(query, rtxn, &vbadtype, 1, &results, E))
CASE(count_q_null, strata_query_count(NULL, rtxn, NULL, 0, &u64, E))
CASE(count_q_null_txn, strata_query_count(query, NULL, NULL, 0, &u64, E))
CASE(count_q_null_out, strata_query_count(query, rtxn, NULL, 0, NULL, E))
CASE(matches_q_null, strata_query_matches(NULL, rtxn, NULL, 0, 0, &bo, E))
CASE(matches_null_txn, strata_query_matches(query, NULL, NULL, 0, 0, &bo, E))
CASE(matches_null_out, strata_query_matches(query, rtxn, NULL, 0, 0, NULL, E))
CASE(matches_bad_arg, strata_query_matches(query, rtxn, &vbadtype, 1, 0, &bo, E))
CASE(position_q_null, strata_query_position(NULL, rtxn, NULL, 0, 0, &sz, E))
CASE(position_null_txn, strata_query_position(query, NULL, NULL, 0, 0, &sz, E))
CASE(position_null_keys, strata_query_position(query, rtxn, NULL, 5, 0, &sz, E))
CASE(position_null_out, strata_query_position(query, rtxn, NULL, 0, 0, NULL, E))
VOID_CASE(results_size_null, sz = strata_results_size(NULL))
VOID_CASE(results_key_null, k = strata_results_key(NULL, 0))
VOID_CASE(results_key_past, k = strata_results_key(results, SIZE_MAX))
VOID_CASE(results_free_null, strata_results_free(NULL))
CASE(aggregate_null, strata_results_aggregate(NULL, table, col_age, STRATA_AGG_SUM, &v, E))
CASE(aggregate_null_table, strata_results_aggregate(results, NULL, col_age, STRATA_AGG_SUM, &v, E))
CASE(aggregate_bad_kind, strata_results_aggregate(results, table, col_age, (strata_aggregate)99, &v, E))
CASE(aggregate_bad_col, strata_results_aggregate(results, table, 999, STRATA_AGG_SUM, &v, E))
CASE(aggregate_null_out, strata_results_aggregate(results, table, col_age, STRATA_AGG_SUM, NULL, E))
CASE(aggregate_string_sum, strata_results_aggregate(results, table, col_name, STRATA_AGG_SUM, &v, E))

/* the rest */
VOID_CASE(type_name_bad, s = strata_type_name((strata_type)99))
VOID_CASE(status_name_bad, s = strata_status_name(-12345))
VOID_CASE(options_init_null, strata_options_init(NULL))

#define C(name) {#name, name, true}
#define V(name) {#name, name, false}
static const bad_case cases[] = {
    C(open_null_path), C(open_empty_path), C(open_null_out), C(open_bad_opts), C(open_bad_durability),
    C(open_no_readers), C(open_half_io), C(open_missing_no_create), C(close_null), C(close_busy),
    C(sync_null), C(info_null_db), C(info_null_out), C(recovery_null_db), C(recovery_null_out),
    C(live_null_db), C(live_null_versions), C(live_null_count), C(readers_null_db), C(readers_null_out), C(readers_null_count), C(clear_stale_null_db),
    C(geo_check_null), C(geo_check_open_ring), C(geo_check_kind), C(verify_null), C(space_null_db), C(space_null_out), C(space_small_size),
    C(copy_null_db), C(copy_null_path), C(copy_empty_path), C(compact_null), C(compact_busy), C(wait_null_db), C(wait_null_version), C(stop_waits_null), C(changes_null_out), C(changes_null_older),
    C(changes_null_table), C(list_changes_null_out), C(list_changes_null_newer), C(list_changes_null_table),
    V(list_changes_free_null), V(list_changes_count_null), V(list_changes_index_null), C(clone_null), C(clone_null_out), C(keys_null_table), C(keys_null_count), C(keys_null_buffer), C(begin_null_db),
    C(begin_null_out), C(begin_bad_flags), C(begin_try_read), C(begin_no_sync_read), C(commit_null), C(commit_unsynced_null), C(commit_unsynced_read), C(commit_ended), V(abort_null),
    V(free_null), C(refresh_null), C(refresh_write), V(version_null), C(err_null_too),
    C(tree_open_null_txn), C(tree_open_null_name), C(tree_open_empty_name), C(tree_open_reserved),
    C(tree_open_bad_kind), C(tree_open_bad_flags), C(tree_open_null_out), C(tree_open_create_read),
    C(tree_drop_null_txn), C(tree_drop_null_name), C(tree_drop_read), C(put_null_tree), C(put_null_key),
    C(put_null_value), C(put_short_int_key), C(put_read_tree), C(get_null_tree), C(get_null_outs),
    C(delete_null_tree), C(delete_null_key), C(count_null_tree), C(count_null_out), C(count_null_all),
    C(put_int_null), C(get_int_null), C(get_int_null_out), C(delete_int_null), C(cursor_open_null),
    C(cursor_open_null_out), V(cursor_close_null), C(cursor_first_null), C(cursor_last_null),
    C(cursor_next_null), C(cursor_prev_null), C(cursor_seek_null), C(cursor_seek_null_key),
    C(cursor_get_null), C(cursor_get_unpositioned), C(schema_version_null), C(schema_version_null_out),
    C(schema_set_version_read), C(schema_set_version_null), C(count_all_null), C(count_all_null_out),
    C(name_at_null), C(name_at_null_out), C(name_at_past), C(table_create_null_txn),
    C(table_create_null_name), C(table_create_empty_name), C(table_create_long_name),
    C(table_create_null_out), C(table_create_read), C(table_create_exists), C(table_open_null_txn),
    C(table_open_null_name), C(table_open_null_out), C(table_open_missing), C(table_drop_null),
    C(table_drop_null_name), C(table_drop_read), V(table_name_null), C(add_prop_null_table),
    C(add_prop_null_name), C(add_prop_bad_type), C(add_prop_list_type), C(add_prop_bad_flags),
    C(add_prop_null_out), C(add_prop_link_no_target), C(add_prop_link_missing), C(add_prop_read),
    C(remove_prop_null), C(remove_prop_missing), C(rename_prop_null), C(rename_prop_null_name),
    C(set_indexed_null), C(set_indexed_missing), C(set_indexed_list), C(set_fulltext_null),
    C(set_fulltext_missing), C(set_fulltext_list), C(set_pk_null), C(set_pk_missing),
    C(find_prop_null), C(find_prop_null_name), C(find_prop_null_out), C(prop_count_null),
    C(prop_count_null_out), C(prop_at_null), C(prop_at_null_out), C(prop_at_past), C(prop_get_null),
    C(prop_get_null_out), C(prop_get_missing), C(pk_null), C(pk_null_out), C(size_null), C(size_null_out),
    C(create_null), C(create_null_out), C(create_read), C(create_pk_null), C(create_pk_null_value),
    C(create_pk_no_pk), C(find_pk_null), C(find_pk_null_value), C(find_pk_null_out), C(exists_null),
    C(exists_missing), C(prefetch_null), C(prefetch_missing), C(delete_obj_null), C(delete_obj_missing), C(delete_obj_read), C(clear_null),
    C(clear_read), C(next_null), C(next_null_out), C(next_last), C(get_obj_null), C(get_obj_null_out),
    C(get_obj_bad_col), C(get_obj_missing), C(get_obj_list), C(get_many_null), C(get_many_null_cols),
    C(get_many_null_out), C(set_null), C(set_null_value), C(set_bad_type), C(set_null_bytes),
    C(set_null_required), C(set_read), C(set_list), C(list_size_null), C(list_size_null_out),
    C(list_size_not_list), C(list_get_null), C(list_get_null_out), C(list_get_past), C(list_insert_null),
    C(list_insert_null_value), C(list_insert_null_bytes), C(list_insert_past), C(list_set_null),
    C(list_set_past), C(list_move_null), C(list_move_past), C(list_remove_null), C(list_remove_past),
    C(list_clear_null), C(list_clear_read), C(set_insert_null), C(set_insert_null_value), C(set_insert_not_set), C(set_insert_read), C(set_erase_null), C(set_erase_not_set), C(set_find_null), C(set_find_null_index), C(set_find_not_set), C(map_set_null), C(map_set_null_value), C(map_set_null_key), C(map_set_not_map), C(map_set_read), C(map_get_null), C(map_get_null_out), C(map_get_not_map), C(map_erase_null), C(map_erase_read), C(map_key_at_null), C(map_key_at_null_out), C(map_key_at_not_map), C(set_embedded_null), C(set_embedded_read), C(set_embedded_flags), C(is_embedded_null), C(is_embedded_null_out), C(open_id_null), C(open_id_null_out), C(open_id_missing), C(set_typed_link_missing_table),
    C(backlinks_null), C(backlinks_null_origin),
    C(backlinks_not_link), C(backlinks_null_keys), C(backlinks_null_count), C(index_find_null),
    C(index_find_null_value), C(index_find_not_indexed), C(index_find_null_keys),
    C(index_find_null_count), C(compile_null_txn), C(compile_null_table), C(compile_null_text),
    C(compile_null_out), C(compile_missing_table), C(compile_bad_text), C(compile_mapped_null_txn),
    C(compile_mapped_null_out), C(name_map_create_null), C(name_map_add_null), V(name_map_free_null), V(query_free_null),
    V(arg_count_null), C(run_null_query), C(run_null_txn), C(run_null_args), C(run_null_out),
    C(run_bad_arg), C(count_q_null), C(count_q_null_txn), C(count_q_null_out), C(matches_q_null), C(matches_null_txn),
    C(matches_null_out), C(matches_bad_arg), C(position_q_null), C(position_null_txn), C(position_null_keys),
    C(position_null_out), V(results_size_null),
    V(results_key_null), V(results_key_past), V(results_free_null), C(aggregate_null),
    C(aggregate_null_table), C(aggregate_bad_kind), C(aggregate_bad_col), C(aggregate_null_out),
    C(aggregate_string_sum), V(type_name_bad), V(status_name_bad), V(options_init_null),
};

/* Person {name (indexed), age, friends: [Person]} with one object; tree "ints". */
static int setup(void) {
    int rc;
    strata_txn_t *w;
    strata_table_t *t;
    strata_tree_t *it;
    if ((rc = strata_db_open(tl_path("bad.db"), NULL, &db, E)) ||
        (rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, E)) ||
        (rc = strata_table_create(w, "Person", &t, E)) ||
        (rc = strata_table_add_property(t, "name", STRATA_TYPE_STRING, STRATA_PROP_INDEXED | STRATA_PROP_NULLABLE, NULL, &col_name, E)) ||
        (rc = strata_table_add_property(t, "age", STRATA_TYPE_INT, 0, NULL, &col_age, E)) ||
        (rc = strata_table_add_property(t, "friends", STRATA_TYPE_LINK, STRATA_PROP_LIST, "Person", &col_list, E)) ||
        (rc = strata_obj_create(t, &key0, E)) ||
        (rc = strata_obj_set(t, key0, col_age, &vint5, E)) ||
        (rc = strata_tree_open(w, "ints", STRATA_KEY_INT, STRATA_TREE_CREATE, &it, E)) ||
        (rc = strata_tree_put_int(it, 1, "one", 3, E)) || (rc = strata_txn_commit(w, E)))
        return rc;
    strata_txn_free(w);
    if ((rc = strata_txn_begin(db, STRATA_TXN_READ, &rtxn, E)) ||
        (rc = strata_txn_begin(db, STRATA_TXN_WRITE, &wtxn, E)) ||
        (rc = strata_table_open(rtxn, "Person", &table, E)) ||
        (rc = strata_table_open(wtxn, "Person", &wtable, E)) ||
        (rc = strata_tree_open(rtxn, "ints", STRATA_KEY_INT, 0, &tree, E)) ||
        (rc = strata_tree_open(wtxn, "ints", STRATA_KEY_INT, 0, &wtree, E)) ||
        (rc = strata_cursor_open(tree, &cursor, E)) ||
        (rc = strata_query_compile(rtxn, "Person", "age > $0", &query, E)) ||
        (rc = strata_query_run(query, rtxn, &vint5, 1, &results, E)))
        return rc;
    return STRATA_OK;
}

/* Each case in a child: 0 = an error with a message (or a void call returned), 1 = success
 * where an error was due, 2 = an error without a message; a signal is a crash. */
static void every_public_call(void) {
    OK(setup());
    int crashed = 0, accepted = 0, silent = 0;
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        fflush(stderr);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(10);
            memset(&tl_err, 0, sizeof tl_err);
            int rc = cases[i].fn();
            if (!cases[i].status) _exit(0);
            if (rc == STRATA_OK) _exit(1);
            bool no_err = cases[i].fn == err_null_too || cases[i].fn == count_null_all;
            _exit(!no_err && !tl_err.message[0] ? 2 : 0);
        }
        int status;
        waitpid(pid, &status, 0);
        if (WIFSIGNALED(status)) {
            fprintf(stderr, "  %s: CRASH (signal %d)\n", cases[i].what, WTERMSIG(status));
            crashed++;
        } else if (WEXITSTATUS(status) == 1) {
            fprintf(stderr, "  %s: returned STRATA_OK\n", cases[i].what);
            accepted++;
        } else if (WEXITSTATUS(status) == 2) {
            fprintf(stderr, "  %s: an error without a message\n", cases[i].what);
            silent++;
        }
    }
    fprintf(stderr, "  %zu cases: %d crashed, %d accepted, %d without a message\n",
            sizeof cases / sizeof *cases, crashed, accepted, silent);
    CHECK(crashed == 0 && accepted == 0 && silent == 0);
    strata_results_free(results);
    strata_query_free(query);
    strata_cursor_close(cursor);
    strata_txn_free(wtxn);
    strata_txn_free(rtxn);
    OK(strata_db_close(db, E));
}

/* The ABI's growth rule: a program compiled against an older header (shorter structs) calls
 * the init functions it knew and passes its shorter structs; nothing past them is written, and
 * the fields it does not know take their defaults. The layouts below are those of 0.7 and 0.8. */
typedef struct {
    size_t size;
    strata_durability durability;
    bool read_only, create;
    uint64_t map_size;
    uint32_t max_readers;
    uint64_t max_versions;
    const strata_io_methods *io;
} options_0_7;
typedef struct {
    size_t size;
    bool pack;
} copy_options_0_8;
typedef struct {
    size_t size;
    uint64_t file_bytes, used_bytes, free_bytes;
} space_0_8;

static void older_callers_are_safe(void) {
    struct {
        options_0_7 o;
        unsigned char canary[64];
    } old;
    memset(old.canary, 0xA5, sizeof old.canary);
    (strata_options_init)((strata_options *)&old.o); /* the symbol, as an old binary calls it */
    CHECK(old.o.size == sizeof(options_0_7) && old.o.create && old.o.max_readers == 126);
    for (size_t i = 0; i < sizeof old.canary; i++) CHECK(old.canary[i] == 0xA5);
    old.o.max_readers = 7;
    strata_db_t *d;
    OK(strata_db_open(tl_path("older.db"), (strata_options *)&old.o, &d, E));

    struct {
        copy_options_0_8 c;
        unsigned char canary[64];
    } oldc;
    memset(oldc.canary, 0xA5, sizeof oldc.canary);
    (strata_copy_options_init)((strata_copy_options *)&oldc.c);
    CHECK(oldc.c.pack);
    for (size_t i = 0; i < sizeof oldc.canary; i++) CHECK(oldc.canary[i] == 0xA5);
    oldc.c.pack = false;
    OK(strata_db_write_copy(d, tl_path("older-copy.db"), (strata_copy_options *)&oldc.c, E));

    struct {
        space_0_8 s;
        unsigned char canary[64];
    } olds;
    memset(olds.canary, 0xA5, sizeof olds.canary);
    olds.s.size = sizeof olds.s;
    OK(strata_db_space_get(d, (strata_space *)&olds.s, E));
    CHECK(olds.s.file_bytes > 0 && olds.s.used_bytes > 0);
    for (size_t i = 0; i < sizeof olds.canary; i++) CHECK(olds.canary[i] == 0xA5);
    OK(strata_db_close(d, E));

    /* today's callers, through the macros: every field, and sizes past what the library knows
     * (a newer header) are clamped to its own */
    strata_options now;
    strata_options_init(&now);
    CHECK(now.size == sizeof now && now.open_timeout_ms == 30000);
    strata_options_init_sized(&now, sizeof now + 64);
    CHECK(now.size == sizeof now);
    strata_copy_options cnow;
    strata_copy_options_init(&cnow);
    CHECK(cnow.size == sizeof cnow && cnow.pack_level == 1);
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {TL_TEST(every_public_call), TL_TEST(older_callers_are_safe)};
    return tl_run("badargs", tests, (int)(sizeof tests / sizeof *tests), argc, argv);
}
