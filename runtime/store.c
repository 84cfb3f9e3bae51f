/*
** store.c - the SQLite store: the only file of tqmon that calls sqlite3.
**
** A relation is a table with its explicit attributes (entity, enum and
** string values as text, int as INTEGER, float as REAL) and valid_from /
** valid_to (interval relations; valid_to NULL while open) or valid_at
** (event relations), as integer ns.  The file is in WAL mode; the
** result consumer commits every 4,096 rows, at the end of every snapshot
** of a collection (a live run), and otherwise at least every half second
** of wall time while rows come (STORE_COMMIT_SECONDS): a run killed
** (SIGKILL, a crash) loses at most its last second, and every committed
** transaction is intact.
*/
#include <errno.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include "rtInt.h"

typedef struct Table {
  char *name;
  int nattr;
  const AlgAttr *attr;
  int isEvent;
  sqlite3_stmt *ins, *close, *del;
} Table;

struct RtStore {
  sqlite3 *db;
  TqDiag *d;
  char *path;
  Table *tbl;
  int ntbl;
  int inTxn;
};

static int fail(RtStore *st, const char *what) {
  tqErrorAt(st->d, st->path, "%s: %s", what, sqlite3_errmsg(st->db));
  return -1;
}

static int exec(RtStore *st, const char *sql) {
  char *err = NULL;
  if (sqlite3_exec(st->db, sql, NULL, NULL, &err) != SQLITE_OK) {
    tqErrorAt(st->d, st->path, "%s", err ? err : "sqlite error");
    sqlite3_free(err);
    return -1;
  }
  return 0;
}

RtStore *rtStoreOpen(const char *path, TqDiag *d) {
  RtStore *st = tqCalloc(1, sizeof *st);
  st->d = d;
  st->path = tqStrdup(path);
  struct stat sb;
  int fresh = stat(path, &sb) ? errno == ENOENT : S_ISREG(sb.st_mode) && sb.st_size == 0;
  if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) != SQLITE_OK) {
    fail(st, "cannot open the store");
    rtStoreFree(st);
    return NULL;
  }
  sqlite3_busy_timeout(st->db, 5000);
  /* a store made now holds nothing yet: its switch into WAL (a write of its
  ** header through a rollback journal) is not synced, which saves four
  ** syncs of a short run (the journal twice, its directory, the file); a
  ** crash then loses an empty file */
  if ((fresh && exec(st, "PRAGMA synchronous=OFF")) || exec(st, "PRAGMA journal_mode=WAL") ||
      exec(st, "PRAGMA synchronous=NORMAL")) {
    rtStoreFree(st);
    return NULL;
  }
  return st;
}

RtStore *rtStoreOpenReadOnly(const char *path, TqDiag *d) {
  RtStore *st = tqCalloc(1, sizeof *st);
  st->d = d;
  st->path = tqStrdup(path);
  if (sqlite3_open_v2(path, &st->db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
    fail(st, "cannot open the store");
    rtStoreFree(st);
    return NULL;
  }
  sqlite3_busy_timeout(st->db, 5000);
  return st;
}

void rtStoreFree(RtStore *st) {
  if (!st) return;
  for (int i = 0; i < st->ntbl; i++) {
    sqlite3_finalize(st->tbl[i].ins);
    sqlite3_finalize(st->tbl[i].close);
    sqlite3_finalize(st->tbl[i].del);
    free(st->tbl[i].name);
  }
  free(st->tbl);
  if (st->inTxn) sqlite3_exec(st->db, "ROLLBACK", NULL, NULL, NULL);
  sqlite3_close(st->db);
  free(st->path);
  free(st);
}

static void quoteId(TqBuf *b, const char *s) {
  tqBufPuts(b, "\"");
  for (; *s; s++) {
    if (*s == '"') tqBufPuts(b, "\"\"");
    else tqBufAdd(b, s, 1);
  }
  tqBufPuts(b, "\"");
}

static int openTable(RtStore *st, const char *name, int nattr, const AlgAttr *attr, int isEvent);

/* The declared type of an attribute's column. */
static const char *colType(const AlgAttr *a) {
  return a->type.kind == TY_INT ? "INTEGER" : a->type.kind == TY_FLOAT ? "REAL" : "TEXT";
}

/* Does table name exist with exactly the columns rtStoreTable makes?
** 1 yes, 0 it does not exist, -1 it exists with other columns (why says
** how), -2 an SQLite error. */
static int sameColumns(RtStore *st, const char *name, int nattr, const AlgAttr *attr, int isEvent, TqBuf *why) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(st->db, "SELECT name, type FROM pragma_table_info(?) ORDER BY cid", -1, &s, NULL) != SQLITE_OK)
    return fail(st, "table info") - 1;
  sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
  int ncol = nattr + (isEvent ? 1 : 2), k = 0, same = 1, rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    const char *cn = (const char *)sqlite3_column_text(s, 0), *ct = (const char *)sqlite3_column_text(s, 1);
    const char *wn = k < nattr ? attr[k].name : k == nattr ? (isEvent ? "valid_at" : "valid_from") : "valid_to";
    const char *wt = k < nattr ? colType(&attr[k]) : "INTEGER";
    if (k >= ncol || !cn || !ct || strcasecmp(cn, wn) || strcasecmp(ct, wt)) same = 0;
    tqBufPrintf(why, "%s%s %s", k ? ", " : "", cn ? cn : "?", ct ? ct : "?");
    k++;
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(st, "table info") - 1;
  if (!k) return 0;
  return same && k == ncol ? 1 : -1;
}

