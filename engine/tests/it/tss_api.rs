//! engine::tss API contracts: bad input gets a clear answer, budgets are honoured, quiet positions
//! are cheap, and renju's special cases (forbidden blocks, overlines) are handled.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use engine::game::{Board, Color, Pos, Rule};
use engine::tss::{
    Budget, Judged, Memory, RootTactics, Solve, Threat, VcfMemory, analyse, analyse_root,
    analyse_with, defences, solve_vcf, solve_vct, suite, vcf, vcf_remembering, vct,
    verify_strategy,
};

/// Nodes a VCF may spend proving a quiet position has none (it spends far fewer today).
const QUIET_VCF_NODES: u64 = 16;

/// Nodes an analysis may count before its first clock read has stopped every phase.
const FIRST_READ_NODES: u64 = 8;

fn board(rule: Rule, black: &[(usize, usize)], white: &[(usize, usize)]) -> Board {
    let mut b = Board::new(15, 15, rule).unwrap();
    for &(x, y) in black {
        b.place(Pos::new(x, y), Color::Black).unwrap();
    }
    for &(x, y) in white {
        b.place(Pos::new(x, y), Color::White).unwrap();
    }
    b
}

#[test]
fn zero_budget_is_unknown_immediately() {
    let mut b = board(
        Rule::Freestyle,
        &[(5, 5), (6, 5), (7, 5)],
        &[(0, 0), (0, 1)],
    );
    assert_eq!(analyse_root(&b, Budget::nodes(0)), RootTactics::Unknown);
    assert_eq!(
        solve_vcf(&mut b, Color::Black, Budget::nodes(0)).0,
        Solve::Unknown
    );
    assert_eq!(
        solve_vct(&mut b, Color::Black, Budget::nodes(0)).0,
        Solve::Unknown
    );
    assert_eq!(
        analyse_root(&b, Budget::time(Duration::ZERO)),
        RootTactics::Unknown
    );
}

#[test]
fn five_on_board_is_game_over() {
    let mut b = board(
        Rule::Freestyle,
        &[(3, 3), (4, 3), (5, 3), (6, 3), (7, 3)],
        &[(0, 0), (0, 1), (0, 2), (0, 3)],
    );
    assert_eq!(
        analyse_root(&b, Budget::nodes(1000)),
        RootTactics::GameOver {
            winner: Color::Black
        }
    );
    assert_eq!(vcf(&mut b, Color::White, Budget::nodes(1000)), None);
    assert_eq!(vct(&mut b, Color::White, Budget::nodes(1000)), None);
}

#[test]
fn full_board_has_no_moves() {
    // A 5x5 board filled in a pattern with no five for either side.
    let mut b = Board::new(5, 5, Rule::Freestyle).unwrap();
    for y in 0..5 {
        for x in 0..5 {
            let black = ((x + 2 * y) / 2) % 2 == 0;
            b.place(
                Pos::new(x, y),
                if black { Color::Black } else { Color::White },
            )
            .unwrap();
        }
    }
    assert!(b.is_full());
    let t = analyse_root(&b, Budget::nodes(1000));
    assert!(
        matches!(t, RootTactics::NoMoves | RootTactics::GameOver { .. }),
        "{t:?}"
    );
    assert_eq!(vcf(&mut b, Color::Black, Budget::nodes(1000)), None);
    assert_eq!(vct(&mut b, Color::White, Budget::nodes(1000)), None);
}

#[test]
fn only_forbidden_points_left_means_no_moves() {
    // Renju 5x5 where black's every empty point is forbidden is hard to compose; instead check the
    // empty-board answer and a tiny board do not panic and give no false win.
    let b = Board::new(5, 5, Rule::Renju).unwrap();
    let t = analyse_root(&b, Budget::nodes(10_000));
    assert!(matches!(t, RootTactics::Unknown), "{t:?}");
}

/// Cheap in nodes, not in microseconds (its speed is the `tss/vcf_quiet` bench): a quiet
/// position has no four to start a VCF, so the search must stop at once.
#[test]
fn quiet_position_vcf_is_cheap() {
    let mut b = board(
        Rule::Renju,
        &[(7, 7), (8, 9), (5, 6)],
        &[(8, 8), (6, 6), (9, 7)],
    );
    let (r, st) = solve_vcf(&mut b, Color::Black, Budget::nodes(100_000));
    assert!(matches!(r, Solve::NoWin), "{r:?}");
    assert!(
        st.nodes <= QUIET_VCF_NODES,
        "quiet vcf searched {} nodes",
        st.nodes
    );
}

