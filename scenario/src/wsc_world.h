/* wsc_world.h -- what a scenario that drives consumer processes runs besides its
 * simulation (docs/consumer.md): the server the processes talk to, the processes, and the
 * waits.  Used by the runner (run.c); below it, it calls nothing of it.
 *
 * The server.  On the fake (the default), the world serves the simulation's own fake over
 * RESP from this process, as fakeredis-server does (frs_core, embedded): on a unix socket
 * in the run's directory and on a loopback port of its own (port 0: the kernel's choice).
 * It is one thread: the world runs the server's loop while it waits (wsc_world_wait,
 * wsc_world_stop) and for a moment after each statement (wsc_world_pump), and the
 * scenario's own commands (setup, produce, check) run in-process on the same fake.  The
 * clock is the fake's virtual clock; it moves with `advance`, and by itself to the next
 * deadline when every client has been quiet for WSC_AUTO_ADVANCE_MS.  On a real server
 * (`wsim run --backend URL`) the processes reach it through a recording proxy the world
 * turns (wsr_proxy.h), on a unix socket and a loopback port of its own.
 *
 * The processes get, besides wsim's own environment: REDIS_URL
 * (redis://127.0.0.1:PORT: the served fake's, or the proxy's), REDIS_HOST and REDIS_PORT (for a TCP
 * server), REDIS_SOCKET (for a unix socket), WSIM_CONSUMER (the consumer's name in the
 * file) and WSIM_INCARNATION (1 for the first start, 2 for the next, ...).  Their output
 * goes to RUN_DIR/NAME.log, which a failing run's report quotes.
 *
 * Functions that can fail return 0, or 1 with why[0..cap) saying what went wrong in one
 * sentence (the consumer's failures: it could not start, exited, did not settle in time,
 * did not stop on SIGTERM), or WS_ENOMEM. */
#ifndef WSC_WORLD_H
#define WSC_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "wsc_int.h"
#include "wsr.h"

typedef struct wsc_world wsc_world;

/* The quiet interval: a consumer is settled once nothing is unread or pending and every
 * connection of its has either been blocked in a read or sent nothing for this long. */
#define WSC_QUIET_MS 10
/* The served fake's clock moves to its next deadline (a blocked read's timeout, a key's
 * expiry) once no byte has moved for this long (fakeredis-server's --clock auto): a
 * consumer that blocks 5 s on an empty read waits this, not 5 s. */
#define WSC_AUTO_ADVANCE_MS 20
/* ... and while a consumer is being stopped: longer, so that one that closes at once is
 * not overtaken by its blocked reads timing out. */
#define WSC_STOP_AUTO_ADVANCE_MS 100
/* The default bounds of `wait CONSUMER settled` and `stop CONSUMER`. */
#define WSC_WAIT_MS 10000
#define WSC_STOP_MS 10000

/* A world for sc around sim: opt->backend NULL or "fake" serves ws_sim_fake(sim) (claiming
 * opt->redis_version when given); else the processes are given that URL.  NULL with why set when it cannot be made (the run's
 * directory, the sockets), or when out of memory (why "out of memory"). */
wsc_world *wsc_world_new(const wsc_scenario *sc, ws_sim *sim, const wsc_options *opt,
                         char *why, size_t cap);
/* Kills every process still running, stops serving, removes the run's directory. */
void wsc_world_free(wsc_world *w);

/* The run's directory (sockets, logs). */
const char *wsc_world_dir(const wsc_world *w);
/* REDIS_URL as the processes get it. */
const char *wsc_world_url(const wsc_world *w);

/* `start NAME` (decl: its `consumer` statement): a fresh process. */
int wsc_world_start(wsc_world *w, const wsc_stmt *decl, char *why, size_t cap);
/* `stop NAME`: SIGTERM to its group, the server served until it exits (at most within_ms;
 * 0: WSC_STOP_MS); one that does not is killed and the stop fails. */
int wsc_world_stop(wsc_world *w, const char *name, long long within_ms, char *why, size_t cap);
/* `kill NAME`: SIGKILL to its group. */
int wsc_world_kill(wsc_world *w, const char *name, char *why, size_t cap);
/* `wait NAME settled`: serves until NAME has connected since it started, every
 * subscription the file declares above statement `at` (its index) has nothing unread,
 * pending, on a processing list or in a delay queue, and NAME is quiet (WSC_QUIET_MS), at
 * most within_ms (0: WSC_WAIT_MS).  Fails when NAME exits first or the bound passes,
 * saying what is outstanding. */
int wsc_world_wait(wsc_world *w, const char *name, size_t at, long long within_ms, char *why,
                   size_t cap);
/* Serves what is ready now, without waiting: after each statement, so that a consumer
 * blocked in a read gets what a statement produced. */
void wsc_world_pump(wsc_world *w);
/* The fake's clock moved (`advance`): blocked reads whose time is up are answered. */
void wsc_world_clock_moved(wsc_world *w);
/* The last `lines` lines of NAME's log, each indented by four spaces (heap; NULL when
 * there is no log or out of memory). */
char *wsc_world_log_tail(const wsc_world *w, const char *name, int lines);

/* The consumers' own time so far, in ms: from each start to its crash, or to its last
 * command before a wait found it settled (what the benchmarks weigh wsim's time
 * against; bench/bench_process.c). */
long long wsc_world_consumer_ms(const wsc_world *w);

/* ----- A crash of a consumer process (a file's `fault CONSUMER ...`, wsim explore) ----- */

/* The clock moves a held wait sees go by before it ends (wsc_world_allow_held). */
#define WSC_HELD_MOVES 3
/* For the explorer: after a crash, a wait may end with entries only pending (or on a
 * processing list) -- held for a recovery this consumer does not make, as the simulation
 * counts them -- once the consumer has stayed quiet while the clock moved itself
 * WSC_HELD_MOVES times, and past every min-idle and block the file's subscriptions
 * declare, with nothing changing.  wsc_world_held says what the last wait so left (""
 * when nothing). */
void wsc_world_allow_held(wsc_world *w, int on);
const char *wsc_world_held(const wsc_world *w);

/* Arms the crash: among the commands every consumer connection sends from now on (counted
 * in arrival order, all of them or only those named name), the nth is held at the server
 * -- before it is applied, or (after) once it is applied and before its reply leaves --
 * and the consumer that sent it is killed there (SIGKILL to its group) and started again
 * at once as its `consumer` line says, unless it was being stopped.  nth 0: only count.
 * Served fake only: 0, or 1 with why said (a real server cannot hold a command). */
int wsc_world_arm_crash(wsc_world *w, const char *name, uint64_t nth, int after, char *why,
                        size_t cap);
/* Whether the armed crash happened (1: hit[0..cap) is the command it held, as
 * redis-cli would show it; 0: not yet), and how many commands were counted. */
int wsc_world_crashed(const wsc_world *w, char *hit, size_t cap, uint64_t *counted);

/* The traffic of every consumer connection is recorded from the start -- by the served
 * fake, or on a real server by the proxy in front of it -- into RUN_DIR/traffic.rec
 * (docs/recording.md): the recording as it is now (without its end line), parsed; NULL
 * with *err set (heap) when it cannot be read. */
wsr_recording *wsc_world_recording(wsc_world *w, char **err);

#endif /* WSC_WORLD_H */
