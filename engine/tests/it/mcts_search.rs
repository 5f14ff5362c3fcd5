//! MCTS behaviour: determinism, tree reuse, proven wins and forced blocks, limits, virtual-loss
//! batching, the step-wise API, renju forbidden points, threads and root noise.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use engine::bench::position;
use engine::eval::{Evaluation, Evaluator, UniformEvaluator};
use engine::game::{Board, Color, Pos, Rule};
use engine::mcts::{FinalChoice, MctsConfig, Proven, Search, SearchLimits};

/// A deterministic stand-in for a network: priors and value from a hash of the position, so the
/// tree is uneven (unlike the uniform evaluator) yet every run sees the same numbers.
struct HashNet;

fn mix(mut x: u64) -> u64 {
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    x = x.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    x ^ (x >> 33)
}

impl Evaluator for HashNet {
    fn name(&self) -> String {
        "hashnet".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        out.resize_with(boards.len(), Evaluation::default);
        for (b, e) in boards.iter().zip(out.iter_mut()) {
            e.policy.clear();
            e.policy.resize(b.width() * b.height(), 0.0);
            let mut sum = 0.0;
            for p in b.legal_moves() {
                let w = 0.05 + (mix(b.hash() ^ p.index() as u64) % 1000) as f32 / 1000.0;
                e.policy[b.dense_index(p)] = w;
                sum += w;
            }
            e.policy.iter_mut().for_each(|v| *v /= sum);
            e.value = ((mix(b.hash()) % 2001) as f32 / 1000.0 - 1.0) * 0.5;
        }
    }
}

/// Counts calls and batch sizes, delegating to the uniform evaluator.
#[derive(Default)]
struct Counting {
    batches: Mutex<Vec<usize>>,
}

impl Evaluator for Counting {
    fn name(&self) -> String {
        "counting".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        self.batches.lock().unwrap().push(boards.len());
        UniformEvaluator.evaluate(boards, out);
    }
    fn preferred_batch(&self) -> usize {
        8
    }
}

fn board_with(rule: Rule, black: &[(usize, usize)], white: &[(usize, usize)]) -> Board {
    let mut b = Board::new(15, 15, rule).unwrap();
    for &(x, y) in black {
        b.place(Pos::new(x, y), Color::Black).unwrap();
    }
    for &(x, y) in white {
        b.place(Pos::new(x, y), Color::White).unwrap();
    }
    b
}

fn one_thread(tactics: bool) -> MctsConfig {
    MctsConfig {
        threads: 1,
        batch_size: 1,
        tactics,
        ..Default::default()
    }
}

#[test]
fn one_thread_fixed_visits_is_deterministic() {
    for (rule, tactics) in [
        (Rule::Freestyle, false),
        (Rule::Standard, true),
        (Rule::Renju, false),
        (Rule::Renju, true),
    ] {
        let board = position(rule, 20);
        let run = || {
            let mut s = Search::new(
                MctsConfig {
                    batch_size: 4,
                    ..one_thread(tactics)
                },
                Arc::new(HashNet),
            );
            s.set_position(&board);
            s.run(&SearchLimits::visits(3000))
        };
        let (a, b) = (run(), run());
        assert_eq!(a.best, b.best, "{rule}");
        assert_eq!(a.root_children, b.root_children, "{rule}");
        assert_eq!(a.pv, b.pv, "{rule}");
        assert_eq!(a.nodes, b.nodes, "{rule}");
        assert_eq!(a.playouts, b.playouts);
        // With tactics a proven root may stop early.
        assert!(
            a.playouts == 3000 || (tactics && a.proven.is_some()),
            "{rule}: {}",
            a.playouts
        );
        assert!(board.is_legal(a.best), "{rule}: {:?}", a.best);
    }
}

