/* pause.c -- CLIENT PAUSE's state (Redis 7.0.15's networking.c: pauseClients,
 * unpauseClients, checkClientPauseTimeoutAndReturnIfPaused).  The fake keeps one pause (the
 * CLIENT command's purpose; Redis's shutdown and failover purposes do not exist here); the
 * embedder holds the commands fr_client_pause_holds (server.c) names.  Expiry reads the
 * state through fri_paused: db.c keeps expired keys, notify.c's active expiry waits. */
#include "fr_int.h"

void fr_server_pause(fr_server *s, fr_pause type, int64_t end_ms)
{
    /* a pause already in force: the more restrictive type, the later end; one that has
     * ended counts as none */
    if (fri_paused(s) == FR_PAUSE_OFF) {
        s->pause_type = (int)type;
        s->pause_end_ms = end_ms;
        return;
    }
    if ((int)type > s->pause_type) s->pause_type = (int)type;
    if (end_ms > s->pause_end_ms) s->pause_end_ms = end_ms;
}

void fr_server_unpause(fr_server *s)
{
    s->pause_type = FR_PAUSE_OFF;
    s->pause_end_ms = 0;
}

int fri_paused(fr_server *s)
{
    if (s->pause_type != FR_PAUSE_OFF && s->pause_end_ms < fr_clock_now(s)) fr_server_unpause(s);
    return s->pause_type;
}

fr_pause fr_server_paused(fr_server *s, int64_t *end_ms)
{
    fr_pause p = (fr_pause)fri_paused(s);
    if (end_ms) *end_ms = s->pause_end_ms;
    return p;
}

uint64_t fr_server_expired_keys(const fr_server *s) { return s->expired_keys; }
