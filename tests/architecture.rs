//! The layers the crate docs list (src/lib.rs, "Layers"), checked against the code: a module may
//! use its own layer and the ones below it, never one above, and no modules use each other in a
//! circle. Every `crate::` path in code counts (a `use` line, a path in an expression, a group
//! such as `crate::{a, b}`), and so does a `super::` path that climbs out of its module; comments
//! and string literals do not.
//!
//! The checker reads source text rather than asking the compiler, so it runs in `cargo test` with
//! no tool to install; its own tests feed it a small crate with an upward edge and a circle.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;

/// One layer of the list: its name and the top-level modules it holds.
#[derive(Debug, Clone, PartialEq)]
struct Layer {
    name: String,
    modules: Vec<String>,
}

/// A source file: its path as shown, its module path (`src/format/gemini.rs` is
/// `["format", "gemini"]`) and its text.
struct Source {
    shown: String,
    module: Vec<String>,
    text: String,
}

/// A use of another top-level module: where, and which module.
#[derive(Debug, Clone, PartialEq)]
struct Edge {
    line: usize,
    to: String,
}

/// Reads the numbered list under the crate docs' `# Layers` heading: each item is
/// `N. **name** (`module`, `module`): what it holds`, possibly over several lines.
fn read_layers(lib_rs: &str) -> Result<Vec<Layer>, String> {
    let docs: Vec<&str> =
        lib_rs.lines().filter_map(|l| l.strip_prefix("//!")).map(|l| l.strip_prefix(' ').unwrap_or(l)).collect();
    let start =
        docs.iter().position(|l| *l == "# Layers").ok_or("src/lib.rs: no `# Layers` heading in the crate docs")?;
    let mut items: Vec<String> = Vec::new();
    for line in &docs[start + 1..] {
        if line.starts_with('#') {
            break;
        }
        let numbered =
            line.split_once(". ").is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        if numbered {
            items.push(line.to_string());
        } else if let (Some(item), true) = (items.last_mut(), line.starts_with("   ")) {
            item.push(' ');
            item.push_str(line.trim());
        }
    }
    if items.is_empty() {
        return Err("src/lib.rs: the `# Layers` section lists no layers".into());
    }
    items
        .iter()
        .map(|item| {
            let malformed =
                || format!("src/lib.rs: layer item {item:?} is not `N. **name** (`module`, …): what it holds`");
            let rest = item.split_once(". **").ok_or_else(malformed)?.1;
            let (name, rest) = rest.split_once("**").ok_or_else(malformed)?;
            let group = rest.trim_start().strip_prefix('(').and_then(|r| r.split_once(')')).ok_or_else(malformed)?.0;
            let modules: Vec<String> = group.split(',').map(|m| m.trim().trim_matches('`').to_string()).collect();
            if modules.iter().any(|m| m.is_empty() || !m.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')) {
                return Err(malformed());
            }
            Ok(Layer { name: name.to_string(), modules })
        })
        .collect()
}

