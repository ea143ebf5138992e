//! Handle validation: every object the C ABI hands out is registered here, and every call
//! that receives one checks it before touching anything.
//!
//! A handle is not the object's address but a token (a serial number times 16) that the
//! registry maps to the boxed object and its Rust type. Serials are never reused, so a
//! handle that was destroyed stays unknown for good even when the allocator hands the same
//! memory to a new object; a destroyed, foreign or garbage handle, or one of another type,
//! is therefore reported as `PICAJIT_ERR_INVALID_HANDLE` and never dereferenced. The type is
//! the object's own `TypeId`, so an ISA adds handle types without a number to coordinate.
//!
//! A new entry point takes a handle with one call: [`get`] (shared), [`get_mut`]
//! (exclusive), [`destroy`]; a constructor registers its object with [`create`], or with
//! [`create_out`] when it hands the handle to C through an output pointer. Whole entry points
//! that read one value ([`query!`]) or destroy ([`destroy_entry`]) are one line each.

use super::args;
use super::error::{call, Error, PicajitStatus, Result};
use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};

/// An object type handed to C as an opaque handle.
pub(crate) trait Handle: Sized + 'static {
    /// Name in error messages ("engine").
    const NAME: &'static str;
}

struct Entry {
    type_id: TypeId,
    /// `Handle::NAME` of the type, for the message when it is passed as another.
    name: &'static str,
    /// `Box::into_raw` of the object, as an address (the registry is shared between
    /// threads; the objects' own thread rules are the callers' contract).
    object: usize,
}

struct Registry {
    live: HashMap<usize, Entry>,
    next_serial: usize,
}

static REGISTRY: Mutex<Option<Registry>> = Mutex::new(None);

fn registry() -> MutexGuard<'static, Option<Registry>> {
    // No code panics while holding the lock except allocation failure inside HashMap;
    // the map is still consistent then, so a poisoned lock is taken over.
    REGISTRY.lock().unwrap_or_else(|e| e.into_inner())
}

/// Tokens are multiples of this, so that they look like aligned pointers to C tools.
const TOKEN_STEP: usize = 16;

fn invalid<T: Handle>(token: usize, what: &str, other: Option<&'static str>) -> Error {
    let why = match other {
        Some(name) => format!("it is a {name} handle (a handle of another kind)"),
        None => "destroyed, or never created by this library".to_string(),
    };
    Error::new(
        PicajitStatus::PICAJIT_ERR_INVALID_HANDLE,
        format!(
            "{what} ({token:#x}) is not a live {} handle: {why}",
            T::NAME
        ),
    )
}

/// Register `value` and return its handle (never NULL).
pub(crate) fn create<T: Handle>(value: T) -> Result<*mut T> {
    let mut guard = registry();
    let reg = guard.get_or_insert_with(|| Registry {
        live: HashMap::new(),
        next_serial: 1,
    });
    let serial = reg.next_serial;
    let token = serial
        .checked_mul(TOKEN_STEP)
        .ok_or_else(|| Error::invalid("handle serial numbers exhausted"))?;
    reg.next_serial += 1;
    let object = Box::into_raw(Box::new(value)) as usize;
    reg.live.insert(
        token,
        Entry {
            type_id: TypeId::of::<T>(),
            name: T::NAME,
            object,
        },
    );
    // The token is an integer in a pointer's clothing: C only stores and passes it.
    Ok(token as *mut T)
}

/// Register `value` and store its handle in `*out` (checked: NULL and misaligned pointers are
/// errors, and then nothing is registered).
///
/// # Safety
/// If `out` is non-NULL it must be writable for one pointer.
pub(crate) unsafe fn create_out<T: Handle>(out: *mut *mut T, value: T) -> Result<()> {
    args::check_ptr(out, "out")?;
    let handle = create(value)?;
    // SAFETY: checked above; writable by this function's contract.
    unsafe { args::write_out(out, handle, "out") }
}

fn lookup<T: Handle>(handle: *const T, what: &str) -> Result<*mut T> {
    if handle.is_null() {
        return Err(Error::new(
            PicajitStatus::PICAJIT_ERR_NULL,
            format!("{what} is NULL"),
        ));
    }
    let token = handle as usize;
    let guard = registry();
    match guard.as_ref().and_then(|r| r.live.get(&token)) {
        Some(e) if e.type_id == TypeId::of::<T>() => Ok(e.object as *mut T),
        other => Err(invalid::<T>(token, what, other.map(|e| e.name))),
    }
}

/// The object behind a live handle of type `T`.
///
/// # Safety
/// Nothing may mutate the object or destroy the handle during `'a` (the callers' documented
/// thread rules: one writer at a time, no destroy while another thread uses the object).
pub(crate) unsafe fn get<'a, T: Handle>(handle: *const T, what: &str) -> Result<&'a T> {
    let p = lookup(handle, what)?;
    // SAFETY: `p` is the live Box of a registered `T` (type checked); its lifetime and the
    // absence of writers during 'a are this function's precondition.
    Ok(unsafe { &*p })
}

/// Exclusive access to the object behind a live handle of type `T`.
///
/// # Safety
/// Nothing else may access the object or destroy the handle during `'a`.
pub(crate) unsafe fn get_mut<'a, T: Handle>(handle: *mut T, what: &str) -> Result<&'a mut T> {
    let p = lookup(handle, what)?;
    // SAFETY: `p` is the live Box of a registered `T`; exclusivity is the precondition.
    Ok(unsafe { &mut *p })
}

