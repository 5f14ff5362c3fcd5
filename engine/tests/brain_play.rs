//! The engine's move choice through the `Engine` API: against the opponent's forced win only the
//! defences are searched.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use engine::brain::{Engine, EngineConfig, SetupStone};
use engine::game::Pos;
use engine::time::TimeLimits;
use engine::tss::{Budget, RootTactics, analyse_root, suite};

/// An engine on the suite position `name`, the side to move being the engine, and the moves the
/// suite expects it to choose from.
fn engine_on(name: &str) -> (Engine, Vec<Pos>) {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/tactics/generated.txt")).unwrap();
    let pos = suite::parse(&text).unwrap().into_iter().find(|p| p.name == name).unwrap();
    let suite::Expect::MustDefend(Some(defences)) = pos.expect.clone() else { panic!("{name} is not a must-defend position") };
    let mut e = Engine::new(EngineConfig::default());
    e.start(pos.board.width(), pos.board.height()).unwrap();
    e.set_rule(pos.board.rule());
    let stones: Vec<SetupStone> = pos
        .board
        .history()
        .iter()
        .map(|&(p, c)| SetupStone { pos: (p.x() as i64, p.y() as i64), own: c == pos.to_move })
        .collect();
    e.set_position(&stones).unwrap();
    assert_eq!(e.board().unwrap().side_to_move(), pos.to_move);
    (e, defences)
}

/// Threat-search nodes the engine gives its root analysis per visit of a visits-limited search
/// (the brain's `TSS_NODES_PER_VISIT`).
const TSS_NODES_PER_VISIT: u64 = 64;

#[test]
fn only_defences_are_searched_against_a_vcf() {
    for name in ["gen-freestyle-defend-3", "gen-renju-defend-4"] {
        let (mut e, holding) = engine_on(name);
        let visits = 3000;
        e.set_max_visits(Some(visits));
        // No clock: the node budget alone sizes the root analysis, as below.
        e.limits = TimeLimits { timeout_turn_ms: Some(3_600_000), timeout_match_ms: Some(0), time_left_ms: None };
        let board = e.board().unwrap().clone();
        let RootTactics::MustBlock(not_lost) = analyse_root(&board, Budget::nodes(visits * TSS_NODES_PER_VISIT)) else {
            panic!("{name}: no forced defence")
        };
        assert!(holding.iter().all(|m| not_lost.contains(m)) && not_lost.len() < 40, "{name}: {not_lost:?}");
        let stop = Arc::new(AtomicBool::new(false));
        let info = e.analyse(Instant::now(), &stop, 40).unwrap();
        let listed: Vec<Pos> = info.candidates.iter().map(|c| c.mv).collect();
        assert!(listed.iter().all(|m| not_lost.contains(m)), "{name}: searched {listed:?}, not lost {not_lost:?}");
        // The whole search went into them.
        let visits: u64 = info.candidates.iter().map(|c| c.visits as u64).sum();
        assert!(visits + 1 >= info.nodes, "{name}: {visits} of {} visits under the defences", info.nodes);
    }
}

/// An engine on a 15x15 freestyle board with these stones, the engine to move.
fn engine_with(own: &[(i64, i64)], theirs: &[(i64, i64)]) -> Engine {
    let mut e = Engine::new(EngineConfig::default());
    e.start(15, 15).unwrap();
    let stones: Vec<SetupStone> = own
        .iter()
        .map(|&pos| SetupStone { pos, own: true })
        .chain(theirs.iter().map(|&pos| SetupStone { pos, own: false }))
        .collect();
    e.set_position(&stones).unwrap();
    e
}

#[test]
fn obvious_moves_are_answered_without_a_search() {
    let stop = Arc::new(AtomicBool::new(false));
    let cases = [
        // The empty board: the centre.
        (engine_with(&[], &[]), Pos::new(7, 7)),
        // A five to make, the opponent's four on the board too.
        (engine_with(&[(3, 3), (4, 3), (5, 3), (6, 3)], &[(3, 9), (4, 9), (5, 9), (6, 9), (0, 14)]), Pos::new(2, 3)),
        // The opponent's four has one empty end: only that point stops it.
        (engine_with(&[(2, 5), (10, 10), (12, 1)], &[(3, 5), (4, 5), (5, 5), (6, 5)]), Pos::new(7, 5)),
    ];
    for (mut e, want) in cases {
        e.set_max_visits(Some(5000));
        let info = e.think(Instant::now(), &stop).unwrap();
        assert_eq!((info.best, info.nodes, info.playouts), (want, 0, 0));
    }
    // Two defences against a VCF: searched.
    let (mut e, _) = engine_on("gen-freestyle-defend-3");
    e.set_max_visits(Some(500));
    assert!(e.think(Instant::now(), &stop).unwrap().playouts > 0);
}
