/* journal.c - checksummed line records on disk: replay, torn-tail repair, group-commit appends. */
#include "reference-server/journal.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

struct ps_journal {
    int fd;
    char *path;
    dev_t dev; /* the file opened: path must still name it, or records go nowhere durable */
    ino_t ino;
    bool broken; /* a failure left the file in a state we cannot vouch for */
    off_t end;   /* end of the last good record */
    uint64_t syncs;
};

static uint32_t checksum(const char *data, size_t len)
{
    return (uint32_t)crc32(0L, (const Bytef *)data, (uInt)len);
}

void ps_journal_format(ps_buf *b, const char *json, size_t len)
{
    ps_buf_printf(b, "%08x ", (unsigned)checksum(json, len));
    ps_buf_append(b, json, len);
    ps_buf_putc(b, '\n');
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Checks one line (without its newline) and hands it to fn. Returns 0, or -1
 * with err saying what is wrong with it. */
static int check_line(const char *line, size_t len, size_t lineno, ps_journal_record_fn fn,
                      void *arg, ps_error *err)
{
    if (len < 10 || line[8] != ' ')
        return ps_error_set(err, "not a \"<crc32 hex8> <json>\" record");
    uint32_t want = 0;
    for (int i = 0; i < 8; i++) {
        int v = hexval(line[i]);
        if (v < 0) return ps_error_set(err, "checksum field is not 8 hex digits");
        want = want << 4 | (uint32_t)v;
    }
    const char *json = line + 9;
    size_t json_len = len - 9;
    uint32_t got = checksum(json, json_len);
    if (got != want)
        return ps_error_set(err, "checksum mismatch (record says %08x, content has %08x)",
                            (unsigned)want, (unsigned)got);
    ps_error jerr;
    ps_json *v = ps_json_parse(json, json_len, NULL, &jerr);
    if (!v) {
        for (char *c = jerr.message; *c; c++) /* yajl's messages end in newlines */
            if (*c == '\n') *c = ' ';
        return ps_error_set(err, "bad JSON: %s", jerr.message);
    }
    int rc = fn(arg, v, lineno, err);
    ps_json_free(v);
    return rc;
}

static int read_all(int fd, ps_buf *b)
{
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return -1;
        if (n == 0) return 0;
        ps_buf_append(b, chunk, (size_t)n);
    }
}

/* Makes the journal's directory entry durable, so a freshly created journal
 * does not vanish with the records acknowledged from it. */
static void sync_parent_dir(const char *path)
{
    char *copy = strdup(path);
    if (!copy) return;
    int dfd = open(dirname(copy), O_RDONLY | O_DIRECTORY);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
    free(copy);
}

/* A torn write (the process or machine died mid-append) leaves the last
 * record without its newline, since every record is written whole with its
 * newline last; a complete line that is bad was damaged some other way, and
 * dropping it could drop an acknowledged creation, so the server refuses to
 * start on it. */
static int replay(ps_journal *j, ps_journal_record_fn fn, void *arg, ps_error *err)
{
    ps_buf b = PS_BUF_INIT;
    int rc = -1;
    if (read_all(j->fd, &b) != 0) {
        ps_error_set(err, "journal %s: cannot read: %s", j->path, strerror(errno));
        goto out;
    }
    size_t pos = 0, lineno = 0;
    while (pos < b.len) {
        lineno++;
        const char *line = b.data + pos;
        const char *nl = memchr(line, '\n', b.len - pos);
        size_t len = nl ? (size_t)(nl - line) : b.len - pos;
        size_t next = pos + len + (nl ? 1 : 0);
        ps_error lerr;
        int bad;
        if (!nl)
            bad = ps_error_set(&lerr, "no newline at the end (torn write)");
        else
            bad = check_line(line, len, lineno, fn, arg, &lerr);
        if (bad) {
            if (nl) {
                ps_error_set(err,
                             "journal %s line %zu (byte offset %zu): %s; the line is complete (it "
                             "ends in a newline), so this is corruption, not a torn write: not "
                             "starting on it (repair the line or move the file aside)",
                             j->path, lineno, pos, lerr.message);
                goto out;
            }
            fprintf(stderr,
                    "petstore-server: warning: journal %s line %zu: %s; dropping this torn last "
                    "record and truncating the file to %zu bytes\n",
                    j->path, lineno, lerr.message, pos);
            if (ftruncate(j->fd, (off_t)pos) != 0 || fdatasync(j->fd) != 0) {
                ps_error_set(err, "journal %s: cannot truncate the torn last record: %s", j->path,
                             strerror(errno));
                goto out;
            }
            break;
        }
        pos = next;
    }
    j->end = (off_t)pos;
    rc = 0;
out:
    ps_buf_free(&b);
    return rc;
}

