/*
** sensors.h (bench/mblttng) - the API of the header `tqmon sensors gen
** examples/mailbox/monitor.tq` writes, with LTTng-UST tracepoints
** (bench/tqmb_tp.h) instead of tqmon's rings: examples/mailbox/mailbox.c
** built with it emits one event wherever tqmon's sensors would write a
** packet, every sensor always on, as a program traced by LTTng does.  There
** is no monitor to ask for samples (RunningOn's sampler does nothing).  At
** exit it says how many events it emitted ("tqmb events N" on stderr).
*/
#ifndef TQMB_SENSORS_H
#define TQMB_SENSORS_H

#include <stdint.h>
#include <stdio.h>

#include "tqmb_tp.h"

typedef uint32_t tq_entity;
typedef struct tq_interval { uint64_t id; } tq_interval;
enum { TQ_Process_State_Ready = 0, TQ_Process_State_Running = 1, TQ_Process_State_Blocked = 2, TQ_Process_State_Done = 3 };

static uint32_t tqmb_entities;
static uint64_t tqmb_intervals, tqmb_events;

__attribute__((destructor)) static void tqmb_report(void) {
  fprintf(stderr, "tqmb events %llu\n", (unsigned long long)__atomic_load_n(&tqmb_events, __ATOMIC_RELAXED));
}
static inline void tqmb_count(void) { __atomic_add_fetch(&tqmb_events, 1, __ATOMIC_RELAXED); }

static inline tq_entity tqmb_begin(int rel, const char *name, int64_t state) {
  tq_entity h = __atomic_add_fetch(&tqmb_entities, 1, __ATOMIC_RELAXED);
  lttng_ust_tracepoint(tqmb, entity_begin, rel, h, name, state);
  tqmb_count();
  return h;
}
static inline tq_entity tq_Processor_begin(const char *name) { return tqmb_begin(0, name, 0); }
static inline tq_entity tq_Process_begin(const char *name, int state) { return tqmb_begin(1, name, state); }
static inline tq_entity tq_Mailbox_begin(const char *name) { return tqmb_begin(2, name, 0); }
static inline void tq_Process_set(tq_entity e, int state) {
  lttng_ust_tracepoint(tqmb, entity_state, e, state);
  tqmb_count();
}
static inline int tq_SendMessage_enabled(tq_entity p) { return (void)p, 1; }
static inline void tq_SendMessage(tq_entity p, tq_entity m) {
  lttng_ust_tracepoint(tqmb, send, p, m);
  tqmb_count();
}
static inline void tq_RunningOn_sampler(tq_entity c, void (*cb)(tq_entity, void *), void *arg) { (void)c, (void)cb, (void)arg; }
static inline void tq_RunningOn_sample(tq_entity p, tq_entity c) { (void)p, (void)c; }
static inline tq_interval tq_Waiting_begin(tq_entity p, tq_entity m) {
  tq_interval iv = {__atomic_add_fetch(&tqmb_intervals, 1, __ATOMIC_RELAXED)};
  lttng_ust_tracepoint(tqmb, wait_begin, iv.id, p, m);
  tqmb_count();
  return iv;
}
static inline void tq_Waiting_end(tq_interval iv, tq_entity p, tq_entity m) {
  lttng_ust_tracepoint(tqmb, wait_end, iv.id, p, m);
  tqmb_count();
}
static inline uint64_t tqs_dropped(void) { return 0; }

#endif
