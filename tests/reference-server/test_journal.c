/* test_journal.c - durability of the category store: replay, torn and corrupt records, write
 * failures, kill -9 mid-storm. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <zlib.h>

#include "core/buf.h"
#include "core/clock.h"
#include "harness.h"
#include "test_journal_util.h"

static ps_store *open_journal(const char *path)
{
    ps_store_options o = {0};
    o.journal_path = path;
    ps_store *s = NULL;
    ps_error err;
    if (ps_store_open(&o, &s, &err) != 0) {
        fprintf(stderr, "ps_store_open: %s\n", err.message);
        return NULL;
    }
    return s;
}

static char *list_copy(ps_store *s)
{
    ps_store_snapshot *snap = ps_store_list(s);
    size_t len;
    const char *json = ps_store_snapshot_json(snap, &len);
    char *copy = strndup(json, len);
    ps_store_snapshot_release(snap);
    return copy;
}

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static void append_raw(const char *path, const char *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_APPEND);
    if (fd < 0 || write(fd, data, len) != (ssize_t)len) {
        perror(path);
        exit(2);
    }
    close(fd);
}

/* Appends a record with a correct checksum around arbitrary JSON text. */
static void append_record(const char *path, const char *json, bool newline)
{
    char line[1024];
    int n = snprintf(line, sizeof line, "%08lx %s%s",
                     crc32(0L, (const Bytef *)json, (uInt)strlen(json)), json, newline ? "\n" : "");
    append_raw(path, line, (size_t)n);
}

static void journal_path(char *out, size_t cap, const char *dir)
{
    snprintf(out, cap, "%s/categories.journal", dir);
}

static void test_replay_is_exact(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    ps_store *s = open_journal(path);
    CHECK(s != NULL);
    if (!s) goto out;
    CHECK_INT(create_sync(s, "dog", 3, "good \"boy\"", 10), 1);
    CHECK_INT(create_sync(s, "nul\0name", 8, NULL, 0), 2);
    CHECK_INT(create_sync(s, "\xe2\x98\x83\n<&>", 7, "", 0), 3);
    char *before = list_copy(s);
    ps_store_close(s);

    s = open_journal(path);
    CHECK(s != NULL);
    if (!s) goto out_free;
    char *after = list_copy(s);
    CHECK_STR(after, before); /* byte for byte, NUL and escapes included */
    CHECK_INT(ps_store_count(s), 3);
    CHECK_INT(create_sync(s, "cat", 3, NULL, 0), 4);
    free(after);
    ps_store_close(s);
    /* each record is a line "<crc32 hex8> <json>" */
    ps_buf text = PS_BUF_INIT;
    CHECK_INT(ps_buf_read_file(&text, path), 0);
    CHECK(strncmp(text.data + 8, " {\"id\":1,\"name\":\"dog\"", 21) == 0);
    char want_crc[9];
    const char *json = text.data + 9;
    const char *nl = strchr(json, '\n');
    snprintf(want_crc, sizeof want_crc, "%08lx", crc32(0L, (const Bytef *)json, (uInt)(nl - json)));
    CHECK(strncmp(text.data, want_crc, 8) == 0);
    ps_buf_free(&text);
out_free:
    free(before);
out:
    remove_temp_dir(dir);
}

/* Three good records, then `tail` appended: the store opens with the three,
 * the file is cut back to them, and creation continues with id 4. */
static void check_bad_tail_dropped(const char *what, const char *tail_json, bool raw, bool newline)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    ps_store *s = open_journal(path);
    for (int i = 0; i < 3; i++)
        create_sync(s, "a", 1, NULL, 0);
    char *before = list_copy(s);
    ps_store_close(s);
    off_t good_size = file_size(path);
    if (raw)
        append_raw(path, tail_json, strlen(tail_json));
    else
        append_record(path, tail_json, newline);
    CHECK(file_size(path) > good_size);

    fprintf(stderr, "(expect a warning about a torn last record: %s)\n", what);
    s = open_journal(path);
    CHECK(s != NULL);
    if (!s) {
        fprintf(stderr, "  case: %s\n", what);
        goto out;
    }
    CHECK_INT(ps_store_count(s), 3);
    CHECK_INT(file_size(path), good_size);
    char *after = list_copy(s);
    CHECK_STR(after, before);
    free(after);
    CHECK_INT(create_sync(s, "later", 5, NULL, 0), 4);
    ps_store_close(s);
    /* the later record follows cleanly: a reopen finds all four, no repair */
    off_t size4 = file_size(path);
    s = open_journal(path);
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(ps_store_count(s), 4);
        ps_json *list = list_tree(s);
        const ps_json *c = find_id(list, 4);
        CHECK(c && strcmp(ps_json_get_string(c, "name", ""), "later") == 0);
        ps_json_free(list);
        ps_store_close(s);
    }
    CHECK_INT(file_size(path), size4);
