/* test_server_diff.c -- fakeredis-server and redis-server 7.0.15 must answer the same
 * bytes with the same bytes.
 *
 * Both servers are started here (redis-server through tests/support/redis_harness.h,
 * fakeredis-server with --clock wall so TTLs agree).  Each case runs on a fresh
 * connection to each: its bytes are sent as they are, followed by ECHO of a sentinel,
 * and every reply up to the sentinel's must be identical; a case that ends in a protocol
 * error reads until the server closes instead.  Cases cover the protocol errors and
 * limits, the commands a client sends on connecting (HELLO, AUTH, CLIENT, CONFIG, INFO's
 * shape, COMMAND COUNT aside), MULTI with the server's own commands, and RESP3: after
 * HELLO 3 every reply whose RESP3 form differs (maps, sets, doubles, nulls, pushes). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frs_harness.h"
#include "redis_harness.h"

#define SENTINEL "__frs_case_end__"

/* A case: inline commands, one a line ('\n' between them), or raw bytes. */
typedef struct diff_case {
    const char *name;
    const char *text;   /* the bytes (lines become "line\r\n" unless raw) */
    int raw;            /* send text as it is: strlen(text) bytes, or rawlen */
    int until_eof;      /* 1: the server closes at the end: read everything until then;
                           2: it waits for more: read until 300 ms pass without a reply */
    int skip_first;     /* the first reply differs by nature (HELLO's client id) */
    size_t rawlen;      /* raw bytes that hold a NUL: their count (0: strlen) */
} diff_case;

#define NUL_CASE "PING\r\nPING\0 x\r\nPING\r\n" /* a NUL hides the newline: Redis waits */

/* The scripts of the "resp3 scripts" and "resp2 scripts" cases: the same replies and
 * conversions, seen by a RESP3 and by a RESP2 client. */
#define SCRIPT_REPLY_SHAPES \
    "DEL h s z\nHSET h f v\nSADD s a\nZADD z 1.5 m\n" \
    "EVAL \"return {map={a=1}}\" 0\n" \
    "EVAL \"return {map={a={1,{map={b=true}}}}}\" 0\n" \
    "EVAL \"return {set={x=true}}\" 0\nEVAL \"return {double=3.5}\" 0\n" \
    "EVAL \"return {double=1/0}\" 0\nEVAL \"return {double=-1/0}\" 0\n" \
    "EVAL \"return {double=0.1}\" 0\n" \
    "EVAL \"return {big_number='123456789012345678901234567890'}\" 0\n" \
    "EVAL \"return {verbatim_string={format='txt',string='hi'}}\" 0\n" \
    "EVAL \"return {verbatim_string={format='x',string='hi'}}\" 0\n" \
    "EVAL \"return {verbatim_string={format='markdown',string=''}}\" 0\n" \
    "EVAL \"return true\" 0\nEVAL \"return false\" 0\n" \
    "EVAL \"return nil\" 0\nEVAL \"return {1,false,3}\" 0\n" \
    "EVAL \"redis.setresp(3) return true\" 0\n" \
    "EVAL \"redis.setresp(3) return false\" 0\n" \
    "EVAL \"redis.setresp(3) return {true,false,nil}\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('hgetall','h')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('smembers','s')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('zscore','z','m')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('zscore','z','nope')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('get','nokey')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('get','nokey') == nil\" 0\n" \
    "EVAL \"redis.setresp(3) local r = redis.call('hgetall','h') return r.map.f\" 0\n" \
    "EVAL \"redis.setresp(3) local r = redis.call('zscore','z','m') return tostring(r.double)\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('zrange','z',0,-1,'withscores')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('zpopmin','nokey')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.pcall('hgetall','s')\" 0\n" \
    "EVAL \"redis.setresp(3) return redis.call('lrange','nokey',0,-1)\" 0\n" \
    "MULTI\nEVAL \"return {map={a=1}}\" 0\nGET nokey\n" \
    "EVAL \"return {double=2}\" 0\nEXEC\n" \
    "FUNCTION LOAD REPLACE \"#!lua name=r3lib\\n" \
    "redis.register_function('m', function() return {map={k={set={v=true}}}} end)\"\n" \
    "FCALL m 0\nFUNCTION DELETE r3lib"

