/*
** tqmb_tp.h - LTTng-UST tracepoints for the mailbox program
** (examples/mailbox/mailbox.c built with bench/mblttng/sensors.h): one
** event for each packet tqmon's generated sensors write, with the same
** values, so that make bench can set LTTng's consumer daemon recording
** them beside tqmon's monitor recording its own.
*/
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER tqmb

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tqmb_tp.h"

#if !defined(TQMB_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define TQMB_TP_H

#include <lttng/tracepoint.h>

/* an entity begins (its relation's number, handle, name, first state) */
LTTNG_UST_TRACEPOINT_EVENT(tqmb, entity_begin,
    LTTNG_UST_TP_ARGS(int, rel, uint32_t, handle, const char *, name, int64_t, state),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int, rel, rel)
        lttng_ust_field_integer(uint32_t, handle, handle)
        lttng_ust_field_string(name, name)
        lttng_ust_field_integer(int64_t, state, state)))

/* an entity's new state */
LTTNG_UST_TRACEPOINT_EVENT(tqmb, entity_state,
    LTTNG_UST_TP_ARGS(uint32_t, handle, int64_t, state),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint32_t, handle, handle)
        lttng_ust_field_integer(int64_t, state, state)))

/* SendMessage (Process, Mailbox) */
LTTNG_UST_TRACEPOINT_EVENT(tqmb, send,
    LTTNG_UST_TP_ARGS(int64_t, process, int64_t, mailbox),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(int64_t, process, process)
        lttng_ust_field_integer(int64_t, mailbox, mailbox)))

/* Waiting (Process, Mailbox) begins and ends; id pairs them */
LTTNG_UST_TRACEPOINT_EVENT_CLASS(tqmb, wait,
    LTTNG_UST_TP_ARGS(uint64_t, id, int64_t, process, int64_t, mailbox),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_integer(uint64_t, id, id)
        lttng_ust_field_integer(int64_t, process, process)
        lttng_ust_field_integer(int64_t, mailbox, mailbox)))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(tqmb, wait, tqmb, wait_begin,
    LTTNG_UST_TP_ARGS(uint64_t, id, int64_t, process, int64_t, mailbox))
LTTNG_UST_TRACEPOINT_EVENT_INSTANCE(tqmb, wait, tqmb, wait_end,
    LTTNG_UST_TP_ARGS(uint64_t, id, int64_t, process, int64_t, mailbox))

#endif

#include <lttng/tracepoint-event.h>
