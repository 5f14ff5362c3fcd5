//! The page's messages over `/ws`, declared once with serde (docs/board.md lists them): requests
//! from the page (`Request`, unknown types and fields refused) and what the server sends back
//! (`Reply`). Points are `[x, y]`, 0-based from the top left; win rates are black's, 0..1.

use serde::{Deserialize, Serialize};

/// Largest message the page may send (a record file of a long tournament fits).
pub const MAX_REQUEST_BYTES: usize = 4 << 20;
/// Longest time per move a page may ask for (ms).
pub const MAX_TIME_MS: u64 = 600_000;
/// Most visits per move a page may ask for.
pub const MAX_VISITS: u64 = 10_000_000;
/// Most candidate moves an analysis reports.
pub const MAX_NBEST: usize = 10;

/// Which colour the engine plays (`None`: two people, or analysis only).
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq, Default)]
#[serde(rename_all = "lowercase")]
pub enum EngineSide {
    Black,
    #[default]
    White,
    None,
}

#[derive(Deserialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case", deny_unknown_fields)]
pub enum Request {
    NewGame {
        rule: String,
        width: usize,
        height: usize,
        engine: EngineSide,
        #[serde(default)]
        time_ms: Option<u64>,
        #[serde(default)]
        visits: Option<u64>,
    },
    Play {
        x: i64,
        y: i64,
    },
    Undo,
    Redo,
    Goto {
        ply: usize,
    },
    Go,
    Settings {
        #[serde(default)]
        engine: Option<EngineSide>,
        #[serde(default)]
        time_ms: Option<u64>,
        #[serde(default)]
        visits: Option<u64>,
        #[serde(default)]
        nbest: Option<usize>,
    },
    Analyse {
        #[serde(default)]
        nbest: Option<usize>,
    },
    Stop,
    Load {
        text: String,
    },
    OpenGame {
        index: usize,
    },
    /// Makes the board's engine thread panic: only served by a server started with
    /// `--allow-fault-injection` (the fault tests).
    InjectFault,
}

/// A finished game: who won (None: a draw) and why, and the five that won.
#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct GameResult {
    pub winner: Option<&'static str>,
    pub reason: String,
    pub five: Vec<[i64; 2]>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Candidate {
    #[serde(rename = "move")]
    pub mv: [i64; 2],
    pub name: String,
    pub visits: u32,
    pub winrate: f32,
    pub prior: f32,
    pub proven: Option<&'static str>,
    pub pv: Vec<[i64; 2]>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct GameSummary {
    pub index: usize,
    pub title: String,
    pub rule: String,
    pub width: usize,
    pub height: usize,
    pub moves: usize,
    pub result: Option<String>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct State {
    pub rule: String,
    pub width: usize,
    pub height: usize,
    pub line: Vec<[i64; 2]>,
    pub ply: usize,
    pub to_move: &'static str,
    pub forbidden: Vec<[i64; 2]>,
    pub result: Option<GameResult>,
    pub engine: EngineSide,
    pub time_ms: Option<u64>,
    pub visits: Option<u64>,
    pub nbest: usize,
    pub busy: Option<&'static str>,
    pub position: String,
    pub winrates: Vec<Option<f32>>,
    /// The evaluator that plays this game (a network claiming its rule and size, or the
    /// classical one).
    pub model: String,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub struct Analysis {
    pub ply: usize,
    #[serde(rename = "final")]
    pub done: bool,
    pub elapsed_ms: u64,
    pub visits: u64,
    pub speed: f64,
    pub candidates: Vec<Candidate>,
    pub proven: Option<&'static str>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Reply {
    Hello {
        version: &'static str,
        model: String,
        max_boards: usize,
        searches: usize,
    },
    // Boxed: a state is the biggest message by far, and replies wait in a channel.
    State(Box<State>),
    Analysis(Analysis),
    Queue {
        ahead: usize,
    },
    Message {
        text: String,
    },
    Error {
        text: String,
    },
    Games {
        games: Vec<GameSummary>,
    },
    Fault {
        text: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_are_strict() {
        let r: Request = serde_json::from_str(r#"{"type":"play","x":7,"y":7}"#).unwrap();
        assert_eq!(r, Request::Play { x: 7, y: 7 });
        let r: Request = serde_json::from_str(
            r#"{"type":"new_game","rule":"renju","width":15,"height":15,"engine":"none","time_ms":null,"visits":100}"#,
        )
        .unwrap();
        assert!(matches!(
            r,
            Request::NewGame {
                engine: EngineSide::None,
                visits: Some(100),
                ..
            }
        ));
        for bad in [
            r#"{"type":"play","x":7}"#,
            r#"{"type":"play","x":7,"y":7,"z":1}"#,
            r#"{"type":"fly"}"#,
            r#"{"x":1}"#,
            r#"[1,2]"#,
            r#"{"type":"new_game","rule":"renju","width":-1,"height":15,"engine":"none"}"#,
        ] {
            assert!(serde_json::from_str::<Request>(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn replies_name_their_type() {
        let text = serde_json::to_string(&Reply::Queue { ahead: 2 }).unwrap();
        assert_eq!(text, r#"{"type":"queue","ahead":2}"#);
    }
}
