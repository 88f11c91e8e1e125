//! What Linux alone offers a run: transparent huge pages for the heap ([`advise_heap_huge_pages`]).
//!
//! mimalloc reserves its arena (the address range every thread's segments come from) with one mapping
//! before `main` runs. A `check` over a thousand files grows the heap to tens of MiB within a few dozen
//! milliseconds, one 4 KiB page fault at a time: about 6% of the run's CPU on the benchmark corpus. Where
//! the system leaves huge pages to the program's advice (`madvise` in
//! `/sys/kernel/mm/transparent_hugepage/enabled`, the usual default), advising the arena's mapping
//! `MADV_HUGEPAGE` has the kernel fault in 2 MiB at a time. The price is memory: the heap is held in
//! 2 MiB pages, about 20 MiB more at the peak of a run, whatever its size. So only the commands that end
//! when their work is done ask for it; the servers (`exec --watch`, the webhook, the language server)
//! keep 4 KiB pages, as mimalloc is built without its own huge-page advice (`no_thp`).

/// Advises the mapping that holds the heap `MADV_HUGEPAGE`. Best effort: where the mapping cannot be
/// found or the kernel refuses the advice, the heap stays in small pages and nothing else changes.
pub fn advise_heap_huge_pages() {
    let probe = Box::new(0u64);
    let address = std::ptr::from_ref::<u64>(&probe) as usize;
    let Ok(maps) = std::fs::read_to_string("/proc/self/maps") else { return };
    let Some((start, end)) = mapping_holding(&maps, address) else { return };
    // SAFETY: the range is one whole mapping of this process, as the kernel listed it; `MADV_HUGEPAGE`
    // changes how later faults in it are served, never its contents or its protection.
    unsafe {
        libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE);
    }
}

/// The bounds of the mapping of `/proc/self/maps` (`start-end perms ...` per line, in hexadecimal) that
/// holds `address`.
fn mapping_holding(maps: &str, address: usize) -> Option<(usize, usize)> {
    maps.lines().find_map(|line| {
        let range = line.split_ascii_whitespace().next()?;
        let (start, end) = range.split_once('-')?;
        let start = usize::from_str_radix(start, 16).ok()?;
        let end = usize::from_str_radix(end, 16).ok()?;
        (start <= address && address < end).then_some((start, end))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_mapping_holding_an_address_is_found_by_its_bounds() {
        let maps = "\
55d0c0a00000-55d0c0a2c000 r--p 00000000 fe:00 326279 /usr/bin/capslint
2b67a000000-2b6ba000000 rw-p 00000000 00:00 0
7ffd01000000-7ffd01021000 rw-p 00000000 00:00 0 [stack]
";
        assert_eq!(mapping_holding(maps, 0x2b67a000000), Some((0x2b67a000000, 0x2b6ba000000)));
        assert_eq!(mapping_holding(maps, 0x2b6b9ffffff), Some((0x2b67a000000, 0x2b6ba000000)));
        assert_eq!(mapping_holding(maps, 0x2b6ba000000), None, "the end is outside the mapping");
        assert_eq!(mapping_holding(maps, 0x1000), None);
        assert_eq!(mapping_holding("not a maps line\n", 0x1000), None);
    }

    /// The advice reaches the kernel: `/proc/self/smaps` lists the heap's mapping with the `hg` flag
    /// (`MADV_HUGEPAGE`), whatever the system's huge-page setting.
    #[test]
    fn the_heap_s_mapping_is_advised_huge_pages() {
        advise_heap_huge_pages();
        let probe = Box::new(0u64);
        let address = std::ptr::from_ref::<u64>(&probe) as usize;
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut in_heap = false;
        let mut flags = None;
        for line in smaps.lines() {
            if let Some(range) = line.split_ascii_whitespace().next().filter(|word| word.contains('-')) {
                in_heap = mapping_holding(range, address).is_some();
                continue;
            }
            if in_heap && let Some(listed) = line.strip_prefix("VmFlags:") {
                flags = Some(listed.split_ascii_whitespace().map(str::to_owned).collect::<Vec<_>>());
            }
        }
        let flags = flags.expect("the heap's mapping is listed with its flags");
        assert!(flags.iter().any(|flag| flag == "hg"), "flags of the heap's mapping: {flags:?}");
    }
}
