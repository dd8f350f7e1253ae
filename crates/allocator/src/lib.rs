//! The process's allocator, and how long it keeps memory it no longer needs.
//!
//! mimalloc rather than the system allocator: a server's request paths allocate many
//! small, short-lived objects across threads, where glibc's malloc took about a fifth of
//! a table create's CPU; REST creates run 20-35% faster (BENCHMARKS.md, issue 11).
//!
//! mimalloc returns freed pages to the system only after a delay (a second, by default),
//! so a short batch command that allocates and frees as it goes peaks well above what it
//! holds at any moment. [`return_freed_memory_promptly`] ends that delay for such
//! commands (`check`, `plan`, `apply`; issue 39's memory target); a server keeps it.

/// The allocator a binary installs with `#[global_allocator]`.
pub use mimalloc::MiMalloc as Allocator;

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (include/mimalloc.h: the 16th
/// option, counting from `mi_option_show_errors` = 0). libmimalloc-sys names it only for
/// v2, where the number differs; the test below checks it against the library.
const PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// From now on, return freed memory to the system at once rather than after mimalloc's
/// delay: a lower peak for a command that frees as it goes, at the price of more
/// `madvise` calls. Meant for short batch commands, not a long-lived server.
#[allow(unsafe_code)]
pub fn return_freed_memory_promptly() {
    // SAFETY: `mi_option_set` takes an option number and a value, and only stores the
    // value in mimalloc's option table (an atomic store); it may be called at any time,
    // from any thread. `PURGE_DELAY` is a valid option number of the linked mimalloc
    // (checked by the test), and 0 is a documented value ("0 for immediate purging").
    unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, 0) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The option number is purge_delay's: its default is mimalloc v3's 1000 ms (when the
    /// environment does not set it), and setting it is read back.
    #[test]
    #[allow(unsafe_code)]
    fn the_option_number_is_the_purge_delay() {
        if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
            // SAFETY: reads mimalloc's option table; any valid option number may be read.
            let default = unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) };
            assert_eq!(default, 1000, "option {PURGE_DELAY} is not purge_delay");
        }
        return_freed_memory_promptly();
        // SAFETY: as above.
        assert_eq!(unsafe { libmimalloc_sys::mi_option_get(PURGE_DELAY) }, 0);
    }
}
