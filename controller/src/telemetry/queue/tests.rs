use std::sync::{Arc, Mutex, mpsc};

use super::*;

/// A sink that records what reaches it; each write first waits for a permit when `gated`.
#[derive(Clone)]
struct MkSink {
    written: Arc<Mutex<Vec<u8>>>,
    permits: Option<Arc<Mutex<mpsc::Receiver<()>>>>,
}

impl Write for MkSink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        if let Some(permits) = &self.permits {
            // Bounded: a test that forgets to let lines through fails instead of hanging.
            let _ = permits.lock().unwrap().recv_timeout(Duration::from_secs(10));
        }
        self.written.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

fn mk_sink(gated: bool) -> (MkSink, Option<mpsc::Sender<()>>) {
    let (permit, permits) = mpsc::channel();
    let sink = MkSink {
        written: Arc::default(),
        permits: gated.then(|| Arc::new(Mutex::new(permits))),
    };
    (sink, gated.then_some(permit))
}

fn line(i: usize) -> String {
    format!("line {i}\n")
}

#[test]
fn every_line_below_the_bound_arrives_in_order_once_the_guard_flushes() {
    let (sink, _) = mk_sink(false);
    let (queue, guard, counts) = spawn(sink.clone(), 100, "test-log").unwrap();
    let expected: String = (0..100).map(line).collect();
    for i in 0..100 {
        (&queue).write_all(line(i).as_bytes()).unwrap();
    }
    drop(guard);
    assert_eq!(
        String::from_utf8(sink.written.lock().unwrap().clone()).unwrap(),
        expected
    );
    assert_eq!(counts.dropped(), 0);
}

#[test]
fn lines_past_the_bound_are_dropped_and_counted_while_the_sink_is_stalled() {
    let (sink, permit) = mk_sink(true);
    let permit = permit.unwrap();
    let (queue, guard, counts) = spawn(sink.clone(), 10, "test-log").unwrap();
    // The writer thread takes the first line and waits in the sink; it still counts as queued.
    for i in 0..25 {
        (&queue).write_all(line(i).as_bytes()).unwrap();
    }
    assert_eq!(counts.dropped(), 15);
    for _ in 0..10 {
        permit.send(()).unwrap();
    }
    drop(guard);
    let expected: String = (0..10).map(line).collect();
    assert_eq!(
        String::from_utf8(sink.written.lock().unwrap().clone()).unwrap(),
        expected
    );
    // Room again once the sink caught up.
    permit.send(()).unwrap();
    (&queue).write_all(line(99).as_bytes()).unwrap();
    let (done, flushed) = mpsc::sync_channel(1);
    queue.sender.send(Message::Flush(done)).unwrap();
    flushed.recv_timeout(Duration::from_secs(10)).unwrap();
    assert!(
        String::from_utf8(sink.written.lock().unwrap().clone())
            .unwrap()
            .ends_with(&line(99))
    );
    assert_eq!(counts.dropped(), 15);
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(32))]

    /// Whatever the bound and however many lines come while the sink is stalled, the first
    /// `limit` arrive whole and in order and every other one is counted as dropped.
    #[test]
    fn a_stalled_sink_gets_the_first_lines_up_to_the_bound_and_the_rest_are_counted(
        limit in 1usize..64,
        lines in proptest::collection::vec("[a-z]{0,40}", 0..128),
    ) {
        let (sink, permit) = mk_sink(true);
        let permit = permit.unwrap();
        let (queue, guard, counts) = spawn(sink.clone(), limit, "test-log").unwrap();
        for line in &lines {
            (&queue).write_all(format!("{line}\n").as_bytes()).unwrap();
        }
        let kept = lines.len().min(limit);
        proptest::prop_assert_eq!(counts.dropped(), (lines.len() - kept) as u64);
        for _ in 0..kept {
            permit.send(()).unwrap();
        }
        drop(guard);
        let expected: String = lines[..kept].iter().map(|line| format!("{line}\n")).collect();
        proptest::prop_assert_eq!(String::from_utf8(sink.written.lock().unwrap().clone()).unwrap(), expected);
    }
}