#[test]
fn straight_four_and_open_three() {
    let mut b = board(
        Rule::Freestyle,
        &[(5, 7), (6, 7), (7, 7)],
        &[(0, 0), (0, 2), (0, 4)],
    );
    let line = vcf(&mut b, Color::Black, Budget::nodes(10_000)).expect("open three makes a VCF");
    assert_eq!(line.len(), 3);
    // The opponent's answer at the root: must block.
    let t = analyse(&b, Color::White, Budget::nodes(100_000));
    match t.tactics {
        RootTactics::MustBlock(m) => {
            for p in [Pos::new(4, 7), Pos::new(8, 7)] {
                assert!(m.contains(&p), "{p} missing from {m:?}");
            }
            assert!(!m.contains(&Pos::new(12, 12)));
        }
        other => panic!("expected MustBlock, got {other:?}"),
    }
}

#[test]
fn white_wins_by_forbidden_block() {
    // Black's (7,7) is a double three; white's four on the diagonal has its five-point there.
    let mut b = board(
        Rule::Renju,
        &[(5, 7), (6, 7), (7, 5), (7, 6), (2, 2)],
        &[(3, 3), (4, 4), (5, 5)],
    );
    assert!(b.is_forbidden(Pos::new(7, 7)));
    let (r, _) = solve_vcf(&mut b, Color::White, Budget::nodes(10_000));
    let Solve::Win(p) = r else {
        panic!("white should win: {r:?}")
    };
    assert!(verify_strategy(&mut b, Color::White, &p.strategy));
    // Under freestyle the same four is simply blocked.
    let mut f = board(
        Rule::Freestyle,
        &[(5, 7), (6, 7), (7, 5), (7, 6), (2, 2)],
        &[(3, 3), (4, 4), (5, 5)],
    );
    assert!(vcf(&mut f, Color::White, Budget::nodes(10_000)).is_none());
}

#[test]
fn node_budget_is_honoured() {
    let mut b = board(
        Rule::Freestyle,
        &[(7, 7), (8, 8), (6, 8), (9, 6), (5, 5)],
        &[(7, 8), (8, 7), (6, 6), (9, 9), (4, 4)],
    );
    let (_, st) = solve_vct(&mut b, Color::Black, Budget::nodes(500));
    assert!(st.nodes <= 500 + 400, "{} nodes", st.nodes);
    // A raised stop flag (the front end's STOP) ends the analysis at its first clock read, and so
    // does a deadline already past; how close a running search stays to its deadline is measured in wall
    // time by tss_budget_regression.rs.
    let stop = Arc::new(AtomicBool::new(true));
    let a = analyse(&b, Color::Black, Budget::nodes(1_000_000).with_stop(stop));
    assert!(
        matches!(a.tactics, RootTactics::Unknown) && a.stats.nodes <= FIRST_READ_NODES,
        "{:?} {} nodes",
        a.tactics,
        a.stats.nodes
    );
    let a = analyse(&b, Color::Black, Budget::time(Duration::ZERO));
    assert!(
        matches!(a.tactics, RootTactics::Unknown) && a.stats.nodes <= FIRST_READ_NODES,
        "{:?} {} nodes",
        a.tactics,
        a.stats.nodes
    );
}

#[test]
fn searches_leave_the_board_unchanged() {
    let mut b = board(
        Rule::Renju,
        &[(7, 7), (8, 7), (9, 8), (7, 9)],
        &[(6, 6), (10, 10), (8, 9)],
    );
    let (hash, n) = (b.hash(), b.move_count());
    let _ = solve_vcf(&mut b, Color::Black, Budget::nodes(50_000));
    let _ = solve_vct(&mut b, Color::White, Budget::nodes(50_000));
    assert_eq!((b.hash(), b.move_count()), (hash, n));
}

