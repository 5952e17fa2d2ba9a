/* wsi_io.h -- whole files and whole records, header only.
 *
 * wsi_read_file: every tool that reads a file does so whole (the scenario parser, the
 * wsim tool's grammar and shard files, the shrinker's and the fuzz drivers' inputs, the
 * fuzzing benchmark's corpus), with one answer for an empty file (a NUL-terminated empty
 * text, never NULL) and errno saying why it failed.
 *
 * wsi_write_all: the processes that report back to a parent over a pipe (the crash
 * explorer's workers, scenario/src/explore.c; the shrinker's children, model/src/repro.c)
 * must send a record whole or not at all: a short write or a signal must not cut it. */
#ifndef WSI_IO_H
#define WSI_IO_H

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "wsi_alloc.h"

/* The largest file a wsim tool reads (a scenario, a fuzz input for `wsim repro`, an
 * explore shard, a document): no real one is near it, and a hostile one (/dev/zero) is
 * refused with EFBIG before it takes the machine's memory. */
#define WSI_INPUT_MAX (((size_t)64 << 20) - 1)
#define WSI_INPUT_MAX_TEXT "64 MB"

/* Why wsi_read_file failed, for a message: "file over 64 MB" for an input too large
 * (errno EFBIG with WSI_INPUT_MAX), "read error" for EIO, else strerror. */
static inline const char *wsi_read_error(int e)
{
    return e == EFBIG ? "file over " WSI_INPUT_MAX_TEXT : e == EIO ? "read error" : strerror(e);
}

/* Reads the whole file at path into fresh heap memory with a NUL after its bytes (wsi_free()
 * it; an empty file gives an empty text, not NULL); *len gets its length.  A file longer
 * than max bytes (max 0: no limit) is refused with errno EFBIG.  NULL with errno set when
 * the file cannot be opened (fopen's errno) or read (EIO), or memory runs out (ENOMEM). */
static inline char *wsi_read_file(const char *path, size_t max, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, n = 0;
    char *buf = (char *)wsi_malloc(cap);
    int err = buf ? 0 : ENOMEM;
    while (!err) {
        n += fread(buf + n, 1, cap - 1 - n, f); /* one byte kept for the NUL */
        if (max && n > max) {
            err = EFBIG;
        } else if (n < cap - 1) { /* the end, or an error */
            if (ferror(f)) err = EIO;
            break;
        } else {
            char *grown = (char *)wsi_realloc(buf, cap * 2);
            if (!grown) err = ENOMEM;
            else buf = grown, cap *= 2;
        }
    }
    fclose(f);
    if (err) {
        wsi_free(buf);
        errno = err;
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Writes the len bytes at data to fd, again after a signal or a short write; 0 when all
 * were written, -1 when write failed (errno says why) or wrote nothing. */
static inline int wsi_write_all(int fd, const void *data, size_t len)
{
    const char *p = (const char *)data;
    while (len > 0) {
        ssize_t k = write(fd, p, len);
        if (k < 0 && errno == EINTR) continue;
        if (k <= 0) return -1;
        p += k;
        len -= (size_t)k;
    }
    return 0;
}

#endif /* WSI_IO_H */
