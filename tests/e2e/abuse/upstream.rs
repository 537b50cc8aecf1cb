//! Upstream faults and limits: connection caps, GOAWAY, refused streams, client aborts.
