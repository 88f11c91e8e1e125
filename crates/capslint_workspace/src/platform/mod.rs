//! What differs between operating systems when a file is opened, told apart from another or rewritten,
//! behind one interface: `unix.rs` where the unix API is (Linux, macOS, the BSDs), `portable.rs`
//! elsewhere (Windows). The portable implementation needs the standard library alone, so the tests build
//! and run it here too.
//!
//! Each item of one has a twin of the same signature in the other; the rest of the crate names no
//! operating system.

#[cfg(any(not(unix), test))]
mod portable;
#[cfg(unix)]
mod unix;

#[cfg(unix)]
pub use unix::{
    FileId, SYSTEM_TREES, create_private, file_id, has_other_names, keep_identity, may_rewrite, open_read, open_write,
    read_into_spare, same_path,
};

#[cfg(not(unix))]
pub use portable::{
    FileId, SYSTEM_TREES, create_private, file_id, has_other_names, keep_identity, may_rewrite, open_read, open_write,
    read_into_spare, same_path,
};
