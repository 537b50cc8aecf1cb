//! Whether a table to publish is the live one over again. A document not yet written compares
//! as the same document only, not by text: comparing two by text writes both (a deferred report
//! of 10,000 hosts takes ~0.2 s), on the compile's way to traffic, while publishing an equal table
//! instead costs a swap with every host taken over.

use std::collections::BTreeMap;

use crate::spec::{Document, TableSpec};

/// `old == new`, documents by identity.
pub(super) fn same_spec(old: &TableSpec, new: &TableSpec) -> bool {
    // Whole, so a new field is compared (or left out) on purpose.
    let TableSpec {
        hosts,
        default_backend,
        backends,
        tls,
        documents,
        ports,
    } = old;
    *hosts == new.hosts
        && *default_backend == new.default_backend
        && *backends == new.backends
        && *tls == new.tls
        && same_documents(documents, &new.documents)
        && *ports == new.ports
}

/// The same names for the same documents (or equal written ones).
pub(super) fn same_documents(old: &BTreeMap<String, Document>, new: &BTreeMap<String, Document>) -> bool {
    old.len() == new.len()
        && old
            .iter()
            .zip(new)
            .all(|((old_name, old), (new_name, new))| old_name == new_name && same_document(old, new))
}

fn same_document(old: &Document, new: &Document) -> bool {
    old.is_same(new) || (old.is_written() && new.is_written() && old == new)
}
