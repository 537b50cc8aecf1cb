//! A pod's response body: read by our HTTP/1.1 client, or by hyper's h2c client.

use std::{
    pin::Pin,
    task::{Context, Poll},
    time::Duration,
};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use hyper::body::Incoming;

use super::{BoxError, Lease, h1, read_idle::ReadIdle};

pub enum UpstreamBody {
    H1(h1::Body<Lease>),
    H2(Incoming),
    /// Either of the above under a route's own read timeout; boxed, so routes without one
    /// carry no timer.
    ReadIdle(Box<ReadIdle>),
}

impl Body for UpstreamBody {
    type Data = Bytes;
    type Error = BoxError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BoxError>>> {
        match self.get_mut() {
            UpstreamBody::H1(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            UpstreamBody::H2(body) => Pin::new(body).poll_frame(cx).map_err(Into::into),
            UpstreamBody::ReadIdle(body) => Pin::new(&mut **body).poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            UpstreamBody::H1(body) => body.is_end_stream(),
            UpstreamBody::H2(body) => body.is_end_stream(),
            UpstreamBody::ReadIdle(body) => body.is_end_stream(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            UpstreamBody::H1(body) => body.size_hint(),
            UpstreamBody::H2(body) => body.size_hint(),
            UpstreamBody::ReadIdle(body) => body.size_hint(),
        }
    }
}

impl UpstreamBody {
    /// This body with reads that may wait at most `timeout` each ([`ReadIdle`]).
    pub fn read_timeout(self, timeout: Duration) -> Self {
        UpstreamBody::ReadIdle(Box::new(ReadIdle::new(self, timeout)))
    }
}
