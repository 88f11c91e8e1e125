//! The global allocator: mimalloc, called through its plain entry points wherever they already give the
//! alignment a layout asks for.
//!
//! The `mimalloc` crate's allocator sends every request through `mi_malloc_aligned`, whose extra checks
//! cost about twenty instructions per call before it reaches the same free list; the parser makes
//! close to a million small allocations on a large repository. mimalloc itself serves an aligned request
//! with plain `mi_malloc` when the alignment is at most `MI_MAX_ALIGN_SIZE` and at most the size
//! (`mi_malloc_is_naturally_aligned` in `alloc-aligned.c`: every block is aligned to its size class up
//! to that bound); [`fits_plain_allocation`] is that test. Any other layout keeps the aligned calls.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc, mi_zalloc_aligned,
};

/// mimalloc's `MI_MAX_ALIGN_SIZE` on 64-bit targets: the alignment every block of at least that size has.
const MI_MAX_ALIGN_SIZE: usize = 16;

/// mimalloc, through its plain calls for the layouts they already align.
pub struct Mimalloc;

/// Whether a block of `size` bytes from plain `mi_malloc` is aligned to `align` (a power of two).
fn fits_plain_allocation(size: usize, align: usize) -> bool {
    align <= MI_MAX_ALIGN_SIZE && align <= size
}

// SAFETY: every call forwards to mimalloc with the layout's size, and with its alignment unless
// `fits_plain_allocation` holds, where mimalloc guarantees that alignment for the plain call (see the
// module docs). Blocks from either path are freed and reallocated by the same heap.
unsafe impl GlobalAlloc for Mimalloc {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: a plain or aligned allocation of the layout's size, as above.
        unsafe {
            if fits_plain_allocation(layout.size(), layout.align()) {
                mi_malloc(layout.size()).cast()
            } else {
                mi_malloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as in `alloc`, zeroed.
        unsafe {
            if fits_plain_allocation(layout.size(), layout.align()) {
                mi_zalloc(layout.size()).cast()
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()).cast()
            }
        }
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: `ptr` came from this allocator, so from mimalloc.
        unsafe { mi_free(ptr.cast::<c_void>()) }
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from mimalloc; the new block is aligned as `alloc` aligns one of `new_size`.
        unsafe {
            if fits_plain_allocation(new_size, layout.align()) {
                mi_realloc(ptr.cast::<c_void>(), new_size).cast()
            } else {
                mi_realloc_aligned(ptr.cast::<c_void>(), new_size, layout.align()).cast()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Allocates, grows and frees blocks of every small size at each alignment up to 64 bytes, through
    /// both paths, and checks each address.
    #[test]
    fn every_block_has_the_alignment_its_layout_asks_for() {
        let mut blocks = Vec::new();
        for align in [1, 2, 4, 8, 16, 32, 64] {
            for size in 1..=600 {
                let layout = Layout::from_size_align(size, align).unwrap();
                // SAFETY: a non-zero-sized layout; each block is checked, written and freed once.
                unsafe {
                    let block = if size % 2 == 0 { Mimalloc.alloc(layout) } else { Mimalloc.alloc_zeroed(layout) };
                    assert!(!block.is_null());
                    assert_eq!(block as usize % align, 0, "size {size}, align {align}");
                    block.write_bytes(0xAB, size);
                    let grown = Mimalloc.realloc(block, layout, size * 3);
                    assert_eq!(grown as usize % align, 0, "grown from size {size}, align {align}");
                    assert_eq!(*grown.add(size - 1), 0xAB);
                    blocks.push((grown, Layout::from_size_align(size * 3, align).unwrap()));
                }
            }
        }
        for (block, layout) in blocks {
            // SAFETY: each block was allocated above and is freed once.
            unsafe { Mimalloc.dealloc(block, layout) }
        }
    }

    #[test]
    fn plain_allocation_is_used_only_within_mimalloc_s_guarantee() {
        assert!(fits_plain_allocation(8, 8));
        assert!(fits_plain_allocation(24, 8));
        assert!(fits_plain_allocation(16, 16));
        assert!(!fits_plain_allocation(8, 16), "a block smaller than its alignment");
        assert!(!fits_plain_allocation(64, 32), "an alignment above 16 bytes");
    }
}
