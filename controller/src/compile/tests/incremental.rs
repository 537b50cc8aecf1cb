//! The incremental compile against the full one: random sequences of edits (Ingresses, Services,
//! EndpointSlices, Secrets, classes, options), each step compared with `compile` from scratch,
//! once finding changes by address (`shunt run`) and once told them (`shunt serve`).

mod world;

use std::{
    collections::{BTreeMap, BTreeSet},
    sync::Arc,
};

use k8s_openapi::jiff::Timestamp;
use proptest::prelude::*;

use self::world::World;
use super::*;
use crate::objects::{EndpointSlice, MetaNames, Service};

const NAMESPACES: [Option<&str>; 3] = [Some("default"), Some("b"), None];
const HOSTS: [&str; 4] = ["a.example.com", "b.example.com", "*.example.com", ""];
const PATHS: [&str; 3] = ["/", "/api", "/api/v1"];
const SERVICES: [&str; 4] = ["web", "api", "ext", "gone"];

/// A rule: host, then paths as (path, exact, service, port).
type Rule = (usize, Vec<(usize, bool, usize, usize)>);

/// One edit of the cluster.
#[derive(Clone, Debug)]
enum Edit {
    PutIngress {
        ns: usize,
        name: usize,
        created: Option<i64>,
        class: usize,
        rules: Vec<Rule>,
        default_backend: Option<(usize, usize)>,
        tls: Option<(usize, usize)>,
        ssl_redirect: bool,
        /// One of the world's profile annotation sets.
        profile_annotations: usize,
    },
    RemoveIngress(usize, usize),
    /// The Ingress, if there is one, with only its annotations replaced (as `PutIngress` sets
    /// them).
    Annotate(usize, usize, usize, bool),
    /// A status write to the Ingress, if there is one: what the compile reads is unchanged.
    WriteStatus(usize, usize, u8),
    PutService(usize, usize, usize),
    RemoveService(usize, usize),
    PutSlice {
        ns: usize,
        name: usize,
        service: usize,
        endpoints: Vec<(u8, bool)>,
    },
    RemoveSlice(usize, usize),
    PutSecret(usize, usize, usize),
    RemoveSecret(usize, usize),
    PutClass(usize, bool, bool),
    RemoveClass(usize),
    ToggleWithoutClass,
    /// One of the world's choices of profiles served.
    SetProfiles(usize),
    /// ingress-nginx's ConfigMap: `ssl-redirect` off, or none of its keys set.
    PutNginxConfig(bool),
    /// The ConfigMap `default/auth-headers` of `auth-proxy-set-headers`: one of the world's
    /// data, or none.
    PutAuthHeaders(Option<usize>),
    /// An HTTPRoute on the Gateway `g` in `default`: hostnames (of `HOSTS`), then rules as
    /// (path, exact, header match, service, backend namespace).
    PutRoute {
        ns: usize,
        name: usize,
        created: Option<i64>,
        hosts: Vec<usize>,
        rules: Vec<(usize, bool, bool, usize, usize)>,
    },
    RemoveRoute(usize, usize),
    /// The Gateway `g`: which of the world's listener sets, or none.
    PutGateway(Option<usize>),
    /// shunt's GatewayClass, or another controller's.
    PutGatewayClass(bool),
    /// A ReferenceGrant letting routes of every namespace reach Services in `b`, or none.
    PutGrant(bool),
    /// The Namespace `NAMESPACES[ns]` labelled `team: blue` (true) or `team: red`, or none
    /// (a manifest may leave a namespace out).
    PutNamespace(usize, Option<bool>),
    /// `--shadow-gateway-class shunt` on or off: the class `shunt`, when another controller's,
    /// is served in shadow.
    ToggleShadowGateway,
}

