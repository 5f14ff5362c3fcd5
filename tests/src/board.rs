//! Harness for the board's tests: `fivezero-board` started on a free loopback port (killed when
//! dropped), and a WebSocket client of its page protocol (docs/board.md) for the tests that need
//! no browser.

use std::io::{BufRead, BufReader};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use tungstenite::stream::MaybeTlsStream;
use tungstenite::{Message, WebSocket};

use crate::referee::bin;

/// A running `fivezero-board`.
pub struct BoardServer {
    child: Child,
    /// `http://127.0.0.1:PORT/`
    pub url: String,
    /// `127.0.0.1:PORT`
    pub host: String,
}

impl BoardServer {
    /// Starts the board with `args` (after `--listen 127.0.0.1:0`) and reads its address from
    /// the first line it prints.
    pub fn start(args: &[&str]) -> BoardServer {
        BoardServer::start_exe(&bin("fivezero-board"), args)
    }

    /// The same with the executable at `exe` (a package's).
    pub fn start_exe(exe: &Path, args: &[&str]) -> BoardServer {
        let mut child = Command::new(exe)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("fivezero-board starts");
        let mut first = String::new();
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        out.read_line(&mut first)
            .expect("fivezero-board prints its address");
        // The rest of what it prints is read and dropped, so it never writes to a closed pipe.
        std::thread::spawn(move || std::io::copy(&mut out, &mut std::io::sink()));
        let url = first
            .split_whitespace()
            .find(|w| w.starts_with("http://"))
            .unwrap_or_else(|| panic!("no address in {first:?}"))
            .to_string();
        let host = url
            .trim_start_matches("http://")
            .trim_end_matches('/')
            .to_string();
        BoardServer { child, url, host }
    }

    /// A WebSocket to `/ws` with the page's own origin.
    pub fn connect(&self) -> Page {
        self.connect_from(&format!("http://{}", self.host))
            .expect("the board accepts its own page")
    }

    /// A WebSocket to `/ws` sent with `origin`; the handshake's error when refused.
    pub fn connect_from(&self, origin: &str) -> Result<Page, tungstenite::Error> {
        let request = tungstenite::http::Request::builder()
            .uri(format!("ws://{}/ws", self.host))
            .header("Host", &self.host)
            .header("Origin", origin)
            .header("Connection", "Upgrade")
            .header("Upgrade", "websocket")
            .header("Sec-WebSocket-Version", "13")
            .header(
                "Sec-WebSocket-Key",
                tungstenite::handshake::client::generate_key(),
            )
            .body(())
            .expect("a request");
        let (socket, _) = tungstenite::connect(request)?;
        if let MaybeTlsStream::Plain(s) = socket.get_ref() {
            s.set_read_timeout(Some(Duration::from_millis(200))).ok();
        }
        Ok(Page { socket })
    }

    /// Whether the process is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }
}

impl Drop for BoardServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// One tab's socket.
pub struct Page {
    pub socket: WebSocket<MaybeTlsStream<TcpStream>>,
}

impl Page {
    pub fn send(&mut self, request: Value) {
        self.socket
            .send(Message::text(request.to_string()))
            .expect("the board takes a message");
    }

    /// The next message the board sends within `timeout`; None when none came or it closed.
    pub fn next(&mut self, timeout: Duration) -> Option<Value> {
        let end = Instant::now() + timeout;
        while Instant::now() < end {
            match self.socket.read() {
                Ok(Message::Text(t)) => {
                    return Some(serde_json::from_str(t.as_str()).expect("the board sends JSON"));
                }
                Ok(Message::Close(_)) => return None,
                Ok(_) => {}
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut
                    ) => {}
                Err(_) => return None,
            }
        }
        None
    }

    /// Reads messages until one of type `kind` for which `until` holds; panics after `timeout`
    /// with the messages seen.
    pub fn wait_for(
        &mut self,
        kind: &str,
        timeout: Duration,
        until: impl Fn(&Value) -> bool,
    ) -> Value {
        let end = Instant::now() + timeout;
        let mut seen = Vec::new();
        while Instant::now() < end {
            if let Some(m) = self.next(end.saturating_duration_since(Instant::now())) {
                if m["type"] == kind && until(&m) {
                    return m;
                }
                seen.push(m);
            }
        }
        panic!("no {kind} message as expected within {timeout:?}; saw {seen:#?}");
    }
}
