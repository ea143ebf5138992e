/*
 * Tests of the THEIA functions of the picajit C API, written against include/picajit.h only.
 * Run by tests/capi.rs natively and under valgrind memcheck. Prints "N passed, M failed" and
 * exits non-zero on any failure.
 */
#include "picajit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int passed, failed;

#define CHECK(cond)                                                                   \
    do {                                                                              \
        if (cond) {                                                                   \
            passed++;                                                                 \
        } else {                                                                      \
            failed++;                                                                 \
            fprintf(stderr, "%s:%d: check failed: %s (%s)\n", __FILE__, __LINE__, #cond, \
                    picajit_last_error());                                            \
        }                                                                             \
    } while (0)

/* Q15.17 */
#define Q(v) ((uint32_t)(int32_t)((v) * 131072.0))

static const char *RAY =
    "ENTRYPOINT_ADRR_MAIN:\n"
    "\tSUB R1 CREG_V1 CREG_V0\n"
    "\tSUB R2 CREG_V2 CREG_V0\n"
    "\tCROSS R3 CREG_RAY_DIRECTION R2\n"
    "\tDOT R4 R3 R1\n"
    "\tZERO R12 VOID VOID\n"
    "\tJEQX MISS R4 R12\n"
    "\tSUB R5 CREG_CAMERA_POSITION CREG_V0\n"
    "\tDOT R6 R5 R3\n"
    "\tDIV R6 R6 R4\n"
    "\tJLX MISS R6 R12\n"
    "\tSETX R11 32'h20000\n"
    "\tSWIZZLE3D R11 SWIZZLE_XXX\n"
    "\tJGX MISS R6 R11\n"
    "\tCROSS R7 R5 R1\n"
    "\tDOT R8 CREG_RAY_DIRECTION R7\n"
    "\tDIV R8 R8 R4\n"
    "\tJLX MISS R8 R12\n"
    "\tADD R10 R6 R8\n"
    "\tJGX MISS R10 R11\n"
    "\tDOT R9 R2 R7\n"
    "\tDIV R9 R9 R4\n"
    "\tJLEX MISS R9 R12\n"
    "\tRETURN RT_TRUE\n"
    "MISS:\n"
    "\tRETURN RT_FALSE\n";

static void setup(PicajitTheiaState *s, double dx) {
    memset(s, 0, sizeof *s);
    uint32_t dir[3] = {Q(dx), Q(0.05), Q(1.0)};
    uint32_t v0[3] = {Q(-1.0), Q(-1.0), Q(5.0)};
    uint32_t v1[3] = {Q(2.0), Q(-1.0), Q(5.0)};
    uint32_t v2[3] = {Q(-1.0), Q(2.0), Q(5.0)};
    memcpy(s->regs[85], dir, sizeof dir); /* CREG_RAY_DIRECTION */
    memcpy(s->regs[44], v0, sizeof v0);   /* CREG_V0 */
    memcpy(s->regs[46], v1, sizeof v1);
    memcpy(s->regs[48], v2, sizeof v2);
}

struct io_log {
    int writes, reads;
    uint32_t last_data[3];
};

static void om_write(void *user, const uint32_t *addr, const uint32_t *data) {
    struct io_log *l = user;
    (void)addr;
    l->writes++;
    memcpy(l->last_data, data, 3 * sizeof *data);
}

static void tm_read(void *user, const uint32_t *addr, uint32_t *out) {
    struct io_log *l = user;
    l->reads++;
    out[0] = addr[0] + 1;
    out[1] = addr[1] + 2;
    out[2] = addr[2] + 3;
}

/* The whole file at `dir/name`, NUL-terminated (NULL if unreadable). */
static char *slurp(const char *dir, const char *name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *buf = malloc((size_t)n + 1);
    if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
        free(buf);
        buf = NULL;
    }
    if (buf) buf[n] = 0;
    fclose(f);
    return buf;
}

