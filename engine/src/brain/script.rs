//! The scripting interface behind `pbrain-fivezero analyse`: one JSON request per input line, one
//! JSON reply per output line, both declared here once with serde. Requests go through the same
//! Engine API the protocol front end uses (no second search path).
//!
//! A bad line (not JSON, unknown field, unknown rule, a stone off the board or on an occupied
//! point, a finished game, a line over the length cap, invalid UTF-8) gets one `ErrorReply` on
//! its own line; the next line is served as if nothing happened. Each request starts a fresh
//! game, so a reply depends only on its request.

use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::{Difficulty, Engine, EngineError, MoveInfo};
use crate::game::{Pos, Rule};
use crate::mcts::{Proven, RootCandidate, win_rate};
use crate::time::TimeLimits;

/// Longest request line read (bytes); a longer one is skipped as it arrives and answered with an
/// error, so no line can grow memory without bound.
pub const MAX_REQUEST_BYTES: usize = 64 * 1024;
/// Visits searched when a request gives neither `visits` nor `time_ms`.
pub const DEFAULT_VISITS: u64 = 1000;
/// Turn time a request without `time_ms` gets (a visits request then ends on its visits).
const DEFAULT_TIME_MS: u64 = 60_000;
/// Largest `time_ms` accepted (one hour).
const MAX_TIME_MS: u64 = 3_600_000;

/// One analysis request (one JSON object on one line). Unknown fields are refused.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq, Default)]
#[serde(deny_unknown_fields)]
pub struct Request {
    /// Anything; echoed in the reply.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    /// Side of a square board (default 15); `width`/`height` for a rectangular one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub size: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub width: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub height: Option<usize>,
    /// `freestyle` (default), `standard`, `renju` or `caro`, or the protocol's number (0, 1, 4, 8).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule: Option<RuleName>,
    /// Stones in move order, black first: `[x, y]` each (x = column, y = row, 0-based from the
    /// top-left, as the Gomocup protocol counts).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub moves: Vec<[i64; 2]>,
    /// The same as a string, played after `moves`: `h8i9j10`, a column letter (`a` = x 0) and
    /// a row number counted from the bottom (`1` = the last row), as renju diagrams write it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub position: Option<String>,
    /// Playouts to search (default 1000 when `time_ms` is not given either).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub visits: Option<u64>,
    /// Thinking time in ms, as a turn limit (the time manager keeps its usual reserve).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_ms: Option<u64>,
    /// Search threads (default: the command line's `--threads`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub threads: Option<usize>,
    /// How many best moves to report (default 1, at most the board's points).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub nbest: Option<usize>,
    /// `easy` or `medium` (default: the command line's `--difficulty`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub difficulty: Option<Difficulty>,
}

/// A rule by name or by the protocol's `INFO rule` number.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum RuleName {
    Name(String),
    Number(u32),
}

impl RuleName {
    fn rule(&self) -> Result<Rule, String> {
        match self {
            RuleName::Name(name) => name.parse(),
            RuleName::Number(n @ (0 | 1 | 4 | 8)) => Ok(Rule::from_protocol(*n)),
            RuleName::Number(n) => Err(format!("unknown rule number {n} (0, 1, 4, 8)")),
        }
    }
}

/// A point as `[x, y]`.
pub type Point = [usize; 2];

fn point(p: Pos) -> Point {
    [p.x(), p.y()]
}

/// One of the best moves.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Candidate {
    #[serde(rename = "move")]
    pub mv: Point,
    pub visits: u32,
    /// The evaluator's prior (0 for a move the threat search or lookahead chose).
    pub prior: f32,
    /// Mean value for the side to move, in [-1, 1].
    pub value: f32,
    /// (value + 1) / 2, or 1 / 0.5 / 0 when proven.
    pub winrate: f32,
    pub proven: Option<Proven>,
    /// The expected line, this move first.
    pub pv: Vec<Point>,
}

/// The answer to a request that could be searched.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Reply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    pub best: Point,
    /// Expected outcome for the side to move, in [-1, 1].
    pub value: f32,
    pub winrate: f32,
    /// A result proven by the threat search or the tree, for the side to move.
    pub proven: Option<Proven>,
    /// The best moves, `best` first.
    pub candidates: Vec<Candidate>,
    /// Search visits (or lookahead nodes) behind the answer.
    pub nodes: u64,
    pub time_ms: f64,
    /// The evaluator: its name, and the model's id (0 for the built-in evaluators).
    pub model: String,
    pub model_id: String,
}

/// The answer to a line that could not be served.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ErrorReply {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<serde_json::Value>,
    pub error: String,
}

/// One output line.
#[derive(Serialize, Deserialize, Debug, Clone, PartialEq)]
#[serde(untagged)]
pub enum Response {
    Reply(Reply),
    Error(ErrorReply),
}

fn candidate(c: &RootCandidate) -> Candidate {
    Candidate {
        mv: point(c.mv),
        visits: c.visits,
        prior: c.prior,
        value: c.value,
        winrate: win_rate(c.score()),
        proven: c.proven,
        pv: c.pv.iter().map(|&p| point(p)).collect(),
    }
}

