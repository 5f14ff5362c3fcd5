//! Line patterns: what placing a stone on a cell makes along one line, precomputed for every
//! possible 11-cell window (5 cells each side of the centre), per five-rule.
//!
//! The board keeps a 20-bit key per cell and direction (2 bits per neighbour: empty, own,
//! opponent, wall) and looks the pattern up here, so pattern upkeep costs a table lookup per
//! touched cell. The classification is recursive: a four is one move from a five, a three one
//! move from a straight four, and so on; the table is filled by memoised recursion.

use std::sync::OnceLock;

/// What placing a stone makes on one line through the cell, weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[repr(u8)]
pub enum Pattern {
    #[default]
    Dead = 0,
    /// Six or more in a row where that does not win (exact-five rules); forbidden for renju black.
    Overline,
    Block1,
    Flex1,
    Block2,
    Flex2,
    /// One move from a four that can be blocked.
    Block3,
    /// One move from a straight (open) four: an open three.
    Flex3,
    /// One move from five, one way to complete.
    Block4,
    /// Straight four: two ways to complete, both inside one run of four.
    Flex4,
    /// Two separate fours on one line (e.g. `X.XXX.X` by the middle stone): counts as two fours.
    DoubleFour,
    Five,
}

impl Pattern {
    /// How many fours this pattern counts as (renju double-four detection).
    #[inline]
    pub fn four_count(self) -> u8 {
        match self {
            Pattern::Block4 | Pattern::Flex4 => 1,
            Pattern::DoubleFour => 2,
            _ => 0,
        }
    }
    #[inline]
    pub fn is_four(self) -> bool {
        self.four_count() > 0
    }
    const ALL: [Pattern; 12] = [
        Pattern::Dead,
        Pattern::Overline,
        Pattern::Block1,
        Pattern::Flex1,
        Pattern::Block2,
        Pattern::Flex2,
        Pattern::Block3,
        Pattern::Flex3,
        Pattern::Block4,
        Pattern::Flex4,
        Pattern::DoubleFour,
        Pattern::Five,
    ];
}

/// Which runs count as a winning five.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum FiveRule {
    /// Five or more (freestyle; renju white).
    AtLeast = 0,
    /// Exactly five (standard; renju black).
    Exact = 1,
    /// Exactly five and not blocked by the opponent at both ends (caro).
    Caro = 2,
}

/// Neighbour codes inside a key. For black the absolute codes are the relative ones.
pub(crate) const EMPTY: u32 = 0;
pub(crate) const OWN: u32 = 1;
pub(crate) const OPP: u32 = 2;
pub(crate) const WALL: u32 = 3;

pub(crate) const KEY_BITS: u32 = 20;

/// Key slot of the neighbour at `offset` (-5..=5, not 0) from the centre.
#[inline]
pub(crate) const fn slot(offset: isize) -> u32 {
    if offset < 0 {
        (offset + 5) as u32
    } else {
        (offset + 4) as u32
    }
}

/// Swaps own and opponent codes in a key, leaving empty and wall: white's view of a black key.
#[inline]
pub(crate) const fn swap_colors(key: u32) -> u32 {
    let differ = (key ^ (key >> 1)) & 0x55555;
    key ^ (differ | (differ << 1))
}

pub(crate) type PatternTable = [Pattern];

/// The table for a five-rule, built on first use (about 1M entries, tens of milliseconds).
pub(crate) fn table(rule: FiveRule) -> &'static PatternTable {
    static TABLES: [OnceLock<Box<PatternTable>>; 3] =
        [OnceLock::new(), OnceLock::new(), OnceLock::new()];
    TABLES[rule as usize].get_or_init(|| build_table(rule))
}

/// Both colours' patterns for one key in one byte, black's in the low nibble and white's in the
/// high one (`pair_pattern` reads it): black reads the key with its five-rule, white reads the
/// colour-swapped key with its own. One lookup per touched cell instead of two into two tables,
/// and one byte per key instead of two: the 1 MiB table fits a core's L2, where the board's
/// make/unmake spends much of its time waiting on it.
pub(crate) type PairTable = [u8; 1 << KEY_BITS];

/// Mask of a key's bits: a key read from the board masked with it indexes a `PairTable` without
/// a bounds check (keys never have other bits set, so it changes nothing).
pub(crate) const KEY_MASK: u32 = (1 << KEY_BITS) - 1;

/// The pair table for black's and white's five-rules, built on first use from the two tables.
pub(crate) fn pair_table(black: FiveRule, white: FiveRule) -> &'static PairTable {
    static PAIRS: [OnceLock<Box<PairTable>>; 9] = [const { OnceLock::new() }; 9];
    PAIRS[black as usize * 3 + white as usize].get_or_init(|| {
        let (b, w) = (table(black), table(white));
        let packed: Box<[u8]> = (0..1u32 << KEY_BITS)
            .map(|key| b[key as usize] as u8 | (w[swap_colors(key) as usize] as u8) << 4)
            .collect();
        packed.try_into().expect("one byte per key")
    })
}