static const diff_case cases[] = {
    /* ----- protocol errors and inline parsing ----- */
    {"multibulk count", "*x\r\n", 1, 1, 0, 0},
    {"multibulk count zero-padded", "*01\r\n$4\r\nPING\r\n", 1, 1, 0, 0},
    {"multibulk count too big", "*2147483648\r\n", 1, 1, 0, 0},
    {"bulk length negative", "*1\r\n$-1\r\n", 1, 1, 0, 0},
    {"bulk length over proto-max-bulk-len", "*1\r\n$536870913\r\n", 1, 1, 0, 0},
    {"dollar expected", "PING\r\n*1\r\n$4\r\nPING\r\n*1\r\nx\r\n", 1, 1, 0, 0},
    {"dollar expected, CR", "*1\r\n\r\n", 1, 1, 0, 0},
    {"unbalanced quotes", "PING \"a\r\n", 1, 1, 0, 0},
    {"quote then text", "PING 'a'b\r\n", 1, 1, 0, 0},
    {"bytes after a bulk are skipped", "*1\r\n$4\r\nPINGxxPING\r\n", 1, 0, 0, 0},
    {"empty requests", "*0\r\n*-5\r\n\r\n\n  \r\nPING\r\n", 1, 0, 0, 0},
    {"inline escapes", "ECHO \"\\x41\\x4g\\n\\t\"\r\nECHO 'it\\'s'\r\nPI\"NG\"\r\n"
                       "ECHO a\rb\r\n", 1, 0, 0, 0},
    {"a NUL in an inline request", NUL_CASE, 1, 2, 0, sizeof(NUL_CASE) - 1},
    {"empty command name", "*1\r\n$0\r\n\r\n", 1, 0, 0, 0},
    /* ----- what clients send ----- */
    {"hello errors", "HELLO 4\nHELLO x\nHELLO 3 FOO\nHELLO 3 SETNAME\nHELLO 2 AUTH a b\n"
                     "HELLO 2 SETNAME \"a\\x01b\"", 0, 0, 0, 0},
    {"auth without a password", "AUTH x\nAUTH x y\nAUTH default anything\nAUTH a b c", 0, 0, 0, 0},
    {"client", "CLIENT SETNAME x\nCLIENT GETNAME\nCLIENT SETNAME \"a b\"\nCLIENT SETNAME \"\"\n"
               "CLIENT GETNAME\nCLIENT FOO\nCLIENT\nCLIENT KILL 1.2.3.4:5\n"
               "CLIENT KILL ID 999999\nCLIENT KILL ID x\nCLIENT KILL foo bar\n"
               "CLIENT KILL SKIPME maybe\nCLIENT LIST TYPE foo\nCLIENT LIST ID x\n"
               "CLIENT LIST ID 999999\nCLIENT NO-EVICT maybe\nCLIENT NO-EVICT on\n"
               "CLIENT PAUSE x\nCLIENT UNBLOCK x\nCLIENT UNBLOCK 999999\nCLIENT GETREDIR\n"
               "CLIENT SETNAME", 0, 0, 0, 0},
    {"client reply", "CLIENT REPLY SKIP\nPING\nPING\nCLIENT REPLY OFF\nPING\nECHO x\n"
                     "CLIENT REPLY ON\nPING", 0, 0, 0, 0},
    {"config", "CONFIG\nCONFIG GET\nCONFIG FOO\nCONFIG SET foo 1\nCONFIG SET hz x\n"
               "CONFIG SET hz 5 foo 1\nCONFIG SET hz 5 hz 6\nCONFIG SET appendonly maybe\n"
               "CONFIG SET loglevel x\nCONFIG SET maxmemory-policy x\n"
               "CONFIG SET proto-max-bulk-len 10\nCONFIG SET maxmemory 1xb\n"
               "CONFIG SET maxmemory 1mb\nCONFIG GET maxmemory\nCONFIG SET maxmemory 0\n"
               "CONFIG SET maxclients 0\nCONFIG SET daemonize yes\nCONFIG SET save \"1 2 3\"\n"
               "CONFIG SET client-output-buffer-limit \"normal 1 2\"\n"
               "CONFIG GET appendonly\nCONFIG GET maxmemory-policy\nCONFIG GET proto-max-bulk-len\n"
               "CONFIG GET nosuchparam\nCONFIG REWRITE\nCONFIG RESETSTAT", 0, 0, 0, 0},
    {"config percent, port, proc title",
     "CONFIG SET maxmemory-clients 200%\nCONFIG SET maxmemory-clients 50%\n"
     "CONFIG GET maxmemory-clients\nCONFIG SET maxmemory-clients abc\n"
     "CONFIG SET maxmemory-clients -1%\nCONFIG SET maxmemory-clients 1mb\n"
     "CONFIG GET maxmemory-clients\nCONFIG SET maxmemory-clients 0\n"
     "CONFIG SET port 70000\nCONFIG SET port -1\nCONFIG SET port x\n"
     "CONFIG SET proc-title-template \"{nosuch}\"\nCONFIG SET proc-title-template \"{title}\"\n"
     "CONFIG SET proc-title-template \"{title\"\nCONFIG SET proc-title-template \"x {\"\n"
     "CONFIG SET proc-title-template \"{{ {server-mode}\"\nCONFIG GET proc-title-template\n"
     "CONFIG SET proc-title-template \"{title} {port}\"\n"
     "CONFIG SET proc-title-template \"{title} {listen-addr} {server-mode}\"\n"
     "CONFIG GET proc-title-template", 0, 0, 0, 0},
    {"config reaches the fake",
     "CONFIG SET hash-max-ziplist-entries 2\nCONFIG GET hash-max-listpack-entries\nHSET h a 1 b 2\n"
     "OBJECT ENCODING h\nHSET h c 3\nOBJECT ENCODING h\nCONFIG SET set-max-intset-entries 1\n"
     "SADD s 1 2\nOBJECT ENCODING s\nCONFIG SET maxmemory-policy allkeys-lfu\nSET f v\n"
     "OBJECT FREQ f\nOBJECT IDLETIME f\nCONFIG SET maxmemory-policy noeviction\n"
     "CONFIG SET hash-max-listpack-entries 512\nCONFIG GET hash-max-ziplist-entries\n"
     "CONFIG SET set-max-intset-entries 512\nDEL h s f", 0, 0, 0, 0},
    {"config ranges and stream nodes",
     "CONFIG SET hash-max-listpack-entries -1\nCONFIG SET hash-max-ziplist-entries -1\n"
     "CONFIG SET list-max-listpack-size -2147483649\nCONFIG SET list-max-ziplist-size 2147483648\n"
     "CONFIG SET lfu-log-factor -1\nCONFIG SET lfu-decay-time 2147483648\n"
     "CONFIG SET zset-max-listpack-value -1\nCONFIG SET stream-node-max-bytes 9223372036854775808\n"
     "CONFIG SET stream-node-max-entries -1\nCONFIG SET set-max-intset-entries 9223372036854775807\n"
     "CONFIG SET set-max-intset-entries 512\nCONFIG SET stream-node-max-entries 2\n"
     "CONFIG SET stream-node-max-bytes 1kb\nCONFIG GET stream-node-max-bytes\nDEL x\n"
     "XADD x 1-0 f v\nXADD x 2-0 f v\nXADD x 3-0 f v\nXADD x 4-0 f v\nXADD x 5-0 f v\n"
     "XINFO STREAM x\nXTRIM x MAXLEN ~ 2\nXADD x MAXLEN ~ 0 LIMIT 2 6-0 f v\nXLEN x\n"
     "CONFIG SET stream-node-max-entries 100\nCONFIG SET stream-node-max-bytes 4096\nDEL x",
     0, 0, 0, 0},
    {"misc", "FUNCTION FLUSH\nFUNCTION FLUSH x\nFUNCTION LIST\nFUNCTION LIST x\n"
             "FUNCTION FOO\nROLE\nWAIT 0 0\nWAIT x 0\nECHO\nPING a b\nSELECT 3\nSELECT 99\n"
             "SELECT 0\nQUIT", 0, 1, 0, 0},
    {"multi with the server's commands", "MULTI\nCLIENT SETNAME foo\nSET a 1\nCLIENT GETNAME\n"
                                         "CONFIG GET maxmemory\nEXEC\nDEL a", 0, 0, 0, 0},
    {"multi refusals", "MULTI\nCLIENT SETNAME\nSET a 1\nEXEC\nMULTI\nCLIENT FOO\nEXEC\n"
                       "MULTI\nCONFIG SET\nEXEC", 0, 0, 0, 0},
    {"reset", "SELECT 3\nSET k v\nMULTI\nRESET\nGET k\nCLIENT GETNAME\nSELECT 3\nDEL k", 0, 0, 0, 0},
    {"no-multi commands", "MULTI\nSHUTDOWN\nSAVE\nSHUTDOWN NOSAVE NOW\nSET a 1\nEXEC\nMULTI\n"
                          "SHUTDOWN FOO\nDISCARD\nGET a", 0, 0, 0, 0},
    {"subscribe is queued", "MULTI\nSUBSCRIBE mq\nPING\nCLIENT GETNAME\nEXEC\nUNSUBSCRIBE mq\nPING",
     0, 0, 0, 0},
    {"maxmemory refusals", "SET a 1\nCONFIG SET maxmemory 1\nSET a b\nGET a\nINCR a\nMULTI\n"
                           "GET a\nSHUTDOWN\nMULTI\nDISCARD\nMULTI\nEXEC\n"
                           "CONFIG SET maxmemory 0\nSET a b\nDEL a", 0, 0, 0, 0},
    {"shutdown refusals", "SHUTDOWN FOO\nSHUTDOWN ABORT\nSHUTDOWN ABORT NOW\n"
                          "SHUTDOWN NOSAVE SAVE\nSHUTDOWN abort FORCE\nSHUTDOWN SAVE ABORT",
     0, 0, 0, 0},
    {"latency-tracking config",
     "CONFIG GET latency-tracking-info-percentiles\n"
     "CONFIG SET latency-tracking-info-percentiles \"0.0 50.0 100.0\"\n"
     "CONFIG GET latency-tracking-info-percentiles\n"
     "CONFIG SET latency-tracking-info-percentiles \"10.0 50.0 a\"\n"
     "CONFIG SET latency-tracking-info-percentiles \"10.0 50.0 101.0\"\n"
     "CONFIG SET latency-tracking-info-percentiles \"-1\"\n"
     "CONFIG SET latency-tracking-info-percentiles \"1e1 0x10 99.999\"\n"
     "CONFIG GET latency-tracking-info-percentiles\n"
     "CONFIG SET latency-tracking-info-percentiles \"\"\n"
     "CONFIG GET latency-tracking-info-percentiles\n"
     "CONFIG SET latency-tracking-info-percentiles \"50 99 99.9\"\n"
     "CONFIG SET latency-tracking maybe\nCONFIG SET latency-tracking no\n"
     "CONFIG GET latency-tracking\nCONFIG SET latency-tracking yes", 0, 0, 0, 0},
    {"subscribed mode", "SUBSCRIBE c1\nGET a\nCLIENT ID\nCONFIG GET hz\nPING\nPING x\n"
                        "UNSUBSCRIBE\nPING", 0, 0, 0, 0},
    /* ----- scripts over maxmemory (the fake's OOM hook) ----- */
    {"script oom", "SET x 1\nSCRIPT LOAD \"#!lua\\nreturn 1\"\nFUNCTION FLUSH\n"
                   "FUNCTION LOAD \"#!lua name=oomlib\\nredis.register_function('w', function() "
                   "return 1 end) redis.register_function{function_name='r', callback="
                   "function() return 2 end, flags={'no-writes'}}\"\n"
                   "CONFIG SET maxmemory 1\n"
                   "EVAL \"return redis.call('set','x',1)\" 1 x\n"
                   "EVAL \"return redis.pcall('set','x',1)\" 1 x\n"
                   "EVAL \"local t = redis.pcall('incr','x') return t['err']\" 1 x\n"
                   "EVAL \"return redis.call('get','x')\" 1 x\n"
                   "EVAL \"redis.call('del','nokey') return redis.call('set','x',2)\" 1 x\n"
                   "EVAL \"#!lua\\nreturn 1\" 0\nEVALSHA cb70127618f0b0be70c53cf6bfcfa54a29d9b0c0 0\n"
                   "EVAL \"#!lua flags=no-writes\\nreturn redis.call('get','x')\" 1 x\n"
                   "EVAL \"#!lua flags=allow-oom\\nreturn redis.call('set','x',3)\" 1 x\n"
                   "EVAL_RO \"return redis.call('get','x')\" 1 x\n"
                   "FCALL w 0\nFCALL r 0\nFCALL_RO r 0\n"
                   "MULTI\nEVAL \"return 1\" 0\nEXEC\n"
                   "CONFIG SET maxmemory 0\nGET x\nFUNCTION FLUSH", 0, 0, 0, 0},
    /* ----- RESP3 ----- */
    {"resp3 scripts", "HELLO 3\n" SCRIPT_REPLY_SHAPES, 0, 0, 1, 0},
    {"resp2 scripts", SCRIPT_REPLY_SHAPES, 0, 0, 0, 0},
    {"resp3 types", "HELLO 3\nDEL h z s x f l\nHSET h f v\nHGETALL h\nHGETALL nope\n"
                    "ZADD z 1.5 a 2 b 3 c\nZSCORE z a\nZSCORE z x\nZRANGE z 0 -1 WITHSCORES\n"
                    "ZRANGE z 0 -1\nZRANGEBYSCORE z -inf +inf WITHSCORES\n"
                    "ZREVRANGE z 0 0 WITHSCORES\nZREVRANGEBYSCORE z +inf -inf WITHSCORES\n"
                    "ZUNION 1 z WITHSCORES\nZINTER 1 z WITHSCORES\nZDIFF 1 z WITHSCORES\n"
                    "ZMSCORE z a x\nZADD z INCR 1 a\nZADD z 5 e\nZINCRBY z 1 b\nZPOPMIN z\n"
                    "ZPOPMAX z 2\nZPOPMIN nope\nZPOPMIN nope 2\nZMPOP 1 z MIN\n"
                    "ZMPOP 1 nope MIN\nZADD z 9 q\nBZPOPMIN z 0\nZADD z 10 r 11 s\n"
                    "BZMPOP 0 1 z MAX COUNT 2\nSADD s a\nSMEMBERS s\nSMEMBERS nope\nSPOP s 1\n"
                    "SPOP nope 2\nSPOP nope\nSRANDMEMBER nope 2\nMGET a b\nGET a\nLPOS l a\n"
                    "LPOP nope 2\nBLPOP nope 0.01\nINCRBYFLOAT f 1.5\nHINCRBYFLOAT h n 1.5\n"
                    "CONFIG GET maxmemory\nCLIENT GETNAME\nDEL h z s f", 0, 0, 1, 0},
    {"resp3 streams", "HELLO 3\nDEL x\nXADD x 1-1 f v\nXADD x 2-1 g w\nXREAD STREAMS x 0\n"
                      "XREAD STREAMS x 5\nXGROUP CREATE x g 0\n"
                      "XREADGROUP GROUP g c COUNT 1 STREAMS x >\nXINFO GROUPS x\n"
                      "XINFO STREAM x\nXPENDING x g\nXRANGE x - +\nXAUTOCLAIM x g c 0 0\n"
                      "XDEL x 1-1\nXREADGROUP GROUP g c STREAMS x 0\nXINFO STREAM nope\nDEL x",
     0, 0, 1, 0},
    {"resp3 random and set ops", "HELLO 3\nDEL h h1 z s1 s2\nHSET h a 1 b 2 c 3\n"
                                 "HRANDFIELD h 5 WITHVALUES\nHRANDFIELD h 3\nHSET h1 f v\n"
                                 "HRANDFIELD h1 -3 WITHVALUES\nHRANDFIELD h1 1 WITHVALUES\n"
                                 "HRANDFIELD nope 2 WITHVALUES\nHRANDFIELD h1\n"
                                 "ZADD z 1 a 2.5 b\nZRANDMEMBER z 5 WITHSCORES\n"
                                 "SADD s1 1 2 3\nSADD s2 2 3 4\nSINTER s1 s2\nSUNION s1 s2\n"
                                 "SDIFF s1 s2\nSINTER s1 nope\nSUNION nope\nSDIFF nope s1\n"
                                 "SINTERCARD 2 s1 s2\nSUNIONSTORE d s1 s2\nDEL h h1 z s1 s2 d",
     0, 0, 1, 0},
    {"resp3 geo", "HELLO 3\nDEL g\nGEOADD g 13.361389 38.115556 Palermo 15.087269 37.502669 "
                  "Catania\nGEOPOS g Palermo nope Catania\nGEOPOS nope a\nGEODIST g Palermo Catania\n"
                  "GEODIST g Palermo nope\nGEOHASH g Palermo nope\n"
                  "GEORADIUS g 15 37 200 km WITHCOORD WITHDIST WITHHASH ASC\n"
                  "GEORADIUS g 15 37 200 km WITHCOORD\nGEORADIUS g 15 37 200 km WITHDIST\n"
                  "GEORADIUS_RO g 15 37 200 km WITHHASH WITHCOORD COUNT 1\n"
                  "GEORADIUSBYMEMBER g Palermo 200 km WITHCOORD\n"
                  "GEORADIUSBYMEMBER_RO g Palermo 200 km WITHCOORD WITHDIST DESC\n"
                  "GEOSEARCH g FROMLONLAT 15 37 BYBOX 400 400 km WITHCOORD WITHDIST\n"
                  "GEOSEARCH g FROMMEMBER Palermo BYRADIUS 1 m withcoord\n"
                  "GEOSEARCH nope FROMMEMBER Palermo BYRADIUS 1 m WITHCOORD\n"
                  "GEOSEARCHSTORE d g FROMLONLAT 15 37 BYRADIUS 200 km\n"
                  "EVAL \"redis.setresp(3) return redis.call('GEOPOS', 'g', 'Palermo', 'x')\" 0\n"
                  "EVAL \"redis.setresp(3) return redis.call('GEOSEARCH', 'g', 'FROMLONLAT', 15, "
                  "37, 'BYRADIUS', 200, 'km', 'WITHCOORD', 'WITHDIST')\" 0\n"
                  "PFADD h a b\nPFCOUNT h\nDEL g d h", 0, 0, 1, 0},
    {"resp3 lcs", "HELLO 3\nMSET a foo b fao\nLCS a b IDX\nLCS a b\nLCS a b LEN\n"
                  "LCS a b IDX MINMATCHLEN 1 WITHMATCHLEN\nDEL a b", 0, 0, 1, 0},
    {"resp3 transactions", "HELLO 3\nZADD z 1 e\nMULTI\nZSCORE z e\nHGETALL h\nGET nope\n"
                           "CLIENT GETNAME\nEXEC\nMULTI\nEXEC\nWATCH a\nSET a 2\nMULTI\nEXEC\n"
                           "DEL z a", 0, 0, 1, 0},
    {"resp3 pubsub", "HELLO 3\nSUBSCRIBE c1\nPING\nPING x\nGET nope\nCONFIG GET hz\n"
                     "PUBLISH c1 hi\nUNSUBSCRIBE\nUNSUBSCRIBE\n"
                     "PSUBSCRIBE p*\nPUNSUBSCRIBE p*\nPUNSUBSCRIBE", 0, 0, 1, 0},
    {"resp3 command and acl", "HELLO 3\nCOMMAND INFO get nosuch config|get\nCOMMAND DOCS get hello\n"
                              "COMMAND GETKEYSANDFLAGS set k v get\nCOMMAND COUNT x\n"
                              "ACL SETUSER r3 on >p ~a* (~b* +get)\nACL GETUSER r3\n"
                              "ACL GETUSER nosuch\nACL DRYRUN r3 get a\nACL DELUSER r3\nACL LOG 0",
     0, 0, 1, 0},
    /* ----- COMMAND describes the server's own commands; ACL users per connection ----- */
    {"command and the server's commands",
     "COMMAND COUNT\nCOMMAND INFO hello auth info config|get client|list wait role\n"
     "COMMAND DOCS hello lastsave config|set\nCOMMAND GETKEYS hello 3\n"
     "COMMAND GETKEYS config get x\nCOMMAND GETKEYS client nosuch\nCOMMAND GETKEYS wait 1 0",
     0, 0, 0, 0},
    {"acl users on a connection",
     "ACL SETUSER cu on >pw ~k* +get +set +acl|whoami +client|getname\nAUTH cu nope\n"
     "AUTH cu pw\nACL WHOAMI\nGET k1\nSET k1 v\nGET other\nINCR k1\nCLIENT GETNAME\n"
     "CLIENT ID\nCONFIG GET hz\nMULTI\nGET k1\nGET other\nEXEC\nHELLO 2 AUTH cu nope\n"
     "HELLO 2 AUTH nosuch x\nAUTH default anything\nACL WHOAMI\nDEL k1\n"
     "CLIENT KILL USER nosuch\nCLIENT KILL USER cu\nACL DELUSER cu",
     0, 0, 0, 0},
    {"acl deluser closes its connections",
     "ACL SETUSER du on nopass +@all ~*\nAUTH du x\nACL WHOAMI\nACL DELUSER du\nPING", 0, 1, 0,
     0},
    /* admin.c: the standalone answers of the cluster, replication and module commands */
    {"admin commands", "MODULE\nMODULE LIST\nMODULE HELP\nMODULE FOO\nMODULE LOAD /x.so\n"
                       "MODULE LOADEX /x.so\nMODULE UNLOAD x\nASKING\nREADONLY\nREADWRITE\n"
                       "ASKING x\nREPLICAOF NO ONE\nSLAVEOF no one\nREPLICAOF\nFAILOVER\n"
                       "FAILOVER ABORT\nFAILOVER TIMEOUT 0\nFAILOVER TIMEOUT x\nFAILOVER FOO\n"
                       "FAILOVER TO h x\nREPLCONF x\nREPLCONF listening-port 1\n"
                       "REPLCONF listening-port x\nREPLCONF foo bar\nREPLCONF rdb-only 2\n"
                       "REPLCONF capa eof capa psync2\nMIGRATE 127.0.0.1 1 nokey 0 100\n"
                       "MIGRATE 127.0.0.1 1 nokey 0 100 FOO\nMIGRATE 127.0.0.1 1 k 0 100 KEYS a\n"
                       "MIGRATE 127.0.0.1 1 \"\" 0 100 KEYS a b\nMIGRATE 127.0.0.1 1 k x 100\n"
                       "MIGRATE 127.0.0.1 1 k 0 100 AUTH\nRESTORE-ASKING k\n"
                       "LOLWUT\nLOLWUT VERSION x\nLOLWUT VERSION 7\nDEBUG HELP\nDEBUG SLEEP 0\n"
                       "MULTI\nSYNC\nEXEC", 0, 0, 0, 0},
    {"slowlog and latency", "SLOWLOG\nSLOWLOG HELP\nSLOWLOG FOO\nSLOWLOG GET -2\n"
                            "SLOWLOG GET x\nSLOWLOG GET 1 2\nSLOWLOG LEN x\n"
                            "CONFIG SET slowlog-log-slower-than 0\nSLOWLOG RESET\nSET a b\n"
                            "SLOWLOG LEN\nSLOWLOG GET 0\nCONFIG SET slowlog-max-len 1\n"
                            "SLOWLOG LEN\nCONFIG SET slowlog-log-slower-than -1\n"
                            "SLOWLOG RESET\nPING\nSLOWLOG LEN\n"
                            "CONFIG SET slowlog-log-slower-than 10000\n"
                            "CONFIG SET slowlog-max-len 128\n"
                            "LATENCY\nLATENCY HELP\nLATENCY HELP x\nLATENCY FOO\nLATENCY LATEST\n"
                            "LATENCY DOCTOR\nLATENCY HISTORY command\nLATENCY GRAPH command\n"
                            "LATENCY RESET\nLATENCY RESET a b\nLATENCY HISTOGRAM nosuch", 0, 0, 0, 0},
    /* tracking.c: a RESP3 client's own invalidations come after its reply */
    {"tracking resp3", "HELLO 3\nCLIENT TRACKINGINFO\nCLIENT GETREDIR\nCLIENT TRACKING on\n"
                       "GET tk\nMGET tk2 tk3\nSET tk v\nGET tk\nDEL tk2 tk3\nFLUSHDB\n"
                       "CLIENT TRACKINGINFO\nCLIENT GETREDIR\nCLIENT TRACKING on BCAST\n"
                       "CLIENT TRACKING on OPTIN\nCLIENT CACHING yes\nGET tk\nSET tk 1\nGET tk\n"
                       "SET tk 2\nCLIENT CACHING no\nCLIENT TRACKING on OPTOUT\n"
                       "CLIENT TRACKING off\nCLIENT TRACKING on OPTOUT NOLOOP\nGET tk\nSET tk 3\n"
                       "CLIENT CACHING no\nGET tk\nSET tk 4\nCLIENT TRACKINGINFO\n"
                       "CLIENT TRACKING off\nCLIENT CACHING yes\nCLIENT TRACKING on OPTIN OPTOUT\n"
                       "CLIENT TRACKING on BCAST OPTIN\nCLIENT TRACKING on PREFIX a\n"
                       "CLIENT TRACKING on BCAST PREFIX a PREFIX ab\n"
                       "CLIENT TRACKING on REDIRECT 99999\nCLIENT TRACKING on REDIRECT x\n"
                       "CLIENT TRACKING maybe\nCLIENT TRACKING on FOO\nCLIENT TRACKING\n"
                       "CLIENT CACHING maybe\nCLIENT TRACKINGINFO x\n"
                       "CLIENT TRACKING on BCAST PREFIX p PREFIX q\nCLIENT TRACKINGINFO\n"
                       "CLIENT TRACKING on BCAST PREFIX pq\nCLIENT TRACKING off\n"
                       "DEBUG PROTOCOL string", 0, 0, 1, 0},
    /* DEBUG (the harness's redis-server has enable-debug-command yes, the fake too) */
    {"debug", "DEBUG\nDEBUG HELP\nDEBUG JMAP\nDEBUG FOO bar\nDEBUG SLEEP 0\n"
              "DEBUG SET-ACTIVE-EXPIRE 1\nDEBUG QUICKLIST-PACKED-THRESHOLD 0\n"
              "DEBUG QUICKLIST-PACKED-THRESHOLD x\nDEBUG QUICKLIST-PACKED-THRESHOLD 5gb\n"
              "DEBUG QUICKLIST-PACKED-THRESHOLD 1mb\nDEBUG QUICKLIST-PACKED-THRESHOLD 0\n"
              "DEBUG CHANGE-REPL-ID\nDEBUG ERROR \"MYERR some text\"\nDEBUG LOG hello\n"
              "DEBUG OBJECT nokey\nDEBUG OBJECT\nDEBUG RELOAD FOO\n"
              "DEBUG REPLYBUFFER peak-reset-time 100\nDEBUG REPLYBUFFER peak-reset-time never\n"
              "DEBUG REPLYBUFFER PEAK-RESET-TIME reset\nDEBUG REPLYBUFFER peak-reset-time x\n"
              "DEBUG REPLYBUFFER resizing 0\nDEBUG REPLYBUFFER resizing 1\n"
              "DEBUG REPLYBUFFER nope 1\nDEBUG REPLYBUFFER resizing\n"
              "DEBUG PROTOCOL string\nDEBUG PROTOCOL integer\nDEBUG PROTOCOL double\n"
              "DEBUG PROTOCOL bignum\nDEBUG PROTOCOL null\nDEBUG PROTOCOL array\n"
              "DEBUG PROTOCOL set\nDEBUG PROTOCOL map\nDEBUG PROTOCOL attrib\n"
              "DEBUG PROTOCOL push\nDEBUG PROTOCOL verbatim\nDEBUG PROTOCOL true\n"
              "DEBUG PROTOCOL false\nDEBUG PROTOCOL nope\n"
              "FLUSHALL\nSET s 123\nSET r abcdefghijklmnopqrstuvwxyz0123456789abcdefghij\n"
              "RPUSH l a b c\nHSET h f v\nSADD st 1 2 3\nZADD z 1 a\nXADD x 1-1 f v\n"
              "SET gone v PX 1\nDEBUG SLEEP 0.01\nSELECT 5\nSET other 1\nSELECT 0\n"
              "DEBUG RELOAD\nDBSIZE\nGET s\nGET r\nLRANGE l 0 -1\nHGETALL h\n"
              "SMEMBERS st\nZRANGE z 0 -1 WITHSCORES\nXRANGE x - +\nEXISTS gone\n"
              "OBJECT ENCODING s\nOBJECT ENCODING r\nOBJECT ENCODING l\nOBJECT ENCODING h\n"
              "OBJECT ENCODING st\nOBJECT ENCODING z\nSELECT 5\nGET other\nSELECT 0\n"
              "DEBUG RELOAD NOSAVE\nDBSIZE\nFLUSHALL", 0, 0, 0, 0},
    /* DEBUG DIGEST / DIGEST-VALUE: Redis's signature, byte for byte, over every type and
     * encoding, a TTL, several databases, a stream with a group and a deleted entry, an
     * empty stream, a logically expired key (still counted) and the digest after a reload
     * (the same dataset, other encodings) */
    {"debug digest",
     "FLUSHALL\nDEBUG DIGEST\nDEBUG DIGEST x\nDEBUG DIGEST-VALUE\nDEBUG DIGEST-VALUE nokey\n"
     "SET s hello\nSET n 12345\nSET neg -7\nSET f 3.25\n"
     "SET big abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnop\nRPUSH l a b c 1 -2 \"\"\n"
     "SADD st a b c\nSADD si 1 2 3 -40\nZADD z 1 a 2.5 b -inf c +inf d 0 e -0 f 1e17 g 0.1 h\n"
     "HSET h f v g w e \"\"\nXADD x 1-1 f v\nXADD x 2-2 a b c d\nXADD x 3-0 a 1 c 2\n"
     "XGROUP CREATE x g 0\nXREADGROUP GROUP g c COUNT 1 STREAMS x >\nXDEL x 2-2\n"
     "XADD e 5-5 f v\nXTRIM e MAXLEN 0\nEXPIRE s 1000\nPEXPIRE z 100000\n"
     "CONFIG SET zset-max-listpack-entries 1\nCONFIG SET hash-max-listpack-entries 1\n"
     "CONFIG SET set-max-intset-entries 1\nZADD zs 1 a 2 b\nHSET hs f v g w\nSADD ss 1 2 3\n"
     "SELECT 3\nSET other 1\nRPUSH l x\nSELECT 0\nDEBUG DIGEST\n"
     "DEBUG DIGEST-VALUE s n neg f big l st si z h x e zs hs ss nokey other\n"
     "SELECT 3\nDEBUG DIGEST-VALUE other l s\nSELECT 0\n"
     "DEBUG RELOAD\nDEBUG DIGEST\nDEBUG DIGEST-VALUE zs hs ss z h st si x\n"
     "DEBUG SET-ACTIVE-EXPIRE 0\nSET gone v PX 1\nDEBUG SLEEP 0.01\nDEBUG DIGEST\n"
     "DEBUG DIGEST-VALUE gone\nEXISTS gone\nDEBUG DIGEST\nDEBUG SET-ACTIVE-EXPIRE 1\n"
     "CONFIG SET zset-max-listpack-entries 128\nCONFIG SET hash-max-listpack-entries 128\n"
     "CONFIG SET set-max-intset-entries 512\nFLUSHALL\nDEBUG DIGEST", 0, 0, 0, 0},
    /* DEBUG SET-ACTIVE-EXPIRE 0: expired keys stay in DBSIZE until something touches them */
    {"debug set-active-expire",
     "FLUSHALL\nDEBUG SET-ACTIVE-EXPIRE 0\nPSETEX a 1 v\nPSETEX b 1 v\nSET c v\n"
     "DEBUG SLEEP 0.01\nDBSIZE\nGET a\nDBSIZE\nDEBUG SET-ACTIVE-EXPIRE 1\n"
     "FLUSHALL", 0, 0, 0, 0},
    /* DEBUG from scripts: refused until DEBUG SET-DISABLE-DENY-SCRIPTS 1, then each
     * PROTOCOL type as the script reads it in RESP2 and RESP3 (an attribute dropped), back
     * to a RESP2 and a RESP3 client, and SLEEP, whose time the script does not see */
#define SCRIPT_DEBUG_TYPES(resp) \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','string')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','integer')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','double')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','bignum')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','null')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','array')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','set')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','map')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','verbatim')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','true')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','false')\" 0\n" \
    "EVAL \"redis.setresp(" resp ") return redis.call('debug','protocol','nope')\" 0\n"
    {"debug from scripts",
     "EVAL \"return redis.call('debug','protocol','map')\" 0\n"
     "DEBUG SET-DISABLE-DENY-SCRIPTS 1\n" SCRIPT_DEBUG_TYPES("2") SCRIPT_DEBUG_TYPES("3")
     "EVAL \"redis.setresp(3) return redis.call('debug','protocol','attrib')\" 0\n"
     "EVAL \"redis.call('set','k','v','px',1) redis.call('debug','sleep',0.01) "
     "return redis.call('exists','k')\" 0\nEXISTS k", 0, 0, 0, 0},
    {"debug from scripts resp3",
     "HELLO 3\n" SCRIPT_DEBUG_TYPES("2") SCRIPT_DEBUG_TYPES("3")
     "EVAL \"redis.setresp(3) return redis.call('debug','protocol','attrib')\" 0\n"
     "DEBUG SET-DISABLE-DENY-SCRIPTS 0\n"
     "EVAL \"return redis.call('debug','protocol','map')\" 0", 0, 0, 1, 0},
#undef SCRIPT_DEBUG_TYPES
    {"debug resp3", "HELLO 3\nDEBUG PROTOCOL string\nDEBUG PROTOCOL integer\n"
                    "DEBUG PROTOCOL double\nDEBUG PROTOCOL bignum\nDEBUG PROTOCOL null\n"
                    "DEBUG PROTOCOL array\nDEBUG PROTOCOL set\nDEBUG PROTOCOL map\n"
                    "DEBUG PROTOCOL attrib\nDEBUG PROTOCOL push\nDEBUG PROTOCOL verbatim\n"
                    "DEBUG PROTOCOL true\nDEBUG PROTOCOL false", 0, 0, 1, 0},
    {"tracking resp2", "CLIENT HELP\nCLIENT TRACKING on\nGET tk\nSET tk v\nCLIENT TRACKINGINFO\n"
                       "CLIENT TRACKING off\nCLIENT TRACKINGINFO", 0, 0, 0, 0},
};