int rtStoreHasTable(RtStore *st, const char *name) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(st->db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ? COLLATE NOCASE", -1, &s,
                         NULL) != SQLITE_OK)
    return fail(st, "table lookup");
  sqlite3_bind_text(s, 1, name, -1, SQLITE_TRANSIENT);
  int rc = sqlite3_step(s);
  sqlite3_finalize(s);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) return fail(st, "table lookup");
  return rc == SQLITE_ROW;
}

int rtStoreTableAppend(RtStore *st, const char *name, int nattr, const AlgAttr *attr, int isEvent) {
  TqBuf why = {0};
  int same = sameColumns(st, name, nattr, attr, isEvent, &why);
  if (same == -1) {
    TqBuf want = {0};
    for (int i = 0; i < nattr; i++) tqBufPrintf(&want, "%s%s %s", i ? ", " : "", attr[i].name, colType(&attr[i]));
    tqBufPuts(&want, isEvent ? ", valid_at INTEGER" : ", valid_from INTEGER, valid_to INTEGER");
    tqErrorAt(st->d, st->path,
              "holds a table %s of other columns (%s), not this query's (%s): its rows are kept; choose another name, "
              "or drop that table first",
              name, why.s ? why.s : "", want.s);
    tqBufFree(&want);
  }
  tqBufFree(&why);
  if (same < 0) return -1;
  return same ? openTable(st, name, nattr, attr, isEvent) : rtStoreTable(st, name, nattr, attr, isEvent);
}

int rtStoreTable(RtStore *st, const char *name, int nattr, const AlgAttr *attr, int isEvent) {
  TqBuf b = {0};
  tqBufPuts(&b, "DROP TABLE IF EXISTS ");
  quoteId(&b, name);
  tqBufPuts(&b, "; CREATE TABLE ");
  quoteId(&b, name);
  tqBufPuts(&b, " (");
  for (int i = 0; i < nattr; i++) {
    quoteId(&b, attr[i].name);
    switch (attr[i].type.kind) {
      case TY_INT: tqBufPuts(&b, " INTEGER, "); break;
      case TY_FLOAT: tqBufPuts(&b, " REAL, "); break;
      default: tqBufPuts(&b, " TEXT, "); break;
    }
  }
  tqBufPuts(&b, isEvent ? "valid_at INTEGER NOT NULL)" : "valid_from INTEGER NOT NULL, valid_to INTEGER)");
  int rc = exec(st, b.s);
  tqBufFree(&b);
  if (rc) return -1;
  return openTable(st, name, nattr, attr, isEvent);
}

/* The handle of table name, which exists with the columns of attr. */
static int openTable(RtStore *st, const char *name, int nattr, const AlgAttr *attr, int isEvent) {
  st->tbl = tqRealloc(st->tbl, sizeof(Table) * (size_t)(st->ntbl + 1));
  Table *t = &st->tbl[st->ntbl];
  memset(t, 0, sizeof *t);
  t->name = tqStrdup(name);
  t->nattr = nattr;
  t->attr = attr;
  t->isEvent = isEvent;
  TqBuf q = {0};
  tqBufPuts(&q, "INSERT INTO ");
  quoteId(&q, name);
  tqBufPuts(&q, " VALUES (");
  for (int i = 0; i < nattr + (isEvent ? 1 : 2); i++) tqBufPuts(&q, i ? ",?" : "?");
  tqBufPuts(&q, ")");
  if (sqlite3_prepare_v2(st->db, q.s, -1, &t->ins, NULL) != SQLITE_OK) {
    tqBufFree(&q);
    return fail(st, "prepare insert");
  }
  tqBufFree(&q);
  tqBufPuts(&q, "UPDATE ");
  quoteId(&q, name);
  tqBufPuts(&q, " SET valid_to = ? WHERE rowid = ?");
  if (!isEvent && sqlite3_prepare_v2(st->db, q.s, -1, &t->close, NULL) != SQLITE_OK) {
    tqBufFree(&q);
    return fail(st, "prepare update");
  }
  tqBufFree(&q);
  tqBufPuts(&q, "DELETE FROM ");
  quoteId(&q, name);
  tqBufPuts(&q, " WHERE rowid = ?");
  if (sqlite3_prepare_v2(st->db, q.s, -1, &t->del, NULL) != SQLITE_OK) {
    tqBufFree(&q);
    return fail(st, "prepare delete");
  }
  tqBufFree(&q);
  return st->ntbl++;
}

