//! nom parsers for single protocol lines, both directions: manager lines into [`CommandLine`],
//! brain lines into [`BrainLine`].
//!
//! Syntax is recognised with nom; range and meaning are checked afterwards so every failure gets a
//! typed, human-readable reason. Nothing here panics on any input: numbers are range-checked
//! through `u128`/`TryFrom`, never by arithmetic that can overflow. Multi-line assembly (the board
//! blocks) is the job of `reader`; this module depends only on `types`.

use nom::{
    IResult, Parser,
    branch::alt,
    bytes::complete::{take_while, take_while1},
    character::complete::{char, digit0, digit1},
    combinator::{all_consuming, eof, opt, recognize},
    multi::separated_list1,
    sequence::{delimited, preceded, separated_pair, terminated},
};

use crate::types::{
    BoardStone, BrainLine, BrainLineError, Command, CommandError, Coord, Info, StoneOwner,
};

type Res<'a, T> = IResult<&'a str, T>;

/// Longest excerpt of offending input kept in an error, so a 1 MB garbage line does not become a
/// 1 MB `UNKNOWN` reply.
const EXCERPT_CHARS: usize = 200;

/// The three multi-line position blocks (`header` / `x,y,f` lines / `DONE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BlockKind {
    /// `BOARD`: set position and think.
    Board,
    /// `YXBOARD`: set position, do not think.
    YxBoard,
    /// `SWAP2BOARD`: swap2 opening decision.
    Swap2Board,
}

impl BlockKind {
    /// The header keyword as printed (`BOARD`, `YXBOARD`, `SWAP2BOARD`).
    pub const fn keyword(self) -> &'static str {
        match self {
            BlockKind::Board => "BOARD",
            BlockKind::YxBoard => "YXBOARD",
            BlockKind::Swap2Board => "SWAP2BOARD",
        }
    }

    /// The complete command for this block from its stone lines (each with its `f` field, if
    /// the line had one), in the order received.
    ///
    /// # Errors
    /// The reason, for the block's `ERROR` reply: a `BOARD`/`YXBOARD` line without its `f`
    /// field, or a `SWAP2BOARD` block that [`swap2_placement_order`] refuses.
    pub fn into_command(self, stones: Vec<(Coord, Option<StoneOwner>)>) -> Result<Command, String> {
        let owned = || {
            stones
                .iter()
                .map(|&(at, owner)| {
                    owner
                        .map(|owner| BoardStone { at, owner })
                        .ok_or_else(|| format!("not an x,y,f stone line: \"{at}\""))
                })
                .collect::<Result<Vec<_>, _>>()
        };
        match self {
            BlockKind::Board => owned().map(Command::Board),
            BlockKind::YxBoard => owned().map(Command::YxBoard),
            BlockKind::Swap2Board => swap2_placement_order(&stones).map(Command::Swap2Board),
        }
    }
}

/// The stones of a `SWAP2BOARD` block in placement order (black, white, black, …).
///
/// Plain `x,y` lines are in placement order already (GomocupJudge sends them so). With `x,y,f`
/// lines the owner field only splits the stones into two colours, and tools disagree on whose
/// view `f` takes; since black has placed one stone more than white (3 = 2 + 1, 5 = 3 + 2), the
/// larger group is black whatever the convention. The order within a colour is kept.
///
/// # Errors
/// Mixed `x,y` and `x,y,f` lines, a count other than 0, 3 or 5, an owner `f = 3`, two stones on
/// one point, or `f` groups of the wrong sizes.
pub fn swap2_placement_order(stones: &[(Coord, Option<StoneOwner>)]) -> Result<Vec<Coord>, String> {
    let n = stones.len();
    if !matches!(n, 0 | 3 | 5) {
        return Err(format!("expects 0, 3 or 5 stones, got {n}"));
    }
    for (i, (at, _)) in stones.iter().enumerate() {
        if stones[..i].iter().any(|(seen, _)| seen == at) {
            return Err(format!("two stones on {at}"));
        }
    }
    let with_owner = stones.iter().filter(|(_, owner)| owner.is_some()).count();
    if with_owner == 0 {
        return Ok(stones.iter().map(|&(at, _)| at).collect());
    }
    if with_owner != n {
        return Err("mixes x,y and x,y,f lines".into());
    }
    if stones
        .iter()
        .any(|(_, owner)| *owner == Some(StoneOwner::Marker))
    {
        return Err("owner 3 (a marker) has no place in a swap2 opening".into());
    }
    let group = |o: StoneOwner| {
        stones
            .iter()
            .filter(move |(_, owner)| *owner == Some(o))
            .map(|&(at, _)| at)
    };
    let (own, opp): (Vec<Coord>, Vec<Coord>) = (
        group(StoneOwner::Own).collect(),
        group(StoneOwner::Opponent).collect(),
    );
    let (black, white) = if own.len() > opp.len() {
        (own, opp)
    } else {
        (opp, own)
    };
    if black.len() != white.len() + 1 {
        return Err(format!(
            "{} and {} stones of the two owners; swap2 has one black stone more than white",
            black.len(),
            white.len()
        ));
    }
    let mut order = Vec::with_capacity(n);
    for (i, b) in black.into_iter().enumerate() {
        order.push(b);
        if let Some(&w) = white.get(i) {
            order.push(w);
        }
    }
    Ok(order)
}