/* Sends the case (and the sentinel) and collects the replies' bytes. */
static void run_case(frsh_conn *c, const diff_case *dc, rh_buf *all)
{
    rh_buf b = {0};
    if (dc->raw) {
        rh_buf_append(&b, dc->text, dc->rawlen ? dc->rawlen : strlen(dc->text));
    } else {
        for (const char *p = dc->text; *p;) {
            size_t k = strcspn(p, "\n");
            rh_buf_append(&b, p, k);
            rh_buf_append(&b, "\r\n", 2);
            p += k;
            if (*p) p++;
        }
    }
    if (!dc->until_eof) rh_buf_printf(&b, "ECHO " SENTINEL "\r\n");
    rh_buf_reset(all);
    frsh_send_raw(c, b.data, b.len);
    rh_buf_free(&b);
    if (dc->until_eof == 1) {
        frsh_expect_eof(c, all, FRSH_TIMEOUT_MS);
        return;
    }
    rh_buf r = {0};
    if (dc->until_eof == 2) {
        while (frsh_read(c, &r, 300) == 0) {
            rh_buf_append(all, r.data, r.len);
            rh_buf_append(all, "\n", 1);
        }
        rh_buf_free(&r);
        return;
    }
    const char *end = "$16\r\n" SENTINEL "\r\n";
    for (int i = 0;; i++) {
        frsh_expect_reply(c, &r);
        if (r.len == strlen(end) && memcmp(r.data, end, r.len) == 0) break;
        if (i == 0 && dc->skip_first) continue;
        rh_buf_append(all, r.data, r.len);
        rh_buf_append(all, "\n", 1); /* reply boundaries count too */
    }
    rh_buf_free(&r);
}