out:
    free(before);
    remove_temp_dir(dir);
}

/* Only a missing newline proves a torn write: whatever precedes it. */
static void test_torn_last_record_dropped(void)
{
    check_bad_tail_dropped("half a record", "1a2b3c4d {\"id\":4,\"na", true, false);
    check_bad_tail_dropped("complete JSON without its newline", "{\"id\":4,\"name\":\"x\"}", false,
                           false);
    check_bad_tail_dropped("bad checksum, no newline", "00000000 {\"id\":4,\"name\":\"x\"}", true,
                           false);
    check_bad_tail_dropped("a few bytes of the checksum", "1a2", true, false);
    check_bad_tail_dropped("wrong shape, no newline", "{\"id\":\"4\",\"name\":\"x\"}", false,
                           false);
}

/* Three good records (87 bytes), then `tail`: a complete line, so whatever
 * is wrong with it was not a torn write. The store refuses to open, names
 * the file, line 4, byte offset 87 and the fault, and touches nothing. */
static void check_complete_bad_line_refused(const char *what, const char *tail, bool raw,
                                            const char *reason)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    ps_store *s = open_journal(path);
    for (int i = 0; i < 3; i++)
        create_sync(s, "a", 1, NULL, 0);
    ps_store_close(s);
    CHECK_INT(file_size(path), 87);
    if (raw)
        append_raw(path, tail, strlen(tail));
    else
        append_record(path, tail, true);
    off_t size = file_size(path);
    ps_store_options o = {0};
    o.journal_path = path;
    ps_error err = {{0}};
    s = NULL;
    CHECK_INT(ps_store_open(&o, &s, &err), -1);
    CHECK(s == NULL);
    bool named = strstr(err.message, path) && strstr(err.message, "line 4 (byte offset 87)") &&
                 strstr(err.message, reason) && strstr(err.message, "corruption, not a torn write");
    CHECK(named);
    if (!named) fprintf(stderr, "  case %s: %s\n", what, err.message);
    CHECK_INT(file_size(path), size);
    ps_store_close(s);
    remove_temp_dir(dir);
}

/* Issue 11: a newline-terminated last record with a bad checksum was cut
 * away as if torn, and a record repeating an id was loaded (id 1 listed twice). */
static void test_complete_bad_last_record_refused(void)
{
    check_complete_bad_line_refused("bad checksum", "00000000 {\"id\":4,\"name\":\"x\"}\n", true,
                                    "checksum mismatch");
    check_complete_bad_line_refused("bad JSON", "{\"id\":4,\"name\":\"x\"", false, "bad JSON");
    check_complete_bad_line_refused("wrong shape", "{\"id\":\"4\",\"name\":\"x\"}", false,
                                    "not a positive integer");
    check_complete_bad_line_refused("empty line", "\n", true,
                                    "not a \"<crc32 hex8> <json>\" record");
    check_complete_bad_line_refused("a repeated id", "{\"id\":3,\"name\":\"x\"}", false,
                                    "id 3 is not above the previous record's id 3 (a duplicate)");
    check_complete_bad_line_refused("a decreasing id", "{\"id\":1,\"name\":\"x\"}", false,
                                    "id 1 is not above the previous record's id 3 (out of order)");
}

/* Record ids only grow: a repeated id anywhere is corruption, also in the middle. */
static void test_repeated_id_in_the_middle_refused(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    int fd = open(path, O_CREAT | O_WRONLY, 0644);
    close(fd);
    append_record(path, "{\"id\":1,\"name\":\"a\"}", true);
    append_record(path, "{\"id\":1,\"name\":\"b\"}", true);
    append_record(path, "{\"id\":2,\"name\":\"c\"}", true);
    ps_store_options o = {0};
    o.journal_path = path;
    ps_error err = {{0}};
    ps_store *s = NULL;
    CHECK_INT(ps_store_open(&o, &s, &err), -1);
    CHECK(strstr(err.message, "line 2 (byte offset 29)") != NULL);
    CHECK(strstr(err.message, "a duplicate") != NULL);
    ps_store_close(s);
    remove_temp_dir(dir);
}

