/*
** tqshm.h - the shared-memory segment between an instrumented program (the
** subject, sensors/tqsensor.c) and the monitor (sensors/shm.c).  Both sides
** include it; it depends on nothing but C11.
**
** The segment (mode 0600) is made by the monitor for --exec (a memfd with
** no name, handed to the subject as the descriptor TQMON_SHM_FD), or else
** by the subject itself as /tqmon.PID for --attach (sensors/README.md, "The
** trust model", says who checks what).  It holds, at offsets given in its
** header:
**   catalog   the subject's sensors: name, kind, attribute kinds (written by
**             the subject at start; the monitor maps them by name onto its
**             own sensor configuration and checks the attributes)
**   on        one 32-bit word per sensor: 0 = no query needs it (the sensor
**             costs one branch); otherwise the sensor is in use
**             (TQ_SHM_USED: a query uses it; TQ_SHM_ALL: on every entity)
**   counters  per entity and sensor, the enable counter of that entity for
**             that sensor (the flag of the paper, an N-bit counter);
**             TQ_SHM_PENDING: an entity the monitor has not seen yet, whose
**             packets the subject reports until the monitor writes the
**             counter the queries asked for (so that no enabling comes late)
**   entities  one slot per entity the subject declared: its relation and
**             name; slots are never reused, so a handle names one entity
**   requests  sample requests, monitor to subject (single producer, single
**             consumer)
**   losses    per ring and sensor, the packets that ring dropped (full) and
**             when the drops began; per sensor, those dropped for want of a
**             ring or an entity slot (tq_shm_loss, tq_shm_gloss)
**   filters   per sensor, the conditions a packet must meet to be written
**             (rule SF, docs/enabling.md): written by the monitor at its
**             start, before it enables the sensor, the count last (a
**             release store); never changed after.  The subject counts
**             the packets it did not write
**   rings     single-producer rings of fixed 64-byte slots, one per subject
**             thread; the monitor drains them and merges them in time order.
**             A packet is published by its generation byte, written last
**             (a release store): the slot at position P of a ring holds a
**             packet when its gen is tq_shm_gen(P), so the monitor finds
**             packets by reading the slots themselves and the producer
**             never stores to a line the monitor polls (its cost does not
**             depend on how often the monitor looks)
** Every field the monitor reads is validated before use: the subject may
** write garbage, the monitor never trusts it.
*/
#ifndef TQSHM_H
#define TQSHM_H

#include <stdint.h>

#define TQ_SHM_MAGIC "TQMONSHM"
#define TQ_SHM_VERSION 4u
#define TQ_SHM_NAME_LEN 48      /* sensor and entity names, NUL included */
#define TQ_SHM_MAX_ATTRS 16     /* attributes of a live sensor */
#define TQ_SHM_VALS0 5          /* values in a packet's first slot */
#define TQ_SHM_VALSN 7          /* values in each continuation slot */
#define TQ_SHM_REQUESTS 256     /* sample request queue (power of 2) */

/* A sensor word with this bit is enabled on every entity (tqmon record). */
#define TQ_SHM_ALL 0x80000000u
/* A sensor word with this bit: a query uses this event sensor (an entity
** the monitor has not acknowledged yet reports, see TQ_SHM_PENDING). */
#define TQ_SHM_USED 0x40000000u
/* An enable counter with this bit: set by the subject when the entity is
** declared, for every sensor in use; the monitor replaces it with the
** count the queries asked for once the engine has seen the entity. */
#define TQ_SHM_PENDING 0x80000000u
/* How long a subject started by a monitor (--exec) waits at its start for
** the monitor to be ready, in ms (TQMON_START_TIMEOUT overrides it). */
#define TQ_SHM_START_TIMEOUT_MS 10000

/* Attribute kinds in the catalog. */
enum { TQ_SHM_INT = 1, TQ_SHM_FLOAT, TQ_SHM_STRING, TQ_SHM_ENUM, TQ_SHM_ENTITY };

