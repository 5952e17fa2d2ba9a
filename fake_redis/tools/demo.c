/* demo.c -- fakeredis-demo: a short, readable tour of the in-process fake.
 *
 * Runs a fixed script of commands against one fr_server -- strings, lists, hashes, sets,
 * sorted sets, a MULTI/EXEC block, a WATCH conflict between two clients, a key expiring
 * on the virtual clock and a stream read and settled through a consumer group -- printing
 * each command and its reply the way redis-cli shows them, then the canonical fr_dump of
 * the keyspace.  The output is the same on every run.
 *
 * Exit status: 0, or 1 if a command answered an error the script did not expect (so the
 * demo doubles as a smoke test of `./run.sh main`).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakeredis.h"

static int unexpected_errors; /* errors the script did not ask for */

/* Appends s (len bytes) to out quoted and escaped the way redis-cli prints bulk strings
 * (its sdscatrepr): "\n" "\r" "\t" "\a" "\b" "\\" "\"" and \xHH for other unprintables. */
static void print_repr(const char *s, size_t len)
{
    putchar('"');
    for (size_t i = 0; i < len; i++) {
        unsigned char ch = (unsigned char)s[i];
        switch (ch) {
        case '\\': fputs("\\\\", stdout); break;
        case '"': fputs("\\\"", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        case '\a': fputs("\\a", stdout); break;
        case '\b': fputs("\\b", stdout); break;
        default:
            if (ch >= 0x20 && ch < 0x7f)
                putchar(ch);
            else
                printf("\\x%02x", ch);
        }
    }
    putchar('"');
}

/* Prints a reply as redis-cli does on a terminal.  prefix is the indentation of nested
 * array elements after the first (the first follows its parent's "N) " on the same line),
 * built the way redis-cli builds it: the parent's prefix plus the width of the widest
 * index plus two. */
static void print_reply(const fr_reply *r, const char *prefix)
{
    switch (r->type) {
    case FR_REPLY_STATUS: printf("%s\n", r->str); break;
    case FR_REPLY_ERROR: printf("(error) %s\n", r->str); break;
    case FR_REPLY_INTEGER: printf("(integer) %lld\n", r->integer); break;
    case FR_REPLY_BULK: print_repr(r->str, r->len); putchar('\n'); break;
    case FR_REPLY_NIL:
    case FR_REPLY_NIL_ARRAY: printf("(nil)\n"); break;
    case FR_REPLY_ARRAY: {
        if (r->count == 0) {
            printf("(empty array)\n");
            break;
        }
        int width = 0;
        for (size_t n = r->count; n; n /= 10)
            width++;
        char child[256];
        snprintf(child, sizeof child, "%s%*s", prefix, width + 2, "");
        for (size_t i = 0; i < r->count; i++) {
            printf("%s%*zu) ", i == 0 ? "" : prefix, width, i + 1);
            print_reply(&r->elements[i], child);
        }
        break;
    }
    default: printf("(unknown reply type %d)\n", (int)r->type);
    }
}

/* Runs one command line on client c, printing it after prompt and then its reply.  An
 * error reply counts as unexpected unless want_error is set. */
static const fr_reply *run_ex(fr_client *c, const char *prompt, const char *line,
                              int want_error)
{
    printf("%s> %s\n", prompt, line);
    const fr_reply *r = fr_exec_line(c, line);
    print_reply(r, "");
    if (r->type == FR_REPLY_ERROR && !want_error)
        unexpected_errors++;
    return r;
}

static void section(const char *title)
{
    printf("\n# ---- %s\n", title);
}

/* One line of the tour. */
typedef enum step_kind {
    SECTION, /* a heading */
    RUN,     /* a command on the main connection, shown after "fake>" */
    ERR,     /* the same, answering an error on purpose */
    ON_A,    /* a command on the main connection, shown after "A>" (WATCH) */
    ON_B,    /* a command on the second connection, shown after "B>" */
    ADVANCE, /* the virtual clock advances ms, and text says so */
} step_kind;

typedef struct step {
    step_kind kind;
    const char *text; /* the heading, the command line, or the clock's sentence */
    long long ms;     /* ADVANCE: by how much */
} step;

/* The tour, in order. */
static const step TOUR[] = {
    {SECTION, "strings", 0},
    {RUN, "SET greeting \"hello world\"", 0},
    {RUN, "GET greeting", 0},
    {RUN, "APPEND greeting !", 0},
    {RUN, "INCR visits", 0},
    {RUN, "INCRBY visits 41", 0},
    {ERR, "INCR greeting", 0},
    {RUN, "MSET colour blue size 7", 0},
    {RUN, "MGET colour size missing", 0},
    {RUN, "SET colour red NX", 0},

    {SECTION, "lists", 0},
    {RUN, "RPUSH jobs job:1 job:2 job:3", 0},
    {RUN, "LPUSH jobs job:0", 0},
    {RUN, "LRANGE jobs 0 -1", 0},
    {RUN, "LPOP jobs", 0},
    {RUN, "LLEN jobs", 0},
    {ERR, "LPUSH greeting x", 0},

    {SECTION, "hashes", 0},
    {RUN, "HSET user:1 name alice visits 1", 0},
    {RUN, "HINCRBY user:1 visits 10", 0},
    {RUN, "HGET user:1 name", 0},
    {RUN, "HGETALL user:1", 0},

    {SECTION, "sets", 0},
    {RUN, "SADD primes 2 3 5 7 11", 0},
    {RUN, "SISMEMBER primes 4", 0},
    {RUN, "SCARD primes", 0},
    {RUN, "SMEMBERS primes", 0},

    {SECTION, "sorted sets", 0},
    {RUN, "ZADD leaderboard 100 alice 250 bob 175 carol", 0},
    {RUN, "ZINCRBY leaderboard 100 alice", 0},
    {RUN, "ZRANGE leaderboard 0 -1 WITHSCORES", 0},
    {RUN, "ZRANGEBYSCORE leaderboard 180 +inf", 0},

    {SECTION, "a MULTI/EXEC block: queued, then run as one", 0},
    {RUN, "MULTI", 0},
    {RUN, "INCR visits", 0},
    {RUN, "RPUSH jobs job:4", 0},
    {RUN, "HINCRBY user:1 visits 1", 0},
    {RUN, "EXEC", 0},

    {SECTION, "WATCH: client B changes the key, so client A's EXEC answers nil", 0},
    {ON_A, "WATCH balance", 0},
    {ON_A, "GET balance", 0},
    {ON_B, "SET balance 50", 0},
    {ON_A, "MULTI", 0},
    {ON_A, "SET balance 100", 0},
    {ON_A, "EXEC", 0},
    {ON_A, "GET balance", 0},

    {SECTION, "expiry on the virtual clock", 0},
    {RUN, "SET session:42 token EX 30", 0},
    {RUN, "TTL session:42", 0},
    {ADVANCE, "(the virtual clock advances 29 s)", 29 * 1000},
    {RUN, "TTL session:42", 0},
    {ADVANCE, "(the virtual clock advances 1.5 s more: the key's 30 s are up)", 1500},
    {RUN, "GET session:42", 0},
    {RUN, "EXISTS session:42", 0},

    {SECTION, "a stream with a consumer group: read, then settle with XACK", 0},
    {RUN, "XGROUP CREATE orders fulfilment $ MKSTREAM", 0},
    {RUN, "XADD orders * sku A-1 qty 2", 0},
    {RUN, "XADD orders * sku B-7 qty 1", 0},
    {RUN, "XREADGROUP GROUP fulfilment worker-1 COUNT 10 STREAMS orders >", 0},
    {RUN, "XACK orders fulfilment 1700000030500-0", 0},
    {RUN, "XPENDING orders fulfilment", 0},
};

/* Plays one line of the tour: a and b are the two connections. */
static void play(fr_server *srv, fr_client *a, fr_client *b, const step *s)
{
    switch (s->kind) {
    case SECTION: section(s->text); break;
    case RUN: run_ex(a, "fake", s->text, 0); break;
    case ERR: run_ex(a, "fake", s->text, 1); break;
    case ON_A: run_ex(a, "A", s->text, 0); break;
    case ON_B: run_ex(b, "B", s->text, 0); break;
    case ADVANCE:
        fr_clock_advance(srv, s->ms);
        printf("%s\n", s->text);
        break;
    }
}

int main(void)
{
    fr_config cfg = fr_config_default();
    fr_server *srv = fr_server_new(&cfg);
    fr_client *a = NULL, *b = NULL;
    if (!srv || !(a = fr_client_new(srv)) || !(b = fr_client_new(srv))) {
        fprintf(stderr, "fakeredis-demo: out of memory\n");
        return 1;
    }

    printf("fakeredis %s, answering as redis-server %s; virtual clock at %lld ms, seed %llu\n",
           FR_VERSION, FR_REDIS_VERSION, (long long)fr_clock_now(srv),
           (unsigned long long)cfg.seed);
    for (size_t i = 0; i < sizeof TOUR / sizeof TOUR[0]; i++)
        play(srv, a, b, &TOUR[i]);

    section("fr_dump: the canonical text of the keyspace");
    size_t len = 0;
    char *dump = fr_dump(srv, &len);
    if (!dump) {
        fprintf(stderr, "fakeredis-demo: fr_dump: out of memory\n");
        return 1;
    }
    fwrite(dump, 1, len, stdout);
    free(dump);

    printf("\n%llu commands executed.\n",
           (unsigned long long)fr_server_commands_executed(srv));
    fr_client_free(b);
    fr_client_free(a);
    fr_server_free(srv);
    if (unexpected_errors) {
        fprintf(stderr, "fakeredis-demo: %d command(s) answered an unexpected error\n",
                unexpected_errors);
        return 1;
    }
    return 0;
}