fn edit() -> impl Strategy<Value = Edit> {
    let path = (0..PATHS.len(), any::<bool>(), 0..SERVICES.len(), 0..3usize);
    let rule = (0..HOSTS.len(), prop::collection::vec(path, 0..3));
    let ingress = (
        (0..3usize, 0..5usize, prop::option::of(0..3i64), 0..3usize),
        prop::collection::vec(rule, 0..3),
        prop::option::of((0..SERVICES.len(), 0..3usize)),
        prop::option::of((0..HOSTS.len(), 0..3usize)),
        (any::<bool>(), prop_oneof![2 => Just(0usize), 3 => 1..10usize]),
    )
        .prop_map(
            |((ns, name, created, class), rules, default_backend, tls, (ssl_redirect, profile_annotations))| {
                Edit::PutIngress {
                    ns,
                    name,
                    created,
                    class,
                    rules,
                    default_backend,
                    tls,
                    ssl_redirect,
                    profile_annotations,
                }
            },
        );
    prop_oneof![
        4 => ingress,
        1 => (0..3usize, 0..5usize).prop_map(|(ns, name)| Edit::RemoveIngress(ns, name)),
        2 => (0..3usize, 0..5usize, any::<u8>()).prop_map(|(ns, name, version)| Edit::WriteStatus(ns, name, version)),
        2 => (0..3usize, 0..5usize, prop_oneof![2 => Just(0usize), 3 => 1..10usize], any::<bool>())
            .prop_map(|(ns, name, set, ssl_redirect)| Edit::Annotate(ns, name, set, ssl_redirect)),
        2 => (0..3usize, 0..SERVICES.len(), 0..3usize).prop_map(|(ns, s, kind)| Edit::PutService(ns, s, kind)),
        1 => (0..3usize, 0..SERVICES.len()).prop_map(|(ns, s)| Edit::RemoveService(ns, s)),
        3 => (0..3usize, 0..3usize, 0..SERVICES.len(), prop::collection::vec((0..4u8, any::<bool>()), 0..3))
            .prop_map(|(ns, name, service, endpoints)| Edit::PutSlice { ns, name, service, endpoints }),
        1 => (0..3usize, 0..3usize).prop_map(|(ns, name)| Edit::RemoveSlice(ns, name)),
        1 => (0..3usize, 0..3usize, 0..3usize).prop_map(|(ns, s, kind)| Edit::PutSecret(ns, s, kind)),
        1 => (0..3usize, 0..3usize).prop_map(|(ns, s)| Edit::RemoveSecret(ns, s)),
        1 => (0..2usize, any::<bool>(), any::<bool>()).prop_map(|(c, ours, default)| Edit::PutClass(c, ours, default)),
        1 => (0..2usize).prop_map(Edit::RemoveClass),
        1 => Just(Edit::ToggleWithoutClass),
        1 => (0..world::PROFILE_OPTIONS).prop_map(Edit::SetProfiles),
        1 => any::<bool>().prop_map(Edit::PutNginxConfig),
        1 => prop::option::of(0..3usize).prop_map(Edit::PutAuthHeaders),
        3 => route(),
        1 => (0..3usize, 0..3usize).prop_map(|(ns, name)| Edit::RemoveRoute(ns, name)),
        1 => prop::option::of(0..world::LISTENER_SETS).prop_map(Edit::PutGateway),
        1 => any::<bool>().prop_map(Edit::PutGatewayClass),
        1 => any::<bool>().prop_map(Edit::PutGrant),
        2 => (0..3usize, prop::option::of(any::<bool>())).prop_map(|(ns, blue)| Edit::PutNamespace(ns, blue)),
        1 => Just(Edit::ToggleShadowGateway),
    ]
}