static void test_same_bytes(void **state)
{
    (void)state;
    rh_server *real = rh_start(&(rh_options){.quiet = 1});
    assert_non_null(real);
    /* DEBUG as the harness's redis-server has it */
    const char *const extra[] = {"--clock", "wall", "--enable-debug-command", "yes", NULL};
    frsh_server *fake = frsh_start(extra);
    assert_non_null(fake);
    rh_buf a = {0}, b = {0};
    int failed = 0;
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        const diff_case *dc = &cases[i];
        frsh_conn *rc = frsh_connect_path(real->socket);
        frsh_conn *fc = frsh_connect(fake);
        assert_non_null(rc);
        print_message("case: %s\n", dc->name);
        run_case(rc, dc, &a);
        run_case(fc, dc, &b);
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
            failed++;
            size_t at = 0;
            while (at < a.len && at < b.len && a.data[at] == b.data[at]) at++;
            size_t from = at > 120 ? at - 120 : 0;
            print_error("case \"%s\" differs at byte %zu\n", dc->name, at);
            print_error("  redis-server:     %s\n", frsh_show(a.data + from, (a.len - from) > 400 ? 400 : a.len - from));
            print_error("  fakeredis-server: %s\n", frsh_show(b.data + from, (b.len - from) > 400 ? 400 : b.len - from));
        }
        frsh_close(rc);
        frsh_close(fc);
    }
    rh_buf_free(&a);
    rh_buf_free(&b);
    frsh_stop(fake);
    rh_stop(real);
    assert_int_equal(failed, 0);
}