/* Packet kinds. */
enum {
  TQ_SHM_EVENT = 1,  /* an event at time */
  TQ_SHM_BEGIN,      /* an interval begins at time (id) */
  TQ_SHM_END,        /* the interval id ends at time (values repeated) */
  TQ_SHM_SAMPLE,     /* an answer to sample request aux, taken at time */
  TQ_SHM_SAMPLE_DONE,/* no more answers to request aux */
  TQ_SHM_ENTITY_END  /* the entity v[0] no longer exists (its slot is dead) */
};

/* Segment states (the subject writes them). */
enum { TQ_SHM_CREATED = 0, TQ_SHM_READY = 1, TQ_SHM_EXITED = 2 };

/* One sensor of the subject. */
typedef struct tq_shm_sensor {
  char name[TQ_SHM_NAME_LEN];  /* relation name */
  uint8_t is_event;            /* event relation (else interval) */
  uint8_t is_entity;           /* the entity relation of an entity type */
  uint8_t flag_attr;           /* attribute holding the enable flag (255: none) */
  uint8_t nattr;               /* attributes */
  uint8_t kind[TQ_SHM_MAX_ATTRS]; /* TQ_SHM_INT ... per attribute */
  uint8_t sampled;             /* answered through sample requests */
  uint8_t disable;             /* disable traced: the counter drops as it fires */
  uint8_t pad[2];
  uint32_t nenum[TQ_SHM_MAX_ATTRS]; /* enum attributes: number of values */
} tq_shm_sensor;

/* A sensor's filter (rule SF): a packet is written when, for some group,
** every condition of that group holds; n = 0: every packet. */
#define TQ_SHM_CONDS 8
enum { TQ_SHM_EQ = 1, TQ_SHM_NE, TQ_SHM_LT, TQ_SHM_LE, TQ_SHM_GT, TQ_SHM_GE };
typedef struct tq_shm_cond {
  uint8_t attr;                /* attribute */
  uint8_t op;                  /* TQ_SHM_EQ ... */
  uint8_t group;               /* its conjunction (conditions sorted by group) */
  uint8_t fcmp;                /* compare as doubles (float attribute or constant) */
  uint8_t isname;              /* entity or string: compare the value's name with text */
  uint8_t pad[3];
  int64_t val;                 /* an int or enum index */
  double fval;                 /* a number, as a double (fcmp) */
  char text[TQ_SHM_NAME_LEN];  /* an entity's or string's name (isname) */
} tq_shm_cond;
typedef struct tq_shm_filter {
  volatile uint32_t n;         /* conditions in use (monitor; stored last) */
  uint32_t pad;
  volatile uint64_t suppressed; /* packets not written: they failed it (subject) */
  tq_shm_cond c[TQ_SHM_CONDS];
} tq_shm_filter;

/* One entity the subject declared. */
#define TQ_SHM_ENTITY_ATTRS 6   /* attributes of an entity relation besides the entity */
typedef struct tq_shm_entity {
  uint32_t sensor;             /* its entity relation (catalog index) + 1; 0: a string */
  uint32_t state;              /* 1 alive, 2 ended */
  uint64_t cur;                /* id of its open tuple */
  char name[TQ_SHM_NAME_LEN];  /* its name */
  int64_t a[TQ_SHM_ENTITY_ATTRS]; /* its open tuple's other attributes (--attach reads them) */
} tq_shm_entity;

/* One ring slot: a packet, or a continuation of the previous one. */
typedef struct tq_shm_packet {
  uint64_t time;               /* TSC ticks or ns (header.time_kind) */
  uint8_t sensor;              /* catalog index */
  volatile uint8_t gen;        /* tq_shm_gen of its position, written last: published */
  uint8_t kind;                /* TQ_SHM_* */
  uint8_t nslots;              /* slots of this packet, itself included */
  uint32_t aux;                /* sample request sequence */
  uint64_t id;                 /* interval id (BEGIN/END), entity handle */
  int64_t v[TQ_SHM_VALS0];     /* values (entities: handles) */
} tq_shm_packet;

typedef struct tq_shm_cont {   /* a continuation slot (its gen is 0: never a packet) */
  int64_t v0;                  /* the first of its values */
  uint8_t pad0;
  uint8_t gen;                 /* 0 */
  uint8_t pad1[6];
  int64_t v[TQ_SHM_VALSN - 1]; /* the others */
} tq_shm_cont;

