//! Tactics suite files: positions with the verdict a correct solver must reach. Read by the
//! `fivezero-tools tactics` runner and by the engine's tests.
//!
//! Depends on `game` only. Format (one or more positions per file; `#` starts a comment line):
//!
//! ```text
//! [name]                       starts a position; the name is free text
//! size 15 15                   width height (default 15 15)
//! rule renju                   freestyle | standard | renju | caro (default freestyle)
//! moves 7,7 8,8 pass 9,9 ...   stones in move order, black first, alternating; x,y are 0-based
//!                              column,row; `pass` skips a turn (for composed positions)
//! to-move white                optional: who moves next (default: whoever follows the last move)
//! expect win-vcf               win-vcf | win-vct | must-defend [x,y ...] | no-win | no-vcf | lost
//! ```
//!
//! `win-vcf`: a win by continuous fours (or a five now) must be found; `win-vct`: any forced win;
//! `must-defend x,y ...`: the opponent has a forced win and exactly these moves refute it, i.e.
//! leave it no VCF and no VCT (without points: any non-empty defence list); `no-win`: the side to move has no forced win, so claiming
//! one is wrong; `no-vcf`: no win by fours alone (a VCT may exist); `lost`: every move loses.

use crate::game::{Board, Color, GameError, Pos, Rule};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expect {
    WinVcf,
    WinVct,
    MustDefend(Option<Vec<Pos>>),
    NoWin,
    /// No win by continuous fours (a VCT may still exist).
    NoVcf,
    Lost,
}

#[derive(Debug, Clone)]
pub struct Position {
    pub name: String,
    pub board: Board,
    pub to_move: Color,
    pub expect: Expect,
    /// 1-based line of the `[name]` header, for messages.
    pub line: usize,
}

#[derive(Debug, thiserror::Error)]
pub enum SuiteError {
    #[error("line {line}: {msg}")]
    Syntax { line: usize, msg: String },
    #[error("line {line}: {source}")]
    Game { line: usize, source: GameError },
}

fn syntax(line: usize, msg: impl Into<String>) -> SuiteError {
    SuiteError::Syntax {
        line,
        msg: msg.into(),
    }
}

fn parse_point(s: &str, line: usize) -> Result<(i64, i64), SuiteError> {
    let (x, y) = s
        .split_once(',')
        .ok_or_else(|| syntax(line, format!("'{s}' is not x,y")))?;
    let x = x
        .trim()
        .parse()
        .map_err(|_| syntax(line, format!("bad x in '{s}'")))?;
    let y = y
        .trim()
        .parse()
        .map_err(|_| syntax(line, format!("bad y in '{s}'")))?;
    Ok((x, y))
}

struct Draft {
    name: String,
    line: usize,
    size: (usize, usize),
    rule: Rule,
    moves: Vec<(Option<(i64, i64)>, usize)>,
    to_move: Option<Color>,
    expect: Option<ExpectLine>,
}

/// An `expect` line as read: its word, its points and its line number.
type ExpectLine = (String, Vec<(i64, i64)>, usize);

impl Draft {
    fn finish(self) -> Result<Position, SuiteError> {
        let mut board =
            Board::new(self.size.0, self.size.1, self.rule).map_err(|e| SuiteError::Game {
                line: self.line,
                source: e,
            })?;
        let mut colour = Color::Black;
        for (m, line) in &self.moves {
            if let Some((x, y)) = *m {
                let p = board.pos(x, y).map_err(|e| SuiteError::Game {
                    line: *line,
                    source: e,
                })?;
                board.place(p, colour).map_err(|e| SuiteError::Game {
                    line: *line,
                    source: e,
                })?;
            }
            colour = colour.opp();
        }
        let to_move = self.to_move.unwrap_or(colour);
        let (word, points, eline) = self.expect.ok_or_else(|| {
            syntax(
                self.line,
                format!("position '{}' has no expect line", self.name),
            )
        })?;
        let mut pts = Vec::new();
        for (x, y) in points {
            pts.push(board.pos(x, y).map_err(|e| SuiteError::Game {
                line: eline,
                source: e,
            })?);
        }
        pts.sort();
        let expect = match word.as_str() {
            "win-vcf" => Expect::WinVcf,
            "win-vct" => Expect::WinVct,
            "must-defend" => Expect::MustDefend((!pts.is_empty()).then_some(pts)),
            "no-win" => Expect::NoWin,
            "no-vcf" => Expect::NoVcf,
            "lost" => Expect::Lost,
            other => return Err(syntax(eline, format!("unknown expectation '{other}'"))),
        };
        Ok(Position {
            name: self.name,
            board,
            to_move,
            expect,
            line: self.line,
        })
    }
}

/// Parses a suite file's text.
///
/// # Errors
/// A syntax error or an impossible position (off-board or repeated stone), with its line number.
pub fn parse(text: &str) -> Result<Vec<Position>, SuiteError> {
    let mut out = Vec::new();
    let mut draft: Option<Draft> = None;
    for (i, raw) in text.lines().enumerate() {
        let line = i + 1;
        let l = raw.trim();
        if l.is_empty() || l.starts_with('#') {
            continue;
        }
        if let Some(name) = l.strip_prefix('[').and_then(|r| r.strip_suffix(']')) {
            if let Some(d) = draft.take() {
                out.push(d.finish()?);
            }
            draft = Some(Draft {
                name: name.trim().to_string(),
                line,
                size: (15, 15),
                rule: Rule::Freestyle,
                moves: Vec::new(),
                to_move: None,
                expect: None,
            });
            continue;
        }
        let d = draft
            .as_mut()
            .ok_or_else(|| syntax(line, "expected a [name] header first"))?;
        let (key, rest) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
        match key {
            "size" => {
                let v: Vec<usize> = rest
                    .split_whitespace()
                    .filter_map(|s| s.parse().ok())
                    .collect();
                match v.as_slice() {
                    [w, h] => d.size = (*w, *h),
                    [n] => d.size = (*n, *n),
                    _ => return Err(syntax(line, "size needs 'W H'")),
                }
            }
            "rule" => d.rule = rest.parse().map_err(|e: String| syntax(line, e))?,
            "moves" => {
                for tok in rest.split_whitespace() {
                    let m = if tok == "pass" {
                        None
                    } else {
                        Some(parse_point(tok, line)?)
                    };
                    d.moves.push((m, line));
                }
            }
            "to-move" => {
                d.to_move = Some(match rest.trim() {
                    "black" => Color::Black,
                    "white" => Color::White,
                    other => {
                        return Err(syntax(line, format!("to-move '{other}' (black or white)")));
                    }
                })
            }
            "expect" => {
                let mut it = rest.split_whitespace();
                let word = it
                    .next()
                    .ok_or_else(|| syntax(line, "expect what?"))?
                    .to_string();
                let pts = it
                    .map(|t| parse_point(t, line))
                    .collect::<Result<Vec<_>, _>>()?;
                d.expect = Some((word, pts, line));
            }
            other => return Err(syntax(line, format!("unknown key '{other}'"))),
        }
    }
    if let Some(d) = draft.take() {
        out.push(d.finish()?);
    }
    Ok(out)
}
