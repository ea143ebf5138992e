//! Checked conversions of what C passes: pointers, arrays, strings and the versioned structs
//! (a `struct_size` first field, so that later versions can append fields). Every ISA's
//! entry points read their arguments through these, so that NULL, misalignment and sizes are
//! reported the same way everywhere (enum values: `cenum.rs`).

use super::error::{Error, PicajitStatus, Result};
use std::ffi::{c_char, CStr};

fn null(what: &str) -> Error {
    Error::new(PicajitStatus::PICAJIT_ERR_NULL, format!("{what} is NULL"))
}

/// Reject a NULL or misaligned pointer without touching it: output pointers are checked
/// before any object is created, so that a bad one cannot leak that object.
pub(crate) fn check_ptr<T>(p: *const T, what: &str) -> Result<()> {
    if p.is_null() {
        return Err(null(what));
    }
    if !p.is_aligned() {
        return Err(Error::invalid(format!(
            "{what} ({p:p}) is not aligned to {} bytes",
            std::mem::align_of::<T>()
        )));
    }
    Ok(())
}

/// [`check_ptr`] for a pointer that may be NULL.
pub(crate) fn check_optional<T>(p: *const T, what: &str) -> Result<()> {
    if p.is_null() {
        Ok(())
    } else {
        check_ptr(p, what)
    }
}

/// A shared reference from a caller pointer, after the NULL and alignment checks.
///
/// # Safety
/// If `p` is non-NULL it must point to a live, initialised `T` that nothing mutates for
/// `'a` (the caller-facing contract every function documents).
pub(crate) unsafe fn borrow<'a, T>(p: *const T, what: &str) -> Result<&'a T> {
    check_ptr(p, what)?;
    // SAFETY: non-NULL and aligned (checked above); validity and the absence of concurrent
    // mutation are this function's own precondition.
    Ok(unsafe { &*p })
}

/// [`borrow`] for a pointer that may be NULL (`None` then).
///
/// # Safety
/// As [`borrow`].
pub(crate) unsafe fn borrow_optional<'a, T>(p: *const T, what: &str) -> Result<Option<&'a T>> {
    if p.is_null() {
        return Ok(None);
    }
    // SAFETY: this function's contract.
    unsafe { borrow(p, what) }.map(Some)
}

/// A caller array of `len` elements, after the NULL and alignment checks.
///
/// # Safety
/// If `p` is non-NULL it must point to `len` initialised `T`s that nothing mutates for `'a`.
pub(crate) unsafe fn slice<'a, T>(p: *const T, len: usize, what: &str) -> Result<&'a [T]> {
    check_ptr(p, what)?;
    if len
        .checked_mul(std::mem::size_of::<T>())
        .is_none_or(|b| b > isize::MAX as usize)
    {
        return Err(Error::invalid(format!(
            "{what}: {len} elements is too large"
        )));
    }
    // SAFETY: non-NULL, aligned, total size within isize::MAX (checked above); the memory
    // being valid and unaliased by writers is the precondition.
    Ok(unsafe { std::slice::from_raw_parts(p, len) })
}

/// A caller buffer of `len` writable bytes, after the NULL check.
///
/// # Safety
/// If `p` is non-NULL it must point to `len` bytes, writable, that nothing else accesses for
/// `'a`. (They need not be initialised as far as C is concerned, but `u8` has no invalid
/// values and the library only writes through the slice before reading it back.)
pub(crate) unsafe fn bytes_mut<'a>(p: *mut u8, len: usize, what: &str) -> Result<&'a mut [u8]> {
    check_ptr(p, what)?;
    if len > isize::MAX as usize {
        return Err(Error::invalid(format!("{what}: {len} bytes is too large")));
    }
    // SAFETY: non-NULL, size within isize::MAX (checked above), u8 needs no alignment;
    // writability and exclusivity are the precondition.
    Ok(unsafe { std::slice::from_raw_parts_mut(p, len) })
}

