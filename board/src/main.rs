//! `fivezero-board`: starts the board's web server and prints its address.

use std::io::Write;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use board::scheduler::Scheduler;
use board::server::{App, router};
use board::session::BoardConfig;
use clap::Parser;
use engine::brain::ModelSource;

/// Play and analyse against fivezero in a browser.
#[derive(Parser, Debug)]
#[command(name = "fivezero-board", version)]
struct Args {
    /// Address to serve on: loopback by default; `0.0.0.0:8515` makes the board reachable from
    /// other machines (port 0: any free port).
    #[arg(long, default_value = "127.0.0.1:8515")]
    listen: SocketAddr,
    /// What plays: `default` (the embedded networks), `none` (the classical evaluator), an ONNX
    /// file, or a folder whose newest model is played and replaced as checkpoints land there.
    #[arg(long, default_value = "default")]
    model: ModelSource,
    /// Threads of one board's search.
    #[arg(long, default_value_t = 1)]
    threads: usize,
    /// Searches that run at once; other boards wait their turn (default: cores / threads).
    #[arg(long)]
    searches: Option<usize>,
    /// Boards (browser tabs) served at once.
    #[arg(long, default_value_t = 16)]
    max_boards: usize,
    /// Memory one board's engine may use, in MiB.
    #[arg(long, default_value_t = 256)]
    memory_mb: u64,
    /// Serve the page's `inject_fault` request (the fault tests).
    #[arg(long, hide = true)]
    allow_fault_injection: bool,
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let threads = args.threads.clamp(1, 64);
    let searches = args.searches.unwrap_or(cores / threads).max(1);
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("cannot serve on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let model = match &args.model {
        ModelSource::Classical => "the classical evaluator (no network)".to_string(),
        ModelSource::Embedded => "the embedded networks".to_string(),
        ModelSource::File(p) => format!("{} (watched for new checkpoints)", p.display()),
    };
    let app = App::new(
        BoardConfig {
            model: args.model.clone(),
            threads,
            memory_bytes: args.memory_mb.max(16) << 20,
            scheduler: Scheduler::new(searches),
            allow_fault_injection: args.allow_fault_injection,
        },
        args.max_boards.max(1),
        model.clone(),
        addr,
    );
    let url = if addr.ip().is_unspecified() {
        format!(
            "http://127.0.0.1:{}/ (and this machine's other addresses)",
            addr.port()
        )
    } else {
        format!("http://{addr}/")
    };
    // Written, not printed: a closed stdout (a launcher that read the address and went) must
    // not stop the server.
    let mut out = std::io::stdout();
    let _ = writeln!(
        out,
        "fivezero-board {}: open {url}",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(
        out,
        "  playing {model}; {searches} search(es) at once, {threads} thread(s) each; Ctrl-C stops it"
    );
    let _ = out.flush();
    axum::serve(listener, router(Arc::new(app)))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    Ok(())
}
