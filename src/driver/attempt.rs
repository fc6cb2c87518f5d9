//! One attempt over JavaScript's `fetch`: send, read the body, decode it, and report each step
//! to the call loop as an [`AttemptSignal`].
//!
//! The attempt runs as its own task and talks through a channel, so the call loop can wait on
//! it, a timer and the caller's signal at once without ever dropping a half-finished read. The
//! loop owns the attempt's [`AbortGuard`]: when the engine says a limit expired, dropping the
//! guard aborts the controller, the pending `fetch` or body read rejects, and the socket
//! closes. The task's own view of that rejection is never consulted for the reason: the
//! engine already knows it as a typed `Failure`.

use futures::channel::mpsc::UnboundedSender;
use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::{
    AbortController, AbortSignal, ReadableStreamDefaultReader, ReadableStreamReadResult, RequestInit, Response,
};

use crate::chat::{Answer, Delta};
use crate::format::{Format, HttpRequest, StreamDecoder};
use crate::outcome::Failure;
use crate::sse::{SseItem, SseParser};

#[wasm_bindgen]
extern "C" {
    /// The global `fetch`, whatever the host (never `window.fetch`: workers have no window).
    #[wasm_bindgen(js_name = fetch, catch)]
    fn global_fetch(url: &str, init: &RequestInit) -> Result<Promise, JsValue>;
}

/// What an attempt reports, in order.
#[derive(Debug)]
pub enum AttemptSignal {
    /// Response headers arrived (any status).
    Headers,
    /// The deltas one body read decoded, visible or not, in order (the last may be the final
    /// `Delta::Done`). One signal per read, not per delta: a fast stream costs one wake-up of
    /// the call loop per network chunk.
    Deltas(Vec<Delta>),
    /// A whole, non-streamed answer.
    Answer(Answer),
    Failed(Failure),
}

/// Owns an attempt's AbortController; aborts it when dropped, so no path leaves a request
/// running upstream.
pub struct AbortGuard {
    controller: AbortController,
}

impl AbortGuard {
    pub fn new() -> Result<AbortGuard, JsValue> {
        Ok(AbortGuard { controller: AbortController::new()? })
    }

    pub fn signal(&self) -> AbortSignal {
        self.controller.signal()
    }
}

impl Drop for AbortGuard {
    fn drop(&mut self) {
        self.controller.abort();
    }
}

/// Runs one attempt to its end, sending signals as it goes. Errors after the receiver is gone
/// (the attempt was aborted) are dropped: nobody is listening, by design.
pub async fn run(
    request: HttpRequest,
    signal: AbortSignal,
    format: Format,
    stream: bool,
    tx: UnboundedSender<AttemptSignal>,
) {
    if let Err(failure) = exchange(&request, &signal, format, stream, &tx).await {
        let _ = tx.unbounded_send(AttemptSignal::Failed(failure));
    }
}

async fn exchange(
    request: &HttpRequest,
    signal: &AbortSignal,
    format: Format,
    stream: bool,
    tx: &UnboundedSender<AttemptSignal>,
) -> Result<(), Failure> {
    let headers = js_sys::Object::new();
    for (name, value) in &request.headers {
        Reflect::set(&headers, &JsValue::from_str(name), &JsValue::from_str(value)).map_err(transport)?;
    }
    let init = RequestInit::new();
    init.set_method(request.method);
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&request.body));
    init.set_signal(Some(signal));
    let promise = global_fetch(&request.url, &init).map_err(transport)?;
    let response: Response = JsFuture::from(promise).await.map_err(transport)?.unchecked_into();
    let _ = tx.unbounded_send(AttemptSignal::Headers);

    let status = response.status();
    if !(200..300).contains(&status) {
        let body = read_all(&response).await.unwrap_or_default();
        let headers: Vec<(String, String)> = ["retry-after", "retry-after-ms", "x-should-retry"]
            .iter()
            .filter_map(|name| response.headers().get(name).ok().flatten().map(|v| (name.to_string(), v)))
            .collect();
        let message = format.error_message(status, &body);
        return Err(Failure::from_http(status, &headers, message, js_sys::Date::now() as u64));
    }

    if !stream {
        let body = read_all(&response).await?;
        let answer = format.decode_answer(&body)?;
        let _ = tx.unbounded_send(AttemptSignal::Answer(answer));
        return Ok(());
    }

    let body = response.body().ok_or_else(|| Failure::Protocol { message: "streamed answer has no body".into() })?;
    let reader: ReadableStreamDefaultReader = body.get_reader().unchecked_into();
    let mut parser = SseParser::new();
    let mut decoder = format.stream_decoder();
    let mut items = Vec::new();
    let mut deltas = Vec::new();
    loop {
        let chunk: ReadableStreamReadResult = JsFuture::from(reader.read()).await.map_err(transport)?.unchecked_into();
        let done = chunk.get_done().unwrap_or(false);
        // Deltas decoded before a failure in the same read are sent first: the text the
        // provider showed before its error must reach the engine (and commit the stream).
        let outcome = decode(&chunk, done, &mut parser, &mut decoder, &mut items, &mut deltas);
        let finished = deltas.iter().any(|d| matches!(d, Delta::Done { .. }));
        if !deltas.is_empty() {
            let _ = tx.unbounded_send(AttemptSignal::Deltas(std::mem::take(&mut deltas)));
        }
        outcome?;
        if finished || done {
            return Ok(());
        }
    }
}

/// Feeds one read into the parser and decoder, appending the deltas it yields.
fn decode(
    chunk: &ReadableStreamReadResult,
    done: bool,
    parser: &mut SseParser,
    decoder: &mut StreamDecoder,
    items: &mut Vec<SseItem>,
    deltas: &mut Vec<Delta>,
) -> Result<(), Failure> {
    let parsed =
        if done { parser.finish(items) } else { parser.feed(&Uint8Array::new(&chunk.get_value()).to_vec(), items) };
    for item in items.drain(..) {
        if let SseItem::Event(event) = item {
            decoder.on_event(&event, deltas)?;
        }
    }
    parsed.map_err(protocol)?;
    if done {
        decoder.finish(deltas)?;
    }
    Ok(())
}

async fn read_all(response: &Response) -> Result<Vec<u8>, Failure> {
    let buffer = JsFuture::from(response.array_buffer().map_err(transport)?).await.map_err(transport)?;
    Ok(Uint8Array::new(&buffer).to_vec())
}

fn transport(e: JsValue) -> Failure {
    Failure::Transport { message: js_error_message(&e) }
}

fn protocol(e: crate::sse::SseError) -> Failure {
    Failure::Protocol { message: e.to_string() }
}

/// `error.message`, plus `error.cause.message` where the host puts the real reason (undici's
/// "fetch failed" hides ECONNREFUSED there).
pub fn js_error_message(e: &JsValue) -> String {
    let message = |v: &JsValue| Reflect::get(v, &"message".into()).ok().and_then(|m| m.as_string());
    let mut text = message(e).or_else(|| e.as_string()).unwrap_or_else(|| "unknown error".into());
    if let Some(cause) = Reflect::get(e, &"cause".into()).ok().filter(|c| c.is_object()).and_then(|c| message(&c)) {
        text = format!("{text}: {cause}");
    }
    text
}
