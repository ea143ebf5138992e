/*
 * Tests of the picajit C API, written against include/picajit.h only. Run by tests/capi.rs:
 *   test_capi MVP_SHBIN POINT_TO_QUAD_SHBIN POINT_TO_DISC_SHBIN
 * (the SHBIN images of examples/mvp.v.pica, examples/point_to_quad.g.pica and
 * examples/point_to_disc.g.pica), natively and
 * under valgrind memcheck. Every API function is called, with its error paths. Prints
 * "N passed, M failed" and exits non-zero on any failure.
 */
#include "picajit.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

/* ------------------------------------------------------------------------------------------ */
/* Helpers */

static const char *mvp_path, *quad_path, *disc_path;

/* Set (by tests/capi.rs) for the runs under valgrind, which ignores the SSE rounding mode and
   flush bits that JIT code sets: there, values JIT code computes are not compared with the
   interpreter's (the native runs compare them bit for bit). */
static int under_valgrind;

typedef struct {
    unsigned char *data;
    size_t size;
} Blob;

static Blob read_file(const char *path) {
    Blob b = {NULL, 0};
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s\n", path);
        exit(2);
    }
    fseek(f, 0, SEEK_END);
    b.size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    b.data = malloc(b.size);
    if (!b.data || fread(b.data, 1, b.size, f) != b.size) {
        fprintf(stderr, "cannot read %s\n", path);
        exit(2);
    }
    fclose(f);
    return b;
}

static PicajitEngine *make_engine(uint32_t backend, uint32_t float_mode, uint64_t budget) {
    PicajitEngineConfig cfg;
    PicajitEngine *engine = NULL;
    OK(picajit_engine_config_init(&cfg));
    cfg.engine = backend;
    cfg.float_mode = float_mode;
    cfg.budget = budget;
    OK(picajit_engine_create(&cfg, &engine));
    return engine;
}

static PicajitShader *load_source(PicajitEngine *engine, const char *source) {
    PicajitShader *shader = NULL;
    OK(picajit_shader_load_source(engine, source, 0, &shader));
    return shader;
}

static PicajitUniforms *make_uniforms(PicajitEngine *engine) {
    PicajitUniforms *u = NULL;
    OK(picajit_uniforms_create(engine, &u));
    return u;
}

/* A uniform set with `shader`'s constants applied. */
static PicajitUniforms *uniforms_for(PicajitEngine *engine, const PicajitShader *shader) {
    PicajitUniforms *u = make_uniforms(engine);
    OK(picajit_shader_apply_constants(shader, u));
    return u;
}

static PicajitGeometry *make_geometry(void) {
    PicajitGeometry *geo = NULL;
    OK(picajit_geometry_create(&geo));
    return geo;
}

/* The objects a test made, destroyed at its end by destroy_made: shaders, geometry states
   and uniform sets before the engines. Entries left NULL are accepted by the destroy
   functions. */
typedef struct {
    PicajitShader *shaders[4];
    PicajitGeometry *geometries[2];
    PicajitUniforms *uniforms[2];
    PicajitEngine *engines[2];
} Made;

static void destroy_made(Made m) {
    for (size_t k = 0; k < 4; k++) {
        OK(picajit_shader_destroy(m.shaders[k]));
    }
    for (size_t k = 0; k < 2; k++) {
        OK(picajit_geometry_destroy(m.geometries[k]));
        OK(picajit_uniforms_destroy(m.uniforms[k]));
    }
    for (size_t k = 0; k < 2; k++) {
        OK(picajit_engine_destroy(m.engines[k]));
    }
}

static uint32_t f32_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* o0 = c95 + v0; o1 = v1; end (assembled from "add o0, c95, v0 / mov o1, v1 / end"). */
static const uint32_t ADD_CODE[] = {0x0007f000u, 0x4c201000u, 0x88000000u};
static const uint32_t ADD_OPDESCS[] = {0x6c36fu};

static const PicajitVertexLayout FULL_F32 = {PICAJIT_FORMAT_F32, 0, 0xFFFF, 0};
static const PicajitVertexLayout FULL_F24 = {PICAJIT_FORMAT_F24, 0, 0xFFFF, 0};

/* ------------------------------------------------------------------------------------------ */

static void test_versions_and_errors(void) {
    uint32_t v = picajit_api_version();
    CHECK(v == PICAJIT_API_VERSION);
    CHECK(v >> 16 == PICAJIT_API_VERSION_MAJOR);
    CHECK((v & 0xFFFF) == PICAJIT_API_VERSION_MINOR);
    CHECK(picajit_version() != NULL && strchr(picajit_version(), '.') != NULL);
    CHECK(strcmp(picajit_status_name(PICAJIT_OK), "PICAJIT_OK") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_NULL), "PICAJIT_ERR_NULL") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_INVALID_ARGUMENT),
                 "PICAJIT_ERR_INVALID_ARGUMENT") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_PROGRAM), "PICAJIT_ERR_PROGRAM") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_SHBIN), "PICAJIT_ERR_SHBIN") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_ASSEMBLY), "PICAJIT_ERR_ASSEMBLY") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_ENGINE_UNAVAILABLE),
                 "PICAJIT_ERR_ENGINE_UNAVAILABLE") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_EXEC), "PICAJIT_ERR_EXEC") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_PANIC), "PICAJIT_ERR_PANIC") == 0);
    CHECK(strcmp(picajit_status_name(PICAJIT_ERR_INVALID_HANDLE),
                 "PICAJIT_ERR_INVALID_HANDLE") == 0);
    CHECK(strcmp(picajit_status_name(-1), "unknown status") == 0);
    CHECK(strcmp(picajit_status_name(1000), "unknown status") == 0);

    /* The message names the function and the argument, and a success clears it. */
    FAILS(picajit_engine_config_init(NULL), PICAJIT_ERR_NULL,
          "picajit_engine_config_init: config is NULL");
    CHECK(strcmp(picajit_last_error(), "picajit_engine_config_init: config is NULL") == 0);
    PicajitEngineConfig cfg;
    OK(picajit_engine_config_init(&cfg));
    CHECK(strcmp(picajit_last_error(), "") == 0);
}

