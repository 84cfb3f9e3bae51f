/* tqbench_tp.c - the LTTng-UST probe of the sensor benchmark. */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tqbench_tp.h"