/* With a password set on both: the errors before AUTH, and the limits before AUTH. */
static void test_same_bytes_requirepass(void **state)
{
    (void)state;
    rh_server *real = rh_start(&(rh_options){.quiet = 1});
    assert_non_null(real);
    const char *const extra[] = {"--clock", "wall", "--requirepass", "pw", NULL};
    frsh_server *fake = frsh_start(extra);
    assert_non_null(fake);
    rh_buf a = {0}, b = {0};
    frsh_conn *ctl = frsh_connect_path(real->socket);
    frsh_call(ctl, &a, "CONFIG", "SET", "requirepass", "pw", NULL);
    frsh_close(ctl);
    static const diff_case pcases[] = {
        {"noauth", "PING\nGET\nNOSUCH x\nCLIENT FOO\nCONFIG GET hz\nAUTH x\nAUTH x y\n"
                   "AUTH default nope\nHELLO 3\nHELLO 2 AUTH default nope\nAUTH pw\nPING\n"
                   "AUTH nope\nPING\nQUIT", 0, 1, 0, 0},
        {"unauthenticated multibulk", "*11\r\n", 1, 1, 0, 0},
        {"unauthenticated bulk", "*1\r\n$16385\r\n", 1, 1, 0, 0},
        {"authenticated big multibulk", "AUTH pw\r\n*11\r\n$4\r\nECHO\r\n", 1, 0, 0, 0},
        {"acl users with requirepass",
         "AUTH pw\nACL SETUSER ru on >rp +@all ~*\nAUTH ru rp\nACL WHOAMI\nAUTH ru bad\n"
         "ACL WHOAMI\nACL SETUSER default off\nAUTH pw\nACL SETUSER default on\nAUTH pw\n"
         "ACL DELUSER ru\nQUIT", 0, 1, 0, 0},
    };
    int failed = 0;
    for (size_t i = 0; i < sizeof(pcases) / sizeof(pcases[0]); i++) {
        const diff_case *dc = &pcases[i];
        frsh_conn *rc = frsh_connect_path(real->socket);
        frsh_conn *fc = frsh_connect(fake);
        if (i == 3) {
            /* the sentinel ECHO completes the 11-argument ECHO: answer its arity error */
            frsh_send_raw(rc, dc->text, strlen(dc->text));
            frsh_send_raw(fc, dc->text, strlen(dc->text));
            for (int k = 0; k < 10; k++) {
                frsh_send_raw(rc, "$1\r\nx\r\n", 7);
                frsh_send_raw(fc, "$1\r\nx\r\n", 7);
            }
            rh_buf_reset(&a);
            rh_buf_reset(&b);
            rh_buf r = {0};
            for (int k = 0; k < 2; k++) {
                frsh_expect_reply(rc, &r);
                rh_buf_append(&a, r.data, r.len);
                frsh_expect_reply(fc, &r);
                rh_buf_append(&b, r.data, r.len);
            }
            rh_buf_free(&r);
        } else {
            run_case(rc, dc, &a);
            run_case(fc, dc, &b);
        }
        if (a.len != b.len || memcmp(a.data, b.data, a.len) != 0) {
            failed++;
            print_error("case \"%s\" differs\n  redis-server:     %s\n", dc->name,
                        frsh_show(a.data, a.len));
            print_error("  fakeredis-server: %s\n", frsh_show(b.data, b.len));
        }
        frsh_close(rc);
        frsh_close(fc);
    }
    rh_buf_free(&a);
    rh_buf_free(&b);
    frsh_stop(fake);
    rh_stop(real);
    assert_int_equal(failed, 0);
}

