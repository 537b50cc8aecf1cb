//! The control plane releases freed pages after every compile, panicked or not; the compile
//! loop compiles on each change and every interval, and after a panic only on a change.

use std::{
    cell::Cell,
    sync::{
        Arc,
        atomic::{AtomicBool, AtomicUsize, Ordering},
    },
};

use shunt_proxy::dataplane::ProxyMetrics;
use tokio::sync::{mpsc, oneshot};

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

/// A source whose changes the test sends, and whose compiles fail (as a panicked one does)
/// while `failing` is set.
struct Scripted {
    changes: mpsc::UnboundedReceiver<()>,
    compiles: Arc<AtomicUsize>,
    failing: Arc<AtomicBool>,
}

impl Source for Scripted {
    async fn ready(&mut self, _: &ControllerMetrics) -> bool {
        true
    }

    async fn changed(&mut self, _: &ControllerMetrics) {
        self.changes.recv().await.expect("the test keeps its sender");
    }

    fn compile(&mut self, _: &mut ControlPlane, _: &CompileOptions) -> Option<()> {
        self.compiles.fetch_add(1, Ordering::SeqCst);
        (!self.failing.load(Ordering::SeqCst)).then_some(())
    }
}

#[tokio::test(start_paused = true)]
async fn the_loop_compiles_on_each_change_and_every_interval_but_after_a_panic_only_on_a_change() {
    let (change, changes) = mpsc::unbounded_channel();
    let (compiles, failing) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicBool::new(false)));
    let source = Scripted {
        changes,
        compiles: compiles.clone(),
        failing: failing.clone(),
    };
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(compile_loop(
        source,
        CompileOptions::default(),
        control_plane(),
        async {
            let _ = stopped.await;
        },
    ));
    let settle = || tokio::time::sleep(Duration::from_millis(1));
    let compiled = || compiles.load(Ordering::SeqCst);
    settle().await;
    assert_eq!(compiled(), 1, "the first compile at once");
    tokio::time::sleep(RECOMPILE_EVERY).await;
    assert_eq!(
        compiled(),
        2,
        "nothing changed: compiled again, a certificate may have expired"
    );
    change.send(()).expect("the loop runs");
    settle().await;
    assert_eq!(compiled(), 3, "a change compiles at once");

    failing.store(true, Ordering::SeqCst);
    change.send(()).expect("the loop runs");
    settle().await;
    assert_eq!(compiled(), 4);
    tokio::time::sleep(RECOMPILE_EVERY * 3).await;
    assert_eq!(compiled(), 4, "the same input is not compiled again after a panic");
    failing.store(false, Ordering::SeqCst);
    change.send(()).expect("the loop runs");
    settle().await;
    assert_eq!(compiled(), 5, "the next change is compiled");

    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(1), task)
        .await
        .expect("the loop stops on shutdown")
        .expect("the loop does not panic");
}
