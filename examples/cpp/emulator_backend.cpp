// An emulator's shader backend on picajit, in the shape an emulator has it: the guest writes
// PICA200 shader registers (program words, operand descriptors, entry point, uniforms), the
// backend mirrors each write, and draws run on a persistent shader unit whose registers
// (r0-r15, a0, aL, cmp) carry over from draw to draw as on hardware. A geometry unit expands
// points and reports where SETEMIT left its state.
//
// Built with CMake against the installed library (see CMakeLists.txt and the README's
// "Packaging"); CI runs it. It checks its own results and exits non-zero on a mismatch.

#include <picajit.h>

#include <array>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

// Offsets of the shader-unit registers inside a unit's register block, as 3dbrew names them
// (GPUREG_VSH_* at 0x2B0, GPUREG_GSH_* at 0x280: the same layout).
enum : uint32_t {
    BOOLUNIFORM = 0x00,
    INTUNIFORM_I0 = 0x01,  // .. I3 = 0x04
    ENTRYPOINT = 0x0A,
    FLOATUNIFORM_INDEX = 0x10,
    FLOATUNIFORM_DATA0 = 0x11,  // .. DATA7 = 0x18
    CODETRANSFER_CONFIG = 0x1B,
    CODETRANSFER_DATA0 = 0x1C,  // .. DATA7 = 0x23
    OPDESCS_CONFIG = 0x25,
    OPDESCS_DATA0 = 0x26,  // .. DATA7 = 0x2D
};
constexpr uint32_t VSH_BASE = 0x2B0, GSH_BASE = 0x280;

void check(PicajitStatus s, const char *what) {
    if (s != PICAJIT_OK) {
        throw std::runtime_error(std::string(what) + ": " + picajit_last_error());
    }
}

struct Vertex {
    float r[16][4];
};

// One shader unit: the mirrored registers and what picajit made of them.
class ShaderUnit {
public:
    ShaderUnit(PicajitEngine *engine, PicajitShaderKind kind) : engine_(engine), kind_(kind) {
        check(picajit_uniforms_create(engine, &uniforms_), "uniforms");
        std::memset(&state_, 0, sizeof state_);
    }
    ~ShaderUnit() {
        picajit_shader_destroy(shader_);
        picajit_uniforms_destroy(uniforms_);
    }
    ShaderUnit(const ShaderUnit &) = delete;
    ShaderUnit &operator=(const ShaderUnit &) = delete;

    // A guest write to register `base + offset`.
    void write(uint32_t offset, uint32_t value) {
        if (offset == BOOLUNIFORM) {
            check(picajit_uniforms_set_bools(uniforms_, value & 0xFFFF), "bools");
        } else if (offset >= INTUNIFORM_I0 && offset < INTUNIFORM_I0 + 4) {
            const uint8_t xyzw[4] = {uint8_t(value), uint8_t(value >> 8), uint8_t(value >> 16),
                                     uint8_t(value >> 24)};
            check(picajit_uniforms_set_int(uniforms_, offset - INTUNIFORM_I0, xyzw), "int");
        } else if (offset == ENTRYPOINT) {
            entry_ = value & 0xFFFF;  // passed with every run: no recompilation
        } else if (offset == FLOATUNIFORM_INDEX) {
            float_index_ = value & 0xFF;
            float_f32_ = (value >> 31) != 0;
            pending_.clear();
        } else if (offset >= FLOATUNIFORM_DATA0 && offset < FLOATUNIFORM_DATA0 + 8) {
            float_word(value);
        } else if (offset == CODETRANSFER_CONFIG) {
            code_index_ = value & 0xFFF;
        } else if (offset >= CODETRANSFER_DATA0 && offset < CODETRANSFER_DATA0 + 8) {
            code_[code_index_] = value;
            code_words_ = std::max<size_t>(code_words_, code_index_ + 1);
            code_index_ = (code_index_ + 1) & 0xFFF;
            dirty_ = true;
        } else if (offset == OPDESCS_CONFIG) {
            opdesc_index_ = value & 0xFFF;
        } else if (offset >= OPDESCS_DATA0 && offset < OPDESCS_DATA0 + 8) {
            opdescs_[opdesc_index_] = value;
            opdesc_index_ = (opdesc_index_ + 1) & 0xFFF;
            dirty_ = true;
        }
    }

