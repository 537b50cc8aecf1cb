//! The read timeout counts each wait for the pod, not the whole body (paused clock).

use std::{
    convert::Infallible,
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use tokio::sync::mpsc;

use super::{ReadIdle, ReadTimeout};

type Item = Result<Frame<Bytes>, Infallible>;

/// A body fed by the test, one chunk at a time.
struct Feed(mpsc::Receiver<Item>);

impl futures::Stream for Feed {
    type Item = Item;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Item>> {
        self.0.poll_recv(cx)
    }
}

fn mk_body(timeout: Duration) -> (mpsc::Sender<Item>, ReadIdle<StreamBody<Feed>>) {
    let (tx, rx) = mpsc::channel(4);
    (tx, ReadIdle::new(StreamBody::new(Feed(rx)), timeout))
}

fn chunk(text: &'static str) -> Item {
    Ok(Frame::data(Bytes::from_static(text.as_bytes())))
}

#[tokio::test(start_paused = true)]
async fn chunks_closer_than_the_timeout_keep_the_body_alive_past_it_in_total() {
    let (tx, mut body) = mk_body(Duration::from_secs(3));
    tokio::spawn(async move {
        for text in ["a", "b", "c", "d"] {
            tokio::time::sleep(Duration::from_secs(2)).await;
            tx.send(chunk(text)).await.expect("the body is read");
        }
    });
    let mut read = Vec::new();
    while let Some(frame) = body.frame().await {
        read.extend_from_slice(&frame.expect("no timeout").into_data().expect("data"));
    }
    assert_eq!(read, b"abcd");
}

#[tokio::test(start_paused = true)]
async fn a_wait_longer_than_the_timeout_ends_the_body_with_a_read_timeout() {
    let (tx, mut body) = mk_body(Duration::from_secs(3));
    tx.send(chunk("a")).await.expect("open");
    let first = body.frame().await.expect("a frame").expect("in time");
    assert_eq!(first.into_data().expect("data"), "a");
    let started = tokio::time::Instant::now();
    let error = body.frame().await.expect("an end").expect_err("a timeout");
    assert!(error.downcast_ref::<ReadTimeout>().is_some(), "{error}");
    assert_eq!(started.elapsed(), Duration::from_secs(3));
    drop(tx);
}
