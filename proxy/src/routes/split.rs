//! A route's weighted split over several backends (see `spec::BackendSplit`): each request
//! draws one choice, a choice of weight `w` taking `w / sum` of them. A choice whose backend
//! did not resolve, or a split whose weights are all 0, answers 500.

use std::sync::Arc;

use super::edits::HeaderEdits;
use crate::{
    spec::{BackendSplit, MAX_CHOICES},
    upstream::Upstream,
};

#[derive(Debug)]
pub struct Split {
    /// Must not be empty.
    choices: Box<[SplitTarget]>,
    /// The sum of the weights; 0 answers every request with 500.
    total: u64,
}

/// One choice of a split, as the request path uses it.
#[derive(Debug)]
pub struct SplitTarget {
    /// `None`: the reference did not resolve; its share is answered with 500.
    pub upstream: Option<Arc<Upstream>>,
    weight: u32,
    /// After the route's own.
    pub request_headers: Option<HeaderEdits>,
    pub response_headers: Option<HeaderEdits>,
}

impl Split {
    /// The split with each named backend's upstream from `upstream`, or why it cannot serve
    /// (a named backend missing from the table, a bad header edit).
    pub fn new(spec: &BackendSplit, mut upstream: impl FnMut(&str) -> Option<Arc<Upstream>>) -> Result<Self, String> {
        if spec.choices.is_empty() || spec.choices.len() > MAX_CHOICES {
            return Err(format!(
                "a split of {} backends (1 to {MAX_CHOICES})",
                spec.choices.len()
            ));
        }
        let choices = spec
            .choices
            .iter()
            .map(|choice| {
                let upstream = match &choice.backend {
                    None => None,
                    Some(id) => Some(upstream(id).ok_or_else(|| format!("split backend {id} is not in the table"))?),
                };
                let edits = |edits: &Option<_>, what| edits.as_ref().map(|e| HeaderEdits::new(e, what)).transpose();
                Ok(SplitTarget {
                    upstream,
                    weight: choice.weight,
                    request_headers: edits(&choice.request_headers, "request")?,
                    response_headers: edits(&choice.response_headers, "response")?,
                })
            })
            .collect::<Result<Box<[_]>, String>>()?;
        Ok(Split {
            total: spec.total_weight(),
            choices,
        })
    }

    /// This request's choice, or `None` when every weight is 0.
    pub fn draw(&self) -> Option<&SplitTarget> {
        self.draw_with(|total| fastrand::u64(..total))
    }

    /// `point(total)` is uniform in `0..total` (the canary's generator, or a test's seeded one).
    pub fn draw_with(&self, point: impl FnOnce(u64) -> u64) -> Option<&SplitTarget> {
        if self.total == 0 {
            return None;
        }
        let mut point = point(self.total);
        for choice in &self.choices {
            let weight = u64::from(choice.weight);
            if point < weight {
                return Some(choice);
            }
            point -= weight;
        }
        None
    }

    /// Every backend's upstream the split names.
    pub fn upstreams(&self) -> impl Iterator<Item = &Arc<Upstream>> {
        self.choices.iter().filter_map(|choice| choice.upstream.as_ref())
    }
}

#[cfg(test)]
mod tests;
