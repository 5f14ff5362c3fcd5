//! `pbrain-faulty`: a deliberately misbehaving Gomocup brain that proves each forfeit path of
//! `fivezero-tools tournament`. In its default `random-legal` mode it is a well-behaved (weak)
//! brain: it takes an immediate five when it has one, otherwise plays a random legal point near
//! the stones (never a renju-forbidden one).
//!
//! Options (command line, or environment when absent):
//!   --mode M     (FAULTY_MODE)      random-legal | timeout | crash | occupied | off-board |
//!                                   forbidden | ignore-end | garbage | no-start | slow-start |
//!                                   error-start | slow | chatty | memory
//!   --at N       (FAULTY_AT)        own move number (1-based) at which the fault fires [1]
//!   --delay MS   (FAULTY_DELAY_MS)  sleep for slow-start and slow [500]
//!   --mb N       (FAULTY_MB)        MiB to allocate in memory mode [64]
//!   --seed S     (FAULTY_SEED)      random seed [1]
//!
//! Uses `protocol` for parsing, `engine::game` for the rules and `engine::rng`; nothing of the
//! search.

use std::io::{self, Write};
use std::thread;
use std::time::Duration;

use engine::game::{Board, Color, Pos, Rule};
// Seeded: the same games for a given seed.
use engine::rng::Rng;
use protocol::{BrainLine, Command, CommandReader, Coord, Info, StoneOwner};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    RandomLegal,
    Timeout,
    Crash,
    Occupied,
    OffBoard,
    Forbidden,
    IgnoreEnd,
    Garbage,
    NoStart,
    SlowStart,
    ErrorStart,
    Slow,
    Chatty,
    Memory,
}

impl Mode {
    fn parse(s: &str) -> Option<Mode> {
        Some(match s {
            "random-legal" | "random" => Mode::RandomLegal,
            "timeout" => Mode::Timeout,
            "crash" => Mode::Crash,
            "occupied" | "illegal" => Mode::Occupied,
            "off-board" | "offboard" => Mode::OffBoard,
            "forbidden" => Mode::Forbidden,
            "ignore-end" => Mode::IgnoreEnd,
            "garbage" => Mode::Garbage,
            "no-start" => Mode::NoStart,
            "slow-start" => Mode::SlowStart,
            "error-start" => Mode::ErrorStart,
            "slow" => Mode::Slow,
            "chatty" => Mode::Chatty,
            "memory" => Mode::Memory,
            _ => return None,
        })
    }
}

struct Opts {
    mode: Mode,
    at: u64,
    delay_ms: u64,
    mb: usize,
    seed: u64,
}

fn opts() -> Result<Opts, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let get = |flag: &str, env: &str| -> Option<String> {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1).cloned())
            .or_else(|| std::env::var(env).ok())
    };
    let num = |flag: &str, env: &str, default: u64| -> Result<u64, String> {
        get(flag, env).map_or(Ok(default), |v| {
            v.parse().map_err(|_| format!("{flag}: not a number: {v}"))
        })
    };
    let mode_text = get("--mode", "FAULTY_MODE").unwrap_or_else(|| "random-legal".into());
    Ok(Opts {
        mode: Mode::parse(&mode_text).ok_or_else(|| format!("unknown mode `{mode_text}`"))?,
        at: num("--at", "FAULTY_AT", 1)?.max(1),
        delay_ms: num("--delay", "FAULTY_DELAY_MS", 500)?,
        mb: num("--mb", "FAULTY_MB", 64)? as usize,
        seed: num("--seed", "FAULTY_SEED", 1)?,
    })
}

struct Brain {
    o: Opts,
    board: Option<Board>,
    size: (usize, usize),
    rule: Rule,
    rng: Rng,
    my_moves: u64,
    hoard: Vec<Vec<u8>>,
}

fn say(line: &str) {
    let mut out = io::stdout().lock();
    let _ = writeln!(out, "{line}");
    let _ = out.flush();
}

fn sleep_forever() -> ! {
    loop {
        thread::sleep(Duration::from_secs(3600));
    }
}

impl Brain {
    fn new_board(&mut self) -> Result<(), String> {
        self.board =
            Some(Board::new(self.size.0, self.size.1, self.rule).map_err(|e| e.to_string())?);
        self.my_moves = 0;
        Ok(())
    }