fn route() -> impl Strategy<Value = Edit> {
    let rule = (
        0..PATHS.len(),
        any::<bool>(),
        any::<bool>(),
        0..SERVICES.len(),
        0..3usize,
    );
    (
        (0..3usize, 0..3usize, prop::option::of(0..3i64)),
        prop::collection::vec(0..3usize, 0..3),
        prop::collection::vec(rule, 0..3),
    )
        .prop_map(|((ns, name, created), hosts, rules)| Edit::PutRoute {
            ns,
            name,
            created,
            hosts,
            rules,
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    #[test]
    fn an_incremental_compile_after_any_edits_equals_a_full_compile(
        edits in prop::collection::vec(edit(), 1..40),
        default_certificate in any::<bool>(),
    ) {
        each_step_equals_a_full_compile(&edits, default_certificate)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// The general proptest reaches an owned Gateway only by chance; here shunt's GatewayClass
    /// and a Gateway exist from the start, so routes attach and Ingresses contend for their hosts.
    #[test]
    fn with_a_gateway_served_an_incremental_compile_after_any_edits_equals_a_full_compile(
        set in 0..world::LISTENER_SETS - 1,
        edits in prop::collection::vec(edit(), 1..30),
    ) {
        let mut all = vec![Edit::PutGatewayClass(true), Edit::PutGateway(Some(set))];
        all.extend(edits);
        each_step_equals_a_full_compile(&all, false)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]

    /// The general proptest serves a profile only after its rare `SetProfiles` edit; here one is
    /// served from the start, so edits land on the profiles' host groups.
    #[test]
    fn with_a_profile_served_an_incremental_compile_after_any_edits_equals_a_full_compile(
        profiles in 1..world::PROFILE_OPTIONS,
        edits in prop::collection::vec(edit(), 1..40),
    ) {
        let mut all = vec![Edit::SetProfiles(profiles)];
        all.extend(edits);
        each_step_equals_a_full_compile(&all, false)?;
    }
}

/// Only what moves endpoints: Services and slices put and removed, in every namespace.
fn endpoint_edit() -> impl Strategy<Value = Edit> {
    prop_oneof![
        2 => (0..3usize, 0..SERVICES.len(), 0..3usize).prop_map(|(ns, s, kind)| Edit::PutService(ns, s, kind)),
        1 => (0..3usize, 0..SERVICES.len()).prop_map(|(ns, s)| Edit::RemoveService(ns, s)),
        3 => (0..3usize, 0..3usize, 0..SERVICES.len(), prop::collection::vec((0..4u8, any::<bool>()), 0..3))
            .prop_map(|(ns, name, service, endpoints)| Edit::PutSlice { ns, name, service, endpoints }),
        2 => (0..3usize, 0..3usize).prop_map(|(ns, name)| Edit::RemoveSlice(ns, name)),
    ]
}

/// Our class, every Service in every namespace, and in each namespace an Ingress (a host of its
/// own) naming every Service: any endpoint edit then shows in the table, whichever namespace it
/// lands in.
fn ingresses_naming_every_service() -> Vec<Edit> {
    let every_service: Vec<_> = (0..SERVICES.len()).map(|s| (s % PATHS.len(), s == 3, s, 0)).collect();
    let mut setup = vec![Edit::PutClass(0, true, true)];
    for ns in 0..NAMESPACES.len() {
        setup.extend((0..SERVICES.len()).map(|s| Edit::PutService(ns, s, 0)));
    }
    setup.extend((0..NAMESPACES.len()).map(|ns| Edit::PutIngress {
        ns,
        name: ns,
        created: None,
        class: 0,
        rules: vec![(ns, every_service.clone())],
        default_backend: None,
        tls: None,
        ssl_redirect: false,
        profile_annotations: 0,
    }));
    setup
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    /// The general proptest reaches a served Service in a second namespace only by chance; here
    /// every slice edit lands under one, so a slice or Service looked up in the wrong namespace
    /// fails nearly every run (checked by planting that mistake in the removed-slice lookup).
    #[test]
    fn endpoint_edits_under_ingresses_in_every_namespace_equal_a_full_compile(
        edits in prop::collection::vec(endpoint_edit(), 1..30),
    ) {
        let mut all = ingresses_naming_every_service();
        all.extend(edits);
        each_step_equals_a_full_compile(&all, false)?;
    }
}

/// Applies `edits` one by one; after each, both incremental compiles (changes found by address,
/// changes told) must equal `compile` from scratch.
fn each_step_equals_a_full_compile(edits: &[Edit], default_certificate: bool) -> Result<(), TestCaseError> {
    let mut world = World::default();
    let mut options = CompileOptions {
        default_certificate: default_certificate.then(|| ("default".to_string(), "s0".to_string())),
        now: Some(Timestamp::from_second(1_800_000_000).expect("a time")),
        ..Default::default()
    };
    let mut by_address = Incremental::default();
    let mut told = Incremental::default();
    let mut partial = Incremental::default();
    let mut previous = TableSpec::default();
    for (step, edit) in edits.iter().enumerate() {
        let mut changes = Changes::default();
        world.apply(edit, &mut options, &mut changes);
        let state = world.state();
        let full = compile(&state, &options);
        prop_assert_eq!(
            &by_address.compile(&state, &options),
            &full,
            "by address, step {} {:?}",
            step,
            edit
        );
        prop_assert_eq!(
            &told.compile_changes(&state, &options, &changes),
            &full,
            "told, step {} {:?}",
            step,
            edit
        );
        prop_assert_eq!(
            &partial.compile_changes(&read_by(&partial, &state, &options, &changes), &options, &changes),
            &full,
            "reading only what it reads, step {} {:?}",
            step,
            edit
        );
        // What the publisher is told changed covers every host and backend that did.
        if let Some(spec_changes) = by_address.spec_changes() {
            let host = |spec: &TableSpec, name: &HostMatch| spec.hosts.iter().find(|h| h.host == *name).cloned();
            for name in previous.hosts.iter().chain(&full.table.hosts).map(|h| &h.host) {
                if !spec_changes.hosts.contains(name) {
                    prop_assert_eq!(
                        host(&previous, name),
                        host(&full.table, name),
                        "host {} step {}",
                        name,
                        step
                    );
                }
            }
            for id in previous.backends.keys().chain(full.table.backends.keys()) {
                if !spec_changes.backends.contains(id) {
                    prop_assert_eq!(previous.backends.get(id), full.table.backends.get(id), "backend {}", id);
                }
            }
        }
        previous = full.table;
    }
    Ok(())
}

/// The state `shunt serve` hands `incremental`: only what [`Incremental::reads`] says it reads,
/// or all of it when that says so. Told only the changed objects themselves (the manifest files
/// holding them give it more).
fn read_by(
    incremental: &Incremental,
    state: &ClusterState,
    options: &CompileOptions,
    changes: &Changes,
) -> ClusterState {
    fn key(meta: &impl MetaNames) -> (String, String) {
        let (namespace, name) = namespace_name(meta);
        (namespace.to_string(), name.to_string())
    }
    let changed = ClusterState {
        ingresses: (state.ingresses.iter())
            .filter(|o| changes.ingresses.contains(&key(&o.metadata)))
            .cloned()
            .collect(),
        endpoint_slices: (state.endpoint_slices.iter())
            .filter(|o| changes.endpoint_slices.contains(&key(&o.metadata)))
            .cloned()
            .collect(),
        ..Default::default()
    };
    incremental
        .reads(options, changes, &changed)
        .and_then(|reads| {
            let partial = reads.keep(state);
            reads.suffices(&partial).then_some(partial)
        })
        .unwrap_or_else(|| state.clone())
}

/// Found by the proptest: two slices named `e0` in `default` (one without a namespace, as a
/// manifest may have it) for different Services; removing one must redo both Services' users.
#[test]
fn removing_one_of_two_slices_with_one_name_redoes_both_services() {
    let edits = [
        Edit::PutSlice {
            ns: 2,
            name: 0,
            service: 1,
            endpoints: vec![],
        },
        Edit::PutIngress {
            ns: 0,
            name: 0,
            created: None,
            class: 2,
            rules: vec![(0, vec![(0, false, 0, 1)])],
            default_backend: None,
            tls: None,
            ssl_redirect: false,
            profile_annotations: 0,
        },
        Edit::PutSlice {
            ns: 0,
            name: 0,
            service: 0,
            endpoints: vec![(0, false)],
        },
        Edit::PutClass(0, true, true),
        Edit::PutService(2, 0, 1),
        Edit::RemoveSlice(0, 0),
    ];
    each_step_equals_a_full_compile(&edits, false).unwrap();
}

#[test]
fn an_endpoint_edit_redoes_only_the_ingresses_naming_its_service() {
    let ingresses: Vec<Ingress> = (0..3)
        .map(|i| {
            let service = if i == 0 { "web" } else { "api" };
            mk_ingress(
                "shop",
                &format!("i{i}"),
                vec![mk_rule(&format!("h{i}.example.com"), vec![mk_prefix("/", service, 80)])],
            )
        })
        .collect();
    let mut state = world_with(ingresses);
    let options = CompileOptions::default();
    let mut incremental = Incremental::default();
    assert_eq!(incremental.compile(&state, &options), compile(&state, &options));
    let before: Vec<*const crate::compile::backend::Resolved> = redone(&incremental);

    let web = state
        .endpoint_slices
        .iter_mut()
        .find(|slice| slice.service_name.as_deref() == Some("web"))
        .expect("a web slice");
    Arc::make_mut(web).endpoints.push(mk_ready("10.0.0.9"));
    assert_eq!(incremental.compile(&state, &options), compile(&state, &options));
    let after = redone(&incremental);
    let unchanged: BTreeSet<usize> = (0..3).filter(|&i| before[i] == after[i]).collect();
    assert_eq!(unchanged, BTreeSet::from([1, 2]), "only shop/i0 names web");
}

/// The leader writes every Ingress's status after the first compile: nothing is compiled again
/// for that. An edit of what the compile reads (here the uid: the Ingress was recreated) is.
#[test]
fn a_status_write_redoes_nothing_and_a_recreated_ingress_is_redone() {
    let ingresses: Vec<Ingress> = (0..3)
        .map(|i| {
            mk_ingress(
                "shop",
                &format!("i{i}"),
                vec![mk_rule(&format!("h{i}.example.com"), vec![mk_prefix("/", "web", 80)])],
            )
        })
        .collect();
    let mut state = world_with(ingresses);
    let options = CompileOptions::default();
    let mut incremental = Incremental::default();
    assert_eq!(incremental.compile(&state, &options), compile(&state, &options));
    let before = redone(&incremental);

    for ingress in &mut state.ingresses {
        *ingress = Arc::new(world::with_status(ingress, 7));
    }
    assert_eq!(incremental.compile(&state, &options), compile(&state, &options));
    assert_eq!(redone(&incremental), before, "a status write compiles nothing again");

    let recreated = state
        .ingresses
        .iter_mut()
        .find(|ingress| ingress.metadata.name.as_deref() == Some("i1"))
        .expect("i1");
    Arc::make_mut(recreated).metadata.uid = Some("a-new-uid".to_string());
    assert_eq!(incremental.compile(&state, &options), compile(&state, &options));
    let after = redone(&incremental);
    let unchanged: BTreeSet<usize> = (0..3).filter(|&i| before[i] == after[i]).collect();
    assert_eq!(unchanged, BTreeSet::from([0, 2]), "only shop/i1 is compiled again");
}

#[test]
fn removing_a_slice_redoes_the_ingresses_naming_its_service() {
    let ingresses = vec![mk_ingress(
        "shop",
        "i0",
        vec![mk_rule("h0.example.com", vec![mk_prefix("/", "web", 80)])],
    )];
    let mut state = world_with(ingresses);
    let options = CompileOptions::default();
    let mut incremental = Incremental::default();
    assert_eq!(incremental.compile(&state, &options), compile(&state, &options));
    // The slice is gone from the state: only the incremental compile's memory names its Service.
    state
        .endpoint_slices
        .retain(|slice| slice.service_name.as_deref() != Some("web"));
    let full = compile(&state, &options);
    assert_eq!(incremental.compile(&state, &options), full);
    let endpoints: usize = full
        .table
        .backends
        .values()
        .map(|backend| backend.endpoints.len())
        .sum();
    assert_eq!(endpoints, 0, "web lost its only slice");
}

/// Each kept contribution's first backend, by Ingress name.
fn redone(incremental: &Incremental) -> Vec<*const crate::compile::backend::Resolved> {
    (0..3)
        .map(|i| {
            incremental
                .first_backend(&("shop".to_string(), format!("i{i}")))
                .expect("a claim")
        })
        .collect()
}

/// A host both layers claim: the standard Ingress holds `/`, the shadowed one is refused. When
/// the standard one moves to another host, the shadowed one's group must be compiled again
/// although none of its own inputs changed.
#[test]
fn a_standard_ingress_leaving_a_host_hands_its_path_to_the_shadowed_one() {
    let options = CompileOptions {
        shadow_classes: vec!["other=nginx".parse().expect("a class profile")],
        ..Default::default()
    };
    let ours = |host: &str| mk_ingress("shop", "ours", vec![mk_rule(host, vec![mk_prefix("/", "web", 80)])]);
    let theirs = with_class(
        mk_ingress(
            "shop",
            "theirs",
            vec![mk_rule("a.example.com", vec![mk_prefix("/", "api", 80)])],
        ),
        Some("other"),
    );
    let mut state = world_with(vec![ours("a.example.com"), theirs]);
    let mut incremental = Incremental::default();
    let before = incremental.compile(&state, &options);
    assert_eq!(before, compile(&state, &options));
    assert_eq!(
        before.shadow[0].verdict,
        crate::shadow::Verdict::Refused,
        "{:?}",
        before.shadow
    );

    state.ingresses[0] = Arc::new(ours("b.example.com").into());
    let after = incremental.compile(&state, &options);
    assert_eq!(after, compile(&state, &options));
    assert_eq!(
        after.shadow[0].verdict,
        crate::shadow::Verdict::Identical,
        "{:?}",
        after.shadow
    );
    let host_a = after
        .table
        .hosts
        .iter()
        .find(|host| host.host == HostMatch::Exact("a.example.com".into()));
    assert_eq!(host_a.expect("a.example.com is served").paths[0].source, "shop/theirs");
}

/// Every verdict is kept while its host group stands: those naming the same classes hold one
/// list of them, across groups and compiles.
#[test]
fn kept_verdicts_of_the_same_classes_share_one_list() {
    let options = CompileOptions {
        shadow_classes: vec!["other=nginx".parse().expect("a class profile")],
        ..Default::default()
    };
    let theirs = |name: &str, host: &str| {
        let ingress = mk_ingress("shop", name, vec![mk_rule(host, vec![mk_prefix("/", "api", 80)])]);
        Arc::new(with_class(ingress, Some("other")).into())
    };
    let mut state = world_with(Vec::new());
    state.ingresses = vec![theirs("a", "a.example.com"), theirs("b", "b.example.com")];
    let mut incremental = Incremental::default();
    assert_eq!(incremental.compile(&state, &options), compile(&state, &options));
    state.ingresses.push(theirs("c", "c.example.com"));
    let compiled = incremental.compile(&state, &options);
    assert_eq!(compiled, compile(&state, &options));
    assert_eq!(compiled.shadow.len(), 3);
    assert_eq!(&*compiled.shadow[0].classes, ["other".to_string()]);
    for verdict in &compiled.shadow[1..] {
        assert!(
            Arc::ptr_eq(&verdict.classes, &compiled.shadow[0].classes),
            "{verdict:?}"
        );
    }
}