static void test_middle_corruption_is_an_error(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    ps_store *s = open_journal(path);
    create_sync(s, "a", 1, NULL, 0);
    ps_store_close(s);
    const char *bad = "deadbeef {\"id\":2,\"name\":\"b\"}\n";
    append_raw(path, bad, strlen(bad));
    append_record(path, "{\"id\":3,\"name\":\"c\"}", true);
    off_t size = file_size(path);
    ps_store_options o = {0};
    o.journal_path = path;
    ps_error err;
    s = NULL;
    CHECK_INT(ps_store_open(&o, &s, &err), -1);
    CHECK(s == NULL);
    CHECK(strstr(err.message, "line 2") != NULL);
    CHECK(strstr(err.message, "checksum") != NULL);
    CHECK(strstr(err.message, path) != NULL);
    fprintf(stderr, "middle corruption: %s\n", err.message);
    CHECK_INT(file_size(path), size); /* nothing repaired behind the operator's back */
    remove_temp_dir(dir);
}

static void test_second_opener_refused(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    ps_store *a = open_journal(path);
    ps_store_options o = {0};
    o.journal_path = path;
    ps_store *b = NULL;
    ps_error err;
    CHECK_INT(ps_store_open(&o, &b, &err), -1);
    CHECK(strstr(err.message, "in use") != NULL);
    ps_store_close(a);
    remove_temp_dir(dir);
}

/* The reason ps_store_open gives for path, or "" when it opened. */
static void open_refusal(const char *path, char *out, size_t cap)
{
    ps_store_options o = {0};
    o.journal_path = path;
    ps_error err = {{0}};
    ps_store *s = NULL;
    out[0] = '\0';
    if (ps_store_open(&o, &s, &err) != 0) snprintf(out, cap, "%s", err.message);
    ps_store_close(s);
}

/* Issue 11: /dev/null acknowledged creations and kept nothing; a FIFO
 * acknowledged until its buffer filled, then write() hung. Every path that
 * is not a regular file is refused at open, saying what it is. */
static void test_non_regular_paths_refused(void)
{
    char *dir = make_temp_dir();
    char fifo[4200], sock[4200], why[1024];
    snprintf(fifo, sizeof fifo, "%s/fifo", dir);
    snprintf(sock, sizeof sock, "%s/sock", dir);
    CHECK_INT(mkfifo(fifo, 0600), 0);
    int sfd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    CHECK(strlen(sock) < sizeof sa.sun_path);
    memcpy(sa.sun_path, sock, strlen(sock) < sizeof sa.sun_path ? strlen(sock) + 1 : 0);
    CHECK_INT(bind(sfd, (struct sockaddr *)&sa, sizeof sa), 0);
    const struct {
        const char *path, *kind;
    } cases[] = {{"/dev/null", "a character device"},
                 {"/dev/full", "a character device"},
                 {fifo, "a FIFO"},
                 {dir, "a directory"},
                 {sock, "a socket"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        open_refusal(cases[i].path, why, sizeof why);
        bool said = strstr(why, cases[i].path) && strstr(why, cases[i].kind) &&
                    strstr(why, "not a regular file");
        CHECK(said);
        if (!said) fprintf(stderr, "  %s: \"%s\"\n", cases[i].path, why);
    }
    close(sfd);
    remove_temp_dir(dir);
}

/* Runs fn with the process's stderr going to a file; returns what was written. */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
    char tmpl[] = "/tmp/ps-journal-stderr-XXXXXX";
    int fd = mkstemp(tmpl);
    unlink(tmpl);
    fflush(stderr);
    int saved = dup(STDERR_FILENO);
    dup2(fd, STDERR_FILENO);
    fn(arg);
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);
    off_t size = lseek(fd, 0, SEEK_END);
    char *text = calloc(1, (size_t)size + 1);
    if (pread(fd, text, (size_t)size, 0) != size) text[0] = '\0';
    close(fd);
    return text;
}

typedef struct lost_journal {
    const char *dir;
    bool replace; /* move the journal aside and put another file at the path, instead of deleting it
                   */
    int creations;
    int ok_before, failed_after, ok_after;
    double seconds; /* the failing part */
} lost_journal;