/* ----- INFO statistics after the same commands --------------------------------------- */

/* Sends one inline line (no reply read). */
static void send_line(frsh_conn *c, const char *line)
{
    rh_buf b = {0};
    rh_buf_printf(&b, "%s\r\n", line);
    frsh_send_raw(c, b.data, b.len);
    rh_buf_free(&b);
}

/* Runs inline lines on c, one reply each (replies are compared by test_same_bytes). */
static void run_lines(frsh_conn *c, const char *lines)
{
    rh_buf r = {0};
    for (const char *p = lines; *p;) {
        size_t k = strcspn(p, "\n");
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)k, p);
        send_line(c, line);
        frsh_expect_reply(c, &r);
        p += k;
        if (*p) p++;
    }
    rh_buf_free(&r);
}

/* Waits until the server reports n blocked clients. */
static void wait_blocked(frsh_conn *c, int n)
{
    rh_buf r = {0};
    char want[32];
    snprintf(want, sizeof(want), "blocked_clients:%d\r\n", n);
    for (int i = 0; i < 500; i++) {
        frsh_call(c, &r, "INFO", "clients", NULL);
        if (strstr(r.data, want)) break;
        frsh_sleep_ms(10);
    }
    assert_non_null(strstr(r.data, want));
    rh_buf_free(&r);
}

/* The text of INFO section as a bulk reply's payload, with what cannot agree removed:
 * usec= and usec_per_call= in commandstats, the values of latencystats' percentiles. */
static void info_deterministic(frsh_conn *c, const char *section, rh_buf *out)
{
    rh_buf r = {0};
    frsh_call(c, &r, "INFO", section, NULL);
    const char *body = strstr(r.data, "\r\n");
    assert_non_null(body);
    rh_buf_reset(out);
    for (const char *p = body + 2; *p;) {
        size_t k = strcspn(p, "\r");
        char line[512];
        snprintf(line, sizeof(line), "%.*s", (int)k, p);
        if (!strncmp(line, "cmdstat_info:", 13)) {
            line[0] = '\0'; /* wait_blocked polls INFO as often as it takes */
        } else if (!strncmp(line, "cmdstat_", 8)) {
            char *u = strstr(line, ",usec=");
            char *rej = strstr(line, ",rejected_calls=");
            if (u && rej) memmove(u, rej, strlen(rej) + 1);
        } else if (!strncmp(line, "latency_percentiles_usec_", 25)) {
            /* keep the name and the percentile names: p50=1.003 -> p50 */
            char *q = line;
            while ((q = strchr(q, '=')) != NULL) {
                char *end = q + strcspn(q, ",");
                memmove(q, end, strlen(end) + 1);
            }
        }
        if (line[0]) rh_buf_printf(out, "%s\n", line);
        p += k;
        while (*p == '\r' || *p == '\n') p++;
    }
    rh_buf_free(&r);
}

/* The section headers INFO answers for args (one inline line of arguments). */
static void info_headers(frsh_conn *c, const char *args, rh_buf *out)
{
    rh_buf r = {0};
    char line[128];
    snprintf(line, sizeof(line), "INFO %s", args);
    send_line(c, line);
    frsh_expect_reply(c, &r);
    rh_buf_printf(out, "[%s]", args);
    for (const char *p = r.data; (p = strstr(p, "# ")) != NULL; p += 2) {
        if (p != r.data && p[-1] != '\n' && p[-1] != '\r' && (p - r.data) > 8) continue;
        size_t k = strcspn(p, "\r");
        rh_buf_printf(out, " %.*s", (int)k, p);
    }
    rh_buf_printf(out, "\n");
    rh_buf_free(&r);
}

/* The same commands on both servers, then INFO commandstats (calls, rejected_calls and
 * failed_calls of every command), errorstats and total_error_replies must agree exactly,
 * latencystats in which commands it lists, and INFO's choice of sections.  Covers
 * errors by prefix, rejections (arity, a bare container, no-multi, subscribed mode, OOM),
 * failures inside and outside MULTI/EXEC, the server's own commands (AUTH, CONFIG,
 * CLIENT, SHUTDOWN), and blocked calls failed by XGROUP DESTROY and CLIENT UNBLOCK. */