/* The generation a packet at position pos of a ring of ring_slots slots
** carries: 1 to 128, the ring's lap (a slot of the previous lap, a
** continuation or a slot never written has another). */
static inline uint8_t tq_shm_gen(uint64_t pos, uint32_t ring_slots) {
  return (uint8_t)(((pos >> __builtin_ctz(ring_slots)) & 0x7f) + 1); /* (ring_slots: a power of 2) */
}

/* A ring: the producer owns head, the monitor owns tail. */
typedef struct tq_shm_ring {
  _Alignas(64) volatile uint64_t head;    /* slots written (producer): exact when the thread gave the
                                          ** ring back, else a hint published every 256 slots */
  _Alignas(64) volatile uint64_t tail;    /* slots read (monitor) */
  _Alignas(64) volatile uint64_t dropped; /* packets dropped, ring full (producer) */
  volatile uint32_t tid;                  /* owning thread (0: free) */
  uint32_t pad[13];
} tq_shm_ring;                            /* followed by its slots */

/* The packets of one sensor one ring dropped because it was full.  The
** ring's producer writes count, first, entity and spans (plain stores: one
** producer); the monitor writes seen.  A drop with count == seen begins an
** episode (first: its time stamp, entity: its flag entity); the monitor
** reports count - seen packets lost from first to when it looked, and sets
** seen = count. */
typedef struct tq_shm_loss {
  volatile uint64_t count;     /* packets dropped (producer) */
  volatile uint64_t first;     /* time stamp of the first drop since seen (producer) */
  volatile uint64_t seen;      /* count when the monitor last looked (monitor) */
  volatile uint32_t entity;    /* flag entity handle of the drops since seen; UINT32_MAX: several */
  volatile uint32_t spans;     /* begins and ends among all the drops (producer) */
} tq_shm_loss;

/* The packets of one sensor dropped for want of a ring (a thread beyond
** the segment's rings) or of an entity slot (an entity declared beyond
** max_entities: its begin), by any thread (atomic). */
typedef struct tq_shm_gloss {
  volatile uint64_t count;     /* packets */
  volatile uint64_t first;     /* time stamp of the first (0: none yet) */
} tq_shm_gloss;

/* A sample request: the tuples of sensor whose flag attribute is entity. */
typedef struct tq_shm_request {
  uint32_t seq;                /* nonzero */
  uint32_t sensor;             /* catalog index */
  uint32_t entity;             /* handle */
  uint32_t pad;
} tq_shm_request;

typedef struct tq_shm_header {
  char magic[8];               /* TQ_SHM_MAGIC */
  uint32_t version;            /* TQ_SHM_VERSION */
  uint32_t header_bytes;       /* sizeof(tq_shm_header) */
  uint64_t size;               /* bytes of the whole segment */
  uint32_t max_sensors;        /* catalog capacity */
  uint32_t max_entities;       /* entity slots (handle 0 is never used) */
  uint32_t nrings;             /* rings */
  uint32_t ring_slots;         /* slots per ring (a power of 2) */
  uint64_t off_catalog, off_on, off_counters, off_entities, off_requests, off_gloss, off_losses, off_rings;
  uint64_t ring_bytes;         /* bytes per ring, header included */
  volatile uint32_t state;     /* TQ_SHM_CREATED, READY, EXITED */
  volatile uint32_t nsensors;  /* catalog entries written by the subject */
  volatile uint32_t rings_taken;    /* rings handed to threads */
  volatile uint32_t entities_taken; /* entity slots handed out (next handle - 1) */
  volatile int32_t subject_pid;
  volatile int32_t monitor_pid;     /* the monitor draining it (0: none): one at a time */
  uint32_t time_kind;          /* 0: time is CLOCK_REALTIME ns; 1: TSC ticks */
  int32_t creator_pid;         /* the process that made the segment (a monitor
                               ** attaching to PID checks it is PID) */
  volatile uint32_t monitor_ready;  /* the monitor wrote its enable words: a subject
                               ** started by it runs on (the start handshake) */
  volatile uint32_t pad0;
  volatile uint64_t gave_up;   /* time stamp at which the subject stopped waiting
                               ** for the monitor (0: it did not) */
  volatile uint64_t next_id;   /* interval ids handed out (subject): ids below it
                               ** at an attach began before the monitor came */
  volatile uint64_t lost_entities;  /* entity and string declarations beyond max_entities */
  volatile uint64_t lost_no_ring;   /* packets of threads that found no free ring */
  _Alignas(64) volatile uint64_t req_head; /* requests posted (monitor) */
  _Alignas(64) volatile uint64_t req_tail; /* requests taken (subject) */
  uint64_t off_filters;        /* one tq_shm_filter per sensor (version 4) */
} tq_shm_header;

