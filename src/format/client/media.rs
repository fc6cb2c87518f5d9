//! Images and files as clients send them: a URL (a `data:` URL carries the bytes), or base64
//! data with its media type. Every mistake names the field.

use llm_baton_wire::write::ToJson;

use crate::chat::{is_media_type, Part, Role, Source};
use crate::value::FieldError;

/// An image's or file's `url` as a client gave it: a base64 `data:` URL is read as its data
/// and media type (what OpenAI clients send inline); any other URL is fetched by the provider.
pub fn from_url(url: &str, media_type: Option<&str>, path: &str) -> Result<Source, FieldError> {
    if url.is_empty() {
        return Err(FieldError::new(path, "must be a URL or a data: URL (got \"\")"));
    }
    Source::from_url(url, media_type.map(str::to_string)).ok_or_else(|| {
        FieldError::new(
            path,
            "is a data: URL but not a base64 one with a media type; give it as \
             data:<media type>;base64,<data>",
        )
    })
}

/// Base64 `data` with its `media_type`, e.g. Anthropic's `{type: "base64", media_type, data}`.
pub fn from_data(data: &str, media_type: &str, path: &str) -> Result<Source, FieldError> {
    if data.is_empty() {
        return Err(FieldError::new(format!("{path}.data"), "must be the bytes as base64 (got \"\")"));
    }
    if !is_media_type(media_type) {
        return Err(FieldError::new(
            format!("{path}.media_type"),
            format!("must be a media type such as \"image/png\" or \"application/pdf\" (got {})", media_type.to_json()),
        ));
    }
    Ok(Source::Data { data: data.to_string(), media_type: media_type.to_ascii_lowercase() })
}

/// A file's media type from its name, for a file given by URL alone: the documents providers
/// read (PDF, plain text).
pub fn media_type_of_name(name: &str) -> Option<&'static str> {
    let name = name.split(['?', '#']).next().unwrap_or(name).to_ascii_lowercase();
    match name.rsplit_once('.')?.1 {
        "pdf" => Some("application/pdf"),
        "txt" => Some("text/plain"),
        _ => None,
    }
}

/// `part` at `path` in a message of `role`: only a user message may carry an image or a
/// file, and an image's media type is an image's.
pub fn check_part(part: Part, role: Role, path: &str) -> Result<Part, FieldError> {
    if let Part::Image { source } = &part {
        if let Some(other) = source.media_type().filter(|mt| !mt.starts_with("image/")) {
            return Err(FieldError::new(
                path,
                format!(
                    "is an image of media type {}; send an image (image/png, image/jpeg, image/gif, \
                 image/webp) or send the file as a file or document",
                    other.to_json()
                ),
            ));
        }
    }
    match part.misplaced_in(role) {
        Some(why) => Err(FieldError::new(path, why)),
        None => Ok(part),
    }
}

/// A stored-file reference (`file_id`): the gateway forwards no provider's files.
pub fn stored_file(path: &str, instead: &str) -> FieldError {
    FieldError::new(
        path,
        format!("names a file stored at a provider, which the gateway cannot forward to another; {instead}"),
    )
}
