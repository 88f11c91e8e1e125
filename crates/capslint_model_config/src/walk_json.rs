//! JSON: serde_json's parser walks the text once, building no tree, within its recursion limit of 128
//! levels. Keys are taken raw, so their byte offsets are known; an integer's span is read off the text
//! after its key, where the parser has just validated it.

use std::borrow::Cow;
use std::fmt;

use ruff_text_size::{TextRange, TextSize};
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

use super::all_cores_in_config::{is_all_cores, is_thread_count_key};
use super::candidate::{Candidate, Found, Syntax};
use super::path::{self, Segment};

/// The all-cores thread-count keys of a JSON text that starts at byte `base` of its file (at most
/// [`super::candidate::MAX_CANDIDATES`]); an error when the text is not JSON (or nests deeper than 128
/// levels).
pub fn candidates(text: &str, base: TextSize) -> Result<Found, serde_json::Error> {
    let mut walk = Walk { text, base, path: Vec::new(), found: Found::default() };
    let mut deserializer = serde_json::Deserializer::from_str(text);
    Value(&mut walk).deserialize(&mut deserializer)?;
    deserializer.end()?;
    Ok(walk.found)
}

/// The state of one walk.
struct Walk<'de> {
    text: &'de str,
    base: TextSize,
    /// The keys and indices from the root to the value being read.
    path: Vec<Segment<'de>>,
    found: Found,
}

impl<'de> Walk<'de> {
    /// The byte offset of `slice`, a slice of the text.
    fn offset_of(&self, slice: &str) -> Option<usize> {
        let offset = (slice.as_ptr() as usize).checked_sub(self.text.as_ptr() as usize)?;
        (offset + slice.len() <= self.text.len()).then_some(offset)
    }

    /// Where the integer written after the key that ends at `key_end` ends: past the blanks and the `:`,
    /// an optional `-` and the digits.
    fn integer_end(&self, key_end: usize) -> Option<usize> {
        let bytes = self.text.as_bytes();
        let skip = |mut at: usize, wanted: fn(&u8) -> bool| {
            while bytes.get(at).is_some_and(wanted) {
                at += 1;
            }
            at
        };
        let blank = |byte: &u8| matches!(byte, b' ' | b'\t' | b'\n' | b'\r');
        let colon = skip(key_end, blank);
        if bytes.get(colon) != Some(&b':') {
            return None;
        }
        let start = skip(colon + 1, blank);
        let digits = if bytes.get(start) == Some(&b'-') { start + 1 } else { start };
        Some(skip(digits, u8::is_ascii_digit))
    }

    /// Records `key` (written raw at `raw`) with the integer `value`, when it means every core.
    fn integer(&mut self, raw: &str, key: &str, value: i64) {
        if !is_all_cores(key, value) {
            return;
        }
        if self.found.candidates.len() >= super::candidate::MAX_CANDIDATES {
            self.found.truncated = true;
            return;
        }
        let Some(key_start) = self.offset_of(raw) else { return };
        let Some(end) = self.integer_end(key_start + raw.len()) else { return };
        let path = path::render(self.path.iter().chain(std::iter::once(&Segment::Key(Cow::Borrowed(key)))));
        let range = TextRange::new(TextSize::from(key_start as u32), TextSize::from(end as u32)) + self.base;
        self.found.push(Candidate { key: key.to_string(), path, value, range, syntax: Syntax::Json });
    }
}

/// A raw key's text: the characters between the quotes, decoded when the key has escapes.
fn decode(raw: &str) -> Option<Cow<'_, str>> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    if inner.contains('\\') {
        serde_json::from_str::<String>(raw).ok().map(Cow::Owned)
    } else {
        Some(Cow::Borrowed(inner))
    }
}

/// Reads any value: its integer, if it is one; mappings and sequences are walked.
struct Value<'w, 'de>(&'w mut Walk<'de>);

