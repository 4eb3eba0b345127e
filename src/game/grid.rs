//! The 3x3 board kit shared by all three games: a board is a 9-bit mask
//! (bit i = cell i, row-major), with table lookups for lines, counts and
//! cell lists on the playout hot paths, and the 8 symmetries of the square.

/// The eight lines of a 3x3 board as bit masks (bit i = cell i, row-major).
pub(crate) const LINES: [u16; 8] = [
    0b000_000_111,
    0b000_111_000,
    0b111_000_000,
    0b001_001_001,
    0b010_010_010,
    0b100_100_100,
    0b100_010_001,
    0b001_010_100,
];

/// All nine cells.
pub const FULL: u16 = 0x1ff;

/// `LINE_TABLE[m]`: whether the 9-bit mask `m` holds a line. A table lookup
/// is the fastest test on the playout hot paths of all three games.
static LINE_TABLE: [bool; 512] = line_table();

const fn line_table() -> [bool; 512] {
    let mut t = [false; 512];
    let mut m = 0;
    while m < 512 {
        let mut k = 0;
        while k < 8 {
            if m as u16 & LINES[k] == LINES[k] {
                t[m] = true;
            }
            k += 1;
        }
        m += 1;
    }
    t
}

/// Whether the cells in `bits` contain a complete line.
#[inline(always)]
pub(crate) fn has_line(bits: u16) -> bool {
    LINE_TABLE[(bits & FULL) as usize]
}

/// The cells of the first complete line in `bits` (in [`LINES`] order),
/// lowest cell first; empty when there is none.
pub(crate) fn line_cells(bits: u16) -> Vec<u8> {
    LINES
        .iter()
        .find(|&&l| bits & l == l)
        .map(|&l| (0..9u8).filter(|&i| l & (1 << i) != 0).collect())
        .unwrap_or_default()
}

/// Cells that would complete a line for `own` if taken, among `empty` cells.
#[inline]
pub(crate) fn winning_cells(own: u16, empty: u16) -> u16 {
    let mut out = 0;
    for line in LINES {
        let missing = line & !own;
        if missing.count_ones() == 1 && missing & empty != 0 {
            out |= missing;
        }
    }
    out
}

/// `NTH_BIT[m][n]`: the index of the `n`-th set bit of the 9-bit mask `m`,
/// so that picking a random empty cell is one lookup on the playout paths.
static NTH_BIT: [[u8; 9]; 512] = nth_bit_table();

const fn nth_bit_table() -> [[u8; 9]; 512] {
    let mut t = [[0u8; 9]; 512];
    let mut m = 0;
    while m < 512 {
        let mut n = 0;
        let mut i = 0;
        while i < 9 {
            if m & (1 << i) != 0 {
                t[m][n] = i as u8;
                n += 1;
            }
            i += 1;
        }
        m += 1;
    }
    t
}

/// Index of the `n`-th set bit of `bits` (n counted from 0).
#[inline]
pub(crate) fn nth_set_bit(mut bits: u32, n: u32) -> u32 {
    if bits < 512 && n < 9 {
        return NTH_BIT[bits as usize][n as usize] as u32;
    }
    for _ in 0..n {
        bits &= bits - 1;
    }
    bits.trailing_zeros()
}

/// `NTH_MASK[m][n]`: the `n`-th set bit of the 9-bit mask `m` as a mask,
/// so that a playout step is one load and no shift on its critical path.
/// Rows are 16 wide so that indexing needs neither a bounds check nor a
/// division; entries past the mask's count are 0.
static NTH_MASK: [[u16; 16]; 512] = nth_mask_table();

const fn nth_mask_table() -> [[u16; 16]; 512] {
    let mut t = [[0u16; 16]; 512];
    let mut m = 0;
    while m < 512 {
        let mut n = 0;
        while n < (m as u32).count_ones() as usize {
            t[m][n] = 1 << NTH_BIT[m][n];
            n += 1;
        }
        m += 1;
    }
    t
}

