//! The board in a real browser: Debian's headless Chromium, driven through chromedriver, against
//! a real `fivezero-board`: a game played by clicks with the engine's replies, undo and redo, a
//! five that ends the game, a renju forbidden point marked and refused, an analysis with ranked
//! moves and win rates, a tournament's record file opened and stepped through, two tabs sharing
//! the CPU, bad input and a failed engine shown on the page. It prints the page's first load and
//! the delay from a click to the engine's move at 1 s/move, and saves screenshots under
//! `target/board-screenshots/`.
//!
//! `#[ignore]`d in a plain `cargo test` (they need chromium and chromium-driver);
//! `scripts/test-board.sh` (run by `make test`) installs those and runs them.

use std::process::Command;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use fivezero_tests::board::BoardServer;
use fivezero_tests::browser::{self, Browser};
use fivezero_tests::referee::bin;
use fivezero_tests::skip::skip;

const WAIT: Duration = Duration::from_secs(30);
/// One browser at a time: the timings printed must not measure two Chromiums on two cores.
static ONE_BROWSER: Mutex<()> = Mutex::new(());

/// Runs `test` against a server started with `args`, unless the browser is missing here.
fn in_browser<F: AsyncFnOnce(&Browser, &BoardServer)>(name: &str, args: &[&str], test: F) {
    if let Some(why) = browser::unavailable() {
        return skip(name, &why);
    }
    let _one = ONE_BROWSER.lock().unwrap_or_else(|e| e.into_inner());
    let server = BoardServer::start(args);
    let rt = tokio::runtime::Runtime::new().expect("a runtime");
    rt.block_on(async {
        let b = Browser::start().await;
        test(&b, &server).await;
        b.close().await;
    });
}

/// Opens the page and waits until its first state is drawn; returns how long that took.
async fn open(b: &Browser, url: &str) -> Duration {
    let started = Instant::now();
    b.client.goto(url).await.expect("the page loads");
    b.wait("body[data-connected=\"true\"] #board[data-ply]", WAIT)
        .await;
    started.elapsed()
}

async fn stones(b: &Browser) -> usize {
    b.count("#board circle.stone").await
}

/// A new game from the page's form.
async fn new_game(b: &Browser, rule: &str, engine: &str) {
    b.select("#rule", rule).await;
    b.select("#engine-side", engine).await;
    b.click("#new-game").await;
    b.wait_count("#board circle.stone", WAIT, |n| n == 0).await;
    b.wait("#board[data-ply=\"0\"]", WAIT).await;
}

async fn load(b: &Browser, position: &str, ply: usize) {
    b.fill("#position-text", position).await;
    b.click("#load-position").await;
    b.wait(&format!("#board[data-ply=\"{ply}\"]"), WAIT).await;
}

#[test]
#[ignore = "needs chromium and chromium-driver: scripts/test-board.sh"]
fn a_game_by_clicks_against_the_engine() {
    in_browser(
        "board_browser::a_game_by_clicks_against_the_engine",
        &[],
        async |b, s| {
            let first = open(b, &s.url).await;
            let timing = b
                .js("const n = performance.getEntriesByType('navigation')[0]; \
                 return [n.responseEnd - n.startTime, n.loadEventEnd - n.startTime];")
                .await;
            println!(
                "board: first load: page loaded in {:.0} ms (HTML received in {:.0} ms), first position drawn {} ms after the request",
                timing[1].as_f64().unwrap_or(0.0),
                timing[0].as_f64().unwrap_or(0.0),
                first.as_millis()
            );
            // What the server plays, and the network that plays this game (freestyle 15x15:
            // the embedded default, run natively).
            let served = b.js("return document.querySelector('#model').title").await;
            assert!(
                served.as_str().unwrap_or("").contains("embedded"),
                "{served}"
            );
            let plays = b.text("#model").await;
            assert!(plays.contains("native"), "{plays}");
            new_game(b, "freestyle", "white").await;
            // The engine answers each click within its second per move (plus the page's round trip).
            let mut delays = Vec::new();
            for (i, (x, y)) in [(7, 7), (6, 8), (8, 6)].into_iter().enumerate() {
                let (x, y) = if b
                    .count(&format!(
                        "#board circle.stone[data-x=\"{x}\"][data-y=\"{y}\"]"
                    ))
                    .await
                    > 0
                {
                    (3 + i as u32, 12)
                } else {
                    (x, y)
                };
                let clicked = Instant::now();
                b.click_point(x, y).await;
                b.wait_count("#board circle.stone.white", WAIT, |n| n == i + 1)
                    .await;
                delays.push(clicked.elapsed());
            }
            let ms: Vec<u128> = delays.iter().map(Duration::as_millis).collect();
            println!("board: click to the engine's move at 1000 ms/move: {ms:?} ms");
            assert!(delays.iter().all(|d| *d < Duration::from_secs(5)), "{ms:?}");
            b.wait("#board circle.last", WAIT).await;
            b.screenshot("game").await;
            b.click("#undo").await;
            b.wait_count("#board circle.stone", WAIT, |n| n == 4).await;
            b.click("#redo").await;
            b.wait_count("#board circle.stone", WAIT, |n| n == 6).await;

            // A five ends the game: the result shown, the five marked, further clicks refused.
            new_game(b, "freestyle", "none").await;
            load(b, "h8a1i8a2j8a3k8a5", 8).await;
            b.click_point(11, 7).await;
            let result = b.wait_text("#result", WAIT, |t| !t.is_empty()).await;
            assert!(result.to_lowercase().contains("black"), "{result}");
            b.wait_count("#board .five", WAIT, |n| n == 5).await;
            b.click_point(0, 0).await;
            let error = b.wait_text("#error", WAIT, |t| !t.is_empty()).await;
            assert!(error.contains("over"), "{error}");
            assert_eq!(stones(b).await, 9);
        },
    );
}