int rtStoreTableEnd(RtStore *st, int tbl, int drop) {
  if (tbl < 0 || tbl >= st->ntbl || !st->tbl[tbl].name) return -1;
  Table *t = &st->tbl[tbl];
  sqlite3_finalize(t->ins);
  sqlite3_finalize(t->close);
  sqlite3_finalize(t->del);
  int rc = 0;
  if (drop) {
    TqBuf b = {0};
    tqBufPuts(&b, "DROP TABLE IF EXISTS ");
    quoteId(&b, t->name);
    rc = exec(st, b.s);
    tqBufFree(&b);
  }
  free(t->name);
  memset(t, 0, sizeof *t);
  return rc;
}

static int step(RtStore *st, sqlite3_stmt *s, const char *what) {
  int rc = sqlite3_step(s);
  sqlite3_reset(s);
  if (rc != SQLITE_DONE) return fail(st, what);
  return 0;
}

int rtStoreInsert(RtStore *st, int tbl, const int64_t *vals, TqTime from, TqTime to, int64_t *rowid) {
  Table *t = &st->tbl[tbl];
  sqlite3_stmt *s = t->ins;
  for (int i = 0; i < t->nattr; i++) {
    const AlgType *ty = &t->attr[i].type;
    switch (ty->kind) {
      case TY_INT: sqlite3_bind_int64(s, i + 1, vals[i]); break;
      case TY_FLOAT: {
        double d;
        memcpy(&d, &vals[i], sizeof d);
        sqlite3_bind_double(s, i + 1, d);
        break;
      }
      case TY_ENUM:
        sqlite3_bind_text(s, i + 1, vals[i] >= 0 && vals[i] < ty->en->n ? ty->en->names[vals[i]] : "?", -1,
                          SQLITE_STATIC);
        break;
      default: sqlite3_bind_text(s, i + 1, tqSymName((int32_t)vals[i]), -1, SQLITE_STATIC); break;
    }
  }
  sqlite3_bind_int64(s, t->nattr + 1, from);
  if (!t->isEvent) {
    if (to == TQ_OPEN || to >= TQ_FOREVER) sqlite3_bind_null(s, t->nattr + 2);
    else sqlite3_bind_int64(s, t->nattr + 2, to);
  }
  if (step(st, s, "insert")) return -1;
  if (rowid) *rowid = sqlite3_last_insert_rowid(st->db);
  return 0;
}

int rtStoreCloseRow(RtStore *st, int tbl, int64_t rowid, TqTime to) {
  Table *t = &st->tbl[tbl];
  if (!t->close) return 0;
  if (to == TQ_OPEN || to >= TQ_FOREVER) sqlite3_bind_null(t->close, 1);
  else sqlite3_bind_int64(t->close, 1, to);
  sqlite3_bind_int64(t->close, 2, rowid);
  return step(st, t->close, "update");
}

/* Runs sql once: %T is t's name quoted, ?1 the time at, ?2 why and ?3
** t's name as text.  0 or -1. */
static int cutStep(RtStore *st, const Table *t, const char *sql, TqTime at, const char *why) {
  TqBuf b = {0};
  for (const char *p = sql; *p; p++) {
    if (p[0] == '%' && p[1] == 'T') quoteId(&b, t->name), p++;
    else tqBufPrintf(&b, "%c", *p);
  }
  sqlite3_stmt *s;
  int rc = sqlite3_prepare_v2(st->db, b.s, -1, &s, NULL) != SQLITE_OK ? fail(st, "prepare cut") : 0;
  tqBufFree(&b);
  if (rc) return -1;
  sqlite3_bind_int64(s, 1, at);
  sqlite3_bind_text(s, 2, why, -1, SQLITE_STATIC);
  sqlite3_bind_text(s, 3, t->name, -1, SQLITE_STATIC);
  rc = sqlite3_step(s);
  sqlite3_finalize(s);
  return rc == SQLITE_DONE ? 0 : fail(st, "cut");
}

