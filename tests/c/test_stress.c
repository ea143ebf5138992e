/*
 * Multi-threaded stress of the C API, checked against a single-threaded reference: worker
 * threads share one engine (a small code-cache budget, so entries are evicted while others
 * run) and each has its own engine too; they run batches of 1 to 9,000 vertices that split
 * across the worker pool (threads 0, 1, 3, UINT32_MAX), other entry points, geometry
 * shaders with emit callbacks, create and destroy shaders on the shared engine while others
 * run, and read the cache figures. Every result is compared bit for bit with what the
 * reference interpreter computed on one thread before the workers started.
 *
 * Arguments: vertex SHBINs..., then "--gs" and a point-mode geometry SHBIN. Environment:
 * PICAJIT_STRESS_THREADS (default 4), PICAJIT_STRESS_OPS per thread (default 200).
 * Prints the operation counts and "N passed, M failed"; exits non-zero on any failure.
 * Run by tests/c_reliability.rs and, under ThreadSanitizer, by scripts/tsan.sh.
 */
#include "check.h"

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

enum { MAX_PROGRAMS = 8, MAX_N = 9000, GS_POINTS = 300, MAX_EMITS = GS_POINTS * 8 };

typedef struct {
    float r[16][4];
} Vertex;

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

static const PicajitVertexLayout FULL = {PICAJIT_FORMAT_F32, 0, 0xFFFF, 0};
static const PicajitVertexLayout TWO = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x3, 0};

static int nprog;
static Blob programs[MAX_PROGRAMS];
static Blob gs_blob;
static Vertex inputs[MAX_N];
static Vertex *reference[MAX_PROGRAMS];     /* per program, MAX_N outputs */
static Vertex *reference_alt[MAX_PROGRAMS]; /* the same from entry point 1, if it runs */
static int alt_ok[MAX_PROGRAMS];
static float gs_points[GS_POINTS][2][4];
static float gs_reference[MAX_EMITS][2][4];
static size_t gs_reference_count;

/* Shared objects. */
static PicajitEngine *shared_engine;
static PicajitShader *shared_shaders[MAX_PROGRAMS];
static PicajitUniforms *shared_uniforms;

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long ops_batch, ops_entry, ops_own_engine, ops_geometry, ops_churn, ops_query,
    vertices_checked, mismatches;

/* check.h's counters are plain ints: checks on worker threads take this lock. */
#define TOK(call)                                   \
    do {                                            \
        PicajitStatus st_ = (call);                 \
        pthread_mutex_lock(&count_lock);            \
        OK(st_);                                    \
        pthread_mutex_unlock(&count_lock);          \
    } while (0)

static PicajitEngine *make_engine(uint32_t kind) {
    PicajitEngineConfig cfg;
    PicajitEngine *e = NULL;
    TOK(picajit_engine_config_init(&cfg));
    cfg.engine = kind;
    TOK(picajit_engine_create(&cfg, &e));
    return e;
}

/* Small integers and halves: exact in f24 and f32, so every engine agrees bit for bit. */
static void fill_uniforms(PicajitUniforms *u) {
    float rows[96][4];
    for (int k = 0; k < 96; k++) {
        for (int c = 0; c < 4; c++) {
            rows[k][c] = (float)((k * 3 + c * 5) % 7) * 0.5f - 1.0f;
        }
    }
    TOK(picajit_uniforms_set_float(u, 0, 96, &rows[0][0]));
    uint8_t iv[4] = {3, 0, 1, 0};
    for (uint32_t k = 0; k < 4; k++) {
        TOK(picajit_uniforms_set_int(u, k, iv));
    }
    TOK(picajit_uniforms_set_bools(u, 0x0055));
}

static PicajitUniforms *make_uniforms(PicajitEngine *e) {
    PicajitUniforms *u = NULL;
    TOK(picajit_uniforms_create(e, &u));
    fill_uniforms(u);
    return u;
}

