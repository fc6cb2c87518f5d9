//! One attempt over JavaScript's `fetch`: send, read the body, decode it, and report each step
//! to the call loop as an [`AttemptSignal`].
//!
//! The attempt is a future of its own that the call loop polls beside its timer and the caller's
//! cancel, talking through a channel, so the loop never drops a half-finished read. The bytes go
//! straight to the core (`body`), which decodes and caps them. The loop owns the attempt's
//! [`AbortGuard`](super::host::AbortGuard): when the engine says a limit expired, dropping the
//! guard aborts the controller, the pending `fetch` or body read rejects, and the socket closes.
//! The attempt's own view of that rejection is never consulted for the reason: the engine
//! already knows it as a typed `Failure`.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::rc::Rc;

use futures::channel::mpsc::UnboundedSender;
use js_sys::{Promise, Reflect, Uint8Array};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use web_sys::{AbortSignal, ReadableStreamDefaultReader, ReadableStreamReadResult, RequestInit, Response};

use super::host::Awaited;
use crate::body::{StreamBody, WholeBody};
use crate::chat::{Answer, Delta};
use crate::format::{Cloud, Format, HttpRequest};
use crate::outcome::Failure;
use crate::propagation::GATEWAY_MARK_HEADER;
use crate::secret::{Redactor, Secret};
#[cfg(feature = "clouds")]
use crate::vertex::VertexAuth;
/// Without the clouds no target has a Vertex credential.
#[cfg(not(feature = "clouds"))]
type VertexAuth = std::convert::Infallible;

#[wasm_bindgen]
extern "C" {
    /// A response's body, as a stream that may be a byte stream.
    type BodyStream;

    /// `getReader(options)`; throws for `{mode: "byob"}` unless it is a byte stream.
    #[wasm_bindgen(method, js_name = getReader, catch)]
    fn reader_with(stream: &BodyStream, options: &JsValue) -> Result<ByobReader, JsValue>;

    /// A byte stream's reader that reads into the buffer it is given (`getReader({mode: "byob"})`).
    type ByobReader;

    #[wasm_bindgen(method)]
    fn read(reader: &ByobReader, view: &Uint8Array) -> Promise;
}

/// The buffer a byte stream's reads fill: all that has arrived, up to this, in one read (the
/// size of the buffer Deno's default reader allocates for each read).
const READ_BUFFER_BYTES: u32 = 64 << 10;

/// How many read buffers an ended body leaves for the next (at most 512 KiB kept).
const SPARE_BUFFERS: usize = 8;

