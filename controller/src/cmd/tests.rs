//! Arguments parse as documented, and the flags with no value given build the options' own
//! defaults.

use std::time::Duration;

use clap::Parser;
use shunt_proxy::dataplane::{ClientOptions, MetricsOptions, ProxyOptions, ServerMetrics, ServerOptions, Tunnels};

use super::{
    parse::{Span, parse_duration, parse_size},
    *,
};
use crate::compile::CompileOptions;

#[test]
fn durations_and_sizes_parse_with_units() {
    assert_eq!(parse_duration("250ms"), Ok(Duration::from_millis(250)));
    assert_eq!(parse_duration("30s"), Ok(Duration::from_secs(30)));
    assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
    assert!(parse_duration("5 fortnights").is_err());
    assert!(parse_duration("").is_err());
    assert_eq!(parse_size("10Mi"), Ok(10 << 20));
    assert_eq!(parse_size("32Ki"), Ok(32 << 10));
    assert_eq!(parse_size("1000"), Ok(1000));
    assert!(parse_size("1Ti").is_err());
    assert!(parse_size("99999999999Gi").is_err());
}

#[test]
fn duration_defaults_show_in_the_largest_whole_unit_and_parse_back() {
    for (duration, text) in [
        (Duration::ZERO, "0s"),
        (Duration::from_millis(250), "250ms"),
        (Duration::from_secs(75), "75s"),
        (Duration::from_secs(300), "5m"),
        (Duration::from_secs(3600), "1h"),
    ] {
        assert_eq!(Span(duration).to_string(), text);
        assert_eq!(text.parse::<Span>(), Ok(Span(duration)));
    }
}

fn mk_run_args(args: &[&str]) -> RunArgs {
    let argv = ["shunt", "run"].iter().chain(args);
    match Cli::try_parse_from(argv).expect("valid arguments").command {
        Command::Run(args) => args,
        other => panic!("not run: {other:?}"),
    }
}

#[test]
fn the_published_hostname_follows_the_cluster_domain() {
    use crate::status::PublishAddress;
    let hostname = |args: &[&str]| mk_run_args(args).publish_address();
    let service = ["--publish-service", "edge/shunt", "--publish-hostname"];
    assert_eq!(
        hostname(&service),
        Some(PublishAddress::ServiceHostname {
            hostname: "shunt.edge.svc.cluster.local".to_string()
        })
    );
    let custom = [&service[..], &["--cluster-domain", "corp.example."]].concat();
    assert_eq!(
        hostname(&custom),
        Some(PublishAddress::ServiceHostname {
            hostname: "shunt.edge.svc.corp.example".to_string()
        })
    );
}

#[test]
fn election_timings_default_to_client_go_and_the_clock_offset_may_be_negative() {
    let args = mk_run_args(&[]).election;
    assert_eq!(
        (args.lease_duration.0, args.renew_deadline.0, args.retry_period.0),
        (Duration::from_secs(15), Duration::from_secs(10), Duration::from_secs(2))
    );
    let args = mk_run_args(&["--lease-clock-offset", "-60s"]).election;
    assert_eq!(
        args.lease_clock_offset,
        k8s_openapi::jiff::SignedDuration::from_secs(-60)
    );
    assert!(Cli::try_parse_from(["shunt", "run", "--lease-clock-offset", "soon"]).is_err());
}

#[test]
fn the_cli_definition_is_consistent() {
    use clap::CommandFactory;
    Cli::command().debug_assert();
}

/// The proxy's flags of every command that serves, parsed with no flag given (`serve` needs
/// its manifests).
fn mk_default_proxy_args() -> [ProxyArgs; 3] {
    let parse = |argv: &[&str]| Cli::try_parse_from(argv).expect("valid arguments").command;
    let Command::Serve(serve) = parse(&["shunt", "serve", "-f", "manifests"]) else {
        panic!("not serve")
    };
    let Command::Run(run) = parse(&["shunt", "run"]) else {
        panic!("not run")
    };
    let Command::Demo(demo) = parse(&["shunt", "demo"]) else {
        panic!("not demo")
    };
    [serve.proxy, run.proxy, demo.proxy]
}

#[test]
fn the_proxy_options_built_from_no_flags_are_the_proxy_crates_defaults() {
    for args in mk_default_proxy_args() {
        // Destructured whole, so an option added without a look at its flag fails to compile here.
        let ProxyOptions {
            trusted_proxies,
            upstream_timeout,
            max_body_size,
            connect_attempts,
            access_log,
            client_body_timeout,
            external_auth_timeout,
            tunnels: _,
            allowed_upgrades,
            underscores_in_headers,
            retry,
            slow_start,
        } = args.proxy_options();
        let default = ProxyOptions::default();
        assert_eq!(
            format!("{trusted_proxies:?}"),
            format!("{:?}", default.trusted_proxies),
            "--trusted-proxies"
        );
        assert_eq!(upstream_timeout, default.upstream_timeout, "--upstream-timeout");
        assert_eq!(max_body_size, default.max_body_size, "--max-body-size");
        assert_eq!(connect_attempts, default.connect_attempts, "--connect-attempts");
        assert_eq!(access_log, default.access_log, "--access-log");
        assert_eq!(retry, default.retry, "--retries, --retry-budget-*, --eject-*");
        assert_eq!(slow_start, default.slow_start, "--slow-start");
        assert_eq!(
            client_body_timeout, default.client_body_timeout,
            "--client-body-timeout"
        );
        assert_eq!(allowed_upgrades, default.allowed_upgrades, "--allow-upgrade");
        assert_eq!(
            external_auth_timeout, default.external_auth_timeout,
            "--external-auth-timeout"
        );
        assert_eq!(
            underscores_in_headers, default.underscores_in_headers,
            "--allow-underscores-in-headers"
        );
        // The tunnels are built from --tunnel-idle-timeout where the listeners are.
        let tunnels = Tunnels::new(args.tunnel_idle_timeout.0, ServerMetrics::default());
        assert_eq!(
            format!("{tunnels:?}"),
            format!("{:?}", default.tunnels),
            "--tunnel-idle-timeout"
        );
        let metrics = args.metrics_options();
        assert_eq!(
            metrics.per_route_latency,
            MetricsOptions::default().per_route_latency,
            "--metrics-per-route-latency"
        );
    }
}