#[test]
fn tree_is_reused_when_the_position_extends_the_old_one() {
    let board = position(Rule::Freestyle, 12);
    let mut s = Search::new(one_thread(false), Arc::new(HashNet));
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(4000));
    assert!(r.pv.len() >= 2, "pv {:?}", r.pv);
    let mut next = board.clone();
    next.play(r.pv[0]).unwrap();
    next.play(r.pv[1]).unwrap();
    s.set_position(&next);
    let kept = s.root_visits();
    assert!(kept > 0, "the subtree after the pv moves had visits");
    let r2 = s.run(&SearchLimits::visits(1000));
    assert_eq!(r2.visits, kept + 1000);
    // Same search from scratch gets only the new visits.
    let mut fresh = Search::new(one_thread(false), Arc::new(HashNet));
    fresh.set_position(&next);
    assert_eq!(fresh.root_visits(), 0);
    // A position that does not extend the old one drops the tree.
    s.set_position(&position(Rule::Freestyle, 5));
    assert_eq!(s.root_visits(), 0);
    // Turning reuse off drops it too.
    let mut no_reuse = Search::new(
        MctsConfig {
            reuse_tree: false,
            ..one_thread(false)
        },
        Arc::new(HashNet),
    );
    no_reuse.set_position(&board);
    no_reuse.run(&SearchLimits::visits(500));
    no_reuse.set_position(&next);
    assert_eq!(no_reuse.root_visits(), 0);
}

#[test]
fn five_in_one_is_found_with_and_without_tactics() {
    let board = board_with(
        Rule::Freestyle,
        &[(5, 7), (6, 7), (7, 7), (8, 7)],
        &[(5, 9), (6, 9), (7, 9), (9, 3)],
    );
    let wins = [Pos::new(4, 7), Pos::new(9, 7)];
    let mut s = Search::new(one_thread(true), Arc::new(UniformEvaluator));
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(10_000));
    assert!(wins.contains(&r.best), "{:?}", r.best);
    assert_eq!(r.proven, Some(Proven::Win));
    assert_eq!(r.value, 1.0);
    assert!(
        r.playouts < 50,
        "a proven root stops the search early: {}",
        r.playouts
    );

    let mut s = Search::new(one_thread(false), Arc::new(UniformEvaluator));
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(3_000));
    assert!(wins.contains(&r.best), "{:?}", r.best);
    assert_eq!(
        r.proven,
        Some(Proven::Win),
        "a five child is a terminal win"
    );
}

#[test]
fn must_block_is_found() {
    // White threatens five at 9,7 (4,7 is blocked); black has nothing: black must block.
    let board = board_with(
        Rule::Standard,
        &[(4, 7), (10, 11), (12, 3), (2, 12)],
        &[(5, 7), (6, 7), (7, 7), (8, 7)],
    );
    assert_eq!(board.side_to_move(), Color::Black);
    // (Without tactics a blind evaluator needs white's five to be tried under every other black
    // move, which is a matter of luck in its priors; the tactics are what make this immediate.)
    let mut s = Search::new(one_thread(true), Arc::new(HashNet));
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(200));
    assert_eq!(r.best, Pos::new(9, 7));
    assert_eq!(r.root_children.len(), 1, "only the block is searched");
    // Two five threats cannot both be blocked: proven loss.
    let lost = board_with(
        Rule::Standard,
        &[(10, 11), (12, 3), (2, 12), (13, 13)],
        &[(5, 7), (6, 7), (7, 7), (8, 7)],
    );
    let mut s = Search::new(one_thread(true), Arc::new(HashNet));
    s.set_position(&lost);
    let r = s.run(&SearchLimits::visits(500));
    assert_eq!(r.proven, Some(Proven::Loss));
    assert!(lost.is_legal(r.best));
}