int rtStoreCutOpen(RtStore *st, int tbl, TqTime at, const char *why) {
  Table *t = &st->tbl[tbl];
  if (t->isEvent) return 0;
  if (at == TQ_OPEN) {
    /* the last time the monitor that stored the table is known to have run */
    TqBuf b = {0};
    tqBufPuts(&b, "SELECT max(max(valid_from), coalesce(max(valid_to), max(valid_from))) FROM ");
    quoteId(&b, t->name);
    sqlite3_stmt *s;
    int rc = sqlite3_prepare_v2(st->db, b.s, -1, &s, NULL);
    tqBufFree(&b);
    if (rc != SQLITE_OK) return fail(st, "prepare cut");
    rc = sqlite3_step(s);
    at = rc == SQLITE_ROW && sqlite3_column_type(s, 0) != SQLITE_NULL ? sqlite3_column_int64(s, 0) : TQ_OPEN;
    sqlite3_finalize(s);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE) return fail(st, "cut");
    if (at == TQ_OPEN) return 0; /* no row */
  }
  if (exec(st, "CREATE TABLE IF NOT EXISTS _tqmon_cut (result TEXT NOT NULL, row INTEGER NOT NULL, "
               "valid_to INTEGER NOT NULL, why TEXT NOT NULL)"))
    return -1;
  if (cutStep(st, t, "INSERT INTO _tqmon_cut SELECT ?3, rowid, ?1, ?2 FROM %T WHERE valid_to IS NULL", at, why)) return -1;
  int n = sqlite3_changes(st->db);
  if (cutStep(st, t, "UPDATE %T SET valid_to = max(?1, valid_from) WHERE valid_to IS NULL", at, why))
    return -1;
  return n;
}

int rtStoreDeleteRow(RtStore *st, int tbl, int64_t rowid) {
  Table *t = &st->tbl[tbl];
  sqlite3_bind_int64(t->del, 1, rowid);
  return step(st, t->del, "delete");
}

int rtStoreMeta(RtStore *st, const char *key, int64_t value) {
  if (exec(st, "CREATE TABLE IF NOT EXISTS _tqmon_meta (key TEXT PRIMARY KEY, value INTEGER)")) return -1;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(st->db, "INSERT OR REPLACE INTO _tqmon_meta VALUES (?, ?)", -1, &s, NULL) != SQLITE_OK)
    return fail(st, "meta");
  sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
  sqlite3_bind_int64(s, 2, value);
  int rc = step(st, s, "meta");
  sqlite3_finalize(s);
  return rc;
}

int rtStoreLossReset(RtStore *st) { return exec(st, "DROP TABLE IF EXISTS _tqmon_lost"); }

int rtStoreLoss(RtStore *st, const char *rel, int64_t entity, TqTime from, TqTime to, int64_t count, int spans) {
  if (exec(st, "CREATE TABLE IF NOT EXISTS _tqmon_lost (relation TEXT, entity TEXT, valid_from INTEGER NOT NULL, "
               "valid_to INTEGER NOT NULL, lost INTEGER, spans INTEGER NOT NULL)"))
    return -1;
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(st->db, "INSERT INTO _tqmon_lost VALUES (?, ?, ?, ?, ?, ?)", -1, &s, NULL) != SQLITE_OK)
    return fail(st, "loss");
  if (rel) sqlite3_bind_text(s, 1, rel, -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(s, 1);
  if (entity >= INT32_MIN && entity <= INT32_MAX) /* (TQ_PM_ENTITY_UNKNOWN is INT64_MIN: NULL) */
    sqlite3_bind_text(s, 2, tqSymName((int32_t)entity), -1, SQLITE_TRANSIENT);
  else sqlite3_bind_null(s, 2);
  sqlite3_bind_int64(s, 3, from);
  sqlite3_bind_int64(s, 4, to);
  if (count == RT_LOSS_UNKNOWN) sqlite3_bind_null(s, 5); /* (how many is not known) */
  else sqlite3_bind_int64(s, 5, count);
  sqlite3_bind_int(s, 6, spans != 0);
  int rc = step(st, s, "loss");
  sqlite3_finalize(s);
  return rc;
}

int rtStoreGetMeta(RtStore *st, const char *key, int64_t *value) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(st->db, "SELECT value FROM _tqmon_meta WHERE key = ?", -1, &s, NULL) != SQLITE_OK) {
    tqErrorAt(st->d, st->path, "not a store written by tqmon load (no _tqmon_meta table)");
    return -1;
  }
  sqlite3_bind_text(s, 1, key, -1, SQLITE_STATIC);
  int rc = -1;
  if (sqlite3_step(s) == SQLITE_ROW) {
    *value = sqlite3_column_int64(s, 0);
    rc = 0;
  } else {
    tqErrorAt(st->d, st->path, "no %s in _tqmon_meta", key);
  }
  sqlite3_finalize(s);
  return rc;
}

