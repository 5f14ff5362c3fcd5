//! The HTTP side: the page's three files (compiled in from `board/assets/`) and `/ws`, one
//! WebSocket per tab, each served by a `session` thread.
//!
//! What it refuses: a request whose `Host` is not a name of the address served (a DNS-rebinding
//! page cannot reach a loopback server), a WebSocket whose `Origin` is another site's, a message
//! over `MAX_REQUEST_BYTES`, a board past `max_boards` (the tab is told why), and requests piling
//! up faster than a board serves them.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};

use axum::Router;
use axum::extract::ws::{Message, WebSocket, WebSocketUpgrade};
use axum::extract::{Request as HttpRequest, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use futures_util::{SinkExt, StreamExt};

use crate::link::{self, Inbox};
use crate::messages::{MAX_REQUEST_BYTES, Reply, Request};
use crate::session::{self, BoardConfig};

/// Requests a board may have waiting before more are refused.
const MAX_PENDING_REQUESTS: usize = 32;
/// Replies a board may have waiting for a slow tab (analysis reports past them are dropped).
const MAX_PENDING_REPLIES: usize = 256;

pub struct App {
    pub board: BoardConfig,
    pub max_boards: usize,
    /// What plays, for the page's first message.
    pub model: String,
    /// The address served: a `Host` must name it (or, on loopback, `localhost`).
    pub addr: SocketAddr,
    open_boards: AtomicUsize,
}

impl App {
    pub fn new(board: BoardConfig, max_boards: usize, model: String, addr: SocketAddr) -> App {
        App {
            board,
            max_boards,
            model,
            addr,
            open_boards: AtomicUsize::new(0),
        }
    }

    /// Whether `host` (a `Host` header) names the address served. Bound to every interface, any
    /// name does: the server was asked to be reachable from elsewhere.
    fn serves_host(&self, host: &str) -> bool {
        if self.addr.ip().is_unspecified() {
            return true;
        }
        let port = self.addr.port();
        let mut names = vec![self.addr.to_string()];
        if self.addr.ip().is_loopback() {
            names.extend([
                format!("localhost:{port}"),
                format!("127.0.0.1:{port}"),
                format!("[::1]:{port}"),
            ]);
        }
        names.iter().any(|n| n.eq_ignore_ascii_case(host))
    }
}

pub fn router(app: Arc<App>) -> Router {
    Router::new()
        .route(
            "/",
            get(|| {
                asset(
                    "text/html; charset=utf-8",
                    include_str!("../assets/index.html"),
                )
            }),
        )
        .route(
            "/board.js",
            get(|| {
                asset(
                    "text/javascript; charset=utf-8",
                    include_str!("../assets/board.js"),
                )
            }),
        )
        .route(
            "/board.css",
            get(|| {
                asset(
                    "text/css; charset=utf-8",
                    include_str!("../assets/board.css"),
                )
            }),
        )
        .route("/ws", get(websocket))
        .layer(middleware::from_fn_with_state(app.clone(), check_host))
        .with_state(app)
}

async fn asset(content_type: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, content_type),
            (header::CACHE_CONTROL, "no-cache"),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        body,
    )
        .into_response()
}

async fn check_host(State(app): State<Arc<App>>, request: HttpRequest, next: Next) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    if !app.serves_host(host) {
        return (
            StatusCode::FORBIDDEN,
            format!("fivezero-board does not serve the host {host:?}\n"),
        )
            .into_response();
    }
    next.run(request).await
}

async fn websocket(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    ws: WebSocketUpgrade,
) -> Response {
    let host = headers
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or("");
    // Browsers always send Origin on a WebSocket; a page of another site must not drive the
    // engine (a program that is no browser has no cookies or page to abuse).
    if let Some(origin) = headers.get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let own = ["http://", "https://"]
            .iter()
            .any(|scheme| origin.eq_ignore_ascii_case(&format!("{scheme}{host}")));
        if !own {
            return (
                StatusCode::FORBIDDEN,
                format!("WebSocket from another origin ({origin}) refused\n"),
            )
                .into_response();
        }
    }
    ws.max_message_size(MAX_REQUEST_BYTES)
        .max_frame_size(MAX_REQUEST_BYTES)
        .on_upgrade(move |socket| serve_socket(socket, app))
}

