//! Request options several client formats write alike: the tool choice and its check against
//! the tools, and a JSON Schema output format.

use llm_baton_wire::write::ToJson;
use serde_json::{Map, Value};

use super::field;
use crate::chat::{ResponseFormat, Tool, ToolChoice, UnmetChoice};
use crate::value::FieldError;

/// `"auto"`, `"none"` or `"required"`, the words every OpenAI format uses for a tool choice.
pub(crate) fn tool_choice_word(word: &str) -> Option<ToolChoice> {
    match word {
        "auto" => Some(ToolChoice::Auto),
        "none" => Some(ToolChoice::None),
        "required" => Some(ToolChoice::Required),
        _ => None,
    }
}

/// A tool choice the request's tools can satisfy: a named tool is one of them, and
/// `required` needs some. `path` is the client's field.
pub(crate) fn check_tool_choice(choice: ToolChoice, tools: &[Tool], path: &str) -> Result<ToolChoice, FieldError> {
    match choice.unmet_by(tools) {
        Some(UnmetChoice::NoTools) => Err(FieldError::new(
            path,
            "requires a tool call but tools is empty; give the tools the model must choose from",
        )),
        Some(UnmetChoice::UnknownTool(name)) => {
            let names: Vec<String> = tools.iter().map(|t| t.name.to_json()).collect();
            Err(FieldError::new(
                path,
                format!(
                    "names the tool {}, which is not one of the tools (tools: [{}])",
                    name.to_json(),
                    names.join(", ")
                ),
            ))
        }
        None => Ok(choice),
    }
}

/// A JSON Schema output format, `{name?, schema, description?, strict?}` at `path`: OpenAI
/// Chat's `json_schema` and Responses' `text.format`.
pub(crate) fn json_schema_format(o: &Map<String, Value>, path: &str) -> Result<ResponseFormat, FieldError> {
    let schema = match field::opt(o, "schema") {
        None => return Err(field::missing(&field::child(path, "schema"), "a JSON Schema object")),
        Some(s @ Value::Object(_)) => s.clone(),
        Some(other) => return Err(field::wrong(&field::child(path, "schema"), "a JSON Schema object", other)),
    };
    Ok(ResponseFormat::Json {
        schema: Some(schema),
        name: field::opt_string(o, "name", path)?.map(str::to_string),
        description: field::opt_string(o, "description", path)?.map(str::to_string),
        strict: field::opt_flag(o, "strict", path)?,
    })
}
