//! The replay store: finished self-play games on disk as checksummed chunks
//! (`<dir>/chunk-NNNNNNNN.bin`, see `store`), a window of the newest N positions, and sampling of
//! training examples with a random one of the 8 symmetries applied lazily (the move list is
//! mapped, then the position replayed and encoded with `engine::eval::features`).
//!
//! A corrupt or truncated chunk is reported (naming the file), skipped and left as it is on disk;
//! new chunks always get fresh numbers, so nothing is ever overwritten.
//!
//! Depends on `engine::game`, `engine::eval::features`, `store`, `symmetry`; never on tch.

use std::path::{Path, PathBuf};

use engine::eval::features;
use engine::game::{Board, Pos, Rule};
use serde::{Deserialize, Serialize};

use crate::support::store::{self, StoreError};
use crate::support::symmetry;
use engine::rng::Rng;

const MAGIC: [u8; 4] = *b"FZRP";
const VERSION: u32 = 1;

/// One self-play game: every move with the search's visit counts at that position.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct GameRecord {
    pub board_size: u8,
    /// `Rule::to_protocol` bits.
    pub rule: u32,
    /// Dense indices (`y * size + x`) of the moves, black first.
    pub moves: Vec<u16>,
    /// For each move, the policy target `(dense index, weight)` of its search: the root's
    /// visits, or 1 per winning move of a proven win (see `selfplay::policy_target`).
    pub visits: Vec<Vec<(u16, u32)>>,
    /// 1 black won, -1 white won, 0 draw.
    pub outcome: i8,
    /// The loser resigned.
    pub resigned: bool,
}

impl GameRecord {
    /// Training positions: plies with a policy target (a cheap search of playout-cap
    /// randomization records an empty one: played, not learned from).
    pub fn positions(&self) -> usize {
        self.visits.iter().filter(|v| !v.is_empty()).count()
    }
    /// Plies with a record, targets or not.
    pub fn plies(&self) -> usize {
        self.visits.len()
    }
    pub fn rule(&self) -> Rule {
        Rule::from_protocol(self.rule)
    }
}

/// One training example: planes, policy target, value target for the side to move.
#[derive(Clone, Debug, PartialEq)]
pub struct Sample {
    pub planes: Vec<f32>,
    pub policy: Vec<f32>,
    pub value: f32,
    /// The opponent's reply: the next ply's policy target on this position's board (the
    /// auxiliary target); empty when the game ends here or the next ply has no target.
    pub opponent_policy: Vec<f32>,
}

#[derive(Debug, thiserror::Error)]
pub enum ReplayError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error("replay folder {dir}: {source}")]
    Dir { dir: String, source: std::io::Error },
    #[error("game record {index}: {why}")]
    Record { index: usize, why: String },
}

/// Replays `moves[..ply]` of `rec` mapped by symmetry `sym` into a board.
pub fn board_at(rec: &GameRecord, ply: usize, sym: usize) -> Result<Board, String> {
    let n = rec.board_size as usize;
    let mut b = Board::new(n, n, rec.rule()).map_err(|e| e.to_string())?;
    for &m in &rec.moves[..ply.min(rec.moves.len())] {
        let i = m as usize;
        if i >= n * n {
            return Err(format!("move {i} is off a {n}x{n} board"));
        }
        let (x, y) = symmetry::map_xy(sym, n, i % n, i / n);
        b.play(Pos::new(x, y)).map_err(|e| e.to_string())?;
    }
    Ok(b)
}

/// The policy target `rec` recorded at `ply`, as probabilities over the board under symmetry
/// `sym`; None where that ply has no target (or there is no such ply).
fn policy_target(rec: &GameRecord, ply: usize, sym: usize) -> Option<Vec<f32>> {
    let n = rec.board_size as usize;
    let visits = rec.visits.get(ply).filter(|v| !v.is_empty())?;
    let total: u64 = visits.iter().map(|v| v.1 as u64).sum();
    let mut policy = vec![0f32; n * n];
    for &(i, v) in visits {
        if (i as usize) < n * n && total > 0 {
            policy[symmetry::map_index(sym, n, i as usize)] += v as f32 / total as f32;
        }
    }
    Some(policy)
}

/// The example at `ply` of `rec` under symmetry `sym`.
pub fn sample_at(rec: &GameRecord, ply: usize, sym: usize) -> Result<Sample, String> {
    sample_and_board(rec, ply, sym).map(|(sample, _)| sample)
}