/// Counts a board as open while it lives.
struct OpenBoard(Arc<App>);

impl OpenBoard {
    /// A place for one more board, unless `max_boards` are open.
    fn take(app: &Arc<App>) -> Option<OpenBoard> {
        if app.open_boards.fetch_add(1, Ordering::SeqCst) >= app.max_boards {
            app.open_boards.fetch_sub(1, Ordering::SeqCst);
            return None;
        }
        Some(OpenBoard(app.clone()))
    }
}

impl Drop for OpenBoard {
    fn drop(&mut self) {
        self.0.open_boards.fetch_sub(1, Ordering::SeqCst);
    }
}

type ToPage = futures_util::stream::SplitSink<WebSocket, Message>;
type FromPage = futures_util::stream::SplitStream<WebSocket>;

fn json_message(r: &Reply) -> Message {
    Message::Text(serde_json::to_string(r).unwrap_or_default().into())
}

async fn serve_socket(socket: WebSocket, app: Arc<App>) {
    let (mut to_page, from_page) = socket.split();
    let Some(open) = OpenBoard::take(&app) else {
        let why = format!(
            "{} boards are open, the most this server serves (its --max-boards); close one and reload",
            app.max_boards
        );
        let _ = to_page
            .send(json_message(&Reply::Error { text: why }))
            .await;
        let _ = to_page.close().await;
        return;
    };
    let hello = Reply::Hello {
        version: env!("CARGO_PKG_VERSION"),
        model: app.model.clone(),
        max_boards: app.max_boards,
        searches: app.board.scheduler.slots(),
    };
    if to_page.send(json_message(&hello)).await.is_err() {
        return;
    }

    let (replies, replies_rx) = tokio::sync::mpsc::channel::<Reply>(MAX_PENDING_REPLIES);
    let (inbox, link) = link::channel(MAX_PENDING_REQUESTS, replies.clone());
    let config = app.board.clone();
    let thread = std::thread::Builder::new()
        .name("board".into())
        .spawn(move || session::run(config, link));
    if let Err(e) = thread {
        let why = format!("no thread for this board: {e}");
        let _ = to_page
            .send(json_message(&Reply::Fault { text: why }))
            .await;
        return;
    }
    let writer = tokio::spawn(write_replies(replies_rx, to_page));
    read_requests(from_page, &inbox, &replies).await;
    // The tab is gone: its board's thread ends (its request channel closes), which frees the
    // engine; a search in progress stops now.
    inbox.close();
    drop(replies);
    writer.abort();
    drop(open);
}

/// Sends the board's replies to the page until the board's thread ends.
async fn write_replies(mut replies: tokio::sync::mpsc::Receiver<Reply>, mut to_page: ToPage) {
    while let Some(reply) = replies.recv().await {
        if to_page.send(json_message(&reply)).await.is_err() {
            return;
        }
    }
    // The board's thread ended (all its senders are gone) while the tab is still open.
    let why = "the board's engine stopped; reload the page for a new one".to_string();
    let _ = to_page
        .send(json_message(&Reply::Fault { text: why }))
        .await;
    let _ = to_page.close().await;
}

/// Passes the page's requests to its board until the page closes: each one queued, then the
/// board's search stopped (the board finds the request when it looks after the search ends).
async fn read_requests(
    mut from_page: FromPage,
    inbox: &Inbox,
    replies: &tokio::sync::mpsc::Sender<Reply>,
) {
    let refuse = |why: String| {
        let _ = replies.try_send(Reply::Error { text: why });
    };
    while let Some(Ok(message)) = from_page.next().await {
        let body = match message {
            Message::Text(t) => t,
            Message::Close(_) => return,
            Message::Binary(_) => {
                refuse("messages are JSON text".into());
                continue;
            }
            Message::Ping(_) | Message::Pong(_) => continue,
        };
        match serde_json::from_str::<Request>(body.as_str()) {
            Err(e) => refuse(format!("bad request: {e}")),
            Ok(request) => match inbox.send(request) {
                Ok(()) => {}
                Err(mpsc::TrySendError::Full(_)) => {
                    refuse("too many requests at once; this one was dropped".into())
                }
                Err(mpsc::TrySendError::Disconnected(_)) => return,
            },
        }
    }
}