thread_local! {
    /// Read buffers no body holds. A fresh one is 64 KiB the runtime zeroes, page by page, for
    /// each attempt (in workerd, about 40 us of a gateway stream's CPU); one an ended body left
    /// costs nothing.
    static SPARE: std::cell::RefCell<Vec<Uint8Array>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// A read buffer: a spare one, else a new one.
fn read_buffer() -> Uint8Array {
    SPARE.with_borrow_mut(Vec::pop).unwrap_or_else(|| Uint8Array::new(&READ_BUFFER_BYTES.into()))
}

/// Keeps `buffer` (one of [`read_buffer`]'s, handed back by a read) for the next body, unless
/// enough are kept. A buffer a pending read took over is the runtime's until the read settles.
fn spare(buffer: Uint8Array) {
    SPARE.with_borrow_mut(|spare| {
        if spare.len() < SPARE_BUFFERS {
            spare.push(buffer);
        }
    });
}

/// What an attempt reports, in order.
#[derive(Debug)]
pub enum AttemptSignal {
    /// Response headers arrived (any status); `baton_gateway`: they say the target is an
    /// llm-baton gateway (`x-baton-attempts`), which reads `x-baton-deadline-ms`.
    Headers {
        baton_gateway: bool,
    },
    /// The deltas one body read decoded, visible or not, in order (the last may be the final
    /// `Delta::Done`). One signal per read, not per delta: a fast stream costs one wake-up of
    /// the call loop per network chunk.
    Deltas(Vec<Delta>),
    /// A whole, non-streamed answer.
    Answer(Answer),
    Failed(Failure),
}

/// When the latest bytes of a whole answer's body arrived (`performance.now()`, 0 for none
/// yet). The call loop reads it only when a timer is due, so reading a body costs no wake-up
/// per chunk; the engine measures the body's idle limit from it.
pub type BodyClock = Rc<Cell<u64>>;

/// Runs one attempt to its end, sending signals as it goes. Errors after the receiver is gone
/// (the attempt was aborted) are dropped: nobody is listening, by design.
/// `vertex`: the target's Vertex credential, whose token goes in `authorization` (see
/// src/driver/vertex.rs).
pub async fn run(
    request: HttpRequest,
    signal: AbortSignal,
    reached: (Format, Option<Cloud>),
    stream: bool,
    tx: UnboundedSender<AttemptSignal>,
    body_at: BodyClock,
    vertex: Option<VertexAuth>,
) {
    if let Err(failure) = exchange(&request, &signal, reached, stream, &tx, &body_at, vertex.as_ref()).await {
        let _ = tx.unbounded_send(AttemptSignal::Failed(failure));
    }
}

async fn exchange(
    request: &HttpRequest,
    signal: &AbortSignal,
    (format, cloud): (Format, Option<Cloud>),
    stream: bool,
    tx: &UnboundedSender<AttemptSignal>,
    body_at: &BodyClock,
    vertex: Option<&VertexAuth>,
) -> Result<(), Failure> {
    let (response, token) = send(request, signal, vertex, body_at).await?;
    let baton_gateway = response.headers().has(GATEWAY_MARK_HEADER).unwrap_or(false);
    let _ = tx.unbounded_send(AttemptSignal::Headers { baton_gateway });
    let mut body = Body::new(&response, body_at);

    let status = response.status();
    if !(200..300).contains(&status) {
        // A broken error body still leaves the status: keep whatever was read.
        let mut whole = WholeBody::error();
        let _ = body.read_whole(&mut whole).await;
        let headers: Vec<(String, String)> = Failure::HEADERS_READ
            .iter()
            .filter_map(|name| response.headers().get(name).ok().flatten().map(|v| (name.to_string(), v)))
            .collect();
        let mut said = format.error_body_on(cloud, status, whole.bytes());
        // A minted token is no configured secret the engine's redactor knows: redacted here.
        if let Some(token) = token {
            said.message = Redactor::new([token.expose()]).redact(&said.message).into_owned();
        }
        return Err(Failure::from_http(status, &headers, said, js_sys::Date::now() as u64));
    }

    if !stream {
        let mut whole = WholeBody::answer();
        body.read_whole(&mut whole).await?;
        let answer = format.decode_answer(whole.bytes())?;
        let _ = tx.unbounded_send(AttemptSignal::Answer(answer));
        return Ok(());
    }

    let mut decoder = StreamBody::on(format, cloud);
    let mut deltas = Vec::new();
    loop {
        // A gateway's client that reads nothing holds the upstream too, so nothing piles up.
        #[cfg(feature = "gateway")]
        super::host::room().await;
        let chunk = body.read().await?;
        let outcome = match &chunk {
            Some(bytes) => decoder.feed(bytes, &mut deltas),
            None => decoder.finish(&mut deltas),
        };
        let finished = deltas.iter().any(|d| matches!(d, Delta::Done { .. }));
        // Deltas decoded before a failure in the same read go first: the text the provider
        // showed before its error must reach the engine (and commit the stream).
        if !deltas.is_empty() {
            let _ = tx.unbounded_send(AttemptSignal::Deltas(std::mem::take(&mut deltas)));
        }
        outcome?;
        if finished || chunk.is_none() {
            return Ok(());
        }
    }
}

/// A response, and the Vertex token its request carried.
type Sent = (Response, Option<Secret>);

/// Sends `request`, with a Vertex target's token in `authorization`; the response, and the token
/// it went with. A minted token Vertex refuses (401: it expired early, or was revoked) is minted
/// again once and the request sent again, inside this attempt: the member did not fail. Boxed,
/// so the attempt's future holds a pointer, not these states.
#[cfg_attr(not(feature = "clouds"), allow(unused_variables))]
fn send<'a>(
    request: &'a HttpRequest,
    signal: &'a AbortSignal,
    vertex: Option<&'a VertexAuth>,
    body_at: &'a BodyClock,
) -> Pin<Box<dyn Future<Output = Result<Sent, Failure>> + 'a>> {
    Box::pin(async move {
        #[cfg(feature = "clouds")]
        let token = match vertex {
            Some(auth) => Some(super::vertex::bearer(auth, signal).await?),
            None => None,
        };
        #[cfg(not(feature = "clouds"))]
        let token: Option<Secret> = vertex.map(|never| match *never {});
        let response = fetch(request, signal, token.as_ref()).await?;
        #[cfg(feature = "clouds")]
        if let (Some(auth), Some(refused)) = (vertex, &token) {
            if response.status() == 401 && super::vertex::mints(auth) {
                super::vertex::forget(auth, refused);
                let _ = Body::new(&response, body_at).read_whole(&mut WholeBody::error()).await;
                let token = super::vertex::bearer(auth, signal).await?;
                return Ok((fetch(request, signal, Some(&token)).await?, Some(token)));
            }
        }
        Ok((response, token))
    })
}

