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

static fr_client *client_a; /* the demo's main connection */

static void run(const char *line) { run_ex(client_a, "fake", line, 0); }

static void section(const char *title)
{
    printf("\n# ---- %s\n", title);
}

int main(void)
{
    fr_config cfg = fr_config_default();
    fr_server *srv = fr_server_new(&cfg);
    fr_client *b = NULL;
    if (!srv || !(client_a = fr_client_new(srv)) || !(b = fr_client_new(srv))) {
        fprintf(stderr, "fakeredis-demo: out of memory\n");
        return 1;
    }

    printf("fakeredis %s, answering as redis-server %s; virtual clock at %lld ms, seed %llu\n",
           FR_VERSION, FR_REDIS_VERSION, (long long)fr_clock_now(srv),
           (unsigned long long)cfg.seed);

    section("strings");
    run("SET greeting \"hello world\"");
    run("GET greeting");
    run("APPEND greeting !");
    run("INCR visits");
    run("INCRBY visits 41");
    run_ex(client_a, "fake", "INCR greeting", 1);
    run("MSET colour blue size 7");
    run("MGET colour size missing");
    run("SET colour red NX");

    section("lists");
    run("RPUSH jobs job:1 job:2 job:3");
    run("LPUSH jobs job:0");
    run("LRANGE jobs 0 -1");
    run("LPOP jobs");
    run("LLEN jobs");
    run_ex(client_a, "fake", "LPUSH greeting x", 1);

    section("hashes");
    run("HSET user:1 name alice visits 1");
    run("HINCRBY user:1 visits 10");
    run("HGET user:1 name");
    run("HGETALL user:1");

    section("sets");
    run("SADD primes 2 3 5 7 11");
    run("SISMEMBER primes 4");
    run("SCARD primes");
    run("SMEMBERS primes");

    section("sorted sets");
    run("ZADD leaderboard 100 alice 250 bob 175 carol");
    run("ZINCRBY leaderboard 100 alice");
    run("ZRANGE leaderboard 0 -1 WITHSCORES");
    run("ZRANGEBYSCORE leaderboard 180 +inf");

    section("a MULTI/EXEC block: queued, then run as one");
    run("MULTI");
    run("INCR visits");
    run("RPUSH jobs job:4");
    run("HINCRBY user:1 visits 1");
    run("EXEC");

    section("WATCH: client B changes the key, so client A's EXEC answers nil");
    run_ex(client_a, "A", "WATCH balance", 0);
    run_ex(client_a, "A", "GET balance", 0);
    run_ex(b, "B", "SET balance 50", 0);
    run_ex(client_a, "A", "MULTI", 0);
    run_ex(client_a, "A", "SET balance 100", 0);
    run_ex(client_a, "A", "EXEC", 0);
    run_ex(client_a, "A", "GET balance", 0);

    section("expiry on the virtual clock");
    run("SET session:42 token EX 30");
    run("TTL session:42");
    fr_clock_advance(srv, 29 * 1000);
    printf("(the virtual clock advances 29 s)\n");
    run("TTL session:42");
    fr_clock_advance(srv, 1500);
    printf("(the virtual clock advances 1.5 s more: the key's 30 s are up)\n");
    run("GET session:42");
    run("EXISTS session:42");

    section("a stream with a consumer group: read, then settle with XACK");
    run("XGROUP CREATE orders fulfilment $ MKSTREAM");
    run("XADD orders * sku A-1 qty 2");
    run("XADD orders * sku B-7 qty 1");
    run("XREADGROUP GROUP fulfilment worker-1 COUNT 10 STREAMS orders >");
    run("XACK orders fulfilment 1700000030500-0");
    run("XPENDING orders fulfilment");

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
    fr_client_free(client_a);
    fr_server_free(srv);
    if (unexpected_errors) {
        fprintf(stderr, "fakeredis-demo: %d command(s) answered an unexpected error\n",
                unexpected_errors);
        return 1;
    }
    return 0;
}
