//! The engine's move choice through the `Engine` API: against the opponent's forced win only the
//! defences are searched.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Instant;

use engine::brain::{Engine, EngineConfig, SetupStone, TSS_NODES_PER_VISIT};
use engine::game::Pos;
use engine::time::TimeLimits;
use engine::tss::{Budget, RootTactics, analyse_root, suite};

/// An engine on the suite position `name`, the side to move being the engine, and the moves the
/// suite expects it to choose from.
fn engine_on(name: &str) -> (Engine, Vec<Pos>) {
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/tactics/generated.txt"
    ))
    .unwrap();
    let pos = suite::parse(&text)
        .unwrap()
        .into_iter()
        .find(|p| p.name == name)
        .unwrap();
    let suite::Expect::MustDefend(Some(defences)) = pos.expect.clone() else {
        panic!("{name} is not a must-defend position")
    };
    let mut e = Engine::new(EngineConfig::default());
    e.start(pos.board.width(), pos.board.height()).unwrap();
    e.set_rule(pos.board.rule());
    e.set_position(&SetupStone::all_of(&pos.board, pos.to_move))
        .unwrap();
    assert_eq!(e.board().unwrap().side_to_move(), pos.to_move);
    (e, defences)
}

#[test]
fn only_defences_are_searched_against_a_forced_win() {
    for name in ["gen-freestyle-defend-3", "gen-renju-defend-4"] {
        let (mut e, holding) = engine_on(name);
        let visits = 3000;
        e.set_max_visits(Some(visits));
        // No clock: the node budget alone sizes the root analysis, as below.
        e.limits = TimeLimits {
            timeout_turn_ms: Some(3_600_000),
            timeout_match_ms: Some(0),
            time_left_ms: None,
        };
        let board = e.board().unwrap().clone();
        let RootTactics::MustBlock(not_lost) =
            analyse_root(&board, Budget::nodes(visits * TSS_NODES_PER_VISIT))
        else {
            panic!("{name}: no forced defence")
        };
        assert!(
            holding.iter().all(|m| not_lost.contains(m)) && not_lost.len() < 40,
            "{name}: {not_lost:?}"
        );
        let stop = Arc::new(AtomicBool::new(false));
        let info = e.analyse(Instant::now(), &stop, 40).unwrap();
        let listed: Vec<Pos> = info.candidates.iter().map(|c| c.mv).collect();
        assert!(
            listed.iter().all(|m| not_lost.contains(m)),
            "{name}: searched {listed:?}, not lost {not_lost:?}"
        );
        // The whole search went into them.
        let visits: u64 = info.candidates.iter().map(|c| c.visits as u64).sum();
        assert!(
            visits + 1 >= info.nodes,
            "{name}: {visits} of {} visits under the defences",
            info.nodes
        );
    }
}
