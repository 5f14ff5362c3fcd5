//! Points, colours, directions and rules: the vocabulary of the board.

use std::fmt;

/// Smallest and largest supported side length (boards may be rectangular within these bounds).
pub const MIN_SIZE: usize = 5;
pub const MAX_SIZE: usize = 22;

/// Cells of wall around the playable area: one line-pattern window reaches 5 cells each way.
pub(crate) const PAD: usize = 5;
/// Row stride of the padded cell array; fixed so a `Pos` means the same point on every board size.
pub(crate) const STRIDE: usize = 32;
pub(crate) const CELLS: usize = STRIDE * STRIDE;

/// Index steps of the four line directions: horizontal, vertical, diagonal, anti-diagonal.
pub const DIRECTIONS: [isize; 4] = [1, STRIDE as isize, STRIDE as isize + 1, STRIDE as isize - 1];

/// A point on the board, stored as an index into the padded cell array.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub struct Pos(pub(crate) u16);

impl Pos {
    /// "No point": used for passes and empty slots.
    pub const NONE: Pos = Pos(0);

    /// The point at column `x`, row `y` (0-based). Callers check bounds with `Board::contains`.
    #[inline]
    pub const fn new(x: usize, y: usize) -> Pos {
        Pos(((y + PAD) * STRIDE + x + PAD) as u16)
    }
    #[inline]
    pub const fn x(self) -> usize {
        (self.0 as usize % STRIDE).wrapping_sub(PAD)
    }
    #[inline]
    pub const fn y(self) -> usize {
        (self.0 as usize / STRIDE).wrapping_sub(PAD)
    }
    #[inline]
    pub const fn index(self) -> usize {
        self.0 as usize
    }
    #[inline]
    pub(crate) const fn offset(self, delta: isize) -> Pos {
        Pos((self.0 as isize + delta) as u16)
    }
    pub fn is_none(self) -> bool {
        self == Pos::NONE
    }
}

impl fmt::Debug for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_none() {
            write!(f, "none")
        } else {
            write!(f, "{},{}", self.x(), self.y())
        }
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self, f)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    Black = 0,
    White = 1,
}

impl Color {
    #[inline]
    pub const fn opp(self) -> Color {
        match self {
            Color::Black => Color::White,
            Color::White => Color::Black,
        }
    }
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

/// The game rule, as Gomocup numbers it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum Rule {
    /// Five or more in a row wins.
    #[default]
    Freestyle,
    /// Exactly five wins; six or more does not.
    Standard,
    /// Black must not make overlines, double fours or double threes; white wins with five or more.
    Renju,
    /// Exactly five wins, but not when the five is blocked by the opponent at both ends.
    Caro,
}

impl Rule {
    /// From the protocol's `INFO rule` bitmask (1 exactly five, 2 continuous, 4 renju, 8 caro).
    /// Yixin-Board sends 2 alone for renju, so a lone 2 is read as renju too.
    pub fn from_protocol(bits: u32) -> Rule {
        if bits & 4 != 0 || bits == 2 {
            Rule::Renju
        } else if bits & 8 != 0 {
            Rule::Caro
        } else if bits & 1 != 0 {
            Rule::Standard
        } else {
            Rule::Freestyle
        }
    }
    pub fn to_protocol(self) -> u32 {
        match self {
            Rule::Freestyle => 0,
            Rule::Standard => 1,
            Rule::Renju => 4,
            Rule::Caro => 8,
        }
    }
    pub const ALL: [Rule; 4] = [Rule::Freestyle, Rule::Standard, Rule::Renju, Rule::Caro];
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Freestyle => "freestyle",
            Rule::Standard => "standard",
            Rule::Renju => "renju",
            Rule::Caro => "caro",
        })
    }
}

crate::serde_via_str!(Rule);

impl std::str::FromStr for Rule {
    type Err = String;
    fn from_str(s: &str) -> Result<Rule, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "freestyle" | "0" => Ok(Rule::Freestyle),
            "standard" | "exact" | "1" => Ok(Rule::Standard),
            "renju" | "4" | "2" => Ok(Rule::Renju),
            "caro" | "8" => Ok(Rule::Caro),
            other => Err(format!(
                "unknown rule '{other}' (freestyle, standard, renju, caro)"
            )),
        }
    }
}
