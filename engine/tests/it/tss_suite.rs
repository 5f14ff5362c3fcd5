//! The tactics suites under tests/fixtures/tactics: every position must get its expected verdict,
//! and every claimed win must survive the proof verifier (replay against every defence). Also
//! checks each excluded defence of a must-defend position really loses (a verified win after it).

use engine::tss::suite::{self, Expect, Position};
use engine::tss::{
    Budget, RootTactics, Solve, Threat, WinKind, analyse, defences, line_reaches_five, solve_vcf,
    solve_vct, verify_strategy,
};

fn load() -> Vec<(String, Position)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tactics");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    let mut out = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        let name = f.file_name().unwrap().to_string_lossy().to_string();
        for p in suite::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}")) {
            out.push((name.clone(), p));
        }
    }
    out
}

#[test]
fn suites_are_solved_and_every_win_verifies() {
    let positions = load();
    assert!(positions.len() >= 30, "only {} positions", positions.len());
    let mut failures = Vec::new();
    for (file, pos) in &positions {
        let a = analyse(&pos.board, pos.to_move, Budget::nodes(2_000_000));
        assert_eq!(
            a.stats.rejected, 0,
            "{file}:{} a search claimed an unverifiable win",
            pos.name
        );
        if let RootTactics::ForcedWin { line, kind } = &a.tactics {
            let proof = a.proof.as_ref().expect("a forced win comes with its proof");
            let mut b = pos.board.clone();
            assert!(
                verify_strategy(&mut b, pos.to_move, &proof.strategy),
                "{}: proof fails",
                pos.name
            );
            assert!(
                line_reaches_five(&pos.board, pos.to_move, line),
                "{}: line fails",
                pos.name
            );
            assert_eq!(*kind, proof.kind);
        }
        let ok = match (&pos.expect, &a.tactics) {
            (Expect::WinVcf, RootTactics::WinNow(_)) => true,
            (
                Expect::WinVcf,
                RootTactics::ForcedWin {
                    kind: WinKind::Vcf, ..
                },
            ) => true,
            (Expect::WinVct, RootTactics::WinNow(_) | RootTactics::ForcedWin { .. }) => true,
            (Expect::NoWin, t) => {
                !matches!(t, RootTactics::WinNow(_) | RootTactics::ForcedWin { .. })
            }
            (Expect::NoVcf, t) => !matches!(
                t,
                RootTactics::WinNow(_)
                    | RootTactics::ForcedWin {
                        kind: WinKind::Vcf,
                        ..
                    }
            ),
            (Expect::Lost, RootTactics::Lost) => true,
            // Under a budget the root keeps moves it could not settle: it may list more than the
            // defences, never fewer (`defences_are_exact` checks the sets themselves).
            (Expect::MustDefend(want), RootTactics::MustBlock(got)) => {
                want.as_ref()
                    .is_none_or(|w| w.iter().all(|m| got.contains(m)))
                    && !got.is_empty()
            }
            _ => false,
        };
        if !ok {
            failures.push(format!(
                "{file}:{} expected {:?}, got {:?}",
                pos.name, pos.expect, a.tactics
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `tss::defences` settles every move of each must-defend position and finds exactly the listed
/// defences: the moves after which the opponent has no VCF and no VCT.
#[test]
fn defences_are_exact() {
    for (file, pos) in load() {
        let Expect::MustDefend(Some(want)) = &pos.expect else {
            continue;
        };
        let d = defences(&pos.board, pos.to_move, Budget::nodes(5_000_000));
        assert!(
            matches!(d.threat, Threat::Win(_)),
            "{file}:{} threat {:?}",
            pos.name,
            d.threat
        );
        let j = &d.moves;
        assert!(
            j.holds.iter().all(|m| want.contains(m)),
            "{file}:{} holds {:?}",
            pos.name,
            j.holds
        );
        assert!(
            want.iter()
                .all(|m| j.holds.contains(m) || j.unknown.contains(m)),
            "{file}:{} a listed defence was judged lost: {:?}",
            pos.name,
            j.loses
        );
    }
}

/// Every move left out of a must-defend answer loses to a verified forced win.
#[test]
fn excluded_defences_really_lose() {
    for (_, pos) in load() {
        let Expect::MustDefend(_) = pos.expect else {
            continue;
        };
        let a = analyse(&pos.board, pos.to_move, Budget::nodes(2_000_000));
        let RootTactics::MustBlock(keep) = a.tactics else {
            continue;
        };
        let opp = pos.to_move.opp();
        let mut checked = 0;
        for m in pos.board.points() {
            if keep.contains(&m) || !pos.board.is_empty(m) || checked >= 12 {
                continue;
            }
            if pos.to_move == engine::game::Color::Black && pos.board.is_forbidden(m) {
                continue;
            }
            let mut b = pos.board.clone();
            b.place(m, pos.to_move).unwrap();
            let win = if b.points().any(|p| b.is_empty(p) && b.makes_five(p, opp)) {
                true
            } else {
                let (r, _) = solve_vcf(&mut b, opp, Budget::nodes(500_000));
                let r = if matches!(r, Solve::Win(_)) {
                    r
                } else {
                    solve_vct(&mut b, opp, Budget::nodes(500_000)).0
                };
                match r {
                    Solve::Win(p) => verify_strategy(&mut b, opp, &p.strategy),
                    _ => false,
                }
            };
            assert!(win, "{}: excluded defence {m} does not lose", pos.name);
            checked += 1;
        }
    }
}