int rtStoreBegin(RtStore *st) {
  if (st->inTxn) return 0;
  if (exec(st, "BEGIN")) return -1;
  st->inTxn = 1;
  return 0;
}

int rtStoreCommit(RtStore *st) {
  if (!st->inTxn) return 0;
  st->inTxn = 0;
  return exec(st, "COMMIT");
}

int rtStoreQueryCsv(RtStore *st, const char *sql, FILE *out) {
  sqlite3_stmt *s;
  if (sqlite3_prepare_v2(st->db, sql, -1, &s, NULL) != SQLITE_OK) return fail(st, "query");
  int n = sqlite3_column_count(s);
  for (int i = 0; i < n; i++) fprintf(out, "%s%s", i ? "," : "", sqlite3_column_name(s, i));
  fputc('\n', out);
  int rc;
  while ((rc = sqlite3_step(s)) == SQLITE_ROW) {
    for (int i = 0; i < n; i++) {
      char num[64];
      const char *txt;
      if (sqlite3_column_type(s, i) == SQLITE_FLOAT) {
        tqFloatFormat(num, sizeof num, sqlite3_column_double(s, i)); /* as the engine prints doubles */
        txt = num;
      } else {
        const unsigned char *v = sqlite3_column_text(s, i);
        txt = v ? (const char *)v : "";
      }
      int q = strchr(txt, ',') || strchr(txt, '"') || strchr(txt, '\n');
      if (i) fputc(',', out);
      if (!q) {
        fputs(txt, out);
      } else {
        fputc('"', out);
        for (const char *p = txt; *p; p++) {
          if (*p == '"') fputc('"', out);
          fputc(*p, out);
        }
        fputc('"', out);
      }
    }
    fputc('\n', out);
  }
  sqlite3_finalize(s);
  if (rc != SQLITE_DONE) return fail(st, "query");
  return 0;
}

/* ================================================================ result consumer */

/* The most rows, and the most wall time, between two commits. */
#define STORE_COMMIT_ROWS 4096
#define STORE_COMMIT_SECONDS 0.5

typedef struct StoreSink {
  RtConsumer c;
  RtStore *st;
  int *tbl;           /* per result: table handle, -1 if unnamed */
  TqMap *rowmap;      /* per result: sink rowid -> sqlite rowid */
  int nres;
  int64_t pending;    /* rows since the last commit */
  double committed;   /* wall time (monotonic s) of the last commit */
} StoreSink;

/* Commits the rows since the last commit.  0 or -1. */
static int ssCommit(StoreSink *s) {
  s->pending = 0;
  s->committed = tqWallSeconds();
  return rtStoreCommit(s->st) || rtStoreBegin(s->st) ? -1 : 0;
}

static int ssBegin(void *self, RtNet *net) {
  StoreSink *s = self;
  s->nres = net->nresult;
  s->tbl = tqCalloc((size_t)(s->nres ? s->nres : 1), sizeof(int));
  s->rowmap = tqCalloc((size_t)(s->nres ? s->nres : 1), sizeof(TqMap));
  if (rtStoreBegin(s->st)) return -1;
  for (int i = 0; i < net->nresult; i++) {
    RtResult *r = &net->result[i];
    s->tbl[i] = -1;
    if (!r->q->name || r->q->display) continue; /* unnamed, or collected for a display only */
    s->tbl[i] = rtStoreTable(s->st, r->name, r->nattr, r->attr, r->isEvent);
    if (s->tbl[i] < 0) return -1;
  }
  /* the periods during which each result may be incomplete (docs/losses.md):
  ** empty when nothing was lost */
  if (exec(s->st, "DROP TABLE IF EXISTS _tqmon_incomplete; CREATE TABLE _tqmon_incomplete (result TEXT NOT NULL, "
                  "relation TEXT, entity TEXT, valid_from INTEGER NOT NULL, valid_to INTEGER, lost INTEGER)"))
    return -1;
  return ssCommit(s);
}

