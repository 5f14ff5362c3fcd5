//! Memory of an engine's process tree from Linux /proc, the way GomocupJudge measures it:
//! summed private memory (Private_Clean + Private_Dirty + Private_Hugetlb of smaps_rollup) of the
//! process and all its descendants. Also VmHWM (peak RSS) of one process.
//!
//! Read-only /proc parsing; depends on std only. Elsewhere than Linux every reading is `None`.

use std::fs;

/// Summed private bytes of `pid` and its descendants; `None` once `pid` is gone.
pub fn tree_private_bytes(pid: u32) -> Option<u64> {
    let mut total = private_bytes(pid)?;
    let mut stack = children(pid);
    let mut seen = 0;
    // Bounded walk: a fork bomb must not stall the sampler.
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > 4096 {
            break;
        }
        total += private_bytes(p).unwrap_or(0);
        stack.extend(children(p));
    }
    Some(total)
}

fn private_bytes(pid: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    Some(
        text.lines()
            .filter(|l| l.starts_with("Private_"))
            .filter_map(kib_field)
            .sum::<u64>(),
    )
}

/// Direct children of every thread of `pid` (needs CONFIG_PROC_CHILDREN, standard on distros).
fn children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return vec![];
    };
    let mut out = vec![];
    for t in tasks.flatten() {
        if let Ok(text) = fs::read_to_string(t.path().join("children")) {
            out.extend(
                text.split_whitespace()
                    .filter_map(|s| s.parse::<u32>().ok()),
            );
        }
    }
    out.sort_unstable();
    out.dedup();
    out
}

/// Peak resident set size (VmHWM) of one process, bytes.
pub fn vm_hwm_bytes(pid: u32) -> Option<u64> {
    let text = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    text.lines()
        .find(|l| l.starts_with("VmHWM:"))
        .and_then(kib_field)
}

/// `Key:   1234 kB` → 1234 * 1024.
fn kib_field(line: &str) -> Option<u64> {
    let mut it = line.split_whitespace().skip(1);
    let v: u64 = it.next()?.parse().ok()?;
    Some(v * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_own_process() {
        if !std::path::Path::new("/proc/self/smaps_rollup").exists() {
            return;
        }
        let me = std::process::id();
        let private = tree_private_bytes(me).unwrap();
        assert!(private > 100 * 1024, "{private}");
        assert!(vm_hwm_bytes(me).unwrap() > 0);
        assert_eq!(kib_field("Private_Dirty:     12 kB"), Some(12 * 1024));
        assert!(tree_private_bytes(u32::MAX - 1).is_none());
    }
}
