//! Start-up code does not stay resident: once the first table serves, the executable's
//! read-only mappings are paged out (`controller/src/residency.rs`), and serving faults back
//! only the code it runs.

use std::time::Duration;

use http::StatusCode;

use crate::support::{launch::Launch, *};

/// The executable's read-only mappings of process `pid`: (bytes mapped, bytes resident), from
/// `/proc/PID/smaps`.
fn executable_code(pid: u32) -> (u64, u64) {
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).expect("the process's executable");
    let smaps = std::fs::read_to_string(format!("/proc/{pid}/smaps")).expect("its smaps");
    let (mut mapped, mut resident, mut counting) = (0, 0, false);
    for line in smaps.lines() {
        let fields: Vec<&str> = line.split_whitespace().collect();
        if let Some((start, end)) = fields.first().and_then(|range| range.split_once('-')) {
            let read_only = fields.get(1).is_some_and(|perms| perms.starts_with("r-"));
            counting = read_only && fields.get(5).is_some_and(|path| exe.as_os_str() == *path);
            if counting {
                mapped += u64::from_str_radix(end, 16).unwrap() - u64::from_str_radix(start, 16).unwrap();
            }
        } else if counting && fields.first() == Some(&"Rss:") {
            resident += fields[1].parse::<u64>().unwrap() * 1024;
        }
    }
    (mapped, resident)
}

#[tokio::test]
async fn after_the_first_table_most_of_the_executables_code_is_not_resident() {
    let backend = Backend::start("web").await;
    let manifests = Manifests::new();
    let service = mk_backend_service("apps", "web", None, &[&backend]);
    let ingress = mk_ingress("apps", "web").rule("web.example.com", [mk_path("/", "Prefix", "web", 80)]);
    manifests.write("apps.yaml", &[&vec![service], &vec![ingress]]);
    // A copy of its own: pages many running tests share are not paged out, as they should not be.
    let copy = tempfile::tempdir().expect("a directory for the copy");
    let binary = copy.path().join("shunt");
    std::fs::copy(launch::binary(), &binary).expect("copying the binary under test");
    let launch = Launch::new_at(binary.as_os_str(), "serve");
    let shunt = Shunt::start_launched(launch, manifests.path(), &[], &["http", "https", "admin"]).await;
    let pid = shunt.pid();
    // Without the page-out, start-up leaves about 70 % of a debug build's code resident.
    let resident_share = eventually("start-up code to be paged out", Duration::from_secs(10), async || {
        assert_eq!(shunt.get("web.example.com", "/").await.status, StatusCode::OK);
        let (mapped, resident) = executable_code(pid);
        let share = resident as f64 / mapped as f64;
        (share < 0.5).then_some(share)
    })
    .await;
    assert!(resident_share > 0.0, "serving faults its code back in");
}