/// `[black, white]` patterns of a pair-table byte.
#[inline(always)]
pub(crate) fn pair_pattern(pair: u8) -> [Pattern; 2] {
    PAIR_PATTERNS[pair as usize]
}

/// Every byte's `[low nibble, high nibble]` as patterns: 512 bytes that stay in L1, cheaper than
/// a match per nibble. Nibbles no pattern has (12..16) never occur in a pair table.
const PAIR_PATTERNS: [[Pattern; 2]; 256] = {
    let mut out = [[Pattern::Dead; 2]; 256];
    let mut i = 0;
    while i < 256 {
        let (lo, hi) = (i & 15, i >> 4);
        if lo < Pattern::ALL.len() && hi < Pattern::ALL.len() {
            out[i] = [Pattern::ALL[lo], Pattern::ALL[hi]];
        }
        i += 1;
    }
    out
};

/// An 11-cell line with the centre (index 5) owned by the player being classified.
type Line = [u32; 11];

fn line_of(key: u32) -> Line {
    let mut line = [OWN; 11];
    for offset in -5isize..=5 {
        if offset != 0 {
            line[(offset + 5) as usize] = (key >> (2 * slot(offset))) & 3;
        }
    }
    line
}

fn key_of(line: &Line) -> u32 {
    let mut key = 0;
    for offset in -5isize..=5 {
        if offset != 0 {
            key |= line[(offset + 5) as usize] << (2 * slot(offset));
        }
    }
    key
}

/// Length of the own run through the centre, and the cells just beyond each end.
fn run_through_centre(line: &Line) -> (usize, u32, u32) {
    let mut left = 5;
    while left > 0 && line[left - 1] == OWN {
        left -= 1;
    }
    let mut right = 5;
    while right < 10 && line[right + 1] == OWN {
        right += 1;
    }
    let before = if left > 0 { line[left - 1] } else { WALL };
    let after = if right < 10 { line[right + 1] } else { WALL };
    (right - left + 1, before, after)
}

fn is_five(line: &Line, rule: FiveRule) -> bool {
    let (len, before, after) = run_through_centre(line);
    match rule {
        FiveRule::AtLeast => len >= 5,
        FiveRule::Exact => len == 5,
        FiveRule::Caro => len == 5 && !(before == OPP && after == OPP),
    }
}

/// Completion points of fours through the centre, and whether two of them bracket a straight four.
fn four_shape(line: &Line, rule: FiveRule) -> (usize, bool) {
    let mut completions = [0usize; 10];
    let mut n = 0;
    for i in 0..11 {
        if line[i] == EMPTY {
            let mut next = *line;
            next[i] = OWN;
            if is_five(&next, rule) {
                completions[n] = i;
                n += 1;
            }
        }
    }
    let straight = (0..n).any(|a| {
        (a + 1..n).any(|b| {
            let (lo, hi) = (completions[a], completions[b]);
            hi - lo == 5 && (lo + 1..hi).all(|j| line[j] == OWN)
        })
    });
    (n, straight)
}

fn build_table(rule: FiveRule) -> Box<PatternTable> {
    const UNSET: u8 = u8::MAX;
    let size = 1usize << KEY_BITS;
    let mut memo = vec![UNSET; size];
    // Keys with more own stones are classified first by the recursion; an explicit stack keeps it
    // iterative-safe (the depth is at most 10 anyway).
    fn classify(key: u32, rule: FiveRule, memo: &mut [u8]) -> Pattern {
        let cached = memo[key as usize];
        if cached != u8::MAX {
            return Pattern::ALL[cached as usize];
        }
        let line = line_of(key);
        let (len, _, _) = run_through_centre(&line);
        let pattern = if is_five(&line, rule) {
            Pattern::Five
        } else if len >= 6 && rule != FiveRule::AtLeast {
            Pattern::Overline
        } else {
            let (fours, straight) = four_shape(&line, rule);
            let counted = fours - usize::from(straight);
            if fours == 2 && straight {
                Pattern::Flex4
            } else if counted >= 2 {
                Pattern::DoubleFour
            } else if fours == 1 {
                Pattern::Block4
            } else {
                // No four yet: rank by the best thing one more own stone on this line makes.
                let mut best = Pattern::Dead;
                for i in 0..11 {
                    if line[i] == EMPTY {
                        let mut next = line;
                        next[i] = OWN;
                        let lifted = match classify(key_of(&next), rule, memo) {
                            Pattern::Flex4 => Pattern::Flex3,
                            Pattern::Block4 | Pattern::DoubleFour => Pattern::Block3,
                            Pattern::Flex3 => Pattern::Flex2,
                            Pattern::Block3 => Pattern::Block2,
                            Pattern::Flex2 => Pattern::Flex1,
                            Pattern::Block2 => Pattern::Block1,
                            _ => Pattern::Dead,
                        };
                        best = best.max(lifted);
                    }
                }
                best
            }
        };
        memo[key as usize] = pattern as u8;
        pattern
    }
    for key in 0..size as u32 {
        classify(key, rule, &mut memo);
    }
    memo.into_iter()
        .map(|code| Pattern::ALL[code as usize])
        .collect()
}

