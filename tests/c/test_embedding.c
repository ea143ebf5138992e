/*
 * Emulator embedding through the C API, written against include/picajit.h only: unit state
 * (r0-r15, a0, aL, cmp) in and out of batches and geometry runs, per-run entry points,
 * whole 4096-entry operand-descriptor tables, SETEMIT state get/set, the batch path in the
 * shader info. Run by tests/capi.rs natively and under valgrind memcheck; prints
 * "N passed, M failed" and exits non-zero on any failure.
 *
 * Every value here is a small integer, exact in every rounding mode, so the JIT's results are
 * compared under valgrind too (valgrind ignores the SSE rounding and flush bits JIT code sets).
 */
#include "picajit.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"

static PicajitEngine *make_engine(uint32_t backend) {
    PicajitEngineConfig cfg;
    PicajitEngine *engine = NULL;
    OK(picajit_engine_config_init(&cfg));
    cfg.engine = backend;
    if (picajit_engine_create(&cfg, &engine) != PICAJIT_OK) {
        return NULL;
    }
    return engine;
}

/* The first program of `source`, assembled by the library. */
static PicajitShader *load(PicajitEngine *engine, const char *source) {
    PicajitShader *shader = NULL;
    OK(picajit_shader_load_source(engine, source, 0, &shader));
    return shader;
}

typedef struct {
    float r[16][4];
} Vertex;

static const PicajitVertexLayout FULL = {PICAJIT_FORMAT_F32, 0, 0xFFFF, 0};

/* main reads r0 before writing it, reads through a0.x and aL, branches on the incoming
   cmp.x, then sets a0.x, cmp and r0 from the vertex. `other` (entry point 10) reads r7. */
static const char *PROBE =
    ".fvec tab[8]\n"
    ".proc main\n"
    "    add o0, r0, v0\n"
    "    mov o1, tab[a0.x]\n"
    "    mov o2, tab[aL]\n"
    "    ifc cmp.x\n"
    "        mov o3, r2\n"
    "    .else\n"
    "        mov o3, r3\n"
    "    .end\n"
    "    mova a0.x, v0.x\n"
    "    cmp v0, lt, ge, r1\n"
    "    mov r0, v0\n"
    "    end\n"
    ".end\n"
    ".proc other\n"
    "    mul o0, r7, v0\n"
    "    end\n"
    ".end\n";
enum { OTHER_ENTRY = 10 };

static void set_row(float *row, float x, float y, float z, float w) {
    row[0] = x;
    row[1] = y;
    row[2] = z;
    row[3] = w;
}

static int row_is(const float *row, float x, float y, float z, float w) {
    return row[0] == x && row[1] == y && row[2] == z && row[3] == w;
}

static PicajitUnitState probe_state(void) {
    PicajitUnitState s;
    memset(&s, 0, sizeof s);
    set_row(s.r[0], 1, 2, 3, 4);
    set_row(s.r[1], 5, 5, 5, 5);
    set_row(s.r[2], 100, 101, 102, 103);
    set_row(s.r[3], 200, 201, 202, 203);
    set_row(s.r[7], 2, 3, 4, 5);
    s.a0[0] = 3;
    s.a0[1] = -7;
    s.al = 5;
    s.cmp[0] = 1;
    s.cmp[1] = 0;
    return s;
}

static PicajitUniforms *probe_uniforms(PicajitEngine *engine) {
    PicajitUniforms *u = NULL;
    float tab[8][4];
    for (int k = 0; k < 8; k++) {
        set_row(tab[k], (float)k, (float)k + 10, (float)k + 20, (float)k + 30);
    }
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_uniforms_set_float(u, 0, 8, &tab[0][0]));
    return u;
}