    fn handle(&mut self, cmd: Command) {
        match cmd {
            Command::Start { size } => self.start(size as usize, size as usize),
            Command::RectStart { width, height } => self.start(width as usize, height as usize),
            Command::Restart => match self.new_board() {
                Ok(()) => say("OK"),
                Err(e) => say(&format!("ERROR {e}")),
            },
            Command::Info(Info::Rule(bits)) => {
                self.rule = Rule::from_protocol(bits);
                // The rule arrives after START: rebuild the (still empty) board under it.
                if self.board.as_ref().is_some_and(|b| b.move_count() == 0) {
                    let _ = self.new_board();
                }
            }
            Command::Info(_) => {}
            Command::Begin => self.reply(),
            Command::Turn(c) => {
                let Some(b) = self.board.as_mut() else {
                    return say("ERROR no game");
                };
                match b.play(Pos::new(c.x as usize, c.y as usize)) {
                    Ok(()) => self.reply(),
                    Err(e) => say(&format!("ERROR {e}")),
                }
            }
            Command::Board(stones) => {
                if let Err(e) = self.new_board() {
                    return say(&format!("ERROR {e}"));
                }
                let own = stones.iter().filter(|s| s.owner == StoneOwner::Own).count();
                let opp = stones
                    .iter()
                    .filter(|s| s.owner == StoneOwner::Opponent)
                    .count();
                let me = if own == opp {
                    Color::Black
                } else {
                    Color::White
                };
                let Some(b) = self.board.as_mut() else { return };
                for s in stones.iter().filter(|s| s.owner != StoneOwner::Marker) {
                    let c = if s.owner == StoneOwner::Own {
                        me
                    } else {
                        me.opp()
                    };
                    if let Err(e) = b.place(Pos::new(s.at.x as usize, s.at.y as usize), c) {
                        return say(&format!("ERROR {e}"));
                    }
                }
                self.reply();
            }
            Command::About => {
                say(r#"name="pbrain-faulty", version="1", author="fivezero tests", country="-""#)
            }
            Command::End => {
                if self.o.mode == Mode::IgnoreEnd {
                    sleep_forever();
                }
                std::process::exit(0);
            }
            Command::Takeback(c) => {
                if let Some(b) = self.board.as_mut()
                    && b.last_move() == Some(Pos::new(c.x as usize, c.y as usize))
                {
                    b.undo();
                }
                say("OK");
            }
            other => say(&format!("UNKNOWN {other}")),
        }
    }

    fn start(&mut self, w: usize, h: usize) {
        match self.o.mode {
            Mode::NoStart => return,
            Mode::ErrorStart => return say("ERROR this brain refuses every game"),
            Mode::SlowStart => thread::sleep(Duration::from_millis(self.o.delay_ms)),
            Mode::Chatty => say("MESSAGE chatty brain, playing random legal moves"),
            _ => {}
        }
        self.size = (w, h);
        match self.new_board() {
            Ok(()) => say("OK"),
            Err(e) => say(&format!("ERROR {e}")),
        }
    }

    fn reply(&mut self) {
        self.my_moves += 1;
        let fire = self.my_moves >= self.o.at;
        let fire_once = self.my_moves == self.o.at;
        match self.o.mode {
            Mode::Timeout if fire => sleep_forever(),
            Mode::Crash if fire => std::process::exit(3),
            Mode::Garbage if fire_once => return say("garbage \u{1} nonsense %%"),
            Mode::Slow => thread::sleep(Duration::from_millis(self.o.delay_ms)),
            Mode::Chatty => {
                say("MESSAGE thinking about 7,7 and 8,8");
                say("DEBUG 7,7");
            }
            Mode::Memory if fire_once => {
                // Touch every page so the memory is really private and resident.
                self.hoard.push(vec![1u8; self.o.mb << 20]);
                let sum: u64 = self
                    .hoard
                    .iter()
                    .map(|v| v.iter().step_by(4096).map(|&b| b as u64).sum::<u64>())
                    .sum();
                say(&format!("DEBUG hoarding {sum} pages"));
                thread::sleep(Duration::from_millis(100));
            }
            _ => {}
        }
        let Some(b) = self.board.as_mut() else {
            return say("ERROR no game");
        };
        let at = match self.o.mode {
            Mode::Occupied if fire_once => b
                .last_move()
                .or_else(|| b.points().find(|&p| !b.is_empty(p))),
            Mode::OffBoard if fire_once => return say(&format!("{},{}", b.width(), b.height())),
            Mode::Forbidden if fire && b.side_to_move() == Color::Black => {
                b.points().find(|&p| b.is_empty(p) && b.is_forbidden(p))
            }
            _ => None,
        };
        let at = at.or_else(|| choose(b, &mut self.rng));
        let Some(p) = at else {
            return say("ERROR no legal move");
        };
        if b.is_empty(p) {
            // Forbidden points are refused by `play`; the referee still sees the move.
            if b.play(p).is_err() {
                let _ = b.place(p, b.side_to_move());
            }
        }
        say(&BrainLine::Move(Coord::new(p.x() as u32, p.y() as u32)).to_string());
    }
}

/// An immediate five if there is one, else a random legal point next to the stones.
fn choose(b: &Board, rng: &mut Rng) -> Option<Pos> {
    let me = b.side_to_move();
    let legal: Vec<Pos> = b.points().filter(|&p| b.is_legal(p)).collect();
    if let Some(&p) = legal.iter().find(|&&p| b.makes_five(p, me)) {
        return Some(p);
    }
    if b.move_count() == 0 {
        return Some(Pos::new(b.width() / 2, b.height() / 2));
    }
    let near: Vec<Pos> = legal
        .iter()
        .copied()
        .filter(|&p| {
            b.moves()
                .iter()
                .any(|m| m.x().abs_diff(p.x()) <= 1 && m.y().abs_diff(p.y()) <= 1)
        })
        .collect();
    let pool = if near.is_empty() { &legal } else { &near };
    (!pool.is_empty()).then(|| pool[rng.below(pool.len())])
}

fn main() {
    let o = match opts() {
        Ok(o) => o,
        Err(e) => {
            eprintln!("pbrain-faulty: {e}");
            std::process::exit(2);
        }
    };
    let seed = o.seed;
    let mut brain = Brain {
        o,
        board: None,
        size: (15, 15),
        rule: Rule::Freestyle,
        rng: Rng::new(seed),
        my_moves: 0,
        hoard: vec![],
    };
    let mut reader = CommandReader::new();
    for line in protocol::read_lines(io::stdin().lock()) {
        let Ok(line) = line else { continue };
        let results: Vec<_> = reader.feed_all(&line).collect();
        for r in results {
            match r {
                Ok(cmd) => brain.handle(cmd),
                Err(e) => say(&e.reply().to_string()),
            }
        }
    }
    if brain.o.mode == Mode::IgnoreEnd {
        sleep_forever();
    }
}