#[test]
#[ignore = "needs chromium and chromium-driver: scripts/test-board.sh"]
fn renju_forbidden_points_are_marked_and_refused() {
    in_browser(
        "board_browser::renju_forbidden_points_are_marked_and_refused",
        &["--model", "none"],
        async |b, s| {
            open(b, &s.url).await;
            new_game(b, "renju", "none").await;
            load(b, "g8a1i8a3h7a5h9a7", 8).await;
            b.wait("#board .forbidden[data-x=\"7\"][data-y=\"7\"]", WAIT)
                .await;
            b.click_point(7, 7).await;
            let error = b.wait_text("#error", WAIT, |t| !t.is_empty()).await;
            assert!(error.contains("forbidden"), "{error}");
            assert_eq!(stones(b).await, 8);
            assert_eq!(
                b.count("#board circle.stone[data-x=\"7\"][data-y=\"7\"]")
                    .await,
                0
            );
            // Coordinates as renju diagrams write them: the copied position names h8 the centre.
            let position = b
                .js("return document.querySelector('#position-out').value")
                .await;
            assert_eq!(position, "g8a1i8a3h7a5h9a7");
            b.screenshot("renju").await;
        },
    );
}

#[test]
#[ignore = "needs chromium and chromium-driver: scripts/test-board.sh"]
fn an_analysis_draws_ranked_moves_with_win_rates() {
    in_browser(
        "board_browser::an_analysis_draws_ranked_moves_with_win_rates",
        &[],
        async |b, s| {
            open(
                b,
                &format!("{}#rule=freestyle&size=15&moves=h8i9h9h10g8i7", s.url),
            )
            .await;
            b.wait("#board[data-ply=\"6\"]", WAIT).await;
            b.select("#nbest", "3").await;
            b.click("#analyse").await;
            b.wait_count("#candidates tr.cand", WAIT, |n| n >= 2).await;
            b.wait_count("#board .candidate", WAIT, |n| n >= 2).await;
            // A win rate in percent (read until a redraw between two reads no longer hides it).
            let percent = |t: &str| t.trim_end_matches('%').trim().parse::<f64>().ok();
            b.wait_text("#candidates tr.cand td.winrate", WAIT, |t| {
                percent(t).is_some_and(|p| (0.0..=100.0).contains(&p))
            })
            .await;
            // Hovering a candidate shows its line as numbered stones.
            b.click("#candidates tr.cand").await;
            b.wait("#board .pv", WAIT).await;
            tokio::time::sleep(Duration::from_secs(2)).await;
            b.screenshot("analysis").await;
            b.click("#analyse").await;
            b.wait("body[data-busy=\"\"]", WAIT).await;
            assert_eq!(b.text("#analyse").await, "Analyse");
            // A proven win is marked on its move.
            load(b, "h8a1i8a2j8a3g8a5", 8).await;
            b.click("#analyse").await;
            b.wait("#board .candidate.proven-win", WAIT).await;
        },
    );
}

#[test]
#[ignore = "needs chromium and chromium-driver: scripts/test-board.sh"]
fn a_tournament_record_opens_and_steps_through() {
    let dir = tempfile::tempdir().unwrap();
    let pgn = dir.path().join("games.pgn");
    let engine = format!(
        "cmd={},arg=--model,arg=none",
        bin("pbrain-fivezero").display()
    );
    let status = Command::new(bin("fivezero-tools"))
        .args([
            "tournament",
            "--engine",
            &format!("{engine},name=one"),
            "--engine",
            &format!("{engine},name=two"),
        ])
        .args(["--games", "2", "--turn-ms", "100", "--quiet", "--pgn"])
        .arg(&pgn)
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success());
    let text = std::fs::read_to_string(&pgn).unwrap();
    let games = engine::notation::parse_records(&text, 10).unwrap();
    in_browser(
        "board_browser::a_tournament_record_opens_and_steps_through",
        &["--model", "none"],
        async |b, s| {
            open(b, &s.url).await;
            let file = b.wait("#file", WAIT).await;
            file.send_keys(pgn.to_str().unwrap())
                .await
                .expect("a file chosen");
            b.wait_count("#games option", WAIT, |n| n >= 2).await;
            b.wait("#board[data-ply=\"0\"]", WAIT).await;
            for _ in 0..3 {
                b.click("#next").await;
            }
            b.wait("#board[data-ply=\"3\"]", WAIT).await;
            assert_eq!(stones(b).await, 3);
            b.click("#prev").await;
            b.wait("#board[data-ply=\"2\"]", WAIT).await;
            b.click("#last").await;
            let n = games[0].moves.len();
            b.wait(&format!("#board[data-ply=\"{n}\"]"), WAIT).await;
            assert_eq!(stones(b).await, n);
            assert!(!b.text("#result").await.is_empty());
            b.select("#games", "1").await;
            b.wait("#board[data-ply=\"0\"]", WAIT).await;
            b.click("#last").await;
            b.wait(
                &format!("#board[data-ply=\"{}\"]", games[1].moves.len()),
                WAIT,
            )
            .await;
            b.screenshot("record").await;
        },
    );
}

