// node scripts/short-imports.mjs pkg/wasm/NAME: gives the functions the wasm imports from its
// wasm-bindgen glue (NAME.js) short names, in both files.
//
// wasm-bindgen names each import after the JavaScript it calls plus a 16-digit hash
// (`__wbg_getReader_77dea20191f4fda2`), and writes each name twice: in the wasm's import section and
// as a key of the glue's import object. The hashes are random text that gzip cannot shrink:
// about 2 KB gzipped of each entry's download, for names nothing else reads. Each key of the
// glue's object is renamed where it is defined, once, so a glue whose shape changed fails the
// build here instead of loading a wasm whose imports it does not provide.
import { readFileSync, writeFileSync } from "node:fs";
import { basename } from "node:path";

const [stem] = process.argv.slice(2);
if (!stem) throw new Error("usage: node scripts/short-imports.mjs pkg/wasm/NAME");
const wasmPath = `${stem}_bg.wasm`;
const gluePath = `${stem}.js`;
const glueModule = `./${basename(stem)}_bg.js`;
const wasm = readFileSync(wasmPath);
let glue = readFileSync(gluePath, "utf8");

/** An unsigned LEB128 at `at`: `[value, next offset]`. */
function readU32(bytes, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const byte = bytes[at++];
    value |= (byte & 0x7f) << shift;
    if (byte < 0x80) return [value >>> 0, at];
    shift += 7;
  }
}

function u32(value) {
  const out = [];
  do {
    let byte = value & 0x7f;
    value >>>= 7;
    if (value !== 0) byte |= 0x80;
    out.push(byte);
  } while (value !== 0);
  return Buffer.from(out);
}

const utf8 = (text) => Buffer.from(text, "utf8");
const name = (text) => Buffer.concat([u32(utf8(text).length), utf8(text)]);

/** Where a function import's descriptor (kind 0, then its type index) that starts at `at` ends. */
function functionDescriptorEnd(bytes, at) {
  if (bytes[at] !== 0x00) throw new Error(`${wasmPath}: an import of kind ${bytes[at]}, not a function`);
  return readU32(bytes, at + 1)[1];
}

/** `a`, `b`, ... `z`, `A` ... `Z`, `aa`, `ab` ...: the `index`th short name, a valid JS identifier. */
function shortName(index) {
  const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
  let text = "";
  do {
    text = letters[index % letters.length] + text;
    index = Math.floor(index / letters.length) - 1;
  } while (index >= 0);
  return text;
}

const parts = [wasm.subarray(0, 8)];
let at = 8;
let renamed = 0;
while (at < wasm.length) {
  const id = wasm[at];
  const [size, body] = readU32(wasm, at + 1);
  const end = body + size;
  if (id !== 2) {
    parts.push(wasm.subarray(at, end));
    at = end;
    continue;
  }
  const [count, first] = readU32(wasm, body);
  const imports = [u32(count)];
  let p = first;
  for (let i = 0; i < count; i++) {
    const [moduleLength, moduleStart] = readU32(wasm, p);
    const module = wasm.toString("utf8", moduleStart, moduleStart + moduleLength);
    const [fieldLength, fieldStart] = readU32(wasm, moduleStart + moduleLength);
    const field = wasm.toString("utf8", fieldStart, fieldStart + fieldLength);
    const descriptorStart = fieldStart + fieldLength;
    p = functionDescriptorEnd(wasm, descriptorStart);
    let newField = field;
    if (module === glueModule) {
      newField = shortName(renamed++);
      const key = `\n        ${field}: `;
      const found = glue.split(key).length - 1;
      if (found !== 1) throw new Error(`${gluePath}: the import ${field} is defined ${found} times, not once`);
      glue = glue.replace(key, `\n        ${newField}: `);
    }
    imports.push(name(module), name(newField), wasm.subarray(descriptorStart, p));
  }
  const section = Buffer.concat(imports);
  parts.push(Buffer.from([2]), u32(section.length), section);
  at = end;
}
if (renamed === 0) throw new Error(`${wasmPath}: no import from ${glueModule}`);
writeFileSync(wasmPath, Buffer.concat(parts));
writeFileSync(gluePath, glue);
console.log(`${wasmPath}: ${renamed} imports renamed`);