static void test_engine(void) {
    PicajitEngineConfig cfg;
    PicajitEngine *engine = NULL;
    uint32_t backend = 99;
    size_t cached = 99;

    OK(picajit_engine_config_init(&cfg));
    CHECK(cfg.struct_size == sizeof(PicajitEngineConfig));
    CHECK(cfg.engine == PICAJIT_ENGINE_JIT);
    CHECK(cfg.float_mode == PICAJIT_FLOAT_F24);
    CHECK(cfg.rounding == PICAJIT_ROUNDING_TOWARD_ZERO);
    CHECK(cfg.budget == (1u << 20));

    /* PICAJIT_ENGINE_JIT (the default, 0) resolves to a real engine. */
    CHECK(PICAJIT_ENGINE_JIT == 0);
    OK(picajit_engine_create(&cfg, &engine));
    OK(picajit_engine_kind(engine, &backend));
    CHECK(backend != PICAJIT_ENGINE_JIT);
#if defined(__x86_64__)
    CHECK(backend == PICAJIT_ENGINE_X64);
#endif
    OK(picajit_engine_cache_size(engine, &cached));
    OK(picajit_engine_clear_cache(engine));
    OK(picajit_engine_cache_size(engine, &cached));
    CHECK(cached == 0);
    OK(picajit_engine_destroy(engine));

    cfg.engine = PICAJIT_ENGINE_INTERP;
    cfg.float_mode = PICAJIT_FLOAT_F32;
    cfg.rounding = PICAJIT_ROUNDING_NEAREST_EVEN;
    cfg.budget = 0; /* the default */
    engine = NULL;
    OK(picajit_engine_create(&cfg, &engine));
    OK(picajit_engine_kind(engine, &backend));
    CHECK(backend == PICAJIT_ENGINE_INTERP);
    OK(picajit_engine_destroy(engine));

#if defined(__x86_64__)
    /* AArch64 code runs on an x86-64 host only in builds that emulate it (the `a64-emu`
       feature; cargo's test builds enable it): either the engine uses it (or the interpreter,
       for programs the AArch64 JIT cannot compile), or creation fails and leaves `engine`
       alone. */
    OK(picajit_engine_config_init(&cfg));
    cfg.engine = PICAJIT_ENGINE_A64;
    engine = (PicajitEngine *)&cfg;
    PicajitStatus a64 = picajit_engine_create(&cfg, &engine);
    if (a64 == PICAJIT_OK) {
        OK(picajit_engine_kind(engine, &backend));
        CHECK(backend == PICAJIT_ENGINE_A64 || backend == PICAJIT_ENGINE_INTERP);
        OK(picajit_engine_destroy(engine));
    } else {
        check_status(a64, PICAJIT_ERR_ENGINE_UNAVAILABLE, "backend unavailable", __FILE__,
                     __LINE__, "picajit_engine_create(A64)");
        CHECK(engine == (PicajitEngine *)&cfg);
    }
#endif

    /* Error paths. */
    OK(picajit_engine_config_init(&cfg));
    FAILS(picajit_engine_create(NULL, &engine), PICAJIT_ERR_NULL, "config is NULL");
    FAILS(picajit_engine_create(&cfg, NULL), PICAJIT_ERR_NULL, "out is NULL");
    cfg.struct_size = 8;
    FAILS(picajit_engine_create(&cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT, "struct_size");
    OK(picajit_engine_config_init(&cfg));
    cfg.engine = 4;
    FAILS(picajit_engine_create(&cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT,
          "unknown engine 4 (not a PicajitEngineKind value)");
    OK(picajit_engine_config_init(&cfg));
    cfg.float_mode = 2;
    FAILS(picajit_engine_create(&cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT, "float mode");
    OK(picajit_engine_config_init(&cfg));
    cfg.rounding = 7;
    FAILS(picajit_engine_create(&cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT, "rounding");
    FAILS(picajit_engine_kind(NULL, &backend), PICAJIT_ERR_NULL, "engine is NULL");
    engine = make_engine(PICAJIT_ENGINE_INTERP, PICAJIT_FLOAT_F24, 0);
    FAILS(picajit_engine_kind(engine, NULL), PICAJIT_ERR_NULL, "kind is NULL");
    FAILS(picajit_engine_cache_size(engine, NULL), PICAJIT_ERR_NULL, "count is NULL");
    FAILS(picajit_engine_cache_size(NULL, &cached), PICAJIT_ERR_NULL, "engine is NULL");
    FAILS(picajit_engine_clear_cache(NULL), PICAJIT_ERR_NULL, "engine is NULL");
    OK(picajit_engine_destroy(engine));
    OK(picajit_engine_destroy(NULL));
}

static void test_shader_create(void) {
    PicajitEngine *engine = make_engine(PICAJIT_ENGINE_JIT, PICAJIT_FLOAT_F24, 0);
    PicajitShader *shader = NULL;
    PicajitShaderInfo info;
    const char *reason = "unset";

    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, PICAJIT_SHADER_VERTEX,
                             &shader));
    memset(&info, 0xAB, sizeof info);
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.struct_size == sizeof info);
    CHECK(info.kind == PICAJIT_SHADER_VERTEX);
    CHECK(info.engine != PICAJIT_ENGINE_JIT);
    CHECK(info.entry == 0);
    CHECK(info.code_words == 3);
    CHECK(info.opdesc_count == 1);
    CHECK(info.input_mask == 0xFFFF && info.output_mask == 0xFFFF);
    CHECK(info.gs_mode == PICAJIT_GS_POINT);
    OK(picajit_shader_fallback_reason(shader, &reason));
    /* Compiled code has a size; a fallback has a reason; never both, never neither. */
    CHECK((info.fallback != 0) == (reason != NULL));
    CHECK((info.engine == PICAJIT_ENGINE_INTERP) == (info.code_bytes == 0));
    OK(picajit_shader_destroy(shader));

    /* The interpreter was asked for: no fallback. */
    PicajitEngine *interp = make_engine(PICAJIT_ENGINE_INTERP, PICAJIT_FLOAT_F24, 0);
    shader = NULL;
    OK(picajit_shader_create(interp, ADD_CODE, 3, NULL, 0, 2, PICAJIT_SHADER_GEOMETRY, &shader));
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.kind == PICAJIT_SHADER_GEOMETRY);
    CHECK(info.engine == PICAJIT_ENGINE_INTERP);
    CHECK(info.fallback == 0 && info.code_bytes == 0);
    CHECK(info.entry == 2 && info.opdesc_count == 0);
    OK(picajit_shader_fallback_reason(shader, &reason));
    CHECK(reason == NULL);

    /* get_info / fallback_reason errors. */
    info.struct_size = 4;
    FAILS(picajit_shader_get_info(shader, &info), PICAJIT_ERR_INVALID_ARGUMENT, "struct_size");
    FAILS(picajit_shader_get_info(NULL, &info), PICAJIT_ERR_NULL, "shader is NULL");
    FAILS(picajit_shader_get_info(shader, NULL), PICAJIT_ERR_NULL, "info is NULL");
    FAILS(picajit_shader_fallback_reason(NULL, &reason), PICAJIT_ERR_NULL, "shader is NULL");
    FAILS(picajit_shader_fallback_reason(shader, NULL), PICAJIT_ERR_NULL, "reason is NULL");
    OK(picajit_shader_destroy(shader));
    OK(picajit_shader_destroy(NULL));
    OK(picajit_engine_destroy(interp));

    /* Invalid programs and arguments; `out` is left alone. */
    static uint32_t big[4097];
    static uint32_t many[4097]; /* a whole 4096-entry table is accepted, one more is not */
    uint32_t aligned[4] = {0, 0x88000000u, 0, 0};
    const uint32_t *misaligned = (const uint32_t *)((const char *)aligned + 1);
    shader = NULL;
    /* Each case: picajit_shader_create's arguments, the status and the message. */
    const struct {
        const PicajitEngine *engine;
        const uint32_t *code;
        size_t code_words;
        const uint32_t *opdescs;
        size_t opdesc_count;
        uint32_t entry, kind;
        PicajitShader **out;
        PicajitStatus status;
        const char *message;
    } bad[] = {
        {NULL, ADD_CODE, 3, NULL, 0, 0, 0, &shader, PICAJIT_ERR_NULL, "engine is NULL"},
        {engine, NULL, 3, NULL, 0, 0, 0, &shader, PICAJIT_ERR_NULL, "code is NULL"},
        {engine, ADD_CODE, 3, NULL, 1, 0, 0, &shader, PICAJIT_ERR_NULL, "opdescs is NULL"},
        {engine, ADD_CODE, 3, NULL, 0, 0, 0, NULL, PICAJIT_ERR_NULL, "out is NULL"},
        {engine, ADD_CODE, 3, NULL, 0, 0, 2, &shader, PICAJIT_ERR_INVALID_ARGUMENT,
         "unknown shader kind 2"},
        {engine, ADD_CODE, 3, NULL, 0, 3, 0, &shader, PICAJIT_ERR_PROGRAM, "entry point"},
        {engine, ADD_CODE, 0, NULL, 0, 0, 0, &shader, PICAJIT_ERR_PROGRAM, "entry point"},
        {engine, big, 4097, NULL, 0, 0, 0, &shader, PICAJIT_ERR_PROGRAM, "4097 code words"},
        {engine, ADD_CODE, 3, many, 4097, 0, 0, &shader, PICAJIT_ERR_PROGRAM,
         "4097 operand descriptors"},
        {engine, misaligned, 2, NULL, 0, 0, 0, &shader, PICAJIT_ERR_INVALID_ARGUMENT,
         "not aligned"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        FAILS(picajit_shader_create(bad[k].engine, bad[k].code, bad[k].code_words, bad[k].opdescs,
                                    bad[k].opdesc_count, bad[k].entry, bad[k].kind, bad[k].out),
              bad[k].status, bad[k].message);
    }
    CHECK(shader == NULL);
    OK(picajit_engine_destroy(engine));
}

static void test_shbin_and_source(void) {
    PicajitEngine *engine = make_engine(PICAJIT_ENGINE_JIT, PICAJIT_FLOAT_F24, 0);
    Blob mvp = read_file(mvp_path);
    Blob quad = read_file(quad_path);
    PicajitShader *shader = NULL;
    PicajitShaderInfo info;
    uint32_t count = 0;

    OK(picajit_shbin_dvle_count(mvp.data, mvp.size, &count));
    CHECK(count == 1);
    OK(picajit_shader_load_shbin(engine, mvp.data, mvp.size, 0, &shader));
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.kind == PICAJIT_SHADER_VERTEX);
    CHECK(info.code_words == 10);
    CHECK(info.input_mask == 0x3 && info.output_mask == 0x3);
    OK(picajit_shader_destroy(shader));

    shader = NULL;
    OK(picajit_shader_load_shbin(engine, quad.data, quad.size, 0, &shader));
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.kind == PICAJIT_SHADER_GEOMETRY);
    CHECK(info.gs_mode == PICAJIT_GS_POINT);
    OK(picajit_shader_destroy(shader));

    /* SHBIN errors. */
    shader = NULL;
    FAILS(picajit_shader_load_shbin(engine, mvp.data, mvp.size, 1, &shader), PICAJIT_ERR_SHBIN,
          "DVLE #1 requested but the SHBIN has 1");
    FAILS(picajit_shader_load_shbin(engine, mvp.data, mvp.size / 2, 0, &shader),
          PICAJIT_ERR_SHBIN, "past the end of the file");
    FAILS(picajit_shader_load_shbin(engine, mvp.data, 3, 0, &shader), PICAJIT_ERR_SHBIN,
          "DVLB");
    FAILS(picajit_shbin_dvle_count(mvp.data, 10, &count), PICAJIT_ERR_SHBIN, "DVLB");
    unsigned char junk[64];
    memset(junk, 0x5A, sizeof junk);
    FAILS(picajit_shader_load_shbin(engine, junk, sizeof junk, 0, &shader), PICAJIT_ERR_SHBIN,
          "bad magic");
    FAILS(picajit_shader_load_shbin(NULL, mvp.data, mvp.size, 0, &shader), PICAJIT_ERR_NULL,
          "engine is NULL");
    FAILS(picajit_shader_load_shbin(engine, NULL, mvp.size, 0, &shader), PICAJIT_ERR_NULL,
          "data is NULL");
    FAILS(picajit_shader_load_shbin(engine, mvp.data, mvp.size, 0, NULL), PICAJIT_ERR_NULL,
          "out is NULL");
    FAILS(picajit_shbin_dvle_count(NULL, 4, &count), PICAJIT_ERR_NULL, "data is NULL");
    FAILS(picajit_shbin_dvle_count(mvp.data, mvp.size, NULL), PICAJIT_ERR_NULL, "count is NULL");
    CHECK(shader == NULL);

    /* Source. */
    shader = load_source(engine,
                         ".in pos v3\n"
                         ".out o position\n"
                         ".proc main\n"
                         "    mov o, pos\n"
                         "    end\n"
                         ".end\n");
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.input_mask == 0x8 && info.output_mask == 0x1);
    OK(picajit_shader_destroy(shader));
    shader = NULL;
    FAILS(picajit_shader_load_source(engine, ".proc main\n    frobnicate r0\n.end\n", 0, &shader),
          PICAJIT_ERR_ASSEMBLY, "source:2");
    FAILS(picajit_shader_load_source(engine, ".proc main\n end\n.end\n", 1, &shader),
          PICAJIT_ERR_SHBIN, "DVLE #1");
    /* No shader in the source: an empty text, or only a .nodvle library (picasso refuses
       both); and an empty SHBIN image. */
    FAILS(picajit_shader_load_source(engine, "", 0, &shader), PICAJIT_ERR_ASSEMBLY,
          "nothing to assemble");
    FAILS(picajit_shader_load_source(engine, ".nodvle\n.proc f\n end\n.end\n", 0, &shader),
          PICAJIT_ERR_ASSEMBLY, "no DVLE");
    FAILS(picajit_shader_load_shbin(engine, mvp.data, 0, 0, &shader), PICAJIT_ERR_SHBIN,
          "DVLB");
    FAILS(picajit_shbin_dvle_count(mvp.data, 0, &count), PICAJIT_ERR_SHBIN, "DVLB");
    CHECK(shader == NULL);
    /* Size limits: one byte over each is an error that names the limit. */
    {
        unsigned char *big = calloc(PICAJIT_MAX_SHBIN_BYTES + 1, 1);
        CHECK(big != NULL);
        memcpy(big, mvp.data, mvp.size);
        FAILS(picajit_shader_load_shbin(engine, big, PICAJIT_MAX_SHBIN_BYTES + 1, 0, &shader),
              PICAJIT_ERR_SHBIN, "at most 16777216");
        FAILS(picajit_shbin_dvle_count(big, PICAJIT_MAX_SHBIN_BYTES + 1, &count),
              PICAJIT_ERR_SHBIN, "at most 16777216");
        free(big);
        char *src = malloc(PICAJIT_MAX_SOURCE_BYTES + 2);
        CHECK(src != NULL);
        memset(src, ' ', PICAJIT_MAX_SOURCE_BYTES + 1);
        src[PICAJIT_MAX_SOURCE_BYTES + 1] = '\0';
        FAILS(picajit_shader_load_source(engine, src, 0, &shader), PICAJIT_ERR_ASSEMBLY,
              "at most 67108864");
        free(src);
        CHECK(shader == NULL);
    }
    FAILS(picajit_shader_load_source(engine, "\xff\xfe", 0, &shader),
          PICAJIT_ERR_INVALID_ARGUMENT, "UTF-8");
    FAILS(picajit_shader_load_source(engine, NULL, 0, &shader), PICAJIT_ERR_NULL,
          "source is NULL");
    FAILS(picajit_shader_load_source(NULL, "", 0, &shader), PICAJIT_ERR_NULL, "engine is NULL");
    FAILS(picajit_shader_load_source(engine, ".proc main\n end\n.end\n", 0, NULL),
          PICAJIT_ERR_NULL, "out is NULL");
    CHECK(shader == NULL);

    free(mvp.data);
    free(quad.data);
    OK(picajit_engine_destroy(engine));
}