#[test]
#[ignore = "needs chromium and chromium-driver: scripts/test-board.sh"]
fn two_tabs_share_the_cpu_and_a_closed_tab_frees_its_board() {
    let args = ["--model", "none", "--searches", "1", "--max-boards", "2"];
    in_browser(
        "board_browser::two_tabs_share_the_cpu_and_a_closed_tab_frees_its_board",
        &args,
        async |b, s| {
            let url = format!("{}#rule=freestyle&size=15&moves=h8i9h9", s.url);
            open(b, &url).await;
            let first = b.client.window().await.unwrap();
            b.click("#analyse").await;
            b.wait_count("#candidates tr.cand", WAIT, |n| n >= 1).await;
            let second = b.client.new_window(true).await.unwrap().handle;
            b.client.switch_to_window(second.clone()).await.unwrap();
            open(b, &url).await;
            b.click("#analyse").await;
            let queued = b.wait_text("#queue", WAIT, |t| !t.is_empty()).await;
            assert!(queued.contains("ahead"), "{queued}");
            // Its turn comes when the first tab's slice is over.
            b.wait_count("#candidates tr.cand", WAIT, |n| n >= 1).await;
            // A third tab is one too many for --max-boards 2 and is told so.
            let third = b.client.new_window(true).await.unwrap().handle;
            b.client.switch_to_window(third.clone()).await.unwrap();
            b.client.goto(&s.url).await.unwrap();
            let error = b.wait_text("#error", WAIT, |t| !t.is_empty()).await;
            assert!(error.contains("boards are open"), "{error}");
            // Closing a tab frees its board: the third one now gets one.
            b.client.switch_to_window(first).await.unwrap();
            b.client.close_window().await.unwrap();
            b.client.switch_to_window(third).await.unwrap();
            // (The closed tab's board ends with its thread: a loaded machine may take a moment.)
            let freed = Instant::now() + WAIT;
            loop {
                tokio::time::sleep(Duration::from_millis(500)).await;
                b.client.refresh().await.unwrap();
                // Its first state drawn, or the refusal shown.
                let answered = Instant::now() + WAIT;
                let error = loop {
                    let error = b.text("#error").await;
                    if !error.is_empty() || b.count("#board[data-ply]").await > 0 {
                        break error;
                    }
                    assert!(
                        Instant::now() < answered,
                        "the server did not answer the page"
                    );
                    tokio::time::sleep(Duration::from_millis(100)).await;
                };
                if error.is_empty() {
                    break;
                }
                assert!(
                    Instant::now() < freed,
                    "the closed tab's board was not freed: {error}"
                );
            }
        },
    );
}

#[test]
#[ignore = "needs chromium and chromium-driver: scripts/test-board.sh"]
fn bad_input_and_a_failed_engine_are_shown_on_the_page() {
    let args = ["--model", "none", "--allow-fault-injection"];
    in_browser(
        "board_browser::bad_input_and_a_failed_engine_are_shown_on_the_page",
        &args,
        async |b, s| {
            open(b, &s.url).await;
            new_game(b, "freestyle", "white").await;
            b.fill("#position-text", "h8 q99 banana").await;
            b.click("#load-position").await;
            let error = b.wait_text("#error", WAIT, |t| !t.is_empty()).await;
            assert!(error.contains("position"), "{error}");
            assert_eq!(stones(b).await, 0);
            b.fill("#size", "40").await;
            b.click("#new-game").await;
            let error = b.wait_text("#error", WAIT, |t| t.contains("40")).await;
            assert!(error.contains("size") || error.contains("40x40"), "{error}");
            b.fill("#size", "15").await;

            b.js("window.fivezero.send({type: 'inject_fault'}); return true;")
                .await;
            let fault = b.wait_text("#fault", WAIT, |t| !t.is_empty()).await;
            assert!(fault.contains("fail"), "{fault}");
            new_game(b, "freestyle", "white").await;
            b.click_point(7, 7).await;
            b.wait_count("#board circle.stone.white", WAIT, |n| n == 1)
                .await;
        },
    );
}