/// The body of a query: `value` of the object behind `handle`, stored in `*out`.
///
/// # Safety
/// As [`get`] for `handle`; `out` NULL or writable for one `V`.
pub(crate) unsafe fn read_into<T: Handle, V>(
    handle: *const T,
    what: &str,
    out: *mut V,
    out_name: &str,
    value: impl FnOnce(&T) -> Result<V>,
) -> Result<()> {
    // SAFETY: this function's contract.
    let object = unsafe { get(handle, what) }?;
    args::check_ptr(out, out_name)?;
    let v = value(object)?;
    // SAFETY: checked above; writable by this function's contract.
    unsafe { args::write_out(out, v, out_name) }
}

/// The body of an entry point `name` that hands C one value of the object behind a handle:
/// `query!("picajit_x", handle => out, |object| Ok(value))` checks the handle, then the output
/// pointer (each named as its parameter in the messages), and stores the value, all behind
/// [`call`]'s panic barrier. It calls [`read_into`], so it is expanded inside an `unsafe` block
/// whose SAFETY comment gives that contract.
macro_rules! query {
    ($name:literal, $handle:ident => $out:ident, $value:expr) => {
        $crate::capi::error::call($name, || {
            let names = (stringify!($handle), stringify!($out));
            $crate::capi::handle::read_into($handle, names.0, $out, names.1, $value)
        })
    };
}
pub(crate) use query;

/// Release a handle. NULL is accepted and ignored, like `free`; a handle that is not live
/// (already destroyed, of another kind, never created) is an error and frees nothing.
///
/// # Safety
/// No other thread may be using the object.
pub(crate) unsafe fn destroy<T: Handle>(handle: *mut T, what: &str) -> Result<()> {
    if handle.is_null() {
        return Ok(());
    }
    let token = handle as usize;
    let mut guard = registry();
    let entry = match guard.as_mut() {
        Some(r) => match r.live.get(&token) {
            Some(e) if e.type_id == TypeId::of::<T>() => r.live.remove(&token),
            Some(e) => return Err(invalid::<T>(token, what, Some(e.name))),
            None => None,
        },
        None => None,
    };
    drop(guard);
    let entry = entry.ok_or_else(|| invalid::<T>(token, what, None))?;
    // SAFETY: the entry was registered by `create::<T>` (type checked) and is now out of the
    // registry, so this is the only release; no other user by precondition. Dropped outside
    // the lock: a drop may take time (an engine's code cache).
    drop(unsafe { Box::from_raw(entry.object as *mut T) });
    Ok(())
}

/// The whole body of a `picajit_*_destroy` entry point (`name`).
///
/// # Safety
/// As [`destroy`].
pub(crate) unsafe fn destroy_entry<T: Handle>(
    name: &str,
    handle: *mut T,
    what: &str,
) -> PicajitStatus {
    // SAFETY: this function's contract.
    call(name, || unsafe { destroy(handle, what) })
}

#[cfg(test)]
mod tests {
    use super::*;

    struct A(#[allow(dead_code)] u32);
    struct B;
    impl Handle for A {
        const NAME: &'static str = "alpha";
    }
    impl Handle for B {
        const NAME: &'static str = "beta";
    }

    #[test]
    fn double_destroy_use_after_destroy_and_wrong_kind_are_errors() {
        let a = create(A(7)).unwrap();
        let b = create(B).unwrap();
        assert!(!a.is_null() && a as usize != b.addr());
        // SAFETY: single-threaded test; each object is live while borrowed.
        unsafe {
            assert_eq!(get(a, "a").unwrap().0, 7);
            let wrong = get(a.cast::<B>(), "b").err().unwrap();
            assert_eq!(wrong.status, PicajitStatus::PICAJIT_ERR_INVALID_HANDLE);
            assert!(wrong.message.contains("another kind"), "{}", wrong.message);
            assert!(wrong
                .message
                .contains("not a live beta handle: it is a alpha handle"));
            let wrong = destroy(b.cast::<A>(), "a").err().unwrap();
            assert_eq!(wrong.status, PicajitStatus::PICAJIT_ERR_INVALID_HANDLE);
            assert!(get(b, "b").is_ok(), "a failed destroy must keep the object");
            destroy(a, "a").unwrap();
            let again = destroy(a, "a").err().unwrap();
            assert_eq!(again.status, PicajitStatus::PICAJIT_ERR_INVALID_HANDLE);
            // A new object never revives an old handle.
            let a2 = create(A(8)).unwrap();
            assert_ne!(a2 as usize, a as usize);
            assert!(get(a, "a").is_err());
            assert!(get_mut(a, "a").is_err());
            destroy(a2, "a").unwrap();
            destroy(b, "b").unwrap();
            destroy(std::ptr::null_mut::<A>(), "a").unwrap();
            let null = get(std::ptr::null::<A>(), "a").err().unwrap();
            assert_eq!(null.status, PicajitStatus::PICAJIT_ERR_NULL);
            // A pointer to something real is not a handle either.
            let x = A(1);
            assert!(get(&x as *const A, "a").is_err());
        }
    }
}
