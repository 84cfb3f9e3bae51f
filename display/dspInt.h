/*
** dspInt.h - private interface of display/: the display engine's model
** (model.c), its outputs (out.c: object lists, JSON steps, the HTML page;
** tty.c; serve.c) and the display processor module (pm.c).
**
** Vocabulary.  A *display* (Disp) draws the rows of one query result,
** declared by a display statement or, without one, the default timeline.
** An *element* (Elem) is what a display keeps per key: an entity's icon,
** a relationship (inside, pointer, line), a flash, or a tuple on the
** timeline.  A *drawn object* (DObj) is what the picture holds: an icon, an
** arrow, a segment, a flash ring, the clock, a fading ghost.  A *step* is one
** instant at which something changed; the model emits per step the drawn
** objects that changed (added, changed, removed) and the timeline bars that
** opened or closed.  A *bar* is one tuple (or one visible stretch of a held
** event) on the timeline.
*/
#ifndef DSPINT_H
#define DSPINT_H

#include "display.h"

/* kinds of drawn objects */
enum { OK_ICON = 1, OK_ARROW, OK_SEGMENT, OK_FLASH, OK_CLOCK, OK_CANVAS };
/* changes */
enum { CH_ADD = 1, CH_CHANGE, CH_REMOVE };
#define DSP_NOCOLOUR 0xFFFFFFFFu

typedef struct DProps {
  uint8_t kind;         /* OK_* */
  uint8_t shape[4];     /* icons: DSPI_* drawn on top of each other (0 ends the list) */
  uint8_t sides;        /* polygon sides */
  uint8_t labelPos;     /* 0 centered, 1 top right (containers) */
  uint8_t ghost;        /* a fading past state (animationtrace) */
  double x, y, w, h;    /* center and size (icons, flash rings, clock, canvas) */
  double x2, y2;        /* arrows and segments: from (x, y) to (x2, y2) */
  double rot;           /* rotation, degrees */
  double opacity;       /* 0..1 */
  uint32_t fill;        /* 0xRRGGBB or DSP_NOCOLOUR */
  uint32_t stroke;
  int32_t label;        /* symbol of the label text (0: none) */
  TqTime at;            /* clock: the time it shows (formatted by the outputs) */
  int32_t in;           /* container's object id + 1 (0: none) */
  int32_t target;       /* flash: the flashing icon's object id + 1 */
} DProps;

typedef struct DObj {
  int id;               /* index in the model's object table */
  int32_t name;         /* symbol of its name: "Process[P1]", "clock" */
  int32_t rel;          /* symbol of its relation name (0 for clock, canvas) */
  int32_t key;          /* symbol of its key text ("P1", "P1,A") */
  int disp;             /* display index, -1 for clock and canvas */
  int shown;            /* drawn after the last step */
  DProps cur;           /* as drawn after the last step */
  int ghostStep;        /* ghost: the step it was made at (its name is name~ghostStep) */
  double ghostBase;     /* ghost: opacity when made */
} DObj;

typedef struct DBar {
  int64_t id;           /* 0, 1, ... in the order they opened */
  int band;             /* timeline band (display index) */
  int32_t row;          /* symbol of its row (the element's key text) */
  TqTime from, to;      /* to == TQ_OPEN while open */
  uint32_t colour;
  int32_t text;         /* symbol of the text shown on it (0: none) */
  int live;             /* index in the model's open bars (-1: closed) */
} DBar;

typedef struct DChange {
  DObj *o;
  int op;               /* CH_* */
} DChange;

/* What one step changed, handed to the outputs. */
typedef struct DspStep {
  int64_t seq;          /* 1, 2, ... */
  TqTime t;
  int nch;
  DChange *ch;          /* in object id order */
  int nopen, nclose;
  DBar **open;          /* bars that began (to may already be known) */
  DBar **close;         /* bars that ended (opened at an earlier step) */
} DspStep;

/* A band of the timeline: one per display. */
typedef struct DBand {
  int32_t name;         /* relation name */
  int isEvent;
  int declared;         /* has a display statement (else: the default timeline) */
} DBand;

/* An output of the model. */
typedef struct DspOut {
  void *self;
  void (*step)(void *self, DspModel *m, const DspStep *st);
  int (*end)(void *self, DspModel *m); /* writes what is left, frees; 0 or -1 */
} DspOut;

typedef struct DspHistory DspHistory; /* history.c */

