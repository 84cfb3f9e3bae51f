/* tqmb_tp.c - the LTTng-UST probe of the mailbox program's tracepoints. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tqmb_tp.h"