/* Every vertex of a batch starts from state_in; state_out is the last vertex's state. */
static void test_unit_state_batches(uint32_t backend, const char *name) {
    PicajitEngine *engine = make_engine(backend);
    if (!engine) {
        printf("(%s engine unavailable in this build: skipped)\n", name);
        return;
    }
    PicajitShader *shader = load(engine, PROBE);
    PicajitUniforms *u = probe_uniforms(engine);
    enum { N = 21 };
    Vertex in[N], out[N];
    memset(in, 0, sizeof in);
    for (int k = 0; k < N; k++) {
        set_row(in[k].r[0], (float)k, (float)k + 1, 0, 0);
    }
    const size_t sizes[3] = {1, 8, N};
    for (int i = 0; i < 3; i++) {
        size_t n = sizes[i];
        PicajitUnitState in_state = probe_state(), out_state;
        memset(&out_state, 0xAB, sizeof out_state);
        memset(out, 0, sizeof out);
        PicajitRunOptions opt;
        OK(picajit_run_options_init(&opt));
        CHECK(opt.struct_size == sizeof opt && opt.entry == PICAJIT_ENTRY_DEFAULT);
        CHECK(opt.state_in == NULL && opt.state_out == NULL);
        opt.state_in = &in_state;
        opt.state_out = &out_state;
        PicajitRunStats stats;
        OK(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, n, &opt, &stats));
        CHECK(stats.vertices == n);
        int ok = 1;
        for (size_t k = 0; k < n; k++) {
            float f = (float)k;
            ok &= row_is(out[k].r[0], 1 + f, 3 + f, 3, 4);     /* r0 from the state */
            ok &= row_is(out[k].r[1], 3, 13, 23, 33);          /* tab[a0.x = 3] */
            ok &= row_is(out[k].r[2], 5, 15, 25, 35);          /* tab[aL = 5] */
            ok &= row_is(out[k].r[3], 100, 101, 102, 103);     /* cmp.x set: r2 */
        }
        CHECK(ok);
        float last = (float)(n - 1);
        CHECK(row_is(out_state.r[0], last, last + 1, 0, 0));
        CHECK(row_is(out_state.r[1], 5, 5, 5, 5));
        CHECK(row_is(out_state.r[3], 200, 201, 202, 203));
        CHECK(out_state.a0[0] == (int32_t)(n - 1) && out_state.a0[1] == -7);
        CHECK(out_state.al == 5);
        CHECK(out_state.cmp[0] == (last < 5) && out_state.cmp[1] == (last + 1 >= 5));
        CHECK(out_state.reserved[0] == 0 && out_state.reserved[1] == 0);

        /* The same run with the state passed through one object (in and out). */
        PicajitUnitState chained = probe_state();
        opt.state_in = &chained;
        opt.state_out = &chained;
        OK(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, n, &opt, NULL));
        CHECK(memcmp(&chained, &out_state, sizeof chained) == 0);

        /* Neither: the clean state, exactly as picajit_shader_run_batch. */
        Vertex plain[N];
        OK(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, n, NULL, NULL));
        OK(picajit_shader_run_batch(shader, u, &FULL, in, &FULL, plain, n, NULL));
        CHECK(memcmp(out, plain, n * sizeof(Vertex)) == 0);
        CHECK(row_is(out[0].r[0], 0, 1, 0, 0) && row_is(out[0].r[1], 0, 10, 20, 30));
        CHECK(row_is(out[0].r[3], 0, 0, 0, 0));
    }

    /* A persistent unit: one-vertex batches chain the state as the hardware unit would. */
    PicajitUnitState unit = probe_state();
    PicajitRunOptions opt;
    OK(picajit_run_options_init(&opt));
    opt.state_in = &unit;
    opt.state_out = &unit;
    for (int k = 0; k < 4; k++) {
        OK(picajit_shader_run_batch_ex(shader, u, &FULL, &in[k], &FULL, &out[k], 1, &opt, NULL));
    }
    /* Vertex 1 saw vertex 0's r0 = (0, 1, 0, 0) and a0.x = 0: o0 = r0 + v0, o1 = tab[0]. */
    CHECK(row_is(out[1].r[0], 1, 3, 0, 0) && row_is(out[1].r[1], 0, 10, 20, 30));
    CHECK(row_is(out[3].r[0], 5, 7, 0, 0) && unit.a0[0] == 3);

    /* Bad options. */
    opt.struct_size = 8;
    FAILS(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, 1, &opt, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "struct_size");
    FAILS(picajit_run_options_init(NULL), PICAJIT_ERR_NULL, "options is NULL");

    /* The shader info says how batches run. */
    PicajitShaderInfo info;
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    if (info.engine == PICAJIT_ENGINE_INTERP) {
        CHECK(info.batch_path == PICAJIT_BATCH_INTERPRETER && info.batch_lanes == 1);
    } else {
        /* The batches above generated whatever code the path needs. */
        CHECK(info.batch_path == PICAJIT_BATCH_PER_VERTEX ||
              info.batch_path == PICAJIT_BATCH_EIGHT_LANE);
        CHECK(info.batch_lanes == (info.batch_path == PICAJIT_BATCH_EIGHT_LANE ? 8u : 1u));
    }
    printf("%s: batch path %u, %u lanes\n", name, info.batch_path, info.batch_lanes);
    /* A caller built against API 1.2 (struct ending at code_bytes) still gets its fields. */
    PicajitShaderInfo old;
    memset(&old, 0xEE, sizeof old);
    old.struct_size = (uint32_t)offsetof(PicajitShaderInfo, batch_path);
    OK(picajit_shader_get_info(shader, &old));
    CHECK(old.code_words == info.code_words && old.code_bytes == info.code_bytes);
    CHECK(old.batch_path == 0xEEEEEEEEu);

    OK(picajit_uniforms_destroy(u));
    OK(picajit_shader_destroy(shader));
    OK(picajit_engine_destroy(engine));
}

