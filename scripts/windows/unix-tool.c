/* A Windows program that runs the Linux program of its own name under Wine and waits for it:
 * built as sh.exe it runs sh, as x86_64-w64-mingw32-gcc.exe the cross compiler. Wine 8 starts a
 * Linux program from a Windows one but hands back no process to wait for (Rust's Command reports
 * "Invalid handle"), so tests that compile C (tests/capi.rs) could not run under it. This
 * program starts unix-tool.sh (beside it) with a fresh directory, the program and its arguments;
 * the script converts Windows paths (Z:\...) in the arguments and environment to Linux ones,
 * runs the program with its output into files in the directory and writes its exit status
 * there last; this program waits for the status, copies the output to its own standard output
 * and error (Wine 8 does not connect a Linux child to a Windows parent's pipes) and exits with
 * the status.
 *
 * Used only by scripts/test-windows.sh, in its Wine prefix; never part of picajit.
 */
#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char line[32768];
static size_t line_len;

static void put(char c)
{
    if (line_len + 1 < sizeof line) {
        line[line_len++] = c;
        line[line_len] = '\0';
    }
}

/* Appends `arg` to the command line, quoted the way the command line is split again
 * (backslashes are doubled only before a quote). */
static void append_quoted(const char *arg)
{
    if (line_len > 0) {
        put(' ');
    }
    put('"');
    for (const char *p = arg;; p++) {
        size_t backslashes = 0;
        while (*p == '\\') {
            backslashes++;
            p++;
        }
        size_t times = (*p == '"' || *p == '\0') ? 2 * backslashes : backslashes;
        for (size_t i = 0; i < times; i++) {
            put('\\');
        }
        if (*p == '\0') {
            break;
        }
        if (*p == '"') {
            put('\\');
        }
        put(*p);
    }
    put('"');
}

/* Copies DIR\NAME (what the Linux program wrote there) to `to`, then deletes it. */
static void relay(const char *dir, const char *name, FILE *to)
{
    char path[MAX_PATH];
    snprintf(path, sizeof path, "%s\\%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (f) {
        char buf[4096];
        size_t n;
        while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
            fwrite(buf, 1, n, to);
        }
        fclose(f);
        fflush(to);
        DeleteFileA(path);
    }
}

int main(int argc, char **argv)
{
    /* The output is relayed byte for byte (no \n to \r\n). */
    _setmode(_fileno(stdout), _O_BINARY);
    _setmode(_fileno(stderr), _O_BINARY);
    char self[MAX_PATH];
    DWORD len = GetModuleFileNameA(NULL, self, sizeof self);
    if (len == 0 || len >= sizeof self) {
        fprintf(stderr, "unix-tool: cannot find its own path\n");
        return 125;
    }
    char *base = strrchr(self, '\\');
    base = base ? base + 1 : self;
    char program[MAX_PATH];
    snprintf(program, sizeof program, "%s", base);
    char *dot = strrchr(program, '.');
    if (dot && _stricmp(dot, ".exe") == 0) {
        *dot = '\0';
    }
    char script[MAX_PATH];
    snprintf(script, sizeof script, "%.*sunix-tool.sh", (int)(base - self), self);

    char temp[MAX_PATH], dir[MAX_PATH];
    if (!GetTempPathA(sizeof temp, temp)) {
        fprintf(stderr, "unix-tool: no temporary directory\n");
        return 125;
    }
    snprintf(dir, sizeof dir, "%sunix-tool-%lu-%lu", temp, (unsigned long)GetCurrentProcessId(),
             (unsigned long)GetTickCount());
    if (!CreateDirectoryA(dir, NULL)) {
        fprintf(stderr, "unix-tool: cannot create %s\n", dir);
        return 125;
    }

    append_quoted(script);
    append_quoted(dir);
    append_quoted(program);
    for (int i = 1; i < argc; i++) {
        append_quoted(argv[i]);
    }
    fflush(stdout);
    fflush(stderr);
    STARTUPINFOA si = {.cb = sizeof si};
    PROCESS_INFORMATION pi = {0};
    if (!CreateProcessA(NULL, line, NULL, NULL, TRUE, 0, NULL, NULL, &si, &pi)) {
        fprintf(stderr, "unix-tool: cannot start %s (error %lu)\n", script,
                (unsigned long)GetLastError());
        return 125;
    }
    /* The handles, if any, say nothing about the Linux process: wait for its status file. */
    char status_path[MAX_PATH];
    snprintf(status_path, sizeof status_path, "%s\\status", dir);
    for (DWORD waited = 0;; waited += 10) {
        FILE *f = fopen(status_path, "r");
        if (f) {
            int status = 125;
            if (fscanf(f, "%d", &status) != 1) {
                status = 125;
            }
            fclose(f);
            DeleteFileA(status_path);
            relay(dir, "stdout", stdout);
            relay(dir, "stderr", stderr);
            RemoveDirectoryA(dir);
            return status;
        }
        if (waited > 30u * 60u * 1000u) {
            fprintf(stderr, "unix-tool: %s did not finish in 30 minutes\n", program);
            return 125;
        }
        Sleep(10);
    }
}