    // The program for the current words. Recreated only when words or descriptors changed;
    // the entry point is per run.
    PicajitShader *shader() {
        if (dirty_ || !shader_) {
            picajit_shader_destroy(shader_);
            shader_ = nullptr;
            // The whole 4096-entry descriptor table, as the unit holds it: entries past the
            // 128 instructions can address are never read.
            check(picajit_shader_create(engine_, code_.data(), code_words_, opdescs_.data(),
                                        opdescs_.size(), 0, kind_, &shader_),
                  "shader");
            dirty_ = false;
        }
        return shader_;
    }

    PicajitUniforms *uniforms() { return uniforms_; }
    uint32_t entry() const { return entry_; }
    PicajitUnitState &state() { return state_; }

private:
    // Float uniform data: four f32 words (w, z, y, x) or three words of packed f24 per row.
    void float_word(uint32_t w) {
        pending_.push_back(w);
        if (float_f32_ && pending_.size() == 4) {
            float row[4];
            for (int c = 0; c < 4; c++) {
                std::memcpy(&row[c], &pending_[3 - c], 4);
            }
            check(picajit_uniforms_set_float(uniforms_, float_index_, 1, row), "float");
        } else if (!float_f32_ && pending_.size() == 3) {
            const uint32_t a = pending_[0], b = pending_[1], c = pending_[2];
            const uint32_t row[4] = {c & 0xFFFFFF, ((b & 0xFFFF) << 8) | (c >> 24),
                                     ((a & 0xFF) << 16) | (b >> 16), a >> 8};
            check(picajit_uniforms_set_float_f24(uniforms_, float_index_, 1, row), "float24");
        } else {
            return;
        }
        pending_.clear();
        float_index_ = (float_index_ + 1) & 0xFF;
    }

    PicajitEngine *engine_;
    PicajitShaderKind kind_;
    PicajitUniforms *uniforms_ = nullptr;
    PicajitShader *shader_ = nullptr;
    std::array<uint32_t, 4096> code_{};
    std::array<uint32_t, 4096> opdescs_{};
    size_t code_words_ = 0;
    uint32_t code_index_ = 0, opdesc_index_ = 0, float_index_ = 0, entry_ = 0;
    bool float_f32_ = false, dirty_ = true;
    std::vector<uint32_t> pending_;
    PicajitUnitState state_;
};

// The vertex unit: a draw of many vertices from the current entry point, on the persistent
// unit state (every vertex starts from it; the last vertex's state is kept, as the unit keeps
// its registers after END).
void draw(ShaderUnit &vs, const std::vector<Vertex> &in, std::vector<Vertex> &out) {
    const PicajitVertexLayout inputs = {PICAJIT_FORMAT_F32, 0, 0x3, sizeof(Vertex)};
    const PicajitVertexLayout outputs = {PICAJIT_FORMAT_F32, 0, 0x3, sizeof(Vertex)};
    PicajitRunOptions opt;
    check(picajit_run_options_init(&opt), "options");
    opt.entry = vs.entry();
    opt.state_in = &vs.state();
    opt.state_out = &vs.state();
    out.resize(in.size());
    check(picajit_shader_run_batch_ex(vs.shader(), vs.uniforms(), &inputs, in.data(), &outputs,
                                      out.data(), in.size(), &opt, nullptr),
          "draw");
}

struct Emitted {
    std::vector<std::array<float, 4>> pos;
    std::vector<PicajitEmitState> info;
};

void on_emit(void *user, const void *vertex, const PicajitEmitState *info) {
    auto *e = static_cast<Emitted *>(user);
    std::array<float, 4> p;
    std::memcpy(p.data(), vertex, sizeof p);
    e->pos.push_back(p);
    e->info.push_back(*info);
}

// Guest program words (from `picajit asm`, as a game's SHBIN holds them). Vertex shader:
// `main` (entry 0) transforms v0 by c0-c3 and tints v1 by c4, then MOVA a0.x from v1.x;
// `passthrough` (entry 7) copies v0/v1 and compares v0 < v1 into cmp.
const uint32_t VS_CODE[] = {0x08020000, 0x08021001, 0x08022002, 0x08023003,
                            0x20224084, 0x48001000, 0x88000000, 0x4c000004,
                            0x4c201004, 0x4e201004, 0xba400880, 0x88000000};
