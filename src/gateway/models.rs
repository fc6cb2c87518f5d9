//! `GET /v1/models` and `GET /v1/models/{id}`: the config's routes, the models a client may
//! name, as a list or one at a time. Both official SDKs share the path, so the shape follows the
//! client: Anthropic's for one that sends `anthropic-version` (its SDK always does), OpenAI's
//! otherwise. An unknown id is a 404 in the client's error shape, naming the routes.
//!
//! OpenAI: `{object: "list", data: [{id, object: "model", created, owned_by}]}`, one model as its
//! element. Anthropic: `{data: [{type: "model", id, display_name, created_at}], has_more,
//! first_id, last_id}` with `created_at` in RFC 3339, one model as its element (the Models API
//! reference of each).

use llm_baton_wire::write::JsonWriter;

use super::{ClientFormat, GatewayError, Reply};

/// The reply to a models request: the list, or the model `id` names, in the client's shape.
/// `created` is now in both forms the shapes take, seconds since 1970 and RFC 3339 (`created_at`),
/// from the host's clock.
pub fn models_reply(names: &[String], created: (u64, &str), id: Option<&str>, anthropic: bool) -> Reply {
    let (created, created_at) = created;
    let model = |w: &mut JsonWriter, name: &str| {
        w.begin_object();
        if anthropic {
            w.field("type", "model");
            w.field("id", name);
            w.field("display_name", name);
            w.field("created_at", created_at);
        } else {
            w.field("id", name);
            w.field("object", "model");
            w.field("created", &created);
            w.field("owned_by", "llm-baton");
        }
        w.end_object();
    };
    let mut w = JsonWriter::new();
    match id {
        Some(id) if names.iter().any(|n| n == id) => model(&mut w, id),
        Some(id) => {
            let format = if anthropic { ClientFormat::AnthropicMessages } else { ClientFormat::OpenaiChat };
            return Reply::error(format, &GatewayError::unknown_model(id, names), "", 0);
        }
        None => {
            w.begin_object();
            if !anthropic {
                w.field("object", "list");
            }
            w.key("data");
            w.begin_array();
            for name in names {
                model(&mut w, name);
            }
            w.end_array();
            if anthropic {
                w.field("has_more", &false);
                w.opt_field("first_id", names.first());
                w.opt_field("last_id", names.last());
            }
            w.end_object();
        }
    }
    Reply::json(200, "", 0, w.finish())
}

#[cfg(test)]
mod tests {
    use serde_json::{json, Value};

    use super::*;

    fn reply(id: Option<&str>, anthropic: bool) -> (u16, Value) {
        let reply =
            models_reply(&["chat".into(), "fast".into()], (1_767_225_600, "2026-01-01T00:00:00.000Z"), id, anthropic);
        (reply.status, serde_json::from_str(&reply.body).unwrap())
    }

    #[test]
    fn openai_list_and_model() {
        let (status, list) = reply(None, false);
        assert_eq!((status, &list["object"]), (200, &json!("list")));
        let fast = json!({"id": "fast", "object": "model", "created": 1_767_225_600, "owned_by": "llm-baton"});
        assert_eq!(list["data"][1], fast);
        assert_eq!(reply(Some("fast"), false), (200, fast));
    }

    #[test]
    fn anthropic_list_and_model() {
        let (status, list) = reply(None, true);
        let chat =
            json!({"type": "model", "id": "chat", "display_name": "chat", "created_at": "2026-01-01T00:00:00.000Z"});
        assert_eq!(status, 200);
        assert_eq!(
            list,
            json!({"data": [chat, list["data"][1]], "has_more": false, "first_id": "chat", "last_id": "fast"})
        );
        assert_eq!(reply(Some("chat"), true), (200, chat));
        let empty: Value = serde_json::from_str(&models_reply(&[], (0, ""), None, true).body).unwrap();
        assert_eq!(empty, json!({"data": [], "has_more": false}));
    }

    #[test]
    fn an_unknown_model_is_a_404_in_the_clients_shape() {
        let named = "model \"gpt-4o\" is not a route of this gateway (known: chat, fast)";
        let (status, openai) = reply(Some("gpt-4o"), false);
        assert_eq!(
            (status, &openai["error"]["message"], &openai["error"]["code"]),
            (404, &json!(named), &json!("model_not_found"))
        );
        let (status, anthropic) = reply(Some("gpt-4o"), true);
        assert_eq!(
            (status, &anthropic["type"], &anthropic["error"]["type"]),
            (404, &json!("error"), &json!("not_found_error"))
        );
        assert_eq!(anthropic["error"]["message"], named);
    }
}
