//! Waiting for a condition in tests: poll, never sleep a guessed time.

use std::time::Duration;

/// Polls `probe` every 20 ms until it returns `Some`, failing the test after `within`.
pub async fn eventually<T>(what: &str, within: Duration, probe: impl AsyncFnMut() -> Option<T>) -> T {
    poll_until(within, probe)
        .await
        .unwrap_or_else(|| panic!("timed out after {within:?} waiting for {what}"))
}

/// Polls `probe` every 20 ms until it returns `Some`, or `None` after `within`.
pub async fn poll_until<T>(within: Duration, mut probe: impl AsyncFnMut() -> Option<T>) -> Option<T> {
    let deadline = tokio::time::Instant::now() + within;
    loop {
        if let Some(found) = probe().await {
            return Some(found);
        }
        if tokio::time::Instant::now() >= deadline {
            return None;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