#[test]
fn limits_are_respected() {
    let board = position(Rule::Freestyle, 16);
    // Visits: exact.
    let mut s = Search::new(
        MctsConfig {
            batch_size: 8,
            ..one_thread(false)
        },
        Arc::new(HashNet),
    );
    s.set_position(&board);
    assert_eq!(s.run(&SearchLimits::visits(1234)).playouts, 1234);
    // Time, counted in 50 ms batches: a 200 ms deadline leaves room for four at most.
    let slow = Arc::new(SlowNet {
        delay: Duration::from_millis(50),
        batches: AtomicUsize::new(0),
    });
    let mut s = Search::new(one_thread(false), slow.clone());
    s.set_position(&board);
    let r = s.run(&SearchLimits::time(Duration::from_millis(200)));
    let batches = slow.batches.load(Ordering::Relaxed);
    assert!(
        r.playouts > 0 && (1..=4).contains(&batches),
        "{batches} batches of 50 ms in 200 ms"
    );
    // The stop flag, raised by the network during its third batch: no fourth is started.
    let stop = Arc::new(AtomicBool::new(false));
    // The visit cap only ends a search that ignores the flag, with many more batches.
    let limits = SearchLimits {
        stop: stop.clone(),
        max_visits: 100_000,
        ..Default::default()
    };
    let stopping = Arc::new(StopAfter {
        stop,
        after: 3,
        batches: AtomicUsize::new(0),
    });
    let mut s = Search::new(one_thread(false), stopping.clone());
    s.set_position(&board);
    let r = s.run(&limits);
    assert_eq!(stopping.batches.load(Ordering::Relaxed), 3);
    assert!(board.is_legal(r.best));
    // Nodes.
    let mut s = Search::new(one_thread(false), Arc::new(HashNet));
    s.set_position(&board);
    let r = s.run(&SearchLimits {
        max_nodes: 300,
        ..Default::default()
    });
    assert!(r.nodes <= 300, "{}", r.nodes);
    // Memory: a 1 MiB tree (about 600 expansions here) is pruned as it fills and the search
    // goes on to its visit limit, within the budget.
    let budget = 1 << 20;
    let mut s = Search::new(
        MctsConfig {
            max_memory: budget,
            ..one_thread(false)
        },
        Arc::new(UniformEvaluator),
    );
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(30_000));
    assert_eq!(r.playouts, 30_000);
    assert!(s.tree_bytes() <= budget, "{} > {budget}", s.tree_bytes());
    assert!(board.is_legal(r.best));
}

#[test]
fn virtual_loss_gathers_full_batches() {
    let board = position(Rule::Freestyle, 10);
    let counting = Arc::new(Counting::default());
    let mut s = Search::new(
        MctsConfig {
            batch_size: 0,
            ..one_thread(false)
        },
        counting.clone(),
    );
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(8 * 100 + 1));
    assert_eq!(r.playouts, 801);
    let batches = counting.batches.lock().unwrap().clone();
    assert_eq!(
        batches[0], 1,
        "the fresh root is the only leaf of the first batch"
    );
    let full = batches.iter().filter(|&&b| b == 8).count();
    assert_eq!(batches.iter().sum::<usize>(), 801);
    assert!(full >= batches.len() - 2, "batches {batches:?}");
}

#[test]
fn step_api_matches_run_and_batches_many_games() {
    let board = position(Rule::Standard, 14);
    let cfg = MctsConfig {
        batch_size: 4,
        ..one_thread(true)
    };
    let mut a = Search::new(cfg.clone(), Arc::new(HashNet));
    a.set_position(&board);
    let ra = a.run(&SearchLimits::visits(2000));

    // Two games stepped by one driver, their leaves evaluated in one call.
    let mut games = [
        Search::new(cfg.clone(), Arc::new(HashNet)),
        Search::new(cfg, Arc::new(HashNet)),
    ];
    for g in &mut games {
        g.set_position(&board);
    }
    let net = HashNet;
    let mut evals = Vec::new();
    while games[0].root_visits() < 2000 {
        let want = (2000 - games[0].root_visits()).min(4) as usize;
        let counts: Vec<usize> = games
            .iter_mut()
            .map(|g| g.gather_leaves(want).len())
            .collect();
        let boards: Vec<&Board> = games.iter().flat_map(|g| g.pending_boards()).collect();
        assert_eq!(boards.len(), counts.iter().sum::<usize>());
        net.evaluate(&boards, &mut evals);
        drop(boards);
        let mut at = 0;
        for (g, n) in games.iter_mut().zip(&counts) {
            g.apply(&evals[at..at + n]).unwrap();
            at += n;
        }
    }
    let rb = games[0].result();
    assert_eq!(rb.visits, 2000);
    assert_eq!(
        ra.root_children, rb.root_children,
        "stepping is the same search as run()"
    );
    assert_eq!(ra.best, rb.best);
    assert_eq!(games[1].result().root_children, rb.root_children);
    // A mismatched apply is a typed error and leaves the search usable.
    let n = games[0].gather_leaves(4).len();
    assert!(n > 0);
    assert!(games[0].apply(&[]).is_err());
    let boards = games[0].pending_boards().len();
    assert_eq!(boards, n, "still pending after the refused apply");
}