/// The reply for a finished analysis.
pub fn reply(id: Option<serde_json::Value>, info: &MoveInfo, engine: &Engine) -> Reply {
    let evaluator = engine.evaluator();
    let value = info.proven.map_or(info.value, Proven::value);
    Reply {
        id,
        best: point(info.best),
        value,
        winrate: win_rate(value),
        proven: info.proven,
        candidates: info.candidates.iter().map(candidate).collect(),
        nodes: info.nodes,
        time_ms: info.elapsed.as_secs_f64() * 1000.0,
        model: evaluator.name(),
        model_id: format!("{:016x}", evaluator.model_id()),
    }
}

/// Serves one request line on `engine`; `defaults` are the command line's settings.
fn serve_line(engine: &mut Engine, line: &str, defaults: &Defaults) -> Response {
    let request: Request = match serde_json::from_str(line) {
        Ok(r) => r,
        Err(e) => {
            return Response::Error(ErrorReply {
                id: None,
                error: format!("bad request: {e}"),
            });
        }
    };
    let id = request.id.clone();
    match analyse(engine, &request, defaults) {
        Ok(info) => Response::Reply(reply(id, &info, engine)),
        Err(error) => Response::Error(ErrorReply { id, error }),
    }
}

/// The command line's settings, restored for every request that does not override them.
#[derive(Debug, Clone, Copy)]
pub struct Defaults {
    pub threads: usize,
    pub difficulty: Difficulty,
}

fn analyse(engine: &mut Engine, r: &Request, defaults: &Defaults) -> Result<MoveInfo, String> {
    let (width, height) = match (r.size, r.width, r.height) {
        (Some(s), None, None) => (s, s),
        (None, Some(w), Some(h)) => (w, h),
        (None, None, None) => (15, 15),
        _ => return Err("give either size or both width and height".into()),
    };
    let rule = r
        .rule
        .as_ref()
        .map_or(Ok(Rule::Freestyle), RuleName::rule)?;
    let area = width.saturating_mul(height);
    let nbest = r.nbest.unwrap_or(1);
    if nbest == 0 || nbest > area {
        return Err(format!(
            "nbest {nbest}: must be 1 to {area} (the board's points)"
        ));
    }
    if r.visits == Some(0) {
        return Err("visits must be at least 1".into());
    }
    let time_ms = match r.time_ms {
        Some(t) if t == 0 || t > MAX_TIME_MS => {
            return Err(format!("time_ms {t}: must be 1 to {MAX_TIME_MS}"));
        }
        Some(t) => t,
        None => DEFAULT_TIME_MS,
    };
    let visits = r.visits.or(if r.time_ms.is_none() {
        Some(DEFAULT_VISITS)
    } else {
        None
    });
    let threads = r.threads.unwrap_or(defaults.threads);
    if !(1..=64).contains(&threads) {
        return Err(format!("threads {threads}: must be 1 to 64"));
    }
    if engine.config().threads != threads {
        engine.set_threads(threads);
    }
    engine.set_difficulty(r.difficulty.unwrap_or(defaults.difficulty));
    engine.set_rule(rule);
    engine.start(width, height).map_err(|e| e.to_string())?;
    let mut stones = r.moves.clone();
    if let Some(text) = &r.position {
        stones.extend(
            crate::notation::parse_algebraic(text, height)
                .map_err(|e| format!("position: {e}"))?
                .into_iter()
                .map(|(x, y)| [x, y]),
        );
    }
    for (i, &[x, y]) in stones.iter().enumerate() {
        engine
            .opponent_move(x, y)
            .map_err(|e| format!("stone {} ({x},{y}): {e}", i + 1))?;
    }
    engine.set_max_visits(visits);
    engine.limits = TimeLimits {
        timeout_turn_ms: Some(time_ms as i64),
        timeout_match_ms: None,
        time_left_ms: None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    engine
        .analyse(Instant::now(), &stop, nbest)
        .map_err(|e| match e {
            EngineError::GameOver => {
                "the game is already over (a five is on the board)".to_string()
            }
            e => e.to_string(),
        })
}

/// Answers every request line of `input` on `output`, one JSON line each, flushed.
///
/// # Errors
/// Only from writing `output`.
pub fn serve(
    engine: &mut Engine,
    input: impl Read,
    output: &mut impl Write,
    defaults: Defaults,
) -> io::Result<()> {
    for line in protocol::ReadLines::with_max_len(input, MAX_REQUEST_BYTES) {
        let response = match line {
            Ok(line) if line.trim().is_empty() => continue,
            // The reader decodes lossily: a replacement character means the bytes were not UTF-8.
            Ok(line) if line.contains('\u{FFFD}') => Response::Error(ErrorReply {
                id: None,
                error: "request is not valid UTF-8".into(),
            }),
            Ok(line) => serve_line(engine, &line, &defaults),
            Err(protocol::LineError::TooLong(e)) => Response::Error(ErrorReply {
                id: None,
                error: format!("request too long: {e}"),
            }),
            Err(protocol::LineError::Io(_)) => break,
        };
        let text = serde_json::to_string(&response).map_err(io::Error::other)?;
        writeln!(output, "{text}")?;
        output.flush()?;
    }
    Ok(())
}
