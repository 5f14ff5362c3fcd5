//! Property tests: print→parse round trips for every `Command` (through `CommandReader`, line by
//! line and through the byte splitter) and every `BrainLine`; arbitrary input never panics.

use proptest::prelude::*;
use protocol::{
    BoardStone, BrainLine, Command, CommandError, CommandReader, Coord, Info, StoneOwner,
    parse_about, split_lines,
};

fn coord() -> impl Strategy<Value = Coord> {
    prop_oneof![
        (0u32..25, 0u32..25).prop_map(|(x, y)| Coord::new(x, y)),
        (any::<u32>(), any::<u32>()).prop_map(|(x, y)| Coord::new(x, y)),
    ]
}

fn stones() -> impl Strategy<Value = Vec<BoardStone>> {
    let owner = prop_oneof![
        Just(StoneOwner::Own),
        Just(StoneOwner::Opponent),
        Just(StoneOwner::Marker)
    ];
    prop::collection::vec(
        (coord(), owner).prop_map(|(at, owner)| BoardStone { at, owner }),
        0..12,
    )
}

/// A swap2 opening as the reader yields it: 0, 3 or 5 distinct points in placement order.
fn swap2_opening() -> impl Strategy<Value = Vec<Coord>> {
    prop::sample::select(vec![0usize, 3, 5]).prop_flat_map(|n| {
        prop::collection::hash_set(coord(), n).prop_map(|set| set.into_iter().collect())
    })
}

/// One-line text that survives trimming: no CR/LF, no surrounding whitespace.
fn text() -> impl Strategy<Value = String> {
    "([^\\s]([^\\r\\n]{0,24}[^\\s])?)?"
}

fn nonempty_text() -> impl Strategy<Value = String> {
    "[^\\s]([^\\r\\n]{0,24}[^\\s])?"
}

const KNOWN_KEYS: [&str; 15] = [
    "timeout_turn",
    "timeout_match",
    "time_left",
    "max_memory",
    "game_type",
    "rule",
    "evaluate",
    "folder",
    "max_depth",
    "max_node",
    "thread_num",
    "hash_size",
    "pondering",
    "show_detail",
    "time_increment",
];

fn info() -> impl Strategy<Value = Info> {
    prop_oneof![
        any::<i64>().prop_map(Info::TimeoutTurn),
        any::<i64>().prop_map(Info::TimeoutMatch),
        any::<i64>().prop_map(Info::TimeLeft),
        any::<u64>().prop_map(Info::MaxMemory),
        any::<u32>().prop_map(Info::GameType),
        any::<u32>().prop_map(Info::Rule),
        coord().prop_map(Info::Evaluate),
        nonempty_text().prop_map(Info::Folder),
        any::<u64>().prop_map(Info::MaxDepth),
        any::<u64>().prop_map(Info::MaxNode),
        any::<u32>().prop_map(Info::ThreadNum),
        any::<u64>().prop_map(Info::HashSize),
        any::<bool>().prop_map(Info::Pondering),
        any::<u32>().prop_map(Info::ShowDetail),
        any::<i64>().prop_map(Info::TimeIncrement),
        ("[^\\s]{1,12}", text())
            .prop_filter("known keys parse as typed variants", |(k, _)| {
                !KNOWN_KEYS.iter().any(|known| known.eq_ignore_ascii_case(k))
            })
            .prop_map(|(key, value)| Info::Other { key, value }),
    ]
}

fn command() -> impl Strategy<Value = Command> {
    prop_oneof![
        any::<u32>().prop_map(|size| Command::Start { size }),
        (any::<u32>(), any::<u32>())
            .prop_map(|(width, height)| Command::RectStart { width, height }),
        Just(Command::Restart),
        Just(Command::Begin),
        coord().prop_map(Command::Turn),
        stones().prop_map(Command::Board),
        stones().prop_map(Command::YxBoard),
        swap2_opening().prop_map(Command::Swap2Board),
        coord().prop_map(Command::Takeback),
        coord().prop_map(Command::Play),
        info().prop_map(Command::Info),
        Just(Command::End),
        Just(Command::About),
        Just(Command::YxShowForbid),
        any::<u32>().prop_map(Command::YxNBest),
        Just(Command::YxHashClear),
        Just(Command::YxShowInfo),
        Just(Command::Stop),
    ]
}