/* Reference.ppm (plain P3) of the scene into `rgb`; returns the pixel count or -1. */
static int read_ppm(const char *dir, uint8_t *rgb, int max) {
    char *t = slurp(dir, "Reference.ppm");
    if (!t) return -1;
    int w = 0, h = 0, m = 0, off = 0, k = 0;
    if (sscanf(t, "P3 %d %d %d%n", &w, &h, &m, &off) != 3 || w * h * 3 > max) {
        free(t);
        return -1;
    }
    const char *p = t + off;
    for (k = 0; k < w * h * 3; k++) {
        int v, used;
        if (sscanf(p, "%d%n", &v, &used) != 1) break;
        rgb[k] = (uint8_t)v;
        p += used;
    }
    free(t);
    return k == w * h * 3 ? w * h : -1;
}

/* Whole-GPU rendering of picajit's own scene (examples/theia/scene) through the C ABI. */
static void render_tests(const char *dir) {
    PicajitTheiaScene *scene = NULL;
    CHECK(picajit_theia_scene_load(dir, NULL, &scene) == PICAJIT_OK);
    uint32_t w = 0, h = 0, cores = 0;
    CHECK(picajit_theia_scene_info(scene, &w, &h, &cores) == PICAJIT_OK);
    CHECK(w == 4 && h == 2 && cores == 2);
    uint8_t want[4 * 2 * 3];
    CHECK(read_ppm(dir, want, (int)sizeof want) == 8);
    /* The AArch64 JIT: natively on AArch64 hosts, under unicorn elsewhere (cargo's test
       builds enable the a64-emu feature); emulated code is far too slow for valgrind. */
    const uint32_t engines[] = {PICAJIT_ENGINE_INTERP, PICAJIT_ENGINE_JIT,
                                PICAJIT_ENGINE_A64};
#if defined(__aarch64__)
    const int n_engines = 3;
#else
    const int n_engines = getenv("PICAJIT_UNDER_VALGRIND") ? 2 : 3;
#endif
    for (int e = 0; e < n_engines; e++) {
        for (uint32_t threads = 0; threads < 3; threads++) {
            uint8_t rgb[4 * 2 * 3 + 1];
            memset(rgb, 0xEE, sizeof rgb);
            PicajitTheiaRenderStats st;
            CHECK(picajit_theia_render(scene, engines[e], 0, threads, rgb, sizeof rgb, &st) ==
                  PICAJIT_OK);
            CHECK(memcmp(rgb, want, sizeof want) == 0);
            CHECK(rgb[sizeof want] == 0xEE); /* nothing past the image */
            CHECK(st.width == 4 && st.height == 2 && st.cores == 2 && st.pixels == 8);
            CHECK(st.hits == 4 && st.steps > 0 && st.runs > 0);
        }
        /* one GPU core: it renders its own part (the first row) and the image is that
           core's output memory over both rows */
        uint8_t one[4 * 2 * 3];
        static const uint8_t zero[4 * 3];
        PicajitTheiaRenderStats st1;
        CHECK(picajit_theia_render(scene, engines[e], 1, 1, one, sizeof one, &st1) ==
              PICAJIT_OK);
        CHECK(memcmp(one, want, 4 * 3) == 0 && memcmp(one + 4 * 3, zero, sizeof zero) == 0);
        CHECK(st1.cores == 1 && st1.pixels == 4 && st1.hits == 2);
    }

    /* The same scene from buffers. */
    char *params = slurp(dir, "Params.mem"), *vertex = slurp(dir, "Vertex.mem");
    char *textures = slurp(dir, "Textures.mem"), *instr = slurp(dir, "Instructions.mem");
    CHECK(params && vertex && textures && instr);
    PicajitTheiaScene *mem = NULL;
    CHECK(picajit_theia_scene_create(params, vertex, textures, instr, NULL, &mem) ==
          PICAJIT_OK);
    uint8_t rgb[4 * 2 * 3];
    CHECK(picajit_theia_render(mem, PICAJIT_ENGINE_JIT, 0, 1, rgb, sizeof rgb, NULL) ==
          PICAJIT_OK);
    CHECK(memcmp(rgb, want, sizeof want) == 0);

    /* errors */
    CHECK(picajit_theia_render(scene, PICAJIT_ENGINE_JIT, 0, 1, rgb, sizeof rgb - 1, NULL) ==
          PICAJIT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(picajit_last_error(), "needs 24 bytes") != NULL);
    CHECK(picajit_theia_render(scene, PICAJIT_ENGINE_JIT, 3, 1, rgb, sizeof rgb, NULL) ==
          PICAJIT_ERR_INVALID_ARGUMENT);
    CHECK(picajit_theia_render(scene, 99, 0, 1, rgb, sizeof rgb, NULL) ==
          PICAJIT_ERR_INVALID_ARGUMENT);
    CHECK(picajit_theia_render(scene, PICAJIT_ENGINE_JIT, 0, 1, NULL, 24, NULL) ==
          PICAJIT_ERR_NULL);
    CHECK(picajit_theia_render(NULL, PICAJIT_ENGINE_JIT, 0, 1, rgb, 24, NULL) ==
          PICAJIT_ERR_NULL);
    CHECK(picajit_theia_scene_info(scene, NULL, &h, &cores) == PICAJIT_ERR_NULL);
    PicajitTheiaScene *bad = NULL;
    CHECK(picajit_theia_scene_load("/nonexistent-theia-scene", NULL, &bad) ==
          PICAJIT_ERR_PROGRAM && bad == NULL);
    CHECK(picajit_theia_scene_load(dir, "/nonexistent-theia-rtl", &bad) ==
          PICAJIT_ERR_INVALID_ARGUMENT && bad == NULL);
    CHECK(picajit_theia_scene_create("zz", vertex, textures, instr, NULL, &bad) ==
          PICAJIT_ERR_PROGRAM && bad == NULL);
    CHECK(picajit_theia_scene_create(params, vertex, textures, "x", NULL, &bad) ==
          PICAJIT_ERR_PROGRAM && bad == NULL);
    CHECK(picajit_theia_scene_create(params, NULL, textures, instr, NULL, &bad) ==
          PICAJIT_ERR_NULL);
    /* a resolution of 0 x 0 */
    CHECK(picajit_theia_scene_create("13 0 0 0", vertex, textures, instr, NULL, &bad) ==
          PICAJIT_ERR_PROGRAM);
    /* every entry point at an undefined operation: the render fails with the run's error */
    char undef[1024] = "26\n";
    for (int k = 0; k < 12; k++) strcat(undef, "00000000 0000800C\n");
    strcat(undef, "00060000 00000000\n");
    PicajitTheiaScene *broken = NULL;
    CHECK(picajit_theia_scene_create(params, vertex, textures, undef, NULL, &broken) ==
          PICAJIT_OK);
    for (int e = 0; e < n_engines; e++) {
        CHECK(picajit_theia_render(broken, engines[e], 0, 0, rgb, sizeof rgb, NULL) ==
              PICAJIT_ERR_EXEC);
        CHECK(strstr(picajit_last_error(), "undefined THEIA operation") != NULL);
    }
    CHECK(picajit_theia_scene_destroy(broken) == PICAJIT_OK);
    CHECK(picajit_theia_scene_destroy(mem) == PICAJIT_OK);
    CHECK(picajit_theia_scene_destroy(mem) == PICAJIT_ERR_INVALID_HANDLE);
    CHECK(picajit_theia_scene_destroy(scene) == PICAJIT_OK);
    CHECK(picajit_theia_scene_destroy(NULL) == PICAJIT_OK);
    free(params);
    free(vertex);
    free(textures);
    free(instr);
}

