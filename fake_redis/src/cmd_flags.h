/* The one-letter flag names the modules' command tables are written with.
 *
 * Included just above a module's table (after everything else the .c file includes), so
 * that every table spells a flag the same way and no module defines its own letters.  The
 * letters stay defined to the end of that file: code below a table must not use them as
 * names (the compiler says so if it does). */
#ifndef FRI_CMD_FLAGS_H
#define FRI_CMD_FLAGS_H

#include "fr_int.h"

#define W FRI_CMD_WRITE    /* "write" */
#define R FRI_CMD_READONLY /* "readonly" */
#define F FRI_CMD_FAST     /* "fast" */
#define M FRI_CMD_DENYOOM  /* "denyoom" */
#define B FRI_CMD_BLOCKING /* "blocking" */
#define A FRI_CMD_ADMIN    /* "admin" */

#endif
