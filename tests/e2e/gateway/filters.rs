//! Filters.
