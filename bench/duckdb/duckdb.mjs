// duckdb.mjs - DuckDB, the column-store peer of make bench (bench/run.sh).
//
//   node bench/duckdb/duckdb.mjs --csv DIR --out OUTDIR [--reps N] NAME:FORM=FILE.sql...
//
// Loads every primitive relation of a recording, as `tqmon load --csv DIR`
// wrote it (DIR/schema.csv gives the column types), into DuckDB tables by
// two documented routes, each timed: read_csv, the route DuckDB's import
// guide recommends for a bulk export (CREATE TABLE AS SELECT * FROM
// read_csv(...) with the columns given, no sniffing), and the Appender
// (the client API's bulk insert: the CSV files parsed here, in node, and
// appended a data chunk of rows at a time).  The faster route is DuckDB's
// load.  Then each query form (FILE.sql: one SELECT) runs N times on
// those tables.  Times are measured inside the process (performance.now),
// so node's own start (~50 ms) is left out of DuckDB's figures; a fresh
// in-memory database per load, the best of N loads of each route.
//
// Prints "key value" lines:
//   duck.version V, duck.threads T
//   duck.route.ROUTE_ms BEST (read_csv, appender), duck.route.ROUTE_runs MS...
//   duck.load_route ROUTE (the faster), duck.load_ms BEST, duck.load_runs
//   MS..., duck.load.REL_ms MS (its best run)
//   duck.NAME.FORM.ms BEST, .runs, .rows N, .error MESSAGE, .note TEXT
// and writes each form's answer, one row a line (values joined by |, as
// sqlite3 prints them), sorted, to OUTDIR/duck-NAME-FORM.rows.
//
// A form DuckDB refuses is run again with SQLite's dialect written as
// DuckDB's: the two-argument scalar MAX/MIN as GREATEST/LEAST, and integer
// literals as BIGINT (SQLite's integers are 64-bit; DuckDB types a literal
// that fits 32 bits as INTEGER, so a recursive clock `t + 1000000000`
// overflows INT32); the note says so, and the first error is kept.
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBDataChunkWriter, DuckDBInstance, JSToDuckDBValueConverter, version } from '@duckdb/node-api';

const args = process.argv.slice(2);
let csvDir = null, outDir = null, reps = 3;
const forms = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--csv') csvDir = args[++i];
  else if (args[i] === '--out') outDir = args[++i];
  else if (args[i] === '--reps') reps = Math.max(1, parseInt(args[++i], 10) || 1);
  else {
    const m = /^([A-Za-z0-9_]+):([A-Za-z0-9_]+)=(.+)$/.exec(args[i]);
    if (!m) {
      console.error(`duckdb.mjs: bad argument ${args[i]} (want NAME:FORM=FILE.sql)`);
      process.exit(2);
    }
    forms.push({ name: m[1], form: m[2], file: m[3] });
  }
}
if (!csvDir || !outDir) {
  console.error('usage: node duckdb.mjs --csv DIR --out OUTDIR [--reps N] NAME:FORM=FILE.sql...');
  process.exit(2);
}
const say = (k, v) => console.log(`${k} ${v}`);
const oneLine = (e) => String(e && e.message ? e.message : e).replace(/\s+/g, ' ').trim();
const sqlString = (s) => `'${s.replace(/'/g, "''")}'`;
const ident = (s) => `"${s.replace(/"/g, '""')}"`;

// schema.csv: relation,column,type (names are identifiers: no commas)
const schema = new Map();
for (const line of fs.readFileSync(path.join(csvDir, 'schema.csv'), 'utf8').split('\n').slice(1)) {
  if (!line) continue;
  const [rel, col, type] = line.split(',');
  if (!schema.has(rel)) schema.set(rel, []);
  schema.get(rel).push([col, type]);
}