/// A NUL-terminated UTF-8 string argument.
///
/// # Safety
/// `p` must be NULL or a NUL-terminated string that nothing mutates for `'a`.
pub(crate) unsafe fn text<'a>(p: *const c_char, what: &str) -> Result<&'a str> {
    check_ptr(p, what)?;
    // SAFETY: non-NULL (checked above), NUL-terminated by this function's contract.
    unsafe { CStr::from_ptr(p) }
        .to_str()
        .map_err(|e| Error::invalid(format!("{what} is not UTF-8: {e}")))
}

/// Store `value` through an output pointer, after the NULL and alignment checks.
///
/// # Safety
/// If `p` is non-NULL it must point to writable memory for one `T`.
pub(crate) unsafe fn write_out<T>(p: *mut T, value: T, what: &str) -> Result<()> {
    check_ptr(p, what)?;
    // SAFETY: non-NULL and aligned (checked above), writable by precondition. `write` does
    // not drop the old contents, which C may have left uninitialised.
    unsafe { p.write(value) };
    Ok(())
}

/// [`write_out`] through an output pointer that may be NULL (nothing is written then).
///
/// # Safety
/// As [`write_out`].
pub(crate) unsafe fn write_optional<T>(p: *mut T, value: T, what: &str) -> Result<()> {
    if p.is_null() {
        return Ok(());
    }
    // SAFETY: this function's contract.
    unsafe { write_out(p, value, what) }
}

/// The largest `struct_size` taken as one: a larger value is not the size of any struct of
/// this API but uninitialised memory, and checking its tail would read far past the struct.
const MAX_STRUCT_SIZE: usize = 1 << 16;

/// The `struct_size` the caller set in the first field of a versioned struct, checked
/// against the versioning rule (stated once, at the top of the header): `older` lists the
/// sizes the struct had in earlier versions, oldest first; any size from `size_of::<T>()`
/// (this header's) up to [`MAX_STRUCT_SIZE`] is a version of this header or a newer one.
///
/// # Safety
/// `p` must be NULL or point to at least 4 readable bytes.
unsafe fn struct_size<T>(p: *const T, what: &str, older: &[usize], hint: &str) -> Result<usize> {
    check_ptr(p, what)?;
    // SAFETY: non-NULL and aligned (checked above); `struct_size` is the first field of every
    // version of the struct, so reading it alone is in bounds whatever the caller's version.
    let size = unsafe { p.cast::<u32>().read() } as usize;
    let full = std::mem::size_of::<T>();
    if older.contains(&size) || (full..=MAX_STRUCT_SIZE).contains(&size) {
        return Ok(size);
    }
    let sizes: Vec<String> = older.iter().map(usize::to_string).collect();
    let known = if sizes.is_empty() {
        String::new()
    } else {
        format!("{} (older versions) or ", sizes.join(", "))
    };
    Err(Error::invalid(format!(
        "{what}->struct_size is {size} but this library accepts {known}{full} to \
         {MAX_STRUCT_SIZE} ({hint})"
    )))
}

/// Read a versioned struct: the caller's first `struct_size` bytes (at most `T`'s) over
/// `base`, so that fields an older caller's struct lacks keep `base`'s values. Bytes past
/// `T` (a newer caller's fields) must be zero, the value every field added later has when
/// it asks for nothing new.
///
/// # Safety
/// `p` must be NULL or point to `struct_size` readable bytes (its first field).
pub(crate) unsafe fn read_versioned<T: Copy>(
    p: *const T,
    what: &str,
    older: &[usize],
    hint: &str,
    base: T,
) -> Result<T> {
    // SAFETY: this function's contract.
    let size = unsafe { struct_size(p, what, older, hint) }?;
    let full = std::mem::size_of::<T>();
    if size > full {
        // SAFETY: `size` readable bytes by this function's contract.
        let tail = unsafe { std::slice::from_raw_parts(p.cast::<u8>().add(full), size - full) };
        if let Some(k) = tail.iter().position(|&b| b != 0) {
            return Err(Error::invalid(format!(
                "{what} has a nonzero byte at offset {} past the {full} bytes this library \
                 knows (a field of a newer header set to a value this library cannot honour)",
                full + k
            )));
        }
    }
    let mut value = base;
    // SAFETY: `size` readable bytes by this function's contract, of which at most
    // `size_of::<T>()` are copied into a local `T`; every field of the structs this serves is
    // an integer or a pointer, valid for any bits.
    unsafe {
        std::ptr::copy_nonoverlapping(
            p.cast::<u8>(),
            (&mut value as *mut T).cast::<u8>(),
            size.min(full),
        )
    };
    Ok(value)
}

