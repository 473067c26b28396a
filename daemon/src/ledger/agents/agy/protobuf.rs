//! The protobuf wire format, as far as agy's usage needs it: the fields of
//! one message, each a varint or a length-delimited payload (a nested
//! message), read without a schema. Hand-written because it is these forty
//! lines: prost (here for OTLP) decodes messages whose schema it has, and
//! its wire-level functions are hidden, internal to its generated code.

/// One field's value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Field<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    /// A fixed 32- or 64-bit value, skipped.
    Fixed,
}

/// The fields of the message `bytes` holds, in order; `None` when the
/// bytes are not a well-formed message.
pub(super) fn fields(mut bytes: &[u8]) -> Option<Vec<(u64, Field<'_>)>> {
    let mut fields = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let value = match key & 7 {
            0 => Field::Varint(varint(&mut bytes)?),
            1 => Field::Fixed.skip(&mut bytes, 8)?,
            2 => {
                let length = usize::try_from(varint(&mut bytes)?).ok()?;
                let (payload, rest) = (bytes.get(..length)?, bytes.get(length..)?);
                bytes = rest;
                Field::Bytes(payload)
            }
            5 => Field::Fixed.skip(&mut bytes, 4)?,
            _ => return None,
        };
        fields.push((key >> 3, value));
    }
    Some(fields)
}

impl<'a> Field<'a> {
    fn skip(self, bytes: &mut &[u8], width: usize) -> Option<Field<'a>> {
        *bytes = bytes.get(width..)?;
        Some(self)
    }
}

/// The last value of field `number` (protobuf's rule for a field written
/// twice).
pub(super) fn last<'a>(fields: &[(u64, Field<'a>)], number: u64) -> Option<Field<'a>> {
    fields.iter().rev().find(|(at, _)| *at == number).map(|(_, value)| *value)
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
        let read = fields(&bytes).unwrap();
        assert_eq!(last(&read, 2), Some(Field::Varint(7)));
        assert_eq!(last(&read, 4), Some(Field::Bytes(b"abc")));
        assert_eq!(fields(&bytes[..bytes.len() - 1]), None, "a truncated varint");
        assert_eq!(fields(&[0x22, 0x05, b'a']), None, "a payload longer than the bytes");
        assert_eq!(fields(&[0x0b]), None, "a group, which no message here has");
        assert_eq!(fields(&[0xff; 11]), None, "a varint longer than 64 bits");
    }
}
