#!/usr/bin/env node
// tokref.mjs prints reference token ids for the mtkit tokenizer tests.
//
// Usage: node tokref.mjs MODEL < strings.json > ids.json
//
// MODEL is a path to a Hugging Face tokenizer.json (encoded with the pure-JS
// reference engine @huggingface/tokenizers, no special tokens added by the
// post-processor) or a tiktoken encoding name, o200k_base or cl100k_base
// (encoded with js-tiktoken, every special token allowed).
// stdin holds a JSON array of strings; stdout gets a JSON array with one
// array of ids per string, in the same order.
// The engines are loaded from the fixture directory that scripts/fixtures.sh
// fills: $MTKIT_FIXTURES, else ${MTKIT_CACHE:-$HOME/.cache/mtkit}/fixtures.
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";

const fixtures =
  process.env.MTKIT_FIXTURES ||
  path.join(process.env.MTKIT_CACHE || path.join(os.homedir(), ".cache", "mtkit"), "fixtures");

function fail(msg) {
  process.stderr.write(`tokref: ${msg}\n`);
  process.exit(1);
}

async function importPkg(rel) {
  const p = path.join(fixtures, "node_modules", rel);
  if (!fs.existsSync(p)) fail(`${p} missing: run scripts/fixtures.sh`);
  return import(pathToFileURL(p).href);
}

async function encoderFor(model) {
  if (model === "o200k_base" || model === "cl100k_base") {
    const { getEncoding } = await importPkg("js-tiktoken/dist/index.js");
    const enc = getEncoding(model);
    return (s) => enc.encode(s, "all");
  }
  const { Tokenizer } = await importPkg("@huggingface/tokenizers/dist/tokenizers.mjs");
  const file = fs.realpathSync(model);
  const json = JSON.parse(fs.readFileSync(file, "utf8"));
  const cfgPath = path.join(path.dirname(file), "tokenizer_config.json");
  const cfg = fs.existsSync(cfgPath) ? JSON.parse(fs.readFileSync(cfgPath, "utf8")) : {};
  const tok = new Tokenizer(json, cfg);
  return (s) => tok.encode(s, { add_special_tokens: false }).ids;
}

const model = process.argv[2];
if (!model) fail("usage: node tokref.mjs MODEL < strings.json");
const encode = await encoderFor(model);
const input = JSON.parse(fs.readFileSync(0, "utf8"));
if (!Array.isArray(input)) fail("stdin: want a JSON array of strings");
const out = input.map((s, i) => {
  if (typeof s !== "string") fail(`stdin: element ${i}: want a string`);
  return Array.from(encode(s), Number);
});
process.stdout.write(JSON.stringify(out) + "\n");