/* Segment geometry for a given capacity (both sides use it). */
static inline uint64_t tq_shm_align(uint64_t x) { return (x + 4095) & ~(uint64_t)4095; }
static inline void tq_shm_layout(tq_shm_header *h, uint32_t max_sensors, uint32_t max_entities, uint32_t nrings,
                                 uint32_t ring_slots) {
  h->max_sensors = max_sensors;
  h->max_entities = max_entities;
  h->nrings = nrings;
  h->ring_slots = ring_slots;
  uint64_t o = tq_shm_align(sizeof(tq_shm_header));
  h->off_catalog = o;
  o = tq_shm_align(o + sizeof(tq_shm_sensor) * max_sensors);
  h->off_on = o;
  o = tq_shm_align(o + sizeof(uint32_t) * max_sensors);
  h->off_counters = o;
  o = tq_shm_align(o + sizeof(uint32_t) * (uint64_t)max_sensors * max_entities);
  h->off_entities = o;
  o = tq_shm_align(o + sizeof(tq_shm_entity) * (uint64_t)max_entities);
  h->off_requests = o;
  o = tq_shm_align(o + sizeof(tq_shm_request) * TQ_SHM_REQUESTS);
  h->off_gloss = o;
  o = tq_shm_align(o + sizeof(tq_shm_gloss) * max_sensors);
  h->off_losses = o;
  o = tq_shm_align(o + sizeof(tq_shm_loss) * (uint64_t)max_sensors * nrings);
  h->off_filters = o;
  o = tq_shm_align(o + sizeof(tq_shm_filter) * max_sensors);
  h->off_rings = o;
  h->ring_bytes = tq_shm_align(sizeof(tq_shm_ring) + sizeof(tq_shm_packet) * (uint64_t)ring_slots);
  h->size = o + h->ring_bytes * nrings;
  h->header_bytes = sizeof(tq_shm_header);
}

/* Whether a header's geometry is one a subject makes (sensors/tqsensor.c
** bounds its sizes): every offset the layout's for the sizes it claims, the
** whole within size bytes, so that no sum of them wraps or leaves it. */
static inline int tq_shm_geometry_ok(const tq_shm_header *h, uint64_t size) {
  if (h->ring_slots < 16 || h->ring_slots > (1u << 24) || (h->ring_slots & (h->ring_slots - 1)) || !h->max_sensors ||
      h->max_sensors > 64 || !h->nrings || h->nrings > 1024 || h->max_entities < 2 || h->max_entities > (1u << 24))
    return 0;
  tq_shm_header g = *h;
  tq_shm_layout(&g, h->max_sensors, h->max_entities, h->nrings, h->ring_slots);
  return h->header_bytes == sizeof(tq_shm_header) && h->size == size && g.size == size && g.off_catalog == h->off_catalog &&
         g.off_on == h->off_on && g.off_counters == h->off_counters && g.off_entities == h->off_entities &&
         g.off_requests == h->off_requests && g.off_gloss == h->off_gloss && g.off_losses == h->off_losses &&
         g.off_filters == h->off_filters && g.off_rings == h->off_rings && g.ring_bytes == h->ring_bytes;
}

/* The loss record of sensor s in ring i. */
static inline tq_shm_loss *tq_shm_loss_at(tq_shm_header *h, uint32_t i, uint32_t s) {
  return (tq_shm_loss *)((char *)h + h->off_losses) + (uint64_t)i * h->max_sensors + s;
}

#endif
