//! Which manager replica runs an object when `kudo-manager --shards N` shares the work: the
//! object's shard is a stable hash of its namespace and name ([`of`]), and the replica holding
//! the Lease of that shard ([`lease_name`]) runs it. The same function places Instances and
//! Rollouts, in the manager, in `kudo` and in the tests: one truth for "who runs this".
//!
//! The hash is the first 8 bytes of SHA-256 over `namespace/name`, taken modulo the count: the
//! same in every build and on every platform (a standard library hasher may change between
//! Rust releases), and spread evenly enough that 3 shards of 60 Instances hold 20 ± 6 each.

use sha2::{Digest, Sha256};

/// The shard (`0..count`) of the object `namespace/name`; 0 when `count` is 0 or 1.
pub fn of(namespace: &str, name: &str, count: u32) -> u32 {
    if count <= 1 {
        return 0;
    }
    let digest = Sha256::new()
        .chain_update(namespace.as_bytes())
        .chain_update(b"/")
        .chain_update(name.as_bytes())
        .finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    // The remainder is below `count`, a u32.
    u32::try_from(u64::from_be_bytes(first) % u64::from(count)).unwrap_or(0)
}

/// The Lease a replica holds while it runs shard `index` of `count`: `BASE-shard-INDEX-of-COUNT`.
/// The count is in the name so that replicas started with different `--shards` never hold
/// the same Lease for different sets of objects, and each sees the other's ([`parse`]).
pub fn lease_name(base: &str, index: u32, count: u32) -> String {
    format!("{base}-shard-{index}-of-{count}")
}

/// The shard index and count of a Lease named by [`lease_name`] with `base`; `None` for any
/// other Lease.
pub fn parse(base: &str, lease: &str) -> Option<(u32, u32)> {
    let rest = lease.strip_prefix(base)?.strip_prefix("-shard-")?;
    let (index, count) = rest.split_once("-of-")?;
    let (index, count) = (index.parse().ok()?, count.parse().ok()?);
    (index < count).then_some((index, count))
}

/// The Lease each replica of a sharded manager holds while it runs (whatever shards it holds):
/// how the replicas count each other to share the shards evenly. `BASE-replica-IDENTITY`,
/// the identity cut to what a Lease name may hold.
pub fn member_lease_name(base: &str, identity: &str) -> String {
    let safe: String = identity
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    let name = format!("{base}-replica-{safe}");
    let cut: String = name.chars().take(253).collect();
    cut.trim_end_matches(['-', '.']).to_string()
}

/// The identity part of a member Lease named by [`member_lease_name`] with `base`.
pub fn parse_member<'a>(base: &str, lease: &'a str) -> Option<&'a str> {
    lease.strip_prefix(base)?.strip_prefix("-replica-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shard_is_stable_and_spread() {
        // Pinned: a change of hash would move every Instance of a running fleet.
        assert_eq!(of("default", "zk", 3), of("default", "zk", 3));
        assert_eq!(of("a", "b", 1), 0);
        assert_eq!(of("a", "b", 0), 0);
        let pinned: Vec<u32> = (0..8).map(|i| of("ns", &format!("i{i}"), 3)).collect();
        assert_eq!(pinned, PINNED);
        let mut per = [0u32; 3];
        for i in 0..600 {
            per[of("fleet", &format!("i{i:03}"), 3) as usize] += 1;
        }
        assert!(per.iter().all(|&n| (150..=250).contains(&n)), "{per:?}");
        // The namespace counts: `a/bc` and `ab/c` are different objects.
        assert_ne!(
            (0..16).map(|n| of("a", "bc", n + 2)).collect::<Vec<_>>(),
            (0..16).map(|n| of("ab", "c", n + 2)).collect::<Vec<_>>()
        );
    }

    /// Computed apart from this code: `int.from_bytes(sha256(b"ns/iN").digest()[:8], "big") % 3` in Python.
    const PINNED: [u32; 8] = [2, 2, 2, 0, 0, 0, 2, 2];

    #[test]
    fn lease_names_read_back() {
        let name = lease_name("kudo-manager", 2, 3);
        assert_eq!(name, "kudo-manager-shard-2-of-3");
        assert_eq!(parse("kudo-manager", &name), Some((2, 3)));
        assert_eq!(parse("kudo-manager", "kudo-manager"), None);
        assert_eq!(parse("kudo-manager", "kudo-manager-shard-3-of-3"), None);
        assert_eq!(parse("kudo-manager", "other-shard-0-of-3"), None);
        let member = member_lease_name("kudo-manager", "Pod_A.1");
        assert_eq!(member, "kudo-manager-replica-pod-a.1");
        assert_eq!(parse_member("kudo-manager", &member), Some("pod-a.1"));
        assert_eq!(parse_member("kudo-manager", &name), None);
    }
}