/* The losses of the stored results into _tqmon_incomplete (valid_to NULL:
** to the end; lost NULL: how many is not known). */
static int ssLosses(StoreSink *s, RtNet *net) {
  sqlite3_stmt *ins;
  if (sqlite3_prepare_v2(s->st->db, "INSERT INTO _tqmon_incomplete VALUES (?,?,?,?,?,?)", -1, &ins, NULL) != SQLITE_OK)
    return fail(s->st, "prepare insert");
  int rc = 0;
  for (int q = 0; q < s->nres && !rc; q++) {
    if (s->tbl[q] < 0) continue;
    RtLoss *v;
    int n = rtResultLosses(net, &net->result[q], &v);
    for (int i = 0; i < n && !rc; i++) {
      const char *rel = rtLossRelation(net, &v[i]), *ent = rtLossEntity(&v[i]);
      sqlite3_bind_text(ins, 1, net->result[q].name, -1, SQLITE_STATIC);
      if (rel) sqlite3_bind_text(ins, 2, rel, -1, SQLITE_STATIC);
      else sqlite3_bind_null(ins, 2);
      if (ent) sqlite3_bind_text(ins, 3, ent, -1, SQLITE_STATIC);
      else sqlite3_bind_null(ins, 3);
      sqlite3_bind_int64(ins, 4, v[i].from);
      if (v[i].to >= TQ_FOREVER) sqlite3_bind_null(ins, 5);
      else sqlite3_bind_int64(ins, 5, v[i].to);
      if (v[i].unknown) sqlite3_bind_null(ins, 6); /* (how many is not known) */
      else sqlite3_bind_int64(ins, 6, v[i].count);
      rc = step(s->st, ins, "insert");
    }
    free(v);
  }
  sqlite3_finalize(ins);
  return rc;
}

static int ssRow(void *self, RtResult *res, const RtRow *r) {
  StoreSink *s = self;
  int qi = res->q->index;
  int tbl = s->tbl[qi];
  if (tbl < 0) return 0;
  s->pending++;
  switch (r->op) {
    case RT_ROW_INSERT: {
      int64_t rowid;
      if (rtStoreInsert(s->st, tbl, r->vals, r->from, res->isEvent ? r->from : r->to, &rowid)) return -1;
      if (!res->isEvent && r->to == TQ_OPEN) tqMapPut(&s->rowmap[qi], r->rowid + 2, (void *)(intptr_t)rowid);
      return 0;
    }
    case RT_ROW_CLOSE: {
      intptr_t rowid = (intptr_t)tqMapDel(&s->rowmap[qi], r->rowid + 2);
      return rowid ? rtStoreCloseRow(s->st, tbl, rowid, r->to) : 0;
    }
    default: {
      intptr_t rowid = (intptr_t)tqMapDel(&s->rowmap[qi], r->rowid + 2);
      return rowid ? rtStoreDeleteRow(s->st, tbl, rowid) : 0;
    }
  }
}

/* After each instant: by count, or by time. */
static int ssBatch(void *self, TqTime now) {
  StoreSink *s = self;
  if (!s->pending) return 0;
  if (s->pending < STORE_COMMIT_ROWS && tqWallSeconds() - s->committed < STORE_COMMIT_SECONDS) return 0;
  return ssCommit(s);
}

static int ssEnd(void *self, RtNet *net, int ok) {
  StoreSink *s = self;
  int rc = ssLosses(s, net) | rtStoreCommit(s->st);
  for (int i = 0; i < s->nres; i++) tqMapFree(&s->rowmap[i]);
  return rc;
}

RtConsumer *rtStoreConsumer(const char *path, TqDiag *d) {
  RtStore *st = rtStoreOpen(path, d);
  if (!st) return NULL;
  StoreSink *s = tqCalloc(1, sizeof *s);
  s->st = st;
  s->c.name = "sqlite";
  s->c.self = s;
  s->c.begin = ssBegin;
  s->c.row = ssRow;
  s->c.batch = ssBatch;
  s->c.end = ssEnd;
  return &s->c;
}

void rtStoreConsumerFree(RtConsumer *c) {
  if (!c) return;
  StoreSink *s = c->self;
  rtStoreFree(s->st);
  free(s->tbl);
  free(s->rowmap);
  free(s);
}

/* ================================================================ the sqlite PM */

#include "engine.h"

/* sqlite: CONSUMER of results: every named result into the SQLite file
** args.  store: CONSUMER of every record of the recording, as tables of the
** primitive relations (tqmon load: the traditional way, and the store the
** SQL translation of queries reads).  An interval is one row [from, to),
** written when it ends (still open at the end: valid_to NULL); a sample of
** an interval relation is [t, t+1). */
typedef struct Prim {
  RtStore *st;
  int *tbl;               /* per relation */
  TqMap open;             /* (relation, id) -> OpenRow* */
  int64_t n;              /* rows since the last commit */
  TqTime first, last;
  int any;
  int64_t lost, nloss;    /* the recording's losses: packets, losses (_tqmon_lost) */
  int lostUnknown;        /* one of them of a count not known */
} Prim;
typedef struct OpenRow {
  int rel;
  TqTime from;
  int64_t vals[];
} OpenRow;