/// What one manager line is, taken on its own, without knowing whether a block is open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CommandLine {
    /// A complete single-line command.
    Command(Command),
    /// The header of a multi-line block; stones and `DONE` follow.
    BlockStart(BlockKind),
    /// `DONE`, the end of a block.
    Done,
}

/// Parses one manager line on its own (leading/trailing whitespace and line terminators are
/// ignored, keywords are case-insensitive).
///
/// Commands without arguments (`BEGIN`, `END`, `BOARD`, …) ignore anything after the keyword:
/// the keyword states the manager's intent unambiguously, and answering `ERROR` to a `BEGIN` or
/// ignoring an `END` would cost a game. Commands with arguments reject anything extra.
///
/// # Errors
/// [`CommandError::Unknown`] if the line does not start with a known keyword (including an empty
/// line and a bare `x,y,f` stone line), [`CommandError::Invalid`] if the arguments are wrong.
pub fn parse_command_line(line: &str) -> Result<CommandLine, CommandError> {
    let line = line.trim();
    let Ok((args, kw)) = keyword(line) else {
        return Err(CommandError::Unknown(excerpt(line)));
    };
    let args = args.trim();
    let single = |c| Ok(CommandLine::Command(c));
    match kw.to_ascii_uppercase().as_str() {
        "START" => match args.split_whitespace().collect::<Vec<_>>()[..] {
            // Yixin-Board writes `START width height`.
            [w, h] => {
                let width = number_arg(w, "START", "board width")?;
                let height = number_arg(h, "START", "board height")?;
                single(if width == height {
                    Command::Start { size: width }
                } else {
                    Command::RectStart { width, height }
                })
            }
            _ => single(Command::Start {
                size: number_arg(args, "START", "board size")?,
            }),
        },
        "RECTSTART" => {
            let (width, height) = pair_arg(args, "RECTSTART", "width", "height")?;
            single(Command::RectStart { width, height })
        }
        "RESTART" => single(Command::Restart),
        "BEGIN" => single(Command::Begin),
        "TURN" => single(Command::Turn(coord_arg(args, "TURN")?)),
        "TAKEBACK" => single(Command::Takeback(coord_arg(args, "TAKEBACK")?)),
        "PLAY" => single(Command::Play(coord_arg(args, "PLAY")?)),
        "BOARD" => Ok(CommandLine::BlockStart(BlockKind::Board)),
        "YXBOARD" => Ok(CommandLine::BlockStart(BlockKind::YxBoard)),
        "SWAP2BOARD" => Ok(CommandLine::BlockStart(BlockKind::Swap2Board)),
        "DONE" => Ok(CommandLine::Done),
        "INFO" => single(Command::Info(parse_info(args)?)),
        "END" => single(Command::End),
        "ABOUT" => single(Command::About),
        "YXSHOWFORBID" => single(Command::YxShowForbid),
        "YXNBEST" => single(Command::YxNBest(number_arg(args, "YXNBEST", "count")?)),
        "YXHASHCLEAR" => single(Command::YxHashClear),
        "YXSHOWINFO" => single(Command::YxShowInfo),
        "STOP" | "YXSTOP" => single(Command::Stop),
        _ => Err(CommandError::Unknown(excerpt(line))),
    }
}

