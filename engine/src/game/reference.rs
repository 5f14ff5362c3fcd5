//! Slow, obvious versions of the win check and the renju forbidden check, written from the rule
//! text on a plain grid with no pattern tables. Property tests hold the fast board to these.

use super::board::Board;
use super::pos::{Color, Rule};

/// A plain grid copy of a board.
#[derive(Clone, Debug)]
pub struct Grid {
    pub width: usize,
    pub height: usize,
    pub rule: Rule,
    cells: Vec<Option<Color>>,
}

const DIRS: [(i64, i64); 4] = [(1, 0), (0, 1), (1, 1), (-1, 1)];

impl Grid {
    pub fn from_board(board: &Board) -> Grid {
        let mut grid = Grid {
            width: board.width(),
            height: board.height(),
            rule: board.rule(),
            cells: vec![None; board.width() * board.height()],
        };
        for p in board.points() {
            grid.cells[p.y() * grid.width + p.x()] = board.cell(p).color();
        }
        grid
    }

    /// `None` off the board, `Some(None)` for an empty point.
    pub fn get(&self, x: i64, y: i64) -> Option<Option<Color>> {
        if x < 0 || y < 0 || x >= self.width as i64 || y >= self.height as i64 {
            None
        } else {
            Some(self.cells[y as usize * self.width + x as usize])
        }
    }

    fn set(&mut self, x: i64, y: i64, v: Option<Color>) {
        self.cells[y as usize * self.width + x as usize] = v;
    }

    /// Length of the run of `c` through (x, y) along (dx, dy), and what lies beyond each end.
    fn run(
        &self,
        x: i64,
        y: i64,
        (dx, dy): (i64, i64),
        c: Color,
    ) -> (usize, Option<Option<Color>>, Option<Option<Color>>) {
        let mut back = 1;
        while self.get(x - back * dx, y - back * dy) == Some(Some(c)) {
            back += 1;
        }
        let mut ahead = 1;
        while self.get(x + ahead * dx, y + ahead * dy) == Some(Some(c)) {
            ahead += 1;
        }
        let before = self.get(x - back * dx, y - back * dy);
        let after = self.get(x + ahead * dx, y + ahead * dy);
        ((back + ahead - 1) as usize, before, after)
    }

    fn run_wins(
        &self,
        len: usize,
        before: Option<Option<Color>>,
        after: Option<Option<Color>>,
        c: Color,
    ) -> bool {
        match (self.rule, c) {
            (Rule::Freestyle, _) | (Rule::Renju, Color::White) => len >= 5,
            (Rule::Standard, _) | (Rule::Renju, Color::Black) => len == 5,
            (Rule::Caro, _) => {
                len == 5 && !(before == Some(Some(c.opp())) && after == Some(Some(c.opp())))
            }
        }
    }

    /// Does the stone of colour `c` on (x, y) stand in a winning five?
    pub fn is_five_at(&self, x: i64, y: i64, c: Color) -> bool {
        DIRS.iter().any(|&d| {
            let (len, before, after) = self.run(x, y, d, c);
            self.run_wins(len, before, after, c)
        })
    }

    /// Would `c` win by playing the empty point (x, y)?
    pub fn makes_five(&self, x: i64, y: i64, c: Color) -> bool {
        let mut g = self.clone();
        g.set(x, y, Some(c));
        g.is_five_at(x, y, c)
    }

    /// Empty points on line `d` through the black stone at (x, y) that would give black exactly
    /// five through it, in line order (offsets from (x, y)).
    fn completions(&self, x: i64, y: i64, d: (i64, i64)) -> Vec<i64> {
        (-5..=5)
            .filter(|&k| k != 0 && self.get(x + k * d.0, y + k * d.1) == Some(None))
            .filter(|&k| {
                let mut g = self.clone();
                g.set(x + k * d.0, y + k * d.1, Some(Color::Black));
                g.run(x, y, d, Color::Black).0 == 5
            })
            .collect()
    }

    /// Fours black has through (x, y) on line d: a straight four counts once.
    fn fours(&self, x: i64, y: i64, d: (i64, i64)) -> (usize, bool) {
        let c = self.completions(x, y, d);
        let straight = c.iter().any(|&a| {
            c.iter().any(|&b| {
                b - a == 5
                    && (a + 1..b)
                        .all(|k| self.get(x + k * d.0, y + k * d.1) == Some(Some(Color::Black)))
            })
        });
        (c.len() - usize::from(straight), straight && c.len() == 2)
    }

    /// The renju forbidden-point rule for black on the empty point (x, y), straight from its text.
    pub fn is_forbidden(&self, x: i64, y: i64) -> bool {
        if self.rule != Rule::Renju || self.get(x, y) != Some(None) {
            return false;
        }
        let mut g = self.clone();
        g.set(x, y, Some(Color::Black));
        let runs: Vec<usize> = DIRS
            .iter()
            .map(|&d| g.run(x, y, d, Color::Black).0)
            .collect();
        if runs.contains(&5) {
            return false; // five takes precedence
        }
        if runs.iter().any(|&len| len >= 6) {
            return true;
        }
        let fours: Vec<usize> = DIRS.iter().map(|&d| g.fours(x, y, d).0).collect();
        if fours.iter().sum::<usize>() >= 2 {
            return true;
        }
        // A three: a line without a four where one more black stone makes a straight four through
        // (x, y), on a point that is not itself forbidden.
        let threes = DIRS
            .iter()
            .zip(&fours)
            .filter(|&(&d, &f)| {
                f == 0
                    && (-4..=4).any(|k| {
                        let (qx, qy) = (x + k * d.0, y + k * d.1);
                        if k == 0 || g.get(qx, qy) != Some(None) {
                            return false;
                        }
                        let mut h = g.clone();
                        h.set(qx, qy, Some(Color::Black));
                        let between_black = (k.min(0) + 1..k.max(0))
                            .all(|j| g.get(x + j * d.0, y + j * d.1) == Some(Some(Color::Black)));
                        between_black && h.fours(x, y, d).1 && !g.is_forbidden(qx, qy)
                    })
            })
            .count();
        threes >= 2
    }
}