/* ---- model.c: facts the outputs read */
int dspModelNObj(const DspModel *m);
const DObj *dspModelObj(const DspModel *m, int id);
int dspModelNBand(const DspModel *m);
const DBand *dspModelBand(const DspModel *m, int i);
const CpProgram *dspModelProgram(const DspModel *m);
int dspModelTimeRep(const DspModel *m); /* DSPT_* */
int dspModelFade(const DspModel *m);
TqTime dspModelTick(const DspModel *m);
/* The bars open after the last step (a closed bar is freed once its step
** is drawn: outputs that need it later keep a copy). */
int dspModelNOpenBar(const DspModel *m);
const DBar *dspModelOpenBar(const DspModel *m, int i);
/* An object's name ("Process[P1]", a ghost "Process[P1]~13") into buf. */
const char *dspObjName(const DObj *o, char *buf, size_t n);
/* time range of the steps so far (first, last); 0 when none */
void dspModelRange(const DspModel *m, TqTime *first, TqTime *last);
void dspModelAddOutput(DspModel *m, DspOut *o); /* o must outlive the model */
/* The current state of each display as text lines (the terminal view):
** "Process P1 State=Running", "RunningOn P1 in A", "Waiting M7 -> P2". */
void dspModelStateText(DspModel *m, TqBuf *out);
/* Lines for the elements a step changed (plain-line terminal output). */

/* ---- out.c */
/* One object's properties as "kind key=value ..." (the object lists). */
void dspPropsText(const DspModel *m, const DObj *o, const DProps *p, TqBuf *b);
/* One step as a JSON object (the page model and the live server). */
void dspStepJson(const DspModel *m, const DspStep *st, TqBuf *b);
/* The model's header as JSON (bands, time representation, tick). */
void dspHeaderJson(const DspModel *m, TqBuf *b, int live);
/* "#rrggbb" */
const char *dspColourText(uint32_t c, char buf[8]);
/* JSON string (quotes included), safe inside an HTML script element. */
void dspJsonStr(TqBuf *b, const char *s);
/* One step as a keyframe: every object drawn after it (as added) and every
** bar open then; a page can start from it (history.c). */
void dspKeyframeJson(const DspModel *m, const DspStep *st, TqBuf *b);
/* Writes the self-contained page: the template with the model JSON. */
int dspWritePage(const char *path, const char *header, const DspHistory *h, TqBuf *err);
/* The page template (generated from display/page.html). */
extern const char dspPageHtml[];

/* ---- history.c: the bounded history of steps (JSON) of the page and the server */
#define DSP_HISTORY_DEFAULT ((size_t)64 << 20)
DspHistory *dspHistoryNew(size_t budget); /* bytes of JSON kept */
void dspHistoryFree(DspHistory *h);
/* Adds a step; summarises the oldest ones into a keyframe past the budget. */
void dspHistoryStep(DspHistory *h, DspModel *m, const DspStep *st);
/* {"header":HEADER,"dropped":N,"steps":[keyframe of the dropped ones, kept steps]} */
void dspHistoryModel(const DspHistory *h, const char *header, TqBuf *b);
void dspHistoryWrite(const DspHistory *h, const char *header, FILE *f); /* the same into f */
int64_t dspHistoryFirst(const DspHistory *h);   /* seq of the first step kept whole */
int64_t dspHistoryLast(const DspHistory *h);    /* seq of the last step (0: none yet) */
int64_t dspHistoryDropped(const DspHistory *h); /* steps summarised */
size_t dspHistoryBytes(const DspHistory *h);
size_t dspHistoryBudget(const DspHistory *h);
const char *dspHistoryAt(const DspHistory *h, int64_t seq); /* a kept step's JSON, else NULL */
/* The note on standard error when steps were summarised (what: "the page"). */
void dspHistoryNote(const DspHistory *h, const char *what, size_t budget);

/* Outputs: each returns a DspOut, freed by its end (after writing). */
DspOut *dspListOut(FILE *f, int own);
DspOut *dspHtmlOut(const char *path, size_t history); /* history: bytes of steps kept */
DspOut *dspTtyOut(FILE *f, int fancy);
/* serve.c: the live page over HTTP (server-sent events); NULL on error
** with a message in err.  port 0 picks a free one; the URL is printed on
** standard error.  linger: keep serving after the run until interrupted.
** lim: how long a connection may take to send its request, and a client
** to take any of what it is sent, before it is dropped (NULL or 0: the
** defaults, 10 s and 30 s). */
typedef struct DspServeLimits {
  int64_t idleMs;       /* idle=S: to send a whole request */
  int64_t stallMs;      /* stall=S: to take any of what it is sent */
} DspServeLimits;
DspOut *dspServeOut(DspModel *m, const char *addr, int port, int linger, size_t history, const DspServeLimits *lim,
                    TqBuf *err);

#endif
