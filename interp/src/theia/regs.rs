//! THEIA register addresses and names, as the RTL's definitions file spells them
//! (`rtl/aDefinitions.v`, "Configuration Registers" to "Ouput registers").
//!
//! The RTL decodes seven address bits (`Unit_MEM.v`: bits 6:5 pick one of four 32-row banks,
//! bits 4:0 the row), so its register file has 128 rows and the output registers 128-131 alias
//! rows 0-3. The programming manual lists them as separate registers; the `manual` profile gives
//! it 132 rows. See [`super::Profile`].

/// Every register name of the definitions file with its address. Two names share address 8
/// (`CREG_FIRST_LIGTH`, `CREG_FIRST_LIGTH_DIFFUSE`); the first is the one the disassembler
/// prints.
pub const NAMES: &[(&str, u16)] = &[
    ("CREG_LIGHT_INFO", 0),
    ("CREG_CAMERA_POSITION", 1),
    ("CREG_PROJECTION_WINDOW_MIN", 2),
    ("CREG_PROJECTION_WINDOW_MAX", 3),
    ("CREG_RESOLUTION", 4),
    ("CREG_TEXTURE_SIZE", 5),
    ("CREG_PIXEL_2D_INITIAL_POSITION", 6),
    ("CREG_PIXEL_2D_FINAL_POSITION", 7),
    ("CREG_FIRST_LIGTH", 8),
    ("CREG_FIRST_LIGTH_DIFFUSE", 8),
    ("CREG_AABBMIN", 42),
    ("CREG_AABBMAX", 43),
    ("CREG_V0", 44),
    ("CREG_UV0", 45),
    ("CREG_V1", 46),
    ("CREG_UV1", 47),
    ("CREG_V2", 48),
    ("CREG_UV2", 49),
    ("CREG_TRI_DIFFUSE", 50),
    ("CREG_TEX_COLOR1", 53),
    ("CREG_TEX_COLOR2", 54),
    ("CREG_TEX_COLOR3", 55),
    ("CREG_TEX_COLOR4", 56),
    ("CREG_TEX_COLOR5", 57),
    ("CREG_TEX_COLOR6", 58),
    ("CREG_TEX_COLOR7", 59),
    ("C1", 64),
    ("C2", 65),
    ("C3", 66),
    ("C4", 67),
    ("C5", 68),
    ("C6", 69),
    ("C7", 70),
    ("R1", 71),
    ("R2", 72),
    ("R3", 73),
    ("R4", 74),
    ("R5", 75),
    ("R6", 76),
    ("R7", 77),
    ("R8", 78),
    ("R9", 79),
    ("R10", 80),
    ("R11", 81),
    ("R12", 82),
    ("CREG_PROJECTION_WINDOW_SCALE", 83),
    ("CREG_UNORMALIZED_DIRECTION", 84),
    ("CREG_RAY_DIRECTION", 85),
    ("CREG_E1_LAST", 86),
    ("CREG_E2_LAST", 87),
    ("CREG_T", 88),
    ("CREG_P", 89),
    ("CREG_Q", 90),
    ("CREG_UV0_LAST", 91),
    ("CREG_UV1_LAST", 92),
    ("CREG_UV2_LAST", 93),
    ("CREG_TRI_DIFFUSE_LAST", 94),
    ("CREG_LAST_t", 95),
    ("CREG_LAST_u", 96),
    ("CREG_LAST_v", 97),
    ("CREG_COLOR_ACC", 98),
    ("CREG_t", 99),
    ("CREG_E1", 100),
    ("CREG_E2", 101),
    ("CREG_DELTA", 102),
    ("CREG_u", 103),
    ("CREG_v", 104),
    ("CREG_H1", 105),
    ("CREG_H2", 106),
    ("CREG_H3", 107),
    ("CREG_PIXEL_PITCH", 108),
    ("CREG_LAST_COL", 109),
    ("CREG_TEXTURE_COLOR", 110),
    ("CREG_PIXEL_2D_POSITION", 111),
    ("CREG_TEXWEIGHT1", 112),
    ("CREG_TEXWEIGHT2", 113),
    ("CREG_TEXWEIGHT3", 114),
    ("CREG_TEXWEIGHT4", 115),
    ("CREG_TEX_COORD1", 116),
    ("CREG_TEX_COORD2", 117),
    ("R99", 118),
    ("CREG_ZERO", 119),
    ("CREG_CURRENT_OUTPUT_PIXEL", 120),
    ("CREG_3", 121),
    ("CREG_012", 122),
    ("OREG_PIXEL_COLOR", 128),
    ("OREG_TEX_COORD1", 129),
    ("OREG_TEX_COORD2", 130),
    ("OREG_ADDR_O", 131),
];

/// The address of a register name (exact spelling).
pub fn by_name(name: &str) -> Option<u16> {
    NAMES.iter().find(|(n, _)| *n == name).map(|&(_, a)| a)
}

/// The name the disassembler prints for an address, if it has one.
pub fn name_of(addr: u16) -> Option<&'static str> {
    NAMES.iter().find(|&&(_, a)| a == addr).map(|&(n, _)| n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lookups() {
        assert_eq!(by_name("R1"), Some(71));
        assert_eq!(by_name("CREG_CAMERA_POSITION"), Some(1));
        assert_eq!(by_name("OREG_ADDR_O"), Some(131));
        assert_eq!(by_name("r1"), None);
        assert_eq!(name_of(8), Some("CREG_FIRST_LIGTH"));
        assert_eq!(name_of(9), None);
        for (n, a) in NAMES {
            assert_eq!(by_name(n), Some(*a));
        }
    }
}