static void test_uniforms(void) {
    PicajitEngine *f24 = make_engine(PICAJIT_ENGINE_INTERP, PICAJIT_FLOAT_F24, 0);
    PicajitEngine *f32 = make_engine(PICAJIT_ENGINE_INTERP, PICAJIT_FLOAT_F32, 0);
    PicajitUniforms *u = NULL, *u32 = NULL;
    float row[4];
    /* 1 + 2^-20 has no f24 form: truncated to 1.0 in f24 mode, kept in f32 mode. */
    const float fine[8] = {1.0f + 0x1p-20f, 2.0f, -3.5f, 0.0f, 5.0f, 6.0f, 7.0f, 8.0f};
    const uint32_t raw[4] = {0x3F0000u, 0xBF0000u, 0x400000u, 0xFF3F0000u};
    const uint8_t ints[4] = {3, 10, 2, 0};
    uint16_t bools = 0;

    OK(picajit_uniforms_create(f24, &u));
    OK(picajit_uniforms_create(f32, &u32));
    OK(picajit_uniforms_get_float(u, 5, row));
    CHECK(row[0] == 0.0f && row[3] == 0.0f);
    OK(picajit_uniforms_get_float(u, 100, row)); /* c96-c127 read 1.0 */
    CHECK(row[0] == 1.0f && row[3] == 1.0f);

    OK(picajit_uniforms_set_float(u, 94, 2, fine));
    OK(picajit_uniforms_get_float(u, 94, row));
    CHECK(row[0] == 1.0f && row[1] == 2.0f && row[2] == -3.5f && row[3] == 0.0f);
    OK(picajit_uniforms_get_float(u, 95, row));
    CHECK(row[0] == 5.0f && row[3] == 8.0f);
    OK(picajit_uniforms_set_float(u32, 0, 1, fine));
    OK(picajit_uniforms_get_float(u32, 0, row));
    CHECK(row[0] == 1.0f + 0x1p-20f);

    /* Raw f24: 1, -1, 2, and 1 with junk above bit 23 (ignored). */
    OK(picajit_uniforms_set_float_f24(u, 7, 1, raw));
    OK(picajit_uniforms_get_float(u, 7, row));
    CHECK(row[0] == 1.0f && row[1] == -1.0f && row[2] == 2.0f && row[3] == 1.0f);

    OK(picajit_uniforms_set_int(u, 3, ints));
    OK(picajit_uniforms_set_bool(u, 15, true));
    OK(picajit_uniforms_set_bool(u, 2, true));
    OK(picajit_uniforms_get_bools(u, &bools));
    CHECK(bools == 0x8004);
    OK(picajit_uniforms_set_bool(u, 15, false));
    OK(picajit_uniforms_get_bools(u, &bools));
    CHECK(bools == 0x0004);
    OK(picajit_uniforms_set_bools(u, 0xA5A5));
    OK(picajit_uniforms_get_bools(u, &bools));
    CHECK(bools == 0xA5A5);

    /* Errors. */
    FAILS(picajit_uniforms_create(NULL, &u), PICAJIT_ERR_NULL, "engine is NULL");
    FAILS(picajit_uniforms_create(f24, NULL), PICAJIT_ERR_NULL, "out is NULL");
    FAILS(picajit_uniforms_set_float(u, 96, 1, fine), PICAJIT_ERR_INVALID_ARGUMENT, "past c95");
    FAILS(picajit_uniforms_set_float(u, 95, 2, fine), PICAJIT_ERR_INVALID_ARGUMENT,
          "do not fit");
    /* Setting zero uniforms is a no-op (the pointer is not read), from any row up to c96. */
    OK(picajit_uniforms_get_float(u, 95, row));
    float before = row[0];
    OK(picajit_uniforms_set_float(u, 0, 0, fine));
    OK(picajit_uniforms_set_float(u, 96, 0, NULL));
    OK(picajit_uniforms_set_float_f24(u, 5, 0, NULL));
    OK(picajit_uniforms_get_float(u, 95, row));
    CHECK(row[0] == before);
    FAILS(picajit_uniforms_set_float(u, 97, 0, NULL), PICAJIT_ERR_INVALID_ARGUMENT, "past c95");
    FAILS(picajit_uniforms_set_float(u, 0, 1, NULL), PICAJIT_ERR_NULL, "values is NULL");
    FAILS(picajit_uniforms_set_float(NULL, 0, 1, fine), PICAJIT_ERR_NULL, "uniforms is NULL");
    FAILS(picajit_uniforms_set_float_f24(u, 200, 1, raw), PICAJIT_ERR_INVALID_ARGUMENT,
          "past c95");
    FAILS(picajit_uniforms_set_float_f24(u, 0, 1, NULL), PICAJIT_ERR_NULL, "bits is NULL");
    FAILS(picajit_uniforms_set_float_f24(NULL, 0, 1, raw), PICAJIT_ERR_NULL, "uniforms is NULL");
    FAILS(picajit_uniforms_get_float(u, 128, row), PICAJIT_ERR_INVALID_ARGUMENT, "past c127");
    FAILS(picajit_uniforms_get_float(u, 0, NULL), PICAJIT_ERR_NULL, "value is NULL");
    FAILS(picajit_uniforms_get_float(NULL, 0, row), PICAJIT_ERR_NULL, "uniforms is NULL");
    FAILS(picajit_uniforms_set_int(u, 4, ints), PICAJIT_ERR_INVALID_ARGUMENT, "past i3");
    FAILS(picajit_uniforms_set_int(u, 0, NULL), PICAJIT_ERR_NULL, "value is NULL");
    FAILS(picajit_uniforms_set_int(NULL, 0, ints), PICAJIT_ERR_NULL, "uniforms is NULL");
    FAILS(picajit_uniforms_set_bool(u, 16, true), PICAJIT_ERR_INVALID_ARGUMENT, "past b15");
    FAILS(picajit_uniforms_set_bool(NULL, 0, true), PICAJIT_ERR_NULL, "uniforms is NULL");
    FAILS(picajit_uniforms_set_bools(NULL, 1), PICAJIT_ERR_NULL, "uniforms is NULL");
    FAILS(picajit_uniforms_get_bools(u, NULL), PICAJIT_ERR_NULL, "bits is NULL");
    FAILS(picajit_uniforms_get_bools(NULL, &bools), PICAJIT_ERR_NULL, "uniforms is NULL");

    OK(picajit_uniforms_destroy(u));
    OK(picajit_uniforms_destroy(u32));
    OK(picajit_uniforms_destroy(NULL));
    OK(picajit_engine_destroy(f24));
    OK(picajit_engine_destroy(f32));
}

static void test_apply_constants(void) {
    PicajitEngine *engine = make_engine(PICAJIT_ENGINE_JIT, PICAJIT_FLOAT_F24, 0);
    PicajitEngine *f32 = make_engine(PICAJIT_ENGINE_JIT, PICAJIT_FLOAT_F32, 0);
    Blob mvp = read_file(mvp_path);
    PicajitShader *shader = NULL, *raw = NULL;
    PicajitUniforms *u = NULL, *u32 = NULL;
    float row[4];

    OK(picajit_shader_load_shbin(engine, mvp.data, mvp.size, 0, &shader));
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_uniforms_create(f32, &u32));
    OK(picajit_uniforms_get_float(u, 95, row));
    CHECK(row[0] == 0.0f);
    OK(picajit_shader_apply_constants(shader, u)); /* .constf ones -> c95 */
    OK(picajit_uniforms_get_float(u, 95, row));
    CHECK(row[0] == 1.0f && row[1] == 1.0f && row[2] == 1.0f && row[3] == 1.0f);

    /* Raw programs have no constants. */
    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, 0, &raw));
    OK(picajit_uniforms_set_float(u, 95, 1, (const float[]){9, 9, 9, 9}));
    OK(picajit_shader_apply_constants(raw, u));
    OK(picajit_uniforms_get_float(u, 95, row));
    CHECK(row[0] == 9.0f);

    FAILS(picajit_shader_apply_constants(shader, u32), PICAJIT_ERR_INVALID_ARGUMENT,
          "float mode");
    FAILS(picajit_shader_apply_constants(NULL, u), PICAJIT_ERR_NULL, "shader is NULL");
    FAILS(picajit_shader_apply_constants(shader, NULL), PICAJIT_ERR_NULL, "uniforms is NULL");

    free(mvp.data);
    destroy_made((Made){.shaders = {shader, raw}, .uniforms = {u, u32}, .engines = {engine, f32}});
}

/* A full-layout vertex: v0-v15 (or o0-o15) as 16 rows of 4. */
typedef struct {
    float r[16][4];
} Vertex;

typedef struct {
    uint32_t r[16][4];
} VertexBits;

static void test_run_batch(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend, PICAJIT_FLOAT_F24, 0);
    PicajitShader *shader = NULL;
    PicajitUniforms *u = NULL;
    PicajitRunStats stats;
    enum { N = 100 };
    static Vertex in[N], out[N];

    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, 0, &shader));
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_uniforms_set_float(u, 95, 1, (const float[]){10, 20, 30, 40}));

    /* Full layout, f32 values: o0 = c95 + v0, o1 = v1, other outputs untouched... */
    memset(in, 0, sizeof in);
    memset(out, 0x7F, sizeof out);
    for (int k = 0; k < N; k++) {
        in[k].r[0][0] = (float)k;
        in[k].r[0][3] = 0.5f;
        in[k].r[1][1] = (float)-k;
        /* In f24 mode inputs are rounded like attributes: 1 + 2^-20 becomes 1. */
        in[k].r[1][2] = 1.0f + 0x1p-20f;
    }
    PicajitVertexLayout out_layout = {PICAJIT_FORMAT_F32, 0, 0x3, sizeof(Vertex)};
    memset(&stats, 0xFF, sizeof stats);
    OK(picajit_shader_run_batch(shader, u, &FULL_F32, in, &out_layout, out, N, &stats));
    CHECK(stats.vertices == N);
    CHECK(stats.instructions == 3 * N);
    int good = 1;
    for (int k = 0; k < N; k++) {
        good &= out[k].r[0][0] == 10.0f + (float)k && out[k].r[0][1] == 20.0f &&
                out[k].r[0][3] == 40.5f;
        good &= out[k].r[1][1] == (float)-k && out[k].r[1][2] == 1.0f;
        /* o2-o15 not in the output mask: untouched. */
        good &= f32_bits(out[k].r[2][0]) == 0x7F7F7F7Fu;
    }
    CHECK(good);

    /* ...and the input mask: v1 not read, so o1 = 0. */
    PicajitVertexLayout only_v0 = {PICAJIT_FORMAT_F32, 0, 0x1, sizeof(Vertex)};
    OK(picajit_shader_run_batch(shader, u, &only_v0, in, &out_layout, out, N, NULL));
    CHECK(out[5].r[1][1] == 0.0f && out[5].r[0][0] == 15.0f);

    /* Packed layouts with padding in the stride: inputs v0, v1 as 2 rows plus 8 bytes;
       outputs o1 only. The padding is neither read nor written. */
    struct Packed {
        float v0[4], v1[4];
        uint32_t pad[2];
    } pin[3];
    struct PackedOut {
        float o1[4];
        uint32_t pad;
    } pout[3];
    memset(pout, 0xEE, sizeof pout);
    for (int k = 0; k < 3; k++) {
        for (int c = 0; c < 4; c++) {
            pin[k].v0[c] = 0.0f;
            pin[k].v1[c] = (float)(k * 4 + c);
        }
    }
    PicajitVertexLayout pin_layout = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x3,
                                      sizeof(struct Packed)};
    PicajitVertexLayout pout_layout = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x2,
                                       sizeof(struct PackedOut)};
    OK(picajit_shader_run_batch(shader, u, &pin_layout, pin, &pout_layout, pout, 3, &stats));
    CHECK(pout[2].o1[0] == 8.0f && pout[2].o1[3] == 11.0f && pout[0].o1[1] == 1.0f);
    CHECK(pout[0].pad == 0xEEEEEEEEu && pout[2].pad == 0xEEEEEEEEu);

    /* Raw f24 in and out, exact: 0x000001 is a pattern arithmetic would flush, and MOV keeps
       it; 0x7F1234 is a NaN with a payload. As an f32 input, the same value is converted like
       an attribute and flushed. */
    static VertexBits bin[2], bout[2];
    memset(bin, 0, sizeof bin);
    bin[0].r[1][0] = 0x000001u;
    bin[0].r[1][1] = 0x7F1234u;
    bin[0].r[1][2] = 0x3F0000u;
    bin[0].r[0][0] = 0x400000u; /* 2.0 */
    bin[1].r[1][0] = 0x3F8000u; /* 1.5 */
    OK(picajit_shader_run_batch(shader, u, &FULL_F24, bin, &FULL_F24, bout, 2, &stats));
    CHECK(bout[0].r[1][0] == 0x000001u);
    CHECK(bout[0].r[1][1] == 0x7F1234u);
    CHECK(bout[0].r[1][2] == 0x3F0000u);
    CHECK(bout[0].r[0][0] == 0x428000u); /* 10 + 2 = 12 */
    CHECK(bout[1].r[1][0] == 0x3F8000u);
    CHECK(stats.vertices == 2 && stats.instructions == 6);
    /* A raw batch long enough for the eight-lane code: every special pattern reaches v1 and
       comes back from the MOV unchanged, in every vertex. */
    {
        static const uint32_t special[] = {0x000001u, 0x00FFFFu, 0x800001u, 0x80FFFFu,
                                           0x800000u, 0x7F8000u, 0x7F0001u, 0xFF1234u,
                                           0x7F0000u, 0xFF0000u, 0x7FFFFFu, 0x3F0000u};
        enum { NB = 40 };
        static VertexBits rin[NB], rout[NB];
        memset(rin, 0, sizeof rin);
        for (int k = 0; k < NB; k++) {
            for (int c = 0; c < 4; c++) {
                rin[k].r[1][c] = special[(k + 5 * c) % 12];
            }
            rin[k].r[0][0] = 0x3F0000u; /* 1.0 */
        }
        OK(picajit_shader_run_batch(shader, u, &FULL_F24, rin, &FULL_F24, rout, NB, &stats));
        int exact = 1;
        for (int k = 0; k < NB; k++) {
            for (int c = 0; c < 4; c++) {
                exact &= rout[k].r[1][c] == rin[k].r[1][c];
            }
            exact &= rout[k].r[0][0] == 0x426000u; /* 10 + 1 = 11 */
        }
        CHECK(exact);
        CHECK(stats.vertices == NB);
    }
    Vertex tiny;
    memset(&tiny, 0, sizeof tiny);
    tiny.r[1][0] = 0x1p-78f; /* the value of f24 0x000001 */
    OK(picajit_shader_run_batch(shader, u, &FULL_F32, &tiny, &FULL_F24, bout, 1, NULL));
    CHECK(bout[0].r[1][0] == 0);

    /* f32 in, f24 out and the reverse. */
    OK(picajit_shader_run_batch(shader, u, &FULL_F32, in, &FULL_F24, bout, 2, NULL));
    CHECK(bout[1].r[0][0] == 0x426000u); /* 10 + 1 = 11 */
    OK(picajit_shader_run_batch(shader, u, &FULL_F24, bin, &FULL_F32, out, 1, NULL));
    CHECK(out[0].r[0][0] == 12.0f);

    /* count 0 is a no-op. */
    OK(picajit_shader_run_batch(shader, u, &FULL_F32, in, &FULL_F32, out, 0, &stats));
    CHECK(stats.vertices == 0 && stats.instructions == 0);

    /* Errors. */
    FAILS(picajit_shader_run_batch(NULL, u, &FULL_F32, in, &FULL_F32, out, 1, NULL),
          PICAJIT_ERR_NULL, "shader is NULL");
    FAILS(picajit_shader_run_batch(shader, NULL, &FULL_F32, in, &FULL_F32, out, 1, NULL),
          PICAJIT_ERR_NULL, "uniforms is NULL");
    FAILS(picajit_shader_run_batch(shader, u, NULL, in, &FULL_F32, out, 1, NULL),
          PICAJIT_ERR_NULL, "input_layout is NULL");
    FAILS(picajit_shader_run_batch(shader, u, &FULL_F32, in, NULL, out, 1, NULL),
          PICAJIT_ERR_NULL, "output_layout is NULL");
    FAILS(picajit_shader_run_batch(shader, u, &FULL_F32, NULL, &FULL_F32, out, 1, NULL),
          PICAJIT_ERR_NULL, "inputs is NULL");
    FAILS(picajit_shader_run_batch(shader, u, &FULL_F32, in, &FULL_F32, NULL, 1, NULL),
          PICAJIT_ERR_NULL, "outputs is NULL");
    /* FULL_F32 with one field wrong, as the input or the output layout of `count` vertices
       (one vertex of the full layout is 256 bytes). */
    const struct {
        PicajitVertexLayout layout;
        int input;
        size_t count;
        const char *message;
    } bad[] = {
        {{PICAJIT_FORMAT_F32, 0, 0xFFFF, 255}, 1, 1,
         "input_layout: stride 255 is smaller than one vertex"},
        {{2, 0, 0xFFFF, 0}, 0, 1, "output_layout: unknown value format 2"},
        {{PICAJIT_FORMAT_F32, 4, 0xFFFF, 0}, 1, 1, "unknown flag bits"},
        {{PICAJIT_FORMAT_F32, 0, 0x10000, 0}, 1, 1, "past 15"},
        {{PICAJIT_FORMAT_F32, 0, 0xFFFF, SIZE_MAX / 2}, 1, 3, "overflow"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        const PicajitVertexLayout *wrong = &bad[k].layout;
        FAILS(picajit_shader_run_batch(shader, u, bad[k].input ? wrong : &FULL_F32, in,
                                       bad[k].input ? &FULL_F32 : wrong, out, bad[k].count, NULL),
              PICAJIT_ERR_INVALID_ARGUMENT, bad[k].message);
    }
    FAILS(picajit_shader_run_batch(shader, u, &FULL_F32, in, &FULL_F32, in + 1, 2, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "overlap");
    FAILS(picajit_shader_run_batch(shader, u, &FULL_F32, in, &FULL_F32, out, 1,
                                   (PicajitRunStats *)((char *)&stats + 1)),
          PICAJIT_ERR_INVALID_ARGUMENT, "stats");

    PicajitEngine *f32 = make_engine(backend, PICAJIT_FLOAT_F32, 0);
    PicajitUniforms *u32 = NULL;
    OK(picajit_uniforms_create(f32, &u32));
    FAILS(picajit_shader_run_batch(shader, u32, &FULL_F32, in, &FULL_F32, out, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "float mode");
    PicajitShader *gs = NULL;
    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, PICAJIT_SHADER_GEOMETRY,
                             &gs));
    /* A shader created for the geometry unit runs on the vertex unit too. */
    OK(picajit_shader_run_batch(gs, u, &FULL_F32, in, &FULL_F32, out, 1, NULL));

    destroy_made((Made){.shaders = {gs, shader}, .uniforms = {u32, u}, .engines = {f32, engine}});
}

