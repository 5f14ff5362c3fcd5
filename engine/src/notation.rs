//! Positions and games as text, one grammar each, shared by the opening files, the scripting
//! interface, the tournament's game records and the board:
//! - algebraic points: a column letter (`a` = x 0) and a row counted from the bottom (`1` = the
//!   last row), as renju diagrams write them: `h8` is the centre of 15x15. A move string may
//!   run them together (`h8i9j10`) or separate them by spaces or commas;
//! - absolute `x,y` pairs, 0-based from the top left as the Gomocup protocol counts (`7,7 8,8`,
//!   pairs separated by spaces, semicolons or line breaks);
//! - game records: the PGN-like files `fivezero-tools tournament` writes (tags, numbered moves in
//!   algebraic notation, result) and SGF (`(;GM[4]SZ[15];B[hh];W[ii])`, its main line).
//!
//! Every error says where (token, line, game) and what was expected. `replay` puts a parsed line
//! on the rules core, refusing off-board, occupied and forbidden stones and a five before the last stone.
//! Depends on `game`.

use crate::game::{Board, Color, Rule};

/// A point as algebraic text (`h8`); `x,y` past 26 columns.
pub fn algebraic(x: u32, y: u32, height: usize) -> String {
    if x < 26 {
        format!("{}{}", (b'a' + x as u8) as char, height as i64 - y as i64)
    } else {
        format!("{x},{y}")
    }
}

/// The moves of `board` as one algebraic move string (`h8i9j10`).
pub fn move_string(board: &Board) -> String {
    board
        .history()
        .iter()
        .map(|(p, _)| algebraic(p.x() as u32, p.y() as u32, board.height()))
        .collect()
}

/// Algebraic points (`h8i9j10`, `h8 i9`, `H8,I9`) on a board `height` rows high, as `(x, y)`.
pub fn parse_algebraic(text: &str, height: usize) -> Result<Vec<(i64, i64)>, String> {
    let mut points = Vec::new();
    let mut chars = text
        .chars()
        .filter(|c| !c.is_whitespace() && *c != ',')
        .peekable();
    while let Some(c) = chars.next() {
        let letter = c.to_ascii_lowercase();
        if !letter.is_ascii_lowercase() {
            return Err(format!("expected a column letter, got {c:?}"));
        }
        let mut number = String::new();
        while let Some(d) = chars.peek().filter(|d| d.is_ascii_digit()) {
            number.push(*d);
            chars.next();
        }
        let row: i64 = number
            .parse()
            .map_err(|_| format!("column {letter} needs a row number, got {number:?}"))?;
        points.push(((letter as u8 - b'a') as i64, height as i64 - row));
    }
    Ok(points)
}

/// Absolute `x,y` pairs separated by spaces, semicolons or line breaks.
pub fn parse_absolute(text: &str) -> Result<Vec<(i64, i64)>, String> {
    text.split(|c: char| c.is_whitespace() || c == ';')
        .filter(|t| !t.is_empty())
        .map(|tok| {
            let (x, y) = tok
                .split_once(',')
                .ok_or_else(|| format!("`{tok}` is not x,y"))?;
            let n = |s: &str| {
                s.trim()
                    .parse::<i64>()
                    .map_err(|_| format!("`{tok}` is not x,y"))
            };
            Ok((n(x)?, n(y)?))
        })
        .collect()
}

/// A position typed by a person: algebraic when it has letters, `x,y` pairs otherwise.
pub fn parse_points(text: &str, height: usize) -> Result<Vec<(i64, i64)>, String> {
    if text.chars().any(|c| c.is_ascii_alphabetic()) {
        parse_algebraic(text, height)
    } else {
        parse_absolute(text)
    }
}

/// What `replay` accepts at the end of a line besides legal moves.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayEnd {
    /// The last stone may complete a five (a finished game's record).
    pub five: bool,
    /// The last stone may be black's on a renju forbidden point (a game lost by that foul).
    pub foul: bool,
}