/// The four line patterns of one cell for one colour, summarised for evaluation and search.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct CellThreats {
    pub patterns: [Pattern; 4],
}

impl CellThreats {
    #[inline]
    pub fn count(&self, p: Pattern) -> usize {
        self.patterns.iter().filter(|&&q| q == p).count()
    }
    #[inline]
    pub fn makes_five(&self) -> bool {
        self.patterns.contains(&Pattern::Five)
    }
    /// Fours made (a straight four counts once, an in-line double four twice).
    #[inline]
    pub fn fours(&self) -> u8 {
        self.patterns.iter().map(|p| p.four_count()).sum()
    }
    /// A four the opponent cannot stop with one stone: a straight four or two fours.
    #[inline]
    pub fn unstoppable_four(&self) -> bool {
        self.fours() >= 2 || self.patterns.contains(&Pattern::Flex4)
    }
    #[inline]
    pub fn best(&self) -> Pattern {
        self.patterns.iter().copied().max().unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn classify_str(s: &str, rule: FiveRule) -> Pattern {
        // `s` is 11 chars: X own (centre must be '*'), O opp, # wall, . empty.
        let mut line = [EMPTY; 11];
        for (i, c) in s.chars().enumerate() {
            line[i] = match c {
                'X' | '*' => OWN,
                'O' => OPP,
                '#' => WALL,
                _ => EMPTY,
            };
        }
        assert_eq!(s.chars().nth(5), Some('*'));
        table(rule)[key_of(&line) as usize]
    }

    #[test]
    fn swap_colors_swaps_only_stones() {
        let key = (EMPTY) | (OWN << 2) | (OPP << 4) | (WALL << 6);
        let swapped = swap_colors(key);
        assert_eq!(swapped, (EMPTY) | (OPP << 2) | (OWN << 4) | (WALL << 6));
        assert_eq!(swap_colors(swapped), key);
    }

    #[test]
    fn pair_table_packs_both_colours() {
        for (black, white) in [
            (FiveRule::AtLeast, FiveRule::AtLeast),
            (FiveRule::Exact, FiveRule::Exact),
            (FiveRule::Exact, FiveRule::AtLeast),
            (FiveRule::Caro, FiveRule::Caro),
        ] {
            let (pairs, b, w) = (pair_table(black, white), table(black), table(white));
            for key in 0..1u32 << KEY_BITS {
                let want = [b[key as usize], w[swap_colors(key) as usize]];
                assert_eq!(
                    pair_pattern(pairs[key as usize]),
                    want,
                    "key {key:#x} {black:?}/{white:?}"
                );
            }
        }
    }

    #[test]
    fn basic_shapes() {
        use Pattern::*;
        let cases = [
            ("...XX*XX...", FiveRule::AtLeast, Five),
            ("..XXX*XX...", FiveRule::AtLeast, Five),
            ("..XXX*XX...", FiveRule::Exact, Overline),
            ("....X*XX...", FiveRule::Exact, Flex4),
            ("...OX*XX...", FiveRule::Exact, Block4),
            ("..X.X*X.X..", FiveRule::Exact, DoubleFour),
            (".....*XX...", FiveRule::Exact, Flex3),
            ("....O*XX...", FiveRule::Exact, Block3),
            (".....*X.X..", FiveRule::Exact, Flex3),
            (".....*X....", FiveRule::Exact, Flex2),
            (".....*.....", FiveRule::Exact, Flex1),
            ("#OOOO*OOOO#", FiveRule::Exact, Dead),
            // X.XXXX: the left completion would make six: only one four under exact five.
            (".X.XX*X....", FiveRule::Exact, Block4),
            (".X.XX*X....", FiveRule::AtLeast, Flex4),
            // Caro: five blocked at both ends is no win.
            ("...OX*XXXO.", FiveRule::Caro, Dead),
            ("...OX*XXX..", FiveRule::Caro, Five),
        ];
        for (s, rule, want) in cases {
            assert_eq!(classify_str(s, rule), want, "{s} under {rule:?}");
        }
    }
}