/* Source lines of the test programs: the constant `one` (1, 1, 1, 1) and the output `o`
   (position); a loop that spins (until the budget runs out) when v0.x == 1. */
#define ONE_AND_POSITION ".constf one(1.0, 1.0, 1.0, 1.0)\n.out o position\n"
#define SPIN_IF_V0X_IS_1 "    cmp one, eq, eq, v0\nspin:\n    jmpc cmp.x, spin\n"

static void test_exec_errors(uint32_t backend) {
    /* A budget of 1000 instructions; vertex k spins forever when v0.x == 1. */
    PicajitEngine *engine = make_engine(backend, PICAJIT_FLOAT_F24, 1000);
    PicajitRunStats stats;
    PicajitShader *spin = load_source(engine,
                                      ONE_AND_POSITION
                                      ".proc main\n"
                                      "    mov o, v0\n"
                                      SPIN_IF_V0X_IS_1
                                      "    end\n"
                                      ".end\n");
    PicajitShader *brk = load_source(engine,
                                     ".proc main\n"
                                     "    break\n"
                                     "    end\n"
                                     ".end\n");
    PicajitUniforms *u = uniforms_for(engine, spin);
    float in[4][4] = {{0, 0, 0, 0}, {2, 0, 0, 0}, {1, 0, 0, 0}, {3, 0, 0, 0}};
    float out[4][4];
    memset(out, 0x11, sizeof out);
    PicajitVertexLayout layout = {PICAJIT_FORMAT_F32, 0, 0x1, 0};
    FAILS(picajit_shader_run_batch(spin, u, &layout, in, &layout, out, 4, &stats),
          PICAJIT_ERR_EXEC, "vertex 2: instruction budget of 1000 exhausted");
    CHECK(stats.vertices == 2);
    CHECK(stats.instructions == 0); /* totals are reported for complete runs only */
    CHECK(out[1][0] == 2.0f && out[0][0] == 0.0f);
    CHECK(f32_bits(out[2][0]) == 0x11111111u && f32_bits(out[3][0]) == 0x11111111u);

    FAILS(picajit_shader_run_batch(brk, u, &layout, in, &layout, out, 1, &stats),
          PICAJIT_ERR_EXEC, "BREAK");
    CHECK(stats.vertices == 0);

    destroy_made((Made){.shaders = {spin, brk}, .uniforms = {u}, .engines = {engine}});
}

/* ------------------------------------------------------------------------------------------ */
/* Geometry shaders */

typedef struct {
    int calls;
    Vertex v[16];
    PicajitEmitState info[16];
} Collected;

static void collect(void *user, const void *vertex, const PicajitEmitState *info) {
    Collected *c = user;
    if (c->calls < 16) {
        /* The callback layout is o0, o1 packed: 32 bytes. */
        memset(&c->v[c->calls], 0, sizeof(Vertex));
        memcpy(c->v[c->calls].r, vertex, 32);
        c->info[c->calls] = *info;
    }
    c->calls++;
}

