//! Opening files: one opening per line, stones in move order, black first.
//!
//! Three notations (a file uses one; `auto` tells them apart per file):
//! - offset, as c-gomoku-cli: `0,0, 1,0, -1,1` — x,y pairs relative to the centre
//!   (`width/2`, `height/2`), pairs separated by `, ` (numbers may be negative);
//! - absolute numeric: `7,7 8,8 6,9` — 0-based protocol coordinates, pairs separated by spaces;
//! - algebraic: `h8 i9 g10` — column letter a.. (x = 0..), row number counted from the bottom
//!   as on a renju diagram (row 1 = y = height-1), so `h8` is the centre of 15x15.
//!
//! Empty lines and lines starting with `#` are skipped. Every opening is replayed on the rules
//! core before a tournament or match starts: off-board, duplicate or (renju) forbidden stones and
//! openings that already contain a five are errors naming the line. Depends on `game`.

use crate::game::{Board, Color, Pos, Rule};

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum OpeningFormat {
    Auto,
    Offset,
    Absolute,
    Algebraic,
}

/// One validated opening: protocol coordinates in move order (black first).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Opening {
    pub stones: Vec<(u32, u32)>,
    /// The source line, for the game record.
    pub text: String,
}

/// Parses and validates a whole openings file.
pub fn parse_openings(
    text: &str,
    format: OpeningFormat,
    width: usize,
    height: usize,
    rule: Rule,
) -> Result<Vec<Opening>, String> {
    let lines: Vec<(usize, &str)> = text
        .lines()
        .enumerate()
        .map(|(i, l)| (i + 1, l.trim()))
        .filter(|(_, l)| !l.is_empty() && !l.starts_with('#'))
        .collect();
    let format = match format {
        OpeningFormat::Auto => detect(lines.iter().map(|(_, l)| *l)),
        f => f,
    };
    let mut out = Vec::with_capacity(lines.len());
    for (no, line) in lines {
        let raw = match format {
            OpeningFormat::Offset => parse_offset(line, width, height),
            OpeningFormat::Absolute => parse_absolute(line),
            OpeningFormat::Algebraic | OpeningFormat::Auto => parse_algebraic(line, height),
        }
        .map_err(|e| format!("openings line {no} `{line}`: {e}"))?;
        let stones = validate(&raw, width, height, rule)
            .map_err(|e| format!("openings line {no} `{line}`: {e}"))?;
        out.push(Opening {
            stones,
            text: line.to_string(),
        });
    }
    Ok(out)
}

/// Letters mean algebraic; a negative number or a comma followed by a space means offset
/// (c-gomoku-cli writes `0,0, 1,0`); otherwise space-separated `x,y` pairs are absolute.
fn detect<'a>(mut lines: impl Iterator<Item = &'a str> + Clone) -> OpeningFormat {
    if lines
        .clone()
        .any(|l| l.chars().any(|c| c.is_ascii_alphabetic()))
    {
        OpeningFormat::Algebraic
    } else if lines
        .any(|l| l.contains('-') || l.contains(", ") || l.contains(",\t") || l.ends_with(','))
    {
        OpeningFormat::Offset
    } else {
        OpeningFormat::Absolute
    }
}

fn parse_offset(line: &str, width: usize, height: usize) -> Result<Vec<(i64, i64)>, String> {
    let nums: Vec<i64> = line
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| {
            s.parse::<i64>()
                .map_err(|_| format!("`{s}` is not an integer"))
        })
        .collect::<Result<_, _>>()?;
    if !nums.len().is_multiple_of(2) {
        return Err("odd number of coordinates".into());
    }
    let (cx, cy) = ((width / 2) as i64, (height / 2) as i64);
    Ok(nums.chunks(2).map(|p| (cx + p[0], cy + p[1])).collect())
}

fn parse_absolute(line: &str) -> Result<Vec<(i64, i64)>, String> {
    line.split_whitespace()
        .map(|tok| {
            let (x, y) = tok
                .split_once(',')
                .ok_or_else(|| format!("`{tok}` is not x,y"))?;
            let p = |s: &str| {
                s.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("`{tok}` is not x,y"))
            };
            Ok((p(x)?, p(y)?))
        })
        .collect()
}

