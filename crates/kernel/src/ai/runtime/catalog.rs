//! The models recommended for the built-in runtime: GGUF files pinned by their sha256, with
//! their size, the memory they need and what they are good for. A file is only ever used when
//! its digest is the one pinned here (or, for a file the user picked, the digest it was
//! installed with).

use crate::error::{Code, Error, Result};
use serde::Serialize;
use ts_rs::TS;

/// One recommended model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CatalogModel {
    /// The name a person installs it by (`qwen2.5-coder-0.5b`).
    pub name: &'static str,
    /// The file name in the models folder.
    pub file: &'static str,
    /// The exact size in bytes.
    #[ts(type = "number")]
    pub size: u64,
    /// sha256 of the whole file, lower-case hex.
    pub sha256: &'static str,
    /// Memory the runtime needs to serve it with a 4,096-token context, in bytes.
    #[ts(type = "number")]
    pub memory: u64,
    /// What it is good for, in a sentence.
    pub good_for: &'static str,
    /// Where it is fetched from unless the person gives another address.
    pub url: &'static str,
}

const MIB: u64 = 1 << 20;

/// Qwen2.5-Coder-Instruct, Q4_K_M (Apache-2.0): the models Countersign's tests run on.
pub const CATALOG: &[CatalogModel] = &[
    CatalogModel {
        name: "qwen2.5-coder-0.5b",
        file: "qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size: 491_400_064,
        sha256: "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        memory: 900 * MIB,
        good_for: "the fastest: Ask and Extract on small machines; weaker at Summarize",
        url: "https://huggingface.co/Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
    },
    CatalogModel {
        name: "qwen2.5-coder-1.5b",
        file: "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size: 1_117_320_768,
        sha256: "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        memory: 1_800 * MIB,
        good_for: "better answers: passes every demo eval suite (Ask, Extract, Summarize)",
        url: "https://huggingface.co/Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF/resolve/main/qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
    },
];

/// The catalog entry named `name`.
pub fn model(name: &str) -> Result<&'static CatalogModel> {
    CATALOG.iter().find(|m| m.name == name).ok_or_else(|| {
        let names: Vec<&str> = CATALOG.iter().map(|m| m.name).collect();
        Error::on_field(
            Code::InvalidValue,
            "model",
            format!("no model `{name}` in the catalog (it lists {})", names.join(", ")),
        )
    })
}

impl CatalogModel {
    /// Whether it fits a machine with `available` bytes of memory.
    pub fn fits(&self, available: u64) -> bool {
        self.memory <= available
    }
}

/// The memory this machine has for a model now (`MemAvailable`), if the OS says.
pub fn available_memory() -> Option<u64> {
    let meminfo = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = meminfo.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
