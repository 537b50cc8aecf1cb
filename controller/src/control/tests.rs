//! The control plane releases freed pages after every compile, panicked or not.

use std::cell::Cell;

use shunt_proxy::metrics::ProxyMetrics;

use super::*;

thread_local! {
    /// Releases asked for on this thread: other tests' control planes run on theirs.
    static RELEASES: Cell<usize> = const { Cell::new(0) };
}

fn count_release() {
    RELEASES.set(RELEASES.get() + 1);
}

fn control_plane() -> ControlPlane {
    let (publisher, _reader) = RoutePublisher::new(ProxyMetrics::detached());
    ControlPlane::new(publisher, ControllerMetrics::default())
}

#[test]
fn freed_pages_are_released_after_every_publish_and_after_a_panicked_compile() {
    crate::allocator::register_release(count_release);
    let options = CompileOptions::default();
    let mut control = control_plane();
    for publishes in 1..=2 {
        assert!(
            control
                .compile_and_publish(&ClusterState::default(), &options, |_| ())
                .is_some()
        );
        assert_eq!(RELEASES.get(), publishes);
    }

    let mut panicking = control_plane().with_compile(|_, _| panic!("planted"));
    assert!(
        panicking
            .compile_and_publish(&ClusterState::default(), &options, |_| ())
            .is_none()
    );
    assert_eq!(RELEASES.get(), 3, "a compile that panicked freed its scratch too");
}