fn brain_line() -> impl Strategy<Value = BrainLine> {
    let pair = ("[A-Za-z0-9_-]{1,10}", "[^\"\\r\\n]{0,16}");
    prop_oneof![
        Just(BrainLine::Ok),
        coord().prop_map(BrainLine::Move),
        Just(BrainLine::Pass),
        prop::collection::vec(coord(), 2..=3).prop_map(BrainLine::Moves),
        Just(BrainLine::Swap),
        prop::collection::vec(pair, 1..5).prop_map(BrainLine::About),
        text().prop_map(BrainLine::Message),
        text().prop_map(BrainLine::Debug),
        text().prop_map(BrainLine::Error),
        text().prop_map(BrainLine::Unknown),
        prop::collection::vec(
            (0u32..100, 0u32..100).prop_map(|(x, y)| Coord::new(x, y)),
            0..8
        )
        .prop_map(BrainLine::Forbid),
        coord().prop_map(BrainLine::Suggest),
    ]
}

/// Ways a manager dresses a line: indentation and any terminator.
fn dressing() -> impl Strategy<Value = (&'static str, &'static str)> {
    (
        prop::sample::select(vec!["", " ", "\t", "  "]),
        prop::sample::select(vec!["", "\r\n", "\n", "\r", " \r\n"]),
    )
}