static void lose_the_journal(void *arg)
{
    lost_journal *t = arg;
    char path[4200];
    journal_path(path, sizeof path, t->dir);
    ps_store *s = open_journal(path);
    if (!s) return;
    t->ok_before = create_sync(s, "kept", 4, NULL, 0) == 1;
    if (t->replace) { /* moved aside (still linked) and a new file put in its place */
        char aside[4300];
        snprintf(aside, sizeof aside, "%s.old", path);
        rename(path, aside);
        int fd = open(path, O_CREAT | O_WRONLY, 0644);
        close(fd);
    } else {
        unlink(path);
    }
    int64_t t0 = ps_clock_mono_ns();
    for (int i = 0; i < t->creations; i++) { /* one batch each: one failure each */
        if (create_sync(s, "lost", 4, NULL, 0) < 0)
            t->failed_after++;
        else
            t->ok_after++;
    }
    t->seconds = (double)(ps_clock_mono_ns() - t0) / 1e9;
    ps_store_close(s);
}

/* Sums the creations the failure lines account for: "N creation(s) ..." at
 * the start of each line and "also N creation(s)" inside it. */
static long counted_creations(const char *log, int *lines)
{
    long total = 0;
    *lines = 0;
    for (const char *p = log; (p = strstr(p, "petstore-server: ")) != NULL; (*lines)++) {
        p += strlen("petstore-server: ");
        total += strtol(p, NULL, 10);
        const char *eol = strchr(p, '\n');
        const char *also = strstr(p, "(also ");
        if (also && (!eol || also < eol)) total += strtol(also + 6, NULL, 10);
    }
    return total;
}

/* Issue 11: a journal deleted (or replaced) while the server ran still
 * acknowledged creations, which were gone after a restart. Now every
 * creation fails, and the failures are logged at most once a second with
 * a count, not one line each (32,147 lines in 8 s on a full disk). */
static void check_lost_journal(bool replace)
{
    lost_journal t = {0};
    char *dir = make_temp_dir();
    t.dir = dir;
    t.replace = replace;
    t.creations = 300;
    char *log = capture_stderr(lose_the_journal, &t);
    CHECK_INT(t.ok_before, 1);
    CHECK_INT(t.failed_after, 300);
    CHECK_INT(t.ok_after, 0);
    CHECK(strstr(log, replace ? "was replaced by another file"
                              : "was deleted while the server runs") != NULL);
    int lines = 0;
    CHECK_INT(counted_creations(log, &lines), 300);
    /* the first at once, one a second after, one summary when the store stops */
    CHECK(lines >= 2 && lines <= 2 + (int)t.seconds);
    fprintf(stderr, "%s journal: 300 failed creations in %.2f s, %d stderr lines\n",
            replace ? "replaced" : "deleted", t.seconds, lines);
    if (lines > 2 + (int)t.seconds) fprintf(stderr, "%s", log);
    free(log);
    if (replace) { /* neither file holds anything of the failed creations */
        char path[4200], aside[4300];
        journal_path(path, sizeof path, dir);
        snprintf(aside, sizeof aside, "%s.old", path);
        CHECK_INT(file_size(path), 0);
        CHECK_INT(file_size(aside), 32); /* the one record acknowledged before */
    }
    remove_temp_dir(dir);
}

static void test_lost_journal_fails_creations(void)
{
    check_lost_journal(false);
    check_lost_journal(true);
}

/* A write that fails half-way on a regular file (file size limit: a short
 * write, then EFBIG) is cut back, nothing of it is acknowledged or visible,
 * and the journal keeps working once the disk has room again. */
static void test_failed_batch_rolled_back(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    ps_store *s = open_journal(path);
    for (int i = 0; i < 3; i++)
        CHECK_INT(create_sync(s, "ok", 2, NULL, 0), i + 1);
    off_t good = file_size(path);
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)good + 100; /* room for part of one record only */
    signal(SIGXFSZ, SIG_IGN);
    CHECK_INT(setrlimit(RLIMIT_FSIZE, &lim), 0);
    char big[300];
    memset(big, 'b', sizeof big);
    fprintf(stderr, "(expect 'not acknowledged' messages: file size limit)\n");
    waiter w;
    waiter_init(&w);
    for (int i = 0; i < 20; i++)
        ps_store_create_async(s, big, sizeof big, NULL, 0, false, waiter_done, &w);
    waiter_wait(&w, 20);
    CHECK_INT(setrlimit(RLIMIT_FSIZE, &old), 0);
    CHECK_INT(w.failed, 20);
    waiter_destroy(&w);
    CHECK_INT(ps_store_count(s), 3);
    CHECK_INT(file_size(path), good);                 /* the partial record was cut off */
    int64_t id = create_sync(s, "after", 5, NULL, 0); /* ids of failed creations are not reused */
    CHECK(id > 3);
    ps_store_close(s);
    s = open_journal(path); /* clean: no torn record to repair */
    CHECK(s != NULL);
    if (s) {
        CHECK_INT(ps_store_count(s), 4);
        ps_json *list = list_tree(s);
        CHECK(find_id(list, id) != NULL);
        ps_json_free(list);
        ps_store_close(s);
    }
    remove_temp_dir(dir);
}

