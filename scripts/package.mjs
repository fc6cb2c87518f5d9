// `make package`: the npm package as the registry would serve it, dist/llm-baton-<version>.tgz.
// pkg/ holds the package's code, while its README and licenses live at the repository root. So
// pkg/ is copied into a staging folder with the root's README.md, LICENSE-MIT and LICENSE-APACHE
// (nothing copied is committed into pkg/, so nothing drifts), and `npm pack` packs that folder.
// The README's relative links (docs/ pages, examples/) would be dead on npm and in node_modules,
// so they are made absolute: into the repository named by package.json `repository`, on its main
// branch (a release tag would pin them, but nothing makes tags yet; main always resolves).
//
// Usage: node scripts/package.mjs [--out-dir DIR]  (default dist/); prints the tarball's path and size.
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, posix, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

export const repo = fileURLToPath(new URL("../", import.meta.url));
/** The branch the README's links point at in the repository. */
export const LINK_REF = "main";
/** Copied from the repository root into the package at pack time, besides the README. */
const LICENSES = ["LICENSE-MIT", "LICENSE-APACHE"];

/** `https://github.com/owner/name` from package.json's `repository` (a string or `{ url }`). */
export function repositoryUrl(manifest) {
  const url = typeof manifest.repository === "string" ? manifest.repository : manifest.repository?.url;
  const m = /^(?:git\+)?(https:\/\/github\.com\/[^/]+\/[^/]+?)(?:\.git)?\/?$/.exec(url ?? "");
  if (!m) throw new Error(`pkg/package.json: repository.url is ${JSON.stringify(url)}; expected "git+https://github.com/OWNER/NAME.git"`);
  return m[1];
}

/**
 * The markdown with every relative link and image made absolute. `base` is the repository's
 * `https://github.com/owner/name`; `isDirectory(path)` says whether a repository path is a folder
 * (linked as tree/, not blob/). Images (`![..](..)`, `src="..."`) point at the raw file so they
 * render. In-page anchors, absolute URLs and anything inside code (fences or backtick spans) are
 * left alone. A link that leaves the repository (`../x`) is an error.
 */
export function absoluteLinks(markdown, { base, ref = LINK_REF, isDirectory = () => false }) {
  const raw = base.replace("https://github.com/", "https://raw.githubusercontent.com/");
  const absolute = (target, image) => {
    if (/^([a-z][a-z0-9+.-]*:|#|\/\/)/i.test(target)) return target;
    const at = target.search(/[?#]/);
    const [path, rest] = at === -1 ? [target, ""] : [target.slice(0, at), target.slice(at)];
    const normal = posix.normalize(path.replace(/^\//, "")).replace(/\/$/, "");
    if (normal === ".." || normal.startsWith("../")) throw new Error(`README.md links to ${target}, outside the repository`);
    if (image) return `${raw}/${ref}/${normal}${rest}`;
    return `${base}/${isDirectory(normal) ? "tree" : "blob"}/${ref}/${normal === "." ? "" : normal}${rest}`;
  };
  let fence = null;
  return markdown
    .split("\n")
    .map((line) => {
      const opens = /^ {0,3}(`{3,}|~{3,})/.exec(line);
      if (fence) {
        if (opens && opens[1][0] === fence[0] && opens[1].length >= fence.length && !line.slice(opens[0].length).trim()) fence = null;
        return line;
      }
      if (opens) {
        fence = opens[1];
        return line;
      }
      const code = codeSpans(line);
      const inCode = (i) => code.some(([from, to]) => i >= from && i < to);
      return line
        .replace(/(!?)\[((?:[^\[\]]|\[[^\]]*\])*)\]\(\s*(<[^>]*>|[^)\s]+)((?:\s+"[^"]*")?\s*)\)/g, (all, bang, text, target, title, i) => {
          if (inCode(i + bang.length + text.length + 2)) return all;
          const bare = target.startsWith("<") ? target.slice(1, -1) : target;
          return `${bang}[${text}](${absolute(bare, bang === "!")}${title})`;
        })
        .replace(/^( {0,3}\[[^\]]+\]:\s*)(\S+)/, (all, label, target) => label + absolute(target, false))
        .replace(/\b(href|src)="([^"]*)"/g, (all, attr, target, i) => (inCode(i) ? all : `${attr}="${absolute(target, attr === "src")}"`));
    })
    .join("\n");
}

/** The [start, end) ranges of a line's backtick code spans. */
function codeSpans(line) {
  const spans = [];
  const runs = [...line.matchAll(/`+/g)];
  for (let i = 0; i < runs.length; i++) {
    const close = runs.findIndex((r, j) => j > i && r[0].length === runs[i][0].length);
    if (close === -1) continue;
    spans.push([runs[i].index, runs[close].index + runs[close][0].length]);
    i = close;
  }
  return spans;
}

/** The root README.md as the package carries it: its links into the repository made absolute. */
export function packageReadme(manifest) {
  const isDirectory = (path) => existsSync(join(repo, path)) && statSync(join(repo, path)).isDirectory();
  return absoluteLinks(readFileSync(join(repo, "README.md"), "utf8"), { base: repositoryUrl(manifest), isDirectory });
}

/**
 * Packs pkg/ with the root's README and licenses into `outDir`; returns `{ tarball, files,
 * unpackedSize }` (its path, how many files it holds, their bytes). Every
 * plain path in package.json `files` must exist (npm would silently pack without it: a missing
 * wasm means `make build` has not run).
 */
export function buildPackage({ outDir = join(repo, "dist") } = {}) {
  const manifest = JSON.parse(readFileSync(join(repo, "pkg/package.json"), "utf8"));
  const missing = manifest.files.filter((f) => !/[*?]/.test(f) && !LICENSES.includes(f) && !existsSync(join(repo, "pkg", f)));
  if (missing.length) throw new Error(`pkg/ lacks ${missing.join(", ")} (listed in pkg/package.json "files"); run \`make build\` first`);
  const stage = mkdtempSync(join(tmpdir(), "llm-baton-package-"));
  try {
    cpSync(join(repo, "pkg"), stage, { recursive: true, filter: (src) => !src.includes("/node_modules") });
    writeFileSync(join(stage, "README.md"), packageReadme(manifest));
    for (const f of LICENSES) cpSync(join(repo, f), join(stage, f));
    mkdirSync(outDir, { recursive: true });
    const out = resolve(outDir);
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", out], { cwd: stage, encoding: "utf8" }));
    return { tarball: join(out, packed.filename), files: packed.files.length, unpackedSize: packed.unpackedSize };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const at = process.argv.indexOf("--out-dir");
  try {
    if (at !== -1 && !process.argv[at + 1]) throw new Error("--out-dir needs a folder");
    const { tarball, files, unpackedSize } = buildPackage(at === -1 ? {} : { outDir: process.argv[at + 1] });
    console.log(`${tarball}: ${statSync(tarball).size} bytes, ${files} files, ${unpackedSize} bytes unpacked`);
  } catch (e) {
    console.error(`make package: ${e.message}`);
    process.exit(1);
  }
}