/// `request` through the host's fetch, with `token` as its bearer credential when given.
async fn fetch(request: &HttpRequest, signal: &AbortSignal, token: Option<&Secret>) -> Result<Response, Failure> {
    let headers = js_sys::Object::new();
    for (name, value) in &request.headers {
        Reflect::set(&headers, &JsValue::from_str(name), &JsValue::from_str(value)).map_err(transport)?;
    }
    if let Some(token) = token {
        let bearer = format!("Bearer {}", token.expose());
        Reflect::set(&headers, &"authorization".into(), &bearer.into()).map_err(transport)?;
    }
    let init = RequestInit::new();
    init.set_method(request.method);
    init.set_headers(&headers);
    init.set_body(&JsValue::from_str(&request.body));
    init.set_signal(Some(signal));
    let promise = super::host::fetch(&request.url, &init).map_err(transport)?;
    Ok(Awaited::new(&promise).await.map_err(transport)?.unchecked_into())
}

/// A response body read one network chunk at a time: for a byte stream (fetch's, in Deno,
/// Node and workerd), into one buffer reused from read to read and then by the next body
/// ([`SPARE`]), which takes all the bytes that have arrived at once and spares the runtime a
/// fresh zeroed buffer per read.
struct Body<'a> {
    reader: Option<Reader>,
    /// Set as each whole body's chunk arrives.
    arrived_at: &'a BodyClock,
}

impl Drop for Body<'_> {
    fn drop(&mut self) {
        if let Some(Reader::Byob { buffer: Some(buffer), .. }) = self.reader.take() {
            spare(buffer);
        }
    }
}

enum Reader {
    /// `buffer`: the last read's buffer, handed back to the next (a read takes it over).
    Byob {
        reader: ByobReader,
        buffer: Option<Uint8Array>,
    },
    Default(ReadableStreamDefaultReader),
}

impl<'a> Body<'a> {
    fn new(response: &Response, arrived_at: &'a BodyClock) -> Body<'a> {
        let reader = response.body().map(|stream| {
            let options = js_sys::Object::new();
            let _ = Reflect::set(&options, &"mode".into(), &"byob".into());
            match stream.unchecked_ref::<BodyStream>().reader_with(&options) {
                Ok(reader) => Reader::Byob { reader, buffer: None },
                Err(_) => Reader::Default(stream.get_reader().unchecked_into()),
            }
        });
        Body { reader, arrived_at }
    }

    /// The next chunk, or `None` at the end.
    async fn read(&mut self) -> Result<Option<Vec<u8>>, Failure> {
        let promise = match &mut self.reader {
            None => return Ok(None),
            Some(Reader::Default(reader)) => reader.read(),
            Some(Reader::Byob { reader, buffer }) => reader.read(&buffer.take().unwrap_or_else(read_buffer)),
        };
        let chunk: ReadableStreamReadResult = Awaited::new(&promise).await.map_err(transport)?.unchecked_into();
        let done = chunk.get_done().unwrap_or(false);
        if let Some(Reader::Byob { buffer, .. }) = &mut self.reader {
            // The read hands its buffer back in its view (at the end, an empty one; none when
            // the stream was cancelled).
            let filled = chunk.get_value().dyn_into::<Uint8Array>().ok();
            *buffer = filled.as_ref().map(|view| Uint8Array::new(&view.buffer()));
            return Ok(if done { None } else { filled.map(|view| view.to_vec()) });
        }
        if done {
            return Ok(None);
        }
        // A fetch body's chunks are Uint8Arrays: copied once, into the wasm. `new Uint8Array(x)`
        // would copy each first (into a new array), so it is kept for other values a hand-made
        // stream may hold (an ArrayBuffer, an array of bytes).
        let value = chunk.get_value();
        let bytes = match value.dyn_into::<Uint8Array>() {
            Ok(bytes) => bytes,
            Err(other) => Uint8Array::new(&other),
        };
        Ok(Some(bytes.to_vec()))
    }

    /// Reads into `whole` until the body ends or `whole` wants no more (the connection is closed
    /// when the attempt's guard drops).
    async fn read_whole(&mut self, whole: &mut WholeBody) -> Result<(), Failure> {
        while let Some(chunk) = self.read().await? {
            self.arrived_at.set(super::now().max(1));
            if !whole.feed(&chunk)? {
                break;
            }
        }
        Ok(())
    }
}

fn transport(e: JsValue) -> Failure {
    Failure::Transport { message: js_error_message(&e) }
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
