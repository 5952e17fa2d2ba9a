/* pubsub.c -- PUBLISH in-process: nobody is subscribed (subscriptions over the wire come
 * with the server mode), so it answers 0, and every message goes into the server's log,
 * which tests read with fr_published(). */
#include <stdlib.h>
#include <string.h>

#include "fr_int.h"

size_t fr_published_count(const fr_server *s) { return s->published_len; }

const fr_message *fr_published(const fr_server *s, size_t index)
{
    return index < s->published_len ? &s->published[index] : NULL;
}

void fr_published_clear(fr_server *s)
{
    for (size_t i = 0; i < s->published_len; i++) free((void *)s->published[i].channel);
    s->published_len = 0;
}

static void publish_command(fr_client *c)
{
    fr_server *s = c->srv;
    const fri_arg *ch = &c->argv[1], *msg = &c->argv[2];
    if (s->published_len == s->published_cap) {
        size_t cap = s->published_cap ? s->published_cap * 2 : 16;
        fr_message *n = realloc(s->published, cap * sizeof(*n));
        if (!n) goto oom;
        s->published = n;
        s->published_cap = cap;
    }
    /* channel and payload share one block, each NUL-terminated */
    char *mem = malloc(ch->len + msg->len + 2);
    if (!mem) goto oom;
    memcpy(mem, ch->ptr, ch->len);
    mem[ch->len] = '\0';
    memcpy(mem + ch->len + 1, msg->ptr, msg->len);
    mem[ch->len + 1 + msg->len] = '\0';
    s->published[s->published_len++] = (fr_message){
        .channel = mem,
        .channel_len = ch->len,
        .payload = mem + ch->len + 1,
        .payload_len = msg->len,
        .at_ms = c->now_ms,
    };
    fri_reply_ll(c, 0);
    return;
oom:
    fri_reply_error(c, FRI_ERR_OOM);
}

const fri_command fri_pubsub_commands[] = {
    {"publish", publish_command, 3, FRI_CMD_PUBSUB | FRI_CMD_LOADING | FRI_CMD_STALE |
     FRI_CMD_FAST, "pubsub", 0, 0, 0, NULL, NULL},
    {0},
};
