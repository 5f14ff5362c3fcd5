//! The typed vocabulary of the protocol; parsing lives in `parse`, printing in `print`.

/// A board point as the protocol writes it: 0-based column `x` and row `y`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Coord {
    pub x: u32,
    pub y: u32,
}

impl Coord {
    pub const fn new(x: u32, y: u32) -> Self {
        Self { x, y }
    }
}

/// Who owns a stone in a `BOARD` / `SWAP2BOARD` / `YXBOARD` listing (`x,y,f`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StoneOwner {
    /// `f = 1`: the brain's own stone.
    Own,
    /// `f = 2`: the opponent's stone.
    Opponent,
    /// `f = 3`: continuous-game marker (winning line / forbidden mark); brains ignore these stones.
    Marker,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct BoardStone {
    pub at: Coord,
    pub owner: StoneOwner,
}