static void test_geometry_point_to_quad(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend, PICAJIT_FLOAT_F24, 0);
    Blob quad = read_file(quad_path);
    PicajitShader *gs = NULL;
    PicajitRunStats stats;
    Collected got;
    uint16_t bools = 0;
    size_t pending = 99;

    OK(picajit_shader_load_shbin(engine, quad.data, quad.size, 0, &gs));
    PicajitUniforms *u = uniforms_for(engine, gs);
    OK(picajit_uniforms_set_float(u, 0, 1, (const float[]){0.25f, 0.5f, 0, 0})); /* halfsize */
    PicajitGeometry *geo = make_geometry();

    PicajitVertexLayout two = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x3, 0};
    memset(&got, 0, sizeof got);
    OK(picajit_geometry_set_emit_callback(geo, &two, collect, &got));
    /* A point at (1, 2, 3, 1) coloured (0.5, 0.25, 1, 1). */
    const float point[2][4] = {{1, 2, 3, 1}, {0.5f, 0.25f, 1, 1}};
    OK(picajit_uniforms_get_bools(u, &bools));
    CHECK((bools & 0x8000) == 0);
    OK(picajit_geometry_run_point(geo, gs, u, &two, point, &stats));
    CHECK(stats.vertices == 1 && stats.instructions == 21);
    OK(picajit_uniforms_get_bools(u, &bools));
    CHECK((bools & 0x8000) != 0); /* b15 set after the invocation, as on hardware */
    CHECK(got.calls == 4);
    /* Corners (-1,-1), (1,-1), (-1,1), (1,1) scaled by (0.25, 0.5) around the point. */
    CHECK(got.v[0].r[0][0] == 0.75f && got.v[0].r[0][1] == 1.5f && got.v[0].r[0][2] == 3.0f);
    CHECK(got.v[1].r[0][0] == 1.25f && got.v[1].r[0][1] == 1.5f);
    CHECK(got.v[2].r[0][0] == 0.75f && got.v[2].r[0][1] == 2.5f);
    CHECK(got.v[3].r[0][0] == 1.25f && got.v[3].r[0][1] == 2.5f && got.v[3].r[0][3] == 1.0f);
    CHECK(got.v[3].r[1][0] == 0.5f && got.v[3].r[1][1] == 0.25f && got.v[3].r[1][2] == 1.0f);
    CHECK(got.info[0].slot == 0 && !got.info[0].primitive);
    CHECK(got.info[1].slot == 1 && !got.info[1].primitive);
    CHECK(got.info[2].slot == 2 && got.info[2].primitive && !got.info[2].winding);
    CHECK(got.info[3].slot == 0 && got.info[3].primitive && got.info[3].winding);
    OK(picajit_geometry_pending(geo, &pending));
    CHECK(pending == 0);

    /* Without a callback, emitted vertices accumulate across invocations. */
    OK(picajit_geometry_set_emit_callback(geo, NULL, NULL, NULL));
    OK(picajit_geometry_run_point(geo, gs, u, &two, point, NULL));
    OK(picajit_geometry_run_point(geo, gs, u, &two, point, NULL));
    OK(picajit_geometry_pending(geo, &pending));
    CHECK(pending == 8);
    struct {
        float o0[4], o1[4];
    } verts[5];
    PicajitEmitState infos[5];
    size_t taken = 99;
    OK(picajit_geometry_take(geo, &two, verts, infos, 5, &taken));
    CHECK(taken == 5);
    CHECK(verts[4].o0[0] == 0.75f && verts[4].o0[1] == 1.5f && infos[4].slot == 0);
    CHECK(infos[3].winding && infos[3].primitive);
    OK(picajit_geometry_pending(geo, &pending));
    CHECK(pending == 3);
    OK(picajit_geometry_take(geo, &two, verts, infos, 5, &taken));
    CHECK(taken == 3 && infos[2].slot == 0 && infos[2].winding);
    OK(picajit_geometry_take(geo, &two, verts, infos, 5, &taken));
    CHECK(taken == 0);

    /* Raw f24 point input and f24 output. */
    const uint32_t point24[2][4] = {{0x3F0000u, 0x400000u, 0, 0x3F0000u},
                                    {0x3E0000u, 0, 0, 0x3F0000u}};
    PicajitVertexLayout two24 = {PICAJIT_FORMAT_F24, PICAJIT_LAYOUT_PACKED, 0x3, 0};
    OK(picajit_geometry_run_point(geo, gs, u, &two24, point24, NULL));
    uint32_t v24[4][2][4];
    OK(picajit_geometry_take(geo, &two24, v24, infos, 4, &taken));
    CHECK(taken == 4);
    CHECK(v24[3][0][0] == 0x3F4000u /* 1.25 */ && v24[3][1][0] == 0x3E0000u /* 0.5 */);

    /* Errors. */
    FAILS(picajit_geometry_create(NULL), PICAJIT_ERR_NULL, "out is NULL");
    FAILS(picajit_geometry_run_point(NULL, gs, u, &two, point, NULL), PICAJIT_ERR_NULL,
          "geometry is NULL");
    FAILS(picajit_geometry_run_point(geo, NULL, u, &two, point, NULL), PICAJIT_ERR_NULL,
          "shader is NULL");
    FAILS(picajit_geometry_run_point(geo, gs, NULL, &two, point, NULL), PICAJIT_ERR_NULL,
          "uniforms is NULL");
    FAILS(picajit_geometry_run_point(geo, gs, u, NULL, point, NULL), PICAJIT_ERR_NULL,
          "layout is NULL");
    FAILS(picajit_geometry_run_point(geo, gs, u, &two, NULL, NULL), PICAJIT_ERR_NULL,
          "vertex is NULL");
    FAILS(picajit_geometry_set_emit_callback(geo, NULL, collect, &got), PICAJIT_ERR_NULL,
          "layout is NULL");
    FAILS(picajit_geometry_set_emit_callback(NULL, &two, collect, &got), PICAJIT_ERR_NULL,
          "geometry is NULL");
    PicajitVertexLayout bad = two;
    bad.format = 9;
    FAILS(picajit_geometry_set_emit_callback(geo, &bad, collect, &got),
          PICAJIT_ERR_INVALID_ARGUMENT, "unknown value format 9");
    FAILS(picajit_geometry_pending(NULL, &pending), PICAJIT_ERR_NULL, "geometry is NULL");
    FAILS(picajit_geometry_pending(geo, NULL), PICAJIT_ERR_NULL, "count is NULL");
    FAILS(picajit_geometry_take(NULL, &two, verts, infos, 5, &taken), PICAJIT_ERR_NULL,
          "geometry is NULL");
    FAILS(picajit_geometry_take(geo, NULL, verts, infos, 5, &taken), PICAJIT_ERR_NULL,
          "layout is NULL");
    FAILS(picajit_geometry_take(geo, &two, NULL, infos, 5, &taken), PICAJIT_ERR_NULL,
          "vertices is NULL");
    FAILS(picajit_geometry_take(geo, &two, verts, NULL, 5, &taken), PICAJIT_ERR_NULL,
          "infos is NULL");
    FAILS(picajit_geometry_take(geo, &two, verts, infos, 5, NULL), PICAJIT_ERR_NULL,
          "taken is NULL");
    FAILS(picajit_geometry_take(geo, &bad, verts, infos, 5, &taken),
          PICAJIT_ERR_INVALID_ARGUMENT, "format");

    /* A shader created for the vertex unit runs on the geometry unit too; a uniform set of
       another mode and a non-point mode fail. */
    PicajitShader *vs = NULL;
    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, 0, &vs));
    OK(picajit_geometry_run_point(geo, vs, u, &two, point, NULL));
    PicajitEngine *f32 = make_engine(backend, PICAJIT_FLOAT_F32, 0);
    PicajitUniforms *u32 = NULL;
    OK(picajit_uniforms_create(f32, &u32));
    FAILS(picajit_geometry_run_point(geo, gs, u32, &two, point, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "float mode");
    OK(picajit_geometry_set_mode(geo, PICAJIT_GS_FIXED, 10, 3));
    FAILS(picajit_geometry_run_point(geo, gs, u, &two, point, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "not in point mode");

    free(quad.data);
    OK(picajit_geometry_destroy(NULL));
    destroy_made((Made){.shaders = {vs, gs}, .geometries = {geo}, .uniforms = {u32, u},
                        .engines = {f32, engine}});
}

/* Registers, b15 and the vertex buffer carry over between invocations. */
static void test_geometry_state(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend, PICAJIT_FLOAT_F24, 0);
    /* First invocation (b15 clear): r0 = 1. Later ones: r0 += 1. Emit r0 each time. */
    PicajitShader *gs = load_source(engine,
                                    ".gsh point c0\n"
                                    ONE_AND_POSITION
                                    ".proc main\n"
                                    "    ifu b15\n"
                                    "        add r0, one, r0\n"
                                    "    .else\n"
                                    "        mov r0, one\n"
                                    "    .end\n"
                                    "    setemit 0\n"
                                    "    mov o, r0\n"
                                    "    emit\n"
                                    "    end\n"
                                    ".end\n");
    PicajitUniforms *u = uniforms_for(engine, gs);
    PicajitGeometry *geo = make_geometry();
    PicajitVertexLayout none = {PICAJIT_FORMAT_F32, 0, 0, 0};
    PicajitVertexLayout o0 = {PICAJIT_FORMAT_F32, 0, 0x1, 0};
    float dummy = 0;
    for (int i = 0; i < 3; i++) {
        OK(picajit_geometry_run_point(geo, gs, u, &none, &dummy, NULL));
    }
    float v[3][4];
    PicajitEmitState infos[3];
    size_t taken = 0;
    OK(picajit_geometry_take(geo, &o0, v, infos, 3, &taken));
    CHECK(taken == 3 && v[0][0] == 1.0f && v[1][0] == 2.0f && v[2][0] == 3.0f);

    /* A new draw: reset the state and clear b15; r0 starts over. */
    OK(picajit_geometry_run_point(geo, gs, u, &none, &dummy, NULL));
    OK(picajit_geometry_reset(geo));
    size_t pending = 99;
    OK(picajit_geometry_pending(geo, &pending));
    CHECK(pending == 0);
    OK(picajit_uniforms_set_bool(u, 15, false));
    OK(picajit_geometry_run_point(geo, gs, u, &none, &dummy, NULL));
    OK(picajit_geometry_take(geo, &o0, v, infos, 3, &taken));
    CHECK(taken == 1 && v[0][0] == 1.0f);
    FAILS(picajit_geometry_reset(NULL), PICAJIT_ERR_NULL, "geometry is NULL");

    /* A failing invocation still delivers what it emitted before failing. */
    PicajitShader *fail = load_source(engine,
                                      ".gsh point c0\n"
                                      ".out o position\n"
                                      ".proc main\n"
                                      "    setemit 1\n"
                                      "    emit\n"
                                      "    break\n"
                                      "    end\n"
                                      ".end\n");
    PicajitRunStats stats;
    FAILS(picajit_geometry_run_point(geo, fail, u, &none, &dummy, &stats), PICAJIT_ERR_EXEC,
          "BREAK");
    CHECK(stats.vertices == 0);
    OK(picajit_geometry_take(geo, &o0, v, infos, 3, &taken));
    CHECK(taken == 1 && infos[0].slot == 1);

    destroy_made((Made){.shaders = {fail, gs}, .geometries = {geo}, .uniforms = {u},
                        .engines = {engine}});
}

