//! Swap2 games played end to end the way GomocupJudge runs them, pbrain-fivezero in both seats
//! (real binaries over pipes): START and the INFOs without waiting, `SWAP2BOARD` with plain `x,y`
//! lines (0 stones to the first engine, the 3 stones to the second, possibly 5 stones back to the
//! first), then `BOARD` to each engine with the opening and `TURN` until the game ends.
//!
//! Counted as the referee scores them: an `ERROR`, a garbled or wrong-sized answer, an occupied or
//! off-board point, or a renju foul loses, and so does no answer at all. All of them must be zero.
//! The referee's clock (the turn limit plus its 1000 ms tolerance) is what the engine plans for
//! (unit-tested in `engine::time`); here a reply counts as a forfeit only past a cap seconds above
//! it, so a loaded machine's scheduling delay does not fail the test, while a hang or an engine that
//! ignores its limits still does. The slowest answers are printed (`--nocapture`).
//! `FIVEZERO_SWAP2_GAMES` sets the number of games (default 2: one freestyle, one renju).

use engine::game::{Board, Color, Pos, Rule};
use fivezero_tests::pipe::Brain;
use fivezero_tests::referee::bin;
use protocol::{BrainLine, Coord};
use std::time::{Duration, Instant};

const SIZE: u32 = 15;
const TURN_MS: u64 = 500;
const MATCH_MS: u64 = 120_000;
/// GomocupJudge's tolerance on top of min(turn limit, time left).
const TOLERANCE_MS: u64 = 1000;
/// Scheduling delay a loaded machine may add on top of the referee's deadline.
const LOADED_MACHINE_MS: u64 = 3000;

/// One engine seat, with its match clock as the referee keeps it.
struct Seat {
    brain: Brain,
    used_ms: u64,
    /// The colour it plays once the opening is settled.
    colour: Option<Color>,
}

#[derive(Default, Debug)]
struct Tally {
    answers: usize,
    forfeits: usize,
    errors: Vec<String>,
    slowest_swap2_ms: u64,
    slowest_move_ms: u64,
    swaps: usize,
    five_stone_rounds: usize,
}

impl Seat {
    fn new(rule: u32) -> Seat {
        let mut brain = Brain::spawn(&bin("pbrain-fivezero"), &[]);
        // The referee writes all of it at once and reads the OK later, with the first answer.
        for line in [
            format!("START {SIZE}"),
            format!("INFO timeout_turn {TURN_MS}"),
            format!("INFO timeout_match {MATCH_MS}"),
            "INFO max_memory 367001600".into(),
            "INFO game_type 1".into(),
            format!("INFO rule {rule}"),
            "INFO folder ./".into(),
        ] {
            brain.send(&line);
        }
        let ok = brain.reply(Duration::from_secs(10));
        assert_eq!(ok, "OK");
        Seat {
            brain,
            used_ms: 0,
            colour: None,
        }
    }

    /// Sends `lines` after `INFO time_left`, reads one answer and scores its time.
    fn ask(&mut self, lines: &[String], tally: &mut Tally, swap2: bool) -> Option<BrainLine> {
        let left = MATCH_MS.saturating_sub(self.used_ms);
        self.brain.send(&format!("INFO time_left {left}"));
        let t = Instant::now();
        for l in lines {
            self.brain.send(l);
        }
        let limit = Duration::from_millis(TOLERANCE_MS + LOADED_MACHINE_MS + left.min(TURN_MS));
        let reply = self.brain.reply_within(limit);
        let ms = t.elapsed().as_millis() as u64;
        self.used_ms += ms;
        tally.answers += 1;
        let slowest = if swap2 {
            &mut tally.slowest_swap2_ms
        } else {
            &mut tally.slowest_move_ms
        };
        *slowest = (*slowest).max(ms);
        let Some(reply) = reply else {
            tally.forfeits += 1;
            return None;
        };
        match BrainLine::parse(&reply) {
            Ok(BrainLine::Error(e)) => {
                tally.errors.push(format!("ERROR {e} to {lines:?}"));
                None
            }
            Ok(line) => Some(line),
            Err(e) => {
                tally.errors.push(format!("{e} to {lines:?}"));
                None
            }
        }
    }
}

fn swap2_block(stones: &[Pos]) -> Vec<String> {
    let mut lines = vec!["SWAP2BOARD".to_string()];
    lines.extend(stones.iter().map(|p| format!("{},{}", p.x(), p.y())));
    lines.push("DONE".into());
    lines
}

/// `BOARD` as the referee writes it for `me`: placement order, 1 = own stone, 2 = opponent's.
fn board_block(board: &Board, me: Color) -> Vec<String> {
    let mut lines = vec!["BOARD".to_string()];
    for &(p, c) in board.history() {
        lines.push(format!(
            "{},{},{}",
            p.x(),
            p.y(),
            if c == me { 1 } else { 2 }
        ));
    }
    lines.push("DONE".into());
    lines
}

/// Plays `coords` onto `board` in turn; false when one is off-board, taken or a renju foul.
fn place_all(board: &mut Board, coords: &[Coord], tally: &mut Tally) -> bool {
    for c in coords {
        let ok = board
            .pos(i64::from(c.x), i64::from(c.y))
            .is_ok_and(|p| board.play(p).is_ok());
        if !ok {
            tally
                .errors
                .push(format!("illegal stone {c} on\n{board:?}"));
            return false;
        }
    }
    true
}

