//! Starts the real `baton-provider` binary and talks to it over TCP with hand-written HTTP/1.1,
//! so the tests see exactly what a client on the wire sees (and can close a socket mid-answer).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

pub struct Provider {
    /// The process this handle started and stops; `None` for a handle attached to it from another thread.
    child: Option<Child>,
    pub address: String,
}

impl Provider {
    pub fn start() -> Provider {
        let mut child = Command::new(env!("CARGO_BIN_EXE_baton-provider"))
            .stdout(Stdio::piped())
            .spawn()
            .expect("the provider binary starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout is piped")).read_line(&mut line).expect("first line");
        let url = line.trim_end().strip_prefix("BATON_PROVIDER_URL=").unwrap_or_else(|| panic!("first line: {line:?}"));
        let address = url.strip_prefix("http://").expect("an http URL").to_owned();
        Provider { child: Some(child), address }
    }

    pub fn attach(address: String) -> Provider {
        Provider { child: None, address }
    }

    /// Sends a request and reads the whole answer (the server closes every connection).
    pub fn request(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> Answer {
        let mut stream = self.send(method, path, headers, body);
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).expect("read the answer");
        Answer::parse(&raw)
    }

    pub fn post(&self, path: &str, body: &str) -> Answer {
        self.request("POST", path, &[("content-type", "application/json")], body)
    }

    /// Writes a request and returns the open connection, for tests that read part of it or close it.
    pub fn send(&self, method: &str, path: &str, headers: &[(&str, &str)], body: &str) -> TcpStream {
        let mut stream = TcpStream::connect(&self.address).expect("connect");
        stream.set_read_timeout(Some(Duration::from_secs(10))).expect("read timeout");
        let mut head =
            format!("{method} {path} HTTP/1.1\r\nhost: {}\r\ncontent-length: {}\r\n", self.address, body.len());
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(body.as_bytes())).expect("write");
        stream
    }

    pub fn define(&self, scenario: &str, steps: Value) {
        let answer = self.request(
            "PUT",
            &format!("/_scenarios/{scenario}"),
            &[],
            &serde_json::json!({"steps": steps}).to_string(),
        );
        assert_eq!(answer.status, 200, "{}", answer.text());
    }

    pub fn scenario(&self, scenario: &str) -> Value {
        self.request("GET", &format!("/_scenarios/{scenario}"), &[], "").json()
    }

    pub fn stats(&self) -> Value {
        self.request("GET", "/_stats", &[], "").json()
    }

    pub fn terminate(mut self) -> std::process::ExitStatus {
        let mut child = self.child.take().expect("this handle started the provider");
        let killed = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
        assert!(killed.success());
        child.wait().expect("the provider exits")
    }
}

impl Drop for Provider {
    fn drop(&mut self) {
        if let Some(child) = &mut self.child {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn parse(raw: &[u8]) -> Answer {
        let end = raw.windows(4).position(|window| window == b"\r\n\r\n").expect("a complete head");
        let head = String::from_utf8_lossy(&raw[..end]);
        let mut lines = head.split("\r\n");
        let status =
            lines.next().and_then(|line| line.split(' ').nth(1)).and_then(|code| code.parse().ok()).expect("status");
        let headers: Vec<(String, String)> = lines
            .filter_map(|line| line.split_once(':'))
            .map(|(name, value)| (name.trim().to_ascii_lowercase(), value.trim().to_owned()))
            .collect();
        let mut answer = Answer { status, headers, body: raw[end + 4..].to_vec() };
        if answer.header("transfer-encoding") == Some("chunked") {
            answer.body = dechunk(&answer.body);
        }
        answer
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str())
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|error| panic!("{error}: {}", self.text()))
    }

    /// Server-sent events as (event name, data), in order.
    pub fn events(&self) -> Vec<(Option<String>, String)> {
        sse_events(&self.text())
    }

    /// The data of each event, parsed, skipping OpenAI's `[DONE]`.
    pub fn event_json(&self) -> Vec<Value> {
        self.events()
            .into_iter()
            .filter(|(_, data)| data != "[DONE]")
            .map(|(_, data)| serde_json::from_str(&data).unwrap())
            .collect()
    }
}

pub fn sse_events(text: &str) -> Vec<(Option<String>, String)> {
    text.replace("\r\n", "\n")
        .split("\n\n")
        .filter(|block| !block.trim().is_empty())
        .map(|block| {
            let mut name = None;
            let mut data = String::new();
            for line in block.lines() {
                if let Some(value) = line.strip_prefix("event: ") {
                    name = Some(value.to_owned());
                } else if let Some(value) = line.strip_prefix("data: ") {
                    data.push_str(value);
                }
            }
            (name, data)
        })
        .collect()
}

/// Decodes a chunked body; a body cut short (no final 0-size chunk) decodes as far as it went.
pub fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    while let Some(line_end) = raw.windows(2).position(|window| window == b"\r\n") {
        let size = usize::from_str_radix(std::str::from_utf8(&raw[..line_end]).unwrap().trim(), 16).unwrap();
        if size == 0 {
            break;
        }
        let start = line_end + 2;
        let end = (start + size).min(raw.len());
        body.extend_from_slice(&raw[start..end]);
        raw = &raw[(end + 2).min(raw.len())..];
    }
    body
}

/// True if the chunked body ended properly with its 0-size chunk.
pub fn chunked_body_finished(raw: &[u8]) -> bool {
    raw.ends_with(b"0\r\n\r\n")
}

/// Reads from `stream` until `needle` has arrived; returns everything read.
pub fn read_until(stream: &mut TcpStream, needle: &[u8]) -> Vec<u8> {
    let mut seen = Vec::new();
    let mut buffer = [0; 4096];
    while !seen.windows(needle.len()).any(|window| window == needle) {
        let read = stream.read(&mut buffer).expect("read");
        assert!(read > 0, "closed before {:?}: {}", String::from_utf8_lossy(needle), String::from_utf8_lossy(&seen));
        seen.extend_from_slice(&buffer[..read]);
    }
    seen
}

/// Closes the connection from the client side, as an aborted fetch does.
pub fn close(stream: TcpStream) {
    let _ = stream.shutdown(Shutdown::Both);
    drop(stream);
}

/// Polls `check` until it holds or `limit` passes; returns how long it took.
pub fn wait_for(limit: Duration, mut check: impl FnMut() -> bool) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if check() {
            return Some(start.elapsed());
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    None
}