/* Variable and fixed modes: input rows go to the float uniforms. */
static void test_geometry_uniform_modes(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend, PICAJIT_FLOAT_F24, 0);
    /* Emits c10 and c11 (fixed mode from c10, or variable mode from c9: count in c9). */
    PicajitShader *gs = load_source(engine,
                                    ".gsh point c0\n"
                                    ".out o position\n"
                                    ".out p color\n"
                                    ".proc main\n"
                                    "    setemit 0\n"
                                    "    mov o, c10\n"
                                    "    mov p, c9\n"
                                    "    emit\n"
                                    "    setemit 1\n"
                                    "    mov o, c11\n"
                                    "    emit\n"
                                    "    end\n"
                                    ".end\n");
    PicajitUniforms *u = make_uniforms(engine);
    PicajitGeometry *geo = make_geometry();
    const float rows[2][4] = {{1, 2, 3, 4}, {5, 6, 7, 8}};
    const uint32_t rows24[2][4] = {{0x000001u, 0, 0, 0}, {0x3F0000u, 0, 0, 0}};
    PicajitVertexLayout o01 = {PICAJIT_FORMAT_F32, 0, 0x3, 0};
    float v[2][2][4];
    PicajitEmitState infos[2];
    size_t taken = 0;
    float row[4];

    FAILS(picajit_geometry_run_uniforms(geo, gs, u, PICAJIT_FORMAT_F32, rows, 2, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "point mode");

    OK(picajit_geometry_set_mode(geo, PICAJIT_GS_FIXED, 10, 2));
    OK(picajit_geometry_run_uniforms(geo, gs, u, PICAJIT_FORMAT_F32, rows, 2, 2, NULL));
    OK(picajit_uniforms_get_float(u, 11, row));
    CHECK(row[0] == 5.0f && row[3] == 8.0f);
    OK(picajit_geometry_take(geo, &o01, v, infos, 2, &taken));
    CHECK(taken == 2 && v[0][0][0] == 1.0f && v[1][0][3] == 8.0f);

    OK(picajit_geometry_set_mode(geo, PICAJIT_GS_VARIABLE, 9, 2));
    OK(picajit_geometry_run_uniforms(geo, gs, u, PICAJIT_FORMAT_F24, rows24, 2, 3, NULL));
    OK(picajit_uniforms_get_float(u, 9, row));
    CHECK(row[0] == 3.0f && row[3] == 3.0f); /* the vertex count */
    OK(picajit_uniforms_get_float(u, 10, row));
    CHECK(row[0] == 0x1p-78f); /* f24 0x000001, kept exactly */
    OK(picajit_geometry_take(geo, &o01, v, infos, 2, &taken));
    CHECK(taken == 2 && v[0][1][0] == 3.0f && v[1][0][0] == 1.0f);

    FAILS(picajit_geometry_run_uniforms(geo, gs, u, PICAJIT_FORMAT_F32, rows, 87, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "do not fit");
    FAILS(picajit_geometry_run_uniforms(geo, gs, u, PICAJIT_FORMAT_F32, rows, 2, 256, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "over 255");
    FAILS(picajit_geometry_run_uniforms(geo, gs, u, 5, rows, 2, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "format");
    FAILS(picajit_geometry_run_uniforms(geo, gs, u, PICAJIT_FORMAT_F32, NULL, 2, 1, NULL),
          PICAJIT_ERR_NULL, "rows is NULL");
    FAILS(picajit_geometry_run_uniforms(NULL, gs, u, PICAJIT_FORMAT_F32, rows, 2, 1, NULL),
          PICAJIT_ERR_NULL, "geometry is NULL");
    FAILS(picajit_geometry_set_mode(geo, 3, 0, 0), PICAJIT_ERR_INVALID_ARGUMENT,
          "unknown geometry-shader mode 3");
    FAILS(picajit_geometry_set_mode(geo, PICAJIT_GS_FIXED, 96, 0), PICAJIT_ERR_INVALID_ARGUMENT,
          "past c95");
    FAILS(picajit_geometry_set_mode(geo, PICAJIT_GS_FIXED, 0, 256), PICAJIT_ERR_INVALID_ARGUMENT,
          "over 255");
    FAILS(picajit_geometry_set_mode(NULL, PICAJIT_GS_POINT, 0, 0), PICAJIT_ERR_NULL,
          "geometry is NULL");
    OK(picajit_geometry_set_mode(geo, PICAJIT_GS_POINT, 0, 0));

    destroy_made((Made){.shaders = {gs}, .geometries = {geo}, .uniforms = {u},
                        .engines = {engine}});
}

/* ------------------------------------------------------------------------------------------ */
/* picajit_geometry_run_points: the same as one picajit_geometry_run_point per point */

/* Every vertex an emit callback received, whatever their number. */
typedef struct {
    size_t calls, capacity, vertex_size;
    unsigned char *data; /* vertex_size bytes per call */
    PicajitEmitState *info;
} Recorder;

static void record(void *user, const void *vertex, const PicajitEmitState *info) {
    Recorder *r = user;
    if (r->calls == r->capacity) {
        size_t capacity = r->capacity ? 2 * r->capacity : 256;
        unsigned char *data = realloc(r->data, capacity * r->vertex_size);
        PicajitEmitState *infos = realloc(r->info, capacity * sizeof *infos);
        if (!data || !infos) {
            fprintf(stderr, "out of memory\n");
            exit(2);
        }
        r->data = data;
        r->info = infos;
        r->capacity = capacity;
    }
    memcpy(r->data + r->calls * r->vertex_size, vertex, r->vertex_size);
    r->info[r->calls] = *info;
    r->calls++;
}

static Recorder recorder(size_t vertex_size) {
    Recorder r = {0, 0, vertex_size, NULL, NULL};
    return r;
}

static void recorder_free(Recorder *r) {
    free(r->data);
    free(r->info);
}

/* Same vertices (bytes) and flags in the same order (fields compared: the struct has
   padding). */
static int same_info(const PicajitEmitState *a, const PicajitEmitState *b, size_t n) {
    for (size_t k = 0; k < n; k++) {
        if (a[k].slot != b[k].slot || a[k].primitive != b[k].primitive ||
            a[k].winding != b[k].winding) {
            return 0;
        }
    }
    return 1;
}

static int same_records(const Recorder *a, const Recorder *b) {
    return a->calls == b->calls && a->vertex_size == b->vertex_size &&
           (a->calls == 0 || memcmp(a->data, b->data, a->calls * a->vertex_size) == 0) &&
           same_info(a->info, b->info, a->calls);
}

/* Whether values computed on `backend` can be compared with the interpreter's bit for bit
   in this run (see under_valgrind). */
static int exact_fp(uint32_t backend) {
    return !under_valgrind || backend == PICAJIT_ENGINE_INTERP;
}

/* same_records, or where exact_fp does not hold, the same number of vertices and flags. */
static int same_emits(uint32_t backend, const Recorder *a, const Recorder *b) {
    if (exact_fp(backend)) {
        return same_records(a, b);
    }
    return a->calls == b->calls && same_info(a->info, b->info, a->calls);
}

/* A point of the strided input: v0, v1 packed, then 8 bytes the library must not read. */
typedef struct {
    float pos[4], clr[4];
    uint32_t pad[2];
} GsPoint;

/* Uniforms of both geometry examples: halfsize / radius c0, rotation by 2 pi / 32 in c1 and
   c2, rim colour c3 (point_to_quad reads c0 only). */
static void set_gs_uniforms(const PicajitShader *gs, PicajitUniforms *u) {
    const float a = 6.2831853f / 32.0f;
    const float rows[16] = {0.25f, 0.5f, 0, 0, cosf(a), -sinf(a), 0, 0,
                            sinf(a), cosf(a), 0, 0, 1, 0.5f, 0.25f, 0.5f};
    OK(picajit_shader_apply_constants(gs, u));
    OK(picajit_uniforms_set_float(u, 0, 4, rows));
}

/* Leaves different values of o2 (which the examples never write) in the two output banks,
   so that vertices the examples emit carry them alternately. */
static void fill_banks(PicajitEngine *engine, PicajitGeometry *geo, PicajitUniforms *u) {
    PicajitShader *pre = load_source(engine,
                                     ".gsh point c0\n"
                                     ".constf a(1.0, 2.0, 3.0, 4.0)\n"
                                     ".constf b(5.0, 6.0, 7.0, 8.0)\n"
                                     ".proc main\n"
                                     "    setemit 3\n"
                                     "    mov o2, a\n"
                                     "    emit\n"
                                     "    mov o2, b\n"
                                     "    emit\n"
                                     "    end\n"
                                     ".end\n");
    PicajitVertexLayout none = {PICAJIT_FORMAT_F32, 0, 0, 0};
    float dummy = 0;
    float v[2][4];
    PicajitEmitState infos[2];
    size_t taken = 0;
    OK(picajit_shader_apply_constants(pre, u));
    OK(picajit_geometry_set_emit_callback(geo, NULL, NULL, NULL));
    OK(picajit_geometry_run_point(geo, pre, u, &none, &dummy, NULL));
    PicajitVertexLayout o2 = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x4, 0};
    OK(picajit_geometry_take(geo, &o2, v, infos, 2, &taken));
    CHECK(taken == 2 && v[0][0] == 1.0f && v[1][0] == 5.0f);
    OK(picajit_shader_destroy(pre));
}

static void test_geometry_run_points(uint32_t backend, const char *path, size_t per_point) {
    enum { N = 300, SPLIT = 37, M = 20 };
    PicajitEngine *engine = make_engine(backend, PICAJIT_FLOAT_F24, 0);
    Blob shbin = read_file(path);
    PicajitShader *gs = NULL;
    PicajitRunStats stats, stats2;
    uint16_t bools_a = 0, bools_b = 0;
    OK(picajit_shader_load_shbin(engine, shbin.data, shbin.size, 0, &gs));
    PicajitUniforms *ua = make_uniforms(engine), *ub = make_uniforms(engine);
    PicajitGeometry *ga = make_geometry(), *gb = make_geometry();
    fill_banks(engine, ga, ua);
    fill_banks(engine, gb, ub);
    set_gs_uniforms(gs, ua); /* after fill_banks: its constants may share registers */
    set_gs_uniforms(gs, ub);

    /* f32 points with a stride: values conversion rounds or flushes among them. */
    static GsPoint pts[N];
    for (int k = 0; k < N; k++) {
        pts[k].pos[0] = (float)k * 0.37f - 20.0f;
        pts[k].pos[1] = 3.0f - (float)k * 0.11f;
        pts[k].pos[2] = 0.5f + (float)k / 1000.0f;
        pts[k].pos[3] = 1.0f;
        pts[k].clr[0] = (float)(k % 7) / 7.0f;
        pts[k].clr[1] = k % 11 == 0 ? 1e-39f : 0.1f;
        pts[k].clr[2] = k % 13 == 0 ? -0.0f : 0.25f;
        pts[k].clr[3] = 1.0f;
        pts[k].pad[0] = pts[k].pad[1] = 0xDEADBEEFu;
    }
    PicajitVertexLayout in = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x3, sizeof(GsPoint)};

    /* Callback delivery, o0-o2 (o2 from the banks): N run_point calls against two
       run_points calls, the second one longer than a chunk. */
    PicajitVertexLayout emit = {PICAJIT_FORMAT_F32, 0, 0x7, 0};
    Recorder ra = recorder(48), rb = recorder(48);
    OK(picajit_geometry_set_emit_callback(ga, &emit, record, &ra));
    OK(picajit_geometry_set_emit_callback(gb, &emit, record, &rb));
    uint64_t instructions = 0;
    int each_ok = 1;
    for (int k = 0; k < N; k++) {
        each_ok &= picajit_geometry_run_point(ga, gs, ua, &in, &pts[k], &stats) == PICAJIT_OK;
        instructions += stats.instructions;
    }
    CHECK(each_ok);
    memset(&stats, 0xFF, sizeof stats);
    OK(picajit_geometry_run_points(gb, gs, ub, &in, pts, SPLIT, &stats));
    CHECK(stats.vertices == SPLIT);
    CHECK(rb.calls == SPLIT * per_point);
    OK(picajit_geometry_run_points(gb, gs, ub, &in, &pts[SPLIT], N - SPLIT, &stats2));
    CHECK(stats2.vertices == N - SPLIT);
    CHECK(stats.instructions + stats2.instructions == instructions);
    CHECK(ra.calls == N * per_point);
    CHECK(same_emits(backend, &ra, &rb));
    /* o2 alternates between the banks fill_banks left: 1.0 (bank of the first EMIT), 5.0. */
    float o2_first, o2_second;
    memcpy(&o2_first, ra.data + 32, 4);
    memcpy(&o2_second, ra.data + 48 + 32, 4);
    CHECK(o2_first == 1.0f && o2_second == 5.0f);
    OK(picajit_uniforms_get_bools(ua, &bools_a));
    OK(picajit_uniforms_get_bools(ub, &bools_b));
    CHECK(bools_a == bools_b && (bools_b & 0x8000) != 0);

    /* Pending delivery of raw f24 points, some with patterns conversion would change
       (0x000001 is flushed by arithmetic, 0x7F1234 is a NaN with a payload): they reach
       v0-v15 exactly, in the middle of a batch, and the colour MOV keeps them. */
    static uint32_t pts24[M][2][4];
    for (int k = 0; k < M; k++) {
        pts24[k][0][0] = 0x3F0000u + (uint32_t)k * 0x1000u;
        pts24[k][0][1] = 0x400000u;
        pts24[k][0][3] = 0x3F0000u;
        pts24[k][1][0] = k == 5 ? 0x000001u : 0x3E0000u;
        pts24[k][1][1] = k == 13 ? 0x7F1234u : 0x3F0000u;
    }
    PicajitVertexLayout in24 = {PICAJIT_FORMAT_F24, PICAJIT_LAYOUT_PACKED, 0x3, 0};
    OK(picajit_geometry_set_emit_callback(ga, NULL, NULL, NULL));
    OK(picajit_geometry_set_emit_callback(gb, NULL, NULL, NULL));
    for (int k = 0; k < M; k++) {
        OK(picajit_geometry_run_point(ga, gs, ua, &in24, pts24[k], NULL));
    }
    OK(picajit_geometry_run_points(gb, gs, ub, &in24, pts24, M, &stats));
    CHECK(stats.vertices == M);
    size_t pending_a = 0, pending_b = 0;
    OK(picajit_geometry_pending(ga, &pending_a));
    OK(picajit_geometry_pending(gb, &pending_b));
    CHECK(pending_a == M * per_point && pending_b == pending_a);
    /* Taken in another layout than any seen so far: f24, o0-o2, unpacked. */
    PicajitVertexLayout take24 = {PICAJIT_FORMAT_F24, 0, 0x7, 0};
    enum { TAKE = M * 34 };
    static uint32_t va[TAKE][3][4], vb[TAKE][3][4];
    static PicajitEmitState ia[TAKE], ib[TAKE];
    size_t taken_a = 0, taken_b = 0;
    OK(picajit_geometry_take(ga, &take24, va, ia, TAKE, &taken_a));
    OK(picajit_geometry_take(gb, &take24, vb, ib, TAKE, &taken_b));
    CHECK(taken_a == M * per_point && taken_b == taken_a);
    CHECK(same_info(ia, ib, taken_a));
    CHECK(!exact_fp(backend) || memcmp(va, vb, taken_a * sizeof va[0]) == 0);
    /* The centre (disc) or first corner (quad) vertex has the colour as given. */
    CHECK(vb[5 * per_point][1][0] == 0x000001u && vb[13 * per_point][1][1] == 0x7F1234u);

    /* count 0: nothing runs, nothing is delivered. */
    OK(picajit_geometry_run_points(gb, gs, ub, &in, pts, 0, &stats));
    CHECK(stats.vertices == 0 && stats.instructions == 0);
    OK(picajit_geometry_pending(gb, &pending_b));
    CHECK(pending_b == 0);

    /* Errors, in picajit_geometry_run_point's order. */
    FAILS(picajit_geometry_run_points(NULL, gs, ub, &in, pts, 1, NULL), PICAJIT_ERR_NULL,
          "picajit_geometry_run_points: geometry is NULL");
    FAILS(picajit_geometry_run_points(gb, NULL, ub, &in, pts, 1, NULL), PICAJIT_ERR_NULL,
          "shader is NULL");
    FAILS(picajit_geometry_run_points(gb, gs, NULL, &in, pts, 1, NULL), PICAJIT_ERR_NULL,
          "uniforms is NULL");
    FAILS(picajit_geometry_run_points(gb, gs, ub, NULL, pts, 1, NULL), PICAJIT_ERR_NULL,
          "layout is NULL");
    FAILS(picajit_geometry_run_points(gb, gs, ub, &in, NULL, 1, NULL), PICAJIT_ERR_NULL,
          "vertices is NULL");
    FAILS(picajit_geometry_run_points(gb, gs, ub, &in, NULL, 0, NULL), PICAJIT_ERR_NULL,
          "vertices is NULL");
    PicajitVertexLayout bad = in;
    bad.format = 9;
    FAILS(picajit_geometry_run_points(gb, gs, ub, &bad, pts, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "unknown value format 9");
    bad = in;
    bad.stride = 31; /* two packed registers are 32 bytes */
    FAILS(picajit_geometry_run_points(gb, gs, ub, &bad, pts, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "stride 31 is smaller than one vertex");
    bad = in;
    bad.stride = SIZE_MAX / 2;
    FAILS(picajit_geometry_run_points(gb, gs, ub, &bad, pts, 3, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "overflow");
    FAILS(picajit_geometry_run_points(gb, gs, ub, &in, pts, 1,
                                      (PicajitRunStats *)((char *)&stats + 1)),
          PICAJIT_ERR_INVALID_ARGUMENT, "stats");
    PicajitShader *vs = NULL;
    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, 0, &vs));
    OK(picajit_geometry_run_points(gb, vs, ub, &in, pts, 1, NULL));
    PicajitEngine *f32 = make_engine(backend, PICAJIT_FLOAT_F32, 0);
    PicajitUniforms *u32 = NULL;
    OK(picajit_uniforms_create(f32, &u32));
    FAILS(picajit_geometry_run_points(gb, gs, u32, &in, pts, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "float mode");
    OK(picajit_geometry_set_mode(gb, PICAJIT_GS_VARIABLE, 10, 3));
    FAILS(picajit_geometry_run_points(gb, gs, ub, &in, pts, 1, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "not in point mode");
    OK(picajit_geometry_set_mode(gb, PICAJIT_GS_POINT, 0, 0));
    /* None of the failed calls ran anything. */
    OK(picajit_geometry_pending(gb, &pending_b));
    CHECK(pending_b == 0);

    recorder_free(&ra);
    recorder_free(&rb);
    OK(picajit_uniforms_destroy(u32));
    free(shbin.data);
    destroy_made((Made){.shaders = {vs, gs}, .geometries = {ga, gb}, .uniforms = {ua, ub},
                        .engines = {f32, engine}});
}

/* A point that fails mid-batch: the batch stops there, having delivered what that point and
   the ones before it emitted, exactly as one run_point call per point does. */
static void test_geometry_run_points_failure(uint32_t backend) {
    enum { N = 20, BAD = 13 };
    PicajitEngine *engine = make_engine(backend, PICAJIT_FLOAT_F24, 1000);
    PicajitRunStats stats;
    /* Emits v0, then spins until the budget runs out when v0.x == 1. */
    PicajitShader *spin = load_source(engine,
                                      ".gsh point c0\n"
                                      ONE_AND_POSITION
                                      ".proc main\n"
                                      "    setemit 0\n"
                                      "    mov o, v0\n"
                                      "    emit\n"
                                      SPIN_IF_V0X_IS_1
                                      "    end\n"
                                      ".end\n");
    PicajitUniforms *ua = uniforms_for(engine, spin), *ub = uniforms_for(engine, spin);
    PicajitGeometry *ga = make_geometry(), *gb = make_geometry();
    float pts[N][4];
    for (int k = 0; k < N; k++) {
        pts[k][0] = k == BAD ? 1.0f : (float)k + 2.0f;
        pts[k][1] = 0.5f;
        pts[k][2] = 0.25f;
        pts[k][3] = 1.0f;
    }
    PicajitVertexLayout v0 = {PICAJIT_FORMAT_F32, 0, 0x1, 0};
    Recorder ra = recorder(16), rb = recorder(16);
    OK(picajit_geometry_set_emit_callback(ga, &v0, record, &ra));
    OK(picajit_geometry_set_emit_callback(gb, &v0, record, &rb));
    for (int k = 0; k < BAD; k++) {
        OK(picajit_geometry_run_point(ga, spin, ua, &v0, pts[k], NULL));
    }
    FAILS(picajit_geometry_run_point(ga, spin, ua, &v0, pts[BAD], NULL), PICAJIT_ERR_EXEC,
          "instruction budget of 1000 exhausted");
    memset(&stats, 0xFF, sizeof stats);
    FAILS(picajit_geometry_run_points(gb, spin, ub, &v0, pts, N, &stats), PICAJIT_ERR_EXEC,
          "point 13: instruction budget of 1000 exhausted");
    CHECK(stats.vertices == BAD);
    CHECK(stats.instructions == 0);
    CHECK(ra.calls == BAD + 1);
    CHECK(same_records(&ra, &rb));
    float last;
    memcpy(&last, rb.data + BAD * 16, 4);
    CHECK(last == 1.0f);
    uint16_t bools = 0;
    OK(picajit_uniforms_get_bools(ub, &bools));
    CHECK((bools & 0x8000) != 0); /* set after the failing invocation too */

    /* The points after it run by a further call, as they would by further run_point calls. */
    for (int k = BAD + 1; k < N; k++) {
        OK(picajit_geometry_run_point(ga, spin, ua, &v0, pts[k], NULL));
    }
    OK(picajit_geometry_run_points(gb, spin, ub, &v0, pts[BAD + 1], N - BAD - 1, &stats));
    CHECK(stats.vertices == N - BAD - 1);
    CHECK(ra.calls == N && same_records(&ra, &rb));

    recorder_free(&ra);
    recorder_free(&rb);
    destroy_made((Made){.shaders = {spin}, .geometries = {ga, gb}, .uniforms = {ua, ub},
                        .engines = {engine}});
}

/* ------------------------------------------------------------------------------------------ */
/* Threads */

typedef struct {
    const PicajitShader *shader;
    const PicajitUniforms *uniforms;
    float base;
    int ok;
} Worker;

static void *worker(void *arg) {
    Worker *w = arg;
    Vertex in[8], out[8];
    memset(in, 0, sizeof in);
    for (int k = 0; k < 8; k++) {
        in[k].r[0][0] = w->base + (float)k;
    }
    w->ok = 1;
    for (int round = 0; round < 20; round++) {
        w->ok &= picajit_shader_run_batch(w->shader, w->uniforms, &FULL_F32, in, &FULL_F32, out,
                                          8, NULL) == PICAJIT_OK;
        for (int k = 0; k < 8; k++) {
            w->ok &= out[k].r[0][0] == w->base + (float)k + 10.0f;
        }
    }
    /* This thread's error message is its own. */
    w->ok &= picajit_engine_destroy(NULL) == PICAJIT_OK;
    w->ok &= picajit_uniforms_set_bool(NULL, 0, true) == PICAJIT_ERR_NULL;
    w->ok &= strstr(picajit_last_error(), "picajit_uniforms_set_bool") != NULL;
    return NULL;
}

static void test_threads(void) {
    PicajitEngine *engine = make_engine(PICAJIT_ENGINE_JIT, PICAJIT_FLOAT_F24, 0);
    PicajitShader *shader = NULL;
    PicajitUniforms *u = NULL;
    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, 0, &shader));
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_uniforms_set_float(u, 95, 1, (const float[]){10, 20, 30, 40}));

    FAILS(picajit_shader_get_info(NULL, NULL), PICAJIT_ERR_NULL, "shader is NULL");
    Worker w[3];
    pthread_t t[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (Worker){shader, u, (float)(100 * i), 0};
        CHECK(pthread_create(&t[i], NULL, worker, &w[i]) == 0);
    }
    for (int i = 0; i < 3; i++) {
        pthread_join(t[i], NULL);
        CHECK(w[i].ok);
    }
    /* The main thread's message is unaffected by the workers' errors. */
    CHECK(strcmp(picajit_last_error(), "picajit_shader_get_info: shader is NULL") == 0);

    destroy_made((Made){.shaders = {shader}, .uniforms = {u}, .engines = {engine}});
}

/* ------------------------------------------------------------------------------------------ */
/* Handles: double destroy, use after destroy and handles of the wrong kind are
   PICAJIT_ERR_INVALID_HANDLE and touch no memory (this file also runs under memcheck, which
   would report a read of freed memory or a double free). */

typedef struct {
    PicajitGeometry *victim;
    int calls;
    PicajitStatus destroyed;
} DestroyingCallback;

/* An emit callback that destroys the geometry state it is delivering for. */
static void destroy_on_emit(void *user, const void *vertex, const PicajitEmitState *info) {
    DestroyingCallback *d = user;
    (void)vertex;
    (void)info;
    if (d->calls++ == 0) {
        d->destroyed = picajit_geometry_destroy(d->victim);
    }
}

#define BAD_HANDLE(call, what) FAILS(call, PICAJIT_ERR_INVALID_HANDLE, what)

static void test_handles(void) {
    PicajitEngine *engine = make_engine(PICAJIT_ENGINE_JIT, PICAJIT_FLOAT_F24, 0);
    PicajitShader *shader = NULL, *gs = NULL;
    PicajitUniforms *u = NULL;
    PicajitGeometry *geo = NULL;
    PicajitShaderInfo info;
    uint32_t backend = 0;
    size_t count = 0;
    uint16_t bits = 0;
    OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, PICAJIT_SHADER_VERTEX,
                             &shader));
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_geometry_create(&geo));

    /* Wrong kind: every handle passed where another kind is expected. */
    BAD_HANDLE(picajit_engine_kind((const PicajitEngine *)shader, &backend),
               "picajit_engine_kind: engine (0x");
    BAD_HANDLE(picajit_engine_cache_size((const PicajitEngine *)u, &count), "not a live engine");
    BAD_HANDLE(picajit_engine_destroy((PicajitEngine *)geo), "not a live engine handle");
    BAD_HANDLE(picajit_shader_destroy((PicajitShader *)engine), "not a live shader handle");
    BAD_HANDLE(picajit_uniforms_destroy((PicajitUniforms *)shader), "not a live uniform set");
    BAD_HANDLE(picajit_geometry_destroy((PicajitGeometry *)u), "not a live geometry");
    BAD_HANDLE(picajit_uniforms_set_bools((PicajitUniforms *)engine, 1), "another kind");
    BAD_HANDLE(picajit_shader_create((const PicajitEngine *)u, ADD_CODE, 3, ADD_OPDESCS, 1, 0,
                                     PICAJIT_SHADER_VERTEX, &gs),
               "not a live engine");
    CHECK(gs == NULL);
    BAD_HANDLE(picajit_shader_run_batch(shader, (const PicajitUniforms *)geo, &FULL_F32,
                                        (const float[64]){0}, &FULL_F32, (float[64]){0}, 1, NULL),
               "uniforms");
    /* A pointer the library never returned (a stack object) is not read through. */
    PicajitEngineConfig cfg;
    OK(picajit_engine_config_init(&cfg));
    BAD_HANDLE(picajit_engine_kind((const PicajitEngine *)&cfg, &backend), "not a live");
    BAD_HANDLE(picajit_engine_destroy((PicajitEngine *)&cfg), "not a live");
    /* Every object still works after the rejected calls. */
    OK(picajit_engine_kind(engine, &backend));
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.code_words == 3);
    OK(picajit_uniforms_set_bools(u, 0x5));
    OK(picajit_uniforms_get_bools(u, &bits));
    CHECK(bits == 0x5);
    OK(picajit_geometry_pending(geo, &count));

    /* Use after destroy, then a second destroy, for every kind. */
    OK(picajit_shader_destroy(shader));
    BAD_HANDLE(picajit_shader_get_info(shader, &info), "picajit_shader_get_info: shader");
    BAD_HANDLE(picajit_shader_run_batch(shader, u, &FULL_F32, (const float[64]){0}, &FULL_F32,
                                        (float[64]){0}, 1, NULL),
               "not a live shader");
    BAD_HANDLE(picajit_shader_destroy(shader), "picajit_shader_destroy: shader");
    OK(picajit_uniforms_destroy(u));
    BAD_HANDLE(picajit_uniforms_set_float(u, 0, 1, (const float[4]){1, 2, 3, 4}),
               "not a live uniform set");
    BAD_HANDLE(picajit_uniforms_get_bools(u, &bits), "not a live uniform set");
    BAD_HANDLE(picajit_uniforms_destroy(u), "not a live uniform set");
    OK(picajit_geometry_destroy(geo));
    BAD_HANDLE(picajit_geometry_reset(geo), "not a live geometry");
    BAD_HANDLE(picajit_geometry_pending(geo, &count), "not a live geometry");
    BAD_HANDLE(picajit_geometry_destroy(geo), "not a live geometry");

    /* A destroyed handle stays dead when new objects of its kind are created (which may
       reuse its memory). */
    PicajitShader *old_shader = shader;
    for (int i = 0; i < 4; i++) {
        OK(picajit_shader_create(engine, ADD_CODE, 3, ADD_OPDESCS, 1, 0, PICAJIT_SHADER_VERTEX,
                                 &shader));
        CHECK(shader != old_shader);
        BAD_HANDLE(picajit_shader_get_info(old_shader, &info), "not a live shader");
        OK(picajit_shader_destroy(shader));
    }

    /* An emit callback that destroys the geometry state of the run in progress: the run
       stops with PICAJIT_ERR_INVALID_HANDLE at its next chunk instead of using freed memory. */
    {
        Blob quad = read_file(quad_path);
        enum { N = 600 };
        static float pts[N][2][4];
        PicajitVertexLayout two = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x3, 0};
        DestroyingCallback d = {NULL, 0, PICAJIT_OK};
        OK(picajit_shader_load_shbin(engine, quad.data, quad.size, 0, &gs));
        OK(picajit_uniforms_create(engine, &u));
        OK(picajit_shader_apply_constants(gs, u));
        OK(picajit_geometry_create(&geo));
        d.victim = geo;
        OK(picajit_geometry_set_emit_callback(geo, &two, destroy_on_emit, &d));
        BAD_HANDLE(picajit_geometry_run_points(geo, gs, u, &two, pts, N, NULL),
                   "picajit_geometry_run_points: geometry");
        CHECK(d.calls > 0 && d.destroyed == PICAJIT_OK);
        BAD_HANDLE(picajit_geometry_destroy(geo), "not a live geometry");
        OK(picajit_uniforms_destroy(u));
        OK(picajit_shader_destroy(gs));
        free(quad.data);
    }

    OK(picajit_engine_destroy(engine));
    BAD_HANDLE(picajit_engine_kind(engine, &backend), "not a live engine");
    BAD_HANDLE(picajit_engine_clear_cache(engine), "not a live engine");
    BAD_HANDLE(picajit_uniforms_create(engine, &u), "not a live engine");
    BAD_HANDLE(picajit_engine_destroy(engine), "not a live engine");
    OK(picajit_engine_destroy(NULL));
}

