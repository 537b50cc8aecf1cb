//! Changes found by address (`shunt run`): the reflector stores keep an unchanged object's
//! `Arc`, so an object whose address is new, gone or replaced since the last compile changed,
//! unless the replacement differs only in what the compile never reads ([`SameInputs`]).

use std::{
    collections::{BTreeSet, HashMap},
    sync::Arc,
};

use crate::objects::{Annotations, Ingress, IngressMeta, IngressSpec};
use k8s_openapi::api::networking::v1::IngressClass;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;

use super::{Changes, Incremental, Key, key_of};
use crate::{
    compile::{ClusterState, CompileOptions, Compiled},
    objects::{EndpointSlice, Named, Service},
};

/// Objects of the previous state by address; kept alive so an address is not reused meanwhile.
#[derive(Default)]
pub(super) struct Seen {
    ingresses: Vec<Arc<Ingress>>,
    classes: Vec<Arc<IngressClass>>,
    services: Vec<Arc<Service>>,
    slices: Vec<Arc<EndpointSlice>>,
}

// === impl Incremental ===

impl Incremental {
    /// Compiles `state`, finding what changed by comparing its objects' addresses with the
    /// previous state's (`shunt run`: the reflector stores keep an unchanged object's `Arc`).
    pub fn compile(&mut self, state: &ClusterState, options: &CompileOptions) -> Compiled {
        let mut changes = Changes {
            ingress_classes: !diff(&mut self.seen.classes, &state.ingress_classes, &mut BTreeSet::new()),
            ..Default::default()
        };
        diff(&mut self.seen.ingresses, &state.ingresses, &mut changes.ingresses);
        diff(&mut self.seen.services, &state.services, &mut changes.services);
        diff(
            &mut self.seen.slices,
            &state.endpoint_slices,
            &mut changes.endpoint_slices,
        );
        self.compile_changes(state, options, &changes)
    }
}

/// Whether a new version of an object gives the compile what the old one gave. The leader's
/// status writes replace every Ingress of our classes after the first compile (and a load
/// balancer's controller those it serves): without this, each compiled them all again (at
/// 10,000 Ingresses under a profile, every group, twice over).
trait SameInputs {
    fn same_inputs(&self, other: &Self) -> bool;
}

impl SameInputs for Ingress {
    /// All but `status` and `resourceVersion`, which only the status writer reads. Written out
    /// whole, so a field added to either type must be placed here.
    fn same_inputs(&self, other: &Self) -> bool {
        compile_inputs(self) == compile_inputs(other)
    }
}

/// What the compile reads of an Ingress.
type IngressInputs<'a> = (
    &'a Option<IngressSpec>,
    &'a Option<String>,
    &'a Option<String>,
    &'a Option<Annotations>,
    &'a Option<Time>,
    &'a Option<String>,
);

fn compile_inputs(ingress: &Ingress) -> IngressInputs<'_> {
    let Ingress {
        metadata,
        spec,
        status: _,
    } = ingress;
    let IngressMeta {
        name,
        namespace,
        annotations,
        creation_timestamp,
        uid,
        resource_version: _,
    } = metadata;
    (spec, name, namespace, annotations, creation_timestamp, uid)
}

impl SameInputs for IngressClass {
    /// Rare: any new version counts.
    fn same_inputs(&self, _: &Self) -> bool {
        false
    }
}

/// What the stores keep of these is what the compile reads.
impl SameInputs for Service {
    fn same_inputs(&self, other: &Self) -> bool {
        self == other
    }
}

impl SameInputs for EndpointSlice {
    fn same_inputs(&self, other: &Self) -> bool {
        self == other
    }
}

/// Replaces `seen` with `now`'s objects, adding the keys of objects that are new, replaced or
/// gone to `changed`; true when none was.
fn diff<K: Named + SameInputs>(seen: &mut Vec<Arc<K>>, now: &[Arc<K>], changed: &mut BTreeSet<Key>) -> bool {
    let before = changed.len();
    // A store lists its objects in the same order while none comes or goes: compare in place.
    if seen.len() == now.len() {
        for (old, new) in seen.iter().zip(now) {
            if !Arc::ptr_eq(old, new) && !old.same_inputs(new) {
                changed.insert(key_of(old.meta()));
                changed.insert(key_of(new.meta()));
            }
        }
    } else {
        let mut old: HashMap<*const K, &Arc<K>> = seen.iter().map(|object| (Arc::as_ptr(object), object)).collect();
        for object in now {
            if old.remove(&Arc::as_ptr(object)).is_none() {
                changed.insert(key_of(object.meta()));
            }
        }
        for gone in old.values() {
            changed.insert(key_of(gone.meta()));
        }
    }
    seen.clear();
    seen.extend(now.iter().cloned());
    changed.len() == before
}
