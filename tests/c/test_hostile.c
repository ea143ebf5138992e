/*
 * Every C entry point called with extreme arguments (0, 1, SIZE_MAX, UINT32_MAX, UINT64_MAX,
 * counts whose byte products overflow, UINT32_MAX threads, PICAJIT_MAX_BATCH + 1 vertices
 * with empty layouts): each call must return the documented status, and within a time bound
 * (no call aborts the process, allocates for what it was told, or runs for minutes).
 * Driven by tests/hostile_calls.rs, natively and under valgrind memcheck.
 */
#include "check.h"

#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static double bound_s = 5.0; /* per call; 50x under valgrind */
static double slowest_s;
static const char *slowest_call = "";

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static PicajitStatus timed_status;
static double timed_start;
static void timed_end(const char *call, const char *file, int line) {
    double took = now_s() - timed_start;
    if (took > slowest_s) {
        slowest_s = took;
        slowest_call = call;
    }
    if (took > bound_s) {
        failed++;
        fprintf(stderr, "%s:%d: %s took %.2f s (bound %.1f s)\n", file, line, call, took, bound_s);
    }
}

/* The call returns `expected` (and, on failure, a message containing `needle`) in time. */
#define EXPECT(call, expected, needle)                                          \
    do {                                                                        \
        timed_start = now_s();                                                  \
        timed_status = (call);                                                  \
        timed_end(#call, __FILE__, __LINE__);                                   \
        check_status(timed_status, (expected), (needle), __FILE__, __LINE__, #call); \
    } while (0)

/* Any status but a caught panic, in time (for calls whose error depends on the host). */
#define RETURNS(call)                                                           \
    do {                                                                        \
        timed_start = now_s();                                                  \
        timed_status = (call);                                                  \
        timed_end(#call, __FILE__, __LINE__);                                   \
        check(timed_status != PICAJIT_ERR_PANIC, __FILE__, __LINE__, #call);    \
    } while (0)

#define NUL_ PICAJIT_ERR_NULL
#define INV PICAJIT_ERR_INVALID_ARGUMENT

static const uint32_t END = 0x88000000u; /* END */
static const uint32_t MOV_O0_V0 = 0x4C000000u; /* mov o0, v0 (descriptor 0) */

static PicajitVertexLayout empty_layout(void) {
    PicajitVertexLayout l = {PICAJIT_FORMAT_F32, 0, 0, 0};
    return l;
}

static void engines(void) {
    PicajitEngineConfig cfg;
    PicajitEngine *e = NULL;
    EXPECT(picajit_engine_config_init(NULL), NUL_, "config");
    OK(picajit_engine_config_init(&cfg));
    cfg.engine = UINT32_MAX;
    EXPECT(picajit_engine_create(&cfg, &e), INV, "engine");
    OK(picajit_engine_config_init(&cfg));
    cfg.float_mode = UINT32_MAX;
    EXPECT(picajit_engine_create(&cfg, &e), INV, "float");
    OK(picajit_engine_config_init(&cfg));
    cfg.rounding = UINT32_MAX;
    EXPECT(picajit_engine_create(&cfg, &e), INV, "rounding");
    OK(picajit_engine_config_init(&cfg));
    cfg.max_rule = UINT32_MAX;
    EXPECT(picajit_engine_create(&cfg, &e), INV, "max");
    OK(picajit_engine_config_init(&cfg));
    cfg.struct_size = 0;
    EXPECT(picajit_engine_create(&cfg, &e), INV, "");
    cfg.struct_size = 1;
    EXPECT(picajit_engine_create(&cfg, &e), INV, "");
    OK(picajit_engine_config_init(&cfg));
    cfg.budget = UINT64_MAX;
    OK(picajit_engine_create(&cfg, &e));
    uint32_t kind;
    OK(picajit_engine_kind(e, &kind));
    EXPECT(picajit_engine_kind(e, NULL), NUL_, "kind");
    OK(picajit_engine_set_cache_budget(e, SIZE_MAX));
    OK(picajit_engine_set_cache_budget(e, 0));
    OK(picajit_engine_set_cache_budget(e, 1));
    PicajitCacheStats cs;
    OK(picajit_engine_get_cache_stats(e, &cs));
    CHECK(cs.budget == 1);
    EXPECT(picajit_engine_get_cache_stats(e, NULL), NUL_, "stats");
    EXPECT(picajit_engine_set_cache_budget(NULL, 0), NUL_, "engine");
    size_t n;
    OK(picajit_engine_cache_size(e, &n));
    OK(picajit_engine_clear_cache(e));
    EXPECT(picajit_engine_clear_cache(NULL), NUL_, "engine");
    OK(picajit_engine_destroy(e));
    EXPECT(picajit_engine_destroy(e), PICAJIT_ERR_INVALID_HANDLE, "");
    OK(picajit_engine_destroy(NULL));
}

static void shaders(PicajitEngine *e) {
    PicajitShader *s = NULL;
    uint32_t code[2] = {MOV_O0_V0, END};
    uint32_t desc[1] = {0xF};
    /* Sizes: any count past the limits is PICAJIT_ERR_PROGRAM, SIZE_MAX included. */
    EXPECT(picajit_shader_create(e, code, SIZE_MAX, desc, 1, 0, 0, &s), PICAJIT_ERR_PROGRAM, "code words");
    EXPECT(picajit_shader_create(e, code, SIZE_MAX / 4 + 1, desc, 1, 0, 0, &s), PICAJIT_ERR_PROGRAM, "code words");
    EXPECT(picajit_shader_create(e, code, 4097, desc, 1, 0, 0, &s), PICAJIT_ERR_PROGRAM, "code words");
    EXPECT(picajit_shader_create(e, code, 2, desc, SIZE_MAX, 0, 0, &s), PICAJIT_ERR_PROGRAM, "descriptors");
    EXPECT(picajit_shader_create(e, code, 2, desc, 4097, 0, 0, &s), PICAJIT_ERR_PROGRAM, "descriptors");
    EXPECT(picajit_shader_create(e, code, 0, desc, 1, 0, 0, &s), PICAJIT_ERR_PROGRAM, "");
    EXPECT(picajit_shader_create(e, code, 2, desc, 1, UINT32_MAX, 0, &s), PICAJIT_ERR_PROGRAM, "");
    EXPECT(picajit_shader_create(e, code, 2, desc, 1, 2, 0, &s), PICAJIT_ERR_PROGRAM, "");
    EXPECT(picajit_shader_create(e, code, 2, desc, 1, 0, UINT32_MAX, &s), INV, "kind");
    EXPECT(picajit_shader_create(e, NULL, SIZE_MAX, desc, 1, 0, 0, &s), NUL_, "code");
    EXPECT(picajit_shader_create(e, code, 2, NULL, 1, 0, 0, &s), NUL_, "opdescs");
    EXPECT(picajit_shader_create(e, code, 2, desc, 1, 0, 0, NULL), NUL_, "out");
    /* SHBIN sizes: past PICAJIT_MAX_SHBIN_BYTES is PICAJIT_ERR_SHBIN, SIZE_MAX included. */
    uint8_t junk[16] = {0};
    uint32_t dvles;
    EXPECT(picajit_shader_load_shbin(e, junk, SIZE_MAX, 0, &s), PICAJIT_ERR_SHBIN, "");
    EXPECT(picajit_shader_load_shbin(e, junk, (size_t)PICAJIT_MAX_SHBIN_BYTES + 1, 0, &s), PICAJIT_ERR_SHBIN, "");
    EXPECT(picajit_shader_load_shbin(e, junk, 0, 0, &s), PICAJIT_ERR_SHBIN, "");
    EXPECT(picajit_shader_load_shbin(e, junk, 1, UINT32_MAX, &s), PICAJIT_ERR_SHBIN, "");
    EXPECT(picajit_shbin_dvle_count(junk, SIZE_MAX, &dvles), PICAJIT_ERR_SHBIN, "");
    EXPECT(picajit_shbin_dvle_count(junk, sizeof junk, &dvles), PICAJIT_ERR_SHBIN, "");
    EXPECT(picajit_shbin_dvle_count(NULL, SIZE_MAX, &dvles), NUL_, "data");
    EXPECT(picajit_shader_load_source(e, ".proc main\n end\n.end\n", UINT32_MAX, &s), PICAJIT_ERR_SHBIN, "");
    EXPECT(picajit_shader_load_source(e, "", 0, &s), PICAJIT_ERR_ASSEMBLY, "");
    EXPECT(picajit_shader_load_source(e, NULL, 0, &s), NUL_, "source");
    /* A full-size program: 4096 words, 4096 descriptors, last entry point. */
    uint32_t *big = calloc(4096, sizeof *big);
    uint32_t *bigdesc = calloc(4096, sizeof *bigdesc);
    for (int k = 0; k < 4096; k++) {
        big[k] = k % 2 ? END : MOV_O0_V0;
    }
    OK(picajit_shader_create(e, big, 4096, bigdesc, 4096, 4095, 0, &s));
    PicajitShaderInfo info;
    memset(&info, 0, sizeof info);
    info.struct_size = sizeof info;
    OK(picajit_shader_get_info(s, &info));
    const char *reason;
    OK(picajit_shader_fallback_reason(s, &reason));
    uint32_t prepared;
    OK(picajit_shader_prepared_entries(s, &prepared));
    EXPECT(picajit_shader_get_info(s, NULL), NUL_, "info");
    OK(picajit_shader_destroy(s));
    EXPECT(picajit_shader_destroy(s), PICAJIT_ERR_INVALID_HANDLE, "");
    EXPECT(picajit_shader_get_info(s, &info), PICAJIT_ERR_INVALID_HANDLE, "");
    free(big);
    free(bigdesc);
}

static void uniforms(PicajitEngine *e) {
    PicajitUniforms *u = NULL;
    OK(picajit_uniforms_create(e, &u));
    float row[4] = {1, 2, 3, 4};
    uint32_t bits[4] = {0};
    float value;
    uint8_t ivec[4] = {0};
    EXPECT(picajit_uniforms_set_float(u, 0, UINT32_MAX, row), INV, "");
    EXPECT(picajit_uniforms_set_float(u, UINT32_MAX, 1, row), INV, "");
    EXPECT(picajit_uniforms_set_float(u, UINT32_MAX, UINT32_MAX, row), INV, "");
    EXPECT(picajit_uniforms_set_float(u, 96, 1, row), INV, "");
    OK(picajit_uniforms_set_float(u, 95, 1, row));
    OK(picajit_uniforms_set_float(u, 0, 0, NULL));
    EXPECT(picajit_uniforms_set_float_f24(u, 1, UINT32_MAX, bits), INV, "");
    EXPECT(picajit_uniforms_get_float(u, UINT32_MAX, &value), INV, "");
    EXPECT(picajit_uniforms_set_int(u, UINT32_MAX, ivec), INV, "");
    EXPECT(picajit_uniforms_set_bool(u, UINT32_MAX, true), INV, "");
    OK(picajit_uniforms_set_bools(u, 0xFFFF));
    uint16_t b;
    OK(picajit_uniforms_get_bools(u, &b));
    OK(picajit_uniforms_destroy(u));
    EXPECT(picajit_uniforms_create(NULL, &u), NUL_, "engine");
}

static void batches(PicajitEngine *e) {
    uint32_t code[2] = {MOV_O0_V0, END};
    uint32_t desc[1] = {0xF};
    PicajitShader *s = NULL;
    PicajitUniforms *u = NULL;
    OK(picajit_shader_create(e, code, 2, desc, 1, 0, PICAJIT_SHADER_VERTEX, &s));
    OK(picajit_uniforms_create(e, &u));
    PicajitVertexLayout none = empty_layout();
    PicajitVertexLayout one = {PICAJIT_FORMAT_F32, 0, 1, 0};
    PicajitVertexLayout wide = {PICAJIT_FORMAT_F32, 0, 1, SIZE_MAX};
    float buf[8][4];
    float out[8][4];
    PicajitRunStats st;
    PicajitRunOptions opt;
    OK(picajit_run_options_init(&opt));
    /* Empty layouts span no bytes: only PICAJIT_MAX_BATCH bounds the count. */
    EXPECT(picajit_shader_run_batch(s, u, &none, NULL, &none, NULL, SIZE_MAX, &st), INV, "PICAJIT_MAX_BATCH");
    EXPECT(picajit_shader_run_batch(s, u, &none, buf, &none, out, (size_t)PICAJIT_MAX_BATCH + 1, &st), INV, "PICAJIT_MAX_BATCH");
    opt.threads = UINT32_MAX;
    EXPECT(picajit_shader_run_batch_ex(s, u, &none, buf, &none, out, (size_t)1 << 41, &opt, &st), INV, "PICAJIT_MAX_BATCH");
    EXPECT(picajit_shader_run_batch_ex(s, u, &none, buf, &none, out, SIZE_MAX, &opt, &st), INV, "PICAJIT_MAX_BATCH");
    /* UINT32_MAX threads on a real batch: capped by the pool, same result. */
    memset(buf, 0, sizeof buf);
    buf[3][0] = 7;
    OK(picajit_shader_run_batch_ex(s, u, &one, buf, &one, out, 8, &opt, &st));
    CHECK(st.vertices == 8 && out[3][0] == 7);
    /* Empty layouts below the bound run (split across the pool). */
    OK(picajit_shader_run_batch_ex(s, u, &none, buf, &none, out, 100000, &opt, &st));
    CHECK(st.vertices == 100000);
    /* Byte products that overflow. */
    EXPECT(picajit_shader_run_batch(s, u, &one, buf, &one, out, SIZE_MAX / 16 + 2, &st), INV, "");
    EXPECT(picajit_shader_run_batch(s, u, &wide, buf, &one, out, 2, &st), INV, "overflow");
    EXPECT(picajit_shader_run_batch(s, u, &one, buf, &wide, out, 3, &st), INV, "overflow");
    OK(picajit_shader_run_batch(s, u, &wide, buf, &wide, out, 1, &st));
    RETURNS(picajit_shader_run_batch(s, u, &one, NULL, &one, NULL, 0, &st));
    PicajitVertexLayout bad = {UINT32_MAX, UINT32_MAX, UINT32_MAX, SIZE_MAX};
    EXPECT(picajit_shader_run_batch(s, u, &bad, buf, &one, out, 1, &st), INV, "");
    bad.format = 0;
    EXPECT(picajit_shader_run_batch(s, u, &bad, buf, &one, out, 1, &st), INV, "flag");
    bad.flags = 0;
    EXPECT(picajit_shader_run_batch(s, u, &bad, buf, &one, out, 1, &st), INV, "mask");
    opt.entry = UINT32_MAX - 1;
    EXPECT(picajit_shader_run_batch_ex(s, u, &one, buf, &one, out, 1, &opt, &st), INV, "");
    OK(picajit_run_options_init(&opt));
    opt.struct_size = UINT32_MAX;
    RETURNS(picajit_shader_run_batch_ex(s, u, &one, buf, &one, out, 1, &opt, &st));
    opt.struct_size = 0;
    EXPECT(picajit_shader_run_batch_ex(s, u, &one, buf, &one, out, 1, &opt, &st), INV, "");
    OK(picajit_shader_apply_constants(s, u));
    OK(picajit_shader_destroy(s));
    OK(picajit_uniforms_destroy(u));
}

static void on_emit(void *user, const void *vertex, const PicajitEmitState *info) {
    (void)vertex;
    (void)info;
    ++*(size_t *)user;
}

static void geometry(PicajitEngine *e) {
    /* emit; end (a point-mode geometry shader emitting once per invocation) */
    PicajitShader *s = NULL;
    PicajitUniforms *u = NULL;
    PicajitGeometry *g = NULL;
    OK(picajit_shader_load_source(e, ".gsh point c0\n.proc main\n setemit 0\n mov o0, v0\n emit\n end\n.end\n", 0, &s));
    OK(picajit_uniforms_create(e, &u));
    OK(picajit_geometry_create(&g));
    PicajitVertexLayout none = empty_layout();
    PicajitVertexLayout one = {PICAJIT_FORMAT_F32, 0, 1, 0};
    PicajitRunStats st;
    float v[4] = {1, 2, 3, 4};
    EXPECT(picajit_geometry_set_mode(g, UINT32_MAX, 0, 0), INV, "");
    EXPECT(picajit_geometry_set_mode(g, 1, UINT32_MAX, 0), INV, "");
    EXPECT(picajit_geometry_set_mode(g, 1, 0, UINT32_MAX), INV, "");
    EXPECT(picajit_geometry_set_mode(g, 2, 0, UINT32_MAX), INV, "");
    OK(picajit_geometry_set_mode(g, 0, 0, 0));
    /* An entry point outside the code fails the run, not the setting. */
    OK(picajit_geometry_set_entry(g, UINT32_MAX - 1));
    EXPECT(picajit_geometry_run_point(g, s, u, &one, v, &st), INV, "");
    OK(picajit_geometry_set_entry(g, PICAJIT_ENTRY_DEFAULT));
    EXPECT(picajit_geometry_run_points(g, s, u, &none, NULL, SIZE_MAX, &st), INV, "PICAJIT_MAX_BATCH");
    EXPECT(picajit_geometry_run_points(g, s, u, &none, v, (size_t)PICAJIT_MAX_BATCH + 1, &st), INV, "PICAJIT_MAX_BATCH");
    EXPECT(picajit_geometry_run_points(g, s, u, &one, v, SIZE_MAX / 16 + 2, &st), INV, "");
    OK(picajit_geometry_run_points(g, s, u, &one, v, 1, &st));
    OK(picajit_geometry_run_point(g, s, u, &one, v, &st));
    size_t pending = 0, taken = 0;
    OK(picajit_geometry_pending(g, &pending));
    CHECK(pending == 2);
    float outv[2][4];
    PicajitEmitState infos[2];
    EXPECT(picajit_geometry_take(g, &one, outv, infos, SIZE_MAX, &taken), INV, "");
    OK(picajit_geometry_take(g, &none, outv, infos, 2, &taken));
    CHECK(taken == 2);
    size_t calls = 0;
    OK(picajit_geometry_set_emit_callback(g, &one, on_emit, &calls));
    OK(picajit_geometry_run_points(g, s, u, &one, v, 1, &st));
    CHECK(calls == 1);
    OK(picajit_geometry_set_emit_callback(g, NULL, NULL, NULL));
    EXPECT(picajit_geometry_run_uniforms(g, s, u, 0, v, UINT32_MAX, UINT32_MAX, &st), INV, "");
    OK(picajit_geometry_set_mode(g, 1, 0, 0));
    EXPECT(picajit_geometry_run_uniforms(g, s, u, 0, v, UINT32_MAX, 1, &st), INV, "");
    EXPECT(picajit_geometry_run_uniforms(g, s, u, UINT32_MAX, v, 1, 1, &st), INV, "");
    PicajitUnitState us;
    PicajitEmitState es;
    OK(picajit_geometry_get_unit_state(g, &us));
    us.al = UINT32_MAX;
    us.a0[0] = INT32_MIN;
    us.a0[1] = INT32_MAX;
    OK(picajit_geometry_set_unit_state(g, s, &us));
    OK(picajit_geometry_get_emit_state(g, &es));
    es.slot = UINT32_MAX;
    EXPECT(picajit_geometry_set_emit_state(g, &es), INV, "");
    OK(picajit_geometry_reset(g));
    OK(picajit_geometry_destroy(g));
    OK(picajit_shader_destroy(s));
    OK(picajit_uniforms_destroy(u));
}

static void other_isas(void) {
    PicajitTheiaProgram *tp = NULL;
    PicajitUscProgram *up = NULL;
    PicajitUscState *us = NULL;
    PicajitTheiaScene *scene = NULL;
    EXPECT(picajit_theia_program_create("", 0, UINT32_MAX, 0, &tp), INV, "");
    EXPECT(picajit_theia_program_create("", 0, 0, UINT32_MAX, &tp), INV, "");
    EXPECT(picajit_theia_program_create(NULL, 0, 0, 0, &tp), NUL_, "");
    RETURNS(picajit_theia_program_create("", UINT32_MAX, 0, 0, &tp));
    if (timed_status == PICAJIT_OK) {
        uint32_t len;
        OK(picajit_theia_program_length(tp, &len));
        PicajitTheiaState ts;
        memset(&ts, 0, sizeof ts);
        PicajitTheiaResult tr;
        RETURNS(picajit_theia_run(tp, &ts, UINT32_MAX, UINT64_MAX, NULL, &tr));
        OK(picajit_theia_program_destroy(tp));
    }
    EXPECT(picajit_theia_scene_create("", "", "", "", NULL, &scene), PICAJIT_ERR_PROGRAM, "");
    EXPECT(picajit_theia_scene_load("/nonexistent", NULL, &scene), PICAJIT_ERR_PROGRAM, "");
    EXPECT(picajit_theia_render(NULL, 0, UINT32_MAX, UINT32_MAX, NULL, SIZE_MAX, NULL), NUL_, "");
    EXPECT(picajit_usc_state_create(UINT32_MAX, &us), INV, "");
    EXPECT(picajit_usc_state_create(0, &us), INV, "");
    OK(picajit_usc_state_create(1, &us));
    uint32_t val;
    EXPECT(picajit_usc_state_set(us, UINT32_MAX, 0, 0, 1), INV, "");
    EXPECT(picajit_usc_state_set(us, 0, UINT32_MAX, 0, 1), INV, "");
    EXPECT(picajit_usc_state_set(us, 0, 0, UINT32_MAX, 1), INV, "");
    EXPECT(picajit_usc_state_get(us, 0, UINT32_MAX, UINT32_MAX, &val), INV, "");
    EXPECT(picajit_usc_state_set_p0(us, UINT32_MAX, 1), INV, "");
    EXPECT(picajit_usc_state_get_p0(us, UINT32_MAX, &val), INV, "");
    PicajitUscOptions uo;
    OK(picajit_usc_options_init(&uo));
    uo.fused_fmad = UINT32_MAX;
    uo.cndlt_literal = UINT32_MAX;
    RETURNS(picajit_usc_program_create("", &uo, 0, &up));
    if (timed_status == PICAJIT_OK) {
        OK(picajit_usc_program_destroy(up));
    }
    EXPECT(picajit_usc_program_create("", NULL, UINT32_MAX, &up), INV, "");
    RETURNS(picajit_usc_program_create("", NULL, 0, &up));
    if (timed_status == PICAJIT_OK) {
        PicajitUscRunInfo ri;
        RETURNS(picajit_usc_run(up, us, UINT64_MAX, &ri));
        OK(picajit_usc_program_destroy(up));
    }
    OK(picajit_usc_state_destroy(us));
    CHECK(strlen(picajit_status_name(INT32_MIN)) > 0);
    CHECK(strlen(picajit_status_name(INT32_MAX)) > 0);
    CHECK(picajit_version() != NULL);
}

#ifdef SIGALRM /* POSIX; the Windows build (scripts/test-windows.sh) has no alarm() */
static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "test_hostile: time limit reached (a call did not return)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}
#endif

int main(void) {
    if (getenv("PICAJIT_UNDER_VALGRIND")) {
        bound_s *= 50;
    }
#ifdef SIGALRM
    signal(SIGALRM, on_alarm);
    alarm(getenv("PICAJIT_UNDER_VALGRIND") ? 1200 : 120);
#endif
    engines();
    PicajitEngineConfig cfg;
    PicajitEngine *e = NULL;
    OK(picajit_engine_config_init(&cfg));
    OK(picajit_engine_create(&cfg, &e));
    shaders(e);
    uniforms(e);
    batches(e);
    geometry(e);
    picajit_engine_destroy(e);
    /* The interpreter engine takes the same arguments the same way. */
    cfg.engine = PICAJIT_ENGINE_INTERP;
    OK(picajit_engine_create(&cfg, &e));
    shaders(e);
    batches(e);
    geometry(e);
    picajit_engine_destroy(e);
    other_isas();
    printf("slowest call: %.3f s (%s)\n", slowest_s, slowest_call);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
