/*
 * stress.c — many processes on one file, killed at random: `stress SECONDS [WRITERS READERS]`.
 *
 * A bank: 64 accounts of 1,000 each, and a row per writer slot counting its commits. Writer
 * processes (durability FULL) move money between two random accounts and count the commit, a
 * transaction each; after a commit returns, the writer records the count in shared memory: that
 * commit is durable. Reader processes check, in every snapshot, that the money adds up, and that
 * each writer's count is at least the durable count recorded before the snapshot began (a
 * durable commit is visible to every transaction begun after it). Every process reopens its
 * handle now and then. The parent SIGKILLs a random process every 20-200 ms and starts another,
 * and every 2 s kills them all at once and starts them all again (a restart storm: the first
 * opener recovers while the others open). At the end: the file opens, verifies, adds up, and
 * holds every durable commit.
 *
 * Prints one line: stress: ... V violations, E errors other than BUSY, L lost durable commits;
 * exits 1 if any of those is not 0.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "strata.h"
#include "testkey.h"

#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { ACCOUNTS = 64, START = 1000, MAX_PROCS = 64 };

typedef struct shared {
    _Atomic uint64_t durable[MAX_PROCS]; /* per writer slot: commits known durable */
    _Atomic uint64_t commits, snapshots, violations, errors, busy;
    _Atomic int messages;                /* errors printed so far (a few are shown) */
} shared;

static shared *S;
static char db_path[512];

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void report(const char *who, const char *what, int rc, const strata_error *e) {
    if (rc == STRATA_ERR_BUSY) {
        atomic_fetch_add(&S->busy, 1);
        return;
    }
    atomic_fetch_add(&S->errors, 1);
    if (atomic_fetch_add(&S->messages, 1) < 10)
        fprintf(stderr, "  %s %d: %s: %s (%s)\n", who, (int)getpid(), what, strata_status_name(rc),
                e->message);
}

static void violation(const char *fmt, unsigned long long a, unsigned long long b) {
    atomic_fetch_add(&S->violations, 1);
    if (atomic_fetch_add(&S->messages, 1) < 10) {
        fprintf(stderr, "  reader %d: ", (int)getpid());
        fprintf(stderr, fmt, a, b);
        fprintf(stderr, "\n");
    }
}

static int open_db(strata_db_t **db, strata_error *e) {
    strata_options o;
    strata_options_init(&o);
    tk_options(&o);
    o.map_size = 1ull << 32;
    return strata_db_open(db_path, &o, db, e);
}

typedef struct bank {
    strata_table_t *acct, *wr;
    strata_col_t balance, commits;
} bank;

static int open_bank(strata_txn_t *txn, bank *b, strata_error *e) {
    int rc;
    if ((rc = strata_table_open(txn, "Account", &b->acct, e)) ||
        (rc = strata_table_open(txn, "Writer", &b->wr, e)) ||
        (rc = strata_table_find_property(b->acct, "balance", &b->balance, e)))
        return rc;
    return strata_table_find_property(b->wr, "commits", &b->commits, e);
}

static int get_int(strata_table_t *t, strata_key_t k, strata_col_t c, int64_t *out, strata_error *e) {
    strata_value v;
    int rc = strata_obj_get(t, k, c, &v, e);
    if (rc == STRATA_OK) *out = v.u.i;
    return rc;
}

static int set_int(strata_table_t *t, strata_key_t k, strata_col_t c, int64_t i, strata_error *e) {
    strata_value v = {.type = STRATA_TYPE_INT, .u.i = i};
    return strata_obj_set(t, k, c, &v, e);
}

/* Object keys are 0.. in creation order (Account 0..63, Writer 0..MAX_PROCS-1). */
static void writer(int slot) {
    srand((unsigned)getpid());
    for (;;) {
        strata_db_t *db;
        strata_error e = {0};
        int rc = open_db(&db, &e);
        if (rc) {
            report("writer", "open", rc, &e);
            usleep(1000);
            continue;
        }
        for (int n = 0; n < 50 + rand() % 200; n++) {
            strata_txn_t *w = NULL;
            bank b;
            if ((rc = strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e))) {
                report("writer", "begin", rc, &e);
                continue;
            }
            int64_t from, to, c;
            strata_key_t a = rand() % ACCOUNTS, z = rand() % ACCOUNTS;
            int64_t amount = rand() % 100;
            if ((rc = open_bank(w, &b, &e)) || (rc = get_int(b.acct, a, b.balance, &from, &e)) ||
                (rc = set_int(b.acct, a, b.balance, from - amount, &e)) ||
                (rc = get_int(b.acct, z, b.balance, &to, &e)) ||
                (rc = set_int(b.acct, z, b.balance, to + amount, &e)) ||
                (rc = get_int(b.wr, slot, b.commits, &c, &e)) ||
                (rc = set_int(b.wr, slot, b.commits, c + 1, &e)) ||
                (rc = strata_txn_commit(w, &e))) {
                report("writer", "transfer", rc, &e);
            } else {
                atomic_store(&S->durable[slot], (uint64_t)c + 1);
                atomic_fetch_add(&S->commits, 1);
            }
            strata_txn_free(w);
        }
        if ((rc = strata_db_close(db, &e))) report("writer", "close", rc, &e);
    }
}