/// Parses one `x,y,f` line of a board block (spaces around the commas allowed).
///
/// # Errors
/// The reason, for the block's `ERROR` reply: bad syntax, negative or huge numbers, `f` not 1..=3.
pub fn parse_stone_line(line: &str) -> Result<BoardStone, String> {
    let line = line.trim();
    let Ok((_, (x, _, y, _, f))) =
        all_consuming((raw_int, comma, raw_int, comma, raw_int)).parse(line)
    else {
        return Err(format!("not an x,y,f stone line: {:?}", excerpt(line)));
    };
    let x = to_int::<u32>(x).map_err(|e| format!("x {e} in {:?}", excerpt(line)))?;
    let y = to_int::<u32>(y).map_err(|e| format!("y {e} in {:?}", excerpt(line)))?;
    let owner = to_int::<u32>(f)
        .ok()
        .and_then(StoneOwner::from_code)
        .ok_or_else(|| format!("owner must be 1, 2 or 3 in {:?}", excerpt(line)))?;
    Ok(BoardStone {
        at: Coord::new(x, y),
        owner,
    })
}

/// Parses one line of a `SWAP2BOARD` block: `x,y` (what referees send) or `x,y,f`.
///
/// # Errors
/// The reason, for the block's `ERROR` reply, as [`parse_stone_line`].
pub fn parse_swap2_line(line: &str) -> Result<(Coord, Option<StoneOwner>), String> {
    let line = line.trim();
    match all_consuming(raw_pair).parse(line) {
        Ok((_, pair)) => to_coord(pair)
            .map(|c| (c, None))
            .map_err(|e| format!("{e} in {:?}", excerpt(line))),
        Err(_) => match parse_stone_line(line) {
            Ok(s) => Ok((s.at, Some(s.owner))),
            Err(e) if e.starts_with("not an") => Err(format!(
                "not an x,y or x,y,f stone line: {:?}",
                excerpt(line)
            )),
            Err(e) => Err(e),
        },
    }
}

/// Parses the `key value` part of an `INFO` line.
///
/// # Errors
/// [`CommandError::Invalid`] (command `INFO`) for a missing key, or a known key whose value has
/// the wrong form or range. Unknown keys never fail: they become [`Info::Other`].
pub fn parse_info(args: &str) -> Result<Info, CommandError> {
    let args = args.trim();
    let Ok((value, key)) = token(args) else {
        return Err(invalid("INFO", "missing key"));
    };
    let value = value.trim();
    let bad = |reason: String| invalid("INFO", format!("{key}: {reason}"));
    let num = |what: &str| -> Result<RawInt<'_>, CommandError> {
        all_consuming(raw_int)
            .parse(value)
            .map(|(_, r)| r)
            .map_err(|_| {
                invalid(
                    "INFO",
                    format!("{key}: expected {what}, got {:?}", excerpt(value)),
                )
            })
    };
    macro_rules! typed {
        ($variant:ident, $t:ty) => {
            Info::$variant(to_int::<$t>(num("an integer")?).map_err(bad)?)
        };
    }
    let info = match key.to_ascii_lowercase().as_str() {
        "timeout_turn" => typed!(TimeoutTurn, i64),
        "timeout_match" => typed!(TimeoutMatch, i64),
        "time_left" => typed!(TimeLeft, i64),
        "max_memory" => typed!(MaxMemory, u64),
        "game_type" => typed!(GameType, u32),
        "rule" => typed!(Rule, u32),
        "max_depth" => typed!(MaxDepth, u64),
        // Yixin-Board sends -1 for "no limit".
        "max_node" => match to_int::<i64>(num("an integer")?) {
            Ok(-1) => Info::MaxNode(u64::MAX),
            _ => typed!(MaxNode, u64),
        },
        "thread_num" => typed!(ThreadNum, u32),
        "hash_size" => typed!(HashSize, u64),
        "show_detail" => typed!(ShowDetail, u32),
        "time_increment" => typed!(TimeIncrement, i64),
        "pondering" => Info::Pondering(match to_int::<u8>(num("0 or 1")?) {
            Ok(0) => false,
            Ok(1) => true,
            _ => return Err(bad("expected 0 or 1".into())),
        }),
        "evaluate" => Info::Evaluate(coord_arg(value, "INFO").map_err(|e| match e {
            CommandError::Invalid { reason, .. } => bad(reason),
            other => other,
        })?),
        "folder" if value.is_empty() => return Err(bad("missing directory".into())),
        "folder" => Info::Folder(value.to_string()),
        _ => Info::Other {
            key: key.to_string(),
            value: value.to_string(),
        },
    };
    Ok(info)
}