/* Run `n` vertices from `first` on `s` with `threads` and `entry`; 0 on success. */
static int run(PicajitShader *s, PicajitUniforms *u, size_t first, size_t n, uint32_t threads,
               uint32_t entry, Vertex *out) {
    PicajitRunOptions opt;
    PicajitRunStats st;
    if (picajit_run_options_init(&opt) != PICAJIT_OK) {
        return -1;
    }
    opt.threads = threads;
    opt.entry = entry;
    PicajitStatus r = picajit_shader_run_batch_ex(s, u, &FULL, inputs + first, &FULL, out, n, &opt, &st);
    return r != PICAJIT_OK || st.vertices != n;
}

static void count(unsigned long *op, size_t n, int bad) {
    pthread_mutex_lock(&count_lock);
    if (bad) {
        fprintf(stderr, "mismatch in %s (%zu vertices): %s\n",
                op == &ops_batch ? "shared batch" : op == &ops_entry ? "other entry"
                : op == &ops_own_engine ? "own engine" : op == &ops_geometry ? "geometry"
                : op == &ops_churn ? "churn" : "query", n, picajit_last_error());
    }
    ++*op;
    vertices_checked += n;
    mismatches += bad != 0;
    CHECK(!bad);
    pthread_mutex_unlock(&count_lock);
}

typedef struct {
    float v[MAX_EMITS][2][4];
    size_t n;
} Emits;

static void collect(void *user, const void *vertex, const PicajitEmitState *info) {
    Emits *e = user;
    (void)info;
    if (e->n < MAX_EMITS) {
        memcpy(e->v[e->n], vertex, sizeof e->v[0]);
    }
    e->n++;
}

/* The geometry program over every point, on `engine`, into `e`; 0 on success. */
static int run_geometry(PicajitEngine *engine, PicajitShader *gs, Emits *e) {
    PicajitShader *own = NULL;
    if (!gs) {
        if (picajit_shader_load_shbin(engine, gs_blob.data, gs_blob.size, 0, &own) != PICAJIT_OK) {
            return -1;
        }
        gs = own;
    }
    PicajitUniforms *u = make_uniforms(engine);
    PicajitGeometry *g = NULL;
    int bad = picajit_geometry_create(&g) != PICAJIT_OK;
    e->n = 0;
    bad |= picajit_geometry_set_emit_callback(g, &TWO, collect, e) != PICAJIT_OK;
    /* Half in one call, then the rest point by point: state carries over either way. */
    PicajitRunStats st;
    bad |= picajit_geometry_run_points(g, gs, u, &TWO, gs_points, GS_POINTS / 2, &st) != PICAJIT_OK;
    for (size_t k = GS_POINTS / 2; k < GS_POINTS; k++) {
        bad |= picajit_geometry_run_point(g, gs, u, &TWO, gs_points[k], &st) != PICAJIT_OK;
    }
    picajit_geometry_destroy(g);
    picajit_uniforms_destroy(u);
    picajit_shader_destroy(own);
    return bad;
}

static void reference_run(void) {
    PicajitEngine *interp = make_engine(PICAJIT_ENGINE_INTERP);
    PicajitUniforms *u = make_uniforms(interp);
    for (int p = 0; p < nprog; p++) {
        PicajitShader *s = NULL;
        OK(picajit_shader_load_shbin(interp, programs[p].data, programs[p].size, 0, &s));
        reference[p] = calloc(MAX_N, sizeof(Vertex));
        reference_alt[p] = calloc(MAX_N, sizeof(Vertex));
        CHECK(run(s, u, 0, MAX_N, 1, PICAJIT_ENTRY_DEFAULT, reference[p]) == 0);
        alt_ok[p] = run(s, u, 0, MAX_N, 1, 1, reference_alt[p]) == 0;
        picajit_shader_destroy(s);
    }
    static Emits e;
    CHECK(run_geometry(interp, NULL, &e) == 0);
    CHECK(e.n > 0 && e.n <= MAX_EMITS);
    gs_reference_count = e.n;
    memcpy(gs_reference, e.v, sizeof gs_reference);
    picajit_uniforms_destroy(u);
    picajit_engine_destroy(interp);
}

static int ops_per_thread = 200;
static const size_t SIZES[] = {1, 7, 8, 64, 513, 1500, 9000};
static const uint32_t THREADS[] = {0, 1, 3, UINT32_MAX};

