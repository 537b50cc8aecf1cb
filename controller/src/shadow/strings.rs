//! A list of strings that is nearly always empty (a verdict's reasons and annotation keys): one
//! pointer, nothing allocated while empty. Every verdict is kept while its host group stands, so
//! at 10,000 hosts three such lists as `Vec`s cost 0.5 MiB of inline room alone.

use std::{
    fmt,
    ops::{Deref, DerefMut},
};

use serde::{Serialize, Serializer};

/// Reads as a `Vec<String>`; the first write allocates.
#[derive(Clone, Default)]
#[expect(clippy::box_collection, reason = "a Vec is three words; this is one while empty")]
pub struct Strings(Option<Box<Vec<String>>>);

static EMPTY: Vec<String> = Vec::new();

impl Strings {
    pub fn is_empty(&self) -> bool {
        self.0.as_ref().is_none_or(|list| list.is_empty())
    }

    /// Sorted and deduplicated, with no spare room; holds nothing again when empty.
    pub fn settle(&mut self) {
        match &mut self.0 {
            Some(list) if list.is_empty() => self.0 = None,
            Some(list) => {
                list.sort();
                list.dedup();
                list.shrink_to_fit();
            }
            None => {}
        }
    }
}

impl Deref for Strings {
    type Target = Vec<String>;

    fn deref(&self) -> &Vec<String> {
        self.0.as_deref().unwrap_or(&EMPTY)
    }
}

impl DerefMut for Strings {
    fn deref_mut(&mut self) -> &mut Vec<String> {
        self.0.get_or_insert_default()
    }
}

impl From<Vec<String>> for Strings {
    fn from(list: Vec<String>) -> Self {
        Strings((!list.is_empty()).then(|| Box::new(list)))
    }
}

impl FromIterator<String> for Strings {
    fn from_iter<I: IntoIterator<Item = String>>(items: I) -> Self {
        Strings::from(items.into_iter().collect::<Vec<_>>())
    }
}

/// Equal when the lists are: an emptied list equals one never written.
impl PartialEq for Strings {
    fn eq(&self, other: &Self) -> bool {
        **self == **other
    }
}

impl Eq for Strings {}

impl<T> PartialEq<T> for Strings
where
    Vec<String>: PartialEq<T>,
{
    fn eq(&self, other: &T) -> bool {
        **self == *other
    }
}

impl fmt::Debug for Strings {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        (**self).fmt(f)
    }
}

impl Serialize for Strings {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        (**self).serialize(serializer)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        #[test]
        fn strings_read_and_settle_as_a_sorted_deduplicated_vec(
            items in prop::collection::vec("[a-c]{0,2}", 0..6),
            extra in prop::collection::vec("[a-c]{0,2}", 0..3),
        ) {
            let mut strings = Strings::from(items.clone());
            strings.extend(extra.iter().cloned());
            let mut expected: Vec<String> = items.into_iter().chain(extra).collect();
            prop_assert_eq!(&*strings, &expected);
            prop_assert_eq!(serde_json::to_string(&strings).unwrap(), serde_json::to_string(&expected).unwrap());
            strings.settle();
            expected.sort();
            expected.dedup();
            prop_assert_eq!(&*strings, &expected);
            prop_assert_eq!(strings.is_empty(), expected.is_empty());
            prop_assert_eq!(strings.0.is_none(), expected.is_empty());
        }
    }

    #[test]
    fn an_emptied_list_holds_nothing_once_settled_and_equals_a_new_one() {
        let mut strings = Strings::default();
        strings.sort();
        assert!(strings.0.is_some());
        assert_eq!(strings, Strings::default());
        strings.settle();
        assert!(strings.0.is_none());
        assert_eq!(size_of::<Strings>(), size_of::<usize>());
    }
}
