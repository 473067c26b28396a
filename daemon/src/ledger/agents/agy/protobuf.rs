//! The protobuf wire format, as far as agy's usage needs it: the fields of
//! one message, each a varint or a length-delimited payload (a nested
//! message), read without a schema. Hand-written because it is these
//! few lines: prost (here for OTLP) decodes messages whose schema it has,
//! and its wire-level functions are hidden, internal to its generated code.
//!
//! A message is read in one pass that keeps only the fields asked for
//! ([`last_of`]): however many fields a blob holds (millions of tiny ones
//! included), reading it costs nothing beyond the blob itself.

/// One field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// A fixed 32- or 64-bit value, skipped.
    Fixed,
}

/// The last value of each field of `numbers` in the message `bytes` holds
/// (protobuf's rule for a field written twice, whatever the wire type of
/// the earlier ones), `None` in its place for a field not there; `None`
/// when the bytes are not a well-formed message, wherever it breaks: the
/// whole message is read, and only the fields asked for are kept.
pub(super) fn last_of<'a, const N: usize>(mut bytes: &'a [u8], numbers: [u64; N]) -> Option<[Option<Field<'a>>; N]> {
    let mut found = [None; N];
    while !bytes.is_empty() {
        let (number, value) = next_field(&mut bytes)?;
        if let Some(at) = numbers.iter().position(|&wanted| wanted == number) {
            found[at] = Some(value);
        }
    }
    Some(found)
}

/// The field `bytes` starts with, and `bytes` moved past it; `None` when
/// it is not a well-formed field.
fn next_field<'a>(bytes: &mut &'a [u8]) -> Option<(u64, Field<'a>)> {
    let key = varint(bytes)?;
    let value = match key & 7 {
        0 => Field::Varint(varint(bytes)?),
        1 => Field::Fixed.skip(bytes, 8)?,
        2 => {
            let length = usize::try_from(varint(bytes)?).ok()?;
            let (payload, rest) = (bytes.get(..length)?, bytes.get(length..)?);
            *bytes = rest;
            Field::Bytes(payload)
        }
        5 => Field::Fixed.skip(bytes, 4)?,
        _ => return None,
    };
    Some((key >> 3, value))
}

impl<'a> Field<'a> {
    fn skip(self, bytes: &mut &[u8], width: usize) -> Option<Field<'a>> {
        *bytes = bytes.get(width..)?;
        Some(self)
    }
}

fn varint(bytes: &mut &[u8]) -> Option<u64> {
    let mut value = 0u64;
    for shift in (0..64).step_by(7) {
        let (&byte, rest) = bytes.split_first()?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f).checked_shl(shift)?;
        if byte & 0x80 == 0 {
            return Some(value);
        }
    }
    None
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;

    /// A message's bytes from its fields, for fixtures (encoded by prost).
    pub(crate) fn encode(fields: &[(u32, Encoded<'_>)]) -> Vec<u8> {
        use prost::encoding::{WireType, encode_key, encode_varint};
        let mut out = Vec::new();
        for (number, value) in fields {
            match value {
                Encoded::Varint(n) => {
                    encode_key(*number, WireType::Varint, &mut out);
                    encode_varint(*n, &mut out);
                }
                Encoded::Bytes(bytes) => {
                    encode_key(*number, WireType::LengthDelimited, &mut out);
                    encode_varint(bytes.len() as u64, &mut out);
                    out.extend_from_slice(bytes);
                }
            }
        }
        out
    }

    pub(crate) enum Encoded<'a> {
        Varint(u64),
        Bytes(&'a [u8]),
    }

    #[test]
    fn fields_round_trip_and_broken_bytes_are_none() {
        let bytes = encode(&[(2, Encoded::Varint(300)), (4, Encoded::Bytes(b"abc")), (2, Encoded::Varint(7))]);
        assert_eq!(last_of(&bytes, [2, 4, 9]), Some([Some(Field::Varint(7)), Some(Field::Bytes(b"abc")), None]));
        assert_eq!(last_of(&bytes[..bytes.len() - 1], [4]), None, "a truncated varint, after the field asked for");
        assert_eq!(last_of(&[0x22, 0x05, b'a'], [4]), None, "a payload longer than the bytes");
        assert_eq!(last_of(&[0x0b], [1]), None, "a group, which no message here has");
        assert_eq!(last_of(&[0xff; 11], [1]), None, "a varint longer than 64 bits");
        assert_eq!(last_of(&[0x09, 1, 2, 3], [1]), None, "a fixed 64-bit value cut short");
        assert_eq!(last_of(&[], [1]), Some([None]));
    }

    /// The last occurrence wins whatever its wire type, and a field's
    /// earlier value of another type is forgotten.
    #[test]
    fn the_last_occurrence_wins_whatever_its_type() {
        let bytes = encode(&[(3, Encoded::Bytes(b"x")), (3, Encoded::Varint(5))]);
        assert_eq!(last_of(&bytes, [3]), Some([Some(Field::Varint(5))]));
        let mut fixed = bytes.clone();
        fixed.extend_from_slice(&[0x1d, 0, 0, 0, 0]);
        assert_eq!(last_of(&fixed, [3]), Some([Some(Field::Fixed)]));
    }

    /// Millions of tiny fields cost nothing to read past (one pass, only
    /// the fields asked for kept), and one broken byte at the very end is
    /// still found.
    #[test]
    fn millions_of_tiny_fields_are_read_past() {
        let mut bytes = [0x08, 0x01].repeat(2_000_000);
        bytes.extend(encode(&[(4, Encoded::Varint(9))]));
        assert_eq!(last_of(&bytes, [4, 1]), Some([Some(Field::Varint(9)), Some(Field::Varint(1))]));
        bytes.push(0x80);
        assert_eq!(last_of(&bytes, [4]), None);
    }
}
