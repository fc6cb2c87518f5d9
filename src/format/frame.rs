//! Typed reads of stream frames, with the wire crate's [`Frame`] (built for speed): the hot path.
//!
//! Every streamed token arrives in a frame, so each format's frames are read by the wire crate
//! (`llm_baton_wire::frames`), in text order by [`Frame`], which builds no tree: values not asked
//! for are skipped (still checked), strings are borrowed from the frame's text unless they had
//! escapes, and nothing is copied until a delta owns it. The parts read once per stream (an
//! error, a usage, a block's start) come back as trees, which the formats turn into `Value`s
//! ([`from_tree`]) for the readers of [`super::json`], or read counts from with [`count`].
//!
//! The reads check what serde's derived `Option<T>` fields checked, in the same order: absent or
//! `null` is `None`, a value of another type is an error naming the field and quoting what was
//! there, and the first problem in the text is the one reported. Token counts never fail a frame
//! (see [`count`]).
//!
//! [`Frame`]: llm_baton_wire::frame::Frame
//! [`from_tree`]: crate::value::from_tree

use llm_baton_wire::json::Json;

/// A token count from a frame's tree, read as [`super::json::count_of_number`] reads one: never an
/// error, so a provider's odd count (fractional, negative, `1e400`, not a number) cannot fail a
/// stream whose text was already shown.
pub(crate) fn count(v: &Json) -> Option<u64> {
    let n = v.as_number()?;
    super::json::count_of_number(n.as_u64(), || crate::float::parse_f64(n.as_str()))
}

#[cfg(test)]
mod tests {
    use crate::value::from_tree;
    use llm_baton_wire::frame::Frame;
    use llm_baton_wire::json;

    #[test]
    fn type_errors_name_the_field_and_quote_the_value() {
        let mut f = Frame::new(r#"{"choices": "sk-x\"y", "index": -1, "n": 1.5, "t": 1, "s": null}"#);
        f.members("frame").unwrap();
        assert_eq!(f.key().unwrap().as_deref(), Some("choices"));
        assert_eq!(
            f.list("choices").unwrap_err(),
            r#"invalid type: `choices` is the string "sk-x\"y", expected a list"#
        );
        assert_eq!(f.key().unwrap().as_deref(), Some("index"));
        assert_eq!(
            f.index("choices[].index").unwrap_err(),
            "invalid type: `choices[].index` is the number -1, expected a whole number from 0 to 4294967295"
        );
        f.key().unwrap();
        assert_eq!(
            f.index("n").unwrap_err(),
            "invalid type: `n` is the number 1.5, expected a whole number from 0 to 4294967295"
        );
        f.key().unwrap();
        assert_eq!(f.boolean("t").unwrap_err(), "invalid type: `t` is the number 1, expected a boolean");
        f.key().unwrap();
        assert_eq!(f.string("s"), Ok(None));
        assert_eq!(f.key(), Ok(None));
        assert_eq!(f.end(), Ok(()));
        assert_eq!(
            Frame::new("true").members("frame").unwrap_err(),
            "invalid type: `frame` is the boolean true, expected an object"
        );
        let mut f = Frame::new("{");
        f.members("frame").unwrap();
        assert_eq!(f.key().unwrap_err(), "EOF while parsing an object at line 1 column 1");
    }

    #[test]
    fn values_keep_what_the_value_readers_saw() {
        let v =
            json::parse(r#"{"code": 429, "neg": -3, "f": 0.5, "huge": 1e400, "s": "x", "l": [null, true]}"#).unwrap();
        let expected =
            serde_json::json!({"code": 429, "neg": -3, "f": 0.5, "huge": "1e400", "s": "x", "l": [null, true]});
        assert_eq!(from_tree(&v), expected);
    }
}
