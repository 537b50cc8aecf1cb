//! Shared clusters: refused DNS rewrites and several releases managing one Corefile.