/* One shader, many entry points: each prepared once. */
static void test_entry_per_run(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend);
    if (!engine) {
        return;
    }
    PicajitShader *shader = load(engine, PROBE);
    PicajitUniforms *u = probe_uniforms(engine);
    Vertex in[9], out[9];
    memset(in, 0, sizeof in);
    for (int k = 0; k < 9; k++) {
        set_row(in[k].r[0], (float)k, 1, 2, 3);
    }
    PicajitUnitState state = probe_state();
    PicajitRunOptions opt;
    OK(picajit_run_options_init(&opt));
    opt.entry = OTHER_ENTRY;
    opt.state_in = &state;
    uint32_t prepared = 99;
    OK(picajit_shader_prepared_entries(shader, &prepared));
    CHECK(prepared == 0);
    for (int round = 0; round < 3; round++) {
        memset(out, 0, sizeof out);
        OK(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, 9, &opt, NULL));
        CHECK(row_is(out[0].r[0], 0, 3, 8, 15));          /* r7 * v0 */
        CHECK(row_is(out[8].r[0], 16, 3, 8, 15));
        OK(picajit_shader_prepared_entries(shader, &prepared));
        CHECK(prepared == 1);
        /* The own entry in between. */
        opt.entry = PICAJIT_ENTRY_DEFAULT;
        OK(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, 9, &opt, NULL));
        CHECK(row_is(out[2].r[0], 3, 3, 5, 7));
        opt.entry = 0;  /* the own entry given explicitly */
        OK(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, 9, &opt, NULL));
        CHECK(row_is(out[2].r[0], 3, 3, 5, 7));
        opt.entry = OTHER_ENTRY;
    }
    OK(picajit_shader_prepared_entries(shader, &prepared));
    CHECK(prepared == 1);
    opt.entry = 5000;
    FAILS(picajit_shader_run_batch_ex(shader, u, &FULL, in, &FULL, out, 9, &opt, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "entry point");
    OK(picajit_uniforms_destroy(u));
    OK(picajit_shader_destroy(shader));
    OK(picajit_engine_destroy(engine));
}

/* o0 = c95 + v0; o1 = v1; end (as in test_capi.c). */
static const uint32_t ADD_CODE[] = {0x0007f000u, 0x4c201000u, 0x88000000u};

static void test_whole_descriptor_table(void) {
    PicajitEngine *engine = make_engine(PICAJIT_ENGINE_JIT);
    uint32_t *table = malloc(4097 * sizeof *table);
    table[0] = 0x6c36fu;
    for (int k = 1; k < 4097; k++) {
        table[k] = k < 128 ? 0 : 0xFFFFFFFFu; /* never read past 128 */
    }
    PicajitShader *shader = NULL;
    OK(picajit_shader_create(engine, ADD_CODE, 3, table, 4096, 0, PICAJIT_SHADER_VERTEX,
                             &shader));
    PicajitShaderInfo info;
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.opdesc_count == 128);
    PicajitUniforms *u = NULL;
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_uniforms_set_float(u, 95, 1, (const float[]){10, 20, 30, 40}));
    Vertex in, out;
    memset(&in, 0, sizeof in);
    set_row(in.r[0], 1, 2, 3, 4);
    set_row(in.r[1], 7, 7, 7, 7);
    OK(picajit_shader_run_batch(shader, u, &FULL, &in, &FULL, &out, 1, NULL));
    CHECK(row_is(out.r[0], 11, 22, 33, 44) && row_is(out.r[1], 7, 7, 7, 7));
    OK(picajit_shader_destroy(shader));
    shader = NULL;
    FAILS(picajit_shader_create(engine, ADD_CODE, 3, table, 4097, 0, PICAJIT_SHADER_VERTEX,
                                &shader),
          PICAJIT_ERR_PROGRAM, "4097 operand descriptors");
    CHECK(shader == NULL);
    free(table);
    OK(picajit_uniforms_destroy(u));
    OK(picajit_engine_destroy(engine));
}

typedef struct {
    int count;
    float o0[8][4];
    PicajitEmitState info[8];
} Emits;

static void on_emit(void *user, const void *vertex, const PicajitEmitState *info) {
    Emits *e = user;
    if (e->count < 8) {
        memcpy(e->o0[e->count], vertex, sizeof e->o0[0]);
        e->info[e->count] = *info;
    }
    e->count++;
}

/* `main` sets the emit state and ends without EMIT; `emit_only` (entry 3) emits r0 with
   whatever state it finds and steps r0 and a0.x; a vertex shader ignores SETEMIT/EMIT. */
static const char *GS =
    ".gsh point c0\n"
    ".constf one(1.0, 1.0, 1.0, 1.0)\n"
    ".proc main\n"
    "    setemit 2, prim\n"
    "    mov o0, r0\n"
    "    end\n"
    ".end\n"
    ".proc emit_only\n"
    "    mov o0, r0\n"
    "    emit\n"
    "    add r0, one, r0\n"
    "    mova a0.x, r0.x\n"
    "    end\n"
    ".end\n";
enum { GS_EMIT_ONLY = 3 };

