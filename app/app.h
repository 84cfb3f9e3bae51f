/*
** app.h - the top layer: what embeds the engine.  The engine (runtime/)
** names no processor module; this layer gives it tqmon's built-in ones
** (builtins.c: libtqmon's tq_init, and the list the tqmon command shows),
** loads text recordings into SQLite (load.c), serves a running monitor
** and talks to it (daemon.c) and holds the tqmon command (main.c).  See
** docs/design.md.
*/
#ifndef APP_H
#define APP_H

#include <stdio.h>

#include "../base/tq.h"
#include "../include/tqmon.h"
#include "../sensors/sensors.h"

/* Every built-in PM, in the order `tqmon pms` lists them: the PMs of
** sensors/, display/ and runtime/store.c, and the groupers default and
** all.  Sets *n; the list is static. */
const tq_pm *const *appBuiltinPms(int *n);

/* Writes every packet of text recording t (read against prog) into the
** SQLite file path as tables of the primitive relations, all sensors
** enabled, with the recording's first and last times and the base tick
** (tqmon load; the store PM writes the same from any extractor).  Returns
** 0, or -1 with the error in d. */
int appLoadTrace(const SnsTrace *t, const CpProgram *prog, const char *path, TqDiag *d);

/* tqmon report (report.c).  The profile's TQuel queries over the relation
** Executing of program p (sensors/cpusample.tq), and with txn
** ("RELATION.ATTRIBUTE", or NULL) over the transactions of that interval
** relation: a malloc'd text, or NULL with the reason in err (no Executing,
** a bad txn).  The queries store into TqrTotal, TqrModules, TqrFunctions,
** TqrStacks and TqrTxns, TqrTxnFunctions. */
char *appReportQueries(const CpProgram *p, const char *txn, TqBuf *err);
/* Reads their answers from the SQLite store db and writes the profile (the
** top `top` functions, overall and per transaction) to out, and with page
** the flame graph page there.  Returns 0, or -1 with the reason in err (no
** sample at all is one). */
int appReportWrite(const char *db, const char *txn, int top, FILE *out, const char *page, TqBuf *err);
/* The same profile from a store of primitive relations (tqmon load): the
** program files[0..nfiles) and the profile's queries compiled together and
** translated into SQL over the store, opened read only.  Returns 0, or -1
** with the reason in d (the files) or err. */
int appReportStore(const char *store, int nfiles, const char *const *files, const char *txn, int top, FILE *out, const char *page,
                   TqDiag *d, TqBuf *err);

/* tqmon daemon (daemon.c): serves the session of engine e (prepared with
** the option "session", its sources registered) on the Unix socket path
** while collecting, until SIGINT or SIGTERM, and with page ("[ADDR:]PORT",
** or NULL) the live page; then ends the operation.  Returns the exit
** status (0, 1). */
int appDaemonServe(tq_engine *e, const char *path, const char *page);
/* The socket the daemon and its clients use when none is given
** ($TQMON_SOCKET, $XDG_RUNTIME_DIR/tqmon/daemon.sock,
** /tmp/tqmon-UID/daemon.sock); malloc'd. */
char *appDaemonSocketPath(void);
/* tqmon query ... and tqmon phase start ... (argv[0] is "query" or
** "phase"): one request to the daemon.  Returns the exit status. */
int appClient(int argc, char **argv);

#endif
