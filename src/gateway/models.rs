//! `GET /v1/models`: the config's routes, as OpenAI's model list.

use llm_baton_wire::write::JsonWriter;

/// `GET /v1/models`: the routes in OpenAI's list format.
pub fn models_body(names: &[String], created: u64) -> String {
    let mut w = JsonWriter::new();
    w.begin_object();
    w.field("object", "list");
    w.key("data");
    w.begin_array();
    for name in names {
        w.begin_object();
        w.field("id", name);
        w.field("object", "model");
        w.field("created", &created);
        w.field("owned_by", "llm-baton");
        w.end_object();
    }
    w.end_array();
    w.end_object();
    w.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    #[test]
    fn models_list() {
        let body: Value = serde_json::from_str(&models_body(&["chat".into(), "fast".into()], 7)).unwrap();
        assert_eq!(body["object"], "list");
        assert_eq!(body["data"][1], json!({"id": "fast", "object": "model", "created": 7, "owned_by": "llm-baton"}));
    }
}