int main(int argc, char **argv) {
    if (argc > 1) {
        render_tests(argv[1]);
    } else {
        failed++;
        fprintf(stderr, "usage: test_theia SCENE_DIR (examples/theia/scene)\n");
    }
    const uint32_t backends[] = {PICAJIT_ENGINE_INTERP, PICAJIT_ENGINE_JIT};
    for (int p = 0; p < 2; p++) {
        for (int b = 0; b < 2; b++) {
            PicajitTheiaProgram *prog = NULL;
            CHECK(picajit_theia_program_create(RAY, 0, backends[b], (uint32_t)p, &prog) ==
                  PICAJIT_OK);
            uint32_t len = 0;
            CHECK(picajit_theia_program_length(prog, &len) == PICAJIT_OK && len == 24);
            PicajitTheiaState s;
            PicajitTheiaResult r;
            setup(&s, 0.1);
            CHECK(picajit_theia_run(prog, &s, 0, 1000, NULL, &r) == PICAJIT_OK);
            CHECK(r.status == PICAJIT_THEIA_RETURNED && r.return_value == 1 && r.steps == 23);
            CHECK(s.regs[79][0] == Q(5.0)); /* R9 = t */
            setup(&s, 0.9);
            CHECK(picajit_theia_run(prog, &s, 0, 1000, NULL, &r) == PICAJIT_OK);
            CHECK(r.status == PICAJIT_THEIA_RETURNED && r.return_value == 0);
            setup(&s, 0.1);
            CHECK(picajit_theia_run(prog, &s, 0, 5, NULL, &r) == PICAJIT_OK);
            CHECK(r.status == PICAJIT_THEIA_BUDGET && r.steps == 5 && r.pc == 0x8000 + 12 + 5);
            /* A budget of 0 is PICAJIT_DEFAULT_BUDGET, as for every ISA. */
            setup(&s, 0.1);
            CHECK(picajit_theia_run(prog, &s, 0, 0, NULL, &r) == PICAJIT_OK);
            CHECK(r.status == PICAJIT_THEIA_RETURNED && r.return_value == 1 && r.steps == 23);
            uint32_t engine = 99;
            CHECK(picajit_theia_program_engine(prog, &engine) == PICAJIT_OK);
            CHECK(backends[b] == PICAJIT_ENGINE_JIT ? engine != PICAJIT_ENGINE_JIT
                                                     : engine == backends[b]);
#if defined(__x86_64__)
            CHECK(backends[b] != PICAJIT_ENGINE_JIT || engine == PICAJIT_ENGINE_X64);
#endif
            CHECK(picajit_theia_program_engine(prog, NULL) == PICAJIT_ERR_NULL);
            /* errors */
            CHECK(picajit_theia_run(prog, &s, 24, 10, NULL, &r) == PICAJIT_ERR_INVALID_ARGUMENT);
            CHECK(strstr(picajit_last_error(), "24 instructions") != NULL);
            CHECK(picajit_theia_run(prog, NULL, 0, 10, NULL, &r) == PICAJIT_ERR_NULL);
            CHECK(picajit_theia_run(prog, &s, 0, 10, NULL, NULL) == PICAJIT_ERR_NULL);
            CHECK(picajit_theia_run(NULL, &s, 0, 10, NULL, &r) == PICAJIT_ERR_NULL);
            picajit_theia_program_destroy(prog);
        }
    }

    /* Both engines leave the same whole state (result flops and return address included). */
    for (int p = 0; p < 2; p++) {
        PicajitTheiaState out[2];
        for (int b = 0; b < 2; b++) {
            PicajitTheiaProgram *prog = NULL;
            CHECK(picajit_theia_program_create(RAY, 0, backends[b], (uint32_t)p, &prog) ==
                  PICAJIT_OK);
            PicajitTheiaResult r;
            setup(&out[b], 0.1);
            out[b].last_result[0] = 0x1234;
            out[b].return_addr = 0x8005;
            CHECK(picajit_theia_run(prog, &out[b], 0, 1000, NULL, &r) == PICAJIT_OK);
            CHECK(out[b].return_addr == 0x8005 && out[b].last_result[0] == 1);
            picajit_theia_program_destroy(prog);
        }
        CHECK(memcmp(&out[0], &out[1], sizeof out[0]) == 0);
    }

    /* I/O callbacks, a stall, an undefined operation in a .mem image */
    const char *io_src = "\tSETX R1 32'h7\n\tOMWRITE OREG_PIXEL_COLOR R1 R1\n\tTMREAD R2 R1 VOID\n"
                         "\tRETURN RT_TRUE\n\tINTP R3 R1 VOID\n\tRETURN RT_TRUE\n";
    for (int b = 0; b < 2; b++) {
        PicajitTheiaProgram *prog = NULL;
        CHECK(picajit_theia_program_create(io_src, 0, backends[b], PICAJIT_THEIA_PROFILE_RTL,
                                           &prog) == PICAJIT_OK);
        struct io_log log = {0, 0, {0, 0, 0}};
        PicajitTheiaIo io = {&log, om_write, tm_read};
        PicajitTheiaState s;
        PicajitTheiaResult r;
        memset(&s, 0, sizeof s);
        CHECK(picajit_theia_run(prog, &s, 0, 100, &io, &r) == PICAJIT_OK);
        CHECK(r.status == PICAJIT_THEIA_RETURNED && r.steps == 4);
        CHECK(log.writes == 1 && log.reads == 1 && log.last_data[0] == 7);
        CHECK(s.regs[72][0] == 8 && s.regs[72][1] == 2 && s.regs[72][2] == 3);
        CHECK(picajit_theia_run(prog, &s, 4, 100, NULL, &r) == PICAJIT_OK);
        CHECK(r.status == PICAJIT_THEIA_STALLED && r.steps == 0 && r.pc == 0x8000 + 12 + 4);
        picajit_theia_program_destroy(prog);
    }
    char mem[400] = "26 //\n";
    const unsigned rom[12] = {0, 44, 47, 69, 157, 232, 248, 190, 55, 276, 278, 37};
    for (int k = 0; k < 12; k++) {
        char line[40];
        snprintf(line, sizeof line, "00000000 %08X\n", rom[k]);
        strcat(mem, line);
    }
    strcat(mem, "00060000 00000000\n");
    PicajitTheiaProgram *bad = NULL;
    CHECK(picajit_theia_program_create(mem, 1, PICAJIT_ENGINE_JIT, 0, &bad) == PICAJIT_OK);
    PicajitTheiaState s;
    PicajitTheiaResult r;
    memset(&s, 0, sizeof s);
    CHECK(picajit_theia_run(bad, &s, 0, 10, NULL, &r) == PICAJIT_ERR_EXEC);
    CHECK(strstr(picajit_last_error(), "undefined THEIA operation") != NULL);
    picajit_theia_program_destroy(bad);
    picajit_theia_program_destroy(NULL);

    PicajitTheiaProgram *none = NULL;
    CHECK(picajit_theia_program_create("\tFROB R1 R2 R3\n", 0, 1, 0, &none) ==
          PICAJIT_ERR_ASSEMBLY);
    CHECK(strstr(picajit_last_error(), "FROB") != NULL && none == NULL);
    CHECK(picajit_theia_program_create("x", 1, 1, 0, &none) == PICAJIT_ERR_ASSEMBLY);
    CHECK(picajit_theia_program_create(RAY, 0, 1, 7, &none) == PICAJIT_ERR_INVALID_ARGUMENT);
    CHECK(picajit_theia_program_create(RAY, 0, 99, 0, &none) == PICAJIT_ERR_INVALID_ARGUMENT);
    CHECK(strstr(picajit_last_error(), "unknown engine 99 (not a PicajitEngineKind value)"));
    CHECK(picajit_theia_program_create(NULL, 0, 1, 0, &none) == PICAJIT_ERR_NULL);
    CHECK(picajit_theia_program_create(RAY, 0, 1, 0, NULL) == PICAJIT_ERR_NULL);

    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
