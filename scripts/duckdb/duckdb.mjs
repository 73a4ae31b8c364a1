#!/usr/bin/env node
// duckdb.mjs runs SQL in an in-memory DuckDB, an independent Parquet writer
// and reader for the mtkit record tests.
//
// Usage: node duckdb.mjs < statements.sql > rows.json
//
// stdin holds SQL statements separated by ";"; they run in order and stdout
// gets the rows of the last one as a JSON array of objects (values as
// DuckDB's JSON rendering: big integers and timestamps as strings).
// DuckDB (@duckdb/node-api) is loaded from the fixture directory that
// scripts/fixtures.sh fills: $MTKIT_FIXTURES, else
// ${MTKIT_CACHE:-$HOME/.cache/mtkit}/fixtures.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const fixtures =
  process.env.MTKIT_FIXTURES ||
  path.join(process.env.MTKIT_CACHE || path.join(os.homedir(), ".cache", "mtkit"), "fixtures");
const entry = path.join(fixtures, "node_modules", "@duckdb", "node-api", "lib", "index.js");
if (!fs.existsSync(entry)) {
  process.stderr.write(`duckdb: ${entry} missing: run scripts/fixtures.sh\n`);
  process.exit(1);
}
const { DuckDBInstance } = await import(pathToFileURL(entry).href);

const sql = fs.readFileSync(0, "utf8");
const db = await DuckDBInstance.create(":memory:");
const conn = await db.connect();
try {
  const result = await conn.runAndReadAll(sql);
  process.stdout.write(JSON.stringify(result.getRowObjectsJson()));
} catch (e) {
  process.stderr.write(`duckdb: ${e.message}\n`);
  process.exit(1);
}