/// `chooser`'s answer to a swap2 position with white to move: `SWAP` takes black, `x,y` plays
/// white's stone and keeps white; anything else is scored as an error.
fn settle_colours(
    answer: BrainLine,
    chooser: &mut Seat,
    other: &mut Seat,
    board: &mut Board,
    tally: &mut Tally,
) -> Option<()> {
    let chooser_colour = match answer {
        BrainLine::Swap => {
            tally.swaps += 1;
            Color::Black
        }
        BrainLine::Move(m) => {
            place_all(board, &[m], tally).then_some(())?;
            Color::White
        }
        other => {
            tally.errors.push(format!(
                "{} stones: unexpected answer {other:?}",
                board.move_count()
            ));
            return None;
        }
    };
    chooser.colour = Some(chooser_colour);
    other.colour = Some(chooser_colour.opp());
    Some(())
}

/// One game; `Some(winner or None for a draw)` when it finished legally.
fn play_game(rule_bits: u32, tally: &mut Tally) -> Option<Option<Color>> {
    let rule = Rule::from_protocol(rule_bits);
    let mut board = Board::new(SIZE as usize, SIZE as usize, rule).expect("board");
    let (mut a, mut b) = (Seat::new(rule_bits), Seat::new(rule_bits));

    // Opening phase (ai_match.py): A proposes three stones, B chooses.
    let three = match a.ask(&swap2_block(&[]), tally, true)? {
        BrainLine::Moves(m) if m.len() == 3 => m,
        other => {
            tally
                .errors
                .push(format!("0 stones: expected three points, got {other:?}"));
            return None;
        }
    };
    if !place_all(&mut board, &three, tally) {
        return None;
    }
    let stones: Vec<Pos> = board.history().iter().map(|&(p, _)| p).collect();
    match b.ask(&swap2_block(&stones), tally, true)? {
        BrainLine::Moves(m) if m.len() == 2 => {
            // Two more stones: the choice goes back to A.
            place_all(&mut board, &m, tally).then_some(())?;
            tally.five_stone_rounds += 1;
            let stones: Vec<Pos> = board.history().iter().map(|&(p, _)| p).collect();
            let answer = a.ask(&swap2_block(&stones), tally, true)?;
            settle_colours(answer, &mut a, &mut b, &mut board, tally)?;
        }
        answer => settle_colours(answer, &mut b, &mut a, &mut board, tally)?,
    }

    // The game: BOARD to the side to move, BOARD to the other, then TURN back and forth.
    let mut seats = [a, b];
    let mut last: Option<Pos> = None;
    let mut boards_sent = [false, false];
    let max_moves = if rule == Rule::Renju {
        200
    } else {
        (SIZE * SIZE) as usize
    };
    while board.winner().is_none() && !board.is_full() && board.move_count() < max_moves {
        let to_move = board.side_to_move();
        let i = seats
            .iter()
            .position(|s| s.colour == Some(to_move))
            .expect("a seat per colour");
        let seat = &mut seats[i];
        let lines = match last {
            Some(p) if boards_sent[i] => vec![format!("TURN {},{}", p.x(), p.y())],
            _ => {
                boards_sent[i] = true;
                board_block(&board, to_move)
            }
        };
        let m = match seat.ask(&lines, tally, false)? {
            BrainLine::Move(m) => m,
            other => {
                tally.errors.push(format!("expected a move, got {other:?}"));
                return None;
            }
        };
        if !place_all(&mut board, &[m], tally) {
            return None;
        }
        last = board.last_move();
    }
    for s in &mut seats {
        s.brain.send("END");
        assert!(
            s.brain.exits_within(Duration::from_secs(3)),
            "END must end the engine"
        );
    }
    Some(board.winner())
}

#[test]
fn swap2_games_as_gomocupjudge_runs_them() {
    let games: usize = std::env::var("FIVEZERO_SWAP2_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2);
    let mut tally = Tally::default();
    let mut finished = 0;
    let mut results = Vec::new();
    for g in 0..games {
        // Freestyle and renju in turn: renju adds fouls to what can go wrong.
        let rule = if g % 2 == 0 { 0 } else { 4 };
        if let Some(winner) = play_game(rule, &mut tally) {
            finished += 1;
            results.push((rule, winner));
        }
    }
    println!(
        "swap2 games: {games} played, {finished} finished legally; answers {}, forfeits {}, errors {}; \
         SWAP answers {}, 5-stone rounds {}; slowest swap2 answer {} ms, slowest move {} ms \
         (turn limit {TURN_MS} ms + {TOLERANCE_MS} ms tolerance); results (rule, winner) {results:?}",
        tally.answers,
        tally.forfeits,
        tally.errors.len(),
        tally.swaps,
        tally.five_stone_rounds,
        tally.slowest_swap2_ms,
        tally.slowest_move_ms,
    );
    assert!(tally.errors.is_empty(), "{:#?}", tally.errors);
    assert_eq!(tally.forfeits, 0);
    assert_eq!(finished, games);
}