static void run_stats_script(frsh_conn *a, frsh_conn *b, rh_buf *out)
{
    rh_buf r = {0};
    run_lines(a, "CONFIG RESETSTAT\nFLUSHALL\nSET k v\nLPUSH k x\nGET\nNOSUCH a\nOBJECT\n"
                 "OBJECT NOSUCH k\nCONFIG\nCONFIG NOSUCH\nMULTI\nSET x\nSAVE\nSHUTDOWN\n"
                 "EXEC\nMULTI\nSET a 1\nLPUSH k 1\nAUTH x\nCLIENT GETNAME\nEXEC\nEXEC\n"
                 "AUTH k\nCONFIG SET latency-tracking-info-percentiles \"10 a\"\n"
                 "SHUTDOWN ABORT\nSHUTDOWN FOO\nXADD s 1-1 f v\nXGROUP CREATECONSUMER s g c\n"
                 "XGROUP CREATE s g $\nINCR k\nDISCARD\nWATCH k\nUNWATCH");
    /* a reader failed by XGROUP DESTROY, a BLPOP by CLIENT UNBLOCK ... ERROR */
    send_line(b, "XREADGROUP GROUP g alice BLOCK 0 STREAMS s >");
    wait_blocked(a, 1);
    run_lines(a, "XGROUP DESTROY s g");
    frsh_expect_reply(b, &r);
    frsh_call(b, &r, "CLIENT", "ID", NULL);
    char unblock[64];
    snprintf(unblock, sizeof(unblock), "CLIENT UNBLOCK %.*s ERROR", (int)(r.len - 3), r.data + 1);
    send_line(b, "BLPOP q 0");
    wait_blocked(a, 1);
    run_lines(a, unblock);
    frsh_expect_reply(b, &r);
    /* served with data: a call that did not fail */
    send_line(b, "BLPOP q 0");
    wait_blocked(a, 1);
    run_lines(a, "RPUSH q 1");
    frsh_expect_reply(b, &r);
    /* subscribed mode and OOM refuse before running */
    run_lines(b, "SUBSCRIBE ch\nGET k\nPING\nUNSUBSCRIBE");
    run_lines(a, "CONFIG SET maxmemory 1\nSET a b\nGET k\nMULTI\nGET k\nSHUTDOWN\nMULTI\n"
                 "EXEC\nCONFIG SET maxmemory 0");
    /* a script's commands, refused in it or failing, and its own errors: each counted
     * once (Redis's afterErrorReply and ERR_REPLY_FLAG_NO_STATS_UPDATE) */
    run_lines(a, "CONFIG SET maxmemory 1\nEVAL \"return redis.call('set','x','y')\" 1 x\n"
                 "EVAL \"local t = redis.pcall('set','x','y') return 1\" 1 x\n"
                 "EVAL \"return redis.pcall('set','x','y')\" 1 x\n"
                 "EVAL \"#!lua\\nreturn 1\" 0\nCONFIG SET maxmemory 0\n"
                 "EVAL \"return redis.call('select',99)\" 0\n"
                 "EVAL \"local t = redis.pcall('select',99) return 1\" 0\n"
                 "EVAL \"return redis.pcall('select',99)\" 0\n"
                 "EVAL \"return redis.call('nosuch')\" 0\nEVAL \"return redis.call('get')\" 0\n"
                 "EVAL \"return redis.call('multi')\" 0\n"
                 "EVAL \"local t = redis.pcall('get') return 1\" 0\n"
                 "EVAL \"return {err='FOO bar'}\" 0\nEVAL \"return redis.error_reply('X y')\" 0\n"
                 "EVAL \"error('boom')\" 0\nSET x abc\nEVAL \"redis.call('incr','x')\" 0\n"
                 "EVAL \"return {1, redis.pcall('incr','x')}\" 0\n"
                 "EVAL_RO \"return redis.call('set','x','y')\" 1 x\n"
                 "EVAL \"return redis.call('lpush','x','y')\" 1 x\n"
                 "EVAL \"return redis.call('xread','block','0','streams','s','$')\" 0\n"
                 "EVAL \"return redis.pcall('ping',{})\" 0");
    rh_buf_reset(out);
    rh_buf t = {0};
    info_deterministic(a, "commandstats", &t);
    /* the dict order of Redis's commands is its own: compare the lines sorted */
    size_t n = 0;
    char *lines[512];
    for (char *p = t.data; p && *p && n < 512;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        lines[n++] = p;
        p = nl ? nl + 1 : NULL;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
            char *tmp = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = tmp;
        }
    for (size_t i = 0; i < n; i++) rh_buf_printf(out, "%s\n", lines[i]);
    info_deterministic(a, "errorstats", &t);
    rh_buf_append(out, t.data, t.len);
    frsh_call(a, &r, "INFO", "everything", NULL);
    const char *te = strstr(r.data, "total_error_replies:");
    assert_non_null(te);
    rh_buf_printf(out, "%.*s\n", (int)strcspn(te, "\r"), te);
    /* every call() but INFO's (wait_blocked polls it as often as it takes) */
    const char *tc = strstr(r.data, "total_commands_processed:");
    const char *ic = strstr(r.data, "cmdstat_info:calls=");
    assert_non_null(tc);
    assert_non_null(ic);
    rh_buf_printf(out, "commands processed but INFO: %lld\n",
                  atoll(tc + strlen("total_commands_processed:")) -
                      atoll(ic + strlen("cmdstat_info:calls=")));
    info_deterministic(a, "latencystats", &t);
    /* listed in the dict's order too: sorted */
    n = 0;
    for (char *p = t.data; p && *p && n < 512;) {
        char *nl = strchr(p, '\n');
        if (nl) *nl = '\0';
        lines[n++] = p;
        p = nl ? nl + 1 : NULL;
    }
    for (size_t i = 1; i < n; i++)
        for (size_t j = i; j > 0 && strcmp(lines[j - 1], lines[j]) > 0; j--) {
            char *tmp = lines[j];
            lines[j] = lines[j - 1];
            lines[j - 1] = tmp;
        }
    for (size_t i = 0; i < n; i++) rh_buf_printf(out, "%s\n", lines[i]);
    run_lines(a, "CONFIG SET latency-tracking no");
    info_deterministic(a, "latencystats", &t);
    rh_buf_printf(out, "tracking off: %s\n", t.data ? t.data : "");
    run_lines(a, "CONFIG SET latency-tracking yes\nCONFIG RESETSTAT");
    info_deterministic(a, "errorstats", &t);
    rh_buf_printf(out, "after reset: %s\n", t.data ? t.data : "");
    static const char *const variants[] = {"", "default", "all", "everything", "commandstats",
                                           "COMMANDSTATS errorstats", "cpu sentinel",
                                           "modules", "module_list", "latencystats keyspace",
                                           "server all", "nosuch"};
    for (size_t i = 0; i < sizeof(variants) / sizeof(variants[0]); i++)
        info_headers(a, variants[i], out);
    rh_buf_free(&t);
    rh_buf_free(&r);
}

static void test_same_stats(void **state)
{
    (void)state;
    rh_server *real = rh_start(&(rh_options){.quiet = 1});
    assert_non_null(real);
    const char *const extra[] = {"--clock", "wall", NULL};
    frsh_server *fake = frsh_start(extra);
    assert_non_null(fake);
    rh_buf want = {0}, got = {0};
    frsh_conn *ra = frsh_connect_path(real->socket), *rb = frsh_connect_path(real->socket);
    frsh_conn *fa = frsh_connect(fake), *fb = frsh_connect(fake);
    assert_non_null(ra);
    assert_non_null(rb);
    run_stats_script(ra, rb, &want);
    run_stats_script(fa, fb, &got);
    if (getenv("FRS_SHOW_STATS")) fputs(want.data, stderr);
    if (want.len != got.len || memcmp(want.data, got.data, want.len) != 0) {
        /* line by line: '-' redis-server only, '+' fakeredis-server only */
        print_error("INFO statistics differ:\n");
        for (int side = 0; side < 2; side++) {
            rh_buf *x = side ? &got : &want, *y = side ? &want : &got;
            for (char *p = x->data; p && *p;) {
                size_t k = strcspn(p, "\n");
                char line[600];
                snprintf(line, sizeof(line), "\n%.*s\n", (int)k, p);
                char head[600];
                snprintf(head, sizeof(head), "%.*s\n", (int)k, p);
                if (!strstr(y->data, line) && strncmp(y->data, head, strlen(head)) != 0)
                    print_error("%c %s", side ? '+' : '-', head);
                p += k;
                if (*p) p++;
            }
        }
        fail();
    }
    frsh_close(ra);
    frsh_close(rb);
    frsh_close(fa);
    frsh_close(fb);
    rh_buf_free(&want);
    rh_buf_free(&got);
    frsh_stop(fake);
    rh_stop(real);
}

/* ----- Several connections: MONITOR and client-side caching --------------------------- */

/* One step: connection conn sends line (inline); "$3" in it is replaced by connection 3's
 * CLIENT ID on that server. */
typedef struct multi_step {
    int conn;
    const char *line;
} multi_step;

static const multi_step multi_steps[] = {
    {0, "MONITOR"},
    {1, "SET foo bar"}, {1, "GET foo"}, {1, "MULTI"}, {1, "SET x 1"}, {1, "EXEC"},
    {1, "EVAL \"redis.call('set',KEYS[1],ARGV[1]) return redis.call('get',KEYS[1])\" 1 k v"},
    {1, "EVALSHA 0000000000000000000000000000000000000000 0"},
    {1, "AUTH a b"}, {1, "HELLO 2 AUTH x y"}, {1, "CONFIG GET hz"}, {1, "SLOWLOG LEN"},
    {1, "MULTI"}, {1, "FOO"}, {1, "EXEC"}, {1, "MIGRATE 127.0.0.1 1 nokey 9 5000 AUTH2 u p"},
    {1, "SELECT 3"}, {1, "ECHO \"a\\x00b\\n\\\"\\\\\\xff\""}, {1, "SELECT 0"},
    {1, "CLIENT SETNAME n"}, {1, "LPUSH l a"}, {1, "GET nope"},
    {0, "GET foo"}, {0, "PING"}, {0, "MULTI"}, {0, "MONITOR"}, {0, "EXEC"},
    {0, "MONITOR"}, {0, "SUBSCRIBE c"}, {0, "RESET"}, {1, "PING"},
    /* tracking, RESP3, its own connection 2 */
    {2, "CLIENT TRACKING on"}, {2, "GET t1"}, {2, "MGET t2 t3"},
    {1, "SET t1 x"}, {1, "DEL t2"}, {1, "SET t3 z"}, {1, "SET t1 y"},
    {2, "GET t1"}, {2, "SET t1 mine"}, {2, "GET t1"}, {1, "FLUSHALL"},
    {2, "EVAL \"return redis.call('get',KEYS[1])\" 1 t4"}, {1, "SET t4 1"},
    {2, "CLIENT TRACKING off"}, {2, "CLIENT TRACKING on BCAST PREFIX p: PREFIX q NOLOOP"},
    {1, "SET p:1 a"}, {1, "SET q2 b"}, {1, "SET r 1"}, {1, "MSET p:0 a p:1 b"},
    {2, "SET p:9 x"}, {2, "CLIENT TRACKINGINFO"},
    /* RESP2 through a redirect to a subscribed connection 3 */
    {3, "SUBSCRIBE __redis__:invalidate"},
    {1, "CLIENT TRACKING on REDIRECT $3"}, {1, "GET zz"},
    {2, "SET zz 1"}, {1, "FLUSHDB"},
    {1, "CLIENT TRACKING on OPTIN"}, {1, "CLIENT CACHING yes"}, {1, "GET o1"}, {1, "GET o2"},
    {2, "SET o1 1"}, {2, "SET o2 2"},
    {1, "CLIENT TRACKING off"}, {1, "CLIENT TRACKING on OPTOUT"}, {1, "CLIENT CACHING no"},
    {1, "GET o3"}, {1, "GET o4"}, {2, "MSET o3 1 o4 2"},
    {3, "QUIT"}, {1, "GET zz"}, {2, "SET zz 2"}, {1, "CLIENT TRACKINGINFO"},
};

