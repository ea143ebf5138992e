/*
 * The checks of the C API tests (tests/c/test_capi.c, tests/c/test_embedding.c): each counts
 * as passed or prints where it failed; the test prints "N passed, M failed" at the end.
 */
#ifndef PICAJIT_TEST_CHECK_H
#define PICAJIT_TEST_CHECK_H

#include "picajit.h"

#include <stdio.h>
#include <string.h>

static int passed, failed;

static void check(int ok, const char *file, int line, const char *what) {
    if (ok) {
        passed++;
    } else {
        failed++;
        fprintf(stderr, "%s:%d: check failed: %s\n", file, line, what);
    }
}

#define CHECK(cond) check((cond) != 0, __FILE__, __LINE__, #cond)

/* The call returns `expected`; for an error, the last-error message contains `needle`, and
   after a success it is empty. */
static void check_status(PicajitStatus got, PicajitStatus expected, const char *needle,
                         const char *file, int line, const char *call) {
    const char *msg = picajit_last_error();
    int ok = got == expected;
    if (ok && expected == PICAJIT_OK) {
        ok = msg != NULL && msg[0] == '\0';
    } else if (ok) {
        ok = msg != NULL && strstr(msg, needle) != NULL;
    }
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "%s:%d: %s returned %s, expected %s containing \"%s\"; last error: \"%s\"\n",
            file, line, call, picajit_status_name(got), picajit_status_name(expected), needle,
            msg ? msg : "(null)");
}

#define OK(call) check_status((call), PICAJIT_OK, "", __FILE__, __LINE__, #call)
#define FAILS(call, status, needle) \
    check_status((call), (status), (needle), __FILE__, __LINE__, #call)

#endif