#[test]
fn renju_forbidden_points_are_never_expanded() {
    // Black to move; 7,7 is a double three for black.
    let board = board_with(
        Rule::Renju,
        &[(5, 7), (6, 7), (7, 5), (7, 6)],
        &[(0, 0), (14, 0), (0, 14), (14, 14)],
    );
    let f = Pos::new(7, 7);
    assert!(board.is_forbidden(f));
    /// Claims every empty point, the forbidden one most of all: the search must still skip it.
    struct Reckless;
    impl Evaluator for Reckless {
        fn name(&self) -> String {
            "reckless".into()
        }
        fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
            out.resize_with(boards.len(), Evaluation::default);
            for (b, e) in boards.iter().zip(out.iter_mut()) {
                e.policy = vec![0.0; b.width() * b.height()];
                for p in b.points() {
                    if b.is_empty(p) {
                        e.policy[b.dense_index(p)] = if p == Pos::new(7, 7) { 100.0 } else { 1.0 };
                    }
                }
                let s: f32 = e.policy.iter().sum();
                e.policy.iter_mut().for_each(|v| *v /= s);
                e.value = 0.0;
            }
        }
    }
    let mut s = Search::new(one_thread(false), Arc::new(Reckless));
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(2000));
    assert!(
        r.root_children.iter().all(|c| c.mv != f),
        "forbidden point searched"
    );
    assert_ne!(r.best, f);
    assert!(board.is_legal(r.best));
}

#[test]
fn two_threads_search_one_tree() {
    let board = position(Rule::Freestyle, 18);
    let mut s = Search::new(
        MctsConfig {
            threads: 2,
            batch_size: 4,
            ..Default::default()
        },
        Arc::new(HashNet),
    );
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(5000));
    assert_eq!(r.playouts, 5000);
    assert_eq!(r.visits, 5000);
    assert!(board.is_legal(r.best));
    let sum: u32 = r.root_children.iter().map(|c| c.visits).sum();
    assert_eq!(
        sum as u64 + 1,
        r.visits,
        "every playout but the root's own is under a child"
    );
}

#[test]
fn root_noise_is_seeded_and_sampling_follows_visits() {
    let board = position(Rule::Freestyle, 8);
    let run = |seed: u64| {
        let cfg = MctsConfig {
            dirichlet_alpha: 0.3,
            seed,
            final_choice: FinalChoice::MaxVisits,
            ..one_thread(false)
        };
        let mut s = Search::new(cfg, Arc::new(HashNet));
        s.set_position(&board);
        let r = s.run(&SearchLimits::visits(800));
        let sampled: Vec<Pos> = (0..5).map(|_| s.sample_move(1.0)).collect();
        (r, sampled)
    };
    let (a, sa) = run(1);
    let (b, sb) = run(1);
    let (c, _) = run(2);
    assert_eq!(a.root_children, b.root_children);
    assert_eq!(sa, sb);
    assert_ne!(
        a.root_children, c.root_children,
        "another seed, other noise"
    );
    for p in sa {
        assert!(a.root_children.iter().any(|ch| ch.mv == p));
    }
}

/// A slow network: every batch takes `delay` of wall time (a `medium` model on one CPU core), and
/// the batches started are counted.
struct SlowNet {
    delay: Duration,
    batches: AtomicUsize,
}

impl Evaluator for SlowNet {
    fn name(&self) -> String {
        "slow".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        self.batches.fetch_add(1, Ordering::Relaxed);
        std::thread::sleep(self.delay);
        UniformEvaluator.evaluate(boards, out);
    }
    fn preferred_batch(&self) -> usize {
        8
    }
}

/// A network that raises the search's stop flag during its `after`-th batch (STOP arriving while
/// the engine thinks), counting the batches started.
struct StopAfter {
    stop: Arc<AtomicBool>,
    after: usize,
    batches: AtomicUsize,
}

impl Evaluator for StopAfter {
    fn name(&self) -> String {
        "stop-after".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        if self.batches.fetch_add(1, Ordering::Relaxed) + 1 == self.after {
            self.stop.store(true, Ordering::Relaxed);
        }
        UniformEvaluator.evaluate(boards, out);
    }
}

#[test]
fn a_batch_that_would_end_past_the_deadline_is_not_started() {
    // 300 ms batches and a 700 ms deadline: after two batches (600 ms) a third would end at
    // 900 ms, so the search must not start it. Counted, not timed: a loaded machine's late
    // wake-ups can only leave fewer batches.
    let net = Arc::new(SlowNet {
        delay: Duration::from_millis(300),
        batches: AtomicUsize::new(0),
    });
    let mut s = Search::new(
        MctsConfig {
            threads: 1,
            ..MctsConfig::default()
        },
        net.clone(),
    );
    s.set_position(&position(Rule::Freestyle, 10));
    let r = s.run(&SearchLimits::time(Duration::from_millis(700)));
    let batches = net.batches.load(Ordering::Relaxed);
    assert!(
        r.visits > 0 && r.best != Pos::NONE,
        "the first batches were searched"
    );
    assert!(
        (1..=2).contains(&batches),
        "{batches} batches of 300 ms started for a 700 ms deadline"
    );
}