/// The text with every comment and the inside of every string and char literal blanked out,
/// newlines kept, so what is left is code at its original lines.
fn code_only(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let blank = |out: &mut String, c: char| out.push(if c == '\n' { '\n' } else { ' ' });
    let is_ident = |c: char| c.is_alphanumeric() || c == '_';
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let next = chars.get(i + 1).copied();
        let prev_ident = i > 0 && is_ident(chars[i - 1]);
        if c == '/' && next == Some('/') {
            while i < chars.len() && chars[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if c == '/' && next == Some('*') {
            let mut depth = 0;
            while i < chars.len() {
                if chars[i] == '/' && chars.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if chars[i] == '*' && chars.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
        } else if !prev_ident && (c == 'r' || (c == 'b' && next == Some('r'))) && raw_string_at(&chars, i).is_some() {
            let (open, hashes) = raw_string_at(&chars, i).unwrap();
            (i..open + 1).for_each(|_| out.push(' '));
            i = open + 1;
            while i < chars.len() {
                let closes = chars[i] == '"' && (1..=hashes).all(|k| chars.get(i + k) == Some(&'#'));
                blank(&mut out, chars[i]);
                i += 1;
                if closes {
                    (0..hashes).for_each(|_| out.push(' '));
                    i += hashes;
                    break;
                }
            }
        } else if c == '"' {
            out.push(' ');
            i += 1;
            while i < chars.len() && chars[i] != '"' {
                if chars[i] == '\\' {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
                if i < chars.len() {
                    blank(&mut out, chars[i]);
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if c == '\'' && (next == Some('\\') || chars.get(i + 2) == Some(&'\'')) {
            // A char literal ('x', '\n', '\''); a lifetime ('a) has no closing quote after one char.
            out.push(' ');
            i += 1;
            if chars.get(i) == Some(&'\\') {
                out.push(' ');
                i += 1;
            }
            while i < chars.len() && chars[i] != '\'' {
                blank(&mut out, chars[i]);
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c);
            i += 1;
        }
    }
    out
}

/// Where a raw string starting at `i` (`r"`, `r#"`, `br##"`…) opens its quote, and its `#`s.
fn raw_string_at(chars: &[char], i: usize) -> Option<(usize, usize)> {
    let mut j = if chars[i] == 'b' { i + 2 } else { i + 1 };
    let mut hashes = 0;
    while chars.get(j) == Some(&'#') {
        hashes += 1;
        j += 1;
    }
    (chars.get(j) == Some(&'"')).then_some((j, hashes))
}

/// Code split into identifiers and single punctuation marks (`::` as one), each with its line.
fn tokens(code: &str) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (n, line) in code.lines().enumerate() {
        let chars: Vec<char> = line.chars().collect();
        let mut i = 0;
        while i < chars.len() {
            let c = chars[i];
            if c.is_alphanumeric() || c == '_' {
                let start = i;
                while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                    i += 1;
                }
                out.push((n + 1, chars[start..i].iter().collect()));
            } else if c == ':' && chars.get(i + 1) == Some(&':') {
                out.push((n + 1, "::".into()));
                i += 2;
            } else {
                if !c.is_whitespace() {
                    out.push((n + 1, c.to_string()));
                }
                i += 1;
            }
        }
    }
    out
}

/// Every use of a top-level module other than the file's own: `crate::x…`, `crate::{x, y…}`,
/// and `super::…` paths that climb to the crate root. `module` is the file's module path;
/// inline modules (`mod tests { … }`) are followed, so their `super::` means what it means.
fn edges(module: &[String], text: &str) -> Vec<Edge> {
    let toks = tokens(&code_only(text));
    let tok = |i: usize| toks.get(i).map(|(_, t)| t.as_str()).unwrap_or("");
    let own = module.first().cloned().unwrap_or_default();
    let mut out = Vec::new();
    // Inline modules open now: their name and the brace depth inside them.
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut pending_mod: Option<String> = None;
    let mut depth = 0;
    let mut i = 0;
    while i < toks.len() {
        let (line, t) = (toks[i].0, tok(i));
        match t {
            "mod" if tok(i + 2) == "{" && !tok(i + 1).is_empty() => pending_mod = Some(tok(i + 1).to_string()),
            "{" => {
                depth += 1;
                if let Some(name) = pending_mod.take() {
                    inline.push((name, depth));
                }
            }
            "}" => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth -= 1;
            }
            "crate" if tok(i + 1) == "::" && (i == 0 || tok(i - 1) != "$") => {
                for to in root_names(&toks, i + 2) {
                    out.push(Edge { line, to });
                }
            }
            "super" if tok(i + 1) == "::" && (i == 0 || tok(i - 1) != "::") => {
                let mut climbs = 0;
                let mut j = i;
                while tok(j) == "super" && tok(j + 1) == "::" {
                    climbs += 1;
                    j += 2;
                }
                let mut at: Vec<String> = module.to_vec();
                at.extend(inline.iter().map(|(name, _)| name.clone()));
                if climbs <= at.len() {
                    at.truncate(at.len() - climbs);
                    match at.first() {
                        Some(first) => out.push(Edge { line, to: first.clone() }),
                        None => out.extend(root_names(&toks, j).into_iter().map(|to| Edge { line, to })),
                    }
                }
                i = j;
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    out.retain(|e| e.to != own);
    out
}

/// The top-level module names a path from the crate root names at token `i`: one (`x`), or
/// each member of a group (`{x::a, y}`).
fn root_names(toks: &[(usize, String)], i: usize) -> Vec<String> {
    let tok = |i: usize| toks.get(i).map(|(_, t)| t.as_str()).unwrap_or("");
    let is_name = |t: &str| t.chars().next().is_some_and(|c| c.is_alphabetic() || c == '_');
    if tok(i) != "{" {
        return if is_name(tok(i)) { vec![tok(i).to_string()] } else { Vec::new() };
    }
    let mut names = Vec::new();
    let (mut nesting, mut j, mut expect_name) = (0, i, true);
    loop {
        match tok(j) {
            "" => break,
            "{" => {
                nesting += 1;
                expect_name = true;
            }
            "}" => {
                nesting -= 1;
                if nesting == 0 {
                    break;
                }
            }
            "," if nesting == 1 => expect_name = true,
            t if nesting == 1 && expect_name && is_name(t) => {
                if t != "self" {
                    names.push(t.to_string());
                }
                expect_name = false;
            }
            _ => {}
        }
        j += 1;
    }
    names
}

/// What is wrong with the code against the layers: a module in no layer (or two), an edge that
/// goes up a layer, a use of a module that does not exist, and a circle of modules.
fn check(layers: &[Layer], declared: &[String], sources: &[Source]) -> Vec<String> {
    let mut problems = Vec::new();
    let mut layer_of: BTreeMap<&str, usize> = BTreeMap::new();
    for (n, layer) in layers.iter().enumerate() {
        for m in &layer.modules {
            if let Some(other) = layer_of.insert(m, n) {
                problems.push(format!(
                    "src/lib.rs: `{m}` is listed in two layers, {} and {}",
                    layers[other].name, layer.name
                ));
            }
        }
    }
    for m in declared {
        if !layer_of.contains_key(m.as_str()) {
            problems.push(format!("src/lib.rs: module `{m}` is in no layer of the `# Layers` list; add it to one"));
        }
    }
    for m in layer_of.keys() {
        if !declared.iter().any(|d| d == m) {
            problems.push(format!("src/lib.rs: the `# Layers` list names `{m}`, which the crate does not declare"));
        }
    }
    let shown = |n: usize| format!("{} (layer {})", layers[n].name, n + 1);
    // module -> (used module -> first place it is used)
    let mut graph: BTreeMap<String, BTreeMap<String, String>> = BTreeMap::new();
    for source in sources {
        let Some(from) = source.module.first() else { continue };
        let Some(&from_layer) = layer_of.get(from.as_str()) else { continue };
        for edge in edges(&source.module, &source.text) {
            let place = format!("{}:{}", source.shown, edge.line);
            match layer_of.get(edge.to.as_str()) {
                None if declared.contains(&edge.to) => {}
                None => problems.push(format!("{place}: `{from}` uses `crate::{}`, which is no module of the crate", edge.to)),
                Some(&to_layer) if to_layer > from_layer => problems.push(format!(
                    "{place}: `{from}` in {} uses `{}` in {}, a layer above it; move what it needs down, or the code up",
                    shown(from_layer),
                    edge.to,
                    shown(to_layer)
                )),
                Some(_) => {
                    graph.entry(from.clone()).or_default().entry(edge.to.clone()).or_insert(place);
                }
            }
        }
    }
    problems.extend(circles(&graph));
    problems
}

/// Each circle among the modules (at most one per starting module), with where each step is.
fn circles(graph: &BTreeMap<String, BTreeMap<String, String>>) -> Vec<String> {
    fn walk<'a>(
        graph: &'a BTreeMap<String, BTreeMap<String, String>>,
        at: &'a str,
        path: &mut Vec<&'a str>,
        done: &mut Vec<&'a str>,
        found: &mut Vec<String>,
    ) {
        if let Some(start) = path.iter().position(|p| *p == at) {
            let ring: Vec<&str> = path[start..].iter().copied().chain([at]).collect();
            let steps: Vec<String> =
                ring.windows(2).map(|w| format!("{} -> {} ({})", w[0], w[1], graph[w[0]][w[1]])).collect();
            found.push(format!("modules use each other in a circle: {}", steps.join(", ")));
            return;
        }
        if done.contains(&at) {
            return;
        }
        path.push(at);
        for next in graph.get(at).into_iter().flat_map(|m| m.keys()) {
            walk(graph, next, path, done, found);
        }
        path.pop();
        done.push(at);
    }
    let mut found = Vec::new();
    let mut done = Vec::new();
    for start in graph.keys() {
        walk(graph, start, &mut Vec::new(), &mut done, &mut found);
    }
    found
}

/// The top-level modules src/lib.rs declares (`mod x;`, `pub mod x;`, with attributes).
fn declared_modules(lib_rs: &str) -> Vec<String> {
    let toks = tokens(&code_only(lib_rs));
    (0..toks.len())
        .filter(|&i| toks[i].1 == "mod" && toks.get(i + 2).is_some_and(|(_, t)| t == ";"))
        .filter_map(|i| toks.get(i + 1).map(|(_, t)| t.clone()))
        .collect()
}

/// Every .rs file under `dir`, with its module path below the crate root.
fn read_sources(root: &Path, dir: &Path, out: &mut Vec<Source>) {
    let mut entries: Vec<_> = fs::read_dir(dir).expect("src/ is readable").map(|e| e.unwrap().path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            read_sources(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let relative = path.strip_prefix(root).unwrap();
            let mut module: Vec<String> =
                relative.iter().skip(1).map(|p| p.to_string_lossy().trim_end_matches(".rs").to_string()).collect();
            if matches!(module.last().map(String::as_str), Some("mod" | "lib")) {
                module.pop();
            }
            let text = fs::read_to_string(&path).unwrap();
            out.push(Source { shown: relative.to_string_lossy().into_owned(), module, text });
        }
    }
}

#[test]
fn no_module_uses_a_layer_above_its_own_and_none_form_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let lib_rs = fs::read_to_string(root.join("src/lib.rs")).unwrap();
    let layers = read_layers(&lib_rs).unwrap_or_else(|e| panic!("{e}"));
    let mut sources = Vec::new();
    read_sources(root, &root.join("src"), &mut sources);
    assert!(sources.len() > 30, "read only {} files under src/", sources.len());
    let problems = check(&layers, &declared_modules(&lib_rs), &sources);
    assert!(problems.is_empty(), "{} problem(s):\n{}", problems.len(), problems.join("\n"));
}

/// Each dialect is one folder under src/format named as its frames are in the wire crate, with a
/// provider side and a vocabulary; the client side is there where a gateway client speaks it.
#[test]
fn each_dialect_is_one_folder_named_as_in_the_wire_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let names = |dir: &str, keep: &dyn Fn(&Path) -> bool| -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(root.join(dir))
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| keep(p))
            .map(|p| p.file_stem().unwrap().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let frames = names("wire/src/frames", &|p| p.extension().is_some_and(|e| e == "rs") && !p.ends_with("mod.rs"));
    let dialects = names("src/format", &|p| p.is_dir() && p.join("provider.rs").exists());
    assert_eq!(dialects, frames, "src/format/<dialect>/provider.rs against wire/src/frames/<dialect>.rs");
    let clients = names("src/format", &|p| p.is_dir() && p.join("client.rs").exists());
    assert_eq!(clients, ["anthropic_messages", "openai_chat", "openai_responses"]);
    for dialect in &dialects {
        assert!(root.join("src/format").join(dialect).join("mod.rs").exists(), "src/format/{dialect}/mod.rs");
    }
}

// ---- The checker's own tests, on a small crate ------------------------------------------------

const LIB: &str = "//! A crate.
//!
//! # Layers
//!
//! 1. **ground** (`value`, `failure`): values, and
//!    failures over two lines.
//! 2. **rules** (`rules`): what to do.
//! 3. **top** (`engine`): the rest.
//!
//! # Next
//!
//! 4. **not a layer** (`nothing`): past the section.

pub mod value;
pub mod failure;
pub mod rules;
#[cfg(test)]
mod engine;
";

fn source(shown: &str, text: &str) -> Source {
    let mut module: Vec<String> =
        shown.trim_start_matches("src/").trim_end_matches(".rs").split('/').map(str::to_string).collect();
    if module.last().is_some_and(|m| m == "mod") {
        module.pop();
    }
    Source { shown: shown.into(), module, text: text.into() }
}

fn check_crate(sources: &[Source]) -> Vec<String> {
    check(&read_layers(LIB).unwrap(), &declared_modules(LIB), sources)
}

#[test]
fn the_layer_list_is_read_from_the_crate_docs() {
    let layers = read_layers(LIB).unwrap();
    let names: Vec<(&str, Vec<&str>)> =
        layers.iter().map(|l| (l.name.as_str(), l.modules.iter().map(String::as_str).collect())).collect();
    assert_eq!(names, [("ground", vec!["value", "failure"]), ("rules", vec!["rules"]), ("top", vec!["engine"])]);
    assert_eq!(declared_modules(LIB), ["value", "failure", "rules", "engine"]);
    assert!(read_layers("//! Docs\n").unwrap_err().contains("no `# Layers` heading"));
    assert!(read_layers("//! # Layers\n//!\n//! 1. ground: no modules\n").unwrap_err().contains("is not `N. **name**"));
}

#[test]
fn an_upward_edge_is_named_with_its_file_line_and_layers() {
    let sources = [
        source("src/value.rs", "//! Values.\n\npub const MAX: u64 = 1;\n"),
        source(
            "src/failure.rs",
            "//! Failures.\nuse crate::value::MAX;\n\nfn wait() -> u64 {\n    crate::rules::delay(MAX)\n}\n",
        ),
        source("src/rules.rs", "use crate::{failure::Failure, value};\npub fn delay(ms: u64) -> u64 { ms }\n"),
        source("src/engine/mod.rs", "mod attempt;\nuse crate::rules::delay;\n"),
    ];
    assert_eq!(
        check_crate(&sources),
        ["src/failure.rs:5: `failure` in ground (layer 1) uses `rules` in rules (layer 2), a layer above it; move what it needs down, or the code up"]
    );
}

#[test]
fn super_paths_that_leave_the_module_count_and_comments_and_strings_do_not() {
    let sources = [
        source(
            "src/value.rs",
            concat!(
                "// crate::engine::x in a comment\n",
                "/* crate::engine /* nested */ crate::rules */\n",
                "const A: &str = \"crate::engine::Call\";\n",
                "const B: &str = r#\"use crate::rules;\"#;\n",
                "const C: char = '\"'; const D: char = '{';\n",
                "fn f<'a>(x: &'a str) -> &'a str { x }\n",
                "#[cfg(test)]\nmod tests {\n    use super::*;\n    use super::super::rules::delay;\n}\n",
                "use self::inner::X;\n",
            ),
        ),
        source("src/engine/attempt.rs", "use super::Call;\nuse super::super::failure::Failure;\n"),
    ];
    assert_eq!(
        check_crate(&sources),
        ["src/value.rs:10: `value` in ground (layer 1) uses `rules` in rules (layer 2), a layer above it; move what it needs down, or the code up"]
    );
}

#[test]
fn a_circle_within_a_layer_a_module_in_no_layer_and_an_unknown_module_are_named() {
    let sources = [
        source("src/value.rs", "use crate::failure::Failure;\n"),
        source("src/failure.rs", "\nfn f() -> crate::value::Value { todo!() }\nuse crate::nowhere::X;\n"),
    ];
    let lib = format!("{LIB}pub mod extra;\n");
    assert_eq!(
        check(&read_layers(&lib).unwrap(), &declared_modules(&lib), &sources),
        [
            "src/lib.rs: module `extra` is in no layer of the `# Layers` list; add it to one",
            "src/failure.rs:3: `failure` uses `crate::nowhere`, which is no module of the crate",
            "modules use each other in a circle: failure -> value (src/failure.rs:2), value -> failure (src/value.rs:1)",
        ]
    );
}
