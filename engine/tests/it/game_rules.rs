//! The fast board (incremental patterns, table-driven forbidden check) against the slow reference
//! written from the rule text, on random positions; plus the renju fixture files.

use engine::game::reference::Grid;
use engine::game::{Board, Color, Pattern, Pos, Rule};
use proptest::prelude::*;

/// A random position: stones dropped near the centre so lines and threats are dense.
fn arb_position() -> impl Strategy<Value = (usize, usize, Rule, Vec<(usize, usize, bool)>)> {
    (5usize..=22, 5usize..=22, 0usize..4).prop_flat_map(|(w, h, r)| {
        let rule = Rule::ALL[r];
        let spread = (w.min(h) / 2).clamp(2, 5);
        let stone = (0..spread * 2 + 1, 0..spread * 2 + 1, any::<bool>());
        (
            Just(w),
            Just(h),
            Just(rule),
            prop::collection::vec(stone, 0..60),
        )
            .prop_map(move |(w, h, rule, stones)| {
                let (cx, cy) = (w / 2, h / 2);
                let stones = stones
                    .into_iter()
                    .filter_map(|(dx, dy, black)| {
                        let x = (cx + dx).checked_sub(spread)?;
                        let y = (cy + dy).checked_sub(spread)?;
                        (x < w && y < h).then_some((x, y, black))
                    })
                    .collect();
                (w, h, rule, stones)
            })
    })
}

fn build(w: usize, h: usize, rule: Rule, stones: &[(usize, usize, bool)]) -> Board {
    let mut board = Board::new(w, h, rule).unwrap();
    for &(x, y, black) in stones {
        let c = if black { Color::Black } else { Color::White };
        let _ = board.place(Pos::new(x, y), c); // duplicates are simply skipped
    }
    board
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, .. ProptestConfig::default() })]

    #[test]
    fn fast_checks_agree_with_reference((w, h, rule, stones) in arb_position()) {
        let board = build(w, h, rule, &stones);
        let grid = Grid::from_board(&board);
        for p in board.points() {
            let (x, y) = (p.x() as i64, p.y() as i64);
            if board.is_empty(p) {
                for c in [Color::Black, Color::White] {
                    prop_assert_eq!(board.makes_five(p, c), grid.makes_five(x, y, c), "five {:?} {:?}\n{:?}", p, c, board);
                }
                prop_assert_eq!(board.is_forbidden(p), grid.is_forbidden(x, y), "forbidden {:?}\n{:?}", p, board);
            } else {
                let c = board.cell(p).color().unwrap();
                prop_assert_eq!(board.is_five_at(p), grid.is_five_at(x, y, c), "five at {:?}\n{:?}", p, board);
            }
        }
    }

    #[test]
    fn points_making_is_the_plain_scan((w, h, rule, stones) in arb_position()) {
        let board = build(w, h, rule, &stones);
        for c in [Color::Black, Color::White] {
            for min in [Pattern::Block3, Pattern::Flex3, Pattern::Block4, Pattern::Five] {
                let plain: Vec<Pos> = board
                    .points()
                    .filter(|&p| board.is_empty(p) && board.threats(p, c).patterns.iter().any(|&q| q >= min))
                    .collect();
                let fast: Vec<Pos> = board.points_making(c, min).collect();
                prop_assert_eq!(fast, plain, "{:?} {:?}\n{:?}", c, min, board);
            }
        }
    }

    #[test]
    fn undo_restores_everything((w, h, rule, stones) in arb_position()) {
        let board = build(w, h, rule, &stones);
        let mut replay = board.clone();
        let mut undone = 0;
        while replay.undo().is_some() { undone += 1; }
        prop_assert_eq!(undone, board.move_count());
        prop_assert_eq!(replay.hash(), 0);
        let fresh = Board::new(w, h, rule).unwrap();
        for p in fresh.points() {
            for c in [Color::Black, Color::White] {
                prop_assert_eq!(replay.threats(p, c), fresh.threats(p, c));
            }
        }
        // Re-placing gives the same hash and patterns as the incremental original.
        for &(p, c) in board.history() { replay.place(p, c).unwrap(); }
        prop_assert_eq!(replay.hash(), board.hash());
        for p in board.points().filter(|&p| board.is_empty(p)) {
            prop_assert_eq!(replay.threats(p, Color::Black), board.threats(p, Color::Black));
        }
    }
}

/// A fixture: `size W H`, `rule R`, board rows (X black, O white, . empty), and
/// `forbidden: x,y ...` — the exact set of forbidden points for black.
struct Fixture {
    name: String,
    board: Board,
    forbidden: Vec<Pos>,
}

