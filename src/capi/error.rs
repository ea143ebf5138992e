//! Status codes, the thread-local last-error message and the panic barrier every entry point
//! runs behind.

use super::cenum::{c_enum, CEnum, UnknownValue};
use std::any::Any;
use std::cell::RefCell;
use std::ffi::{c_char, CStr, CString};
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Result of every `picajit_` call that can fail. `PICAJIT_OK` is 0; every error is
/// positive. `picajit_last_error()` explains the most recent error on the calling thread.
#[repr(i32)]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub enum PicajitStatus {
    /// Success.
    PICAJIT_OK = 0,
    /// A required pointer argument was NULL.
    PICAJIT_ERR_NULL = 1,
    /// An argument is out of range: an unknown enum value, a register index past the end
    /// of its file, a size or stride too small, a misaligned pointer, overlapping buffers,
    /// an object used with a shader of the wrong kind or float mode.
    PICAJIT_ERR_INVALID_ARGUMENT = 2,
    /// The program is malformed (too many code words or operand descriptors, entry point
    /// outside the code).
    PICAJIT_ERR_PROGRAM = 3,
    /// The SHBIN could not be parsed, or has no DVLE with the requested index.
    PICAJIT_ERR_SHBIN = 4,
    /// The shader source did not assemble.
    PICAJIT_ERR_ASSEMBLY = 5,
    /// The requested engine cannot run on this host in this build.
    PICAJIT_ERR_ENGINE_UNAVAILABLE = 6,
    /// An invocation stopped without reaching END: instruction budget exhausted, BREAK
    /// outside a loop, execution past the end of the program, or an undefined opcode (on
    /// hardware, all of these hang the GPU).
    PICAJIT_ERR_EXEC = 7,
    /// The library panicked. The panic was caught at the boundary; the objects passed to the
    /// call are still safe to destroy but their contents are unspecified.
    PICAJIT_ERR_PANIC = 8,
    /// A handle argument is not a live object of the expected kind: destroyed already
    /// (also a second destroy), never returned by this library, or a handle of another
    /// kind (a shader passed as an engine). Nothing was read through it or freed.
    PICAJIT_ERR_INVALID_HANDLE = 9,
}

c_enum!(
    PicajitStatus: PICAJIT_OK,
    PICAJIT_ERR_NULL,
    PICAJIT_ERR_INVALID_ARGUMENT,
    PICAJIT_ERR_PROGRAM,
    PICAJIT_ERR_SHBIN,
    PICAJIT_ERR_ASSEMBLY,
    PICAJIT_ERR_ENGINE_UNAVAILABLE,
    PICAJIT_ERR_EXEC,
    PICAJIT_ERR_PANIC,
    PICAJIT_ERR_INVALID_HANDLE,
);

/// The name of a status value, as spelled in the header, or "unknown status".
pub(crate) fn status_name(code: i32) -> &'static CStr {
    PicajitStatus::ALL
        .iter()
        .find(|s| **s as i32 == code)
        .map_or(c"unknown status", |s| s.name())
}

/// A failed call: the status to return and the message for `picajit_last_error`.
#[derive(Debug)]
pub(crate) struct Error {
    pub(crate) status: PicajitStatus,
    pub(crate) message: String,
}

pub(crate) type Result<T> = std::result::Result<T, Error>;

impl Error {
    pub(crate) fn new(status: PicajitStatus, message: impl fmt::Display) -> Error {
        Error {
            status,
            message: message.to_string(),
        }
    }

    pub(crate) fn invalid(message: impl fmt::Display) -> Error {
        Error::new(PicajitStatus::PICAJIT_ERR_INVALID_ARGUMENT, message)
    }
}

