//! Which Ingresses shunt serves: by IngressClass controller, by `--ingress-class` name, the
//! default-class annotation, `--watch-ingress-without-class`, the legacy annotation (the field
//! wins), and `--shadow-class`. Every test also serves a `control.example.com` Ingress of class
//! `shunt`, so a 404 means "ignored", not "nothing loaded".

use http::StatusCode;

use crate::support::*;

const LEGACY_ANNOTATION: &str = "kubernetes.io/ingress.class";

/// An Ingress `apps/<name>` for `<name>.example.com`, class `shunt` unless changed.
fn mk_app_ingress(name: &str) -> Ingress {
    mk_ingress("apps", name).rule(&format!("{name}.example.com"), [mk_path("/", "Prefix", "app", 80)])
}

/// Serves `objects` next to the control Ingress, with `args`.
async fn serve_classes(objects: &[&dyn Manifest], args: &[&str]) -> Site {
    let control = mk_app_ingress("control");
    let mut all = objects.to_vec();
    all.push(&control);
    let site = Site::start("apps", &["app"], &all, args).await;
    assert_eq!(
        site.backend_for("control.example.com", "/").await,
        "app",
        "the control Ingress is served"
    );
    site
}

/// True when `<name>.example.com` reaches the backend, false on 404; anything else fails.
async fn is_served(site: &Site, name: &str) -> bool {
    let reply = site.shunt.get(&format!("{name}.example.com"), "/").await;
    match reply.status {
        StatusCode::OK => true,
        StatusCode::NOT_FOUND => false,
        other => panic!("{name}.example.com: unexpected {other}: {}", reply.text()),
    }
}

#[tokio::test]
async fn an_ingress_class_with_our_controller_selects_its_ingresses() {
    let class = mk_ingress_class("internal", CONTROLLER);
    let site = serve_classes(&[&class, &mk_app_ingress("web").class("internal")], &[]).await;
    assert!(is_served(&site, "web").await);
}

#[tokio::test]
async fn a_class_named_by_flag_is_ours_without_an_ingress_class_object() {
    let edge = mk_app_ingress("edge").class("edge");
    let other = mk_app_ingress("other").class("other");
    let site = serve_classes(
        &[&edge, &other],
        &["--ingress-class", "shunt", "--ingress-class", "edge"],
    )
    .await;
    assert!(is_served(&site, "edge").await);
    assert!(!is_served(&site, "other").await);
}

#[tokio::test]
async fn a_custom_controller_name_selects_classes_of_that_controller() {
    let class = mk_ingress_class("edge-class", "example.com/edge");
    let ours = mk_app_ingress("edge").class("edge-class");
    let site = serve_classes(&[&class, &ours], &["--controller-name", "example.com/edge"]).await;
    assert!(is_served(&site, "edge").await);
}

#[tokio::test]
async fn another_controllers_class_is_ignored() {
    let class = mk_ingress_class("nginx", "k8s.io/ingress-nginx");
    let foreign = mk_app_ingress("foreign").class("nginx");
    let unknown = mk_app_ingress("unknown").class("no-such-class");
    let site = serve_classes(&[&class, &foreign, &unknown], &[]).await;
    assert!(!is_served(&site, "foreign").await);
    assert!(!is_served(&site, "unknown").await);
}

#[tokio::test]
async fn ingresses_without_a_class_are_ignored_by_default() {
    let class = mk_ingress_class("shunt", CONTROLLER);
    let site = serve_classes(&[&class, &mk_app_ingress("classless").without_class()], &[]).await;
    assert!(!is_served(&site, "classless").await);
}

#[tokio::test]
async fn our_default_class_selects_ingresses_without_a_class() {
    let class = mk_default_ingress_class("shunt", CONTROLLER);
    let site = serve_classes(&[&class, &mk_app_ingress("classless").without_class()], &[]).await;
    assert!(is_served(&site, "classless").await);
}

#[tokio::test]
async fn another_controllers_default_class_does_not_select_ingresses_without_a_class() {
    let class = mk_default_ingress_class("nginx", "k8s.io/ingress-nginx");
    let site = serve_classes(&[&class, &mk_app_ingress("classless").without_class()], &[]).await;
    assert!(!is_served(&site, "classless").await);
}

#[tokio::test]
async fn watch_ingress_without_class_serves_ingresses_without_a_class() {
    let classless = mk_app_ingress("classless").without_class();
    let site = serve_classes(&[&classless], &["--watch-ingress-without-class"]).await;
    assert!(is_served(&site, "classless").await);
}

#[tokio::test]
async fn the_legacy_class_annotation_selects_an_ingress() {
    let ours = mk_app_ingress("legacy")
        .without_class()
        .annotation(LEGACY_ANNOTATION, "shunt");
    let theirs = mk_app_ingress("theirs")
        .without_class()
        .annotation(LEGACY_ANNOTATION, "nginx");
    let site = serve_classes(&[&ours, &theirs], &[]).await;
    assert!(is_served(&site, "legacy").await);
    assert!(!is_served(&site, "theirs").await);
}

#[tokio::test]
async fn the_class_field_wins_over_the_legacy_annotation() {
    let field_ours = mk_app_ingress("fieldours")
        .class("shunt")
        .annotation(LEGACY_ANNOTATION, "nginx");
    let field_theirs = mk_app_ingress("fieldtheirs")
        .class("nginx")
        .annotation(LEGACY_ANNOTATION, "shunt");
    let site = serve_classes(&[&field_ours, &field_theirs], &[]).await;
    assert!(is_served(&site, "fieldours").await);
    assert!(!is_served(&site, "fieldtheirs").await);
}

#[tokio::test]
async fn a_shadow_class_is_served_too() {
    let class = mk_ingress_class("clb", "cloud.example.com/clb");
    let shadowed = mk_app_ingress("shadowed").class("clb");
    let site = serve_classes(&[&class, &shadowed], &["--shadow-class", "clb"]).await;
    assert!(is_served(&site, "shadowed").await);
}

#[tokio::test]
async fn a_class_that_is_not_shadowed_stays_ignored() {
    let class = mk_ingress_class("clb", "cloud.example.com/clb");
    let other = mk_app_ingress("other").class("clb");
    let site = serve_classes(&[&class, &other], &["--shadow-class", "alb"]).await;
    assert!(!is_served(&site, "other").await);
}
