//! C enums: passed as `uint32_t` (so that an out-of-range value is an error, not undefined
//! behaviour), checked with [`CEnum::from_raw`], named with [`CEnum::name`]. The enums
//! themselves are written out where they are defined, for cbindgen; [`c_enum!`] adds the rest,
//! and `tests/capi.rs` exports every enum a `c_enum!` names into the header.

use std::ffi::CStr;

/// A value C passed that is not one of its enum's (`what` names the argument).
#[derive(Debug)]
pub(crate) struct UnknownValue {
    pub(crate) what: String,
    pub(crate) raw: u32,
    pub(crate) enum_name: &'static str,
}

impl std::fmt::Display for UnknownValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let Self {
            what,
            raw,
            enum_name,
        } = self;
        write!(f, "unknown {what} {raw} (not a {enum_name} value)")
    }
}

/// A `#[repr(u32)]` (or `i32`) enum of the C API. Implemented with [`c_enum!`].
pub(crate) trait CEnum: Copy + 'static {
    /// Every value, in declaration order.
    const ALL: &'static [Self];
    /// The enum's name in the header.
    const NAME: &'static str;
    /// The value as C sees it.
    fn raw(self) -> u32;
    /// The value's name in the header.
    fn name(self) -> &'static CStr;

    /// The enum value `raw`, or an error naming the argument (`what`).
    fn from_raw(raw: u32, what: &str) -> Result<Self, UnknownValue> {
        Self::ALL
            .iter()
            .copied()
            .find(|v| v.raw() == raw)
            .ok_or_else(|| UnknownValue {
                what: what.to_string(),
                raw,
                enum_name: Self::NAME,
            })
    }
}

/// `impl CEnum` for an enum, from its name and variants.
macro_rules! c_enum {
    ($name:ident: $($variant:ident),+ $(,)?) => {
        impl $crate::capi::cenum::CEnum for $name {
            const ALL: &'static [Self] = &[$($name::$variant),+];
            const NAME: &'static str = stringify!($name);
            fn raw(self) -> u32 {
                self as u32
            }
            fn name(self) -> &'static std::ffi::CStr {
                match self {$(
                    $name::$variant => {
                        const NAME: &std::ffi::CStr = match std::ffi::CStr::from_bytes_with_nul(
                            concat!(stringify!($variant), "\0").as_bytes(),
                        ) {
                            Ok(n) => n,
                            Err(_) => panic!("a variant name contains a NUL"),
                        };
                        NAME
                    }
                )+}
            }
        }
    };
}
pub(crate) use c_enum;

#[cfg(test)]
mod tests {
    use super::*;

    #[repr(u32)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[allow(non_camel_case_types, dead_code)]
    enum Two {
        TWO_A = 0,
        TWO_B = 5,
    }
    c_enum!(Two: TWO_A, TWO_B);

    #[test]
    fn enum_values_are_checked() {
        assert_eq!(Two::from_raw(5, "two").unwrap(), Two::TWO_B);
        let e = Two::from_raw(1, "two").unwrap_err();
        assert_eq!(e.to_string(), "unknown two 1 (not a Two value)");
        assert_eq!(Two::TWO_B.name(), c"TWO_B");
    }
}