/// `sample_at`, with the board the example encodes (for a teacher that reads boards).
pub fn sample_and_board(
    rec: &GameRecord,
    ply: usize,
    sym: usize,
) -> Result<(Sample, Board), String> {
    let board = board_at(rec, ply, sym)?;
    let mut planes = vec![0f32; features::input_len(&board)];
    features::encode(&board, &mut planes);
    let policy =
        policy_target(rec, ply, sym).ok_or_else(|| format!("no policy target at ply {ply}"))?;
    // Black moves at even plies; the outcome is from black's side.
    let sign = if ply.is_multiple_of(2) { 1.0 } else { -1.0 };
    let sample = Sample {
        planes,
        policy,
        value: sign * rec.outcome as f32,
        opponent_policy: policy_target(rec, ply + 1, sym).unwrap_or_default(),
    };
    Ok((sample, board))
}

/// Chunks on disk and the window of newest positions loaded in memory.
pub struct Replay {
    dir: PathBuf,
    /// Games in the window, oldest first.
    games: Vec<GameRecord>,
    /// (game, ply) of every position in the window.
    index: Vec<(u32, u32)>,
    window: usize,
    next_chunk: u64,
}

impl Replay {
    /// Opens (creating) `dir` and loads the newest chunks covering `window` positions. Corrupt
    /// chunks are reported through `warn` and skipped.
    pub fn open(
        dir: &Path,
        window: usize,
        mut warn: impl FnMut(String),
    ) -> Result<Replay, ReplayError> {
        let dir_err = |source| ReplayError::Dir {
            dir: dir.display().to_string(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(dir_err)?;
        let chunks = store::numbered_files(dir, "chunk-", ".bin").map_err(dir_err)?;
        let next_chunk = chunks.last().map_or(0, |c| c.0 + 1);
        let mut loaded: Vec<Vec<GameRecord>> = Vec::new();
        let mut positions = 0usize;
        for (_, path) in chunks.iter().rev() {
            if positions >= window {
                break;
            }
            match store::read::<Vec<GameRecord>>(path, MAGIC, VERSION) {
                Ok(games) => {
                    positions += games.iter().map(GameRecord::positions).sum::<usize>();
                    loaded.push(games);
                }
                Err(e) => warn(format!("skipping replay chunk: {e}")),
            }
        }
        let mut r = Replay {
            dir: dir.to_path_buf(),
            games: Vec::new(),
            index: Vec::new(),
            window,
            next_chunk,
        };
        for games in loaded.into_iter().rev() {
            r.push_games(games);
        }
        Ok(r)
    }

    fn push_games(&mut self, games: Vec<GameRecord>) {
        self.games.extend(games);
        let total: usize = self.games.iter().map(GameRecord::positions).sum();
        // Drop whole old games while the rest still covers the window.
        let mut drop_n = 0;
        let mut left = total;
        for g in &self.games {
            if left - g.positions() < self.window {
                break;
            }
            left -= g.positions();
            drop_n += 1;
        }
        self.games.drain(..drop_n);
        self.index.clear();
        for (gi, g) in self.games.iter().enumerate() {
            for (ply, target) in g.visits.iter().enumerate() {
                if !target.is_empty() {
                    self.index.push((gi as u32, ply as u32));
                }
            }
        }
    }

    /// Writes `games` as a new chunk and adds them to the window. Returns the chunk's path.
    pub fn add_chunk(&mut self, games: Vec<GameRecord>) -> Result<PathBuf, ReplayError> {
        for (i, g) in games.iter().enumerate() {
            if g.visits.len() > g.moves.len() || g.board_size < 5 {
                return Err(ReplayError::Record {
                    index: i,
                    why: "visits do not match moves".into(),
                });
            }
        }
        let path = self.dir.join(format!("chunk-{:08}.bin", self.next_chunk));
        store::write(&path, MAGIC, VERSION, &games)?;
        self.next_chunk += 1;
        self.push_games(games);
        Ok(path)
    }

    /// Positions in the window.
    pub fn len(&self) -> usize {
        self.index.len()
    }
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
    }
    pub fn games(&self) -> &[GameRecord] {
        &self.games
    }
    /// Number the next chunk will get (the replay cursor a checkpoint stores).
    pub fn next_chunk(&self) -> u64 {
        self.next_chunk
    }

    /// A uniformly drawn position under a uniformly drawn symmetry (square boards only).
    pub fn sample(&self, rng: &mut Rng) -> Option<Result<Sample, String>> {
        self.sample_with_board(rng)
            .map(|r| r.map(|(sample, _)| sample))
    }

    /// `sample`, with the board the example encodes.
    pub fn sample_with_board(&self, rng: &mut Rng) -> Option<Result<(Sample, Board), String>> {
        if self.index.is_empty() {
            return None;
        }
        let (g, ply) = self.index[rng.below(self.index.len())];
        let sym = rng.below(symmetry::COUNT);
        Some(sample_and_board(&self.games[g as usize], ply as usize, sym))
    }
}