static tq_pm_status sqliteInit(tq_pm_global *g, tq_pm_private *p) {
  p->caps = TQ_PM_CONSUMER;
  p->sync = TQ_PM_SYNC_SNAPSHOT_END;
  if (!p->args || !*p->args) {
    snprintf(p->message, sizeof p->message, "give the store: sqlite=FILE");
    return TQ_PM_ERROR;
  }
  return TQ_PM_OK;
}

static tq_pm_status storeInit(tq_pm_global *g, tq_pm_private *p) {
  tq_pm_status st = sqliteInit(g, p);
  p->sync = TQ_PM_SYNC_ALL_RECORDS | TQ_PM_SYNC_COLLECTION_END;
  return st;
}

static uint64_t primKey(int rel, uint64_t id) { return tqHash64(((uint64_t)rel << 48) ^ id) | 2; }

static int primRow(Prim *pr, int rel, const int64_t *vals, TqTime from, TqTime to) {
  if (rtStoreInsert(pr->st, pr->tbl[rel - 1], vals, from, to, NULL)) return -1;
  if (++pr->n % 100000 == 0 && (rtStoreCommit(pr->st) || rtStoreBegin(pr->st))) return -1;
  return 0;
}

static tq_pm_status primRecord(tq_pm_global *g, tq_pm_private *p, const tq_record *r) {
  Prim *pr = p->data;
  if (!pr) return TQ_PM_OK;
  CpProgram *prog = enProgram(g);
  const AlgRel *rel = prog->cat.rels.v[r->rel - 1];
  TqTime t = r->kind == TQ_REC_BEGIN ? r->from : r->kind == TQ_REC_END || r->kind == TQ_REC_WHOLE ? r->to : r->t;
  if (!pr->any) pr->first = t;
  pr->any = 1;
  pr->last = t;
  int rc = 0;
  switch (r->kind) {
    case TQ_REC_EVENT:
    case TQ_REC_SAMPLE: rc = primRow(pr, r->rel, r->vals, r->t, rel->isEvent ? r->t : r->t + 1); break;
    case TQ_REC_WHOLE: rc = primRow(pr, r->rel, r->vals, r->from, r->to); break;
    case TQ_REC_BEGIN: {
      OpenRow *o = tqMalloc(sizeof(OpenRow) + sizeof(int64_t) * (size_t)(r->nvals ? r->nvals : 1));
      o->rel = r->rel;
      o->from = r->from;
      memcpy(o->vals, r->vals, sizeof(int64_t) * (size_t)r->nvals);
      free(tqMapDel(&pr->open, primKey(r->rel, r->id)));
      tqMapPut(&pr->open, primKey(r->rel, r->id), o);
      break;
    }
    case TQ_REC_END: {
      OpenRow *o = tqMapDel(&pr->open, primKey(r->rel, r->id));
      rc = primRow(pr, r->rel, o ? o->vals : r->vals, o ? o->from : r->from, r->to);
      free(o);
      break;
    }
    default: break;
  }
  if (rc) {
    snprintf(p->message, sizeof p->message, "cannot write the store %s", p->args);
    return TQ_PM_FATAL;
  }
  return TQ_PM_OK;
}

