//! Generator of engine/tests/fixtures/tactics/generated.txt (ignored test; run by hand with
//! `cargo test --release -p engine --test it -- --ignored tss_generate`, writes $TSS_SUITE_OUT or
//! /tmp/generated.txt). Deterministic: same code, same positions.

use engine::game::{Board, Pattern, Pos, Rule};
use engine::tss::*;
use std::fmt::Write;

fn rng(state: &mut u64) -> u64 {
    *state ^= *state << 13;
    *state ^= *state >> 7;
    *state ^= *state << 17;
    *state
}

#[test]
#[ignore]
fn generate_suite() {
    let rules = [Rule::Freestyle, Rule::Renju, Rule::Standard];
    let mut state = 0x9E3779B97F4A7C15u64;
    let mut out = String::new();
    let (mut nvcf, mut nvct, mut ndef) = (0, 0, 0);
    for game in 0..400 {
        if nvcf >= 12 && nvct >= 8 && ndef >= 8 {
            break;
        }
        let rule = rules[game % 3];
        let mut b = Board::new(15, 15, rule).unwrap();
        let mut moves: Vec<Pos> = vec![];
        for _ply in 0..70 {
            let side = b.side_to_move();
            if b.points().any(|p| b.is_five_at(p)) {
                break;
            }
            let mv: Vec<String> = moves
                .iter()
                .map(|p| format!("{},{}", p.x(), p.y()))
                .collect();
            let head = |kind: &str, n: usize| {
                format!(
                    "\n[gen-{rule}-{kind}-{n}]\nsize 15 15\nrule {rule}\nmoves {}\n",
                    mv.join(" ")
                )
            };
            let (r, st) = solve_vcf(&mut b, side, Budget::nodes(300_000));
            assert_eq!(st.rejected, 0);
            if let Solve::Win(p) = &r {
                if p.line.len() >= 5 && nvcf < 12 {
                    nvcf += 1;
                    write!(
                        out,
                        "{}# VCF of {} plies found by the solver, verified\nexpect win-vcf\n",
                        head("vcf", nvcf),
                        p.line.len()
                    )
                    .unwrap();
                }
                break;
            }
            let (r2, st2) = solve_vct(&mut b, side, Budget::nodes(300_000));
            assert_eq!(st2.rejected, 0);
            if let Solve::Win(p) = &r2 {
                if nvct < 8 && p.kind == WinKind::Vct {
                    nvct += 1;
                    write!(
                        out,
                        "{}# VCT of {} plies, {} nodes\nexpect win-vct\n",
                        head("vct", nvct),
                        p.line.len(),
                        st2.nodes
                    )
                    .unwrap();
                }
                break;
            }
            if matches!(r, Solve::NoWin)
                && ndef < 8
                && b.points()
                    .all(|p| !b.is_empty(p) || !b.makes_five(p, side.opp()))
            {
                let (r3, _) = solve_vcf(&mut b, side.opp(), Budget::nodes(300_000));
                if let Solve::Win(p) = &r3
                    && p.line.len() >= 5
                {
                    let a = analyse(&b, side, Budget::nodes(3_000_000));
                    if let RootTactics::MustBlock(m) = &a.tactics
                        && !m.is_empty()
                        && m.len() <= 12
                    {
                        ndef += 1;
                        let pts: Vec<String> =
                            m.iter().map(|p| format!("{},{}", p.x(), p.y())).collect();
                        write!(
                            out,
                            "{}# the opponent has a {}-ply VCF\nexpect must-defend {}\n",
                            head("defend", ndef),
                            p.line.len(),
                            pts.join(" ")
                        )
                        .unwrap();
                    }
                }
            }
            let cands: Vec<Pos> = b
                .candidates(2)
                .into_iter()
                .filter(|&p| b.is_legal(p))
                .collect();
            if cands.is_empty() {
                break;
            }
            let mut best = cands[0];
            let mut bs = -1i64;
            for &p in &cands {
                let t = b.threats(p, side);
                let o = b.threats(p, side.opp());
                if t.makes_five() || o.makes_five() {
                    continue;
                }
                let s = t.best() as i64 * 3 + o.best() as i64 * 2 + (rng(&mut state) % 16) as i64;
                if t.best() >= Pattern::Flex3 && !rng(&mut state).is_multiple_of(3) {
                    continue;
                }
                if s > bs {
                    bs = s;
                    best = p;
                }
            }
            b.play(best).unwrap();
            moves.push(best);
        }
    }
    println!("vcf {nvcf} vct {nvct} def {ndef}");
    std::fs::write(
        std::env::var("TSS_SUITE_OUT").unwrap_or("/tmp/generated.txt".into()),
        out,
    )
    .unwrap();
}