static void reader(int writers) {
    srand((unsigned)getpid());
    uint64_t seen[MAX_PROCS] = {0};
    for (;;) {
        strata_db_t *db;
        strata_error e = {0};
        int rc = open_db(&db, &e);
        if (rc) {
            report("reader", "open", rc, &e);
            usleep(1000);
            continue;
        }
        for (int n = 0; n < 100 + rand() % 400; n++) {
            uint64_t durable[MAX_PROCS];
            for (int i = 0; i < writers; i++) durable[i] = atomic_load(&S->durable[i]);
            strata_txn_t *r = NULL;
            bank b;
            if ((rc = strata_txn_begin(db, STRATA_TXN_READ, &r, &e)) || (rc = open_bank(r, &b, &e))) {
                report("reader", "snapshot", rc, &e);
                if (r) strata_txn_free(r);
                r = NULL;
                continue;
            }
            int64_t sum = 0, v = 0;
            for (strata_key_t k = 0; k < ACCOUNTS && rc == STRATA_OK; k++)
                if ((rc = get_int(b.acct, k, b.balance, &v, &e)) == STRATA_OK) sum += v;
            for (int i = 0; i < writers && rc == STRATA_OK; i++) {
                if ((rc = get_int(b.wr, i, b.commits, &v, &e))) break;
                if ((uint64_t)v < durable[i])
                    violation("a snapshot shows %llu commits of a writer that had %llu durable "
                              "before it began", (unsigned long long)v, (unsigned long long)durable[i]);
                if ((uint64_t)v < seen[i])
                    violation("a later snapshot shows %llu commits of a writer, an earlier %llu",
                              (unsigned long long)v, (unsigned long long)seen[i]);
                seen[i] = (uint64_t)v;
            }
            if (rc) report("reader", "read", rc, &e);
            else if (sum != (int64_t)ACCOUNTS * START)
                violation("the accounts hold %llu, not %llu", (unsigned long long)sum,
                          (unsigned long long)ACCOUNTS * START);
            else atomic_fetch_add(&S->snapshots, 1);
            strata_txn_free(r);
        }
        if ((rc = strata_db_close(db, &e))) report("reader", "close", rc, &e);
    }
}

static pid_t start(int i, int writers) {
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        if (i < writers) writer(i);
        else reader(writers);
        _exit(0);
    }
    return pid;
}

static int make_bank(int writers) {
    strata_db_t *db;
    strata_error e = {0};
    strata_txn_t *w;
    strata_table_t *a, *wr;
    strata_col_t bal, com;
    if (open_db(&db, &e) || strata_txn_begin(db, STRATA_TXN_WRITE, &w, &e) ||
        strata_table_create(w, "Account", &a, &e) ||
        strata_table_add_property(a, "balance", STRATA_TYPE_INT, 0, NULL, &bal, &e) ||
        strata_table_create(w, "Writer", &wr, &e) ||
        strata_table_add_property(wr, "commits", STRATA_TYPE_INT, 0, NULL, &com, &e)) {
        fprintf(stderr, "stress: cannot make the bank: %s\n", e.message);
        return 1;
    }
    for (int i = 0; i < ACCOUNTS; i++) {
        strata_key_t k;
        if (strata_obj_create(a, &k, &e) || k != i || set_int(a, k, bal, START, &e)) return 1;
    }
    for (int i = 0; i < writers; i++) {
        strata_key_t k;
        if (strata_obj_create(wr, &k, &e) || k != i || set_int(wr, k, com, 0, &e)) return 1;
    }
    if (strata_txn_commit(w, &e)) return 1;
    strata_txn_free(w);
    return strata_db_close(db, &e) ? 1 : 0;
}

