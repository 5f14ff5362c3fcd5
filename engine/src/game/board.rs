//! The board: stones, move history, zobrist hash and incrementally maintained line patterns.
//!
//! Cells live in a padded 32x32 array (`Pos` indexes it) with walls around the playable area, so
//! the four line directions are constant index steps and no bounds checks are needed while
//! walking a line. Each cell keeps a 20-bit key per direction describing its 10 neighbours on that
//! line; placing or removing a stone updates 40 keys and re-reads the patterns of those cells for
//! both colours from the precomputed tables.

use super::forbidden;
use super::pattern::{self, CellThreats, FiveRule, KEY_MASK, PairTable, Pattern, pair_pattern};
use super::pos::{CELLS, Color, DIRECTIONS, MAX_SIZE, MIN_SIZE, PAD, Pos, Rule, STRIDE};
use super::zobrist::ZOBRIST;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Cell {
    Empty = 0,
    Black = 1,
    White = 2,
    Wall = 3,
}

impl Cell {
    #[inline]
    pub fn stone(c: Color) -> Cell {
        match c {
            Color::Black => Cell::Black,
            Color::White => Cell::White,
        }
    }
    #[inline]
    pub fn color(self) -> Option<Color> {
        match self {
            Cell::Black => Some(Color::Black),
            Cell::White => Some(Color::White),
            _ => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GameError {
    #[error("unsupported board size {width}x{height} (each side must be {MIN_SIZE}..={MAX_SIZE})")]
    BadSize { width: usize, height: usize },
    #[error("point {x},{y} is off the {width}x{height} board")]
    OffBoard {
        x: i64,
        y: i64,
        width: usize,
        height: usize,
    },
    #[error("point {0} is already occupied")]
    Occupied(Pos),
    #[error("point {0} is forbidden for black under renju")]
    Forbidden(Pos),
    #[error("the board is full")]
    Full,
    #[error("no move to take back")]
    NothingToUndo,
}

#[derive(Clone)]
pub struct Board {
    width: usize,
    height: usize,
    rule: Rule,
    cells: Box<[Cell; CELLS]>,
    keys: Box<[[u32; 4]; CELLS]>,
    patterns: Box<[[[Pattern; 4]; 2]; CELLS]>,
    history: Vec<(Pos, Color)>,
    /// Per stone placed, the 40 line neighbours' patterns from before it (in update order):
    /// taking the stone back restores them instead of looking them up again.
    saved: Vec<[[Pattern; 2]; NEIGHBOURS]>,
    stones: [usize; 2],
    hash: u64,
    /// `[black, white]` patterns by key (see `pattern::pair_table`).
    pairs: &'static PairTable,
}

/// `Board::points_making`'s iterator: one row at a time over the padded cell array.
pub struct PointsMaking<'b> {
    board: &'b Board,
    colour: usize,
    /// `min` in every byte of a word.
    floor: u32,
    y: usize,
    i: usize,
    row_end: usize,
}

impl Iterator for PointsMaking<'_> {
    type Item = Pos;
    #[inline]
    fn next(&mut self) -> Option<Pos> {
        // Every pattern byte is below 0x80: with the top bit set, subtracting `min` leaves it set
        // exactly in the bytes that are at least `min`, and never borrows across bytes.
        const TOP: u32 = 0x8080_8080;
        let b = self.board;
        loop {
            if self.i == self.row_end {
                self.y += 1;
                if self.y >= b.height {
                    return None;
                }
                self.i = Pos::new(0, self.y).index();
                self.row_end = self.i + b.width;
            }
            let i = self.i & (CELLS - 1);
            self.i += 1;
            let word = u32::from_ne_bytes(b.patterns[i][self.colour].map(|q| q as u8));
            if ((word | TOP).wrapping_sub(self.floor) & TOP) != 0 && b.cells[i] == Cell::Empty {
                return Some(Pos(i as u16));
            }
        }
    }
}

impl std::fmt::Debug for Board {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        writeln!(
            f,
            "Board {}x{} {} moves={:?}",
            self.width,
            self.height,
            self.rule,
            self.moves()
        )?;
        for y in 0..self.height {
            for x in 0..self.width {
                let c = match self.cells[Pos::new(x, y).index()] {
                    Cell::Black => 'X',
                    Cell::White => 'O',
                    _ => '.',
                };
                write!(f, "{c}")?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

impl Board {
    /// An empty `width` x `height` board (each side 5..=22) under `rule`.
    ///
    /// # Errors
    /// `GameError::BadSize` for an unsupported size.
    pub fn new(width: usize, height: usize, rule: Rule) -> Result<Board, GameError> {
        if !(MIN_SIZE..=MAX_SIZE).contains(&width) || !(MIN_SIZE..=MAX_SIZE).contains(&height) {
            return Err(GameError::BadSize { width, height });
        }
        let five_rules = match rule {
            Rule::Freestyle => [FiveRule::AtLeast, FiveRule::AtLeast],
            Rule::Standard => [FiveRule::Exact, FiveRule::Exact],
            Rule::Renju => [FiveRule::Exact, FiveRule::AtLeast],
            Rule::Caro => [FiveRule::Caro, FiveRule::Caro],
        };
        let mut board = Board {
            width,
            height,
            rule,
            cells: Box::new([Cell::Wall; CELLS]),
            keys: Box::new([[0; 4]; CELLS]),
            patterns: Box::new([[[Pattern::Dead; 4]; 2]; CELLS]),
            history: Vec::with_capacity(width * height),
            saved: Vec::new(),
            stones: [0, 0],
            hash: 0,
            pairs: pattern::pair_table(five_rules[0], five_rules[1]),
        };
        for y in 0..height {
            for x in 0..width {
                board.cells[Pos::new(x, y).index()] = Cell::Empty;
            }
        }
        for p in board.points().collect::<Vec<_>>() {
            for (d, &step) in DIRECTIONS.iter().enumerate() {
                let mut key = 0u32;
                for offset in -5isize..=5 {
                    if offset != 0 {
                        let code = board.cells[p.offset(offset * step).index()] as u32;
                        key |= code << (2 * pattern::slot(offset));
                    }
                }
                board.keys[p.index()][d] = key;
            }
            board.refresh_patterns(p);
        }
        Ok(board)
    }

    /// Every pattern table a board can use, built now so the first game does not pay for it.
    pub fn warm_up() {
        for rule in [FiveRule::AtLeast, FiveRule::Exact, FiveRule::Caro] {
            pattern::table(rule);
        }
        for (black, white) in [
            (FiveRule::AtLeast, FiveRule::AtLeast),
            (FiveRule::Exact, FiveRule::Exact),
            (FiveRule::Exact, FiveRule::AtLeast),
            (FiveRule::Caro, FiveRule::Caro),
        ] {
            pattern::pair_table(black, white);
        }
    }

    #[inline]
    pub fn width(&self) -> usize {
        self.width
    }
    #[inline]
    pub fn height(&self) -> usize {
        self.height
    }
    #[inline]
    pub fn rule(&self) -> Rule {
        self.rule
    }

    /// Is (x, y) on the board?
    #[inline]
    pub fn contains(&self, x: i64, y: i64) -> bool {
        x >= 0 && y >= 0 && (x as usize) < self.width && (y as usize) < self.height
    }

    /// The point (x, y), if it is on the board.
    ///
    /// # Errors
    /// `GameError::OffBoard` otherwise.
    pub fn pos(&self, x: i64, y: i64) -> Result<Pos, GameError> {
        if self.contains(x, y) {
            Ok(Pos::new(x as usize, y as usize))
        } else {
            Err(GameError::OffBoard {
                x,
                y,
                width: self.width,
                height: self.height,
            })
        }
    }

    /// Every point of the board, row by row.
    pub fn points(&self) -> impl Iterator<Item = Pos> + use<> {
        let (w, h) = (self.width, self.height);
        (0..h).flat_map(move |y| (0..w).map(move |x| Pos::new(x, y)))
    }

    /// The empty points where `c` would make at least `min` on some line, row by row: the threat
    /// searches' move generators (`Pattern::Five` for five-points, `Block4` for fours, `Flex3`
    /// for threes and fours). Reads the four line patterns of a cell as one word, so a scan of
    /// the board costs a few hundred nanoseconds.
    pub fn points_making(&self, c: Color, min: Pattern) -> PointsMaking<'_> {
        let first = Pos::new(0, 0).index();
        PointsMaking {
            board: self,
            colour: c.index(),
            floor: u32::from(min as u8) * 0x0101_0101,
            y: 0,
            i: first,
            row_end: first + self.width,
        }
    }

    /// Row-major index `y * width + x` of a point (policy and feature layouts use it).
    #[inline]
    pub fn dense_index(&self, p: Pos) -> usize {
        p.y() * self.width + p.x()
    }

    /// The point at a row-major index.
    #[inline]
    pub fn from_dense(&self, i: usize) -> Pos {
        Pos::new(i % self.width, i / self.width)
    }

    #[inline]
    pub fn cell(&self, p: Pos) -> Cell {
        self.cells[p.index()]
    }
    #[inline]
    pub fn is_empty(&self, p: Pos) -> bool {
        self.cells[p.index()] == Cell::Empty
    }
    #[inline]
    pub fn is_on_board(&self, p: Pos) -> bool {
        p.index() < CELLS && self.cells[p.index()] != Cell::Wall
    }

    /// Black moves when both colours have as many stones; otherwise the side with fewer stones.
    #[inline]
    pub fn side_to_move(&self) -> Color {
        if self.stones[0] <= self.stones[1] {
            Color::Black
        } else {
            Color::White
        }
    }
    #[inline]
    pub fn stone_count(&self, c: Color) -> usize {
        self.stones[c.index()]
    }
    #[inline]
    pub fn move_count(&self) -> usize {
        self.history.len()
    }
    pub fn moves(&self) -> Vec<Pos> {
        self.history.iter().map(|&(p, _)| p).collect()
    }
    /// Moves with the colour that played each, oldest first.
    pub fn history(&self) -> &[(Pos, Color)] {
        &self.history
    }
    #[inline]
    pub fn last_move(&self) -> Option<Pos> {
        self.history.last().map(|&(p, _)| p)
    }
    #[inline]
    pub fn is_full(&self) -> bool {
        self.history.len() >= self.width * self.height
    }
    /// Zobrist hash of the stones (the side to move follows from the stone counts).
    #[inline]
    pub fn hash(&self) -> u64 {
        self.hash
    }

    /// The hash the board would have with a `c` stone added on the empty point `p` (searches
    /// look children up in their tables without playing them).
    #[inline]
    pub fn hash_after(&self, p: Pos, c: Color) -> u64 {
        self.hash ^ ZOBRIST[c.index()][p.index() & (CELLS - 1)]
    }

    /// The pattern `c` would make on line `dir` by playing the empty point `p`.
    #[inline]
    pub fn pattern(&self, p: Pos, c: Color, dir: usize) -> Pattern {
        self.patterns[p.index()][c.index()][dir]
    }
    /// The four line patterns `c` would make by playing the empty point `p`.
    #[inline]
    pub fn threats(&self, p: Pos, c: Color) -> CellThreats {
        CellThreats {
            patterns: self.patterns[p.index()][c.index()],
        }
    }

    /// Would `c` win by playing the empty point `p`?
    #[inline]
    pub fn makes_five(&self, p: Pos, c: Color) -> bool {
        self.patterns[p.index()][c.index()].contains(&Pattern::Five)
    }

    /// Is the empty point `p` forbidden for black (renju only)?
    #[inline]
    pub fn is_forbidden(&self, p: Pos) -> bool {
        self.rule == Rule::Renju && self.is_empty(p) && forbidden::is_forbidden(self, p)
    }

    /// `is_forbidden` for callers holding the board mutably: the double-three check plays and
    /// takes back stones here instead of on a copy. The board is unchanged afterwards.
    #[inline]
    pub fn is_forbidden_mut(&mut self, p: Pos) -> bool {
        self.rule == Rule::Renju && self.is_empty(p) && forbidden::is_forbidden_mut(self, p)
    }

    /// Can the side to move play `p`?
    pub fn is_legal(&self, p: Pos) -> bool {
        self.is_on_board(p)
            && self.is_empty(p)
            && !(self.side_has_forbidden_points() && self.is_forbidden(p))
    }

    pub fn legal_moves(&self) -> Vec<Pos> {
        let mut out = Vec::with_capacity(
            self.width * self.height - self.history.len().min(self.width * self.height),
        );
        self.legal_moves_into(&mut out);
        out
    }

    /// The legal moves in board order, written into `out` (cleared first): one pass over the
    /// rows, the forbidden check only for black under renju.
    pub fn legal_moves_into(&self, out: &mut Vec<Pos>) {
        out.clear();
        self.for_each_legal(|p, _| out.push(p));
    }

    /// Can some empty points be illegal for the side to move (black under renju)?
    #[inline]
    pub fn side_has_forbidden_points(&self) -> bool {
        self.rule == Rule::Renju && self.side_to_move() == Color::Black
    }

    /// How many legal moves the side to move has when none can be forbidden (every empty point
    /// is legal); `None` for black under renju.
    #[inline]
    pub fn legal_count_without_forbidden(&self) -> Option<usize> {
        let forbid = self.side_has_forbidden_points();
        (!forbid).then(|| self.width * self.height - self.stones[0] - self.stones[1])
    }

    /// Writes `on` on every legal move of the side to move and 0.0 elsewhere into `mask`
    /// (row-major, `width * height` long) and returns how many there are. Without forbidden
    /// points to check it has no branch per point.
    pub fn legal_mask(&self, mask: &mut [f32], on: f32) -> usize {
        let forbid = self.side_has_forbidden_points();
        let mut n = 0;
        for (y, row) in mask
            .chunks_exact_mut(self.width)
            .take(self.height)
            .enumerate()
        {
            let cells = self.row_cells(y);
            if forbid {
                for (x, (m, &c)) in row.iter_mut().zip(cells).enumerate() {
                    let legal = c == Cell::Empty && !forbidden::is_forbidden(self, Pos::new(x, y));
                    *m = if legal { on } else { 0.0 };
                    n += legal as usize;
                }
            } else {
                // A loop with no call in it: the compiler vectorises it.
                for (m, &c) in row.iter_mut().zip(cells) {
                    let legal = c == Cell::Empty;
                    *m = if legal { on } else { 0.0 };
                    n += legal as usize;
                }
            }
        }
        n
    }

    /// The cells of row `y` (`y < height`), left to right.
    #[inline]
    pub fn row_cells(&self, y: usize) -> &[Cell] {
        let start = Pos::new(0, y).index();
        &self.cells[start..start + self.width]
    }

    /// Calls `f(point, dense index)` for every legal move of the side to move, in board order.
    #[inline]
    pub fn for_each_legal(&self, mut f: impl FnMut(Pos, usize)) {
        let forbid = self.side_has_forbidden_points();
        let mut i = 0;
        for y in 0..self.height {
            let row = Pos::new(0, y);
            for x in 0..self.width {
                let p = row.offset(x as isize);
                if self.cells[p.index()] == Cell::Empty
                    && !(forbid && forbidden::is_forbidden(self, p))
                {
                    f(p, i);
                }
                i += 1;
            }
        }
    }

    /// Plays `p` for the side to move.
    ///
    /// # Errors
    /// Off-board, occupied, or forbidden for black under renju; the board is unchanged then.
    pub fn play(&mut self, p: Pos) -> Result<(), GameError> {
        self.check_empty(p)?;
        let c = self.side_to_move();
        if c == Color::Black && self.is_forbidden(p) {
            return Err(GameError::Forbidden(p));
        }
        self.place_unchecked(p, c);
        Ok(())
    }

    /// Puts a stone of colour `c` on `p` (position set-up: no turn order, no forbidden check).
    ///
    /// # Errors
    /// Off-board or occupied; the board is unchanged then.
    pub fn place(&mut self, p: Pos, c: Color) -> Result<(), GameError> {
        self.check_empty(p)?;
        self.place_unchecked(p, c);
        Ok(())
    }

    fn check_empty(&self, p: Pos) -> Result<(), GameError> {
        if !self.is_on_board(p) {
            return Err(GameError::OffBoard {
                x: p.x() as i64,
                y: p.y() as i64,
                width: self.width,
                height: self.height,
            });
        }
        if !self.is_empty(p) {
            return Err(GameError::Occupied(p));
        }
        Ok(())
    }

    /// Puts a stone without checks. The caller guarantees `p` is an empty on-board point.
    #[inline]
    pub fn place_unchecked(&mut self, p: Pos, c: Color) {
        debug_assert!(
            self.is_on_board(p) && self.is_empty(p),
            "place_unchecked on {p:?}"
        );
        // Masking keeps the index provably in range (a no-op for any point on the board).
        let i = p.index() & (CELLS - 1);
        self.cells[i] = Cell::stone(c);
        self.hash ^= ZOBRIST[c.index()][i];
        self.stones[c.index()] += 1;
        self.history.push((p, c));
        self.place_neighbours(p, Cell::stone(c) as u32);
    }

    /// Plays `p` for the side to move without checks (search code that already knows it is legal).
    #[inline]
    pub fn play_unchecked(&mut self, p: Pos) {
        let c = self.side_to_move();
        self.place_unchecked(p, c);
    }

    /// Takes back the last stone placed.
    pub fn undo(&mut self) -> Option<Pos> {
        let (p, c) = self.history.pop()?;
        let i = p.index() & (CELLS - 1);
        self.cells[i] = Cell::Empty;
        self.hash ^= ZOBRIST[c.index()][i];
        self.stones[c.index()] -= 1;
        // The point's own patterns were not touched while it was occupied (only empty points'
        // are), and later stones are gone (last in, first out): they are current already.
        self.restore_neighbours(p);
        Some(p)
    }

    /// Removes a specific stone (protocol TAKEBACK may name any point); history order of the
    /// remaining stones is kept.
    ///
    /// # Errors
    /// `NothingToUndo` if there is no stone on `p`.
    pub fn remove(&mut self, p: Pos) -> Result<(), GameError> {
        let Some(i) = self.history.iter().rposition(|&(q, _)| q == p) else {
            return Err(GameError::NothingToUndo);
        };
        let later: Vec<(Pos, Color)> = self.history[i + 1..].to_vec();
        for _ in 0..later.len() + 1 {
            self.undo();
        }
        for (q, c) in later {
            self.place_unchecked(q, c);
        }
        Ok(())
    }

    /// Writes `code` (a stone) into the keys of the 40 line neighbours of `p`, refreshes the
    /// patterns of the empty ones, and saves the patterns they had for `restore_neighbours`.
    #[inline]
    fn place_neighbours(&mut self, p: Pos, code: u32) {
        // Saved straight into the stack's new entry: filling a local array and pushing it made
        // LLVM copy the 80 bytes one by one.
        self.saved.push([[Pattern::Dead; 2]; NEIGHBOURS]);
        let Some(saved) = self.saved.last_mut() else {
            return;
        };
        let (cells, keys, patterns, pairs) = (
            &*self.cells,
            &mut *self.keys,
            &mut *self.patterns,
            self.pairs,
        );
        Self::for_each_neighbour(p, |n, d, q, shift| {
            let key = (keys[q][d] & !(3 << shift)) | (code << shift);
            keys[q][d] = key;
            let pats = &mut patterns[q];
            saved[n] = [pats[0][d], pats[1][d]];
            if cells[q] == Cell::Empty {
                [pats[0][d], pats[1][d]] = pair_pattern(pairs[(key & KEY_MASK) as usize]);
            }
        });
    }

    /// Empties `p` in the keys of its 40 line neighbours and puts back the patterns saved when
    /// its stone was placed (every later stone is gone, so they are exactly the current ones).
    #[inline]
    fn restore_neighbours(&mut self, p: Pos) {
        // Read in place, then dropped: popping first would copy the 80 bytes out.
        let Some(saved) = self.saved.last() else {
            // Unreachable while history and saved move together; recompute to stay correct.
            self.recompute_neighbours(p);
            return;
        };
        let (keys, patterns) = (&mut *self.keys, &mut *self.patterns);
        Self::for_each_neighbour(p, |n, d, q, shift| {
            keys[q][d] &= !(3 << shift);
            let pats = &mut patterns[q];
            [pats[0][d], pats[1][d]] = saved[n];
        });
        self.saved.pop();
    }

    /// Calls `f(n, direction, cell index, key shift)` for the 40 line neighbours of `p` (5 each
    /// way in 4 directions), `n` counting them in a fixed order: `restore_neighbours` relies on
    /// it. `p` sits at offset -k from the cell k steps ahead and at +k from the one behind; the
    /// shift is where `p`'s two bits live in that cell's line key.
    ///
    /// Written out in full rather than as loops: LLVM kept the inner loop rolled, and with every
    /// `n`, direction and shift a constant the indexing needs no bounds checks. Cell indices are
    /// masked to the cell array, a no-op for a point on the board (the padding holds its whole
    /// window), so they need none either.
    #[inline(always)]
    fn for_each_neighbour(p: Pos, mut f: impl FnMut(usize, usize, usize, u32)) {
        let base = p.index();
        macro_rules! pair {
            ($d:literal, $k:literal) => {
                let step = DIRECTIONS[$d] * $k;
                let n = ($d * 5 + $k - 1) * 2;
                f(
                    n,
                    $d,
                    base.wrapping_add_signed(step) & (CELLS - 1),
                    2 * pattern::slot(-$k),
                );
                f(
                    n + 1,
                    $d,
                    base.wrapping_add_signed(-step) & (CELLS - 1),
                    2 * pattern::slot($k),
                );
            };
        }
        macro_rules! line {
            ($d:literal) => {
                pair!($d, 1);
                pair!($d, 2);
                pair!($d, 3);
                pair!($d, 4);
                pair!($d, 5);
            };
        }
        line!(0);
        line!(1);
        line!(2);
        line!(3);
    }

    /// Empties `p` in its neighbours' keys and looks their patterns up (the slow way back).
    fn recompute_neighbours(&mut self, p: Pos) {
        Self::for_each_neighbour(p, |_, d, q, shift| {
            let key = &mut self.keys[q][d];
            *key &= !(3 << shift);
            let key = *key;
            if self.cells[q] == Cell::Empty {
                [self.patterns[q][0][d], self.patterns[q][1][d]] =
                    pair_pattern(self.pairs[(key & KEY_MASK) as usize]);
            }
        });
        self.refresh_patterns(p);
    }

    fn refresh_patterns(&mut self, p: Pos) {
        for d in 0..4 {
            let [b, w] = pair_pattern(self.pairs[(self.keys[p.index()][d] & KEY_MASK) as usize]);
            self.patterns[p.index()][0][d] = b;
            self.patterns[p.index()][1][d] = w;
        }
    }

    /// Does the stone on `p` stand in a winning five (per the rule, for its colour)?
    pub fn is_five_at(&self, p: Pos) -> bool {
        let Some(c) = self.cells[p.index()].color() else {
            return false;
        };
        let own = Cell::stone(c);
        DIRECTIONS.iter().any(|&step| {
            let mut back = 1;
            while self.cells[p.offset(-back * step).index()] == own {
                back += 1;
            }
            let mut ahead = 1;
            while self.cells[p.offset(ahead * step).index()] == own {
                ahead += 1;
            }
            let len = (back + ahead - 1) as usize;
            let blocked = |cell: Cell| cell == Cell::stone(c.opp());
            match (self.rule, c) {
                (Rule::Freestyle, _) | (Rule::Renju, Color::White) => len >= 5,
                (Rule::Standard, _) | (Rule::Renju, Color::Black) => len == 5,
                (Rule::Caro, _) => {
                    len == 5
                        && !(blocked(self.cells[p.offset(-back * step).index()])
                            && blocked(self.cells[p.offset(ahead * step).index()]))
                }
            }
        })
    }

    /// The winner, if the last move made a winning five.
    pub fn winner(&self) -> Option<Color> {
        let (p, c) = *self.history.last()?;
        self.is_five_at(p).then_some(c)
    }

    /// Empty points within `radius` (Chebyshev distance) of any stone, in board order; the whole
    /// centre point when the board is empty.
    pub fn candidates(&self, radius: usize) -> Vec<Pos> {
        if self.history.is_empty() {
            return vec![Pos::new(self.width / 2, self.height / 2)];
        }
        let mut mark = [false; CELLS];
        let r = radius.min(PAD) as isize;
        for &(p, _) in &self.history {
            for dy in -r..=r {
                for dx in -r..=r {
                    let q = p.offset(dy * STRIDE as isize + dx);
                    if q.index() < CELLS {
                        mark[q.index()] = true;
                    }
                }
            }
        }
        self.points()
            .filter(|p| mark[p.index()] && self.is_empty(*p))
            .collect()
    }
}

/// Line neighbours a stone changes: 5 each side on 4 lines.
const NEIGHBOURS: usize = 40;

// The padded layout must hold a full window beyond the largest board on every side.
const _: () = assert!(MAX_SIZE + 2 * PAD <= STRIDE);