/// Plays `points` (black first) on a new board; an off-board, occupied or forbidden stone, or a
/// five before the last stone, is an error naming it (`end` allows a five or a foul as the last stone).
pub fn replay(
    points: &[(i64, i64)],
    (width, height): (usize, usize),
    rule: Rule,
    end: ReplayEnd,
) -> Result<Board, String> {
    let mut board = Board::new(width, height, rule).map_err(|e| format!("board: {e}"))?;
    for (i, &(x, y)) in points.iter().enumerate() {
        let last = i + 1 == points.len();
        let name = |x: i64, y: i64| {
            if x >= 0 && y >= 0 && x < 26 {
                format!("{} ({x},{y})", algebraic(x as u32, y as u32, height))
            } else {
                format!("{x},{y}")
            }
        };
        let what = format!("stone {} at {}", i + 1, name(x, y));
        let pos = board.pos(x, y).map_err(|e| format!("{what}: {e}"))?;
        if !board.is_empty(pos) {
            return Err(format!("{what} is on an occupied point"));
        }
        let c = board.side_to_move();
        if c == Color::Black && board.is_forbidden(pos) {
            if !(last && end.foul) {
                return Err(format!("{what} is a forbidden point for black"));
            }
            board.place(pos, c).map_err(|e| format!("{what}: {e}"))?;
            continue;
        }
        board.play(pos).map_err(|e| format!("{what}: {e}"))?;
        if board.winner().is_some() && !(last && end.five) {
            return Err(format!("{what} completes a five"));
        }
    }
    Ok(board)
}

/// One game of a record file.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RecordedGame {
    /// `Black - White (result)` or what the file gives of it.
    pub title: String,
    pub rule: Option<Rule>,
    /// Width and height, when the file says.
    pub size: Option<(usize, usize)>,
    /// Moves in order, black first, as `(x, y)`.
    pub moves: Vec<(i64, i64)>,
    /// `1-0`, `0-1`, `1/2-1/2` or whatever the file writes.
    pub result: Option<String>,
}

/// Games read from a record file: SGF when it starts with `(`, the tournament's PGN-like
/// records otherwise. At most `max_games` are read (an error says so past them).
pub fn parse_records(text: &str, max_games: usize) -> Result<Vec<RecordedGame>, String> {
    let games = if text.trim_start().starts_with('(') {
        sgf::parse(text)?
    } else {
        pgn::parse(text)?
    };
    if games.is_empty() {
        return Err("no game in the file".into());
    }
    if games.len() > max_games {
        return Err(format!(
            "{} games in the file; at most {max_games} are read",
            games.len()
        ));
    }
    Ok(games)
}

/// Whether `text` looks like a record file rather than a typed position.
pub fn is_record_file(text: &str) -> bool {
    let t = text.trim_start();
    t.starts_with('(') || t.starts_with('[')
}

fn title(black: Option<&str>, white: Option<&str>, result: Option<&str>, n: usize) -> String {
    let mut t = match (black, white) {
        (Some(b), Some(w)) => format!("{b} - {w}"),
        _ => format!("game {n}"),
    };
    if let Some(r) = result {
        t.push_str(&format!(" ({r})"));
    }
    t
}

fn parse_size(text: &str) -> Option<(usize, usize)> {
    let t = text.trim();
    let (w, h) = t.split_once(['x', ':']).unwrap_or((t, t));
    Some((w.trim().parse().ok()?, h.trim().parse().ok()?))
}

/// The tournament's records: `[Tag "value"]` lines, a blank line, numbered moves, the result.
mod pgn {
    use super::*;

    const RESULTS: [&str; 4] = ["1-0", "0-1", "1/2-1/2", "*"];

    pub(super) fn parse(text: &str) -> Result<Vec<RecordedGame>, String> {
        let mut games = Vec::new();
        let mut tags: Vec<(String, String)> = Vec::new();
        let mut moves: Vec<(usize, String)> = Vec::new();
        let mut in_moves = false;
        for (i, raw) in text.lines().enumerate() {
            let (no, line) = (i + 1, raw.trim());
            if line.starts_with('[') {
                if in_moves {
                    games.push(finish(&tags, &moves, games.len() + 1)?);
                    tags.clear();
                    moves.clear();
                    in_moves = false;
                }
                tags.push(
                    tag(line)
                        .ok_or_else(|| format!("line {no}: `{line}` is not a [Tag \"value\"]"))?,
                );
            } else if !line.is_empty() {
                if tags.is_empty() && games.is_empty() && !in_moves {
                    return Err(format!(
                        "line {no}: a record starts with [Tag \"value\"] lines"
                    ));
                }
                in_moves = true;
                moves.extend(line.split_whitespace().map(|t| (no, t.to_string())));
            }
        }
        if !tags.is_empty() || !moves.is_empty() {
            games.push(finish(&tags, &moves, games.len() + 1)?);
        }
        Ok(games)
    }