#[test]
fn the_server_options_built_from_no_flags_are_the_proxy_crates_defaults() {
    for args in mk_default_proxy_args() {
        let ServerOptions {
            max_header_size,
            drain_timeout,
            handshake_timeout,
            header_timeout,
            idle_timeout,
            max_connections,
            http2_max_concurrent_streams,
            http2_keep_alive_interval,
            http2_keep_alive_timeout,
        } = args.server_options();
        let default = ServerOptions::default();
        assert_eq!(max_header_size, default.max_header_size, "--max-header-size");
        assert_eq!(drain_timeout, default.drain_timeout, "--drain-timeout");
        assert_eq!(handshake_timeout, default.handshake_timeout);
        assert_eq!(header_timeout, default.header_timeout, "--client-header-timeout");
        assert_eq!(idle_timeout, default.idle_timeout, "--client-idle-timeout");
        assert_eq!(max_connections, default.max_connections, "--max-connections");
        assert_eq!(
            http2_max_concurrent_streams, default.http2_max_concurrent_streams,
            "--http2-max-concurrent-streams"
        );
        assert_eq!(http2_keep_alive_interval, default.http2_keep_alive_interval);
        assert_eq!(http2_keep_alive_timeout, default.http2_keep_alive_timeout);
    }
}

#[test]
fn the_client_options_built_from_no_flags_are_the_proxy_crates_defaults() {
    for args in mk_default_proxy_args() {
        let ClientOptions {
            connect_timeout,
            pool_idle_timeout,
            max_connections_per_endpoint,
            tls,
        } = args.client_options().expect("no CA bundle to read");
        let default = ClientOptions::default();
        assert_eq!(connect_timeout, default.connect_timeout, "--connect-timeout");
        assert_eq!(pool_idle_timeout, default.pool_idle_timeout, "--upstream-idle-timeout");
        assert_eq!(
            max_connections_per_endpoint, default.max_connections_per_endpoint,
            "--upstream-max-connections"
        );
        assert_eq!(format!("{tls:?}"), format!("{:?}", default.tls), "--upstream-ca-bundle");
    }
}

#[test]
fn the_class_flags_default_to_the_compile_options_demo_uses() {
    let Command::Serve(serve) = Cli::try_parse_from(["shunt", "serve", "-f", "manifests"])
        .expect("valid arguments")
        .command
    else {
        panic!("not serve")
    };
    assert_eq!(serve.classes.compile_options(), CompileOptions::default());
}

#[test]
fn the_nginx_profile_flags_reach_the_compile_options() {
    let Command::Serve(serve) = Cli::try_parse_from([
        "shunt",
        "serve",
        "-f",
        "m",
        "--shadow-class",
        "nginx",
        "--class-profile",
        "shunt=nginx",
        "--nginx-configmap",
        "ops/nginx",
        "--nginx-default-backend",
        "ops/errors",
    ])
    .expect("valid arguments")
    .command
    else {
        panic!("not serve")
    };
    let options = serve.classes.compile_options();
    assert_eq!(options.shadow_classes[0].profile, crate::compile::Profile::Nginx);
    assert_eq!(options.class_profiles[0].to_string(), "shunt=nginx");
    assert_eq!(options.shadow.nginx_configmap, ("ops".to_string(), "nginx".to_string()));
    let errors = Some(("ops".to_string(), "errors".to_string()));
    assert_eq!(options.shadow.nginx_default_backend, errors);
    let bare = Cli::try_parse_from(["shunt", "serve", "-f", "m", "--class-profile", "shunt"]);
    assert!(bare.is_err(), "a class profile must name its profile");
}

#[test]
fn class_less_ingresses_cannot_be_claimed_twice_with_a_qcloud_shadow_class() {
    let parse = |extra: &[&str]| {
        let args = [
            &["shunt", "serve", "-f", "m", "--watch-ingress-without-class"][..],
            extra,
        ]
        .concat();
        let Command::Serve(serve) = Cli::try_parse_from(args).expect("valid arguments").command else {
            panic!("not serve")
        };
        serve.classes.check()
    };
    let error = parse(&["--shadow-class", "tke=qcloud"]).expect_err("two claims");
    assert!(error.to_string().contains("--shadow-class tke=qcloud"), "{error}");
    assert!(parse(&["--shadow-class", "nginx"]).is_ok());
}
