/*
** pcp.h - Performance Co-Pilot as a source of tqmon: the processor modules
** that fetch PCP metrics from pmcd on many hosts, or from pmlogger
** archives, as relations (sensors/pcp.md), and the generator of their
** sensor configuration.  The embedding program (runtime/main.c) registers
** the PMs with tq_register_pm; they reach the engine through sensors/pm.h
** only (interface version 4) and link libpcp.
*/
#ifndef PCP_H
#define PCP_H

#include <stdio.h>

#include "pm.h"

/* PRODUCER of "*": the relations mapped by the program's "-- pcp:" lines,
** fetched from pmcd on every host, or from archives.  Args: lines of
** KEY=VALUE: host=SPEC (a host, host:port, or a file listing them; many),
** archive=FILE (many), file=PROGRAM.tq (the program's files, many). */
extern const tq_pm snsPcpPm;
/* TIMER of a replay of archives: a snapshot at every base tick from the
** archives' first time to their last.  Args: archive=FILE lines. */
extern const tq_pm snsPcpClockPm;

/* tqmon pcp describe [-h HOST] [-o FILE] METRIC...: argv holds what
** follows "describe".  Writes the configuration to FILE or standard
** output, messages to err.  Returns the exit status (0, 1 error, 2 usage). */
int snsPcpDescribe(int argc, char **argv, FILE *err);

#endif
