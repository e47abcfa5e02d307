//! Optimal assignment between expected items and actual items.
//!
//! Calls made in one turn, and elements of unordered lists, match as a multiset: the
//! order the model chose does not matter, and a greedy pairing can fail an answer that
//! an optimal one passes. We solve the assignment with the Hungarian algorithm
//! (`pathfinding::kuhn_munkres`) on a square matrix padded with zero weights.

use pathfinding::kuhn_munkres::kuhn_munkres;
use pathfinding::matrix::Matrix;

/// For each left item, the right item it is paired with, maximising the total weight.
///
/// Pairs of weight 0 are reported as unpaired (`None`), so a weight of 0 means "these
/// two can not be paired".
pub fn best_assignment(
    left: usize,
    right: usize,
    mut weight: impl FnMut(usize, usize) -> i64,
) -> Vec<Option<usize>> {
    let n = left.max(right);
    if left == 0 || right == 0 {
        return vec![None; left];
    }
    if left == 1 {
        // One expected item (the common case): the best right item, no matrix needed.
        let best = (0..right)
            .map(|j| (weight(0, j), j))
            .filter(|(w, _)| *w > 0)
            .max_by_key(|(w, j)| (*w, std::cmp::Reverse(*j)));
        return vec![best.map(|(_, j)| j)];
    }
    let matrix = Matrix::from_fn(n, n, |(i, j)| {
        if i < left && j < right {
            weight(i, j).max(0)
        } else {
            0
        }
    });
    let (_, cols) = kuhn_munkres(&matrix);
    (0..left)
        .map(|i| {
            let j = cols[i];
            (j < right && matrix[(i, j)] > 0).then_some(j)
        })
        .collect()
}

/// A maximum matching: pairs left `i` with right `j` only where `fits(i, j)`.
pub fn max_matching(
    left: usize,
    right: usize,
    mut fits: impl FnMut(usize, usize) -> bool,
) -> Vec<Option<usize>> {
    best_assignment(left, right, |i, j| i64::from(fits(i, j)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_matching_greedy_misses() {
        // left 0 fits both, left 1 fits only right 0: greedy takes (0,0) and strands 1.
        let fits = [[true, true], [true, false]];
        let m = max_matching(2, 2, |i, j| fits[i][j]);
        assert_eq!(m, vec![Some(1), Some(0)]);
    }

    #[test]
    fn unequal_sizes_and_no_fit() {
        assert_eq!(
            max_matching(2, 3, |i, j| j == i + 1),
            vec![Some(1), Some(2)]
        );
        assert_eq!(max_matching(3, 1, |i, _| i == 2), vec![None, None, Some(0)]);
        assert_eq!(max_matching(2, 2, |_, _| false), vec![None, None]);
        assert_eq!(max_matching(0, 2, |_, _| true), Vec::<Option<usize>>::new());
        assert_eq!(max_matching(2, 0, |_, _| true), vec![None, None]);
    }

    #[test]
    fn weights_prefer_the_heavier_total() {
        let w = [[3, 2], [3, 0]];
        assert_eq!(
            best_assignment(2, 2, |i, j| w[i][j]),
            vec![Some(1), Some(0)]
        );
    }
}
