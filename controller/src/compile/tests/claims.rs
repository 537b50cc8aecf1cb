//! The one rule both compiles settle a host's claims by: the first claim of a path and kind
//! holds it on every listener it overlaps; a host becomes its held slots in order.

use shunt_spec::{HostMatch, Listeners, PathKind};

use crate::compile::claims::{HostSlots, RouteSettings};

type Slots = HostSlots<String, &'static str>;

fn claim(
    slots: &mut Slots,
    path: &str,
    kind: PathKind,
    listeners: Listeners,
    who: &'static str,
) -> Result<(), &'static str> {
    slots.claim((path, || path.to_string()), (kind, listeners), who, |held| *held)
}

#[test]
fn the_first_claim_of_a_path_and_kind_holds_it_and_a_later_one_learns_the_holder() {
    let mut slots = Slots::default();
    assert_eq!(
        claim(&mut slots, "/api", PathKind::Prefix, Listeners::Both, "a"),
        Ok(())
    );
    assert_eq!(
        claim(&mut slots, "/api", PathKind::Prefix, Listeners::Both, "b"),
        Err("a")
    );
    assert_eq!(
        claim(&mut slots, "/api", PathKind::Exact, Listeners::Both, "b"),
        Ok(()),
        "another kind is another slot"
    );
    assert_eq!(claim(&mut slots, "/", PathKind::Prefix, Listeners::Both, "c"), Ok(()));
}

#[test]
fn claims_on_one_listener_each_share_a_path_but_not_with_a_claim_on_both() {
    let mut slots = Slots::default();
    assert_eq!(claim(&mut slots, "/", PathKind::Prefix, Listeners::Plain, "a"), Ok(()));
    assert_eq!(claim(&mut slots, "/", PathKind::Prefix, Listeners::Tls, "b"), Ok(()));
    assert_eq!(claim(&mut slots, "/", PathKind::Prefix, Listeners::Both, "c"), Err("a"));
    assert_eq!(claim(&mut slots, "/", PathKind::Prefix, Listeners::Tls, "d"), Err("b"));
    // A claim on both listeners made before any scoped one still holds against a scoped one.
    assert_eq!(claim(&mut slots, "/x", PathKind::Exact, Listeners::Both, "e"), Ok(()));
    assert_eq!(claim(&mut slots, "/x", PathKind::Exact, Listeners::Tls, "f"), Err("e"));
    let mut unscoped = Slots::default();
    assert_eq!(
        claim(&mut unscoped, "/y", PathKind::Exact, Listeners::Both, "g"),
        Ok(())
    );
    assert_eq!(
        claim(&mut unscoped, "/y", PathKind::Exact, Listeners::Plain, "h"),
        Err("g")
    );
}

#[test]
fn a_host_becomes_its_held_slots_in_path_kind_and_listener_order() {
    let mut slots = Slots::default();
    for (path, kind, listeners, who) in [
        ("/b", PathKind::Prefix, Listeners::Both, "first"),
        ("/a", PathKind::Prefix, Listeners::Tls, "second"),
        ("/a", PathKind::Prefix, Listeners::Plain, "third"),
        ("/a", PathKind::Exact, Listeners::Both, "fourth"),
        ("/b", PathKind::Prefix, Listeners::Both, "refused"),
    ] {
        let _ = claim(&mut slots, path, kind, listeners, who);
    }
    let host = slots
        .into_spec(HostMatch::Exact("example.com".into()), true, |path, kind, who| {
            RouteSettings::default().spec(path, kind, None, who.to_string())
        })
        .expect("some slots are held");
    let paths: Vec<(&str, PathKind, &str)> = host
        .paths
        .iter()
        .map(|p| (p.path.as_str(), p.kind, p.source.as_str()))
        .collect();
    assert_eq!(
        paths,
        [
            ("/a", PathKind::Exact, "fourth"),
            ("/a", PathKind::Prefix, "third"),
            ("/a", PathKind::Prefix, "second"),
            ("/b", PathKind::Prefix, "first"),
        ]
    );
    assert!(host.exclusive);
    let empty = Slots::default().into_spec(HostMatch::Exact("example.com".into()), false, |path, kind, who| {
        RouteSettings::default().spec(path, kind, None, who.to_string())
    });
    assert_eq!(empty, None, "a host no claim holds has no entry");
}

/// A profile's paths with equal options hold one copy of them (~1.5 KiB each); different
/// options stay apart.
#[test]
fn equal_options_from_a_profile_share_one_allocation() {
    let options = || shunt_spec::RouteOptions {
        listeners: Listeners::Plain,
        ..Default::default()
    };
    let (a, b) = (RouteSettings::from(options()), RouteSettings::from(options()));
    let (a, b) = (a.options.expect("not the default"), b.options.expect("not the default"));
    assert!(std::sync::Arc::ptr_eq(&a, &b));
    let other = RouteSettings::from(shunt_spec::RouteOptions {
        listeners: Listeners::Tls,
        ..Default::default()
    });
    assert_eq!(other.options.expect("not the default").listeners, Listeners::Tls);
}