impl Command {
    /// Parses a single-line command.
    ///
    /// # Errors
    /// As [`parse_command_line`]; besides, a block header (`BOARD`, …) or `DONE` is
    /// [`CommandError::Invalid`] here because it needs several lines: use
    /// [`Command::parse`](crate::Command::parse) or [`CommandReader`](crate::CommandReader).
    pub fn parse_single(line: &str) -> Result<Command, CommandError> {
        match parse_command_line(line)? {
            CommandLine::Command(c) => Ok(c),
            CommandLine::BlockStart(kind) => Err(invalid(
                kind.keyword(),
                "starts a multi-line block; feed the lines to a CommandReader",
            )),
            CommandLine::Done => Err(invalid("DONE", "outside a BOARD/YXBOARD/SWAP2BOARD block")),
        }
    }
}

impl BrainLine {
    /// Parses one line a brain wrote (manager side). Keywords are case-insensitive, surrounding
    /// whitespace and line terminators are ignored, `x,y` may have spaces around the comma.
    ///
    /// # Errors
    /// [`BrainLineError::Empty`] for a blank line, [`BrainLineError::Unrecognized`] for a line of
    /// no known form, [`BrainLineError::Invalid`] for a known form with bad content (a negative
    /// coordinate other than the pass `-1,-1`, a number too large, a malformed `FORBID`).
    pub fn parse(line: &str) -> Result<BrainLine, BrainLineError> {
        let line = line.trim();
        if line.is_empty() {
            return Err(BrainLineError::Empty);
        }
        let bad = |reason: String| BrainLineError::Invalid {
            line: excerpt(line),
            reason,
        };
        // Order matters: a reply keyword wins over `key=` (`MESSAGE =` is a message), and `key=`
        // wins over moves (an ABOUT key may start with a digit).
        if let Ok((rest, kw)) = keyword(line) {
            let text = rest.trim();
            let bare = |l: BrainLine| {
                if text.is_empty() {
                    Ok(l)
                } else {
                    Err(bad(format!("unexpected text after {kw}")))
                }
            };
            match kw.to_ascii_uppercase().as_str() {
                "OK" => return bare(BrainLine::Ok),
                "SWAP" => return bare(BrainLine::Swap),
                "MESSAGE" => return Ok(BrainLine::Message(text.to_string())),
                "DEBUG" => return Ok(BrainLine::Debug(text.to_string())),
                "ERROR" => return Ok(BrainLine::Error(text.to_string())),
                "UNKNOWN" => return Ok(BrainLine::Unknown(text.to_string())),
                "FORBID" => return parse_forbid(text).map(BrainLine::Forbid).map_err(bad),
                "SUGGEST" => {
                    return match all_consuming(raw_pair).parse(text) {
                        Ok((_, p)) => to_coord(p).map(BrainLine::Suggest).map_err(bad),
                        Err(_) => Err(bad("expected SUGGEST x,y".into())),
                    };
                }
                _ => {}
            }
        }
        if is_about(line) {
            return parse_about(line).map(BrainLine::About);
        }
        if line.starts_with(|c: char| c.is_ascii_digit() || c == '-') {
            return parse_moves(line).map_err(bad);
        }
        Err(BrainLineError::Unrecognized(excerpt(line)))
    }
}

