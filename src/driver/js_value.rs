//! JS values read as they are, not as `JSON.stringify` would print them.
//!
//! `JSON.stringify` turns NaN and ±Infinity into `null` and silently drops functions, symbols
//! and `undefined` list items, so `deadlineMs: NaN` once read as "no deadline" and
//! `apiKey: NaN` as "no key". This walk converts a JS value to a `serde_json::Value` itself and
//! refuses, naming the path, whatever JSON cannot hold: a non-finite number, a symbol, function
//! or BigInt, a property whose getter throws, `undefined` or a hole in a list, an object that is
//! not plain (a Date, Map, typed array or class instance), a cycle, or nesting past
//! [`MAX_DEPTH`]. `undefined` in an object is an absent field, as in JSON, except where a config
//! holds a secret ([`undefined_secret`]): there it is an unset environment variable far more often
//! than a field left out on purpose, and read as absent it would end as the provider's 401. Strings
//! convert as wasm-bindgen converts them: a lone surrogate becomes U+FFFD, on purpose.
//!
//! Every JS operation that may run the caller's code (getters, proxy traps) goes through an
//! import that catches, so a throw becomes an error here and never unwinds through the wasm.

use js_sys::{Array, Reflect};
use serde_json::{Map, Number, Value};
use wasm_bindgen::prelude::*;

use crate::config::undefined_secret;
use crate::value::{child, show, FieldError, Step};

/// Objects and lists nested deeper than this are refused.
const MAX_DEPTH: usize = 64;
/// The most values one document may hold, so a list that claims a huge length or a shared
/// sub-object referenced many times cannot keep the walk going.
const MAX_VALUES: usize = 1_000_000;
/// The largest integer a JS number holds exactly (2^53 - 1).
const MAX_SAFE_INTEGER: f64 = 9_007_199_254_740_991.0;

#[wasm_bindgen]
extern "C" {
    #[wasm_bindgen(js_namespace = Object, js_name = keys, catch)]
    fn object_keys(value: &JsValue) -> Result<Array, JsValue>;
    #[wasm_bindgen(js_namespace = Array, js_name = isArray, catch)]
    fn is_array(value: &JsValue) -> Result<bool, JsValue>;
    #[wasm_bindgen(js_namespace = Object, js_name = getPrototypeOf, catch)]
    fn prototype_of(value: &JsValue) -> Result<JsValue, JsValue>;
    /// `Object.prototype.toString.call(value)`: "[object Date]", "[object Map]"...
    #[wasm_bindgen(js_namespace = ["Object", "prototype", "toString"], js_name = call, catch)]
    fn object_tag(value: &JsValue) -> Result<JsValue, JsValue>;
}

/// Converts the JS value at `path` ("request", "options.deadlineMs") to JSON.
pub(crate) fn read_js(value: &JsValue, path: &str) -> Result<Value, FieldError> {
    walk(value, path, |_, _| None)
}

/// Converts a JS config document to JSON (paths from its root, which is ""), refusing `undefined`
/// where the config holds a secret.
pub(crate) fn read_js_config(value: &JsValue) -> Result<Value, FieldError> {
    walk(value, "", undefined_secret)
}

/// The error for an `undefined` field or item at a step path (and its printed path), if any.
type UndefinedRule = fn(&[Step], &str) -> Option<FieldError>;

fn walk(value: &JsValue, path: &str, undefined: UndefinedRule) -> Result<Value, FieldError> {
    let object_prototype = prototype_of(&js_sys::Object::new()).map_err(|e| threw(path, &e))?;
    Walk { object_prototype, ancestors: Vec::new(), undefined, values: 0 }.read(value, path, None)
}

/// Where a value sits: its step, and its parent's place (`None`: the parent is the root). Kept
/// on the stack as the walk descends, so reading a field costs no allocation for it.
struct At<'a> {
    step: Step<'a>,
    parent: Option<&'a At<'a>>,
}

impl At<'_> {
    /// The steps from the root to here.
    fn steps(&self) -> Vec<Step<'_>> {
        let mut steps = vec![self.step];
        let mut at = self.parent;
        while let Some(place) = at {
            steps.push(place.step);
            at = place.parent;
        }
        steps.reverse();
        steps
    }
}

struct Walk {
    /// `Object.prototype`: a plain object has it, or no prototype at all.
    object_prototype: JsValue,
    /// The objects and lists being read, outermost first, with their paths; one met again is a cycle.
    ancestors: Vec<(JsValue, String)>,
    undefined: UndefinedRule,
    values: usize,
}

impl Walk {
    fn read(&mut self, value: &JsValue, path: &str, at: Option<&At>) -> Result<Value, FieldError> {
        self.values += 1;
        if self.values > MAX_VALUES {
            return Err(FieldError::new(path, format!("is past the most values a document may hold ({MAX_VALUES})")));
        }
        if value.is_null() {
            return Ok(Value::Null);
        }
        if value.is_undefined() {
            return Err(FieldError::new(path, "is undefined; give a value, or leave the field out"));
        }
        if let Some(b) = value.as_bool() {
            return Ok(Value::Bool(b));
        }
        if let Some(n) = value.as_f64() {
            return number(n, path);
        }
        if let Some(s) = value.as_string() {
            return Ok(Value::String(s));
        }
        let kind = if value.is_symbol() {
            "a symbol"
        } else if value.is_function() {
            "a function"
        } else if value.is_bigint() {
            "a BigInt"
        } else if !value.is_object() {
            "a value of an unknown type"
        } else {
            return self.container(value, path, at);
        };
        Err(FieldError::new(
            path,
            format!("must be a string, number, boolean, null, list or plain object (got {kind})"),
        ))
    }