/* ------------------------------------------------------------------------------------------ */
/* PowerVR USC programs (seed 004) */

/* The Collatz start values of test_usc's program and the steps each takes. */
static const uint32_t COLLATZ_START[4] = {27, 1, 6, 7}, COLLATZ_STEPS[4] = {111, 0, 8, 16};

/* A state of four instances with the Collatz start values in vi0. */
static PicajitUscState *collatz_state(void) {
    PicajitUscState *st = NULL;
    OK(picajit_usc_state_create(4, &st));
    for (uint32_t l = 0; l < 4; l++) {
        OK(picajit_usc_state_set(st, PICAJIT_USC_VI, 0, l, COLLATZ_START[l]));
    }
    return st;
}

/* test_usc's program `prog` run with `budget` on a collatz_state: done after 1226 steps with
   each instance's step count in r1; then a budget of 5 stops a further run. The state. */
static PicajitUscState *run_collatz(const PicajitUscProgram *prog, uint64_t budget) {
    PicajitUscState *st = collatz_state();
    PicajitUscRunInfo info;
    OK(picajit_usc_run(prog, st, budget, &info));
    CHECK(info.done == 1 && info.steps == 1226);
    for (uint32_t l = 0; l < 4; l++) {
        uint32_t v = 0;
        OK(picajit_usc_state_get(st, PICAJIT_USC_R, 1, l, &v));
        CHECK(v == COLLATZ_STEPS[l]);
    }
    OK(picajit_usc_run(prog, st, 5, &info));
    CHECK(info.done == 0 && info.steps == 5);
    return st;
}

