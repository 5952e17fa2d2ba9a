/* fileio.c -- whole files in and out, as the persistence modules need them (rdb_file.c,
 * aof.c): a read of a file into memory, and the write Redis does for a file that must
 * never be seen half written (a temporary file beside it, fsync, rename, fsync of the
 * directory: rdbSave's order). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "fr_int.h"

char *fri_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return NULL;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return NULL;
    }
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, n = 0;
    char *buf = fri_malloc_plain(cap);
    while (buf) {
        if (n == cap) { /* the file grew while read */
            char *nb = realloc(buf, cap * 2);
            if (!nb) {
                free(buf);
                buf = NULL;
                errno = ENOMEM;
                break;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR) continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            buf = NULL;
            errno = e;
            break;
        }
        if (r == 0) break;
        n += (size_t)r;
    }
    if (buf && n == cap) { /* room for the NUL */
        char *nb = realloc(buf, cap + 1);
        if (!nb) free(buf);
        buf = nb;
    }
    if (!buf && errno == 0) errno = ENOMEM;
    close(fd);
    if (buf) {
        buf[n] = '\0';
        *len = n;
    }
    return buf;
}

/* Writes all of p, retrying short writes.  0, or -1 with errno. */
static int write_all(int fd, const char *p, size_t len)
{
    while (len) {
        ssize_t w = write(fd, p, len);
        if (w < 0 && errno == EINTR) continue;
        if (w < 0) return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

/* The directory part of path ("." when it has none), into dir (PATH_MAX bytes). */
static void dir_of(const char *path, char *dir)
{
    const char *slash = strrchr(path, '/');
    if (!slash) {
        strcpy(dir, ".");
    } else if (slash == path) {
        strcpy(dir, "/");
    } else {
        size_t n = (size_t)(slash - path);
        if (n >= PATH_MAX) n = PATH_MAX - 1;
        memcpy(dir, path, n);
        dir[n] = '\0';
    }
}

int fri_fsync_dir(const char *path)
{
    char dir[PATH_MAX];
    dir_of(path, dir);
    int fd = open(dir, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    int rc = fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

int fri_write_file_atomic(const char *path, const char *tag, const void *p, size_t len)
{
    char dir[PATH_MAX], tmp[PATH_MAX + 64];
    dir_of(path, dir);
    snprintf(tmp, sizeof(tmp), "%s/temp-%d.%s", dir, (int)getpid(), tag);
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) return -1;
    if (write_all(fd, p, len) < 0 || fsync(fd) < 0) {
        int e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        return -1;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        int e = errno;
        unlink(tmp);
        errno = e;
        return -1;
    }
    return fri_fsync_dir(path);
}
