//! A read-only JSON document the admin listener serves with the table (a profile's report),
//! kept deflated: a 10k-host report is ~2.4 MiB of text, held for as long as its table, and
//! read only when someone asks for it.

use std::{
    fmt,
    io::{Read, Write},
    sync::Arc,
};

use flate2::{Compression, read::DeflateDecoder, write::DeflateEncoder};

/// JSON text, deflated. Equal texts deflate to equal bytes, so comparing two documents (a
/// publish skips an unchanged table) compares their texts; cloning copies one pointer.
#[derive(Clone, PartialEq, Eq)]
pub struct Document {
    deflated: Arc<[u8]>,
}

// === impl Document ===

impl Document {
    pub fn new(text: &str) -> Self {
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::fast());
        // Writing to a `Vec` cannot fail.
        let deflated = encoder
            .write_all(text.as_bytes())
            .and_then(|()| encoder.finish())
            .expect("deflating into memory");
        Document {
            deflated: deflated.into(),
        }
    }

    /// `value` as indented JSON text, deflated as it is written: the text is never held whole.
    pub fn json(value: &impl serde::Serialize) -> serde_json::Result<Self> {
        let mut encoder = DeflateEncoder::new(Vec::new(), Compression::fast());
        serde_json::to_writer_pretty(&mut encoder, value)?;
        // Writing to a `Vec` cannot fail.
        let deflated = encoder.finish().expect("deflating into memory");
        Ok(Document {
            deflated: deflated.into(),
        })
    }

    /// The text [`Document::new`] was given.
    pub fn text(&self) -> String {
        let mut text = String::new();
        // Only `new` makes the bytes: they inflate to the UTF-8 text it deflated.
        DeflateDecoder::new(&*self.deflated)
            .read_to_string(&mut text)
            .expect("a document inflates to its text");
        text
    }

    /// Bytes held.
    pub fn deflated_len(&self) -> usize {
        self.deflated.len()
    }
}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Document({} bytes deflated)", self.deflated.len())
    }
}

impl From<&str> for Document {
    fn from(text: &str) -> Self {
        Document::new(text)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn a_document_gives_back_its_text(text in ".{0,2000}") {
            prop_assert_eq!(Document::new(&text).text(), text);
        }

        #[test]
        fn a_json_document_is_the_indented_text_of_its_value(entries in prop::collection::btree_map("[a-z\"]{0,6}", prop::collection::vec(any::<u32>(), 0..4), 0..20)) {
            let text = serde_json::to_string_pretty(&entries).expect("a map of strings serializes");
            let document = Document::json(&entries).expect("a map of strings serializes");
            prop_assert_eq!(document.text(), text);
            prop_assert!(document == Document::json(&entries).expect("again"));
        }

        #[test]
        fn documents_are_equal_exactly_when_their_texts_are(a in "[ab]{0,40}", b in "[ab]{0,40}") {
            prop_assert_eq!(Document::new(&a) == Document::new(&b), a == b);
        }
    }

    #[test]
    fn a_repetitive_report_is_held_in_a_fraction_of_its_size() {
        let text: String = (0..2000)
            .map(|i| format!("{{\"host\": \"app-{i}.example.com\", \"verdict\": \"identical\"}},\n"))
            .collect();
        assert!(Document::new(&text).deflated_len() * 4 < text.len());
    }
}
