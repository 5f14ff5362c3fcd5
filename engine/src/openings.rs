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
//! openings that already contain a five are errors naming the line. The notations themselves are
//! `notation`'s; depends on `game` and `notation`.

use crate::game::Rule;
use crate::notation::{self, ReplayEnd};

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
            OpeningFormat::Absolute => notation::parse_absolute(line),
            OpeningFormat::Algebraic | OpeningFormat::Auto => {
                notation::parse_algebraic(line, height)
            }
        }
        .map_err(|e| format!("openings line {no} `{line}`: {e}"))?;
        let stones = notation::replay(&raw, (width, height), rule, ReplayEnd::default())
            .map_err(|e| format!("openings line {no} `{line}`: {e}"))?
            .history()
            .iter()
            .map(|(p, _)| (p.x() as u32, p.y() as u32))
            .collect();
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