/// Write a versioned struct: as many bytes of `value` as the caller's `struct_size` and `T`
/// hold, and zeros past `T` up to `struct_size` (fields of a newer header this library does
/// not know read as 0). `value`'s own `struct_size` should be the caller's.
///
/// # Safety
/// `p` must be NULL or point to `struct_size` writable bytes (its first field readable).
pub(crate) unsafe fn write_versioned<T: Copy>(
    p: *mut T,
    what: &str,
    older: &[usize],
    hint: &str,
    value: T,
) -> Result<()> {
    // SAFETY: this function's contract.
    let size = unsafe { struct_size(p, what, older, hint) }?;
    let full = std::mem::size_of::<T>();
    // SAFETY: at least `size` writable bytes by this function's contract, and no more are
    // written; the source is a local value.
    unsafe {
        std::ptr::copy_nonoverlapping(
            (&value as *const T).cast::<u8>(),
            p.cast::<u8>(),
            size.min(full),
        );
        if size > full {
            std::ptr::write_bytes(p.cast::<u8>().add(full), 0, size - full);
        }
    };
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn misaligned_and_null_pointers_are_rejected() {
        let words = [0u32; 2];
        let misaligned = (words.as_ptr() as *const u8).wrapping_add(1) as *const u32;
        // SAFETY: both pointers are rejected before any dereference.
        let e = unsafe { borrow(misaligned, "p") }.unwrap_err();
        assert_eq!(e.status, PicajitStatus::PICAJIT_ERR_INVALID_ARGUMENT);
        // SAFETY: as above.
        let e = unsafe { borrow(std::ptr::null::<u32>(), "p") }.unwrap_err();
        assert_eq!(e.status, PicajitStatus::PICAJIT_ERR_NULL);
    }

    #[repr(C)]
    #[derive(Clone, Copy, Debug, PartialEq)]
    struct V2 {
        struct_size: u32,
        a: u32,
        b: u64,
    }

    #[test]
    fn versioned_structs_keep_the_base_past_the_callers_size() {
        let base = V2 {
            struct_size: 0,
            a: 1,
            b: 2,
        };
        let old = V2 {
            struct_size: 8,
            a: 7,
            b: 9,
        };
        // SAFETY: `old` is a live local of the full size.
        let got = unsafe { read_versioned(&old, "v", &[8], "init", base) }.unwrap();
        assert_eq!((got.struct_size, got.a, got.b), (8, 7, 2));
        let short = V2 {
            struct_size: 4,
            ..old
        };
        // SAFETY: as above.
        let e = unsafe { read_versioned(&short, "v", &[8], "init", base) }.unwrap_err();
        assert!(e.message.contains("v->struct_size is 4"), "{}", e.message);
        let mut out = V2 {
            struct_size: 8,
            a: 0,
            b: 5,
        };
        let value = V2 {
            struct_size: 8,
            a: 3,
            b: 4,
        };
        // SAFETY: `out` is a live local of the full size.
        unsafe { write_versioned(&mut out, "v", &[8], "init", value) }.unwrap();
        assert_eq!(
            (out.a, out.b),
            (3, 5),
            "only the caller's 8 bytes are written"
        );
    }
}
