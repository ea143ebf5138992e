/* bcryptprimitives.dll for Wine 8, which does not have it: Rust's standard library (1.78 and
 * later) imports ProcessPrng from it, so no Rust program built for x86_64-pc-windows-gnu starts
 * under Wine 8 without one. Windows 8 and later ship the real DLL; this one is only put into the
 * Wine prefix of scripts/test-windows.sh and is never part of picajit.
 *
 * ProcessPrng fills the buffer with random bytes from RtlGenRandom (advapi32's SystemFunction036,
 * which Wine implements with the host's random source), so programs get real randomness.
 *
 * Build: x86_64-w64-mingw32-gcc -shared -O2 -o bcryptprimitives.dll bcryptprimitives.c
 *        scripts/windows/bcryptprimitives.def -ladvapi32
 */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
