//! One kind's objects, as the watcher last saw them: a set of `Arc<K>` hashed by namespace and
//! name. kube's `reflector::Store` keys each object by an `ObjectRef` (104 B, with copies of the
//! name, namespace, resourceVersion and uid): over a tenth of the heap at 30,000 objects.
//!
//! ```text
//! watcher ─Event─▶ Writer ─ Init: new buffer ─ InitApply: into buffer ─ InitDone: swap in, ready
//!                         └ Apply / Delete: into the live set ──▶ Store::state() (readers)
//! ```
//! Like kube's, a relist fills a buffer and swaps it in when complete, so readers keep the last
//! good objects meanwhile.
//!
//! `shunt run`'s watchers hand their events to one thread of the stores' own
//! ([`Writer::on_store_thread`]), which converts and keeps the objects. The allocator gives each
//! thread pages of its own: the kept objects fill the store thread's pages densely, while the
//! main thread's decoding, API requests and answers (10,000 status writes after the first
//! compile at 10,000 Ingresses) come and go on pages that empty again. Applied on the main
//! thread, each kept object pinned a page of freed transients. After each burst the store thread
//! hands back the pages the objects it replaced leave empty.

use std::{
    collections::HashSet,
    hash::{Hash, Hasher},
    panic::AssertUnwindSafe,
    sync::{Arc, Mutex, OnceLock, PoisonError, RwLock},
    time::Duration,
};

use kube::runtime::watcher;
use tokio::sync::{mpsc, watch};

use crate::objects::Named;

/// The watcher feeding a store stopped before its first list completed.
#[derive(Debug, thiserror::Error)]
#[error("the watcher stopped before its first list")]
pub struct WatcherStopped;

type Objects<K> = HashSet<ByName<K>>;

/// The read side, cheap to clone.
pub struct Store<K> {
    objects: Arc<RwLock<Objects<K>>>,
    ready: watch::Receiver<bool>,
}

/// The write side, owned by the task that runs the watcher: it receives `W`s (the type the
/// watcher decodes) and keeps `K`s (what readers read), converted by `convert`.
pub struct Writer<W, K> {
    objects: Arc<RwLock<Objects<K>>>,
    /// A relist in progress; empty otherwise.
    buffer: Objects<K>,
    ready: watch::Sender<bool>,
    convert: fn(&W) -> K,
}

/// An object that hashes and compares by namespace and name only.
struct ByName<K>(Arc<K>);

/// A store of `K`s fed `W`s through `convert`.
pub fn store<W, K: Named>(convert: fn(&W) -> K) -> (Store<K>, Writer<W, K>) {
    let objects = Arc::new(RwLock::new(HashSet::new()));
    let (ready_tx, ready) = watch::channel(false);
    let store = Store {
        objects: objects.clone(),
        ready,
    };
    let writer = Writer {
        objects,
        buffer: HashSet::new(),
        ready: ready_tx,
        convert,
    };
    (store, writer)
}

// === impl Store ===

impl<K> Clone for Store<K> {
    fn clone(&self) -> Self {
        Store {
            objects: self.objects.clone(),
            ready: self.ready.clone(),
        }
    }
}

impl<K: Named> Store<K> {
    /// Every object now, in no particular order.
    pub fn state(&self) -> Vec<Arc<K>> {
        let objects = self.objects.read().unwrap_or_else(PoisonError::into_inner);
        objects.iter().map(|object| object.0.clone()).collect()
    }

    /// Resolves once the first list has completed.
    pub async fn wait_until_ready(&self) -> Result<(), WatcherStopped> {
        let mut ready = self.ready.clone();
        ready
            .wait_for(|ready| *ready)
            .await
            .map(drop)
            .map_err(|_| WatcherStopped)
    }
}

// === impl Writer ===

impl<W, K: Named> Writer<W, K> {
    /// Counts the store as listed without a list (a kind the API does not serve); true the
    /// first time.
    pub fn mark_ready(&mut self) -> bool {
        !self.ready.send_replace(true)
    }