/// The ranked candidates: as many as asked, the final choice first, each PV starting with its
/// move, visits summing to the root's children's, and the ranking stable across runs.
#[test]
fn candidates_rank_like_the_final_choice() {
    let board = position(Rule::Freestyle, 16);
    let mut s = Search::new(one_thread(true), Arc::new(HashNet));
    s.set_position(&board);
    let r = s.run(&SearchLimits::visits(3000));
    let top = s.candidates(5);
    assert_eq!(top.len(), 5);
    assert_eq!(top[0].mv, r.best);
    assert_eq!(top[0].pv, r.pv);
    for c in &top {
        assert_eq!(c.pv[0], c.mv);
        assert!(board.is_legal(c.mv));
    }
    // Below the chosen move, unproven moves come by visits.
    for w in top[1..].windows(2) {
        assert!(
            w[0].visits >= w[1].visits || w[0].proven.is_some(),
            "{:?}",
            top
        );
    }
    let all = s.candidates(usize::MAX);
    let visited: u32 = all.iter().map(|c| c.visits).sum();
    assert_eq!(
        visited,
        r.root_children.iter().map(|c| c.visits).sum::<u32>()
    );
    assert_eq!(&all[..5], &top[..]);
}

/// Progress reports come from the search thread no more often than asked: every batch with a
/// zero interval, none within an interval longer than the run.
#[test]
fn progress_reports_are_rate_limited() {
    let board = position(Rule::Freestyle, 16);
    let count = |every: Duration| {
        let reports = Arc::new(Mutex::new(Vec::new()));
        let sink = reports.clone();
        let hook = engine::mcts::ProgressHook {
            every,
            candidates: 3,
            report: Arc::new(move |r: &engine::mcts::ProgressReport| {
                sink.lock().unwrap().push(r.clone());
            }),
        };
        let mut s = Search::new(
            MctsConfig {
                batch_size: 10,
                ..one_thread(false)
            },
            Arc::new(HashNet),
        );
        s.set_position(&board);
        let r = s.run(&SearchLimits {
            max_visits: 1000,
            progress: Some(hook),
            ..Default::default()
        });
        let reports = reports.lock().unwrap().clone();
        (r, reports)
    };
    let (r, every_batch) = count(Duration::ZERO);
    // One report before each batch of at most 10 playouts (the first before any).
    assert!(every_batch.len() >= 100, "{}", every_batch.len());
    assert_eq!(every_batch[0].playouts, 0);
    assert!(
        every_batch
            .windows(2)
            .all(|w| w[0].playouts <= w[1].playouts)
    );
    let last = every_batch.last().unwrap();
    assert!(
        last.playouts < 1000 && last.playouts >= 990,
        "{}",
        last.playouts
    );
    assert!(board.is_legal(last.best) && last.pv[0] == last.best);
    // The ranked moves a live board draws: as many as asked, the final choice first.
    assert_eq!(last.candidates.len(), 3);
    assert_eq!(last.candidates[0].mv, last.best);
    assert!(last.candidates.iter().all(|c| c.pv.first() == Some(&c.mv)));
    assert_eq!(r.playouts, 1000);
    let (_, none) = count(Duration::from_secs(3600));
    assert!(none.is_empty());
}

/// Records whether any board it was asked about had its side to move facing a five point.
#[derive(Default)]
struct FacingFour {
    asked: AtomicUsize,
    facing: AtomicUsize,
}

impl Evaluator for FacingFour {
    fn name(&self) -> String {
        "facing-four".into()
    }
    fn evaluate(&self, boards: &[&Board], out: &mut Vec<Evaluation>) {
        for b in boards {
            let opp = b.side_to_move().opp();
            self.asked.fetch_add(1, Ordering::Relaxed);
            if b.points().any(|p| b.is_empty(p) && b.makes_five(p, opp)) {
                self.facing.fetch_add(1, Ordering::Relaxed);
            }
        }
        UniformEvaluator.evaluate(boards, out);
    }
}