function loadSql(rel, cols) {
  const spec = cols.map(([c, t]) => `${sqlString(c)}: ${sqlString(t)}`).join(', ');
  const file = path.resolve(csvDir, `${rel}.csv`);
  return `CREATE TABLE ${ident(rel)} AS SELECT * FROM read_csv(${sqlString(file)}, header = true, ` +
    `columns = {${spec}}, auto_detect = false)`;
}

// The Appender route: the table created with the columns' types, the CSV
// file (RFC 4180: a quoted field may hold commas, quotes doubled and line
// breaks; an empty BIGINT field is NULL) parsed and appended row by row
// through a data chunk writer.
function* csvRows(text) {
  let i = text.indexOf('\n') + 1; // (the header)
  const n = text.length;
  while (i < n) {
    const row = [];
    for (;;) {
      let v;
      if (text[i] === '"') {
        let j = i + 1;
        v = '';
        for (;;) {
          const q = text.indexOf('"', j);
          if (q < 0) throw new Error('unterminated quoted field');
          v += text.slice(j, q);
          if (text[q + 1] === '"') { v += '"'; j = q + 2; } else { i = q + 1; break; }
        }
      } else {
        let j = i;
        while (j < n && text[j] !== ',' && text[j] !== '\n') j++;
        v = text.slice(i, j);
        i = j;
      }
      row.push(v);
      if (text[i] === ',') { i++; continue; }
      i++; // (the line's end)
      break;
    }
    yield row;
  }
}
async function loadAppender(c, rel, cols) {
  await c.run(`CREATE TABLE ${ident(rel)} (${cols.map(([n, t]) => `${ident(n)} ${t}`).join(', ')})`);
  const app = await c.createAppender(rel);
  const w = DuckDBDataChunkWriter.forAppender(app, { converter: JSToDuckDBValueConverter });
  const big = cols.map(([, t]) => t === 'BIGINT');
  for (const row of csvRows(fs.readFileSync(path.resolve(csvDir, `${rel}.csv`), 'utf8'))) {
    for (let k = 0; k < row.length; k++) if (big[k]) row[k] = row[k] === '' ? null : BigInt(row[k]);
    w.appendRow(row);
  }
  w.flush();
  app.flushSync();
  app.closeSync();
}

// Integer literals (outside quotes and identifiers) as BIGINT, except one
// standing for a truth value (`WHERE 1 AND ...`): SQLite's integers are
// 64-bit, DuckDB's INTEGER literals 32-bit.
function bigintLiterals(sql) {
  let out = '', i = 0;
  const n = sql.length;
  while (i < n) {
    const ch = sql[i];
    if (ch === "'" || ch === '"') {
      let j = sql.indexOf(ch, i + 1);
      while (j >= 0 && sql[j + 1] === ch) j = sql.indexOf(ch, j + 2);
      j = j < 0 ? n : j + 1;
      out += sql.slice(i, j);
      i = j;
      continue;
    }
    if (/[0-9]/.test(ch) && !/[A-Za-z0-9_.]/.test(sql[i - 1] || ' ')) {
      let j = i;
      while (j < n && /[0-9]/.test(sql[j])) j++;
      if (!/[A-Za-z_.]/.test(sql[j] || ' ')) {
        const before = sql.slice(0, i).trimEnd(), after = sql.slice(j).trimStart();
        const truth = /(\bWHERE|\bAND|\bOR|\(|\bNOT)$/i.test(before) && /^(AND\b|OR\b|\)|$|;)/i.test(after);
        out += truth ? sql.slice(i, j) : `CAST(${sql.slice(i, j)} AS BIGINT)`;
        i = j;
        continue;
      }
      out += sql.slice(i, j);
      i = j;
      continue;
    }
    out += ch;
    i++;
  }
  return out;
}

