//! `--partition`: one of `n` stable slices of the selected cases, so a run can be split across
//! machines and its JSON reports merged (`conformance merge`).
//!
//! Two strategies, as nextest has:
//!
//! - `hash:k/n` (the default, also written `k/n`): a case belongs to slice
//!   `1 + (first 8 bytes of SHA-256(case id), big endian) mod n`. Its slice depends on its id
//!   only: adding, removing or filtering other cases never moves it.
//! - `count:k/n`: the selected cases in corpus order, dealt round-robin (the `i`-th selected
//!   case, counting from 0, belongs to slice `1 + i mod n`): even slices, but a case moves when
//!   the selection before it changes.

use std::fmt;
use std::str::FromStr;

use sha2::{Digest, Sha256};

/// How cases are dealt to slices.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PartitionStrategy {
    /// By a hash of the case id.
    Hash,
    /// Round-robin over the selected cases in corpus order.
    Count,
}

/// Slice `index` of `total` (both counted from 1).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Partition {
    /// How cases are dealt.
    pub strategy: PartitionStrategy,
    /// Which slice, from 1.
    pub index: u32,
    /// How many slices.
    pub total: u32,
}

/// A `--partition` value that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{0}` is not a partition: write `k/n`, `hash:k/n` or `count:k/n` with 1 <= k <= n")]
pub struct ParsePartitionError(String);

impl FromStr for Partition {
    type Err = ParsePartitionError;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let error = || ParsePartitionError(text.to_string());
        let (strategy, slice) = match text.split_once(':') {
            Some(("hash", rest)) => (PartitionStrategy::Hash, rest),
            Some(("count", rest)) => (PartitionStrategy::Count, rest),
            Some(_) => return Err(error()),
            None => (PartitionStrategy::Hash, text),
        };
        let (k, n) = slice.split_once('/').ok_or_else(error)?;
        let index: u32 = k.trim().parse().map_err(|_| error())?;
        let total: u32 = n.trim().parse().map_err(|_| error())?;
        if index == 0 || total == 0 || index > total {
            return Err(error());
        }
        Ok(Partition {
            strategy,
            index,
            total,
        })
    }
}

impl fmt::Display for Partition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let strategy = match self.strategy {
            PartitionStrategy::Hash => "hash",
            PartitionStrategy::Count => "count",
        };
        write!(f, "{strategy}:{}/{}", self.index, self.total)
    }
}

impl Partition {
    /// The prefix of the report filter that records a partition (`partition:hash:1/3`).
    pub const FILTER_PREFIX: &'static str = "partition:";

    /// The slice (from 1) of the case with this id, under [`PartitionStrategy::Hash`].
    pub fn hash_slice(case_id: &str, total: u32) -> u32 {
        let digest = Sha256::digest(case_id.as_bytes());
        let mut first = [0u8; 8];
        first.copy_from_slice(&digest[..8]);
        1 + (u64::from_be_bytes(first) % u64::from(total.max(1))) as u32
    }

    /// The items of this slice, in their order; `id` gives an item's case id.
    pub fn select<T>(&self, items: Vec<T>, id: impl Fn(&T) -> &str) -> Vec<T> {
        items
            .into_iter()
            .enumerate()
            .filter(|(position, item)| match self.strategy {
                PartitionStrategy::Hash => Self::hash_slice(id(item), self.total) == self.index,
                PartitionStrategy::Count => {
                    (*position as u64 % u64::from(self.total)) as u32 + 1 == self.index
                }
            })
            .map(|(_, item)| item)
            .collect()
    }

    /// The filter string a report records.
    pub fn as_filter(&self) -> String {
        format!("{}{self}", Self::FILTER_PREFIX)
    }

    /// The partition a report filter records, if it records one.
    pub fn from_filter(filter: &str) -> Option<Partition> {
        filter.strip_prefix(Self::FILTER_PREFIX)?.parse().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_strategies_and_the_short_form() {
        let p: Partition = "2/3".parse().unwrap();
        assert_eq!(p.strategy, PartitionStrategy::Hash);
        assert_eq!((p.index, p.total), (2, 3));
        assert_eq!(p.to_string(), "hash:2/3");
        let p: Partition = "count:3/3".parse().unwrap();
        assert_eq!(p.strategy, PartitionStrategy::Count);
        for bad in ["0/3", "4/3", "1/0", "x/3", "1-3", "mod:1/3", ""] {
            assert!(bad.parse::<Partition>().is_err(), "{bad}");
        }
    }

    #[test]
    fn the_slices_cover_every_case_exactly_once() {
        let ids: Vec<String> = (0..50).map(|i| format!("x.case.{i}")).collect();
        for strategy in ["hash", "count"] {
            let mut seen = Vec::new();
            for k in 1..=3 {
                let p: Partition = format!("{strategy}:{k}/3").parse().unwrap();
                let slice = p.select(ids.iter().collect(), |s| s.as_str());
                assert!(!slice.is_empty(), "{strategy} {k}");
                seen.extend(slice.into_iter().cloned());
            }
            seen.sort();
            let mut all = ids.clone();
            all.sort();
            assert_eq!(seen, all, "{strategy}");
        }
    }

    #[test]
    fn a_hash_slice_depends_on_the_case_id_only() {
        let p: Partition = "1/4".parse().unwrap();
        let few = p.select(vec!["a", "b", "c"], |s| s);
        let more = p.select(vec!["z", "a", "q", "b", "c", "k"], |s| s);
        for id in ["a", "b", "c"] {
            assert_eq!(few.contains(&id), more.contains(&id), "{id}");
        }
        assert_eq!(
            Partition::from_filter(&p.as_filter()),
            Some(p),
            "the report filter round-trips"
        );
    }
}