/// `COUNT9[m]`: the number of set bits of the 9-bit mask `m` (a lookup is
/// faster than `count_ones` on CPUs where the build cannot assume `popcnt`).
static COUNT9: [u8; 512] = count9_table();

const fn count9_table() -> [u8; 512] {
    let mut t = [0u8; 512];
    let mut m = 0;
    while m < 512 {
        t[m] = (m as u32).count_ones() as u8;
        m += 1;
    }
    t
}

/// `CELL_LIST[m]`: the number of set bits of the 9-bit mask `m` in bits
/// 0..4, then the index of each set bit, lowest first, 4 bits each, and `m`
/// itself in bits 48..57. One load gives the count, the n-th cell and the
/// mask, which keeps a playout step short.
static CELL_LIST: [u64; 512] = cell_list_table();

const fn cell_list_table() -> [u64; 512] {
    let mut t = [0u64; 512];
    let mut m = 0;
    while m < 512 {
        let mut packed = 0u64;
        let mut n = 0;
        let mut i = 0;
        while i < 9 {
            if m & (1 << i) != 0 {
                packed |= (i as u64) << (4 + 4 * n);
                n += 1;
            }
            i += 1;
        }
        t[m] = packed | n as u64 | (m as u64) << 48;
        m += 1;
    }
    t
}

/// The packed count and cell list of a 9-bit mask (see `CELL_LIST`):
/// `list & 15` is the count, `(list >> (4 + 4 * n)) & 15` the n-th cell,
/// `list >> 48` the mask.
#[inline(always)]
pub(crate) fn cell_list(bits: u16) -> u64 {
    CELL_LIST[(bits & FULL) as usize]
}

/// The number of set bits of a 9-bit mask.
#[inline(always)]
pub(crate) fn count9(bits: u16) -> u32 {
    COUNT9[(bits & FULL) as usize] as u32
}

/// The `n`-th set bit (from 0) of a 9-bit mask, as a mask; 0 when `n` is
/// not below the number of set bits.
#[inline(always)]
pub(crate) fn nth_bit_mask(bits: u16, n: u32) -> u16 {
    if n > 15 {
        return 0;
    }
    NTH_MASK[(bits & FULL) as usize][(n & 15) as usize]
}

/// The images of each cell under the 8 symmetries of the square:
/// `SYMMETRIES[k][c]` is where symmetry `k` takes cell `c` (0 is the identity).
pub(crate) const SYMMETRIES: [[u8; 9]; 8] = [
    [0, 1, 2, 3, 4, 5, 6, 7, 8],
    [2, 5, 8, 1, 4, 7, 0, 3, 6],
    [8, 7, 6, 5, 4, 3, 2, 1, 0],
    [6, 3, 0, 7, 4, 1, 8, 5, 2],
    [2, 1, 0, 5, 4, 3, 8, 7, 6],
    [6, 7, 8, 3, 4, 5, 0, 1, 2],
    [0, 3, 6, 1, 4, 7, 2, 5, 8],
    [8, 5, 2, 7, 4, 1, 6, 3, 0],
];

/// Maps a 9-bit cell mask through a symmetry table.
pub(crate) fn map_bits(bits: u16, sym: &[u8; 9]) -> u16 {
    let mut out = 0;
    for (i, &t) in sym.iter().enumerate() {
        if bits & (1 << i) != 0 {
            out |= 1 << t;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetries_are_permutations() {
        for s in SYMMETRIES {
            let mut seen = [false; 9];
            for c in s {
                seen[c as usize] = true;
            }
            assert!(seen.iter().all(|&b| b));
            for line in LINES {
                assert!(LINES.contains(&map_bits(line, &s)));
            }
        }
    }

    #[test]
    fn lines_and_winning_cells() {
        assert!(has_line(0b000_000_111));
        assert!(!has_line(0b000_000_011));
        // X on 0 and 1 with 2 empty: 2 wins; with 2 taken: nothing.
        assert_eq!(winning_cells(0b011, FULL & !0b011), 0b100);
        assert_eq!(winning_cells(0b011, FULL & !0b111), 0);
    }
}