#[test]
fn deterministic_results() {
    let b = board(
        Rule::Standard,
        &[(7, 7), (8, 8), (6, 8), (9, 6)],
        &[(7, 8), (8, 7), (6, 6), (10, 10)],
    );
    let a1 = analyse(&b, Color::Black, Budget::nodes(200_000));
    let a2 = analyse(&b, Color::Black, Budget::nodes(200_000));
    assert_eq!(a1.tactics, a2.tactics);
    assert_eq!(a1.stats.nodes, a2.stats.nodes);
}

/// The position `name` of the suite file `file` (relative to tests/fixtures).
fn suite_position(file: &str, name: &str) -> engine::tss::suite::Position {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(file);
    let text = std::fs::read_to_string(path).unwrap();
    engine::tss::suite::parse(&text)
        .unwrap()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap()
}

/// The suite position `gen-freestyle-defend-3`: black threatens a VCF, white to move.
fn four_three_threat() -> Board {
    let pos = suite_position("tactics/generated.txt", "gen-freestyle-defend-3");
    assert_eq!(pos.to_move, Color::White);
    pos.board
}

#[test]
fn defences_judge_every_move_and_each_loss_is_a_verified_win() {
    let b = four_three_threat();
    let d = defences(&b, Color::White, Budget::nodes(20_000_000));
    assert!(matches!(d.threat, Threat::Win(_)), "{:?}", d.threat);
    let legal = b.points().filter(|&p| b.is_empty(p)).count();
    let j = &d.moves;
    assert_eq!(j.holds.len() + j.loses.len() + j.unknown.len(), legal);
    assert!(
        j.unknown.is_empty(),
        "a large budget settles every move: {:?}",
        j.unknown
    );
    assert!(!j.holds.is_empty() && j.holds.len() < 10, "{:?}", j.holds);
    // Every holding move blocks the VCF; a sample of losing moves really lose.
    for &m in &j.holds {
        let mut after = b.clone();
        after.place(m, Color::White).unwrap();
        assert_eq!(
            vcf(&mut after, Color::Black, Budget::nodes(1_000_000)),
            None,
            "{m} holds"
        );
    }
    for &m in j.loses.iter().step_by(25) {
        let mut after = b.clone();
        after.place(m, Color::White).unwrap();
        let Solve::Win(p) = solve_vct(&mut after, Color::Black, Budget::nodes(2_000_000)).0 else {
            panic!("{m} was judged lost")
        };
        assert!(verify_strategy(&mut after, Color::Black, &p.strategy));
    }
}

#[test]
fn defences_out_of_budget_are_unknown_not_holding() {
    let b = four_three_threat();
    let full = defences(&b, Color::White, Budget::nodes(20_000_000)).moves;
    let mut unknown_seen = false;
    for nodes in [2_000, 20_000, 100_000] {
        let d = defences(&b, Color::White, Budget::nodes(nodes));
        let j = &d.moves;
        for m in &j.holds {
            assert!(full.holds.contains(m), "{nodes} nodes: {m} claimed to hold");
        }
        for m in &j.loses {
            assert!(full.loses.contains(m), "{nodes} nodes: {m} claimed to lose");
        }
        unknown_seen |= d.threat == Threat::Unknown || !j.unknown.is_empty();
    }
    assert!(unknown_seen, "small budgets must leave something unknown");
}

#[test]
fn defences_bad_input_gets_a_clear_answer() {
    let quiet = board(
        Rule::Renju,
        &[(7, 7), (8, 9), (5, 6)],
        &[(8, 8), (6, 6), (9, 7)],
    );
    assert_eq!(
        defences(&quiet, Color::Black, Budget::nodes(0)).threat,
        Threat::Unknown
    );
    assert_eq!(
        defences(&quiet, Color::Black, Budget::nodes(1_000_000)).threat,
        Threat::None
    );
    let won = board(
        Rule::Freestyle,
        &[(3, 3), (4, 3), (5, 3), (6, 3), (7, 3)],
        &[(0, 0), (0, 1), (0, 2), (0, 3)],
    );
    let d = defences(&won, Color::White, Budget::nodes(1000));
    assert_eq!(d.threat, Threat::GameOver);
    assert_eq!(d.moves, Judged::default());
    // White's four ends on black's forbidden double three: every black move loses.
    let trapped = board(
        Rule::Renju,
        &[(5, 7), (6, 7), (7, 5), (7, 6), (2, 2)],
        &[(3, 3), (4, 4), (5, 5), (6, 6)],
    );
    assert!(trapped.is_forbidden(Pos::new(7, 7)));
    let d = defences(&trapped, Color::Black, Budget::nodes(1_000_000));
    assert_eq!(d.threat, Threat::Win(engine::tss::WinKind::Vcf));
    assert!(
        d.moves.holds.is_empty() && d.moves.unknown.is_empty(),
        "{:?}",
        d.moves
    );
    assert!(
        !d.moves.loses.contains(&Pos::new(7, 7)),
        "a forbidden point is no move"
    );
}