static void *worker(void *arg) {
    unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u + 1;
    PicajitEngine *own = make_engine(PICAJIT_ENGINE_JIT);
    PicajitUniforms *own_u = make_uniforms(own);
    Vertex *out = malloc(MAX_N * sizeof(Vertex));
    Emits *emits = malloc(sizeof(Emits));
    for (int i = 0; i < ops_per_thread; i++) {
        seed = seed * 1103515245u + 12345u;
        unsigned r = seed >> 8;
        int p = (int)(r % (unsigned)nprog);
        size_t n = SIZES[(r / 8) % (sizeof SIZES / sizeof SIZES[0])];
        size_t first = (r / 64) % (MAX_N - n + 1);
        uint32_t threads = THREADS[(r / 4096) % 4];
        switch (r / 32768 % 8) {
        case 0:
        case 1: { /* a batch of a shared shader on the shared engine */
            int bad = run(shared_shaders[p], shared_uniforms, first, n, threads, PICAJIT_ENTRY_DEFAULT, out);
            bad |= memcmp(out, reference[p] + first, n * sizeof(Vertex)) != 0;
            count(&ops_batch, n, bad);
            break;
        }
        case 2: { /* another entry point of a shared shader */
            if (!alt_ok[p]) {
                break;
            }
            int bad = run(shared_shaders[p], shared_uniforms, first, n, threads, 1, out);
            bad |= memcmp(out, reference_alt[p] + first, n * sizeof(Vertex)) != 0;
            count(&ops_entry, n, bad);
            break;
        }
        case 3: { /* the thread's own engine: create, run, destroy */
            PicajitShader *s = NULL;
            int bad = picajit_shader_load_shbin(own, programs[p].data, programs[p].size, 0, &s) != PICAJIT_OK;
            if (!bad) {
                bad |= run(s, own_u, first, n, threads, PICAJIT_ENTRY_DEFAULT, out);
                bad |= memcmp(out, reference[p] + first, n * sizeof(Vertex)) != 0;
            }
            picajit_shader_destroy(s);
            count(&ops_own_engine, n, bad);
            break;
        }
        case 4: { /* geometry with callbacks, on the shared or the own engine */
            int bad = run_geometry((r & 1) ? shared_engine : own, NULL, emits);
            bad |= emits->n != gs_reference_count;
            bad |= memcmp(emits->v, gs_reference, gs_reference_count * sizeof emits->v[0]) != 0;
            count(&ops_geometry, GS_POINTS, bad);
            break;
        }
        case 5:
        case 6: { /* churn the shared engine's cache: create, run, destroy while others run */
            PicajitShader *s = NULL;
            int bad = picajit_shader_load_shbin(shared_engine, programs[p].data, programs[p].size, 0, &s) != PICAJIT_OK;
            if (!bad) {
                size_t m = n < 64 ? n : 64;
                bad |= run(s, shared_uniforms, first, m, 1, PICAJIT_ENTRY_DEFAULT, out);
                bad |= memcmp(out, reference[p] + first, m * sizeof(Vertex)) != 0;
            }
            picajit_shader_destroy(s);
            count(&ops_churn, n < 64 ? n : 64, bad);
            break;
        }
        default: { /* the figures, and now and then a budget change */
            PicajitCacheStats cs;
            size_t entries;
            int bad = picajit_engine_get_cache_stats(shared_engine, &cs) != PICAJIT_OK;
            bad |= picajit_engine_cache_size(shared_engine, &entries) != PICAJIT_OK;
            if (r % 5 == 0) {
                bad |= picajit_engine_set_cache_budget(shared_engine, (r % 3) * 32768) != PICAJIT_OK;
            }
            PicajitShaderInfo info;
            info.struct_size = sizeof info;
            bad |= picajit_shader_get_info(shared_shaders[p], &info) != PICAJIT_OK;
            count(&ops_query, 0, bad);
            break;
        }
        }
    }
    free(out);
    free(emits);
    picajit_uniforms_destroy(own_u);
    picajit_engine_destroy(own);
    return NULL;
}