/// Reads a brain's `ABOUT` reply (`name="fivezero", version="1.0", author="…"`) into key/value
/// pairs in the order written (manager side). Values may be quoted (then they may contain commas
/// and spaces, but no `"`) or bare words; pairs are separated by commas and/or whitespace; a
/// trailing comma is accepted.
///
/// # Errors
/// [`BrainLineError::Empty`] for a blank line, [`BrainLineError::Unrecognized`] if the line is
/// not a list of `key=value` pairs.
pub fn parse_about(line: &str) -> Result<Vec<(String, String)>, BrainLineError> {
    let line = line.trim();
    if line.is_empty() {
        return Err(BrainLineError::Empty);
    }
    let value = alt((
        delimited(char('"'), take_while(|c| c != '"'), char('"')),
        // A bare word may not contain '"', so an unterminated quote is an error, not a value.
        take_while(|c: char| c != ',' && c != '"' && !c.is_whitespace()),
    ));
    let pair = separated_pair(about_key, (ws0, char('='), ws0), value);
    let sep = alt((recognize((ws0, char(','), ws0)), ws1));
    let mut list = all_consuming(terminated(
        separated_list1(sep, pair),
        (ws0, opt(char(',')), ws0, eof),
    ));
    match list.parse(line) {
        Ok((_, pairs)) => Ok(pairs
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()),
        Err(_) => Err(BrainLineError::Unrecognized(excerpt(line))),
    }
}

/// Looks a key up in parsed `ABOUT` pairs, case-insensitively; the first match wins.
pub fn about_field<'a>(pairs: &'a [(String, String)], key: &str) -> Option<&'a str> {
    pairs
        .iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(key))
        .map(|(_, v)| v.as_str())
}

// ---- building blocks ----------------------------------------------------------------------------

/// An integer as written: its sign and its digits. The range is checked by [`to_int`], so that
/// "too large" and "negative" get their own reasons instead of a generic syntax error.
#[derive(Debug, Clone, Copy)]
struct RawInt<'a> {
    negative: bool,
    digits: &'a str,
}

fn raw_int(i: &str) -> Res<'_, RawInt<'_>> {
    (opt(char('-')), digit1)
        .map(|(sign, digits)| RawInt {
            negative: sign.is_some(),
            digits,
        })
        .parse(i)
}

fn ws0(i: &str) -> Res<'_, &str> {
    take_while(char::is_whitespace).parse(i)
}

fn ws1(i: &str) -> Res<'_, &str> {
    take_while1(char::is_whitespace).parse(i)
}

/// `,` with optional whitespace around it.
fn comma(i: &str) -> Res<'_, char> {
    delimited(ws0, char(','), ws0).parse(i)
}

fn raw_pair(i: &str) -> Res<'_, (RawInt<'_>, RawInt<'_>)> {
    separated_pair(raw_int, comma, raw_int).parse(i)
}

/// A command or reply keyword: ASCII letters and digits, ended by whitespace or the end of line
/// (so `7,7` or `name=` are not keywords).
fn keyword(i: &str) -> Res<'_, &str> {
    terminated(
        take_while1(|c: char| c.is_ascii_alphanumeric()),
        alt((ws1, eof)),
    )
    .parse(i)
}

/// A whitespace-free word (an INFO key).
fn token(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| !c.is_whitespace()).parse(i)
}

fn about_key(i: &str) -> Res<'_, &str> {
    take_while1(|c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-').parse(i)
}

/// Converts a [`RawInt`] into `T`, explaining a failure.
fn to_int<T: TryFrom<i128>>(r: RawInt<'_>) -> Result<T, String> {
    // Every value below 2^127 fits the u128 parse; longer digit strings are "too large" anyway.
    let magnitude = r
        .digits
        .parse::<u128>()
        .ok()
        .and_then(|m| i128::try_from(m).ok());
    let Some(magnitude) = magnitude else {
        return Err(if r.negative {
            "is too small".into()
        } else {
            "is too large".into()
        });
    };
    let value = if r.negative { -magnitude } else { magnitude };
    T::try_from(value).map_err(|_| {
        if value < 0 {
            format!("must not be negative ({value})")
        } else {
            format!("is too large ({value})")
        }
    })
}