const uint32_t VS_OPDESCS[] = {0x0006c368, 0x0006c364, 0x0006c362, 0x0006c361, 0x0006c36f};
// Geometry shader (point mode): one triangle per point, corners v0, v0 + (c0.x, 0, 0, 0),
// v0 + (0, c0.y, 0, 0), SETEMIT 0, 1, 2 with the primitive flag on the last.
const uint32_t GS_CODE[] = {0xac000000, 0x4c000000, 0xa8000000, 0xad000000, 0x00020001,
                            0xa8000000, 0xae800000, 0x00020002, 0xa8000000, 0x88000000};
const uint32_t GS_OPDESCS[] = {0x0000036f, 0x0006c7ef, 0x0006dbef};

template <size_t N>
void upload(ShaderUnit &unit, const uint32_t (&code)[N], const uint32_t *ops, size_t n_ops) {
    unit.write(CODETRANSFER_CONFIG, 0);
    for (uint32_t w : code) {
        unit.write(CODETRANSFER_DATA0, w);
    }
    unit.write(OPDESCS_CONFIG, 0);
    for (size_t k = 0; k < n_ops; k++) {
        unit.write(OPDESCS_DATA0 + k % 8, ops[k]);
    }
}

uint32_t bits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return u;
}

int failures = 0;

void expect(bool ok, const char *what) {
    if (!ok) {
        std::fprintf(stderr, "mismatch: %s\n", what);
        failures++;
    }
}

}  // namespace

