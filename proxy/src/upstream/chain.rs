//! Upstream failures told apart by type, never by text: a walk down an error's source chain.

use std::error::Error as StdError;

/// The pod's connection is going away: new streams must go to a new one.
pub fn is_going_away(error: &(dyn StdError + 'static)) -> bool {
    chain_has(error, |e: &h2::Error| e.is_go_away())
}

/// Whether some error in `error`'s source chain is an `E` that passes `test`.
pub fn chain_has<E: StdError + 'static>(error: &(dyn StdError + 'static), test: impl Fn(&E) -> bool) -> bool {
    let mut current = Some(error);
    while let Some(error) = current {
        if error.downcast_ref::<E>().is_some_and(&test) {
            return true;
        }
        current = error.source();
    }
    false
}
