//! A read-only JSON document the admin listener serves with the table (a profile's report),
//! kept deflated: a 10k-host report is ~2.4 MiB of text, held for as long as its table, and
//! read only when someone asks for it.

use std::{
    fmt,
    io::{self, Write},
    sync::{Arc, OnceLock},
};

use flate2::{Compression, read::DeflateDecoder, write::DeflateEncoder};

/// JSON text, deflated: made at once, or when first read ([`Document::deferred_json`]). Equal
/// texts deflate to equal bytes, so comparing two documents (a publish skips an unchanged
/// table) compares their texts, without making either when both are one document; cloning
/// copies one pointer.
#[derive(Clone)]
pub struct Document {
    source: Arc<Source>,
}

struct Source {
    deflated: OnceLock<Box<[u8]>>,
    /// Writes the text of a deferred document; `None` when the bytes were made at once.
    write: Option<Writer>,
}

type Writer = Box<dyn Fn(&mut dyn Write) -> io::Result<()> + Send + Sync>;

// === impl Document ===

impl Document {
    pub fn new(text: &str) -> Self {
        Document::made(deflate(|out| out.write_all(text.as_bytes())).expect("deflating into memory"))
    }

    /// `value` as indented JSON text, deflated as it is written (the text is never held whole),
    /// when the document is first read or compared by text: a report of 10,000 hosts takes
    /// ~0.2 s to write, which no compile then waits for, and one nobody reads is never written.
    /// `value` must serialize.
    pub fn deferred_json(value: impl serde::Serialize + Send + Sync + 'static) -> Self {
        let write: Writer = Box::new(move |out| serde_json::to_writer_pretty(out, &value).map_err(io::Error::from));
        Document {
            source: Arc::new(Source {
                deflated: OnceLock::new(),
                write: Some(write),
            }),
        }
    }

    fn made(deflated: Box<[u8]>) -> Self {
        Document {
            source: Arc::new(Source {
                deflated: OnceLock::from(deflated),
                write: None,
            }),
        }
    }

    fn deflated(&self) -> &[u8] {
        self.source.deflated.get_or_init(|| {
            let write = (self.source.write.as_ref()).expect("a document without bytes has a writer");
            deflate(|out| write(out)).expect("a deferred document's value serializes")
        })
    }

    /// The text [`Document::new`] was given (or the JSON text).
    pub fn text(&self) -> String {
        let mut text = Vec::new();
        self.write_text(&mut text).expect("inflating into memory");
        // Only `deflate` makes the bytes: they inflate to the UTF-8 text it deflated.
        String::from_utf8(text).expect("a document inflates to its text")
    }

    /// Writes the text to `out` as it inflates, never holding it whole; the bytes written.
    pub fn write_text(&self, out: &mut impl Write) -> io::Result<u64> {
        io::copy(&mut DeflateDecoder::new(self.deflated()), out)
    }

    /// Bytes held (written first, if deferred).
    pub fn deflated_len(&self) -> usize {
        self.deflated().len()
    }

    /// Whether the text is written yet.
    pub fn is_written(&self) -> bool {
        self.source.deflated.get().is_some()
    }

    /// Whether `other` is this document (a clone of it): equal without reading either text.
    pub fn is_same(&self, other: &Document) -> bool {
        Arc::ptr_eq(&self.source, &other.source)
    }
}

/// What `write` writes, deflated.
fn deflate(write: impl FnOnce(&mut dyn Write) -> io::Result<()>) -> io::Result<Box<[u8]>> {
    let mut encoder = DeflateEncoder::new(Vec::new(), Compression::fast());
    write(&mut encoder)?;
    // Writing to a `Vec` cannot fail.
    Ok(encoder.finish().expect("deflating into memory").into())
}

impl PartialEq for Document {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.source, &other.source) || self.deflated() == other.deflated()
    }
}

impl Eq for Document {}

impl fmt::Debug for Document {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.source.deflated.get() {
            Some(deflated) => write!(f, "Document({} bytes deflated)", deflated.len()),
            None => f.write_str("Document(not written yet)"),
        }
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
            prop_assert_eq!(&Document::new(&text).text(), &text);
            let mut written = Vec::new();
            prop_assert_eq!(Document::new(&text).write_text(&mut written).expect("into memory"), text.len() as u64);
            prop_assert_eq!(written, text.into_bytes());
        }

        #[test]
        fn a_json_document_is_the_indented_text_of_its_value(entries in prop::collection::btree_map("[a-z\"]{0,6}", prop::collection::vec(any::<u32>(), 0..4), 0..20)) {
            let text = serde_json::to_string_pretty(&entries).expect("a map of strings serializes");
            let document = Document::deferred_json(entries.clone());
            prop_assert_eq!(document.text(), text);
            prop_assert!(document == Document::deferred_json(entries));
        }

        #[test]
        fn documents_are_equal_exactly_when_their_texts_are(a in "[ab]{0,40}", b in "[ab]{0,40}") {
            prop_assert_eq!(Document::new(&a) == Document::new(&b), a == b);
        }
    }

    #[test]
    fn a_deferred_document_is_written_when_first_read_and_once() {
        let writes = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        struct Counted(Arc<std::sync::atomic::AtomicUsize>);
        impl serde::Serialize for Counted {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                self.0.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                serializer.collect_map([("hosts", 3)])
            }
        }
        let document = Document::deferred_json(Counted(writes.clone()));
        let copy = document.clone();
        assert!(
            document == copy && !document.is_written(),
            "one document compares unwritten"
        );
        assert_eq!(writes.load(std::sync::atomic::Ordering::Relaxed), 0);
        assert_eq!(copy.text(), "{\n  \"hosts\": 3\n}");
        assert!(document.is_written());
        assert_eq!(document.text(), copy.text());
        assert_eq!(writes.load(std::sync::atomic::Ordering::Relaxed), 1);
        let made = Document::new("{\n  \"hosts\": 3\n}");
        assert!(
            made == document,
            "a deferred document equals the made one of the same text"
        );
    }

    #[test]
    fn a_repetitive_report_is_held_in_a_fraction_of_its_size() {
        let text: String = (0..2000)
            .map(|i| format!("{{\"host\": \"app-{i}.example.com\", \"verdict\": \"identical\"}},\n"))
            .collect();
        assert!(Document::new(&text).deflated_len() * 4 < text.len());
    }
}