static void test_geometry_state(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend);
    if (!engine) {
        return;
    }
    PicajitShader *gs = load(engine, GS);
    PicajitUniforms *u = NULL;
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_shader_apply_constants(gs, u));
    PicajitGeometry *g = NULL;
    OK(picajit_geometry_create(&g));
    Emits e;
    memset(&e, 0, sizeof e);
    const PicajitVertexLayout o0 = {PICAJIT_FORMAT_F32, 0, 1, 0};
    OK(picajit_geometry_set_emit_callback(g, &o0, on_emit, &e));

    PicajitEmitState es = {9, 9, 9, {0, 0}};
    OK(picajit_geometry_get_emit_state(g, &es));
    CHECK(es.slot == 0 && es.primitive == 0 && es.winding == 0);
    Vertex point;
    memset(&point, 0, sizeof point);
    OK(picajit_geometry_run_point(g, gs, u, &FULL, &point, NULL));
    OK(picajit_geometry_get_emit_state(g, &es));
    CHECK(es.slot == 2 && es.primitive == 1 && es.winding == 0);
    CHECK(e.count == 0);

    /* The emulator restores a state it saved, and the unit registers, then runs another
       entry of the same shader. */
    PicajitEmitState set = {1, 1, 1, {0, 0}};
    OK(picajit_geometry_set_emit_state(g, &set));
    PicajitUnitState st;
    OK(picajit_geometry_get_unit_state(g, &st));
    CHECK(row_is(st.r[0], 0, 0, 0, 0) && st.a0[0] == 0);
    set_row(st.r[0], 7, 8, 9, 10);
    st.cmp[1] = 1;
    OK(picajit_geometry_set_unit_state(g, gs, &st));
    OK(picajit_geometry_set_entry(g, GS_EMIT_ONLY));
    Vertex points[10];
    memset(points, 0, sizeof points);
    PicajitRunStats stats;
    OK(picajit_geometry_run_points(g, gs, u, &FULL, points, 10, &stats));
    CHECK(stats.vertices == 10 && e.count == 10);
    CHECK(row_is(e.o0[0], 7, 8, 9, 10));
    CHECK(row_is(e.o0[7], 14, 15, 16, 17));
    CHECK(e.info[0].slot == 1 && e.info[0].primitive && e.info[0].winding);
    OK(picajit_geometry_get_unit_state(g, &st));
    CHECK(row_is(st.r[0], 17, 18, 19, 20) && st.a0[0] == 17 && st.cmp[1] == 1);
    OK(picajit_geometry_get_emit_state(g, &es));
    CHECK(es.slot == 1 && es.primitive == 1 && es.winding == 1);

    /* Errors. */
    set.slot = 4;
    FAILS(picajit_geometry_set_emit_state(g, &set), PICAJIT_ERR_INVALID_ARGUMENT, "vertex id");
    set.slot = 0;
    set.winding = 2;
    FAILS(picajit_geometry_set_emit_state(g, &set), PICAJIT_ERR_INVALID_ARGUMENT, "flags");
    FAILS(picajit_geometry_get_emit_state(NULL, &es), PICAJIT_ERR_NULL, "geometry is NULL");
    FAILS(picajit_geometry_set_unit_state(g, gs, NULL), PICAJIT_ERR_NULL, "state is NULL");
    OK(picajit_geometry_set_entry(g, 999));
    FAILS(picajit_geometry_run_point(g, gs, u, &FULL, &point, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "entry point");

    /* SETEMIT and EMIT in a vertex shader do nothing. */
    /* setemit 1, prim / mov o1, v1 / emit / end */
    static const uint32_t VS_EMIT[] = {0xad800000u, 0x4c201000u, 0xa8000000u, 0x88000000u};
    static const uint32_t VS_OPDESCS[] = {0x6c36fu};
    PicajitShader *vs = NULL;
    OK(picajit_shader_create(engine, VS_EMIT, 4, VS_OPDESCS, 1, 0, PICAJIT_SHADER_VERTEX, &vs));
    Vertex vin[9], vout[9];
    memset(vin, 0, sizeof vin);
    for (int k = 0; k < 9; k++) {
        set_row(vin[k].r[1], (float)k, 1, 1, 1);
    }
    OK(picajit_shader_run_batch(vs, u, &FULL, vin, &FULL, vout, 9, NULL));
    CHECK(row_is(vout[8].r[1], 8, 1, 1, 1));
    OK(picajit_shader_destroy(vs));

    PicajitShaderInfo info;
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(gs, &info));
    CHECK(info.batch_lanes == (info.batch_path == PICAJIT_BATCH_EIGHT_LANE   ? 8u
                               : info.batch_path == PICAJIT_BATCH_NOT_GENERATED ? 0u
                                                                                : 1u));

    /* Handles are checked: another kind, or a destroyed one. */
    FAILS(picajit_geometry_get_unit_state((const PicajitGeometry *)gs, &st),
          PICAJIT_ERR_INVALID_HANDLE, "geometry");
    FAILS(picajit_geometry_set_unit_state(g, (const PicajitShader *)u, &st),
          PICAJIT_ERR_INVALID_HANDLE, "shader");
    OK(picajit_geometry_destroy(g));
    FAILS(picajit_geometry_get_emit_state(g, &es), PICAJIT_ERR_INVALID_HANDLE, "geometry");
    FAILS(picajit_geometry_set_emit_state(g, &es), PICAJIT_ERR_INVALID_HANDLE, "geometry");
    FAILS(picajit_geometry_set_entry(g, 0), PICAJIT_ERR_INVALID_HANDLE, "geometry");
    OK(picajit_uniforms_destroy(u));
    OK(picajit_shader_destroy(gs));
    uint32_t prepared;
    FAILS(picajit_shader_prepared_entries(gs, &prepared), PICAJIT_ERR_INVALID_HANDLE, "shader");
    PicajitRunOptions opt;
    OK(picajit_run_options_init(&opt));
    FAILS(picajit_shader_run_batch_ex(gs, u, &FULL, &point, &FULL, &point, 0, &opt, NULL),
          PICAJIT_ERR_INVALID_HANDLE, "shader");
    OK(picajit_engine_destroy(engine));
}


