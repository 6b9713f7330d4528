//! Bound values in the catalog's JSON: `Datum` has no serde form of its own, so a value is
//! written as its type and its text form (the type's output function) and read back with the
//! type's input function: `{"type":"Int4","text":"10"}`, or `null` for NULL. The text form
//! round-trips every type keel stores (floats print shortest-exact, numerics keep their
//! scale); composite values are not supported as bound values.

use keel_types::{Datum, SqlType, TypeId};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

#[derive(Serialize)]
struct TextOut<'a> {
    #[serde(rename = "type")]
    ty: TypeId,
    text: &'a str,
}

#[derive(Deserialize)]
struct TextIn {
    #[serde(rename = "type")]
    ty: TypeId,
    text: String,
}

/// A borrowed value in its serialized form.
struct Out<'a>(&'a Datum);

impl Serialize for Out<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let Some(ty) = self.0.natural_type() else {
            return s.serialize_none();
        };
        let mut text = String::new();
        keel_types::io::format_text(self.0, ty, &mut text);
        s.serialize_some(&TextOut { ty, text: &text })
    }
}

fn parse<E: serde::de::Error>(v: Option<TextIn>) -> Result<Datum, E> {
    match v {
        None => Ok(Datum::Null),
        Some(TextIn { ty, text }) => keel_types::io::parse_text(&text, SqlType::new(ty))
            .map_err(|e| E::custom(format!("bad {ty:?} bound value {text:?}: {e}"))),
    }
}

/// `#[serde(with = ...)]` for one `Datum`.
pub(super) mod one {
    use super::*;

    pub fn serialize<S: Serializer>(value: &Datum, s: S) -> Result<S::Ok, S::Error> {
        Out(value).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Datum, D::Error> {
        parse(Option::<TextIn>::deserialize(d)?)
    }
}

/// `#[serde(with = ...)]` for a list of `Datum`s.
pub(super) mod list {
    use super::*;

    pub fn serialize<S: Serializer>(values: &[Datum], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(values.iter().map(Out))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Datum>, D::Error> {
        Vec::<Option<TextIn>>::deserialize(d)?
            .into_iter()
            .map(parse::<D::Error>)
            .collect()
    }
}