    fn container(&mut self, value: &JsValue, path: &str, at: Option<&At>) -> Result<Value, FieldError> {
        if let Some((_, first)) = self.ancestors.iter().find(|(a, _)| a == value) {
            return Err(FieldError::new(
                path,
                format!("refers back to {first} (a cycle); give a tree of plain values"),
            ));
        }
        if self.ancestors.len() >= MAX_DEPTH {
            return Err(FieldError::new(
                path,
                format!("is nested too deeply (more than {MAX_DEPTH} levels of objects and lists)"),
            ));
        }
        let list = is_array(value).map_err(|e| threw(path, &e))?;
        if !list {
            let prototype = prototype_of(value).map_err(|e| threw(path, &e))?;
            if !(prototype.is_null() || prototype == self.object_prototype) {
                return Err(FieldError::new(
                    path,
                    format!("must be a plain object or a list (got {})", describe_object(value)),
                ));
            }
        }
        self.ancestors.push((value.clone(), path.to_string()));
        let read = if list { self.list(value, path, at) } else { self.object(value, path, at) };
        self.ancestors.pop();
        read
    }

    fn object(&mut self, value: &JsValue, path: &str, at: Option<&At>) -> Result<Value, FieldError> {
        let keys = object_keys(value).map_err(|e| threw(path, &e))?;
        let mut map = Map::new();
        for key in keys.iter() {
            // Object.keys gives strings; the JS key itself is used to read, so a key with a
            // lone surrogate still finds its value.
            let name = key.as_string().unwrap_or_default();
            let field_path = child(path, &name);
            let field = Reflect::get(value, &key).map_err(|e| threw(&field_path, &e))?;
            let here = At { step: Step::Field(&name), parent: at };
            if field.is_undefined() {
                match (self.undefined)(&here.steps(), &field_path) {
                    Some(e) => return Err(e),
                    None => continue,
                }
            }
            let field = self.read(&field, &field_path, Some(&here))?;
            map.insert(name, field);
        }
        Ok(Value::Object(map))
    }

    fn list(&mut self, value: &JsValue, path: &str, at: Option<&At>) -> Result<Value, FieldError> {
        let length = Reflect::get(value, &JsValue::from_str("length")).map_err(|e| threw(path, &e))?;
        let length = length.as_f64().filter(|n| n.is_finite() && *n >= 0.0).unwrap_or(0.0) as u64;
        let mut items = Vec::new();
        for i in 0..length {
            let item_path = format!("{path}[{i}]");
            let index = JsValue::from_f64(i as f64);
            let item = Reflect::get(value, &index).map_err(|e| threw(&item_path, &e))?;
            let here = At { step: Step::Item, parent: at };
            if item.is_undefined() {
                return Err(self.undefined_item(value, &index, &item_path, &here));
            }
            items.push(self.read(&item, &item_path, Some(&here))?);
        }
        Ok(Value::Array(items))
    }

    /// The error for the list item at `index` (`here`) that reads as `undefined`.
    fn undefined_item(&self, list: &JsValue, index: &JsValue, path: &str, here: &At) -> FieldError {
        let present = match Reflect::has(list, index) {
            Ok(present) => present,
            Err(e) => return threw(path, &e),
        };
        if present {
            if let Some(e) = (self.undefined)(&here.steps(), path) {
                return e;
            }
        }
        let what = if present { "is undefined" } else { "is a hole (an empty slot)" };
        FieldError::new(path, format!("{what}; a list may hold only values"))
    }
}

/// A finite number as JSON: an integer JS holds exactly stays an integer.
fn number(n: f64, path: &str) -> Result<Value, FieldError> {
    let finite = || {
        let got = if n.is_nan() {
            "NaN"
        } else if n > 0.0 {
            "Infinity"
        } else {
            "-Infinity"
        };
        FieldError::new(path, format!("must be a finite number (got {got})"))
    };
    if !n.is_finite() {
        return Err(finite());
    }
    if n.fract() == 0.0 && n.abs() <= MAX_SAFE_INTEGER {
        return Ok(if n >= 0.0 { Value::from(n as u64) } else { Value::from(n as i64) });
    }
    Number::from_f64(n).map(Value::Number).ok_or_else(finite)
}

/// "a Date", "a Map", "an instance of a class": what an object that is not plain is.
fn describe_object(value: &JsValue) -> String {
    let tag = object_tag(value).ok().and_then(|t| t.as_string()).unwrap_or_default();
    match tag.strip_prefix("[object ").and_then(|t| t.strip_suffix(']')) {
        Some("Object") | None => "an instance of a class".to_string(),
        Some(name) if name.starts_with(['A', 'E', 'I', 'O']) => format!("an {name}"),
        Some(name) => format!("a {name}"),
    }
}

/// The error for a read that threw: a getter, a proxy trap. The thrown message shows, shortened,
/// only when it is a string.
fn threw(path: &str, error: &JsValue) -> FieldError {
    let message = error
        .as_string()
        .or_else(|| Reflect::get(error, &JsValue::from_str("message")).ok().and_then(|m| m.as_string()));
    match message {
        Some(m) => FieldError::new(path, format!("could not be read: reading it threw {}", show(&Value::String(m)))),
        None => FieldError::new(path, "could not be read: reading it threw an exception"),
    }
}