/* MAX(0, -inf) under both readings (docs/float-max.md), selected in the engine config. */
static void test_max_rule(uint32_t backend) {
    /* max o0, c95, v0 / end */
    static const uint32_t MAX_CODE[] = {0x3007f000u, 0x88000000u};
    static const uint32_t MAX_OPDESCS[] = {0x6c36fu};
    const float ninf = -__builtin_inff(), pinf = __builtin_inff();
    for (uint32_t rule = 0; rule < 2; rule++) {
        PicajitEngineConfig cfg;
        OK(picajit_engine_config_init(&cfg));
        CHECK(cfg.max_rule == PICAJIT_MAX_COMPARE);
        cfg.engine = backend;
        cfg.max_rule = rule;
        PicajitEngine *engine = NULL;
        if (picajit_engine_create(&cfg, &engine) != PICAJIT_OK) {
            return;
        }
        PicajitShader *shader = NULL;
        OK(picajit_shader_create(engine, MAX_CODE, 2, MAX_OPDESCS, 1, 0, PICAJIT_SHADER_VERTEX,
                                 &shader));
        PicajitUniforms *u = NULL;
        OK(picajit_uniforms_create(engine, &u));
        Vertex in[9], out[9];
        memset(in, 0, sizeof in);
        for (int k = 0; k < 9; k++) {
            set_row(in[k].r[0], ninf, 1, -2, pinf);
        }
        OK(picajit_shader_run_batch(shader, u, &FULL, in, &FULL, out, 9, NULL));
        float first = rule == PICAJIT_MAX_COMPARE ? 0.0f : ninf;
        CHECK(row_is(out[0].r[0], first, 1, 0, pinf) && row_is(out[8].r[0], first, 1, 0, pinf));
        OK(picajit_shader_destroy(shader));
        OK(picajit_uniforms_destroy(u));
        OK(picajit_engine_destroy(engine));
    }
    /* A config struct from an API 1.2 header (ending at `budget`) still works. */
    PicajitEngineConfig cfg;
    OK(picajit_engine_config_init(&cfg));
    cfg.struct_size = (uint32_t)offsetof(PicajitEngineConfig, max_rule);
    cfg.max_rule = 99; /* beyond the caller's struct: not read */
    PicajitEngine *engine = NULL;
    OK(picajit_engine_create(&cfg, &engine));
    OK(picajit_engine_destroy(engine));
    OK(picajit_engine_config_init(&cfg));
    cfg.max_rule = 2;
    FAILS(picajit_engine_create(&cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT, "unknown max rule");
}

/* ------------------------------------------------------------------------------------------ */
/* Save states of a geometry unit mid-primitive: a triangle strip built over three
   invocations, with output registers written after EMIT (not emitted yet), carried
   registers (r0 sum, r1 counter) and the SETEMIT state. */
static const char *GS_STRIP =
    ".gsh point c0\n"
    ".constf zero(0.0, 0.0, 0.0, 0.0)\n"
    ".constf one(1.0, 1.0, 1.0, 1.0)\n"
    ".constf three(3.0, 3.0, 3.0, 3.0)\n"
    ".proc main\n"
    "    add r0, r0, v0\n"
    "    mov o0, r0\n"
    "    cmp zero, eq, eq, r1\n"
    "    ifc cmp.x\n"
    "        setemit 0\n"
    "        emit\n"
    "    .else\n"
    "        cmp one, eq, eq, r1\n"
    "        ifc cmp.x\n"
    "            setemit 1\n"
    "            emit\n"
    "        .else\n"
    "            setemit 2, prim inv\n"
    "            emit\n"
    "        .end\n"
    "    .end\n"
    "    mov o1, v0\n"
    "    add r1, one, r1\n"
    "    cmp three, eq, eq, r1\n"
    "    ifc cmp.x\n"
    "        mov r1, zero\n"
    "    .end\n"
    "    end\n"
    ".end\n";

enum { STRIP_POINTS = 21, STRIP_SAVE_AT = 7 };

typedef struct {
    float o[3][4];
} Out3;

static const PicajitVertexLayout OUT3 = {PICAJIT_FORMAT_F32, 0, 0x7, 0};

/* Every pending emitted vertex of `g`, appended at `*n`. */
static void take_all(PicajitGeometry *g, Out3 *rows, PicajitEmitState *infos, size_t *n,
                     size_t cap) {
    size_t taken = 0;
    OK(picajit_geometry_take(g, &OUT3, rows + *n, infos + *n, cap - *n, &taken));
    *n += taken;
}

static void strip_points(Vertex *pts) {
    memset(pts, 0, STRIP_POINTS * sizeof *pts);
    for (int k = 0; k < STRIP_POINTS; k++) {
        set_row(pts[k].r[0], (float)(k + 1), (float)(2 * k), -1, (float)(k % 5));
    }
}

/* Run points [from, to) of the strip on `g`, one call per point or one call for all. */
static void run_strip(PicajitGeometry *g, PicajitShader *gs, PicajitUniforms *u,
                      const Vertex *pts, int from, int to, int one_by_one) {
    if (one_by_one) {
        for (int k = from; k < to; k++) {
            OK(picajit_geometry_run_point(g, gs, u, &FULL, &pts[k], NULL));
        }
    } else {
        OK(picajit_geometry_run_points(g, gs, u, &FULL, &pts[from], (size_t)(to - from), NULL));
    }
}

static void test_geometry_save_state(uint32_t saver, uint32_t restorer) {
    PicajitEngine *ea = make_engine(saver);
    PicajitEngine *eb = make_engine(restorer);
    if (!ea || !eb) {
        picajit_engine_destroy(ea);
        picajit_engine_destroy(eb);
        return;
    }
    PicajitShader *ga = load(ea, GS_STRIP), *gb = load(eb, GS_STRIP);
    PicajitUniforms *ua = NULL, *ub = NULL;
    OK(picajit_uniforms_create(ea, &ua));
    OK(picajit_uniforms_create(eb, &ub));
    OK(picajit_shader_apply_constants(ga, ua));
    OK(picajit_shader_apply_constants(gb, ub));
    Vertex pts[STRIP_POINTS];
    strip_points(pts);

    /* Reference: one unit runs the whole strip. */
    PicajitGeometry *ref = NULL;
    OK(picajit_geometry_create(&ref));
    static Out3 want[STRIP_POINTS];
    static PicajitEmitState want_info[STRIP_POINTS];
    size_t nwant = 0;
    run_strip(ref, ga, ua, pts, 0, STRIP_SAVE_AT, 1);
    take_all(ref, want, want_info, &nwant, STRIP_POINTS);
    PicajitGeometryState saved;
    memset(&saved, 0xEE, sizeof saved);
    saved.struct_size = sizeof saved;
    OK(picajit_geometry_get_state(ref, &saved));
    /* Mid-primitive: slot 1 comes next, o1 holds the last input, written after EMIT. */
    CHECK(saved.emit.slot == 0 && saved.emit.primitive == 0);
    CHECK(row_is(saved.outputs[1], (float)STRIP_SAVE_AT, (float)(2 * STRIP_SAVE_AT - 2), -1,
                 (float)((STRIP_SAVE_AT - 1) % 5)));
    CHECK(saved.unit.r[1][0] == 1.0f);
    CHECK(row_is(saved.buffer[0][0], 0, 0, 0, 0) == 0);
    size_t before = nwant;
    run_strip(ref, ga, ua, pts, STRIP_SAVE_AT, STRIP_POINTS, 1);
    take_all(ref, want, want_info, &nwant, STRIP_POINTS);
    CHECK(nwant == STRIP_POINTS);

    /* A fresh unit, another engine, restored before any program is bound; it runs the rest
       in one call (groups of eight on a JIT's multi-vertex path). */
    PicajitGeometry *fresh = NULL;
    OK(picajit_geometry_create(&fresh));
    OK(picajit_geometry_set_state(fresh, &saved));
    PicajitGeometryState back;
    back.struct_size = sizeof back;
    OK(picajit_geometry_get_state(fresh, &back));
    CHECK(memcmp(&back, &saved, sizeof back) == 0);
    static Out3 got[STRIP_POINTS];
    static PicajitEmitState got_info[STRIP_POINTS];
    size_t ngot = before;
    run_strip(fresh, gb, ub, pts, STRIP_SAVE_AT, STRIP_POINTS, 0);
    take_all(fresh, got, got_info, &ngot, STRIP_POINTS);
    CHECK(ngot == nwant);
    CHECK(memcmp(got + before, want + before, (nwant - before) * sizeof *got) == 0);
    CHECK(memcmp(got_info + before, want_info + before, (nwant - before) * sizeof *got_info) ==
          0);
    CHECK(want_info[8].slot == 2 && want_info[8].primitive == 1 && want_info[8].winding == 1);
    /* Both units end in the same state, bit for bit. */
    PicajitGeometryState end_ref, end_fresh;
    end_ref.struct_size = end_fresh.struct_size = sizeof end_ref;
    OK(picajit_geometry_get_state(ref, &end_ref));
    OK(picajit_geometry_get_state(fresh, &end_fresh));
    CHECK(memcmp(&end_ref, &end_fresh, sizeof end_ref) == 0);

    /* The unit state alone is settable without a shader too. */
    PicajitUnitState st;
    OK(picajit_geometry_get_unit_state(ref, &st));
    OK(picajit_geometry_set_unit_state(fresh, NULL, &st));

    /* Errors: a bad emit state or struct size changes nothing. */
    PicajitGeometryState bad = saved;
    bad.emit.slot = 4;
    FAILS(picajit_geometry_set_state(fresh, &bad), PICAJIT_ERR_INVALID_ARGUMENT, "vertex id");
    bad = saved;
    bad.struct_size = 8;
    FAILS(picajit_geometry_set_state(fresh, &bad), PICAJIT_ERR_INVALID_ARGUMENT, "struct_size");
    FAILS(picajit_geometry_get_state(fresh, NULL), PICAJIT_ERR_NULL, "state is NULL");
    OK(picajit_geometry_get_state(fresh, &back));
    CHECK(memcmp(&back, &end_fresh, sizeof back) == 0);

    OK(picajit_geometry_destroy(ref));
    OK(picajit_geometry_destroy(fresh));
    OK(picajit_uniforms_destroy(ua));
    OK(picajit_uniforms_destroy(ub));
    OK(picajit_shader_destroy(ga));
    OK(picajit_shader_destroy(gb));
    OK(picajit_engine_destroy(ea));
    OK(picajit_engine_destroy(eb));
}

/* One program, both units: a shader created for the geometry unit runs in vertex batches
   (SETEMIT/EMIT do nothing there), and one created for the vertex unit on the geometry
   unit; the other unit's code is prepared once. */
static void test_one_program_two_units(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend);
    if (!engine) {
        return;
    }
    PicajitShader *gs = load(engine, GS_STRIP);
    PicajitUniforms *u = NULL;
    OK(picajit_uniforms_create(engine, &u));
    OK(picajit_shader_apply_constants(gs, u));
    Vertex pts[STRIP_POINTS], out[STRIP_POINTS];
    strip_points(pts);
    uint32_t prepared = 99;
    OK(picajit_shader_prepared_entries(gs, &prepared));
    CHECK(prepared == 0);
    for (int round = 0; round < 2; round++) {
        OK(picajit_shader_run_batch(gs, u, &FULL, pts, &FULL, out, STRIP_POINTS, NULL));
        /* Every vertex starts clean: o0 = v0, o1 = v0. */
        CHECK(row_is(out[9].r[0], 10, 18, -1, 4) && row_is(out[9].r[1], 10, 18, -1, 4));
        OK(picajit_shader_prepared_entries(gs, &prepared));
        CHECK(prepared == 1);
    }
    /* The same words created for the vertex unit, run on the geometry unit. */
    PicajitShaderInfo info;
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(gs, &info));
    CHECK(info.kind == PICAJIT_SHADER_GEOMETRY);
    PicajitGeometry *g = NULL;
    OK(picajit_geometry_create(&g));
    OK(picajit_geometry_run_points(g, gs, u, &FULL, pts, 3, NULL));
    size_t pending = 0;
    OK(picajit_geometry_pending(g, &pending));
    CHECK(pending == 3);
    OK(picajit_geometry_destroy(g));
    OK(picajit_uniforms_destroy(u));
    OK(picajit_shader_destroy(gs));
    OK(picajit_engine_destroy(engine));
}