    /// Applies one watcher event. Objects are stored converted (`convert` makes a new object:
    /// serde grows vectors by doubling, a clone has exact capacities; an EndpointSlice's five
    /// endpoints: 1.7 KB, not 2.8).
    pub fn apply(&mut self, event: &watcher::Event<W>) {
        let write = || self.objects.write().unwrap_or_else(PoisonError::into_inner);
        let convert = |object| ByName(Arc::new((self.convert)(object)));
        match event {
            watcher::Event::Apply(object) => {
                write().replace(convert(object));
            }
            watcher::Event::Delete(object) => {
                write().remove(&convert(object));
            }
            watcher::Event::Init => self.buffer = HashSet::new(),
            watcher::Event::InitApply(object) => {
                let object = convert(object);
                self.buffer.replace(object);
            }
            watcher::Event::InitDone => {
                let listed = std::mem::take(&mut self.buffer);
                // The old set is dropped outside the lock.
                let old = std::mem::replace(&mut *write(), listed);
                drop(old);
                self.ready.send_replace(true);
            }
        }
    }
}

/// A [`Writer`] living on the store thread: events sent are applied there, in order.
pub struct StoreThreadWriter<W> {
    apply: Arc<Mutex<dyn FnMut(watcher::Event<W>) + Send>>,
}

impl<W: Send + 'static, K: Named + Send + Sync + 'static> Writer<W, K> {
    /// Moves this writer to the store thread; `after` runs there after each event is applied.
    pub fn on_store_thread(mut self, after: impl Fn() + Send + 'static) -> StoreThreadWriter<W> {
        let apply = move |event: watcher::Event<W>| {
            self.apply(&event);
            after();
        };
        StoreThreadWriter {
            apply: Arc::new(Mutex::new(apply)),
        }
    }
}

impl<W: Send + 'static> StoreThreadWriter<W> {
    /// Queues `event` for the store thread; waits while [`QUEUED_EVENTS`] are queued.
    pub async fn apply(&self, event: watcher::Event<W>) {
        let apply = self.apply.clone();
        let job: Job = Box::new(move || (apply.lock().unwrap_or_else(PoisonError::into_inner))(event));
        // The thread never ends (a panicking job is caught), so the queue never closes.
        let _ = store_thread().send(job).await;
    }
}

type Job = Box<dyn FnOnce() + Send>;

/// Events queued for the store thread at most; a watcher waits for room beyond it.
const QUEUED_EVENTS: usize = 1024;

/// How long the store thread waits without an event before it hands back the pages the objects
/// replaced since freed (the allocator would keep them otherwise: ~3 MiB at 10,000 Ingresses).
const QUIET: Duration = Duration::from_millis(250);

/// The queue of the one store thread, started on first use.
fn store_thread() -> &'static mpsc::Sender<Job> {
    static QUEUE: OnceLock<mpsc::Sender<Job>> = OnceLock::new();
    QUEUE.get_or_init(|| {
        let (queue, jobs) = mpsc::channel::<Job>(QUEUED_EVENTS);
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .expect("the store thread's runtime");
        std::thread::Builder::new()
            .name("shunt-stores".into())
            .spawn(move || runtime.block_on(apply_jobs(jobs)))
            .expect("starting the store thread");
        queue
    })
}

/// Runs each job in order; once a burst of them is followed by [`QUIET`], releases what they
/// freed.
async fn apply_jobs(mut jobs: mpsc::Receiver<Job>) {
    let mut freed = false;
    loop {
        let next = match freed {
            true => tokio::time::timeout(QUIET, jobs.recv()).await,
            false => Ok(jobs.recv().await),
        };
        match next {
            Ok(Some(job)) => {
                if std::panic::catch_unwind(AssertUnwindSafe(job)).is_err() {
                    tracing::error!("Storing a watch event panicked; that event is lost");
                }
                freed = true;
            }
            Ok(None) => return,
            Err(_quiet) => {
                crate::allocator::release_freed();
                freed = false;
            }
        }
    }
}

// === impl ByName ===

impl<K: Named> ByName<K> {
    fn key(&self) -> (Option<&str>, Option<&str>) {
        self.0.namespace_name()
    }
}

impl<K: Named> Hash for ByName<K> {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.key().hash(state);
    }
}

impl<K: Named> PartialEq for ByName<K> {
    fn eq(&self, other: &Self) -> bool {
        self.key() == other.key()
    }
}

impl<K: Named> Eq for ByName<K> {}

#[cfg(test)]
mod tests;