fn to_coord((x, y): (RawInt<'_>, RawInt<'_>)) -> Result<Coord, String> {
    let x = to_int::<u32>(x).map_err(|e| format!("x {e}"))?;
    let y = to_int::<u32>(y).map_err(|e| format!("y {e}"))?;
    Ok(Coord::new(x, y))
}

fn invalid(command: &str, reason: impl Into<String>) -> CommandError {
    CommandError::Invalid {
        command: command.to_string(),
        reason: reason.into(),
    }
}

/// At most [`EXCERPT_CHARS`] characters of `s`, cut on a char boundary, `…` marking a cut.
pub(crate) fn excerpt(s: &str) -> String {
    match s.char_indices().nth(EXCERPT_CHARS) {
        None => s.to_string(),
        Some((cut, _)) => format!("{}…", &s[..cut]),
    }
}

fn number_arg<T: TryFrom<i128>>(args: &str, command: &str, what: &str) -> Result<T, CommandError> {
    if args.is_empty() {
        return Err(invalid(command, format!("missing {what}")));
    }
    let (_, raw) = all_consuming(raw_int).parse(args).map_err(|_| {
        invalid(
            command,
            format!("{what} must be an integer, got {:?}", excerpt(args)),
        )
    })?;
    to_int(raw).map_err(|e| invalid(command, format!("{what} {e}")))
}

fn pair_arg(
    args: &str,
    command: &str,
    first: &str,
    second: &str,
) -> Result<(u32, u32), CommandError> {
    let (_, (a, b)) = all_consuming(raw_pair).parse(args).map_err(|_| {
        invalid(
            command,
            format!("expected {first},{second}, got {:?}", excerpt(args)),
        )
    })?;
    let a = to_int(a).map_err(|e| invalid(command, format!("{first} {e}")))?;
    let b = to_int(b).map_err(|e| invalid(command, format!("{second} {e}")))?;
    Ok((a, b))
}

fn coord_arg(args: &str, command: &str) -> Result<Coord, CommandError> {
    let (x, y) = pair_arg(args, command, "x", "y")?;
    Ok(Coord::new(x, y))
}

/// `x,y` (a move or `-1,-1` pass) or several `x,y` separated by whitespace (swap2 answers).
fn parse_moves(line: &str) -> Result<BrainLine, String> {
    let Ok((_, pairs)) = all_consuming(separated_list1(ws1, raw_pair)).parse(line) else {
        return Err("expected x,y or a list of x,y".into());
    };
    if let [(x, y)] = pairs.as_slice() {
        let is_minus_one = |r: &RawInt<'_>| r.negative && to_int::<i64>(*r) == Ok(-1);
        if is_minus_one(x) && is_minus_one(y) {
            return Ok(BrainLine::Pass);
        }
        return to_coord((*x, *y)).map(BrainLine::Move);
    }
    pairs
        .into_iter()
        .map(to_coord)
        .collect::<Result<Vec<_>, _>>()
        .map(BrainLine::Moves)
}

/// `key=` at the start marks an ABOUT reply (no other reply form contains `=` there).
fn is_about(line: &str) -> bool {
    (about_key, ws0, char::<&str, nom::error::Error<&str>>('='))
        .parse(line)
        .is_ok()
}

/// The payload of `FORBID`: `xxyy` groups then an optional `.` (some engines omit it).
fn parse_forbid(text: &str) -> Result<Vec<Coord>, String> {
    let Ok((_, digits)) =
        all_consuming(terminated(digit0, preceded(ws0, opt(char('.'))))).parse(text)
    else {
        return Err("FORBID expects two-digit xxyy groups ending with '.'".into());
    };
    if digits.len() % 4 != 0 {
        return Err(format!(
            "FORBID digit count {} is not a multiple of 4",
            digits.len()
        ));
    }
    // `digit1` only accepts ASCII digits, so every byte is one char and the slices are on boundaries.
    let two = |s: &str| {
        s.bytes()
            .fold(0u32, |acc, b| acc * 10 + u32::from(b.saturating_sub(b'0')))
    };
    Ok(digits
        .as_bytes()
        .chunks(4)
        .filter_map(|c| std::str::from_utf8(c).ok())
        .map(|c| Coord::new(two(&c[..2]), two(&c[2..])))
        .collect())
}