#ifdef SIGALRM /* POSIX; the Windows build (scripts/test-windows.sh) has no alarm() */
static void on_alarm(int sig) {
    (void)sig;
    static const char msg[] = "test_stress: time limit reached (deadlock?)\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(3);
}
#endif

int main(int argc, char **argv) {
#ifdef SIGALRM
    signal(SIGALRM, on_alarm);
    alarm(900);
#endif
    for (int k = 1; k < argc; k++) {
        if (strcmp(argv[k], "--gs") == 0 && k + 1 < argc) {
            gs_blob = read_file(argv[++k]);
        } else if (nprog < MAX_PROGRAMS) {
            programs[nprog++] = read_file(argv[k]);
        }
    }
    if (nprog == 0 || !gs_blob.data) {
        fprintf(stderr, "usage: test_stress VERTEX.shbin... --gs GEOMETRY.shbin\n");
        return 2;
    }
    int nthreads = getenv("PICAJIT_STRESS_THREADS") ? atoi(getenv("PICAJIT_STRESS_THREADS")) : 4;
    if (getenv("PICAJIT_STRESS_OPS")) {
        ops_per_thread = atoi(getenv("PICAJIT_STRESS_OPS"));
    }
    if (nthreads < 1 || nthreads > 64) {
        nthreads = 4;
    }
    for (int k = 0; k < MAX_N; k++) {
        for (int reg = 0; reg < 16; reg++) {
            for (int c = 0; c < 4; c++) {
                inputs[k].r[reg][c] = (float)((k * 7 + reg * 3 + c) % 13) * 0.25f - 1.0f;
            }
        }
        inputs[k].r[0][3] = 1.0f;
    }
    for (int k = 0; k < GS_POINTS; k++) {
        for (int c = 0; c < 4; c++) {
            gs_points[k][0][c] = (float)((k + c) % 9) - 4.0f;
            gs_points[k][1][c] = (float)((k * 3 + c) % 5) * 0.25f;
        }
    }
    reference_run();

    shared_engine = make_engine(PICAJIT_ENGINE_JIT);
    OK(picajit_engine_set_cache_budget(shared_engine, 65536));
    shared_uniforms = make_uniforms(shared_engine);
    for (int p = 0; p < nprog; p++) {
        OK(picajit_shader_load_shbin(shared_engine, programs[p].data, programs[p].size, 0, &shared_shaders[p]));
    }
    pthread_t tids[64];
    int started[64];
    for (int t = 0; t < nthreads; t++) {
        started[t] = pthread_create(&tids[t], NULL, worker, (void *)(uintptr_t)(t + 1)) == 0;
    }
    /* Checked after the join: the counters are not the main thread's while workers run. */
    for (int t = 0; t < nthreads; t++) {
        if (started[t]) {
            pthread_join(tids[t], NULL);
        }
    }
    for (int t = 0; t < nthreads; t++) {
        CHECK(started[t]);
    }
    PicajitCacheStats cs;
    OK(picajit_engine_get_cache_stats(shared_engine, &cs));
    for (int p = 0; p < nprog; p++) {
        OK(picajit_shader_destroy(shared_shaders[p]));
        free(reference[p]);
        free(reference_alt[p]);
        free(programs[p].data);
    }
    free(gs_blob.data);
    OK(picajit_uniforms_destroy(shared_uniforms));
    OK(picajit_engine_destroy(shared_engine));
    unsigned long total = ops_batch + ops_entry + ops_own_engine + ops_geometry + ops_churn + ops_query;
    printf("%d threads: %lu operations (%lu shared batches, %lu other-entry batches, %lu own-engine "
           "create/run/destroy, %lu geometry runs, %lu shared create/run/destroy, %lu queries), "
           "%lu vertices or points checked, %lu mismatches; shared cache: %llu hits, %llu misses, "
           "%llu evictions\n",
           nthreads, total, ops_batch, ops_entry, ops_own_engine, ops_geometry, ops_churn, ops_query,
           vertices_checked, mismatches, (unsigned long long)cs.hits,
           (unsigned long long)cs.misses, (unsigned long long)cs.evictions);
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
