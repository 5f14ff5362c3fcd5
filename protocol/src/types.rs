//! The typed vocabulary of the protocol; parsing lives in `parse`, printing in `print`, line
//! assembly in `reader`.
//!
//! Must not depend on any other module of this crate (everything else depends on it).

use thiserror::Error;

/// A board point as the protocol writes it: 0-based column `x` and row `y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coord {
    /// Column, 0 = left.
    pub x: u32,
    /// Row, 0 = top.
    pub y: u32,
}

impl Coord {
    /// The point at column `x`, row `y`.
    pub const fn new(x: u32, y: u32) -> Self {
        Self { x, y }
    }
}

/// Who owns a stone in a `BOARD` / `SWAP2BOARD` / `YXBOARD` listing (`x,y,f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoneOwner {
    /// `f = 1`: the brain's own stone.
    Own,
    /// `f = 2`: the opponent's stone.
    Opponent,
    /// `f = 3`: continuous-game marker (winning line / forbidden mark); brains ignore these stones.
    Marker,
}

impl StoneOwner {
    /// The `f` field of an `x,y,f` line.
    pub const fn code(self) -> u32 {
        match self {
            StoneOwner::Own => 1,
            StoneOwner::Opponent => 2,
            StoneOwner::Marker => 3,
        }
    }

    /// Inverse of [`StoneOwner::code`]; `None` for anything but 1, 2, 3.
    pub const fn from_code(f: u32) -> Option<Self> {
        match f {
            1 => Some(StoneOwner::Own),
            2 => Some(StoneOwner::Opponent),
            3 => Some(StoneOwner::Marker),
            _ => None,
        }
    }
}

/// One `x,y,f` line of a `BOARD` / `YXBOARD` / `SWAP2BOARD` block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoardStone {
    /// Where the stone is.
    pub at: Coord,
    /// Whose it is (the `f` field).
    pub owner: StoneOwner,
}

impl BoardStone {
    /// The stone of `owner` at (`x`, `y`).
    pub const fn new(x: u32, y: u32, owner: StoneOwner) -> Self {
        Self {
            at: Coord::new(x, y),
            owner,
        }
    }
}

/// A command from the manager to the brain.
///
/// Parsed from one line (or, for the three board blocks, from several lines through
/// [`CommandReader`](crate::CommandReader)); printed by `Display` exactly as a manager sends it,
/// multi-line commands with `'\n'` between their lines and no trailing newline.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `START n`: new game on an n×n board. The brain, not the protocol, decides which sizes it supports.
    Start {
        /// Board side length.
        size: u32,
    },
    /// `RECTSTART w,h`: new game on a w×h board.
    RectStart {
        /// Columns.
        width: u32,
        /// Rows.
        height: u32,
    },
    /// `RESTART`: new game, same board size.
    Restart,
    /// `BEGIN`: the brain moves first on the empty board.
    Begin,
    /// `TURN x,y`: the opponent played there; the brain replies with its move.
    Turn(Coord),
    /// `BOARD` / `x,y,f` lines / `DONE`: set the position and reply with a move.
    Board(Vec<BoardStone>),
    /// `YXBOARD` / `x,y,f` lines / `DONE`: set the position, do not think (Yixin-Board).
    YxBoard(Vec<BoardStone>),
    /// `SWAP2BOARD` / stone lines / `DONE`: a swap2 opening decision. The stones are in placement
    /// order (black, white, black, …) and there are 0, 3 or 5 of them. Managers send plain `x,y`
    /// lines in that order (GomocupJudge); `x,y,f` lines are accepted too and ordered by colour
    /// (the larger group is black). Printed as plain `x,y` lines, as the referee sends them.
    Swap2Board(Vec<Coord>),
    /// `TAKEBACK x,y`: remove that stone; reply `OK`.
    Takeback(Coord),
    /// `PLAY x,y`: play exactly this move (answer to `SUGGEST`); reply with it.
    Play(Coord),
    /// `INFO key value`: a setting; never answered.
    Info(Info),
    /// `END`: exit promptly, no reply.
    End,
    /// `ABOUT`: reply with `name="..", version=".."` on one line.
    About,
    /// `YXSHOWFORBID`: reply `FORBID xxyy….`.
    YxShowForbid,
    /// `YXNBEST n`: multi-PV search with n best moves.
    YxNBest(u32),
    /// `YXHASHCLEAR`: clear the transposition table.
    YxHashClear,
    /// `YXSHOWINFO`: the brain describes its limits (`MESSAGE INFO MAX_THREAD_NUM n`, Yixin-Board).
    YxShowInfo,
    /// `STOP` or `YXSTOP`: return the best move now. Printed as `YXSTOP`.
    Stop,
}

