//! Which pool tools a case gets at each count: a seeded order per case, of which a
//! trial at count N takes the first N.
//!
//! Each pool tool gets a rank, a 64-bit hash of (seed, case id, tool name), and a case's
//! order is its pool sorted by rank. So the choice is the same on every machine and in
//! every toolgauge build (the hash is spelled out here, not a library's unstable one),
//! it does not depend on where a tool sits in the pool file, and the tools at N=10 are
//! the first ten of those at N=50: curves over N compare like with like.

use std::collections::{BinaryHeap, HashSet};

use crate::chat::ToolDefinition;

/// FNV-1a over the bytes, then the splitmix64 finaliser so nearby inputs spread over
/// the whole range (FNV alone keeps short inputs' high bits alike).
fn mix(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for b in *p {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        // A separator, so ("ab", "c") and ("a", "bc") hash apart.
        h ^= 0xff;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h = (h ^ (h >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    h = (h ^ (h >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    h ^ (h >> 31)
}

/// The seeded rank of pool tool `tool` for case `case_id`: lower comes first.
pub fn rank(seed: u64, case_id: &str, tool: &str) -> u64 {
    mix(&[&seed.to_le_bytes(), case_id.as_bytes(), tool.as_bytes()])
}

/// A number in [0, 1) from the same hash, for seeded choices elsewhere (the scripted
/// model's simulated confusion).
pub fn unit(seed: u64, parts: &[&str]) -> f64 {
    let mut bytes: Vec<&[u8]> = vec![&[]];
    let s = seed.to_le_bytes();
    bytes[0] = &s;
    bytes.extend(parts.iter().map(|p| p.as_bytes()));
    (mix(&bytes) >> 11) as f64 / (1u64 << 53) as f64
}

/// The first `k` tools of case `case_id`'s seeded order over `pool`, as indices into
/// `pool`, skipping the tools whose names are in `offered` (the case's own tools: a
/// request may not offer two tools of one name, and the expected tool must stay the
/// case's). Fewer than `k` when the pool has fewer usable tools.
///
/// Cost: one hash per pool tool and a heap of `k`, so a 10,000-tool pool stays cheap
/// per case.
pub fn first_k(
    pool: &[ToolDefinition],
    seed: u64,
    case_id: &str,
    offered: &HashSet<&str>,
    k: usize,
) -> Vec<u32> {
    if k == 0 {
        return Vec::new();
    }
    // A max-heap of the k lowest (rank, index) seen so far.
    let mut heap: BinaryHeap<(u64, u32)> = BinaryHeap::with_capacity(k + 1);
    for (i, t) in pool.iter().enumerate() {
        if offered.contains(t.name.as_str()) {
            continue;
        }
        let r = (rank(seed, case_id, &t.name), i as u32);
        if heap.len() < k {
            heap.push(r);
        } else if heap.peek().is_some_and(|top| r < *top) {
            heap.pop();
            heap.push(r);
        }
    }
    let mut out = heap.into_sorted_vec();
    out.truncate(k);
    out.into_iter().map(|(_, i)| i).collect()
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::*;

    fn pool(n: usize) -> Vec<ToolDefinition> {
        (0..n)
            .map(|i| ToolDefinition {
                name: format!("tool_{i}"),
                description: String::new(),
                parameters: Arc::new(serde_json::json!({"type": "object"})),
            })
            .collect()
    }

    #[test]
    fn the_hash_is_pinned() {
        // Pinned so a change of the hash (which would change every suite's distractors)
        // cannot pass unnoticed. The values were computed from the definition above
        // (FNV-1a with a 0xff separator after each part, then splitmix64's finaliser)
        // by an independent implementation in Python.
        assert_eq!(rank(0, "a", "t"), 0xcfbb_1757_13d0_2177);
        assert_eq!(rank(7, "stock_apple", "get_news"), 0xb046_354b_d2ea_1f2b);
        assert_ne!(rank(0, "ab", "c"), rank(0, "a", "bc"));
    }

    #[test]
    fn clashing_names_are_skipped_and_short_pools_give_what_they_have() {
        let p = pool(5);
        let offered: HashSet<&str> = ["tool_2", "tool_4"].into_iter().collect();
        let got = first_k(&p, 7, "case", &offered, 10);
        let mut sorted = got.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, vec![0, 1, 3]);
    }

    proptest! {
        #[test]
        fn orders_are_nested_deterministic_and_sorted_by_rank(
            n in 0usize..200, small in 0usize..60, extra in 0usize..100, seed: u64, case in "[a-z]{1,8}"
        ) {
            let p = pool(n);
            let none = HashSet::new();
            let big = small + extra;
            let a = first_k(&p, seed, &case, &none, small);
            let b = first_k(&p, seed, &case, &none, big);
            prop_assert_eq!(a.len(), small.min(n));
            prop_assert_eq!(b.len(), big.min(n));
            // Nested: the first `small` of the larger pick are the smaller pick.
            prop_assert_eq!(&b[..a.len()], &a[..]);
            // Deterministic.
            prop_assert_eq!(first_k(&p, seed, &case, &none, big), b.clone());
            // In rank order, no tool twice.
            let ranks: Vec<u64> = b.iter().map(|&i| rank(seed, &case, &p[i as usize].name)).collect();
            prop_assert!(ranks.windows(2).all(|w| w[0] < w[1]));
            // The order does not depend on where tools sit in the pool.
            let mut rev = p.clone();
            rev.reverse();
            let names: Vec<&str> = b.iter().map(|&i| p[i as usize].name.as_str()).collect();
            let rev_names: Vec<&str> = first_k(&rev, seed, &case, &none, big).iter().map(|&i| rev[i as usize].name.as_str()).collect();
            prop_assert_eq!(names, rev_names);
        }
    }
}
