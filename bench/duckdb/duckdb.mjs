// duckdb.mjs - DuckDB, the column-store peer of make bench (bench/run.sh).
//
//   node bench/duckdb/duckdb.mjs --csv DIR --out OUTDIR [--reps N] NAME:FORM=FILE.sql...
//
// Loads every primitive relation of a recording, as `tqmon load --csv DIR`
// wrote it (DIR/schema.csv gives the column types), into DuckDB tables by
// the route DuckDB's import guide recommends for a bulk export: CREATE
// TABLE AS SELECT * FROM read_csv(...) with the columns given (no
// sniffing).  Then each query form (FILE.sql: one SELECT) runs N times on
// those tables.  Times are measured inside the process (performance.now),
// so node's own start (~50 ms) is left out of DuckDB's figures; a fresh
// in-memory database per load, the best of N loads.
//
// Prints "key value" lines:
//   duck.version V, duck.threads T
//   duck.load_ms BEST, duck.load_runs MS..., duck.load.REL_ms MS (best run)
//   duck.NAME.FORM.ms BEST, .runs, .rows N, .error MESSAGE, .note TEXT
// and writes each form's answer, one row a line (values joined by |, as
// sqlite3 prints them), sorted, to OUTDIR/duck-NAME-FORM.rows.
//
// A form DuckDB refuses is run again with SQLite's two-argument scalar
// MAX/MIN written as GREATEST/LEAST (the only SQLite dialect `tqmon sql`
// uses that DuckDB lacks); the note says so, and the first error is kept.
import fs from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, version } from '@duckdb/node-api';

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
let best = null, runs = [], conn = null, keep = null;
for (let r = 0; r < reps; r++) {
  const per = {};
  const t0 = performance.now();
  const inst = await DuckDBInstance.create(':memory:');
  const c = await inst.connect();
  for (const [rel, cols] of schema) {
    const s = performance.now();
    await c.run(loadSql(rel, cols));
    per[rel] = performance.now() - s;
  }
  const ms = performance.now() - t0;
  runs.push(ms.toFixed(1));
  if (best === null || ms < best.ms) best = { ms, per };
  if (conn) conn.closeSync();
  conn = c;
  keep = inst; // (the last database answers the queries)
}
const threads = (await conn.runAndReadAll("SELECT current_setting('threads')")).getRows()[0][0];
say('duck.threads', cell(threads));
say('duck.load_ms', best.ms.toFixed(1));
say('duck.load_runs', runs.join(' '));
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
    const again = scalarMinMax(sql);
    if (again !== sql) {
      say(`${key}.error_original`, oneLine(e));
      say(`${key}.note`, 'refused as written; run with scalar MAX/MIN as GREATEST/LEAST');
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
