//! `fivezero-board`: the engine in a browser. A local web app (axum on tokio) serves one page,
//! compiled into the binary from `assets/`, and one WebSocket per tab; each tab's game runs on its
//! own engine thread, and the CPU is shared among them by a fair scheduler. docs/board.md has the
//! design and the page's messages.
//!
//! Modules, in dependency order: `messages` (the JSON the page and the server exchange), `link`
//! (a tab's requests to its board and the flag that stops its search),
//! `scheduler` (how many searches run at once, who waits), `session` (one board: a game and its
//! engine), `server` (HTTP, WebSocket, the checks on both).

pub mod link;
pub mod messages;
pub mod scheduler;
pub mod server;
pub mod session;