/// Regression: facing a four, the root answered "block it" without looking for a win that starts
/// with the block (self-play position `mined-freestyle-15-240-9`, a 15-ply VCT).
#[test]
fn win_that_starts_by_blocking_a_four_is_found() {
    let pos = suite_position("tactics-mined/mined.txt", "mined-freestyle-15-240-9");
    let opp_four = pos
        .board
        .points()
        .find(|&p| pos.board.is_empty(p) && pos.board.makes_five(p, pos.to_move.opp()));
    let a = analyse(&pos.board, pos.to_move, Budget::nodes(2_000_000));
    match a.tactics {
        RootTactics::ForcedWin { line, .. } => {
            assert_eq!(Some(line[0]), opp_four, "the win starts with the block")
        }
        other => panic!("expected a forced win, got {other:?}"),
    }
}

/// What one move's analysis proved is kept for the next: two plies down the winning line the win
/// is found again from the memory for a fraction of a fresh search's nodes, and verified like any
/// other. The memory forgets what it learnt when the rule changes.
#[test]
fn memory_carries_a_proven_win_to_the_next_move() {
    let text = include_str!("../fixtures/tactics/generated.txt");
    let pos = suite::parse(text)
        .unwrap()
        .into_iter()
        .find(|p| p.name == "gen-freestyle-vct-7")
        .unwrap();
    let budget = || Budget::nodes(2_000_000);
    let mut memory = Memory::default();
    let first = analyse_with(&pos.board, pos.to_move, budget(), &mut memory);
    let RootTactics::ForcedWin { line, .. } = &first.tactics else {
        panic!("the suite's 19-ply VCT is not found: {:?}", first.tactics)
    };
    assert!(memory.entries() > 0);

    let mut b = pos.board.clone();
    b.play(line[0]).unwrap();
    b.play(line[1]).unwrap();
    let fresh = analyse(&b, pos.to_move, budget());
    let again = analyse_with(&b, pos.to_move, budget(), &mut memory);
    assert!(
        matches!(fresh.tactics, RootTactics::ForcedWin { .. }),
        "{:?}",
        fresh.tactics
    );
    let RootTactics::ForcedWin {
        line: again_line, ..
    } = &again.tactics
    else {
        panic!(
            "the win two plies on is lost with the memory: {:?}",
            again.tactics
        )
    };
    assert_eq!(
        again_line[0], line[2],
        "the memory's win goes on with the line it proved"
    );
    let proof = again.proof.as_ref().unwrap();
    assert!(verify_strategy(
        &mut b.clone(),
        pos.to_move,
        &proof.strategy
    ));
    eprintln!(
        "two plies on: {} nodes from the memory, {} fresh",
        again.stats.nodes, fresh.stats.nodes
    );
    assert!(
        again.stats.nodes * 10 < fresh.stats.nodes,
        "from the memory {} nodes, fresh {}",
        again.stats.nodes,
        fresh.stats.nodes
    );

    // The same stones under renju: what freestyle proved does not carry over.
    let mut renju = Board::new(15, 15, Rule::Renju).unwrap();
    for &(p, c) in b.history() {
        renju.place(p, c).unwrap();
    }
    let mut empty = Memory::default();
    let alone = analyse_with(&renju, pos.to_move, budget(), &mut empty);
    let after_freestyle = analyse_with(&renju, pos.to_move, budget(), &mut memory);
    assert_eq!(after_freestyle.tactics, alone.tactics);
    assert_eq!(after_freestyle.stats.nodes, alone.stats.nodes);
    assert_eq!(memory.entries(), empty.entries());
}