static const char *file_kind(mode_t mode)
{
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISSOCK(mode)) return "a socket";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    return "not a regular file";
}

static int refuse_kind(const char *path, mode_t mode, ps_error *err)
{
    return ps_error_set(
        err, "journal %s is %s, not a regular file: creations acknowledged there would not be kept",
        path, file_kind(mode));
}

int ps_journal_open(const char *path, ps_journal_record_fn fn, void *arg, ps_journal **out,
                    ps_error *err)
{
    *out = NULL;
    ps_journal *j = calloc(1, sizeof *j);
    if (!j) return ps_error_set(err, "journal %s: out of memory", path);
    j->fd = -1;
    j->path = strdup(path);
    if (!j->path) {
        ps_error_set(err, "journal %s: out of memory", path);
        goto fail;
    }
    struct stat st;
    /* Checked before open too: opening a directory read-write fails with a
     * vaguer message, and a socket cannot be opened at all. */
    if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
        refuse_kind(path, st.st_mode, err);
        goto fail;
    }
    /* O_NONBLOCK: a FIFO put there after the stat must not block the open
     * (it is refused just below); regular files ignore the flag. */
    j->fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NONBLOCK, 0644);
    if (j->fd < 0) {
        ps_error_set(err, "journal %s: cannot open: %s", path, strerror(errno));
        goto fail;
    }
    if (fstat(j->fd, &st) != 0) {
        ps_error_set(err, "journal %s: cannot stat: %s", path, strerror(errno));
        goto fail;
    }
    if (!S_ISREG(st.st_mode)) { /* replaced between the stat and the open */
        refuse_kind(path, st.st_mode, err);
        goto fail;
    }
    j->dev = st.st_dev;
    j->ino = st.st_ino;
    /* Two servers appending to one journal would interleave records. */
    if (flock(j->fd, LOCK_EX | LOCK_NB) != 0) {
        ps_error_set(err, "journal %s: %s", path,
                     errno == EWOULDBLOCK ? "in use by another process" : strerror(errno));
        goto fail;
    }
    sync_parent_dir(path);
    if (replay(j, fn, arg, err) != 0) goto fail;
    *out = j;
    return 0;
fail:
    ps_journal_close(j);
    return -1;
}

/* 0 when the open file still has a name and path still names it, or -1
 * with err saying what happened to it. */
static int still_named(ps_journal *j, ps_error *err)
{
    struct stat open_st, path_st;
    if (fstat(j->fd, &open_st) != 0)
        return ps_error_set(err, "journal %s: cannot stat: %s", j->path, strerror(errno));
    if (open_st.st_nlink == 0)
        return ps_error_set(err,
                            "journal %s was deleted while the server runs; creations written to it "
                            "would not survive a restart",
                            j->path);
    if (stat(j->path, &path_st) != 0)
        return ps_error_set(err,
                            "journal %s is gone from its path (%s); creations written to it would "
                            "not survive a restart",
                            j->path, strerror(errno));
    if (path_st.st_dev != j->dev || path_st.st_ino != j->ino)
        return ps_error_set(err,
                            "journal %s was replaced by another file while the server runs; "
                            "creations written to the old one would not survive a restart",
                            j->path);
    return 0;
}

int ps_journal_append_sync(ps_journal *j, const char *data, size_t len, ps_error *err)
{
    if (j->broken)
        return ps_error_set(err, "journal %s: unusable since an earlier write or sync failure",
                            j->path);
    size_t done = 0;
    while (done < len) {
        ssize_t n = pwrite(j->fd, data + done, len - done, j->end + (off_t)done);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            int e = n < 0 ? errno : EIO;
            ps_error_set(err, "journal %s: write failed: %s", j->path, strerror(e));
            /* Cut off the partial records so later appends follow the last good one. */
            if (ftruncate(j->fd, j->end) != 0) j->broken = true;
            return -1;
        }
        done += (size_t)n;
    }
    if (fdatasync(j->fd) != 0) {
        ps_error_set(err, "journal %s: fdatasync failed: %s", j->path, strerror(errno));
        if (ftruncate(j->fd, j->end) != 0) { /* best effort */
        }
        j->broken = true;
        return -1;
    }
    /* Checked after the sync, so nothing is acknowledged from a file that
     * was deleted or replaced before it was durable: a restart reads path. */
    if (still_named(j, err) != 0) {
        if (ftruncate(j->fd, j->end) != 0) { /* best effort: the records were not acknowledged */
        }
        j->broken = true;
        return -1;
    }
    j->end += (off_t)len;
    j->syncs++;
    return 0;
}

uint64_t ps_journal_syncs(const ps_journal *j)
{
    return j->syncs;
}

void ps_journal_close(ps_journal *j)
{
    if (!j) return;
    if (j->fd >= 0) close(j->fd); /* releases the flock */
    free(j->path);
    free(j);
}