impl<'de> DeserializeSeed<'de> for Value<'_, 'de> {
    type Value = Option<i64>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<i64>, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Value<'_, 'de> {
    type Value = Option<i64>;

    fn expecting(&self, formatter: &mut fmt::Formatter<'_>) -> fmt::Result {
        formatter.write_str("a JSON value")
    }

    fn visit_unit<E: de::Error>(self) -> Result<Option<i64>, E> {
        Ok(None)
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Option<i64>, E> {
        Ok(None)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Option<i64>, E> {
        Ok(None)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Option<i64>, E> {
        Ok(None)
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Option<i64>, E> {
        Ok(Some(value))
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Option<i64>, E> {
        Ok(Some(i64::try_from(value).unwrap_or(i64::MAX)))
    }

    /// The entries of a mapping; the integer of a thread-count key is recorded when it means every core.
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Option<i64>, A::Error> {
        let walk = self.0;
        while let Some(raw) = map.next_key::<&'de RawValue>()? {
            let raw = raw.get();
            let Some(key) = decode(raw) else { return Err(de::Error::custom("a key that is not a string")) };
            walk.path.push(Segment::Key(key.clone()));
            let value = map.next_value_seed(Value(walk))?;
            walk.path.pop();
            if let Some(value) = value
                && is_thread_count_key(&key)
            {
                walk.integer(raw, &key, value);
            }
        }
        Ok(None)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<i64>, A::Error> {
        let walk = self.0;
        let mut index = 0;
        loop {
            walk.path.push(Segment::Index(index));
            let more = seq.next_element_seed(Value(walk))?;
            walk.path.pop();
            if more.is_none() {
                return Ok(None);
            }
            index += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(text: &str) -> Vec<(String, String)> {
        candidates(text, TextSize::from(0))
            .map(|found| found.candidates)
            .unwrap()
            .into_iter()
            .map(|candidate| (candidate.path, text[candidate.range].to_string()))
            .collect()
    }

    #[test]
    fn keys_at_any_depth_with_exact_spans() {
        let text = "{\"model\": {\"params\": {\"n_jobs\" :  -1, \"nthread\": 0}},\n \"trials\": [{\"cv_n_jobs\": -2}]}";
        assert_eq!(
            found(text),
            [
                ("model.params.n_jobs".to_string(), "\"n_jobs\" :  -1".to_string()),
                ("model.params.nthread".to_string(), "\"nthread\": 0".to_string()),
                ("trials[0].cv_n_jobs".to_string(), "\"cv_n_jobs\": -2".to_string()),
            ]
        );
    }

    #[test]
    fn only_integers_at_mapping_level() {
        for text in [
            "{\"n_jobs\": 4}",
            "{\"n_jobs\": \"-1\"}",
            "{\"n_jobs\": -1.0}",
            "{\"n_jobs\": [-1, 2]}",
            "{\"description\": \"n_jobs: -1 means all\"}",
            "[-1, 0, -1]",
            "{\"n_jobs\": null, \"thread_count\": 0}",
            "{\"N_JOBS\": -1}",
        ] {
            assert!(found(text).is_empty(), "{text}");
        }
    }

    #[test]
    fn a_thread_count_key_holding_a_mapping_is_walked() {
        assert_eq!(
            found("{\"n_jobs\": {\"n_jobs\": -1}}"),
            [("n_jobs.n_jobs".to_string(), "\"n_jobs\": -1".to_string())]
        );
    }

    #[test]
    fn escaped_keys_are_decoded_and_spanned() {
        let text = "{\"n\\u005fjobs\": -1}";
        assert_eq!(found(text), [("n_jobs".to_string(), "\"n\\u005fjobs\": -1".to_string())]);
    }

    #[test]
    fn the_base_offset_is_added() {
        let text = "{\"n_jobs\": -1}";
        let candidate = candidates(text, TextSize::from(3)).unwrap().candidates.remove(0);
        assert_eq!(u32::from(candidate.range.start()), 4);
    }

    #[test]
    fn invalid_and_too_deep_json_is_an_error() {
        assert!(candidates("{\"n_jobs\": -1,}", TextSize::from(0)).is_err());
        assert!(candidates("// comment\n{\"n_jobs\": -1}", TextSize::from(0)).is_err());
        assert!(candidates("{\"n_jobs\": -1} trailing", TextSize::from(0)).is_err());
        let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
        assert!(candidates(&deep, TextSize::from(0)).is_err());
        let deep_maps = format!("{}1{}", "{\"n_jobs\":".repeat(129), "}".repeat(129));
        assert!(candidates(&deep_maps, TextSize::from(0)).is_err());
    }
}