/* The struct-size rule of the header, on every versioned struct: older published sizes are
   accepted and mean what they meant, sizes between versions are rejected, a larger size is
   accepted when the bytes this library does not know are zero (and zero-filled when the
   library writes), rejected otherwise. */
typedef struct {
    PicajitEngineConfig cfg;
    uint32_t future[4];
} NewerConfig;

typedef struct {
    PicajitShaderInfo info;
    uint32_t future[4];
} NewerInfo;

typedef struct {
    PicajitRunOptions opt;
    uint32_t future[4];
} NewerOptions;

static void test_struct_sizes(void) {
    PicajitEngine *engine = NULL;
    NewerConfig n;
    memset(&n, 0, sizeof n);
    OK(picajit_engine_config_init(&n.cfg));
    CHECK(n.cfg.threads == 1 && n.cfg.struct_size == sizeof(PicajitEngineConfig));
    const uint32_t accepted[] = {24, 32, (uint32_t)sizeof(PicajitEngineConfig), sizeof n};
    for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
        n.cfg.struct_size = accepted[i];
        OK(picajit_engine_create(&n.cfg, &engine));
        OK(picajit_engine_destroy(engine));
    }
    n.cfg.struct_size = 28;
    FAILS(picajit_engine_create(&n.cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT, "struct_size");
    n.cfg.struct_size = sizeof n;
    n.future[2] = 1;
    FAILS(picajit_engine_create(&n.cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT, "nonzero");
    n.cfg.struct_size = 0x7FFFFFFF;
    FAILS(picajit_engine_create(&n.cfg, &engine), PICAJIT_ERR_INVALID_ARGUMENT, "struct_size");

    engine = make_engine(PICAJIT_ENGINE_INTERP);
    PicajitShader *shader = NULL;
    OK(picajit_shader_create(engine, ADD_CODE, 3, NULL, 0, 0, PICAJIT_SHADER_VERTEX, &shader));
    NewerInfo ni;
    memset(&ni, 0xEE, sizeof ni);
    ni.info.struct_size = sizeof ni;
    OK(picajit_shader_get_info(shader, &ni.info));
    CHECK(ni.future[0] == 0 && ni.future[3] == 0 && ni.info.code_words == 3);
    ni.info.struct_size = (uint32_t)offsetof(PicajitShaderInfo, batch_path) + 4;
    FAILS(picajit_shader_get_info(shader, &ni.info), PICAJIT_ERR_INVALID_ARGUMENT,
          "struct_size");

    PicajitUniforms *u = NULL;
    OK(picajit_uniforms_create(engine, &u));
    Vertex v, o;
    memset(&v, 0, sizeof v);
    NewerOptions no;
    memset(&no, 0, sizeof no);
    OK(picajit_run_options_init(&no.opt));
    no.opt.struct_size = sizeof no;
    OK(picajit_shader_run_batch_ex(shader, u, &FULL, &v, &FULL, &o, 1, &no.opt, NULL));
    no.future[0] = 5;
    FAILS(picajit_shader_run_batch_ex(shader, u, &FULL, &v, &FULL, &o, 1, &no.opt, NULL),
          PICAJIT_ERR_INVALID_ARGUMENT, "nonzero");
    no.opt.struct_size = (uint32_t)offsetof(PicajitRunOptions, threads);
    OK(picajit_shader_run_batch_ex(shader, u, &FULL, &v, &FULL, &o, 1, &no.opt, NULL));
    OK(picajit_uniforms_destroy(u));
    OK(picajit_shader_destroy(shader));
    OK(picajit_engine_destroy(engine));
}

/* Asking for the info generates nothing: a program that qualifies for the eight-lane code
   says so until a run or picajit_shader_prepare_batches generates it. */
static void test_cheap_info(uint32_t backend) {
    PicajitEngine *engine = make_engine(backend);
    if (!engine) {
        return;
    }
    PicajitShader *shader = NULL;
    OK(picajit_shader_create(engine, ADD_CODE, 3, (const uint32_t[]){0x6c36fu}, 1, 0,
                             PICAJIT_SHADER_VERTEX, &shader));
    PicajitShaderInfo info;
    info.struct_size = sizeof info;
    for (int k = 0; k < 2; k++) {
        OK(picajit_shader_get_info(shader, &info));
        if (info.engine == PICAJIT_ENGINE_INTERP) {
            CHECK(info.batch_path == PICAJIT_BATCH_INTERPRETER);
        } else {
            CHECK(info.batch_path == PICAJIT_BATCH_NOT_GENERATED ||
                  info.batch_path == PICAJIT_BATCH_PER_VERTEX);
            CHECK(info.batch_lanes == (info.batch_path == PICAJIT_BATCH_NOT_GENERATED ? 0u : 1u));
        }
    }
    OK(picajit_shader_prepare_batches(shader));
    OK(picajit_shader_get_info(shader, &info));
    CHECK(info.batch_path != PICAJIT_BATCH_NOT_GENERATED);
    CHECK(info.batch_lanes == (info.batch_path == PICAJIT_BATCH_EIGHT_LANE ? 8u : 1u));
    FAILS(picajit_shader_prepare_batches(NULL), PICAJIT_ERR_NULL, "shader is NULL");
    OK(picajit_shader_destroy(shader));
    OK(picajit_engine_destroy(engine));
}

/* Threads are an engine setting, 1 by default; every value gives the same results. */
static void test_engine_threads(void) {
    enum { N = 9000 };
    static Vertex in[N], out[3][N];
    for (int k = 0; k < N; k++) {
        set_row(in[k].r[0], (float)(k % 100), 1, 2, 3);
    }
    const uint32_t threads[3] = {1, 0, 3};
    for (int t = 0; t < 3; t++) {
        PicajitEngineConfig cfg;
        OK(picajit_engine_config_init(&cfg));
        CHECK(cfg.threads == 1);
        cfg.threads = threads[t];
        PicajitEngine *engine = NULL;
        OK(picajit_engine_create(&cfg, &engine));
        PicajitShader *shader = NULL;
        OK(picajit_shader_create(engine, ADD_CODE, 3, (const uint32_t[]){0x6c36fu}, 1, 0,
                                 PICAJIT_SHADER_VERTEX, &shader));
        PicajitUniforms *u = NULL;
        OK(picajit_uniforms_create(engine, &u));
        OK(picajit_shader_run_batch(shader, u, &FULL, in, &FULL, out[t], N, NULL));
        OK(picajit_uniforms_destroy(u));
        OK(picajit_shader_destroy(shader));
        OK(picajit_engine_destroy(engine));
    }
    CHECK(memcmp(out[0], out[1], sizeof out[0]) == 0 && memcmp(out[0], out[2], sizeof out[0]) == 0);
}

/* One type for the SETEMIT fields: the callback's argument is the emit state. */
static void on_emit_state(void *user, const void *vertex, const PicajitEmitState *info) {
    (void)vertex;
    *(PicajitEmitState *)user = *info;
}

static void test_one_emit_type(void) {
    PicajitEmitFn f = on_emit_state;
    CHECK(f != NULL && sizeof(PicajitEmitState) == 8 && sizeof(PicajitEmitState) == 8);
}

int main(void) {
    const uint32_t backends[3] = {PICAJIT_ENGINE_INTERP, PICAJIT_ENGINE_JIT,
                                  PICAJIT_ENGINE_A64};
    const char *names[3] = {"interpreter", "auto", "a64"};
    /* The AArch64 JIT runs under unicorn on other hosts, far too slowly for valgrind. */
    int n = getenv("PICAJIT_UNDER_VALGRIND") ? 2 : 3;
    for (int i = 0; i < n; i++) {
        test_unit_state_batches(backends[i], names[i]);
        test_entry_per_run(backends[i]);
        test_geometry_state(backends[i]);
        test_max_rule(backends[i]);
        test_one_program_two_units(backends[i]);
        test_cheap_info(backends[i]);
        for (int j = 0; j < n; j++) {
            test_geometry_save_state(backends[i], backends[j]);
        }
    }
    test_whole_descriptor_table();
    test_struct_sizes();
    test_engine_threads();
    test_one_emit_type();
    printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
