/*
 * Embedding picajit from C: load a vertex shader from a SHBIN file, set its uniforms, run a
 * batch of vertices and print the outputs.
 *
 *   examples/c/build.sh                 (builds picajit and this program, assembles the shader)
 *   examples/c/build/mvp examples/c/build/mvp.shbin
 *
 * The shader is examples/mvp.v.pica: position (v0) through a model-view and a projection
 * matrix (c4-c7 and c0-c3) into o0, colour (v1) copied to o1.
 */
#include "picajit.h"

#include <stdio.h>
#include <stdlib.h>

/* Print the failed call's status and message, and give up. */
static void check(PicajitStatus status, const char *what) {
    if (status != PICAJIT_OK) {
        fprintf(stderr, "%s: %s: %s\n", what, picajit_status_name(status), picajit_last_error());
        exit(1);
    }
}

/* One vertex as the application stores it: the registers the shader reads, packed. */
typedef struct {
    float position[4]; /* v0 */
    float color[4];    /* v1 */
} Vertex;

/* What the rasterizer consumes: the registers the shader writes, packed. */
typedef struct {
    float position[4]; /* o0 */
    float color[4];    /* o1 */
} Output;

static unsigned char *read_file(const char *path, size_t *size) {
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(*size);
    if (!data || fread(data, 1, *size, f) != *size) {
        fprintf(stderr, "%s: read failed\n", path);
        exit(1);
    }
    fclose(f);
    return data;
}

int main(int argc, char **argv) {
    if (argc != 2) {
        fprintf(stderr, "usage: %s mvp.shbin\n", argv[0]);
        return 2;
    }
    if (picajit_api_version() >> 16 != PICAJIT_API_VERSION_MAJOR) {
        fprintf(stderr, "libpicajit has an incompatible API version\n");
        return 1;
    }

    /* 1. An engine: the JIT when the host has one, the hardware's f24 float model. */
    PicajitEngineConfig config;
    check(picajit_engine_config_init(&config), "picajit_engine_config_init");
    PicajitEngine *engine;
    check(picajit_engine_create(&config, &engine), "picajit_engine_create");

    /* 2. The shader, from DVLE 0 of the SHBIN. */
    size_t size;
    unsigned char *shbin = read_file(argv[1], &size);
    PicajitShader *shader;
    check(picajit_shader_load_shbin(engine, shbin, size, 0, &shader), "load_shbin");
    free(shbin);
    PicajitShaderInfo info = {.struct_size = sizeof info};
    check(picajit_shader_get_info(shader, &info), "picajit_shader_get_info");
    const char *reason;
    check(picajit_shader_fallback_reason(shader, &reason), "picajit_shader_fallback_reason");
    printf("libpicajit %s, shader runs on %s%s%s\n", picajit_version(),
           info.engine == PICAJIT_ENGINE_X64   ? "the x86-64 JIT"
           : info.engine == PICAJIT_ENGINE_A64 ? "the AArch64 JIT"
                                               : "the interpreter",
           reason ? ": " : "", reason ? reason : "");

    /* 3. Uniforms: the shader's constants, then projection (scale by 2) and model-view
          (translate by (0.5, -1, 0)), one row per register. */
    PicajitUniforms *uniforms;
    check(picajit_uniforms_create(engine, &uniforms), "picajit_uniforms_create");
    check(picajit_shader_apply_constants(shader, uniforms), "apply_constants");
    const float projection[16] = {2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 2, 0, 0, 0, 0, 1};
    const float modelview[12] = {1, 0, 0, 0.5f, 0, 1, 0, -1, 0, 0, 1, 0};
    check(picajit_uniforms_set_float(uniforms, 0, 4, projection), "set projection");
    check(picajit_uniforms_set_float(uniforms, 4, 3, modelview), "set modelview");

    /* 4. A batch: inputs v0, v1 and outputs o0, o1, each packed in the caller's structs. */
    const Vertex vertices[3] = {
        {{0, 0, 0, 1}, {1, 0, 0, 1}},
        {{1, 2, 3, 1}, {0, 1, 0, 1}},
        {{-1, 0.5f, 2, 1}, {0, 0, 1, 1}},
    };
    Output outputs[3];
    const PicajitVertexLayout in_layout = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x3,
                                           sizeof(Vertex)};
    const PicajitVertexLayout out_layout = {PICAJIT_FORMAT_F32, PICAJIT_LAYOUT_PACKED, 0x3,
                                            sizeof(Output)};
    PicajitRunStats stats;
    check(picajit_shader_run_batch(shader, uniforms, &in_layout, vertices, &out_layout, outputs,
                                   3, &stats),
          "picajit_shader_run_batch");
    for (int k = 0; k < 3; k++) {
        const Output *o = &outputs[k];
        printf("vertex %d: position (%g, %g, %g, %g) color (%g, %g, %g, %g)\n", k,
               o->position[0], o->position[1], o->position[2], o->position[3], o->color[0],
               o->color[1], o->color[2], o->color[3]);
    }
    printf("%llu shader instructions for %zu vertices\n", (unsigned long long)stats.instructions,
           stats.vertices);

    /* 5. Clean up (any order). */
    check(picajit_shader_destroy(shader), "picajit_shader_destroy");
    check(picajit_uniforms_destroy(uniforms), "picajit_uniforms_destroy");
    check(picajit_engine_destroy(engine), "picajit_engine_destroy");
    return 0;
}