fn parse_algebraic(line: &str, height: usize) -> Result<Vec<(i64, i64)>, String> {
    line.split(|c: char| c.is_whitespace() || c == ',')
        .filter(|t| !t.is_empty())
        .map(|tok| {
            let lower = tok.to_ascii_lowercase();
            let mut chars = lower.chars();
            let col = chars.next().filter(|c| c.is_ascii_lowercase());
            let row = chars.as_str().parse::<i64>().ok();
            match (col, row) {
                (Some(c), Some(r)) => Ok(((c as u8 - b'a') as i64, height as i64 - r)),
                _ => Err(format!("`{tok}` is not a point like h8")),
            }
        })
        .collect()
}

/// Replays the stones (black, white, black, ...) on the rules core.
fn validate(
    raw: &[(i64, i64)],
    width: usize,
    height: usize,
    rule: Rule,
) -> Result<Vec<(u32, u32)>, String> {
    let mut board = Board::new(width, height, rule).map_err(|e| format!("board: {e}"))?;
    let mut out = Vec::with_capacity(raw.len());
    for (i, &(x, y)) in raw.iter().enumerate() {
        if x < 0 || y < 0 || x >= width as i64 || y >= height as i64 {
            return Err(format!(
                "stone {} at {x},{y} is off the {width}x{height} board",
                i + 1
            ));
        }
        let pos = Pos::new(x as usize, y as usize);
        if !board.is_empty(pos) {
            return Err(format!(
                "stone {} at {x},{y} is on an occupied point",
                i + 1
            ));
        }
        if board.side_to_move() == Color::Black && board.is_forbidden(pos) {
            return Err(format!(
                "stone {} at {x},{y} is a forbidden point for black",
                i + 1
            ));
        }
        board
            .play(pos)
            .map_err(|e| format!("stone {} at {x},{y}: {e}", i + 1))?;
        if board.winner().is_some() {
            return Err(format!("stone {} at {x},{y} completes a five", i + 1));
        }
        out.push((x as u32, y as u32));
    }
    Ok(out)
}

/// Writes a point as algebraic text for records (`h8`); falls back to `x,y` past 26 columns.
pub fn algebraic(x: u32, y: u32, height: usize) -> String {
    if x < 26 {
        format!("{}{}", (b'a' + x as u8) as char, height as i64 - y as i64)
    } else {
        format!("{x},{y}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Vec<Opening>, String> {
        parse_openings(text, OpeningFormat::Auto, 15, 15, Rule::Freestyle)
    }

    #[test]
    fn three_notations_agree() {
        let off = parse("0,0, 1,1, -1,1\n").unwrap();
        let abs = parse("# comment\n7,7 8,8 6,8\n").unwrap();
        let alg = parse("h8 i7 g7\n").unwrap();
        assert_eq!(off[0].stones, vec![(7, 7), (8, 8), (6, 8)]);
        assert_eq!(abs[0].stones, off[0].stones);
        assert_eq!(alg[0].stones, off[0].stones);
        assert_eq!(algebraic(7, 7, 15), "h8");
        assert_eq!(algebraic(0, 14, 15), "a1");
    }

    #[test]
    fn bad_openings_are_errors_with_line_numbers() {
        let e = parse("0,0, 1,1\n0,0, 0,0\n").unwrap_err();
        assert!(e.contains("line 2") && e.contains("occupied"), "{e}");
        let e = parse("0,0, 9,0\n").unwrap_err();
        assert!(e.contains("off the 15x15"), "{e}");
        assert!(parse("z99\n").unwrap_err().contains("off the"));
        assert!(parse("7,7 8\n").is_err());
        assert!(parse("h8 ?\n").is_err());
        let five = "h8 a1 i8 a2 j8 a3 k8 a4 l8";
        assert!(parse(five).unwrap_err().contains("five"));
    }
}