/// Feeds all lines, then end of input; every result in order.
fn feed_lines<'a>(
    lines: impl IntoIterator<Item = &'a str>,
) -> (Vec<Result<Command, CommandError>>, bool) {
    let mut reader = CommandReader::new();
    let mut out = Vec::new();
    for line in lines {
        out.extend(reader.feed_all(line));
    }
    let open = reader.in_block();
    out.extend(reader.finish());
    out.extend(std::iter::from_fn(|| reader.next_pending()));
    (out, open)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn command_round_trips_line_by_line(cmd in command(), dress in prop::collection::vec(dressing(), 64)) {
        let printed = cmd.to_string();
        let lines: Vec<String> = printed
            .split('\n')
            .zip(dress.iter().cycle())
            .map(|(l, (pre, post))| format!("{pre}{l}{post}"))
            .collect();
        let (out, open) = feed_lines(lines.iter().map(String::as_str));
        prop_assert!(!open);
        prop_assert_eq!(out, vec![Ok(cmd.clone())]);
        prop_assert_eq!(Command::parse(&printed), Ok(cmd));
    }

    #[test]
    fn command_round_trips_through_bytes(cmds in prop::collection::vec(command(), 1..6), crlf in any::<bool>()) {
        let sep = if crlf { "\r\n" } else { "\n" };
        let wire: String = cmds.iter().map(|c| c.to_string().replace('\n', sep) + sep).collect();
        let lines: Vec<String> = split_lines(wire.as_bytes()).map(|l| l.unwrap_or_default()).collect();
        let (out, _) = feed_lines(lines.iter().map(String::as_str));
        prop_assert_eq!(out, cmds.into_iter().map(Ok).collect::<Vec<_>>());
    }

    #[test]
    fn brain_line_round_trips(line in brain_line(), (pre, post) in dressing()) {
        let printed = line.to_string();
        prop_assert_eq!(BrainLine::parse(&format!("{pre}{printed}{post}")), Ok(line.clone()));
        if let BrainLine::About(pairs) = &line {
            prop_assert_eq!(parse_about(&printed), Ok(pairs.clone()));
        }
    }

    #[test]
    fn swap2_owner_lines_give_the_placement_order(
        opening in swap2_opening(),
        black_is_own in any::<bool>(),
        blacks_first in any::<bool>(),
    ) {
        // Either owner convention, colours listed in any interleaving: the same placement order.
        let (b, w) = if black_is_own { (1, 2) } else { (2, 1) };
        let line = |i: usize, c: &Coord| format!("{},{},{}", c.x, c.y, if i.is_multiple_of(2) { b } else { w });
        let mut lines: Vec<String> = opening.iter().enumerate().map(|(i, c)| line(i, c)).collect();
        if blacks_first {
            lines.sort_by_key(|l| !l.ends_with(&format!(",{b}")));
        }
        let mut all = vec!["SWAP2BOARD".to_string()];
        all.extend(lines);
        all.push("DONE".into());
        let (out, _) = feed_lines(all.iter().map(String::as_str));
        prop_assert_eq!(out, vec![Ok(Command::Swap2Board(opening))]);
    }

    #[test]
    fn swap2_blocks_of_the_wrong_shape_are_one_error(
        points in prop::collection::hash_set((0u32..20, 0u32..20), 0..8),
        owners in prop::collection::vec(prop::option::of(1u32..=2), 8),
    ) {
        let n = points.len();
        let with_f = owners[..n].iter().filter(|o| o.is_some()).count();
        let mut all = vec!["SWAP2BOARD".to_string()];
        all.extend(points.iter().zip(&owners).map(|(&(x, y), f)| match f {
            Some(f) => format!("{x},{y},{f}"),
            None => format!("{x},{y}"),
        }));
        all.push("DONE".into());
        let (out, open) = feed_lines(all.iter().map(String::as_str));
        prop_assert!(!open);
        prop_assert_eq!(out.len(), 1);
        let mixed = with_f != 0 && with_f != n;
        let ones = owners[..n].iter().filter(|o| **o == Some(1)).count();
        let groups_fit = with_f == 0 || ones.abs_diff(n - ones) == 1;
        match &out[0] {
            Ok(Command::Swap2Board(order)) => {
                prop_assert!(matches!(n, 0 | 3 | 5) && !mixed && groups_fit, "{all:?}");
                prop_assert_eq!(order.len(), n);
            }
            Err(CommandError::Invalid { command, .. }) => {
                prop_assert_eq!(command, "SWAP2BOARD");
                prop_assert!(!matches!(n, 0 | 3 | 5) || mixed || !groups_fit, "{all:?}");
            }
            other => prop_assert!(false, "{other:?}"),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let lines: Vec<_> = split_lines(&bytes).collect();
        let mut reader = CommandReader::new();
        for line in lines.iter().flatten() {
            prop_assert!(!line.contains(['\r', '\n']));
            for r in reader.feed_all(line) {
                check_error_size(&r);
            }
            let _ = BrainLine::parse(line);
            let _ = parse_about(line);
            let _ = Command::parse_single(line);
        }
        let _ = reader.finish();
        prop_assert!(!reader.in_block());
    }

    #[test]
    fn arbitrary_strings_never_panic(s in any::<String>()) {
        let mut reader = CommandReader::new();
        for r in reader.feed_all(&s) {
            check_error_size(&r);
        }
        let _ = BrainLine::parse(&s);
        let _ = Command::parse(&s);
    }

    #[test]
    fn protocol_like_noise_never_panics(
        words in prop::collection::vec(
            "(START|RECTSTART|TURN|BOARD|YXBOARD|SWAP2BOARD|DONE|INFO|END|BEGIN|FORBID|OK|name=|\"|-|,|[0-9]{1,40}| |\\r|\\n|\\t|x|\u{e9}|\u{1F600})",
            0..40,
        )
    ) {
        let text = words.concat();
        let (out, _) = feed_lines(text.split(['\n', '\r']));
        for r in &out {
            check_error_size(r);
        }
        for line in text.lines() {
            let _ = BrainLine::parse(line);
        }
    }
}

/// Error texts are excerpts: a brain's reply stays short whatever it was sent.
fn check_error_size(r: &Result<Command, CommandError>) {
    if let Err(e) = r {
        assert!(e.to_string().chars().count() < 600, "{e}");
    }
}
