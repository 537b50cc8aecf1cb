//! A troubled API keeps the last table serving: dropped watches, 410 Gone (as an event and as a
//! status), 500s and a full outage. Traffic runs throughout and must not see one failure, and
//! a change made once the API answers again is applied.

use std::time::Duration;

use super::{Backend, Cluster, Gone, Load, LoadReport, Recorded, Shunt, eventually, host, until_served_by};

/// kube-runtime's default backoff grows from 0.8 s with jitter; a few retries fit in this.
const RECOVERY: Duration = Duration::from_secs(15);

fn lists_of(requests: &[Recorded], plural: &str) -> usize {
    requests.iter().filter(|r| r.is_list_of(plural)).count()
}

/// `web` served under load, and a second origin, `web-2`, to move it to once the API is back.
struct UnderLoad {
    cluster: Cluster,
    shunt: Shunt,
    load: Load,
    next: Backend,
}

impl UnderLoad {
    async fn start() -> UnderLoad {
        let cluster = Cluster::start(&["web"]).await;
        let shunt = cluster.shunt("shunt-0", &[]).await;
        let load = shunt.load(&host("web"));
        let next = Backend::pod("web-2").start().await;
        UnderLoad {
            cluster,
            shunt,
            load,
            next,
        }
    }

    /// Moves `web` to `web-2` and waits (bounded) until traffic follows; then stops the load and
    /// checks that not one of its requests failed.
    async fn move_and_finish(self) -> (Cluster, LoadReport) {
        let UnderLoad {
            cluster,
            shunt,
            load,
            next,
        } = self;
        cluster.point("web", &next);
        until_served_by(&shunt, &host("web"), "web-2", RECOVERY).await;
        let report = load.finish().await;
        let failed = &report.failed;
        let total = report.succeeded() + failed.len();
        assert!(
            failed.is_empty(),
            "{} of {total} requests failed: {failed:?}",
            failed.len()
        );
        assert!(report.succeeded() > 0, "the load made no requests");
        (cluster, report)
    }
}

#[tokio::test]
async fn a_dropped_watch_resumes_from_its_version_without_losing_a_change() {
    let run = UnderLoad::start().await;
    let lists_before = lists_of(&run.cluster.api.requests(), "endpointslices");

    // The move comes right after the cut, while the watches reconnect: the resumed watch must
    // replay it.
    run.cluster.api.cut_watches();
    let (cluster, _) = run.move_and_finish().await;

    let requests = cluster.api.requests();
    let lists = lists_of(&requests, "endpointslices");
    assert_eq!(lists, lists_before, "a resumed watch needs no new list");
    let rewatches = requests.iter().filter(|r| r.is_watch_of("endpointslices")).count();
    assert!(rewatches >= 2, "the EndpointSlice watch was not resumed");
}

#[tokio::test]
async fn an_expired_resource_version_relists_and_keeps_serving() {
    let run = UnderLoad::start().await;
    let api = &run.cluster.api;
    let lists_before = lists_of(&api.requests(), "endpointslices");

    // Every kind's next watch hears 410 Gone in an ERROR event, as after etcd compaction.
    api.gone_next_watches(5, Gone::Event);
    api.cut_watches();
    eventually("all five watches to hear 410", RECOVERY, async || {
        (api.gone_pending() == 0).then_some(())
    })
    .await;
    // The move comes after the last watch ended: only a new list can bring it.
    let (cluster, _) = run.move_and_finish().await;

    let relisted = lists_of(&cluster.api.requests(), "endpointslices") - lists_before;
    assert!(relisted >= 1, "410 Gone must lead to a new list");
}

#[tokio::test]
async fn watches_answered_410_or_500_are_retried_while_traffic_flows() {
    let run = UnderLoad::start().await;
    let api = &run.cluster.api;

    api.gone_next_watches(5, Gone::Http);
    api.cut_watches();
    tokio::time::sleep(Duration::from_millis(300)).await;
    api.set_failing(true);
    api.cut_watches();
    tokio::time::sleep(Duration::from_millis(1500)).await;
    api.set_failing(false);
    let (cluster, _) = run.move_and_finish().await;

    let requests = cluster.api.requests();
    assert!(requests.iter().any(|r| r.status == 410), "no watch was answered 410");
    assert!(requests.iter().any(|r| r.status == 500), "no request was answered 500");
}

#[tokio::test]
async fn a_full_api_outage_keeps_the_last_table_serving() {
    let run = UnderLoad::start().await;

    run.cluster.api.stop();
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        run.shunt.readyz().await,
        Some(http::StatusCode::OK),
        "still ready without the API"
    );
    run.cluster.api.restart();
    let (_, report) = run.move_and_finish().await;

    let served_by_web = report.by_backend.get("web").copied().unwrap_or(0);
    assert!(
        served_by_web > 50,
        "traffic kept reaching web during the outage: {report:?}"
    );
}