// SQLite's scalar max(a, b) / min(a, b) as DuckDB's greatest / least: a
// call whose arguments hold a comma at their top level.
function scalarMinMax(sql) {
  let out = '', i = 0;
  const re = /\b(MAX|MIN)\s*\(/gi;
  for (let m; (m = re.exec(sql));) {
    let depth = 0, comma = false, j = m.index + m[0].length - 1, quote = null;
    for (; j < sql.length; j++) {
      const ch = sql[j];
      if (quote) { if (ch === quote) quote = null; continue; }
      if (ch === "'" || ch === '"') quote = ch;
      else if (ch === '(') depth++;
      else if (ch === ')') { if (--depth === 0) break; }
      else if (ch === ',' && depth === 1) comma = true;
    }
    if (!comma) continue;
    out += sql.slice(i, m.index) + (m[1].toUpperCase() === 'MAX' ? 'GREATEST(' : 'LEAST(');
    i = m.index + m[0].length;
  }
  return out + sql.slice(i);
}

const cell = (v) => (v === null || v === undefined ? '' : typeof v === 'object' && v.toString ? v.toString() : String(v));

say('duck.version', version());
const routes = {
  read_csv: (c, rel, cols) => c.run(loadSql(rel, cols)),
  appender: loadAppender,
};
let best = null, conn = null, keep = null;
const routeRuns = {};
for (let r = 0; r < reps; r++) {
  for (const [route, load] of Object.entries(routes)) {
    const per = {};
    const t0 = performance.now();
    const inst = await DuckDBInstance.create(':memory:');
    const c = await inst.connect();
    for (const [rel, cols] of schema) {
      const s = performance.now();
      await load(c, rel, cols);
      per[rel] = performance.now() - s;
    }
    const ms = performance.now() - t0;
    (routeRuns[route] ||= []).push(ms);
    if (best === null || ms < best.ms) best = { ms, per, route };
    if (conn) conn.closeSync();
    conn = c;
    keep = inst; // (the last database answers the queries: the same tables either way)
  }
}
const threads = (await conn.runAndReadAll("SELECT current_setting('threads')")).getRows()[0][0];
say('duck.threads', cell(threads));
for (const [route, ms] of Object.entries(routeRuns)) {
  say(`duck.route.${route}_ms`, Math.min(...ms).toFixed(1));
  say(`duck.route.${route}_runs`, ms.map((m) => m.toFixed(1)).join(' '));
}
say('duck.load_route', best.route);
say('duck.load_ms', best.ms.toFixed(1));
say('duck.load_runs', routeRuns[best.route].map((m) => m.toFixed(1)).join(' '));
for (const [rel, ms] of Object.entries(best.per)) say(`duck.load.${rel}_ms`, ms.toFixed(1));

for (const f of forms) {
  const key = `duck.${f.name}.${f.form}`;
  let sql = fs.readFileSync(f.file, 'utf8').replace(/;\s*$/, '');
  // tqmon sql --print writes "-- NAME" before its statement
  sql = sql.replace(/^\s*--[^\n]*\n/gm, '').trim().replace(/;$/, '');
  let rows = null, times = [];
  try {
    await conn.run(`EXPLAIN ${sql}`);
  } catch (e) {
    const again = bigintLiterals(scalarMinMax(sql));
    if (again !== sql) {
      say(`${key}.error_original`, oneLine(e));
      say(`${key}.note`, "refused as written; run in DuckDB's dialect (scalar MAX/MIN as GREATEST/LEAST, integer literals as BIGINT)");
      sql = again;
    }
  }
  try {
    for (let r = 0; r < reps; r++) {
      const s = performance.now();
      const res = await conn.runAndReadAll(sql);
      times.push(performance.now() - s);
      if (!rows) rows = res.getRows();
    }
  } catch (e) {
    say(`${key}.error`, oneLine(e));
    continue;
  }
  const lines = rows.map((row) => row.map(cell).join('|')).sort();
  fs.writeFileSync(path.join(outDir, `duck-${f.name}-${f.form}.rows`), lines.length ? lines.join('\n') + '\n' : '');
  say(`${key}.ms`, Math.min(...times).toFixed(1));
  say(`${key}.runs`, times.map((t) => t.toFixed(1)).join(' '));
  say(`${key}.rows`, rows.length);
}
conn.closeSync();
void keep;
