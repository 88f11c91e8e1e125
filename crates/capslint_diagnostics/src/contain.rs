//! Internal errors contained: a panic while checking one file, one render or one object becomes that
//! file's, render's or object's CAP001 finding instead of ending the run.

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Runs `work`, turning a panic into its message: how the cross-file phase keeps an internal error in one
/// render or one object to that render or object.
pub fn contained<T>(work: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(work)).map_err(|panic| panic_reason(&*panic))
}

/// The message of a caught panic, or "unknown panic".
pub fn panic_reason(panic: &(dyn std::any::Any + Send)) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|text| (*text).to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn contained_work_returns_its_value_or_the_panic_message() {
        assert_eq!(contained(|| 7), Ok(7));
        assert_eq!(
            contained(|| -> u8 { panic!("byte index 9 is out of bounds") }),
            Err("byte index 9 is out of bounds".into())
        );
        let owned = String::from("owned message");
        assert_eq!(contained(|| -> u8 { std::panic::panic_any(owned) }), Err("owned message".into()));
    }
}
