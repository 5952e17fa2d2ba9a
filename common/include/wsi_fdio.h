/* wsi_fdio.h -- writing to a pipe whole, header only.  The processes that report back to
 * a parent over a pipe (the crash explorer's workers, scenario/src/explore.c; the
 * shrinker's children, model/src/repro.c) must send a record whole or not at all: a short
 * write or a signal must not cut it. */
#ifndef WSI_FDIO_H
#define WSI_FDIO_H

#include <errno.h>
#include <stddef.h>
#include <unistd.h>

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

#endif /* WSI_FDIO_H */