/// The attacker's threats come in many orders, and each order reaches the same positions: the VCT
/// expands each position once and shares its subtree (a DAG). After white's tempting defence 4,10
/// in `gen-renju-defend-1`, black's 15-ply VCT took a tree without sharing 4.2 M nodes, of whose
/// expansions all but 2% repeated a position already in the tree; shared, it takes under 100 k.
#[test]
fn transposed_threat_orders_are_searched_once() {
    let pos = suite_position("tactics/generated.txt", "gen-renju-defend-1");
    let mut b = pos.board.clone();
    b.play(Pos::new(4, 10)).unwrap();
    let (r, stats) = solve_vct(&mut b, Color::Black, Budget::nodes(400_000));
    let Solve::Win(proof) = r else {
        panic!(
            "no win within 400 k nodes: {r:?} after {} nodes",
            stats.nodes
        )
    };
    assert_eq!(proof.line.len(), 15);
    assert!(verify_strategy(&mut b, Color::Black, &proof.strategy));
}

/// The verifier against every reply of the defender, where most replies are far from the threat:
/// a double three holds against them all (some standing four is played after each), and the same
/// double three is rejected once the defender has a three of its own to make a four with, and an
/// open three alone is rejected (its blocks hold).
#[test]
fn verifier_tries_every_reply_to_a_quiet_threat() {
    let strategy = |b: &Board, m: (usize, usize)| {
        engine::tss::Strategy::from([(b.hash(), Pos::new(m.0, m.1))])
    };
    let double_three = board(Rule::Freestyle, &[(5, 7), (6, 7), (7, 5), (7, 6)], &[]);
    let s = strategy(&double_three, (7, 7));
    assert!(verify_strategy(&mut double_three.clone(), Color::Black, &s));

    let counter = board(
        Rule::Freestyle,
        &[(5, 7), (6, 7), (7, 5), (7, 6)],
        &[(10, 1), (11, 1), (12, 1)],
    );
    let s = strategy(&counter, (7, 7));
    assert!(
        !verify_strategy(&mut counter.clone(), Color::Black, &s),
        "white's straight four beats black's"
    );

    let open_three = board(Rule::Freestyle, &[(5, 7), (6, 7)], &[]);
    let s = strategy(&open_three, (7, 7));
    assert!(
        !verify_strategy(&mut open_three.clone(), Color::Black, &s),
        "4,7 and 8,7 hold against an open three"
    );
}

/// The refutations one VCF leaves in a `VcfMemory` hold for every later position: over the
/// positions of recorded games (both rules of the file, both colours attacking, one memory for
/// all), a search that starts from them finds exactly the VCFs a fresh search finds, with a
/// budget neither runs out of. A memory learnt under one rule is not used under another.
#[test]
fn remembered_vcf_refutations_hold_on_every_later_position() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tactics-judged");
    let text = std::fs::read_to_string(format!("{dir}/freestyle.pgn")).unwrap();
    let games = engine::notation::parse_records(&text, 1000).unwrap();
    let budget = || Budget::nodes(200_000);
    let (mut memory, mut checked, mut wins) = (VcfMemory::default(), 0, 0);
    for rule in [Rule::Freestyle, Rule::Renju] {
        for game in games.iter().take(12) {
            let (w, h) = game.size.unwrap_or((15, 15));
            let mut b = Board::new(w, h, rule).unwrap();
            for &(x, y) in &game.moves {
                for attacker in [Color::Black, Color::White] {
                    let fresh = vcf(&mut b, attacker, budget());
                    let remembered = vcf_remembering(&mut b, attacker, budget(), &mut memory);
                    assert_eq!(
                        fresh.is_some(),
                        remembered.is_some(),
                        "{rule:?}, ply {}, {attacker:?} attacking",
                        b.move_count()
                    );
                    checked += 1;
                    wins += fresh.is_some() as usize;
                }
                let Ok(p) = b.pos(x, y) else { break };
                if b.play(p).is_err() || b.winner().is_some() {
                    break;
                }
            }
        }
    }
    assert!(
        checked > 400 && wins > 20,
        "{checked} positions, {wins} with a VCF"
    );
}