/// The one mapping of the engines' errors to statuses, for every ISA. (Errors of reading files
/// and assembling sources are the ISA's own types; each ISA's functions give them
/// `PICAJIT_ERR_SHBIN`, `_ASSEMBLY` or `_PROGRAM` where they read them.)
impl From<crate::Error> for Error {
    fn from(e: crate::Error) -> Error {
        use crate::Error as E;
        use PicajitStatus::*;
        let status = match &e {
            E::Unavailable(_) | E::Jit(_) => PICAJIT_ERR_ENGINE_UNAVAILABLE,
            E::Program(_) => PICAJIT_ERR_PROGRAM,
            E::NoSuchDvle { .. } => PICAJIT_ERR_SHBIN,
            E::Invalid(_) => PICAJIT_ERR_INVALID_ARGUMENT,
            // USC's create reads the errors of preparing a program itself (src/usc/capi.rs);
            // past it a USC error is a run's.
            E::Exec { .. } | E::Theia(_) | E::Usc(_) => PICAJIT_ERR_EXEC,
        };
        Error::new(status, e)
    }
}

impl From<UnknownValue> for Error {
    fn from(e: UnknownValue) -> Error {
        Error::invalid(e)
    }
}

impl From<picajit_jit::Error> for Error {
    fn from(e: picajit_jit::Error) -> Error {
        crate::Error::from(e).into()
    }
}

thread_local! {
    // One message per thread, so that concurrent callers never see each other's errors and
    // the returned pointer stays valid until this thread's next call.
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

fn set_last_error(message: &str) {
    // A message with an interior NUL would be cut short by C; replace NULs instead.
    let text = CString::new(message.replace('\0', "\\0")).unwrap_or_default();
    // `try_with` fails only while the thread's locals are being destroyed; the message is
    // then lost, which is better than aborting.
    let _ = LAST_ERROR.try_with(|e| *e.borrow_mut() = text);
}

/// Pointer to this thread's last-error message ("" when the last call succeeded).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR
        .try_with(|e| e.borrow().as_ptr())
        .unwrap_or(c"".as_ptr())
}

fn panic_message(payload: &(dyn Any + Send)) -> &str {
    if let Some(s) = payload.downcast_ref::<&str>() {
        s
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s
    } else {
        "(non-string panic payload)"
    }
}

/// Run the body of entry point `name`: clears the last error, catches panics (which must
/// never unwind into C), and turns the outcome into a status code plus message.
pub(crate) fn call(name: &str, body: impl FnOnce() -> Result<()>) -> PicajitStatus {
    set_last_error("");
    // AssertUnwindSafe: after a caught panic the objects the call touched may hold partial
    // updates; that is what PICAJIT_ERR_PANIC documents, and none of them has an invariant
    // whose violation is memory-unsafe.
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => PicajitStatus::PICAJIT_OK,
        Ok(Err(e)) => {
            set_last_error(&format!("{name}: {}", e.message));
            e.status
        }
        Err(payload) => {
            set_last_error(&format!(
                "{name}: internal error (panic): {}",
                panic_message(payload.as_ref())
            ));
            PicajitStatus::PICAJIT_ERR_PANIC
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn last() -> String {
        // SAFETY: last_error_ptr returns a NUL-terminated string valid until the next call.
        unsafe { CStr::from_ptr(last_error_ptr()) }
            .to_string_lossy()
            .into_owned()
    }

    #[test]
    fn panics_become_a_status_and_a_message() {
        let status = call("picajit_test", || panic!("boom {}", 7));
        assert_eq!(status, PicajitStatus::PICAJIT_ERR_PANIC);
        assert_eq!(last(), "picajit_test: internal error (panic): boom 7");
        // A later successful call clears the message.
        assert_eq!(call("picajit_test", || Ok(())), PicajitStatus::PICAJIT_OK);
        assert_eq!(last(), "");
    }

    #[test]
    fn errors_keep_their_status_and_nuls_are_escaped() {
        let status = call("f", || Err(Error::invalid("a\0b")));
        assert_eq!(status, PicajitStatus::PICAJIT_ERR_INVALID_ARGUMENT);
        assert_eq!(last(), "f: a\\0b");
    }

    #[test]
    fn status_names_match_the_header() {
        assert_eq!(status_name(0), c"PICAJIT_OK");
        assert_eq!(status_name(8), c"PICAJIT_ERR_PANIC");
        assert_eq!(status_name(-1), c"unknown status");
        assert_eq!(status_name(9), c"PICAJIT_ERR_INVALID_HANDLE");
        assert_eq!(status_name(10), c"unknown status");
    }
}