/// A leaf whose side to move must block a five is evaluated after the block (the four is a
/// tempo): no evaluated board has its side to move facing a five, though the side to move at
/// the root can make fours.
#[test]
fn a_forced_block_is_evaluated_after_the_block() {
    // Black to move with a three closed by white at one end: a four to make at 8,7 or 9,7, each
    // with one block; white's other stones make no threat.
    let board = board_with(
        Rule::Freestyle,
        &[(5, 7), (6, 7), (7, 7), (7, 9), (0, 0)],
        &[(4, 7), (14, 14), (10, 2), (2, 12), (0, 14)],
    );
    assert_eq!(board.side_to_move(), Color::Black);
    let net = Arc::new(FacingFour::default());
    let mut s = Search::new(one_thread(true), net.clone());
    s.set_position(&board);
    s.run(&SearchLimits::visits(2000));
    assert!(net.asked.load(Ordering::Relaxed) > 100);
    assert_eq!(
        net.facing.load(Ordering::Relaxed),
        0,
        "boards evaluated in front of a five point"
    );
}

#[test]
fn a_restricted_root_searches_only_the_moves_it_is_given() {
    let board = position(Rule::Freestyle, 18);
    let mut free = Search::new(one_thread(false), Arc::new(HashNet));
    free.set_position(&board);
    let r = free.run(&SearchLimits::visits(3000));
    // Three moves the free search liked less than its choice.
    let allowed: Vec<Pos> = r.root_children[4..7].iter().map(|c| c.mv).collect();
    assert!(!allowed.contains(&r.best));
    let only_allowed = |r: &engine::mcts::SearchResult, what: &str| {
        assert!(allowed.contains(&r.best), "{what}: best {}", r.best);
        assert!(
            r.root_children.iter().all(|c| allowed.contains(&c.mv)),
            "{what}: {:?}",
            r.root_children
        );
        let under: u64 = r.root_children.iter().map(|c| c.visits as u64).sum();
        assert_eq!(
            under + 1,
            r.visits,
            "{what}: the root's visits are its kept children's and its own"
        );
    };

    // A fresh tree, one and two threads: the restriction waits for the root's expansion.
    for threads in [1, 2] {
        let mut s = Search::new(
            MctsConfig {
                threads,
                batch_size: 4,
                ..Default::default()
            },
            Arc::new(HashNet),
        );
        s.set_position(&board);
        s.restrict_root(&allowed);
        let r = s.run(&SearchLimits::visits(2000));
        only_allowed(&r, &format!("{threads} threads"));
        assert_eq!(r.playouts, 2000);
        assert!(
            s.candidates(usize::MAX)
                .iter()
                .all(|c| allowed.contains(&c.mv))
        );
    }

    // A reused tree: what the other moves had leaves the root, and the search goes on.
    let kept_before: u64 = r
        .root_children
        .iter()
        .filter(|c| allowed.contains(&c.mv))
        .map(|c| c.visits as u64)
        .sum();
    free.set_position(&board);
    free.restrict_root(&allowed);
    assert_eq!(free.root_visits(), kept_before + 1);
    let again = free.run(&SearchLimits::visits(1000));
    only_allowed(&again, "reused");
    assert_eq!(again.visits, kept_before + 1 + 1000);

    // A restriction no root move meets (a stone) is ignored: the same search as a free one.
    let same = |a: &engine::mcts::SearchResult, b: &engine::mcts::SearchResult, what: &str| {
        assert_eq!(
            (a.best, &a.root_children, a.nodes),
            (b.best, &b.root_children, b.nodes),
            "{what}"
        );
    };
    let mut s = Search::new(one_thread(false), Arc::new(HashNet));
    s.set_position(&board);
    s.restrict_root(&[board.history()[0].0]);
    same(
        &s.run(&SearchLimits::visits(3000)),
        &r,
        "a restriction to a stone",
    );

    // A new position starts unrestricted.
    let other = position(Rule::Freestyle, 12);
    let mut fresh = Search::new(one_thread(false), Arc::new(HashNet));
    fresh.set_position(&other);
    let want = fresh.run(&SearchLimits::visits(2000));
    let mut s = Search::new(one_thread(false), Arc::new(HashNet));
    s.set_position(&board);
    s.restrict_root(&allowed);
    s.set_position(&other);
    same(
        &s.run(&SearchLimits::visits(2000)),
        &want,
        "the next position",
    );
}