fn parse_fixture(name: &str, text: &str) -> Fixture {
    let mut size = (15, 15);
    let mut rule = Rule::Renju;
    let mut rows = Vec::new();
    let mut forbidden = Vec::new();
    for line in text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        if let Some(rest) = line.strip_prefix("size") {
            let v: Vec<usize> = rest
                .split_whitespace()
                .map(|s| s.parse().unwrap())
                .collect();
            size = (v[0], v[1]);
        } else if let Some(rest) = line.strip_prefix("rule") {
            rule = rest.trim().parse().unwrap();
        } else if let Some(rest) = line.strip_prefix("forbidden:") {
            for pt in rest.split_whitespace() {
                let (x, y) = pt.split_once(',').unwrap();
                forbidden.push(Pos::new(x.parse().unwrap(), y.parse().unwrap()));
            }
        } else {
            rows.push(line.to_string());
        }
    }
    let mut board = Board::new(size.0, size.1, rule).unwrap();
    for (y, row) in rows.iter().enumerate() {
        for (x, ch) in row.chars().enumerate() {
            match ch {
                'X' => board.place(Pos::new(x, y), Color::Black).unwrap(),
                'O' => board.place(Pos::new(x, y), Color::White).unwrap(),
                _ => {}
            }
        }
    }
    forbidden.sort();
    Fixture {
        name: name.to_string(),
        board,
        forbidden,
    }
}

#[test]
fn renju_fixtures() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/renju");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(
        files.len() >= 6,
        "expected the renju fixture files in {}",
        dir.display()
    );
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let fx = parse_fixture(&path.file_name().unwrap().to_string_lossy(), &text);
        let grid = Grid::from_board(&fx.board);
        let mut fast: Vec<Pos> = fx
            .board
            .points()
            .filter(|&p| fx.board.is_forbidden(p))
            .collect();
        let slow: Vec<Pos> = fx
            .board
            .points()
            .filter(|&p| grid.is_forbidden(p.x() as i64, p.y() as i64))
            .collect();
        fast.sort();
        assert_eq!(fast, fx.forbidden, "{}: fast forbidden set", fx.name);
        assert_eq!(slow, fx.forbidden, "{}: reference forbidden set", fx.name);
    }
}

#[test]
fn win_rules_differ_on_overline() {
    for (rule, black_wins, white_wins) in [
        (Rule::Freestyle, true, true),
        (Rule::Standard, false, false),
        (Rule::Renju, false, true),
        (Rule::Caro, false, false),
    ] {
        for (c, want) in [(Color::Black, black_wins), (Color::White, white_wins)] {
            let mut b = Board::new(15, 15, rule).unwrap();
            for x in [2, 3, 4, 6, 7] {
                b.place(Pos::new(x, 7), c).unwrap();
            }
            assert_eq!(
                b.makes_five(Pos::new(5, 7), c),
                want,
                "{rule} {c:?} overline"
            );
            b.place(Pos::new(5, 7), c).unwrap();
            assert_eq!(b.winner() == Some(c), want, "{rule} {c:?} winner");
        }
    }
}

#[test]
fn caro_five_blocked_both_ends_does_not_win() {
    let mut b = Board::new(15, 15, Rule::Caro).unwrap();
    b.place(Pos::new(2, 7), Color::White).unwrap();
    b.place(Pos::new(8, 7), Color::White).unwrap();
    for x in 3..7 {
        b.place(Pos::new(x, 7), Color::Black).unwrap();
    }
    assert!(!b.makes_five(Pos::new(7, 7), Color::Black));
    b.remove(Pos::new(8, 7)).unwrap();
    assert!(b.makes_five(Pos::new(7, 7), Color::Black));
}

#[test]
fn play_rejects_bad_moves_and_leaves_board_unchanged() {
    let mut b = Board::new(15, 15, Rule::Renju).unwrap();
    b.play(Pos::new(7, 7)).unwrap();
    let hash = b.hash();
    assert!(b.play(Pos::new(7, 7)).is_err());
    assert!(b.pos(15, 3).is_err());
    assert!(b.pos(-1, 3).is_err());
    assert!(Board::new(4, 15, Rule::Freestyle).is_err());
    assert!(Board::new(23, 15, Rule::Freestyle).is_err());
    assert!(Board::new(22, 5, Rule::Freestyle).is_ok());
    assert_eq!(b.hash(), hash);
    assert_eq!(b.move_count(), 1);
}
