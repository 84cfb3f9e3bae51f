/*
** tqbench_tp.h - the LTTng-UST tracepoint the sensor benchmark compares
** tqmon's generated sensor with: the same two 64-bit values.
*/
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tqbench

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tqbench_tp.h"

#if !defined(TQBENCH_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TQBENCH_TP_H

#include <lttng/tracepoint.h>

LTTNG_UST_TRACEPOINT_EVENT(tqbench, tick,
    LTTNG_UST_TP_ARGS(int64_t, worker, int64_t, n),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int64_t, worker, worker)
        lttng_ust_field_integer(int64_t, n, n)))

#endif

#include <lttng/tracepoint-event.h>
