/* wsr_int.h -- what the recording library's files share (internal; names start wsri_). */
#ifndef WSR_INT_H
#define WSR_INT_H

#include <stddef.h>

/* Whether byte c may stand in a bare token. */
int wsri_bare_byte(unsigned char c);
/* Whether p[0..n) must be quoted (empty, or a byte that may not stand bare). */
int wsri_needs_quotes(const char *p, size_t n);
/* wsr_token with the choice made: quoted (1) or bare (0). */
size_t wsri_token(char *buf, size_t cap, const char *p, size_t n, int quoted);

#endif /* WSR_INT_H */