static void test_group_commit(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    ps_store_options o = {0};
    o.journal_path = path;
    o.max_batch_delay_us = 2000;
    ps_store *s = NULL;
    ps_error err;
    CHECK_INT(ps_store_open(&o, &s, &err), 0);
    waiter w;
    waiter_init(&w);
    for (int i = 0; i < 1000; i++)
        ps_store_create_async(s, "x", 1, NULL, 0, false, waiter_done, &w);
    waiter_wait(&w, 1000);
    CHECK_INT(w.ok, 1000);
    uint64_t syncs = ps_store_journal_syncs(s);
    fprintf(stderr, "1000 creations: %llu fdatasync batches\n", (unsigned long long)syncs);
    CHECK(syncs >= 1 && syncs <= 100);
    waiter_destroy(&w);
    ps_store_close(s);
    remove_temp_dir(dir);
}

/* ---- kill -9 in the middle of a create storm ---- */

typedef struct ack {
    int64_t id;
    int64_t seq;
} ack;

/* The fields a storm creation with sequence number seq gets. */
static size_t storm_name(char *buf, size_t cap, int64_t seq)
{
    int n = snprintf(buf, cap, "storm-%lld \xe2\x98\x83 q\"b\\", (long long)seq);
    buf[n] = '\0'; /* and one NUL inside the name */
    n += snprintf(buf + n + 1, cap - (size_t)n - 1, "tail") + 1;
    return (size_t)n;
}

static bool storm_has_description(int64_t seq)
{
    return seq % 3 != 0;
}

typedef struct child_state {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int inflight;
    int pipe_fd;
} child_state;

typedef struct child_req {
    child_state *st;
    int64_t seq;
} child_req;

static void child_done(void *arg, const ps_category *c, int status)
{
    child_req *r = arg;
    if (status == 0) {
        ack a = {c->id, r->seq};
        /* 16 bytes < PIPE_BUF: atomic; written only once the record is durable */
        if (write(r->st->pipe_fd, &a, sizeof a) != (ssize_t)sizeof a) _exit(3);
    }
    pthread_mutex_lock(&r->st->mu);
    r->st->inflight--;
    pthread_cond_signal(&r->st->cv);
    pthread_mutex_unlock(&r->st->mu);
    free(r);
}

static void child_storm(const char *path, int pipe_fd, int64_t seq0)
{
    ps_store *s = open_journal(path);
    if (!s) _exit(2);
    child_state st = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0, pipe_fd};
    char name[128];
    int64_t deadline = ps_clock_mono_ns() + 30 * 1000000000LL; /* the parent kills long before */
    for (int64_t seq = seq0; ps_clock_mono_ns() < deadline; seq++) {
        pthread_mutex_lock(&st.mu);
        while (st.inflight >= 64)
            pthread_cond_wait(&st.cv, &st.mu);
        st.inflight++;
        pthread_mutex_unlock(&st.mu);
        child_req *r = malloc(sizeof *r);
        r->st = &st;
        r->seq = seq;
        size_t n = storm_name(name, sizeof name, seq);
        bool has_desc = storm_has_description(seq);
        char desc[64];
        int dn = snprintf(desc, sizeof desc, "d%lld <\xc3\xa9>", (long long)seq);
        ps_store_create_async(s, name, n, desc, (size_t)dn, has_desc, child_done, r);
    }
    _exit(4);
}

/* One round: a child storms the journal, is SIGKILLed after `kill_after`
 * acknowledgements, and every acknowledged creation must be in the reopened
 * journal with its exact fields. */