static void test_usc(void) {
    /* The Collatz example of examples/usc/divergent_loop.usc, shortened: a divergent loop. */
    const char *src =
        "0 : mov r0, vi0\n    mov r1, c0\n"
        "1 : tstne.u32 ftt, p0, r0, c1\n"
        "2 : cndlt 0, r10, p0, r10, 1\n"
        "3 : if (!p0) ba 12\n"
        "4 : byp ft2, r0\n    and ft4, _, ft2, _, c1\n    lsl ft5, ft4, c0\n    tz p0, ft5\n"
        "5 : cndst 0, r11, r10, 1\n"
        "6 : byp ft2, r0\n    or ft4, _, ft2, _, c0\n    shr ft5, ft4, c1\n    mov r0, ft5\n"
        "7 : cndef 1, r11, r11, 1\n"
        "8 : umadd32 ft0, r0, c3, c1, _\n    mov r0, ft0\n"
        "9 : cndend r11, r11, 1\n"
        "10 : umadd32 ft0, r1, c1, c1, _\n    mov r1, ft0\n"
        "11 : br -10\n"
        "12 : mov r2, r1\n";
    PicajitUscOptions opts;
    OK(picajit_usc_options_init(&opts));
    CHECK(opts.fused_fmad == 1 && opts.cndlt_literal == 0);
    PicajitUscProgram *prog = NULL;
    OK(picajit_usc_program_create(src, &opts, PICAJIT_ENGINE_INTERP, &prog));
    /* Done within the budget; a budget of 5 stops the run (with or without run info). */
    PicajitUscState *st = run_collatz(prog, 1000000);
    OK(picajit_usc_run(prog, st, 5, NULL));
    /* A budget of 0 is PICAJIT_DEFAULT_BUDGET, as for every ISA. */
    OK(picajit_usc_state_destroy(run_collatz(prog, 0)));
    /* p0 and shared registers. */
    uint32_t p = 7;
    OK(picajit_usc_state_set_p0(st, 3, 1));
    OK(picajit_usc_state_get_p0(st, 3, &p));
    CHECK(p == 1);
    OK(picajit_usc_state_set(st, PICAJIT_USC_SH, 4095, 99, 5));
    OK(picajit_usc_state_get(st, PICAJIT_USC_SH, 4095, 0, &p));
    CHECK(p == 5);
    /* Errors. */
    PicajitUscProgram *bad = NULL;
    FAILS(picajit_usc_program_create("0 : fadd ft1, sh0, sh1", NULL, 0, &bad),
          PICAJIT_ERR_ASSEMBLY, "1:5: `fadd` is a phase 1 instruction");
    FAILS(picajit_usc_program_create("0 : fdsx ft0, r2", NULL, 0, &bad), PICAJIT_ERR_PROGRAM,
          "not supported: fdsx");
    CHECK(bad == NULL);
    FAILS(picajit_usc_program_create(NULL, NULL, 0, &bad), PICAJIT_ERR_NULL, "source");
    FAILS(picajit_usc_state_create(17, &st), PICAJIT_ERR_INVALID_ARGUMENT, "1 to 16");
    FAILS(picajit_usc_state_set(st, 9, 0, 0, 1), PICAJIT_ERR_INVALID_ARGUMENT, "bank");
    FAILS(picajit_usc_state_set(st, PICAJIT_USC_R, 248, 0, 1), PICAJIT_ERR_INVALID_ARGUMENT,
          "r248");
    FAILS(picajit_usc_state_set(st, PICAJIT_USC_R, 0, 4, 1), PICAJIT_ERR_INVALID_ARGUMENT,
          "instance 4");
    FAILS(picajit_usc_state_get(st, PICAJIT_USC_R, 0, 0, NULL), PICAJIT_ERR_NULL, "value");
    FAILS(picajit_usc_run((PicajitUscProgram *)st, st, 1, NULL), PICAJIT_ERR_INVALID_HANDLE,
          "USC program");
    OK(picajit_usc_state_destroy(st));
    FAILS(picajit_usc_state_destroy(st), PICAJIT_ERR_INVALID_HANDLE, "USC state");
    OK(picajit_usc_program_destroy(prog));
    OK(picajit_usc_program_destroy(NULL));

    /* Every engine: the same results as the interpreter, bit for bit. A JIT this host or
       build cannot run is reported as unavailable; PICAJIT_ENGINE_JIT always gives one. */
    const uint32_t backends[] = {PICAJIT_ENGINE_INTERP, PICAJIT_ENGINE_JIT,
                                 PICAJIT_ENGINE_X64, PICAJIT_ENGINE_A64};
    /* Floats too: a fused multiply-add, a reciprocal, a test and a divergent store. */
    const char *fsrc = "0 : fmad ft0, vi0, vi1, vi2\n    mov r3, ft0\n"
                       "1 : frcp r4, vi1\n"
                       "2 : fadd ft0, vi0, vi1\n    tstg ftt, p0, ft0, c0\n"
                       "3 : if (p0) mov r5, vi2\n";
    uint32_t want[16][4];
    int have_want = 0, jits = 0;
    for (size_t b = 0; b < sizeof backends / sizeof backends[0]; b++) {
        PicajitUscProgram *q = NULL, *fq = NULL;
        PicajitStatus s = picajit_usc_program_create(src, NULL, backends[b], &q);
        if (s == PICAJIT_ERR_ENGINE_UNAVAILABLE) {
            CHECK(backends[b] == PICAJIT_ENGINE_X64 || backends[b] == PICAJIT_ENGINE_A64);
            CHECK(q == NULL);
            continue;
        }
        CHECK(s == PICAJIT_OK);
        uint32_t active = 99;
        OK(picajit_usc_program_engine(q, &active));
        if (backends[b] == PICAJIT_ENGINE_JIT) {
            CHECK(active != PICAJIT_ENGINE_JIT);
        } else {
            CHECK(active == backends[b]);
        }
        jits += active != PICAJIT_ENGINE_INTERP;
        OK(picajit_usc_state_destroy(run_collatz(q, 1000000)));
        OK(picajit_usc_program_create(fsrc, NULL, backends[b], &fq));
        OK(picajit_usc_state_create(16, &st));
        for (uint32_t l = 0; l < 16; l++) {
            const float x = (float)l - 7.5f, y = 0.25f * (float)l + 0.1f, z = -3.0f / (1.0f + l);
            uint32_t wx, wy, wz;
            memcpy(&wx, &x, 4);
            memcpy(&wy, &y, 4);
            memcpy(&wz, &z, 4);
            OK(picajit_usc_state_set(st, PICAJIT_USC_VI, 0, l, wx));
            OK(picajit_usc_state_set(st, PICAJIT_USC_VI, 1, l, wy));
            OK(picajit_usc_state_set(st, PICAJIT_USC_VI, 2, l, wz));
        }
        PicajitUscRunInfo info;
        OK(picajit_usc_run(fq, st, 100, &info));
        CHECK(info.done == 1 && info.steps == 4);
        for (uint32_t l = 0; l < 16; l++) {
            uint32_t got[4];
            OK(picajit_usc_state_get(st, PICAJIT_USC_R, 3, l, &got[0]));
            OK(picajit_usc_state_get(st, PICAJIT_USC_R, 4, l, &got[1]));
            OK(picajit_usc_state_get(st, PICAJIT_USC_R, 5, l, &got[2]));
            OK(picajit_usc_state_get_p0(st, l, &got[3]));
            if (!have_want) {
                memcpy(want[l], got, sizeof got);
            } else {
                CHECK(memcmp(want[l], got, sizeof got) == 0);
            }
        }
        have_want = 1;
        OK(picajit_usc_state_destroy(st));
        OK(picajit_usc_program_destroy(q));
        OK(picajit_usc_program_destroy(fq));
    }
    CHECK(have_want);
    /* p0 follows the test: x + y > 0 from instance 5 on (x = l - 7.5, y = l / 4 + 0.1). */
    CHECK(want[5][3] == 0 && want[6][3] == 1 && want[15][3] == 1);
    CHECK(want[5][2] == 0 && want[6][2] != 0);
    fprintf(stderr, "USC engines: %d JIT(s) compared with the interpreter\n", jits);
    PicajitUscProgram *none = NULL;
    FAILS(picajit_usc_program_create(src, NULL, 9, &none), PICAJIT_ERR_INVALID_ARGUMENT,
          "unknown engine 9 (not a PicajitEngineKind value)");
    uint32_t active = 0;
    FAILS(picajit_usc_program_engine(NULL, &active), PICAJIT_ERR_NULL, "program");
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: %s MVP_SHBIN POINT_TO_QUAD_SHBIN POINT_TO_DISC_SHBIN\n", argv[0]);
        return 2;
    }
    mvp_path = argv[1];
    quad_path = argv[2];
    disc_path = argv[3];
    under_valgrind = getenv("PICAJIT_UNDER_VALGRIND") != NULL;
    test_versions_and_errors();
    test_engine();
    test_shader_create();
    test_shbin_and_source();
    test_uniforms();
    test_apply_constants();
    /* Execution paths on the interpreter and on the host's JIT (auto). */
    const uint32_t backends[2] = {PICAJIT_ENGINE_INTERP, PICAJIT_ENGINE_JIT};
    for (int i = 0; i < 2; i++) {
        test_run_batch(backends[i]);
        test_exec_errors(backends[i]);
        test_geometry_point_to_quad(backends[i]);
        test_geometry_state(backends[i]);
        test_geometry_uniform_modes(backends[i]);
        test_geometry_run_points(backends[i], quad_path, 4);
        test_geometry_run_points(backends[i], disc_path, 34);
        test_geometry_run_points_failure(backends[i]);
    }
    test_threads();
    test_handles();
    test_usc();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
