//! Giving the pages a compile freed back to the OS once its table is published.
//!
//! The allocator keeps freed pages for a while (mimalloc 2: 10 ms) so that a proxy worker under
//! load reuses them instead of faulting fresh zeroed pages in for every request. The control
//! thread frees most of a compile's peak right after the publish and then sleeps until the next
//! change, so nothing would make the allocator act on that delay: the peak would stay resident.
//! The binary, which picks the allocator, registers how to release freed pages now; without a
//! registration (tests, `--features system-allocator`) releasing does nothing.

use std::sync::OnceLock;

static RELEASE_FREED: OnceLock<fn()> = OnceLock::new();

/// Registers how to hand freed memory back to the OS; the first registration wins.
pub fn register_release(release: fn()) {
    let _ = RELEASE_FREED.set(release);
}

/// Hands memory this thread freed (and the allocator's due purges) back to the OS now.
pub fn release_freed() {
    if let Some(release) = RELEASE_FREED.get() {
        release();
    }
}
