//! `baton-provider [--port N]`: a scripted LLM provider on 127.0.0.1 for llm-baton's end-to-end
//! tests (Node, Deno, workerd, headless Chromium) and `make demo`.
//!
//! Real providers fail in ways unit tests cannot reach: a fetch that stalls before its headers, a
//! stream that stops mid-answer, a socket reset, a 529 with `retry-after`. This server plays
//! OpenAI Chat, Anthropic Messages, OpenAI Responses and Gemini in their wire formats, with faults
//! chosen per request by a scenario that the test defines over HTTP, and it records what the
//! client did, above all whether it really closed the connection when it aborted.
//!
//! It prints one line, `BATON_PROVIDER_URL=http://127.0.0.1:PORT`, then serves until SIGTERM or
//! SIGINT (exit 0). Port 0, the default, picks a free port.
//!
//! ```text
//! POST [/s/{scenario}]/…/chat/completions                 OpenAI Chat ("stream", "stream_options")
//! POST [/s/{scenario}]/…/messages                         Anthropic Messages
//! POST [/s/{scenario}]/…/responses                        OpenAI Responses
//! POST [/s/{scenario}]/…/models/{model}:generateContent   Gemini, or :streamGenerateContent?alt=sse
//! PUT  /_scenarios/{id}  {"steps":[Step, …]}   define or replace (counters restart)
//! GET  /_scenarios/{id}  counters, billed, log  GET /_stats   totals, connectionsOpen
//! POST /_reset           forget everything     OPTIONS *     CORS preflight, 204
//! ```
//!
//! Scenario ids are `[A-Za-z0-9_.-]+`; no prefix means `default`; an unknown id is a healthy
//! scenario. Each request takes the next step and the last one repeats; a step with `untilMs`
//! answers every request until that many ms after the definition. Step fields are listed
//! on [`scenario::Step`].

mod scenario;
mod script;
mod server;
mod wire;

use std::io::Write;
use std::net::Ipv4Addr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio::signal::unix::{signal, SignalKind};

use crate::scenario::Registry;

const USAGE: &str = "usage: baton-provider [--port N]   (N = 0, the default, picks a free port)";

fn main() -> ExitCode {
    let port = match parse_port(std::env::args().skip(1)) {
        Ok(port) => port,
        Err(message) => {
            eprintln!("baton-provider: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    // One thread is plenty: the server mostly waits on timers and sockets.
    let runtime = match tokio::runtime::Builder::new_current_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("baton-provider: cannot start the runtime: {error}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(port)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("baton-provider: {message}");
            ExitCode::FAILURE
        }
    }
}

fn parse_port(mut args: impl Iterator<Item = String>) -> Result<u16, String> {
    let mut port = 0;
    while let Some(arg) = args.next() {
        let value = match arg.strip_prefix("--port") {
            Some("") => args.next().ok_or("--port needs a value")?,
            Some(rest) if rest.starts_with('=') => rest[1..].to_owned(),
            _ => return Err(format!("unknown argument {arg:?}")),
        };
        port = value.parse().map_err(|_| format!("--port must be a number from 0 to 65535, got {value:?}"))?;
    }
    Ok(port)
}

async fn run(port: u16) -> Result<(), String> {
    let listener = TcpListener::bind((Ipv4Addr::LOCALHOST, port))
        .await
        .map_err(|error| format!("cannot listen on 127.0.0.1:{port}: {error}"))?;
    let address = listener.local_addr().map_err(|error| format!("cannot read the bound address: {error}"))?;
    // Signal handlers first, so a parent that kills us right after reading the URL sees exit 0.
    let mut terminate = signal(SignalKind::terminate()).map_err(|error| format!("cannot handle SIGTERM: {error}"))?;
    let mut interrupt = signal(SignalKind::interrupt()).map_err(|error| format!("cannot handle SIGINT: {error}"))?;

    let mut stdout = std::io::stdout().lock();
    writeln!(stdout, "BATON_PROVIDER_URL=http://{address}")
        .and_then(|()| stdout.flush())
        .map_err(|error| format!("cannot write the URL to stdout: {error}"))?;
    drop(stdout);

    tokio::spawn(accept_connections(listener, Arc::new(Registry::new())));
    tokio::select! {
        _ = terminate.recv() => {}
        _ = interrupt.recv() => {}
    }
    Ok(())
}

async fn accept_connections(listener: TcpListener, registry: Arc<Registry>) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(server::serve_connection(stream, Arc::clone(&registry)));
            }
            Err(error) => {
                // Out of file descriptors or similar: back off instead of spinning.
                eprintln!("baton-provider: accept failed: {error}");
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::parse_port;

    fn parse(args: &[&str]) -> Result<u16, String> {
        parse_port(args.iter().map(|arg| arg.to_string()))
    }

    #[test]
    fn port_arguments() {
        assert_eq!(parse(&[]), Ok(0));
        assert_eq!(parse(&["--port", "8123"]), Ok(8123));
        assert_eq!(parse(&["--port=8124"]), Ok(8124));
        assert!(parse(&["--port"]).is_err());
        assert!(parse(&["--port", "70000"]).is_err());
        assert!(parse(&["--verbose"]).is_err());
    }
}