    fn tag(line: &str) -> Option<(String, String)> {
        let inner = line.strip_prefix('[')?.strip_suffix(']')?;
        let (key, value) = inner.split_once(char::is_whitespace)?;
        let value = value.trim().strip_prefix('"')?.strip_suffix('"')?;
        Some((key.to_string(), value.to_string()))
    }

    fn finish(
        tags: &[(String, String)],
        tokens: &[(usize, String)],
        n: usize,
    ) -> Result<RecordedGame, String> {
        let get = |k: &str| {
            tags.iter()
                .find(|(key, _)| key.eq_ignore_ascii_case(k))
                .map(|(_, v)| v.as_str())
        };
        let size = match get("Size") {
            Some(s) => {
                Some(parse_size(s).ok_or_else(|| format!("game {n}: Size \"{s}\" is not WxH"))?)
            }
            None => None,
        };
        let rule = match get("Rule") {
            Some(r) => Some(r.parse::<Rule>().map_err(|e| format!("game {n}: {e}"))?),
            None => None,
        };
        let height = size.map_or(15, |s| s.1);
        let mut moves = Vec::new();
        let mut result = get("Result").map(str::to_string);
        for (no, tok) in tokens {
            let tok = tok.as_str();
            if RESULTS.contains(&tok) {
                result = Some(tok.to_string());
            } else if tok.ends_with('.') && tok[..tok.len() - 1].chars().all(|c| c.is_ascii_digit())
            {
                continue;
            } else {
                let p = parse_algebraic(tok, height)
                    .map_err(|e| format!("line {no}: game {n}: move `{tok}`: {e}"))?;
                moves.extend(p);
            }
        }
        Ok(RecordedGame {
            title: title(get("Black"), get("White"), result.as_deref(), n),
            rule,
            size,
            moves,
            result,
        })
    }
}

/// SGF (FF[4], GM[4] for gomoku): a game tree's main line. Points are two letters, column then
/// row, `a` = 0 from the top left; `SZ[15]` or `SZ[20:15]`.
mod sgf {
    use super::*;

    pub(super) fn parse(text: &str) -> Result<Vec<RecordedGame>, String> {
        let mut p = Parser {
            s: text.as_bytes(),
            i: 0,
        };
        let mut games = Vec::new();
        loop {
            p.skip_ws();
            if p.i >= p.s.len() {
                break;
            }
            let nodes = p.tree(0)?;
            games.push(game(&nodes, games.len() + 1)?);
        }
        Ok(games)
    }

    type Node = Vec<(String, Vec<String>)>;