static void crash_round(const char *path, int64_t seq0, int kill_after)
{
    int fds[2];
    if (pipe(fds) != 0) {
        perror("pipe");
        exit(2);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        perror("fork");
        exit(2);
    }
    if (pid == 0) {
        close(fds[0]);
        child_storm(path, fds[1], seq0);
    }
    close(fds[1]);
    size_t cap = 4096, n = 0;
    ack *acks = malloc(cap * sizeof *acks);
    bool killed = false;
    int64_t deadline = ps_clock_mono_ns() + 20 * 1000000000LL;
    unsigned char partial[sizeof(ack)];
    size_t have = 0;
    for (;;) {
        if (!killed && (n >= (size_t)kill_after || ps_clock_mono_ns() > deadline)) {
            kill(pid, SIGKILL); /* mid-storm: more creations are queued and being written */
            killed = true;
        }
        struct pollfd p = {fds[0], POLLIN, 0};
        int pr = poll(&p, 1, 1000);
        if (pr < 0 && errno == EINTR) continue;
        if (pr == 0) {
            if (killed) break; /* should not happen: EOF comes once the child is gone */
            continue;
        }
        ssize_t r = read(fds[0], partial + have, sizeof partial - have);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) break; /* EOF: the child is dead */
        have += (size_t)r;
        if (have == sizeof partial) {
            if (n == cap) acks = realloc(acks, (cap *= 2) * sizeof *acks);
            memcpy(&acks[n++], partial, sizeof(ack));
            have = 0;
        }
    }
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    CHECK_INT(have, 0);
    CHECK(n >= (size_t)kill_after);
    fprintf(stderr, "crash round: child killed after %zu acknowledged creations\n", n);

    ps_store *s = open_journal(path);
    CHECK(s != NULL);
    if (!s) goto out;
    ps_json *list = list_tree(s);
    CHECK(list != NULL);
    size_t missing = 0, wrong = 0;
    char name[128], desc[64];
    for (size_t i = 0; list && i < n; i++) {
        const ps_json *c = find_id(list, acks[i].id);
        if (!c) {
            if (missing++ < 5)
                fprintf(stderr, "acknowledged id %lld lost\n", (long long)acks[i].id);
            continue;
        }
        size_t nl = storm_name(name, sizeof name, acks[i].seq);
        const ps_json *nv = ps_json_get(c, "name"), *dv = ps_json_get(c, "description");
        bool ok = nv && nv->len == nl && memcmp(nv->str, name, nl) == 0;
        if (storm_has_description(acks[i].seq)) {
            int dn = snprintf(desc, sizeof desc, "d%lld <\xc3\xa9>", (long long)acks[i].seq);
            ok = ok && dv && dv->len == (size_t)dn && memcmp(dv->str, desc, (size_t)dn) == 0;
        } else {
            ok = ok && dv == NULL;
        }
        if (!ok) wrong++;
    }
    CHECK_INT(missing, 0);
    CHECK_INT(wrong, 0);
    /* ids stay unique and increasing across the crash */
    int64_t prev = 0;
    bool increasing = true;
    for (size_t i = 0; list && i < list->count; i++) {
        int64_t id = ps_json_get_int(list->items[i], "id", -1);
        if (id <= prev) increasing = false;
        prev = id;
    }
    CHECK(increasing);
    CHECK(list && list->count >= n);
    ps_json_free(list);
    CHECK_INT(create_sync(s, "after-crash", 11, NULL, 0), prev + 1);
    ps_store_close(s);
out:
    free(acks);
}

static void test_kill9_mid_storm_loses_no_acknowledged_create(void)
{
    char *dir = make_temp_dir();
    char path[4200];
    journal_path(path, sizeof path, dir);
    /* several rounds on one journal: recovery after recovery, at different points */
    crash_round(path, 1000000, 1);
    crash_round(path, 2000000, 300);
    crash_round(path, 3000000, 2000);
    remove_temp_dir(dir);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    RUN(test_replay_is_exact);
    RUN(test_torn_last_record_dropped);
    RUN(test_complete_bad_last_record_refused);
    RUN(test_repeated_id_in_the_middle_refused);
    RUN(test_middle_corruption_is_an_error);
    RUN(test_second_opener_refused);
    RUN(test_non_regular_paths_refused);
    RUN(test_lost_journal_fails_creations);
    RUN(test_failed_batch_rolled_back);
    RUN(test_group_commit);
    RUN(test_kill9_mid_storm_loses_no_acknowledged_create);
    return TEST_EXIT();
}