/// The settings an `INFO key value` line carries. Keys match case-insensitively; unknown keys
/// become [`Info::Other`], which brains ignore.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Info {
    /// `timeout_turn` ms; 0 = move as fast as possible.
    TimeoutTurn(i64),
    /// `timeout_match` ms; 0 = unlimited.
    TimeoutMatch(i64),
    /// `time_left` ms; may be negative; 2147483647 = unlimited.
    TimeLeft(i64),
    /// `max_memory` bytes; 0 = unlimited.
    MaxMemory(u64),
    /// `game_type`: 0 human, 1 brain, 2 tournament, 3 network tournament.
    GameType(u32),
    /// `rule` bitmask: 1 exactly five, 2 continuous, 4 renju, 8 caro.
    Rule(u32),
    /// `evaluate x,y` (a GUI's cursor position; ignored by brains).
    Evaluate(Coord),
    /// `folder`: a directory for persistent files (rest of the line, may contain spaces).
    Folder(String),
    /// `max_depth` (Yixin).
    MaxDepth(u64),
    /// `max_node` (Yixin): nodes to search; -1 (read as `u64::MAX`) and 0 mean no limit.
    MaxNode(u64),
    /// `thread_num` (Yixin).
    ThreadNum(u32),
    /// `hash_size` in KiB (Yixin).
    HashSize(u64),
    /// `pondering` 0/1 (Yixin).
    Pondering(bool),
    /// `show_detail` (Yixin).
    ShowDetail(u32),
    /// `time_increment` ms (Yixin).
    TimeIncrement(i64),
    /// Any other key, kept verbatim (key case preserved, value trimmed, possibly empty). To print
    /// back, the key must be non-empty and free of whitespace.
    Other {
        /// The key as written.
        key: String,
        /// The rest of the line, trimmed.
        value: String,
    },
}

/// A line from the brain to the manager.
///
/// `Display` prints it as the brain must write it (without the line terminator). Free text
/// (messages, about values) has CR and LF replaced by spaces when printed, so one value is always
/// one line on the wire.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BrainLine {
    /// `OK`.
    Ok,
    /// `x,y`: a move.
    Move(Coord),
    /// `-1,-1`: pass.
    Pass,
    /// `x,y x,y [x,y]`: several moves on one line (swap2 answers). Parsed only with 2 or more.
    Moves(Vec<Coord>),
    /// `SWAP` (swap2: take the other colour).
    Swap,
    /// `key="value", …`: the answer to `ABOUT`, keys in the order written.
    About(Vec<(String, String)>),
    /// `MESSAGE text`.
    Message(String),
    /// `DEBUG text`.
    Debug(String),
    /// `ERROR text`.
    Error(String),
    /// `UNKNOWN text`.
    Unknown(String),
    /// `FORBID xxyyxxyy….`: forbidden points as two-digit `x` then two-digit `y` (so coordinates
    /// must be below 100 to print), terminated by `.`.
    Forbid(Vec<Coord>),
    /// `SUGGEST x,y` (the brain proposes; the manager answers `PLAY`). fivezero never sends it.
    Suggest(Coord),
}

/// Why a manager line did not become a [`Command`]. Its `Display` is the text for the brain's
/// reply; [`CommandError::reply`] builds that reply.
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum CommandError {
    /// Not a command this protocol knows: the brain answers `UNKNOWN`. Holds the offending line
    /// (trimmed, shortened to a few hundred characters).
    #[error("{0}")]
    Unknown(String),
    /// A known command with bad arguments or in an impossible place: the brain answers `ERROR`
    /// (except after `INFO`, which expects no reply at all).
    #[error("{command}: {reason}")]
    Invalid {
        /// The command keyword as printed (`TURN`, `BOARD`, …); empty when text held no command.
        command: String,
        /// What was wrong, for the `ERROR` reply.
        reason: String,
    },
}

impl CommandError {
    /// The line a brain sends back for this error: `UNKNOWN …` or `ERROR …`.
    pub fn reply(&self) -> BrainLine {
        match self {
            CommandError::Unknown(line) => BrainLine::Unknown(line.clone()),
            CommandError::Invalid { .. } => BrainLine::Error(self.to_string()),
        }
    }
}

/// Why a brain line did not become a [`BrainLine`].
#[derive(Debug, Clone, PartialEq, Eq, Error)]
pub enum BrainLineError {
    /// The line was empty or only whitespace.
    #[error("empty line")]
    Empty,
    /// Not a reply form this protocol knows (holds the line, shortened).
    #[error("unrecognised brain output: {0}")]
    Unrecognized(String),
    /// Looks like a known form but its content is wrong (negative or huge coordinate, …).
    #[error("invalid brain output {line:?}: {reason}")]
    Invalid {
        /// The offending line, shortened.
        line: String,
        /// What was wrong.
        reason: String,
    },
}