    struct Parser<'a> {
        s: &'a [u8],
        i: usize,
    }

    impl Parser<'_> {
        fn skip_ws(&mut self) {
            while self.s.get(self.i).is_some_and(u8::is_ascii_whitespace) {
                self.i += 1;
            }
        }
        fn line(&self) -> usize {
            self.s[..self.i.min(self.s.len())]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1
        }
        fn err(&self, what: &str) -> String {
            format!("SGF line {}: {what}", self.line())
        }
        fn expect(&mut self, b: u8) -> Result<(), String> {
            self.skip_ws();
            if self.s.get(self.i) == Some(&b) {
                self.i += 1;
                Ok(())
            } else {
                Err(self.err(&format!("expected `{}`", b as char)))
            }
        }

        /// `( node+ tree* )`: the nodes of the main line (the first variation followed).
        fn tree(&mut self, depth: usize) -> Result<Vec<Node>, String> {
            if depth > 1000 {
                return Err(self.err("variations nested too deep"));
            }
            self.expect(b'(')?;
            let mut nodes = Vec::new();
            loop {
                self.skip_ws();
                match self.s.get(self.i) {
                    Some(b';') => {
                        self.i += 1;
                        nodes.push(self.node()?);
                    }
                    Some(b'(') => {
                        let first = self.tree(depth + 1)?;
                        nodes.extend(first);
                        // Other variations are read past, not followed.
                        loop {
                            self.skip_ws();
                            if self.s.get(self.i) != Some(&b'(') {
                                break;
                            }
                            self.tree(depth + 1)?;
                        }
                    }
                    Some(b')') => {
                        self.i += 1;
                        return Ok(nodes);
                    }
                    Some(_) => return Err(self.err("expected `;`, `(` or `)`")),
                    None => return Err(self.err("the file ends inside a game")),
                }
            }
        }

        fn node(&mut self) -> Result<Node, String> {
            let mut props = Vec::new();
            loop {
                self.skip_ws();
                let start = self.i;
                while self.s.get(self.i).is_some_and(u8::is_ascii_alphabetic) {
                    self.i += 1;
                }
                if start == self.i {
                    return Ok(props);
                }
                let id = String::from_utf8_lossy(&self.s[start..self.i]).to_ascii_uppercase();
                let mut values = Vec::new();
                loop {
                    self.skip_ws();
                    if self.s.get(self.i) != Some(&b'[') {
                        break;
                    }
                    self.i += 1;
                    values.push(self.value()?);
                }
                if values.is_empty() {
                    return Err(self.err(&format!("property {id} has no [value]")));
                }
                props.push((id, values));
            }
        }

        fn value(&mut self) -> Result<String, String> {
            let mut v = Vec::new();
            loop {
                match self.s.get(self.i) {
                    Some(b'\\') => {
                        self.i += 1;
                        if let Some(&b) = self.s.get(self.i) {
                            v.push(b);
                        }
                    }
                    Some(b']') => {
                        self.i += 1;
                        return Ok(String::from_utf8_lossy(&v).into_owned());
                    }
                    Some(&b) => v.push(b),
                    None => return Err(self.err("the file ends inside a [value]")),
                }
                self.i += 1;
            }
        }
    }

    fn game(nodes: &[Node], n: usize) -> Result<RecordedGame, String> {
        let prop = |id: &str| {
            nodes
                .iter()
                .flatten()
                .find(|(k, _)| k == id)
                .and_then(|(_, v)| v.first())
                .map(String::as_str)
        };
        let size = match prop("SZ") {
            Some(s) => {
                Some(parse_size(s).ok_or_else(|| format!("game {n}: SZ[{s}] is not a size"))?)
            }
            None => None,
        };
        if nodes.iter().flatten().any(|(k, _)| k == "AB" || k == "AW") {
            return Err(format!(
                "game {n}: set-up stones (AB/AW) are not read; a game of moves is"
            ));
        }
        let mut moves = Vec::new();
        for (k, v) in nodes.iter().flatten() {
            if k != "B" && k != "W" {
                continue;
            }
            let text = v[0].trim();
            let b = text.as_bytes();
            if b.len() != 2 || !b.iter().all(u8::is_ascii_lowercase) {
                return Err(format!("game {n}: move {k}[{text}] is not two letters"));
            }
            let expected = if moves.len() % 2 == 0 { "B" } else { "W" };
            if k != expected {
                return Err(format!(
                    "game {n}: move {} is {k}[{text}], {expected} was to play",
                    moves.len() + 1
                ));
            }
            moves.push(((b[0] - b'a') as i64, (b[1] - b'a') as i64));
        }
        let rule = prop("RU").and_then(|r| r.trim().to_ascii_lowercase().parse::<Rule>().ok());
        let result = prop("RE").map(str::to_string);
        Ok(RecordedGame {
            title: title(prop("PB"), prop("PW"), result.as_deref(), n),
            rule,
            size,
            moves,
            result,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_in_both_notations() {
        assert_eq!(parse_algebraic("h8 i9", 15).unwrap(), vec![(7, 7), (8, 6)]);
        assert_eq!(
            parse_algebraic("A15o1", 15).unwrap(),
            vec![(0, 0), (14, 14)]
        );
        assert_eq!(parse_algebraic("h8,i9", 15).unwrap(), vec![(7, 7), (8, 6)]);
        assert!(parse_algebraic("h", 15).is_err());
        assert!(parse_algebraic("8h", 15).is_err());
        assert_eq!(
            parse_absolute("7,7 8,8;6,9\n1,2").unwrap(),
            vec![(7, 7), (8, 8), (6, 9), (1, 2)]
        );
        assert!(parse_absolute("7,7 8").is_err());
        assert_eq!(
            parse_points("7,7 8,6", 15).unwrap(),
            parse_points("h8i9", 15).unwrap()
        );
        assert_eq!(algebraic(7, 7, 15), "h8");
        assert_eq!(algebraic(0, 14, 15), "a1");
    }

    #[test]
    fn replay_names_the_bad_stone() {
        let p = |t| parse_algebraic(t, 15).unwrap();
        let b = replay(&p("h8i9"), (15, 15), Rule::Freestyle, ReplayEnd::default()).unwrap();
        assert_eq!(move_string(&b), "h8i9");
        let e = replay(&p("h8h8"), (15, 15), Rule::Freestyle, ReplayEnd::default()).unwrap_err();
        assert!(e.contains("stone 2 at h8") && e.contains("occupied"), "{e}");
        let e = replay(
            &[(7, 7), (20, 3)],
            (15, 15),
            Rule::Freestyle,
            ReplayEnd::default(),
        )
        .unwrap_err();
        assert!(e.contains("stone 2") && e.contains("off"), "{e}");
        let five = p("a1b1a2b2a3b3a4b4a5");
        assert!(replay(&five, (15, 15), Rule::Freestyle, ReplayEnd::default()).is_err());
        let end = ReplayEnd {
            five: true,
            foul: false,
        };
        assert!(
            replay(&five, (15, 15), Rule::Freestyle, end)
                .unwrap()
                .winner()
                .is_some()
        );
        let mut more = five.clone();
        more.push((10, 10));
        let e = replay(&more, (15, 15), Rule::Freestyle, end).unwrap_err();
        assert!(e.contains("stone 9") && e.contains("five"), "{e}");
        // A renju double three for black at h8 (g8-i8 one way, h7-h9 the other).
        let foul = p("g8a1i8a3h7a5h9a7h8");
        let e = replay(&foul, (15, 15), Rule::Renju, ReplayEnd::default()).unwrap_err();
        assert!(
            e.contains("stone 9 at h8") && e.contains("forbidden"),
            "{e}"
        );
        let end = ReplayEnd {
            five: false,
            foul: true,
        };
        assert_eq!(
            replay(&foul, (15, 15), Rule::Renju, end)
                .unwrap()
                .move_count(),
            9
        );
    }

    #[test]
    fn tournament_records() {
        let text = "[Event \"fivezero-tools tournament\"]\n[Game \"1\"]\n[Black \"a\"]\n[White \"b\"]\n\
            [Rule \"renju\"]\n[Size \"15x15\"]\n[Result \"1-0\"]\n\n1. h8 i9 2. h9 i8\n3. h10 1-0\n\n\
            [Event \"x\"]\n[Size \"20x20\"]\n\n1. k10 *\n";
        let games = parse_records(text, 10).unwrap();
        assert_eq!(games.len(), 2);
        assert_eq!(games[0].title, "a - b (1-0)");
        assert_eq!(games[0].rule, Some(Rule::Renju));
        assert_eq!(games[0].moves, vec![(7, 7), (8, 6), (7, 6), (8, 7), (7, 5)]);
        assert_eq!(games[1].size, Some((20, 20)));
        assert_eq!(games[1].moves, vec![(10, 10)]);
        assert!(parse_records(text, 1).unwrap_err().contains("at most 1"));
        let bad = "[Size \"15x15\"]\n\n1. h8 zz\n";
        assert!(
            parse_records(bad, 10).unwrap_err().contains("line 3"),
            "{}",
            parse_records(bad, 10).unwrap_err()
        );
        assert!(parse_records("h8 i9\n", 10).is_err());
        assert!(parse_records("[Size \"huge\"]\n\n1. h8\n", 10).is_err());
    }

    #[test]
    fn sgf_main_line() {
        let text =
            "(;GM[4]FF[4]SZ[15]PB[x]PW[y]RE[B+];B[hh];W[ii](;B[hi]C[a \\] b];W[ij])(;B[aa]))";
        let games = parse_records(text, 10).unwrap();
        assert_eq!(games[0].moves, vec![(7, 7), (8, 8), (7, 8), (8, 9)]);
        assert_eq!(games[0].size, Some((15, 15)));
        assert_eq!(games[0].title, "x - y (B+)");
        for bad in [
            "(;SZ[15];B[hh]",
            "(;SZ[15];B[h])",
            "(;SZ[15];W[hh])",
            "(;SZ[15]AB[hh])",
            "(;B[hh]C[x)",
            "(x)",
        ] {
            assert!(parse_records(bad, 10).is_err(), "{bad}");
        }
        let deep = "(".repeat(5000);
        assert!(parse_records(&deep, 10).is_err());
    }
}
