/*
 * crashtest.c — kill a writer with SIGKILL at random moments; every commit it reported must
 * survive, and no commit may be half there.
 *
 * A child opens the database and commits numbered transactions (workload.h), writing each
 * number to a pipe after strata_txn_commit returns. The parent kills it after a random delay,
 * reopens the file, verifies it, and checks that the last commit L is at least the last one
 * reported and that the data is exactly the state after commit L. The same file carries on
 * across runs, so every run also starts from a recovered file. Odd runs use NO_SYNC mode, which
 * must survive a process crash just the same.
 *
 * Between commits the child also compacts the file (every 7th commit; in every fourth run after
 * each commit) and writes a copy of it to `<db>.copy` (every 11th), so kills land inside both: the database must still hold every
 * reported commit, and a copy.db that exists must be a whole database at a committed state.
 *
 * Usage: crashtest RUNS        Last line: crashtest: N runs, R recovered, L lost, C corrupt
 */
#include "testkey.h"
#include "workload.h"

#include <signal.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static strata_db_t *open_mode(const char *path, strata_durability d) {
    strata_options o;
    strata_options_init(&o);
    tk_options(&o);
    o.durability = d;
    o.map_size = 1ull << 32;
    strata_db_t *db = NULL;
    strata_error e = {0};
    if (strata_db_open(path, &o, &db, &e)) fprintf(stderr, "open: %s\n", e.message);
    return db;
}

static void copy_path(const char *path, char *out, size_t cap) {
    snprintf(out, cap, "%s.copy", path);
}

static void child(const char *path, strata_durability d, int fd, uint64_t compact_every) {
    strata_db_t *db = open_mode(path, d);
    if (!db) _exit(2);
    char why[256];
    uint64_t last = 0;
    if (wl_check(db, &last, why, sizeof why)) _exit(3);
    strata_error e = {0};
    for (uint64_t i = last + 1;; i++) {
        if (wl_commit(db, i, &e)) {
            fprintf(stderr, "child commit %llu: %s\n", (unsigned long long)i, e.message);
            _exit(4);
        }
        if (write(fd, &i, sizeof i) != sizeof i) _exit(5);
        if (i % compact_every == 0 && strata_db_compact(db, NULL, &e)) {
            fprintf(stderr, "child compaction after %llu: %s\n", (unsigned long long)i, e.message);
            _exit(6);
        }
        if (i % 11 == 0) {
            char copy[300];
            copy_path(path, copy, sizeof copy);
            unlink(copy);
            if (strata_db_write_copy(db, copy, NULL, &e)) {
                fprintf(stderr, "child copy after %llu: %s\n", (unsigned long long)i, e.message);
                _exit(7);
            }
        }
    }
}

int main(int argc, char **argv) {
    int runs = argc > 1 ? atoi(argv[1]) : 200;
    char dir[] = "/tmp/strata-crash-XXXXXX";
    if (!mkdtemp(dir)) return 2;
    char path[256];
    snprintf(path, sizeof path, "%s/crash.db", dir);
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    int recovered = 0, lost = 0, corrupt = 0, copies = 0;
    uint64_t first_last = 0, final_last = 0;
    for (int run = 0; run < runs; run++) {
        strata_durability d = run % 2 ? STRATA_DURABILITY_NO_SYNC : STRATA_DURABILITY_FULL;
        int fds[2];
        if (pipe(fds)) return 2;
        pid_t pid = fork();
        if (pid == 0) {
            close(fds[0]);
            child(path, d, fds[1], run % 4 == 3 ? 1 : 7);
        }
        close(fds[1]);
        usleep((useconds_t)(2000 + rand() % 40000));
        kill(pid, SIGKILL);
        int status;
        waitpid(pid, &status, 0);
        uint64_t reported = 0, n;
        while (read(fds[0], &n, sizeof n) == sizeof n) reported = n;
        close(fds[0]);
        if (WIFEXITED(status)) {
            fprintf(stderr, "run %d: child exited with %d before the kill\n", run,
                    WEXITSTATUS(status));
            corrupt++;
            continue;
        }
        strata_db_t *db = open_mode(path, STRATA_DURABILITY_FULL);
        char why[256] = "cannot open";
        uint64_t last = 0;
        if (!db || wl_check(db, &last, why, sizeof why)) {
            fprintf(stderr, "run %d: corrupt: %s\n", run, why);
            corrupt++;
        } else if (last < reported) {
            fprintf(stderr, "run %d: lost commits: reported %llu, found %llu\n", run,
                    (unsigned long long)reported, (unsigned long long)last);
            lost++;
        } else {
            recovered++;
            if (run == 0) first_last = last;
            final_last = last;
        }
        if (db) {
            char leftover[320];
            snprintf(leftover, sizeof leftover, "%s.compacting", path);
            if (access(leftover, F_OK) == 0) { /* the first open removes a dead compaction's copy */
                fprintf(stderr, "run %d: '%s' is still there after the open\n", run, leftover);
                corrupt++;
            }
        }
        if (db) strata_db_close(db, NULL);
        char copy[300];
        copy_path(path, copy, sizeof copy);
        if (access(copy, F_OK) == 0) { /* a copy that exists is whole */
            strata_db_t *cdb = open_mode(copy, STRATA_DURABILITY_FULL);
            uint64_t at = 0;
            if (!cdb || wl_check(cdb, &at, why, sizeof why)) {
                fprintf(stderr, "run %d: corrupt copy: %s\n", run, why);
                corrupt++;
            } else if (at > last) {
                fprintf(stderr, "run %d: the copy holds commit %llu, the database %llu\n", run,
                        (unsigned long long)at, (unsigned long long)last);
                corrupt++;
            } else {
                copies++;
            }
            if (cdb) strata_db_close(cdb, NULL);
        }
        if (corrupt) break; /* keep the evidence */
    }
    if (!corrupt) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
        if (system(cmd)) return 2;
    } else {
        fprintf(stderr, "corrupt file kept in %s\n", dir);
    }
    fprintf(stderr, "commits: %llu after the first run, %llu at the end; %d whole copies checked\n",
            (unsigned long long)first_last, (unsigned long long)final_last, copies);
    printf("crashtest: %d runs, %d recovered, %d lost, %d corrupt\n", recovered + lost + corrupt,
           recovered, lost, corrupt);
    return lost || corrupt ? 1 : 0;
}