static tq_pm_status primCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  Prim *pr = p->data;
  CpProgram *prog = enProgram(g);
  switch (what) {
    case TQ_PM_START: {
      pr = tqCalloc(1, sizeof *pr);
      p->data = pr;
      pr->st = rtStoreOpen(p->args, enDiag(g));
      if (!pr->st || rtStoreBegin(pr->st) || rtStoreLossReset(pr->st)) {
        snprintf(p->message, sizeof p->message, "cannot open the store %s", p->args);
        return TQ_PM_FATAL;
      }
      int n = prog->cat.rels.n;
      pr->tbl = tqCalloc((size_t)(n ? n : 1), sizeof(int));
      for (int i = 0; i < n; i++) {
        const AlgRel *r = prog->cat.rels.v[i];
        pr->tbl[i] = rtStoreTable(pr->st, r->name, r->nattr, r->attr, r->isEvent);
        if (pr->tbl[i] < 0) {
          snprintf(p->message, sizeof p->message, "cannot create table %s in %s", r->name, p->args);
          return TQ_PM_FATAL;
        }
      }
      return TQ_PM_OK;
    }
    case TQ_PM_COLLECTION_END: {
      /* intervals still open at the end, then the recording's range */
      int rc = 0;
      for (uint32_t k = 0; k < pr->open.cap && !rc; k++) {
        if (pr->open.slot[k].key <= 1) continue;
        OpenRow *o = pr->open.slot[k].val;
        rc = primRow(pr, o->rel, o->vals, o->from, TQ_OPEN);
      }
      RtNet *net = enNet(g);
      TqTime last = net && net->opt.nowValue != TQ_OPEN ? net->opt.nowValue : pr->last;
      /* the range starts at the run's first time (a recording's range may
      ** start before its first record), as it ends at its last */
      TqTime first = pr->any ? pr->first : 0;
      if (net && net->originKnown && pr->any && net->origin < first) first = net->origin;
      if (!rc) rc = rtStoreMeta(pr->st, "first", first) || rtStoreMeta(pr->st, "last", last) ||
                    rtStoreMeta(pr->st, "tick", prog->cat.tick);
      if (!rc) rc = rtStoreCommit(pr->st);
      if (rc) {
        snprintf(p->message, sizeof p->message, "cannot write the store %s", p->args);
        return TQ_PM_FATAL;
      }
      if (pr->nloss) {
        char c[64];
        g->log(g, p, TQ_LOG_WARNING,
               "the recording says %s were lost (%lld loss%s): the tables miss them; their periods are in "
               "_tqmon_lost (docs/losses.md)",
               rtLossCount(c, sizeof c, pr->lost, pr->lostUnknown), (long long)pr->nloss, pr->nloss == 1 ? "" : "es");
      }
      return TQ_PM_OK;
    }
    case TQ_PM_END:
      if (pr) {
        for (uint32_t k = 0; k < pr->open.cap; k++)
          if (pr->open.slot[k].key > 1) free(pr->open.slot[k].val);
        tqMapFree(&pr->open);
        rtStoreFree(pr->st);
        free(pr->tbl);
        free(pr);
        p->data = NULL;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}

/* A loss the recording tells: into _tqmon_lost, said at the end. */
static tq_pm_status primLost(tq_pm_global *g, tq_pm_private *p, int rel, int64_t entity, tq_time from, tq_time to,
                             int64_t count, int spans) {
  Prim *pr = p->data;
  CpProgram *prog = enProgram(g);
  if (!pr) return TQ_PM_OK;
  const AlgRel *r = rel > 0 && rel <= prog->cat.rels.n ? prog->cat.rels.v[rel - 1] : NULL;
  const char *name = r ? r->name : NULL;
  if (rtStoreLoss(pr->st, name, entity, from, to, count, spans)) {
    snprintf(p->message, sizeof p->message, "cannot write the store %s", p->args);
    return TQ_PM_FATAL;
  }
  if (count == RT_LOSS_UNKNOWN) pr->lostUnknown = 1;
  else pr->lost += count;
  pr->nloss++;
  return TQ_PM_OK;
}

static tq_pm_status sqliteCall(tq_pm_global *g, tq_pm_private *p, int what, const tq_record_set *rs) {
  RtConsumer *c = p->data;
  switch (what) {
    case TQ_PM_START:
      c = rtStoreConsumer(p->args, enDiag(g));
      if (!c) {
        snprintf(p->message, sizeof p->message, "cannot open the store %s", p->args);
        return TQ_PM_FATAL;
      }
      p->data = c;
      if (c->begin(c->self, enNet(g))) return TQ_PM_FATAL;
      enAttachConsumer(g, p, c);
      return TQ_PM_OK;
    case TQ_PM_SNAPSHOT_END: /* a live snapshot's rows are committed with it */
      if (c && g->operation == TQ_OP_COLLECT && ((StoreSink *)c->self)->pending && ssCommit(c->self)) {
        snprintf(p->message, sizeof p->message, "cannot commit to the store %s", p->args);
        return TQ_PM_FATAL;
      }
      return TQ_PM_OK;
    case TQ_PM_END:
      if (c) {
        c->end(c->self, enNet(g), 1);
        rtStoreConsumerFree(c);
        p->data = NULL;
      }
      return TQ_PM_OK;
    default: return TQ_PM_OK;
  }
}


const tq_pm rtSqlitePm = {
    .version = TQ_PM_VERSION,
    .name = "sqlite",
    .description = "CONSUMER: named results into an SQLite file (args: FILE)",
    .init = sqliteInit,
    .call = sqliteCall,
};

const tq_pm rtStorePm = {
    .version = TQ_PM_VERSION,
    .name = "store",
    .description = "CONSUMER of every record: tables of the primitive relations in an SQLite file (args: FILE)",
    .init = storeInit,
    .call = primCall,
    .record = primRecord,
    .lost = primLost,
};