int main() {
    // The same major version, and at least this header's minor one (with the same major,
    // comparing the whole versions compares the minor ones).
    const uint32_t version = picajit_api_version();
    if (version >> 16 != PICAJIT_API_VERSION_MAJOR || version < PICAJIT_API_VERSION) {
        std::fprintf(stderr, "libpicajit %s is not compatible with this header\n",
                     picajit_version());
        return 1;
    }
    try {
        PicajitEngineConfig cfg;
        check(picajit_engine_config_init(&cfg), "config");
        PicajitEngine *engine = nullptr;
        check(picajit_engine_create(&cfg, &engine), "engine");
        {
            ShaderUnit vs(engine, PICAJIT_SHADER_VERTEX);
            upload(vs, VS_CODE, VS_OPDESCS, sizeof VS_OPDESCS / 4);
            // c0-c3 = scale by 2, translate x by 1 (f32 transfer mode: w, z, y, x).
            vs.write(FLOATUNIFORM_INDEX, 0x80000000u | 0);
            const float mvp[4][4] = {{2, 0, 0, 1}, {0, 2, 0, 0}, {0, 0, 2, 0}, {0, 0, 0, 1}};
            for (auto &row : mvp) {
                for (int c = 3; c >= 0; c--) {
                    vs.write(FLOATUNIFORM_DATA0, bits(row[c]));
                }
            }
            // c4 = (0.5, 1, 1, 1) in f24 transfer mode: three words, w first.
            vs.write(FLOATUNIFORM_INDEX, 4);
            const uint32_t half = 0x3e0000, one = 0x3f0000;
            const uint32_t w = one, z = one, y = one, x = half;
            vs.write(FLOATUNIFORM_DATA0, (w << 8) | (z >> 16));
            vs.write(FLOATUNIFORM_DATA0, (z << 16) | (y >> 8));
            vs.write(FLOATUNIFORM_DATA0, (y << 24) | x);

            std::vector<Vertex> in(1000), out;
            for (size_t k = 0; k < in.size(); k++) {
                std::memset(&in[k], 0, sizeof(Vertex));
                const float f = float(k % 64);
                in[k].r[0][0] = f, in[k].r[0][1] = -f, in[k].r[0][2] = 1, in[k].r[0][3] = 1;
                in[k].r[1][0] = float(k % 5), in[k].r[1][1] = 1, in[k].r[1][2] = 2;
                in[k].r[1][3] = 1;
            }
            vs.write(ENTRYPOINT, 0);
            draw(vs, in, out);
            bool ok = true;
            for (size_t k = 0; k < in.size(); k++) {
                const float f = float(k % 64);
                ok &= out[k].r[0][0] == 2 * f + 1 && out[k].r[0][1] == -2 * f &&
                      out[k].r[0][2] == 2 && out[k].r[0][3] == 1;
                ok &= out[k].r[1][0] == 0.5f * float(k % 5) && out[k].r[1][2] == 2;
            }
            expect(ok, "transformed vertices");
            // The unit keeps what the last vertex left: a0.x = v1.x of vertex 999.
            expect(vs.state().a0[0] == int32_t(999 % 5), "a0 after the draw");

            // Same words, other entry point: a per-run setting, compiled once.
            vs.write(ENTRYPOINT, 7);
            for (int round = 0; round < 3; round++) {
                draw(vs, in, out);
            }
            expect(std::memcmp(out[10].r[0], in[10].r[0], 16) == 0, "passthrough");
            uint32_t prepared = 0;
            check(picajit_shader_prepared_entries(vs.shader(), &prepared), "entries");
            expect(prepared == 1, "one other entry point prepared once");
            // cmp = v0 < v1 of the last vertex: (39 < 4, -39 < 1); a0 kept from the first draw.
            expect(vs.state().cmp[0] == 0 && vs.state().cmp[1] == 1, "cmp after the draw");
            expect(vs.state().a0[0] == int32_t(999 % 5), "a0 carried over");

            PicajitShaderInfo info;
            info.struct_size = sizeof info;
            check(picajit_shader_get_info(vs.shader(), &info), "info");
            std::printf("vertex unit: %zu vertices per draw, batch path %u (%u lanes), "
                        "a0 = (%d, %d), cmp = (%u, %u)\n",
                        in.size(), info.batch_path, info.batch_lanes, vs.state().a0[0],
                        vs.state().a0[1], vs.state().cmp[0], vs.state().cmp[1]);
        }
        {
            ShaderUnit gsu(engine, PICAJIT_SHADER_GEOMETRY);
            upload(gsu, GS_CODE, GS_OPDESCS, sizeof GS_OPDESCS / 4);
            gsu.write(FLOATUNIFORM_INDEX, 0x80000000u | 0);
            const float size[4] = {0.25f, 0.5f, 0, 0};
            for (int c = 3; c >= 0; c--) {
                gsu.write(FLOATUNIFORM_DATA0, bits(size[c]));
            }
            PicajitGeometry *gs = nullptr;
            check(picajit_geometry_create(&gs), "geometry");
            Emitted emitted;
            const PicajitVertexLayout o0 = {PICAJIT_FORMAT_F32, 0, 0x1, 0};
            check(picajit_geometry_set_emit_callback(gs, &o0, on_emit, &emitted), "callback");
            check(picajit_geometry_set_entry(gs, gsu.entry()), "entry");
            std::vector<Vertex> points(64);
            for (size_t k = 0; k < points.size(); k++) {
                std::memset(&points[k], 0, sizeof(Vertex));
                points[k].r[0][0] = float(k);
                points[k].r[0][3] = 1;
            }
            const PicajitVertexLayout in = {PICAJIT_FORMAT_F32, 0, 0x1, sizeof(Vertex)};
            check(picajit_geometry_run_points(gs, gsu.shader(), gsu.uniforms(), &in,
                                              points.data(), points.size(), nullptr),
                  "points");
            PicajitEmitState es;
            check(picajit_geometry_get_emit_state(gs, &es), "emit state");
            expect(emitted.pos.size() == 3 * points.size(), "three vertices per point");
            expect(emitted.pos[4][0] == 1.25f && emitted.info[5].primitive, "second triangle");
            expect(es.slot == 2 && es.primitive == 1 && es.winding == 0, "emit state");
            // A state the emulator saved can be put back before the next invocation.
            const PicajitEmitState saved = {};
            check(picajit_geometry_set_emit_state(gs, &saved), "restore emit state");
            std::printf("geometry unit: %zu points -> %zu vertices; emit state after the draw: "
                        "slot %u, primitive %u, winding %u\n",
                        points.size(), emitted.pos.size(), es.slot, unsigned(es.primitive),
                        unsigned(es.winding));
            picajit_geometry_destroy(gs);
        }
        picajit_engine_destroy(engine);
    } catch (const std::exception &e) {
        std::fprintf(stderr, "error: %s\n", e.what());
        return 1;
    }
    std::printf("%s\n", failures == 0 ? "all checks passed" : "CHECKS FAILED");
    return failures == 0 ? 0 : 1;
}