/* MONITOR lines carry a time and a peer: "+T [db A]" keeps what is compared. */
static void mask_monitor(const rh_buf *in, rh_buf *out)
{
    size_t i = 0;
    while (i < in->len) {
        const char *p = in->data + i;
        const char *nl = memchr(p, '\n', in->len - i);
        size_t n = nl ? (size_t)(nl - p) + 1 : in->len - i;
        size_t k = 1;
        if (p[0] == '+' && n > 3 && p[1] >= '0' && p[1] <= '9') {
            while (k < n && ((p[k] >= '0' && p[k] <= '9') || p[k] == '.')) k++;
            const char *br = memchr(p, '[', n), *sp = br ? memchr(br, ' ', n - (size_t)(br - p)) : NULL;
            const char *cl = sp ? memchr(sp, ']', n - (size_t)(sp - p)) : NULL;
            if (br && sp && cl) {
                rh_buf_append(out, "+T ", 3);
                rh_buf_append(out, br, (size_t)(sp - br) + 1);
                if (cl - sp == 4 && memcmp(sp + 1, "lua", 3) == 0) rh_buf_append(out, "lua", 3);
                else rh_buf_append(out, "A", 1);
                rh_buf_append(out, cl, n - (size_t)(cl - p));
                i += n;
                continue;
            }
        }
        rh_buf_append(out, p, n);
        i += n;
    }
}

/* Runs the steps on one server; each connection's bytes go to out[conn] (masked). */
static void run_multi(const char *path, frsh_server *fake, rh_buf out[4])
{
    frsh_conn *c[4];
    rh_buf raw[4] = {{0}}, one = {0};
    for (int i = 0; i < 4; i++) {
        c[i] = fake ? frsh_connect(fake) : frsh_connect_path(path);
        assert_non_null(c[i]);
    }
    frsh_send(c[2], "HELLO", "3", NULL);
    frsh_expect_reply(c[2], &one); /* its id differs */
    char id3[32] = "";
    const char *r = frsh_call(c[3], &one, "CLIENT", "ID", NULL);
    snprintf(id3, sizeof(id3), "%.*s", (int)strcspn(r + 1, "\r"), r + 1);
    frsh_call(c[1], &one, "FLUSHALL", NULL);
    for (size_t s = 0; s < sizeof(multi_steps) / sizeof(multi_steps[0]); s++) {
        const multi_step *st = &multi_steps[s];
        rh_buf line = {0};
        const char *d = strstr(st->line, "$3");
        if (d) {
            rh_buf_append(&line, st->line, (size_t)(d - st->line));
            rh_buf_append(&line, id3, strlen(id3));
            rh_buf_append(&line, d + 2, strlen(d + 2));
        } else {
            rh_buf_append(&line, st->line, strlen(st->line));
        }
        rh_buf_append(&line, "\r\n", 2);
        frsh_send_raw(c[st->conn], line.data, line.len);
        rh_buf_free(&line);
        for (int i = 0; i < 4; i++) {
            rh_buf_printf(&raw[i], "<%zu>\n", s);
            while (frsh_read(c[i], &one, 40) == 0) rh_buf_append(&raw[i], one.data, one.len);
        }
    }
    for (int i = 0; i < 4; i++) {
        mask_monitor(&raw[i], &out[i]);
        rh_buf_free(&raw[i]);
        frsh_close(c[i]);
    }
    rh_buf_free(&one);
}

static void test_same_bytes_connections(void **state)
{
    (void)state;
    rh_server *real = rh_start(&(rh_options){.quiet = 1});
    assert_non_null(real);
    const char *const extra[] = {"--clock", "wall", NULL};
    frsh_server *fake = frsh_start(extra);
    assert_non_null(fake);
    rh_buf a[4] = {{0}}, b[4] = {{0}};
    run_multi(real->socket, NULL, a);
    run_multi(NULL, fake, b);
    int failed = 0;
    for (int i = 0; i < 4; i++) {
        if (a[i].len == b[i].len && memcmp(a[i].data, b[i].data, a[i].len) == 0) continue;
        failed++;
        size_t at = 0;
        while (at < a[i].len && at < b[i].len && a[i].data[at] == b[i].data[at]) at++;
        size_t from = at > 160 ? at - 160 : 0;
        print_error("connection %d differs at byte %zu\n", i, at);
        print_error("  redis-server:     %s\n", frsh_show(a[i].data + from, (a[i].len - from) > 500 ? 500 : a[i].len - from));
        print_error("  fakeredis-server: %s\n", frsh_show(b[i].data + from, (b[i].len - from) > 500 ? 500 : b[i].len - from));
    }
    for (int i = 0; i < 4; i++) {
        rh_buf_free(&a[i]);
        rh_buf_free(&b[i]);
    }
    frsh_stop(fake);
    rh_stop(real);
    assert_int_equal(failed, 0);
}

/* The INFO line `field` (up to its CR) of the section, as a C string in buf. */
static const char *info_line(frsh_conn *c, const char *section, const char *field, char *buf,
                             size_t cap)
{
    rh_buf r = {0};
    const char *info = frsh_call(c, &r, "INFO", section, NULL);
    const char *f = strstr(info, field);
    snprintf(buf, cap, "%.*s", f ? (int)strcspn(f, "\r") : 0, f ? f : "");
    rh_buf_free(&r);
    return buf;
}

/* Tracking's INFO figures and tracking-table-max-keys, the same on both servers: three
 * keys read by a RESP3 tracking client, the limit set to 1 -- two invalidations (which
 * keys is Redis's random walk: only how many is compared), one key left. */
static void run_tracking_table(frsh_conn *c, frsh_conn *w, rh_buf *out)
{
    rh_buf r = {0};
    char line[128];
    frsh_call(c, &r, "HELLO", "3", NULL);
    frsh_call(c, &r, "CLIENT", "TRACKING", "on", NULL);
    frsh_call(w, &r, "MSET", "k1", "1", "k2", "2", "k3", "3", NULL);
    frsh_call(c, &r, "MGET", "k1", "k2", "k3", NULL);
    rh_buf_printf(out, "%s\n", info_line(w, "clients", "tracking_clients:", line, sizeof(line)));
    rh_buf_printf(out, "%s\n", info_line(w, "stats", "tracking_total_keys:", line, sizeof(line)));
    rh_buf_printf(out, "%s\n", info_line(w, "stats", "tracking_total_items:", line, sizeof(line)));
    rh_buf_printf(out, "%s\n", info_line(w, "stats", "tracking_total_prefixes:", line, sizeof(line)));
    rh_buf_printf(out, "%s", frsh_call(w, &r, "CONFIG", "SET", "tracking-table-max-keys", "1", NULL));
    int pushes = 0;
    while (frsh_read(c, &r, 300) == 0) pushes += r.len > 0 && r.data[0] == '>';
    rh_buf_printf(out, "invalidations: %d\n", pushes);
    rh_buf_printf(out, "%s\n", info_line(w, "stats", "tracking_total_keys:", line, sizeof(line)));
    frsh_call(w, &r, "CONFIG", "SET", "tracking-table-max-keys", "1000000", NULL);
    frsh_call(c, &r, "CLIENT", "TRACKING", "off", NULL);
    rh_buf_printf(out, "%s\n", info_line(w, "clients", "tracking_clients:", line, sizeof(line)));
    rh_buf_free(&r);
}

static void test_tracking_table(void **state)
{
    (void)state;
    rh_server *real = rh_start(&(rh_options){.quiet = 1});
    assert_non_null(real);
    const char *const extra[] = {"--clock", "wall", NULL};
    frsh_server *fake = frsh_start(extra);
    assert_non_null(fake);
    rh_buf a = {0}, b = {0};
    frsh_conn *c = frsh_connect_path(real->socket), *w = frsh_connect_path(real->socket);
    run_tracking_table(c, w, &a);
    frsh_close(c);
    frsh_close(w);
    c = frsh_connect(fake);
    w = frsh_connect(fake);
    run_tracking_table(c, w, &b);
    frsh_close(c);
    frsh_close(w);
    rh_buf_append(&a, "", 1);
    rh_buf_append(&b, "", 1);
    assert_non_null(strstr(a.data, "invalidations: 2\n")); /* the script is about that */
    frsh_same_text(b.data, a.data);
    rh_buf_free(&a);
    rh_buf_free(&b);
    frsh_stop(fake);
    rh_stop(real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_same_bytes),
        cmocka_unit_test(test_same_bytes_requirepass),
        cmocka_unit_test(test_same_stats),
        cmocka_unit_test(test_same_bytes_connections),
        cmocka_unit_test(test_tracking_table),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