/* After everything died: open (recovering), verify, add up, and count lost durable commits. */
static int final_check(int writers, uint64_t *lost) {
    strata_db_t *db;
    strata_error e = {0};
    int rc;
    if ((rc = open_db(&db, &e)) || (rc = strata_db_verify(db, &e))) {
        fprintf(stderr, "  final open/verify: %s (%s)\n", strata_status_name(rc), e.message);
        return 1;
    }
    strata_txn_t *r;
    bank b;
    if ((rc = strata_txn_begin(db, STRATA_TXN_READ, &r, &e)) || (rc = open_bank(r, &b, &e))) {
        fprintf(stderr, "  final read: %s\n", e.message);
        return 1;
    }
    int64_t sum = 0, v;
    int bad = 0;
    for (strata_key_t k = 0; k < ACCOUNTS; k++)
        if (get_int(b.acct, k, b.balance, &v, &e) == STRATA_OK) sum += v;
        else bad = 1;
    if (sum != (int64_t)ACCOUNTS * START) {
        fprintf(stderr, "  final: the accounts hold %lld\n", (long long)sum);
        bad = 1;
    }
    for (int i = 0; i < writers; i++) {
        if (get_int(b.wr, i, b.commits, &v, &e)) {
            bad = 1;
            continue;
        }
        uint64_t d = atomic_load(&S->durable[i]);
        if ((uint64_t)v < d) {
            fprintf(stderr, "  final: writer %d has %lld commits in the file, %llu were durable\n",
                    i, (long long)v, (unsigned long long)d);
            *lost += d - (uint64_t)v;
        }
    }
    strata_txn_free(r);
    strata_db_close(db, NULL);
    return bad;
}

int main(int argc, char **argv) {
    double seconds = argc > 1 ? atof(argv[1]) : 10;
    int writers = argc > 2 ? atoi(argv[2]) : 4, readers = argc > 3 ? atoi(argv[3]) : 4;
    if (writers < 1 || readers < 0 || writers + readers > MAX_PROCS) {
        fprintf(stderr, "usage: stress SECONDS [WRITERS READERS] (at most %d processes)\n", MAX_PROCS);
        return 2;
    }
    const char *base = getenv("TMPDIR");
    char dir[300];
    snprintf(dir, sizeof dir, "%s/strata-stress-XXXXXX", base ? base : "/tmp");
    if (!mkdtemp(dir)) return 2;
    snprintf(db_path, sizeof db_path, "%s/bank.db", dir);
    S = mmap(NULL, sizeof *S, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (S == MAP_FAILED || make_bank(writers)) return 2;

    int n = writers + readers;
    pid_t pids[MAX_PROCS];
    for (int i = 0; i < n; i++) pids[i] = start(i, writers);
    srand(12345);
    unsigned long kills = 0, storms = 0;
    double t0 = now(), next_storm = t0 + 2;
    while (now() - t0 < seconds) {
        usleep(20000 + (useconds_t)(rand() % 180000));
        if (now() >= next_storm) { /* kill everything, start everything */
            for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
            for (int i = 0; i < n; i++) waitpid(pids[i], NULL, 0);
            for (int i = 0; i < n; i++) pids[i] = start(i, writers);
            kills += (unsigned long)n;
            storms++;
            next_storm = now() + 2;
            continue;
        }
        int i = rand() % n;
        kill(pids[i], SIGKILL);
        waitpid(pids[i], NULL, 0);
        pids[i] = start(i, writers);
        kills++;
    }
    for (int i = 0; i < n; i++) kill(pids[i], SIGKILL);
    for (int i = 0; i < n; i++) waitpid(pids[i], NULL, 0);
    uint64_t lost = 0;
    int bad = final_check(writers, &lost);
    unsigned long long v = atomic_load(&S->violations), e = atomic_load(&S->errors);
    printf("stress: %.0f s, %d writers, %d readers: %llu commits, %llu snapshots checked, %lu kills "
           "(%lu storms), %llu BUSY, %llu violations, %llu errors other than BUSY, %llu lost "
           "durable commits%s\n", seconds, writers, readers,
           (unsigned long long)atomic_load(&S->commits), (unsigned long long)atomic_load(&S->snapshots),
           kills, storms, (unsigned long long)atomic_load(&S->busy), v, e, (unsigned long long)lost,
           bad ? "; the final check failed" : "");
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) fprintf(stderr, "stress: could not remove %s\n", dir);
    return v || e || lost || bad ? 1 : 0;
}
